r"""The six classic SVMs: hard, 1-norm and 2-norm soft margin, each primal and dual.

=================  =============================================  ==========================
name               problem                                        constraints
=================  =============================================  ==========================
hard_primal        min 1/2 ||w||^2                                y_i (w.x_i + b) >= 1
hard_dual          max e'a - 1/2 a'G(K)a                          a >= 0, y'a = 0
soft_l1_primal     min 1/2 ||w||^2 + C sum xi_i                   y_i (w.x_i + b) >= 1 - xi_i, xi >= 0
soft_l1_dual       max e'a - 1/2 a'G(K)a                          0 <= a <= C, y'a = 0
soft_l2_primal     min 1/2 ||w||^2 + C/2 sum xi_i^2               y_i (w.x_i + b) >= 1 - xi_i
soft_l2_dual       max e'a - 1/2 a'G(K + I/C)a                    a >= 0, y'a = 0
=================  =============================================  ==========================

with ``G(K)_ij = y_i y_j K_ij``. Primals with a non-linear kernel are built in a factor form:
``K = L L'`` with ``L`` of full column rank (pivoted Cholesky), ``w = sum_k v_k e_k`` in the
orthonormal basis that ``L`` spans, so ``||w||^2 = ||v||^2`` and ``w.phi(x_i) = (L v)_i``
(the representer form ``w = sum_j beta_j phi(x_j)`` with ``v = L' beta``, well posed for
every QP backend even when K is singular). All six are convex QPs.
References: Cristianini & Shawe-Taylor (2000), ch. 6; ``formulations/classic.md``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from ..errors import NotSeparableError, ParameterError, SolveFailedError
from ..kernels import check_rank
from ..model.built import BuiltSVM, SignedGram
from ..model.forms import HARD, MARGINS, SOFT_L1, SOFT_L2, DualSVM, Margin, QuadBlock
from ..model.lazy import LazyObjective, linear_form
from ..model.pieces import (
    Layout,
    add_balance,
    add_C,
    add_normal,
    add_weights,
    check_sample_weight,
    add_margin,
    add_points,
    add_signed_kernel_form,
    choose_form,
    gram_if_needed,
    kernel_scale,
    low_rank,
    new_block,
    prepare,
    signed_gram,
    sum_of_squares,
)
from ..model.record import LinearTerm, QuadTerm, Record, Scale, members, unchanged, verify
from ..model.scaling import ScaleRule
from ..postprocess import (
    balanced,
    bias_from_kkt,
    bias_minimising_primal,
    block_objective,
    margin_certificate,
    cut_alpha,
    dual_kkt_residual,
    expansion_roundoff,
    live,
    margin_multipliers,
    margin_sets,
    polish_dual,
    polish_linear_primal,
    ratio,
    recover_alpha,
    user_multiplier,
    var_array,
)
from ..solution import Solution
from ..status import Status
from ..tolerances import (
    ACTIVE_MARGIN_REL,
    EXPANSION_LOSSY,
    HARD_MARGIN_VIOLATION,
    KKT_ACCEPT,
    SV_REL_MAX,
    alpha_scale,
    certificate_tolerance,
    per_point_threshold,
    support_threshold,
)
from .base import Formulation, register
from .params import document_parameters

FAMILIES = tuple(MARGINS)   # hard, soft_l1, soft_l2

#: a classifier is scaled onto its margins (see ``_choose``) only when they fall short of 1 by
#: less than this: round-off, not a different classifier
ONTO_MARGINS_MAX = 1e-6


# ---------------------------------------------------------------------------------------
# The two generic builders


@dataclass(frozen=True)
class ClassicFacts:
    """What a classic SVM's extractor and hooks read of its build (``BuiltSVM.facts``)."""

    #: the margin (hard, 1-norm or 2-norm soft) and the form ("primal" or "dual") built
    margin: Margin
    form: str
    #: the dual's quadratic form, "dense" or "factor" (None: a primal)
    quad_form: str | None = None
    #: ``kernel_rank``'s report (:meth:`~svm_models.kernels.LowRank.report`; None: exact kernel)
    kernel_rank: dict | None = None


def build_dual(X, y, margin: Margin, *, C=1.0, kernel="linear", gamma="scale", degree=3,
               coef0=0.0, kernel_rank=None, quad_form="auto", max_vars=None, block=None,
               sample_weight=None):
    """Fill ``block`` (or a new ConcreteModel) with the dual of the SVM of ``margin``."""
    rank, data, kern, K, L, form, report, weight = _dual_setup(
        X, y, C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
        kernel_rank=kernel_rank, quad_form=quad_form, max_vars=max_vars,
        sample_weight=sample_weight)
    b = new_block(block, f"{margin.name}_dual")
    add_points(b, data)
    if not margin.hard:
        add_C(b, C)
        add_weights(b, weight)
    if margin.box:
        ub, doc = b.C, "dual variable alpha_i in [0, C] (Lagrange multiplier of point i's margin)"
        if weight is not None:
            ub = _weighted_box
            doc = ("dual variable alpha_i in [0, C weight_i] (Lagrange multiplier of point "
                   "i's margin)")
    elif margin.ridge:
        # implied, never active: at the optimum e'a = a'(G + D/C)a >= |a|^2/(C w_max) (D the
        # inverse weights), so |a|^2 <= C w_max e'a <= C w_max sqrt(l) |a|; stated so that a
        # global solver (SCIP) has a bounded domain and terminates (0 for a point of weight 0)
        ub = b.C * float(np.sqrt(data.n_points))
        doc = ("dual variable alpha_i >= 0 (Lagrange multiplier of point i's margin); the "
               "bound C sqrt(l) is implied by optimality and never active")
        if weight is not None:
            top = float(np.sqrt(data.n_points) * weight.max())
            ub = functools.partial(_weighted_ridge_bound, top)
            doc = ("dual variable alpha_i >= 0 (Lagrange multiplier of point i's margin); the "
                   "bound C max(weight) sqrt(l) is implied by optimality and never active; 0 "
                   "for a point of weight 0")
    else:
        ub, doc = None, "dual variable alpha_i >= 0 (Lagrange multiplier of point i's margin)"
    per_point = weight is not None and not margin.hard   # (ub a rule of (m, i))
    b.alpha = pyo.Var(b.I, bounds=ub if per_point else (0, ub), initialize=0.0, doc=doc)
    layout = Layout()
    apos = layout.add(b.alpha)
    yv = data.y
    qf, K, L, Lf = add_signed_kernel_form(b, layout, b.alpha, data, kern, K, form, L)
    rows = qf.rows + [add_balance(b, layout, b.alpha, yv)]
    quadratic = [QuadTerm(q, Scale(-0.5)) for q in qf.blocks]
    if margin.ridge:
        inv = np.ones(len(apos)) if weight is None else np.divide(
            1.0, weight, out=np.zeros(len(apos)), where=weight > 0)
        sum_of_squares(b, "ridge", b.alpha, doc="alpha'alpha (the I/C part of G(K + I/C))"
                       if weight is None else "sum_i alpha_i^2 / weight_i (the D/C part of "
                       "G(K + D/C), D = diag(1/weight_i))", diag=inv)
        quadratic.append(QuadTerm(QuadBlock(apos, diag=inv), Scale(-0.5, "C", -1)))
    # the structure a backend may solve as such (libsvm's SMO); not for a low-rank kernel,
    # whose matrix L L' only the factor form holds
    structure = None if rank is not None else DualSVM(
        margin=margin, alpha=apos, y=yv, kernel=kern, X=data.X, gram=K,
        z=layout.pos["z"] if form == "factor" else None,
        L=Lf if form == "factor" else None, C=None if margin.hard else "C", weight=weight)
    # lazy: the l terms of e'alpha are built only when something reads the objective
    b.objective = LazyObjective(recipe=(_dual_objective, (b.alpha, b.quad, b.component("ridge"),
                                                          b.component("C"))),
                                sense=pyo.maximize,
                                doc="dual objective e'alpha - 1/2 alpha'G alpha")
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=-1,
                    linear=[LinearTerm(apos, 1.0)], quadratic=quadratic, rows=rows,
                    problem_class="QP",
                    scaling=_scale_rule(kern, data, L if form == "factor" else None, margin,
                                        layout, alpha=-1.0, z=-0.5),
                    structure=structure).seal()
    b._svm = BuiltSVM(formulation=f"{margin.name}_dual", data=data, kernel=kern, block=b,
                      record=record, K=K, L=L, facts=ClassicFacts(margin, "dual", form, report),
                      weight=weight)
    return b


def _dual_setup(X, y, *, C, kernel, gamma, degree, coef0, kernel_rank, quad_form, max_vars,
                sample_weight) -> tuple:
    """What a dual is built from, whether or not its Pyomo model is: ``(rank, data, kern, K,
    L, form, report, weight)`` -- the checked low rank, the Dataset, the Kernel, the Gram
    matrix where one is needed, the factor, the quadratic form chosen, the low-rank report
    and the per-point weights (``C`` is checked by the builder's ``add_C``)."""
    rank = None if kernel_rank is None else check_rank(kernel_rank, kernel)
    if rank is not None and quad_form == "dense":
        raise ParameterError("kernel_rank builds the factor form of the dual (z = F alpha with "
                             "the rank-r factor F); quad_form='dense' would form the l x l "
                             "matrix L L' again: drop quad_form or kernel_rank")
    data, kern, K = prepare(X, y, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                            need_gram=False)
    report, L = None, None
    if rank is not None:
        kern, lr = low_rank(kern, data, rank)
        form, L = "factor", lr.L
        report = lr.report(rank)
    else:
        form = choose_form(quad_form, kern, data.n_points, data.n_features, max_vars)
        if form == "factor" or kern.name == "precomputed":
            K = gram_if_needed(kern, data, K, form)
    weight = check_sample_weight(sample_weight, data)
    return rank, data, kern, K, L, form, report, weight


@dataclass(eq=False)
class UnbuiltDual:
    """A 1-norm soft-margin dual (dense, or the factor form of an exact feature map) as data,
    without its Pyomo model: what :func:`svm_models.fit` hands a structured backend (libsvm)
    when nobody has asked for the model (``Formulation.unbuilt``). ``svm`` is the
    :class:`BuiltSVM` the builder would leave (``block`` and the record's Pyomo parts None),
    ``record`` a record of the structure only (``record.structure``), ``box`` alpha's upper
    bounds ``C_i``, ``C`` the parameter's value; :attr:`form` the standard form of the same
    problem (the box in ``form.ux``), made when first read -- one-vs-one's pairs, handed to
    the backend as the points and their labels, never read it (its sparse rows were most of
    the time the pairs of a linear fit spent here). The model built later from the same data
    (:attr:`svm_models.Solution.model`) is this problem: the same variables in the same
    order, the same objective and rows."""

    svm: BuiltSVM
    record: Record
    box: np.ndarray
    C: float
    _form: object = field(default=None, repr=False)

    @property
    def form(self):
        """The standard form (:class:`~svm_models.model.standard_form.StandardForm`),
        made on first read and kept."""
        if self._form is None:
            self._form = _unbuilt_form(self.svm, self.box)
        return self._form

    def extract(self, ctx, x: np.ndarray) -> Solution:
        """The Solution at the backend's point ``x`` (the record's order: alpha, then the
        factor form's z), certified as :func:`extract` certifies a model the record proves
        (``ctx.verified``)."""
        return _extract(self.svm, ctx, self.C,
                        raw=np.asarray(x, dtype=float)[self.record.structure.alpha])

    def point(self, alpha: np.ndarray) -> np.ndarray:
        """The backend's point in the record's order from the dual's ``alpha`` (the factor
        form's ``z = L'(y alpha)`` after it)."""
        st = self.record.structure
        x = np.zeros(st.alpha.size + (0 if st.z is None else st.z.size))
        st.complete(x, alpha)
        return x

    def at(self, C) -> "UnbuiltDual":
        """The same problem at another C (cross-validation's Cs on a fold's pairs): the
        data, the kernel and a held matrix shared, the box ``[0, C_i]`` of the new C."""
        from ..model.pieces import check_C

        C = check_C(C)
        w = self.svm.weight
        box = np.full(self.box.shape, C) if w is None else C * w
        return replace(self, box=box, C=C, _form=None)   # (its form made from the box)

    def hold_gram(self, K: np.ndarray, idx: np.ndarray | None = None) -> None:
        """``K``: the kernel's matrix formed by the caller from the same kernel, on these
        points, or (``idx``) on more points of which ``idx`` are these (one-vs-one's pairs
        in the matrix of all the training points): the post-processing and the dense form's
        quadratic block read it instead of evaluating the kernel again
        (:meth:`~svm_models.model.built.LazySignedGram.hold`). The dense form only."""
        self.svm.K.G.hold(K, idx)


def unbuilt_dual(X, y, margin: Margin, *, C=1.0, kernel="linear", gamma="scale", degree=3,
                 coef0=0.0, kernel_rank=None, quad_form="auto", max_vars=None,
                 sample_weight=None) -> UnbuiltDual | None:
    """The dual of ``margin`` as an :class:`UnbuiltDual` (the same checks and choices as
    :func:`build_dual`, no Pyomo component made): the 1-norm dual in the dense form, or in
    the factor form of a kernel with an exact feature map (the linear kernel on fewer
    features than points, a poly kernel's monomials: the variables ``(alpha, z)``, the rows
    ``z = L'(y alpha)`` then ``y'alpha = 0``, as built). None where it is another problem (a
    low-rank kernel, a factor that is not exact, another margin): that one is built."""
    from ..kernels import exact_factor_dim
    from ..model.pieces import check_C, dual_factor

    if margin is not SOFT_L1 or kernel_rank is not None:
        return None
    rank, data, kern, K, L, form, report, weight = _dual_setup(
        X, y, C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
        kernel_rank=kernel_rank, quad_form=quad_form, max_vars=max_vars,
        sample_weight=sample_weight)
    C = check_C(C)   # (after the data, as build_dual's add_C)
    l, yv = data.n_points, data.y
    apos = np.arange(l)
    if form == "dense":
        _, K = signed_gram(data, kern, K)
        st = DualSVM(margin=margin, alpha=apos, y=yv, kernel=kern, X=data.X, gram=K, C="C",
                     weight=weight)
    elif exact_factor_dim(kern, l, data.n_features) is not None:
        Lf, L = dual_factor(kern, data, K)
        st = DualSVM(margin=margin, alpha=apos, y=yv, kernel=kern, X=data.X, gram=K,
                     z=np.arange(l, l + Lf.shape[1]), L=Lf, C="C", weight=weight)
    else:
        return None
    record = Record(block=None, variables=[], objective=None, sense=-1, structure=st)
    svm = BuiltSVM(formulation=f"{margin.name}_dual", data=data, kernel=kern, block=None,
                   record=record, K=K, L=L, facts=ClassicFacts(margin, "dual", form, report),
                   weight=weight)
    return UnbuiltDual(svm=svm, record=record, box=np.full(l, C) if weight is None
                       else C * weight, C=C)


def _unbuilt_form(svm: BuiltSVM, box: np.ndarray):
    """The standard form of :func:`unbuilt_dual`'s problem, the box ``box`` on alpha: the one
    ``assemble()`` gives the built model -- ``max e'a - 1/2 a'Ga`` as a minimum; the dense
    form's quadratic block the model's signed matrix (``svm.K``'s, one matrix held for
    both), the factor form's ``|z|^2`` with the rows ``z - F a = 0`` (``F = L' D_y``,
    :func:`~svm_models.model.pieces.factor_rows`, as the builder writes them), then the
    balance ``y'a = 0``."""
    from ..model.pieces import factor_rows
    from ..model.standard_form import StandardForm

    st = svm.record.structure
    l, yv = st.alpha.size, st.y
    apos = st.alpha
    balance = sp.csr_matrix((yv.astype(float), apos, [0, l]), shape=(1, l))
    if st.z is None:   # (a precomputed matrix: signed here, exactly)
        G = svm.K.G if isinstance(svm.K, SignedGram) else svm.K * np.outer(yv, yv)
        return StandardForm(sense=-1, c=-np.ones(l), const=0.0,
                            quad=[QuadBlock(apos, G, scale=0.5)], A=balance,
                            lA=np.zeros(1), uA=np.zeros(1), lx=np.zeros(l), ux=box.copy(),
                            qrows=[], var_datas=[], row_datas=[])
    r, zpos = st.z.size, st.z
    rows = factor_rows(l + r, apos, zpos, st.L, yv)
    return StandardForm(sense=-1, c=np.concatenate([-np.ones(l), np.zeros(r)]), const=0.0,
                        quad=[QuadBlock(zpos, diag=np.ones(r), scale=0.5)],
                        A=sp.vstack([rows, sp.hstack([balance, sp.csr_matrix((1, r))])],
                                    format="csr"),
                        lA=np.zeros(r + 1), uA=np.zeros(r + 1),
                        lx=np.concatenate([np.zeros(l), np.full(r, -np.inf)]),
                        ux=np.concatenate([box, np.full(r, np.inf)]),
                        qrows=[], var_datas=[], row_datas=[])


def _weighted_box(m, i):
    """The bounds ``[0, C weight_i]`` of a weighted 1-norm dual's ``alpha_i`` (module-level
    rules, here and below: the model pickles)."""
    return (0, m.C * m.weight[i])


def _weighted_ridge_bound(top, m, i):
    """The implied bounds ``[0, C top]`` of a weighted 2-norm dual's ``alpha_i`` (``top =
    sqrt(l) max(weight)``), ``[0, 0]`` for a point of weight 0."""
    return (0, m.C * top if m.weight[i] > 0 else 0.0)


def _scale_rule(kern, data, L, margin: Margin, layout: Layout, **exponents) -> ScaleRule:
    """The classic SVMs' exact scaling (:mod:`svm_models.model.scaling`): with ``s`` the
    kernel's scale, or ``1/C`` when larger (a box narrower than the kernel's scale), the
    problem in ``alpha = alpha~/s``, ``w = w~/sqrt(s)`` (``v``, ``z`` likewise), ``b`` and
    ``xi`` as they are, is the same SVM with kernel ``K/s`` and parameter ``sC``, its
    objective ``s`` times the original one."""
    e = np.zeros(layout.n)
    for name, power in exponents.items():
        if name in layout.pos:
            e[layout.pos[name]] = power
    return ScaleRule(base=kernel_scale(kern, data, L), exponents=e,
                     param=None if margin.hard else "C")


def _dual_objective(alpha, quad, ridge, C):
    """``e'alpha - 1/2 quad`` (``- 1/(2C) ridge`` for the 2-norm soft margin)."""
    expr = linear_form(np.ones(len(alpha)), members(alpha)) - 0.5 * quad
    return expr if ridge is None else expr - 0.5 / C * ridge


def _primal_objective(ww, xi, xi_sq, C, weight):
    """``1/2 ww`` plus ``C sum weight_i xi_i`` (1-norm) or ``C/2 xi_sq`` (2-norm)."""
    expr = 0.5 * ww
    if xi_sq is not None:
        return expr + 0.5 * C * xi_sq
    if xi is not None:
        return expr + C * linear_form(weight, members(xi))
    return expr


def build_primal(X, y, margin: Margin, *, C=1.0, kernel="linear", gamma="scale", degree=3,
                 coef0=0.0, kernel_rank=None, block=None, sample_weight=None):
    """Fill ``block`` (or a new ConcreteModel) with the primal of the SVM of ``margin``."""
    rank = None if kernel_rank is None else check_rank(kernel_rank, kernel)
    data, kern, K = prepare(X, y, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                            need_gram=False)
    facts = ClassicFacts(margin, "primal")
    if rank is not None:
        kern, lr = low_rank(kern, data, rank)
        facts = ClassicFacts(margin, "primal", kernel_rank=lr.report(rank))
    weight = check_sample_weight(sample_weight, data)
    b = new_block(block, f"{margin.name}_primal")
    add_points(b, data)
    if not margin.hard:
        add_C(b, C)
        add_weights(b, weight)
    layout = Layout()
    coef, M, L, K = add_normal(b, data, kern, K, None if rank is None else lr.L)
    linear = kern.is_linear
    cpos = layout.add(coef)
    b.b = pyo.Var(initialize=0.0, doc="bias b")
    layout.add(b.b)
    xi = None
    if not margin.hard:
        b.xi = pyo.Var(b.I, bounds=(0, None) if margin.box else (None, None),
                       initialize=0.0, doc="slack xi_i of point i's margin")
        xi = b.xi
        layout.add(xi)
    fdoc = "f_i = w.x_i" if linear else "f_i = (L v)_i = (K beta)_i = w.phi(x_i)"
    rows = [add_margin(b, layout, ("f", fdoc), M, coef.local_name, data.y, xi)]
    sum_of_squares(b, "ww", coef, doc="||w||^2" if linear else "||w||^2 = ||v||^2 = beta'K beta")
    quadratic = [QuadTerm(QuadBlock(cpos, diag=np.ones(len(cpos))), Scale(0.5))]
    linear_terms = []
    wt = np.ones(data.n_points) if weight is None else weight
    if margin.box:
        linear_terms.append(LinearTerm(layout.pos["xi"], 1.0 if weight is None else weight,
                                       Scale(1.0, "C")))
    elif margin.ridge:
        sum_of_squares(b, "xi_sq", xi, doc="sum_i xi_i^2" if weight is None
                       else "sum_i weight_i xi_i^2", diag=wt)
        quadratic.append(QuadTerm(QuadBlock(layout.pos["xi"], diag=wt), Scale(0.5, "C")))
    # lazy: the l terms of C sum xi are built only when something reads the objective
    b.objective = LazyObjective(recipe=(_primal_objective, (b.ww, xi, b.component("xi_sq"),
                                                            b.component("C"), wt)),
                                sense=pyo.minimize,
                                doc="primal objective")
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=1,
                    linear=linear_terms, quadratic=quadratic, rows=rows, problem_class="QP",
                    scaling=_scale_rule(kern, data, L, margin, layout, w=-0.5, v=-0.5)).seal()
    b._svm = BuiltSVM(formulation=f"{margin.name}_primal", data=data, kernel=kern, block=b,
                      record=record, K=K, L=L, facts=facts, weight=weight)
    return b


# ---------------------------------------------------------------------------------------
# The six public builders


#: the parts the six builders' docstrings share, written once (``@name@`` in a docstring)
_DOC_PARTS = {
    "factor_form": """With a non-linear kernel the model is built in the factor form
    ``K = L L'`` (``L`` of full column rank, pivoted Cholesky): ``w`` has the coordinates
    ``v = L' beta`` in the basis ``L`` spans, ``||w||^2 = ||v||^2``, ``w.phi(x_i) = (L v)_i``;
    well posed for every QP backend even when K is singular.""",
    "points_C": """* ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``C``: the penalty, a mutable Param (change it and re-solve).""",
    "primal_w": """* ``J``, ``w[j]`` (linear kernel): the features and the normal vector; ``R``, ``v[k]``
      (other kernels): the factor components and the coordinates of w in that basis.
    * ``b``: the bias.""",
    "soft_primal_head": """* ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``C``: the penalty, a mutable Param (change it and re-solve).
    * ``J``, ``w[j]`` (linear kernel): the features and the normal vector; ``R``, ``v[k]``
      (other kernels): the factor components and the coordinates of w in that basis.
    * ``b``: the bias.""",
    "primal_values": """* ``f[i]``: the decision value without bias, ``w.x_i`` or ``(L v)_i`` (lazy Expression).
    * ``ww``: ``||w||^2`` (``||v||^2``; lazy Expression).""",
    "references": """References
    ----------
    N. Cristianini, J. Shawe-Taylor, *An Introduction to Support Vector Machines and Other
    Kernel-based Learning Methods*, Cambridge University Press (2000), ch. 6;
    the catalogue pages ``formulations/classic.md`` and ``formulations/@name@.md``.""",
    "dual_quad": """* ``quad``: ``alpha'G(K)alpha`` (lazy Expression): dense, or in the factor form
      ``sum_k z_k^2``.
    * ``R``, ``z[k]``, ``Fv[k]``, ``factor[k]`` (factor form only): the factor components,
      ``z = F alpha`` with ``F = L'D_y`` and ``K = L L'``, the lazy images ``(F alpha)_k`` and
      the rows ``z[k] = Fv[k]``.
    * ``balance``: ``sum_i y_i alpha_i = 0``.""",
}


@document_parameters(parts=_DOC_PARTS)
def hard_primal(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0, kernel_rank=None,
                block=None):
    r"""Hard-margin SVM, primal form (convex QP).

    .. math::

        \min_{w, b} \; \tfrac12 \|w\|^2 \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1

    Problem class: QP. @factor_form@
    Infeasible -- reported as :class:`~svm_models.errors.NotSeparableError` -- when the
    data are not separable in the kernel's feature space.

    Components:

    * ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    @primal_w@
    @primal_values@
    * ``margin[i]``: ``y_i (f[i] + b) >= 1`` (lazy Constraint).
    * ``objective``: ``ww/2``, minimised.

    @parameters@

    @references@
    """
    return build_primal(X, y, HARD, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                        kernel_rank=kernel_rank, block=block)


@document_parameters(parts=_DOC_PARTS)
def hard_dual(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0, kernel_rank=None,
              quad_form="auto", max_vars=None, block=None):
    r"""Hard-margin SVM, dual form (convex QP).

    .. math::

        \max_{\alpha} \; e'\alpha - \tfrac12 \alpha' G(K) \alpha
        \quad \text{s.t.} \quad \alpha \ge 0, \; y'\alpha = 0,
        \qquad G(K)_{ij} = y_i y_j K_{ij}

    Problem class: QP. Unbounded -- reported as
    :class:`~svm_models.errors.NotSeparableError` -- when the data are not separable.

    Components:

    * ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``alpha[i]``: the multipliers of the margins, bounds ``[0, inf)``.
    @dual_quad@
    * ``objective``: ``sum(alpha) - quad/2``, maximised.

    @parameters@

    @references@
    """
    return build_dual(X, y, HARD, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                      kernel_rank=kernel_rank,
                      quad_form=quad_form, max_vars=max_vars, block=block)


@document_parameters(parts=_DOC_PARTS)
def soft_l1_primal(X, y, *, C=1.0, sample_weight=None, kernel="linear", gamma="scale",
                   degree=3, coef0=0.0,
                   kernel_rank=None, block=None):
    r"""1-norm soft-margin SVM, primal form (convex QP).

    .. math::

        \min_{w, b, \xi} \; \tfrac12 \|w\|^2 + C \sum_i \xi_i
        \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1 - \xi_i, \; \xi_i \ge 0

    Problem class: QP. @factor_form@

    Components:

    @soft_primal_head@
    * ``xi[i]``: the slacks, ``>= 0`` (a bound).
    @primal_values@
    * ``margin[i]``: ``y_i (f[i] + b) + xi[i] >= 1`` (lazy Constraint).
    * ``objective``: ``ww/2 + C sum_i xi[i]``, minimised.

    @parameters@

    @references@
    """
    return build_primal(X, y, SOFT_L1, C=C, sample_weight=sample_weight, kernel=kernel,
                        gamma=gamma, degree=degree,
                        coef0=coef0, kernel_rank=kernel_rank, block=block)


@document_parameters(parts=_DOC_PARTS)
def soft_l1_dual(X, y, *, C=1.0, sample_weight=None, kernel="linear", gamma="scale",
                 degree=3, coef0=0.0,
                 kernel_rank=None, quad_form="auto", max_vars=None, block=None):
    r"""1-norm soft-margin SVM, dual form (convex QP).

    .. math::

        \max_{\alpha} \; e'\alpha - \tfrac12 \alpha' G(K) \alpha
        \quad \text{s.t.} \quad 0 \le \alpha \le C, \; y'\alpha = 0,
        \qquad G(K)_{ij} = y_i y_j K_{ij}

    Problem class: QP. The problem libsvm solves.

    Components:

    @points_C@
    * ``alpha[i]``: the multipliers of the margins, bounds ``[0, C]`` (a variable bound on
      the mutable ``C``).
    @dual_quad@
    * ``objective``: ``sum(alpha) - quad/2``, maximised.

    @parameters@

    @references@
    """
    return build_dual(X, y, SOFT_L1, C=C, sample_weight=sample_weight, kernel=kernel,
                      gamma=gamma, degree=degree,
                      coef0=coef0, kernel_rank=kernel_rank, quad_form=quad_form,
                      max_vars=max_vars, block=block)


@document_parameters(parts=_DOC_PARTS)
def soft_l2_primal(X, y, *, C=1.0, sample_weight=None, kernel="linear", gamma="scale",
                   degree=3, coef0=0.0,
                   kernel_rank=None, block=None):
    r"""2-norm soft-margin SVM, primal form (convex QP).

    .. math::

        \min_{w, b, \xi} \; \tfrac12 \|w\|^2 + \tfrac{C}{2} \sum_i \xi_i^2
        \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1 - \xi_i

    Problem class: QP. @factor_form@
    ``xi`` needs no sign constraint: a negative slack never pays.

    Components:

    @soft_primal_head@
    * ``xi[i]`` (free): the slacks.
    @primal_values@
    * ``margin[i]``: ``y_i (f[i] + b) + xi[i] >= 1`` (lazy Constraint).
    * ``xi_sq``: ``sum_i xi_i^2`` (lazy Expression).
    * ``objective``: ``ww/2 + C/2 xi_sq``, minimised.

    @parameters@

    @references@
    """
    return build_primal(X, y, SOFT_L2, C=C, sample_weight=sample_weight, kernel=kernel,
                        gamma=gamma, degree=degree,
                        coef0=coef0, kernel_rank=kernel_rank, block=block)


@document_parameters(parts=_DOC_PARTS)
def soft_l2_dual(X, y, *, C=1.0, sample_weight=None, kernel="linear", gamma="scale",
                 degree=3, coef0=0.0,
                 kernel_rank=None, quad_form="auto", max_vars=None, block=None):
    r"""2-norm soft-margin SVM, dual form (convex QP).

    .. math::

        \max_{\alpha} \; e'\alpha - \tfrac12 \alpha' G(K + I/C) \alpha
        \quad \text{s.t.} \quad \alpha \ge 0, \; y'\alpha = 0,
        \qquad G(K)_{ij} = y_i y_j K_{ij}

    Problem class: QP. A hard margin with the kernel ``K + I/C``.

    Components:

    @points_C@
    * ``alpha[i]``: the multipliers of the margins, bounds ``[0, C sqrt(l)]`` (the upper
      bound is implied by optimality and never active: a bounded domain for a global solver).
    @dual_quad@
    * ``ridge``: ``alpha'alpha`` (lazy Expression), the ``I/C`` part.
    * ``objective``: ``sum(alpha) - quad/2 - ridge/(2C)``, maximised.

    @parameters@

    @references@
    """
    return build_dual(X, y, SOFT_L2, C=C, sample_weight=sample_weight, kernel=kernel,
                      gamma=gamma, degree=degree,
                      coef0=coef0, kernel_rank=kernel_rank, quad_form=quad_form,
                      max_vars=max_vars, block=block)


# ---------------------------------------------------------------------------------------
# Hard margin: the cause of a failure


def separable(svm) -> bool:
    """Whether the training data are separable in the kernel's feature space: the LP
    ``y_i (m_i'u + b) >= 1`` with ``m_i`` the rows of X (linear), of the factor L, or of K,
    is feasible (HiGHS via scipy)."""
    from scipy.optimize import linprog

    y = svm.data.y
    if svm.kernel.is_linear or svm.L is not None:
        M = svm.data.X if svm.kernel.is_linear else svm.L
        YM = y[:, None] * M
    else:   # D_y K = G D_y: from the one kept matrix, without materialising K
        YM = svm.K.G * y[None, :] if isinstance(svm.K, SignedGram) else y[:, None] * svm.K
    A = np.empty((YM.shape[0], YM.shape[1] + 1))
    np.negative(YM, out=A[:, :-1])
    A[:, -1] = -y
    del YM
    res = linprog(np.zeros(A.shape[1]), A_ub=A, b_ub=-np.ones(A.shape[0]),
                  bounds=[(None, None)] * A.shape[1], method="highs")
    return res.status == 0


def not_separable(svm, status: str, message: str) -> NotSeparableError:
    return NotSeparableError(
        f"the data are not separable in the kernel's feature space, so the hard-margin "
        f"{svm.formulation} has no solution (solver status: {status}, {message}). Use a soft "
        "margin (soft_l1_*/soft_l2_*) or another kernel.", status)


def check_before_solve(svm, *, proves_unbounded: bool) -> None:
    """A hard-margin dual on a backend that cannot prove it unbounded (SCIP searches on):
    check separability by LP first."""
    if (svm.facts.margin.hard and svm.facts.form == "dual" and not proves_unbounded
            and not separable(svm)):
        raise not_separable(svm, "unbounded", "checked by LP before solving")


def licence_hint(svm) -> str:
    """What fits Gurobi's size-limited licence when the factor form does not."""
    l = svm.data.n_points
    if svm.facts.quad_form == "factor" and l <= 200:
        return (f" The dense form of this dual has {l} variables and fits: build it with "
                "quad_form='dense' (svm_models.fit with solver='gurobi' picks it itself).")
    return ""


def explain_failure(svm, status: str, message: str):
    """The error for a failed hard margin: NotSeparableError when the LP says so; a solver
    that calls separable data infeasible is in numerical trouble (PIQP and Ipopt on 2-5
    points of size 1e-6, where the margin needs |w| ~ 1e6; found by fuzzing)."""
    unchanged = verify(svm.record) is None and not svm.record.extension_reason()
    if not svm.facts.margin.hard:
        # a soft margin called infeasible is numerical trouble (api._error_for: every
        # formulation but a hard margin is feasible as built); it also has an optimum: the
        # primal's objective is at least 0, the 1-norm dual's alpha lies in a box, the 2-norm
        # dual's objective is strictly concave -- so "unbounded" (Clarabel's DualInfeasible on
        # a poly kernel of entries 1e19) is numerical trouble too
        if status == Status.unbounded and unchanged:
            return SolveFailedError(
                f"the solver reported the {svm.formulation} model unbounded ({message}), but a "
                "soft margin is never unbounded (it has an optimum): numerical trouble, e.g. "
                "badly scaled data or kernel; standardise the features or try another backend",
                Status.numerical_error)
        return None
    if not separable(svm):
        return not_separable(svm, status, message)
    if status in (Status.infeasible, Status.infeasible_or_unbounded):   # (a str enum)
        return SolveFailedError(
            f"the solver reported the {svm.formulation} model infeasible ({message}), but the "
            "data are separable (an exact LP separates them): numerical trouble, e.g. badly "
            "scaled data needing a huge w; standardise the features or try another backend",
            Status.numerical_error)
    if status == Status.unbounded and unchanged:
        # separable: the hard primal has a solution, so its dual is bounded (PIQP's
        # DUAL_INFEASIBLE on 19 points of an rbf kernel, found by benchmarks/agreement.py)
        return SolveFailedError(
            f"the solver reported the {svm.formulation} model unbounded ({message}), but the "
            "data are separable (an exact LP separates them), so it has an optimum: numerical "
            "trouble, e.g. a nearly singular kernel needing huge alphas; a soft margin with a "
            "large C, or another backend", Status.numerical_error)
    return None


# ---------------------------------------------------------------------------------------
# Reading a solution


@dataclass(eq=False)
class _Reading:
    """What :func:`extract` reads from a solved block before it chooses the classifier:
    alpha as solved (``raw``, clipped into its box), the support threshold, where alpha came
    from; on a model the record proves, the candidate classifiers (``cands``, best first);
    after a user's change, the classifier as read (alpha, b, slacks, ``ww`` = the squared norm
    of w, and for a changed kernel primal without alpha the expansion of its coordinates)."""

    raw: np.ndarray
    thr: object
    alpha_source: str
    linear_w: np.ndarray | None = None
    cands: list | None = None
    alpha: np.ndarray | None = None
    b: float | None = None
    xi: np.ndarray | None = None
    ww: float | None = None
    expansion: np.ndarray | None = None


def extract(block, ctx) -> Solution:
    """Solution of a solved classic-SVM block (any of the six formulations).

    On a model the record proves to be the formulation, the classifier returned is the first
    of these candidates whose own certificate (:func:`~svm_models.postprocess.margin_certificate`:
    relative duality gap, balance, margins, at exactly the alpha, dual_coef or w and b
    returned) reaches :func:`~svm_models.tolerances.certificate_tolerance`: alpha polished on
    its active set; the solver's alpha with its zeros and bound values made exact (the
    support rule: relative to the largest alpha, never to C); the solver's own answer. When
    none does, the best is returned with ``Solution.classifier_certificate`` saying so, and
    :func:`svm_models.solve` refuses it. After a user's change the model is not the
    formulation: the values are read as they are (b and alpha from the SVM's optimality
    conditions only where they hold) and no certificate is computed.

    Its steps: read the dual's or the primal's values (:func:`_read_dual`,
    :func:`_read_primal`), choose and certify the classifier (:func:`_certified`) or take
    it as read, then the support vectors and the Solution."""
    svm = block._svm
    C_param = float(pyo.value(block.C)) if not svm.facts.margin.hard else None
    return _extract(svm, ctx, C_param, block=block)


def _extract(svm, ctx, C_param, *, block=None, raw=None) -> Solution:
    """:func:`extract` from the block's values, or -- no block: an :class:`UnbuiltDual`,
    always the formulation (``ctx.verified``) -- from the dual's values ``raw``."""
    margin, form = svm.facts.margin, svm.facts.form
    data = svm.data
    y, l = data.y, data.n_points
    C = svm.point_C(C_param)   # each point's penalty (C itself without sample weights)
    extra: dict = {}
    # (unbuilt: the solver's value, or None -- a verified model's is the certificate's below)
    objective = ctx.objective if block is None else block_objective(svm, block, ctx)
    read = (_read_dual(svm, block, ctx, margin, C, extra, raw) if form == "dual"
            else _read_primal(svm, block, ctx, margin, C, extra))
    extra["alpha_source"] = read.alpha_source
    extra["support_threshold"] = float(np.max(read.thr, initial=0.0))
    sol_kw: dict = {}
    if ctx.verified:
        alpha, b, linear_w, xi, ww, objective = _certified(svm, margin, form, C, read, ctx,
                                                           extra, sol_kw)
    else:
        alpha, b, linear_w, xi, ww = read.alpha, read.b, read.linear_w, read.xi, read.ww
        extra["diagnostics"] = ("not computed: the model solved is not the formulation "
                                f"({ctx.reason})")
    with np.errstate(invalid="ignore"):
        if read.expansion is not None:
            support = np.flatnonzero(read.expansion != 0.0)
            dual_coef = read.expansion
        else:
            support = np.flatnonzero(alpha > 0)
            dual_coef = y * alpha if np.all(np.isfinite(alpha)) else np.zeros(l)
    sol_kw.update(formulation=svm.formulation, solver=ctx.solver, status=ctx.status, w=linear_w,
                  b=float(b), alpha=alpha, dual_coef=dual_coef, xi=xi, support=support,
                  support_vectors=_support_vectors(svm, support), objective=objective,
                  kernel=svm.kernel, classes=data.classes, C=C_param, time=ctx.time,
                  interface=ctx.interface, path=ctx.path, extra=extra)
    sol_kw["margin"] = (1.0 / np.sqrt(ww)) if ww and np.isfinite(ww) and ww > 0 else None
    if svm.facts.kernel_rank is not None:
        extra["kernel_rank"] = _low_rank_report(svm.facts.kernel_rank, alpha)
    return Solution(**sol_kw)


def _read_dual(svm, block, ctx, margin, C, extra, raw=None) -> _Reading:
    """A dual's alpha (the block's, or ``raw`` as given); verified: the candidates (polished,
    cut, as solved, and the polish from a looser cut-off last); changed: alpha cut, b from
    the KKT conditions where they hold (:func:`_changed_dual_bias`), the slacks and ``ww``
    of that classifier."""
    data = svm.data
    y, l = data.y, data.n_points
    Cb = C if margin.box else np.inf
    raw = np.clip(var_array(block.alpha) if raw is None else raw, 0.0, Cb)
    scale = alpha_scale(raw)
    thr = per_point_threshold(support_threshold(scale, ctx.tol), Cb, scale)
    read = _Reading(raw=raw, thr=thr, alpha_source="dual variables")
    if ctx.verified:
        cands = _polished(svm, margin, raw, C, thr)
        if svm.kernel.is_linear and not margin.ridge:
            # w read from a large alpha carries its round-off: the margin rows of alpha's own
            # active set give it exactly (at C = 1e12 that w is too far off for its margins to
            # tell which points are on them); first where the round-off costs digits of w,
            # else after alpha's polish
            held = (raw >= Cb - thr) & live(C, l) if margin.box else np.zeros(l, dtype=bool)
            on = (raw > thr) & ~held
            cands.insert(0 if _lossy(data.X, y * raw, data.X.T @ (y * raw)) else len(cands),
                         lambda: _primal_polished(svm, margin, on, held, C))
        # after a retry at a looser tolerance the cut-off is that tolerance's: the polish from
        # the cut-off of the tolerance asked comes after it (ipm at C = 1e7 on 200 moons points,
        # retried at 1e-6: the cut-off 1e-3 of the largest alpha held 5 of the 23 support
        # vectors at zero, the polish did not settle, and the solver's alpha was returned with
        # 200 support vectors)
        asked = ctx.certify_tol
        if asked is not None and ctx.tol is not None and asked < ctx.tol:
            tight = per_point_threshold(support_threshold(scale, asked), Cb, scale)
            cands.append(lambda: [(f"{name}, from the cut-off of tol={asked:g}", a, b_, w_)
                                  for name, a, b_, w_ in _polished(svm, margin, raw, C, tight)])
        cut = cut_alpha(raw, thr, Cb)   # (a candidate as it is: _choose's last resort)
        cands.append(("solver's alpha, zeros and bounds made exact", cut, None, None))
        cands.append(lambda: [("solver's alpha", raw, bias_from_kkt(
            margin, raw, y, svm.kernel_times(y * raw), C, thr), None)])

        # last: the polish from a looser cut-off (1e-3 of the largest alpha), computed only
        # when nothing above is certified -- an interior point's alpha within 4e-4 of C on a
        # degenerate optimum (every alpha at 0 or C, more free candidates than the kernel's
        # rank: C = 1e-8, 30 features) settles only from there
        def loose_polish():
            loose = per_point_threshold(SV_REL_MAX * scale, Cb, scale)
            if not np.any(loose > thr):
                return []
            return [(f"{name}, from the cut-off {SV_REL_MAX:g} of the largest alpha", a, b_, w_)
                    for name, a, b_, w_ in _polished(svm, margin, raw, C, loose)]

        cands.append(loose_polish)
        # very last: alpha with its zeros and bounds made exact, balanced (SCIP stops with
        # y'alpha 3e-7 off, its feasibility tolerance; class weights 1000 and 1e-4)
        cands.append(lambda: [] if float(y @ cut) == 0.0 else [
            ("solver's alpha, zeros and bounds made exact, balanced", balanced(cut, y),
             None, None)])
        read.cands = cands
        return read
    alpha = cut_alpha(raw, thr)
    coef = y * alpha
    f = svm.kernel_times(coef)
    b = _changed_dual_bias(svm, block, ctx, margin, alpha, f, C, thr, extra)
    read.alpha, read.b = alpha, b
    read.xi = (ratio(alpha, C) if margin.ridge else
               np.maximum(0.0, 1.0 - y * (f + b)) if margin.box else np.zeros(l))
    if svm.kernel.is_linear:
        read.linear_w = data.X.T @ coef
    read.ww = float(coef @ f)
    return read


def _read_primal(svm, block, ctx, margin, C, extra) -> _Reading:
    """A primal's w (or factor coordinates v), b, slacks and alpha: the margin rows'
    multipliers, else recovered from the KKT conditions by bounded least squares (after a
    user's change, only if they hold); verified: the candidates; changed: the values as
    read."""
    data = svm.data
    y, l = data.y, data.n_points
    Cb = C if margin.box else np.inf
    cvar = block.w if svm.kernel.is_linear else block.v
    cvals = var_array(cvar)
    b_solver = float(block.b.value)
    M = data.X if svm.kernel.is_linear else svm.L
    fdec = M @ cvals
    xi_solver = var_array(block.xi) if not margin.hard else np.zeros(l)
    mult = margin_multipliers(svm, ctx, extra)
    if mult is not None:
        raw, alpha_source = mult, "multipliers"
    else:
        residual = y * (fdec + b_solver) - 1.0 + xi_solver
        active = residual <= ACTIVE_MARGIN_REL * max(1.0, float(np.abs(fdec).max(initial=0.0)))
        raw = recover_alpha(y, margin, M.T, cvals, active, xi_solver, C,
                            support_threshold(1.0, ctx.tol))
        alpha_source = "kkt_least_squares"
        if not ctx.verified:
            # accepted only if it satisfies the SVM's stationarity and balance conditions
            res = max(float(np.linalg.norm(cvals - M.T @ (y * raw)))
                      / max(1.0, float(np.linalg.norm(cvals))),
                      abs(float(y @ raw)) / max(1.0, float(raw.sum())))
            extra["svm_kkt_residual"] = res
            if res > KKT_ACCEPT:
                raw = np.full(l, np.nan)
                alpha_source = ("not available: the model was changed, the backend reports "
                                "no multipliers, and the SVM's KKT conditions do not hold")
    raw = np.clip(raw, 0.0, Cb)
    thr = per_point_threshold(support_threshold(alpha_scale(raw), ctx.tol), Cb,
                              alpha_scale(raw))
    read = _Reading(raw=raw, thr=thr, alpha_source=alpha_source,
                    linear_w=cvals if svm.kernel.is_linear else None)
    if ctx.verified:
        cut = cut_alpha(raw, thr, Cb)
        w_s = cvals if svm.kernel.is_linear else None
        read.cands = _polished(svm, margin, raw, C, thr)
        if svm.kernel.is_linear and not margin.ridge:
            # at C = 1e12 on inseparable data alpha is 1e12 in size, w of order one: the margin
            # rows give w and the support exactly (first where alpha's expansion loses digits
            # of w, else after alpha's polish)
            on, held = margin_sets(svm, margin, cvals, b_solver, C, ACTIVE_MARGIN_REL * max(
                1.0, float(np.abs(fdec).max(initial=0.0))))
            read.cands.insert(0 if _lossy(data.X, y * raw, cvals) else len(read.cands),
                              lambda: _primal_polished(svm, margin, on, held, C))
        read.cands += [
            ("solver's point, alpha's zeros and bounds made exact", cut, b_solver, w_s),
            ("solver's w, b from the KKT conditions of exact alpha", cut, None, w_s),
            ("solver's point and alpha", raw, b_solver, w_s)]
        return read
    read.alpha, read.b = cut_alpha(raw, thr), b_solver
    extra["b_source"] = "solver"
    if not np.all(np.isfinite(read.alpha)) and not svm.kernel.is_linear:
        # the factor form's own classifier: w = sum_k v_k e_k with K = L L', i.e. dual_coef
        # beta with L' beta = v (the least-norm one; L of full column rank or not)
        read.expansion = np.linalg.lstsq(svm.L.T, cvals, rcond=None)[0]
        extra["dual_coef_source"] = ("the expansion of the solved factor coordinates v "
                                     "(L'dual_coef = v): alpha is not available")
    read.xi = np.maximum(xi_solver, 0.0) if margin.box else xi_solver
    read.ww = float(cvals @ cvals)
    return read


def _certified(svm, margin, form, C, read: _Reading, ctx, extra: dict, sol_kw: dict):
    """The classifier :func:`_choose` picks among ``read.cands`` and its certificate (in
    ``Solution.classifier_certificate`` and the diagnostics in ``sol_kw``): ``(alpha, b, w, xi, ww,
    objective)``, the objective the certificate's (the dual's or the primal's). A hard
    margin whose margins are violated at the chosen point is the unbounded dual some
    interfaces call optimal: the formulation's error."""
    data = svm.data
    y, l = data.y, data.n_points
    name, alpha, b, w, cert, accept = _choose(svm, margin, C, read.cands, ctx)
    linear_w = read.linear_w
    if svm.kernel.is_linear:
        linear_w = w if w is not None else data.X.T @ (y * alpha)
    extra["b_source"] = name
    extra["polished"] = name.startswith("polished")
    extra["certificate"] = {"classifier": name, "worst": cert["worst"], "accept": accept,
                            "certified": cert["worst"] <= accept}
    xi = cert["slacks"] if not margin.hard else np.zeros(l)
    objective = cert["dual"] if form == "dual" else cert["primal"]
    ww = cert.get("ww")   # (the certificate's |w|^2 of this alpha and w; NaN: none)
    if ww is None:
        ww = (float(linear_w @ linear_w) if linear_w is not None else
              float((y * alpha) @ svm.kernel_times(y * alpha)))
    m = cert["margins"]
    kkt = {"primal_infeasibility": cert.get("violation", 0.0), "balance": cert["balance"],
           "complementarity": float(np.max(alpha * np.abs(m - 1.0 + xi), initial=0.0))
           / max(alpha_scale(alpha), 1e-300)}
    if "stationarity" in cert:
        kkt["stationarity"] = cert["stationarity"]
    sol_kw.update(primal_objective=cert["primal"], dual_objective=cert["dual"],
                  duality_gap=cert["gap"], kkt=kkt)
    if margin.hard and cert.get("violation", 0.0) > HARD_MARGIN_VIOLATION:
        err = explain_failure(svm, "optimal", "but the margins are violated")
        if err is not None:  # some interfaces report "optimal" for the unbounded dual
            raise err
    return alpha, b, linear_w, xi, ww, objective


def _lossy(X, ya, w) -> bool:
    """Whether the linear kernel's ``X'(y alpha)`` is computed with a round-off beyond
    EXPANSION_LOSSY of ``|w|``."""
    return float(np.linalg.norm(expansion_roundoff(X, ya))) > \
        EXPANSION_LOSSY * float(np.linalg.norm(w))


def _primal_polished(svm, margin, on, held, C) -> list:
    """The candidate of the linear primal's polish in its own coordinates (a list of none or
    one): w and b exact on the margin rows of the solver's active set, alpha from
    stationarity (:func:`~svm_models.postprocess.polish_linear_primal`)."""
    out = polish_linear_primal(svm, margin, on, held, C)
    if out is None:
        return []
    alpha, w_new, b_new = out
    return [("w and b exact on the margin rows of the solver's active set, alpha from "
             "stationarity",
             alpha, b_new, w_new)]


def _polished(svm, margin, raw, C, thr) -> list:
    """The candidate of the polish (a list of none or one): alpha solved exactly on its active
    set, b from its KKT conditions, w (linear kernel) its image ``X'(y alpha)``."""
    alpha, ok = polish_dual(svm, margin, raw, C, thr, judge=False)   # (_choose certifies it)
    return [("polished alpha (kkt)", alpha, None, None)] if ok else []


def _choose(svm, margin, C, cands, ctx):
    """``(name, alpha, b, w, certificate, accept)``: the first candidate ``(name, alpha, b, w)``
    (or of the list a callable in ``cands`` returns, called only when reached) whose
    certificate reaches the tolerance (b None: from alpha's KKT conditions; w None: the
    kernel expansion of alpha, or for the linear kernel its image X'(y alpha)); else the one
    with the best certificate."""
    y = svm.data.y
    accept = certificate_tolerance(ctx.certify_tol if ctx.certify_tol is not None else ctx.tol)
    best = None
    for name, alpha, b, w in (c for item in cands
                              for c in (item() if callable(item) else [item])):
        if not np.all(np.isfinite(alpha)):
            continue
        Ka = svm.kernel_times(y * alpha) if b is None or svm.gram_factor() is None else None
        if b is None:
            b = bias_from_kkt(margin, alpha, y, Ka, C, 0.0)
        if w is None and svm.kernel.is_linear:
            w = svm.data.X.T @ (y * alpha)
        cert = margin_certificate(svm, margin, alpha, b, C, w, Ka=Ka)
        if cert["worst"] > accept and not margin.ridge:
            # no alpha at C (the hard margin's solution) whose margins fall short of 1 by
            # round-off of an ill-conditioned kernel: at C = 1e8 a shortfall of 1e-9 costs
            # 0.1. The same classifier scaled by 1/(1 - shortfall) (alpha and b alike) has
            # every margin >= 1 and changes the dual objective only to second order
            short = float(np.max(1.0 - cert["margins"], initial=0.0))
            t = 1.0 / (1.0 - short) if 0.0 < short < ONTO_MARGINS_MAX else None
            if t is not None and (margin.hard or bool(np.all((alpha == 0) | (t * alpha < C)))):
                w_t = None if w is None else t * w
                scaled = margin_certificate(svm, margin, t * alpha, t * b, C, w_t)
                if scaled["worst"] < cert["worst"]:
                    name, alpha, b, w, cert = (f"{name}, scaled onto the margins", t * alpha,
                                               t * b, w_t, scaled)
        if cert["worst"] > accept and margin.box and not margin.ridge:
            # b from alpha's KKT conditions misses the precision the margins need (class
            # weights 1000 and 1e-4: a shortfall of 1e-9 on a point of C_i = 1000 is 2e-4 of
            # the objective): the b that minimises the primal for this classifier's own
            # decision values (the certificate's margins less b: w's where w is given)
            b_p = bias_minimising_primal(y, y * cert["margins"] - b, C)
            primal_b = margin_certificate(svm, margin, alpha, b_p, C, w, Ka=Ka)
            if primal_b["worst"] < cert["worst"]:
                name, b, cert = f"{name}, b minimising the primal", b_p, primal_b
        if best is None or cert["worst"] < best[4]["worst"]:
            best = (name, alpha, b, w, cert, accept)
        if cert["worst"] <= accept:
            return name, alpha, b, w, cert, accept
    if best is None:   # NaN everywhere: the classifier of the solver's alpha, uncertified
        name, alpha, b, w = next(c for c in reversed(cands) if not callable(c))
        nan = {"worst": np.inf, "primal": np.nan, "dual": np.nan, "gap": np.nan,
               "balance": np.nan, "margins": np.full(len(y), np.nan),
               "slacks": np.full(len(y), np.nan)}
        return name, alpha, (np.nan if b is None else b), w, nan, accept
    return best


def _changed_dual_bias(svm, block, ctx, margin, alpha, f, C, thr, extra) -> float:
    """b of a changed dual model: from the KKT conditions if alpha satisfies the SVM's own
    optimality conditions (then it is this SVM's solution); else the multiplier of
    y'alpha = 0, as long as that constraint is the builder's -- a user's (``extract(duals=)``)
    read in the sign that is dual feasible (:func:`~svm_models.postprocess.user_dual_sign`:
    the classifier with that b has the smaller duality gap against alpha), which follows the
    interface and the sense of the user's objective; else NaN, said why."""
    b = bias_from_kkt(margin, alpha, y := svm.data.y, f, C, thr)
    res = max(dual_kkt_residual(margin, alpha, y, f, b, np.inf if C is None else C, thr),
              abs(float(y @ alpha)) / max(1.0, float(alpha.sum())))
    extra["svm_kkt_residual"] = res
    if res <= KKT_ACCEPT:
        extra["b_source"] = "kkt (the solution satisfies the SVM's optimality conditions)"
        return b
    bal = block.component("balance")     # None when the user deleted it
    kept = bal is not None and bal is svm.record.components.get("balance")
    if not (kept and unchanged(svm.record, bal)):
        extra["b_source"] = (f"not available: the model was changed, the values as solved "
                             f"satisfy the SVM's optimality conditions only to {res:.3g} "
                             f"(at most {KKT_ACCEPT:g} is accepted), and balance (y'alpha = 0, "
                             "whose multiplier is b) was deleted or changed")
        return float("nan")
    # the multiplier of y'alpha = 0 is b in the convention of the dual's maximisation; a
    # user's duals in whichever sign makes (alpha, b) dual feasible for the block's own rows
    # -- the classifier with that b has the smaller duality gap (and margin violation)
    # against alpha; the sign matters only where the two readings differ beyond KKT_ACCEPT
    size = max(1.0, float(np.max(np.abs(f), initial=0.0)))

    def violation(b_read):
        cert = margin_certificate(svm, margin, alpha, b_read, C)
        return abs(cert["gap"]) + cert.get("violation", 0.0)

    b = user_multiplier(ctx, bal, violation, material=lambda d: 2 * abs(d) > KKT_ACCEPT * size,
                        what="b, the multiplier of balance (the classifier's duality gap and "
                             "margin violation against alpha)", extra=extra)
    if b is None:
        extra["b_source"] = (f"not available: the model was changed, the values as solved "
                             f"satisfy the SVM's optimality conditions only to {res:.3g} "
                             f"(at most {KKT_ACCEPT:g} is accepted), and the multiplier of "
                             "balance (y'alpha = 0), which is b, was not given (pass "
                             "duals=model.dual, a Suffix 'dual' the solver filled, or solve "
                             "to a tighter tolerance)")
        return float("nan")
    extra["b_source"] = "multiplier of balance"
    return b


def _low_rank_report(facts: dict, alpha: np.ndarray) -> dict:
    """The kernel_rank report with the bound on the optimum: with ``E = K - L L'`` (PSD,
    ``lambda_max(E) <= trace(E)``), every dual objective of the low-rank model is that of
    the exact kernel plus ``(y a)'E(y a)/2 >= 0``, so ``0 <= optimum(L L') - optimum(K)
    <= trace(E) ||alpha||^2 / 2`` at the low-rank optimum alpha (the primal optimum is the
    dual's)."""
    bound = 0.5 * facts["trace_error"] * float(alpha @ alpha) if np.all(np.isfinite(alpha)) \
        else float("nan")
    return {**facts, "objective_bound": bound}


def _support_vectors(svm, support):
    if svm.kernel.name == "precomputed":
        return np.zeros((support.size, 0))
    return svm.data.X[support]


# ---------------------------------------------------------------------------------------
# The six formulations

#: listed first
ORDER = 0


class ClassicSVM(Formulation):
    """A classic SVM: its margin (hard, 1-norm or 2-norm soft: the family) and its form."""

    problem_class = "QP"

    def __init__(self, margin: Margin, form: str, summary: str):
        family, soft = margin.name, not margin.hard
        super().__init__(name=f"{family}_{form}", builder=globals()[f"{family}_{form}"],
                         family=family, form=form, summary=summary, margin=margin,
                         hard_margin=not soft,
                         hard_at_infinite_C=f"hard_{form}" if soft else None,
                         other_form=f"{family}_{'primal' if form == 'dual' else 'dual'}")

    def extract(self, block, ctx) -> Solution:
        return extract(block, ctx)

    def unbuilt(self, X, y, **params):
        if self.form != "dual":
            return None
        return unbuilt_dual(X, y, self.margin, **params)

    def check_before_solve(self, svm, *, proves_unbounded: bool) -> None:
        check_before_solve(svm, proves_unbounded=proves_unbounded)

    def explain_failure(self, svm, status, message: str):
        return explain_failure(svm, status, message)

    def licence_hint(self, svm) -> str:
        return licence_hint(svm)


for _margin, _form, _summary in [
        (HARD, "primal", "Hard-margin SVM, primal form (convex QP)."),
        (HARD, "dual", "Hard-margin SVM, dual form (convex QP)."),
        (SOFT_L1, "primal", "1-norm soft-margin SVM, primal form (convex QP)."),
        (SOFT_L1, "dual", "1-norm soft-margin SVM, dual form (convex QP; the problem libsvm "
                          "solves)."),
        (SOFT_L2, "primal", "2-norm soft-margin SVM, primal form (convex QP)."),
        (SOFT_L2, "dual", "2-norm soft-margin SVM, dual form (convex QP): a hard margin with "
                          "kernel K + I/C.")]:
    register(ClassicSVM(_margin, _form, _summary))

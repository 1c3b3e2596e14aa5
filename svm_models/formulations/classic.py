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
References: Cristianini & Shawe-Taylor (2000), ch. 6; SPEC.md section 1.
"""

from __future__ import annotations

import inspect

import numpy as np
import pyomo.environ as pyo

from ..errors import NotSeparableError, ParameterError, SolveFailedError
from ..kernels import check_rank, factor, kernel_factor
from ..model.built import BuiltSVM, SignedGram
from ..model.forms import QuadBlock
from ..model.lazy import LazyObjective, linear_form
from ..model.pieces import (
    Layout,
    add_balance,
    add_C,
    add_features,
    add_margin,
    add_points,
    add_quadratic_form,
    choose_form,
    declare_factor,
    gram_if_needed,
    low_rank,
    new_block,
    prepare,
    sum_of_squares,
)
from ..model.record import LinearTerm, QuadTerm, Record, Scale, members, unchanged
from ..postprocess import (
    bias_from_kkt,
    dual_kkt_residual,
    polish_dual,
    recover_alpha,
    values_of,
    var_array,
)
from ..solution import Solution
from ..status import Status
from ..tolerances import (
    ACTIVE_MARGIN_REL,
    HARD_MARGIN_VIOLATION,
    KKT_ACCEPT,
    alpha_scale,
    support_threshold,
)

FAMILIES = ("hard", "soft_l1", "soft_l2")


# ---------------------------------------------------------------------------------------
# The two generic builders


def build_dual(X, y, family: str, *, C=1.0, kernel="linear", gamma="scale", degree=3,
               coef0=0.0, kernel_rank=None, quad_form="auto", max_vars=None, block=None):
    """Fill ``block`` (or a new ConcreteModel) with the dual of the ``family`` SVM."""
    rank = None if kernel_rank is None else check_rank(kernel_rank, kernel)
    if rank is not None and quad_form == "dense":
        raise ParameterError("kernel_rank builds the factor form of the dual (z = F alpha with "
                             "the rank-r factor F); quad_form='dense' would form the l x l "
                             "matrix L L' again: drop quad_form or kernel_rank")
    data, kern, K = prepare(X, y, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                            need_gram=False)
    facts, L = {}, None
    if rank is not None:
        kern, lr = low_rank(kern, data, rank)
        form, L = "factor", lr.L
        facts["kernel_rank"] = lr.report(rank)
    else:
        form = choose_form(quad_form, kern, data.n_points, data.n_features, max_vars)
        K = gram_if_needed(kern, data, K, form)
    b = new_block(block, f"{family}_dual")
    add_points(b, data)
    if family != "hard":
        add_C(b, C)
    if family == "soft_l1":
        ub, doc = b.C, "dual variable alpha_i in [0, C] (Lagrange multiplier of point i's margin)"
    elif family == "soft_l2":
        # implied, never active: at the optimum e'a = a'(G + I/C)a >= |a|^2/C, so
        # |a|^2 <= C e'a <= C sqrt(l) |a|; stated so that a global solver (SCIP) has a
        # bounded domain and terminates
        ub = b.C * float(np.sqrt(data.n_points))
        doc = ("dual variable alpha_i >= 0 (Lagrange multiplier of point i's margin); the "
               "bound C sqrt(l) is implied by optimality and never active")
    else:
        ub, doc = None, "dual variable alpha_i >= 0 (Lagrange multiplier of point i's margin)"
    b.alpha = pyo.Var(b.I, bounds=(0, ub), initialize=0.0, doc=doc)
    layout = Layout()
    apos = layout.add(b.alpha)
    yv = data.y
    doc = "alpha' G(K) alpha with G_ij = y_i y_j K_ij"
    if form == "factor":
        # a'G(K)a = ||F a||^2 with F = L' D_y, K = L L' (L = X for the linear kernel)
        Lf = kernel_factor(kern, data.X, K) if L is None else L
        declare_factor(b, Lf.shape[1])
        layout.add(b.z)
        qf = add_quadratic_form(b, layout, "quad", b.alpha, L=Lf, y=yv, doc=doc)
    else:
        # the kernel matrix is kept once, as G = D_y K D_y (signed in place unless it is the
        # user's precomputed matrix, which the dataset keeps anyway)
        G = K * yv[:, None] if kern.name == "precomputed" else _sign_in_place(K, yv)
        G *= yv[None, :]
        K = K if kern.name == "precomputed" else SignedGram(G, yv)
        qf = add_quadratic_form(b, layout, "quad", b.alpha, M=G, doc=doc)
    rows = qf.rows + [add_balance(b, layout, b.alpha, yv)]
    quadratic = [QuadTerm(q, Scale(-0.5)) for q in qf.blocks]
    if family == "soft_l2":
        sum_of_squares(b, "ridge", b.alpha, doc="alpha'alpha (the I/C part of G(K + I/C))")
        quadratic.append(QuadTerm(QuadBlock(apos, diag=np.ones(len(apos))), Scale(-0.5, "C", -1)))
    # lazy: the l terms of e'alpha are built only when something reads the objective
    b.objective = LazyObjective(recipe=(_dual_objective, (b.alpha, b.quad, b.component("ridge"),
                                                          b.component("C"))),
                                sense=pyo.maximize,
                                doc="dual objective e'alpha - 1/2 alpha'G alpha")
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=-1,
                    linear=[LinearTerm(apos, 1.0)], quadratic=quadratic, rows=rows,
                    problem_class="QP").seal()
    b._svm = BuiltSVM(formulation=f"{family}_dual", data=data, kernel=kern, block=b,
                      record=record, K=K, L=L, facts={"quad_form": form, **facts})
    return b


def _dual_objective(alpha, quad, ridge, C):
    """``e'alpha - 1/2 quad`` (``- 1/(2C) ridge`` for the 2-norm soft margin)."""
    expr = linear_form(np.ones(len(alpha)), members(alpha)) - 0.5 * quad
    return expr if ridge is None else expr - 0.5 / C * ridge


def _primal_objective(ww, xi, xi_sq, C):
    """``1/2 ww`` plus ``C sum xi`` (1-norm) or ``C/2 xi_sq`` (2-norm)."""
    expr = 0.5 * ww
    if xi_sq is not None:
        return expr + 0.5 * C * xi_sq
    if xi is not None:
        return expr + C * linear_form(np.ones(len(xi)), members(xi))
    return expr


def _sign_in_place(K: np.ndarray, y: np.ndarray) -> np.ndarray:
    K *= y[:, None]
    return K


def build_primal(X, y, family: str, *, C=1.0, kernel="linear", gamma="scale", degree=3,
                 coef0=0.0, kernel_rank=None, block=None):
    """Fill ``block`` (or a new ConcreteModel) with the primal of the ``family`` SVM."""
    linear = kernel == "linear"
    rank = None if kernel_rank is None else check_rank(kernel_rank, kernel)
    data, kern, K = prepare(X, y, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                            need_gram=not linear and rank is None)
    facts = {}
    if rank is not None:
        kern, lr = low_rank(kern, data, rank)
        facts["kernel_rank"] = lr.report(rank)
    b = new_block(block, f"{family}_primal")
    add_points(b, data)
    if family != "hard":
        add_C(b, C)
    layout = Layout()
    L = None
    if linear:
        add_features(b, data.n_features)
        b.w = pyo.Var(b.J, initialize=0.0, doc="normal vector w of the separating hyperplane")
        coef, M = b.w, data.X
    else:
        L = factor(K) if rank is None else lr.L
        b.R = pyo.Set(initialize=range(L.shape[1]), ordered=True,
                      doc="factor components k (K = L L', L of full column rank)")
        b.v = pyo.Var(b.R, initialize=0.0,
                      doc="coordinates of w in the basis L spans: w = sum_j beta_j phi(x_j), v = L' beta")
        coef, M = b.v, L
    cpos = layout.add(coef)
    b.b = pyo.Var(initialize=0.0, doc="bias b")
    layout.add(b.b)
    xi = None
    if family != "hard":
        b.xi = pyo.Var(b.I, bounds=(0, None) if family == "soft_l1" else (None, None),
                       initialize=0.0, doc="slack xi_i of point i's margin")
        xi = b.xi
        layout.add(xi)
    fdoc = "f_i = w.x_i" if linear else "f_i = (L v)_i = (K beta)_i = w.phi(x_i)"
    rows = [add_margin(b, layout, ("f", fdoc), M, coef.local_name, data.y, xi)]
    sum_of_squares(b, "ww", coef, doc="||w||^2" if linear else "||w||^2 = ||v||^2 = beta'K beta")
    quadratic = [QuadTerm(QuadBlock(cpos, diag=np.ones(len(cpos))), Scale(0.5))]
    linear_terms = []
    if family == "soft_l1":
        linear_terms.append(LinearTerm(layout.pos["xi"], 1.0, Scale(1.0, "C")))
    elif family == "soft_l2":
        sum_of_squares(b, "xi_sq", xi, doc="sum_i xi_i^2")
        quadratic.append(QuadTerm(QuadBlock(layout.pos["xi"], diag=np.ones(data.n_points)),
                                  Scale(0.5, "C")))
    # lazy: the l terms of C sum xi are built only when something reads the objective
    b.objective = LazyObjective(recipe=(_primal_objective, (b.ww, xi, b.component("xi_sq"),
                                                            b.component("C"))),
                                sense=pyo.minimize,
                                doc="primal objective")
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=1,
                    linear=linear_terms, quadratic=quadratic, rows=rows,
                    problem_class="QP").seal()
    b._svm = BuiltSVM(formulation=f"{family}_primal", data=data, kernel=kern, block=b,
                      record=record, K=K, L=L, facts=facts)
    return b


# ---------------------------------------------------------------------------------------
# The six public builders


# The builders' Parameters and Returns sections, written once: each docstring's
# ``@parameters@`` becomes the entries of its signature's parameters, in order.
_PARAMETER_DOCS = {
    'X': """    X : array-like of shape (l, d)
        Training points.""",
    'y': """    y : array-like of shape (l,)
        Two classes, any labels (mapped to -1/+1).""",
    'C': """    C : float, default 1.0
        The soft-margin penalty, > 0.""",
    'kernel': """    kernel : {"linear", "poly", "rbf", "precomputed"} or Kernel, default "linear"
        The kernel; ``gamma``, ``degree``, ``coef0`` as in scikit-learn (``gamma="scale"``
        is ``1 / (d X.var())``). With ``"precomputed"``, ``X`` is the l x l Gram matrix.""",
    'quad_form': """    quad_form : {"auto", "dense", "factor"}, default "auto"
        ``auto`` takes the factor form for the linear kernel when it is smaller,
        ``(d + 1) l < l (l + 1)/2``, and the dense form otherwise.""",
    'max_vars': """    max_vars : int, optional
        The largest model the chosen backend takes (:func:`svm_models.fit` passes Gurobi's
        licence limit): ``auto`` then takes the dense form when only its ``l`` variables fit.""",
    'kernel_rank': """    kernel_rank : int, optional
        Solve with the kernel matrix factored as ``K ~= L L'`` of rank ``kernel_rank``
        (pivoted incomplete Cholesky, computed without forming K: O(l r) memory), for the
        rbf and poly kernels; ``kernel_rank >= l`` is exact (to the factor's tolerance).
        The model is built in the factor form on ``L``; the kernel of the solution is the
        Nystroem kernel of the pivots (:class:`~svm_models.kernels.LowRankKernel`), which
        reproduces ``L L'`` on the training points. ``Solution.extra["kernel_rank"]``
        reports the rank, the neglected trace ``trace(K - L L')`` and a bound on the
        optimum's distance from the exact kernel's.""",
    'block': """    block : pyomo Block, optional
        A block to fill (inside a larger model); by default a new ConcreteModel.""",
}
_RETURNS_DOC = """    Returns
    -------
    pyomo.environ.Block
        The filled block (a ConcreteModel unless ``block`` is given); solve it with
        :func:`svm_models.solve`."""


def _document_parameters(f):
    """Fill ``@parameters@`` in ``f``'s docstring from its signature, in order (``gamma``,
    ``degree``, ``coef0`` are described with ``kernel``)."""
    names = [n for n in inspect.signature(f).parameters if n not in ("gamma", "degree", "coef0")]
    section = "\n".join(_PARAMETER_DOCS[n].rstrip() for n in names)
    f.__doc__ = f.__doc__.replace("    @parameters@\n", "    Parameters\n    ----------\n"
                                  + section + "\n\n" + _RETURNS_DOC.rstrip() + "\n")
    return f


@_document_parameters
def hard_primal(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0, kernel_rank=None,
                block=None):
    r"""Hard-margin SVM, primal form (convex QP).

    .. math::

        \min_{w, b} \; \tfrac12 \|w\|^2 \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1

    Problem class: QP. With a non-linear kernel the model is built in the factor form
    ``K = L L'`` (``L`` of full column rank, pivoted Cholesky): ``w`` has the coordinates
    ``v = L' beta`` in the basis ``L`` spans, ``||w||^2 = ||v||^2``, ``w.phi(x_i) = (L v)_i``;
    well posed for every QP backend even when K is singular.
    Infeasible -- reported as :class:`~svm_models.errors.NotSeparableError` -- when the
    data are not separable in the kernel's feature space.

    Components:

    * ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``J``, ``w[j]`` (linear kernel): the features and the normal vector; ``R``, ``v[k]``
      (other kernels): the factor components and the coordinates of w in that basis.
    * ``b``: the bias.
    * ``f[i]``: the decision value without bias, ``w.x_i`` or ``(L v)_i`` (lazy Expression).
    * ``ww``: ``||w||^2`` (``||v||^2``; lazy Expression).
    * ``margin[i]``: ``y_i (f[i] + b) >= 1`` (lazy Constraint).
    * ``objective``: ``ww/2``, minimised.

    @parameters@

    References
    ----------
    N. Cristianini, J. Shawe-Taylor, *An Introduction to Support Vector Machines and Other
    Kernel-based Learning Methods*, Cambridge University Press (2000), ch. 6; SPEC.md
    section 1; the catalogue page ``formulations/hard_primal.md``.
    """
    return build_primal(X, y, "hard", kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                        kernel_rank=kernel_rank, block=block)


@_document_parameters
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
    * ``quad``: ``alpha'G(K)alpha`` (lazy Expression): dense, or in the factor form
      ``sum_k z_k^2``.
    * ``R``, ``z[k]``, ``Fv[k]``, ``factor[k]`` (factor form only): the factor components,
      ``z = F alpha`` with ``F = L'D_y`` and ``K = L L'``, the lazy images ``(F alpha)_k`` and
      the rows ``z[k] = Fv[k]``.
    * ``balance``: ``sum_i y_i alpha_i = 0``.
    * ``objective``: ``sum(alpha) - quad/2``, maximised.

    @parameters@

    References
    ----------
    N. Cristianini, J. Shawe-Taylor, *An Introduction to Support Vector Machines and Other
    Kernel-based Learning Methods*, Cambridge University Press (2000), ch. 6; SPEC.md
    section 1; the catalogue page ``formulations/hard_dual.md``.
    """
    return build_dual(X, y, "hard", kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                      kernel_rank=kernel_rank,
                      quad_form=quad_form, max_vars=max_vars, block=block)


@_document_parameters
def soft_l1_primal(X, y, *, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                   kernel_rank=None, block=None):
    r"""1-norm soft-margin SVM, primal form (convex QP).

    .. math::

        \min_{w, b, \xi} \; \tfrac12 \|w\|^2 + C \sum_i \xi_i
        \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1 - \xi_i, \; \xi_i \ge 0

    Problem class: QP. With a non-linear kernel the model is built in the factor form
    ``K = L L'`` (``L`` of full column rank, pivoted Cholesky): ``w`` has the coordinates
    ``v = L' beta`` in the basis ``L`` spans, ``||w||^2 = ||v||^2``, ``w.phi(x_i) = (L v)_i``;
    well posed for every QP backend even when K is singular.

    Components:

    * ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``C``: the penalty, a mutable Param (change it and re-solve).
    * ``J``, ``w[j]`` (linear kernel): the features and the normal vector; ``R``, ``v[k]``
      (other kernels): the factor components and the coordinates of w in that basis.
    * ``b``: the bias.
    * ``xi[i]``: the slacks, ``>= 0`` (a bound).
    * ``f[i]``: the decision value without bias, ``w.x_i`` or ``(L v)_i`` (lazy Expression).
    * ``ww``: ``||w||^2`` (``||v||^2``; lazy Expression).
    * ``margin[i]``: ``y_i (f[i] + b) + xi[i] >= 1`` (lazy Constraint).
    * ``objective``: ``ww/2 + C sum_i xi[i]``, minimised.

    @parameters@

    References
    ----------
    N. Cristianini, J. Shawe-Taylor, *An Introduction to Support Vector Machines and Other
    Kernel-based Learning Methods*, Cambridge University Press (2000), ch. 6; SPEC.md
    section 1; the catalogue page ``formulations/soft_l1_primal.md``.
    """
    return build_primal(X, y, "soft_l1", C=C, kernel=kernel, gamma=gamma, degree=degree,
                        coef0=coef0, kernel_rank=kernel_rank, block=block)


@_document_parameters
def soft_l1_dual(X, y, *, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                 kernel_rank=None, quad_form="auto", max_vars=None, block=None):
    r"""1-norm soft-margin SVM, dual form (convex QP).

    .. math::

        \max_{\alpha} \; e'\alpha - \tfrac12 \alpha' G(K) \alpha
        \quad \text{s.t.} \quad 0 \le \alpha \le C, \; y'\alpha = 0,
        \qquad G(K)_{ij} = y_i y_j K_{ij}

    Problem class: QP. The problem libsvm solves.

    Components:

    * ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``C``: the penalty, a mutable Param (change it and re-solve).
    * ``alpha[i]``: the multipliers of the margins, bounds ``[0, C]`` (a variable bound on
      the mutable ``C``).
    * ``quad``: ``alpha'G(K)alpha`` (lazy Expression): dense, or in the factor form
      ``sum_k z_k^2``.
    * ``R``, ``z[k]``, ``Fv[k]``, ``factor[k]`` (factor form only): the factor components,
      ``z = F alpha`` with ``F = L'D_y`` and ``K = L L'``, the lazy images ``(F alpha)_k`` and
      the rows ``z[k] = Fv[k]``.
    * ``balance``: ``sum_i y_i alpha_i = 0``.
    * ``objective``: ``sum(alpha) - quad/2``, maximised.

    @parameters@

    References
    ----------
    N. Cristianini, J. Shawe-Taylor, *An Introduction to Support Vector Machines and Other
    Kernel-based Learning Methods*, Cambridge University Press (2000), ch. 6; SPEC.md
    section 1; the catalogue page ``formulations/soft_l1_dual.md``.
    """
    return build_dual(X, y, "soft_l1", C=C, kernel=kernel, gamma=gamma, degree=degree,
                      coef0=coef0, kernel_rank=kernel_rank, quad_form=quad_form,
                      max_vars=max_vars, block=block)


@_document_parameters
def soft_l2_primal(X, y, *, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                   kernel_rank=None, block=None):
    r"""2-norm soft-margin SVM, primal form (convex QP).

    .. math::

        \min_{w, b, \xi} \; \tfrac12 \|w\|^2 + \tfrac{C}{2} \sum_i \xi_i^2
        \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1 - \xi_i

    Problem class: QP. With a non-linear kernel the model is built in the factor form
    ``K = L L'`` (``L`` of full column rank, pivoted Cholesky): ``w`` has the coordinates
    ``v = L' beta`` in the basis ``L`` spans, ``||w||^2 = ||v||^2``, ``w.phi(x_i) = (L v)_i``;
    well posed for every QP backend even when K is singular.
    ``xi`` needs no sign constraint: a negative slack never pays.

    Components:

    * ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``C``: the penalty, a mutable Param (change it and re-solve).
    * ``J``, ``w[j]`` (linear kernel): the features and the normal vector; ``R``, ``v[k]``
      (other kernels): the factor components and the coordinates of w in that basis.
    * ``b``: the bias.
    * ``xi[i]`` (free): the slacks.
    * ``f[i]``: the decision value without bias, ``w.x_i`` or ``(L v)_i`` (lazy Expression).
    * ``ww``: ``||w||^2`` (``||v||^2``; lazy Expression).
    * ``margin[i]``: ``y_i (f[i] + b) + xi[i] >= 1`` (lazy Constraint).
    * ``xi_sq``: ``sum_i xi_i^2`` (lazy Expression).
    * ``objective``: ``ww/2 + C/2 xi_sq``, minimised.

    @parameters@

    References
    ----------
    N. Cristianini, J. Shawe-Taylor, *An Introduction to Support Vector Machines and Other
    Kernel-based Learning Methods*, Cambridge University Press (2000), ch. 6; SPEC.md
    section 1; the catalogue page ``formulations/soft_l2_primal.md``.
    """
    return build_primal(X, y, "soft_l2", C=C, kernel=kernel, gamma=gamma, degree=degree,
                        coef0=coef0, kernel_rank=kernel_rank, block=block)


@_document_parameters
def soft_l2_dual(X, y, *, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                 kernel_rank=None, quad_form="auto", max_vars=None, block=None):
    r"""2-norm soft-margin SVM, dual form (convex QP).

    .. math::

        \max_{\alpha} \; e'\alpha - \tfrac12 \alpha' G(K + I/C) \alpha
        \quad \text{s.t.} \quad \alpha \ge 0, \; y'\alpha = 0,
        \qquad G(K)_{ij} = y_i y_j K_{ij}

    Problem class: QP. A hard margin with the kernel ``K + I/C``.

    Components:

    * ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``C``: the penalty, a mutable Param (change it and re-solve).
    * ``alpha[i]``: the multipliers of the margins, bounds ``[0, C sqrt(l)]`` (the upper
      bound is implied by optimality and never active: a bounded domain for a global solver).
    * ``quad``: ``alpha'G(K)alpha`` (lazy Expression): dense, or in the factor form
      ``sum_k z_k^2``.
    * ``R``, ``z[k]``, ``Fv[k]``, ``factor[k]`` (factor form only): the factor components,
      ``z = F alpha`` with ``F = L'D_y`` and ``K = L L'``, the lazy images ``(F alpha)_k`` and
      the rows ``z[k] = Fv[k]``.
    * ``balance``: ``sum_i y_i alpha_i = 0``.
    * ``ridge``: ``alpha'alpha`` (lazy Expression), the ``I/C`` part.
    * ``objective``: ``sum(alpha) - quad/2 - ridge/(2C)``, maximised.

    @parameters@

    References
    ----------
    N. Cristianini, J. Shawe-Taylor, *An Introduction to Support Vector Machines and Other
    Kernel-based Learning Methods*, Cambridge University Press (2000), ch. 6; SPEC.md
    section 1; the catalogue page ``formulations/soft_l2_dual.md``.
    """
    return build_dual(X, y, "soft_l2", C=C, kernel=kernel, gamma=gamma, degree=degree,
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
    if svm.formulation == "hard_dual" and not proves_unbounded and not separable(svm):
        raise not_separable(svm, "unbounded", "checked by LP before solving")


def licence_hint(svm) -> str:
    """What fits Gurobi's size-limited licence when the factor form does not."""
    l = svm.data.n_points
    if svm.facts.get("quad_form") == "factor" and l <= 200:
        return (f" The dense form of this dual has {l} variables and fits: build it with "
                "quad_form='dense' (svm_models.fit with solver='gurobi' picks it itself).")
    return ""


def explain_failure(svm, status: str, message: str):
    """The error for a failed hard margin: NotSeparableError when the LP says so; a solver
    that calls separable data infeasible is in numerical trouble (PIQP and Ipopt on 2-5
    points of size 1e-6, where the margin needs |w| ~ 1e6; found by fuzzing)."""
    if not svm.formulation.startswith("hard"):
        return None
    if not separable(svm):
        return not_separable(svm, status, message)
    if status in (Status.infeasible, Status.infeasible_or_unbounded):   # (a str enum)
        return SolveFailedError(
            f"the solver reported the {svm.formulation} model infeasible ({message}), but the "
            "data are separable (an exact LP separates them): numerical trouble, e.g. badly "
            "scaled data needing a huge w; standardise the features or try another backend",
            Status.numerical_error)
    return None


# ---------------------------------------------------------------------------------------
# Reading a solution


def extract(block, ctx) -> Solution:
    """Solution of a solved classic-SVM block (any of the six formulations)."""
    svm = block._svm
    family, form = svm.formulation.rsplit("_", 1)
    data = svm.data
    y, l = data.y, data.n_points
    C = float(pyo.value(block.C)) if family != "hard" else None
    extra: dict = {}
    x = values_of(svm.record.var_datas())
    if ctx.objective is not None:
        objective = ctx.objective
    elif ctx.verified:
        objective = svm.record.objective_value(x)  # numpy: never materialises lazy l^2 terms
    else:
        objective = _model_objective(block)
    linear_w = None
    diagnosed = None   # (diagnostics, ||w||^2) of the point returned, when already computed
    if form == "dual":
        alpha = np.clip(var_array(block.alpha), 0.0, None if C is None or family != "soft_l1" else C)
        thr = support_threshold(alpha_scale(alpha, C if family == "soft_l1" else None), ctx.tol)
        polished = False
        if ctx.verified:  # never polish away a user's own constraint
            alpha, polished = polish_dual(svm, family, alpha, C, thr)
        extra["polished"] = polished
        coef = y * alpha
        f = svm.kernel_times(coef)   # K(y*alpha): the one kernel product of a dual
        b = bias_from_kkt(family, alpha, y, f, C, thr)
        extra["b_source"] = "kkt"
        if not ctx.verified:
            # the model was changed: b from the KKT conditions only if alpha satisfies the
            # SVM's own optimality conditions (then it is this SVM's solution); else b is the
            # multiplier of y'alpha = 0, as long as that constraint is the builder's
            res = max(dual_kkt_residual(family, alpha, y, f, b, C if C else np.inf, thr),
                      abs(float(y @ alpha)) / max(1.0, float(alpha.sum())))
            extra["svm_kkt_residual"] = res
            if res <= KKT_ACCEPT:
                extra["b_source"] = "kkt (the solution satisfies the SVM's optimality conditions)"
            else:
                bal = block.component("balance")     # None when the user deleted it
                kept = bal is not None and bal is svm.record.components.get("balance")
                b = ctx.dual(bal) if kept and unchanged(svm.record, bal) else None
                if b is None:
                    b = float("nan")
                    extra["b_source"] = ("not available: the model was changed, the solution "
                                         "is not the SVM's, and b (the multiplier of balance, "
                                         "y'alpha = 0) is not reported or balance was changed")
                else:
                    extra["b_source"] = "multiplier of balance"
        if svm.kernel.is_linear:
            linear_w = data.X.T @ coef
        alpha_source = "dual variables"
        if family == "soft_l2":
            xi = alpha / C
        elif family == "soft_l1":
            xi = np.maximum(0.0, 1.0 - y * (f + b))
        else:
            xi = np.zeros(l)
    else:
        cvar = block.w if svm.kernel.is_linear else block.v
        cvals = var_array(cvar)
        b = float(block.b.value)
        M = data.X if svm.kernel.is_linear else svm.L
        fdec = M @ cvals
        if svm.kernel.is_linear:
            linear_w = cvals
        xi = var_array(block.xi) if family != "hard" else np.zeros(l)
        if family == "soft_l1":
            xi = np.maximum(xi, 0.0)
        mult = _margin_duals(svm, ctx)
        if mult is not None:
            alpha, alpha_source = mult, "multipliers"
        else:
            residual = y * (fdec + b) - 1.0 + xi
            active = residual <= ACTIVE_MARGIN_REL * max(1.0, float(np.abs(fdec).max(initial=0.0)))
            thr0 = support_threshold(C if C else 1.0, ctx.tol)
            alpha = recover_alpha(y, family, M.T, cvals, active, xi, C, thr0)
            alpha_source = "kkt_least_squares"
            if not ctx.verified:
                # accepted only if it satisfies the SVM's stationarity and balance conditions
                res = max(float(np.linalg.norm(cvals - M.T @ (y * alpha)))
                          / max(1.0, float(np.linalg.norm(cvals))),
                          abs(float(y @ alpha)) / max(1.0, float(alpha.sum())))
                extra["svm_kkt_residual"] = res
                if res > KKT_ACCEPT:
                    alpha = np.full(l, np.nan)
                    alpha_source = ("not available: the model was changed, the backend reports "
                                    "no multipliers, and the SVM's KKT conditions do not hold")
        alpha = np.clip(alpha, 0.0, None if C is None or family != "soft_l1" else C)
        thr = support_threshold(alpha_scale(alpha, C if family == "soft_l1" else None), ctx.tol)
        polished = False
        if ctx.verified and alpha_source == "multipliers":
            # multipliers carry the solver's dual accuracy (HiGHS: ~1e-5 with its QP
            # regularisation): solved exactly on their active set, kept if the KKT residual drops
            alpha, polished = polish_dual(svm, family, alpha, C, thr)
        extra["polished"] = polished
        extra["b_source"] = "solver"
        if polished:
            # the point the polished multipliers give, (w or v, b, xi) = (M'(y alpha), KKT b,
            # slacks), replaces the solver's when its certificate is no worse: HiGHS's QP
            # regularisation left w 1e-5 off on shifted data (found by fuzzing); on badly
            # scaled data the solver's own point can be the better one
            c2 = M.T @ (y * alpha)
            f2 = M @ c2
            b2 = bias_from_kkt(family, alpha, y, f2, C, thr)
            xi2 = (np.maximum(0.0, 1.0 - y * (f2 + b2)) if family == "soft_l1" else
                   alpha / C if family == "soft_l2" else np.zeros(l))
            w2 = c2 if svm.kernel.is_linear else None

            def certify(*point):
                """(worst certificate entry, diagnostics, ||w||^2) of a point."""
                out: dict = {}
                ww = _diagnostics(svm, family, form, alpha, *point, out)
                return (max(abs(out["duality_gap"]), out["kkt"]["primal_infeasibility"],
                            out["kkt"]["stationarity"]), out, ww)

            theirs = certify(b, xi, C, linear_w, fdec, cvals)
            ours = certify(b2, xi2, C, w2, f2, c2)
            if ours[0] <= theirs[0]:
                cvals, fdec, b, xi, linear_w = c2, f2, b2, xi2, w2
                extra["b_source"] = extra["w_source"] = "polished multipliers (kkt)"
                diagnosed = ours[1:]
            else:
                polished = False   # alpha is polished, the solver's point (and objective) kept
                extra["w_source"] = "solver (its certificate beats the polished multipliers')"
                diagnosed = theirs[1:]
        elif ctx.verified and family == "hard":
            # the b that keeps every margin best for the solver's w (at the optimum: the
            # solver's b to its tolerance)
            b = bias_from_kkt(family, alpha, y, fdec, C, thr)
            extra["b_source"] = "kkt (the solver's w)"
    extra["alpha_source"] = alpha_source
    extra["support_threshold"] = thr
    with np.errstate(invalid="ignore"):
        support = np.flatnonzero(alpha > thr)
    dual_coef = np.where(alpha > thr, y * alpha, 0.0)
    sol_kw = dict(formulation=svm.formulation, solver=ctx.solver, status=ctx.status, w=linear_w,
                  b=float(b), alpha=alpha, dual_coef=dual_coef, xi=xi, support=support,
                  support_vectors=_support_vectors(svm, support), objective=objective,
                  kernel=svm.kernel, classes=data.classes, C=C, time=ctx.time,
                  interface=ctx.interface, path=ctx.path, extra=extra)
    ww = None
    if ctx.verified and np.all(np.isfinite(alpha)):
        if diagnosed is not None:    # computed while choosing the primal's point
            sol_kw.update(diagnosed[0])
            ww = diagnosed[1]
        else:
            ww = _diagnostics(svm, family, form, alpha, b, xi, C, linear_w,
                              fdec if form == "primal" else None,
                              cvals if form == "primal" else None, sol_kw)
        if polished:   # the objective at the point returned (the model's objective, verified)
            # (the primal: only when the point came from the polished multipliers)
            sol_kw["objective"] = sol_kw[f"{form}_objective"]
        if family == "hard" and sol_kw["kkt"]["primal_infeasibility"] > HARD_MARGIN_VIOLATION:
            err = explain_failure(svm, "optimal", "but the margins are violated")
            if err is not None:  # some interfaces report "optimal" for the unbounded dual
                raise err
    else:
        extra["diagnostics"] = ("not computed: the model solved is not the formulation "
                                f"({ctx.reason})" if not ctx.verified else
                                "not computed: alpha is not available")
    if ww is None:
        ww = float(linear_w @ linear_w) if linear_w is not None else (
            float(cvals @ cvals) if form == "primal" else None)
    sol_kw["margin"] = (1.0 / np.sqrt(ww)) if ww else None
    if "kernel_rank" in svm.facts:
        extra["kernel_rank"] = _low_rank_report(svm.facts["kernel_rank"], alpha)
    return Solution(**sol_kw)


def _low_rank_report(facts: dict, alpha: np.ndarray) -> dict:
    """The kernel_rank report with the bound on the optimum: with ``E = K - L L'`` (PSD,
    ``lambda_max(E) <= trace(E)``), every dual objective of the low-rank model is that of
    the exact kernel plus ``(y a)'E(y a)/2 >= 0``, so ``0 <= optimum(L L') - optimum(K)
    <= trace(E) ||alpha||^2 / 2`` at the low-rank optimum alpha (the primal optimum is the
    dual's)."""
    bound = 0.5 * facts["trace_error"] * float(alpha @ alpha) if np.all(np.isfinite(alpha)) \
        else float("nan")
    return {**facts, "objective_bound": bound}


def _margin_duals(svm, ctx) -> np.ndarray | None:
    """The multipliers of the margin rows as an array (None unless the backend gave all):
    read as one run of rows where the duals allow it (the fast path), else row by row."""
    datas = svm.record.rows[0].datas
    of = getattr(ctx.duals, "of", None)
    mult = of(datas) if of is not None else None
    if mult is not None:
        return mult
    margin = svm.block.margin
    mult = [ctx.dual(margin[i]) for i in range(len(datas))]
    return np.array(mult) if all(m is not None for m in mult) else None


def _model_objective(block) -> float:
    """The value of the active objective of the model the block lives in."""
    model = block.model()
    objs = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    return float(pyo.value(objs[0] if len(objs) == 1 else block.objective))


def _support_vectors(svm, support):
    if svm.kernel.name == "precomputed":
        return np.zeros((support.size, 0))
    return svm.data.X[support]


def _diagnostics(svm, family, form, alpha, b, xi, C, linear_w, fdec, cvals, out) -> float:
    """Primal and dual objectives, duality gap and KKT residuals of the formulation at the
    recovered (alpha, w, b, xi); returns ``||w||^2``."""
    y = svm.data.y
    Ka = svm.kernel_times(y * alpha)
    aGa = float((y * alpha) @ Ka)
    dual_obj = float(alpha.sum() - 0.5 * aGa - (0.5 / C * alpha @ alpha if family == "soft_l2" else 0.0))
    if linear_w is not None:
        ww = float(linear_w @ linear_w)
        fvals = svm.data.X @ linear_w
    elif form == "primal":
        ww = float(cvals @ cvals)
        fvals = fdec
    else:
        ww = aGa
        fvals = Ka
    penalty = {"hard": 0.0, "soft_l1": (C or 0.0) * float(np.sum(xi)),
               "soft_l2": 0.5 * (C or 0.0) * float(xi @ xi)}[family]
    primal_obj = 0.5 * ww + penalty
    viol = np.maximum(0.0, 1.0 - xi - y * (fvals + b))
    kkt = {
        "primal_infeasibility": float(viol.max(initial=0.0)),
        "balance": float(abs(y @ alpha)),
        "complementarity": float(np.max(np.abs(alpha * (y * (fvals + b) - 1.0 + xi)), initial=0.0)),
    }
    if form == "primal":
        # stationarity: w = X'(y alpha) (linear), v = L'(y alpha) (factor form)
        M = svm.data.X if linear_w is not None else svm.L
        kkt["stationarity"] = float(np.linalg.norm(cvals - M.T @ (y * alpha))
                                    / max(1.0, np.linalg.norm(cvals)))
    out.update(primal_objective=primal_obj, dual_objective=dual_obj,
               duality_gap=(primal_obj - dual_obj) / max(1.0, abs(primal_obj)), kkt=kkt)
    return ww

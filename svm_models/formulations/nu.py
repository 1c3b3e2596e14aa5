r"""The nu-SVM (Schoelkopf, Smola, Williamson & Bartlett 2000; Chang & Lin 2001): the soft
margin parametrised by ``nu`` instead of C (``formulations/nu.md``).

=========  ===========================================================  ===========================
name       problem                                                      constraints
=========  ===========================================================  ===========================
nu_primal  min 1/2 ||w||^2 - nu rho + (1/l) sum xi_i                    y_i (w.x_i + b) >= rho - xi_i,
                                                                        xi >= 0, rho >= 0
nu_dual    min 1/2 a'G(K)a                                              0 <= a_i <= 1/l, y'a = 0,
                                                                        e'a >= nu
=========  ===========================================================  ===========================

``nu`` bounds the fraction of margin errors from above and the fraction of support vectors
from below; it is feasible for ``0 < nu <= nu_max = 2 min(l_+, l_-) / l``. Below a data-
dependent ``nu_min`` the reduced convex hulls of the classes meet: the optimum is ``w = 0``,
``rho = 0``, no classifier (a ParameterError says so). With ``rho > 0``, ``(w, b) / rho`` is
the 1-norm soft margin's solution at ``C = 1 / (l rho)``: scikit-learn's ``NuSVC`` returns
that rescaled classifier, whose decision function is this one's divided by ``rho`` (same
predictions, same support set). Both forms are convex QPs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from ..errors import InfeasibleError, ParameterError
from ..model.built import BuiltSVM
from ..model.forms import Margin, QuadBlock
from ..model.lazy import LazyObjective, LazyScalarConstraint, linear_form
from ..model.pieces import (
    Layout,
    add_balance,
    add_margin,
    add_normal,
    add_points,
    add_signed_kernel_form,
    choose_form,
    dense_rows,
    gram_if_needed,
    new_block,
    prepare,
    sum_of_squares,
)
from ..model.record import LinearTerm, QuadTerm, Record, RowGroup, Scale, members
from ..model.scaling import ScaleRule
from ..postprocess import (
    _kernel_diagonal,
    cut_alpha,
    levels,
    margin_certificate,
    margin_multipliers,
    polish_dual,
    recover_alpha,
    var_array,
)
from ..solution import Solution
from ..tolerances import alpha_scale, certificate_tolerance, support_threshold
from .base import Formulation, register
from .params import Param, document_parameters


#: the support rules tried: the threshold of every family, then 10x, 100x, ... coarser
CANDIDATE_CUTS = 4
#: a certificate this small is exact: no coarser candidate is tried
EXACT = 1e-13
#: the polish's rounds (an active set changed, solved again)
POLISH_ROUNDS = 25
#: ``||w||^2`` below this fraction of ``nu^2`` times the mean of the kernel's diagonal is
#: ``w = 0``: the optimum of a nu below nu_min (the reduced convex hulls of the classes meet)
NO_MARGIN = 1e-9


def _check_nu(value, given=None) -> float:
    """``nu`` as a float in (0, 1], or ParameterError."""
    try:
        nu = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"nu must be a number in (0, 1]; got {value!r}") from None
    if isinstance(value, bool) or not (0.0 < nu <= 1.0):
        raise ParameterError(f"nu must be a number in (0, 1] (the fraction of margin errors it "
                             f"bounds); got {value!r}")
    return nu


NU = Param("nu", "the nu-SVM's nu: at most this fraction of margin errors, at least this "
           "fraction of support vectors", "a number in (0, 1] (at most 2 min(l_+, l_-) / l)",
           _check_nu, float)


@dataclass(frozen=True)
class NuDetails:
    """What the nu-SVM learns besides w and b (``formulations/nu.md``).

    rho : the margin's width: ``y_i f(x_i) = rho`` on the free support vectors (> 0)
    nu : the nu the problem was solved with
    nu_max : ``2 min(l_+, l_-) / l``, the largest feasible nu for these data
    C_equivalent : ``1 / (l rho)``: the 1-norm soft margin at this C has the classifier
        ``(w, b) / rho`` (scikit-learn's ``NuSVC`` reports that one)
    """

    rho: float
    nu: float
    nu_max: float
    C_equivalent: float


@dataclass(frozen=True)
class NuFacts:
    """What :func:`extract` reads of the build: the form, and ``nu_max``."""

    form: str
    nu_max: float


def nu_max(y: np.ndarray) -> float:
    """``2 min(l_+, l_-) / l``: the largest nu for which the nu-SVM is feasible."""
    return 2.0 * min(int(np.sum(y > 0)), int(np.sum(y < 0))) / len(y)


def _start(X, y, name, nu, kernel, gamma, degree, coef0, block):
    """The validated data, the kernel, the block with ``I``, ``y`` and the mutable ``nu``;
    ParameterError for a nu above ``nu_max`` (an empty feasible set)."""
    nu = _check_nu(nu)
    data, kern, K = prepare(X, y, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                            need_gram=False)
    top = nu_max(data.y)
    if nu > top:
        small = min(int(np.sum(data.y > 0)), int(np.sum(data.y < 0)))
        raise ParameterError(
            f"nu={nu:g} is infeasible for these data: the smaller class has {small} of the "
            f"{data.n_points} points, so nu can be at most 2 * {small} / {data.n_points} = "
            f"{top:.6g} (nu bounds the fraction of margin errors, and at most the smaller "
            "class's points can be errors on both sides); choose a smaller nu")
    b = new_block(block, name)
    add_points(b, data)
    b.nu = pyo.Param(initialize=nu, mutable=True, within=pyo.PositiveReals,
                     doc="nu in (0, nu_max]: bounds the fraction of margin errors from above "
                         "and of support vectors from below (mutable)")
    return data, kern, K, b, top


def _total_relation(alpha, nu):
    return linear_form(np.ones(len(alpha)), members(alpha)) >= nu


def _half(quad):
    return 0.5 * quad


def _primal_objective(ww, nu, rho, xi, l):
    return 0.5 * ww - nu * rho + linear_form(np.full(l, 1.0 / l), members(xi))


@document_parameters(nu="""    nu : float, default 0.5
        In (0, nu_max], ``nu_max = 2 min(l_+, l_-) / l``: at most this fraction of the points
        are margin errors, at least this fraction are support vectors (a mutable Param).""")
def nu_dual(X, y, *, nu=0.5, kernel="linear", gamma="scale", degree=3, coef0=0.0, block=None):
    r"""The nu-SVM, dual form (convex QP).

    .. math::

        \min_{\alpha} \; \tfrac12 \alpha^\top G(K) \alpha \quad \text{s.t.} \quad
        0 \le \alpha_i \le \tfrac1l, \quad y^\top \alpha = 0, \quad e^\top \alpha \ge \nu

    Problem class: QP. Components: ``I``, ``y``, ``nu`` (mutable), ``alpha`` (bounds
    ``[0, 1/l]``), ``quad`` (``alpha' G(K) alpha``, lazy; in the factor form ``R``, ``z``,
    ``Fv``, ``factor``), ``balance`` (``y'alpha = 0``), ``total`` (``sum_i alpha_i >= nu``),
    ``objective`` (``quad / 2``, minimised). Exact scaling: ``alpha = beta / l``, the
    objective times ``l^2``, so every backend sees a problem of order one.

    @parameters@

    References
    ----------
    B. Schoelkopf, A. Smola, R. Williamson, P. Bartlett, "New support vector algorithms",
    Neural Computation 12 (2000) 1207-1245; C.-C. Chang, C.-J. Lin, "Training nu-support
    vector classifiers: theory and algorithms", Neural Computation 13 (2001) 2119-2147; the
    catalogue pages ``formulations/nu.md`` and ``formulations/nu_dual.md``.
    """
    data, kern, K, b, top = _start(X, y, "nu_dual", nu, kernel, gamma, degree, coef0, block)
    l = data.n_points
    form = choose_form("auto", kern, l, data.n_features)
    if form == "factor" or kern.name == "precomputed":
        K = gram_if_needed(kern, data, K, form)
    b.alpha = pyo.Var(b.I, bounds=(0.0, 1.0 / l), initialize=0.0,
                      doc="dual variable alpha_i in [0, 1/l] (Lagrange multiplier of point "
                          "i's margin)")
    layout = Layout()
    apos = layout.add(b.alpha)
    qf, K, L, _ = add_signed_kernel_form(b, layout, b.alpha, data, kern, K, form)
    b.total = LazyScalarConstraint(recipe=(_total_relation, (b.alpha, b.nu)),
                                   doc="total: sum_i alpha_i >= nu")
    total = RowGroup(b.total, [b.total], dense_rows(1, layout.n, [(apos, np.ones((1, l)), 1.0)]),
                     np.ones(1), np.full(1, np.inf), scale=Scale(1.0, "nu"))
    rows = qf.rows + [add_balance(b, layout, b.alpha, data.y), total]
    b.objective = LazyObjective(recipe=(_half, (b.quad,)), sense=pyo.minimize,
                                doc="1/2 alpha' G(K) alpha")
    exponents = np.full(layout.n, -1.0)   # alpha = beta / l, and z = F alpha with it
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=1,
                    quadratic=[QuadTerm(q, Scale(0.5)) for q in qf.blocks], rows=rows,
                    problem_class="QP",
                    scaling=ScaleRule(base=float(l), exponents=exponents, objective=2.0)).seal()
    b._svm = BuiltSVM(formulation="nu_dual", data=data, kernel=kern, block=b, record=record,
                      K=K, L=L, facts=NuFacts("dual", top))
    return b


@document_parameters(nu="""    nu : float, default 0.5
        In (0, nu_max], ``nu_max = 2 min(l_+, l_-) / l`` (a mutable Param).""")
def nu_primal(X, y, *, nu=0.5, kernel="linear", gamma="scale", degree=3, coef0=0.0,
              block=None):
    r"""The nu-SVM, primal form (convex QP).

    .. math::

        \min_{w, b, \xi, \rho} \; \tfrac12 \|w\|^2 - \nu \rho + \tfrac1l \sum_i \xi_i
        \quad \text{s.t.} \quad y_i (w \cdot \phi(x_i) + b) \ge \rho - \xi_i, \quad
        \xi \ge 0, \quad \rho \ge 0

    Problem class: QP. Components: ``I``, ``y``, ``nu`` (mutable), ``J`` and ``w[j]``
    (linear kernel) or ``R`` and ``v[k]`` (other kernels: the coordinates of w in the basis
    of a factor ``K = L L'``), ``b``, ``rho`` (the margin's width, ``>= 0``), ``xi`` (slacks,
    ``>= 0``), ``f`` (``f[i] = w.phi(x_i)``, lazy), ``margin`` (``y_i (f[i] + b) + xi[i] - rho
    >= 0``), ``ww`` (``||w||^2``), ``objective`` (``ww/2 - nu rho + sum_i xi[i] / l``,
    minimised).

    @parameters@

    References
    ----------
    B. Schoelkopf, A. Smola, R. Williamson, P. Bartlett, "New support vector algorithms",
    Neural Computation 12 (2000) 1207-1245; the catalogue pages ``formulations/nu.md`` and
    ``formulations/nu_primal.md``.
    """
    data, kern, K, b, top = _start(X, y, "nu_primal", nu, kernel, gamma, degree, coef0, block)
    l = data.n_points
    coef, M, L, K = add_normal(b, data, kern, K)
    layout = Layout()
    cpos = layout.add(coef)
    b.b = pyo.Var(initialize=0.0, doc="bias b")
    layout.add(b.b)
    b.rho = pyo.Var(bounds=(0.0, None), initialize=0.0, doc="the margin's width rho >= 0")
    rpos = layout.add(b.rho)
    b.xi = pyo.Var(b.I, bounds=(0.0, None), initialize=0.0, doc="slack xi_i of point i's margin")
    xpos = layout.add(b.xi)
    fdoc = "f_i = w.x_i" if kern.is_linear else "f_i = (L v)_i = w.phi(x_i)"
    rows = [add_margin(b, layout, ("f", fdoc), M, coef.local_name, data.y, b.xi, level=b.rho)]
    sum_of_squares(b, "ww", coef, doc="||w||^2")
    b.objective = LazyObjective(recipe=(_primal_objective, (b.ww, b.nu, b.rho, b.xi, l)),
                                sense=pyo.minimize, doc="1/2 ||w||^2 - nu rho + 1/l sum_i xi_i")
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=1,
                    quadratic=[QuadTerm(QuadBlock(cpos, diag=np.ones(len(cpos))), Scale(0.5))],
                    linear=[LinearTerm(rpos, 1.0, Scale(-1.0, "nu")),
                            LinearTerm(xpos, 1.0 / l)],
                    rows=rows, problem_class="QP").seal()
    b._svm = BuiltSVM(formulation="nu_primal", data=data, kernel=kern, block=b, record=record,
                      K=K, L=L, facts=NuFacts("primal", top))
    return b


# ---------------------------------------------------------------------------------------
# Reading a solution: alpha, made exact on its active set; rho and b; the certificate


#: the nu-SVM's margin: a box ``alpha_i <= 1/l`` and a level ``rho`` of its own, priced
#: ``-nu rho`` (the row ``e'alpha = nu``); the library's readers (``svm_models.postprocess``)
#: read rho and b, polish alpha and certify the classifier for every declared margin
MARGIN = Margin("nu", box=True, ridge=False, level=True)


def certificate(svm, alpha: np.ndarray, nu: float, thr: float | None = None) -> dict:
    """The certificate of exactly the classifier ``f(x) = sum_i y_i alpha_i k(x_i, x) + b``
    with ``rho`` and ``b`` read from the KKT conditions at alpha
    (:func:`~svm_models.postprocess.levels`), and the dual point alpha
    (:func:`~svm_models.postprocess.margin_certificate`: ``primal`` at ``(w, b, rho)`` with
    its best slacks, ``dual`` ``-alpha'G alpha / 2``, ``gap``, ``balance``, ``total`` the
    shortfall of ``e'alpha >= nu`` relative to nu); ``rho`` and ``b`` added."""
    y, l = svm.data.y, svm.data.n_points
    thr = support_threshold(alpha_scale(alpha)) if thr is None else thr
    b, rho = levels(MARGIN, alpha, y, svm.kernel_times(y * alpha), 1.0 / l, thr)
    out = margin_certificate(svm, MARGIN, alpha, b, 1.0 / l, rho=rho, total=nu)
    out.update(rho=rho, b=b)
    return out


def _too_small(nu: float, top: float) -> ParameterError:
    return ParameterError(
        f"nu={nu:g} is too small for these data: the classes' reduced convex hulls overlap, "
        "so the optimum is w = 0 and rho = 0 -- no margin, no classifier. Choose a larger nu "
        f"(up to nu_max = {top:.6g}: nu bounds the fraction of margin errors, which these "
        "data cannot keep this low)")


def extract(block, ctx) -> Solution:
    """The Solution of a solved nu-SVM block, either form: alpha (the dual's variables, or
    the primal's margin multipliers -- recovered from the KKT conditions where the backend
    gives none), cut at the support rule (and at coarser ones) and made exact on its active
    set (:func:`polish`); of these candidates the one with the best certificate; rho and b
    from the KKT conditions
    (:func:`levels`); the classifier ``f(x) = sum_i y_i alpha_i k(x_i, x) + b`` and its
    certificate (:func:`certificate`), which must reach the tolerance."""
    svm = block._svm
    data, facts = svm.data, svm.facts
    y, l = data.y, data.n_points
    nu, upper = float(pyo.value(block.nu)), 1.0 / l
    extra: dict = {}
    raw = np.nan_to_num(var_array(block.alpha) if facts.form == "dual"
                        else _primal_alpha(svm, block, ctx, extra))
    # candidates: alpha cut at the support rule and at coarser ones (an interior-point
    # answer near nu_min, where the free system is ill-conditioned, has zeros of 1e-5), each
    # made exact on its active set where the model is the formulation; the best certified
    thr = support_threshold(alpha_scale(raw), ctx.tol)
    best = None
    for t in thr * 10.0 ** np.arange(CANDIDATE_CUTS):
        if best is not None and best[2]["worst"] <= EXACT:
            break
        cut = cut_alpha(raw, t, upper)
        for name, a in [(f"alpha cut at {t:.2g}", cut),
                        (f"polished at {t:.2g}", _polished(svm, cut, nu, t)
                         if ctx.verified else None)]:
            if a is None:
                continue
            cert = certificate(svm, a, nu)
            if best is None or cert["worst"] < best[2]["worst"]:
                best = (name, a, cert)
    name, alpha, cert = best
    extra["polished"] = name.startswith("polished")
    # w = 0 (to the solver's tolerance, against the scale of the kernel and of nu): the
    # reduced convex hulls meet, no classifier
    if not cert["ww"] > NO_MARGIN * nu * nu * float(np.mean(_kernel_diagonal(svm, np.arange(l)))) \
            or not cert["rho"] > 0:
        raise _too_small(nu, facts.nu_max)
    accept = certificate_tolerance(ctx.certify_tol if ctx.certify_tol is not None else ctx.tol)
    extra["certificate"] = {"classifier": name,
                            "worst": cert["worst"], "accept": accept,
                            "certified": cert["worst"] <= accept}
    support = np.flatnonzero(alpha)
    rho, b = cert["rho"], cert["b"]
    w = data.X.T @ (y * alpha) if svm.kernel.is_linear else None
    sv = data.X[support] if svm.kernel.name != "precomputed" else np.zeros((support.size, 0))
    details = NuDetails(rho=rho, nu=nu, nu_max=facts.nu_max, C_equivalent=1.0 / (l * rho))
    kkt = {"balance": cert["balance"], "total": cert["total"], "primal_infeasibility": 0.0}
    return Solution(formulation=svm.formulation, solver=ctx.solver, status=ctx.status, w=w,
                    b=b, alpha=alpha, dual_coef=y * alpha, xi=cert["slacks"], support=support,
                    support_vectors=sv,
                    objective=-cert["dual"] if facts.form == "dual" else cert["primal"],
                    kernel=svm.kernel, classes=data.classes, primal_objective=cert["primal"],
                    dual_objective=cert["dual"], duality_gap=cert["gap"], kkt=kkt,
                    margin=rho / np.sqrt(cert["ww"]), C=None, details=details, time=ctx.time,
                    interface=ctx.interface, path=ctx.path, extra=extra)


def _polished(svm, alpha: np.ndarray, nu: float, thr: float) -> np.ndarray | None:
    """alpha made exact on its active set (the library's polish, judged here by the
    certificate); None when the active set does not settle."""
    out, settled = polish_dual(svm, MARGIN, alpha, 1.0 / svm.data.n_points, thr, POLISH_ROUNDS,
                               judge=False, total=nu)
    return out if settled else None


def _primal_alpha(svm, block, ctx, extra: dict) -> np.ndarray:
    """The primal's alpha: the multipliers of ``margin``, or -- a backend without duals --
    from the KKT conditions at the solved ``(w, b, rho)`` (``alpha_i = 1/l`` where
    ``xi_i > 0``, stationarity ``w = sum_i alpha_i y_i phi(x_i)`` on the points on the
    margin: bounded least squares)."""
    mult = margin_multipliers(svm, ctx, extra) if ctx.duals is not None else None
    if mult is not None:
        extra["alpha_source"] = "multipliers of margin"
        return mult
    extra["alpha_source"] = f"the KKT conditions ({ctx.solver} gives no duals)"
    y, l = svm.data.y, svm.data.n_points
    coef = var_array(block.w if svm.kernel.is_linear else block.v)
    M = svm.data.X if svm.kernel.is_linear else svm.L
    rho, b = float(pyo.value(block.rho)), float(pyo.value(block.b))
    xi = var_array(block.xi)
    slack = y * (M @ coef + b) + xi - rho
    scale = max(abs(rho), 1e-300)
    active = slack <= 1e-6 * scale
    return recover_alpha(y, MARGIN, M.T, coef, active, xi, 1.0 / l, 1e-6 * scale)


# ---------------------------------------------------------------------------------------
# The two formulations

ORDER = 5   # (after the classic SVMs)


class NuSVM(Formulation):
    """A nu-SVM: ``nu`` in place of C; it learns ``rho``, the margin's width."""

    family = "nu"
    problem_class = "QP"
    margin = MARGIN
    declares = (NU,)
    learned = ("rho",)
    details = NuDetails

    def extract(self, block, ctx) -> Solution:
        return extract(block, ctx)

    def explain_failure(self, svm, status, message: str):
        nu = float(pyo.value(svm.block.nu))
        if nu > svm.facts.nu_max:   # (nu changed after the build: no feasible point)
            return InfeasibleError(
                f"nu={nu:g} is infeasible for these data: at most nu_max = "
                f"{svm.facts.nu_max:.6g} (2 min(l_+, l_-) / l); set a smaller nu", status)
        return None


register(NuSVM(name="nu_dual", builder=nu_dual, form="dual", other_form="nu_primal",
               summary="nu-SVM, dual form (convex QP): nu in place of C bounds the fraction "
                       "of margin errors (scikit-learn's NuSVC)."))
register(NuSVM(name="nu_primal", builder=nu_primal, form="primal", other_form="nu_dual",
               summary="nu-SVM, primal form (convex QP): the margin's width rho is a "
                       "variable, priced -nu rho."))

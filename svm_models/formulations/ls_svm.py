"""The least-squares SVM (``ls_svm_primal``): the 2-norm soft margin with its margin rows made
equalities, a convex QP whose optimality conditions are one linear system
(``formulations/ls_svm_primal.md``).

    min  1/2 ||w||^2 + C/2 sum_i weight_i e_i^2
    s.t. y_i (w.x_i + b) + e_i = 1          (alpha_i: the multiplier of row i)

Its optimality conditions (Suykens and Vandewalle 1999): ``w = X'(y alpha)``, ``y'alpha = 0``,
``alpha_i = C weight_i e_i``; with ``G = D_y X X' D_y`` and ``D = diag(1/(C weight_i))`` the
linear system ``[[0, y'], [y, G + D]] [b; alpha] = [0; 1]``. Its Lagrangian dual, which the
certificate uses (its objective is a lower bound on the optimum at every alpha with
``y'alpha = 0`` and ``alpha_i = 0`` where ``weight_i = 0``):

    max  sum_i alpha_i - 1/2 ||X'(y alpha)||^2 - sum_i alpha_i^2 / (2 C weight_i)

Every point with a non-zero error is a support vector: the LS-SVM is not sparse. Linear
kernel only (``w`` is the normal vector in the space of the features).
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from ..model.built import BuiltSVM
from ..model.forms import QuadBlock
from ..model.pieces import add_margin, linear_primal, sum_of_squares
from ..model.record import QuadTerm, Record, Scale, members
from ..postprocess import block_objective, linear_primal_values, margin_multipliers, values_of
from ..solution import Solution
from ..tolerances import alpha_scale, support_threshold
from .base import Formulation, register
from .params import document_parameters


@document_parameters(C="""    C : float, default 1.0
        Price of the squared errors (a mutable Param).""")
def ls_svm_primal(X, y, *, C=1.0, sample_weight=None, block=None):
    r"""Least-squares SVM, primal form (convex QP with equality rows).

    .. math::

        \min_{w, b, e} \; \tfrac12 \|w\|^2 + \tfrac{C}{2} \sum_i e_i^2
        \quad \text{s.t.} \quad y_i (w \cdot x_i + b) = 1 - e_i

    Problem class: QP. Its optimality conditions are one linear system: with ``alpha`` the
    multipliers of ``margin``, ``w = sum_i alpha_i y_i x_i``, ``sum_i alpha_i y_i = 0``,
    ``alpha_i = C weight_i e_i``. Components: ``I``, ``y``, ``C`` (mutable), ``weight`` (with
    ``sample_weight``), ``J``, ``w``, ``b``, ``e`` (free: the signed error of point i),
    ``f`` (``f[i] = w.x_i``), ``margin`` (``y_i (f[i] + b) + e[i] == 1``), ``ww``
    (``||w||^2``), ``ee`` (``sum_i weight_i e_i^2``), ``objective`` (``ww/2 + C/2 ee``,
    minimised).

    @parameters@

    References
    ----------
    J. A. K. Suykens, J. Vandewalle, "Least squares support vector machine classifiers",
    Neural Processing Letters 9 (1999) 293-300; the catalogue page
    ``formulations/ls_svm_primal.md``.
    """
    data, kern, weight, b, layout, wpos = linear_primal(X, y, "ls_svm_primal", C, sample_weight, block)
    l, d = data.n_points, data.n_features
    b.e = pyo.Var(b.I, initialize=0.0, doc="error e_i = 1 - y_i (w.x_i + b) of point i (free)")
    epos = layout.add(b.e)
    rows = [add_margin(b, layout, ("f", "f_i = w.x_i"), data.X, "w", data.y, b.e,
                       equality=True)]
    wt = np.ones(l) if weight is None else weight
    sum_of_squares(b, "ww", b.w, doc="||w||^2")
    sum_of_squares(b, "ee", b.e, doc="sum_i e_i^2" if weight is None
                   else "sum_i weight_i e_i^2", diag=wt)
    b.objective = pyo.Objective(expr=0.5 * b.ww + 0.5 * b.C * b.ee, sense=pyo.minimize,
                                doc="1/2 ||w||^2 + C/2 sum_i weight[i] e[i]^2")
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=1,
                    quadratic=[QuadTerm(QuadBlock(wpos, diag=np.ones(d)), Scale(0.5)),
                               QuadTerm(QuadBlock(epos, diag=wt), Scale(0.5, "C"))],
                    rows=rows, problem_class="QP").seal()
    b._svm = BuiltSVM(formulation="ls_svm_primal", data=data, kernel=kern, block=b,
                      record=record, K=None, L=None, weight=weight)
    return b


def bias(X, y, C_i, w) -> float:
    """b of the classifier with normal vector ``w``, from the optimality conditions: the
    balance ``y'alpha = 0`` with ``alpha_i = C_i e_i`` and ``e_i = 1 - y_i (w.x_i + b)``
    (``y_i^2 = 1``) is ``sum_i C_i (y_i - w.x_i - b) = 0``: the ``C_i``-weighted mean of
    ``y_i - w.x_i``, the b that minimises the primal objective at this ``w``."""
    return float(C_i @ (y - X @ w)) / float(C_i.sum())


def dual_feasible(y, C_i, raw, thr) -> np.ndarray:
    """``raw`` (multipliers, or ``C_i e_i``) made exactly feasible for the dual, so that its
    dual objective is a lower bound on the optimum: zero where ``C_i = 0`` (a point that does
    not count) and where ``|raw_i| <= thr`` (the support rule), then balanced on the rest
    (``y'alpha = 0``: the projection ``alpha_S -= y_S (y_S'alpha_S) / |S|``)."""
    alpha = np.where((C_i > 0) & (np.abs(raw) > thr), raw, 0.0)
    S = np.flatnonzero(alpha)
    if S.size:
        alpha[S] -= y[S] * (float(y[S] @ alpha[S]) / S.size)
    return alpha


def certificate(X, y, C_i, w, b, alpha) -> dict:
    """The certificate of exactly the classifier ``(w, b)`` with multipliers ``alpha``: the
    errors ``e`` of ``(w, b)`` (so the rows hold exactly), the primal objective there, the
    dual objective of alpha (``-inf`` if alpha is non-zero on a point with ``C_i = 0``),
    their relative gap, and the optimality conditions' residuals, each relative:
    ``stationarity`` ``|w - X'(y alpha)|_inf``, ``balance`` ``|y'alpha|``, ``errors``
    ``|alpha - C_i e|_inf``. The gap certifies optimality when alpha is dual feasible
    (:func:`dual_feasible`)."""
    e = 1.0 - y * (X @ w + b)
    primal = float(0.5 * w @ w + 0.5 * (C_i * e) @ e)
    v = X.T @ (y * alpha)
    live = C_i > 0
    dual = (float(alpha.sum() - 0.5 * v @ v - 0.5 * np.sum(alpha[live] ** 2 / C_i[live]))
            if not np.any(alpha[~live]) else -np.inf)
    scale = max(abs(primal), abs(dual), np.finfo(float).tiny)
    a = alpha_scale(alpha)
    return {"primal": primal, "dual": dual, "gap": (primal - dual) / scale, "e": e,
            "stationarity": float(np.max(np.abs(w - v), initial=0.0))
            / max(1.0, float(np.max(np.abs(w), initial=0.0))),
            "balance": abs(float(y @ alpha)) / max(float(np.abs(alpha).sum()), 1e-300),
            "errors": float(np.max(np.abs(alpha - C_i * e), initial=0.0)) / a}


def extract(block, ctx) -> Solution:
    """The Solution of a solved ``ls_svm_primal`` block.

    On the formulation (``ctx.verified``): ``w`` as solved; ``b`` from the optimality
    conditions (:func:`bias`); ``xi`` the errors ``e`` of exactly that ``(w, b)``; alpha the
    multipliers of ``margin``, or from a backend without duals ``C weight_i e_i`` (exact by
    the optimality conditions), made dual feasible (:func:`dual_feasible`); the support the
    points with ``alpha_i != 0``; the certificate (:func:`certificate`) of exactly what is
    returned, whose primal objective is the Solution's ``objective``. After a user's change:
    the values as solved, alpha the multipliers (NaN without them), no certificate."""
    svm = block._svm
    data = svm.data
    X, y, C, C_i, w, b_solver = linear_primal_values(svm, block)
    extra: dict = {"b_solver": b_solver}
    # the multipliers equal C weight_i e_i (stationarity in e, which only the objective and
    # margin[i] hold): the reference that decides the sign of a user's duals
    e_now = values_of(members(block.e))
    mult = (margin_multipliers(svm, ctx, extra, reference=C_i * e_now)
            if ctx.duals is not None else None)
    primal = dual = gap = None
    kkt: dict = {}
    if ctx.verified:
        b = bias(X, y, C_i, w)
        extra["b_source"] = "kkt: sum_i C weight_i (y_i - w.x_i - b) = 0"
        e = 1.0 - y * (X @ w + b)
        if mult is not None:
            raw = mult
            extra["alpha_source"] = "multipliers of margin"
            extra["alpha_agreement"] = (float(np.max(np.abs(mult - C_i * e), initial=0.0))
                                        / alpha_scale(mult))
        else:
            raw = C_i * e
            extra["alpha_source"] = ("C weight_i e_i (the optimality conditions; "
                                     f"{ctx.solver} gives no duals)")
        thr = support_threshold(alpha_scale(raw), ctx.tol)
        alpha = dual_feasible(y, C_i, raw, thr)
        cert = certificate(X, y, C_i, w, b, alpha)
        xi = cert["e"]
        primal, dual, gap = cert["primal"], cert["dual"], cert["gap"]
        kkt = {"stationarity": cert["stationarity"], "balance": cert["balance"],
               "errors": cert["errors"], "primal_infeasibility": 0.0}
    else:
        b = b_solver
        extra["b_source"] = "solver"
        xi = values_of(members(block.e))
        if mult is not None:
            thr = support_threshold(alpha_scale(mult), ctx.tol)
            alpha = np.where(np.abs(mult) > thr, mult, 0.0)
            extra["alpha_source"] = "multipliers of margin"
        else:
            thr, alpha = 0.0, np.full(data.n_points, np.nan)
            extra["alpha_source"] = (f"not available: the model was changed and {ctx.solver} "
                                     "gives no duals")
        extra["diagnostics"] = ("not computed: the model solved is not the formulation "
                                f"({ctx.reason})")
    extra["support_threshold"] = float(thr)
    finite = np.nan_to_num(alpha)
    support = np.flatnonzero(finite)
    ww = float(w @ w)
    return Solution(formulation=svm.formulation, solver=ctx.solver, status=ctx.status, w=w,
                    b=b, alpha=alpha, dual_coef=y * finite, xi=xi, support=support,
                    support_vectors=X[support],
                    objective=primal if primal is not None else block_objective(svm, block, ctx),
                    kernel=svm.kernel, classes=data.classes, primal_objective=primal,
                    dual_objective=dual, duality_gap=gap, kkt=kkt,
                    margin=1.0 / np.sqrt(ww) if ww > 0 else None, C=C, time=ctx.time,
                    interface=ctx.interface, path=ctx.path, extra=extra)


ORDER = 40


@register
class LeastSquaresSVM(Formulation):
    name = "ls_svm_primal"
    builder = ls_svm_primal
    family = "ls_svm"
    problem_class = "QP"
    summary = ("Least-squares SVM: the squared errors of equality margin rows, a QP whose "
               "optimality conditions are one linear system (linear kernel).")

    def extract(self, block, ctx) -> Solution:
        return extract(block, ctx)

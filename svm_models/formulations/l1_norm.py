"""The 1-norm SVM (``l1_norm_primal``): the soft margin with ``||w||_1`` in place of
``||w||^2 / 2``, a linear program (``formulations/l1_norm_primal.md``).

    min  sum_j t_j + C sum_i weight_i xi_i
    s.t. y_i (w.x_i + b) + xi_i >= 1,   xi_i >= 0,   -t_j <= w_j <= t_j

Its LP dual, which the certificate uses (``v = y * alpha``):

    max  sum_i alpha_i   s.t.  |X'v|_j <= 1,  y'alpha = 0,  0 <= alpha_i <= C weight_i

The 1-norm drives coefficients of w to exactly zero: a sparse classifier, the LP SVM of
Bradley and Mangasarian (1998) and of the MO-book's SVM chapter. Linear kernel only (w is
the normal vector in the space of the features).
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from ..model.built import BuiltSVM
from ..model.pieces import add_abs_rows, add_margin, linear_primal
from ..model.record import LinearTerm, Record, Scale
from ..postprocess import block_objective, linear_primal_values, margin_multipliers
from ..solution import Solution
from ..tolerances import ACTIVE_MARGIN_REL, alpha_scale, support_threshold
from .base import Formulation, register
from .params import document_parameters


def _objective(t, xi, C, weight):
    return (sum(t[j] for j in t.index_set()) + C * sum(float(weight[i]) * xi[i]
                                                       for i in xi.index_set()))


@document_parameters(C="""    C : float, default 1.0
        Price of a unit of slack (a mutable Param).""")
def l1_norm_primal(X, y, *, C=1.0, sample_weight=None, block=None):
    r"""1-norm SVM, primal form (a linear program).

    .. math::

        \min_{w, b, \xi, t} \; \sum_j t_j + C \sum_i \xi_i
        \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1 - \xi_i, \; \xi_i \ge 0,
        \; -t_j \le w_j \le t_j

    Problem class: LP. Components: ``I``, ``y``, ``C`` (mutable), ``weight`` (with
    ``sample_weight``), ``J``, ``w``, ``b``, ``t`` (``t[j] >= |w[j]|``), ``xi``, ``f``
    (``f[i] = w.x_i``), ``margin``, ``abs_hi`` (``t[j] - w[j] >= 0``), ``abs_lo``
    (``t[j] + w[j] >= 0``), ``objective`` (minimised).

    @parameters@

    References
    ----------
    P. S. Bradley, O. L. Mangasarian, "Feature selection via concave minimization and support
    vector machines", ICML 1998; J. Zhu, S. Rosset, T. Hastie, R. Tibshirani, "1-norm support
    vector machines", NIPS 2003; the catalogue page ``formulations/l1_norm_primal.md``.
    """
    data, kern, weight, b, layout, wpos = linear_primal(X, y, "l1_norm_primal", C, sample_weight, block)
    l, d = data.n_points, data.n_features
    b.t = pyo.Var(b.J, bounds=(0, None), initialize=0.0, doc="t_j >= |w_j|")
    tpos = layout.add(b.t)
    b.xi = pyo.Var(b.I, bounds=(0, None), initialize=0.0, doc="slack xi_i of point i's margin")
    xpos = layout.add(b.xi)
    rows = [add_margin(b, layout, ("f", "f_i = w.x_i"), data.X, "w", data.y, b.xi)]
    rows += add_abs_rows(b, layout, tpos, wpos, d)
    wt = np.ones(l) if weight is None else weight
    b.objective = pyo.Objective(expr=_objective(b.t, b.xi, b.C, wt), sense=pyo.minimize,
                                doc="sum_j t[j] + C sum_i weight[i] xi[i]")
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=1,
                    linear=[LinearTerm(tpos, 1.0), LinearTerm(xpos, wt, Scale(1.0, "C"))],
                    quadratic=[], rows=rows, problem_class="LP").seal()
    b._svm = BuiltSVM(formulation="l1_norm_primal", data=data, kernel=kern, block=b,
                      record=record, K=None, L=None, weight=weight)
    return b


def dual_feasible(X, y, C_i, alpha) -> np.ndarray:
    """``alpha`` made exactly feasible for the LP dual, so that ``sum alpha`` is a lower bound
    on the optimum (the solver's multipliers satisfy the dual constraints only to its
    tolerance, and a small gap over an infeasible alpha proves nothing): clipped into its box
    ``[0, C_i]``, balanced (the larger class's side scaled down to the smaller's sum), then
    scaled by ``1 / max(1, |X'(y alpha)|_inf)``. Each step scales down, so the box holds."""
    a = np.clip(alpha, 0.0, C_i)
    pos, neg = float(a[y > 0].sum()), float(a[y < 0].sum())
    if pos > neg:
        a = np.where(y > 0, a * (neg / pos), a)
    elif neg > pos:
        a = np.where(y < 0, a * (pos / neg), a)
    top = float(np.max(np.abs(X.T @ (y * a)), initial=0.0))
    return a / top if top > 1.0 else a


def certificate(X, y, C_i, w, b, alpha) -> dict:
    """The certificate of exactly the classifier ``(w, b)`` with multipliers ``alpha``:
    the primal objective of ``(w, b)`` (its slacks recomputed), the dual objective of alpha,
    their relative gap, and alpha's dual infeasibility (``max |X'(y alpha)|_j - 1``, the box,
    the balance ``|y'alpha|``), each relative. The gap certifies optimality when alpha is
    dual feasible (:func:`dual_feasible`)."""
    f = X @ w + b
    xi = np.maximum(0.0, 1.0 - y * f)
    primal = float(np.abs(w).sum() + C_i @ xi)
    dual = float(alpha.sum())
    scale = max(abs(primal), abs(dual), 1.0)
    g = X.T @ (y * alpha)
    return {"primal": primal, "dual": dual, "gap": (primal - dual) / scale, "xi": xi,
            "dual_infeasibility": max(float(np.max(np.abs(g), initial=0.0)) - 1.0, 0.0),
            "box": max(float(np.max(alpha - C_i, initial=0.0)),
                       float(np.max(-alpha, initial=0.0))) / max(float(np.max(C_i)), 1e-300),
            "balance": abs(float(y @ alpha)) / max(dual, 1.0)}


def extract(block, ctx) -> Solution:
    """The Solution of a solved ``l1_norm_primal`` block: w, b as solved; alpha the
    multipliers of ``margin`` (None from a backend without duals: zeros, and no certificate);
    the slacks and the certificate recomputed at exactly (w, b, alpha)."""
    svm = block._svm
    data = svm.data
    X, y, C, C_i, w, b = linear_primal_values(svm, block)
    extra: dict = {}
    duals = None
    if ctx.verified and ctx.duals is not None:
        duals = margin_multipliers(svm, ctx, extra)
    kkt: dict = {}
    gap = primal = dual = None
    if duals is not None:
        # the certificate of exactly what is returned: alpha made dual feasible, its sum a
        # lower bound on the optimum (never a gap over multipliers that are not)
        alpha = dual_feasible(X, y, C_i, duals)
        cert = certificate(X, y, C_i, w, b, alpha)
        xi = cert["xi"]
        primal, dual, gap = cert["primal"], cert["dual"], cert["gap"]
        kkt = {"balance": cert["balance"], "dual_infeasibility": cert["dual_infeasibility"],
               "box": cert["box"], "primal_infeasibility": 0.0}
        extra["alpha_source"] = "multipliers of margin"
    else:
        alpha = np.zeros(data.n_points)
        xi = np.maximum(0.0, 1.0 - y * (X @ w + b))
        extra["diagnostics"] = ("not computed: " + (ctx.reason if not ctx.verified else
                                                    f"{ctx.solver} gives no duals"))
    # the support rule of every family: relative to the solution's own alpha and the solver's
    # tolerance; without multipliers, the points on or inside the margin
    thr = support_threshold(alpha_scale(alpha), ctx.tol)
    f = X @ w
    support = np.flatnonzero(alpha > thr) if duals is not None else np.flatnonzero(
        y * (f + b) - 1.0 <= ACTIVE_MARGIN_REL * max(1.0, float(np.abs(f).max(initial=0.0))))
    extra["features_kept"] = np.flatnonzero(
        np.abs(w) > support_threshold(alpha_scale(w), ctx.tol)).tolist()
    ww = float(w @ w)
    return Solution(formulation=svm.formulation, solver=ctx.solver, status=ctx.status, w=w,
                    b=b, alpha=alpha, dual_coef=y * alpha, xi=xi, support=support,
                    support_vectors=X[support], objective=block_objective(svm, block, ctx),
                    kernel=svm.kernel, classes=data.classes, primal_objective=primal,
                    dual_objective=dual, duality_gap=gap, kkt=kkt,
                    margin=1.0 / np.sqrt(ww) if ww > 0 else None, C=C, time=ctx.time,
                    interface=ctx.interface, path=ctx.path, extra=extra)


ORDER = 20


@register
class L1NormSVM(Formulation):
    name = "l1_norm_primal"
    builder = l1_norm_primal
    family = "l1_norm"
    problem_class = "LP"
    summary = ("1-norm SVM: the soft margin with ||w||_1, a linear program whose w is sparse "
               "(linear kernel).")

    def extract(self, block, ctx) -> Solution:
        return extract(block, ctx)

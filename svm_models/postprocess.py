"""From a solved block to a :class:`~svm_models.solution.Solution`: the shared post-processing.

One place for: kernel products on the training set, the KKT rules for ``b`` (SPEC.md s. 1),
the support-vector rule, the recovery of ``alpha`` from a primal (multipliers where the
backend gives them, a bounded least-squares solve of the KKT conditions where it does not),
slacks, primal/dual objectives, duality gap and KKT residuals.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from scipy.optimize import lsq_linear

from .solution import Solution
from .structure import check as structure_check
from .tolerances import support_threshold


def kernel_times(svm, v: np.ndarray) -> np.ndarray:
    """``K v`` on the training points (through X for the linear kernel: no l x l matrix)."""
    if svm.K is not None:
        return svm.K @ v
    X = svm.data.X
    return X @ (X.T @ v)


def var_array(var) -> np.ndarray:
    return np.array([0.0 if vd.value is None else vd.value for vd in var.values()], dtype=float)


def bias_from_kkt(family: str, alpha, y, f, C, thr) -> float:
    """``b`` from the KKT conditions of the dual, given ``f = K(y*alpha)`` (SPEC.md s. 1).

    hard: average of ``y_i - f_i`` over ``alpha_i > thr``; 1-norm: over free vectors
    ``thr < alpha_i < C - thr``, or with none the midpoint of the interval the KKT conditions
    allow (as libsvm); 2-norm: average of ``y_i (1 - alpha_i/C) - f_i`` over ``alpha_i > thr``.
    """
    sv = alpha > thr
    if family == "soft_l2":
        return float(np.mean(y[sv] * (1.0 - alpha[sv] / C) - f[sv])) if sv.any() else 0.0
    if family == "hard":
        return float(np.mean(y[sv] - f[sv])) if sv.any() else 0.0
    free = sv & (alpha < C - thr)
    if free.any():
        return float(np.mean(y[free] - f[free]))
    # no free vector: y_i (f_i + b) >= 1 where alpha_i = 0, <= 1 where alpha_i = C
    at_zero, at_c = ~sv, sv  # no free vector: every support vector is at the bound C
    lo = [-np.inf]
    hi = [np.inf]
    r = 1.0 - y * f  # y_i b >= r_i (alpha=0) or y_i b <= r_i (alpha=C)
    pos, neg = y > 0, y < 0
    lo += list(r[at_zero & pos]) + list(-r[at_c & neg])
    hi += list(-r[at_zero & neg]) + list(r[at_c & pos])
    lo_b, hi_b = max(lo), min(hi)
    if np.isfinite(lo_b) and np.isfinite(hi_b):
        return float((lo_b + hi_b) / 2)
    return float(lo_b if np.isfinite(lo_b) else hi_b if np.isfinite(hi_b) else 0.0)


def _dual_kkt_residual(family, alpha, y, f, b, C, thr) -> float:
    """Largest violation of the dual KKT conditions, in units of the margin (f = K(y*alpha))."""
    m = y * (f + b) + (alpha / C if family == "soft_l2" else 0.0)   # = 1 on free vectors
    res = np.zeros_like(alpha)
    lower = alpha <= thr
    upper = (alpha >= C - thr) if family == "soft_l1" else np.zeros_like(lower)
    free = ~lower & ~upper
    res[free] = np.abs(m[free] - 1.0)
    res[lower] = np.maximum(0.0, 1.0 - m[lower])
    res[upper] = np.maximum(0.0, m[upper] - 1.0)
    return float(res.max(initial=0.0))


def polish_dual(svm, family: str, alpha: np.ndarray, C, thr, max_rounds: int = 10):
    """Active-set polishing of a dual solution: on the free set F found by the solver, solve
    the KKT equations ``(H alpha)_F + b y_F = e_F`` and ``y'alpha = 0`` exactly
    (``H = G(K)``, plus ``I/C`` for the 2-norm), with the other points held at their bound.
    Components that leave ``[0, C]`` are clamped to the bound and the system solved again.

    Interior-point and active-set solvers stop at their own tolerances (HiGHS's QP solver
    leaves alpha ~1e-5 off on some problems whatever its options); the polished alpha is
    taken only if it lowers the KKT residual. Returns ``(alpha, accepted)``."""
    y = svm.data.y
    Cb = C if family == "soft_l1" else np.inf
    X = svm.data.X

    def residual(a):
        f = kernel_times(svm, y * a)
        b = bias_from_kkt(family, a, y, f, C, thr)
        return _dual_kkt_residual(family, a, y, f, b, C if C else np.inf, thr)

    fixed = np.where(alpha >= Cb - thr, Cb, 0.0) if family == "soft_l1" else np.zeros_like(alpha)
    free = (alpha > thr) & (alpha < Cb - thr)
    start = None  # residual of the solver's alpha, computed only if a candidate needs it
    for _ in range(max_rounds):
        F = np.flatnonzero(free)
        if F.size == 0 or F.size > 1500:  # O(|F|^3): beyond that the solver's alpha stands
            return alpha, False
        KFF = svm.K[np.ix_(F, F)] if svm.K is not None else X[F] @ X[F].T
        H = KFF * np.outer(y[F], y[F])
        if family == "soft_l2":
            H = H + np.eye(F.size) / C
        base = fixed.copy()
        base[F] = 0.0
        A = np.zeros((F.size + 1, F.size + 1))
        A[:-1, :-1] = H
        A[:-1, -1] = y[F]
        A[-1, :-1] = y[F]
        rhs = np.concatenate([1.0 - y[F] * kernel_times(svm, y * base)[F], [-(y @ base)]])
        try:
            sol = np.linalg.solve(A, rhs)
        except np.linalg.LinAlgError:   # free vectors not independent: alpha not unique
            return alpha, False
        if not np.all(np.isfinite(sol)):
            return alpha, False
        aF = sol[:-1]
        low, high = aF < 0.0, aF > Cb
        if not (low.any() or high.any()):
            new = base
            new[F] = aF
            start = residual(alpha) if start is None else start
            if residual(new) <= start:
                return new, True
            return alpha, False
        free[F[low | high]] = False
        fixed[F[high]] = Cb
        fixed[F[low]] = 0.0
    return alpha, False


def recover_alpha(svm, family: str, design: np.ndarray, target: np.ndarray, active: np.ndarray,
                  xi: np.ndarray, C, thr) -> np.ndarray:
    """alpha from a primal solution without multipliers: the KKT conditions
    ``design @ (y * alpha) = target`` (stationarity in w or beta), ``y'alpha = 0``,
    ``alpha_i = 0`` off the active margin set, ``alpha_i = C`` where ``xi_i > 0`` (1-norm),
    ``alpha_i = C xi_i`` (2-norm), solved as bounded least squares."""
    y = svm.data.y
    l = y.shape[0]
    if family == "soft_l2":
        return np.maximum(C * xi, 0.0)
    alpha = np.zeros(l)
    fixed_c = np.zeros(l, dtype=bool)
    if family == "soft_l1":
        fixed_c = active & (xi > thr)
        alpha[fixed_c] = C
    unknown = np.flatnonzero(active & ~fixed_c)
    if unknown.size == 0:
        return alpha
    D = design * y[None, :]
    rhs = np.concatenate([target - D[:, fixed_c] @ alpha[fixed_c], [-(y[fixed_c] @ alpha[fixed_c])]])
    M = np.vstack([D[:, unknown], y[None, unknown]])
    ub = C if family == "soft_l1" else np.inf
    sol = lsq_linear(M, rhs, bounds=(0.0, ub), lsmr_tol="auto", method="bvls")
    alpha[unknown] = sol.x
    return alpha


def extract_classic(block, duals=None, *, solver: str = "", interface: str = "", path: str = "",
                    time: float = 0.0, status: str = "optimal", solver_tol=None) -> Solution:
    """Solution of a solved classic-SVM block (any of the six formulations)."""
    svm = block._svm
    name = svm.formulation
    family, form = name.rsplit("_", 1)
    data = svm.data
    y, l = data.y, data.n_points
    C = float(pyo.value(block.C)) if family != "hard" else None
    objective = svm.structure.objective_value()  # numpy: never materialises lazy l^2 terms
    linear_w = None
    if form == "dual":
        alpha = np.clip(var_array(block.alpha), 0.0, None if C is None or family != "soft_l1" else C)
        scale = C if family == "soft_l1" else max(float(alpha.max(initial=0.0)), 1.0)
        thr = support_threshold(scale, solver_tol)
        polished = False
        if structure_check(svm.structure) is None:  # never polish away a user's own constraint
            alpha, polished = polish_dual(svm, family, alpha, C, thr)
        coef = y * alpha
        f = kernel_times(svm, coef)   # K(y*alpha): the one kernel product of a dual
        b = bias_from_kkt(family, alpha, y, f, C, thr)
        if svm.kernel.is_linear:
            linear_w = data.X.T @ coef
        if family == "soft_l2":
            xi = alpha / C
        elif family == "soft_l1":
            xi = np.maximum(0.0, 1.0 - y * (f + b))
        else:
            xi = np.zeros(l)
    else:
        coef_var = block.w if svm.kernel.is_linear else block.beta
        cvals = var_array(coef_var)
        b = float(block.b.value)
        if svm.kernel.is_linear:
            linear_w = cvals
            fdec = data.X @ cvals
        else:
            fdec = svm.K @ cvals
        xi = var_array(block.xi) if family != "hard" else np.zeros(l)
        if family == "soft_l1":
            xi = np.maximum(xi, 0.0)
        if duals is not None and all(cd in duals for cd in block.margin.values()):
            alpha = np.array([duals[cd] for cd in block.margin.values()])
            alpha_source = "multipliers"
        else:
            residual = y * (fdec + b) - 1.0 + xi
            scale_r = max(1.0, float(np.abs(fdec).max(initial=0.0)))
            active = residual <= 1e-5 * scale_r
            thr0 = support_threshold(C if C else 1.0, solver_tol)
            if svm.kernel.is_linear:
                alpha = recover_alpha(svm, family, data.X.T, cvals, active, xi, C, thr0)
            else:
                alpha = recover_alpha(svm, family, svm.K, fdec, active, xi, C, thr0)
            alpha_source = "kkt_least_squares"
        alpha = np.clip(alpha, 0.0, None)
        # the expansion through alpha (w = sum alpha_i y_i phi(x_i)): beta itself is poorly
        # determined in the near-null directions of K, alpha is not
        coef = y * alpha
        scale = C if family == "soft_l1" else max(float(alpha.max(initial=0.0)), 1.0)
        thr = support_threshold(scale, solver_tol)
    support = np.flatnonzero(alpha > thr)
    # objectives from the recovered quantities (independent of which form was solved);
    # coef = y*alpha in every case here, so K(y*alpha) is the dual's f or computed once
    Ka = f if form == "dual" else kernel_times(svm, y * alpha)
    aGa = float((y * alpha) @ Ka)
    dual_obj = float(alpha.sum() - 0.5 * aGa - (0.5 / C * alpha @ alpha if family == "soft_l2" else 0.0))
    if linear_w is not None:
        ww = float(linear_w @ linear_w)
        fvals = data.X @ linear_w
    else:
        fvals = Ka
        ww = float(coef @ fvals)
    penalty = {"hard": 0.0, "soft_l1": (C or 0.0) * float(np.sum(xi)),
               "soft_l2": 0.5 * (C or 0.0) * float(xi @ xi)}[family]
    primal_obj = 0.5 * ww + penalty
    gap = (primal_obj - dual_obj) / max(1.0, abs(primal_obj))
    viol = np.maximum(0.0, 1.0 - xi - y * (fvals + b))
    kkt = {
        "primal_infeasibility": float(viol.max(initial=0.0)),
        "balance": float(abs(y @ alpha)),
        "complementarity": float(np.max(np.abs(alpha * (y * (fvals + b) - 1.0 + xi)), initial=0.0)),
    }
    if form == "primal":
        kkt["stationarity"] = float(np.linalg.norm(
            (linear_w - data.X.T @ (y * alpha)) if linear_w is not None
            else (fdec - Ka))   # K beta against K(y alpha): the representer stationarity
            / max(1.0, np.linalg.norm(Ka if linear_w is None else linear_w)))
    extra = {"alpha_source": "dual variables" if form == "dual" else alpha_source,
             "support_threshold": thr}
    if form == "dual":
        extra["polished"] = polished
    sv_X = data.X[support] if svm.kernel.name != "precomputed" else np.zeros((support.size, 0))

    return Solution(
        formulation=name, solver=solver, status=status, w=linear_w, b=float(b), alpha=alpha,
        coef=coef, xi=xi, support=support, support_vectors=sv_X, objective=objective,
        kernel=svm.kernel, classes=data.classes, primal_objective=primal_obj,
        dual_objective=dual_obj, duality_gap=gap, kkt=kkt,
        margin=(1.0 / np.sqrt(ww)) if ww > 0 else None, C=C, time=time, interface=interface,
        path=path, extra=extra)

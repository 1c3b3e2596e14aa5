"""Re-solves along a parameter path: a working set from the previous solution

None of the QP backends warm-starts usefully after a change of bounds or costs (HiGHS's QP
solver restarts its active set from scratch; interior-point methods gain little from a
starting point). What carries over from one C to the next is *which* variables sit at a
bound: a re-solve (``state`` holding an earlier solution of the same model) fixes the
variables that were at a bound at their new bound, solves the much smaller problem in the
others, and checks the full problem's optimality conditions -- the reduced cost
``r = grad f(x) - A' mu`` must be >= 0 at a lower bound and <= 0 at an upper bound --
releasing every variable that violates them, until none does. The answer is therefore an
optimum of the full problem (to the backend's tolerance); when the working set would not be
small, the reduced problem fails, or the rounds run out, the full problem is solved as usual.
"""

from __future__ import annotations

import numpy as np

from ..status import Status
from ..tolerances import (WS_AT_BOUND_REL, WS_MAX_FRACTION, WS_MAX_ROUNDS, WS_MAX_ROW_LP,
                          WS_REDUCED_COST_REL)
from .base import MatrixResult


def solve_with_working_set(adapter, sf, opts, state=None) -> MatrixResult:
    """``adapter(sf, opts, state)``, or -- for a re-solve -- the working-set method above."""
    prev = None if state is None else state.get("working_set")
    res = None
    if (prev is not None and not sf.qrows and not sf.cones and prev["n"] == sf.n and prev["m"] == sf.m):
        res = _solve_on_working_set(adapter, sf, opts, prev)
    if res is None:
        res = adapter(sf, opts, state)
    if (state is not None and res.status is Status.optimal and not sf.qrows and not sf.cones
            and res.row_duals is not None and res.x is not None):
        state["working_set"] = {"n": sf.n, "m": sf.m, "x": np.array(res.x, dtype=float),
                                "lx": sf.lx.copy(), "ux": sf.ux.copy()}
    return res


def _solve_on_working_set(adapter, sf, opts, prev) -> MatrixResult | None:
    n = sf.n
    x0, lx0, ux0 = prev["x"], prev["lx"], prev["ux"]
    width = np.where(np.isfinite(lx0) & np.isfinite(ux0), ux0 - lx0, np.inf)
    width = np.maximum(1.0, np.where(np.isfinite(width), width, np.maximum(np.abs(x0), 1.0)))
    at_lo = np.isfinite(lx0) & np.isfinite(sf.lx) & (x0 - lx0 <= WS_AT_BOUND_REL * width)
    at_up = np.isfinite(ux0) & np.isfinite(sf.ux) & (ux0 - x0 <= WS_AT_BOUND_REL * width) & ~at_lo
    x = np.clip(x0, sf.lx, sf.ux)
    x[at_lo] = sf.lx[at_lo]
    x[at_up] = sf.ux[at_up]
    tol = max(opts.tolerance, 1e-12)
    AT = sf.A.T.tocsr()
    fixed = at_lo | at_up
    iterations = 0
    for rounds in range(1, WS_MAX_ROUNDS + 1):
        keep = np.flatnonzero(~fixed)
        if keep.size > WS_MAX_FRACTION * n:
            return None
        if keep.size == 0:
            # every variable at a bound (a small C: all alpha at C): nothing to solve; the
            # rows' multipliers alone must prove x optimal
            return _all_at_bounds(sf, AT, x, at_lo, at_up, tol, rounds)
        sub = sf.restrict(keep, x)
        r = adapter(sub, opts, None)
        if r.status is not Status.optimal or r.row_duals is None:
            return None
        iterations += r.iterations or 0
        x = x.copy()
        x[keep] = r.x
        g = sf.gradient(x)
        # optimality of the full problem: reduced costs of the fixed variables
        rc = g - AT @ np.asarray(r.row_duals, dtype=float)
        eps = max(WS_REDUCED_COST_REL, 10.0 * tol) * max(1.0, float(np.max(np.abs(g), initial=0.0)))
        viol = fixed & ((at_lo & (rc < -eps)) | (at_up & (rc > eps)))
        if not viol.any():
            return MatrixResult(
                status=Status.optimal, x=x, row_duals=np.asarray(r.row_duals, dtype=float),
                qrow_duals=r.qrow_duals, objective=sf.objective(x), iterations=iterations,
                message=f"{r.message} (working set: {keep.size} of {n} variables, "
                        f"{rounds} round{'s' if rounds > 1 else ''})",
                interface=r.interface, extra={"working_set": int(keep.size), "rounds": rounds})
        fixed &= ~viol
    return None


def _all_at_bounds(sf, AT, x, at_lo, at_up, tol, rounds) -> MatrixResult | None:
    """``x`` with every variable at a bound, if row multipliers ``mu`` (sensitivity
    convention) prove it optimal: the rows hold at x, the reduced costs ``g - A' mu`` are
    >= -eps at a lower bound and <= eps at an upper bound, and ``mu >= 0`` on a row at its lower
    bound, ``<= 0`` at its upper bound, 0 on a row that is not active. Found by a small LP
    (scipy's HiGHS); None when there is none (the full problem is solved instead)."""
    from scipy.optimize import linprog

    if sf.m == 0 or sf.m > WS_MAX_ROW_LP:
        return None
    Ax = sf.A @ x
    feas = 10.0 * max(tol, 1e-12) * max(1.0, float(np.max(np.abs(Ax), initial=0.0)))
    if np.any(Ax < sf.lA - feas) or np.any(Ax > sf.uA + feas):
        return None
    lo = np.isfinite(sf.lA) & (Ax <= sf.lA + feas)
    up = np.isfinite(sf.uA) & (Ax >= sf.uA - feas)
    bounds = [(None, None) if a and b else (0.0, None) if a else (None, 0.0) if b else (0.0, 0.0)
              for a, b in zip(lo, up)]
    g = sf.gradient(x)
    eps = max(WS_REDUCED_COST_REL, 10.0 * tol) * max(1.0, float(np.max(np.abs(g), initial=0.0)))
    A = sf.A.toarray()
    # at a lower bound g - A'mu >= -eps, i.e. A'mu <= g + eps; at an upper bound -A'mu <= eps - g
    res = linprog(np.zeros(sf.m), A_ub=np.vstack([A.T[at_lo], -A.T[at_up]]),
                  b_ub=np.concatenate([g[at_lo] + eps, eps - g[at_up]]), bounds=bounds,
                  method="highs")
    if res.status != 0:
        return None
    return MatrixResult(
        status=Status.optimal, x=x, row_duals=np.asarray(res.x, dtype=float), qrow_duals=None,
        objective=sf.objective(x), iterations=0,
        message=f"every variable at a bound, proved optimal by the row multipliers "
                f"(working set: 0 of {sf.n} variables, {rounds} round{'s' if rounds > 1 else ''})",
        interface="working set", extra={"working_set": 0, "rounds": rounds})

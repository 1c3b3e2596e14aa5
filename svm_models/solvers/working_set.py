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
from ..tolerances import WS_AT_BOUND_REL, WS_MAX_FRACTION, WS_MAX_ROUNDS, WS_REDUCED_COST_REL
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
        if keep.size == 0 or keep.size > WS_MAX_FRACTION * n:
            return None
        sub = sf.restrict(keep, x)
        r = adapter(sub, opts, None)
        if r.status is not Status.optimal or r.row_duals is None:
            return None
        iterations += r.iterations or 0
        x = x.copy()
        x[keep] = r.x
        # optimality of the full problem: reduced costs of the fixed variables
        g = sf.gradient(x)
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

"""Re-solves along a parameter path: a working set from the previous solution

None of the QP backends warm-starts usefully after a change of bounds or costs (HiGHS's QP
solver restarts its active set from scratch; interior-point methods gain little from a
starting point). What carries over from one C to the next is *which* variables sit at a
bound. A re-solve (``state`` holding an earlier solution of the same model) tries, in order:

1. for a QP whose rows are all equalities (the SVM duals): the primal-dual active-set
   method from the previous active set -- the KKT system of the free variables solved
   directly as one dense linear system, the active set corrected until every optimality
   condition holds (no backend call; exact to round-off);
2. the working set: the variables that were at a bound fixed at their new bound, the much
   smaller problem in the others solved by the backend, and the full problem's optimality
   conditions checked -- the reduced cost ``r = grad f(x) - A' mu`` must be >= 0 at a lower
   bound and <= 0 at an upper bound -- releasing every variable that violates them, until
   none does;
3. the full problem, as usual (when the working set would not be small, the reduced
   problem fails, or the rounds run out).

Either answer is an optimum of the full problem, its optimality conditions checked.
"""

from __future__ import annotations

import numpy as np

from ..status import Status
from ..tolerances import (WS_ACTIVE_SET_BOUND_REL, WS_ACTIVE_SET_MAX_FREE,
                          WS_ACTIVE_SET_RESIDUAL, WS_ACTIVE_SET_ROUNDS, WS_AT_BOUND_REL,
                          WS_MAX_FRACTION, WS_MAX_ROUNDS, WS_MAX_ROW_LP, WS_REDUCED_COST_REL)
from .base import MatrixResult, out_of_time


def solve_with_working_set(adapter, sf, opts, state=None) -> MatrixResult:
    """``adapter(sf, opts, state)``, or -- for a re-solve -- the working-set method above;
    no backend call is started once the call's deadline has passed (status ``time_limit``;
    each round of the working set gets the time left)."""
    if opts.expired():
        return MatrixResult(status=Status.time_limit, message=out_of_time(opts, "solving"),
                            interface="working set")
    prev = None if state is None else state.get("working_set")
    res = None
    if (prev is not None and not sf.qrows and not sf.cones and prev["n"] == sf.n and prev["m"] == sf.m):
        res = _solve_on_active_set(sf, opts, prev)
        if res is None:
            res = _solve_on_working_set(adapter, sf, opts, prev)
    if res is None:
        if opts.expired():
            return MatrixResult(status=Status.time_limit, message=out_of_time(opts, "solving"),
                                interface="working set")
        res = adapter(sf, opts, state)
        if state is not None and res.status is Status.optimal and res.x is not None:
            # a backend warm-started from ``state`` may keep parts of the previous problem
            # (HiGHS kept its objective offset): the objective is the form's own at x
            res.objective = sf.objective(res.x)
    if (state is not None and res.status is Status.optimal and not sf.qrows and not sf.cones
            and res.row_duals is not None and res.x is not None):
        state["working_set"] = {"n": sf.n, "m": sf.m, "x": np.array(res.x, dtype=float),
                                "lx": sf.lx.copy(), "ux": sf.ux.copy()}
    return res


def _previous_bounds(sf, prev):
    """Which variables sat at their lower / upper bound in the previous solution, and the
    start point: the previous x moved to the new bounds."""
    x0, lx0, ux0 = prev["x"], prev["lx"], prev["ux"]
    width = np.where(np.isfinite(lx0) & np.isfinite(ux0), ux0 - lx0, np.inf)
    width = np.maximum(1.0, np.where(np.isfinite(width), width, np.maximum(np.abs(x0), 1.0)))
    at_lo = np.isfinite(lx0) & np.isfinite(sf.lx) & (x0 - lx0 <= WS_AT_BOUND_REL * width)
    at_up = np.isfinite(ux0) & np.isfinite(sf.ux) & (ux0 - x0 <= WS_AT_BOUND_REL * width) & ~at_lo
    x = np.clip(x0, sf.lx, sf.ux)
    x[at_lo] = sf.lx[at_lo]
    x[at_up] = sf.ux[at_up]
    return at_lo, at_up, x


def _reduced_cost_tolerance(g, tol) -> float:
    return max(WS_REDUCED_COST_REL, 10.0 * tol) * max(1.0, float(np.max(np.abs(g), initial=0.0)))


def _solve_on_active_set(sf, opts, prev) -> MatrixResult | None:
    """A QP whose rows are all equalities (an SVM dual: ``y'alpha = 0``, and the factor
    rows), re-solved by the primal-dual active-set method from the previous solution's
    active set: hold the variables at their bounds, solve the KKT system of the others,
    ``[P_FF A_F'; A_F 0] [x_F; -mu] = [-c_F; b]`` (the held ones moved into c and b), as one
    dense linear system; free variables that leave their box are held at the bound they
    crossed, held ones whose reduced cost ``g - A' mu`` has the wrong sign are freed; until
    nothing changes. The answer then satisfies every optimality condition of the full
    problem (checked, to round-off rather than to a solver's tolerance). Along a C path the
    free set changes little from one C to the next: one or a few dense solves of the free
    variables, instead of a full solve. None when not applicable or not converged (the
    working-set method and the full solve follow)."""
    if not sf.quad or sf.m == 0 or not np.all(np.isfinite(sf.lA) & (sf.lA == sf.uA)):
        return None
    at_lo, at_up, x = _previous_bounds(sf, prev)
    held_lo, held_up = at_lo.copy(), at_up.copy()
    tol = max(opts.tolerance, 1e-12)
    span = np.maximum(1.0, np.abs(np.where(np.isfinite(sf.lx), sf.lx, 0.0))
                      + np.abs(np.where(np.isfinite(sf.ux), sf.ux, 0.0)))
    AT = sf.A.T.tocsr()
    pinned = sf.lx == sf.ux     # fixed variables (a user's fix): held whatever their reduced cost
    seen = set()
    for rounds in range(1, WS_ACTIVE_SET_ROUNDS + 1):
        F = np.flatnonzero(~(held_lo | held_up))
        key = (F.tobytes(), np.flatnonzero(held_up).tobytes())
        if key in seen or F.size + sf.m > WS_ACTIVE_SET_MAX_FREE:
            return None     # cycling, or too large for a dense solve
        seen.add(key)
        x = x.copy()
        x[held_lo] = sf.lx[held_lo]
        x[held_up] = sf.ux[held_up]
        sub = sf.restrict(F, x)
        AF = sub.A.toarray()
        k = F.size
        K = np.zeros((k + sf.m, k + sf.m))
        K[:k, :k] = sub.hessian_dense() if k else 0.0
        K[k:, :k] = AF
        K[:k, k:] = AF.T
        rhs = np.concatenate([-sub.c, sub.lA])
        try:
            z = np.linalg.solve(K, rhs)
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(z)) or (np.linalg.norm(K @ z - rhs)
                                          > WS_ACTIVE_SET_RESIDUAL * max(1.0, np.linalg.norm(rhs))):
            return None     # singular (e.g. duplicate free points): not unique this way
        x[F] = z[:k]
        mu = -z[k:]
        g = sf.gradient(x)
        rc = g - AT @ mu
        eps = _reduced_cost_tolerance(g, tol)
        slack = WS_ACTIVE_SET_BOUND_REL * span[F]
        below = np.zeros(sf.n, dtype=bool)
        above = np.zeros(sf.n, dtype=bool)
        below[F] = x[F] < sf.lx[F] - slack
        above[F] = x[F] > sf.ux[F] + slack
        wrong_lo = held_lo & (rc < -eps) & ~pinned
        wrong_up = held_up & (rc > eps) & ~pinned
        if not (below.any() or above.any() or wrong_lo.any() or wrong_up.any()):
            x = np.clip(x, sf.lx, sf.ux)
            return MatrixResult(
                status=Status.optimal, x=x, row_duals=mu, qrow_duals=None,
                objective=sf.objective(x), iterations=0,
                message=f"active set from the previous solution ({k} free of {sf.n} variables, "
                        f"{rounds} round{'s' if rounds > 1 else ''}), optimality checked",
                interface="active set", extra={"working_set": int(k), "rounds": rounds})
        held_lo = (held_lo & ~wrong_lo) | below
        held_up = (held_up & ~wrong_up) | above
    return None


def _solve_on_working_set(adapter, sf, opts, prev) -> MatrixResult | None:
    n = sf.n
    at_lo, at_up, x = _previous_bounds(sf, prev)
    tol = max(opts.tolerance, 1e-12)
    AT = sf.A.T.tocsr()
    fixed = at_lo | at_up
    iterations = 0
    for rounds in range(1, WS_MAX_ROUNDS + 1):
        if opts.expired():
            return None
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
        eps = _reduced_cost_tolerance(g, tol)
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
    eps = _reduced_cost_tolerance(g, tol)
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

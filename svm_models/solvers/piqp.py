"""PIQP: proximal interior-point LP and convex QP (``pip install piqp``; matrix interface
only, no Pyomo plugin: its general path reads the Pyomo model into matrices).

PIQP has no time limit of its own: its iteration limit (250 by default) bounds every solve;
more iterations asked under a time limit are cut to what the time per iteration of the first
250 leaves room for (:func:`_within`), and a solve that ends after the time limit is reported
as ``time_limit`` (its answer is not used), as the other backends would have stopped there.
Its Lagrangian is ``f + y'(Ax - b) + z_u'(Gx - h_u) + z_l'(h_l - Gx)``, so the sensitivity
duals are ``-y`` on equalities and ``z_l - z_u`` on inequalities.
Its ``PIQP_DUAL_INFEASIBLE`` proves the model infeasible or unbounded, not which: the
feasibility problem, solved next, tells (:func:`~.common.settle_dual_infeasible`).
"""

from __future__ import annotations

import time

import numpy as np

from ..status import Status
from .base import Backend, MatrixResult
from .common import dense_hessian_f, settle_dual_infeasible

INF = float("inf")


#: the iterations PIQP is first given when more are asked under a time limit (its default):
#: their time says how many more fit in the time left (:func:`_within`)
PROBE_ITER = 250


def _within(make, args, settings: dict, limit):
    """``(solver, status)`` of a PIQP solve with ``settings``; where more than
    :data:`PROBE_ITER` iterations are asked under a time ``limit`` (seconds), first
    ``PROBE_ITER``, and if they do not end it, once afresh with as many as the time per
    iteration leaves room for (at most those asked): PIQP has no time limit of its own, and
    10,000 iterations (the retry at the iteration limit) on a dense 101-point dual ran 6 s past
    a stage's 1.7 s."""
    asked = settings.get("max_iter")
    probe = limit is not None and asked is not None and asked > PROBE_ITER
    solver, t0 = make(), time.perf_counter()
    for key, val in {**settings, **({"max_iter": PROBE_ITER} if probe else {})}.items():
        setattr(solver.settings, key, val)
    solver.setup(*args)
    st = solver.solve()
    if not probe or not str(st).endswith("PIQP_MAX_ITER_REACHED"):
        return solver, st
    took = time.perf_counter() - t0
    fit = int(0.8 * (limit - took) / max(took / max(solver.result.info.iter, 1), 1e-9))
    if fit <= PROBE_ITER:   # (no more than the probe's fit in the time left)
        return solver, st
    return _within(make, args, {**settings, "max_iter": min(asked, fit)}, None)


def solve(sf, opts, state=None) -> MatrixResult:
    """PIQP, dense or sparse by the Hessian's fill."""
    import piqp

    nnz_dense = sum(len(q.index) ** 2 for q in sf.quad if q.base is not None)
    dense = nnz_dense > 0.1 * sf.n * sf.n
    eq_idx, Aeq, beq, in_idx, Ain, lin, uin = sf.equality_split()
    lx = np.where(np.isfinite(sf.lx), sf.lx, -INF)
    ux = np.where(np.isfinite(sf.ux), sf.ux, INF)
    has_eq, has_in = len(eq_idx) > 0, len(in_idx) > 0
    if dense:
        args = [dense_hessian_f(sf), sf.c,
                np.asfortranarray(Aeq.toarray()) if has_eq else None, beq if has_eq else None,
                np.asfortranarray(Ain.toarray()) if has_in else None,
                lin if has_in else None, uin if has_in else None, lx, ux]
    else:
        args = [sf.hessian_sparse(triangle="upper"), sf.c,
                Aeq.tocsc() if has_eq else None, beq if has_eq else None,
                Ain.tocsc() if has_in else None, lin if has_in else None,
                uin if has_in else None, lx, ux]
    tol = opts.tolerance
    # PIQP has no time limit: its iteration limit (default 250) bounds every solve
    settings = {"eps_abs": tol, "eps_rel": tol, "verbose": bool(opts.verbose),
                **opts.limits(iterations="max_iter", threads="num_threads"), **opts.options}
    limit = opts.seconds   # (the time left now: read before the solve)
    t0 = time.perf_counter()
    solver, st = _within(piqp.DenseSolver if dense else piqp.SparseSolver, args, settings,
                         limit)
    r = solver.result
    name = str(st).split(".")[-1]
    status = {"PIQP_SOLVED": Status.optimal, "PIQP_PRIMAL_INFEASIBLE": Status.infeasible,
              "PIQP_DUAL_INFEASIBLE": Status.unbounded,
              "PIQP_MAX_ITER_REACHED": Status.iteration_limit,
              "PIQP_NUMERICS": Status.numerical_error}.get(name, Status.error)
    if status is Status.unbounded:   # a certificate of dual infeasibility only
        status, name = settle_dual_infeasible(solve, sf, opts)
    if limit is not None and time.perf_counter() - t0 > limit:
        status, name = Status.time_limit, f"{name} after the time limit ({limit:g} s)"
    res = MatrixResult(status=status, message=name,
                       interface=f"piqp-{'dense' if dense else 'sparse'}")
    if status is Status.optimal:
        res.x = np.array(r.x)
        duals = np.zeros(sf.m)
        duals[eq_idx] = -np.asarray(r.y)
        duals[in_idx] = np.asarray(r.z_l) - np.asarray(r.z_u)
        res.row_duals = duals
        res.objective = sf.objective(res.x)
        res.iterations = int(r.info.iter)
    return res


BACKEND = Backend(
    name="piqp", classes=frozenset(("LP", "QP")), modules=("piqp",), matrix=solve,
    install="pip install piqp", note="proximal interior point QP (matrix interface)",
    project=True, auto={"QP": 10, "LP": 30},   # the fastest on a QP (benchmarks/results.md)
    pyomo_solver="PIQP (proximal interior point) through svm_models: LP and convex QP")

"""PIQP: proximal interior-point LP and convex QP (``pip install piqp``; matrix interface
only, no Pyomo plugin: its general path reads the Pyomo model into matrices).

PIQP has no time limit of its own: its iteration limit (250 by default) bounds every solve,
and a solve that ends after the time limit is reported as ``time_limit`` (its answer is
not used), as the other backends would have stopped there.
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
        solver = piqp.DenseSolver()
        args = [dense_hessian_f(sf), sf.c,
                np.asfortranarray(Aeq.toarray()) if has_eq else None, beq if has_eq else None,
                np.asfortranarray(Ain.toarray()) if has_in else None,
                lin if has_in else None, uin if has_in else None, lx, ux]
    else:
        solver = piqp.SparseSolver()
        args = [sf.hessian_sparse(triangle="upper"), sf.c,
                Aeq.tocsc() if has_eq else None, beq if has_eq else None,
                Ain.tocsc() if has_in else None, lin if has_in else None,
                uin if has_in else None, lx, ux]
    s = solver.settings
    tol = opts.tolerance
    s.eps_abs = tol
    s.eps_rel = tol
    s.verbose = bool(opts.verbose)
    # PIQP has no time limit: its iteration limit (default 250) bounds every solve
    for key, val in {**opts.limits(iterations="max_iter", threads="num_threads"),
                     **opts.options}.items():
        setattr(s, key, val)
    limit = opts.seconds   # (the time left now: read before the solve)
    t0 = time.perf_counter()
    solver.setup(*args)
    st = solver.solve()
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

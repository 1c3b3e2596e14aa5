"""HiGHS: LP and convex QP (``pip install highspy``; Pyomo plugin ``highs``).

Matrix path through highspy (a re-solve along a path keeps the Highs object: warm start on
changed bounds and costs). HiGHS's row duals for a minimisation are d(objective)/d(row
bound): the sensitivity convention as they are. An "optimal" QP answer is checked against the
optimality conditions before it is accepted (seen with HiGHS 1.15 on dense QPs of a few
thousand variables: "Optimal" with every variable at a bound and a wrong objective).
HiGHS's active-set QP solver minimises ``f(x) + reg/2 |x|^2`` (``qp_regularization_value``,
1e-7): when that regularisation is what fails the check (large alphas of a hard margin), the
problem is solved again with a regulariser small enough. A claim that a QP is unbounded is
checked by an LP for a direction of unboundedness (HiGHS 1.15 claimed it for a bounded
factor-form dual). A QP on which its active set reaches the iteration limit the library set
is solved once more with the objective multiplied by :data:`QP_OBJECTIVE_FACTOR` (exact: the
same minimiser, see :func:`_objective_scaled`).
"""

from __future__ import annotations

import zlib

import numpy as np

from dataclasses import replace

from ..errors import plain
from ..status import Status
from ..tolerances import (HIGHS_QP_ITER_BASE, HIGHS_QP_ITER_PER_ROW, KKT_REFUSE_REL,
                          RECESSION_DESCENT)
from .base import Backend, MatrixResult

#: HiGHS's default qp_regularization_value
QP_REGULARISATION = 1e-7

#: the factor (a power of two: exact) on the objective of a QP solved again after HiGHS's
#: active set reached the iteration limit the library set. Its QP solver judges curvature,
#: multipliers and pivots against absolute thresholds (``pQp_zero_threshold`` 1e-7: a
#: direction of less curvature is stepped along as if it had none; ``lambda_zero_threshold``
#: the dual feasibility tolerance); on an rbf dual whose kernel's eigenvalues decay to 1e-15
#: and whose alphas are about 2e-3 (random problem 171: 97 points, C = 0.002, a feature of
#: 4e5) it reaches the optimum's objective within 100 iterations and then pivots from vertex
#: to vertex of it (null space 0) for as many as it is allowed, scaled or not, with any
#: pricing; the objective multiplied by 2^8 it ends optimal in 97 (also from the
#: formulation's exact scaling, whose objective factor is 2^8 already)
QP_OBJECTIVE_FACTOR = 2.0 ** 8

#: HiGHS's large_matrix_value: a row-matrix or Hessian entry above it is an error for HiGHS
#: -- and HiGHS 1.15 then aborts the whole process ("munmap_chunk(): invalid pointer") on a
#: Hessian entry of 1.6e22 (a 2-norm primal on a poly kernel's monomials of scale 1e9)
#: instead of returning. Such a model is never handed to it.
LARGE_VALUE = 1e15


def solve(sf, opts, state=None) -> MatrixResult:
    """HiGHS through highspy (LP and convex QP), its answer checked (see the module notes)."""
    big = _largest_entry(sf)
    if big >= LARGE_VALUE:
        return MatrixResult(Status.numerical_error, message=(
            f"HiGHS takes no row-matrix or Hessian entry above {LARGE_VALUE:.0e} (HiGHS 1.15 "
            f"aborts the process on one); this model has {big:.3g}: standardise the features "
            "or use another backend (piqp, clarabel, ipopt, gurobi)"), interface="highspy")
    res = _solve(sf, opts, state)
    if res.status is Status.iteration_limit and sf.quad and opts.iter_limit is None \
            and not opts.expired():
        res = _objective_scaled(sf, opts, res)
    if res.status is Status.numerical_error and res.x is not None:
        # HiGHS's active-set QP solves min f(x) + reg/2 |x|^2 (qp_regularization_value):
        # when that explains the violation, solve again with a regulariser small enough
        reg = float(opts.options.get("qp_regularization_value", QP_REGULARISATION))
        thr = max(KKT_REFUSE_REL, 1e3 * opts.tolerance)
        viol = res.extra["kkt_violation"]
        if reg > 0 and sf.kkt_violation(res.x, res.row_duals, shift=reg) <= thr:
            smaller = reg * 0.01 * thr / viol
            again = _solve(sf, replace(opts, options={**opts.options,
                                                      "qp_regularization_value": smaller}),
                           state)
            again.extra["qp_regularization_value"] = smaller
            res = again
    if res.status is Status.unbounded and sf.quad and not _has_recession_direction(sf):
        res.status = Status.numerical_error
        res.message = ("HiGHS reported the QP unbounded, but it has no direction of "
                       "unboundedness (checked by LP): a known weakness of its QP solver "
                       "(seen on the factor form of a dual and on primals); use another "
                       "backend (piqp, clarabel, ipopt, gurobi)")
    return res


def _objective_scaled(sf, opts, first: MatrixResult) -> MatrixResult:
    """``sf`` solved again with its objective multiplied by :data:`QP_OBJECTIVE_FACTOR`
    (the variables and rows as they are: the same minimiser; the objective and the row
    duals mapped back exactly), after ``first`` reached HiGHS's iteration limit; ``first``
    when that does not end optimal either."""
    from ..model.scaling import Scaling, scale

    sc = Scaling(s=1.0, col=np.ones(sf.n), row=np.ones(sf.m), obj=QP_OBJECTIVE_FACTOR)
    again = _solve(scale(sf, sc), opts)
    tried = f"also with the objective multiplied by {QP_OBJECTIVE_FACTOR:g}"
    if again.status is not Status.optimal:
        first.message = f"{first.message} ({tried}: {again.message})"
        return first
    again = sc.unscale_result(again)
    del again.extra["scaling"]
    again.extra["objective_factor"] = QP_OBJECTIVE_FACTOR
    again.message = f"{again.message} ({tried}; at first: {first.message})"
    return again


def _solve(sf, opts, state=None) -> MatrixResult:
    import highspy

    h = _highs_for(highspy, sf, opts, state)
    # HiGHS's QP regularisation (1e-7) is left at its default: smaller values make its
    # active-set solver stall on singular Hessians; the ~1e-7 shift it causes in alpha is
    # removed by postprocess.polish_dual.
    for key, val in plugin_options("highs", opts).items():
        h.setOptionValue(key, val)
    if sf.quad and opts.iter_limit is None:
        # its active-set QP solver can cycle: on 79 points at C = 1e-3, exactly scaled, it
        # ran to any time limit; stopped here, the retries (more iterations, then the other
        # scaling) solve it in milliseconds
        h.setOptionValue("qp_iteration_limit",
                         int(HIGHS_QP_ITER_BASE + HIGHS_QP_ITER_PER_ROW * (sf.n + sf.m)))
    for key, val in opts.options.items():
        if h.setOptionValue(key, val) != highspy.HighsStatus.kOk:
            raise ValueError(f"HiGHS refused the option {key}={plain(val)!r}")
    h.run()
    return _result(highspy, h, sf, opts)


def _highs_for(highspy, sf, opts, state):
    """The Highs object holding ``sf``: the one kept in ``state`` with only its bounds and
    costs (and a changed Hessian) replaced when the row pattern is the same (a warm re-solve
    along a path), else a new one (kept in ``state`` when given)."""
    inf = highspy.kHighsInf
    h = None if state is None else state.get("highs")
    A = sf.A.tocsc()
    # the row matrix's values too: an exactly scaled problem's rows change with its scale
    pattern = (sf.n, sf.m, A.nnz, zlib.crc32(np.ascontiguousarray(A.data)))
    if h is not None and state.get("pattern") == pattern:
        # warm re-solve: only bounds and costs change between points of a path
        h.changeColsBounds(sf.n, np.arange(sf.n, dtype=np.int32),
                           np.where(np.isfinite(sf.lx), sf.lx, -inf),
                           np.where(np.isfinite(sf.ux), sf.ux, inf))
        h.changeColsCost(sf.n, np.arange(sf.n, dtype=np.int32), sf.c)
        key = _hessian_key(sf)
        if not _same_key(key, state.get("hessian_key")):  # e.g. a 2-norm C is in the Hessian
            h.passHessian(_hessian(highspy, sf))
            state["hessian_key"] = key
        return h
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(opts.verbose))
    lp = highspy.HighsLp()
    lp.num_col_ = sf.n
    lp.num_row_ = sf.m
    lp.col_cost_ = sf.c
    lp.offset_ = sf.const
    lp.col_lower_ = np.where(np.isfinite(sf.lx), sf.lx, -inf)
    lp.col_upper_ = np.where(np.isfinite(sf.ux), sf.ux, inf)
    lp.row_lower_ = np.where(np.isfinite(sf.lA), sf.lA, -inf)
    lp.row_upper_ = np.where(np.isfinite(sf.uA), sf.uA, inf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32, copy=False)
    lp.a_matrix_.value_ = A.data
    model = highspy.HighsModel()
    model.lp_ = lp
    if sf.quad:
        model.hessian_ = _hessian(highspy, sf)
    h.passModel(model)
    if state is not None:
        state["highs"] = h
        state["pattern"] = pattern
        state["hessian_key"] = _hessian_key(sf)
    return h


def _result(highspy, h, sf, opts) -> MatrixResult:
    """HiGHS's status and answer after ``run``, its "optimal" on a QP checked against the
    optimality conditions."""
    st = h.getModelStatus()
    M = highspy.HighsModelStatus
    status = {M.kOptimal: Status.optimal, M.kInfeasible: Status.infeasible,
              M.kUnbounded: Status.unbounded,
              M.kUnboundedOrInfeasible: Status.infeasible_or_unbounded,
              M.kTimeLimit: Status.time_limit,
              M.kIterationLimit: Status.iteration_limit,
              M.kSolveError: Status.numerical_error}.get(st, Status.error)
    message = h.modelStatusToString(st)
    if st == M.kNotset and sf.quad:
        # HiGHS's QP solver ends "Non-convex" (model status not set) on some convex models:
        # a linear-kernel 1-norm dual, factor form, 90 points, C = 137 (found by a path test);
        # numerical trouble -- the retry with a looser tolerance solves it
        status = Status.numerical_error
        message = ("HiGHS's QP solver stopped without a model status (it declares some convex "
                   "QPs non-convex when its Hessian is singular)")
    res = MatrixResult(status=status, message=message, interface="highspy")
    if status is Status.optimal:
        sol = h.getSolution()
        res.x = np.asarray(sol.col_value)
        res.row_duals = np.asarray(sol.row_dual)
        res.objective = h.getInfo().objective_function_value
        res.iterations = h.getInfo().qp_iteration_count
        if sf.quad:
            viol = sf.kkt_violation(res.x, res.row_duals)
            res.extra["kkt_violation"] = viol
            if viol > max(KKT_REFUSE_REL, 1e3 * opts.tolerance):
                res.status = Status.numerical_error
                res.message = (f"HiGHS reported an optimal solution that violates the optimality "
                               f"conditions (relative reduced-cost violation {viol:.2g}); a known "
                               "weakness of its QP solver on large dense problems: use piqp, "
                               "clarabel or ipopt")
    return res


def _has_recession_direction(sf) -> bool:
    """Whether the QP ``min c'x + x'Qx`` over its rows and bounds has a direction ``d`` with
    ``Q d = 0``, ``c'd < 0`` that stays feasible (an LP, by scipy's HiGHS simplex)."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    n = sf.n
    P = sf.hessian_sparse()
    lo_rows = np.isfinite(sf.lA)
    up_rows = np.isfinite(sf.uA)
    A_ub = sp.vstack([-sf.A[lo_rows], sf.A[up_rows]], format="csr")
    # d in the recession cone of the bounds, normalised to the box [-1, 1]
    bounds = [(0 if np.isfinite(lo) else -1, 0 if np.isfinite(up) else 1)
              for lo, up in zip(sf.lx, sf.ux)]
    res = linprog(sf.c, A_ub=A_ub if A_ub.shape[0] else None,
                  b_ub=np.zeros(A_ub.shape[0]) if A_ub.shape[0] else None,
                  A_eq=P if P.nnz else None, b_eq=np.zeros(n) if P.nnz else None,
                  bounds=bounds, method="highs")
    return res.status == 0 and res.fun < -RECESSION_DESCENT


def _largest_entry(sf) -> float:
    """The largest |entry| of the row matrix and of the Hessian HiGHS would be given (twice a
    block's matrix: HiGHS minimises c'x + x'Qx/2)."""
    def largest(a) -> float:   # (max and min: no |a| copy of an l x l block on each solve)
        return max(float(np.max(a)), -float(np.min(a))) if np.size(a) else 0.0

    big = largest(sf.A.data)
    for q in sf.quad:
        if q.base is not None:
            if isinstance(q.base, np.ndarray):   # (a lazy kernel is not read for this)
                big = max(big, 2.0 * abs(q.scale) * largest(q.base))
        else:
            big = max(big, 2.0 * largest(q.diag))
    return big


def _hessian(highspy, sf):
    H = sf.hessian_sparse(triangle="lower")
    hess = highspy.HighsHessian()
    hess.dim_ = sf.n
    hess.format_ = highspy.HessianFormat.kTriangular
    hess.start_ = H.indptr.astype(np.int32)
    hess.index_ = H.indices.astype(np.int32, copy=False)
    hess.value_ = H.data
    return hess


def _hessian_key(sf) -> list:
    """What the Hessian is made of: the dense blocks' shared matrices (by identity) with their
    scales, the diagonal blocks' values; equal keys mean an equal Hessian."""
    return [(q.base, q.scale, np.asarray(q.index).tobytes()) if q.base is not None
            else (None, q.diag.tobytes(), np.asarray(q.index).tobytes()) for q in sf.quad]


def _same_key(a, b) -> bool:
    if a is None or b is None or len(a) != len(b):
        return False
    return all(x[0] is y[0] and x[1:] == y[1:] for x, y in zip(a, b))


def plugin_options(plugin: str, opts) -> dict:
    return {"primal_feasibility_tolerance": opts.tolerance,
            "dual_feasibility_tolerance": opts.tolerance,
            **opts.limits("time_limit", "qp_iteration_limit", "threads")}


def mip_options(opts) -> dict:
    """A MILP: the relative gap to the tolerance (default 1e-4), the integrality tolerance
    likewise (default 1e-6)."""
    return {"mip_rel_gap": opts.tolerance, "mip_feasibility_tolerance": opts.tolerance}


BACKEND = Backend(
    name="highs", classes=frozenset(("LP", "QP", "MILP")), mip_options=mip_options, plugins=("highs",), modules=("highspy",),
    matrix=solve, plugin_options=plugin_options, dual_sign={"highs": {1: 1.0, -1: 1.0}},
    # its QP solver iterates on, for up to the time limit, on an unbounded QP (the hard-margin
    # dual of 6 points that no hyperplane separates ran > 30 s): the LP check runs first
    proves_unbounded=False,
    install="pip install highspy", note="active-set QP; takes no quadratic constraints or cones",
    project=True,
    # first on an LP and a MILP; on a QP after PIQP and Clarabel (benchmarks/results.md)
    auto={"LP": 10, "MILP": 10, "QP": 30})

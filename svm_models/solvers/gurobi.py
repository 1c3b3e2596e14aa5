"""Gurobi: LP, QP, SOCP, QCQP, MILP, MIQP (``pip install gurobipy``; Pyomo plugin ``gurobi_direct``).

The size-limited licence that comes with pip's gurobipy refuses (error 10010) any model with
a quadratic part above 200 variables and any model above 2000 variables or 2000 linear
constraints: mapped to :class:`~svm_models.errors.LicenseLimitError` with a message that
says what fits. Gurobi's ``Pi``/``QCPi`` are d(objective)/d(rhs): the sensitivity convention
as they are. Cones go in as quadratic rows in squared form (``sum u_r^2 <= u_0^2``,
``u_0 >= 0``), which Gurobi recognises as second-order cones. With ``switch="indicator"``
a mixed-integer SVM is set on ``gurobi_persistent`` and its big-M rows are replaced by
Gurobi's indicator constraints (:func:`add_indicators`).
"""

from __future__ import annotations

import numpy as np

from ..errors import LicenseLimitError, SolverError
from ..model.pyomo_compat import persistent_native, persistent_swap
from ..model.standard_form import cones_as_rows
from ..status import Status
from ..tolerances import GUROBI_BARCONV_FLOOR, GUROBI_QCP_CONV_FLOOR, GUROBI_TOL_FLOOR
from .base import Backend, MatrixResult

MAX_QUADRATIC_VARS = 200
MAX_VARS = 2000
MAX_ROWS = 2000


def licence_message(n: int, m: int, quadratic: bool, hint: str = "", conic: bool = False) -> str:
    return (f"Gurobi refused the model: 'Model too large for size-limited license' (error 10010). "
            f"This model has {n} variables and {m} linear constraints"
            f"{' with a quadratic part' if quadratic else ''}; the size-limited licence that comes "
            f"with pip's gurobipy takes quadratic models up to {MAX_QUADRATIC_VARS} variables and "
            f"any model up to {MAX_VARS} variables and {MAX_ROWS} constraints.{hint} Use a smaller "
            "problem, a full Gurobi licence, or another backend ("
            f"{'clarabel, ipopt, scip' if conic else 'highs, piqp, ipopt, clarabel'}).")


def solve(sf, opts, state=None) -> MatrixResult:
    """Gurobi through gurobipy's matrix API."""
    import gurobipy as gp
    from gurobipy import GRB

    n0, m0, k0 = sf.n, sf.m, len(sf.qrows)
    lifted = cones_as_rows(sf)
    try:
        env = gp.Env(empty=True)
        env.setParam("OutputFlag", 1 if opts.verbose else 0)
        env.start()
        m = gp.Model(env=env)
        x = m.addMVar(lifted.n, lb=np.where(np.isfinite(lifted.lx), lifted.lx, -GRB.INFINITY),
                      ub=np.where(np.isfinite(lifted.ux), lifted.ux, GRB.INFINITY))
        Q = lifted.hessian_sparse() * 0.5 if lifted.quad else None
        m.setMObjective(Q, lifted.c, lifted.const, sense=GRB.MINIMIZE)
        eq_idx, Aeq, beq, in_idx, Ain, lin, uin = lifted.equality_split()
        groups = []
        if len(eq_idx):
            groups.append((eq_idx, m.addMConstr(Aeq, x, "=", beq)))
        up, lo = np.isfinite(uin), np.isfinite(lin)
        if up.any():
            groups.append((in_idx[up], m.addMConstr(Ain[up], x, "<", uin[up])))
        if lo.any():
            groups.append((in_idx[lo], m.addMConstr(Ain[lo], x, ">", lin[lo])))
        qcons = [m.addMQConstr((lifted.hessian_sparse(q.quad) * 0.5).tocoo(), q.linear, "<",
                               q.upper, x, x, x) for q in lifted.qrows]
        tol = opts.tolerance
        m.Params.OptimalityTol = max(tol, GUROBI_TOL_FLOOR)
        m.Params.FeasibilityTol = max(tol, GUROBI_TOL_FLOOR)
        m.Params.BarConvTol = max(tol * 1e-2, GUROBI_BARCONV_FLOOR)
        m.Params.BarQCPConvTol = max(tol, GUROBI_QCP_CONV_FLOOR)
        if qcons:
            m.Params.QCPDual = 1
        for key, val in {**opts.limits("TimeLimit", "BarIterLimit", "Threads"),
                         **opts.options}.items():
            m.setParam(key, val)
        m.optimize()
    except gp.GurobiError as exc:
        if getattr(exc, "errno", None) == 10010:
            raise LicenseLimitError(licence_message(lifted.n, lifted.m,
                                                    bool(lifted.quad or lifted.qrows),
                                                    conic=bool(sf.cones or sf.qrows))) from None
        raise SolverError(f"gurobi failed: {exc}") from None
    S = m.Status
    status = {GRB.OPTIMAL: Status.optimal, GRB.INFEASIBLE: Status.infeasible,
              GRB.UNBOUNDED: Status.unbounded, GRB.INF_OR_UNBD: Status.infeasible_or_unbounded,
              GRB.TIME_LIMIT: Status.time_limit, GRB.ITERATION_LIMIT: Status.iteration_limit,
              GRB.NUMERIC: Status.numerical_error,
              GRB.SUBOPTIMAL: Status.numerical_error}.get(S, Status.error)
    res = MatrixResult(status=status, message=f"gurobi status {S}", interface="gurobipy")
    if status is Status.optimal:
        try:
            xv = np.asarray(x.X)
            duals = np.zeros(lifted.m)
            for idx, cons in groups:
                duals[idx] += np.asarray(cons.Pi)
            qd = np.array([float(np.atleast_1d(qc.QCPi)[0]) for qc in qcons])
        except gp.GurobiError as exc:
            # "optimal" without the values of an optimum (a poly kernel of entries 1e16, on
            # which it had stopped at its numerical limits): numerical trouble, not an error
            res.status, res.message = Status.numerical_error, f"gurobi status {S}, but {exc}"
            m.dispose()
            env.dispose()
            return res
        res.x = xv[:n0]
        res.row_duals = duals[:m0]
        res.qrow_duals = qd[:k0]
        res.cone_duals = qd[k0:] if sf.cones else None
        res.objective = float(m.ObjVal)
        res.iterations = int(m.BarIterCount)
    m.dispose()
    env.dispose()
    return res


def plugin_options(plugin: str, opts) -> dict:
    tol = opts.tolerance
    o = {"OptimalityTol": max(tol, GUROBI_TOL_FLOOR), "FeasibilityTol": max(tol, GUROBI_TOL_FLOOR),
         "BarConvTol": max(tol * 1e-2, GUROBI_BARCONV_FLOOR),
         "BarQCPConvTol": max(tol, GUROBI_QCP_CONV_FLOOR), "QCPDual": 1}
    return {**o, **opts.limits("TimeLimit", "BarIterLimit", "Threads")}


def mip_options(opts) -> dict:
    """A mixed-integer model: the relative gap to the tolerance (default 1e-4), integrality
    to its floor 1e-9 (default 1e-5: a binary of 1e-5 would switch on a fraction of a big-M
    row)."""
    tol = opts.tolerance
    return {"MIPGap": tol, "IntFeasTol": max(tol, GUROBI_TOL_FLOOR)}


def explain_exception(exc, model):
    text = str(exc)
    if "10010" in text or "size-limited" in text:
        import pyomo.environ as pyo

        n = sum(1 for _ in model.component_data_objects(pyo.Var, active=True))
        cons = list(model.component_data_objects(pyo.Constraint, active=True))
        conic = any(c.body.polynomial_degree() != 1 for c in cons)
        return LicenseLimitError(licence_message(n, len(cons), True, conic=conic))
    return None


def add_indicators(solver, rows) -> int:
    """``switch="indicator"``: on ``gurobi_persistent`` set to the instance, each big-M row of
    ``rows`` replaced by Gurobi's indicator constraint ``addGenConstrIndicator(binary, on,
    sum(coef * var) >= rhs)`` on the mapped variables; every other row stays as Pyomo put
    it. Returns the number of indicator constraints added."""
    import gurobipy as gp
    from gurobipy import GRB

    native, var = persistent_native(solver)
    native.update()   # (the rows Pyomo added are pending until then)
    for r in rows:
        lhs = gp.LinExpr([c for _, c in r.terms], [var[v] for v, _ in r.terms])
        ind = native.addGenConstrIndicator(var[r.binary], bool(r.on), lhs, GRB.GREATER_EQUAL,
                                           float(r.rhs))
        native.remove(persistent_swap(solver, r.row, ind))
    native.update()
    return len(rows)


def retry_options(exc):
    """Gurobi refuses a non-convex quadratic model unless told to solve it globally."""
    return {"NonConvex": 2} if "NonConvex" in str(exc) else None


BACKEND = Backend(
    name="gurobi", classes=frozenset(("LP", "QP", "SOCP", "QCQP", "MILP", "MIQP")),
    plugins=("gurobi_direct",), mip_options=mip_options,
    indicator_plugin="gurobi_persistent", add_indicators=add_indicators,
    modules=("gurobipy",), matrix=solve, global_opt=True, max_vars=MAX_VARS,
    max_quadratic_vars=MAX_QUADRATIC_VARS, max_rows=MAX_ROWS, plugin_options=plugin_options,
    explain_exception=explain_exception, retry_options=retry_options,
    dual_sign={"gurobi_direct": {1: 1.0, -1: 1.0}, "gurobi_persistent": {1: 1.0, -1: 1.0}},
    install="pip install gurobipy",
    note="pip licence: quadratic models up to 200 variables; global on non-convex models",
    project=True,
    # after the backends without a size limit: the pip licence refuses larger models, and a
    # refusal ends "auto" (a MIQP: after SCIP, for the same reason)
    auto={c: 80 for c in ("LP", "QP", "SOCP", "QCQP", "MILP", "MIQP")})

"""Backends fed with matrices: HiGHS (highspy), Ipopt (cyipopt), PIQP, Clarabel, Gurobi.

Each adapter takes a :class:`~svm_models.structure.StandardForm` (a minimisation) and a
:class:`~svm_models.solvers.SolverOptions`, and returns a :class:`MatrixResult` whose duals
are already normalised to the sensitivity convention of the standard form:
``row_duals[r] = d(optimal value)/d(active bound of row r)`` and
``qrow_duals[k] = d(optimal value)/d(upper bound of quadratic row k)``.
Each adapter's sign rule is derived from the backend's documented Lagrangian and checked by
``tests/test_solvers.py`` against a problem with known multipliers.

This module knows nothing about SVMs: it is the matrix half of the solver layer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .errors import LicenseLimitError, SolverError

INF = float("inf")


@dataclass
class MatrixResult:
    status: str                 # normalised: optimal, infeasible, unbounded, infeasible_or_unbounded,
    #                             time_limit, iteration_limit, numerical_error, error
    x: np.ndarray | None = None
    row_duals: np.ndarray | None = None
    qrow_duals: np.ndarray | None = None
    objective: float | None = None   # standard-form (minimisation) objective
    iterations: int | None = None
    message: str = ""
    interface: str = ""
    extra: dict = field(default_factory=dict)


def _tol(opts, default=1e-9):
    return default if opts.tol is None else float(opts.tol)


# ---------------------------------------------------------------------------------------
# HiGHS


def solve_highs(sf, opts, state=None) -> MatrixResult:
    """HiGHS through highspy (LP and convex QP). ``state`` (a dict) keeps the Highs object
    between calls, so a re-solve with changed bounds or costs is warm-started."""
    import highspy

    inf = highspy.kHighsInf
    h = None if state is None else state.get("highs")
    A = sf.A.tocsc()
    if h is not None and state.get("pattern") == (sf.n, sf.m, A.nnz):
        # warm re-solve: only bounds and costs change between points of a path
        h.changeColsBounds(sf.n, np.arange(sf.n, dtype=np.int32),
                           np.where(np.isfinite(sf.lx), sf.lx, -inf),
                           np.where(np.isfinite(sf.ux), sf.ux, inf))
        h.changeColsCost(sf.n, np.arange(sf.n, dtype=np.int32), sf.c)
        H = sf.hessian_sparse(triangle="lower")
        hess = highspy.HighsHessian()
        hess.dim_ = sf.n
        hess.format_ = highspy.HessianFormat.kTriangular
        hess.start_ = H.indptr.astype(np.int32)
        hess.index_ = H.indices.astype(np.int32)
        hess.value_ = H.data
        h.passHessian(hess)
    else:
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
        lp.a_matrix_.index_ = A.indices.astype(np.int32)
        lp.a_matrix_.value_ = A.data
        model = highspy.HighsModel()
        model.lp_ = lp
        if sf.quad:
            H = sf.hessian_sparse(triangle="lower")
            model.hessian_.dim_ = sf.n
            model.hessian_.format_ = highspy.HessianFormat.kTriangular
            model.hessian_.start_ = H.indptr.astype(np.int32)
            model.hessian_.index_ = H.indices.astype(np.int32)
            model.hessian_.value_ = H.data
        h.passModel(model)
        if state is not None:
            state["highs"] = h
            state["pattern"] = (sf.n, sf.m, A.nnz)
    tol = _tol(opts)
    # HiGHS regularises the QP Hessian by 1e-7 by default, which moves the optimum by as much
    # (visible with the factor form, whose alpha block has no curvature): scale it with tol.
    for key, val in (("primal_feasibility_tolerance", tol), ("dual_feasibility_tolerance", tol),
                     ("qp_regularization_value", 0.1 * tol),
                     ("time_limit", opts.time_limit), ("threads", opts.threads),
                     ("qp_iteration_limit", opts.iter_limit)):
        if val is not None:
            h.setOptionValue(key, val)
    for key, val in opts.options.items():
        h.setOptionValue(key, val)
    h.run()
    st = h.getModelStatus()
    M = highspy.HighsModelStatus
    status = {M.kOptimal: "optimal", M.kInfeasible: "infeasible", M.kUnbounded: "unbounded",
              M.kUnboundedOrInfeasible: "infeasible_or_unbounded", M.kTimeLimit: "time_limit",
              M.kIterationLimit: "iteration_limit"}.get(st, "error")
    res = MatrixResult(status=status, message=h.modelStatusToString(st), interface="highspy")
    if status == "optimal":
        sol = h.getSolution()
        res.x = np.asarray(sol.col_value)
        # HiGHS row duals for a minimisation are d(obj)/d(row activity bound): as we need
        res.row_duals = np.asarray(sol.row_dual)
        res.objective = h.getInfo().objective_function_value
        res.iterations = h.getInfo().qp_iteration_count
    return res


# ---------------------------------------------------------------------------------------
# PIQP


def solve_piqp(sf, opts, state=None) -> MatrixResult:
    """PIQP (proximal interior point; LP and convex QP), dense or sparse by the Hessian's fill."""
    import piqp

    if sf.qrows:
        raise SolverError("piqp takes no quadratic constraints")
    P = None
    nnz_dense = sum(len(q.index) ** 2 for q in sf.quad if q.matrix is not None)
    dense = nnz_dense > 0.1 * sf.n * sf.n
    eq_idx, Aeq, beq, in_idx, Ain, lin, uin = sf.equality_split()
    lx = np.where(np.isfinite(sf.lx), sf.lx, -INF)
    ux = np.where(np.isfinite(sf.ux), sf.ux, INF)
    if dense:
        solver = piqp.DenseSolver()
        P = np.asfortranarray(sf.hessian_dense())
        args = [P, sf.c,
                np.asfortranarray(Aeq.toarray()) if len(eq_idx) else None,
                beq if len(eq_idx) else None,
                np.asfortranarray(Ain.toarray()) if len(in_idx) else None,
                lin if len(in_idx) else None, uin if len(in_idx) else None, lx, ux]
    else:
        solver = piqp.SparseSolver()
        P = sf.hessian_sparse(triangle="upper")
        args = [P, sf.c, Aeq.tocsc() if len(eq_idx) else None, beq if len(eq_idx) else None,
                Ain.tocsc() if len(in_idx) else None, lin if len(in_idx) else None,
                uin if len(in_idx) else None, lx, ux]
    s = solver.settings
    tol = _tol(opts)
    s.eps_abs = tol
    s.eps_rel = 0.0 if opts.tol is None else tol
    s.verbose = bool(opts.verbose)
    if opts.iter_limit is not None:
        s.max_iter = int(opts.iter_limit)
    for key, val in opts.options.items():
        setattr(s, key, val)
    solver.setup(*args)
    st = solver.solve()
    r = solver.result
    name = str(st).split(".")[-1]
    status = {"PIQP_SOLVED": "optimal", "PIQP_PRIMAL_INFEASIBLE": "infeasible",
              "PIQP_DUAL_INFEASIBLE": "unbounded", "PIQP_MAX_ITER_REACHED": "iteration_limit",
              "PIQP_NUMERICS": "numerical_error"}.get(name, "error")
    res = MatrixResult(status=status, message=name, interface=f"piqp-{'dense' if dense else 'sparse'}")
    if status == "optimal":
        res.x = np.array(r.x)
        duals = np.zeros(sf.m)
        # PIQP's Lagrangian: f + y'(Ax - b) + z_u'(Gx - h_u) + z_l'(h_l - Gx)
        duals[eq_idx] = -np.asarray(r.y)
        duals[in_idx] = np.asarray(r.z_l) - np.asarray(r.z_u)
        res.row_duals = duals
        res.objective = sf.objective(res.x)
        res.iterations = int(r.info.iter)
    return res


# ---------------------------------------------------------------------------------------
# Clarabel (conic: QP, and convex quadratic constraints in second-order-cone form)


def _psd_root(M: np.ndarray) -> np.ndarray:
    """R with R'R = M for a symmetric PSD M (eigen-decomposition; tiny negatives clipped)."""
    w, V = np.linalg.eigh((M + M.T) / 2)
    keep = w > max(w.max(), 0.0) * 1e-13
    return (V[:, keep] * np.sqrt(w[keep])).T


def solve_clarabel(sf, opts, state=None) -> MatrixResult:
    """Clarabel (interior point; LP, convex QP, convex QCQP as second-order cones)."""
    import clarabel

    n = sf.n
    blocks, b, cones = [], [], []
    row_of = []   # (kind, index, side) for dual recovery
    eq_idx, Aeq, beq, in_idx, Ain, lin, uin = sf.equality_split()
    if len(eq_idx):
        blocks.append(Aeq); b.append(beq); cones.append(clarabel.ZeroConeT(len(eq_idx)))
        row_of.append(("eq", eq_idx))
    up = np.isfinite(uin); lo = np.isfinite(lin)
    I = sp.identity(n, format="csr")
    nonneg_rows, nonneg_b, nonneg_map = [], [], []
    if up.any():
        nonneg_rows.append(Ain[up]); nonneg_b.append(uin[up]); nonneg_map.append(("row_u", in_idx[up]))
    if lo.any():
        nonneg_rows.append(-Ain[lo]); nonneg_b.append(-lin[lo]); nonneg_map.append(("row_l", in_idx[lo]))
    xu = np.isfinite(sf.ux); xl = np.isfinite(sf.lx)
    if xu.any():
        nonneg_rows.append(I[xu]); nonneg_b.append(sf.ux[xu]); nonneg_map.append(("x_u", None))
    if xl.any():
        nonneg_rows.append(-I[xl]); nonneg_b.append(-sf.lx[xl]); nonneg_map.append(("x_l", None))
    if nonneg_rows:
        Ann = sp.vstack(nonneg_rows, format="csr")
        blocks.append(Ann); b.append(np.concatenate(nonneg_b))
        cones.append(clarabel.NonnegativeConeT(Ann.shape[0]))
    soc_rows = []
    for k, q in enumerate(sf.qrows):
        # sum x'Mx + a'x <= u  as  ||(2 R x, t - 1)|| <= t + 1 with t = u - a'x
        Rs = []
        for blk in q.quad:
            R = _psd_root(blk.matrix) if blk.matrix is not None else np.diag(np.sqrt(np.maximum(blk.diag, 0)))
            Rfull = sp.csr_matrix((R.shape[0], n))
            Rfull = sp.csr_matrix((R.ravel(), (np.repeat(np.arange(R.shape[0]), R.shape[1]),
                                               np.tile(blk.index, R.shape[0]))), shape=(R.shape[0], n))
            Rs.append(Rfull)
        Rall = sp.vstack(Rs, format="csr")
        a = sp.csr_matrix(q.linear[None, :])
        Ak = sp.vstack([a, a, -2.0 * Rall], format="csr")
        bk = np.concatenate([[q.upper + 1.0, q.upper - 1.0], np.zeros(Rall.shape[0])])
        blocks.append(Ak); b.append(bk); cones.append(clarabel.SecondOrderConeT(Ak.shape[0]))
        soc_rows.append(Ak.shape[0])
    A = sp.vstack(blocks, format="csc") if blocks else sp.csc_matrix((0, n))
    bvec = np.concatenate(b) if b else np.zeros(0)
    P = sf.hessian_sparse(triangle="upper") if sf.quad else sp.csc_matrix((n, n))
    s = clarabel.DefaultSettings()
    s.verbose = bool(opts.verbose)
    tol = _tol(opts)
    s.tol_gap_abs = tol
    s.tol_gap_rel = tol
    s.tol_feas = tol
    s.tol_ktratio = max(tol * 1e-2, 1e-12)
    if opts.time_limit is not None:
        s.time_limit = float(opts.time_limit)
    if opts.iter_limit is not None:
        s.max_iter = int(opts.iter_limit)
    if opts.threads is not None:
        s.max_threads = int(opts.threads)
    for key, val in opts.options.items():
        setattr(s, key, val)
    solver = clarabel.DefaultSolver(P, sf.c, A, bvec, cones, s)
    sol = solver.solve()
    name = str(sol.status).split(".")[-1]
    status = {"Solved": "optimal", "PrimalInfeasible": "infeasible", "DualInfeasible": "unbounded",
              "MaxIterations": "iteration_limit", "MaxTime": "time_limit",
              "NumericalError": "numerical_error", "InsufficientProgress": "numerical_error"}.get(name, "error")
    res = MatrixResult(status=status, message=name, interface="clarabel")
    if status == "optimal":
        res.x = np.array(sol.x)
        z = np.array(sol.z)
        duals = np.zeros(sf.m)
        pos = 0
        # Clarabel: s = b - Ax in K, z in K*: d(optimal value)/d b = -z
        if len(eq_idx):
            duals[eq_idx] = -z[:len(eq_idx)]
            pos = len(eq_idx)
        for kind, idx in nonneg_map:
            cnt = len(idx) if idx is not None else int((xu if kind == "x_u" else xl).sum())
            zz = z[pos:pos + cnt]
            if kind == "row_u":
                duals[idx] += -zz
            elif kind == "row_l":
                duals[idx] += zz
            pos += cnt
        qd = []
        for cnt in soc_rows:
            zz = z[pos:pos + cnt]
            qd.append(-(zz[0] + zz[1]))
            pos += cnt
        res.row_duals = duals
        res.qrow_duals = np.array(qd)
        res.objective = sf.objective(res.x)
        res.iterations = int(sol.iterations)
    return res


# ---------------------------------------------------------------------------------------
# Ipopt through cyipopt, with numpy callbacks (dense blocks kept dense)


class _IpoptProblem:
    def __init__(self, sf):
        self.sf = sf
        n = sf.n
        self.A = sf.A.tocsr()
        # Hessian: union pattern (lower triangle) of objective and quadratic-row blocks
        contrib = [sf.hessian_sparse(triangle="lower")]
        for q in sf.qrows:
            contrib.append(sf.hessian_sparse(q.quad, triangle="lower"))
        keys = [np.asarray(H.tocoo().row, dtype=np.int64) * n + H.tocoo().col for H in contrib]
        union = np.unique(np.concatenate(keys)) if keys else np.zeros(0, dtype=np.int64)
        self.h_rows = (union // n).astype(np.int64)
        self.h_cols = (union % n).astype(np.int64)
        self.h_vals = []
        for H, k in zip(contrib, keys):
            v = np.zeros(len(union))
            v[np.searchsorted(union, k)] = H.tocoo().data
            self.h_vals.append(v)
        # Jacobian: linear rows, then one dense-pattern row per quadratic constraint
        Acoo = self.A.tocoo()
        rows, cols = [Acoo.row], [Acoo.col]
        self.q_idx = []
        for k, q in enumerate(sf.qrows):
            idx = np.unique(np.concatenate([blk.index for blk in q.quad] + [np.flatnonzero(q.linear)]))
            self.q_idx.append(idx)
            rows.append(np.full(len(idx), sf.m + k)); cols.append(idx)
        self.j_rows = np.concatenate(rows)
        self.j_cols = np.concatenate(cols)

    def objective(self, x):
        return self.sf.objective(x)

    def gradient(self, x):
        g = self.sf.c.copy()
        for q in self.sf.quad:
            g[q.index] += q.gradient(x)
        return g

    def _qvalue(self, q, x):
        return sum(b.value(x) for b in q.quad) + float(q.linear @ x)

    def constraints(self, x):
        out = self.A @ x
        if self.sf.qrows:
            out = np.concatenate([out, [self._qvalue(q, x) for q in self.sf.qrows]])
        return out

    def jacobianstructure(self):
        return self.j_rows, self.j_cols

    def jacobian(self, x):
        parts = [self.A.tocoo().data] if self.sf.m else [np.zeros(0)]
        for q, idx in zip(self.sf.qrows, self.q_idx):
            g = q.linear.copy()
            for b in q.quad:
                g[b.index] += b.gradient(x)
            parts.append(g[idx])
        return np.concatenate(parts)

    def hessianstructure(self):
        return self.h_rows, self.h_cols

    def hessian(self, x, lagrange, obj_factor):
        v = obj_factor * self.h_vals[0]
        for k in range(len(self.sf.qrows)):
            v = v + lagrange[self.sf.m + k] * self.h_vals[k + 1]
        return v


def solve_ipopt(sf, opts, state=None) -> MatrixResult:
    """Ipopt 3.14 through cyipopt with exact numpy derivatives (LP, QP, QCQP)."""
    import cyipopt

    prob = _IpoptProblem(sf)
    cl = np.concatenate([sf.lA, np.full(len(sf.qrows), -1e20)])
    cu = np.concatenate([sf.uA, [q.upper for q in sf.qrows]])
    big = 1e20
    nlp = cyipopt.Problem(n=sf.n, m=len(cl), problem_obj=prob,
                          lb=np.where(np.isfinite(sf.lx), sf.lx, -big),
                          ub=np.where(np.isfinite(sf.ux), sf.ux, big),
                          cl=np.where(np.isfinite(cl), cl, -big), cu=np.where(np.isfinite(cu), cu, big))
    nlp.add_option("tol", _tol(opts))
    nlp.add_option("print_level", 5 if opts.verbose else 0)
    nlp.add_option("sb", "yes")
    nlp.add_option("bound_relax_factor", 0.0)
    if not sf.qrows:
        nlp.add_option("hessian_constant", "yes")
        nlp.add_option("jac_c_constant", "yes")
        nlp.add_option("jac_d_constant", "yes")
    if opts.time_limit is not None:
        nlp.add_option("max_wall_time", float(opts.time_limit))
    if opts.iter_limit is not None:
        nlp.add_option("max_iter", int(opts.iter_limit))
    for key, val in opts.options.items():
        nlp.add_option(key, val)
    x0 = np.clip(np.zeros(sf.n), np.where(np.isfinite(sf.lx), sf.lx, -big), np.where(np.isfinite(sf.ux), sf.ux, big))
    x, info = nlp.solve(x0)
    code = info["status"]
    status = {0: "optimal", 1: "optimal", 2: "infeasible", -1: "iteration_limit",
              -4: "time_limit", 4: "unbounded", 3: "numerical_error",
              -2: "numerical_error", -3: "numerical_error"}.get(code, "error")
    res = MatrixResult(status=status, message=info["status_msg"].decode() if isinstance(info["status_msg"], bytes) else str(info["status_msg"]),
                       interface="cyipopt")
    if status == "optimal":
        res.x = np.asarray(x)
        lam = np.asarray(info["mult_g"])
        # Ipopt's Lagrangian f + lambda'g: d(optimal value)/d(active bound) = -lambda
        res.row_duals = -lam[:sf.m]
        res.qrow_duals = -lam[sf.m:]
        res.objective = sf.objective(res.x)
    return res


# ---------------------------------------------------------------------------------------
# Gurobi through gurobipy's matrix API


def solve_gurobi(sf, opts, state=None) -> MatrixResult:
    """Gurobi (LP, QP, QCQP) through gurobipy's matrix API."""
    import gurobipy as gp
    from gurobipy import GRB

    try:
        env = gp.Env(empty=True)
        env.setParam("OutputFlag", 1 if opts.verbose else 0)
        env.start()
        m = gp.Model(env=env)
        x = m.addMVar(sf.n, lb=np.where(np.isfinite(sf.lx), sf.lx, -GRB.INFINITY),
                      ub=np.where(np.isfinite(sf.ux), sf.ux, GRB.INFINITY))
        Q = sf.hessian_sparse() * 0.5 if sf.quad else None
        m.setMObjective(Q, sf.c, sf.const, sense=GRB.MINIMIZE)
        eq_idx, Aeq, beq, in_idx, Ain, lin, uin = sf.equality_split()
        groups = []
        if len(eq_idx):
            groups.append(("eq", eq_idx, m.addMConstr(Aeq, x, "=", beq)))
        up = np.isfinite(uin); lo = np.isfinite(lin)
        if up.any():
            groups.append(("u", in_idx[up], m.addMConstr(Ain[up], x, "<", uin[up])))
        if lo.any():
            groups.append(("l", in_idx[lo], m.addMConstr(Ain[lo], x, ">", lin[lo])))
        qcons = []
        for q in sf.qrows:
            Qk = sf.hessian_sparse(q.quad) * 0.5
            qcons.append(m.addMQConstr(Qk.tocoo(), q.linear, "<", q.upper, x, x, x))
        tol = _tol(opts)
        m.Params.OptimalityTol = max(tol, 1e-9)
        m.Params.FeasibilityTol = max(tol, 1e-9)
        m.Params.BarConvTol = max(tol * 1e-2, 1e-10)
        m.Params.BarQCPConvTol = max(tol * 1e-2, 1e-10)
        if qcons:
            m.Params.QCPDual = 1
        if opts.time_limit is not None:
            m.Params.TimeLimit = opts.time_limit
        if opts.iter_limit is not None:
            m.Params.BarIterLimit = opts.iter_limit
        if opts.threads is not None:
            m.Params.Threads = opts.threads
        for key, val in opts.options.items():
            m.setParam(key, val)
        m.optimize()
    except gp.GurobiError as exc:
        if getattr(exc, "errno", None) == 10010:
            raise LicenseLimitError(gurobi_licence_message(sf.n, sf.m, bool(sf.quad or sf.qrows))) from None
        raise SolverError(f"gurobi failed: {exc}") from None
    S = m.Status
    status = {GRB.OPTIMAL: "optimal", GRB.INFEASIBLE: "infeasible", GRB.UNBOUNDED: "unbounded",
              GRB.INF_OR_UNBD: "infeasible_or_unbounded", GRB.TIME_LIMIT: "time_limit",
              GRB.ITERATION_LIMIT: "iteration_limit", GRB.NUMERIC: "numerical_error",
              GRB.SUBOPTIMAL: "numerical_error"}.get(S, "error")
    res = MatrixResult(status=status, message=f"gurobi status {S}", interface="gurobipy")
    if status == "optimal":
        res.x = np.asarray(x.X)
        duals = np.zeros(sf.m)
        for _, idx, cons in groups:
            duals[idx] += np.asarray(cons.Pi)   # Gurobi's Pi is d(objective)/d(rhs)
        res.row_duals = duals
        res.qrow_duals = np.array([float(np.atleast_1d(qc.QCPi)[0]) for qc in qcons])
        res.objective = float(m.ObjVal)
        res.iterations = int(m.BarIterCount)
    m.dispose()
    env.dispose()
    return res


def gurobi_licence_message(n: int, m: int, quadratic: bool) -> str:
    return (f"Gurobi refused the model: 'Model too large for size-limited license' (error 10010). "
            f"This model has {n} variables and {m} linear constraints"
            f"{' with a quadratic part' if quadratic else ''}; the size-limited licence that comes "
            "with pip's gurobipy takes quadratic models up to 200 variables and any model up to "
            "2000 variables and 2000 constraints. Use a smaller problem, a full Gurobi licence, "
            "or another backend (highs, piqp, ipopt, clarabel).")


ADAPTERS = {
    "highs": solve_highs,
    "piqp": solve_piqp,
    "clarabel": solve_clarabel,
    "ipopt": solve_ipopt,
    "gurobi": solve_gurobi,
}

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

import contextlib
import ctypes
import ctypes.util
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .errors import LicenseLimitError, SolverError
from .structure import _as_slice

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


_FENV = None


@contextlib.contextmanager
def preserved_fpu():
    """Restore the floating-point environment after a call into Ipopt.

    Ipopt (through cyipopt) leaves the x87 unit at 53-bit precision; Gurobi's QCQP barrier
    then ends 'sub-optimal' on every later solve in the same process. Saving the environment
    with fegetenv and restoring it with fesetenv (glibc's libm, via ctypes) keeps backends
    independent of the order in which they are used."""
    global _FENV
    if _FENV is None:
        try:
            libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
            _FENV = (libm.fegetenv, libm.fesetenv)
        except OSError:
            _FENV = False
    if not _FENV:
        yield
        return
    buf = ctypes.create_string_buffer(256)  # fenv_t is 28 bytes on x86-64 glibc
    _FENV[0](buf)
    try:
        yield
    finally:
        _FENV[1](buf)


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
        key = _hessian_key(sf)
        if not _same_key(key, state.get("hessian_key")):  # e.g. a 2-norm C is in the Hessian
            H = sf.hessian_sparse(triangle="lower")
            hess = highspy.HighsHessian()
            hess.dim_ = sf.n
            hess.format_ = highspy.HessianFormat.kTriangular
            hess.start_ = H.indptr.astype(np.int32)
            hess.index_ = H.indices.astype(np.int32, copy=False)
            hess.value_ = H.data
            h.passHessian(hess)
            state["hessian_key"] = key
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
        lp.a_matrix_.index_ = A.indices.astype(np.int32, copy=False)
        lp.a_matrix_.value_ = A.data
        model = highspy.HighsModel()
        model.lp_ = lp
        if sf.quad:
            H = sf.hessian_sparse(triangle="lower")
            model.hessian_.dim_ = sf.n
            model.hessian_.format_ = highspy.HessianFormat.kTriangular
            model.hessian_.start_ = H.indptr.astype(np.int32)
            model.hessian_.index_ = H.indices.astype(np.int32, copy=False)
            model.hessian_.value_ = H.data
        h.passModel(model)
        if state is not None:
            state["highs"] = h
            state["pattern"] = (sf.n, sf.m, A.nnz)
            state["hessian_key"] = _hessian_key(sf)
    tol = _tol(opts)
    # HiGHS's QP regularisation (1e-7) is left at its default: smaller values make its
    # active-set solver stall on singular Hessians (a representer primal with a low-rank
    # kernel); the ~1e-7 shift it causes in alpha is removed by postprocess.polish_dual.
    for key, val in (("primal_feasibility_tolerance", tol), ("dual_feasibility_tolerance", tol),
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
        if sf.quad:
            viol = kkt_violation(sf, res.x, res.row_duals)
            if viol > max(HIGHS_KKT_REL, 1e3 * tol):
                # seen with HiGHS 1.15 on dense QPs of a few thousand variables: "Optimal",
                # with every variable at a bound and a wrong objective
                res.status = "numerical_error"
                res.message = (f"HiGHS reported an optimal solution that violates the optimality "
                               f"conditions (relative reduced-cost violation {viol:.2g}); a known "
                               "weakness of its QP solver on large dense problems: use piqp, "
                               "clarabel or ipopt")
    return res


#: relative violation of the optimality conditions above which a HiGHS "optimal" is refused
HIGHS_KKT_REL = 1e-5


def kkt_violation(sf, x, row_duals) -> float:
    """Largest violation of the optimality conditions of a QP (no quadratic rows) at ``x`` with
    row multipliers ``row_duals`` (sensitivity convention), relative to ``max(1, |grad|)``: the
    reduced cost ``grad f(x) - A' mu`` must vanish on free variables, be >= 0 at a lower bound
    and <= 0 at an upper bound."""
    g = sf.gradient(x)
    rc = g - sf.A.T @ np.asarray(row_duals, dtype=float)
    span = np.maximum(1.0, np.abs(np.where(np.isfinite(sf.lx), sf.lx, 0.0))
                      + np.abs(np.where(np.isfinite(sf.ux), sf.ux, 0.0)))
    at_lo = np.isfinite(sf.lx) & (x - sf.lx <= 1e-7 * span)
    at_up = np.isfinite(sf.ux) & (sf.ux - x <= 1e-7 * span) & ~at_lo
    free = ~at_lo & ~at_up
    viol = np.zeros_like(rc)
    viol[free] = np.abs(rc[free])
    viol[at_lo] = np.maximum(0.0, -rc[at_lo])
    viol[at_up] = np.maximum(0.0, rc[at_up])
    return float(viol.max(initial=0.0)) / max(1.0, float(np.max(np.abs(g), initial=0.0)))


def _hessian_key(sf) -> list:
    """What the Hessian is made of: the dense blocks' shared matrices (by identity) with their
    scales, the diagonal blocks' values; equal keys mean an equal Hessian."""
    return [(q.base, q.scale, np.asarray(q.index).tobytes()) if q.base is not None
            else (None, q.diag.tobytes(), np.asarray(q.index).tobytes()) for q in sf.quad]


def _same_key(a, b) -> bool:
    if a is None or b is None or len(a) != len(b):
        return False
    return all(x[0] is y[0] and x[1:] == y[1:] for x, y in zip(a, b))


def _hessian_dense_f(sf) -> np.ndarray:
    """P for PIQP's dense interface (column-major). When P is one recorded matrix as it is
    (one dense block over all of x with weight 2 * scale = 1, exactly symmetric, as the
    1-norm and hard-margin duals), its transpose -- a column-major view equal to it -- is
    passed: no n x n copy."""
    if len(sf.quad) == 1:
        q = sf.quad[0]
        B = q.base
        if (B is not None and 2.0 * q.scale == 1.0 and B.shape[0] == sf.n
                and B.flags.c_contiguous and B.dtype == np.float64
                and _as_slice(np.asarray(q.index)) == slice(0, sf.n) and np.array_equal(B, B.T)):
            return B.T
    return sf.hessian_dense(order="F")


# ---------------------------------------------------------------------------------------
# PIQP


def solve_piqp(sf, opts, state=None) -> MatrixResult:
    """PIQP (proximal interior point; LP and convex QP), dense or sparse by the Hessian's fill."""
    import piqp

    if sf.qrows:
        raise SolverError("piqp takes no quadratic constraints")
    P = None
    nnz_dense = sum(len(q.index) ** 2 for q in sf.quad if q.base is not None)
    dense = nnz_dense > 0.1 * sf.n * sf.n
    eq_idx, Aeq, beq, in_idx, Ain, lin, uin = sf.equality_split()
    lx = np.where(np.isfinite(sf.lx), sf.lx, -INF)
    ux = np.where(np.isfinite(sf.ux), sf.ux, INF)
    if dense:
        solver = piqp.DenseSolver()
        P = _hessian_dense_f(sf)
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
            R = _psd_root(blk.matrix) if blk.base is not None else np.diag(np.sqrt(np.maximum(blk.diag, 0)))
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
    # QPs: 1e-10 (at 1e-8 alpha is ~1e-4 off); cones: 1e-8 (tighter ends "AlmostSolved")
    tol = _tol(opts, default=1e-8 if sf.qrows else 1e-10)
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


def _csc_keys(H: sp.csc_matrix, n: int) -> np.ndarray:
    """``col * n + row`` of every stored entry: ascending for a canonical CSC matrix."""
    cols = np.repeat(np.arange(H.shape[1], dtype=np.int64), np.diff(H.indptr))
    cols *= n
    cols += H.indices
    return cols


class _IpoptProblem:
    """cyipopt callbacks for a :class:`~svm_models.structure.StandardForm`.

    Ipopt asks for the objective, gradient, constraints and Jacobian at the same point: each
    dense block's product ``B v`` is computed once per point and shared by those callbacks.
    The Hessian of the Lagrangian has a fixed pattern (lower triangle; the union of the
    objective's and the quadratic rows' patterns, found without sorting when one contains the
    others) and values combined per call in one reused buffer.
    """

    def __init__(self, sf):
        self.sf = sf
        n = sf.n
        self.A = sf.A.tocsr()
        Acoo = self.A.tocoo()
        self.A_data = Acoo.data
        self._cx = None
        self._cache: dict = {}
        # Hessian: slot 0 the objective, slot k+1 quadratic row k
        contrib = [sf.hessian_sparse(triangle="lower")]
        for q in sf.qrows:
            contrib.append(sf.hessian_sparse(q.quad, triangle="lower"))
        nz = [k for k, H in enumerate(contrib) if H.nnz]
        parts = []      # (slot, positions or None for the whole pattern, values)
        if not nz:
            self.h_rows = self.h_cols = np.zeros(0, dtype=np.int32)
        else:
            big = max(nz, key=lambda k: contrib[k].nnz)
            Hb = contrib[big]
            keys_big = None
            union = None
            placed = {big: None}
            for k in nz:
                if k == big:
                    continue
                H = contrib[k]
                if np.array_equal(H.indptr, Hb.indptr) and np.array_equal(H.indices, Hb.indices):
                    placed[k] = None
                    continue
                if keys_big is None:
                    keys_big = _csc_keys(Hb, n)
                kk = _csc_keys(H, n)
                pos = np.searchsorted(keys_big, kk)
                if np.all(pos < len(keys_big)) and np.array_equal(keys_big[np.minimum(pos, len(keys_big) - 1)], kk):
                    placed[k] = pos
                else:
                    union = True
                    break
            if union is None:
                self.h_rows = Hb.indices.astype(np.int32, copy=False)
                self.h_cols = None            # expanded from the column pointers when asked for
                self._h_indptr = Hb.indptr
                for k in nz:
                    parts.append((k, placed[k], contrib[k].data))
            else:
                keys = [_csc_keys(contrib[k], n) for k in nz]
                ukeys = np.unique(np.concatenate(keys))
                self.h_rows = (ukeys % n).astype(np.int32)
                self.h_cols = (ukeys // n).astype(np.int32)
                for k, kk in zip(nz, keys):
                    pos = None if len(kk) == len(ukeys) else np.searchsorted(ukeys, kk)
                    parts.append((k, pos, contrib[k].data))
        # whole-pattern parts first: the first one initialises the buffer
        self.h_parts = sorted(parts, key=lambda p: p[1] is not None)
        self.h_nnz = len(self.h_rows)
        self._hbuf = None
        # Jacobian: linear rows, then one dense-pattern row per quadratic constraint
        rows, cols = [Acoo.row], [Acoo.col]
        self.q_idx = []
        for k, q in enumerate(sf.qrows):
            idx = np.unique(np.concatenate([blk.index for blk in q.quad] + [np.flatnonzero(q.linear)]))
            self.q_idx.append(idx)
            rows.append(np.full(len(idx), sf.m + k)); cols.append(idx)
        self.j_rows = np.concatenate(rows).astype(np.int32)
        self.j_cols = np.concatenate(cols).astype(np.int32)

    def _mv(self, q, x):
        """``M v`` of block q at x (``v = x[q.index]``); dense products cached per point."""
        if q.base is None:
            return q.diag * x[q.index]
        if self._cx is None or not np.array_equal(x, self._cx):
            self._cx = np.array(x, dtype=float)
            self._cache = {}
        key = (id(q.base), id(q.index))
        Bv = self._cache.get(key)
        if Bv is None:
            Bv = self._cache[key] = q.base @ x[q.index]
        return Bv * q.scale if q.scale != 1.0 else Bv

    def _qsum(self, blocks, x) -> float:
        return sum(float(x[b.index] @ self._mv(b, x)) for b in blocks)

    def objective(self, x):
        sf = self.sf
        return float(sf.const + sf.c @ x + self._qsum(sf.quad, x))

    def gradient(self, x):
        g = self.sf.c.copy()
        for q in self.sf.quad:
            g[q.index] += 2.0 * self._mv(q, x)
        return g

    def constraints(self, x):
        out = self.A @ x
        if self.sf.qrows:
            out = np.concatenate([out, [self._qsum(q.quad, x) + float(q.linear @ x)
                                        for q in self.sf.qrows]])
        return out

    def jacobianstructure(self):
        return self.j_rows, self.j_cols

    def jacobian(self, x):
        parts = [self.A_data] if self.sf.m else [np.zeros(0)]
        for q, idx in zip(self.sf.qrows, self.q_idx):
            g = q.linear.copy()
            for b in q.quad:
                g[b.index] += 2.0 * self._mv(b, x)
            parts.append(g[idx])
        return np.concatenate(parts)

    def hessianstructure(self):
        cols = self.h_cols
        if cols is None:  # CSC column pointers: expanded only while asked for
            ptr = self._h_indptr
            cols = np.repeat(np.arange(len(ptr) - 1, dtype=np.int32), np.diff(ptr))
        return self.h_rows, cols

    def hessian(self, x, lagrange, obj_factor):
        m = self.sf.m
        parts = self.h_parts
        if len(parts) == 1 and parts[0][1] is None and parts[0][0] == 0 and obj_factor == 1.0:
            return parts[0][2]        # a QP's constant Hessian: no copy (cyipopt copies it)
        if self._hbuf is None:
            self._hbuf = np.empty(self.h_nnz)
        out = self._hbuf
        first = True
        for slot, pos, data in self.h_parts:
            w = obj_factor if slot == 0 else lagrange[m + slot - 1]
            if pos is None:
                if first:
                    np.multiply(data, w, out=out)
                else:
                    _axpy(w, data, out)
            else:
                if first:
                    out.fill(0.0)
                out[pos] += w * data
            first = False
        if first:
            out.fill(0.0)
        return out


def _axpy(a: float, x: np.ndarray, y: np.ndarray, chunk: int = 1 << 16) -> None:
    """``y += a x`` in place, in chunks (no temporary the size of x)."""
    for s in range(0, len(x), chunk):
        y[s:s + chunk] += a * x[s:s + chunk]


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
    with preserved_fpu():
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
        m.Params.BarQCPConvTol = max(tol, 1e-9)  # tighter ends in status 13 (suboptimal)
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


# ---------------------------------------------------------------------------------------
# Re-solves along a parameter path: a working set from the previous solution
#
# None of the QP backends warm-starts usefully after a change of bounds or costs (HiGHS's QP
# solver restarts its active set from scratch; interior-point methods gain little from a
# starting point). What carries over from one C to the next is *which* variables sit at a
# bound: a re-solve (``state`` holding an earlier solution of the same model) fixes the
# variables that were at a bound at their new bound, solves the much smaller problem in the
# others, and checks the full problem's optimality conditions -- the reduced cost
# ``r = grad f(x) - A' mu`` must be >= 0 at a lower bound and <= 0 at an upper bound --
# releasing every variable that violates them, until none does. The answer is therefore an
# optimum of the full problem (to the backend's tolerance); when the working set would not be
# small, the reduced problem fails, or the rounds run out, the full problem is solved as usual.

#: the working set is used when it holds at most this fraction of the variables
WS_MAX_FRACTION = 0.8
#: at most this many reduced solves per re-solve before falling back to the full problem
WS_MAX_ROUNDS = 8
#: a variable is "at a bound" within this fraction of its box width (at least of 1)
WS_AT_BOUND_REL = 1e-6


def solve_with_working_set(adapter, sf, opts, state=None) -> MatrixResult:
    """``adapter(sf, opts, state)``, or -- for a re-solve -- the working-set method above."""
    prev = None if state is None else state.get("working_set")
    res = None
    if (prev is not None and not sf.qrows and prev["n"] == sf.n and prev["m"] == sf.m):
        res = _solve_on_working_set(adapter, sf, opts, prev)
    if res is None:
        res = adapter(sf, opts, state)
    if (state is not None and res.status == "optimal" and not sf.qrows
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
    tol = max(_tol(opts), 1e-12)
    AT = sf.A.T.tocsr()
    fixed = at_lo | at_up
    iterations = 0
    for rounds in range(1, WS_MAX_ROUNDS + 1):
        keep = np.flatnonzero(~fixed)
        if keep.size == 0 or keep.size > WS_MAX_FRACTION * n:
            return None
        sub = sf.restrict(keep, x)
        r = adapter(sub, opts, None)
        if r.status != "optimal" or r.row_duals is None:
            return None
        iterations += r.iterations or 0
        x = x.copy()
        x[keep] = r.x
        # optimality of the full problem: reduced costs of the fixed variables
        g = sf.gradient(x)
        rc = g - AT @ np.asarray(r.row_duals, dtype=float)
        eps = max(1e-8, 10.0 * tol) * max(1.0, float(np.max(np.abs(g), initial=0.0)))
        viol = fixed & ((at_lo & (rc < -eps)) | (at_up & (rc > eps)))
        if not viol.any():
            return MatrixResult(
                status="optimal", x=x, row_duals=np.asarray(r.row_duals, dtype=float),
                qrow_duals=r.qrow_duals, objective=sf.objective(x), iterations=iterations,
                message=f"{r.message} (working set: {keep.size} of {n} variables, "
                        f"{rounds} round{'s' if rounds > 1 else ''})",
                interface=r.interface, extra={"working_set": int(keep.size), "rounds": rounds})
        fixed &= ~viol
    return None


def _with_working_set(adapter):
    def solve(sf, opts, state=None) -> MatrixResult:
        return solve_with_working_set(adapter, sf, opts, state)

    solve.__name__, solve.__doc__, solve.__wrapped__ = adapter.__name__, adapter.__doc__, adapter
    return solve


ADAPTERS = {name: _with_working_set(fn) for name, fn in {
    "highs": solve_highs,
    "piqp": solve_piqp,
    "clarabel": solve_clarabel,
    "ipopt": solve_ipopt,
    "gurobi": solve_gurobi,
}.items()}

"""The approaches the benchmark compares, each written independently of svm_models.

Every approach is a class with

* ``prepare(case, X, y)`` -- untimed set-up (the floor's matrices; nothing for the others),
* ``run(prepared)`` -- the timed part; returns the optimal value of the problem in the
  formulation's own sense (dual: the maximised value, primal: the minimised value).

The problems (formulations/classic.md, c_tuning.md), with ``G = D_y K D_y`` and ``C`` the soft-margin
parameter:

====================  ============================================================
hard/soft dual        max e'a - 1/2 a'G a (- 1/(2C) a'a for 2-norm); y'a = 0; 0 <= a (<= C)
primal, linear        min 1/2 w'w + C e'xi (1-norm) or C/2 xi'xi (2-norm);
                      y_i (w.x_i + b) >= 1 - xi_i
primal, rbf           the representer form: w'w = beta'K beta, w.phi(x_i) = (K beta)_i
c_tuning_standard     max e'a - t/2; a >= 0, y'a = 0, t >= a'a/l, t >= a'G a/r (r = trace K)
====================  ============================================================

The floor for a linear-kernel dual solves the factor form that svm_models picks by default
(variables ``a`` and ``z = X'(y*a)``, ``1/2 z'z`` instead of the dense ``a'Ga``): the same
problem in the same variables, so that the comparison measures the modelling layer only.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

C_DEFAULT = 1.0
GAMMA = 1.0 / 20.0
TOL = 1e-9           # what svm_models asks of every backend by default
CLASSIC = ("hard_primal", "hard_dual", "soft_l1_primal", "soft_l1_dual", "soft_l2_primal",
           "soft_l2_dual")


def make_data(l: int, d: int = 20):
    """The issue's data: y_i = +1 for even i, -1 for odd i; X ~ N(0, 1) + 0.35 y."""
    rng = np.random.default_rng(0)
    y = np.where(np.arange(l) % 2 == 0, 1.0, -1.0)
    X = rng.standard_normal((l, d)) + 0.35 * y[:, None]
    return X, y


def gram(X: np.ndarray, kernel: str, gamma: float = GAMMA) -> np.ndarray:
    """Kernel matrix with plain numpy (one l x l array, built in row blocks)."""
    if kernel == "linear":
        return X @ X.T
    sq = np.einsum("ij,ij->i", X, X)
    K = X @ X.T                                   # exactly symmetric (numpy uses syrk)
    step = 256
    for s in range(0, K.shape[0], step):
        blk = K[s:s + step]
        blk *= 2.0
        np.subtract(sq[s:s + step, None] + sq[None, :], blk, out=blk)   # symmetric rounding
        np.maximum(blk, 0.0, out=blk)
        blk *= -gamma
        np.exp(blk, out=blk)
    return K


def family_of(form: str) -> tuple[str, str]:
    fam, kind = form.rsplit("_", 1)
    return fam, kind


# ---------------------------------------------------------------------------------------
# The QP of a classic formulation as plain arrays (used by every floor)


class QP:
    """``min 1/2 x'Px + c'x``, ``lA <= A x <= uA``, ``lx <= x <= ux``; model objective =
    ``sign * (that)``. ``P`` is dense (``Pd``) or diagonal (``pdiag``)."""

    def __init__(self, n, c, A, lA, uA, lx, ux, sign, Pd=None, pdiag=None):
        self.n, self.c, self.A, self.lA, self.uA = n, c, A, lA, uA
        self.lx, self.ux, self.sign, self.Pd, self.pdiag = lx, ux, sign, Pd, pdiag


def classic_qp(form: str, kernel: str, X, y, C=C_DEFAULT) -> QP:
    fam, kind = family_of(form)
    l, d = X.shape
    inf = np.inf
    if kind == "dual":
        ub = C if fam == "soft_l1" else inf
        if kernel == "linear":
            # factor form: x = (a, z), z = F a with F = X'Y, objective 1/2 z'z - e'a
            F = (X * y[:, None]).T
            n = l + d
            pdiag = np.concatenate([np.full(l, 1.0 / C if fam == "soft_l2" else 0.0), np.ones(d)])
            A = sp.vstack([sp.hstack([sp.csr_matrix(-F), sp.identity(d)]),
                           sp.hstack([sp.csr_matrix(y[None, :]), sp.csr_matrix((1, d))])],
                          format="csc")
            lx = np.concatenate([np.zeros(l), np.full(d, -inf)])
            ux = np.concatenate([np.full(l, ub), np.full(d, inf)])
            c = np.concatenate([-np.ones(l), np.zeros(d)])
            return QP(n, c, A, np.zeros(d + 1), np.zeros(d + 1), lx, ux, -1.0, pdiag=pdiag)
        K = gram(X, kernel)
        Q = K
        Q *= y[:, None]
        Q *= y[None, :]
        if fam == "soft_l2":
            Q[np.diag_indices(l)] += 1.0 / C
        A = sp.csc_matrix(y[None, :])
        return QP(l, -np.ones(l), A, np.zeros(1), np.zeros(1), np.zeros(l), np.full(l, ub),
                  -1.0, Pd=Q)
    # primal: x = (coef, b, xi)
    M = X if kernel == "linear" else gram(X, kernel)
    k = M.shape[1]
    nx = 0 if fam == "hard" else l
    n = k + 1 + nx
    blocks = [M * y[:, None], y[:, None]] + ([np.eye(l)] if nx and kernel != "linear" else [])
    if kernel == "linear":
        A = sp.hstack([sp.csr_matrix(M * y[:, None]), sp.csr_matrix(y[:, None])]
                      + ([sp.identity(l)] if nx else []), format="csc")
    else:
        A = np.hstack(blocks)
    c = np.zeros(n)
    if fam == "soft_l1":
        c[k + 1:] = C
    lx = np.full(n, -inf)
    if fam == "soft_l1":
        lx[k + 1:] = 0.0
    ux = np.full(n, inf)
    if kernel == "linear":
        pdiag = np.zeros(n)
        pdiag[:k] = 1.0
        if fam == "soft_l2":
            pdiag[k + 1:] = C
        return QP(n, c, A, np.ones(l), np.full(l, inf), lx, ux, 1.0, pdiag=pdiag)
    qp = QP(n, c, A, np.ones(l), np.full(l, inf), lx, ux, 1.0, Pd=M)  # P = blockdiag(K, 0, C I)
    qp.k = k
    qp.ridge = C if fam == "soft_l2" else 0.0
    return qp


def _dense_block(qp):
    """(K block size, ridge on the xi block) of a primal rbf QP; (n, 0) for a dense dual."""
    return getattr(qp, "k", qp.n), getattr(qp, "ridge", 0.0)


def lower_csc(qp: QP) -> sp.csc_matrix:
    """Lower triangle of P as CSC (what HiGHS and Ipopt take)."""
    n = qp.n
    if qp.Pd is None:
        keep = np.flatnonzero(qp.pdiag)
        return sp.csc_matrix((qp.pdiag[keep], (keep, keep)), shape=(n, n))
    k, ridge = _dense_block(qp)
    B = qp.Pd
    j = np.arange(k)
    mask = j[:, None] <= j[None, :]          # row j of B' = column j of B, rows i >= j
    data = B.T[mask]
    counts = k - j
    start = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    rows = (np.arange(start[-1], dtype=np.int64) - np.repeat(start[:-1] - j, counts)).astype(np.int32)
    if n == k:
        return sp.csc_matrix((data, rows, start), shape=(n, n))
    # primal rbf: columns k (b) empty, then the 2-norm ridge C on xi
    extra = np.arange(k + 1, n) if ridge else np.zeros(0, dtype=np.int64)
    indptr = np.concatenate([start, np.full(1, start[-1]),
                             start[-1] + np.arange(1, n - k) * (1 if ridge else 0)])
    return sp.csc_matrix((np.concatenate([data, np.full(len(extra), ridge)]),
                          np.concatenate([rows, extra.astype(np.int32)]), indptr), shape=(n, n))


def P_times(qp: QP, x: np.ndarray) -> np.ndarray:
    if qp.Pd is None:
        return qp.pdiag * x
    k, ridge = _dense_block(qp)
    out = np.zeros(qp.n)
    out[:k] = qp.Pd @ x[:k]
    if ridge:
        out[k + 1:] = ridge * x[k + 1:]
    return out


# ---------------------------------------------------------------------------------------
# Floors: the solver alone, fed with matrices


class FloorHighs:
    name = "floor"

    def prepare(self, case, X, y):
        return classic_qp(case.form, case.kernel, X, y)

    def run(self, qp):
        import highspy

        inf = highspy.kHighsInf
        H = lower_csc(qp)
        A = sp.csc_matrix(qp.A)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = qp.n, A.shape[0]
        lp.col_cost_ = qp.c
        lp.col_lower_ = np.where(np.isfinite(qp.lx), qp.lx, -inf)
        lp.col_upper_ = np.where(np.isfinite(qp.ux), qp.ux, inf)
        lp.row_lower_ = np.where(np.isfinite(qp.lA), qp.lA, -inf)
        lp.row_upper_ = np.where(np.isfinite(qp.uA), qp.uA, inf)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = A.indptr.astype(np.int32)
        lp.a_matrix_.index_ = A.indices.astype(np.int32)
        lp.a_matrix_.value_ = A.data
        model = highspy.HighsModel()
        model.lp_ = lp
        model.hessian_.dim_ = qp.n
        model.hessian_.format_ = highspy.HessianFormat.kTriangular
        model.hessian_.start_ = H.indptr.astype(np.int32)
        model.hessian_.index_ = H.indices.astype(np.int32)
        model.hessian_.value_ = H.data
        h.passModel(model)
        for key, val in (("primal_feasibility_tolerance", TOL), ("dual_feasibility_tolerance", TOL),
                         ("time_limit", self.time_limit)):
            h.setOptionValue(key, val)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(h.modelStatusToString(h.getModelStatus()))
        return qp.sign * h.getInfo().objective_function_value


class FloorPiqp:
    name = "floor"

    def prepare(self, case, X, y):
        return classic_qp(case.form, case.kernel, X, y)

    def run(self, qp):
        import piqp

        A = qp.A
        eq = np.isfinite(qp.lA) & (qp.lA == qp.uA)
        lx = np.where(np.isfinite(qp.lx), qp.lx, -np.inf)
        ux = np.where(np.isfinite(qp.ux), qp.ux, np.inf)
        if qp.Pd is not None:   # dense problem: the dense solver
            k, ridge = _dense_block(qp)
            if k == qp.n:
                P = qp.Pd.T if np.array_equal(qp.Pd, qp.Pd.T) else np.asfortranarray(qp.Pd)
            else:
                P = np.zeros((qp.n, qp.n), order="F")
                P[:k, :k] = qp.Pd
                if ridge:
                    P[np.arange(k + 1, qp.n), np.arange(k + 1, qp.n)] = ridge
            Ad = A.toarray() if sp.issparse(A) else A
            args = [P, qp.c,
                    np.asfortranarray(Ad[eq]) if eq.any() else None, qp.lA[eq] if eq.any() else None,
                    np.asfortranarray(Ad[~eq]) if (~eq).any() else None,
                    qp.lA[~eq] if (~eq).any() else None, qp.uA[~eq] if (~eq).any() else None,
                    lx, ux]
            solver = piqp.DenseSolver()
        else:
            P = sp.diags(qp.pdiag, format="csc")
            A = sp.csr_matrix(A)
            args = [P, qp.c, A[eq].tocsc() if eq.any() else None, qp.lA[eq] if eq.any() else None,
                    A[~eq].tocsc() if (~eq).any() else None,
                    qp.lA[~eq] if (~eq).any() else None, qp.uA[~eq] if (~eq).any() else None,
                    lx, ux]
            solver = piqp.SparseSolver()
        solver.settings.eps_abs = TOL
        solver.settings.eps_rel = 0.0
        solver.settings.verbose = False
        solver.setup(*args)
        status = solver.solve()
        if "SOLVED" not in str(status):
            raise RuntimeError(str(status))
        x = np.array(solver.result.x)
        return qp.sign * float(0.5 * x @ P_times(qp, x) + qp.c @ x)


class FloorIpm:
    """svm_models' own interior-point method (``solver="ipm"``) on a linear-kernel QP built
    with numpy: its standard form made directly from the arrays (no Pyomo model)."""

    name = "floor_ipm"

    def prepare(self, case, X, y):
        return classic_qp(case.form, case.kernel, X, y)

    def run(self, qp):
        from svm_models.model.forms import QuadBlock
        from svm_models.model.standard_form import StandardForm
        from svm_models.solvers import ipm
        from svm_models.solvers.base import SolverOptions

        if qp.pdiag is None:
            raise ValueError("FloorIpm takes the linear-kernel QPs (a diagonal P)")
        sf = StandardForm(sense=1, c=qp.c, const=0.0,
                          quad=[QuadBlock(np.arange(qp.n), diag=0.5 * qp.pdiag)],
                          A=sp.csr_matrix(qp.A), lA=qp.lA, uA=qp.uA, lx=qp.lx, ux=qp.ux,
                          qrows=[], var_datas=[], row_datas=[])
        res = ipm.solve(sf, SolverOptions(tol=TOL))
        if res.status.value != "optimal":
            raise RuntimeError(res.message)
        return qp.sign * float(res.objective)


class _IpoptQP:
    """numpy callbacks for a QP (constant Jacobian and Hessian)."""

    def __init__(self, qp):
        self.qp = qp
        if sp.issparse(qp.A):
            coo = sp.coo_matrix(qp.A)
            self.jr, self.jc, self.jv = coo.row, coo.col, coo.data
        else:
            m, n = qp.A.shape
            self.jr = np.repeat(np.arange(m), n)
            self.jc = np.tile(np.arange(n), m)
            self.jv = qp.A.ravel()
        H = lower_csc(qp).tocoo()
        self.hr, self.hc, self.hv = H.row, H.col, H.data

    def objective(self, x):
        return 0.5 * x @ P_times(self.qp, x) + self.qp.c @ x

    def gradient(self, x):
        return P_times(self.qp, x) + self.qp.c

    def constraints(self, x):
        return self.qp.A @ x

    def jacobianstructure(self):
        return self.jr, self.jc

    def jacobian(self, x):
        return self.jv

    def hessianstructure(self):
        return self.hr, self.hc

    def hessian(self, x, lagrange, obj_factor):
        return obj_factor * self.hv


def _ipopt_solve(problem, n, m, lx, ux, cl, cu, options, x0=None, accept=(0, 1)):
    import cyipopt

    big = 1e20
    fin = lambda v, s: np.where(np.isfinite(v), v, s * big)  # noqa: E731
    nlp = cyipopt.Problem(n=n, m=m, problem_obj=problem, lb=fin(lx, -1), ub=fin(ux, 1),
                          cl=fin(cl, -1), cu=fin(cu, 1))
    for key, val in {"tol": TOL, "print_level": 0, "sb": "yes", "bound_relax_factor": 0.0,
                     **options}.items():
        nlp.add_option(key, val)
    x0 = np.clip(np.zeros(n), fin(lx, -1), fin(ux, 1)) if x0 is None else x0
    x, info = nlp.solve(x0)
    if info["status"] not in accept:
        raise RuntimeError(str(info["status_msg"]))
    return x, info


class FloorIpopt:
    name = "floor"

    def prepare(self, case, X, y):
        return classic_qp(case.form, case.kernel, X, y)

    def run(self, qp):
        prob = _IpoptQP(qp)
        x, info = _ipopt_solve(prob, qp.n, len(qp.lA), qp.lx, qp.ux, qp.lA, qp.uA,
                               {"hessian_constant": "yes", "jac_c_constant": "yes",
                                "jac_d_constant": "yes", "max_wall_time": float(self.time_limit)})
        return qp.sign * float(info["obj_val"])


class _CTuning:
    def __init__(self, G, l, r, y):
        self.G, self.l, self.r, self.y = G, l, r, y
        j = np.arange(l)
        mask = j[:, None] <= j[None, :]
        self.hv = G.T[mask] * (2.0 / r)          # lower triangle of 2G/r, column by column
        counts = l - j
        start = np.zeros(l + 1, dtype=np.int64)
        np.cumsum(counts, out=start[1:])
        self.hr = (np.arange(start[-1]) - np.repeat(start[:-1] - j, counts)).astype(np.int32)
        self.hc = np.repeat(j, counts).astype(np.int32)
        self.diag_pos = start[:-1]
        self.buf = np.empty_like(self.hv)

    def objective(self, x):
        return -x[:self.l].sum() + 0.5 * x[self.l]

    def gradient(self, x):
        g = -np.ones(self.l + 1)
        g[self.l] = 0.5
        return g

    def constraints(self, x):
        a = x[:self.l]
        return np.array([self.y @ a, a @ a / self.l - x[self.l], a @ (self.G @ a) / self.r - x[self.l]])

    def jacobianstructure(self):
        l = self.l
        return (np.concatenate([np.zeros(l), np.ones(l + 1), np.full(l + 1, 2)]).astype(np.int32),
                np.concatenate([np.arange(l), np.arange(l + 1), np.arange(l + 1)]).astype(np.int32))

    def jacobian(self, x):
        a = x[:self.l]
        return np.concatenate([self.y, 2.0 * a / self.l, [-1.0], 2.0 * (self.G @ a) / self.r, [-1.0]])

    def hessianstructure(self):
        return self.hr, self.hc

    def hessian(self, x, lagrange, obj_factor):
        v = np.multiply(self.hv, lagrange[2], out=self.buf)
        v[self.diag_pos] += lagrange[1] * 2.0 / self.l
        return v


class FloorIpoptCTuning:
    """Ipopt called directly with numpy matrices, dense Hessian (the issue's reference)."""

    name = "floor"

    def prepare(self, case, X, y):
        K = gram(X, case.kernel)
        r = float(np.trace(K))
        G = K
        G *= y[:, None]
        G *= y[None, :]
        return G, r, y

    def run(self, prepared):
        G, r, y = prepared
        l = len(y)
        prob = _CTuning(G, l, r, y)
        lx = np.concatenate([np.zeros(l), [-np.inf]])
        probe = getattr(self, "probe_iterations", None)
        opts = {"max_wall_time": float(self.time_limit)}
        if probe:
            opts["max_iter"] = int(probe)
        x, info = _ipopt_solve(prob, l + 1, 3, lx, np.full(l + 1, np.inf),
                               np.array([0.0, -np.inf, -np.inf]), np.zeros(3), opts,
                               accept=(0, 1, -1) if probe else (0, 1))
        return -float(info["obj_val"])


# ---------------------------------------------------------------------------------------
# svm_models end to end


class SvmModels:
    name = "svm_models"

    def prepare(self, case, X, y):
        return X, y

    def run(self, prepared):
        import svm_models

        X, y = prepared
        kw = {"kernel": self.case.kernel, "time_limit": float(self.time_limit)}
        if self.case.kernel == "rbf":
            kw["gamma"] = GAMMA
        if self.case.form.startswith(("soft", )):
            kw["C"] = C_DEFAULT
        if getattr(self, "probe_iterations", None):   # memory probe: the first iterations only
            kw.update(iter_limit=self.probe_iterations, raise_on_failure=False)
        sol = svm_models.fit(X, y, self.case.form, self.case.solver, **kw)
        return float(sol.objective)


# ---------------------------------------------------------------------------------------
# CVXPY with the same solver


class Cvxpy:
    name = "cvxpy"

    def prepare(self, case, X, y):
        return X, y

    def _solve(self, prob):
        value = self._solve_raw(prob)
        if prob.status != "optimal":
            raise RuntimeError(f"CVXPY status {prob.status}")
        return value

    def _solve_raw(self, prob):
        solver = self.case.solver
        if solver == "ipopt":
            # mu_strategy: Ipopt's own default, as svm_models and the floor use it (CVXPY
            # switches to "adaptive"): the three then run the same algorithm
            return prob.solve(solver="IPOPT", nlp=True, tol=TOL, print_level=0,
                              mu_strategy="monotone", max_wall_time=float(self.time_limit))
        if solver == "piqp":
            return prob.solve(solver="PIQP", eps_abs=TOL, eps_rel=0.0)
        if solver == "highs":
            return prob.solve(solver="HIGHS", primal_feasibility_tolerance=TOL,
                              dual_feasibility_tolerance=TOL, time_limit=float(self.time_limit))
        raise ValueError(solver)

    def run(self, prepared):
        import cvxpy as cp

        X, y = prepared
        case = self.case
        l, d = X.shape
        C = C_DEFAULT
        if case.form == "c_tuning_standard":
            K = gram(X, case.kernel)
            r = float(np.trace(K))
            G = K * np.outer(y, y)
            a, t = cp.Variable(l), cp.Variable()
            prob = cp.Problem(cp.Maximize(cp.sum(a) - t / 2),
                              [a >= 0, y @ a == 0, t >= cp.sum_squares(a) / l,
                               t >= cp.quad_form(a, cp.psd_wrap(G)) / r])
            return float(self._solve(prob))
        fam, kind = family_of(case.form)
        if kind == "dual":
            a = cp.Variable(l)
            if case.kernel == "linear":
                quad = cp.sum_squares(X.T @ cp.multiply(y, a))
            else:
                quad = cp.quad_form(a, cp.psd_wrap(gram(X, case.kernel) * np.outer(y, y)))
            obj = cp.sum(a) - 0.5 * quad
            if fam == "soft_l2":
                obj = obj - cp.sum_squares(a) / (2 * C)
            cons = [a >= 0, y @ a == 0] + ([a <= C] if fam == "soft_l1" else [])
            return float(self._solve(cp.Problem(cp.Maximize(obj), cons)))
        b = cp.Variable()
        if case.kernel == "linear":
            w = cp.Variable(d)
            reg, f = 0.5 * cp.sum_squares(w), X @ w
        else:
            K = gram(X, case.kernel)
            beta = cp.Variable(l)
            reg, f = 0.5 * cp.quad_form(beta, cp.psd_wrap(K)), K @ beta
        if fam == "hard":
            prob = cp.Problem(cp.Minimize(reg), [cp.multiply(y, f + b) >= 1])
        else:
            xi = cp.Variable(l)
            pen = C * cp.sum(xi) if fam == "soft_l1" else 0.5 * C * cp.sum_squares(xi)
            cons = [cp.multiply(y, f + b) >= 1 - xi] + ([xi >= 0] if fam == "soft_l1" else [])
            prob = cp.Problem(cp.Minimize(reg + pen), cons)
        return float(self._solve(prob))


# ---------------------------------------------------------------------------------------
# The textbook Pyomo model: double sums built term by term, solved with SolverFactory


class PyomoTextbook:
    name = "pyomo"

    def prepare(self, case, X, y):
        return X, y

    def run(self, prepared):
        import pyomo.environ as pyo

        X, y = prepared
        case = self.case
        l, d = X.shape
        C = C_DEFAULT
        m = pyo.ConcreteModel()
        m.I = pyo.RangeSet(0, l - 1)
        yl = y.tolist()
        if case.form == "c_tuning_standard":
            K = gram(X, case.kernel)
            r = float(np.trace(K))
            Kl = K.tolist()
            m.a = pyo.Var(m.I, bounds=(0, None))
            m.t = pyo.Var()
            m.obj = pyo.Objective(expr=sum(m.a[i] for i in m.I) - m.t / 2, sense=pyo.maximize)
            m.bal = pyo.Constraint(expr=sum(yl[i] * m.a[i] for i in m.I) == 0)
            m.t_hi = pyo.Constraint(expr=m.t >= sum(m.a[i] * m.a[i] for i in m.I) / l)
            m.t_lo = pyo.Constraint(expr=m.t >= sum(yl[i] * yl[j] * Kl[i][j] * m.a[i] * m.a[j]
                                                     for i in m.I for j in m.I) / r)
        else:
            fam, kind = family_of(case.form)
            if kind == "dual":
                Kl = gram(X, case.kernel).tolist()
                m.a = pyo.Var(m.I, bounds=(0, C if fam == "soft_l1" else None))
                quad = sum(yl[i] * yl[j] * Kl[i][j] * m.a[i] * m.a[j] for i in m.I for j in m.I)
                obj = sum(m.a[i] for i in m.I) - 0.5 * quad
                if fam == "soft_l2":
                    obj = obj - sum(m.a[i] * m.a[i] for i in m.I) / (2 * C)
                m.obj = pyo.Objective(expr=obj, sense=pyo.maximize)
                m.bal = pyo.Constraint(expr=sum(yl[i] * m.a[i] for i in m.I) == 0)
            else:
                m.b = pyo.Var()
                if case.kernel == "linear":
                    Xl = X.tolist()
                    m.J = pyo.RangeSet(0, d - 1)
                    m.w = pyo.Var(m.J)
                    reg = 0.5 * sum(m.w[j] * m.w[j] for j in m.J)
                    f = {i: sum(Xl[i][j] * m.w[j] for j in m.J) for i in m.I}
                else:
                    Kl = gram(X, case.kernel).tolist()
                    m.beta = pyo.Var(m.I)
                    reg = 0.5 * sum(Kl[i][j] * m.beta[i] * m.beta[j] for i in m.I for j in m.I)
                    f = {i: sum(Kl[i][j] * m.beta[j] for j in m.I) for i in m.I}
                if fam == "hard":
                    m.obj = pyo.Objective(expr=reg)
                    m.margin = pyo.Constraint(m.I, rule=lambda m, i: yl[i] * (f[i] + m.b) >= 1)
                else:
                    m.xi = pyo.Var(m.I, bounds=(0, None) if fam == "soft_l1" else (None, None))
                    pen = (C * sum(m.xi[i] for i in m.I) if fam == "soft_l1"
                           else 0.5 * C * sum(m.xi[i] * m.xi[i] for i in m.I))
                    m.obj = pyo.Objective(expr=reg + pen)
                    m.margin = pyo.Constraint(
                        m.I, rule=lambda m, i: yl[i] * (f[i] + m.b) >= 1 - m.xi[i])
        if case.solver == "highs":
            opt = pyo.SolverFactory("highs")
            for key, val in (("primal_feasibility_tolerance", TOL), ("dual_feasibility_tolerance", TOL),
                             ("time_limit", float(self.time_limit))):
                opt.options[key] = val
            res = opt.solve(m)
        elif case.solver == "ipopt":
            opt = pyo.SolverFactory("cyipopt")
            res = opt.solve(m, options={"tol": TOL, "bound_relax_factor": 0.0, "print_level": 0,
                                        "max_wall_time": float(self.time_limit)})
        else:
            raise ValueError(case.solver)
        tc = str(res.solver.termination_condition)
        if "optimal" not in tc.lower():
            raise RuntimeError(tc)
        self._model = m   # the objective is evaluated after the timer (it walks l^2 terms)
        return None

    def objective(self):
        import pyomo.environ as pyo

        return float(pyo.value(self._model.obj))


# ---------------------------------------------------------------------------------------
# scikit-learn (libsvm): the 1-norm soft margin only


class Sklearn:
    name = "sklearn"

    def prepare(self, case, X, y):
        return X, y

    def run(self, prepared):
        from sklearn.svm import SVC

        X, y = prepared
        kw = {"kernel": self.case.kernel, "C": C_DEFAULT}
        if self.case.kernel == "rbf":
            kw["gamma"] = GAMMA
        self._clf = SVC(**kw).fit(X, y)
        self._X, self._y = X, y
        return None

    def objective(self):
        """libsvm's dual objective e'a - 1/2 a'G a from its support vectors."""
        clf = self._clf
        sv = clf.support_
        coef = clf.dual_coef_.ravel()          # y_i a_i on the support vectors
        Ks = gram(self._X[sv], self.case.kernel) if self.case.kernel == "rbf" else \
            self._X[sv] @ self._X[sv].T
        # sklearn orders classes as (-1, +1): dual_coef_ has the sign of y
        return float(np.abs(coef).sum() - 0.5 * coef @ Ks @ coef)

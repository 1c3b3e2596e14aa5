"""ipm: svm_models' own primal-dual interior-point method for convex QPs whose Newton system
reduces to a small dense one -- the linear SVMs at a million points and the low-rank kernel
duals (matrix interface only; nothing to install: numpy and scipy).

The general backends factor the whole sparse KKT system: for a factor-form dual (an l x r
dense block) or a linear primal (an l x d dense block) their sparse elimination does
O(l r^2) scalar work per iteration. This method eliminates the part of the system that is
diagonal and solves what is left as one dense system with BLAS-3 (Ferris & Munson 2003 for
the linear primal; Fine & Scheinberg 2001 for low-rank kernels):

* Problem: ``min 1/2 v'Qv + c'v`` s.t. ``Abar v = bbar``, ``l <= v <= u``, where ``v`` is
  the standard form's ``x`` plus a slack ``s_i`` per inequality row (``A_i x - s_i = 0``,
  ``lA_i <= s_i <= uA_i``) and ``Q = P`` (the standard form's blocks, ``P = 2M``).
* Mehrotra's predictor-corrector, iterates strictly inside the bounds, infeasible in the
  rows. Each Newton system ``[H, -Abar'; Abar, 0]`` (``H = Q + Theta``, ``Theta`` the bounds'
  barrier terms) is reduced by eliminating the variables ``D`` on which ``H`` is diagonal
  and positive; the others ``S`` (in a dense block of ``Q``, or free without a quadratic
  term, or -- in row mode -- in more than one row) stay:

  - *row mode* (few rows: the factor-form and kernel duals): the dense system in
    ``(dv_S, dy)``, ``[H_S, -Abar_S'; Abar_S, W]`` with ``W = Abar_D H_D^-1 Abar_D'``
    (m x m: one matrix product per iteration, O(l m^2) with BLAS);
  - *column mode* (many rows, each with a variable of its own, few columns shared: the
    primals): ``W`` is diagonal, the rows are eliminated too and the dense system is
    ``H_S + Abar_S' W^-1 Abar_S`` (|S| x |S|, O(l |S|^2)).

  A problem that reduces to neither within :data:`~svm_models.tolerances.IPM_MAX_DENSE`
  dense unknowns is refused (CapabilityError) before any iteration.
* Stops when the scaled primal and dual residuals and the complementarity gap are all
  below the tolerance; each Newton solve is refined against the unreduced system.

Duals are ``y`` (sensitivity convention: the Lagrangian is ``f - y'(Abar v - bbar) - ...``).
It takes LP and QP. It has no homogeneous self-dual embedding: an infeasible or unbounded
problem ends at the iteration limit, or in numerical trouble when its iterates diverge or
stall. Such an end is then read for a certificate (:func:`_certify`): a row with no
variable whose bounds exclude 0, or the last multipliers as a Farkas certificate, prove the
problem infeasible; the last iterate as an improving ray proves it infeasible or unbounded,
and the feasibility problem (the same rows, objective 0, solved next) tells which. Without a
certificate the end stays what it was (never a guessed infeasible or unbounded).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp

from .._version import __version__
from ..errors import CapabilityError
from ..status import Status
from ..tolerances import (IPM_CERT_TOL, IPM_DENSE_FILL, IPM_DIVERGE, IPM_MAX_DENSE,
                          IPM_MAX_ITER, IPM_STALL, IPM_STEP, IPM_THIN_ROWS)
from .base import Backend, MatrixResult
from .common import settle_dual_infeasible

INF = float("inf")


def solve(sf, opts, state=None) -> MatrixResult:
    """The interior-point method on a standard form (LP or QP)."""
    if sf.qrows or sf.cones:
        raise CapabilityError("ipm takes LPs and QPs only (no quadratic rows or cones); "
                              "use clarabel, gurobi or ipopt")
    bad = _infeasible_bounds(sf)
    if bad:
        return MatrixResult(status=Status.infeasible, message=bad, interface="ipm")
    fixed = np.isfinite(sf.lx) & (sf.lx == sf.ux)
    work = sf.restrict(np.flatnonzero(~fixed), np.where(fixed, sf.lx, 0.0)) if fixed.any() else sf
    prob = _Problem(work)
    it_max = opts.iter_limit or IPM_MAX_ITER
    # a step that divides by a zero slack is caught as a non-finite Newton step (status
    # numerical_error), not shown to the user as numpy's RuntimeWarning
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = _mehrotra(prob, opts.tolerance, it_max, opts.seconds, bool(opts.verbose))
    status, message, v, y, iters = out
    if status in (Status.numerical_error, Status.iteration_limit):
        status, message = _certify(prob, v, y, status, message, sf, opts)
    res = MatrixResult(status=status, message=message,
                       interface=f"ipm ({prob.mode} mode, {prob.n_dense} dense unknowns)",
                       iterations=iters)
    if status is Status.optimal:
        x = np.empty(sf.n)
        x[fixed] = sf.lx[fixed]
        x[~fixed] = v[:prob.n]
        res.x = x
        duals = np.zeros(sf.m)
        duals[prob.rows] = y
        res.row_duals = duals
        res.objective = sf.objective(x)
    return res


def _infeasible_bounds(sf) -> str:
    if np.any(sf.lx > sf.ux):
        return "a variable's lower bound exceeds its upper bound"
    if np.any(sf.lA > sf.uA):
        return "a row's lower bound exceeds its upper bound"
    empty = np.diff(sf.A.tocsr().indptr) == 0
    if np.any(empty & ((sf.lA > 0) | (sf.uA < 0))):
        return "a row with no variable has bounds that exclude 0"
    return ""


def _certify(p, v, y, status, message, sf, opts):
    """``(status, message)`` of a solve that ended ``status`` (numerical trouble, the
    iteration limit): infeasible when the multipliers ``y`` are a Farkas certificate
    (:func:`_farkas`); when the iterate ``v`` is an improving ray (:func:`_improving_ray`),
    infeasible or unbounded, the feasibility problem telling which
    (:func:`~.common.settle_dual_infeasible`); else as it was."""
    if _farkas(p, y):
        return Status.infeasible, (f"infeasible: the multipliers at the end ({message}) are "
                                   "a Farkas certificate")
    if _improving_ray(p, v):
        return settle_dual_infeasible(solve, sf, opts)
    return status, message


def _farkas(p, y) -> bool:
    """Whether ``y`` proves ``Abar v = bbar, l <= v <= u`` empty: the range of ``y'Abar v``
    over the box (``r = Abar'y``; a column without the bound its sign needs must have
    ``r_j = 0``, to :data:`~svm_models.tolerances.IPM_CERT_TOL`) misses ``y'bbar`` by more
    than the tolerance."""
    size = float(np.max(np.abs(y), initial=0.0))
    if not np.isfinite(size) or size == 0.0:
        return False
    yh = y / size
    r = p.atmul(yh)
    rhs = float(yh @ p.bbar)
    if not (np.all(np.isfinite(r)) and np.isfinite(rhs)):
        return False
    tiny = np.abs(r) <= IPM_CERT_TOL * max(1.0, float(np.max(np.abs(r), initial=0.0)))
    pos, neg = (r > 0) & ~tiny, (r < 0) & ~tiny
    with np.errstate(invalid="ignore"):
        hi_terms = np.where(pos, r * p.u, np.where(neg, r * p.l, 0.0))
        lo_terms = np.where(pos, r * p.l, np.where(neg, r * p.u, 0.0))
    hi, lo = float(hi_terms.sum()), float(lo_terms.sum())
    margin = IPM_CERT_TOL * (1.0 + abs(rhs))
    return hi < rhs - margin or lo > rhs + margin


def _improving_ray(p, v) -> bool:
    """Whether the direction of ``v`` is a ray along which the objective falls without end
    while the rows and bounds stay kept: ``Q d = 0``, ``Abar d = 0``, ``d_j >= 0`` where
    ``v_j`` has a lower bound and ``<= 0`` where it has an upper one, ``c'd < 0`` (each to
    :data:`~svm_models.tolerances.IPM_CERT_TOL`, ``d`` scaled to unit size)."""
    size = float(np.max(np.abs(v), initial=0.0))
    if not np.isfinite(size) or size == 0.0:
        return False
    d = v / size
    tol = IPM_CERT_TOL
    gain = -float(p.c @ d)
    return bool(gain > tol * max(1.0, float(np.max(np.abs(p.c), initial=0.0)))
                and np.max(np.abs(p.amul(d)), initial=0.0) <= tol
                and np.max(np.abs(p.qmul(d)), initial=0.0) <= tol
                and np.all(d[p.has_l] >= -tol) and np.all(d[p.has_u] <= tol))


class _Problem:
    """The standard form as ``min 1/2 v'Qv + c'v``, ``Abar v = bbar``, ``l <= v <= u``, and
    the reduction of its Newton systems (see the module docstring)."""

    def __init__(self, sf):
        n = sf.n
        self.n = n
        lA, uA = sf.lA, sf.uA
        eq = np.isfinite(lA) & (lA == uA)
        free_row = ~np.isfinite(lA) & ~np.isfinite(uA)
        self.rows = np.flatnonzero(~free_row)            # the rows kept, in order
        A = sf.A if not free_row.any() else sf.A[self.rows]
        eq, lA, uA = eq[self.rows], lA[self.rows], uA[self.rows]
        ineq = np.flatnonzero(~eq)
        self.m = mk = len(self.rows)
        k = len(ineq)
        self.nv = nv = n + k
        # the quadratic part: a diagonal, plus dense blocks (their variables kept in S)
        qdiag = np.zeros(nv)
        dense_blocks, in_block = [], np.zeros(nv, dtype=bool)
        for q in sf.quad:
            idx = np.asarray(q.index)
            if q.base is None:
                np.add.at(qdiag, idx, 2.0 * q.diag)
            elif len(idx) == 1:
                qdiag[idx] += 2.0 * q.scale * float(np.asarray(q.base).ravel()[0])
            else:
                dense_blocks.append(q)
                in_block[idx] = True
        self.c = np.concatenate([sf.c, np.zeros(k)])
        self.l = np.concatenate([sf.lx, lA[ineq]])
        self.u = np.concatenate([sf.ux, uA[ineq]])
        self.bbar = np.where(eq, lA, 0.0)
        # Abar = [A, -I on the inequality rows], by columns (the reduction reads columns)
        slack = sp.csc_matrix((-np.ones(k), (ineq, np.arange(k))), shape=(mk, k))
        Ac = sp.csc_matrix(A) if k == 0 else sp.hstack([A, slack], format="csc")
        del A
        self.has_l, self.has_u = np.isfinite(self.l), np.isfinite(self.u)
        self.qdiag = qdiag
        self.dense_blocks = dense_blocks
        # which variables can be eliminated: H = Q + Theta diagonal and positive on them
        no_h = (qdiag == 0.0) & ~self.has_l & ~self.has_u & ~in_block
        self._choose(in_block | no_h, np.diff(Ac.indptr), Ac)

    # -- the reduction ----------------------------------------------------------------

    def _choose(self, must_keep: np.ndarray, count: np.ndarray, Ac) -> None:
        mk = self.m
        # column mode: every variable in more than one row is kept; each row must have an
        # eliminated variable of its own (W diagonal and positive)
        keep_b = must_keep | (count >= 2)
        n_b = int(keep_b.sum())
        covered = np.zeros(mk, dtype=bool)
        cols_b = np.flatnonzero(~keep_b & (count == 1))
        if len(cols_b):
            rows_b = Ac.indices[Ac.indptr[cols_b]]
            coef_b = Ac.data[Ac.indptr[cols_b]]
            covered[rows_b[coef_b != 0.0]] = True
        col_ok = covered.all() and n_b <= IPM_MAX_DENSE
        row_ok = int(must_keep.sum()) + mk <= IPM_MAX_DENSE
        if col_ok and (n_b <= int(must_keep.sum()) + mk or not row_ok):
            self.mode = "column"
            self.S = np.flatnonzero(keep_b)
            self.D = np.flatnonzero(~keep_b)
            d_count = count[self.D]
            has = d_count == 1
            self.D_row = np.zeros(len(self.D), dtype=np.int64)
            self.D_coef = np.zeros(len(self.D))
            self.D_row[has] = Ac.indices[Ac.indptr[self.D[has]]]
            self.D_coef[has] = Ac.data[Ac.indptr[self.D[has]]]
            self.n_dense = len(self.S)
            self.AS = Ac[:, self.S].toarray()
        elif row_ok:
            self.mode = "row"
            self.S = np.flatnonzero(must_keep)
            self.D = np.flatnonzero(~must_keep)
            self.n_dense = len(self.S) + mk
            AD = Ac[:, self.D] if len(self.S) else Ac
            if AD.nnz > IPM_DENSE_FILL * max(1, mk * AD.shape[1]):
                self.AD = AD.toarray()      # dense rows (a factor, y'): BLAS products
            else:
                self.AD = AD.tocsr()
            self.AS = Ac[:, self.S].toarray()
        else:
            raise CapabilityError(
                f"ipm solves QPs whose Newton system reduces to at most {IPM_MAX_DENSE} dense "
                f"unknowns; this one reduces to {n_b} (one per variable in several rows) or "
                f"{int(must_keep.sum()) + mk} (one per row, plus the variables of dense "
                f"quadratic blocks or without bounds): use piqp or clarabel")
        self.QS = self._q_dense(self.S)

    def _q_dense(self, S: np.ndarray) -> np.ndarray:
        """The quadratic part on S as a dense |S| x |S| matrix (its diagonal included)."""
        QS = np.diag(self.qdiag[S])
        if self.dense_blocks:
            pos = np.full(self.nv, -1, dtype=np.int64)
            pos[S] = np.arange(len(S))
            for q in self.dense_blocks:
                p = pos[np.asarray(q.index)]
                QS[np.ix_(p, p)] += (2.0 * q.scale) * q.base
        return QS

    # -- products ---------------------------------------------------------------------

    def amul(self, v: np.ndarray) -> np.ndarray:
        """``Abar v``, through the kept and eliminated columns."""
        out = self._AD_mul(v[self.D])
        if len(self.S):
            out += self.AS @ v[self.S]
        return out

    def atmul(self, y: np.ndarray) -> np.ndarray:
        """``Abar' y``."""
        out = np.empty(self.nv)
        out[self.D] = self._ADT_mul(y)
        if len(self.S):
            out[self.S] = self.AS.T @ y
        return out

    def qmul(self, v: np.ndarray) -> np.ndarray:
        out = self.qdiag * v
        for q in self.dense_blocks:
            idx = np.asarray(q.index)
            out[idx] += 2.0 * q.matvec(v[idx])
        return out

    # -- the Newton system ------------------------------------------------------------

    def factor(self, hdiag: np.ndarray) -> None:
        """Factor the reduced Newton system for ``H = Q + diag(hdiag - qdiag)`` (``hdiag``:
        the diagonal of H; the dense blocks of Q are added on S)."""
        self.hdiag = hdiag
        S, D = self.S, self.D
        hD = hdiag[D]
        self.hD_inv = 1.0 / hD
        HS = self.QS + np.diag(hdiag[S] - self.qdiag[S])
        if self.mode == "column":
            w = self._AD_mul(self.D_coef * self.hD_inv)
            self.w_inv = 1.0 / w
            G = self.AS * np.sqrt(self.w_inv)[:, None]
            # thin (l x |S|, |S| <= IPM_THIN_ROWS): as the row mode's product, one thread
            with _blas_threads(1 if G.shape[1] <= IPM_THIN_ROWS else None):
                GG = G.T @ G
            self._chol, self._lu = _factor_spd(HS + GG)
        else:
            if isinstance(self.AD, np.ndarray):
                G = self.AD * np.sqrt(self.hD_inv)
                with _blas_threads(1 if self.m <= IPM_THIN_ROWS else None):
                    W = G @ G.T
                del G
            else:
                W = (self.AD @ sp.diags(self.hD_inv) @ self.AD.T).toarray()
            ns = len(S)
            if ns == 0:
                self._chol, self._lu = _factor_spd(W)
            else:
                K = np.empty((ns + self.m, ns + self.m))
                K[:ns, :ns] = HS
                K[:ns, ns:] = -self.AS.T
                K[ns:, :ns] = self.AS
                K[ns:, ns:] = W
                self._chol = None
                self._lu = _lu(K)

    def _dense_solve(self, rhs: np.ndarray) -> np.ndarray:
        if rhs.size == 0:   # nothing kept dense (no rows, no shared variable)
            return np.zeros(0)
        if self._chol is not None:
            return la.cho_solve(self._chol, rhs, check_finite=False)
        return la.lu_solve(self._lu, rhs, check_finite=False)

    def _AD_mul(self, vD: np.ndarray) -> np.ndarray:
        """``Abar_D vD`` (m)."""
        if self.m == 0:
            return np.zeros(0)
        if self.mode == "column":
            return np.bincount(self.D_row, self.D_coef * vD, minlength=self.m)
        return self.AD @ vD

    def _ADT_mul(self, y: np.ndarray) -> np.ndarray:
        """``Abar_D' y`` (|D|)."""
        if self.m == 0:
            return np.zeros(len(self.D))
        if self.mode == "column":
            return self.D_coef * y[self.D_row]
        return self.AD.T @ y

    def _reduced_solve(self, r1: np.ndarray, r2: np.ndarray):
        """One solve of ``H dv - Abar'dy = r1``, ``Abar dv = r2`` through the reduction."""
        S, D = self.S, self.D
        t = r2 - self._AD_mul(self.hD_inv * r1[D])
        dv = np.empty(self.nv)
        if self.mode == "column":
            wt = self.w_inv * t
            dvS = self._dense_solve(r1[S] + self.AS.T @ wt)
            dy = wt - self.w_inv * (self.AS @ dvS)
        else:
            ns = len(S)
            sol = self._dense_solve(np.concatenate([r1[S], t]))
            dvS, dy = sol[:ns], sol[ns:]
        dv[S] = dvS
        dv[D] = self.hD_inv * (r1[D] + self._ADT_mul(dy))
        return dv, dy

    def newton(self, r1: np.ndarray, r2: np.ndarray, refine: int = 2):
        """Solve the Newton system, refined against the unreduced one (while its residual
        is above round-off: at most ``refine`` times)."""
        dv, dy = self._reduced_solve(r1, r2)
        scale = 1.0 + max(np.abs(r1).max(initial=0.0), np.abs(r2).max(initial=0.0))
        for _ in range(refine):
            e1 = r1 - (self.hmul(dv) - self.atmul(dy))
            e2 = r2 - self.amul(dv)
            err = max(np.abs(e1).max(initial=0.0), np.abs(e2).max(initial=0.0))
            if not np.isfinite(err) or err <= 1e-13 * scale:
                break
            ddv, ddy = self._reduced_solve(e1, e2)
            dv += ddv
            dy += ddy
        return dv, dy

    def hmul(self, v: np.ndarray) -> np.ndarray:
        return self.qmul(v) + (self.hdiag - self.qdiag) * v


def _blas_threads(n):
    """A context in which BLAS uses at most ``n`` threads (None: as it is). A product with
    few rows is bound by memory, not arithmetic: one thread does it as fast, and a second
    thread on a busy machine made it 5x slower (measured, OpenBLAS on 2 cores). threadpoolctl
    comes with scikit-learn; entering the limit costs ~0.4 ms."""
    import contextlib

    from threadpoolctl import threadpool_limits

    return contextlib.nullcontext() if n is None else threadpool_limits(limits=n, user_api="blas")


def _factor_spd(M: np.ndarray):
    """``(Cholesky, None)`` of a positive definite M; ``(None, LU)`` when round-off has made
    it indefinite."""
    if M.shape[0] == 0:
        return None, None
    try:
        return la.cho_factor(M, lower=True, check_finite=False), None
    except la.LinAlgError:
        return None, _lu(M)


def _lu(M: np.ndarray):
    """LU factors of M; an exactly singular M (an inseparable hard margin) gives infinite
    steps that the iteration reports as numerical trouble, so scipy's LinAlgWarning is not
    passed on to the user."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", la.LinAlgWarning)
        return la.lu_factor(M, check_finite=False)


def _start(p: _Problem) -> np.ndarray:
    """A point strictly inside the bounds: the midpoint of a finite box, one unit inside a
    single bound (at least 10% of the bound's size), 0 for a free variable."""
    l, u = p.l, p.u
    v = np.zeros(p.nv)
    both = p.has_l & p.has_u
    v[both] = 0.5 * (l[both] + u[both])
    lo = p.has_l & ~p.has_u
    v[lo] = l[lo] + np.maximum(1.0, 0.1 * np.abs(l[lo]))
    up = p.has_u & ~p.has_l
    v[up] = u[up] - np.maximum(1.0, 0.1 * np.abs(u[up]))
    return v


def _max_step(x: np.ndarray, dx: np.ndarray) -> float:
    """Largest a <= 1 with x + a dx >= 0 (x > 0)."""
    neg = dx < 0
    if not neg.any():
        return 1.0
    return float(min(1.0, np.min(-x[neg] / dx[neg])))


def _direction(it_state, sig_mu, cl, cu):
    """The Newton direction ``(dv, dy, dzl, dzu)`` of an iterate (``it_state``: the problem,
    the bounded positions, the residuals, the gaps to the bounds and their multipliers) toward
    the centring target ``sig_mu`` with the corrector terms ``cl``, ``cu``."""
    p, L, U, rd, rp, gl, gu, zl, zu = it_state
    r1 = -rd
    r1[L] += (sig_mu - cl) / gl - zl
    r1[U] += zu - (sig_mu - cu) / gu
    dv, dy = p.newton(r1, -rp)
    dzl = (sig_mu - cl - zl * gl - zl * dv[L]) / gl
    dzu = (sig_mu - cu - zu * gu + zu * dv[U]) / gu
    return dv, dy, dzl, dzu


def _step(it_state, dv, dzl, dzu):
    """The largest step along a direction that keeps the gaps and multipliers positive."""
    p, L, U, rd, rp, gl, gu, zl, zu = it_state
    a_p = min(_max_step(gl, dv[L]), _max_step(gu, -dv[U]))
    a_d = min(_max_step(zl, dzl), _max_step(zu, dzu))
    return min(a_p, a_d)


def _mehrotra(p: _Problem, tol: float, it_max: int, seconds, verbose: bool):
    """Mehrotra's predictor-corrector; ``(status, message, v, y, iterations)``."""
    t0 = time.perf_counter()
    L, U = np.flatnonzero(p.has_l), np.flatnonzero(p.has_u)
    v = _start(p)
    y = np.zeros(p.m)
    zl = np.ones(len(L))
    zu = np.ones(len(U))
    n_c = max(1, len(L) + len(U))
    b_norm = np.abs(p.bbar).max(initial=0.0)
    c_norm = np.abs(p.c).max(initial=0.0)
    merits = []
    for it in range(it_max + 1):
        gl = v[L] - p.l[L]
        gu = p.u[U] - v[U]
        Qv = p.qmul(v)
        Av = p.amul(v)
        rp = Av - p.bbar
        rd = Qv + p.c - p.atmul(y)
        rd[L] -= zl
        rd[U] += zu
        compl = float(gl @ zl + gu @ zu)
        mu = compl / n_c
        pobj = float(0.5 * v @ Qv + p.c @ v)
        p_res = np.abs(rp).max(initial=0.0) / (1.0 + max(b_norm, np.abs(Av).max(initial=0.0)))
        d_res = np.abs(rd).max(initial=0.0) / (1.0 + max(c_norm, np.abs(Qv).max(initial=0.0)))
        gap = compl / (1.0 + abs(pobj))
        if verbose:
            print(f"ipm {it:3d}  obj {pobj: .10e}  pres {p_res:.2e}  dres {d_res:.2e}  "
                  f"gap {gap:.2e}  mu {mu:.2e}", flush=True)
        if p_res <= tol and d_res <= tol and gap <= tol:
            return Status.optimal, f"solved in {it} iterations", v, y, it
        if not np.isfinite(pobj) or max(np.abs(v).max(initial=0.0),
                                        np.abs(y).max(initial=0.0)) > IPM_DIVERGE:
            return (Status.numerical_error, f"iterates diverged after {it} iterations (the "
                    f"problem may be infeasible or unbounded)", v, y, it)
        # no progress: the worst of the three measures not halved in IPM_STALL iterations
        merits.append(max(p_res, d_res, gap))
        if len(merits) > IPM_STALL and min(merits[-IPM_STALL:]) > 0.5 * min(merits[:-IPM_STALL]):
            return (Status.numerical_error, f"no progress in the last {IPM_STALL} of {it} "
                    f"iterations (the problem may be infeasible or unbounded)", v, y, it)
        if it == it_max:
            break
        if seconds is not None and time.perf_counter() - t0 > seconds:
            return (Status.time_limit, f"time limit ({seconds:g} s) after {it} iterations",
                    v, y, it)
        hdiag = p.qdiag.copy()
        hdiag[L] += zl / gl
        hdiag[U] += zu / gu
        try:
            p.factor(hdiag)
        except (la.LinAlgError, ValueError) as exc:
            return (Status.numerical_error, f"singular Newton system after {it} iterations "
                    f"({exc})", v, y, it)

        it_state = (p, L, U, rd, rp, gl, gu, zl, zu)
        zero_l, zero_u = np.zeros(len(L)), np.zeros(len(U))
        dv, dy, dzl, dzu = _direction(it_state, 0.0, zero_l, zero_u)
        a = _step(it_state, dv, dzl, dzu)
        mu_aff = float((gl + a * dv[L]) @ (zl + a * dzl)
                       + (gu - a * dv[U]) @ (zu + a * dzu)) / n_c
        sigma = min(1.0, (mu_aff / mu) ** 3) if mu > 0 else 0.0
        dv, dy, dzl, dzu = _direction(it_state, sigma * mu, dv[L] * dzl, -dv[U] * dzu)
        if not (np.all(np.isfinite(dv)) and np.all(np.isfinite(dy))):
            return (Status.numerical_error, f"non-finite Newton step after {it} iterations",
                    v, y, it)
        a = min(1.0, IPM_STEP * _step(it_state, dv, dzl, dzu))
        v = v + a * dv
        y = y + a * dy
        zl = zl + a * dzl
        zu = zu + a * dzu
        # keep the iterate strictly inside its bounds (round-off at a step of 1)
        v[L] = np.maximum(v[L], p.l[L] + 1e-300)
        v[U] = np.minimum(v[U], p.u[U] - 1e-300)
        zl = np.maximum(zl, 1e-300)
        zu = np.maximum(zu, 1e-300)
    return (Status.iteration_limit, f"no convergence in {it_max} iterations", v, y, it_max)


BACKEND = Backend(
    name="ipm", classes=frozenset(("LP", "QP")), modules=("scipy",), matrix=solve,
    install="built in (numpy and scipy)",
    note="svm_models' own interior-point QP method: a small dense reduced system "
         "(linear SVMs at scale, low-rank kernels)",
    # on a QP after the backends that certify infeasibility (it has none); "auto" does not
    # take it for an LP
    project=True, auto={"QP": 50},
    pyomo_solver="svm_models' own interior-point method: LP and convex QP",
    version=lambda: __version__)

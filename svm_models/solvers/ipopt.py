"""Ipopt: interior point, local NLP solver -- global on convex problems (``pip install
cyipopt-wheels==1.7.0.dev0`` plus ``svm-models setup-ipopt``; Pyomo plugins ``cyipopt``,
or ``ipopt`` where an executable exists).

Matrix path through cyipopt with exact numpy derivatives. Ipopt's Lagrangian is
``f + lambda'g``, so d(optimal value)/d(active bound) = -lambda; Pyomo's ``cyipopt`` plugin
reports duals with the opposite sign for a minimisation (README, Solvers). Cones go in
as smooth quadratic rows in squared form with non-negative heads. Ipopt is a local solver:
a model proved non-convex is refused on the general path.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..model.standard_form import cones_as_rows
from ..status import Status
from ..model.standard_form import MIXED_INTEGER
from .base import ORDER, Backend, MatrixResult

#: Ipopt 3.14's ApplicationReturnStatus (-4: CPU time, -5: wall time exceeded; -13: an
#: invalid number (NaN/inf) was met)
STATUS = {0: Status.optimal, 1: Status.optimal, 2: Status.infeasible, -1: Status.iteration_limit,
          -4: Status.time_limit, -5: Status.time_limit, 4: Status.unbounded,
          3: Status.numerical_error, -2: Status.numerical_error, -3: Status.numerical_error,
          -13: Status.numerical_error}

#: the flop rate (per second) at which Ipopt's linear solver (MUMPS) is assumed to factor a
#: dense block: a generous one (measured 1.5e9 at 3,000 points on a shared 2-core machine),
#: so that a solve is refused for want of time only when even at this rate its first
#: iteration could not end before the deadline (:func:`_refuse_dense`)
IPOPT_DENSE_FLOPS = 4e9


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

    def __init__(self, sf, end: float | None = None):
        self.sf = sf
        self.end, self._last, self.stopped = end, time.monotonic(), False
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

    def intermediate(self, alg_mod, iter_count, *args):
        """After each iteration: stop (Ipopt's status 5, reported as ``time_limit``) when
        the time left before the deadline is shorter than the last iteration took -- Ipopt
        checks its own wall-time limit only between iterations, and one iteration of a dense
        block of thousands of points takes seconds."""
        if self.end is None:
            return True
        now = time.monotonic()
        took, self._last = now - self._last, now
        if self.end - now < took:
            self.stopped = True
            return False
        return True

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


def solve(sf, opts, state=None) -> MatrixResult:
    """Ipopt 3.14 through cyipopt with exact numpy derivatives (LP, QP, SOCP, QCQP)."""
    import cyipopt

    n0, m0, k0 = sf.n, sf.m, len(sf.qrows)
    too_long = _refuse_dense(sf, opts)
    if too_long is not None:
        return too_long
    cones = bool(sf.cones)
    sf = cones_as_rows(sf)
    left = opts.seconds
    prob = _IpoptProblem(sf, None if left is None else time.monotonic() + left)
    cl = np.concatenate([sf.lA, np.full(len(sf.qrows), -1e20)])
    cu = np.concatenate([sf.uA, [q.upper for q in sf.qrows]])
    big = 1e20
    nlp = cyipopt.Problem(n=sf.n, m=len(cl), problem_obj=prob,
                          lb=np.where(np.isfinite(sf.lx), sf.lx, -big),
                          ub=np.where(np.isfinite(sf.ux), sf.ux, big),
                          cl=np.where(np.isfinite(cl), cl, -big), cu=np.where(np.isfinite(cu), cu, big))
    nlp.add_option("tol", opts.tolerance)
    nlp.add_option("print_level", 5 if opts.verbose else 0)
    nlp.add_option("sb", "yes")
    nlp.add_option("bound_relax_factor", 0.0)
    if not sf.qrows:
        nlp.add_option("hessian_constant", "yes")
        nlp.add_option("jac_c_constant", "yes")
        nlp.add_option("jac_d_constant", "yes")
    for key, val in {**opts.limits("max_wall_time", "max_iter"), **opts.options}.items():
        nlp.add_option(key, val)
    x0 = np.clip(np.zeros(sf.n), np.where(np.isfinite(sf.lx), sf.lx, -big), np.where(np.isfinite(sf.ux), sf.ux, big))
    x, info = nlp.solve(x0)
    code = info["status"]
    status = STATUS.get(code, Status.error)
    msg = info["status_msg"] if code != -5 else "Maximum wall-clock time exceeded"
    if prob.stopped and code == 5:   # (User_Requested_Stop: the deadline, above)
        status = Status.time_limit
        msg = ("stopped after an iteration: the time left was shorter than an iteration "
               "takes")
    res = MatrixResult(status=status, interface="cyipopt",
                       message=msg.decode() if isinstance(msg, bytes) else str(msg))
    if status is Status.optimal:
        x = np.asarray(x)
        lam = np.asarray(info["mult_g"])
        # Ipopt's Lagrangian f + lambda'g: d(optimal value)/d(active bound) = -lambda
        res.x = x[:n0]
        res.row_duals = -lam[:m0]
        qd = -lam[sf.m:]
        res.qrow_duals = qd[:k0]
        res.cone_duals = qd[k0:] if cones else None
        res.objective = sf.objective(x)
    return res


def _refuse_dense(sf, opts) -> MatrixResult | None:
    """A dense quadratic block too large for the time left: Ipopt factors its Newton system,
    a dense matrix of the block's size, once to start and once per iteration (at least
    ``k^3/3`` flops each, at no more than :data:`IPOPT_DENSE_FLOPS`
    a second), and checks its time limit only between iterations -- a status
    ``time_limit`` with the reason, before anything is built, instead of a call that
    overruns its limit by minutes (6,000 rbf points: about 40 s before the first check)."""
    left = opts.seconds
    k = max((len(q.index) for q in sf.quad if q.base is not None), default=0)
    if left is None or k == 0:
        return None
    needed = 2 * k ** 3 / 3 / IPOPT_DENSE_FLOPS     # the start and one iteration
    if needed <= left:
        return None
    return MatrixResult(status=Status.time_limit, interface="cyipopt", message=(
        f"not started: Ipopt factors a dense {k} x {k} system to start and in every "
        f"iteration, at least {needed:.3g} s for the first iteration here, and {left:.3g} s "
        "were left"))


def plugin_options(plugin: str, opts) -> dict:
    o = {"tol": opts.tolerance,
         "bound_relax_factor": 0.0}  # keep iterates inside the bounds (no W1002 floods)
    if plugin == "cyipopt":
        o["print_level"] = 5 if opts.verbose else 0
    # the cyipopt plugin knows no message for Ipopt's -5 (wall time exceeded) and fails with
    # KeyError b'Unknown status': there, the limit is on CPU time (-4), which it maps
    time_name = "max_cpu_time" if plugin == "cyipopt" else "max_wall_time"
    return {**o, **opts.limits(time_name, "max_iter")}


BACKEND = Backend(
    name="ipopt", classes=frozenset(c for c in ORDER if c not in MIXED_INTEGER), plugins=("cyipopt", "ipopt"), modules=("cyipopt",),
    matrix=solve, plugin_options=plugin_options,
    dual_sign={"cyipopt": {1: -1.0, -1: 1.0}, "ipopt": {1: -1.0, -1: 1.0}},
    qcqp_form="quadratic",
    # an unbounded QP ends only when its iterates diverge (6 points: 4-12 s): LP check first
    proves_unbounded=False,
    install="pip install cyipopt-wheels==1.7.0.dev0, then run 'svm-models setup-ipopt'",
    note="interior point, local NLP solver (convex problems: global)",
    project=True,
    # first on a QCQP (its quadratic rows as they are) and an NLP, second on an SOCP; on a
    # QP after the matrix QP solvers and HiGHS; on an LP last, after Gurobi and SCIP
    auto={"QCQP": 10, "NLP": 10, "SOCP": 20, "QP": 40, "LP": 95})

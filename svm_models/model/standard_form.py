"""The standard form solvers are fed with, assembled from a record (fast path).

Conventions (one place for them):

* A :class:`StandardForm` is always a minimisation,
  ``const + c'x + sum_blocks x' M x`` (:class:`~svm_models.model.forms.QuadBlock`, no factor
  1/2), with rows ``lA <= A x <= uA``, bounds ``lx <= x <= ux``, convex quadratic rows
  ``sum_blocks x'Mx + a_k'x <= u_k`` and cones (:class:`~svm_models.model.forms.Cone`);
  ``sense`` is +1 when the model minimises, -1 when it maximises (model objective =
  sense * standard-form objective).
* Duals are reported in the *sensitivity* convention: the derivative of the optimal value of
  the model's own objective with respect to the bound of the constraint (for a minimisation,
  ``>=`` rows have non-negative duals); for a cone, with respect to the right-hand side of
  its squared form ``body <= 0``. Every backend's raw multipliers are normalised to it.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..tolerances import AT_BOUND_REL
from .forms import QuadBlock, QuadRow, as_slice
from .pyomo_compat import VAR_BOUND_SLOTS
from .record import attribute

INF = float("inf")
#: the problem classes, from the easiest (what :meth:`StandardForm.classify` answers): a
#: formulation has one per variant, a backend lists those it takes. The mixed-integer ones
#: (some variable binary or integer: ``MILP`` with a linear objective, ``MIQP`` with a
#: quadratic one) come last: no convex solver takes them
PROBLEM_CLASSES = ("LP", "QP", "SOCP", "QCQP", "NLP", "MILP", "MIQP")
#: the classes with integer variables: never solved on the fast path (a matrix adapter would
#: drop the integrality and solve the relaxation), no convex certificate
MIXED_INTEGER = ("MILP", "MIQP")


@dataclass(eq=False)
class StandardForm:
    """A solver-ready minimisation (see the module docstring for the conventions)."""

    sense: int
    c: np.ndarray
    const: float
    quad: list
    A: sp.csr_matrix
    lA: np.ndarray
    uA: np.ndarray
    lx: np.ndarray
    ux: np.ndarray
    qrows: list
    var_datas: list
    row_datas: list
    cones: list = field(default_factory=list)
    problem_class: str = "QP"
    #: positions of the integer (binary) variables (empty: a continuous problem)
    integer: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))

    @property
    def n(self) -> int:
        return self.c.shape[0]

    @property
    def m(self) -> int:
        return self.A.shape[0]

    def objective(self, x: np.ndarray) -> float:
        """Value of the standard-form (minimisation) objective at x."""
        return float(self.const + self.c @ x + sum(q.value(x) for q in self.quad))

    def hessian_dense(self, blocks=None, order: str = "C") -> np.ndarray:
        """``P`` with ``sum_blocks x'Mx = 1/2 x'Px`` as a dense n x n array (``order`` "C" or "F").

        A dense block on a contiguous range of x is written through a slice (no fancy-index
        gather/scatter, no scaled copy of the block).
        """
        P = np.zeros((self.n, self.n), order=order)
        fresh = True  # nothing written yet: the first dense block can be written in place
        for q in self.quad if blocks is None else blocks:
            idx = np.asarray(q.index)
            if q.base is not None:
                coef = 2.0 * q.scale
                sl = as_slice(idx)
                if sl is None:
                    P[np.ix_(idx, idx)] += coef * q.base
                elif fresh:
                    np.multiply(q.base, coef, out=P[sl, sl])
                else:
                    _add_scaled(P[sl, sl], q.base, coef)
            else:
                P[idx, idx] += 2.0 * q.diag
            fresh = False
        return P

    def hessian_sparse(self, blocks=None, triangle: str | None = None) -> sp.csc_matrix:
        """``P`` as scipy CSC (canonical: sorted indices, no duplicates, no explicit zeros);
        ``triangle="lower"``/``"upper"`` keeps one triangle.

        The usual case -- one dense block on a contiguous range of x plus diagonal blocks --
        is written straight into CSC arrays from the dense block (O(k^2) memory for the
        result only); other layouts go through COO.
        """
        blocks = list(self.quad if blocks is None else blocks)
        dense = [q for q in blocks if q.base is not None]
        sl = as_slice(np.asarray(dense[0].index)) if len(dense) == 1 else None
        if sl is not None and len(dense[0].index) > 1:
            return self._hessian_sparse_one_dense(dense[0], sl, blocks, triangle)
        rows, cols, vals = [], [], []
        for q in blocks:
            idx = np.asarray(q.index)
            if q.base is not None:
                k = len(idx)
                ascending = bool(np.all(np.diff(idx) > 0))
                # a local triangle is the global one only for ascending positions
                if triangle == "lower" and ascending:
                    r, c = np.tril_indices(k)
                elif triangle == "upper" and ascending:
                    r, c = np.triu_indices(k)
                else:
                    r, c = np.indices((k, k)).reshape(2, -1)
                v = (2.0 * q.scale) * q.base[r, c]
                keep = v != 0.0
                rows.append(idx[r[keep]]); cols.append(idx[c[keep]]); vals.append(v[keep])
            else:
                keep = q.diag != 0.0
                rows.append(idx[keep]); cols.append(idx[keep]); vals.append(2.0 * q.diag[keep])
        if not rows:
            return sp.csc_matrix((self.n, self.n))
        P = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(self.n, self.n)).tocsc()
        P.sum_duplicates()
        if triangle == "lower":
            P = sp.tril(P, format="csc")
        elif triangle == "upper":
            P = sp.triu(P, format="csc")
        P.eliminate_zeros()
        return P

    def _hessian_sparse_one_dense(self, q, sl: slice, blocks, triangle) -> sp.csc_matrix:
        n = self.n
        B = q.base
        k = B.shape[0]
        s0 = sl.start
        # diagonal of P from every block (the dense block's own diagonal included)
        dg = np.zeros(n)
        dg[s0:s0 + k] = (2.0 * q.scale) * np.diagonal(B)
        for b in blocks:
            if b.base is None:
                dg[np.asarray(b.index)] += 2.0 * b.diag
        # column j of the dense block is row j of B': rows i >= j (lower), i <= j (upper), all
        j = np.arange(k)
        if triangle == "lower":
            mask = j[:, None] <= j[None, :]
            counts = k - j
        elif triangle == "upper":
            mask = j[:, None] >= j[None, :]
            counts = j + 1
        else:
            mask = np.ones((k, k), dtype=bool)
            counts = np.full(k, k)
        data = B.T[mask]
        data *= 2.0 * q.scale
        del mask
        starts = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        total = int(starts[-1])
        itype = np.int32 if max(total, n) < 2**31 - 1 else np.int64
        # row indices, column by column (no temporary the size of the result)
        rows = np.empty(total, dtype=itype)
        ar = np.arange(s0, s0 + k, dtype=itype)
        for c in range(k):
            a, b = starts[c], starts[c + 1]
            if triangle == "lower":
                rows[a:b] = ar[c:]
            elif triangle == "upper":
                rows[a:b] = ar[:c + 1]
            else:
                rows[a:b] = ar
        diag_pos = starts[:-1] + (0 if triangle == "lower" else j)
        data[diag_pos] = dg[s0:s0 + k]
        # columns outside the dense range carry at most their diagonal entry
        before = np.flatnonzero(dg[:s0] != 0.0)
        after = s0 + k + np.flatnonzero(dg[s0 + k:] != 0.0)
        counts_all = np.zeros(n, dtype=np.int64)
        counts_all[before] = 1
        counts_all[after] = 1
        counts_all[s0:s0 + k] = counts
        indptr = np.zeros(n + 1, dtype=itype)
        np.cumsum(counts_all, out=indptr[1:])
        if len(before) or len(after):
            rows = np.concatenate([before.astype(itype), rows, after.astype(itype)])
            data = np.concatenate([dg[before], data, dg[after]])
        P = sp.csc_matrix((data, rows, indptr), shape=(n, n))
        P.has_sorted_indices = True
        P.eliminate_zeros()
        return P

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """Gradient of the standard-form objective at x."""
        g = np.array(self.c, dtype=float)
        for q in self.quad:
            g[q.index] += q.gradient(x)
        return g

    def restrict(self, keep: np.ndarray, x_fixed: np.ndarray) -> "StandardForm":
        """The same problem in the variables ``keep`` (sorted positions), the others fixed at
        their values in ``x_fixed`` (a full-length vector): their linear and quadratic terms
        move into the cost, the constant and the row bounds. Quadratic rows are not supported.
        """
        if self.qrows or self.cones:
            raise ValueError("restrict() takes no quadratic rows or cones")
        keep = np.asarray(keep, dtype=np.int64)
        fixed = np.ones(self.n, dtype=bool)
        fixed[keep] = False
        xf = np.where(fixed, x_fixed, 0.0)
        newpos = np.full(self.n, -1, dtype=np.int64)
        newpos[keep] = np.arange(len(keep))
        c = np.array(self.c, dtype=float)
        const = self.const + float(self.c[fixed] @ xf[fixed])
        quad = []
        for q in self.quad:
            idx = np.asarray(q.index)
            v = xf[idx]
            Mv = q.matvec(v) if np.any(v) else np.zeros(len(idx))
            const += float(v @ Mv)
            c[idx] += 2.0 * Mv          # cross terms 2 x_keep' M x_fixed (fixed part of v)
            loc = np.flatnonzero(newpos[idx] >= 0)
            if loc.size == 0:
                continue
            if q.base is not None:
                sub = q.base[np.ix_(loc, loc)]
                quad.append(QuadBlock(newpos[idx[loc]], sub, scale=q.scale))
            else:
                quad.append(QuadBlock(newpos[idx[loc]], diag=q.diag[loc]))
        A = self.A.tocsc()
        shift = A[:, np.flatnonzero(fixed)] @ xf[fixed] if fixed.any() else np.zeros(self.m)
        return StandardForm(sense=self.sense, c=c[keep], const=const, quad=quad,
                            A=A[:, keep].tocsr(), lA=self.lA - shift, uA=self.uA - shift,
                            lx=self.lx[keep], ux=self.ux[keep], qrows=[],
                            var_datas=[self.var_datas[i] for i in keep] if self.var_datas else [],
                            row_datas=self.row_datas, problem_class=self.problem_class)

    def kkt_violation(self, x: np.ndarray, row_duals: np.ndarray, shift: float = 0.0) -> float:
        """Largest violation of the optimality conditions of a QP (no quadratic rows, no
        cones) at ``x`` with row multipliers ``row_duals`` (sensitivity convention), relative
        to ``max(1, |grad|)``: the reduced cost ``grad f(x) - A' mu`` must vanish on free
        variables, be >= 0 at a lower bound and <= 0 at an upper bound. ``shift`` adds
        ``shift/2 |x|^2`` to the objective (a solver's own regularisation)."""
        g = self.gradient(x)
        rc = g + shift * x - self.A.T @ np.asarray(row_duals, dtype=float)
        span = np.maximum(1.0, np.abs(np.where(np.isfinite(self.lx), self.lx, 0.0))
                          + np.abs(np.where(np.isfinite(self.ux), self.ux, 0.0)))
        at_lo = np.isfinite(self.lx) & (x - self.lx <= AT_BOUND_REL * span)
        at_up = np.isfinite(self.ux) & (self.ux - x <= AT_BOUND_REL * span)
        pinned = at_lo & at_up    # a fixed variable (lx = ux: a point of weight 0): any sign
        at_lo &= ~pinned
        at_up &= ~pinned
        free = ~at_lo & ~at_up & ~pinned
        viol = np.zeros_like(rc)
        viol[free] = np.abs(rc[free])
        viol[at_lo] = np.maximum(0.0, -rc[at_lo])
        viol[at_up] = np.maximum(0.0, rc[at_up])
        return float(viol.max(initial=0.0)) / max(1.0, float(np.max(np.abs(g), initial=0.0)))

    def classify(self) -> str:
        """The problem class of this form: LP, QP, SOCP or QCQP; with integer variables MILP
        (a linear objective and rows) or MIQP (anything quadratic)."""
        if len(self.integer):
            return "MIQP" if (self.quad or self.qrows or self.cones) else "MILP"
        if self.qrows:
            return "QCQP"
        if self.cones:
            return "SOCP"
        return "QP" if self.quad else "LP"

    def equality_split(self):
        """Split rows into equalities ``Aeq x = beq`` and inequalities ``lA <= Ain x <= uA``.

        Returns ``(eq_idx, Aeq, beq, in_idx, Ain, l_in, u_in)``.
        """
        eq = np.isfinite(self.lA) & (self.lA == self.uA)
        eq_idx = np.flatnonzero(eq)
        in_idx = np.flatnonzero(~eq)
        # all rows of one kind (a million margin rows, or a dual's equalities): A itself,
        # not a row-selected copy
        Aeq = self.A if len(in_idx) == 0 else self.A[eq_idx]
        Ain = self.A if len(eq_idx) == 0 else self.A[in_idx]
        return (eq_idx, Aeq, self.lA[eq_idx], in_idx, Ain, self.lA[in_idx], self.uA[in_idx])


def _add_scaled(out: np.ndarray, B: np.ndarray, coef: float, rows: int = 256) -> None:
    """``out += coef * B`` in row chunks (no temporary the size of B)."""
    for r in range(0, B.shape[0], rows):
        out[r:r + rows] += coef * B[r:r + rows]


def bounds(var_datas) -> tuple[np.ndarray, np.ndarray]:
    """Current bounds of the variables (domain and bounds combined, as Pyomo reports them).

    A variable's bounds are a function of its bound and domain objects (numbers, mutable
    Params, sets): runs of variables holding the very same three objects -- the members of
    one indexed Var, as Pyomo creates them -- are evaluated once per run."""
    n = len(var_datas)
    lx = np.full(n, -INF)
    ux = np.full(n, INF)
    if n == 0:
        return lx, ux
    same = np.ones(n - 1, dtype=bool)
    for attr in VAR_BOUND_SLOTS:
        objs = attribute(var_datas, attr)
        same &= np.fromiter(map(operator.is_, objs[1:], objs[:-1]), dtype=bool, count=n - 1)
    starts = np.concatenate([[0], np.flatnonzero(~same) + 1, [n]])
    for a, b in zip(starts[:-1].tolist(), starts[1:].tolist()):
        lb, ub = var_datas[a].bounds
        if lb is not None:
            lx[a:b] = lb
        if ub is not None:
            ux[a:b] = ub
    return lx, ux


def assemble(record, *, materialise: bool = True) -> StandardForm:
    """The standard form of a recorded model with the current parameter values and bounds.
    A dense block whose matrix is evaluated lazily (a kernel's
    :class:`~svm_models.model.built.LazySignedGram`) gets the whole matrix, computed once,
    unless ``materialise=False`` (a backend that evaluates the kernel itself)."""
    var_datas = record.var_datas()
    c, const, quad = record.objective_parts()
    if materialise:
        quad = [QuadBlock(q.index, np.asarray(q.base), scale=q.scale)
                if q.base is not None and not isinstance(q.base, np.ndarray) else q
                for q in quad]
    sense = record.sense
    if sense == -1:
        c, const, quad = -c, -const, [q.scaled(-1.0) for q in quad]
    lx, ux = bounds(var_datas)
    n = len(var_datas)
    groups = [(g.A, *g.sides(record.block), g.datas) for g in record.rows]
    qrows = list(record.quad_rows)
    for fam in record.families:
        rows = fam.linear_rows(n)
        if rows is not None:
            groups.append(rows)
        qrows.extend(fam.quad_rows(n))
    if len(groups) == 1 and sp.isspmatrix_csr(groups[0][0]):
        # the record's own matrix, not a copy (a million margin rows: 264 MB at d = 20);
        # backends read A and never change it
        A = groups[0][0]
        lA, uA = np.array(groups[0][1], dtype=float), np.array(groups[0][2], dtype=float)
        row_datas = list(groups[0][3])
    elif groups:
        A = sp.vstack([g[0] for g in groups], format="csr")
        lA = np.concatenate([g[1] for g in groups])
        uA = np.concatenate([g[2] for g in groups])
        row_datas = [d for g in groups for d in g[3]]
    else:
        A = sp.csr_matrix((0, n))
        lA = uA = np.zeros(0)
        row_datas = []
    return StandardForm(sense=sense, c=np.asarray(c, dtype=float), const=float(const), quad=quad,
                        A=A, lA=lA, uA=uA, lx=lx, ux=ux, qrows=qrows, var_datas=var_datas,
                        row_datas=row_datas, cones=list(record.cones),
                        problem_class=record.problem_class, integer=record.integer_positions())


def cones_as_rows(sf: StandardForm) -> StandardForm:
    """The same problem with every cone written as a quadratic row in squared form, for
    backends that take cones that way (Gurobi recognises ``sum u_r^2 <= u_0^2`` with
    ``u_0 >= 0`` and ``sum w^2 <= 2 u_0 u_1`` with ``u_0, u_1 >= 0``; Ipopt handles the
    smooth squared form). A cone whose rows select single variables (``u = D x``, D diagonal
    on its support, ``b = 0``) is written on those variables; otherwise auxiliary variables
    ``u = A x + b`` are appended (the caller drops them from the answer: they follow the
    original ``n`` variables; their rows follow the original ``m`` rows). The new rows come
    after the original quadratic rows, one per cone, in order; each row's ``sign`` carries
    the cone's multiplier convention so that its dual is the cone's squared-form dual.
    """
    if not sf.cones:
        return sf
    n, m = sf.n, sf.m
    new_lx, new_ux, eq_blocks, eq_rhs = [], [], [], []
    qrows = list(sf.qrows)
    for cone in sf.cones:
        A = sp.csr_matrix(cone.A)
        per_row = np.diff(A.indptr)
        if np.all(per_row == 1) and not np.any(cone.b) and len(set(A.indices)) == A.shape[0]:
            idx, coef = A.indices.copy(), A.data.copy()
        else:
            k = A.shape[0]
            start = n + sum(len(x) for x in new_lx)
            idx, coef = np.arange(start, start + k), np.ones(k)
            heads = 1 if cone.kind == "soc" else 2
            new_lx.append(np.concatenate([np.zeros(heads), np.full(k - heads, -INF)]))
            new_ux.append(np.full(k, INF))
            eq_blocks.append((A, idx))
            eq_rhs.append(-cone.b)
        if cone.kind == "soc":
            diag = coef ** 2
            diag[0] = -diag[0]
            blocks = [QuadBlock(idx, diag=diag)]
        else:
            body = QuadBlock(idx[2:], diag=coef[2:] ** 2)
            cross = -coef[0] * coef[1]
            head = QuadBlock(idx[:2], matrix=np.array([[0.0, cross], [cross, 0.0]]))
            blocks = [body, head] if len(idx) > 2 else [head]
        qrows.append(QuadRow(cone.data, blocks, np.zeros(0), 0.0, 1.0))
    n2 = n + sum(len(x) for x in new_lx)
    A = sf.A
    if n2 > n:
        A = sp.hstack([A, sp.csr_matrix((m, n2 - n))], format="csr")
        rows = []
        for Ab, idx in eq_blocks:
            k = Ab.shape[0]
            aux = sp.csr_matrix((-np.ones(k), (np.arange(k), idx)), shape=(k, n2))
            rows.append(sp.hstack([Ab, sp.csr_matrix((k, n2 - n))], format="csr") + aux)
        A = sp.vstack([A] + rows, format="csr")
        rhs = np.concatenate(eq_rhs)
        lA, uA = np.concatenate([sf.lA, rhs]), np.concatenate([sf.uA, rhs])
        quad = list(sf.quad)
        c = np.concatenate([sf.c, np.zeros(n2 - n)])
        lx = np.concatenate([sf.lx] + new_lx)
        ux = np.concatenate([sf.ux] + new_ux)
    else:
        lA, uA, quad, c, lx, ux = sf.lA, sf.uA, sf.quad, sf.c, sf.lx, sf.ux
    qrows = [q if len(q.linear) == n2 else
             QuadRow(q.data, q.quad, np.concatenate([q.linear, np.zeros(n2 - len(q.linear))]),
                     q.upper, q.sign) for q in qrows]
    return StandardForm(sense=sf.sense, c=c, const=sf.const, quad=quad, A=A, lA=lA, uA=uA,
                        lx=lx, ux=ux, qrows=qrows, var_datas=sf.var_datas,
                        row_datas=sf.row_datas, cones=[], problem_class=sf.problem_class)

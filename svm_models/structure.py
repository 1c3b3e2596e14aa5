"""The builder's record of the model it built, and the standard form solvers are fed with.

A builder knows exactly what it created: which variables (in which order), which linear
rows, which quadratic form with which matrix. It records that as a :class:`Structure` on the
block -- plain data: numpy/scipy arrays and references to the Pyomo components. The solver
layer reads the record to hand a backend the matrices directly (the *fast path*) and never
imports a formulation module: both sides depend only on this module.

Before the fast path is taken, :func:`check` compares the model with the record (an active
component the record does not list, a changed or deactivated one, a fixed variable, a
replaced objective); any difference sends the solve down the general path, where the Pyomo
model -- always complete, see :mod:`svm_models.lazy` -- is read like any other Pyomo model.
:func:`from_pyomo` is that general reading for the matrix-fed backends.

Conventions (one place for them):

* A :class:`QuadBlock` is the quadratic form ``x[index]' M x[index]`` -- no factor 1/2.
* A :class:`StandardForm` is always a minimisation,
  ``const + c'x + sum_blocks x' M x``, with rows ``lA <= A x <= uA``, bounds ``lx <= x <= ux``
  and quadratic rows ``x' Q_k x + a_k'x <= u_k``; ``sense`` is +1 when the model minimises,
  -1 when it maximises (model objective = sense * standard-form objective).
* Duals are reported in the *sensitivity* convention: the derivative of the optimal value of
  the model's own objective with respect to the bound of the constraint (for a minimisation,
  ``>=`` rows have non-negative duals). Every backend's raw multipliers are normalised to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp
from pyomo.core.base.constraint import Constraint
from pyomo.core.base.objective import Objective
from pyomo.core.base.var import Var
from pyomo.core.expr.numvalue import value as pyo_value

INF = float("inf")


class QuadBlock:
    """The quadratic form ``x[index]' M x[index]`` with ``M`` dense (``matrix``) or diagonal (``diag``).

    A dense ``M`` is kept as ``scale * base``: :meth:`scaled` shares ``base`` instead of
    copying an l x l matrix (a solve scales the recorded blocks by -1/2, +1/2, the sense...).
    ``matrix`` returns ``M`` itself (a new array when ``scale != 1``); the numeric methods
    here and the Hessian assembly of :class:`StandardForm` work from ``base`` and ``scale``
    without forming it. ``base`` is shared: never modify it in place.
    """

    __slots__ = ("index", "base", "diag", "scale")

    def __init__(self, index, matrix=None, diag=None, *, scale: float = 1.0):
        self.index = index
        self.base = matrix
        self.scale = float(scale)
        if diag is not None and self.scale != 1.0:
            diag, self.scale = self.scale * diag, 1.0
        self.diag = diag

    @property
    def matrix(self) -> np.ndarray | None:
        """The dense ``M`` (None for a diagonal block)."""
        if self.base is None or self.scale == 1.0:
            return self.base
        return self.scale * self.base

    @matrix.setter
    def matrix(self, M) -> None:
        self.base, self.scale = M, 1.0

    def __repr__(self) -> str:
        kind = (f"dense {self.base.shape}, scale={self.scale:g}" if self.base is not None
                else f"diag ({len(self.diag)},)")
        return f"QuadBlock({kind}, index={len(self.index)} positions)"

    def scaled(self, s: float) -> "QuadBlock":
        if self.base is not None:
            return QuadBlock(self.index, self.base, scale=self.scale * s)
        return QuadBlock(self.index, diag=s * self.diag)

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``M v`` for v = x[index]."""
        if self.base is not None:
            Mv = self.base @ v
            if self.scale != 1.0:
                Mv *= self.scale
            return Mv
        return self.diag * v

    def value(self, x: np.ndarray) -> float:
        v = x[self.index]
        return float(v @ self.matvec(v))

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """Gradient of the form with respect to x[index] (``2 M v``)."""
        g = self.matvec(x[self.index])
        g *= 2.0
        return g


@dataclass(eq=False)
class RowGroup:
    """Rows ``lower <= A x <= upper`` that are the members ``datas`` of one Constraint."""

    component: Any
    datas: list
    A: sp.csr_matrix
    lower: np.ndarray
    upper: np.ndarray


@dataclass(eq=False)
class QuadRow:
    """One quadratic constraint ``sum_blocks x'Mx + a'x <= upper``."""

    data: Any
    quad: list
    linear: np.ndarray
    upper: float
    sign: float = 1.0  # -1 when the model states it as ``-q(x) >= -upper`` (dual sign flips)


@dataclass(eq=False)
class Structure:
    """What a builder built, as data.

    ``objective_fn(structure)`` returns ``(c, const, quad_blocks)`` of the objective *in the model's
    own sense* (mutable parameters such as C are read there, at solve time). ``problem_class``
    is one of ``"LP"``, ``"QP"``, ``"QCQP"``, ``"NLP"``.
    """

    block: Any
    variables: list
    objective: Any
    objective_expr: Any
    objective_fn: Callable
    rows: list = field(default_factory=list)
    quad_rows: list = field(default_factory=list)
    problem_class: str = "QP"
    extra: dict = field(default_factory=dict)

    def var_datas(self) -> list:
        out = []
        for v in self.variables:
            out.extend(v.values())
        return out

    def objective_value(self) -> float:
        """Value of the model's objective (its own sense) at the variables' current values.

        Computed from the record (``objective_fn``) with numpy when the objective is still the
        one the builder made: the same number as ``pyomo.value(objective)``, without
        materialising (and walking) the O(l^2) terms of a lazy quadratic form. Falls back to
        Pyomo's evaluation when the objective was changed or a variable has no value.
        """
        if self.objective.expr is self.objective_expr:
            vals = [vd.value for vd in self.var_datas()]
            if all(v is not None for v in vals):
                x = np.array(vals, dtype=float)
                c, const, quad = self.objective_fn(self)
                return float(const + np.asarray(c, dtype=float) @ x + sum(q.value(x) for q in quad))
        return float(pyo_value(self.objective))


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
    problem_class: str = "QP"

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
                sl = _as_slice(idx)
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
        sl = _as_slice(np.asarray(dense[0].index)) if len(dense) == 1 else None
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
        if self.qrows:
            raise ValueError("restrict() takes no quadratic rows")
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

    def equality_split(self):
        """Split rows into equalities ``Aeq x = beq`` and inequalities ``lA <= Ain x <= uA``.

        Returns ``(eq_idx, Aeq, beq, in_idx, Ain, l_in, u_in)``.
        """
        eq = np.isfinite(self.lA) & (self.lA == self.uA)
        eq_idx = np.flatnonzero(eq)
        in_idx = np.flatnonzero(~eq)
        return (eq_idx, self.A[eq_idx], self.lA[eq_idx], in_idx, self.A[in_idx],
                self.lA[in_idx], self.uA[in_idx])


def _as_slice(idx: np.ndarray) -> slice | None:
    """``slice(a, b)`` when ``idx`` is the contiguous range a, a+1, ..., b-1; else None."""
    k = len(idx)
    if k == 0:
        return None
    a = int(idx[0])
    if int(idx[-1]) - a != k - 1 or (k > 2 and not np.array_equal(idx, np.arange(a, a + k))):
        return None
    return slice(a, a + k)


def _add_scaled(out: np.ndarray, B: np.ndarray, coef: float, rows: int = 256) -> None:
    """``out += coef * B`` in row chunks (no temporary the size of B)."""
    for r in range(0, B.shape[0], rows):
        out[r:r + rows] += coef * B[r:r + rows]


def _bounds(var_datas) -> tuple[np.ndarray, np.ndarray]:
    n = len(var_datas)
    lx = np.full(n, -INF)
    ux = np.full(n, INF)
    for k, vd in enumerate(var_datas):
        lb, ub = vd.bounds
        if lb is not None:
            lx[k] = lb
        if ub is not None:
            ux[k] = ub
    return lx, ux


def assemble(structure: Structure) -> StandardForm:
    """The standard form of a recorded model with the current parameter values and bounds."""
    var_datas = structure.var_datas()
    c, const, quad = structure.objective_fn(structure)
    obj = structure.objective
    sense = 1 if obj.sense == 1 else -1  # pyomo: minimize == 1, maximize == -1
    if sense == -1:
        c, const, quad = -c, -const, [q.scaled(-1.0) for q in quad]
    lx, ux = _bounds(var_datas)
    if structure.rows:
        A = sp.vstack([g.A for g in structure.rows], format="csr")
        lA = np.concatenate([g.lower for g in structure.rows])
        uA = np.concatenate([g.upper for g in structure.rows])
        row_datas = [d for g in structure.rows for d in g.datas]
    else:
        A = sp.csr_matrix((0, len(var_datas)))
        lA = uA = np.zeros(0)
        row_datas = []
    return StandardForm(sense=sense, c=np.asarray(c, dtype=float), const=float(const), quad=quad,
                        A=A, lA=lA, uA=uA, lx=lx, ux=ux, qrows=list(structure.quad_rows),
                        var_datas=var_datas, row_datas=row_datas,
                        problem_class=structure.problem_class)


def check(structure: Structure) -> str | None:
    """Compare the model with the record; return ``None`` when they match, else the reason.

    The whole model the block lives in is inspected (a block inside a larger model with
    other active constraints or objectives does not match: the general path solves it).
    """
    model = structure.block.model()
    objs = list(model.component_data_objects(Objective, active=True, descend_into=True))
    if len(objs) != 1 or objs[0] is not structure.objective:
        return "the model's active objective is not the one the builder made"
    if structure.objective.expr is not structure.objective_expr:
        return "the objective expression was changed"
    recorded = {id(g.component): g for g in structure.rows}
    for q in structure.quad_rows:
        recorded.setdefault(id(q.data.parent_component()), None)
    seen = 0
    for comp in model.component_objects(Constraint, active=True, descend_into=True):
        if id(comp) not in recorded:
            return f"constraint {comp.name!r} is not part of the recorded model"
        seen += 1
    if seen != len(recorded):
        return "a recorded constraint was deactivated"
    for g in structure.rows:
        if sum(1 for d in g.component.values() if d.active) != len(g.datas):
            return f"members of constraint {g.component.name!r} were added or deactivated"
    for q in structure.quad_rows:
        if not q.data.active:
            return f"constraint {q.data.name!r} was deactivated"
    for v in structure.variables:
        for vd in v.values():
            if vd.fixed:
                return f"variable {vd.name} is fixed"
    return None


# ---------------------------------------------------------------------------------------
# The general reading of any Pyomo model (for the matrix-fed backends' general path)


def from_pyomo(model) -> StandardForm:
    """Standard form of an arbitrary (LP/QP/QCQP) Pyomo model via Pyomo's own repn.

    Slow per term, but exact and independent of any record: the general path of the
    matrix-fed backends, and a cross-check of the builders' records in the tests.
    Raises ValueError for non-polynomial models or more than one active objective.
    """
    from pyomo.repn.standard_repn import generate_standard_repn

    objs = list(model.component_data_objects(Objective, active=True, descend_into=True))
    if len(objs) != 1:
        raise ValueError(f"the model must have exactly one active objective; it has {len(objs)}")
    cons = list(model.component_data_objects(Constraint, active=True, descend_into=True))
    index: dict[int, int] = {}
    var_datas: list = []

    def pos(v):
        k = index.get(id(v))
        if k is None:
            k = index[id(v)] = len(var_datas)
            var_datas.append(v)
        return k

    def read(expr):
        repn = generate_standard_repn(expr, quadratic=True, compute_values=True)
        if repn.nonlinear_expr is not None:
            raise ValueError("the model is not linear or quadratic")
        lin = [(pos(v), float(c)) for v, c in zip(repn.linear_vars, repn.linear_coefs)]
        quad = [(pos(a), pos(b), float(c)) for (a, b), c in zip(repn.quadratic_vars, repn.quadratic_coefs)]
        return float(repn.constant), lin, quad

    obj = objs[0]
    o_const, o_lin, o_quad = read(obj.expr)
    lin_rows, quad_rows = [], []
    for cd in cons:
        const, lin, quad = read(cd.body)
        lo = -INF if cd.lower is None else float(pyo_value(cd.lower)) - const
        up = INF if cd.upper is None else float(pyo_value(cd.upper)) - const
        (quad_rows if quad else lin_rows).append((cd, lin, quad, lo, up))
    for v in model.component_data_objects(Var, active=True, descend_into=True):
        if not v.fixed:
            pos(v)
    n = len(var_datas)

    def quad_block(terms):
        M = np.zeros((n, n))
        for a, b, c in terms:
            if a == b:
                M[a, a] += c
            else:
                M[a, b] += c / 2.0
                M[b, a] += c / 2.0
        return QuadBlock(np.arange(n), matrix=M)

    sense = 1 if obj.sense == 1 else -1
    c = np.zeros(n)
    for k, a in o_lin:
        c[k] += a
    quad = [quad_block(o_quad)] if o_quad else []
    if sense == -1:
        c, o_const, quad = -c, -o_const, [q.scaled(-1.0) for q in quad]
    rr, cc, vv = [], [], []
    for r, (_, lin, _, _, _) in enumerate(lin_rows):
        for k, a in lin:
            rr.append(r); cc.append(k); vv.append(a)
    A = sp.csr_matrix((vv, (rr, cc)), shape=(len(lin_rows), n))
    qrows = []
    for cd, lin, quad_terms, lo, up in quad_rows:
        a = np.zeros(n)
        for k, v in lin:
            a[k] += v
        if np.isfinite(up) and not np.isfinite(lo):
            qrows.append(QuadRow(cd, [quad_block(quad_terms)], a, up))
        elif np.isfinite(lo) and not np.isfinite(up):  # q(x) >= lo  <=>  -q(x) <= -lo
            qrows.append(QuadRow(cd, [quad_block(quad_terms).scaled(-1.0)], -a, -lo, sign=-1.0))
        else:
            raise ValueError(f"quadratic constraint {cd.name} must be one-sided")
    lx, ux = _bounds(var_datas)
    return StandardForm(sense=sense, c=c, const=o_const, quad=quad, A=A,
                        lA=np.array([r[3] for r in lin_rows]), uA=np.array([r[4] for r in lin_rows]),
                        lx=lx, ux=ux, qrows=qrows, var_datas=var_datas,
                        row_datas=[r[0] for r in lin_rows],
                        problem_class="QCQP" if qrows else ("QP" if quad else "LP"))

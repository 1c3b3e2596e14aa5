"""Exact scaling of a standard form: what a formulation declares, and how it is applied.

The classic SVMs are invariant under scaling the kernel together with C: with ``K -> K/s``,
``alpha -> s alpha``, ``C -> s C`` (features ``x -> x / sqrt(s)``, ``w -> sqrt(s) w`` in the
primals) every objective is multiplied by ``s`` and the decision function is unchanged. A
builder records that invariance as a :class:`ScaleRule` (plain data: the kernel's scale, the
box parameter, and per variable the power of ``s`` it carries). Before a backend sees the
problem, :func:`scaling_for` turns the rule into a :class:`Scaling` -- a diagonal change of
variables ``x = D x~``, a factor ``sigma`` on the objective and factors ``R`` on the rows --
and :func:`scale` applies it. Every factor is a power of two, so the scaled problem and the
answer mapped back (:meth:`Scaling.unscale_result`) are exact: the multiplications change
no digit.

The scale is ``s = max(k, 1/C)`` (``k`` the mean of the kernel's diagonal), rounded to a power
of four (so that ``sqrt(s)`` is a power of two too): after scaling the kernel has entries of
order one and the box is ``[0, sC] >= [0, 1]`` -- at small C every ``alpha = C beta`` with
``beta`` of order one, at large C the box far above the solution. Within
:data:`~svm_models.tolerances.SCALE_DEAD_BAND` of one the problem is already of order one and
is left as it is (no copy of its matrices).

A classic dual's dense kernel block may also be centred (:func:`centred`): ``H K H`` in place
of ``K``, the same objective wherever ``y'a = 0`` -- a row of every classic dual -- so the same
problem, its entries the size of the differences that decide the optimum.

Bounds far above the scale of the scaled problem (a 1-norm box at C = 1e15) are a numerical
hazard for an interior-point method; :func:`proxy_bounds` replaces them by a moderate bound,
and :func:`proxy_inactive` checks afterwards that the answer stays well inside it -- the
answer of the problem with the smaller box is then the answer of the original problem
(a convex problem: the constraints that differ are not active). When it does not, the same
bounds are dropped altogether (:func:`without_bounds`): an optimum of that relaxation which
satisfies them (:func:`within_bounds`) is the original's optimum -- at a C above the hard
margin's largest alpha, the hard margin is the answer at C.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from ..tolerances import PROXY_BOUND, PROXY_MARGIN, SCALE_DEAD_BAND
from .forms import QuadBlock


@dataclass(frozen=True, eq=False)
class ScaleRule:
    """A formulation's exact scaling, as data.

    ``s = max(base, 1 / value(param))`` (``param`` a mutable Param on the recorded block, or
    None: ``s = base``); variable ``i`` is ``s**exponents[i]`` times its scaled value; the
    objective is multiplied by ``s**objective``."""

    base: float
    exponents: np.ndarray
    param: str | None = None
    objective: float = 1.0

    def value(self, block) -> float:
        s = float(self.base)
        if self.param is not None:
            from pyomo.core.expr.numvalue import value as pyo_value

            p = float(pyo_value(block.component(self.param)))
            if p > 0 and math.isfinite(p):
                s = max(s, 1.0 / p)
        return s


@dataclass(eq=False)
class Scaling:
    """``x = col * x~``; scaled objective ``= obj * objective``; scaled row ``i`` = ``row[i]``
    times row ``i`` (both sides). ``s`` is the scale it came from (a power of four)."""

    s: float
    col: np.ndarray
    row: np.ndarray
    obj: float
    forced: bool = False
    extra: dict = field(default_factory=dict)

    def describe(self) -> dict:
        if self.extra.get("diagonal"):
            return {"s": self.s, "objective_factor": self.obj, "forced": True,
                    "diagonal": True, "column_factors": (float(self.col.min()),
                                                         float(self.col.max()))}
        return {"s": self.s, "objective_factor": self.obj, "forced": self.forced,
                "kernel_factor": 1.0 / self.s}

    # -- the problem -------------------------------------------------------------------
    def unscale_x(self, xs: np.ndarray) -> np.ndarray:
        return self.col * xs

    def scale_x(self, x: np.ndarray) -> np.ndarray:
        return x / self.col

    def unscale_result(self, res):
        """A backend's :class:`~svm_models.solvers.base.MatrixResult` of the scaled problem
        as the result of the original one (x, row duals; quadratic rows and cones carry no
        row factor, only the objective's)."""
        if res.x is not None:
            res.x = self.unscale_x(np.asarray(res.x, dtype=float))
        if res.row_duals is not None:
            res.row_duals = np.asarray(res.row_duals, dtype=float) * (self.row / self.obj)
        if res.qrow_duals is not None:
            res.qrow_duals = np.asarray(res.qrow_duals, dtype=float) / self.obj
        if res.cone_duals is not None:
            res.cone_duals = np.asarray(res.cone_duals, dtype=float) / self.obj
        if res.objective is not None:
            res.objective = float(res.objective) / self.obj
        res.extra["scaling"] = self.describe()
        return res


def power_of_four(s: float) -> float:
    """The power of four nearest to ``s`` (on a log scale; 1 for a non-positive or non-finite
    ``s``): a scale whose square root is a power of two, so scaling by it is exact."""
    if not (s > 0 and math.isfinite(s)):
        return 1.0
    return 4.0 ** int(np.round(np.log2(s) / 2.0))


def _pow2(v: np.ndarray) -> np.ndarray:
    """The power of two nearest to each (positive, finite) entry of ``v``; 1 elsewhere."""
    v = np.asarray(v, dtype=float)
    out = np.ones_like(v)
    ok = np.isfinite(v) & (v > 0)
    out[ok] = np.exp2(np.round(np.log2(v[ok])))
    return out


def scaling_for(rule: ScaleRule | None, block, sf, *, force: bool = False) -> Scaling | None:
    """The scaling of ``sf`` that ``rule`` declares (None: no rule, or a scale within the dead
    band and not ``force``d)."""
    if rule is None or len(rule.exponents) != sf.n:
        return None
    s_raw = rule.value(block)
    if not (s_raw > 0 and math.isfinite(s_raw)):
        return None
    s = power_of_four(s_raw)
    m = int(np.round(np.log2(s) / 2.0))
    if abs(m) <= SCALE_DEAD_BAND and not force:
        return None
    if m == 0:
        return None
    col = np.exp2(2.0 * m * np.asarray(rule.exponents, dtype=float))   # s ** e, exactly
    obj = 4.0 ** (m * rule.objective)
    # rows: equilibrated (largest entry of order one) after the change of variables
    row = _equilibrated_rows(sf, col)
    return Scaling(s=s, col=col, row=row, obj=obj, forced=force)


def diagonal_scaling(sf) -> Scaling | None:
    """The exact diagonal scaling of ``sf``'s dense quadratic blocks: variable ``i`` of such a
    block is ``d_i`` times its scaled value, ``d_i`` the power of two nearest ``1/sqrt(Q_ii)``
    (1 where ``Q_ii <= 0``), so the scaled Hessian has a diagonal within a factor 2 of one;
    rows equilibrated as in :func:`scaling_for`. For a 1-norm dual whose kernel diagonal
    spans many orders of magnitude (a poly kernel of features 1e-4 .. 1e4) the one scale
    ``s`` of :func:`scaling_for` cannot make every entry of order one; this can. None when
    no dense block has a diagonal entry away from one."""
    col = np.ones(sf.n)
    for q in sf.quad:
        if q.base is None:
            continue
        diag = np.abs(np.diag(q.matrix))
        root = np.sqrt(np.where(diag > 0, diag, 1.0))
        col[np.asarray(q.index)] = np.where(diag > 0, 1.0 / _pow2(root), 1.0)
    if np.all(col == 1.0):
        return None
    row = _equilibrated_rows(sf, col)
    s = float(np.exp2(np.round(np.mean(np.log2(col)))) ** -2)
    sc = Scaling(s=s, col=col, row=row, obj=1.0, forced=True)
    sc.extra["diagonal"] = True
    return sc


def centred(sf, structure):
    """``sf`` with the dense kernel block of the classic dual ``structure``
    (:class:`~svm_models.model.forms.DualSVM`) centred in feature space: ``G`` (``= D_y K
    D_y``) replaced by ``P G P``, ``P = I - y y'/l`` the projection onto ``y'a = 0`` (``y'y =
    l``), i.e. ``K`` by ``H K H``, ``H = I - ee'/l`` -- the same objective wherever ``y'a =
    0``, a row of every classic dual, so the same problem (libsvm is given it so too). A
    kernel whose entries share a large constant part (an rbf kernel whose ``gamma="scale"``
    is set by one feature of 1e4: entries near 1 everywhere) then has entries of the size of
    the differences that decide the optimum: HiGHS's active set reached its iteration limit
    on random problem 63 and solved it centred in 0.7 s. None when ``sf`` has no dense block
    on ``structure.alpha``."""
    alpha = np.asarray(structure.alpha)
    y = np.asarray(structure.y, dtype=float)
    quad, done = [], False
    for q in sf.quad:
        if (not done and q.base is not None and len(q.index) == len(alpha)
                and np.array_equal(np.asarray(q.index), alpha)):
            M = np.asarray(q.matrix, dtype=float)
            l = len(y)
            v = M @ y / l
            mu = float(y @ v) / l
            Mc = M - np.outer(v, y) - np.outer(y, v) + mu * np.outer(y, y)
            quad.append(QuadBlock(q.index, matrix=0.5 * (Mc + Mc.T)))
            done = True
        else:
            quad.append(q)
    return replace(sf, quad=quad) if done else None


def _equilibrated_rows(sf, col: np.ndarray) -> np.ndarray:
    """Row factors (powers of two) that make each row's largest entry of order one after the
    change of variables ``x = col * x~``."""
    if not sf.m:
        return np.ones(0)
    A = sp.csr_matrix(sf.A)
    absd = np.abs(A.data) * col[A.indices]
    top = np.zeros(sf.m)
    nz = np.diff(A.indptr) > 0
    if absd.size:
        top[nz] = np.maximum.reduceat(absd, A.indptr[:-1][nz])
    return np.where(top > 0, 1.0 / _pow2(top), 1.0)


def scale(sf, sc: Scaling):
    """The standard form ``sf`` in the scaled variables (see :class:`Scaling`); ``sf`` itself
    is not changed (its dense blocks are shared, only their scale factor differs)."""
    from .standard_form import StandardForm

    col, obj = sc.col, sc.obj
    c = obj * col * sf.c
    quad = []
    for q in sf.quad:
        d = col[np.asarray(q.index)]
        if q.base is not None:
            if np.all(d == d[0]):
                quad.append(q.scaled(obj * float(d[0]) ** 2))
            else:   # (no builder's rule does this: a dense block spans one variable)
                quad.append(QuadBlock(q.index, matrix=obj * d[:, None] * q.dense() * d[None, :]))
        else:
            quad.append(QuadBlock(q.index, diag=obj * q.diag * d * d))
    A = sp.csr_matrix(sf.A)
    if A.nnz:
        rows = np.repeat(np.arange(sf.m), np.diff(A.indptr))
        data = A.data * sc.row[rows] * col[A.indices]
        if np.array_equal(data, A.data):
            As = A
        else:
            As = sp.csr_matrix((data, A.indices, A.indptr), shape=A.shape)
    else:
        As = A
    with np.errstate(invalid="ignore"):
        lA = np.where(np.isfinite(sf.lA), sf.lA * sc.row, sf.lA)
        uA = np.where(np.isfinite(sf.uA), sf.uA * sc.row, sf.uA)
        lx = np.where(np.isfinite(sf.lx), sf.lx / col, sf.lx)
        ux = np.where(np.isfinite(sf.ux), sf.ux / col, sf.ux)
    qrows = []
    for q in sf.qrows:
        blocks = []
        for b in q.quad:
            d = col[np.asarray(b.index)]
            blocks.append(QuadBlock(b.index, matrix=d[:, None] * b.dense() * d[None, :])
                          if b.base is not None else QuadBlock(b.index, diag=b.diag * d * d))
        qrows.append(replace(q, quad=blocks, linear=q.linear * col))
    cones = [replace(cn, A=sp.csr_matrix(cn.A) @ sp.diags(col)) for cn in sf.cones]
    return StandardForm(sense=sf.sense, c=c, const=obj * sf.const, quad=quad, A=As, lA=lA,
                        uA=uA, lx=lx, ux=ux, qrows=qrows, var_datas=sf.var_datas,
                        row_datas=sf.row_datas, cones=cones, problem_class=sf.problem_class)


def proxy_bounds(sf, bound: float = PROXY_BOUND):
    """``(sf with every finite bound beyond ``bound`` moved to +-bound, mask of the moved
    bounds)``; ``(sf, None)`` when none is that large."""
    big_u = np.isfinite(sf.ux) & (sf.ux > bound) & (np.maximum(sf.lx, 0) < bound / 4)
    big_l = np.isfinite(sf.lx) & (sf.lx < -bound) & (np.minimum(sf.ux, 0) > -bound / 4)
    if not (big_u.any() or big_l.any()):
        return sf, None
    ux = np.where(big_u, bound, sf.ux)
    lx = np.where(big_l, -bound, sf.lx)
    return replace(sf, lx=lx, ux=ux), (big_l, big_u)


def without_bounds(sf, moved):
    """``sf`` with the bounds :func:`proxy_bounds` moved dropped altogether (made infinite).
    Its optimum, when it lies within those bounds (:func:`within_bounds`), is the optimum of
    ``sf`` itself: ``sf``'s feasible set is a subset of this one. A 1-norm box far above the
    solution's scale (C = 1e10 on moons, alphas up to 8.7e7) is then solved as the hard
    margin, which the backends that failed on the box [0, 1e9] answer at once."""
    big_l, big_u = moved
    return replace(sf, lx=np.where(big_l, -np.inf, sf.lx), ux=np.where(big_u, np.inf, sf.ux))


def within_bounds(x: np.ndarray, sf, moved) -> bool:
    """Whether ``x`` satisfies the bounds of ``sf`` that ``moved`` names (exactly)."""
    big_l, big_u = moved
    return bool(np.all(x[big_u] <= sf.ux[big_u]) and np.all(x[big_l] >= sf.lx[big_l]))


def proxy_inactive(x: np.ndarray, moved, bound: float = PROXY_BOUND) -> bool:
    """Whether ``x`` stays clearly inside every moved bound (then the moved bounds are not
    active and the answer is that of the original problem)."""
    big_l, big_u = moved
    lim = PROXY_MARGIN * bound
    return bool(np.all(x[big_u] < lim) and np.all(x[big_l] > -lim))

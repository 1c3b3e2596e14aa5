"""From a solved block to a :class:`~svm_models.solution.Solution`: the shared pieces.

One place for: the context a solve hands the extractors (:class:`Context`), the KKT rules
for ``b`` (``formulations/classic.md``), the support-vector rule
(:func:`~svm_models.tolerances.support_threshold`),
active-set polishing of a dual, the recovery of ``alpha`` from a primal without multipliers,
and the classic SVM's primal/dual objectives, duality gap and KKT residuals.

Diagnostics describe the model that was solved: they are computed from the formulation's
mathematics only when the record proves the model is the formulation (``Context.verified``);
after a user's change they are left out and ``Solution.diagnostics`` says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field


import warnings

import numpy as np
import pyomo.environ as pyo
from scipy.linalg.lapack import dpotrf, dpotrs

from .errors import ParameterError
from .model.forms import Margin
from .model.pyomo_compat import values_of as _raw_values
from .model.record import members
from .status import Status
from .tolerances import BIAS_FLAT, CERT_ROUNDOFF, CERT_ROUNDOFF_MAX, USER_SIGN_CLEAR


@dataclass(eq=False)
class Context:
    """What a solve tells the extractor besides the variable values (loaded in the model).

    ``duals``: mapping constraint data -> dual in the sensitivity convention (None where the
    backend gives none); ``verified``: the record proves the model is the formulation (else
    ``reason`` says what changed); ``objective``: the value of the objective the solver
    optimised (None: compute it); ``tol``: the tolerance the values were solved to (it scales
    the support rule); ``certify_tol``: the tolerance the user asked for (what a certificate
    must reach; None: ``tol``); ``scale``: the factor ``c`` with which the model's objective
    holds the formulation's (``c E + rest``,
    :func:`~svm_models.model.mixed.objective_scale`): the duals read here (:meth:`dual`,
    :func:`margin_multipliers`) are divided by it -- the formulation's multipliers, whose
    convention b and a primal's alpha follow, also when the user minimises ``-E`` -- and
    none is read when it is None (the objective holds E in a way that cannot be read)."""

    solver: str = ""
    interface: str = ""
    path: str = ""
    time: float = 0.0
    status: Status = Status.optimal
    tol: float | None = None
    duals: object = None
    verified: bool = True
    reason: str | None = None
    objective: float | None = None
    certify_tol: float | None = None
    extra: dict = field(default_factory=dict)
    scale: float | None = 1.0

    def dual(self, data):
        """The dual of one constraint in the formulation's convention (divided by
        :attr:`scale`), or None."""
        if self.duals is None or self.scale is None or data not in self.duals:
            return None
        return float(self.duals[data]) / self.scale


def user_dual_sign(violation, *, material: bool, what: str, extra: dict) -> float:
    """The sign in which to read the duals a user hands to :func:`svm_models.extract` (the
    ``"user"`` interface): ``+1`` as given, ``-1`` flipped. The one rule for every row a
    user's dual is read from.

    Interfaces differ in sign (cyipopt's are the opposite of gurobi_direct's), and the sign
    follows the sense of the objective the user solved -- a block inside a larger model, its
    objective summed into the user's maximisation or minimisation, is read either way round.
    So the convention is not assumed: of the two readings, the one that is dual feasible for
    the block's own rows is taken. ``violation(s)`` says how far the reading with sign ``s``
    is from that (0: dual feasible; relative); ``material``: the two readings give different
    answers (False: the multipliers are 0, the sign does not matter). The reading whose
    violation is at most 1/:data:`USER_SIGN_CLEAR` of the other's is taken
    (``Solution.dual_sign`` says when that is the flipped one); when neither is, the sign
    cannot be decided and a ParameterError says so, naming ``what`` was read."""
    if not material:
        return 1.0
    keep, flip = float(violation(1.0)), float(violation(-1.0))
    if keep * USER_SIGN_CLEAR <= flip and flip > 0.0:
        return 1.0
    if flip * USER_SIGN_CLEAR <= keep and keep > 0.0:
        extra["dual_sign"] = (f"the duals given were read with the opposite sign: {what}, read "
                              f"as given, violate dual feasibility by {keep:.3g}; flipped, by "
                              f"{flip:.3g}")
        return -1.0
    raise ParameterError(
        f"the sign of the duals given cannot be decided: {what}, read as given, violate dual "
        f"feasibility by {keep:.3g}, read with the opposite sign by {flip:.3g} -- neither "
        f"reading is clearly the dual-feasible one (a factor {USER_SIGN_CLEAR:g} apart is "
        "needed), so they may not be this block's duals, or the model around the block "
        "changes its optimality conditions. Pass the duals of the model as solved (a Suffix "
        "'dual' filled by the solver), solve to a tighter tolerance, or extract without duals")


def margin_multipliers(svm, ctx: Context, extra: dict,
                       reference: np.ndarray | None = None) -> np.ndarray | None:
    """The multipliers of the margin rows (the record's first row group) as an array, None
    unless the backend gave all: read as one run of rows where the duals allow it (the fast
    path), else row by row. Duals a user hands to :func:`svm_models.extract` are read in the
    sign that is dual feasible for these rows (:func:`user_dual_sign`): ``>= 0`` for the
    margin inequalities ``>= 1`` of a minimisation; for margin equalities (a least-squares
    SVM, multipliers of either sign) the sign in which they match ``reference`` (what the
    optimality conditions in a variable of the margin rows alone make them: ``C weight_i
    e_i``); without a reference, on the formulation as built, their sum ``>= 0`` (twice the
    optimum) -- on a changed model that sum says nothing (a user's row moves it) and the
    sign is not decided (ParameterError)."""
    group = svm.record.rows[0]
    datas = group.datas
    if ctx.scale is None:
        return None
    of = getattr(ctx.duals, "of", None)
    mult = of(datas) if of is not None else None
    if mult is None:
        vals = [ctx.dual(d) for d in datas]
        if not all(v is not None for v in vals):
            return None
        mult = np.asarray(vals, dtype=float)
    else:
        mult = np.asarray(mult, dtype=float) / ctx.scale
    if ctx.interface == "user":
        size = max(float(np.sum(np.abs(mult))), 1e-300)
        equality = bool(np.all(np.asarray(group.lower) == np.asarray(group.upper)))

        if equality and reference is None and not ctx.verified:
            raise ParameterError(
                "the sign of the margin rows' multipliers given cannot be decided on this "
                "changed model (equality rows: either sign is dual feasible). Extract without "
                "duals, or pass duals in the library's convention from svm_models.solve")
        ref = None if reference is None else np.asarray(reference, dtype=float)

        def violation(s):
            if equality and ref is not None:
                return (float(np.sum(np.abs(s * mult - ref)))
                        / max(size + float(np.sum(np.abs(ref))), 1e-300))
            if equality:
                return max(0.0, -s * float(np.sum(mult))) / size
            return float(np.sum(np.maximum(0.0, -s * mult))) / size

        what = "the margin rows' multipliers" + (" (their sum)" if equality else "")
        mult = mult * user_dual_sign(violation, material=bool(np.any(mult != 0.0)),
                                     what=what, extra=extra)
    return mult


def user_multiplier(ctx: Context, data, violation, *, material, what: str,
                    extra: dict) -> float | None:
    """The dual of one row ``data`` of the block (None: not given), read -- when a user handed
    it to :func:`svm_models.extract` -- in the sign :func:`user_dual_sign` decides:
    ``violation(d)`` is how far the reading ``d`` is from dual feasible, ``material(d)``
    whether ``d`` and ``-d`` differ as answers."""
    d = ctx.dual(data)
    if d is None or ctx.interface != "user":
        return d
    return d * user_dual_sign(lambda s: violation(s * d), material=material(d), what=what,
                              extra=extra)


def linear_primal_values(svm, block) -> tuple:
    """``(X, y, C, C_i, w, b)`` of a solved linear-kernel primal with C per point
    (``l1_norm_primal``, ``ls_svm_primal``): ``C``, each point's penalty ``C * weight_i`` and
    the values of ``w`` and ``b`` as solved."""
    data = svm.data
    C = float(pyo.value(block.C))
    C_i = C * (np.ones(data.n_points) if svm.weight is None else svm.weight)
    return data.X, data.y, C, C_i, values_of(members(block.w)), float(pyo.value(block.b))


def var_array(var) -> np.ndarray:
    """The values of an indexed variable (NaN where it has none), in its order."""
    return values_of(members(var))


def values_of(var_datas: list) -> np.ndarray:
    """The values of variable data objects, NaN where there is none."""
    return np.array(_raw_values(var_datas), dtype=float)  # None: NaN


def block_objective(svm, block, ctx: Context) -> float:
    """The objective of the SVM in ``block``, as the Solution reports it: the solver's value
    when it solved the SVM alone, the record's when the block is still the formulation, else
    the block's own objective expression -- the one active objective inside the block (a user
    who replaced the formulation's objective), or the formulation's ``block.objective``,
    evaluated even when deactivated. Never a larger model's objective: an SVM block inside
    the user's model reports its own (issue 31)."""
    if ctx.objective is not None:
        return float(ctx.objective)
    if ctx.verified:
        return float(svm.record.objective_value(values_of(svm.record.var_datas())))
    own = list(block.component_data_objects(pyo.Objective, active=True, descend_into=True))
    return float(pyo.value(own[0] if len(own) == 1 else block.objective))


def ratio(a: np.ndarray, C) -> np.ndarray:
    """``a / C`` elementwise for a penalty ``C`` that is one number or one per point
    (``C * sample_weight``), 0 where ``C_i`` is 0 (a point of weight 0: its alpha is 0)."""
    if np.ndim(C) == 0:
        return a / C
    return np.divide(a, C, out=np.zeros(np.shape(a)), where=np.asarray(C) > 0)


def live(C, n: int) -> np.ndarray:
    """The points that count: ``C_i > 0`` (every point for one number C or the hard margin)."""
    if C is None or np.ndim(C) == 0:
        return np.ones(n, dtype=bool)
    return np.asarray(C) > 0


def bias_from_kkt(margin: Margin, alpha, y, f, C, thr) -> float:
    """``b`` from the KKT conditions of the dual, given ``f = K(y*alpha)``
    (``formulations/classic.md``).

    hard: the midpoint of the interval of ``b`` that keeps every margin ``y_i (f_i + b) >= 1``,
    ``[max_{y_i > 0} (1 - f_i), min_{y_i < 0} (-1 - f_i)]`` -- at the optimum both ends are the
    optimal ``b`` (each class has a support vector on its margin), and unlike an average over
    ``alpha_i > thr`` it does not depend on which points the threshold calls support vectors
    (an interior-point solver spreads alpha over near-identical points, one of them off the
    margin: the average was 2e-5 off, found by fuzzing); 1-norm: the average of ``y_i - f_i``
    over free vectors ``thr < alpha_i < C - thr``, or with none the midpoint of the interval
    the KKT conditions allow (as libsvm); 2-norm: average of ``y_i (1 - alpha_i/C) - f_i`` over
    ``alpha_i > thr``. ``C`` is one number or one per point (a point of weight 0, ``C_i = 0``,
    constrains nothing). ``margin``: a :class:`~svm_models.model.forms.Margin` (as in every rule
    below).
    """
    if margin.level:
        return levels(margin, alpha, y, f, C, thr)[0]
    sv = alpha > thr
    if margin.ridge:
        return float(np.mean(y[sv] * (1.0 - ratio(alpha, C)[sv]) - f[sv])) if sv.any() else 0.0
    if margin.hard:
        lo = float(np.max(1.0 - f[y > 0], initial=-np.inf))
        hi = float(np.min(-1.0 - f[y < 0], initial=np.inf))
        if np.isfinite(lo) and np.isfinite(hi):
            return (lo + hi) / 2
        return float(np.mean(y[sv] - f[sv])) if sv.any() else 0.0
    free = sv & (alpha < C - thr)
    if free.any():   # (their mean: the sum / the count, as np.mean computes it)
        d = y[free] - f[free]
        return float(d.sum() / d.size)
    # no free vector: every support vector is at the bound C. The KKT conditions read
    # y_i (f_i + b) >= 1 where alpha_i = 0 and y_i (f_i + b) <= 1 where alpha_i = C,
    # i.e. y_i b >= r_i (alpha_i = 0) and y_i b <= r_i (alpha_i = C) with r = 1 - y f.
    r = 1.0 - y * f
    pos, neg = y > 0, y < 0
    at_zero, at_c = ~sv & live(C, len(alpha)), sv
    lo = np.concatenate([[-np.inf], r[at_zero & pos], -r[at_c & neg]])
    hi = np.concatenate([[np.inf], -r[at_zero & neg], r[at_c & pos]])
    lo_b, hi_b = float(lo.max()), float(hi.min())
    if np.isfinite(lo_b) and np.isfinite(hi_b):
        return (lo_b + hi_b) / 2
    return lo_b if np.isfinite(lo_b) else hi_b if np.isfinite(hi_b) else 0.0


def levels(margin: Margin, alpha, y, f, C, thr) -> tuple[float, float]:
    """``(b, rho)``: the bias and the margin's level from the KKT conditions of the dual,
    given ``f = K(y*alpha)``. A margin of level 1 (``not margin.level``): ``(b, 1)``, b by
    :func:`bias_from_kkt`. A margin whose level is a variable (the nu-SVM: ``y_i (f_i + b) =
    rho`` on the free points ``0 < alpha_i < C_i``): per class ``c`` the level ``r_c`` that
    ``g_i = y_i f_i`` takes on its free points, their mean; with no free point of the class,
    the midpoint of the interval the others allow (``g_i <= r_c`` at the upper bound, ``>=
    r_c`` at zero), as libsvm does; ``rho = (r_+ + r_-) / 2``, ``b = (r_- - r_+) / 2``
    (``formulations/nu.md``)."""
    if not margin.level:
        return bias_from_kkt(margin, alpha, y, f, C, thr), 1.0
    g = y * f
    upper = np.broadcast_to(np.asarray(C, dtype=float), np.shape(alpha))
    r = []
    for c in (1.0, -1.0):
        cls = (y == c) & (upper > 0)
        free = cls & (alpha > thr) & (alpha < upper - thr)
        if free.any():
            r.append(float(np.mean(g[free])))
            continue
        at_top, at_zero = cls & (alpha >= upper - thr), cls & (alpha <= thr)
        lo = float(np.max(g[at_top], initial=-np.inf))
        hi = float(np.min(g[at_zero], initial=np.inf))
        r.append(0.5 * (lo + hi) if np.isfinite(lo) and np.isfinite(hi) else
                 lo if np.isfinite(lo) else hi)
    return 0.5 * (r[1] - r[0]), 0.5 * (r[0] + r[1])


def bias_minimising_primal(y, f, C) -> float:
    """The ``b`` that minimises the 1-norm primal ``sum_i C_i max(0, 1 - y_i (f_i + b))`` for
    the given ``f = K(y*alpha)`` (C one number or one per point; a point of weight 0 counts
    for nothing): a weighted median of the breakpoints ``y_i - f_i``; where the minimum is an
    interval, its midpoint (as libsvm). With it the classifier ``(alpha, b)`` has the
    smallest primal objective that alpha's ``w`` allows, so its certificate against alpha's
    dual objective is the tightest. It is the b of the optimum whenever alpha is optimal;
    apart from that it matters where the KKT conditions read from an inexact alpha cannot
    place b to the precision the margins need (class weights 1000 and 1e-4: a shortfall of
    1e-9 on a point of C_i = 1000 is 2e-4 of the objective)."""
    y = np.asarray(y, dtype=float)
    c = np.broadcast_to(np.asarray(C, dtype=float), y.shape)
    t = y - np.asarray(f, dtype=float)   # y_i (f_i + b) = 1 at b = t_i
    live_ = c > 0
    pos, neg = live_ & (y > 0), live_ & (y < 0)
    tp, cp = t[pos], c[pos]
    tn, cn = t[neg], c[neg]
    if not (tp.size or tn.size):
        return 0.0
    op, on = np.argsort(tp), np.argsort(tn)
    tp, cp, tn, cn = tp[op], cp[op], tn[on], cn[on]
    # right derivative at b: -(weight of positives with t_i > b) + (weight of negatives with
    # t_i <= b); nondecreasing in b
    cum_p = np.concatenate([[0.0], np.cumsum(cp)])
    cum_n = np.concatenate([[0.0], np.cumsum(cn)])
    knots = np.unique(np.concatenate([tp, tn]))
    right = (-(cum_p[-1] - cum_p[np.searchsorted(tp, knots, side="right")])
             + cum_n[np.searchsorted(tn, knots, side="right")])
    flat = BIAS_FLAT * (cum_p[-1] + cum_n[-1])
    # the first knot where it is >= 0 (there is one: at the last knot it is the negatives'
    # weight)
    k = min(int(np.searchsorted(right, -flat, side="left")), len(knots) - 1)
    if abs(right[k]) <= flat and k + 1 < len(knots):   # a flat piece: its midpoint
        return float((knots[k] + knots[k + 1]) / 2)
    return float(knots[k])


def dual_kkt_residual(margin: Margin, alpha, y, f, b, C, thr, rho: float = 1.0) -> float:
    """Largest violation of the dual KKT conditions, in units of the margin's level ``rho``
    (1, or the nu-SVM's; ``f = K(y*alpha)``)."""
    m = (y * (f + b) + (ratio(alpha, C) if margin.ridge else 0.0)) / rho   # = 1 on free vectors
    res = np.zeros_like(alpha)
    lower = alpha <= thr
    upper = (alpha >= C - thr) if margin.box else np.zeros_like(lower)
    free = ~lower & ~upper
    res[free] = np.abs(m[free] - 1.0)
    res[lower] = np.maximum(0.0, 1.0 - m[lower])
    res[upper] = np.maximum(0.0, m[upper] - 1.0)
    res[~live(None if margin.hard else C, len(alpha))] = 0.0   # weight 0: no condition
    return float(res.max(initial=0.0))


#: polishing solves a dense system in the free vectors: beyond this many it is not tried
POLISH_MAX_FREE = 1500
#: a polished alpha is taken when its KKT residual is no larger than the solver's alpha's and
#: its dual objective no lower than the solver's alpha's beyond round-off: this times the
#: size of the terms that cancel in it
POLISH_ROUNDOFF = 1e-14
#: ...when the solver's alpha is balanced, ``|y'alpha| <= POLISH_BALANCED sum alpha`` (relative,
#: as the certificate's balance; otherwise its dual value is not a dual objective: the residual
#: alone decides)
POLISH_BALANCED = 1e-9


def polish_dual(svm, margin: Margin, alpha: np.ndarray, C, thr, max_rounds: int = 25, *,
                judge: bool = True, total: float | None = None):
    """Active-set polishing of a dual solution (a primal-dual active-set method started from
    the solver's answer): on the free set F, solve the KKT equations
    ``(H alpha)_F + b y_F = e_F`` and ``y'alpha = 0`` exactly (``H = G(K)``, plus ``I/C`` for
    the 2-norm; a margin with a level of its own, the nu-SVM's: ``(H alpha)_F + b y_F - rho
    e_F = 0`` and the row ``e'alpha = total`` too), the other points held at their bound.
    Free components that leave ``[0, C]`` are held at the bound they crossed; held points
    whose margin has the wrong sign for their bound (``y_i f(x_i) < rho`` at 0, ``> rho`` at
    C; rho = 1 but for a level margin) are released into F; until neither happens.

    Interior-point and active-set solvers stop at their own tolerances (HiGHS's QP solver
    leaves alpha ~1e-5 off on some problems whatever its options); the polished alpha is
    taken only if its KKT residual is no larger than the solver's alpha's and, when that
    alpha is feasible (balanced, and on the level row), its dual objective no lower beyond
    round-off (``judge=False``: taken whenever the active set settles, for a caller that
    certifies it itself). Only for a model the record proves unchanged. Returns
    ``(alpha, accepted)``."""
    y = svm.data.y
    Cb = C if margin.box else np.inf
    q = 0.0 if margin.level else 1.0   # the dual's linear term q'alpha

    def residual(a):
        """(KKT residual, dual objective, a bound on the round-off in it) of ``a``."""
        f = svm.kernel_times(y * a)
        b, rho = levels(margin, a, y, f, C, thr)
        dual = float(q * a.sum() - 0.5 * (y * a) @ f
                     - (0.5 * a @ ratio(a, C) if margin.ridge else 0.0))
        # an unbalanced alpha (y'a != 0: HiGHS's multipliers, 1e-6) is not dual feasible, its
        # dual value not comparable (it can lie above the optimum): then no dual value
        scale = max(float(a.sum()), 1e-300)
        if abs(float(y @ a)) > POLISH_BALANCED * scale or (
                margin.level and abs(float(a.sum()) - total) > POLISH_BALANCED * scale):
            dual = -np.inf
        sv = np.flatnonzero(a > 0)
        # |(ya)'K(ya)| <= (sum a)^2 max K_ii (K is PSD): the size of the terms that cancel
        size = float(a.sum()) ** 2 * float(np.max(_kernel_diagonal(svm, sv), initial=0.0))
        return (dual_kkt_residual(margin, a, y, f, b, np.inf if C is None else C, thr,
                                  rho if rho > 0 else 1.0), dual,
                POLISH_ROUNDOFF * max(size, abs(dual), 1e-300))

    def better(new, old):
        # a KKT residual no larger, and a dual objective no lower (beyond round-off): near-twin
        # points make the free system singular, and a candidate with the multipliers on the
        # wrong twins had half the solver's residual but a dual objective 2e-6 lower (w 1e-6
        # off; found by fuzzing)
        return new[0] <= old[0] and new[1] >= old[1] - max(new[2], old[2])

    fixed = np.where(alpha >= Cb - thr, Cb, 0.0) if margin.box else np.zeros_like(alpha)
    free = (alpha > thr) & (alpha < Cb - thr)
    start = None  # residual of the solver's alpha, computed only if a candidate needs it
    tried = set()
    for _ in range(max_rounds):
        key = free.tobytes() + fixed.tobytes()
        if key in tried:    # the active set cycles
            break
        tried.add(key)
        F = np.flatnonzero(free)
        if F.size > POLISH_MAX_FREE:  # O(|F|^3): beyond that the solver's alpha stands
            return alpha, False
        new = fixed.copy()
        new[F] = 0.0
        columns = _round_columns(svm, free, new)
        if F.size:
            aF = _free_solution(svm, margin, new, F, C, q, total, columns)
            if aF is None:
                return alpha, False
            CbF = Cb if np.ndim(Cb) == 0 else Cb[F]
            low, high = aF < 0.0, aF > CbF
            if low.any() or high.any():
                free[F[low | high]] = False
                fixed[F[high]] = CbF if np.ndim(CbF) == 0 else CbF[high]
                fixed[F[low]] = 0.0
                continue
            new[F] = aF
        # the held points: a margin of the wrong sign for the bound a point is held at
        f = _round_product(svm, y, new, columns)
        b, rho = levels(margin, new, y, f, C, 0.0)
        m = y * (f + b) + (ratio(new, C) if margin.ridge else 0.0)
        slack = POLISH_RELEASE * max(1.0, float(np.max(np.abs(f), initial=0.0)) + abs(b))
        held = ~free & live(None if margin.hard else C, len(new))
        wrong = held & (((new <= 0.0) & (m < rho - slack)) | ((new >= Cb) & (m > rho + slack)))
        if wrong.any():
            free |= wrong
            continue
        if not judge:
            return new, True
        start = residual(alpha) if start is None else start
        if better(residual(new), start):
            return new, True
        return alpha, False
    return alpha, False


def _round_columns(svm, free: np.ndarray, held: np.ndarray) -> tuple | None:
    """``(K[:, S], S)``: the kernel's columns of a polish round's free points and of those
    held above zero, read once for the round's free block, right-hand side and product
    where the SVM has them at hand (:meth:`~svm_models.model.built.BuiltSVM.support_columns`:
    a held or dense matrix); else None (products through ``kernel_times``)."""
    S = np.flatnonzero(free | (held != 0.0))
    read = getattr(svm, "support_columns", None)
    cols = None if read is None else read(S)
    return None if cols is None else (cols, S)


def _round_product(svm, y: np.ndarray, alpha: np.ndarray, columns) -> np.ndarray:
    """``K(y alpha)`` of a polish round's alpha (zero outside the round's columns): from
    them, and kept as ``kernel_times``' answer for the certificate's reading of it; without
    them, ``kernel_times``."""
    if columns is None:
        return svm.kernel_times(y * alpha)
    cols, S = columns
    f = cols @ (y[S] * alpha[S])
    svm.remember_product(y * alpha, f)
    return f


def _free_solution(svm, margin: Margin, held: np.ndarray, F: np.ndarray, C, q: float,
                   total: float | None, columns: tuple | None = None) -> np.ndarray | None:
    """alpha on the free points F, the others at ``held`` (zero on F): the KKT system of the
    polish, ``H_FF a_F + b y_F (- rho e_F) = q e_F - (H held)_F``, ``y'alpha = 0`` (and
    ``e'alpha = total`` for a margin with a level of its own) -- the border's multipliers b
    (and -rho) solved with it; None when it has no solution (:func:`_solve_free_system`).
    ``columns``: ``(K[:, S], S)`` with F and the points held above zero in S (sorted), the
    kernel's entries read from them."""
    y = svm.data.y
    k = F.size
    if columns is None:
        KF = _kernel_block(svm, F)
        Kheld = svm.kernel_rows_times(F, y * held)
    else:
        cols, S = columns
        rows = cols[F]
        KF = rows[:, np.searchsorted(S, F)]
        Kheld = rows @ (y[S] * held[S])
    yF = y[F]
    borders = 2 if margin.level else 1   # (the columns y_F, and e_F for a level margin)
    A = np.zeros((k + borders, k + borders))
    H = A[:k, :k]   # (H_FF = K_FF y_i y_j, in place)
    np.multiply(KF, yF[:, None], out=H)
    H *= yF
    if margin.ridge:
        H[np.diag_indices(k)] += ratio(np.ones(k), C if np.ndim(C) == 0 else C[F])
    A[:k, k] = A[k, :k] = yF
    if margin.level:
        A[:k, k + 1] = A[k + 1, :k] = 1.0
    rhs = np.empty(k + borders)
    rhs[:k] = q - yF * Kheld
    rhs[k] = -(y @ held)
    if margin.level:
        rhs[k + 1] = total - held.sum()
    sol = _solve_free_system(A, rhs, borders)
    return None if sol is None else sol[:k]


#: steps of iterative refinement of the polish's linear system (raw breast-cancer features,
#: linear kernel: margins 1e-7 off after one solve)
POLISH_REFINE = 2
#: the free system is taken as solved when its residual is this small relative to its data
POLISH_SOLVED = 1e-12
#: a Cholesky factor of the free block whose smallest pivot squared is below this times the
#: block's size times its largest pivot squared is of a singular block (the block's
#: condition number beyond about 1 / (this * size): duplicated points leave a pivot ratio
#: of about eps; the ill-conditioned but regular blocks the refinement solves, 1e-13)
POLISH_SINGULAR = 10 * np.finfo(float).eps


def _solve_free_system(A: np.ndarray, rhs: np.ndarray, borders: int = 1) -> np.ndarray | None:
    """The solution of the polish's KKT system ``A [alpha_F; b] = rhs``, refined; when the
    free vectors are not independent (more of them than the kernel's rank plus one: seven
    free points of a linear kernel in 2-D under class weights 1000 and 1e-4), alpha is not
    unique but b is: the least-norm solution of the (consistent) singular system. None when
    neither solves it."""
    scale = max(float(np.abs(A).max(initial=0.0)) * max(float(np.abs(rhs).max(initial=0.0)),
                                                        1.0), 1e-300)

    def refined(solve):
        try:   # (a singular factorisation gives inf: not a solution, and no warning)
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                sol = solve(rhs)
                for _ in range(POLISH_REFINE):   # iterative refinement: an ill-conditioned
                    sol = sol + solve(rhs - A @ sol)   # kernel (cond ~1e10)
        except np.linalg.LinAlgError:
            return None
        if not np.isfinite(sol).all():
            return None
        return sol if float(np.abs(A @ sol - rhs).max(initial=0.0)) <= POLISH_SOLVED * scale \
            * max(1.0, float(np.abs(sol).max(initial=0.0))) else None

    sol = refined(_bordered_solver(A, borders)) if A.shape[0] > borders else None
    if sol is None:
        from scipy.linalg import lu_factor, lu_solve   # (one factorisation for the refinement)
        from scipy.linalg.lapack import dgecon

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # (a singular matrix: the least squares below)
                lu = lu_factor(A, check_finite=False)
            # A singular to working precision (LAPACK's test: reciprocal condition number
            # below eps): LU's answer is one of many, its alpha up to 1/eps off the
            # least-norm one and still within the residual test, which grows with the
            # answer (seven free points of a rank-2 kernel: alpha 58 off) -- least squares
            if dgecon(lu[0], float(np.abs(A).sum(axis=0).max()))[0] >= np.finfo(float).eps:
                sol = refined(lambda r: lu_solve(lu, r, check_finite=False))
        except (ValueError, np.linalg.LinAlgError):
            sol = None
    if sol is None:
        sol = refined(lambda r: np.linalg.lstsq(A, r, rcond=None)[0])
    return sol


def _bordered_solver(A: np.ndarray, borders: int = 1):
    """A solver of ``A = [[H, Y], [Y', 0]] x = r`` (``Y`` the last ``borders`` columns:
    ``y``, and ``e`` for a level margin) through the Cholesky factor of ``H`` (the free
    block: positive definite when the free vectors are independent) and the Schur
    complement ``Y'H^-1 Y`` of the border -- half the work of a factorisation of ``A`` --,
    or a solver that raises LinAlgError when ``H`` has no such factor or the border is
    singular (then LU). Its answers go through the same refinement and residual check as
    LU's."""
    n = A.shape[0] - borders
    H, Y = A[:n, :n], A[:n, n:]
    cho = _cholesky(H)
    if cho is None:
        return _refusal("no Cholesky factor of full rank")
    # a factor whose pivots span more than the free block's size can hold is of a singular
    # block (two duplicated free points: the last pivot 3e-8 against 5.6, a factor that
    # "succeeds" and splits their alpha anyhow, -3.3 and 32 where each may be 14.4): then
    # LU's test and least squares (the least-norm alpha)
    d = np.abs(np.diag(cho))
    if n and float(d.min()) ** 2 < POLISH_SINGULAR * n * float(d.max()) ** 2:
        return _refusal("no Cholesky factor of full rank")
    V = _cholesky_solve(cho, Y)
    S = Y.T @ V                        # (borders x borders, positive definite if Y has rank)
    if borders == 1:                   # (one border: a division, on vectors)
        s = float(S[0, 0])
        if not (np.isfinite(s) and s > 0.0):
            return _refusal("a singular border")
        y, v = Y[:, 0], V[:, 0]

        def solve_one(r):
            out = np.empty(n + 1)
            u = _cholesky_solve(cho, r[:n])
            out[n] = mu = (float(y @ u) - r[n]) / s
            np.subtract(u, v * mu, out=out[:n])
            return out

        return solve_one
    schur = _cholesky(S) if np.all(np.isfinite(S)) else None
    if schur is None:
        return _refusal("a singular border")

    def solve(r):
        u = _cholesky_solve(cho, r[:n])
        mu = _cholesky_solve(schur, Y.T @ u - r[n:])
        return np.concatenate([u - V @ mu, mu])

    return solve


def _refusal(why: str):
    """A solver of :func:`_bordered_solver` that raises LinAlgError(``why``) when called
    (the caller's refinement then returns None and LU takes over)."""
    def solve(r):
        raise np.linalg.LinAlgError(why)

    return solve


def _cholesky(H: np.ndarray) -> np.ndarray | None:
    """The upper Cholesky factor of ``H`` (LAPACK's ``potrf``, as ``scipy.linalg.cho_factor``
    computes it, without its wrappers' cost: the polish of each of one-vs-one's 45 pairs
    factors once or more), or None when ``H`` has none (not positive definite, not
    finite)."""
    if H.size and not np.isfinite(H).all():
        return None
    c, info = dpotrf(H, clean=0)   # (the upper factor: potrf's default)
    return c if info == 0 else None


def _cholesky_solve(c: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``H^-1 r`` from :func:`_cholesky`'s factor of ``H`` (LAPACK's ``potrs``)."""
    x, info = dpotrs(c, r)   # (an upper factor: potrs's default)
    if info != 0:
        raise np.linalg.LinAlgError(f"potrs: argument {-info} illegal")
    return x


#: a held point is released into the free set of the polish when its margin is on the wrong
#: side of 1 by more than this (relative to the size of the decision values)
POLISH_RELEASE = 1e-9


def margin_sets(svm, margin: Margin, w: np.ndarray, b: float, C, active_tol: float) -> tuple:
    """The active set of a linear classifier ``(w, b)`` read from its margins
    ``y_i(x_i.w + b)``: ``(on, held)``, the points on the margin within ``active_tol`` and
    (1-norm) those below it, whose alpha is ``C_i``."""
    y, X = svm.data.y, svm.data.X
    m = y * (X @ w + b)
    on = np.abs(m - 1.0) <= active_tol
    held = (m < 1.0 - active_tol) & live(C, len(y)) if margin.box else np.zeros(len(y), bool)
    return on, held


def polish_linear_primal(svm, margin: Margin, on: np.ndarray, held: np.ndarray, C):
    """The linear SVM's KKT point on an active set, computed in the primal's own coordinates:
    the points ``on`` free, the ``held`` at ``C_i`` (1-norm), the rest at 0; ``(w, b)`` solve
    the free points' margin rows ``y_i(x_i.w + b) = 1`` (when those rows have rank d + 1,
    they determine them) and alpha the stationarity ``X'(y alpha) = w``, ``y'alpha = 0`` on
    that set (:func:`recover_alpha`). ``(alpha, w, b)``, or None when the margin rows do not
    determine ``(w, b)``. The set comes from a solver's margins (:func:`margin_sets`) or
    from its alpha.

    At a large C on inseparable data (``C = 1e12``, linear moons) alpha is ``C`` times a
    fraction, w of order one: read from alpha, or from a solver's tolerance on alpha, w and
    the margins carry errors of 1e-4 of C's scale; from the margin rows they are exact to
    round-off, and the certificate of the classifier ``(w, b)`` holds to 1e-13."""
    y, X = svm.data.y, svm.data.X
    l, d = X.shape
    F = np.flatnonzero(on & ~held & live(None if margin.hard else C, l))
    rows = np.hstack([X[F] * y[F, None], y[F, None]])
    if F.size < d + 1 or np.linalg.matrix_rank(rows) < d + 1:
        return linear_kkt_point(X, y, F, held & live(None if margin.hard else C, l), C)
    wb = np.linalg.lstsq(rows, np.ones(F.size), rcond=None)[0]
    w_new, b_new = wb[:d], float(wb[d])
    # (recover_alpha holds at C_i the points whose slack is beyond its threshold: the held)
    alpha = recover_alpha(y, margin, X.T, w_new, on | held, np.where(held, 1.0, 0.0), C, 0.5)
    return alpha, w_new, b_new


def linear_kkt_point(X: np.ndarray, y: np.ndarray, F: np.ndarray, held: np.ndarray, C):
    """The linear SVM's KKT point on an active set whose free points' margin rows do not
    determine ``(w, b)`` alone (fewer than d + 1 of them: a small C, most alphas at C):
    ``(w, b, alpha_F)`` solve together the stationarity ``w = X'(y alpha)``, the balance
    ``y'alpha = 0`` and the free margins ``y_i(x_i.w + b) = 1`` (``i`` in ``F``), the
    ``held`` at ``C_i``, the rest at 0 -- a square linear system, solved with every feature
    scaled by the power of two nearest its largest value (``w_k = w~_k / sigma_k``: exact),
    so that a feature of 3e8 beside one of 0.03 keeps the digits of both (from an
    interior point's multipliers the stationarity of such a w was off by 2e-3 of |w|).
    ``(alpha, w, b)`` with alpha_F clipped to its box (the certificate judges it), or None
    when the system is singular."""
    l, d = X.shape
    top = np.max(np.abs(X), axis=0, initial=0.0)
    sig = np.where(top > 0, np.exp2(np.round(np.log2(np.where(top > 0, top, 1.0)))), 1.0)
    Xs = X / sig
    a = np.zeros(l)
    if held.any():   # (never for the hard margin: C None)
        a[held] = C if np.ndim(C) == 0 else np.asarray(C)[held]
    f = F.size
    A = np.zeros((d + 1 + f, d + 1 + f))
    r = np.zeros(d + 1 + f)
    A[:d, :d] = np.diag(1.0 / sig ** 2)               # stationarity, row k over sigma_k
    A[:d, d + 1:] = -(Xs[F] * y[F, None]).T
    r[:d] = Xs.T @ (y * a)
    A[d, d + 1:] = y[F]                               # balance
    r[d] = -float(y @ a)
    A[d + 1:, :d] = Xs[F] * y[F, None]                # the free points' margins
    A[d + 1:, d] = y[F]
    r[d + 1:] = 1.0
    if np.linalg.matrix_rank(A) < A.shape[0]:
        return None
    u = np.linalg.solve(A, r)
    a[F] = np.clip(u[d + 1:], 0.0, np.inf if C is None else
                   (C if np.ndim(C) == 0 else np.asarray(C)[F]))
    return a, u[:d] / sig, float(u[d])


def balanced(alpha: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``alpha`` with ``y'alpha = 0``: the alphas of the class whose sum is the larger scaled
    down to the other's sum (every alpha stays within ``[0, C_i]``). A candidate for a
    solver that stops with the balance off by its feasibility tolerance (SCIP, 1e-6): the
    dual objective of an unbalanced alpha bounds nothing, that of this one does."""
    a = np.array(alpha, dtype=float)
    pos, neg = y > 0, y < 0
    sp, sn = float(a[pos].sum()), float(a[neg].sum())
    if sp > sn:
        a[pos] *= sn / sp
    elif sn > sp:
        a[neg] *= sp / sn
    return a


def cut_alpha(alpha: np.ndarray, thr: float, box: float = np.inf) -> np.ndarray:
    """alpha with the entries within ``thr`` of a bound put on it: the zeros and the bound
    values of an interior-point answer made exact (what "support vector" and "at the bound"
    mean for the classifier returned)."""
    out = np.where(alpha <= thr, 0.0, alpha)
    if np.any(np.isfinite(box)):
        out = np.where(out >= box - thr, box, out)
    return out


def margin_certificate(svm, margin: Margin, alpha: np.ndarray, b: float, C, w=None, *,
                       rho: float = 1.0, total: float | None = None, Ka=None) -> dict:
    """The certificate of exactly one classifier of an SVM of margin ``margin``:
    ``f(x) = w.x + b`` when ``w`` is given (the linear primal's own w), else
    ``f(x) = sum_i y_i alpha_i k(x_i, x) + b``; and the dual point ``alpha``. A margin with
    a level of its own (the nu-SVM) is certified at the level ``rho`` given, its row
    ``e'alpha = total``.

    ``primal``: the primal objective of that classifier with its best slacks
    ``xi_i = max(0, rho - y_i f(x_i))`` (a shortfall within the round-off of computing
    ``y_i f(x_i)`` is not counted, see CERT_ROUNDOFF), less ``total * rho`` for a level
    margin; ``dual``: the dual objective at alpha (``e'alpha - alpha'G alpha / 2``, less
    ``alpha'alpha / (2C)`` for the 2-norm, no linear term for a level margin); ``gap``:
    ``(primal - dual) / max(|primal|, |dual|)``; ``balance``: ``|y'alpha| / sum alpha``;
    ``total`` (level margin): the shortfall of ``e'alpha >= total``, relative;
    ``violation`` (hard margin): the largest margin shortfall; ``stationarity`` (w given):
    ``||w - X'(y alpha)|| / ||w||``; ``worst``: the largest of these in absolute value.
    Also ``ww`` (``||w||^2``), ``margins`` (``y_i f(x_i)``) and ``slacks``. ``Ka``: ``K(y
    alpha)`` where the caller has it (read where products do not go through a factor)."""
    y = svm.data.y
    l = y.shape[0]
    ya = y * alpha
    M = svm.gram_factor()
    if M is not None:   # K = M M': a'Ka = |M'(y a)|^2, as the factor form and the linear w
        z = M.T @ ya
        Ka, aKa = M @ z, float(z @ z)
    else:   # (v'Kv of a PSD K is >= 0: below it is round-off, never a higher dual)
        Ka = svm.kernel_times(ya) if Ka is None else Ka
        aKa = max(float(ya @ Ka), 0.0)
    dual = float((0.0 if margin.level else alpha.sum()) - 0.5 * aKa
                 - (0.5 * alpha @ ratio(alpha, C) if margin.ridge else 0.0))
    out: dict = {}
    if w is not None:
        X = svm.data.X
        f = X @ w
        ww = float(w @ w)
        # the round-off of the d-term dot product x_i.w is at most about eps sum_j |x_ij w_j|
        # -- far below |x_i| |w| when the largest feature and the largest weight differ (a
        # feature x1e6 with a weight 1e-10): that product forgave margin shortfalls of 1e-6,
        # i.e. C l 1e-6 in an objective of 1e-8
        size = np.abs(X) @ np.abs(w)
        xw = X.T @ ya
        # less the round-off of the sums X'(y alpha) themselves (eps sqrt(l) sum_i |x_ij a_i|):
        # at C = 1e12 on inseparable data the alphas are 1e12 and w of order one, their
        # expansion cannot match w closer than 1e-4 in floating point
        gap_w = np.maximum(np.abs(w - xw) - expansion_roundoff(X, ya), 0.0)
        out["stationarity"] = float(np.linalg.norm(gap_w) / max(np.linalg.norm(w), 1e-300))
    elif M is not None:   # f = M z: the round-off of an r-term dot product, as for X w
        f, ww = Ka, aKa
        size = np.sqrt(np.einsum("ij,ij->i", M, M)) * np.sqrt(ww)
    else:
        f = Ka
        ww = aKa
        rd = np.sqrt(np.maximum(_kernel_diagonal(svm, np.arange(l)), 0.0))
        size = rd * float(rd @ np.abs(alpha))
    # (in units of the margin's level: 1, or the nu-SVM's rho)
    level = abs(rho)
    delta = np.minimum(CERT_ROUNDOFF * np.sqrt(l) * (size + abs(b) + level),
                       CERT_ROUNDOFF_MAX * level)
    m = y * (f + b)
    short = np.maximum(0.0, rho - m - delta)
    if margin.level:   # (the level's price; a level below 0 is not the primal's)
        primal = 0.5 * ww - total * max(rho, 0.0) + float(np.sum(C * short))
        out["total"] = max(0.0, total - float(alpha.sum())) / total
    elif margin.box:   # (C one number or one per point)
        primal = 0.5 * ww + float(np.sum(C * short))
    elif margin.ridge:
        primal = 0.5 * ww + 0.5 * float(np.sum(C * short * short))
    else:
        primal = 0.5 * ww
        out["violation"] = float(short.max(initial=0.0))
    denom = max(abs(primal), abs(dual), 1e-300)
    out.update(primal=float(primal), dual=dual, gap=float((primal - dual) / denom),
               balance=float(abs(y @ alpha) / max(float(alpha.sum()), 1e-300)),
               margins=m, slacks=short, ww=float(ww))
    out["worst"] = max(abs(out["gap"]), out["balance"], out.get("violation", 0.0),
                       out.get("stationarity", 0.0), out.get("total", 0.0))
    if not np.isfinite(out["worst"]):
        out["worst"] = np.inf
    return out


def expansion_roundoff(X: np.ndarray, ya: np.ndarray) -> np.ndarray:
    """A bound on the round-off of each component of ``X'(y alpha)`` as computed:
    ``CERT_ROUNDOFF sqrt(l) sum_i |x_ij y_i alpha_i|``."""
    nz = np.flatnonzero(ya)   # (the terms of alpha's support: the others are 0)
    return CERT_ROUNDOFF * np.sqrt(len(ya)) * (np.abs(X[nz]).T @ np.abs(ya[nz]))


def _kernel_diagonal(svm, idx: np.ndarray) -> np.ndarray:
    """``K_ii`` for the points ``idx`` (the rbf kernel's, no factor: 1, as its matrices
    hold it)."""
    if svm.L is None and getattr(getattr(svm, "kernel", None), "name", None) == "rbf":
        return np.ones(len(idx))
    if svm.K is not None:
        return np.asarray(svm.K[idx, idx], dtype=float)
    M = svm.L if svm.L is not None else svm.data.X
    return np.einsum("ij,ij->i", M[idx], M[idx])


def _kernel_block(svm, F: np.ndarray) -> np.ndarray:
    """``K[F, F]`` from whatever the build kept (K, a factor, or X for the linear kernel)."""
    if svm.K is not None:
        return svm.K[np.ix_(F, F)]
    M = svm.L if svm.L is not None else svm.data.X
    return M[F] @ M[F].T


def recover_alpha(y: np.ndarray, margin: Margin, design: np.ndarray, target: np.ndarray,
                  active: np.ndarray, xi: np.ndarray, C, xi_thr: float) -> np.ndarray:
    """alpha from a primal solution without multipliers: the KKT conditions
    ``design @ (y * alpha) = target`` (stationarity in w, or in the factor coordinates v),
    ``y'alpha = 0``, ``alpha_i = 0`` off the active margin set, ``alpha_i = C`` where
    ``xi_i > xi_thr`` (1-norm), ``alpha_i = C xi_i`` (2-norm), solved as bounded least squares."""
    l = y.shape[0]
    if margin.ridge:
        return np.maximum(C * xi, 0.0)
    alpha = np.zeros(l)
    fixed_c = np.zeros(l, dtype=bool)
    if margin.box:
        fixed_c = active & (xi > xi_thr) & live(C, l)
        alpha[fixed_c] = C if np.ndim(C) == 0 else np.asarray(C)[fixed_c]
    # a point of weight 0 (C_i = 0) has alpha 0: never an unknown (its box [0, 0] is one that
    # lsq_linear refuses -- an active point of weight 0 raised ValueError from extract)
    unknown = np.flatnonzero(active & ~fixed_c & live(C if margin.box else None, l))
    if unknown.size == 0:
        return alpha
    D = design * y[None, :]
    rhs = np.concatenate([target - D[:, fixed_c] @ alpha[fixed_c], [-(y[fixed_c] @ alpha[fixed_c])]])
    M = np.vstack([D[:, unknown], y[None, unknown]])
    ub = C if margin.box else np.inf
    if np.ndim(ub):
        ub = np.asarray(ub)[unknown]
    from scipy.optimize import lsq_linear   # (0.6 s to import: only when needed)

    sol = lsq_linear(M, rhs, bounds=(0.0, ub), lsmr_tol="auto", method="bvls")
    alpha[unknown] = sol.x
    return alpha

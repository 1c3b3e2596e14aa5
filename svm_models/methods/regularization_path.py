"""The exact regularization path of the 1-norm SVM (``soft_l1_dual``): every C at once.

Hastie, Rosset, Tibshirani & Zhu, "The entire regularization path for the support vector
machine", JMLR 5 (2004). With ``lambda = 1/C`` and ``theta = alpha / C`` (so
``0 <= theta_i <= w_i``, the sample weights), the dual reads

    theta(lambda) = argmin 1/2 theta'Q theta - lambda e'theta,  0 <= theta <= w,  y'theta = 0

(``Q = D_y K D_y``): a QP whose linear term moves with lambda, so theta and
``theta_0 = b / C`` are piecewise linear in lambda. Each point is in one of three sets:
the elbow E (``y_i h_i = lambda`` with ``h = K(y theta) + theta_0``, theta free), the left
L (``y_i h_i <= lambda``, ``theta_i = w_i``: alpha at its bound ``C w_i``) or the right R
(``y_i h_i >= lambda``, ``theta_i = 0``). Between two events the elbow's system
``Q_EE d_E + y_E nu = -e``, ``y_E'd_E = 0`` gives the direction ``d = dtheta / d(-lambda)``;
an event is an elbow theta reaching a bound or a point of L or R reaching the margin.

At a breakpoint the next segment's direction is the solution of the direction QP over the
elbow and every point on the margin (the tight points: several at once, ties, a point
entering and leaving): ``min 1/2 d'Q_TT d + e'd``, ``y_T'd = 0``, ``d_i >= 0`` at 0,
``d_i <= 0`` at ``w_i`` -- solved by an active-set iteration on the elbow's bordered
system, kept as its inverse and updated by a rank-one change per point that enters or
leaves (:class:`_Elbow`; each answer checked by its residual, solved afresh by the library's
free-system solver, :func:`~svm_models.postprocess._solve_free_system`, where the inverse
loses it). The margins move with theta per event (one product with the elbow's rows of Q
gives their rates and the direction's residual at once) and are recomputed every
:data:`REFRESH` events. Once no theta is held at its bound w the rest of the path is theta
scaled with lambda down to the hard margin, with no event. Duplicated points (same x, same
label) are merged into one point of the summed weight (their alphas split in proportion to
their weights). Every :data:`ANCHOR_EVERY` events a breakpoint is re-anchored exactly on its
sets, and every breakpoint is checked against the KKT conditions: the path is the optimum
on each whole segment (the conditions are linear in lambda on it).

:meth:`RegularizationPath.at` gives the library's :class:`~svm_models.solution.Solution` at
any C, read by the formulation's own extractor and certified as every answer of
:func:`svm_models.fit`. See ``formulations/soft_l1_dual.md`` and the book's page on the path.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg.blas import dger as _dger

from ..errors import DataError, ParameterError, SolveFailedError, plain
from ..postprocess import _solve_free_system
from ..status import Status

from ..tolerances import PATH_ANCHOR_DRIFT as ANCHOR_DRIFT
from ..tolerances import PATH_END as END
from ..tolerances import PATH_QP_TOL as QP_TOL
from ..tolerances import PATH_TIGHT as TIGHT

#: at most this many events per point before the path is given up (a typed error)
EVENTS_PER_POINT = 50
#: K(y theta) is recomputed from scratch every this many events (else updated per event)
REFRESH = 50
#: a breakpoint is re-anchored every this many events (the KKT check is at every one)
ANCHOR_EVERY = 10

LEFT, ELBOW, RIGHT = "left", "elbow", "right"


@dataclass(frozen=True)
class PathEvent:
    """Point ``point`` moved from the set ``before`` to ``after`` (``"left"``: alpha at its
    bound ``C w_i``, margin below 1; ``"elbow"``: on the margin; ``"right"``: alpha 0, margin
    above 1) at ``C``."""

    C: float
    point: int
    before: str
    after: str


@dataclass(eq=False)
class _Segment:
    """theta on ``[lam_lo, lam_hi]``: ``theta + (lam_hi - lam) d`` with ``d`` zero off the
    elbow ``free`` and ``dF`` on it (``theta_0`` likewise with ``nu``); ``free`` empty:
    theta_0 is not determined by the path, b is the midpoint of the interval the KKT
    conditions allow, as libsvm's."""

    lam_hi: float
    lam_lo: float
    theta: np.ndarray
    theta0: float
    free: np.ndarray
    dF: np.ndarray
    nu: float


@dataclass(eq=False)
class _Problem:
    """The merged problem the path follows: groups of identical points (same x, same label)."""

    K: np.ndarray          # (g, g) kernel of the groups' representatives
    y: np.ndarray          # (g,) labels
    w: np.ndarray          # (g,) summed weights
    group: np.ndarray      # (l,) the group of each original point
    rep: np.ndarray        # (g,) a representative original point of each group
    Q: np.ndarray = field(init=False)

    def __post_init__(self):
        self.Q = self.K * np.outer(self.y, self.y)


class RegularizationPath:
    """The exact path of ``soft_l1_dual`` in C (:func:`regularization_path`).

    ``breakpoints``: the Cs (ascending) where the sets change, within ``[C_min, C_max]``;
    ``events``: the :class:`PathEvent` list, in order of C (a duplicated point's copies move
    together);
    ``C_start``: below it every alpha is constant in ``alpha / C`` (the path's start);
    ``separable``: the path ends at the hard margin (every point of L has left it);
    :meth:`at`: the Solution at one C; :meth:`coefficients`: ``(alpha, b)`` at one C without
    building a Solution (cross-validation)."""

    def __init__(self, svm, model, problem: _Problem, segments: list, events: list,
                 C_min: float, C_max: float):
        self._svm, self._model, self._p = svm, model, problem
        self._segments = segments
        self.C_min, self.C_max = C_min, C_max
        self.C_start = 1.0 / segments[0].lam_lo if segments[0].lam_lo > 0 else np.inf
        lams = np.array([s.lam_lo for s in segments[:-1]])
        Cs = 1.0 / lams
        self.breakpoints = np.unique(Cs[(Cs >= C_min) & (Cs <= C_max)])
        self.events = [e for e in events if C_min <= e.C <= C_max]
        last = segments[-1]
        at_w = (last.theta > 0) & (last.theta >= problem.w)
        at_w[last.free] = False
        self.separable = bool(last.lam_lo == 0.0 and not at_w.any())
        self._lo = np.array([s.lam_lo for s in segments])

    def __repr__(self) -> str:
        return (f"<RegularizationPath: {len(self.breakpoints)} breakpoints, "
                f"{len(self.events)} events, C in [{self.C_min:g}, {self.C_max:g}]>")

    def _segment(self, C) -> _Segment:
        C = float(plain(C))
        if not (np.isfinite(C) and C > 0):
            raise ParameterError(f"C must be a positive finite number; got {C!r}")
        if C < self.C_min * (1 - 1e-12) or C > self.C_max * (1 + 1e-12):
            raise ParameterError(
                f"C={C:g} is outside the path computed, [{self.C_min:g}, {self.C_max:g}]: "
                "compute the path with C_min/C_max covering it")
        lam = 1.0 / C
        k = int(np.searchsorted(-self._lo, -lam, side="right"))   # first with lam_lo <= lam
        return self._segments[min(k, len(self._segments) - 1)]

    def theta(self, C) -> tuple:
        """``(theta, theta_0, free)`` of the merged problem at C (``alpha = C theta``)."""
        s = self._segment(C)
        t = s.lam_hi - 1.0 / float(C)
        th = s.theta.copy()
        th[s.free] += t * s.dF
        th = np.clip(th, 0.0, self._p.w)
        return th, s.theta0 + t * s.nu, s.free

    def coefficients(self, C) -> tuple:
        """``(alpha, b)`` at C for the original points: alpha of a merged group split in
        proportion to the weights; b from the path (on a segment without elbow, the midpoint
        of the interval the KKT conditions allow)."""
        from ..postprocess import bias_from_kkt

        C = float(plain(C))
        th, th0, free = self.theta(C)
        alpha = self._split(C * th)
        if free.size:
            return alpha, C * th0
        svm = self._svm
        f = svm.kernel_times(svm.data.y * alpha)
        return alpha, bias_from_kkt(svm.facts.margin, alpha, svm.data.y, f,
                                    svm.point_C(C), 0.0)

    def decision_function(self, X, Cs) -> np.ndarray:
        """The decision values ``f(x) = sum_i y_i alpha_i k(x_i, x) + b`` of the points ``X``
        at each C of ``Cs``: an array of shape ``(len(Cs), len(X))``, from one kernel matrix
        and one product with the path's theta at every C (cross-validation)."""
        from ..data import as_matrix

        svm, p = self._svm, self._p
        Cs = np.atleast_1d(np.asarray(Cs, dtype=float))
        X = as_matrix(X)
        Kx = X[:, p.rep] if svm.kernel.name == "precomputed" else \
            svm.kernel.gram(X, svm.data.X[p.rep])
        if Cs.size == 0:
            return np.empty((0, Kx.shape[0]))
        for C in (Cs.min(), Cs.max()):
            self._segment(C)    # (the checks: in range, positive, finite)
        ks = np.minimum(np.searchsorted(-self._lo, -1.0 / Cs, side="right"),
                        len(self._segments) - 1)
        out = np.empty((Cs.size, Kx.shape[0]))
        for k in np.unique(ks):   # (a segment at a time: theta moves on a line there)
            rows = np.flatnonzero(ks == k)
            s, C = self._segments[k], Cs[rows]
            t = s.lam_hi - 1.0 / C
            th = np.repeat(s.theta[None, :], rows.size, axis=0)
            th[:, s.free] += t[:, None] * s.dF[None, :]
            np.clip(th, 0.0, p.w, out=th)
            out[rows] = C[:, None] * (th * p.y) @ Kx.T
            if s.free.size:
                out[rows] += (C * (s.theta0 + t * s.nu))[:, None]
            else:   # (b not linear in 1/C there: from alpha's KKT interval)
                out[rows] += self._biases(th[0], C)[:, None]
        return out

    def _biases(self, th: np.ndarray, Cs: np.ndarray) -> np.ndarray:
        """b at each C of ``Cs`` on a segment without elbow (theta ``th`` constant there):
        the midpoint of the KKT interval (:meth:`coefficients`), from one kernel product."""
        from ..postprocess import bias_from_kkt

        svm = self._svm
        unit = self._split(th)
        g = svm.kernel_times(svm.data.y * unit)
        return np.array([bias_from_kkt(svm.facts.margin, C * unit, svm.data.y, C * g,
                                       svm.point_C(C), 0.0) for C in Cs.tolist()])

    def bias_knots(self, C_lo: float, C_hi: float) -> np.ndarray:
        """The Cs in ``(C_lo, C_hi)`` where b changes slope on the segments without elbow.
        There theta is constant, ``f = C g`` and b is the midpoint of the KKT interval
        (:func:`~svm_models.postprocess.bias_from_kkt`): the largest of lines in C over the
        smallest, each an envelope of lines ``+-1 - C g_i`` (points at 0 and at their bound),
        so b -- and every decision value -- is linear in C between these knots (and f/C
        linear in 1/C, as on an elbow's segment). The lines are those of
        :func:`~svm_models.postprocess.bias_from_kkt` without a free vector: ``b >= r_i``
        (lower) for a positive point at 0 or a negative one at its bound, ``b <= ...``
        (upper) for the others, ``r_i = y_i - C g_i``."""
        from ..postprocess import live

        svm = self._svm
        y, n = svm.data.y, len(self._p.group)
        alive = live(svm.point_C(1.0), n)
        out: list = []
        for n_seg, s in enumerate(self._segments):
            if s.free.size:
                continue
            # (the start's segment holds every C below C_start: lam from infinity down)
            lo = C_lo if n_seg == 0 else max(C_lo, 1.0 / s.lam_hi if s.lam_hi > 0 else np.inf)
            hi = min(C_hi, 1.0 / s.lam_lo if s.lam_lo > 0 else np.inf)
            if not lo < hi:
                continue
            unit = self._split(np.clip(s.theta, 0.0, self._p.w))
            g = svm.kernel_times(y * unit)
            at_c, at_zero = unit > 0, (unit <= 0) & alive
            pos, neg = y > 0, y < 0
            low, high = (at_zero & pos) | (at_c & neg), (at_zero & neg) | (at_c & pos)
            out += _envelope_knots(y[low], -g[low], lo, hi, upper=True)
            out += _envelope_knots(y[high], -g[high], lo, hi, upper=False)
        return np.unique(out)

    def _split(self, a_groups: np.ndarray) -> np.ndarray:
        p, svm = self._p, self._svm
        wi = np.ones(len(p.group)) if svm.weight is None else np.maximum(svm.weight, 0.0)
        share = np.divide(wi, p.w[p.group], out=np.zeros_like(wi), where=p.w[p.group] > 0)
        return a_groups[p.group] * share

    def at(self, C):
        """The :class:`~svm_models.solution.Solution` of ``soft_l1_dual`` at C, read by the
        formulation's extractor from the path's alpha and certified as :func:`svm_models.fit`'s
        answers are (a certificate that fails raises SolveFailedError)."""
        from ..api import _refuse_uncertified
        from ..formulations import get as lookup
        from ..postprocess import Context
        from ..model.record import members

        alpha, _ = self.coefficients(C)
        blk = self._svm.block
        blk.C.set_value(float(C))
        for vd, a in zip(members(blk.alpha), alpha):
            vd.set_value(float(a), skip_validation=True)
        f = lookup(self._svm.formulation)
        ctx = Context(solver="path", interface="regularization path", path="exact path",
                      tol=1e-12, verified=True)
        sol = f.extract(blk, ctx)
        sol.extra["regularization_path"] = {"C_start": self.C_start,
                                            "breakpoints": int(len(self._segments) - 1)}
        return _refuse_uncertified(sol, self._svm, f, 1e-12, True)


def _envelope_knots(a: np.ndarray, slope: np.ndarray, lo: float, hi: float,
                    upper: bool) -> list:
    """Where the largest (``upper``; else the smallest) of the lines ``a_i + C slope_i``
    changes line in ``(lo, hi)``: from the line on top at ``lo``, the first line to overtake
    it (of several at once, the steepest), and on (at most one change per line)."""
    if a.size < 2:
        return []
    A, S = (a, slope) if upper else (-a, -slope)
    val = A + lo * S
    top = np.flatnonzero(val >= val.max() - 1e-12 * max(1.0, abs(val.max())))
    j = int(top[np.argmax(S[top])])
    C, out = lo, []
    for _ in range(A.size):
        over = S > S[j]
        if not over.any():
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            at = (A[j] - A[over]) / (S[over] - S[j])
        at = np.where(at > C, at, np.inf)
        first = float(at.min())
        if not first < hi:
            break
        # (lines meeting there together: the steepest is on top after)
        tie = np.flatnonzero(at <= first + 1e-12 * max(1.0, abs(first)))
        cand = np.flatnonzero(over)[tie]
        out.append(first)
        C, j = first, int(cand[np.argmax(S[cand])])
    return out


def regularization_path(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                        C_min=None, C_max=None, sample_weight=None,
                        time_limit=None) -> RegularizationPath:
    """The exact regularization path of ``soft_l1_dual`` (the 1-norm SVM, libsvm's problem)
    for C in ``[C_min, C_max]``: from the C where every alpha leaves its starting bound (C_min
    left out: from C -> 0) up to ``C_max`` (left out: to the end of the path, the hard margin
    where the data are separable, else the last event, beyond which the sets stay).

    ``sample_weight``: a per-point C, ``C * weight_i``, as in ``soft_l1_dual``. Returns a
    :class:`RegularizationPath` (``breakpoints``, ``events``, ``at(C)``). ``time_limit``
    (seconds) bounds the whole call, as ``fit``'s (default: scaled to the points,
    :func:`~svm_models.solvers.base.default_time_limit`); past it a ``SolveFailedError`` of
    status ``time_limit``."""
    from ..api import build, the_svm_block
    from ..solvers.base import Deadline, default_time_limit
    from ..threads import library_threads

    deadline = Deadline(default_time_limit(len(y)) if time_limit is None
                        else float(plain(time_limit)), default=time_limit is None)

    C_min = 0.0 if C_min is None else float(plain(C_min))
    C_max = np.inf if C_max is None else float(plain(C_max))
    if not (C_min >= 0 and C_max > 0 and C_min < C_max):
        raise ParameterError(f"need 0 <= C_min < C_max; got C_min={C_min!r}, C_max={C_max!r}")
    model = build("soft_l1_dual", X, y, C=1.0, kernel=kernel, gamma=gamma, degree=degree,
                  coef0=coef0, sample_weight=sample_weight, quad_form="dense")
    svm = the_svm_block(model)._svm
    problem = _merged(svm)
    lam_end = 0.0 if not np.isfinite(C_max) else 1.0 / C_max
    with library_threads(len(problem.y)):   # (one BLAS thread below 5,000 points: the
        # event loop's products are small and bound by memory; threads fight for the cores)
        segments, events = _follow(problem, lam_end, deadline)
    members = [[] for _ in range(len(problem.w))]
    for i, g in enumerate(problem.group):
        members[g].append(i)
    events = [PathEvent(e.C, i, e.before, e.after) for e in events for i in members[e.point]]
    return RegularizationPath(svm, model, problem, segments, events, C_min, C_max)


def _merged(svm) -> _Problem:
    """The groups of identical points with the same label (merged: one point of the summed
    weight; the dual depends only on their alphas' sum); points of weight 0 are left out."""
    data = svm.data
    X, y = data.X, data.y
    wi = np.ones(len(y)) if svm.weight is None else np.maximum(np.asarray(svm.weight), 0.0)
    keys = np.hstack([X, y[:, None]])
    _, first, group = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    group = group.ravel()
    w = np.bincount(group, weights=wi, minlength=len(first))
    K = svm.K[np.ix_(first, first)] if svm.K is not None else svm.kernel.gram(X[first])
    if not (np.any(w[y[first] > 0] > 0) and np.any(w[y[first] < 0] > 0)):
        raise DataError("the regularization path needs points of positive weight in both "
                        "classes")
    return _Problem(K=K, y=y[first], w=w, group=group, rep=first)


def _failed(message: str) -> SolveFailedError:
    return SolveFailedError(f"the regularization path cannot be followed: {message}. Fit at "
                            "the Cs you need with svm_models.fit or fit_path instead",
                            Status.numerical_error)


def _bordered(P: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``[[P, a], [a', 0]]``, the system :func:`_solve_free_system` solves."""
    n = len(a)
    A = np.zeros((n + 1, n + 1))
    A[:n, :n], A[:n, n], A[n, :n] = P, a, a
    return A


def _check_time(deadline, where: str) -> None:
    """SolveFailedError (time_limit) once ``deadline`` (None: none) has passed."""
    if deadline is not None and deadline.expired():
        raise SolveFailedError(
            f"the regularization path reached its time limit ({deadline.describe()}) "
            f"{where}: pass time_limit= (seconds) for more time, or a narrower "
            "[C_min, C_max]", Status.time_limit)


def _box_qp(P, c, a, s, lo, hi, free, at_hi=None, deadline=None):
    """``min 1/2 x'Px + c'x`` s.t. ``a'x = s``, ``lo <= x <= hi`` by a primal-dual active-set
    iteration from the free set ``free`` (the others held at their finite bound: at hi where
    ``at_hi`` says so or lo is infinite, else at lo); when a set repeats, one change at a
    time (the largest violation). ``(x, nu, free)`` with ``nu`` the multiplier of ``a'x = s``
    (None: nothing free, nu is not determined). Each round checks ``deadline``."""
    n = len(c)
    free = free.copy()
    at_hi = ~free & (~np.isfinite(lo) if at_hi is None else (at_hi | ~np.isfinite(lo)))
    seen, single = set(), False
    for _ in range(20 * n + 50):
        _check_time(deadline, "at its start")
        key = free.tobytes() + at_hi.tobytes()
        if key in seen:
            if single:
                raise _failed("the active set of a breakpoint cycles")
            single, seen = True, set()
        seen.add(key)
        x = np.where(at_hi, hi, lo)
        x[free] = 0.0
        F, B = np.flatnonzero(free), np.flatnonzero(~free)
        if F.size == 0:
            short = s - float(a @ x)
            if abs(short) <= QP_TOL * max(1.0, abs(s), float(np.abs(a * x).sum())):
                # every variable at a bound: optimal when one nu makes every multiplier's
                # sign right (r_i + a_i nu >= 0 at lo, <= 0 at hi); else free the variable
                # of the bound nu cannot meet
                r = P @ x + c
                side = np.where(at_hi, -1.0, 1.0) * np.sign(a)
                with np.errstate(divide="ignore", invalid="ignore"):
                    v = -r / a
                lows, highs = np.where(side > 0, v, -np.inf), np.where(side < 0, v, np.inf)
                tol = QP_TOL * max(1.0, float(np.abs(r).max()))
                if lows.max() <= highs.min() + tol:
                    return x, None, free
                free[int(np.argmax(lows)) if np.isfinite(lows.max()) else int(np.argmin(highs))] = True
                at_hi &= ~free
                continue
            # a'x = s does not hold: free the held variable that moves a'x towards s
            # at the least cost (the smallest gradient in that direction)
            step = np.sign(short) * np.sign(a)
            can = (step > 0) & (x < hi) | (step < 0) & (x > lo)
            if not can.any():
                raise _failed("no point of the bounds meets y'theta = 0")
            cost = np.where(can, (P @ x + c) * step, np.inf)
            free[int(np.argmin(cost))] = True
            at_hi &= ~free
            continue
        rhs = np.append(-c[F] - P[np.ix_(F, B)] @ x[B], s - a[B] @ x[B])
        sol = _solve_free_system(_bordered(P[np.ix_(F, F)], a[F]), rhs)
        if sol is None:
            raise _failed("the elbow's linear system has no solution")
        x[F], nu = sol[:-1], float(sol[-1])
        grad = P @ x + c + a * nu
        tx = QP_TOL * max(1.0, float(np.abs(x).max()))
        tg = QP_TOL * max(1.0, float(np.abs(c).max()), float(np.abs(P).max()) * float(
            np.abs(x).max()), abs(nu))
        viol = np.zeros(n)
        viol[free] = np.maximum(lo[free] - x[free], x[free] - hi[free]) / tx
        held_lo, held_hi = ~free & ~at_hi, ~free & at_hi
        viol[held_lo] = -grad[held_lo] / tg
        viol[held_hi] = grad[held_hi] / tg
        bad = viol > 1.0
        if not bad.any():
            return np.clip(x, lo, hi), nu, free
        if single:
            bad = np.zeros(n, dtype=bool)
            bad[int(np.argmax(viol))] = True
        up = bad & free & (x > hi)
        down = bad & free & ~up
        free[bad & ~free] = True
        free[up | down] = False
        at_hi[up], at_hi[down] = True, False
        at_hi &= ~free
    raise _failed("the active set of a breakpoint does not settle")


def _feasible_sets(P, c, total: float, w, rounds: int, deadline=None):
    """The sets of ``min 1/2 x'Px + c'x``, ``e'x = total``, ``0 <= x <= w`` (``total <=
    e'w``) by a primal feasible active-set method: from the points of least c filled to
    their bound, the free set's equality-constrained step, cut where a point meets a bound
    (held there), then the held point of largest violation freed -- each round one small
    bordered solve and an O(n |F|) update, where :func:`_box_qp`'s exchanges from every
    point free took 4,325 solves of up to 1,078 points on a one-vs-rest problem of digits.
    ``(free, at_hi)``, the sets to start :func:`_box_qp` from (which checks them); a guess
    only: it stops after ``rounds`` rounds, where the step's system has no solution, or at
    ``deadline``."""
    n = len(c)
    order = np.argsort(c, kind="stable")
    cum = np.cumsum(w[order])
    k = min(int(np.searchsorted(cum, total)), n - 1)
    x = np.zeros(n)
    x[order[:k]] = w[order[:k]]
    x[order[k]] = total - (float(cum[k - 1]) if k else 0.0)
    free, at_hi = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    free[order[k]], at_hi[order[:k]] = True, True
    g = P @ x + c
    tol = QP_TOL * max(1.0, float(np.abs(c).max()), float(np.abs(P).max()) * float(w.max()))
    for _ in range(rounds):
        if deadline is not None and deadline.expired():
            break
        F = np.flatnonzero(free)
        sol = _solve_free_system(_bordered(P[np.ix_(F, F)], np.ones(F.size)),
                                 np.append(-g[F], 0.0))
        if sol is None:
            break
        d, nu = sol[:-1], float(sol[-1])
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(d < 0, -x[F] / d, np.where(d > 0, (w[F] - x[F]) / d, np.inf))
        j = int(np.argmin(room))
        step = min(1.0, max(float(room[j]), 0.0))
        x[F] = np.clip(x[F] + step * d, 0.0, w[F])
        g += P[:, F] @ (step * d)
        if step < 1.0:   # (a point meets its bound: held there)
            free[F[j]], at_hi[F[j]] = False, d[j] > 0
            x[F[j]] = w[F[j]] if d[j] > 0 else 0.0
            continue
        viol = np.where(at_hi, g + nu, -(g + nu))
        viol[free | (w <= 0)] = -np.inf
        i = int(np.argmax(viol))
        if viol[i] <= tol:
            break
        free[i], at_hi[i] = True, False
    return free, at_hi


def _start(p: _Problem, deadline=None):
    """Where the path starts (small C): ``(theta, theta_0, lam0, free)``. Balanced classes
    (equal summed weights): every theta at its bound, the interval of theta_0 closes at
    ``lam0``; else the smaller class at its bound and the larger's theta the minimiser of
    ``theta'Q theta`` with the classes' sums equal (JMLR 5, section 4.2), its elbow fixing
    theta_0; the path starts where a point of the smaller class reaches the margin."""
    y, w, Q, K = p.y, p.w, p.Q, p.K
    live = w > 0
    pos, neg = y > 0, y < 0
    Wp, Wn = float(w[pos].sum()), float(w[neg].sum())
    theta = w.copy()
    if abs(Wp - Wn) > 1e-12 * max(Wp, Wn):
        big, small = (pos, neg) if Wp > Wn else (neg, pos)
        b = np.flatnonzero(big)
        c = -(K[np.ix_(b, np.flatnonzero(small))] @ w[small])
        Kb = K[np.ix_(b, b)]
        free, at_hi = _feasible_sets(Kb, c, min(Wp, Wn), w[b], 4 * b.size + 50, deadline)
        x, _, _ = _box_qp(Kb, c, np.ones(b.size), min(Wp, Wn), np.zeros(b.size), w[b],
                          free & live[b], at_hi & live[b], deadline)
        theta[b] = x
    g = Q @ theta
    E = np.flatnonzero(live & (theta > 0) & (theta < w))
    if E.size:
        yb = float(y[E[0]])
        mu = float(np.mean(g[E]))
        smalls = np.flatnonzero(live & (y == -yb))
        lam0 = float(np.max((g[smalls] + mu) / 2))
        return theta, yb * (lam0 - mu), lam0, E
    lam0, theta0 = _pinch(g, y, theta, w)
    return theta, theta0, lam0, E


def _pinch(g, y, theta, w):
    """Without an elbow theta stays and theta_0 has an interval, ``[max_{-L} g - lam,
    lam - max_{+L} g]``; ``(lam, theta_0)`` where it closes."""
    left = (theta >= w) & (w > 0)
    gp, gn = g[left & (y > 0)], g[left & (y < 0)]
    if not (gp.size and gn.size):
        raise _failed("no elbow and no point of one class at its bound")
    lam = float(gp.max() + gn.max()) / 2
    return lam, lam - float(gp.max())


_NAMES = {0: RIGHT, 1: ELBOW, 2: LEFT}


def _status(theta, w, free_mask):
    """0 right (theta 0), 1 elbow, 2 left (theta at w)."""
    return np.where(free_mask, 1, np.where((theta >= w) & (w > 0), 2, 0))


class _Elbow:
    """The elbow's bordered system ``A = [[0, y_F'], [y_F, Q_FF]]`` kept as its inverse
    ``B``, updated by a rank-one change per point that enters or leaves (O(|F|^2), the event
    loop's hot path, instead of a factorisation per event).

    In slots: slot 0 is the border, each point of the elbow F has one; a slot without a
    point (one that left, or room to grow) has an identity row and column in ``B`` and a
    zero row in ``QF``, so that ``B`` stays the inverse of ``A`` bordered by identities and a
    point enters or leaves in place (BLAS ``dger`` on ``B``, no copy). ``QF`` holds row 0 =
    y and each point's row of Q, copied once when it enters: one product ``x @ QF`` is
    ``Q_{:,F} x_F + y x_0`` at every point -- the rates of the margins, whose elbow rows are
    the residual of the direction's system, so every answer is checked by its residual at
    no extra cost. Where the inverse loses it (a nearly singular elbow: duplicated
    directions, more elbow points than the kernel's rank), the system is solved afresh by
    the library's free-system solver (:func:`~svm_models.postprocess._solve_free_system`:
    Cholesky of the free block, least squares where it is singular) and the inverse rebuilt
    when it can be."""

    def __init__(self, Q, y):
        self.Q, self.y = Q, y
        n = len(y)
        self.qdiag = np.ascontiguousarray(np.diag(Q))
        self.slot_of = np.full(n, -1, dtype=np.intp)   # each point's slot (-1: none)
        # (a hash of the set F, for the direction QP's cycle test)
        self._zob = np.random.default_rng(0).integers(1, 2 ** 62, size=n).tolist()
        self.key = 0
        self.log: list = []    # the points added or removed (since the breakpoint's start)
        self.size = 0
        self.ok = False        # B is the inverse (else: solved afresh)
        self._alloc(1, np.zeros(0, dtype=np.intp))

    def _alloc(self, s: int, S: np.ndarray) -> None:
        """``s`` slots, the elbow's (old slots ``S``, the border's excluded) packed first
        (B restricted to them: still the inverse)."""
        S = np.r_[0, S]
        k = S.size
        B, QF = np.eye(s), np.zeros((s, len(self.y)))
        idx = np.full(s, -1, dtype=np.intp)
        if self.ok:
            B[:k, :k] = self.B[np.ix_(S, S)]
        if k > 1:
            QF[:k], idx[:k] = self.QF[S], self.idx[S]
        QF[0] = self.y
        self.B, self.QF, self.idx = B, QF, idx
        self.slot_of[idx[1:k]] = np.arange(1, k)
        self.holes = list(range(s - 1, k - 1, -1))
        # per slot: 1 where a point is (the direction's right-hand side), its point (0
        # where none), its label (0 where none), its diagonal of Q
        self.act = (idx >= 0).astype(float)
        self.idxc = np.maximum(idx, 0)
        self.yslot = self.y[self.idxc] * self.act
        self.qslot = self.qdiag[self.idxc] * self.act
        self._changed()

    def _changed(self) -> None:
        self._dir = None       # (sol, dm) of the current F
        self._S = None         # its slots

    def slots(self) -> np.ndarray:
        if self._S is None:
            self._S = np.flatnonzero(self.act)
        return self._S

    def points(self) -> np.ndarray:
        return self.idx[self.slots()]

    def _system(self, S: np.ndarray) -> np.ndarray:
        """The bordered matrix on the slots ``S`` (``S[0] = 0``, the border first)."""
        pts = self.idx[S[1:]]
        A = np.empty((S.size, S.size))
        A[:, 1:] = self.QF[np.ix_(S, pts)]
        A[0, 0], A[1:, 0] = 0.0, self.y[pts]
        return A

    def rebuild(self) -> None:
        """B afresh (LU) when the elbow's system is well conditioned, else none."""
        from scipy.linalg import lu_factor, lu_solve
        from scipy.linalg.lapack import dgecon

        self.ok = False
        self._alloc(self.B.shape[0], self.slots())
        k = self.size + 1
        if k == 1:
            return
        A = self._system(np.arange(k))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                lu = lu_factor(A, check_finite=False)
                if dgecon(lu[0], float(np.abs(A).sum(axis=0).max()))[0] > 1e-10:
                    inv = lu_solve(lu, np.eye(k), check_finite=False)
                    if np.all(np.isfinite(inv)):
                        self.B[:k, :k] = inv
                        self.ok = True
            except (ValueError, np.linalg.LinAlgError):
                pass

    def add(self, i: int) -> None:
        if not self.holes:
            self._alloc(self.B.shape[0] * 9 // 8 + 8, self.slots())
        k = self.holes.pop()
        u = self.QF[:, i].copy()            # [y_i; Q_Fi], 0 on the free slots
        self.QF[k] = self.Q[i]
        self.idx[k], self.idxc[k], self.slot_of[i] = i, i, k
        self.act[k], self.yslot[k], self.qslot[k] = 1.0, self.y[i], self.qdiag[i]
        self.size += 1
        self.key ^= self._zob[i]
        self.log.append(i)
        self._changed()
        if not self.ok:
            return self.rebuild()
        v = self.B @ u                       # (v_k = u_k = 0)
        q = float(self.qdiag[i])
        s = q - float(u @ v)
        if not abs(s) > 1e-10 * max(abs(q), 1e-300):
            self.ok = False   # (dependent: solved afresh until the elbow is independent)
            return
        _rank1(self.B, v, 1.0 / s)
        v /= -s
        self.B[k, :] = v
        self.B[:, k] = v
        self.B[k, k] = 1.0 / s

    def remove(self, i: int) -> None:
        k = int(self.slot_of[i])
        self.idx[k], self.idxc[k], self.slot_of[i] = -1, 0, -1
        self.act[k] = self.yslot[k] = self.qslot[k] = 0.0
        self.QF[k] = 0.0
        self.holes.append(k)
        self.size -= 1
        self.key ^= self._zob[i]
        self.log.append(i)
        self._changed()
        if self.ok:
            c = self.B[:, k].copy()
            if abs(c[k]) > 1e-14 * float(np.abs(c).max()):
                _rank1(self.B, c, -1.0 / c[k])
                self.B[k, :] = 0.0
                self.B[:, k] = 0.0
                self.B[k, k] = 1.0
            else:
                self.ok = False
        s = self.B.shape[0]
        if not self.ok or self.size == 0:
            self.rebuild()
        elif len(self.holes) > s // 8 + 8:   # (the products run over every slot: packed
            # again when an eighth is free, O(s l) once per s/8 events)
            self._alloc((self.size + 1) * 17 // 16 + 8, self.slots())

    def _tol(self, sol) -> float:
        """The residual allowed: 1e-12 of max|A| (a PSD Q's largest entry is on its
        diagonal) times the answer, as the library's polish."""
        return 1e-12 * max(1.0, float(self.qslot.max())) * max(1.0, float(np.abs(sol).max()))

    def direction(self):
        """``(sol, dm)``: ``sol`` the solution of ``A [nu; d_F] = [0; -1]`` in slots (0 on
        the free slots) and ``dm = Q_{:,F} d_F + y nu`` at every point (-1 on the elbow: the
        residual is checked there, refined while needed). Kept until F changes."""
        if self._dir is not None:
            return self._dir
        rhs = -self.act
        if self.ok:
            sol = self.B @ rhs
            for _ in range(4):
                dm = sol @ self.QF
                r = dm[self.idxc]
                r *= self.act
                np.subtract(rhs, r, out=r)          # rhs - A sol on the points' slots
                r[0] = -float(self.yslot @ sol)     # and on the border
                if float(np.abs(r).max()) <= self._tol(sol):
                    self._dir = (sol, dm)
                    return self._dir
                sol = sol + self.B @ r
            self.rebuild()
        S = self.slots()
        sol = self._fresh(np.r_[0, S], np.r_[0.0, -np.ones(S.size)])
        if sol is None:
            raise _failed("the elbow's linear system has no solution")
        self._dir = (sol, sol @ self.QF)
        return self._dir

    def _fresh(self, S, rhs):
        """The bordered system on the slots ``S`` solved afresh (``rhs`` on ``S``), in
        slots; None when it has no solution."""
        n = S.size - 1
        perm = np.r_[1:n + 1, 0]
        A = self._system(S)
        out = _solve_free_system(A[np.ix_(perm, perm)], rhs[perm])
        if out is None:
            return None
        sol = np.zeros(self.B.shape[0])
        sol[S[1:]], sol[0] = out[:-1], out[-1]
        return sol

    def held_solve(self, r, SE, SD):
        """``x`` (in slots) with ``A x = r`` on the border and the slots ``SE``, ``x = 0``
        on the slots ``SD`` (their rows dropped): ``B r`` corrected by the columns of SD,
        checked by its residual, afresh when that fails. ``(x, x @ QF)`` or None."""
        pts = self.idx[SE]
        if self.ok:
            x = self.B @ r
            if SD.size:
                try:
                    x -= self.B[:, SD] @ np.linalg.solve(self.B[np.ix_(SD, SD)], x[SD])
                except np.linalg.LinAlgError:
                    x = None
            if x is not None:
                x[SD] = 0.0
                h = x @ self.QF
                res = max(float(np.abs(r[SE] - h[pts]).max(initial=0.0)),
                          abs(r[0] - float(self.y[pts] @ x[SE])))
                if res <= self._tol(x):
                    return x, h
        x = self._fresh(np.r_[0, SE], r[np.r_[0, SE]])
        return None if x is None else (x, x @ self.QF)


def _rank1(B: np.ndarray, v: np.ndarray, a: float) -> None:
    """``B += a v v'`` in place (B symmetric, C-ordered: its transpose is BLAS's column
    order)."""
    _dger(a, v, v, a=B.T, overwrite_a=True)


def _direction(el: _Elbow, p: _Problem, theta, tight: np.ndarray, sgn: np.ndarray):
    """The next segment's direction at a breakpoint: the direction QP over the elbow and the
    tight points ``tight`` (off the elbow, on the margin: ``min 1/2 d'Q_TT d + e'd``,
    ``y_T'd = 0``, ``d_i >= 0`` where theta is 0, ``<= 0`` where it is ``w_i``) by a
    primal-dual active-set iteration on ``el`` (its free set, updated in place); when a set
    repeats, one change at a time. Only the points at a bound have a condition to violate
    (a free point's sign, a held point's gradient ``dm_i + 1``). ``(F, d_F, nu, dm)`` with
    ``dm`` the rates of the margins, ``Q_{:,F} d_F + y nu``; nu None when nothing is free
    (no elbow). ``sgn``: -1 where a point off the elbow is at w, +1 at 0."""
    F0 = el.points()
    th = theta[F0]
    hi = th >= p.w[F0]
    at = hi | (th <= 0.0)
    Tb, side = [], []   # the points at a bound (+1: at w, d <= 0 there; -1: at 0)
    if at.any():
        Tb, side = F0[at].tolist(), np.where(hi[at], 1.0, -1.0).tolist()
    Tb += tight.tolist()
    side += (-sgn[tight]).tolist()
    el.log = []
    for i in tight.tolist():
        el.add(i)
    seen, single = set(), False
    for _ in range(20 * (el.size + len(Tb)) + 50):
        if el.key in seen:
            if single:
                raise _failed("the active set of a breakpoint cycles")
            single, seen = True, set()
        seen.add(el.key)
        if el.size == 0:
            return np.zeros(0, dtype=np.intp), np.zeros(0), None, None
        sol, dm = el.direction()
        S = el.slots()
        dF, nu = sol[S], float(sol[0])
        if not Tb:
            return el.idx[S], dF, nu, dm
        slot = el.slot_of[Tb].tolist()
        val = [sol[k] if k >= 0 else dm[i] + 1.0 for i, k in zip(Tb, slot)]
        tx = QP_TOL * max(1.0, float(np.abs(dF).max()))
        tg = QP_TOL * max([1.0, abs(nu)] + [abs(v) for v, k in zip(val, slot) if k < 0])
        viol = [sd * v / (tx if k >= 0 else tg) for sd, v, k in zip(side, val, slot)]
        bad = [j for j, v in enumerate(viol) if v > 1.0]
        if not bad:
            return el.idx[S], dF, nu, dm
        if single:
            bad = [int(np.argmax(viol))]
        for j in bad:
            if slot[j] >= 0:
                el.remove(Tb[j])
        for j in bad:
            if slot[j] < 0:
                el.add(Tb[j])
    raise _failed("the active set of a breakpoint does not settle")


class _Walk:
    """The state of the path at lam: theta, theta_0, the margins ``m = Q theta + y theta_0``
    (moved with theta per event, recomputed every :data:`REFRESH` events) and each point's
    set (``status``: 0 right, 1 elbow, 2 left; ``sgn`` -1 on the left, +1 elsewhere, so that
    the gap ``sgn (m - lam) >= 0`` is the condition of a point off the elbow; ``out``: the
    points of positive weight off the elbow, the others' gap +inf). The sets change only at
    the elbow's points, so an event costs O(l) in a few vector operations plus O(l |F|) for
    the margins' rates."""

    def __init__(self, p: _Problem, theta, theta0, lam, E):
        self.p = p
        self.theta, self.theta0, self.lam = theta, theta0, lam
        self.live = p.w > 0
        inE = np.zeros(len(p.w), dtype=bool)
        inE[E] = True
        self.status = _status(theta, p.w, inE)
        self.sgn = np.where(self.status == 2, -1.0, 1.0)
        self.out = self.live & ~inE
        self.nleft = int(np.count_nonzero(self.status == 2))
        self.qscale = float(np.abs(p.Q).max())
        self._ro = self._gap = self._tgap = None
        self._left: list = []
        self.refresh()

    def refresh(self) -> None:
        self.m = self.p.Q @ self.theta + self.p.y * self.theta0
        self._gap = None

    def roundoff(self) -> float:
        """A bound on the round-off of ``Q theta`` as computed: eps sqrt(n) max|Q| sum
        theta."""
        if self._ro is None:
            self._sum = float(self.theta.sum())
            self._ro = _EPS * np.sqrt(len(self.theta)) * self.qscale * self._sum
        return self._ro

    def gap(self) -> np.ndarray:
        if self._gap is None:
            self._gap = np.where(self.out, self.sgn * (self.m - self.lam), np.inf)
        return self._gap

    def tight(self) -> np.ndarray:
        """The points off the elbow on the margin, or past it by the round-off the check
        allows."""
        self._tgap, self._left = self.gap(), []
        return (self._tgap <= TIGHT * self.lam + 10 * self.roundoff()).nonzero()[0]

    def settle(self, el: _Elbow) -> list:
        """The sets after the elbow changed (only the points it added or removed change):
        the changes as events ``(lam, point, old, new)``, in the order of the points."""
        events = []
        for i in sorted(set(el.log)):
            old = int(self.status[i])
            new = 1 if el.slot_of[i] >= 0 else \
                2 if self.theta[i] >= self.p.w[i] and self.live[i] else 0
            if new != old:
                events.append((self.lam, i, old, new))
                self.status[i] = new
                self.nleft += (new == 2) - (old == 2)
                self.sgn[i] = -1.0 if new == 2 else 1.0
                self.out[i] = new != 1 and self.live[i]
                if self._gap is not None:   # (a point that left: its gap ~ 0, apart)
                    self._gap[i] = np.inf
                    if self.out[i]:
                        self._left.append(i)
        return events

    def hard_margin(self) -> bool:
        """The left set empty (no theta held at its bound w): the elbow's conditions
        ``Q_FF theta_F + y_F theta_0 = lam``, ``y_F'theta_F = 0`` have no other right-hand
        side than lam, so theta and theta_0 scaled by ``lam' / lam`` solve them at every
        ``lam' < lam``, keep every bound (``0 <= theta <= w`` shrinks) and every margin off
        the elbow (``m`` scales too, ``m_i >= lam`` stays): the rest of the path is ``theta
        lam' / lam`` down to 0, the hard margin, with no event. Exact, where the solved
        direction would place the round-off of ``theta + lam d = 0`` as events near lam = 0;
        its KKT conditions are the breakpoint's, checked, scaled."""
        return self.nleft == 0

    def next_event(self, F, dF, dm, tight):
        """``(t, hit)``: the decrease of lam to the next event (inf: none) and which points
        of the elbow reach a bound there. Compared as rates (way / rate inverted: no
        division by 0), the least time then computed as the quotient itself."""
        # an elbow point: the way to the bound it moves to, at the rate |d| (at its bound
        # pointing out within the direction QP's tolerance, or not moving: no event)
        th, w = self.theta[F], self.p.w[F]
        way = np.where(dF < 0, th, w - th)
        way[way <= 0.0] = np.inf
        adF = np.abs(dF)
        tmin = np.inf
        if F.size:
            j = int((adF / way).argmax())
            if adF[j] > 0 and way[j] < np.inf:
                tmin = float(way[j] / adF[j])
        # a point off the elbow, not tight: its gap falls to 0 at the rate -s, s = sgn (1 +
        # dm) (< 0: towards the margin)
        s = dm + 1.0
        s *= self.sgn
        gap = self._gap   # (changed in place: the step that follows recomputes it)
        if gap is None or gap is not self._tgap:   # (re-anchored: any sign, as computed)
            gap = np.maximum(self.gap(), 0.0)
            gap[tight] = np.inf
            tO = np.divide(gap, s, out=np.full(s.size, -np.inf), where=s < 0)
            tmin = min(tmin, -float(tO.max()))
        else:   # (positive but where just left the elbow: those apart)
            gap[tight] = np.inf
            for i in self._left:
                if s[i] < 0:
                    tmin = min(tmin, max(float(self.sgn[i] * (self.m[i] - self.lam)), 0.0)
                               / -float(s[i]))
            q = s / gap
            k = int(q.argmin())
            if q[k] < 0:
                tmin = min(tmin, float(gap[k] / -s[k]))
        if not np.isfinite(tmin):
            return tmin, np.zeros(F.size, dtype=bool)
        return tmin, way <= (tmin * (1 + 1e-9) + 1e-15 * self.lam) * adF

    def step(self, t, F, dF, nu, dm, hit) -> None:
        """Down by ``t`` in lambda along the segment, the points that hit a bound snapped
        onto it."""
        p, theta = self.p, self.theta
        theta[F] += t * dF
        self.m += t * dm
        self.theta0 += t * nu
        self.lam -= t
        th, w = theta[F], p.w[F]
        snap = F[hit | (th < 0) | (th > w)]
        if snap.size:
            target = np.where(theta[snap] < p.w[snap] / 2, 0.0, p.w[snap])
            self.m += (target - theta[snap]) @ p.Q[snap]
            theta[snap] = target
        self._ro = self._gap = None

    def check(self, F) -> None:
        """The KKT conditions of the path's sets at lam (SolveFailedError when they
        fail)."""
        tol = 1e-7 * self.lam + 100 * self.roundoff()
        bal = abs(float(self.p.y @ self.theta)) > 1e-9 * self._sum
        if float(self.gap().min()) < -tol or bal or (
                F.size and float(np.abs(self.m[F] - self.lam).max()) > tol):
            bad = self.gap() < -tol
            bad[F] = np.abs(self.m[F] - self.lam) > tol
            raise _failed(f"the optimality conditions fail at C={1 / self.lam:.6g} (points "
                          f"{np.flatnonzero(bad)[:5].tolist()}, balance {bal})")

    def pinch(self, lam_end) -> float:
        """No elbow: theta stays until the interval of theta_0 closes (or lam_end); lam and
        theta_0 moved there. The new lam."""
        p = self.p
        g = self.m - p.y * self.theta0
        lam, th0 = _pinch(g, p.y, self.theta, p.w)
        self.lam = max(min(lam, self.lam), lam_end)
        self.m += p.y * (th0 - self.theta0)
        self.theta0 = th0
        self._gap = None
        return self.lam

    def anchor(self, el: _Elbow) -> None:
        """theta and theta_0 at lam solved exactly on the elbow's system -- its points
        strictly inside their box free, those at a bound held there -- when that moves them
        by round-off only and keeps them in their box; else as they are (a singular elbow:
        the current theta is one of its solutions). Solved for the correction from the
        residuals of the elbow's conditions at lam."""
        p, theta = self.p, self.theta
        S = el.slots()
        F = el.idx[S]
        inside = (theta[F] > 0) & (theta[F] < p.w[F])
        if not inside.any():
            return
        E, SE = F[inside], S[inside]
        r = np.zeros(el.B.shape[0])
        r[SE] = self.lam - self.m[E]
        r[0] = -float(p.y @ theta)
        out = el.held_solve(r, SE, S[~inside])
        if out is None:
            return
        x, h = out
        delta = x[SE]
        new = theta[E] + delta
        if float(np.abs(delta).max()) > ANCHOR_DRIFT * float(p.w.max()) \
                or np.any(new < 0) or np.any(new > p.w[E]):
            return
        theta[E] = new
        self.m += h
        self.theta0 += float(x[0])
        self._ro = self._gap = None


def _follow(p: _Problem, lam_end: float, deadline=None):
    """The segments and events of the path from its start down to ``lam_end``."""
    n = len(p.y)
    theta, theta0, lam, E = _start(p, deadline)
    el = _Elbow(p.Q, p.y)
    for i in E:
        el.add(i)
    s = _Walk(p, theta, theta0, lam, E)
    # the start: constant theta for every lam >= lam0 (theta_0 moves with lam on an elbow)
    nu0 = -float(p.y[E[0]]) if E.size else 0.0
    segments = [_Segment(lam, lam, theta.copy(), theta0, E, np.zeros(E.size), nu0)]
    events: list = []
    for k in range(EVENTS_PER_POINT * n + 100):
        if s.lam <= lam_end:
            break
        _check_time(deadline, f"after {k} events, at C = {1.0 / s.lam:.6g}")
        if k % REFRESH == 0:
            s.refresh()
        tight = s.tight()
        F, dF, nu, dm = _direction(el, p, s.theta, tight, s.sgn)
        events += s.settle(el)
        lam = s.lam
        if nu is None:   # no elbow: theta stays until the interval of theta_0 closes
            th0 = s.theta0
            segments.append(_Segment(lam, s.pinch(lam_end), s.theta.copy(), th0, F, dF, 0.0))
            continue
        if k % ANCHOR_EVERY == 0:
            s.anchor(el)
        if s.hard_margin():   # (theta proportional to lam from here: no more event)
            dF, nu = s.theta[F] / -lam, s.theta0 / -lam
            t, hit = lam - lam_end, None
        else:
            t, hit = s.next_event(F, dF, dm, tight)
        if lam - t <= max(lam_end, END * segments[0].lam_hi):   # (the end; below END
            # of the start's lambda the events are the round-off of K(y theta) -> 0)
            t = lam - lam_end
            hit = None
        segments.append(_Segment(lam, lam - t, s.theta.copy(), s.theta0, F, dF, nu))
        if hit is None:   # the end
            break
        s.step(t, F, dF, nu, dm, hit)
        s.check(F)
    else:
        raise _failed(f"more than {EVENTS_PER_POINT} events per point")
    return segments, [PathEvent(1.0 / lam_e, i, _NAMES[a], _NAMES[b])
                      for lam_e, i, a, b in events]


_EPS = float(np.finfo(float).eps)

"""The polish of a dual solution (``postprocess.polish_dual``), called directly on small
problems whose exact optimum is known independently: worked by hand on the six-point toy
(formulations/classic.md: alpha_1 = alpha_3 = 1/4 for the hard margin and the 1-norm at
C >= 1/4, C at C = 0.2, C / (4 C + 1) for the 2-norm), and for a Gaussian kernel on eight
points by enumerating every active set (:func:`_exact_dual`: each assignment of the points to
0, free or C solved exactly and kept when its KKT conditions hold -- the optimum is unique, K
positive definite), checked against libsvm (``sklearn.svm.SVC``, tol 1e-12).

Each case asks one thing of the polish: an alpha slightly off comes back exact; a free
component that leaves [0, C_i] is held at the bound it crossed; a held point with a margin of
the wrong sign is released; the 2-norm and the hard margin; per-point C with a point of weight
0; ``judge=False``; the acceptance test (a candidate with a larger KKT residual or a lower dual
objective is refused: the input alpha comes back with False); an unbalanced start; the round
limit; ``POLISH_MAX_FREE``; a free system without a solution. Written for ``make mutate``
(issue 31): polish_dual is called by nearly every test of mutmut's selection, so its mutants
are killed here in a second rather than by a solve."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from svm_models.model.built import BuiltSVM
from svm_models.model.forms import HARD, SOFT_L1, SOFT_L2
from svm_models.postprocess import polish_dual

# ---------------------------------------------------------------------------------------
# the reference: every active set tried


def _kkt(K, y, C, ridge, state):
    """The KKT point of the dual ``max e'a - a'Qa/2, y'a = 0`` (``Q = D_y K D_y``, plus
    ``diag(1/C)`` for the 2-norm; ``0 <= a <= C`` for the 1-norm, C one number or one per point,
    a point of C_i = 0 held at 0; ``a >= 0`` otherwise) on the active set ``state`` (per point 0:
    at 0, 1: free, 2: at C): the free equations ``(Q a)_F + b y_F = 1``, ``y'a = 0`` solved
    exactly; ``(a, b)`` when its free components are within their bounds and every held point's
    margin has the right sign (then it is the optimum: the dual is concave), else None."""
    n, tol = len(y), 1e-11
    box = C is not None and not ridge
    Cv = np.broadcast_to(np.asarray(np.inf if C is None else C, float), (n,)).copy()
    Q = K * np.outer(y, y)
    if ridge:
        Q = Q + np.diag(np.where(Cv > 0, 1.0 / np.where(Cv > 0, Cv, 1.0), 0.0))
    state = np.asarray(state)
    a = np.where(state == 2, Cv, 0.0)
    F = np.flatnonzero(state == 1)
    if F.size:
        A = np.zeros((F.size + 1, F.size + 1))
        A[:-1, :-1] = Q[np.ix_(F, F)]
        A[:-1, -1] = A[-1, :-1] = y[F]
        r = np.concatenate([1.0 - (Q @ a)[F], [-(y @ a)]])
        s = np.linalg.lstsq(A, r, rcond=None)[0]
        if np.abs(A @ s - r).max() > 1e-10:
            return None
        a[F], b = s[:-1], s[-1]
        if np.any(a[F] < -tol) or (box and np.any(a[F] > Cv[F] + tol)):
            return None
    else:   # no free point: b anywhere in the interval the held points allow
        if abs(y @ a) > 1e-12:
            return None
        g = Q @ a
        lo, hi = -np.inf, np.inf
        for i in np.flatnonzero(Cv > 0):   # y_i b >= 1 - g_i at 0, <= at C
            if (state[i] == 0) == (y[i] > 0):
                lo = max(lo, y[i] * (1.0 - g[i]))
            else:
                hi = min(hi, y[i] * (1.0 - g[i]))
        if lo > hi + tol:
            return None
        b = (lo + hi) / 2 if np.isfinite(lo) and np.isfinite(hi) else \
            lo if np.isfinite(lo) else hi
    m = Q @ a + y * b
    live = Cv > 0
    if np.any((state == 0) & live & (m < 1 - tol)) or \
            np.any((state == 2) & live & (m > 1 + tol)):
        return None
    return a, b


def _exact_dual(K, y, C=None, ridge=False):
    """Every KKT point (:func:`_kkt`), every assignment of the points to 0, free or C tried
    (several active sets can give the same alpha)."""
    Cv = np.broadcast_to(np.asarray(np.inf if C is None else C, float), (len(y),))
    box = C is not None and not ridge
    options = [([0, 1, 2] if box else [0, 1]) if c > 0 else [0] for c in Cv]
    return [p for state in itertools.product(*options)
            if (p := _kkt(K, y, C, ridge, state)) is not None]


def _optimum(K, y, C, ridge, state):
    """The optimum ``(alpha, b)`` on the active set ``state`` (:func:`_kkt`), checked to be a
    KKT point; ``test_the_reference_is_the_only_kkt_point_and_libsvms_optimum`` checks by
    enumeration that each state used below is the optimum's."""
    out = _kkt(K, y, C, ridge, state)
    assert out is not None, "not a KKT point"
    return out


def _dual(K, y, a, C=None, ridge=False):
    """The dual objective ``e'a - (ya)'K(ya)/2 (- a'a/(2C))`` at ``a``."""
    ya = y * a
    out = a.sum() - 0.5 * ya @ K @ ya
    if ridge:
        Cv = np.broadcast_to(np.asarray(C, float), a.shape)
        out -= 0.5 * float(np.sum(np.divide(a * a, Cv, out=np.zeros_like(a), where=Cv > 0)))
    return float(out)


# ---------------------------------------------------------------------------------------
# the problems

def _stub(K, y, X=None):
    """What polish_dual reads of a built SVM: y, K (``kernel_times`` is ``K v``)."""
    X = np.zeros((len(y), 1)) if X is None else X
    return BuiltSVM(formulation="soft_l1_dual", data=SimpleNamespace(X=X, y=np.asarray(y, float)),
                    kernel=SimpleNamespace(is_linear=False), block=None, record=None,
                    K=np.asarray(K, float))


#: eight points in the plane, a Gaussian kernel exp(-|x - x'|^2 / 2) (positive definite:
#: smallest eigenvalue 0.037); at C = 3 the optimum has point 3 at 0, points 6 and 7 at C and
#: the other five free, b = 0.0338
_X8 = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.5], [2.0, 2.0], [1.0, 2.0], [2.5, 0.5],
                [1.2, 1.1], [0.7, 0.9]])
_Y8 = np.array([-1.0, -1.0, -1.0, 1.0, 1.0, 1.0, -1.0, 1.0])
_K8 = np.exp(-0.5 * ((_X8[:, None, :] - _X8[None, :, :]) ** 2).sum(-1))
#: per-point C: 3 times these weights (point 4 of weight 0)
_W8 = np.array([1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 2.0, 0.25])


#: the optimum's active set (0: at 0, 1: free, 2: at C) for each problem used below
_AT = {("l1", 3.0): (1, 1, 1, 0, 1, 1, 2, 2), ("l1", 1.0): (1, 2, 2, 1, 2, 2, 2, 2),
       ("l1", 0.3): (2,) * 8, ("hard", None): (1,) * 8, ("l2", 0.3): (1,) * 8,
       ("l2", 3.0): (1,) * 8, ("l1w", 3.0): (1, 1, 1, 1, 0, 1, 1, 2),
       ("l2w", 3.0): (1, 1, 1, 1, 0, 1, 1, 1)}


def _opt8(kind, C):
    """The eight points' optimum ``(alpha, b)``: 1-norm ("l1"), with the weights ("l1w": C
    times _W8), 2-norm ("l2", "l2w") or hard margin."""
    Cs = None if C is None else C * _W8 if kind.endswith("w") else C
    return _optimum(_K8, _Y8, Cs, kind.startswith("l2"), _AT[kind, C])


def _rbf8():
    return _stub(_K8, _Y8, _X8)


_TOY_X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype=float)
_TOY_Y = np.array([-1, -1, -1, 1, 1, 1])


def _toy(formulation, **params):
    """The six-point toy built by svm_models (linear kernel: K v through X)."""
    import svm_models as sm

    model = sm.build(formulation, _TOY_X, _TOY_Y, **params)
    return sm.api.the_svm_block(model)._svm


def _toy_alpha(a1, a3, **others):
    a = np.zeros(6)
    a[1], a[3] = a1, a3
    for k, v in others.items():
        a[int(k[1:])] = v
    return a


def test_the_reference_is_the_only_kkt_point_and_libsvms_optimum():
    """Every active set tried: the states of _AT give the only KKT points (alpha unique), which
    agree with libsvm (``SVC``, tol 1e-12: alpha to its 1e-6; a point of weight 0 left out, as
    libsvm drops it) on the eight points; the toy's alphas are the hand-worked ones."""
    from sklearn.svm import SVC

    for (kind, C), state in _AT.items():
        Cs = None if C is None else C * _W8 if kind.endswith("w") else C
        a, b = _opt8(kind, C)
        found = _exact_dual(_K8, _Y8, Cs, kind.startswith("l2"))
        assert found
        for a2, _ in found:
            np.testing.assert_allclose(a2, a, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(np.where(a == 0, 0, np.where(a == np.broadcast_to(
            np.inf if Cs is None or kind.startswith("l2") else Cs, (8,)), 2, 1)), state)
        keep = _W8 > 0 if kind.endswith("w") else np.ones(8, bool)
        Ks = _K8[np.ix_(keep, keep)]
        if kind.startswith("l2"):   # the 2-norm: a hard margin with the kernel K + I/C
            Ks = Ks + np.diag(1.0 / np.broadcast_to(Cs, (8,))[keep])
        svc = SVC(kernel="precomputed", C=1e8 if kind[:2] in ("ha", "l2") else C, tol=1e-12)
        svc.fit(Ks, _Y8[keep], sample_weight=_W8[keep] if kind == "l1w" else None)
        ref = np.zeros(keep.sum())
        ref[svc.support_] = np.abs(svc.dual_coef_[0])
        np.testing.assert_allclose(a[keep], ref, rtol=1e-6, atol=1e-6)
        assert b == pytest.approx(svc.intercept_[0], abs=1e-6)   # (f = K(y a) + b)
    a, _ = _opt8("l1", 3.0)
    assert 0.2 < a[[0, 1, 2, 4, 5]].min() and a[[0, 1, 2, 4, 5]].max() < 2.99
    K = _TOY_X @ _TOY_X.T
    y = _TOY_Y.astype(float)
    for C, ridge, exact in ((1.0, False, 0.25), (0.2, False, 0.2), (None, False, 0.25),
                            (1.0, True, 0.2)):
        found = _exact_dual(K, y, C, ridge)
        for a, _ in found:
            np.testing.assert_allclose(a, _toy_alpha(exact, exact), rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------------------
# the toy, worked by hand


@pytest.mark.parametrize("formulation, params, margin, exact", [
    ("soft_l1_dual", {"C": 1.0}, SOFT_L1, 0.25),
    ("hard_dual", {}, HARD, 0.25),
    # 2-norm: a_1 = a_3 = t, w = (2t, 2t), margin 4t + t/C = 1: t = C / (4C + 1) = 1/5
    ("soft_l2_dual", {"C": 1.0}, SOFT_L2, 0.2),
])
def test_a_start_slightly_off_comes_back_exact_on_the_toy(formulation, params, margin, exact):
    svm = _toy(formulation, **params)
    assert svm.facts.margin is margin
    C = svm.point_C(params.get("C"))
    start = _toy_alpha(exact + 1e-4, exact - 3e-5)
    out, ok = polish_dual(svm, margin, start, C, 1e-6)
    assert ok
    np.testing.assert_allclose(out, _toy_alpha(exact, exact), rtol=0, atol=1e-15)
    # the input is not changed
    np.testing.assert_array_equal(start, _toy_alpha(exact + 1e-4, exact - 3e-5))


def test_on_the_toy_a_component_above_c_is_held_at_c_and_one_below_0_at_0():
    """C = 0.2: the free solve of points 1 and 3 gives 1/4 each, above C: both held at 0.2 (their
    margins 0.8, the other four's 1.2: the optimum). Points 0, 1 and 3 free on their margins:
    w = (0, 1), b = 0, alpha_0 = -1, alpha_1 = 3/2, alpha_3 = 1/2 (w = (2a_0 + a_1 + a_3,
    a_0 + a_1 + a_3), a_3 = a_0 + a_1): point 0 held at 0, then 1 and 3 at 1/4 (C = 1)."""
    svm = _toy("soft_l1_dual", C=0.2)
    out, ok = polish_dual(svm, SOFT_L1, _toy_alpha(0.15, 0.15), 0.2, 1e-6)
    assert ok
    np.testing.assert_array_equal(out, _toy_alpha(0.2, 0.2))
    # one at C within thr of it (held there from the start), the other free: balance gives 0.2
    out, ok = polish_dual(svm, SOFT_L1, _toy_alpha(0.1999, 0.2 - 1e-7), 0.2, 1e-6)
    assert ok
    np.testing.assert_allclose(out, _toy_alpha(0.2, 0.2), rtol=0, atol=1e-16)
    svm = _toy("soft_l1_dual", C=1.0)
    for margin, C, mk in ((SOFT_L1, 1.0, "soft_l1_dual"), (HARD, None, "hard_dual")):
        svm = _toy(mk, **({"C": C} if C else {}))
        out, ok = polish_dual(svm, margin, _toy_alpha(0.3, 0.31, a0=0.01), C, 1e-6)
        assert ok
        np.testing.assert_allclose(out, _toy_alpha(0.25, 0.25), rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------------------
# eight points, a Gaussian kernel


def _starts(a, C, rng):
    """Starts around the optimum a: a little off (each component moved by up to 1e-4 and put
    back into [0, C_i]), every alpha 0, every alpha at C_i / 2."""
    Cv = np.broadcast_to(np.asarray(C, float), a.shape)
    off = np.clip(a + np.where(a > 0, 1.0, 0.0) * rng.uniform(-1e-4, 1e-4, a.size), 0.0, Cv)
    return [off, np.zeros_like(a), Cv / 2]


@pytest.mark.parametrize("C", [3.0, 1.0, 0.3])
def test_the_1_norm_from_any_start_gives_the_exact_optimum(C):
    svm = _rbf8()
    a, _ = _opt8("l1", C)
    for start in _starts(a, C, np.random.default_rng(1)):
        out, ok = polish_dual(svm, SOFT_L1, start.copy(), C, 1e-8)
        assert ok
        np.testing.assert_allclose(out, a, rtol=0, atol=1e-12)
        out, ok = polish_dual(svm, SOFT_L1, start.copy(), C, 1e-8, judge=False)
        assert ok
        np.testing.assert_allclose(out, a, rtol=0, atol=1e-12)


def test_a_point_held_at_c_with_a_margin_above_1_is_released():
    """C = 3: the optimum with point 3 (alpha 0, margin above 1) started at C: held there, with
    0, 1, 2, 4, 5 free (all solved within [0, 3]); its margin above 1 releases it; solved with
    them it is below 0 (held at 0) and point 4 above 3 (held at 3); point 4's margin, above 1,
    releases it; the free set is again 0, 1, 2, 4, 5 -- with point 3 now at 0, not at C -- and
    its solve is the optimum. Before the polish's cycle guard read the bounds too, that free
    set met again was taken for a cycle and the input came back (so from every alpha 0, and
    the starts of test_per_point_c_with_a_point_of_weight_0)."""
    svm = _rbf8()
    a, b = _opt8("l1", 3.0)
    m = _Y8 * (_K8 @ (_Y8 * a) + b)
    assert m[3] > 1.0 + 1e-3
    start = a.copy()
    start[3] = 3.0
    out, ok = polish_dual(svm, SOFT_L1, start, 3.0, 1e-8)
    assert ok
    np.testing.assert_allclose(out, a, rtol=0, atol=1e-12)
    # and points at 0 whose margins are below 1 (6 and 7, at C in the optimum)
    start = a.copy()
    start[[6, 7]] = 0.0
    out, ok = polish_dual(svm, SOFT_L1, start, 3.0, 1e-8)
    assert ok
    np.testing.assert_allclose(out, a, rtol=0, atol=1e-12)


def test_the_hard_margin_and_the_2_norm_on_eight_points():
    svm = _rbf8()
    rng = np.random.default_rng(2)
    a, _ = _opt8("hard", None)   # every point a support vector, alpha up to 38.5
    for start in (a * (1 + rng.uniform(-1e-4, 1e-4, 8)), np.zeros(8), np.ones(8)):
        out, ok = polish_dual(svm, HARD, start, None, 1e-8)
        assert ok
        np.testing.assert_allclose(out, a, rtol=1e-12, atol=0)
    for C in (0.3, 3.0):
        a, _ = _opt8("l2", C)   # every alpha free, some above C
        assert a.max() > C or C == 0.3
        for start in (a * (1 + rng.uniform(-1e-4, 1e-4, 8)), np.zeros(8), np.full(8, C)):
            out, ok = polish_dual(svm, SOFT_L2, start, C, 1e-8)
            assert ok
            np.testing.assert_allclose(out, a, rtol=1e-12, atol=0)


def test_the_2_norm_with_a_point_beyond_its_margin():
    """C = 10: a ninth point, +1 at (1.5, 2.75), beyond its margin (1.23 at the eight's optimum):
    alpha 0 at the nine's. Started free it is solved below 0 and held; started at 0 it stays
    there."""
    X = np.vstack([_X8, [[1.5, 2.75]]])
    y = np.append(_Y8, 1.0)
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    svm = _stub(K, y, X)
    a, _ = _optimum(K, y, 10.0, True, (1,) * 8 + (0,))
    assert a[8] == 0.0 and np.all(a[:8] > 0.1)
    for start in (np.full(9, 0.5), np.append(a[:8], 0.0) * 1.001):
        out, ok = polish_dual(svm, SOFT_L2, start, 10.0, 1e-8)
        assert ok
        np.testing.assert_allclose(out, a, rtol=1e-12, atol=1e-15)


def test_per_point_c_with_a_point_of_weight_0():
    """C_i = 3 w_i: point 4 (weight 0) has alpha 0 whatever its margin, point 7 sits at its own
    C_7 = 0.75, point 6 is free at 2.50 (below its C_6 = 6, above the C = 3 of the others)."""
    svm = _rbf8()
    C = 3.0 * _W8
    a, _ = _opt8("l1w", 3.0)
    assert a[4] == 0.0 and a[7] == 0.75 and 2.4 < a[6] < 2.6
    rng = np.random.default_rng(3)
    starts = _starts(a, C, rng)
    s = a.copy()
    s[7] = 0.7   # free: solved above C_7, held at C_7 = 0.75 (not at C = 3, nor at C_6 = 6)
    starts.append(s)
    s = a.copy()
    s[6] = 6.0   # at its bound C_6: its margin above 1 releases it
    starts.append(s)
    for start in starts:
        out, ok = polish_dual(svm, SOFT_L1, start, C, 1e-8)
        assert ok
        np.testing.assert_allclose(out, a, rtol=0, atol=1e-12)
    # the 2-norm with the same weights: point 4 at 0 (no condition), the others free
    a, _ = _opt8("l2w", 3.0)
    assert a[4] == 0.0
    for start in (np.where(_W8 > 0, 1.0, 0.0), a * (1 + rng.uniform(-1e-4, 1e-4, 8))):
        out, ok = polish_dual(svm, SOFT_L2, start, C, 1e-8)
        assert ok
        np.testing.assert_allclose(out, a, rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------------------------------
# the acceptance test


def test_a_candidate_with_a_lower_dual_objective_is_refused():
    """Two points, +1 at 1 and -1 at -1 (K = x x'), C = 0.4: the optimum is alpha = (0.4, 0.4),
    margins 0.8, dual 0.8 - 0.32 = 0.48. A start above C, (0.5, 0.5), is held at C: the
    candidate is the optimum, KKT residual 0 as the start's (margins 1 at C), but the start's
    dual value 1 - 0.5 = 0.5 is higher -- refused: the input alpha comes back, not accepted.
    judge=False takes it. A start at 0.39 (within thr of C) has dual 0.4758: the optimum is taken
    (residuals both 0: a tie)."""
    x = np.array([[1.0], [-1.0]])
    svm = _stub(x @ x.T, [1.0, -1.0], x)
    assert _dual(x @ x.T, np.array([1.0, -1.0]), np.array([0.5, 0.5])) == 0.5
    start = np.array([0.5, 0.5])
    out, ok = polish_dual(svm, SOFT_L1, start, 0.4, 1e-6)
    assert out is start and not ok
    out, ok = polish_dual(svm, SOFT_L1, start, 0.4, 1e-6, judge=False)
    assert ok
    np.testing.assert_array_equal(out, [0.4, 0.4])
    out, ok = polish_dual(svm, SOFT_L1, np.array([0.39, 0.39]), 0.4, 0.02)
    assert ok
    np.testing.assert_array_equal(out, [0.4, 0.4])


def _gauss(X):
    return np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))


def _one_more(X, y, C, state, p0, p1, gap):
    """The points X (labels y) and one more, -1 on the segment from p0 to p1, placed where the
    optimum of X at C (on its active set ``state``) puts its margin at ``1 - gap`` (bisection
    on the segment). Returns the K, y and X of all of them and that optimum's alpha and b."""
    a, b = _optimum(_gauss(X), y, C, False, state)

    def excess(t):
        p = np.asarray(p0) + t * (np.asarray(p1) - np.asarray(p0))
        k = np.exp(-0.5 * ((X - p) ** 2).sum(-1))
        return -(k @ (y * a) + b) - (1 - gap), p

    lo, hi = 0.0, 1.0
    assert excess(lo)[0] * excess(hi)[0] < 0
    for _ in range(200):
        mid = (lo + hi) / 2
        if excess(mid)[0] * excess(lo)[0] > 0:
            lo = mid
        else:
            hi = mid
    X1 = np.vstack([X, excess(lo)[1]])
    return _gauss(X1), np.append(y, -1.0), X1, a, b


def _with_ninth(gap):
    """The eight points and a ninth, -1 on the segment from (-0.5, 0) to (-0.5, 0.5), placed where
    the eight's optimum at C = 3 puts its margin at ``1 - gap``."""
    K, y, X, a, _ = _one_more(_X8, _Y8, 3.0, _AT["l1", 3.0], (-0.5, 0.0), (-0.5, 0.5), gap)
    return K, y, a, X


def test_a_candidate_with_a_larger_kkt_residual_is_refused():
    """A ninth point whose margin at the eight's optimum is 1 - 5e-10: at the nine's optimum it
    is a support vector of alpha ~1e-9, every margin exact. Started there with thr above that
    alpha, the polish holds it at 0 and its margin 1 - 5e-10 is within the release tolerance
    (1e-9): the candidate is the eight's optimum, whose KKT residual 5e-10 is larger than the
    start's (round-off): refused, the input comes back. With the point at 1 - 5e-9, beyond the
    tolerance, it is released and the nine's optimum is returned."""
    K, y, a8, X = _with_ninth(5e-10)
    svm = _stub(K, y, X)
    a9, b9 = _optimum(K, y, 3.0, False, _AT["l1", 3.0] + (1,))
    assert 0.0 < a9[8] < 1e-8
    m = y * (K @ (y * a9) + b9)
    assert abs(m[8] - 1.0) < 1e-13
    m8 = y * (K @ (y * np.append(a8, 0.0)) + _opt8("l1", 3.0)[1])
    assert m8[8] == pytest.approx(1 - 5e-10, abs=1e-12)
    start = a9.copy()
    out, ok = polish_dual(svm, SOFT_L1, start, 3.0, 1e-7)
    assert out is start and not ok
    # judge=False: the candidate, the eight's optimum with 0 for the ninth
    out, ok = polish_dual(svm, SOFT_L1, start, 3.0, 1e-7, judge=False)
    assert ok
    np.testing.assert_allclose(out, np.append(a8, 0.0), rtol=0, atol=1e-12)
    # beyond the tolerance: released, the nine's optimum exact
    K, y, a8, X = _with_ninth(5e-9)
    a9, _ = _optimum(K, y, 3.0, False, _AT["l1", 3.0] + (1,))
    assert a9[8] > 1e-9
    out, ok = polish_dual(_stub(K, y, X), SOFT_L1, np.append(a8, 0.0), 3.0, 1e-7)
    assert ok
    np.testing.assert_allclose(out, a9, rtol=0, atol=1e-13)
    assert out[8] > 0.0


def test_an_unbalanced_start_is_judged_by_its_residual_alone():
    """At the optimum (C = 3, b = 0.0338) a free point of y = +1 has dual gradient
    1 - y f = y b > 0: alpha_4 raised by 1e-6 is unbalanced (y'a = 1e-6, above 1e-9 sum a) with a
    dual value above the optimum's -- not a dual objective, so the exact optimum is taken. Raised
    by 1e-9 (y'a = 1e-9 < 1e-9 sum a = 1.5e-8: balanced enough) its dual value counts, and the
    optimum, 3e-11 lower, is refused."""
    svm = _rbf8()
    a, b = _opt8("l1", 3.0)
    assert b > 0.03 and 0 < a[4] < 3
    for d, taken in ((1e-6, True), (1e-9, False)):
        start = a.copy()
        start[4] += d
        assert _dual(_K8, _Y8, start) > _dual(_K8, _Y8, a) + 0.9 * d * b
        out, ok = polish_dual(svm, SOFT_L1, start, 3.0, 1e-8)
        assert ok is taken
        if taken:
            np.testing.assert_allclose(out, a, rtol=0, atol=1e-12)
        else:
            assert out is start


# ---------------------------------------------------------------------------------------
# limits


def test_the_round_limit_and_the_size_limit(monkeypatch):
    """From alpha 0 the first round holds everyone at 0 and releases every point (margins 0):
    with one round that is the end, the input comes back. From the optimum's own active set one
    round settles. POLISH_MAX_FREE: five free points are solved when the limit is 5, not when it
    is 4 (the input back)."""
    import svm_models.postprocess as pp

    svm = _rbf8()
    a, _ = _opt8("l1", 3.0)
    start = np.zeros(8)
    out, ok = polish_dual(svm, SOFT_L1, start, 3.0, 1e-8, max_rounds=1)
    assert out is start and not ok
    near = a + np.where((a > 0) & (a < 3), 1e-5, 0.0)
    out, ok = polish_dual(svm, SOFT_L1, near, 3.0, 1e-8, max_rounds=1)
    assert ok
    np.testing.assert_allclose(out, a, rtol=0, atol=1e-12)
    monkeypatch.setattr(pp, "POLISH_MAX_FREE", 5)
    out, ok = polish_dual(svm, SOFT_L1, near, 3.0, 1e-8)
    assert ok
    np.testing.assert_allclose(out, a, rtol=0, atol=1e-12)
    monkeypatch.setattr(pp, "POLISH_MAX_FREE", 4)
    out, ok = polish_dual(svm, SOFT_L1, near, 3.0, 1e-8)
    assert out is near and not ok


def test_a_free_system_without_a_solution_gives_the_input_back():
    """Two copies of one point with opposite labels, both free: their equations read
    g + b = 1 and -(g + b) = 1 -- no solution; the input comes back, not accepted."""
    X = np.array([[0.0], [0.0], [2.0]])
    y = np.array([1.0, -1.0, -1.0])
    K = np.exp(-0.5 * (X - X.T) ** 2)
    start = np.array([0.5, 0.3, 0.2])
    out, ok = polish_dual(_stub(K, y, X), SOFT_L1, start, 1.0, 1e-8)
    assert out is start and not ok


def test_the_release_tolerance_is_1e_9_of_the_decision_values():
    """A held point is released when its margin is below 1 by more than 1e-9 max(1, max |f| + |b|)
    (f over every point, b the candidate's): here max |f| = 1.0570 (the ninth point's f is
    nearly that of its neighbours), b = 0.0338, the tolerance 1.0908e-9. The ninth point 2% inside
    it stays held at 0; 2% beyond it, it is released and the nine's optimum comes back."""
    a8, b8 = _opt8("l1", 3.0)
    K, y, _, X = _with_ninth(1e-9)
    f = K @ (y * np.append(a8, 0.0))
    scale = max(1.0, np.abs(f).max() + abs(b8))
    assert scale == pytest.approx(1.0908, abs=1e-4)

    def ninth(factor):
        K, y, _, X = _with_ninth(factor * 1e-9 * scale)
        return K, y, X, _optimum(K, y, 3.0, False, _AT["l1", 3.0] + (1,))[0]
    _check_release_rule(ninth, 3.0)


def test_a_cycle_of_the_active_set_gives_the_input_back():
    """The hard margin on six points (Gaussian kernel): from this start the active set comes back
    to one it had (the same free set, the same bounds): the polish stops there with the input,
    not accepted. From a start near the optimum (every point but 1 a support vector) it is exact."""
    X = np.array([[-2.0, 0.5], [1.0, 1.0], [1.5, 0.0], [1.0, 1.5], [1.0, 2.0], [1.5, 2.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    svm = _stub(K, y, X)
    start = np.array([0.25, 0.25, 0.0, 0.0, 1.0, 0.0])
    out, ok = polish_dual(svm, HARD, start, None, 1e-8)
    assert out is start and not ok
    a, _ = _optimum(K, y, None, False, (1, 0, 1, 1, 1, 1))
    assert [p for p, _ in _exact_dual(K, y)] and all(
        np.allclose(p, a, rtol=0, atol=1e-12) for p, _ in _exact_dual(K, y))
    out, ok = polish_dual(svm, HARD, a * 1.001, None, 1e-8)
    assert ok
    np.testing.assert_allclose(out, a, rtol=1e-12, atol=1e-15)


def test_alphas_at_thr_and_at_c_minus_thr_are_held_and_one_round_settles():
    """thr = 2^-7 (C - thr = 2.9921875 exactly): the optimum at C = 3 with point 3 (alpha 0)
    started at thr and point 6 (alpha C) at C - thr: held at 0 and at C -- neither free -- so
    the first round's free set is the optimum's and that round settles (max_rounds=1)."""
    svm = _rbf8()
    a, _ = _opt8("l1", 3.0)
    thr = 2.0 ** -7
    start = a + np.where((a > 0) & (a < 3), 1e-6, 0.0)
    start[3], start[6] = thr, 3.0 - thr
    assert start[6] == 2.9921875
    out, ok = polish_dual(svm, SOFT_L1, start, 3.0, thr, max_rounds=1)
    assert ok
    np.testing.assert_allclose(out, a, rtol=0, atol=1e-12)


def test_a_point_at_c_exactly_on_its_margin_is_not_released():
    """The toy at C = 1/4: points 1 and 3 at C, margins exactly 1 (w = (1/2, 1/2), b = 0: 0.5 +
    0.5), the others 1.5. Nothing to release: one round settles, the start itself accepted."""
    svm = _toy("soft_l1_dual", C=0.25)
    start = _toy_alpha(0.25, 0.25)
    out, ok = polish_dual(svm, SOFT_L1, start, 0.25, 1e-6, max_rounds=1)
    assert ok
    np.testing.assert_array_equal(out, _toy_alpha(0.25, 0.25))


def _pair(x, far=None):
    """Points +1 at x[0] and -1 at x[1] (K = x x', linear), and a third, +1 at ``far``, beyond
    the margin. With C below 1/(x_0 - x_1)^2 both alphas are at C (the dual on alpha_1 =
    alpha_2 = s is 2s - s^2 (x_0 - x_1)^2 / 2, rising up to there), the third at 0."""
    pts = np.array(list(x) + ([] if far is None else [far]), float)[:, None]
    y = np.array([1.0, -1.0] + ([] if far is None else [1.0]))
    return _stub(pts @ pts.T, y, pts), y, pts @ pts.T


@pytest.mark.parametrize("x, far, C, eps, taken", [
    # far from the origin (K_ii ~ 1e6): dual 0.375, its round-off allowance 1e-14 (sum a)^2
    # max K_ii = 2.5e-9 over the support vectors (the third point, K = 1e10, is none); a start
    # 2e-9 above C has a dual 0.25 eps = 5e-10 higher (within the allowance: taken), 2.4e-8
    # above 6e-9 higher (refused)
    ((1001.0, 999.0), 1e5, 0.25, 2e-9, True),
    ((1001.0, 999.0), 1e5, 0.25, 2.4e-8, False),
    # near it (K_ii = 1, C = 1e-6): dual 2e-6, allowance 1e-14 |dual| = 2e-20 (the size term is
    # 4e-12 (1e-14)): 1e-15 above C is 2e-21 higher (taken), 1e-12 above 2e-18 (refused)
    ((1.0, -1.0), None, 1e-6, 1e-15, True),
    ((1.0, -1.0), None, 1e-6, 1e-12, False),
    # K_ii = 0.01, C = 25: dual 37.5, allowance 3.75e-13; 1e-13 above C: 25 eps = 2.5e-12 higher
    ((0.1, -0.1), None, 25.0, 1e-13, False),
])
def test_the_dual_objective_is_compared_within_its_round_off(x, far, C, eps, taken):
    """A start above C (both alphas at C (1 + eps)) is held at C: the candidate is the optimum,
    residual 0 like the start's (margins below 1 at C), with a dual objective lower by
    D = 2 C eps (1 - C (x_0 - x_1)^2 / 2) (to first order). It is taken when D is within
    POLISH_ROUNDOFF = 1e-14 of max((sum a)^2 max K_ii over the support vectors, |dual|)."""
    svm, y, K = _pair(x, far)
    n = len(y)
    opt = np.array([C, C] + [0.0] * (n - 2))
    start = np.array([C * (1 + eps), C * (1 + eps)] + [0.0] * (n - 2))
    d = _dual(K, y, start) - _dual(K, y, opt)
    dx2 = (x[0] - x[1]) ** 2
    assert d == pytest.approx(2 * C * eps * (1 - C * dx2 / 2), rel=0.2)
    allowance = 1e-14 * max((2 * C) ** 2 * max(x[0] ** 2, x[1] ** 2), abs(_dual(K, y, opt)))
    assert (d <= allowance / 2) if taken else (d >= 2 * allowance)
    out, ok = polish_dual(svm, SOFT_L1, start, C, 1e-3 * C)
    if taken:
        assert ok
        np.testing.assert_array_equal(out, opt)
    else:
        assert out is start and not ok


def test_the_balance_is_relative_to_sum_alpha():
    """C = 1e-6, the pair at +-1 (both alphas at C): a start with alpha_1 1e-12 above C is
    unbalanced by 1e-12 = 5e-7 of sum alpha (above POLISH_BALANCED = 1e-9 of it): its dual value,
    2e-6 (1e-12) higher than the optimum's, is no dual objective -- the optimum is taken."""
    svm, y, K = _pair((1.0, -1.0))
    C = 1e-6
    start = np.array([C + 1e-12, C])
    assert _dual(K, y, start) > _dual(K, y, np.array([C, C])) + 0.5e-12
    out, ok = polish_dual(svm, SOFT_L1, start, C, 1e-9)
    assert ok
    np.testing.assert_array_equal(out, [C, C])


def test_the_release_tolerance_with_small_decision_values():
    """Two points +1, four -1 (Gaussian kernel), C = 0.2: both +1 at C, the -1 free or at 0
    (enumerated), b = -0.860, max |f| = 0.323: the release tolerance is 1e-9 max(1, 0.323 +
    0.860) = 1.18e-9 (not 1e-9 (1 + |b|): |f| is not floored at 1). A seventh point, -1, 2%
    inside it stays held at 0; 2% beyond it, it is released and the seven's optimum comes
    back."""
    X = np.array([[0.0, 0.0], [0.5, 0.0], [2.0, 0.0], [2.0, 1.0], [3.0, 0.5], [1.5, -1.0]])
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0, -1.0])
    state = (2, 2, 1, 1, 1, 2)
    a6, b6 = _optimum(_gauss(X), y, 0.2, False, state)
    assert [np.allclose(p, a6, rtol=0, atol=1e-12) for p, _ in _exact_dual(_gauss(X), y, 0.2)] \
        == [True]
    K7, y7, _, _, _ = _one_more(X, y, 0.2, state, (2.5, 0.5), (1.0, 0.5), 1e-9)
    f = K7 @ (y7 * np.append(a6, 0.0))
    assert np.abs(f).max() < 0.33 and b6 == pytest.approx(-0.860, abs=1e-3)
    scale = max(1.0, np.abs(f).max() + abs(b6))

    def seventh(factor):
        K7, y7, X7, _, _ = _one_more(X, y, 0.2, state, (2.5, 0.5), (1.0, 0.5),
                                     factor * 1e-9 * scale)
        return K7, y7, X7, _optimum(K7, y7, 0.2, False, state + (1,))[0]
    _check_release_rule(seventh, 0.2)


def _check_release_rule(one_more, C):
    """A last point placed 2% inside and 2% beyond the release tolerance (``one_more(factor)``:
    K, y, X and that problem's optimum, whose last alpha is below the cut-off 1e-7, so the
    polish starts with the point held at 0): the polish from that optimum keeps it held at 0
    at 0.98 and releases it at 1.02, the optimum coming back. judge=False: the release rule
    alone decides (the start is the optimum itself, so judging the candidate against it would
    compare two residuals of round-off, which flips with the BLAS kernels:
    OPENBLAS_CORETYPE=Prescott)."""
    for factor, released in ((0.98, False), (1.02, True)):
        K, y, X, opt = one_more(factor)
        assert 0 < opt[-1] < 1e-7
        out, ok = polish_dual(_stub(K, y, X), SOFT_L1, opt.copy(), C, 1e-7, judge=False)
        assert ok
        if released:
            assert out[-1] > 0.0
            np.testing.assert_allclose(out, opt, rtol=0, atol=1e-13)
        else:
            assert out[-1] == 0.0   # held at 0


# ---------------------------------------------------------------------------------------
# the kernel's columns read once a round (BuiltSVM.support_columns)


def _columns_stub(K, y, X, how):
    """The eight points with K as the builds keep it -- ``"signed"``: the dense form's signed
    matrix; ``"held"``: a lazy one holding a larger matrix whose rows of these points are two
    runs, in another order (one-vs-one's pairs in a matrix ordered by class); ``"plain"``: an
    array, whose columns are not read (every product through ``kernel_times``)."""
    from svm_models.model.built import LazySignedGram, SignedGram

    y = np.asarray(y, float)
    if how == "plain":
        return _stub(K, y, X)
    if how == "signed":
        Kv = SignedGram(np.asarray(K, float) * np.outer(y, y), y)
    else:
        n = len(y)
        big = np.full((n + 5, n + 5), 7.0)   # (entries never read: 7, not a kernel value)
        place = np.r_[5:5 + n // 2, 0:n - n // 2][::-1]   # (two runs, reversed)
        big[np.ix_(place, place)] = K
        lazy = LazySignedGram(SimpleNamespace(name="rbf"), np.asarray(X, float), y)
        lazy.hold(big, place)
        Kv = SignedGram(lazy, y)
    return BuiltSVM(formulation="soft_l1_dual", data=SimpleNamespace(X=X, y=y),
                    kernel=SimpleNamespace(is_linear=False), block=None, record=None, K=Kv)


@pytest.mark.parametrize("how", ["plain", "signed", "held"])
@pytest.mark.parametrize("kind, C, margin", [("l1", 3.0, SOFT_L1), ("l1", 1.0, SOFT_L1),
                                             ("l1w", 3.0, SOFT_L1), ("hard", None, HARD),
                                             ("l2", 3.0, SOFT_L2), ("l2w", 3.0, SOFT_L2)])
def test_the_polish_is_the_same_whether_it_reads_the_columns_or_products(how, kind, C,
                                                                         margin):
    """The eight points' optimum (every active set tried) from each start, whether the
    polish reads K's columns once a round (the dense form's matrix; a held larger one, its
    runs of rows read as slices) or asks products (a plain matrix); its product of the
    polished alpha is what kernel_times then answers (kept: the certificate reads it)."""
    svm = _columns_stub(_K8, _Y8, _X8, how)
    Cs = None if C is None else C * _W8 if kind.endswith("w") else C
    a, _ = _opt8(kind, C)
    S = np.array([0, 3, 6])
    got = svm.support_columns(S)
    if how == "plain":
        assert got is None
    else:
        np.testing.assert_array_equal(got, _K8[:, S])
    products = []   # (the polish's products asked of kernel_times: none where it has columns)
    times, rows_times = svm.kernel_times, svm.kernel_rows_times
    svm.kernel_times = lambda v: products.append(1) or times(v)
    svm.kernel_rows_times = lambda r, v: products.append(2) or rows_times(r, v)
    for start in _starts(a, 1.0 if Cs is None else Cs, np.random.default_rng(3)):
        out, ok = polish_dual(svm, margin, start.copy(), Cs, 1e-8, judge=False)
        assert ok
        np.testing.assert_allclose(out, a, rtol=0, atol=1e-12)
        assert (products == []) == (how != "plain")
        if how == "held":   # (the polished alpha's product kept: G (y (y alpha)) is G alpha)
            np.testing.assert_array_equal(svm.K.G._memo[0][0], out)
        np.testing.assert_allclose(times(_Y8 * out), _K8 @ (_Y8 * out), rtol=1e-14,
                                   atol=1e-15)


def test_the_columns_are_read_only_within_their_budget(monkeypatch):
    """Columns of more than COLUMNS_BYTES (all the points' rows) are not read: products, as
    before; a factor (the linear kernel's X) is never read as columns."""
    svm = _columns_stub(_K8, _Y8, _X8, "signed")
    assert svm.support_columns(np.arange(8)) is not None
    monkeypatch.setattr(BuiltSVM, "COLUMNS_BYTES", 8 * 8 * 3)   # (three columns)
    assert svm.support_columns(np.arange(3)) is not None
    assert svm.support_columns(np.arange(4)) is None
    monkeypatch.setattr(BuiltSVM, "COLUMNS_BYTES", 8 * 8 * 1)   # (one column)
    assert svm.support_columns(np.arange(1)) is not None
    assert svm.support_columns(np.arange(2)) is None
    monkeypatch.setattr(BuiltSVM, "COLUMNS_BYTES", 8 * 8 * 3)
    a, _ = _opt8("l1", 3.0)
    out, ok = polish_dual(svm, SOFT_L1, a + 1e-5 * (a > 0), 3.0, 1e-8, judge=False)
    assert ok
    np.testing.assert_allclose(out, a, rtol=0, atol=1e-12)
    toy = _toy("soft_l1_dual", C=1.0)   # (the linear kernel: products through X)
    assert toy.support_columns(np.arange(2)) is None
    dense = _toy("soft_l1_dual", C=1.0, quad_form="dense")   # (K kept, products through X)
    dense.K.G.materialise()   # (its columns at hand, yet X's products are the ones read)
    assert dense.K.G.columns(np.arange(2)) is not None
    assert dense.support_columns(np.arange(2)) is None
    plain = _columns_stub(_K8, _Y8, _X8, "plain")   # (a K that remembers nothing: no-op)
    plain.remember_product(np.ones(8), _K8 @ np.ones(8))


def test_an_svm_without_columns_is_polished_through_its_products():
    """An object that gives only ``kernel_times`` and ``kernel_rows_times`` (the radius-margin
    SVM's inner problem for fixed t): the polish asks it for products, as before columns."""
    X, y = _TOY_X, _TOY_Y.astype(float)
    inner = SimpleNamespace(data=SimpleNamespace(y=y, X=X), K=None, L=None,
                            kernel_times=lambda u: X @ (X.T @ u),
                            kernel_rows_times=lambda rows, u: X[rows] @ (X.T @ u))
    out, ok = polish_dual(inner, SOFT_L1, _toy_alpha(0.3, 0.31, a0=0.01), 1.0, 1e-6,
                          judge=False)
    assert ok
    np.testing.assert_allclose(out, _toy_alpha(0.25, 0.25), rtol=0, atol=1e-15)

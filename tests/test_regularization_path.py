"""The exact regularization path of soft_l1_dual against libsvm (scikit-learn's SVC)."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.svm import SVC

import svm_models as sm
from svm_models.errors import ParameterError


def _data(kind):
    if kind == "linear":
        return make_classification(40, 4, random_state=0), {"kernel": "linear"}
    if kind == "rbf":   # unbalanced classes (the start of JMLR 5, section 4.2)
        rng = np.random.default_rng(1)
        X = rng.normal(size=(36, 2))
        y = np.where(X[:, 0] + 0.5 * rng.normal(size=36) > 0.4, 1, -1)
        return (X, y), {"kernel": "rbf", "gamma": 1.0}
    # poly, with duplicated points (merged by the path, split again by at(C))
    X, y = make_classification(34, 3, n_informative=2, n_redundant=0, random_state=3)
    X, y = np.vstack([X, X[:6]]), np.append(y, y[:6])
    return (X, y), {"kernel": "poly", "degree": 2, "gamma": 0.5, "coef0": 1.0}


def _svc(X, y, C, kw, sample_weight=None):
    """libsvm's alpha at tol=1e-10."""
    ref = SVC(C=C, tol=1e-10, **kw).fit(X, y, sample_weight=sample_weight)
    alpha = np.zeros(len(y))
    alpha[ref.support_] = np.abs(ref.dual_coef_[0])
    return alpha, ref


def _reference(X, y, C, kw):
    """The library's libsvm backend at tol=1e-10 (libsvm, polished, certified); where it
    refuses its own answer (the poly data at C = 12.2 and 20.1: its certificate is 2e-6 off),
    PIQP's."""
    try:
        return sm.fit(X, y, formulation="soft_l1_dual", solver="libsvm", tol=1e-10, C=C, **kw)
    except sm.SolveFailedError:
        return sm.fit(X, y, formulation="soft_l1_dual", solver="piqp", tol=1e-10, C=C, **kw)


def _dual(sol, X, y, alpha):
    """The dual objective of alpha with the kernel of ``sol`` (labels +-1 as the path's)."""
    ys = np.where(y == sol.classes[1], 1.0, -1.0)
    v = ys * alpha
    return float(alpha.sum() - 0.5 * v @ sol.kernel.gram(X) @ v)


def _certified(sol):
    assert sol.status is sm.Status.optimal
    assert sol.extra["certificate"]["certified"], sol.extra["certificate"]
    assert abs(sol.duality_gap) <= 1e-9


@pytest.mark.parametrize("kind", ["linear", "rbf", "poly"])
def test_at_equals_libsvm_at_50_Cs(kind):
    (X, y), kw = _data(kind)
    path = sm.regularization_path(X, y, **kw)
    assert len(path.breakpoints) > 10 and len(path.events) >= len(path.breakpoints)
    for C in np.logspace(np.log10(path.C_start) - 1, np.log10(path.breakpoints[-1]) + 1, 50):
        sol = path.at(C)
        _certified(sol)
        alpha_ref, _ = _svc(X, y, C, kw)
        ours, theirs = _dual(sol, X, y, sol.alpha), _dual(sol, X, y, alpha_ref)
        # never below raw libsvm's (at large C its tolerance, absolute in the gradient,
        # leaves it 1e-7 below the optimum: above it is allowed, the certificate bounds it)
        assert ours >= theirs - 1e-8 * abs(theirs), (C, ours, theirs)
        # and equal to the library's libsvm backend's (libsvm, then polished and certified)
        lib = _reference(X, y, C, kw)
        assert abs(ours - lib.objective) <= 1e-8 * abs(lib.objective), (C, ours, lib.objective)
        assert np.all(sol.alpha >= 0) and np.all(sol.alpha <= C * (1 + 1e-12))


def test_weighted_path_equals_libsvm():
    (X, y), kw = _data("rbf")
    w = np.random.default_rng(5).uniform(0.3, 3.0, len(y))
    path = sm.regularization_path(X, y, sample_weight=w, **kw)
    for C in np.logspace(-2, 3, 12):
        sol = path.at(C)
        _certified(sol)
        assert np.all(sol.alpha <= C * w * (1 + 1e-12))
        alpha_ref, _ = _svc(X, y, C, kw, sample_weight=w)
        theirs = _dual(sol, X, y, alpha_ref)
        assert abs(_dual(sol, X, y, sol.alpha) - theirs) <= 1e-8 * abs(theirs)


def _sets(alpha, C, rel=1e-7):
    """0 right, 1 elbow, 2 left of an alpha from an independent solve."""
    return np.where(alpha <= rel * C, 0, np.where(alpha >= C * (1 - rel), 2, 1))


def test_linear_between_breakpoints_and_no_event_skipped():
    """On each segment alpha / C is linear in 1/C: at the midpoint (in 1/C) of two breakpoints
    libsvm's (polished) alpha / C is the average of the path's at the two ends; and libsvm's sets there
    are the sets the path's events give (a skipped event leaves a point in the wrong set)."""
    (X, y), kw = _data("rbf")
    path = sm.regularization_path(X, y, **kw)
    Cs = path.breakpoints
    events = iter(path.events)
    pending = next(events, None)
    # the sets as the events say, from the start (alpha / C constant below the first event)
    state = dict(enumerate(_sets(path.at(Cs[0] / 2).alpha, Cs[0] / 2, 1e-12)))
    for lo, hi in zip(Cs[:-1], Cs[1:]):
        while pending is not None and pending.C <= lo * (1 + 1e-12):
            assert state[pending.point] == {"right": 0, "elbow": 1, "left": 2}[pending.before]
            state[pending.point] = {"right": 0, "elbow": 1, "left": 2}[pending.after]
            pending = next(events, None)
        mid = 2.0 / (1.0 / lo + 1.0 / hi)
        theta_mid = (path.at(lo).alpha / lo + path.at(hi).alpha / hi) / 2
        # libsvm's answer polished on its active set (raw libsvm: alpha 1e-5 off)
        alpha_ref = sm.fit(X, y, formulation="soft_l1_dual", solver="libsvm", tol=1e-10, C=mid,
                           **kw).alpha
        assert np.abs(alpha_ref / mid - theta_mid).max() <= 1e-8, (lo, hi)
        assert np.array_equal(_sets(alpha_ref, mid), [state[i] for i in range(len(y))]), (lo, hi)
    assert pending is None or pending.C >= Cs[-1] * (1 - 1e-12)


def test_simultaneous_events_and_ties():
    """A symmetric data set: mirror images reach the margin at the same C (several points
    at once, ties in the start); the path is still libsvm's optimum."""
    base = np.array([[1.0, 0.5], [2.0, -0.3], [0.4, 1.2], [1.5, 1.5], [0.2, -0.8],
                     [-0.3, 0.1], [0.8, 0.0]])
    X = np.vstack([base, -base, base * [1, -1], -base * [1, -1]])
    y = np.array([1] * 7 + [-1] * 7 + [1] * 7 + [-1] * 7)
    path = sm.regularization_path(X, y, kernel="linear")
    assert any(np.sum(np.isclose([e.C for e in path.events], e.C)) > 1 for e in path.events)
    for C in np.logspace(-2, 3, 15):
        sol = path.at(C)
        _certified(sol)
        alpha_ref, _ = _svc(X, y, C, {"kernel": "linear"})
        theirs = _dual(sol, X, y, alpha_ref)
        assert _dual(sol, X, y, sol.alpha) >= theirs - 1e-8 * abs(theirs)


def test_separable_path_ends_at_the_hard_margin():
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(size=(15, 2)) + 3, rng.normal(size=(15, 2)) - 3])
    y = np.array([1] * 15 + [-1] * 15)
    path = sm.regularization_path(X, y, kernel="linear")
    assert path.separable
    hard = sm.fit(X, y, formulation="hard_dual", solver="libsvm", tol=1e-10)
    sol = path.at(1e6)
    assert np.allclose(sol.w, hard.w, rtol=1e-6) and abs(sol.b - hard.b) <= 1e-6


def test_range_and_bad_input():
    (X, y), kw = _data("linear")
    path = sm.regularization_path(X, y, C_min=0.1, C_max=10.0, **kw)
    assert path.breakpoints.min() >= 0.1 and path.breakpoints.max() <= 10.0
    assert all(0.1 <= e.C <= 10.0 for e in path.events)
    _certified(path.at(10.0))
    with pytest.raises(ParameterError, match="outside the path"):
        path.at(20.0)
    with pytest.raises(ParameterError, match="C_min < C_max"):
        sm.regularization_path(X, y, C_min=10.0, C_max=1.0)
    with pytest.raises(sm.SVMError):
        sm.regularization_path(X, np.ones(len(y)))


def _grid_search(X, y, Cs, **kw):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    return GridSearchCV(SVC(tol=1e-10, **kw), {"C": list(Cs)}, cv=StratifiedKFold(5)).fit(X, y)


def test_cross_validation_takes_every_C_from_one_path_per_fold(monkeypatch):
    import svm_models.methods.regularization_path as rp

    calls = []
    real = rp.regularization_path
    monkeypatch.setattr(rp, "regularization_path", lambda *a, **k: calls.append(1) or real(*a, **k))
    X, y = make_classification(60, 5, random_state=2)
    Cs = np.logspace(-2, 2, 20)
    table = sm.cross_validate(X, y, Cs=Cs, cv=5, kernel="rbf", gamma=0.2)
    assert len(calls) == 5   # one path per fold, not one solve per C
    sm.cross_validate(X, y, Cs=Cs[:19], cv=5, kernel="rbf", gamma=0.2)
    assert len(calls) == 5   # (fewer Cs than PATH_MIN_CS: the fits, which cost less)
    gs = _grid_search(X, y, Cs, kernel="rbf", gamma=0.2)
    for k in range(5):
        assert np.array_equal(table[f"split{k}_test_score"], gs.cv_results_[f"split{k}_test_score"])


def test_Cs_path_finds_the_best_C_on_the_whole_interval():
    X, y = make_classification(40, 4, random_state=4)
    est = sm.SVMClassifierCV(Cs="path", kernel="rbf", gamma=0.3).fit(X, y)
    Cs = np.array([p["C"] for p in est.cv_results_["params"]])
    assert len(Cs) > 20 and np.all(np.diff(Cs) > 0)
    rows = np.unique(np.r_[np.arange(0, len(Cs), 7), est.best_index_])   # (libsvm: 5 fits each)
    gs = _grid_search(X, y, Cs[rows], kernel="rbf", gamma=0.3)
    assert np.array_equal(est.cv_results_["mean_test_score"][rows],
                          gs.cv_results_["mean_test_score"])
    # no grid of the interval does better
    assert est.best_score_ >= _grid_search(X, y, np.logspace(-4, 4, 41), kernel="rbf",
                                           gamma=0.3).best_score_
    with pytest.raises(ParameterError, match="path"):
        sm.SVMClassifierCV(Cs="path", formulation="soft_l2_dual").fit(X, y)
    # the spelling, C="path", is the same search
    same = sm.SVMClassifierCV(C="path", kernel="rbf", gamma=0.3).fit(X, y)
    assert same.best_params_ == est.best_params_ and same.best_score_ == est.best_score_


def test_Cs_path_pieces_hold_each_fold_s_predictions_constant():
    """The defining property of ``Cs="path"``'s rows: each stands for a piece of
    ``PATH_C_RANGE`` (its geometric midpoint) on which every fold's predictions are constant
    -- checked inside every piece, near both ends, on every fold's own path; and it takes
    every hyperparameter the path takes, and refuses three classes."""
    from sklearn.model_selection import StratifiedKFold

    from svm_models.methods.cv import PATH_C_RANGE

    X, y = make_classification(36, 4, random_state=8)
    kw = {"kernel": "poly", "gamma": 0.5, "degree": 2, "coef0": 1.0}
    table = sm.cross_validate(X, y, Cs="path", cv=3, **kw)
    Cs = np.array([p["C"] for p in table["params"]])
    cuts = [PATH_C_RANGE[0]]
    for C in Cs:                     # (each C the geometric midpoint of its piece)
        cuts.append(C * C / cuts[-1])
    assert cuts[-1] == pytest.approx(PATH_C_RANGE[1], rel=1e-6) and np.all(np.diff(cuts) > 0)
    for train, test in StratifiedKFold(3).split(X, y):
        path = sm.regularization_path(X[train], y[train], C_min=PATH_C_RANGE[0],
                                      C_max=PATH_C_RANGE[1], **kw)
        for k, C in enumerate(Cs):
            inside = np.geomspace(cuts[k], cuts[k + 1], 7)[1:-1]
            D = path.decision_function(X[test], np.r_[C, inside])
            assert np.all((D >= 0) == (D[0] >= 0)), (k, C)
    y3 = np.arange(36) % 3
    with pytest.raises(ParameterError, match="two classes"):
        sm.cross_validate(X, y3, Cs="path", cv=3, kernel="rbf")


def test_envelope_knots_follow_the_steepest_of_lines_meeting_at_once():
    """The knots of the upper envelope of lines: three meet at C = 0 (the steepest, slope 2,
    is on top after it), a fourth overtakes that one at C = 5 -- not at 2.5, where it
    crosses the slope-1 line, which is under the envelope; the lower envelope mirrored."""
    from svm_models.methods.regularization_path import _envelope_knots

    a, s = np.array([0.0, 0.0, 0.0, -5.0]), np.array([0.0, 1.0, 2.0, 3.0])
    assert _envelope_knots(a, s, -1.0, 10.0, upper=True) == pytest.approx([0.0, 5.0])
    assert _envelope_knots(-a, -s, -1.0, 10.0, upper=False) == pytest.approx([0.0, 5.0])
    assert _envelope_knots(a, s, -1.0, 4.0, upper=True) == pytest.approx([0.0])
    C = np.linspace(-1, 10, 2001)   # (against the envelope sampled: its line changes there)
    top = np.argmax(a[:, None] + s[:, None] * C, axis=0)
    assert C[np.flatnonzero(np.diff(top))] == pytest.approx([0.0, 5.0], abs=0.01)


def test_an_unbalanced_start_is_found_in_few_solves(monkeypatch):
    """One class against nine (digits, 1,198 points, a kernel of gamma 1e-3, nearly
    constant): the start's QP over the larger class by a primal feasible active set, then
    checked by the exchanges -- 236 small solves, where the exchanges from every point free
    took 4,325 solves of up to 1,078 points (24 s) -- and the path from it equal to libsvm
    below and above its start."""
    from sklearn.datasets import load_digits
    from sklearn.metrics.pairwise import rbf_kernel

    import svm_models.methods.regularization_path as rp

    X, y = load_digits(return_X_y=True)
    X, t = X[:1198] / 16.0, np.where(y[:1198] == 3, 1, -1)
    sizes = []
    real = rp._solve_free_system
    monkeypatch.setattr(rp, "_solve_free_system", lambda A, r: sizes.append(len(r)) or real(A, r))
    path = sm.regularization_path(X, t, kernel="rbf", gamma=1e-3, C_min=1.0, C_max=10.0)
    assert len(sizes) < 1000 and max(sizes) < 100
    for C in (path.C_start / 2, 1.0, 10.0):
        sol = path.at(C)
        _certified(sol)
        ref = SVC(C=C, kernel="rbf", gamma=1e-3, tol=1e-10).fit(X, t)
        sv, dc = X[ref.support_], ref.dual_coef_[0]
        dual = np.abs(dc).sum() - 0.5 * dc @ rbf_kernel(sv, sv, gamma=1e-3) @ dc
        assert sol.objective == pytest.approx(dual, rel=1e-8)
        assert np.abs(sol.decision_function(X[:50]) - ref.decision_function(X[:50])).max() < 3e-5


def test_decision_values_at_many_Cs_equal_each_C_s_solution():
    """``decision_function(X, Cs)`` (every C of a segment at once, b from one kernel product
    where the segment has no elbow) equals each C's certified Solution and libsvm's, below
    ``C_start`` (no elbow: b from the KKT interval) and along the elbow's segments."""
    X, y = make_classification(40, 4, random_state=11)
    Xte = make_classification(15, 4, random_state=12)[0]
    path = sm.regularization_path(X, y, kernel="rbf", gamma=0.3, C_min=1e-3, C_max=1e2)
    Cs = np.r_[np.geomspace(1e-3, min(path.C_start, 1e2), 4, endpoint=False),
               np.geomspace(1e-3, 1e2, 9)[::-1]]
    assert Cs.min() < path.C_start    # (segments without an elbow are met)
    D = path.decision_function(Xte, Cs)
    assert D.shape == (Cs.size, 15)
    for k, C in enumerate(Cs):
        assert np.abs(D[k] - path.at(C).decision_function(Xte)).max() < 1e-9
        ref = SVC(C=C, kernel="rbf", gamma=0.3, tol=1e-12).fit(X, y).decision_function(Xte)
        assert np.abs(D[k] - ref).max() < 1e-6 * max(1.0, np.abs(ref).max())
    assert path.decision_function(Xte, []).shape == (0, 15)
    with pytest.raises(ParameterError, match="outside the path"):
        path.decision_function(Xte, [1.0, 1e3])


def test_Cs_path_follows_each_fold_s_path_once(monkeypatch):
    """``Cs="path"`` reads every C's decision values from the paths that cut the interval
    (one per fold and setting), and its table is the table of the same Cs given as a list
    (each fold's path followed again, on the task's own points and targets)."""
    import svm_models.methods.regularization_path as rp

    calls = []
    real = rp.regularization_path
    monkeypatch.setattr(rp, "regularization_path", lambda *a, **k: calls.append(1) or real(*a, **k))
    X, y = make_classification(50, 4, random_state=5)
    y = np.where(y == 1, "yes", "no")
    w = np.linspace(0.5, 2.0, 50)
    kw = {"cv": 3, "kernel": "rbf", "gamma": [0.1, 0.4], "sample_weight": w}
    table = sm.cross_validate(X, y, Cs="path", **kw)
    assert len(calls) == 3 * 2    # folds x settings, once each
    Cs = [p["C"] for p in table["params"]]
    again = sm.cross_validate(X, y, Cs=sorted(set(Cs)), **kw)
    assert len(calls) == 2 * 3 * 2
    assert [p["C"] for p in again["params"]] == Cs and again["params"] == table["params"]
    for k in range(3):
        assert np.array_equal(table[f"split{k}_test_score"], again[f"split{k}_test_score"])
    assert set(table["status"]) == {"optimal"}


def test_precomputed_kernel_and_points_of_weight_zero():
    from sklearn.metrics.pairwise import rbf_kernel

    X, y = make_classification(40, 4, random_state=7)
    K = rbf_kernel(X, X, gamma=0.3)
    w = np.ones(40)
    w[:5], w[5:10] = 0.0, 2.5
    pre = sm.regularization_path(K, y, kernel="precomputed")
    weighted = sm.regularization_path(X, y, kernel="rbf", gamma=0.3, sample_weight=w)
    for C in (0.01, 1.0, 100.0):
        for path, data, kw in ((pre, K, {"kernel": "precomputed"}),
                               (weighted, X, {"kernel": "rbf", "gamma": 0.3, "sample_weight": w})):
            sol = path.at(C)
            _certified(sol)
            ref = sm.fit(data, y, solver="libsvm", tol=1e-10, C=C, **kw)
            assert abs(sol.objective - ref.objective) <= 1e-8 * abs(ref.objective)
        assert np.all(weighted.at(C).alpha[:5] == 0.0)


def test_the_path_ends_at_its_time_limit_with_a_typed_error():
    """The event loop is bounded in time, not only in events: a limit too short for the path
    is a SolveFailedError of status time_limit, naming the limit; the same path with the
    default limit completes."""
    X, y = make_classification(300, 5, random_state=6)
    with pytest.raises(sm.SolveFailedError, match="time limit of 0.01 s") as err:
        sm.regularization_path(X, y, kernel="rbf", C_min=1e-2, C_max=1e2, time_limit=0.01)
    assert err.value.status == "time_limit"
    assert len(sm.regularization_path(X, y, kernel="rbf", C_min=1e-2, C_max=1e2)
               .breakpoints) > 10


def test_the_start_s_qp_ends_at_the_time_limit(monkeypatch):
    """The start's QP is bounded in time too: its exchanges started from every point free
    (the sets guessed as before the primal feasible start: 24 s on one digit against nine)
    stop at a 1 s limit with a typed time_limit, within 2 s."""
    import time

    from sklearn.datasets import load_digits

    import svm_models.methods.regularization_path as rp

    X, y = load_digits(return_X_y=True)
    X, t = X[:1198] / 16.0, np.where(y[:1198] == 3, 1, -1)
    monkeypatch.setattr(rp, "_feasible_sets", lambda P, c, total, w, rounds, deadline=None:
                        (np.ones(len(c), dtype=bool), np.zeros(len(c), dtype=bool)))
    t0 = time.perf_counter()
    with pytest.raises(sm.SolveFailedError, match="at its start") as err:
        sm.regularization_path(X, t, kernel="rbf", gamma=1e-3, C_min=1.0, C_max=10.0,
                               time_limit=1.0)
    assert err.value.status == "time_limit" and time.perf_counter() - t0 < 2.0

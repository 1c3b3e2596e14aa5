"""Cross-validation's bookkeeping (svm_models.methods.cv), fast: the table (rows, fold
scores, means, deviations, ranks, statuses) against scikit-learn's GridSearchCV and
cross_val_score over SVC on the same folds, the best row's tie rules, the refit's call, the
multiclass combination against scikit-learn's own, the table of failed and unfinished tasks,
and the checks of Cs and of the grid. Each test takes about a second or less (36 or 48 points,
3 folds, mostly HiGHS): the file is in `make mutate`'s selection (pyproject.toml), for
methods/cv.py's mutants (tests/mutation/README.md)."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_classification
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier
from sklearn.svm import SVC
from sklearn.utils.multiclass import _ovr_decision_function

from svm_models.errors import DataError, ParameterError, SVMError
from svm_models.estimator import SVMClassifierCV
from svm_models.formulations import get as lookup
from svm_models.methods import cv as smcv

from conftest import require

#: rows in ParameterGrid's order (C outermost), C unsorted
CS = [10.0, 0.1, 1.0]
GAMMAS = [0.3, 2.0]
LABELS = np.array(["neg", "pos"])


def _binary():
    """36 points, labels "neg"/"pos" (strings: the table must score against the labels'
    indices, the refit get the labels themselves). Rows 0 (C=10) and 4 (C=1), gamma=0.3,
    tie at the top mean score 31/36."""
    X, y = make_classification(36, 3, n_informative=2, n_redundant=0, flip_y=0.15,
                               random_state=0)
    return X, LABELS[y]


def _score_columns(n_folds):
    return [f"split{k}_test_score" for k in range(n_folds)] + [
        "mean_test_score", "std_test_score", "rank_test_score"]


@pytest.fixture(scope="module")
def binary_table():
    X, y = _binary()
    t0 = time.perf_counter()
    table = smcv.cross_validate(X, y, "soft_l1_dual", require("highs"), Cs=CS, cv=3,
                                kernel="rbf", gamma=GAMMAS)
    table["_seconds"] = time.perf_counter() - t0   # the call's wall time (for the test below)
    return table


def test_binary_table_equals_grid_search_over_svc(binary_table):
    """Every score column, the params and the param_ columns (values and masks) equal
    GridSearchCV's over SVC on the same (unshuffled stratified) folds; every row optimal;
    the timing columns one finite non-negative value per row."""
    X, y = _binary()
    ref = GridSearchCV(SVC(kernel="rbf", tol=1e-10), {"C": CS, "gamma": GAMMAS},
                       cv=StratifiedKFold(3)).fit(X, y).cv_results_
    table = binary_table
    assert table["params"] == ref["params"]
    for k in ("param_C", "param_gamma"):
        assert list(table[k]) == list(ref[k])
        np.testing.assert_array_equal(np.ma.getmaskarray(table[k]), np.ma.getmaskarray(ref[k]))
    for k in _score_columns(3):
        np.testing.assert_array_equal(table[k], ref[k], err_msg=k)
    assert table["rank_test_score"].dtype == np.int32
    assert list(table["status"]) == ["optimal"] * 6
    for k in ("mean_fit_time", "std_fit_time", "mean_score_time", "std_score_time"):
        assert table[k].shape == (6,) and np.all(np.isfinite(table[k])) and np.all(table[k] >= 0)
    assert np.all(table["mean_fit_time"] > 0) and np.all(table["mean_score_time"] > 0)
    # a task's time is shared by the C values of its path: over the rows and folds the
    # times add up to no more than the call took
    spent = 3 * (table["mean_fit_time"].sum() + table["mean_score_time"].sum())
    assert spent < table["_seconds"]
    assert not any(k.endswith("C_star") for k in table)
    # the scores themselves are not trivial: the rows differ, and two tie at the top
    means = table["mean_test_score"]
    assert means[0] == means[4] == means.max() and len(set(means)) >= 4


def test_the_best_row_is_the_top_score_at_the_smallest_C(binary_table):
    """Rows 0 (C=10) and 4 (C=1) tie at the top: the best row is the smaller C (GridSearchCV
    would take the first); C=None (a C-tuning row) comes after every fixed C, and among
    equal C the first row; NaN rows never win; every row NaN is an SVMError naming the first
    row's status."""
    assert smcv.best_index(binary_table) == 4
    t = {"mean_test_score": np.array([0.5, 0.9, np.nan, 0.9, 0.9, 0.2]),
         "params": [{"C": 1.0}, {"C": None}, {"C": 0.01}, {"C": 2.0, "g": 1},
                    {"C": 2.0, "g": 2}, {"C": 0.5}],
         "status": np.array(["optimal"] * 6, dtype=object)}
    assert smcv.best_index(t) == 3               # 2.0 before None; row 3 before row 4
    t["params"][3] = {"C": 3.0}
    assert smcv.best_index(t) == 4
    t["mean_test_score"] = np.array([0.5, 0.9, np.nan, 0.1, 0.1, 0.2])
    assert smcv.best_index(t) == 1               # None alone at the top
    t["mean_test_score"] = np.array([0.5, 0.5, np.nan, 0.5, 0.5, 0.5])
    assert smcv.best_index(t) == 5               # C=0.5 the smallest of those at the top
    no_C = {"mean_test_score": np.array([0.7, 0.8, 0.8]), "params": [{}, {}, {}],
            "status": np.array(["optimal"] * 3, dtype=object)}
    assert smcv.best_index(no_C) == 1
    dead = {"mean_test_score": np.array([np.nan, np.nan]), "params": [{"C": 1.0}, {"C": 2.0}],
            "status": np.array(["unbounded (fold 1)", "infeasible (fold 2)"], dtype=object)}
    with pytest.raises(SVMError, match=r"every grid point failed; the first: unbounded \(fold 1\)"):
        smcv.best_index(dead)


def test_the_refit_is_called_once_with_the_labels_and_the_best_rows_params():
    """refit(X, labels, params): X as given, the labels themselves (strings here), a copy of
    the best row's params; what it returns comes back as ``result``, made in this process."""
    X, y = _binary()
    calls = []

    def refit(Xa, labels, params):
        calls.append((np.array(Xa), np.array(labels), params))
        params["touched"] = True      # a copy: the table's params stay as they were
        return SVC(kernel="rbf", tol=1e-10, C=params["C"], gamma=params["gamma"]).fit(Xa, labels)

    t0 = time.perf_counter()
    table, info = smcv.cross_validate(X, y, "soft_l1_dual", require("highs"), Cs=CS, cv=3,
                                      kernel="rbf", gamma=GAMMAS, refit=refit)
    seconds = time.perf_counter() - t0
    assert len(calls) == 1
    Xa, labels, params = calls[0]
    np.testing.assert_array_equal(Xa, X)
    np.testing.assert_array_equal(labels, y)
    assert params == {"C": 1.0, "gamma": 0.3, "touched": True}
    assert 0 <= info["time"] < seconds
    assert table["params"][4] == {"C": 1.0, "gamma": 0.3}
    assert info["index"] == 4 and info["params"] == {"C": 1.0, "gamma": 0.3}
    assert info["source"] == "main" and info["speculated"] == []
    assert isinstance(info["time"], float)
    ref = SVC(kernel="rbf", tol=1e-10, C=1.0, gamma=0.3).fit(X, y)
    np.testing.assert_array_equal(info["result"].predict(X), ref.predict(X))
    assert set(info) == {"index", "params", "result", "time", "source", "speculated"}


def _four_classes():
    X, y = make_blobs(48, centers=4, n_features=2, cluster_std=2.0, random_state=3)
    return X, np.array([-5, 0, 7, 40])[y]


@pytest.mark.parametrize("multi_class, wrapper", [("ovr", OneVsRestClassifier),
                                                  ("ovo", OneVsOneClassifier)])
def test_multiclass_fold_scores_equal_scikit_learns_over_svc(multi_class, wrapper):
    """Four classes (labels -5, 0, 7, 40): each row's fold scores equal cross_val_score of
    OneVsRest / OneVsOne over SVC at that C; the binary problems are each class against the
    rest, or each pair (j against i, i < j), combined as scikit-learn does."""
    X, y = _four_classes()
    Cs = [0.05, 1.0]
    table = smcv.cross_validate(X, y, "soft_l1_dual", require("highs"), Cs=Cs, cv=3,
                                multi_class=multi_class, kernel="rbf", gamma=0.5)
    got = np.column_stack([table[f"split{k}_test_score"] for k in range(3)])
    expect = np.array([cross_val_score(wrapper(SVC(kernel="rbf", gamma=0.5, C=C, tol=1e-10)),
                                       X, y, cv=StratifiedKFold(3)) for C in Cs])
    np.testing.assert_array_equal(got, expect)
    assert not np.array_equal(expect[0], expect[1])
    assert list(table["status"]) == ["optimal"] * 2


def test_binary_problems_and_their_points():
    assert smcv.binary_problems(2, "ovr") == smcv.binary_problems(2, "ovo") == [(1, (0,))]
    assert smcv.binary_problems(3) == [(0, (1, 2)), (1, (0, 2)), (2, (0, 1))]
    assert smcv.binary_problems(4, "ovo") == [(1, (0,)), (2, (0,)), (3, (0,)), (2, (1,)),
                                              (3, (1,)), (3, (2,))]
    with pytest.raises(ParameterError, match="'ovr' or 'ovo'"):
        smcv.binary_problems(3, "ova")
    y_index = np.array([0, 1, 2, 1, 0, 2, 2])
    idx, t = smcv.problem_points(y_index, np.array([6, 0, 1, 3, 4]), (1, (0,)))
    np.testing.assert_array_equal(idx, [0, 1, 3, 4])
    np.testing.assert_array_equal(t, [-1, 1, 1, -1])
    idx, t = smcv.problem_points(y_index, np.arange(7), (2, (0, 1)))
    np.testing.assert_array_equal(idx, np.arange(7))
    np.testing.assert_array_equal(t, [-1, -1, 1, -1, -1, 1, 1])


def test_combine_is_scikit_learns_one_vs_one_rule_and_the_columns_of_one_vs_rest():
    """ovo: votes (a pair votes for its positive class where its value is >= 0) plus the
    summed confidences squashed into (-1/3, 1/3), as sklearn's _ovr_decision_function, ties
    of votes included; ovr: the values as columns; binary: the values."""
    rng = np.random.default_rng(0)
    for n_classes in (3, 4):
        pairs = smcv.binary_problems(n_classes, "ovo")
        f = rng.normal(size=(200, len(pairs)))
        f[:5] = 0.0                                  # exactly 0: a vote for the positive class
        ours = smcv.combine(list(f.T), n_classes, "ovo")
        ref = _ovr_decision_function((f >= 0).astype(int), f, n_classes)
        np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(smcv.predicted_index(ours), np.argmax(ref, axis=1))
        votes = np.round(ref)
        assert np.any(votes.max(axis=1)[:, None] == votes, axis=1).all()
        assert (np.sum(votes == votes.max(axis=1)[:, None], axis=1) > 1).any()  # vote ties
    np.testing.assert_array_equal(smcv.combine([np.zeros(3)] * 3, 3, "ovo")[0], [0, 1, 2])
    cols = [np.array([0.1, -2.0]), np.array([0.3, -1.0]), np.array([-0.5, -3.0])]
    np.testing.assert_array_equal(smcv.combine(cols, 3, "ovr"), np.column_stack(cols))
    np.testing.assert_array_equal(smcv.combine(cols, 3), np.column_stack(cols))  # the default
    np.testing.assert_array_equal(smcv.predicted_index(smcv.combine(cols, 3, "ovr")), [1, 1])
    v = np.array([-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(smcv.combine([v], 2, "ovo"), v)
    np.testing.assert_array_equal(smcv.predicted_index(v), [0, 1, 1])


def test_a_problem_not_trained_is_no_classifier_as_svc_fitted_without_its_class():
    """A fold without training points of class 2 (of 0, 1, 2): its problems with class 2
    are not trained (cv.NOT_TRAINED, combine's ``trained``). ovo: the pair (0, 1) alone
    votes -- the decision function is sklearn's rule on that pair alone, as SVC fitted on
    classes 0 and 1 has it, class 2 never predicted; ovr: class 2's column is -inf, never
    the argmax. Without ``trained`` (the estimator's decision function) a NaN value is read
    as it is: NaN out, not hidden."""
    rng = np.random.default_rng(4)
    f01 = rng.normal(size=50)
    f01[:3] = 0.0
    nan = np.full(50, np.nan)
    ours = smcv.combine([f01, nan, nan], 3, "ovo", [True, False, False])   # ((0,1), (0,2), (1,2))
    ref = _ovr_decision_function((f01[:, None] >= 0).astype(int), f01[:, None], 2)
    np.testing.assert_allclose(ours[:, :2], ref, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(ours[:, 2], 0.0)
    np.testing.assert_array_equal(smcv.predicted_index(ours, "ovo"), np.where(f01 >= 0, 1, 0))
    cols = [rng.normal(size=50), rng.normal(size=50), nan]
    D = smcv.combine(cols, 3, "ovr", [True, True, False])
    assert np.isneginf(D[:, 2]).all()
    np.testing.assert_array_equal(smcv.predicted_index(D), np.where(cols[1] > cols[0], 1, 0))
    assert np.isnan(smcv.combine(cols, 3, "ovr")[:, 2]).all()
    assert np.isnan(smcv.combine([f01, nan, nan], 3, "ovo")).any(axis=1).all()


def test_the_values_of_Cs_and_the_grid_are_checked_and_kept_in_order():
    assert smcv.DEFAULT_CS == tuple(np.logspace(-4, 4, 10))
    assert smcv._check_Cs(None, "soft_l1_dual") == smcv.DEFAULT_CS
    assert smcv._check_Cs(None, "c_tuning_standard") == ()
    assert smcv._check_Cs(None, "hard_dual") == ()
    assert smcv._check_Cs(3, "soft_l1_dual") == (1e-4, 1.0, 1e4)
    assert smcv._check_Cs(np.int64(1), "soft_l1_dual") == (1e-4,)
    assert smcv._check_Cs([3, 0.5, 2.0], "soft_l2_dual") == (3.0, 0.5, 2.0)
    assert smcv._check_Cs(np.array([1e-3]), "soft_l1_dual") == (1e-3,)
    for bad in (0, -2, True, [], [1.0, 0.0], [1.0, np.inf], [np.nan], ["a"], 1.5, "ab"):
        with pytest.raises(ParameterError, match="Cs must"):
            smcv._check_Cs(bad, "soft_l1_dual")
    with pytest.raises(ParameterError, match="has no C"):
        smcv._check_Cs([1.0], "hard_dual")
    grid, fixed, solve = smcv._grid({"gamma": [0.1, 1.0], "kernel": "rbf", "degree": None,
                                     "g_bounds": (0, 1), "kernels": [["linear"], ["rbf"]],
                                     "tol": 1e-7, "batch": 5})
    assert grid == {"gamma": [0.1, 1.0], "kernels": [["linear"], ["rbf"]]}
    assert fixed == {"kernel": "rbf", "g_bounds": (0, 1)}
    assert solve == {"tol": 1e-7, "batch": 5}
    grid, fixed, _ = smcv._grid({"kernels": ["linear", "rbf"]})
    assert grid == {} and fixed == {"kernels": ["linear", "rbf"]}
    assert smcv._is_grid("kernels", [["rbf"]]) and not smcv._is_grid("kernels", [])
    assert not smcv._is_grid("kernels", [["rbf"], "rbf"]) and smcv._is_grid("gamma", [])
    with pytest.raises(ParameterError, match="an empty grid"):
        smcv._grid({"gamma": []})
    with pytest.raises(ParameterError, match="Cs="):
        smcv._grid({"C": [1.0]})
    with pytest.raises(ParameterError, match="takes no parameter"):
        smcv._grid({"gama": 1.0})


def test_labels_and_folds():
    X = np.arange(24.0).reshape(12, 2)
    y = np.array(["b", "a", "c", "a", "b", "c"] * 2)
    A, yy, classes, y_index = smcv._labelled(X, y)
    np.testing.assert_array_equal(classes, ["a", "b", "c"])
    np.testing.assert_array_equal(classes[y_index], y)
    np.testing.assert_array_equal(A, X)
    with pytest.raises(DataError, match="1-d array of 12 labels"):
        smcv._labelled(X, y[:-1])
    with pytest.raises(DataError, match="1-d array"):
        smcv._labelled(X, y.reshape(12, 1))     # a label per row, but a column
    with pytest.raises(DataError, match="1 class"):
        smcv._labelled(X, np.zeros(12))
    folds = smcv._folds(2, X, y)
    ref = list(StratifiedKFold(2).split(X, y))
    assert len(folds) == 2
    for (tr, te), (rtr, rte) in zip(folds, ref):
        np.testing.assert_array_equal(tr, rtr)
        np.testing.assert_array_equal(te, rte)
    given = [(np.arange(6), np.arange(6, 12))]
    assert smcv._folds(given, X, y)[0][1].tolist() == list(range(6, 12))
    with pytest.raises(ParameterError, match="cannot split"):
        smcv._folds(5, X, y)


def _job_of(X, y, *, Cs, grid, formulation="soft_l1_dual", multi_class="ovr", folds=3):
    """The Job cross_validate builds, by its own steps."""
    f = lookup(formulation)
    g, fixed, solve_kw = smcv._grid(dict(grid))
    Cs = smcv._check_Cs(Cs, formulation)
    A, yy, classes, y_index = smcv._labelled(X, y)
    return smcv._job(f, A, y_index, classes, folds=smcv._folds(folds, A, yy),
                     multi_class=multi_class, grid=g, fixed=fixed, Cs=Cs,
                     solver=require("highs"), solve_kw=solve_kw, weight=None), classes


def test_the_table_of_failed_and_unfinished_tasks(binary_table):
    """A task that failed (a dead worker: _failed) makes its rows' fold scores NaN and their
    status the first failure, with its fold; a task not finished yet leaves its fold out of
    its rows' mean, and their status "pending"; a failed row ranks after every scored one.
    The complete table equals cross_validate's."""
    X, y = _binary()
    job, classes = _job_of(X, y, Cs=CS, grid={"kernel": "rbf", "gamma": GAMMAS})
    assert job.settings == [{"gamma": 0.3}, {"gamma": 2.0}] and job.fixed == {"kernel": "rbf"}
    keys = [(fo, s, 0) for fo in range(3) for s in range(2)]
    results = {key: smcv._task(job, key) for key in keys}
    points = list(job.Cs)
    full = smcv._table(job, 2, "ovr", results, points, True)
    for k in _score_columns(3) + ["params", "status", "param_C", "param_gamma"]:
        np.testing.assert_array_equal(np.asarray(full[k]), np.asarray(binary_table[k]),
                                      err_msg=k)
    # setting 1 (gamma=2: rows 1, 3, 5): fold 2's task failed, fold 3's too
    broken = dict(results)
    broken[(1, 1, 0)] = smcv._failed(job, (1, 1, 0), RuntimeError("worker lost"))
    broken[(2, 1, 0)] = smcv._failed(job, (2, 1, 0), RuntimeError("again"))
    t = smcv._table(job, 2, "ovr", broken, points, True)
    assert list(t["status"]) == ["optimal", "RuntimeError: worker lost (fold 2)"] * 3
    for r in (1, 3, 5):
        assert t["split0_test_score"][r] == full["split0_test_score"][r]
        assert np.isnan(t["split1_test_score"][r]) and np.isnan(t["split2_test_score"][r])
        assert np.isnan(t["mean_test_score"][r]) and np.isnan(t["std_test_score"][r])
    for k in _score_columns(3)[:-1]:
        np.testing.assert_array_equal(t[k][::2], full[k][::2])
    assert sorted(t["rank_test_score"][1::2]) == [4, 4, 4]
    np.testing.assert_array_equal(t["rank_test_score"][::2],
                                  [1, 3, 1])   # rows 0, 2, 4 by their own means
    assert smcv.best_index(t) == 4
    assert np.all(np.isnan(t["mean_fit_time"][1::2]))
    # fold 2 of setting 0 (rows 0, 2, 4) not finished: its mean is over folds 1 and 3
    so_far = {k: v for k, v in results.items() if k != (1, 0, 0)}
    t = smcv._table(job, 2, "ovr", so_far, points, True)
    assert list(t["status"]) == ["pending", "optimal"] * 3
    for r in (0, 2, 4):
        assert np.isnan(t["split1_test_score"][r])
        assert t["split2_test_score"][r] == full["split2_test_score"][r]
        assert t["mean_test_score"][r] == pytest.approx(
            (full["split0_test_score"][r] + full["split2_test_score"][r]) / 2, abs=1e-15)
    np.testing.assert_array_equal(t["mean_test_score"][1::2], full["mean_test_score"][1::2])
    assert t["mean_fit_time"][0] == pytest.approx(
        (results[(0, 0, 0)]["fit_time"][0] + results[(2, 0, 0)]["fit_time"][0]) / 3)
    # a failed fold and a pending one: the failure is the status
    both = dict(so_far)
    both[(2, 0, 0)] = smcv._failed(job, (2, 0, 0), RuntimeError("x"))
    assert list(smcv._table(job, 2, "ovr", both, points, True)["status"]) == [
        "RuntimeError: x (fold 3)", "optimal"] * 3
    empty = smcv._table(job, 2, "ovr", {}, points, True)
    assert list(empty["status"]) == ["pending"] * 6
    assert np.isnan(empty["mean_test_score"]).all()
    assert list(empty["rank_test_score"]) == [1] * 6
    assert smcv._best_so_far(empty) is None


def test_the_first_failure_of_a_row_names_its_fold_and_binary_problem():
    X, y = _four_classes()
    job, _ = _job_of(X, y, Cs=[1.0], grid={"kernel": "rbf", "gamma": 0.5}, multi_class="ovo")
    assert len(job.problems) == 6 and job.settings == [{}]
    results = {(fo, 0, p): smcv._task(job, (fo, 0, p)) for fo in range(3) for p in range(6)}
    results[(1, 0, 4)] = smcv._failed(job, (1, 0, 4), RuntimeError("gone"))
    results[(2, 0, 0)] = smcv._failed(job, (2, 0, 0), RuntimeError("later"))
    t = smcv._table(job, 4, "ovo", results, [1.0], True)
    assert list(t["status"]) == ["RuntimeError: gone (fold 2, binary problem 5)"]
    assert not np.isnan(t["split0_test_score"][0]) and np.isnan(t["split1_test_score"][0])


@pytest.mark.parametrize("small", [2, 1])
def test_a_class_with_fewer_points_than_folds_scores_as_grid_search_over_svc(small):
    """A class of one point (the last, or the middle one) and 3 folds: the fold that tests
    it trains without it. That fold's problems with the class are not trained (no failure),
    its model votes with the others -- each fold's score is GridSearchCV's over SVC
    (one-vs-one) and over OneVsRestClassifier(SVC) (one-vs-rest), which train on the classes
    present, and so is the C chosen."""
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1, 2], [15 if c != small else 1 for c in range(3)])
    X = rng.normal(size=(31, 3)) + 2.0 * (y[:, None] == np.arange(3))
    cv = StratifiedKFold(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # (sklearn: fewer members than folds)
        svc = SVC(kernel="rbf", gamma=0.5, tol=1e-10)
        refs = {"ovo": GridSearchCV(svc, {"C": [0.1, 1.0, 10.0]}, cv=cv).fit(X, y),
                "ovr": GridSearchCV(OneVsRestClassifier(svc),
                                    {"estimator__C": [0.1, 1.0, 10.0]}, cv=cv).fit(X, y)}
        for multi_class, ref in refs.items():
            est = SVMClassifierCV(Cs=[0.1, 1.0, 10.0], cv=cv, kernel="rbf", gamma=0.5,
                                  multi_class=multi_class).fit(X, y)
            assert list(est.cv_results_["status"]) == ["optimal"] * 3
            for k in range(3):
                np.testing.assert_array_equal(est.cv_results_[f"split{k}_test_score"],
                                              ref.cv_results_[f"split{k}_test_score"])
            assert est.best_params_["C"] == list(ref.best_params_.values())[0]


@pytest.mark.parametrize("small", [2, 1])
def test_a_fold_without_a_class_solves_its_other_pairs_together(small, monkeypatch):
    """One-vs-one's pairs task on the fold whose training points lack a class (of one point,
    last or in the middle): its one pair of the classes present goes to fit_pairs with the
    others' labels 0, 1 (the classes present, in order), the two pairs with the absent class
    are not trained -- no pair walks its own path of fits (fit_path never called) -- and the
    fold scores are those of one fit of SVC on its training points."""
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1, 2], [15 if c != small else 1 for c in range(3)])
    X = rng.normal(size=(31, 3)) + 2.0 * (y[:, None] == np.arange(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # (sklearn: fewer members than folds)
        cv = list(StratifiedKFold(3).split(X, y))
    calls, walked = [], []
    fit_pairs = smcv.fit_pairs

    def spy(X_, y_index, points, *a, **kw):
        calls.append((sorted(set(y_index.tolist())), len(points)))
        return fit_pairs(X_, y_index, points, *a, **kw)

    monkeypatch.setattr(smcv, "fit_pairs", spy)
    monkeypatch.setattr(smcv, "fit_path", lambda *a, **kw: walked.append(1))
    t = smcv.cross_validate(X, y, "soft_l1_dual", require("libsvm"), Cs=[1.0], cv=cv,
                            multi_class="ovo", kernel="rbf", gamma=0.5)
    assert sorted(calls) == [([0, 1], 1), ([0, 1, 2], 3), ([0, 1, 2], 3)] and not walked
    for k, (tr, te) in enumerate(cv):
        ref = SVC(kernel="rbf", gamma=0.5, tol=1e-10).fit(X[tr], y[tr]).score(X[te], y[te])
        assert t[f"split{k}_test_score"][0] == ref


def test_a_fold_without_a_class_tunes_c_on_the_problems_it_trains_and_one_class_fails():
    """C tuning on three classes, one of them a single point: the fold whose training
    points lack it reports as C* the C of its one trained pair (classes 0 and 1, fitted on
    their own: the mean over the problems trained, not NaN for the two it does not train).
    A fold whose training points hold one class fails (DataError), as SVC's fit refuses
    one class, and the other fold is scored."""
    import svm_models as sm

    rng = np.random.default_rng(2)
    y = np.repeat([0, 1, 2], [15, 15, 1])
    X = rng.normal(size=(31, 3)) + 1.0 * (y[:, None] == np.arange(3))   # (0, 1 overlap)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # (sklearn: fewer members than folds)
        cv = list(StratifiedKFold(3).split(X, y))
    t = smcv.cross_validate(X, y, "c_tuning_standard", cv=cv, multi_class="ovo",
                            kernel="rbf", gamma=0.5)
    assert list(t["status"]) == ["optimal"]
    k = next(k for k, (tr, _) in enumerate(cv) if not (y[tr] == 2).any())
    tr = cv[k][0][y[cv[k][0]] != 2]
    ref = sm.fit(X[tr], np.where(y[tr] == 1, 1, -1), "c_tuning_standard", kernel="rbf",
                 gamma=0.5)
    assert np.isfinite(ref.C) and t[f"split{k}_C_star"][0] == pytest.approx(ref.C, rel=1e-9)
    y2 = np.repeat([0, 1, 2], [10, 1, 1])
    idx = np.arange(12)
    folds = [(idx[5:], idx[:5]), (idx[:10], idx[10:])]   # (the second: class 0 alone)
    with pytest.raises(ValueError):
        SVC().fit(X[:10], y2[:10])
    t2 = smcv.cross_validate(X[:12], y2, "soft_l1_dual", Cs=[1.0], cv=folds, multi_class="ovo",
                             kernel="rbf", gamma=0.5)
    assert t2["status"][0].startswith("DataError: the fold's training points hold one class (0)")
    assert t2["status"][0].endswith("(fold 2, binary problem 1)")
    assert np.isnan(t2["split1_test_score"][0])
    expect = SVC(kernel="rbf", gamma=0.5, tol=1e-10).fit(X[5:12], y2[5:]).score(X[:5], y2[:5])
    assert t2["split0_test_score"][0] == expect


def test_a_task_that_raises_fails_every_C_of_its_path_and_keeps_the_other_folds():
    """Fold 1 trains class 40 with weight 0 only: its pairs with class 40 have no point of
    positive weight in that class, and the fit raises (DataError, as SVC's binary fit) --
    recorded for every C of the path, in the first such pair (the fourth: 40 against -5),
    while fold 2 is scored as SVC scores it (the test points counted with their weights).
    (A class with no training point at all is no failure: the test above.)"""
    X, y = _four_classes()
    idx = np.arange(y.size)
    folds = [(idx[::2], idx[1::2]), (idx[1::2], idx[::2])]
    w = np.ones(y.size)
    w[idx[::2][y[::2] == 40]] = 0.0
    Cs = [0.1, 1.0]
    t0 = time.perf_counter()
    t = smcv.cross_validate(X, y, "soft_l1_dual", require("highs"), Cs=Cs, cv=folds,
                            multi_class="ovo", kernel="rbf", gamma=0.5, sample_weight=w)
    seconds = time.perf_counter() - t0
    for s in t["status"]:
        assert s.startswith("DataError: ") and s.endswith("(fold 1, binary problem 3)")
    assert np.isnan(t["split0_test_score"]).all() and np.isnan(t["mean_test_score"]).all()
    tr, te = folds[1]
    expect = [SVC(kernel="rbf", gamma=0.5, C=C, tol=1e-10).fit(X[tr], y[tr])
              .score(X[te], y[te], sample_weight=w[te]) for C in Cs]
    np.testing.assert_array_equal(t["split1_test_score"], expect)
    assert expect[0] != expect[1]
    assert np.all(np.isfinite(t["mean_fit_time"])) and np.all(t["mean_fit_time"] > 0)
    assert 2 * (t["mean_fit_time"].sum() + t["mean_score_time"].sum()) < seconds
    with pytest.raises(SVMError, match="every grid point failed; the first: DataError"):
        smcv.best_index(t)


def test_a_precomputed_kernel_gives_the_rbf_kernels_table(binary_table):
    """kernel="precomputed": each task takes the Gram matrix's training block and its
    test-by-training block -- the same scores as the rbf kernel itself, and as SVC's."""
    from sklearn.metrics.pairwise import rbf_kernel

    X, y = _binary()
    K = rbf_kernel(X, X, gamma=0.3)
    t = smcv.cross_validate(K, y, "soft_l1_dual", require("highs"), Cs=CS, cv=3,
                            kernel="precomputed")
    ref = GridSearchCV(SVC(kernel="precomputed", tol=1e-10), {"C": CS},
                       cv=StratifiedKFold(3)).fit(K, y).cv_results_
    for k in _score_columns(3):
        np.testing.assert_array_equal(t[k], ref[k], err_msg=k)
        if k != "rank_test_score":
            np.testing.assert_array_equal(t[k], binary_table[k][::2], err_msg=k)


def test_the_backend_and_its_options_reach_every_solve_of_the_path():
    """PIQP with its own max_iter=1 stops at the iteration limit on every fold and every C:
    recorded as each row's status (not raised), the scores NaN. (The "auto" backend, libsvm
    here, would ignore the option and answer.)"""
    X, y = _binary()
    t = smcv.cross_validate(X, y, "soft_l1_dual", require("piqp"), Cs=[1.0, 3.0], cv=3,
                            kernel="rbf", gamma=0.5, options={"max_iter": 1})
    assert list(t["status"]) == ["iteration_limit (fold 1)"] * 2
    assert np.isnan(t["mean_test_score"]).all()
    ok = smcv.cross_validate(X, y, "soft_l1_dual", "auto", Cs=[1.0, 3.0], cv=3,
                             kernel="rbf", gamma=0.5, options={"max_iter": 1})
    assert list(ok["status"]) == ["optimal"] * 2


def test_c_tuning_records_a_failure_for_the_path_and_the_tuned_fit():
    """C tuning with a C grid beside it: on a training fold of one class both the C path
    (soft_l2_dual) and the tuning solve raise (each given its own hyperparameters: form is
    the tuning's, quad_form the path's) -- each of the three rows records it for that
    fold; the other fold is scored, and C* is given on the tuned row only."""
    X, y = _binary()
    idx = np.arange(y.size)
    folds = [(idx[y == "pos"], idx[y == "neg"]), (idx[::2], idx[1::2])]
    t = smcv.cross_validate(X, y, "c_tuning_standard", require("clarabel"), Cs=[1.0, 3.0],
                            cv=folds, kernel="rbf", gamma=0.5, form="auto", quad_form="auto")
    assert t["params"] == [{"C": 1.0}, {"C": 3.0}, {"C": None}]
    for s in t["status"]:
        assert s.startswith("DataError: ") and s.endswith("(fold 1)")
    assert np.isnan(t["split0_test_score"]).all() and np.isfinite(t["split1_test_score"]).all()
    assert np.isnan(t["split0_C_star"]).all()
    assert np.isnan(t["split1_C_star"][:2]).all() and t["split1_C_star"][2] > 0


def test_a_failed_row_ranks_below_a_row_that_scores_zero():
    """One fold whose test points are those the rbf hard margin fitted on its training points
    gets wrong: the rbf row scores 0, the linear row fails (not separable) -- and still ranks
    below it (2 against 1), so the best row is the rbf one."""
    import svm_models as sm

    X, y = _binary()
    tr, rest = np.arange(24), np.arange(24, 36)
    sol = sm.fit(X[tr], y[tr], "hard_dual", require("highs"), kernel="rbf")
    wrong = rest[sol.predict(X[rest]) != y[rest]]
    assert wrong.size >= 2
    t = smcv.cross_validate(X, y, "hard_dual", "highs", cv=[(tr, wrong)],
                            kernel=["linear", "rbf"])
    assert t["params"] == [{"kernel": "linear"}, {"kernel": "rbf"}]
    assert t["status"][0].startswith("NotSeparableError") and t["status"][1] == "optimal"
    assert np.isnan(t["mean_test_score"][0]) and t["mean_test_score"][1] == 0.0
    assert list(t["rank_test_score"]) == [2, 1]
    assert smcv.best_index(t) == 1


def test_sample_weight_is_refused_by_name_where_there_is_no_per_point_C():
    """The refusal names the formulations that do take sample_weight (and not the one
    given); the weights of one that does are its fold weights, checked."""
    with pytest.raises(ParameterError, match="hard_dual has no per-point C") as err:
        smcv._fold_weights(lookup("hard_dual"), np.ones(3), 3)
    takes = str(err.value).split("; ", 1)[1]
    assert "soft_l1_dual" in takes and "hard_dual" not in takes
    np.testing.assert_array_equal(smcv._fold_weights(lookup("soft_l1_dual"), [1, 2, 0.5], 3),
                                  [1.0, 2.0, 0.5])
    assert smcv._fold_weights(lookup("hard_dual"), None, 3) is None


def test_the_defaults_are_the_1_norm_soft_margin_on_five_stratified_folds():
    """cross_validate(X, y, solver=..., Cs=[1]): soft_l1_dual, linear kernel, cv=5 (as
    cross_val_score over a linear SVC); a one-value grid is a grid of one setting."""
    X, y = _binary()
    t = smcv.cross_validate(X, y, solver=require("highs"), Cs=[1.0])
    expect = cross_val_score(SVC(kernel="linear", C=1.0, tol=1e-10), X, y, cv=StratifiedKFold(5))
    np.testing.assert_array_equal([t[f"split{k}_test_score"][0] for k in range(5)], expect)
    assert "split5_test_score" not in t
    auto = smcv.cross_validate(X, y, Cs=[1.0])      # solver="auto" by default
    assert list(auto["status"]) == ["optimal"]
    np.testing.assert_array_equal([auto[f"split{k}_test_score"][0] for k in range(5)], expect)
    grid, fixed, _ = smcv._grid({"gamma": [0.5]})
    assert grid == {"gamma": [0.5]} and fixed == {}


def test_tasks_of_a_setting_not_timed_yet_go_out_after_the_timed_ones():
    """_longest_first with the fit time of one (setting, problem) known: its tasks first, then
    the others (cost 0) in their order; every key once."""
    keys = [(f, s, 0) for f in range(3) for s in range(3)]
    cost: dict = {}
    order = []
    for key in smcv._longest_first(keys, cost):
        order.append(key)
        if len(order) == 3:
            cost[(1, 0)] = 0.5
    assert order[:3] == [(0, 0, 0), (0, 1, 0), (0, 2, 0)]
    assert order[3:] == [(1, 1, 0), (2, 1, 0), (1, 0, 0), (2, 0, 0), (1, 2, 0), (2, 2, 0)]


def test_a_client_needs_both_scatter_and_submit():
    pytest.importorskip("distributed")
    X, y = _binary()
    half = type("ScatterOnly", (), {"scatter": lambda self, *a, **k: None})()
    with pytest.raises(ParameterError, match="client must be a dask.distributed.Client; got "
                                             "ScatterOnly"):
        smcv.cross_validate(X, y, "soft_l1_dual", "highs", Cs=[1.0], cv=3, client=half)

"""Cross-validation over grids (svm_models.methods.cv, SVMClassifierCV): the serial table
against scikit-learn's GridSearchCV (over SVMClassifier and over SVC), processes and a Dask
LocalCluster against the serial run bit for bit (the table, and the refit: speculative in a
worker when the best row stays, made again in the main process when it changes), the data
scattered once per worker, failed grid points and a killed worker (process or Dask) recorded
without losing the rest, multiclass
one-vs-rest and one-vs-one against scikit-learn's OneVsRest/OneVsOne over SVC, C tuning's C*
against svm_models.fit, clone and bad input."""

from __future__ import annotations

import glob
import os
import signal
import threading
import time
from functools import partial

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, make_classification
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import svm_models as sm
from svm_models.errors import ParameterError, SVMError
from svm_models.estimator import SVMClassifier, SVMClassifierCV
from svm_models.methods import cv as smcv

from conftest import assert_same_table, blobs, require

#: process pools and Dask clusters, one at a time under pytest-xdist (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("processes")

CS = [0.1, 1.0, 10.0]
GAMMAS = [0.1, 1.0]


def scores(n_folds=5):
    """The score columns of a table of ``n_folds`` folds."""
    return [f"split{k}_test_score" for k in range(n_folds)] + [
        "mean_test_score", "std_test_score", "rank_test_score"]


SCORES = scores()


def _data(n=80):
    return make_classification(n, 4, n_informative=3, n_redundant=0, flip_y=0.1,
                               random_state=1)


@pytest.fixture(scope="module")
def serial():
    X, y = _data()
    return smcv.cross_validate(X, y, "soft_l1_dual", require("piqp"), Cs=CS, cv=5,
                               kernel="rbf", gamma=GAMMAS)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def test_serial_table_equals_grid_search_over_svmclassifier_and_svc(serial):
    X, y = _data()
    folds = StratifiedKFold(5)
    ours = GridSearchCV(SVMClassifier(solver="piqp", kernel="rbf"),
                        {"C": CS, "gamma": GAMMAS}, cv=folds).fit(X, y).cv_results_
    svc = GridSearchCV(SVC(kernel="rbf", tol=1e-10), {"C": CS, "gamma": GAMMAS},
                       cv=folds).fit(X, y).cv_results_
    for ref in (ours, svc):
        assert serial["params"] == ref["params"]
        for k in SCORES:
            np.testing.assert_array_equal(serial[k], ref[k], err_msg=k)
        np.testing.assert_array_equal(serial["param_gamma"], ref["param_gamma"])
    assert list(serial["status"]) == ["optimal"] * 6
    assert np.all(serial["mean_fit_time"] > 0) and np.all(serial["mean_score_time"] > 0)
    # the best row: the top mean score, the tie between C = 1 and C = 10 goes to the smaller C
    assert sorted(serial["mean_test_score"])[-2:] == [0.9, 0.9]
    best = SVMClassifierCV(solver="piqp", Cs=CS, kernel="rbf", gamma=GAMMAS).fit(X, y)
    assert best.best_params_ == {"C": 1.0, "gamma": 0.1} == svc["params"][
        int(np.argmin(svc["rank_test_score"]))]
    assert best.best_score_ == 0.9 and best.C_ == 1.0 and best.n_splits_ == 5
    ref = SVC(kernel="rbf", gamma=0.1, C=1.0, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(best.decision_function(X), ref.decision_function(X), atol=1e-5)
    assert best.score(X, y) == ref.score(X, y)
    assert_same_table(best.cv_results_, serial)


def assert_same_refit(a, b):
    """Two SVMClassifiers (refits) equal bit for bit: multipliers, b, decision values."""
    X, _ = _data()
    assert a.C_ == b.C_
    np.testing.assert_array_equal(a.solution_.alpha, b.solution_.alpha)
    assert a.solution_.b == b.solution_.b
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_joblib_processes_equal_serial(serial):
    X, y = _data()
    par = smcv.cross_validate(X, y, "soft_l1_dual", "piqp", Cs=CS, cv=5, n_jobs=2,
                              kernel="rbf", gamma=GAMMAS)
    assert_same_table(par, serial)
    # the estimator: the same table, best row and refit (wherever the refit was made)
    one = SVMClassifierCV(solver="piqp", Cs=CS, kernel="rbf", gamma=GAMMAS).fit(X, y)
    two = SVMClassifierCV(solver="piqp", Cs=CS, kernel="rbf", gamma=GAMMAS, n_jobs=2).fit(X, y)
    assert_same_table(two.cv_results_, serial)
    assert one.best_params_ == two.best_params_ == {"C": 1.0, "gamma": 0.1}
    assert one.refit_source_ == "main" and two.refit_source_ in ("speculative", "main")
    assert_same_refit(one.best_estimator_, two.best_estimator_)


@pytest.fixture
def warm_pool():
    """Both process workers started and svm_models imported in each (a worker's imports
    would otherwise delay its first task by seconds, and change which task ends last)."""
    X, y = _data(60)
    smcv.cross_validate(X, y, "soft_l1_dual", "piqp", Cs=[1.0], cv=3, n_jobs=2, kernel="rbf",
                        gamma=[0.5, 1.0])


def _slow_and_fast_fold():
    """Two folds: a slow one (500 training points) and a fast one (40), one setting. Over 2
    processes the fast fold's task ends first, while the slow one runs: an idle worker then
    refits the best row of the fast fold (no row is complete yet). Cs=[0.1, 1, 10]: the fast
    fold prefers C=10 (0.9 vs 0.875), the two folds C=1 (0.9025 vs 0.9). Without C=10, C=1 is
    best either way."""
    X, y = make_classification(700, 4, n_informative=3, n_redundant=0, flip_y=0.15,
                               random_state=5)
    idx = np.arange(700)
    return X, y, [(idx[:500], idx[500:600]), (idx[640:], idx[600:640])]


def test_the_speculative_refit_is_used_when_the_best_row_stays(warm_pool):
    X, y, folds = _slow_and_fast_fold()
    kw = dict(solver="piqp", Cs=[0.1, 1.0], cv=folds, kernel="rbf", gamma=0.5)
    one = SVMClassifierCV(**kw).fit(X, y)
    two = SVMClassifierCV(**kw, n_jobs=2).fit(X, y)
    assert one.best_params_ == two.best_params_ == {"C": 1.0}
    assert (one.refit_source_, two.refit_source_) == ("main", "speculative")
    assert_same_table(one.cv_results_, two.cv_results_)
    assert_same_refit(one.best_estimator_, two.best_estimator_)


def test_a_wrong_speculative_refit_is_made_again_in_this_process(warm_pool):
    """The slow fold, ending last, moves the best row from C=10 (the fast fold's) to C=1:
    the speculative refit (C=10) is dropped and C=1 refitted here, as the serial run does."""
    from svm_models.estimator import _refit

    X, y, folds = _slow_and_fast_fold()
    kw = dict(Cs=[0.1, 1.0, 10.0], cv=folds, kernel="rbf", gamma=0.5)
    refit = partial(_refit, formulation="soft_l1_dual", solver="piqp", multi_class="ovr",
                    solver_options=None, given={"kernel": "rbf", "gamma": 0.5})
    one, info1 = smcv.cross_validate(X, y, "soft_l1_dual", "piqp", refit=refit, **kw)
    two, info2 = smcv.cross_validate(X, y, "soft_l1_dual", "piqp", refit=refit, n_jobs=2, **kw)
    assert_same_table(one, two)
    assert info1["index"] == info2["index"] == 1 and info2["params"] == {"C": 1.0}
    assert (info1["source"], info1["speculated"]) == ("main", [])
    assert (info2["source"], info2["speculated"]) == ("main", [2])  # C=10, dropped
    assert_same_refit(info1["result"][0], info2["result"][0])
    # the estimator, the same way
    est = SVMClassifierCV(solver="piqp", n_jobs=2, **kw).fit(X, y)
    assert est.best_params_ == {"C": 1.0} and est.refit_source_ == "main"
    assert_same_refit(est.best_estimator_, info1["result"][0])


def test_the_row_refitted_speculatively_is_the_best_complete_one(serial):
    """While the last tasks run, the refit goes to the best row among those whose folds have
    all finished (best_index, as the final choice); while none has, among all rows, by the
    folds finished; with no score at all, to none."""
    from svm_models.methods.cv import _best_so_far

    assert _best_so_far(serial) == smcv.best_index(serial) == 2  # C=1, gamma=0.1
    gamma = np.array([p["gamma"] for p in serial["params"]])
    means = serial["mean_test_score"]
    running = {**serial, "status": np.where(gamma == 0.1, "pending", serial["status"]),
               "mean_test_score": np.where(gamma == 0.1, 1.0, means)}  # flattering partial means
    others = np.flatnonzero(gamma != 0.1)
    assert _best_so_far(running) == others[np.argmax(means[others])] != 2
    none_complete = {**running, "status": np.full(6, "pending", dtype=object)}
    assert _best_so_far(none_complete) == 0  # rows 0, 2, 4 at 1.0: the smallest C
    nothing = {**none_complete, "mean_test_score": np.full(6, np.nan)}
    assert _best_so_far(nothing) is None


def _job_workers():
    """pids of this process's children that have the current job's file mapped (a loky
    worker running one of its tasks; an earlier job's file is deleted)."""
    out = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as fh:
                text = fh.read()  # "pid (name) state ppid ..."
            pid, ppid = int(text.split(" ", 1)[0]), int(text.rsplit(") ", 1)[1].split()[1])
            if ppid != os.getpid():
                continue
            with open(f"/proc/{pid}/maps") as fh:
                if any("svm_models_cv_" in line and "(deleted)" not in line for line in fh):
                    out.append(pid)
        except (OSError, ValueError, IndexError):
            continue
    return out


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="finds the workers in /proc")
def test_a_killed_process_worker_loses_only_the_tasks_in_flight(warm_pool):
    """SIGKILL a process worker while it runs a task of the job: the pool breaks, the tasks
    then in flight (at most one per worker, or one more handed out as it broke) are recorded
    as failed, and the rest run in a new pool, every other row intact."""
    X, y = _data(120)
    kw = dict(Cs=CS, cv=5, kernel="rbf", gamma=[0.05, 0.1, 0.5, 1.0])
    ref = smcv.cross_validate(X, y, "soft_l1_dual", "piqp", **kw)
    killed = threading.Event()

    def kill_when_busy():
        end = time.monotonic() + 60
        while time.monotonic() < end:
            for pid in _job_workers():
                os.kill(pid, signal.SIGKILL)
                killed.set()
                return
            time.sleep(0.005)

    killer = threading.Thread(target=kill_when_busy)
    killer.start()
    try:
        table = smcv.cross_validate(X, y, "soft_l1_dual", "piqp", n_jobs=2, **kw)
    finally:
        killer.join()
    assert killed.is_set()
    ok = table["status"] == "optimal"
    assert 1 <= (~ok).sum() < ok.size
    assert all(s.startswith("TerminatedWorkerError") for s in table["status"][~ok])
    splits = np.column_stack([table[k] for k in SCORES[:5]])
    ref_splits = np.column_stack([ref[k] for k in SCORES[:5]])
    lost = np.isnan(splits)  # the (row, fold) whose task died: a NaN, named in the status
    assert (lost.any(axis=1) == ~ok).all()
    settings = [p["gamma"] for p in table["params"]]
    lost_tasks = {(settings[r], fo) for r, fo in zip(*np.nonzero(lost))}
    assert 1 <= len(lost_tasks) <= 3  # of 20
    np.testing.assert_array_equal(splits[~lost], ref_splits[~lost])
    np.testing.assert_array_equal(table["mean_test_score"][ok], ref["mean_test_score"][ok])


def test_dask_equals_serial_and_ships_the_data_once_per_worker(serial, client, capsys):
    X, y = _data()
    before = client.run(smcv.job_loads)
    est = SVMClassifierCV(solver="piqp", Cs=CS, kernel="rbf", gamma=GAMMAS, client=client,
                          progress=True)
    est.fit(X, y)
    after = client.run(smcv.job_loads)
    assert_same_table(est.cv_results_, serial)
    bar = [line for line in capsys.readouterr().err.splitlines()  # a line per finished task
           if line.startswith("cross-validation")]
    assert len(bar) == 10 and bar[-1].startswith("cross-validation [####") and " 10/10 " in bar[-1]
    # 10 tasks ran, each reading the whole job: each worker received it once, not once per
    # task (a second copy tolerated: under load Dask's replication of the broadcast can race
    # a worker's own fetch of it -- seen once in a full run beside mutmut)
    loads = {w: after[w] - before[w] for w in after}
    assert all(1 <= n <= 2 for n in loads.values()) and sum(loads.values()) < 10, loads
    assert est.best_params_ == {"C": 1.0, "gamma": 0.1}
    assert clone(est).client is client  # shared, not copied


@pytest.mark.parametrize("where", ["serial", "dask"])
def test_failed_grid_points_are_recorded_and_the_rest_kept(where, request):
    X, y = _data(60)  # flip_y: not linearly separable, every fold
    run = {} if where == "serial" else {"client": request.getfixturevalue("client")}
    table = smcv.cross_validate(X, y, "hard_dual", "piqp", cv=3, kernel=["linear", "rbf"],
                                **run)
    good = smcv.cross_validate(X, y, "hard_dual", "piqp", cv=3, kernel="rbf")
    assert table["params"] == [{"kernel": "linear"}, {"kernel": "rbf"}]
    assert table["status"][0] == "unbounded (fold 1)"  # the hard-margin dual: no separation
    assert table["status"][1] == good["status"][0] == "optimal"
    for k in scores(3)[:-1]:
        assert np.isnan(table[k][0])
        assert table[k][1] == good[k][0]
    assert list(table["rank_test_score"]) == [2, 1]
    est = SVMClassifierCV(formulation="hard_dual", solver="piqp", cv=3,
                          kernel=["linear", "rbf"]).fit(X, y)
    assert est.best_params_ == {"kernel": "rbf"} and est.C_ is None
    with pytest.raises(SVMError, match="every grid point failed.*unbounded"):
        SVMClassifierCV(formulation="hard_dual", solver="piqp", cv=3).fit(X, y)


@pytest.fixture(scope="module")
def lone_client():
    """A cluster of one worker: the only copy of the job's data is on it."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _kill_a_busy_holder(client, pids: dict) -> str:
    """SIGKILL the first worker (by address) that holds the job's scattered data (the key
    ``Job-...``) and runs tasks of the job; its address."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        holders = {w for key, where in client.who_has().items()
                   if str(key).startswith("Job-") for w in where}
        busy = client.processing()
        for victim in sorted(holders & set(pids)):
            if busy.get(victim):
                os.kill(pids[victim], signal.SIGKILL)
                return victim
        time.sleep(0.01)
    raise AssertionError("no worker held the job's data while running its tasks")


KILLED_KW = dict(Cs=CS, cv=5, kernel="rbf", gamma=[0.05, 0.1, 0.5, 1.0])


@pytest.fixture(scope="module")
def killed_ref():
    """The serial table the killed-worker runs are held to (computed once)."""
    X, y = _data(120)
    return smcv.cross_validate(X, y, "soft_l1_dual", "piqp", **KILLED_KW)


#: (two workers with the scheduler's retries is left out: each half of it -- the retries, on
#: the only copy; the second copy, with no retries -- is a case here, 35-90 s each)
@pytest.mark.parametrize("cluster,allowed_failures",
                         [("client", 0), ("lone_client", 3), ("lone_client", 0)],
                         ids=["copies-lost", "only_copy-rescheduled", "only_copy-lost"])
def test_a_killed_worker_leaves_the_other_results_intact(cluster, allowed_failures, request,
                                                         monkeypatch, killed_ref):
    """SIGKILL a worker that holds the job's data while it runs tasks of the job, when the
    first result has come in (the moment is chosen by the test, not by the machine's speed):
    on two workers (the other has a copy), or on one (the only copy: the data is sent again
    once the nanny has restarted it). By default (3 allowed failures) the scheduler runs the
    victim's tasks again: the table is complete. With none allowed they end in KilledWorker:
    those rows are marked, and every other one is intact."""
    client = request.getfixturevalue(cluster)
    n_workers = 2 if cluster == "client" else 1
    X, y = _data(120)
    ref = killed_ref
    client.wait_for_workers(n_workers, timeout=60)
    pids = client.run(os.getpid)
    killed: list = []
    note = smcv._note

    def kill_at_the_first_result(job, key):  # (called as each result comes in)
        if not killed:
            killed.append(_kill_a_busy_holder(client, pids))
        return note(job, key)

    monkeypatch.setattr(smcv, "_note", kill_at_the_first_result)
    scheduler = client.cluster.scheduler
    default, scheduler.allowed_failures = scheduler.allowed_failures, allowed_failures
    try:
        table = smcv.cross_validate(X, y, "soft_l1_dual", "piqp", client=client, **KILLED_KW)
    finally:
        scheduler.allowed_failures = default
    assert len(killed) == 1
    ok = table["status"] == "optimal"
    if allowed_failures:
        assert ok.all()
    else:  # the victim's own tasks: KilledWorker, never a task cancelled for lost data
        assert all(s.startswith("KilledWorker") for s in table["status"][~ok])
    splits = np.column_stack([table[k] for k in SCORES[:5]])
    ref_splits = np.column_stack([ref[k] for k in SCORES[:5]])
    lost = np.isnan(splits)  # the (row, fold) whose task died: a NaN, named in the status
    assert (lost.any(axis=1) == ~ok).all()
    if not allowed_failures:  # a task is a (fold, gamma): its 3 rows of C; 1 to 3 of 20
        assert lost.sum() in (len(CS), 2 * len(CS), 3 * len(CS)), table["status"]
    np.testing.assert_array_equal(splits[~lost], ref_splits[~lost])
    np.testing.assert_array_equal(table["mean_test_score"][ok], ref["mean_test_score"][ok])
    assert np.isnan(table["mean_test_score"][~ok]).all()
    # the nanny restarts the killed worker; no copy of the data is left behind (released:
    # the scheduler forgets it once it has the client's message)
    client.wait_for_workers(n_workers, timeout=60)
    end = time.monotonic() + 30
    while [k for k in client.who_has() if str(k).startswith("Job-")]:
        assert time.monotonic() < end, client.who_has()
        time.sleep(0.05)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("multi_class, wrapper", [("ovr", OneVsRestClassifier),
                                                  ("ovo", OneVsOneClassifier)])
def test_multiclass_matches_sklearn_over_svc(iris, multi_class, wrapper):
    """One-vs-rest as OneVsRestClassifier(SVC); one-vs-one as SVC trains it: the decision
    function as OneVsOneClassifier's (SVC's), a tie of votes to the first tied class (SVC's
    predict; OneVsOneClassifier gives it to the larger summed confidence)."""
    X, y = iris
    kw = dict(kernel="rbf", gamma=0.5, C=1.0)
    ref = wrapper(SVC(tol=1e-10, **kw)).fit(X, y)
    if multi_class == "ovo":   # (the same decision function; SVC's own predictions)
        wrapped = ref
        ref = SVC(tol=1e-10, **kw).fit(X, y)
        Xd = np.random.default_rng(0).normal(size=(40, 4))
        np.testing.assert_allclose(ref.decision_function(Xd), wrapped.decision_function(Xd),
                                   atol=1e-5)
    ours = SVMClassifier(solver="piqp", multi_class=multi_class, **kw).fit(X, y)
    Xt = np.random.default_rng(0).normal(size=(40, 4))
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.decision_function(Xt), ref.decision_function(Xt), atol=1e-5)
    n_problems = 3
    assert len(ours.estimators_) == n_problems and ours.dual_coef_.shape[0] == n_problems
    # the cross-validation runs the same binary problems: fold scores of the wrapped SVC
    table = smcv.cross_validate(X, y, "soft_l1_dual", "piqp", Cs=[1.0], cv=5,
                                multi_class=multi_class, kernel="rbf", gamma=0.5)
    np.testing.assert_array_equal([table[f"split{k}_test_score"][0] for k in range(5)],
                                  cross_val_score(ref, X, y, cv=5))
    est = SVMClassifierCV(solver="piqp", Cs=[1.0], multi_class=multi_class, kernel="rbf",
                          gamma=0.5).fit(X, y)
    np.testing.assert_array_equal(est.predict(Xt), ref.predict(Xt))


def test_ovo_dual_coef_rebuilds_the_pairwise_decision_values(iris):
    X, y = iris
    clf = SVMClassifier(solver="piqp", kernel="linear", C=1.0, multi_class="ovo").fit(X, y)
    for k, sol in enumerate(clf.estimators_):
        f = clf.dual_coef_[k] @ (clf.support_vectors_ @ X.T) + clf.intercept_[k]
        np.testing.assert_allclose(f, sol.decision_function(X), atol=1e-9)


def test_c_tuning_reports_c_star_beside_the_cross_validated_C():
    X, y = _data(40)
    solver = require("clarabel")
    kw = dict(kernel="rbf", gamma=0.5)
    est = SVMClassifierCV(formulation="c_tuning_standard", solver=solver, cv=3, **kw).fit(X, y)
    C_star = sm.fit(X, y, "c_tuning_standard", solver, **kw).C
    assert est.best_params_ == {"C": None}
    assert est.C_ == est.C_star_ == C_star
    table = est.cv_results_
    for k, (train, _) in enumerate(StratifiedKFold(3).split(X, y)):
        assert table[f"split{k}_C_star"][0] == sm.fit(X[train], y[train], "c_tuning_standard",
                                                        solver, **kw).C
    # a grid of C beside: cross-validated on soft_l2_dual, the classifier whose C is tuned
    both = smcv.cross_validate(X, y, "c_tuning_standard", solver, Cs=CS, cv=3, **kw)
    l2 = smcv.cross_validate(X, y, "soft_l2_dual", solver, Cs=CS, cv=3, **kw)
    assert both["params"] == [{"C": c} for c in CS] + [{"C": None}]
    for k in ("split0_test_score", "split2_test_score", "mean_test_score"):
        np.testing.assert_array_equal(both[k][:3], l2[k])
        assert both[k][3] == table[k][0]
    assert np.isnan(both["mean_C_star"][:3]).all()
    assert both["mean_C_star"][3] == table["mean_C_star"][0]


def test_lam_grid_of_a_radius_margin_svm_equals_grid_search():
    X, y = _data(40)
    grid = {"C": [1.0, 10.0], "lam": [0.1, 1.0]}
    table = smcv.cross_validate(X, y, "rsvm_plus_kernel", "piqp", Cs=grid["C"], cv=3,
                                kernel="rbf", gamma=0.5, lam=grid["lam"])
    ref = GridSearchCV(SVMClassifier("rsvm_plus_kernel", solver="piqp", kernel="rbf",
                                     gamma=0.5), grid, cv=3).fit(X, y).cv_results_
    assert table["params"] == ref["params"]
    for k in scores(3):
        np.testing.assert_array_equal(table[k], ref[k], err_msg=k)


def test_clone_get_params_and_set_params():
    est = SVMClassifierCV(solver="piqp", Cs=CS, cv=3, kernel="rbf", gamma=GAMMAS)
    params = est.get_params()
    assert params["gamma"] is GAMMAS and params["kernel"] == "rbf" and params["Cs"] is CS
    twin = clone(est)
    assert twin.get_params() == params and twin is not est
    twin.set_params(gamma=[0.5], degree=None)
    assert twin.get_params()["gamma"] == [0.5] and "degree" in twin.get_params()
    X, y = _data(60)
    assert_same_table(clone(est).fit(X, y).cv_results_, est.fit(X, y).cv_results_)


@pytest.mark.parametrize("kw, match", [
    ({"C": 1.0}, "Cs="),
    ({"tol": 1e-8}, "solver_options"),
    ({"gamma": [0.1, 1.0]}, "no effect with kernel='linear'"),
    ({"Cs": [1.0, -1.0]}, "positive"),
    ({"multi_class": "ova"}, "'ovr' or 'ovo'"),
    ({"formulation": "hard_dual", "Cs": [1.0]}, "has no C"),
    ({"n_jobs": 2, "client": object()}, "not both"),
    ({"client": object()}, "must be a dask.distributed.Client"),
    ({"n_jobs": 0}, "n_jobs must be a non-zero integer"),
    ({"foo": [1, 2]}, "takes no parameter"),
    ({"solver": "piqpp"}, "unknown solver 'piqpp'"),
    ({"cv": 50}, "cannot split"),
])
def test_bad_input_is_refused(kw, match):
    X, y = _data(40)
    with pytest.raises(ParameterError, match=match):
        SVMClassifierCV(**{"solver": "piqp", **kw}).fit(X, y)


def test_folds_given_as_masks_or_negative_indices_are_gridsearchs_and_bad_ones_refused():
    """Folds given as (train, test) boolean masks of the points, or with negative indices,
    are the folds GridSearchCV reads from them: the same scores as the index folds; a fold
    of indices beyond the points or of another kind is refused, naming the fold (a raw
    IndexError from the fold's own points before)."""
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    X, y = _data(40)
    n = len(y)
    idx = [(np.arange(0, 30), np.arange(30, n)), (np.arange(10, n), np.arange(0, 10))]
    masks = [(np.isin(np.arange(n), tr), np.isin(np.arange(n), te)) for tr, te in idx]
    negative = [(tr - n, te) for tr, te in idx]
    grid = {"C": [0.5, 2.0]}
    ref = GridSearchCV(SVC(kernel="linear", tol=1e-10), grid, cv=masks).fit(X, y)
    for folds in (idx, masks, negative):
        cv = SVMClassifierCV(solver="piqp", Cs=grid["C"], cv=folds).fit(X, y)
        np.testing.assert_array_equal(cv.cv_results_["mean_test_score"],
                                      ref.cv_results_["mean_test_score"])
    # n indices (the first half's points twice each): indices, not a mask
    every = [(np.r_[0:n // 2, 0:n // 2], np.arange(30, n))]
    ref = GridSearchCV(SVC(kernel="linear", tol=1e-10), grid, cv=every).fit(X, y)
    cv = SVMClassifierCV(solver="piqp", Cs=grid["C"], cv=every).fit(X, y)
    np.testing.assert_array_equal(cv.cv_results_["mean_test_score"],
                                  ref.cv_results_["mean_test_score"])
    with pytest.raises(ParameterError, match=r"fold 1: its test indices must lie in \[-40, 40\)"):
        SVMClassifierCV(solver="piqp", Cs=[1.0], cv=[idx[0], (idx[1][0], np.array([3, 40]))]
                        ).fit(X, y)
    with pytest.raises(ParameterError, match="fold 0: its train points must be integer"):
        SVMClassifierCV(solver="piqp", Cs=[1.0], cv=[(np.arange(30) + 0.5, idx[0][1])]).fit(X, y)


def test_hyperparameters_are_the_registrys_and_a_misspelt_one_is_refused_up_front():
    """Review: cross_validate took a misspelt 'gama' as a solver option and recorded a
    ParameterError in every row; kernel_rank was missing from the list."""
    from svm_models.formulations import TABLE, hyperparameters
    from svm_models.methods.cv import cross_validate

    # derived from the registry (sample_weight: per-point data, not a hyperparameter to
    # cross-validate; max_vars: fit sets it for the backend), C first for the messages
    registry = {p for f in TABLE.values() for p in f.params} - {"max_vars", "sample_weight"}
    assert set(hyperparameters()) == registry and hyperparameters()[0] == "C"
    X, y = blobs(4, l=30)
    with pytest.raises(sm.ParameterError, match=r"takes no parameter\(s\) \['gama'\]"):
        cross_validate(X, y, "soft_l1_dual", "highs", Cs=[1.0], cv=3, gama=0.1)
    # kernel_rank reaches the builder: full rank equals the exact kernel's scores
    a = cross_validate(X, y, "soft_l1_dual", "highs", Cs=[0.5, 2.0], cv=3, kernel="rbf",
                       gamma=0.5, kernel_rank=30)
    b = cross_validate(X, y, "soft_l1_dual", "highs", Cs=[0.5, 2.0], cv=3, kernel="rbf",
                       gamma=0.5)
    np.testing.assert_array_equal(a["mean_test_score"], b["mean_test_score"])
    clf = sm.SVMClassifier(solver="highs", kernel="rbf", gamma=0.5, kernel_rank=3).fit(X, y)
    assert clf.solution_.extra["kernel_rank"]["rank"] == 3


def test_parallel_tasks_go_out_longest_first_and_each_exactly_once():
    """joblib's order: one task of each (setting, problem) first, then the setting whose
    finished task took longest; every key exactly once."""
    from svm_models.methods.cv import _longest_first

    keys = [(f, s, 0) for f in range(3) for s in range(3)]
    cost: dict = {}
    order = []
    for key in _longest_first(keys, cost):
        order.append(key)
        if len(order) == 3:      # the first of each setting finished: setting 2 is slowest
            cost.update({(0, 0): 1.0, (1, 0): 0.5, (2, 0): 9.0})
    assert sorted(order) == sorted(keys)
    assert order[:3] == [(0, 0, 0), (0, 1, 0), (0, 2, 0)]
    assert order[3:5] == [(1, 2, 0), (2, 2, 0)]
    assert order[5:] == [(1, 0, 0), (2, 0, 0), (1, 1, 0), (2, 1, 0)]


# ---------------------------------------------------------------------------------------
# sample_weight through cross-validation (issue 26)


def test_sample_weight_reaches_every_fold_and_the_refit():
    """Each fold is solved with its points' weights and scored with them: the table's scores
    equal fits made by hand on each training fold with weight[train], their accuracy
    weighted by weight[test] (as GridSearchCV's in scikit-learn 1.9: the test below against
    it); the refit equals SVMClassifier's weighted fit at the best C; the weights change the
    answer."""
    X, y = make_classification(60, 4, random_state=3, flip_y=0.1)
    w = np.random.default_rng(1).uniform(0.0, 3.0, size=60)
    folds = list(StratifiedKFold(3).split(X, y))
    Cs = [0.1, 3.0]
    table = smcv.cross_validate(X, y, "soft_l1_dual", "clarabel", Cs=Cs, cv=folds,
                                sample_weight=w, kernel="rbf", gamma=0.5)
    plain_ = smcv.cross_validate(X, y, "soft_l1_dual", "clarabel", Cs=Cs, cv=folds,
                                 kernel="rbf", gamma=0.5)
    for r, C in enumerate(Cs):
        for k, (tr, te) in enumerate(folds):
            sol = sm.fit(X[tr], y[tr], solver="clarabel", C=C, kernel="rbf", gamma=0.5,
                         sample_weight=w[tr])
            assert table[f"split{k}_test_score"][r] == pytest.approx(
                np.average(sol.predict(X[te]) == y[te], weights=w[te]), rel=1e-14)
    assert not np.allclose(np.concatenate([table[f"split{k}_test_score"] for k in range(3)]),
                           np.concatenate([plain_[f"split{k}_test_score"] for k in range(3)]))
    est = SVMClassifierCV(solver="clarabel", Cs=Cs, cv=folds, kernel="rbf",
                          gamma=0.5).fit(X, y, sample_weight=w)
    ref = SVMClassifier(solver="clarabel", C=est.best_params_["C"], kernel="rbf",
                        gamma=0.5).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X), atol=1e-7)


def test_a_test_fold_of_weight_zero_has_no_score():
    """A test fold whose weights sum to 0 scores NaN (GridSearchCV's error_score: np.average
    refuses weights summing to 0); one of small weights (summing to 0.3) is scored, its
    accuracy weighted."""
    X, y = make_classification(30, 4, random_state=2, flip_y=0.1)
    folds = list(StratifiedKFold(3).split(X, y))
    w = np.ones(30)
    w[folds[0][1]] = 0.0
    w[folds[1][1]] = 0.03
    table = smcv.cross_validate(X, y, Cs=[1.0], cv=folds, sample_weight=w, kernel="rbf",
                                gamma=0.5)
    assert np.isnan(table["split0_test_score"][0])
    tr, te = folds[1]
    sol = sm.fit(X[tr], y[tr], C=1.0, kernel="rbf", gamma=0.5, sample_weight=w[tr])
    assert table["split1_test_score"][0] == pytest.approx(np.mean(sol.predict(X[te]) == y[te]),
                                                          rel=1e-14)


@pytest.mark.parametrize("formulation", ["hard_dual", "c_tuning_standard", "rsvm_plus_primal"])
def test_sample_weight_is_refused_where_there_is_no_per_point_C(formulation):
    X, y = blobs(4, l=30)
    with pytest.raises(ParameterError, match="no per-point C"):
        smcv.cross_validate(X, y, formulation, "clarabel", cv=3, sample_weight=np.ones(30))


@pytest.fixture(scope="module")
def digits_part():
    """600 digits, ten classes: at C = 1, gamma = 1e-3 many test points tie in the votes."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X[:600] / 16.0, y[:600]


def _counted_pairs(monkeypatch) -> list:
    """Each call of fit_pairs the cross-validation makes, recorded: (points, Cs, backend calls
    it made: one per C)."""
    calls = []
    real = smcv.fit_pairs
    from svm_models.solvers import libsvm

    def counted(X, y_index, points, formulation, solver, params, weight, solve_kw, gram=None,
                Cs=None):
        made = []
        fit_svc = libsvm._fit_svc
        monkeypatch.setattr(libsvm, "_fit_svc", lambda *a, **k: made.append(1) or fit_svc(*a, **k))
        out = real(X, y_index, points, formulation, solver, params, weight, solve_kw,
                   gram=gram, Cs=Cs)
        calls.append((len(y_index), tuple(Cs), len(made)))
        return out

    monkeypatch.setattr(smcv, "fit_pairs", counted)
    return calls


def test_ovo_pairs_solved_together_score_as_grid_search_over_svc(digits_part, monkeypatch):
    """One-vs-one over libsvm: one task per (fold, setting), one libsvm call for all 45 pairs
    at each C, and the table's scores are GridSearchCV(SVC)'s -- SVC's prediction, a tie of votes to
    the first tied class (the table took the larger summed confidence before: 0.63 against
    SVC's 0.62 at C = 1, gamma = 1e-3), and gamma="scale" of the training fold, as SVC
    resolves it (each pair's own before)."""
    X, y = digits_part
    calls = _counted_pairs(monkeypatch)
    grid = {"C": [1.0, 10.0], "gamma": [1e-3, 1e-2]}
    t0 = time.perf_counter()
    table = smcv.cross_validate(X, y, Cs=grid["C"], cv=3, multi_class="ovo", kernel="rbf",
                                gamma=grid["gamma"])
    seconds = time.perf_counter() - t0
    ref = GridSearchCV(SVC(tol=1e-8), grid, cv=3).fit(X, y).cv_results_
    cols = scores(3)[:-1]
    for col in cols:
        np.testing.assert_array_equal(table[col], ref[col], err_msg=col)
    assert calls == [(400, (1.0, 10.0), 2)] * 6   # (3 folds x 2 gammas)
    # each task's time shared by its pairs and Cs: positive, and within the call's
    for k in ("mean_fit_time", "mean_score_time"):
        assert np.all(np.isfinite(table[k])) and np.all(table[k] > 0), k
    assert 0.2 * seconds < 3 * (table["mean_fit_time"].sum()
                                + table["mean_score_time"].sum()) < seconds
    # the fold's sample weights reach every pair, as GridSearchCV's fit(sample_weight=...)
    w = np.random.default_rng(0).uniform(0.2, 3.0, len(y))
    table = smcv.cross_validate(X, y, Cs=[1.0], cv=3, multi_class="ovo", kernel="rbf",
                                gamma=1e-2, sample_weight=w)
    ref = GridSearchCV(SVC(tol=1e-8), {"C": [1.0], "gamma": [1e-2]}, cv=3).fit(
        X, y, sample_weight=w).cv_results_
    for col in cols:   # (weighted means: equal to their round-off)
        np.testing.assert_allclose(table[col], ref[col], rtol=1e-13, err_msg=col)
    assert calls[-3:] == [(400, (1.0,), 1)] * 3
    # gamma from the data: the fold's, as SVC's
    calls.clear()
    table = smcv.cross_validate(X, y, Cs=[1.0], cv=3, multi_class="ovo", kernel="rbf")
    ref = GridSearchCV(SVC(tol=1e-8), {"C": [1.0]}, cv=3).fit(X, y).cv_results_
    for col in cols:
        np.testing.assert_array_equal(table[col], ref[col], err_msg=col)
    assert len(calls) == 3


def test_ovo_pairs_on_the_linear_kernel_score_as_grid_search_over_svc(digits_part,
                                                                      monkeypatch):
    """The linear kernel (the formulation's default) too: one libsvm call for all the pairs at
    each C (libsvm evaluates the kernel: no matrix formed), and GridSearchCV(SVC(kernel=
    "linear"))'s table."""
    X, y = digits_part
    calls = _counted_pairs(monkeypatch)
    table = smcv.cross_validate(X, y, Cs=[0.01, 1.0], cv=3, multi_class="ovo")
    ref = GridSearchCV(SVC(kernel="linear", tol=1e-8), {"C": [0.01, 1.0]}, cv=3).fit(
        X, y).cv_results_
    for col in scores(3)[:-1]:
        np.testing.assert_array_equal(table[col], ref[col], err_msg=col)
    assert calls == [(400, (0.01, 1.0), 2)] * 3


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_a_pairs_tasks_values_are_each_certified_pairs_own(digits_part, monkeypatch, kernel):
    """Every pair's decision values on the test fold, read in one product for all the pairs,
    are those of the classifier its certificate describes: the pair's Solution's own
    ``decision_function`` (the expansion over its support vectors, or the linear kernel's w
    and b) -- at each C, for every pair."""
    X, y = digits_part
    X, y = X[y < 4], y[y < 4]
    seen = []
    real = smcv.fit_pairs
    monkeypatch.setattr(smcv, "fit_pairs", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
    params = {"kernel": kernel} if kernel == "linear" else {"kernel": kernel, "gamma": 0.02}
    job = _job_of(X, y, Cs=(0.05, 2.0), **params)
    assert smcv.pairs_apply(job)
    parts = smcv._pairs_task(job, (1, 0, None))["parts"]
    test = job.folds[1][1]
    (at,) = seen
    for k, sols in enumerate(at):
        for p, sol in enumerate(sols):
            assert sol is not None and sol.classifier_certificate["certified"]
            assert (sol.w is not None) == (kernel == "linear")
            np.testing.assert_allclose(parts[p]["values"][k], sol.decision_function(X[test]),
                                       rtol=1e-12, atol=1e-12)


def test_a_pair_the_call_does_not_answer_walks_its_own_path(digits_part, monkeypatch):
    """A pair that the one call leaves unanswered (here: planted) is fitted alone along its
    C path, as without the pairs task: the same table as every pair fitted alone, and as
    GridSearchCV(SVC)'s -- gamma="scale" of the training fold for a pair fitted alone too
    (each pair's own points before)."""
    X, y = digits_part
    X, y = X[y < 3], y[y < 3]
    kw = dict(Cs=[0.5, 10.0], cv=3, multi_class="ovo", kernel="rbf")
    real = smcv.fit_pairs
    monkeypatch.setattr(smcv, "fit_pairs",
                        lambda *a, **k: [[None, *at[1:]] for at in real(*a, **k)])
    walked = []
    task = smcv._task
    monkeypatch.setattr(smcv, "_task", lambda job, key: walked.append(key) or task(job, key))
    mixed = smcv.cross_validate(X, y, **kw)
    assert sorted(k for k in walked if k[2] is not None) == [(f, 0, 0) for f in range(3)]
    def broken(*a, **k):
        raise RuntimeError("the call failed")

    monkeypatch.setattr(smcv, "fit_pairs", broken)   # (an error: every pair walks alone)
    walked.clear()
    failed = smcv.cross_validate(X, y, **kw)
    assert sorted(k for k in walked if k[2] is not None) == [(f, 0, p) for f in range(3)
                                                             for p in range(3)]
    monkeypatch.setattr(smcv, "pairs_apply", lambda job: False)
    alone = smcv.cross_validate(X, y, **kw)
    for col in scores(3):
        np.testing.assert_array_equal(failed[col], alone[col], err_msg=col)
    ref = GridSearchCV(SVC(tol=1e-8), {"C": kw["Cs"]}, cv=3).fit(X, y).cv_results_
    for col in scores(3):
        np.testing.assert_array_equal(mixed[col], alone[col], err_msg=col)
        np.testing.assert_array_equal(mixed[col], ref[col], err_msg=col)
    assert list(mixed["status"]) == ["optimal"] * 2


def _job_of(X, y, *, multi_class="ovo", formulation="soft_l1_dual", solver="auto",
            Cs=(1.0,), **params):
    """The Job cross_validate makes (the grid checked, 3 folds), for its rules."""
    grid, fixed, solve_kw = smcv._grid(params)
    A, yy, classes, y_index = smcv._labelled(X, y)
    return smcv._job(sm.formulations.get(formulation), A, y_index, classes,
                     folds=smcv._folds(3, A, yy), multi_class=multi_class, grid=grid,
                     fixed=fixed, Cs=tuple(Cs), solver=solver, solve_kw=solve_kw, weight=None)


def test_the_pairs_are_solved_together_exactly_where_one_call_takes_them(digits_part):
    """pairs_apply: one-vs-one of three classes or more, soft_l1_dual over fewer than
    PATH_MIN_CS Cs, the rbf kernel with only gamma besides or the linear kernel alone, on
    libsvm (named or under auto); anything else is each binary problem's own task."""
    X, y = digits_part
    rbf = dict(kernel="rbf", gamma=[0.01, 0.1])
    assert smcv.pairs_apply(_job_of(X, y, **rbf))
    three = y < 3
    assert smcv.pairs_apply(_job_of(X[three], y[three], solver="libsvm", kernel="rbf"))
    assert smcv.pairs_apply(_job_of(X, y, Cs=range(1, smcv.PATH_MIN_CS), **rbf))
    assert smcv.pairs_apply(_job_of(X, y))   # (the linear kernel, the formulation's default)
    assert smcv.pairs_apply(_job_of(X, y, kernel=["rbf", "linear"]))
    two = y < 2
    K = X @ X.T
    for job in [_job_of(X, y, multi_class="ovr", **rbf),
                _job_of(X[two], y[two], **rbf),
                _job_of(K, y, kernel="precomputed"),
                _job_of(X, y, formulation="c_tuning_standard", Cs=(), kernel="rbf"),
                _job_of(X, y, formulation="soft_l2_dual", **rbf),
                _job_of(X, y, Cs=(), **rbf),
                _job_of(X, y, Cs=range(1, smcv.PATH_MIN_CS + 1), **rbf),
                _job_of(X, y, kernel="poly"),
                _job_of(X, y, kernel=["rbf", "poly"]),
                _job_of(X, y, kernel="rbf", kernel_rank=20),
                _job_of(X, y, kernel="linear", quad_form="dense"),
                _job_of(X, y, solver="piqp", **rbf)]:
        assert not smcv.pairs_apply(job), (job.settings, job.fixed, job.solver, job.Cs)


def test_resolved_gamma_is_svcs_on_all_the_points():
    """gamma from the data (the formulation's default "scale", or "auto") resolved as SVC
    resolves it on the points given (SVC's _gamma, an independent computation); a number,
    a linear kernel and a formulation without gamma left as they are."""
    from sklearn.svm import SVC

    X, y = make_classification(60, 5, random_state=3)
    X = X * np.array([1.0, 2.0, 3.0, 0.5, 4.0])
    for kernel in ("rbf", "poly"):
        for gamma in ("scale", "auto"):
            ref = SVC(kernel=kernel, gamma=gamma).fit(X, y)._gamma
            got = smcv.resolved_gamma("soft_l1_dual", {"kernel": kernel, "gamma": gamma}, X)
            assert got == {"kernel": kernel, "gamma": pytest.approx(ref, rel=1e-14)}
        ref = SVC(kernel=kernel).fit(X, y)._gamma   # (the default "scale")
        got = smcv.resolved_gamma("soft_l1_dual", {"kernel": kernel, "C": 2.0}, X)
        assert got == {"kernel": kernel, "C": 2.0, "gamma": pytest.approx(ref, rel=1e-14)}
    for params in ({"kernel": "rbf", "gamma": 0.3}, {"kernel": "linear"}, {}):
        assert smcv.resolved_gamma("soft_l1_dual", params, X) == params
    assert smcv.resolved_gamma("l1_norm_primal", {"C": 1.0}, X) == {"C": 1.0}


def test_a_failed_pairs_task_fails_each_of_its_pairs():
    """A pairs task lost (its worker died) is recorded as each of its pairs failed, with
    the error, over every C of its path."""
    X, y = make_classification(60, 4, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=0)
    job = _job_of(X, y, Cs=(0.5, 2.0), kernel="rbf", gamma=0.5)
    test = job.folds[1][1]
    got = smcv._failed(job, (1, 0, None), RuntimeError("lost"))
    parts = smcv._parts(got)
    assert [p["key"] for p in parts] == [(1, 0, 0), (1, 0, 1), (1, 0, 2)]
    for part in parts:
        assert part["values"].shape == (2, len(test)) and np.all(np.isnan(part["values"]))
        assert part["status"] == ["RuntimeError: lost"] * 2
        assert np.all(np.isnan(part["fit_time"])) and np.all(np.isnan(part["C"]))
    one = smcv._failed(job, (1, 0, 2), RuntimeError("lost"))
    assert smcv._parts(one) == [one] and one["key"] == (1, 0, 2)


def test_pairs_tasks_over_processes_and_dask_equal_serial(digits_part, client):
    """The pairs tasks (one per fold and setting) run over processes and on Dask give the
    serial table bit for bit, the progress bar a step per task."""
    X, y = digits_part
    X, y = X[y < 4], y[y < 4]
    kw = dict(Cs=[0.5, 5.0], cv=3, multi_class="ovo", kernel="rbf", gamma=[0.01, 0.05])
    serial = smcv.cross_validate(X, y, **kw)
    assert_same_table(smcv.cross_validate(X, y, n_jobs=2, **kw), serial)
    assert_same_table(smcv.cross_validate(X, y, client=client, **kw), serial)
    assert list(serial["status"]) == ["optimal"] * 4

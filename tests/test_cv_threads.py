"""Cross-validation's parallel bookkeeping (svm_models.methods.cv) on threads: the same
``_Pool`` (the job dumped to a file, loaded by :func:`_shipped` once and kept), the same
``_run_joblib`` (as many tasks in flight as workers, the next given out as one finishes, a
broken executor recorded per task and replaced, the refit made speculatively by an idle
worker, the tasks left cancelled when the caller stops) -- with the executor that
``_executor`` hands out replaced by a thread pool in this process.

Why threads: ``make mutate`` forks each mutant's run from a process whose loky pool is then
unusable, so the process tests of test_cv.py cannot run under it and these functions had
no test in its selection (tests/mutation/README.md, cv.py). The solves and scores are real
(PIQP); every table is compared bit for bit with the serial run's, which test_cv.py and
test_cv_bookkeeping.py check against scikit-learn's GridSearchCV over SVC."""

from __future__ import annotations

import os
import threading
from concurrent.futures import BrokenExecutor, Future, ThreadPoolExecutor

import numpy as np
import pytest
from sklearn.datasets import make_classification

from svm_models.methods import cv as smcv

from conftest import assert_same_table, require

CS = [0.1, 1.0, 10.0]
GAMMAS = [0.2, 1.0]


def _data():
    X, y = make_classification(45, 3, n_informative=2, n_redundant=0, flip_y=0.1,
                               random_state=3)
    return X, y


def _run(**kw):
    X, y = _data()
    return smcv.cross_validate(X, y, "soft_l1_dual", require("piqp"), Cs=CS, cv=3,
                               kernel="rbf", gamma=GAMMAS, **kw)


class Threads:
    """A thread pool standing in for loky's: it records what is submitted (the function
    and its arguments), how many calls are in flight at most, and can fail chosen calls
    the way a dead worker fails them (the future's BrokenExecutor), or refuse a submit once
    (an executor that broke since it was handed out)."""

    def __init__(self, workers, broken_calls=(), refuse_once=False, hold_before=None):
        self.pool = ThreadPoolExecutor(workers)
        self.futures = []
        self.gate = threading.Event()   # with hold_before=k: the k-th call queued behind it
        self.hold_before = hold_before
        self.calls = []           # (fn name, args) of each submit
        self.in_flight = 0
        self.most = 0
        self.lock = threading.Lock()
        self.broken_calls = set(broken_calls)   # indices of submits whose future breaks
        self.refuse_once = refuse_once
        self.handed_out = 0       # times _executor() was called
        self.asked = []           # the n_workers of each call of _executor()
        self.in_flight_at_refit = []   # tasks in flight when each refit was submitted

    def submit(self, fn, *args):
        if self.refuse_once:
            self.refuse_once = False
            raise BrokenExecutor("broke since it was handed out")
        index = len(self.calls)
        if args[1].__name__ == "_refit":    # a speculative refit: release the held call
            self.in_flight_at_refit.append(self.in_flight)
            self.gate.set()
        self.calls.append((args[1].__name__, args[2:], args[0]))   # _shipped(path, fn, *a)
        if index in self.broken_calls:
            fut = Future()
            fut.set_exception(BrokenExecutor("a worker died"))
            return fut
        if index == self.hold_before:
            self.pool.submit(self.gate.wait, 10)
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)

        def call():
            try:
                return fn(*args)
            finally:
                with self.lock:
                    self.in_flight -= 1
        fut = self.pool.submit(call)
        self.futures.append(fut)
        return fut


@pytest.fixture
def threads(monkeypatch):
    """``install(**kw)``: _executor hands out one :class:`Threads` (made with ``kw``)."""
    made = []

    def install(**kw):
        ex = Threads(**kw)

        def executor(n_workers):
            ex.handed_out += 1
            ex.asked.append(n_workers)
            ex.n_workers = n_workers
            return ex
        monkeypatch.setattr(smcv, "_executor", executor)
        made.append(ex)
        return ex
    yield install
    for ex in made:
        ex.pool.shutdown(wait=True)


@pytest.fixture(scope="module")
def serial():
    return _run()


def test_threads_equal_serial_each_task_once_the_job_loaded_once(serial, threads):
    """n_jobs=2 over threads: the serial table bit for bit; each of the 6 tasks (3 folds x 2
    gammas: a task walks the C path) submitted exactly once, through _shipped, from the pool's
    job file, which exists while the run lasts and is gone after; the job loaded from it
    at most once per worker (job_loads(): once, or twice when both threads find it not yet
    loaded -- a worker process runs one call at a time), then reused, not once per task;
    never more than two tasks in flight."""
    ex = threads(workers=2)
    before = smcv.job_loads()
    par = _run(n_jobs=2)
    assert_same_table(par, serial)
    keys = [args[0] for name, args, _ in ex.calls]
    assert all(name == "_task" for name, _, _ in ex.calls)
    assert sorted(keys) == sorted((fo, s, 0) for fo in range(3) for s in range(2))
    assert len(keys) == 6
    paths = {path for _, _, path in ex.calls}
    assert len(paths) == 1 and not os.path.exists(paths.pop())
    assert 1 <= smcv.job_loads() - before <= 2   # kept: not once per task
    assert ex.n_workers == 2 and 1 <= ex.most <= 2


def test_a_broken_call_is_recorded_for_its_task_only(serial, threads):
    """The third task's future breaks (a worker died): its (row, fold) is NaN with the status
    'BrokenExecutor: a worker died', every other score is the serial run's, and the tasks
    after it still run."""
    ex = threads(workers=2, broken_calls={2})
    par = _run(n_jobs=2)
    fo, s, _ = ex.calls[2][1][0]
    assert len(ex.calls) == 6
    ok = par["status"] == "optimal"
    assert list(np.flatnonzero(~ok)) == [r for r in range(6) if r % 2 == s]   # the setting's
    assert all(str(t).startswith("BrokenExecutor: a worker died") for t in par["status"][~ok])
    for k in range(3):
        col = f"split{k}_test_score"
        lost = (np.arange(6) % 2 == s) & (k == fo)
        assert np.isnan(par[col][lost]).all()
        np.testing.assert_array_equal(par[col][~lost], serial[col][~lost])
    np.testing.assert_array_equal(par["mean_test_score"][ok], serial["mean_test_score"][ok])


def test_a_submit_to_a_broken_executor_is_made_again_on_a_new_one(serial, threads):
    """The executor refuses the first submit (it broke since it was handed out): the call is
    made again on the executor handed out next, and the table is the serial one."""
    ex = threads(workers=2, refuse_once=True)
    par = _run(n_jobs=2)
    assert_same_table(par, serial)
    assert len(ex.calls) == 6
    assert ex.handed_out == 7   # one per submit, plus the one after the refusal
    assert ex.asked == [2] * 7  # the new executor has the pool's workers too


def test_the_refit_is_made_speculatively_by_an_idle_worker(threads):
    """With refit, one gamma (three tasks, one per fold, each the C path): the third task is
    held until a refit is submitted, so a worker is idle while it waits, two folds finished.
    Over any two folds C = 1 has the best mean (the folds' scores: C = 0.1, 1, 10 at 8/15,
    14/15, 13/15; 8/15, 11/15, 11/15; 8/15, 12/15, 8/15), and so over all three: the idle
    worker refits C = 1, and that refit is the one returned ("speculative"), equal to the
    serial run's (made in this process, "main"); the tables equal."""
    def refit(X, labels, params):
        return {"params": dict(params), "n": len(labels), "mean_x": float(X.mean())}

    X, y = _data()
    kw = dict(Cs=CS, cv=3, kernel="rbf", gamma=0.2, refit=refit)
    one, info1 = smcv.cross_validate(X, y, "soft_l1_dual", require("piqp"), **kw)
    np.testing.assert_array_equal(
        np.column_stack([one[f"split{k}_test_score"] for k in range(3)]) * 15,
        [[8, 8, 8], [14, 11, 12], [13, 11, 8]])
    ex = threads(workers=2, hold_before=2)
    two, info2 = smcv.cross_validate(X, y, "soft_l1_dual", "piqp", n_jobs=2, **kw)
    assert_same_table(one, two)
    assert info1["index"] == info2["index"] == 1
    assert info1["params"] == info2["params"] == {"C": 1.0}
    assert info2["result"] == info1["result"] == {"params": {"C": 1.0}, "n": 45,
                                                  "mean_x": float(X.mean())}
    assert (info1["source"], info1["speculated"]) == ("main", [])
    assert (info2["source"], info2["speculated"]) == ("speculative", [1])
    assert [(name, args[1:]) for name, args, _ in ex.calls if name == "_refit"] == [
        ("_refit", ({"C": 1.0},))]
    assert ex.in_flight_at_refit == [1]   # given to the worker left idle, not before


def test_stopping_early_cancels_the_calls_still_queued(threads):
    """The caller takes one result and stops: the call of _run_joblib still queued is
    cancelled, and the third task is never given out (one thread for a pool of two workers,
    held between the two calls, so that the second waits in the queue)."""
    X, y = _data()
    ex = threads(workers=1, hold_before=1)
    job = _small_job(X, y)
    keys = [(0, 0, 0), (1, 0, 0), (2, 0, 0)]
    with smcv._Pool(job, 2) as pool:
        runs = smcv._run_joblib(job, keys, pool, _Bar())
        res = next(runs)
        runs.close()
        ex.gate.set()
    assert res["key"] == (0, 0, 0) and res["status"] == ["optimal"]
    assert [args[0] for _, args, _ in ex.calls] == keys[:2]
    assert ex.futures[0].done() and not ex.futures[0].cancelled()
    assert ex.futures[1].cancelled()


def _small_job(X, y):
    A, yy, classes, y_index = smcv._labelled(X, y)
    grid, fixed, solve_kw = smcv._grid({"kernel": "rbf", "gamma": 0.5})
    return smcv._job(smcv.lookup("soft_l1_dual"), A, y_index, classes,
                     folds=smcv._folds(3, A, yy), multi_class="ovr", grid=grid, fixed=fixed,
                     Cs=(1.0,), solver="piqp", solve_kw=solve_kw, weight=None)


def _identity(job, *args):
    return job, args


def test_a_worker_loads_the_job_once_memory_mapped_and_keeps_it():
    """_shipped, called as a worker calls it: the first call loads the pool's file (once:
    job_loads() one up), memory-mapped (X a numpy memmap, equal to the job's X), the next
    call gets the same job object without loading; the file is removed with the pool."""
    X, y = _data()
    job = _small_job(X, y)
    with smcv._Pool(job, 2) as pool:
        assert os.path.exists(pool.path)
        before = smcv.job_loads()
        first, args = smcv._shipped(pool.path, _identity, 5, "a")
        again, _ = smcv._shipped(pool.path, _identity)
        assert smcv.job_loads() - before == 1
    assert not os.path.exists(pool.path)
    assert args == (5, "a") and again is first
    assert isinstance(first.X, np.memmap)
    np.testing.assert_array_equal(first.X, job.X)
    np.testing.assert_array_equal(first.y, job.y)


def test_speculation_refits_the_best_row_once_counts_the_running_and_takes_the_final(
        serial, threads):
    """_Speculation with a table so far given: no refit while no row has a score; the best
    row's refit submitted once however often asked (running() 1 while it runs); a new best
    row gets a refit of its own (running() 2); take(row) cancels the others still queued
    and gives the row's refit; running() counts only the refits not finished."""
    X, y = _data()
    ex = threads(workers=1)
    release = threading.Event()

    def refit(X, labels, params):
        release.wait(10)
        return dict(params)

    best = smcv.best_index(serial)
    other = (best + 1) % len(serial["params"])
    boosted = {**serial, "mean_test_score": np.where(np.arange(6) == other, 1.0,
                                                     serial["mean_test_score"])}
    tables = iter([{**serial, "mean_test_score": np.full(6, np.nan)}, serial, serial,
                   boosted])
    spec = smcv._Speculation(refit, lambda: next(tables))
    with smcv._Pool(_small_job(X, y), 1) as pool:
        spec.submit(pool)                     # no score yet: nothing
        assert spec.futures == {} and spec.running() == 0
        spec.submit(pool)
        spec.submit(pool)                     # the same best row: not again
        assert list(spec.futures) == [best] and spec.running() == 1
        spec.submit(pool)                     # a new best row: queued behind the first
        assert list(spec.futures) == [best, other] and spec.running() == 2
        assert [args[1:] for name, args, _ in ex.calls] == [
            (serial["params"][best],), (serial["params"][other],)]
        threading.Timer(0.2, release.set).start()
        got = spec.take(best)
        assert spec.futures[other].cancelled()
        assert got["params"] == got["result"] == serial["params"][best]
        assert spec.running() == 0


class _Bar:
    def step(self, note):
        pass

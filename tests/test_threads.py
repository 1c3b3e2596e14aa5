"""The BLAS threads the library's own linear algebra uses (``svm_models/threads.py``): one
below ``ONE_THREAD_BELOW`` points, never more than the process allows, restored after."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import make_classification
from threadpoolctl import threadpool_info, threadpool_limits

import svm_models as sm
from svm_models import threads


def _blas_threads() -> list[int]:
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_a_small_fit_runs_its_linear_algebra_on_one_thread_and_restores_the_rest():
    """A callable kernel is called inside the estimator's fit: there every BLAS pool has one
    thread (the fit is small); after the fit the pools are as they were."""
    seen = []

    def kernel(A, B):
        seen.append(_blas_threads())
        return A @ B.T

    X, y = make_classification(60, 4, random_state=0)
    before = _blas_threads()
    clf = sm.SVMClassifier(kernel=kernel, solver="libsvm").fit(X, y)
    assert seen and all(t == [1] * len(t) for t in seen), seen
    assert _blas_threads() == before
    # and the answer is the one of the linear kernel (the threads change no value)
    lin = sm.SVMClassifier(kernel="linear", solver="libsvm").fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), lin.decision_function(X), atol=1e-6)


def test_predictions_run_their_linear_algebra_on_the_threads_of_a_fit(monkeypatch):
    """The kernel between test points and the support vectors, and its product with the
    dual coefficients, run on the fit's threads (one for a small problem): two BLAS threads
    beside a busy process left OpenBLAS's second thread spinning into the next fit
    (``GridSearchCV(SVMClassifier())`` on digits 1.0 s -> 1.45 s). One kernel for all of
    one-vs-one's pairs (the estimator's), each binary problem's own (two classes, and a
    Solution's ``decision_function``); the values as with the process's threads."""
    from svm_models.kernels import Kernel

    seen, real = [], Kernel.gram

    def spy(self, *a, **k):
        seen.append(_blas_threads())
        return real(self, *a, **k)

    X, y = make_classification(90, 4, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=1)
    multi = sm.SVMClassifier(kernel="rbf").fit(X, y)
    two = sm.SVMClassifier(kernel="rbf").fit(X, y > 0)
    with threadpool_limits(2):   # (the process allows two, whatever the machine's cores)
        before = _blas_threads()
        ref = [multi.decision_function(X), two.decision_function(X),
               two.solution_.decision_function(X)]
        monkeypatch.setattr(Kernel, "gram", spy)
        got = [multi.decision_function(X), two.decision_function(X),
               two.solution_.decision_function(X), multi.predict(X)]
        assert _blas_threads() == before and max(before) == 2
    assert len(seen) == 4 and all(t == [1] * len(t) for t in seen), seen
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_the_threads_that_pay_never_exceed_the_cores_or_the_users_limit(monkeypatch):
    cores = __import__("os").cpu_count()
    assert threads.blas_threads_for(threads.ONE_THREAD_BELOW - 1) == 1
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert threads.blas_threads_for(10**6) == cores          # a quiet machine: every core
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (1.0 + cores, 0.0, 0.0))
    assert threads.blas_threads_for(10**6) == 1              # every core busy: one
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (1.0, 0.0, 0.0))
    # one process busy (this one or another: the load lags), one core fewer
    assert threads.blas_threads_for(10**6) == max(1, cores - 1)
    assert threads.blas_threads_for(49_999) == 1             # (measured: one pays below)
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert threads.blas_threads_for(threads.ONE_THREAD_BELOW) == cores   # (from there on)

    def no_load():
        raise OSError("no load average here")

    monkeypatch.setattr(threads.os, "getloadavg", no_load)   # (unknown: the cores free)
    assert threads.blas_threads_for(10**6) == cores
    monkeypatch.setattr(threads.os, "cpu_count", lambda: None)   # (unknown: one core)
    assert threads.blas_threads_for(10**6) == 1
    with threadpool_limits(limits=1, user_api="blas"):       # a user's limit stays in force
        monkeypatch.setattr(threads.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
        with threads.library_threads(10**6):
            assert set(_blas_threads()) == {1}


def test_cross_validation_tasks_run_one_thread_per_pool_and_restore_them(monkeypatch):
    """Each task of a cross-validation runs every thread pool on one thread
    (:func:`threads.one_thread`, its controller made once), at the 2nd task as at the 1st,
    and the pools are as they were after; the scores are those of the same fits outside."""
    from threadpoolctl import threadpool_info as info

    from svm_models.methods import cv

    seen, real = [], cv.fit_path

    def spy(*a, **k):
        seen.append([p["num_threads"] for p in info()])
        return real(*a, **k)

    monkeypatch.setattr(cv, "fit_path", spy)
    X, y = make_classification(40, 4, random_state=1)
    before = [p["num_threads"] for p in info()]
    table = sm.cross_validate(X, y, Cs=[1.0, 10.0], cv=3, kernel="linear", solver="libsvm")
    assert len(seen) == 3 and all(t == [1] * len(t) for t in seen), seen
    assert [p["num_threads"] for p in info()] == before
    for k, (train, test) in enumerate(cv._folds(3, X, y)):
        for row, C in enumerate((1.0, 10.0)):
            clf = sm.SVMClassifier(C=C, kernel="linear", solver="libsvm").fit(X[train], y[train])
            assert table[f"split{k}_test_score"][row] == clf.score(X[test], y[test])

"""The golden data of tests/libsvm_reference.py (tests/data/libsvm_references.json): every slow
libsvm problem of the suite is found there (else the suite silently solves it live again, for
minutes), and a stored optimum re-solved live is libsvm's answer today -- the file cannot
drift from scikit-learn's libsvm or from the tests' data without this test failing. Regenerate
it with ``python tests/data/make_libsvm_references.py``."""

from __future__ import annotations

import numpy as np
import pytest
from libsvm_reference import GOLDEN, golden_entry, labels, problem_key, solve_libsvm
from sklearn.datasets import load_breast_cancer, make_moons

import svm_models as sm
from conftest import PERTURB

pytestmark = pytest.mark.skipif(bool(PERTURB), reason="the stored problems are the unperturbed data")


def _cancer():
    X, y = load_breast_cancer(return_X_y=True)   # (tests/test_every_c.py's _cancer)
    return X[:150], y[:150], {}


def _moons(l, seed, noise):
    X, y = make_moons(l, noise=noise, random_state=seed)
    return X, y, {"kernel": "rbf", "gamma": 0.5}


#: the problems that take libsvm seconds to minutes at tol 1e-10: (data, C)
SLOW = [(_cancer, C) for C in (1.0, 1e4, 1e8, 1e12)] + [
    (lambda: _moons(200, 0, 0.2), C) for C in (1e7, 1e8, 1e10, 1e12)] + [
    (lambda: _moons(60, 2, 0.3), C) for C in (1e8, 1e12)]


def _problem(data, C):
    X, y, kw = data()
    sol = sm.fit(X, y, solver="piqp", C=1.0, **kw)        # (its resolved kernel only)
    X = np.asarray(X, dtype=float)
    yy = labels(sol, y)
    return X, yy, sol.kernel, problem_key(X, yy, C, sol.kernel)


def test_every_slow_problem_of_the_suite_is_stored():
    assert GOLDEN.exists()
    missing = [(data.__name__, C) for data, C in SLOW if golden_entry(_problem(data, C)[3]) is None]
    assert not missing, f"not in {GOLDEN.name}: {missing}; run tests/data/make_libsvm_references.py"


@pytest.mark.parametrize("data,C", [SLOW[0], SLOW[4]], ids=["cancer-1", "moons200-1e7"])
def test_a_stored_optimum_is_libsvms_answer_today(data, C):
    """The two cheapest stored problems (about a second each), solved live again: the same
    support vectors, alpha and b, the same dual objective."""
    X, yy, kernel, key = _problem(data, C)
    entry = golden_entry(key)
    assert entry is not None
    a = np.zeros(len(yy))
    a[entry["support"]] = entry["alpha"]
    K = kernel.gram(X)
    a_live, b_live = solve_libsvm(K, yy, C)
    np.testing.assert_array_equal(np.flatnonzero(a_live), entry["support"])
    np.testing.assert_allclose(a, a_live, rtol=1e-6, atol=1e-9 * a_live.max())
    assert entry["b"] == pytest.approx(b_live, rel=1e-6, abs=1e-9)
    dual = lambda al: al.sum() - 0.5 * (yy * al) @ K @ (yy * al)   # noqa: E731
    assert dual(a) == pytest.approx(dual(a_live), rel=1e-9)
    # and it is a feasible point of the problem stored: 0 <= alpha <= C, y'alpha = 0
    assert a.min() >= 0 and a.max() <= C * (1 + 1e-12)
    assert abs(yy @ a) <= 1e-9 * a.sum()

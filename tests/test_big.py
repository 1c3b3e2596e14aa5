"""Issue 17, big problems: low-rank kernels (pivoted incomplete Cholesky, kernel_rank=), the
kernel matrix stored once, the per-point costs of the fast path. Small sizes; every value is
checked against something independent (the exact-kernel model, numpy's Cholesky, the dense
kernel matrix, the other form)."""

import numpy as np
import pytest

import svm_models as sm
from svm_models.errors import ParameterError
from svm_models.kernels import (
    LowRankKernel,
    incomplete_cholesky,
    kernel_from_dict,
    make_kernel,
)
from svm_models.model.built import SignedGram
from svm_models.model.standard_form import assemble, bounds
from svm_models.solution import Solution

SOLVER = "piqp"


def data(l=60, d=4, seed=1, sep=0.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((l, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + sep * rng.standard_normal(l) > 0, 1, -1)
    return X, y


KW = dict(kernel="rbf", gamma=0.3)


def exact_and_full(name, X, y, **kw):
    params = {**KW, **kw}
    return (sm.fit(X, y, name, SOLVER, **params),
            sm.fit(X, y, name, SOLVER, kernel_rank=len(y), **params))


@pytest.mark.parametrize("name,kw", [("soft_l1_dual", {"C": 10.0}), ("soft_l2_dual", {"C": 3.0}),
                                     ("hard_dual", {}), ("soft_l1_primal", {"C": 10.0}),
                                     ("soft_l2_primal", {"C": 3.0})])
def test_full_rank_equals_the_exact_kernel(name, kw):
    X, y = data(sep=0.3 if name.startswith("soft") else 0.0)
    Xt, _ = data(l=25, seed=7)
    exact, full = exact_and_full(name, X, y, **kw)
    rep = full.extra["kernel_rank"]
    assert rep["rank"] == len(y) and rep["trace_error"] <= 1e-12 * rep["trace"]
    assert abs(full.objective - exact.objective) <= 1e-8 * max(1.0, abs(exact.objective))
    assert np.max(np.abs(full.alpha - exact.alpha)) <= 1e-8 * max(1.0, exact.alpha.max())
    assert abs(full.b - exact.b) <= 1e-8
    assert np.allclose(full.decision_function(Xt), exact.decision_function(Xt), atol=1e-8, rtol=0)
    assert isinstance(full.kernel, LowRankKernel)


def test_reported_error_bounds_the_true_one():
    X, y = data(l=80, sep=0.3)
    kern = make_kernel("rbf", X, gamma=0.3)
    K = kern.gram(X)
    exact = sm.fit(X, y, "soft_l1_dual", SOLVER, C=10.0, **KW)
    for r in (5, 15, 40):
        sol = sm.fit(X, y, "soft_l1_dual", SOLVER, C=10.0, kernel_rank=r, **KW)
        rep = sol.extra["kernel_rank"]
        L = sol.kernel.gram(X)                       # L L' on the training points
        E = K - L
        true = float(np.trace(E))
        assert rep["rank"] == r
        assert rep["trace_error"] == pytest.approx(true, rel=1e-9, abs=1e-10)
        # the neglected part is PSD: its trace bounds its largest eigenvalue and every entry
        lam = np.linalg.eigvalsh(E)
        assert lam[0] >= -1e-10 and lam[-1] <= rep["trace_error"] + 1e-10
        # the optimum of the low-rank model exceeds the exact one by at most the bound
        gap = sol.objective - exact.objective
        assert -1e-8 <= gap <= rep["objective_bound"] + 1e-8
    assert rep["objective_bound"] < float("inf")


def test_pivoted_cholesky_against_numpy():
    X, _ = data(l=50)
    kern = make_kernel("rbf", X, gamma=0.3)
    K = kern.gram(X)
    lr = incomplete_cholesky(kern, X, 50)
    P = lr.pivots
    assert sorted(P.tolist()) == list(range(50))
    # the Cholesky factor of K permuted to the pivot order is unique: numpy's
    assert np.allclose(lr.L[P], np.linalg.cholesky(K[np.ix_(P, P)]), atol=1e-10)
    assert np.allclose(lr.L @ lr.L.T, K, atol=1e-12)
    # greedy pivoting: the first pivot has the largest diagonal; rank-r residual traces fall
    small = incomplete_cholesky(kern, X, 7, block=1)
    Kp = K - small.L @ small.L.T
    assert small.trace_error == pytest.approx(np.trace(Kp), abs=1e-10)
    # the residual vanishes on the pivots' rows and columns (exact interpolation there)
    assert np.allclose(Kp[small.pivots], 0.0, atol=1e-12)


def test_low_rank_kernel_is_the_nystroem_kernel_of_the_pivots():
    X, y = data(sep=0.3)
    sol = sm.fit(X, y, "soft_l1_dual", SOLVER, C=10.0, kernel_rank=12, **KW)
    k = sol.kernel
    base = make_kernel("rbf", X, gamma=0.3)
    Xt, _ = data(l=9, seed=3)
    P = k.landmarks
    nys = base.gram(Xt, P) @ np.linalg.solve(base.gram(P), base.gram(P, X))
    assert np.allclose(k.gram(Xt, X), nys, atol=1e-8)
    # on the training points: the model's own decision values, (L L')(y alpha) + b
    lr = incomplete_cholesky(base, X, 12)
    f_model = lr.L @ (lr.L.T @ (sol.alpha * np.where(y > 0, 1.0, -1.0))) + sol.b
    assert np.allclose(sol.decision_function(X), f_model, atol=1e-9)
    # serialised and read back: the same predictions
    back = Solution.from_json(sol.to_json())
    assert np.allclose(back.decision_function(Xt), sol.decision_function(Xt), atol=1e-12)
    assert isinstance(kernel_from_dict(k.to_dict()), LowRankKernel)


def test_kernel_rank_above_l_is_exact_and_poly_works():
    X, y = data(l=40, sep=0.3)
    exact = sm.fit(X, y, "soft_l1_dual", SOLVER, C=2.0, kernel="poly", degree=2, gamma=0.5)
    big = sm.fit(X, y, "soft_l1_dual", SOLVER, C=2.0, kernel="poly", degree=2, gamma=0.5,
                 kernel_rank=10_000)
    rep = big.extra["kernel_rank"]
    # (gamma x.z)^2 in 4 features has rank 4 * 5 / 2 = 10: the factorisation stops there
    K = make_kernel("poly", X, degree=2, gamma=0.5).gram(X)
    assert rep["requested"] == 10_000 and rep["rank"] == np.linalg.matrix_rank(K) == 10
    assert abs(big.objective - exact.objective) <= 1e-8 * abs(exact.objective)


@pytest.mark.parametrize("kw,match", [
    ({"kernel": "rbf", "kernel_rank": 0}, "positive integer"),
    ({"kernel": "rbf", "kernel_rank": -3}, "positive integer"),
    ({"kernel": "rbf", "kernel_rank": 2.5}, "positive integer"),
    ({"kernel": "rbf", "kernel_rank": True}, "positive integer"),
    ({"kernel": "linear", "kernel_rank": 3}, "exact factor X"),
    ({"kernel": "rbf", "kernel_rank": 5, "quad_form": "dense"}, "factor form"),
])
def test_bad_kernel_rank(kw, match):
    X, y = data(l=20)
    with pytest.raises(ParameterError, match=match):
        sm.build("soft_l1_dual", X, y, **kw)


def test_kernel_rank_with_a_precomputed_kernel_is_refused():
    X, y = data(l=20)
    K = make_kernel("rbf", X, gamma=0.3).gram(X)
    with pytest.raises(ParameterError, match="precomputed"):
        sm.build("soft_l1_primal", K, y, kernel="precomputed", kernel_rank=5)


def test_the_kernel_matrix_is_stored_once():
    X, y = data(sep=0.3)
    m = sm.build("soft_l1_dual", X, y, C=10.0, **KW)
    svm = m._svm
    (qt,) = svm.record.quadratic
    assert isinstance(svm.K, SignedGram) and qt.block.base is svm.K.G
    K = make_kernel("rbf", X, gamma=0.3).gram(X)
    v = np.random.default_rng(0).standard_normal(len(y))
    idx = np.ix_([3, 1, 7], [2, 3])
    assert np.allclose(svm.K @ v, K @ v) and np.allclose(svm.K[idx], K[idx])
    assert np.allclose(np.asarray(svm.K), K)
    # and the fit agrees with the primal (which keeps K and its factor)
    dual = sm.solve(m, SOLVER)
    primal = sm.fit(X, y, "soft_l1_primal", SOLVER, C=10.0, **KW)
    assert dual.objective == pytest.approx(primal.objective, rel=1e-8)
    assert np.allclose(dual.alpha, primal.alpha, atol=1e-7)


def test_margin_multipliers_read_as_one_array():
    X, y = data(l=300, sep=0.3)
    primal = sm.fit(X, y, "soft_l1_primal", SOLVER, C=1.0)
    dual = sm.fit(X, y, "soft_l1_dual", SOLVER, C=1.0)
    assert primal.extra["alpha_source"] == "multipliers"
    assert np.allclose(primal.alpha, dual.alpha, atol=1e-6)
    assert primal.b == pytest.approx(dual.b, abs=1e-6)


def test_bounds_are_read_per_variable_even_in_runs():
    X, y = data(l=50, sep=0.3)
    m = sm.build("soft_l1_dual", X, y, C=10.0, **KW)
    alpha = m.alpha
    alpha[17].setub(0.25)                 # one member of the run re-bounded
    m.C = 4.0                              # the run's shared bound follows the Param
    lx, ux = bounds(assemble(m._svm.record).var_datas)
    expect = np.array([vd.bounds[1] for vd in assemble(m._svm.record).var_datas], dtype=float)
    assert np.array_equal(ux, expect) and ux[17] == 0.25 and ux[0] == 4.0
    assert np.all(lx == 0.0)
    sol = sm.solve(m, SOLVER)
    assert sol.alpha[17] <= 0.25 + 1e-9
    general = sm.solve(m, SOLVER, path="general")
    assert sol.objective == pytest.approx(general.objective, rel=1e-7)


def test_lazy_members_build_on_first_read_and_survive_clone():
    X, y = data(l=30, sep=0.3)
    m = sm.build("soft_l1_primal", X, y, C=1.0)
    assert not m.margin[4].is_materialised and m.margin[4].is_pristine
    copy = m.clone()
    a = sm.solve(m, SOLVER)
    b = sm.solve(copy, SOLVER)           # the copy's members were built by the clone
    assert b.path == "general" or b.objective == pytest.approx(a.objective, rel=1e-9)
    assert b.objective == pytest.approx(a.objective, rel=1e-7)
    body = str(m.margin[4].body)
    assert "w[0]" in body and "xi[4]" in body and m.margin[4].is_pristine

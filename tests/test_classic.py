"""The six classic SVMs against independent answers.

* the golden six-point toy, checked by hand (DESIGN.md "Testing"), on every QP backend and
  on both paths;
* primal against dual for the three families, on seeded datasets and all four kernels;
* every backend against every other;
* the 1-norm dual against scikit-learn's ``SVC`` (libsvm).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import (
    FAMILIES,
    FAST_BACKENDS,
    QP_BACKENDS,
    SCIP_MAX_POINTS,
    TOY_X,
    TOY_Y,
    assert_rel,
    assert_same_classifier,
    blobs,
    c_kw,
    data_for,
    eval_points,
    fit_checked,
    rbf_gram,
    require,
    separable,
    usable,
)


# ---------------------------------------------------------------------------------------
# Golden toy, by hand.
#
# Hard margin / 1-norm (C = 1): by symmetry about the line x1 = x2, w = (s, s); the closest
# points of the two classes are x_1 = (-1, -1) and x_3 = (1, 1), so w.x_3 + b = 1 and
# -(w.x_1 + b) = 1 give b = 0, s = 1/2. Stationarity w = sum_i alpha_i y_i x_i with only
# points 1 and 3 active gives alpha_1 = alpha_3 = 1/4 (< C = 1: both free, xi = 0).
# Objective 1/2 ||w||^2 = 1/4 = e'alpha - 1/2 ||w||^2 = 1/2 - 1/4. Margin 1/||w|| = sqrt 2.
#
# 2-norm (C = 1): the dual is max 2a - 1/2 a^2 (G_11 + G_33 + 2 G_13) - a^2/C with a on
# points 1 and 3 and G_11 = G_33 = G_13 = 2: max 2a - 5a^2, a = 1/5; w = 2a (1, 1) =
# (0.4, 0.4); b = y_3 (1 - a/C) - w.x_3 = 0.8 - 0.8 = 0; xi_1 = xi_3 = a/C = 0.2 and every
# other point has y_i w.x_i >= 1.2. Objective 2a - 5a^2 = 0.2 = 1/2 ||w||^2 + C/2 sum xi^2
# = 0.16 + 0.04. Margin 1/||w|| = 1/(0.4 sqrt 2).

_A1 = np.array([0, 0.25, 0, 0.25, 0, 0])
_A2 = np.array([0, 0.2, 0, 0.2, 0, 0])
GOLDEN = {
    # formulation: (alpha, w, b, objective, xi)
    "hard_primal": (_A1, [0.5, 0.5], 0.0, 0.25, np.zeros(6)),
    "hard_dual": (_A1, [0.5, 0.5], 0.0, 0.25, np.zeros(6)),
    "soft_l1_primal": (_A1, [0.5, 0.5], 0.0, 0.25, np.zeros(6)),
    "soft_l1_dual": (_A1, [0.5, 0.5], 0.0, 0.25, np.zeros(6)),
    "soft_l2_primal": (_A2, [0.4, 0.4], 0.0, 0.2, _A2),
    "soft_l2_dual": (_A2, [0.4, 0.4], 0.0, 0.2, _A2),
}
BACKEND_PATHS = [(s, p) for s in QP_BACKENDS for p in ("fast", "general")]


def _w_tol(backend: str, formulation: str) -> float:
    # SCIP solves the primal QP to an objective tolerance (~1e-9); on the toy the optimum
    # is flat to second order along w1 - w2 (no active constraint pins it), so w is only
    # determined to ~sqrt(1e-9) = 3e-5. Every other backend meets KKT to its tolerance.
    return 1e-4 if backend == "scip" and formulation.endswith("primal") else 1e-6


@pytest.mark.parametrize("formulation", list(GOLDEN))
@pytest.mark.parametrize("backend,path", BACKEND_PATHS)
def test_golden_toy(formulation, backend, path):
    require(backend)
    alpha, w, b, obj, xi = GOLDEN[formulation]
    sol = fit_checked(TOY_X, TOY_Y, formulation, backend, path=path, **c_kw(formulation))
    assert sol.status == "optimal"
    assert sol.path == path
    assert sol.solver == backend
    np.testing.assert_allclose(sol.alpha, alpha, atol=1e-6, rtol=0)
    np.testing.assert_allclose(sol.w, w, atol=_w_tol(backend, formulation), rtol=0)
    assert sol.b == pytest.approx(b, abs=1e-6)
    np.testing.assert_array_equal(sol.support, [1, 3])
    np.testing.assert_allclose(sol.support_vectors, TOY_X[[1, 3]])
    assert sol.objective == pytest.approx(obj, rel=1e-7, abs=1e-9)
    assert sol.primal_objective == pytest.approx(obj, rel=1e-6)
    assert sol.dual_objective == pytest.approx(obj, rel=1e-6)
    assert abs(sol.duality_gap) < 1e-6
    np.testing.assert_allclose(sol.xi, xi, atol=1e-6, rtol=0)
    assert sol.margin == pytest.approx(1.0 / np.linalg.norm(w), rel=1e-5)
    np.testing.assert_array_equal(sol.predict(TOY_X), TOY_Y)
    # decision values by hand: f(x) = w.x + b
    np.testing.assert_allclose(sol.decision_function(TOY_X), TOY_X @ np.array(w) + b,
                               atol=1e-4 if backend == "scip" else 1e-6)


@pytest.mark.parametrize("formulation", list(GOLDEN))
@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_golden_toy_precomputed_linear_gram(formulation, backend):
    """The toy through its Gram matrix X X' (kernel="precomputed"): the same alpha, b and
    support; decision values on K(X_test, X_train) equal w.x + b."""
    require(backend)
    alpha, w, b, obj, _ = GOLDEN[formulation]
    K = TOY_X @ TOY_X.T  # rank 2 of 6: the kernel primals' factor form has 2 coordinates
    sol = fit_checked(K, TOY_Y, formulation, backend, kernel="precomputed", **c_kw(formulation))
    assert sol.w is None
    np.testing.assert_allclose(sol.alpha, alpha, atol=1e-6, rtol=0)
    assert sol.b == pytest.approx(b, abs=1e-6)
    np.testing.assert_array_equal(sol.support, [1, 3])
    assert sol.objective == pytest.approx(obj, rel=1e-6)
    Xt = np.array([[0.3, -0.7], [2.0, 2.0], [-1.5, 0.5]])
    np.testing.assert_allclose(sol.decision_function(Xt @ TOY_X.T), Xt @ np.array(w) + b,
                               atol=1e-6)


# ---------------------------------------------------------------------------------------
# Primal against dual

GAMMA = 0.5
KERNEL_PARAMS = {
    "linear": {"kernel": "linear"},
    "poly": {"kernel": "poly", "degree": 3, "gamma": GAMMA, "coef0": 1.0},
    "rbf": {"kernel": "rbf", "gamma": GAMMA},
}
KERNELS = ("linear", "poly", "rbf", "precomputed")


def _problem(family: str, kernel: str, seed: int, l: int = 40):
    """(training input, y, params, evaluation input) for a kernel: for "precomputed" the
    training input is the rbf Gram matrix (computed by scikit-learn) and the evaluation
    input is K(X_eval, X_train)."""
    X, y = separable(seed, l=l) if family == "hard" else blobs(seed, l=l)
    Xe = np.vstack([X, eval_points(seed, d=X.shape[1])])
    if kernel == "precomputed":
        return rbf_gram(X, X, GAMMA), y, {"kernel": "precomputed"}, rbf_gram(Xe, X, GAMMA)
    return X, y, dict(KERNEL_PARAMS[kernel]), Xe


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_primal_and_dual_agree(backend, family, kernel, seed):
    require(backend)
    Xtr, y, params, Xe = _problem(family, kernel, seed)
    params.update(c_kw(family, C=1.0 + seed))
    primal = fit_checked(Xtr, y, f"{family}_primal", backend, **params)
    dual = fit_checked(Xtr, y, f"{family}_dual", backend, **params)
    assert_rel(primal.objective, dual.objective, 1e-6, "primal vs dual objective")
    # strong duality, and each Solution's own diagnostics agree with it
    for s in (primal, dual):
        assert abs(s.duality_gap) < 1e-6, s.summary()
        assert s.kkt["primal_infeasibility"] < 1e-6
        assert s.kkt["balance"] < 1e-6
    assert abs(primal.b - dual.b) <= 1e-5 * max(1.0, abs(dual.b)), (primal.b, dual.b)
    if kernel == "linear":
        np.testing.assert_allclose(primal.w, dual.w, atol=1e-5, rtol=0)
    fp, fd = primal.decision_function(Xe), dual.decision_function(Xe)  # Xe: K(X_eval, X) if precomputed
    np.testing.assert_allclose(fp, fd, atol=1e-5 * max(1.0, np.abs(fd).max()), rtol=0)
    # slacks: the primal's variables against the dual's KKT values
    np.testing.assert_allclose(primal.xi, dual.xi, atol=1e-5, rtol=0)
    # the decision function on the training points gives the slacks of the problem
    ftr = dual.decision_function(Xe[: len(y)])
    if family == "soft_l1":
        np.testing.assert_allclose(dual.xi, np.maximum(0.0, 1.0 - y * ftr), atol=1e-5)
    elif family == "hard":
        assert np.min(y * ftr) == pytest.approx(1.0, abs=1e-5)  # the margin is attained


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("family", FAMILIES)
def test_precomputed_equals_builtin_kernel(family, kernel):
    """A precomputed Gram matrix (from scikit-learn) gives the same classifier as the
    built-in kernel (the package's own Gram matrix): alpha, b, objective, decision values."""
    backend = require("clarabel")
    X, y = separable(3) if family == "hard" else blobs(3)
    Xe = eval_points(3)
    params = dict(KERNEL_PARAMS[kernel])
    if kernel == "linear":
        K, Ke = X @ X.T, Xe @ X.T
    else:
        K, Ke = rbf_gram(X, X, GAMMA), rbf_gram(Xe, X, GAMMA)
    a = fit_checked(X, y, f"{family}_dual", backend, **params, **c_kw(family))
    p = fit_checked(K, y, f"{family}_dual", backend, kernel="precomputed", **c_kw(family))
    assert_rel(a.objective, p.objective, 1e-7, "objective")
    np.testing.assert_allclose(a.alpha, p.alpha, atol=1e-6)
    assert a.b == pytest.approx(p.b, abs=1e-6)
    np.testing.assert_allclose(a.decision_function(Xe), p.decision_function(Ke), atol=1e-6)


@pytest.mark.parametrize("backend", FAST_BACKENDS)
@pytest.mark.parametrize("form", ["primal", "dual"])
def test_hard_margin_geometry(backend, form):
    """Hard margin, linear kernel: the geometric margin 1/||w|| equals the smallest distance
    of a training point to the hyperplane, and the objective identity e'alpha = ||w||^2."""
    require(backend)
    X, y = separable(5, l=40)
    sol = fit_checked(X, y, f"hard_{form}", backend)
    nw = np.linalg.norm(sol.w)
    dist = y * (X @ sol.w + sol.b) / nw
    assert dist.min() == pytest.approx(sol.margin, rel=1e-6)
    assert sol.margin == pytest.approx(1.0 / nw, rel=1e-12)
    assert sol.alpha.sum() == pytest.approx(nw**2, rel=1e-6)
    # the support vectors are exactly the points on the margin
    on_margin = np.flatnonzero(np.abs(dist - dist.min()) < 1e-6 * max(1.0, dist.min()))
    assert set(sol.support) <= set(on_margin)
    assert np.all(sol.predict(X) == y)


# ---------------------------------------------------------------------------------------
# Every backend against every other


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("formulation", ["hard_primal", "hard_dual", "soft_l1_primal",
                                         "soft_l1_dual", "soft_l2_primal", "soft_l2_dual"])
def test_backends_agree(formulation, kernel):
    X, y = data_for(formulation, seed=7, l=40)
    Xe = np.vstack([X, eval_points(7)])
    params = dict(KERNEL_PARAMS[kernel], **c_kw(formulation, C=2.0))
    names = usable(FAST_BACKENDS)
    if len(names) < 2:
        pytest.skip("fewer than two QP backends installed")
    sols = {n: fit_checked(X, y, formulation, n, **params) for n in names}
    for a, b in itertools.combinations(names, 2):
        try:
            assert_same_classifier(sols[a], sols[b], Xe)
        except AssertionError as exc:
            raise AssertionError(f"{a} vs {b}: {exc}") from None


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("formulation", ["hard_primal", "hard_dual", "soft_l1_primal",
                                         "soft_l1_dual", "soft_l2_primal", "soft_l2_dual"])
def test_every_backend_agrees_on_small_data(formulation, kernel):
    """All six QP backends, SCIP included, on data small enough for SCIP."""
    X, y = data_for(formulation, seed=11, l=SCIP_MAX_POINTS)
    Xe = np.vstack([X, eval_points(11)])
    params = dict(KERNEL_PARAMS[kernel], **c_kw(formulation, C=1.0))
    names = usable(QP_BACKENDS)
    if len(names) < 2:
        pytest.skip("fewer than two QP backends installed")
    sols = {n: fit_checked(X, y, formulation, n, **params) for n in names}
    for a, b in itertools.combinations(names, 2):
        # SCIP's primal is accurate in objective (~1e-9), so in w only to ~sqrt of that
        atol = 1e-4 if "scip" in (a, b) and formulation.endswith("primal") else 1e-5
        try:
            assert_same_classifier(sols[a], sols[b], Xe, atol=atol)
        except AssertionError as exc:
            raise AssertionError(f"{a} vs {b}: {exc}") from None


# ---------------------------------------------------------------------------------------
# scikit-learn's SVC (libsvm) against the 1-norm dual


def _svc_dual_objective(svc, K):
    """e'alpha - 1/2 alpha'G alpha from libsvm's dual_coef_ (= y_i alpha_i on the SVs)."""
    dc = svc.dual_coef_[0]
    sv = svc.support_
    return float(np.abs(dc).sum() - 0.5 * dc @ K[np.ix_(sv, sv)] @ dc)


@pytest.mark.parametrize("C", [0.01, 0.5, 10.0])
@pytest.mark.parametrize("kernel", ["linear", "rbf", "precomputed"])
@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_soft_l1_dual_matches_sklearn(backend, kernel, C):
    """At C = 0.01 no vector is free (every alpha at 0 or C): b is then the midpoint of the
    interval the KKT conditions allow, as libsvm takes it -- a sign or bound error in that
    branch changes b here."""
    from sklearn.svm import SVC

    require(backend)
    X, y = blobs(21, l=50, d=3, sep=1.2)
    Xe = eval_points(21, d=3)
    if kernel == "linear":
        K, Ke = X @ X.T, Xe @ X.T
        svc = SVC(C=C, kernel="linear", tol=1e-10, shrinking=False).fit(X, y)
        svc_f = svc.decision_function(Xe)
        sol = fit_checked(X, y, "soft_l1_dual", backend, C=C, kernel="linear")
        f = sol.decision_function(Xe)
    elif kernel == "rbf":
        K, Ke = rbf_gram(X, X, GAMMA), rbf_gram(Xe, X, GAMMA)
        svc = SVC(C=C, kernel="rbf", gamma=GAMMA, tol=1e-10, shrinking=False).fit(X, y)
        svc_f = svc.decision_function(Xe)
        sol = fit_checked(X, y, "soft_l1_dual", backend, C=C, kernel="rbf", gamma=GAMMA)
        f = sol.decision_function(Xe)
    else:
        K, Ke = rbf_gram(X, X, GAMMA), rbf_gram(Xe, X, GAMMA)
        svc = SVC(C=C, kernel="precomputed", tol=1e-10, shrinking=False).fit(K, y)
        svc_f = svc.decision_function(Ke)
        sol = fit_checked(K, y, "soft_l1_dual", backend, C=C, kernel="precomputed")
        f = sol.decision_function(Ke)
    assert_rel(sol.objective, _svc_dual_objective(svc, K), 1e-6, "dual objective vs libsvm")
    assert sol.intercept_[0] == pytest.approx(svc.intercept_[0], abs=1e-5)
    np.testing.assert_array_equal(np.sort(sol.support_), np.sort(svc.support_))
    order = np.argsort(svc.support_)
    np.testing.assert_allclose(sol.dual_coef_[0], svc.dual_coef_[0][order], atol=1e-5 * C)
    np.testing.assert_allclose(f, svc_f, atol=1e-5 * max(1.0, np.abs(svc_f).max()))
    np.testing.assert_array_equal(sol.predict(Xe if kernel != "precomputed" else Ke),
                                  svc.predict(Xe if kernel != "precomputed" else Ke))
    if kernel == "linear":
        np.testing.assert_allclose(sol.coef_, svc.coef_, atol=1e-5 * max(1.0, C))
        np.testing.assert_allclose(sol.coef, svc.coef_[0], atol=1e-5 * max(1.0, C))
    if C == 0.01:
        free = (sol.alpha > 1e-6 * C) & (sol.alpha < C * (1 - 1e-6))
        assert not free.any(), "test design: no free vector at this C"


def test_a_kernel_svm_s_margin_is_one_over_the_norm_of_its_own_w():
    """The Solution's margin of a kernel SVM is ``1 / |w|`` of the classifier returned,
    ``|w|^2 = (y alpha)' K (y alpha)`` with K evaluated by scikit-learn -- solved without
    the model (libsvm), on the dense model (Clarabel) and on a low-rank factor (its own K,
    ``L L'``)."""
    from sklearn.metrics.pairwise import rbf_kernel

    import svm_models as sm

    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3, 1, -1)
    K = rbf_kernel(X, gamma=0.7)
    for solver, kw in (("libsvm", {}), ("clarabel", {"quad_form": "dense"})):
        sol = sm.fit(X, y, "soft_l1_dual", solver=solver, C=3.0, kernel="rbf", gamma=0.7, **kw)
        ya = np.where(y > 0, 1.0, -1.0) * sol.alpha
        assert sol.margin == pytest.approx(1.0 / np.sqrt(ya @ K @ ya), rel=1e-12)
    sol = sm.fit(X, y, "soft_l1_dual", solver="clarabel", C=3.0, kernel="rbf", gamma=0.7,
                 kernel_rank=10)
    z = sm.api.the_svm_block(sol.model)._svm.L.T @ (np.where(y > 0, 1.0, -1.0) * sol.alpha)
    assert sol.margin == pytest.approx(1.0 / np.sqrt(z @ z), rel=1e-12)

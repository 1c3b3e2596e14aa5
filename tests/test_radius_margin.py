"""Radius-margin SVMs (formulations/radius_margin.md): every form against every other.

* R-SVM_mu+: the joint convex problem (every capable backend) against the two-step method
  (cutting planes on mu with the catalogue's gradient; inner SVMs by PIQP), features and kernels;
* R-SVM+: primal vs dual vs two-step (on beta), soft and hard margin;
* kernelized R-SVM+: compact vs pairwise form, and vs an independent evaluation of its objective;
* constraint generation vs all pairs, the certificate vs a brute-force scan of all pairs;
* the radii: R_O <= R <= sqrt(2m/(m+1)) R_O (Jung), the regular simplex breaking the
  appendix's (1 + sqrt 3)/2;
* mutable C and lam, the lam path, bad input.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import svm_models as sm
from svm_models import datasets
from svm_models.errors import InfeasibleError, ParameterError

from conftest import require

OBJ_RTOL = 1e-6
W_ATOL = 1e-4

#: backends for the SOCP/QCQP forms, with the largest problem each gets here
CONIC = ("clarabel", "ipopt", "gurobi", "scip")


def seeded(seed=0, l=40, d=4, noise=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(l, d))
    X[:, 1] *= 2.0
    y = np.where(X[:, 0] + 0.5 * X[:, 1] - 0.4 * X[:, -1] + noise * rng.normal(size=l) > 0, 1, -1)
    return X, y


def separable(seed=2, l=40, d=4, gap=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3 * l, d))
    s = X[:, 0] + 0.5 * X[:, 1]
    keep = np.flatnonzero(np.abs(s) > gap)[:l]
    return X[keep], np.where(s[keep] > 0, 1, -1)


@pytest.fixture(scope="module")
def cancer():
    X, _, y, _ = datasets.breast_cancer()
    return X[:80, :6], y[:80]


def data_for(case, cancer):
    return {"seeded": seeded(), "cancer": cancer, "separable": separable()}[case]


def size_for(solver, X, y, l_max=None):
    """Gurobi's licence (<= 200 variables with a quadratic part) and SCIP's speed: small data."""
    if solver == "scip":
        return X[:10], y[:10]
    if l_max is not None:
        return X[:l_max], y[:l_max]
    return X, y


#: SCIP states the cones in squared form, ``w_k^2 - s_k mu_k <= 0``, and meets them to its
#: feasibility tolerance 1e-9 (its floor here): at the apex mu_k = 0 that lets |w_k| reach
#: 3e-5, and the objective lands ~1e-5 below the optimum (measured: 2e-5 .. 6e-5 relative)
SCIP_OBJ_RTOL = 1e-4


def assert_same(a, b, *, w=True, bias=True, what=""):
    rtol = SCIP_OBJ_RTOL if "scip" in (a.solver, b.solver) else OBJ_RTOL
    assert abs(a.objective - b.objective) <= rtol * max(1.0, abs(b.objective)), (
        what, a.objective, b.objective)
    if w:
        assert np.max(np.abs(a.w - b.w)) <= W_ATOL, (what, a.w, b.w)
    if bias:
        assert abs(a.b - b.b) <= W_ATOL, (what, a.b, b.b)


# ---------------------------------------------------------------------------------------
# R-SVM_mu+: joint vs two-step


@pytest.mark.parametrize("solver", CONIC)
@pytest.mark.parametrize("case,C", [("seeded", 1.0), ("cancer", 0.5), ("separable", None)])
def test_mu_plus_joint_equals_two_step(solver, case, C, cancer):
    require(solver)
    X, y = size_for(solver, *data_for(case, cancer))
    joint = sm.fit(X, y, formulation="rsvm_mu_plus", solver=solver, C=C, lam=0.3,
                   time_limit=120.0)   # (the answer, not the time: Ipopt on a busy machine)
    two = sm.two_step(X, y, "rsvm_mu_plus", "piqp", C=C, lam=0.3)
    assert two.extra["two_step"]["gap"] <= 1e-8 * max(1.0, abs(two.objective))
    assert_same(joint, two, what=solver)
    assert np.max(np.abs(joint.mu - two.mu)) <= 1e-3
    assert abs(joint.mu.sum() - 1.0) <= 1e-7 and joint.mu.min() >= 0
    # the objective is the problem's: 1/2 sum w_k^2/mu_k + lam r + C sum xi, r the true radius
    mu = np.maximum(joint.mu, 1e-300)
    keep = joint.mu > 1e-7
    d2 = max(0.5 * float(np.sum(joint.mu * (X[i] - X[j]) ** 2))
             for i, j in itertools.combinations(range(len(y)), 2))
    xi = np.maximum(0.0, 1.0 - np.where(y > 0, 1, -1) * (X @ joint.w + joint.b))
    value = 0.5 * np.sum(joint.w[keep] ** 2 / mu[keep]) + 0.3 * d2 + (C or 0.0) * xi.sum()
    assert abs(value - joint.objective) <= 1e-5 * max(1.0, joint.objective)
    assert abs(joint.r - d2) <= 1e-5 * max(1.0, d2)


def test_mu_plus_gradient_is_specs(cancer):
    """The catalogue's gradient, (lam/2)(x_i*k - x_j*k)^2 - 1/2 (sum_i a_i y_i x_ik)^2, against
    central differences of J(mu) = D_SVM(K_mu) + lam r(mu) (the appendix's, without the 1/2,
    is off by a factor of 2 in the radius part)."""
    X, y = seeded(3, l=30, d=3)
    lam = 0.7
    ys = np.where(y > 0, 1.0, -1.0)

    def J(mu):
        s = sm.fit(X * np.sqrt(mu), y, formulation="soft_l1_dual", solver="piqp", C=1.0)
        d2 = max(np.sum(mu * (X[i] - X[j]) ** 2) for i, j in itertools.combinations(range(30), 2))
        return s.objective + lam * 0.5 * d2, s

    mu = np.array([0.5, 0.3, 0.2])
    val, s = J(mu)
    pairs = list(itertools.combinations(range(30), 2))
    i, j = max(pairs, key=lambda p: np.sum(mu * (X[p[0]] - X[p[1]]) ** 2))
    grad = lam / 2 * (X[i] - X[j]) ** 2 - 0.5 * (X.T @ (ys * s.alpha)) ** 2
    h = 1e-5
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        fd = (J(mu + e)[0] - J(mu - e)[0]) / (2 * h)
        assert abs(fd - grad[k]) <= 1e-4 * max(1.0, abs(grad[k])), (k, fd, grad[k])


def test_mu_plus_kernels_joint_equals_two_step():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(36, 3))
    y = np.where(X[:, 0] ** 2 + X[:, 1] - 1 + 0.2 * rng.normal(size=36) > 0, 1, -1)
    ks = ["linear", {"kernel": "rbf", "gamma": 0.5},
          {"kernel": "poly", "degree": 2, "gamma": 0.5, "coef0": 1.0}]
    joint = sm.fit(X, y, formulation="rsvm_mu_plus", solver="clarabel", C=1.0, lam=0.2, kernels=ks)
    two = sm.two_step(X, y, "rsvm_mu_plus", "piqp", C=1.0, lam=0.2, kernels=ks)
    assert_same(joint, two, w=False, bias=False)
    assert np.max(np.abs(joint.mu - two.mu)) <= 1e-3
    assert abs(joint.b - two.b) <= W_ATOL
    Xn = rng.normal(size=(7, 3))
    assert np.allclose(joint.decision_function(Xn), two.decision_function(Xn), atol=1e-4)
    back = sm.Solution.from_json(joint.to_json())
    assert np.array_equal(back.decision_function(Xn), joint.decision_function(Xn))
    assert np.array_equal(back.mu, joint.mu)


# ---------------------------------------------------------------------------------------
# R-SVM+: primal vs dual vs two-step


@pytest.mark.parametrize("solver", CONIC)
@pytest.mark.parametrize("case,C", [("seeded", 1.0), ("cancer", 0.5), ("separable", None)])
def test_plus_primal_dual_two_step_agree(solver, case, C, cancer):
    require(solver)
    X, y = size_for(solver, *data_for(case, cancer))
    primal = sm.fit(X, y, formulation="rsvm_plus_primal", solver=solver, C=C, lam=0.4)
    two = sm.two_step(X, y, "rsvm_plus_primal", "piqp", C=C, lam=0.4)
    assert_same(primal, two, what=f"primal/{solver}")
    # the dual: all pairs are variables; Gurobi's licence takes up to 200 of them
    Xd, yd = (X[:14], y[:14]) if solver == "gurobi" else (X, y)
    dual = sm.fit(Xd, yd, formulation="rsvm_plus_dual", solver=solver, C=C, lam=0.4)
    ref = primal if Xd.shape[0] == X.shape[0] else sm.fit(
        Xd, yd, formulation="rsvm_plus_primal", solver="clarabel", C=C, lam=0.4)
    assert_same(dual, ref, what=f"dual/{solver}")
    assert abs(dual.r - ref.r) <= 1e-4 * max(1.0, ref.r)
    # the dual's beta sums to lam; the primal's radius is the largest pair row
    assert abs(dual.beta.sum() - 0.4) <= 1e-6
    w2 = primal.w ** 2
    r_all = max(0.5 * float(w2 @ (X[i] - X[j]) ** 2)
                for i, j in itertools.combinations(range(len(y)), 2))
    assert abs(primal.r - r_all) <= 1e-5 * max(1.0, r_all)


def test_plus_duality_gap_and_multipliers():
    """The primal's multipliers (alpha from the margin rows, beta from the radius rows) make
    the dual objective equal to the primal one; without multipliers (SCIP) they are
    recovered from the KKT conditions."""
    X, y = seeded(5, l=24, d=3)
    for solver in ("clarabel", "ipopt"):
        s = sm.fit(X, y, formulation="rsvm_plus_primal", solver=solver, C=1.0, lam=0.5)
        assert abs(s.duality_gap) <= 1e-6, (solver, s.duality_gap)
        assert abs(s.beta.sum() - 0.5) <= 1e-6
    X, y = X[:10], y[:10]
    require("scip")
    s = sm.fit(X, y, formulation="rsvm_plus_primal", solver="scip", C=1.0, lam=0.5)
    ref = sm.fit(X, y, formulation="rsvm_plus_dual", solver="clarabel", C=1.0, lam=0.5)
    assert s.extra["alpha_source"].startswith("stationarity")
    assert np.allclose(s.alpha, ref.alpha, atol=1e-3)


# ---------------------------------------------------------------------------------------
# Kernelized R-SVM+: compact vs pairwise


@pytest.mark.parametrize("kernel_kw", [{"kernel": "linear"}, {"kernel": "rbf", "gamma": 0.4}])
@pytest.mark.parametrize("C", [1.0, None])
@pytest.mark.parametrize("solver", CONIC)
def test_kernel_compact_equals_pairwise(kernel_kw, C, solver):
    require(solver)
    X, y = separable(4, l=24, d=2) if C is None else seeded(4, l=24, d=2)
    if solver in ("scip", "gurobi"):
        X, y = X[:10], y[:10]
    compact = sm.fit(X, y, formulation="rsvm_plus_kernel", solver=solver, C=C, lam=0.6,
                     radius="compact", **kernel_kw)
    pair = sm.fit(X, y, formulation="rsvm_plus_kernel", solver=solver, C=C, lam=0.6,
                  radius="pairwise", **kernel_kw)
    rtol = SCIP_OBJ_RTOL if solver == "scip" else OBJ_RTOL
    assert abs(compact.objective - pair.objective) <= rtol * max(1.0, pair.objective)
    assert np.allclose(compact.extra["f"], pair.extra["f"], atol=1e-4)
    assert abs(compact.r - pair.r) <= 1e-3 * max(1.0, pair.r)
    # independent: the objective a'Ka + lam/2 max (f_i - f_j)^2/2 + C sum xi from a and K
    K = (X @ X.T if kernel_kw["kernel"] == "linear"
         else np.exp(-0.4 * ((X[:, None] - X[None]) ** 2).sum(-1)))
    for s in (compact, pair):
        a = s.alpha
        f = K @ a
        assert np.allclose(f, s.extra["f"], atol=1e-6)
        r = 0.5 * (f.max() - f.min()) ** 2
        xi = np.maximum(0.0, 1.0 - y * (f + s.b)) if C is not None else 0.0
        value = a @ K @ a + 0.3 * r + (C or 0.0) * np.sum(xi)
        assert abs(value - s.objective) <= 1e-5 * max(1.0, s.objective)
        assert np.allclose(s.decision_function(X), f + s.b, atol=1e-5)


@pytest.mark.parametrize("solver", ["highs", "piqp", "clarabel", "ipopt", "gurobi", "scip"])
def test_kernel_compact_every_qp_backend(solver):
    require(solver)
    X, y = seeded(6, l=30, d=3)
    if solver in ("scip", "gurobi"):
        X, y = X[:12], y[:12]
    ref = sm.fit(X, y, formulation="rsvm_plus_kernel", solver="clarabel", C=1.0, lam=0.5,
                 kernel="rbf", gamma=0.3)
    s = sm.fit(X, y, formulation="rsvm_plus_kernel", solver=solver, C=1.0, lam=0.5,
               kernel="rbf", gamma=0.3)
    assert abs(s.objective - ref.objective) <= OBJ_RTOL * max(1.0, ref.objective)
    assert np.allclose(s.extra["f"], ref.extra["f"], atol=1e-4)


# ---------------------------------------------------------------------------------------
# Constraint generation


@pytest.mark.parametrize("name", ["rsvm_mu_plus", "rsvm_plus_primal"])
def test_generation_equals_all_pairs_and_certificate_is_true(name):
    X, y = seeded(7, l=60, d=5)
    full = sm.fit(X, y, formulation=name, solver="clarabel", C=1.0, lam=0.5, pairs="all")
    gen = sm.fit(X, y, formulation=name, solver="clarabel", C=1.0, lam=0.5, pairs="generate",
                 batch=3)
    assert_same(gen, full, what=name)
    cert = gen.extra["pair_generation"]
    assert cert["all_pairs"] == 60 * 59 // 2 and cert["pairs"] < cert["all_pairs"]
    assert gen.path == "fast"          # the pairs appended between solves stayed proved
    # brute force over every pair: the largest violation the certificate reports
    c = gen.mu if name == "rsvm_mu_plus" else gen.w ** 2
    worst = max(0.5 * float(c @ (X[i] - X[j]) ** 2)
                for i, j in itertools.combinations(range(60), 2)) - gen.r
    assert abs(worst - cert["max_violation"]) <= 1e-7 * max(1.0, gen.r)
    assert worst <= cert["tol"]


def test_most_violated_matches_a_scan():
    from svm_models.model.families import farthest_pairs

    rng = np.random.default_rng(8)
    Z = rng.normal(size=(300, 4))
    d2, I, J = farthest_pairs(Z, 5, chunk=37)
    scan = sorted(((float(np.sum((Z[i] - Z[j]) ** 2)), i, j)
                   for i, j in itertools.combinations(range(300), 2)), reverse=True)[:5]
    assert np.allclose(d2, [s[0] for s in scan], rtol=1e-12)
    assert [(int(a), int(b)) for a, b in zip(I, J)] == [(s[1], s[2]) for s in scan]


# ---------------------------------------------------------------------------------------
# The radii


def regular_simplex(n):
    return np.eye(n)     # n points, pairwise distance sqrt 2, in an (n-1)-dimensional plane


def test_regular_simplex_breaks_the_appendix_bound():
    for n in (3, 10, 14, 15, 20):
        X = regular_simplex(n)
        R, RO = sm.enclosing_ball_radius(X), sm.half_diameter(X)
        assert abs(RO - np.sqrt(2) / 2) <= 1e-12
        assert abs(R / RO - np.sqrt(2 * (n - 1) / n)) <= 1e-6
        m = n - 1
        assert R <= np.sqrt(2 * m / (m + 1)) * RO + 1e-7      # Jung: equality on the simplex
        assert (R / RO > (1 + np.sqrt(3)) / 2) == (n >= 15)


@pytest.mark.parametrize("seed", range(8))
def test_radius_bounds_property(seed):
    rng = np.random.default_rng(seed)
    l, d = int(rng.integers(2, 40)), int(rng.integers(1, 6))
    X = rng.normal(size=(l, d)) * rng.uniform(0.1, 3.0, size=d)
    R, RO = sm.enclosing_ball_radius(X), sm.half_diameter(X)
    assert RO <= R + 1e-7
    assert R <= np.sqrt(2 * d / (d + 1)) * RO + 1e-7
    # a point inside every ball of radius R around the centre: the centre is the model's
    # (checked independently: no point is farther than R from sum a_i x_i)
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    Rk = sm.enclosing_ball_radius(X, "rbf", gamma=0.5)
    assert abs(Rk - sm.enclosing_ball_radius(K, "precomputed")) <= 1e-7
    ROk = sm.half_diameter(X, "rbf", gamma=0.5)
    assert abs(ROk - sm.half_diameter(K, "precomputed")) <= 1e-12
    m = np.linalg.matrix_rank(K)
    assert ROk <= Rk + 1e-7 and Rk <= np.sqrt(2 * m / (m + 1)) * ROk + 1e-7


def test_enclosing_ball_against_a_direct_minimisation():
    from scipy.optimize import minimize

    rng = np.random.default_rng(11)
    X = rng.normal(size=(25, 3))
    R = sm.enclosing_ball_radius(X)
    res = minimize(lambda c: np.max(np.sum((X - c) ** 2, axis=1)), X.mean(0), method="Nelder-Mead",
                   options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000})
    assert abs(R - np.sqrt(res.fun)) <= 1e-5


# ---------------------------------------------------------------------------------------
# Mutable parameters and the lam path


def test_lam_and_C_are_mutable():
    X, y = seeded(9, l=30, d=3)
    m = sm.build("rsvm_plus_primal", X, y, C=1.0, lam=0.2)
    sm.solve(m, "clarabel")
    m.lam.set_value(0.9)
    m.C.set_value(0.5)
    again = sm.solve(m, "clarabel")
    fresh = sm.fit(X, y, formulation="rsvm_plus_primal", solver="clarabel", C=0.5, lam=0.9)
    assert again.path == "fast"
    assert_same(again, fresh)
    assert again.lam == 0.9
    d = sm.build("rsvm_plus_dual", X, y, C=1.0, lam=0.2)
    d.lam.set_value(0.9)
    d.C.set_value(0.5)
    # every support vector of this one is at the bound C: b is any point of an interval
    # (the primal's solver returns one, the dual's KKT rule its midpoint)
    assert_same(sm.solve(d, "clarabel"), fresh, bias=False)


def test_lam_path_equals_separate_fits():
    X, y = seeded(10, l=30, d=3)
    lams = [0.1, 0.5, 2.0]
    for name in ("rsvm_mu_plus", "rsvm_plus_kernel"):
        path = sm.lam_path(X, y, lams, name, "clarabel", C=1.0)
        for lam, s in zip(lams, path):
            ref = sm.fit(X, y, formulation=name, solver="clarabel", C=1.0, lam=lam)
            assert s.lam == lam
            assert abs(s.objective - ref.objective) <= OBJ_RTOL * max(1.0, ref.objective)
    gen = sm.lam_path(X, y, lams, "rsvm_plus_primal", "clarabel", C=1.0, pairs="generate")
    full = sm.lam_path(X, y, lams, "rsvm_plus_primal", "clarabel", C=1.0, pairs="all")
    for a, b in zip(gen, full):
        assert_same(a, b)
    # a larger lam buys a smaller radius
    assert full[0].r >= full[1].r >= full[2].r


# ---------------------------------------------------------------------------------------
# Bad input


def test_bad_input_is_refused_clearly():
    X, y = seeded(0, l=20, d=3)
    with pytest.raises(ParameterError, match="lam"):
        sm.fit(X, y, formulation="rsvm_plus_primal", solver="clarabel", lam=-1.0)
    with pytest.raises(ParameterError, match="lam"):
        sm.build("rsvm_mu_plus", X, y, lam="big")
    with pytest.raises(ParameterError, match="radius"):
        sm.build("rsvm_plus_kernel", X, y, radius="ring")
    with pytest.raises(ParameterError, match="pairs"):
        sm.build("rsvm_plus_primal", X, y, pairs="some")
    with pytest.raises(ParameterError, match="pairs"):
        sm.build("rsvm_plus_primal", X, y, pairs=([3], [1]))
    with pytest.raises(ParameterError, match="kernels"):
        sm.build("rsvm_mu_plus", X, y, kernels="rbf")
    with pytest.raises(ParameterError, match="precomputed"):
        sm.build("rsvm_mu_plus", X, y, kernels=["precomputed"])
    with pytest.raises(ParameterError, match="takes no parameter"):
        sm.build("rsvm_plus_dual", X, y, kernel="rbf")
    from svm_models.errors import CapabilityError

    with pytest.raises(CapabilityError, match="clarabel"):
        sm.fit(X, y, formulation="rsvm_plus_primal", solver="highs")
    with pytest.raises(CapabilityError, match="clarabel"):
        sm.fit(X, y, formulation="rsvm_plus_kernel", solver="piqp", radius="pairwise")


def test_hard_margin_on_inseparable_data_says_so():
    X, y = seeded(0, l=30, d=3, noise=2.0)
    with pytest.raises(InfeasibleError, match="not separable.*C="):
        sm.fit(X, y, formulation="rsvm_plus_primal", solver="clarabel", C=None, lam=0.5)

"""The 1-norm SVM (formulations/l1_norm_primal.md), a linear program: every LP backend
against scipy's linprog on the same LP written out by hand, the certificate on a problem
solved by hand, sparsity, weights, the estimator and cross-validation."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import LP_BACKENDS
from scipy.optimize import linprog

import svm_models as sm
from svm_models.datasets import teaching_2d
from svm_models.formulations.l1_norm import certificate, dual_feasible

BACKENDS = LP_BACKENDS


def reference(X, y, C, weight=None):
    """The LP by hand for scipy: w = w+ - w-, variables (w+, w-, b, xi); (objective, w, b)."""
    l, d = X.shape
    s = np.where(y == np.unique(y)[1], 1.0, -1.0)
    cw = C * (np.ones(l) if weight is None else np.asarray(weight, dtype=float))
    A = -np.hstack([s[:, None] * X, -s[:, None] * X, s[:, None], np.eye(l)])
    r = linprog(np.r_[np.ones(2 * d), 0.0, cw], A_ub=A, b_ub=-np.ones(l),
                bounds=[(0, None)] * (2 * d) + [(None, None)] + [(0, None)] * l, method="highs")
    assert r.status == 0
    return r.fun, r.x[:d] - r.x[d:2 * d], r.x[2 * d]


def sparse_data(seed=0, l=60, d=10):
    """Two informative features, eight of noise."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(l) % 2 == 0, 1, -1)
    X = rng.normal(size=(l, d))
    X[:, :2] += 1.5 * y[:, None] * np.array([1.0, 0.6])
    return X, y


@pytest.mark.parametrize("solver", BACKENDS)
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_every_backend_equals_linprog(solver, C):
    X, y = teaching_2d(40, separation=1.5)
    ref, w, _ = reference(X, y, C)
    sol = sm.fit(X, y, "l1_norm_primal", solver=solver, C=C)
    assert sol.status is sm.Status.optimal
    assert sol.objective == pytest.approx(ref, rel=1e-7)
    # the classifier returned: its own primal objective (slacks recomputed) is the optimum
    s = np.where(y == sol.classes[1], 1.0, -1.0)
    own = np.abs(sol.w).sum() + C * np.maximum(0, 1 - s * (X @ sol.w + sol.b)).sum()
    assert own == pytest.approx(ref, rel=1e-6)
    if solver == "scip":   # no duals: no certificate, said why
        assert sol.duality_gap is None and "no duals" in sol.extra["diagnostics"]
    else:
        assert abs(sol.duality_gap) < 1e-6
        assert sol.dual_objective == pytest.approx(ref, rel=1e-6)
        assert sol.kkt["dual_infeasibility"] < 1e-6 and sol.kkt["balance"] < 1e-6


def test_the_certificate_of_a_problem_solved_by_hand():
    """x = -1, +1 with labels -1, +1: w = 1, b = 0, objective |w| = 1 (C large); the dual:
    alpha_1 = alpha_2 = a with |X'(y alpha)| = 2a <= 1, so a = 1/2 and sum alpha = 1."""
    X, y = np.array([[-1.0], [1.0]]), np.array([-1.0, 1.0])
    C_i = np.full(2, 10.0)
    cert = certificate(X, y, C_i, np.array([1.0]), 0.0, np.array([0.5, 0.5]))
    assert cert["primal"] == 1.0 and cert["dual"] == 1.0 and cert["gap"] == 0.0
    assert cert["dual_infeasibility"] == 0.0 and cert["balance"] == 0.0
    # a classifier that is not optimal: w = 2 pays 2; alpha too large is dual infeasible
    cert = certificate(X, y, C_i, np.array([2.0]), 0.0, np.array([0.6, 0.6]))
    assert cert["gap"] == pytest.approx((2.0 - 1.2) / 2.0)
    assert cert["dual_infeasibility"] == pytest.approx(0.2)
    sol = sm.fit(X, np.array([0, 1]), "l1_norm_primal", solver="highs", C=10.0)
    assert sol.w == pytest.approx([1.0]) and sol.b == pytest.approx(0.0, abs=1e-12)
    assert sol.alpha == pytest.approx([0.5, 0.5]) and sol.objective == pytest.approx(1.0)


def test_multipliers_are_made_dual_feasible_before_they_certify():
    """A gap over multipliers that break the dual constraints proves nothing: on the problem
    solved by hand, alpha = (0.6, 0.6) has |X'(y alpha)| = 1.2 > 1 and sum 1.2 above the
    optimum 1; made feasible it is (0.5, 0.5); an unbalanced (0.5, 0.7) becomes (0.5, 0.5)
    too; a box violation is clipped. On a real problem, every backend's returned alpha is
    dual feasible and its sum never exceeds linprog's optimum."""
    X, y = np.array([[-1.0], [1.0]]), np.array([-1.0, 1.0])
    C_i = np.full(2, 10.0)
    np.testing.assert_allclose(dual_feasible(X, y, C_i, np.array([0.6, 0.6])), [0.5, 0.5])
    np.testing.assert_allclose(dual_feasible(X, y, C_i, np.array([0.5, 0.7])), [0.5, 0.5])
    np.testing.assert_allclose(dual_feasible(X, y, np.full(2, 0.3), np.array([0.6, 0.6])),
                               [0.3, 0.3])
    Xt, yt = teaching_2d(40, separation=1.5)
    ref, _, _ = reference(Xt, yt, 1.0)
    for solver in ("highs", "clarabel", "ipopt"):
        sol = sm.fit(Xt, yt, "l1_norm_primal", solver=solver, C=1.0)
        s = np.where(yt == sol.classes[1], 1.0, -1.0)
        assert np.max(np.abs(Xt.T @ (s * sol.alpha))) <= 1.0 + 1e-12
        assert abs(s @ sol.alpha) <= 1e-12 * sol.alpha.sum()
        assert sol.alpha.sum() <= ref * (1 + 1e-12) and sol.dual_objective == sol.alpha.sum()


def test_the_1_norm_selects_features():
    X, y = sparse_data()
    ref, w_ref, _ = reference(X, y, 0.05)
    sol = sm.fit(X, y, "l1_norm_primal", solver="highs", C=0.05)
    assert sol.objective == pytest.approx(ref, rel=1e-8)
    np.testing.assert_allclose(sol.w, w_ref, atol=1e-8)
    kept = sol.extra["features_kept"]
    assert set(kept) == set(np.flatnonzero(np.abs(w_ref) > 1e-9)) and {0, 1} <= set(kept)
    assert len(kept) < 10   # sparse: noise features get w_j = 0 exactly
    # the 2-norm SVM keeps every feature
    l2 = sm.fit(X, y, "soft_l1_primal", solver="highs", C=0.05)
    assert np.all(np.abs(l2.w) > 1e-9)


@pytest.mark.parametrize("solver", ["highs", "clarabel"])
def test_weights_are_per_point_C(solver):
    X, y = teaching_2d(40, separation=1.0)
    wt = np.linspace(0.0, 3.0, len(y))   # the first point's weight is 0: it does not count
    ref, w, b = reference(X, y, 0.7, wt)
    sol = sm.fit(X, y, "l1_norm_primal", solver=solver, C=0.7, sample_weight=wt)
    assert sol.objective == pytest.approx(ref, rel=1e-7)
    assert sol.alpha[0] == 0.0 and np.all(sol.alpha <= 0.7 * wt + 1e-9)
    # repeated points are weights: point i twice equals weight 2
    X2, y2 = np.vstack([X, X[:5]]), np.concatenate([y, y[:5]])
    w2 = np.ones(len(y))
    w2[:5] = 2.0
    a = sm.fit(X2, y2, "l1_norm_primal", solver=solver, C=0.7)
    c = sm.fit(X, y, "l1_norm_primal", solver=solver, C=0.7, sample_weight=w2)
    assert a.objective == pytest.approx(c.objective, rel=1e-7)


def test_a_changed_C_is_read_on_the_fast_path():
    X, y = sparse_data(2)
    m = sm.build("l1_norm_primal", X, y, C=0.05)
    first = sm.solve(m, "highs")
    m.C = 2.0
    again = sm.solve(m, "highs")
    assert again.path == "fast" and again.C == 2.0
    assert first.objective == pytest.approx(reference(X, y, 0.05)[0], rel=1e-8)
    assert again.objective == pytest.approx(reference(X, y, 2.0)[0], rel=1e-8)


def test_a_changed_model_is_solved_as_changed_and_says_so():
    import pyomo.environ as pyo

    X, y = sparse_data()
    m = sm.build("l1_norm_primal", X, y, C=0.5)
    m.cap = pyo.Constraint(expr=m.w[0] <= 0.1)   # binding: w_0 is larger at the optimum
    free = sm.fit(X, y, "l1_norm_primal", solver="highs", C=0.5)
    assert free.w[0] > 0.1
    sol = sm.solve(m, "highs")
    assert sol.w[0] == pytest.approx(0.1) and sol.path == "mixed"
    assert sol.duality_gap is None and "not computed" in sol.extra["diagnostics"]
    assert sol.objective > free.objective


def test_the_estimator_and_cross_validation():
    X, y = sparse_data(1)
    clf = sm.SVMClassifier(formulation="l1_norm_primal", solver="highs", C=0.5).fit(X, y)
    sol = sm.fit(X, y, "l1_norm_primal", solver="highs", C=0.5)
    np.testing.assert_allclose(clf.coef_.ravel(), sol.w, atol=1e-9)
    np.testing.assert_allclose(clf.decision_function(X), X @ sol.w + sol.b, atol=1e-9)
    cv = sm.SVMClassifierCV(formulation="l1_norm_primal", solver="highs", Cs=[0.05, 0.5, 5.0],
                            cv=3).fit(X, y)
    assert cv.best_params_["C"] in (0.05, 0.5, 5.0) and cv.score(X, y) > 0.8


def test_C_inf_names_the_way_out():
    """C = inf is the hard margin wherever a formulation has one; the 1-norm-of-w SVM has no
    hard variant built: a ParameterError naming a finite C and the hard-margin formulations
    (not "C must be a finite positive number"); the estimator says the same."""
    import math

    X, y = teaching_2d()
    for call in (lambda: sm.build("l1_norm_primal", X, y, C=math.inf),
                 lambda: sm.fit(X, y, formulation="l1_norm_primal", C=math.inf),
                 lambda: sm.SVMClassifier(formulation="l1_norm_primal", C=math.inf).fit(X, y)):
        with pytest.raises(sm.ParameterError, match="hard_primal") as exc:
            call()
        assert "finite C" in str(exc.value)

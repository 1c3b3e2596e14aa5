"""The least-squares SVM (formulations/ls_svm_primal.md), a QP with equality rows: every QP
backend against the closed form -- its optimality conditions solved as one linear system with
numpy --, the certificate on a problem solved by hand, the multipliers against
``alpha_i = C weight_i e_i``, weights, predictions, a changed C and a changed model, and the
ways in: ``fit``, the estimator, the command line."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DUAL_BACKENDS, require

import svm_models as sm
from svm_models.datasets import teaching_2d
from svm_models.errors import ParameterError
from svm_models.formulations.ls_svm import bias, certificate, dual_feasible

#: how close w and b come (relative): HiGHS's QP solver minimises f(x) + 1e-7/2 |x|^2 (its
#: qp_regularization_value, solvers/highs.py), 3e-7 off w at C = 0.1 (1e-12 at 1e-12)
W_TOL = {"highs": 1e-6}
#: SCIP (no duals): the problem is convex, which SCIP is told (ls_svm_primal.md)
SCIP_OPTIONS = {"constraints/nonlinear/assumeconvex": True}


def signs(y):
    return np.where(y == np.unique(y)[1], 1.0, -1.0)


def reference(X, y, C, weight=None):
    """The optimality conditions as one linear system (Suykens and Vandewalle): on the points
    that count (``weight > 0``), ``[[0, s'], [s, G + D]] [b; alpha] = [0; 1]`` with
    ``G = D_s X X' D_s``, ``D = diag(1 / (C weight))``; then ``w = X'(s alpha)``, ``e``
    from the rows, the objective. Returns ``(objective, w, b, alpha)`` (alpha 0 off them)."""
    s = signs(y)
    l = len(s)
    wt = np.ones(l) if weight is None else np.maximum(np.asarray(weight, dtype=float), 0.0)
    on = wt > 0
    Xo, so = X[on], s[on]
    n = len(so)
    G = np.outer(so, so) * (Xo @ Xo.T)
    A = np.block([[np.zeros((1, 1)), so[None, :]],
                  [so[:, None], G + np.diag(1.0 / (C * wt[on]))]])
    z = np.linalg.solve(A, np.r_[0.0, np.ones(n)])
    alpha = np.zeros(l)
    alpha[on] = z[1:]
    b = z[0]
    w = X.T @ (s * alpha)
    e = 1.0 - s * (X @ w + b)
    return 0.5 * w @ w + 0.5 * C * (wt * e) @ e, w, b, alpha


def reference_primal(X, y, C, weight=None):
    """The same optimum another way: ``e`` substituted from the rows, the objective is a
    least-squares problem in ``(w, b)``, solved by its normal equations."""
    s = signs(y)
    l, d = X.shape
    wt = np.ones(l) if weight is None else np.maximum(np.asarray(weight, dtype=float), 0.0)
    M = np.hstack([s[:, None] * X, s[:, None]])         # rows y_i (x_i, 1): e = 1 - M (w, b)
    H = C * M.T @ (wt[:, None] * M)
    H[:d, :d] += np.eye(d)
    wb = np.linalg.solve(H, C * M.T @ wt)
    return wb[:d], wb[d]


def close(a, b, rel):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b), initial=0.0)) <= rel * max(
        1.0, float(np.max(np.abs(b), initial=0.0)))


def test_the_two_references_agree():
    X, y = teaching_2d(40, separation=1.0)
    wt = np.linspace(0.0, 3.0, 40)
    for C, weight in [(0.1, None), (10.0, None), (0.7, wt)]:
        _, w, b, _ = reference(X, y, C, weight)
        w2, b2 = reference_primal(X, y, C, weight)
        assert close(w, w2, 1e-10) and abs(b - b2) < 1e-10


@pytest.mark.parametrize("solver", DUAL_BACKENDS)
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_every_backend_equals_the_linear_system(solver, C):
    require(solver)
    X, y = teaching_2d(40, separation=1.0)              # 43 variables: Gurobi's pip licence
    obj, w, b, alpha = reference(X, y, C)
    sol = sm.fit(X, y, "ls_svm_primal", solver=solver, C=C)
    assert sol.status is sm.Status.optimal and sol.path == "fast"
    assert sol.objective == pytest.approx(obj, rel=1e-7)
    tol = W_TOL.get(solver, 1e-7)
    assert close(sol.w, w, tol) and abs(sol.b - b) <= tol * max(1.0, abs(b))
    # alpha: the multipliers
    assert sol.extra["alpha_source"] == "multipliers of margin"
    assert close(sol.alpha, alpha, 10 * tol)
    assert close(sol.dual_coef, signs(y) * alpha, 10 * tol)
    # the certificate of exactly what is returned
    s = signs(y)
    e = 1.0 - s * (X @ sol.w + sol.b)
    own = 0.5 * sol.w @ sol.w + 0.5 * C * e @ e
    assert sol.primal_objective == sol.objective == pytest.approx(own, rel=1e-14)
    np.testing.assert_allclose(sol.xi, e, rtol=1e-13, atol=1e-13)
    assert 0.0 <= sol.duality_gap + 1e-15 and sol.duality_gap < 1e-9
    assert sol.dual_objective == pytest.approx(obj, rel=1e-8)
    assert abs(s @ sol.alpha) <= 1e-14 * np.abs(sol.alpha).sum()
    assert sol.kkt["stationarity"] < 1e-6 and sol.kkt["errors"] < 1e-6
    # every point is a support vector; the margin is 1/||w||
    assert list(sol.support) == list(range(len(y)))
    assert sol.margin == pytest.approx(1.0 / np.linalg.norm(w), rel=tol)


@pytest.mark.parametrize("solver", DUAL_BACKENDS)
def test_the_multipliers_are_C_times_the_errors(solver):
    """Two readings of alpha that share nothing: the backend's multipliers of the equality
    rows, and ``C weight_i e_i`` from the primal point (what a backend without duals gets)."""
    require(solver)
    X, y = teaching_2d(30, separation=0.5, seed=3)
    wt = np.linspace(0.5, 2.0, 30)
    sol = sm.fit(X, y, "ls_svm_primal", solver=solver, C=3.0, sample_weight=wt)
    assert sol.extra["alpha_agreement"] < 1e-6
    assert close(sol.alpha, 3.0 * wt * sol.xi, 1e-6)
    # and C e itself, with no multipliers at all, is a certificate as good
    C_i = 3.0 * wt
    s = signs(y)
    from_errors = dual_feasible(s, C_i, C_i * sol.xi, 0.0)
    cert = certificate(X, s, C_i, sol.w, sol.b, from_errors)
    assert abs(cert["gap"]) < 1e-9 and cert["balance"] < 1e-14


def test_scip_without_duals_gets_alpha_and_a_certificate_from_the_errors():
    require("scip")
    X, y = teaching_2d(12, separation=1.0)
    obj, w, b, alpha = reference(X, y, 2.0)
    sol = sm.fit(X, y, "ls_svm_primal", solver="scip", C=2.0, options=SCIP_OPTIONS)
    assert sol.status is sm.Status.optimal
    assert sol.objective == pytest.approx(obj, rel=1e-7)
    assert close(sol.w, w, 1e-6) and abs(sol.b - b) < 1e-6
    assert sol.extra["alpha_source"].startswith("C weight_i e_i")
    assert close(sol.alpha, alpha, 1e-6)
    assert abs(sol.duality_gap) < 1e-7


def test_the_certificate_of_a_problem_solved_by_hand():
    """x = -1, +1 with labels -1, +1: b = 0 by symmetry, e = 1 - w on both, and
    ``w/2^2 + C (1 - w)^2`` is least at ``w = 2C / (1 + 2C)``, ``alpha = C e = C / (1 + 2C)``;
    at C = 1: w = 2/3, alpha = 1/3, objective 2/9 + 1/9 = 1/3, the dual
    ``2/3 - (2/3)^2 / 2 - 2 (1/3)^2 / 2 = 1/3``."""
    X, s = np.array([[-1.0], [1.0]]), np.array([-1.0, 1.0])
    C_i = np.ones(2)
    cert = certificate(X, s, C_i, np.array([2 / 3]), 0.0, np.array([1 / 3, 1 / 3]))
    assert cert["primal"] == pytest.approx(1 / 3, rel=1e-15)
    assert cert["dual"] == pytest.approx(1 / 3, rel=1e-15)
    assert abs(cert["gap"]) < 1e-15 and cert["stationarity"] < 1e-15 and cert["errors"] < 1e-15
    # a classifier that is not optimal: w = 1 pays 1/2; alpha = 1/2 is worth 1 - 1/2 - 1/4
    cert = certificate(X, s, C_i, np.array([1.0]), 0.0, np.array([0.5, 0.5]))
    assert cert["primal"] == 0.5 and cert["dual"] == 0.25 and cert["gap"] == 0.5
    # alpha on a point that does not count (weight 0) is no dual point at all
    assert certificate(X, s, np.array([0.0, 1.0]), np.array([1.0]), 0.0,
                       np.array([0.5, 0.5]))["dual"] == -np.inf
    # b from the balance: the C-weighted mean of y_i - w.x_i
    assert bias(X, s, C_i, np.array([2 / 3])) == 0.0
    assert bias(X, s, np.array([1.0, 3.0]), np.array([0.5])) == pytest.approx(
        (1.0 * (-1 + 0.5) + 3.0 * (1 - 0.5)) / 4.0)
    sol = sm.fit(X, np.array([0, 1]), "ls_svm_primal", solver="clarabel", C=1.0)
    assert sol.w == pytest.approx([2 / 3], rel=1e-9) and sol.b == pytest.approx(0.0, abs=1e-12)
    assert sol.alpha == pytest.approx([1 / 3, 1 / 3], rel=1e-8)
    assert sol.objective == pytest.approx(1 / 3, rel=1e-9)


def test_alpha_is_made_dual_feasible():
    """Unbalanced multipliers are projected onto ``y'alpha = 0``; a point of weight 0 and an
    alpha below the threshold become exact zeros (the support)."""
    s = np.array([-1.0, 1.0, 1.0])
    a = dual_feasible(s, np.ones(3), np.array([0.3, 0.4, 1e-12]), 1e-9)
    np.testing.assert_allclose(a, [0.35, 0.35, 0.0])
    a = dual_feasible(s, np.array([1.0, 0.0, 1.0]), np.array([0.3, 0.4, 0.4]), 0.0)
    np.testing.assert_allclose(a, [0.35, 0.0, 0.35])
    assert s @ a == 0.0


@pytest.mark.parametrize("solver", ["clarabel", "highs", "ipopt"])
def test_weights_are_per_point_C(solver):
    require(solver)
    X, y = teaching_2d(40, separation=1.0)
    wt = np.linspace(0.0, 3.0, 40)           # the first point's weight is 0: it does not count
    obj, w, b, alpha = reference(X, y, 0.7, wt)
    sol = sm.fit(X, y, "ls_svm_primal", solver=solver, C=0.7, sample_weight=wt)
    assert sol.objective == pytest.approx(obj, rel=1e-7)
    assert close(sol.w, w, 1e-7) and abs(sol.b - b) < 1e-7
    assert sol.alpha[0] == 0.0 and 0 not in sol.support and len(sol.support) == 39
    assert close(sol.alpha, alpha, 1e-6)
    assert abs(sol.duality_gap) < 1e-9
    # repeated points are weights: point i twice equals weight 2
    X2, y2 = np.vstack([X, X[:5]]), np.concatenate([y, y[:5]])
    w2 = np.ones(40)
    w2[:5] = 2.0
    a = sm.fit(X2, y2, "ls_svm_primal", solver=solver, C=0.7)
    c = sm.fit(X, y, "ls_svm_primal", solver=solver, C=0.7, sample_weight=w2)
    assert a.objective == pytest.approx(c.objective, rel=1e-7)
    assert close(a.w, c.w, 1e-7) and abs(a.b - c.b) < 1e-7


def test_a_block_holding_the_closed_form_is_certified_by_extract():
    """The closed form written into a built block by hand (no solver): ``extract`` certifies
    it, with alpha ``C e`` and, given duals of either sign, the duals themselves."""
    X, y = teaching_2d(30, separation=1.0, seed=5)
    obj, w, b, alpha = reference(X, y, 1.3)
    m = sm.build("ls_svm_primal", X, y, C=1.3)
    e = 1.0 - signs(y) * (X @ w + b)
    for j, v in enumerate(w):
        m.w[j].value = float(v)
    m.b.value = float(b)
    for i, v in enumerate(e):
        m.e[i].value = float(v)
    sol = sm.extract(m)
    assert sol.status is sm.Status.optimal and abs(sol.duality_gap) < 1e-12
    assert sol.extra["alpha_source"].startswith("C weight_i e_i")
    assert sol.objective == pytest.approx(obj, rel=1e-12) and close(sol.alpha, alpha, 1e-10)
    flipped = sm.extract(m, duals={m.margin[i]: -float(a) for i, a in enumerate(alpha)})
    assert "opposite sign" in flipped.extra["dual_sign"] and close(flipped.alpha, alpha, 1e-12)
    assert flipped.extra["alpha_agreement"] < 1e-10


def test_predictions_are_the_closed_forms():
    X, y = teaching_2d(40, separation=1.0)
    Xt, _ = teaching_2d(200, separation=1.0, seed=7)
    _, w, b, _ = reference(X, y, 1.0)
    sol = sm.fit(X, y, "ls_svm_primal", solver="clarabel", C=1.0)
    f = Xt @ w + b
    np.testing.assert_allclose(sol.decision_function(Xt), f, rtol=1e-7, atol=1e-7)
    sure = np.abs(f) > 1e-6
    np.testing.assert_array_equal(sol.predict(Xt)[sure], np.where(f >= 0, 1, -1)[sure])
    # the least-squares fit is not the hinge loss's: another classifier than soft_l1's
    l1 = sm.fit(X, y, "soft_l1_primal", solver="clarabel", C=1.0)
    assert not close(l1.w, sol.w, 1e-3)


def test_a_changed_C_is_read_on_the_fast_path():
    X, y = teaching_2d(40, separation=1.0)
    m = sm.build("ls_svm_primal", X, y, C=0.05)
    first = sm.solve(m, "piqp")
    m.C = 20.0
    again = sm.solve(m, "piqp")
    assert again.path == "fast" and again.C == 20.0
    assert first.objective == pytest.approx(reference(X, y, 0.05)[0], rel=1e-7)
    assert again.objective == pytest.approx(reference(X, y, 20.0)[0], rel=1e-7)


def test_the_general_path_solves_the_same_problem():
    X, y = teaching_2d(40, separation=1.0)
    obj, w, b, alpha = reference(X, y, 1.5)
    for solver in ("ipopt", "gurobi"):
        require(solver)
        sol = sm.fit(X, y, "ls_svm_primal", solver=solver, C=1.5, path="general")
        assert sol.path == "general" and sol.objective == pytest.approx(obj, rel=1e-7)
        assert close(sol.alpha, alpha, 1e-6) and abs(sol.duality_gap) < 1e-9


def test_a_changed_model_is_solved_as_changed_and_says_so():
    import pyomo.environ as pyo

    X, y = teaching_2d(40, separation=1.0)
    free = sm.fit(X, y, "ls_svm_primal", solver="ipopt", C=1.0)
    m = sm.build("ls_svm_primal", X, y, C=1.0)
    m.cap = pyo.Constraint(expr=m.w[0] <= 0.5 * free.w[0])   # binding
    sol = sm.solve(m, "ipopt")
    assert sol.path == "mixed" and sol.w[0] == pytest.approx(0.5 * free.w[0], rel=1e-7)
    assert sol.objective > free.objective
    assert sol.duality_gap is None and "not computed" in sol.extra["diagnostics"]
    assert sol.extra["b_source"] == "solver" and sol.extra["alpha_source"] == (
        "multipliers of margin")


def test_the_estimator_and_the_command_line_take_it(tmp_path, capsys):
    X, y = teaching_2d(40, separation=1.0)
    obj, w, b, _ = reference(X, y, 2.0)
    est = sm.SVMClassifier(formulation="ls_svm_primal", solver="clarabel", C=2.0).fit(X, y)
    assert close(est.coef_[0], w, 1e-7) and est.intercept_[0] == pytest.approx(b, abs=1e-7)
    assert len(est.support_) == 40
    np.testing.assert_array_equal(est.predict(X), est.solution_.predict(X))
    from svm_models.cli import main

    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    out = tmp_path / "m.json"
    assert main(["fit", str(data), "--formulation", "ls_svm_primal", "--solver", "clarabel",
                 "--C", "2", "-o", str(out)]) == 0
    capsys.readouterr()
    got = sm.Solution.from_json(str(out))
    assert got.formulation == "ls_svm_primal" and got.objective == pytest.approx(obj, rel=1e-7)
    assert close(got.w, w, 1e-7)
    # a kernel is refused before anything is built: the formulation is linear only
    with pytest.raises(ParameterError, match="takes no parameter.*kernel"):
        sm.fit(X, y, "ls_svm_primal", solver="clarabel", kernel="rbf")
    with pytest.raises(ParameterError, match="ls_svm_primal is linear only"):
        sm.SVMClassifier(formulation="ls_svm_primal", kernel="rbf").fit(X, y)


@pytest.mark.parametrize("name", ["ls_svm_primal", "l1_norm_primal"])
def test_a_model_feasible_by_construction_is_never_reported_infeasible(name):
    """Clarabel calls these models, on features of scale 1e-4 at C = 1e15, PrimalInfeasible:
    as built they are feasible (free errors; slacks), so that is numerical trouble, never an
    InfeasibleError. A model the user changed may really be infeasible: then it says so."""

    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3)) * 1e-4
    y = np.where(X[:, 0] + 0.3e-4 * rng.normal(size=30) > 0, 1.0, -1.0)
    with pytest.raises(sm.SolveFailedError) as info:
        sm.fit(X, y, name, "clarabel", C=1e15)
    assert not isinstance(info.value, sm.InfeasibleError)
    assert info.value.status == "numerical_error" and "feasible by construction" in str(info.value)
    m = sm.build(name, X, y, C=1.0)
    m.w[0].setlb(1.0)
    m.w[0].setub(0.0)
    with pytest.raises(sm.InfeasibleError):
        sm.solve(m, solver="clarabel")

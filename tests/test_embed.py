"""Embedding a trained SVM in another Pyomo model (svm_models.embed) and the counterfactual
example: the embedded expression against Solution.decision_function and scikit-learn, the
linear counterfactual against its closed form on several backends, the rbf counterfactual
against sampled candidates, two SVMs in one model against scipy, and the typed errors."""

import runpy
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest
from scipy.optimize import minimize
from sklearn.datasets import make_moons
from sklearn.svm import SVC

import svm_models as sm
from svm_models.embed import EmbeddedSVM, add_decision_function, optimize
from svm_models.errors import (CapabilityError, DataError, InfeasibleError,
                               LocallyInfeasibleError, ParameterError, SolveFailedError, SVMError)
from svm_models.solution import Solution
from svm_models.status import Status

from conftest import blobs, require

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = runpy.run_path(str(ROOT / "examples" / "counterfactual.py"))
X3, Y3 = blobs(0, l=20, d=3)

CASES = {
    "linear": ("soft_l1_dual", "piqp", dict(C=1.0)),
    "poly": ("soft_l1_dual", "piqp", dict(C=1.0, kernel="poly", gamma=0.5, coef0=1.0, degree=3)),
    "rbf": ("soft_l1_dual", "piqp", dict(C=1.0, kernel="rbf", gamma=0.7)),
    "rbf_l2": ("soft_l2_dual", "piqp", dict(C=1.0, kernel="rbf", gamma=0.7)),
    "rbf_c_tuning": ("c_tuning_standard", "clarabel", dict(kernel="rbf", gamma=0.7)),
    "rbf_radius_kernel": ("rsvm_plus_kernel", "clarabel", dict(kernel="rbf", gamma=0.7)),
    "mu_plus_features": ("rsvm_mu_plus", "clarabel", dict(C=1.0)),
    "mu_plus_kernel_sum": ("rsvm_mu_plus", "clarabel", dict(C=1.0, kernels=[
        "linear", {"kernel": "rbf", "gamma": 0.5}, {"kernel": "poly", "degree": 2}])),
}


def _fit(case):
    formulation, solver, params = CASES[case]
    return sm.fit(X3, Y3, formulation=formulation, solver=require(solver), **params)


def _set(var, x):
    for j, v in enumerate(x):
        var[j].set_value(float(v))


@pytest.mark.parametrize("case", list(CASES))
def test_embedded_expression_is_the_decision_function(case):
    sol = _fit(case)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3))
    emb = add_decision_function(m, sol, m.x)
    assert isinstance(emb, EmbeddedSVM) and emb.block is m.svm and emb.output is m.svm.output
    assert emb.expression is m.svm.decision and emb.constraint is m.svm.output_def
    assert emb.require is None
    linear = sol.w is not None
    assert emb.linear == linear and (emb.expression.polynomial_degree() == 1) == linear
    if not linear:  # one kernel term per support vector with a non-zero coefficient
        n_terms = int(np.count_nonzero(sol.dual_coef))
        text = str(emb.expression.expr)
        if sol.kernel.name in ("rbf", "sum"):   # the sum: an rbf member, the linear folded
            assert text.count("exp(") == n_terms
    P = np.random.default_rng(7).normal(scale=1.5, size=(12, 3))
    for p in P:
        _set(m.x, p)
        want = sol.decision_function(p[None, :])[0]
        assert abs(pyo.value(emb.expression) - want) <= 1e-10 * max(1.0, abs(want))
    # the embedding is read from the solution alone: a JSON round trip embeds the same
    m2 = pyo.ConcreteModel()
    m2.x = pyo.Var(range(3))
    emb2 = add_decision_function(m2, Solution.from_json(sol.to_json()), m2.x)
    _set(m2.x, P[0])
    _set(m.x, P[0])
    assert pyo.value(emb2.expression) == pytest.approx(pyo.value(emb.expression), abs=1e-12)


def test_embedded_rbf_agrees_with_scikit_learn():
    X, y = make_moons(40, noise=0.2, random_state=1)
    sol = sm.fit(X, y, formulation="soft_l1_dual", solver=require("piqp"), C=2.0,
                 kernel="rbf", gamma=1.5, tol=1e-10)
    ref = SVC(C=2.0, kernel="rbf", gamma=1.5, tol=1e-10).fit(X, y)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2))
    emb = add_decision_function(m, sol, [m.x[0], m.x[1]])
    for p in np.random.default_rng(3).uniform(-1.5, 2.5, size=(10, 2)):
        _set(m.x, p)
        assert pyo.value(emb.expression) == pytest.approx(ref.decision_function(p[None])[0],
                                                          abs=1e-5)


def test_inputs_may_be_expressions_and_numbers_and_output_the_users_var():
    sol = _fit("rbf")
    m = pyo.ConcreteModel()
    m.z = pyo.Var(range(2))
    m.f = pyo.Var()
    emb = add_decision_function(m, sol, np.array([2.0 * m.z[0], m.z[1] + 1.0, 0.5], dtype=object),
                                output=m.f)
    assert emb.output is m.f and m.svm.component("output") is None
    _set(m.z, [0.3, -0.4])
    want = sol.decision_function([[0.6, 0.6, 0.5]])[0]
    assert pyo.value(emb.expression) == pytest.approx(want, abs=1e-12)
    np.testing.assert_allclose(emb.input_values(), [0.6, 0.6, 0.5])
    with pytest.raises(SVMError, match="no value"):
        emb.error()   # the output has not been solved for
    # a one-feature SVM takes a scalar variable
    X1, y1 = np.array([[0.0], [1.0], [3.0], [4.0]]), np.array([0, 0, 1, 1])
    one = sm.fit(X1, y1, formulation="soft_l1_dual", solver=require("piqp"), kernel="rbf",
                 gamma=0.5)
    m.t = pyo.Var(initialize=2.2)
    e1 = add_decision_function(m, one, m.t, name="one")
    assert pyo.value(e1.expression) == pytest.approx(one.decision_function([[2.2]])[0], abs=1e-12)


def _projection(sol, x0, margin):
    """The closed form: min ||x - x0||^2 s.t. s (w.x + b) >= margin (active)."""
    f0 = x0 @ sol.w + sol.b
    s = -1.0 if f0 >= 0 else 1.0
    return x0 + s * (margin - s * f0) / (sol.w @ sol.w) * sol.w


@pytest.mark.parametrize("solver", ["highs", "gurobi", "piqp"])
def test_linear_counterfactual_is_the_projection_onto_the_hyperplane(solver):
    require(solver)
    X, y = blobs(2, l=30, d=2)
    labels = np.where(y > 0, "yes", "no")
    sol = sm.fit(X, labels, formulation="soft_l1_dual", solver=require("piqp"), C=1.0)
    pred = sol.predict(X)
    for label in sol.classes:   # toward classes[1] from a point of classes[0], and back
        x0 = X[np.flatnonzero(pred == label)[0]]
        r = EXAMPLE["counterfactual"](sol, x0, solver=solver, margin=0.2)
        assert r["label"] == label and r["target"] != label
        np.testing.assert_allclose(r["x"], _projection(sol, x0, 0.2), atol=1e-6)
        assert abs(abs(r["f"]) - 0.2) <= 1e-6 and sol.predict(r["x"][None, :])[0] == r["target"]
        assert r["self_check"] <= 1e-6


def _segment_candidate(sol, x0, points, margin, s):
    """Brute force: the first sampled point beyond the margin on each segment from x0 to a
    training point beyond it; the nearest of them (each is feasible by construction)."""
    t = np.linspace(0.0, 1.0, 5001)[:, None]
    best = np.inf
    for p in points[s * sol.decision_function(points) >= margin]:
        seg = x0 + t * (p - x0)
        ok = np.flatnonzero(s * sol.decision_function(seg) >= margin)
        best = min(best, float(np.sum((seg[ok[0]] - x0) ** 2)))
    return best


def test_rbf_counterfactual_reaches_the_margin_no_farther_than_sampled_candidates():
    require("ipopt")
    X, y = make_moons(60, noise=0.15, random_state=0)
    sol = sm.fit(X, y, formulation="soft_l1_dual", solver=require("piqp"), C=10.0,
                 kernel="rbf", gamma=2.0)
    margin = 0.1
    for i in (0, 4):
        x0 = X[i]
        starts = EXAMPLE["crossings"](sol, x0, X, margin)
        r = EXAMPLE["counterfactual"](sol, x0, solver="ipopt", margin=margin, starts=starts)
        s = 1.0 if r["target"] == sol.classes[1] else -1.0
        assert s * sol.decision_function(x0[None, :])[0] < 0
        assert abs(s * sol.decision_function(r["x"][None, :])[0] - margin) <= 1e-6
        assert r["distance2"] <= _segment_candidate(sol, x0, X, margin, s) + 1e-9
        # and no farther than the best feasible point of a fine grid around x0
        g = np.linspace(-1.5, 1.5, 301)
        G = x0 + np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
        ok = s * sol.decision_function(G) >= margin
        assert r["distance2"] <= np.min(np.sum((G[ok] - x0) ** 2, axis=1)) + 1e-9


def _moons_counterfactual(i: int, margin: float = 0.1):
    """The model min ||x - x0||^2 s.t. f(x) beyond ``margin`` in the other class, for point
    ``i`` of the example's moons and rbf SVM; the inputs start at x0."""
    X, y = make_moons(60, noise=0.15, random_state=0)
    sol = sm.fit(X, y, formulation="soft_l1_dual", solver=require("piqp"), C=10.0,
                 kernel="rbf", gamma=2.0)
    x0 = X[i]
    target = sol.classes[0] if sol.predict(x0[None, :])[0] == sol.classes[1] else sol.classes[1]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), initialize=dict(enumerate(x0.tolist())))
    emb = add_decision_function(m, sol, m.x, require=target, margin=margin)
    m.obj = pyo.Objective(expr=sum((m.x[j] - x0[j]) ** 2 for j in range(2)))
    s = 1.0 if target == sol.classes[1] else -1.0
    return m, emb, sol, X, x0, s


def test_a_local_solvers_infeasible_is_local_and_starts_find_the_optimum():
    """Ipopt from x0 (point 0 of the moons, deep in its class where the rbf expansion is
    flat) stops at a point of local infeasibility: reported as locally infeasible, never as
    infeasible -- the same model started at a feasible point (a training point beyond the
    margin) solves. optimize(..., starts=k) draws its starts with a fixed seed and keeps the
    best optimal end: feasible, no farther than the nearest feasible point of a grid around
    x0 and than the nearest sampled crossing, and the same point from the same seed."""
    require("ipopt")
    m, emb, sol, X, x0, s = _moons_counterfactual(0)
    with pytest.raises(LocallyInfeasibleError, match="locally infeasible.*starts=k.*scip") as err:
        optimize(m, "ipopt", time_limit=20)
    assert err.value.status is Status.locally_infeasible and "locally" in str(err.value)
    assert not isinstance(err.value, InfeasibleError)
    # the model has feasible points: from one of them, Ipopt solves it
    feasible = X[s * sol.decision_function(X) >= 0.1]
    _set(m.x, feasible[np.argmin(np.sum((feasible - x0) ** 2, axis=1))])
    assert optimize(m, "ipopt", time_limit=20).status is Status.optimal
    assert s * sol.decision_function([emb.input_values()])[0] == pytest.approx(0.1, abs=1e-6)

    _set(m.x, x0)
    info = optimize(m, "ipopt", starts=5, seed=0, time_limit=60)
    x = emb.input_values()
    assert info.status is Status.optimal and info.message.startswith("start ")
    assert abs(s * sol.decision_function([x])[0] - 0.1) <= 1e-6 and emb.error() <= 1e-7
    d2 = float(np.sum((x - x0) ** 2))
    assert pyo.value(m.obj) == pytest.approx(d2, abs=1e-12)
    assert d2 <= _segment_candidate(sol, x0, X, 0.1, s) + 1e-9
    g = np.linspace(-1.5, 1.5, 301)
    G = x0 + np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    ok = s * sol.decision_function(G) >= 0.1
    assert d2 <= np.min(np.sum((G[ok] - x0) ** 2, axis=1)) + 1e-9
    _set(m.x, x0)   # the same seed draws the same starts: the same answer
    assert optimize(m, "ipopt", starts=5, seed=0, time_limit=60).message == info.message
    np.testing.assert_array_equal(emb.input_values(), x)


def test_starts_given_as_points_keep_the_best_end():
    """starts as points of our own ((variable, value) pairs, an indexed variable taking
    its values in index order): the best optimal end is loaded, the one the example's
    crossings give; each start alone ends no better."""
    require("ipopt")
    m, emb, sol, X, x0, s = _moons_counterfactual(0)
    crossings = EXAMPLE["crossings"](sol, x0, X, 0.1)
    alone = []
    for c in crossings:
        _set(m.x, c)
        optimize(m, "ipopt", time_limit=20)
        alone.append(pyo.value(m.obj))
    _set(m.x, x0)
    info = optimize(m, "ipopt", starts=[[(m.x, c)] for c in crossings], time_limit=60)
    assert pyo.value(m.obj) == pytest.approx(min(alone), abs=1e-9)
    k = int(info.message.split()[1])   # "start k of 3, ...": a start whose end is the best
    assert info.message.startswith(f"start {k} of 3") and alone[k - 1] <= min(alone) + 1e-9
    with pytest.raises(ParameterError, match="starts must be at least 1"):
        optimize(m, "ipopt", starts=0)
    with pytest.raises(ParameterError, match=r"starts\[0\]\[x\] has 3 values"):
        optimize(m, "ipopt", starts=[[(m.x, [1.0, 2.0, 3.0])]])
    with pytest.raises(ParameterError, match="not a Pyomo variable"):
        optimize(m, "ipopt", starts=[[("x", 1.0)]])


def test_a_convex_models_infeasible_stays_proved():
    """A linear SVM required beyond its margin inside a box it cannot reach: the rows are
    linear, so Ipopt's infeasibility is a proof (InfeasibleError, status infeasible), as
    HiGHS's; starts change nothing (one solve)."""
    sol = _fit("linear")
    for solver in ("ipopt", "highs"):
        m = pyo.ConcreteModel()
        m.x = pyo.Var(range(3), bounds=(-0.01, 0.01), initialize=0.0)
        add_decision_function(m, sol, m.x, require=1, margin=abs(sol.b) + 1.0)
        m.obj = pyo.Objective(expr=sum(v ** 2 for v in m.x.values()))
        assert abs(sol.b) + 0.01 * np.abs(sol.w).sum() < abs(sol.b) + 1.0   # out of reach
        with pytest.raises(InfeasibleError) as err:
            optimize(m, require(solver), starts=3)
        assert err.value.status is Status.infeasible
        assert not isinstance(err.value, LocallyInfeasibleError)


def test_two_svms_in_one_model_against_scipy():
    require("highs")
    Xa, ya = blobs(3, l=30, d=2)
    Xb, yb = blobs(4, l=30, d=2)
    Xb = Xb[:, ::-1]   # a second classifier, leaning the other way
    sa = sm.fit(Xa, ya, formulation="soft_l1_dual", solver=require("piqp"), C=1.0)
    sb = sm.fit(Xb, yb, formulation="soft_l1_dual", solver="piqp", C=1.0)
    x0 = np.array([-2.0, -2.0])
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), initialize=0.0)
    ea = add_decision_function(m, sa, m.x, name="a", require=1, margin=0.5)
    eb = add_decision_function(m, sb, m.x, name="b", require=1, margin=0.5)
    assert ea.block is m.a and eb.block is m.b and ea.output is not eb.output
    m.obj = pyo.Objective(expr=sum((m.x[j] - x0[j]) ** 2 for j in range(2)))
    info = optimize(m, "highs", time_limit=10.0)
    x = ea.input_values()
    ref = minimize(lambda z: np.sum((z - x0) ** 2), x0, method="SLSQP", tol=1e-12,
                   constraints=[{"type": "ineq", "fun": lambda z, s=s: s.decision_function(
                       z[None, :])[0] - 0.5} for s in (sa, sb)])
    assert ref.success and ref.fun > 1.0   # x0 is on the wrong side of both
    np.testing.assert_allclose(x, ref.x, atol=1e-6)
    assert info.objective == pytest.approx(ref.fun, abs=1e-6)
    assert ea.error() <= 1e-7 and eb.error() <= 1e-7
    assert min(sa.decision_function([x])[0], sb.decision_function([x])[0]) >= 0.5 - 1e-7


def test_the_example_runs():
    require("highs")
    require("ipopt")
    out = EXAMPLE["main"]("highs", "ipopt")
    for r in out["linear"]:
        np.testing.assert_allclose(r["x"], out["linear_exact"], atol=1e-6)
    r = out["rbf"]
    assert abs(abs(r["f"]) - 0.1) <= 1e-6 and r["target"] != r["label"]
    assert r["distance2"] <= min(float(np.sum((c - r["x0"]) ** 2)) for c in out["rbf_starts"])


def test_bad_inputs_raise_typed_errors():
    sol = _fit("rbf")
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3))
    m.y = pyo.Var(range(2))
    with pytest.raises(DataError, match="trained on 3 features"):
        add_decision_function(m, sol, m.y)
    with pytest.raises(DataError, match="scalar Pyomo variable"):
        add_decision_function(m, sol, [m.x[0], "a", m.x[2]])
    with pytest.raises(DataError, match="indexed Var or a sequence"):
        add_decision_function(m, sol, {0: m.x[0]})
    with pytest.raises(ParameterError, match="Pyomo block"):
        add_decision_function("model", sol, m.x)
    m.blocks = pyo.Block([1, 2])
    with pytest.raises(ParameterError, match=r"block\[i\]"):
        add_decision_function(m.blocks, sol, m.x)
    with pytest.raises(ParameterError, match="svm_models.Solution"):
        add_decision_function(m, sol.to_dict(), m.x)
    with pytest.raises(ParameterError, match="not a class of this SVM"):
        add_decision_function(m, sol, m.x, require=3)
    with pytest.raises(ParameterError, match="require="):
        add_decision_function(m, sol, m.x, margin=0.1)
    with pytest.raises(ParameterError, match="margin must be"):
        add_decision_function(m, sol, m.x, require=1, margin=-1.0)
    with pytest.raises(ParameterError, match="output must be a scalar"):
        add_decision_function(m, sol, m.x, output=m.y)
    with pytest.raises(ParameterError, match="identifier"):
        add_decision_function(m, sol, m.x, name="two words")
    add_decision_function(m, sol, m.x)
    with pytest.raises(ParameterError, match="another name"):
        add_decision_function(m, sol, m.x)

    K = X3 @ X3.T
    pre = sm.fit(K, Y3, formulation="soft_l1_dual", solver=require("piqp"), kernel="precomputed")
    with pytest.raises(ParameterError, match="precomputed kernel cannot be embedded"):
        add_decision_function(m, pre, m.x, name="pre")
    failed = sm.fit(X3, Y3, formulation="soft_l1_dual", solver=require("ipopt"), iter_limit=1,
                    raise_on_failure=False)
    with pytest.raises(SolveFailedError, match="iteration_limit") as err:
        add_decision_function(m, failed, m.x, name="failed")
    assert err.value.status == failed.status
    assert m.component("pre") is None and m.component("failed") is None

    # a QP backend is refused a model with an rbf SVM in it, naming the problem class
    m2 = pyo.ConcreteModel()
    m2.x = pyo.Var(range(3), initialize=0.0)
    add_decision_function(m2, sol, m2.x, require=1)
    m2.obj = pyo.Objective(expr=sum(v ** 2 for v in m2.x.values()))
    with pytest.raises(CapabilityError, match="NLP"):
        optimize(m2, require("highs"))


@pytest.mark.parametrize("solver", ["highs", "gurobi", "scip", "piqp", "ipopt"])
def test_optimize_needs_exactly_one_objective(solver):
    """Issue 14 review: a model without an objective gave a bare StopIteration on highs,
    gurobi and scip; ipopt solved it as a feasibility problem."""
    import pyomo.environ as pyo

    import svm_models as sm

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x >= 0.5)
    with pytest.raises(sm.ParameterError, match="exactly one active objective; the model has 0"):
        sm.optimize(m, solver=require(solver))
    m.o1 = pyo.Objective(expr=m.x)
    m.o2 = pyo.Objective(expr=-m.x)
    with pytest.raises(sm.ParameterError, match="has 2"):
        sm.optimize(m, solver=solver)
    m.o2.deactivate()
    assert sm.optimize(m, solver=solver).status is sm.Status.optimal and m.x.value == pytest.approx(0.5, abs=1e-6)

"""The mixed-integer SVMs (``formulations/mip.md``): ``ramp_loss_primal``,
``hard_loss_primal``, ``feature_selection``.

Each MIP optimum is checked against brute force: on data small enough, every subset of the
points given up (of the features kept) is a convex QP or LP, solved here by an independent
route -- Clarabel's own API for the QPs, scipy's ``linprog`` for the LPs, on matrices
written here (the kernel's factor from numpy's eigendecomposition), nothing of
``svm_models`` -- and the best of them is the optimum (exchange of minima:
``min_{w,b} min_S = min_S min_{w,b}``, ``formulations/mip.md``). The MIP optimum must equal
it to 1e-6 (relative) on every capable backend, for several C and k.

Then: the capability refusals (before anything runs), the time limit (the incumbent with
its gap, never "optimal"), the gap as the certificate, the proved constants, the estimator
and the command line; ``switch="indicator"`` (native indicator constraints in place of the
big-M rows: the same optimum, refused where it cannot be taken).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from conftest import MILP_BACKENDS, MIQP_BACKENDS, require

import svm_models as sm
from svm_models.errors import CapabilityError, ParameterError, SolverError

REL = 1e-6


# ---------------------------------------------------------------------------------------
# Brute force, independent of svm_models


def _qp(P, q, G, h):
    """``min 1/2 x'Px + q'x  s.t.  G x <= h`` by Clarabel's own API, to 1e-10: the optimal
    value, or inf when infeasible."""
    import clarabel
    import scipy.sparse as sp

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = 1e-11
    settings.tol_feas = settings.tol_ktratio = 1e-11
    solver = clarabel.DefaultSolver(sp.triu(sp.csc_matrix(P), format="csc"), np.asarray(q, float),
                                    sp.csc_matrix(G), np.asarray(h, float),
                                    [clarabel.NonnegativeConeT(len(h))], settings)
    sol = solver.solve()
    if str(sol.status) in ("PrimalInfeasible", "AlmostPrimalInfeasible"):
        return math.inf
    assert str(sol.status) == "Solved", sol.status
    return float(sol.obj_val)


def _hinge_qp(F, s, C_i, keep, cap):
    """``min 1/2 ||w||^2 + sum_{i in keep} C_i xi_i`` s.t. ``s_i (F_i w + b) + xi_i >= 1``,
    ``xi_i >= 0`` (and ``xi_i <= 2`` with ``cap``) on the points ``keep``; no slack
    (``xi = 0``: a hard margin) when ``C_i`` is None."""
    keep = np.flatnonzero(keep)
    r, k = F.shape[1], len(keep)
    soft = C_i is not None
    n = r + 1 + (k if soft else 0)
    P = np.zeros((n, n))
    P[:r, :r] = np.eye(r)
    q = np.zeros(n)
    rows, h = [], []
    for a, i in enumerate(keep):
        g = np.zeros(n)
        g[:r], g[r] = -s[i] * F[i], -s[i]
        if soft:
            g[r + 1 + a] = -1.0
        rows.append(g)
        h.append(-1.0)
    if soft:
        q[r + 1:] = C_i[keep]
        for a in range(k):
            g = np.zeros(n)
            g[r + 1 + a] = -1.0
            rows.append(g)
            h.append(0.0)
            if cap:
                rows.append(-g)
                h.append(2.0)
    if not rows:
        return 0.0
    return _qp(P, q, np.array(rows), np.array(h))


def brute_force_loss(F, s, C, weight, loss):
    """The optimum of the ramp loss (``loss="ramp"``) or the hard margin loss (``"hard"``)
    over every subset S of points given up: a soft margin with slacks in [0, 2] (ramp) or a
    hard margin (hard) on the rest, plus ``2 C`` (ramp) or ``C`` (hard) per point of S."""
    l = len(s)
    C_i = C * weight
    best = math.inf
    for mask in itertools.product([False, True], repeat=l):
        S = np.array(mask)
        fixed = float(C_i[S].sum()) * (2.0 if loss == "ramp" else 1.0)
        if fixed >= best:
            continue
        value = _hinge_qp(F, s, C_i if loss == "ramp" else None, ~S, cap=True)
        best = min(best, fixed + value)
    return best


def brute_force_features(X, s, C, k, norm, cost=None):
    """The optimum of feature selection over every subset T of features within the budget:
    the 1-norm SVM on T (an LP, scipy's linprog) or the 2-norm one (a QP, Clarabel)."""
    from scipy.optimize import linprog

    l, d = X.shape
    cost = np.ones(d) if cost is None else np.asarray(cost, float)
    best = math.inf
    for mask in itertools.product([False, True], repeat=d):
        T = np.flatnonzero(mask)
        if cost[T].sum() > k + 1e-12:
            continue
        F = X[:, T]
        if norm == "l2":
            value = _hinge_qp(F, s, C * np.ones(l), np.ones(l, bool), cap=False)
        else:   # x = (w+, w-, b, xi): min sum w+ + w- + C sum xi
            r = len(T)
            c = np.r_[np.ones(2 * r), 0.0, C * np.ones(l)]
            A = np.hstack([-s[:, None] * F, s[:, None] * F, -s[:, None], -np.eye(l)])
            bounds = [(0, None)] * (2 * r) + [(None, None)] + [(0, None)] * l
            res = linprog(c, A_ub=A, b_ub=-np.ones(l), bounds=bounds, method="highs",
                          options={"primal_feasibility_tolerance": 1e-10,
                                   "dual_feasibility_tolerance": 1e-10})
            assert res.status == 0
            value = float(res.fun)
        best = min(best, value)
    return best


def signs(y):
    return np.where(y == np.unique(y)[1], 1.0, -1.0)


def data(l=8, d=2, seed=0, flip=2):
    """Two shifted Gaussian blobs with ``flip`` labels flipped, one of them far out (an
    outlier the ramp loss gives up)."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(l) % 2 == 0, 1, -1)
    X = rng.normal(size=(l, d)) * 0.8 + 1.0 * y[:, None]
    X[0] = -3.0 * np.ones(d)   # a point of class +1 deep in class -1
    for i in rng.choice(np.arange(1, l), size=flip - 1, replace=False):
        y[i] = -y[i]
    return X, y


def rbf_factor(X, gamma):
    """``L`` with ``L L' = K`` for the rbf kernel, by numpy's eigendecomposition."""
    sq = np.sum(X ** 2, 1)
    K = np.exp(-gamma * (sq[:, None] + sq[None, :] - 2 * X @ X.T))
    lam, U = np.linalg.eigh(K)
    return U * np.sqrt(np.clip(lam, 0.0, None))


# ---------------------------------------------------------------------------------------
# Optimality against brute force


def test_the_three_are_registered():
    for name in ("ramp_loss_primal", "hard_loss_primal", "feature_selection"):
        assert name in sm.formulations()


@pytest.mark.parametrize("solver", MIQP_BACKENDS)
@pytest.mark.parametrize("C", [0.3, 3.0])
def test_ramp_loss_equals_brute_force(solver, C):
    require(solver)
    X, y = data()
    ref = brute_force_loss(X, signs(y), C, np.ones(len(y)), "ramp")
    sol = sm.fit(X, y, formulation="ramp_loss_primal", solver=solver, C=C)
    assert sol.status is sm.Status.optimal and sol.path == "general"
    assert sol.objective == pytest.approx(ref, rel=REL)
    assert abs(sol.mip_gap) <= 1e-6 and sol.bound <= sol.objective * (1 + 1e-6)
    # the objective is that of exactly the classifier returned: the ramp loss of its values
    u = signs(y) * (X @ sol.w + sol.b)
    own = 0.5 * sol.w @ sol.w + C * np.minimum(2, np.maximum(0, 1 - u)).sum()
    assert sol.objective == pytest.approx(own, rel=1e-12)
    # the points given up are those beyond y f < -1 (at C = 3 the outlier, point 0; at
    # C = 0.3 the optimum is w = 0, b = 1, no point given up)
    assert set(sol.given_up) <= set(np.flatnonzero(u <= -1 + 1e-6))
    assert (0 in sol.given_up) == (C == 3.0)


@pytest.mark.parametrize("solver", MIQP_BACKENDS)
def test_weighted_ramp_loss_equals_brute_force(solver):
    require(solver)
    X, y = data(seed=1)
    wt = np.linspace(0.5, 2.0, len(y))
    ref = brute_force_loss(X, signs(y), 1.5, wt, "ramp")
    sol = sm.fit(X, y, "ramp_loss_primal", solver=solver, C=1.5, sample_weight=wt)
    assert sol.objective == pytest.approx(ref, rel=REL)


@pytest.mark.parametrize("solver", MIQP_BACKENDS)
def test_kernel_ramp_loss_equals_brute_force(solver):
    require(solver)
    X, y = data(l=7, seed=2)
    C, gamma = 2.0, 0.5
    ref = brute_force_loss(rbf_factor(X, gamma), signs(y), C, np.ones(7), "ramp")
    sol = sm.fit(X, y, "ramp_loss_primal", solver=solver, C=C, kernel="rbf", gamma=gamma)
    assert sol.objective == pytest.approx(ref, rel=REL)
    assert sol.w is None
    # the decision function (the expansion beta) reproduces the model's own values
    L = sm.build("ramp_loss_primal", X, y, C=C, kernel="rbf", gamma=gamma)._svm.L
    u = signs(y) * sol.decision_function(X)
    assert sol.objective == pytest.approx(
        0.5 * sol.dual_coef @ (L @ (L.T @ sol.dual_coef))
        + C * np.minimum(2, np.maximum(0, 1 - u)).sum(), rel=1e-7)


@pytest.mark.parametrize("solver", MIQP_BACKENDS)
@pytest.mark.parametrize("C", [0.2, 2.0])
def test_hard_loss_equals_brute_force(solver, C):
    require(solver)
    X, y = data(seed=3)
    ref = brute_force_loss(X, signs(y), C, np.ones(len(y)), "hard")
    sol = sm.fit(X, y, "hard_loss_primal", solver=solver, C=C)
    assert sol.status is sm.Status.optimal
    assert sol.objective == pytest.approx(ref, rel=REL)
    u = signs(y) * (X @ sol.w + sol.b)
    kept = np.setdiff1d(np.arange(len(y)), sol.given_up)
    assert np.all(u[kept] >= 1 - 1e-6)   # the rows kept hold
    assert sol.objective == pytest.approx(0.5 * sol.w @ sol.w + C * len(sol.given_up), rel=1e-12)


def _features(l=12, d=5, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(l, d))
    y = np.where(X @ np.array([1.5, -1.0, 0.6, 0.0, 0.0])[:d] + 0.7 * rng.normal(size=l) > 0,
                 1, -1)
    return X, y


@pytest.mark.parametrize("solver", MILP_BACKENDS)
@pytest.mark.parametrize("C, k", [(0.5, 1), (2.0, 2), (10.0, 3)])
def test_feature_selection_l1_equals_brute_force(solver, C, k):
    require(solver)
    X, y = _features()
    ref = brute_force_features(X, signs(y), C, k, "l1")
    sol = sm.fit(X, y, formulation="feature_selection", solver=solver, k=k, C=C)
    assert sol.status is sm.Status.optimal
    assert sol.objective == pytest.approx(ref, rel=REL)
    kept = sol.features_kept
    assert len(kept) <= k and np.all(sol.w[np.setdiff1d(np.arange(5), kept)] == 0.0)


@pytest.mark.parametrize("solver", MIQP_BACKENDS)
@pytest.mark.parametrize("C, k", [(0.5, 1), (5.0, 2)])
def test_feature_selection_l2_equals_brute_force(solver, C, k):
    require(solver)
    X, y = _features(seed=5)
    ref = brute_force_features(X, signs(y), C, k, "l2")
    sol = sm.fit(X, y, "feature_selection", solver=solver, k=k, C=C, norm="l2")
    assert sol.objective == pytest.approx(ref, rel=REL)


@pytest.mark.parametrize("solver", MILP_BACKENDS)
def test_feature_selection_with_costs_equals_brute_force(solver):
    require(solver)
    X, y = _features(seed=6)
    cost = [3.0, 1.0, 1.0, 2.0, 0.5]
    ref = brute_force_features(X, signs(y), 1.0, 2.5, "l1", cost)
    sol = sm.fit(X, y, "feature_selection", solver=solver, k=2.5, C=1.0, feature_cost=cost)
    assert sol.objective == pytest.approx(ref, rel=REL)
    assert sum(cost[j] for j in sol.features_kept) <= 2.5


def test_without_a_budget_feature_selection_is_the_1_norm_svm():
    X, y = _features()
    sol = sm.fit(X, y, "feature_selection", solver="highs", C=2.0)
    ref = sm.fit(X, y, "l1_norm_primal", solver="highs", C=2.0)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-7)


# ---------------------------------------------------------------------------------------
# The proved constants


def test_the_constants_are_those_of_the_derivation():
    X, y = data()
    m = sm.build("ramp_loss_primal", X, y, C=2.0)
    R = float(np.max(np.linalg.norm(X, axis=1)))
    U0 = 2 * 2.0 * min((y > 0).sum(), (y < 0).sum())   # 2 C min(W+, W-)
    assert m.big_m.value == pytest.approx(2 + 2 * R * math.sqrt(2 * U0), rel=1e-14)
    assert m.b.bounds == pytest.approx((-(1 + R * math.sqrt(2 * U0)), 1 + R * math.sqrt(2 * U0)))
    assert m.w[0].bounds == pytest.approx((-math.sqrt(2 * U0), math.sqrt(2 * U0)))
    h = sm.build("hard_loss_primal", X, y, C=2.0)
    assert h.big_m.value == pytest.approx(2 + 2 * R * math.sqrt(U0), rel=1e-14)   # C min
    f1 = sm.build("feature_selection", X, y, C=2.0, k=1)
    f2 = sm.build("feature_selection", X, y, C=2.0, k=1, norm="l2")
    assert f1.big_m.value == pytest.approx(U0) and f2.big_m.value == pytest.approx(math.sqrt(2 * U0))


def test_the_optimum_lies_well_inside_the_proved_bounds():
    """At the brute-force optimum's classifier the rows switched off need at most M: the
    largest ``1 - y_i f_i`` over the points given up stays below ``big_m``."""
    require("gurobi")
    X, y = data()
    X[0] = -12.0   # a far outlier: a large 1 - y f, still within M
    sol = sm.fit(X, y, "ramp_loss_primal", solver="gurobi", C=3.0)
    u = signs(y) * (X @ sol.w + sol.b)
    need = float(np.max(1 - u[sol.given_up]))
    assert 0 < need <= sol.details.big_m["M"]
    assert abs(sol.b) <= sol.details.big_m["b_max"]
    ref = brute_force_loss(X, signs(y), 3.0, np.ones(len(y)), "ramp")
    assert sol.objective == pytest.approx(ref, rel=REL)


def test_a_larger_C_than_built_is_refused_a_smaller_one_solved():
    require("gurobi")
    X, y = data()
    m = sm.build("ramp_loss_primal", X, y, C=2.0)
    m.C = 4.0
    with pytest.raises(ParameterError, match="proved for C <= the C built with"):
        sm.solve(m, "gurobi")
    m.C = 0.3
    sol = sm.solve(m, "gurobi")
    assert sol.objective == pytest.approx(brute_force_loss(X, signs(y), 0.3, np.ones(8), "ramp"),
                                          rel=REL)


# ---------------------------------------------------------------------------------------
# Backends: who takes them, the path, the time limit


@pytest.mark.parametrize("solver", ["ipopt", "piqp", "clarabel", "ipm", "libsvm", "highs"])
def test_backends_that_cannot_take_a_miqp_are_refused_before_anything_runs(solver):
    X, y = data()
    m = sm.build("ramp_loss_primal", X, y)
    with pytest.raises(CapabilityError) as info:
        sm.solve(m, solver)
    assert "gurobi" in str(info.value) and "scip" in str(info.value)
    assert all(v.value == 0 for v in m.z.values())   # nothing ran: the start values untouched


@pytest.mark.parametrize("solver", ["ipopt", "piqp", "clarabel", "ipm", "libsvm"])
def test_backends_that_cannot_take_a_milp_are_refused(solver):
    X, y = _features()
    with pytest.raises(CapabilityError, match="highs"):
        sm.fit(X, y, "feature_selection", solver=solver, k=2)


def test_no_fast_path_and_no_convex_certificate():
    require("gurobi")
    X, y = data()
    with pytest.raises(SolverError, match="MIQP has no fast path"):
        sm.fit(X, y, "ramp_loss_primal", solver="gurobi", path="fast")
    sol = sm.fit(X, y, "ramp_loss_primal", solver="gurobi")
    assert sol.path == "general" and "MIQP has no fast path" in sol.extra["general_path_reason"]
    assert sol.duality_gap is None and sol.dual_objective is None and "certificate" not in sol.extra
    assert np.all(sol.alpha == 0) and sol.extra["alpha_source"].startswith("none")
    # auto: a backend without a size limit first
    assert sm.fit(X, y, "ramp_loss_primal").extra["solver_choice"]["used"] == "scip"


def _hard_instance():
    rng = np.random.default_rng(7)
    l = 60
    y = np.where(np.arange(l) % 2 == 0, 1, -1)
    X = rng.normal(size=(l, 2)) + 0.3 * y[:, None]
    return X, y


@pytest.mark.parametrize("solver", ["gurobi", "scip"])
def test_a_time_limit_returns_the_incumbent_with_its_gap_never_optimal(solver):
    require(solver)
    X, y = _hard_instance()
    # deterministic: the warm start is an incumbent from the start (Gurobi takes the whole
    # point, SCIP completes its binaries at once), so a short limit stops with one and an
    # open gap -- Gurobi's own heuristics off: the incumbent is the start or better
    sol = sm.fit(X, y, "hard_loss_primal", solver=solver, C=1.0, time_limit=0.3,
                 options={"Heuristics": 0} if solver == "gurobi" else {})
    assert sol.status is sm.Status.time_limit
    assert np.isfinite(sol.b) and sol.w is not None
    assert sol.mip_gap > 1e-3 and sol.bound < sol.objective
    assert sol.objective <= sol.extra["warm_start"]["objective"] * (1 + 1e-9)
    u = signs(y) * (X @ sol.w + sol.b)   # a feasible classifier, its objective recomputed
    assert sol.objective == pytest.approx(0.5 * sol.w @ sol.w + len(sol.given_up), rel=1e-9)
    assert np.all(u[np.setdiff1d(np.arange(len(y)), sol.given_up)] >= 1 - 1e-6)


# ---------------------------------------------------------------------------------------
# The warm start: the convex SVM rounded into a feasible point (issue 29)


def _start(m):
    """The family's warm start of model ``m`` as solve() computes it: its report."""
    from svm_models.api import _warm_starter
    from svm_models.formulations import get
    from svm_models.solvers import SolverOptions

    svm = m._svm
    return _warm_starter(svm, get(svm.formulation), SolverOptions())()


def _rows_hold(m, tol=1e-9):
    """Every row and bound of the model holds at its current values, each binary is 0 or 1
    (Pyomo's own evaluation of each constraint)."""
    import pyomo.environ as pyo

    for v in m.component_data_objects(pyo.Var):
        assert v.value is not None, v.name
        assert v.lb is None or v.value >= v.lb - tol, v.name
        assert v.ub is None or v.value <= v.ub + tol, v.name
        if v.is_binary():
            assert v.value in (0.0, 1.0), v.name
    for c in m.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(c.body)
        assert c.lb is None or body >= c.lb - tol * max(1, abs(c.lb)), c.name
        assert c.ub is None or body <= c.ub + tol * max(1, abs(c.ub)), c.name


_CASES = {
    "ramp": ("ramp_loss_primal", lambda: data(), {"C": 3.0}),
    "ramp rbf": ("ramp_loss_primal", lambda: data(l=7, seed=2), {"C": 2.0, "kernel": "rbf",
                                                                   "gamma": 0.5}),
    "ramp weighted": ("ramp_loss_primal", lambda: data(seed=1),
                      {"C": 1.5, "sample_weight": np.linspace(0.5, 2.0, 8)}),
    "hard": ("hard_loss_primal", lambda: data(seed=3), {"C": 2.0}),
    "features l1": ("feature_selection", lambda: _features(), {"C": 2.0, "k": 2}),
    "features l2": ("feature_selection", lambda: _features(seed=5), {"C": 5.0, "k": 2,
                                                                      "norm": "l2"}),
    "features costs": ("feature_selection", lambda: _features(seed=6),
                       {"C": 1.0, "k": 2.5, "feature_cost": [3.0, 1.0, 1.0, 2.0, 0.5]}),
}


@pytest.mark.parametrize("case", list(_CASES))
def test_the_warm_start_is_a_feasible_point_no_better_than_the_optimum(case):
    """The start is a point of the model (every row, bound and binary holds: checked here by
    Pyomo's own evaluation), the report's objective is the model's there, and it is >= the
    MIP optimum -- which, warm-started, still equals brute force (the small cases) and the
    solver's bound."""
    import pyomo.environ as pyo

    require("gurobi")
    name, make, params = _CASES[case]
    X, y = make()
    m = sm.build(name, X, y, **params)
    report = _start(m)
    assert report["objective"] is not None, report
    _rows_hold(m)
    assert report["objective"] == pytest.approx(pyo.value(m.objective), rel=1e-12)
    sol = sm.solve(m, "gurobi", time_limit=30)
    assert sol.status is sm.Status.optimal
    assert sol.extra["warm_start"]["objective"] == pytest.approx(report["objective"], rel=1e-12)
    assert "warmstart=True to gurobi_direct" == sol.extra["warm_start"]["passed"]
    assert report["objective"] >= sol.objective * (1 - 1e-9)
    if len(y) <= 8:   # the optimum, warm-started, is still brute force's
        if name == "feature_selection":
            ref = brute_force_features(X, signs(y), params["C"], params["k"],
                                       params.get("norm", "l1"), params.get("feature_cost"))
        else:
            F = rbf_factor(X, params["gamma"]) if "gamma" in params else X
            wt = params.get("sample_weight", np.ones(len(y)))
            ref = brute_force_loss(F, signs(y), params["C"], wt,
                                   "ramp" if name == "ramp_loss_primal" else "hard")
        assert sol.objective == pytest.approx(ref, rel=REL)


def test_gurobi_takes_the_warm_start():
    """Stopped early (50 ms; the optimum takes about 1.5 s) with its heuristics off, Gurobi
    has an incumbent: the start it was given or better, at most its objective (without one it
    has none: a typed failure). (1 ms was too short under load: with a second suite running,
    Gurobi stopped before it had read the start.)"""
    require("gurobi")
    X, y = _hard_instance()
    sol = sm.fit(X, y, "hard_loss_primal", solver="gurobi", C=1.0, time_limit=0.05,
                 options={"Heuristics": 0, "Presolve": 0})
    start = sol.extra["warm_start"]
    assert sol.status is sm.Status.time_limit and start["objective"] is not None
    assert sol.objective <= start["objective"] * (1 + 1e-9)
    assert sol.mip_gap > 0.1   # (stopped long before the optimum, 30)


def test_an_infeasible_start_is_dropped_never_forced():
    """A row the user added to the block that the rounded start breaks: the start is
    dropped (the variables keep their values, the report says which row), and the solve is
    the model's optimum with the row."""
    import pyomo.environ as pyo

    require("gurobi")
    X, y = data()
    m = sm.build("ramp_loss_primal", X, y, C=3.0)
    m.cut = pyo.Constraint(expr=m.b >= 2.0)   # the hinge solution has |b| < 1
    report = _start(m)
    assert report["objective"] is None and "cut" in report["why"]
    assert m.b.value == 0.0 and all(v.value == 0 for v in m.z.values())   # untouched
    sol = sm.solve(m, "gurobi")
    assert sol.status is sm.Status.optimal and sol.b >= 2.0 - 1e-9
    assert sol.extra["warm_start"]["objective"] is None
    free = sm.fit(X, y, "ramp_loss_primal", solver="gurobi", C=3.0)
    assert sol.objective >= free.objective * (1 - 1e-9)


def test_highs_takes_no_warm_start_and_a_convex_failure_means_none():
    X, y = _features()
    sol = sm.fit(X, y, "feature_selection", solver="highs", C=2.0, k=2)
    assert sol.extra["warm_start"] == {"objective": None,
                                       "why": "the highs plugin takes no warm start"}
    # the convex solve fails (a raw option Clarabel does not know): no start, the variables
    # untouched
    from svm_models.formulations import get

    m = sm.build("ramp_loss_primal", *data(), C=1.0)
    report = get("ramp_loss_primal").warm_start(
        m._svm, lambda name, X, y, **p: sm.fit(X, y, name, solver="clarabel",
                                               options={"no_such_option": 1}, **p))
    assert report["objective"] is None and "soft_l1_primal was not solved" in report["why"]
    assert m.b.value == 0.0 and all(v.value == 0 for v in m.xi.values())


def test_the_gap_is_the_certificate():
    """A gap beyond the tolerance is not accepted as optimal (the certificate of a MIP), and
    the solution's gap is that of exactly the classifier returned."""
    from svm_models.api import _uncertified
    from dataclasses import replace

    require("gurobi")
    X, y = data()
    sol = sm.fit(X, y, "ramp_loss_primal", solver="gurobi", C=1.0)
    assert _uncertified(sol, 1e-9) is None
    worse = replace(sol, details=replace(sol.details, mip_gap=1e-3))
    assert "gap" in _uncertified(worse, 1e-9)
    assert sol.mip_gap == pytest.approx((sol.objective - sol.bound) / sol.objective, abs=1e-15)


# ---------------------------------------------------------------------------------------
# The estimator, the command line, the saved Solution


def test_the_estimator_the_command_line_and_json(tmp_path, capsys):
    require("gurobi")
    X, y = _features()
    est = sm.SVMClassifier(formulation="feature_selection", solver="highs", C=2.0, k=2).fit(X, y)
    ref = sm.fit(X, y, "feature_selection", solver="gurobi", C=2.0, k=2)
    assert est.solution_.objective == pytest.approx(ref.objective, rel=1e-7)
    assert (est.coef_[0] != 0).sum() <= 2
    with pytest.raises(ParameterError, match="takes no"):
        sm.SVMClassifier(formulation="ramp_loss_primal", k=2).fit(X, y)
    back = sm.Solution.from_json(ref.to_json())
    assert back.features_kept.tolist() == ref.features_kept.tolist() and back.mip_gap == ref.mip_gap
    from svm_models.cli import main

    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    out = tmp_path / "m.json"
    assert main(["fit", str(path), "--formulation", "feature_selection", "--solver", "highs",
                 "--C", "2", "--k", "2", "--norm", "l1", "-o", str(out)]) == 0
    got = sm.Solution.from_json(str(out))
    assert got.objective == pytest.approx(ref.objective, rel=1e-7)
    assert main(["fit", str(path), "--formulation", "ramp_loss_primal", "--solver", "ipopt"]) != 0
    assert "cannot take a MIQP" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------
# Indicator constraints in place of the big-M rows (switch="indicator", issue 29)


_SWITCHED = {
    "ramp": ("ramp_loss_primal", lambda: data(l=12, seed=8), {"C": 3.0}),
    "ramp rbf": ("ramp_loss_primal", lambda: data(l=10, seed=1, flip=3),
                 {"C": 5.0, "kernel": "rbf", "gamma": 0.2}),   # (point 7 given up)
    "hard": ("hard_loss_primal", lambda: data(l=12, seed=10), {"C": 1.0}),
    "features l1": ("feature_selection", lambda: _features(l=14), {"C": 2.0, "k": 2}),
    "features l2": ("feature_selection", lambda: _features(l=14, seed=5),
                    {"C": 5.0, "k": 2, "norm": "l2"}),
}


@functools.lru_cache(maxsize=None)
def _brute(case):
    """Brute force's optimum of a case of :data:`_SWITCHED` (computed once for both
    backends)."""
    name, make, params = _SWITCHED[case]
    X, y = make()
    if name == "feature_selection":
        return brute_force_features(X, signs(y), params["C"], params["k"], params["norm"]
                                    if "norm" in params else "l1")
    F = rbf_factor(X, params["gamma"]) if "gamma" in params else X
    return brute_force_loss(F, signs(y), params["C"], np.ones(len(y)),
                            "ramp" if name == "ramp_loss_primal" else "hard")


def _switched_rows(m):
    """The big-M rows of a built mixed-integer SVM, by its Pyomo components (written here from
    the catalogue pages, not from the family's hook)."""
    if m._svm.formulation == "feature_selection":
        return list(m.keep_hi.values()) + list(m.keep_lo.values())
    return list(m.margin.values())


@pytest.mark.parametrize("solver", MIQP_BACKENDS)
@pytest.mark.parametrize("case", list(_SWITCHED))
def test_indicator_constraints_have_the_big_m_optimum(solver, case):
    """Solved with native indicator constraints in place of its big-M rows, each model has the
    optimum of the big-M model and of brute force (every M is proved), the same classifier,
    and says so: ``extra["switch"]``, one indicator row per switched row, the persistent
    plugin as its interface, the gap as its certificate. The model the user holds keeps its
    big-M rows, still proved the model as built."""
    from svm_models.model.record import verify

    require(solver)
    name, make, params = _SWITCHED[case]
    X, y = make()
    big = sm.fit(X, y, name, solver=solver, **params)
    m = sm.build(name, X, y, **params)
    ind = sm.solve(m, solver, switch="indicator")
    ref = _brute(case)
    assert big.status is sm.Status.optimal and ind.status is sm.Status.optimal
    assert big.objective == pytest.approx(ref, rel=REL)
    assert ind.objective == pytest.approx(ref, rel=REL)
    assert ind.objective == pytest.approx(big.objective, rel=REL)
    assert abs(ind.mip_gap) <= 1e-6 and ind.bound <= ind.objective * (1 + 1e-6)
    # the same classifier (w to the tolerance the objective fixes it to)
    if ind.w is None:   # (the kernel form: its decision values)
        np.testing.assert_allclose(ind.decision_function(X), big.decision_function(X),
                                   rtol=0, atol=1e-4)
    else:
        np.testing.assert_allclose(ind.w, big.w, rtol=0, atol=1e-4)
        assert ind.b == pytest.approx(big.b, abs=1e-4)
    assert np.array_equal(ind.given_up, big.given_up)
    if name != "feature_selection":   # (each case switches a row off at its optimum)
        assert len(ind.given_up) > 0
    if name == "feature_selection":
        assert np.array_equal(ind.features_kept, big.features_kept)
    rows = _switched_rows(m)
    assert big.extra["switch"] == "big_m" and "indicator_rows" not in big.extra
    assert big.interface == f"{solver}_direct"
    assert ind.extra["switch"] == "indicator" and ind.interface == f"{solver}_persistent"
    assert ind.extra["indicator_rows"] == len(rows) == (
        2 * X.shape[1] if name == "feature_selection" else len(y))
    assert ind.extra["warm_start"]["passed"].endswith(f"to {solver}_persistent")
    # the Pyomo model keeps its big-M rows, active and unchanged
    assert all(c.active for c in rows) and verify(m._svm.record) is None
    assert m._svm.record.extension_reason() is None


@pytest.mark.parametrize("solver", MIQP_BACKENDS)
@pytest.mark.parametrize("case", ["ramp", "features l1"])
def test_exactly_the_big_m_rows_are_replaced_in_the_native_model(solver, case):
    """The backend's ``add_indicators`` on its persistent plugin, as the solve uses them: the
    native model holds one indicator constraint per big-M row, each standing for that row,
    and every other row of the model as Pyomo put it there."""
    import pyomo.environ as pyo
    from contextlib import nullcontext

    from svm_models.formulations import get
    from svm_models.model.pyomo_compat import persistent_native
    from svm_models.solvers.base import preserved_fpu
    from svm_models.solvers.table import backend

    require(solver)
    name, make, params = _SWITCHED[case]
    m = sm.build(name, *make(), **params)
    rows = get(name).indicator_rows(m._svm)
    switched = _switched_rows(m)
    assert [r.row for r in rows] == switched and {r.on for r in rows} == {0}
    every = list(m.component_data_objects(pyo.Constraint, active=True))
    b = backend(solver)
    plugin = pyo.SolverFactory(b.indicator_plugin)
    with preserved_fpu(), (b.plugin_guard() if b.plugin_guard else nullcontext()):
        plugin.set_instance(m)
        assert b.add_indicators(plugin, rows) == len(switched)
        native, _ = persistent_native(plugin)
        if solver == "gurobi":
            native.update()
            assert native.NumGenConstrs == len(switched)
            assert native.NumConstrs == len(every) - len(switched)
            kinds = {c.GenConstrType for c in native.getGenConstrs()}
            assert kinds == {__import__("gurobipy").GRB.GENCONSTR_INDICATOR}
        else:
            handlers = [c.getConshdlrName() for c in native.getConss()]
            assert handlers.count("indicator") == len(switched)
        stands = plugin._pyomo_con_to_solver_con_map   # (the test reads Pyomo's map)
        ids = {id(c) for c in switched}
        for c in every:
            kind = (type(stands[c]).__name__ if solver == "gurobi"
                    else stands[c].getConshdlrName())
            assert (kind in ("GenConstr", "indicator")) == (id(c) in ids), (c.name, kind)


@pytest.mark.parametrize("solver", ["highs", "piqp", "clarabel", "ipopt", "ipm", "libsvm"])
@pytest.mark.parametrize("name", ["ramp_loss_primal", "feature_selection"])
def test_switch_indicator_is_refused_by_the_backends_without_it(solver, name):
    X, y = _features()
    m = sm.build(name, X, y, **({"k": 2} if name == "feature_selection" else {}))
    with pytest.raises(CapabilityError) as info:
        sm.solve(m, solver, switch="indicator")
    text = str(info.value)
    assert "switch='indicator'" in text and "gurobi, scip" in text and "highs" not in text.split(
        "do:")[1]
    binaries = m.v if name == "feature_selection" else m.z
    assert all(v.value == (1 if name == "feature_selection" else 0) for v in binaries.values())
    with pytest.raises(CapabilityError, match="gurobi, scip"):   # fit alike
        sm.fit(X, y, name, solver=solver, switch="indicator")


def test_auto_with_switch_indicator_takes_a_backend_that_has_it():
    require("gurobi")
    X, y = _features()
    sol = sm.fit(X, y, "feature_selection", k=2, C=2.0, switch="indicator")   # a MILP: not highs
    assert sol.extra["solver_choice"]["used"] in MIQP_BACKENDS
    assert sol.extra["switch"] == "indicator" and sol.extra["indicator_rows"] == 10


def test_an_edited_model_is_refused_switch_indicator():
    """A row of the user's, a bound changed, a big-M row rewritten: the model is not the one
    whose rows the family named, and the option is refused before anything runs (never
    ignored); the default switch solves the model as it is."""
    import pyomo.environ as pyo

    require("gurobi")
    X, y = data()
    m = sm.build("ramp_loss_primal", X, y, C=3.0)
    m.cut = pyo.Constraint(expr=m.b >= 2.5)
    with pytest.raises(ParameterError, match="unchanged since it was built.*'cut'.*"
                                             "switch='big_m'"):
        sm.solve(m, "gurobi", switch="indicator")
    assert m.b.value == 0.0 and all(v.value == 0 for v in m.z.values())   # nothing ran
    sol = sm.solve(m, "gurobi")
    assert sol.status is sm.Status.optimal and sol.b >= 2.5 - 1e-9
    assert sol.extra["switch"] == "big_m"
    bound = sm.build("hard_loss_primal", X, y)
    bound.w[0].setub(0.1)
    with pytest.raises(ParameterError, match="bounds or domain of variable w\\[0\\]"):
        sm.solve(bound, "scip", switch="indicator")
    rewritten = sm.build("feature_selection", *_features(), k=2)
    rewritten.keep_hi[0].set_value(rewritten.big_m * rewritten.v[0] - rewritten.w[0] >= -1)
    with pytest.raises(ParameterError, match="keep_hi"):
        sm.solve(rewritten, "gurobi", switch="indicator")


def test_switch_indicator_needs_a_mixed_integer_svm_and_a_known_value():
    require("gurobi")
    X, y = _features()
    with pytest.raises(ParameterError, match="mixed-integer SVMs.*a QP"):
        sm.fit(X, y, "soft_l1_primal", solver="gurobi", switch="indicator")
    for bad in ("foo", None, 1, "Indicator"):
        with pytest.raises(ParameterError, match="switch must be one of 'big_m', 'indicator'"):
            sm.fit(X, y, "feature_selection", solver="gurobi", k=2, switch=bad)
    with pytest.raises(ParameterError, match="switch must be"):
        sm.SVMClassifier(formulation="feature_selection", solver="gurobi", k=2,
                         solver_options={"switch": "foo"}).fit(X, y)


@pytest.mark.parametrize("solver", ["gurobi", "scip"])
def test_switch_indicator_keeps_the_time_limit_and_the_warm_start(solver):
    """Stopped by its time limit, the indicator solve returns its incumbent with its gap
    (never optimal), no worse than the warm start it was given."""
    require(solver)
    X, y = _hard_instance()
    sol = sm.fit(X, y, "hard_loss_primal", solver=solver, C=1.0, time_limit=0.3,
                 switch="indicator", options={"Heuristics": 0} if solver == "gurobi" else {})
    assert sol.status is sm.Status.time_limit and sol.extra["switch"] == "indicator"
    assert sol.extra["indicator_rows"] == len(y)
    assert sol.mip_gap > 1e-3 and sol.bound < sol.objective
    start = sol.extra["warm_start"]
    assert start["passed"].endswith(f"to {solver}_persistent")
    assert sol.objective <= start["objective"] * (1 + 1e-9)
    u = signs(y) * (X @ sol.w + sol.b)
    assert np.all(u[np.setdiff1d(np.arange(len(y)), sol.given_up)] >= 1 - 1e-6)

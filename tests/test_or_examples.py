"""The examples an OR user recognises (issue 28): a cost-sensitive SVM under a feature budget,
a fairness constraint (Zafar et al. 2017) and the MO-book's LP SVM. Each example runs as
shipped and its numbers are checked against a model written independently -- in CVXPY,
solved by Clarabel (the library's answers come from PIQP and HiGHS), or the MO-book's own
Pyomo LP solved by HiGHS through Pyomo -- to 1e-6 (relative) in objective, w and b."""

import runpy
from pathlib import Path

import numpy as np
import pytest

import svm_models as sm

ROOT = Path(__file__).resolve().parents[1]
RTOL = 1e-6


def run_example(name: str) -> dict:
    return runpy.run_path(str(ROOT / "examples" / f"{name}.py"))


def clarabel(problem):
    """Solve a CVXPY problem with Clarabel at tight tolerances; its optimal value."""
    cp = pytest.importorskip("cvxpy")   # (the dev extras install it)

    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert problem.status == cp.OPTIMAL, problem.status
    return problem.value


def assert_same(got_obj, got_w, got_b, ref_obj, ref_w, ref_b, what=""):
    assert got_obj == pytest.approx(ref_obj, rel=RTOL), what
    scale = max(1.0, float(np.max(np.abs(ref_w))))
    np.testing.assert_allclose(got_w, ref_w, rtol=RTOL, atol=RTOL * 1e-2 * scale, err_msg=what)
    assert got_b == pytest.approx(ref_b, rel=RTOL, abs=RTOL * 1e-2 * max(1.0, abs(ref_b))), what


# ---------------------------------------------------------------------------------------
# 1. cost-sensitive SVM under a budget on its features


def cvxpy_budget(X, y, sample_weight, C, cost, B):
    """min ||w||^2/2 + C sum_i s_i xi_i  s.t.  y_i (w.x_i + b) >= 1 - xi_i, xi >= 0,
    t >= |w|, cost.t <= B -- from the mathematics, not from the library's model."""
    cp = pytest.importorskip("cvxpy")

    l, d = X.shape
    w, b, xi, t = cp.Variable(d), cp.Variable(), cp.Variable(l), cp.Variable(d)
    rows = [cp.multiply(y, X @ w + b) >= 1 - xi, xi >= 0, t >= w, t >= -w]
    if B is not None:
        rows.append(cost @ t <= B)
    p = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * (sample_weight @ xi)), rows)
    return clarabel(p), w.value, float(b.value)


def test_cost_sensitive_budget_matches_cvxpy_and_drops_expensive_features(capsys):
    from conftest import require

    mod = run_example("cost_sensitive_budget")
    res = mod["main"](require("piqp"), require("highs"))
    X, y, C = res["X"], res["y"], res["C"]
    yy = np.where(y == mod["SICK"], 1.0, -1.0)
    weights = mod["class_weights"](y)
    assert set(weights) == {1.0, mod["MISS_COST"]}
    np.testing.assert_array_equal(weights == mod["MISS_COST"], y == mod["SICK"])
    cost = mod["COST"]
    results = res["results"]
    for r, other in zip(results, res["others"]["highs"]):
        ref = cvxpy_budget(X, yy, weights, C, cost, r["budget"])
        assert_same(r["objective"], r["w"], r["b"], *ref, what=f"piqp, B = {r['budget']}")
        assert_same(other["objective"], other["w"], other["b"], *ref,
                    what=f"highs, B = {r['budget']}")
    # without a budget: the library's own fit with the same per-class weights
    free = sm.fit(X, y, formulation="soft_l1_primal", solver="piqp", C=C, sample_weight=weights)
    assert results[0]["budget"] is None
    assert_same(results[0]["objective"], results[0]["w"], results[0]["b"],
                free.objective, free.w, free.b, what="no budget")
    # every budget below the free solution's spend binds, and the optimum gets worse
    spent_free = results[0]["spent"]
    for a, r in zip(results, results[1:]):
        assert r["budget"] < spent_free
        assert r["spent"] == pytest.approx(r["budget"], rel=1e-7)
        assert r["objective"] > a["objective"]
    # features dropped as B shrinks: the support shrinks, the most expensive goes first
    support = [set(np.flatnonzero(np.abs(r["w"]) > 1e-6)) for r in results]
    assert all(a >= b for a, b in zip(support, support[1:]))
    assert len(support[0]) == 6 and len(support[-1]) == 3
    assert mod["dropped"](results)[0] == (10.0, ["genome"])
    out = capsys.readouterr().out
    assert "genome at B = 10; ECG, MRI at B = 2" in out


# ---------------------------------------------------------------------------------------
# 2. fairness constraint (Zafar et al. 2017)


def cvxpy_fair(X, y, z, C, c):
    """min ||w||^2/2 + C sum_i xi_i over the margin rows and
    -c <= (1/N) sum_i (z_i - mean z)(w.x_i + b) <= c."""
    cp = pytest.importorskip("cvxpy")

    l, d = X.shape
    w, b, xi = cp.Variable(d), cp.Variable(), cp.Variable(l)
    rows = [cp.multiply(y, X @ w + b) >= 1 - xi, xi >= 0]
    if c is not None:
        cov = (z - z.mean()) @ (X @ w + b) / l
        rows += [cov <= c, cov >= -c]
    p = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * cp.sum(xi)), rows)
    return clarabel(p), w.value, float(b.value)


def test_fairness_constraint_matches_cvxpy_and_binds_at_small_c(capsys):
    from conftest import require

    mod = run_example("fairness_constraint")
    res = mod["main"](require("highs"))
    X, y, z, C, rows = res["X"], res["y"], res["z"], res["C"], res["rows"]
    assert "p% rule" in capsys.readouterr().out
    for r in rows:
        s = r["solution"]
        ref = cvxpy_fair(X, y.astype(float), z, C, r["c"])
        assert_same(s.objective, s.w, s.b, *ref, what=f"c = {r['c']}")
        assert r["cov"] == pytest.approx(mod["covariance"](ref[1], ref[2], X, z), abs=1e-7)
    free = rows[0]
    assert free["c"] is None and free["cov"] > 0.9
    for r in rows[1:]:
        assert abs(r["cov"]) <= r["c"] + 1e-8
        # active below the unconstrained covariance, inactive (the same SVM) above it
        assert r["active"] == (r["c"] < free["cov"]), r["c"]
        if not r["active"]:
            np.testing.assert_allclose(r["solution"].w, free["solution"].w, rtol=RTOL)
    small = [r for r in rows if r["c"] is not None and r["c"] <= 0.1]
    assert small and all(r["active"] for r in small)
    # what the bound buys and costs: groups' positive rates closer, training accuracy lower
    assert rows[-1]["p_rule"] > 2 * free["p_rule"]
    assert rows[-1]["accuracy"] < free["accuracy"]
    # another backend on the same model as changed
    m = mod["fair_svm"](X, y, z, 0.1, C=C)
    other = sm.solve(m, solver=require("piqp"))
    ref = cvxpy_fair(X, y.astype(float), z, C, 0.1)
    assert_same(other.objective, other.w, other.b, *ref, what="piqp, c = 0.1")


# ---------------------------------------------------------------------------------------
# 3. the MO-book's LP SVM


def test_mo_book_lp_svm_equals_the_books_own_pyomo_model(capsys):
    from conftest import require

    mod = run_example("mo_book_lp_svm")
    res = mod["main"](require("highs"))
    Xtr, _, ytr, _ = res["data"]
    assert len(ytr) == 1097                     # the notebook's split of the 1,372 notes
    for r in res["cases"]:
        book, sol = r["book"], r["solution"]
        what = f"{r['features']}, lambda = {r['lambd']}"
        assert_same(r["objective"], sol.w, sol.b, book["objective"], book["w"], book["b"],
                    what=what)
        assert r["objective"] == pytest.approx(r["lambd"] * sol.objective, rel=1e-12)
    # the notebook's case (variance, skewness; lambda = 1) and the sparse one
    notebook, sparse = res["cases"][0], res["cases"][1]
    assert notebook["features"] == ("variance", "skewness") and notebook["lambd"] == 1.0
    assert sparse["lambd"] == 0.1 and abs(sparse["book"]["w"][3]) < 1e-9
    assert abs(sparse["solution"].w[3]) < 1e-9 and np.all(np.abs(sparse["solution"].w[:3]) > 0.1)
    assert sparse["test"]["accuracy"] > notebook["test"]["accuracy"]
    # an interior-point backend lands on the same optimum (the LP's solution is unique)
    for r in res["cases"]:
        cols = [mod["FEATURES"].index(f) for f in r["features"]]
        other = mod["library"](Xtr[:, cols], ytr, r["lambd"], require("clarabel"))
        assert_same(r["lambd"] * other.objective, other.w, other.b, r["book"]["objective"],
                    r["book"]["w"], r["book"]["b"], what=f"clarabel, {r['features']}")
    out = capsys.readouterr().out
    assert "features with w = 0: entropy" in out

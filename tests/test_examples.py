"""The demo and the teaching examples run, and say what they should."""

import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from svm_models import cli

ROOT = Path(__file__).resolve().parents[1]


def test_quickstart_example_gives_the_hand_checked_answer():
    mod = runpy.run_path(str(ROOT / "examples" / "quickstart.py"))
    sols = mod["main"]("highs")
    for sol in sols[:4]:  # hard and 1-norm (C = 1): the hand-checked values
        np.testing.assert_allclose(sol.w, [0.5, 0.5], atol=1e-6)
        assert abs(sol.b) < 1e-6
        np.testing.assert_allclose(sol.alpha, [0, 0.25, 0, 0.25, 0, 0], atol=1e-6)
    for sol in sols[4:]:  # 2-norm, C = 1: alpha = 0.2 on the same points, w = (0.4, 0.4)
        np.testing.assert_allclose(sol.w, [0.4, 0.4], atol=1e-6)
        np.testing.assert_allclose(sol.alpha, [0, 0.2, 0, 0.2, 0, 0], atol=1e-6)


def test_demo_prints_a_row_per_formulation_and_dataset(capsys):
    assert cli.demo("highs", quick=True) == 0
    out = capsys.readouterr().out
    import svm_models as sm

    for name in sm.formulations():
        assert out.count(name) >= 3, name   # three datasets
    # primal and dual of each family print the same objective on the same data
    lines = [ln.split() for ln in out.splitlines() if ln.startswith(("soft_l1_primal", "soft_l1_dual"))]
    assert lines[0][2] == lines[1][2]


def test_cli_entry_points():
    r = subprocess.run([sys.executable, "-m", "svm_models.cli", "solvers"], capture_output=True,
                       text=True, check=True)
    assert "highs" in r.stdout and "QCQP" in r.stdout
    r = subprocess.run([sys.executable, "-m", "svm_models.cli", "bogus"], capture_output=True, text=True)
    assert r.returncode != 0


def test_demo_solves_every_c_tuning_row_with_clarabel(capsys):
    """Issue 12: the demo's C-tuning rows failed on 7 of 9 with Clarabel (the t-form)."""
    import svm_models as sm

    assert cli.demo("clarabel", quick=True) == 0
    out = capsys.readouterr().out
    rows = [ln for ln in out.splitlines() if ln.startswith("c_tuning")]
    assert len(rows) == 9
    for ln in rows:
        assert "g*=" in ln and "Error" not in ln, ln
    # the same g* as Ipopt on the first dataset's standard variant
    from svm_models.datasets import breast_cancer

    Xtr, _, ytr, _ = breast_cancer()
    ref = sm.fit(Xtr[:120], ytr[:120], formulation="c_tuning_standard", solver="ipopt",
                 kernel="linear")
    assert f"g*={ref.g:.4f}" in rows[0]
    # issue 13: every radius-margin row solves, the primal and dual of R-SVM+ agree on the
    # 2-D set (both on all of its 60 points)
    radius = [ln for ln in out.splitlines() if ln.startswith("rsvm")]
    assert len(radius) == 9   # 4 + 4 linear; rbf: rsvm_plus_kernel only (the others take no kernel)
    for ln in radius:
        assert "r=" in ln and "Error" not in ln, ln
    primal, dual = (ln.split() for ln in radius[-3:-1])
    assert primal[0] == "rsvm_plus_primal" and dual[0] == "rsvm_plus_dual"
    assert abs(float(primal[2]) - float(dual[2])) <= 1e-5 * abs(float(primal[2]))


def test_scip_demo_finishes_within_its_time_limits():
    """`svm-models demo --solver scip` never finished (SCIP's output filled a pipe); now every
    solve ends, some at the per-solve time limit, reported in the row."""
    from conftest import require

    from svm_models.formulations import get as sm_get

    require("scip")
    r = subprocess.run([sys.executable, "-m", "svm_models.cli", "demo", "--solver", "scip",
                        "--quick", "--time-limit", "1"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [ln for ln in r.stdout.splitlines() if ln.split() and ln.split()[0] in
            set(__import__("svm_models").formulations())]
    # the rbf table leaves out the formulations that take no kernel
    names = __import__("svm_models").formulations()
    linear_only = [n for n in names if "kernel" not in sm_get(n).params]
    assert linear_only   # (read from the registry: no name kept here)
    assert len(rows) == 3 * len(names) - len(linear_only)
    # the rows SCIP solves carry the same objective as the other backends' demo
    solved = [ln for ln in rows if "Error" not in ln]
    assert any(ln.startswith("soft_l1_dual") for ln in solved)
    for ln in rows:
        assert "Error" not in ln or "time_limit" in ln or "NotSeparable" in ln, ln


# ---------------------------------------------------------------------------------------
# The teaching examples (issue 14): quick mode, checked against something computed another way


def run_example(name: str) -> dict:
    return runpy.run_path(str(ROOT / "examples" / f"{name}.py"))


def libsvm_primal_objective(X, y, C):
    """1/2 ||w||^2 + C sum xi of scikit-learn's linear SVC (libsvm), and its w, b."""
    from sklearn.svm import SVC

    ref = SVC(kernel="linear", C=C, tol=1e-10).fit(X, y)
    w, b = ref.coef_[0], ref.intercept_[0]
    yy = np.where(y == ref.classes_[1], 1.0, -1.0)
    return 0.5 * w @ w + C * np.maximum(0.0, 1.0 - yy * (X @ w + b)).sum(), w, b


def test_classic_side_by_side_primal_equals_dual(capsys):
    from conftest import require

    from svm_models.datasets import teaching_2d

    sols = run_example("classic_side_by_side")["main"](quick=True, solver=require("highs"))
    assert sorted(sols) == sorted(f"{f}_{p}" for f in ("hard", "soft_l1", "soft_l2")
                                  for p in ("primal", "dual"))
    for family in ("hard", "soft_l1", "soft_l2"):
        p, d = sols[f"{family}_primal"], sols[f"{family}_dual"]
        assert p.objective == pytest.approx(d.objective, rel=1e-6), family
        np.testing.assert_allclose(p.w, d.w, atol=1e-5)
        assert p.b == pytest.approx(d.b, abs=1e-5)
        assert set(p.support) == set(d.support)
    # and libsvm: the 1-norm soft margin at C = 1, the hard margin as a box far above alpha
    X, y = teaching_2d(20, separation=2.5)
    for name, C in (("soft_l1_dual", 1.0), ("hard_dual", 1e6)):
        _, w, b = libsvm_primal_objective(X, y, C)
        np.testing.assert_allclose(sols[name].w, w, atol=1e-5)
        assert sols[name].b == pytest.approx(b, abs=1e-5)
    # the 2-norm primal's slacks are the dual's alpha / C
    np.testing.assert_allclose(sols["soft_l2_primal"].xi, sols["soft_l2_dual"].alpha, atol=1e-6)
    assert "primal vs dual" in capsys.readouterr().out


def test_swap_solvers_every_backend_agrees():
    from conftest import QP_BACKENDS, usable

    from svm_models.datasets import breast_cancer

    sols = run_example("swap_solvers")["main"](quick=True)
    assert set(sols) == set(usable(QP_BACKENDS))
    objs = np.array([s.objective for s in sols.values()])
    assert np.ptp(objs) <= 1e-6 * max(1.0, abs(objs[0]))
    W = np.array([s.w for s in sols.values()])
    assert np.max(np.ptp(W, axis=0)) <= 1e-5
    # the same optimum from libsvm
    Xtr, _, ytr, _ = breast_cancer()
    ref, _, _ = libsvm_primal_objective(Xtr[:40], ytr[:40], 1.0)
    assert objs[0] == pytest.approx(ref, rel=1e-6)


def test_compose_block_budget_holds_and_matches_an_independent_solve():
    from conftest import edited_path, require
    from scipy.optimize import minimize

    import svm_models as sm

    mod = run_example("compose_block")
    res = mod["main"](quick=True, solver=require("highs"))
    free, sol, B, X, y = res["free"], res["budget"], res["B"], res["X"], res["y"]
    l1 = np.abs(sol.w).sum()
    assert l1 <= B * (1 + 1e-7) and l1 == pytest.approx(B, rel=1e-6)   # holds, and binds
    assert np.abs(free.w).sum() > 2 * B                                 # it changed the answer
    assert sol.objective > free.objective + 0.1
    assert sol.path == edited_path(require("highs")) and "general_path_reason" in sol.extra
    # a second backend on the same composed model
    other = sm.solve(mod["budget_model"](X, y, B), solver=require("clarabel"))
    assert other.objective == pytest.approx(sol.objective, rel=1e-6)
    np.testing.assert_allclose(other.w, sol.w, atol=1e-5)
    # scipy (SLSQP), written from the mathematics: z = (w, b, xi, u), A z >= c
    l, d = X.shape
    yy = np.where(y == sol.classes[1], 1.0, -1.0)
    n, U = 2 * d + 1 + l, slice(d + 1 + l, 2 * d + 1 + l)
    A, c = np.zeros((l + 2 * d + 1, n)), np.zeros(l + 2 * d + 1)
    A[:l, :d], A[:l, d], A[:l, d + 1:d + 1 + l], c[:l] = yy[:, None] * X, yy, np.eye(l), 1.0
    A[l:l + d, U], A[l:l + d, :d] = np.eye(d), -np.eye(d)              # u - w >= 0
    A[l + d:l + 2 * d, U], A[l + d:l + 2 * d, :d] = np.eye(d), np.eye(d)  # u + w >= 0
    A[-1, U], c[-1] = -1.0, -B                                         # B - sum u >= 0
    q = np.r_[np.zeros(d + 1), np.ones(l), np.zeros(d)]                # C = 1 on the slacks
    z0 = q.copy()                                                      # w = b = u = 0, xi = 1: feasible
    r = minimize(lambda z: 0.5 * z[:d] @ z[:d] + q @ z, z0,
                 jac=lambda z: np.r_[z[:d], np.zeros(n - d)] + q, method="SLSQP",
                 bounds=[(None, None)] * (d + 1) + [(0, None)] * (l + d),
                 constraints=[{"type": "ineq", "fun": lambda z: A @ z - c, "jac": lambda z: A}],
                 options={"ftol": 1e-12, "maxiter": 1000})
    assert r.success, r.message
    assert r.fun == pytest.approx(sol.objective, rel=1e-6)
    np.testing.assert_allclose(sol.w, r.x[:d], atol=1e-5)


def test_c_path_example_equals_separate_fits(tmp_path):
    from conftest import require

    import svm_models as sm

    png = tmp_path / "path.png"
    res = run_example("c_path")["main"](quick=True, solver=require("highs"), plot=str(png))
    assert png.stat().st_size > 0 and res["figure"] is not None
    X, y = res["X"], res["y"]
    for C, s in zip(res["Cs"], res["solutions"]):
        one = sm.fit(X, y, formulation="soft_l1_dual", solver=require("piqp"), C=C)
        assert s.C == C
        assert s.objective == pytest.approx(one.objective, rel=1e-6)
        np.testing.assert_allclose(s.w, one.w, atol=1e-5 * max(1.0, np.abs(one.w).max()))
    import matplotlib.pyplot as plt

    plt.close(res["figure"])


def test_readme_snippets_run_and_print_what_they_say(capsys):
    """The README's first snippets (five lines, build/change, embedding, estimator) run as
    written, in order, and print the values their comments state."""
    import re

    text = (ROOT / "README.md").read_text()
    part = text[text.index("## Five lines"):text.index("## Public API")]
    code = "\n".join(re.findall(r"```python\n(.*?)```", part, re.S))
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    # the printed numbers, to 1e-9: the text itself changes when the data are perturbed at
    # 1e-12 (SVM_MODELS_PERTURB; b = 0.0 prints as 1.1e-12)
    for got, want in zip(out, ["[0.5 0.5] 0.0 [0.   0.25 0.   0.25 0.   0.  ] [1 3]",
                               "[-0.4  0.6] 0.0"]):
        numbers = [re.findall(r"-?\d+\.?\d*(?:e[-+]\d+)?", t) for t in (got, want)]
        assert len(numbers[0]) == len(numbers[1]), (got, want)
        np.testing.assert_allclose(np.array(numbers[0], float), np.array(numbers[1], float),
                                   atol=1e-9, err_msg=got)
    assert out[2].startswith("{'svmclassifier__C': ")


def test_the_readmes_figures_are_recorded_benchmark_figures():
    """Every row of a table in the README's Performance section is a row of a results file of
    ``benchmarks/`` (copied, not retyped), and that file records the conditions of its runs
    (load and threads: ``benchmarks/conditions.py``) -- a figure the README states comes from
    a run whose machine state is known."""
    text = (ROOT / "README.md").read_text()
    part = text[text.index("## Performance"):]
    nxt = part.find("\n## ", 5)
    part = part if nxt < 0 else part[:nxt]
    rows = [line.strip() for line in part.splitlines()
            if line.startswith("| ") and not line.startswith("| target |")
            and not line.startswith("| data |") and not line.startswith("| measure |")]
    assert len(rows) >= 10, "the Performance section has lost its tables"
    results = {p.name: p.read_text() for p in (ROOT / "benchmarks").glob("*results*.md")}
    for row in rows:
        where = [name for name, body in results.items() if row in body]
        assert where, f"README row not found in any benchmarks/*results*.md: {row[:100]}"
        assert any("threads: " in results[name] or "BLAS threads" in results[name]
                   for name in where), \
            f"{where}: the run behind this README row did not record its threads: {row[:80]}"

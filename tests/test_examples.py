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
    assert len(radius) == 12
    for ln in radius:
        assert "r=" in ln and "Error" not in ln, ln
    primal, dual = (ln.split() for ln in radius[-3:-1])
    assert primal[0] == "rsvm_plus_primal" and dual[0] == "rsvm_plus_dual"
    assert abs(float(primal[2]) - float(dual[2])) <= 1e-5 * abs(float(primal[2]))


def test_scip_demo_finishes_within_its_time_limits():
    """`svm-models demo --solver scip` never finished (SCIP's output filled a pipe); now every
    solve ends, some at the per-solve time limit, reported in the row."""
    from conftest import require

    require("scip")
    r = subprocess.run([sys.executable, "-m", "svm_models.cli", "demo", "--solver", "scip",
                        "--quick", "--time-limit", "2"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [ln for ln in r.stdout.splitlines() if ln.split() and ln.split()[0] in
            set(__import__("svm_models").formulations())]
    assert len(rows) == 3 * len(__import__("svm_models").formulations())
    # the rows SCIP solves carry the same objective as the other backends' demo
    solved = [ln for ln in rows if "Error" not in ln]
    assert any(ln.startswith("soft_l1_dual") for ln in solved)
    for ln in rows:
        assert "Error" not in ln or "time_limit" in ln or "NotSeparable" in ln, ln

"""svm_models.plots: every figure is written and read back, and its numbers are checked against
something computed another way (scikit-learn's SVC, separate fits, the QP at fixed g solved by
libsvm). Set ``SVM_MODELS_PLOTS=/some/dir`` to keep the PNGs there (default: a temporary
directory per test)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from conftest import blobs, require  # noqa: E402
from scipy.optimize import linprog  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

import svm_models as sm  # noqa: E402
from svm_models.datasets import teaching_2d  # noqa: E402
from svm_models.errors import DataError, MissingDependencyError, ParameterError  # noqa: E402
from svm_models.formulations.c_tuning import M_of_g  # noqa: E402
from svm_models.plots import c_path, c_tuning_bound, decision_boundary  # noqa: E402

LABELS = np.array(["benign", "malignant"])


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture
def outdir(tmp_path) -> Path:
    d = Path(os.environ.get("SVM_MODELS_PLOTS") or tmp_path)
    d.mkdir(parents=True, exist_ok=True)
    return d


def data(n=30, separation=2.5):
    """Two 2-D clouds, the user's labels strings (classes[0] = 'benign' is -1)."""
    X, y = teaching_2d(n, separation=separation)
    return X, np.where(y > 0, LABELS[1], LABELS[0])


def read_back(path: Path) -> np.ndarray:
    assert path.stat().st_size > 0
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    return img


def by_gid(ax, gid):
    found = [a for a in ax.get_children() if a.get_gid() == gid]
    assert len(found) == 1, (gid, found)
    return found[0]


def contour_points(ax, gid) -> np.ndarray:
    return np.vstack([p.vertices for p in by_gid(ax, gid).get_paths() if len(p.vertices)])


# ---------------------------------------------------------------------------------------
# decision_boundary


@pytest.mark.parametrize("formulation, kernel", [("soft_l1_primal", "linear"),
                                                 ("soft_l1_dual", "rbf")])
def test_decision_boundary_against_scikit_learn(formulation, kernel, outdir):
    X, y = data()
    sol = sm.fit(X, y, formulation=formulation, solver=require("piqp"), C=1.0, kernel=kernel)
    ref = SVC(kernel=kernel, C=1.0, gamma="scale", tol=1e-10).fit(X, y)
    png = outdir / f"decision_boundary_{kernel}.png"
    fig = decision_boundary(sol, X, y, path=png)
    read_back(png)
    ax = fig.axes[0]
    # f = 0 and f = +-1 where the contours run, by scikit-learn's decision function (the
    # grid's linear interpolation is exact for the linear kernel, O(h^2) for the rbf)
    tol = 1e-5 if kernel == "linear" else 2e-3
    on0, on1 = contour_points(ax, "boundary"), contour_points(ax, "margins")
    assert len(on0) > 50 and len(on1) > 50
    assert np.max(np.abs(ref.decision_function(on0))) < tol
    assert np.max(np.abs(np.abs(ref.decision_function(on1)) - 1.0)) < tol
    # the circled points are the support vectors, the same as libsvm's
    circled = by_gid(ax, "support_vectors").get_offsets()
    np.testing.assert_array_equal(circled, sol.support_vectors)
    assert sorted(sol.support) == sorted(ref.support_)
    # the legend speaks the user's labels; the title the formulation, solver, C, objective
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "class benign" in legend and "class malignant" in legend
    assert f"support vectors ({len(ref.support_)})" in legend
    title = ax.get_title()
    assert formulation in title and "piqp" in title and "C = 1" in title
    assert f"{sol.objective:.8g}" in title


@pytest.mark.parametrize("formulation, solver, kw", [
    ("hard_dual", "highs", {"kernel": "poly", "degree": 2, "coef0": 1.0}),
    ("soft_l2_primal", "clarabel", {"C": 2.0, "kernel": "rbf"}),
    ("c_tuning_standard", "clarabel", {"kernel": "rbf"}),
    ("rsvm_plus_kernel", "clarabel", {"C": 1.0, "kernel": "rbf"}),
    ("rsvm_mu_plus", "clarabel", {"C": None, "kernels": ["linear", "rbf"]}),
    ("rsvm_plus_primal", "clarabel", {"C": 1.0, "lam": 0.5}),
])
def test_decision_boundary_every_family(formulation, solver, kw):
    """Every family draws; the boundary's points are zeros of the solution's own f."""
    X, y = data(24)
    sol = sm.fit(X, y, formulation=formulation, solver=require(solver), **kw)
    ax = decision_boundary(sol, X, y).axes[0]
    on0 = contour_points(ax, "boundary")
    scale = np.max(np.abs(sol.decision_function(X)))
    assert np.max(np.abs(sol.decision_function(on0))) < 1e-2 * scale
    np.testing.assert_array_equal(by_gid(ax, "support_vectors").get_offsets(),
                                  sol.support_vectors)
    title = ax.get_title()
    assert formulation in title and f"{sol.objective:.8g}" in title
    assert ("C*" if formulation.startswith("c_tuning") else "C") in title
    if kw.get("C", 1) is None:
        assert "C = none (hard margin)" in title
    if formulation.startswith("rsvm"):
        assert "lam = " in title


def test_decision_boundary_draws_on_the_users_axes_and_closes_nothing():
    X, y = data()
    sol = sm.fit(X, y, formulation="soft_l1_dual", solver=require("highs"), C=1.0)
    fig, (left, right) = plt.subplots(1, 2)
    out = decision_boundary(sol, X, y, ax=right)
    assert out is fig and plt.fignum_exists(fig.number)
    assert not left.has_data() and right.has_data()


def test_decision_boundary_bad_input():
    X, y = data()
    sol = sm.fit(X, y, formulation="soft_l1_dual", solver=require("highs"), C=1.0)
    X3 = np.column_stack([X, X[:, 0]])
    with pytest.raises(ParameterError, match="d = 3"):
        decision_boundary(sol, X3, y)
    sol3 = sm.fit(X3, y, formulation="soft_l1_dual", solver="highs", C=1.0)
    with pytest.raises(ParameterError, match="d = 3 features"):
        decision_boundary(sol3, X, y)
    pre = sm.fit(X @ X.T, y, formulation="soft_l1_dual", solver="highs", kernel="precomputed")
    with pytest.raises(ParameterError, match="precomputed"):
        decision_boundary(pre, X, y)
    with pytest.raises(DataError, match="not trained on"):
        decision_boundary(sol, X, np.where(y == "benign", "b", "m"))
    with pytest.raises(DataError, match="one label per row"):
        decision_boundary(sol, X, y[:-1])
    with pytest.raises(ParameterError, match="Solution"):
        decision_boundary(sol.to_dict(), X, y)


# ---------------------------------------------------------------------------------------
# c_path


def test_c_path_panels_hold_the_path_values(outdir):
    X, y = data(separation=1.5)
    Cs = [0.01, 0.1, 1.0, 10.0, 100.0]
    sols = sm.fit_path(X, y, Cs[::-1], formulation="soft_l1_dual", solver=require("piqp"))
    png = outdir / "c_path.png"
    fig = c_path(sols, X, y, path=png)
    read_back(png)
    axes = {gid: next(a for a in fig.axes if any(c.get_gid() == gid for c in a.get_children()))
            for gid in ("margin", "n_support", "objective", "accuracy")}
    lines = {gid: by_gid(ax, gid) for gid, ax in axes.items()}
    for line in lines.values():
        np.testing.assert_array_equal(line.get_xdata(), Cs)          # sorted by C
        assert axes["margin"].get_xscale() == "log"
    by_C = sorted(sols, key=lambda s: s.C)
    np.testing.assert_array_equal(lines["n_support"].get_ydata(), [s.n_support for s in by_C])
    # against scikit-learn at each C: margin 1/||w||, objective (the dual value), accuracy
    for k, C in enumerate(Cs):
        ref = SVC(kernel="linear", C=C, tol=1e-10).fit(X, y)
        w = ref.coef_[0]
        a = np.abs(ref.dual_coef_[0])
        assert lines["margin"].get_ydata()[k] == pytest.approx(1 / np.linalg.norm(w), rel=1e-5)
        assert lines["objective"].get_ydata()[k] == pytest.approx(a.sum() - 0.5 * w @ w,
                                                                  rel=1e-6, abs=1e-9)
        assert lines["accuracy"].get_ydata()[k] == pytest.approx(ref.score(X, y))


def test_c_path_says_when_there_is_no_margin():
    """Kernelized R-SVM+ has no w: its margin panel says so instead of a line."""
    X, y = data(20)
    sols = [sm.fit(X, y, formulation="rsvm_plus_kernel", solver=require("clarabel"), C=C,
                   kernel="rbf") for C in (0.1, 1.0)]
    fig = c_path(sols, X, y)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any("no margin" in t for t in texts)
    assert not any(c.get_gid() == "margin" for ax in fig.axes for c in ax.get_children())
    obj = next(c for ax in fig.axes for c in ax.get_children() if c.get_gid() == "objective")
    np.testing.assert_array_equal(obj.get_ydata(), [s.objective for s in sols])


def test_c_path_bad_input():
    X, y = data(20)
    soft = sm.fit(X, y, formulation="soft_l1_dual", solver=require("highs"), C=1.0)
    hard = sm.fit(X, y, formulation="hard_dual", solver="highs")
    other = sm.fit(X, y, formulation="soft_l2_dual", solver="highs", C=1.0)
    with pytest.raises(ParameterError, match="at least one"):
        c_path([], X, y)
    with pytest.raises(ParameterError, match="finite C"):
        c_path([hard], X, y)
    with pytest.raises(ParameterError, match="one formulation"):
        c_path([soft, other], X, y)
    with pytest.raises(ParameterError, match="Solution"):
        c_path([soft, 1.0], X, y)


# ---------------------------------------------------------------------------------------
# c_tuning_bound


def libsvm_value(M, y):
    """max e'a - 1/2 a'G(M)a, a >= 0, y'a = 0 by libsvm (a box far above every alpha)."""
    ref = SVC(kernel="precomputed", C=1e8, tol=1e-12).fit(M, y)
    ya, S = ref.dual_coef_[0], ref.support_
    return np.abs(ya).sum() - 0.5 * ya @ M[np.ix_(S, S)] @ ya


def test_c_tuning_bound_minimum_at_g_star(outdir):
    X, y = data(24, separation=2.0)
    sol = sm.fit(X, y, formulation="c_tuning_standard", solver=require("clarabel"), kernel="rbf")
    n_grid = 11
    png = outdir / "c_tuning_bound.png"
    fig = c_tuning_bound(sol, X, y, solver=require("piqp"), n_grid=n_grid, path=png)
    read_back(png)
    ax = fig.axes[0]
    curve = by_gid(ax, "bound")
    g, D = np.asarray(curve.get_xdata()), np.asarray(curve.get_ydata())
    grid = np.linspace(0.0, 1.0, n_grid)
    assert 0 < sol.g < 1 and np.isin(grid, g).all() and sol.g in g
    V = sol.objective
    # the curve at g* is the QCQP's optimum; nowhere below it; smallest next to g*
    assert D[g == sol.g][0] == pytest.approx(V, rel=1e-6)
    assert np.all(D >= V * (1 - 1e-7))
    on_grid = np.isin(g, grid)
    assert abs(g[on_grid][np.argmin(D[on_grid])] - sol.g) <= 1 / (n_grid - 1)
    # D(g) by libsvm at two grid points, and by hand at the ends' formula for C
    K = sol.kernel.gram(X)
    yy = np.where(y == sol.classes[1], 1.0, -1.0)
    for k in (2, 8):
        assert D[g == grid[k]][0] == pytest.approx(libsvm_value(M_of_g(K, grid[k]), yy), rel=1e-5)
    np.testing.assert_allclose(by_gid(ax, "qcqp_optimum").get_xydata(), [[sol.g, V]])
    # the top axis: ticks at g = l / (l + r C) for C = 10^k
    top = next(c for c in ax.get_children() if type(c).__name__ == "SecondaryAxis")
    l, r = len(y), np.trace(K)
    for tick, lab in zip(top.get_xticks(), top.get_xticklabels()):
        assert tick == pytest.approx(l / (l + r * float(lab.get_text())))
    assert f"C* = {sol.C:.4g}" in ax.get_title()


def test_c_tuning_bound_where_the_hard_margin_does_not_exist():
    """Linear kernel, overlapping classes: M(0) = K/r admits no hard margin, so D(0) = +inf
    (left out of the curve, said in the legend); the infeasibility checked by an LP."""
    X, y = blobs(1, l=20, sep=0.5)
    lp = linprog(np.zeros(3), A_ub=-(y[:, None] * np.column_stack([X, np.ones(len(y))])),
                 b_ub=-np.ones(len(y)), bounds=[(None, None)] * 3)
    assert lp.status == 2                                   # no w, b with y(w.x + b) >= 1
    sol = sm.fit(X, y, formulation="c_tuning_standard", solver=require("clarabel"))
    ax = c_tuning_bound(sol, X, y, solver=require("piqp"), n_grid=5).axes[0]
    g, D = by_gid(ax, "bound").get_data()
    assert g[0] == 0.0 and np.isnan(D[0]) and np.all(np.isfinite(D[1:]))
    assert any("+inf" in t.get_text() for t in ax.get_legend().get_texts())
    assert D[g == sol.g][0] == pytest.approx(sol.objective, rel=1e-6)


def test_c_tuning_bound_bad_input():
    X, y = data(16)
    soft = sm.fit(X, y, formulation="soft_l1_dual", solver=require("highs"), C=1.0)
    with pytest.raises(ParameterError, match="C-tuning"):
        c_tuning_bound(soft, X, y)
    ct = sm.fit(X, y, formulation="c_tuning_standard", solver=require("clarabel"))
    with pytest.raises(ParameterError, match="n_grid"):
        c_tuning_bound(ct, X, y, n_grid=1)
    with pytest.raises(DataError, match="fitted on 16 points"):
        c_tuning_bound(ct, X[:-2], y[:-2])
    with pytest.raises(DataError, match="training labels"):
        c_tuning_bound(ct, X, np.where(y == "benign", 0, 1))


# ---------------------------------------------------------------------------------------
# matplotlib: optional, Agg without a display


def test_missing_matplotlib_names_the_extra(monkeypatch):
    X, y = data(16)
    sol = sm.fit(X, y, formulation="soft_l1_dual", solver=require("highs"), C=1.0)
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # import matplotlib fails
    with pytest.raises(MissingDependencyError, match=r"pip install 'svm-models\[plot\]'"):
        decision_boundary(sol, X, y)


def test_agg_backend_without_a_display(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND")}
    code = ("import svm_models as sm, matplotlib\n"
            "from svm_models.datasets import toy\n"
            "from svm_models.plots import decision_boundary\n"
            "X, y = toy()\n"
            "s = sm.fit(X, y, formulation='hard_dual', solver='highs')\n"
            f"decision_boundary(s, X, y, path={str(tmp_path / 'toy.png')!r})\n"
            "print(matplotlib.get_backend())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       check=True, timeout=120)
    assert r.stdout.strip().lower() == "agg"
    read_back(tmp_path / "toy.png")

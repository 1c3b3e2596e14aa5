"""Issue 31, "On the surfaces": the estimator's errors, the status vocabulary, the messages,
the demo's tables, and the plots (support vectors, margins, axis names, the C-tuning curve's
backend). Every check is against something computed another way: scikit-learn/libsvm, Pyomo's
own solver interface, numpy on the solution's w and b, the matplotlib artists read back."""

from __future__ import annotations

import re
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pyomo.environ as pyo  # noqa: E402
import pytest  # noqa: E402
from conftest import require  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

import svm_models as sm  # noqa: E402
from svm_models import cli  # noqa: E402
from svm_models.datasets import teaching_2d  # noqa: E402
from svm_models.errors import DataError, ParameterError, plain  # noqa: E402
from svm_models.estimator import SVMClassifier, SVMClassifierCV  # noqa: E402
from svm_models.formulations import get  # noqa: E402
from svm_models.formulations.c_tuning import M_of_g  # noqa: E402
from svm_models.plots import c_tuning_bound, decision_boundary  # noqa: E402
from svm_models.status import Status  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def by_gid(ax, gid):
    found = [a for a in ax.get_children() if a.get_gid() == gid]
    assert len(found) == 1, (gid, found)
    return found[0]


def legend_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


# ---------------------------------------------------------------------------------------
# 1. NaN in SVMClassifier.fit: DataError (a ValueError), scikit-learn's words kept


def nan_data():
    X, y = teaching_2d(20, seed=4)
    Xn = X.copy()
    Xn[7, 1] = np.nan
    return X, y, Xn


def test_fit_with_nan_raises_data_error_naming_the_entry_and_the_way_out():
    X, y, Xn = nan_data()
    row, col = np.argwhere(np.isnan(Xn))[0]                       # (7, 1), found by numpy
    with pytest.raises(DataError) as info:
        SVMClassifier(solver=require("highs"), C=1.0).fit(Xn, y)
    text = str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, sm.SVMError)
    assert text.startswith("Input X contains NaN")                # scikit-learn's own words
    assert f"row {row}, column {col}" in text and "SimpleImputer" in text
    # the way out it names works: without the row, the fit is libsvm's
    keep = ~np.isnan(Xn).any(axis=1)
    clf = SVMClassifier(solver="highs", C=1.0).fit(Xn[keep], y[keep])
    ref = SVC(kernel="linear", C=1.0, tol=1e-10).fit(X[keep], y[keep])
    np.testing.assert_allclose(clf.coef_, ref.coef_, atol=1e-5)
    np.testing.assert_allclose(clf.intercept_, ref.intercept_, atol=1e-5)
    # predict, infinity, NaN labels and the CV estimator say the same kind of thing
    with pytest.raises(DataError, match=r"Input X contains NaN \(first at row 7, column 1\)"):
        clf.predict(Xn)
    Xi = X.copy()
    Xi[3, 0] = np.inf
    with pytest.raises(DataError, match=r"Input X contains infinity.*row 3, column 0"):
        SVMClassifier(solver="highs").fit(Xi, y)
    yn = y.astype(float)
    yn[5] = np.nan
    with pytest.raises(DataError, match=r"Input y contains NaN \(first at position 5\).*label"):
        SVMClassifier(solver="highs").fit(X, yn)
    with pytest.raises(DataError, match="Input X contains NaN"):
        SVMClassifierCV(solver="highs", Cs=[1.0], cv=2).fit(Xn, y)
    with pytest.raises(DataError, match="Unknown label type: continuous"):
        SVMClassifier(solver="highs").fit(X, np.linspace(0.1, 0.9, len(y)))


def test_scikit_learns_nan_and_inf_check_passes_with_data_error():
    from sklearn.utils.estimator_checks import check_estimators_nan_inf

    check_estimators_nan_inf("SVMClassifier", SVMClassifier(solver=require("piqp")))


# ---------------------------------------------------------------------------------------
# 2. Status.solution_status: Pyomo's convention, read from Pyomo's own HiGHS interface


def test_infeasible_maps_to_pyomos_no_solution_as_pyomos_own_interface_reports_it():
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.results import SolutionStatus

    require("highs")
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x >= 2)
    m.o = pyo.Objective(expr=m.x)
    res = SolverFactory("highs").solve(m, raise_exception_on_nonoptimal_result=False,
                                       load_solutions=False)
    assert res.termination_condition == Status.infeasible.termination_condition
    assert res.solution_status == Status.infeasible.solution_status == SolutionStatus.noSolution
    m.c.deactivate()
    res = SolverFactory("highs").solve(m)
    assert res.termination_condition == Status.optimal.termination_condition
    assert res.solution_status == Status.optimal.solution_status == SolutionStatus.optimal
    # only an optimum carries a solution; the library's own infeasible hard margin says so
    assert {s.solution_status for s in Status if s is not Status.optimal} == {
        SolutionStatus.noSolution}
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(sm.NotSeparableError) as info:
        sm.fit(X, [0, 0, 1, 1], formulation="hard_primal", solver="highs")
    assert info.value.status is Status.infeasible
    assert info.value.status.solution_status == SolutionStatus.noSolution


# ---------------------------------------------------------------------------------------
# 3. Messages print numpy scalars as plain numbers


def test_plain_turns_numpy_values_into_python_ones():
    value = {"a": np.int64(1), "b": [np.float64(0.5), (np.bool_(True), "s")],
             np.str_("c"): np.array([[1, 2]])}
    assert plain(value) == {"a": 1, "b": [0.5, (True, "s")], "c": [[1, 2]]}
    assert repr(plain(value)) == "{'a': 1, 'b': [0.5, (True, 's')], 'c': [[1, 2]]}"
    assert type(plain(np.int64(3))) is int and plain("x") == "x" and plain(None) is None


def test_messages_show_plain_numbers():
    X, y = teaching_2d(12, seed=2)
    cases = [
        (lambda: SVMClassifier(solver="highs").fit(X, np.full(len(y), 7)),
         DataError, "y has 1 class (7)"),
        (lambda: sm.fit(X, y, kernel="rbf", gamma=np.float64(-1.5), solver="highs"),
         ParameterError, "gamma must be a positive number, 'scale' or 'auto'; got -1.5"),
        (lambda: sm.fit(X, y, kernel="poly", degree=np.int64(0), solver="highs"),
         ParameterError, "degree must be a positive integer; got 0"),
        (lambda: sm.fit_path(X, y, np.array([-1.0, 1.0]), solver="highs"),
         ParameterError, "got -1.0"),
        (lambda: sm.fit(X, y, formulation="c_tuning_standard", solver="clarabel",
                        g_bounds=(np.float64(0.2), np.float64(np.inf))),
         ParameterError, "g_bounds must be finite; got (0.2, inf)"),
    ]
    for call, kind, expected in cases:
        with pytest.raises(kind) as info:
            call()
        text = str(info.value)
        assert expected in text and "np." not in text, text
    # a label the SVM does not have, given as numpy's integer
    sol = sm.fit(X, y, solver="highs", C=1.0)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2))
    with pytest.raises(ParameterError) as info:
        sm.add_decision_function(m, sol, m.x, require=np.int64(5))
    assert "require=5 is not a class of this SVM; its classes are [-1, 1]" in str(info.value)
    # solver options and C checked through their own paths
    for call, expected in [(lambda: sm.fit(X, y, solver="highs", C=np.float64(-2.0)),
                            "C must be a finite positive number; got -2.0"),
                           (lambda: sm.fit(X, y, solver="highs", tol=np.float64(-1.0)),
                            "tol must be a positive number; got -1.0"),
                           (lambda: sm.fit(X, y, solver="highs", iter_limit=np.int64(0)),
                            "iter_limit must be a positive integer; got 0"),
                           (lambda: sm.fit(X, y, solver="highs", options={"no_such": np.int64(1)}),
                            "HiGHS refused the option no_such=1")]:
        with pytest.raises((ParameterError, sm.SolverError)) as info:
            call()
        assert expected in str(info.value) and "np." not in str(info.value), str(info.value)


@pytest.mark.parametrize("formulation", ["soft_l1_primal", "soft_l2_dual", "rsvm_plus_dual",
                                         "c_tuning_standard"])
def test_a_block_inside_a_larger_model_reports_its_own_objective(formulation):
    """``extract(block)`` of an SVM block solved inside the user's model, whose objective adds
    ``5 z`` (z in [2, 3]) to the block's: the Solution's objective is the SVM's own, the
    value ``fit`` reports for the same problem alone (another solve), not the model's."""
    X, y = teaching_2d(12, seed=2)
    solver = "clarabel" if formulation.startswith("c_tuning") else "ipopt"
    ref = sm.fit(X, y, formulation, solver=solver)
    outer = pyo.ConcreteModel()
    outer.svm = pyo.Block()
    sm.build(formulation, X, y, block=outer.svm)
    outer.z = pyo.Var(bounds=(2, 3))
    outer.svm.objective.deactivate()
    sense = outer.svm.objective.sense
    outer.obj = pyo.Objective(expr=outer.svm.objective.expr + sense * 5 * outer.z, sense=sense)
    sm.optimize(outer, solver)
    sol = sm.extract(outer.svm)
    assert abs(pyo.value(outer.obj) - ref.objective) > 9.0   # the model's objective is not it
    assert sol.objective == pytest.approx(ref.objective, rel=1e-5, abs=1e-7)


# ---------------------------------------------------------------------------------------
# 4. The demo's rbf table: no linear-only rows


def demo_tables(out: str) -> list[tuple[str, dict, list[str]]]:
    """(title, {formulation: row fields}, lines after the table) per table of the demo."""
    names = set(sm.formulations())
    tables = []
    for block in out.split("\n== ")[1:]:
        lines = block.splitlines()
        rows = {ln.split()[0]: ln.split() for ln in lines if ln.split() and ln.split()[0] in names}
        tables.append((lines[0], rows, [ln for ln in lines[3:] if ln.startswith("(")]))
    return tables


def test_demo_rbf_table_holds_only_the_formulations_that_take_a_kernel(capsys):
    require("clarabel")
    assert cli.demo("clarabel", quick=True) == 0
    tables = demo_tables(capsys.readouterr().out)
    assert len(tables) == 3
    (lin_title, linear, lin_notes), (rbf_title, rbf, rbf_notes), (_, two_d, _) = tables
    assert "linear kernel" in lin_title and "rbf kernel" in rbf_title
    every = sm.formulations()
    # linear only: the builder has no kernel argument (read from its signature)
    import inspect

    linear_only = [n for n in every
                   if "kernel" not in inspect.signature(get(n).builder).parameters]
    # ... which is the registry's (no name kept here)
    assert linear_only and linear_only == [n for n in every if "kernel" not in get(n).params]
    # the rows: what clarabel takes (by the backend table); the others named in one line
    taken = [n for n in every if get(n).problem_class in sm.solvers()["clarabel"]["classes"]]
    assert list(linear) == taken and list(two_d) == taken
    assert len(lin_notes) == 1 and lin_notes[0].startswith("(skipped: ")
    assert all(n in lin_notes[0] for n in every if n not in taken)
    assert list(rbf) == [n for n in taken if n not in linear_only]
    assert (f"(not in this table: {', '.join(linear_only)}, which take no kernel; "
            "their rows are in the linear tables)") in rbf_notes
    # the rbf rows are rbf fits: the 1-norm dual's objective is libsvm's with that kernel
    Xtr, _, ytr, _ = sm.datasets.breast_cancer()
    Xtr, ytr = Xtr[:120], ytr[:120]
    ref = SVC(kernel="rbf", C=1.0, gamma=1.0 / Xtr.shape[1], tol=1e-10).fit(Xtr, ytr)
    ya = ref.dual_coef_[0]
    G = np.exp(-((Xtr[ref.support_][:, None] - Xtr[ref.support_][None]) ** 2).sum(-1)
               / Xtr.shape[1])
    libsvm = np.abs(ya).sum() - 0.5 * ya @ G @ ya
    assert float(rbf["soft_l1_dual"][2]) == pytest.approx(libsvm, rel=1e-5)
    assert rbf["rsvm_plus_kernel"][2] != linear["rsvm_plus_kernel"][2]


# ---------------------------------------------------------------------------------------
# 5. rsvm_plus_kernel: the circled points are the solution's support, not every point


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_rsvm_plus_kernel_circles_its_support_only(kernel):
    X, y = teaching_2d(30, seed=1)
    sols = [sm.fit(X, y, formulation="rsvm_plus_kernel", solver=require(s), C=1.0,
                   kernel=kernel) for s in ("clarabel", "piqp")]
    sol = sols[0]
    l = len(y)
    assert 0 < len(sol.support) < l
    # the support is where stationarity puts the representer: the points on a margin or at
    # the largest or smallest decision value, found here from f and b alone
    f, b = sol.extra["f"], sol.b
    yy = np.where(y == sol.classes[1], 1.0, -1.0)
    on_margin = yy * (f + b) <= 1 + 1e-5
    at_end = (f >= f.max() - 1e-5) | (f <= f.min() + 1e-5)
    np.testing.assert_array_equal(sol.support, np.flatnonzero(on_margin | at_end))
    np.testing.assert_array_equal(sols[1].support, sol.support)     # the same on PIQP
    # the sparse representer is the solution's classifier: K a = f, and for the linear
    # kernel the same as w
    K = sol.kernel.gram(X)
    np.testing.assert_allclose(K @ sol.dual_coef, f, atol=1e-7 * max(1.0, np.abs(f).max()))
    if kernel == "linear":
        np.testing.assert_allclose(X.T @ sol.dual_coef, sol.w, atol=1e-9)
    # the plot circles exactly those points
    ax = decision_boundary(sol, X, y).axes[0]
    circled = by_gid(ax, "support_vectors").get_offsets()
    assert len(circled) == len(sol.support) < l
    np.testing.assert_array_equal(circled, X[sol.support])
    assert f"support vectors ({len(sol.support)})" in legend_texts(ax)


# ---------------------------------------------------------------------------------------
# 6. The margins f = +-1 of a C-tuning solution are drawn


def test_c_tuning_plot_draws_its_margins():
    X, y = teaching_2d(30, seed=1, separation=0.5)
    sol = sm.fit(X, y, formulation="c_tuning_standard", solver=require("clarabel"),
                 kernel="linear")
    w, b = sol.w, sol.b
    # on the data's own area (10% border) |f| < 1: a plot of that area alone has no margins
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.1 * (hi - lo)
    corners = np.array([[x0, x1] for x0 in (lo[0] - pad[0], hi[0] + pad[0])
                        for x1 in (lo[1] - pad[1], hi[1] + pad[1])])
    assert np.max(np.abs(corners @ w + b)) < 1.0
    ax = decision_boundary(sol, X, y).axes[0]
    margins = by_gid(ax, "margins")
    np.testing.assert_array_equal(margins.levels, [-1.0, 1.0])
    for level, p in zip((-1.0, 1.0), margins.get_paths()):
        assert len(p.vertices) > 20, level
        # every vertex is on w.x + b = level (the grid's interpolation is exact for a plane)
        np.testing.assert_allclose(p.vertices @ w + b, level, atol=1e-6)
    assert "f(x) = +-1" in legend_texts(ax)
    # the widened area still holds every point
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert x0 < lo[0] and x1 > hi[0] and y0 < lo[1] and y1 > hi[1]


def test_margins_not_reached_anywhere_are_said_not_drawn():
    X, y = teaching_2d(30, seed=1, separation=0.5)
    sol = sm.fit(X, y, formulation="c_tuning_standard", solver=require("clarabel"),
                 kernel="rbf")
    ax = decision_boundary(sol, X, y).axes[0]
    assert all(len(p.vertices) == 0 for p in by_gid(ax, "margins").get_paths())
    # |f| < 1 on an area 16 times the data's, f computed here with numpy's exponential
    centre, half = X.mean(axis=0), 8 * np.ptp(X, axis=0)
    g0, g1 = np.meshgrid(*(np.linspace(centre[k] - half[k], centre[k] + half[k], 300)
                           for k in range(2)))
    P = np.column_stack([g0.ravel(), g1.ravel()])
    f = np.exp(-sol.kernel.gamma * ((P[:, None] - X[None]) ** 2).sum(-1)) @ sol.dual_coef + sol.b
    assert np.max(np.abs(f)) < 1.0
    text = [t for t in legend_texts(ax) if "f(x) = +-1" in t]
    assert len(text) == 1 and "not reached" in text[0]


# ---------------------------------------------------------------------------------------
# 7. The CLI's plot names its axes by the CSV header


def svg_texts(path) -> list[str]:
    """The texts matplotlib wrote into an SVG (each glyph run follows a comment with it)."""
    return re.findall(r"<!-- (.*?) -->", path.read_text())


def test_cli_plot_axes_take_the_csv_header_names(tmp_path, capsys):
    require("highs")
    X, y = teaching_2d(16, seed=5)
    rows = "\n".join(f"{lab},{a:.17g},{b:.17g}" for lab, (a, b) in zip(y, X))
    with_header = tmp_path / "named.csv"
    with_header.write_text("label,height (cm),weight (kg)\n" + rows + "\n")
    png = tmp_path / "named.svg"
    assert cli.main(["fit", str(with_header), "--solver", "highs", "--label-column", "label",
                     "--plot", str(png)]) == 0
    texts = svg_texts(png)
    assert "height (cm)" in texts and "weight (kg)" in texts
    assert "x[0]" not in texts and "x[1]" not in texts
    # without a header, the default names; the title holds the objective of libsvm's classifier
    bare = tmp_path / "bare.csv"
    bare.write_text("\n".join(f"{a:.17g},{b:.17g},{lab}" for lab, (a, b) in zip(y, X)) + "\n")
    plain_svg = tmp_path / "bare.svg"
    assert cli.main(["fit", str(bare), "--solver", "highs", "--plot", str(plain_svg)]) == 0
    texts = svg_texts(plain_svg)
    assert "x[0]" in texts and "x[1]" in texts
    ref = SVC(kernel="linear", C=1.0, tol=1e-10).fit(X, y)
    sol = sm.fit(X, y, solver="highs", C=1.0)
    np.testing.assert_allclose(sol.w, ref.coef_[0], atol=1e-6)
    assert f"objective = {sol.objective:.8g}" in " ".join(texts)
    with pytest.raises(ParameterError, match="feature_names must be the two axis labels"):
        decision_boundary(sol, X, y, feature_names=["only one"])


# ---------------------------------------------------------------------------------------
# 8. The C-tuning curve of a SCIP solution goes to a fast QP backend


def test_c_tuning_bound_of_a_scip_solution_is_drawn_by_a_fast_qp_backend():
    X, y = teaching_2d(10, separation=1.5)
    sol = sm.fit(X, y, formulation="c_tuning_standard", solver=require("scip"), kernel="rbf",
                 time_limit=20)
    assert sol.solver == "scip" and 0 < sol.g < 1
    require("piqp")
    t0 = time.perf_counter()
    ax = c_tuning_bound(sol, X, y, n_grid=9).axes[0]
    elapsed = time.perf_counter() - t0
    assert elapsed < 3.0, elapsed         # SCIP stops at its 60 s time limit on these QPs
    g, D = (np.asarray(v) for v in by_gid(ax, "bound").get_data())
    ref = c_tuning_bound(sol, X, y, n_grid=9, solver="piqp").axes[0]
    g_ref, D_ref = (np.asarray(v) for v in by_gid(ref, "bound").get_data())
    np.testing.assert_array_equal(g, g_ref)
    np.testing.assert_allclose(D, D_ref, rtol=1e-6)
    # and libsvm's optimum of the hard-margin dual with the kernel M(g), at three points
    K = sol.kernel.gram(X)
    yy = np.where(y == sol.classes[1], 1.0, -1.0)
    for k in (1, 4, 7):
        M = M_of_g(K, g[k])
        svc = SVC(kernel="precomputed", C=1e8, tol=1e-12).fit(M, yy)
        ya, S = svc.dual_coef_[0], svc.support_
        assert D[k] == pytest.approx(np.abs(ya).sum() - 0.5 * ya @ M[np.ix_(S, S)] @ ya,
                                     rel=1e-5)
    # the curve's minimum is the QCQP's optimum SCIP found, at g*
    assert D[g == sol.g][0] == pytest.approx(sol.objective, rel=1e-5)

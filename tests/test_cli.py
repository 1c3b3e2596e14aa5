"""The command line: fit -> JSON -> predict reproduces the library exactly, the certificate is
the Solution's, every bad input is one line and exit 2, and the listings name everything."""

import inspect
import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest

import svm_models as sm
from svm_models.cli import main
from svm_models.datasets import teaching_2d
from svm_models.formulations import get
from svm_models.progress import Progress
from svm_models.solution import Solution

X2, Y2 = teaching_2d(30, seed=1)
PNG = b"\x89PNG\r\n\x1a\n"


def write_csv(path, X, y, header=None, label_first=False):
    with open(path, "w") as fh:
        if header:
            fh.write(",".join(header) + "\n")
        for i, x in enumerate(X.tolist()):
            cells = [repr(v) for v in x]
            if y is not None:
                cells = [str(y[i])] + cells if label_first else cells + [str(y[i])]
            fh.write(",".join(cells) + "\n")
    return str(path)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def read_predictions(path):
    lines = path.read_text().splitlines()
    rows = [ln.split(",") for ln in lines[1:]]
    return lines[0].split(","), [r[0] for r in rows], np.array([float(r[-1]) for r in rows])


# ---------------------------------------------------------------------------------------
# fit -> JSON -> predict


def _data(kind, tmp_path):
    """(DATA file, the labels in it, extra fit flags)"""
    if kind == "csv header, string labels":
        y = np.where(Y2 > 0, "spam", "ham")
        return write_csv(tmp_path / "d.csv", X2, y, header=["x1", "x2", "label"]), y, []
    if kind == "csv no header, int labels":
        return write_csv(tmp_path / "d.csv", X2, Y2), Y2, []
    if kind == "csv label first, by name":
        y = np.where(Y2 > 0, 7, 3)
        return (write_csv(tmp_path / "d.csv", X2, y, header=["y", "a", "b"], label_first=True),
                y, ["--label-column", "y"])
    if kind == "csv label first, by index":
        return (write_csv(tmp_path / "d.csv", X2, Y2, label_first=True), Y2,
                ["--label-column", "0"])
    np.savez(tmp_path / "d.npz", X=X2, y=Y2)
    return str(tmp_path / "d.npz"), Y2, []


@pytest.mark.parametrize("kind", ["csv header, string labels", "csv no header, int labels",
                                  "csv label first, by name", "csv label first, by index", "npz"])
def test_fit_json_predict_reproduces_the_library_exactly(kind, tmp_path, capsys):
    data, y, flags = _data(kind, tmp_path)
    model, out_csv = tmp_path / "m.json", tmp_path / "p.csv"
    code, out, err = run(capsys, "fit", data, "--solver", "highs", "--kernel", "rbf", "--C", 2,
                         "--gamma", 0.5, "-o", model, *flags)
    assert code == 0 and err == ""
    ref = sm.fit(X2, y, formulation="soft_l1_dual", solver="highs", kernel="rbf", C=2.0,
                 gamma=0.5)
    # (the paragraph is wrapped at 100 columns, where the line breaks fall depending on the
    # length of the temporary path and of the time printed: read it with its breaks undone)
    flat = " ".join(out.split())
    assert f"objective {ref.objective:.10g}" in flat, out
    assert f"{ref.n_support} support vectors" in flat, out

    # new points (no label column): labels and decision values, bit for bit
    Xt, _ = teaching_2d(40, seed=5)
    test = write_csv(tmp_path / "t.csv", Xt, None)
    code, out, err = run(capsys, "predict", model, test, "-o", out_csv, "--decision")
    assert code == 0 and "accuracy" not in out
    header, labels, f = read_predictions(out_csv)
    assert header == ["label", "decision"]
    assert labels == [str(v) for v in ref.predict(Xt).tolist()]
    assert np.array_equal(f, ref.decision_function(Xt))

    # the training file itself (labels last) to stdout: accuracy on stderr, equal to score
    if kind.startswith("csv header") or kind == "npz":
        code, out, err = run(capsys, "predict", model, data)
        assert code == 0
        assert out.splitlines()[1:] == [str(v) for v in ref.predict(X2).tolist()]
        assert err.strip() == f"accuracy {ref.score(X2, y):.4f} on {len(y)} labelled points"
    if flags:   # the label column named as for fit (review: predict could not read it)
        code, out, err = run(capsys, "predict", model, data, *flags)
        assert code == 0
        assert out.splitlines()[1:] == [str(v) for v in ref.predict(X2).tolist()]
        assert err.strip() == f"accuracy {ref.score(X2, y):.4f} on {len(y)} labelled points"


def test_certificate_holds_the_solutions_numbers(tmp_path, capsys):
    data = write_csv(tmp_path / "d.csv", X2, Y2)
    model = tmp_path / "m.json"
    assert run(capsys, "fit", data, "--formulation", "c_tuning_standard", "--solver", "clarabel",
               "-o", model)[0] == 0
    doc = json.loads(model.read_text())
    sol = Solution.from_dict(doc)
    ref = sm.fit(X2, Y2, formulation="c_tuning_standard", solver="clarabel")
    cert = doc["certificate"]
    for key in ("objective", "primal_objective", "dual_objective", "duality_gap"):
        assert cert[key] == getattr(sol, key) == getattr(ref, key), key
    assert cert["kkt"] == sol.kkt == ref.kkt
    assert cert["max_kkt_residual"] == max(abs(v) for v in ref.kkt.values())
    assert (cert["status"], cert["solver"], cert["path"], cert["fast_path"]) == \
        ("optimal", "clarabel", ref.path, ref.path == "fast")
    assert cert["polished"] == ref.extra["polished"]
    assert sol.g == ref.g and sol.C == ref.C
    assert doc["training"]["accuracy"] == ref.score(X2, Y2)
    assert (doc["training"]["points"], doc["training"]["features"]) == (30, 2)


def test_fit_chooses_an_installed_backend_that_takes_the_problem_class(tmp_path, capsys):
    data = write_csv(tmp_path / "d.csv", X2, Y2)
    model = tmp_path / "m.json"
    assert run(capsys, "fit", data, "--formulation", "rsvm_plus_dual", "--lam", 1, "--C", 1,
               "-o", model)[0] == 0
    sol = Solution.from_json(model)
    assert "SOCP" in sm.solvers()[sol.solver]["classes"]
    ref = sm.fit(X2, Y2, formulation="rsvm_plus_dual", solver=sol.solver, lam=1.0, C=1.0)
    assert sol.objective == ref.objective and sol.r == ref.r


# ---------------------------------------------------------------------------------------
# bad input: one line, exit 2; a failed solve: one line, exit 1


@pytest.fixture
def files(tmp_path):
    f = {"data": write_csv(tmp_path / "d.csv", X2, Y2),
         "three": write_csv(tmp_path / "three.csv", X2, np.arange(30) % 3),
         "ragged": tmp_path / "ragged.csv", "text": tmp_path / "text.csv",
         "binary": tmp_path / "bin.csv", "wide": tmp_path / "wide.csv",
         "model": tmp_path / "m.json", "notjson": tmp_path / "bad.json",
         "noy": tmp_path / "noy.npz", "flat": tmp_path / "flat.npz",
         "d3": write_csv(tmp_path / "d3.csv", np.c_[X2, X2[:, 0]], Y2)}
    f["ragged"].write_text("1,2,1\n3,4\n5,6,-1\n")
    f["text"].write_text("1,2,1\n3,abc,-1\n5,6,1\n")
    f["binary"].write_bytes(b"\xff\xfe\x00\x81\x93" * 20)
    f["wide"].write_text("1,2,3,4,1\n")
    f["notjson"].write_text("{not json")
    np.savez(f["noy"], X=X2)
    np.savez(f["flat"], X=X2[:, 0], y=Y2)
    sol = sm.fit(X2, Y2, formulation="soft_l1_dual", solver="highs")
    f["model"].write_text(sol.to_json())
    return {k: str(v) for k, v in f.items()}


BAD = {
    "missing file": (["fit", "nowhere.csv"], "no such file: nowhere.csv"),
    "missing model": (["predict", "nowhere.json", "{data}"], "no such file"),
    "ragged csv": (["fit", "{ragged}"], "line 2: 2 fields where the first row has 3"),
    "unreadable csv": (["fit", "{binary}"], "not a readable CSV file"),
    "non-numeric value": (["fit", "{text}"], "line 2, column 1: 'abc' is not a number"),
    "columns for the model": (["predict", "{model}", "{wide}"], "has 5 columns; the model takes 2"),
    "not a model": (["predict", "{notjson}", "{data}"], "is not a model written by"),
    "unknown formulation": (["fit", "{data}", "--formulation", "soft_l1_duall"],
                            "did you mean 'soft_l1_dual'"),
    "unknown solver": (["fit", "{data}", "--solver", "higs"], "did you mean 'highs'"),
    "not installed": (["fit", "{data}", "--solver", "cplex"], "install CPLEX"),
    "incapable solver": (["fit", "{data}", "--formulation", "c_tuning_standard", "--solver",
                          "highs"], "cannot take a SOCP"),
    "unknown kernel": (["fit", "{data}", "--kernel", "rbff"], "unknown kernel 'rbff'"),
    "parameter not taken": (["fit", "{data}", "--formulation", "hard_primal", "--C", "1"],
                            "hard_primal takes no --C"),
    "lam for a classic svm": (["path", "{data}", "--Cs", "1,2", "--lam", "1"],
                              "soft_l1_dual takes no --lam"),
    "three classes": (["fit", "{three}"], "exactly two classes"),
    "npz without y": (["fit", "{noy}"], "has no array y"),
    "npz X not a matrix": (["fit", "{flat}"], "X must be 2-dimensional"),
    "label column name": (["fit", "{data}", "--label-column", "target"], "has no header row"),
    "label column index": (["fit", "{data}", "--label-column", "5"], "columns 0 to 2"),
    "bad Cs": (["path", "{data}", "--Cs", "1,x"], "--Cs must be comma-separated numbers"),
    "negative C": (["path", "{data}", "--Cs", "1,-1"], "C must be a finite positive number"),
    "path without C": (["path", "{data}", "--Cs", "1", "--formulation", "hard_dual"],
                       "hard_dual takes no C"),
    "plot of 3-D data": (["fit", "{d3}", "--plot", "x.png"], "2-D data (this data has 3"),
    "unknown formulation to show": (["formulations", "show", "rsvm"], "unknown formulation"),
    "demo solver": (["demo", "--solver", "gurobii"], "did you mean 'gurobi'"),
    "gamma with a linear kernel": (["fit", "{data}", "--gamma", "1"],
                                   "gamma=1.0 has no effect with kernel='linear'"),
    "degree with rbf": (["fit", "{data}", "--kernel", "rbf", "--degree", "5"],
                        "degree=5 has no effect with kernel='rbf'"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_one_line_and_exit_2(case, files, capsys):
    argv, expected = BAD[case]
    code, out, err = run(capsys, *(a.format(**files) for a in argv))
    assert code == 2, (out, err)
    assert len(err.splitlines()) == 1 and err.startswith("svm-models: error: "), err
    assert expected in err, err
    assert out == ""


def test_a_failed_solve_is_one_line_and_exit_1(tmp_path, capsys):
    X = np.array([[0.0, 0], [1, 1], [0.1, 0.1], [0.9, 0.9]])
    data = write_csv(tmp_path / "xor.csv", X, [1, 1, -1, -1])   # not separable
    code, out, err = run(capsys, "fit", data, "--formulation", "hard_primal", "--solver", "highs")
    with pytest.raises(sm.NotSeparableError) as exc:
        sm.fit(X, [1, 1, -1, -1], formulation="hard_primal", solver="highs")
    assert code == 1 and out == ""
    assert err == f"svm-models: error: {' '.join(str(exc.value).split())}\n"


def test_subprocess_exit_codes_and_no_traceback(tmp_path):
    cmd = [sys.executable, "-m", "svm_models.cli"]
    r = subprocess.run(cmd + ["demo", "--solver", "gurobii"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [r.stderr.strip()] and "did you mean 'gurobi'" in r.stderr
    assert ", ".join(sm.solvers.BACKENDS) in r.stderr   # the list
    r = subprocess.run(cmd + ["predict", str(tmp_path / "no.json"), "x.csv"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr


# ---------------------------------------------------------------------------------------
# path, listings, plots


def test_path_shows_progress_and_saves_fit_paths_objectives(tmp_path, capsys):
    np.savez(tmp_path / "d.npz", X=X2, y=Y2)
    Cs = [0.01, 0.1, 1.0, 10.0]
    out_json = tmp_path / "path.json"
    code, out, err = run(capsys, "path", tmp_path / "d.npz", "--Cs", "0.01,0.1,1,10", "--solver",
                         "piqp", "--kernel", "rbf", "--progress", "-o", out_json)
    assert code == 0
    bars = [ln for ln in err.splitlines() if ln.startswith("path [")]
    assert [ln.split("] ")[1].split()[0] for ln in bars] == ["1/4", "2/4", "3/4", "4/4"]
    assert "C=0.01" in bars[0] and "#" * 30 in bars[-1]
    ref = sm.fit_path(X2, Y2, Cs, formulation="soft_l1_dual", solver="piqp", kernel="rbf")
    doc = json.loads(out_json.read_text())
    assert doc["Cs"] == Cs
    assert [m["objective"] for m in doc["models"]] == [s.objective for s in ref]
    assert [Solution.from_dict(m).C for m in doc["models"]] == Cs
    for s in ref:
        assert f"{s.objective:.10g}" in out
    # without --progress (stderr is not a terminal here) nothing is drawn
    assert run(capsys, "path", tmp_path / "d.npz", "--Cs", "1,2", "--solver", "piqp")[2] == ""


def test_formulations_lists_every_name_and_shows_the_mathematics(capsys):
    code, out, _ = run(capsys, "formulations")
    assert code == 0
    names = sm.formulations()
    assert [ln.split()[0] for ln in out.splitlines()] == names
    code, out, _ = run(capsys, "formulations", "show", "soft_l1_dual")
    assert code == 0
    assert ".. math::" in out and r"\max_{\alpha}" in out and "0 \\le \\alpha \\le C" in out
    assert inspect.cleandoc(get("soft_l1_dual").builder.__doc__) in out   # the whole docstring
    assert "problem class: QP" in out
    takes = [n for n, i in sm.solvers().items() if "QP" in i["classes"]]
    assert f"backends that take it: {', '.join(takes)} " in out
    code, out, _ = run(capsys, "formulations", "show", "c_tuning_standard")
    assert "highs" not in out.split("backends that take it:")[1].splitlines()[0]


def test_solvers_lists_every_backend(capsys):
    code, out, _ = run(capsys, "solvers")
    assert code == 0
    assert {ln.split()[0] for ln in out.splitlines()[2:]} == set(sm.solvers())


@pytest.mark.parametrize("argv", [
    ["fit", "{d}", "--solver", "highs", "--plot", "{png}"],
    ["fit", "{d}", "--formulation", "c_tuning_standard", "--solver", "clarabel", "--plot", "{png}"],
    ["path", "{d}", "--Cs", "0.1,1,10", "--solver", "highs", "--plot", "{png}"],
])
def test_plots_are_pngs(argv, tmp_path, capsys):
    pytest.importorskip("svm_models.plots")   # written by another engineer, concurrently
    paths = {"d": write_csv(tmp_path / "d.csv", X2[:16], Y2[:16]), "png": str(tmp_path / "f.png")}
    code, out, err = run(capsys, *(a.format(**paths) for a in argv))
    assert code == 0, err
    assert f"plot written to {paths['png']}" in out
    assert (tmp_path / "f.png").read_bytes()[:8] == PNG


# ---------------------------------------------------------------------------------------
# the progress bar


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_lines_and_in_place():
    log = io.StringIO()
    with Progress(4, label="job", stream=log, enabled=True, width=8) as bar:
        for k in range(4):
            bar.step(f"k={k}")
    lines = log.getvalue().splitlines()
    assert [ln.split(" 0:")[0] for ln in lines] == [
        "job [##......] 1/4 k=0", "job [####....] 2/4 k=1", "job [######..] 3/4 k=2",
        "job [########] 4/4 k=3"]
    assert "eta" in lines[0] and "eta" not in lines[-1]

    tty = Tty()
    with Progress(2, stream=tty, width=4) as bar:   # enabled: a terminal
        bar.step("a much longer note")
        bar.step()
    text = tty.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
    last = text.split("\r")[-1]
    assert last.startswith("[####] 2/2") and len(last.rstrip("\n")) >= len("[##..] 1/2 a much "
                                                                             "longer note")

    quiet = io.StringIO()
    bar = Progress(3, stream=quiet)   # not a terminal: disabled by default
    bar.step()
    bar.close()
    assert quiet.getvalue() == "" and bar.done == 1




# ---------------------------------------------------------------------------------------
# the demo: each formulation on a backend that takes it, the others skipped in one line


def test_demo_backend_is_the_backend_tables():
    from svm_models.cli import demo_backend

    table = sm.solvers()
    X, y = teaching_2d(12, seed=3)
    for name in sm.formulations():
        f = get(name)
        takes = [b for b, i in table.items() if f.problem_class in i["classes"]]
        none = (None, f"no installed backend takes a {f.problem_class}")
        assert demo_backend("auto", f) == (("auto", None) if any(
            table[b]["available"] for b in takes) else none)
        for b, info in table.items():
            if not info["available"] or b == "libsvm":
                continue
            assert demo_backend(b, f) == ((b, None) if b in takes
                                          else (None, f"a {f.problem_class}")), (b, name)
        # libsvm (structured): its own check of the model built, the classic duals only
        use, why = demo_backend("libsvm", f, X, y, {})
        assert (use == "libsvm") == (f.module == "classic" and f.form == "dual"), name
        assert (why is None) == (use is not None)


def test_demo_has_no_error_row_and_says_what_it_skipped(capsys):
    code, out, _ = run(capsys, "demo", "--quick", "--solver", "libsvm")
    assert code == 0
    body = out.split("\ntotal ")[0]   # (the closing sentence names the errors a solve can end in)
    assert "Error" not in body and "error" not in body.lower()
    tables = body.split("\n== ")[1:]
    assert len(tables) == 3
    classic_duals = [n for n in sm.formulations()
                     if get(n).module == "classic" and get(n).form == "dual"]
    for text in tables:
        lines = text.splitlines()
        rows = [ln.split() for ln in lines[3:] if ln and not ln.startswith("(")]
        assert [r[0] for r in rows] == classic_duals and {r[1] for r in rows} == {"libsvm"}
        skipped = [ln for ln in lines if ln.startswith("(skipped: ")]
        assert len(skipped) == 1
        shown = set(classic_duals)
        if "not in this table" in text:
            shown |= set(text.split("(not in this table: ")[1].split(", which")[0].split(", "))
        groups = re.findall(r"(?:^|; )([a-z0-9_, ]+) \(", skipped[0][len("(skipped: "):])
        named = [n for g in groups for n in g.split(", ")]
        assert sorted(named) == sorted(set(sm.formulations()) - shown), skipped[0]
        assert "libsvm solves only the classic SVM duals" in skipped[0]   # why
    # the rows' objectives are the problems' (another backend)
    from svm_models import datasets

    X, _, y, _ = datasets.breast_cancer()
    first = {r.split()[0]: r.split() for r in tables[0].splitlines()[3:] if r.split()}
    ref = sm.fit(X[:120], y[:120], formulation="soft_l1_dual", solver="clarabel", C=1.0)
    assert float(first["soft_l1_dual"][2]) == pytest.approx(ref.objective, rel=1e-5)
    assert first["soft_l1_dual"][3] == str(ref.n_support)


def test_path_exact_prints_the_breakpoints(tmp_path, capsys):
    """``path --exact``: the breakpoints of the exact path of soft_l1_dual; between two
    printed breakpoints libsvm's elbow (0 < alpha < C) changes -- each is an event."""
    from sklearn.datasets import make_classification

    X, y = make_classification(30, 3, n_informative=2, n_redundant=0, random_state=1)
    data = tmp_path / "d.npz"
    np.savez(data, X=X, y=y)
    code, out, _ = run(capsys, "path", data, "--exact", "--kernel", "rbf", "--gamma", "0.5")
    assert code == 0 and "breakpoints" in out and "left->elbow" in out
    Cs = [float(line.split()[0]) for line in out.splitlines()[3:]]
    assert len(Cs) > 10 and Cs == sorted(Cs)

    def elbow(C):
        a = sm.fit(X, y, solver="libsvm", tol=1e-10, C=C, kernel="rbf", gamma=0.5).alpha
        return tuple(np.flatnonzero((a > 1e-8 * C) & (a < C * (1 - 1e-8))))

    mids = [np.sqrt(a * b) for a, b in zip(Cs[:6], Cs[1:7])]
    sets = [elbow(C) for C in mids]
    assert all(s != t for s, t in zip(sets, sets[1:]))
    code, _, err = run(capsys, "path", data, "--exact", "--formulation", "soft_l2_dual")
    assert code == 2 and "--exact follows the exact path of soft_l1_dual" in err

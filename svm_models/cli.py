"""The ``svm-models`` command.

    svm-models fit DATA [model flags] [-o model.json] [--plot out.png]
    svm-models predict MODEL.json DATA [-o out.csv] [--decision]
    svm-models path DATA --Cs 0.01,0.1,1,10 [model flags] [-o path.json] [--plot out.png]
                                                [--progress]
    svm-models path DATA --exact [--C-min C] [--C-max C] [kernel flags]
                                                the breakpoints of the exact path (soft_l1_dual)
    svm-models formulations [show NAME]         the registered formulations; one's mathematics
    svm-models demo [--solver NAME] [--quick]   every formulation on a real and a 2-D dataset
                                                (default solver: auto, per formulation)
    svm-models solvers                          which backends are installed and what they take
    svm-models setup-ipopt [--check]            make Ipopt usable without conda or internet

DATA is a CSV file (comma-separated, header row optional, ``#`` lines skipped; the labels in
the last column unless ``--label-column`` names another, by header name or index) or an NPZ
file with arrays ``X`` and ``y``. Model flags: ``--formulation``, ``--solver``, ``--kernel``,
one per declared parameter of the formulations (``--C``, ``--gamma``, ``--degree``, ``--coef0``,
``--kernel-rank``, ``--quad-form``, ``--form``, ``--lam``, ``--radius``: only those the
formulation takes, checked as the estimators check theirs), ``--tol``, ``--time-limit``. Exit status: 0 done, 1 a solve failed, 2 bad input; an error is
one line on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import inspect
import json
import os
import sys
import textwrap
import time

import numpy as np

from .data import as_matrix
from .progress import Progress
from .errors import (
    CapabilityError,
    DataError,
    MissingDependencyError,
    ParameterError,
    SolverUnavailableError,
    SVMError,
)


#: the demo solves rsvm_plus_dual (one variable per pair of points) on this many points
DUAL_DEMO_POINTS = 120
#: the demo solves the mixed-integer SVMs (a branch and bound: exponential in the worst case)
#: on this many points, for at most this many seconds each; a row whose solve stopped at the
#: time limit says so (the best point found, not proved optimal)
MIP_DEMO_POINTS = 60
MIP_DEMO_SECONDS = 10.0


def _demo_rows(name, X, y, Xte, yte, solver, kernel_params, time_limit):
    from .formulations import get
    from .methods.radius import fit

    f = get(name)
    params = {k: v for k, v in kernel_params.items() if k in f.params}
    if "C" in f.params:
        params["C"] = 1.0
    pre = ""
    if f.all_pairs_default and len(y) > DUAL_DEMO_POINTS:
        # every pair is a variable of this dual: l(l-1)/2 of them
        X, y = X[:DUAL_DEMO_POINTS], y[:DUAL_DEMO_POINTS]
        pre = f"first {DUAL_DEMO_POINTS} points; "
    if f.problem_class.startswith("MI"):
        if len(y) > MIP_DEMO_POINTS:
            X, y = X[:MIP_DEMO_POINTS], y[:MIP_DEMO_POINTS]
            pre = f"first {MIP_DEMO_POINTS} points; "
        time_limit = min(time_limit, MIP_DEMO_SECONDS)
    t0 = time.perf_counter()
    try:
        s = fit(X, y, formulation=name, solver=solver, time_limit=time_limit, **params)
    except SVMError as exc:
        return [name, solver, "-", "-", "-", "-", f"{time.perf_counter() - t0:.2f}",
                type(exc).__name__ + ": " + (exc.status.value if getattr(exc, "status", None)
                                             else _first_clause(str(exc)))]
    elapsed = time.perf_counter() - t0
    note = pre
    if s.status != "optimal":
        note += f"status {s.status.value}: the best point found, not proved optimal; "
    if s.details is not None and hasattr(s.details, "g"):
        note += f"g*={s.g:.4f}, C*=" + ("none" if s.C is None else f"{s.C:.4g}")
    elif s.details is not None and hasattr(s.details, "r"):
        note += f"r={s.r:.4g}, lam={s.lam:g}"
        if s.details.mu is not None:
            note += f", {int(np.sum(s.mu > 1e-6))} of {s.mu.size} weights > 0"
        gen = s.pair_generation
        if gen:
            note += f", {gen['pairs']} of {gen['all_pairs']} pairs generated"
    return [name, s.solver, f"{s.objective:.6g}", str(s.n_support), f"{s.score(X, y):.3f}",
            f"{s.score(Xte, yte):.3f}", f"{elapsed:.2f}", note.rstrip("; ")]


def _first_clause(text: str, limit: int = 90) -> str:
    """The message up to its first ';' (or sentence end), cut at a word within ``limit``."""
    head = text.split("; ")[0].split(". ")[0]
    if len(head) <= limit:
        return head
    return head[:limit].rsplit(" ", 1)[0] + " ..."


def _table(rows, header):
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(ln.rstrip() for ln in out)


def demo_formulations(kernel: str) -> tuple[list[str], list[str]]:
    """The registered formulations the demo runs with ``kernel``, and those it leaves out:
    the linear-only ones (no ``kernel`` parameter) are run in the linear tables only, since
    under another kernel they would repeat their linear rows."""
    from .api import formulations
    from .formulations import get

    names = formulations()
    if kernel == "linear":
        return names, []
    takes = [n for n in names if "kernel" in get(n).params]
    return takes, [n for n in names if n not in takes]


def demo_backend(name: str, f, X=None, y=None, params=None) -> tuple[str | None, str | None]:
    """The backend the demo runs formulation ``f`` on, and why not when it cannot: ``(solver,
    None)`` or ``(None, reason)``. Read from the backend table, as the solve would: ``"auto"``
    when an installed backend takes ``f``'s problem class (:func:`svm_models.solvers.
    auto_choice`); a named backend when it takes the class (a structured one, libsvm: when it
    takes the model built on ``X``, ``y`` with ``params``, by its own structure check)."""
    from .solvers import auto_choice, backend, structure_refusal

    if str(name).lower() == "auto":
        try:
            auto_choice(f.problem_class)
        except SolverUnavailableError:
            return None, f"no installed backend takes a {f.problem_class}"
        return "auto", None
    b = backend(name)
    if b.structured is not None:
        from .api import build
        from .model.built import single_record

        refusal = structure_refusal(b, single_record(build(f.name, X, y, **(params or {}))))
        return (None, refusal) if refusal else (b.name, None)
    if not b.takes(f.problem_class):
        return None, f"a {f.problem_class}"
    return b.name, None


def _skipped_line(solver: str, skipped: list[tuple[str, str]]) -> str:
    """One line: the formulations left out of a table, grouped by why."""
    from .solvers import ORDER, backend

    why: dict[str, list[str]] = {}
    for name, reason in skipped:
        why.setdefault(reason, []).append(name)
    parts = "; ".join(f"{', '.join(names)} ({reason})" for reason, names in why.items())
    if str(solver).lower() == "auto":
        return f"(skipped: {parts})"
    b = backend(solver)
    takes = (f": {b.name} takes {', '.join(c for c in ORDER if c in b.classes)} only"
             if b.structured is None else "")   # (a structured backend's reason says it)
    return f"(skipped: {parts}{takes}; 'svm-models demo' runs each on a backend that takes it)"


def demo(solver: str = "auto", quick: bool = False, time_limit: float = 60.0) -> int:
    """Run every registered formulation on three datasets and print a table per dataset.

    Each formulation runs on ``solver``: by default ``"auto"``, the fastest installed backend
    that takes it (the table's solver column names the one that solved it). A formulation
    the backend cannot take (:func:`demo_backend`, from the backend table) is not a row: one
    line under the table names the skipped ones and why. The linear-only formulations (those
    that take no ``kernel``, read from the registry) are left out of the rbf table, which says
    so (:func:`demo_formulations`). The solver is checked first: an unknown name is a
    ParameterError (with the closest name), a backend that is not installed a
    SolverUnavailableError (with its install line).
    """
    from . import datasets
    from .formulations import get
    from .solvers import check_capability

    if str(solver).lower() != "auto":
        check_capability(solver, None)

    header = ["formulation", "solver", "objective", "SVs", "train acc", "test acc", "time s", "note"]
    Xtr, Xte, ytr, yte = datasets.breast_cancer()
    if quick:
        Xtr, ytr = Xtr[:120], ytr[:120]
    X2, y2 = datasets.teaching_2d(60, seed=1)
    X2te, y2te = datasets.teaching_2d(200, seed=2)
    sets = [
        ("breast cancer (Wisconsin, 30 features, standardised), linear kernel",
         Xtr, ytr, Xte, yte, {"kernel": "linear"}),
        ("breast cancer, rbf kernel (gamma = 1/d)", Xtr, ytr, Xte, yte,
         {"kernel": "rbf", "gamma": 1.0 / Xtr.shape[1]}),
        ("2-D teaching set (two Gaussian clouds), linear kernel", X2, y2, X2te, y2te,
         {"kernel": "linear"}),
    ]
    on = ("on the fastest installed backend that takes it (solver='auto')"
          if str(solver).lower() == "auto" else f"with solver={solver!r}")
    print(f"svm-models demo: every registered formulation {on}, C = 1 where it applies, at "
          f"most {time_limit:g} s a solve (a mixed-integer one: {MIP_DEMO_POINTS} points, at "
          f"most {min(time_limit, MIP_DEMO_SECONDS):g} s)\n")
    t0 = time.perf_counter()
    runs = [demo_formulations(kp["kernel"]) for *_, kp in sets]
    with Progress(sum(len(names) for names, _ in runs), label="demo") as bar:  # on a terminal
        for (title, X, y, Xt, yt, kp), (names, left_out) in zip(sets, runs):
            rows, skipped = [], []
            for name in names:
                f = get(name)
                params = {k: v for k, v in kp.items() if k in f.params}
                use, reason = demo_backend(solver, f, X, y, params)
                if use is None:
                    skipped.append((name, reason))
                else:
                    rows.append(_demo_rows(name, X, y, Xt, yt, use, kp, time_limit))
                bar.step(name)
            bar.close()
            print(f"== {title}: {len(y)} training / {len(yt)} test points")
            print(_table(rows, header))
            if skipped:
                print(_skipped_line(solver, skipped))
            if left_out:
                print(f"(not in this table: {', '.join(left_out)}, which take no kernel; "
                      "their rows are in the linear tables)")
            print()
    print(f"total {time.perf_counter() - t0:.1f} s. A hard margin on data that is not separable "
          "is reported as NotSeparableError, never as a meaningless w; a solve that reaches the "
          "time limit (SCIP, a global branch-and-bound solver, on the larger QPs) as "
          "SolveFailedError: time_limit.")
    return 0


def show_solvers() -> int:
    from .solvers import solvers

    rows = []
    for name, info in solvers().items():
        rows.append([name, "yes" if info["available"] else "no", ", ".join(info["classes"]),
                     info["interface"] or "-", "yes" if info["fast_path"] else "no",
                     "yes" if info["duals"] else "no", info["note"]])
    print(_table(rows, ["solver", "usable", "problem classes", "interface", "matrix path",
                        "duals", "note"]))
    return 0


# ---------------------------------------------------------------------------------------
# Data files

def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_csv(path: str) -> tuple[list[str] | None, list[tuple[int, list[str]]]]:
    """The header (None when the first row is data) and the rows (line number, fields).

    The first row is a header when one of its fields is not a number while every later row
    holds a number in that column.
    """
    try:
        with open(path, newline="") as fh:
            rows = [(n, [c.strip() for c in r]) for n, r in enumerate(csv.reader(fh), 1)
                    if any(c.strip() for c in r) and not r[0].lstrip().startswith("#")]
    except (csv.Error, UnicodeDecodeError) as exc:
        raise DataError(f"{path} is not a readable CSV file ({exc})") from None
    if not rows:
        raise DataError(f"{path} holds no data rows")
    width = len(rows[0][1])
    for line, r in rows:
        if len(r) != width:
            raise DataError(f"{path}, line {line}: {len(r)} fields where the first row has "
                            f"{width}; every row needs the same number of columns")
    first = rows[0][1]
    header = None
    if len(rows) > 1 and any(not _is_number(v) and all(_is_number(r[c]) for _, r in rows[1:])
                             for c, v in enumerate(first)):
        header, rows = first, rows[1:]
    return header, rows


def _numbers(path, rows, columns, header) -> np.ndarray:
    """The float matrix of ``columns`` of ``rows`` (DataError naming the first bad cell)."""
    out = np.empty((len(rows), len(columns)))
    for i, (line, r) in enumerate(rows):
        for j, c in enumerate(columns):
            try:
                out[i, j] = float(r[c])
            except ValueError:
                name = f" ({header[c]!r})" if header else ""
                raise DataError(f"{path}, line {line}, column {c}{name}: {r[c]!r} is not a "
                                "number; features must be numeric") from None
    return out


def _labels(values: list[str]) -> np.ndarray:
    """Labels as integers, floats or strings, whichever reads them all."""
    if all(_is_number(v) for v in values):
        f = np.array([float(v) for v in values])
        if np.all(np.isfinite(f)) and np.all(f == np.round(f)):
            return f.astype(np.int64)
        return f
    return np.array(values)


def _npz(path: str) -> dict:
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise DataError(f"{path} is not a readable NPZ file with arrays X and y ({exc})") from None


def _exists(path: str) -> None:
    if not os.path.isfile(path):
        raise DataError(f"no such file: {path}")


def load_training(path: str, label_column: str | None = None):
    """Training data from a CSV or NPZ file.

    Parameters
    ----------
    path : str
        CSV (labels in the last column, or in ``label_column``) or NPZ (arrays ``X``, ``y``).
    label_column : str, optional
        The label column of a CSV file: a header name, else an integer index (negative
        counts from the end).

    Returns
    -------
    X : ndarray (l, d) of floats;  y : ndarray (l,) of ints, floats or strings;  info : dict
        ``feature_names`` (the header's, or None) and ``label_column``.
    """
    _exists(path)
    if path.lower().endswith(".npz"):
        if label_column is not None:
            raise ParameterError("--label-column applies to CSV data; an NPZ file holds the "
                                 "labels in its array y")
        arrays = _npz(path)
        missing = [k for k in ("X", "y") if k not in arrays]
        if missing:
            raise DataError(f"{path} has no array {' or '.join(missing)} (it holds "
                            f"{', '.join(arrays) or 'nothing'}); save it with "
                            "np.savez(path, X=X, y=y)")
        return (as_matrix(arrays["X"], name=f"{path}: X"), arrays["y"],
                {"feature_names": None, "label_column": "y"})
    header, rows = _read_csv(path)
    width = len(rows[0][1])
    if width < 2:
        raise DataError(f"{path} has {width} column; it needs features and a label column")
    col = -1 if label_column is None else label_column
    if header is not None and col in header:
        col = header.index(col)
    else:
        try:
            col = int(col)
        except ValueError:
            raise DataError(f"--label-column {col!r}: "
                            + (f"no such column in the header ({', '.join(header)})" if header
                               else f"{path} has no header row; give the column's index")) from None
        if not -width <= col < width:
            raise DataError(f"--label-column {col}: {path} has columns 0 to {width - 1}")
        col %= width
    features = [c for c in range(width) if c != col]
    X = _numbers(path, rows, features, header)
    y = _labels([r[col] for _, r in rows])
    return X, y, {"feature_names": [header[c] for c in features] if header else None,
                  "label_column": header[col] if header else col}


def load_features(path: str, n_features: int):
    """Points to predict from a CSV or NPZ file: ``(X, y)``, ``y`` None unless the file has
    labels (an NPZ array ``y``; a CSV column after the ``n_features`` feature columns)."""
    _exists(path)
    if path.lower().endswith(".npz"):
        arrays = _npz(path)
        if "X" not in arrays:
            raise DataError(f"{path} has no array X (it holds {', '.join(arrays) or 'nothing'})")
        return arrays["X"], arrays.get("y")
    header, rows = _read_csv(path)
    width = len(rows[0][1])
    if width not in (n_features, n_features + 1):
        raise DataError(f"{path} has {width} columns; the model takes {n_features} features "
                        f"({n_features + 1} columns with the labels last)")
    X = _numbers(path, rows, range(n_features), header)
    y = _labels([r[-1] for _, r in rows]) if width > n_features else None
    return X, y


# ---------------------------------------------------------------------------------------
# Models: choosing, certifying, saving

def _flagged():
    """The parameters the command line sets, as flags: every hyperparameter with a flag
    (``Param.flag``; not ``kernels``, ``pairs`` or ``g_bounds``, which are arrays or lists)."""
    from .formulations import hyperparameters
    from .formulations.params import PARAMS

    return [PARAMS[n] for n in hyperparameters() if PARAMS[n].flag is not None]


#: the model flags and the formulation parameters they set (derived from the parameters'
#: declarations, :mod:`svm_models.formulations.params`)
MODEL_FLAGS = tuple(p.name for p in _flagged())


def _model_params(args, f) -> dict:
    """The formulation parameters given by flags, checked as the estimators check theirs
    (:func:`svm_models.formulations.check_params`: ParameterError for one it does not take, a
    value outside its domain, or a kernel parameter the kernel does not use)."""
    from .formulations import check_params
    from .formulations.params import PARAMS

    given = {k: getattr(args, k) for k in MODEL_FLAGS if getattr(args, k, None) is not None}
    refused = [k for k in given if k not in f.params]
    if refused:
        takes = [PARAMS[k].option for k in MODEL_FLAGS if k in f.params]
        raise ParameterError(
            f"{f.name} takes no {', '.join(PARAMS[k].option for k in refused)}; its flags are "
            f"{', '.join(takes) or 'none'} (see 'svm-models formulations show {f.name}')")
    return check_params(f.name, given, way_out="drop the flag, or choose a kernel that uses it")


def _solver(name: str | None, f) -> str:
    """The backend to use: ``name`` checked (known, installed, takes the problem class) or,
    when None or ``"auto"``, ``"auto"`` (the fastest installed backend that takes the model,
    chosen per model: :func:`svm_models.solvers.auto_choice`) once one is installed."""
    from .solvers import auto_choice, backend, check_capability

    if name is not None and str(name).lower() != "auto":
        # (a structured backend takes a model by its structure, checked when it is built)
        return check_capability(name, None if backend(name).structured else f.problem_class).name
    auto_choice(f.problem_class)   # SolverUnavailableError when none is installed
    return "auto"


def _solve_options(args) -> dict:
    return {k: v for k, v in (("tol", args.tol), ("time_limit", args.time_limit)) if v is not None}


def n_features(sol) -> int:
    """Columns a point needs for ``sol.decision_function`` (precomputed: training points)."""
    if sol.kernel.name == "precomputed":
        return sol.dual_coef.shape[0]
    return sol.w.shape[0] if sol.w is not None else sol.support_vectors.shape[1]


def certificate(sol) -> dict:
    """What vouches for a solution, in JSON form (numbers exactly the Solution's).

    ``status``, ``solver``, ``interface``, ``path``; ``fast_path`` (the record proved the model
    is the formulation and the matrices went straight to the backend), else
    ``general_path_reason``; ``objective``, ``primal_objective``, ``dual_objective``,
    ``duality_gap``, ``kkt`` (residuals) and their largest absolute value ``max_kkt_residual``;
    ``polished`` (the optimality conditions solved exactly on the active set);
    ``pair_generation`` (radius-margin constraint generation: the largest violation over all
    pairs) and ``diagnostics`` (why some are missing) where the solution has them.
    """
    d = sol.to_dict()
    out = {k: d[k] for k in ("status", "solver", "interface", "path", "objective",
                             "primal_objective", "dual_objective", "duality_gap", "kkt")}
    out["fast_path"] = sol.path == "fast"
    out["max_kkt_residual"] = max((abs(v) for v in sol.kkt.values()), default=None)
    for k in ("general_path_reason", "polished", "pair_generation", "diagnostics"):
        if d[k] is not None:
            out[k] = d[k]
    return out


def model_document(sol, X, y, data: str, info: dict) -> dict:
    """The JSON document ``fit`` writes: the Solution's own fields (``Solution.from_dict``
    reads them back), plus ``format``, ``version``, ``certificate`` and ``training``."""
    from ._version import __version__

    return {"format": "svm-models model", "version": __version__, **sol.to_dict(),
            "certificate": certificate(sol),
            "training": {"data": data, "points": int(X.shape[0]), "features": int(X.shape[1]),
                         **info, "accuracy": sol.score(X, y)}}


def load_model(path: str):
    """The Solution saved by ``svm-models fit`` in ``path``."""
    from .solution import Solution

    _exists(path)
    try:
        with open(path) as fh:
            doc = json.load(fh)
        return Solution.from_dict(doc)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"{path} is not a model written by 'svm-models fit' "
                        f"({type(exc).__name__}: {exc})") from None


def _g(v) -> str:
    return "n/a" if v is None else f"{v:.3g}"


def _obj(v) -> str:
    return "n/a" if v is None else f"{v:.10g}"


def summary(sol, X, y, data: str) -> str:
    """One paragraph: formulation, data, objective, support vectors, accuracy, certificate."""
    from .formulations import get

    cert = certificate(sol)
    learnt = ""
    if sol.details is not None and hasattr(sol.details, "g"):
        learnt = f" g* = {sol.g:.6g}, C* = {_g(sol.C)};"
    elif sol.details is not None and hasattr(sol.details, "r"):
        learnt = f" r = {sol.r:.6g}, lam = {sol.lam:g};"
    proof = ("fast path (the record proved the model is the formulation)" if cert["fast_path"]
             else f"general path ({cert.get('general_path_reason', 'no reason given')})")
    text = (f"{sol.formulation}: {get(sol.formulation).summary.rstrip('.')}, on {data} "
            f"({X.shape[0]} points, {X.shape[1]} features; {sol.classes[0].item()!r} is -1, "
            f"{sol.classes[1].item()!r} is +1), solved by {sol.solver} in {sol.time:.3g} s: "
            f"objective {sol.objective:.10g};{learnt} {sol.n_support} support vectors; "
            f"training accuracy {sol.score(X, y):.4f}. Certificate: status {sol.status.value}, primal "
            f"{_obj(sol.primal_objective)} / dual {_obj(sol.dual_objective)}, duality gap "
            f"{_g(sol.duality_gap)}, largest KKT residual {_g(cert['max_kkt_residual'])}, "
            f"{proof}.")
    return textwrap.fill(text, width=100)


def _plots():
    from . import plots

    return plots


def _draw(figure, path: str) -> None:
    """Close the drawn ``figure`` (already saved) and say where it is."""
    import matplotlib.pyplot as plt

    plt.close(figure)
    print(f"plot written to {path}")


def _write_json(doc: dict, path: str) -> None:
    with open(path, "w") as fh:
        json.dump(doc, fh)


# ---------------------------------------------------------------------------------------
# Commands

def cmd_fit(args) -> int:
    from .formulations import get
    from .methods.radius import fit

    f = get(args.formulation)
    params = _model_params(args, f)
    solver = _solver(args.solver, f)
    plots = _plots() if args.plot else None
    X, y, info = load_training(args.data, args.label_column)
    if plots is not None and not f.learns_C and (
            X.shape[1] != 2 or params.get("kernel") == "precomputed"):
        raise ParameterError(f"--plot draws the decision boundary of 2-D data (this data has "
                             f"{X.shape[1]} features) or the C-tuning bound of a c_tuning "
                             "formulation")
    sol = fit(X, y, formulation=f.name, solver=solver, **params, **_solve_options(args))
    if args.output:
        _write_json(model_document(sol, X, y, args.data, info), args.output)
    print(summary(sol, X, y, args.data))
    print(f"model written to {args.output}" if args.output
          else "model not saved (give -o model.json to keep it)")
    if plots is not None:
        if f.learns_C:
            fig = plots.c_tuning_bound(sol, X, y, path=args.plot)   # a fast QP backend
        else:
            fig = plots.decision_boundary(sol, X, y, path=args.plot,
                                          feature_names=info["feature_names"])
        _draw(fig, args.plot)
    return 0


def cmd_predict(args) -> int:
    sol = load_model(args.model)
    if args.label_column is not None:   # labels in a named column, features the others
        X, y, _ = load_training(args.data, args.label_column)
    else:
        X, y = load_features(args.data, n_features(sol))
    labels = sol.predict(X)
    if y is not None and np.shape(y) != labels.shape:
        raise DataError(f"{args.data}: {np.shape(y)} labels for {labels.shape[0]} points")
    cols = {"label": [v.item() for v in labels]}
    if args.decision:
        cols["decision"] = sol.decision_function(X).tolist()   # repr precision: exact
    out = open(args.output, "w", newline="") if args.output else contextlib.nullcontext(sys.stdout)
    with out as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        w.writerows(zip(*cols.values()))
    note = sys.stdout if args.output else sys.stderr   # stdout holds the CSV without -o
    if args.output:
        print(f"{len(labels)} predictions written to {args.output}", file=note)
    if y is not None:
        accuracy = float(np.mean(labels == np.asarray(y)))
        print(f"accuracy {accuracy:.4f} on {len(y)} labelled points", file=note)
    return 0


def _Cs(text: str) -> list:
    try:
        return [float(c) for c in text.split(",")]
    except ValueError:
        raise ParameterError(f"--Cs must be comma-separated numbers, e.g. 0.01,0.1,1,10; "
                             f"got {text!r}") from None


def cmd_path(args) -> int:
    from .formulations import get
    from .methods.paths import fit_path

    f = get(args.formulation)
    if "C" not in f.params:
        raise ParameterError(f"a path varies C, and {f.name} takes no C (see "
                             "'svm-models formulations')")
    params = _model_params(args, f)
    if args.exact:
        return _exact_path(args, f, params)
    if args.Cs is None:
        raise ParameterError("give the values of C as --Cs 0.01,0.1,1,10, or --exact for the "
                             "whole path of soft_l1_dual")
    solver = _solver(args.solver, f)
    Cs = _Cs(args.Cs)
    plots = _plots() if args.plot else None
    X, y, info = load_training(args.data, args.label_column)
    show = args.progress or sys.stderr.isatty()
    sols = fit_path(X, y, Cs, formulation=f.name, solver=solver, progress=show,
                    **params, **_solve_options(args))
    rows = [[f"{s.C:g}", f"{s.objective:.10g}", str(s.n_support), f"{s.score(X, y):.4f}",
             _g(s.duality_gap), s.path, f"{s.time:.3f}"] for s in sols]
    print(f"{f.name} on {args.data} with {solver}: {len(Cs)} values of C, one model")
    print(_table(rows, ["C", "objective", "SVs", "train acc", "gap", "path", "time s"]))
    if args.output:
        _write_json({"format": "svm-models path", "formulation": f.name, "solver": solver,
                     "Cs": Cs, "models": [model_document(s, X, y, args.data, info)
                                          for s in sols]}, args.output)
        print(f"path written to {args.output}")
    if plots is not None:
        _draw(plots.c_path(sols, X, y, path=args.plot), args.plot)
    return 0


def _exact_path(args, f, params: dict) -> int:
    """``path --exact``: the breakpoints of the exact regularization path and its events."""
    from .methods.cv import PATH_PARAMS
    from .methods.regularization_path import regularization_path

    if f.name != "soft_l1_dual" or args.solver not in (None, "auto"):
        raise ParameterError("--exact follows the exact path of soft_l1_dual (no --solver): "
                             f"got --formulation {f.name}" + (f" --solver {args.solver}"
                                                              if args.solver else ""))
    other = sorted(set(params) - PATH_PARAMS)
    if other or args.plot or args.output:
        raise ParameterError(f"--exact takes the kernel flags only (--kernel, --gamma, "
                             f"--degree, --coef0, --C-min, --C-max); got "
                             f"{other or ['--plot' if args.plot else '-o']}")
    X, y, _ = load_training(args.data, args.label_column)
    path = regularization_path(X, y, C_min=args.C_min, C_max=args.C_max, **params)
    by_C: dict = {}
    for e in path.events:
        by_C.setdefault(e.C, []).append(f"{e.point}:{e.before}->{e.after}")
    rows = [[f"{C:.10g}", " ".join(moves)] for C, moves in by_C.items()]
    end = ("the hard margin (separable)" if path.separable
           else "the last event (the sets stay beyond it)")
    print(f"exact regularization path of soft_l1_dual on {args.data}: "
          f"{len(path.breakpoints)} breakpoints, {len(path.events)} events, alpha/C constant "
          f"below C = {path.C_start:.10g}, ends at {end}")
    print(_table(rows, ["C", "events (point:from->to)"]))
    return 0


def cmd_formulations(args) -> int:
    from .formulations import TABLE, get
    from .solvers import solvers

    if args.action is None:
        for f in TABLE.values():
            print(f"{f.name:<24} {f.problem_class:<5} {f.summary}")
        return 0
    f = get(args.name)
    info = solvers()
    takes = [n for n, i in info.items() if f.problem_class in i["classes"]]
    here = [n for n in takes if info[n]["available"]]
    doc = inspect.cleandoc(f.builder.__doc__ or "")
    print(f"{f.name}: {f.summary}\n"
          f"problem class: {f.problem_class}\n"
          f"parameters:{_parameter_lines(f) or ' none'}\n"
          f"backends that take it: {', '.join(takes)} (installed here: "
          f"{', '.join(here) or 'none'})\n\n{doc}")
    return 0


def _parameter_lines(f) -> str:
    """One line per parameter of ``f``: name, default, the values it takes, its flag."""
    defaults = f.defaults
    hard = f.hard_at_infinite_C is not None or f.C_none_is_hard
    return "".join(
        f"\n  {p.name} = {defaults[p.name]!r}: {p.domain}"
        + (" (inf: the hard margin)" if p.name == "C" and hard else "")
        + (f" ({p.option})" if p.flag is not None and p.hyperparameter else "")
        for p in f.spec)


# ---------------------------------------------------------------------------------------
# The parser

def _model_flags(p, *, with_C: bool = True) -> None:
    p.add_argument("data", metavar="DATA", help="CSV (labels last) or NPZ (arrays X, y)")
    p.add_argument("--formulation", default="soft_l1_dual",
                   help="registered formulation (default: soft_l1_dual; 'svm-models formulations')")
    p.add_argument("--solver", help="backend (default: auto, the fastest installed backend "
                                    "that takes the model: libsvm for the classic duals, then "
                                    "piqp, clarabel, highs, ipopt, ...)")
    for prm in _flagged():   # --C, --kernel, --gamma, ...: one per declared parameter
        if with_C or prm.name != "C":
            p.add_argument(prm.option, dest=prm.name, type=prm.flag, help=prm.doc)
    p.add_argument("--tol", type=float, help="solver tolerance")
    p.add_argument("--time-limit", type=float, help="seconds allowed for each solve")
    p.add_argument("--label-column", help="CSV label column: header name or index (default: last)")
    p.add_argument("--plot", metavar="PNG", help="draw a figure into this file")


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``svm-models``."""
    p = argparse.ArgumentParser(prog="svm-models", description="Pyomo models of SVMs.",
                                allow_abbrev=False)
    sub = p.add_subparsers(dest="cmd", required=True)
    fp = sub.add_parser("fit", help="train a model on DATA and save it as JSON", allow_abbrev=False)
    _model_flags(fp)
    fp.add_argument("-o", "--output", metavar="MODEL.json", help="write the model here")
    pp = sub.add_parser("predict", help="labels (and decision values) of a saved model for DATA",
                        allow_abbrev=False)
    pp.add_argument("model", metavar="MODEL.json")
    pp.add_argument("data", metavar="DATA",
                    help="CSV or NPZ; a CSV column after the features is taken as labels")
    pp.add_argument("-o", "--output", metavar="OUT.csv",
                    help="write the CSV here (default: stdout)")
    pp.add_argument("--decision", action="store_true", help="add the decision values")
    pp.add_argument("--label-column", metavar="COL",
                    help="a CSV's label column (header name or index), as given to fit")
    cp = sub.add_parser("path", help="solutions along a path of C (one model, re-solved)",
                        allow_abbrev=False)
    _model_flags(cp, with_C=False)
    cp.add_argument("--Cs", help="comma-separated values of C, e.g. 0.01,0.1,1,10")
    cp.add_argument("--exact", action="store_true",
                    help="print the breakpoints of the exact regularization path of "
                         "soft_l1_dual (every C at once) instead of solving at --Cs")
    cp.add_argument("--C-min", type=float, help="with --exact: the path from this C")
    cp.add_argument("--C-max", type=float, help="with --exact: the path up to this C")
    cp.add_argument("-o", "--output", metavar="PATH.json", help="write every model here")
    cp.add_argument("--progress", action="store_true",
                    help="show the progress bar on stderr even when it is not a terminal")
    lp = sub.add_parser("formulations", allow_abbrev=False,
                        help="list the formulations; 'show NAME' for one's mathematics")
    ls = lp.add_subparsers(dest="action")
    ls.add_parser("show", help="a formulation's mathematics and backends").add_argument(
        "name", metavar="NAME")
    d = sub.add_parser("demo", help="run every formulation on a real and a 2-D dataset",
                       allow_abbrev=False)
    d.add_argument("--solver", default="auto",
                   help="backend (default: auto, per formulation the fastest installed backend "
                        "that takes it); a formulation the backend cannot take is skipped, "
                        "saying so")
    d.add_argument("--quick", action="store_true", help="smaller training set")
    d.add_argument("--time-limit", type=float, default=60.0,
                   help="seconds allowed for each solve (default: 60)")
    sub.add_parser("solvers", help="list the backends and what they take")
    sub.add_parser("setup-ipopt", help="make Ipopt usable (cyipopt + PyNumero ASL)")
    return p


#: errors of the input (exit 2); any other SVMError is a solve that failed (exit 1)
BAD_INPUT = (ParameterError, DataError, CapabilityError, SolverUnavailableError,
             MissingDependencyError, OSError, ValueError)


def main(argv=None) -> int:
    """Run ``svm-models`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "setup-ipopt":
        from .setup_ipopt import main as setup_main

        return setup_main(argv[1:])
    args = parser().parse_args(argv)
    commands = {"fit": cmd_fit, "predict": cmd_predict, "path": cmd_path,
                "formulations": cmd_formulations, "solvers": lambda a: show_solvers(),
                "demo": lambda a: demo(a.solver, a.quick, a.time_limit)}
    try:
        return commands[args.cmd](args)
    except BrokenPipeError:   # the reader went away (| head): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (SVMError, OSError, ValueError) as exc:
        print(f"svm-models: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2 if isinstance(exc, BAD_INPUT) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""SVC's speed (issue 26): ``SVMClassifier()`` with its default solver ("auto": libsvm for
the classic duals) against scikit-learn's ``SVC`` on the same data, C and gamma, in one run.
Not part of the test suite.

    python benchmarks/svc.py                      # l = 1000, 2000, 5000 and digits
    python benchmarks/svc.py --sizes 1000 2000    # a subset
    python benchmarks/svc.py --piqp               # also PIQP's objective (where it finishes)
    python benchmarks/svc.py --sizes --multi-class ovr ovo --grid   # digits: both schemes,
                                                  # and GridSearchCV against GridSearchCV(SVC())
    python benchmarks/svc.py --no-digits --model-cost   # what the Pyomo model costs a fit
    python benchmarks/svc.py --linear             # each also with the linear kernel

Data: ``make_classification(l, 20 features, random_state=0)``, rbf kernel, ``gamma="scale"``,
C = 1 (``--linear``: each data set also with the linear kernel, ``SVMClassifier()``'s
default, against ``SVC(kernel="linear")``); digits: the 10 classes of ``load_digits``, the
estimator's default multiclass scheme (one-vs-one since issue 48, as SVC; one-vs-rest
before), and with ``--multi-class`` each scheme named. ``--grid``: ``GridSearchCV`` over C in
{1, 10} and gamma in {1e-3, 1e-2}, 3 folds, on the digits as above (pixels / 16: issue 48's
grid), of ``SVMClassifier(kernel="rbf")`` against ``SVC()`` (and ``SVC(tol=1e-8)``), then
``SVMClassifierCV`` over the same grid and folds (the refit included) against the same. Each
time is the best of ``--repeat`` runs of ``fit``. ``--model-cost``: at each size, ``build`` alone (the
Pyomo model), ``build`` then ``solve`` (the path every fit took before issue 48), ``fit``
(on libsvm it builds no model) and ``fit`` then ``Solution.model`` (the model built when
read), in a second table. The library measured is the one Python imports
(``PYTHONPATH``): its checkout's commit is recorded beside the script's. The objective column compares the library's certified
dual objective with PIQP's on the same model (relative difference). Results:
``benchmarks/svc_results.md`` (``--out``): each run appends a section (its date, commit,
command and scikit-learn version), the earlier ones kept. With each figure it records the
machine's state while it was measured: the load average (``os.getloadavg()``, 1 minute)
before and after, the BLAS and OpenMP thread settings (threadpoolctl's
``threadpool_info()``), and the other processes that were busy (more than half a core,
sampled over 0.5 s before the figure, with psutil; "unknown" without it).
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from conditions import machine  # noqa: E402


def best(fn, repeat: int) -> tuple[float, object]:
    out, t = None, np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - t0)
    return t, out


def model_cost_row(X, y, repeat: int) -> tuple:
    """(build, build + solve, fit, fit + model) in seconds, best of ``repeat``, rbf, C = 1."""
    import svm_models as sm

    kw = {"kernel": "rbf", "gamma": "scale", "C": 1.0}
    before = machine()
    t_build, _ = best(lambda: sm.build("soft_l1_dual", X, y, **kw), repeat)
    t_both, _ = best(lambda: sm.solve(sm.build("soft_l1_dual", X, y, **kw)), repeat)
    t_fit, _ = best(lambda: sm.fit(X, y, **kw), repeat)
    t_read, _ = best(lambda: sm.fit(X, y, **kw).model, repeat)
    return t_build, t_both, t_fit, t_read, before, {"load": os.getloadavg()[0]}


def write_section(path: str, rows: list, argv: list, costs=()) -> None:
    """Append this run's section to ``path`` (the title first when the file is new)."""
    from conditions import commit as commit_of

    commit = commit_of(HERE)
    import sklearn

    import svm_models
    lib = commit_of(os.path.dirname(os.path.abspath(svm_models.__file__)))

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a") as fh:
        if new:
            fh.write("# SVMClassifier() against SVC (`python benchmarks/svc.py`)\n")
        fh.write(f"\n## Run of {now}\n\ncommit {commit} (svm_models measured: {lib}), "
                 f"scikit-learn {sklearn.__version__}, "
                 f"{os.cpu_count()} CPUs, `python benchmarks/svc.py {' '.join(argv)}`\n\n"
                 "| data | SVC tol 1e-3 (s) | SVC tol 1e-8 (s) | SVMClassifier() (s) | backend "
                 "| ratio to SVC 1e-3 / 1e-8 | objective vs PIQP | load (1 min) before / after "
                 "| BLAS threads | other processes busy |\n"
                 "|---|---|---|---|---|---|---|---|---|---|\n")
        for name, a, b, c, used, rel, before, after in rows:
            fh.write(f"| {name} | {a:.3f} | {b:.3f} | {c:.3f} | {used} | {c / a:.1f}x / "
                     f"{c / b:.1f}x | {rel or '-'} | {before['load']:.2f} / "
                     f"{after['load']:.2f} | {before['threads']} | {before['busy']} |\n")
        if costs:
            fh.write("\nWhat the Pyomo model costs (rbf, C = 1, `--model-cost`):\n\n"
                     "| data | build (s) | build + solve (s) | fit (s) | fit + model read (s) "
                     "| load (1 min) before / after | BLAS threads | other processes busy |\n"
                     "|---|---|---|---|---|---|---|---|\n")
            for name, tb, tt, tf, tr, before, after in costs:
                fh.write(f"| {name} | {tb:.3f} | {tt:.3f} | {tf:.3f} | {tr:.3f} | "
                         f"{before['load']:.2f} / {after['load']:.2f} | {before['threads']} "
                         f"| {before['busy']} |\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 2000, 5000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--piqp", action="store_true", help="compare the objective with PIQP's")
    ap.add_argument("--no-digits", action="store_true")
    ap.add_argument("--multi-class", nargs="*", default=[], choices=["ovr", "ovo"],
                    help="digits also with these multiclass schemes")
    ap.add_argument("--grid", action="store_true",
                    help="GridSearchCV on digits against GridSearchCV(SVC())")
    ap.add_argument("--linear", action="store_true",
                    help="also each data set with the linear kernel (SVMClassifier()'s "
                         "default) against SVC(kernel='linear')")
    ap.add_argument("--model-cost", action="store_true",
                    help="what building the Pyomo model costs at each size")
    ap.add_argument("--out", default=os.path.join(HERE, "svc_results.md"),
                    help="the results file, appended to")
    argv = sys.argv[1:] if argv is None else list(argv)
    args = ap.parse_args(argv)
    from sklearn.datasets import load_digits, make_classification
    from sklearn.svm import SVC

    import svm_models as sm

    warnings.simplefilter("ignore")
    rows = []
    cases = [(f"l = {l}", *make_classification(l, 20, random_state=0)) for l in args.sizes]
    if not args.no_digits:
        d = load_digits()
        cases.append(("digits (10 classes, 1797)", d.data / 16.0, d.target))
        for mc in args.multi_class:
            cases.append((f"digits, multi_class={mc!r}", d.data / 16.0, d.target, mc))
    if args.linear:   # (the estimator's default kernel; kernel "linear" marks the case)
        cases += [(f"{c[0]}, linear kernel", *c[1:3], "linear") for c in cases if len(c) == 3]
    for name, X, y, *mc in cases:
        kernel = "linear" if mc == ["linear"] else "rbf"
        kw = {"multi_class": mc[0]} if mc and kernel == "rbf" else {}
        before = machine()
        t_svc3, _ = best(lambda: SVC(C=1.0, kernel=kernel).fit(X, y), args.repeat)
        t_svc8, _ = best(lambda: SVC(C=1.0, kernel=kernel, tol=1e-8).fit(X, y), args.repeat)
        t_ours, clf = best(lambda: sm.SVMClassifier(kernel=kernel, C=1.0, **kw).fit(X, y),
                           args.repeat)
        if len(np.unique(y)) > 2:
            agree = float(np.mean(clf.predict(X) == SVC(C=1.0, kernel=kernel, tol=1e-8).fit(
                X, y).predict(X)))
            name = f"{name} (predictions as SVC's: {agree:.1%})"
        sol = clf.solution_ if hasattr(clf, "solution_") else None
        used = "/".join(sorted({s.solver for s in clf._solutions()}))
        rel = ""
        if args.piqp and sol is not None and len(y) <= 2000:
            ref = sm.fit(X, y, solver="piqp", kernel="rbf", C=1.0)
            rel = f"{abs(sol.objective - ref.objective) / abs(ref.objective):.1e}"
        after = {"load": os.getloadavg()[0]}
        rows.append((name, t_svc3, t_svc8, t_ours, used, rel, before, after))
        _say(rows[-1])
    if args.grid:
        for row in grid_row(args.repeat):
            rows.append(row)
            _say(row)
    costs = []
    for l in args.sizes if args.model_cost else ():
        costs.append((f"l = {l}", *model_cost_row(*make_classification(l, 20, random_state=0),
                                                  args.repeat)))
        print(f"l = {l}: build {costs[-1][1]:.3f} s, build + solve {costs[-1][2]:.3f} s, fit "
              f"{costs[-1][3]:.3f} s, fit + model {costs[-1][4]:.3f} s", flush=True)
    write_section(args.out, rows, argv, costs)
    return 0


def _say(row) -> None:
    name, t_svc3, t_svc8, t_ours, used, rel, before, after = row
    print(f"{name}: SVC {t_svc3:.3f} s (tol 1e-3), {t_svc8:.3f} s (tol 1e-8); "
          f"SVMClassifier() {t_ours:.3f} s with {used} = {t_ours / t_svc3:.1f}x / "
          f"{t_ours / t_svc8:.1f}x {rel}; load {before['load']:.2f} -> "
          f"{after['load']:.2f}, threads {before['threads']}, busy: {before['busy']}",
          flush=True)


def grid_row(repeat: int) -> list:
    """GridSearchCV on the digits / 16 (C in {1, 10}, gamma in {1e-3, 1e-2}, 3 folds) over
    SVC() and SVC(tol=1e-8) against GridSearchCV(SVMClassifier(kernel="rbf")), then against
    SVMClassifierCV over the same grid: two rows of the table."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    import svm_models as sm

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    grid = {"C": [1.0, 10.0], "gamma": [1e-3, 1e-2]}
    before = machine()
    t3, _ = best(lambda: GridSearchCV(SVC(), grid, cv=3).fit(X, y), repeat)
    t8, _ = best(lambda: GridSearchCV(SVC(tol=1e-8), grid, cv=3).fit(X, y), repeat)
    t, gs = best(lambda: GridSearchCV(sm.SVMClassifier(kernel="rbf"), grid, cv=3).fit(X, y),
                 repeat)
    ref = GridSearchCV(SVC(tol=1e-8), grid, cv=3).fit(X, y)
    name = (f"GridSearchCV, digits (C x gamma 2 x 2, 3 folds; best {gs.best_params_}, "
            f"SVC(tol=1e-8)'s {ref.best_params_})")
    used = "/".join(sorted({s.solver for s in gs.best_estimator_._solutions()}))
    rows = [(name, t3, t8, t, used, "", before, {"load": os.getloadavg()[0]})]
    # SVMClassifierCV over the same grid and folds (its default: one-vs-one, as SVC)
    before = machine()
    t3, _ = best(lambda: GridSearchCV(SVC(), grid, cv=3).fit(X, y), repeat)
    t8, _ = best(lambda: GridSearchCV(SVC(tol=1e-8), grid, cv=3).fit(X, y), repeat)
    t, cv = best(lambda: sm.SVMClassifierCV(Cs=grid["C"], kernel="rbf", gamma=grid["gamma"],
                                            cv=3).fit(X, y), repeat)
    same = np.array_equal(cv.cv_results_["mean_test_score"],
                          ref.cv_results_["mean_test_score"])
    name = (f"SVMClassifierCV against GridSearchCV(SVC()), digits (the same grid and folds, "
            f"the refit included; best {cv.best_params_}; mean test scores "
            f"{'equal to' if same else 'NOT equal to'} GridSearchCV(SVC(tol=1e-8))'s)")
    used = "/".join(sorted({s.solver for s in cv.best_estimator_._solutions()}))
    rows.append((name, t3, t8, t, used, "", before, {"load": os.getloadavg()[0]}))
    return rows


if __name__ == "__main__":
    raise SystemExit(main())

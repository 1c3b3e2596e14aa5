"""The exact regularization path (issue 50) against scikit-learn's SVC, in one run. Not part
of the test suite.

    python benchmarks/regularization_path.py                 # l = 2000, the issue's case
    python benchmarks/regularization_path.py --size 1000     # smaller (a shared machine)
    python benchmarks/regularization_path.py --no-cv         # the path only

Data: ``make_classification(l, 20 features, random_state=0)``, rbf kernel, ``gamma="scale"``.

1. The whole path for C in [1e-2, 1e2] (``svm_models.regularization_path``) against
   ``SVC(tol=1e-8)`` fitted at 50 values of C on a log scale over that interval; the path's
   answer at each of those Cs (``decision_function``) is compared with SVC's (largest
   difference of the decision values) and at five of them ``at(C)``'s certificate is read.
2. ``SVMClassifierCV(Cs=those 50)`` (every C of a fold from the fold's path) against
   ``GridSearchCV(SVC(), {"C": those 50}, cv=5)`` on the same folds (``StratifiedKFold(5)``),
   serial both; the mean test scores compared.

Each figure is one run (``--repeat`` for the best of several). With each, the machine's state
(:func:`svc.machine`: load average before and after, BLAS/OpenMP threads, other busy
processes) -- the machine is shared, the figures are ratios measured in one run. Results:
``benchmarks/regularization_path_results.md`` (``--out``), a section appended per run.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from svc import best, machine  # noqa: E402  (the same state record as benchmarks/svc.py)


def run_path(X, y, Cs, repeat):
    import svm_models as sm
    from sklearn.svm import SVC

    before = machine()
    t_path, path = best(lambda: sm.regularization_path(X, y, kernel="rbf", C_min=Cs[0],
                                                       C_max=Cs[-1]), repeat)
    t_dec, D = best(lambda: path.decision_function(X, Cs), repeat)
    t_svc, svcs = best(lambda: [SVC(C=C, tol=1e-8).fit(X, y) for C in Cs], repeat)
    after = machine()
    diff = max(float(np.abs(D[k] - s.decision_function(X)).max()) for k, s in enumerate(svcs))
    certs = [path.at(C).extra["certificate"]["worst"] for C in Cs[::12]]
    return {"t_path": t_path, "t_dec": t_dec, "t_svc": t_svc, "breakpoints": len(path.breakpoints),
            "events": len(path.events), "diff": diff, "cert": max(certs),
            "before": before, "after": after}


def run_cv(X, y, Cs, repeat):
    import svm_models as sm
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    before = machine()
    t_ours, est = best(lambda: sm.SVMClassifierCV(Cs=list(Cs), cv=5, kernel="rbf").fit(X, y),
                       repeat)
    t_gs, gs = best(lambda: GridSearchCV(SVC(), {"C": list(Cs)}, cv=StratifiedKFold(5)).fit(
        X, y), repeat)
    after = machine()
    agree = float(np.abs(est.cv_results_["mean_test_score"]
                         - gs.cv_results_["mean_test_score"]).max())
    return {"t_ours": t_ours, "t_gs": t_gs, "agree": agree, "before": before, "after": after}


def write_section(path: str, l: int, res_path, res_cv, argv) -> None:
    from conditions import commit as commit_of

    commit = commit_of(HERE)
    import sklearn

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a") as fh:
        if new:
            fh.write("# The exact regularization path against SVC "
                     "(`python benchmarks/regularization_path.py`)\n")
        fh.write(f"\n## Run of {now}\n\ncommit {commit}, scikit-learn {sklearn.__version__}, "
                 f"{os.cpu_count()} CPUs, l = {l}, "
                 f"`python benchmarks/regularization_path.py {' '.join(argv)}`\n\n"
                 "| measure | ours (s) | scikit-learn (s) | ratio | agreement | load before / "
                 "after | BLAS threads | other processes busy |\n|---|---|---|---|---|---|---|---|\n")
        r = res_path
        fh.write(f"| whole path C in [1e-2, 1e2] ({r['breakpoints']} breakpoints) + decision "
                 f"values at 50 Cs vs 50 x SVC(tol=1e-8) | {r['t_path']:.2f} + {r['t_dec']:.2f} "
                 f"| {r['t_svc']:.2f} | {(r['t_path'] + r['t_dec']) / r['t_svc']:.2f}x | "
                 f"decision values {r['diff']:.1e} apart; at(C) certificate {r['cert']:.1e} | "
                 f"{r['before']['load']:.2f} / {r['after']['load']:.2f} | "
                 f"{r['before']['threads']} | {r['before']['busy']} |\n")
        if res_cv is not None:
            c = res_cv
            fh.write(f"| SVMClassifierCV (path) vs GridSearchCV(SVC()), 50 Cs, 5 folds | "
                     f"{c['t_ours']:.2f} | {c['t_gs']:.2f} | {c['t_ours'] / c['t_gs']:.2f}x | "
                     f"mean test scores {c['agree']:.3g} apart | {c['before']['load']:.2f} / "
                     f"{c['after']['load']:.2f} | {c['before']['threads']} | "
                     f"{c['before']['busy']} |\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-cv", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "regularization_path_results.md"))
    argv = sys.argv[1:] if argv is None else list(argv)
    args = ap.parse_args(argv)
    from sklearn.datasets import make_classification

    warnings.simplefilter("ignore")
    X, y = make_classification(args.size, 20, random_state=0)
    Cs = np.logspace(-2, 2, 50)
    res_path = run_path(X, y, Cs, args.repeat)
    print(res_path)
    res_cv = None if args.no_cv else run_cv(X, y, Cs, args.repeat)
    print(res_cv)
    write_section(args.out, args.size, res_path, res_cv, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

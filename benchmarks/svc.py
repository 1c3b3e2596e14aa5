"""SVC's speed (issue 26): ``SVMClassifier()`` with its default solver ("auto": libsvm for
the classic duals) against scikit-learn's ``SVC`` on the same data, C and gamma, in one run.
Not part of the test suite.

    python benchmarks/svc.py                      # l = 1000, 2000, 5000 and digits
    python benchmarks/svc.py --sizes 1000 2000    # a subset
    python benchmarks/svc.py --piqp               # also PIQP's objective (where it finishes)

Data: ``make_classification(l, 20 features, random_state=0)``, rbf kernel, ``gamma="scale"``,
C = 1; digits: the 10 classes of ``load_digits`` (one-vs-rest in the library, SVC's
one-vs-one: different multiclass schemes, timed as users call them). Each time is the best
of ``--repeat`` runs of ``fit``. The objective column compares the library's certified
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


def write_section(path: str, rows: list, argv: list) -> None:
    """Append this run's section to ``path`` (the title first when the file is new)."""
    from conditions import commit as commit_of

    commit = commit_of(HERE)
    import sklearn

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a") as fh:
        if new:
            fh.write("# SVMClassifier() against SVC (`python benchmarks/svc.py`)\n")
        fh.write(f"\n## Run of {now}\n\ncommit {commit}, scikit-learn {sklearn.__version__}, "
                 f"{os.cpu_count()} CPUs, `python benchmarks/svc.py {' '.join(argv)}`\n\n"
                 "| data | SVC tol 1e-3 (s) | SVC tol 1e-8 (s) | SVMClassifier() (s) | backend "
                 "| ratio to SVC 1e-3 / 1e-8 | objective vs PIQP | load (1 min) before / after "
                 "| BLAS threads | other processes busy |\n"
                 "|---|---|---|---|---|---|---|---|---|---|\n")
        for name, a, b, c, used, rel, before, after in rows:
            fh.write(f"| {name} | {a:.3f} | {b:.3f} | {c:.3f} | {used} | {c / a:.1f}x / "
                     f"{c / b:.1f}x | {rel or '-'} | {before['load']:.2f} / "
                     f"{after['load']:.2f} | {before['threads']} | {before['busy']} |\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 2000, 5000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--piqp", action="store_true", help="compare the objective with PIQP's")
    ap.add_argument("--no-digits", action="store_true")
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
    for name, X, y in cases:
        before = machine()
        t_svc3, _ = best(lambda: SVC(C=1.0, gamma="scale").fit(X, y), args.repeat)
        t_svc8, _ = best(lambda: SVC(C=1.0, gamma="scale", tol=1e-8).fit(X, y), args.repeat)
        t_ours, clf = best(lambda: sm.SVMClassifier(kernel="rbf", C=1.0).fit(X, y), args.repeat)
        sol = clf.solution_ if hasattr(clf, "solution_") else None
        used = "/".join(sorted({s.solver for s in clf._solutions()}))
        rel = ""
        if args.piqp and sol is not None and len(y) <= 2000:
            ref = sm.fit(X, y, solver="piqp", kernel="rbf", C=1.0)
            rel = f"{abs(sol.objective - ref.objective) / abs(ref.objective):.1e}"
        after = {"load": os.getloadavg()[0]}
        rows.append((name, t_svc3, t_svc8, t_ours, used, rel, before, after))
        print(f"{name}: SVC {t_svc3:.3f} s (tol 1e-3), {t_svc8:.3f} s (tol 1e-8); "
              f"SVMClassifier() {t_ours:.3f} s with {used} = {t_ours / t_svc3:.1f}x / "
              f"{t_ours / t_svc8:.1f}x {rel}; load {before['load']:.2f} -> "
              f"{after['load']:.2f}, threads {before['threads']}, busy: {before['busy']}",
              flush=True)
    write_section(args.out, rows, argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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
``benchmarks/svc_results.md``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def best(fn, repeat: int) -> tuple[float, object]:
    out, t = None, np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - t0)
    return t, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 2000, 5000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--piqp", action="store_true", help="compare the objective with PIQP's")
    ap.add_argument("--no-digits", action="store_true")
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
        t_svc3, _ = best(lambda: SVC(C=1.0, gamma="scale").fit(X, y), args.repeat)
        t_svc8, _ = best(lambda: SVC(C=1.0, gamma="scale", tol=1e-8).fit(X, y), args.repeat)
        t_ours, clf = best(lambda: sm.SVMClassifier(kernel="rbf", C=1.0).fit(X, y), args.repeat)
        sol = clf.solution_ if hasattr(clf, "solution_") else None
        used = "/".join(sorted({s.solver for s in clf._solutions()}))
        rel = ""
        if args.piqp and sol is not None and len(y) <= 2000:
            ref = sm.fit(X, y, solver="piqp", kernel="rbf", C=1.0)
            rel = f"{abs(sol.objective - ref.objective) / abs(ref.objective):.1e}"
        rows.append((name, t_svc3, t_svc8, t_ours, used, rel))
        print(f"{name}: SVC {t_svc3:.3f} s (tol 1e-3), {t_svc8:.3f} s (tol 1e-8); "
              f"SVMClassifier() {t_ours:.3f} s with {used} = {t_ours / t_svc3:.1f}x / "
              f"{t_ours / t_svc8:.1f}x {rel}", flush=True)
    with open(os.path.join(HERE, "svc_results.md"), "w") as fh:
        fh.write("# SVMClassifier() against SVC (`python benchmarks/svc.py`)\n\n"
                 "| data | SVC tol 1e-3 (s) | SVC tol 1e-8 (s) | SVMClassifier() (s) | backend "
                 "| ratio to SVC 1e-3 / 1e-8 | objective vs PIQP |\n|---|---|---|---|---|---|---|\n")
        for name, a, b, c, used, rel in rows:
            fh.write(f"| {name} | {a:.3f} | {b:.3f} | {c:.3f} | {used} | {c / a:.1f}x / "
                     f"{c / b:.1f}x | {rel or '-'} |\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

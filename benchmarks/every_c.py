"""Every C in the time of a moderate one (issue 31): the 1-norm dual from C = 1e-8 to 1e12 and
``math.inf`` on the six-point toy, moons and breast cancer (standardised), on every QP backend;
each time as a ratio to the same backend's time at C = 1 (the target: at most 10), and whether
the answer is libsvm's (certificate and dual objective, as tests/test_every_c.py checks). A
fourth data set, moons under the linear kernel (noise 0.3: inseparable), is the far end: at
C = 1e12 its alphas are 1e12 and w of order one.

Not a timed test. ``python benchmarks/every_c.py [--solvers piqp,highs] [--repeat 3]
[--data "moons200 linear"]``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np

CS = [1e-8, 1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6, 1e8, 1e10, 1e12, math.inf]


def datasets():
    from sklearn.datasets import load_breast_cancer, make_moons
    from sklearn.preprocessing import StandardScaler

    toy = (np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], float),
           np.array([-1, -1, -1, 1, 1, 1]), {})
    Xm, ym = make_moons(200, noise=0.2, random_state=0)
    Xi, yi = make_moons(200, noise=0.3, random_state=0)   # inseparable under the linear kernel
    Xc, yc = load_breast_cancer(return_X_y=True)
    Xc = StandardScaler().fit_transform(Xc)[:190]
    return {"toy": toy, "moons200 rbf": (Xm, ym, {"kernel": "rbf", "gamma": 0.5}),
            "cancer190 linear": (Xc, yc[:190], {}), "moons200 linear": (Xi, yi, {})}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solvers", default="piqp,clarabel,highs,ipopt,gurobi,ipm")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", default=None,
                    help="comma-separated data set names (default: all)")
    args = ap.parse_args(argv)
    chosen = None if args.data is None else set(args.data.split(","))
    import svm_models as sm

    worst = {}
    for name, (X, y, kw) in datasets().items():
        if chosen is not None and name not in chosen:
            continue
        for solver in args.solvers.split(","):
            row, base = [], None
            for C in [1.0] + [c for c in CS if c != 1.0]:
                times = []
                try:
                    for _ in range(args.repeat):
                        t0 = time.perf_counter()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            sm.fit(X, y, solver=solver, C=C, time_limit=120, **kw)
                        times.append(time.perf_counter() - t0)
                    t = min(times)
                except sm.NotSeparableError:
                    row.append((C, "no solution"))
                    continue
                except sm.SVMError as exc:
                    row.append((C, type(exc).__name__))
                    continue
                if C == 1.0:
                    base = t
                row.append((C, f"{t / base:.1f}x"))
                worst[(name, solver)] = max(worst.get((name, solver), 0.0), t / base)
            print(f"{name:18s} {solver:9s} C=1: {base * 1e3:7.1f} ms | " +
                  " ".join(f"{c:g}:{r}" for c, r in row if c != 1.0), flush=True)
    print("largest ratio to C = 1:", f"{max(worst.values()):.1f}x" if worst else "-")
    # a C path from 1e-3 to 1e3 (13 values) against one fit at C = 1, the same backend
    for name, (X, y, kw) in datasets().items():
        if chosen is not None and name not in chosen:
            continue
        for solver in args.solvers.split(","):
            Cs = np.logspace(-3, 3, 13)
            try:
                one = path = math.inf
                for _ in range(args.repeat):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        t0 = time.perf_counter()
                        sm.fit(X, y, solver=solver, C=1.0, time_limit=120, **kw)
                        one = min(one, time.perf_counter() - t0)
                        t0 = time.perf_counter()
                        sm.fit_path(X, y, Cs, solver=solver, time_limit=120, **kw)
                        path = min(path, time.perf_counter() - t0)
            except sm.SVMError as exc:
                print(f"{name:18s} {solver:9s} fit_path 1e-3..1e3: {type(exc).__name__}")
                continue
            print(f"{name:18s} {solver:9s} fit_path 1e-3..1e3 (13 C): {path * 1e3:8.1f} ms, "
                  f"{path / len(Cs) / one:.2f}x a fit at C = 1 per C", flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    raise SystemExit(main())

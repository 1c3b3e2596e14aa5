"""The time limit as a deadline of the whole call: requested limit against wall time, per
backend, for a small, a medium and a large problem of each problem class. Not part of the
test suite; a few minutes.

    python benchmarks/deadline.py                   # writes benchmarks/deadline_results.md
    python benchmarks/deadline.py --limit 2 --out /tmp/x.md

Each call is ``svm_models.fit`` on breast-cancer points (standardised; repeated with a
little noise beyond its 569) with ``time_limit=--limit``; its wall time counts everything
(kernel, build, solve, retries, polish, fallbacks). The rule is 1.2 x limit + 1 s. The
machine's load (``os.getloadavg``) and its thread settings are recorded with the table: on
a shared machine every time is longer.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

#: (problem class, formulation, params, sizes small / medium / large)
CASES = [
    ("QP", "soft_l1_dual", {"kernel": "rbf"}, (50, 200, 1000)),
    ("LP", "l1_norm_primal", {}, (50, 200, 1000)),
    ("SOCP", "c_tuning_standard", {}, (30, 100, 300)),
]
BACKENDS = ("libsvm", "highs", "piqp", "clarabel", "ipm", "gurobi", "ipopt", "scip")


def data(l: int):
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    reps = math.ceil(l / len(y))
    rng = np.random.default_rng(0)
    Xr = np.vstack([X + (0.05 * rng.normal(size=X.shape) if k else 0) for k in range(reps)])
    return Xr[:l], np.tile(y, reps)[:l]


def one(formulation: str, params: dict, solver: str, l: int, limit: float) -> tuple:
    import svm_models as sm
    from svm_models.formulations import get
    from svm_models.solvers import backend

    b = backend(solver)
    pclass = get(formulation).problem_class
    if b.structured is None and not b.takes(pclass):
        return None
    if b.structured is not None and formulation != "soft_l1_dual":
        return None
    X, y = data(l)
    t = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = sm.fit(X, y, formulation, solver, time_limit=limit, **params)
        end = s.status.value
    except sm.SVMError as exc:
        end = f"{type(exc).__name__}: {getattr(exc, 'status', None) or ''}"
    return time.perf_counter() - t, end


def warm_up(backends) -> None:
    """One tiny fit per backend first: imports and first-call costs are not the deadline's."""
    import svm_models as sm
    from svm_models.datasets import toy

    X, y = toy()
    for n in backends:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sm.fit(X, y, "soft_l1_dual", n, kernel="rbf")
        except sm.SVMError:
            pass


def thread_settings() -> str:
    from conditions import blas_threads, thread_variables

    return f"{thread_variables()}; {blas_threads()}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--limit", type=float, default=2.0, help="time_limit of every call (s)")
    p.add_argument("--out", default=os.path.join(HERE, "deadline_results.md"))
    p.add_argument("--backends", default=",".join(BACKENDS))
    a = p.parse_args(argv)
    import svm_models as sm

    installed = [n for n in a.backends.split(",") if sm.solvers().get(n, {}).get("available")]
    warm_up(installed)
    load0 = os.getloadavg()
    rows = []
    for pclass, formulation, params, sizes in CASES:
        for solver in installed:
            for size, l in zip(("small", "medium", "large"), sizes):
                got = one(formulation, params, solver, l, a.limit)
                if got is None:
                    continue
                wall, end = got
                ok = wall <= 1.2 * a.limit + 1.0
                rows.append((pclass, formulation, solver, f"{size} ({l})", a.limit, wall, end,
                             "yes" if ok else "**no**"))
                print(*rows[-1], sep=" | ", flush=True)
    load1 = os.getloadavg()
    lines = [
        "# Time limit as a deadline: requested limit vs wall time",
        "",
        f"`python benchmarks/deadline.py --limit {a.limit:g}` -- svm_models "
        f"{sm.__version__}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{platform.platform()}.",
        "",
        f"Load average (1, 5, 15 min) at the start: {', '.join(f'{x:.2f}' for x in load0)}; "
        f"at the end: {', '.join(f'{x:.2f}' for x in load1)}.",
        f"Threads: {thread_settings()}.",
        "",
        "Each row: one `fit` (kernel, build, solve, retries, polish, fallbacks) with "
        "`time_limit` as requested; within = wall <= 1.2 x limit + 1 s.",
        "",
        "| class | formulation | backend | problem (points) | limit s | wall s | ended | within |",
        "|---|---|---|---|---:|---:|---|---|",
    ]
    lines += [f"| {c} | {f} | {s} | {p_} | {lim:g} | {w:.2f} | {e} | {ok} |"
              for c, f, s, p_, lim, w, e, ok in rows]
    with open(a.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

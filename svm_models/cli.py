"""The ``svm-models`` command.

    svm-models demo [--solver NAME] [--quick]   every formulation on a real and a 2-D dataset
    svm-models solvers                          which backends are installed and what they take
    svm-models setup-ipopt [--check]            make Ipopt usable without conda or internet
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


#: the demo solves rsvm_plus_dual (one variable per pair of points) on this many points
DUAL_DEMO_POINTS = 120


def _demo_rows(name, X, y, Xte, yte, solver, kernel_params, time_limit):
    from .errors import SVMError
    from .formulations import get
    from .methods.radius import fit

    f = get(name)
    params = {k: v for k, v in kernel_params.items() if k in f.params}
    if "C" in f.params:
        params["C"] = 1.0
    pre = ""
    if name == "rsvm_plus_dual" and len(y) > DUAL_DEMO_POINTS:
        # every pair is a variable of this dual: l(l-1)/2 of them
        X, y = X[:DUAL_DEMO_POINTS], y[:DUAL_DEMO_POINTS]
        pre = f"first {DUAL_DEMO_POINTS} points; "
    t0 = time.perf_counter()
    try:
        s = fit(X, y, formulation=name, solver=solver, time_limit=time_limit, **params)
    except SVMError as exc:
        return [name, solver, "-", "-", "-", "-", f"{time.perf_counter() - t0:.2f}",
                type(exc).__name__ + ": " + (exc.status.value if getattr(exc, "status", None)
                                             else str(exc).split(":")[0][:40])]
    elapsed = time.perf_counter() - t0
    note = pre
    if s.details is not None and hasattr(s.details, "g"):
        note += f"g*={s.g:.4f}, C*=" + ("none" if s.C is None else f"{s.C:.4g}")
    elif s.details is not None and hasattr(s.details, "r"):
        note += f"r={s.r:.4g}, lam={s.lam:g}"
        if s.details.mu is not None:
            note += f", {int(np.sum(s.mu > 1e-6))} of {s.mu.size} weights > 0"
        gen = s.extra.get("pair_generation")
        if gen:
            note += f", {gen['pairs']} of {gen['all_pairs']} pairs generated"
    return [name, solver, f"{s.objective:.6g}", str(s.n_support), f"{s.score(X, y):.3f}",
            f"{s.score(Xte, yte):.3f}", f"{elapsed:.2f}", note]


def _table(rows, header):
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


def demo(solver: str = "ipopt", quick: bool = False, time_limit: float = 60.0) -> int:
    from . import datasets
    from .api import formulations

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
    print(f"svm-models demo: every registered formulation with solver={solver!r}, C = 1 "
          f"where it applies, at most {time_limit:g} s a solve\n")
    t0 = time.perf_counter()
    for title, X, y, Xt, yt, kp in sets:
        print(f"== {title}: {len(y)} training / {len(yt)} test points")
        rows = [_demo_rows(name, X, y, Xt, yt, solver, kp, time_limit) for name in formulations()]
        print(_table(rows, header))
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


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "setup-ipopt":
        from .setup_ipopt import main as setup_main

        return setup_main(argv[1:])
    p = argparse.ArgumentParser(prog="svm-models", description="Pyomo models of SVMs.")
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="run every formulation on a real and a 2-D dataset")
    d.add_argument("--solver", default="ipopt", help="backend (default: ipopt)")
    d.add_argument("--quick", action="store_true", help="smaller training set")
    d.add_argument("--time-limit", type=float, default=60.0,
                   help="seconds allowed for each solve (default: 60)")
    sub.add_parser("solvers", help="list the backends and what they take")
    sub.add_parser("setup-ipopt", help="make Ipopt usable (cyipopt + PyNumero ASL)")
    args = p.parse_args(argv)
    if args.cmd == "demo":
        from .errors import SVMError

        try:
            return demo(args.solver, args.quick, args.time_limit)
        except SVMError as exc:
            print(f"svm-models: {exc}", file=sys.stderr)
            return 1
    if args.cmd == "solvers":
        return show_solvers()
    return 2


if __name__ == "__main__":
    raise SystemExit(main())

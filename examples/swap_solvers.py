"""One model, every installed solver: the backend is one flag, ``solver=``.

What it teaches:

* a model is built once (``svm_models.build``) and handed to any backend with
  ``svm_models.solve(model, solver=...)``; nothing else changes. ``svm-models solvers`` (or
  ``svm_models.solvers()``) lists what is installed and which problem classes each takes;
* the backends agree on the optimum to their tolerances (here to about 1e-8 relative):
  interior point (Ipopt, PIQP, Clarabel), active set (HiGHS), barrier/simplex (Gurobi) and
  spatial branch and bound (SCIP) reach the same w, b and objective;
* they differ in time, and in the path they take: ``fast`` (matrices straight to the backend)
  or ``general`` (through Pyomo's own interface; SCIP has no fast path here).

The model: the 1-norm soft-margin SVM, primal form, linear kernel, C = 1, on the first
training points of the Wisconsin breast-cancer data (30 standardised features; the copy that
ships with scikit-learn).

Run:  python examples/swap_solvers.py [--quick] [--solvers highs,piqp]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import svm_models as sm
from svm_models.datasets import breast_cancer

FORMULATION = "soft_l1_primal"


def main(quick: bool = False, solvers=None, C: float = 1.0) -> dict:
    """Solve one built model with each backend; return ``{solver: Solution}`` of those that
    solved it (a backend that is not installed, or refuses, is reported and left out)."""
    Xtr, _, ytr, _ = breast_cancer()
    l = 40 if quick else 120
    X, y = Xtr[:l], ytr[:l]
    model = sm.build(FORMULATION, X, y, C=C)
    listing = sm.solvers()
    names = solvers or [n for n, info in listing.items() if "QP" in info["classes"]]
    print(f"{FORMULATION}, linear kernel, C = {C}: {l} points x {X.shape[1]} features\n")
    print(f"{'solver':10s} {'interface':14s} {'path':8s} {'time s':>8s} {'objective':>20s} "
          f"{'rel. diff':>9s} {'max |w - w_ref|':>15s}")
    out, ref = {}, None
    for name in names:
        if name in listing and not listing[name]["available"]:
            print(f"{name:10s} not installed ({listing[name]['install']})")
            continue
        t0 = time.perf_counter()
        try:
            sol = sm.solve(model, solver=name, time_limit=120)
        except sm.SVMError as exc:
            print(f"{name:10s} {type(exc).__name__}: {exc}")
            continue
        elapsed = time.perf_counter() - t0
        ref = ref or sol
        out[name] = sol
        rel = abs(sol.objective - ref.objective) / max(1.0, abs(ref.objective))
        print(f"{name:10s} {sol.interface:14s} {sol.path:8s} {elapsed:8.3f} "
              f"{sol.objective:20.12f} {rel:9.1e} {np.max(np.abs(sol.w - ref.w)):15.1e}")
    if out:
        objs = np.array([s.objective for s in out.values()])
        spread = np.ptp(objs) / max(1.0, abs(objs[0]))
        print(f"\n{len(out)} backends; objectives within {spread:.1e} (relative) of each other. "
              "The reference row is the first one.")
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="40 points instead of 120")
    p.add_argument("--solvers", default=None,
                   help="comma-separated backends (default: every QP backend installed)")
    a = p.parse_args()
    main(quick=a.quick, solvers=a.solvers.split(",") if a.solvers else None)

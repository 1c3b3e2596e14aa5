"""The regularisation path over C: one model, many solves, and what C does.

What it teaches:

* ``svm_models.fit_path(X, y, Cs, ...)`` builds the model once and changes its mutable
  parameter ``C`` between solves (re-solves start from the previous solution's active set),
  giving the same answers as one ``fit`` per C, faster;
* what C does to a 1-norm soft margin: small C buys a wide margin with many support vectors
  (every alpha capped at C); large C narrows the margin, leaves fewer support vectors and fits
  the training points harder -- training accuracy rises, test accuracy need not;
* ``svm_models.plots.c_path`` draws the margin, the number of support vectors, the objective
  and the training accuracy against C (``--plot out.png``; needs matplotlib).

The data: Wisconsin breast cancer (standardised), 1-norm soft margin, linear kernel.

Run:  python examples/c_path.py [--quick] [--solver highs] [--plot c_path.png]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import svm_models as sm
from svm_models.datasets import breast_cancer

FORMULATION = "soft_l1_dual"


def main(quick: bool = False, solver: str = "highs", plot=None) -> dict:
    """Fit the path; return ``{"Cs", "solutions", "X", "y", "figure"}`` (figure: None
    without ``plot``)."""
    Xtr, Xte, ytr, yte = breast_cancer()
    l = 60 if quick else 300
    X, y = Xtr[:l], ytr[:l]
    Cs = np.logspace(-3, 2, 6 if quick else 11)
    t0 = time.perf_counter()
    sols = sm.fit_path(X, y, Cs, formulation=FORMULATION, solver=solver)
    elapsed = time.perf_counter() - t0
    print(f"{FORMULATION}, linear kernel, {l} training / {len(yte)} test points, solver {solver}: "
          f"{len(Cs)} values of C in {elapsed:.2f} s (one build)\n")
    print(f"{'C':>9s} {'objective':>12s} {'#SV':>5s} {'at C':>5s} {'margin':>8s} "
          f"{'train acc':>9s} {'test acc':>9s}")
    for C, s in zip(Cs, sols):
        at_C = int(np.sum(s.alpha >= C * (1 - 1e-6)))
        print(f"{C:9.3g} {s.objective:12.6f} {s.n_support:5d} {at_C:5d} {s.margin:8.4f} "
              f"{s.score(X, y):9.3f} {s.score(Xte, yte):9.3f}")
    best = max(zip(Cs, sols), key=lambda cs: cs[1].score(Xte, yte))
    print(f"\nbest test accuracy {best[1].score(Xte, yte):.3f} at C = {best[0]:.3g} "
          "(choosing C on the test set is for illustration only: use cross-validation, or "
          "the C-tuning QCQP, examples/c_tuning_vs_grid_search.py)")
    fig = None
    if plot:
        from svm_models.plots import c_path

        fig = c_path(sols, X, y, path=plot)
        print(f"plot written to {plot}")
    return {"Cs": Cs, "solutions": sols, "X": X, "y": y, "figure": fig}


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="60 points and 6 values of C")
    p.add_argument("--solver", default="highs", help="any QP backend")
    p.add_argument("--plot", default=None, metavar="PNG", help="write the path plot there")
    a = p.parse_args()
    main(quick=a.quick, solver=a.solver, plot=a.plot)

"""An SVM inside a larger Pyomo model: a budget on the weights, added by the user.

What it teaches:

* ``svm_models.build(name, X, y, block=m.svm)`` fills a block of *your* model with the SVM
  (variables ``m.svm.w``, ``m.svm.b``, ``m.svm.xi``, constraints ``m.svm.margin[i]``, its
  objective); your own variables and constraints can refer to them like any Pyomo component;
* ``svm_models.solve(m, solver=...)`` solves the whole model -- your constraints included (the
  solver layer sees the model is no longer the bare SVM and takes the general path through
  Pyomo, saying why in ``sol.general_path_reason``) -- and returns the SVM block's
  ``Solution``; ``svm_models.extract(m.svm)`` reads the same Solution from the block later;
* what the extra constraint does to the answer: here an L1 budget ``sum_j |w_j| <= B`` (stated
  with auxiliary variables ``u_j >= +-w_j``), a lasso-like constraint that trades training fit
  (more slack, a larger objective) for a smaller, sparser, more readable w: weights become 0.

The data: the first ``l`` training points of the Wisconsin breast-cancer data, its ten "mean"
features (standardised), labels 0 = malignant, 1 = benign.

Run:  python examples/compose_block.py [--quick] [--solver highs] [--budget-fraction 0.4]
"""

from __future__ import annotations

import argparse

import numpy as np
import pyomo.environ as pyo

import svm_models as sm
from svm_models.datasets import breast_cancer

FORMULATION = "soft_l1_primal"


def data(quick: bool = False):
    """(X, y, feature names): the ten "mean" features of the breast-cancer training split."""
    from sklearn.datasets import load_breast_cancer

    Xtr, _, ytr, _ = breast_cancer()
    l = 40 if quick else 150
    return Xtr[:l, :10], ytr[:l], list(load_breast_cancer().feature_names[:10])


def budget_model(X, y, budget: float, C: float = 1.0):
    """The user's model: the SVM in block ``m.svm``, plus ``u_j >= |w_j|`` and
    ``sum_j u_j <= budget``."""
    m = pyo.ConcreteModel()
    m.svm = pyo.Block()
    sm.build(FORMULATION, X, y, C=C, block=m.svm)
    m.u = pyo.Var(m.svm.J, bounds=(0, None), doc="u_j >= |w_j|")
    m.above = pyo.Constraint(m.svm.J, rule=lambda m, j: m.u[j] >= m.svm.w[j])
    m.below = pyo.Constraint(m.svm.J, rule=lambda m, j: m.u[j] >= -m.svm.w[j])
    m.budget = pyo.Constraint(expr=sum(m.u[j] for j in m.svm.J) <= budget,
                              doc="L1 budget on the weights")
    return m


def main(quick: bool = False, solver: str = "highs", budget_fraction: float = 0.4,
         C: float = 1.0) -> dict:
    """Fit without and with the budget; return both Solutions, the budget and the model."""
    X, y, names = data(quick)
    free = sm.fit(X, y, formulation=FORMULATION, solver=solver, C=C)
    budget = budget_fraction * float(np.abs(free.w).sum())
    m = budget_model(X, y, budget, C)
    sol = sm.solve(m, solver=solver)
    again = sm.extract(m.svm, solver=solver)      # the same numbers, read from the block
    print(f"{FORMULATION}, C = {C}, {len(y)} points, solver {solver}")
    print(f"budget B = {budget_fraction} x ||w_free||_1 = {budget:.4f}  "
          f"(path: {sol.path}; {sol.extra.get('general_path_reason', '')})\n")
    print(f"{'feature':24s} {'w (no budget)':>14s} {'w (budget)':>12s}")
    for name, a, b in zip(names, free.w, sol.w):
        zero = abs(b) < 1e-6
        print(f"{name:24s} {a:14.5f} {0.0 if zero else b:12.5f}" + ("   <- zero" if zero else ""))
    print(f"\n{'':24s} {'no budget':>14s} {'budget':>12s}")
    print(f"{'sum |w_j|':24s} {np.abs(free.w).sum():14.5f} {np.abs(sol.w).sum():12.5f}")
    print(f"{'objective':24s} {free.objective:14.6f} {sol.objective:12.6f}")
    print(f"{'margin 1/||w||':24s} {free.margin:14.5f} {sol.margin:12.5f}")
    print(f"{'training accuracy':24s} {free.score(X, y):14.3f} {sol.score(X, y):12.3f}")
    print(f"\nextract(m.svm) gives the same w to {np.max(np.abs(again.w - sol.w)):.1e}")
    return {"free": free, "budget": sol, "B": budget, "model": m, "X": X, "y": y}


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="40 points instead of 150")
    p.add_argument("--solver", default="highs", help="a backend that takes QPs (general path)")
    p.add_argument("--budget-fraction", type=float, default=0.4,
                   help="B as a fraction of the unconstrained ||w||_1")
    a = p.parse_args()
    main(quick=a.quick, solver=a.solver, budget_fraction=a.budget_fraction)

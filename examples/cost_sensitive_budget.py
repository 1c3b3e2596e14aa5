"""A cost-sensitive SVM with a budget on the features it may use: the SVM as a block of your
own Pyomo model.

The story: a screening classifier for a condition, from six measurements with a price per
patient (``COST``: a survey costs 1, a genome test 50). Two things an operations
researcher adds to a textbook SVM:

* **cost-sensitive errors** -- sending a sick patient home (a missed positive) costs five times
  a false alarm. The library's ``soft_l1_primal`` takes a per-point C as ``sample_weight``
  (point i's penalty is ``C * sample_weight[i]``); a weight per class, as scikit-learn's
  ``class_weight``, is the weight of each point's class (:func:`class_weights`);
* **a budget on the features** -- the user's own variables ``t_j >= |w_j|`` (two rows each)
  and one budget row ``sum_j cost_j t_j <= B``, written *outside* the SVM block and referring
  to its ``w``. This is the convex (weighted 1-norm) version of "the measurements we use may
  cost at most B": as B shrinks the expensive features' weights reach exactly 0 first, so
  those tests need not be ordered at all.

The model: ``m = pyo.ConcreteModel(); m.svm = svm_models.SVMBlock()``, the SVM built into
it by ``m.svm.build("soft_l1_primal", X, y, C=..., sample_weight=...)`` (the same as
``svm_models.build(..., block=m.svm)`` into a plain ``pyo.Block()``), then ``m.t``,
``m.t_hi``, ``m.t_lo``, ``m.budget``; solved as a whole by
``svm_models.optimize(m, solver)`` (any backend that takes a QP: the names are the library's)
and read back by ``svm_models.extract(m.svm)`` (a ``Solution``: w, b, predict, score).

The data are synthetic and seeded: 100 patients, about 30% sick; the cheap measurements
carry a weak signal, the expensive ones a strong one.

Run:  python examples/cost_sensitive_budget.py [--solver piqp --solver highs] [--quick]
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

import svm_models as sm

FORMULATION = "soft_l1_primal"
FEATURES = ["survey", "pressure", "cholesterol", "ECG", "MRI", "genome"]
COST = np.array([1.0, 1.0, 2.0, 5.0, 20.0, 50.0])      # price of each measurement
SIGNAL = np.array([0.6, 0.6, 0.8, 1.0, 1.4, 1.8])     # how far it separates the classes
SICK, HEALTHY = 1, -1
#: a missed sick patient costs this many false alarms
MISS_COST = 5.0
#: the budgets of the report (None: no budget row)
BUDGETS = (None, 40.0, 20.0, 10.0, 5.0, 2.0, 1.0)


def data(l: int = 100, seed: int = 4):
    """(X, y): ``l`` patients (about 30% sick, y = +1), the six measurements standardised
    normal plus ``SIGNAL / 2`` toward the patient's class."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(l) < 0.3, SICK, HEALTHY)
    X = rng.standard_normal((l, len(FEATURES))) + 0.5 * y[:, None] * SIGNAL
    return X, y


def class_weights(y, weights=None) -> np.ndarray:
    """The per-point ``sample_weight`` of a per-class weight (scikit-learn's ``class_weight``
    as a dict): point i gets its class's weight. Default: a missed sick patient counts
    ``MISS_COST`` times a false alarm."""
    weights = {SICK: MISS_COST, HEALTHY: 1.0} if weights is None else weights
    return np.array([weights[v] for v in np.asarray(y).tolist()], dtype=float)


def budget_model(X, y, budget=None, *, cost=COST, C: float = 1.0, sample_weight=None):
    """The user's model: the cost-sensitive SVM in block ``m.svm``, and outside it
    ``t_j >= |w_j|`` (``m.t_hi``, ``m.t_lo``) and, unless ``budget`` is None,
    ``sum_j cost_j t_j <= budget`` (``m.budget``)."""
    sample_weight = class_weights(y) if sample_weight is None else sample_weight
    m = pyo.ConcreteModel(name="cost-sensitive SVM under a feature budget")
    m.svm = sm.SVMBlock()                         # a Pyomo block type for one SVM
    m.svm.build(FORMULATION, X, y, C=C, sample_weight=sample_weight)
    J = m.svm.J                                   # the features, the SVM block's own set
    m.t = pyo.Var(J, bounds=(0, None), doc="t_j >= |w_j|")
    m.t_hi = pyo.Constraint(J, rule=lambda m, j: m.t[j] >= m.svm.w[j])
    m.t_lo = pyo.Constraint(J, rule=lambda m, j: m.t[j] >= -m.svm.w[j])
    if budget is not None:
        m.budget = pyo.Constraint(expr=sum(float(cost[j]) * m.t[j] for j in J) <= budget,
                                  doc="sum_j cost_j |w_j| <= B")
    return m


def solve_budget(X, y, budget, solver: str, *, cost=COST, C: float = 1.0) -> dict:
    """Build and solve the model for one budget; what the report needs."""
    m = budget_model(X, y, budget, cost=cost, C=C)
    info = sm.optimize(m, solver)
    sol = sm.extract(m.svm, solver=solver)
    pred = sol.predict(X)
    sick = y == SICK
    return {"budget": budget, "solver": solver, "objective": float(info.objective),
            "w": sol.w, "b": float(sol.b), "spent": float(cost @ np.abs(sol.w)),
            "kept": [FEATURES[j] for j in np.flatnonzero(np.abs(sol.w) > 1e-6)],
            "missed": int(np.sum(sick & (pred != SICK))),
            "false_alarms": int(np.sum(~sick & (pred == SICK))),
            "accuracy": float(np.mean(pred == y)), "time": info.time, "solution": sol,
            "model": m}


def dropped(results) -> list:
    """``[(B, [features])]``: the largest budget at which each feature's weight is 0 at that
    budget and every smaller one of ``results`` (ordered by decreasing budget)."""
    out = {}
    for j, name in enumerate(FEATURES):
        first = None
        for r in results:
            if abs(r["w"][j]) > 1e-6:
                first = None
            elif first is None and r["budget"] is not None:
                first = r["budget"]
        if first is not None:
            out.setdefault(first, []).append(name)
    return sorted(out.items(), key=lambda kv: -kv[0])


def main(*solvers: str, quick: bool = False, budgets=BUDGETS, C: float = 1.0) -> dict:
    """Solve for every budget with the first backend, check with the others; print a
    report; return ``{"X", "y", "results": [dict per budget], "others": {solver: [...]}}``."""
    solvers = solvers or ("piqp", "highs")
    X, y = data(60 if quick else 100)
    results = [solve_budget(X, y, B, solvers[0], C=C) for B in budgets]
    others = {s: [solve_budget(X, y, B, s, C=C) for B in budgets] for s in solvers[1:]}

    n_sick = int(np.sum(y == SICK))
    print(f"{FORMULATION}, C = {C}, {len(y)} patients ({n_sick} sick): a missed sick patient "
          f"costs {MISS_COST:g} false alarms (sample_weight by class); solver {solvers[0]}")
    print("feature costs: " + ", ".join(f"{n} {c:g}" for n, c in zip(FEATURES, COST)) + "\n")
    head = "".join(f"{n:>12s}" for n in FEATURES)
    print(f"{'budget B':>9s} {'spent':>7s}{head} {'objective':>11s} {'missed':>6s} "
          f"{'false+':>6s} {'acc':>5s}")
    for r in results:
        B = "none" if r["budget"] is None else f"{r['budget']:g}"
        ws = "".join(f"{'0':>12s}" if abs(v) <= 1e-6 else f"{v:12.4f}" for v in r["w"])
        print(f"{B:>9s} {r['spent']:7.2f}{ws} {r['objective']:11.4f} {r['missed']:6d} "
              f"{r['false_alarms']:6d} {r['accuracy']:5.2f}")
    print("\nas B shrinks, the features whose weight reaches 0 (and stays there): "
          + "; ".join(f"{', '.join(names)} at B = {B:g}" for B, names in dropped(results)))
    for s, rs in others.items():
        dobj = max(abs(a["objective"] - b["objective"]) / max(1.0, abs(a["objective"]))
                   for a, b in zip(results, rs))
        dw = max(float(np.max(np.abs(a["w"] - b["w"]))) for a, b in zip(results, rs))
        print(f"{s} on the same models: objectives within {dobj:.1e} (relative), "
              f"w within {dw:.1e}")
    return {"X": X, "y": y, "C": C, "results": results, "others": others}


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", action="append", dest="solvers",
                    help="a QP backend (repeat: the first solves, the others check; "
                         "default piqp, then highs)")
    ap.add_argument("--quick", action="store_true", help="60 patients instead of 100")
    a = ap.parse_args()
    main(*(a.solvers or ()), quick=a.quick)

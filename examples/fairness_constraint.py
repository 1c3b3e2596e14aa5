"""A fairness constraint on an SVM: two linear rows added to the library's model.

Zafar, Valera, Gomez-Rodriguez and Gummadi ("Fairness Constraints: Mechanisms for Fair
Classification", AISTATS 2017) bound the covariance between a protected attribute ``z``
(group membership, not a feature) and the signed distance of each point to the decision
boundary:

    | (1/N) sum_i (z_i - mean z) (w.x_i + b) |  <=  c

Linear in (w, b), so it is two rows -- ``m.fair_hi`` (``<= c``) and ``m.fair_lo``
(``>= -c``) -- added to a built ``soft_l1_primal`` SVM (``m = svm_models.build(...)``), which
stays a convex QP; ``svm_models.solve(m, solver=...)`` solves the model as changed and
returns the SVM's ``Solution``. (The ``b`` term drops out: ``sum_i (z_i - mean z) = 0``.)

The data are synthetic and seeded: N = 100 applicants, labels +1/-1, a protected attribute
``z`` in {0, 1} that agrees with the label for 80% of them, a feature ``merit`` that carries
the label, and a feature ``proxy`` that carries mostly ``z`` (think of a postcode). The
unconstrained SVM leans on the proxy; as c shrinks the bound binds (the covariance is exactly
+-c), the classifier turns away from the proxy, the rates of positive decisions in the two
groups come closer (the "p% rule": the smaller rate over the larger) and training accuracy
is what is paid.

Run:  python examples/fairness_constraint.py [--solver highs] [--quick]
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

import svm_models as sm

FORMULATION = "soft_l1_primal"
FEATURES = ["merit", "proxy"]
#: the covariance bounds of the report (None: no fairness rows)
BOUNDS = (None, 1.0, 0.5, 0.2, 0.1, 0.05, 0.0)


def data(N: int = 100, seed: int = 1):
    """(X, y, z): labels alternating +1/-1, ``z = 1`` with probability 0.8 for y = +1 and
    0.2 for y = -1, ``merit = 0.8 y + noise``, ``proxy = 1.2 (2z - 1) + 0.3 y + 0.7 noise``."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(N) % 2 == 0, 1, -1)
    z = (rng.random(N) < np.where(y == 1, 0.8, 0.2)).astype(float)
    merit = 0.8 * y + rng.standard_normal(N)
    proxy = 1.2 * (2 * z - 1) + 0.3 * y + 0.7 * rng.standard_normal(N)
    return np.c_[merit, proxy], y, z


def covariance(w, b, X, z) -> float:
    """(1/N) sum_i (z_i - mean z)(w.x_i + b), of numbers."""
    zc = z - z.mean()
    return float(zc @ (X @ w + b) / len(z))


def fair_svm(X, y, z, c=None, *, C: float = 1.0):
    """The library's SVM, and (unless ``c`` is None) the two rows of Zafar et al.'s bound."""
    m = sm.build(FORMULATION, X, y, C=C)
    if c is not None:
        N = len(z)
        zc = (z - z.mean()).tolist()
        cov = sum(zc[i] * (sum(float(X[i, j]) * m.w[j] for j in m.J) + m.b)
                  for i in range(N)) / N
        m.fair_hi = pyo.Constraint(expr=cov <= c, doc="cov(z, w.x + b) <= c")
        m.fair_lo = pyo.Constraint(expr=cov >= -c, doc="cov(z, w.x + b) >= -c")
    return m


def positive_rates(sol, X, z) -> tuple:
    """The share of positive decisions in group z = 0 and in group z = 1."""
    pos = sol.predict(X) == sol.classes[1]
    return float(pos[z == 0].mean()), float(pos[z == 1].mean())


def main(solver: str = "highs", quick: bool = False, bounds=BOUNDS, C: float = 1.0) -> dict:
    """Solve for every bound; print a report; return ``{"X", "y", "z", "rows": [...]}``, a
    dict per bound (``c``, ``solution``, ``cov``, ``active``, ``accuracy``, ``rates``)."""
    X, y, z = data(60 if quick else 100)
    rows = []
    for c in bounds:
        sol = sm.solve(fair_svm(X, y, z, c, C=C), solver=solver)
        cov = covariance(sol.w, sol.b, X, z)
        r0, r1 = positive_rates(sol, X, z)
        rows.append({"c": c, "solution": sol, "cov": cov, "accuracy": sol.score(X, y),
                     "rates": (r0, r1), "p_rule": min(r0, r1) / max(r0, r1),
                     "active": c is not None and abs(abs(cov) - c) <= 1e-7 * max(1.0, c)})
    print(f"{FORMULATION}, C = {C}, {len(y)} points, solver {solver}; z agrees with the label "
          f"for {np.mean(z == (y > 0)):.0%} of the points\n")
    print(f"{'bound c':>8s} {'cov(z, d)':>10s} {'active':>6s} {'w_merit':>8s} {'w_proxy':>8s} "
          f"{'objective':>10s} {'accuracy':>8s} {'pos z=0':>8s} {'pos z=1':>8s} {'p% rule':>7s}")
    for r in rows:
        s = r["solution"]
        print(f"{'none' if r['c'] is None else format(r['c'], 'g'):>8s} {r['cov']:10.5f} "
              f"{'yes' if r['active'] else 'no':>6s} {s.w[0]:8.4f} {s.w[1]:8.4f} "
              f"{s.objective:10.4f} {r['accuracy']:8.2f} {r['rates'][0]:8.2f} "
              f"{r['rates'][1]:8.2f} {r['p_rule']:7.2f}")
    free = rows[0]
    print(f"\nunconstrained covariance {free['cov']:.4f}: a bound above it changes nothing, "
          "a bound below it binds")
    return {"X": X, "y": y, "z": z, "C": C, "rows": rows}


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", default="highs", help="a QP backend (default highs)")
    ap.add_argument("--quick", action="store_true", help="60 points instead of 100")
    a = ap.parse_args()
    main(a.solver, quick=a.quick)

"""The six classic SVMs side by side: hard, 1-norm and 2-norm soft margin, primal and dual.

What it teaches:

* each family is one optimisation problem written two ways: the primal (over w, b, xi) and the
  dual (over alpha) reach the same optimum -- same objective, same w and b (strong duality of a
  convex QP); ``sol.duality_gap`` says so for each solve;
* how the families differ on the same data: the hard margin allows no slack and leans on the
  fewest points; the 1-norm soft margin caps every alpha at C (points inside the margin have
  alpha = C); the 2-norm soft margin has no cap but pays xi^2, so xi = alpha / C and points
  inside the margin keep growing alpha instead.

The data: two seeded Gaussian clouds in the plane (``svm_models.datasets.teaching_2d``),
separable (so the hard margin exists) but with points close enough for the soft margins to
take slack at C = 1.

Run:  python examples/classic_side_by_side.py [--quick] [--solver highs] [--C 1.0]
"""

from __future__ import annotations

import argparse

import numpy as np

import svm_models as sm
from svm_models.datasets import teaching_2d

FAMILIES = ("hard", "soft_l1", "soft_l2")


def main(quick: bool = False, solver: str = "highs", C: float = 1.0) -> dict:
    """Fit the six classic formulations; return ``{name: Solution}``."""
    X, y = teaching_2d(20 if quick else 60, separation=2.5)
    print(f"{len(y)} points in 2-D, solver {solver}, C = {C} for the soft margins\n")
    print(f"{'formulation':15s} {'objective':>12s} {'w':>22s} {'b':>9s} {'#SV':>4s} "
          f"{'max alpha':>9s} {'sum xi':>8s}  support vectors")
    sols = {}
    for family in FAMILIES:
        for form in ("primal", "dual"):
            name = f"{family}_{form}"
            kw = {} if family == "hard" else {"C": C}
            s = sm.fit(X, y, formulation=name, solver=solver, **kw)
            sols[name] = s
            w = np.array2string(s.w, precision=5, floatmode="fixed")
            print(f"{name:15s} {s.objective:12.7f} {w:>22s} {s.b:+9.5f} {s.n_support:4d} "
                  f"{s.alpha.max():9.5f} {s.xi.sum():8.5f}  {s.support.tolist()}")
    print("\nprimal vs dual, per family (strong duality: all differences ~ solver tolerance)")
    for family in FAMILIES:
        p, d = sols[f"{family}_primal"], sols[f"{family}_dual"]
        print(f"  {family:8s} |objective| diff {abs(p.objective - d.objective):.1e}   "
              f"||w|| diff {np.linalg.norm(p.w - d.w):.1e}   |b| diff {abs(p.b - d.b):.1e}   "
              f"same support: {set(p.support) == set(d.support)}")
    l1, l2 = sols["soft_l1_dual"], sols["soft_l2_dual"]
    at_C = int(np.sum(np.isclose(l1.alpha, C)))
    print(f"\n1-norm: {at_C} of its {l1.n_support} support vectors sit at the cap alpha = C.")
    xi_p = sols["soft_l2_primal"].xi
    print(f"2-norm: the primal's slacks xi equal the dual's alpha / C to "
          f"{np.max(np.abs(xi_p - l2.alpha / C)):.1e}; "
          f"margin 1/||w|| = {l2.margin:.4f} (1-norm {l1.margin:.4f}, hard "
          f"{sols['hard_dual'].margin:.4f}).")
    return sols


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="20 points instead of 60")
    p.add_argument("--solver", default="highs", help="any QP backend (svm-models solvers)")
    p.add_argument("--C", type=float, default=1.0, help="C of the soft margins")
    a = p.parse_args()
    main(quick=a.quick, solver=a.solver, C=a.C)

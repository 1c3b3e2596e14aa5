"""Quick start: the six classic SVMs on the six-point toy, checkable by hand.

Hard and 1-norm soft margin (C = 1) give alpha = 0.25 on points 1 and 3, w = (0.5, 0.5), b = 0.
Run:  python examples/quickstart.py [--solver NAME]
"""


import numpy as np

import svm_models as sm
from svm_models.datasets import toy


def main(solver: str = "highs") -> list:
    X, y = toy()
    out = []
    for name in ["hard_primal", "hard_dual", "soft_l1_primal", "soft_l1_dual",
                 "soft_l2_primal", "soft_l2_dual"]:
        sol = sm.fit(X, y, formulation=name, solver=solver, **({} if name.startswith("hard") else {"C": 1.0}))
        print(f"{name:15s} w={np.round(sol.w, 6)} b={sol.b:+.6f} "
              f"alpha={np.round(sol.alpha, 6)} support={sol.support.tolist()}")
        out.append(sol)
    return out


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", default="highs", help="backend (default: highs)")
    ap.add_argument("--quick", action="store_true", help="accepted for uniformity: it is quick")
    main(ap.parse_args().solver)

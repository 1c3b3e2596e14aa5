"""Counterfactual explanations: the smallest change of a point that flips an SVM's class.

Train a classifier, embed its decision function in a Pyomo model of the point x, and solve

    min ||x - x0||^2   s.t.   f(x) >= margin      (or f(x) <= -margin, toward classes[0])

* linear kernel: a convex QP (any QP backend: highs, gurobi, piqp, clarabel, ipopt); its
  answer is the projection of x0 onto the hyperplane w.x + b = margin, in closed form,
  ``x0 + (margin - f(x0)) w / ||w||^2``: the report shows both;
* rbf kernel: a non-convex NLP, solved by Ipopt (a local optimum). Started at x0 itself, a
  local solver can wander where the rbf expansion is flat and stop at a point of local
  infeasibility, so it is started from feasible points instead: where the segments from x0
  to the nearest training points of the other class cross the margin (:func:`crossings`);
  the best end is kept.

Run:  python examples/counterfactual.py [--solver NAME ...] [--rbf-solver NAME]
"""


import numpy as np
import pyomo.environ as pyo
from sklearn.datasets import make_moons

import svm_models as sm
from svm_models.datasets import teaching_2d
from svm_models.embed import add_decision_function, optimize
from svm_models.errors import InfeasibleError


def counterfactual(solution, x0, *, solver: str, margin: float = 0.1, starts=None,
                   time_limit: float = 60.0) -> dict:
    """The point nearest ``x0`` (squared Euclidean) that ``solution`` puts in the other class,
    with f(x) beyond ``margin``.

    ``starts``: initial points for a local solver on a non-convex model (default: x0 alone);
    the best of the optimal ends is returned (a start that ends at a point of local
    infeasibility is skipped; if all do, the last error is raised).
    """
    x0 = np.asarray(x0, dtype=float)
    now = solution.predict(x0[None, :])[0]
    target = solution.classes[0] if now == solution.classes[1] else solution.classes[1]
    m = pyo.ConcreteModel(name="counterfactual")
    m.J = pyo.RangeSet(0, x0.size - 1)
    m.x = pyo.Var(m.J, doc="the changed point")
    svm = add_decision_function(m, solution, m.x, require=target, margin=margin)
    m.change = pyo.Objective(expr=pyo.quicksum((m.x[j] - x0[j]) ** 2 for j in m.J),
                             doc="||x - x0||^2")
    best, failure = None, None
    for start in [x0] if starts is None else starts:
        for j, v in enumerate(np.asarray(start, dtype=float).tolist()):
            m.x[j].set_value(v)
        svm.output.set_value(pyo.value(svm.expression))
        try:
            info = optimize(m, solver, time_limit=time_limit)
        except InfeasibleError as exc:   # a local solver stalled: try the next start
            failure = exc
            continue
        x = svm.input_values()
        r = {"x0": x0, "x": x, "start": np.asarray(start, dtype=float), "label": now,
             "target": target, "margin": margin, "distance2": float(np.sum((x - x0) ** 2)),
             "f0": float(solution.decision_function(x0[None, :])[0]),
             "f": float(solution.decision_function(x[None, :])[0]),
             "self_check": svm.error(), "solver": info.solver, "time": info.time}
        if best is None or r["distance2"] < best["distance2"]:
            best = r
    if best is None:
        raise failure
    return best


def crossings(solution, x0, points, margin: float, k: int = 3) -> list:
    """Starting points for a local solver: where the segments from ``x0`` to the ``k``
    nearest of ``points`` that lie beyond ``margin`` on the other side first reach it
    (a scan of 200 steps, then bisection)."""
    x0 = np.asarray(x0, dtype=float)
    s = -1.0 if solution.decision_function(x0[None, :])[0] >= 0 else 1.0

    def beyond(P):
        return s * solution.decision_function(P) >= margin

    far = points[beyond(points)]
    out = []
    for p in far[np.argsort(np.sum((far - x0) ** 2, axis=1))[:k]]:
        t = np.linspace(0.0, 1.0, 201)
        first = int(np.argmax(beyond(x0 + t[:, None] * (p - x0))))
        lo, hi = t[max(first - 1, 0)], t[first]
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if beyond((x0 + mid * (p - x0))[None, :])[0] else (mid, hi)
        out.append(x0 + hi * (p - x0))
    return out


def projection(solution, x0, margin: float) -> np.ndarray:
    """The linear counterfactual in closed form: x0 projected onto w.x + b = +-margin."""
    x0 = np.asarray(x0, dtype=float)
    f0 = float(solution.decision_function(x0[None, :])[0])
    s = -1.0 if f0 >= 0 else 1.0       # the side to reach
    w = solution.w
    return x0 + s * (margin - s * f0) / (w @ w) * w


def _line(r: dict) -> str:
    return (f"  {r['solver']:9s} x* = {np.array2string(r['x'], precision=6)}  "
            f"||x* - x0||^2 = {r['distance2']:.8f}  f(x*) = {r['f']:+.8f}  "
            f"class {r['label']} -> {r['target']}  self-check {r['self_check']:.1e}")


def main(*linear_solvers: str, rbf_solver: str = "ipopt", margin: float = 0.1) -> dict:
    linear_solvers = linear_solvers or ("highs", "ipopt")
    X, y = teaching_2d(40, separation=2.5, seed=1)
    lin = sm.fit(X, y, formulation="soft_l1_dual", solver="piqp", C=1.0)
    x0 = X[1]
    exact = projection(lin, x0, margin)
    print(f"linear SVM (w = {np.array2string(lin.w, precision=4)}, b = {lin.b:+.4f}); "
          f"x0 = {np.array2string(x0, precision=4)}, f(x0) = "
          f"{lin.decision_function(x0[None, :])[0]:+.4f}")
    linear = [counterfactual(lin, x0, solver=s, margin=margin) for s in linear_solvers]
    for r in linear:
        print(_line(r))
    print(f"  closed form x* = {np.array2string(exact, precision=6)}  "
          f"||x* - x0||^2 = {np.sum((exact - x0) ** 2):.8f}")

    Xm, ym = make_moons(60, noise=0.15, random_state=0)
    rbf = sm.fit(Xm, ym, formulation="soft_l1_dual", solver="piqp", C=10.0, kernel="rbf",
                 gamma=2.0)
    x0 = Xm[0]
    starts = crossings(rbf, x0, Xm, margin)
    r = counterfactual(rbf, x0, solver=rbf_solver, margin=margin, starts=starts)
    nearest = min(float(np.sum((c - x0) ** 2)) for c in starts)
    print(f"rbf SVM ({rbf.n_support} support vectors, gamma = 2); x0 = "
          f"{np.array2string(x0, precision=4)}, f(x0) = {r['f0']:+.4f}")
    print(_line(r))
    print(f"  started from the {len(starts)} points where the segments to the nearest "
          f"training points of the other class cross the margin (best ||s - x0||^2 = "
          f"{nearest:.8f}): a local optimum")
    return {"linear": linear, "linear_exact": exact, "linear_solution": lin,
            "rbf": r, "rbf_solution": rbf, "rbf_starts": starts}


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", action="append", dest="solvers",
                    help="a backend for the linear (QP) counterfactual; repeat for several")
    ap.add_argument("--rbf-solver", default="ipopt", help="backend for the rbf NLP (default: ipopt)")
    ap.add_argument("--quick", action="store_true", help="accepted for uniformity: it is quick")
    args = ap.parse_args()
    main(*(args.solvers or ()), rbf_solver=args.rbf_solver)

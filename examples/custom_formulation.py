"""A formulation of your own, registered from outside the package: the squared-hinge SVM with
an L1 penalty on w -- sparse like the 1-norm SVM, smooth in the slacks like the 2-norm one.

    min  sum_j |w_j| + C/2 sum_i xi_i^2    s.t.  y_i (w.x_i + b) >= 1 - xi_i

(as a QP with t_j >= |w_j|). Its Lagrangian dual, a lower bound at every alpha >= 0 with
y'alpha = 0 and |X'(y alpha)|_inf <= 1, certifies the answer:

    max  sum_i alpha_i - 1/(2C) sum_i alpha_i^2

The script defines the formulation with the public base class, builds it from the library's
shared pieces, registers it, solves it on two backends, checks the two agree and the
certificate holds, and uses it through ``SVMClassifier`` (and a grid search over C) -- importing
nothing private. A package would register the same class through its entry point
``[project.entry-points."svm_models.formulations"] squared_hinge_l1 = "mypkg.module:SquaredHingeL1"``.
Run:  python examples/custom_formulation.py
"""

import numpy as np
import pyomo.environ as pyo

import svm_models as sm
from svm_models.formulations import Formulation, register
from svm_models.model.built import BuiltSVM
from svm_models.model.forms import QuadBlock
from svm_models.model.pieces import add_abs_rows, add_margin, linear_primal, sum_of_squares
from svm_models.model.record import LinearTerm, QuadTerm, Record, Scale
from svm_models.postprocess import linear_primal_values, margin_multipliers
from svm_models.solution import Solution
from svm_models.tolerances import alpha_scale, certificate_tolerance, support_threshold


def squared_hinge_l1(X, y, *, C=1.0, sample_weight=None, block=None):
    """The squared-hinge SVM with an L1 penalty on w (a convex QP): Components ``I``, ``y``,
    ``C`` (mutable), ``J``, ``w``, ``b``, ``t`` (``t_j >= |w_j|``), ``xi``, ``f``, ``margin``,
    ``abs_hi``, ``abs_lo``, ``xi_sq`` and ``objective``."""
    data, kern, weight, b, layout, wpos = linear_primal(X, y, "squared_hinge_l1", C,
                                                        sample_weight, block)
    d, l = data.n_features, data.n_points
    b.t = pyo.Var(b.J, bounds=(0, None), initialize=0.0, doc="t_j >= |w_j|")
    tpos = layout.add(b.t)
    b.xi = pyo.Var(b.I, initialize=0.0, doc="slack xi_i (its square is priced)")
    xpos = layout.add(b.xi)
    rows = [add_margin(b, layout, ("f", "f_i = w.x_i"), data.X, "w", data.y, b.xi)]
    rows += add_abs_rows(b, layout, tpos, wpos, d)
    wt = np.ones(l) if weight is None else weight
    sum_of_squares(b, "xi_sq", b.xi, doc="sum_i weight_i xi_i^2", diag=wt)
    b.objective = pyo.Objective(expr=sum(b.t[j] for j in b.J) + 0.5 * b.C * b.xi_sq,
                                sense=pyo.minimize, doc="sum_j t_j + C/2 sum_i xi_i^2")
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=1,
                    linear=[LinearTerm(tpos, 1.0)],
                    quadratic=[QuadTerm(QuadBlock(xpos, diag=wt), Scale(0.5, "C"))],
                    rows=rows, problem_class="QP").seal()
    b._svm = BuiltSVM(formulation="squared_hinge_l1", data=data, kernel=kern, block=b,
                      record=record, weight=weight)
    return b


def certificate(X, y, C_i, w, b, alpha):
    """Primal objective of exactly ``(w, b)`` with its best slacks, the dual objective of
    ``alpha`` made dual feasible (>= 0, balanced, ``|X'(y alpha)|_inf <= 1``), their relative
    gap."""
    xi = np.maximum(0.0, 1.0 - y * (X @ w + b))
    primal = float(np.abs(w).sum() + 0.5 * (C_i * xi) @ xi)
    a = np.maximum(alpha, 0.0)
    for c in (1.0, -1.0):   # balance: scale the larger class's side down to the other's
        other = a[y == -c].sum()
        if a[y == c].sum() > other:
            a[y == c] *= other / a[y == c].sum()
    a /= max(1.0, float(np.abs(X.T @ (y * a)).max(initial=0.0)))
    dual = float(a.sum() - 0.5 * (a @ (a / C_i)))
    return xi, primal, dual, (primal - dual) / max(abs(primal), abs(dual), 1e-300)


class SquaredHingeL1(Formulation):
    name = "squared_hinge_l1"
    builder = squared_hinge_l1
    problem_class = "QP"
    summary = "Squared-hinge SVM with an L1 penalty on w (sparse w, a QP; linear kernel)."

    def extract(self, block, ctx):
        svm = block._svm
        X, y, C, C_i, w, b = linear_primal_values(svm, block)
        extra = {}
        # alpha: the margin multipliers, or (a backend without duals) C_i xi_i, the
        # stationarity in xi -- either way made dual feasible inside the certificate
        mult = margin_multipliers(svm, ctx, extra) if ctx.duals is not None else None
        xi = np.maximum(0.0, 1.0 - y * (X @ w + b))
        alpha = mult if mult is not None else C_i * xi
        thr = support_threshold(alpha_scale(alpha), ctx.tol)
        alpha = np.where(alpha > thr, alpha, 0.0)
        xi, primal, dual, gap = certificate(X, y, C_i, w, b, alpha)
        support = np.flatnonzero(alpha)
        return Solution(formulation=self.name, solver=ctx.solver, status=ctx.status, w=w, b=b,
                        alpha=alpha, dual_coef=y * alpha, xi=xi, support=support,
                        support_vectors=X[support], objective=primal, kernel=svm.kernel,
                        classes=svm.data.classes, primal_objective=primal, dual_objective=dual,
                        duality_gap=gap, kkt={"primal_infeasibility": 0.0}, margin=None, C=C,
                        time=ctx.time, interface=ctx.interface, path=ctx.path, extra=extra)


def main(solvers=("clarabel", "piqp")) -> list:
    if "squared_hinge_l1" not in sm.formulations():
        register(SquaredHingeL1)
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    sols = [sm.fit(X, y, "squared_hinge_l1", solver=s, C=0.5) for s in solvers]
    for s in sols:
        print(f"{s.solver:9s} objective {s.objective:.8f}  gap {s.duality_gap:.1e}  "
              f"{int(np.sum(np.abs(s.w) > 1e-6))} of {X.shape[1]} features kept  "
              f"train accuracy {s.score(X, y):.3f}")
    assert abs(sols[0].objective - sols[1].objective) <= 1e-6 * abs(sols[0].objective)
    assert all(abs(s.duality_gap) <= certificate_tolerance(1e-6) for s in sols)

    # through the scikit-learn estimator, as any registered formulation
    from sklearn.model_selection import GridSearchCV

    grid = GridSearchCV(sm.SVMClassifier(formulation="squared_hinge_l1", solver=solvers[0]),
                        {"C": [0.05, 0.5]}, cv=3).fit(X, y)
    print("GridSearchCV:", grid.best_params_, round(grid.best_score_, 3))
    return sols + [grid]


if __name__ == "__main__":
    main()

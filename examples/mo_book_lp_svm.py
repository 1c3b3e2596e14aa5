"""The MO-book's LP SVM on the banknote data: the book's own Pyomo model and the library's.

"Hands-On Mathematical Optimization with Python" (Postek, Zocca, Gromicho, Kantor), section
5.4, "Support Vector Machines for binary classification", trains a linear SVM whose weights
are penalised by their 1-norm, as a linear program:

    min  lambda sum_j (w+_j + w-_j) + (1/n) sum_i z_i
    s.t. z_i >= 1 - y_i ((w+ - w-).x_i + b),   z_i >= 0,   w+, w- >= 0

:func:`svm_linear` writes that model as the notebook does (variables ``wp``, ``wn``, ``b``,
``z``, the Expression ``w = wp - wn``, the objective ``lasso``, the rows ``hingeloss``), with
numpy arrays where the notebook has pandas frames, and solves it with HiGHS through Pyomo's
own ``SolverFactory("appsi_highs")``, as the notebook's ``SOLVER_LO``.

The library's ``l1_norm_primal`` (``formulations/l1_norm_primal.md``) is the same LP scaled:
``||w||_1 + C sum_i xi_i`` with ``C = 1 / (n lambda)``, so the book's optimum is ``lambda``
times the library's and ``w``, ``b`` are the same.

The data: the banknote authentication set (UCI; ``svm_models.datasets.banknote()``), the notebook's
split (``train_test_split(test_size=0.2, random_state=0)``) and labels ``1 - 2 class``
(+1 genuine). Three cases: the notebook's (features variance and skewness, lambda = 1), and
all four features at lambda = 0.1 and 0.001 -- at 0.1 the 1-norm drops "entropy" (w = 0).

Run:  python examples/mo_book_lp_svm.py [--solver highs] [--quick]
"""

from __future__ import annotations


import numpy as np
import pyomo.environ as pyo

import svm_models as sm

FEATURES = ["variance", "skewness", "curtosis", "entropy"]
#: (features, lambda): the notebook's case first
CASES = ((("variance", "skewness"), 1.0), (tuple(FEATURES), 0.1), (tuple(FEATURES), 0.001))


def banknotes():
    """(X_train, X_test, y_train, y_test), all four features, the notebook's split; y = +1
    for a genuine note, -1 for a counterfeit."""
    from sklearn.model_selection import train_test_split

    from svm_models.datasets import banknote

    X, y = banknote()
    return train_test_split(X, y, test_size=0.2, random_state=0)


# ---------------------------------------------------------------------------------------
# The MO-book's model, as its notebook writes it (numpy in place of pandas)


def svm_linear(X, y, lambd=1):
    """The notebook's ``svm_linear``: the LP SVM as a Pyomo ConcreteModel (not solved)."""
    m = pyo.ConcreteModel("Linear SVM")

    m.P = pyo.Set(initialize=range(X.shape[1]))      # the features
    m.N = pyo.Set(initialize=range(X.shape[0]))      # the training points

    m.wp = pyo.Var(m.P, domain=pyo.NonNegativeReals)
    m.wn = pyo.Var(m.P, domain=pyo.NonNegativeReals)
    m.b = pyo.Var()
    m.z = pyo.Var(m.N, domain=pyo.NonNegativeReals)

    @m.Expression(m.P)
    def w(m, p):
        return m.wp[p] - m.wn[p]

    @m.Objective(sense=pyo.minimize)
    def lasso(m):
        return sum(m.z[i] for i in m.N) / len(m.N) + lambd * sum(
            m.wp[p] + m.wn[p] for p in m.P
        )

    @m.Constraint(m.N)
    def hingeloss(m, i):
        return m.z[i] >= 1 - y[i] * (sum(m.w[p] * X[i, p] for p in m.P) + m.b)

    return m


def mo_book(X, y, lambd) -> dict:
    """The notebook's model solved as the notebook solves it (HiGHS through Pyomo)."""
    m = svm_linear(X, y, lambd)
    result = pyo.SolverFactory("appsi_highs").solve(m)
    pyo.assert_optimal_termination(result)
    return {"objective": pyo.value(m.lasso), "w": np.array([pyo.value(m.w[p]) for p in m.P]),
            "b": pyo.value(m.b), "model": m}


# ---------------------------------------------------------------------------------------
# The library's formulation


def library(X, y, lambd, solver: str = "highs"):
    """``l1_norm_primal`` at ``C = 1 / (n lambda)``: its Solution (objective: the library's,
    ``lambda`` times smaller than the book's)."""
    m = sm.build("l1_norm_primal", X, y, C=1.0 / (len(y) * lambd))
    return sm.solve(m, solver=solver)


def metrics(y_true, y_pred) -> dict:
    """The notebook's ``validate``: sensitivity, precision, accuracy, MCC (+1 positive)."""
    tp = int(np.sum((y_true > 0) & (y_pred > 0)))
    fn = int(np.sum((y_true > 0) & (y_pred < 0)))
    fp = int(np.sum((y_true < 0) & (y_pred > 0)))
    tn = int(np.sum((y_true < 0) & (y_pred < 0)))
    den = np.sqrt(float((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))
    return {"sensitivity": tp / (tp + fn), "precision": tp / (tp + fp),
            "accuracy": (tp + tn) / (tp + tn + fp + fn), "mcc": (tp * tn - fp * fn) / den}


def _vector(v) -> str:
    return "[" + " ".join(f"{round(float(x), 6) + 0.0:9.6f}" for x in v) + "]"


def main(solver: str = "highs", quick: bool = False, cases=CASES) -> dict:
    """Every case: the book's LP (HiGHS via Pyomo) and the library's (``solver``); print the
    comparison and the test metrics; return ``{"data": ..., "cases": [dict per case]}``."""
    Xtr, Xte, ytr, yte = banknotes()
    if quick:
        cases = cases[:1]
    out = []
    print(f"banknotes: {len(ytr)} training and {len(yte)} test notes (the MO-book's split); "
          f"the book's LP by HiGHS (Pyomo appsi_highs), the library's l1_norm_primal by {solver}\n")
    for feats, lambd in cases:
        cols = [FEATURES.index(f) for f in feats]
        X, Xt = Xtr[:, cols], Xte[:, cols]
        book = mo_book(X, ytr, lambd)
        sol = library(X, ytr, lambd, solver)
        test = metrics(yte, sol.predict(Xt))
        r = {"features": feats, "lambd": lambd, "C": 1.0 / (len(ytr) * lambd), "book": book,
             "solution": sol, "objective": lambd * sol.objective, "test": test}
        out.append(r)
        print(f"features {', '.join(feats)}; lambda = {lambd:g} (C = 1/(n lambda) = {r['C']:.4g})")
        print(f"  objective   book {book['objective']:.10f}   library x lambda "
              f"{r['objective']:.10f}   (relative difference "
              f"{abs(r['objective'] - book['objective']) / abs(book['objective']):.1e})")
        print(f"  w           book {_vector(book['w'])}   library {_vector(sol.w)}")
        print(f"  b           book {book['b']:.6f}   library {sol.b:.6f}   "
              f"(max |difference| in w, b: "
              f"{max(np.max(np.abs(sol.w - book['w'])), abs(sol.b - book['b'])):.1e})")
        zero = [f for f, v in zip(feats, sol.w) if abs(v) <= 1e-9]
        print(f"  features with w = 0: {', '.join(zero) or 'none'};  test: sensitivity "
              f"{test['sensitivity']:.1%}, precision {test['precision']:.1%}, accuracy "
              f"{test['accuracy']:.1%}, MCC {test['mcc']:.3f}\n")
    return {"data": (Xtr, Xte, ytr, yte), "cases": out}


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", default="highs",
                    help="the library's backend (any that takes an LP; default highs)")
    ap.add_argument("--quick", action="store_true", help="the notebook's case only")
    a = ap.parse_args()
    main(a.solver, quick=a.quick)

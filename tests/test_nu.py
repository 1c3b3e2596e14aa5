"""The nu-SVM (svm_models/formulations/nu.py): against scikit-learn's NuSVC (libsvm), primal
against dual on every QP backend, the 1-norm soft margin at C = 1/(l rho), nu's meaning, the
nu that cannot be had, and the faces above the formulations (estimator, cross-validation,
command line) that see it with no line of theirs naming it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import NuSVC

import svm_models as sm
from svm_models.errors import InfeasibleError, ParameterError
from tests.conftest import require


def _data(name: str):
    if name == "breast_cancer":   # (the first 120 points, 6 standardised features)
        X, y = load_breast_cancer(return_X_y=True)
        return StandardScaler().fit_transform(X)[:120, :6], y[:120]
    seed = {"mc0": 0, "mc1": 1}[name]
    return make_classification(60, 5, n_informative=3, random_state=seed)


#: three data sets, one per kernel, on which both classes have free support vectors at the
#: optimum (so that b and rho are unique: see formulations/nu.md)
CASES = [("breast_cancer", "linear", {}, 0.3),
         ("mc0", "rbf", {"gamma": 0.3}, 0.3),
         ("mc1", "poly", {"gamma": 0.3, "coef0": 1.0, "degree": 2}, 0.5)]


def _nusvc(X, y, nu, kernel, kw):
    return NuSVC(nu=nu, kernel=kernel, tol=1e-10, max_iter=10**6, **kw).fit(X, y)


@pytest.mark.parametrize("solver", ["piqp", "clarabel"])
@pytest.mark.parametrize("form", ["nu_dual", "nu_primal"])
@pytest.mark.parametrize("data, kernel, kw, nu", CASES, ids=[c[1] for c in CASES])
def test_same_classifier_as_nusvc(data, kernel, kw, nu, form, solver):
    X, y = _data(data)
    ref = _nusvc(X, y, nu, kernel, kw)
    sol = sm.fit(X, y, form, solver=require(solver), nu=nu, kernel=kernel, **kw)
    assert sol.status is sm.Status.optimal and abs(sol.duality_gap) < 1e-9
    assert np.array_equal(sol.predict(X), ref.predict(X))
    assert set(sol.support) == set(ref.support_)
    # NuSVC's decision function is ours divided by rho
    got, want = sol.decision_function(X) / sol.rho, ref.decision_function(X)
    assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()
    # nu bounds the fraction of margin errors from above, of support vectors from below
    errors = np.mean(sol.xi > 1e-9 * sol.rho)
    assert errors <= nu + 1e-9 <= len(sol.support) / len(y) + 2e-9


@pytest.mark.parametrize("solver", ["highs", "gurobi", "ipopt", "ipm", "scip"])
def test_primal_and_dual_agree_on_each_backend(solver):
    """The same (w, b, rho) from both forms, the primal optimum minus the dual's (strong
    duality), against PIQP's; SCIP gives no duals: the primal's alpha from the KKT
    conditions. Ipopt needs the dual's exact scaling (alpha = beta / l). HiGHS's QP solver
    stops on the primal (its Hessian is singular): ``fit`` solves the dual instead, and says
    so."""
    X, y = _data("mc1")
    X, y = (X[:24], y[:24]) if solver == "scip" else (X, y)
    ref = sm.fit(X, y, "nu_dual", solver="piqp", nu=0.5)
    for form in ("nu_dual", "nu_primal"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # (fit's switch of form, said below)
            sol = sm.fit(X, y, form, solver=require(solver), nu=0.5)
        assert sol.status is sm.Status.optimal, form
        assert sol.formulation == form or "retry_formulation" in sol.extra
        assert abs(sol.rho - ref.rho) <= 1e-6 * ref.rho, form
        assert np.allclose(sol.w, ref.w, atol=1e-6) and abs(sol.b - ref.b) <= 1e-6, form
        sign = 1.0 if sol.formulation == "nu_dual" else -1.0
        assert abs(sign * sol.objective - ref.objective) <= 1e-7 * ref.objective, form


def test_the_c_svm_at_one_over_l_rho_is_the_same_classifier_rescaled():
    X, y = _data("mc0")
    nu = sm.fit(X, y, "nu_dual", solver="piqp", nu=0.4, kernel="rbf", gamma=0.3)
    c = sm.fit(X, y, "soft_l1_dual", solver="piqp", C=nu.C_equivalent, kernel="rbf", gamma=0.3)
    assert abs(nu.C_equivalent - 1.0 / (len(y) * nu.rho)) < 1e-12 * nu.C_equivalent
    assert np.allclose(c.alpha, nu.alpha / nu.rho, atol=1e-6 * c.alpha.max())
    assert abs(c.b - nu.b / nu.rho) < 1e-6
    assert set(c.support) == set(nu.support)


def test_a_nu_above_nu_max_is_refused_with_the_largest_feasible_nu():
    X, y = make_classification(40, 3, n_informative=2, n_redundant=0, weights=[0.75],
                               random_state=0)
    small = min(np.sum(y == 0), np.sum(y == 1))
    top = 2 * small / len(y)
    with pytest.raises(ParameterError, match=f"smaller class has {small} of the 40 points.*"
                                             f"at most .*{top:.6g}"):
        sm.build("nu_dual", X, y, nu=top + 0.05)
    sm.build("nu_dual", X, y, nu=top)   # the largest is feasible
    with pytest.raises(ParameterError, match=r"nu must be a number in \(0, 1\]"):
        sm.build("nu_primal", X, y, nu=0.0)
    # changed on the built model to a nu above nu_max: infeasible, said in the same words
    m = sm.build("nu_dual", X, y, nu=0.2)
    m.nu = min(top + 0.1, 1.0)
    with pytest.raises(InfeasibleError, match="nu_max"):
        sm.solve(m, solver="clarabel")


def test_a_nu_below_the_minimum_is_explained_not_answered():
    """Overlapping classes at a small nu: the reduced convex hulls meet, w = 0 and rho = 0
    at the optimum (the dual's objective 0): no classifier -- said, not returned."""
    X, y = make_classification(80, 4, random_state=0)
    m = sm.build("nu_dual", X, y, nu=0.3)
    with pytest.raises(ParameterError, match="nu=0.3 is too small.*w = 0 and rho = 0"):
        sm.solve(m, solver="piqp")
    # the same model at a larger nu (a mutable Param) has its margin back
    m.nu = 0.7
    sol = sm.solve(m, solver="piqp")
    assert sol.rho > 0 and sol.objective > 0


def test_nu_is_mutable_and_a_re_solve_equals_a_fresh_build():
    X, y = _data("mc0")
    m = sm.build("nu_primal", X, y, nu=0.3, kernel="rbf", gamma=0.3)
    sm.solve(m, solver="clarabel")
    m.nu = 0.6
    again = sm.solve(m, solver="clarabel")
    fresh = sm.fit(X, y, "nu_primal", solver="clarabel", nu=0.6, kernel="rbf", gamma=0.3)
    assert again.path == "fast"
    assert abs(again.rho - fresh.rho) < 1e-7 and abs(again.objective - fresh.objective) < 1e-9


def test_the_estimator_takes_nu_and_learns_rho():
    X, y = _data("mc0")
    clf = sm.SVMClassifier(formulation="nu_dual", solver="piqp", nu=0.4, kernel="rbf",
                           gamma=0.3).fit(X, y)
    ref = _nusvc(X, y, 0.4, "rbf", {"gamma": 0.3})
    assert np.array_equal(clf.predict(X), ref.predict(X))
    assert np.array_equal(np.sort(clf.support_), np.sort(ref.support_))
    assert clf.rho_ == clf.solution_.rho > 0
    assert "nu" in clf.get_params() and sm.SVMClassifier().nu is None
    with pytest.raises(ParameterError, match="takes no C"):
        sm.SVMClassifier(formulation="nu_dual", C=1.0).fit(X, y)


def test_cross_validation_searches_nu_as_grid_search_over_nusvc():
    """A grid over nu, no C: the same mean scores as GridSearchCV over NuSVC on the same
    folds (the same classifiers on every fold)."""
    X, y = _data("mc0")
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    cv = sm.SVMClassifierCV(formulation="nu_dual", solver="piqp", cv=folds, nu=[0.4, 0.6],
                            kernel="rbf", gamma=0.3).fit(X, y)
    ref = GridSearchCV(NuSVC(kernel="rbf", gamma=0.3, tol=1e-10), {"nu": [0.4, 0.6]},
                       cv=folds).fit(X, y)
    assert [p["nu"] for p in cv.cv_results_["params"]] == [0.4, 0.6]
    assert "C" not in cv.cv_results_["params"][0]
    assert np.allclose(cv.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"])
    assert cv.best_params_["nu"] == ref.best_params_["nu"]


def test_the_command_line_has_a_nu_flag(tmp_path, capsys):
    from svm_models.cli import main

    X, y = _data("mc0")
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    out = tmp_path / "m.json"
    assert main(["fit", str(path), "--formulation", "nu_dual", "--solver", "piqp", "--nu",
                 "0.4", "--kernel", "rbf", "--gamma", "0.3", "-o", str(out)]) == 0
    got = sm.Solution.from_json(str(out))
    want = sm.fit(X, y, "nu_dual", solver="piqp", nu=0.4, kernel="rbf", gamma=0.3)
    assert abs(got.rho - want.rho) < 1e-12 and got.details == want.details
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["fit", str(path), "--formulation", "nu_dual", "--nu", "1.5"]) == 2
    assert "nu must be a number in (0, 1]" in capsys.readouterr().err


@pytest.mark.parametrize("alpha, g, rho, b", [
    # class +1 free at 0.5: r+ = mean(2, 4) = 3; class -1 none free: the midpoint of
    # [max g at the top, min g at zero] = [3, 7], r- = 5
    ([0.5, 0.5, 0.0, 1.0, 1.0, 0.0], [2.0, 4.0, 9.0, 1.0, 3.0, 7.0], 4.0, 1.0),
    # class -1 all at the top: r- = max g = 3 (no upper end); class +1 free: r+ = 2.5
    ([0.0, 0.0, 0.5, 1.0, 1.0, 1.0], [5.0, 6.0, 2.5, 1.0, 3.0, 2.0], 2.75, 0.25),
    # class +1 all at zero: r+ = min g = 4 (no lower end); class -1 free: r- = 2
    ([0.0, 0.0, 0.0, 0.5, 1.0, 1.0], [5.0, 6.0, 4.0, 2.0, 1.0, 1.5], 3.0, -1.0),
    # ties at the threshold (0.1) and at upper - threshold (0.9): at zero and at the top,
    # never free: class +1 r+ = (2 + 6) / 2 = 4, class -1 free at 0.5: r- = 3
    ([0.1, 0.9, 0.9, 0.5, 0.1, 0.9], [6.0, 1.0, 2.0, 3.0, 8.0, 0.0], 3.5, -0.5),
])
def test_rho_and_b_from_the_levels_by_hand(alpha, g, rho, b):
    """The nu-SVM's levels worked by hand (postprocess.levels of its margin): per class the
    mean of g = y f over its free points, else the midpoint of the interval its bounded
    points allow (one end missing: the other); rho = (r+ + r-) / 2, b = (r- - r+) / 2."""
    from svm_models.formulations.nu import MARGIN
    from svm_models.postprocess import levels

    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    got = levels(MARGIN, np.array(alpha), y, y * np.array(g), 1.0, 0.1)
    assert got == pytest.approx((b, rho), abs=1e-15)


def test_the_certificate_is_of_exactly_the_alpha_given():
    """certificate() against the objectives computed here from the definitions: at the
    optimum 0; at a feasible non-optimal alpha the relative gap (primal - dual) /
    max(|primal|, |dual|) with the primal's best slacks; the balance |y'a| / e'a and the
    shortfall (nu - e'a) / nu of an alpha that breaks them; worst the largest of the three."""
    from sklearn.metrics.pairwise import rbf_kernel

    from svm_models.formulations.nu import MARGIN, certificate
    from svm_models.postprocess import levels

    X, y = _data("mc0")
    m = sm.build("nu_dual", X, y, nu=0.4, kernel="rbf", gamma=0.3)
    sol = sm.solve(m, solver="piqp")
    svm, yy, l = m._svm, m._svm.data.y, len(y)
    # (0 to the round-off the certificate forgives each slack: CERT_ROUNDOFF)
    assert certificate(svm, sol.alpha, 0.4)["worst"] < 1e-11
    K = rbf_kernel(X, X, gamma=0.3)

    def by_hand(a, nu):
        f0 = K @ (yy * a)
        b, rho = levels(MARGIN, a, yy, f0, 1.0 / l, 1e-9 * a.max())
        ww = float((yy * a) @ f0)
        primal = 0.5 * ww - nu * rho + np.maximum(0.0, rho - yy * (f0 + b)).mean()
        return (primal + 0.5 * ww) / max(abs(primal), 0.5 * ww)

    # feasible, not optimal: the same total on two other points of each class
    a = sol.alpha.copy()
    for c in (1.0, -1.0):
        idx = np.flatnonzero((yy == c) & (a < 0.5 / l))[:2]
        moved = 0.2 * a[(yy == c) & (a > 0)].sum()
        a[(yy == c) & (a > 0)] *= 0.8
        a[idx] += moved / 2
    cert = certificate(svm, a, 0.4)
    assert cert["gap"] == pytest.approx(by_hand(a, 0.4), rel=1e-9) and cert["gap"] > 1e-3
    assert cert["worst"] == pytest.approx(abs(cert["gap"]))
    # unbalanced, and short of nu
    b_ = sol.alpha.copy()
    b_[np.flatnonzero(yy > 0)[0]] += 0.5 / l
    cert = certificate(svm, b_, 0.4)
    assert cert["balance"] == pytest.approx(0.5 / l / b_.sum(), rel=1e-12)
    assert cert["worst"] >= cert["balance"] > 0
    c_ = 0.5 * sol.alpha
    cert = certificate(svm, c_, 0.4)
    assert cert["total"] == pytest.approx((0.4 - c_.sum()) / 0.4, rel=1e-12)
    assert cert["worst"] >= cert["total"] and cert["worst"] >= cert["balance"]

"""The poly kernel's exact feature map (issue 25: every valid problem answered).

A poly kernel of large dynamic range, its Gram matrix evaluated entry by entry, is indefinite
at the round-off of its largest entries: every backend refused the dense form of such a 1-norm
dual (``benchmarks/agreement.py``'s seed 15: degree 2, entries 2e7), or stopped far from the
optimum (libsvm: 113.47 against 144742.86). Its factor form on the kernel's monomials,
``K = Phi Phi'`` positive semidefinite by construction, is answered -- checked against an
independent solve of the linear SVM on monomials written out by hand.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from conftest import agreement, require

import svm_models as sm
from svm_models.kernels import Kernel, exact_factor_dim, make_kernel


def _monomials_by_hand(X, gamma, coef0, degree):
    """(gamma x.z + coef0)^p expanded by the multinomial theorem, column by column."""
    U = np.sqrt(gamma) * X
    if coef0 > 0:
        U = np.hstack([U, np.full((len(X), 1), np.sqrt(coef0))])
    cols = []
    for a in itertools.product(range(U.shape[1]), repeat=degree):   # ordered: with repeats
        cols.append(np.prod(U[:, list(a)], axis=1))
    return np.column_stack(cols)    # Phi Phi' = (u.v)^p; d^p columns, not the reduced r


@pytest.mark.parametrize("degree,coef0,gamma", [(2, 0.0, 0.1), (3, 1.0, 0.7), (1, 2.5, 1.0),
                                                (4, 0.0, 2.0)])
def test_features_reproduce_the_kernel(degree, coef0, gamma):
    rng = np.random.default_rng(degree)
    X, Z = rng.normal(size=(9, 3)), rng.normal(size=(5, 3))
    k = Kernel("poly", gamma=gamma, degree=degree, coef0=coef0)
    F = k.features(X)
    assert F.shape[1] == k.feature_dim(3) == math.comb(3 + (coef0 > 0) + degree - 1, degree)
    K = k.gram(X, Z)
    assert np.allclose(F @ k.features(Z).T, K, rtol=1e-12, atol=1e-12 * np.abs(K).max())
    H = _monomials_by_hand(X, gamma, coef0, degree)
    assert np.allclose(F @ F.T, H @ H.T, rtol=1e-12, atol=1e-12 * np.abs(K).max())


def test_which_kernels_have_an_exact_factor():
    assert Kernel("linear").feature_dim(4) == 4
    assert Kernel("rbf", gamma=1.0).feature_dim(4) is None
    assert Kernel("poly", gamma=1.0, degree=2, coef0=-1.0).feature_dim(4) is None   # not PSD
    assert Kernel("poly", gamma=1.0, degree=2, coef0=0.0).feature_dim(4) == 10
    # taken only when no larger than the pivoted Cholesky factor's at most l columns
    k3 = Kernel("poly", gamma=1.0, degree=3, coef0=1.0)
    assert k3.feature_dim(6) == 84
    assert exact_factor_dim(k3, 84, 6) == 84 and exact_factor_dim(k3, 83, 6) is None
    assert exact_factor_dim(Kernel("linear"), 3, 10) == 10
    # and at most POLY_FEATURES_MAX (256) monomials: 1,540 (degree 3, 20 features) are
    # slower than the matrix itself
    assert exact_factor_dim(k3, 5000, 20) is None
    assert exact_factor_dim(Kernel("poly", gamma=1.0, degree=2, coef0=1.0), 5000, 20) == 231
    with pytest.raises(sm.ParameterError):
        Kernel("rbf", gamma=1.0).features(np.ones((2, 2)))


def test_auto_builds_the_factor_form_on_the_monomials():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    m = sm.build("soft_l1_dual", X, y, C=1.0, kernel="poly", degree=2, coef0=1.0, gamma=1.0)
    assert m._svm.facts.quad_form == "factor"
    assert len(m.z) == 6          # binom(2 + 1 + 1, 2)
    assert m._svm.K is None       # no l x l matrix
    dense = sm.fit(X, y, formulation="soft_l1_dual", C=1.0, kernel="poly", degree=2,
                   coef0=1.0, gamma=1.0, quad_form="dense", solver="piqp")
    fact = sm.solve(m, solver="piqp")
    assert fact.objective == pytest.approx(dense.objective, rel=1e-7)
    assert np.array_equal(fact.predict(X), dense.predict(X))



@pytest.mark.xdist_group("agreement-seed-15")   # (one worker: libsvm's reference computed once)
@pytest.mark.parametrize("solver", ["piqp", "clarabel", "gurobi"])
def test_a_poly_kernel_of_large_dynamic_range_is_answered(solver):
    """Seed 15 (119 points of scale 59, 7 duplicates, poly degree 2, gamma 0.1, C = 1.5e3):
    the optimum of the linear SVM on monomials written out by hand (PIQP, certified), and the
    agreement script's brute-force certificate at the classifier returned."""
    require(solver)
    ag = agreement()
    p = ag.valid_problem(15)
    X, y, params = p["X"], p["y"], p["params"]
    assert params["kernel"] == "poly" and params["degree"] == 2
    out = ag.run_one(15, solver, 60.0)
    assert out["outcome"] == "agreed", out
    kern = make_kernel("poly", X, gamma=params["gamma"], degree=2, coef0=params["coef0"])
    H = _monomials_by_hand(np.asarray(X, dtype=float), kern.gamma, kern.coef0, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sm.fit(H, y, formulation="soft_l1_dual", kernel="linear", C=params["C"],
                     solver="piqp", time_limit=60)
    assert out["dual"] == pytest.approx(ref.objective, rel=1e-6)
    # libsvm's own answer on the same kernel is far below: the reference cannot be libsvm
    assert out["ref_dual"] < 0.5 * ref.objective


@pytest.mark.parametrize("solver", ["piqp", "clarabel"])
def test_the_kernel_primal_is_built_on_the_monomials_too(solver):
    """The kernel primal of the same problem (seed 15) was refused by every backend on its
    pivoted Cholesky factor of the entry-by-entry Gram matrix; on the monomials (``v`` has
    one coordinate per monomial, no l x l matrix) it is answered: the optimum of the linear
    SVM on monomials written out by hand, the same classifier as the dual's."""
    require(solver)
    p = agreement().valid_problem(15)
    X, y, params = p["X"], p["y"], p["params"]
    m = sm.build("soft_l1_primal", X, y, **params)
    assert len(m.v) == 15 and m._svm.K is None    # binom(5 + 2 - 1, 2) monomials
    kern = m._svm.kernel
    H = _monomials_by_hand(np.asarray(X, dtype=float), kern.gamma, kern.coef0, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = sm.solve(m, solver=solver, time_limit=60)
        ref = sm.fit(H, y, formulation="soft_l1_dual", kernel="linear", C=params["C"],
                     solver="piqp", time_limit=60)
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(ref.objective, rel=2e-6)
    assert np.mean(sol.predict(X) == ref.predict(H)) >= 0.98


@pytest.mark.parametrize("seed,solver", [(58, "clarabel"), (56, "piqp")])
def test_a_soft_margin_called_unbounded_is_numerical_trouble(seed, solver):
    """Poly kernels of entries 1e19 and 1e66 (seeds 58, 56: C s of 1e23 and more, the
    quadratic term below the round-off of the objective): Clarabel and PIQP end "dual
    infeasible". A soft margin always has an optimum, so the status is numerical_error,
    never "unbounded"; the message says why."""
    require(solver)
    p = agreement().valid_problem(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(sm.SolveFailedError, match="never unbounded") as exc:
            sm.fit(p["X"], p["y"], solver=solver, time_limit=5, **p["params"])
    assert exc.value.status == "numerical_error"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = sm.solve(sm.build("soft_l1_dual", p["X"], p["y"], **p["params"]), solver=solver,
                       time_limit=5, raise_on_failure=False)
    assert sol.status == "numerical_error"


# ---------------------------------------------------------------------------------------
# Two wrong answers marked optimal that seeds 60-119 of the agreement script found


def _libsvm_free_certificate(seed, sol, params, X, y):
    """The agreement script's brute-force certificate at the classifier returned (through
    its own exact features)."""
    ag = agreement()
    from svm_models.kernels import make_kernel as mk

    kern = mk(params["kernel"], X, gamma=params.get("gamma", "scale"),
              degree=params.get("degree", 3), coef0=params.get("coef0", 0.0))
    Phi = ag.explicit_features(X, kern)
    classes = np.unique(y)
    yy = np.where(y == classes[1], 1.0, -1.0)
    return ag.certificate(sol, Phi @ Phi.T, yy, params["C"], Phi)


def test_the_dense_form_certifies_with_the_linear_kernel_s_own_factor():
    """Seed 81: 10 points of scale 3.2e3 offset by -1.7e3 (a linear Gram matrix of entries
    1e7). Gurobi's answer in the dense form was certified with a dual objective 0.023 above
    sum(alpha) -- alpha'K alpha evaluated through K came out -0.047 where it is 6e-7 -- a
    classifier whose true gap is 3.2e-6 returned as optimal. The certificate now reads
    alpha'K alpha through X for the linear kernel, in either form: the same numbers."""
    p = agreement().valid_problem(81)
    X, y, params = p["X"], p["y"], p["params"]
    assert params["kernel"] == "linear"
    # a dual point from libsvm (its own loops, no BLAS: the same on every machine)
    from sklearn.svm import SVC

    from svm_models.model.forms import SOFT_L1
    from svm_models.postprocess import margin_certificate

    # (any feasible alpha will do, and SMO keeps its iterates feasible: 10^5 of its iterations,
    # where converging on this linear kernel takes 40 s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (its ConvergenceWarning)
        svc = SVC(kernel="linear", C=params["C"], tol=1e-3, max_iter=10**5).fit(X, y)
    alpha = np.zeros(len(y))
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    certs = []
    for form in ("dense", "factor"):
        svm = sm.build("soft_l1_dual", X, y, quad_form=form, **params)._svm
        certs.append(margin_certificate(svm, SOFT_L1, alpha, float(svc.intercept_[0]),
                                         params["C"], None))
    assert certs[0]["dual"] == certs[1]["dual"] <= float(np.sum(alpha))
    assert certs[0]["gap"] == pytest.approx(certs[1]["gap"], rel=1e-9)
    require("gurobi")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            sol = sm.fit(X, y, solver="gurobi", quad_form="dense", **params)
        except sm.SolveFailedError:
            return
    cert = _libsvm_free_certificate(81, sol, params, X, y)
    assert abs(cert["gap"]) <= 1e-6, cert


def test_a_dense_poly_kernel_of_entries_1e17_is_not_certified_by_round_off():
    """Seed 109: poly degree 3, gamma 10, features of scale 29 offset by 31 (kernel entries
    1e17), C = 1e5. ipm's answer on the dense form was certified because shortfalls up to
    0.16 of the margin were taken as round-off; its true primal objective was 97.9 against a
    dual of 0.001. Round-off now forgives at most 1e-6 of the margin (CERT_ROUNDOFF_MAX), and
    ``auto`` builds the factor form on the monomials: whatever is returned is optimal by the
    script's own certificate, or a typed failure."""
    p = agreement().valid_problem(109)
    X, y, params = p["X"], p["y"], p["params"]
    assert params["kernel"] == "poly" and params["degree"] == 3
    for form in ("dense", "auto"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                sol = sm.fit(X, y, solver="ipm", quad_form=form, time_limit=30, **params)
            except sm.SolveFailedError:
                continue
        cert = _libsvm_free_certificate(109, sol, params, X, y)
        assert abs(cert["gap"]) <= 1e-6, (form, cert)

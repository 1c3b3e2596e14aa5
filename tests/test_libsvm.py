"""libsvm (scikit-learn's SVC) as a structured backend, and ``solver="auto"`` (issue 26).

The references are independent: the same model solved by PIQP, Clarabel and Ipopt (interior
point methods, not SMO), and the certificate recomputed at the classifier returned.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyomo.environ as pyo
import pytest
from sklearn.datasets import make_blobs, make_moons

import svm_models as sm
from svm_models.solvers import AUTO_ORDER, auto_choice

REL = 1e-8

MOONS = make_moons(80, noise=0.25, random_state=3)
BLOBS = make_blobs(60, centers=2, cluster_std=1.0, random_state=4)

KERNELS = [
    {"kernel": "linear"},
    {"kernel": "rbf", "gamma": 0.7},
    {"kernel": "poly", "gamma": 0.5, "degree": 3, "coef0": 1.0},
    {"kernel": "precomputed"},
]


def _data(kw, X):
    if kw["kernel"] == "precomputed":
        return np.exp(-0.3 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    return X


def _same(a, b, what):
    scale = max(1.0, abs(b.objective))
    assert abs(a.objective - b.objective) <= REL * scale, (what, a.objective, b.objective)
    amax = max(1.0, float(np.max(b.alpha)))
    np.testing.assert_allclose(a.alpha, b.alpha, atol=1e-6 * amax, err_msg=what)
    assert abs(a.b - b.b) <= 1e-6 * max(1.0, abs(b.b)), (what, a.b, b.b)


@pytest.mark.parametrize("kw", KERNELS, ids=lambda k: k["kernel"])
@pytest.mark.parametrize("formulation,data,extra", [
    ("soft_l1_dual", MOONS, {"C": 3.0}),
    ("soft_l2_dual", MOONS, {"C": 0.5}),
    ("hard_dual", BLOBS, {}),
])
def test_libsvm_equals_the_interior_point_backends(formulation, data, extra, kw):
    X, y = data
    Xk = _data(kw, X)
    ref = {s: sm.fit(Xk, y, formulation, solver=s, **kw, **extra)
           for s in ("piqp", "clarabel", "ipopt")}
    sol = sm.fit(Xk, y, formulation, solver="libsvm", **kw, **extra)
    assert sol.solver == "libsvm" and sol.interface.startswith("libsvm")
    assert sol.extra["certificate"]["certified"]
    for name, r in ref.items():
        _same(sol, r, f"{formulation} {kw['kernel']} vs {name}")
    # the classifier: the same predictions as the reference's
    np.testing.assert_array_equal(sol.predict(Xk), ref["piqp"].predict(Xk))


def test_libsvm_evaluates_the_kernel_itself_where_it_can():
    X, y = MOONS
    assert sm.fit(X, y, solver="libsvm", kernel="rbf", gamma=0.5).interface == \
        "libsvm-rbf (stopped at tol=0.001, polished)"
    assert sm.fit(X, y, solver="libsvm").interface == "libsvm-linear"
    # the 2-norm soft margin's K + I/C: the matrix
    assert sm.fit(X, y, "soft_l2_dual", solver="libsvm").interface == "libsvm-precomputed"
    # a poly kernel: its monomials under the linear kernel (factor form, 10 columns), or
    # the matrix (dense form); the same optimum as PIQP's either way
    kw = {"kernel": "poly", "degree": 3, "coef0": 1.0, "gamma": 1.0, "C": 10.0}
    ref = sm.fit(X, y, solver="piqp", **kw)
    for form, interface in (("auto", "libsvm-linear, on the poly kernel's monomials"),
                            ("dense", "libsvm-precomputed")):
        sol = sm.fit(X, y, solver="libsvm", quad_form=form, **kw)
        assert sol.interface == interface
        assert sol.objective == pytest.approx(ref.objective, rel=1e-7)
        np.testing.assert_array_equal(sol.predict(X), ref.predict(X))


@pytest.mark.parametrize("scale,kw", [
    (1e-4, {"kernel": "linear", "C": 1e8}),
    (1e-4, {"kernel": "poly", "gamma": 1.0, "degree": 2, "coef0": 0.0, "C": 1e12}),
    (1e4, {"kernel": "linear", "C": 1e-7}),
], ids=["linear-1e-4", "poly-1e-4", "linear-1e4"])
def test_libsvm_on_a_badly_scaled_kernel_is_the_scaled_problem(scale, kw):
    """libsvm's safeguards are absolute (a curvature below 1e-12 is taken as 1e-12): the
    kernel of points of size 1e-4 (poly entries 1e-16) is handed over scaled, exactly."""
    X, y = MOONS
    Xs = X * scale
    ref = sm.fit(Xs, y, solver="clarabel", **kw)
    sol = sm.fit(Xs, y, solver="libsvm", **kw)
    assert sol.extra["certificate"]["certified"]
    _same(sol, ref, f"scale {scale} {kw['kernel']}")


@pytest.mark.parametrize("formulation", ["soft_l1_dual", "soft_l2_dual"])
def test_a_changed_C_is_read_when_solved_and_a_path_follows_it(formulation):
    """Along a path the kernel matrix is formed once and handed over at every C (the 2-norm's
    K + I/C with each C's own ridge)."""
    X, y = MOONS
    Cs = [0.01, 0.3, 10.0, 300.0]
    path = sm.fit_path(X, y, Cs, formulation, solver="libsvm", kernel="rbf", gamma=0.7)
    for C, sol in zip(Cs, path):
        assert sol.solver == "libsvm" and sol.interface == "libsvm-precomputed"
        _same(sol, sm.fit(X, y, formulation, solver="piqp", kernel="rbf", gamma=0.7, C=C),
              f"C={C}")


def _refused(model, *needles):
    with pytest.raises(sm.CapabilityError) as exc:
        sm.solve(model, "libsvm")
    text = str(exc.value)
    assert "libsvm" in text and "ipopt" in text and "clarabel" in text, text
    for n in needles:
        assert n in text, text


def test_libsvm_refuses_what_it_does_not_solve_naming_capable_backends():
    X, y = MOONS
    _refused(sm.build("soft_l1_primal", X, y), "classic SVM duals")
    _refused(sm.build("c_tuning_general", X[:20], y[:20]), "classic SVM duals")
    m = sm.build("soft_l1_dual", X, y)
    m.extra = pyo.Constraint(expr=m.alpha[0] <= 0.5)
    _refused(m, "extra")
    m = sm.build("soft_l1_dual", X, y)
    m.alpha[3].setub(0.25)
    _refused(m, "bounds")
    m = sm.build("soft_l1_dual", X, y)
    with pytest.raises(sm.CapabilityError):
        sm.solve(m, "libsvm", path="general")
    # a low-rank kernel: the model holds only L L'
    _refused(sm.build("soft_l1_dual", X, y, kernel="rbf", kernel_rank=10))
    # the same edited model solved by a backend that takes it: not libsvm's answer
    m = sm.build("soft_l1_dual", X, y)
    m.extra = pyo.Constraint(expr=m.alpha[0] <= 0.5)
    assert sm.solve(m, "auto").solver != "libsvm"


def test_a_hard_margin_on_inseparable_data_is_refused_before_libsvm_runs():
    X, y = MOONS
    with pytest.raises(sm.NotSeparableError):
        sm.fit(X, y, "hard_dual", solver="libsvm", time_limit=30)


def test_limits_reach_libsvm():
    X, y = make_moons(400, noise=0.3, random_state=0)
    sol = sm.fit(X, y, solver="libsvm", kernel="rbf", C=100.0, iter_limit=3,
                 raise_on_failure=False)
    assert sol.status is sm.Status.iteration_limit
    with pytest.raises(sm.SolveFailedError):
        sm.fit(X, y, solver="libsvm", kernel="rbf", C=100.0, iter_limit=3)


def test_auto_takes_libsvm_for_the_classic_duals_and_says_why():
    X, y = MOONS
    sol = sm.fit(X, y, kernel="rbf", gamma=0.7, C=2.0)
    choice = sol.extra["solver_choice"]
    assert sol.solver == choice["used"] == "libsvm" and choice["asked"] == "auto"
    _same(sol, sm.fit(X, y, solver="piqp", kernel="rbf", gamma=0.7, C=2.0), "auto")
    prim = sm.fit(X, y, "soft_l1_primal")
    assert prim.solver == auto_choice("QP")[0][0] != "libsvm"
    assert prim.extra["solver_choice"]["used"] == prim.solver
    assert [n for n, _ in auto_choice("QP")][0] in AUTO_ORDER["QP"]


def test_auto_falls_back_when_libsvm_stalls():
    """At C = 1e6 on overlapping moons the largest alpha is ~1e6 and SMO does not settle in its
    iterations: auto answers with the next backend, certified, and says so."""
    X, y = make_moons(100, noise=0.2, random_state=0)
    sol = sm.fit(X, y, kernel="rbf", gamma=0.5, C=1e6, time_limit=120)
    ref = sm.fit(X, y, solver="clarabel", kernel="rbf", gamma=0.5, C=1e6)
    assert abs(sol.objective - ref.objective) <= 1e-7 * abs(ref.objective)
    choice = sol.extra["solver_choice"]
    if sol.solver != "libsvm":
        assert "libsvm ended" in choice["why"]


def test_the_estimator_and_cv_default_to_auto():
    X, y = MOONS
    clf = sm.SVMClassifier(kernel="rbf", gamma=0.7, C=2.0).fit(X, y)
    assert clf.solver == "auto" and clf.solution_.solver == "libsvm"
    ref = sm.SVMClassifier(solver="piqp", kernel="rbf", gamma=0.7, C=2.0).fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(X), atol=1e-6)
    cv = sm.SVMClassifierCV(Cs=[0.1, 1.0, 10.0], cv=3, kernel="rbf", gamma=0.7).fit(X, y)
    cvp = sm.SVMClassifierCV(solver="piqp", Cs=[0.1, 1.0, 10.0], cv=3, kernel="rbf",
                             gamma=0.7).fit(X, y)
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"],
                               cvp.cv_results_["mean_test_score"])
    assert cv.best_params_ == cvp.best_params_


def test_the_hard_margin_at_C_inf_on_libsvm():
    X, y = BLOBS
    sol = sm.fit(X, y, solver="libsvm", C=math.inf)
    _same(sol, sm.fit(X, y, "hard_dual", solver="piqp"), "C=inf")


@pytest.mark.parametrize("kernel", ["linear", "precomputed"])
def test_libsvm_on_points_far_from_the_origin(kernel):
    """libsvm caches kernel values in single precision: a kernel of points offset by 100
    (entries 2e4) lost the differences that decide the optimum (1e-4 off, certificate refused).
    Handed over centred in feature space, the same dual on y'a = 0, it is right."""
    rng = np.random.RandomState(42)
    X = rng.normal(loc=100, size=(100, 2))
    y = rng.randint(0, 2, 100)
    data = X @ X.T if kernel == "precomputed" else X
    sol = sm.fit(data, y, solver="libsvm", kernel=kernel)
    _same(sol, sm.fit(data, y, solver="clarabel", kernel=kernel), f"offset {kernel}")


def test_class_weights_far_apart_on_every_backend():
    """Class weights 1000 and 1e-4 (scikit-learn's check_class_weight_classifiers): boxes of
    1e-4 below the support threshold of alphas of scale 1e-3 were cut to 0 and to the bound at
    once; the threshold of each point is now the same fraction of its own box."""
    from sklearn.model_selection import train_test_split

    X, y = make_blobs(centers=2, random_state=0, cluster_std=20)
    Xtr, _, ytr, _ = train_test_split(X, y, test_size=0.5, random_state=0)
    w = np.where(ytr == 0, 1000.0, 1e-4)
    ref = sm.fit(Xtr, ytr, solver="clarabel", sample_weight=w)
    for solver in ("libsvm", "piqp", "ipopt", "highs"):
        sol = sm.fit(Xtr, ytr, solver=solver, sample_weight=w)
        assert sol.extra["certificate"]["certified"]
        assert abs(sol.objective - ref.objective) <= 1e-8 * abs(ref.objective)
        assert abs(sol.b - ref.b) <= 1e-8


def test_auto_raises_what_it_does_not_answer():
    """auto asks libsvm without raising (to fall back); a limit it does not fall back from
    (the time limit) was returned as a Solution with status time_limit although the caller
    asked to raise. Now raised as the caller asked, returned only with raise_on_failure=False."""
    X, y = make_moons(300, noise=0.3, random_state=0)
    with pytest.raises(sm.SolveFailedError) as exc:
        sm.fit(X, y, kernel="rbf", C=10.0, time_limit=1e-6)
    assert exc.value.status is sm.Status.time_limit
    sol = sm.fit(X, y, kernel="rbf", C=10.0, time_limit=1e-6, raise_on_failure=False)
    assert sol.status is sm.Status.time_limit and sol.extra["solver_choice"]["used"] == "libsvm"


def test_the_lazy_kernel_matrix_is_the_signed_gram_matrix(monkeypatch):
    """LazySignedGram (the dense form's matrix, evaluated where read) against G = D_y K D_y
    formed whole: products from columns added over several calls and chunks, column blocks,
    blocks, the diagonal."""
    from svm_models.kernels import make_kernel
    from svm_models.model.built import LazySignedGram

    monkeypatch.setattr(LazySignedGram, "COLUMN_BLOCK", 3)   # several chunks per call
    rng = np.random.default_rng(4)
    X = rng.normal(size=(23, 4))
    y = np.where(rng.random(23) < 0.5, -1.0, 1.0)
    kern = make_kernel("rbf", gamma=0.4, X=X)
    G = kern.gram(X) * np.outer(y, y)
    lazy = LazySignedGram(kern, X, y)
    for cols in ([0, 5, 6, 7, 8], [5, 9, 22, 1], list(range(0, 23, 2))):
        v = np.zeros(23)
        v[cols] = rng.normal(size=len(cols))
        np.testing.assert_allclose(lazy @ v, G @ v, atol=1e-13)
        V = np.zeros((23, 2))
        V[cols] = rng.normal(size=(len(cols), 2))
        np.testing.assert_allclose(lazy @ V, G @ V, atol=1e-13)
        np.testing.assert_allclose(lazy._columns(np.array(cols[::-1])), G[:, cols[::-1]],
                                   atol=1e-15)
    r, c = np.array([3, 1, 20]), np.array([2, 2, 7, 11])
    np.testing.assert_allclose(lazy[np.ix_(r, c)], G[np.ix_(r, c)], atol=1e-15)
    d = np.arange(23)
    np.testing.assert_allclose(lazy[d, d], np.diag(G), atol=1e-15)
    assert not lazy.materialised
    np.testing.assert_allclose(np.asarray(lazy), G, atol=1e-15)
    np.testing.assert_allclose(lazy @ v, G @ v, atol=1e-13)


def _random_problem_18():
    """``benchmarks/random_problems.py``'s seed 18: 108 points, a linear kernel on features of
    scales 1e-4 to 1e4, C = 21.3 (libsvm's default 1e6 iterations did not converge)."""
    rng = np.random.default_rng(18)
    l, d = int(rng.integers(4, 121)), int(rng.integers(1, 9))
    X = rng.normal(size=(l, d))
    score = X @ rng.normal(size=d) + 0.3 * rng.normal(size=l)
    X = X * 10.0 ** rng.uniform(-4, 4, size=d)
    rng.random(), rng.random()   # (no duplicates, no extra feature)
    y = np.where(score > np.median(score), "spam", "ham")
    return X, y, float(10.0 ** rng.uniform(-3, 3))


def test_a_slow_smo_gets_more_iterations_within_the_time_left():
    X, y, C = _random_problem_18()
    assert (len(y), round(C, 1)) == (108, 21.3)
    # (a limit of its own: whether the longer fit fits in the time left is a matter of the
    # machine's speed, and the default 7.5 s on a busy machine may not hold it)
    sol = sm.fit(X, y, solver="libsvm", kernel="linear", C=C, time_limit=60)
    ref = sm.fit(X, y, solver="clarabel", kernel="linear", C=C)
    assert sol.classifier_certificate["certified"]
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)


def test_pairs_in_one_call_only_for_the_kernels_and_boxes_libsvm_takes_as_they_are():
    """solve_pairs answers the rbf and linear kernels with every box positive; a poly kernel
    (its matrix would have to be centred or factored first) or a point of box 0 (libsvm
    would drop it and number the others) is refused with None: the pairs are then fitted
    alone. Where it answers, a pair's alpha solves that pair (its balance y'a = 0, its box)."""
    from svm_models.kernels import make_kernel
    from svm_models.solvers.base import SolverOptions
    from svm_models.solvers.libsvm import solve_pairs

    X, y = make_blobs(90, 3, centers=3, random_state=1)
    box = np.full(len(y), 0.5)
    opts = SolverOptions.from_kwargs()
    for name in ("rbf", "linear"):
        res, alphas = solve_pairs(make_kernel(name, gamma=0.3), X, y, box, opts)
        assert res.status is sm.Status.optimal
        for i, j in ((0, 1), (0, 2), (1, 2)):
            pts = np.flatnonzero((y == i) | (y == j))
            a, t = alphas(i, j), np.where(y[pts] == j, 1.0, -1.0)
            assert np.all((a >= 0) & (a <= 0.5)) and abs(t @ a) < 1e-8 and a.max() > 0
    assert solve_pairs(make_kernel("poly", gamma=0.3, degree=2), X, y, box, opts) is None
    # the user's limits: an iteration limit reached, a time limit passed (1,500 points take
    # more than the least limit handed over, 1 ms) -- no alphas
    Xb, yb = make_blobs(1500, 3, centers=3, cluster_std=3.0, random_state=1)
    for kw, status in (({"iter_limit": 1}, sm.Status.iteration_limit),
                       ({"time_limit": 1e-9}, sm.Status.time_limit)):
        res, alphas = solve_pairs(make_kernel("rbf", gamma=0.3), Xb, yb, np.ones(len(yb)),
                                  SolverOptions.from_kwargs(**kw))
        assert res.status is status and alphas is None, (kw, res.status)
    held = box.copy()
    held[5] = 0.0
    for name in ("rbf", "linear"):
        assert solve_pairs(make_kernel(name, gamma=0.3), X, y, held, opts) is None


@pytest.mark.parametrize("case", ["rbf", "precomputed", "linear weighted", "three classes",
                                  "stopped"])
def test_libsvm_called_directly_is_svc_fit_array_for_array(monkeypatch, capfd, case):
    """The backend calls libsvm's training as ``SVC.fit`` calls it, without SVC's validation;
    the reference is ``SVC.fit`` itself (the backend's fallback where scikit-learn's module
    is not the one expected): the same support, coefficients, intercepts, counts, status and
    iterations, exactly -- two classes (SVC's sign) and three (one-vs-one's layout), weights,
    a fit stopped at its iteration limit."""
    from sklearn.svm import SVC

    from svm_models.solvers import libsvm

    X, y = MOONS
    weight = None
    params = {"kernel": "rbf", "gamma": 0.7, "C": 3.0}
    if case == "precomputed":
        X, params = np.exp(-0.4 * ((X[:, None] - X[None]) ** 2).sum(-1)), {
            "kernel": "precomputed", "C": 0.5}
    elif case == "linear weighted":
        params = {"kernel": "linear", "C": 2.0}
        weight = np.linspace(0.2, 1.0, len(y))
    elif case == "three classes":
        X, y = make_blobs(90, centers=3, cluster_std=2.0, random_state=5)
        y = np.array([7, -2, 4])[y]
    common = {"tol": 1e-8, "cache_size": 200.0, "shrinking": True,
              "max_iter": 15 if case == "stopped" else 10**6}
    class NotCalled:   # (the direct call is the one made: SVC is never constructed)
        def __init__(self, **kw):
            raise AssertionError("SVC.fit called: the direct call was not made")

    monkeypatch.delitem(libsvm._DIRECT, "lib", raising=False)   # (looked up afresh)
    capfd.readouterr()
    direct = libsvm._svc_fit(NotCalled, X, y, weight, **params, **common)
    assert capfd.readouterr().out == ""   # (libsvm's log off, as SVC(verbose=False))
    monkeypatch.setitem(libsvm._DIRECT, "lib", None)
    ref = libsvm._svc_fit(SVC, X, y, weight, **params, **common)
    for name in ("support_", "n_support_", "dual_coef_", "intercept_", "n_iter_"):
        np.testing.assert_array_equal(getattr(direct, name), getattr(ref, name), err_msg=name)
    assert direct.fit_status_ == ref.fit_status_ == (1 if case == "stopped" else 0)
    assert direct.max_iter == ref.max_iter
    if case != "stopped":   # (and the coefficients are SVC's: its decision function)
        svc = SVC(**params, **common).fit(X, y, sample_weight=weight)
        np.testing.assert_array_equal(direct.dual_coef_, svc.dual_coef_)
        np.testing.assert_array_equal(direct.intercept_, svc.intercept_)


#: an SVC fit's parameters, as the backend hands them over
_SVC_PARAMS = {"kernel": "rbf", "gamma": 0.7, "C": 3.0, "tol": 1e-8, "cache_size": 200.0,
               "shrinking": True, "max_iter": 10**6}


def _stand_in_libsvm(error: Exception):
    """A libsvm module whose ``fit`` raises ``error`` (another scikit-learn's), counting its
    calls."""

    class StandIn:
        calls = 0

        @staticmethod
        def set_verbosity_wrap(v):
            pass

        @classmethod
        def fit(cls, *args, **kw):
            cls.calls += 1
            raise error

    return StandIn


@pytest.mark.parametrize("error,kept", [
    (TypeError("fit() got an unexpected keyword argument 'svm_type'"), False),
    (ValueError("Buffer dtype mismatch, expected 'float64_t' but got 'float'"), True)],
    ids=["another signature", "arrays refused"])
def test_libsvm_that_does_not_take_the_call_leaves_it_to_svc_fit(monkeypatch, error, kept):
    """A libsvm module whose ``fit`` takes other arguments (another scikit-learn) is not
    called again: that fit and every later one are ``SVC.fit``'s; one that refuses the arrays
    it is handed (a ValueError: another buffer type, say) leaves that fit to ``SVC.fit`` and
    is called again for the next (a refusal is about those arrays). The same answer as
    ``SVC.fit``'s either way."""
    from sklearn.svm import SVC

    from svm_models.solvers import libsvm

    X, y = MOONS
    lib = _stand_in_libsvm(error)
    monkeypatch.setitem(libsvm._DIRECT, "lib", lib)
    got = [libsvm._svc_fit(SVC, X, y, None, **_SVC_PARAMS) for _ in range(2)]
    assert (libsvm._DIRECT["lib"] is lib) == kept and lib.calls == (2 if kept else 1)
    svc = SVC(**_SVC_PARAMS).fit(X, y)
    for fitted in got:
        np.testing.assert_array_equal(fitted.dual_coef_, svc.dual_coef_)
        np.testing.assert_array_equal(fitted.support_, svc.support_)
    if kept:
        return
    # a whole fit on libsvm through SVC.fit: the fit made through the direct call
    ref = sm.fit(X, y, solver="libsvm", kernel="rbf", gamma=0.7, C=3.0)
    monkeypatch.delitem(libsvm._DIRECT, "lib")
    direct = sm.fit(X, y, solver="libsvm", kernel="rbf", gamma=0.7, C=3.0)
    assert libsvm._DIRECT["lib"] is not None
    assert ref.solver == direct.solver == "libsvm"
    np.testing.assert_allclose(ref.alpha, direct.alpha, rtol=0, atol=1e-12)
    assert abs(ref.b - direct.b) <= 1e-12


@pytest.mark.parametrize("gamma", [1e6, 1e300])
@pytest.mark.parametrize("C", [1.0, 1e15])
def test_a_kernel_of_distinct_points_certified_on_the_problem_solved(gamma, C):
    """rbf with a gamma so large that every two distinct points are orthogonal (data of scale
    1e3): the kernel matrix is the identity, and with 30 points of each class the optimum is
    alpha = 1 everywhere, the dual objective 60 - 30 = 30 (worked by hand) -- what the fit
    on libsvm reports, certified, and what Clarabel finds. (The certificate had read its
    kernel columns with a point against itself below 1 -- round-off times gamma -- and
    certified 32.5 at gamma 1e300, 30.0018 at 1e6.)"""
    X, y = make_moons(60, noise=0.2, random_state=1)
    sol = sm.fit(X * 1e3, y, kernel="rbf", gamma=gamma, C=C)
    assert sol.solver == "libsvm" and sol.classifier_certificate["certified"]
    assert sol.objective == pytest.approx(30.0, rel=1e-12)
    np.testing.assert_allclose(sol.alpha, 1.0, rtol=1e-12)
    ref = sm.fit(X * 1e3, y, kernel="rbf", gamma=gamma, C=C, solver="clarabel")
    assert ref.objective == pytest.approx(30.0, rel=1e-8)


def _tolerances(monkeypatch) -> list:
    """The tolerance of each libsvm solve from now on (the solves themselves run as ever)."""
    import svm_models.solvers.libsvm as L

    seen, fitted = [], L._fitted

    def spy(SVC, data, y, weight, l, opts, **params):
        seen.append(opts.tolerance)
        return fitted(SVC, data, y, weight, l, opts, **params)

    monkeypatch.setattr(L, "_fitted", spy)
    return seen


def _one_solve(monkeypatch) -> None:
    """libsvm without its first solve at SVC's tolerance: one solve, at the tolerance asked."""
    from dataclasses import replace

    from svm_models.solvers import table

    monkeypatch.setitem(table.BACKENDS, "libsvm", replace(table.BACKENDS["libsvm"],
                                                          first_tol=None))


@pytest.mark.parametrize("kind", ["one problem", "pairs"])
def test_a_first_solve_at_svcs_tolerance_polished_is_the_answer_asked(monkeypatch, kind):
    """A fit on libsvm solves at 1e-3 first (SVC's default) and keeps that answer where the
    polish finishes it (its interface says so): the same alpha, bit for bit, as the one solve
    at the tolerance asked (the polish solves the KKT equations on the same active set; b
    and the objective to round-off: the products behind them may sum in another order),
    certified, and the optimum Clarabel finds. A user's iteration limit counts the iterations of the solve
    asked: then one solve."""
    X, y = make_moons(300, noise=0.3, random_state=0)
    if kind == "pairs":
        X, y = make_blobs(240, 2, centers=3, cluster_std=2.0, random_state=2)
    kw = {"kernel": "rbf", "gamma": 0.5, "C": 10.0}
    seen = _tolerances(monkeypatch)
    t0 = time.perf_counter()
    got = sm.SVMClassifier(**kw).fit(X, y)
    elapsed = time.perf_counter() - t0
    assert seen == [1e-3]
    with monkeypatch.context() as m:
        _one_solve(m)
        seen.clear()
        ref = sm.SVMClassifier(**kw).fit(X, y)
        assert seen == [1e-9]
    sols = got.estimators_ if kind == "pairs" else [got.solution_]
    refs = ref.estimators_ if kind == "pairs" else [ref.solution_]
    assert len(sols) == (3 if kind == "pairs" else 1)
    for s, r in zip(sols, refs):
        assert s.polished and s.classifier_certificate["certified"]
        assert s.solver_choice["used"] == "libsvm"
        assert 0 < s.time < elapsed   # (each pair: its share of the call)
        assert s.interface.endswith("(stopped at tol=0.001, polished)")
        assert not r.interface.endswith("polished)")
        assert np.array_equal(s.alpha, r.alpha)
        assert s.b == pytest.approx(r.b, rel=1e-12, abs=1e-12)
        assert s.objective == pytest.approx(r.objective, rel=1e-12)
    clar = sm.fit(X[:300] if kind == "one problem" else X[y < 2], y[:300] if kind ==
                  "one problem" else y[y < 2], solver="clarabel", **kw)
    assert sols[0].objective == pytest.approx(clar.objective, rel=1e-7)
    seen.clear()
    sm.SVMClassifier(**kw, solver_options={"iter_limit": 10**6}).fit(X, y)
    assert seen == [1e-9]
    seen.clear()   # (a kernel of low rank: one solve, as asked)
    sm.SVMClassifier(kernel="linear").fit(X, y)
    assert seen == [1e-9]


@pytest.mark.parametrize("sizes", [(800, 800), (800, 800, 10)], ids=["one problem", "pairs"])
def test_a_first_solve_the_polish_does_not_finish_is_solved_again_as_asked(monkeypatch, sizes):
    """Where the polish does not finish the first solve's answer -- here it is not tried:
    1,600 free points, more than POLISH_MAX_FREE -- the solve is repeated at the tolerance
    asked (for the pairs: one more call, its answer read for the pair refused). The rbf
    kernel at a gamma that makes distinct points orthogonal is the identity: a pair of
    classes of n and m points has the optimum alpha = 2m / (n + m) on the n, 2n / (n + m)
    on the m, the dual objective 2nm / (n + m) (worked by hand): 800 for 800 and 800, 19.75
    for 800 and 10."""
    from svm_models.postprocess import POLISH_MAX_FREE

    assert sum(sizes[:2]) > POLISH_MAX_FREE
    centers = [(0, 0), (5, 5), (0, 5)][:len(sizes)]
    X, y = make_blobs(list(sizes), centers=centers, random_state=1)
    seen = _tolerances(monkeypatch)
    got = sm.SVMClassifier(kernel="rbf", gamma=1e6, C=1e15).fit(X * 1e3, y)
    assert seen == [1e-3, 1e-9]
    sols = got.estimators_ if len(sizes) > 2 else [got.solution_]
    pairs = [(i, j) for i in range(len(sizes)) for j in range(i + 1, len(sizes))]
    assert [s.polished for s in sols] == [(sizes[i] + sizes[j]) <= POLISH_MAX_FREE
                                          for i, j in pairs]
    assert [s.interface.endswith("polished)") for s in sols] == [s.polished for s in sols]
    for s, (i, j) in zip(sols, pairs):
        n, m = sizes[i], sizes[j]
        assert s.classifier_certificate["certified"]
        assert s.objective == pytest.approx(2 * n * m / (n + m), rel=1e-12)
        pts = np.flatnonzero((y == i) | (y == j))
        want = np.where(y[pts] == i, 2 * m / (n + m), 2 * n / (n + m))
        np.testing.assert_allclose(s.alpha, want, rtol=1e-12)
    seen.clear()   # (asked at SVC's tolerance itself: one solve)
    sm.SVMClassifier(kernel="rbf", gamma=1e6, C=1e15, solver_options={"tol": 1e-3}).fit(
        X * 1e3, y)
    assert seen == [1e-3]


def test_a_deadline_passed_in_the_first_solve_ends_the_fit():
    """A time limit that ends during the first solve (5,000 points, 20 ms: libsvm alone
    takes longer) is the fit's: no second solve, the time limit reported -- for one problem
    and for one-vs-one's pairs."""
    from sklearn.datasets import make_classification

    X, y = make_classification(5000, 20, random_state=0)
    with pytest.raises(sm.SolveFailedError, match="time limit"):
        sm.fit(X, y, kernel="rbf", time_limit=0.02)
    X, y = make_blobs(3000, 5, centers=3, cluster_std=4.0, random_state=0)
    with pytest.raises(sm.SolveFailedError, match="time limit"):
        sm.SVMClassifier(kernel="rbf", solver_options={"time_limit": 0.02}).fit(X, y)


def test_the_solve_asked_follows_a_first_one_only_in_the_time_it_needs():
    """After a first solve the polish did not finish, the solve at the tolerance asked runs
    only where at least the first one's time is left (it stops later; a libsvm answer after
    the limit is not used, it would only overrun the call); no limit: always; none left:
    never."""
    import math

    from svm_models.api import _time_for_another
    from svm_models.solvers import SolverOptions

    ten = SolverOptions.from_kwargs(time_limit=10.0).with_deadline()
    assert _time_for_another(ten, 1.0) and _time_for_another(ten, 9.0)
    assert not _time_for_another(ten, 10.5)
    assert _time_for_another(SolverOptions.from_kwargs(time_limit=math.inf).with_deadline(),
                             1e9)
    gone = SolverOptions.from_kwargs(time_limit=1e-9).with_deadline()
    time.sleep(0.01)
    assert gone.expired() and not _time_for_another(gone, 0.0)


def test_pairs_weighted_and_a_point_of_weight_zero():
    """One-vs-one's pairs under sample weights: in one call, each pair's model read with its
    weights (alpha_i <= C w_i, as a model built with them); a point of weight 0 (libsvm would
    drop it and number the others) leaves the pairs to be fitted alone -- each pair the
    optimum Clarabel finds with the same weights."""
    X, y = make_blobs(150, 2, centers=3, cluster_std=2.0, random_state=2)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    for zero in (False, True):
        if zero:
            w[7] = 0.0
        est = sm.SVMClassifier(kernel="rbf", gamma=0.5, C=2.0).fit(X, y, sample_weight=w)
        for s, (i, j) in zip(est.estimators_, [(0, 1), (0, 2), (1, 2)]):
            pts = np.flatnonzero((y == i) | (y == j))
            ref = sm.fit(X[pts], y[pts], kernel="rbf", gamma=0.5, C=2.0,
                         sample_weight=w[pts], solver="clarabel")
            assert s.objective == pytest.approx(ref.objective, rel=1e-7)
            assert ("one-vs-one" in s.interface) != zero
            if not zero:
                ub = [v.ub for v in s.model.alpha.values()]
                np.testing.assert_allclose(ub, 2.0 * w[pts], rtol=1e-15)


def test_an_answer_the_certificate_refuses_is_not_returned():
    """The unbuilt fit's last word is the certificate: a point 1% off the optimum (the
    identity kernel's alpha = 1, 1,600 free points: past the polish's limit, nothing mends
    it) is refused with the certificate's reason, the same point exact is taken."""
    from svm_models import api
    from svm_models.solvers import SolverOptions, backend
    from svm_models.solvers.base import MatrixResult

    X, y = make_blobs([800, 800], centers=[(0, 0), (5, 5)], random_state=1)
    f = sm.formulations.get("soft_l1_dual")
    plan = f.unbuilt(X * 1e3, y, kernel="rbf", gamma=1e6, C=1e15)
    off = 1.0 + 0.01 * np.random.default_rng(0).uniform(-1, 1, len(y))
    opts = SolverOptions.from_kwargs()
    for alpha, taken in ((np.ones(len(y)), True), (off, False)):
        res = MatrixResult(status=sm.Status.optimal, x=plan.point(alpha), interface="test")
        sol, why = api._certified_unbuilt(plan, f, backend("libsvm"), "libsvm", {}, opts,
                                          res, res.x, 0.0, first_tol=None)
        assert (sol is not None) == taken and (why is None) == taken, why
        if taken:
            assert sol.objective == pytest.approx(800.0, rel=1e-12)
        else:
            assert "gap" in why or "certif" in why, why


def test_a_pair_s_points_read_from_the_classes_members_are_the_mask_s():
    """``pair_members`` (each pair's points from the classes' members, made once: joined
    where the classes come one after the other, else merged) against the mask over all the
    points it replaces, on labels in any order and ordered by class, classes empty or not."""
    from svm_models.data import class_members, pair_members

    rng = np.random.default_rng(0)
    for t in range(300):
        y = rng.integers(0, 5, size=int(rng.integers(2, 40)))
        if t % 3 == 0:
            y = np.sort(y)
        members = class_members(y, 5)
        for i in range(5):
            for j in range(i + 1, 5):
                np.testing.assert_array_equal(pair_members(members, i, j),
                                              np.flatnonzero((y == i) | (y == j)))


def test_one_vs_one_s_points_are_checked_finite_once_and_a_bad_row_still_refused(monkeypatch):
    """The kernel's values on the training points are checked finite once for all the pairs
    (each pair's rows are rows of the points checked): one check for a 4-class rbf and
    linear fit, not one per pair; where a row overflows, the fit is refused as before,
    naming the overflow."""
    import svm_models as sm
    import svm_models.model.pieces as pieces

    calls = []
    check = pieces.check_kernel_finite
    monkeypatch.setattr(pieces, "check_kernel_finite",
                        lambda kern, X: calls.append(X.shape[0]) or check(kern, X))
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 3))
    y = np.repeat(np.arange(4), 20)
    X[y == 1] += 3.0
    for kw in ({"kernel": "rbf"}, {}):
        calls.clear()
        model = sm.SVMClassifier(**kw).fit(X, y)
        assert calls == [80], calls   # (all the points, once)
        assert {s.solver for s in model._solutions()} == {"libsvm"}
    bad = X.copy()
    bad[5, 0] = 1e200   # (|x|^2 overflows)
    with pytest.raises(sm.DataError, match="overflows"):
        sm.SVMClassifier(kernel="rbf").fit(bad, y)

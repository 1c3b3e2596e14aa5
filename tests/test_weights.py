"""What SVC users rely on (issue 26): per-point C (``sample_weight``, ``class_weight``),
``decision_function_shape`` and one-vs-one, ``probability=True``.

References: scikit-learn's ``SVC`` (libsvm) at tol 1e-12 on the same data, the same problem
with points repeated or removed, the primal against the dual, other backends, and for Platt
scaling and pairwise coupling the same optimisation problems solved by scipy.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import load_iris, make_moons
from sklearn.svm import SVC

import svm_models as sm
from conftest import require
from svm_models.methods.calibration import couple, platt, sigmoid

X, Y = make_moons(60, noise=0.3, random_state=1)
RNG = np.random.default_rng(0)
W = RNG.uniform(0.2, 3.0, 60)
W[:4] = 0.0
W[4] = -1.0          # negative: as 0 (scikit-learn drops the point)
KW = {"kernel": "rbf", "gamma": 0.7, "C": 2.0}


def _svc(X, y, w=None, **kw):
    return SVC(tol=1e-12, **kw).fit(X, y, sample_weight=w)


@pytest.mark.parametrize("formulation,solver", [
    (f, s) for f in ("soft_l1_dual", "soft_l1_primal", "soft_l2_dual", "soft_l2_primal")
    for s in ("libsvm", "piqp", "clarabel", "ipopt", "highs", "ipm")
    if not (s == "libsvm" and f.endswith("primal"))])   # (libsvm takes the duals only)
def test_weighted_C_on_every_form_and_backend(formulation, solver):
    sol = sm.fit(X, Y, formulation, solver=solver, sample_weight=W, **KW)
    assert sol.extra["certificate"]["certified"]
    other = "soft_l1_dual" if formulation.startswith("soft_l1") else "soft_l2_dual"
    ref = sm.fit(X, Y, other.replace("dual", "primal"), solver="clarabel", sample_weight=W, **KW)
    assert abs(sol.objective - ref.objective) <= 1e-7 * abs(ref.objective)
    np.testing.assert_allclose(sol.decision_function(X), ref.decision_function(X), atol=1e-6)
    if formulation.startswith("soft_l1"):   # SVC's own problem
        svc = _svc(X, Y, W, **KW)
        np.testing.assert_allclose(sol.decision_function(X), svc.decision_function(X),
                                   atol=1e-6)
    # alpha within each point's box; a point of weight <= 0 has none
    assert np.all(sol.alpha[:5] == 0.0)
    if formulation.startswith("soft_l1"):
        assert np.all(sol.alpha <= KW["C"] * np.maximum(W, 0) * (1 + 1e-12))


def test_integer_weights_are_repeated_points_and_zero_weights_removed_points():
    w = np.ones(60)
    w[10:20] = 2.0
    w[20:25] = 0.0
    keep = w > 0
    rep = np.concatenate([np.flatnonzero(keep), np.arange(10, 20)])
    for solver in ("libsvm", "piqp"):
        weighted = sm.fit(X, Y, solver=solver, sample_weight=w, **KW)
        repeated = sm.fit(X[rep], Y[rep], solver=solver, **KW)
        np.testing.assert_allclose(weighted.decision_function(X), repeated.decision_function(X),
                                   atol=1e-7)
        assert abs(weighted.objective - repeated.objective) <= 1e-8 * abs(repeated.objective)


def test_the_model_shows_the_weights_and_a_C_path_follows_them():
    m = sm.build("soft_l1_dual", X, Y, sample_weight=W, **KW)
    assert m.weight[7] == W[7] and m.alpha[7].ub == pytest.approx(KW["C"] * W[7])
    assert m.alpha[0].ub == 0.0
    Cs = [0.1, 1.0, 10.0]
    path = sm.fit_path(X, Y, Cs, solver="piqp", sample_weight=W, kernel="rbf", gamma=0.7)
    for C, sol in zip(Cs, path):
        one = sm.fit(X, Y, solver="clarabel", sample_weight=W, kernel="rbf", gamma=0.7, C=C)
        np.testing.assert_allclose(sol.decision_function(X), one.decision_function(X),
                                   atol=1e-8)
        # (libsvm stops at its own tolerance: 3e-6 off at C = 10)
        svc = _svc(X, Y, W, kernel="rbf", gamma=0.7, C=C)
        np.testing.assert_allclose(sol.decision_function(X), svc.decision_function(X),
                                   atol=1e-5)


def test_bad_weights_are_refused_plainly():
    with pytest.raises(sm.DataError, match="one weight per point"):
        sm.fit(X, Y, sample_weight=np.ones(5))
    with pytest.raises(sm.DataError, match="zero or negative weight"):
        sm.fit(X, Y, sample_weight=np.where(Y == 0, 0.0, 1.0))
    with pytest.raises(sm.DataError, match="NaN"):
        sm.fit(X, Y, sample_weight=np.full(60, np.nan))
    with pytest.raises(sm.ParameterError, match="sample_weight"):
        sm.fit(X, Y, "hard_dual", sample_weight=W)
    with pytest.raises(sm.ParameterError, match="hard margin"):
        sm.fit(X, Y, C=math.inf, sample_weight=W)
    with pytest.raises(sm.ParameterError, match="sample_weight or class_weight"):
        sm.SVMClassifier("hard_primal", class_weight="balanced").fit(X, Y)


@pytest.mark.parametrize("bad,match", [(np.ones(5), "shape \\(5,\\); the data have 60"),
                                       (np.full(60, np.inf), "NaN or infinite"),
                                       ("heavy", "must be numbers"),
                                       ([[1.0, 2.0]] * 30, "shape \\(30, 2\\)")])
def test_bad_weights_are_named_alike_on_every_surface(bad, match):
    """One reading of sample_weight: fit, the estimator and cross-validation refuse the same
    weights with the same DataError (a ValueError, as scikit-learn's checks expect)."""
    from svm_models.methods.cv import cross_validate

    for call in (lambda: sm.fit(X, Y, sample_weight=bad),
                 lambda: sm.SVMClassifier().fit(X, Y, sample_weight=bad),
                 lambda: cross_validate(X, Y, "soft_l1_dual", "piqp", Cs=[1.0], cv=3,
                                        sample_weight=bad)):
        with pytest.raises(sm.DataError, match=match):
            call()


@pytest.mark.parametrize("zero,rows", [(0.0, slice(0, 50)), (-1.0, slice(50, 100)),
                                       (0.0, slice(0, 100)), (-2.0, slice(50, 150))],
                         ids=["binary-first", "binary-second-negative", "binary-all",
                              "three-two-left-out"])
def test_weights_that_leave_a_class_out_are_refused_as_SVC(zero, rows):
    """SVC's errors and messages for sample weights <= 0 on a whole class (its message
    first), then the class left with no weight named by its own label."""
    Xi, yi = load_iris(return_X_y=True)
    n = 100 if rows.stop <= 100 else 150
    w = np.ones(n)
    w[rows] = zero
    with pytest.raises(ValueError) as ref:
        SVC().fit(Xi[:n], yi[:n], sample_weight=w)
    message = str(ref.value)
    assert message.startswith("Invalid input - all samples")
    left_out = sorted(set(yi[:n][rows]))
    named = ("classes " + ", ".join(map(str, left_out)) if len(left_out) > 1
             else f"class {left_out[0]}")
    for fit in (lambda: sm.SVMClassifier(kernel="rbf").fit(Xi[:n], yi[:n], sample_weight=w),
                lambda: sm.SVMClassifier(kernel="rbf", multi_class="ovo").fit(
                    Xi[:n], yi[:n], sample_weight=w)):
        with pytest.raises(sm.DataError) as ours:
            fit()
        assert str(ours.value).startswith(message + " Every sample of " + named + " has")


def test_a_class_left_with_no_weight_is_named():
    """Three classes, one left with weights <= 0: SVC drops it from libsvm's problem but not
    from classes_ (its decision_function fails, its one-vs-one table no longer matches); the
    estimator refuses, naming that class (one-vs-rest named another: its binary labels);
    svm_models.fit names it too."""
    Xi, yi = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[yi]
    w = np.where(yi == 0, 0.0, 1.0)
    with pytest.raises(IndexError):   # SVC's answer: no error at fit, a broken model
        SVC().fit(Xi, yi, sample_weight=w).decision_function(Xi)
    for mc in ("ovr", "ovo"):
        with pytest.raises(sm.DataError, match="^Every sample of class 'setosa' has a zero or "
                                               "negative weight"):
            sm.SVMClassifier(kernel="rbf", multi_class=mc).fit(Xi, labels, sample_weight=w)
    with pytest.raises(sm.DataError, match="same class. Every sample of class 'versicolor'"):
        sm.fit(Xi[:100], labels[:100], sample_weight=np.where(yi[:100] == 1, -1.0, 1.0))


@pytest.mark.parametrize("class_weight", ["balanced", {0: 3.0, 1: 0.5}])
def test_class_weight_as_SVC(class_weight):
    y = Y.copy()
    y[:12] = 0   # unbalanced
    ours = sm.SVMClassifier(class_weight=class_weight, **KW).fit(X, y, sample_weight=W + 1.0)
    other = sm.SVMClassifier(class_weight=class_weight, solver="clarabel", **KW).fit(
        X, y, sample_weight=W + 1.0)
    np.testing.assert_allclose(ours.decision_function(X), other.decision_function(X),
                               atol=1e-8)
    # (libsvm stops at its own tolerance: 2e-6 off here)
    svc = SVC(class_weight=class_weight, tol=1e-12, **KW).fit(X, y, sample_weight=W + 1.0)
    np.testing.assert_allclose(ours.decision_function(X), svc.decision_function(X), atol=1e-5)


@pytest.mark.parametrize("solver", ["piqp", "clarabel", "ipm", "ipopt", "scip", "highs"])
def test_class_weights_1e7_apart_are_certified_on_every_backend(solver):
    """scikit-learn's check_class_weight_classifiers (three blobs, cluster_std 20, class
    weights 1000, 1e-4, 1e-4): a degenerate optimum. The interior-point backends' alpha is
    central, b read from its KKT conditions fell short on the margins of the weight-1000
    points (a shortfall of 1e-9 there is 2e-4 of the objective) and SCIP's alpha was 3e-7
    off balance: refused with OpenBLAS's Haswell kernels. Now each one-vs-rest problem is
    certified (the b that minimises the primal for the solver's alpha; that alpha balanced),
    and the predictions are libsvm's."""
    from sklearn.datasets import make_blobs
    from sklearn.model_selection import train_test_split

    from svm_models import SVMClassifier

    require(solver)
    X, y = make_blobs(centers=3, random_state=0, cluster_std=20)
    X_train, X_test, y_train, _ = train_test_split(X, y, test_size=0.5, random_state=0)
    cw = {0: 1000, 1: 0.0001, 2: 0.0001}
    clf = SVMClassifier(solver=solver, class_weight=cw).fit(X_train, y_train)
    ref = SVC(class_weight=cw, tol=1e-10, max_iter=10**7).fit(X_train, y_train)
    for est in clf.estimators_:
        cert = est.extra["certificate"]
        assert cert["certified"] and cert["worst"] <= cert["accept"], cert
    np.testing.assert_array_equal(clf.predict(X_test), ref.predict(X_test))


def test_one_vs_one_and_its_decision_shapes_as_SVC():
    Xi, yi = load_iris(return_X_y=True)
    for shape in ("ovo", "ovr"):
        svc = SVC(kernel="rbf", gamma=0.5, tol=1e-12, decision_function_shape=shape).fit(Xi, yi)
        ours = sm.SVMClassifier(kernel="rbf", gamma=0.5, decision_function_shape=shape,
                                multi_class="ovo").fit(Xi, yi)
        d = ours.decision_function(Xi)
        assert d.shape == svc.decision_function(Xi).shape
        np.testing.assert_allclose(d, svc.decision_function(Xi), atol=1e-6)
        np.testing.assert_array_equal(ours.predict(Xi), svc.predict(Xi))
    # decision_function_shape="ovo" alone trains one-vs-one; contradicting it is refused
    assert sm.SVMClassifier(decision_function_shape="ovo").fit(Xi, yi).decision_function(
        Xi).shape == (150, 3)
    with pytest.raises(sm.ParameterError, match="multi_class='ovo'"):
        sm.SVMClassifier(decision_function_shape="ovo", multi_class="ovr").fit(Xi, yi)


def test_platt_is_the_maximum_likelihood_sigmoid():
    rng = np.random.default_rng(3)
    f = rng.normal(size=80) * 2
    t = np.where(f + rng.normal(size=80) > 0, 1, -1)
    A, B = platt(f, t)
    n1, n0 = (t > 0).sum(), (t < 0).sum()
    T = np.where(t > 0, (n1 + 1) / (n1 + 2), 1 / (n0 + 2))

    def nll(ab):
        p = sigmoid(f, *ab)
        return -float(np.sum(T * np.log(p) + (1 - T) * np.log(1 - p)))

    ref = minimize(nll, [0.0, 0.0], method="Nelder-Mead",
                   options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000})
    assert nll((A, B)) <= ref.fun + 1e-9
    np.testing.assert_allclose([A, B], ref.x, atol=1e-4)


def test_pairwise_coupling_solves_its_least_squares_problem():
    rng = np.random.default_rng(5)
    k = 4
    r = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            r[i, j] = rng.uniform(0.05, 0.95)
            r[j, i] = 1 - r[i, j]
    p = couple(r)
    # Wu, Lin and Weng's problem: min sum_i sum_{j != i} (r_ji p_i - r_ij p_j)^2, sum p = 1
    Q = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if i != j:
                Q[i, i] += r[j, i] ** 2
                Q[i, j] = -r[j, i] * r[i, j]
    M = np.block([[Q, np.ones((k, 1))], [np.ones((1, k)), np.zeros((1, 1))]])
    exact = np.linalg.solve(M, np.concatenate([np.zeros(k), [1.0]]))[:k]
    np.testing.assert_allclose(p, exact, atol=1e-3)
    assert abs(p.sum() - 1) < 1e-12


def test_predict_proba_as_SVC():
    Xi, yi = load_iris(return_X_y=True)
    with pytest.warns(FutureWarning, match="CalibratedClassifierCV"):   # deprecated, as SVC's
        ours = sm.SVMClassifier(kernel="rbf", gamma=0.5, probability=True, random_state=0,
                                multi_class="ovo").fit(Xi, yi)
    with warnings.catch_warnings():   # (scikit-learn 1.9 deprecates SVC's probability)
        warnings.simplefilter("ignore", FutureWarning)
        svc = SVC(kernel="rbf", gamma=0.5, probability=True, random_state=0).fit(Xi, yi)
    P = ours.predict_proba(Xi)
    assert P.shape == (150, 3) and np.allclose(P.sum(axis=1), 1.0) and np.all(P >= 0)
    # different internal folds: close, not equal
    assert np.max(np.abs(P - svc.predict_proba(Xi))) < 0.15
    assert np.mean(P.argmax(axis=1) == yi) > 0.95
    np.testing.assert_allclose(ours.predict_log_proba(Xi), np.log(P))
    with pytest.warns(FutureWarning, match="probability"):
        b = sm.SVMClassifier(kernel="rbf", gamma=0.7, probability=True, random_state=0).fit(X, Y)
    Pb = b.predict_proba(X)
    with pytest.warns(FutureWarning, match="probA_"):
        A = b.probA_
    np.testing.assert_allclose(Pb[:, 1], sigmoid(b.decision_function(X), A[0], b._probB[0]))
    assert not hasattr(sm.SVMClassifier().fit(X, Y), "predict_proba")


# ---------------------------------------------------------------------------------------
# Callable kernels and sparse X (issue 26)


def test_a_callable_kernel_is_its_gram_matrix():
    """SVC's callable kernel: ``kernel(A, B)`` gives the matrix; the classifier equals the
    named kernel's and SVC's with the same callable."""
    from sklearn.datasets import load_iris, make_classification
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.svm import SVC

    X, y = make_classification(80, 5, random_state=0)

    def k(A, B):
        return rbf_kernel(A, B, gamma=0.3)

    a = sm.SVMClassifier(kernel=k, C=2.0, solver="piqp").fit(X, y)
    b = sm.SVMClassifier(kernel="rbf", gamma=0.3, C=2.0, solver="piqp").fit(X, y)
    s = SVC(kernel=k, C=2.0, tol=1e-10).fit(X, y)
    Xt = X[::3] + 0.1
    np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), atol=1e-9)
    np.testing.assert_allclose(a.decision_function(Xt), s.decision_function(Xt), atol=1e-5)
    assert set(a.support_) == set(s.support_)
    np.testing.assert_array_equal(a.support_vectors_, X[a.support_])
    Xi, yi = load_iris(return_X_y=True)
    m = sm.SVMClassifier(kernel=k, C=2.0, decision_function_shape="ovo").fit(Xi, yi)
    ref = SVC(kernel=k, C=2.0, tol=1e-10, decision_function_shape="ovo").fit(Xi, yi)
    np.testing.assert_allclose(m.decision_function(Xi), ref.decision_function(Xi), atol=1e-4)
    np.testing.assert_array_equal(m.predict(Xi), ref.predict(Xi))


def test_a_callable_kernel_that_misbehaves_is_named():
    X, y = np.arange(20.0).reshape(10, 2), np.arange(10) % 2
    with pytest.raises(sm.ParameterError, match=r"must return a matrix of shape \(10, 10\)"):
        sm.SVMClassifier(kernel=lambda A, B: A @ B[:1].T).fit(X, y)
    with pytest.raises(sm.ParameterError, match="the callable kernel failed.*ZeroDivision"):
        sm.SVMClassifier(kernel=lambda A, B: 1 / 0).fit(X, y)


def test_sparse_X_gets_a_clear_error_from_fit():
    import scipy.sparse as spm

    X, y = np.eye(6), np.arange(6) % 2
    with pytest.raises(sm.DataError, match=r"scipy sparse matrix.*X\.toarray\(\)"):
        sm.fit(spm.csr_matrix(X), y, solver="highs")


@pytest.mark.parametrize("fmt", ["lil", "csr", "coo"])
def test_sparse_X_is_taken_as_SVC_takes_it(fmt):
    """SVC converts any scipy sparse X to CSR (lil too) and fits it; the estimator does the
    same and holds it dense: the classifier equals SVC's on the same sparse data, for
    sparse, dense and other-format test points. A sparse precomputed kernel is refused with
    SVC's TypeError."""
    import scipy.sparse as spm

    Xi, yi = load_iris(return_X_y=True)
    Xs = spm.random(150, 4, density=0.6, random_state=0, format=fmt) + spm.csr_matrix(Xi)
    Xs = Xs.asformat(fmt)
    kw = {"kernel": "rbf", "gamma": 0.4, "C": 2.0}
    svc = SVC(tol=1e-12, decision_function_shape="ovo", **kw).fit(Xs, yi)
    ours = sm.SVMClassifier(decision_function_shape="ovo", **kw).fit(Xs, yi)
    for Xt in (Xs, Xs.tocsc(), Xs.toarray()):
        np.testing.assert_allclose(ours.decision_function(Xt), svc.decision_function(Xt),
                                   atol=1e-5)
        np.testing.assert_array_equal(ours.predict(Xt), svc.predict(Xt))
    # a callable kernel is given the sparse X itself, as SVC gives it
    def lin(A, B):
        return (A @ B.T).toarray()

    part = Xs.tocsr()[50:].asformat(fmt)
    svc = SVC(kernel=lin, tol=1e-12).fit(part, yi[50:])
    ours = sm.SVMClassifier(kernel=lin).fit(part, yi[50:])
    named = sm.SVMClassifier(kernel="linear").fit(part.toarray(), yi[50:])
    np.testing.assert_allclose(ours.decision_function(Xs), named.decision_function(Xs),
                               atol=1e-7)
    np.testing.assert_allclose(ours.decision_function(Xs), svc.decision_function(Xs),
                               atol=1e-4)   # (libsvm's own tolerance: 1.4e-5 off here)
    assert (ours.support_vectors_ != Xs.tocsr()[50:][ours.support_]).nnz == 0
    K = spm.csr_matrix(Xi @ Xi.T)
    for est in (SVC(kernel="precomputed"), sm.SVMClassifier(kernel="precomputed")):
        with pytest.raises(TypeError, match="^Sparse precomputed kernels are not supported"):
            est.fit(K, yi)


def test_a_callable_kernel_takes_a_list_of_strings_as_SVC():
    """SVC passes X to a callable kernel as it is (no validation): a string kernel on a list
    of words. The classifier equals SVC's with the same kernel; support_vectors_ are the
    training words."""
    words = ["apple", "apricot", "banana", "bandana", "cherry", "charm", "apply", "bane",
             "chess", "appeal", "banner", "cheer", "april", "band", "chart"]
    y = np.array([0, 0, 1, 1, 2, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2])

    def shared_letters(A, B):
        return np.array([[len(set(a) & set(b)) for b in B] for a in A], dtype=float)

    test = ["appl", "chew", "bandit", "arch"]
    for shape in ("ovo", "ovr"):
        svc = SVC(kernel=shared_letters, tol=1e-12, decision_function_shape=shape).fit(words, y)
        ours = sm.SVMClassifier(kernel=shared_letters, multi_class="ovo",
                                decision_function_shape=shape).fit(words, y)
        np.testing.assert_allclose(ours.decision_function(test), svc.decision_function(test),
                                   atol=1e-5)
        np.testing.assert_array_equal(ours.predict(test), svc.predict(test))
    assert ours.support_vectors_ == [words[i] for i in ours.support_]
    assert sorted(ours.support_) == sorted(svc.support_)
    b = sm.SVMClassifier(kernel=shared_letters).fit(words[:4], y[:4])
    s2 = SVC(kernel=shared_letters, tol=1e-12).fit(words[:4], y[:4])
    np.testing.assert_allclose(b.decision_function(test), s2.decision_function(test), atol=1e-6)
    with pytest.raises(sm.DataError, match="inconsistent numbers of samples"):
        sm.SVMClassifier(kernel=shared_letters).fit(words, y[:-1])

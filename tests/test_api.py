"""``fit`` without a Pyomo model: where libsvm takes the 1-norm dual as data, no model is built
until ``Solution.model`` (or the estimator's ``model_``) is read; the model then built is the
model the ordinary path builds and solves, and an edit of it is honoured.

The references are independent: the same data built eagerly (``build`` then ``solve``, the
ordinary path), solved by Clarabel (an interior-point method, not SMO), and the objective of
the Pyomo model evaluated by Pyomo at the Solution's alpha.
"""

from __future__ import annotations

import pickle

import numpy as np
import pyomo.environ as pyo
import pytest
from sklearn.datasets import make_moons

import svm_models as sm
from svm_models.estimator import SVMClassifier
from svm_models.formulations import get as lookup

MOONS = make_moons(120, noise=0.3, random_state=5)
WEIGHTS = np.linspace(0.2, 3.0, 120)


@pytest.fixture
def builds(monkeypatch):
    """The number of soft_l1_dual models built so far (its builder wrapped to count)."""
    f = lookup("soft_l1_dual")
    real = f.builder
    count = [0]

    def counted(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(f, "builder", counted)
    return count


def _gram(X):
    return np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))


CASES = {
    "rbf": ({"kernel": "rbf", "gamma": 0.8, "C": 3.0}, False),
    "weighted": ({"kernel": "rbf", "gamma": "scale", "C": 0.7}, True),
    "precomputed": ({"kernel": "precomputed", "C": 2.0}, False),
    # the factor form (2 features, 120 points): variables (alpha, z), rows z = X'(y alpha)
    "linear": ({"kernel": "linear", "C": 0.5}, False),
    "linear weighted": ({"kernel": "linear", "C": 0.5}, True),
    "poly": ({"kernel": "poly", "degree": 2, "gamma": 0.5, "coef0": 1.0, "C": 0.5}, False),
    "defaults": ({}, False),   # (the builder's defaults: the linear kernel, C = 1)
    # a licence of 120 variables: the dense form, not the factor form's 122
    "linear max_vars": ({"kernel": "linear", "C": 0.5, "max_vars": 120}, False),
}


def _fit_args(case):
    kw, weighted = CASES[case]
    X, y = MOONS
    X = _gram(X) if kw.get("kernel") == "precomputed" else X
    if weighted:
        kw = {**kw, "sample_weight": WEIGHTS}
    return X, y, kw


def _counts(model):
    return (sum(1 for _ in model.component_data_objects(pyo.Var)),
            sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True)),
            sum(1 for _ in model.component_data_objects(pyo.Objective, active=True)))


def _set_alpha(model, alpha):
    """``alpha`` into the model's variables (and the factor form's ``z = F alpha``)."""
    for vd, a in zip(model.alpha.values(), alpha):
        vd.set_value(float(a))
    if model.component("z") is not None:
        for k, vd in model.z.items():
            vd.set_value(pyo.value(model.Fv[k]))


@pytest.mark.parametrize("case", list(CASES))
def test_fit_builds_the_model_only_when_it_is_read_and_it_is_the_model_solved(builds, case):
    X, y, kw = _fit_args(case)
    sol = sm.fit(X, y, **kw)
    assert builds[0] == 0, "fit on libsvm built a Pyomo model nobody asked for"
    assert sol.solver == "libsvm" and sol.path == "fast"
    assert sol.formulation == "soft_l1_dual"
    assert sol.classifier_certificate["certified"]
    eager = sm.solve(sm.build("soft_l1_dual", X, y, **kw))   # the ordinary path
    assert builds[0] == 1
    # the same solve and the same certified classifier as the ordinary path
    assert np.array_equal(sol.alpha, eager.alpha) and sol.b == eager.b
    assert sol.objective == eager.objective and np.array_equal(sol.support, eager.support)
    assert sol.solver_choice == eager.solver_choice
    model = sol.model
    assert builds[0] == 2 and sol.model is model   # built once, on the first read
    assert _counts(model) == _counts(eager.model)
    # the solver's values are in its variables, as in the model the ordinary path solved --
    # but after a first solve at SVC's tolerance (rbf), the alpha it was polished into, the
    # ordinary path's certified alpha (libsvm's own at 1e-9 is 1e-5 off it here)
    values = np.array([v.value for v in model.alpha.values()])
    solved = np.array([v.value for v in eager.model.alpha.values()])
    if kw.get("kernel") == "rbf":
        assert np.array_equal(values, sol.alpha) and np.array_equal(values, eager.alpha)
        assert not np.array_equal(values, solved)
    else:
        assert np.array_equal(values, solved)
    # Pyomo's value of its objective at the alpha returned is the Solution's objective
    _set_alpha(model, sol.alpha)
    assert pyo.value(model.objective) == pytest.approx(sol.objective, rel=1e-12)


def test_an_edit_of_the_model_read_is_honoured():
    """A constraint added to the model read after the fit takes it off libsvm (which refuses
    it, the record says why) and is solved as the ordinary path solves the same edit."""
    X, y = MOONS
    sol = sm.fit(X, y, kernel="rbf", gamma=0.8, C=3.0)
    k = int(sol.support[np.argmax(sol.alpha[sol.support])])
    model = sol.model
    model.held = pyo.Constraint(expr=model.alpha[k] == 0)
    with pytest.raises(sm.CapabilityError, match="held"):
        sm.solve(model, "libsvm")
    edited = sm.solve(model, "clarabel")
    ref = sm.build("soft_l1_dual", X, y, kernel="rbf", gamma=0.8, C=3.0)
    ref.held = pyo.Constraint(expr=ref.alpha[k] == 0)
    expected = sm.solve(ref, "clarabel")
    assert edited.path != "fast" and abs(edited.alpha[k]) < 1e-7
    assert edited.objective == pytest.approx(expected.objective, rel=1e-7)
    assert edited.objective < sol.objective - 1e-6   # the edit changed the optimum


def test_the_estimator_reads_its_models_when_asked(builds):
    X, y = MOONS
    clf = SVMClassifier(kernel="rbf", gamma=0.8, C=3.0).fit(X, y)
    assert builds[0] == 0
    model = clf.model_
    assert builds[0] == 1 and model is clf.solution_.model
    _set_alpha(model, clf.solution_.alpha)
    assert pyo.value(model.objective) == pytest.approx(clf.solution_.objective, rel=1e-12)
    again = pickle.loads(pickle.dumps(clf))   # the model is not pickled with the estimator
    assert np.array_equal(again.predict(X), clf.predict(X))
    with pytest.raises(sm.SVMError, match="keeps no model"):
        again.model_


def test_a_model_that_is_not_libsvms_is_built_and_read_alike(builds):
    """On another backend fit builds its model as before; the Solution's model is built
    again from the same data when read, with the solver's values."""
    X, y = MOONS
    sol = sm.fit(X, y, solver="clarabel", kernel="rbf", gamma=0.8, C=3.0)
    assert builds[0] == 1
    model = sol.model
    assert builds[0] == 2
    _set_alpha(model, sol.alpha)
    assert pyo.value(model.objective) == pytest.approx(sol.objective, rel=1e-12)
    assert sm.Solution.from_json(sol.to_json()).objective == sol.objective


@pytest.mark.parametrize("weighted, gram", [(False, "native"), (True, "native"),
                                            (False, "formed"), (True, "formed"),
                                            (True, "given"), (False, "linear"),
                                            (True, "linear")])
def test_one_vs_one_pairs_solved_together_are_each_pairs_own_optimum(weighted, gram,
                                                                      monkeypatch):
    """fit_pairs solves all the pairs of classes in one libsvm call, as SVC trains them;
    each pair's Solution is certified and is that pair's optimum: Clarabel's, solved on the
    pair alone (an interior-point method, not SMO), with the same weights. The kernel's
    matrix: ``"formed"`` by fit_pairs (up to PAIRS_GRAM_MAX points) or ``"given"``
    (cross-validation's fold matrix), libsvm reads it precomputed and the certificates read
    its blocks (formed: on the points ordered by class, each pair's alpha put back in its
    points' order); ``"native"`` (beyond PAIRS_GRAM_MAX, here 0) libsvm evaluates the
    kernel."""
    from sklearn.datasets import load_digits

    from svm_models.api import fit_pairs
    from svm_models.kernels import make_kernel
    from svm_models.methods.cv import binary_problems, problem_points

    X, y = load_digits(return_X_y=True)
    keep = np.flatnonzero(y < 4)[::2]
    X, y = X[keep], y[keep]
    weight = np.linspace(0.1, 3.0, len(y)) if weighted else None
    params = {"kernel": "rbf", "gamma": 1e-3, "C": 0.02}   # (many alpha at their bound C_i)
    if gram == "linear":   # (the factor form: 64 features, pairs of ~180 points)
        params = {"kernel": "linear", "C": 1e-3}
    points = [problem_points(y, np.arange(len(y)), p)[0] for p in binary_problems(4, "ovo")]
    if gram == "native":
        monkeypatch.setattr(sm.api, "PAIRS_GRAM_MAX", 0)
    given = make_kernel("rbf", gamma=params["gamma"]).gram(X) if gram == "given" else None
    sols = fit_pairs(X, y, points, "soft_l1_dual", "auto", params, weight, {}, gram=given)
    assert len(sols) == 6
    for pts, sol, (pos, _) in zip(points, sols, binary_problems(4, "ovo")):
        assert sol is not None
        kind = {"native": "rbf", "linear": "linear"}.get(gram, "precomputed")
        assert sol.interface.startswith(f"libsvm-{kind}, one-vs-one")   # (rbf: a first solve)
        assert sol.classifier_certificate["certified"]
        t = np.where(y[pts] == pos, 1, -1)
        kw = {} if weight is None else {"sample_weight": weight[pts]}
        ref = sm.fit(X[pts], t, solver="clarabel", **params, **kw)
        np.testing.assert_array_equal(sol.classes, ref.classes)   # (-1 and +1, as t's)
        assert sol.objective == pytest.approx(ref.objective, rel=1e-7)
        assert sol.b == pytest.approx(ref.b, abs=1e-5)
        np.testing.assert_allclose(sol.alpha, ref.alpha, atol=1e-5 * params["C"])
        model = sol.model   # its model, built when read: the pair's, with these weights
        _set_alpha(model, sol.alpha)
        assert pyo.value(model.objective) == pytest.approx(sol.objective, rel=1e-12)


def test_a_pairs_alpha_from_points_ordered_by_class_is_put_back_in_its_points_order():
    """``_in_order``: a backend handed the points ordered by class answers each pair's alpha
    on that pair's points in that order; put back, entry k is the one of the pair's k-th
    point in the data (here each alpha entry is the point's own index)."""
    from svm_models.api import _in_order

    y = np.array([2, 0, 1, 0, 2, 1, 1, 0])
    order = np.argsort(y, kind="stable")
    ys = y[order]

    def alphas(i, j):   # (on the pair's points in the order handed over: their indices)
        return order[np.flatnonzero((ys == i) | (ys == j))].astype(float)

    back = _in_order(alphas, order, ys)
    for i, j in ((0, 1), (0, 2), (1, 2)):
        np.testing.assert_array_equal(back(i, j), np.flatnonzero((y == i) | (y == j)))


def test_pairs_at_several_Cs_are_each_Cs_own_and_C_inf_goes_the_ordinary_way():
    """fit_pairs(Cs=...) gives at each C what a call at that C alone gives, to round-off (the
    pairs' problems made once, then taken at each C); a C = inf among them (the hard margin, another
    formulation) leaves every pair to its own fit, as at C = inf alone."""
    from sklearn.datasets import load_digits

    from svm_models.api import fit_pairs
    from svm_models.kernels import make_kernel
    from svm_models.methods.cv import binary_problems, problem_points

    X, y = load_digits(return_X_y=True)
    keep = np.flatnonzero(y < 3)[::3]
    X, y = X[keep] / 16, y[keep]
    points = [problem_points(y, np.arange(len(y)), p)[0] for p in binary_problems(3, "ovo")]
    params = {"kernel": "rbf", "gamma": 0.02}
    both = fit_pairs(X, y, points, "soft_l1_dual", "auto", params, None, {}, Cs=[0.05, 3.0])
    for C, sols in zip([0.05, 3.0], both):
        alone = fit_pairs(X, y, points, "soft_l1_dual", "auto", {**params, "C": C}, None, {})
        for a, b in zip(sols, alone):
            assert a.C == b.C == C   # (a pair's matrix products: the same sums, in the order
            # of the columns its earlier Cs read -- equal up to round-off)
            np.testing.assert_allclose(a.alpha, b.alpha, rtol=1e-12, atol=1e-14 * C)
            assert a.objective == pytest.approx(b.objective, rel=1e-13)
            assert a.b == pytest.approx(b.b, rel=1e-12, abs=1e-13)
    assert fit_pairs(X, y, points, "soft_l1_dual", "auto", params, None, {},
                     Cs=[1.0, np.inf]) == [[None] * 3] * 2
    # a precomputed matrix: each pair's problem is a block of it, not its rows -- left to
    # each pair's own fit
    K = make_kernel("rbf", gamma=0.02).gram(X)
    assert fit_pairs(K, y, points, "soft_l1_dual", "auto", {"kernel": "precomputed"}, None,
                     {}) == [None] * 3


def test_the_rows_of_checked_data_are_the_data_validate_makes_of_them():
    """rows_of (one-vs-one's pairs: rows of features checked once) gives the Dataset validate
    gives the same rows and labels -- the features, the encoded labels, the classes, frozen
    -- and validate takes it as it is, with its own labels only."""
    from svm_models.data import as_matrix, rows_of, validate
    from svm_models.errors import DataError, ParameterError

    X, y = MOONS
    idx = np.flatnonzero(np.arange(len(y)) % 3 != 0)
    labels = np.where(y[idx] > 0, "b", "a")
    ours, ref = rows_of(as_matrix(X), idx, labels), validate(X[idx], labels)
    np.testing.assert_array_equal(ours.X, ref.X)
    np.testing.assert_array_equal(ours.y, ref.y)
    np.testing.assert_array_equal(ours.classes, ref.classes)
    assert not ours.X.flags.writeable and not ours.y.flags.writeable
    assert validate(ours, ours.y) is ours
    # rows given as a slice: a copy too, never a view of the caller's features
    A = as_matrix(X)
    part = rows_of(A, slice(None), y)
    assert not np.shares_memory(part.X, A) and not part.X.flags.writeable
    with pytest.raises(ParameterError, match="its own labels"):
        validate(ours, ref.y)
    with pytest.raises(DataError, match="X has 4 rows but y has 3 labels"):
        rows_of(as_matrix(X), idx[:4], labels[:3])
    with pytest.raises(DataError, match="two classes"):
        rows_of(as_matrix(X), idx, np.zeros(len(idx)))


def test_only_the_1_norm_dual_of_an_exact_kernel_is_made_unbuilt():
    """The hard margin, the 2-norm soft margin and a low-rank kernel are built (their
    problems are not the box-constrained dual unbuilt_dual makes): None."""
    X, y = MOONS
    assert lookup("soft_l1_dual").unbuilt(X, y, kernel="rbf", C=1.0) is not None
    assert lookup("hard_dual").unbuilt(X, y, kernel="rbf") is None
    assert lookup("soft_l2_dual").unbuilt(X, y, kernel="rbf", C=1.0) is None
    assert lookup("soft_l1_dual").unbuilt(X, y, kernel="rbf", C=1.0, kernel_rank=10) is None


@pytest.mark.parametrize("read_first", [False, True])
@pytest.mark.parametrize("case", ["rbf", "weighted", "linear weighted"])
def test_the_problem_taken_at_another_C_is_the_problem_made_at_that_C(case, read_first):
    """UnbuiltDual.at(C) (cross-validation's Cs on a fold's pairs) is the problem unbuilt at
    that C: its C, its standard form (the box C weight_i on alpha, z free), the data
    shared."""
    X, y, kw = _fit_args(case)
    f = lookup("soft_l1_dual")
    plan = f.unbuilt(X, y, **kw)
    if read_first:   # (the standard form made before the move, or only when read after it)
        assert plan.form.ux[0] == kw["C"] * (plan.svm.weight[0] if plan.svm.weight is not None
                                             else 1.0)
    moved = plan.at(7.5)
    made = f.unbuilt(X, y, **{**kw, "C": 7.5})
    assert moved.C == made.C == 7.5 and plan.C == kw["C"]
    for name in ("c", "lA", "uA", "lx", "ux"):
        np.testing.assert_array_equal(getattr(moved.form, name), getattr(made.form, name),
                                      err_msg=name)
    assert (moved.form.A != made.form.A).nnz == 0
    np.testing.assert_allclose(plan.form.ux[: len(y)], made.form.ux[: len(y)] * kw["C"] / 7.5,
                               rtol=1e-15)   # (and the plan itself left at its C)
    assert moved.svm is plan.svm   # (the data, the kernel, a held matrix shared)
    x = np.random.default_rng(2).uniform(0.0, 1.0, made.form.n)
    assert moved.form.objective(x) == pytest.approx(made.form.objective(x), rel=1e-14)
    # the backend's point of an alpha: the form's variables, alpha then the factor's z
    a = x[: len(y)]
    point = moved.point(a)
    assert point.shape == (made.form.n,)
    np.testing.assert_array_equal(point[: len(y)], a)
    if made.record.structure.z is not None:
        np.testing.assert_allclose(point[len(y):], made.record.structure.L.T @ (made.svm.data.y * a),
                                   rtol=1e-14)


@pytest.mark.parametrize("case", list(CASES))
def test_the_problem_solved_unbuilt_is_the_standard_form_of_the_model(case):
    """What libsvm is handed without a model (its structure, the standard form) is what the
    record of the built model assembles: the same objective, rows, bounds and structure."""
    from svm_models.model.standard_form import assemble

    X, y, kw = _fit_args(case)
    plan = lookup("soft_l1_dual").unbuilt(X, y, **kw)
    record = sm.build("soft_l1_dual", X, y, **kw)._svm.record
    sf = assemble(record, materialise=False)
    ours = plan.form
    assert (ours.sense, ours.n, ours.m) == (sf.sense, sf.n, sf.m)
    assert (ours.A != sf.A).nnz == 0
    for name in ("c", "lA", "uA", "lx", "ux"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(sf, name), err_msg=name)
    x = np.random.default_rng(1).uniform(0.0, 1.0, sf.n)
    assert ours.objective(x) == pytest.approx(sf.objective(x), rel=1e-14)
    a, b = plan.record.structure, record.structure
    np.testing.assert_array_equal(a.alpha, b.alpha)
    np.testing.assert_array_equal(a.y, b.y)
    assert a.kernel == b.kernel and a.C == b.C and a.margin is b.margin
    assert (a.weight is None) == (b.weight is None)
    assert (a.z is None) == (b.z is None) == (case not in ("linear", "linear weighted", "poly",
                                                           "defaults"))
    if a.z is not None:   # (the factor form: z's positions, the factor its rows are made of)
        np.testing.assert_array_equal(a.z, b.z)
        np.testing.assert_array_equal(a.L, b.L)

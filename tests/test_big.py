"""Issue 17, big problems: low-rank kernels (pivoted incomplete Cholesky, kernel_rank=), the
kernel matrix stored once, the per-point costs of the fast path. Small sizes; every value is
checked against something independent (the exact-kernel model, numpy's Cholesky, the dense
kernel matrix, the other form)."""

import numpy as np
import pytest

import svm_models as sm
from svm_models.errors import ParameterError
from svm_models.kernels import (
    LowRankKernel,
    incomplete_cholesky,
    kernel_from_dict,
    make_kernel,
)
from svm_models.model.built import SignedGram
from svm_models.model.standard_form import assemble, bounds
from svm_models.solution import Solution

SOLVER = "piqp"


def data(l=60, d=4, seed=1, sep=0.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((l, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + sep * rng.standard_normal(l) > 0, 1, -1)
    return X, y


KW = dict(kernel="rbf", gamma=0.3)


def exact_and_full(name, X, y, **kw):
    params = {**KW, **kw}
    return (sm.fit(X, y, name, SOLVER, **params),
            sm.fit(X, y, name, SOLVER, kernel_rank=len(y), **params))


@pytest.mark.parametrize("name,kw", [("soft_l1_dual", {"C": 10.0}), ("soft_l2_dual", {"C": 3.0}),
                                     ("hard_dual", {}), ("soft_l1_primal", {"C": 10.0}),
                                     ("soft_l2_primal", {"C": 3.0})])
def test_full_rank_equals_the_exact_kernel(name, kw):
    X, y = data(sep=0.3 if name.startswith("soft") else 0.0)
    Xt, _ = data(l=25, seed=7)
    exact, full = exact_and_full(name, X, y, **kw)
    rep = full.extra["kernel_rank"]
    assert rep["rank"] == len(y) and rep["trace_error"] <= 1e-12 * rep["trace"]
    assert abs(full.objective - exact.objective) <= 1e-8 * max(1.0, abs(exact.objective))
    assert np.max(np.abs(full.alpha - exact.alpha)) <= 1e-8 * max(1.0, exact.alpha.max())
    assert abs(full.b - exact.b) <= 1e-8
    assert np.allclose(full.decision_function(Xt), exact.decision_function(Xt), atol=1e-8, rtol=0)
    assert isinstance(full.kernel, LowRankKernel)


def test_reported_error_bounds_the_true_one():
    X, y = data(l=80, sep=0.3)
    kern = make_kernel("rbf", X, gamma=0.3)
    K = kern.gram(X)
    exact = sm.fit(X, y, "soft_l1_dual", SOLVER, C=10.0, **KW)
    for r in (5, 15, 40):
        sol = sm.fit(X, y, "soft_l1_dual", SOLVER, C=10.0, kernel_rank=r, **KW)
        rep = sol.extra["kernel_rank"]
        L = sol.kernel.gram(X)                       # L L' on the training points
        E = K - L
        true = float(np.trace(E))
        assert rep["rank"] == r
        assert rep["trace_error"] == pytest.approx(true, rel=1e-9, abs=1e-10)
        # the neglected part is PSD: its trace bounds its largest eigenvalue and every entry
        lam = np.linalg.eigvalsh(E)
        assert lam[0] >= -1e-10 and lam[-1] <= rep["trace_error"] + 1e-10
        # the optimum of the low-rank model exceeds the exact one by at most the bound
        gap = sol.objective - exact.objective
        assert -1e-8 <= gap <= rep["objective_bound"] + 1e-8
    assert rep["objective_bound"] < float("inf")


def test_pivoted_cholesky_against_numpy():
    X, _ = data(l=50)
    kern = make_kernel("rbf", X, gamma=0.3)
    K = kern.gram(X)
    lr = incomplete_cholesky(kern, X, 50)
    P = lr.pivots
    assert sorted(P.tolist()) == list(range(50))
    # the Cholesky factor of K permuted to the pivot order is unique: numpy's
    assert np.allclose(lr.L[P], np.linalg.cholesky(K[np.ix_(P, P)]), atol=1e-10)
    assert np.allclose(lr.L @ lr.L.T, K, atol=1e-12)
    # greedy pivoting: the first pivot has the largest diagonal; rank-r residual traces fall
    small = incomplete_cholesky(kern, X, 7, block=1)
    Kp = K - small.L @ small.L.T
    assert small.trace_error == pytest.approx(np.trace(Kp), abs=1e-10)
    # the residual vanishes on the pivots' rows and columns (exact interpolation there)
    assert np.allclose(Kp[small.pivots], 0.0, atol=1e-12)


def test_low_rank_kernel_is_the_nystroem_kernel_of_the_pivots():
    X, y = data(sep=0.3)
    sol = sm.fit(X, y, "soft_l1_dual", SOLVER, C=10.0, kernel_rank=12, **KW)
    k = sol.kernel
    base = make_kernel("rbf", X, gamma=0.3)
    Xt, _ = data(l=9, seed=3)
    P = k.landmarks
    nys = base.gram(Xt, P) @ np.linalg.solve(base.gram(P), base.gram(P, X))
    assert np.allclose(k.gram(Xt, X), nys, atol=1e-8)
    # on the training points: the model's own decision values, (L L')(y alpha) + b
    lr = incomplete_cholesky(base, X, 12)
    f_model = lr.L @ (lr.L.T @ (sol.alpha * np.where(y > 0, 1.0, -1.0))) + sol.b
    assert np.allclose(sol.decision_function(X), f_model, atol=1e-9)
    # serialised and read back: the same predictions
    back = Solution.from_json(sol.to_json())
    assert np.allclose(back.decision_function(Xt), sol.decision_function(Xt), atol=1e-12)
    assert isinstance(kernel_from_dict(k.to_dict()), LowRankKernel)


def test_kernel_rank_above_l_is_exact_and_poly_works():
    X, y = data(l=40, sep=0.3)
    exact = sm.fit(X, y, "soft_l1_dual", SOLVER, C=2.0, kernel="poly", degree=2, gamma=0.5)
    big = sm.fit(X, y, "soft_l1_dual", SOLVER, C=2.0, kernel="poly", degree=2, gamma=0.5,
                 kernel_rank=10_000)
    rep = big.extra["kernel_rank"]
    # (gamma x.z)^2 in 4 features has rank 4 * 5 / 2 = 10: the factorisation stops there
    K = make_kernel("poly", X, degree=2, gamma=0.5).gram(X)
    assert rep["requested"] == 10_000 and rep["rank"] == np.linalg.matrix_rank(K) == 10
    assert abs(big.objective - exact.objective) <= 1e-8 * abs(exact.objective)


@pytest.mark.parametrize("kw,match", [
    ({"kernel": "rbf", "kernel_rank": 0}, "positive integer"),
    ({"kernel": "rbf", "kernel_rank": -3}, "positive integer"),
    ({"kernel": "rbf", "kernel_rank": 2.5}, "positive integer"),
    ({"kernel": "rbf", "kernel_rank": True}, "positive integer"),
    ({"kernel": "linear", "kernel_rank": 3}, "exact factor X"),
    ({"kernel": "rbf", "kernel_rank": 5, "quad_form": "dense"}, "factor form"),
])
def test_bad_kernel_rank(kw, match):
    X, y = data(l=20)
    with pytest.raises(ParameterError, match=match):
        sm.build("soft_l1_dual", X, y, **kw)


def test_kernel_rank_with_a_precomputed_kernel_is_refused():
    X, y = data(l=20)
    K = make_kernel("rbf", X, gamma=0.3).gram(X)
    with pytest.raises(ParameterError, match="precomputed"):
        sm.build("soft_l1_primal", K, y, kernel="precomputed", kernel_rank=5)


def test_the_kernel_matrix_is_stored_once():
    X, y = data(sep=0.3)
    m = sm.build("soft_l1_dual", X, y, C=10.0, **KW)
    svm = m._svm
    (qt,) = svm.record.quadratic
    assert isinstance(svm.K, SignedGram) and qt.block.base is svm.K.G
    K = make_kernel("rbf", X, gamma=0.3).gram(X)
    v = np.random.default_rng(0).standard_normal(len(y))
    idx = np.ix_([3, 1, 7], [2, 3])
    assert np.allclose(svm.K @ v, K @ v) and np.allclose(svm.K[idx], K[idx])
    assert np.allclose(np.asarray(svm.K), K)
    # and the fit agrees with the primal (which keeps K and its factor)
    dual = sm.solve(m, SOLVER)
    primal = sm.fit(X, y, "soft_l1_primal", SOLVER, C=10.0, **KW)
    assert dual.objective == pytest.approx(primal.objective, rel=1e-8)
    assert np.allclose(dual.alpha, primal.alpha, atol=1e-7)


def test_margin_multipliers_read_as_one_array():
    X, y = data(l=300, sep=0.3)
    primal = sm.fit(X, y, "soft_l1_primal", SOLVER, C=1.0)
    dual = sm.fit(X, y, "soft_l1_dual", SOLVER, C=1.0)
    assert primal.extra["alpha_source"] == "multipliers"
    assert np.allclose(primal.alpha, dual.alpha, atol=1e-6)
    assert primal.b == pytest.approx(dual.b, abs=1e-6)


def test_bounds_are_read_per_variable_even_in_runs():
    X, y = data(l=50, sep=0.3)
    m = sm.build("soft_l1_dual", X, y, C=10.0, **KW)
    alpha = m.alpha
    alpha[17].setub(0.25)                 # one member of the run re-bounded
    m.C = 4.0                              # the run's shared bound follows the Param
    lx, ux = bounds(assemble(m._svm.record).var_datas)
    expect = np.array([vd.bounds[1] for vd in assemble(m._svm.record).var_datas], dtype=float)
    assert np.array_equal(ux, expect) and ux[17] == 0.25 and ux[0] == 4.0
    assert np.all(lx == 0.0)
    sol = sm.solve(m, SOLVER)
    assert sol.alpha[17] <= 0.25 + 1e-9
    general = sm.solve(m, SOLVER, path="general")
    assert sol.objective == pytest.approx(general.objective, rel=1e-7)


def test_lazy_members_build_on_first_read_and_survive_clone():
    X, y = data(l=30, sep=0.3)
    m = sm.build("soft_l1_primal", X, y, C=1.0)
    assert not m.margin[4].is_materialised and m.margin[4].is_pristine
    copy = m.clone()
    a = sm.solve(m, SOLVER)
    b = sm.solve(copy, SOLVER)           # the copy's members were built by the clone
    assert b.path == "general" or b.objective == pytest.approx(a.objective, rel=1e-9)
    assert b.objective == pytest.approx(a.objective, rel=1e-7)
    body = str(m.margin[4].body)
    assert "w[0]" in body and "xi[4]" in body and m.margin[4].is_pristine


# ---------------------------------------------------------------------------------------
# Memory at scale: nothing stored per point but the variables (issue 17's memory target).
# The objective's sum over the points and the balance row are lazy, the labels an
# array-backed Param, the points a RangeSet, the row matrices made in place, and the
# caller's X kept as a checked read-only view.


def test_lazy_objective_and_balance_are_the_eager_model():
    import pyomo.environ as pyo

    from svm_models.model.lazy import LazyObjective, LazyScalarConstraint

    for name in ("soft_l1_dual", "soft_l2_dual", "soft_l1_primal", "soft_l2_primal", "hard_dual"):
        X, y = data(l=40, sep=0.0 if name == "hard_dual" else 0.3)   # hard: separable
        m = sm.build(name, X, y, **({} if name == "hard_dual" else {"C": 2.0}))
        assert isinstance(m.objective, LazyObjective) and not m.objective.is_materialised
        rng = np.random.default_rng(3)
        for vd in m._svm.record.var_datas():
            vd.set_value(float(rng.uniform(0.0, 1.0)))
        x = np.array([vd.value for vd in m._svm.record.var_datas()])
        # the record's objective (what the fast path solves) and the Pyomo expression the
        # lazy objective builds (what the writers see) are the same function
        assert pyo.value(m.objective) == pytest.approx(m._svm.record.objective_value(x), rel=1e-12)
        assert m.objective.is_materialised and m.objective.is_pristine
        if "dual" in name:
            assert isinstance(m.balance, LazyScalarConstraint)
            assert pyo.value(m.balance.body) == pytest.approx(float(y_signed(y) @ x[:len(y)]))
        copy = m.clone()
        assert pyo.value(copy.objective) == pytest.approx(pyo.value(m.objective), rel=1e-12)
        # both paths solve it alike
        fast, general = sm.solve(m, SOLVER), sm.solve(m, SOLVER, path="general")
        assert fast.path == "fast" and general.path == "general"
        assert fast.objective == pytest.approx(general.objective, rel=1e-7)


def y_signed(y):
    return np.where(np.asarray(y) > 0, 1.0, -1.0)


def test_an_edited_lazy_objective_or_balance_is_not_the_record():
    from svm_models.model.record import verify

    X, y = data(l=40, sep=0.3)
    m = sm.build("soft_l1_dual", X, y, C=1.0)
    m.objective.set_value(m.objective.expr - 0.1 * m.alpha[3])
    assert "objective" in verify(m._svm.record)
    m = sm.build("soft_l1_dual", X, y, C=1.0)
    m.balance.deactivate()
    assert "balance" in verify(m._svm.record)
    sol = sm.solve(m, SOLVER)           # without y'alpha = 0: b is free, alpha hits C
    assert sol.path == "mixed"
    assert abs(float(y_signed(y) @ sol.alpha)) > 1e-3


def test_labels_and_points_store_nothing_per_point():
    import io

    import pyomo.environ as pyo

    X, y = data(l=30, sep=0.3)
    m = sm.build("soft_l1_dual", X, y, C=1.0)
    assert [m.y[i] for i in m.I] == y_signed(y).tolist()
    assert isinstance(m.I, pyo.RangeSet) and len(m.I) == 30 and list(m.I)[-1] == 29
    with pytest.raises(TypeError, match="immutable"):
        m.y[3] = 1.0
    with pytest.raises(KeyError):
        m.y[30]
    out = io.StringIO()
    m.y.pprint(ostream=out)
    assert "Size=30" in out.getvalue() and f"29 : {y_signed(y)[29]:5.1f}".replace(" ", "") in \
        out.getvalue().replace(" ", "")
    assert m.y.extract_values() == dict(enumerate(y_signed(y).tolist()))
    assert not m.y.is_reference()


def test_dense_rows_equal_the_general_placement():
    import scipy.sparse as sp

    from svm_models.model.pieces import dense_rows, place

    rng = np.random.default_rng(5)
    m, n = 7, 20
    M = rng.standard_normal((m, 3))
    M[2, 1] = 0.0                                       # an exact zero: not stored
    s = rng.standard_normal(m)
    cases = [
        ([(np.array([2, 5, 9]), M, s[:, None])], [(np.array([11]), s), (np.arange(12, 19), np.ones(m))]),
        ([(np.array([9, 2, 5]), M, -1.0)], [(np.arange(m) + 10, s)]),  # unsorted columns
        ([(np.array([13, 14, 15]), M, 1.0)], [(np.array([0]), s)]),   # single before dense
    ]
    for dense, single in cases:
        A = dense_rows(m, n, dense, single)
        blocks = [(pos, sp.csr_matrix(Mk * sc)) for pos, Mk, sc in dense]
        for col, v in single:
            cols = np.broadcast_to(col, (m,))
            blocks.append((np.arange(n), sp.csr_matrix((v, (np.arange(m), cols)), shape=(m, n))))
        B = place(blocks, m, n)
        assert A.has_sorted_indices and np.all(np.diff(A.indices[A.indptr[0]:A.indptr[1]]) > 0)
        assert (A != B).nnz == 0 and A.nnz == B.nnz
        A.has_sorted_indices = False
        A.sort_indices()
        assert np.array_equal(A.indices, dense_rows(m, n, dense, single).indices)


@pytest.mark.parametrize("name", ["soft_l1_dual", "soft_l1_primal"])
def test_a_changed_training_array_is_refused_not_solved(name, monkeypatch):
    """Above ``SHARE_ABOVE_BYTES`` (32 MB) the caller's X is referred to, not copied: a
    change in place is refused. (The limit is lowered here to keep the test small; below it
    the model keeps a copy, test_defects.py shows that a change then changes nothing.)"""
    import svm_models.data as data_module
    from svm_models.errors import DataError

    X, y = data(l=40, sep=0.3)
    X = np.ascontiguousarray(X)
    monkeypatch.setattr(data_module, "SHARE_ABOVE_BYTES", X.nbytes - 1)
    m = sm.build(name, X, y, C=1.0)
    assert np.shares_memory(m._svm.data.X, X) and not m._svm.data.X.flags.writeable
    assert X.flags.writeable                       # the caller's array is left as it was
    before = sm.solve(m, SOLVER)
    X[5, 1] += 0.5
    with pytest.raises(DataError, match="changed in place"):
        sm.solve(m, SOLVER)
    with pytest.raises(DataError, match="changed in place"):
        sm.extract(m)
    from svm_models.embed import optimize
    info = optimize(m, SOLVER)          # the model itself is the built one (recorded rows)
    assert info.objective == pytest.approx(before.objective, rel=1e-6)
    with pytest.raises(DataError, match="changed in place"):
        sm.extract(m)                    # reading a solution against X is refused
    X[5, 1] -= 0.5                                  # restored exactly: the same model again
    assert sm.solve(m, SOLVER).objective == pytest.approx(before.objective, rel=1e-10)
    # an array that is not contiguous is copied: changing it changes nothing
    Xf = np.asfortranarray(X)
    m2 = sm.build(name, Xf, y, C=1.0)
    Xf[5, 1] += 0.5
    assert sm.solve(m2, SOLVER).objective == pytest.approx(before.objective, rel=1e-10)


def test_the_model_costs_little_more_than_its_variables():
    """Python-side memory of a linear model at l = 20,000, d = 20 (tracemalloc): the
    variables (a Pyomo object and a dict entry each, ~160 B), the record's row matrix
    (12 B per nonzero) and per-point lists of references (8 B each), the copy of X aside
    (made below 32 MB); before this issue the 1-norm dual cost ~1,070 B a point besides
    those (labels, index set, the objective's and the balance row's terms, the factor F)."""
    import gc
    import tracemalloc

    rng = np.random.default_rng(0)
    l, d = 20_000, 20
    X = rng.standard_normal((l, d))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    sm.build("soft_l1_dual", X[:50], y[:50])            # first-call costs out
    per_point = {}
    for name in ("soft_l1_dual", "soft_l1_primal"):
        gc.collect()
        tracemalloc.start()
        m = sm.build(name, X, y, C=1.0)
        gc.collect()
        size = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        nnz = sum(g.A.nnz for g in m._svm.record.rows)
        copy = 0 if np.shares_memory(m._svm.data.X, X) else X.nbytes   # below 32 MB: a copy
        per_point[name] = (size - 12 * nnz - copy) / l
        del m
    # dual: ~220 B a point besides its row matrix (was ~1,070); primal: ~460 B, with two
    # lazy members per point (margin, f) whose keys are xi's own int objects
    assert per_point["soft_l1_dual"] < 300, per_point
    assert per_point["soft_l1_primal"] < 520, per_point


def test_a_model_read_while_the_array_was_changed_is_still_the_built_one(monkeypatch):
    """Found by review: with X referred to (not copied), a model whose lazy rows were first
    read (written to a file) while the caller's X was changed, then X restored exactly, was
    the changed model under a matching checksum: extract() returned a wrong 'optimal'. The
    lazy rows now read the recorded rows, frozen at the build."""
    import pyomo.environ as pyo

    import svm_models.data as data_module

    X, y = data(l=30, d=3, sep=0.3)
    X = np.ascontiguousarray(X)
    monkeypatch.setattr(data_module, "SHARE_ABOVE_BYTES", 0)
    for name in ("soft_l1_primal", "soft_l1_dual"):
        ref = sm.fit(X.copy(), y, name, SOLVER, C=1.0)
        m = sm.build(name, X, y, C=1.0)
        saved = X[:5].copy()
        X[:5] *= 3.0
        text = io_text(m)                 # every lazy row built now, while X is changed
        X[:5] = saved
        assert text == io_text(sm.build(name, X.copy(), y, C=1.0))
        pyo.SolverFactory("highs").solve(m)
        sol = sm.extract(m)
        assert sol.status.value == "optimal"
        assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
        assert sol.b == pytest.approx(ref.b, abs=1e-5)


def io_text(m) -> str:
    import io

    out = io.StringIO()
    for c in ("margin", "f", "factor", "Fv", "balance", "objective"):
        comp = m.component(c)
        if comp is not None:
            comp.pprint(ostream=out)
    return out.getvalue()


def test_extract_marks_values_whose_certificate_fails():
    """extract() after the user's own solve: values far from optimal on a model proved to be
    the formulation are not called optimal (as solve() refuses them)."""
    import pyomo.environ as pyo

    X, y = data(l=30, d=3, sep=0.3)
    m = sm.build("soft_l1_dual", X, y, C=1.0)
    pyo.SolverFactory("highs").solve(m)
    assert sm.extract(m).status.value == "optimal"
    for i in range(0, 30, 3):                # the user's values, moved off the optimum
        m.alpha[i].set_value(0.5 * (m.alpha[i].value or 0.0) + 0.25)
    sol = sm.extract(m)
    assert sol.status.value == "numerical_error" and "duality gap" in sol.extra["message"]


def test_a_deleted_balance_row_is_explained_not_a_traceback():
    """Found by review: deleting ``balance`` and solving raised an AttributeError from the
    extractor. The model is solved as it is (general path) and b is reported unavailable."""
    X, y = data(l=30, d=3, sep=0.3)
    m = sm.build("soft_l1_dual", X, y, C=1.0)
    m.del_component(m.balance)
    sol = sm.solve(m, SOLVER)
    assert sol.path == "general" and "balance" in sol.extra["general_path_reason"]
    assert np.isnan(sol.b) and "not available" in sol.extra["b_source"]
    # without y'alpha = 0 the dual's optimum is at least the SVM's
    assert sol.objective >= sm.fit(X, y, "soft_l1_dual", SOLVER, C=1.0).objective - 1e-7

"""``svm_models.model.built``'s lazily evaluated kernel matrix (``LazySignedGram``): its
products kept in columns within a memory budget, beyond it computed in row chunks with
nothing kept (issue 48: the support vectors' columns at l = 50,000 were 4.8 GB), and the
products remembered. References: ``G = D_y K D_y`` formed whole from ``Kernel.gram``; the
same fit with the columns kept; another backend (Clarabel) on the same model."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_moons

import svm_models as sm
from svm_models.kernels import make_kernel
from svm_models.model.built import LazySignedGram


def _problem(l=23, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(l, 4))
    y = np.where(rng.random(l) < 0.5, -1.0, 1.0)
    kern = make_kernel("rbf", gamma=0.4, X=X)
    return X, y, kern, kern.gram(X) * np.outer(y, y)


def _counted(lazy) -> list:
    """``lazy``'s kernel evaluations recorded: the number of columns (rows of the first
    argument) of each block of K it computes, in a list returned (and kept up to date)."""
    seen, gram = [], lazy.kernel.gram

    class Counting:
        def gram(self, A, B=None):
            seen.append(A.shape[0])
            return gram(A, B)

    lazy.kernel = Counting()
    return seen


def _vectors(rng, l, cols):
    v = np.zeros(l)
    v[cols] = rng.normal(size=len(cols))
    V = np.zeros((l, 3))
    V[cols] = rng.normal(size=(len(cols), 3))
    return v, V


# chunks of 1 point, of 7 (23 = 3 x 7 + 2: a last chunk shorter), of 22 (the last of 1), and
# one chunk; column blocks of 1, 2 (the last short), 4 and 512 (one block)
@pytest.mark.parametrize("rows", [1, 7, 22, 23, 1000])
@pytest.mark.parametrize("block", [1, 2, 4, 512])
def test_a_streamed_product_is_the_product_whatever_the_chunks(monkeypatch, rows, block):
    """With no column kept (budget 0) every product is computed in row chunks of ``rows``
    points and column blocks of ``block``: equal to ``G v`` formed whole, for vectors with
    few, many and all entries non-zero (one column, a vector, a matrix), and nothing kept."""
    X, y, kern, G = _problem()
    l = len(y)
    monkeypatch.setattr(LazySignedGram, "KEEP_BYTES", 0)
    monkeypatch.setattr(LazySignedGram, "COLUMN_BLOCK", block)
    rng = np.random.default_rng(rows * 1000 + block)
    for cols in ([5], [0, 22], [3, 1, 20, 7, 11, 12, 13], list(range(l))):
        lazy = LazySignedGram(kern, X, y)
        blocks = []

        class Recording:   # the size of each block of K evaluated
            def gram(self, A, B=None):
                blocks.append(8 * A.shape[0] * (len(A) if B is None else B.shape[0]))
                return kern.gram(A, B)

        lazy.kernel = Recording()
        # (the chunk's bytes for `rows` rows of len(cols) columns)
        monkeypatch.setattr(LazySignedGram, "CHUNK_BYTES", 8 * len(cols) * rows)
        v, V = _vectors(rng, l, cols)
        V[cols[0]] = 1.0   # (a row of ones: non-zero)
        np.testing.assert_allclose(lazy @ v, G @ v, rtol=0, atol=1e-14)
        np.testing.assert_allclose(lazy @ V, G @ V, rtol=0, atol=1e-14)
        assert not lazy.materialised and np.all(lazy._chunk < 0)   # nothing kept
        assert max(blocks) <= LazySignedGram.CHUNK_BYTES   # the chunks' bound


def test_kept_and_streamed_products_agree_and_the_budget_decides(monkeypatch):
    """Within the budget a product's columns are kept (and reused); a product that would
    take more columns than the budget holds is streamed and keeps none; both equal ``G v``,
    and a streamed product equals the kept one to round-off."""
    X, y, kern, G = _problem(40, seed=7)
    l = len(y)
    monkeypatch.setattr(LazySignedGram, "COLUMN_BLOCK", 3)
    monkeypatch.setattr(LazySignedGram, "CHUNK_BYTES", 8 * 5 * 6)   # a few rows per chunk
    monkeypatch.setattr(LazySignedGram, "KEEP_BYTES", 10 * l * 8)   # ten columns
    rng = np.random.default_rng(1)
    lazy = LazySignedGram(kern, X, y)
    small, _ = _vectors(rng, l, [2, 9, 31, 30, 4, 17])
    np.testing.assert_allclose(lazy @ small, G @ small, rtol=0, atol=1e-14)
    assert int(np.sum(lazy._chunk >= 0)) == 6   # kept
    large, _ = _vectors(rng, l, list(range(0, l, 3)))   # 14 columns: beyond the budget
    streamed = lazy @ large
    np.testing.assert_allclose(streamed, G @ large, rtol=0, atol=1e-14)
    assert int(np.sum(lazy._chunk >= 0)) == 6   # (none of them kept)
    more, _ = _vectors(rng, l, [2, 9, 31, 5, 6])   # 8 kept in all: within the budget
    np.testing.assert_allclose(lazy @ more, G @ more, rtol=0, atol=1e-14)
    assert int(np.sum(lazy._chunk >= 0)) == 8
    beyond, _ = _vectors(rng, l, [2, 11, 12, 13])   # 3 more: 11 in all, beyond the budget
    np.testing.assert_allclose(lazy @ beyond, G @ beyond, rtol=0, atol=1e-14)
    assert int(np.sum(lazy._chunk >= 0)) == 8
    full, _ = _vectors(rng, l, [2, 4, 9, 12, 13])   # (2, 4, 9 in the first block) 2 more: 10
    np.testing.assert_allclose(lazy @ full, G @ full, rtol=0, atol=1e-14)
    assert int(np.sum(lazy._chunk >= 0)) == 10      # the budget exactly: kept
    monkeypatch.setattr(LazySignedGram, "KEEP_BYTES", 10**12)
    kept = LazySignedGram(kern, X, y) @ large
    np.testing.assert_allclose(streamed, kept, rtol=0, atol=1e-14)


def test_products_are_remembered_by_value_and_never_shared(monkeypatch):
    """The same vector (equal, not the same object) gives the same product without computing
    it again; a vector that differs in one entry is computed; the caller's changes to a
    result or to its vector do not reach the remembered product."""
    X, y, kern, G = _problem(30, seed=2)
    monkeypatch.setattr(LazySignedGram, "KEEP_BYTES", 0)
    lazy = LazySignedGram(kern, X, y)
    calls = _counted(lazy)   # (the columns of each kernel block evaluated)
    rng = np.random.default_rng(3)
    v, _ = _vectors(rng, 30, [1, 4, 9, 10, 28])
    first = lazy @ v
    n = len(calls)
    again = lazy @ v.copy()
    assert len(calls) == n and np.array_equal(first, again)   # remembered
    again[:] = 7.0          # a caller's change to its result...
    v_seen = v.copy()
    v[1] = 5.0              # ...and to its vector
    np.testing.assert_allclose(lazy @ v_seen, G @ v_seen, rtol=0, atol=1e-14)
    np.testing.assert_allclose(lazy @ v, G @ v, rtol=0, atol=1e-14)   # computed
    assert len(calls) > n
    for k in range(LazySignedGram.MEMO + 2):   # more vectors than it remembers, then the first
        w, _ = _vectors(rng, 30, [k, k + 3])
        np.testing.assert_allclose(lazy @ w, G @ w, rtol=0, atol=1e-14)
    np.testing.assert_allclose(lazy @ v_seen, G @ v_seen, rtol=0, atol=1e-14)


def test_a_fit_with_streamed_products_is_the_fit_with_kept_columns(monkeypatch):
    """The whole unbuilt libsvm fit (the solver's objective, the polish, the certificate)
    with every kernel product streamed in chunks of 7 points: the same classifier as with
    the columns kept (alpha and b to 1e-12, the certificate's classifier and status), and
    Clarabel's optimum on the same model."""
    X, y = make_moons(120, noise=0.3, random_state=5)
    kw = {"kernel": "rbf", "gamma": 0.8, "C": 2.0}
    kept = sm.fit(X, y, solver="libsvm", **kw)
    n_sv = int(np.sum(kept.alpha > 0))
    monkeypatch.setattr(LazySignedGram, "KEEP_BYTES", 0)
    monkeypatch.setattr(LazySignedGram, "CHUNK_BYTES", 8 * 7 * n_sv)
    monkeypatch.setattr(LazySignedGram, "COLUMN_BLOCK", 5)
    streamed = sm.fit(X, y, solver="libsvm", **kw)
    assert streamed.status is sm.Status.optimal and streamed.solver == "libsvm"
    ck, cs = kept.extra["certificate"], streamed.extra["certificate"]
    assert cs["certified"] and cs["classifier"] == ck["classifier"]
    np.testing.assert_allclose(streamed.alpha, kept.alpha, rtol=0, atol=1e-12 * kw["C"])
    assert abs(streamed.b - kept.b) <= 1e-12 * max(1.0, abs(kept.b))
    assert abs(streamed.objective - kept.objective) <= 1e-12 * abs(kept.objective)
    ref = sm.fit(X, y, solver="clarabel", **kw)
    assert abs(streamed.objective - ref.objective) <= 1e-8 * abs(ref.objective)
    np.testing.assert_allclose(streamed.decision_function(X), ref.decision_function(X),
                               atol=1e-6)


@pytest.mark.parametrize("kw", [{"kernel": "rbf", "gamma": 0.4}, {"kernel": "linear"},
                                {"kernel": "precomputed"}], ids=lambda k: k["kernel"])
@pytest.mark.parametrize("block", [8, 8 * 3 * 5, 2**26])
def test_kernel_rows_times_is_those_rows_of_the_product(monkeypatch, kw, block):
    """``BuiltSVM.kernel_rows_times(rows, v)`` (the polish's right-hand side) equals
    ``(K v)[rows]`` with K formed whole, read in column blocks of one, of five (three rows)
    and of all, through the lazy matrix, the linear kernel's factor and a user's matrix."""
    from svm_models.model.built import BuiltSVM

    X, y, kern, _ = _problem(23, seed=9)
    data = X if kw["kernel"] != "precomputed" else np.exp(-0.3 * ((X[:, None] - X[None]) ** 2)
                                                          .sum(-1))
    model = sm.build("soft_l1_dual", data, y, C=1.0, quad_form="dense", **kw)
    svm = model._svm
    K = np.asarray(svm.K) if kw["kernel"] != "linear" else X @ X.T
    monkeypatch.setattr(BuiltSVM, "ROWS_BLOCK_BYTES", block)
    rng = np.random.default_rng(block)
    rows = np.array([4, 0, 17, 22, 9])[: 3 if block == 8 * 3 * 5 else 5]
    read = []
    inner = svm.K

    class Recording:   # the size of each block of K read
        def __getitem__(self, key):
            out = inner[key]
            read.append(8 * out.size)
            return out

    if kw["kernel"] != "linear":
        svm.K = Recording()
    for cols in ([3], [1, 2, 7, 11, 12, 13, 20], list(range(23))):
        v, _ = _vectors(rng, 23, cols)
        np.testing.assert_allclose(svm.kernel_rows_times(rows, v), (K @ v)[rows], rtol=0,
                                   atol=1e-13)
    # (at least one column of the rows a block)
    assert max(read, default=0) <= max(BuiltSVM.ROWS_BLOCK_BYTES, 8 * rows.size)


@pytest.mark.parametrize("rows", [1, 6, 1000])
def test_a_streamed_product_near_a_remembered_one_is_updated(monkeypatch, rows):
    """A vector that differs from a remembered one in fewer than half as many entries as it
    has non-zero (alpha with its zeros and bounds made exact, alpha polished on its free
    set) is computed from the columns where they differ only, added to the remembered
    product: equal to ``G v`` formed whole; one that differs in more is computed afresh.
    Chunks of 1, 6 and all points."""
    X, y, kern, G = _problem(40, seed=11)
    monkeypatch.setattr(LazySignedGram, "KEEP_BYTES", 0)
    monkeypatch.setattr(LazySignedGram, "COLUMN_BLOCK", 4)
    lazy = LazySignedGram(kern, X, y)
    read = _counted(lazy)   # (the columns evaluated: the rows of k(X[cols], X[R]))
    rng = np.random.default_rng(rows)
    v, _ = _vectors(rng, 40, list(range(0, 40, 2)))   # 20 non-zero
    monkeypatch.setattr(LazySignedGram, "CHUNK_BYTES", 8 * 20 * rows)
    np.testing.assert_allclose(lazy @ v, G @ v, rtol=0, atol=1e-14)
    near = v.copy()
    near[[0, 6]] = 0.0          # two cut to zero,
    near[10] = 1.5              # one changed,
    near[[1, 3]] = 0.25         # two new: 5 differ, fewer than 21 // 2
    read.clear()
    np.testing.assert_allclose(lazy @ near, G @ near, rtol=0, atol=1e-13)
    assert set(read) == {5}     # only those columns evaluated
    far = v.copy()
    far[::4] *= 2.0             # 10 differ, not fewer than 20 // 2: afresh
    read.clear()
    np.testing.assert_allclose(lazy @ far, G @ far, rtol=0, atol=1e-13)
    assert set(read) == {20}
    _, V = _vectors(rng, 40, list(range(0, 40, 2)))   # a matrix, then one entry changed
    np.testing.assert_allclose(lazy @ V, G @ V, rtol=0, atol=1e-13)
    V[2, 1] += 1.0
    np.testing.assert_allclose(lazy @ V, G @ V, rtol=0, atol=1e-13)


def test_a_held_matrix_is_the_whole_G_and_no_kernel_is_evaluated_again():
    """``hold(K)`` (a fold's matrix sliced by cross-validation): products, blocks and the
    diagonal are G's formed whole, with no kernel evaluation after it; a matrix of another
    shape is refused."""
    X, y, kern, G = _problem()
    lazy = LazySignedGram(kern, X, y)
    v = _vectors(np.random.default_rng(2), len(y), [0, 3, 7])[0]
    lazy @ v   # (columns kept before: dropped by hold)
    lazy.hold(kern.gram(X))
    seen = _counted(lazy)
    np.testing.assert_allclose(lazy @ v, G @ v, rtol=1e-13, atol=1e-14)
    rows, cols = np.array([1, 5]), np.array([2, 3, 9])
    np.testing.assert_allclose(lazy[np.ix_(rows, cols)], G[np.ix_(rows, cols)], rtol=1e-14)
    np.testing.assert_allclose(np.asarray(lazy), G, rtol=1e-14)
    assert seen == []
    with pytest.raises(ValueError, match="shape"):
        lazy.hold(np.eye(3))


class _ReadCounting(np.ndarray):
    """A matrix that records how many entries each row read (``K[rows]``) takes."""

    def __getitem__(self, key):
        out = np.asarray(super().__getitem__(key))
        if isinstance(key, (np.ndarray, tuple)):
            self.read.append(out.size)
        return out


@pytest.mark.parametrize("keep", [True, False])
def test_a_held_larger_matrix_is_read_where_needed_as_the_kernel_would_be(monkeypatch, keep):
    """``hold(K, idx)`` (one-vs-one: the matrix of all the training points, a pair's points
    ``idx`` in it): products (kept or streamed), blocks, the diagonal and the whole matrix
    are G's on those points, no kernel evaluated; a product reads only the columns where
    the vector is not zero; a matrix that is not square, or indices of another length, are
    refused."""
    if not keep:
        monkeypatch.setattr(LazySignedGram, "KEEP_BYTES", 0)
        monkeypatch.setattr(LazySignedGram, "CHUNK_BYTES", 8 * 3 * 5)   # row chunks of 5
    X, y, kern, G = _problem()
    rng = np.random.default_rng(5)
    others = rng.normal(size=(17, 4))   # the matrix of more points: ours at idx, in its order
    allX = np.vstack([others, X])
    perm = rng.permutation(len(allX))
    allX = allX[perm]
    idx = np.argsort(perm)[len(others):]
    big = kern.gram(allX).view(_ReadCounting)
    big.read = []
    lazy = LazySignedGram(kern, X, y)
    lazy.hold(big, idx)
    seen = _counted(lazy)
    v, V = _vectors(rng, len(y), [0, 3, 7])
    np.testing.assert_allclose(lazy @ v, G @ v, rtol=1e-13, atol=1e-14)
    assert 0 < sum(big.read) <= 3 * len(allX)   # (three columns' rows of the big matrix)
    np.testing.assert_allclose(lazy @ V, G @ V, rtol=1e-13, atol=1e-14)
    # a matrix with most rows non-zero (then the whole block is copied), held afresh (not
    # copied yet): the same product
    lazy.hold(big, idx)
    W = _vectors(rng, len(y), list(range(0, len(y) - 8)))[1]
    assert not lazy.materialised
    np.testing.assert_allclose(lazy @ W, G @ W, rtol=1e-13, atol=1e-14)
    rows, cols = np.array([1, 5]), np.array([2, 3, 9])
    np.testing.assert_allclose(lazy[np.ix_(rows, cols)], G[np.ix_(rows, cols)], rtol=1e-14)
    np.testing.assert_allclose(lazy[rows, rows], np.diag(G)[rows], rtol=1e-14)
    np.testing.assert_allclose(np.asarray(lazy), G, rtol=1e-14)
    assert seen == []
    with pytest.raises(ValueError, match="square"):
        lazy.hold(np.zeros((40, 39)), idx)
    with pytest.raises(ValueError, match="indices"):
        lazy.hold(np.asarray(big), idx[:-1])


def test_a_product_that_needs_one_more_column_evaluates_it():
    """Kept columns are K's, the signs applied to the vectors: products, and the columns read
    back, equal ``G``'s -- a product whose vector has one entry (one column to evaluate), then
    one that needs exactly one more beside the kept ones, then mixed signs on both sides."""
    X, y, kern, G = _problem(17, seed=11)
    lazy = LazySignedGram(kern, X, y)
    one = np.zeros(len(y))
    one[5] = -2.5
    np.testing.assert_allclose(lazy @ one, G @ one, rtol=0, atol=1e-14)
    more = np.zeros(len(y))
    more[[5, 12]] = [0.7, 1.3]   # (5 kept, 12 the one to evaluate)
    np.testing.assert_allclose(lazy @ more, G @ more, rtol=0, atol=1e-14)
    assert sorted(np.flatnonzero(lazy._chunk >= 0)) == [5, 12]
    V = np.zeros((len(y), 2))
    V[[5, 12, 3]] = [[1.0, -1.0], [2.0, 0.5], [-0.3, 4.0]]
    np.testing.assert_allclose(lazy @ V, G @ V, rtol=0, atol=1e-14)
    np.testing.assert_allclose(lazy._columns(np.array([12, 3, 5])), G[:, [12, 3, 5]],
                               rtol=0, atol=1e-14)


@pytest.mark.parametrize("rows", [1, 127, 128, 129, 300])
def test_the_rbf_columns_are_scikit_learns_and_the_same_whichever_rows(rows):
    """The rbf kernel on two sets of points (the support vectors' columns), computed in
    blocks of rows: scikit-learn's ``rbf_kernel`` to round-off, on both sides of a block's
    end; each entry the same number whichever rows are asked with it (kept columns and
    streamed chunks read the same K); no entry above 1 (a distance below 0 clipped)."""
    from sklearn.metrics.pairwise import rbf_kernel

    rng = np.random.default_rng(rows)
    X = rng.normal(size=(rows, 6)) * 3.0
    Z = np.vstack([rng.normal(size=(211, 6)), X[:5]])
    kern = make_kernel("rbf", gamma=0.37, X=X)
    K = kern.gram(X, Z)
    np.testing.assert_allclose(K, rbf_kernel(X, Z, gamma=0.37), rtol=0, atol=1e-14)
    for part in (np.arange(rows)[::-2], np.arange(min(rows, 3))):
        np.testing.assert_array_equal(kern.gram(X[part], Z), K[part])
    assert np.all(K <= 1.0)   # (a distance below 0 by round-off clipped: never above 1)


@pytest.mark.parametrize("name", ["linear", "poly", "rbf"])
def test_a_kernel_on_two_sets_of_points_and_on_one_is_scikit_learns(name):
    """Each kernel's matrix between two sets of points and on one set: scikit-learn's
    pairwise kernels to round-off; on one set exactly symmetric, the rbf kernel's diagonal
    exactly 1; points in single precision computed in double."""
    from sklearn.metrics.pairwise import pairwise_kernels

    rng = np.random.default_rng(3)
    X, Z = rng.normal(size=(300, 5)), rng.normal(size=(40, 5))   # (several blocks of rows)
    kw = {"gamma": 0.3, "degree": 3, "coef0": 1.5} if name == "poly" else (
        {"gamma": 0.3} if name == "rbf" else {})
    kern = make_kernel(name, X=X, **kw)
    ref = {k: v for k, v in kw.items()} if name != "linear" else {}
    for A, B in ((X, Z), (Z, X)):
        np.testing.assert_allclose(kern.gram(A, B), pairwise_kernels(A, B, metric=name, **ref),
                                   rtol=1e-13, atol=1e-13)
    K = kern.gram(X)
    np.testing.assert_allclose(K, pairwise_kernels(X, metric=name, **ref), rtol=1e-13,
                               atol=1e-13)
    np.testing.assert_array_equal(K, K.T)
    if name == "rbf":
        assert np.all(np.diag(K) == 1.0)
    # single-precision points: computed in double (as libsvm computes them), not in single
    X32, Z32 = X.astype(np.float32), Z.astype(np.float32)
    for got, want in ((kern.gram(X32, Z32), pairwise_kernels(X32.astype(float), Z32.astype(
            float), metric=name, **ref)), (kern.gram(X32), pairwise_kernels(
            X32.astype(float), metric=name, **ref))):
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("gamma", [1e290, 1e300, np.finfo(float).max])
def test_the_rbf_kernel_of_a_huge_gamma_is_zero_between_distinct_points(gamma):
    """gamma so large that gamma |x|^2 overflows: the kernel between distinct points is 0
    (exp of -inf), never NaN (inf - inf), on two sets of points as on one, and no overflow
    is reported; the diagonal of the matrix on one set stays 1."""
    import warnings

    rng = np.random.default_rng(4)
    X = rng.normal(size=(70, 3)) * 1e5   # (the matrix on one set: two blocks of rows)
    kern = make_kernel("rbf", gamma=gamma, X=X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cols, K = kern.gram(X, X[:4] + 1.0), kern.gram(X)
        mirrored = kern.gram(X, -X)   # (the same largest norm on both sides)
    np.testing.assert_array_equal(cols, np.zeros((70, 4)))
    np.testing.assert_array_equal(mirrored, np.zeros((70, 70)))
    np.testing.assert_array_equal(K, np.eye(70))


def test_the_rbf_columns_of_gamma_taken_after_the_distance_are_scikit_learns(monkeypatch):
    """The order the columns take where gamma folded in would overflow (the distance first,
    gamma after), forced on ordinary data: scikit-learn's ``rbf_kernel`` to round-off."""
    from sklearn.metrics.pairwise import rbf_kernel

    import svm_models.kernels as kernels

    monkeypatch.setattr(kernels, "RBF_FUSED_MAX", 0.0)
    rng = np.random.default_rng(8)
    X, Z = rng.normal(size=(130, 4)), rng.normal(size=(9, 4))
    np.testing.assert_allclose(make_kernel("rbf", gamma=0.6, X=X).gram(X, Z),
                               rbf_kernel(X, Z, gamma=0.6), rtol=0, atol=1e-14)


def test_a_point_against_itself_is_the_kernels_diagonal_in_every_block():
    """Where a block of columns pairs a point with itself, its entry is the kernel's diagonal
    ``k(x, x)`` -- as in the whole symmetric matrix and the elementwise diagonal -- not
    ``exp(-gamma (|x|^2 - 2 x.x + |x|^2))``, round-off times gamma (data of scale 1e3,
    gamma 1e6: 0.9998 and less): kept columns, streamed chunks and blocks alike."""
    rng = np.random.default_rng(9)
    X = rng.normal(size=(40, 3)) * 1e3
    y = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    kern = make_kernel("rbf", gamma=1e6, X=X)
    G = kern.gram(X) * np.outer(y, y)   # (the identity, signed: the points are distinct)
    np.testing.assert_array_equal(G, np.eye(40))
    lazy = LazySignedGram(kern, X, y)
    v = rng.normal(size=40)
    np.testing.assert_array_equal(lazy @ v, v)
    np.testing.assert_array_equal(lazy._columns(np.array([3, 17, 5])), np.eye(40)[:, [3, 17, 5]])
    F = np.array([30, 2, 11])
    np.testing.assert_array_equal(lazy[np.ix_(F, np.array([11, 30, 7]))],
                                  np.eye(40)[np.ix_(F, [11, 30, 7])])
    streamed = LazySignedGram(kern, X, y)
    streamed.KEEP_BYTES, streamed.CHUNK_BYTES = 0, 8 * 7 * 3   # (nothing kept, small chunks)
    np.testing.assert_array_equal(streamed @ v, v)


def test_distinct_values_are_numpys_unique():
    """The kernel columns' bookkeeping and the labels' classes take the distinct values by a
    sort (``data.distinct``): numpy's own ``unique`` on every size (none, one, repeats, all
    equal, unsorted) and kind (indices, labels as floats with -0.0, booleans, strings)."""
    from svm_models.data import distinct

    rng = np.random.default_rng(5)
    cases = [np.array([], dtype=np.intp), np.array([4]), np.array([3, 3, 3]),
             np.array([2, 0, 2, 1, 0])]
    cases += [rng.integers(0, max(1, n // 3), size=n) for n in (2, 3, 10, 100, 1000)]
    cases += [np.array([2.5, -0.0, 0.0, 2.5, -1.0]), np.array([True, False, True]),
              np.array(["b", "a", "b"]), np.where(rng.random(360) > 0.5, 1, -1)]
    for idx in cases:
        got = distinct(idx)
        assert np.array_equal(got, np.unique(idx)) and got.dtype == idx.dtype, idx


@pytest.mark.parametrize("idx, runs", [
    ([3, 4, 5, 9, 10], ([3, 9], [6, 11], None)),          # ascending: in place
    ([9, 3, 10, 4, 5], ([3, 9], [6, 11], [3, 0, 4, 1, 2])),   # interleaved runs
    ([7], ([7], [8], None)),
    ([2, 2, 3], None),                                     # a repeated place
    (list(range(0, 40, 2)), None),                         # 20 runs: more than HELD_RUNS_MAX
    (list(range(0, 16, 2)), (list(range(0, 16, 2)), list(range(1, 17, 2)), None)),   # 8
    (list(range(0, 18, 2)), None),                         # 9 runs
    ([], None)])
def test_held_places_read_as_runs(idx, runs):
    """A pair's places in a larger matrix: runs of consecutive places (their starts and
    ends) and where each place sits in their concatenation; None where a place repeats or
    they are too many runs."""
    from svm_models.model.built import HELD_RUNS_MAX, _runs

    got = _runs(np.asarray(idx, dtype=np.intp))
    if runs is None:
        assert got is None
        return
    assert len(runs[0]) <= HELD_RUNS_MAX
    for g, r in zip(got, runs):
        if r is None:
            assert g is None
        else:
            np.testing.assert_array_equal(g, r)


@pytest.mark.parametrize("layout", ["runs", "reversed runs", "ascending", "interleaved",
                                    "three runs", "scattered"])
def test_held_rows_and_columns_are_the_matrix_entries_exactly(layout):
    """``K[rows, :]`` and ``K[:, S]`` of the points a larger held matrix indexes are its
    entries, exactly (no arithmetic: copies), whether the places are runs read as slices
    (in the points' order or another) or single places gathered; without a held matrix,
    columns are None (the kernel would be evaluated), and from the materialised G they are
    K's."""
    rng = np.random.default_rng(8)
    n, l = 40, 23
    big = rng.normal(size=(n, n))
    big = big + big.T
    idx = {"runs": np.r_[10:22, 28:39],
           "reversed runs": np.r_[10:22, 28:39][::-1],
           "ascending": np.r_[0:5, 8:26],
           "interleaved": np.column_stack([np.r_[0:12], np.r_[20:32]]).ravel()[:l],
           "three runs": np.r_[33:40, 0:8, 15:23],
           "scattered": rng.permutation(n)[:l]}[layout]
    X, y, kern, _ = _problem(l=l)
    lazy = LazySignedGram(kern, X, y)
    assert lazy.columns(np.array([0, 2])) is None
    lazy.hold(big, idx)
    seen = _counted(lazy)
    K = big[np.ix_(idx, idx)]
    rows = np.array([4, 0, 17, 9])
    np.testing.assert_array_equal(lazy._held_rows(rows), K[rows])
    np.testing.assert_array_equal(lazy.columns(rows), K[:, rows])
    np.testing.assert_array_equal(lazy._kernel_block(rows, None), K[rows])
    assert (lazy._runs is None) == (layout == "scattered")
    assert seen == []
    G = lazy.materialise()
    np.testing.assert_array_equal(lazy.columns(rows), G[:, rows] * np.outer(y, y[rows]))


def test_a_product_remembered_is_the_answer_and_not_recomputed():
    """``remember(v, G v)`` (the polish's product from its columns): ``self @ v`` gives it
    back (a copy), without reading the matrix; through BuiltSVM.remember_product, K v."""
    from svm_models.model.built import BuiltSVM, SignedGram

    X, y, kern, G = _problem()
    lazy = LazySignedGram(kern, X, y)
    seen = _counted(lazy)
    v = _vectors(np.random.default_rng(3), len(y), [1, 2, 8])[0]
    Gv = G @ v
    lazy.remember(v.copy(), Gv.copy())
    out = lazy @ v
    np.testing.assert_array_equal(out, Gv)
    out[:] = 0.0   # (a copy: the remembered one stays)
    np.testing.assert_array_equal(lazy @ v, Gv)
    assert seen == []
    svm = BuiltSVM(formulation="soft_l1_dual", data=None, kernel=kern, block=None,
                   record=None, K=SignedGram(lazy, y))
    K = G * np.outer(y, y)
    u = _vectors(np.random.default_rng(4), len(y), [0, 5])[0]
    svm.remember_product(u, K @ u)
    np.testing.assert_array_equal(svm.kernel_times(u), (y * (y * (K @ u))))
    assert seen == []

"""What a builder leaves on the block it filled: ``block._svm``, a :class:`BuiltSVM`.

So that :func:`svm_models.solve` and :func:`svm_models.extract` work on any block -- also
one inside a model of the user's own -- knowing what was built from what.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data import distinct as _distinct


@dataclass(eq=False)
class BuiltSVM:
    """What was built from what.

    ``formulation`` the registered name, ``data`` the validated
    :class:`~svm_models.data.Dataset`, ``kernel`` the resolved
    :class:`~svm_models.kernels.Kernel`, ``record`` the
    :class:`~svm_models.model.record.Record`, ``K`` the training Gram matrix (None where not
    needed), ``L`` a factor ``K = L L'`` where the model uses one (kernel primals, of full
    column rank; the factor form of a dual: the kernel's exact features or a low-rank factor),
    ``facts`` what the family's ``extract`` and hooks need to read a solution (g range, quad
    form...): the family's own typed facts, a dataclass defined in its module (classic's
    ``ClassicFacts``, c_tuning's ``CTuningFacts``, radius_margin's ``RadiusFacts``; None
    where a family needs none),
    ``weight`` the per-point factors of C (scikit-learn's ``sample_weight``; None: all 1).
    """

    formulation: str
    data: Any
    kernel: Any
    block: Any
    record: Any
    K: np.ndarray | None = None
    L: np.ndarray | None = None
    facts: Any = None
    weight: np.ndarray | None = None

    def point_C(self, C):
        """The penalty of each point, ``C * weight_i`` (``C`` itself without weights; None for
        the hard margin)."""
        if C is None or self.weight is None:
            return C
        return C * self.weight

    def gram_factor(self) -> np.ndarray | None:
        """``M`` with ``K = M M'`` where one is at hand: ``X`` for the linear kernel (also when
        the dense form keeps ``K``), ``L`` when the build kept no ``K``; else None. ``v'Kv`` is
        then ``|M'v|^2``, never negative and free of the cancellation in ``v'Kv`` (data offset
        by 1.7e3: ``K``'s entries 1e7, and ``v'Kv`` came out -0.047 where it is 6e-7)."""
        if self.kernel is not None and getattr(self.kernel, "is_linear", False):
            return self.data.X
        if self.K is not None:
            return None
        return self.L if self.L is not None else self.data.X

    def kernel_times(self, v: np.ndarray) -> np.ndarray:
        """``K v`` on the training points, through the factor :meth:`gram_factor` when there
        is one (``X`` for the linear kernel, also in the dense form: ``X (X'v)`` keeps the
        decision values of data far from the origin, where ``K v`` with entries 1e13 lost
        them to round-off and b with them), else through K."""
        M = self.gram_factor()
        if M is not None:
            return M @ (M.T @ v)
        return self.K @ v

    #: :meth:`kernel_rows_times` reads K in blocks of at most this many bytes
    ROWS_BLOCK_BYTES = 64 * 2**20

    def kernel_rows_times(self, rows: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``(K v)[rows]`` (a vector ``v``) from those rows of K alone: the columns where
        ``v`` is not zero, in blocks of at most :attr:`ROWS_BLOCK_BYTES` -- the polish's
        right-hand side reads the free points' rows, never the l rows of :meth:`kernel_times`;
        through the factor where :meth:`kernel_times` uses it."""
        rows = np.asarray(rows, dtype=int)
        M = self.gram_factor()
        if M is not None:
            return M[rows] @ (M.T @ v)
        nz = np.flatnonzero(v)
        out = np.zeros(rows.size)
        step = max(1, int(self.ROWS_BLOCK_BYTES // (8 * max(rows.size, 1))))
        for c in range(0, nz.size, step):
            cols = nz[c:c + step]
            out += self.K[np.ix_(rows, cols)] @ v[cols]
        return out

    #: :meth:`support_columns` hands over at most this many bytes
    COLUMNS_BYTES = 64 * 2**20

    def support_columns(self, S: np.ndarray) -> np.ndarray | None:
        """``K[:, S]`` (all the points' rows, unsigned) where it is read without evaluating
        the kernel -- from a matrix formed already (a caller's held one, one-vs-one's pairs;
        the dense form's) -- in at most :attr:`COLUMNS_BYTES`; else None (products through a
        factor, the kernel evaluated, or too large: :meth:`kernel_times` as always). The
        polish reads its free block, its right-hand side and its product from these columns,
        gathered once a round."""
        if self.K is None or self.gram_factor() is not None:
            return None
        if 8 * self.K.shape[0] * max(len(S), 1) > self.COLUMNS_BYTES:
            return None
        columns = getattr(self.K, "columns", None)
        return None if columns is None else columns(np.asarray(S, dtype=np.intp))

    def remember_product(self, v: np.ndarray, Kv: np.ndarray) -> None:
        """``K v`` computed from :meth:`support_columns`, kept as :meth:`kernel_times`' answer
        for ``v`` (the certificate, the bias and ``w'w`` read the polished alpha's product
        again): where ``K`` remembers products (a lazy signed matrix), else nothing."""
        G = getattr(self.K, "G", None)
        if isinstance(G, LazySignedGram) and self.gram_factor() is None:
            y = self.K.y
            G.remember(np.asarray(y * v, dtype=float), np.asarray(y * Kv, dtype=float))
            # (G (y v) = y (K v): K v = y * that, exactly; both new arrays, kept as they are)


#: :meth:`LazySignedGram.hold` reads its points' places in a larger matrix as runs of
#: consecutive ones where there are at most this many runs
HELD_RUNS_MAX = 8


def _runs(idx: np.ndarray):
    """``(starts, ends, order)``: the distinct integers ``idx`` as runs of consecutive ones,
    ``[starts[k], ends[k])`` ascending, and where each entry of ``idx`` sits in their
    concatenation (None: in place, ``idx`` ascending); None where ``idx`` repeats a value or
    needs more than :data:`HELD_RUNS_MAX` runs."""
    if idx.size == 0:
        return None
    s = np.sort(idx)
    step = np.diff(s)
    if (step == 0).any():
        return None
    cut = np.flatnonzero(step != 1) + 1
    if cut.size >= HELD_RUNS_MAX:
        return None
    starts = s[np.concatenate(([0], cut))]
    ends = s[np.concatenate((cut - 1, [s.size - 1]))] + 1
    order = None if (s == idx).all() else np.searchsorted(s, idx)
    return starts, ends, order


class SignedGram:
    """The training Gram matrix ``K``, stored once as the signed matrix ``G = D_y K D_y`` that
    a dense dual's quadratic form uses (``K_ij = y_i y_j G_ij``): reads like ``K`` for what
    post-processing needs -- products ``K @ v``, blocks ``K[np.ix_(r, c)]``, ``np.asarray``
    (which forms K: l x l) -- without keeping a second l x l matrix."""

    def __init__(self, G: np.ndarray, y: np.ndarray):
        self.G, self.y = G, y

    @property
    def shape(self) -> tuple:
        return self.G.shape

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        y = self.y
        if v.ndim == 1:
            return y * (self.G @ (y * v))
        return y[:, None] * (self.G @ (y[:, None] * v))

    def __getitem__(self, key):
        rows, cols = key
        return self.G[key] * (self.y[rows] * self.y[cols])

    def __array__(self, dtype=None, copy=None):
        K = self.G * self.y[:, None]
        K *= self.y[None, :]
        return K if dtype is None else K.astype(dtype)

    def columns(self, S: np.ndarray) -> np.ndarray | None:
        """``K[:, S]`` where it is read, not evaluated (:meth:`BuiltSVM.support_columns`)."""
        if isinstance(self.G, np.ndarray):
            B = self.G[:, S] * self.y[:, None]
            B *= self.y[S][None, :]
            return B
        columns = getattr(self.G, "columns", None)
        return None if columns is None else columns(S)


class LazySignedGram:
    """The signed Gram matrix ``G = D_y K D_y`` of a kernel on the training points, evaluated
    only where it is read: products ``G @ v`` from the columns where ``v`` is not zero (the
    support vectors; each column evaluated once and kept), blocks ``G[rows, cols]``, the
    diagonal -- and the whole l x l matrix only when something needs it
    (:meth:`materialise`, ``np.asarray``: a backend that takes the dense matrix, the Pyomo
    expression of the quadratic form). A backend that evaluates the kernel itself (libsvm)
    and the post-processing, which reads the support vectors' columns only, never form it: an
    exact rbf SVM at l = 50,000 without a 20 GB matrix. Used as a dense
    :class:`~svm_models.model.forms.QuadBlock`'s matrix and, through :class:`SignedGram`, as
    the K of the post-processing.

    The columns of a product are kept while all those kept fit in :attr:`KEEP_BYTES`; a
    product that needs more is computed in row chunks of at most :attr:`CHUNK_BYTES`
    (:meth:`_streamed`), nothing kept: the support vectors' columns at l = 50,000 (12,000
    of them, 4.8 GB) are never held whole. The last :attr:`MEMO` products are remembered
    (the certificate, the bias and ``w'w`` read ``K alpha`` of the same alpha): each entry
    of K is computed once per distinct vector, and a streamed product of a vector close to a
    remembered one is that product updated (:meth:`_updated`). Kept or streamed, each entry
    is the same number (the kernel evaluated in the same orientation), each product the same
    sum up to the order of its terms."""

    #: columns evaluated per block (l x COLUMN_BLOCK floats at a time)
    COLUMN_BLOCK = 512
    #: the columns kept for products take at most this many bytes (beyond: streamed)
    KEEP_BYTES = 256 * 2**20
    #: a streamed product evaluates K in row chunks of at most this many bytes
    CHUNK_BYTES = 64 * 2**20
    #: how many products (vector and result) are remembered
    MEMO = 4

    def __init__(self, kernel, X: np.ndarray, y: np.ndarray):
        self.kernel, self.X, self.y = kernel, X, y
        self.shape = (X.shape[0], X.shape[0])
        self.dtype = np.dtype(float)
        self.ndim = 2
        self._full = None
        # the columns of K evaluated so far (K's, unsigned: a product puts the labels' signs
        # on its vectors), in chunks (each column stored as a row of its chunk: a chunk is
        # written once and never copied again, however many are added), and where each
        # column sits: its chunk (-1: not yet) and row
        self._chunks: list = []
        self._chunk_cols: list = []
        self._chunk = np.full(X.shape[0], -1)
        self._row = np.zeros(X.shape[0], dtype=np.intp)
        self._memo: list = []   # (vector, G @ vector), the latest first
        self._source = None     # (K, idx): a caller's kernel matrix these points index
        self._runs = None       # idx as runs of consecutive places (_runs)

    @property
    def materialised(self) -> bool:
        return self._full is not None

    def materialise(self) -> np.ndarray:
        """``G`` as an l x l array (computed once)."""
        if self._full is None:
            G = self._kernel_block(None, None)
            G *= self.y[:, None]
            G *= self.y[None, :]
            self._full = G
            self._chunks, self._chunk_cols = [], []
            self._chunk[:] = -1
        return self._full

    def hold(self, K: np.ndarray, idx: np.ndarray | None = None) -> None:
        """Take ``K``, this kernel's matrix formed by the caller, instead of evaluating the
        kernel: without ``idx``, ``K`` on these points (products then dense); with ``idx``,
        a larger matrix whose rows and columns ``idx`` are these points (one-vs-one's pairs
        in the matrix of all the training points): the entries read from it only where they
        are needed, as the kernel's would be (the support vectors' columns, the free block),
        none copied before -- where ``idx`` are a few runs of consecutive places (a pair's
        two classes in a matrix ordered by class), its rows' runs copied as slices."""
        K = np.asanyarray(K, dtype=float)
        self._chunks, self._chunk_cols, self._memo = [], [], []
        self._chunk[:] = -1
        if idx is not None:
            idx = np.asarray(idx, dtype=np.intp)
            if K.ndim != 2 or K.shape[0] != K.shape[1] or idx.shape != (self.shape[0],):
                raise ValueError(f"a square kernel matrix and {self.shape[0]} indices into it "
                                 f"are needed; got {K.shape} and {idx.shape}")
            self._full, self._source = None, (K, idx)
            self._runs = _runs(idx)
            return
        if K.shape != self.shape:
            raise ValueError(f"a kernel matrix of shape {self.shape} is needed; got {K.shape}")
        self._full, self._source, self._runs = K * np.outer(self.y, self.y), None, None

    def _kernel_block(self, rows, cols) -> np.ndarray:
        """``K[rows, cols]`` (unsigned), a new array: from the held matrix (:meth:`hold` with
        ``idx``) or the kernel evaluated. ``cols`` None: all the points; ``rows`` None (then
        ``cols`` None too): the whole matrix."""
        if self._source is not None:
            K, idx = self._source
            if rows is None:
                return K[idx][:, idx]
            if cols is None:   # (whole rows)
                return self._held_rows(rows)
            return K[np.ix_(idx[rows], idx[cols])]
        if rows is None:   # (the symmetric evaluation: exactly symmetric)
            return self.kernel.gram(self.X)
        B = self.kernel.gram(self.X[rows], self.X if cols is None else self.X[cols])
        self._own_diagonal(B, np.asarray(rows), cols)
        return B

    def _own_diagonal(self, B: np.ndarray, rows: np.ndarray, cols) -> None:
        """The entries of ``B = K[rows, cols]`` that pair a point with itself set to the
        kernel's diagonal ``k(x, x)`` (as the elementwise diagonal and the whole symmetric
        matrix have it): the rbf kernel of a point with itself between two sets, ``|x|^2 -
        2 x.x + |x|^2``, is round-off times gamma -- 0 instead of 1 at gamma 1e300, 0.9998
        at 1e6 on data of scale 1e3 -- and the certificate then read another problem than
        the solver's (a dual objective 32.5 certified where the optimum is 30)."""
        diagonal = getattr(self.kernel, "diagonal", None)
        if diagonal is None:
            return
        if cols is None:   # (whole rows: row i's own column is rows[i])
            at, own = np.arange(rows.size), rows
        else:
            _, at, own = np.intersect1d(rows, np.asarray(cols), return_indices=True)
        if at.size:
            B[at, own] = diagonal(self.X[rows[at]])

    def __array__(self, dtype=None, copy=None):
        G = self.materialise()
        return G if dtype is None else G.astype(dtype)

    def columns(self, S: np.ndarray) -> np.ndarray | None:
        """``K[:, S]`` (unsigned) from the held matrix or the materialised one; None where
        the kernel would be evaluated (:meth:`BuiltSVM.support_columns`)."""
        if self._full is not None:
            B = self._full[:, S] * self.y[:, None]
            B *= self.y[S][None, :]
            return B
        if self._source is not None:   # (K is symmetric: its rows S, the faster way)
            return self._held_rows(S).T
        return None

    def _held_rows(self, rows: np.ndarray) -> np.ndarray:
        """``K[rows, :]`` of these points from the held matrix: where these points' places
        in it are a few runs of consecutive ones (one-vs-one's pairs in a matrix ordered by
        class), each row's runs copied as slices and the columns put in these points' order
        (a pair of digits' classes, 80 rows: 25 us against 70 us for a gather of single
        entries); else that gather."""
        K, idx = self._source
        r = idx[rows]
        if self._runs is None:
            return K[np.ix_(r, idx)]
        starts, ends, order = self._runs
        out = np.empty((r.size, idx.size))
        at = 0
        for s0, s1 in zip(starts, ends):
            out[:, at:at + s1 - s0] = K[r, s0:s1]
            at += s1 - s0
        return out if order is None else out[:, order]

    def remember(self, v: np.ndarray, Gv: np.ndarray) -> None:
        """``G v``, computed elsewhere from this matrix's entries, as the answer of ``self @
        v`` (the latest remembered; both arrays kept as they are: the caller's, not changed
        after)."""
        self._memo = [(v, Gv)] + self._memo[:self.MEMO - 1]

    def _ensure(self, idx: np.ndarray) -> None:
        """Evaluate the columns ``idx`` not kept yet."""
        missing = _distinct(idx[self._chunk[idx] < 0])
        if missing.size == 0:
            return
        for s in range(0, missing.size, self.COLUMN_BLOCK):
            part = missing[s:s + self.COLUMN_BLOCK]
            R = self._kernel_block(part, None)   # K[:, part]' (the kernel is symmetric;
            self._chunk[part] = len(self._chunks)   # kept unsigned: the signs go on vectors)
            self._row[part] = np.arange(part.size)
            self._chunks.append(R)
            self._chunk_cols.append(part)

    def _columns(self, idx: np.ndarray) -> np.ndarray:
        """``G[:, idx]`` (l x len(idx))."""
        idx = np.asarray(idx, dtype=int)
        self._ensure(idx)
        out = np.empty((self.shape[0], idx.size))
        which = self._chunk[idx]
        for c in _distinct(which):
            at = np.flatnonzero(which == c)
            out[:, at] = self._chunks[c][self._row[idx[at]]].T
        out *= self.y[:, None]
        out *= self.y[idx][None, :]
        return out

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        for seen, product in self._memo:
            if seen.shape == v.shape and np.array_equal(seen, v):
                return product.copy()
        nz = None
        if self._full is None and self._source is not None:
            nz = np.flatnonzero(v if v.ndim == 1 else np.any(v != 0, axis=1))
            if 2 * nz.size > self.shape[0]:   # (most columns of a held matrix: copied whole)
                self.materialise()
        if self._full is not None:
            out = self._full @ v
            if v.ndim == 1:   # (the post-processing reads one alpha's product 3 times)
                self._memo = [(v.copy(), out.copy())] + self._memo[:self.MEMO - 1]
            return out
        if nz is None:
            nz = np.flatnonzero(v if v.ndim == 1 else np.any(v != 0, axis=1))
        new = _distinct(nz[self._chunk[nz] < 0]).size
        if (int(np.sum(self._chunk >= 0)) + new) * self.shape[0] * 8 <= self.KEEP_BYTES:
            out = self._kept(v, nz)
        else:
            out = self._updated(v, nz)
        self._memo = [(v.copy(), out.copy())] + self._memo[:self.MEMO - 1]
        return out

    def _updated(self, v: np.ndarray, nz: np.ndarray) -> np.ndarray:
        """``G v`` streamed (:meth:`_streamed`): where a remembered product's vector ``u``
        differs from ``v`` in fewer than half as many entries as ``v`` has non-zero (the
        solver's alpha and the same with its zeros and bounds made exact, or polished on
        its free set), ``G u + G (v - u)`` from the columns where they differ; else
        ``G v`` from all of ``v``'s."""
        best = None
        for seen, product in self._memo if v.ndim == 1 else ():
            if seen.shape == v.shape:
                diff = np.flatnonzero(seen != v)
                if diff.size < nz.size // 2 and (best is None or diff.size < best[0].size):
                    best = diff, seen, product
        if best is None:
            return self._streamed(v, nz)
        diff, seen, product = best
        d = np.zeros_like(v)
        d[diff] = v[diff] - seen[diff]
        return product + self._streamed(d, np.flatnonzero(d))

    def _kept(self, v: np.ndarray, nz: np.ndarray) -> np.ndarray:
        """``G v = D_y K D_y v`` from the kept columns ``nz`` of K (those missing evaluated
        and kept): the signs applied to the vectors, exactly (each term the same number as
        with the signs in the matrix)."""
        self._ensure(nz)
        ys = self.y if v.ndim == 1 else self.y[:, None]
        yv = ys * v
        out = np.zeros((self.shape[0],) + v.shape[1:])
        used = np.zeros(len(self._chunks), dtype=bool)
        used[self._chunk[nz]] = True
        for c in np.flatnonzero(used):   # K[:, cols] (y v)[cols] = chunk' (y v)[cols]
            out += self._chunks[c].T @ yv[self._chunk_cols[c]]
        out *= ys
        return out

    def _streamed(self, v: np.ndarray, nz: np.ndarray) -> np.ndarray:
        """``G v`` with the columns ``nz`` evaluated in chunks of rows ``R`` (at most
        :attr:`CHUNK_BYTES` each: ``k(X[nz], X[R])``, the orientation of the kept columns),
        nothing kept: ``(G v)_R = D_y[R] K[R, nz] (D_y v)[nz]``, summed over the same blocks
        of :attr:`COLUMN_BLOCK` columns as :meth:`_kept` (the signs are exact)."""
        l = self.shape[0]
        out = np.zeros((l,) + v.shape[1:])
        if nz.size == 0:
            return out
        ys = self.y[nz] if v.ndim == 1 else self.y[nz][:, None]
        yv = ys * v[nz]
        rows = max(1, int(self.CHUNK_BYTES // (8 * nz.size)))
        for r in range(0, l, rows):
            B = self._kernel_block(nz, np.arange(r, min(r + rows, l)))   # K[nz, R]
            part = out[r:r + rows]
            for c in range(0, nz.size, self.COLUMN_BLOCK):
                part += B[c:c + self.COLUMN_BLOCK].T @ yv[c:c + self.COLUMN_BLOCK]
            del B
        out *= self.y if v.ndim == 1 else self.y[:, None]
        return out

    def __getitem__(self, key):
        if self._full is not None:
            return self._full[key]
        rows, cols = key
        r, c = np.asarray(rows), np.asarray(cols)
        if r.ndim == 1 and c.ndim == 1:   # elementwise pairs (the diagonal: rows == cols)
            if np.array_equal(r, c):
                if self._source is not None:
                    K, idx = self._source
                    return K[idx[r], idx[r]] * (self.y[r] ** 2)
                return self.kernel.diagonal(self.X[r]) * (self.y[r] ** 2)
            return np.array([self[np.array([i]), np.array([j])].item() for i, j in zip(r, c)])
        r, c = r.ravel(), c.ravel()      # np.ix_(rows, cols): a block
        B = self._kernel_block(r, c)
        B *= self.y[r][:, None]
        B *= self.y[c][None, :]
        return B

    def __mul__(self, other):
        return self.materialise() * other

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return (f"LazySignedGram({self.shape[0]} x {self.shape[1]}, "
                f"{'materialised' if self._full is not None else f'{int(np.sum(self._chunk >= 0))} columns'})")


def svm_blocks(model) -> list:
    """The active blocks of ``model`` (itself included) that hold an SVM built by
    :func:`svm_models.build` -- the block its :class:`BuiltSVM` names."""
    found = []
    for blk in model.block_data_objects(active=True, descend_into=True):
        if getattr(blk, "_svm", None) is not None and blk._svm.block is blk:
            found.append(blk)
    return found


def single_record(model):
    """The record of the one SVM built inside ``model``, or None (none, or several): what a
    solve of a whole model of the user's (``optimize``, the Pyomo solver names) hands the
    dispatcher, so that a model that is one SVM takes the fast path and one edited or
    composed the mixed path. None as well for a block that is part of a larger model: the
    record's proof reads the whole model, while Pyomo solves the block alone (a row outside
    it must not be solved with it; the general reader reads the block only)."""
    if model.model() is not model:
        return None
    found = svm_blocks(model)
    return found[0]._svm.record if len(found) == 1 else None


"""Kernels and Gram matrices, with scikit-learn's parameter names.

``linear``      k(x, z) = x.z
``poly``        k(x, z) = (gamma x.z + coef0) ** degree
``rbf``         k(x, z) = exp(-gamma ||x - z||^2)
``precomputed`` the user passes the Gram matrix itself (train: l x l; test: m x l)

``gamma="scale"`` (the default, as in scikit-learn's ``SVC``) means ``1 / (d * X.var())``;
``gamma="auto"`` means ``1 / d``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations_with_replacement
from math import comb, factorial

import numpy as np

from .errors import DataError, ParameterError, plain
from .tolerances import FACTOR_TOL, PSD_TOL

KERNELS = ("linear", "poly", "rbf", "precomputed")

#: a poly kernel's monomials are its factor when there are at most this many (and at most l):
#: each kernel value then costs that many products. Measured with libsvm at l = 4,000: 4-55
#: monomials solved in 0.2-0.6 s against 1.1-1.8 s for the matrix; 1,540 (degree 3, 20
#: features) in 3.1-8.7 s against 1.4-2.0 s
POLY_FEATURES_MAX = 256


#: ``gamma (max |x|^2 + max |z|^2)`` below which the rbf kernel's columns fold gamma into
#: their product and norms (``Kernel._rbf_blocks``: no sum of those terms can overflow)
RBF_FUSED_MAX = 1e300


@dataclass(frozen=True)
class Kernel:
    """A kernel with its parameters resolved to numbers (``gamma`` is a float here)."""

    name: str = "linear"
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0

    @property
    def is_linear(self) -> bool:
        return self.name == "linear"

    def gram(self, X: np.ndarray, Z: np.ndarray | None = None) -> np.ndarray:
        """Gram matrix ``K[i, j] = k(X[i], Z[j])`` (``Z`` defaults to ``X``).

        For ``precomputed`` the matrix passed as ``X`` is returned as it is.
        """
        if self.name == "precomputed":
            return np.asarray(X, dtype=float)
        X = np.asarray(X, dtype=float)   # (float32 points computed in double, as libsvm)
        Z = None if Z is None else np.asarray(Z, dtype=float)
        Zm = X if Z is None else Z
        if self.name == "linear":
            return X @ Zm.T
        if self.name == "rbf" and Z is not None:
            return self._rbf_blocks(X, Z)
        # in place, row block by row block: one array of the result's size, no temporaries
        D = X @ Zm.T
        if self.name == "poly":
            D *= self.gamma
            D += self.coef0
            return np.power(D, self.degree, out=D)
        # rbf on X itself: ||x - z||^2 = (|x|^2 + |z|^2) - 2 x.z (exactly symmetric: X X'
        # one symmetric product, |x|^2 + |z|^2 summed first), clipped at 0 against round-off;
        # the steps after the product :attr:`RBF_SYMMETRIC_ROWS` rows at a time, each block
        # while it is in the cache (each entry the same number as step by step on the whole)
        xx = np.einsum("ij,ij->i", X, X)
        step = self.RBF_SYMMETRIC_ROWS
        T = np.empty((min(step, D.shape[0]), D.shape[1]))   # (|x|^2 + |z|^2: one buffer)
        with np.errstate(over="ignore"):   # (a huge gamma: -inf, an entry of 0)
            for r in range(0, D.shape[0], step):
                B = D[r:r + step]
                B *= -2.0
                B += np.add(xx[r:r + step, None], xx[None, :], out=T[:B.shape[0]])
                np.maximum(B, 0.0, out=B)
                np.fill_diagonal(B[:, r:r + step], 0.0)   # (a point against itself)
                np.multiply(B, -self.gamma, out=B)
                np.exp(B, out=B)
        return D

    #: :meth:`gram` of the rbf kernel on one set of points takes the steps after its product
    #: this many rows at a time (digits, 1,797 points: 14.3 -> 12.7 ms)
    RBF_SYMMETRIC_ROWS = 64

    #: :meth:`gram` of the rbf kernel on two sets of points goes this many rows at a time
    #: through all its steps, each block while it is in the cache (one pass over memory, not
    #: five: 15-25% of the time of the support vectors' columns)
    RBF_ROWS = 128

    def _rbf_blocks(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """The rbf kernel's ``k(X[i], Z[j])``, :attr:`RBF_ROWS` rows at a time: ``exp(min(0,
        (2 gamma x).z - gamma |x|^2 - gamma |z|^2))`` (the distance clipped at 0 against
        round-off), four passes over each block; each entry the same number whichever rows
        are asked with it (the kept and the streamed columns of a product). (The whole
        symmetric matrix stays :meth:`gram`'s: one product of ``X`` with itself, exactly
        symmetric.)"""
        g = float(self.gamma)
        xx, zz = np.einsum("ij,ij->i", X, X), np.einsum("ij,ij->i", Z, Z)
        # gamma folded into the product and the norms -- unless that overflows (gamma 1e300:
        # inf - inf, NaN): then the distance first, times gamma after the clip (-inf: 0)
        fused = g * (float(np.max(xx, initial=0.0)) + float(np.max(zz, initial=0.0))) \
            < RBF_FUSED_MAX
        f = g if fused else 1.0
        gx, gz, X2 = f * xx, f * zz, (2.0 * f) * X
        n = X.shape[0]
        out = np.empty((n, Z.shape[0]))
        step, r = self.RBF_ROWS, 0
        while r < n:
            # (no block of one row after others: its product would be BLAS's matrix-vector
            # one, another sum than a block's)
            e = n if n - (r + step) == 1 else min(n, r + step)
            D = out[r:e]
            np.matmul(X2[r:e], Z.T, out=D)
            D -= gx[r:e, None]
            D -= gz[None, :]
            np.minimum(D, 0.0, out=D)
            if not fused:
                with np.errstate(over="ignore"):   # (-inf: an entry of 0)
                    D *= g
            np.exp(D, out=D)
            r = e
        return out

    def diagonal(self, X: np.ndarray) -> np.ndarray:
        """``k(x_i, x_i)`` for the rows of ``X`` (the diagonal of the Gram matrix, without it)."""
        if self.name == "precomputed":
            return np.diagonal(np.asarray(X, dtype=float)).copy()
        if self.name == "rbf":
            return np.ones(X.shape[0])
        xx = np.einsum("ij,ij->i", X, X)
        return xx if self.name == "linear" else (self.gamma * xx + self.coef0) ** self.degree

    def feature_dim(self, d: int) -> int | None:
        """The dimension of the kernel's exact finite feature map on ``d`` features, or None
        when it has none here (rbf, precomputed, a poly kernel with ``coef0 < 0``): ``d`` for
        the linear kernel; for ``poly`` the number of monomials of degree ``degree`` in the
        ``d`` features and, when ``coef0 > 0``, one constant (:meth:`features`)."""
        if self.is_linear:
            return d
        if self.name != "poly" or self.coef0 < 0:
            return None
        return comb(d + (self.coef0 > 0) + self.degree - 1, self.degree)

    def features(self, X: np.ndarray) -> np.ndarray:
        """The exact feature map ``phi`` with ``k(x, z) = phi(x).phi(z)`` (:meth:`feature_dim`
        columns): ``X`` for the linear kernel; for ``poly``, with ``u = (sqrt(gamma) x,
        sqrt(coef0))``, ``(u.v)^p = sum_a multinomial(p; a) u^a v^a``, so ``phi_a(x) =
        sqrt(multinomial(p; a)) u^a`` over the multi-indices ``a`` with ``|a| = p``.

        Each entry is a product of ``p`` numbers and one square root, exact to a few units of
        round-off; ``Phi Phi'`` is positive semidefinite by construction, where the Gram matrix
        of a poly kernel of large dynamic range, evaluated entry by entry, is indefinite at the
        round-off of its largest entries (and a solver then sees a QP that is not convex).
        """
        if self.is_linear:
            return X
        if self.feature_dim(X.shape[1]) is None:
            raise ParameterError(f"the {self.name} kernel has no exact finite feature map here")
        U = np.sqrt(self.gamma) * np.asarray(X, dtype=float)
        if self.coef0 > 0:
            U = np.hstack([U, np.full((U.shape[0], 1), np.sqrt(self.coef0))])
        p, n = self.degree, U.shape[1]
        cols = []
        for a in combinations_with_replacement(range(n), p):
            counts = np.bincount(a, minlength=n)
            mult = factorial(p) // int(np.prod([factorial(int(c)) for c in counts]))
            cols.append(np.sqrt(float(mult)) * np.prod(U[:, list(a)], axis=1))
        return np.column_stack(cols) if cols else np.zeros((U.shape[0], 0))

    def to_dict(self) -> dict:
        return {"name": self.name, "gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}


@dataclass(frozen=True)
class KernelSum:
    """``k(x, z) = sum_k weights_k k_k(x, z)``: the kernel an R-SVM_mu+ with several kernels
    learns (the weights are its mu)."""

    kernels: tuple
    weights: tuple
    name: str = "sum"

    is_linear = False

    def gram(self, X: np.ndarray, Z: np.ndarray | None = None) -> np.ndarray:
        out = np.zeros((X.shape[0], (X if Z is None else Z).shape[0]))
        for w, k in zip(self.weights, self.kernels):
            if w != 0.0:
                out += float(w) * k.gram(X, Z)
        return out

    def to_dict(self) -> dict:
        return {"name": "sum", "kernels": [k.to_dict() for k in self.kernels],
                "weights": [float(w) for w in self.weights]}


def kernel_from_dict(d: dict):
    """The kernel :meth:`Kernel.to_dict` (or :meth:`KernelSum.to_dict`,
    :meth:`LowRankKernel.to_dict`) wrote."""
    if d.get("name") == "low_rank":
        return LowRankKernel(Kernel(**d["base"]), np.array(d["landmarks"], dtype=float),
                             np.array(d["pivot_factor"], dtype=float))
    if d.get("name") == "sum":
        return KernelSum(tuple(Kernel(**k) for k in d["kernels"]), tuple(d["weights"]))
    return Kernel(**d)


def check_kernel_name(kernel) -> str:
    """``kernel`` when it is one of :data:`KERNELS`, or ParameterError (naming the closest)."""
    if not isinstance(kernel, str) or kernel not in KERNELS:
        import difflib

        close = difflib.get_close_matches(str(kernel), KERNELS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ParameterError(f"unknown kernel {kernel!r}{hint}; choose one of {', '.join(KERNELS)}")
    return kernel


def check_gamma(gamma):
    """``gamma`` as a finite positive float, or the string ``"scale"`` or ``"auto"`` (resolved
    against the data by :func:`make_kernel`); ParameterError otherwise."""
    if isinstance(gamma, str):
        if gamma in ("scale", "auto"):
            return gamma
    else:
        try:   # any number float() takes (numpy scalars, 0-d arrays, Fraction, Decimal)
            g = float(gamma)
        except (TypeError, ValueError):
            g = np.nan
        if np.isfinite(g) and g > 0:
            return g
    raise ParameterError(f"gamma must be a positive number, 'scale' or 'auto'; got {plain(gamma)!r}")


def check_degree(degree) -> int:
    """The poly kernel's ``degree`` as a positive int, or ParameterError."""
    if (isinstance(degree, (bool, str)) or not isinstance(degree, (int, float, np.number))
            or not np.isfinite(degree) or int(degree) != degree or degree < 1):
        raise ParameterError(f"degree must be a positive integer; got {plain(degree)!r}")
    return int(degree)


def check_coef0(coef0) -> float:
    """The poly kernel's ``coef0`` as a finite float, or ParameterError."""
    if (isinstance(coef0, (bool, str)) or not isinstance(coef0, (int, float, np.number))
            or not np.isfinite(coef0)):
        raise ParameterError(f"coef0 must be a finite number; got {plain(coef0)!r}")
    return float(coef0)


def make_kernel(kernel="linear", X: np.ndarray | None = None, *, gamma="scale", degree=3,
                coef0=0.0) -> Kernel:
    """Resolve a kernel name and scikit-learn style parameters against training data ``X``."""
    if isinstance(kernel, Kernel):
        return kernel
    if check_kernel_name(kernel) in ("linear", "precomputed"):
        return Kernel(name=kernel)
    g = check_gamma(gamma)
    if isinstance(g, str):
        if X is None:
            raise ParameterError(f"gamma={plain(gamma)!r} needs the training data to be resolved")
        if g == "scale":
            with np.errstate(over="ignore", invalid="ignore"):
                var = float(X.var())
            if not np.isfinite(var):   # (else gamma 0: a ParameterError naming no data)
                raise DataError(
                    f"the {kernel} kernel's gamma='scale' (1 / (n_features * X.var())) overflows "
                    "on these data: X.var() is not a finite float (largest |feature| "
                    f"{float(np.max(np.abs(X))):.3g}). Scale the features (e.g. "
                    "sklearn.preprocessing.StandardScaler) before fitting, or give gamma a "
                    "number")
            g = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        else:
            g = 1.0 / X.shape[1]
    if kernel == "poly":
        degree, coef0 = check_degree(degree), check_coef0(coef0)
    return Kernel(name=kernel, gamma=g, degree=int(degree), coef0=float(coef0))


def check_psd(K: np.ndarray, *, name: str = "kernel matrix", tol: float = PSD_TOL) -> None:
    """Raise :class:`DataError` unless ``K`` is symmetric positive semidefinite (to ``tol``)."""
    scale = max(1.0, float(np.max(np.abs(K))))
    asym = float(np.max(np.abs(K - K.T)))
    if asym > tol * scale * 10:
        raise DataError(f"the {name} is not symmetric (largest |K - K'| = {asym:.3g})")
    lam_min = float(np.linalg.eigvalsh((K + K.T) / 2)[0])
    if lam_min < -tol * scale * K.shape[0]:
        raise DataError(
            f"the {name} is not positive semidefinite (smallest eigenvalue {lam_min:.3g}); "
            "an SVM needs a PSD kernel"
        )


def factor(K: np.ndarray, *, tol: float = FACTOR_TOL, max_rank: int | None = None) -> np.ndarray:
    """A factor ``L`` (l x r) of full column rank with ``K ~= L L'``, by pivoted Cholesky.

    LAPACK's ``dpstrf`` (blocked, complete pivoting) stops when the largest remaining pivot
    falls below ``tol * trace(K) / l``, so the residual ``K - L L'`` has trace at most
    ``tol * trace(K)``: exact to that tolerance, and every column of ``L`` carries a pivot
    above the threshold (full column rank). ``max_rank`` keeps at most that many columns.
    (For the linear kernel the exact factor is ``X`` itself: see :func:`kernel_factor`.)
    """
    from scipy.linalg.lapack import dpstrf

    n = K.shape[0]
    diag = np.diag(K)
    total = float(diag.sum())
    if n == 0 or total <= 0.0:
        return np.zeros((n, 0))
    c, piv, rank, info = dpstrf(np.asarray(K, dtype=float), tol=tol * total / n, lower=1)
    if info < 0:
        raise DataError(f"the kernel matrix could not be factored (LAPACK dpstrf info={info})")
    rank = int(rank) if max_rank is None else min(int(rank), int(max_rank))
    L = np.zeros((n, rank))
    L[piv - 1] = np.tril(c)[:, :rank]
    return L


def kernel_factor(kernel: Kernel, X: np.ndarray, K: np.ndarray | None = None, *,
                  tol: float = FACTOR_TOL) -> np.ndarray:
    """Factor of the training Gram matrix: the kernel's exact feature map where
    :func:`exact_factor_dim` takes it (``X`` for linear; the monomials of a poly kernel,
    :meth:`Kernel.features`), pivoted Cholesky otherwise."""
    if exact_factor_dim(kernel, *X.shape) is not None:
        return kernel.features(X)
    return factor(kernel.gram(X) if K is None else K, tol=tol)


def exact_factor_dim(kernel, l: int, d: int) -> int | None:
    """The number of columns of the exact factor :func:`kernel_factor` takes for ``l`` points
    of ``d`` features (the kernel's feature map: always for the linear kernel, for a poly
    kernel when it has at most ``min(l, POLY_FEATURES_MAX)`` columns), or None when it
    factors the Gram matrix."""
    dim = kernel.feature_dim(d) if isinstance(kernel, Kernel) else None
    if dim is None or (not kernel.is_linear and dim > min(l, POLY_FEATURES_MAX)):
        return None
    return dim


# ---------------------------------------------------------------------------------------
# Low-rank kernels: pivoted incomplete Cholesky without the Gram matrix


@dataclass(frozen=True, eq=False)
class LowRankKernel:
    """The kernel of a low-rank model: the Nystroem kernel of the pivots of an incomplete
    Cholesky factor, ``k~(x, z) = phi(x)'phi(z)`` with ``phi(x) = L_P^{-1} k(P, x)``.

    ``P`` are the pivot points (``landmarks``, r x d) and ``L_P`` (``pivot_factor``, r x r,
    lower triangular) the rows of the factor ``L`` at the pivots. On the training points
    ``phi(x_i)`` is row i of ``L`` (``K[:, P] = L L_P'``), so ``k~`` is exactly the kernel
    matrix ``L L'`` the model was solved with, extended to new points consistently: a
    decision function ``sum_i c_i k~(x_i, x) + b`` reproduces the model's own decision
    values on the training points, and costs ``r`` kernel evaluations per new point.
    """

    base: Kernel
    landmarks: np.ndarray
    pivot_factor: np.ndarray
    name: str = "low_rank"

    is_linear = False

    @property
    def rank(self) -> int:
        return self.pivot_factor.shape[0]

    def features(self, X: np.ndarray) -> np.ndarray:
        """``phi(x)`` for the rows of ``X``: an (m, r) array."""
        from scipy.linalg import solve_triangular

        KPX = self.base.gram(self.landmarks, np.asarray(X, dtype=float))
        return solve_triangular(self.pivot_factor, KPX, lower=True, check_finite=False).T

    def gram(self, X: np.ndarray, Z: np.ndarray | None = None) -> np.ndarray:
        """``K~[i, j] = phi(X[i]).phi(Z[j])`` (``Z`` defaults to ``X``)."""
        FX = self.features(X)
        return FX @ (FX if Z is None else self.features(Z)).T

    def to_dict(self) -> dict:
        return {"name": "low_rank", "base": self.base.to_dict(),
                "landmarks": self.landmarks.tolist(), "pivot_factor": self.pivot_factor.tolist()}


@dataclass(frozen=True, eq=False)
class LowRank:
    """A pivoted incomplete Cholesky factor ``K ~= L L'`` (:func:`incomplete_cholesky`).

    ``L`` (l x r), ``pivots`` (r,) the points chosen, in order; ``trace_error`` the trace of
    the neglected part ``K - L L'`` (PSD: its trace bounds its largest eigenvalue and its
    nuclear norm), ``trace`` the trace of ``K``.
    """

    L: np.ndarray
    pivots: np.ndarray
    trace_error: float
    trace: float

    @property
    def rank(self) -> int:
        return self.L.shape[1]

    def report(self, requested: int) -> dict:
        """What ``Solution.kernel_rank`` says about the approximation."""
        return {"rank": self.rank, "requested": int(requested),
                "trace_error": self.trace_error, "trace": self.trace,
                "relative_trace_error": self.trace_error / self.trace if self.trace > 0 else 0.0}


def check_rank(kernel_rank, kernel) -> int:
    """``kernel_rank`` as a positive int, or ParameterError (also for the linear and
    precomputed kernels, which it does not apply to)."""
    name = getattr(kernel, "name", kernel)
    if name == "linear":
        raise ParameterError(
            "kernel_rank applies to the rbf and poly kernels: the linear kernel is already "
            "solved through its exact factor X (rank <= d, no approximation); drop kernel_rank")
    if name == "precomputed":
        raise ParameterError(
            "kernel_rank needs the kernel function (it computes columns of K on demand); with "
            "kernel='precomputed' the l x l matrix exists already: drop kernel_rank, or pass "
            "the data and kernel='rbf'/'poly'")
    if isinstance(kernel_rank, (bool, np.bool_)) or not isinstance(kernel_rank, (int, np.integer)) \
            or kernel_rank <= 0:
        raise ParameterError(f"kernel_rank must be a positive integer (the rank of the factor "
                             f"K ~= L L'); got {plain(kernel_rank)!r}")
    return int(kernel_rank)


def incomplete_cholesky(kernel: Kernel, X: np.ndarray, rank: int, *,
                        tol: float = FACTOR_TOL, block: int = 64) -> LowRank:
    """Pivoted incomplete Cholesky ``K ~= L L'`` of the Gram matrix of ``X``, without forming it.

    Greedy pivoting by blocks: each step takes the (up to) ``block`` points with the largest
    residual diagonal ``d`` as candidates, computes their kernel columns ``k(X, x_p)``,
    removes the part ``L`` already explains (one matrix product), and factors the candidates'
    residual block by LAPACK's pivoted Cholesky ``dpstrf``: its pivots (largest residual
    first, candidates that became dependent dropped) give the next columns of ``L``. Stops
    at ``rank`` columns (``rank >= l``: at most l) or when the largest residual diagonal
    falls below ``tol * trace(K) / l`` (the numerical rank: then ``L L'`` is exact to that
    tolerance, as :func:`factor`). Memory O(l r); time O(l r (r + d)), in matrix products.
    ``trace_error = sum(d)``, the trace of the neglected part ``K - L L'`` (PSD: a Schur
    complement), is exact whatever the pivots.
    """
    from scipy.linalg import solve_triangular
    from scipy.linalg.lapack import dpstrf

    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    r = min(int(rank), n)
    d = kernel.diagonal(X)
    total = float(d.sum())
    stop = tol * total / max(n, 1)
    L = np.empty((n, r))
    piv = np.empty(r, dtype=np.int64)
    k = 0
    while k < r:
        want = min(block, r - k)
        cand = np.argpartition(-d, want - 1)[:want] if want < n else np.arange(n)
        cand = cand[d[cand] > stop]
        if cand.size == 0:
            break
        C = kernel.gram(X, X[cand])                      # n x B kernel columns
        if k:
            C -= L[:, :k] @ L[cand, :k].T
        S = np.array(C[cand], order="F")
        c, perm, rk, info = dpstrf(S, tol=stop, lower=1)
        if info < 0:
            raise DataError(f"the kernel matrix could not be factored (LAPACK dpstrf info={info})")
        rk = min(int(rk), r - k)
        if rk == 0:
            break
        sel = perm[:rk] - 1
        R = np.tril(c)[:rk, :rk]                         # S[sel, sel] = R R'
        new = solve_triangular(R, C[:, sel].T, lower=True, check_finite=False).T
        new[cand[sel]] = R                               # exact at the pivots: L[P] triangular
        rows = cand[sel]
        for j in range(rk):                              # zeros above the diagonal, exactly
            new[rows[:j], j] = 0.0
        L[:, k:k + rk] = new
        d -= np.einsum("ij,ij->i", new, new)
        d[rows] = 0.0
        np.maximum(d, 0.0, out=d)
        piv[k:k + rk] = rows
        k += rk
    return LowRank(L=np.ascontiguousarray(L[:, :k]), pivots=piv[:k],
                   trace_error=float(d.sum()), trace=total)


def low_rank_kernel(kernel: Kernel, X: np.ndarray, lr: LowRank) -> LowRankKernel:
    """The Nystroem kernel of the pivots of ``lr`` (see :class:`LowRankKernel`)."""
    return LowRankKernel(kernel, np.array(X[lr.pivots], dtype=float),
                         np.tril(lr.L[lr.pivots]))

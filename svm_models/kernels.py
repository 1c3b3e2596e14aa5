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

import numpy as np

from .errors import DataError, ParameterError
from .tolerances import FACTOR_TOL, PSD_TOL

KERNELS = ("linear", "poly", "rbf", "precomputed")


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
        Zm = X if Z is None else Z
        if self.name == "linear":
            return X @ Zm.T
        if self.name == "poly":
            return (self.gamma * (X @ Zm.T) + self.coef0) ** self.degree
        # rbf: ||x - z||^2 = |x|^2 + |z|^2 - 2 x.z, clipped at 0 against round-off
        xx = np.einsum("ij,ij->i", X, X)
        zz = xx if Z is None else np.einsum("ij,ij->i", Zm, Zm)
        D = xx[:, None] + zz[None, :] - 2.0 * (X @ Zm.T)
        np.maximum(D, 0.0, out=D)
        if Z is None:
            np.fill_diagonal(D, 0.0)
        np.multiply(D, -self.gamma, out=D)
        return np.exp(D, out=D)

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
    """The kernel :meth:`Kernel.to_dict` (or :meth:`KernelSum.to_dict`) wrote."""
    if d.get("name") == "sum":
        return KernelSum(tuple(Kernel(**k) for k in d["kernels"]), tuple(d["weights"]))
    return Kernel(**d)


def make_kernel(kernel="linear", X: np.ndarray | None = None, *, gamma="scale", degree=3,
                coef0=0.0) -> Kernel:
    """Resolve a kernel name and scikit-learn style parameters against training data ``X``."""
    if isinstance(kernel, Kernel):
        return kernel
    if kernel not in KERNELS:
        raise ParameterError(f"unknown kernel {kernel!r}; choose one of {', '.join(KERNELS)}")
    if kernel in ("linear", "precomputed"):
        return Kernel(name=kernel)
    if isinstance(gamma, str):
        if X is None:
            raise ParameterError(f"gamma={gamma!r} needs the training data to be resolved")
        if gamma == "scale":
            var = float(X.var())
            g = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        elif gamma == "auto":
            g = 1.0 / X.shape[1]
        else:
            raise ParameterError(f"gamma must be a positive number, 'scale' or 'auto'; got {gamma!r}")
    else:
        g = float(gamma)
        if not np.isfinite(g) or g <= 0:
            raise ParameterError(f"gamma must be positive; got {gamma!r}")
    if kernel == "poly":
        if int(degree) != degree or degree < 1:
            raise ParameterError(f"degree must be a positive integer; got {degree!r}")
        if not np.isfinite(coef0):
            raise ParameterError(f"coef0 must be finite; got {coef0!r}")
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
    """Factor of the training Gram matrix: ``X`` (exact) for linear, pivoted Cholesky otherwise."""
    if kernel.is_linear:
        return X
    return factor(kernel.gram(X) if K is None else K, tol=tol)

"""Validation of the training data, once, at the boundary.

Everything downstream of :func:`validate` trusts its output: ``X`` is a finite float matrix,
``y`` holds exactly the two values -1.0 and +1.0, and ``classes`` maps them back to the
user's own labels (``classes[0]`` is -1, ``classes[1]`` is +1, as in scikit-learn where
``classes_[1]`` is the positive class).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import DataError


@dataclass(frozen=True, eq=False)
class Dataset:
    """Validated training data.

    Attributes
    ----------
    X : ndarray of shape (l, d)
        Feature matrix (for ``kernel="precomputed"``: the l x l Gram matrix).
    y : ndarray of shape (l,)
        Labels encoded as -1.0 / +1.0.
    classes : ndarray of shape (2,)
        The original labels; ``classes[0]`` is encoded as -1, ``classes[1]`` as +1.
    """

    X: np.ndarray
    y: np.ndarray
    classes: np.ndarray

    @property
    def n_points(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]


def as_matrix(X, *, name: str = "X", n_features: int | None = None) -> np.ndarray:
    """Return ``X`` as a finite 2-D float array, or raise :class:`DataError` naming the problem."""
    try:
        A = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{name} must be a numeric matrix: {exc}") from None
    if A.ndim == 1 and n_features is not None and A.size == n_features:
        A = A.reshape(1, -1)
    if A.ndim != 2:
        raise DataError(f"{name} must be 2-dimensional (points x features); got shape {A.shape}")
    if A.shape[0] == 0 or A.shape[1] == 0:
        raise DataError(f"{name} is empty (shape {A.shape})")
    if not np.all(np.isfinite(A)):
        bad = np.argwhere(~np.isfinite(A))[0]
        raise DataError(
            f"{name} contains NaN or infinite values (first at row {bad[0]}, column {bad[1]})"
        )
    if n_features is not None and A.shape[1] != n_features:
        raise DataError(f"{name} has {A.shape[1]} features; the model was trained on {n_features}")
    return A


def encode_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """Map any two distinct labels to -1/+1; return (encoded, classes)."""
    labels = np.asarray(y)
    if labels.ndim == 2 and 1 in labels.shape:
        labels = labels.ravel()
    if labels.ndim != 1:
        raise DataError(f"y must be a 1-dimensional vector of labels; got shape {labels.shape}")
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise DataError("y contains NaN or infinite values")
    classes = np.unique(labels)
    if classes.size == 1:
        raise DataError(
            f"y has a single class ({classes[0]!r}); an SVM needs examples of two classes"
        )
    if classes.size != 2:
        shown = ", ".join(repr(c.item()) for c in classes[:6]) + (", ..." if classes.size > 6 else "")
        raise DataError(
            f"y must contain exactly two classes; found {classes.size}: {shown}"
        )
    encoded = np.where(labels == classes[1], 1.0, -1.0)
    return encoded, classes


def validate(X, y, *, precomputed: bool = False) -> Dataset:
    """Check and encode training data.

    Parameters
    ----------
    X : array-like of shape (l, d), or (l, l) when ``precomputed``
    y : array-like of shape (l,), any two distinct labels
    precomputed : bool
        ``X`` is a Gram matrix: it must be square (symmetry and PSD are checked by the kernel).

    Raises
    ------
    DataError
        naming the problem: shape, NaN/inf, a single class, more than two classes,
        mismatched lengths.
    """
    A = as_matrix(X, name="X")
    yy, classes = encode_labels(y)
    if A.shape[0] != yy.shape[0]:
        raise DataError(
            f"X has {A.shape[0]} rows but y has {yy.shape[0]} labels; they must match"
        )
    if precomputed and A.shape[0] != A.shape[1]:
        raise DataError(
            f"a precomputed kernel must be a square l x l matrix; got shape {A.shape}"
        )
    if isinstance(X, np.ndarray) and np.may_share_memory(A, X):
        # the model reads its data lazily, so it keeps a frozen copy: the caller's array stays
        # writable, and a later change to it cannot change a built model
        A = A.copy()
    A.setflags(write=False)
    yy.setflags(write=False)
    return Dataset(X=A, y=yy, classes=classes)

"""Validation of the training data, once, at the boundary.

Everything downstream of :func:`validate` trusts its output: ``X`` is a finite float matrix,
``y`` holds exactly the two values -1.0 and +1.0, and ``classes`` maps them back to the
user's own labels (``classes[0]`` is -1, ``classes[1]`` is +1, as in scikit-learn where
``classes_[1]`` is the positive class).
"""

from __future__ import annotations

import warnings
import zlib
from dataclasses import dataclass

import numpy as np

from .errors import BadScaleWarning, DataError, ParameterError, plain
from .tolerances import SCALE_COLUMN_SPREAD, SCALE_HIGH, SCALE_LOW


@dataclass(frozen=True, eq=False)
class Dataset:
    """Validated training data.

    Attributes
    ----------
    X : ndarray of shape (l, d)
        Feature matrix (for ``kernel="precomputed"``: the l x l Gram matrix), read-only: a
        copy of the caller's array, or above :data:`SHARE_ABOVE_BYTES` a view of it
        (``shared_crc`` set, :meth:`check_unchanged`).
    y : ndarray of shape (l,)
        Labels encoded as -1.0 / +1.0.
    classes : ndarray of shape (2,)
        The original labels; ``classes[0]`` is encoded as -1, ``classes[1]`` as +1.
    finite_for : Kernel or None
        A kernel whose values on these points were checked finite with more points
        (:func:`rows_of`: one-vs-one's pairs); :func:`~svm_models.model.pieces.prepare`
        checks them again for any other kernel.
    """

    X: np.ndarray
    y: np.ndarray
    classes: np.ndarray
    #: CRC-32 of ``X`` when ``X`` is a read-only view of the caller's own array (not a
    #: copy: above :data:`SHARE_ABOVE_BYTES`)
    shared_crc: int | None = None
    finite_for: object = None

    def check_unchanged(self) -> None:
        """Raise :class:`DataError` if the caller's array behind ``X`` was changed in place
        since validation (a model built from it would no longer be the model of its data)."""
        if self.shared_crc is not None and _crc(self.X) != self.shared_crc:
            raise DataError(
                "the training matrix X was changed in place after the model was built from it "
                "(the model refers to your array instead of copying it, to save memory at "
                "scale): build the model again from the changed data, or build it from "
                "X.copy() if you want to keep changing your array")

    @property
    def n_points(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]


def as_matrix(X, *, name: str = "X", n_features: int | None = None) -> np.ndarray:
    """Return ``X`` as a finite 2-D float array, or raise :class:`DataError` naming the problem.

    Numbers of any real dtype are taken (booleans as 0/1); text, complex numbers, dates and
    objects that are not numbers are refused; so is a scipy sparse matrix (the models hold
    dense arrays: the error says how large ``X.toarray()`` would be)."""
    if hasattr(X, "toarray") and hasattr(X, "nnz") and hasattr(X, "shape"):
        shape = tuple(X.shape)
        mb = float(np.prod(shape)) * 8 / 2**20
        raise DataError(f"{name} is a scipy sparse matrix ({shape[0]} x {shape[1]}, {X.nnz} "
                        f"stored values); svm-models takes dense arrays: pass {name}.toarray() "
                        f"({mb:,.0f} MB of float64)")
    try:
        raw = np.asarray(X)
        kind = raw.dtype.kind
        if kind in "USMmVc":
            what, fix = {"U": ("text", "encode it as numbers"),
                         "S": ("text", "encode it as numbers"),
                         "M": ("dates", "convert them to numbers"),
                         "m": ("time spans", "convert them to numbers"),
                         "V": ("records", "convert them to a numeric matrix"),
                         "c": ("complex numbers", "take the real part or the modulus")}[kind]
            raise DataError(f"{name} must be a numeric matrix of real numbers; it holds {what} "
                            f"(dtype {raw.dtype}): {fix} first")
        A = np.asarray(raw, dtype=float)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
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


def as_weights(sample_weight, l: int) -> np.ndarray:
    """``sample_weight`` (scikit-learn's per-point factors of C) as ``l`` finite floats (one
    number: the same for every point), or a DataError naming what is wrong with it. What a
    weight means (``<= 0``: the point does not count) is the builder's to say
    (:func:`svm_models.model.pieces.check_sample_weight`)."""
    if isinstance(sample_weight, (str, bytes)):
        raise DataError(f"sample_weight must be numbers, one per point; got {sample_weight!r}")
    try:
        w = np.asarray(sample_weight, dtype=float)
    except (TypeError, ValueError):
        raise DataError("sample_weight must be numbers, one per point; got "
                        f"{plain(sample_weight)!r}") from None
    if w.ndim == 0:
        w = np.full(l, float(w))
    if w.shape != (l,):
        raise DataError(f"sample_weight has shape {w.shape}; the data have {l} points: give "
                        "one weight per point")
    if not np.all(np.isfinite(w)):
        raise DataError("sample_weight has NaN or infinite entries: give finite weights")
    return w


def check_weighted_classes(weight: np.ndarray, labels: np.ndarray, classes) -> None:
    """Refuse per-point weights (``sample_weight``, times ``class_weight``) that leave a
    class with no point of positive weight, with ``SVC``'s messages first: "all samples have
    zero or negative weights" (none left), "all samples with positive weights belong to the
    same class" (one class left); then, and for more than two classes with some left (where
    ``SVC`` drops the class and its one-vs-one table no longer matches ``classes_``), the
    classes left without weight, by their labels. ``labels[i]``: point i's index in
    ``classes``."""
    kept = np.bincount(labels[weight > 0.0], minlength=len(classes))
    empty = ", ".join(repr(plain(c)) for c in np.asarray(classes)[kept == 0])
    if not empty:
        return
    head = ("Invalid input - all samples have zero or negative weights. " if not kept.any()
            else "Invalid input - all samples with positive weights belong to the same "
            "class. " if np.count_nonzero(kept) == 1 else "")
    many = np.count_nonzero(kept == 0) > 1
    raise DataError(f"{head}Every sample of class{'es' if many else ''} {empty} has a zero "
                    "or negative weight (sample_weight, times class_weight): no classifier "
                    f"of {'those classes' if many else 'that class'} is left to train; give "
                    f"some of {'their' if many else 'its'} samples a positive weight, or "
                    f"leave {'their' if many else 'its'} samples out of X and y")


def distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` of a 1-D array; numbers by a sort (numpy 2's ``unique`` hashes
    them: 16-20 us for 100-400 indices or labels, a sort 1-4 us; the labels of each of
    one-vs-one's pairs, the lazy kernel matrix's bookkeeping of its columns)."""
    if values.dtype.kind not in "biuf" or values.size < 2:
        return np.unique(values)
    s = np.sort(values)
    return s[np.concatenate(([True], s[1:] != s[:-1]))]


def encode_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """Map any two distinct labels to -1/+1; return (encoded, classes)."""
    labels = np.asarray(y)
    if labels.ndim == 2 and 1 in labels.shape:
        labels = labels.ravel()
    if labels.ndim != 1:
        raise DataError(f"y must be a 1-dimensional vector of labels; got shape {labels.shape}")
    if labels.dtype.kind in "fc" and not np.all(np.isfinite(labels)):
        raise DataError("y contains NaN or infinite values")
    if labels.size == 0:
        raise DataError("y is empty: an SVM needs labelled examples of two classes")
    try:
        classes = distinct(labels)
    except TypeError as exc:
        raise DataError(f"the labels in y cannot be compared with each other ({exc}): use "
                        "labels of one type (numbers or strings), without None") from None
    if classes.size == 1:
        raise DataError(f"y has a single class ({classes[0].item()!r}); an SVM needs examples "
                        "of two classes")
    if classes.size != 2:
        shown = ", ".join(repr(c.item()) for c in classes[:6]) + (", ..." if classes.size > 6 else "")
        raise DataError(
            f"y must contain exactly two classes; found {classes.size}: {shown}"
        )
    encoded = np.where(labels == classes[1], 1.0, -1.0)
    return encoded, classes


def class_members(y_index: np.ndarray, k: int) -> list:
    """The points of each class ``0..k-1`` of ``y_index``, ascending (one pass each, made
    once for all the pairs)."""
    return [np.flatnonzero(y_index == c) for c in range(k)]


def pair_members(members: list, i: int, j: int) -> np.ndarray:
    """The points of classes ``i`` and ``j``, ascending (``np.flatnonzero((y == i) | (y ==
    j))``) from :func:`class_members`: joined where one class's come before the other's
    (points ordered by class), else merged by a sort."""
    a, b = members[i], members[j]
    if not a.size or not b.size or a[-1] < b[0]:
        return np.concatenate((a, b))
    if b[-1] < a[0]:
        return np.concatenate((b, a))
    return np.sort(np.concatenate((a, b)))


def check_square(A) -> None:
    """DataError unless ``A``, a precomputed kernel's matrix, is square (l x l)."""
    if A.shape[0] != A.shape[1]:
        raise DataError(
            f"a precomputed kernel must be a square l x l matrix; got shape {A.shape}"
        )


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
    if isinstance(X, Dataset):   # (checked already: rows_of)
        if y is not X.y:
            raise ParameterError("a Dataset comes with its own labels: pass its y")
        return X
    A = as_matrix(X, name="X")
    yy, classes = _labels_of(A, y)
    if precomputed:
        check_square(A)
    crc = None
    if A is X or not A.flags.owndata:
        # (A is the caller's memory: their array, a view of it, or a view of a buffer they
        # hold -- a memoryview, a data frame's block -- whose later changes A followed)
        # a solution is read against the data (w, b, support vectors), so they must not
        # follow later changes to the caller's array: a frozen copy -- or, for a contiguous
        # array above SHARE_ABOVE_BYTES, where a copy would cost as much as the data (160 MB
        # at l = 10^6, d = 20), a read-only view and its CRC-32 (~55 ms at that size), which
        # every solve and extraction checks: a change in place is then refused (DataError).
        # (The model itself never reads X after the build: its rows are recorded.)
        if A.flags.c_contiguous and A.nbytes > SHARE_ABOVE_BYTES:
            A = A.view()
            crc = _crc(A)
        else:
            A = A.copy()
    A.setflags(write=False)
    yy.setflags(write=False)
    if not precomputed:
        check_scale(A, name="X")
    return Dataset(X=A, y=yy, classes=classes, shared_crc=crc)


def _labels_of(A: np.ndarray, y) -> tuple:
    """``y`` encoded (:func:`encode_labels`) as the labels of the rows of ``A``, one each."""
    yy, classes = encode_labels(y)
    if A.shape[0] != yy.shape[0]:
        raise DataError(
            f"X has {A.shape[0]} rows but y has {yy.shape[0]} labels; they must match"
        )
    return yy, classes


def rows_of(A: np.ndarray, idx: np.ndarray, y, finite_for=None) -> Dataset:
    """The points ``idx`` of features ``A`` that :func:`as_matrix` returned, with the labels
    ``y`` (two classes, checked as :func:`validate` checks them), as a Dataset that
    :func:`validate` takes as it is: rows of checked features are finite and their scale
    was said once -- one-vs-one's pairs, each of which :func:`validate` checked again (a
    copy, the labels, the features' scale: a tenth of the pairs' time on digits). A frozen
    copy; not for a precomputed kernel's matrix (its rows are not its points).
    ``finite_for``: a kernel whose values on all of ``A`` were checked finite (then not
    checked again on these rows: :func:`~svm_models.model.pieces.prepare`)."""
    X = A[idx]
    if not X.flags.owndata:   # (a slice: a view of A, which may be the caller's memory)
        X = X.copy()
    yy, classes = _labels_of(X, y)
    X.setflags(write=False)
    yy.setflags(write=False)
    return Dataset(X=X, y=yy, classes=classes, finite_for=finite_for)


#: the size above which a caller's contiguous X is referred to (a checked read-only view)
#: instead of copied: 32 MB, e.g. l = 200,000 points of d = 20 features
SHARE_ABOVE_BYTES = 32 * 2**20


def _crc(A: np.ndarray) -> int:
    return zlib.crc32(memoryview(A).cast("B"))


def check_scale(A: np.ndarray, *, name: str = "X") -> str | None:
    """Warn (one :class:`~svm_models.errors.BadScaleWarning`) when the features are so badly
    scaled that solvers fail or lose accuracy; return the warning's text (None: no warning).

    Measured on 40 Gaussian points, 1-norm dual, C = 1, the six backends: all features
    multiplied by 1e5 or 1e-5 stop HiGHS; by 1e8 every backend (PIQP, Clarabel: no answer;
    Ipopt, Gurobi: "optimal" with a 47% duality gap); one feature multiplied by 1e8 (a spread
    of column scales of 1e8) the same. The data are not rescaled (that would change what C
    and w mean): the warning names the scale and the fix.
    """
    col = np.max(np.abs(A), axis=0)
    nonzero = col[col > 0]
    if nonzero.size == 0:
        return None
    top, low = float(nonzero.max()), float(nonzero.min())
    if top > SCALE_HIGH or top < SCALE_LOW:
        why = (f"its largest absolute value is {top:.3g} (outside [{SCALE_LOW:g}, "
               f"{SCALE_HIGH:g}])")
    elif top / low > SCALE_COLUMN_SPREAD:
        why = (f"its feature scales spread by a factor {top / low:.3g} (largest |value| per "
               f"column from {low:.3g} to {top:.3g}; above {SCALE_COLUMN_SPREAD:g})")
    else:
        return None
    text = (f"{name} is badly scaled: {why}. Solvers may fail or return inaccurate answers on "
            "such data; standardise the features first (e.g. "
            "sklearn.preprocessing.StandardScaler). The data are used as given.")
    warnings.warn(text, BadScaleWarning, stacklevel=2)
    return text


def opposite_duplicates(A: np.ndarray, y: np.ndarray) -> tuple[int, int] | None:
    """The first two rows of ``A`` that are equal but carry opposite labels (``y`` in
    {-1, +1}), as ``(i, j)`` with ``y[i] = -1``; None when there are none. For a Gram matrix
    (rows of K) equal rows mean the same point in feature space."""
    _, inv = np.unique(A, axis=0, return_inverse=True)
    inv = inv.ravel()
    neg = np.zeros(inv.max() + 1, dtype=bool)
    pos = neg.copy()
    neg[inv[y < 0]] = True
    pos[inv[y > 0]] = True
    both = np.flatnonzero(neg & pos)
    if both.size == 0:
        return None
    rows = np.flatnonzero(inv == both[0])
    return int(rows[y[rows] < 0][0]), int(rows[y[rows] > 0][0])

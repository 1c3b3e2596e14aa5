"""What a builder leaves on the block it filled: ``block._svm``, a :class:`BuiltSVM`.

So that :func:`svm_models.solve` and :func:`svm_models.extract` work on any block -- also
one inside a model of the user's own -- knowing what was built from what.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(eq=False)
class BuiltSVM:
    """What was built from what.

    ``formulation`` the registered name, ``data`` the validated
    :class:`~svm_models.data.Dataset`, ``kernel`` the resolved
    :class:`~svm_models.kernels.Kernel`, ``record`` the
    :class:`~svm_models.model.record.Record`, ``K`` the training Gram matrix (None where not
    needed), ``L`` a factor ``K = L L'`` of full column rank where the model uses one (kernel
    primals), ``facts`` what the family needs to read a solution (g range, quad form...),
    ``weight`` the per-point factors of C (scikit-learn's ``sample_weight``; None: all 1).
    """

    formulation: str
    data: Any
    kernel: Any
    block: Any
    record: Any
    K: np.ndarray | None = None
    L: np.ndarray | None = None
    facts: dict = field(default_factory=dict)
    weight: np.ndarray | None = None

    def point_C(self, C):
        """The penalty of each point, ``C * weight_i`` (``C`` itself without weights; None for
        the hard margin)."""
        if C is None or self.weight is None:
            return C
        return C * self.weight

    def kernel_times(self, v: np.ndarray) -> np.ndarray:
        """``K v`` on the training points, through a factor when there is one (no l x l
        matrix for the linear kernel)."""
        if self.K is not None:
            return self.K @ v
        if self.L is not None:
            return self.L @ (self.L.T @ v)
        X = self.data.X
        return X @ (X.T @ v)


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

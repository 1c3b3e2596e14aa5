"""Quadratic forms and cones as data: the vocabulary the record and the standard form share.

* :class:`QuadBlock` -- the quadratic form ``x[index]' M x[index]`` (no factor 1/2) with
  ``M`` dense (kept as ``scale * base``, the base shared, never copied) or diagonal.
* :class:`QuadRow` -- a convex quadratic constraint.
* :class:`Cone` -- ``u = A x + b`` in a second-order cone (``u_0 >= ||u_1:||``) or a rotated
  one (``2 u_0 u_1 >= ||u_2:||^2``, ``u_0, u_1 >= 0``).
* :class:`Margin` -- an SVM's margin (hard, 1-norm or 2-norm soft, or a level of its own as
  the nu-SVM's), as the rules that read its solutions and the backends that solve its dual
  ask it: a formulation declares its margin, the readers of :mod:`svm_models.postprocess`
  are written once for every margin.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


class QuadBlock:
    """The quadratic form ``x[index]' M x[index]``, ``M`` dense (``matrix``) or diagonal (``diag``).

    A dense ``M`` is kept as ``scale * base``: :meth:`scaled` shares ``base`` instead of
    copying an l x l matrix (a solve scales the recorded blocks by -1/2, +1/2, the sense...).
    ``base`` is shared: never modify it in place.
    """

    __slots__ = ("index", "base", "diag", "scale")

    def __init__(self, index, matrix=None, diag=None, *, scale: float = 1.0):
        self.index = np.asarray(index)
        self.base = matrix
        self.scale = float(scale)
        if diag is not None:
            diag = np.asarray(diag, dtype=float)
            if self.scale != 1.0:
                diag, self.scale = self.scale * diag, 1.0
        self.diag = diag

    @property
    def matrix(self) -> np.ndarray | None:
        """The dense ``M`` (None for a diagonal block)."""
        if self.base is None or self.scale == 1.0:
            return self.base
        return self.scale * self.base

    def dense(self) -> np.ndarray:
        """``M`` as a dense array, diagonal blocks included."""
        return self.matrix if self.base is not None else np.diag(self.diag)

    def __repr__(self) -> str:
        kind = (f"dense {self.base.shape}, scale={self.scale:g}" if self.base is not None
                else f"diag ({len(self.diag)},)")
        return f"QuadBlock({kind}, {len(self.index)} positions)"

    def scaled(self, s: float) -> "QuadBlock":
        if self.base is not None:
            return QuadBlock(self.index, self.base, scale=self.scale * s)
        return QuadBlock(self.index, diag=s * self.diag)

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``M v`` for v = x[index]."""
        if self.base is not None:
            Mv = self.base @ v
            if self.scale != 1.0:
                Mv *= self.scale
            return Mv
        return self.diag * v

    def value(self, x: np.ndarray) -> float:
        v = x[self.index]
        return float(v @ self.matvec(v))

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """Gradient of the form with respect to x[index] (``2 M v``)."""
        g = self.matvec(x[self.index])
        g *= 2.0
        return g


@dataclass(eq=False)
class QuadRow:
    """One convex quadratic constraint ``sum_blocks x'Mx + linear'x <= upper`` (each block's
    ``M`` PSD). ``data`` is its Pyomo constraint; ``sign`` is -1 when the model states it as
    ``-q(x) >= -upper`` (its dual flips sign)."""

    data: object
    quad: list
    linear: np.ndarray
    upper: float
    sign: float = 1.0


@dataclass(eq=False)
class Cone:
    """``u = A x + b`` in a cone: ``kind="soc"``: ``u_0 >= ||u_1:||``; ``kind="rsoc"``:
    ``2 u_0 u_1 >= ||u_2:||^2`` with ``u_0, u_1 >= 0``.

    In a Pyomo model a cone is one quadratic constraint in *squared form*
    ``body(x) <= 0`` with ``body = row_scale * q(x)``, ``q = ||u_1:||^2 - u_0^2`` (soc) or
    ``||u_2:||^2 - 2 u_0 u_1`` (rsoc), the sign of the heads being fixed by variable bounds.
    ``data`` is that constraint; its dual is reported for the squared form.
    """

    kind: str
    A: sp.csr_matrix
    b: np.ndarray
    data: object = None
    row_scale: float = 1.0

    @property
    def dim(self) -> int:
        return self.A.shape[0]

    def squared(self, x: np.ndarray) -> float:
        """``q(x)`` (<= 0 inside the cone, heads non-negative)."""
        u = self.A @ x + self.b
        if self.kind == "soc":
            return float(u[1:] @ u[1:] - u[0] ** 2)
        return float(u[2:] @ u[2:] - 2.0 * u[0] * u[1])

    def violation(self, x: np.ndarray) -> float:
        """How far ``A x + b`` is outside the cone (0 inside)."""
        u = self.A @ x + self.b
        if self.kind == "soc":
            return max(0.0, float(np.linalg.norm(u[1:]) - u[0]))
        r = np.concatenate([[u[0] - u[1]], np.sqrt(2.0) * u[2:]])
        return max(0.0, float(np.linalg.norm(r) - u[0] - u[1]))

    def as_soc(self) -> "Cone":
        """The same set as a second-order cone (a rotated cone is rewritten)."""
        if self.kind == "soc":
            return self
        # 2 u0 u1 >= ||w||^2  <=>  ||(u0 - u1, sqrt2 w)|| <= u0 + u1
        A, b = self.A.tocsr(), self.b
        rows = sp.vstack([A[0] + A[1], A[0] - A[1], np.sqrt(2.0) * A[2:]], format="csr")
        bb = np.concatenate([[b[0] + b[1], b[0] - b[1]], np.sqrt(2.0) * b[2:]])
        return Cone("soc", rows, bb, self.data, self.row_scale)


def as_slice(idx: np.ndarray) -> slice | None:
    """``slice(a, b)`` when ``idx`` is the contiguous range a, a+1, ..., b-1; else None."""
    k = len(idx)
    if k == 0:
        return None
    a = int(idx[0])
    if int(idx[-1]) - a != k - 1 or (k > 2 and not np.array_equal(idx, np.arange(a, a + k))):
        return None
    return slice(a, a + k)


def psd_root(M: np.ndarray, *, rel: float) -> np.ndarray:
    """``R`` with ``R'R = M`` for a symmetric PSD ``M`` (eigenvalues below ``rel`` times the
    largest are round-off and dropped). The caller has checked that M is PSD."""
    w, V = np.linalg.eigh((M + M.T) / 2)
    keep = w > max(w.max(initial=0.0), 0.0) * rel
    return (V[:, keep] * np.sqrt(w[keep])).T


@dataclass(frozen=True)
class Margin:
    """An SVM's margin, by what it does to the problem (``formulations/classic.md``,
    ``formulations/nu.md``):

    ``box``: slacks priced ``C_i xi_i`` (the 1-norm soft margin): the dual's ``alpha_i`` has
    the upper bound ``C_i``; ``ridge``: slacks priced ``C_i xi_i^2 / 2`` (the 2-norm soft
    margin): the dual's kernel is ``K + I/C`` (``alpha_i / C_i`` in every margin);
    neither: the hard margin (:attr:`hard`, no C); ``level``: the margin's level ``rho`` a
    variable (the nu-SVM: a box ``1/l`` and the row ``e'alpha = nu``). ``name`` is the
    family's name (the classic three are the constants below; a formulation declares
    its own instance: ``Formulation.margin``)."""

    name: str
    box: bool
    ridge: bool
    #: the margin's level is a variable ``rho`` priced ``-total rho`` (the nu-SVM): every
    #: margin reads ``y_i f(x_i) >= rho``, the dual has no linear term and the row
    #: ``e'alpha = total`` (multiplier rho); otherwise the level is 1 and the dual's linear
    #: term ``e'alpha``
    level: bool = False

    @property
    def hard(self) -> bool:
        """No slacks and no C: every margin ``y_i f(x_i) >= 1``."""
        return not (self.box or self.ridge)


HARD = Margin("hard", box=False, ridge=False)
SOFT_L1 = Margin("soft_l1", box=True, ridge=False)
SOFT_L2 = Margin("soft_l2", box=False, ridge=True)
#: the classic margins by family name
MARGINS = {m.name: m for m in (HARD, SOFT_L1, SOFT_L2)}


@dataclass(eq=False)
class DualSVM:
    """The structure of a classic SVM dual, recorded by its builder for backends that solve
    exactly that structure (libsvm's SMO):

        max  e'a - 1/2 a'(D_y K D_y + ridge I / C) a   s.t.  lx <= a <= ux,  y'a = 0

    ``margin`` the :class:`Margin` (``ridge`` 1 when ``margin.ridge``: the 2-norm soft
    margin's I/C; else 0);
    ``alpha`` the positions of ``a`` in the record's variables, ``y`` the labels (+-1);
    ``kernel`` and ``X`` the kernel and training points (a backend may evaluate the kernel
    itself), ``gram`` the training Gram matrix the model holds (an l x l array or a
    :class:`~svm_models.model.built.SignedGram`; None: the factor form, ``K = L L'``);
    ``z`` and ``L`` the factor form's images ``z = L'(y a)`` (None: the dense form);
    ``C`` the name of the mutable parameter C on the recorded block (None: hard margin);
    ``weight`` the per-point factors of C (None: all 1).
    The box of ``a`` is read from the variables' bounds when the model is solved."""

    margin: Margin
    alpha: np.ndarray
    y: np.ndarray
    kernel: object
    X: np.ndarray
    gram: object = None
    z: np.ndarray | None = None
    L: np.ndarray | None = None
    C: str | None = None
    weight: np.ndarray | None = None

    def complete(self, x: np.ndarray, alpha: np.ndarray) -> None:
        """Fill ``x`` (the record's variables) from ``alpha``: ``a`` and, in the factor form,
        the images ``z = L'(y a)``."""
        x[self.alpha] = alpha
        if self.z is not None:
            x[self.z] = self.L.T @ (self.y * alpha)

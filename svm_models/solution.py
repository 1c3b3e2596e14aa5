"""The result type: a frozen, self-describing :class:`Solution`.

Mathematical names (``w``, ``b``, ``alpha``, ``xi``) and scikit-learn's names where they
overlap (``support_``, ``support_vectors_``, ``dual_coef_``, ``intercept_``, ``coef_``,
``classes_``), ``decision_function``, ``predict``, diagnostics, and a lossless JSON round trip.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from .data import as_matrix
from .errors import DataError
from .kernels import Kernel

_ARRAYS = ("w", "alpha", "coef", "xi", "support", "support_vectors", "classes")


@dataclass(frozen=True, eq=False)
class Solution:
    """A solved SVM.

    Attributes
    ----------
    formulation : str           registered formulation name
    solver : str                backend name;  ``interface``: the plugin/API used
    status : str                ``"optimal"`` (other statuses only with ``raise_on_failure=False``)
    w : ndarray (d,) or None    normal vector (linear kernel only)
    b : float                   bias, from the KKT conditions (SPEC.md section 1)
    alpha : ndarray (l,)        dual variables (for primals: from multipliers or KKT recovery)
    coef : ndarray (l,)         expansion coefficients: f(x) = sum_i coef_i k(x_i, x) + b
    xi : ndarray (l,)           slacks (hard margin: zeros)
    support : ndarray (s,)      indices of the support vectors (alpha_i above the threshold)
    support_vectors : ndarray (s, d)
    objective : float           optimal value of the model's objective (its own sense)
    primal_objective, dual_objective, duality_gap : float
    kkt : dict                  KKT residuals (primal feasibility, balance, complementarity...)
    margin : float or None      geometric margin 1/||w||
    C : float or None           the soft-margin parameter (for c_tuning: C*, None if none exists)
    g : float or None           c_tuning: the optimal kernel weight g*
    time : float                solver time in seconds;  path: ``"fast"`` or ``"general"``
    kernel : Kernel;  classes : original labels (classes[1] is +1)
    extra : dict                formulation-specific diagnostics
    """

    formulation: str
    solver: str
    status: str
    w: np.ndarray | None
    b: float
    alpha: np.ndarray
    coef: np.ndarray
    xi: np.ndarray
    support: np.ndarray
    support_vectors: np.ndarray
    objective: float
    kernel: Kernel
    classes: np.ndarray
    primal_objective: float | None = None
    dual_objective: float | None = None
    duality_gap: float | None = None
    kkt: dict = field(default_factory=dict)
    margin: float | None = None
    C: float | None = None
    g: float | None = None
    time: float = 0.0
    interface: str = ""
    path: str = ""
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        for name in _ARRAYS:
            v = getattr(self, name)
            if isinstance(v, np.ndarray):
                v.setflags(write=False)

    # scikit-learn names -----------------------------------------------------------------
    @property
    def support_(self) -> np.ndarray:
        return self.support

    @property
    def support_vectors_(self) -> np.ndarray:
        return self.support_vectors

    @property
    def dual_coef_(self) -> np.ndarray:
        """``alpha_i y_i`` of the support vectors, shape (1, s), as scikit-learn's SVC."""
        return self.coef[self.support][None, :]

    @property
    def intercept_(self) -> np.ndarray:
        return np.array([self.b])

    @property
    def coef_(self) -> np.ndarray:
        if self.w is None:
            raise AttributeError("coef_ exists only for the linear kernel")
        return self.w[None, :]

    @property
    def classes_(self) -> np.ndarray:
        return self.classes

    @property
    def n_support(self) -> int:
        return int(self.support.size)

    # prediction -------------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """``f(x) = sum_i coef_i k(x_i, x) + b`` (``w.x + b`` for the linear kernel).

        For ``kernel="precomputed"`` pass ``K(X_test, X_train)``, shape (m, l).
        """
        idx, vecs = self.support, self.support_vectors
        if self.kernel.name == "precomputed":
            Kt = as_matrix(X, name="K(X_test, X_train)")
            if Kt.shape[1] != self.coef.shape[0]:
                raise DataError(f"a precomputed test kernel needs {self.coef.shape[0]} columns "
                                f"(one per training point); got {Kt.shape[1]}")
            return Kt[:, idx] @ self.coef[idx] + self.b
        Xt = as_matrix(X, name="X", n_features=self.support_vectors.shape[1]
                       if self.support_vectors.ndim == 2 else None)
        if self.w is not None:
            return Xt @ self.w + self.b
        return self.kernel.gram(Xt, vecs) @ self.coef[idx] + self.b

    def predict(self, X) -> np.ndarray:
        """Predicted labels, in the original label values."""
        f = self.decision_function(X)
        return np.where(f >= 0, self.classes[1], self.classes[0])

    def score(self, X, y) -> float:
        """Mean accuracy on (X, y)."""
        return float(np.mean(self.predict(X) == np.asarray(y)))

    # serialisation ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "kernel":
                v = v.to_dict()
            elif f.name == "classes":
                v = {"values": v.tolist(), "dtype": v.dtype.str}
            elif isinstance(v, np.ndarray):
                v = {"__array__": v.tolist(), "dtype": v.dtype.str, "shape": list(v.shape)}
            out[f.name] = _jsonable(v)
        return out

    def to_json(self, path=None) -> str:
        """JSON text (written to ``path`` as well when given). Floats round-trip exactly."""
        text = json.dumps(self.to_dict())
        if path is not None:
            with open(path, "w") as fh:
                fh.write(text)
        return text

    @classmethod
    def from_dict(cls, d: dict) -> "Solution":
        kw = {}
        for f in fields(cls):
            if f.name not in d:
                continue
            v = d[f.name]
            if f.name == "kernel":
                v = Kernel(**v)
            elif f.name == "classes":
                v = np.array(v["values"], dtype=np.dtype(v["dtype"]))
            elif isinstance(v, dict) and "__array__" in v:
                v = np.array(_unjson(v["__array__"]), dtype=np.dtype(v["dtype"])).reshape(v["shape"])
            kw[f.name] = _unjson(v)
        return cls(**kw)

    @classmethod
    def from_json(cls, text_or_path) -> "Solution":
        """Load from JSON text or from a file path."""
        s = str(text_or_path)
        if not s.lstrip().startswith("{"):
            with open(s) as fh:
                s = fh.read()
        return cls.from_dict(json.loads(s))

    def summary(self) -> str:
        return (f"{self.formulation} [{self.solver}/{self.path}] status={self.status} "
                f"objective={self.objective:.10g} b={self.b:.6g} support={self.n_support} "
                f"gap={self.duality_gap if self.duality_gap is not None else float('nan'):.2e} "
                f"time={self.time:.3f}s")

    def __repr__(self) -> str:
        return f"Solution({self.summary()})"


def _jsonable(v):
    if isinstance(v, float) and not np.isfinite(v):
        return {"__float__": repr(v)}
    if isinstance(v, (np.floating,)):
        return _jsonable(float(v))
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def _unjson(v):
    if isinstance(v, dict):
        if set(v) == {"__float__"}:
            return float(v["__float__"])
        return {k: _unjson(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_unjson(x) for x in v]
    return v

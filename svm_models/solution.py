"""The result type: a frozen, self-describing :class:`Solution`.

Common fields (mathematical names ``w``, ``b``, ``alpha``, ``xi``; scikit-learn's names where
they overlap, with scikit-learn's meanings), ``decision_function``/``predict``, diagnostics,
a per-family :attr:`Solution.details` object whose fields read as attributes of the solution
(``sol.g`` for C tuning), and a lossless JSON round trip.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import MutableMapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

import numpy as np

from .data import as_matrix
from .errors import DataError, SVMError
from .kernels import Kernel, kernel_from_dict
from .status import Status
from .threads import library_threads

_ARRAYS = ("w", "alpha", "dual_coef", "xi", "support", "support_vectors", "classes")

#: what :meth:`Solution.to_dict` writes: a document of this format, this version (2: the
#: declared fields of :data:`DECLARED` out of ``extra``); :meth:`Solution.from_dict` reads
#: version 1 as well (its ``extra`` keys that name declared fields go into them)
FORMAT = "svm_models.Solution"
VERSION = 2
READS = (1, 2)

#: the old keys of ``extra`` that are declared fields now (each a field of the key's name
#: but one, :data:`RENAMED`: ``sol.polished`` is what ``sol.extra["polished"]`` was, and
#: still is); a field None: not reported for this solution. What one backend or one
#: formulation alone reports stays in the free dictionary ``extra``.
DECLARED = (
    "message", "alpha_source", "b_source", "w_source", "dual_coef_source",
    "support_threshold", "polished", "certificate", "diagnostics", "dual_sign",
    "kernel_rank", "general_path_reason", "solver_choice", "retry", "retry_certificate",
    "scaling", "bounds", "warm_start", "switch", "indicator_rows", "pair_generation",
    "two_step")

#: the old key -> the declared field, where they differ (``certificate`` is the key the
#: command line's model document gives its own summary: ``svm_models.cli.certificate``)
RENAMED = {"certificate": "classifier_certificate"}


def field_of(key: str) -> str:
    """The declared field that ``extra[key]`` reads (``key`` one of :data:`DECLARED`)."""
    return RENAMED.get(key, key)


def _detail_names(details) -> tuple:
    """The fields of a details object that ``extra`` reads by name: its class's ``REPORTS``
    (what were keys of ``extra`` before; an extractor may still give them there)."""
    return tuple(getattr(type(details), "REPORTS", ())) if details is not None else ()


#: old ``extra`` keys read from :attr:`Solution.fallback`: key -> the fallback's ``kind``
FALLBACK_KEYS = {"retry_quad_form": "quad_form", "retry_formulation": "formulation"}


class Extra(MutableMapping):
    """``Solution.extra``: the free dictionary of what one backend or one formulation alone
    reports, which also reads the declared fields by their old keys (``sol.extra["polished"]``
    is ``sol.polished``, without a warning), so that code written for the dictionary keeps
    working. Iterating gives the declared fields that are set (not None), then the free keys.
    A declared field is read-only here, as on the frozen Solution (``dataclasses.replace``
    makes a Solution with another value); the free keys may be set and deleted."""

    __slots__ = ("_owner", "free")

    def __init__(self, owner, free: dict):
        self._owner = owner
        self.free = free

    def _declared(self, key):
        if key in DECLARED:
            return self._owner.__dict__.get(field_of(key))
        details = self._owner.__dict__.get("details")
        if details is not None and key in _detail_names(details):
            return getattr(details, key)
        if key in FALLBACK_KEYS:
            fb = self._owner.__dict__.get("fallback")
            if fb is not None and fb.get("kind") == FALLBACK_KEYS[key]:
                return fb.get("message")
        return None

    def __getitem__(self, key):
        v = self._declared(key)
        if v is not None:
            return v
        return self.free[key]

    def __setitem__(self, key, value):
        if key in _detail_names(self._owner.__dict__.get("details")):
            raise TypeError(f"extra[{key!r}] is the declared field Solution.details.{key}, "
                            "read-only as the Solution is: dataclasses.replace(sol, details="
                            f"dataclasses.replace(sol.details, {key}=...)) makes a Solution "
                            "with another value")
        if key in DECLARED or key in FALLBACK_KEYS:
            name = field_of(key) if key in DECLARED else "fallback"
            raise TypeError(f"extra[{key!r}] is the declared field Solution.{name}, read-only "
                            f"as the Solution is: dataclasses.replace(sol, {name}=...) makes "
                            "a Solution with another value")
        self.free[key] = value

    def __delitem__(self, key):
        del self.free[key]

    def __iter__(self):
        details = self._owner.__dict__.get("details")
        for k in (*DECLARED, *FALLBACK_KEYS, *_detail_names(details)):
            if self._declared(k) is not None:
                yield k
        yield from (k for k in self.free if self._declared(k) is None)

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return repr(dict(self))

    def __getstate__(self):
        return (self._owner, self.free)

    def __setstate__(self, state):
        self._owner, self.free = state


@dataclass(frozen=True)
class CTuningDetails:
    """What C tuning learns (``formulations/c_tuning.md``).

    g : the optimal kernel weight g* of ``M(g) = (1-g) K/r + g I/l``
    gamma : ``gamma* = 1/C* = g* r / (l (1 - g*))`` (inf at g* = 1)
    C_reason : why no positive C corresponds to g* (None when C* exists)
    g_lo, g_hi : the g range of the problem solved
    g_kkt, g_multipliers : g* from the KKT least squares and from the multipliers (None
        where the backend gives none); ``g`` is the first, moved onto an end of the range
        when complementarity says so

    What the extractor reports besides (``formulations/c_tuning.md``; each also read as
    ``sol.extra[name]``, as before): ``variant``, ``form`` (``"norm"`` or ``"quadratic"``),
    ``g_source`` (how g* was found), ``q_hi``, ``q_lo`` (the two quadratic forms at alpha),
    ``eta_hi``, ``eta_lo`` (the multipliers of the two range constraints), ``active``
    (which are active: ``"hi"``, ``"lo"``), ``margin_M``, ``soft_l2_objective_at_C``,
    ``solver_objective`` (the model's objective before the polish), ``b_multiplier``,
    ``g_min``, ``g_max``, ``lam_min``, ``lam_max`` (the PSD range and K's extreme
    eigenvalues)
    """

    g: float
    gamma: float
    C_reason: str | None
    g_lo: float
    g_hi: float
    REPORTS: ClassVar[tuple] = (
        "variant", "form", "g_source", "q_hi", "q_lo", "eta_hi", "eta_lo", "active", "margin_M",
        "soft_l2_objective_at_C", "solver_objective", "b_multiplier", "g_min", "g_max",
        "lam_min", "lam_max")

    g_kkt: float | None = None
    g_multipliers: float | None = None
    variant: str | None = None
    form: str | None = None
    g_source: str | None = None
    q_hi: float | None = None
    q_lo: float | None = None
    eta_hi: float | None = None
    eta_lo: float | None = None
    active: list | None = None
    margin_M: float | None = None
    soft_l2_objective_at_C: float | None = None
    solver_objective: float | None = None
    b_multiplier: float | None = None
    g_min: float | None = None
    g_max: float | None = None
    lam_min: float | None = None
    lam_max: float | None = None


@dataclass(frozen=True, eq=False)
class RadiusDetails:
    """What the radius-margin SVMs learn besides w and b (``formulations/radius_margin.md``).

    r : the radius term at the solution (R-SVM_mu+ and R-SVM+: half the largest weighted
        squared distance of two points; the kernel form: ``max (f_i - f_j)^2 / 2``)
    lam : the radius weight the problem was solved with
    mu : (m,) feature / kernel weights (R-SVM_mu+), else None
    beta : multipliers of the radius rows, one per pair of ``pairs`` (R-SVM+), else None
    pairs : (p, 2) the pairs (i, j) of the radius rows in the model (None: not applicable)
    w_blocks : with ``kernels=``, the ``w_k`` of each kernel (``sol.w`` is None then)
    f, spread, representer : the kernel form's decision values without b, ``max f - min f``,
        and how the expansion ``a`` reproducing f was found
    (each also read as ``sol.extra[name]``, as before)
    """

    r: float
    lam: float
    mu: Any = None
    beta: Any = None
    REPORTS: ClassVar[tuple] = ("w_blocks", "f", "spread", "representer")

    pairs: Any = None
    w_blocks: Any = None
    f: Any = None
    spread: float | None = None
    representer: str | None = None


@dataclass(frozen=True, eq=False)
class MIPDetails:
    """What a mixed-integer SVM finds besides w and b (``formulations/mip.md``): its
    certificate is the gap, not a duality gap.

    mip_gap : ``(objective - bound) / max(|objective|, tiny)``: the objective of exactly the
        classifier returned (recomputed from w, b) against the solver's best bound; 0 within
        the tolerance at an optimum, the distance left at a time limit
    bound : the solver's best bound on the optimum (None: none reported)
    solver_gap : the same gap as the solver reports it (its incumbent's objective)
    given_up : indices of the points whose margin row is switched off (``z[i] = 1``; empty
        for feature selection)
    features_kept : indices of the features kept (``v[j] = 1``; None outside feature selection)
    big_m : the constants proved valid from the data and C (their derivation:
        ``formulations/mip.md``), by name
    """

    mip_gap: float
    bound: float | None
    solver_gap: float | None
    given_up: Any
    features_kept: Any = None
    big_m: Any = None


#: the details types by name, for :meth:`Solution.from_json`: these, and each registered
#: formulation's :attr:`~svm_models.formulations.Formulation.details`
DETAILS = {cls.__name__: cls for cls in (CTuningDetails, RadiusDetails, MIPDetails)}


@dataclass(frozen=True, eq=False)
class Solution:
    """A solved SVM.

    Attributes
    ----------
    formulation : str           registered formulation name
    solver : str                backend name;  ``interface``: the plugin/API used
    status : Status             ``Status.optimal`` (others only with ``raise_on_failure=False``)
    w : ndarray (d,) or None    normal vector (linear kernel only)
    b : float                   bias, from the KKT conditions (``formulations/classic.md``)
    alpha : ndarray (l,)        dual variables (for primals: from multipliers or KKT recovery)
    dual_coef : ndarray (l,)    coefficients of the decision function,
                                ``f(x) = sum_i dual_coef_i k(x_i, x) + b`` (``y_i alpha_i``
                                for the classic SVMs; zero off the support); R-SVM_mu+ and
                                R-SVM+ learn their kernel (mu-weighted; the metric
                                ``x' diag(1/t) z``): ``decision_function`` uses ``w``
    xi : ndarray (l,)           slacks (hard margin: zeros)
    support : ndarray (s,)      indices of the support vectors (alpha_i above the threshold)
    support_vectors : ndarray (s, d)
    objective : float           optimal value of the objective of the model that was solved
    primal_objective, dual_objective, duality_gap : float or None
                                the formulation's primal and dual values at the solution;
                                None when the model was changed (``Solution.diagnostics``)
    kkt : dict                  KKT residuals (empty when the model was changed)
    margin : float or None      geometric margin 1/||w||
    C : float or None           the soft-margin parameter (C tuning: C*, None if none exists)
    details : object or None    per-family results, readable as attributes (``sol.g``)
    time : float                solver time in seconds
    path : str                  ``"fast"``, ``"mixed"`` (an edited model), ``"general"``, ``"user"``
    kernel : Kernel;  classes : original labels (classes[1] is +1)
    extra : Extra               what one formulation or one backend alone reports (a free
                                dictionary, as Pyomo's ``Results.extra_info``); it reads the
                                declared fields below by their old keys too
    fallback : dict or None     what :func:`~svm_models.fit` switched to after the first
                                build failed (a ``FallbackWarning`` says so too): ``kind``
                                (``"formulation"``: the other form, primal for dual or dual
                                for primal; ``"quad_form"``: the other quadratic form),
                                ``asked`` and ``solved`` (formulation names, or the quadratic
                                forms), ``reason`` (how the first ended), ``message`` (what
                                ``Solution.fallback`` / ``["retry_quad_form"]`` said);
                                None: solved as asked

    How it was read, and what vouches for it (None where not reported):

    message : str               why the status is not ``optimal`` (a failed or refused solve)
    alpha_source, b_source, w_source, dual_coef_source : str
                                where alpha, b, w and dual_coef were read from (multipliers,
                                the KKT conditions, a polish, the solver; why b is missing)
    support_threshold : float   the alpha above which a point is a support vector
    polished : bool             the optimality conditions were solved exactly on the active
                                set and that point was taken (``formulations/classic.md``)
    classifier_certificate : dict
                                the certificate of exactly the classifier returned (the
                                classic SVMs, the nu-SVM; ``extra["certificate"]`` before):
                                ``classifier`` (which candidate), ``worst`` (its largest
                                relative residual), ``accept`` (the most accepted),
                                ``certified`` (``worst <= accept``)
    diagnostics : str           why the primal/dual values and the KKT residuals are missing
    dual_sign : str             duals handed to :func:`~svm_models.extract` read with the
                                opposite sign (what decided it)
    kernel_rank : dict          the low-rank kernel's report (``trace_error``,
                                ``objective_bound``, ...: ``formulations/classic.md``)
    general_path_reason : str   why the model went through Pyomo, not the fast path
    solver_choice : dict        ``solver="auto"``: ``asked``, ``used``, ``why``
    retry : dict                the retry of :func:`~svm_models.solve` (looser tolerance,
                                more iterations);  ``retry_certificate`` : list of str, the
                                attempts made after a refused certificate
    scaling : dict              the exact scaling applied on the fast path;  ``bounds`` :
                                dict, far bounds solved in place of the true ones
    warm_start : dict           a mixed-integer SVM's start (``objective``, or ``reason``)
    switch : str;  indicator_rows : int
                                a mixed-integer SVM's rows as solved (``"big_m"`` or
                                ``"indicator"``), and how many indicator constraints
    pair_generation : dict      radius-margin constraint generation's certificate (rounds,
                                pairs, largest violation; ``formulations/radius_margin.md``)
    two_step : dict             the two-step radius-margin method's bounds and iterations
    """

    formulation: str
    solver: str
    status: Status
    w: np.ndarray | None
    b: float
    alpha: np.ndarray
    dual_coef: np.ndarray
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
    details: Any = None
    time: float = 0.0
    interface: str = ""
    path: str = ""
    extra: Any = field(default_factory=dict)
    fallback: dict | None = None
    message: str | None = None
    alpha_source: str | None = None
    b_source: str | None = None
    w_source: str | None = None
    dual_coef_source: str | None = None
    support_threshold: float | None = None
    polished: bool | None = None
    classifier_certificate: dict | None = None
    diagnostics: str | None = None
    dual_sign: str | None = None
    kernel_rank: dict | None = None
    general_path_reason: str | None = None
    solver_choice: dict | None = None
    retry: dict | None = None
    retry_certificate: list | None = None
    scaling: dict | None = None
    bounds: dict | None = None
    warm_start: dict | None = None
    switch: str | None = None
    indicator_rows: int | None = None
    pair_generation: dict | None = None
    two_step: dict | None = None

    def __post_init__(self):
        object.__setattr__(self, "status", Status(self.status))
        # ``extra`` given as a dictionary (an extractor's, a saved version-1 document's, or
        # ``{**sol.extra, ...}``): its keys that name declared fields fill those left None
        given = self.extra.free if isinstance(self.extra, Extra) else dict(self.extra or {})
        free = {}
        for k, v in given.items():
            if k in DECLARED:
                if self.__dict__[field_of(k)] is None:
                    object.__setattr__(self, field_of(k), v)
            elif k in FALLBACK_KEYS and (self.fallback or {}).get("kind") == FALLBACK_KEYS[k]:
                if self.fallback.get("message") is None:   # (a version-1 document)
                    object.__setattr__(self, "fallback", {**self.fallback, "message": v})
            else:
                free[k] = v
        details = self.details
        moved = {k: free.pop(k) for k in _detail_names(details)
                 if k in free and getattr(details, k) is None}
        if moved:   # (what the details declare, given in extra: a formulation's extractor)
            object.__setattr__(self, "details", replace(details, **moved))
        object.__setattr__(self, "extra", Extra(self, free))
        for name in _ARRAYS:
            v = getattr(self, name)
            if isinstance(v, np.ndarray):
                v.setflags(write=False)

    def __getattr__(self, name: str):
        # the details' fields read as the solution's own (sol.g, later sol.r, sol.mu)
        if name.startswith("__"):
            raise AttributeError(name)
        details = self.__dict__.get("details")
        if details is not None and name in {f.name for f in fields(details)}:
            return getattr(details, name)
        status = self.__dict__.get("status")
        why = (f" (the solve ended {status.value}: no solution to read it from)"
               if details is None and status is not None and status != Status.optimal else "")
        raise AttributeError(f"{type(self).__name__} of {self.__dict__.get('formulation')!r} "
                             f"has no attribute {name!r}{why}")

    # the Pyomo model, built when it is read ------------------------------------------------
    @property
    def model(self):
        """The Pyomo model this Solution solves, with the solver's values in its variables.

        :func:`svm_models.fit` on a backend that solves the problem as data (libsvm on the
        1-norm dual) builds no Pyomo model: the model is built here, on the first read, from
        the same data and parameters (:func:`svm_models.build`), and kept; a fit that built
        its model gives one built the same way. :func:`svm_models.solve` gives the model it
        solved. An edit of this model, solved again (``svm_models.solve(sol.model)``), is
        honoured as any edit is: the builder's record proves what is unchanged.

        Raises
        ------
        SVMError
            This Solution keeps no model: loaded from JSON, unpickled, or made by
            ``dataclasses.replace`` (build one with :func:`svm_models.build`).
        """
        kept = self.__dict__.get("_model")
        if kept is None:
            raise SVMError("this Solution keeps no model (one loaded from JSON, unpickled or "
                           "made by dataclasses.replace): build it with svm_models.build("
                           f"{self.formulation!r}, X, y, ...)")
        return kept.get()

    # scikit-learn names, with scikit-learn's meanings --------------------------------------
    @property
    def coef(self) -> np.ndarray | None:
        """``w`` (linear kernel), as scikit-learn's ``coef_[0]``; None for other kernels."""
        return self.w

    @property
    def coef_(self) -> np.ndarray:
        """``w`` as a (1, d) array (linear kernel only), as scikit-learn's SVC."""
        if self.w is None:
            raise AttributeError("coef_ exists only for the linear kernel")
        return self.w[None, :]

    @property
    def support_(self) -> np.ndarray:
        return self.support

    @property
    def support_vectors_(self) -> np.ndarray:
        return self.support_vectors

    @property
    def dual_coef_(self) -> np.ndarray:
        """The decision function's coefficients of the support vectors, shape (1, s)."""
        return self.dual_coef[self.support][None, :]

    @property
    def intercept_(self) -> np.ndarray:
        return np.array([self.b])

    @property
    def classes_(self) -> np.ndarray:
        return self.classes

    @property
    def n_support(self) -> int:
        return int(self.support.size)

    # prediction -----------------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """``f(x) = sum_i dual_coef_i k(x_i, x) + b`` (``w.x + b`` for the linear kernel).

        For ``kernel="precomputed"`` pass ``K(X_test, X_train)``, shape (m, l).
        """
        if not np.isfinite(self.b):
            raise SVMError(f"this solution ({self.status}) has no decision function: "
                           f"{self.b_source or 'b is not available'}")
        idx = self.support
        if self.kernel.name == "precomputed":
            Kt = as_matrix(X, name="K(X_test, X_train)")
            if Kt.shape[1] != self.dual_coef.shape[0]:
                raise DataError(f"a precomputed test kernel needs {self.dual_coef.shape[0]} "
                                f"columns (one per training point); got {Kt.shape[1]}")
            with library_threads(Kt.shape[0]):
                return Kt[:, idx] @ self.dual_coef[idx] + self.b
        d = self.w.shape[0] if self.w is not None else self.support_vectors.shape[1]
        Xt = as_matrix(X, name="X", n_features=d)
        with library_threads(Xt.shape[0]):   # (BLAS threads as a fit's: svm_models/threads.py)
            if self.w is not None:
                return Xt @ self.w + self.b
            return self.kernel.gram(Xt, self.support_vectors) @ self.dual_coef[idx] + self.b

    def predict(self, X) -> np.ndarray:
        """Predicted labels, in the original label values."""
        f = self.decision_function(X)
        return np.where(f >= 0, self.classes[1], self.classes[0])

    def score(self, X, y) -> float:
        """Mean accuracy on (X, y)."""
        return float(np.mean(self.predict(X) == np.asarray(y)))

    # serialisation ---------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The Solution as plain JSON data: ``solution_format``, ``solution_version``, one
        entry per field, and ``sha256``, a checksum of each field's canonical JSON text
        (:meth:`from_dict` refuses a document whose values do not match it)."""
        content: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "kernel":
                v = v.to_dict()
            elif f.name == "status":
                v = v.value
            elif f.name == "classes":
                v = {"values": v.tolist(), "dtype": v.dtype.str}
            elif f.name == "details" and v is not None:
                v = {"__details__": type(v).__name__,
                     "fields": {k.name: getattr(v, k.name) for k in fields(v)}}
            elif f.name == "extra":
                v = v.free
            elif isinstance(v, np.ndarray):
                v = {"__array__": v.tolist(), "dtype": v.dtype.str, "shape": list(v.shape)}
            content[f.name] = _jsonable(v)
        return {"solution_format": FORMAT, "solution_version": VERSION, **content,
                "sha256": {k: _digest(v) for k, v in content.items()}}

    def to_json(self, path=None) -> str:
        """JSON text (written to ``path`` as well when given). Floats round-trip exactly."""
        text = json.dumps(self.to_dict(), allow_nan=False)
        if path is not None:
            with open(path, "w") as fh:
                fh.write(text)
        return text

    @classmethod
    def from_dict(cls, d: dict) -> "Solution":
        """The Solution :meth:`to_dict` wrote (other keys, e.g. the CLI's ``certificate``,
        are ignored).

        Raises
        ------
        DataError
            not a Solution document, another format version, a value that does not match
            its checksum (naming the fields), or a malformed value.
        """
        names = [f.name for f in fields(cls)]
        if not isinstance(d, dict) or d.get("solution_format") != FORMAT:
            raise DataError("not a saved svm_models Solution (no solution_format "
                            f"{FORMAT!r}); save one with Solution.to_json")
        version = d.get("solution_version")
        if version not in READS:
            raise DataError(f"this Solution was saved in format version {version!r}; this "
                            f"svm-models reads version {VERSION} (and {', '.join(map(str, READS[:-1]))}): "
                            "load it with the svm-models that wrote it, or fit the model "
                            "again and save it")
        sums = d.get("sha256")
        if not isinstance(sums, dict):
            raise DataError("the saved Solution has no sha256 checksums: the file is "
                            "incomplete or was edited")
        bad = sorted({k for k in names if (k in d) != (k in sums)
                      or (k in d and _digest(d[k]) != sums[k])}
                     | {k for k in sums if k not in names})
        if bad:
            raise DataError(f"the saved Solution was edited or corrupted: {', '.join(bad)} "
                            "do not match the checksums written with it (sha256); refusing "
                            "to load it. Fit the model again and save it")
        try:
            kw = {}
            for name in names:
                if name not in d:
                    continue
                v = d[name]
                if name == "kernel":
                    v = kernel_from_dict(v)
                elif name == "classes":
                    v = np.array(v["values"], dtype=_dtype(v["dtype"]))
                elif name == "details" and v is not None:
                    v = DETAILS[v["__details__"]](**_unjson(v["fields"]))
                kw[name] = _unjson(v)
            return cls(**kw)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DataError(f"the saved Solution is malformed ({type(exc).__name__}: {exc})") \
                from None

    @classmethod
    def from_json(cls, text_or_path) -> "Solution":
        """Load from JSON text or from a file path (JSON only: nothing is unpickled)."""
        s = text_or_path
        if not (isinstance(s, str) and s.lstrip().startswith("{")):
            try:
                with open(s, "rb") as fh:
                    s = fh.read().decode("utf-8")
            except UnicodeDecodeError:
                raise DataError(f"{text_or_path} is not a saved Solution: not UTF-8 JSON text "
                                "(a pickle or other binary file is never loaded)") from None
        try:
            doc = json.loads(s)
        except ValueError as exc:
            raise DataError(f"not a saved Solution: not valid JSON ({exc})") from None
        return cls.from_dict(doc)

    def summary(self) -> str:
        """One line: formulation, backend and path, status, objective, b, support, the
        certificate's gap -- the duality gap, a mixed-integer SVM's ``mip_gap``, or ``none``
        where the form has no dual to measure it (the radius-margin SVMs' cone forms) --
        and the time."""
        mip = isinstance(self.details, MIPDetails)
        gap = self.details.mip_gap if mip else self.duality_gap
        shown = "none" if gap is None or not np.isfinite(gap) else f"{gap:.2e}"
        return (f"{self.formulation} [{self.solver}/{self.path}] status={self.status} "
                f"objective={self.objective:.10g} b={self.b:.6g} support={self.n_support} "
                f"{'mip_gap' if mip else 'gap'}={shown} time={self.time:.3f}s")

    def __repr__(self) -> str:
        return f"Solution({self.summary()})"


class KeptModel:
    """A :class:`Solution`'s model (:attr:`Solution.model`): the model itself, or a recipe
    ``(fn, args)`` that builds it on the first :meth:`get` (then kept). Neither is pickled
    (nor copied by ``copy.deepcopy``): a Solution unpickled keeps no model."""

    __slots__ = ("_model", "_recipe")

    def __init__(self, model=None, recipe=None):
        self._model, self._recipe = model, recipe

    def get(self):
        if self._model is None:
            fn, args = self._recipe
            self._model = fn(*args)
            self._recipe = None
        return self._model

    @property
    def built(self) -> bool:
        """Whether the model exists (was given, or built by a read)."""
        return self._model is not None

    def __reduce__(self):
        return (_no_model, ())


def _no_model():
    """What an unpickled :class:`KeptModel` becomes: none (the Solution keeps no model)."""
    return None


def keep_model(sol: Solution, kept: KeptModel) -> Solution:
    """``sol`` with ``kept`` as its model (:attr:`Solution.model`); returns ``sol``."""
    object.__setattr__(sol, "_model", kept)
    return sol


def _digest(v) -> str:
    """sha256 of the canonical JSON text of ``v`` (sorted keys, no spaces)."""
    text = json.dumps(v, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _dtype(spec) -> np.dtype:
    """A dtype written by :meth:`Solution.to_dict`: numbers, booleans, text or plain objects."""
    dt = np.dtype(spec)
    if dt.kind not in "biufUO":
        raise ValueError(f"dtype {spec!r} is not one a Solution is saved with")
    return dt


def _jsonable(v):
    if isinstance(v, float) and not np.isfinite(v):
        if v != v:   # NaN: its sign and payload bits too, so that a round trip is bit-exact
            return {"__float__": "nan", "bits": struct.pack(">d", v).hex()}
        return {"__float__": repr(v)}
    if isinstance(v, np.floating):
        return _jsonable(float(v))
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.ndarray):
        return {"__array__": _jsonable(v.tolist()), "dtype": v.dtype.str, "shape": list(v.shape)}
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def _unjson(v):
    if isinstance(v, dict):
        if set(v) == {"__float__"}:
            return float(v["__float__"])
        if set(v) == {"__float__", "bits"}:
            return struct.unpack(">d", bytes.fromhex(v["bits"]))[0]
        if "__array__" in v and "dtype" in v:
            return np.array(_unjson(v["__array__"]), dtype=_dtype(v["dtype"])).reshape(v["shape"])
        return {k: _unjson(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_unjson(x) for x in v]
    return v

"""The scikit-learn face: :class:`SVMClassifier`, every registered formulation as an estimator.

Fitting goes through :func:`svm_models.fit` (one binary problem, or one per class for more
than two classes, one-vs-rest) and keeps the :class:`~svm_models.solution.Solution` of each;
prediction reads them. Nothing below this module imports it.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .errors import DataError, ParameterError
from .formulations import get as lookup
from .methods.radius import fit as sm_fit
from .solvers import SolverOptions

#: The hyperparameters passed to the formulation (those it takes; see the registry).
HYPERPARAMETERS = ("C", "kernel", "gamma", "degree", "coef0", "lam", "kernels", "pairs",
                   "radius", "g_bounds", "form", "quad_form")
#: The kernels each kernel parameter acts on.
_KERNEL_USES = {"gamma": ("poly", "rbf"), "degree": ("poly",), "coef0": ("poly",)}
#: What ``solver_options`` may hold: the solve options, and ``batch`` (constraint generation).
SOLVER_OPTION_KEYS = tuple(SolverOptions.__dataclass_fields__) + ("batch",)


class SVMClassifier(ClassifierMixin, BaseEstimator):
    """A scikit-learn classifier solving any registered SVM formulation with a chosen backend.

    Two classes give one problem; more give one binary problem per class, one-vs-rest
    (class ``k`` against the others), and ``predict`` takes the class of largest decision
    value. Hyperparameters left ``None`` take the formulation's default; one set for a
    formulation that does not take it is a :class:`~svm_models.errors.ParameterError` at
    ``fit`` (it is never ignored).

    Parameters
    ----------
    formulation : str, default="soft_l1_dual"
        A registered formulation (``svm_models.formulations()``); the default is the
        1-norm soft-margin dual, the problem of scikit-learn's ``SVC``.
    solver : str, default="ipopt"
        The backend, as in :func:`svm_models.fit` (``"ipopt"``, ``"gurobi"``, ``"highs"``,
        ``"scip"``, ``"piqp"``, ``"clarabel"``); the library's default, which takes every
        problem class. ``"piqp"`` or ``"highs"`` are faster on the QP formulations.
    C : float or None, default=None
        Soft-margin parameter; None: the formulation's default (1.0). Not taken by the hard
        margin nor by C tuning (which learns it: ``C_``). Radius-margin SVMs:
        ``C=float("inf")`` is the hard margin.
    kernel : {"linear", "poly", "rbf", "precomputed"} or None, default=None
        None: ``"linear"``, the library's default (``SVC``'s is ``"rbf"``). The linear-only
        radius-margin formulations take ``"linear"`` (or None) only. With
        ``"precomputed"``, ``fit`` takes the Gram matrix and ``predict`` ``K(X_test, X_train)``.
    gamma : float, "scale", "auto" or None, default=None
        ``poly`` and ``rbf`` kernels; None: ``"scale"`` (``1 / (n_features X.var())``).
    degree : int or None, default=None
        ``poly`` kernel; None: 3.
    coef0 : float or None, default=None
        ``poly`` kernel; None: 0.0.
    lam : float or None, default=None
        Radius weight of the radius-margin SVMs; None: 1.0.
    kernels : list or None, default=None
        ``rsvm_mu_plus``: kernels to combine (names or dicts such as
        ``{"kernel": "rbf", "gamma": 0.5}``) instead of the features.
    pairs : str, (I, J) arrays or None, default=None
        Radius rows of ``rsvm_mu_plus``, ``rsvm_plus_primal``, ``rsvm_plus_dual``: ``"auto"``,
        ``"all"``, ``"generate"`` (see :func:`svm_models.fit`); None: ``"auto"`` (``"all"``
        for ``rsvm_plus_dual``).
    radius : {"compact", "pairwise"} or None, default=None
        ``rsvm_plus_kernel``'s radius form; None: ``"compact"``.
    g_bounds : (float, float) or None, default=None
        C tuning: the range of the kernel weight g; None: the variant's range.
    form : {"auto", "norm", "quadratic"} or None, default=None
        C tuning: cones or quadratic rows; None: ``"auto"`` (the backend's choice).
    quad_form : {"auto", "dense", "factor"} or None, default=None
        Classic duals: the quadratic form; None: ``"auto"``.
    solver_options : dict or None, default=None
        Solve options kept apart from the hyperparameters: ``tol``, ``time_limit``,
        ``iter_limit``, ``threads``, ``verbose``, ``options`` (raw backend options), ``path``,
        and ``batch`` (pairs added per round of constraint generation).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels; ``classes_[1]`` is the positive class of the binary problem.
    solution_ : Solution
        Two classes: the solution of the problem.
    estimators_ : list of Solution
        More than two classes: the solution of class ``k`` against the rest (labels +1 for
        class ``k``, -1 for the others).
    support_ : ndarray of shape (n_SV,), int32
        Indices of the support vectors, grouped by class as ``SVC`` (more than two
        classes: the union of the binary problems' support sets).
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The support vectors (``(n_SV, 0)`` for a precomputed kernel).
    n_support_ : ndarray of shape (n_classes,), int32
        Support vectors of each class (by their training label).
    dual_coef_ : ndarray of shape (1, n_SV) or (n_classes, n_SV)
        Coefficients of the decision function on the support vectors: row ``k`` is binary
        problem ``k``'s (zero on the other problems' support vectors), so that
        ``decision_function(X)[:, k] = dual_coef_[k] @ K_k(support_vectors_, X) +
        intercept_[k]``, with ``K_k`` the kernel of that problem (the same for all classes
        except ``rsvm_mu_plus``, which learns one per problem). Positive for
        ``classes_[1]`` (binary) or class ``k``, as ``SVC``.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The bias b of each problem.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        ``w`` of each problem; only when the solutions have one (linear kernel), otherwise
        reading it raises AttributeError, as ``SVC``.
    C_ : float or None, or ndarray of shape (n_classes,)
        The C each problem was solved with (C tuning: the learned C*); None (NaN in the
        array) where there is none (hard margin, or no positive C matches g*).
    g_ : float or ndarray of shape (n_classes,)
        C tuning only: the learned kernel weight g*.
    lam_, r_ : float or ndarray of shape (n_classes,)
        Radius-margin SVMs only: the radius weight and the radius term at the solution.
    mu_ : ndarray of shape (n_weights,) or (n_classes, n_weights)
        ``rsvm_mu_plus`` only: the learned feature (or kernel) weights.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Feature names, when ``X`` has string column names (a DataFrame).

    Notes
    -----
    Sample weights are not supported (``fit`` takes none), so scikit-learn's sample-weight
    checks do not apply; sparse input is refused with scikit-learn's TypeError. Bad data and
    bad hyperparameters raise :class:`~svm_models.errors.DataError` and
    :class:`~svm_models.errors.ParameterError`, which subclass ValueError. A kernel parameter
    the chosen kernel does not use (``gamma`` with ``kernel="linear"``) is refused: in a grid
    search, give one grid per kernel (a list of dicts).

    Examples
    --------
    >>> from svm_models.estimator import SVMClassifier
    >>> from svm_models.datasets import toy
    >>> X, y = toy()
    >>> clf = SVMClassifier(solver="highs", C=1.0).fit(X, y)
    >>> clf.coef_, clf.intercept_                      # doctest: +SKIP
    (array([[0.5, 0.5]]), array([0.]))
    """

    def __init__(self, formulation="soft_l1_dual", solver="ipopt", C=None, kernel=None,
                 gamma=None, degree=None, coef0=None, lam=None, kernels=None, pairs=None,
                 radius=None, g_bounds=None, form=None, quad_form=None, solver_options=None):
        self.formulation = formulation
        self.solver = solver
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.lam = lam
        self.kernels = kernels
        self.pairs = pairs
        self.radius = radius
        self.g_bounds = g_bounds
        self.form = form
        self.quad_form = quad_form
        self.solver_options = solver_options

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    # hyperparameters --------------------------------------------------------------------
    def _formulation_params(self) -> dict:
        """The hyperparameters set (not None) that the formulation takes; ParameterError for
        any other."""
        f = lookup(self.formulation)
        given = {k: getattr(self, k) for k in HYPERPARAMETERS if getattr(self, k) is not None}
        if "kernel" not in f.params and given.get("kernel") == "linear":
            del given["kernel"]  # a linear-only formulation: that is what it solves
        unknown = sorted(set(given) - set(f.params))
        if unknown:
            takes = [p for p in HYPERPARAMETERS if p in f.params]
            hint = ""
            if "C" in unknown and f.family == "c_tuning":
                hint = " C tuning learns C (read C_ after fit)."
            elif "C" in unknown and f.family == "hard":
                hint = " The hard margin has no C: choose a soft-margin formulation for one."
            elif "kernel" in unknown:
                hint = (f" {self.formulation} is linear only: for kernel={self.kernel!r} choose "
                        "formulation='rsvm_plus_kernel', or 'rsvm_mu_plus' with kernels=[...].")
            raise ParameterError(
                f"formulation {self.formulation!r} takes no {', '.join(unknown)} (it takes "
                f"{', '.join(takes) or 'none'}); leave {'them' if len(unknown) > 1 else 'it'} "
                f"None.{hint}")
        kernel = given.get("kernel", "linear")
        for name, kernels in _KERNEL_USES.items():
            if name in given and kernel not in kernels:
                raise ParameterError(
                    f"{name}={given[name]!r} has no effect with kernel={kernel!r} (it is used "
                    f"by kernel {' or '.join(map(repr, kernels))}); leave it None, or in a grid "
                    "search give one grid per kernel")
        C = given.get("C")
        if f.family == "radius_margin" and isinstance(C, numbers.Real) and C == float("inf"):
            given["C"] = None  # the radius-margin builders' hard margin
        return given

    def _solve_options(self) -> dict:
        opts = self.solver_options
        if opts is None:
            return {}
        if not isinstance(opts, Mapping):
            raise ParameterError(f"solver_options must be a dict or None; got "
                                 f"{type(opts).__name__}")
        unknown = sorted(set(opts) - set(SOLVER_OPTION_KEYS))
        if unknown:
            raise ParameterError(
                f"solver_options takes {', '.join(SOLVER_OPTION_KEYS)}; got {unknown} "
                "(hyperparameters are constructor arguments of SVMClassifier)")
        return dict(opts)

    # fitting ----------------------------------------------------------------------------
    def fit(self, X, y):
        """Solve the formulation on (X, y): one problem, or one per class (one-vs-rest).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) Gram
            matrix for ``kernel="precomputed"``
        y : array-like of shape (n_samples,), any labels of at least two classes

        Returns
        -------
        self : SVMClassifier

        Raises
        ------
        ParameterError
            A hyperparameter the formulation does not take, or out of range.
        DataError
            Unusable data (a single class, NaN, ...); scikit-learn's ValueError for what
            its validation catches first.
        SolverError
            The backend is missing, cannot take the problem, or did not solve it.
        """
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        params = self._formulation_params()
        solve_kw = self._solve_options()
        for name in ("solution_", "estimators_", "g_", "lam_", "r_", "mu_"):
            self.__dict__.pop(name, None)  # learned by an earlier fit
        classes, y_index = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise DataError(f"y has 1 class ({classes[0]!r}); a classifier needs samples of at "
                            "least two classes")
        binary = classes.size == 2
        targets = [y] if binary else [np.where(y == c, 1, -1) for c in classes]
        sols = [sm_fit(X, t, self.formulation, self.solver, **params, **solve_kw)
                for t in targets]
        self.classes_ = classes
        if binary:
            self.solution_ = sols[0]
        else:
            self.estimators_ = sols
        self._learned_attributes(sols, X, y_index)
        return self

    def _learned_attributes(self, sols, X, y_index) -> None:
        binary = len(sols) == 1
        support = np.unique(np.concatenate([s.support for s in sols]))
        support = support[np.argsort(y_index[support], kind="stable")]  # by class, as SVC
        self.support_ = support.astype(np.int32)
        self.support_vectors_ = (X[support] if sols[0].kernel.name != "precomputed"
                                 else np.zeros((support.size, 0)))
        self.n_support_ = np.bincount(y_index[support],
                                      minlength=self.classes_.size).astype(np.int32)
        self.dual_coef_ = np.stack([s.dual_coef[support] for s in sols])
        self.intercept_ = np.array([s.b for s in sols])

        def per_class(values):
            if binary:
                return values[0]
            if isinstance(values[0], np.ndarray):
                return np.stack(values)
            return np.array([np.nan if v is None else v for v in values], dtype=float)

        self.C_ = per_class([s.C for s in sols])
        family = lookup(self.formulation).family
        if family == "c_tuning":
            self.g_ = per_class([s.details.g for s in sols])
        if family == "radius_margin":
            self.lam_ = per_class([s.details.lam for s in sols])
            self.r_ = per_class([s.details.r for s in sols])
            if sols[0].details.mu is not None:
                self.mu_ = per_class([np.asarray(s.details.mu) for s in sols])

    # prediction -------------------------------------------------------------------------
    def _solutions(self) -> list:
        check_is_fitted(self)
        return [self.solution_] if hasattr(self, "solution_") else self.estimators_

    @property
    def coef_(self) -> np.ndarray:
        """``w`` of each problem, shape (1, n_features) or (n_classes, n_features)."""
        ws = [s.w for s in self._solutions()]
        if any(w is None for w in ws):
            raise AttributeError("coef_ is only available when using a linear kernel "
                                 "(read dual_coef_ and support_vectors_ instead)")
        return np.stack(ws)

    def decision_function(self, X) -> np.ndarray:
        """Decision values: shape (n_samples,) for two classes (positive for
        ``classes_[1]``), (n_samples, n_classes) one-vs-rest otherwise.

        For ``kernel="precomputed"`` pass ``K(X_test, X_train)``, shape
        (n_samples, n_train).
        """
        sols = self._solutions()
        X = validate_data(self, X, reset=False)
        if len(sols) == 1:
            return sols[0].decision_function(X)
        return np.column_stack([s.decision_function(X) for s in sols])

    def predict(self, X) -> np.ndarray:
        """Predicted class labels, shape (n_samples,)."""
        sols = self._solutions()
        if len(sols) == 1:
            return sols[0].predict(validate_data(self, X, reset=False))
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]

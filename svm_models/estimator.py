"""The scikit-learn face: :class:`SVMClassifier`, every registered formulation as an estimator,
and :class:`SVMClassifierCV`, the same with its hyperparameters chosen by cross-validation.

Fitting goes through :func:`svm_models.fit` (one binary problem, or for more than two classes
one per class, one-vs-rest, or one per pair of classes, one-vs-one) and keeps the
:class:`~svm_models.solution.Solution` of each; prediction reads them. Cross-validation goes
through :func:`svm_models.methods.cv.cross_validate`, which decomposes and combines the
multiclass problems the same way (:func:`~svm_models.methods.cv.binary_problems`,
:func:`~svm_models.methods.cv.combine`). Nothing below this module imports it.
"""

from __future__ import annotations

import inspect

import warnings
from collections.abc import Mapping
from functools import partial

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import _safe_indexing
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _num_samples,
    check_consistent_length,
    check_is_fitted,
    validate_data,
)

from .data import as_weights, check_scale, check_square, check_weighted_classes
from .errors import BadScaleWarning, DataError, ParameterError
from .formulations import LISTENERS, check_params, hyperparameters
from .formulations import get as lookup
from .formulations.params import PARAMS
from .kernels import Kernel
from .methods.cv import (
    best_index,
    binary_problems,
    combine,
    predicted_index,
    cross_validate,
    problem_points,
    resolved_gamma,
)
from .api import fit_pairs, with_deadline
from .methods.radius import fit as sm_fit
from .config import SOLVE_OPTIONS, solve_config
from .threads import library_threads

#: ``probability=True``: the folds of the internal cross-validation (as libsvm)
PROBABILITY_FOLDS = 5

#: :class:`SVMClassifier`'s own parameters (after the hyperparameters) and their defaults
ESTIMATOR_PARAMS = {"solver_options": None, "multi_class": None, "class_weight": None,
                    "decision_function_shape": "ovr", "probability": "deprecated",
                    "random_state": None, "break_ties": False}


def _parameter_names() -> tuple[str, ...]:
    """:class:`SVMClassifier`'s parameters after ``formulation`` and ``solver``: every
    registered hyperparameter, then :data:`ESTIMATOR_PARAMS`."""
    return hyperparameters() + tuple(ESTIMATOR_PARAMS)


def _derive_parameters(formulation=None) -> None:
    """Keep :class:`SVMClassifier`'s signature (what scikit-learn's ``get_params`` reads) and
    its docstring's Parameters equal to the registry: called once here and again by the
    registry for each formulation registered later (:data:`svm_models.formulations.LISTENERS`)."""
    P = inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD),
              P("formulation", P.POSITIONAL_OR_KEYWORD, default="soft_l1_dual"),
              P("solver", P.POSITIONAL_OR_KEYWORD, default="auto")]
    params += [P(n, P.KEYWORD_ONLY, default=ESTIMATOR_PARAMS.get(n)) for n in _parameter_names()]
    SVMClassifier.__init__.__signature__ = inspect.Signature(params)
    doc = SVMClassifier.__doc__
    head, tail = doc.split("\n    Attributes\n", 1)
    missing = [n for n in hyperparameters() if f"\n    {n} : " not in head]
    for n in missing:   # a hyperparameter no entry above describes: its declaration's words
        p = PARAMS[n]
        head += (f"    {n} : {p.domain} or None, default=None\n        {p.doc[0].upper()}"
                 f"{p.doc[1:]}; None: the formulation's default.\n")
    SVMClassifier.__doc__ = head + "\n    Attributes\n" + tail

#: What ``solver_options`` may hold: the solve options (:class:`svm_models.config.SolveConfig`;
#: an estimator always raises on a failed solve), and ``batch`` (constraint generation).
SOLVER_OPTION_KEYS = tuple(k for k in SOLVE_OPTIONS if k != "raise_on_failure") + ("batch",)


def _validate(estimator, X, y="no_validation", *, reset=True, sparse=False):
    """scikit-learn's ``validate_data``, its ValueErrors raised as
    :class:`~svm_models.errors.DataError` (a ValueError too). The message starts with
    scikit-learn's own first line ("Input X contains NaN.", which its checks look for); for
    NaN or infinite values it then names the first such entry and the way out. ``sparse``:
    a scipy sparse X of any format is taken as ``SVC`` takes it (converted to CSR, so
    ``lil``, ``coo``, ... too), then held dense (:func:`_densified`)."""
    try:
        out = validate_data(estimator, X, y, reset=reset,
                            **({"accept_sparse": "csr"} if sparse else {}))
        if not sparse:
            return out
        if isinstance(out, tuple):
            return _densified(out[0]), out[1]
        return _densified(out)
    except DataError:
        raise
    except ValueError as exc:
        text = str(exc)
        first = text.split("\n")[0]
        if " contains NaN" in first or " contains infinity" in first:
            labels = first.startswith(("Input y", "Input Y"))
            way_out = ("drop the samples whose label is missing or infinite" if labels else
                       "drop the samples with missing or infinite values, or fill them in "
                       "(e.g. sklearn.impute.SimpleImputer in a Pipeline) first")
            text = (f"{first.rstrip('.')}{_first_non_finite(y if labels else X)}. "
                    f"{type(estimator).__name__} needs finite numbers: {way_out}")
        raise DataError(text) from None


def _densified(X):
    """A validated X as the dense array the models hold (``X.toarray()`` for a sparse one;
    a DataError with its size when there is no memory for it)."""
    if not sp.issparse(X):
        return X
    try:
        return X.toarray()
    except MemoryError:
        mb = float(np.prod(X.shape)) * 8 / 2**20
        raise DataError(f"X is a scipy sparse matrix ({X.shape[0]} x {X.shape[1]}); the "
                        f"models hold it dense, and its {mb:,.0f} MB of float64 do not fit "
                        "in memory: reduce its features (e.g. sklearn's TruncatedSVD) "
                        "first") from None


def _shape(X) -> str:
    """``X``'s shape, or its type and length when it has no shape (a list of strings)."""
    shape = getattr(X, "shape", None)
    return f"shape {tuple(shape)}" if shape is not None else (
        f"a {type(X).__name__} of {_num_samples(X)}")


def _check_targets(y) -> None:
    """scikit-learn's ``check_classification_targets``, its ValueError (continuous or
    multi-output labels) raised as :class:`~svm_models.errors.DataError` with its message."""
    try:
        check_classification_targets(y)
    except DataError:
        raise
    except ValueError as exc:
        raise DataError(str(exc)) from None


def _first_non_finite(values) -> str:
    """" (first at row i, column j)" for the first NaN or infinite entry of ``values``
    ("" when it cannot be read as floats)."""
    try:
        A = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        return ""
    bad = np.argwhere(~np.isfinite(np.atleast_1d(A)))
    if bad.size == 0:
        return ""
    if A.ndim == 2:
        return f" (first at row {bad[0][0]}, column {bad[0][1]})"
    return f" (first at position {bad[0][0]})"


class SVMClassifier(ClassifierMixin, BaseEstimator):
    """A scikit-learn classifier solving any registered SVM formulation with a chosen backend.

    Two classes give one problem; more give, as ``SVC`` trains, one binary problem per pair
    of classes, one-vs-one (the default: each problem on the points of its two classes,
    ``predict`` by votes as ``SVC``), or one per class, one-vs-rest
    (``multi_class="ovr"``: class ``k`` against the others, ``predict`` the class of largest
    decision value).
    Hyperparameters left ``None`` take the formulation's default; one set for a
    formulation that does not take it is a :class:`~svm_models.errors.ParameterError` at
    ``fit`` (it is never ignored).

    Parameters
    ----------
    formulation : str, default="soft_l1_dual"
        A registered formulation (``svm_models.formulations()``); the default is the
        1-norm soft-margin dual, the problem of scikit-learn's ``SVC``.
    solver : str, default="auto"
        The backend, as in :func:`svm_models.fit` (``"libsvm"``, ``"ipopt"``, ``"gurobi"``,
        ``"highs"``, ``"scip"``, ``"piqp"``, ``"clarabel"``, ``"ipm"``); ``"auto"``: the
        fastest installed backend that takes the model (libsvm for the classic duals, then
        PIQP, ...: :data:`svm_models.solvers.AUTO_ORDER`); the Solution's
        ``Solution.solver_choice`` says which and why.
    C : float or None, default=None
        Soft-margin parameter; None: the formulation's default (1.0). Not taken by the hard
        margin nor by C tuning (which learns it: ``C_``). Radius-margin SVMs:
        ``C=float("inf")`` is the hard margin.
    kernel : {"linear", "poly", "rbf", "precomputed"}, callable or None, default=None
        None: ``"linear"``, the library's default (``SVC``'s is ``"rbf"``). The linear-only
        radius-margin formulations take ``"linear"`` (or None) only. With
        ``"precomputed"``, ``fit`` takes the Gram matrix and ``predict`` ``K(X_test, X_train)``.
        A callable ``kernel(A, B)`` returns the matrix of its values (as ``SVC``'s): the
        formulation is solved on ``kernel(X, X)``, predictions use ``kernel(X_test,
        X_train)``, and ``support_vectors_`` are the training samples.
    gamma : float, "scale", "auto" or None, default=None
        ``poly`` and ``rbf`` kernels; None: ``"scale"`` (``1 / (n_features X.var())``).
    degree : int or None, default=None
        ``poly`` kernel; None: 3.
    coef0 : float or None, default=None
        ``poly`` kernel; None: 0.0.
    kernel_rank : int or None, default=None
        rbf and poly kernels of the classic SVMs: solve with ``K ~= L L'`` of this rank
        (pivoted incomplete Cholesky, K never formed); predictions use the Nystroem kernel of
        the pivots. None: the exact kernel.
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
        ``scaling``, ``switch`` (as :func:`svm_models.solve` takes them, declared in
        :class:`svm_models.config.SolveConfig`; checked when ``fit`` is called), and
        ``batch`` (pairs added per round of constraint generation).
    multi_class : {"ovr", "ovo"} or None, default=None
        More than two classes: one-vs-one (one problem per pair ``i < j`` of classes, on
        their points; class ``j`` is the positive one; prediction by votes, as ``SVC``: a tie
        goes to the first tied class, or with ``break_ties=True`` to the larger summed
        decision values) or one-vs-rest (one problem per class, on all points). None:
        one-vs-one, as ``SVC`` trains -- the faster of the two: its problems hold two classes'
        points each, and the time of a solve grows faster than its points (libsvm's SMO,
        the interior-point methods' factorisations), so the k (k - 1) / 2 small problems
        take less than the k problems on all points (digits, 10 classes:
        ``benchmarks/svc_results.md``). A kernel parameter resolved from the data
        (``gamma="scale"`` or ``"auto"``) is resolved once, on all the training points, as
        ``SVC`` resolves it, and every binary problem takes that value.
    class_weight : dict, "balanced" or None, default=None
        As ``SVC``'s: class ``k``'s C is ``C * class_weight[k]`` (``"balanced"``:
        ``n_samples / (n_classes * n_samples_k)``), with ``fit``'s ``sample_weight`` a
        per-point C (``C_i = C * weight_i``: the Param ``weight`` of the model). Only
        formulations with C per point (the soft margins).
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        More than two classes: ``"ovr"``, ``decision_function`` has shape
        (n_samples, n_classes) (one-vs-one: each class's votes plus its summed confidences
        squashed into (-1/3, 1/3), built from the pairs' values as ``SVC`` builds it;
        one-vs-rest: each class's value against the rest); ``"ovo"``, the one-vs-one
        problems' own values, shape (n_samples, n_classes (n_classes - 1) / 2), positive for
        the first class of each pair (``SVC``'s order and sign); it trains one-vs-one.
    probability : bool, default="deprecated"
        Deprecated, as scikit-learn 1.9 deprecates ``SVC``'s: calibrate with
        ``CalibratedClassifierCV(SVMClassifier(), ensemble=False)`` instead. True (with a
        FutureWarning, as ``SVC``): fit Platt's sigmoid to each binary problem's decision
        values from an internal 5-fold cross-validation (five more fits per problem):
        ``predict_proba``. "deprecated" (the default) is False.
    random_state : int, RandomState or None, default=None
        The shuffling of that internal cross-validation.
    break_ties : bool, default=False
        As ``SVC``'s: with ``decision_function_shape="ovr"``, more than two classes and
        one-vs-one, ``predict`` gives a tie of votes to the largest ``decision_function``
        value (its argmax) instead of the first of the tied classes. True with
        ``decision_function_shape="ovo"`` is refused by ``predict``.
    k : float or None, default=None
        ``feature_selection`` only: the budget, at most ``k`` features kept (with
        ``feature_cost``: ``sum_j cost_j v_j <= k``); None: no budget.
    norm : {"l1", "l2"} or None, default=None
        ``feature_selection`` only: the norm of w (a MILP or a MIQP); None: ``"l1"``.
    feature_cost : array-like of shape (n_features,) or None, default=None
        ``feature_selection`` only: each feature's cost in the budget (1 each).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels; ``classes_[1]`` is the positive class of the binary problem.
    solution_ : Solution
        Two classes: the solution of the problem.
    estimators_ : list of Solution
        More than two classes: one-vs-rest, the solution of class ``k`` against the rest
        (labels +1 for class ``k``, -1 for the others); one-vs-one, the solution of class
        ``j`` (+1) against class ``i`` (-1) for the pairs ``i < j`` in order (its indices
        ``support`` and ``alpha`` refer to the points of those two classes).
    support_ : ndarray of shape (n_SV,), int32
        Indices of the support vectors, grouped by class as ``SVC`` (more than two
        classes: the union of the binary problems' support sets).
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The support vectors (``(n_SV, 0)`` for a precomputed kernel; for a callable kernel
        the training samples as given: rows of X, or items of a list).
    n_support_ : ndarray of shape (n_classes,), int32
        Support vectors of each class (by their training label).
    dual_coef_ : ndarray of shape (1, n_SV) or (n_problems, n_SV)
        Coefficients of the decision function on the support vectors: row ``k`` is binary
        problem ``k``'s (zero on the other problems' support vectors), so that its decision
        value is ``dual_coef_[k] @ K_k(support_vectors_, X) + intercept_[k]``, with ``K_k``
        the kernel of that problem (the same for all classes except ``rsvm_mu_plus``, which
        learns one per problem, and R-SVM+ (``rsvm_plus_primal``/``rsvm_plus_dual``), which
        learns a metric: ``K = X diag(1/t) X'``, see ``formulations/rsvm_plus_primal.md``);
        one-vs-rest, this is ``decision_function(X)[:, k]``.
        Positive for ``classes_[1]`` (binary) or the problem's positive class, as ``SVC``.
        ``n_problems`` is n_classes (one-vs-rest) or n_classes (n_classes - 1) / 2.
    intercept_ : ndarray of shape (1,) or (n_problems,)
        The bias b of each problem.
    model_ : pyomo ConcreteModel, or list of them (one per binary problem)
        The Pyomo model solved, built when first read (:attr:`svm_models.Solution.model`):
        a fit on a backend that takes the problem as data (libsvm) builds none until then.
    coef_ : ndarray of shape (1, n_features) or (n_problems, n_features)
        ``w`` of each problem; only when the solutions have one (linear kernel), otherwise
        reading it raises AttributeError, as ``SVC``.
    C_ : float or None, or ndarray of shape (n_problems,)
        The C each problem was solved with (C tuning: the learned C*); None (NaN in the
        array) where there is none (hard margin, or no positive C matches g*).
    g_ : float or ndarray of shape (n_problems,)
        C tuning only: the learned kernel weight g*.
    lam_, r_ : float or ndarray of shape (n_problems,)
        Radius-margin SVMs only: the radius weight and the radius term at the solution.
    mu_ : ndarray of shape (n_weights,) or (n_problems, n_weights)
        ``rsvm_mu_plus`` only: the learned feature (or kernel) weights.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Feature names, when ``X`` has string column names (a DataFrame).

    probA_, probB_ : ndarray of shape (n_problems,)
        ``probability=True``: each binary problem's sigmoid, ``P = 1 / (1 + exp(A f + B))``
        (deprecated, as SVC's: reading them is a FutureWarning).

    Notes
    -----
    ``sample_weight`` and ``class_weight`` set a per-point C in the soft-margin formulations
    (primal and dual, every backend); weights that leave a class with no positive weight are
    refused (SVC's messages, the class named). A scipy sparse X of any format is taken as
    ``SVC`` takes it (converted to CSR, then held dense by the models; refused for
    ``kernel="precomputed"``, as SVC). Bad data and bad hyperparameters raise :class:`~svm_models.errors.DataError` and
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

    # The parameters are derived: ``formulation`` and ``solver``, every hyperparameter a
    # registered formulation takes (:func:`svm_models.formulations.hyperparameters`, each
    # None: the formulation's default), then the estimator's own (:data:`ESTIMATOR_PARAMS`).
    # The signature scikit-learn reads (``get_params``, ``clone``) is kept equal to that list
    # as formulations are registered (:func:`_derive_parameters`).
    def __init__(self, formulation="soft_l1_dual", solver="auto", **params):
        self.formulation = formulation
        self.solver = solver
        names = _parameter_names()
        unknown = sorted(set(params) - set(names))
        if unknown:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument {unknown[0]!r} (its parameters: formulation, solver, "
                            f"{', '.join(names)})")
        for name in names:
            setattr(self, name, params.get(name, ESTIMATOR_PARAMS.get(name)))

    def __getattr__(self, name):
        # a hyperparameter registered after this estimator was made: its default, None
        if not name.startswith("_") and name in hyperparameters():
            return None
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = self.kernel != "precomputed"   # as SVC's
        return tags

    # hyperparameters --------------------------------------------------------------------
    def _formulation_params(self) -> dict:
        """The hyperparameters set (not None) that the formulation takes; ParameterError for
        any other, or a value outside its domain (:func:`~svm_models.formulations.check_params`)."""
        given = {k: getattr(self, k) for k in hyperparameters()}
        if callable(self.kernel):   # solved on its Gram matrix (see _gram)
            given["kernel"] = "precomputed"
        return check_params(self.formulation, given)

    def _input(self, X) -> np.ndarray:
        """``X`` validated for prediction (a sparse X held dense, as at ``fit``); for a
        callable kernel, its matrix against the training samples, ``kernel(X, X_train)``, X
        given to the kernel as it is (a list of strings too, as SVC's)."""
        if callable(self.kernel):
            return self._gram(X, self._kernel_X)
        return _validate(self, X, reset=False, sparse=True)

    @property
    def _precomputed(self) -> bool:
        """Whether the formulations are given Gram matrices: ``kernel="precomputed"``, or a
        callable kernel (its matrices computed here)."""
        return callable(self.kernel) or self.kernel == "precomputed"

    def _gram(self, X, Z) -> np.ndarray:
        """``kernel(X, Z)`` of a callable kernel, checked: a finite matrix of shape
        (len(X), len(Z)). ``X`` and ``Z`` are the samples as given (arrays, sparse matrices,
        lists of strings, ...: only the kernel reads them)."""
        try:
            n, m = _num_samples(X), _num_samples(Z)
        except TypeError as exc:
            raise DataError(f"X must hold samples for the callable kernel: {exc}") from None
        try:
            K = self.kernel(X, Z)
            K = np.asarray(K.toarray() if sp.issparse(K) else K, dtype=float)
        except Exception as exc:   # noqa: BLE001  (the user's function: said, not hidden)
            raise ParameterError(f"the callable kernel failed on {n} and {m} samples "
                                 f"({_shape(X)} and {_shape(Z)}): {type(exc).__name__}: "
                                 f"{exc}") from exc
        if K.shape != (n, m):
            raise ParameterError(f"the callable kernel must return a matrix of shape "
                                 f"({n}, {m}) for arrays of {n} and "
                                 f"{m} samples; it returned shape {K.shape}")
        if not np.all(np.isfinite(K)):
            raise DataError("the callable kernel returned values that are not finite")
        return K

    def _solve_options(self) -> dict:
        return _solve_options(self.solver_options, type(self).__name__)

    def _multi_class(self) -> str:
        """The multiclass scheme: ``multi_class``, or None: one-vs-one, as SVC."""
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ParameterError(f"decision_function_shape must be 'ovr' or 'ovo'; got "
                                 f"{self.decision_function_shape!r}")
        if not isinstance(self.break_ties, (bool, np.bool_)):
            raise ParameterError(f"break_ties must be True or False; got {self.break_ties!r}")
        if self.multi_class is None:
            return "ovo"
        if self.multi_class == "ovr" and self.decision_function_shape == "ovo":
            raise ParameterError("decision_function_shape='ovo' gives the values of the "
                                 "one-vs-one problems: set multi_class='ovo' (or leave it None)")
        return self.multi_class

    def _point_weights(self, y, classes, sample_weight) -> np.ndarray | None:
        """Each point's factor of C: ``sample_weight`` times its class's ``class_weight``
        (None when neither is given)."""
        if sample_weight is None and self.class_weight is None:
            return None
        f = lookup(self.formulation)
        if "sample_weight" not in f.params:
            raise ParameterError(
                f"{self.formulation} has no per-point C, so it takes no sample_weight or "
                "class_weight; the soft margins (soft_l1_*, soft_l2_*) do")
        w = np.ones(y.shape[0])
        if sample_weight is not None:
            w = w * as_weights(sample_weight, y.shape[0])
        if self.class_weight is not None:
            from sklearn.utils.class_weight import compute_class_weight

            try:
                cw = compute_class_weight(self.class_weight, classes=classes, y=y)
            except ValueError as exc:
                raise ParameterError(f"class_weight: {exc}") from None
            w = w * cw[np.searchsorted(classes, y)]
        return w

    # fitting ----------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Solve the formulation on (X, y): one problem, or one per pair of classes
        (one-vs-one; ``multi_class="ovr"``: one per class).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) Gram
            matrix for ``kernel="precomputed"``
        y : array-like of shape (n_samples,), any labels of at least two classes
        sample_weight : array-like of shape (n_samples,), optional
            Per-sample factors of C, as ``SVC``'s: sample i's penalty is
            ``C * sample_weight[i] * class_weight[y_i]``; weights ``<= 0`` leave the sample
            out. Only formulations with C per point (the soft margins).

        Returns
        -------
        self : SVMClassifier

        Raises
        ------
        ParameterError
            A hyperparameter the formulation does not take, or out of range.
        DataError
            Unusable data (NaN or infinite values, a single class, a wrong shape, ...),
            scikit-learn's validation included (its message kept at the start).
        SolverError
            The backend is missing, cannot take the problem, or did not solve it.
        """
        X, y = self._fit_input(X, y)
        with library_threads(y.size):   # (the BLAS threads that pay: svm_models/threads.py)
            return self._fit_checked(X, y, sample_weight)

    def _fit_checked(self, X, y, sample_weight):
        """:meth:`fit` on validated input, within the library's BLAS threads."""
        _check_targets(y)
        params = self._formulation_params()
        self.__dict__.pop("_kernel_X", None)
        if callable(self.kernel):   # SVC's callable kernel: solved on its Gram matrix
            self._kernel_X = X
            X = self._gram(X, X)
        # one deadline for the whole fit: every binary problem, the probability calibration
        solve_kw = with_deadline(self._solve_options(), X, self.formulation)
        multi_class = self._multi_class()
        probability = self._probability()
        for name in ("solution_", "estimators_", "g_", "lam_", "r_", "mu_", "_probA", "_probB"):
            self.__dict__.pop(name, None)  # learned by an earlier fit
        if self._precomputed:   # (before each problem's block is cut from it)
            check_square(X)
        classes, y_index = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise DataError(f"y has 1 class ({classes[0].item()!r}); a classifier needs "
                            "samples of at least two classes")
        weight = self._point_weights(y, classes, sample_weight)
        if weight is not None:   # SVC's refusals, the class named (before any binary split)
            check_weighted_classes(weight, y_index, classes)
        binary = classes.size == 2
        problems = binary_problems(classes.size, multi_class)
        if not binary:   # (gamma="scale" of all the points, as SVC: every pair the same kernel)
            params = resolved_gamma(self.formulation, params, X)
        self._points = [None] if binary else [
            problem_points(y_index, np.arange(y.size), p)[0] for p in problems]
        sols = []
        with warnings.catch_warnings():
            if not binary:   # the scale of X is said once, not once per binary problem
                if not self._precomputed:
                    check_scale(np.asarray(X, dtype=float))
                warnings.simplefilter("ignore", BadScaleWarning)
            shared = [None] * len(problems)
            if multi_class == "ovo" and not binary and not self._precomputed:
                shared = fit_pairs(X, y_index, self._points, self.formulation, self.solver,
                                   params, weight, solve_kw)
            for pts, problem, done in zip(self._points, problems, shared):
                if done is not None:   # (solved with the other pairs, as SVC trains them)
                    sols.append(done)
                    continue
                if pts is None:
                    Xp, t = X, y  # the labels themselves: the solution predicts them
                else:
                    Xp = X[np.ix_(pts, pts)] if self._precomputed else X[pts]
                    t = problem_points(y_index, pts, problem)[1]
                kw = {} if weight is None else {
                    "sample_weight": weight if pts is None else weight[pts]}
                sols.append(sm_fit(Xp, t, self.formulation, self.solver, **params, **kw,
                                   **solve_kw))
            if probability:
                self._fit_probability(X, y_index, weight, problems, params, solve_kw)
        self.classes_ = classes
        if binary:
            self.solution_ = sols[0]
        else:
            self.estimators_ = sols
        self._learned_attributes(sols, X, y_index)
        return self

    def _fit_input(self, X, y) -> tuple:
        """(X, y) validated for ``fit``, as ``SVC`` takes them: a sparse X of any scipy format
        held dense (refused for ``kernel="precomputed"``, with SVC's TypeError); for a
        callable kernel X as given (a list of strings too: only the kernel reads it), y
        validated and of X's length."""
        if not callable(self.kernel):
            if sp.issparse(X) and self.kernel == "precomputed":
                raise TypeError("Sparse precomputed kernels are not supported.")
            return _validate(self, X, y, sparse=self.kernel != "precomputed")
        try:
            check_consistent_length(X, y)
        except (TypeError, ValueError) as exc:
            raise DataError(str(exc)) from None
        for name in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(name, None)   # (SVC learns neither with a callable kernel)
        return X, _validate(self, "no_validation", y)

    def _probability(self) -> bool:
        """``probability`` as scikit-learn 1.9 keeps SVC's: "deprecated" (the default) is
        False; True or False given is a FutureWarning (calibrate with
        ``CalibratedClassifierCV`` instead) and is obeyed."""
        if isinstance(self.probability, str) and self.probability == "deprecated":
            return False
        if not isinstance(self.probability, (bool, np.bool_)):
            raise ParameterError(f"probability must be True or False; got "
                                 f"{self.probability!r}")
        warnings.warn(f"The `probability` parameter is deprecated, as scikit-learn 1.9 "
                      f"deprecates SVC's, and will be removed. Use "
                      f"`CalibratedClassifierCV({type(self).__name__}(), ensemble=False)` "
                      f"instead of `{type(self).__name__}(probability=True)`",
                      FutureWarning, stacklevel=3)
        return bool(self.probability)

    def _learned_attributes(self, sols, X, y_index) -> None:
        binary = len(sols) == 1
        pts = [np.arange(y_index.size) if p is None else p for p in self._points]
        chosen = [p[s.support] for p, s in zip(pts, sols)]  # support, as training indices
        support = np.unique(np.concatenate(chosen))
        support = support[np.argsort(y_index[support], kind="stable")]  # by class, as SVC
        self.support_ = support.astype(np.int32)
        given = getattr(self, "_kernel_X", None)   # a callable kernel's samples, as given
        self.support_vectors_ = (X[support] if sols[0].kernel.name != "precomputed"
                                 else np.zeros((support.size, 0)) if given is None
                                 else _safe_indexing(given.tocsr() if sp.issparse(given)
                                                     else given, support))
        self.n_support_ = np.bincount(y_index[support],
                                      minlength=self.classes_.size).astype(np.int32)
        where = np.full(y_index.size, -1)
        where[support] = np.arange(support.size)
        self.dual_coef_ = np.zeros((len(sols), support.size))
        for k, (c, s) in enumerate(zip(chosen, sols)):
            self.dual_coef_[k, where[c]] = s.dual_coef[s.support]
        self.intercept_ = np.array([s.b for s in sols])

        def per_class(values):
            if binary:
                return values[0]
            if isinstance(values[0], np.ndarray):
                return np.stack(values)
            return np.array([np.nan if v is None else v for v in values], dtype=float)

        self.C_ = per_class([s.C for s in sols])
        for name in lookup(self.formulation).learned:   # g_, lam_, r_, mu_, rho_, ...
            values = [getattr(s.details, name) for s in sols]
            if values[0] is not None:
                setattr(self, name + "_", per_class(
                    [np.asarray(v) if isinstance(v, (list, tuple, np.ndarray)) else v
                     for v in values]))

    # prediction -------------------------------------------------------------------------
    def _solutions(self) -> list:
        check_is_fitted(self)
        return [self.solution_] if hasattr(self, "solution_") else self.estimators_

    @property
    def model_(self):
        """The Pyomo model of the fit (two classes), or the list of the binary problems'
        models (``estimators_``' order): each built when first read, from the same data
        (:attr:`svm_models.Solution.model`; a fit on libsvm builds none)."""
        sols = self._solutions()
        return sols[0].model if len(sols) == 1 else [s.model for s in sols]

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
        ``classes_[1]``), (n_samples, n_classes) otherwise: one-vs-rest, each class's value
        against the rest; one-vs-one, each class's votes plus its summed decision values
        squashed into (-1/3, 1/3) (:func:`~svm_models.methods.cv.combine`).

        For ``kernel="precomputed"`` pass ``K(X_test, X_train)``, shape
        (n_samples, n_train).
        """
        sols = self._solutions()
        X = self._input(X)
        if len(sols) == 1:
            return sols[0].decision_function(X)
        values = self._binary_values(X)
        if self.decision_function_shape == "ovo":   # (the pairs' own values, as SVC's)
            return -np.column_stack(values)
        return combine(values, self.classes_.size, self._multi_class())

    def _binary_values(self, X) -> list:
        """Each binary problem's decision values on ``X`` (validated). Where every problem
        is the kernel expansion of one kernel (no ``w``, no kernel learned per problem),
        the kernel between ``X`` and the union of the support vectors is evaluated once and
        each problem reads its columns, as SVC predicts (``dual_coef_``'s meaning); else
        each problem's Solution evaluates its own."""
        sols = self._solutions()
        k0 = sols[0].kernel
        # (BLAS threads as a fit's, set once here: two beside a busy process left OpenBLAS's
        # second thread spinning into the next fit; each Solution's own then finds them set)
        with library_threads(X.shape[0]):
            if (len(sols) > 1 and not self._precomputed and type(k0) is Kernel
                    and all(s.w is None and s.kernel == k0 for s in sols)):
                values = k0.gram(X, self.support_vectors_) @ self.dual_coef_.T
                return list((values + self.intercept_).T)
            return [s.decision_function(X if p is None or not self._precomputed
                                        else X[:, p])
                    for p, s in zip(self._points, sols)]

    # probabilities (Platt scaling, as SVC) -------------------------------------------------
    def _fit_probability(self, X, y_index, weight, problems, params, solve_kw) -> None:
        """Platt's sigmoid per binary problem, fitted to decision values from an internal
        5-fold cross-validation (stratified, shuffled by ``random_state``), as SVC."""
        from sklearn.model_selection import StratifiedKFold

        from .methods.calibration import platt

        A, B = [], []
        pts_all = [np.arange(y_index.size) if p is None else p for p in self._points]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for pts, problem in zip(pts_all, problems):
                t = problem_points(y_index, pts, problem)[1]
                f = np.zeros(pts.size)
                folds = min(PROBABILITY_FOLDS, int(np.min(np.bincount((t > 0).astype(int)))))
                if folds < 2:
                    raise DataError("probability=True needs at least 2 samples of each class "
                                    "in every binary problem (an internal cross-validation)")
                cv = StratifiedKFold(folds, shuffle=True, random_state=self.random_state)
                for tr, te in cv.split(pts, t):
                    Xtr, Xte = ((X[np.ix_(pts[tr], pts[tr])], X[np.ix_(pts[te], pts[tr])])
                                if self._precomputed else (X[pts[tr]], X[pts[te]]))
                    kw = {} if weight is None else {"sample_weight": weight[pts[tr]]}
                    s = sm_fit(Xtr, t[tr], self.formulation, self.solver, **params, **kw,
                               **solve_kw)
                    f[te] = s.decision_function(Xte)
                a, b = platt(f, t)
                A.append(a)
                B.append(b)
        self._probA, self._probB = np.array(A), np.array(B)

    @property
    def probA_(self) -> np.ndarray:
        """Platt's A of each binary problem (``probability=True``); deprecated with
        ``probability``, as SVC's."""
        return _deprecated_platt(self._probA, "probA_")

    @property
    def probB_(self) -> np.ndarray:
        """Platt's B of each binary problem (``probability=True``); deprecated with
        ``probability``, as SVC's."""
        return _deprecated_platt(self._probB, "probB_")

    def _check_proba(self) -> bool:
        if (isinstance(self.probability, str) and self.probability == "deprecated"
                or not self.probability):
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes), columns in the order of
        ``classes_``: Platt's sigmoid of each binary problem's decision value (fitted on an
        internal 5-fold cross-validation), coupled pairwise for one-vs-one (Wu, Lin and
        Weng), normalised for one-vs-rest. As SVC's, they may disagree with ``predict`` on
        some points."""
        from .methods.calibration import ovo_probabilities, ovr_probabilities, sigmoid

        check_is_fitted(self, "_probA")
        X = self._input(X)
        probs = [sigmoid(f, a, b) for f, a, b in zip(self._binary_values(X), self._probA,
                                                        self._probB)]
        if len(probs) == 1:
            return np.column_stack([1.0 - probs[0], probs[0]])
        if self._multi_class() == "ovo":
            return ovo_probabilities(probs, binary_problems(self.classes_.size, "ovo"),
                                     self.classes_.size)
        return ovr_probabilities(probs)

    @available_if(_check_proba)
    def predict_log_proba(self, X) -> np.ndarray:
        """``log(predict_proba(X))``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X) -> np.ndarray:
        """Predicted class labels, shape (n_samples,). More than two classes, as ``SVC``:
        one-vs-rest, the class of largest value (``decision_function``'s argmax);
        one-vs-one, the class of most votes, a tie going to the first of the tied classes,
        or with ``break_ties=True`` (and ``decision_function_shape="ovr"``) to the largest
        ``decision_function`` value, its argmax."""
        sols = self._solutions()
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ParameterError("break_ties must be False when decision_function_shape is "
                                 "'ovo'")
        if len(sols) == 1:
            return sols[0].predict(self._input(X))
        values = self._binary_values(self._input(X))
        scheme = self._multi_class()
        return self.classes_[predicted_index(combine(values, self.classes_.size, scheme),
                                             scheme, bool(self.break_ties))]


def _deprecated_platt(values: np.ndarray, name: str) -> np.ndarray:
    """``values`` of the deprecated attribute ``name``, with scikit-learn 1.9's warning."""
    warnings.warn(f"Attribute `{name}` is deprecated, as scikit-learn 1.9 deprecates SVC's, "
                  "with the `probability=True` option", FutureWarning, stacklevel=3)
    return values


def _solve_options(opts, owner: str) -> dict:
    """The solve options of ``solver_options`` (a dict or None), checked."""
    if opts is None:
        return {}
    if not isinstance(opts, Mapping):
        raise ParameterError(f"solver_options must be a dict or None; got {type(opts).__name__}")
    unknown = sorted(set(opts) - set(SOLVER_OPTION_KEYS))
    if unknown:
        raise ParameterError(
            f"solver_options takes {', '.join(SOLVER_OPTION_KEYS)}; got {unknown} "
            f"(hyperparameters are constructor arguments of {owner})")
    solve_config(opts, extra=("batch",))   # each value in its declared domain, before a fit
    return dict(opts)


def _refit(X, y, params: dict, *, formulation, solver, multi_class, solver_options,
           given: dict, sample_weight=None) -> tuple:
    """:class:`SVMClassifierCV`'s refit on all data at a row's ``params``, the other
    hyperparameters as ``given`` to the estimator: the :class:`SVMClassifier`, and for C
    tuning the C* it learns on all data (None for the other formulations). ``cross_validate(refit=)`` calls it, in
    a worker (speculatively) or in this process."""
    chosen = {**{k: v for k, v in given.items() if k not in params}, **params}
    C = chosen.pop("C", None)
    common = dict(solver=solver, multi_class=multi_class, solver_options=solver_options)
    classic = lookup(formulation).classic_at_learned_C
    if classic is None:
        fitted = SVMClassifier(formulation, C=C, **common, **chosen)
        return fitted.fit(X, y, sample_weight=sample_weight), None
    tuned = SVMClassifier(formulation, **common, **chosen).fit(X, y)
    path = lookup(classic).params
    best = tuned if C is None else SVMClassifier(
        classic, C=C, **common, **{k: v for k, v in chosen.items() if k in path}).fit(X, y)
    return best, tuned.C_


_derive_parameters()
LISTENERS.append(_derive_parameters)


class SVMClassifierCV(ClassifierMixin, BaseEstimator):
    """:class:`SVMClassifier` with C and other hyperparameters chosen by k-fold
    cross-validation (as scikit-learn's ``LogisticRegressionCV``), then refitted on all data.

    Each (fold, setting of the other hyperparameters, binary problem) builds one model and
    walks the path of C on it (warm re-solves) -- one-vs-one on libsvm (rbf, linear) solves
    each (fold, setting)'s pairs together instead, one call per C, as SVC trains them: see
    :func:`svm_models.methods.cv.cross_validate`, which this estimator calls. The tasks run
    serially, over processes (``n_jobs``) or on a Dask cluster (``client``), with the same
    results bit for bit. A grid point whose solve fails is recorded in ``cv_results_``
    (``status``, NaN scores); the others are kept.

    Parameters
    ----------
    formulation : str, default="soft_l1_dual"
        A registered formulation. C tuning learns C on each fold: its rows have ``C=None``,
        and a ``Cs`` given with it is cross-validated on ``soft_l2_dual``, the classifier whose
        C it tunes; ``C_star_`` is the C* it learns on all data.
    solver : str, default="auto"
        The backend, as in :class:`SVMClassifier` (``"auto"``: the fastest that takes the
        model).
    Cs : list of float, int, "path" or None, default=None
        The values of C, walked in this order; an int n: ``np.logspace(-4, 4, n)``; None: 10
        such values (none for the hard margin; for C tuning, none besides the learned C*).
        ``soft_l1_dual`` with ``solver="auto"`` takes every C of a fold from its exact
        regularization path; ``"path"``: the best C on the whole interval (one row per piece
        of C on which every fold's errors are constant,
        :func:`~svm_models.methods.cv.whole_path_Cs`); ``C="path"`` says the same.
    cv : int, splitter or iterable of (train, test), default=5
        As scikit-learn's (an int: ``StratifiedKFold(cv)``, no shuffling).
    n_jobs : int or None, default=None
        Processes (joblib); None or 1: serial.
    client : dask.distributed.Client or None, default=None
        Run on this Dask cluster instead (the data is shipped to each worker once).
    multi_class : {"ovr", "ovo"} or None, default=None
        More than two classes: one-vs-rest or one-vs-one, as :class:`SVMClassifier`; None:
        one-vs-one, as SVC (and :class:`SVMClassifier`) -- on libsvm each (fold, setting)
        then solves all its pairs in one call (digits, 2 x 2 grid, 3 folds: 3.5 s against
        8.6 s in one-vs-rest).
    refit : bool, default=True
        Refit the best parameters on all data (``best_estimator_``; needed by ``predict``).
    solver_options : dict or None, default=None
        Solve options, as :class:`SVMClassifier`'s.
    progress : bool or None, default=None
        A progress bar of the whole job on stderr (default: when stderr is a terminal).
    **params
        The hyperparameters of :class:`SVMClassifier` except C (``kernel``, ``gamma``,
        ``lam``, ...); a list is a grid of values (``gamma=[0.1, 1.0]``); for ``kernels`` a
        list of lists is.

    Attributes
    ----------
    cv_results_ : dict of arrays
        scikit-learn's ``GridSearchCV`` layout plus ``status`` (and for C tuning
        ``split<k>_C_star``, ``mean_C_star``): see
        :func:`~svm_models.methods.cv.cross_validate`.
    best_index_ : int
        The row of the best mean test score; ties go to the smaller C (a C-tuning row
        after every fixed C), then to the first row.
    best_params_ : dict
        The grid parameters of that row (``C`` and the list-valued ``params``).
    best_score_ : float
        Its mean test score (accuracy).
    best_estimator_ : SVMClassifier
        The refit on all data (``refit=True``).
    C_ : float or None, or ndarray
        The C of the refit: the cross-validated C, or for C tuning's row the C* it learned
        (per problem for more than two classes).
    C_star_ : float or None, or ndarray
        C tuning only: the C* the QCQP learns on all data, beside the cross-validated C.
    solution_, estimators_ : Solution, list of Solution
        The refit's solutions (see :class:`SVMClassifier`).
    classes_ : ndarray of shape (n_classes,)
    n_splits_ : int
        Number of folds.
    refit_time_ : float
        Seconds the refit took.
    refit_source_ : str
        Where the refit was made: ``"speculative"`` (over processes, by a worker that had no
        task left while the last ones ran, for the row then best, which stayed best) or
        ``"main"`` (in this process, after the tasks).

    Notes
    -----
    ``**params`` are parameters in scikit-learn's sense: ``get_params`` lists them beside the
    named ones, ``set_params`` takes any hyperparameter, and ``clone`` copies them (and shares
    ``client``: the clone uses the same connection).
    """

    def __init__(self, formulation="soft_l1_dual", solver="auto", Cs=None, cv=5, n_jobs=None,
                 client=None, multi_class=None, refit=True, solver_options=None, progress=None,
                 **params):
        self.formulation = formulation
        self.solver = solver
        self.Cs = Cs
        self.cv = cv
        self.n_jobs = n_jobs
        self.client = client
        self.multi_class = multi_class
        self.refit = refit
        self.solver_options = solver_options
        self.progress = progress
        for name, value in params.items():
            setattr(self, name, value)
        self._param_names = tuple(params)

    def get_params(self, deep=True) -> dict:
        out = super().get_params(deep=deep)
        out.update({k: getattr(self, k) for k in self._param_names})
        return out

    def set_params(self, **params):
        """Set parameters; a hyperparameter not given to the constructor is added."""
        for k in params:
            if k in hyperparameters() and k not in self._param_names:
                setattr(self, k, None)
                self._param_names += (k,)
        return super().set_params(**params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = getattr(self, "kernel", None) == "precomputed"
        return tags

    def __sklearn_clone__(self):
        """scikit-learn's clone, sharing the Dask client (a connection is not copied)."""
        client, self.client = self.client, None
        try:
            twin = super().__sklearn_clone__()
        finally:
            self.client = client
        twin.client = client
        return twin

    def fit(self, X, y, sample_weight=None):
        """Cross-validate the grid on (X, y), choose the best row, refit it on all data.
        ``sample_weight``: per-sample factors of C (as :meth:`SVMClassifier.fit`'s), on every
        training fold and the refit, and on every test fold's score (weighted, as
        scikit-learn 1.9's ``GridSearchCV``).

        Returns
        -------
        self : SVMClassifierCV

        Raises
        ------
        ParameterError
            An unknown or misplaced parameter (C instead of Cs, a solve option outside
            ``solver_options``), or one the formulation does not take.
        SVMError
            Every grid point failed (their statuses are in the message and the table).
        """
        X, y = _validate(self, X, y)
        _check_targets(y)
        params = {k: getattr(self, k) for k in self._param_names}
        Cs = self.Cs
        if isinstance(params.get("C"), str) and params["C"] == "path" and Cs in (None, "path"):
            Cs = "path"   # (C="path": the best C on the whole path, as Cs="path")
            del params["C"]
        unknown = sorted(set(params) - set(hyperparameters()) | ({"C"} & set(params)))
        if unknown:
            raise ParameterError(
                f"SVMClassifierCV takes no parameter(s) {unknown}: the values of C go in "
                "Cs=[...], solve options in solver_options={...}, and the other "
                f"hyperparameters are {', '.join(hyperparameters()[1:])}")
        for name in ("best_estimator_", "solution_", "estimators_", "C_", "C_star_", "refit_time_",
                     "refit_source_"):
            self.__dict__.pop(name, None)  # learned by an earlier fit
        multi_class = "ovo" if self.multi_class is None else self.multi_class
        refit = partial(_refit, formulation=self.formulation, solver=self.solver,
                        multi_class=multi_class, solver_options=self.solver_options,
                        given=params, sample_weight=sample_weight) if self.refit else None
        out = cross_validate(X, y, self.formulation, self.solver, Cs=Cs, cv=self.cv,
                             n_jobs=self.n_jobs, client=self.client,
                             multi_class=multi_class, progress=self.progress, refit=refit,
                             sample_weight=sample_weight,
                             **params, **_solve_options(self.solver_options, "SVMClassifierCV"))
        table, refitted = out if self.refit else (out, None)
        self.cv_results_ = table
        self.n_splits_ = sum(k.startswith("split") and k.endswith("_test_score") for k in table)
        self.classes_ = np.unique(y)
        self.best_index_ = best_index(table)
        self.best_params_ = dict(table["params"][self.best_index_])
        self.best_score_ = float(table["mean_test_score"][self.best_index_])
        if not self.refit:
            return self
        best, C_star = refitted["result"]
        if lookup(self.formulation).learns_C:
            self.C_star_ = C_star
        self.best_estimator_ = best
        self.refit_time_ = refitted["time"]
        self.refit_source_ = refitted["source"]
        self.C_ = best.C_
        if hasattr(best, "solution_"):
            self.solution_ = best.solution_
        else:
            self.estimators_ = best.estimators_
        return self

    def decision_function(self, X) -> np.ndarray:
        """The refit's decision values (:meth:`SVMClassifier.decision_function`)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    def predict(self, X) -> np.ndarray:
        """The refit's predicted labels."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

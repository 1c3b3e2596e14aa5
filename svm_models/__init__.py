"""svm-models: declarative Pyomo models of support vector machines.

Quick start::

    import svm_models as sm
    sol = sm.fit(X, y, formulation="soft_l1_dual", solver="highs", C=1.0, kernel="rbf")
    sol.w, sol.b, sol.alpha, sol.support, sol.predict(X_new)

Public API: :func:`formulations`, :func:`build`, :func:`solve`, :func:`fit`, :func:`extract`,
:func:`fit_path`, :func:`regularization_path` (the exact path of the 1-norm SVM in C), :func:`solvers`; :class:`SVMBlock` (an SVM as a Pyomo block type,
indexed for several); the scikit-learn estimators :class:`SVMClassifier` and
:class:`SVMClassifierCV` (cross-validation over processes or a Dask cluster; :func:`cross_validate`);
:func:`add_decision_function` (a trained SVM inside a Pyomo model of your own) and
:func:`optimize` (solve such a model by backend name); the result type :class:`Solution` and its :class:`Status`;
the error base class :class:`SVMError`.

Layers (each imports only those below it)::

    cli, estimator, plots, embed          the faces users meet
    methods (fit, fit_path, regularization_path, lam_path, two_step, generate_pairs, saddle_point_check, radii,
             cross_validate)
                                          what loops over solves
    api (build, solve, fit, extract)      one solve each
    formulations | solvers                builders and extractors | backends; never each other
    postprocess, solution                 shared KKT pieces; the result type
    model                                 record, proof, standard form, reader, pieces, lazy members
    data, kernels, config                 the data, the kernels, the solve options declared
    status, errors, tolerances
"""

from .api import build, extract, formulations, solve
from .formulations import Formulation, register as register_formulation
from .block import SVMBlock
from .embed import EmbeddedSVM, add_decision_function, optimize
from .errors import (
    CapabilityError,
    DataError,
    FallbackWarning,
    InfeasibleError,
    LicenseLimitError,
    LocallyInfeasibleError,
    MissingDependencyError,
    NotSeparableError,
    ParameterError,
    SolveFailedError,
    SolverError,
    SolverUnavailableError,
    SVMError,
    SVMWarning,
    BadScaleWarning,
)
from .methods.cv import cross_validate
from .methods.paths import fit_path
from .methods.regularization_path import RegularizationPath, regularization_path
from .methods.radius import (
    enclosing_ball_radius,
    fit,
    generate_pairs,
    half_diameter,
    lam_path,
    two_step,
)
from .methods.saddle import saddle_point_check
from .solution import Solution
from .config import SolveConfig
from .estimator import SVMClassifier, SVMClassifierCV
from .solvers import Backend, register_backend, solvers
from .solvers import pyomo_factory as _pyomo_factory  # registers svm_models.* with Pyomo's SolverFactory
from .status import Status

from ._version import __version__


class _FunctionAndPackage:
    """``svm_models.formulations`` and ``svm_models.solvers`` are functions of the public API
    (``formulations()``: the registered names; ``solvers()``: the backends and what is
    installed) and also the names of subpackages. This object is both: called, the function;
    an attribute, the subpackage's (``svm_models.formulations.get``,
    ``svm_models.solvers.backend``) or its module, so that ``import
    svm_models.formulations.classic as classic`` works as it reads."""

    def __init__(self, fn, package: str):
        import functools

        functools.update_wrapper(self, fn)
        self._fn, self._package = fn, package

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getattr__(self, name: str):
        import importlib

        if name.startswith("__"):
            raise AttributeError(name)
        package = importlib.import_module(self._package)
        try:
            return getattr(package, name)
        except AttributeError:
            try:
                return importlib.import_module(f"{self._package}.{name}")
            except ModuleNotFoundError:
                raise AttributeError(f"{self._package} has no attribute {name!r}") from None

    def __repr__(self) -> str:
        return f"<function svm_models.{self._fn.__name__} (and the package {self._package})>"


formulations = _FunctionAndPackage(formulations, "svm_models.formulations")
solvers = _FunctionAndPackage(solvers, "svm_models.solvers")

__all__ = [
    "SVMClassifier", "SVMClassifierCV", "cross_validate", "add_decision_function", "EmbeddedSVM", "optimize",
    "build", "enclosing_ball_radius", "extract", "fit", "fit_path", "formulations",
    "regularization_path", "RegularizationPath",
    "generate_pairs", "half_diameter", "lam_path", "saddle_point_check", "solve", "two_step",
    "solvers", "Solution", "SolveConfig",
    "Status", "SVMError", "DataError", "ParameterError", "SolverError", "SolverUnavailableError",
    "CapabilityError", "LicenseLimitError", "SolveFailedError", "InfeasibleError",
    "LocallyInfeasibleError", "NotSeparableError", "MissingDependencyError", "SVMWarning",
    "BadScaleWarning", "FallbackWarning",
]

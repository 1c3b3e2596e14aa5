"""svm-models: declarative Pyomo models of support vector machines.

Quick start::

    import svm_models as sm
    sol = sm.fit(X, y, formulation="soft_l1_dual", solver="highs", C=1.0, kernel="rbf")
    sol.w, sol.b, sol.alpha, sol.support, sol.predict(X_new)

Public API: :func:`formulations`, :func:`build`, :func:`solve`, :func:`fit`, :func:`extract`,
:func:`fit_path`, :func:`solvers`; the result type :class:`Solution`; the error base class
:class:`SVMError`.
"""

from .api import build, extract, fit, fit_path, formulations, solve
from .errors import (
    CapabilityError,
    DataError,
    InfeasibleError,
    LicenseLimitError,
    NotSeparableError,
    ParameterError,
    SolveFailedError,
    SolverError,
    SolverUnavailableError,
    SVMError,
)
from .solution import Solution
from .solvers import solvers

__version__ = "0.1.0"

__all__ = [
    "build", "extract", "fit", "fit_path", "formulations", "solve", "solvers", "Solution",
    "SVMError", "DataError", "ParameterError", "SolverError", "SolverUnavailableError",
    "CapabilityError", "LicenseLimitError", "SolveFailedError", "InfeasibleError",
    "NotSeparableError",
]

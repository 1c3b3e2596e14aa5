"""The library's exceptions: one public base class, :class:`SVMError`.

Every error the library raises on purpose derives from :class:`SVMError`, so a caller can
catch them all with one ``except`` clause; the more specific classes also derive from the
built-in exception a Python user would expect (``ValueError`` for bad input, ``RuntimeError``
for a solver that failed), so generic handlers keep working.
"""

from __future__ import annotations

import numpy as np


def plain(value):
    """``value`` with numpy scalars and arrays as Python numbers and lists (through lists,
    tuples and dicts), for messages: ``f"{plain(x)!r}"`` shows ``1``, not numpy 2's
    ``np.int64(1)``; other values are returned as they are."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value) if type(value) in (list, tuple) \
            else value
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    return value


def user_stacklevel() -> int:
    """The ``stacklevel`` for :func:`warnings.warn` that names the first caller outside this
    package (the user's line), however deep inside the library the warning is made; call it
    in the ``warnings.warn(...)`` call itself."""
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame, level = frame.f_back, level + 1
    return level


class SVMError(Exception):
    """Base class of every error raised by svm-models."""


class DataError(SVMError, ValueError):
    """The training or test data is unusable (shape, NaN/inf, labels, kernel matrix)."""


class ParameterError(SVMError, ValueError):
    """A hyperparameter or option is out of range or unknown (C <= 0, unknown kernel...)."""


class SolverError(SVMError, RuntimeError):
    """Base class of the errors that come from choosing or running a solver."""


class SolverUnavailableError(SolverError):
    """The requested backend is not installed or not usable on this machine."""


class CapabilityError(SolverError):
    """The backend cannot take the model (its problem class, a non-convex part...)."""


class LicenseLimitError(SolverError):
    """The backend's licence refuses a model of this size (Gurobi's size-limited licence)."""


class SolveFailedError(SolverError):
    """The solver stopped without an optimal solution (limit reached, numerical trouble...).

    The :attr:`status` attribute carries the :class:`~svm_models.status.Status`.
    """

    def __init__(self, message: str, status=None):
        super().__init__(message)
        self.status = status


class InfeasibleError(SolveFailedError):
    """The solver proved the model infeasible."""


class LocallyInfeasibleError(SolveFailedError):
    """A local solver found no feasible point from where it started, on a model not proved
    convex (status ``locally_infeasible``): not a proof that there is none -- start
    elsewhere (``optimize(..., starts=k)``) or use a global solver. Not an
    :class:`InfeasibleError`, which a proof raises."""


class NotSeparableError(InfeasibleError):
    """A hard-margin SVM was asked for data that no hyperplane separates."""


class MissingDependencyError(SVMError, ImportError):
    """An optional dependency is not installed (the message names the ``pip install``)."""


class SVMWarning(UserWarning):
    """Base class of the warnings issued by svm-models."""


class FallbackWarning(SVMWarning):
    """:func:`svm_models.fit` solved something other than what was asked -- the other form
    of the formulation (primal for dual, dual for primal) or the other quadratic form --
    after the first failed; the same optimum, recorded in ``Solution.fallback``."""


class BadScaleWarning(SVMWarning):
    """The data are so badly scaled that solvers may fail or return inaccurate answers
    (issued once per validation; the data are not rescaled: the model stays the user's)."""

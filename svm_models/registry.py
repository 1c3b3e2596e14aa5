"""The formulation registry: one record per formulation.

A :class:`Formulation` names a builder (which fills a Pyomo block and never solves) and an
extractor (which turns a solved block into a :class:`~svm_models.solution.Solution`), with
the problem class the solver layer checks backends against. New families (radius-margin,
enclosing ball, ...) add themselves with :func:`register`; nothing else needs to change.

A built block carries a :class:`BuiltSVM` as ``block._svm``: what was built from what, so
that :func:`svm_models.extract` works on any block, also one the user solved inside a model
of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .errors import ParameterError

PROBLEM_CLASSES = ("LP", "QP", "QCQP", "NLP")


@dataclass(frozen=True)
class Formulation:
    """A registered formulation.

    Attributes
    ----------
    name : str            registered name, e.g. ``"soft_l1_dual"``
    family : str          ``"hard"``, ``"soft_l1"``, ``"soft_l2"``, ``"c_tuning"``, ...
    form : str            ``"primal"`` or ``"dual"``
    problem_class : str   one of ``LP``, ``QP``, ``QCQP``, ``NLP``
    builder : callable    ``builder(X, y, *, block=None, **params) -> Block``
    extractor : callable  ``extractor(block, duals) -> Solution``
    summary : str         one line for listings
    params : tuple        the hyperparameters the builder accepts
    """

    name: str
    family: str
    form: str
    problem_class: str
    builder: Callable
    extractor: Callable
    summary: str = ""
    params: tuple = ()


_REGISTRY: dict[str, Formulation] = {}


def register(formulation: Formulation) -> Formulation:
    if formulation.problem_class not in PROBLEM_CLASSES:
        raise ValueError(f"unknown problem class {formulation.problem_class!r}")
    _REGISTRY[formulation.name] = formulation
    return formulation


def formulations() -> list[str]:
    """Names of all registered formulations, in registration order."""
    _load_builtin()
    return list(_REGISTRY)


def get(name: str) -> Formulation:
    """The registered formulation ``name`` (ParameterError listing the names otherwise)."""
    _load_builtin()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ParameterError(
            f"unknown formulation {name!r}; registered: {', '.join(_REGISTRY)}"
        ) from None


def _load_builtin() -> None:
    # the builder modules register themselves on import (classic first: listing order)
    from . import classic  # noqa: F401
    from . import c_tuning  # noqa: F401


@dataclass(eq=False)
class BuiltSVM:
    """What a builder records on the block it filled (``block._svm``).

    ``data`` is the validated :class:`~svm_models.data.Dataset`, ``kernel`` the resolved
    :class:`~svm_models.kernels.Kernel`, ``K`` the training Gram matrix (None where it was
    not needed, e.g. the linear primal), ``structure`` the
    :class:`~svm_models.structure.Structure` for the fast path, ``params`` the
    hyperparameters as given (mutable ones are read from the block when extracting).
    """

    formulation: str
    data: Any
    kernel: Any
    block: Any
    structure: Any
    K: np.ndarray | None = None
    params: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

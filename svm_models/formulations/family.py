"""What a family module gives the layers above: one :class:`Family` object, its module's
``FAMILY``, with an explicit interface (no hook is looked up by name).

A family module (``classic``, ``c_tuning``, ``radius_margin``, ``l1_norm``, ``ls_svm``) holds its
builders -- named in the registry's table (:data:`svm_models.formulations.TABLE`) with their
declared parameters (:mod:`svm_models.formulations.params`) -- and ends with its
``FAMILY = Family(extract=..., ...)``. ``tests/test_params.py`` checks that every family in
the table has one, and that a module defines no hook function that its ``FAMILY`` leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Family:
    """A formulation family's interface.

    extract : ``(block, ctx) -> Solution``: the solved block read into a Solution (dual and
        primal values, the point chosen, b, the support set, the certificate);
    check_before_solve : ``(svm, *, proves_unbounded) -> None``, or None: refuse before any
        solve (the hard margin: inseparable data, when the backend cannot prove the dual
        unbounded);
    explain_failure : ``(svm, status, message) -> SVMError | None``, or None: the family's
        reading of a solve that did not end optimal (the hard margin: not separable);
    licence_hint : ``(svm) -> str``, or None: what to add to a size-limited licence's
        refusal (a smaller form of the same model);
    warm_start : ``(svm, fit_convex) -> dict``, or None: a start for the solver (the
        mixed-integer SVMs: the convex SVM's solution, rounded into a feasible point). It
        solves the convex neighbour through ``fit_convex(formulation, X, y, **params)`` (the
        caller's: a fast continuous backend; a Solution, or an ``SVMError``), sets the
        block's variables to the start only when every row of the model holds there, and
        returns ``{"objective": ..., ...}`` -- or ``{"objective": None, "why": ...}``, the
        variables untouched, when there is none.
    """

    extract: Callable
    check_before_solve: Callable | None = None
    explain_failure: Callable | None = None
    licence_hint: Callable | None = None
    warm_start: Callable | None = None

    #: the optional hooks, as a family module names its functions
    HOOKS = ("check_before_solve", "explain_failure", "licence_hint", "warm_start")

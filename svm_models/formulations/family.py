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
from typing import Any, Callable, NamedTuple


class IndicatorRow(NamedTuple):
    """One row a binary switches, as a family's ``indicator_rows`` hook names it for
    ``switch="indicator"`` (the solver layer reads the fields by name; it never imports
    this class).

    row : the Pyomo ConstraintData that holds the big-M row (left in the Pyomo model; the
        solver interface replaces it in the native model only);
    binary : its binary VarData;
    on : the value of ``binary`` (0 or 1) at which the row is enforced;
    terms : ``((VarData, coefficient), ...)``: the row's linear part without its M term;
    rhs : the enforced row reads ``sum(coefficient * var) >= rhs``.
    """

    row: Any
    binary: Any
    on: int
    terms: tuple
    rhs: float


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
        variables untouched, when there is none;
    indicator_rows : ``(svm) -> list[IndicatorRow]``, or None: the rows the family's
        binaries switch with a proved big-M (the mixed-integer SVMs), each with its binary,
        the binary's value that enforces it and the row without its M term -- what a backend
        that takes indicator constraints solves in their place with ``switch="indicator"``
        (called only on a model the record proves unchanged since it was built). A family
        without it is refused ``switch="indicator"``.
    """

    extract: Callable
    check_before_solve: Callable | None = None
    explain_failure: Callable | None = None
    licence_hint: Callable | None = None
    warm_start: Callable | None = None
    indicator_rows: Callable | None = None

    #: the optional hooks, as a family module names its functions
    HOOKS = ("check_before_solve", "explain_failure", "licence_hint", "warm_start",
             "indicator_rows")

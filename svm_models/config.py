"""The solve options, declared once: their names, domains, defaults and documentation.

One :class:`~pyomo.common.config.ConfigDict` (as ``pyomo.contrib.solver``'s ``SolverConfig``
declares Pyomo's solver options) carries what :func:`svm_models.solve`, :func:`svm_models.fit`,
``SVMClassifier(solver_options={...})`` and the Pyomo solvers ``svm_models.<backend>``
take: :class:`SolveConfig` declares them all; :func:`declare_solve_options` declares the
library's own on another ConfigDict (the Pyomo plugins' configuration, which has Pyomo's
``tee``, ``time_limit``, ``threads`` and ``solver_options`` already). :func:`solve_config`
checks a set of keyword options against it: an unknown name or a value outside its domain
is a :class:`~svm_models.errors.ParameterError` naming the option and what it takes, never
a Pyomo traceback.

This module is at the bottom of the layers (it imports only Pyomo's config and the errors):
the solvers and the API read it.
"""

from __future__ import annotations

import math
import numbers

from pyomo.common.config import ConfigDict, ConfigValue

from .errors import ParameterError, plain

#: the values of ``path`` and ``scaling`` (the default first)
PATHS = ("auto", "fast", "general")
SCALINGS = ("auto", "on", "off", "diagonal", "centred")
#: the values of ``switch`` (how a mixed-integer SVM's binaries switch its rows), default first
SWITCHES = ("big_m", "indicator")


def _positive_number(name: str):
    def domain(v):
        ok = (isinstance(v, numbers.Real) and not isinstance(v, bool) and float(v) > 0
              and not math.isnan(float(v)))
        if not ok:
            raise ParameterError(f"{name} must be a positive number; got {plain(v)!r}")
        return v
    domain.__name__ = "positive number"
    return domain


def _positive_int(name: str):
    def domain(v):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ParameterError(f"{name} must be a positive integer; got {plain(v)!r}")
        return int(v)
    domain.__name__ = "positive integer"
    return domain


def _one_of(name: str, values: tuple, what: str = ""):
    def domain(v):
        if not isinstance(v, str) or v not in values:
            raise ParameterError(f"{name} must be one of {', '.join(map(repr, values))}"
                                 f"{what}; got {plain(v)!r}")
        return v
    domain.__name__ = "one of " + ", ".join(values)
    return domain


def _boolean(name: str, none=None):
    def domain(v):
        if v is None and none is not None:
            return none
        if not isinstance(v, (bool, numbers.Integral)) or v not in (0, 1):
            raise ParameterError(f"{name} must be True or False; got {plain(v)!r}")
        return bool(v)
    domain.__name__ = "bool"
    return domain


def _raw_options(v):
    if not isinstance(v, dict):
        raise ParameterError(f"options must be a dict of raw backend options "
                             f"{{name: value}}; got {type(v).__name__}")
    return dict(v)


def _deadline(v):
    # (svm_models.solvers.base.Deadline, above this module: known by what it answers)
    if not all(callable(getattr(v, m, None)) for m in ("left", "expired", "describe")):
        raise ParameterError(f"deadline must be a svm_models.solvers.base.Deadline (or "
                             f"None); got {type(v).__name__}: set time_limit instead")
    return v


#: name -> (domain, default, description): the library's solve options, in the order shown
_OPTIONS = {
    "tol": (_positive_number("tol"), None,
            "Relative optimality and feasibility tolerance (default 1e-9)."),
    "time_limit": (_positive_number("time_limit"), None,
                   "Seconds for the whole call -- retries, the polish and the fallbacks "
                   "included (default: scaled to the problem, 7.5 s up to 200 points; "
                   "math.inf for none)."),
    "iter_limit": (_positive_int("iter_limit"), None, "Iteration limit of the backend."),
    "threads": (_positive_int("threads"), None, "Threads the backend may use."),
    "verbose": (_boolean("verbose", none=False), False, "Show the solver's log."),
    "options": (_raw_options, None, "Raw backend options {name: value}, passed as they are."),
    "path": (_one_of("path", PATHS), "auto",
             "'auto' (the fast path when the record proves the model, 'mixed' when it proves "
             "a part), 'fast' (refused if not possible) or 'general' (the whole Pyomo model)."),
    "scaling": (_one_of("scaling", SCALINGS), "auto",
                "The formulation's exact scaling on the fast path: 'auto', 'on', 'off', "
                "'diagonal' or 'centred' (a classic dual's kernel block centred, then scaled "
                "diagonally; svm_models.model.scaling)."),
    "switch": (_one_of("switch", SWITCHES, " (how a mixed-integer SVM's binaries switch "
                                           "its rows)"), "big_m",
               "A mixed-integer SVM's rows: 'big_m' (as built) or 'indicator' (native "
               "indicator constraints; Gurobi, SCIP)."),
    "deadline": (_deadline, None,
                 "The Deadline of the whole call (made from time_limit where the call enters "
                 "the library; a caller may pass one to bound several calls together)."),
    "raise_on_failure": (_boolean("raise_on_failure"), True,
                         "A non-optimal end raises its typed error (False: a Solution with "
                         "that status)."),
}

#: the options every solve takes, by name (SolveConfig's keys)
SOLVE_OPTIONS = tuple(_OPTIONS)

#: the library's options the Pyomo plugins add to Pyomo's SolverConfig (whose ``tee``,
#: ``time_limit``, ``threads``, ``solver_options`` and ``raise_exception_on_nonoptimal_result``
#: are ``verbose``, ``time_limit``, ``threads``, ``options`` and ``raise_on_failure``)
PLUGIN_OPTIONS = ("tol", "iter_limit", "path", "scaling", "switch")


def declare_solve_options(config: ConfigDict, names=SOLVE_OPTIONS) -> ConfigDict:
    """Declare the solve options ``names`` (default: all) on ``config``; returns it."""
    for name in names:
        domain, default, doc = _OPTIONS[name]
        config.declare(name, ConfigValue(domain=domain, default=default, description=doc))
    return config


class SolveConfig(ConfigDict):
    """The options of :func:`svm_models.solve` and :func:`svm_models.fit` (and of
    ``SVMClassifier``'s ``solver_options``): ``tol``, ``time_limit``, ``iter_limit``,
    ``threads``, ``verbose``, ``options``, ``path``, ``scaling``, ``switch``, ``deadline``,
    ``raise_on_failure``, each with its domain and documentation (``SolveConfig().display()``
    or ``.generate_documentation()``)."""

    def __init__(self, description=None, doc=None, implicit=False, implicit_domain=None,
                 visibility=0):
        super().__init__(description=description, doc=doc, implicit=implicit,
                         implicit_domain=implicit_domain, visibility=visibility)
        declare_solve_options(self)


def checked(config: ConfigDict, options: dict, *, who: str = "solver option(s)",
            extra=(), **kw) -> ConfigDict:
    """``config(value=options, **kw)``: a copy of ``config`` holding ``options``, each
    checked against its declaration (``extra``: other names the caller takes besides, left
    out of the config).

    Raises
    ------
    ParameterError
        an unknown name (naming it and the known ones), or a value outside an option's
        domain (naming the option and what it takes) -- never Pyomo's own ValueError.
    """
    known = set(config.keys()) | set(extra)
    unknown = sorted(set(options) - known)
    if unknown:
        raise ParameterError(f"unknown {who} {unknown}; known: {sorted(known)}")
    try:
        return config(value={k: v for k, v in options.items() if k not in extra}, **kw)
    except ValueError as exc:
        cause = exc.__context__
        if isinstance(cause, ParameterError):
            raise ParameterError(str(cause)) from None
        first = str(exc).splitlines()[0]   # ("invalid value for configuration 'x':")
        detail = str(cause) if cause is not None else str(exc)
        raise ParameterError(f"{first} {detail}") from None


def solve_config(options: dict, *, who: str = "solver option(s)", extra=()) -> dict:
    """``options`` checked against the declarations of :class:`SolveConfig` (by their
    domains directly: a ConfigDict copy per solve costs 0.5 ms): ``{name: value}`` for
    every solve option, the defaults filled in (``extra``: other names the caller takes
    besides, left out).

    Raises
    ------
    ParameterError
        an unknown name (naming it and the known ones), or a value outside an option's
        domain (naming the option and what it takes).
    """
    unknown = sorted(set(options) - set(_OPTIONS) - set(extra))
    if unknown:
        raise ParameterError(f"unknown {who} {unknown}; known: "
                             f"{sorted(set(_OPTIONS) | set(extra))}")
    out = {}
    for name, (domain, default, _) in _OPTIONS.items():
        v = options.get(name, default)
        # (None: "not set" where that is the default; else refused by the domain, as
        # ConfigValue's domain never sees None)
        out[name] = None if v is None and default is None else domain(v)
    return out

"""One solver layer: backend names, capabilities, options, status and dual signs.

A user names a backend with one flag -- ``solver="ipopt" | "gurobi" | "highs" | "scip" |
"piqp" | "clarabel"`` (and ``cplex``, ``xpress``, ``mosek`` where Pyomo has them) -- and
:func:`solve_model` does the rest:

1. the capability table refuses a backend that cannot take the model's problem class
   (LP / QP / QCQP / NLP) *before* anything runs, naming the backends that can;
2. the **fast path**: when the model carries a builder's record
   (:class:`~svm_models.structure.Structure`) and still matches it, the backend is handed
   the matrices directly (:mod:`svm_models.matrix_solvers`);
3. otherwise the **general path**: the installed Pyomo plugin solves the Pyomo model (for
   PIQP and Clarabel, which have no Pyomo plugin, the model is read into matrices by
   :func:`~svm_models.structure.from_pyomo`);
4. the termination status is checked before any value is read: a non-optimal outcome is a
   typed error (or an explicit status with ``raise_on_failure=False``);
5. duals are normalised to one convention -- d(optimal objective)/d(constraint bound), in
   the model's own sense -- whatever the interface reported (see ``DUAL_SIGN``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import time
from dataclasses import dataclass, field, replace

import numpy as np
from pyomo.common.collections import ComponentMap

from . import structure as st
from .errors import (
    CapabilityError,
    InfeasibleError,
    LicenseLimitError,
    ParameterError,
    SolveFailedError,
    SolverError,
    SolverUnavailableError,
)
from .matrix_solvers import ADAPTERS, gurobi_licence_message, preserved_fpu

ORDER = ("LP", "QP", "QCQP", "NLP")


@dataclass(frozen=True)
class Backend:
    """A backend: what it takes, how Pyomo reaches it, and whether it has a matrix path."""

    name: str
    classes: frozenset
    pyomo_plugins: tuple = ()
    modules: tuple = ()
    matrix: bool = False          # has a fast (matrix) adapter
    duals: bool = True            # reports constraint duals on the general path
    note: str = ""
    proves_unbounded: bool = True  # False: may search forever on an unbounded QP (check first)


BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in [
        Backend("ipopt", frozenset(ORDER), ("cyipopt", "ipopt"), ("cyipopt",), True, True,
                "interior point, local NLP solver (convex problems: global)"),
        Backend("gurobi", frozenset(("LP", "QP", "QCQP")), ("gurobi_direct",), ("gurobipy",), True,
                True, "pip licence: quadratic models up to 200 variables"),
        Backend("highs", frozenset(("LP", "QP")), ("highs",), ("highspy",), True, True,
                "active-set QP; takes no quadratic constraints"),
        Backend("scip", frozenset(ORDER), ("scip_direct",), ("pyscipopt",), False, False,
                "spatial branch and bound; reports no duals", proves_unbounded=False),
        Backend("piqp", frozenset(("LP", "QP")), (), ("piqp",), True, True,
                "proximal interior point QP (matrix interface)"),
        Backend("clarabel", frozenset(("LP", "QP", "QCQP")), (), ("clarabel",), True, True,
                "interior point conic; QCQP as second-order cones (matrix interface)"),
        Backend("cplex", frozenset(("LP", "QP", "QCQP")), ("cplex_direct",), ("cplex",)),
        Backend("xpress", frozenset(("LP", "QP", "QCQP")), ("xpress_direct",), ("xpress",)),
        Backend("mosek", frozenset(("LP", "QP", "QCQP")), ("mosek_direct",), ("mosek",)),
    ]
}

#: Sign that turns an interface's reported dual into d(objective)/d(bound), by objective
#: sense (+1 minimise, -1 maximise). Measured with Pyomo 6.10 (SPEC.md section 4; tested in
#: tests/test_solvers.py for every installed backend).
DUAL_SIGN = {
    "highs": {1: 1.0, -1: 1.0},
    "gurobi_direct": {1: 1.0, -1: 1.0},
    "cplex_direct": {1: 1.0, -1: 1.0},
    "xpress_direct": {1: 1.0, -1: 1.0},
    "mosek_direct": {1: 1.0, -1: 1.0},
    "cyipopt": {1: -1.0, -1: 1.0},
    "ipopt": {1: -1.0, -1: 1.0},
}


@dataclass(frozen=True)
class SolverOptions:
    """Options every backend understands, plus raw backend options.

    tol : relative optimality/feasibility tolerance (default 1e-9)
    time_limit : seconds;  iter_limit : iterations;  threads : count
    verbose : show the solver's log
    options : raw options passed to the backend as they are
    path : ``"auto"`` (fast when the model matches its record), ``"fast"`` (raise if not
           possible), ``"general"`` (always through the Pyomo model)
    """

    tol: float | None = None
    time_limit: float | None = None
    iter_limit: int | None = None
    threads: int | None = None
    verbose: bool = False
    options: dict = field(default_factory=dict)
    path: str = "auto"

    @classmethod
    def from_kwargs(cls, **kw) -> "SolverOptions":
        known = {f for f in cls.__dataclass_fields__}
        bad = set(kw) - known
        if bad:
            raise ParameterError(f"unknown solver option(s) {sorted(bad)}; known: {sorted(known)}")
        if kw.get("path", "auto") not in ("auto", "fast", "general"):
            raise ParameterError("path must be 'auto', 'fast' or 'general'")
        if kw.get("tol") is not None and not (float(kw["tol"]) > 0):
            raise ParameterError(f"tol must be positive; got {kw['tol']!r}")
        kw["options"] = dict(kw.get("options") or {})
        return cls(**kw)


@dataclass(eq=False)
class SolveInfo:
    """What a solve produced besides the variable values (which are loaded into the model)."""

    status: str
    solver: str
    interface: str
    path: str
    time: float
    objective: float | None = None
    duals: ComponentMap | None = None
    message: str = ""
    iterations: int | None = None
    path_reason: str | None = None


# ---------------------------------------------------------------------------------------
# Availability


def _module_present(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _plugin_available(plugin: str) -> bool:
    import pyomo.environ as pyo

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return bool(pyo.SolverFactory(plugin).available(exception_flag=False))
        except Exception:
            return False


_PLUGIN_CACHE: dict[str, str | None] = {}


def pyomo_plugin(name: str) -> str | None:
    """The first installed Pyomo plugin for backend ``name`` (None if none works)."""
    if name not in _PLUGIN_CACHE:
        found = None
        for plugin in BACKENDS[name].pyomo_plugins:
            if _plugin_available(plugin):
                found = plugin
                break
        _PLUGIN_CACHE[name] = found
    return _PLUGIN_CACHE[name]


def available(name: str) -> bool:
    b = backend(name)
    if b.matrix and not b.pyomo_plugins:
        return all(_module_present(m) for m in b.modules)
    return pyomo_plugin(name) is not None


def solvers() -> dict[str, dict]:
    """What is installed and usable: ``{name: {available, classes, interface, fast_path, note}}``."""
    out = {}
    for name, b in BACKENDS.items():
        ok = available(name)
        out[name] = {
            "available": ok,
            "classes": [c for c in ORDER if c in b.classes],
            "interface": (pyomo_plugin(name) if b.pyomo_plugins else "matrix") if ok else None,
            "fast_path": b.matrix,
            "duals": b.duals,
            "note": b.note,
        }
    return out


def backend(name: str) -> Backend:
    key = str(name).lower()
    if key not in BACKENDS:
        raise ParameterError(f"unknown solver {name!r}; choose one of {', '.join(BACKENDS)}")
    return BACKENDS[key]


def capable(problem_class: str) -> list[str]:
    return [n for n, b in BACKENDS.items() if problem_class in b.classes]


def check_capability(name: str, problem_class: str) -> Backend:
    """Refuse before solving a backend that cannot take ``problem_class`` or is missing."""
    b = backend(name)
    if problem_class not in b.classes:
        usable = [n for n in capable(problem_class) if n in ("ipopt", "gurobi", "highs", "scip", "piqp", "clarabel")]
        raise CapabilityError(
            f"solver {b.name!r} cannot take a {problem_class} "
            f"({', '.join(sorted(b.classes, key=ORDER.index))} only); use one of: {', '.join(usable)}")
    if not available(b.name):
        hint = {"ipopt": "pip install cyipopt-wheels==1.7.0.dev0, then run 'svm-models setup-ipopt'",
                "gurobi": "pip install gurobipy", "highs": "pip install highspy",
                "scip": "pip install pyscipopt", "piqp": "pip install piqp",
                "clarabel": "pip install clarabel"}.get(b.name, f"install {b.name} and its Pyomo plugin")
        raise SolverUnavailableError(f"solver {b.name!r} is not installed or not usable here ({hint})")
    return b


# ---------------------------------------------------------------------------------------
# Solving


def raise_for_status(status: str, info_msg: str, problem: str, not_separable: bool = False):
    """Raise the typed error for a non-optimal status (NotSeparableError when told so)."""
    if not_separable:
        from .errors import NotSeparableError

        raise NotSeparableError(
            f"the data are not separable in the kernel's feature space, so the hard-margin "
            f"{problem} has no solution (solver status: {status}, {info_msg}). Use a soft margin "
            "(soft_l1_*/soft_l2_*) or another kernel.", status)
    if status in ("infeasible", "infeasible_or_unbounded"):
        raise InfeasibleError(f"the {problem} is {status.replace('_', ' ')} ({info_msg})", status)
    raise SolveFailedError(f"the solver stopped without an optimal solution: {status} ({info_msg})",
                           status)


def solve_model(model, solver: str = "ipopt", *, structure=None, problem_class=None,
                options: SolverOptions | None = None,
                raise_on_failure: bool = True, state: dict | None = None) -> SolveInfo:
    """Solve a Pyomo model with backend ``solver``; load values into it; return a SolveInfo.

    ``structure`` is the builder's record (fast path when the model still matches it);
    ``problem_class`` defaults to the record's (hard margins: the caller checks separability
    when a solve fails, see :func:`svm_models.api.solve`); ``state`` keeps backend objects between
    calls for warm re-solves (C paths).
    """
    opts = options or SolverOptions()
    pclass = problem_class or (structure.problem_class if structure is not None else "NLP")
    b = check_capability(solver, pclass)
    reason = None
    if opts.path == "general":
        reason = "the general path was requested"
    elif structure is None:
        reason = "the model carries no builder record"
    elif not b.matrix:
        reason = f"{b.name} has no matrix interface"
    else:
        reason = st.check(structure)
    if reason is None:
        info = _solve_fast(structure, b, opts, state)
    else:
        if opts.path == "fast":
            raise SolverError(f"the fast path is not possible: {reason}")
        info = _solve_general(model, b, opts, pclass)
        info.path_reason = reason
    if info.status != "optimal" and raise_on_failure:
        raise_for_status(info.status, info.message, "model")
    return info


def _solve_fast(structure, b: Backend, opts: SolverOptions, state) -> SolveInfo:
    t0 = time.perf_counter()
    sf = st.assemble(structure)
    res = ADAPTERS[b.name](sf, opts, state)
    elapsed = time.perf_counter() - t0
    info = SolveInfo(status=res.status, solver=b.name, interface=res.interface, path="fast",
                     time=elapsed, message=res.message, iterations=res.iterations)
    _load_matrix_result(sf, res, info)
    return info


def _load_matrix_result(sf, res, info: SolveInfo) -> None:
    """Load a matrix backend's optimal x into the Pyomo variables and map its duals (already
    d(min-form objective)/d(bound)) to the model's constraints in the model's own sense."""
    if res.status != "optimal":
        return
    for vd, v in zip(sf.var_datas, res.x.tolist()):
        vd.set_value(v, skip_validation=True)
    info.objective = sf.sense * res.objective
    duals = ComponentMap()
    if res.row_duals is not None:
        for cd, v in zip(sf.row_datas, (sf.sense * res.row_duals).tolist()):
            duals[cd] = v
    if res.qrow_duals is not None:
        for q, v in zip(sf.qrows, res.qrow_duals.tolist()):
            duals[q.data] = sf.sense * q.sign * v
    info.duals = duals


#: The common options' names per Pyomo plugin: (SolverOptions field, plugin option, cast).
_OPTION_NAMES = {
    "cyipopt": (("time_limit", "max_wall_time", float), ("iter_limit", "max_iter", int)),
    "ipopt": (("time_limit", "max_wall_time", float), ("iter_limit", "max_iter", int)),
    "gurobi_direct": (("time_limit", "TimeLimit", float), ("iter_limit", "BarIterLimit", int),
                      ("threads", "Threads", int)),
    "highs": (("time_limit", "time_limit", float), ("iter_limit", "qp_iteration_limit", int),
              ("threads", "threads", int)),
    "scip_direct": (("time_limit", "limits/time", float), ("threads", "parallel/maxnthreads", int)),
}


def _pyomo_options(plugin: str, opts: SolverOptions) -> dict:
    tol = 1e-9 if opts.tol is None else opts.tol
    o: dict = {}
    if plugin in ("cyipopt", "ipopt"):
        o["tol"] = tol
        o["bound_relax_factor"] = 0.0  # keep iterates inside the bounds (no W1002 floods)
        if plugin == "cyipopt":
            o["print_level"] = 5 if opts.verbose else 0
    elif plugin == "gurobi_direct":
        # BarQCPConvTol tighter than 1e-9 ends in status 13 (suboptimal)
        o.update(OptimalityTol=max(tol, 1e-9), FeasibilityTol=max(tol, 1e-9),
                 BarConvTol=max(tol * 1e-2, 1e-10), BarQCPConvTol=max(tol, 1e-9), QCPDual=1)
    elif plugin == "highs":
        o.update(primal_feasibility_tolerance=tol, dual_feasibility_tolerance=tol)
    elif plugin == "scip_direct":
        # SCIP's log can exceed a pipe buffer and deadlock Pyomo's output capture: keep it quiet
        o["display/verblevel"] = 4 if opts.verbose else 0
        o.update({"limits/gap": 1e-9, "numerics/feastol": max(tol, 1e-9),
                  "numerics/dualfeastol": max(tol, 1e-9)})
    for field_name, name, cast in _OPTION_NAMES.get(plugin, ()):
        val = getattr(opts, field_name)
        if val is not None:
            o[name] = cast(val)
    o.update(opts.options)
    return o


def _register_lazy_with_scip() -> None:
    """Pyomo's SCIP interface dispatches on exact node types: teach it our lazy expressions."""
    try:
        from pyomo.contrib.solver.solvers.scip import base as scip_base
        from pyomo.core.base.expression import ExpressionData

        from .lazy import LazyExpressionData, LazyScalarExpression
    except ImportError:
        return
    table = scip_base._operator_map
    handler = table.get(ExpressionData)
    if handler is not None:
        table.setdefault(LazyExpressionData, handler)
        table.setdefault(LazyScalarExpression, handler)


def _solve_general(model, b: Backend, opts: SolverOptions, pclass: str) -> SolveInfo:
    if not b.pyomo_plugins:
        return _solve_general_matrix(model, b, opts)
    import pyomo.environ as pyo
    from pyomo.opt import TerminationCondition as TC

    plugin = pyomo_plugin(b.name)
    if plugin == "scip_direct":
        _register_lazy_with_scip()
    sol = pyo.SolverFactory(plugin)
    want_duals = b.duals
    own_suffix = False
    if want_duals:
        existing = model.component("dual")
        if existing is None:
            model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
            own_suffix = True
        elif not isinstance(existing, pyo.Suffix):
            want_duals = False
    t0 = time.perf_counter()
    try:
        kwargs = {"tee": bool(opts.verbose)}
        if plugin == "cyipopt":
            kwargs["options"] = _pyomo_options(plugin, opts)
        else:
            for k, v in _pyomo_options(plugin, opts).items():
                sol.options[k] = v
            kwargs["load_solutions"] = False
        with preserved_fpu():
            results = sol.solve(model, **kwargs)
    except Exception as exc:  # map licence refusals and interface failures to clear errors
        if own_suffix:
            model.del_component("dual")
        text = str(exc)
        if "10010" in text or "size-limited" in text:
            n = sum(1 for _ in model.component_data_objects(pyo.Var, active=True))
            m = sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True))
            raise LicenseLimitError(gurobi_licence_message(n, m, pclass != "LP")) from None
        raise SolverError(f"{b.name} ({plugin}) failed: {type(exc).__name__}: {text}") from None
    elapsed = time.perf_counter() - t0
    tc = results.solver.termination_condition
    status = {TC.optimal: "optimal", TC.locallyOptimal: "optimal", TC.globallyOptimal: "optimal",
              TC.infeasible: "infeasible", TC.unbounded: "unbounded",
              TC.infeasibleOrUnbounded: "infeasible_or_unbounded",
              TC.maxTimeLimit: "time_limit", TC.maxIterations: "iteration_limit"}.get(tc, "error")
    info = SolveInfo(status=status, solver=b.name, interface=plugin, path="general", time=elapsed,
                     message=str(tc))
    if status == "optimal":
        if plugin != "cyipopt":
            model.solutions.load_from(results)
        obj = next(model.component_data_objects(pyo.Objective, active=True))
        info.objective = float(pyo.value(obj))
        if want_duals:
            sense = 1 if obj.sense == 1 else -1
            sign = DUAL_SIGN.get(plugin, {}).get(sense, 1.0)
            duals = ComponentMap()
            for cd, v in model.dual.items():
                if v is not None:
                    duals[cd] = sign * float(v)
            info.duals = duals
    if own_suffix:
        model.del_component("dual")
    return info


def _solve_general_matrix(model, b: Backend, opts: SolverOptions) -> SolveInfo:
    t0 = time.perf_counter()
    try:
        sf = st.from_pyomo(model)
    except ValueError as exc:
        raise CapabilityError(f"{b.name} cannot take this model: {exc}") from None
    if sf.problem_class not in b.classes:
        check_capability(b.name, sf.problem_class)
    res = ADAPTERS[b.name](sf, opts, None)
    info = SolveInfo(status=res.status, solver=b.name, interface=res.interface, path="general",
                     time=time.perf_counter() - t0, message=res.message, iterations=res.iterations)
    _load_matrix_result(sf, res, info)
    return info


_register_lazy_with_scip()  # also for users who call SolverFactory("scip_direct") themselves

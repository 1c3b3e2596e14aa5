"""The library's matrix backends as Pyomo solvers: ``svm_models.piqp``, ``svm_models.clarabel``,
``svm_models.ipm`` and ``svm_models.libsvm``, registered on ``import svm_models`` with Pyomo's
new solver interface (``pyomo.contrib.solver.common.factory.SolverFactory``), which also
registers each with the legacy ``pyomo.environ.SolverFactory`` through its
``LegacySolverWrapper``::

    import pyomo.environ as pyo
    import svm_models  # noqa: F401  (registers the names)

    results = pyo.SolverFactory("svm_models.clarabel").solve(model, timelimit=60)

    from pyomo.contrib.solver.common.factory import SolverFactory
    res = SolverFactory("svm_models.piqp")().solve(model, load_solutions=False)
    res.solution_loader.get_vars(), res.solution_loader.get_duals()

These are the backends Pyomo has no interface to (PIQP, Clarabel), the library's own
interior-point method and libsvm; the others (Ipopt, Gurobi, HiGHS, SCIP) are Pyomo's own.

Each solve is :func:`~svm_models.solvers.dispatch.solve_model`: any Pyomo model is read by
:func:`~svm_models.model.reader.from_pyomo`, which proves it convex (a model built by
:func:`svm_models.build` and proved unchanged by its record takes the fast path instead); a
model the backend cannot take (a non-convex one, a problem class it does not solve, for
libsvm anything but a classic SVM dual as built) is refused before anything runs with Pyomo's
:class:`~pyomo.contrib.solver.common.util.IncompatibleModelError` -- here
:class:`IncompatibleModel`, also the library's :class:`~svm_models.errors.CapabilityError` --
whose message names the backends that can take the model.

Statuses map through :attr:`Status.termination_condition
<svm_models.status.Status.termination_condition>` and :attr:`Status.solution_status
<svm_models.status.Status.solution_status>`. Duals are reported in the convention of Pyomo's
direct solver interfaces (``gurobi_direct``, ``highs``, ``cplex_direct``): the sensitivity
d(optimal objective)/d(constraint bound) in the model's own sense -- the library's own
convention, so they are passed on as :func:`solve_model` returns them. (Ipopt's duals in
Pyomo have the opposite sign when minimising: ``BACKENDS["ipopt"].dual_sign``.) No reduced
costs are reported.

``load_solutions=False`` leaves the model's values as they were: the solve loads the values
(the library always does), the solution is kept in the result's loader, and the values before
the solve are put back. The legacy interface, as Pyomo's own legacy solvers do, returns a
non-optimal result (infeasible, a time limit) with its termination condition instead of
raising, and loads nothing.

Options: ``time_limit`` (legacy ``timelimit``; unset: the library's default,
:data:`~svm_models.solvers.base.DEFAULT_TIME_LIMIT`), ``threads``, ``tee`` (the backend's
log), ``solver_options`` (legacy ``options``: the backend's raw options), and the library's
``tol`` and ``iter_limit``.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib
import logging
import math
import time

from pyomo.common.collections import ComponentMap
from pyomo.common.config import ConfigValue, NonNegativeFloat, PositiveInt
from pyomo.common.errors import ApplicationError
from pyomo.common.tee import TeeStream, capture_output
from pyomo.common.timing import HierarchicalTimer
from pyomo.contrib.solver.common.base import Availability, LegacySolverWrapper, SolverBase
from pyomo.contrib.solver.common.config import SolverConfig
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import Results, SolutionStatus
from pyomo.contrib.solver.common.solution_loader import NoSolutionSolutionLoader, SolutionLoader
from pyomo.contrib.solver.common.util import (IncompatibleModelError, NoOptimalSolutionError,
                                              NoReducedCostsError, NoSolutionError)
from pyomo.core.base.var import Var
from pyomo.core.staleflag import StaleFlagManager

from .._version import __version__ as _library_version
from ..errors import CapabilityError, SolverUnavailableError
from ..model.built import single_record
from ..model.pyomo_compat import values_of
from ..status import Status
from .base import SolverOptions
from .dispatch import solve_model
from .table import available as _backend_available
from .table import backend

logger = logging.getLogger(__name__)

#: the backends registered with Pyomo (as ``svm_models.<name>``): those Pyomo has no
#: interface to
REGISTERED = ("piqp", "clarabel", "ipm", "libsvm")

PREFIX = "svm_models."


class IncompatibleModel(IncompatibleModelError, CapabilityError):
    """The backend cannot take the model: Pyomo's ``IncompatibleModelError`` and the library's
    ``CapabilityError`` at once, with the library's message (naming the backends that can)."""


class SvmModelsConfig(SolverConfig):
    """Pyomo's common solver options, plus the library's ``tol`` and ``iter_limit``."""

    def __init__(self, description=None, doc=None, implicit=False, implicit_domain=None,
                 visibility=0):
        super().__init__(description=description, doc=doc, implicit=implicit,
                         implicit_domain=implicit_domain, visibility=visibility)
        self.tol = self.declare("tol", ConfigValue(
            domain=NonNegativeFloat, default=None,
            description="Relative optimality and feasibility tolerance (default 1e-9)."))
        self.iter_limit = self.declare("iter_limit", ConfigValue(
            domain=PositiveInt, default=None, description="Iteration limit."))


class SvmModelsSolutionLoader(SolutionLoader):
    """The solution of one solve, kept apart from the model: the variables' values and the
    constraints' duals (d(objective)/d(bound), the model's own sense, as
    :func:`~svm_models.solvers.dispatch.solve_model` returns them: a mapping constraint data
    -> dual, read on demand)."""

    def __init__(self, model, variables: list, values: list, duals) -> None:
        self._pyomo_model = model
        self._variables = variables
        self._values = values
        self._duals = duals if duals is not None else {}
        self._pos = None

    def get_number_of_solutions(self) -> int:
        return 1

    def get_vars(self, vars_to_load=None):
        if vars_to_load is None:
            return ComponentMap(zip(self._variables, self._values))
        if self._pos is None:
            self._pos = {id(v): i for i, v in enumerate(self._variables)}
        out = ComponentMap()
        for v in vars_to_load:
            i = self._pos.get(id(v))
            if i is None:
                raise KeyError(f"variable {v.name!r} was not part of the solved model")
            out[v] = self._values[i]
        return out

    #: the name of the method in Pyomo's persistent solvers (``_get_primals``)
    get_primals = get_vars

    def get_duals(self, cons_to_load=None):
        if cons_to_load is None:
            return {c: float(v) for c, v in self._duals.items()}
        out = {}
        for c in cons_to_load:
            if c not in self._duals:
                raise KeyError(f"constraint {c.name!r} has no dual in this solve (it was not "
                               "an active constraint of the solved model)")
            out[c] = float(self._duals[c])
        return out

    def get_reduced_costs(self, vars_to_load=None):
        raise NoReducedCostsError("svm_models' backends report no reduced costs")

    def load_import_suffixes(self) -> None:
        suffixes = self._collect_and_clear_import_suffixes()
        if "dual" in suffixes:
            suffixes["dual"].update(self.get_duals())
        if "rc" in suffixes:
            logger.warning("svm_models' backends report no reduced costs: the 'rc' suffix is "
                           "left empty")


def _record_of(model):
    """The record of the one SVM built inside ``model`` (None: none, or several; the general
    path). The caller's array is not checked against the model here, as ``optimize`` does
    not: the model never reads it after the build."""
    return single_record(model)


def _version_tuple(text: str) -> tuple:
    out = []
    for part in str(text).split("."):
        digits = "".join(ch for ch in part if ch.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


class SvmModelsSolver(SolverBase):
    """One of the library's backends (:attr:`backend_name`) as a Pyomo solver (new
    interface); see the module's documentation."""

    CONFIG = SvmModelsConfig()
    backend_name: str = ""
    #: the new interface raises when no solution can be loaded; the legacy one returns the
    #: result with its termination condition (as Pyomo's legacy solvers do)
    _raise_without_solution = True

    def __call__(self, **kwds) -> "SvmModelsSolver":
        """A new solver of the same backend (``kwds``: its configuration). Pyomo's new
        ``SolverFactory(name)`` already returns an instance; this makes
        ``SolverFactory(name)()``, the form of a class, work as well."""
        return type(self)(**kwds)

    def available(self) -> Availability:
        try:
            ok = _backend_available(self.backend_name)
        except Exception:
            ok = False
        return Availability.FullLicense if ok else Availability.NotFound

    def version(self) -> tuple:
        if self.backend_name == "ipm":
            return _version_tuple(_library_version)
        if not self.available():
            return None
        mod = importlib.import_module(backend(self.backend_name).modules[0])
        return _version_tuple(getattr(mod, "__version__", ""))

    def solve(self, model, **kwds) -> Results:
        t_start = time.perf_counter()
        results = Results()
        results.timing_info.start_timestamp = datetime.datetime.now(datetime.timezone.utc)
        results.solver_name = self.name
        config = self.config(value=kwds, preserve_implicit=True)
        timer = config.timer
        if timer is None:
            timer = config.timer = HierarchicalTimer()
        if not self.available():
            raise ApplicationError(f"Solver {self.name!r} is not available ({self.available()}): "
                                   f"{backend(self.backend_name).install}")
        opts = self._options(config)
        variables = [v for v in model.component_data_objects(Var, descend_into=True)
                     if not v.fixed]
        before = values_of(variables) if not config.load_solutions else None
        StaleFlagManager.mark_all_as_stale()
        timer.start("solve")
        try:
            with (capture_output(TeeStream(*config.tee), capture_fd=True) if config.tee
                  else contextlib.nullcontext()):
                info = solve_model(model, self.backend_name, record=_record_of(model),
                                   options=opts)
        except CapabilityError as exc:
            raise IncompatibleModel(f"{self.name}: {exc}") from None
        except SolverUnavailableError as exc:
            raise ApplicationError(f"{self.name}: {exc}") from None
        finally:
            timer.stop("solve")
        status = info.status
        results.termination_condition = status.termination_condition
        results.solution_status = status.solution_status
        results.solver_version = self.version()
        results.solver_config = config
        results.extra_info.message = info.message
        results.extra_info.interface = info.interface
        results.extra_info.path = info.path
        results.extra_info.path_reason = info.path_reason
        results.extra_info.iteration_count = info.iterations
        results.extra_info.retry = info.retry
        if status is Status.optimal:
            # the variables this solve loaded (the library marks them not stale; read all
            # flags before any value is set: the next set_value marks everything stale)
            fresh = [not v.stale for v in variables]
            loaded = [v for v, f in zip(variables, fresh) if f]
            results.solution_loader = SvmModelsSolutionLoader(model, loaded, values_of(loaded),
                                                              info.duals)
            results.incumbent_objective = info.objective
            if before is not None:
                # the library loads the values; load_solutions=False: back as they were
                for v, old, f in zip(variables, before, fresh):
                    if f:
                        v.set_value(old, skip_validation=True)
                StaleFlagManager.mark_all_as_stale()
        else:
            results.solution_loader = NoSolutionSolutionLoader(
                model, f"{self.name} ended {status.value}: {info.message}")
        if (status is not Status.optimal and config.raise_exception_on_nonoptimal_result):
            raise NoOptimalSolutionError(
                f"{self.name} ended {status.value} ({info.message}). Set "
                "raise_exception_on_nonoptimal_result=False to get the result instead.")
        if config.load_solutions:
            if status is Status.optimal:
                results.solution_loader.load_import_suffixes()
            elif self._raise_without_solution:
                raise NoSolutionError(
                    f"{self.name} ended {status.value} ({info.message}): no solution to "
                    "load. Set load_solutions=False and check results.termination_condition.")
        results.timing_info.timer = timer
        results.timing_info.solver_time = info.time
        results.timing_info.wall_time = time.perf_counter() - t_start
        return results

    def _options(self, config) -> SolverOptions:
        t = config.time_limit
        if t is not None:
            t = math.inf if math.isinf(t) else max(float(t), 1e-9)
        return SolverOptions.from_kwargs(
            tol=config.tol, time_limit=t, iter_limit=config.iter_limit,
            threads=config.threads or None, verbose=bool(config.tee),
            options=dict(config.solver_options.value()))


class SvmModelsLegacySolver(LegacySolverWrapper):
    """The legacy face (``pyomo.environ.SolverFactory``): Pyomo's ``LegacySolverWrapper``; a
    non-optimal end is returned with its termination condition, nothing loaded."""

    _raise_without_solution = False

    def _solution_handler(self, load_solutions, model, results, legacy_results, legacy_soln):
        if load_solutions and results.solution_status is SolutionStatus.noSolution:
            logger.warning("%s: no solution loaded (%s: %s)", self.name,
                           results.termination_condition.name,
                           results.extra_info.value().get("message"))
            load_solutions = False
        return super()._solution_handler(load_solutions, model, results, legacy_results,
                                         legacy_soln)

    def _map_results(self, model, results):
        legacy_results, legacy_soln = super()._map_results(model, results)
        message = results.extra_info.value().get("message")
        if message:
            legacy_results.solver.message = message
        return legacy_results, legacy_soln


_DOCS = {
    "piqp": "PIQP (proximal interior point) through svm_models: LP and convex QP",
    "clarabel": "Clarabel (interior point, conic) through svm_models: LP, convex QP, SOCP "
                "and convex QCQP",
    "ipm": "svm_models' own interior-point method: LP and convex QP",
    "libsvm": "libsvm's SMO (scikit-learn) through svm_models: only a classic SVM dual built "
              "by svm_models.build, unchanged",
}


def _register() -> dict:
    """Register every backend of :data:`REGISTERED` (both interfaces); returns the classes."""
    out = {}
    for name in REGISTERED:
        full = PREFIX + name
        attrs = {"backend_name": name, "__doc__": _DOCS[name], "__module__": __name__}
        cls = type(f"SvmModels_{name}", (SvmModelsSolver,), attrs)
        legacy = type(f"SvmModels_{name}_legacy", (SvmModelsLegacySolver, cls),
                      {"__module__": __name__, "__doc__": _DOCS[name] + " (legacy interface)"})
        SolverFactory.register(full, legacy_name=full, doc=_DOCS[name])(cls, legacy)
        out[name] = cls
    return out


SOLVERS = _register()

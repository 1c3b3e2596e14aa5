"""The library's matrix backends as Pyomo solvers: ``svm_models.piqp``, ``svm_models.clarabel``,
``svm_models.ipm`` and ``svm_models.libsvm`` -- every backend whose declaration has a
``pyomo_solver`` description (:class:`~.base.Backend`), one registered later by
:func:`~.table.register_backend` too --, registered on ``import svm_models`` with Pyomo's
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
<svm_models.status.Status.solution_status>`; infeasible and unbounded are told apart from the
backends' certificates (a dual-infeasibility certificate alone is "infeasible or unbounded":
the feasibility problem tells which; :func:`~.common.settle_dual_infeasible`). Duals are
reported in the convention of Pyomo's direct solver interfaces (``gurobi_direct``,
``highs``, ``cplex_direct``): the sensitivity d(optimal objective)/d(constraint bound) in the
model's own sense -- the library's own convention, so they are passed on as
:func:`solve_model` returns them. (Ipopt's duals in Pyomo have the opposite sign when
minimising: ``BACKENDS["ipopt"].dual_sign``.) Reduced costs, in the same convention
(d(objective)/d(the variable's bound)), are computed on request from the standard form
solved (:func:`reduced_costs`).

The solution is what Pyomo's own interfaces give: the variables the active objective and
constraints reference (not fixed; any other is neither solved nor loaded, and stale); a model
without an active objective is a feasibility problem (``incumbent_objective`` None);
``objective_bound`` is the trivial one (-inf minimising, inf maximising: no bound is proved
beyond the optimum's tolerance); ``solver_log`` holds the backend's log when ``tee`` asks for
it (shown on those streams too; a quiet solve runs the backend quietly: ""). ``load_solutions=False`` leaves the model's values as they were: the solve loads
the values (the library always does), the solution is kept in the result's loader, and the
values before the solve are put back (every variable stale). A solve without a solution
raises Pyomo's errors (``NoOptimalSolutionError``; then ``NoSolutionError``, and from its
loader ``NoDualsError``, ``NoReducedCostsError``). The legacy interface (also
``<name>_v2``, as Pyomo names the legacy face of its own new solvers), as Pyomo's own legacy
solvers do, returns a non-optimal result (infeasible, a time limit) with its termination
condition instead of raising, and loads nothing -- through public hooks only: its result's
loader loads nothing, and its ``solve`` adds the library's message. A misspelt
``svm_models.<name>`` answers, in either factory, with the names registered and the closest
(:func:`unknown_solver_message`; :class:`~svm_models.model.pyomo_compat.PrefixRegistry`).

Options: ``time_limit`` (legacy ``timelimit``; unset: the library's default,
:data:`~svm_models.solvers.base.DEFAULT_TIME_LIMIT`), ``threads``, ``tee`` (the backend's
log), ``solver_options`` (legacy ``options``: the backend's raw options), and the library's
``tol`` and ``iter_limit``.
"""

from __future__ import annotations

import contextlib
import datetime
import difflib
import importlib
import io
import logging
import math
import time

import numpy as np
from pyomo.common.collections import ComponentMap
from pyomo.common.errors import ApplicationError
from pyomo.common.tee import TeeStream, capture_output
from pyomo.common.timing import HierarchicalTimer
from pyomo.contrib.solver.common.base import Availability, LegacySolverWrapper, SolverBase
from pyomo.contrib.solver.common.config import SolverConfig
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import Results
from pyomo.contrib.solver.common.solution_loader import NoSolutionSolutionLoader, SolutionLoader
from pyomo.contrib.solver.common.util import (IncompatibleModelError, NoDualsError,
                                              NoOptimalSolutionError, NoReducedCostsError,
                                              NoSolutionError)
from pyomo.core.base.objective import Objective
from pyomo.opt import SolverFactory as LegacySolverFactory
from pyomo.opt.base.solvers import LegacySolverFactory as LegacyRegistry
from pyomo.core.base.var import Var
from pyomo.core.staleflag import StaleFlagManager

from .._version import __version__ as _library_version
from ..config import PLUGIN_OPTIONS, checked, declare_solve_options
from ..errors import CapabilityError, ParameterError, SolverUnavailableError
from ..model.built import single_record
from ..model.pyomo_compat import answer_unknown_names, values_of
from ..status import Status
from ..tolerances import AT_BOUND_REL
from .base import SolverOptions
from .dispatch import solve_model
from .table import available as _backend_available
from .table import BACKENDS, LISTENERS, backend

logger = logging.getLogger(__name__)

#: the backends registered with Pyomo (as ``svm_models.<name>``): those Pyomo has no
#: interface to, whose declarations say so (``Backend.pyomo_solver``); kept up to date by
#: :func:`_offer` as backends are registered
REGISTERED: list[str] = []

PREFIX = "svm_models."


class IncompatibleModel(IncompatibleModelError, CapabilityError):
    """The backend cannot take the model: Pyomo's ``IncompatibleModelError`` and the library's
    ``CapabilityError`` at once, with the library's message (naming the backends that can)."""


class SvmModelsConfig(SolverConfig):
    """Pyomo's common solver options (``tee``, ``time_limit``, ``threads``,
    ``solver_options``, ...), plus the library's own solve options as
    :class:`svm_models.config.SolveConfig` declares them (``tol``, ``iter_limit``, ``path``,
    ``scaling``, ``switch``: :data:`~svm_models.config.PLUGIN_OPTIONS`)."""

    def __init__(self, description=None, doc=None, implicit=False, implicit_domain=None,
                 visibility=0):
        super().__init__(description=description, doc=doc, implicit=implicit,
                         implicit_domain=implicit_domain, visibility=visibility)
        declare_solve_options(self, PLUGIN_OPTIONS)


class SvmModelsSolutionLoader(SolutionLoader):
    """The solution of one solve, kept apart from the model: the values of the variables the
    solve took (those the active objective and constraints reference, not fixed), the duals
    of its constraints (d(objective)/d(bound), the model's own sense, as
    :func:`~svm_models.solvers.dispatch.solve_model` returns them: a mapping constraint data
    -> dual, read on demand) and, from the standard form solved (``form``), the reduced
    costs (d(objective)/d(the variable's bound), computed on first request)."""

    def __init__(self, model, variables: list, values: list, duals, form=None,
                 form_values=None) -> None:
        self._pyomo_model = model
        self._variables = variables
        self._values = values
        self._duals = duals if duals is not None else {}
        self._form = form
        self._form_values = form_values
        self._pos = None
        self._rc = None

    def get_number_of_solutions(self) -> int:
        return 1

    def _positions(self, vars_to_load) -> list:
        if self._pos is None:
            self._pos = {id(v): i for i, v in enumerate(self._variables)}
        out = []
        for v in vars_to_load:
            i = self._pos.get(id(v))
            if i is None:
                raise KeyError(f"variable {v.name!r} was not part of the solved model (no "
                               "active objective or constraint references it, or it is fixed)")
            out.append(i)
        return out

    def get_vars(self, vars_to_load=None):
        if vars_to_load is None:
            return ComponentMap(zip(self._variables, self._values))
        vars_to_load = list(vars_to_load)
        return ComponentMap((v, self._values[i])
                            for v, i in zip(vars_to_load, self._positions(vars_to_load)))

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
        if self._rc is None:
            rc = reduced_costs(self._form, self._duals, self._form_values)
            if isinstance(rc, str):
                raise NoReducedCostsError(f"no reduced costs: {rc}")
            pos = {id(v): i for i, v in enumerate(self._form.var_datas)}
            self._rc = [float(rc[pos[id(v)]]) for v in self._variables]
        if vars_to_load is None:
            return ComponentMap(zip(self._variables, self._rc))
        vars_to_load = list(vars_to_load)
        return ComponentMap((v, self._rc[i])
                            for v, i in zip(vars_to_load, self._positions(vars_to_load)))

    def load_import_suffixes(self) -> None:
        suffixes = self._collect_and_clear_import_suffixes()
        if "dual" in suffixes:
            suffixes["dual"].update(self.get_duals())
        if "rc" in suffixes:
            try:
                suffixes["rc"].update(self.get_reduced_costs())
            except NoReducedCostsError as exc:
                logger.warning("the 'rc' suffix is left empty: %s", exc)


class SvmModelsNoSolution(NoSolutionSolutionLoader):
    """A solve that ended without a solution (infeasible, unbounded, a limit): every request
    raises Pyomo's error for it -- :class:`NoSolutionError`, :class:`NoDualsError`,
    :class:`NoReducedCostsError` -- with Pyomo's message and the solve's end. ``legacy``: the
    legacy interface, which returns such a result with its termination condition, loads
    nothing: its ``load_import_suffixes`` only clears the model's import suffixes."""

    def __init__(self, model, why: str, legacy: bool = False) -> None:
        super().__init__(model, why)
        self._legacy = legacy

    def _text(self, error) -> str:
        return f"{error.default_message} ({self.err_msg})"

    def get_vars(self, vars_to_load=None):
        raise NoSolutionError(self._text(NoSolutionError))

    def get_duals(self, cons_to_load=None):
        raise NoDualsError(self._text(NoDualsError))

    def get_reduced_costs(self, vars_to_load=None):
        raise NoReducedCostsError(self._text(NoReducedCostsError))

    def load_import_suffixes(self) -> None:
        if self._legacy:
            self._collect_and_clear_import_suffixes()
            return
        super().load_import_suffixes()


def reduced_costs(sf, duals, x):
    """The reduced costs of the variables of the standard form ``sf`` solved to optimality
    (``x``: the values of ``sf.var_datas`` it found), in Pyomo's convention -- d(objective)/d(the
    variable's bound), the model's own sense: the gradient of the Lagrangian,
    ``grad f(x) - sum_i y_i grad g_i(x)`` over the rows, quadratic rows and cones with
    their duals ``y`` (``duals``: the mapping the solve returned, in the same convention).
    At an optimum it equals the multipliers of the variable bounds: a variable off its
    bounds (by more than :data:`~svm_models.tolerances.AT_BOUND_REL` of their size) has 0.
    A string says why there are none: no form (the backend's Pyomo plugin), no row duals,
    or a cone at its apex (where its squared form has no gradient to carry the multiplier).
    """
    if sf is None:
        return "the solve kept no standard form to compute them from"
    values = getattr(duals, "values", None)
    if values is None or len(values) != sf.m:
        return "the backend reported no row duals"
    x = np.asarray(x, dtype=float)
    rc = sf.sense * sf.gradient(x) - sf.A.T @ np.asarray(values, dtype=float)
    other = duals.other
    for q in sf.qrows:
        grad = np.array(q.linear, dtype=float)
        for blk in q.quad:
            grad[blk.index] += blk.gradient(x)
        rc -= float(other[q.data]) * q.sign * grad
    for c in sf.cones:
        u = c.A @ x + c.b
        w = np.array(u, dtype=float)
        if c.kind == "soc":
            head = u[0]
            w[0] = -u[0]
        else:
            head = u[0] + u[1]
            w[0], w[1] = -u[1], -u[0]
        if head <= 1e-7 * (1.0 + float(np.max(np.abs(u), initial=0.0))):
            return f"the cone {getattr(c.data, 'name', '')!r} is at its apex"
        rc -= float(other[c.data]) * c.row_scale * 2.0 * (c.A.T @ w)
    # complementarity: a variable off its bounds has none (the gradient's value there is the
    # round-off of the duals, up to 1e-5 after a quadratic row's or a cone's)
    span = np.maximum(1.0, np.abs(np.where(np.isfinite(sf.lx), sf.lx, 0.0))
                      + np.abs(np.where(np.isfinite(sf.ux), sf.ux, 0.0)))
    at_bound = ((np.isfinite(sf.lx) & (x - sf.lx <= AT_BOUND_REL * span))
                | (np.isfinite(sf.ux) & (sf.ux - x <= AT_BOUND_REL * span)))
    rc[~at_bound] = 0.0
    return rc


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
        b = backend(self.backend_name)
        if b.version is not None:
            return _version_tuple(b.version())
        if not self.available():
            return None
        if not b.modules:
            return _version_tuple(_library_version)
        mod = importlib.import_module(b.modules[0])
        return _version_tuple(getattr(mod, "__version__", ""))

    def solve(self, model, **kwds) -> Results:
        t_start = time.perf_counter()
        self._message = None
        results = Results()
        results.timing_info.start_timestamp = datetime.datetime.now(datetime.timezone.utc)
        results.solver_name = self.name
        # (an unknown option or a value out of its domain: a ParameterError naming it)
        config = checked(self.config, kwds, who=f"option(s) of {self.name}",
                         preserve_implicit=True)
        timer = config.timer
        if timer is None:
            timer = config.timer = HierarchicalTimer()
        if not self.available():
            raise ApplicationError(f"Solver {self.name!r} is not available ({self.available()}): "
                                   f"{backend(self.backend_name).install}")
        has_objective = next(model.component_data_objects(
            Objective, active=True, descend_into=True), None) is not None
        before = None
        if not config.load_solutions:   # the values to put back after the solve (of the
            # whole model: a block's constraints may reference variables outside it)
            held = list(model.model().component_data_objects(Var, descend_into=True))
            before = dict(zip(map(id, held), values_of(held)))
        log = io.StringIO()
        timer.start("solve")
        try:
            # with tee, the backend's log to those streams and to results.solver_log; a quiet
            # solve runs the backend quietly, its output drained to a file (never a pipe:
            # Pyomo's capture reads one in a thread, which a backend holding the GIL for a
            # long log would block on)
            with (capture_output(TeeStream(log, *config.tee), capture_fd=True) if config.tee
                  else contextlib.nullcontext()):
                info = solve_model(model, self.backend_name, record=_record_of(model),
                                   options=self._options(config))
        except CapabilityError as exc:
            raise IncompatibleModel(f"{self.name}: {exc}") from None
        except SolverUnavailableError as exc:
            raise ApplicationError(f"{self.name}: {exc}") from None
        finally:
            timer.stop("solve")
        self._message = info.message
        results.solver_log = log.getvalue()
        self._fill(results, config, info)
        if info.status is Status.optimal:
            self._solution(results, model, info, has_objective, before)
        else:
            results.solution_loader = SvmModelsNoSolution(
                model, f"{self.name} ended {info.status.value}: {info.message}",
                legacy=not self._raise_without_solution)
        self._finish(results, config, info)
        results.timing_info.timer = timer
        results.timing_info.solver_time = info.time
        results.timing_info.wall_time = time.perf_counter() - t_start
        return results

    def _fill(self, results, config, info) -> None:
        """The status, the solver's identity and configuration, and what the library knows
        of the solve (``extra_info``)."""
        results.termination_condition = info.status.termination_condition
        results.solution_status = info.status.solution_status
        results.solver_version = self.version()
        results.solver_config = config
        results.extra_info.message = info.message
        results.extra_info.interface = info.interface
        results.extra_info.path = info.path
        results.extra_info.path_reason = info.path_reason
        results.extra_info.iteration_count = info.iterations
        results.extra_info.retry = info.retry

    def _solution(self, results, model, info, has_objective: bool, before) -> None:
        """An optimum: its loader (the variables the solve took, their values, the duals, the
        form for the reduced costs), the objective (None for a model without one: a
        feasibility problem; the bound: none proved beyond the trivial one) and, with
        ``load_solutions=False`` (``before``: the values before the solve), the model's
        values put back, every variable stale."""
        sf = info.form
        if sf is not None:
            solved = [v for v in sf.var_datas if not v.fixed]
        else:   # (every matrix backend keeps its form; a path without one: the fresh values)
            solved = [v for v in model.component_data_objects(Var, descend_into=True)
                      if not v.fixed and not v.stale]
        results.solution_loader = SvmModelsSolutionLoader(
            model, solved, values_of(solved), info.duals, sf,
            None if sf is None else values_of(sf.var_datas))
        if has_objective:
            results.incumbent_objective = info.objective
            sense = 1 if sf is None else sf.sense
            results.objective_bound = -math.inf if sense == 1 else math.inf
        if before is not None:
            for v in solved:
                v.set_value(before.get(id(v)), skip_validation=True)
            StaleFlagManager.mark_all_as_stale()

    def _finish(self, results, config, info) -> None:
        """Pyomo's rules for the end of a solve: a non-optimal end raises
        (``raise_exception_on_nonoptimal_result``); ``load_solutions``: the import suffixes
        (``dual``, ``rc``) loaded, or -- no solution -- :class:`NoSolutionError` (the legacy
        interface warns and loads nothing, as Pyomo's legacy solvers do)."""
        status = info.status
        if status is not Status.optimal and config.raise_exception_on_nonoptimal_result:
            raise NoOptimalSolutionError(
                f"{self.name} ended {status.value} ({info.message}). Set "
                "raise_exception_on_nonoptimal_result=False to get the result instead.")
        if not config.load_solutions:
            return
        if status is Status.optimal:
            results.solution_loader.load_import_suffixes()
        elif self._raise_without_solution:
            raise NoSolutionError(
                f"{self.name} ended {status.value} ({info.message}): no solution to "
                "load. Set load_solutions=False and check results.termination_condition.")
        else:
            logger.warning("%s: no solution loaded (%s: %s)", self.name,
                           results.termination_condition.name, info.message)

    def _options(self, config) -> SolverOptions:
        t = config.time_limit
        if t is not None:
            t = math.inf if math.isinf(t) else max(float(t), 1e-9)
        return SolverOptions.from_kwargs(
            tol=config.tol, time_limit=t, iter_limit=config.iter_limit,
            threads=config.threads or None, verbose=bool(config.tee),
            options=dict(config.solver_options.value()), path=config.path,
            scaling=config.scaling, switch=config.switch)


class SvmModelsLegacySolver(LegacySolverWrapper):
    """The legacy face (``pyomo.environ.SolverFactory``): Pyomo's ``LegacySolverWrapper``; a
    non-optimal end is returned with its termination condition, nothing loaded (the
    result's loader, :class:`SvmModelsNoSolution`, loads nothing); the library's message
    on the end of the solve in ``results.solver.message``."""

    _raise_without_solution = False

    def solve(self, model, *args, **kwds):
        legacy_results = super().solve(model, *args, **kwds)
        if self._message:
            legacy_results.solver.message = self._message
        return legacy_results


def unknown_solver_message(name: str) -> str:
    """What both factories answer to ``svm_models.<name>`` that is not registered: the names
    registered and the closest one (difflib) -- or, for one of the library's backends that
    Pyomo has its own interface to (``hihgs``), that interface."""
    key = name[len(PREFIX):].lower()
    others = [n for n in BACKENDS if n not in REGISTERED]
    close = difflib.get_close_matches(key, list(REGISTERED) + others, n=1)
    hint = ""
    if close and close[0] in REGISTERED:
        hint = f"; did you mean {PREFIX + close[0]!r}?"
    elif close:
        b = BACKENDS[close[0]]
        plugin = b.plugins[-1] if b.plugins else close[0]
        hint = (f"; did you mean Pyomo's own {plugin!r}? (svm_models registers only the "
                f"backends Pyomo has no interface to; svm_models.solve(..., "
                f"solver={close[0]!r}) solves through the library)")
    return (f"unknown solver {name!r}: svm_models registers "
            f"{', '.join(PREFIX + n for n in REGISTERED)} with Pyomo's SolverFactory{hint}")


class UnknownSolverError(ParameterError):
    """A misspelt ``svm_models.<name>`` asked of Pyomo's new ``SolverFactory``."""


def _refuse_new(name: str):
    """The new interface's answer: the error, at once (where Pyomo returns None)."""
    raise UnknownSolverError(unknown_solver_message(name))


class UnknownLegacySolver:
    """The legacy factory's answer to a misspelt ``svm_models.<name>`` (where Pyomo returns
    its ``UnknownSolver``): not available, and any solve raises Pyomo's ``ApplicationError``
    with :func:`unknown_solver_message`."""

    def __init__(self, name: str, **kwds) -> None:
        self.name = name
        self.message = unknown_solver_message(name)

    def available(self, exception_flag=True) -> bool:
        if exception_flag:
            raise ApplicationError(self.message)
        return False

    def license_is_valid(self) -> bool:
        return False

    def solve(self, *args, **kwds):
        raise ApplicationError(self.message)

    def __bool__(self) -> bool:
        return False


def _answer_legacy(name: str):
    return lambda **kwds: UnknownLegacySolver(name, **kwds)


def _offer(b, added: bool = True) -> None:
    """Register the backend ``b`` with both of Pyomo's factories as ``svm_models.<name>``
    (``added`` False: unregister it), if its declaration offers it (``pyomo_solver``). The
    legacy factory has it under its name and, as Pyomo names the legacy face of its own
    new-interface solvers (``ipopt_v2``, ``gurobi_direct_v2``), ``<name>_v2`` too."""
    doc, name = b.pyomo_solver, b.name
    if not doc:
        return
    full = PREFIX + name
    if not added:
        # (not Factory.unregister: the registries answer every svm_models.<name>, so that
        # its membership test is true for a name they do not hold)
        for factory in (SolverFactory, LegacySolverFactory, LegacyRegistry):
            for key in (full, full + "_v2"):
                dict.pop(factory._cls, key, None)
                factory._doc.pop(key, None)
        SOLVERS.pop(name, None)
        if name in REGISTERED:
            REGISTERED.remove(name)
        return
    attrs = {"backend_name": name, "__doc__": doc, "__module__": __name__}
    cls = type(f"SvmModels_{name}", (SvmModelsSolver,), attrs)
    legacy = type(f"SvmModels_{name}_legacy", (SvmModelsLegacySolver, cls),
                  {"__module__": __name__, "__doc__": doc + " (legacy interface)"})
    SolverFactory.register(full, legacy_name=full, doc=doc)(cls, legacy)
    LegacySolverFactory.register(full + "_v2", doc + " (legacy interface)")(legacy)
    SOLVERS[name] = cls
    REGISTERED.append(name)


#: the new-interface solver class of each backend offered to Pyomo, by backend name
SOLVERS: dict = {}


def _register() -> dict:
    """Offer every backend that says so (:func:`_offer`), now and as backends are
    registered; answer a misspelt ``svm_models.<name>`` in both factories. Returns
    :data:`SOLVERS`."""
    for b in list(BACKENDS.values()):
        _offer(b)
    LISTENERS.append(_offer)
    answer_unknown_names([SolverFactory], PREFIX, lambda name: lambda **kw: _refuse_new(name))
    answer_unknown_names([LegacySolverFactory, LegacyRegistry], PREFIX, _answer_legacy)
    return SOLVERS


_register()

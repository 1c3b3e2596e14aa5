"""The backend table: every backend by its flag, which are installed, which take a problem
class, and the order ``solver="auto"`` tries them in. :mod:`.dispatch` reads it; the package
re-exports it (``svm_models.solvers.BACKENDS``, ``backend``, ...).

A backend is its module and one entry here: its module declares everything about it in its
``BACKEND`` (:class:`~.base.Backend`: the classes it takes, whether the project installs
it, its rank in ``solver="auto"``'s order per problem class, whether it is offered to
Pyomo's solver factories), and :data:`MODULES` names the module. Every list -- ``BACKENDS``,
``PROJECT_BACKENDS``, ``AUTO_ORDER``, the Pyomo factory's names, the tests' backend lists,
the catalogue's backend columns -- is derived from the declarations. A backend defined
outside the package is added with :func:`register_backend` (a package's: through the
entry-point group ``svm_models.backends``, :func:`load_entry_points`), and is then seen as the
package's own are (by ``solvers()``, ``auto``, ``solve(..., solver=name)``, the Pyomo
factories).
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import io
import numbers
from typing import Callable

from ..errors import CapabilityError, ParameterError, SolverUnavailableError
from .base import ORDER, Backend, module_present

#: the one entry of each backend of the package: the modules of ``svm_models.solvers`` that
#: declare backends (``BACKEND``, or a list ``BACKENDS`` for several), in the order of the
#: listings (``solvers()``, the error messages; equal ``auto`` ranks). A list, not a
#: discovery of the package's modules: the package also holds modules that are not
#: backends (dispatch, common, working_set, the Pyomo factory -- which import this one), so
#: discovery would need a list of those instead; and this order is the listings' order
MODULES = ("highs", "gurobi", "ipopt", "scip", "piqp", "clarabel", "ipm", "libsvm", "others")

#: every backend by its flag, in the order of :data:`MODULES`, then those registered from
#: outside the package (:func:`register_backend`)
BACKENDS: dict[str, Backend] = {}

#: ``solver="auto"``: per problem class, the backends in the order tried (installed or not:
#: :func:`auto_choice` keeps the installed ones), derived from each backend's
#: :attr:`~.base.Backend.auto` ranks -- fastest first (measured: benchmarks/results.md,
#: benchmarks/svc.py); libsvm (a structured backend) only where the record proves the model
#: is a classic dual as built; Gurobi and SCIP last (a size-limited licence; a spatial branch
#: and bound). Kept up to date in place by :func:`register_backend`
AUTO_ORDER: dict[str, tuple[str, ...]] = {}

#: called with ``(backend, added)`` when a backend is registered (``added`` True) or
#: unregistered after the package's own (the Pyomo factory offers its solvers so)
LISTENERS: list[Callable] = []


def declared(module) -> list[Backend]:
    """The backends a module declares: its ``BACKEND``, or its list ``BACKENDS``."""
    one = getattr(module, "BACKEND", None)
    return [one] if one is not None else list(getattr(module, "BACKENDS", ()))


def _check(b: Backend) -> None:
    """Refuse a declaration the table cannot hold, naming the field."""
    if not isinstance(b, Backend):
        raise ParameterError(f"a backend is a svm_models.solvers.Backend; got "
                             f"{type(b).__name__}")
    if not b.name or b.name != b.name.lower() or b.name == "auto":
        raise ParameterError(f"a backend's name is its solver flag: lower case, not 'auto'; "
                             f"got {b.name!r}")
    if b.name in BACKENDS:
        raise ParameterError(f"a backend {b.name!r} is already registered "
                             f"({', '.join(BACKENDS)})")
    unknown = set(b.classes) - set(ORDER)
    if unknown:
        raise ParameterError(f"backend {b.name!r}: unknown problem classes {sorted(unknown)}; "
                             f"the classes are {', '.join(ORDER)}")
    for cls, rank in dict(b.auto).items():
        if cls not in ORDER:
            raise ParameterError(f"backend {b.name!r}: an auto rank for {cls!r}, not a problem "
                                 f"class ({', '.join(ORDER)})")
        if isinstance(rank, bool) or not isinstance(rank, numbers.Real):
            raise ParameterError(f"backend {b.name!r}: the auto rank for {cls} must be a "
                                 f"number; got {rank!r}")
        if b.structured is None and cls not in b.classes:
            raise ParameterError(f"backend {b.name!r} has an auto rank for {cls}, a class it "
                                 f"does not take ({', '.join(sorted(b.classes))})")


def auto_order() -> dict[str, tuple[str, ...]]:
    """``solver="auto"``'s order per problem class, from the declarations: the backends with
    a rank for the class, lowest first (equal ranks: in the table's order)."""
    names = list(BACKENDS)
    out = {}
    for cls in ORDER:
        ranked = [n for n in names if cls in BACKENDS[n].auto]
        if ranked:
            out[cls] = tuple(sorted(ranked, key=lambda n: (BACKENDS[n].auto[cls],
                                                           names.index(n))))
    return out


def _derive() -> None:
    AUTO_ORDER.clear()
    AUTO_ORDER.update(auto_order())


def _load() -> None:
    for name in MODULES:
        for b in declared(importlib.import_module(f"{__package__}.{name}")):
            _check(b)
            BACKENDS[b.name] = b
    _derive()


_load()

#: the backends the project installs (or carries) and tests: those declared ``project``
PROJECT_BACKENDS = tuple(n for n, b in BACKENDS.items() if b.project)
#: the package's own backends (the others were registered from outside)
_OWN = frozenset(BACKENDS)


def register_backend(b: Backend) -> Backend:
    """Add the backend ``b`` (a :class:`~.base.Backend` declared outside the package): it is
    then listed by ``solvers()``, taken by ``solve(..., solver=b.name)``, tried by
    ``solver="auto"`` in the place its ``auto`` ranks give it, and, with a
    ``pyomo_solver`` description, offered to Pyomo's factories as ``svm_models.<name>``.
    ParameterError for a declaration the table cannot hold (a name taken, a rank for a class
    it does not take, ``project=True``: only the package's own are). Returns ``b``."""
    _check(b)
    if b.project:
        raise ParameterError(f"backend {b.name!r}: project=True is for the backends the project "
                             "installs and tests, listed in svm_models/solvers/table.py "
                             "(MODULES); leave it False")
    BACKENDS[b.name] = b
    _derive()
    for listener in LISTENERS:
        listener(b, True)
    return b


#: the entry-point group through which other packages register backends
ENTRY_POINT_GROUP = "svm_models.backends"


def load_entry_points() -> list[str]:
    """Register the backends of the entry points of :data:`ENTRY_POINT_GROUP` (run once as
    ``svm_models.solvers`` is imported): an entry point names a :class:`~.base.Backend`, or a
    module that declares some as the package's modules do (``BACKEND``, ``BACKENDS``). One
    that cannot be loaded or registered is a warning naming it, not a failed import. Returns
    the names registered."""
    import warnings
    from importlib.metadata import entry_points

    from ..errors import SVMWarning

    out = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
            for b in [obj] if isinstance(obj, Backend) else declared(obj):
                if BACKENDS.get(b.name) is not b:
                    out.append(register_backend(b).name)
        except Exception as exc:   # noqa: BLE001  (another package's: said, not fatal)
            warnings.warn(f"the backend plugin {ep.name!r} ({ep.value}) could not be loaded: "
                          f"{type(exc).__name__}: {exc}; its backends are not registered",
                          SVMWarning, stacklevel=2)
    return out


def unregister_backend(name: str) -> Backend:
    """Remove a backend added by :func:`register_backend` (the package's own stay);
    returns it."""
    if name in _OWN:
        raise ParameterError(f"{name!r} is one of the package's backends; only those added by "
                             "register_backend can be removed")
    b = backend(name)
    del BACKENDS[b.name]
    _PLUGIN_CACHE.pop(b.name, None)
    _derive()
    for listener in LISTENERS:
        listener(b, False)
    return b


def backend(name: str) -> Backend:
    """The backend called ``name`` (ParameterError, with a suggestion, otherwise; ``"auto"``
    is resolved by :func:`auto_choice`, not here)."""
    key = str(name).lower()
    if key == "auto":
        raise ParameterError("solver='auto' stands for a backend chosen per model "
                             "(svm_models.solvers.auto_choice); name one here")
    if key not in BACKENDS:
        close = difflib.get_close_matches(key, BACKENDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ParameterError(f"unknown solver {name!r}{hint}; choose one of {', '.join(BACKENDS)}")
    return BACKENDS[key]


def _plugin_available(plugin: str) -> bool:
    import pyomo.environ as pyo

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return bool(pyo.SolverFactory(plugin).available(exception_flag=False))
        except Exception:
            return False


_PLUGIN_CACHE: dict[str, str | None] = {}


def pyomo_plugin(name: str) -> str | None:
    """The first installed Pyomo plugin of backend ``name`` (None if none works)."""
    if name not in _PLUGIN_CACHE:
        _PLUGIN_CACHE[name] = next((p for p in BACKENDS[name].plugins if _plugin_available(p)),
                                   None)
    return _PLUGIN_CACHE[name]


def available(name: str) -> bool:
    b = backend(name)
    if not b.plugins:
        return all(module_present(m) for m in b.modules)
    return pyomo_plugin(b.name) is not None


def capable(problem_class: str) -> list[str]:
    return [n for n, b in BACKENDS.items() if b.takes(problem_class)]


def catalogue_backends(problem_class: str) -> str:
    """The backends that take ``problem_class`` as the catalogue's pages list them (the
    third column of a page's "Problem class and backends" table, written there by
    ``docs/backend_columns.py`` and checked by ``tests/test_catalogue.py``): the project's,
    then the others, each group by name, the others said to be taken where installed."""
    names = sorted(capable(problem_class))
    own = [n for n in names if BACKENDS[n].project]
    text = ", ".join(f"`{n}`" for n in own)
    for plugin in (True, False):
        group = [n for n in names if not BACKENDS[n].project
                 and bool(BACKENDS[n].plugins) is plugin]
        if group:
            where = "where their Pyomo plugins are installed" if plugin else "where installed"
            text += ("; " if text else "") + ", ".join(f"`{n}`" for n in group) + f" {where}"
    return text


def check_capability(name: str, problem_class: str | None) -> Backend:
    """Refuse, before anything runs, a backend that cannot take ``problem_class`` or is missing."""
    b = backend(name)
    if problem_class is not None and not b.takes(problem_class):
        usable = [n for n in capable(problem_class) if n in PROJECT_BACKENDS]
        raise CapabilityError(
            f"solver {b.name!r} cannot take a {problem_class} "
            f"({', '.join(c for c in ORDER if c in b.classes)} only); use one of: "
            f"{', '.join(usable)}")
    if not available(b.name):
        raise SolverUnavailableError(
            f"solver {b.name!r} is not installed or not usable here ({b.install})")
    return b


#: ``solver="auto"`` tries at most this many of the backends of AUTO_ORDER that take the
#: model, each after the one before ended in numerical trouble (api._solve_auto)
AUTO_TRIES = 3


def structure_refusal(b: Backend, record, unproved: str | None = None) -> str | None:
    """Why the structured backend ``b`` does not take the model of ``record`` (None: it does):
    no record, not its structure, or the model not proved to be the record (``unproved``:
    the reason already found by :func:`~svm_models.model.record.verify`, if it was run) or
    extended after the build (bounds, rows)."""
    from ..model.record import verify

    if record is None:
        return "the model carries no builder record"
    return (b.structure_check(record) or (unproved if unproved is not None else verify(record))
            or record.extension_reason())


def auto_choice(problem_class: str, record=None) -> list[tuple[str, str]]:
    """The backends ``solver="auto"`` tries for a model of ``problem_class`` (with its
    builder's ``record``, if any), in order, each with why; SolverUnavailableError if none."""
    out = []
    for n in AUTO_ORDER.get(problem_class, ()):
        b = BACKENDS[n]
        if not available(n):
            continue
        if b.structured is not None:
            if structure_refusal(b, record) is not None:
                continue
            out.append((n, f"the model is a classic SVM dual as built: {b.note}, the fastest"))
        elif b.takes(problem_class):
            out.append((n, f"the fastest installed backend that takes a {problem_class} "
                           f"(order: {', '.join(AUTO_ORDER[problem_class])})"))
    if not out:
        raise SolverUnavailableError(f"no installed backend takes a {problem_class}; see "
                                     "svm_models.solvers()")
    return out


def local_choice(problem_class: str) -> tuple[str, ...]:
    """The installed general backends (no structured one, no global branch and bound) that
    take ``problem_class``, in ``solver="auto"``'s order: where the library itself solves
    many small convex problems -- a mixed-integer SVM's warm start, the points of
    ``c_tuning_bound``'s curve -- and a global solver (SCIP, Gurobi) would spend its time
    proving what convexity already proves. Derived from the declarations, so a registered
    backend takes its place by its rank."""
    return tuple(n for n in AUTO_ORDER.get(problem_class, ())
                 if BACKENDS[n].structured is None and not BACKENDS[n].global_opt
                 and available(n))


def solvers() -> dict[str, dict]:
    """What is installed and usable: ``{name: {available, classes, interface, fast_path,
    duals, global, note}}``."""
    out = {}
    for name, b in BACKENDS.items():
        ok = available(name)
        out[name] = {
            "available": ok,
            "classes": ([c for c in ORDER if c in b.classes] if b.structured is None
                        else ["the classic duals as built"]),
            "interface": (pyomo_plugin(name) if b.plugins else "matrix") if ok else None,
            "fast_path": b.matrix is not None,
            "duals": b.duals,
            "global": b.global_opt,
            "install": b.install,
            "note": b.note,
        }
    return out

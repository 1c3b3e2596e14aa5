"""The backend table: every backend by its flag, which are installed, which take a problem
class, and the order ``solver="auto"`` tries them in. :mod:`.dispatch` reads it; the package
re-exports it (``svm_models.solvers.BACKENDS``, ``backend``, ...)."""

from __future__ import annotations

import contextlib
import difflib
import io

from ..errors import CapabilityError, ParameterError, SolverUnavailableError
from . import clarabel, gurobi, highs, ipm, ipopt, libsvm, others, piqp, scip
from .base import ORDER, Backend, module_present

#: every backend by its flag, the project's six first
BACKENDS: dict[str, Backend] = {b.name: b for b in [
    ipopt.BACKEND, gurobi.BACKEND, highs.BACKEND, scip.BACKEND, piqp.BACKEND, clarabel.BACKEND,
    ipm.BACKEND, libsvm.BACKEND, *others.BACKENDS]}

#: the backends the project installs (or carries) and tests
PROJECT_BACKENDS = ("ipopt", "gurobi", "highs", "scip", "piqp", "clarabel", "ipm", "libsvm")


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

#: ``solver="auto"``: per problem class, the installed backends in the order tried, fastest
#: first (measured: benchmarks/results.md, benchmarks/svc.py). libsvm (a structured backend)
#: only where the record proves the model is a classic dual as built; Gurobi and SCIP last
#: (a size-limited licence; a spatial branch and bound)
AUTO_ORDER = {
    "LP": ("highs", "clarabel", "piqp", "gurobi", "scip", "ipopt"),
    "QP": ("libsvm", "piqp", "clarabel", "highs", "ipopt", "ipm", "gurobi", "scip"),
    "SOCP": ("clarabel", "ipopt", "gurobi", "scip"),
    "QCQP": ("ipopt", "clarabel", "gurobi", "scip"),
    "NLP": ("ipopt", "scip"),
    # (no fast path: the Pyomo plugins. Gurobi is the fastest within its licence, but its
    # refusal of a larger model ends "auto": the backends without a size limit first)
    "MILP": ("highs", "gurobi", "scip"),
    "MIQP": ("scip", "gurobi"),
}


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

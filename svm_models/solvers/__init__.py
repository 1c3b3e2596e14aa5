"""The solver layer: one module per backend, and the layer that picks a path.

A user names a backend with one flag -- ``solver="ipopt" | "gurobi" | "highs" | "scip" |
"piqp" | "clarabel"``, the library's own ``"ipm"`` (:mod:`.ipm`: an interior-point method for
QPs that reduce to a small dense system), and ``cplex``, ``xpress``, ``mosek`` where Pyomo
has them. Each backend's module (:mod:`.highs`, :mod:`.ipopt`, :mod:`.gurobi`, :mod:`.scip`,
:mod:`.piqp`, :mod:`.clarabel`, :mod:`.ipm`, :mod:`.others`) owns its capabilities, availability, licence limits,
options, status mapping, dual signs and matrix adapter; :mod:`.dispatch` checks the
capability table, proves the fast path or takes the general one, and normalises the result.
A backend is its module and one entry of :data:`.table.MODULES`; every list of backends is
derived from their declarations, and one defined elsewhere is added by
:func:`register_backend` -- by a package, through the entry-point group
``svm_models.backends``. This package never imports a formulation: it meets them in the
record.
"""

from __future__ import annotations

from .base import ORDER, Backend, SolverOptions, module_present  # noqa: F401
from .table import (AUTO_ORDER, BACKENDS, PROJECT_BACKENDS, auto_choice, available,  # noqa: F401
                    backend, capable, check_capability, local_choice, pyomo_plugin, register_backend,
                    solvers, structure_refusal, unregister_backend)
from .dispatch import SolveInfo, solve_model
from .table import load_entry_points as _load_entry_points

_load_entry_points()   # (last: a plugin imports Backend and register_backend from here)

__all__ = ["AUTO_ORDER", "BACKENDS", "Backend", "SolverOptions", "SolveInfo", "auto_choice",
           "available", "backend",
           "capable", "check_capability", "pyomo_plugin", "register_backend", "solve_model",
           "solvers", "unregister_backend"]

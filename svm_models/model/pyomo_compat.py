"""Pyomo's internals, in one place: every private attribute of Pyomo that the library reads or
writes is named here (and nowhere else), with the Pyomo versions it was checked against.

Why the library reads them at all: speed at a million points. Reading ``_lb`` of 10^6
variables through ``operator.attrgetter`` takes milliseconds, through the public properties
(which validate and resolve Params) a second; the lazy components (:mod:`.lazy`) are Pyomo
component data whose expression slot is filled on first read; a batch load of a solution
sets values without a ``set_value`` call per variable, as Pyomo's own solver interfaces do.
``tests/test_pyomo_compat.py`` checks, for the Pyomo version installed, that every name here
exists and means what it is used for; ``pyproject.toml`` pins the versions checked
(:data:`CHECKED`). A new Pyomo version is supported by checking it here.
"""

from __future__ import annotations

import operator

from pyomo.core.base.constraint import ConstraintData
from pyomo.core.base.expression import ExpressionData
from pyomo.core.base.objective import ObjectiveData
from pyomo.core.staleflag import StaleFlagManager

#: the Pyomo versions (major, minor) whose internals this module was checked against
CHECKED = ((6, 10),)

# --- component data: the slots that hold a member's expression ---------------------------
#: a named expression's and an objective's expression: ``(expr,)`` in ``_args_``
ARGS_SLOT = ExpressionData.__dict__["_args_"]
OBJ_ARGS_SLOT = ObjectiveData.__dict__["_args_"]
#: a constraint's relational expression
EXPR_SLOT = ConstraintData.__dict__["_expr"]

# --- variables: attribute names read in bulk with operator.attrgetter ----------------------
#: the bounds and domain as the variable holds them (a number, a Param or an expression)
VAR_BOUND_SLOTS = ("_lb", "_ub", "_domain")
VAR_DOMAIN = "_domain"
VAR_FIXED = "_fixed"
VAR_VALUE = "_value"
#: a constraint member's active flag
CON_ACTIVE = "_active"


def member_dict(comp) -> dict:
    """The ``{index: member}`` dict an indexed component keeps (Pyomo's ``_data``), in its
    insertion order: read directly, without the index set's iterator."""
    return comp._data


def held_expression(data):
    """The object a (non-lazy) constraint, named expression or objective member holds: its
    relational expression, or its ``_args_`` tuple. Compared by identity to prove a member
    unchanged since it was built."""
    if isinstance(data, ConstraintData):
        return data._expr
    return data._args_


def init_member(m, ref, idx, *, active: bool | None = None) -> None:
    """Set up a member made with ``__new__`` (no ``__init__``: a million members), as Pyomo's
    own ``__init__`` would: its owner (a weak reference), its index and, for a constraint,
    its active flag."""
    m._component = ref
    m._index = idx
    if active is not None:
        m._active = active


def member_index(m):
    """The index of a member in its component."""
    return m._index


def load_values(var_datas, values) -> None:
    """Load values into variables as Pyomo's own solver interfaces do: every value set and
    the batch marked not stale, then everything else marked stale on the next load --
    without validation (the values come from a solve of the same model)."""
    StaleFlagManager.mark_all_as_stale()
    flag = StaleFlagManager.get_flag(0)
    for vd, v in zip(var_datas, values):
        vd._value = v
        vd._stale = flag
    StaleFlagManager.mark_all_as_stale(delayed=True)


def values_of(var_datas) -> list:
    """The variables' values (None where unset), at C speed."""
    return list(map(operator.attrgetter(VAR_VALUE), var_datas))


def teach_scip_lazy_types(*types) -> None:
    """Pyomo's SCIP interface (``pyomo.contrib.solver``) dispatches on exact node types
    through its private ``_operator_map``: map ``types`` (the lazy named expressions) to the
    handler of Pyomo's own ``ExpressionData``. So does the model observer its persistent
    interface (``scip_persistent``, ``switch="indicator"``) reads the model with
    (``pyomo.contrib.observer.component_collector.collector_handlers``, whose fallback for a
    subclass of a named expression finds no handler): taught likewise. Nothing where an
    interface is absent."""
    try:
        from pyomo.contrib.solver.solvers.scip import base as scip_base
    except ImportError:
        return
    tables = [getattr(scip_base, "_operator_map", None)]
    try:
        from pyomo.contrib.observer import component_collector
    except ImportError:
        pass
    else:
        tables.append(getattr(component_collector, "collector_handlers", None))
    for table in tables:
        handler = None if table is None else table.get(ExpressionData)
        if handler is not None:
            for t in types:
                table.setdefault(t, handler)


# --- persistent solver interfaces: the native model behind them ----------------------------
# Pyomo has no indicator constraint (Pyomo issue #4019): ``switch="indicator"`` sets the
# model on a persistent interface -- the legacy ``gurobi_persistent``
# (pyomo.solvers.plugins.solvers) or the new ``scip_persistent`` (pyomo.contrib.solver) --
# and replaces a big-M row in the native model it built. Both keep the native model in
# ``_solver_model``, the native variable of each Pyomo variable in
# ``_pyomo_var_to_solver_var_map`` and the native constraint of each Pyomo constraint in
# ``_pyomo_con_to_solver_con_map``; the legacy one also the reverse map
# ``_solver_con_to_pyomo_con_map``.


def persistent_native(solver) -> tuple:
    """``(native model, {Pyomo VarData: native variable})`` of a persistent interface set to
    an instance (``set_instance``)."""
    return solver._solver_model, solver._pyomo_var_to_solver_var_map


def persistent_swap(solver, con, native) -> object:
    """Make ``native`` (a constraint just added to the native model) the one that stands for
    the Pyomo constraint ``con`` in the persistent interface's maps, and return the native
    constraint that stood for it (for the caller to delete from the native model). The
    interface's other bookkeeping -- which variables each constraint references (the legacy
    interface loads only referenced variables; the new one deletes a variable no row
    references) -- is left as it was: the indicator constraint references the same
    variables as the row it replaces."""
    cmap = solver._pyomo_con_to_solver_con_map
    old = cmap[con]
    cmap[con] = native
    back = getattr(solver, "_solver_con_to_pyomo_con_map", None)
    if back is not None:
        back.pop(old, None)
        back[native] = con
    return old


# --- the solver factories' registry ---------------------------------------------------------
# Pyomo's solver factories have no hook for a name they do not hold: the new interface's
# ``SolverFactory(name)`` returns None, the legacy one falls back to the ASL and returns an
# ``UnknownSolver``; both look the name up in the factory's registry dict ``_cls`` (``name
# in self._cls``, then ``self._cls[name](**kwds)``). So that a misspelt ``svm_models.<name>``
# is answered with the names registered and a suggestion, the registry of each factory
# (the legacy ``SolverFactory`` and ``LegacySolverFactory`` share one) is replaced, once,
# by :class:`PrefixRegistry`: the same entries, and an answer for a name under the prefix
# that is not one of them. Every other name is looked up as before; iteration (the names
# registered) is unchanged. This is the one Pyomo object the library replaces.


class PrefixRegistry(dict):
    """A factory's registry that also answers the names under ``prefix`` it does not hold:
    ``answer(name)`` in place of a class (called by the factory as ``answer(name)(**kwds)``).
    Membership is true for such a name (the factories test it before the lookup)."""

    def __init__(self, entries, prefix: str, answer) -> None:
        super().__init__(entries)
        self.prefix = prefix
        self.answer = answer

    def _unknown(self, name) -> bool:
        return (isinstance(name, str) and name.startswith(self.prefix)
                and not dict.__contains__(self, name))

    def __contains__(self, name) -> bool:
        return dict.__contains__(self, name) or self._unknown(name)

    def __getitem__(self, name):
        if self._unknown(name):
            return self.answer(name)
        return dict.__getitem__(self, name)


def answer_unknown_names(factories, prefix: str, answer) -> None:
    """Give ``factories`` (Pyomo factories sharing one registry) a :class:`PrefixRegistry`
    holding their entries; nothing when they already have one for ``prefix``."""
    registry = factories[0]._cls
    if isinstance(registry, PrefixRegistry) and registry.prefix == prefix:
        return
    if any(f._cls is not registry for f in factories):
        raise ValueError("the factories do not share one registry")
    new = PrefixRegistry(registry, prefix, answer)
    for f in factories:
        f._cls = new

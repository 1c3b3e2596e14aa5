"""The builder's record of what it built, and the proof that the model still is that.

A builder knows exactly what it created: which variables in which order, which linear rows,
quadratic forms, cones and growing row families, with which matrices. It records that as a
:class:`Record` on the block -- plain data: numpy/scipy arrays, names, and references to the
Pyomo components it made; no callbacks into formulation code. Mutable parameters (``C``,
``lam``) enter the record by name (:class:`Scale`) and are read when the model is solved, as
are variable bounds: changing them needs no rebuild and is never ignored.

The solver layer hands a backend the record's matrices (the *fast path*) only when
:func:`verify` proves the model is what the record says:

* every recorded component is still the one on the block (none deleted or replaced), every
  recorded set has its size;
* the model has exactly one active objective, the recorded one, with its expression and
  sense unchanged;
* every active constraint of the whole model (the block may sit inside a larger model)
  belongs to a recorded constraint, every recorded member is active, present and unchanged;
* every recorded named expression is unchanged (the objective and constraints refer to them);
* no variable is fixed or made discrete; no other active modelling component (SOS,
  logical constraints, disjunctions...) is present.

"Unchanged" is shown member by member: a lazy member (:mod:`svm_models.model.lazy`) is
pristine while it holds its recipe or exactly what the recipe built; any other recorded
member must still hold the very expression object it held when the builder sealed the
record. Anything else sends the solve down the general path, with :func:`verify`'s reason.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from pyomo.core.base.block import Block
from pyomo.core.base.constraint import Constraint
from pyomo.core.base.expression import Expression
from pyomo.core.base.objective import Objective
from pyomo.core.base.param import Param
from pyomo.core.base.set import RangeSet, Set
from pyomo.core.base.var import Var
from pyomo.core.expr.numvalue import value as pyo_value

from .forms import Cone, QuadBlock, QuadRow  # noqa: F401  (QuadRow, Cone: record members)
from .lazy import first_changed, is_lazy_indexed
from .pyomo_compat import (VAR_BOUND_SLOTS, VAR_DOMAIN, VAR_FIXED, held_expression,
                           member_dict)

#: the VarData slots that hold a variable's bounds and domain
_BOUND_SLOTS = VAR_BOUND_SLOTS

#: component types that carry no constraint of their own: allowed anywhere in the model
INERT_TYPES = ("Var", "Param", "Set", "SetOf", "RangeSet", "Expression", "Suffix", "Block",
               "BuildAction", "BuildCheck")


@dataclass(frozen=True)
class Scale:
    """``factor * value(param) ** power``: a coefficient that follows a mutable Param
    (``param`` is the Param's name on the recorded block; None: the factor alone)."""

    factor: float = 1.0
    param: str | None = None
    power: int = 1

    def value(self, block) -> float:
        if self.param is None:
            return self.factor
        return self.factor * float(pyo_value(block.component(self.param))) ** self.power


@dataclass(eq=False)
class LinearTerm:
    """Objective term ``scale * coef' x[index]`` (``coef`` an array or one number)."""

    index: np.ndarray
    coef: Any = 1.0
    scale: Scale = field(default_factory=Scale)


@dataclass(eq=False)
class QuadTerm:
    """Objective term ``scale * x[index]' M x[index]`` (the block's own form)."""

    block: QuadBlock
    scale: Scale = field(default_factory=Scale)


@dataclass(eq=False)
class RowGroup:
    """Rows ``lower <= A x <= upper``: the members ``datas`` of one Constraint; with
    ``scale``, both sides are multiplied by it when the model is solved (a right-hand side
    that follows a mutable Param, such as ``sum beta = lam``)."""

    component: Any
    datas: list
    A: sp.csr_matrix
    lower: np.ndarray
    upper: np.ndarray
    scale: Any = None

    def sides(self, block) -> tuple[np.ndarray, np.ndarray]:
        if self.scale is None:
            return self.lower, self.upper
        s = self.scale.value(block)
        return self.lower * s, self.upper * s


@dataclass(eq=False)
class Record:
    """What a builder built, as data (see the module docstring).

    The objective is ``constant + sum(linear) + sum(quadratic)`` in the model's own
    ``sense`` (+1 minimise, -1 maximise). ``families`` are growing row families
    (:class:`~svm_models.model.families.PairFamily`): their current members are rows of the
    standard form. ``problem_class`` is ``LP``, ``QP``, ``SOCP``, ``QCQP`` or ``NLP``.
    ``scaling`` is the formulation's exact scaling (a
    :class:`~svm_models.model.scaling.ScaleRule`), or None. ``structure`` names a structure
    a backend may solve as such (a :class:`~svm_models.model.forms.DualSVM` for the classic
    duals: libsvm's SMO), or None.
    """

    block: Any
    variables: list
    objective: Any
    sense: int
    linear: list = field(default_factory=list)
    quadratic: list = field(default_factory=list)
    constant: float = 0.0
    rows: list = field(default_factory=list)
    quad_rows: list = field(default_factory=list)
    cones: list = field(default_factory=list)
    families: list = field(default_factory=list)
    problem_class: str = "QP"
    scaling: Any = None
    structure: Any = None
    components: dict = field(default_factory=dict)
    tokens: dict = field(default_factory=dict)
    set_sizes: dict = field(default_factory=dict)
    n_var_datas: int = 0
    extensions: list = field(default_factory=list)
    bound_tokens: list = field(default_factory=list)
    #: the recorded variables the builder declared binary (a mixed-integer formulation): the
    #: only ones :func:`verify` accepts as not continuous
    integers: list = field(default_factory=list)

    def __setstate__(self, state: dict) -> None:
        """Unpickled (or deep-copied, as Pyomo's ``clone`` does): the members recorded in
        :attr:`tokens` are the copy's own objects, at new addresses -- keyed by them again."""
        self.__dict__.update(state)
        self.tokens = {id(d): (d, tok) for d, tok in self.tokens.values()}

    # -- building ---------------------------------------------------------------------
    def seal(self) -> "Record":
        """Take stock when the builder is done: every component it added to the block, the
        expression object each non-lazy recorded member holds, the sizes of the sets."""
        blk = self.block
        self.components = {c.local_name: c for c in blk.component_objects(descend_into=False)}
        self.tokens = {}
        for comp in self.components.values():
            ctype = comp.ctype
            if ctype in (Constraint, Expression, Objective) and not is_lazy_indexed(comp):
                for d in comp.values():
                    if not hasattr(d, "is_pristine"):
                        self.tokens[id(d)] = (d, _token(d))
            elif ctype is Set:
                self.set_sizes[comp.local_name] = len(comp)
        self.n_var_datas = n = sum(len(v) for v in self.variables)
        # the bound and domain objects the builder set: the fast path reads bounds live, but
        # the formulation's post-processing holds only for the bounds it was built with
        vds = self.var_datas()
        self.bound_tokens = [attribute(vds, a) for a in _BOUND_SLOTS]
        # rows recorded before later variables were declared get zero columns for them
        for g in self.rows:
            g.A = _widen(g.A, n)
        for q in self.quad_rows:
            if len(q.linear) < n:
                q.linear = np.concatenate([q.linear, np.zeros(n - len(q.linear))])
        for c in self.cones:
            c.A = _widen(c.A, n)
        return self

    def extension_reason(self) -> str | None:
        """Why the model, though proved to be the record (the fast path is sound), is not
        the formulation any more: row families added after the build, or bounds or domains
        of its variables set by the user (the builder's own bounds may follow their mutable
        parameters, such as C). None when it still is the formulation."""
        if self.extensions:
            return (f"rows were added to the formulation after it was built "
                    f"({', '.join(self.extensions)})")
        vds = self.var_datas()
        for a, before in zip(_BOUND_SLOTS, self.bound_tokens):
            now = attribute(vds, a)
            if not all(map(operator.is_, now, before)):
                k = next(i for i, (p, q) in enumerate(zip(now, before)) if p is not q)
                return f"the bounds or domain of variable {vds[k].name} were changed"
        return None

    def integer_positions(self) -> np.ndarray:
        """Positions, in the layout of :meth:`var_datas`, of the members of the recorded
        integer variables (:attr:`integers`)."""
        ids = {id(v) for v in self.integers}
        out, start = [], 0
        for v in self.variables:
            k = len(v)
            if id(v) in ids:
                out.extend(range(start, start + k))
            start += k
        return np.array(out, dtype=int)

    def var_datas(self) -> list:
        out = []
        for v in self.variables:
            out.extend(members(v))
        return out

    def objective_parts(self):
        """``(c, const, quad_blocks)`` of the objective in the model's own sense, with the
        mutable parameters' current values."""
        n = self.n_var_datas
        c = np.zeros(n)
        blk = self.block
        for t in self.linear:
            c[t.index] += np.asarray(t.coef, dtype=float) * t.scale.value(blk)
        quad = [q.block.scaled(q.scale.value(blk)) for q in self.quadratic]
        return c, float(self.constant), quad

    def objective_value(self, x: np.ndarray) -> float:
        """The objective (model's sense) at ``x`` from the record: the same number as
        ``pyomo.value(objective)`` on a model :func:`verify` accepts, without walking
        (or materialising) the O(l^2) terms of a lazy quadratic form."""
        c, const, quad = self.objective_parts()
        return float(const + c @ x + sum(q.value(x) for q in quad))


def members(comp) -> list:
    """``list(comp.values())``: the members in Pyomo's order (the index set's), read at C
    speed when the members' dict is already in that order, as built over a RangeSet of
    points (10^6 variables: ~30 ms, against ~1 s through the RangeSet's iterator)."""
    if not comp.is_indexed():
        return list(comp.values())
    data, idx = member_dict(comp), comp.index_set()
    r = _as_range(idx)
    if (r is not None and type(data) is dict and len(data) == len(r)
            and all(map(operator.eq, data, r))):
        return list(data.values())
    return list(comp.values())


def _as_range(idx) -> range | None:
    """``idx`` as a Python range when it is a RangeSet of consecutive integers."""
    if not isinstance(idx, RangeSet) or not idx.isfinite():
        return None
    rs = list(idx.ranges())
    if len(rs) != 1:
        return None
    r = rs[0]
    if r.step != 1 or type(r.start) is not int or type(r.end) is not int:
        return None
    return range(r.start, r.end + 1)


def attribute(datas: list, name: str) -> list:
    """``[getattr(d, name) for d in datas]`` at C speed."""
    return list(map(operator.attrgetter(name), datas))


def _widen(A, n: int) -> sp.csr_matrix:
    A = sp.csr_matrix(A)
    if A.shape[1] == n:
        return A
    if A.shape[1] > n:
        raise ValueError(f"a recorded row has {A.shape[1]} columns; the model has {n} variables")
    return sp.hstack([A, sp.csr_matrix((A.shape[0], n - A.shape[1]))], format="csr")


def _token(data):
    """The object a non-lazy member holds: its relational or numeric expression."""
    return held_expression(data)


def unchanged(record: Record, data) -> bool:
    """Whether one recorded member (constraint, named expression, objective) still holds
    what the builder gave it."""
    return _unchanged(record, data) and getattr(data, "active", True)


def _unchanged(record: Record, data) -> bool:
    pristine = getattr(data, "is_pristine", None)
    if pristine is not None:
        return pristine
    return _token(data) is recorded_token(record, data)


def recorded_token(record: Record, data):
    """The expression object the recorded member ``data`` held when the builder was done, or
    :data:`NOT_RECORDED` (``data`` not recorded). The record keys its members by
    ``id``, and an ``id`` is an address the interpreter reuses: the entry holds the member
    itself and is taken only for that very object (an unpickled model's members have new
    addresses -- :meth:`Record.__setstate__` keys them again -- and a new object at an old
    address is another member: its entry was read as the objective's, a TypeError)."""
    entry = record.tokens.get(id(data))
    return entry[1] if entry is not None and entry[0] is data else NOT_RECORDED


#: what :func:`recorded_token` returns for a member the record does not hold
NOT_RECORDED = object()


def _modelling_components(model):
    """Active components of any type other than variables, parameters, sets, named
    expressions, suffixes and blocks: the things that constrain or score a model."""
    for comp in model.component_objects(active=True, descend_into=True):
        if comp.ctype.__name__ not in INERT_TYPES:
            yield comp


def verify(record: Record) -> str | None:
    """``None`` when the model is proved to be what ``record`` says, else the reason."""
    blk = record.block
    comps = record.components
    for name, comp in comps.items():
        if blk.component(name) is not comp:
            return f"component {name!r} was deleted or replaced"
    for name, size in record.set_sizes.items():
        if len(comps[name]) != size:
            return f"set {name!r} was changed ({len(comps[name])} members, built with {size})"
    model = blk.model()
    recorded = {id(c) for c in comps.values()}
    objective_seen = False
    for comp in _modelling_components(model):
        ctype = comp.ctype
        if ctype is Objective:
            for od in comp.values():
                if not od.active:
                    continue
                if od is not record.objective:
                    return f"objective {od.name!r} is not the one the builder made"
                objective_seen = True
        elif ctype is Constraint:
            if id(comp) not in recorded:
                return f"constraint {comp.name!r} is not part of the recorded model"
        else:
            return f"{ctype.__name__} {comp.name!r} is not part of the recorded model"
    obj = record.objective
    if not objective_seen or not obj.active:
        return "the builder's objective is not the model's active objective"
    if (1 if obj.sense == 1 else -1) != record.sense:
        return "the objective's sense was changed"
    if not _unchanged(record, obj):
        return "the objective expression was changed"
    for comp in comps.values():
        ctype = comp.ctype
        if ctype is Constraint:
            if not comp.active:
                return f"recorded constraint {comp.name!r} was deactivated"
            members = comp.values()
            if is_lazy_indexed(comp):   # one pass at C speed; the loop below names the culprit
                members = first_changed(comp, constraint=True)
            for d in members:
                if not d.active:
                    return f"recorded constraint {d.name!r} was deactivated"
                if not _unchanged(record, d):
                    return f"constraint {d.name!r} was changed"
        elif ctype is Expression:
            members = first_changed(comp) if is_lazy_indexed(comp) else comp.values()
            for d in members:
                if not _unchanged(record, d):
                    return f"expression {d.name!r} was changed"
    reason = _check_sizes(record)
    if reason is not None:
        return reason
    return _check_variables(record)


def _check_sizes(record: Record) -> str | None:
    """Constraint families have exactly the recorded members (none added or removed)."""
    counts: dict[int, int] = {}
    for g in record.rows:
        counts[id(g.component)] = counts.get(id(g.component), 0) + len(g.datas)
    for q in record.quad_rows:
        comp = q.data.parent_component()
        counts[id(comp)] = counts.get(id(comp), 0) + 1
    for c in record.cones:
        comp = c.data.parent_component()
        counts[id(comp)] = counts.get(id(comp), 0) + 1
    for f in record.families:
        counts[id(f.component)] = counts.get(id(f.component), 0) + f.size
    for comp in record.components.values():
        if comp.ctype is Constraint:
            expected = counts.get(id(comp), 0)
            if len(comp) != expected:
                return (f"constraint {comp.name!r} has {len(comp)} members; the record has "
                        f"{expected}")
    return None


def _check_variables(record: Record) -> str | None:
    vds = record.var_datas()
    n = len(vds)
    if any(map(operator.attrgetter(VAR_FIXED), vds)):
        vd = next(vd for vd in vds if vd.fixed)
        return f"variable {vd.name} is fixed"
    doms = attribute(vds, VAR_DOMAIN)
    runs = [0] + [k + 1 for k, same in enumerate(map(operator.is_, doms[1:], doms[:-1]))
                  if not same] if n else []
    integer = set(record.integer_positions().tolist()) if record.integers else ()
    for k in runs:
        if not vds[k].is_continuous() and k not in integer:
            return f"variable {vds[k].name} is not continuous"
    if record.integers:   # a recorded integer variable made continuous: its relaxation
        for k in integer:
            if vds[k].is_continuous():
                return f"variable {vds[k].name} is not integer any more (a relaxation)"
    if n != record.n_var_datas:
        return "variables were added to a recorded variable"
    return None


# Pyomo types used by name in INERT_TYPES (imported so a rename in Pyomo fails loudly here)
_ = (Block, Param, Var)

"""Pyomo components whose expressions are created only when something reads them, and that
can prove they were never changed.

An SVM's quadratic form ``a'G(K)a`` has l^2/2 terms and its margin constraints l rows of
up to l terms; building them as Pyomo objects costs about a microsecond a term, walking them
again in a solver interface ten times that. The classes here are ordinary Pyomo component
data (subclasses of Pyomo's ``ExpressionData`` and ``ConstraintData``) that hold a *recipe*
instead of an expression: the first read (by a solver interface, a writer, ``pprint``,
``value``, ``clone``...) runs the recipe and stores the result, after which the object is an
ordinary named expression or constraint. The Pyomo model is therefore complete and correct
for every consumer, while the fast path of :mod:`svm_models.solvers`, which reads the
builder's record instead, never pays for the terms.

Each member also keeps the object its recipe built: :attr:`is_pristine` is True while the
recipe is pending or the member still holds exactly what the recipe built. Any ``set_value``
(or assignment of ``expr``) by a user replaces that object and the member is no longer
pristine: that is how the record proves, member by member, that the model is what the
builder made (:mod:`svm_models.model.record`).

A recipe is a module-level function plus its arguments (never a closure), so that
``clone()`` and pickling, which first materialise the expression, stay correct.
"""

from __future__ import annotations

import operator
import weakref

from collections.abc import Mapping

import numpy as np
from pyomo.common.gc_manager import PauseGC
from pyomo.core.base.constraint import ConstraintData, IndexedConstraint, ScalarConstraint
from pyomo.core.base.expression import ExpressionData, IndexedExpression, ScalarExpression
from pyomo.core.base.objective import ObjectiveSense, ScalarObjective
from pyomo.core.base.param import IndexedParam
from pyomo.core.expr.numeric_expr import (
    LinearExpression,
    MonomialTermExpression,
    PowExpression,
    ProductExpression,
    SumExpression,
)

from .pyomo_compat import ARGS_SLOT as _ARGS_SLOT
from .pyomo_compat import CON_ACTIVE
from .pyomo_compat import EXPR_SLOT as _EXPR_SLOT
from .pyomo_compat import OBJ_ARGS_SLOT as _OBJ_ARGS_SLOT
from .pyomo_compat import init_member, member_dict, member_index, teach_scip_lazy_types


_TAUGHT: list = []   # non-empty once the solver interfaces know the lazy types


def teach_solvers() -> None:
    """Once, when the first lazy component is constructed or unpickled, and before every SCIP
    solve (not at import): Pyomo's SCIP interface dispatches on exact node types, so it is
    taught the lazy named expressions
    (:func:`~svm_models.model.pyomo_compat.teach_scip_lazy_types`) -- also for a user who
    calls ``SolverFactory("scip_direct")`` on a built or loaded model."""
    if not _TAUGHT:
        teach_scip_lazy_types(LazyExpressionData, LazyScalarExpression)
        _TAUGHT.append(True)


def _lazy_attribute(slot, store):
    """A property over ``slot`` that first builds the value from ``self._recipe`` and
    remembers what it built in ``self._built``; assigning the property drops the recipe and
    keeps what was built (the member is pristine again only if given that very object back;
    :mod:`~svm_models.model.mixed` reads the record for it when a user's objective extends
    it)."""

    def get(self):
        recipe = self._recipe
        if recipe is not None:
            self._recipe = None
            if recipe is _PENDING:   # a member of an indexed component: its recipe by index
                recipe = self.parent_component()._lazy_recipe(member_index(self))
            fn, args = recipe
            store(self, fn(*args))
            self._built = slot.__get__(self)
        return slot.__get__(self)

    def put(self, value):
        self._recipe = None
        slot.__set__(self, value)

    return property(get, put)


#: the ``_recipe`` of an indexed component's member that has not been built: the component's
#: ``recipe(index)`` is called only then (creating a member costs no recipe call)
_PENDING = type("Pending", (), {"__repr__": lambda self: "<pending recipe>"})()


def _store_args(self, expr):
    _ARGS_SLOT.__set__(self, (expr,))


def _store_objective(self, expr):
    _OBJ_ARGS_SLOT.__set__(self, (expr,))


class _Proof:
    """What the lazy classes share: materialisation state and the proof of no change.

    Each class names ``_lazy = (slot, attribute)``: the Pyomo slot its recipe fills and the
    lazy attribute over it."""

    __slots__ = ()
    _lazy: tuple = ()

    def __setstate__(self, state):
        teach_solvers()   # a model loaded in a fresh process was never constructed here
        super().__setstate__(state)

    @property
    def is_materialised(self) -> bool:
        """False until the expression has been built."""
        return self._recipe is None

    @property
    def is_pristine(self) -> bool:
        """True while the member is what its recipe builds (pending, or built and kept)."""
        slot = self._lazy[0]
        return self._recipe is not None or (
            self._built is not None and slot.__get__(self) is self._built)

    def __getstate__(self):
        getattr(self, self._lazy[1])  # materialise: a copy must not share the recipe
        return super().__getstate__()


class LazyExpressionData(_Proof, ExpressionData):
    """An ``ExpressionData`` that builds its expression from ``recipe`` on first access."""

    __slots__ = ("_recipe", "_built")  # members are made by LazyExpression._member

    _args_ = _lazy_attribute(_ARGS_SLOT, _store_args)
    _lazy = (_ARGS_SLOT, "_args_")


class _LazyIndexed:
    """What the indexed lazy components share: a recipe per index, members created at
    construction (and by :meth:`add_lazy` for indices added later)."""

    def __init__(self, index_set, *, recipe, keys=None, doc=None, name=None):
        super().__init__(index_set, doc=doc, name=name)
        self._lazy_recipe = recipe
        self._keys = keys

    def construct(self, data=None):
        if self._constructed:
            return
        teach_solvers()
        self._constructed = True
        keys, self._keys = self._keys, None
        if keys is None or len(keys) != len(self.index_set()):
            keys = self.index_set()
        self.add_lazy(keys)

    def add_lazy(self, indices) -> None:
        """New lazy members for ``indices`` (already in the index set); each calls the
        component's ``recipe(index)`` when first read."""
        new, ref, data = self._member, weakref.ref(self), member_dict(self)
        with PauseGC():  # l new objects, none of them garbage: no collection passes meanwhile
            for idx in indices:
                data[idx] = new(ref, idx)

    def __getstate__(self):
        state = super().__getstate__()
        # recipes are closures over the original block (Pyomo's state: a dict, or the slots
        # in a list ending with the instance dict)
        (state if isinstance(state, dict) else state[-1])["_lazy_recipe"] = None
        return state


class LazyExpression(_LazyIndexed, IndexedExpression):
    """An indexed ``Expression`` whose members are :class:`LazyExpressionData`.

    ``recipe(index)`` returns ``(function, args)``; ``function(*args)`` builds the member.
    ``keys``: optionally the keys of another component over the same index set, whose
    objects the members' keys then share (a million int keys cost 32 MB per component).
    """

    @staticmethod
    def _member(ref, idx):
        m = _NEW_EXPR(LazyExpressionData)
        _ARGS_SLOT.__set__(m, (None,))
        init_member(m, ref, idx)
        m._built = None
        m._recipe = _PENDING
        return m


class _LazyScalar(_Proof):
    """What the scalar lazy components share: the recipe ``(function, args)`` is installed
    when the component is constructed (on the block), and runs on first access."""

    def __init__(self, *, recipe, doc=None, name=None):
        self._recipe = None
        self._built = None
        super().__init__(doc=doc, name=name)
        self._pending = recipe

    def construct(self, data=None):
        if self._constructed:
            return
        teach_solvers()
        super().construct(data)          # no rule: nothing set yet
        recipe, self._pending = self._pending, None
        self._install(recipe)

    def _install(self, recipe) -> None:
        self._recipe = recipe


class LazyScalarExpression(_LazyScalar, ScalarExpression):
    """A scalar ``Expression`` built from ``recipe = (function, args)`` on first access."""

    _args_ = _lazy_attribute(_ARGS_SLOT, _store_args)
    _lazy = (_ARGS_SLOT, "_args_")


class LazyObjective(_LazyScalar, ScalarObjective):
    """A scalar ``Objective`` whose expression is built from ``recipe = (function, args)``
    on first access (a writer, ``expr``, ``value``, ``pprint``...), then kept.

    An SVM's objective has a linear sum over its l points (``sum alpha_i``,
    ``C sum xi_i``): l Python term objects that the fast path never reads."""

    def __init__(self, *, recipe, sense, doc=None, name=None):
        super().__init__(recipe=recipe, doc=doc, name=name)
        self._pending_sense = ObjectiveSense(sense)

    def _install(self, recipe) -> None:
        member_dict(self)[None] = self
        self._sense = self._pending_sense
        self._recipe = recipe

    _args_ = _lazy_attribute(_OBJ_ARGS_SLOT, _store_objective)
    _lazy = (_OBJ_ARGS_SLOT, "_args_")


class LazyScalarConstraint(_LazyScalar, ScalarConstraint):
    """A scalar ``Constraint`` whose relational expression is built from
    ``recipe = (function, args)`` on first access, then kept (``balance: y'alpha = 0``
    has l terms)."""

    def _install(self, recipe) -> None:
        member_dict(self)[None] = self
        self._recipe = recipe

    _expr = _lazy_attribute(_EXPR_SLOT, ConstraintData.set_value)
    _lazy = (_EXPR_SLOT, "_expr")


class LazyConstraintData(_Proof, ConstraintData):
    """A ``ConstraintData`` whose relational expression is built from ``recipe`` on first
    access (by ``expr``, ``body``, ``lower``, ``upper``, a writer, ``pprint``...), then kept:
    from then on it is an ordinary constraint. ``active``, ``name`` and ``index()`` need no
    expression."""

    __slots__ = ("_recipe", "_built")  # members are made by LazyConstraint._member

    _expr = _lazy_attribute(_EXPR_SLOT, ConstraintData.set_value)
    _lazy = (_EXPR_SLOT, "_expr")


class LazyConstraint(_LazyIndexed, IndexedConstraint):
    """An indexed ``Constraint`` whose members are :class:`LazyConstraintData`.

    ``recipe(index)`` returns ``(function, args)``; ``function(*args)`` returns the member's
    relational expression (``<=``, ``>=``, ``==`` or a tuple). :meth:`add_lazy` appends
    members after construction (a growing family of rows). ``keys`` as for
    :class:`LazyExpression`.
    """

    @staticmethod
    def _member(ref, idx):
        m = _NEW_CON(LazyConstraintData)
        init_member(m, ref, idx, active=True)
        _EXPR_SLOT.__set__(m, None)
        m._built = None
        m._recipe = _PENDING
        return m


_NEW_EXPR = LazyExpressionData.__new__
_NEW_CON = LazyConstraintData.__new__


def is_lazy_indexed(comp) -> bool:
    """Whether ``comp`` is an indexed lazy component (its members all lazy)."""
    return isinstance(comp, _LazyIndexed)


def first_changed(comp, *, constraint: bool = False) -> list:
    """The members of the lazy indexed ``comp`` that are not pristine (or, for constraints,
    not active), at most the first: an empty list when every member is as built. Pending
    members are checked by one attribute read each."""
    data = member_dict(comp).values()
    active = operator.attrgetter(CON_ACTIVE)
    if constraint:
        ok = all(active(d) and d._recipe is not None for d in data)
    else:
        ok = all(d._recipe is not None for d in data)
    if not ok:
        for d in data:
            if (constraint and not active(d)) or not d.is_pristine:
                return [d]
    return []


# ---------------------------------------------------------------------------------------
# A parameter whose values live in an array


class _ArrayValues(Mapping):
    """The read-only mapping ``i -> float(values[i])``, ``i`` in ``range(len(values))``:
    what an immutable Param keeps in its ``_data`` dict, without an entry per index."""

    __slots__ = ("array",)

    def __init__(self, values: np.ndarray):
        self.array = values

    def __getitem__(self, i):
        # a dict's semantics: any key equal to an integer index finds it (1.0, True, np.int64)
        try:
            j = int(i)
            found = j == i and 0 <= j < len(self.array)
        except (TypeError, ValueError, OverflowError):
            found = False
        if not found:
            raise KeyError(i)
        return float(self.array[j])

    def __contains__(self, i):
        try:
            self[i]
        except KeyError:
            return False
        return True

    def __len__(self):
        return len(self.array)

    def __iter__(self):
        return iter(range(len(self.array)))

    def keys(self):
        return range(len(self.array))

    def values(self):
        return iter(self.array.tolist())

    def items(self):
        return zip(range(len(self.array)), self.array.tolist())

    def __reduce__(self):
        return (_ArrayValues, (self.array,))

    def __deepcopy__(self, memo):
        return self          # read-only, over a read-only array


class ArrayParam(IndexedParam):
    """An immutable indexed ``Param`` over ``range(len(values))`` (a RangeSet) whose values
    are the read-only array ``values``: ``p[i]`` is ``float(values[i])``, as with any
    immutable Param, but no dict entry is made per index (a label per point at l = 10^6
    would cost ~110 MB)."""

    def __init__(self, index_set, *, values: np.ndarray, doc=None, name=None):
        super().__init__(index_set, doc=doc, name=name)
        self._array = values

    def construct(self, data=None):
        if self._constructed:
            return
        super().construct(data)
        self._data = _ArrayValues(self._array)

    def is_reference(self) -> bool:
        return False     # it owns its data (Pyomo takes a non-dict ``_data`` for a reference)


# ---------------------------------------------------------------------------------------
# Bulk term builders: direct construction of Pyomo's expression nodes (no operator
# overloading, no simplification passes), which is several times faster than ``sum(...)``.


def linear_form(coefs, variables, constant: float = 0.0):
    """``constant + sum_k coefs[k] * variables[k]`` as one ``LinearExpression``."""
    args = [MonomialTermExpression((float(c), v)) for c, v in zip(coefs, variables) if c != 0.0]
    if constant:
        args.insert(0, float(constant))
    if not args:
        return LinearExpression([0.0])
    return LinearExpression(args)


def dense_quadratic_form(M, variables):
    """``v' M v`` for a dense symmetric ``M`` (upper triangle, off-diagonals doubled)."""
    M = np.asarray(M)   # (a lazily evaluated kernel matrix: the whole of it, once)
    n = len(variables)
    terms = []
    append = terms.append
    for i in range(n):
        vi = variables[i]
        row = M[i]
        mii = float(row[i])
        if mii != 0.0:
            append(ProductExpression((MonomialTermExpression((mii, vi)), vi)))
        for j in range(i + 1, n):
            mij = float(row[j])
            if mij != 0.0:
                append(ProductExpression((MonomialTermExpression((2.0 * mij, vi)), variables[j])))
    return SumExpression(terms) if terms else LinearExpression([0.0])


def diagonal_quadratic_form(diag, variables):
    """``sum_k diag[k] * v_k^2``."""
    # v**2 terms: Pyomo's standard_repn (used by the HiGHS interface) mishandles products of
    # variables under a mutable-parameter multiplier such as ``0.5 * C * xi_sq``; powers work.
    terms = [PowExpression((v, 2)) if c == 1.0 else ProductExpression((float(c), PowExpression((v, 2))))
             for c, v in zip(diag, variables) if c != 0.0]
    return SumExpression(terms) if terms else LinearExpression([0.0])

"""Named Pyomo expressions whose terms are created only when something reads them.

An SVM's quadratic form ``a'G(K)a`` has l^2/2 terms; building them as Pyomo objects costs
about a microsecond each, and walking them again in a solver interface ten times that. The
:class:`LazyExpression` component is an ordinary indexed Pyomo ``Expression`` whose data
objects (:class:`LazyExpressionData`, a subclass of Pyomo's ``ExpressionData``) hold a recipe
instead of an expression: the first read of the expression (by a solver interface, a writer,
``pprint``, ``value``, ``clone``...) runs the recipe and stores the result, after which the
object is indistinguishable from a plain named expression. So the Pyomo model stays complete
and correct for every consumer, while the fast path of :mod:`svm_models.solvers` -- which
reads the builder's matrices instead -- never pays for the terms.

A recipe is a module-level function plus its arguments (not a closure), so that ``clone()``
and pickling, which first materialise the expression, stay correct.
"""

from __future__ import annotations

import weakref

from pyomo.common.gc_manager import PauseGC
from pyomo.core.base.constraint import ConstraintData, IndexedConstraint
from pyomo.core.base.expression import ExpressionData, IndexedExpression, ScalarExpression
from pyomo.core.expr.numeric_expr import (
    LinearExpression,
    MonomialTermExpression,
    PowExpression,
    ProductExpression,
    SumExpression,
)

_ARGS_SLOT = ExpressionData.__dict__["_args_"]


def _lazy_attribute(slot, store):
    """A property over ``slot`` that first builds the value from ``self._recipe``.

    ``store(self, built)`` puts a freshly built expression in place; assigning the property
    drops the recipe. Shared by the lazy expression and constraint classes below.
    """

    def get(self):
        recipe = self._recipe
        if recipe is not None:
            self._recipe = None
            fn, args = recipe
            store(self, fn(*args))
        return slot.__get__(self)

    def put(self, value):
        self._recipe = None
        slot.__set__(self, value)

    return property(get, put)


def _store_args(self, expr):
    _ARGS_SLOT.__set__(self, (expr,))



class LazyExpressionData(ExpressionData):
    """An ``ExpressionData`` that builds its expression from ``recipe`` on first access."""

    __slots__ = ("_recipe",)

    def __init__(self, recipe, component=None):
        self._recipe = None
        ExpressionData.__init__(self, None, component)
        self._recipe = recipe

    _args_ = _lazy_attribute(_ARGS_SLOT, _store_args)

    @property
    def is_materialised(self) -> bool:
        """False until the expression has been built."""
        return self._recipe is None

    def __getstate__(self):
        self._args_  # materialise: a copy must not share a recipe bound to the original
        return super().__getstate__()


class LazyExpression(IndexedExpression):
    """An indexed ``Expression`` whose members are :class:`LazyExpressionData`.

    ``recipe(index)`` must return ``(function, args)``; ``function(*args)`` builds the Pyomo
    expression of that member.
    """

    def __init__(self, index_set, *, recipe, doc=None, name=None):
        super().__init__(index_set, doc=doc, name=name)
        self._lazy_recipe = recipe

    def construct(self, data=None):
        if self._constructed:
            return
        self._constructed = True
        recipe = self._lazy_recipe
        self._lazy_recipe = None
        with PauseGC():  # l new objects, none of them garbage: no collection passes meanwhile
            for idx in self.index_set():
                self._data[idx] = LazyExpressionData(recipe(idx), component=self)


_EXPR_SLOT = ConstraintData.__dict__["_expr"]


class LazyConstraintData(ConstraintData):
    """A ``ConstraintData`` whose relational expression is built from ``recipe`` on first
    access (by ``expr``, ``body``, ``lower``, ``upper``, a writer, ``pprint``...), then kept:
    from then on it is an ordinary constraint. ``active``, ``name`` and ``index()`` need no
    expression."""

    __slots__ = ("_recipe",)

    def __init__(self, recipe, component=None, index=None):
        self._component = component
        self._active = True
        self._index = index
        _EXPR_SLOT.__set__(self, None)
        self._recipe = recipe

    _expr = _lazy_attribute(_EXPR_SLOT, ConstraintData.set_value)

    @property
    def is_materialised(self) -> bool:
        """False until the relational expression has been built."""
        return self._recipe is None

    def __getstate__(self):
        self._expr  # materialise: a copy must not share a recipe bound to the original
        return super().__getstate__()


class LazyConstraint(IndexedConstraint):
    """An indexed ``Constraint`` whose members are :class:`LazyConstraintData`.

    ``recipe(index)`` must return ``(function, args)``; ``function(*args)`` returns the member's
    relational expression (``<=``, ``>=``, ``==`` or a tuple). Building the l members costs
    a small constant each; the expressions are created only when something reads them (never
    on the fast path of :mod:`svm_models.solvers`, which reads the builder's matrices).
    """

    def __init__(self, index_set, *, recipe, doc=None, name=None):
        super().__init__(index_set, doc=doc, name=name)
        self._lazy_recipe = recipe

    def construct(self, data=None):
        if self._constructed:
            return
        self._constructed = True
        recipe = self._lazy_recipe
        self._lazy_recipe = None
        comp = weakref.ref(self)
        with PauseGC():
            for idx in self.index_set():
                self._data[idx] = LazyConstraintData(recipe(idx), component=comp, index=idx)


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


class LazyScalarExpression(ScalarExpression):
    """A scalar ``Expression`` built from ``recipe = (function, args)`` on first access."""

    def __init__(self, *, recipe, doc=None, name=None):
        self._recipe = None
        super().__init__(doc=doc, name=name)
        self._pending = recipe

    def construct(self, data=None):
        if self._constructed:
            return
        super().construct(data)
        self._recipe = self._pending
        self._pending = None

    _args_ = _lazy_attribute(_ARGS_SLOT, _store_args)

    @property
    def is_materialised(self) -> bool:
        return self._recipe is None

    def __getstate__(self):
        self._args_
        return super().__getstate__()

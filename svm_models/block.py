"""An SVM as a Pyomo block type: :class:`SVMBlock` (the idiom of OMLT's ``OmltBlock``).

::

    m = pyo.ConcreteModel()
    m.svm = svm_models.SVMBlock()
    m.svm.build("soft_l1_dual", X, y, C=1.0)        # svm_models.build(..., block=m.svm)
    svm_models.solve(m, "piqp")                      # or any Pyomo solver on the whole model
    m.svm.solution()                                 # svm_models.extract(m.svm)

    m.svms = svm_models.SVMBlock(["a", "b"])         # one SVM per class or per data set
    m.svms["a"].build(...); m.svms["b"].build(...)

The block is an ordinary Pyomo block (:func:`~pyomo.core.base.block.declare_custom_block`):
it holds what :func:`svm_models.build` fills it with -- the same components, the same record
-- and nothing else. Building is :func:`svm_models.build` itself (``SVMBlockData.build``
calls it with ``block=self``); solving and reading the solution are
:func:`svm_models.solve` and :func:`svm_models.extract`.

What the block adds: the builder's record survives ``model.clone()`` and pickling, so a copy
is solved on the fast path as the original is. The record proves the model unchanged by
object identity -- each recorded constraint, expression and objective member still holds the
expression object the builder gave it (the record keys them by ``id`` of the member), each
variable the bound and domain objects it was built with -- and neither ids nor the identity
of numbers survive a copy. On the way out (Pyomo's ``__getstate__``, used by ``clone`` and
``pickle`` alike) the block keeps, for each member that still holds what the builder gave
it, the pair (member, expression): a copy copies both together, so the copy's member holds
the copy of that very expression until someone changes it. Bounds and domains travel as the
objects the builder set; a plain number compares by value in the copy (pickling makes a new
float). A member or bound changed before the copy -- or in the copy, before its first solve
-- is changed in the copy.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from pyomo.core.base.block import BlockData, declare_custom_block
from pyomo.core.base.constraint import Constraint
from pyomo.core.base.expression import Expression
from pyomo.core.base.objective import Objective

from . import api
from .errors import ParameterError
from .model.lazy import is_lazy_indexed
from .model.pyomo_compat import VAR_BOUND_SLOTS, held_expression
from .model.record import NOT_RECORDED, attribute, recorded_token


def _same_bound(now, built) -> bool:
    """Whether a copy's bound (or domain) ``now`` is the builder's ``built``: the same object,
    or the same plain number (a float is not the same object after pickling)."""
    return now is built or (type(built) in (int, float) and type(now) is type(built)
                            and now == built)


class _Portable:
    """A :class:`~svm_models.model.built.BuiltSVM` on its way through ``clone`` or
    ``pickle``: its record without the proofs that do not survive a copy (``tokens``, keyed
    by member ids; ``bound_tokens``), and in their place ``as_built``, the pairs (member,
    the expression the builder gave it) of the members that still hold it, and ``bounds``,
    the builder's bound and domain objects per slot. :meth:`restore` makes the copy's proofs
    on first use (Pyomo restores a block's state before its variables')."""

    __slots__ = ("built", "as_built", "bounds")

    def __init__(self, built, as_built: list, bounds: list):
        self.built, self.as_built, self.bounds = built, as_built, bounds

    def __getstate__(self):
        return (self.built, self.as_built, self.bounds)

    def __setstate__(self, state):
        self.built, self.as_built, self.bounds = state

    @classmethod
    def of(cls, built) -> "_Portable":
        record = built.record
        as_built = []
        for comp in record.components.values():
            if comp.ctype in (Constraint, Expression, Objective) and not is_lazy_indexed(comp):
                for d in comp.values():
                    token = recorded_token(record, d)
                    if token is not NOT_RECORDED and held_expression(d) is token:
                        as_built.append((d, token))
        # a shallow copy: the original record keeps its own proofs
        portable = copy.copy(record)
        portable.tokens, portable.bound_tokens = {}, []
        return cls(replace(built, record=portable), as_built, list(record.bound_tokens))

    def restore(self):
        built = self.built
        record = built.record
        record.tokens = {id(d): (d, token) for d, token in self.as_built}
        vds = record.var_datas()
        record.bound_tokens = [
            [now if _same_bound(now, b) else b for now, b in zip(attribute(vds, slot), kept)]
            for slot, kept in zip(VAR_BOUND_SLOTS, self.bounds)]
        return built


def _portable(encode: bool, value):
    """Pyomo's field mapper (``__autoslot_mappers__``) for the block's built SVM: encoded
    for ``__getstate__`` (clone, pickle), kept encoded by ``__setstate__`` until first use."""
    if encode and value is not None and not isinstance(value, _Portable):
        return _Portable.of(value)
    return value


@declare_custom_block(name="SVMBlock")
class SVMBlockData(BlockData):
    """One SVM in a Pyomo model: ``m.svm = SVMBlock()``, then ``m.svm.build(name, X, y,
    **params)``. Indexed (``SVMBlock(["a", "b"])``), one SVM per index.

    ``build`` is :func:`svm_models.build` with ``block=`` this block; ``formulation`` the
    name it was built as (None before); ``solve`` is :func:`svm_models.solve` of this block
    (which must then be the whole problem: a block beside other active constraints is
    refused -- solve the model holding it, or deactivate them); ``extract`` /
    ``solution()`` read the Solution from the block's values after any solve
    (:func:`svm_models.extract`). Several SVMs in one model are solved one at a time
    (deactivate the others) or together (their objectives summed into one, the SVMs'
    own deactivated), then extracted one by one.
    """

    __autoslot_mappers__ = {"_svm_built": _portable}

    # -- what the builder leaves (api.build's ``block._svm``) --------------------------
    @property
    def _svm(self):
        built = self.__dict__.get("_svm_built")
        if isinstance(built, _Portable):   # a copy's first use: prove its members
            built = built.restore()
            self.__dict__["_svm_built"] = built
        return built

    @_svm.setter
    def _svm(self, value):
        self.__dict__["_svm_built"] = value

    # -- the API -----------------------------------------------------------------------
    def build(self, formulation: str, X, y, **params) -> "SVMBlockData":
        """Fill this block with formulation ``formulation`` for data (X, y): exactly
        :func:`svm_models.build` ``(formulation, X, y, block=self, **params)``. Returns the
        block. A block holds one SVM: built twice is a ParameterError; a build that fails
        leaves the block as it was."""
        before = {c.local_name for c in self.component_objects(descend_into=False)}
        had = self._svm
        try:
            api.build(formulation, X, y, block=self, **params)
        except BaseException:
            # (a builder may fail after adding components: C=-1 left the points' set and
            # labels, and a second try met Pyomo's "component already defined")
            for c in list(self.component_objects(descend_into=False)):
                if c.local_name not in before:
                    self.del_component(c)
            if had is None:
                self._svm = None
            raise
        return self

    @property
    def is_built(self) -> bool:
        return self._svm is not None

    @property
    def formulation(self) -> str | None:
        """The registered name of the formulation built here (None before ``build``)."""
        built = self._svm
        return None if built is None else built.formulation

    def _need_built(self, what: str) -> None:
        if self._svm is None:
            raise ParameterError(
                f"SVMBlock {self.name!r} holds no SVM yet: call "
                f"{self.name}.build(formulation, X, y, **params) before {what}")

    def solve(self, solver: str = "auto", **options):
        """:func:`svm_models.solve` of this block: its Solution."""
        self._need_built("solving it")
        return api.solve(self, solver, **options)

    def extract(self, *, solver: str = "", duals=None, tol=None):
        """The Solution of this block from its variables' values, after a solve by anything
        (:func:`svm_models.extract`; ``duals``, ``tol`` as there)."""
        self._need_built("extracting a solution")
        return api.extract(self, solver=solver, duals=duals, tol=tol)

    def solution(self):
        """The Solution the block's variables hold now (``extract()`` with its defaults)."""
        return self.extract()

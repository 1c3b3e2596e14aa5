"""Row families over pairs of points, given by index arrays, that grow between solves.

The radius-margin SVMs have one constraint per pair of points (O(l^2) of them), and an exact
constraint-generation method that starts from a few pairs and adds the most violated ones
between warm re-solves. A :class:`PairFamily` describes such a family as data -- no callback
into formulation code: for pair ``k = (i, j)`` the row is

.. math::

    \\text{lower} \\le \\sum_t c_t \\, (P_t[i] \\circ Q_t[j]) \\cdot x[\\text{cols}]
                       + \\text{fixed} \\cdot x \\le \\text{upper},

where each ``P_t``, ``Q_t`` is an ``l x m`` array over the ``m`` columns ``cols`` (None
means ones): ``(x_i - x_j)^2`` elementwise is ``x_i^2 + x_j^2 - 2 x_i x_j``, three terms;
``b_i + b_j`` is two. The Pyomo side is a :class:`~svm_models.model.lazy.LazyConstraint`
indexed by the pair numbers ``0..size-1`` (a Set that grows); :meth:`PairFamily.append`
adds pairs to both the model and the record, so the record still proves the model and the
solve stays on the fast path. Any other change to the family's members is a user change
(:func:`~svm_models.model.record.verify` sees it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from .lazy import LazyConstraint, linear_form


@dataclass(eq=False)
class PairFamily:
    """Rows over the pairs ``(I[k], J[k])``; see the module docstring.

    ``terms``: list of ``(c, P, Q)``; ``cols``: the layout positions of the ``m`` columns;
    ``fixed``: a dense row over all ``n`` variables added to every row (e.g. ``-r``);
    ``variables``: the variable data in layout order (for the Pyomo expressions)."""

    component: object
    index_set: object
    record: object
    cols: np.ndarray
    terms: list
    fixed: np.ndarray
    lower: float
    upper: float
    variables: list
    I: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    J: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))

    @property
    def size(self) -> int:
        return int(self.I.size)

    def coefficients(self, I, J) -> np.ndarray:
        """Dense ``len(I) x m`` coefficients of the pair rows on ``cols``."""
        out = np.zeros((len(I), len(self.cols)))
        for c, P, Q in self.terms:
            out += c * (1.0 if P is None else P[I]) * (1.0 if Q is None else Q[J])
        return out

    def linear_rows(self, n: int):
        """``(A, lower, upper, datas)`` of the current members, for the standard form."""
        if self.size == 0:
            return None
        coef = self.coefficients(self.I, self.J)
        A = sp.csr_matrix((coef.ravel(), (np.repeat(np.arange(self.size), len(self.cols)),
                                          np.tile(self.cols, self.size))), shape=(self.size, n))
        A = A + sp.csr_matrix(np.tile(self.fixed[:n], (self.size, 1)))
        datas = [self.component[k] for k in range(self.size)]
        return (A.tocsr(), np.full(self.size, self.lower), np.full(self.size, self.upper), datas)

    def quad_rows(self, n: int) -> list:
        return []

    def append(self, I, J) -> np.ndarray:
        """Add the pairs ``(I[k], J[k])`` to the model and the record; returns their numbers."""
        I, J = np.asarray(I, dtype=int).ravel(), np.asarray(J, dtype=int).ravel()
        if I.shape != J.shape:
            raise ValueError("I and J must have the same length")
        new = np.arange(self.size, self.size + I.size)
        self.I, self.J = np.concatenate([self.I, I]), np.concatenate([self.J, J])
        for k in new:
            self.index_set.add(int(k))
        self.component.add_lazy(new.tolist())
        self.record.set_sizes[self.index_set.local_name] = len(self.index_set)
        return new

    def row_expression(self, k: int):
        """The relational expression of pair row ``k`` (the lazy member's recipe)."""
        coef = self.coefficients(self.I[k:k + 1], self.J[k:k + 1])[0]
        allc = self.fixed.copy()
        allc[self.cols] += coef
        keep = np.flatnonzero(allc)
        body = linear_form(allc[keep], [self.variables[p] for p in keep])
        return (self.lower if np.isfinite(self.lower) else None, body,
                self.upper if np.isfinite(self.upper) else None)


def add_pair_family(b, record, name: str, *, cols, terms, fixed=None, lower=-np.inf,
                    upper=np.inf, I=(), J=(), doc: str = "", part_of_formulation=False) -> PairFamily:
    """Declare a growing pair family ``name`` (pairs numbered in the Set ``name + '_pairs'``)
    on block ``b`` and in ``record`` (whose variables are final), starting with ``(I, J)``.

    A builder's own family is ``part_of_formulation``; any other is an extension: the solve
    keeps the fast path, and the post-processing treats the model as changed (b from the
    model's values or multipliers, no formulation diagnostics)."""
    variables = record.var_datas()
    n = len(variables)
    fixed = np.zeros(n) if fixed is None else np.asarray(fixed, dtype=float)
    pairs = pyo.Set(initialize=[], ordered=True, doc=f"pair numbers of {name}")
    b.add_component(f"{name}_pairs", pairs)
    fam = PairFamily(component=None, index_set=pairs, record=record,
                     cols=np.asarray(cols, dtype=int), terms=list(terms), fixed=fixed,
                     lower=float(lower), upper=float(upper), variables=variables)
    con = LazyConstraint(pairs, recipe=lambda k: (fam.row_expression, (k,)), doc=doc)
    b.add_component(name, con)
    fam.component = con
    record.families.append(fam)
    record.components[name] = con
    record.components[pairs.local_name] = pairs
    record.set_sizes[pairs.local_name] = 0
    if not part_of_formulation:
        record.extensions.append(name)
    fam.append(I, J)
    return fam

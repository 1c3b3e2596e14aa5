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
``b_i + b_j`` is two. A *squared-distance* family (the radius rows of the radius-margin
SVMs) gives instead feature blocks ``Phi_m`` and a weight ``c``: the coefficient on column
``m`` is ``c ||Phi_m[i] - Phi_m[j]||^2``, computed from the differences, and
:meth:`PairFamily.most_violated` finds the worst pairs over *all* ``i < j`` block by block,
without materialising them (the certificate of constraint generation). The Pyomo side is a :class:`~svm_models.model.lazy.LazyConstraint`
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
    features: list | None = None
    weight: float = 1.0

    @property
    def size(self) -> int:
        return int(self.I.size)

    def coefficients(self, I, J) -> np.ndarray:
        """Dense ``len(I) x m`` coefficients of the pair rows on ``cols``."""
        if self.features is not None:
            return self.weight * pair_sqdist(self.features, I, J)
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
        nz = np.flatnonzero(self.fixed[:n])
        if nz.size:   # the row-independent part (e.g. -r), from its nonzeros only
            A = A + sp.csr_matrix((np.tile(self.fixed[nz], self.size),
                                   (np.repeat(np.arange(self.size), nz.size),
                                    np.tile(nz, self.size))), shape=(self.size, n))
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
        self.index_set.update(new.tolist())
        self.component.add_lazy(new.tolist())
        self.record.set_sizes[self.index_set.local_name] = len(self.index_set)
        return new

    def values(self, x: np.ndarray, I=None, J=None) -> np.ndarray:
        """The row bodies ``coef . x[cols] + fixed . x`` of the pairs (the members by default)."""
        I = self.I if I is None else np.asarray(I, dtype=int)
        J = self.J if J is None else np.asarray(J, dtype=int)
        return self.coefficients(I, J) @ x[self.cols] + float(self.fixed @ x[:len(self.fixed)])

    def most_violated(self, x: np.ndarray, k: int = 1):
        """``(largest violation, I, J)``: the largest ``body - upper`` over **all** pairs
        ``i < j`` (not only the members) and up to ``k`` pairs that are not members yet with
        the largest positive violations (best first). Only for a squared-distance family
        with non-negative column values; the pairs are never materialised (O(l) memory)."""
        if self.features is None:
            raise ValueError("most_violated needs a squared-distance family")
        xc = np.clip(x[self.cols], 0.0, None)
        Z = np.hstack([np.sqrt(self.weight * xm) * Phi for xm, Phi in zip(xc, self.features)])
        vals, I, J = farthest_pairs(Z, max(k, 1) + self.size)
        shift = float(self.fixed @ x[:len(self.fixed)]) - self.upper
        worst = float(vals[0] + shift) if vals.size else shift
        member = set(zip(self.I.tolist(), self.J.tolist()))
        keep = [t for t in range(vals.size) if vals[t] + shift > 0
                and (int(I[t]), int(J[t])) not in member][:k]
        return worst, I[keep], J[keep]

    def row_expression(self, k: int):
        """The relational expression of pair row ``k`` (the lazy member's recipe)."""
        coef = self.coefficients(self.I[k:k + 1], self.J[k:k + 1])[0]
        allc = self.fixed.copy()
        allc[self.cols] += coef
        keep = np.flatnonzero(allc)
        body = linear_form(allc[keep], [self.variables[p] for p in keep])
        return (self.lower if np.isfinite(self.lower) else None, body,
                self.upper if np.isfinite(self.upper) else None)


def pair_sqdist(features: list, I, J) -> np.ndarray:
    """``len(I) x m`` squared distances ``||Phi_m[i] - Phi_m[j]||^2`` for each feature block
    ``Phi_m`` (an l x r_m array: one column of X, or a factor of one kernel's Gram matrix)."""
    I, J = np.asarray(I, dtype=int), np.asarray(J, dtype=int)
    out = np.empty((I.size, len(features)))
    for m, Phi in enumerate(features):
        diff = Phi[I] - Phi[J]
        out[:, m] = np.einsum("ij,ij->i", diff, diff) if diff.ndim == 2 else diff ** 2
    return out


def column_blocks(X: np.ndarray) -> list:
    """The feature blocks of a feature-weighting family: each column of X on its own."""
    return [X[:, j:j + 1] for j in range(X.shape[1])]


def all_pairs(l: int) -> tuple[np.ndarray, np.ndarray]:
    """``(I, J)``: every pair ``i < j`` of ``l`` points, ``l (l - 1) / 2`` of them."""
    return np.triu_indices(l, 1)


def farthest_pairs(Z: np.ndarray, k: int = 1, chunk: int = 1024):
    """``(d2, I, J)``: the ``k`` pairs ``i < j`` with the largest ``||Z_i - Z_j||^2``, largest
    first, computed block by block (O(chunk l) memory, never the l x l matrix); the
    distances of the returned pairs are recomputed from the differences (no cancellation)."""
    l = Z.shape[0]
    k = int(min(max(k, 1), l * (l - 1) // 2))
    if l < 2:
        return np.zeros(0), np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    sq = np.einsum("ij,ij->i", Z, Z)
    best_v, best_i, best_j = np.zeros(0), np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    for a in range(0, l - 1, chunk):
        rows = np.arange(a, min(a + chunk, l - 1))
        cols = np.arange(a + 1, l)
        D = sq[rows, None] + sq[None, cols] - 2.0 * (Z[rows] @ Z[cols].T)
        D[cols[None, :] <= rows[:, None]] = -np.inf
        flat = D.ravel()
        take = min(k + 8, flat.size)
        idx = np.argpartition(flat, flat.size - take)[flat.size - take:]
        idx = idx[np.isfinite(flat[idx])]
        r, c = np.divmod(idx, cols.size)
        best_v = np.concatenate([best_v, flat[idx]])
        best_i = np.concatenate([best_i, rows[r]])
        best_j = np.concatenate([best_j, cols[c]])
        if best_v.size > 4 * (k + 8):
            top = np.argsort(-best_v)[:k + 8]
            best_v, best_i, best_j = best_v[top], best_i[top], best_j[top]
    diff = Z[best_i] - Z[best_j]
    exact = np.einsum("ij,ij->i", diff, diff)
    order = np.argsort(-exact, kind="stable")[:k]
    return exact[order], best_i[order], best_j[order]


def add_pair_family(b, record, name: str, *, cols, terms=(), fixed=None, lower=-np.inf,
                    upper=np.inf, I=(), J=(), doc: str = "", part_of_formulation=False,
                    features=None, weight: float = 1.0) -> PairFamily:
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
                     lower=float(lower), upper=float(upper), variables=variables,
                     features=features, weight=float(weight))
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

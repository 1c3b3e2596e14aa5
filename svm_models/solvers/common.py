"""Matrix helpers more than one adapter needs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from ..model.forms import as_slice
from ..status import Status


def dense_hessian_f(sf) -> np.ndarray:
    """``P`` for a dense interface (column-major). When P is one recorded matrix as it is
    (one dense block over all of x with weight 2 * scale = 1, exactly symmetric, as the
    1-norm and hard-margin duals), its transpose -- a column-major view equal to it -- is
    passed: no n x n copy."""
    if len(sf.quad) == 1:
        q = sf.quad[0]
        B = q.base
        if (B is not None and 2.0 * q.scale == 1.0 and B.shape[0] == sf.n
                and B.flags.c_contiguous and B.dtype == np.float64
                and as_slice(np.asarray(q.index)) == slice(0, sf.n) and np.array_equal(B, B.T)):
            return B.T
    return sf.hessian_dense(order="F")


def block_rows(blocks, n: int) -> sp.csr_matrix:
    """Rows ``[R_1 x[idx_1]; R_2 x[idx_2]; ...]`` as one sparse matrix over all n variables,
    from ``(R, idx)`` pairs (R dense)."""
    mats = []
    for R, idx in blocks:
        R = np.atleast_2d(R)
        mats.append(sp.csr_matrix((R.ravel(), (np.repeat(np.arange(R.shape[0]), R.shape[1]),
                                              np.tile(np.asarray(idx), R.shape[0]))),
                                  shape=(R.shape[0], n)))
    return sp.vstack(mats, format="csr") if mats else sp.csr_matrix((0, n))


def feasibility_form(sf):
    """The same constraints as ``sf`` with the objective 0: is there a feasible point?"""
    return replace(sf, c=np.zeros(sf.n), quad=[], const=0.0)


def settle_dual_infeasible(adapter, sf, opts) -> tuple:
    """``(status, message)`` of a model whose dual the backend proved infeasible: then the
    model is infeasible or unbounded, never optimal -- a convex QP with a feasible point and
    a bounded objective has an optimum and a feasible dual. Which of the two, the backend
    (``adapter``) tells by solving :func:`feasibility_form`: a feasible point -- unbounded;
    proved infeasible -- infeasible; anything else -- ``infeasible_or_unbounded``."""
    feasible = adapter(feasibility_form(sf), opts)
    if feasible.status is Status.optimal:
        return Status.unbounded, "dual infeasible, and a feasible point: unbounded"
    if feasible.status is Status.infeasible:
        return Status.infeasible, f"infeasible ({feasible.message}; the dual is infeasible too)"
    return (Status.infeasible_or_unbounded,
            f"dual infeasible; the feasibility problem ended {feasible.status.value} "
            f"({feasible.message})")

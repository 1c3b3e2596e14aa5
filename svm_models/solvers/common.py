"""Matrix helpers more than one adapter needs."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..model.forms import as_slice


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

r"""The minimum enclosing ball of the training points in a kernel's feature space.

.. math::

    R^2 = \max_{a} \; \sum_i a_i K_{ii} - a'Ka \quad \text{s.t.} \quad \sum_i a_i = 1, \; a \ge 0

the Lagrange dual of ``min_{c, R} R^2 s.t. ||phi(x_i) - c||^2 <= R^2`` (centre
``c = sum_i a_i phi(x_i)``). A convex QP; its optimal value is ``R^2``. The radius-margin SVMs
(``formulations/radius_margin.md``) approximate R by ``R_O``, half the largest pairwise
distance; the library
computes both (:func:`svm_models.enclosing_ball_radius`, :func:`svm_models.half_diameter`).

Not a classifier: the block carries a record (so every QP backend solves it on the fast
path) but is not in the formulation registry.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from ..data import as_matrix
from ..errors import DataError
from ..kernels import check_psd, make_kernel
from ..model.forms import QuadBlock
from ..model.lazy import LazyScalarExpression, dense_quadratic_form, linear_form
from ..model.pieces import Layout, new_block, place
from ..model.record import LinearTerm, QuadTerm, Record, RowGroup, Scale


def gram_for(X, kernel="linear", **kernel_params) -> np.ndarray:
    """The Gram matrix of ``X`` (``kernel="precomputed"``: X is that matrix, checked PSD)."""
    if kernel == "precomputed":
        K = as_matrix(X, name="precomputed kernel matrix")
        if K.shape[0] != K.shape[1]:
            raise DataError(f"a precomputed kernel matrix must be square; got {K.shape}")
        check_psd(K, name="precomputed kernel matrix")
        return K
    Xm = as_matrix(X, name="X")
    return make_kernel(kernel, Xm, **kernel_params).gram(Xm)


def enclosing_ball(X, *, kernel="linear", block=None, **kernel_params):
    """Fill ``block`` (or a new ConcreteModel) with the enclosing-ball QP above.

    Components: ``I`` points, ``a[i] >= 0`` the weights of the centre, ``simplex``:
    sum a = 1, ``quad`` = a'Ka, ``objective`` (maximise; its value is R^2).
    """
    K = gram_for(X, kernel, **kernel_params)
    l = K.shape[0]
    if l < 1:
        raise DataError("the enclosing ball needs at least one point")
    b = new_block(block, "enclosing_ball")
    b.I = pyo.Set(initialize=range(l), ordered=True, doc="points i")
    b.a = pyo.Var(b.I, bounds=(0, None), initialize=1.0 / l,
                  doc="weight a_i of point i in the centre c = sum_i a_i phi(x_i)")
    layout = Layout()
    apos = layout.add(b.a)
    al = list(b.a.values())
    b.simplex = pyo.Constraint(expr=linear_form(np.ones(l), al) == 1, doc="simplex: sum_i a_i = 1")
    b.quad = LazyScalarExpression(recipe=(dense_quadratic_form, (K, al)), doc="a'Ka")
    diag = np.diag(K).copy()
    b.objective = pyo.Objective(expr=linear_form(diag, al) - b.quad, sense=pyo.maximize,
                                doc="sum_i a_i K_ii - a'Ka (= R^2 at the optimum)")
    row = RowGroup(b.simplex, [b.simplex], place([(apos, sp.csr_matrix(np.ones((1, l))))], 1, l),
                   np.ones(1), np.ones(1))
    b._ball = Record(block=b, variables=layout.variables, objective=b.objective, sense=-1,
                     linear=[LinearTerm(apos, diag)],
                     quadratic=[QuadTerm(QuadBlock(apos, matrix=K), Scale(-1.0))],
                     rows=[row], problem_class="QP").seal()
    return b

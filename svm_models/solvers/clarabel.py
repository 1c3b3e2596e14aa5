"""Clarabel: interior-point conic solver: LP, convex QP, second-order cones, and convex
quadratic constraints rewritten as cones (``pip install clarabel``; matrix interface only,
no Pyomo plugin: its general path reads the Pyomo model into matrices and proves every
quadratic constraint convex or a cone first, see :mod:`svm_models.model.reader`).

Clarabel solves ``min 1/2 x'Px + q'x`` s.t. ``Ax + s = b``, ``s`` in a product of cones; its
dual ``z`` gives d(optimal value)/d(b) = -z. A convex quadratic row
``x'Mx + a'x <= u`` becomes ``||(2 R x, t - 1)|| <= t + 1`` with ``t = u - a'x`` and
``R'R = M``; a cone in squared form ``q(x) = ||u_1:||^2 - u_0^2 <= 0`` has the multiplier
``lambda = z_0 / (2 u_0)``. Its ``DualInfeasible`` proves the model infeasible or unbounded,
not which: the feasibility problem, solved next, tells
(:func:`~.common.settle_dual_infeasible`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..model.forms import psd_root
from ..status import Status
from ..tolerances import CLARABEL_CONE_TOL, CLARABEL_QP_TOL, EIG_DROP_REL
from .base import Backend, MatrixResult
from .common import block_rows, settle_dual_infeasible

STATUS = {"Solved": Status.optimal, "PrimalInfeasible": Status.infeasible,
          "DualInfeasible": Status.unbounded, "MaxIterations": Status.iteration_limit,
          "MaxTime": Status.time_limit, "NumericalError": Status.numerical_error,
          "InsufficientProgress": Status.numerical_error,
          "AlmostSolved": Status.numerical_error}


def solve(sf, opts, state=None) -> MatrixResult:
    """Clarabel on a standard form with rows, bounds, convex quadratic rows and cones."""
    import clarabel

    A, bvec, cones, layout = _constraints(sf, clarabel)
    P = sf.hessian_sparse(triangle="upper") if sf.quad else sp.csc_matrix((sf.n, sf.n))
    s = _settings(sf, opts, clarabel)
    solver = clarabel.DefaultSolver(P, sf.c, A, bvec, cones, s)
    sol = solver.solve()
    name = str(sol.status).split(".")[-1]
    res = MatrixResult(status=STATUS.get(name, Status.error), message=name, interface="clarabel")
    if res.status is Status.unbounded:   # a certificate of dual infeasibility only
        res.status, res.message = settle_dual_infeasible(solve, sf, opts)
    if res.status is not Status.optimal:
        return res
    _read_back(res, sf, sol, layout)
    return res


class _Layout(NamedTuple):
    """Where each group of rows sits in Clarabel's ``Ax + s = b``, to read its duals back."""

    eq_idx: np.ndarray   # standard-form rows of the zero cone, first
    nonneg_map: list     # (kind, rows or count) of each part of the nonnegative cone, next
    qrow_dims: list      # size of each quadratic row's second-order cone, next
    cone_info: list      # (SOC, factor of the multiplier) of each cone, last


def _constraints(sf, clarabel):
    """``A``, ``b`` and the cones of ``Ax + s = b``, in order: the equality rows (a zero cone),
    the finite row and variable bounds (one nonnegative cone), each quadratic row and each cone
    (a second-order cone each); and the :class:`_Layout` to read their duals back."""
    n = sf.n
    blocks, rhs, cones = [], [], []
    eq_idx, Aeq, beq, in_idx, Ain, lin, uin = sf.equality_split()
    if len(eq_idx):
        blocks.append(Aeq); rhs.append(beq); cones.append(clarabel.ZeroConeT(len(eq_idx)))
    nonneg, nonneg_b, nonneg_map = _nonnegative_rows(sf, in_idx, Ain, lin, uin)
    if nonneg:
        Ann = sp.vstack(nonneg, format="csr")
        blocks.append(Ann); rhs.append(np.concatenate(nonneg_b))
        cones.append(clarabel.NonnegativeConeT(Ann.shape[0]))
    qrow_dims = []
    for q in sf.qrows:
        Ak, bk = _qrow_soc(q, n)
        blocks.append(Ak); rhs.append(bk); cones.append(clarabel.SecondOrderConeT(Ak.shape[0]))
        qrow_dims.append(Ak.shape[0])
    cone_info = []
    for c in sf.cones:
        soc = c.as_soc()   # u = A x + b in SOC:  -A x + s = b
        blocks.append(-soc.A); rhs.append(soc.b); cones.append(clarabel.SecondOrderConeT(soc.dim))
        cone_info.append((soc, 1.0 if c.kind == "soc" else 2.0))
    A = sp.vstack(blocks, format="csc") if blocks else sp.csc_matrix((0, n))
    bvec = np.concatenate(rhs) if rhs else np.zeros(0)
    return A, bvec, cones, _Layout(eq_idx, nonneg_map, qrow_dims, cone_info)


def _nonnegative_rows(sf, in_idx, Ain, lin, uin):
    """The blocks ``G`` and right-hand sides ``h`` of ``Gx <= h`` for the finite upper and lower
    bounds of the inequality rows and of the variables, and the map of their duals: ``("row_u",
    rows)``, ``("row_l", rows)``, ``("x_u", count)``, ``("x_l", count)``."""
    up, lo = np.isfinite(uin), np.isfinite(lin)
    I = sp.identity(sf.n, format="csr")
    nonneg, nonneg_b, nonneg_map = [], [], []
    if up.any():
        nonneg.append(Ain[up]); nonneg_b.append(uin[up]); nonneg_map.append(("row_u", in_idx[up]))
    if lo.any():
        nonneg.append(-Ain[lo]); nonneg_b.append(-lin[lo]); nonneg_map.append(("row_l", in_idx[lo]))
    xu, xl = np.isfinite(sf.ux), np.isfinite(sf.lx)
    if xu.any():
        nonneg.append(I[xu]); nonneg_b.append(sf.ux[xu]); nonneg_map.append(("x_u", int(xu.sum())))
    if xl.any():
        nonneg.append(-I[xl]); nonneg_b.append(-sf.lx[xl]); nonneg_map.append(("x_l", int(xl.sum())))
    return nonneg, nonneg_b, nonneg_map


def _qrow_soc(q, n):
    """``(A_k, b_k)`` of the second-order cone of one convex quadratic row."""
    # sum x'Mx + a'x <= u  as  ||(2 R x, t - 1)|| <= t + 1 with t = u - a'x
    R = block_rows([(psd_root(blk.dense(), rel=EIG_DROP_REL), blk.index) for blk in q.quad], n)
    a = sp.csr_matrix(q.linear[None, :])
    Ak = sp.vstack([a, a, -2.0 * R], format="csr")
    bk = np.concatenate([[q.upper + 1.0, q.upper - 1.0], np.zeros(R.shape[0])])
    return Ak, bk


def _settings(sf, opts, clarabel):
    """Clarabel's settings: verbosity, the tolerances (tighter on a QP than with cones), no
    dynamic regularisation with cones, then the limits and the user's options."""
    s = clarabel.DefaultSettings()
    s.verbose = bool(opts.verbose)
    conic = bool(sf.qrows or sf.cones)
    tol = opts.tol if opts.tol is not None else (CLARABEL_CONE_TOL if conic else CLARABEL_QP_TOL)
    s.tol_gap_abs = tol
    s.tol_gap_rel = tol
    s.tol_feas = tol
    s.tol_ktratio = max(tol * 1e-2, 1e-12)
    if conic:
        # with cones, the dynamic regularisation of the KKT system ended 'AlmostSolved' on
        # C-tuning SOCPs (eigen coordinates, 120 breast-cancer points, rbf) that solve exactly
        # without it (measured; the robustness set of tests/test_c_tuning.py)
        s.dynamic_regularization_enable = False
    for key, val in {**opts.limits("time_limit", "max_iter", "max_threads"),
                     **opts.options}.items():
        setattr(s, key, val)
    return s


def _read_back(res, sf, sol, layout):
    """Fill ``res`` from an optimal solution: x, the duals of the rows, quadratic rows and
    cones (read from ``z`` in the order of the :class:`_Layout`), objective, iterations."""
    x = np.array(sol.x)
    z = np.array(sol.z)
    duals, pos = _row_duals(sf.m, z, layout)
    qd = []
    for cnt in layout.qrow_dims:
        zz = z[pos:pos + cnt]
        qd.append(-(zz[0] + zz[1]))
        pos += cnt
    cd = _cone_duals(x, z, pos, layout.cone_info)
    res.x = x
    res.row_duals = duals
    res.qrow_duals = np.array(qd)
    res.cone_duals = np.array(cd)
    res.objective = sf.objective(x)
    res.iterations = int(sol.iterations)


def _row_duals(m, z, layout):
    """The duals of the m standard-form rows from the zero and nonnegative cones' part of
    ``z``, and the position in ``z`` after that part."""
    duals = np.zeros(m)
    pos = 0
    eq_idx = layout.eq_idx
    if len(eq_idx):
        duals[eq_idx] = -z[:len(eq_idx)]
        pos = len(eq_idx)
    for kind, idx in layout.nonneg_map:
        cnt = len(idx) if kind.startswith("row") else idx
        zz = z[pos:pos + cnt]
        if kind == "row_u":
            duals[idx] += -zz
        elif kind == "row_l":
            duals[idx] += zz
        pos += cnt
    return duals, pos


def _cone_duals(x, z, pos, cone_info):
    """The multipliers (sensitivities) of the cones' squared forms, from ``z`` at ``pos``."""
    cd = []
    for soc, factor in cone_info:
        zz = z[pos:pos + soc.dim]
        head = float((soc.A[0] @ x)[0] + soc.b[0])
        # lambda of the squared form q <= 0 is z_0 / (2 head); a rotated cone's squared form
        # is half the SOC's: twice the multiplier. Sensitivity: -lambda.
        cd.append(-factor * zz[0] / (2.0 * head) if head > 0 else 0.0)
        pos += soc.dim
    return cd


BACKEND = Backend(
    name="clarabel", classes=frozenset(("LP", "QP", "SOCP", "QCQP")), modules=("clarabel",),
    matrix=solve, install="pip install clarabel",
    note="interior point conic; quadratic constraints as second-order cones (matrix interface)",
    project=True,
    # first on an SOCP (its cones as they are); second on a QP, an LP and a QCQP
    auto={"SOCP": 10, "QP": 20, "LP": 20, "QCQP": 20},
    pyomo_solver="Clarabel (interior point, conic) through svm_models: LP, convex QP, SOCP "
                 "and convex QCQP")

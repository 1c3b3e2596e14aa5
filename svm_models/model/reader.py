"""The general reading of any Pyomo model into a standard form, with its convexity proved.

Used where no builder's record proves the model (the general path of the matrix-fed
backends, and the convexity check before a local solver): slow per term, but exact and
independent of any record. Every quadratic part is classified:

* the objective's quadratic form must be convex (PSD when minimising, NSD when maximising);
* a quadratic constraint whose form is PSD is a convex :class:`~svm_models.model.forms.QuadRow`;
* one whose form has exactly one negative eigenvalue, with no linear part and a zero
  right-hand side, ``x'Qx <= 0``, is a second-order cone when the variable bounds fix the
  sign of ``v'x`` (``v`` the negative eigenvalue's eigenvector): ``||R x|| <= sqrt(mu) v'x``.
  This covers ``sum z_k^2 <= s^2`` with ``s >= 0`` and the rotated ``x^2 <= y z`` with
  ``y, z >= 0``;
* anything else is not convex: :class:`NotConvex` says which constraint and why.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from pyomo.core.base.constraint import Constraint
from pyomo.core.base.objective import Objective
from pyomo.core.expr.numvalue import value as pyo_value

from ..tolerances import CONE_AXIS_REL, CONVEX_TOL
from .forms import Cone, QuadBlock, QuadRow
from .standard_form import StandardForm, bounds

INF = float("inf")


class NotConvex(ValueError):
    """The model has a quadratic part that is not convex (nor a recognised cone)."""


class NotQuadratic(ValueError):
    """The model has a term that is not linear or quadratic (or several active objectives)."""


def _smallest_eig(M: np.ndarray) -> tuple[float, float]:
    """(smallest eigenvalue, scale) of a symmetric matrix."""
    if M.size == 0:
        return 0.0, 1.0
    w = np.linalg.eigvalsh((M + M.T) / 2)
    return float(w[0]), max(1.0, float(np.max(np.abs(w))))


def from_pyomo(model) -> StandardForm:
    """Standard form of an LP/QP/SOCP/convex-QCQP Pyomo model via Pyomo's own repn.

    The variables are those the active objective and constraints reference (not fixed), in
    the order they are met: a variable no active component references is not part of the
    problem (as in Pyomo's own solver interfaces: it is neither solved nor loaded). A model
    with no active objective is a feasibility problem: minimise 0.

    Raises :class:`NotQuadratic` for non-polynomial terms or more than one active
    objective, :class:`NotConvex` for a quadratic part that is not convex.
    """
    objs = list(model.component_data_objects(Objective, active=True, descend_into=True))
    if len(objs) > 1:
        raise NotQuadratic(f"the model must have at most one active objective; it has "
                           f"{len(objs)}")
    cons = list(model.component_data_objects(Constraint, active=True, descend_into=True))
    variables = _Variables()
    obj = objs[0] if objs else None
    if obj is None:   # a feasibility problem: minimise 0
        o_const, o_lin, o_quad = 0.0, [], []
    else:
        o_const, o_lin, o_quad = variables.read(obj.expr, f"the objective {obj.name!r}")
    lin_rows, quad_rows = _read_rows(cons, variables)
    var_datas = variables.datas
    n = len(var_datas)
    lx, ux = bounds(var_datas)
    sense = -1 if obj is not None and obj.sense != 1 else 1
    c, o_const, quad = _objective(obj, sense, o_const, o_lin, o_quad, n)
    A = _linear_matrix(lin_rows, n)
    qrows, cones = _quadratic_rows(quad_rows, lx, ux, n)
    sf = StandardForm(sense=sense, c=c, const=o_const, quad=quad, A=A,
                      lA=np.array([r[2] for r in lin_rows]), uA=np.array([r[3] for r in lin_rows]),
                      lx=lx, ux=ux, qrows=qrows, var_datas=var_datas,
                      row_datas=[r[0] for r in lin_rows], cones=cones,
                      integer=np.array([k for k, v in enumerate(var_datas)
                                        if not v.is_continuous()], dtype=int))
    sf.problem_class = sf.classify()
    return sf


class _Variables:
    """The model's variables in the order they are first met: their positions in ``x``."""

    def __init__(self):
        self.index: dict[int, int] = {}
        self.datas: list = []

    def pos(self, v) -> int:
        """The position of the variable data ``v``, given the next free one when first met."""
        k = self.index.get(id(v))
        if k is None:
            k = self.index[id(v)] = len(self.datas)
            self.datas.append(v)
        return k

    def read(self, expr, what):
        """``(constant, [(pos, coef)], [(pos_a, pos_b, coef)])`` of a linear or quadratic
        expression; :class:`NotQuadratic` (naming ``what``) for any other."""
        from pyomo.repn.standard_repn import generate_standard_repn

        repn = generate_standard_repn(expr, quadratic=True, compute_values=True)
        if repn.nonlinear_expr is not None:
            raise NotQuadratic(f"{what} is not linear or quadratic")
        lin = [(self.pos(v), float(c)) for v, c in zip(repn.linear_vars, repn.linear_coefs)]
        quad = [(self.pos(a), self.pos(b), float(c))
                for (a, b), c in zip(repn.quadratic_vars, repn.quadratic_coefs)]
        return float(repn.constant), lin, quad


def _read_rows(cons, variables):
    """The constraints, each with its bounds less its body's constant: the linear ones with a
    finite bound as ``(cd, lin, lo, up)``, the quadratic ones as ``(cd, lin, quad, lo, up)``."""
    lin_rows, quad_rows = [], []
    for cd in cons:
        const, lin, quad = variables.read(cd.body, f"constraint {cd.name!r}")
        lo = -INF if cd.lower is None else float(pyo_value(cd.lower)) - const
        up = INF if cd.upper is None else float(pyo_value(cd.upper)) - const
        if quad:
            quad_rows.append((cd, lin, quad, lo, up))
        elif np.isfinite(lo) or np.isfinite(up):
            lin_rows.append((cd, lin, lo, up))
    return lin_rows, quad_rows


def _objective(obj, sense, o_const, o_lin, o_quad, n):
    """``(c, const, quad)`` of the objective as a minimisation; :class:`NotConvex` if its
    quadratic form is not convex for its sense."""
    c = np.zeros(n)
    for k, a in o_lin:
        c[k] += a
    quad = []
    if o_quad:
        idx, M = _local_matrix(o_quad)
        if sense == -1:
            M = -M
        lam, scale = _smallest_eig(M)
        if lam < -CONVEX_TOL * scale:
            raise NotConvex(
                f"the objective {obj.name!r} is not convex: its quadratic form has the "
                f"eigenvalue {sense * lam:.3g} of the wrong sign for a "
                f"{'minimisation' if sense == 1 else 'maximisation'}")
        quad = [QuadBlock(idx, matrix=M)]
    if sense == -1:
        c, o_const = -c, -o_const
    return c, o_const, quad


def _linear_matrix(lin_rows, n) -> sp.csr_matrix:
    """The sparse matrix of the linear rows over the n variables."""
    rr, cc, vv = [], [], []
    for r, (_, lin, _, _) in enumerate(lin_rows):
        for k, a in lin:
            rr.append(r); cc.append(k); vv.append(a)
    return sp.csr_matrix((vv, (rr, cc)), shape=(len(lin_rows), n))


def _quadratic_rows(quad_rows, lx, ux, n):
    """``(qrows, cones)``: each one-sided quadratic row as ``q(x) <= u``, classified by
    :func:`_classify_row`; :class:`NotConvex` for an equality or two-sided one."""
    qrows, cones = [], []
    for cd, lin, quad_terms, lo, up in quad_rows:
        a = np.zeros(n)
        for k, v in lin:
            a[k] += v
        if np.isfinite(up) and not np.isfinite(lo):
            sign, u = 1.0, up
        elif np.isfinite(lo) and not np.isfinite(up):  # q(x) >= lo  <=>  -q(x) <= -lo
            sign, u, a = -1.0, -lo, -a
        else:
            raise NotConvex(f"quadratic constraint {cd.name!r} is an equality or two-sided: "
                            "not convex")
        idx, M = _local_matrix(quad_terms)
        M = sign * M
        row = _classify_row(cd, idx, M, a, u, sign, lx, ux, n)
        (cones if isinstance(row, Cone) else qrows).append(row)
    return qrows, cones


def _local_matrix(terms) -> tuple[np.ndarray, np.ndarray]:
    """(positions, symmetric M) with ``sum c x_a x_b = x[pos]' M x[pos]``."""
    idx = np.array(sorted({t[0] for t in terms} | {t[1] for t in terms}), dtype=np.int64)
    loc = {int(k): i for i, k in enumerate(idx)}
    M = np.zeros((len(idx), len(idx)))
    for a, b, c in terms:
        i, j = loc[a], loc[b]
        if i == j:
            M[i, i] += c
        else:
            M[i, j] += c / 2.0
            M[j, i] += c / 2.0
    return idx, M


def _classify_row(cd, idx, M, a, u, sign, lx, ux, n):
    """A convex QuadRow, a Cone, or NotConvex (see the module docstring)."""
    w, V = np.linalg.eigh(M)
    scale = max(1.0, float(np.max(np.abs(w))))
    tol = CONVEX_TOL * scale
    if w[0] >= -tol:
        return QuadRow(cd, [QuadBlock(idx, matrix=M)], a, u, sign)
    neg = np.flatnonzero(w < -tol)
    why = None
    if len(neg) > 1:
        why = f"its quadratic form has {len(neg)} negative eigenvalues"
    elif np.any(a != 0.0) or u != 0.0:
        why = ("its quadratic form is indefinite and it has a linear part or a non-zero "
               "right-hand side (only x'Qx <= 0 cones are recognised)")
    if why is None:
        v = V[:, neg[0]]
        vmax = float(np.max(np.abs(v)))
        support = np.flatnonzero(np.abs(v) > CONE_AXIS_REL * vmax)
        s = np.sign(v[support[0]])
        vs = s * v
        same_sign = bool(np.all(vs[support] > 0))
        lo_ok = np.all(lx[idx[support]] >= 0.0)
        if not (same_sign and lo_ok):
            why = ("its quadratic form is indefinite and the variable bounds do not fix the "
                   "sign of the cone's axis (a cone x'Qx <= 0 needs its head variables >= 0)")
        else:
            vs = np.where(np.abs(vs) > CONE_AXIS_REL * vmax, vs, 0.0)
            pos = np.flatnonzero(w > tol)
            rows = [np.sqrt(-w[neg[0]]) * vs] + [np.sqrt(w[k]) * V[:, k] for k in pos]
            R = np.array(rows)
            A = sp.csr_matrix((R.ravel(), (np.repeat(np.arange(R.shape[0]), R.shape[1]),
                                           np.tile(idx, R.shape[0]))), shape=(R.shape[0], n))
            A.eliminate_zeros()
            return Cone("soc", A, np.zeros(R.shape[0]), cd, sign)
    raise NotConvex(f"quadratic constraint {cd.name!r} is not convex: {why}")

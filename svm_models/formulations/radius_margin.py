r"""Radius-margin SVMs (Do & Kalousis, ICML 2013, appendix; ``formulations/radius_margin.md``).

The margin alone is not scale invariant: the radius-margin SVMs add the radius of the data
(in the learned feature weighting or metric) to the objective. Four builders:

``rsvm_mu_plus``  feature weighting / multiple kernels, jointly convex (SOCP)

.. math::

    \min_{\mu, w, b, \xi \ge 0, r, s} \; \tfrac12 \sum_k s_k + \lambda r + C \sum_i \xi_i
    \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1 - \xi_i, \;
    w_k^2 \le s_k \mu_k, \; \tfrac12 \sum_k \mu_k (x_{ik} - x_{jk})^2 \le r \;(i < j), \;
    \textstyle\sum_k \mu_k = 1, \; \mu \ge 0

(the perspective ``w_k^2 / mu_k`` as a rotated cone ``w_k^2 <= s_k mu_k``; with kernels
``K_1..K_m`` the blocks ``w_k`` live in the factor coordinates of ``K_k = L_k L_k'`` and
``(x_ik - x_jk)^2`` becomes ``K_k,ii + K_k,jj - 2 K_k,ij``).

``rsvm_plus_primal``  R-SVM+ (QCQP)

.. math::

    \min_{w, b, \xi \ge 0, r, s} \; \tfrac12 \|w\|^2 + \lambda r + C \sum_i \xi_i
    \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1 - \xi_i, \;
    w_k^2 \le s_k, \; \tfrac12 \sum_k s_k (x_{ik} - x_{jk})^2 \le r \;(i < j)

(the lifting ``s_k >= w_k^2`` makes the O(l^2) pair rows linear; it changes nothing:
a point ``(w, r)`` is feasible for some ``s`` exactly when ``1/2 sum_k w_k^2 (x_ik - x_jk)^2 <= r``).

``rsvm_plus_dual``  its Lagrange dual, appendix eq. (5)/(7) (SOCP)

.. math::

    \max_{\alpha, \beta, v, t, u} \; e'\alpha - \tfrac12 \sum_k u_k \quad \text{s.t.} \quad
    v_k^2 \le u_k t_k, \; v = X' D_y \alpha, \; t_k = 1 + \sum_{i<j} \beta_{ij} (x_{ik} - x_{jk})^2,
    \; \textstyle\sum \beta = \lambda, \; y'\alpha = 0, \; 0 \le \alpha \le C, \; \beta \ge 0

``rsvm_plus_kernel``  the representer form, appendix eq. (8) (plus ``C sum xi``)

.. math::

    \min_{a, b, \xi \ge 0, r} \; a'Ka + \tfrac{\lambda}{2} r + C \sum_i \xi_i
    \quad \text{s.t.} \quad y_i ((Ka)_i + b) \ge 1 - \xi_i, \;
    \tfrac12 ((K_i - K_j)'a)^2 \le r \;(i < j)

``radius="pairwise"`` states the pair rows literally (a QCQP with l(l-1)/2 quadratic rows);
``radius="compact"`` (default) uses the exact equivalent ``v <= f_i <= u`` for all i with
``r = (u - v)^2 / 2`` (O(l) rows, a QP). Both go through ``K = L L'`` (``z = L'a``,
``a'Ka = ||z||^2``, ``f = Ka = Lz``).

``C=None`` builds the hard-margin version of each (no ``xi``; the dual has no upper bound).
``C`` and ``lam`` are mutable Params. The pair rows of ``rsvm_mu_plus`` and
``rsvm_plus_primal`` are one squared-distance :class:`~svm_models.model.families.PairFamily`
(``pairs="all"``: every pair; ``pairs="seed"``: the farthest pair of each feature and the
farthest pair overall, grown by :func:`svm_models.methods.radius.generate_pairs`).

Reference: H. Do, A. Kalousis, "Convex formulations of radius-margin based Support Vector
Machines", ICML 2013 (appendix); ``formulations/radius_margin.md`` (the exact primal of
R-SVM+, the factor 1/2
of the R-SVM_mu+ gradient, the compact form, the Lemma 1 counterexample).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from ..data import validate
from ..errors import InfeasibleError, ParameterError, plain
from ..kernels import Kernel, KernelSum, factor, kernel_factor, make_kernel
from ..model.built import BuiltSVM
from ..model.families import (
    PairFamily,
    add_pair_family,
    all_pairs,
    column_blocks,
    farthest_pairs,
    pair_sqdist,
)
from ..model.forms import HARD, SOFT_L1, Cone, QuadBlock, QuadRow
from ..model.lazy import LazyConstraint, diagonal_quadratic_form, linear_form
from ..model.pieces import (
    Layout,
    add_balance,
    add_C,
    add_margin,
    add_points,
    check_choice,
    check_positive,
    new_block,
    place,
    prepare,
    sum_of_squares,
)
from ..model.record import LinearTerm, QuadTerm, Record, RowGroup, Scale, members
from ..postprocess import bias_from_kkt, block_objective, polish_dual, var_array
from ..solution import RadiusDetails, Solution
from ..status import Status
from ..tolerances import ACTIVE_MARGIN_REL, alpha_scale, support_threshold
from .base import Formulation, register
from .params import C_OR_NONE_DOC, PAIRS, RADIUS, document_parameters

INF = float("inf")


@dataclass(frozen=True, eq=False)
class RadiusFacts:
    """What a radius-margin builder leaves in ``BuiltSVM.facts`` for :func:`extract` and the
    hooks; the fields a variant does not use are None."""

    #: the builder ("mu_plus", "plus_primal", "plus_dual", "kernel"); its C (None: hard margin)
    variant: str
    C: float | None
    #: the feature blocks Phi_k (X's columns or the kernels' factors) and, mu_plus, their widths
    features: list[np.ndarray] | None = field(default=None, repr=False)
    sizes: list[int] | None = None
    #: mu_plus: the resolved kernels (None: the features are the columns of X)
    kernels: list[Kernel] | None = None
    #: mu_plus, plus_primal: the radius pair family (it grows under constraint generation)
    family: PairFamily | None = field(default=None, repr=False)
    #: plus_dual: the pairs (I[p], J[p]) of beta and their squared distances D[p, k]
    I: np.ndarray | None = field(default=None, repr=False)
    J: np.ndarray | None = field(default=None, repr=False)
    D: np.ndarray | None = field(default=None, repr=False)
    #: kernel: the radius form ("compact" or "pairwise")
    radius: str | None = None


# ---------------------------------------------------------------------------------------
# Shared pieces


def add_lam(b, lam) -> None:
    b.lam = pyo.Param(initialize=check_positive("lam", lam), mutable=True,
                      within=pyo.PositiveReals,
                      doc="radius weight lambda > 0 (mutable: change it and re-solve)")


def seed_pairs(features: list, X_all: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first pairs of constraint generation: for each feature block the pair farthest
    apart in it (exact for a feature: its min and max point), and the farthest pair overall."""
    pairs = set()
    for Phi in features:
        if Phi.shape[1] == 1:
            i, j = int(np.argmin(Phi[:, 0])), int(np.argmax(Phi[:, 0]))
        else:
            _, I, J = farthest_pairs(Phi, 1)
            i, j = int(I[0]), int(J[0])
        if i != j:
            pairs.add((min(i, j), max(i, j)))
    _, I, J = farthest_pairs(X_all, 1)
    if I.size:
        pairs.add((int(I[0]), int(J[0])))
    if not pairs:
        pairs.add((0, 1))
    arr = np.array(sorted(pairs), dtype=int)
    return arr[:, 0], arr[:, 1]


def _initial_pairs(pairs, features, Xcat, l):
    if isinstance(pairs, str):
        if pairs not in PAIRS:
            raise ParameterError(f"pairs must be one of {', '.join(PAIRS)} or (I, J) index "
                                 f"arrays; got {plain(pairs)!r}")
        return all_pairs(l) if pairs == "all" else seed_pairs(features, Xcat)
    try:
        I, J = (np.asarray(p, dtype=int).ravel() for p in pairs)
    except (TypeError, ValueError):
        raise ParameterError("pairs must be 'all', 'seed' or (I, J) index arrays; "
                             f"got {plain(pairs)!r}") from None
    if I.shape != J.shape or I.size == 0 or np.any(I >= J) or I.min() < 0 or J.max() >= l:
        raise ParameterError("pairs (I, J) must be non-empty arrays of equal length with "
                             f"0 <= I < J < l = {l}")
    return I, J


def _slack(b, layout, l):
    b.xi = pyo.Var(b.I, bounds=(0, None), initialize=0.0, doc="slack xi_i of point i's margin")
    layout.add(b.xi)
    return b.xi


def _persp_expr(w_vars, head, other):
    return diagonal_quadratic_form(np.ones(len(w_vars)), w_vars) - head * other <= 0


# The rules of the Pyomo constraints: module-level functions (partials of them where they take
# data), never closures, so that a built model pickles.


def _persp_group_rule(starts, m_, k):
    """rsvm_mu_plus's ``persp[k]``: ``||w_k||^2 <= s_k mu_k``, ``w_k`` the weights of feature
    group k (``w[starts[k]:starts[k + 1]]``)."""
    return _persp_expr(members(m_.w)[starts[k]:starts[k + 1]], m_.s[k], m_.mu[k])


def _lift_rule(m_, j):
    """rsvm_plus_primal's ``lift[j]``: ``w_j^2 <= s_j``."""
    return m_.w[j] ** 2 - m_.s[j] <= 0


def _v_def_rule(Xy, m_, j):
    """rsvm_plus_dual's ``v_def[j]``: ``v_j = sum_i alpha_i y_i x_ij``."""
    return m_.v[j] - linear_form(Xy[:, j], members(m_.alpha)) == 0


def _t_def_rule(D, m_, j):
    """rsvm_plus_dual's ``t_def[j]``: ``t_j = 1 + sum_p beta_p D_pj``."""
    return m_.t[j] - linear_form(D[:, j], members(m_.beta)) == 1


def _persp_dual_rule(m_, k):
    """rsvm_plus_dual's ``persp[k]``: ``v_k^2 <= u_k t_k``."""
    return _persp_expr([m_.v[k]], m_.u[k], m_.t[k])


def _env_hi_rule(m_, i):
    return m_.upper - m_.f[i] >= 0


def _env_lo_rule(m_, i):
    return m_.f[i] - m_.lower >= 0


def _radius_rule(m_, i, j):
    """rsvm_plus_kernel's ``radius[i, j]``: ``(f_i - f_j)^2 / 2 <= r``."""
    return 0.5 * (m_.f[i] - m_.f[j]) ** 2 - m_.r <= 0


def _rsoc(layout, con, w_positions, head_pos, other_pos):
    """The cone of ``con: ||w||^2 <= head * other``, a rotated cone (2 head (other/2) >= ||w||^2)."""
    idx = np.concatenate([[head_pos, other_pos], w_positions])
    vals = np.concatenate([[1.0, 0.5], np.ones(len(w_positions))])
    A = sp.csr_matrix((vals, (np.arange(len(idx)), idx)), shape=(len(idx), layout.n))
    return Cone("rsoc", A, np.zeros(len(idx)), con, 1.0)


def _kernel_blocks(kernels, X):
    """Feature blocks (factors of each kernel's Gram matrix) and the resolved kernels."""
    if isinstance(kernels, (str, dict, Kernel)) or not hasattr(kernels, "__iter__"):
        raise ParameterError("kernels must be a list of kernels: names ('linear', 'rbf', ...), "
                             "dicts such as {'kernel': 'rbf', 'gamma': 0.5}, or Kernel objects")
    kernels = list(kernels)
    if len(kernels) < 1:
        raise ParameterError("kernels must name at least one kernel")
    resolved, blocks = [], []
    for spec in kernels:
        if isinstance(spec, str):
            spec = {"kernel": spec}
        if isinstance(spec, dict):
            spec = dict(spec)
            name = spec.pop("kernel", "linear")
            if name == "precomputed":
                raise ParameterError("rsvm_mu_plus takes kernels by name (a precomputed kernel "
                                     "cannot be evaluated at new points)")
            kern = make_kernel(name, X, **spec)
        elif isinstance(spec, Kernel):
            kern = spec
        else:
            raise ParameterError("a kernel must be a name, a dict or a Kernel; "
                                 f"got {plain(spec)!r}")
        resolved.append(kern)
        blocks.append(kernel_factor(kern, X))
    return resolved, blocks


# ---------------------------------------------------------------------------------------
# R-SVM_mu+ and R-SVM+ (primal): w, b, xi, the margin, the radius family


class _FeatureModel(NamedTuple):
    """What R-SVM_mu+ and the R-SVM+ primal share, built by :func:`_feature_model`."""

    data: object                    # the validated Dataset
    block: object                   # the block filled: points, C, lam, J, w, b, xi
    layout: Layout                  # the variables' positions (w, b, xi so far)
    wpos: np.ndarray                # w's positions
    xi: object                      # the slack Var (None: hard margin)
    features: list                  # the feature blocks Phi_k (one per kernel or feature)
    sizes: list                     # their widths
    Phi_all: np.ndarray             # the blocks side by side
    kernels: list | None            # the kernels of the blocks (None: the features of X)
    pairs: tuple                    # the initial radius pairs (I, J)


def _feature_model(X, y, name, C, lam, kernels, pairs, block) -> _FeatureModel:
    data = validate(X, y)
    l = data.n_points
    if kernels is None:
        features, kern_list = column_blocks(data.X), None
    else:
        kern_list, features = _kernel_blocks(kernels, data.X)
    sizes = [Phi.shape[1] for Phi in features]
    Phi_all = np.hstack(features)
    I0, J0 = _initial_pairs(pairs, features, Phi_all, l)
    b = new_block(block, name)
    add_points(b, data)
    if C is not None:
        add_C(b, C)
    add_lam(b, lam)
    m = len(features)
    b.J = pyo.Set(initialize=range(m), ordered=True,
                  doc="features j" if kernels is None else "kernels k")
    if kernels is None:
        b.w = pyo.Var(b.J, initialize=0.0, doc="normal vector w of the separating hyperplane")
    else:
        comps = [(k, c) for k in range(m) for c in range(sizes[k])]
        b.WI = pyo.Set(initialize=comps, ordered=True,
                       doc="components (k, c): kernel k, coordinate c of its factor K_k = L_k L_k'")
        b.w = pyo.Var(b.WI, initialize=0.0,
                      doc="w_k in the factor coordinates of kernel k (f_i = sum_k L_k,i . w_k + b)")
    layout = Layout()
    wpos = layout.add(b.w)
    b.b = pyo.Var(initialize=0.0, doc="bias b")
    layout.add(b.b)
    xi = _slack(b, layout, l) if C is not None else None
    return _FeatureModel(data, b, layout, wpos, xi, features, sizes, Phi_all, kern_list, (I0, J0))


def _common_rows_and_objective(b, layout, data, Phi_all, xi):
    return [add_margin(b, layout, ("f", "f_i = w . x_i (the decision value minus b)"), Phi_all,
                       "w", data.y, xi)]


def _radius_family(b, record, cols, features, I0, J0):
    rpos = record_pos(record, "r")
    fixed = np.zeros(record.n_var_datas)
    fixed[rpos] = -1.0
    return add_pair_family(
        b, record, "radius", cols=cols, features=features, weight=0.5, fixed=fixed, upper=0.0,
        I=I0, J=J0, part_of_formulation=True,
        doc="radius[p]: 1/2 sum_k c_k ||phi_k(x_i) - phi_k(x_j)||^2 <= r for the pair p = (i, j)")


def record_pos(record, name):
    n = 0
    for v in record.variables:
        if v.local_name == name:
            return np.arange(n, n + len(v))
        n += len(v)
    raise KeyError(name)


def _objective_terms(b, layout, xi, extra_linear):
    linear = list(extra_linear) + [LinearTerm(layout.pos["r"], 1.0, Scale(1.0, "lam"))]
    expr = b.lam * b.r
    if xi is not None:
        linear.append(LinearTerm(layout.pos["xi"], 1.0, Scale(1.0, "C")))
        expr = expr + b.C * linear_form(np.ones(len(xi)), list(xi.values()))
    return linear, expr


@document_parameters(C=C_OR_NONE_DOC)
def rsvm_mu_plus(X, y, *, C=1.0, lam=1.0, kernels=None, pairs="all", block=None):
    r"""R-SVM_mu+: radius-margin SVM with a learned feature weighting (or kernel combination) mu.

    .. math::

        \min \; \tfrac12 \sum_k s_k + \lambda r + C \sum_i \xi_i \quad \text{s.t.} \quad
        y_i (w \cdot x_i + b) \ge 1 - \xi_i, \; w_k^2 \le s_k \mu_k, \;
        \tfrac12 \sum_k \mu_k (x_{ik} - x_{jk})^2 \le r \;(i<j), \; \textstyle\sum_k \mu_k = 1,
        \; \mu \ge 0, \; \xi \ge 0

    Problem class: SOCP (``s_k >= w_k^2 / mu_k`` is a rotated cone). With ``kernels``, ``w_k``
    is a vector in the coordinates of the factor of ``K_k = L_k L_k'`` and the pair rows use
    ``K_k,ii + K_k,jj - 2 K_k,ij``.

    Components:

    * ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``C`` (soft margin), ``lam``: mutable Params.
    * ``J``: the features j (the kernels k with ``kernels``); ``WI`` (``kernels`` only): the
      pairs (k, c), coordinate c of kernel k's factor.
    * ``w[j]`` (``w[k, c]`` with ``kernels``): the normal vector; ``b``: the bias;
      ``xi[i]`` (soft margin): the slacks, ``>= 0``.
    * ``mu[j]``: the weights, ``>= 0``; ``s[j]``: ``>= ||w_j||^2 / mu_j``; ``r``: the radius
      term, ``>= 0``.
    * ``f[i]``: ``w.x_i`` (lazy Expression); ``margin[i]``: ``y_i (f[i] + b) + xi[i] >= 1``
      (lazy Constraint).
    * ``simplex``: ``sum_j mu_j = 1``; ``persp[j]``: ``||w_j||^2 - s_j mu_j <= 0`` (the cones).
    * ``radius_pairs``: the pair numbers p in the model; ``radius[p]``:
      ``1/2 sum_k mu_k ||phi_k(x_i) - phi_k(x_j)||^2 - r <= 0`` for p = (i, j) (a pair family
      that grows under constraint generation).
    * ``objective``: ``1/2 sum_j s_j + lam r + C sum_i xi_i``, minimised.

    @parameters@

    References
    ----------
    H. Do, A. Kalousis, "Convex formulations of radius-margin based Support Vector
    Machines", ICML 2013, appendix eq. (3); ``formulations/radius_margin.md``; the catalogue page
    ``formulations/rsvm_mu_plus.md``.
    """
    name = "rsvm_mu_plus"
    fm = _feature_model(X, y, name, C, lam, kernels, pairs, block)
    data, b, layout, wpos, xi = fm.data, fm.block, fm.layout, fm.wpos, fm.xi
    features, sizes, Phi_all, kern_list, (I0, J0) = (fm.features, fm.sizes, fm.Phi_all,
                                                       fm.kernels, fm.pairs)
    m = len(features)
    b.mu = pyo.Var(b.J, bounds=(0, None), initialize=1.0 / m,
                   doc="weight mu_k >= 0 of feature (kernel) k, sum_k mu_k = 1")
    mupos = layout.add(b.mu)
    b.s = pyo.Var(b.J, bounds=(0, None), initialize=0.0, doc="s_k >= ||w_k||^2 / mu_k")
    spos = layout.add(b.s)
    b.r = pyo.Var(bounds=(0, None), initialize=0.0,
                  doc="r >= half the largest squared distance of two points under mu")
    layout.add(b.r)
    rows = _common_rows_and_objective(b, layout, data, Phi_all, xi)
    b.simplex = pyo.Constraint(expr=linear_form(np.ones(m), list(b.mu.values())) == 1,
                               doc="simplex: sum_k mu_k = 1")
    rows.append(RowGroup(b.simplex, [b.simplex],
                         place([(mupos, sp.csr_matrix(np.ones((1, m))))], 1, layout.n),
                         np.ones(1), np.ones(1)))
    starts = np.concatenate([[0], np.cumsum(sizes)])
    b.persp = pyo.Constraint(
        b.J, rule=functools.partial(_persp_group_rule, tuple(int(v) for v in starts)),
        doc="persp: ||w_k||^2 <= s_k mu_k (a rotated cone: s_k >= ||w_k||^2 / mu_k)")
    cones = [_rsoc(layout, b.persp[k], wpos[starts[k]:starts[k + 1]], spos[k], mupos[k])
             for k in range(m)]
    linear, expr = _objective_terms(b, layout, xi, [LinearTerm(spos, 0.5)])
    b.objective = pyo.Objective(
        expr=0.5 * linear_form(np.ones(m), list(b.s.values())) + expr, sense=pyo.minimize,
        doc="1/2 sum_k ||w_k||^2 / mu_k + lam r + C sum_i xi_i")
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=1,
                    linear=linear, rows=rows, cones=cones, problem_class="SOCP").seal()
    fam = _radius_family(b, record, mupos, features, I0, J0)
    b._svm = BuiltSVM(formulation=name, data=data, kernel=_kernel_for(kern_list), block=b,
                      record=record,
                      facts=RadiusFacts(variant="mu_plus", C=C, features=features, sizes=sizes,
                                        kernels=kern_list, family=fam))
    return b


@document_parameters(C=C_OR_NONE_DOC)
def rsvm_plus_primal(X, y, *, C=1.0, lam=1.0, pairs="all", block=None):
    r"""R-SVM+, primal: the exact Lagrange dual of the appendix's eq. (5)
    (``formulations/radius_margin.md``).

    .. math::

        \min \; \tfrac12 \|w\|^2 + \lambda r + C \sum_i \xi_i \quad \text{s.t.} \quad
        y_i (w \cdot x_i + b) \ge 1 - \xi_i, \; w_k^2 \le s_k, \;
        \tfrac12 \sum_k s_k (x_{ik} - x_{jk})^2 \le r \;(i<j), \; \xi \ge 0

    Problem class: QCQP (the lifting ``s_k >= w_k^2`` makes the pair rows linear and leaves d
    quadratic rows; exact, the coefficients ``(x_ik - x_jk)^2`` being ``>= 0``).

    Components:

    * ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``C`` (soft margin), ``lam``: mutable Params.
    * ``J``: the features j; ``w[j]``: the normal vector; ``b``: the bias; ``xi[i]`` (soft
      margin): the slacks, ``>= 0``.
    * ``s[j]``: ``>= 0``, the lifting of ``w_j^2``; ``r``: the radius term, ``>= 0``.
    * ``f[i]``: ``w.x_i`` (lazy Expression); ``margin[i]``: ``y_i (f[i] + b) + xi[i] >= 1``
      (lazy Constraint).
    * ``lift[j]``: ``w_j^2 - s_j <= 0``; ``ww``: ``||w||^2`` (lazy Expression).
    * ``radius_pairs``: the pair numbers p in the model; ``radius[p]``:
      ``1/2 sum_k s_k (x_ik - x_jk)^2 - r <= 0`` for p = (i, j) (a pair family).
    * ``objective``: ``ww/2 + lam r + C sum_i xi_i``, minimised.

    @parameters@

    References
    ----------
    H. Do, A. Kalousis, "Convex formulations of radius-margin based Support Vector
    Machines", ICML 2013, appendix eq. (5)/(7) (the dual; this primal derived in
    ``formulations/radius_margin.md``); the catalogue page ``formulations/rsvm_plus_primal.md``.
    """
    name = "rsvm_plus_primal"
    fm = _feature_model(X, y, name, C, lam, None, pairs, block)
    data, b, layout, wpos, xi = fm.data, fm.block, fm.layout, fm.wpos, fm.xi
    features, Phi_all, (I0, J0) = fm.features, fm.Phi_all, fm.pairs
    d = data.n_features
    b.s = pyo.Var(b.J, bounds=(0, None), initialize=0.0, doc="s_j >= w_j^2")
    spos = layout.add(b.s)
    b.r = pyo.Var(bounds=(0, None), initialize=0.0,
                  doc="r >= 1/2 sum_k w_k^2 (x_ik - x_jk)^2 for every pair")
    layout.add(b.r)
    rows = _common_rows_and_objective(b, layout, data, Phi_all, xi)
    b.lift = pyo.Constraint(b.J, rule=_lift_rule,
                            doc="lift: w_j^2 <= s_j")
    qrows = []
    for j in range(d):
        lin = np.zeros(layout.n)
        lin[spos[j]] = -1.0
        qrows.append(QuadRow(b.lift[j], [QuadBlock(wpos[j:j + 1], diag=np.ones(1))], lin, 0.0))
    sum_of_squares(b, "ww", b.w, doc="||w||^2")
    linear, expr = _objective_terms(b, layout, xi, [])
    b.objective = pyo.Objective(expr=0.5 * b.ww + expr, sense=pyo.minimize,
                                doc="1/2 ||w||^2 + lam r + C sum_i xi_i")
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=1,
                    linear=linear,
                    quadratic=[QuadTerm(QuadBlock(wpos, diag=np.ones(d)), Scale(0.5))],
                    rows=rows, quad_rows=qrows, problem_class="QCQP").seal()
    fam = _radius_family(b, record, spos, features, I0, J0)
    b._svm = BuiltSVM(formulation=name, data=data, kernel=Kernel("linear"), block=b,
                      record=record, facts=RadiusFacts(variant="plus_primal", C=C,
                                                       features=features, family=fam))
    return b


#: the dual's ``pairs`` (its variables, not rows: no seed)
_DUAL_PAIRS_DOC = """    pairs : "all" or (I, J), default "all"
        Every pair (l(l-1)/2 variables beta), or index arrays with ``I < J``: the dual
        restricted to those pairs, a relaxation of the primal's radius, exact when they hold
        the active pairs. ``"seed"`` is refused (constraint generation is for the primals)."""


@document_parameters(C=C_OR_NONE_DOC, pairs=_DUAL_PAIRS_DOC)
def rsvm_plus_dual(X, y, *, C=1.0, lam=1.0, pairs="all", block=None):
    r"""R-SVM+, dual (appendix eq. (5)/(7)) with the auxiliary ``t_k``: concave in (alpha, t).

    .. math::

        \max \; e'\alpha - \tfrac12 \sum_k u_k \quad \text{s.t.} \quad v_k^2 \le u_k t_k, \;
        v = X' D_y \alpha, \; t_k = 1 + \sum_{p=(i,j)} \beta_p (x_{ik} - x_{jk})^2, \;
        \textstyle\sum_p \beta_p = \lambda, \; y'\alpha = 0, \; 0 \le \alpha \le C, \; \beta \ge 0

    Problem class: SOCP (``u_k >= v_k^2 / t_k``, a rotated cone).

    Components:

    * ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``C`` (soft margin), ``lam``: mutable Params.
    * ``J``: the features j; ``P``: the pairs p; ``pair_i[p]``, ``pair_j[p]``: its points,
      ``pair_i[p] < pair_j[p]`` (Params).
    * ``alpha[i]``: bounds [0, C] ([0, inf) for ``C=None``); ``beta[p]``: ``>= 0``.
    * ``v[j]``: ``X'D_y alpha``; ``t[j]``: ``>= 1``; ``u[j]``: ``>= v_j^2 / t_j``, ``>= 0``.
    * ``v_def[j]``: ``v_j = sum_i alpha_i y_i x_ij``; ``t_def[j]``:
      ``t_j = 1 + sum_p beta_p (x_ij - x_i'j)^2`` over the pairs p = (i, i').
    * ``beta_sum``: ``sum_p beta_p = lam``; ``balance``: ``sum_i y_i alpha_i = 0``.
    * ``persp[j]``: ``v_j^2 - u_j t_j <= 0`` (the cones).
    * ``objective``: ``sum(alpha) - 1/2 sum_j u_j``, maximised.

    @parameters@

    References
    ----------
    H. Do, A. Kalousis, "Convex formulations of radius-margin based Support Vector
    Machines", ICML 2013, appendix eq. (5)/(7); the catalogue page
    ``formulations/rsvm_plus_dual.md``.
    """
    name = "rsvm_plus_dual"
    data = validate(X, y)
    l, d, yv = data.n_points, data.n_features, data.y
    if isinstance(pairs, str) and pairs == "seed":
        raise ParameterError("rsvm_plus_dual takes pairs='all' or explicit (I, J) arrays "
                             "(constraint generation is for the primal forms)")
    features = column_blocks(data.X)
    PI, PJ = _initial_pairs(pairs, features, data.X, l)
    D = pair_sqdist(features, PI, PJ)           # npairs x d: (x_ik - x_jk)^2
    b = new_block(block, name)
    add_points(b, data)
    if C is not None:
        add_C(b, C)
    add_lam(b, lam)
    b.J = pyo.Set(initialize=range(d), ordered=True, doc="features j")
    b.P = pyo.Set(initialize=range(PI.size), ordered=True, doc="pairs p = (pair_i[p], pair_j[p])")
    b.pair_i = pyo.Param(b.P, initialize=dict(enumerate(PI.tolist())), doc="first point of pair p")
    b.pair_j = pyo.Param(b.P, initialize=dict(enumerate(PJ.tolist())), doc="second point of pair p")
    b.alpha = pyo.Var(b.I, bounds=(0, b.C if C is not None else None), initialize=0.0,
                      doc="alpha_i: multiplier of point i's margin")
    b.beta = pyo.Var(b.P, bounds=(0, None), initialize=0.0,
                     doc="beta_p: multiplier of the radius row of pair p")
    b.v = pyo.Var(b.J, initialize=0.0, doc="v = X' D_y alpha")
    b.t = pyo.Var(b.J, bounds=(1, None), initialize=1.0,
                  doc="t_k = 1 + sum_p beta_p (x_ik - x_jk)^2")
    b.u = pyo.Var(b.J, bounds=(0, None), initialize=0.0, doc="u_k >= v_k^2 / t_k")
    layout = Layout()
    apos, bpos = layout.add(b.alpha), layout.add(b.beta)
    vpos, tpos, upos = layout.add(b.v), layout.add(b.t), layout.add(b.u)
    al, bl = list(b.alpha.values()), list(b.beta.values())
    Xy = data.X * yv[:, None]
    b.v_def = pyo.Constraint(b.J, rule=functools.partial(_v_def_rule, Xy),
                             doc="v_def: v_j = sum_i alpha_i y_i x_ij")
    b.t_def = pyo.Constraint(b.J, rule=functools.partial(_t_def_rule, D),
                             doc="t_def: t_j = 1 + sum_p beta_p (x_ij - x_i'j)^2")
    b.beta_sum = pyo.Constraint(expr=linear_form(np.ones(PI.size), bl) == b.lam,
                                doc="beta_sum: sum_p beta_p = lam")
    rows = [
        RowGroup(b.v_def, list(b.v_def.values()),
                 place([(vpos, sp.identity(d, format="csr")), (apos, sp.csr_matrix(-Xy.T))],
                       d, layout.n), np.zeros(d), np.zeros(d)),
        RowGroup(b.t_def, list(b.t_def.values()),
                 place([(tpos, sp.identity(d, format="csr")), (bpos, sp.csr_matrix(-D.T))],
                       d, layout.n), np.ones(d), np.ones(d)),
        RowGroup(b.beta_sum, [b.beta_sum],
                 place([(bpos, sp.csr_matrix(np.ones((1, PI.size))))], 1, layout.n),
                 np.ones(1), np.ones(1), scale=Scale(1.0, "lam")),
        add_balance(b, layout, b.alpha, yv),
    ]
    b.persp = pyo.Constraint(b.J, rule=_persp_dual_rule,
                             doc="persp: v_k^2 <= u_k t_k (a rotated cone: u_k >= v_k^2 / t_k)")
    cones = [_rsoc(layout, b.persp[k], vpos[k:k + 1], upos[k], tpos[k]) for k in range(d)]
    b.objective = pyo.Objective(
        expr=linear_form(np.ones(l), al) - 0.5 * linear_form(np.ones(d), list(b.u.values())),
        sense=pyo.maximize, doc="e'alpha - 1/2 sum_k v_k^2 / t_k")
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=-1,
                    linear=[LinearTerm(apos, 1.0), LinearTerm(upos, -0.5)], rows=rows,
                    cones=cones, problem_class="SOCP").seal()
    b._svm = BuiltSVM(formulation=name, data=data, kernel=Kernel("linear"), block=b,
                      record=record, facts=RadiusFacts(variant="plus_dual", C=C,
                                                       features=features, I=PI, J=PJ, D=D))
    return b


@document_parameters(C=C_OR_NONE_DOC)
def rsvm_plus_kernel(X, y, *, C=1.0, lam=1.0, kernel="linear", gamma="scale", degree=3,
                     coef0=0.0, radius="compact", block=None):
    r"""Kernelized R-SVM+ by the representer theorem (appendix eq. (8); soft margin adds C sum xi).

    .. math::

        \min \; a'Ka + \tfrac{\lambda}{2} r + C \sum_i \xi_i \quad \text{s.t.} \quad
        y_i (f_i + b) \ge 1 - \xi_i, \; f = Ka, \; \tfrac12 (f_i - f_j)^2 \le r \;(i<j)

    Problem class: QP with ``radius="compact"`` (the default, exact: ``lower <= f_i <= upper``
    and ``r = (upper - lower)^2 / 2``, O(l) rows); QCQP with ``radius="pairwise"`` (the
    literal l(l-1)/2 quadratic rows, for teaching and small l). Built through a factor
    ``K = L L'`` (pivoted Cholesky of full column rank; ``L = X`` for the linear kernel, so
    that ``z = w``): ``z = L'a``, ``a'Ka = ||z||^2``, ``f = L z``. Note: its radius is the
    spread of the projections ``w.(x_i - x_j)``, not R-SVM+'s ``sum_k w_k^2 (x_ik - x_jk)^2``,
    and lam weighs ``r/2`` (``formulations/radius_margin.md``).

    Components:

    * ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``C`` (soft margin), ``lam``: mutable Params.
    * ``R``: the factor components k; ``z[k]``: ``z = L'a``; ``b``: the bias; ``xi[i]`` (soft
      margin): the slacks, ``>= 0``.
    * ``f[i]``: the decision values (variables); ``f_def[i]``: ``f_i = (L z)_i`` (lazy
      Constraint: the dense factor appears once).
    * ``margin[i]``: ``y_i (f[i] + b) + xi[i] >= 1`` (lazy Constraint).
    * compact: ``upper``, ``lower`` (variables); ``env_hi[i]``: ``upper - f_i >= 0``;
      ``env_lo[i]``: ``f_i - lower >= 0``; ``r``: the Expression ``(upper - lower)^2 / 2``.
    * pairwise: ``r``: a variable, ``>= 0``; ``pairs``: the Set of pairs i < j;
      ``radius[i, j]``: ``(f_i - f_j)^2 / 2 - r <= 0``.
    * ``zz``: ``||z||^2 = a'Ka`` (lazy Expression).
    * ``objective``: ``zz + lam/2 r + C sum_i xi_i``, minimised.

    @parameters@

    References
    ----------
    H. Do, A. Kalousis, "Convex formulations of radius-margin based Support Vector
    Machines", ICML 2013, appendix eq. (8); ``formulations/radius_margin.md`` (the compact
    form); the catalogue page ``formulations/rsvm_plus_kernel.md``.
    """
    check_choice("radius", radius, RADIUS)
    name = "rsvm_plus_kernel"
    data, kern, K = prepare(X, y, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                            need_gram=kernel != "linear")
    l = data.n_points
    L = kernel_factor(kern, data.X, K) if kern.name != "precomputed" else factor(K)
    if kern.is_linear:
        L = np.array(L, dtype=float)
    rank = L.shape[1]
    b = new_block(block, name)
    add_points(b, data)
    if C is not None:
        add_C(b, C)
    add_lam(b, lam)
    b.R = pyo.Set(initialize=range(rank), ordered=True,
                  doc="factor components k (K = L L', L of full column rank)")
    b.z = pyo.Var(b.R, initialize=0.0, doc="z = L'a: a'Ka = ||z||^2 and f = Ka = L z")
    layout = Layout()
    zpos = layout.add(b.z)
    b.b = pyo.Var(initialize=0.0, doc="bias b")
    layout.add(b.b)
    xi = _slack(b, layout, l) if C is not None else None
    linear, quadratic = [], [QuadTerm(QuadBlock(zpos, diag=np.ones(rank)))]
    qrows = []
    # the decision values as variables: the dense factor appears once (f_def), the margin
    # and radius rows are sparse in f (three copies of L cost the solvers ~2x at l = 700)
    b.f = pyo.Var(b.I, initialize=0.0, doc="decision values f_i = (L z)_i = (K a)_i")
    fpos = layout.add(b.f)
    zl = list(b.z.values())
    b.f_def = LazyConstraint(b.I, recipe=lambda i: (_f_def_relation, (b.f[i], L, zl, i)),
                             doc="f_def: f_i = (L z)_i")
    rows = [RowGroup(b.f_def, list(b.f_def.values()),
                     place([(fpos, sp.identity(l, format="csr")), (zpos, sp.csr_matrix(-L))],
                           l, layout.n), np.zeros(l), np.zeros(l))]
    if radius == "compact":
        quadratic.append(_compact_radius(b, layout, rows, data, fpos, xi))
    else:
        b.r = pyo.Var(bounds=(0, None), initialize=0.0, doc="r >= (f_i - f_j)^2 / 2 for every pair")
        rpos = layout.add(b.r)
        rows.append(add_margin(b, layout, b.f, sp.identity(l, format="csr"), "f", data.y, xi))
        I, J = all_pairs(l)
        b.pairs = pyo.Set(initialize=list(zip(I.tolist(), J.tolist())), dimen=2, ordered=True,
                          doc="pairs i < j")
        b.radius = pyo.Constraint(
            b.pairs, rule=_radius_rule,
            doc="radius[i, j]: (f_i - f_j)^2 / 2 <= r")
        H = np.array([[0.5, -0.5], [-0.5, 0.5]])
        lin = np.zeros(layout.n)
        lin[rpos] = -1.0
        for (i, j), cd in zip(zip(I.tolist(), J.tolist()), b.radius.values()):
            qrows.append(QuadRow(cd, [QuadBlock(fpos[[i, j]], matrix=H)], lin, 0.0))
        linear.append(LinearTerm(rpos, 0.5, Scale(1.0, "lam")))
    sum_of_squares(b, "zz", b.z, doc="a'Ka = ||z||^2")
    expr = b.zz + 0.5 * b.lam * b.r
    if xi is not None:
        linear.append(LinearTerm(layout.pos["xi"], 1.0, Scale(1.0, "C")))
        expr = expr + b.C * linear_form(np.ones(l), list(xi.values()))
    b.objective = pyo.Objective(expr=expr, sense=pyo.minimize,
                                doc="a'Ka + lam/2 r + C sum_i xi_i")
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=1,
                    linear=linear, quadratic=quadratic, rows=rows, quad_rows=qrows,
                    problem_class="QP" if radius == "compact" else "QCQP").seal()
    b._svm = BuiltSVM(formulation=name, data=data, kernel=kern, block=b, record=record,
                      K=K, L=L, facts=RadiusFacts(variant="kernel", C=C, radius=radius))
    return b


def _compact_radius(b, layout, rows: list, data, fpos, xi) -> QuadTerm:
    """The compact radius rows of ``rsvm_plus_kernel`` (exact): the ends ``upper``,
    ``lower`` of the decision values, ``env_hi[i]: f_i <= upper``, ``env_lo[i]: f_i >=
    lower``, the margin rows (appended to ``rows``) and ``r = (upper - lower)^2 / 2``;
    returns the objective's term ``lam/2 r``."""
    l = data.n_points
    b.upper = pyo.Var(initialize=0.0, doc="upper end of the decision values: f_i <= upper")
    b.lower = pyo.Var(initialize=0.0, doc="lower end of the decision values: f_i >= lower")
    up, lo = layout.add(b.upper), layout.add(b.lower)
    rows.append(add_margin(b, layout, b.f, sp.identity(l, format="csr"), "f", data.y, xi))
    b.env_hi = pyo.Constraint(b.I, rule=_env_hi_rule, doc="env_hi: f_i <= upper")
    b.env_lo = pyo.Constraint(b.I, rule=_env_lo_rule, doc="env_lo: f_i >= lower")
    one = sp.csr_matrix(np.ones((l, 1)))
    eye = sp.identity(l, format="csr")
    rows.append(RowGroup(b.env_hi, list(b.env_hi.values()),
                         place([(up, one), (fpos, -eye)], l, layout.n),
                         np.zeros(l), np.full(l, INF)))
    rows.append(RowGroup(b.env_lo, list(b.env_lo.values()),
                         place([(fpos, eye), (lo, -one)], l, layout.n),
                         np.zeros(l), np.full(l, INF)))
    b.r = pyo.Expression(expr=0.5 * (b.upper - b.lower) ** 2,
                         doc="r = (upper - lower)^2 / 2 = max_{i<j} (f_i - f_j)^2 / 2 at the optimum")
    return QuadTerm(QuadBlock(np.concatenate([up, lo]),
                              matrix=np.array([[1.0, -1.0], [-1.0, 1.0]])), Scale(0.25, "lam"))


def _f_def_relation(fi, L, zl, i):
    return fi - linear_form(L[i], zl) == 0


def _kernel_for(kern_list):
    return Kernel("linear") if kern_list is None else KernelSum(tuple(kern_list),
                                                                (1.0,) * len(kern_list))


# ---------------------------------------------------------------------------------------
# Post-processing


def _active(y, fvals, b, xi, tol):
    """Points whose margin row is active (candidates for alpha > 0)."""
    m = y * (fvals + b) + (0.0 if xi is None else xi)
    return m - 1.0 <= ACTIVE_MARGIN_REL * np.maximum(1.0, np.abs(fvals)) + (tol or 0.0) * 10


def _duals(ctx, comp):
    vals = [ctx.dual(cd) for cd in comp.values()]
    if any(v is None for v in vals):
        return None
    return np.array(vals, dtype=float)


def recover_multipliers(design, target, y, active, xi, C, xi_thr, extra_cols=None,
                        extra_sum=None):
    """``(alpha, gamma)`` from stationarity by bounded least squares: ``design @ (y * alpha)
    + extra_cols @ gamma = target``, ``y'alpha = 0``, ``sum gamma = extra_sum`` (when there
    are extra columns), ``alpha_i = 0`` off ``active``, ``alpha_i = C`` where ``xi_i > xi_thr``,
    ``0 <= alpha <= C``, ``gamma >= 0``. Used where a backend reports no multipliers."""
    l = y.shape[0]
    alpha = np.zeros(l)
    at_c = np.zeros(l, dtype=bool)
    if C is not None and xi is not None:
        at_c = active & (xi > xi_thr)
        alpha[at_c] = C
    unk = np.flatnonzero(active & ~at_c)
    D = design * y[None, :]
    ne = 0 if extra_cols is None else extra_cols.shape[1]
    top = np.hstack([D[:, unk]] + ([extra_cols] if ne else []))
    rows = [top, np.concatenate([y[unk], np.zeros(ne)])[None, :]]
    rhs = [target - D[:, at_c] @ alpha[at_c], [-(y[at_c] @ alpha[at_c])]]
    if ne:
        rows.append(np.concatenate([np.zeros(unk.size), np.ones(ne)])[None, :])
        rhs.append([extra_sum])
    M, r = np.vstack(rows), np.concatenate(rhs)
    ub = np.concatenate([np.full(unk.size, np.inf if C is None else C), np.full(ne, np.inf)])
    if M.shape[1] == 0:
        return alpha, np.zeros(0)
    from scipy.optimize import lsq_linear   # (0.6 s to import: only when needed)

    sol = lsq_linear(M, r, bounds=(np.zeros(M.shape[1]), ub), method="bvls")
    alpha[unk] = sol.x[:unk.size]
    return alpha, sol.x[unk.size:]


def extract(block, ctx) -> Solution:
    svm = block._svm
    variant = svm.facts.variant
    return {"mu_plus": _extract_mu_plus, "plus_primal": _extract_plus_primal,
            "plus_dual": _extract_plus_dual, "kernel": _extract_kernel}[variant](block, svm, ctx)


def current_C(svm):
    """C as the model holds it now (a mutable Param; None for the hard margin)."""
    if svm.facts.C is None:
        return None
    return float(pyo.value(svm.block.C))


def _objective(svm, block, ctx):
    return block_objective(svm, block, ctx)


def _finish(svm, block, ctx, *, w, b, alpha, dual_coef, xi, details, extra, kernel=None,
            thr_scale=None, objective=None, diag=None):
    data = svm.data
    C = current_C(svm)
    thr = support_threshold(alpha_scale(alpha) if thr_scale is None else thr_scale, ctx.tol)
    support = np.flatnonzero(np.abs(alpha) > thr)
    dual_coef = np.where(np.abs(alpha) > thr, dual_coef, 0.0)
    extra["support_threshold"] = thr
    if not ctx.verified:
        extra["diagnostics"] = f"not computed: the model solved is not the formulation ({ctx.reason})"
    kern = svm.kernel if kernel is None else kernel
    sv = data.X[support] if kern.name != "precomputed" else np.zeros((support.size, 0))
    margin = (1.0 / np.linalg.norm(w)) if w is not None and np.linalg.norm(w) > 0 else None
    return Solution(
        formulation=svm.formulation, solver=ctx.solver, status=ctx.status, w=w, b=float(b),
        alpha=alpha, dual_coef=dual_coef, xi=np.zeros(data.n_points) if xi is None else xi,
        support=support, support_vectors=sv,
        objective=_objective(svm, block, ctx) if objective is None else objective,
        kernel=kern, classes=data.classes, margin=margin, C=C, details=details,
        time=ctx.time, interface=ctx.interface, path=ctx.path, extra=extra, **(diag or {}))


def _primal_common(block, svm, ctx):
    data = svm.data
    y = data.y
    w = var_array(block.w)
    bias = float(block.b.value)
    xi = np.clip(var_array(block.xi), 0.0, None) if svm.facts.C is not None else None
    Phi = np.hstack(svm.facts.features)
    fvals = Phi @ w
    active = _active(y, fvals, bias, xi, ctx.tol)
    alpha = _duals(ctx, block.margin) if ctx.verified else None
    return data, y, w, bias, xi, fvals, active, alpha


def _xi_thr(C, tol):
    return support_threshold(1.0, tol)


def _extract_mu_plus(block, svm, ctx):
    data, y, w, bias, xi, fvals, active, alpha = _primal_common(block, svm, ctx)
    C = current_C(svm)
    mu = np.clip(var_array(block.mu), 0.0, None)
    sizes = svm.facts.sizes
    features = svm.facts.features
    extra = {"variant": "mu_plus"}
    if alpha is not None:
        alpha = np.clip(alpha, 0.0, None)
        extra["alpha_source"] = "multipliers of the margin rows"
    else:
        # stationarity in w_k: w_k = mu_k Phi_k' (y * alpha), on the blocks with mu_k > 0
        keep = mu > support_threshold(1.0, ctx.tol)
        design, target, start = [], [], 0
        for k, (Phi, n) in enumerate(zip(features, sizes)):
            if keep[k]:
                design.append(Phi.T)
                target.append(w[start:start + n] / mu[k])
            start += n
        alpha, _ = recover_multipliers(np.vstack(design), np.concatenate(target), y, active,
                                       xi, C, _xi_thr(C, ctx.tol))
        extra["alpha_source"] = "stationarity w_k = mu_k Phi_k'(y alpha), bounded least squares"
    r = float(block.r.value)
    fam = svm.facts.family
    details = RadiusDetails(r=r, lam=float(pyo.value(block.lam)), mu=mu, beta=_pair_duals(ctx, fam),
                            pairs=np.column_stack([fam.I, fam.J]))
    kern_list = svm.facts.kernels
    if kern_list is None:
        return _finish(svm, block, ctx, w=w, b=bias, alpha=alpha, dual_coef=y * alpha, xi=xi,
                       details=details, extra=extra)
    # several kernels: f(x) = sum_i alpha_i y_i sum_k mu_k k_k(x_i, x) + b
    extra["w_blocks"] = [w[s:s + n].copy() for s, n in zip(np.cumsum([0] + sizes[:-1]), sizes)]
    return _finish(svm, block, ctx, w=None, b=bias, alpha=alpha, dual_coef=y * alpha, xi=xi,
                   details=details, extra=extra, kernel=KernelSum(tuple(kern_list), tuple(mu)))


def _pair_duals(ctx, fam):
    if fam.size == 0:
        return None
    vals = [ctx.dual(fam.component[k]) for k in range(fam.size)]
    if any(v is None for v in vals):
        return None
    return np.clip(-np.array(vals, dtype=float), 0.0, None)


def _extract_plus_primal(block, svm, ctx):
    data, y, w, bias, xi, fvals, active, alpha = _primal_common(block, svm, ctx)
    C = current_C(svm)
    lam = float(pyo.value(block.lam))
    fam = svm.facts.family
    beta = _pair_duals(ctx, fam) if ctx.verified else None
    extra = {"variant": "plus_primal"}
    r = float(block.r.value)
    D = pair_sqdist(svm.facts.features, fam.I, fam.J)
    if alpha is not None and beta is not None:
        alpha = np.clip(alpha, 0.0, None)
        extra["alpha_source"] = "multipliers of the margin and radius rows"
    else:
        # stationarity: w_k (1 + sum_p beta_p D_pk) = sum_i alpha_i y_i x_ik, on the active pairs
        body = 0.5 * D @ (w ** 2)
        act = np.flatnonzero(body >= r - ACTIVE_MARGIN_REL * max(1.0, abs(r)))
        alpha, b_act = recover_multipliers(data.X.T, w, y, active, xi, C, _xi_thr(C, ctx.tol),
                                           extra_cols=-(w[:, None] * D[act].T), extra_sum=lam)
        beta = np.zeros(fam.size)
        beta[act] = b_act
        extra["alpha_source"] = "stationarity, bounded least squares over alpha and beta"
    t = 1.0 + D.T @ beta
    v = data.X.T @ (y * alpha)
    dual_obj = float(alpha.sum() - 0.5 * np.sum(v ** 2 / t))
    details = RadiusDetails(r=r, lam=lam, mu=None, beta=beta, pairs=np.column_stack([fam.I, fam.J]))
    diag = None
    if ctx.verified:
        primal = _objective(svm, block, ctx)
        diag = dict(primal_objective=primal, dual_objective=dual_obj,
                    duality_gap=(primal - dual_obj) / max(1.0, abs(primal)),
                    kkt={"stationarity_w": float(np.max(np.abs(w * t - v), initial=0.0)),
                         "balance": float(abs(y @ alpha)), "beta_sum": float(abs(beta.sum() - lam))})
    return _finish(svm, block, ctx, w=w, b=bias, alpha=alpha, dual_coef=y * alpha, xi=xi,
                   details=details, extra=extra, diag=diag)


def _extract_plus_dual(block, svm, ctx):
    data = svm.data
    y, X = data.y, data.X
    C = current_C(svm)
    alpha = np.clip(var_array(block.alpha), 0.0, None)
    beta = np.clip(var_array(block.beta), 0.0, None)
    lam = float(pyo.value(block.lam))
    D = svm.facts.D
    t = 1.0 + D.T @ beta
    thr = support_threshold(alpha_scale(alpha), ctx.tol)
    margin = SOFT_L1 if C is not None else HARD   # (the plain SVM for fixed t)
    extra = {"variant": "plus_dual", "polished": False}
    if ctx.verified:
        # for fixed t the dual is a plain SVM with the kernel X diag(1/t) X': polish alpha on
        # its active set (kept only if it lowers that SVM's KKT residual)
        Xs = X / np.sqrt(t)[None, :]
        inner = SimpleNamespace(data=SimpleNamespace(y=y, X=Xs), K=None, L=None,
                                kernel_times=lambda u: Xs @ (Xs.T @ u),
                                kernel_rows_times=lambda rows, u: Xs[rows] @ (Xs.T @ u))
        alpha, extra["polished"] = polish_dual(inner, margin, alpha, C, thr)
    v = X.T @ (y * alpha)
    w = v / t
    # the multipliers of the dual are the primal's variables: -w_k of v_def[k], b of
    # balance, r of beta_sum (sensitivity convention); taken when the backend reports them
    wd, bm, rm = _duals(ctx, block.v_def), ctx.dual(block.balance), ctx.dual(block.beta_sum)
    from_multipliers = ctx.verified and wd is not None and bm is not None and rm is not None
    if from_multipliers:
        w = -wd
    extra["w_source"] = "multipliers of v_def" if from_multipliers else "v / t"
    fvals = X @ w
    bias = (bm if from_multipliers else
            bias_from_kkt(margin, alpha, y, fvals, C if C is not None else np.inf, thr))
    extra["b_multiplier"] = bm
    xi = np.maximum(0.0, 1.0 - y * (fvals + bias)) if C is not None else None
    # the primal's radius: the largest 1/2 sum_k w_k^2 (x_ik - x_jk)^2 over the pairs of the
    # model -- the dual of the primal restricted to those radius rows (every pair, or the
    # explicit (I, J) given: then its optimum is a lower bound on the full problem's)
    r = 0.5 * float(np.max(D @ (w * w), initial=0.0))
    l = len(y)
    if D.shape[0] < l * (l - 1) // 2:
        extra["pairs"] = (f"the radius rows of the {D.shape[0]} pairs given only (of "
                          f"{l * (l - 1) // 2}): the certificate is that of this restricted "
                          "problem, whose optimum is a lower bound on the full problem's")
    primal = 0.5 * float(w @ w) + lam * r + (C * float(xi.sum()) if xi is not None else 0.0)
    objective = _objective(svm, block, ctx)
    diag = None
    if ctx.verified:
        diag = dict(primal_objective=primal, dual_objective=objective,
                    duality_gap=(primal - objective) / max(1.0, abs(primal)),
                    kkt={"balance": float(abs(y @ alpha)), "beta_sum": float(abs(beta.sum() - lam))})
    details = RadiusDetails(r=r, lam=lam, mu=None, beta=beta,
                            pairs=np.column_stack([svm.facts.I, svm.facts.J]))
    return _finish(svm, block, ctx, w=w, b=bias, alpha=alpha, dual_coef=y * alpha, xi=xi,
                   details=details, extra=extra, objective=objective, diag=diag)


def _extract_kernel(block, svm, ctx):
    data = svm.data
    y = data.y
    C = current_C(svm)
    z = var_array(block.z)
    L = svm.L
    fvals = L @ z
    bias = float(block.b.value)
    xi = np.clip(var_array(block.xi), 0.0, None) if C is not None else None
    a, source = _representer(L, z, y, fvals, bias, xi, ctx.tol)
    r = float(pyo.value(block.r))
    extra = {"variant": "kernel", "radius": svm.facts.radius,
             "f": fvals, "spread": float(fvals.max() - fvals.min()), "representer": source}
    w = z.copy() if svm.kernel.is_linear else None
    details = RadiusDetails(r=r, lam=float(pyo.value(block.lam)), mu=None, beta=None, pairs=None)
    scale = max(float(np.max(np.abs(a), initial=0.0)), 1.0)
    return _finish(svm, block, ctx, w=w, b=bias, alpha=a, dual_coef=a, xi=xi, details=details,
                   extra=extra, thr_scale=scale * 1e-3)


def _representer(L, z, y, fvals, bias, xi, tol):
    """The representer coefficients ``a`` of the kernel form (``L'a = z``, so that
    ``K a = L z = f``) and where they come from.

    Stationarity gives ``a = (y*alpha + mu_lo - mu_hi) / 2`` with the multipliers of the
    margin rows (alpha) and of the envelope rows (mu): ``a`` lives on the points whose margin
    row is active or whose decision value is the largest or the smallest. ``a`` is the
    least-norm solution of ``L_S'a_S = z`` on that set S, zero elsewhere, when it reproduces
    the decision values (max |L (L_S'a_S - z)| within 1e-7 of their scale, plus 10 tol);
    otherwise the least-norm ``a`` over all points (with a rank-deficient K, such as the
    linear kernel's when l > d, that one is dense: every point would be a support vector).
    """
    slack = 10.0 * (tol or 0.0)
    scale = max(1.0, float(np.max(np.abs(fvals), initial=0.0)))
    near = ACTIVE_MARGIN_REL * scale + slack
    on = _active(y, fvals, bias, xi, tol) | (fvals >= fvals.max() - near) \
        | (fvals <= fvals.min() + near)
    S = np.flatnonzero(on)
    if S.size:
        aS = np.linalg.lstsq(L[S].T, z, rcond=None)[0]
        off = float(np.max(np.abs(L @ (L[S].T @ aS - z)), initial=0.0))
        if off <= 1e-7 * scale + slack:
            a = np.zeros(L.shape[0])
            a[S] = aS
            return a, (f"least-norm on the {S.size} points on a margin or at the largest or "
                       "smallest decision value")
    return (np.linalg.lstsq(L.T, z, rcond=None)[0],
            "least-norm over all points (the active points did not reproduce f)")


def explain_failure(svm, status: Status, message: str):
    if svm.facts.C is None and status in (Status.infeasible, Status.infeasible_or_unbounded):
        return InfeasibleError(
            f"the hard-margin {svm.formulation} model is {status.value.replace('_', ' ')}: the "
            "data are not separable (with this feature weighting). Pass C=... for the soft "
            "margin", status)
    return None


ORDER = 30


class RadiusMarginSVM(Formulation):
    """A radius-margin SVM: ``C=None`` (or ``inf``) builds its own hard margin; it learns the
    radius term (and R-SVM_mu+ the weights ``mu``) beside w and b."""

    family = "radius_margin"
    C_none_is_hard = True
    learned = ("lam", "r", "mu")
    details = RadiusDetails

    def extract(self, block, ctx) -> Solution:
        return extract(block, ctx)

    def explain_failure(self, svm, status, message: str):
        return explain_failure(svm, status, message)


register(RadiusMarginSVM(
    name="rsvm_mu_plus", builder=rsvm_mu_plus, problem_class="SOCP",
    summary="R-SVM_mu+: radius-margin SVM learning a feature weighting (or kernel combination) "
            "mu, jointly convex (SOCP)."))
register(RadiusMarginSVM(
    name="rsvm_plus_primal", builder=rsvm_plus_primal, problem_class="QCQP",
    summary="R-SVM+: radius-margin SVM, primal form (QCQP; linear radius rows per pair)."))
register(RadiusMarginSVM(
    name="rsvm_plus_dual", builder=rsvm_plus_dual, form="dual", problem_class="SOCP",
    all_pairs_default=True,
    summary="R-SVM+: radius-margin SVM, dual form with auxiliary t_k (SOCP)."))
register(RadiusMarginSVM(
    name="rsvm_plus_kernel", builder=rsvm_plus_kernel, problem_class="QP",
    summary="Kernelized R-SVM+ by the representer theorem: compact radius (QP, default) or "
            "literal pairwise rows (QCQP)."))

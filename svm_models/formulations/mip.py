"""The mixed-integer SVMs (``formulations/mip.md``): the ramp loss and the hard margin loss of
Brooks (2011), and feature selection with a budget of Maldonado, Perez, Weber and Labbe
(2014). Not convex: each is a MILP or MIQP with binaries that switch a margin row off
(``z[i] = 1``: point i is given up) or a feature on (``v[j] = 1``: feature j is kept).

    ramp_loss_primal   min 1/2 ||w||^2 + C sum_i weight_i (xi_i + 2 z_i)
                       s.t. y_i (w.x_i + b) + xi_i + M z_i >= 1,  0 <= xi_i <= 2
    hard_loss_primal   min 1/2 ||w||^2 + C sum_i weight_i z_i
                       s.t. y_i (w.x_i + b) + M z_i >= 1
    feature_selection  min ||w||_1 (or 1/2 ||w||^2) + C sum_i weight_i xi_i
                       s.t. y_i (w.x_i + b) + xi_i >= 1,  xi_i >= 0,
                            |w_j| <= M v_j,  sum_j cost_j v_j <= k

Every big-M is proved valid from the data and C (never a guessed constant): the feasible
point ``w = 0`` bounds the optimum by ``U0``, the objective bounds ``||w||`` by ``U0``, and
with ``R = max_i ||x_i||`` (the kernel: ``max_i sqrt(K_ii)``) some optimum has
``|b| <= 1 + R ||w||``, so ``|y_i (w.x_i + b)| <= 1 + 2 R ||w||``
(:func:`big_m_loss`, :func:`big_m_features`; the derivation: ``formulations/mip.md``). The
bounds on ``w`` and ``b`` derived there are set as variable bounds.

No fast path and no convex certificate: the Pyomo plugins (``gurobi_direct``, ``highs``,
``scip_direct``) solve the model with its binaries; the certificate is the gap between the
objective of exactly the classifier returned (recomputed from ``w`` and ``b``) and the
solver's best bound (:func:`extract`). With ``switch="indicator"`` (Gurobi, SCIP) the
solver gets native indicator constraints in place of the big-M rows the family names
(:func:`indicator_rows`); the Pyomo model keeps its big-M rows, and both have the same
optimum because every M is proved.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from ..errors import DataError, ParameterError, SVMError, plain
from ..kernels import exact_factor_dim, kernel_factor
from ..model.built import BuiltSVM
from ..model.forms import QuadBlock
from ..model.pieces import (Layout, add_abs_rows, add_C, add_features, add_margin, add_points, add_weights,
                            check_choice, check_positive, check_sample_weight, linear_primal,
                            new_block, place, prepare)
from ..model.record import LinearTerm, QuadTerm, Record, RowGroup, Scale, members
from ..postprocess import values_of
from ..solution import MIPDetails, Solution
from ..status import Status
from ..tolerances import ACTIVE_MARGIN_REL, BINARY_ONE, SOLVER_TOL
from .base import Formulation, IndicatorRow, register
from .params import NORMS, document_parameters

INF = float("inf")


@dataclass(frozen=True)
class MIPFacts:
    """What :func:`extract` and the hooks need: the loss (``"ramp"``, ``"hard"``,
    ``"features"``), the norm (``"l1"``/``"l2"``), the C the constants were proved for, the
    constants by name, the feature matrix of the model (``X`` or the kernel's factor ``L``),
    the costs and the budget (feature selection)."""

    loss: str
    norm: str
    C: float
    big_m: dict
    F: np.ndarray
    cost: np.ndarray | None = None
    budget: float | None = None


# ---------------------------------------------------------------------------------------
# The constants, proved (formulations/mip.md)


def class_weights(y: np.ndarray, weight: np.ndarray | None) -> tuple[float, float]:
    """``(W+, W-)``: the summed weights of the two classes (the counts without weights)."""
    wt = np.ones(len(y)) if weight is None else weight
    return float(wt[y > 0].sum()), float(wt[y < 0].sum())


def big_m_loss(loss: str, C: float, y, weight, F: np.ndarray) -> dict:
    """The constants of the ramp or hard margin loss, valid for every ``C' <= C``:
    ``U0`` the objective of ``w = 0`` at its best ``b`` (``2 C min(W+, W-)`` for the ramp
    loss, ``C min(W+, W-)`` for the hard loss); ``w_max = sqrt(2 U0)`` (every optimum has
    ``||w|| <= w_max``); ``R`` the largest row norm of ``F``; ``b_max = 1 + R w_max`` (some
    optimum has ``|b| <= b_max``); ``M = 2 + 2 R w_max`` (``>= 1 - y_i f_i`` there)."""
    wp, wn = class_weights(y, weight)
    U0 = (2.0 if loss == "ramp" else 1.0) * C * min(wp, wn)
    w_max = math.sqrt(2.0 * U0)
    R = float(np.sqrt(np.max(np.einsum("ij,ij->i", F, F), initial=0.0)))
    return {"U0": U0, "w_max": w_max, "R": R, "b_max": 1.0 + R * w_max,
            "M": 2.0 + 2.0 * R * w_max}


def big_m_features(norm: str, C: float, y, weight) -> dict:
    """The constant of feature selection, valid for every ``C' <= C``: ``U0 = 2 C min(W+,
    W-)``, the hinge loss of ``w = 0`` at its best ``b = +-1``; every optimum has
    ``||w||_1 <= U0`` (norm l1) or ``||w||_2 <= sqrt(2 U0)`` (l2), so ``|w_j| <= M`` with
    ``M`` that bound."""
    wp, wn = class_weights(y, weight)
    U0 = 2.0 * C * min(wp, wn)
    return {"U0": U0, "M": U0 if norm == "l1" else math.sqrt(2.0 * U0)}


# ---------------------------------------------------------------------------------------
# The ramp and hard margin losses


# the rules are module-level functions (functools.partial), never closures: a model pickles


def _margin_rule(y, slack: bool, m, i):
    """``margin[i]``: y_i (f[i] + b) (+ xi[i]) + big_m z[i] >= 1."""
    body = float(y[i]) * (m.f[i] + m.b) + m.big_m * m.z[i]
    return (body + m.xi[i] if slack else body) >= 1


def _f_rule(F, cname: str, m, i):
    """``f[i]`` = sum_j F_ij coef_j over the non-zero entries of row i (coef ``w`` or ``v``)."""
    coef = m.component(cname)
    return sum(float(F[i, j]) * coef[j] for j in range(F.shape[1]) if F[i, j] != 0.0)


def _loss_rows(b, layout: Layout, F, y, cpos, xi, M) -> RowGroup:
    """``margin[i]: y_i (f[i] + b) (+ xi[i]) + M z[i] >= 1``, the rows written by hand beside
    the Constraint (covered by ``tests/test_standard_form.py``)."""
    l = len(y)
    blocks = [(cpos, sp.csr_matrix(y[:, None] * F)), (layout.pos["b"], sp.csr_matrix(y[:, None]))]
    if xi is not None:
        blocks.append((layout.pos["xi"], sp.identity(l, format="csr")))
    blocks.append((layout.pos["z"], M * sp.identity(l, format="csr")))
    A = place(blocks, l, layout.n)
    b.margin = pyo.Constraint(
        b.I, rule=functools.partial(_margin_rule, y, xi is not None),
        doc="margin: y_i (f[i] + b) " + ("+ xi[i] " if xi is not None else "")
            + "+ big_m z[i] >= 1 (z[i] = 1 switches the row off)")
    return RowGroup(b.margin, members(b.margin), A, np.ones(l), np.full(l, INF))


def _build_loss(X, y, name, loss, C, sample_weight, kernel, gamma, degree, coef0, block):
    C = check_positive("C", C)
    linear = kernel == "linear"
    data, kern, K = prepare(X, y, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                            need_gram=False)
    weight = check_sample_weight(sample_weight, data)
    b = new_block(block, name)
    add_points(b, data)
    add_C(b, C)
    add_weights(b, weight)
    layout = Layout()
    if linear:
        F = data.X
        add_features(b, data.n_features)
        index, cname = b.J, "w"
        cdoc = "normal vector w of the separating hyperplane (|w_j| <= w_max: proved)"
    else:
        # the representer form w = sum_j beta_j phi(x_j) in the coordinates v = L' beta of
        # the factor K = L L' (exact features, or pivoted Cholesky of full column rank):
        # ||w||^2 = beta'K beta = ||v||^2, w.phi(x_i) = (K beta)_i = (L v)_i
        if K is None and exact_factor_dim(kern, *data.X.shape) is None:
            K = kern.gram(data.X)
        F = kernel_factor(kern, data.X, K)
        b.R = pyo.Set(initialize=range(F.shape[1]), ordered=True,
                      doc="factor components k (K = L L')")
        index, cname = b.R, "v"
        cdoc = "coordinates of w in the factor basis: v = L' beta (|v_k| <= w_max: proved)"
    const = big_m_loss(loss, C, data.y, weight, F)
    wb = (-const["w_max"], const["w_max"])
    b.add_component(cname, pyo.Var(index, bounds=wb, initialize=0.0, doc=cdoc))
    coef = b.component(cname)
    cpos = layout.add(coef)
    b.b = pyo.Var(bounds=(-const["b_max"], const["b_max"]), initialize=0.0,
                  doc="bias b (|b| <= b_max: some optimum has it)")
    layout.add(b.b)
    xi = None
    if loss == "ramp":
        b.xi = pyo.Var(b.I, bounds=(0.0, 2.0), initialize=0.0,
                       doc="slack xi_i in [0, 2] of point i's margin (kept rows)")
        xi = b.xi
        layout.add(xi)
    b.z = pyo.Var(b.I, domain=pyo.Binary, initialize=0,
                  doc="z_i = 1: point i is given up (its margin row switched off)")
    zpos = layout.add(b.z)
    b.big_m = pyo.Param(initialize=const["M"], mutable=False,
                        doc="M = 2 + 2 R w_max, proved valid (formulations/mip.md)")
    rows_F = F
    b.f = pyo.Expression(b.I, rule=functools.partial(_f_rule, rows_F, cname),
                         doc="f_i = w.x_i" if linear else "f_i = (L v)_i = w.phi(x_i)")
    rows = [_loss_rows(b, layout, F, data.y, cpos, xi, const["M"])]
    b.ww = pyo.Expression(expr=sum(coef[j] ** 2 for j in index),
                          doc="||w||^2" if linear else "||w||^2 = ||v||^2 = beta'K beta")
    wt = np.ones(data.n_points) if weight is None else weight
    per_z = 2.0 if loss == "ramp" else 1.0
    loss_expr = sum(float(per_z * wt[i]) * b.z[i] for i in b.I)
    if xi is not None:
        loss_expr = loss_expr + sum(float(wt[i]) * xi[i] for i in b.I)
    b.objective = pyo.Objective(expr=0.5 * b.ww + b.C * loss_expr, sense=pyo.minimize,
                                doc="1/2 ||w||^2 + C sum_i weight[i] ("
                                    + ("xi[i] + 2 z[i])" if xi is not None else "z[i])"))
    linear_terms = [LinearTerm(zpos, per_z * wt, Scale(1.0, "C"))]
    if xi is not None:
        linear_terms.insert(0, LinearTerm(layout.pos["xi"], wt, Scale(1.0, "C")))
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=1,
                    linear=linear_terms,
                    quadratic=[QuadTerm(QuadBlock(cpos, diag=np.ones(len(cpos))), Scale(0.5))],
                    rows=rows, problem_class="MIQP", integers=[b.z]).seal()
    b._svm = BuiltSVM(formulation=name, data=data, kernel=kern, block=b, record=record,
                      K=K, L=None if linear else F,
                      facts=MIPFacts(loss=loss, norm="l2", C=C, big_m=const, F=F),
                      weight=weight)
    return b


_LOSS_DOC = {"C": """    C : float, default 1.0
        The price of the loss, > 0 (a mutable Param; the constants are proved for the C
        built with and hold for every smaller C: a larger one is refused before a solve)."""}


@document_parameters(**_LOSS_DOC)
def ramp_loss_primal(X, y, *, C=1.0, sample_weight=None, kernel="linear", gamma="scale",
                     degree=3, coef0=0.0, block=None):
    r"""The ramp-loss SVM (Brooks 2011), primal form: a MIQP.

    .. math::

        \min_{w, b, \xi, z} \; \tfrac12 \|w\|^2 + C \sum_i (\xi_i + 2 z_i)
        \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1 - \xi_i - M z_i,
        \; 0 \le \xi_i \le 2, \; z_i \in \{0, 1\}

    Its optimum is that of ``1/2 ||w||^2 + C sum_i min(2, max(0, 1 - y_i f_i))``: a point
    beyond ``y_i f_i < -1`` costs 2, however far (robust to outliers). ``M = 2 + 2 R
    sqrt(2 U0)`` is proved (``formulations/mip.md``). Problem class: MIQP. Components:
    ``I``, ``y``, ``C`` (mutable), ``weight`` (with ``sample_weight``), ``J`` and ``w``
    (linear) or ``R`` and ``v`` (other kernels: the representer form in the factor
    coordinates ``v = L' beta``), ``b``, ``xi``, ``z`` (binary: the points given up),
    ``big_m``, ``f``, ``margin``, ``ww``, ``objective``.

    @parameters@

    References
    ----------
    J. P. Brooks, "Support vector machines with the ramp loss and the hard margin loss",
    Operations Research 59(2) (2011) 467-479; the catalogue page
    ``formulations/ramp_loss_primal.md``.
    """
    return _build_loss(X, y, "ramp_loss_primal", "ramp", C, sample_weight, kernel, gamma,
                       degree, coef0, block)


@document_parameters(**_LOSS_DOC)
def hard_loss_primal(X, y, *, C=1.0, sample_weight=None, kernel="linear", gamma="scale",
                     degree=3, coef0=0.0, block=None):
    r"""The hard-margin-loss SVM (Brooks 2011), primal form: a MIQP.

    .. math::

        \min_{w, b, z} \; \tfrac12 \|w\|^2 + C \sum_i z_i
        \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1 - M z_i, \; z_i \in \{0, 1\}

    Each point inside its margin or misclassified costs C, once (the 0-1 loss of the
    margin). ``M = 2 + 2 R sqrt(2 U0)`` is proved (``formulations/mip.md``). Problem class:
    MIQP. Components: ``I``, ``y``, ``C`` (mutable), ``weight`` (with ``sample_weight``),
    ``J`` and ``w`` (linear) or ``R`` and ``v`` (other kernels), ``b``, ``z`` (binary: the
    points given up), ``big_m``, ``f``, ``margin``, ``ww``, ``objective``.

    @parameters@

    References
    ----------
    J. P. Brooks, "Support vector machines with the ramp loss and the hard margin loss",
    Operations Research 59(2) (2011) 467-479; the catalogue page
    ``formulations/hard_loss_primal.md``.
    """
    return _build_loss(X, y, "hard_loss_primal", "hard", C, sample_weight, kernel, gamma,
                       degree, coef0, block)


# ---------------------------------------------------------------------------------------
# Feature selection


def check_budget(k) -> float | None:
    """The budget ``k``: None (no budget) or a positive number."""
    return None if k is None else check_positive("k", k)


def check_norm(norm) -> str:
    return check_choice("norm", norm, NORMS)


def check_feature_cost(cost, d: int) -> np.ndarray:
    """The cost of each feature: d finite numbers >= 0 (None: 1 each)."""
    if cost is None:
        return np.ones(d)
    try:
        c = np.asarray(cost, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ParameterError(f"feature_cost must be numbers, one per feature; got "
                             f"{plain(cost)!r}") from None
    if c.size == 1 and d != 1:
        c = np.full(d, float(c[0]))
    if c.size != d:
        raise DataError(f"feature_cost has {c.size} values; X has {d} features")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ParameterError("feature_cost must be finite numbers >= 0")
    return c


def _keep_rule(sign, m, j):
    """``keep_hi[j]`` / ``keep_lo[j]``: big_m v[j] -+ w[j] >= 0."""
    return m.big_m * m.v[j] - sign * m.w[j] >= 0




@document_parameters(C="""    C : float, default 1.0
        Price of a unit of slack, > 0 (a mutable Param; ``big_m`` is proved for the C built
        with and holds for every smaller C: a larger one is refused before a solve).""",
                     k="""    k : float or None, default None
        The budget: ``sum_j feature_cost_j v_j <= k`` (without costs: at most ``k``
        features kept); None: no budget (every feature may be kept).""",
                     norm="""    norm : {"l1", "l2"}, default "l1"
        ``||w||_1`` (a MILP) or ``1/2 ||w||^2`` (a MIQP).""",
                     feature_cost="""    feature_cost : array-like of shape (d,), optional
        The cost of each feature in the budget row (default 1 each).""")
def feature_selection(X, y, *, C=1.0, k=None, norm="l1", feature_cost=None,
                      sample_weight=None, block=None):
    r"""Feature selection with a budget (Maldonado, Perez, Weber, Labbe 2014): a MILP (norm
    l1) or MIQP (norm l2).

    .. math::

        \min_{w, b, \xi, v} \; \|w\|_1 + C \sum_i \xi_i
        \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1 - \xi_i, \; \xi_i \ge 0,
        \; |w_j| \le M v_j, \; \sum_j c_j v_j \le k, \; v_j \in \{0, 1\}

    (``1/2 ||w||^2`` in place of ``||w||_1`` with ``norm="l2"``). ``M`` is ``U0 = 2 C
    min(W+, W-)`` (l1) or ``sqrt(2 U0)`` (l2), proved (``formulations/mip.md``). Problem
    class: MILP (l1), MIQP (l2). Components: ``I``, ``y``, ``C`` (mutable), ``weight`` (with
    ``sample_weight``), ``J``, ``w``, ``b``, ``xi``, ``v`` (binary: the features kept),
    ``big_m``, ``cost``, ``k``, ``f``, ``margin``, ``keep_hi`` (``big_m v[j] - w[j] >= 0``),
    ``keep_lo`` (``big_m v[j] + w[j] >= 0``), ``budget``; l1: ``t`` (``t[j] >= |w[j]|``),
    ``abs_hi``, ``abs_lo``; l2: ``ww``; ``objective``.

    @parameters@

    References
    ----------
    S. Maldonado, J. Perez, R. Weber, M. Labbe, "Feature selection for Support Vector
    Machines via Mixed Integer Linear Programming", Information Sciences 279 (2014)
    163-175; the catalogue page ``formulations/feature_selection.md``.
    """
    C = check_positive("C", C)
    budget = check_budget(k)
    norm = check_norm(norm)
    data, kern, weight, b, layout, wpos = linear_primal(X, y, "feature_selection", C,
                                                        sample_weight, block)
    l, d = data.n_points, data.n_features
    cost = check_feature_cost(feature_cost, d)
    const = big_m_features(norm, C, data.y, weight)
    M = const["M"]
    for j in b.J:
        b.w[j].setlb(-M)
        b.w[j].setub(M)
    b.w.doc = "normal vector w (|w_j| <= big_m: proved)"
    if norm == "l1":
        b.t = pyo.Var(b.J, bounds=(0, None), initialize=0.0, doc="t_j >= |w_j|")
        tpos = layout.add(b.t)
    b.xi = pyo.Var(b.I, bounds=(0, None), initialize=0.0, doc="slack xi_i of point i's margin")
    xpos = layout.add(b.xi)
    b.v = pyo.Var(b.J, domain=pyo.Binary, initialize=1,
                  doc="v_j = 1: feature j is kept (w_j may be non-zero)")
    vpos = layout.add(b.v)
    b.big_m = pyo.Param(initialize=M, mutable=False,
                        doc="M, proved valid: |w_j| <= M at every optimum (formulations/mip.md)")
    b.cost = pyo.Param(b.J, initialize=dict(enumerate(cost.tolist())),
                       doc="cost_j of keeping feature j in the budget")
    total = budget if budget is not None else float(cost.sum())
    b.k = pyo.Param(initialize=total, doc="the budget (no budget: the cost of every feature)")
    rows = [add_margin(b, layout, ("f", "f_i = w.x_i"), data.X, "w", data.y, b.xi)]
    eye = sp.identity(d, format="csr")
    b.keep_hi = pyo.Constraint(b.J, rule=functools.partial(_keep_rule, 1.0),
                               doc="big_m v[j] - w[j] >= 0")
    b.keep_lo = pyo.Constraint(b.J, rule=functools.partial(_keep_rule, -1.0),
                               doc="big_m v[j] + w[j] >= 0")
    for comp, sign in ((b.keep_hi, 1.0), (b.keep_lo, -1.0)):
        A = place([(vpos, M * eye), (wpos, -sign * eye)], d, layout.n)
        rows.append(RowGroup(comp, members(comp), A, np.zeros(d), np.full(d, INF)))
    b.budget = pyo.Constraint(expr=sum(float(cost[j]) * b.v[j] for j in b.J) <= b.k,
                              doc="sum_j cost[j] v[j] <= k")
    rows.append(RowGroup(b.budget, [b.budget], place([(vpos, sp.csr_matrix(cost[None, :]))],
                                                     1, layout.n),
                         np.array([-INF]), np.array([total])))
    wt = np.ones(l) if weight is None else weight
    slack = sum(float(wt[i]) * b.xi[i] for i in b.I)
    linear_terms = [LinearTerm(xpos, wt, Scale(1.0, "C"))]
    quadratic = []
    if norm == "l1":
        rows += add_abs_rows(b, layout, tpos, wpos, d)
        b.objective = pyo.Objective(expr=sum(b.t[j] for j in b.J) + b.C * slack,
                                    sense=pyo.minimize,
                                    doc="sum_j t[j] + C sum_i weight[i] xi[i]")
        linear_terms.insert(0, LinearTerm(tpos, 1.0))
    else:
        b.ww = pyo.Expression(expr=sum(b.w[j] ** 2 for j in b.J), doc="||w||^2")
        b.objective = pyo.Objective(expr=0.5 * b.ww + b.C * slack, sense=pyo.minimize,
                                    doc="1/2 ||w||^2 + C sum_i weight[i] xi[i]")
        quadratic.append(QuadTerm(QuadBlock(wpos, diag=np.ones(d)), Scale(0.5)))
    record = Record(block=b, variables=layout.variables, objective=b.objective, sense=1,
                    linear=linear_terms, quadratic=quadratic, rows=rows,
                    problem_class="MILP" if norm == "l1" else "MIQP", integers=[b.v]).seal()
    b._svm = BuiltSVM(formulation="feature_selection", data=data, kernel=kern, block=b,
                      record=record, K=None, L=None,
                      facts=MIPFacts(loss="features", norm=norm, C=C, big_m=const, F=data.X,
                                     cost=cost, budget=budget),
                      weight=weight)
    return b


# ---------------------------------------------------------------------------------------
# The family's interface


def check_before_solve(svm, *, proves_unbounded: bool) -> None:
    """The constants were proved for the C the model was built with, and stay valid for every
    smaller C (``U0`` grows with C): a larger C is refused before anything runs (a big-M too
    small could cut off the optimum)."""
    C = float(pyo.value(svm.block.C))
    built = svm.facts.C
    if C > built * (1.0 + 1e-12):
        raise ParameterError(
            f"C = {C:g} is larger than the C = {built:g} the {svm.formulation} model was built "
            f"with: its big-M constants (big_m = {svm.facts.big_m['M']:.6g}) are proved for "
            "C <= the C built with (formulations/mip.md). Build the model again with this C")


def objective_of(facts: MIPFacts, y, C_i, coef, b, given_up=None) -> tuple[float, np.ndarray]:
    """The objective of exactly the classifier ``(coef, b)`` (``coef`` ``w``, or ``v`` in the
    factor coordinates) and each point's loss: the ramp loss ``min(2, max(0, 1 - y_i
    f_i))``; the hard loss, 1 on the points ``given_up`` (the others must keep their
    margin: :func:`extract` reports any violation); the hinge loss ``max(0, 1 - y_i f_i)``
    of feature selection, with ``||w||_1`` or ``1/2 ||w||^2``."""
    u = y * (facts.F @ coef + b)
    if facts.loss == "ramp":
        loss = np.minimum(2.0, np.maximum(0.0, 1.0 - u))
    elif facts.loss == "hard":
        loss = np.zeros(len(y))
        loss[given_up] = 1.0
    else:
        loss = np.maximum(0.0, 1.0 - u)
    reg = float(np.abs(coef).sum()) if facts.norm == "l1" else 0.5 * float(coef @ coef)
    return reg + float(C_i @ loss), loss


def extract(block, ctx) -> Solution:
    """The Solution of a solved mixed-integer SVM (also the incumbent of a time limit, its
    status ``time_limit``).

    ``w`` (linear; feature selection: zero on the features not kept, exactly), ``b`` as
    solved; the points given up (``z[i] = 1``) and the features kept (``v[j] = 1``); the
    objective recomputed at exactly that classifier (:func:`objective_of`) and its gap to the
    solver's best bound (``details.mip_gap``: the certificate of a MIP, no duals and no KKT
    conditions); ``xi`` each point's loss; the support: the points not given up on or
    inside their margin (the kernel form: every point with a coefficient ``beta_j != 0`` of
    the decision function). ``alpha`` is zero: a MIP has no multipliers."""
    svm = block._svm
    data, facts = svm.data, svm.facts
    y = data.y
    l = data.n_points
    C = float(pyo.value(block.C))
    C_i = C * (np.ones(l) if svm.weight is None else svm.weight)
    linear = svm.kernel.is_linear
    coef = values_of(members(block.w if linear else block.v))
    b = float(pyo.value(block.b))
    extra: dict = {"alpha_source": "none: a mixed-integer SVM has no multipliers"}
    given_up = np.zeros(0, dtype=int)
    kept = None
    if facts.loss == "features":
        kept = np.flatnonzero(values_of(members(block.v)) > BINARY_ONE)
        coef = np.where(np.isin(np.arange(len(coef)), kept), coef, 0.0)
    else:
        given_up = np.flatnonzero(values_of(members(block.z)) > BINARY_ONE)
    objective, loss = objective_of(facts, y, C_i, coef, b, given_up)
    f = facts.F @ coef
    u = y * (f + b)
    on = np.ones(l, dtype=bool)
    on[given_up] = False
    kkt: dict = {}
    if facts.loss == "hard":   # the rows kept must hold: their violation, in margin units
        kkt["primal_infeasibility"] = float(np.max(np.maximum(0.0, 1.0 - u[on]), initial=0.0))
    mip = ctx.extra.get("mip") or {}
    # what was solved: the big-M rows as built, or (switch="indicator") native indicator
    # constraints in their place, and how many
    extra.update(ctx.extra.get("switch") or {})
    bound, incumbent = mip.get("bound"), mip.get("incumbent")
    tiny = np.finfo(float).tiny
    gap = None if bound is None else (objective - bound) / max(abs(objective), tiny)
    solver_gap = (None if bound is None or incumbent is None
                  else (incumbent - bound) / max(abs(incumbent), tiny))
    if bound is None:
        extra["mip_certificate"] = ("not computed: no bound from the solver (a model solved "
                                    "outside svm_models.solve)")
    if not ctx.verified:
        extra["diagnostics"] = ("the model solved is not the formulation "
                                f"({ctx.reason}): the objective is the formulation's at "
                                "the classifier returned")
    scale = max(1.0, float(np.max(np.abs(f), initial=0.0)))
    if linear:
        support = np.flatnonzero(on & (u - 1.0 <= ACTIVE_MARGIN_REL * scale))
        alpha = np.zeros(l)
        dual_coef = np.zeros(l)
        w = coef
    else:
        # the decision function's coefficients: beta with L' beta = v (the least-norm one)
        beta = np.linalg.lstsq(facts.F.T, coef, rcond=None)[0]
        support = np.flatnonzero(beta != 0.0)
        alpha = np.zeros(l)
        dual_coef = beta
        w = None
        extra["dual_coef_source"] = "the expansion of the solved factor coordinates v (L'beta = v)"
    ww = float(coef @ coef)
    details = MIPDetails(mip_gap=gap, bound=bound, solver_gap=solver_gap, given_up=given_up,
                         features_kept=kept, big_m=dict(facts.big_m))
    return Solution(formulation=svm.formulation, solver=ctx.solver, status=ctx.status, w=w, b=b,
                    alpha=alpha, dual_coef=dual_coef, xi=loss, support=support,
                    support_vectors=data.X[support], objective=objective, kernel=svm.kernel,
                    classes=data.classes, primal_objective=objective, kkt=kkt,
                    margin=1.0 / math.sqrt(ww) if ww > 0 else None, C=C, details=details,
                    time=ctx.time, interface=ctx.interface, path=ctx.path, extra=extra)


# ---------------------------------------------------------------------------------------
# The warm start: the convex SVM, rounded into a feasible point (issue 29)


def _best_scale(coef, b, u, C_i, w_max, b_max):
    """The hard loss along the ray ``s (coef, b)``, ``s > 0``, within the bounds: ``1/2 s^2
    ||coef||^2 + sum_i C_i [s u_i < 1]``, minimised exactly over ``s = 1/u_k`` (each keeps
    the points with ``u_i >= u_k``; ``u_i <= 0`` are given up at every ``s``) and ``s = 1``.
    Returns the scaled ``(coef, b, u)``; a point kept has ``s u_i >= 1`` (to round-off: set
    exactly to 1 at the threshold)."""
    ww = float(coef @ coef)
    top = max(float(np.max(np.abs(coef), initial=0.0)) / w_max, abs(b) / b_max)
    s_max = math.inf if top == 0.0 else 1.0 / top
    pos = u > 0
    best = (0.5 * ww + float(C_i[u < 1.0].sum()), 1.0)
    order = np.argsort(u[pos])
    up, cp = u[pos][order], C_i[pos][order]
    given = float(C_i[~pos].sum()) + np.concatenate([[0.0], np.cumsum(cp)[:-1]])
    for k in range(len(up)):   # s = 1/u_k keeps u_i >= u_k; gives up the others
        s = 1.0 / up[k]
        if s <= s_max and (k == 0 or up[k] != up[k - 1]):
            value = 0.5 * s * s * ww + given[k]
            if value < best[0]:
                best = (value, s)
    s = best[1]
    u = s * u
    u[np.abs(u - 1.0) <= 4 * np.finfo(float).eps] = 1.0
    return s * coef, s * b, u


def _start_point(facts: MIPFacts, y, C_i, coef, b) -> tuple[dict, str]:
    """The MIP point rounded from the convex classifier ``(coef, b)`` (``coef`` in the
    model's coordinates: ``w``, or ``v`` of the factor): ``{variable name: values}`` and what
    was rounded. ``w`` (``v``) and ``b`` are clipped to the proved bounds; then, with ``u_i =
    y_i (f_i + b)``: the ramp loss gives up ``z_i = 1`` exactly where ``u_i < -1`` (the slack
    would exceed its cap 2), the hard loss where ``u_i < 1`` (a row without slack; first
    ``(w, b)`` is scaled to its best multiple within the bounds, :func:`_best_scale`), each
    other point keeping ``xi_i = max(0, 1 - u_i)``; feature selection keeps the largest
    ``|w_j|`` that fit the budget (greedily, in that order; ``w_j = 0`` elsewhere), ``v_j = 1``
    on them, ``xi_i = max(0, 1 - u_i)``, ``t_j = |w_j|``."""
    const = facts.big_m
    if facts.loss == "features":
        M = const["M"]
        order = np.argsort(-np.abs(coef), kind="stable")
        cost = facts.cost
        room = float(cost.sum()) if facts.budget is None else facts.budget
        keep = np.zeros(len(coef), dtype=bool)
        for j in order:
            if coef[j] != 0.0 and cost[j] <= room:
                keep[j] = True
                room -= cost[j]
        coef = np.clip(np.where(keep, coef, 0.0), -M, M)
        u = y * (facts.F @ coef + b)
        point = {"w": coef, "b": b, "xi": np.maximum(0.0, 1.0 - u),
                 "v": keep.astype(float)}
        if facts.norm == "l1":
            point["t"] = np.abs(coef)
        return point, f"{int(keep.sum())} feature(s) kept"
    w_max, b_max = const["w_max"], const["b_max"]
    coef = np.clip(coef, -w_max, w_max)
    b = min(max(b, -b_max), b_max)
    u = y * (facts.F @ coef + b)
    if facts.loss == "hard":
        coef, b, u = _best_scale(coef, b, u, C_i, w_max, b_max)
    z = u < -1.0 if facts.loss == "ramp" else u < 1.0
    point = {"coef": coef, "b": b, "z": z.astype(float)}
    if facts.loss == "ramp":
        point["xi"] = np.where(z, 0.0, np.maximum(0.0, 1.0 - u))
    return point, f"{int(z.sum())} point(s) given up"


def violations(block) -> str | None:
    """Where the block's current values break one of its own rows (every active Constraint
    on it, the rows a user added included), a variable's bounds or a binary's integrality,
    beyond round-off (:data:`~svm_models.tolerances.SOLVER_TOL` relative): a description of
    the worst one, or None when the point is feasible."""
    worst, where = 0.0, None

    def note(excess, scale, name):
        nonlocal worst, where
        rel = excess / max(1.0, abs(scale))
        if rel > SOLVER_TOL and rel > worst:
            worst, where = rel, name

    for v in block.component_data_objects(pyo.Var, descend_into=True):
        x = v.value
        if x is None:
            return f"{v.name} has no value"
        if v.lb is not None:
            note(v.lb - x, v.lb, f"{v.name} >= {v.lb:g}")
        if v.ub is not None:
            note(x - v.ub, v.ub, f"{v.name} <= {v.ub:g}")
        if v.is_integer():
            note(abs(x - round(x)), 1.0, f"{v.name} integral")
    for c in block.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        body = pyo.value(c.body)
        if c.lb is not None:
            note(c.lb - body, c.lb, c.name)
        if c.ub is not None:
            note(body - c.ub, c.ub, c.name)
    if where is None:
        return None
    return f"{where} is violated by {worst:.3g} (relative)"


def warm_start(svm, fit_convex) -> dict:
    """A start for the solver (the family's ``warm_start`` hook): the convex SVM on the same
    data -- ``soft_l1_primal`` for the ramp and hard losses, on the model's own features (``X``,
    or the kernel's factor ``L``: the same kernel), ``l1_norm_primal`` (norm l1) or
    ``soft_l1_primal`` (l2) for feature selection; the same C (the current one) and weights --
    solved by ``fit_convex`` and rounded into a MIP point (:func:`_start_point`). The point
    is checked against the model's own rows (:func:`violations`): only a feasible one is set
    as the variables' values; otherwise (or when the convex solve fails) the values are left
    as they were and the reason is returned. Returns ``{"objective", "from", "rounded"}`` (the
    model's objective at the start), or ``{"objective": None, "why"}``."""
    block, facts = svm.block, svm.facts
    y = svm.data.y
    C = float(pyo.value(block.C))
    convex = ("l1_norm_primal" if facts.loss == "features" and facts.norm == "l1"
              else "soft_l1_primal")
    params = {"C": C}
    if svm.weight is not None:
        params["sample_weight"] = svm.weight
    try:
        sol = fit_convex(convex, facts.F, y, **params)
    except SVMError as exc:
        return {"objective": None, "why": f"the convex {convex} was not solved: {exc}"}
    if sol.status is not Status.optimal or sol.w is None or not math.isfinite(sol.b):
        return {"objective": None,
                "why": f"the convex {convex} ended {Status(sol.status).value} ({sol.solver})"}
    C_i = C * (np.ones(len(y)) if svm.weight is None else svm.weight)
    point, rounded = _start_point(facts, y, C_i, np.asarray(sol.w, dtype=float), float(sol.b))
    names = {"coef": "w" if svm.kernel.is_linear else "v"}
    saved = [(vd, vd.value) for vd in block.component_data_objects(pyo.Var, descend_into=True)]
    for name, val in point.items():
        comp = block.component(names.get(name, name))
        if comp.is_indexed():
            for vd, x in zip(members(comp), np.atleast_1d(val).tolist()):
                vd.set_value(x, skip_validation=True)
        else:
            comp.set_value(float(val), skip_validation=True)
    broken = violations(block)
    if broken is not None:   # dropped, never forced: the values are put back
        for vd, x in saved:
            vd.set_value(x, skip_validation=True)
        return {"objective": None,
                "why": f"the rounded {convex} solution is not a feasible point: {broken}"}
    return {"objective": float(pyo.value(block.objective)), "from": f"{convex} ({sol.solver})",
            "rounded": rounded}


# ---------------------------------------------------------------------------------------
# Indicator constraints in place of the big-M rows (issue 29)


def indicator_rows(svm) -> list[IndicatorRow]:
    """The rows the binaries switch (the family's ``indicator_rows`` hook), for
    ``switch="indicator"``: ``margin[i]`` (ramp and hard loss), enforced at ``z[i] = 0`` as
    ``y_i (f_i + b) (+ xi_i) >= 1``; ``keep_hi[j]`` and ``keep_lo[j]`` (feature selection),
    enforced at ``v[j] = 0`` as ``-w_j >= 0`` and ``w_j >= 0``. Each row without its M term
    is read from the record (the matrices the builder wrote beside the Constraint): the
    solver layer calls this only on a model the record proves unchanged since it was built,
    where the record's rows are the model's. With ``M`` proved valid (``formulations/mip.md``)
    the indicator model has the big-M model's optimum: it is the loss's own problem within
    the proved bounds on ``w`` and ``b``, which keep an optimum."""
    block, record, facts = svm.block, svm.record, svm.facts
    if facts.loss == "features":
        switched = [(block.keep_hi, block.v), (block.keep_lo, block.v)]
    else:
        switched = [(block.margin, block.z)]
    vds = record.var_datas()
    col = {id(vd): k for k, vd in enumerate(vds)}
    M = facts.big_m["M"]
    out = []
    for comp, binary in switched:
        group = next(g for g in record.rows if g.component is comp)
        A = sp.csr_matrix(group.A)
        lower, upper = group.sides(block)
        for r, row in enumerate(group.datas):
            z = binary[row.index()]
            zc = col[id(z)]
            cols = A.indices[A.indptr[r]:A.indptr[r + 1]]
            vals = A.data[A.indptr[r]:A.indptr[r + 1]]
            if list(vals[cols == zc]) != [M] or upper[r] != INF:
                raise SVMError(f"{row.name} is not the big-M row the builder records "
                               f"(... + {M:g} {z.name} >= lower)")
            terms = tuple((vds[c], float(v)) for c, v in zip(cols.tolist(), vals.tolist())
                          if c != zc)
            out.append(IndicatorRow(row=row, binary=z, on=0, terms=terms, rhs=float(lower[r])))
    return out


ORDER = 60


class MixedIntegerSVM(Formulation):
    """A mixed-integer SVM: big-M rows proved from the data, the MIP gap as its certificate,
    a rounded convex start, the big-M rows a backend may take as indicator constraints."""

    details = MIPDetails

    def extract(self, block, ctx) -> Solution:
        return extract(block, ctx)

    def check_before_solve(self, svm, *, proves_unbounded: bool) -> None:
        check_before_solve(svm, proves_unbounded=proves_unbounded)

    def warm_start(self, svm, fit_convex) -> dict:
        return warm_start(svm, fit_convex)

    def indicator_rows(self, svm) -> list[IndicatorRow]:
        return indicator_rows(svm)


register(MixedIntegerSVM(
    name="ramp_loss_primal", builder=ramp_loss_primal, family="ramp_loss", problem_class="MIQP",
    summary="Ramp-loss SVM (Brooks 2011): the hinge loss capped at 2, robust to outliers; a "
            "MIQP whose binaries z give points up (linear or kernel)."))
register(MixedIntegerSVM(
    name="hard_loss_primal", builder=hard_loss_primal, family="hard_loss", problem_class="MIQP",
    summary="Hard-margin-loss SVM (Brooks 2011): each point inside its margin costs C once; a "
            "MIQP whose binaries z give points up (linear or kernel)."))
register(MixedIntegerSVM(
    name="feature_selection", builder=feature_selection, family="feature_selection",
    problem_class="MILP",
    summary="Feature selection with a budget k (Maldonado et al. 2014): binaries v keep "
            "features; a MILP with ||w||_1 (MIQP with norm='l2'; linear kernel)."))

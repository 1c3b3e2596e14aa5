"""The six classic SVMs: hard, 1-norm and 2-norm soft margin, each primal and dual.

=================  =============================================  ==========================
name               problem                                        constraints
=================  =============================================  ==========================
hard_primal        min 1/2 ||w||^2                                y_i (w.x_i + b) >= 1
hard_dual          max e'a - 1/2 a'G(K)a                          a >= 0, y'a = 0
soft_l1_primal     min 1/2 ||w||^2 + C sum xi_i                   y_i (w.x_i + b) >= 1 - xi_i, xi >= 0
soft_l1_dual       max e'a - 1/2 a'G(K)a                          0 <= a <= C, y'a = 0
soft_l2_primal     min 1/2 ||w||^2 + C/2 sum xi_i^2               y_i (w.x_i + b) >= 1 - xi_i
soft_l2_dual       max e'a - 1/2 a'G(K + I/C)a                    a >= 0, y'a = 0
=================  =============================================  ==========================

with ``G(K)_ij = y_i y_j K_ij``. Primals with a non-linear kernel use the representer form
``w = sum_j beta_j phi(x_j)``: ``||w||^2 = beta'K beta`` and ``w.phi(x_i) = (K beta)_i``.
All six are convex QPs. References: Cristianini & Shawe-Taylor (2000), ch. 6; SPEC.md s. 1.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from .components import (
    Layout,
    add_balance,
    add_C,
    add_decision_values,
    add_margin,
    add_points,
    add_quadratic_form,
    choose_form,
    declare_factor,
    gram_if_needed,
    new_block,
    prepare,
    signed_factor,
)
from .lazy import LazyScalarExpression, diagonal_quadratic_form, linear_form
from .registry import BuiltSVM, Formulation, register
from .structure import QuadBlock, Structure

FAMILIES = ("hard", "soft_l1", "soft_l2")
_KERNEL_DEFAULTS = dict(kernel="linear", gamma="scale", degree=3, coef0=0.0)


# ---------------------------------------------------------------------------------------
# Objectives as data (read at solve time, so a changed C needs no rebuild)


def _dual_objective(structure):
    ex = structure.extra
    c = np.zeros(ex["n"])
    c[ex["alpha"]] = 1.0
    quad = [q.scaled(-0.5) for q in ex["quad"]]
    if ex["family"] == "soft_l2":
        C = pyo.value(structure.block.C)
        quad.append(QuadBlock(ex["alpha"], diag=np.full(len(ex["alpha"]), -0.5 / C)))
    return c, 0.0, quad


def _primal_objective(structure):
    ex = structure.extra
    c = np.zeros(ex["n"])
    quad = [q.scaled(0.5) for q in ex["quad"]]
    if ex["family"] == "soft_l1":
        c[ex["xi"]] = pyo.value(structure.block.C)
    elif ex["family"] == "soft_l2":
        C = pyo.value(structure.block.C)
        quad.append(QuadBlock(ex["xi"], diag=np.full(len(ex["xi"]), 0.5 * C)))
    return c, 0.0, quad


# ---------------------------------------------------------------------------------------
# The two generic builders


def build_dual(X, y, family: str, *, C=1.0, kernel="linear", gamma="scale", degree=3,
               coef0=0.0, quad_form="auto", block=None):
    """Fill ``block`` (or a new ConcreteModel) with the dual of the ``family`` SVM."""
    data, kern, K = prepare(X, y, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                            need_gram=False)
    form = choose_form(quad_form, kern, data.n_points, data.n_features)
    K = gram_if_needed(kern, data, K, form)
    b = new_block(block, f"{family}_dual")
    add_points(b, data)
    if family != "hard":
        add_C(b, C)
    ub = b.C if family == "soft_l1" else None
    b.alpha = pyo.Var(b.I, bounds=(0, ub), initialize=0.0,
                      doc="dual variable alpha_i (Lagrange multiplier of point i's margin)")
    layout = Layout()
    apos = layout.add(b.alpha)
    yv = data.y
    if form == "factor":
        F = signed_factor(kern, data, K)
        declare_factor(b, F)
        layout.add(b.z)
        qf = add_quadratic_form(b, layout, "quad", b.alpha, F=F,
                                doc="alpha' G(K) alpha with G_ij = y_i y_j K_ij")
    else:
        G = K * np.outer(yv, yv)
        qf = add_quadratic_form(b, layout, "quad", b.alpha, M=G,
                                doc="alpha' G(K) alpha with G_ij = y_i y_j K_ij")
    rows = qf.rows + [add_balance(b, layout, b.alpha, yv)]
    expr = linear_form(np.ones(data.n_points), list(b.alpha.values())) - 0.5 * b.quad
    if family == "soft_l2":
        b.ridge = LazyScalarExpression(
            recipe=(diagonal_quadratic_form, (np.ones(data.n_points), list(b.alpha.values()))),
            doc="alpha'alpha (the I/C part of G(K + I/C))")
        expr = expr - 0.5 / b.C * b.ridge
    b.objective = pyo.Objective(expr=expr, sense=pyo.maximize,
                                doc="dual objective e'alpha - 1/2 alpha'G alpha")
    structure = Structure(
        block=b, variables=layout.variables, objective=b.objective,
        objective_expr=b.objective.expr, objective_fn=_dual_objective, rows=rows,
        problem_class="QP",
        extra={"n": layout.n, "alpha": apos, "quad": qf.blocks, "family": family})
    b._svm = BuiltSVM(formulation=f"{family}_dual", data=data, kernel=kern, block=b,
                      structure=structure, K=K,
                      params={"C": None if family == "hard" else float(C), "quad_form": form})
    return b


def build_primal(X, y, family: str, *, C=1.0, kernel="linear", gamma="scale", degree=3,
                 coef0=0.0, block=None):
    """Fill ``block`` (or a new ConcreteModel) with the primal of the ``family`` SVM."""
    linear = kernel == "linear"
    data, kern, K = prepare(X, y, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                            need_gram=not linear)
    b = new_block(block, f"{family}_primal")
    add_points(b, data)
    if family != "hard":
        add_C(b, C)
    layout = Layout()
    if linear:
        b.J = pyo.Set(initialize=range(data.n_features), ordered=True, doc="features j")
        b.w = pyo.Var(b.J, initialize=0.0, doc="normal vector w of the separating hyperplane")
        coef, M = b.w, data.X
    else:
        b.beta = pyo.Var(b.I, initialize=0.0,
                         doc="expansion coefficients: w = sum_j beta_j phi(x_j)")
        coef, M = b.beta, K
    cpos = layout.add(coef)
    b.b = pyo.Var(initialize=0.0, doc="bias b")
    layout.add(b.b)
    xi = None
    if family != "hard":
        b.xi = pyo.Var(b.I, bounds=(0, None) if family == "soft_l1" else (None, None),
                       initialize=0.0, doc="slack xi_i of point i's margin")
        xi = b.xi
        layout.add(xi)
    f = add_decision_values(b, "f", M, coef,
                            doc="f_i = w.x_i" if linear else "f_i = (K beta)_i = w.phi(x_i)")
    if linear:
        b.ww = LazyScalarExpression(
            recipe=(diagonal_quadratic_form, (np.ones(data.n_features), list(b.w.values()))),
            doc="||w||^2")
        quad = [QuadBlock(cpos, diag=np.ones(data.n_features))]
    else:
        quad = add_quadratic_form(b, layout, "ww", b.beta, M=K,
                                  doc="||w||^2 = beta'K beta").blocks
    rows = [add_margin(b, layout, f, M, coef.local_name, data.y, xi)]
    expr = 0.5 * b.ww
    if family == "soft_l1":
        expr = expr + b.C * linear_form(np.ones(data.n_points), list(xi.values()))
    elif family == "soft_l2":
        b.xi_sq = LazyScalarExpression(
            recipe=(diagonal_quadratic_form, (np.ones(data.n_points), list(xi.values()))),
            doc="sum_i xi_i^2")
        expr = expr + 0.5 * b.C * b.xi_sq
    b.objective = pyo.Objective(expr=expr, sense=pyo.minimize, doc="primal objective")
    extra = {"n": layout.n, "quad": quad, "family": family, "coef": cpos,
             "b": layout.pos["b"]}
    if xi is not None:
        extra["xi"] = layout.pos["xi"]
    structure = Structure(block=b, variables=layout.variables, objective=b.objective,
                          objective_expr=b.objective.expr, objective_fn=_primal_objective,
                          rows=rows, problem_class="QP", extra=extra)
    b._svm = BuiltSVM(formulation=f"{family}_primal", data=data, kernel=kern, block=b,
                      structure=structure, K=K,
                      params={"C": None if family == "hard" else float(C)})
    return b



# ---------------------------------------------------------------------------------------
# The six public builders


def hard_primal(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0, block=None):
    r"""Hard-margin SVM, primal form (convex QP).

    .. math::

        \min_{w, b} \; \tfrac12 \|w\|^2 \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1

    Components: ``I`` points, ``J`` features, ``y[i]`` labels, ``w[j]`` (linear kernel) or
    ``beta[i]`` (other kernels, representer form ``w = sum_j beta_j phi(x_j)``), ``b`` bias,
    ``f[i]`` decision value without bias, ``ww`` = ||w||^2, ``margin[i]``, ``objective``.
    Infeasible -- and reported as :class:`~svm_models.errors.NotSeparableError` -- when the
    data are not separable. Reference: Cristianini & Shawe-Taylor (2000), Prop. 6.1.
    """
    return build_primal(X, y, "hard", kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                        block=block)


def hard_dual(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0, quad_form="auto",
              block=None):
    r"""Hard-margin SVM, dual form (convex QP).

    .. math::

        \max_{\alpha} \; e'\alpha - \tfrac12 \alpha' G(K) \alpha
        \quad \text{s.t.} \quad \alpha \ge 0, \; y'\alpha = 0, \qquad G(K)_{ij} = y_i y_j K_{ij}

    Components: ``I``, ``y``, ``alpha[i]`` (bounds ``[0, inf)``), ``quad`` = alpha'G alpha
    (dense, or ``sum_k z_k^2`` with ``z = F alpha``, ``factor[k]`` when ``quad_form`` picks the
    factor form: ``auto`` does for the linear kernel when ``d < l/2``), ``balance``,
    ``objective``. Unbounded (NotSeparableError) when the data are not separable.
    """
    return build_dual(X, y, "hard", kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                      quad_form=quad_form, block=block)


def soft_l1_primal(X, y, *, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                   block=None):
    r"""1-norm soft-margin SVM, primal form (convex QP).

    .. math::

        \min_{w, b, \xi \ge 0} \; \tfrac12 \|w\|^2 + C \sum_i \xi_i
        \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1 - \xi_i

    Components as :func:`hard_primal`, plus ``C`` (mutable Param) and ``xi[i] >= 0``.
    """
    return build_primal(X, y, "soft_l1", C=C, kernel=kernel, gamma=gamma, degree=degree,
                        coef0=coef0, block=block)


def soft_l1_dual(X, y, *, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                 quad_form="auto", block=None):
    r"""1-norm soft-margin SVM, dual form (convex QP; the problem libsvm solves).

    .. math::

        \max_{\alpha} \; e'\alpha - \tfrac12 \alpha' G(K) \alpha
        \quad \text{s.t.} \quad 0 \le \alpha \le C, \; y'\alpha = 0

    Components as :func:`hard_dual`; the box ``alpha[i] in [0, C]`` is a variable bound on the
    mutable Param ``C``.
    """
    return build_dual(X, y, "soft_l1", C=C, kernel=kernel, gamma=gamma, degree=degree,
                      coef0=coef0, quad_form=quad_form, block=block)


def soft_l2_primal(X, y, *, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                   block=None):
    r"""2-norm soft-margin SVM, primal form (convex QP).

    .. math::

        \min_{w, b, \xi} \; \tfrac12 \|w\|^2 + \tfrac{C}{2} \sum_i \xi_i^2
        \quad \text{s.t.} \quad y_i (w \cdot x_i + b) \ge 1 - \xi_i

    ``xi`` needs no sign constraint (a negative slack never pays). Components as
    :func:`soft_l1_primal` plus ``xi_sq`` = sum xi_i^2.
    """
    return build_primal(X, y, "soft_l2", C=C, kernel=kernel, gamma=gamma, degree=degree,
                        coef0=coef0, block=block)


def soft_l2_dual(X, y, *, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                 quad_form="auto", block=None):
    r"""2-norm soft-margin SVM, dual form (convex QP): a hard margin with kernel ``K + I/C``.

    .. math::

        \max_{\alpha} \; e'\alpha - \tfrac12 \alpha' G(K + I/C) \alpha
        \quad \text{s.t.} \quad \alpha \ge 0, \; y'\alpha = 0

    Components as :func:`hard_dual`, plus ``C`` and ``ridge`` = alpha'alpha, so that the
    objective reads ``sum(alpha) - 1/2 quad - 1/(2C) ridge``.
    """
    return build_dual(X, y, "soft_l2", C=C, kernel=kernel, gamma=gamma, degree=degree,
                      coef0=coef0, quad_form=quad_form, block=block)


_KERNEL_PARAMS = ("kernel", "gamma", "degree", "coef0")
for _fn, _family, _form in [
    (hard_primal, "hard", "primal"), (hard_dual, "hard", "dual"),
    (soft_l1_primal, "soft_l1", "primal"), (soft_l1_dual, "soft_l1", "dual"),
    (soft_l2_primal, "soft_l2", "primal"), (soft_l2_dual, "soft_l2", "dual"),
]:
    from .postprocess import extract_classic as _extract  # noqa: E402

    register(Formulation(
        name=_fn.__name__, family=_family, form=_form, problem_class="QP", builder=_fn,
        extractor=_extract, summary=(_fn.__doc__ or "").strip().splitlines()[0],
        params=(() if _family == "hard" else ("C",)) + _KERNEL_PARAMS
        + (("quad_form",) if _form == "dual" else ())))

r"""Convex tuning of the soft-margin parameter C (De Bie, Lanckriet & Cristianini, 2003).

The 2-norm soft margin is a hard margin with the kernel ``K + I/C``. Normalising the trace
and writing ``g = gamma l / (gamma l + r)`` with ``gamma = 1/C`` and ``r = trace(K)`` gives
the kernel family, linear in ``g`` and of trace 1,

.. math::

    M(g) = (1 - g) \frac{K}{r} + g \frac{I}{l},

and tuning C becomes ``min_g max_a e'a - 1/2 a'G(M(g))a`` over ``a >= 0, y'a = 0`` and
``g in [g_lo, g_hi]``. The objective being linear in g, the inner maximum over g sits at an
end of the range, which gives the QCQP every builder here makes:

.. math::

    \max_{a, t} \; e'a - \tfrac12 t \quad \text{s.t.} \quad a \ge 0, \; y'a = 0, \;
    t \ge a' G(M(g_{hi})) a, \; t \ge a' G(M(g_{lo})) a .

=========================  ====================  ==============================================
registered name            default g range       meaning
=========================  ====================  ==============================================
c_tuning_standard          [0, 1]                C in (0, inf]: ``t >= a'a/l``, ``t >= a'G(K)a/r``
c_tuning_general           [g_min, g_max]        the widest range keeping M(g) PSD
c_tuning_general_nonneg    [g_min, 1]            as general, the weight of K kept >= 0
=========================  ====================  ==============================================

``g_min = -1/(r/(l lam_min) - 1) <= 0`` and ``g_max = 1/(1 - r/(l lam_max)) >= 1`` come from
the extreme eigenvalues of K (``lam_min = 0`` gives ``g_min = 0``; a K that is a multiple of
I leaves g undetermined and is refused). Every builder also takes an explicit
``g_bounds=(g_lo, g_hi)`` anywhere inside the PSD range ``[g_min, g_max]``.

Post-processing (:func:`extract_c_tuning`): the optimal ``g*`` from the multipliers of the two
``t`` constraints (``g* = 2 eta_hi g_hi + 2 eta_lo g_lo``, ``eta_hi + eta_lo = 1/2``) where
the backend reports them, and always from the KKT conditions of the inner SVM (a least-squares
solve for ``(g, b)`` on the support set); ``C* = 1/gamma*`` with
``gamma* = g* r / (l (1 - g*))`` for ``0 <= g* < 1``; prediction
``f(x) = sum_i a_i y_i (1 - g*)/r k(x_i, x) + b``. :func:`saddle_point_check` re-solves the
plain SVM dual with the kernel fixed at ``M(g*)``.

Reference: T. De Bie, G. R. G. Lanckriet, N. Cristianini, "Convex Tuning of the Soft Margin
Parameter", UC Berkeley tech. report UCB/CSD-03-1289 (2003); SPEC.md section 2.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo

from .components import Layout, add_balance, add_points, new_block, prepare
from .errors import DataError, ParameterError
from .lazy import LazyScalarExpression, dense_quadratic_form, diagonal_quadratic_form, linear_form
from .postprocess import var_array
from .registry import BuiltSVM, Formulation, register
from .solution import Solution
from .structure import QuadBlock, QuadRow, Structure
from .tolerances import support_threshold

VARIANTS = ("standard", "general", "general_nonneg")

#: An eigenvalue of K below ``EIG_ZERO_REL * l * lam_max`` is round-off of a zero eigenvalue
#: (eigvalsh's error is of the order of machine epsilon times ||K||): ``lam_min`` is then
#: taken as 0, so ``g_min = 0`` exactly (SPEC: "lam_min = 0 gives g_min = 0").
EIG_ZERO_REL = 1e-14
#: K is refused as a multiple of I when its eigenvalues spread by less than this (relative).
IDENTITY_REL = 1e-10
#: An explicit g bound may exceed the PSD range by this much (relative) -- round-off of a
#: g_min/g_max computed elsewhere -- and is then moved onto the range's end.
G_BOUND_SLACK = 1e-9
#: ``|eta_hi + eta_lo - 1/2|`` allowed before the multipliers are declared unusable
#: (absolute; the solver's tolerance times 1e3, at least this).
ETA_SUM_TOL = 1e-6


# ---------------------------------------------------------------------------------------
# The g range


@dataclass(frozen=True)
class GRange:
    """The spectrum facts of K that fix the admissible g range.

    ``lam_min``/``lam_max`` are None when they were not needed (a range inside [0, 1] is
    PSD for every K, so no eigenvalues are computed for it).
    """

    l: int
    r: float
    lam_min: float | None = None
    lam_max: float | None = None

    @property
    def g_min(self) -> float:
        """``-1/(r/(l lam_min) - 1)``, written as ``-l lam_min/(r - l lam_min)`` (0 at lam_min = 0)."""
        if self.lam_min is None:
            raise ValueError("eigenvalues were not computed")
        if self.lam_min == 0.0:
            return 0.0
        return -self.l * self.lam_min / (self.r - self.l * self.lam_min)

    @property
    def g_max(self) -> float:
        """``1/(1 - r/(l lam_max))``, written as ``l lam_max/(l lam_max - r)``."""
        if self.lam_max is None:
            raise ValueError("eigenvalues were not computed")
        return self.l * self.lam_max / (self.l * self.lam_max - self.r)


def _identity_error(c: float) -> DataError:
    return DataError(
        f"the kernel matrix is a multiple of the identity (K = {c:.6g} I): then "
        "M(g) = (1-g) K/r + g I/l = I/l for every g, so g (and C) cannot be tuned, and the "
        "PSD range [g_min, g_max] is undefined (r = l lam_min = l lam_max). With an rbf "
        "kernel this happens when gamma is so large that k(x_i, x_j) underflows to 0: "
        "use a smaller gamma.")


def _check_not_identity(K: np.ndarray) -> float:
    """``r = trace(K)``; DataError when K is (numerically) a multiple of I, zero included."""
    l = K.shape[0]
    r = float(np.trace(K))
    c = r / l
    scale = max(abs(c), float(np.max(np.abs(K))), 1e-300)
    if r <= 0 or float(np.max(np.abs(K - c * np.eye(l)))) <= IDENTITY_REL * scale:
        raise _identity_error(c)
    return r


def spectrum(K: np.ndarray) -> GRange:
    """The admissible g range of ``K``: trace and extreme eigenvalues (an O(l^3) eigvalsh)."""
    r = _check_not_identity(K)
    lam = np.linalg.eigvalsh((K + K.T) / 2)
    lam_min, lam_max = float(lam[0]), float(lam[-1])
    l = K.shape[0]
    if (lam_max - lam_min) <= IDENTITY_REL * abs(lam_max):
        raise _identity_error(r / l)
    if lam_min <= EIG_ZERO_REL * l * lam_max:
        lam_min = 0.0
    return GRange(l=l, r=r, lam_min=lam_min, lam_max=lam_max)


def g_range(K: np.ndarray, variant: str = "general") -> tuple[float, float]:
    """The default ``(g_lo, g_hi)`` of ``variant`` for the kernel matrix ``K``.

    ``standard``: (0, 1); ``general``: (g_min, g_max); ``general_nonneg``: (g_min, 1).
    """
    if variant not in VARIANTS:
        raise ParameterError(f"variant must be one of {', '.join(VARIANTS)}; got {variant!r}")
    lo, hi, _ = _resolve_bounds(np.asarray(K, dtype=float), variant, None)
    return lo, hi


def _resolve_bounds(K: np.ndarray, variant: str, g_bounds) -> tuple[float, float, GRange]:
    """``(g_lo, g_hi, GRange)`` for ``variant`` or the explicit ``g_bounds``."""
    l = K.shape[0]
    if g_bounds is None:
        if variant == "standard":
            return 0.0, 1.0, GRange(l=l, r=_check_not_identity(K))
        rng = spectrum(K)
        return rng.g_min, (rng.g_max if variant == "general" else 1.0), rng
    try:
        lo, hi = (float(v) for v in g_bounds)
    except (TypeError, ValueError):
        raise ParameterError(f"g_bounds must be a pair of numbers (g_lo, g_hi); got {g_bounds!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ParameterError(f"g_bounds must be finite; got {g_bounds!r}")
    if not lo < hi:
        raise ParameterError(
            f"g_bounds must satisfy g_lo < g_hi; got ({lo!r}, {hi!r}). (For one fixed g, solve "
            "the 2-norm soft margin soft_l2_dual with C = l (1-g) / (g trace(K)).)")
    if 0.0 <= lo and hi <= 1.0:
        # a convex combination of the PSD matrices K/r and I/l: PSD for every K
        return lo, hi, GRange(l=l, r=_check_not_identity(K))
    rng = spectrum(K)
    g_min, g_max = rng.g_min, rng.g_max
    slack = G_BOUND_SLACK * max(1.0, abs(lo), abs(hi))
    if lo < g_min - slack or hi > g_max + slack:
        raise ParameterError(
            f"g_bounds ({lo:.10g}, {hi:.10g}) leave the range where M(g) = (1-g) K/r + g I/l is "
            f"positive semidefinite: [g_min, g_max] = [{g_min:.10g}, {g_max:.10g}] for this kernel "
            f"matrix (lam_min = {rng.lam_min:.6g}, lam_max = {rng.lam_max:.6g}, r = trace K = "
            f"{rng.r:.6g}). Outside it the QCQP is not convex.")
    return max(lo, g_min), min(hi, g_max), rng


def kernel_weights(g: float, l: int, r: float) -> tuple[float, float]:
    """``(w_K, w_I)`` with ``M(g) = w_K K + w_I I``: ``((1-g)/r, g/l)``."""
    return (1.0 - g) / r, g / l


def M_of_g(K: np.ndarray, g: float) -> np.ndarray:
    """The trace-one kernel matrix ``M(g) = (1-g) K/r + g I/l`` (``r = trace K``)."""
    l = K.shape[0]
    wK, wI = kernel_weights(g, l, float(np.trace(K)))
    M = wK * K
    M[np.diag_indices(l)] += wI
    return M


def C_of_g(g: float, l: int, r: float) -> tuple[float | None, str | None]:
    """``(C*, None)`` for ``0 <= g < 1`` (C* = l (1-g) / (g r), infinite at g = 0), else
    ``(None, reason)`` saying why no positive C corresponds."""
    if 0.0 <= g < 1.0:
        return (float("inf") if g == 0.0 else l * (1.0 - g) / (g * r)), None
    if g == 1.0:
        return None, ("g* = 1: M(g*) = I/l puts no weight on K (the limit C -> 0); the "
                      "classifier ignores the kernel and no positive C corresponds")
    if g > 1.0:
        return None, (f"g* = {g:.6g} > 1 puts a negative weight 1 - g* = {1.0 - g:.3g} on K "
                      "(allowed by the general variant as long as M(g*) is PSD); 1/C would be "
                      f"{g * r / (l * (1.0 - g)):.6g} < 0, so no positive C corresponds")
    return None, (f"g* = {g:.6g} < 0 subtracts a multiple of I from K (a reduced feature space, "
                  "allowed by the general variant as long as M(g*) is PSD); 1/C would be "
                  f"{g * r / (l * (1.0 - g)):.6g} < 0, so no positive C corresponds")


# ---------------------------------------------------------------------------------------
# The builder


def _objective_data(structure):
    ex = structure.extra
    c = np.zeros(ex["n"])
    c[ex["alpha"]] = 1.0
    c[ex["t"]] = -0.5
    return c, 0.0, []


def _quad_blocks(G: np.ndarray, apos: np.ndarray, g: float, l: int, r: float) -> list:
    """QuadBlocks whose sum is ``a'G(M(g))a``, each block PSD on its own (so that a conic
    backend may take a square root of each): the K part and the I part separately for g in
    [0, 1] (both weights >= 0), one combined matrix outside (one weight is negative there)."""
    wK, wI = kernel_weights(g, l, r)
    if g == 1.0:
        return [QuadBlock(apos, diag=np.full(l, wI))]
    if g == 0.0:
        return [QuadBlock(apos, matrix=G).scaled(wK)]   # scaled() may share G, not copy it
    if 0.0 < g < 1.0:
        return [QuadBlock(apos, matrix=G).scaled(wK), QuadBlock(apos, diag=np.full(l, wI))]
    Mg = wK * G
    Mg[np.diag_indices(l)] += wI  # G(I) = I since y_i^2 = 1
    return [QuadBlock(apos, matrix=Mg)]


def build_c_tuning(X, y, variant: str = "standard", *, kernel="linear", gamma="scale", degree=3,
                   coef0=0.0, g_bounds=None, block=None):
    """Fill ``block`` (or a new ConcreteModel) with the C-tuning QCQP of ``variant``."""
    if variant not in VARIANTS:
        raise ParameterError(f"variant must be one of {', '.join(VARIANTS)}; got {variant!r}")
    data, kern, K = prepare(X, y, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                            need_gram=True)
    g_lo, g_hi, rng = _resolve_bounds(K, variant, g_bounds)
    l, r = data.n_points, rng.r
    yv = data.y
    name = f"c_tuning_{variant}"
    b = new_block(block, name)
    add_points(b, data)
    b.r = pyo.Param(initialize=r, doc="r = trace(K)")
    b.g_lo = pyo.Param(initialize=g_lo, doc="lower end of the g range (kernel M(g_lo))")
    b.g_hi = pyo.Param(initialize=g_hi, doc="upper end of the g range (kernel M(g_hi))")
    b.alpha = pyo.Var(b.I, bounds=(0, None), initialize=0.0,
                      doc="dual variable alpha_i of the 2-norm soft margin in the M(g) scale")
    b.t = pyo.Var(initialize=0.0,
                  doc="t >= alpha'G(M(g))alpha for every g in [g_lo, g_hi] (epigraph of the "
                      "worst case over g: the larger of the two ends)")
    layout = Layout()
    apos = layout.add(b.alpha)
    tpos = layout.add(b.t)
    G = K * np.outer(yv, yv)
    alist = list(b.alpha.values())
    b.quad = LazyScalarExpression(recipe=(dense_quadratic_form, (G, alist)),
                                  doc="alpha'G(K)alpha with G_ij = y_i y_j K_ij")
    b.ridge = LazyScalarExpression(recipe=(diagonal_quadratic_form, (np.ones(l), alist)),
                                   doc="alpha'alpha = alpha'G(I)alpha")
    rows = [add_balance(b, layout, b.alpha, yv)]

    def form(g):  # alpha'G(M(g))alpha = (1-g)/r quad + g/l ridge, zero terms left out
        wK, wI = kernel_weights(g, l, r)
        parts = ([wK * b.quad] if wK != 0.0 else []) + ([wI * b.ridge] if wI != 0.0 else [])
        return sum(parts[1:], parts[0])

    b.t_hi = pyo.Constraint(expr=b.t - form(g_hi) >= 0,
                            doc="t >= alpha'G(M(g_hi))alpha, M(g) = (1-g) K/r + g I/l")
    b.t_lo = pyo.Constraint(expr=b.t - form(g_lo) >= 0,
                            doc="t >= alpha'G(M(g_lo))alpha")
    e_t = np.zeros(layout.n)
    e_t[tpos] = 1.0
    # Recorded in the <= form q(alpha) - t <= 0; the Pyomo rows read t - q >= 0: sign -1.
    qrows = [QuadRow(b.t_hi, _quad_blocks(G, apos, g_hi, l, r), -e_t, 0.0, sign=-1.0),
             QuadRow(b.t_lo, _quad_blocks(G, apos, g_lo, l, r), -e_t.copy(), 0.0, sign=-1.0)]
    b.objective = pyo.Objective(
        expr=linear_form(np.ones(l), alist) - 0.5 * b.t, sense=pyo.maximize,
        doc="e'alpha - t/2: the 2-norm soft-margin dual at the worst g of the range")
    structure = Structure(
        block=b, variables=layout.variables, objective=b.objective,
        objective_expr=b.objective.expr, objective_fn=_objective_data, rows=rows,
        quad_rows=qrows, problem_class="QCQP",
        extra={"n": layout.n, "alpha": apos, "t": tpos})
    facts = {"variant": variant, "g_lo": g_lo, "g_hi": g_hi, "r": r, "l": l,
             "lam_min": rng.lam_min, "lam_max": rng.lam_max,
             "g_min": rng.g_min if rng.lam_min is not None else None,
             "g_max": rng.g_max if rng.lam_max is not None else None}
    b._svm = BuiltSVM(formulation=name, data=data, kernel=kern, block=b, structure=structure,
                      K=K, params={"g_bounds": (g_lo, g_hi)}, extra=facts)
    return b


def c_tuning_standard(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                      g_bounds=None, block=None):
    r"""Convex tuning of C, standard variant: ``g in [0, 1]``, i.e. ``C in (0, inf]`` (QCQP).

    .. math::

        \max_{\alpha, t} \; e'\alpha - \tfrac12 t \quad \text{s.t.} \quad
        \alpha \ge 0, \; y'\alpha = 0, \;
        t \ge \alpha'\alpha / l, \; t \ge \alpha' G(K) \alpha / r

    Components: ``I`` points, ``y[i]`` labels, ``r`` = trace K, ``g_lo``/``g_hi`` the g range
    (Params), ``alpha[i] >= 0``, ``t`` (free), ``quad`` = alpha'G(K)alpha and ``ridge`` =
    alpha'alpha (lazy expressions), ``balance``: y'alpha = 0, ``t_hi``: t >= alpha'G(M(g_hi))alpha
    (here alpha'alpha/l), ``t_lo``: t >= alpha'G(M(g_lo))alpha (here alpha'G(K)alpha/r),
    ``objective``. ``g_bounds=(g_lo, g_hi)`` replaces [0, 1] by any range inside the PSD range.
    Reference: De Bie, Lanckriet & Cristianini (2003), section 3.2.
    """
    return build_c_tuning(X, y, "standard", kernel=kernel, gamma=gamma, degree=degree,
                          coef0=coef0, g_bounds=g_bounds, block=block)


def c_tuning_general(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                     g_bounds=None, block=None):
    r"""Convex tuning of C, general variant: ``g in [g_min, g_max]``, the PSD range (QCQP).

    .. math::

        \max_{\alpha, t} \; e'\alpha - \tfrac12 t \quad \text{s.t.} \quad
        \alpha \ge 0, \; y'\alpha = 0, \;
        t \ge \alpha' G(M(g_{max})) \alpha, \; t \ge \alpha' G(M(g_{min})) \alpha

    with ``g_min = -1/(r/(l lam_min) - 1)``, ``g_max = 1/(1 - r/(l lam_max))`` from the extreme
    eigenvalues of K. ``g* > 1`` (a negative weight on K) and ``g* < 0`` (a reduced feature
    space) are possible: then no positive C corresponds. Components as
    :func:`c_tuning_standard`. Reference: De Bie et al. (2003), section 3.1, problem (5).
    """
    return build_c_tuning(X, y, "general", kernel=kernel, gamma=gamma, degree=degree,
                          coef0=coef0, g_bounds=g_bounds, block=block)


def c_tuning_general_nonneg(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                            g_bounds=None, block=None):
    r"""Convex tuning of C, general variant with the weight of K kept non-negative:
    ``g in [g_min, 1]`` (QCQP).

    .. math::

        \max_{\alpha, t} \; e'\alpha - \tfrac12 t \quad \text{s.t.} \quad
        \alpha \ge 0, \; y'\alpha = 0, \;
        t \ge \alpha'\alpha / l, \; t \ge \alpha' G(M(g_{min})) \alpha

    Components as :func:`c_tuning_standard`. Reference: De Bie et al. (2003), end of 3.1.
    """
    return build_c_tuning(X, y, "general_nonneg", kernel=kernel, gamma=gamma, degree=degree,
                          coef0=coef0, g_bounds=g_bounds, block=block)


# ---------------------------------------------------------------------------------------
# Post-processing


def g_from_kkt(K: np.ndarray, y: np.ndarray, alpha: np.ndarray, support: np.ndarray):
    """``(g, b, residual)``: the least-squares solution of the inner SVM's KKT conditions.

    On the support set, ``y_i (sum_j a_j y_j M(g)_ij + b) = 1`` reads
    ``g (a_i/l - y_i u_i/r) + b y_i = 1 - y_i u_i/r`` with ``u = K (y * a)``: linear in
    ``(g, b)``. Returns the root-mean-square residual too.
    """
    l = y.shape[0]
    r = float(np.trace(K))
    u = K @ (y * alpha)
    s = support
    A = np.column_stack([alpha[s] / l - y[s] * u[s] / r, y[s]])
    rhs = 1.0 - y[s] * u[s] / r
    if s.size < 2 or np.linalg.matrix_rank(A) < 2:
        return None, None, None
    sol, *_ = np.linalg.lstsq(A, rhs, rcond=None)
    res = float(np.sqrt(np.mean((A @ sol - rhs) ** 2)))
    return float(sol[0]), float(sol[1]), res


def extract_c_tuning(block, duals=None, *, solver: str = "", interface: str = "", path: str = "",
                     time: float = 0.0, status: str = "optimal", solver_tol=None) -> Solution:
    """Solution of a solved C-tuning block.

    ``g`` is the KKT least-squares value (see :func:`g_from_kkt`), moved onto an end of the
    range when complementarity says so (only one ``t`` constraint active) and kept inside
    ``[g_lo, g_hi]``; the multiplier value is in ``extra["g_multipliers"]`` where the backend
    gives duals, with ``extra["g_agreement"]`` = the absolute difference of the two.
    """
    svm = block._svm
    facts = svm.extra
    data, K = svm.data, svm.K
    y, l = data.y, data.n_points
    r, g_lo, g_hi = facts["r"], facts["g_lo"], facts["g_hi"]
    alpha = np.clip(var_array(block.alpha), 0.0, None)
    t = float(block.t.value)
    ya = y * alpha
    u = K @ ya
    qK = float(ya @ u) / r                 # alpha'G(K)alpha / r
    qI = float(alpha @ alpha) / l          # alpha'alpha / l
    q_hi = (1.0 - g_hi) * qK + g_hi * qI
    q_lo = (1.0 - g_lo) * qK + g_lo * qI
    thr = support_threshold(max(float(alpha.max(initial=0.0)), 1.0), solver_tol)
    support = np.flatnonzero(alpha > thr)
    extra: dict = {"variant": facts["variant"], "g_lo": g_lo, "g_hi": g_hi, "r": r,
                   "lam_min": facts["lam_min"], "lam_max": facts["lam_max"],
                   "g_min": facts["g_min"], "g_max": facts["g_max"],
                   "t": t, "q_hi": q_hi, "q_lo": q_lo, "support_threshold": thr}

    # g* from the multipliers: t - q >= 0 rows, sensitivity convention => eta = -dual
    g_mult = None
    if duals is not None and block.t_hi in duals and block.t_lo in duals:
        eta_hi, eta_lo = -float(duals[block.t_hi]), -float(duals[block.t_lo])
        extra.update(eta_hi=eta_hi, eta_lo=eta_lo, eta_sum=eta_hi + eta_lo)
        tol_eta = max(ETA_SUM_TOL, 1e3 * (solver_tol or 0.0))
        if abs(eta_hi + eta_lo - 0.5) <= tol_eta and min(eta_hi, eta_lo) >= -tol_eta:
            g_mult = 2.0 * eta_hi * g_hi + 2.0 * eta_lo * g_lo
        else:
            extra["g_multipliers_reason"] = (
                f"the backend's multipliers fail the stationarity check eta_hi + eta_lo = 1/2, "
                f"eta >= 0 (eta_hi = {eta_hi:.6g}, eta_lo = {eta_lo:.6g}): not used")
    else:
        extra["g_multipliers_reason"] = "the backend reported no multipliers for t_hi, t_lo"
    extra["g_multipliers"] = g_mult
    # the multiplier of balance (y'alpha = 0) is +b in the sensitivity convention
    extra["b_multiplier"] = (float(duals[block.balance])
                             if duals is not None and block.balance in duals else None)

    # g* (and b) from the KKT conditions of the inner SVM
    g_kkt, b_kkt, res = g_from_kkt(K, y, alpha, support)
    extra["g_kkt"] = g_kkt
    extra["kkt_lstsq_residual"] = res
    extra["g_agreement"] = (abs(g_mult - g_kkt) if g_mult is not None and g_kkt is not None
                            else None)
    # complementarity: a strictly inactive t row has a zero multiplier -> g* at the other end
    act_tol = support_threshold(max(abs(t), 1.0), solver_tol)
    hi_active, lo_active = t - q_hi <= act_tol, t - q_lo <= act_tol
    extra["active"] = [n for n, a in (("t_hi", hi_active), ("t_lo", lo_active)) if a]
    if hi_active and not lo_active:
        g, source = g_hi, "complementarity: only t_hi is active, so g* = g_hi"
    elif lo_active and not hi_active:
        g, source = g_lo, "complementarity: only t_lo is active, so g* = g_lo"
    elif g_kkt is not None:
        g, source = min(max(g_kkt, g_lo), g_hi), "kkt least squares"
    elif g_mult is not None:
        g, source = min(max(g_mult, g_lo), g_hi), "multipliers"
    else:
        raise DataError("g* cannot be recovered: fewer than two support vectors and no multipliers")
    extra["g_source"] = source
    wK, wI = kernel_weights(g, l, r)
    # b: least squares of the KKT conditions at the chosen g (one unknown)
    if support.size:
        b = float(np.mean(y[support] * (1.0 - wI * alpha[support]) - wK * u[support]))
    else:
        b = b_kkt if b_kkt is not None else 0.0
    extra["b_kkt"] = b_kkt
    C, why = C_of_g(g, l, r)
    extra["C_reason"] = why
    extra["gamma_star"] = (g * r / (l * (1.0 - g))) if g != 1.0 else float("inf")

    coef = ya * wK                                  # f(x) = sum_i coef_i k(x_i, x) + b
    fK = wK * u                                     # f(x_i) - b on the training points
    xi = wI * alpha                                 # y_i f(x_i) = 1 - xi_i on the support set
    mgn = y * (fK + b) - 1.0 + xi                   # 0 on the support set, >= 0 elsewhere
    aGMa = wK * float(ya @ u) + wI * float(alpha @ alpha)   # alpha'G(M(g*))alpha
    dual_obj = float(alpha.sum() - 0.5 * aGMa)
    primal_obj = 0.5 * aGMa
    kkt = {"balance": float(abs(y @ alpha)),
           "primal_infeasibility": float(np.max(np.maximum(0.0, -mgn), initial=0.0)),
           "complementarity": float(np.max(np.abs(alpha * mgn), initial=0.0)),
           "t_gap": float(t - max(q_hi, q_lo))}
    if "eta_sum" in extra:
        kkt["eta_sum"] = float(abs(extra["eta_sum"] - 0.5))
    extra["margin_M"] = 1.0 / np.sqrt(aGMa) if aGMa > 0 else None
    if C is not None:
        extra["soft_l2_objective_at_C"] = dual_obj * wK   # the same SVM in the scale of K + I/C
    linear_w = data.X.T @ coef if svm.kernel.is_linear else None
    ww = float(coef @ (K @ coef))
    sv_X = data.X[support] if svm.kernel.name != "precomputed" else np.zeros((support.size, 0))
    return Solution(
        formulation=svm.formulation, solver=solver, status=status, w=linear_w, b=b, alpha=alpha,
        coef=coef, xi=xi, support=support, support_vectors=sv_X,
        objective=float(pyo.value(block.objective)), kernel=svm.kernel, classes=data.classes,
        primal_objective=primal_obj, dual_objective=dual_obj,
        duality_gap=(primal_obj - dual_obj) / max(1.0, abs(primal_obj)), kkt=kkt,
        margin=(1.0 / np.sqrt(ww)) if ww > 0 else None, C=C, g=float(g), time=time,
        interface=interface, path=path, extra=extra)


# ---------------------------------------------------------------------------------------
# The saddle-point diagnostic


@dataclass(frozen=True)
class SaddlePointCheck:
    """The plain 2-norm SVM dual re-solved with the kernel fixed at ``M(g*)``.

    ``value_qcqp``/``value_svm``: the two optimal values (same scale: ``e'a - 1/2 a'G(M)a``);
    ``value_rel_diff``: their difference relative to ``max(1, |value_qcqp|)``;
    ``alpha_rel_diff``: ``max |a_svm - a_qcqp| / max(1, max a_qcqp)``; ``b_diff``: bias difference;
    ``ok``: both relative differences within ``tol``; ``svm``: the re-solved Solution.
    """

    g: float
    value_qcqp: float
    value_svm: float
    value_rel_diff: float
    alpha_rel_diff: float
    b_diff: float
    tol: float
    ok: bool
    svm: Solution = field(repr=False)


def saddle_point_check(X, y, solution: Solution, *, solver: str = "ipopt", tol: float = 1e-6,
                       **solve_options) -> SaddlePointCheck:
    """Check that ``(alpha*, g*)`` of a C-tuning solution is a saddle point.

    Solves ``max_a e'a - 1/2 a'G(M(g*))a, a >= 0, y'a = 0`` (the hard-margin dual with the
    precomputed kernel ``M(g*)``, PSD since g* is in the PSD range) with ``solver`` and
    compares its optimal value and ``alpha`` with the QCQP's. ``X, y`` are the training data
    the solution was fitted on (for ``kernel="precomputed"``: the training Gram matrix).
    """
    from .api import build, solve
    from .data import validate

    if solution.g is None:
        raise ParameterError("saddle_point_check needs a C-tuning solution (solution.g is None)")
    precomputed = solution.kernel.name == "precomputed"
    data = validate(X, y, precomputed=precomputed)
    if data.n_points != solution.alpha.shape[0]:
        raise DataError(f"the solution was fitted on {solution.alpha.shape[0]} points; "
                        f"X has {data.n_points}")
    K = data.X if precomputed else solution.kernel.gram(data.X)
    M = M_of_g(np.array(K, dtype=float), float(solution.g))
    M = (M + M.T) / 2
    model = build("hard_dual", M, data.y, kernel="precomputed")
    svm = solve(model, solver, **solve_options)
    v_q = float(solution.objective)
    v_s = float(svm.objective)
    dv = abs(v_s - v_q) / max(1.0, abs(v_q))
    da = float(np.max(np.abs(svm.alpha - solution.alpha))) / max(1.0, float(solution.alpha.max()))
    return SaddlePointCheck(g=float(solution.g), value_qcqp=v_q, value_svm=v_s, value_rel_diff=dv,
                            alpha_rel_diff=da, b_diff=abs(svm.b - solution.b), tol=tol,
                            ok=bool(dv <= tol and da <= tol), svm=svm)


# ---------------------------------------------------------------------------------------
# Registration

_PARAMS = ("kernel", "gamma", "degree", "coef0", "g_bounds")
for _fn, _variant in [(c_tuning_standard, "standard"), (c_tuning_general, "general"),
                      (c_tuning_general_nonneg, "general_nonneg")]:
    register(Formulation(
        name=_fn.__name__, family="c_tuning", form="dual", problem_class="QCQP", builder=_fn,
        extractor=extract_c_tuning, summary=(_fn.__doc__ or "").strip().splitlines()[0],
        params=_PARAMS))

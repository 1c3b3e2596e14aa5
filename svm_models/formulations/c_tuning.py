r"""Convex tuning of the soft-margin parameter C (De Bie, Lanckriet & Cristianini, 2003).

The 2-norm soft margin is a hard margin with the kernel ``K + I/C``. Normalising the trace
and writing ``g = gamma l / (gamma l + r)`` with ``gamma = 1/C`` and ``r = trace(K)`` gives
the kernel family, linear in ``g`` and of trace 1,

.. math::

    M(g) = (1 - g) \frac{K}{r} + g \frac{I}{l},

and tuning C becomes ``min_g max_a e'a - 1/2 a'G(M(g))a`` over ``a >= 0, y'a = 0`` and
``g in [g_lo, g_hi]``. The objective being linear in g, the inner maximum over g sits at an
end of the range, which gives the QCQP of ``formulations/c_tuning.md``:

.. math::

    \max_{a, t} \; e'a - \tfrac12 t \quad \text{s.t.} \quad a \ge 0, \; y'a = 0, \;
    t \ge a' G(M(g_{hi})) a, \; t \ge a' G(M(g_{lo})) a .

The builders state it in its better-conditioned **norm form** (``form="norm"``, the
default): with ``t = s^2`` and factors ``F_g`` of full column rank, ``F_g'F_g = G(M(g))``,

.. math::

    \max_{a, s} \; e'a - \tfrac12 s^2 \quad \text{s.t.} \quad a \ge 0, \; y'a = 0, \;
    \|F_{g_{hi}} a\| \le s, \; \|F_{g_{lo}} a\| \le s,

two second-order cones (a SOCP). Every conic and interior-point backend solves it reliably,
where the quadratic t-form ended 'sub-optimal' (Gurobi) or 'almost solved' (Clarabel) on
about half of ordinary instances. The factor coordinates are shared by both cones:
``z = L'D_y a`` with ``K = L L'`` (pivoted Cholesky) when the range lies in [0, 1] (then
``||F_g a||^2 = (1-g)/r ||z||^2 + g/l ||a||^2``), or ``z = V'D_y a`` with the eigenvectors of
K otherwise (``||F_g a||^2 = sum_k ((1-g) lam_k/r + g/l) z_k^2``, every weight >= 0 in the
PSD range). ``form="quadratic"`` builds the t-form as written above (for comparison).

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

Post-processing (:func:`extract`): the optimal ``g*`` from the multipliers of the two
constraints (``g* = 2 eta_hi g_hi + 2 eta_lo g_lo``, ``eta_hi + eta_lo = 1/2``; in the norm
form ``eta`` is the multiplier of the squared cone ``||F a||^2 <= s^2``, the same number)
where the backend reports them, and always from the KKT conditions of the inner SVM (a
least-squares solve for ``(g, b)`` on the support set); ``C* = 1/gamma*`` with
``gamma* = g* r / (l (1 - g*))`` for ``0 <= g* < 1``; prediction
``f(x) = sum_i a_i y_i (1 - g*)/r k(x_i, x) + b``. The saddle-point check re-solves the
plain SVM dual with the kernel fixed at ``M(g*)`` (:mod:`svm_models.methods.saddle`).

Reference: T. De Bie, G. R. G. Lanckriet, N. Cristianini, "Convex Tuning of the Soft Margin
Parameter", UC Berkeley tech. report UCB/CSD-03-1289 (2003); ``formulations/c_tuning.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from ..errors import DataError, ParameterError, SolveFailedError, plain
from ..kernels import factor
from ..model.built import BuiltSVM
from ..model.forms import Cone, QuadBlock, QuadRow
from ..model.lazy import (
    LazyScalarExpression,
    dense_quadratic_form,
    diagonal_quadratic_form,
    linear_form,
)
from ..model.pieces import (
    Layout,
    add_balance,
    add_factor_rows,
    add_points,
    check_choice,
    declare_factor,
    new_block,
    prepare,
)
from ..model.record import LinearTerm, QuadTerm, Record, Scale
from ..postprocess import POLISH_MAX_FREE, block_objective, var_array
from ..solution import CTuningDetails, Solution
from ..status import Status
from ..tolerances import (
    CT_NEWTON_STEP,
    CT_POLISH_TOL,
    EIG_ZERO_REL,
    ETA_SUM_TOL,
    G_BOUND_SLACK,
    IDENTITY_REL,
    alpha_scale,
    support_threshold,
)
from .base import Formulation, register
from .params import FORMS, document_parameters

VARIANTS = ("standard", "general", "general_nonneg")


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
    lam: np.ndarray | None = field(default=None, repr=False)
    V: np.ndarray | None = field(default=None, repr=False)

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


@dataclass(frozen=True)
class CTuningFacts:
    """What a C-tuning builder leaves in ``BuiltSVM.facts`` for :func:`extract` and the hooks."""

    #: the variant ("standard", "general", "general_nonneg"); the form ("norm" or "quadratic")
    variant: str
    form: str
    #: l, the number of training points, and r = trace(K)
    l: int
    r: float
    #: the ends of the g range of the model
    g_lo: float
    g_hi: float
    #: K's extreme eigenvalues and its PSD range [g_min, g_max] (None: not computed, g in [0, 1])
    lam_min: float | None = None
    lam_max: float | None = None
    g_min: float | None = None
    g_max: float | None = None
    #: the norm form's factor coordinates, "eigen" or "cholesky" (None: the quadratic form)
    coordinates: str | None = None


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


def spectrum(K: np.ndarray, vectors: bool = False) -> GRange:
    """The admissible g range of ``K``: trace and extreme eigenvalues (an O(l^3) eigvalsh),
    with all eigenvalues and eigenvectors when ``vectors``."""
    r = _check_not_identity(K)
    if vectors:
        lam, V = np.linalg.eigh((K + K.T) / 2)
    else:
        lam, V = np.linalg.eigvalsh((K + K.T) / 2), None
    lam_min, lam_max = float(lam[0]), float(lam[-1])
    l = K.shape[0]
    if (lam_max - lam_min) <= IDENTITY_REL * abs(lam_max):
        raise _identity_error(r / l)
    if lam_min <= EIG_ZERO_REL * l * lam_max:
        lam_min = 0.0
    return GRange(l=l, r=r, lam_min=lam_min, lam_max=lam_max, lam=lam, V=V)


def g_range(K: np.ndarray, variant: str = "general") -> tuple[float, float]:
    """The default ``(g_lo, g_hi)`` of ``variant`` for the kernel matrix ``K``.

    ``standard``: (0, 1); ``general``: (g_min, g_max); ``general_nonneg``: (g_min, 1).
    """
    if variant not in VARIANTS:
        raise ParameterError(f"variant must be one of {', '.join(VARIANTS)}; got {variant!r}")
    lo, hi, _ = _resolve_bounds(np.asarray(K, dtype=float), variant, None)
    return lo, hi


def _resolve_bounds(K: np.ndarray, variant: str, g_bounds,
                    vectors: bool = False) -> tuple[float, float, GRange]:
    """``(g_lo, g_hi, GRange)`` for ``variant`` or the explicit ``g_bounds`` (eigenvectors
    computed when the range leaves [0, 1] and ``vectors``)."""
    l = K.shape[0]
    if g_bounds is None:
        if variant == "standard":
            return 0.0, 1.0, GRange(l=l, r=_check_not_identity(K))
        rng = spectrum(K, vectors)
        return rng.g_min, (rng.g_max if variant == "general" else 1.0), rng
    try:
        lo, hi = (float(v) for v in g_bounds)
    except (TypeError, ValueError):
        raise ParameterError("g_bounds must be a pair of numbers (g_lo, g_hi); "
                             f"got {plain(g_bounds)!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ParameterError(f"g_bounds must be finite; got {plain(g_bounds)!r}")
    if not lo < hi:
        raise ParameterError(
            f"g_bounds must satisfy g_lo < g_hi; got ({lo!r}, {hi!r}). (For one fixed g, solve "
            "the 2-norm soft margin soft_l2_dual with C = l (1-g) / (g trace(K)).)")
    if 0.0 <= lo and hi <= 1.0:
        # a convex combination of the PSD matrices K/r and I/l: PSD for every K
        return lo, hi, GRange(l=l, r=_check_not_identity(K))
    rng = spectrum(K, vectors)
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


def _quad_blocks(G: np.ndarray, apos: np.ndarray, g: float, l: int, r: float) -> list:
    """QuadBlocks whose sum is ``a'G(M(g))a`` (the t-form), each PSD on its own: the K part
    and the I part separately for g in [0, 1], one combined matrix outside."""
    wK, wI = kernel_weights(g, l, r)
    if g == 1.0:
        return [QuadBlock(apos, diag=np.full(l, wI))]
    if g == 0.0:
        return [QuadBlock(apos, matrix=G).scaled(wK)]
    if 0.0 < g < 1.0:
        return [QuadBlock(apos, matrix=G).scaled(wK), QuadBlock(apos, diag=np.full(l, wI))]
    Mg = wK * G
    Mg[np.diag_indices(l)] += wI  # G(I) = I since y_i^2 = 1
    return [QuadBlock(apos, matrix=Mg)]


def _cone_weights(g: float, l: int, r: float, lam: np.ndarray | None, n_z: int) -> tuple:
    """Diagonal weights ``(on z, on alpha)`` with ``||F_g a||^2 = sum w_z z^2 + sum w_a a^2``."""
    wK, wI = kernel_weights(g, l, r)
    if lam is None:   # Cholesky coordinates z = L'D_y a: (1-g)/r ||z||^2 + g/l ||a||^2
        return np.full(n_z, wK), np.full(l, wI)
    w = wK * lam + wI   # eigen coordinates z = V'D_y a
    scale = max(float(np.max(np.abs(w))), 1e-300)
    w[w < EIG_ZERO_REL * l * scale] = 0.0   # the PSD range's end: a zero weight is exactly 0
    return w, np.zeros(l)


def _build_norm(b, layout, data, K, rng, g_lo, g_hi):
    """The norm form's components and record pieces: ``z``, ``factor``, ``s``, ``q_hi``,
    ``q_lo``, ``cone_hi``, ``cone_lo``."""
    l, r, y = data.n_points, rng.r, data.y
    if 0.0 <= g_lo and g_hi <= 1.0:
        Lf, lam = factor(K), None
    else:
        Lf, lam = rng.V, rng.lam
    F = (Lf * y[:, None]).T
    declare_factor(b, F.shape[0])
    zpos = layout.add(b.z)
    b.s = pyo.Var(bounds=(0, None), initialize=0.0,
                  doc="s >= ||F_g alpha|| at both ends of the g range (s^2 = the worst-case "
                      "alpha'G(M(g))alpha)")
    spos = layout.add(b.s)
    apos = layout.pos["alpha"]
    rows = [add_factor_rows(b, layout, b.alpha, Lf, y)]
    zl, al = list(b.z.values()), list(b.alpha.values())
    cones = []
    for end, g in (("hi", g_hi), ("lo", g_lo)):
        wz, wa = _cone_weights(g, l, r, lam, F.shape[0])
        expr = LazyScalarExpression(
            recipe=(_diag_sum, (wz, zl, wa, al)),
            doc=f"alpha'G(M(g_{end}))alpha as a sum of squares of the factor coordinates")
        b.add_component(f"q_{end}", expr)
        con = pyo.Constraint(expr=expr - b.s ** 2 <= 0,
                             doc=f"cone: ||F(g_{end}) alpha||^2 <= s^2 (s >= 0)")
        b.add_component(f"cone_{end}", con)
        keep_z, keep_a = np.flatnonzero(wz), np.flatnonzero(wa)
        idx = np.concatenate([spos, zpos[keep_z], apos[keep_a]])
        vals = np.concatenate([[1.0], np.sqrt(wz[keep_z]), np.sqrt(wa[keep_a])])
        A = sp.csr_matrix((vals, (np.arange(len(idx)), idx)), shape=(len(idx), layout.n))
        cones.append(Cone("soc", A, np.zeros(len(idx)), con, 1.0))
    return rows, cones, spos, lam is not None


def _diag_sum(wz, zl, wa, al):
    return diagonal_quadratic_form(np.concatenate([wz, wa]), zl + al)


def build_c_tuning(X, y, variant: str = "standard", *, kernel="linear", gamma="scale", degree=3,
                   coef0=0.0, g_bounds=None, form="auto", block=None):
    """Fill ``block`` (or a new ConcreteModel) with the C-tuning problem of ``variant``."""
    if variant not in VARIANTS:
        raise ParameterError(f"variant must be one of {', '.join(VARIANTS)}; got {variant!r}")
    check_choice("form", form, FORMS)
    norm = form != "quadratic"
    data, kern, K = prepare(X, y, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                            need_gram=True)
    g_lo, g_hi, rng = _resolve_bounds(K, variant, g_bounds, vectors=norm)
    if norm and not (0.0 <= g_lo and g_hi <= 1.0) and rng.V is None:
        rng = spectrum(K, vectors=True)
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
    layout = Layout()
    apos = layout.add(b.alpha)
    alist = list(b.alpha.values())
    rows = [add_balance(b, layout, b.alpha, yv)]
    coordinates = None
    if norm:
        frows, cones, spos, eigen = _build_norm(b, layout, data, K, rng, g_lo, g_hi)
        rows = frows + rows
        coordinates = "eigen" if eigen else "cholesky"
        b.objective = pyo.Objective(
            expr=linear_form(np.ones(l), alist) - 0.5 * b.s ** 2, sense=pyo.maximize,
            doc="e'alpha - s^2/2: the 2-norm soft-margin dual at the worst g of the range")
        record = Record(block=b, variables=layout.variables, objective=b.objective, sense=-1,
                        linear=[LinearTerm(apos, 1.0)],
                        quadratic=[QuadTerm(QuadBlock(spos, diag=np.ones(1)), Scale(-0.5))],
                        rows=rows, cones=cones, problem_class="SOCP").seal()
    else:
        b.t = pyo.Var(initialize=0.0,
                      doc="t >= alpha'G(M(g))alpha at both ends of the g range")
        tpos = layout.add(b.t)
        G = K * np.outer(yv, yv)
        b.quad = LazyScalarExpression(recipe=(dense_quadratic_form, (G, alist)),
                                      doc="alpha'G(K)alpha with G_ij = y_i y_j K_ij")
        b.ridge = LazyScalarExpression(recipe=(diagonal_quadratic_form, (np.ones(l), alist)),
                                       doc="alpha'alpha = alpha'G(I)alpha")

        def q(g):  # alpha'G(M(g))alpha = (1-g)/r quad + g/l ridge, zero terms left out
            wK, wI = kernel_weights(g, l, r)
            parts = ([wK * b.quad] if wK != 0.0 else []) + ([wI * b.ridge] if wI != 0.0 else [])
            return sum(parts[1:], parts[0])

        b.t_hi = pyo.Constraint(expr=b.t - q(g_hi) >= 0,
                                doc="t >= alpha'G(M(g_hi))alpha, M(g) = (1-g) K/r + g I/l")
        b.t_lo = pyo.Constraint(expr=b.t - q(g_lo) >= 0, doc="t >= alpha'G(M(g_lo))alpha")
        e_t = np.zeros(layout.n)
        e_t[tpos] = 1.0
        # recorded as q(alpha) - t <= 0; the Pyomo rows read t - q >= 0: sign -1
        qrows = [QuadRow(b.t_hi, _quad_blocks(G, apos, g_hi, l, r), -e_t, 0.0, sign=-1.0),
                 QuadRow(b.t_lo, _quad_blocks(G, apos, g_lo, l, r), -e_t.copy(), 0.0, sign=-1.0)]
        b.objective = pyo.Objective(
            expr=linear_form(np.ones(l), alist) - 0.5 * b.t, sense=pyo.maximize,
            doc="e'alpha - t/2: the 2-norm soft-margin dual at the worst g of the range")
        c_t = np.zeros(len(tpos))
        c_t[:] = -0.5
        record = Record(block=b, variables=layout.variables, objective=b.objective, sense=-1,
                        linear=[LinearTerm(apos, 1.0), LinearTerm(tpos, c_t)], rows=rows,
                        quad_rows=qrows, problem_class="QCQP").seal()
    facts = CTuningFacts(variant=variant, form="norm" if norm else "quadratic", l=l, r=r,
                         g_lo=g_lo, g_hi=g_hi, lam_min=rng.lam_min, lam_max=rng.lam_max,
                         g_min=rng.g_min if rng.lam_min is not None else None,
                         g_max=rng.g_max if rng.lam_max is not None else None,
                         coordinates=coordinates)
    b._svm = BuiltSVM(formulation=name, data=data, kernel=kern, block=b, record=record, K=K,
                      facts=facts)
    return b


_DOC_COMMON = """

    Problem class: SOCP (the default norm form: two second-order cones); QCQP with
    ``form="quadratic"`` (the t-form: ``t >= alpha'G(M(g))alpha`` at both ends).

    Components of both forms:

    * ``I``: the training points i (Set); ``y[i]``: the labels in {-1, +1} (Param).
    * ``r``: ``trace(K)``; ``g_lo``, ``g_hi``: the ends of the g range (Params, fixed at build).
    * ``alpha[i]``: the 2-norm dual variables in the ``M(g)`` scale, ``>= 0`` (a bound).
    * ``balance``: ``sum_i y_i alpha_i = 0``.
    * ``objective``: ``sum(alpha) - s^2/2`` (norm form) or ``sum(alpha) - t/2`` (t-form),
      maximised.

    Norm form (``form="norm"``, the default for ``"auto"``):

    * ``R``, ``z[k]``: the coordinates ``z = F alpha``, ``F = L'D_y`` (Cholesky, ``K = L L'``)
      when the range lies in [0, 1], else ``V'D_y`` (the eigenvectors of K).
    * ``Fv[k]``: the lazy images ``(F alpha)_k``; ``factor[k]``: ``z[k] = Fv[k]``.
    * ``s``: ``s >= 0``, the square root of the larger quadratic form.
    * ``q_hi``, ``q_lo``: ``alpha'G(M(g_hi))alpha``, ``alpha'G(M(g_lo))alpha`` as weighted sums
      of squares of ``(z, alpha)`` (lazy Expressions; zero weights left out).
    * ``cone_hi``, ``cone_lo``: ``q_hi - s^2 <= 0``, ``q_lo - s^2 <= 0`` (cones, ``s >= 0``).

    t-form (``form="quadratic"``):

    * ``t``: the epigraph variable (free).
    * ``quad``: ``alpha'G(K)alpha``; ``ridge``: ``alpha'alpha`` (lazy Expressions).
    * ``t_hi``, ``t_lo``: ``t - [(1-g)/r quad + g/l ridge] >= 0`` at ``g_hi``, ``g_lo`` (zero
      terms left out).

    @parameters@"""


def c_tuning_standard(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                      g_bounds=None, form="auto", block=None):
    return build_c_tuning(X, y, "standard", kernel=kernel, gamma=gamma, degree=degree,
                          coef0=coef0, g_bounds=g_bounds, form=form, block=block)


def c_tuning_general(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                     g_bounds=None, form="auto", block=None):
    return build_c_tuning(X, y, "general", kernel=kernel, gamma=gamma, degree=degree,
                          coef0=coef0, g_bounds=g_bounds, form=form, block=block)


def c_tuning_general_nonneg(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                            g_bounds=None, form="auto", block=None):
    return build_c_tuning(X, y, "general_nonneg", kernel=kernel, gamma=gamma, degree=degree,
                          coef0=coef0, g_bounds=g_bounds, form=form, block=block)


c_tuning_standard.__doc__ = r"""Convex tuning of C, standard variant: ``g in [0, 1]``, i.e.
    ``C in (0, inf]``.

    .. math::

        \max_{\alpha, s} \; e'\alpha - \tfrac12 s^2 \quad \text{s.t.} \quad
        \alpha \ge 0, \; y'\alpha = 0, \;
        \alpha'\alpha / l \le s^2, \; \alpha' G(K) \alpha / r \le s^2, \; s \ge 0""" + _DOC_COMMON + """

    References
    ----------
    De Bie, Lanckriet & Cristianini (2003), section 3.2; the catalogue page
    ``formulations/c_tuning_standard.md``.
    """
c_tuning_general.__doc__ = r"""Convex tuning of C, general variant: ``g in [g_min, g_max]``,
    the PSD range.

    .. math::

        \max_{\alpha, s} \; e'\alpha - \tfrac12 s^2 \quad \text{s.t.} \quad
        \alpha \ge 0, \; y'\alpha = 0, \;
        \alpha' G(M(g_{max})) \alpha \le s^2, \; \alpha' G(M(g_{min})) \alpha \le s^2

    with ``g_min = -1/(r/(l lam_min) - 1)``, ``g_max = 1/(1 - r/(l lam_max))`` from the extreme
    eigenvalues of K. ``g* > 1`` (a negative weight on K) and ``g* < 0`` (a reduced feature
    space) are possible: then no positive C corresponds.""" + _DOC_COMMON + """

    References
    ----------
    De Bie, Lanckriet & Cristianini (2003), section 3.1, problem (5); the catalogue page
    ``formulations/c_tuning_general.md``.
    """
c_tuning_general_nonneg.__doc__ = r"""Convex tuning of C, general variant with the weight of K
    kept non-negative: ``g in [g_min, 1]``.

    .. math::

        \max_{\alpha, s} \; e'\alpha - \tfrac12 s^2 \quad \text{s.t.} \quad
        \alpha \ge 0, \; y'\alpha = 0, \;
        \alpha'\alpha / l \le s^2, \; \alpha' G(M(g_{min})) \alpha \le s^2""" + _DOC_COMMON + """

    References
    ----------
    De Bie, Lanckriet & Cristianini (2003), end of section 3.1 (``g_max`` replaced by 1 in
    problem (5)); the catalogue page ``formulations/c_tuning_general_nonneg.md``.
    """
for _builder in (c_tuning_standard, c_tuning_general, c_tuning_general_nonneg):
    document_parameters()(_builder)


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


class _Inner:
    """The inner SVM of the QCQP at any g: ``Q(g) = G(M(g)) = D_y ((1-g) K/r + g I/l) D_y``."""

    def __init__(self, K, y, g_lo, g_hi):
        self.K, self.y, self.l = K, y, y.shape[0]
        self.r = float(np.trace(K))
        self.g_lo, self.g_hi = g_lo, g_hi

    def Q_times(self, g, a):
        wK, wI = kernel_weights(g, self.l, self.r)
        return self.y * (wK * (self.K @ (self.y * a))) + wI * a

    def Q_block(self, g, S):
        wK, wI = kernel_weights(g, self.l, self.r)
        Q = wK * self.K[np.ix_(S, S)] * np.outer(self.y[S], self.y[S])
        Q[np.diag_indices(S.size)] += wI
        return Q

    def q_diff(self, a):
        """``(a'G(M(g_hi))a - a'G(M(g_lo))a) / (g_hi - g_lo) = a'a/l - a'G(K)a/r`` and the
        scale ``max(a'a/l, a'G(K)a/r)``."""
        ya = self.y * a
        qI, qK = float(a @ a) / self.l, float(ya @ (self.K @ ya)) / self.r
        return qI - qK, max(qI, qK, 1e-300)

    def end(self, S, g):
        """The SVM at ``M(g)`` with support ``S``: ``Q_SS a_S + b y_S = 1, y_S'a_S = 0``."""
        k = S.size
        A = np.zeros((k + 1, k + 1))
        A[:k, :k] = self.Q_block(g, S)
        A[:k, k] = A[k, :k] = self.y[S]
        x = _solve(A, np.r_[np.ones(k), 0.0])
        return (None, None, None) if x is None else (_spread(x[:k], S, self.l), float(x[k]), g)

    def inside(self, S, a0, b0, g0, iters=30):
        """Newton on ``(a_S, b, g)`` for the SVM at ``M(g)`` with ``a'Da = 0``
        (``D = I/l - G(K)/r``: both ends of the range active)."""
        y, k = self.y[S], S.size
        GK = self.K[np.ix_(S, S)] * np.outer(y, y) / self.r
        D = np.eye(k) / self.l - GK
        aS, b, g = a0[S].copy(), float(b0), float(g0)
        scale = max(1.0, float(np.abs(aS).max()))
        for _ in range(iters):
            QS = self.Q_block(g, S)
            Da = D @ aS
            F = np.r_[QS @ aS + b * y - 1.0, y @ aS, aS @ Da / scale]
            J = np.zeros((k + 2, k + 2))
            J[:k, :k] = QS
            J[:k, k] = J[k, :k] = y
            J[:k, k + 1] = Da
            J[k + 1, :k] = 2.0 * Da / scale
            dx = _solve(J, -F)
            if dx is None:
                return None, None, None
            aS, b, g = aS + dx[:k], b + dx[k], g + dx[k + 1]
            if (np.abs(dx[:k]).max() <= CT_NEWTON_STEP * scale
                    and abs(dx[k + 1]) <= CT_NEWTON_STEP * max(1.0, abs(g))):
                break
        return _spread(aS, S, self.l), float(b), float(g)

    def violation(self, a, b, g, pattern) -> float:
        """Largest violation of the optimality conditions of ``(a, g, b)`` (margin units):
        ``a >= 0``, ``y'a = 0``, ``(Q(g)a)_i + b y_i = 1`` where ``a_i > 0`` and ``>= 1``
        elsewhere, g in the range and, by ``pattern``, both ends active ("in", q_hi = q_lo)
        or the end g sits at the larger ("hi": q_hi >= q_lo, "lo": q_lo >= q_hi)."""
        amax = max(float(a.max(initial=0.0)), 1e-300)
        m = self.Q_times(g, a) + b * self.y - 1.0
        S = a > 0
        d, qs = self.q_diff(a)
        pat = abs(d) if pattern == "in" else max(0.0, -d) if pattern == "hi" else max(0.0, d)
        span = self.g_hi - self.g_lo
        return max(max(0.0, -float(a.min(initial=0.0))) / amax,
                   float(np.abs(m[S]).max(initial=0.0)),
                   max(0.0, -float(m[~S].min(initial=0.0))),
                   abs(float(self.y @ a)) / amax,
                   max(0.0, self.g_lo - g, g - self.g_hi) / span,
                   pat * span / qs)


def _solve(A, rhs):
    try:
        x = np.linalg.solve(A, rhs)
    except np.linalg.LinAlgError:
        return None
    return x if np.all(np.isfinite(x)) else None


def _spread(aS, S, l):
    a = np.zeros(l)
    a[S] = aS
    return a


def polish(inner: _Inner, alpha, g0, b0, thr, rounds: int = 20):
    """Solve the optimality conditions exactly on the backend's support set.

    For each pattern (both ends active, or g at one end) the equalities on the support set
    ``S = {alpha_i > thr}`` are a square system (linear at an end, Newton in ``(a_S, b, g)``
    inside); the first solution that meets every condition (:meth:`_Inner.violation` below
    ``CT_POLISH_TOL``) is returned as ``(alpha, g, b, pattern)``. When none does, S is
    corrected by one point (a negative component leaves, the worst violated margin enters)
    and the systems are solved again, at most ``rounds`` times. None if no verified point is
    found (or S is too large for a dense solve): the backend's answer then stands."""
    S = alpha > thr
    for _ in range(rounds):
        idx = np.flatnonzero(S)
        if idx.size == 0 or idx.size > POLISH_MAX_FREE:
            return None
        g_in = min(max(g0, inner.g_lo), inner.g_hi)
        best = None
        for pattern, (a, b, g) in (("in", inner.inside(idx, alpha, b0, g_in)),
                                   ("hi", inner.end(idx, inner.g_hi)),
                                   ("lo", inner.end(idx, inner.g_lo))):
            if a is None:
                continue
            v = inner.violation(a, b, g, pattern)
            if v <= CT_POLISH_TOL:
                return a, g, b, pattern
            if best is None or v < best[0]:
                best = (v, a, b, g)
        if best is None:
            return None
        _, a, b, g = best
        m = inner.Q_times(min(max(g, inner.g_lo), inner.g_hi), a) + b * inner.y - 1.0
        neg, off = S & (a <= 0), ~S & (m < -CT_POLISH_TOL)
        if not (neg.any() or off.any()):
            return None
        if neg.any():
            S[np.flatnonzero(neg)[np.argmin(a[neg])]] = False
        if off.any():
            S[np.flatnonzero(off)[np.argmin(m[off])]] = True
        alpha, b0, g0 = np.maximum(a, 0.0), b, g
    return None


def extract(block, ctx) -> Solution:
    """Solution of a solved C-tuning block.

    ``g`` is the KKT least-squares value (see :func:`g_from_kkt`), moved onto an end of the
    range when complementarity says so (only one constraint active) and kept inside
    ``[g_lo, g_hi]``; the multiplier value is ``details.g_multipliers`` where the backend
    gives duals, with ``extra["g_agreement"]`` = the absolute difference of the two.
    """
    svm = block._svm
    facts = svm.facts
    norm = facts.form == "norm"
    alpha = np.clip(var_array(block.alpha), 0.0, None)
    t = float(block.s.value) ** 2 if norm else float(block.t.value)
    p = _point(svm, alpha)
    thr = support_threshold(alpha_scale(alpha), ctx.tol)
    extra: dict = {"variant": facts.variant, "form": facts.form, "r": facts.r,
                   "lam_min": facts.lam_min, "lam_max": facts.lam_max,
                   "g_min": facts.g_min, "g_max": facts.g_max,
                   "t": t, "q_hi": p.q_hi, "q_lo": p.q_lo, "support_threshold": thr}
    g, b, found = _g_and_b(svm, block, ctx, p, t, thr, extra)
    extra["polished"] = False
    if ctx.verified:   # never polish away a user's own constraint
        out = polish(_Inner(svm.K, svm.data.y, facts.g_lo, facts.g_hi), p.alpha, g, b, thr)
        if out is not None:
            alpha, g, b, pattern = out
            extra.update(polished=True,
                         g_source=f"{extra['g_source']}, then polished (pattern {pattern!r})")
            p = _point(svm, alpha)
            t = max(p.q_hi, p.q_lo)
            # the model's objective at the polished point (s^2 = t = the larger of the two)
            extra["solver_objective"] = ctx.objective
            ctx = replace(ctx, objective=float(alpha.sum() - 0.5 * t))
    return _solution(svm, block, ctx, p, g, b, t, thr, found, extra)


@dataclass(frozen=True)
class _Point:
    """What the extractor reads at ``alpha``: ``u = K (y * alpha)`` and the two quadratic
    forms ``q(g) = (1 - g) alpha'G(K)alpha / r + g alpha'alpha / l`` at the ends of the range."""

    alpha: np.ndarray
    ya: np.ndarray
    u: np.ndarray
    q_hi: float
    q_lo: float


def _point(svm, alpha: np.ndarray) -> _Point:
    f, y = svm.facts, svm.data.y
    ya = y * alpha
    u = svm.K @ ya
    qK = float(ya @ u) / f.r               # alpha'G(K)alpha / r
    qI = float(alpha @ alpha) / len(y)     # alpha'alpha / l
    return _Point(alpha, ya, u, (1.0 - f.g_hi) * qK + f.g_hi * qI,
                  (1.0 - f.g_lo) * qK + f.g_lo * qI)


def _g_and_b(svm, block, ctx, p: _Point, t: float, thr: float, extra: dict):
    """``(g, b, (g_kkt, g_multipliers))``: g* from the KKT conditions of the inner SVM and
    from the range rows' multipliers, chosen (:func:`_choose_g`); b from the KKT conditions
    at that g, averaged over the support set."""
    f, y, l = svm.facts, svm.data.y, svm.data.n_points
    support = np.flatnonzero(p.alpha > thr)
    g_mult = _g_from_multipliers(block, ctx, f.form == "norm", f.g_lo, f.g_hi, extra)
    # the multiplier of balance (y'alpha = 0) is +b in the sensitivity convention
    extra["b_multiplier"] = ctx.dual(block.balance)
    g_kkt, b_kkt, res = g_from_kkt(svm.K, y, p.alpha, support)
    extra["kkt_lstsq_residual"] = res
    extra["g_agreement"] = (abs(g_mult - g_kkt) if g_mult is not None and g_kkt is not None
                            else None)
    g, source = _choose_g(t, p.q_hi, p.q_lo, g_kkt, g_mult, f.g_lo, f.g_hi, ctx.tol, extra)
    extra["g_source"] = source
    wK, wI = kernel_weights(g, l, f.r)
    if support.size:
        b = float(np.mean(y[support] * (1.0 - wI * p.alpha[support]) - wK * p.u[support]))
    else:
        b = b_kkt if b_kkt is not None else 0.0
    extra["b_kkt"] = b_kkt
    return g, b, (g_kkt, g_mult)


def _solution(svm, block, ctx, p: _Point, g, b, t, thr, found, extra) -> Solution:
    """The Solution at the chosen point: C and gamma of g, the classifier, the diagnostics."""
    data, K, f = svm.data, svm.K, svm.facts
    y, l, alpha = data.y, data.n_points, p.alpha
    support = np.flatnonzero(alpha > thr)
    wK, wI = kernel_weights(g, l, f.r)
    C, why = C_of_g(g, l, f.r)
    gamma_star = (g * f.r / (l * (1.0 - g))) if g != 1.0 else float("inf")
    dual_coef = p.ya * wK                           # f(x) = sum_i dual_coef_i k(x_i, x) + b
    dual_coef[alpha <= thr] = 0.0
    xi = wI * alpha                                 # y_i f(x_i) = 1 - xi_i on the support set
    aGMa = wK * float(p.ya @ p.u) + wI * float(alpha @ alpha)   # alpha'G(M(g*))alpha
    dual_obj = float(alpha.sum() - 0.5 * aGMa)
    primal_obj = 0.5 * aGMa
    if C is not None:
        extra["soft_l2_objective_at_C"] = dual_obj * wK   # the same SVM in the scale of K + I/C
    extra["margin_M"] = 1.0 / np.sqrt(aGMa) if aGMa > 0 else None
    objective = block_objective(svm, block, ctx)
    diag = {}
    if ctx.verified:
        mgn = y * (wK * p.u + b) - 1.0 + xi         # 0 on the support set, >= 0 elsewhere
        kkt = {"balance": float(abs(y @ alpha)),
               "primal_infeasibility": float(np.max(np.maximum(0.0, -mgn), initial=0.0)),
               "complementarity": float(np.max(np.abs(alpha * mgn), initial=0.0)),
               "t_gap": float(t - max(p.q_hi, p.q_lo))}
        if "eta_sum" in extra:
            kkt["eta_sum"] = float(abs(extra["eta_sum"] - 0.5))
        diag = dict(primal_objective=primal_obj, dual_objective=dual_obj,
                    duality_gap=(primal_obj - dual_obj) / max(1.0, abs(primal_obj)), kkt=kkt)
    else:
        extra["diagnostics"] = f"not computed: the model solved is not the formulation ({ctx.reason})"
    linear_w = data.X.T @ dual_coef if svm.kernel.is_linear else None
    ww = float(dual_coef @ (K @ dual_coef))
    sv_X = data.X[support] if svm.kernel.name != "precomputed" else np.zeros((support.size, 0))
    details = CTuningDetails(g=float(g), gamma=gamma_star, C_reason=why, g_lo=f.g_lo, g_hi=f.g_hi,
                             g_kkt=found[0], g_multipliers=found[1])
    return Solution(
        formulation=svm.formulation, solver=ctx.solver, status=ctx.status, w=linear_w, b=b,
        alpha=alpha, dual_coef=dual_coef, xi=xi, support=support, support_vectors=sv_X,
        objective=objective, kernel=svm.kernel, classes=data.classes,
        margin=(1.0 / np.sqrt(ww)) if ww > 0 else None, C=C, details=details, time=ctx.time,
        interface=ctx.interface, path=ctx.path, extra=extra, **diag)


def _g_from_multipliers(block, ctx, norm: bool, g_lo: float, g_hi: float, extra: dict):
    """g* from the multipliers of the two range constraints (None when the backend gives
    none, or they fail the stationarity check ``eta_hi + eta_lo = 1/2``, ``eta >= 0``; said
    in ``extra``). In the sensitivity convention the cones ``q - s^2 <= 0`` of a
    maximisation have duals ``+eta``; the t-form's rows ``t - q >= 0`` have duals ``-eta``."""
    con_hi, con_lo = (block.cone_hi, block.cone_lo) if norm else (block.t_hi, block.t_lo)
    d_hi, d_lo = ctx.dual(con_hi), ctx.dual(con_lo)
    if not (ctx.verified and d_hi is not None and d_lo is not None):
        extra["g_multipliers_reason"] = "the backend reported no multipliers of the two constraints"
        return None
    sign = 1.0 if norm else -1.0
    eta_hi, eta_lo = sign * d_hi, sign * d_lo
    extra.update(eta_hi=eta_hi, eta_lo=eta_lo, eta_sum=eta_hi + eta_lo)
    tol_eta = max(ETA_SUM_TOL, 1e3 * (ctx.tol or 0.0))
    if abs(eta_hi + eta_lo - 0.5) <= tol_eta and min(eta_hi, eta_lo) >= -tol_eta:
        return 2.0 * eta_hi * g_hi + 2.0 * eta_lo * g_lo
    extra["g_multipliers_reason"] = (
        f"the backend's multipliers fail the stationarity check eta_hi + eta_lo = 1/2, "
        f"eta >= 0 (eta_hi = {eta_hi:.6g}, eta_lo = {eta_lo:.6g}): not used")
    return None


def _choose_g(t, q_hi, q_lo, g_kkt, g_mult, g_lo, g_hi, tol, extra: dict) -> tuple:
    """``(g*, how it was found)``: complementarity first (a strictly inactive range
    constraint has a zero multiplier, so g* is at the other end), else the KKT least-squares
    value, else the multipliers' (each kept inside ``[g_lo, g_hi]``)."""
    act_tol = support_threshold(max(abs(t), 1.0), tol)
    hi_active, lo_active = t - q_hi <= act_tol, t - q_lo <= act_tol
    extra["active"] = [n for n, a in (("hi", hi_active), ("lo", lo_active)) if a]
    if hi_active and not lo_active:
        return g_hi, "complementarity: only the g_hi constraint is active, so g* = g_hi"
    if lo_active and not hi_active:
        return g_lo, "complementarity: only the g_lo constraint is active, so g* = g_lo"
    if g_kkt is not None:
        return min(max(g_kkt, g_lo), g_hi), "kkt least squares"
    if g_mult is not None:
        return min(max(g_mult, g_lo), g_hi), "multipliers"
    raise DataError("g* cannot be recovered: fewer than two support vectors and no multipliers")


def explain_failure(svm, status: Status, message: str):
    """A solve of the norm (cone) form that ran out of time or iterations: say that the
    quadratic form is the one SCIP and Ipopt do well on (``fit`` builds it for them)."""
    if svm.facts.form == "norm" and status in (Status.time_limit, Status.iteration_limit):
        return SolveFailedError(
            f"the solver stopped without an optimal solution: {status.value} ({message}). "
            "This model is in the norm (second-order cone) form; SCIP, which branches on the "
            "cones, and Ipopt solve the quadratic form much faster: build it with "
            "form='quadratic' (sm.fit chooses the form for the backend)", status)
    return None


ORDER = 10


class CTuning(Formulation):
    """A variant of the convex tuning of C: it learns ``g*`` (so ``C*``), not given a C."""

    family = "c_tuning"
    form = "dual"
    problem_class = "SOCP"
    learns_C = True
    classic_at_learned_C = "soft_l2_dual"
    learned = ("g",)
    details = CTuningDetails

    def extract(self, block, ctx) -> Solution:
        return extract(block, ctx)

    def explain_failure(self, svm, status, message: str):
        return explain_failure(svm, status, message)


register(CTuning(name="c_tuning_standard", builder=c_tuning_standard,
                 summary="Convex tuning of C, standard variant: g in [0, 1], i.e. C in "
                         "(0, inf] (SOCP)."))
register(CTuning(name="c_tuning_general", builder=c_tuning_general,
                 summary="Convex tuning of C, general variant: g in [g_min, g_max], the PSD "
                         "range (SOCP)."))
register(CTuning(name="c_tuning_general_nonneg", builder=c_tuning_general_nonneg,
                 summary="Convex tuning of C, general variant with the weight of K kept >= 0: "
                         "g in [g_min, 1] (SOCP)."))

"""Every tolerance of the library, in one place, each with what it means.

Solver-side tolerances (what is asked of a backend) and the thresholds the post-processing
applies to its answer (support vectors, active sets, checks of an "optimal" it reports).
A threshold that depends on the solver's tolerance says how; none is a bare number elsewhere.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------
# Asked of the solvers

#: default optimality/feasibility tolerance asked of every backend
SOLVER_TOL = 1e-9
#: Gurobi's barrier refuses to go below these (tighter ends in status SUBOPTIMAL)
GUROBI_TOL_FLOOR = 1e-9
GUROBI_BARCONV_FLOOR = 1e-10
#: ... and its barrier ends SUBOPTIMAL on about 1 in 15 of the C-tuning SOCPs at a QCP
#: convergence tolerance of 1e-9, never at 1e-8 (measured on the robustness set); the
#: C-tuning post-processing polishes the answer to the optimality conditions exactly
GUROBI_QCP_CONV_FLOOR = 1e-8
#: Clarabel on a QP: 1e-10 (at 1e-8 alpha is ~1e-4 off); on cones 1e-8 (tighter: AlmostSolved)
CLARABEL_QP_TOL = 1e-10
CLARABEL_CONE_TOL = 1e-8
#: SCIP's feasibility tolerances are floored here (SoPlex refuses smaller ones without GMP)
SCIP_TOL_FLOOR = 1e-9
#: SCIP's relative optimality gap (its default 1e-4 would stop far from the optimum of a QP)
SCIP_GAP = 1e-9

# ---------------------------------------------------------------------------------------
# Reading an answer

#: relative support-vector threshold at the default solver tolerance
SV_REL = 1e-6
#: ...and at most this at a loose one (at tol = 1e-2 a threshold of 10 times the largest
#: alpha took every alpha for a zero)
SV_REL_MAX = 1e-3


def support_threshold(scale: float, solver_tol: float | None = None) -> float:
    """Absolute threshold on alpha for "is a support vector" / "is free (below its bound)".

    Relative to the solution's own scale (:func:`alpha_scale`, never the box C) and to the
    solver's tolerance, so it means the same for an active-set solver (exact zeros) and an
    interior-point one (zeros of the order of its tolerance), at every C and every scale.
    """
    tol = SOLVER_TOL if solver_tol is None else solver_tol
    return max(SV_REL, min(1000.0 * tol, SV_REL_MAX)) * max(float(scale), 1e-300)


def per_point_threshold(thr: float, box, scale: float):
    """:func:`support_threshold` with a penalty per point (``C_i = C * weight_i``): a point
    whose box is far below the largest alpha (``class_weight`` 1000 against 1e-4) would have
    its box inside the threshold, zero and bound one value; its threshold is then the same
    fraction of its box, ``min(thr, thr / scale * C_i)``. One number C: ``thr`` itself."""
    import numpy as np

    if np.ndim(box) == 0:
        return thr
    return np.minimum(thr, thr / max(float(scale), 1e-300) * np.asarray(box, dtype=float))


def alpha_scale(alpha) -> float:
    """The scale of alpha that :func:`support_threshold` is relative to: the largest |alpha|
    -- the solution's own, never C (at C = 1e6 the largest alpha of an rbf SVM was 2.31 and
    a threshold of 1e-6 C took 49 of its 65 support vectors for zeros) and never floored at 1
    (on data scaled by 100-400 every alpha is ~1e-4)."""
    import numpy as np

    top = float(np.fmax.reduce(np.abs(np.asarray(alpha, dtype=float)), initial=0.0))  # (NaN skipped)
    return max(top, np.finfo(float).tiny)


#: a primal margin constraint is active (its point a candidate support vector) when its
#: residual is below this, relative to max(1, |f|)
ACTIVE_MARGIN_REL = 1e-5
#: a solution of a changed model is taken as the SVM's own (b from its KKT conditions, alpha
#: recovered from them) when its KKT residual, in units of the margin, is below this
KKT_ACCEPT = 1e-5
#: a hard margin whose "optimal" answer violates a margin by more than this is checked for
#: separability (some interfaces report "optimal" for the unbounded dual of inseparable data)
HARD_MARGIN_VIOLATION = 1e-4
#: a classic SVM's "optimal" whose margins are violated by more than this (in margin units,
#: relative to max(1, C)) is refused as numerical trouble (SolveFailedError)
CERTIFICATE_REFUSE = 1e-3
#: relative violation of the optimality conditions above which a backend's "optimal" for a
#: QP is refused (seen with HiGHS on large dense QPs: every variable at a bound)
KKT_REFUSE_REL = 1e-5
#: a variable is "at a bound" for that check within this fraction of max(1, |bounds|)
AT_BOUND_REL = 1e-7

# ---------------------------------------------------------------------------------------
# Scale of the data (a BadScaleWarning beyond these; svm_models.data.check_scale)

#: the largest absolute feature value must lie in [SCALE_LOW, SCALE_HIGH]
SCALE_HIGH = 1e4
SCALE_LOW = 1e-4
#: the largest absolute value per (non-zero) column may spread by at most this factor
SCALE_COLUMN_SPREAD = 1e6

# ---------------------------------------------------------------------------------------
# Numerical trouble

#: a solve that ends in numerical trouble is tried once more with its tolerance multiplied
#: by this, at least RETRY_TOL (Clarabel on 1e8-scaled data: 'AlmostSolved' at 1e-10, the
#: same optimum as Gurobi and Ipopt at 1e-6)
RETRY_TOL_FACTOR = 1e3
RETRY_TOL = 1e-6

#: a solve stopped by the backend's own iteration limit (the user set none) is tried again
#: with this many iterations, then also with the looser tolerance (PIQP's default, 250,
#: stopped the hard dual of two 1-D points 0.0117 apart, alpha = 1.5e4; 1000 solve it, found
#: by fuzzing; Clarabel's is 200)
RETRY_ITER_LIMIT = 10_000
#: HiGHS's QP iterations when the user sets none: this plus this per variable and row (its
#: active-set solver can cycle; each iteration moves one variable, so a solve needs about n)
HIGHS_QP_ITER_BASE = 1000
HIGHS_QP_ITER_PER_ROW = 10

#: a backend's "optimal" is refused (status numerical_error) when the solution's own
#: relative duality gap exceeds max(CERTIFICATE_GAP, CERTIFICATE_GAP_PER_TOL * solver tol)
#: (found by fuzzing: HiGHS "optimal" on a hard margin of width ~1e-10, gap 1.0); the
#: C-tuning and radius-margin families
CERTIFICATE_GAP = 1e-4
CERTIFICATE_GAP_PER_TOL = 1e3

#: a mixed-integer SVM (``formulations/mip.md``): its "optimal" is accepted when the gap
#: between the objective of exactly the classifier returned (recomputed from w, b) and the
#: solver's best bound, relative to the objective, is at most max(MIP_GAP_ACCEPT,
#: MIP_GAP_PER_TOL * solver tol) -- the backends are asked for a gap of tol (1e-9)
MIP_GAP_ACCEPT = 1e-6
MIP_GAP_PER_TOL = 1e3
#: a binary variable's value is read as 1 above this (the solver's integrality tolerance,
#: 1e-9 by default, keeps values far from it)
BINARY_ONE = 0.5

#: the classic SVMs: the classifier returned (alpha, dual_coef or w, b, as returned) is
#: certified when its relative duality gap ``(P - D) / max(|P|, |D|)``, its relative balance
#: ``|y'alpha| / sum(alpha)`` and (hard margin) its margin violation are all at most
#: max(CERT_REL, CERT_PER_TOL * the tolerance asked of the solver); otherwise it is refused
CERT_REL = 1e-6
CERT_PER_TOL = 10.0
#: a margin ``y_i f(x_i)`` is computed with a round-off of about this times
#: ``sqrt(l) (sum_j |dual_coef_j| sqrt(K_ii K_jj) + |b| + 1)``: a shortfall below that is
#: round-off, not a slack (at C = 1e15 a slack of 1e-15 is a penalty of 1)
CERT_ROUNDOFF = 8 * 2.220446049250313e-16

#: ... but never more than this, in units of the margin: a decision value that cannot be
#: computed to 1e-6 of the margin is not certified by it. (A dense poly kernel of entries
#: 1e17 made the bound 0.16: shortfalls up to 0.16 went uncounted, and a classifier whose
#: true primal objective is 97.9 was certified at 0.00099; the factor form on the kernel's
#: monomials computes it exactly.)
CERT_ROUNDOFF_MAX = 1e-6

#: the linear kernel's w read from alpha (``X'(y alpha)``) loses digits when the round-off of
#: that sum exceeds this times |w| (alphas of 1e9 and w of order one: inseparable data at a
#: large C): then w and b are first solved on the margin rows of the active set
EXPANSION_LOSSY = 1e-9


def certificate_tolerance(solver_tol: float | None = None) -> float:
    """What the certificate of a classic SVM's classifier must reach (see CERT_REL)."""
    tol = SOLVER_TOL if solver_tol is None else solver_tol
    return max(CERT_REL, CERT_PER_TOL * tol)


#: postprocess.bias_minimising_primal: a slope of the 1-norm primal in b within this fraction
#: of the total weight is flat (the minimum is an interval: its midpoint)
BIAS_FLAT = 1e-12

# ---------------------------------------------------------------------------------------
# Exact scaling before a backend sees a problem (svm_models.model.scaling)

#: a formulation's scale s (rounded to a power of four) is applied unless
#: 4**-SCALE_DEAD_BAND <= s <= 4**SCALE_DEAD_BAND: within it the problem already has entries
#: of order one (and is handed over as built, its matrices not copied)
SCALE_DEAD_BAND = 2
#: a bound of the (scaled) problem beyond this is replaced by it for the solve (a 1-norm box
#: at C = 1e15: Clarabel called the QP unbounded, Ipopt stopped at alpha = 0); the answer is
#: kept only when it stays below PROXY_MARGIN times it, else the true bound is solved
PROXY_BOUND = 1e6
PROXY_MARGIN = 0.5
#: ...when it is reached, the next proxy is this many times larger, up to PROXY_BOUND_MAX
#: (beyond which the true bounds are solved): hard-margin alphas of 1e6-1e8 at C = 1e12
PROXY_GROWTH = 1e3
PROXY_BOUND_MAX = 1e10
#: before the larger proxy, the far bounds are dropped altogether (an optimum within them is
#: the original's: the hard margin at a C above its largest alpha); that solve may be
#: unbounded, so it gets at most this many times the first proxy's time, at least
#: RELAXED_TIME_MIN seconds
RELAXED_TIME_FACTOR = 20.0
RELAXED_TIME_MIN = 2.0

# ---------------------------------------------------------------------------------------
# Kernels and factors

#: relative tolerance of the symmetry and PSD checks of a precomputed kernel matrix
PSD_TOL = 1e-8
#: pivoted Cholesky stops when the residual trace falls below this times trace(K):
#: the factor is then exact to that tolerance (and of full column rank)
FACTOR_TOL = 1e-12
#: an eigenvalue below this times the largest is round-off of zero (PSD square roots)
EIG_DROP_REL = 1e-13

# ---------------------------------------------------------------------------------------
# Convexity of a model read from Pyomo (general path)

#: a quadratic form is PSD when its smallest eigenvalue is above -this * max(1, largest |eig|)
CONVEX_TOL = 1e-10
#: a component of a cone's axis (the eigenvector of the negative eigenvalue) below this
#: times its largest is round-off of zero
CONE_AXIS_REL = 1e-12
#: a backend's "unbounded" for a QP is confirmed when a recession direction in the unit box
#: lowers the objective by more than this (an LP; otherwise the claim is a numerical error)
RECESSION_DESCENT = 1e-9

# ---------------------------------------------------------------------------------------
# C tuning

#: an eigenvalue of K below ``EIG_ZERO_REL * l * lam_max`` is a zero eigenvalue
#: (eigvalsh's error is of the order of machine epsilon times ||K||): g_min is then 0
EIG_ZERO_REL = 1e-14
#: K is refused as a multiple of I when its eigenvalues spread by less than this (relative)
IDENTITY_REL = 1e-10
#: an explicit g bound may exceed the PSD range by this much (relative) and is moved onto it
G_BOUND_SLACK = 1e-9
#: a polished C-tuning solution (alpha, g, b) is accepted when every optimality condition
#: holds to this (in units of the margin, which is 1): the backend's own answer is kept otherwise
CT_POLISH_TOL = 1e-9
#: the Newton iteration of that polish stops when its step is below this (relative)
CT_NEWTON_STEP = 1e-15
#: ``|eta_hi + eta_lo - 1/2|`` allowed before multipliers are declared unusable (absolute;
#: the solver's tolerance times 1e3 when that is larger)
ETA_SUM_TOL = 1e-6

# ---------------------------------------------------------------------------------------
# Re-solves along a path (working set)

#: the working set is used when it holds at most this fraction of the variables
WS_MAX_FRACTION = 0.8
#: at most this many reduced solves per re-solve before falling back to the full problem
WS_MAX_ROUNDS = 8
#: a variable is "at a bound" within this fraction of its box width (at least of 1)
WS_AT_BOUND_REL = 1e-6
#: a fixed variable's reduced cost of the wrong sign beyond this (relative to the largest
#: gradient entry, or 10x the solver tolerance when larger) sends it back into the working set
WS_REDUCED_COST_REL = 1e-8
#: a working set may be empty (every variable at a bound) when the model has at most this many
#: rows: their multipliers are then found by a small LP
WS_MAX_ROW_LP = 50
#: a re-solve of a QP whose rows are all equalities first tries the previous solution's
#: active set directly: the KKT system of the free variables solved as one dense linear
#: system, the active set corrected (primal-dual active set) for at most this many rounds...
WS_ACTIVE_SET_ROUNDS = 25
#: ...while the free variables plus rows are at most this many (one dense factorisation each)
WS_ACTIVE_SET_MAX_FREE = 2000
#: a free variable beyond its bound by more than this (relative to the box) is held at it;
#: within it, the solution is clipped onto the bound (a round-off difference)
WS_ACTIVE_SET_BOUND_REL = 1e-12
#: the linear system's relative residual above which its solution is not trusted
WS_ACTIVE_SET_RESIDUAL = 1e-9

# ---------------------------------------------------------------------------------------
# Radius-margin SVMs

#: constraint generation stops when no pair's radius row is violated by more than this
#: times max(1, r) (over all l(l-1)/2 pairs)
PAIR_VIOLATION_REL = 1e-7
#: pairs added per round of constraint generation (the most violated first)
PAIR_BATCH = 20
#: ``fit(..., pairs="auto")`` states every pair up to this many, generates them beyond
PAIR_LITERAL_MAX = 5000
#: the two-step methods stop when the best primal value and the best lower bound are this
#: close (relative to max(1, |value|))
TWO_STEP_GAP = 1e-10
#: feasibility tolerances of the two-step methods' master LPs (HiGHS's default 1e-7 would
#: stop the cutting planes at a gap of that order)
MASTER_LP_TOL = 1e-10

# ---------------------------------------------------------------------------------------
# svm_models' own interior-point method (solvers/ipm.py)

#: the largest dense system its Newton steps may reduce to (unknowns); a problem that
#: reduces to more is refused before any iteration
IPM_MAX_DENSE = 5000
#: the eliminated columns of a row-mode system are kept as a dense array (BLAS products)
#: when at least this fraction of them is non-zero
IPM_DENSE_FILL = 0.05
#: a row-mode product with at most this many rows runs BLAS on one thread (memory-bound)
IPM_THIN_ROWS = 128
#: iterations when the user sets none (Mehrotra's method needs 15-60 on the SVMs)
IPM_MAX_ITER = 200
#: fraction of the step to the boundary taken
IPM_STEP = 0.995
#: iterates larger than this (in absolute value) have diverged: infeasible or unbounded
IPM_DIVERGE = 1e14
#: a solve whose worst measure (primal or dual residual, gap) has not halved in this many
#: iterations has stalled (numerical trouble; an infeasible or unbounded problem)
IPM_STALL = 25
#: the tolerance of ipm's certificates, read from the last iterate of a solve that failed
#: (scaled to a unit vector): a Farkas certificate's row combination must vanish on the
#: columns without a finite bound to within this and miss the right-hand side by more; an
#: improving ray must keep the rows, the quadratic form and the bounds to within this and
#: gain more than it on the objective (relative to the largest cost)
IPM_CERT_TOL = 1e-7

#: duals a user hands to :func:`svm_models.extract` are read in the sign -- as given or
#: flipped -- whose reading is the dual-feasible one for the block's own rows
#: (:func:`~svm_models.postprocess.user_dual_sign`); the other reading must violate that at
#: least this many times as much, else the sign is not decided and extract refuses
USER_SIGN_CLEAR = 10.0


# ---------------------------------------------------------------------------------------
# The exact regularization path (methods/regularization_path.py)

#: a point is on the margin (tight) when ``|y_i h_i - lambda|`` is within this fraction of
#: lambda (plus the round-off of h)
PATH_TIGHT = 1e-9
#: the direction QP's bounds and multipliers are violated beyond this (relative)
PATH_QP_TOL = 1e-11
#: the path ends where lambda falls below this fraction of the start's (C 1e12 times the
#: start's): beyond, K(y theta) is of the order of its round-off
PATH_END = 1e-12
#: the exact re-anchoring of a breakpoint may move theta by this much (relative) at most;
#: beyond it the path has drifted and is refused
PATH_ANCHOR_DRIFT = 1e-6

"""What loops over solves for the radius-margin SVMs (``formulations/radius_margin.md``).

* :func:`generate_pairs` -- exact constraint generation of the O(l^2) radius rows: start from
  a few pairs, add the most violated ones, re-solve, stop when no pair of all ``l(l-1)/2`` is
  violated beyond tolerance (the certificate is computed block by block, never materialised).
* :func:`fit` -- the public ``svm_models.fit``: the one-solve :func:`svm_models.api.fit`, and
  for the formulations with a radius family the choice between all pairs and generation.
* :func:`lam_path` -- solutions along a path of lam, the model built once.
* :func:`two_step` -- the appendix's two-step methods: R-SVM_mu+ by a cutting-plane (Kelley)
  outer loop on the simplex of mu with the gradient of formulations/rsvm_mu_plus.md, R-SVM+ by
  a cutting-plane loop
  on beta (pairs added as columns); each inner step is a plain SVM dual.
* :func:`enclosing_ball_radius` (R) and :func:`half_diameter` (R_O).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
from scipy.optimize import linprog

from ..api import (build, fit as fit_once, general_backend, solve, split_solve_options,
                   the_svm_block)
from ..data import validate
from ..errors import NotSeparableError, ParameterError, SolveFailedError, plain
from ..formulations import get as lookup
from ..formulations.enclosing_ball import enclosing_ball, gram_for
from ..formulations.radius_margin import _kernel_blocks, add_lam  # noqa: F401
from ..kernels import Kernel, KernelSum
from ..model.families import column_blocks, farthest_pairs, pair_sqdist
from ..model.pieces import check_C, check_positive
from ..solution import RadiusDetails, Solution
from ..solvers import SolverOptions, backend, solve_model
from ..status import Status
from ..tolerances import (
    MASTER_LP_TOL,
    PAIR_BATCH,
    PAIR_LITERAL_MAX,
    PAIR_VIOLATION_REL,
    TWO_STEP_GAP,
    alpha_scale,
    support_threshold,
)

# ---------------------------------------------------------------------------------------
# Constraint generation


def _family(model):
    blk = the_svm_block(model)
    fams = [f for f in blk._svm.record.families if f.component is blk.component("radius")]
    if not fams:
        raise ParameterError(f"{blk._svm.formulation} has no radius pair family to generate")
    return blk, fams[0]


def generate_pairs(model, solver: str = "auto", *, batch: int | None = None,
                   tol: float = PAIR_VIOLATION_REL, max_rounds: int = 100, **options) -> Solution:
    """Solve a model built with a radius family (``rsvm_mu_plus``, ``rsvm_plus_primal``,
    typically with ``pairs="seed"``) by exact constraint generation.

    Each round solves the model, finds over **all** pairs ``i < j`` the largest violation
    ``1/2 sum_k c_k ||phi_k(x_i) - phi_k(x_j)||^2 - r`` (block by block, O(l) memory), adds up
    to ``batch`` most violated pairs to the family (the record grows with it: the re-solve
    stays on the fast path) and stops when the largest violation is at most
    ``tol * max(1, r)``. The solution's ``pair_generation`` is the certificate:
    rounds, pairs in the model, all pairs, the largest violation over all pairs.
    """
    blk, fam = _family(model)
    l = blk._svm.data.n_points
    batch = PAIR_BATCH if batch is None else int(batch)
    if batch < 1:
        raise ParameterError(f"batch must be a positive integer; got {plain(batch)!r}")
    history = []
    t0 = time.perf_counter()
    solver_time = 0.0
    for rounds in range(1, max_rounds + 1):
        sol = solve(model, solver, **options)
        solver_time += sol.time
        x = np.array([vd.value for vd in blk._svm.record.var_datas()], dtype=float)
        worst, I, J = fam.most_violated(x, batch)
        r = float(blk.r.value)
        history.append({"pairs": fam.size, "max_violation": worst, "objective": sol.objective})
        if worst <= tol * max(1.0, abs(r)):
            return replace(sol, pair_generation={
                "rounds": rounds, "pairs": fam.size, "all_pairs": l * (l - 1) // 2,
                "max_violation": worst, "tol": tol * max(1.0, abs(r)),
                "history": history, "time": time.perf_counter() - t0, "solver_time": solver_time})
        if I.size == 0:
            raise SolveFailedError(
                f"constraint generation stalled: the largest violation {worst:.3g} is at pairs "
                "already in the model (the solver's feasibility tolerance is above tol)",
                Status.other)
        fam.append(I, J)
    raise SolveFailedError(f"constraint generation did not converge in {max_rounds} rounds "
                           f"(largest violation {worst:.3g})", Status.iteration_limit)


def _auto_pairs(X, solver) -> str:
    """All pairs up to PAIR_LITERAL_MAX of them (and within the backend's row limit, such as
    Gurobi's size-limited licence), constraint generation beyond."""
    l = np.shape(X)[0] if hasattr(X, "__len__") else 0
    limit = PAIR_LITERAL_MAX
    b = backend(general_backend(solver, "QP"))
    if b.max_rows is not None:
        limit = min(limit, b.max_rows - l - 1)
    return "all" if l * (l - 1) // 2 <= limit else "generate"


def fit(X, y, formulation: str = "soft_l1_dual", solver: str = "auto", **params) -> Solution:
    """Build and solve in one call (see :func:`svm_models.api.fit` for the parameters).

    For ``rsvm_mu_plus`` and ``rsvm_plus_primal``, ``pairs`` chooses how the O(l^2) radius rows
    are handled: ``"all"`` states them all, ``"generate"`` uses exact constraint generation
    (:func:`generate_pairs`), ``"auto"`` (default) states them all up to
    ``PAIR_LITERAL_MAX`` pairs (or the backend's row limit) and generates them beyond; ``batch`` sets the pairs added per
    round; ``(I, J)`` arrays are the pairs generation starts from. The answer is the same (to
    the solver's tolerance) either way: ``fit`` never returns the relaxation a subset of the
    pairs would give (build such a model with :func:`svm_models.build` to study it).
    """
    if not lookup(formulation).generates_pairs:
        return fit_once(X, y, formulation, solver, **params)
    pairs = params.pop("pairs", "auto")
    batch = params.pop("batch", None)
    if isinstance(pairs, str) and pairs == "auto":
        pairs = _auto_pairs(X, solver)
    if isinstance(pairs, str) and pairs not in ("all", "generate"):
        raise ParameterError(f"pairs must be 'auto', 'all', 'generate' or (I, J) arrays to "
                             f"start constraint generation from; got {plain(pairs)!r}")
    if isinstance(pairs, str) and pairs == "all":
        return fit_once(X, y, formulation, solver, pairs="all", **params)
    solve_kw = split_solve_options(params)
    # generation is exact: it starts from the seed pairs, or from the pairs given
    model = build(formulation, X, y, pairs="seed" if isinstance(pairs, str) else pairs, **params)
    return generate_pairs(model, solver, batch=batch, **solve_kw)


def lam_path(X, y, lams, formulation: str = "rsvm_plus_primal", solver: str = "auto", *,
             pairs="auto", **params) -> list:
    """Solutions along a path of lam values, building the model once (``lam`` is a mutable
    Param). With constraint generation the pairs found so far carry over to the next lam."""
    try:
        lams = [check_positive("lam", v) for v in lams]
    except TypeError:
        raise ParameterError("lams must be a sequence of positive numbers; "
                             f"got {plain(lams)!r}") from None
    if not lams:
        raise ParameterError("lams must contain at least one value of lam")
    batch = params.pop("batch", None)
    solve_kw = split_solve_options(params)
    generate = False
    if lookup(formulation).generates_pairs:
        if isinstance(pairs, str) and pairs == "auto":
            pairs = _auto_pairs(X, solver)
        generate = isinstance(pairs, str) and pairs == "generate"
        params["pairs"] = "seed" if generate else pairs
    elif not (isinstance(pairs, str) and pairs == "auto"):
        params["pairs"] = pairs
    model = build(formulation, X, y, lam=lams[0], **params)
    blk = the_svm_block(model)
    out = []
    for lam in lams:
        blk.lam.set_value(lam)
        out.append(generate_pairs(model, solver, batch=batch, **solve_kw) if generate
                   else solve(model, solver, **solve_kw))
    return out


# ---------------------------------------------------------------------------------------
# Two-step methods


def _inner(Xs, y, C, solver, opts, K=None):
    """The plain SVM dual on scaled features (or a precomputed kernel): (alpha, b, value)."""
    name = "hard_dual" if C is None else "soft_l1_dual"
    kw = {} if C is None else {"C": C}
    if K is not None:
        sol = fit_once(K, y, name, solver, kernel="precomputed", **kw, **opts)
    else:
        sol = fit_once(Xs, y, name, solver, kernel="linear", **kw, **opts)
    return np.asarray(sol.alpha, dtype=float), float(sol.b), float(sol.objective), sol


def _master(A_ub, b_ub, A_eq, b_eq, c, bounds):
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs",
                  options={"primal_feasibility_tolerance": MASTER_LP_TOL,
                           "dual_feasibility_tolerance": MASTER_LP_TOL})
    if res.status != 0:
        raise SolveFailedError(f"the two-step method's master LP failed: {res.message}",
                               Status.other)
    return res


def two_step(X, y, formulation: str = "rsvm_mu_plus", solver: str = "auto", *, C=1.0, lam=1.0,
             kernels=None, tol: float = TWO_STEP_GAP, max_iter: int = 500, **options) -> Solution:
    """The two-step method of the appendix: fix the weights, solve the SVM, update the weights.

    ``formulation="rsvm_mu_plus"``: ``J(mu) = D_SVM(K_mu) + lam r(mu)`` minimised over the
    simplex by a cutting-plane (Kelley) outer loop: at each mu the SVM dual gives the cut
    ``D_SVM(mu') >= D_SVM(mu) - 1/2 sum_k (sum_i a_i y_i x_ik)^2 (mu'_k - mu_k)`` and the
    farthest pair ``(i*, j*)`` the radius cut ``r(mu') >= 1/2 sum_k mu'_k (x_i*k - x_j*k)^2``
    (together the gradient ``(lam/2)(x_i*k - x_j*k)^2 - 1/2 (sum_i a_i y_i x_ik)^2``).
    ``formulation="rsvm_plus_primal"`` (or ``"rsvm_plus_dual"``): the dual function
    ``h(beta) = D_SVM(X diag(1/t) X')``, ``t = 1 + sum_p beta_p (x_i - x_j)^2``, maximised over
    ``{sum beta = lam, beta >= 0}`` by a cutting-plane loop in which the pair with the largest
    supergradient (the farthest pair under the weights ``w_k^2``) enters as a column.
    Both stop when an upper and a lower bound on the optimal value are within
    ``tol * max(1, |value|)`` (for mu: the best J and the master LP; for beta: the best
    primal value or the cut model's bound over all pairs, from the master's multipliers, and
    the best dual value): the answer is optimal to that gap (``Solution.two_step``).
    ``solver`` solves the inner SVMs (any QP backend).
    """
    C = None if C is None else check_C(C)
    lam = check_positive("lam", lam)
    opts = {k: v for k, v in options.items() if k in SolverOptions.__dataclass_fields__}
    unknown = set(options) - set(opts)
    if unknown:
        raise ParameterError(f"two_step takes no parameter(s) {sorted(unknown)}")
    data = validate(X, y)
    if formulation == "rsvm_mu_plus":
        return _two_step_mu(data, C, lam, kernels, solver, opts, tol, max_iter)
    if formulation in ("rsvm_plus_primal", "rsvm_plus_dual", "rsvm_plus"):
        if kernels is not None:
            raise ParameterError("kernels is for rsvm_mu_plus")
        return _two_step_beta(data, formulation, C, lam, solver, opts, tol, max_iter)
    raise ParameterError(f"two_step is for rsvm_mu_plus and rsvm_plus_primal/dual; got "
                         f"{formulation!r}")


def _inner_mu(X, y, C, mu, grams, solver, opts):
    """The SVM at the weights mu. A hard margin is infeasible where mu leaves out features
    the separation needs (D_SVM = +inf there): then the step moves towards the uniform
    weights, mu <- (1 - eps) mu + eps/m, eps doubling, and the cut is taken there (a cut is
    valid wherever it is taken)."""
    m = mu.size
    eps = 0.0
    while True:
        trial = (1.0 - eps) * mu + eps / m
        try:
            if grams is None:
                alpha, bias, Dval, _ = _inner(X * np.sqrt(trial)[None, :], y, C, solver, opts)
            else:
                Kmu = sum(w * K for w, K in zip(trial, grams))
                alpha, bias, Dval, _ = _inner(None, y, C, solver, opts, K=Kmu)
            return trial, alpha, bias, Dval
        except NotSeparableError:
            if C is not None or eps >= 1.0:
                raise
            eps = min(1.0, max(2.0 * eps, 1e-3))


def _two_step_mu(data, C, lam, kernels, solver, opts, tol, max_iter):
    X, y = data.X, data.y
    if kernels is None:
        features, kern_list, grams = column_blocks(X), None, None
    else:
        kern_list, features = _kernel_blocks(kernels, X)
        grams = [k.gram(X) for k in kern_list]
    m = len(features)
    cuts_A, cuts_b, seen = [], [], set()
    best = None
    mu = np.full(m, 1.0 / m)
    lb = -np.inf
    t0 = time.perf_counter()
    for it in range(1, max_iter + 1):
        mu, alpha, bias, Dval = _inner_mu(X, y, C, mu, grams, solver, opts)
        ya = y * alpha
        if grams is None:
            g = -0.5 * (X.T @ ya) ** 2
        else:
            g = np.array([-0.5 * float(ya @ (K @ ya)) for K in grams])
        Z = np.hstack([np.sqrt(max(w, 0.0)) * Phi for w, Phi in zip(mu, features)])
        d2, I, J = farthest_pairs(Z, 1)
        r = 0.5 * float(d2[0])
        Jval = Dval + lam * r
        if best is None or Jval < best["J"]:
            best = dict(J=Jval, mu=mu.copy(), alpha=alpha, b=bias, r=r, D=Dval)
        # cuts on (mu, theta, rho): g.mu - theta <= g.mu_t - D ; 1/2 D_p.mu - rho <= 0
        cuts_A.append(np.concatenate([g, [-1.0, 0.0]]))
        cuts_b.append(float(g @ mu) - Dval)
        key = (int(I[0]), int(J[0]))
        if key not in seen:
            seen.add(key)
            Dp = pair_sqdist(features, I, J)[0]
            cuts_A.append(np.concatenate([0.5 * Dp, [0.0, -1.0]]))
            cuts_b.append(0.0)
        res = _master(np.array(cuts_A), np.array(cuts_b),
                      np.concatenate([np.ones(m), [0.0, 0.0]])[None, :], [1.0],
                      np.concatenate([np.zeros(m), [1.0, lam]]),
                      [(0, None)] * m + [(None, None), (0, None)])
        lb = max(lb, float(res.fun))
        if best["J"] - lb <= tol * max(1.0, abs(best["J"])):
            break
        mu = np.clip(res.x[:m], 0.0, None)
        mu /= mu.sum()
    else:
        raise SolveFailedError(f"the two-step method did not converge in {max_iter} iterations "
                               f"(gap {best['J'] - lb:.3g})", Status.iteration_limit)
    mu, alpha, ya = best["mu"], best["alpha"], y * best["alpha"]
    blocks = [mu[k] * (features[k].T @ ya) for k in range(m)]
    w = np.concatenate(blocks)
    extra = {"method": "two_step", "two_step": {"iterations": it, "upper": best["J"],
                                                "lower": lb, "gap": best["J"] - lb,
                                                "time": time.perf_counter() - t0}}
    kern = Kernel("linear") if kern_list is None else KernelSum(tuple(kern_list), tuple(mu))
    if kern_list is not None:
        extra["w_blocks"] = blocks
    return _solution(data, "rsvm_mu_plus", solver, w if kern_list is None else None,
                     best["b"], alpha, C, best["J"],
                     RadiusDetails(r=best["r"], lam=lam, mu=mu), extra, kern, ya)


def _two_step_beta(data, formulation, C, lam, solver, opts, tol, max_iter):
    X, y = data.X, data.y
    features = column_blocks(X)
    d = X.shape[1]
    pool_I, pool_J, Dpool = [], [], np.zeros((0, d))
    cuts = []            # (h_s, g_s, t_s)
    t = np.ones(d)
    beta = np.zeros(0)
    best_d = None
    upper = np.inf       # the smaller of the best primal value and the cut model's bound
    t0 = time.perf_counter()
    for it in range(1, max_iter + 1):
        alpha, bias, hval, _ = _inner(X / np.sqrt(t)[None, :], y, C, solver, opts)
        ya = y * alpha
        w = (X.T @ ya) / t
        f = X @ w + bias
        xi = np.maximum(0.0, 1.0 - y * f) if C is not None else np.zeros_like(f)
        d2, I, J = farthest_pairs(X * np.abs(w)[None, :], 1)
        r = 0.5 * float(d2[0])
        primal = 0.5 * float(w @ w) + lam * r + (C * float(xi.sum()) if C is not None else 0.0)
        if not (C is None and np.any(y * f < 1.0 - 1e-6)):   # else not a hard-margin point
            upper = min(upper, primal)
        if best_d is None or hval > best_d["h"]:
            best_d = dict(h=hval, beta=beta.copy(), I=list(pool_I), J=list(pool_J), w=w, b=bias,
                          alpha=alpha, r=r, xi=xi)
        if upper - best_d["h"] <= tol * max(1.0, abs(best_d["h"])):
            break
        key = (int(I[0]), int(J[0]))
        if key not in set(zip(pool_I, pool_J)):
            pool_I.append(key[0]); pool_J.append(key[1])
            Dpool = np.vstack([Dpool, pair_sqdist(features, I, J)])
        g = 0.5 * w ** 2                       # supergradient of h in t
        cuts.append((hval, g, t.copy()))
        n = len(pool_I)
        # max theta s.t. theta - (Dpool g_s).beta <= h_s + g_s.(1 - t_s), sum beta = lam
        A = np.array([np.concatenate([-(Dpool @ gs), [1.0]]) for hs, gs, ts in cuts])
        a0 = np.array([hs + gs @ (1.0 - ts) for hs, gs, ts in cuts])
        res = _master(A, a0, np.concatenate([np.ones(n), [0.0]])[None, :], [lam],
                      np.concatenate([np.zeros(n), [-1.0]]), [(0, None)] * n + [(None, None)])
        # a bound over *all* pairs from the master's multipliers: for weights lam_s >= 0
        # summing to 1, max_beta min_s cut_s <= sum_s lam_s a_s + lam max_p (sum_s lam_s g_s).D_p
        ls = np.clip(-np.asarray(res.ineqlin.marginals, dtype=float), 0.0, None)
        if ls.sum() > 0:
            ls /= ls.sum()
            gbar = sum(l_ * gs for l_, (hs, gs, ts) in zip(ls, cuts))
            dg, _, _ = farthest_pairs(X * np.sqrt(np.clip(gbar, 0.0, None))[None, :], 1)
            upper = min(upper, float(ls @ a0) + lam * float(dg[0]))
        beta = np.clip(res.x[:n], 0.0, None)
        beta *= lam / beta.sum()
        t = 1.0 + Dpool.T @ beta
    else:
        raise SolveFailedError(f"the two-step method did not converge in {max_iter} iterations "
                               f"(gap {upper - best_d['h']:.3g})", Status.iteration_limit)
    extra = {"method": "two_step",
             "two_step": {"iterations": it, "upper": upper, "lower": best_d["h"],
                          "gap": upper - best_d["h"], "time": time.perf_counter() - t0}}
    pairs = np.column_stack([best_d["I"], best_d["J"]]) if best_d["I"] else np.zeros((0, 2), int)
    return _solution(data, formulation if formulation != "rsvm_plus" else "rsvm_plus_primal",
                     solver, best_d["w"], best_d["b"], best_d["alpha"], C, best_d["h"],
                     RadiusDetails(r=best_d["r"], lam=lam, beta=best_d["beta"], pairs=pairs),
                     extra, Kernel("linear"), y * best_d["alpha"], xi=best_d["xi"])


def _solution(data, name, solver, w, b, alpha, C, objective, details, extra, kernel, dual_coef,
              xi=None):
    thr = support_threshold(alpha_scale(alpha))
    support = np.flatnonzero(alpha > thr)
    dual_coef = np.where(alpha > thr, dual_coef, 0.0)
    if xi is None:
        f = (data.X @ w + b) if w is not None else None
        xi = (np.maximum(0.0, 1.0 - data.y * f) if (f is not None and C is not None)
              else np.zeros(data.n_points))
    margin = 1.0 / np.linalg.norm(w) if w is not None and np.linalg.norm(w) > 0 else None
    return Solution(formulation=name, solver=solver, status=Status.optimal, w=w, b=float(b),
                    alpha=alpha, dual_coef=dual_coef, xi=xi, support=support,
                    support_vectors=data.X[support], objective=float(objective), kernel=kernel,
                    classes=data.classes, margin=margin, C=C, details=details,
                    time=extra["two_step"]["time"], interface="two_step", path="two_step",
                    extra=extra)


# ---------------------------------------------------------------------------------------
# The radii


def enclosing_ball_radius(X, kernel: str = "linear", *, solver: str = "piqp",
                          **kernel_params) -> float:
    """``R``: the radius of the smallest ball holding the points ``phi(x_i)`` in the feature
    space of ``kernel`` (``"precomputed"``: X is the Gram matrix), by its own QP
    (:mod:`svm_models.formulations.enclosing_ball`) solved with ``solver``."""
    opts = {k: kernel_params.pop(k) for k in list(kernel_params)
            if k in SolverOptions.__dataclass_fields__}
    model = enclosing_ball(X, kernel=kernel, **kernel_params)
    info = solve_model(model, solver, record=model._ball, options=SolverOptions.from_kwargs(**opts))
    if info.status is not Status.optimal:
        raise SolveFailedError(f"the enclosing-ball QP ended {info.status.value} ({info.message})",
                               info.status)
    a = np.clip(np.array([vd.value for vd in model.a.values()], dtype=float), 0.0, None)
    a /= a.sum()
    K = gram_for(X, kernel, **kernel_params)
    R2 = float(np.diag(K) @ a - a @ K @ a)
    return float(np.sqrt(max(R2, 0.0)))


def half_diameter(X, kernel: str = "linear", **kernel_params) -> float:
    """``R_O``: half the largest distance ``||phi(x_i) - phi(x_j)||`` between two points, in the
    feature space of ``kernel`` (``"precomputed"``: X is the Gram matrix). Exact, block by
    block for the linear kernel (O(l) memory)."""
    if kernel == "linear":
        from ..data import as_matrix

        Xm = as_matrix(X, name="X")
        d2, _, _ = farthest_pairs(Xm, 1)
        return 0.5 * float(np.sqrt(d2[0])) if d2.size else 0.0
    K = gram_for(X, kernel, **kernel_params)
    dg = np.diag(K)
    D = dg[:, None] + dg[None, :] - 2.0 * K
    return 0.5 * float(np.sqrt(max(float(D.max()), 0.0)))

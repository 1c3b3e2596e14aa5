r"""Pictures of solved SVMs: the decision boundary, the path over C, the C-tuning bound.

matplotlib is an optional extra (``pip install 'svm-models[plot]'``); it is imported when a
function is called, with the non-interactive "Agg" backend when no backend is set and no
display is available. Every function returns the matplotlib ``Figure`` (it never shows it),
saves it to ``path`` when given, and closes nothing it was handed. The artists that carry
numbers have a ``gid`` (``"boundary"``, ``"margins"``, ``"support_vectors"``, ``"margin"``,
``"n_support"``, ``"objective"``, ``"accuracy"``, ``"bound"``, ``"qcqp_optimum"``), so a figure
can be read back: ``[a for a in ax.get_children() if a.get_gid() == "boundary"]``.

* :func:`decision_boundary` -- 2-D data: the regions, ``f = 0`` and ``f = +-1``, the points
  and the support vectors, for every kernel and formulation.
* :func:`c_path` -- a regularisation path from :func:`svm_models.fit_path`: margin, number of
  support vectors, objective and training accuracy against C.
* :func:`c_tuning_bound` -- a C-tuning solution: the optimum ``D(g)`` of the SVM with the
  fixed kernel ``M(g) = (1-g) K/r + g I/l`` over the solved range of g, whose minimum is the
  QCQP's optimum, reached at ``g*``:

  .. math::

      D(g) = \max_{a \ge 0,\, y'a = 0} \; e'a - \tfrac12 a' G(M(g)) a, \qquad
      \min_g D(g) = D(g^*) = \text{the QCQP's optimum}.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from .api import build, solve
from .data import as_matrix, validate
from .errors import (
    DataError,
    MissingDependencyError,
    NotSeparableError,
    ParameterError,
    SolverUnavailableError,
    plain,
)
from .formulations.c_tuning import M_of_g
from .solution import CTuningDetails, Solution

#: points per axis of the grid the decision function is evaluated on
GRID = 200
#: decision_boundary widens the area about its centre by these factors, in turn, until the
#: decision function reaches both -1 and +1 on it (so that the margins are drawn)
MARGIN_ZOOM = (1, 2, 4, 8)
#: colours of the classes (classes[0] is -1, classes[1] is +1) and of the regions
#: f < -1, -1 < f < 0, 0 < f < 1, f > 1
CLASS_COLOURS = ("#1f5fa8", "#c0392b")
REGION_COLOURS = ("#a6c8e8", "#dbe9f6", "#f8dcd6", "#efa59a")


def _pyplot():
    """matplotlib's pyplot, with "Agg" when no backend is set and no display is available."""
    try:
        import matplotlib
    except ImportError:
        raise MissingDependencyError(
            "svm_models.plots needs matplotlib, which is not installed: "
            "pip install 'svm-models[plot]'") from None
    headless = sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if headless and "matplotlib.pyplot" not in sys.modules and \
            matplotlib.rcParams._get_backend_or_none() is None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path):
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return fig


def _fmt(v) -> str:
    return "none" if v is None else f"{v:.4g}"


def _check_solution(solution, who: str) -> None:
    if not isinstance(solution, Solution):
        raise ParameterError(f"{who} takes a svm_models Solution (from fit, solve or extract); "
                             f"got {type(solution).__name__}")


def _title(solution: Solution) -> str:
    if isinstance(solution.details, CTuningDetails):
        parts = [f"C* = {_fmt(solution.C)}"]
    else:
        parts = [f"C = {_fmt(solution.C)}" + (" (hard margin)" if solution.C is None else "")]
    lam = getattr(solution.details, "lam", None)
    if lam is not None:
        parts.append(f"lam = {lam:.4g}")
    parts.append(f"objective = {solution.objective:.8g}")
    return (f"{solution.formulation} ({solution.kernel.name} kernel), solver {solution.solver}\n"
            + ", ".join(parts))


def decision_boundary(solution, X, y, *, ax=None, path=None, feature_names=None):
    """Decision regions, the boundary ``f = 0``, the margins ``f = +-1`` and the support vectors.

    Parameters
    ----------
    solution : Solution
        Any solved formulation with a kernel that can be evaluated on new points (not
        ``kernel="precomputed"``), trained on 2-D data.
    X : array-like of shape (n, 2)
        The points to draw (normally the training data); the plotted area covers them and the
        support vectors, with a 10% border, widened about its centre 2, 4 or 8 times (the
        first that does) when the decision function reaches -1 or +1 only outside it, as a
        small C's does (C tuning often learns one): then the margins are drawn too.
    y : array-like of shape (n,)
        Their labels, among ``solution.classes`` (the legend shows these values).
    ax : matplotlib Axes, optional
        Draw on it (its figure is returned); by default a new figure.
    path : str or path-like, optional
        Save the figure there (format from the extension).
    feature_names : sequence of two str, optional
        The axis labels (the columns' names, as a CSV header gives them); by default
        ``x[0]`` and ``x[1]``.

    Returns
    -------
    matplotlib.figure.Figure
        Contours of ``solution.decision_function`` on a ``GRID x GRID`` grid: filled regions,
        ``f = 0`` (gid ``"boundary"``) and ``f = +-1`` (gid ``"margins"``, its levels -1 and
        +1; the legend says which of them the area does not reach even widened 8 times, as
        on an rbf kernel's whose |f| stays below 1); the points coloured by class;
        ``solution.support_vectors`` (the points of ``solution.support``) circled (gid
        ``"support_vectors"``); a title with formulation, solver, C and objective.

    Raises
    ------
    ParameterError
        ``X`` or the solution is not 2-D, the kernel is precomputed, or ``feature_names``
        is not two names.
    DataError
        ``y`` does not match ``X`` or holds labels the solution was not trained on.
    """
    _check_solution(solution, "decision_boundary")
    if feature_names is None:
        feature_names = ("x[0]", "x[1]")
    elif isinstance(feature_names, str) or len(feature_names) != 2 or not all(
            isinstance(n, str) for n in feature_names):
        raise ParameterError(f"feature_names must be the two axis labels, e.g. "
                             f"['height', 'weight']; got {plain(feature_names)!r}")
    if solution.kernel.name == "precomputed":
        raise ParameterError(
            "decision_boundary evaluates the decision function on a grid of points, which a "
            "precomputed kernel cannot do: fit with kernel='linear', 'poly' or 'rbf' to plot")
    Xp = as_matrix(X, name="X")
    if Xp.shape[1] != 2:
        raise ParameterError(
            f"decision_boundary draws 2-D data; X has d = {Xp.shape[1]} features: pick two "
            "(fit and plot X[:, [i, j]]) or project the data to 2-D first")
    d = solution.w.shape[0] if solution.w is not None else solution.support_vectors.shape[1]
    if d != 2:
        raise ParameterError(f"decision_boundary draws 2-D models; this solution was trained on "
                             f"d = {d} features: fit on two features to plot")
    labels = np.asarray(y)
    if labels.shape != (Xp.shape[0],):
        raise DataError(f"y must hold one label per row of X ({Xp.shape[0]}); got shape "
                        f"{labels.shape}")
    unknown = np.setdiff1d(labels, solution.classes)
    if unknown.size:
        raise DataError(f"y holds labels {unknown.tolist()} that the solution was not trained on "
                        f"(its classes: {solution.classes.tolist()})")
    plt = _pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 5.6))
    else:
        fig = ax.figure
    pts = np.vstack([Xp, solution.support_vectors])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = 0.1 * np.maximum(hi - lo, 1e-9)
    g0, g1, G0, G1, F = _area(solution, lo - pad, hi + pad)
    ax.contourf(G0, G1, F, levels=[-1.0, 0.0, 1.0], colors=REGION_COLOURS, extend="both")
    ax.contour(G0, G1, F, levels=[0.0], colors="k", linewidths=1.6).set_gid("boundary")
    ax.contour(G0, G1, F, levels=[-1.0, 1.0], colors="k", linewidths=1.0,
               linestyles="--").set_gid("margins")
    for c, colour, marker in zip(solution.classes, CLASS_COLOURS, ("o", "s")):
        on = labels == c
        ax.scatter(Xp[on, 0], Xp[on, 1], c=colour, marker=marker, s=28, edgecolors="white",
                   linewidths=0.5, label=f"class {c}", zorder=3)
    sv = solution.support_vectors
    ax.scatter(sv[:, 0], sv[:, 1], s=150, facecolors="none", edgecolors="k", linewidths=1.3,
               label=f"support vectors ({sv.shape[0]})", zorder=4, gid="support_vectors")
    ax.plot([], [], "k-", label="f(x) = 0")
    reached = [v for v in (-1.0, 1.0) if F.min() <= v <= F.max()]
    if len(reached) == 2:
        ax.plot([], [], "k--", label="f(x) = +-1")
    elif reached:
        ax.plot([], [], "k--", label=f"f(x) = {reached[0]:+g} (f = {-reached[0]:+g} not reached: "
                                     f"f in [{F.min():.3g}, {F.max():.3g}] here)")
    else:
        ax.plot([], [], " ", label=f"f(x) = +-1 not reached: f in [{F.min():.3g}, "
                                   f"{F.max():.3g}] here")
    ax.set_xlim(g0[0], g0[-1])
    ax.set_ylim(g1[0], g1[-1])
    ax.set_xlabel(feature_names[0])
    ax.set_ylabel(feature_names[1])
    ax.set_title(_title(solution), fontsize=10)
    ax.legend(loc="best", fontsize=8, framealpha=0.85)
    return _save(fig, path)


def _area(solution, lo, hi):
    """The grid of :func:`decision_boundary` and f on it: over ``[lo, hi]``, widened about its
    centre by the first factor of :data:`MARGIN_ZOOM` with which f reaches -1 and +1 (none:
    ``[lo, hi]`` itself)."""
    centre, half = (lo + hi) / 2, (hi - lo) / 2
    first = None
    for k in MARGIN_ZOOM:
        g0, g1 = (np.linspace(centre[j] - k * half[j], centre[j] + k * half[j], GRID)
                  for j in range(2))
        G0, G1 = np.meshgrid(g0, g1)
        F = solution.decision_function(np.column_stack([G0.ravel(), G1.ravel()]))
        grid = (g0, g1, G0, G1, F.reshape(G0.shape))
        first = first or grid
        if F.min() <= -1.0 and F.max() >= 1.0:
            return grid
    return first


def c_path(solutions, X, y, *, path=None):
    """The regularisation path over C: margin, support vectors, objective, training accuracy.

    Parameters
    ----------
    solutions : list of Solution
        Solutions of one formulation at several values of C, as :func:`svm_models.fit_path`
        returns them (any order; plotted by increasing C); one Solution is a one-point path.
    X, y : array-like
        The training data (for ``kernel="precomputed"``, the training Gram matrix), to score
        each solution on.
    path : str or path-like, optional
        Save the figure there.

    Returns
    -------
    matplotlib.figure.Figure
        Four panels against C on a log axis, one line each: the geometric margin
        ``1/||w||`` (gid ``"margin"``; where a solution has none the panel says so), the
        number of support vectors (``"n_support"``), ``objective`` (``"objective"``) and the
        training accuracy ``solution.score(X, y)`` (``"accuracy"``).

    Raises
    ------
    ParameterError
        No solutions, something other than Solutions, a solution without C, or solutions of
        different formulations.
    """
    sols = list(solutions) if not isinstance(solutions, Solution) else [solutions]
    if not sols:
        raise ParameterError("c_path needs at least one Solution (from svm_models.fit_path)")
    for s in sols:
        _check_solution(s, "c_path")
    names = sorted({s.formulation for s in sols})
    if len(names) > 1:
        raise ParameterError(f"c_path draws one formulation's path; got solutions of {names}")
    if any(s.C is None or not np.isfinite(s.C) for s in sols):
        raise ParameterError(
            f"c_path needs a finite C in every solution; {names[0]} solutions without one (a "
            "hard margin, or C tuning with no C*) have no place on a C axis: use a soft "
            "margin with svm_models.fit_path")
    sols.sort(key=lambda s: s.C)
    Cs = np.array([s.C for s in sols])
    plt = _pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(9.0, 6.6), sharex=True)
    margins = [(s.C, s.margin) for s in sols if s.margin is not None]
    panels = [
        ("margin", "margin 1/||w||", margins),
        ("n_support", "support vectors", [(s.C, s.n_support) for s in sols]),
        ("objective", "objective", [(s.C, s.objective) for s in sols]),
        ("accuracy", "training accuracy", [(s.C, s.score(X, y)) for s in sols]),
    ]
    for ax, (gid, label, pairs) in zip(axes.ravel(), panels):
        ax.set_xscale("log")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        if pairs:
            xs, ys = zip(*pairs)
            ax.plot(xs, ys, "o-", ms=4, gid=gid)
        else:
            ax.text(0.5, 0.5, f"no margin 1/||w|| in these {names[0]} solutions",
                    ha="center", va="center", transform=ax.transAxes)
        ax.set_xlim(Cs[0] / 1.5, Cs[-1] * 1.5)
    for ax in axes[1]:
        ax.set_xlabel("C")
    fig.suptitle(f"{names[0]} ({sols[0].kernel.name} kernel), solver {sols[0].solver}: "
                 f"path over {len(sols)} values of C", fontsize=11)
    fig.tight_layout()
    return _save(fig, path)


def _svm_value(M: np.ndarray, y: np.ndarray, solver: str, time_limit: float) -> float:
    """``D``: the optimum of the hard-margin dual with the precomputed kernel ``M``
    (+inf where that hard margin does not exist: its dual is unbounded)."""
    try:
        return float(solve(build("hard_dual", M, y, kernel="precomputed"), solver,
                           time_limit=time_limit).objective)
    except NotSeparableError:
        return float("inf")


def _bound_solver(own: str, l: int) -> str:
    """The default backend of :func:`c_tuning_bound`'s curve: the solution's own solver if it
    is one of :func:`~svm_models.solvers.local_choice`'s QP backends, else the first of them
    (auto's order, never a global branch and bound: SCIP spends over 60 s on a point on 40
    points) that fits -- the hard-margin dual on ``l`` points has at most ``2 l`` variables
    (its factor form)."""
    from .solvers import BACKENDS, local_choice

    def fits(name):
        limit = BACKENDS[name].max_quadratic_vars
        return limit is None or 2 * l <= limit

    local = local_choice("QP")
    for name in ([own] if own in local else []) + list(local):
        if fits(name):
            return name
    raise SolverUnavailableError(
        f"c_tuning_bound solves one QP per point of its curve and no local QP backend is "
        f"installed that fits {l} points (installed: {', '.join(local) or 'none'}): "
        "pip install piqp, or pass solver=...")


def c_tuning_bound(solution, X, y, *, solver=None, n_grid=25, path=None, time_limit=60.0):
    """The bound ``D(g)`` of a C-tuning solution over its range of g, with g* and the optimum.

    ``D(g)`` is the optimum of the SVM with the kernel fixed at ``M(g) = (1-g) K/r + g I/l``
    (the hard-margin dual on the precomputed ``M(g)``, one QP per point, as the saddle-point
    check solves it at g*). The QCQP's optimum is ``min_g D(g)``, reached at ``g*``.

    Parameters
    ----------
    solution : Solution
        A solution of ``c_tuning_standard``, ``c_tuning_general`` or
        ``c_tuning_general_nonneg``.
    X, y : array-like
        The training data it was fitted on (for ``kernel="precomputed"``: the Gram matrix).
    solver : str, optional
        The QP backend for the points of the curve; default: the solution's own solver if
        it is one of :func:`~svm_models.solvers.local_choice`'s QP backends, else the
        first of them installed here (a C-tuning solution solved by SCIP has its curve drawn
        by a fast QP backend).
    n_grid : int
        Number of equally spaced g in ``[g_lo, g_hi]`` (g* is added to them).
    path : str or path-like, optional
        Save the figure there.
    time_limit : float
        Seconds allowed for each of the ``n_grid + 1`` solves (a SolveFailedError beyond).

    Returns
    -------
    matplotlib.figure.Figure
        ``D(g)`` (gid ``"bound"``; points where ``D = +inf``, no hard margin with ``M(g)``, are
        left out and said so), g* (a vertical line) and the QCQP's optimum (gid
        ``"qcqp_optimum"``, at ``(g*, objective)``); on the top axis the matching C
        ``= l (1-g) / (g r)`` at decades, where the range meets ``0 < g < 1``.

    Raises
    ------
    ParameterError
        Not a C-tuning solution, or ``n_grid`` < 2.
    DataError
        ``X, y`` are not the data the solution was fitted on (size or labels).
    SolverUnavailableError
        No ``solver`` given and no local QP backend is installed (or fits).
    """
    _check_solution(solution, "c_tuning_bound")
    if not isinstance(solution.details, CTuningDetails):
        raise ParameterError(
            f"c_tuning_bound draws the bound of a C-tuning solution (c_tuning_standard, "
            f"c_tuning_general, c_tuning_general_nonneg); got one of {solution.formulation!r}")
    if isinstance(n_grid, bool) or not isinstance(n_grid, (int, np.integer)) or n_grid < 2:
        raise ParameterError(f"n_grid must be an integer >= 2; got {plain(n_grid)!r}")
    data = validate(X, y, precomputed=solution.kernel.name == "precomputed")
    if data.n_points != solution.alpha.shape[0]:
        raise DataError(f"the solution was fitted on {solution.alpha.shape[0]} points; X has "
                        f"{data.n_points}: pass the training data")
    if not np.array_equal(data.classes, solution.classes):
        raise DataError(f"y has the classes {data.classes.tolist()}; the solution was fitted "
                        f"with {solution.classes.tolist()}: pass the training labels")
    solver = solver or _bound_solver(solution.solver, data.n_points)
    K = np.array(solution.kernel.gram(data.X), dtype=float)
    K = (K + K.T) / 2                                    # then every M(g) is exactly symmetric
    g_lo, g_hi, g_star = solution.g_lo, solution.g_hi, float(solution.g)
    grid = np.union1d(np.linspace(g_lo, g_hi, n_grid), [g_star])
    D = np.array([_svm_value(M_of_g(K, g), data.y, solver, time_limit) for g in grid])
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.2, 4.8))
    finite = np.isfinite(D)
    ax.plot(grid, np.where(finite, D, np.nan), "-", marker=".", ms=4, gid="bound",
            label="D(g): optimum of the SVM with kernel M(g)")
    ax.axvline(g_star, color="0.35", ls=":", lw=1.2, label=f"g* = {g_star:.6g}")
    ax.plot([g_star], [solution.objective], "o", color="#c0392b", ms=8, gid="qcqp_optimum",
            label=f"QCQP optimum = {solution.objective:.8g}")
    if not finite.all():
        bad = grid[~finite]
        ax.plot([], [], " ", label=f"D = +inf (no hard margin with M(g)) at g in "
                                   f"[{bad.min():.3g}, {bad.max():.3g}]")
    if finite.any() and D[finite].min() > 0 and D[finite].max() > 10 * D[finite].min():
        ax.set_yscale("log")                             # D(g) grows steeply at the ends
    ax.set_xlim(g_lo, g_hi)
    ax.set_xlabel("g   (M(g) = (1-g) K/r + g I/l)")
    ax.set_ylabel("D(g)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    l, r = data.n_points, float(np.trace(K))
    decades = np.arange(-6, 9)
    g_at = l / (l + r * 10.0 ** decades)        # C = l (1-g) / (g r)  <=>  g = l / (l + r C)
    ticks, last = [], -np.inf
    for g, k in sorted(zip(g_at, decades)):             # decades crowd near g = 0 and 1: thin
        if max(g_lo, 0.0) < g < min(g_hi, 1.0) and g - last >= 0.06 * (g_hi - g_lo):
            ticks.append((g, f"1e{k}"))
            last = g
    if ticks:
        top = ax.secondary_xaxis("top")
        top.set_xticks([t[0] for t in ticks], labels=[t[1] for t in ticks])
        top.set_xlabel("C = l (1-g) / (g r), for 0 < g < 1", fontsize=9)
    C_text = f"C* = {solution.C:.4g}" if solution.C is not None else "no C* (g* outside [0, 1))"
    ax.set_title(f"{solution.formulation} ({solution.kernel.name} kernel): min_g D(g) at g*, "
                 f"{C_text}", fontsize=10)
    fig.tight_layout()
    return _save(fig, path)

# %% [markdown]
# # The path over C
#
# The 1-norm soft-margin SVM has one parameter, $C$, and it decides almost everything about
# the classifier: how wide the margin is, how many points hold it up, and how hard the model
# tries to fit the training points. This page solves the same model for eleven values of $C$,
# from $10^{-3}$ to $10^{2}$, and follows what changes.
#
# What to take away:
#
# - `svm_models.fit_path(X, y, Cs, ...)` builds the model once and changes its mutable
#   parameter `C` between solves; each re-solve starts from the previous solution's active
#   set. It gives the same answers as one `fit` per value of $C$, faster.
# - Small $C$ buys a wide margin with many support vectors, most of them with $\alpha_i = C$.
#   Large $C$ narrows the margin, leaves fewer support vectors and fits the training points
#   harder: the training accuracy rises, the test accuracy need not.
# - Past a certain $C$ nothing changes any more: on separable data the soft margin becomes the
#   hard margin.
#
# The data: the Wisconsin breast cancer set (30 features, standardised; 300 training and 171
# test points), the 1-norm soft margin, linear kernel.

# %%
import matplotlib.pyplot as plt
import time

import numpy as np
from sklearn.datasets import load_breast_cancer

import svm_models as sm
from svm_models.datasets import breast_cancer
from svm_models.plots import c_path, decision_boundary

FORMULATION = "soft_l1_dual"

# %% [markdown]
# ## The model
#
# The primal problem, [soft_l1_primal](../formulations/soft_l1_primal.md), trades the size of
# $w$ against the slacks $\xi_i$, the amounts by which points violate the margin:
#
# $$
# \min_{w,\,b,\,\xi}\ \tfrac12 \lVert w \rVert^2 + C \sum_{i=1}^{l} \xi_i
# \quad\text{s.t.}\quad y_i (w^\top x_i + b) \ge 1 - \xi_i,\quad \xi_i \ge 0 .
# $$
#
# The margin is the strip $-1 \le w^\top x + b \le 1$; its width is $2 / \lVert w \rVert$.
# We solve the dual, [soft_l1_dual](../formulations/soft_l1_dual.md),
#
# $$
# \max_{\alpha}\ \sum_{i} \alpha_i - \tfrac12 \sum_{i,j} \alpha_i \alpha_j y_i y_j\, x_i^\top x_j
# \quad\text{s.t.}\quad 0 \le \alpha_i \le C,\quad \sum_i y_i \alpha_i = 0,
# \qquad w = \sum_i \alpha_i y_i x_i .
# $$
#
# $C$ appears only as the upper bound of a box. The optimality conditions sort the points:
# $\alpha_i = 0$ for points beyond the margin, $0 < \alpha_i < C$ for points exactly on it, and
# $\alpha_i = C$ for points inside the margin or on the wrong side ($\xi_i > 0$). The support
# vectors are the points with $\alpha_i > 0$.
#
# In general, when we minimise $f + C g$, the penalised term $g$ can only fall and $f$ can only
# rise as $C$ grows (compare the optima at two values of $C$). Here $f = \tfrac12\lVert w\rVert^2$
# and $g = \sum_i \xi_i$: **the margin can only narrow** as $C$ grows, and the total slack can
# only shrink. The page checks both.

# %% [markdown]
# ## The path
#
# `main` fits the path and prints one row per value of $C$: the objective, the number of
# support vectors, how many of them sit at the box ($\alpha_i = C$), the margin
# $1/\lVert w \rVert$, and the training and test accuracy. `quick=True` takes 60 training
# points and 6 values of $C$ (the test suite uses it); `plot="path.png"` also saves the
# library's summary figure there.


# %%
def main(quick: bool = False, solver: str = "highs", plot=None) -> dict:
    """Fit the path; return ``{"Cs", "solutions", "X", "y", "figure"}`` (figure: None
    without ``plot``, else the figure of ``svm_models.plots.c_path``, saved to ``plot``)."""
    Xtr, Xte, ytr, yte = breast_cancer()
    l = 60 if quick else 300
    X, y = Xtr[:l], ytr[:l]
    Cs = np.logspace(-3, 2, 6 if quick else 11)
    t0 = time.perf_counter()
    sols = sm.fit_path(X, y, Cs, formulation=FORMULATION, solver=solver)
    elapsed = time.perf_counter() - t0
    print(f"{FORMULATION}, linear kernel, {l} training / {len(yte)} test points, solver {solver}: "
          f"{len(Cs)} values of C in {elapsed:.2f} s (one build)\n")
    print(f"{'C':>9s} {'objective':>12s} {'#SV':>5s} {'at C':>5s} {'margin':>8s} "
          f"{'train acc':>9s} {'test acc':>9s}")
    for C, s in zip(Cs, sols):
        at_C = int(np.sum(s.alpha >= C * (1 - 1e-6)))
        print(f"{C:9.3g} {s.objective:12.6f} {s.n_support:5d} {at_C:5d} {s.margin:8.4f} "
              f"{s.score(X, y):9.3f} {s.score(Xte, yte):9.3f}")
    best = max(zip(Cs, sols), key=lambda cs: cs[1].score(Xte, yte))
    print(f"\nbest test accuracy {best[1].score(Xte, yte):.3f} at C = {best[0]:.3g} "
          "(choosing C on the test set is for illustration only: use cross-validation, or "
          "the C-tuning QCQP of the page 'Tuning C as a convex QCQP')")
    fig = None
    if plot:
        fig = c_path(sols, X, y, path=plot)
        print(f"plot written to {plot}")
    return {"Cs": Cs, "solutions": sols, "X": X, "y": y, "figure": fig}


res = main(quick=False, solver="highs")

# %% [markdown]
# Read the table from top to bottom. At $C = 10^{-3}$ more than half of the points are
# support vectors and almost all of them sit at the box: the model barely fits, the slacks do
# the work. As $C$ grows the support vectors thin out and the margin narrows. In the last row
# no $\alpha_i$ is at the box any more.
#
# ## Checks
#
# The page's claims, checked on the path: the margin width is $2/\lVert w \rVert$ (the
# library's `margin` is $1/\lVert w \rVert$); the width never grows and the total slack never
# grows along the path; `fit_path` gives what separate fits give; and at the top of the path
# the solution is the hard-margin SVM of [hard_dual](../formulations/hard_dual.md), whose
# largest $\alpha_i$ is below the last $C$, so the box no longer binds.

# %%
Cs, sols, X, y = res["Cs"], res["solutions"], res["X"], res["y"]
Xtr, X_test, ytr, y_test = breast_cancer()
assert np.array_equal(X, Xtr[: len(y)])

norm_w = np.array([np.linalg.norm(s.w) for s in sols])
width = 2.0 / norm_w
slack = np.array([s.xi.sum() for s in sols])
n_sv = np.array([s.n_support for s in sols])
at_box = np.array([np.sum(s.alpha >= C * (1 - 1e-6)) for C, s in zip(Cs, sols)])
train_acc = np.array([s.score(X, y) for s in sols])
test_acc = np.array([s.score(X_test, y_test) for s in sols])

np.testing.assert_allclose(width, [2.0 * s.margin for s in sols], rtol=1e-9)
assert np.all(np.diff(norm_w) >= -1e-6 * norm_w[1:]), "||w|| must not fall as C grows"
assert np.all(np.diff(slack) <= 1e-6 * max(1.0, slack.max())), "the slack must not grow"
print(f"margin width 2/||w||: {width[0]:.3f} at C = {Cs[0]:g} down to {width[-1]:.4f} at "
      f"C = {Cs[-1]:g} (never increasing); total slack {slack[0]:.1f} down to {slack[-1]:.2g}")

for k in (0, len(Cs) // 2):
    one = sm.fit(X, y, formulation=FORMULATION, solver="piqp", C=Cs[k])
    gap = abs(one.objective - sols[k].objective) / abs(one.objective)
    print(f"C = {Cs[k]:g}: path objective {sols[k].objective:.8f}, separate fit (piqp) "
          f"{one.objective:.8f}, relative difference {gap:.1e}")
    assert gap <= 1e-6
    np.testing.assert_allclose(sols[k].w, one.w, atol=1e-5 * max(1.0, np.abs(one.w).max()))

hard = sm.fit(X, y, formulation="hard_dual", solver="highs")
print(f"hard margin: objective {hard.objective:.6f}, largest alpha {hard.alpha.max():.3f} "
      f"< C = {Cs[-1]:g}; the path's last objective {sols[-1].objective:.6f}")
assert hard.alpha.max() < Cs[-1]
assert abs(hard.objective - sols[-1].objective) <= 1e-6 * hard.objective
assert at_box[-1] == 0 and slack[-1] <= 1e-6

# %% [markdown]
# ## The margin narrows
#
# The width $2/\lVert w \rVert$ of the strip between $f(x) = -1$ and $f(x) = +1$, in the units
# of the standardised features, on logarithmic axes. It falls by a factor of about fifty over
# the path and stops falling at the hard margin: once $C$ exceeds the largest $\alpha_i$ of the
# hard-margin solution (dotted line), the box no longer binds.

# %%
fig, ax = plt.subplots(figsize=(6.4, 4.2))
ax.loglog(Cs, width, "o-", ms=4)
ax.axvline(hard.alpha.max(), color="0.4", ls=":", label=r"largest $\alpha_i$ of the hard margin")
ax.set_xlabel("C")
ax.set_ylabel(r"margin width $2/\|w\|$")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
ax.set_title("Margin width against C")
plt.show()

# %% [markdown]
# ## Fewer support vectors
#
# The number of support vectors ($\alpha_i > 0$), split into those at the box
# ($\alpha_i = C$: inside the margin or misclassified) and the free ones
# ($0 < \alpha_i < C$: exactly on the margin). With a linear kernel in $d = 30$ dimensions the
# free ones are few: generically at most $d + 1$ points lie exactly on the two margin planes.

# %%
fig, ax = plt.subplots(figsize=(6.4, 4.2))
ax.semilogx(Cs, n_sv, "o-", ms=4, label=r"support vectors, $\alpha_i > 0$")
ax.semilogx(Cs, at_box, "s--", ms=4, label=r"at the box, $\alpha_i = C$")
ax.semilogx(Cs, n_sv - at_box, "^:", ms=4, label=r"free, $0 < \alpha_i < C$")
ax.set_xlabel("C")
ax.set_ylabel("number of points")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
ax.set_title(f"Support vectors against C ({len(y)} training points)")
plt.show()
assert np.all(n_sv - at_box <= X.shape[1] + 1)
print(f"free support vectors: at most {np.max(n_sv - at_box)} (d + 1 = {X.shape[1] + 1}); "
      f"support vectors {n_sv[0]} at C = {Cs[0]:g}, {n_sv[-1]} at C = {Cs[-1]:g}")

# %% [markdown]
# ## Training and test accuracy
#
# Training accuracy climbs to 1: with 30 features, 300 points can be separated, and a large
# $C$ makes the model do so. The test accuracy on the 171 held-out points does not follow.
# After the smallest $C$ it moves up and down between about 0.93 and 0.95 with no upward
# trend, and it is at its lowest of those at the two largest values of $C$, where the model
# fits every training point. Which $C$ to use is a question for cross-validation or for
# the C-tuning QCQP of [Tuning C as a convex QCQP](c_tuning_vs_grid_search.ipynb), not for
# the test set.

# %%
fig, ax = plt.subplots(figsize=(6.4, 4.2))
ax.semilogx(Cs, train_acc, "o-", ms=4, label=f"training ({len(y)} points)")
ax.semilogx(Cs, test_acc, "s-", ms=4, label=f"test ({len(y_test)} points)")
ax.set_xlabel("C")
ax.set_ylabel("accuracy")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
ax.set_title("Accuracy against C")
plt.show()
assert train_acc[-1] == 1.0 and train_acc[-1] > train_acc[0]
assert test_acc[-1] < test_acc.max()
print(f"training accuracy {train_acc[0]:.3f} -> {train_acc[-1]:.3f}; test accuracy between "
      f"{test_acc.min():.3f} and {test_acc.max():.3f}, {test_acc[-1]:.3f} at C = {Cs[-1]:g}")

# %% [markdown]
# ## The same in one call
#
# `svm_models.plots.c_path` draws a path in four panels: the geometric margin
# $1/\lVert w \rVert$ (half the width above), the support vectors, the objective and the
# training accuracy. The objective rises with $C$, as it must: a larger box only enlarges the
# feasible set of the dual, a maximisation.

# %%
fig = c_path(sols, X, y)
plt.show()
objective = np.array([s.objective for s in sols])
assert np.all(np.diff(objective) >= -1e-9 * objective[1:])

# %% [markdown]
# ## The boundary at a small and a large C
#
# Thirty features cannot be drawn. To see what the margin does, take two of them, the mean
# radius and the mean texture of the cell nuclei, and the first 100 training points, and fit
# the same model at $C = 0.01$ and $C = 100$. The classes are scikit-learn's labels: 0 for
# malignant, 1 for benign. Mind the axes: the two panels are drawn at different scales.
#
# At the small $C$ the margin is wide enough to hold most points (the plot zooms out to show
# both dashed lines), $w$ is short, and the boundary sits where the offset $b$ and the class
# balance put it: the model hardly uses the features. At the large $C$ the margin closes in
# on the points near the boundary, and a few support vectors decide where it goes.

# %%
names = load_breast_cancer().feature_names
features = [0, 1]
X2, y2 = Xtr[:100][:, features], ytr[:100]
small, large = sm.fit_path(X2, y2, [0.01, 100.0], formulation=FORMULATION, solver="highs")
fig, axes = plt.subplots(1, 2, figsize=(13, 5.2))
for ax, s in zip(axes, (small, large)):
    decision_boundary(s, X2, y2, ax=ax, feature_names=[names[j] for j in features])
    ax.set_title(f"C = {s.C:g}: margin width {2 * s.margin:.3g}, {s.n_support} support "
                 f"vectors, training accuracy {s.score(X2, y2):.2f}", fontsize=10)
fig.subplots_adjust(left=0.06, right=0.99, wspace=0.18)
plt.show()
assert 2 * small.margin > 2 * large.margin and small.n_support > large.n_support

# %% [markdown]
# ## Saving a figure
#
# The page shows its figures and writes no files. To keep one, save the figure object:
# `fig.savefig("c_path.png", dpi=150, bbox_inches="tight")`. The plotting functions also take
# a path, `c_path(sols, X, y, path="c_path.png")` and
# `decision_boundary(sol, X, y, path="boundary.png")`, and `main(plot="c_path.png")` saves the
# summary figure of the path.

# %% [markdown]
# # 1-norm and 2-norm soft margins
#
# The hard margin asks every point to keep $y_i f(x_i) \ge 1$. Two kinds of data defeat it:
#
# - **(a) a noisy point.** The data are still separable, but one point lies close to the
#   other class. The hard margin must keep it on its side, so the hyperplane is dragged
#   towards the other class and the margin becomes very narrow: the hard margin is sensitive
#   to noise.
# - **(b) almost separable data.** A few points lie across the boundary. No hyperplane
#   separates the classes, the hard-margin problem is infeasible and has no solution at all.
#
# The soft margin gives up a little: each point may fall short of the margin by a *slack*
# $\xi_i \ge 0$, at a price set by the parameter $C$. How the slacks are priced gives two
# models, the 1-norm soft margin ($C\sum_i \xi_i$) and the 2-norm soft margin
# ($\tfrac{C}{2}\sum_i \xi_i^2$). This page solves both, primal and dual, on both kinds of
# data, and checks what the optimality conditions say about their multipliers. The hard margin
# itself is the subject of [The hard margin](hard_margin.ipynb).

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import SVC

import svm_models as sm
from svm_models.datasets import teaching_2d
from svm_models.plots import decision_boundary

SOLVER = "piqp"          # any QP backend: "clarabel", "highs", "gurobi", ...
C = 1.0                  # the price of slack, the same for every model on this page

# %% [markdown]
# ## Two ways to price the slack
#
# The **1-norm soft margin** ([soft_l1_primal](../formulations/soft_l1_primal.md)) pays each
# slack linearly:
#
# $$
# \min_{w,\,b,\,\xi}\ \tfrac12 \lVert w\rVert^2 + C \sum_{i=1}^{l} \xi_i
# \quad\text{s.t.}\quad y_i\,(w^\top x_i + b) \ge 1 - \xi_i,\quad \xi_i \ge 0 .
# $$
#
# A point with $\xi_i = 0$ keeps its margin; $0 < \xi_i \le 1$ puts it inside the margin but on
# the right side; $\xi_i > 1$ puts it on the wrong side of the hyperplane. With multipliers
# $\alpha_i \ge 0$ for the margin rows and $\mu_i \ge 0$ for $\xi_i \ge 0$, stationarity in
# $\xi_i$ gives $C - \alpha_i - \mu_i = 0$, so $0 \le \alpha_i \le C$: the dual
# ([soft_l1_dual](../formulations/soft_l1_dual.md)) is the hard-margin dual with a *box*,
#
# $$
# \max_{\alpha}\ \sum_i \alpha_i - \tfrac12 \sum_{i,j} \alpha_i \alpha_j y_i y_j\, x_i^\top x_j
# \quad\text{s.t.}\quad 0 \le \alpha_i \le C,\quad \sum_i y_i \alpha_i = 0 .
# $$
#
# A point with slack has $\mu_i = 0$ (complementary slackness with $\xi_i > 0$), hence
# $\alpha_i = C$: no single point can pull on the hyperplane harder than $C$.
#
# The **2-norm soft margin** ([soft_l2_primal](../formulations/soft_l2_primal.md)) pays the
# squares:
#
# $$
# \min_{w,\,b,\,\xi}\ \tfrac12 \lVert w\rVert^2 + \tfrac{C}{2} \sum_{i=1}^{l} \xi_i^2
# \quad\text{s.t.}\quad y_i\,(w^\top x_i + b) \ge 1 - \xi_i .
# $$
#
# No sign constraint is needed (a negative slack would only cost more). Stationarity in
# $\xi_i$ now gives $C\xi_i - \alpha_i = 0$, that is $\xi_i = \alpha_i / C$, and the dual
# ([soft_l2_dual](../formulations/soft_l2_dual.md)) has no box but an extra quadratic term:
#
# $$
# \max_{\alpha}\ \sum_i \alpha_i - \tfrac12 \sum_{i,j} \alpha_i \alpha_j y_i y_j\, x_i^\top x_j
# - \tfrac{1}{2C} \sum_i \alpha_i^2
# \quad\text{s.t.}\quad \alpha \ge 0,\quad \sum_i y_i \alpha_i = 0,
# $$
#
# a hard margin with the kernel $x_i^\top x_j + \delta_{ij}/C$. A point far on the wrong side
# has a large $\xi_i$ and hence a large $\alpha_i = C\xi_i$, above $C$.

# %% [markdown]
# ## Case (a): a noisy point drags the hard margin
#
# Thirty separable points, and one more point of class $+1$ placed close to the class $-1$.
# The data stay separable, so the hard margin exists.

# %%
X0, y0 = teaching_2d(30, separation=3.0, seed=1)
noisy = len(y0)                                    # the index of the added point
Xa = np.vstack([X0, [-0.6, -0.2]])
ya = np.append(y0, 1)

hard = sm.fit(Xa, ya, formulation="hard_primal", solver=SOLVER)
soft1 = sm.fit(Xa, ya, formulation="soft_l1_primal", solver=SOLVER, C=C)
soft2 = sm.fit(Xa, ya, formulation="soft_l2_primal", solver=SOLVER, C=C)
print(f"{'model':15s} {'margin 1/||w||':>15s} {'xi of the noisy point':>22s} "
      f"{'alpha of it':>12s} {'#SV':>4s}")
for s in (hard, soft1, soft2):
    print(f"{s.formulation:15s} {s.margin:15.4f} {s.xi[noisy]:22.4f} {s.alpha[noisy]:12.4f} "
          f"{s.n_support:4d}")

# %% [markdown]
# On the left, the hard margin: the noisy point is a support vector, and the band between the
# dashed lines is squeezed between it and the class $-1$. On the right, the 1-norm soft margin
# at $C = 1$: it lets the noisy point go (it lies on the wrong side, $\xi > 1$) and in
# exchange gets a margin more than ten times as wide, which separates the two clouds well.

# %%
fig, axes = plt.subplots(1, 2, figsize=(13, 5.6))
for ax, s in zip(axes, (hard, soft1)):
    decision_boundary(s, Xa, ya, ax=ax)
    ax.scatter(*Xa[noisy], s=380, marker="*", facecolors="none", edgecolors="#6c3483",
               linewidths=1.5, zorder=5)
    ax.annotate("noisy point", Xa[noisy], xytext=(12, -18), textcoords="offset points",
                color="#6c3483", fontsize=9)
fig.tight_layout()
plt.show()

# %% [markdown]
# In the table, the hard margin's multiplier of the noisy point is far above 1: nothing caps
# it, and through $w = \sum_i \alpha_i y_i x_i$ that one point dominates the solution.
#
# What the figure shows, checked: the noisy point is a support vector of the hard margin; the
# 1-norm soft margin pays a slack $\xi > 0$ on it (here $\xi > 1$: it is misclassified), its
# multiplier sits at the top of the box, $\alpha = C$, and every other point is classified
# correctly. The 2-norm soft margin does the same, with $\alpha = C\xi$, which is above $C$
# because $\xi > 1$.

# %%
clean = np.arange(len(ya)) != noisy
print(f"margin: hard {hard.margin:.4f}, 1-norm {soft1.margin:.4f}, 2-norm {soft2.margin:.4f}")
print(f"1-norm soft margin: xi = {soft1.xi[noisy]:.4f}, alpha = {soft1.alpha[noisy]:.6f} "
      f"(C = {C}); "
      f"correct on the other {clean.sum()} points: {soft1.score(Xa[clean], ya[clean]):.0%}")
print(f"2-norm soft margin: xi = {soft2.xi[noisy]:.4f}, alpha = {soft2.alpha[noisy]:.6f} = C xi")
print(f"1-norm objective = 1/2 ||w||^2 + C sum xi = {0.5 * soft1.w @ soft1.w:.4f} + "
      f"{C * soft1.xi.sum():.4f} = {soft1.objective:.4f}  (hard margin: {hard.objective:.4f})")
assert noisy in hard.support and hard.alpha[noisy] > 10 * C
assert soft1.margin > 10 * hard.margin
assert soft1.xi[noisy] > 1 and abs(soft1.alpha[noisy] - C) < 1e-6 * C
assert soft1.score(Xa[clean], ya[clean]) == 1.0
assert abs(soft2.alpha[noisy] - C * soft2.xi[noisy]) < 1e-6 and soft2.alpha[noisy] > C

# %% [markdown]
# ## Case (b): almost separable data
#
# Forty points from two clouds that overlap a little. The hard margin does not exist.

# %%
Xb, yb = teaching_2d(40, separation=2.2, seed=1)
try:
    sm.fit(Xb, yb, formulation="hard_dual", solver=SOLVER)
except sm.NotSeparableError as err:
    print("hard margin: NotSeparableError:", str(err).split(" (")[0])
else:
    raise AssertionError("the hard margin solved data that no line separates")

# %% [markdown]
# Both soft margins still give a classifier. We solve each in its primal and in its dual form
# (the primal and dual of one family give the same hyperplane; the page
# [Primal and dual side by side](classic_side_by_side.ipynb) is about that).

# %%
l1p = sm.fit(Xb, yb, formulation="soft_l1_primal", solver=SOLVER, C=C)
l1d = sm.fit(Xb, yb, formulation="soft_l1_dual", solver=SOLVER, C=C)
l2p = sm.fit(Xb, yb, formulation="soft_l2_primal", solver=SOLVER, C=C)
l2d = sm.fit(Xb, yb, formulation="soft_l2_dual", solver=SOLVER, C=C)
print(f"{'model':15s} {'objective':>10s} {'w':>20s} {'b':>8s} {'margin':>7s} {'#SV':>4s} "
      f"{'max alpha':>9s} {'accuracy':>8s}")
for s in (l1p, l1d, l2p, l2d):
    print(f"{s.formulation:15s} {s.objective:10.5f} {np.array2string(s.w, precision=4):>20s} "
          f"{s.b:+8.4f} {s.margin:7.4f} {s.n_support:4d} {s.alpha.max():9.4f} "
          f"{s.score(Xb, yb):8.1%}")
for p, d in ((l1p, l1d), (l2p, l2d)):
    assert abs(p.objective - d.objective) < 1e-6 * max(1.0, p.objective)
    assert np.allclose(p.w, d.w, atol=1e-5) and abs(p.b - d.b) < 1e-5
assert l2d.margin > l1d.margin and l2d.n_support > l1d.n_support

# %% [markdown]
# Side by side, with the same $C$: the 2-norm soft margin has the wider margin and more
# support vectors. Squaring the slacks makes small violations cheap and large ones dear, so
# many points take a little slack; the 1-norm leans on fewer points, each capped at $C$.

# %%
fig, axes = plt.subplots(1, 2, figsize=(13, 5.6))
for ax, s in zip(axes, (l1d, l2d)):
    decision_boundary(s, Xb, yb, ax=ax)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## The multipliers: a box for the 1-norm, a line for the 2-norm
#
# Plot each point's multiplier $\alpha_i$ against its slack $\xi_i$. For the 1-norm soft
# margin every point with slack sits on the top of the box, $\alpha_i = C$, and the points
# without slack have $0 \le \alpha_i \le C$. For the 2-norm there is no box: every point lies
# on the line $\alpha_i = C\xi_i$.

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharex=True)
xs = np.linspace(0, 1.1 * l2p.xi.max(), 2)
for ax, s, title in ((axes[0], l1d, "1-norm (soft_l1_dual)"),
                     (axes[1], l2d, "2-norm (soft_l2_dual)")):
    xi = l1p.xi if s is l1d else l2p.xi               # the primal's slacks
    ax.scatter(xi, s.alpha, s=30, c=np.where(yb > 0, "#c0392b", "#1f5fa8"), zorder=3)
    ax.axhline(C, color="0.4", ls="--", lw=1, label="alpha = C")
    if s is l1d:
        ax.axhspan(0, C, color="#f4d03f", alpha=0.15, label="the box 0 <= alpha <= C")
    ax.axhline(0, color="0.7", lw=0.8)
    ax.set_xlabel("slack xi_i (from the primal)")
    ax.set_ylabel("alpha_i (from the dual)")
    ax.set_title(title)
axes[1].plot(xs, C * xs, color="#6c3483", lw=1, label="alpha = C xi")
axes[0].legend(fontsize=8, loc="center right")
axes[1].legend(fontsize=8, loc="upper left")
fig.tight_layout()
plt.show()

# %% [markdown]
# The checks: the 1-norm's $\alpha$ stays in the box $[0, C]$ and equals $C$ wherever
# $\xi > 0$; the 2-norm's primal slacks equal the dual's $\alpha / C$, and its misclassified
# points ($\xi > 1$) have $\alpha > C$.

# %%
tol = 1e-6
box = (l1d.alpha.min(), l1d.alpha.max())
print(f"1-norm: alpha in [{box[0]:.2e}, {box[1]:.8f}], C = {C}; "
      f"{np.sum(l1p.xi > tol)} points with xi > 0, their alpha: "
      f"{np.round(l1d.alpha[l1p.xi > tol], 8)}")
assert box[0] >= -tol and box[1] <= C + tol
assert np.all(np.abs(l1d.alpha[l1p.xi > tol] - C) < tol * C)
gap = np.max(np.abs(l2p.xi - l2d.alpha / C))
wrong = l2p.xi > 1
print(f"2-norm: max |xi_primal - alpha_dual / C| = {gap:.1e}; max alpha = {l2d.alpha.max():.4f} "
      f"(C = {C}); misclassified points: {np.flatnonzero(wrong).tolist()}, their alpha "
      f"{np.round(l2d.alpha[wrong], 4)}")
assert gap < 1e-6
assert wrong.any() and np.all(l2d.alpha[wrong] > C)

# %% [markdown]
# ## The 1-norm dual against scikit-learn
#
# The 1-norm dual is the problem libsvm solves (scikit-learn's `SVC`). An independent check:
# `SVC` with a linear kernel and the same $C$, at a tight tolerance, gives the same decision
# function and the same support vectors.

# %%
ref = SVC(kernel="linear", C=C, tol=1e-10).fit(Xb, yb)
diff = np.max(np.abs(ref.decision_function(Xb) - l1d.decision_function(Xb)))
print(f"max |f_SVC(x_i) - f(x_i)| = {diff:.1e}; "
      f"support vectors: SVC {sorted(ref.support_.tolist())}, "
      f"soft_l1_dual {sorted(l1d.support.tolist())}")
assert diff < 1e-5
assert sorted(ref.support_) == sorted(l1d.support)

# %% [markdown]
# ## What to take away
#
# - Slack makes the soft margins robust to a noisy point (case a) and solvable when no
#   separating hyperplane exists (case b); $C$ sets how much a violation costs.
# - 1-norm: linear price, box $0 \le \alpha_i \le C$; points with slack have $\alpha_i = C$.
# - 2-norm: quadratic price, no box, $\xi_i = \alpha_i / C$; it is the hard margin with
#   $\delta_{ij}/C$ added to the kernel.

# %% [markdown]
# # Radius-margin SVMs
#
# A support vector machine maximises the margin $\rho = 1/\lVert w\rVert$. But the margin is
# measured in the units of the features: stretch the data and the margin grows with it. What
# predicts how well a hard-margin SVM generalises is not $\rho$ alone but the ratio
#
# $$
# \frac{R^2}{\rho^2} = R^2\,\lVert w\rVert^2 ,
# $$
#
# with $R$ the radius of the smallest ball holding the data: the classical bound on the
# leave-one-out error (Vapnik, 1998) grows with it. Do and Kalousis (*Convex formulations of
# radius-margin based Support Vector Machines*, ICML 2013) put the radius into the training
# problem, and write it so that the problem stays convex.
#
# This page fits their R-SVM+ ([rsvm_plus_primal](../formulations/rsvm_plus_primal.md)) beside
# the plain 1-norm soft-margin SVM ([soft_l1_primal](../formulations/soft_l1_primal.md)) on 2-D
# data with one feature stretched, draws each classifier's margin band together with the
# enclosing ball of the data, checks Lemma 1 of the paper's appendix on the two radii $R$ and
# $R_O$ (and shows where it fails), and solves R-SVM+ in its dual form
# ([rsvm_plus_dual](../formulations/rsvm_plus_dual.md)) to the same optimum. The derivations are
# on the family's page, [radius-margin SVMs](../formulations/radius_margin.md).

# %%
import matplotlib.pyplot as plt
import numpy as np
import pyomo.environ as pyo
from matplotlib.patches import Circle
from scipy.spatial.distance import pdist, squareform

import svm_models as sm
from svm_models.plots import CLASS_COLOURS, REGION_COLOURS

# %% [markdown]
# ## Stretching the data stretches the margin
#
# Multiply every feature by $s > 0$. The classifier $(w, b)$ on the old data is the classifier
# $(w/s,\, b)$ on the new: the same points on the same side, the same slacks. Its margin
# $1/\lVert w/s\rVert$ is $s$ times larger, but so is the radius $R$ of the data, and the ratio
# $R^2/\rho^2$ does not move. A method that learns the scale of the features (a metric, or a
# weight per feature) cannot therefore maximise the margin alone: it would stretch the data
# without end. It has to weigh the margin against the radius.
#
# The data: 40 points in two classes; both features carry some signal. Then feature 1 is
# stretched four times, as if it had been recorded in other units.

# %%
rng = np.random.default_rng(3)
n = 40
y = np.where(np.arange(n) % 2 == 0, 1, -1)
X = np.column_stack([1.1 * y + 0.7 * rng.standard_normal(n),
                     0.5 * y + 0.9 * rng.standard_normal(n)])
STRETCH = np.array([1.0, 4.0])     # feature 1 in other units
Xs = X * STRETCH
C, LAM = 1.0, 1.0                  # the SVMs' C; R-SVM+'s radius weight lambda

plain = sm.fit(X, y, formulation="soft_l1_primal", solver="clarabel", C=C)
R = sm.enclosing_ball_radius(X)
ratio = R ** 2 * (plain.w @ plain.w)
print(f"{'data x':>6s} {'margin':>9s} {'R':>9s} {'R^2 ||w||^2':>12s}")
print(f"{1:6g} {plain.margin:9.4f} {R:9.4f} {ratio:12.6f}")
for factor in (2.0, 10.0):         # the same classifier, (w/factor, b), on the data x factor
    R_f = sm.enclosing_ball_radius(factor * X)
    w_f = plain.w / factor
    print(f"{factor:6g} {1 / np.linalg.norm(w_f):9.4f} {R_f:9.4f} {R_f ** 2 * (w_f @ w_f):12.6f}")
    assert abs(R_f / R - factor) < 1e-6 * factor
    assert abs(1 / np.linalg.norm(w_f) / plain.margin - factor) < 1e-9 * factor
    assert abs(R_f ** 2 * (w_f @ w_f) - ratio) < 1e-6 * ratio

# %% [markdown]
# ## R-SVM+: the radius measured as the classifier sees the data
#
# The radius-margin ratio itself is not convex. Do and Kalousis minimise a weighted sum
# instead, $\tfrac12\lVert w\rVert^2 + \lambda\,(\text{radius})$ (their Lemma 2: for some
# $\lambda$ the two have the same optimum), and for the radius they take $R_O$, half the largest
# distance between two points, which needs one linear row per pair of points rather than a
# ball. R-SVM+ measures that distance after multiplying each feature $k$ by the classifier's
# own weight $w_k$:
#
# $$
# \min_{w,\,b,\,\xi,\,r}\ \tfrac12\lVert w\rVert^2 + \lambda\, r + C\sum_i \xi_i
# \quad\text{s.t.}\quad y_i\,(w^\top x_i + b) \ge 1 - \xi_i,\quad \xi_i \ge 0,\quad
# \tfrac12 \sum_k w_k^2\,(x_{ik} - x_{jk})^2 \le r \quad (i < j).
# $$
#
# At the optimum $r = 2 R_O^2$ of the data with feature $k$ multiplied by $|w_k|$. Stretch
# feature $k$ by $s$ and the same classifier has $w_k/s$ in place of $w_k$: the product
# $w_k^2 (x_{ik} - x_{jk})^2$, and so $r$, does not change. The radius term is blind to the
# units of the features; $\tfrac12\lVert w\rVert^2$ is not. As built, $s_k \ge w_k^2$ lifts the
# squares, so the $l(l-1)/2 = 780$ pair rows are linear and only two rows are quadratic: a
# convex QCQP, for Clarabel, Gurobi, Ipopt or SCIP.
#
# Both SVMs, on the stretched data:

# %%
plain_s = sm.fit(Xs, y, formulation="soft_l1_primal", solver="clarabel", C=C)
rsvm_s = sm.fit(Xs, y, formulation="rsvm_plus_primal", solver="clarabel", C=C, lam=LAM)
for sol in (plain_s, rsvm_s):
    print(f"{sol.formulation:17s} w = {np.array2string(sol.w, precision=4)}, b = {sol.b:+.4f}, "
          f"margin 1/||w|| = {sol.margin:.4f}, objective {sol.objective:.6f}, "
          f"training accuracy {np.mean(sol.predict(Xs) == y):.3f}")

# r is half the largest squared distance with feature k scaled by |w_k|: 2 R_O^2 there
R_O_w = sm.half_diameter(Xs * np.abs(rsvm_s.w))
print(f"R-SVM+: r = {rsvm_s.r:.8f}, 2 R_O(|w| x)^2 = {2 * R_O_w ** 2:.8f}")
assert abs(rsvm_s.r - 2 * R_O_w ** 2) <= 1e-6 * max(1.0, rsvm_s.r)

# %% [markdown]
# ### The enclosing ball, as a Pyomo model of our own
#
# To draw the ball we need its centre as well as its radius. The smallest ball holding the
# points is itself a small convex problem, with the centre $c$ and $t = R^2$ as variables:
#
# $$
# \min_{c,\,t}\ t \quad\text{s.t.}\quad \lVert x_i - c\rVert^2 \le t \quad (i = 1, \dots, l).
# $$
#
# Five lines of Pyomo, solved by `sm.optimize` (any backend that takes quadratic rows). The
# library's `enclosing_ball_radius` solves the dual of this problem instead, a QP over the
# weights of the centre; the two must agree.

# %%
ball = pyo.ConcreteModel()
ball.c = pyo.Var(range(2))
ball.t = pyo.Var(bounds=(0, None))
ball.inside = pyo.Constraint(range(n), rule=lambda m, i: sum(
    (Xs[i, j] - m.c[j]) ** 2 for j in range(2)) <= m.t)
ball.size = pyo.Objective(expr=ball.t)
sm.optimize(ball, solver="clarabel")
centre = np.array([pyo.value(ball.c[j]) for j in range(2)])
R_ball = float(np.sqrt(pyo.value(ball.t)))

R_s = sm.enclosing_ball_radius(Xs)            # the dual QP, by the library
R_O_s = sm.half_diameter(Xs)                  # half the largest distance, exact
D = squareform(pdist(Xs))
far = np.unravel_index(np.argmax(D), D.shape)  # the farthest pair
print(f"our ball: centre {np.array2string(centre, precision=5)}, R = {R_ball:.7f}")
print(f"library : R = {R_s:.7f}; R_O = {R_O_s:.7f} (points {far[0]} and {far[1]})")
assert abs(R_ball - R_s) <= 1e-6 * R_s
assert np.max(np.linalg.norm(Xs - centre, axis=1)) <= R_ball * (1 + 1e-6)

# %% [markdown]
# ### The picture
#
# Each panel shows the 40 stretched points, the classifier's regions (the margin band is the
# pale strip $-1 < f(x) < 1$ around the boundary $f(x) = 0$), its support vectors circled, the
# enclosing ball of radius $R$ (solid circle, its centre a cross) and the circle of radius
# $R_O$ about the midpoint of the farthest pair (dotted, the pair joined by a dotted segment).
# The axes have equal scales, so the balls are round and the band's width is the true margin
# $2/\lVert w\rVert$.
#
# What to look at: the ball is set by the stretched feature 1. Here it rests on the farthest
# pair, so $R = R_O$ and the two circles coincide (they need not: see Lemma 1 below). The plain
# SVM's band is narrow: the radius plays no part in its problem. R-SVM+ pays for the radius as
# well as for $\lVert w\rVert^2$, and both are paid by shrinking $w$: its band is more than
# twice as wide, more points lie inside it (they are the support vectors), and the ratio
# $R^2\lVert w\rVert^2$ in the panel's title falls from about 164 to about 34, at the price
# of one more training error.


# %%
def panel(ax, sol, title):
    """The regions of a linear classifier, its band, the points, the two balls."""
    lo = centre - 1.08 * R_s
    hi = centre + 1.08 * R_s
    g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], 300), np.linspace(lo[1], hi[1], 300))
    F = sol.decision_function(np.column_stack([g0.ravel(), g1.ravel()])).reshape(g0.shape)
    ax.contourf(g0, g1, F, levels=[-1.0, 0.0, 1.0], colors=REGION_COLOURS, extend="both")
    ax.contour(g0, g1, F, levels=[0.0], colors="k", linewidths=1.6)
    ax.contour(g0, g1, F, levels=[-1.0, 1.0], colors="k", linewidths=1.0, linestyles="--")
    for c, colour, marker in zip(sol.classes, CLASS_COLOURS, ("o", "s")):
        on = y == c
        ax.scatter(Xs[on, 0], Xs[on, 1], c=colour, marker=marker, s=26, edgecolors="white",
                   linewidths=0.5, label=f"class {c}", zorder=3)
    sv = sol.support_vectors
    ax.scatter(sv[:, 0], sv[:, 1], s=120, facecolors="none", edgecolors="k", linewidths=1.1,
               label=f"support vectors ({len(sv)})", zorder=4)
    ax.add_patch(Circle(centre, R_s, fill=False, color="k", lw=1.6,
                        label=f"ball, R = {R_s:.3f}"))
    ax.plot(*centre, "k+", ms=12, mew=2)
    mid = (Xs[far[0]] + Xs[far[1]]) / 2
    ax.add_patch(Circle(mid, R_O_s, fill=False, color="0.3", lw=1.2, ls=":",
                        label=f"$R_O$ = {R_O_s:.3f}"))
    ax.plot(*Xs[list(far)].T, ":", color="0.3")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.set_xlabel("x[0]")
    ax.set_ylabel("x[1] (stretched x 4)")
    ax.set_title(f"{title}\nmargin 1/||w|| = {sol.margin:.3f}, R^2 ||w||^2 = "
                 f"{R_s ** 2 / sol.margin ** 2:.1f}", fontsize=10)
    ax.legend(loc="lower right", fontsize=7, framealpha=0.85)


fig, axes = plt.subplots(1, 2, figsize=(11, 5.6))
panel(axes[0], plain_s, f"soft_l1_primal, C = {C}")
panel(axes[1], rsvm_s, f"rsvm_plus_primal, C = {C}, lambda = {LAM}")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Undoing the stretch
#
# Now fit both SVMs on the data as they came, without the stretch, and compare the
# classifiers in the original units: a classifier $(w, b)$ on the stretched data is
# $(w \circ (1, 4),\, b)$ on the original. The plain SVM is a different classifier after the
# stretch: it has turned towards the stretched feature, and moved. R-SVM+ returns the same
# classifier either way.
#
# Why, here, exactly the same? Each solution is held in place by its active rows. R-SVM+'s
# are two points on the margin ($0 < \alpha_i < C$) and two pairs of points at the radius
# ($\beta_p > 0$): four equations, $y_i(w^\top x_i + b) = 1$ and
# $\tfrac12 \sum_k w_k^2 (x_{ik} - x_{jk})^2 = r$, in the four unknowns $w_0, w_1, b, r$, and
# the stretch changes none of them. Which rows are active is decided by the multipliers, and
# those do feel the units, through $\tfrac12\lVert w\rVert^2$; here R-SVM+ keeps its active
# rows, so its classifier cannot move. The plain SVM's active rows change: three points on
# its margin before the stretch, two others after. (With another $C$ or $\lambda$ R-SVM+'s
# active rows can change too, and then it moves a little: try $C = 0.5$.)

# %%
rsvm = sm.fit(X, y, formulation="rsvm_plus_primal", solver="clarabel", C=C, lam=LAM)


def angle(w):
    """The direction of the normal vector, in degrees."""
    return float(np.degrees(np.arctan2(w[1], w[0])))


rows = [("soft_l1_primal", plain.w, plain_s.w * STRETCH, plain.b, plain_s.b),
        ("rsvm_plus_primal", rsvm.w, rsvm_s.w * STRETCH, rsvm.b, rsvm_s.b)]
print(f"{'':17s} {'w (original fit)':>19s} {'w (stretched, back)':>20s} "
      f"{'angle':>7s} {'angle':>7s}")
for name, w0, w1, b0, b1 in rows:
    print(f"{name:17s} {np.array2string(w0, precision=5):>19s} "
          f"{np.array2string(w1, precision=5):>20s} {angle(w0):7.2f} {angle(w1):7.2f}")
turn_plain = abs(angle(plain.w) - angle(plain_s.w * STRETCH))
turn_rsvm = abs(angle(rsvm.w) - angle(rsvm_s.w * STRETCH))
print(f"the stretch turns the plain SVM by {turn_plain:.2f} degrees (b {plain.b:+.5f} -> "
      f"{plain_s.b:+.5f}), R-SVM+ by {turn_rsvm:.1e} (b {rsvm.b:+.7f} -> {rsvm_s.b:+.7f})")


def on_margin(sol):
    """The points with 0 < alpha_i < C: on the margin."""
    return [int(i) for i in sol.support if sol.alpha[i] < (1 - 1e-6) * C]


def at_radius(sol):
    """The pairs with beta_p > 0: at the radius."""
    return sol.pairs[sol.beta > 1e-6 * LAM].tolist()


print(f"plain SVM, points on the margin: {on_margin(plain)} before, {on_margin(plain_s)} after")
print(f"R-SVM+, points on the margin:    {on_margin(rsvm)} before, {on_margin(rsvm_s)} after; "
      f"pairs at the radius {at_radius(rsvm)} before, {at_radius(rsvm_s)} after")
print(f"R-SVM+, r = {rsvm.r:.8f} before, {rsvm_s.r:.8f} after")
assert on_margin(rsvm) == on_margin(rsvm_s) and at_radius(rsvm) == at_radius(rsvm_s)
assert on_margin(plain) != on_margin(plain_s)
assert turn_plain > 3.0
assert np.allclose(rsvm_s.w * STRETCH, rsvm.w, atol=1e-6) and abs(rsvm.b - rsvm_s.b) < 1e-6
assert abs(rsvm.r - rsvm_s.r) < 1e-6 * rsvm.r     # the radius term did not change

fig, ax = plt.subplots(figsize=(7, 6))
for c, colour, marker in zip(plain.classes, CLASS_COLOURS, ("o", "s")):
    ax.scatter(X[y == c, 0], X[y == c, 1], c=colour, marker=marker, s=26, label=f"class {c}")
u = np.linspace(X[:, 0].min() - 0.3, X[:, 0].max() + 0.3, 2)
styles = {"soft_l1_primal": "#7d3c98", "rsvm_plus_primal": "#117a65"}
for name, w0, w1, b0, b1 in rows:
    ax.plot(u, -(w0[0] * u + b0) / w0[1], "-", color=styles[name], lw=2,
            label=f"{name}, fitted on the data as they came")
    ax.plot(u, -(w1[0] * u + b1) / w1[1], "--", color=styles[name], lw=2,
            label=f"{name}, fitted stretched, drawn back")
ax.set_ylim(X[:, 1].min() - 0.5, X[:, 1].max() + 0.5)
ax.set_xlabel("x[0]")
ax.set_ylabel("x[1] (original units)")
ax.set_title("The boundaries f(x) = 0 in the original units\n"
             "(R-SVM+'s dashed line lies under its solid one)", fontsize=10)
ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Lemma 1: how far is $R_O$ from $R$?
#
# R-SVM+ uses $R_O$ in place of $R$ because the pair rows keep the problem convex. Lemma 1 of
# the appendix bounds what that costs:
#
# $$
# R_O \le R \le \frac{1 + \sqrt 3}{2}\, R_O \approx 1.366\, R_O .
# $$
#
# The lower bound always holds: the two farthest points lie in the ball, so its diameter is
# at least their distance. `sm.enclosing_ball_radius` gives $R$ (the ball's QP) and
# `sm.half_diameter` gives $R_O$. We check the lemma on the stretched data, and in the space
# where R-SVM+ measures its radius (feature $k$ multiplied by $|w_k|$).

# %%
BOUND = (1 + np.sqrt(3)) / 2
for what, Z in (("stretched data", Xs), ("R-SVM+'s space, |w| x", Xs * np.abs(rsvm_s.w))):
    R_z, R_O_z = sm.enclosing_ball_radius(Z), sm.half_diameter(Z)
    print(f"{what:22s}: R_O = {R_O_z:.6f} <= R = {R_z:.6f} <= {BOUND:.6f} R_O = "
          f"{BOUND * R_O_z:.6f}   (R / R_O = {R_z / R_O_z:.5f})")
    assert R_O_z <= R_z * (1 + 1e-9) and R_z <= BOUND * R_O_z

# %% [markdown]
# In the plane the upper bound is in fact loose: Jung's theorem gives
# $R \le \sqrt{2m/(m+1)}\, R_O$ in dimension $m$, which is $2/\sqrt 3 \approx 1.155$ for
# $m = 2$, attained by an equilateral triangle. But Jung's constant grows with the dimension
# towards $\sqrt 2$, and it passes $(1+\sqrt 3)/2$ at $m = 14$: the lemma's upper bound is
# **wrong** in general (its proof argues in the plane). The regular simplex on 15 points, the
# unit vectors of $\mathbb{R}^{15}$, is a counterexample; a kernel's feature space holds such
# point sets easily. More on the
# [family's page](../formulations/radius_margin.md#the-enclosing-ball-and-lemma-1).

# %%
E = np.eye(15)                                # 15 points, all at the same distance
R_E, R_O_E = sm.enclosing_ball_radius(E), sm.half_diameter(E)
print(f"regular simplex, 15 points: R_O = {R_O_E:.6f}, R = {R_E:.6f}, "
      f"R / R_O = {R_E / R_O_E:.6f} > (1+sqrt 3)/2 = {BOUND:.6f}")
assert abs(R_E / R_O_E - np.sqrt(2 * 14 / 15)) < 1e-6      # Jung's bound, attained
assert R_E > BOUND * R_O_E                                   # Lemma 1's upper bound fails

# %% [markdown]
# ## The dual reaches the same optimum
#
# The appendix states R-SVM+ through its dual: one multiplier $\alpha_i$ per margin row, one
# $\beta_p$ per pair row, and $t_k = 1 + \sum_p \beta_p (x_{ik} - x_{jk})^2$:
#
# $$
# \max_{\alpha,\,\beta}\ \sum_i \alpha_i - \tfrac12 \sum_k \frac{v_k^2}{t_k}
# \quad\text{s.t.}\quad v = X^\top D_y\,\alpha,\quad \sum_p \beta_p = \lambda,\quad
# y^\top\alpha = 0,\quad 0 \le \alpha \le C,\quad \beta \ge 0 .
# $$
#
# For fixed $t$ it is a plain SVM dual with the kernel $X \operatorname{diag}(1/t) X^\top$:
# the pairs reweight the features. Here it has $40 + 780$ multipliers, and $v_k^2 \le u_k t_k$
# is a rotated cone, so Clarabel takes it as a second-order cone program. Strong duality: the
# two objectives must agree, and so must $w$. The primal's pair multipliers sum to
# $\lambda$ (stationarity in $r$), and only a few pairs, the farthest ones as the classifier
# sees the data, carry any weight.

# %%
dual = sm.fit(Xs, y, formulation="rsvm_plus_dual", solver="clarabel", C=C, lam=LAM)
gap = abs(rsvm_s.objective - dual.objective) / max(1.0, abs(rsvm_s.objective))
print(f"primal objective {rsvm_s.objective:.9f}")
print(f"dual objective   {dual.objective:.9f}   relative difference {gap:.1e}")
print(f"w primal {np.array2string(rsvm_s.w, precision=7)}, "
      f"dual {np.array2string(dual.w, precision=7)}")
active = rsvm_s.beta > 1e-6 * LAM
print(f"sum of beta = {rsvm_s.beta.sum():.8f} (lambda = {LAM}); pairs with beta > 0: "
      f"{rsvm_s.pairs[active].tolist()}")
assert gap <= 1e-6
assert np.allclose(rsvm_s.w, dual.w, atol=1e-5)
assert abs(rsvm_s.beta.sum() - LAM) <= 1e-6

# %% [markdown]
# ## What to take away
#
# * The margin has units; the radius-margin ratio $R^2/\rho^2$ has none. A learner that may
#   rescale the features must pay for the radius as well as reward the margin.
# * R-SVM+ measures the radius with the classifier's own weights, which makes its radius term
#   blind to the units of each feature. Here its classifier did not move at all when a feature
#   was stretched (rows the stretch leaves alone pinned it), while the plain SVM turned.
# * The convex forms replace $R$ by $R_O$, and $R_O \le R$ always. The appendix's
#   $R \le \tfrac{1+\sqrt 3}{2} R_O$ holds in the plane (and up to dimension 13) but not
#   beyond; the correct factor is Jung's, below $\sqrt 2$.
# * Primal (a QCQP) and dual (an SOCP) reach the same optimum. The $O(l^2)$ pair rows are the
#   cost: for larger $l$, `pairs="generate"` adds only the pairs that bind.

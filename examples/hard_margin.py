# %% [markdown]
# # The hard margin
#
# Two classes of points in the plane that a straight line can separate. Of all the lines that
# separate them, the hard-margin support vector machine picks the one that stays as far as
# possible from the nearest point of either class: the *maximal-margin hyperplane*. Finding it
# is a convex quadratic programme with one linear constraint per point.
#
# This page states that programme, builds it as a Pyomo model with `svm_models`, looks at the
# model's components, solves it, and checks the three facts a student should take away:
#
# 1. the margin is $1/\lVert w\rVert$ on each side of the hyperplane, $2/\lVert w\rVert$ in all,
#    and no other direction does better;
# 2. the solution is decided by a few points only, the *support vectors*, which lie exactly on
#    the margin: $y_i f(x_i) = 1$;
# 3. the dual programme gives the same $w$ and $b$.
#
# Finally it shows what happens when no separating line exists.

# %%
import matplotlib.pyplot as plt
import numpy as np

import svm_models as sm
from svm_models.datasets import teaching_2d
from svm_models.plots import decision_boundary

SOLVER = "piqp"          # any QP backend: "clarabel", "highs", "gurobi", ...

# %% [markdown]
# ## The data
#
# Thirty points from two Gaussian clouds, labels $y_i \in \{-1, +1\}$. The clouds are far
# enough apart for a separating line to exist.

# %%
X, y = teaching_2d(30, separation=3.0, seed=1)
print(f"{len(y)} points, {np.sum(y == 1)} in class +1 and {np.sum(y == -1)} in class -1")

fig, ax = plt.subplots(figsize=(5.5, 4.5))
ax.scatter(*X[y == 1].T, c="#c0392b", marker="s", label="class +1")
ax.scatter(*X[y == -1].T, c="#1f5fa8", marker="o", label="class -1")
ax.set_xlabel("x[0]")
ax.set_ylabel("x[1]")
ax.set_aspect("equal")
ax.legend()
ax.set_title("Separable data")
plt.show()

# %% [markdown]
# ## The maximal-margin hyperplane as a quadratic programme
#
# A hyperplane $w^\top x + b = 0$ classifies $x$ by the sign of $f(x) = w^\top x + b$. The
# distance of a point $x_i$ from it is $|f(x_i)|/\lVert w\rVert$, and the point is on the
# right side when $y_i f(x_i) > 0$. Scaling $w$ and $b$ by the same positive number changes
# neither the hyperplane nor the distances, so we may fix the scale by asking that the nearest
# points have $y_i f(x_i) = 1$. Then every point keeps $y_i f(x_i) \ge 1$, the nearest points
# are $1/\lVert w\rVert$ away, and making that distance as large as possible means making
# $\lVert w\rVert$ as small as possible:
#
# $$
# \min_{w,\,b}\ \tfrac12 \lVert w\rVert^2
# \quad\text{s.t.}\quad y_i\,(w^\top x_i + b) \ge 1 \qquad (i = 1,\dots,l).
# $$
#
# A strictly convex quadratic objective over a polyhedron: a QP with a unique $w$. This is the
# formulation [hard_primal](../formulations/hard_primal.md). The two hyperplanes
# $f(x) = \pm 1$ bound the *margin*, a band of width $2/\lVert w\rVert$ with no point inside.

# %% [markdown]
# ## The model, component by component
#
# `sm.build` writes the programme as a Pyomo `ConcreteModel` without solving it. Its
# components carry the names of the mathematics: the variables `w` (indexed by the features)
# and `b`, one constraint `margin[i]` per point, and the objective.

# %%
m = sm.build("hard_primal", X, y)
print(type(m).__name__, "with components:",
      [c.local_name for c in m.component_objects(descend_into=False)])
m.w.pprint()
m.b.pprint()
print(f"\n{len(m.margin)} margin rows, the first three:")
for i in range(3):
    print(f"  margin[{i}]  (y = {int(m.y[i]):+d}):  {m.margin[i].expr}")
print("objective:", m.objective.expr, f"({m.objective.sense})")

# %% [markdown]
# A point of class $-1$ gives a row $1 \le -\big(w^\top x_i + b\big)$: the label flips the
# sign. Nothing is solved yet (the variables have the value 0). `sm.solve` sends the model
# to a QP solver and reads the answer back into the variables and into a `Solution`.

# %%
sol = sm.solve(m, solver=SOLVER)
w, b = sol.w, sol.b
norm_w = np.linalg.norm(w)
print(f"status {sol.status}, solver {sol.solver}")
print(f"w = {np.round(w, 6)}, b = {b:.6f}, ||w|| = {norm_w:.6f}")
print(f"objective ||w||^2/2 = {sol.objective:.6f}")
print(f"margin on each side 1/||w|| = {1 / norm_w:.6f} (sol.margin = {sol.margin:.6f}); "
      f"width of the band 2/||w|| = {2 / norm_w:.6f}")
print("the model's own variables:", [round(m.w[j].value, 6) for j in m.J], round(m.b.value, 6))
assert abs(sol.objective - 0.5 * norm_w**2) < 1e-8 * max(1.0, sol.objective)
assert abs(sol.margin - 1 / norm_w) < 1e-12

# %% [markdown]
# In the figure, the solid line is $f(x) = 0$ and the dashed lines are $f(x) = \pm 1$. The
# arrow across the band, along $w$, has length $2/\lVert w\rVert$. Circled points are the
# support vectors.

# %%
fig, ax = plt.subplots(figsize=(6.8, 5.8))
decision_boundary(sol, X, y, ax=ax)
centre = X.mean(axis=0)
foot = centre - sol.decision_function(centre[None, :])[0] * w / norm_w**2   # f(foot) = 0
lo, hi = foot - w / norm_w**2, foot + w / norm_w**2                        # f = -1 and f = +1
ax.annotate("", xy=hi, xytext=lo, arrowprops=dict(arrowstyle="<->", lw=1.5, color="k"))
ax.annotate(f"2/||w|| = {2 / norm_w:.3f}", xy=foot, xytext=(0, -30), textcoords="offset points",
            fontsize=10, ha="center", va="top", bbox=dict(boxstyle="round", fc="white", ec="0.6"))
ax.set_aspect("equal")
plt.show()
assert abs(np.linalg.norm(hi - lo) - 2 / norm_w) < 1e-12

# %% [markdown]
# ## The support vectors lie on the margin
#
# At the optimum each point has $y_i f(x_i) \ge 1$. The points with $y_i f(x_i) = 1$ are the
# ones whose constraints are active: they are on the dashed lines. The Karush-Kuhn-Tucker
# conditions say that only these points can have a positive multiplier $\alpha_i$, and
# $w = \sum_i \alpha_i y_i x_i$. So only these points decide the solution: move any other
# point a little (without crossing the margin) and $w$, $b$ stay the same.

# %%
yf = y * sol.decision_function(X)
on_margin = np.flatnonzero(np.abs(yf - 1) < 1e-6)
print("y_i f(x_i), sorted:", np.round(np.sort(yf), 4))
print("points with y_i f(x_i) = 1:", on_margin.tolist(), "  support vectors:", sol.support.tolist())
print("their multipliers alpha:", np.round(sol.alpha[sol.support], 6))
print(f"smallest y_i f(x_i) off the margin: {np.min(np.delete(yf, on_margin)):.4f}")
assert np.all(yf >= 1 - 1e-7)                              # every constraint holds
assert set(on_margin) == set(sol.support)                  # support vectors = on the margin
assert np.allclose(w, X.T @ (sol.alpha * y), atol=1e-7)    # w = sum_i alpha_i y_i x_i

# %% [markdown]
# ## No other direction gives a wider margin
#
# An independent check, without any solver. For a unit normal
# $u(\theta) = (\cos\theta, \sin\theta)$, the widest band with that normal that separates the
# classes has half-width
#
# $$
# \gamma(\theta) = \tfrac12\Big(\min_{y_i = +1} u^\top x_i - \max_{y_i = -1} u^\top x_i\Big).
# $$
#
# Its maximum over $\theta$ should be $1/\lVert w\rVert$, reached at the angle of $w$.

# %%
theta = np.linspace(-np.pi, np.pi, 7201)
U = np.column_stack([np.cos(theta), np.sin(theta)])
P = X @ U.T                                                    # projections, one column per angle
gamma = 0.5 * (P[y == 1].min(axis=0) - P[y == -1].max(axis=0))
best = np.argmax(gamma)
angle_w = np.arctan2(w[1], w[0])
print(f"max over theta of gamma = {gamma[best]:.6f} at {np.degrees(theta[best]):.2f} deg; "
      f"1/||w|| = {1 / norm_w:.6f} at {np.degrees(angle_w):.2f} deg")
assert gamma.max() <= 1 / norm_w + 1e-9
assert gamma.max() >= 1 / norm_w - 1e-4 and abs(theta[best] - angle_w) < 2e-3

fig, ax = plt.subplots(figsize=(6.4, 3.6))
ax.plot(np.degrees(theta), gamma, lw=1.2, label="half-width gamma(theta)")
ax.axhline(1 / norm_w, color="0.4", ls="--", lw=1, label="1/||w|| from the QP")
ax.axvline(np.degrees(angle_w), color="#c0392b", ls=":", lw=1.2, label="angle of w")
ax.set_xlim(np.degrees(angle_w) - 100, np.degrees(angle_w) + 100)
ax.set_ylim(-1.5 / norm_w, 1.4 / norm_w)
ax.set_xlabel("theta (degrees)")
ax.set_ylabel("gamma(theta)")
ax.legend(fontsize=8, loc="lower left")
ax.set_title("Margin of the best band with normal u(theta)")
plt.show()

# %% [markdown]
# Where $\gamma(\theta) < 0$ no line with that normal separates the classes at all.

# %% [markdown]
# ## The dual gives the same hyperplane
#
# The Lagrange dual of the QP has one variable per point, the multiplier $\alpha_i$ of its
# margin row:
#
# $$
# \max_{\alpha}\ \sum_i \alpha_i - \tfrac12 \sum_{i,j} \alpha_i \alpha_j y_i y_j\, x_i^\top x_j
# \quad\text{s.t.}\quad \alpha \ge 0,\quad \sum_i y_i \alpha_i = 0,
# $$
#
# the formulation [hard_dual](../formulations/hard_dual.md). From its solution,
# $w = \sum_i \alpha_i y_i x_i$ and $b$ follows from any support vector,
# $b = y_i - w^\top x_i$. Strong duality holds for a convex QP: both optima are equal, and so
# are $w$ and $b$. We compare the dual's $w$ and $b$ with the values the solver left in the
# primal model's own variables `m.w` and `m.b`.

# %%
dual = sm.fit(X, y, formulation="hard_dual", solver=SOLVER)
w_model = np.array([m.w[j].value for j in m.J])
print(f"primal (model variables): w = {np.round(w_model, 6)}, b = {m.b.value:.6f}, "
      f"objective {sol.objective:.6f}")
print(f"dual:                     w = {np.round(dual.w, 6)}, b = {dual.b:.6f}, "
      f"objective {dual.objective:.6f}")
print(f"|w difference| = {np.max(np.abs(w_model - dual.w)):.1e}, "
      f"|b difference| = {abs(m.b.value - dual.b):.1e}, "
      f"objective difference = {abs(sol.objective - dual.objective):.1e}")
print("dual alpha on the support vectors:", np.round(dual.alpha[dual.support], 6),
      " sum_i y_i alpha_i =", f"{y @ dual.alpha:.1e}")
assert np.allclose(w_model, dual.w, atol=1e-5) and abs(m.b.value - dual.b) < 1e-5
assert abs(sol.objective - dual.objective) < 1e-6 * max(1.0, sol.objective)
assert set(dual.support) == set(sol.support)
assert abs(y @ dual.alpha) < 1e-7

# %% [markdown]
# The dual's objective at the optimum is $\sum_i \alpha_i - \tfrac12\lVert w\rVert^2$, and it
# equals $\tfrac12\lVert w\rVert^2$; hence $\sum_i \alpha_i = \lVert w\rVert^2$, one more
# identity to check.

# %%
print(f"sum alpha = {dual.alpha.sum():.6f}, ||w||^2 = {norm_w**2:.6f}")
assert abs(dual.alpha.sum() - norm_w**2) < 1e-5 * norm_w**2

# %% [markdown]
# ## When the data are not separable
#
# Add one point of class $-1$ in the middle of the other class. Now no line separates the
# classes: the primal's constraints cannot all hold (the QP is infeasible) and the dual is
# unbounded. `svm_models` does not return a meaningless $w$: it raises
# `sm.NotSeparableError`, with the solver's verdict in the message.

# %%
X_bad = np.vstack([X, X[y == 1].mean(axis=0)])
y_bad = np.append(y, -1)

fig, ax = plt.subplots(figsize=(5.5, 4.5))
ax.scatter(*X_bad[y_bad == 1].T, c="#c0392b", marker="s", label="class +1")
ax.scatter(*X_bad[y_bad == -1].T, c="#1f5fa8", marker="o", label="class -1")
ax.scatter(*X_bad[-1], s=200, facecolors="none", edgecolors="k", label="the added point")
ax.set_xlabel("x[0]")
ax.set_ylabel("x[1]")
ax.set_aspect("equal")
ax.legend(fontsize=8)
ax.set_title("One point too many: no separating line")
plt.show()

# %%
for name in ("hard_primal", "hard_dual"):
    try:
        sm.fit(X_bad, y_bad, formulation=name, solver=SOLVER)
    except sm.NotSeparableError as err:
        print(f"{name}: NotSeparableError\n  {err}\n")
    else:
        raise AssertionError(f"{name} solved data that no line separates")

# %% [markdown]
# The message names the way out: let some points violate the margin at a price. That is the
# soft margin, the subject of [1-norm and 2-norm soft margins](soft_margins.ipynb).

# %% [markdown]
# # Primal and dual side by side
#
# The three classic support vector machines -- the hard margin, the 1-norm soft margin and the
# 2-norm soft margin -- are each one optimisation problem that can be written two ways: the
# *primal*, over the hyperplane $(w, b)$ and the slacks $\xi$, and the Lagrange *dual*, over
# one multiplier $\alpha_i$ per point. Each family is a convex quadratic programme with linear
# constraints, so strong duality holds: both forms reach the same optimum, and the same $w$
# and $b$. This page solves all six on the same data and shows:
#
# - primal and dual agree, family by family (same objective, $w$, $b$, support vectors);
# - the dual's multipliers tell where each point lies: for the 1-norm soft margin
#   $\alpha_i = 0$ outside the margin, $0 \le \alpha_i \le C$ on it and $\alpha_i = C$ inside
#   it (complementary slackness);
# - how the families differ: the hard margin allows no slack and leans on the fewest points;
#   the 1-norm soft margin caps every $\alpha_i$ at $C$; the 2-norm soft margin has no cap but
#   pays $\xi_i^2$, so $\xi_i = \alpha_i / C$ and points inside the margin keep growing
#   $\alpha_i$ instead.
#
# The data: two seeded Gaussian clouds in the plane (`svm_models.datasets.teaching_2d`),
# separable (so the hard margin exists) but with points close enough for the soft margins to
# take slack at $C = 1$. The pages [The hard margin](hard_margin.ipynb) and
# [1-norm and 2-norm soft margins](soft_margins.ipynb) introduce the models one at a time.

# %%
import matplotlib.pyplot as plt
import numpy as np

import svm_models as sm
from svm_models.datasets import teaching_2d
from svm_models.plots import decision_boundary

FAMILIES = ("hard", "soft_l1", "soft_l2")

# %% [markdown]
# ## Six problems, three pairs
#
# With $G_{ij} = y_i y_j\, x_i^\top x_j$ and $e$ the vector of ones:
#
# | family | primal | dual |
# |---|---|---|
# | hard margin | $\min \tfrac12\lVert w\rVert^2$ s.t. $y_i(w^\top x_i + b) \ge 1$ | $\max e^\top\alpha - \tfrac12\alpha^\top G\alpha$ s.t. $\alpha \ge 0$, $y^\top\alpha = 0$ |
# | 1-norm soft margin | $\min \tfrac12\lVert w\rVert^2 + C\sum_i \xi_i$ s.t. $y_i(w^\top x_i + b) \ge 1 - \xi_i$, $\xi \ge 0$ | $\max e^\top\alpha - \tfrac12\alpha^\top G\alpha$ s.t. $0 \le \alpha \le C$, $y^\top\alpha = 0$ |
# | 2-norm soft margin | $\min \tfrac12\lVert w\rVert^2 + \tfrac{C}{2}\sum_i \xi_i^2$ s.t. $y_i(w^\top x_i + b) \ge 1 - \xi_i$ | $\max e^\top\alpha - \tfrac12\alpha^\top (G + I/C)\alpha$ s.t. $\alpha \ge 0$, $y^\top\alpha = 0$ |
#
# The catalogue pages: [hard_primal](../formulations/hard_primal.md),
# [hard_dual](../formulations/hard_dual.md),
# [soft_l1_primal](../formulations/soft_l1_primal.md),
# [soft_l1_dual](../formulations/soft_l1_dual.md),
# [soft_l2_primal](../formulations/soft_l2_primal.md),
# [soft_l2_dual](../formulations/soft_l2_dual.md).
# In every family the stationarity condition of the Lagrangian in $w$ links the two forms,
#
# $$
# w = \sum_{i=1}^{l} \alpha_i y_i x_i ,
# $$
#
# so the dual's $\alpha$ gives the primal's $w$, and the primal's constraint multipliers are
# the dual's $\alpha$.

# %% [markdown]
# ## Fitting the six
#
# `main` fits the six formulations with one solver and prints a table: objective, $w$, $b$,
# the number of support vectors, the largest $\alpha_i$, the sum of the slacks and the support
# vectors themselves; then, family by family, how far primal and dual are apart. (The test
# suite calls it with `quick=True`, on 20 points.)


# %%
def data(quick: bool = False):
    """The page's data: 60 points (20 with ``quick``) from two seeded clouds."""
    return teaching_2d(20 if quick else 60, separation=2.5)


def main(quick: bool = False, solver: str = "highs", C: float = 1.0) -> dict:
    """Fit the six classic formulations; return ``{name: Solution}``."""
    X, y = data(quick)
    print(f"{len(y)} points in 2-D, solver {solver}, C = {C} for the soft margins\n")
    print(f"{'formulation':15s} {'objective':>12s} {'w':>22s} {'b':>9s} {'#SV':>4s} "
          f"{'max alpha':>9s} {'sum xi':>8s}  support vectors")
    sols = {}
    for family in FAMILIES:
        for form in ("primal", "dual"):
            name = f"{family}_{form}"
            kw = {} if family == "hard" else {"C": C}
            s = sm.fit(X, y, formulation=name, solver=solver, **kw)
            sols[name] = s
            w = np.array2string(s.w, precision=5, floatmode="fixed")
            print(f"{name:15s} {s.objective:12.7f} {w:>22s} {s.b:+9.5f} {s.n_support:4d} "
                  f"{s.alpha.max():9.5f} {s.xi.sum():8.5f}  {s.support.tolist()}")
    print("\nprimal vs dual, per family (strong duality: all differences ~ solver tolerance)")
    for family in FAMILIES:
        p, d = sols[f"{family}_primal"], sols[f"{family}_dual"]
        print(f"  {family:8s} |objective| diff {abs(p.objective - d.objective):.1e}   "
              f"||w|| diff {np.linalg.norm(p.w - d.w):.1e}   |b| diff {abs(p.b - d.b):.1e}   "
              f"same support: {set(p.support) == set(d.support)}")
    l1, l2 = sols["soft_l1_dual"], sols["soft_l2_dual"]
    at_C = int(np.sum(np.isclose(l1.alpha, C)))
    print(f"\n1-norm: {at_C} of its {l1.n_support} support vectors sit at the cap alpha = C.")
    xi_p = sols["soft_l2_primal"].xi
    print(f"2-norm: the primal's slacks xi equal the dual's alpha / C to "
          f"{np.max(np.abs(xi_p - l2.alpha / C)):.1e}; "
          f"margin 1/||w|| = {l2.margin:.4f} (1-norm {l1.margin:.4f}, hard "
          f"{sols['hard_dual'].margin:.4f}).")
    return sols


# %% [markdown]
# The page's values: 60 points, the HiGHS solver, $C = 1$.

# %%
SOLVER, C = "highs", 1.0
X, y = data()
sols = main(quick=False, solver=SOLVER, C=C)

# %% [markdown]
# ## The same w and b from primal and dual
#
# The table shows the solutions after post-processing, which may polish a primal's $w$ and
# $b$ from its multipliers. For a check that does not lean on that, we also build each primal
# with `sm.build`, solve it, and read the values the solver left in the model's own variables
# `w` and `b`. All three must agree with the dual's $w = \sum_i \alpha_i y_i x_i$ and its $b$
# (computed from the KKT conditions) to $10^{-5}$, and the objectives must be equal.

# %%
print(f"{'family':8s} {'|w_primal - w_dual|':>20s} {'|b_primal - b_dual|':>20s} "
      f"{'model w vs dual':>16s} {'model b vs dual':>16s} {'objective gap':>14s}")
for family in FAMILIES:
    p, d = sols[f"{family}_primal"], sols[f"{family}_dual"]
    m = sm.build(f"{family}_primal", X, y, **({} if family == "hard" else {"C": C}))
    sm.solve(m, solver=SOLVER)
    w_model = np.array([m.w[j].value for j in m.J])
    rows = (np.max(np.abs(p.w - d.w)), abs(p.b - d.b), np.max(np.abs(w_model - d.w)),
            abs(m.b.value - d.b), abs(p.objective - d.objective))
    print(f"{family:8s} {rows[0]:20.1e} {rows[1]:20.1e} {rows[2]:16.1e} {rows[3]:16.1e} "
          f"{rows[4]:14.1e}")
    assert np.allclose(d.w, X.T @ (d.alpha * y), atol=1e-8)        # w = sum_i alpha_i y_i x_i
    assert rows[0] < 1e-5 and rows[1] < 1e-5 and rows[2] < 1e-5 and rows[3] < 1e-5
    assert rows[4] < 1e-6 * max(1.0, abs(p.objective))
    assert set(p.support) == set(d.support)

# %% [markdown]
# ## The multipliers and the margin: complementary slackness
#
# For the 1-norm soft margin the KKT conditions split the points in three by their margin
# $y_i f(x_i)$, with $f(x) = w^\top x + b$:
#
# - $y_i f(x_i) > 1$, outside the margin: the constraint is slack, so $\alpha_i = 0$;
# - $y_i f(x_i) = 1$, on the margin: $0 \le \alpha_i \le C$ (the free support vectors, from
#   which $b$ is computed);
# - $y_i f(x_i) < 1$, inside the margin or on the wrong side: $\xi_i = 1 - y_i f(x_i) > 0$, so
#   the multiplier of $\xi_i \ge 0$ vanishes and $\alpha_i = C$.
#
# The 2-norm soft margin has no box: there $\xi_i = \alpha_i / C$ gives
# $\alpha_i = C\,(1 - y_i f(x_i))$ for every point with $y_i f(x_i) < 1$, a straight line.
# The left panel is the 1-norm, the right one the 2-norm; each dot is one point.

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
colours = np.where(y > 0, "#c0392b", "#1f5fa8")
for ax, name in zip(axes, ("soft_l1_dual", "soft_l2_dual")):
    s = sols[name]
    yf = y * s.decision_function(X)
    ax.axvspan(yf.min() - 0.2, 1, color="#f4d03f", alpha=0.15, label="inside the margin, y f < 1")
    ax.axvline(1, color="k", lw=1, label="on the margin, y f = 1")
    ax.axhline(C, color="0.4", ls="--", lw=1, label="alpha = C")
    ax.scatter(yf, s.alpha, s=28, c=colours, zorder=3)
    ax.set_xlim(yf.min() - 0.2, min(yf.max(), 6) + 0.2)
    ax.set_xlabel("margin y_i f(x_i)")
    ax.set_ylabel("alpha_i")
    ax.set_title(f"{name}, C = {C}")
t = np.linspace(axes[1].get_xlim()[0], 1, 2)
axes[1].plot(t, C * (1 - t), color="#6c3483", lw=1, label="alpha = C (1 - y f)")
for ax in axes:
    ax.legend(fontsize=8, loc="center right")
fig.tight_layout()
plt.show()

# %% [markdown]
# The same statements, checked to a tolerance (relative to $C$ for $\alpha$):

# %%
tol = 1e-6
s = sols["soft_l1_dual"]
yf = y * s.decision_function(X)
outside, on, inside = yf > 1 + tol, np.abs(yf - 1) <= tol, yf < 1 - tol
print(f"1-norm, C = {C}: {outside.sum()} points outside the margin, {on.sum()} on it, "
      f"{inside.sum()} inside")
print(f"  outside: max alpha = {s.alpha[outside].max():.1e}")
print(f"  on the margin: alpha = {np.round(s.alpha[on], 6)}")
print(f"  inside: alpha = {np.round(s.alpha[inside], 6)}")
assert np.all(s.alpha >= -tol * C) and np.all(s.alpha <= C + tol * C)
assert np.all(s.alpha[outside] <= tol * C)
assert np.all(np.abs(s.alpha[inside] - C) <= tol * C)
s2 = sols["soft_l2_dual"]
yf2 = y * s2.decision_function(X)
short = yf2 < 1 - tol
err2 = np.max(np.abs(s2.alpha[short] - C * (1 - yf2[short])))
print(f"2-norm: max |alpha - C (1 - y f)| over the {short.sum()} points with y f < 1: {err2:.1e}; "
      f"max alpha over the others: {s2.alpha[~short].max():.1e}")
assert err2 < 1e-5 and np.all(s2.alpha[~short] <= tol)

# %% [markdown]
# ## The decision boundary of primal and dual
#
# Each row is one family, primal on the left and dual on the right. The two pictures of a row
# are the same: same boundary $f(x) = 0$, same margins $f(x) = \pm 1$, same circled support
# vectors, same objective in the title. Down the column, the margin widens from the hard
# margin (no slack) to the 1-norm and the 2-norm soft margins, and the number of support
# vectors grows.

# %%
fig, axes = plt.subplots(3, 2, figsize=(12, 15.5))
for row, family in zip(axes, FAMILIES):
    for ax, form in zip(row, ("primal", "dual")):
        decision_boundary(sols[f"{family}_{form}"], X, y, ax=ax)
fig.tight_layout()
plt.show()

# %% [markdown]
# The margins $1/\lVert w\rVert$ in the figure, in numbers:

# %%
for family in FAMILIES:
    p, d = sols[f"{family}_primal"], sols[f"{family}_dual"]
    print(f"{family:8s} margin primal {p.margin:.6f}  dual {d.margin:.6f}  "
          f"support vectors {p.n_support}")
    assert abs(p.margin - d.margin) < 1e-6
assert sols["hard_dual"].margin < sols["soft_l1_dual"].margin < sols["soft_l2_dual"].margin
assert sols["hard_dual"].n_support < sols["soft_l1_dual"].n_support < sols["soft_l2_dual"].n_support

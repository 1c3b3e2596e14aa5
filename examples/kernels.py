# %% [markdown]
# # Kernels
#
# A support vector machine draws a straight line (a hyperplane) between two classes. Some
# data no line separates well. This page takes such data, four clouds in the plane arranged
# like the XOR truth table, and fits the same optimisation model to it three times: the
# 1-norm soft-margin dual [soft_l1_dual](../formulations/soft_l1_dual.md), with the linear,
# the polynomial and the Gaussian (rbf) kernel. Only one matrix of the model changes between
# the three fits.
#
# What to take away:
#
# - the dual of the SVM touches the data only through inner products $x_i^\top x_j$, so any
#   kernel $k(x_i, x_j)$ can take their place (the *kernel trick*);
# - the model stays the same convex quadratic programme; what the kernel changes is the shape
#   of the boundary;
# - every answer is checked against scikit-learn's `SVC` (libsvm), which solves the same
#   problem by a different algorithm.

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import SVC

import svm_models as sm
from svm_models.plots import decision_boundary

SOLVER = "piqp"      # a fast interior-point QP solver; "clarabel" or "highs" do as well
C = 1.0              # the box 0 <= alpha_i <= C of the 1-norm soft margin

# %% [markdown]
# ## Data no line separates
#
# Sixty points, fifteen around each corner of the square $(\pm 1, \pm 1)$. The label is the
# sign of $x_1 x_2$: class $+1$ in the first and third quadrants, class $-1$ in the second and
# fourth. Whichever way a straight line runs, it leaves a large share of the points on the
# wrong side. A second seeded sample of 400 points from the same clouds serves as test data.

# %%
CORNERS = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])
LABELS = np.array([1, 1, -1, -1])


def xor_clouds(n, seed, spread=0.45):
    """n points around the four corners (in turn), labelled by the sign of x1 * x2."""
    rng = np.random.default_rng(seed)
    corner = np.arange(n) % 4
    return CORNERS[corner] + spread * rng.standard_normal((n, 2)), LABELS[corner]


X, y = xor_clouds(60, seed=0)
X_test, y_test = xor_clouds(400, seed=1)
print(f"{len(y)} training points ({np.sum(y == 1)} of class +1), {len(y_test)} test points")

# %% [markdown]
# ## The dual needs only inner products
#
# The 1-norm soft-margin SVM, in its dual form, is the quadratic programme
#
# $$
# \max_{\alpha}\ \sum_{i=1}^{l} \alpha_i - \tfrac12 \sum_{i=1}^{l}\sum_{j=1}^{l}
#   \alpha_i \alpha_j y_i y_j K_{ij}
# \quad\text{s.t.}\quad 0 \le \alpha_i \le C,\quad \sum_{i=1}^{l} y_i \alpha_i = 0,
# $$
#
# and the classifier it gives is
#
# $$
# f(x) = \sum_{i=1}^{l} \alpha_i y_i \, k(x_i, x) + b, \qquad
# \text{class } \operatorname{sign} f(x).
# $$
#
# With the linear kernel, $K_{ij} = x_i^\top x_j$ and $f(x) = w^\top x + b$ with
# $w = \sum_i \alpha_i y_i x_i$. Nothing else in the problem looks at the points. So if we map
# each point to features $\varphi(x)$ and fit a linear SVM there, all we need is
# $K_{ij} = k(x_i, x_j) = \varphi(x_i)^\top \varphi(x_j)$, and a kernel function computes it
# without ever forming $\varphi$. The three kernels used here, with scikit-learn's names for
# the parameters:
#
# | kernel | $k(x, z)$ | here |
# |---|---|---|
# | linear | $x^\top z$ | |
# | poly | $(\gamma\, x^\top z + c_0)^d$ | $\gamma = 1$, $c_0 = 1$, $d = 2$ |
# | rbf | $\exp(-\gamma \lVert x - z \rVert^2)$ | $\gamma = 1$ |
#
# Each gives a positive semidefinite matrix $K$, so the dual stays a convex QP. The degree-2
# polynomial kernel contains the product $x_1 x_2$ among its features, which is exactly the
# quantity whose sign defines the classes here. The rbf kernel corresponds to infinitely many
# features; only $K$ is ever computed.

# %%
KERNELS = {
    "linear": {},
    "poly": {"degree": 2, "gamma": 1.0, "coef0": 1.0},
    "rbf": {"gamma": 1.0},
}

# %% [markdown]
# ## One model, three kernels
#
# `sm.fit` builds the dual with the kernel's Gram matrix and solves it. The same call, only
# `kernel=` (and its parameters) changes.

# %%
sols = {name: sm.fit(X, y, formulation="soft_l1_dual", solver=SOLVER, C=C, kernel=name, **kw)
        for name, kw in KERNELS.items()}

fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.9))
for ax, (name, sol) in zip(axes, sols.items()):
    decision_boundary(sol, X, y, ax=ax)
    ax.set_title(f"{name} kernel: training accuracy {sol.score(X, y):.3f}, "
                 f"{sol.n_support} support vectors", fontsize=8)
fig.subplots_adjust(left=0.05, right=0.99, wspace=0.2)
plt.show()

# %% [markdown]
# What to look at. The solid line is the boundary $f(x) = 0$, the dashed lines the margins
# $f(x) = \pm 1$, and the circled points the support vectors, those with $\alpha_i > 0$.
#
# - **Linear.** The line the model finds leaves one cloud almost entirely on the wrong side,
#   and the margin is wide enough to hold nearly all points. Almost every point is a support
#   vector, most of them with $\alpha_i = C$ (the column "at C" below): the slack variables
#   carry the problem.
# - **Polynomial, degree 2.** $f$ is a quadratic function of $x$, so the boundary is a conic
#   section: here a hyperbola hugging the two axes, close to the curves $x_1 x_2 = \text{const}$.
#   Few support vectors are needed.
# - **rbf.** The boundary bends between the clouds, and the margins $f = \pm 1$ close around
#   each cloud; far from the data, where the model has seen nothing, $f$ decays to $b$.

# %% [markdown]
# ## Check against scikit-learn's SVC
#
# libsvm solves the same dual (by sequential minimal optimisation, not by an interior-point
# method). With the same $C$ and the same kernel parameters, the two decision functions must
# agree at every point, training and test, up to the solvers' tolerances; so must the
# accuracy and the number of support vectors.

# %%
print(f"{'kernel':7s} {'train acc':>9s} {'test acc':>8s} {'#SV':>4s} {'at C':>5s} {'#SV SVC':>7s} "
      f"{'max |f - f_SVC|':>15s}")
for name, sol in sols.items():
    svc = SVC(kernel=name, C=C, tol=1e-10, **KERNELS[name]).fit(X, y)
    both = np.vstack([X, X_test])
    gap = np.max(np.abs(sol.decision_function(both) - svc.decision_function(both)))
    print(f"{name:7s} {sol.score(X, y):9.3f} {sol.score(X_test, y_test):8.3f} "
          f"{sol.n_support:4d} {np.sum(sol.alpha >= C * (1 - 1e-6)):5d} {len(svc.support_):7d} "
          f"{gap:15.2e}")
    assert gap <= 1e-5, (name, gap)
    assert sol.score(X, y) == svc.score(X, y)
    assert sol.n_support == len(svc.support_)
    assert 0 <= sol.alpha.min() and sol.alpha.max() <= C * (1 + 1e-9)   # the box
    assert abs(sol.alpha @ y) <= 1e-8                                  # the balance row
assert sols["linear"].score(X, y) < 0.8 < 0.95 < sols["poly"].score(X, y)
assert sols["rbf"].score(X, y) > 0.95
at_C = np.sum(sols["linear"].alpha >= C * (1 - 1e-6))
assert at_C > sols["linear"].n_support / 2       # the linear kernel: most alphas at the box

# %% [markdown]
# The linear kernel stays far from the other two, on the training points and on the test
# points: no choice of $C$ repairs a model that can only draw lines.
#
# ## The kernel trick, by hand
#
# Two checks of the formulas above, in plain numpy.
#
# **The expansion of $f$.** `Solution.dual_coef` holds $\alpha_i y_i$. Summing
# $\alpha_i y_i \exp(-\gamma \lVert x_i - x\rVert^2)$ over the training points and adding $b$
# must give the rbf model's decision function at new points.
#
# **The features behind a kernel.** For $k(x, z) = (x^\top z + 1)^2$ in the plane, expanding
# the square gives $k(x, z) = \varphi(x)^\top \varphi(z)$ with six features
#
# $$
# \varphi(x) = \bigl(1,\ \sqrt2\, x_1,\ \sqrt2\, x_2,\ x_1^2,\ x_2^2,\ \sqrt2\, x_1 x_2\bigr).
# $$
#
# So the linear SVM fitted to the six features $\varphi(x_i)$ has the same Gram matrix, hence
# the same dual and the same $f$, as the polynomial SVM fitted to the two original
# coordinates.

# %%
rbf = sols["rbf"]
sq_dist = ((X_test[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
f_by_hand = np.exp(-KERNELS["rbf"]["gamma"] * sq_dist) @ rbf.dual_coef + rbf.b
np.testing.assert_allclose(rbf.dual_coef, rbf.alpha * y, atol=1e-12)
gap_rbf = np.max(np.abs(f_by_hand - rbf.decision_function(X_test)))
print(f"rbf: f(x) = sum_i alpha_i y_i k(x_i, x) + b by hand vs decision_function: "
      f"max difference {gap_rbf:.1e}")
assert gap_rbf <= 1e-10


def phi(X):
    """The six features of the kernel (x'z + 1)^2 in the plane."""
    x1, x2 = X[:, 0], X[:, 1]
    r2 = np.sqrt(2.0)
    return np.column_stack([np.ones_like(x1), r2 * x1, r2 * x2, x1**2, x2**2, r2 * x1 * x2])


K_poly = (X @ X.T + 1.0) ** 2
gap_gram = np.max(np.abs(phi(X) @ phi(X).T - K_poly))
explicit = sm.fit(phi(X), y, formulation="soft_l1_dual", solver=SOLVER, C=C, kernel="linear")
gap_f = np.max(np.abs(explicit.decision_function(phi(X_test))
                      - sols["poly"].decision_function(X_test)))
print(f"poly: max |phi(x_i)'phi(x_j) - (x_i'x_j + 1)^2| = {gap_gram:.1e}; linear SVM on the six "
      f"features vs poly SVM on two: objectives {explicit.objective:.8f} and "
      f"{sols['poly'].objective:.8f}, max |f difference| on the test points {gap_f:.1e}")
assert gap_gram <= 1e-12
assert abs(explicit.objective - sols["poly"].objective) <= 1e-6 * abs(explicit.objective)
assert gap_f <= 1e-5
print(f"the weight of the feature x1*x2 in the explicit model: "
      f"{np.sqrt(2.0) * explicit.w[5]:.4f} (the largest in absolute value: "
      f"{np.argmax(np.abs(explicit.w)) == 5})")
assert np.argmax(np.abs(explicit.w)) == 5

# %% [markdown]
# The explicit model's largest weight sits on the product $x_1 x_2$: the polynomial kernel
# found the feature that defines the classes, without being told, and without the six
# features ever being formed.
#
# ## Where to go next
#
# - The rbf kernel's $\gamma$ sets how far one point's influence reaches; try
#   $\gamma = 0.1$ and $\gamma = 10$ in `KERNELS` and watch the boundary and the number of
#   support vectors.
# - $C$ trades the margin against the slacks for any kernel; the page
#   [The path over C](c_path.ipynb) follows that trade-off, and
#   [Tuning C as a convex QCQP](c_tuning_vs_grid_search.ipynb) chooses $C$ in one solve.
# - `kernel="precomputed"` takes a Gram matrix of your own, as long as it is positive
#   semidefinite.

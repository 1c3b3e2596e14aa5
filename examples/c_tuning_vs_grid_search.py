# %% [markdown]
# # Tuning C as a convex QCQP
#
# The usual way to choose the soft-margin parameter $C$ is a grid search: train for each value
# of $C$ on a grid, estimate the accuracy by cross-validation, keep the best. That is many
# solves, and the answer depends on the grid and the folds.
#
# De Bie, Lanckriet and Cristianini (2003) choose $C$ of the **2-norm** soft-margin SVM in
# **one** convex optimisation problem instead, a quadratically constrained quadratic programme
# (QCQP): [c_tuning_standard](../formulations/c_tuning_standard.md), derived in full on
# [the family's page](../formulations/c_tuning.md). The criterion is not a validation score but
# a margin bound: among the trace-normalised kernels $K + I/C$, take the one with the largest
# margin.
#
# What to take away:
#
# - $D(g)$, the optimal value of the hard-margin SVM with the kernel
#   $M(g) = (1-g)\,K/r + g\,I/l$ ($r = \operatorname{trace} K$, $l$ points), is a convex
#   function of $g$;
# - the QCQP finds its minimiser $g^*$, and with it $C^*$, in one solve, without a grid;
# - the page draws $D(g)$, checks that the QCQP's optimum is its minimum, and puts a
#   cross-validated grid search beside it.

# %%
import matplotlib.pyplot as plt
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.svm import SVC

import svm_models as sm
from svm_models.plots import c_tuning_bound

# %% [markdown]
# ## From C to a kernel family
#
# The 2-norm soft-margin SVM with parameter $C$ penalises $\tfrac{C}{2}\sum_i \xi_i^2$. Its dual
# is the hard-margin dual with the kernel $K + I/C$ (see
# [soft_l2_dual](../formulations/soft_l2_dual.md)): the slacks become a ridge on the diagonal.
# So choosing $C$ is choosing a kernel from the family $K + \gamma I$, $\gamma = 1/C$.
#
# The margin alone cannot compare members of this family: adding $\gamma I$ always enlarges
# it. The generalisation bound behind the method depends on the margin *and* on the trace of
# the kernel, so the kernels are first scaled to trace one. With $r = \operatorname{trace} K$
# and $g = \gamma l / (\gamma l + r)$ this gives a family that is linear in $g$:
#
# $$
# M(g) = (1-g)\,\frac{K}{r} + g\,\frac{I}{l}, \qquad
# g \in [0, 1) \;\leftrightarrow\; C = \frac{l\,(1-g)}{g\,r} \in (0, \infty],
# $$
#
# with $g = 0$ the hard margin ($C = \infty$) and $g \to 1$ the limit $C \to 0$.
#
# ## D(g) is convex
#
# For each $g$ let $D(g)$ be the optimal value of the hard-margin dual with the kernel $M(g)$,
# the inverse squared margin:
#
# $$
# D(g) = \max_{\alpha \ge 0,\ y^\top \alpha = 0}\ e^\top \alpha
#   - \tfrac12\, \alpha^\top G\bigl(M(g)\bigr)\, \alpha,
# \qquad G(M)_{ij} = y_i y_j M_{ij}.
# $$
#
# For a fixed $\alpha$ the function under the max is affine in $g$, because $M(g)$ is. A
# maximum of affine functions is convex, so $D$ is convex in $g$. The best kernel of the family
# (the largest margin) is $g^* = \operatorname{argmin}_g D(g)$.
#
# ## One QCQP
#
# The min-max problem $\min_g \max_\alpha$ has a function linear in $g$ and concave in
# $\alpha$ over convex sets, so min and max can be swapped. For fixed $\alpha$ the maximum over
# $g \in [0, 1]$ of a linear function sits at an end, $g = 0$ or $g = 1$. With an epigraph
# variable $t$ for the larger of the two ends:
#
# $$
# \max_{\alpha,\,t}\ e^\top\alpha - \tfrac12\,t
# \quad\text{s.t.}\quad \alpha \ge 0,\quad y^\top\alpha = 0,\quad
# t \ge \tfrac{1}{l}\,\alpha^\top\alpha,\quad
# t \ge \tfrac{1}{r}\,\alpha^\top G(K)\,\alpha .
# $$
#
# Two convex quadratic constraints: a convex QCQP. Its optimal value is $\min_g D(g)$, and $g^*$
# is read from the two constraints' multipliers $\eta_{hi}, \eta_{lo}$ (with
# $\eta_{hi} + \eta_{lo} = \tfrac12$, $g^* = 2\eta_{hi}$), then $C^* = l(1-g^*)/(g^* r)$. When
# $0 < g^* < 1$ both constraints are active: by Danskin's theorem
# $D'(g) = -\tfrac12\bigl(\alpha^\top\alpha/l - \alpha^\top G(K)\alpha/r\bigr)$ at the inner
# optimum $\alpha$, and $D'(g^*) = 0$ says exactly that the two quadratic forms are equal.
#
# ## One solve on a small problem
#
# Sixty training points of the Wisconsin breast cancer data (30 features, standardised on the
# training split), an rbf kernel with scikit-learn's `gamma="scale"` value fixed once, and the
# 171 test points of the same split. `sm.fit` builds the problem and solves it with Ipopt.

# %%
SOLVER = "ipopt"     # QCQP backends: ipopt, clarabel, gurobi, scip
CURVE_SOLVER = "piqp"   # the QPs of D(g): any fast QP backend


def _standardise(Xtr, Xte):
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd[sd == 0] = 1.0
    return (Xtr - mu) / sd, (Xte - mu) / sd


def load(name: str, seed: int = 0):
    """(title, X_train, X_test, y_train, y_test), standardised on the training split."""
    if name == "breast_cancer":
        d = load_breast_cancer()
        X, y, title = d.data, d.target, "breast cancer (569 x 30)"
    elif name == "digits_3_vs_8":
        d = load_digits()
        keep = np.isin(d.target, (3, 8))
        X, y, title = d.data[keep], d.target[keep], "digits 3 vs 8 (357 x 64)"
    else:
        raise ValueError(name)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
    Xtr, Xte = _standardise(Xtr, Xte)
    return title, Xtr, Xte, ytr, yte


_, Xtr, X_test, ytr, y_test = load("breast_cancer")
X, y = Xtr[:60], ytr[:60]
l = len(y)
gamma = 1.0 / (X.shape[1] * X.var())          # scikit-learn's "scale", fixed once for all

sol = sm.fit(X, y, formulation="c_tuning_standard", solver=SOLVER, kernel="rbf", gamma=gamma)
K = rbf_kernel(X, X, gamma=gamma)
r = np.trace(K)
print(f"{l} points, rbf gamma = {gamma:.4g}: QCQP optimum {sol.objective:.6f} at "
      f"g* = {sol.g:.6f}, C* = {sol.C:.4f}")
print(f"active constraints: {sol.active}; alpha'alpha/l = {sol.q_hi:.6f}, "
      f"alpha'G(K)alpha/r = {sol.q_lo:.6f}")
print(f"multipliers: eta_hi = {sol.eta_hi:.6f}, eta_lo = {sol.eta_lo:.6f}; "
      f"2 eta_hi = {2 * sol.eta_hi:.6f}")
assert 0 < sol.g < 1 and sol.active == ["hi", "lo"]
assert abs(sol.q_hi - sol.q_lo) <= 1e-6 * sol.q_hi
assert abs(sol.eta_hi + sol.eta_lo - 0.5) <= 1e-6
assert abs(2 * sol.eta_hi - sol.g) <= 1e-5
assert abs(sol.C - l * (1 - sol.g) / (sol.g * r)) <= 1e-9 * sol.C

# %% [markdown]
# $g^*$ lies strictly inside $(0, 1)$ and both constraints are active, with equal quadratic
# forms: the case of an interior minimum of $D$.
#
# ## D(g) and its minimum
#
# `svm_models.plots.c_tuning_bound` draws $D(g)$ over $[0, 1]$: one hard-margin QP with the
# fixed kernel $M(g)$ per point of the curve. The dotted line is $g^*$, the red dot the QCQP's
# optimum; the top axis gives the matching $C$.

# %%
fig = c_tuning_bound(sol, X, y, solver=CURVE_SOLVER, n_grid=15)
plt.show()

# %% [markdown]
# What to look at: the curve falls from $g = 0$ (the hard margin on $K/r$) to its minimum at
# $g^*$, where the QCQP's optimum sits on it, then rises, steeply towards $g = 1$, where the
# kernel $I/l$ ignores the data. It is convex, as it must be.
#
# Now the checks, with $D(g)$ computed here by hand: build $M(g)$ in numpy and solve the
# hard-margin dual [hard_dual](../formulations/hard_dual.md) on it as a precomputed kernel.
# The QCQP's optimum must equal $D(g^*)$, and $D$ one step either side of $g^*$ must not be
# smaller. The points of the curve, read back from the figure, must have non-decreasing
# slopes (convexity) and none may lie below the optimum.

# %%
def D(g):
    """The optimum of the hard-margin SVM with the kernel M(g) = (1-g) K/r + g I/l."""
    M = (1 - g) * K / r + g * np.eye(l) / l
    return sm.fit(M, y, formulation="hard_dual", kernel="precomputed",
                  solver=CURVE_SOLVER).objective


step = 0.02
D_star, D_left, D_right = D(sol.g), D(sol.g - step), D(sol.g + step)
print(f"D(g*) = {D_star:.8f}, QCQP optimum = {sol.objective:.8f}, relative difference "
      f"{abs(D_star - sol.objective) / sol.objective:.1e}")
print(f"D(g* - {step}) - D(g*) = {D_left - D_star:.4f},  D(g* + {step}) - D(g*) = "
      f"{D_right - D_star:.4f}")
assert abs(D_star - sol.objective) <= 1e-6 * sol.objective
assert D_left >= D_star * (1 - 1e-9) and D_right >= D_star * (1 - 1e-9)

(curve,) = [a for a in fig.axes[0].get_lines() if a.get_gid() == "bound"]
g_grid, D_grid = curve.get_xdata(), curve.get_ydata()
slopes = np.diff(D_grid) / np.diff(g_grid)
print(f"{len(g_grid)} points of the curve: slopes from {slopes[0]:.1f} to {slopes[-1]:.1f}, "
      f"smallest D = {D_grid.min():.6f}")
assert np.all(np.diff(slopes) >= -1e-6 * np.abs(slopes).max())
assert D_grid.min() >= sol.objective * (1 - 1e-9)

# %% [markdown]
# ## The grid search beside it
#
# The usual practice on the same sixty points: a grid of eleven values of $C$ from $10^{-2}$ to
# $10^{3}$, five-fold stratified cross-validation, the mean accuracy of the held-out folds for
# each. The model is the same 2-norm soft margin, for a fair comparison. It runs on libsvm
# through the identity above: the 2-norm soft margin with $C$ is the hard margin with the
# kernel $K + I/C$, which scikit-learn's `SVC` takes as a precomputed kernel with a box far
# above every $\alpha_i$; new points are scored with $k(x, x_i)$ alone.


# %%
class TwoNormSVC(ClassifierMixin, BaseEstimator):
    """The 2-norm soft-margin SVM (rbf kernel) on libsvm: a hard margin with kernel K + I/C.

    ``C = inf`` is the hard margin itself. The libsvm box ``BOX`` is far above any alpha of
    these problems, so it never binds (the 1-norm box would otherwise creep in).
    """

    BOX = 1e8

    def __init__(self, C=1.0, gamma=1.0):
        self.C = C
        self.gamma = gamma

    def fit(self, X, y):
        self.X_ = np.asarray(X, dtype=float)
        K = rbf_kernel(self.X_, self.X_, gamma=self.gamma)
        K[np.diag_indices_from(K)] += 1.0 / self.C
        self.svc_ = SVC(kernel="precomputed", C=self.BOX, tol=1e-6).fit(K, y)
        self.classes_ = self.svc_.classes_
        return self

    def predict(self, X):
        return self.svc_.predict(rbf_kernel(np.asarray(X, dtype=float), self.X_, gamma=self.gamma))


Cs = np.logspace(-2, 3, 11)
cv = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
grid = GridSearchCV(TwoNormSVC(gamma=gamma), {"C": Cs}, cv=cv).fit(X, y)
cv_mean = grid.cv_results_["mean_test_score"]
cv_std = grid.cv_results_["std_test_score"]
C_grid = grid.best_params_["C"]

fig, ax = plt.subplots(figsize=(7.2, 4.4))
ax.errorbar(Cs, cv_mean, yerr=cv_std, fmt="o-", ms=4, capsize=3,
            label="5-fold CV accuracy (mean +- std), 2-norm soft margin")
ax.axvline(sol.C, color="#c0392b", ls="--", label=f"QCQP: C* = {sol.C:.3g} (one solve)")
ax.axvline(C_grid, color="0.35", ls=":", label=f"grid search: C = {C_grid:.3g} "
                                                f"({len(Cs) * cv.get_n_splits() + 1} fits)")
ax.set_xscale("log")
ax.set_xlabel("C")
ax.set_ylabel("cross-validated accuracy")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8, loc="lower right")
ax.set_title(f"Grid search on the same {l} points")
plt.show()

# %% [markdown]
# What to look at: the cross-validated accuracy falls away below $C = 0.1$, is flat at its
# top from $C \approx 0.3$ to $C \approx 3$ and a little lower beyond, and its error bars are
# wide: on sixty points one fold is twelve points, and one point more or less moves a fold's
# accuracy by about 0.08. The grid's best $C$ is one of several tied values (`GridSearchCV`
# keeps the first). The QCQP needs no folds and no grid; its $C^*$ falls on the flat top.
#
# Both classifiers on the 171 test points, and one more check: the QCQP's classifier is the
# plain 2-norm SVM at $C = C^*$, so libsvm on $K + I/C^*$ must predict the same classes.

# %%
acc_qcqp = sol.score(X_test, y_test)
acc_grid = grid.score(X_test, y_test)
at_C_star = TwoNormSVC(C=sol.C, gamma=gamma).fit(X, y)
agree = np.mean(at_C_star.predict(X_test) == sol.predict(X_test))
print(f"test accuracy: QCQP (C* = {sol.C:.3g}) {acc_qcqp:.3f}, grid search (C = {C_grid:.3g}) "
      f"{acc_grid:.3f}")
print(f"the QCQP's classifier and libsvm's 2-norm SVM at C* agree on {agree:.1%} of the test "
      "points")
nearest = np.argmin(np.abs(np.log(Cs / sol.C)))
n_top = np.sum(cv_mean >= cv_mean.max() - 1e-12)
print(f"CV accuracy: best {cv_mean.max():.3f}, reached by {n_top} values of C; at the grid's "
      f"C nearest to C* ({Cs[nearest]:.3g}) {cv_mean[nearest]:.3f}")
assert agree == 1.0
assert n_top >= 2                                             # ties at the top
assert cv_mean[nearest] >= cv_mean.max() - 1e-12              # C* on the flat top

# %% [markdown]
# ## Two real data sets
#
# `main` runs the comparison on two data sets that ship with scikit-learn, breast cancer and
# the handwritten digits "3 vs 8", with the same rbf kernel everywhere. Three ways of choosing
# $C$, with the chosen $C$, the test accuracy, the time and the number of solves:
#
# - **QCQP (2-norm)**: one solve of `c_tuning_standard`, $C^* = l(1-g^*)/(g^* r)$;
# - **grid CV, 2-norm**: the grid search above, the same model family as the QCQP;
# - **grid CV, SVC 1-norm**: `GridSearchCV` over scikit-learn's `SVC`, the 1-norm soft margin,
#   what most people would run. Its $C$ is a 1-norm $C$ and not comparable in value.
#
# `quick=True` (used here, and by the test suite) takes 150 training points per data set, a
# five-point grid and three folds; `main()` uses all training points, eleven values of $C$ and
# five folds, and takes a few seconds more.


# %%
def compare(name: str, *, solver: str = "ipopt", quick: bool = False):
    """The three ways of choosing C on one dataset; returns a list of result rows (dicts)."""
    title, Xtr, Xte, ytr, yte = load(name)
    if quick:
        Xtr, _, ytr, _ = train_test_split(Xtr, ytr, train_size=150, random_state=0, stratify=ytr)
    gamma = 1.0 / (Xtr.shape[1] * Xtr.var())      # scikit-learn's "scale", fixed once for all
    Cs = np.logspace(-2, 3, 5 if quick else 11)
    cv = StratifiedKFold(n_splits=3 if quick else 5, shuffle=True, random_state=0)
    rows = []

    t0 = time.perf_counter()
    sol = sm.fit(Xtr, ytr, formulation="c_tuning_standard", solver=solver, kernel="rbf", gamma=gamma)
    elapsed = time.perf_counter() - t0
    # the same classifier from the plain 2-norm SVM at C = C* (libsvm): predictions must agree
    at_C = TwoNormSVC(C=sol.C, gamma=gamma).fit(Xtr, ytr) if sol.C is not None else None
    rows.append({"dataset": title, "method": "QCQP (2-norm)", "C": sol.C, "g": sol.g,
                 "test_accuracy": sol.score(Xte, yte), "time": elapsed, "solves": 1,
                 "path": sol.path,
                 "agreement_with_2norm_at_C": (float(np.mean(at_C.predict(Xte) == sol.predict(Xte)))
                                               if at_C is not None else None)})

    t0 = time.perf_counter()
    gs = GridSearchCV(TwoNormSVC(gamma=gamma), {"C": Cs}, cv=cv).fit(Xtr, ytr)
    rows.append({"dataset": title, "method": "grid CV, 2-norm", "C": gs.best_params_["C"],
                 "g": None, "test_accuracy": gs.score(Xte, yte), "time": time.perf_counter() - t0,
                 "solves": len(Cs) * cv.get_n_splits() + 1})

    t0 = time.perf_counter()
    gs1 = GridSearchCV(SVC(kernel="rbf", gamma=gamma), {"C": Cs}, cv=cv).fit(Xtr, ytr)
    rows.append({"dataset": title, "method": "grid CV, SVC 1-norm", "C": gs1.best_params_["C"],
                 "g": None, "test_accuracy": gs1.score(Xte, yte), "time": time.perf_counter() - t0,
                 "solves": len(Cs) * cv.get_n_splits() + 1})
    for r in rows:
        r.update(n_train=len(ytr), n_test=len(yte))
    return rows


def main(quick: bool = False, solver: str = "ipopt") -> list:
    """Both data sets, three methods each: a list of six result rows (dicts)."""
    all_rows = []
    t_start = time.perf_counter()
    for name in ("breast_cancer", "digits_3_vs_8"):
        rows = compare(name, solver=solver, quick=quick)
        r0 = rows[0]
        print(f"== {r0['dataset']}: {r0['n_train']} training / {r0['n_test']} test points, rbf kernel")
        print(f"   {'method':22s} {'C':>10s} {'g*':>8s} {'test acc':>9s} {'time s':>7s} {'solves':>6s}")
        for r in rows:
            C = "none" if r["C"] is None else f"{r['C']:.4g}"
            g = "" if r["g"] is None else f"{r['g']:.4f}"
            print(f"   {r['method']:22s} {C:>10s} {g:>8s} {r['test_accuracy']:9.3f} "
                  f"{r['time']:7.2f} {r['solves']:6d}")
        if r0["agreement_with_2norm_at_C"] is not None:
            print(f"   check: the QCQP's classifier and the plain 2-norm SVM at C = C* (libsvm) give "
                  f"the same test prediction on {r0['agreement_with_2norm_at_C']:.1%} of the points")
        all_rows += rows
    print(f"\ntotal {time.perf_counter() - t_start:.1f} s. The QCQP maximises the margin of the "
          "trace-normalised kernel K + I/C (a generalisation bound) in one solve; the grid search "
          "estimates accuracy by cross-validation over a grid of C. The 2-norm grid is the fair "
          "comparison (same model family); SVC's C is a 1-norm C.")
    return all_rows


rows = main(quick=True, solver=SOLVER)
for k in (0, 3):                                       # the QCQP rows, one per data set
    qcqp, grids = rows[k], rows[k + 1:k + 3]
    assert 0 < qcqp["g"] < 1 and qcqp["agreement_with_2norm_at_C"] == 1.0
    assert qcqp["test_accuracy"] >= max(g["test_accuracy"] for g in grids) - 0.02

# %% [markdown]
# On both data sets the QCQP's $C^*$ gives a test accuracy within a point or so of the grid
# searches', with a different value of $C$, in one solve. At these sizes libsvm's grid search
# is about as fast: the QCQP is solved by an interior-point method with $O(l^3)$ work per
# iteration, and its advantage is the single, grid-free answer, not speed.
#
# Two honest limits. The criterion is a margin bound, not a validation score: nothing
# guarantees it picks the $C$ a cross-validation would. And $g^*$ need not fall inside
# $(0, 1)$: on noise-dominated labels it goes to $g^* = 1$ (the classifier ignores $K$), on
# separable data with a diagonally dominant kernel to $g^* = 0$, the hard margin
# ($C^* = \infty$); the catalogue page's notes give the conditions.

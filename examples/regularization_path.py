# %% [markdown]
# # Every C at once: the exact regularization path
#
# The page [The path over C](c_path.ipynb) solves the 1-norm SVM at eleven values of $C$.
# This page computes it at *every* $C$: the solution of
# [soft_l1_dual](../formulations/soft_l1_dual.md) is piecewise linear in $1/C$ (Hastie,
# Rosset, Tibshirani & Zhu, "The entire regularization path for the support vector machine",
# JMLR 5, 2004), and `svm_models.regularization_path` follows it from one breakpoint to the
# next.
#
# What to take away:
#
# - With $\lambda = 1/C$ and $\theta_i = \alpha_i / C \in [0, 1]$ the dual reads
#   $\min_\theta \tfrac12 \theta^\top Q \theta - \lambda\, e^\top\theta$ over the box and
#   $y^\top\theta = 0$: only the linear term moves with $\lambda$, so $\theta(\lambda)$ and
#   $b/C$ are piecewise linear. Between two *events* -- a point entering or leaving the
#   margin -- the points on the margin (the elbow) solve one linear system.
# - Each point is in one of three sets: *left* ($\alpha_i = C$, inside the margin),
#   *elbow* (on it, $0 < \alpha_i < C$), *right* ($\alpha_i = 0$, beyond it). The path's
#   `events` say which point moved where, at which $C$.
# - `path.at(C)` is the library's `Solution` at any $C$, certified as `fit`'s answers are;
#   cross-validation reads every fold's errors at every $C$ from one path per fold, and
#   `SVMClassifierCV(Cs="path")` finds the best $C$ on the whole interval.
#
# The data: two Gaussian clouds in 2-D that overlap (`teaching_2d(40, separation=1.5)`), the rbf
# kernel with $\gamma = 0.5$.

# %%
import matplotlib.pyplot as plt
import numpy as np

import svm_models as sm
from svm_models.datasets import teaching_2d

GAMMA = 0.5

# %% [markdown]
# ## The path
#
# `main` computes the path and draws three panels: $\alpha_i / C$ against $1/C$ (straight
# lines between the events, which are the dotted verticals), the margin $1/\lVert w\rVert$
# against $C$, and the 5-fold cross-validated error against $C$ with the $C^*$ that the
# C-tuning QCQP ([c_tuning_standard](../formulations/c_tuning_standard.md)) learns from the
# training data alone. `quick=True` takes 24 points (the test suite uses it).


# %%
def main(quick: bool = False, plot=None) -> dict:
    """Compute the path; return ``{"path", "X", "y", "cv", "C_star", "figure"}``."""
    X, y = teaching_2d(24 if quick else 40, separation=1.5)
    path = sm.regularization_path(X, y, kernel="rbf", gamma=GAMMA, C_min=1e-3, C_max=1e3)
    print(f"{len(y)} points: {len(path.breakpoints)} breakpoints, {len(path.events)} events "
          f"between C = 1e-3 and 1e3; alpha / C constant below C = {path.C_start:.4g}")
    for e in path.events[:6]:
        print(f"  C = {e.C:8.4f}: point {e.point:2d} {e.before:>5s} -> {e.after}")
    # the margin along the path, from the certified Solution at each C
    Cs = np.logspace(-3, 3, 25 if quick else 60)
    margins = [path.at(C).margin for C in Cs]
    # cross-validated error on the whole interval: one path per fold
    cv = sm.cross_validate(X, y, Cs="path", cv=5, kernel="rbf", gamma=GAMMA)
    cv_C = np.array([p["C"] for p in cv["params"]])
    cv_err = 1.0 - cv["mean_test_score"]
    best = int(np.argmin(cv_err))
    print(f"cross-validation: {len(cv_C)} pieces of C with constant fold errors; the best "
          f"error {cv_err[best]:.3f} at C = {cv_C[best]:.4g}")
    tuned = sm.fit(X, y, formulation="c_tuning_standard", solver="ipopt", kernel="rbf",
                   gamma=GAMMA)
    print(f"C-tuning QCQP (2-norm SVM): C* = {tuned.C:.4g}")
    fig = _draw(path, X, y, Cs, margins, cv_C, cv_err, tuned.C)
    if plot:
        fig.savefig(plot)
    return {"path": path, "X": X, "y": y, "cv": cv, "C_star": tuned.C, "figure": fig}


def _draw(path, X, y, Cs, margins, cv_C, cv_err, C_star):
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    lam = np.linspace(1e-3, 1.0 / path.C_start * 1.2, 400)
    theta = np.array([path.at(1.0 / t).alpha * t for t in lam])
    ax[0].plot(lam, theta, lw=1)
    for C in path.breakpoints:
        ax[0].axvline(1.0 / C, color="grey", ls=":", lw=0.6)
    ax[0].set(xlabel="1/C", ylabel="alpha_i / C", title="alpha_i / C: piecewise linear in 1/C")
    ax[1].loglog(Cs, margins)
    ax[1].set(xlabel="C", ylabel="margin 1/|w|", title="the margin narrows as C grows")
    ax[2].step(cv_C, cv_err, where="mid", label="5-fold CV error (every C)")
    ax[2].axvline(C_star, color="C3", ls="--", label=f"C-tuning QCQP: C* = {C_star:.3g}")
    ax[2].set(xscale="log", xlabel="C", ylabel="error", title="cross-validated error")
    ax[2].legend()
    fig.tight_layout()
    return fig


res = main(quick=False)

# %% [markdown]
# ## Checks
#
# The page's claims: at a C between two breakpoints, $\alpha/C$ is the average of its values
# at the ends (linear in $1/C$, at the midpoint in $1/C$); `at(C)` agrees with an independent
# solve (libsvm, polished); and the margin never widens as $C$ grows.

# %%
path, X, y = res["path"], res["X"], res["y"]
lo, hi = path.breakpoints[3], path.breakpoints[4]
mid = 2.0 / (1.0 / lo + 1.0 / hi)
average = (path.at(lo).alpha / lo + path.at(hi).alpha / hi) / 2
assert np.allclose(path.at(mid).alpha / mid, average, atol=1e-10)
ref = sm.fit(X, y, solver="libsvm", tol=1e-10, C=mid, kernel="rbf", gamma=GAMMA)
assert abs(path.at(mid).objective - ref.objective) <= 1e-8 * abs(ref.objective)
m = [path.at(C).margin for C in np.logspace(-2, 2, 9)]
assert all(a >= b * (1 - 1e-9) for a, b in zip(m, m[1:]))
print("checks passed")

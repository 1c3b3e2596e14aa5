# %% [markdown]
# # Swapping solvers
#
# A model built by `svm_models` is an ordinary Pyomo model, and the solver is one argument:
# `sm.solve(model, solver="highs")`, `solver="gurobi"`, `solver="clarabel"`, ... Nothing else
# changes, neither the model nor the `Solution` that comes back. This page builds one model,
# hands it to every backend installed, and compares what they return: the optimum (which must
# agree), the weights $w$, the status and the time (which need not).
#
# The model is the 1-norm soft-margin SVM in primal form
# ([soft_l1_primal](../formulations/soft_l1_primal.md)), a convex quadratic program,
#
# $$
# \min_{w,\,b,\,\xi}\ \tfrac12\lVert w\rVert^2 + C\sum_i \xi_i
# \quad\text{s.t.}\quad y_i\,(w^\top x_i + b) \ge 1 - \xi_i,\quad \xi_i \ge 0,
# $$
#
# with $C = 1$, on the first 120 training points of the Wisconsin breast-cancer data (30
# standardised features; the copy that ships with scikit-learn). That is $30 + 1 + 120 = 151$
# variables: small on purpose, because Gurobi's size-limited pip licence refuses quadratic
# models above 200 variables.

# %%
import matplotlib.pyplot as plt
import textwrap
import time

import numpy as np
from sklearn.svm import SVC

import svm_models as sm
from svm_models.datasets import breast_cancer

FORMULATION = "soft_l1_primal"

# %% [markdown]
# ## What is installed, and what each backend takes
#
# `sm.solvers()` lists the backends the library knows, whether each is installed, the
# problem classes it takes (LP, QP, SOCP, QCQP, NLP, MILP, MIQP), whether it reports
# multipliers, and whether the library feeds it the model's matrices directly (the *fast*
# path) or goes through Pyomo's own interface. Before anything runs, a model's problem class
# is checked against the backend's list.

# %%
listing = sm.solvers()
print(f"{'backend':9s} {'installed':9s} {'duals':5s} {'fast':5s} {'takes':35s} note")
for name, info in listing.items():
    print(f"{name:9s} {'yes' if info['available'] else 'no':9s} "
          f"{'yes' if info['duals'] else 'no':5s} {'yes' if info['fast_path'] else 'no':5s} "
          f"{', '.join(info['classes']):35s} "
          f"{textwrap.shorten(info['note'], 64, placeholder=' ...')}")

# %% [markdown]
# ## One model, every backend
#
# `main` builds the model once and solves it with each backend that takes a QP, twice each:
# the first solve of a backend pays for one-off work (loading the solver's library, building
# and caching the model's matrices), so the table reports the faster of the two wall-clock
# times of `sm.solve`, also kept in `sol.extra["wall_seconds"]`. The first backend is the
# reference for the two columns of differences; `SVs` counts the support vectors, and
# `w[0:3]` shows the first three of the 30 weights.


# %%
def main(quick: bool = False, solvers=None, C: float = 1.0, repeats: int = 2) -> dict:
    """Solve one built model with each backend; return ``{solver: Solution}`` of those that
    solved it (a backend that is not installed, or refuses, is reported and left out). Each
    backend solves ``repeats`` times; ``sol.extra["wall_seconds"]`` is the fastest."""
    Xtr, _, ytr, _ = breast_cancer()
    l = 40 if quick else 120
    X, y = Xtr[:l], ytr[:l]
    model = sm.build(FORMULATION, X, y, C=C)
    listing = sm.solvers()
    names = solvers or [n for n, info in listing.items() if "QP" in info["classes"]]
    print(f"{FORMULATION}, linear kernel, C = {C}: {l} points x {X.shape[1]} features\n")
    print(f"{'solver':9s} {'interface':16s} {'path':8s} {'status':8s} {'time s':>8s} "
          f"{'objective':>17s} {'rel. diff':>9s} {'max|w-w_ref|':>12s} {'SVs':>4s}  w[0:3]")
    out, ref = {}, None
    for name in names:
        if name in listing and not listing[name]["available"]:
            print(f"{name:9s} not installed ({listing[name]['install']})")
            continue
        try:
            best = np.inf
            for _ in range(repeats):
                t0 = time.perf_counter()
                sol = sm.solve(model, solver=name, time_limit=120)
                best = min(best, time.perf_counter() - t0)
        except sm.SVMError as exc:
            print(f"{name:9s} {type(exc).__name__}: {exc}")
            continue
        sol.extra["wall_seconds"] = best
        ref = ref or sol
        out[name] = sol
        rel = abs(sol.objective - ref.objective) / max(1.0, abs(ref.objective))
        print(f"{name:9s} {sol.interface.split(' (')[0]:16s} {sol.path:8s} "
              f"{sol.status.value:8s} {best:8.4f} {sol.objective:17.12f} {rel:9.1e} "
              f"{np.max(np.abs(sol.w - ref.w)):12.1e} {len(sol.support):4d}  "
              f"{np.array2string(sol.w[:3], precision=6)}")
    if out:
        objs = np.array([s.objective for s in out.values()])
        spread = np.ptp(objs) / max(1.0, abs(objs[0]))
        print(f"\n{len(out)} backends; objectives within {spread:.1e} (relative) of each other. "
              "The reference row is the first one.")
    return out


sols = main()

# %% [markdown]
# ## They agree
#
# Interior-point methods (Ipopt, PIQP, Clarabel, the library's own `ipm`), an active-set
# method (HiGHS), Gurobi and SCIP's spatial branch and bound reach the same
# optimum: the objectives must agree to $10^{-6}$ relative, and the weights to $10^{-5}$.
#
# Here they agree to round-off, and that needs a word. Each backend stops at its own
# tolerance, but the library then *polishes* the answer: from the active set the backend
# found (which points lie on the margin, which inside it) it solves the optimality conditions
# of the SVM directly, and certifies the result (`sol.polished`,
# `sol.classifier_certificate`). Backends that find the same active set therefore return the
# same numbers. SCIP reports no multipliers at all; the library recovers them from the
# optimality conditions (`alpha_source`).
#
# As an independent witness, scikit-learn's `SVC` (libsvm's SMO, a different algorithm on the
# dual problem, with no polishing) must give no lower objective, and one within $10^{-5}$.

# %%
objs = np.array([s.objective for s in sols.values()])
ref = next(iter(sols.values()))
rel = np.abs(objs - ref.objective) / max(1.0, abs(ref.objective))
W = np.array([s.w for s in sols.values()])
print(f"largest relative difference of the objectives: {rel.max():.1e}")
print(f"largest difference of a weight w_j:            {np.max(np.ptp(W, axis=0)):.1e}")
assert rel.max() <= 1e-6
assert np.max(np.ptp(W, axis=0)) <= 1e-5
assert all(s.status is sm.Status.optimal for s in sols.values())
for name, sol in sols.items():
    print(f"  {name:9s} alpha from {sol.alpha_source:18s} polished "
          f"{sol.polished}, certified {sol.classifier_certificate['certified']}")

Xtr, _, ytr, _ = breast_cancer()
X, y = Xtr[:120], ytr[:120]
svc = SVC(kernel="linear", C=1.0, tol=1e-10).fit(X, y)
w, b = svc.coef_[0], svc.intercept_[0]
yy = np.where(y == svc.classes_[1], 1.0, -1.0)
libsvm = 0.5 * w @ w + 1.0 * np.maximum(0.0, 1.0 - yy * (X @ w + b)).sum()
print(f"scikit-learn SVC (libsvm): objective {libsvm:.12f}, relative difference "
      f"{(libsvm - ref.objective) / ref.objective:.1e}")
assert ref.objective <= libsvm + 1e-9 and libsvm - ref.objective <= 1e-5 * ref.objective

# %% [markdown]
# ## They differ in time
#
# The times differ by more than a factor of ten on this small model. What the bar shows is
# the time of `sm.solve`, which includes handing the model over: on the *fast* path the
# library passes the model's matrices straight to the backend; SCIP has no fast path, so its
# bar includes Pyomo writing the model out term by term, and SCIP itself is a global solver
# that proves optimality by branch and bound. On a model this small the fixed costs dominate,
# so the order can change on bigger problems (and between runs): time your own model.

# %%
names = list(sols)
secs = np.array([sols[n].extra["wall_seconds"] for n in names])
colours = ["#117a65" if sols[n].path == "fast" else "#c0392b" for n in names]
fig, ax = plt.subplots(figsize=(7, 3.8))
ax.barh(names, secs * 1e3, color=colours)
for i, v in enumerate(secs * 1e3):
    ax.text(v * 1.08, i, f"{v:.1f} ms", va="center", fontsize=8)
ax.set_xscale("log")
ax.set_xlim(secs.min() * 1e3 / 2, secs.max() * 1e3 * 4)
ax.invert_yaxis()
ax.set_xlabel("wall-clock time of sm.solve, faster of 2 (ms, log scale)")
ax.set_title(f"{FORMULATION}, 120 x 30, C = 1: one model, {len(names)} backends\n"
             "green: fast path (matrices), red: through Pyomo's interface", fontsize=10)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## A backend that cannot take the model, and "auto"
#
# `libsvm` (scikit-learn's SMO) is listed but solves only the classic SVM duals as built, not
# this primal. Asked anyway, it refuses before solving, with an error that names the backends
# that can. The default, `solver="auto"`, takes the fastest installed backend that can take
# the model, and says why in `sol.solver_choice`.

# %%
model = sm.build(FORMULATION, X, y, C=1.0)
try:
    sm.solve(model, solver="libsvm")
except sm.CapabilityError as exc:
    print(f"{type(exc).__name__}: {exc}")
auto = sm.solve(model)
print(f"auto chose {auto.solver}: {auto.solver_choice['why']}")
assert abs(auto.objective - ref.objective) <= 1e-6 * ref.objective

# %% [markdown]
# ## What to take away
#
# * The solver is a flag: the same built model goes to any backend that takes its problem
#   class, and `sm.solvers()` says which those are.
# * On a convex problem the backends must agree on the optimum, and they do, to round-off;
#   use a second backend (or a second method, as libsvm here) as a check of the first.
# * They differ in time, in what they report (SCIP gives no multipliers) and in what they
#   take (HiGHS and PIQP no quadratic constraints, Gurobi's pip licence no more than 200
#   variables in a quadratic model): choose by the problem, or let `"auto"` choose.

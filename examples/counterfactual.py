# %% [markdown]
# # An SVM inside a model of your own
#
# Once trained, a support vector machine is a function, its decision function
#
# $$
# f(x) = \sum_{i \in SV} c_i\, k(x_i, x) + b
# \qquad \bigl(= w^\top x + b \text{ for the linear kernel}\bigr),
# $$
#
# and it predicts one class where $f(x) \ge 0$, the other where $f(x) < 0$. A function can
# appear in an optimisation model like any other: as an objective, or in a constraint on
# variables of *your* model. `svm_models.add_decision_function` puts $f$ into a Pyomo block
# of yours, as an expression of the Pyomo inputs you pass, and `svm_models.optimize` solves
# the model with one of the library's backends.
#
# The example is a *counterfactual explanation*: the smallest change to a point $x_0$ that
# makes the classifier put it in the other class,
#
# $$
# \min_x\ \lVert x - x_0\rVert^2 \quad\text{s.t.}\quad f(x) \ge \delta
# \qquad (\text{or } f(x) \le -\delta \text{ towards the other class}),
# $$
#
# with a small margin $\delta > 0$ so that the answer lies clearly on the other side. For a
# linear kernel the constraint is linear and the model a convex QP (an LP if the change is
# measured by the 1-norm); for an rbf kernel the constraint is a sum of exponentials, a
# nonconvex nonlinear model for a local solver such as Ipopt.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pyomo.environ as pyo
from sklearn.datasets import make_moons

import svm_models as sm
from svm_models.datasets import teaching_2d
from svm_models.embed import add_decision_function, optimize
from svm_models.errors import LocallyInfeasibleError
from svm_models.plots import decision_boundary

MARGIN = 0.1      # delta: how far beyond the boundary the changed point must lie

# %% [markdown]
# ## The model
#
# `counterfactual` builds the model for a trained SVM `solution` and a point `x0`: a variable
# `m.x` for the changed point, the SVM's decision function of `m.x` with the other class
# required (`add_decision_function(..., require=target, margin=...)`: the sub-block `m.svm`
# holds `decision`, its value `output`, the row `output_def` tying them together and the row
# `require`), and the objective, written by us. With `norm="l1"` the change is measured by
# $\sum_j |x_j - x_{0j}|$ instead, through the usual auxiliary variables $t_j \ge \pm(x_j -
# x_{0j})$: a linear program when the SVM is linear.
#
# A local solver started from a bad point can stall where the rbf expansion is flat, and
# report the model *locally* infeasible (`LocallyInfeasibleError`, status
# `locally_infeasible`: no feasible point near the start, which proves nothing about the
# rest); `optimize(..., starts=...)` gives it several starting points -- a number of them,
# drawn with a fixed seed, or points of our own, as here -- and keeps the best optimal end.


# %%
def counterfactual(solution, x0, *, solver: str, margin: float = 0.1, starts=None,
                   time_limit: float = 60.0, norm: str = "l2") -> dict:
    """The point nearest ``x0`` that ``solution`` puts in the other class, with f(x) beyond
    ``margin``: nearest in squared Euclidean distance (``norm="l2"``) or in the 1-norm
    (``norm="l1"``).

    ``starts``: initial points for a local solver on a non-convex model (default: x0
    alone), handed to ``optimize(..., starts=...)``, which keeps the best optimal end (a
    start that ends at a point of local infeasibility is skipped; if all do, it raises
    ``LocallyInfeasibleError``). The answer's ``"model"`` is the Pyomo model, holding the
    best end's values.
    """
    x0 = np.asarray(x0, dtype=float)
    now = solution.predict(x0[None, :])[0]
    target = solution.classes[0] if now == solution.classes[1] else solution.classes[1]
    m = pyo.ConcreteModel(name="counterfactual")
    m.J = pyo.RangeSet(0, x0.size - 1)
    m.x = pyo.Var(m.J, doc="the changed point")
    svm = add_decision_function(m, solution, m.x, require=target, margin=margin)
    if norm == "l2":
        m.change = pyo.Objective(expr=pyo.quicksum((m.x[j] - x0[j]) ** 2 for j in m.J),
                                 doc="||x - x0||^2")
    elif norm == "l1":
        m.t = pyo.Var(m.J, bounds=(0, None), doc="t_j >= |x_j - x0_j|")
        m.up = pyo.Constraint(m.J, rule=lambda m, j: m.t[j] >= m.x[j] - x0[j])
        m.down = pyo.Constraint(m.J, rule=lambda m, j: m.t[j] >= x0[j] - m.x[j])
        m.change = pyo.Objective(expr=pyo.quicksum(m.t[j] for j in m.J), doc="||x - x0||_1")
    else:
        raise ValueError(f"norm must be 'l2' or 'l1'; got {norm!r}")
    for j, v in enumerate(x0.tolist()):
        m.x[j].set_value(v)
    svm.output.set_value(pyo.value(svm.expression))
    # each start: the changed point, and the decision value there (a consistent start)
    points = None if starts is None else [
        [(m.x, s), (svm.output, float(solution.decision_function(np.reshape(s, (1, -1)))[0]))]
        for s in starts]
    info = optimize(m, solver, time_limit=time_limit, starts=points)
    x = svm.input_values()
    return {"x0": x0, "x": x, "label": now, "target": target, "margin": margin, "norm": norm,
            "distance2": float(np.sum((x - x0) ** 2)),
            "distance1": float(np.sum(np.abs(x - x0))),
            "f0": float(solution.decision_function(x0[None, :])[0]),
            "f": float(solution.decision_function(x[None, :])[0]),
            "self_check": svm.error(), "solver": info.solver, "time": info.time,
            "message": info.message, "model": m}


def projection(solution, x0, margin: float) -> np.ndarray:
    """The linear counterfactual in closed form: x0 projected onto w.x + b = +-margin."""
    x0 = np.asarray(x0, dtype=float)
    f0 = float(solution.decision_function(x0[None, :])[0])
    s = -1.0 if f0 >= 0 else 1.0       # the side to reach
    w = solution.w
    return x0 + s * (margin - s * f0) / (w @ w) * w


def crossings(solution, x0, points, margin: float, k: int = 3) -> list:
    """Starting points for a local solver: where the segments from ``x0`` to the ``k``
    nearest of ``points`` that lie beyond ``margin`` on the other side first reach it
    (a scan of 200 steps, then bisection)."""
    x0 = np.asarray(x0, dtype=float)
    s = -1.0 if solution.decision_function(x0[None, :])[0] >= 0 else 1.0

    def beyond(P):
        return s * solution.decision_function(P) >= margin

    far = points[beyond(points)]
    out = []
    for p in far[np.argsort(np.sum((far - x0) ** 2, axis=1))[:k]]:
        t = np.linspace(0.0, 1.0, 201)
        first = int(np.argmax(beyond(x0 + t[:, None] * (p - x0))))
        lo, hi = t[max(first - 1, 0)], t[first]
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if beyond((x0 + mid * (p - x0))[None, :])[0] else (mid, hi)
        out.append(x0 + hi * (p - x0))
    return out


def _line(r: dict) -> str:
    return (f"  {r['solver']:9s} x* = {np.array2string(r['x'], precision=6)}  "
            f"||x* - x0||^2 = {r['distance2']:.8f}  f(x*) = {r['f']:+.8f}  "
            f"class {r['label']} -> {r['target']}  self-check {r['self_check']:.1e}")


# %% [markdown]
# ## A linear SVM: a quadratic program
#
# A 1-norm soft-margin SVM ([soft_l1_dual](../formulations/soft_l1_dual.md)) on 40 points in
# two overlapping clouds, and the point $x_0$ = point 1 of the data, which it puts in class
# $-1$. Embedded, the decision function is an ordinary linear expression of `m.x`:

# %%
X, y = teaching_2d(40, separation=2.5, seed=1)
lin = sm.fit(X, y, formulation="soft_l1_dual", solver="piqp", C=1.0)
x0 = X[1]
f0 = float(lin.decision_function(x0[None, :])[0])
print(f"linear SVM: w = {np.array2string(lin.w, precision=4)}, b = {lin.b:+.4f}; "
      f"x0 = {np.array2string(x0, precision=4)}, f(x0) = {f0:+.4f}, "
      f"class {lin.predict(x0[None, :])[0]}")

r_highs = counterfactual(lin, x0, solver="highs", margin=MARGIN)
m = r_highs["model"]
print("m.svm.decision:", m.svm.decision.expr)
print("m.svm.require: ", m.svm.require.expr)

# %% [markdown]
# The problem is a projection onto the half-plane $w^\top x + b \ge \delta$, so it has a
# closed form, $x^* = x_0 + \dfrac{\delta - f(x_0)}{\lVert w\rVert^2}\, w$: the step is along
# $w$, perpendicular to the boundary. Any QP backend must find it; here HiGHS (active set),
# Ipopt (interior point) and PIQP, on the same model.

# %%
linear = [r_highs] + [counterfactual(lin, x0, solver=s, margin=MARGIN) for s in ("ipopt", "piqp")]
exact = projection(lin, x0, MARGIN)
for r in linear:
    print(_line(r))
print(f"  closed form x* = {np.array2string(exact, precision=6)}  "
      f"||x* - x0||^2 = {np.sum((exact - x0) ** 2):.8f}")
for r in linear:
    assert np.allclose(r["x"], exact, atol=1e-6)            # the projection
    assert abs(r["f"] - MARGIN) <= 1e-6 and r["target"] != r["label"]
    assert r["self_check"] <= 1e-6                          # output == f(x) in the solved model

# %% [markdown]
# Measured by the 1-norm, the nearest change is different: the dual norm of the 1-norm is the
# max-norm, so the cheapest way to move $f$ by $\delta - f(x_0)$ is to change only the feature
# with the largest $|w_j|$, by $(\delta - f(x_0))/w_j$. The model is now a linear program.

# %%
r1 = counterfactual(lin, x0, solver="highs", margin=MARGIN, norm="l1")
j = int(np.argmax(np.abs(lin.w)))
exact1 = x0.copy()
exact1[j] += (MARGIN - f0) / lin.w[j]
print(f"1-norm: x* = {np.array2string(r1['x'], precision=6)}, ||x* - x0||_1 = "
      f"{r1['distance1']:.8f}; closed form: change feature {j} only, "
      f"x* = {np.array2string(exact1, precision=6)}, (delta - f(x0)) / ||w||_inf = "
      f"{(MARGIN - f0) / np.max(np.abs(lin.w)):.8f}")
assert np.allclose(r1["x"], exact1, atol=1e-6)
assert r1["distance1"] <= np.sum(np.abs(exact - x0)) + 1e-9   # no farther than the 2-norm's answer

# %% [markdown]
# In the figure: the regions of the classifier, its boundary $f = 0$ (solid) and margins
# $f = \pm 1$ (dashed), the support vectors circled; the point $x_0$ (star), the line
# $f = \delta$ the counterfactual must reach (dotted), and the two answers: the 2-norm's,
# straight across the boundary along $w$, and the 1-norm's, along one axis.

# %%
fig, ax = plt.subplots(figsize=(9, 6))
decision_boundary(lin, X, y, ax=ax)
u = np.linspace(*ax.get_xlim(), 2)
ax.plot(u, (MARGIN - lin.b - lin.w[0] * u) / lin.w[1], ":", color="k", lw=1.3,
        label=f"f(x) = {MARGIN}")
ax.plot(*x0, "*", color="gold", ms=18, mec="k", zorder=5, label="x0")
for x, colour, what in ((exact, "#117a65", "2-norm"), (r1["x"], "#7d3c98", "1-norm")):
    ax.annotate("", xy=x, xytext=x0, zorder=5,
                arrowprops=dict(arrowstyle="->", color=colour, lw=2))
    ax.plot(*x, "o", color=colour, ms=8, mec="k", zorder=6, label=f"counterfactual, {what}")
ax.set_aspect("equal")
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
fig.tight_layout()
plt.show()

# %% [markdown]
# ## An rbf SVM: a nonlinear model for Ipopt
#
# With the rbf kernel, $k(x_i, x) = \exp(-\gamma \lVert x - x_i\rVert^2)$, the embedded
# decision function is a sum of exponentials of the variables, one per support vector. The
# model is no longer a QP: it goes to Ipopt, a local NLP solver. The feasible set
# $f(x) \ge \delta$ is not convex, so a local solver finds *a* local optimum, which depends on
# where it starts. Started at $x_0$ itself, deep in its own class where the expansion is
# nearly flat, it can stall, and say so: the model is *locally* infeasible, a verdict about
# the neighbourhood of the start, not a proof. `optimize(..., starts=k)` would try $k$
# starting points (the one held, then $k - 1$ drawn with a fixed seed); here we know better
# ones: feasible points, where the segments from $x_0$ to the three nearest training points
# of the other class first cross $f = \delta$ (`crossings`), handed to
# `optimize(..., starts=...)`, which keeps the best end.
#
# The data: 60 points of scikit-learn's two moons, an rbf SVM with $\gamma = 2$, $C = 10$.

# %%
Xm, ym = make_moons(60, noise=0.15, random_state=0)
rbf = sm.fit(Xm, ym, formulation="soft_l1_dual", solver="piqp", C=10.0, kernel="rbf", gamma=2.0)
xm0 = Xm[0]
try:
    alone = counterfactual(rbf, xm0, solver="ipopt", margin=MARGIN)
    print(f"started at x0 alone: ||x* - x0||^2 = {alone['distance2']:.8f}")
except LocallyInfeasibleError as exc:
    print(f"started at x0 alone: {type(exc).__name__} (status {exc.status}): {exc}")
starts = crossings(rbf, xm0, Xm, MARGIN)
rr = counterfactual(rbf, xm0, solver="ipopt", margin=MARGIN, starts=starts)
nearest = min(float(np.sum((c - xm0) ** 2)) for c in starts)
print(f"rbf SVM ({rbf.n_support} support vectors, gamma = 2); x0 = "
      f"{np.array2string(xm0, precision=4)}, f(x0) = {rr['f0']:+.4f}")
print(f"m.svm.decision has {str(rr['model'].svm.decision.expr).count('exp(')} exp terms")
print(_line(rr))
print(f"  the best start had ||s - x0||^2 = {nearest:.8f}; "
      f"Ipopt improved it to {rr['distance2']:.8f}")

# %% [markdown]
# A local optimum carries no certificate, so we check it against brute force: the decision
# function on a fine grid (301 x 301 points, spacing 0.01) around $x_0$. No grid point on the
# far side of $f = \delta$ is nearer to $x_0$ than Ipopt's answer.

# %%
g = np.linspace(-1.5, 1.5, 301)
G = xm0 + np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
s = 1.0 if rr["target"] == rbf.classes[1] else -1.0
ok = s * rbf.decision_function(G) >= MARGIN
grid_best = float(np.min(np.sum((G[ok] - xm0) ** 2, axis=1)))
print(f"nearest feasible grid point: ||g - x0||^2 = {grid_best:.8f}; Ipopt: {rr['distance2']:.8f}")
assert abs(s * rr["f"] - MARGIN) <= 1e-6 and rr["self_check"] <= 1e-6
assert rr["distance2"] <= nearest + 1e-9
assert rr["distance2"] <= grid_best + 1e-9

# %% [markdown]
# In the figure, beside the regions and the curved boundary: the starting points (crosses),
# the answer, and the circle about $x_0$ through it. No part of the region beyond
# $f = \delta$ (dotted) reaches inside the circle: the answer is the nearest such point, as
# the grid confirmed, and the circle touches the curve $f = \delta$ there.

# %%
fig, ax = plt.subplots(figsize=(9, 6))
decision_boundary(rbf, Xm, ym, ax=ax)
gx, gy = np.meshgrid(np.linspace(*ax.get_xlim(), 200), np.linspace(*ax.get_ylim(), 200))
F = rbf.decision_function(np.column_stack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
ax.contour(gx, gy, F, levels=[s * MARGIN], colors="k", linestyles=":", linewidths=1.3)
ax.plot([], [], "k:", label=f"f(x) = {s * MARGIN:+g}")
ax.plot(*xm0, "*", color="gold", ms=18, mec="k", zorder=5, label="x0")
ax.plot(*np.array(starts).T, "x", color="k", ms=9, mew=2, zorder=5, label="Ipopt's starts")
ax.annotate("", xy=rr["x"], xytext=xm0, zorder=5,
            arrowprops=dict(arrowstyle="->", color="#117a65", lw=2))
ax.plot(*rr["x"], "o", color="#117a65", ms=8, mec="k", zorder=6, label="counterfactual")
ax.add_patch(plt.Circle(xm0, np.sqrt(rr["distance2"]), fill=False, color="#117a65", ls="--"))
ax.set_aspect("equal")
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Both cases in one call
#
# `main` repeats the two cases with the backends it is given for the linear model and one
# for the rbf model, prints a line per solve and returns the answers (the tests call it).


# %%
def main(*linear_solvers: str, rbf_solver: str = "ipopt", margin: float = 0.1) -> dict:
    linear_solvers = linear_solvers or ("highs", "ipopt")
    X, y = teaching_2d(40, separation=2.5, seed=1)
    lin = sm.fit(X, y, formulation="soft_l1_dual", solver="piqp", C=1.0)
    x0 = X[1]
    exact = projection(lin, x0, margin)
    print(f"linear SVM (w = {np.array2string(lin.w, precision=4)}, b = {lin.b:+.4f}); "
          f"x0 = {np.array2string(x0, precision=4)}, f(x0) = "
          f"{lin.decision_function(x0[None, :])[0]:+.4f}")
    linear = [counterfactual(lin, x0, solver=s, margin=margin) for s in linear_solvers]
    for r in linear:
        print(_line(r))
    print(f"  closed form x* = {np.array2string(exact, precision=6)}  "
          f"||x* - x0||^2 = {np.sum((exact - x0) ** 2):.8f}")

    Xm, ym = make_moons(60, noise=0.15, random_state=0)
    rbf = sm.fit(Xm, ym, formulation="soft_l1_dual", solver="piqp", C=10.0, kernel="rbf",
                 gamma=2.0)
    x0 = Xm[0]
    starts = crossings(rbf, x0, Xm, margin)
    r = counterfactual(rbf, x0, solver=rbf_solver, margin=margin, starts=starts)
    nearest = min(float(np.sum((c - x0) ** 2)) for c in starts)
    print(f"rbf SVM ({rbf.n_support} support vectors, gamma = 2); x0 = "
          f"{np.array2string(x0, precision=4)}, f(x0) = {r['f0']:+.4f}")
    print(_line(r))
    print(f"  started from the {len(starts)} points where the segments to the nearest "
          f"training points of the other class cross the margin (best ||s - x0||^2 = "
          f"{nearest:.8f}): a local optimum")
    return {"linear": linear, "linear_exact": exact, "linear_solution": lin,
            "rbf": r, "rbf_solution": rbf, "rbf_starts": starts}


out = main("highs", "clarabel", margin=MARGIN)
assert all(np.allclose(r["x"], exact, atol=1e-6) for r in out["linear"])
assert np.allclose(out["rbf"]["x"], rr["x"], atol=1e-6)

# %% [markdown]
# ## What to take away
#
# * A trained SVM is a function you can put into your own model: `add_decision_function`
#   adds $f$ of your Pyomo inputs, and optionally the row requiring a class, to a block of
#   your model; everything else in the model is yours (here the objective, and the 1-norm's
#   auxiliary variables).
# * A linear SVM keeps the model linear: an LP or a QP, for any backend, with a closed form to
#   check against in this simple case. Any constraints of your own (bounds on what may
#   change, features that must stay fixed) keep it so.
# * A kernel SVM brings nonlinear, nonconvex expressions: a local solver, started well
#   (`optimize(..., starts=...)`), and a check of the answer against something independent.
#   Its "infeasible" is local (`LocallyInfeasibleError`): only a global solver, or a convex
#   model, proves a model infeasible.

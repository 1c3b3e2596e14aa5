"""The fast (matrix) path against the general (Pyomo plugin) path, and what sends a model
from one to the other: a user's constraint, a larger model, a fixed variable. Mutable C,
C paths, ``extract`` after the user's own solve, and the lazy expressions."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap

import numpy as np
import pyomo.environ as pyo
import pytest
from conftest import (
    CLASSIC,
    FAST_BACKENDS,
    QP_BACKENDS,
    SCIP_MAX_POINTS,
    assert_same_classifier,
    edited_path,
    blobs,
    c_kw,
    data_for,
    eval_points,
    require,
    solve_checked,
    usable,
)

import svm_models as sm

GAMMA = 0.5


def _params(formulation, kernel, C=1.0):
    return dict(kernel=kernel, gamma=GAMMA, **c_kw(formulation, C))


def _why_general(backend: str, word: str) -> str:
    """What the general-path reason must mention: the change to the model (named first,
    also for SCIP, which has no fast path at all)."""
    return word


# ---------------------------------------------------------------------------------------
# Same solution on both paths


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("formulation", CLASSIC)
def test_fast_and_general_paths_agree(fast_backend, formulation, kernel):
    X, y = data_for(formulation, seed=12, l=30)
    Xe = np.vstack([X, eval_points(12)])
    m_fast = sm.build(formulation, X, y, **_params(formulation, kernel))
    m_gen = sm.build(formulation, X, y, **_params(formulation, kernel))
    fast = solve_checked(m_fast, fast_backend, path="auto")
    gen = solve_checked(m_gen, fast_backend, path="general")
    assert fast.path == "fast" and "general_path_reason" not in fast.extra
    assert gen.path == "general"
    assert gen.extra["general_path_reason"] == "the general path was requested"
    assert_same_classifier(fast, gen, Xe)


def test_scip_takes_small_dense_blocks_through_its_plugin_and_says_why():
    """A small dense block (an rbf dual) goes through scip_direct, which SCIP solves as its
    products; a model without one (the linear kernel's dual in its factor form: squares of
    new variables) is the same model in SCIP's matrices, made without Pyomo's walk -- both
    the optimum of the other path."""
    require("scip")
    X, y = blobs(0, l=SCIP_MAX_POINTS)
    sol = sm.fit(X, y, "soft_l1_dual", "scip", C=1.0, kernel="rbf")
    assert sol.path == "general"
    assert "scip_direct takes" in sol.extra["general_path_reason"]
    fast = sm.fit(X, y, "soft_l1_dual", "scip", C=1.0, kernel="rbf", path="fast")
    assert fast.objective == pytest.approx(sol.objective, rel=1e-6)
    lin = sm.fit(X, y, "soft_l1_dual", "scip", C=1.0)
    assert lin.path == "fast" and "general_path_reason" not in lin.extra
    gen = sm.fit(X, y, "soft_l1_dual", "scip", C=1.0, path="general")
    assert lin.objective == pytest.approx(gen.objective, rel=1e-6)


def test_scip_takes_the_records_matrices_with_the_general_paths_optimum():
    """SCIP is given the library's matrices (pyscipopt; a dense block factored), not Pyomo's
    term-by-term walk of the dense objective, beyond SCIP_MATRIX_MIN points (and when the
    fast path is asked for): the same optimum as its general path."""
    require("scip")
    X, y = blobs(0, l=SCIP_MAX_POINTS)
    kw = dict(C=1.0, kernel="rbf", gamma=0.5, time_limit=60)
    sol = sm.fit(X, y, "soft_l1_dual", "scip", path="fast", **kw)
    assert sol.path == "fast" and sol.interface == "pyscipopt"
    assert "general_path_reason" not in sol.extra
    gen = sm.fit(X, y, "soft_l1_dual", "scip", path="general", **kw)
    assert gen.path == "general"
    assert sol.objective == pytest.approx(gen.objective, rel=1e-6)
    np.testing.assert_allclose(sol.alpha, gen.alpha, atol=1e-4)


# ---------------------------------------------------------------------------------------
# A constraint of the user's own


def _constrained_primal(X, y, bound):
    m = sm.build("soft_l1_primal", X, y, C=1.0)
    m.extra = pyo.Constraint(expr=m.b >= bound)
    return m


def test_user_constraint_on_a_primal():
    X, y = blobs(13, l=SCIP_MAX_POINTS)
    names = usable(QP_BACKENDS)
    free = sm.fit(X, y, "soft_l1_primal", names[0], C=1.0)
    bound = free.b + 0.3  # active by construction
    sols = {}
    for n in names:
        m = _constrained_primal(X, y, bound)
        sol = solve_checked(m, n)
        assert sol.path == edited_path(n)
        assert _why_general(n, "extra") in sol.extra["general_path_reason"]
        assert sol.b == pytest.approx(bound, abs=1e-6)  # the constraint holds, and is active
        assert pyo.value(m.b) >= bound - 1e-7
        assert sol.objective > free.objective + 1e-6  # the constraint costs something
        sols[n] = sol
    for a, b in itertools.combinations(names, 2):
        sa, sb = sols[a], sols[b]
        assert sa.objective == pytest.approx(sb.objective, rel=1e-6), (a, b)
        np.testing.assert_allclose(sa.w, sb.w, atol=1e-4 if "scip" in (a, b) else 1e-5,
                                   err_msg=f"{a} vs {b}")


def test_user_constraint_on_a_primal_fast_path_refused():
    X, y = blobs(13, l=20)
    m = _constrained_primal(X, y, 0.5)
    with pytest.raises(sm.SolverError, match="fast path is not possible.*extra"):
        sm.solve(m, require("highs"), path="fast")


def test_user_constraint_on_a_dual():
    X, y = blobs(14, l=SCIP_MAX_POINTS)
    names = usable(QP_BACKENDS)
    free = sm.fit(X, y, "soft_l1_dual", names[0], C=1.0, kernel="rbf", gamma=GAMMA)
    i = int(np.argmax(free.alpha))  # a bounded support vector: alpha_i = C = 1
    assert free.alpha[i] > 0.5
    sols = {}
    for n in names:
        m = sm.build("soft_l1_dual", X, y, C=1.0, kernel="rbf", gamma=GAMMA)
        m.cap = pyo.Constraint(expr=m.alpha[i] <= 0.1)
        sol = solve_checked(m, n)
        assert sol.path == edited_path(n)
        assert _why_general(n, "cap") in sol.extra["general_path_reason"]
        assert sol.alpha[i] <= 0.1 + 1e-7
        assert pyo.value(m.alpha[i]) <= 0.1 + 1e-7
        assert sol.objective < free.objective - 1e-6
        assert abs(y @ sol.alpha) < 1e-6
        sols[n] = sol
    for a, b in itertools.combinations(names, 2):
        assert sols[a].objective == pytest.approx(sols[b].objective, rel=1e-6), (a, b)
        np.testing.assert_allclose(sols[a].alpha, sols[b].alpha, atol=1e-5, err_msg=f"{a} vs {b}")


def test_deactivated_recorded_constraint_goes_general():
    """Without the balance constraint the dual is the SVM without bias (b = 0 in the
    primal): checked against the primal with b fixed at 0, on another backend."""
    X, y = blobs(15, l=30)
    names = usable(FAST_BACKENDS)
    m = sm.build("soft_l1_dual", X, y, C=1.0)
    m.balance.deactivate()
    sol = solve_checked(m, names[0])
    assert sol.path == edited_path(names[0])
    assert "deactivated" in sol.extra["general_path_reason"]
    p = sm.build("soft_l1_primal", X, y, C=1.0)
    p.b.fix(0.0)
    ref = solve_checked(p, names[-1])
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    np.testing.assert_allclose(sol.w, ref.w, atol=1e-5)


# ---------------------------------------------------------------------------------------
# An SVM block inside a larger model


@pytest.mark.parametrize("backend", QP_BACKENDS)
def test_svm_block_inside_a_larger_model(backend):
    require(backend)
    X, y = blobs(16, l=SCIP_MAX_POINTS if backend == "scip" else 30)
    alone = sm.fit(X, y, "soft_l1_dual", usable(FAST_BACKENDS)[0], C=1.0, kernel="rbf",
                   gamma=GAMMA)
    m = pyo.ConcreteModel()
    m.svm = pyo.Block()
    blk = sm.build("soft_l1_dual", X, y, block=m.svm, C=1.0, kernel="rbf", gamma=GAMMA)
    assert blk is m.svm
    m.t = pyo.Var()
    m.svm.objective.deactivate()
    m.obj = pyo.Objective(expr=m.svm.objective.expr - (m.t - 1.0) ** 2, sense=pyo.maximize)
    sol = solve_checked(m, backend)
    assert sol.path == edited_path(backend)
    assert pyo.value(m.t) == pytest.approx(1.0, abs=1e-5)
    assert sol.objective == pytest.approx(alone.objective, rel=1e-6)
    assert pyo.value(m.obj) == pytest.approx(alone.objective, rel=1e-6)
    np.testing.assert_allclose(sol.alpha, alone.alpha, atol=1e-5)
    assert sol.b == pytest.approx(alone.b, abs=1e-5)
    again = sm.extract(m.svm)  # the same block, read again
    np.testing.assert_array_equal(again.alpha, sol.alpha)
    assert again.b == sol.b


@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_svm_block_coupled_to_the_outer_model(backend):
    """The outer model pulls the bias towards 0.7: min svm + 10 (t - 0.7)^2, t = b. The
    answer is the same whichever backend solves it, and t equals the block's b."""
    require(backend)
    X, y = blobs(17, l=30)
    ref_backend = [n for n in usable(FAST_BACKENDS) if n != backend][0]

    def model():
        m = pyo.ConcreteModel()
        m.svm = pyo.Block()
        sm.build("soft_l1_primal", X, y, block=m.svm, C=1.0)
        m.t = pyo.Var()
        m.link = pyo.Constraint(expr=m.t == m.svm.b)
        m.svm.objective.deactivate()
        m.obj = pyo.Objective(expr=m.svm.objective.expr + 10.0 * (m.t - 0.7) ** 2)
        return m

    m, r = model(), model()
    sol = solve_checked(m, backend)
    ref = solve_checked(r, ref_backend)
    assert pyo.value(m.t) == pytest.approx(sol.b, abs=1e-7)
    assert pyo.value(m.obj) == pytest.approx(pyo.value(r.obj), rel=1e-6)
    assert sol.b == pytest.approx(ref.b, abs=1e-5)
    np.testing.assert_allclose(sol.w, ref.w, atol=1e-5)
    free = sm.fit(X, y, "soft_l1_primal", backend, C=1.0)
    assert abs(sol.b - 0.7) < abs(free.b - 0.7)  # pulled towards 0.7


def test_two_svm_blocks_need_extract():
    X, y = blobs(18, l=20)
    m = pyo.ConcreteModel()
    m.a = pyo.Block()
    m.b = pyo.Block()
    sm.build("soft_l1_dual", X, y, block=m.a, C=1.0)
    sm.build("soft_l1_dual", X, y, block=m.b, C=10.0)
    with pytest.raises(sm.ParameterError, match="2 SVM blocks"):
        sm.solve(m, "highs")


# ---------------------------------------------------------------------------------------
# A fixed variable


@pytest.mark.parametrize("backend", QP_BACKENDS)
def test_fixed_variable_goes_general(backend):
    require(backend)
    X, y = blobs(19, l=SCIP_MAX_POINTS)
    names = usable(FAST_BACKENDS)
    m = sm.build("soft_l1_primal", X, y, C=1.0)
    m.b.fix(0.3)
    sol = solve_checked(m, backend)
    assert sol.path == edited_path(backend)
    assert _why_general(backend, "fixed") in sol.extra["general_path_reason"]
    assert sol.b == 0.3 and m.b.fixed
    # against the same model solved by another backend
    r = sm.build("soft_l1_primal", X, y, C=1.0)
    r.b.fix(0.3)
    ref = solve_checked(r, [n for n in names if n != backend][0])
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    np.testing.assert_allclose(sol.w, ref.w, atol=1e-4 if backend == "scip" else 1e-5)


def test_fixed_dual_variable():
    X, y = blobs(20, l=30)
    names = usable(FAST_BACKENDS)
    free = sm.fit(X, y, "soft_l1_dual", names[0], C=1.0)
    i = int(np.argmax(free.alpha))
    sols = []
    for n in names:
        m = sm.build("soft_l1_dual", X, y, C=1.0)
        m.alpha[i].fix(0.0)
        sol = solve_checked(m, n)
        assert sol.path == edited_path(n) and sol.alpha[i] == 0.0
        sols.append(sol)
    for s in sols[1:]:
        assert s.objective == pytest.approx(sols[0].objective, rel=1e-6)
        np.testing.assert_allclose(s.alpha, sols[0].alpha, atol=1e-5)
    assert sols[0].objective < free.objective


# ---------------------------------------------------------------------------------------
# Mutable C: change it and re-solve, no rebuild


@pytest.mark.parametrize("path", ["fast", "general"])
@pytest.mark.parametrize("formulation", ["soft_l1_primal", "soft_l1_dual", "soft_l2_primal",
                                         "soft_l2_dual"])
def test_mutable_C_resolve_equals_fresh_build(fast_backend, formulation, path):
    X, y = blobs(21, l=30)
    Xe = np.vstack([X, eval_points(21)])
    m = sm.build(formulation, X, y, C=1.0, kernel="rbf", gamma=GAMMA)
    first = solve_checked(m, fast_backend, path=path)
    m.C = 7.0
    second = solve_checked(m, fast_backend, path=path)
    assert second.C == 7.0 and second.path == path
    assert abs(second.objective - first.objective) > 1e-3  # C mattered
    other = [n for n in usable(FAST_BACKENDS) if n != fast_backend] or [fast_backend]
    fresh = solve_checked(sm.build(formulation, X, y, C=7.0, kernel="rbf", gamma=GAMMA), other[0])
    assert_same_classifier(second, fresh, Xe)


@pytest.mark.parametrize("formulation", ["soft_l1_dual", "soft_l2_dual", "soft_l1_primal"])
def test_fit_path_equals_separate_fits(fast_backend, formulation):
    X, y = blobs(22, l=30)
    Xe = np.vstack([X, eval_points(22)])
    Cs = [10.0, 0.1, 1.0, 100.0, 1.0]  # not monotone: a warm start must not leak
    path = sm.fit_path(X, y, Cs, formulation=formulation, solver=fast_backend, kernel="rbf",
                       gamma=GAMMA, time_limit=10.0)
    assert [s.C for s in path] == Cs
    for C, s in zip(Cs, path):
        single = sm.fit(X, y, formulation, fast_backend, C=C, kernel="rbf", gamma=GAMMA)
        assert_same_classifier(s, single, Xe)


# ---------------------------------------------------------------------------------------
# extract() after the user's own SolverFactory solve


PLUGINS = {"gurobi_direct": "gurobi", "highs": "highs", "cyipopt": "ipopt"}
#: A careful user's tight options (each interface's own names): the comparison below is
#: about extract(), not about the solvers' default accuracy (~1e-6 .. 1e-8).
USER_OPTIONS = {"gurobi_direct": {"BarConvTol": 1e-12, "OptimalityTol": 1e-9, "FeasibilityTol": 1e-9},
                "highs": {},
                "cyipopt": {"tol": 1e-11, "bound_relax_factor": 0.0}}


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("formulation", CLASSIC)
@pytest.mark.parametrize("plugin", list(PLUGINS))
def test_extract_after_users_own_solve(plugin, formulation, kernel):
    require(PLUGINS[plugin])
    X, y = data_for(formulation, seed=23, l=30)
    Xe = np.vstack([X, eval_points(23)])
    m = sm.build(formulation, X, y, **_params(formulation, kernel))
    res = pyo.SolverFactory(plugin).solve(m, options=USER_OPTIONS[plugin])
    assert str(res.solver.termination_condition) == "optimal"
    mine = sm.extract(m)
    assert mine.path == "user"
    if formulation.endswith("primal"):
        assert mine.extra["alpha_source"] == "kkt_least_squares"  # no duals given
    ref = sm.fit(X, y, formulation, usable(FAST_BACKENDS)[0], **_params(formulation, kernel))
    assert_same_classifier(mine, ref, Xe)


@pytest.mark.parametrize("plugin", ["gurobi_direct", "highs"])
def test_extract_with_the_users_duals(plugin):
    """The user's own dual Suffix (these interfaces report d(obj)/d(bound) for a
    minimisation, the package's convention) gives alpha from the multipliers."""
    require(PLUGINS[plugin])
    X, y = blobs(24, l=30)
    m = sm.build("soft_l1_primal", X, y, C=1.0, kernel="rbf", gamma=GAMMA)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    pyo.SolverFactory(plugin).solve(m)
    sol = sm.extract(m, duals=m.dual)
    assert sol.extra["alpha_source"] == "multipliers"
    ref = sm.fit(X, y, "soft_l1_dual", usable(FAST_BACKENDS)[0], C=1.0, kernel="rbf",
                 gamma=GAMMA)
    np.testing.assert_allclose(sol.alpha, ref.alpha, atol=1e-5)


def test_extract_after_users_own_scip_solve_in_a_fresh_process():
    """Pyomo's SCIP interface on a freshly built model, in a process where svm_models has
    not solved anything with SCIP before: the model must be complete for every consumer."""
    require("scip")
    X, y = blobs(25, l=SCIP_MAX_POINTS)
    code = textwrap.dedent(f"""
        import json, numpy as np, pyomo.environ as pyo, svm_models as sm
        X = np.array({X.tolist()!r}); y = np.array({y.tolist()!r})
        out = {{}}
        for f in ("soft_l1_primal", "soft_l1_dual"):
            m = sm.build(f, X, y, C=1.0)
            pyo.SolverFactory("scip_direct").solve(m)
            s = sm.extract(m)
            out[f] = {{"w": s.w.tolist(), "b": s.b, "alpha": s.alpha.tolist(),
                      "source": s.extra["alpha_source"]}}
        print(json.dumps(out))
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    ref = sm.fit(X, y, "soft_l1_dual", usable(FAST_BACKENDS)[0], C=1.0)
    # SCIP at its own default tolerances (the user's solve, not ours): w is pinned only to
    # about sqrt of its objective accuracy, so 1e-3 here
    for f, s in got.items():
        np.testing.assert_allclose(s["w"], ref.w, atol=1e-3, err_msg=f)
        assert s["b"] == pytest.approx(ref.b, abs=1e-3), f
        np.testing.assert_allclose(s["alpha"], ref.alpha, atol=1e-3, err_msg=f)
    assert got["soft_l1_primal"]["source"] == "kkt_least_squares"


# ---------------------------------------------------------------------------------------
# Lazy expressions: the fast path never builds the l^2 terms; the model stays correct


@pytest.mark.parametrize("formulation", ["hard_dual", "soft_l1_dual", "soft_l2_dual"])
def test_fast_solve_leaves_quadratic_form_unbuilt(fast_backend, formulation):
    X, y = data_for(formulation, seed=26, l=40)
    m = sm.build(formulation, X, y, kernel="rbf", gamma=GAMMA, **c_kw(formulation))
    assert m.quad.is_materialised is False
    sol = solve_checked(m, fast_backend)
    assert sol.path == "fast"
    assert m.quad.is_materialised is False, "the fast path (or extraction) built the l^2 terms"
    # the Pyomo model, read now, evaluates to the solver's optimum
    assert pyo.value(m.objective) == pytest.approx(sol.objective, rel=1e-9)
    assert m.quad.is_materialised is True
    # and, materialised, solves to the same answer on the general path
    again = solve_checked(m, fast_backend, path="general")
    assert again.objective == pytest.approx(sol.objective, rel=1e-6)


def test_fast_solve_leaves_primal_kernel_form_unbuilt(fast_backend):
    X, y = blobs(27, l=40)
    m = sm.build("soft_l1_primal", X, y, C=1.0, kernel="rbf", gamma=GAMMA)
    sol = solve_checked(m, fast_backend)
    assert sol.path == "fast"
    assert m.ww.is_materialised is False
    assert pyo.value(m.objective) == pytest.approx(sol.objective, rel=1e-9)
    # the margin constraints hold in the Pyomo model itself
    for i, cd in m.margin.items():
        assert pyo.value(cd.body) >= pyo.value(cd.lower) - 1e-6


@pytest.mark.parametrize("solver", ["piqp", "highs", "clarabel"])
def test_fit_path_with_every_alpha_at_C_is_proved_without_a_solve(solver):
    """Small C on balanced data: every alpha sits at C. The re-solve then has an empty
    working set; the balance row's multiplier alone proves optimality (issue 16's C grids)."""
    require(solver)
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(-0.3, 1.0, (40, 3)), rng.normal(0.3, 1.0, (40, 3))])
    y = np.r_[-np.ones(40), np.ones(40)]
    Cs = [1e-3, 2e-3, 5e-3, 1.0]
    path = sm.fit_path(X, y, Cs, formulation="soft_l1_dual", solver=solver, kernel="rbf",
                       gamma=0.5)
    assert [s.interface for s in path[1:3]] == ["working set"] * 2   # no solver call
    for C, s in zip(Cs, path):
        ref = sm.fit(X, y, "soft_l1_dual", solver, C=C, kernel="rbf", gamma=0.5)
        assert s.objective == pytest.approx(ref.objective, rel=1e-8, abs=1e-12)
        np.testing.assert_allclose(s.alpha, ref.alpha, atol=1e-7 * C)
        assert s.b == pytest.approx(ref.b, abs=1e-6)
        assert s.duality_gap is not None and abs(s.duality_gap) <= 1e-8
    # all at C: the objective is sum(alpha) - 1/2 alpha'G alpha with alpha = C e
    from sklearn.metrics.pairwise import rbf_kernel
    C = Cs[1]
    G = np.outer(y, y) * rbf_kernel(X, gamma=0.5)
    assert path[1].objective == pytest.approx(80 * C - 0.5 * C * C * G.sum(), rel=1e-10)
    # one class more: alpha = C e breaks the balance row; never proved, solved as usual
    Xu, yu = X[1:], y[1:]
    path = sm.fit_path(Xu, yu, Cs[:2], formulation="soft_l1_dual", solver=solver,
                       kernel="rbf", gamma=0.5)
    assert path[1].interface != "working set"


@pytest.mark.parametrize("solver", ["piqp", "highs", "clarabel"])
def test_fit_path_re_solves_on_the_previous_active_set(solver):
    """Along a C path the free set changes little: a re-solve holds the previous solution's
    bounded variables, solves the KKT system of the free ones directly, and corrects the
    active set (primal-dual active set) until every optimality condition holds. Each answer
    equals a fresh fit; with the linear kernel many free points make the system singular
    and the re-solve falls back to the working set / the solver."""
    require(solver)
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(-0.4, 1.0, (45, 4)), rng.normal(0.4, 1.0, (45, 4))])
    y = np.r_[-np.ones(45), np.ones(45)]
    Cs = np.logspace(-1.5, 2.5, 12).tolist()
    for kernel, kw in (("rbf", {"gamma": 0.7}), ("linear", {})):
        path = sm.fit_path(X, y, Cs, formulation="soft_l1_dual", solver=solver, kernel=kernel,
                           **kw)
        used = [s.interface == "active set" for s in path[1:]]
        if kernel == "rbf":
            assert sum(used) >= 8, [s.interface for s in path]
        for C, s in zip(Cs, path):
            ref = sm.fit(X, y, "soft_l1_dual", solver, C=C, kernel=kernel, **kw)
            assert s.objective == pytest.approx(ref.objective, rel=1e-8), (kernel, C)
            np.testing.assert_allclose(s.alpha, ref.alpha, atol=1e-6 * C)
            assert s.b == pytest.approx(ref.b, abs=1e-6)
            assert s.duality_gap is not None and abs(s.duality_gap) <= 1e-8
            assert s.kkt["primal_infeasibility"] <= 1e-8 * max(1.0, C)


@pytest.mark.parametrize("solver", ["piqp", "clarabel"])
def test_a_re_solve_honours_the_users_bounds_and_fixes(solver):
    """A user's edits between re-solves of one model: a tighter bound and a new C are read by
    the active-set re-solve (fast path), a fix sends the solve to the general path; each
    answer equals a fresh model with the same edits."""
    require(solver)
    rng = np.random.default_rng(8)
    X = np.vstack([rng.normal(-0.5, 1.0, (30, 3)), rng.normal(0.5, 1.0, (30, 3))])
    y = np.r_[-np.ones(30), np.ones(30)]
    kw = dict(kernel="rbf", gamma=0.5)

    def fresh(C, ub=None, fix=None):
        m = sm.build("soft_l1_dual", X, y, C=C, **kw)
        if ub is not None:
            m.alpha[7].setub(ub)
        if fix is not None:
            m.alpha[3].fix(fix)
        return sm.solve(m, solver)

    m = sm.build("soft_l1_dual", X, y, C=1.0, **kw)
    state: dict = {}
    first = sm.solve(m, solver, _state=state)
    assert first.alpha[7] > 0.05        # the bound below binds
    m.C.set_value(2.0)
    m.alpha[7].setub(0.02)
    sol = sm.solve(m, solver, _state=state)
    assert sol.interface == "active set"
    ref = fresh(2.0, ub=0.02)
    assert sol.alpha[7] == pytest.approx(0.02, abs=1e-12)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
    np.testing.assert_allclose(sol.alpha, ref.alpha, atol=1e-6)
    m.alpha[3].fix(0.05)
    sol = sm.solve(m, solver, _state=state)
    ref = fresh(2.0, ub=0.02, fix=0.05)
    assert sol.alpha[3] == pytest.approx(0.05, abs=1e-12)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
    m.alpha[3].unfix()
    m.alpha[7].setub(2.0)
    sol = sm.solve(m, solver, _state=state)
    ref = fresh(2.0)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
    np.testing.assert_allclose(sol.alpha, ref.alpha, atol=1e-6)

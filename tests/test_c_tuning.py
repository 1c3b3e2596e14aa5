"""Convex tuning of C (formulations/c_tuning.md): the QCQP over M(g) = (1-g) K/r + g I/l.

Every check is against something computed another way: the plain SVM optimum over a scan of
g (the hard-margin dual on the precomputed kernel M(g), a QP solved by PIQP), the saddle
point, the 2-norm soft margin at C = C*, closed-form criteria for where g* must fall, every
other backend, the quadratic t-form against the norm (cone) form, and Pyomo's own reading of
the model against the builder's record. The robustness set (issue 12) runs every QCQP
backend on real and synthetic data, all three variants, and the same data perturbed at the
1e-12 level. Real solvers throughout, no mocks. On CI (``CI=true``) a missing backend fails.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest
from conftest import require
from sklearn.metrics.pairwise import rbf_kernel

import svm_models as sm
from svm_models.datasets import benchmark_data, breast_cancer
from svm_models.formulations import c_tuning as ct
from svm_models.model.reader import from_pyomo
from svm_models.model.record import verify
from svm_models.model.standard_form import assemble

ROOT = Path(__file__).resolve().parents[1]


def need(backend: str) -> None:
    """Skip without the backend -- or, on CI (``CI=true``), fail (conftest's rule)."""
    require(backend)


#: agreement with the Ipopt reference, scaled to each backend's accuracy:
#: (objective relative, g absolute, alpha relative to max alpha)
BACKEND_TOL = {
    "ipopt": (1e-9, 1e-6, 1e-6),
    "gurobi": (1e-8, 1e-5, 1e-5),
    "clarabel": (1e-7, 1e-4, 1e-4),
    "scip": (1e-8, 1e-5, 1e-5),
}


def fit(X, y, variant="standard", solver="ipopt", **kw):
    need(solver)
    # these tests are about the answer, not the time: past the default limit scaled to the
    # problem (7.5 s at these sizes; SCIP's spatial branch and bound on a busy machine)
    kw.setdefault("time_limit", 120.0)
    return sm.fit(X, y, formulation=f"c_tuning_{variant}", solver=solver, **kw)


# ---------------------------------------------------------------------------------------
# Data: seeded (issue 9's generator) and real (Wisconsin breast cancer, standardised)


def seeded(l=40, d=20, shift=0.2):
    return benchmark_data(l, d, shift=shift)


def cancer(l=60):
    Xtr, Xte, ytr, yte = breast_cancer()
    return Xtr[:l], np.where(ytr[:l] == 1, 1.0, -1.0), Xte, np.where(yte == 1, 1.0, -1.0)


CASES = {  # name -> (X, y, kernel parameters)
    "seeded-linear": (*seeded(), {"kernel": "linear"}),
    "seeded-rbf": (*seeded(), {"kernel": "rbf", "gamma": 1 / 20}),
    "cancer-linear": (*cancer()[:2], {"kernel": "linear"}),
    "cancer-rbf": (*cancer()[:2], {"kernel": "rbf", "gamma": 1 / 30}),
}


def gram(X, kw):
    """The kernel matrix, computed without svm_models."""
    if kw["kernel"] == "linear":
        return X @ X.T
    return rbf_kernel(X, X, gamma=kw["gamma"])


def M_of(K, g):
    l, r = K.shape[0], np.trace(K)
    return (1 - g) * K / r + g * np.eye(l) / l


def svm_value(K, y, g):
    """D(g): the optimum of max e'a - 1/2 a'G(M(g))a, a >= 0, y'a = 0 (a QP, by PIQP);
    +inf where the hard margin with M(g) has no solution (the dual is unbounded)."""
    need("piqp")
    try:
        s = sm.fit(M_of(K, g), y, formulation="hard_dual", solver="piqp", kernel="precomputed")
    except sm.NotSeparableError:
        return np.inf, None
    return s.objective, s


_CACHE: dict = {}


def qcqp(case, variant="standard"):
    key = (case, variant)
    if key not in _CACHE:
        X, y, kw = CASES[case]
        _CACHE[key] = fit(X, y, variant, **kw)
    return _CACHE[key]


# ---------------------------------------------------------------------------------------
# The figure of the C-tuning benchmark, and the fast path


def test_the_benchmark_figure_at_l1000_standard_rbf():
    """l = 1000, d = 20, shift 0.35, rbf gamma = 1/20, standard variant: the optimum
    167981.6033 is the QCQP objective e'a - t/2 as formulations/c_tuning.md writes it (trace-one M(g))."""
    X, y = benchmark_data(1000)
    sol = fit(X, y, "standard", kernel="rbf", gamma=1 / 20)
    assert sol.path == "fast"
    assert sol.objective == pytest.approx(167981.6033, abs=1e-4)
    # the same number from the solution's own pieces: e'a - 1/2 a'G(M(g*))a
    K = rbf_kernel(X, X, gamma=1 / 20)
    a, g = sol.alpha, sol.g
    ya = y * a
    assert a.sum() - 0.5 * ya @ M_of(K, g) @ ya == pytest.approx(167981.6033, abs=1e-4)
    assert 0 < g < 1 and abs(sol.g_multipliers - sol.g_kkt) < 1e-7
    assert sol.C == pytest.approx(1000 * (1 - g) / (g * np.trace(K)), rel=1e-12)
    assert sol.interface == "cyipopt" and sol.extra["active"] == ["hi", "lo"]


def test_fast_path_never_builds_the_factor_rows():
    X, y, kw = CASES["seeded-rbf"]
    m = sm.build("c_tuning_standard", X, y, **kw)
    sol = sm.solve(m, "ipopt")
    assert sol.path == "fast"
    assert not any(e.is_materialised for e in m.Fv.values())


# ---------------------------------------------------------------------------------------
# Saddle point, scan over g, multipliers vs KKT


@pytest.mark.parametrize("case", list(CASES))
def test_scan_over_g_is_never_below_the_qcqp_value_and_smallest_at_g_star(case):
    X, y, kw = CASES[case]
    sol = qcqp(case)
    K = gram(X, kw)
    V = sol.objective
    grid = np.linspace(0.0, 1.0, 21)
    values = np.array([svm_value(K, y, g)[0] for g in grid])
    D_star, _ = svm_value(K, y, sol.g)
    tol = 1e-7 * abs(V)
    assert np.all(values >= V - tol), (values.min(), V)
    assert D_star == pytest.approx(V, rel=1e-6)                  # min_g D(g) = QCQP value
    assert D_star <= values.min() + tol                         # smallest at g*
    assert abs(grid[np.argmin(values)] - sol.g) <= 0.05 + 1e-12  # the grid's best is next to g*


@pytest.mark.parametrize("case", list(CASES))
def test_saddle_point_and_the_two_recoveries_of_g(case):
    X, y, _ = CASES[case]
    sol = qcqp(case)
    chk = sm.saddle_point_check(X, y, sol, solver="ipopt")
    assert chk.ok and chk.value_rel_diff <= 1e-6 and chk.alpha_rel_diff <= 1e-6, chk
    ex = sol.extra
    assert abs(ex["eta_sum"] - 0.5) < 1e-7 and ex["eta_hi"] >= 0 and ex["eta_lo"] >= 0
    assert abs(sol.g_multipliers - sol.g_kkt) <= 1e-5
    assert ex["g_agreement"] == pytest.approx(abs(sol.g_multipliers - sol.g_kkt))
    # the multiplier of balance is +b (formulations/c_tuning.md), b from the KKT conditions
    assert ex["b_multiplier"] == pytest.approx(sol.b, abs=1e-6)


def test_g_star_maps_to_C_star_of_the_2norm_soft_margin():
    """For 0 < g* < 1 the QCQP's classifier is the 2-norm soft margin SVM at C* = l(1-g*)/(g* r):
    its alpha is a*(1-g*)/r, same b, value V(1-g*)/r, same predictions."""
    X, y, kw = CASES["cancer-rbf"]
    Xte = cancer()[2]
    sol = qcqp("cancer-rbf")
    K = gram(X, kw)
    l, r, g = len(y), np.trace(K), sol.g
    assert 0 < g < 1
    C = l * (1 - g) / (g * r)
    assert sol.C == pytest.approx(C, rel=1e-12)
    assert sol.gamma == pytest.approx(1 / C, rel=1e-12)
    ref = sm.fit(X, y, formulation="soft_l2_dual", solver="piqp", C=C, **kw)
    np.testing.assert_allclose(sol.alpha * (1 - g) / r, ref.alpha, atol=1e-6 * ref.alpha.max())
    assert sol.b == pytest.approx(ref.b, abs=1e-6)
    assert sol.objective * (1 - g) / r == pytest.approx(ref.objective, rel=1e-7)
    assert sol.extra["soft_l2_objective_at_C"] == pytest.approx(ref.objective, rel=1e-7)
    np.testing.assert_allclose(sol.xi, ref.xi, atol=1e-6 * max(1.0, ref.xi.max()))
    np.testing.assert_allclose(sol.decision_function(Xte), ref.decision_function(Xte), atol=1e-6)
    # and by hand: f(x) = sum_i a_i y_i (1-g)/r k(x_i, x) + b
    f = rbf_kernel(Xte, X, gamma=kw["gamma"]) @ (sol.alpha * y) * (1 - g) / r + sol.b
    np.testing.assert_allclose(sol.decision_function(Xte), f, atol=1e-9)


def test_linear_kernel_w_is_the_expansion():
    X, y, _ = CASES["cancer-linear"]
    sol = qcqp("cancer-linear")
    r = np.trace(X @ X.T)
    np.testing.assert_allclose(sol.w, X.T @ (sol.alpha * y) * (1 - sol.g) / r, atol=1e-12)
    assert sol.margin == pytest.approx(1 / np.linalg.norm(sol.w))


# ---------------------------------------------------------------------------------------
# Variants: where they agree, and where the general one leaves [0, 1]


def test_standard_and_general_agree_when_general_g_star_is_in_0_1():
    for case in ("seeded-rbf", "cancer-rbf"):
        std, gen = qcqp(case, "standard"), qcqp(case, "general")
        assert 0 < gen.g < 1
        assert gen.g == pytest.approx(std.g, abs=1e-7)
        assert gen.objective == pytest.approx(std.objective, rel=1e-10)
        np.testing.assert_allclose(gen.alpha, std.alpha, atol=1e-6 * std.alpha.max())
        assert gen.C == pytest.approx(std.C, rel=1e-6)
        nonneg = qcqp(case, "general_nonneg")
        assert nonneg.g == pytest.approx(std.g, abs=1e-7)


def test_general_range_from_the_spectrum():
    X, y, kw = CASES["cancer-rbf"]
    K = gram(X, kw)
    lam = np.linalg.eigvalsh(K)
    l, r = len(y), np.trace(K)
    g_min, g_max = -1 / (r / (l * lam[0]) - 1), 1 / (1 - r / (l * lam[-1]))
    gen = qcqp("cancer-rbf", "general")
    ex = gen.extra
    assert (gen.g_lo, gen.g_hi) == pytest.approx((g_min, g_max), rel=1e-9)
    assert ex["g_min"] < 0 < 1 < ex["g_max"]
    assert np.linalg.eigvalsh(M_of(K, g_min))[0] > -1e-12      # the ends are PSD...
    assert np.linalg.eigvalsh(M_of(K, g_max))[0] > -1e-12
    assert np.linalg.eigvalsh(M_of(K, g_min - 0.01))[0] < 0    # ...and nothing beyond
    assert np.linalg.eigvalsh(M_of(K, g_max + 0.01))[0] < 0
    assert qcqp("cancer-rbf", "general_nonneg").g_hi == 1.0
    # linear kernel with d < l: lam_min = 0, so g_min = 0 exactly
    assert qcqp("seeded-linear", "general").extra["g_min"] == 0.0


def test_general_picks_g_below_0_a_reduced_feature_space():
    """Separable, high-dimensional, diagonally dominant rbf kernel. D'(0) = -1/2 (a'a/l - e'a)
    at the hard-margin solution a of K/r, so g* < 0 exactly when a'a/l < e'a there: checked
    from that solution first. The standard variant stops at g = 0 (C* = inf, a hard margin)."""
    X, y = seeded(40, 20, 0.35)
    K = rbf_kernel(X, X, gamma=1 / 20)
    _, hard = svm_value(K, y, 0.0)
    a0 = hard.alpha
    assert a0 @ a0 / len(y) < a0.sum()                 # the criterion: g* < 0 must follow
    std = fit(X, y, "standard", kernel="rbf", gamma=1 / 20)
    gen = fit(X, y, "general", kernel="rbf", gamma=1 / 20)
    assert std.g == 0.0 and std.C == float("inf") and std.extra["active"] == ["lo"]
    assert gen.extra["g_min"] < gen.g < 0
    assert gen.C is None and "reduced feature space" in gen.C_reason
    assert "no positive C" in gen.C_reason
    # the general variant's optimum is strictly better than every g >= 0
    D_star, _ = svm_value(K, y, gen.g)
    assert D_star == pytest.approx(gen.objective, rel=1e-6)
    assert D_star < std.objective * (1 - 1e-4)
    for g in np.linspace(gen.extra["g_min"], 1, 12):
        assert svm_value(K, y, g)[0] >= gen.objective * (1 - 1e-7)
    chk = sm.saddle_point_check(X, y, gen, solver="ipopt")
    assert chk.ok, chk
    assert abs(gen.g_multipliers - gen.g_kkt) <= 1e-5


def test_general_picks_g_above_1_negative_weight_on_K():
    """Noise-dominated labels: D'(1) = -1/2 (a'a/l - a'G(K)a/r) at a = l e (the g = 1 solution
    for balanced labels) is negative exactly when y'Ky < trace K: then g* > 1. The standard
    variant stops at g = 1, where no positive C exists either."""
    X, y = seeded(40, 20, 0.1)
    K = rbf_kernel(X, X, gamma=1 / 20)
    assert y.sum() == 0 and y @ K @ y < np.trace(K)    # the criterion: g* > 1 must follow
    std = fit(X, y, "standard", kernel="rbf", gamma=1 / 20)
    gen = fit(X, y, "general", kernel="rbf", gamma=1 / 20)
    assert std.g == 1.0 and std.C is None and "g* = 1" in std.C_reason
    np.testing.assert_allclose(std.alpha, len(y), rtol=1e-6)   # a = l e at g = 1
    assert 1 < gen.g < gen.extra["g_max"]
    assert gen.C is None and "negative weight" in gen.C_reason
    D_star, _ = svm_value(K, y, gen.g)
    assert D_star == pytest.approx(gen.objective, rel=1e-6)
    assert D_star < std.objective
    assert np.linalg.eigvalsh(M_of(K, gen.g))[0] > 0        # M(g*) is still PSD
    chk = sm.saddle_point_check(X, y, gen, solver="ipopt")
    assert chk.ok, chk


def test_perfectly_anti_aligned_labels_push_g_star_to_g_max():
    """Points on a line with alternating labels: neighbours disagree, so the best kernel is
    'as much -K as PSD allows': g* = g_max, and M(g*) is singular. Reported, not hidden."""
    l = 30
    X = np.arange(l, dtype=float)[:, None]
    y = np.where(np.arange(l) % 2 == 0, 1.0, -1.0)
    gen = fit(X, y, "general", kernel="rbf", gamma=0.5)
    assert gen.g == gen.extra["g_max"] and gen.extra["active"] == ["hi"]
    K = rbf_kernel(X, X, gamma=0.5)
    assert abs(np.linalg.eigvalsh(M_of(K, gen.g))[0]) < 1e-12
    assert gen.C is None and "negative weight" in gen.C_reason
    assert sm.saddle_point_check(X, y, gen, solver="ipopt").ok


# ---------------------------------------------------------------------------------------
# Every QCQP backend, both paths, gives the same g*, objective and alpha


BACKEND_RUNS = [("ipopt", "fast"), ("ipopt", "general"), ("gurobi", "fast"),
                ("gurobi", "general"), ("clarabel", "fast"), ("clarabel", "general"),
                ("scip", "general")]


@pytest.mark.parametrize("variant,data", [("standard", (40, 20, 0.2)), ("general", (40, 20, 0.35))],
                         ids=["standard-interior", "general-g-below-0"])
@pytest.mark.parametrize("solver,path", BACKEND_RUNS, ids=[f"{s}-{p}" for s, p in BACKEND_RUNS])
def test_backends_agree(solver, path, variant, data):
    need(solver)
    X, y = seeded(*data)
    kw = {"kernel": "rbf", "gamma": 1 / 20}
    key = ("backend-ref", variant, data)
    if key not in _CACHE:
        _CACHE[key] = fit(X, y, variant, "ipopt", **kw)
    ref = _CACHE[key]
    sol = fit(X, y, variant, solver, path="auto" if solver == "scip" else path, **kw)
    assert sol.path == path and sol.solver == solver
    t_obj, t_g, t_a = BACKEND_TOL[solver]
    assert sol.objective == pytest.approx(ref.objective, rel=t_obj)
    assert sol.g == pytest.approx(ref.g, abs=t_g)
    assert np.max(np.abs(sol.alpha - ref.alpha)) <= t_a * ref.alpha.max()
    assert sol.b == pytest.approx(ref.b, abs=10 * t_g)
    ex = sol.extra
    if solver == "scip":   # no duals at all: g* from the KKT conditions only
        assert sol.g_multipliers is None and "no multipliers" in ex["g_multipliers_reason"]
    else:                  # multipliers normalised: eta >= 0, eta_hi + eta_lo = 1/2, b = +mult
        assert abs(ex["eta_sum"] - 0.5) <= 1e-6
        assert min(ex["eta_hi"], ex["eta_lo"]) >= -1e-6
        assert sol.g_multipliers == pytest.approx(ref.g, abs=10 * t_g)
        assert ex["b_multiplier"] == pytest.approx(ref.b, abs=10 * t_g)


# The robustness set (issue 12): real and synthetic data, linear and rbf, all three
# variants, each also perturbed at the 1e-12 level (the t-form's failures depended on such
# differences between machines). Every QCQP backend must end optimal and agree with Ipopt;
# Ipopt's value is checked independently against the plain SVM at M(g*) (PIQP).

ROBUST_DATA = {
    "seeded-linear": CASES["seeded-linear"],
    "seeded-rbf": CASES["seeded-rbf"],
    "seeded-rbf-shift": (*seeded(40, 20, 0.35), {"kernel": "rbf", "gamma": 1 / 20}),
    "cancer-linear": CASES["cancer-linear"],
    "cancer-rbf": CASES["cancer-rbf"],
}
ROBUST = [(case, variant, eps) for case in ROBUST_DATA for variant in ct.VARIANTS
          for eps in (0.0, 1e-12)]


def _robust_instance(case, eps):
    X, y, kw = ROBUST_DATA[case]
    if eps:
        X = X + eps * np.random.default_rng(7).standard_normal(X.shape)
    return X, y, kw


def _robust_reference(case, variant, eps):
    key = ("robust", case, variant, eps)
    if key not in _CACHE:
        X, y, kw = _robust_instance(case, eps)
        ref = fit(X, y, variant, "ipopt", **kw)
        D, _ = svm_value(gram(X, kw), y, ref.g)     # min_g D(g) = the QCQP's value
        assert D == pytest.approx(ref.objective, rel=1e-6), (case, variant, eps)
        _CACHE[key] = ref
    return _CACHE[key]


#: SCIP (spatial branch and bound, 30-90 s a run on the rbf cases) on the smaller
#: unperturbed part of the set, less what test_backends_agree runs on the same data: its
#: standard and general variants of the rbf data sets (seeded-rbf is its "standard-interior",
#: seeded-rbf-shift its "general-g-below-0")
ROBUST_RUNS = [(case, variant, eps, solver) for case, variant, eps in ROBUST
               for solver in ("gurobi", "clarabel", "scip")
               if solver != "scip" or not (eps or case.startswith("cancer")) and (
                   case == "seeded-linear" or variant == "general_nonneg")]


@pytest.mark.parametrize("case,variant,eps,solver", ROBUST_RUNS,
                         ids=[f"{c}-{v}-{'perturbed' if e else 'exact'}-{s}"
                              for c, v, e, s in ROBUST_RUNS])
def test_robustness_set_every_qcqp_backend(case, variant, eps, solver):
    need(solver)
    ref = _robust_reference(case, variant, eps)
    X, y, kw = _robust_instance(case, eps)
    sol = fit(X, y, variant, solver, **kw)
    assert sol.status == sm.Status.optimal
    t_obj, t_g, t_a = BACKEND_TOL[solver]
    assert sol.objective == pytest.approx(ref.objective, rel=t_obj)
    assert sol.g == pytest.approx(ref.g, abs=t_g)
    assert np.max(np.abs(sol.alpha - ref.alpha)) <= t_a * ref.alpha.max()
    assert np.mean(np.sign(sol.decision_function(X)) == np.sign(ref.decision_function(X))) == 1.0


def test_highs_and_piqp_get_a_capability_error_naming_the_cone_backends():
    X, y, kw = CASES["seeded-rbf"]
    for solver in ("highs", "piqp"):
        with pytest.raises(sm.CapabilityError) as err:
            sm.fit(X, y, formulation="c_tuning_standard", solver=solver, **kw)
        msg = str(err.value)
        assert "SOCP" in msg and solver in msg
        for name in ("ipopt", "gurobi", "scip", "clarabel"):
            assert name in msg.split("use one of")[1], msg


# ---------------------------------------------------------------------------------------
# The record: what the fast path hands the backends is the Pyomo model


def _dense_cone(cone, n):
    """The squared form of a cone as a dense quadratic form ``x'Qx`` (b = 0 here)."""
    A = cone.A.toarray()
    D = np.eye(A.shape[0])
    D[0, 0] = -1.0
    return A.T @ D @ A


@pytest.mark.parametrize("variant,g_bounds", [("standard", None), ("general", None),
                                              ("standard", (0.2, 0.7)), ("general_nonneg", None)])
def test_record_matches_pyomos_reading_of_the_model(variant, g_bounds):
    """The record (fast path) and Pyomo's own reading of the model (general path, with its
    cone recognition) describe the same SOCP: objective, rows, and both cones' squared forms."""
    X, y = seeded(12, 3, 0.3)
    m = sm.build(f"c_tuning_{variant}", X, y, kernel="rbf", gamma=0.3, g_bounds=g_bounds)
    rec = assemble(m._svm.record)
    py = from_pyomo(m)
    assert rec.problem_class == py.problem_class == "SOCP"
    perm = [next(k for k, v in enumerate(py.var_datas) if v is vd) for vd in rec.var_datas]
    n = rec.n
    assert rec.sense == py.sense == -1
    np.testing.assert_allclose(rec.c, py.c[perm], atol=1e-14)
    Pr = rec.hessian_dense()
    Pp = py.hessian_dense()[np.ix_(perm, perm)]
    np.testing.assert_allclose(Pr, Pp, atol=1e-14)
    rows = [next(k for k, d in enumerate(py.row_datas) if d is rd) for rd in rec.row_datas]
    assert sorted(rows) == list(range(len(py.row_datas)))
    np.testing.assert_allclose(rec.A.toarray(), py.A.toarray()[np.ix_(rows, perm)], atol=1e-13)
    np.testing.assert_array_equal(rec.lA, py.lA[rows])
    np.testing.assert_array_equal(rec.uA, py.uA[rows])
    assert len(rec.cones) == len(py.cones) == 2 and not rec.qrows and not py.qrows
    for c in rec.cones:
        p = next(p for p in py.cones if p.data is c.data)
        Qp = _dense_cone(p, n)[np.ix_(perm, perm)]
        np.testing.assert_allclose(_dense_cone(c, n), Qp, atol=1e-12)
    assert verify(m._svm.record) is None


@pytest.mark.parametrize("variant", ["standard", "general"])
def test_quadratic_t_form_equals_the_norm_form(variant):
    """The t-form of c_tuning.md as written (a QCQP) and the norm form (a SOCP) have the same
    optimum, alpha and g* (Ipopt, which solves both reliably)."""
    X, y, kw = CASES["seeded-rbf"]
    norm = fit(X, y, variant, form="norm", **kw)
    quad = fit(X, y, variant, form="quadratic", **kw)
    assert quad.extra["form"] == "quadratic" and norm.extra["form"] == "norm"
    assert quad.objective == pytest.approx(norm.objective, rel=1e-9)
    assert quad.g == pytest.approx(norm.g, abs=1e-7)
    np.testing.assert_allclose(quad.alpha, norm.alpha, atol=1e-6 * norm.alpha.max())
    assert quad.g_multipliers == pytest.approx(norm.g_multipliers, abs=1e-6)


def test_block_inside_a_users_model_and_a_change_that_leaves_the_record():
    import pyomo.environ as pyo

    X, y, kw = CASES["seeded-rbf"]
    ref = qcqp("seeded-rbf")
    m = pyo.ConcreteModel()
    m.svm = pyo.Block()
    sm.build("c_tuning_standard", X, y, block=m.svm, **kw)
    sol = sm.solve(m, "ipopt")
    assert sol.path == "fast" and sol.g == pytest.approx(ref.g, abs=1e-8)
    m.cap = pyo.Constraint(expr=m.svm.alpha[0] <= 10.0)   # binding: alpha_0 is larger at optimum
    assert ref.alpha[0] > 10.0
    capped = sm.solve(m, "ipopt")
    assert capped.path == "mixed" and "cap" in capped.extra["general_path_reason"]
    assert capped.duality_gap is None and "cap" in capped.extra["diagnostics"]
    assert capped.alpha[0] == pytest.approx(10.0, abs=1e-6)
    assert capped.objective < ref.objective


def test_solution_json_round_trip_keeps_g_C_and_reasons():
    X, y = seeded(40, 20, 0.35)
    for variant in ("standard", "general"):
        sol = fit(X, y, variant, kernel="rbf", gamma=1 / 20)
        back = sm.Solution.from_json(sol.to_json())
        assert back.g == sol.g and back.C == sol.C and back.C_reason == sol.C_reason
        assert back.details == sol.details
        np.testing.assert_array_equal(back.decision_function(X), sol.decision_function(X))


# ---------------------------------------------------------------------------------------
# Bad input


def test_bad_g_bounds_are_parameter_errors():
    X, y, kw = CASES["cancer-rbf"]
    g_min, g_max = qcqp("cancer-rbf", "general").extra["g_min"], qcqp("cancer-rbf", "general").extra["g_max"]
    bad = [((0.7, 0.2), "g_lo < g_hi"), ((0.5, 0.5), "g_lo < g_hi"), (("a", 1), "pair of numbers"),
           ((0.0,), "pair of numbers"), ((0.0, np.inf), "finite"), (0.5, "pair of numbers"),
           ((g_min - 0.05, 1.0), "positive semidefinite"), ((0.0, g_max + 0.05), "positive semidefinite")]
    for g_bounds, text in bad:
        for variant in ("standard", "general"):
            with pytest.raises(sm.ParameterError, match=text):
                sm.build(f"c_tuning_{variant}", X, y, g_bounds=g_bounds, **kw)
    # linear kernel, d < l: g_min = 0, so any negative g leaves the PSD range
    Xl, yl, kwl = CASES["seeded-linear"]
    with pytest.raises(sm.ParameterError, match=r"\[g_min, g_max\] = \[0,"):
        sm.build("c_tuning_general", Xl, yl, g_bounds=(-0.01, 1.0), **kwl)
    with pytest.raises(sm.ParameterError, match="takes no parameter"):
        sm.build("c_tuning_standard", X, y, C=1.0, **kw)
    # explicit bounds inside the PSD range are taken as they are, also outside [0, 1]
    m = sm.build("c_tuning_standard", X, y, g_bounds=(g_min / 2, 0.9), **kw)
    assert (pyo_value(m.g_lo), pyo_value(m.g_hi)) == (g_min / 2, 0.9)


def pyo_value(p):
    import pyomo.environ as pyo

    return pyo.value(p)


@pytest.mark.parametrize("variant", ["standard", "general", "general_nonneg"])
def test_kernel_a_multiple_of_the_identity_is_refused(variant):
    y = np.array([1, -1, 1, -1, 1, -1])
    with pytest.raises(sm.DataError, match="multiple of the identity"):
        sm.build(f"c_tuning_{variant}", 3.0 * np.eye(6), y, kernel="precomputed")
    X = np.arange(6.0)[:, None] * 10          # rbf with huge gamma: K == I in floating point
    with pytest.raises(sm.DataError, match="multiple of the identity"):
        sm.build(f"c_tuning_{variant}", X, y, kernel="rbf", gamma=1e6)


# ---------------------------------------------------------------------------------------
# The example


def test_example_c_tuning_vs_grid_search_quick():
    mod = runpy.run_path(str(ROOT / "examples" / "c_tuning_vs_grid_search.py"))
    rows = mod["main"](quick=True)
    assert len(rows) == 6
    for r in rows:
        assert r["test_accuracy"] >= 0.9, r
        assert r["time"] > 0
    for r in rows[::3]:   # the QCQP rows
        assert r["method"].startswith("QCQP") and r["path"] == "fast" and 0 < r["g"] < 1
        # the QCQP's classifier = the plain 2-norm SVM (libsvm on K + I/C*) at C = C*
        assert r["agreement_with_2norm_at_C"] == 1.0


def test_precomputed_kernel_gives_the_same_solution_and_predictions():
    X, y, kw = CASES["cancer-rbf"]
    Xte = cancer()[2]
    ref = qcqp("cancer-rbf")
    K = gram(X, kw)
    sol = fit(K, y, "standard", kernel="precomputed")
    assert sol.g == pytest.approx(ref.g, abs=1e-9) and sol.C == pytest.approx(ref.C, rel=1e-8)
    Kt = rbf_kernel(Xte, X, gamma=kw["gamma"])
    np.testing.assert_allclose(sol.decision_function(Kt), ref.decision_function(Xte), atol=1e-8)
    assert sm.saddle_point_check(K, y, sol, solver="ipopt").ok
    assert ct.g_range(K, "general") == pytest.approx(
        (qcqp("cancer-rbf", "general").extra["g_min"], qcqp("cancer-rbf", "general").extra["g_max"]))


def test_scip_on_the_cone_form_out_of_time_says_which_form_to_build():
    need("scip")
    X, y = seeded(20, 3, 0.3)
    m = sm.build("c_tuning_standard", X, y, kernel="rbf", gamma=0.5)
    try:
        sol = sm.solve(m, "scip", time_limit=0.05)
    except sm.SolveFailedError as err:
        assert err.status == sm.Status.time_limit and "form='quadratic'" in str(err)
    else:   # a fast machine: then the answer must be right
        ref = fit(X, y, "standard", kernel="rbf", gamma=0.5)
        assert sol.objective == pytest.approx(ref.objective, rel=1e-7)
    quick = fit(X, y, "standard", "scip", kernel="rbf", gamma=0.5)   # fit: quadratic form
    assert quick.extra["form"] == "quadratic"
    assert quick.objective == pytest.approx(fit(X, y, "standard", kernel="rbf",
                                                gamma=0.5).objective, rel=1e-7)

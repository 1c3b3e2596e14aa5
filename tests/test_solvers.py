"""The solver layer: the backend matrix, dual signs, capability and licence errors, status.

Dual signs are checked on problems whose multipliers are known by hand, in the one
convention the package promises: ``d(optimal objective) / d(constraint bound)``, in the
model's own sense, whatever each interface reports.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from conftest import (
    DUAL_BACKENDS,
    FAMILIES,
    FAST_BACKENDS,
    QCQP_BACKENDS,
    QP_BACKENDS,
    SCIP_MAX_POINTS,
    blobs,
    c_kw,
    data_for,
    fit_checked,
    missing_backends,
    on_ci,
    require,
    usable,
)

import svm_models as sm
from svm_models.model.reader import from_pyomo
from svm_models.solvers import BACKENDS, SolverOptions, solve_model

ADAPTERS = {name: b.matrix for name, b in BACKENDS.items() if b.matrix is not None}

# ---------------------------------------------------------------------------------------
# The backend matrix


def test_ci_has_every_backend():
    """On CI (CI=true) all six QP backends must be installed and usable: a missing one
    fails here (and in every test that asks for it) instead of being skipped."""
    missing = missing_backends(QP_BACKENDS)
    if on_ci():
        assert not missing, f"backends missing on CI: {missing}"
    elif missing:
        pytest.skip(f"not on CI; backends missing here: {missing}")


def test_missing_backend_fails_on_ci_and_skips_elsewhere(monkeypatch):
    """The machinery itself: require() fails under CI=true, skips otherwise."""
    import conftest

    monkeypatch.setattr(conftest, "_listing", lambda: {"highs": {"available": False}})
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI"):
        conftest.require("highs")
    with pytest.raises(pytest.fail.Exception):
        conftest.usable(["highs"])
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        conftest.require("highs")
    assert conftest.usable(["highs"]) == []


def test_listing_names_every_project_backend():
    info = sm.solvers()
    for name in QP_BACKENDS:
        assert name in info
        assert "QP" in info[name]["classes"]
    for name in FAST_BACKENDS:
        assert info[name]["fast_path"] is True
    assert info["scip"]["fast_path"] is True    # (its matrix adapter: pyscipopt)
    assert info["scip"]["duals"] is False


# ---------------------------------------------------------------------------------------
# Dual signs on a problem with known multipliers
#
#   min (x-2)^2 + y^2 + (z-4)^2   s.t.  cx: x <= 1,  cy: y >= 1,  cz: z == 3,  cr: -5 <= x + y <= 5
#
# x* = 1, y* = 1, z* = 3, optimal value 3. Moving a bound by t: (1+t-2)^2 -> d/dt = -2 for cx;
# (1+t)^2 -> +2 for cy; (3+t-4)^2 -> -2 for cz; cr is inactive: 0. The same problem stated
# as a maximisation of the negated objective has the negated sensitivities.

KNOWN_MIN = {"cx": -2.0, "cy": 2.0, "cz": -2.0, "cr": 0.0}


def _qp(sense: int):
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.z = pyo.Var()
    m.cx = pyo.Constraint(expr=m.x <= 1)
    m.cy = pyo.Constraint(expr=m.y >= 1)
    m.cz = pyo.Constraint(expr=m.z == 3)
    m.cr = pyo.Constraint(expr=pyo.inequality(-5, m.x + m.y, 5))
    e = (m.x - 2) ** 2 + m.y**2 + (m.z - 4) ** 2
    if sense == 1:
        m.obj = pyo.Objective(expr=e, sense=pyo.minimize)
    else:
        m.obj = pyo.Objective(expr=-e, sense=pyo.maximize)
    return m


def _expected(sense: int) -> dict:
    return {k: sense * v for k, v in KNOWN_MIN.items()}


@pytest.mark.parametrize("sense", [1, -1], ids=["min", "max"])
@pytest.mark.parametrize("backend", DUAL_BACKENDS)
def test_dual_signs_general_path(backend, sense):
    require(backend)
    m = _qp(sense)
    info = solve_model(m, backend, problem_class="QP")
    assert info.status == "optimal" and info.path == "general"
    assert info.objective == pytest.approx(3.0 * sense, abs=1e-6)
    assert pyo.value(m.x) == pytest.approx(1.0, abs=1e-6)
    assert pyo.value(m.y) == pytest.approx(1.0, abs=1e-6)
    for name, want in _expected(sense).items():
        got = info.duals[m.component(name)]
        assert got == pytest.approx(want, abs=1e-5), f"{backend} {name}: {got} vs {want}"
    assert m.component("dual") is None  # the layer's own Suffix is not left behind


@pytest.mark.parametrize("sense", [1, -1], ids=["min", "max"])
@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_dual_signs_fast_path(backend, sense):
    """The matrix adapters return duals of the standard form (a minimisation): the model's
    sensitivity is ``sense * row_dual``."""
    require(backend)
    m = _qp(sense)
    sf = from_pyomo(m)
    assert sf.sense == sense
    res = ADAPTERS[backend](sf, SolverOptions())
    assert res.status == "optimal"
    assert sf.sense * res.objective == pytest.approx(3.0 * sense, abs=1e-6)
    got = {cd.local_name: sf.sense * d for cd, d in zip(sf.row_datas, res.row_duals)}
    for name, want in _expected(sense).items():
        assert got[name] == pytest.approx(want, abs=1e-5), f"{backend} {name}: {got[name]} vs {want}"


@pytest.mark.parametrize("backend", DUAL_BACKENDS)
def test_dual_is_the_sensitivity(backend):
    """The convention checked against finite differences of the optimal value."""
    require(backend)
    m = _qp(1)
    info = solve_model(m, backend, problem_class="QP")
    base = info.objective
    h = 1e-3
    m2 = _qp(1)
    m2.cy.set_value(m2.y >= 1 + h)
    shifted = solve_model(m2, backend, problem_class="QP").objective
    fd = (shifted - base) / h
    assert info.duals[m.cy] == pytest.approx(fd, abs=1e-2)


def test_scip_reports_no_duals_and_declares_no_suffix():
    require("scip")
    m = _qp(1)
    info = solve_model(m, "scip", problem_class="QP")
    assert info.status == "optimal"
    assert info.objective == pytest.approx(3.0, abs=1e-6)
    assert info.duals is None
    assert m.component("dual") is None


# Quadratic constraints: min x s.t. x^2 + y^2 <= u at u = 1: value -sqrt(u), so
# d/du = -1/(2 sqrt u) = -0.5. Written as -x^2 - y^2 >= -u (bound L = -u): value
# -sqrt(-L), d/dL = +0.5. Maximising -x: value sqrt(u), d/du = +0.5.


def _qcqp(form: str, sense: int):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-2, 2))
    m.y = pyo.Var(bounds=(-2, 2))
    if form == "le":
        m.q = pyo.Constraint(expr=m.x**2 + m.y**2 <= 1)
    else:
        m.q = pyo.Constraint(expr=-(m.x**2) - m.y**2 >= -1)
    m.obj = pyo.Objective(expr=m.x if sense == 1 else -m.x,
                          sense=pyo.minimize if sense == 1 else pyo.maximize)
    return m


QCQP_KNOWN = {("le", 1): -0.5, ("ge", 1): 0.5, ("le", -1): 0.5, ("ge", -1): -0.5}


@pytest.mark.parametrize("form,sense", list(QCQP_KNOWN), ids=[f"{f}-{s}" for f, s in QCQP_KNOWN])
@pytest.mark.parametrize("backend", ["gurobi", "ipopt", "clarabel"])
def test_quadratic_constraint_dual_signs(backend, form, sense):
    require(backend)
    m = _qcqp(form, sense)
    info = solve_model(m, backend, problem_class="QCQP")
    assert pyo.value(m.x) == pytest.approx(-1.0, abs=1e-5)
    assert info.objective == pytest.approx(-1.0 * sense, abs=1e-6)
    assert info.duals[m.q] == pytest.approx(QCQP_KNOWN[(form, sense)], abs=1e-4)
    # the matrix adapter, directly
    sf = from_pyomo(_qcqp(form, sense))
    res = ADAPTERS[backend](sf, SolverOptions())
    assert res.status == "optimal"
    q = sf.qrows[0]
    assert sf.sense * q.sign * res.qrow_duals[0] == pytest.approx(QCQP_KNOWN[(form, sense)], abs=1e-4)


# ---------------------------------------------------------------------------------------
# alpha from a primal's multipliers


@pytest.mark.parametrize("path", ["fast", "general"])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("family", FAMILIES)
def test_primal_multipliers_are_the_dual_alpha(dual_backend, family, kernel, path):
    X, y = data_for(family, seed=4, l=30)
    params = dict(kernel=kernel, gamma=0.5, **c_kw(family, C=2.0))
    primal = fit_checked(X, y, f"{family}_primal", dual_backend, path=path, **params)
    dual = fit_checked(X, y, f"{family}_dual", dual_backend, **params)
    assert primal.path == path
    assert primal.extra["alpha_source"] == "multipliers"
    scale = max(1.0, float(dual.alpha.max()))
    np.testing.assert_allclose(primal.alpha, dual.alpha, atol=1e-5 * scale, rtol=0)
    np.testing.assert_array_equal(primal.support, dual.support)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("family", FAMILIES)
def test_scip_alpha_from_kkt_recovery(family, kernel):
    """SCIP gives no duals: alpha of a primal comes from the KKT conditions and equals the
    dual's alpha (the dual solved by every other backend)."""
    require("scip")
    X, y = data_for(family, seed=2, l=SCIP_MAX_POINTS)
    params = dict(kernel=kernel, gamma=0.5, **c_kw(family, C=1.0))
    primal = fit_checked(X, y, f"{family}_primal", "scip", **params)
    assert primal.extra["alpha_source"] == "kkt_least_squares"
    refs = usable(FAST_BACKENDS)
    if not refs:
        pytest.skip("no other backend to solve the dual")
    for ref in refs:
        dual = fit_checked(X, y, f"{family}_dual", ref, **params)
        scale = max(1.0, float(dual.alpha.max()))
        np.testing.assert_allclose(primal.alpha, dual.alpha, atol=1e-4 * scale, rtol=0,
                                   err_msg=f"scip primal vs {ref} dual")
        np.testing.assert_array_equal(primal.support, dual.support)


# ---------------------------------------------------------------------------------------
# Capability


def _plain_qcqp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.disc = pyo.Constraint(expr=m.x**2 + m.y**2 <= 1)
    m.obj = pyo.Objective(expr=m.x)
    return m


@pytest.mark.parametrize("backend", ["highs", "piqp"])
def test_qp_only_backend_refuses_qcqp_naming_the_capable(backend):
    m = _plain_qcqp()
    with pytest.raises(sm.CapabilityError, match=rf"{backend}.*QCQP") as err:
        solve_model(m, backend, problem_class="QCQP")
    msg = str(err.value)
    tail = msg.split("use one of")[-1]
    for capable in QCQP_BACKENDS:
        assert capable in tail, msg
    assert "highs" not in tail and "piqp" not in tail, msg
    assert m.x.value is None  # refused before anything ran
    assert isinstance(err.value, sm.SVMError)


@pytest.mark.parametrize("backend", QCQP_BACKENDS)
def test_the_named_backends_do_take_the_qcqp(backend):
    require(backend)
    m = _plain_qcqp()
    info = solve_model(m, backend, problem_class="QCQP")
    assert info.objective == pytest.approx(-1.0, abs=1e-6)
    assert pyo.value(m.x) == pytest.approx(-1.0, abs=1e-4)


def test_qcqp_formulation_with_highs_is_refused():
    qcqp = [n for n in sm.formulations() if n.startswith("c_tuning")]
    if not qcqp:
        pytest.skip("no QCQP formulation registered")
    X, y = blobs(0, l=10)
    with pytest.raises(sm.CapabilityError, match="highs.*SOCP.*use one of"):
        sm.fit(X, y, formulation=qcqp[0], solver="highs")


def test_unknown_solver_is_a_parameter_error():
    X, y = blobs(0, l=10)
    with pytest.raises(sm.ParameterError, match=r"unknown solver 'glpk_typo'.*highs"):
        sm.fit(X, y, solver="glpk_typo", C=1.0)
    m = sm.build("soft_l1_dual", X, y, C=1.0)
    with pytest.raises(sm.ParameterError, match="unknown solver"):
        sm.solve(m, "nosuch")
    with pytest.raises(sm.ParameterError, match="unknown solver"):
        solve_model(_qp(1), "nosuch", problem_class="QP")


@pytest.mark.parametrize("name", ["cplex", "xpress", "mosek"])
def test_known_but_missing_backend_is_unavailable(name):
    if sm.solvers()[name]["available"]:
        pytest.skip(f"{name} is installed here")
    X, y = blobs(0, l=10)
    with pytest.raises(sm.SolverUnavailableError, match=rf"{name}.*not installed"):
        sm.fit(X, y, solver=name, C=1.0)


# ---------------------------------------------------------------------------------------
# Gurobi's size-limited licence


@pytest.mark.parametrize("path", ["fast", "general"])
def test_gurobi_licence_limit_is_a_clear_error(path):
    require("gurobi")
    X, y = blobs(5, l=300)
    m = sm.build("soft_l1_dual", X, y, C=1.0, kernel="rbf", gamma=0.5)  # 300 variables
    with pytest.raises(sm.LicenseLimitError, match=r"size-limited.*300 variables.*200") as err:
        sm.solve(m, "gurobi", path=path)
    assert err.value.__cause__ is None and err.value.__suppress_context__  # no inner traceback
    assert isinstance(err.value, sm.SolverError) and isinstance(err.value, sm.SVMError)
    assert m.component("dual") is None
    assert all(v.value == 0.0 for v in m.alpha.values())  # nothing loaded


def test_gurobi_licence_counts_slacks():
    """A linear primal has a tiny quadratic part (w) but 300 slacks: still refused."""
    require("gurobi")
    X, y = blobs(5, l=300)
    with pytest.raises(sm.LicenseLimitError, match="size-limited"):
        sm.fit(X, y, formulation="soft_l1_primal", solver="gurobi", C=1.0)


def test_gurobi_at_the_licence_boundary_solves_correctly():
    """200 variables is within the licence: the answer equals another backend's."""
    require("gurobi")
    ref_backend = next(iter(usable(["piqp", "clarabel", "highs"])), None)
    if ref_backend is None:
        pytest.skip("no reference backend")
    X, y = blobs(6, l=200)
    sol = fit_checked(X, y, "soft_l1_dual", "gurobi", C=1.0, kernel="rbf", gamma=0.5)
    ref = fit_checked(X, y, "soft_l1_dual", ref_backend, C=1.0, kernel="rbf", gamma=0.5)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    assert sol.b == pytest.approx(ref.b, abs=1e-5)


# ---------------------------------------------------------------------------------------
# Status first: a non-optimal end is a typed error, or an explicit status on request


ITER_CASES = [(s, p) for s in FAST_BACKENDS for p in ("fast", "general")]


@pytest.mark.parametrize("backend,path", ITER_CASES)
def test_iteration_limit_is_a_typed_error(backend, path):
    require(backend)
    X, y = blobs(1, l=40)
    m = sm.build("soft_l1_dual", X, y, C=1.0, kernel="rbf", gamma=0.5)
    with pytest.raises(sm.SolveFailedError, match="iteration") as err:
        sm.solve(m, backend, path=path, iter_limit=1)
    assert err.value.status == "iteration_limit"


@pytest.mark.parametrize("backend", ["ipopt", "piqp", "clarabel"])
def test_failed_solve_as_explicit_status(backend):
    require(backend)
    X, y = blobs(1, l=40)
    sol = sm.fit(X, y, solver=backend, C=1.0, kernel="rbf", gamma=0.5, iter_limit=1,
                 raise_on_failure=False)
    assert sol.status == "iteration_limit"
    assert np.isnan(sol.b) and np.all(np.isnan(sol.alpha)) and np.isnan(sol.objective)
    assert sol.support.size == 0


def test_options_reach_the_backend():
    """A loose tolerance is honoured (the answer moves, but stays near the exact one)."""
    require("ipopt")
    X, y = blobs(2, l=40)
    values = {}
    for tol in (1e-10, 1e-2):
        m = sm.build("soft_l1_dual", X, y, C=1.0, kernel="rbf", gamma=0.5)
        sm.solve(m, "ipopt", tol=tol)
        values[tol] = np.array([v.value for v in m.alpha.values()])  # the solver's own iterate
    assert np.abs(values[1e-2] - values[1e-10]).max() > 1e-6  # stopped earlier
    assert np.abs(values[1e-2] - values[1e-10]).max() < 0.1   # but near the optimum


def test_piqp_given_many_iterations_stays_within_its_time_limit():
    """PIQP has no time limit of its own: 10,000 iterations asked under a limit of 0.3 s are
    cut to what the time per iteration leaves room for (they ran 5 s: the retry at the
    iteration limit overran a default deadline of 7.5 s by 6 s on a random 101-point dual)."""
    import time

    from svm_models.model.standard_form import assemble

    pytest.importorskip("piqp")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=150) > 0, 1, -1)
    sf = assemble(sm.build("soft_l1_dual", X, y, C=10.0, kernel="rbf")._svm.record)
    t0 = time.perf_counter()
    # (tol 1e-15: not reached, every iteration allowed is run)
    res = BACKENDS["piqp"].matrix(sf, SolverOptions(iter_limit=10_000, time_limit=0.3, tol=1e-15))
    assert time.perf_counter() - t0 < 1.2 * 0.3 + 1.0
    assert res.status in (sm.Status.iteration_limit, sm.Status.time_limit) and res.x is None

"""svm_models' own interior-point method (``solver="ipm"``): its two reductions, its answers
against other backends (objective, w, b, duals), the problems it refuses, and its limits.

The backend matrix of the other test files (conftest's QP/FAST/DUAL_BACKENDS) runs it on
every classic formulation too; these tests aim at what is its own.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

import svm_models as sm
from svm_models.errors import CapabilityError, SolveFailedError
from svm_models.model.reader import from_pyomo
from svm_models.solvers import ipm
from svm_models.solvers.base import SolverOptions
from svm_models.solvers.dispatch import solve_model

from conftest import require


def data(l, d=5, seed=0, shift=0.6):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(l) % 2 == 0, 1.0, -1.0)
    return rng.standard_normal((l, d)) + shift * y[:, None], y


@pytest.mark.parametrize("form,mode", [("soft_l1_dual", "row"), ("soft_l2_dual", "row"),
                                       ("soft_l1_primal", "column"),
                                       ("soft_l2_primal", "column")])
def test_linear_svms_take_the_reduction_that_suits_them(form, mode):
    """Linear duals (factor form: d + 1 dense rows) reduce by rows, linear primals (l
    margin rows, each with a slack of its own) by columns: d + 1 dense unknowns either way;
    the answer equals PIQP's."""
    require("piqp")
    X, y = data(3000, d=6)
    got = sm.fit(X, y, formulation=form, solver="ipm", C=0.5)
    ref = sm.fit(X, y, formulation=form, solver="piqp", C=0.5)
    assert got.interface == f"ipm ({mode} mode, 7 dense unknowns)"
    assert got.objective == pytest.approx(ref.objective, rel=1e-8)
    np.testing.assert_allclose(got.w, ref.w, atol=1e-6 * np.abs(ref.w).max())
    assert got.b == pytest.approx(ref.b, abs=1e-6)


def test_low_rank_dual_against_clarabel():
    """The factor-form dual of a low-rank rbf kernel: r + 1 dense rows."""
    require("clarabel")
    X, y = data(1500, d=4, shift=0.3)
    kw = dict(formulation="soft_l1_dual", C=2.0, kernel="rbf", gamma=0.5, kernel_rank=60)
    got = sm.fit(X, y, solver="ipm", **kw)
    ref = sm.fit(X, y, solver="clarabel", **kw)
    assert got.interface == "ipm (row mode, 61 dense unknowns)"
    assert got.objective == pytest.approx(ref.objective, rel=1e-8)
    np.testing.assert_allclose(got.decision_function(X), ref.decision_function(X), atol=1e-5)


def test_dense_kernel_dual_keeps_its_block():
    """A dense kernel matrix: every alpha stays in the dense system (l + 1 unknowns)."""
    require("piqp")
    X, y = data(300, d=3, shift=0.2)
    kw = dict(formulation="soft_l1_dual", C=1.0, kernel="rbf", gamma=0.7)
    got = sm.fit(X, y, solver="ipm", **kw)
    ref = sm.fit(X, y, solver="piqp", **kw)
    assert got.interface == "ipm (row mode, 301 dense unknowns)"
    assert got.objective == pytest.approx(ref.objective, rel=1e-8)
    np.testing.assert_allclose(got.alpha, ref.alpha, atol=1e-6)


def test_too_large_a_reduction_is_refused(monkeypatch):
    monkeypatch.setattr(ipm, "IPM_MAX_DENSE", 50)
    X, y = data(120, d=3)
    with pytest.raises(CapabilityError, match=r"at most 50 dense unknowns.*piqp or clarabel"):
        sm.fit(X, y, formulation="soft_l1_dual", solver="ipm", C=1.0, kernel="rbf")
    # the linear forms still reduce to 4 unknowns
    assert sm.fit(X, y, formulation="soft_l1_dual", solver="ipm", C=1.0).status == "optimal"


def _mixed_model(sense: int):
    """Rows of every kind (equality, <=, >=, ranged, a free row), a fixed variable, a free
    variable without a quadratic term, a quadratic with a dense 2 x 2 block."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), bounds=(-3, 3))
    m.f = pyo.Var()                        # free, no quadratic term
    m.k = pyo.Var(bounds=(0, 5))
    m.k.fix(1.5)
    m.e1 = pyo.Constraint(expr=m.x[0] + m.x[1] + m.f == 1)
    m.le = pyo.Constraint(expr=m.x[1] - 2 * m.x[2] <= 0.5)
    m.ge = pyo.Constraint(expr=m.x[2] + m.x[3] + m.k >= 2)
    m.rg = pyo.Constraint(expr=pyo.inequality(-1, m.x[0] - m.x[3], 0.25))
    m.fr = pyo.Constraint(expr=m.f - m.x[0] >= -2.0)
    q = ((m.x[0] - 1) ** 2 + (m.x[0] + m.x[1]) ** 2 + 0.5 * m.x[2] ** 2 + m.x[3] ** 2
         + 0.3 * m.f - m.k * m.x[3] + m.f ** 2 * 0.0)
    m.obj = pyo.Objective(expr=sense * q, sense=pyo.minimize if sense == 1 else pyo.maximize)
    return m


@pytest.mark.parametrize("sense", [1, -1], ids=["min", "max"])
def test_general_model_against_highs_and_piqp(sense):
    """A model of the user's own (general path): objective, values and every row's dual equal
    HiGHS's and PIQP's."""
    for b in ("highs", "piqp"):
        require(b)
    out = {}
    for b in ("ipm", "highs", "piqp"):
        m = _mixed_model(sense)
        info = solve_model(m, b, problem_class="QP")
        assert info.status == "optimal", (b, info.message)
        out[b] = (info.objective, np.array([pyo.value(v) for v in m.component_data_objects(pyo.Var)]),
                  {c.local_name: info.duals[c] for c in m.component_data_objects(pyo.Constraint)})
    # the objective is flat to second order along the optimal face's edge here: values of
    # any interior-point method are sqrt(gap) ~ 3e-5 off (PIQP 3.5e-5, Ipopt 1.4e-5)
    for b in ("highs", "piqp"):
        assert out["ipm"][0] == pytest.approx(out[b][0], abs=1e-8)
        np.testing.assert_allclose(out["ipm"][1], out[b][1], atol=1e-4)
        for name, d in out[b][2].items():
            assert out["ipm"][2][name] == pytest.approx(d, abs=1e-4), (b, name)


def test_linear_program_with_free_variables():
    """An LP whose free variables carry no quadratic term stay in the dense system."""
    require("highs")
    rng = np.random.default_rng(3)
    A = rng.standard_normal((6, 4))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4))
    m.r = pyo.Constraint(range(6), rule=lambda m, i: sum(A[i, j] * m.x[j] for j in range(4))
                         <= 1.0)
    m.obj = pyo.Objective(expr=sum(float(A[:, j].sum()) * m.x[j] for j in range(4))
                          + 0.01 * sum(m.x[j] for j in range(4)), sense=pyo.maximize)
    ref = solve_model(m, "highs", problem_class="LP")
    got = solve_model(m, "ipm", problem_class="LP")
    assert ref.status == "optimal"
    assert got.status == "optimal", got.message
    assert got.objective == pytest.approx(ref.objective, rel=1e-7)


def test_infeasible_problem_is_proved_infeasible():
    """x + y >= 3 on the unit box: the iterates diverge, their multipliers are a Farkas
    certificate (y = 1: x + y <= 2 on the box), so: infeasible, said how."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x + m.y >= 3)
    m.obj = pyo.Objective(expr=m.x ** 2 + m.y)
    info = solve_model(m, "ipm", problem_class="QP")
    assert info.status == "infeasible", info.message
    assert "Farkas certificate" in info.message


def _lp(kind: str):
    """Small LPs with a known end: "infeasible" (primal and dual: y >= x and y <= x - 1,
    free), "unbounded" (max 3y above |x| + 1), "unbounded_qp" (min x^2 - y, y >= 0 free
    above), "empty_row" (a row left without a variable: 0 >= 1)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    if kind == "infeasible":
        m.o = pyo.Objective(expr=m.y)
        m.c1 = pyo.Constraint(expr=m.y >= m.x)
        m.c2 = pyo.Constraint(expr=m.y <= m.x - 1)
    elif kind == "unbounded":
        m.o = pyo.Objective(expr=3 * m.y, sense=pyo.maximize)
        m.c1 = pyo.Constraint(expr=m.y >= m.x + 1)
        m.c2 = pyo.Constraint(expr=m.y >= -m.x + 1)
    elif kind == "unbounded_qp":
        m.y.setlb(0)
        m.o = pyo.Objective(expr=m.x ** 2 - m.y)
        m.c = pyo.Constraint(expr=m.x + m.y >= 1)
    else:
        m.z = pyo.Var(initialize=-1)
        m.z.fix()
        m.o = pyo.Objective(expr=m.y)
        m.c1 = pyo.Constraint(expr=m.y >= m.x)
        m.c2 = pyo.Constraint(expr=m.y >= -m.x)
        m.c3 = pyo.Constraint(expr=m.z >= 0)
    return m


@pytest.mark.parametrize("kind,status", [("infeasible", "infeasible"),
                                         ("unbounded", "unbounded"),
                                         ("unbounded_qp", "unbounded"),
                                         ("empty_row", "infeasible")])
def test_infeasible_and_unbounded_are_told_apart(kind, status):
    """Each end proved (PIQP and Clarabel, from their own certificates, agree); never
    optimal, never the other one."""
    sf = from_pyomo(_lp(kind))
    res = ipm.solve(sf, SolverOptions())
    assert res.status == status, res.message
    assert res.x is None
    for other in ("piqp", "clarabel"):
        require(other)
        assert solve_model(_lp(kind), other).status == status


def test_a_row_without_variables_is_checked_before_any_iteration():
    sf = from_pyomo(_lp("empty_row"))
    res = ipm.solve(sf, SolverOptions(iter_limit=1))
    assert res.status == "infeasible" and res.message == (
        "a row with no variable has bounds that exclude 0")
    m = _lp("empty_row")
    m.z.fix(1)      # 1 >= 0: kept, harmless
    info = solve_model(m, "ipm")
    assert info.status == "optimal" and pyo.value(m.y) == pytest.approx(0.0, abs=1e-7)
    m.c3.set_value(m.z <= 0)     # 1 <= 0: the upper bound excludes 0
    assert ipm.solve(from_pyomo(m), SolverOptions(iter_limit=1)).status == "infeasible"


def _problem(kind: str):
    return ipm._Problem(from_pyomo(_lp(kind)))


def test_a_farkas_certificate_is_checked_exactly():
    """The rows of "infeasible" as the reader states them, in ipm's form (v = (y, x, s1,
    s2)): x - y - s1 = 0 with s1 <= 0 and y - x - s2 = 0 with s2 <= -1. The multipliers
    (1, 1) combine them into -s1 - s2 = 0, impossible on the box (-s1 - s2 >= 1): a
    certificate, at any positive scale and with its sign flipped; (1, -1), (1, 0), a
    combination that keeps a free column by 1e-3, or 0 are none."""
    sf = from_pyomo(_lp("infeasible"))
    assert sf.A.toarray().tolist() == [[-1.0, 1.0], [1.0, -1.0]]   # (columns y, x)
    p = ipm._Problem(sf)
    for y in ([1.0, 1.0], [1e12, 1e12], [-3.0, -3.0]):
        assert ipm._farkas(p, np.array(y))
    for y in ([1.0, -1.0], [1.0, 0.0], [0.0, 0.0], [np.inf, 1.0], [1.0, 1.0 + 1e-3]):
        assert not ipm._farkas(p, np.array(y))
    # the box decides: with s2 <= 0 allowed the same combination proves nothing
    p.u[3] = 0.0
    assert not ipm._farkas(p, np.array([1.0, 1.0]))
    p.u[3] = -1e-9     # ... nor by a margin below the tolerance, either sign
    assert not ipm._farkas(p, np.array([1.0, 1.0]))
    assert not ipm._farkas(p, np.array([-1.0, -1.0]))


def _direction(sf, p, xs: dict):
    """A direction of ipm's v: the given variables, the slacks that keep every row."""
    d = np.zeros(p.nv)
    for k, v in enumerate(sf.var_datas):
        d[k] = xs.get(v.name, 0.0)
    d[p.n:] = sf.A @ d[:p.n]
    return d


def test_an_improving_ray_is_checked_exactly():
    """"unbounded" in ipm's form (minimise -3y; the slacks of x - y <= -1 and -x - y <= -1
    have upper bounds): y = 1 keeps the rows and the bounds and gains 3 per unit, at any
    scale; its opposite loses; (y, x) = (1, 2) breaks a bound's direction, a broken row or
    0 is none. In "unbounded_qp" (x^2 in the objective) the ray must leave x alone."""
    sf = from_pyomo(_lp("unbounded"))
    p = ipm._Problem(sf)
    d = _direction(sf, p, {"y": 1.0})
    assert ipm._improving_ray(p, d) and ipm._improving_ray(p, 1e12 * d)
    assert not ipm._improving_ray(p, -d)
    assert not ipm._improving_ray(p, _direction(sf, p, {"y": 1.0, "x": 2.0}))
    broken = d.copy()
    broken[p.n] -= 1e-3
    assert not ipm._improving_ray(p, broken)
    assert not ipm._improving_ray(p, np.zeros(p.nv))
    sf = from_pyomo(_lp("unbounded_qp"))
    q = ipm._Problem(sf)
    assert ipm._improving_ray(q, _direction(sf, q, {"y": 1.0}))
    assert not ipm._improving_ray(q, _direction(sf, q, {"y": 1.0, "x": 0.5}))
    flat = from_pyomo(_lp("unbounded_qp"))
    flat.c[:] = 0.0     # no gain: no ray, however the direction keeps the rows
    assert not ipm._improving_ray(ipm._Problem(flat), _direction(sf, q, {"y": 1.0}))


def test_a_failure_without_a_certificate_stays_what_it_was():
    """A feasible, bounded QP stopped by the iteration limit: its iterate is neither
    certificate, so the limit is reported (no guessed infeasible or unbounded)."""
    m = _lp("unbounded_qp")
    m.y.setub(5)
    res = ipm.solve(from_pyomo(m), SolverOptions(iter_limit=2))
    assert res.status == "iteration_limit"


def test_inseparable_hard_margin_is_named():
    X, y = data(60, d=2, shift=0.0)
    with pytest.raises(SolveFailedError, match="not separable"):
        sm.fit(X, y, formulation="hard_dual", solver="ipm")


def test_time_and_iteration_limits():
    X, y = data(2000, d=4)
    sf = from_pyomo(sm.build("soft_l1_primal", X, y, C=1.0))
    res = ipm.solve(sf, SolverOptions(iter_limit=3))
    assert res.status == "iteration_limit" and res.x is None
    res = ipm.solve(sf, SolverOptions(time_limit=1e-9))
    assert res.status == "time_limit" and res.x is None
    res = ipm.solve(sf, SolverOptions())
    assert res.status == "optimal" and 5 <= res.iterations <= 80


def test_models_without_rows_or_with_one():
    """No rows at all (nothing kept dense), and one row with a free variable: the optimum by
    hand. (A model without rows crashed with an IndexError before.)"""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(1, 3))
    m.o = pyo.Objective(expr=(m.x - 2) ** 2 + m.x)          # minimum at x = 1.5
    info = solve_model(m, "ipm", problem_class="QP")
    assert info.status == "optimal" and pyo.value(m.x) == pytest.approx(1.5, abs=1e-7)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(1, 3))
    m.y = pyo.Var()
    m.c = pyo.Constraint(expr=m.x + m.y == 1)
    m.o = pyo.Objective(expr=(m.x - 2) ** 2 + m.y ** 2)     # x = 1.5, y = -0.5
    info = solve_model(m, "ipm", problem_class="QP")
    assert info.status == "optimal"
    assert (pyo.value(m.x), pyo.value(m.y)) == pytest.approx((1.5, -0.5), abs=1e-7)
    assert info.duals[m.c] == pytest.approx(-1.0, abs=1e-6)   # d(optimum)/d(rhs)


def test_a_matrix_made_indefinite_by_round_off_is_factored_by_lu():
    """_factor_spd: a positive definite matrix by Cholesky alone; one that is not (here
    [[1, 2], [2, 1]], eigenvalues 3 and -1: as the reduced system becomes when round-off
    makes it indefinite) by LU, whose solution satisfies M x = r (checked against numpy);
    an empty one by neither."""
    import scipy.linalg as la

    spd = np.array([[2.0, 1.0], [1.0, 2.0]])
    chol, lu = ipm._factor_spd(spd)
    assert lu is None
    np.testing.assert_allclose(la.cho_solve(chol, [3.0, 0.0]), [2.0, -1.0], rtol=1e-14)
    M = np.array([[1.0, 2.0], [2.0, 1.0]])
    chol, lu = ipm._factor_spd(M)
    assert chol is None
    x = la.lu_solve(lu, [1.0, 0.0])
    np.testing.assert_allclose(x, np.linalg.solve(M, [1.0, 0.0]), rtol=1e-14)
    np.testing.assert_allclose(x, [-1.0 / 3.0, 2.0 / 3.0], rtol=1e-14)
    assert ipm._factor_spd(np.zeros((0, 0))) == (None, None)

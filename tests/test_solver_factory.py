"""The library's backends as Pyomo solvers (issue 28): ``svm_models.piqp``,
``svm_models.clarabel``, ``svm_models.ipm`` and ``svm_models.libsvm`` in Pyomo's
``SolverFactory`` (legacy and new interface) after ``import svm_models``.

Every answer is checked against Gurobi (``gurobi_direct``, Pyomo's own interface; tiny models
for its size-limited licence) on small models that are not SVMs -- LP, QP, SOCP, convex QCQP,
minimised and maximised, with >=, <= and equality rows: objective, values and duals (Pyomo's
convention, d(objective)/d(bound) in the model's own sense, as Gurobi reports them)."""

from __future__ import annotations

import functools
import io
import re
import subprocess
import sys

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.common.factory import SolverFactory as NewSolverFactory
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition
from pyomo.contrib.solver.common.util import (IncompatibleModelError, NoOptimalSolutionError,
                                              NoSolutionError)
from pyomo.opt import TerminationCondition as LegacyTC

import svm_models as sm
from conftest import require
from svm_models.solvers.base import preserved_fpu

NAMES = ("svm_models.piqp", "svm_models.clarabel", "svm_models.ipm", "svm_models.libsvm")
GENERAL = ("piqp", "clarabel", "ipm")
OBJ_REL, DUAL_ABS, X_ABS = 1e-6, 1e-5, 1e-5


# ---------------------------------------------------------------------------------------
# Small models that are not SVMs (every row active at the optimum, duals unique)


def _model(kind: str, sense: str):
    m = pyo.ConcreteModel()
    s = 1.0 if sense == "min" else -1.0
    pyo_sense = pyo.minimize if sense == "min" else pyo.maximize
    if kind in ("lp", "qp"):
        m.x = pyo.Var(range(3), bounds=(-10, 10))
        if kind == "lp":   # vertex (5, -3, -2); duals (1, -1, 0.5) when minimising
            f = 1.5 * m.x[0] + 2 * m.x[2]
        else:
            f = ((m.x[0] - 1) ** 2 + 2 * (m.x[1] + 0.5) ** 2 + m.x[2] ** 2 + m.x[0] * m.x[1]
                 + 0.3 * m.x[2])
        m.o = pyo.Objective(expr=s * f, sense=pyo_sense)
        m.ge = pyo.Constraint(expr=m.x[0] + m.x[1] >= 2 if kind == "lp" else
                              m.x[0] + m.x[1] >= 1.5)
        m.le = pyo.Constraint(expr=m.x[1] - m.x[2] <= -1)
        m.eq = pyo.Constraint(expr=m.x[0] + 2 * m.x[2] == 1)
    elif kind == "socp":   # sum x_i^2 <= t^2, t >= 0
        m.x = pyo.Var(range(3))
        m.t = pyo.Var(bounds=(0, None))
        m.o = pyo.Objective(expr=s * (m.t + 0.5 * m.x[0] - 0.5 * m.x[1]), sense=pyo_sense)
        m.cone = pyo.Constraint(expr=sum(m.x[i] ** 2 for i in range(3)) <= m.t ** 2)
        m.eq = pyo.Constraint(expr=m.x[0] + m.x[1] + m.x[2] == 1)
        m.ge = pyo.Constraint(expr=m.x[2] - m.x[0] >= 0.5)
    elif kind == "qcqp":   # a convex quadratic row
        m.x = pyo.Var(range(2), bounds=(-10, 10))
        m.y = pyo.Var()
        m.o = pyo.Objective(expr=s * (-m.x[0] - 2 * m.x[1] + 0.5 * m.y ** 2), sense=pyo_sense)
        m.q = pyo.Constraint(expr=m.x[0] ** 2 + 2 * m.x[1] ** 2 + m.x[0] * m.x[1] <= 4)
        m.le = pyo.Constraint(expr=m.x[0] - m.y <= 0.2)
        m.eq = pyo.Constraint(expr=m.y + m.x[1] == 1)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def _answer(m) -> dict:
    return {"objective": pyo.value(m.o),
            "x": {v.name: v.value for v in m.component_data_objects(pyo.Var)},
            "duals": {c.name: m.dual.get(c) for c in m.component_data_objects(pyo.Constraint)}}


@functools.lru_cache(maxsize=None)
def _gurobi(kind: str, sense: str) -> dict:
    """Gurobi's answer through Pyomo's own interface (duals of quadratic rows: QCPDual; its
    barrier on quadratic rows to 1e-12, where its default of 1e-6 leaves x 2e-5 off)."""
    require("gurobi")
    m = _model(kind, sense)
    # in the default floating-point environment: a Pyomo cyipopt solve earlier in the process
    # (another test's) leaves the x87 unit at 53 bits, and this QCP then ends SUBOPTIMAL
    with preserved_fpu():
        res = pyo.SolverFactory("gurobi_direct").solve(
            m, options={"QCPDual": 1, "BarQCPConvTol": 1e-12})
    assert res.solver.termination_condition is LegacyTC.optimal
    return _answer(m)


def _agrees(got: dict, ref: dict) -> None:
    assert got["objective"] == pytest.approx(ref["objective"], rel=OBJ_REL, abs=1e-9)
    for k, v in ref["x"].items():
        assert got["x"][k] == pytest.approx(v, abs=X_ABS), k
    for k, v in ref["duals"].items():
        assert got["duals"][k] == pytest.approx(v, abs=DUAL_ABS), k


CASES = [(n, k, s) for n in GENERAL for k in ("lp", "qp") for s in ("min", "max")] + [
    ("clarabel", k, s) for k in ("socp", "qcqp") for s in ("min", "max")]


@pytest.mark.parametrize("name,kind,sense", CASES)
def test_a_small_model_agrees_with_gurobi(name, kind, sense):
    """Legacy interface: values and duals loaded (``model.dual``), the termination
    condition optimal, objective, values and duals Gurobi's."""
    require(name)
    ref = _gurobi(kind, sense)
    m = _model(kind, sense)
    res = pyo.SolverFactory(f"svm_models.{name}").solve(m, tee=False, load_solutions=True,
                                                        timelimit=60)
    assert res.solver.termination_condition is LegacyTC.optimal
    assert res.solver.status == pyo.SolverStatus.ok
    _agrees(_answer(m), ref)
    bound = res.problem.upper_bound if sense == "min" else res.problem.lower_bound
    assert bound == pytest.approx(ref["objective"], rel=OBJ_REL)


def test_duals_against_ipopt_too():
    """Ipopt (cyipopt) reports the same duals, with the opposite sign when minimising: the
    factor the library's table records (``BACKENDS["ipopt"].dual_sign``)."""
    require("ipopt")
    sign = sm.solvers.BACKENDS["ipopt"].dual_sign["cyipopt"]
    for sense, key in (("min", 1), ("max", -1)):
        ours, theirs = _model("qp", sense), _model("qp", sense)
        pyo.SolverFactory("svm_models.piqp").solve(ours)
        with preserved_fpu():   # cyipopt would leave the x87 unit at 53 bits for later tests
            pyo.SolverFactory("cyipopt").solve(theirs, options={"tol": 1e-10})
        for c in (ours.ge, ours.le, ours.eq):
            assert ours.dual[c] == pytest.approx(sign[key] * theirs.dual[theirs.component(c.name)],
                                                 abs=DUAL_ABS)


# ---------------------------------------------------------------------------------------
# Refusals: through Pyomo's own error for an incompatible model, with the library's message


def _nonconvex():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 1))
    m.y = pyo.Var(bounds=(-1, 1))
    m.o = pyo.Objective(expr=m.x * m.y + m.x)
    m.c = pyo.Constraint(expr=m.x + m.y <= 1)
    return m


@pytest.mark.parametrize("name", GENERAL)
def test_a_nonconvex_model_is_refused_through_pyomos_error(name):
    require(name)
    m = _nonconvex()
    with pytest.raises(IncompatibleModelError, match="not convex.*gurobi, scip") as err:
        pyo.SolverFactory(f"svm_models.{name}").solve(m)
    assert isinstance(err.value, sm.CapabilityError)   # the library's type as well
    with pytest.raises(IncompatibleModelError, match="not convex"):
        NewSolverFactory(f"svm_models.{name}").solve(m)
    assert m.x.value is None and m.y.value is None


@pytest.mark.parametrize("name", ("piqp", "ipm"))
def test_a_cone_is_refused_naming_the_backends_that_take_it(name):
    require(name)
    with pytest.raises(IncompatibleModelError, match=r"SOCP.*clarabel"):
        pyo.SolverFactory(f"svm_models.{name}").solve(_model("socp", "min"))


# ---------------------------------------------------------------------------------------
# Loading: load_solutions=False, then Pyomo's ways of loading


def test_load_solutions_false_then_load_from_results():
    require("piqp")
    ref = _gurobi("qp", "min")
    m = _model("qp", "min")
    m.x[0].value = 0.125
    res = pyo.SolverFactory("svm_models.piqp").solve(m, load_solutions=False)
    assert res.solver.termination_condition is LegacyTC.optimal
    assert [v.value for v in m.x.values()] == [0.125, None, None]   # untouched
    assert len(m.dual) == 0
    m.solutions.load_from(res)
    _agrees(_answer(m), ref)


def test_load_solutions_false_in_the_new_interface():
    require("clarabel")
    ref = _gurobi("qp", "max")
    m = _model("qp", "max")
    opt = NewSolverFactory("svm_models.clarabel")
    res = opt.solve(m, load_solutions=False)
    assert res.termination_condition is TerminationCondition.convergenceCriteriaSatisfied
    assert res.solution_status is SolutionStatus.optimal
    assert res.incumbent_objective == pytest.approx(ref["objective"], rel=OBJ_REL)
    assert all(v.value is None for v in m.x.values())
    loader = res.solution_loader
    values = loader.get_vars()
    assert {v.name: x for v, x in values.items()} == pytest.approx(ref["x"], abs=X_ABS)
    assert loader.get_duals([m.le])[m.le] == pytest.approx(ref["duals"]["le"], abs=DUAL_ABS)
    loader.load_vars([m.x[1]])
    assert m.x[1].value == pytest.approx(ref["x"]["x[1]"], abs=X_ABS)
    loader.load_solution()   # every value, and the duals into model.dual
    _agrees(_answer(m), ref)


# ---------------------------------------------------------------------------------------
# Limits and non-optimal ends


def test_a_time_limit():
    """Legacy: maxTimeLimit returned, nothing loaded; new interface: Pyomo's exceptions
    unless asked for the result."""
    require("piqp")
    m = _model("qp", "min")
    res = pyo.SolverFactory("svm_models.piqp").solve(m, timelimit=1e-7)
    assert res.solver.termination_condition is LegacyTC.maxTimeLimit
    assert all(v.value is None for v in m.x.values()) and len(m.dual) == 0
    opt = NewSolverFactory("svm_models.piqp")
    with pytest.raises(NoOptimalSolutionError, match="time_limit"):
        opt.solve(m, time_limit=1e-7)
    with pytest.raises(NoSolutionError):
        opt.solve(m, time_limit=1e-7, raise_exception_on_nonoptimal_result=False)
    res = opt.solve(m, time_limit=1e-7, raise_exception_on_nonoptimal_result=False,
                    load_solutions=False)
    assert res.termination_condition is TerminationCondition.maxTimeLimit
    assert res.solution_status is SolutionStatus.noSolution
    assert res.incumbent_objective is None
    with pytest.raises(NoSolutionError):
        res.solution_loader.get_vars()


@pytest.mark.parametrize("name", GENERAL)
def test_an_iteration_limit(name):
    require(name)
    res = NewSolverFactory(f"svm_models.{name}").solve(
        _model("qp", "min"), iter_limit=1, raise_exception_on_nonoptimal_result=False,
        load_solutions=False)
    assert res.termination_condition is TerminationCondition.iterationLimit


@pytest.mark.parametrize("name", ("piqp", "clarabel"))
def test_an_infeasible_model(name):
    require(name)
    m = _model("qp", "min")
    m.bad = pyo.Constraint(expr=m.x[0] + m.x[1] <= 0)
    res = pyo.SolverFactory(f"svm_models.{name}").solve(m)
    assert res.solver.termination_condition is LegacyTC.infeasible
    assert all(v.value is None for v in m.x.values())


# ---------------------------------------------------------------------------------------
# libsvm: an SVM dual built by the library, as built; nothing else


def _svm(C=1.0):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(16, 2))
    y = np.where(X[:, 0] + 0.4 * X[:, 1] + 0.3 * rng.normal(size=16) > 0, 1, -1)
    return sm.build("soft_l1_dual", X, y, C=C)


def test_libsvm_solves_an_svm_as_built_and_refuses_anything_else():
    require("libsvm")
    require("piqp")
    m, ref = _svm(), _svm()
    res = pyo.SolverFactory("svm_models.libsvm").solve(m)
    assert res.solver.termination_condition is LegacyTC.optimal
    pyo.SolverFactory("svm_models.piqp").solve(ref)
    obj = next(m.component_data_objects(pyo.Objective, active=True))
    assert pyo.value(obj) == pytest.approx(
        pyo.value(next(ref.component_data_objects(pyo.Objective, active=True))), rel=1e-6)
    alpha = np.array([v.value for v in m.alpha.values()])
    assert np.all(alpha >= -1e-9) and np.all(alpha <= 1.0 + 1e-9) and alpha.sum() > 0

    edited = _svm()
    edited.extra = pyo.Constraint(expr=edited.alpha[0] <= 0.5)
    with pytest.raises(IncompatibleModelError, match="cannot take this model.*piqp") as err:
        pyo.SolverFactory("svm_models.libsvm").solve(edited)
    assert isinstance(err.value, sm.CapabilityError)
    with pytest.raises(IncompatibleModelError, match="no builder record"):
        NewSolverFactory("svm_models.libsvm").solve(_model("qp", "min"))


# ---------------------------------------------------------------------------------------
# The new interface's objects, and the registration


def test_the_new_interface_objects():
    require("clarabel")
    ref = _gurobi("lp", "min")
    opt = NewSolverFactory("svm_models.clarabel")
    assert opt.available() and not opt.is_persistent()
    assert isinstance(opt.version(), tuple) and len(opt.version()) >= 2
    assert opt.name == "svm_models.clarabel"
    m = _model("lp", "min")
    log = io.StringIO()
    res = opt().solve(m, time_limit=30, load_solutions=True, tee=log,
                      raise_exception_on_nonoptimal_result=True)
    assert "Clarabel" in log.getvalue()   # the backend's log went to the stream
    assert res.termination_condition is TerminationCondition.convergenceCriteriaSatisfied
    assert res.solution_status is SolutionStatus.optimal
    assert res.incumbent_objective == pytest.approx(ref["objective"], rel=OBJ_REL)
    assert res.solver_name == "svm_models.clarabel"
    assert res.timing_info.wall_time >= 0 and res.timing_info.start_timestamp is not None
    _agrees(_answer(m), ref)
    assert res.solution_loader.get_duals()[m.ge] == pytest.approx(1.0, abs=DUAL_ABS)


def test_names_are_registered_on_import_in_a_fresh_process():
    code = (
        "import pyomo.environ as pyo\n"
        "from pyomo.contrib.solver.common.factory import SolverFactory as S\n"
        f"names = {list(NAMES)!r}\n"
        "assert not any(n in pyo.SolverFactory for n in names)\n"
        "import svm_models\n"
        "assert all(n in pyo.SolverFactory and n in S for n in names), list(pyo.SolverFactory)\n"
        "assert all(pyo.SolverFactory(n).available() for n in names)\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    for n in NAMES:   # and in this process, beside Pyomo's own (no clash)
        assert n in pyo.SolverFactory and n in NewSolverFactory
    assert "ipopt" in NewSolverFactory and "highs" in pyo.SolverFactory


def test_an_svm_built_by_the_library_takes_the_fast_path():
    """The record proves the model: the backend is handed its matrices (path "fast"), the
    same answer as Gurobi's on the same model; a bound changed by the user is seen."""
    require("piqp")
    rng = np.random.default_rng(4)
    X = rng.normal(size=(12, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    m, ref = sm.build("soft_l1_dual", X, y, C=1.0), sm.build("soft_l1_dual", X, y, C=1.0)
    res = NewSolverFactory("svm_models.piqp").solve(m)
    assert res.extra_info.path == "fast"
    assert res.termination_condition is TerminationCondition.convergenceCriteriaSatisfied
    require("gurobi")
    pyo.SolverFactory("gurobi_direct").solve(ref)
    objective = next(ref.component_data_objects(pyo.Objective, active=True))
    assert res.incumbent_objective == pytest.approx(pyo.value(objective), rel=OBJ_REL)
    m.alpha[0].setub(0.01)
    res = NewSolverFactory("svm_models.piqp").solve(m)
    assert res.solution_status is SolutionStatus.optimal and m.alpha[0].value <= 0.01 + 1e-9


# ---------------------------------------------------------------------------------------
# Reduced costs: d(objective)/d(the variable's bound), the model's own sense (Pyomo's)


def _bounded(kind: str, sense: str):
    """x in [-1, 2]^3 with x0 at its lower bound and x2 at its upper one at the optimum
    (x = (-1, 1.5, 2) for "lp" and "qp"): the reduced costs by hand -- "lp": (1, 0, -1);
    "qp": df/dx0 - y_ge = 0.75 - 0.5 = 0.25 (y_ge = df/dx1 = 0.5, x1 off its bounds), 0, -1;
    "qcqp" (minimise -x0 - x1 - x2 with x0 <= 0.5 and the convex quadratic row
    x0^2 + x1^2 <= 2, active, the linear rows not): x = (0.5, sqrt(1.75), 2), the row's
    multiplier 1 / (2 x1) from x1's stationarity, so x0's reduced cost is
    -1 + 2 x0 / (2 x1) = -1 + 0.5 / sqrt(1.75), x1's 0, x2's -1 -- each negated when the
    model maximises -f."""
    m = pyo.ConcreteModel()
    s = 1.0 if sense == "min" else -1.0
    m.x = pyo.Var(range(3), bounds=(-1, 2))
    if kind == "lp":
        f = 2 * m.x[0] + m.x[1] - m.x[2]
    elif kind == "qp":
        f = 2 * m.x[0] + (m.x[1] - 1) ** 2 - m.x[2] + 0.5 * m.x[0] * m.x[1] + m.x[0] ** 2
    else:
        f = -m.x[0] - m.x[1] - m.x[2]
        m.x[0].setub(0.5)
        m.q = pyo.Constraint(expr=m.x[0] ** 2 + m.x[1] ** 2 <= 2)
    m.o = pyo.Objective(expr=s * f, sense=pyo.minimize if sense == "min" else pyo.maximize)
    m.ge = pyo.Constraint(expr=m.x[0] + m.x[1] >= 0.5)
    m.le = pyo.Constraint(expr=m.x[1] - m.x[2] <= 1)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


RC = {"lp": (1.0, 0.0, -1.0), "qp": (0.25, 0.0, -1.0),
      "qcqp": (-1.0 + 0.5 / np.sqrt(1.75), 0.0, -1.0)}


@pytest.mark.parametrize("name,kind,sense", [(n, k, s) for n in GENERAL for k in ("lp", "qp")
                                             for s in ("min", "max")]
                         + [("clarabel", "qcqp", s) for s in ("min", "max")])
def test_reduced_costs_by_hand(name, kind, sense):
    """Both interfaces: the legacy ``rc`` suffix and the new loader's
    ``get_reduced_costs`` (all, or the variables asked for)."""
    require(name)
    sign = 1.0 if sense == "min" else -1.0
    m = _bounded(kind, sense)
    pyo.SolverFactory(f"svm_models.{name}").solve(m)
    assert [m.rc[m.x[i]] for i in range(3)] == pytest.approx(
        [sign * r for r in RC[kind]], abs=DUAL_ABS)
    res = NewSolverFactory(f"svm_models.{name}").solve(_bounded(kind, sense),
                                                       load_solutions=False)
    rc = res.solution_loader.get_reduced_costs()
    assert sorted(rc.values()) == pytest.approx(sorted(sign * r for r in RC[kind]), abs=DUAL_ABS)


def test_no_reduced_costs_at_a_cones_apex():
    """min t with ||x|| <= t: the optimum is the apex, where the squared form's gradient
    vanishes and the multiplier cannot be carried: Pyomo's NoReducedCostsError, saying so;
    the values and duals are there."""
    from pyomo.contrib.solver.common.util import NoReducedCostsError

    require("clarabel")
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2))
    m.t = pyo.Var(bounds=(0, None))
    m.o = pyo.Objective(expr=m.t + 0.1 * m.x[0])
    m.cone = pyo.Constraint(expr=m.x[0] ** 2 + m.x[1] ** 2 <= m.t ** 2)
    res = NewSolverFactory("svm_models.clarabel").solve(m)
    assert res.solution_loader.get_vars()[m.t] == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(NoReducedCostsError, match="apex"):
        res.solution_loader.get_reduced_costs()


# ---------------------------------------------------------------------------------------
# A misspelt name, in either factory


@pytest.mark.parametrize("typo,hint", [("svm_models.piq", "did you mean 'svm_models.piqp'"),
                                       ("svm_models.Clarabell", "'svm_models.clarabel'"),
                                       ("svm_models.hihgs", "Pyomo's own 'highs'")])
def test_a_misspelt_name_answers_with_the_names_and_a_suggestion(typo, hint):
    from pyomo.common.errors import ApplicationError

    from svm_models.solvers.pyomo_factory import UnknownSolverError

    listed = "svm_models.piqp, svm_models.clarabel, svm_models.ipm, svm_models.libsvm"
    with pytest.raises(UnknownSolverError) as err:
        NewSolverFactory(typo)
    assert listed in str(err.value) and hint in str(err.value)
    assert isinstance(err.value, sm.ParameterError)
    legacy = pyo.SolverFactory(typo)
    assert not legacy.available(exception_flag=False)
    with pytest.raises(ApplicationError, match=re.escape(hint)):
        legacy.solve(_model("lp", "min"))
    # every other name as Pyomo answers it; the registered ones as registered
    assert NewSolverFactory("hihgs") is None
    assert sorted(n for n in NewSolverFactory if n.startswith("svm_models.")) == sorted(NAMES)
    assert pyo.SolverFactory("svm_models.piqp_v2").available()


def test_reduced_costs_through_a_cone():
    """min -x0 - x1 with ||(x0, x1)|| <= t, t in [0, 1], x0 <= 0.5: x = (0.5, sqrt(0.75)),
    t = 1; the cone's multiplier (squared form) 1 / (2 x1), so x0's reduced cost is
    -1 + 0.5 / sqrt(0.75) and t's -1 / sqrt(0.75) (d(-x1)/dt = -t / x1) -- to 1e-4: a
    cone's multiplier comes from Clarabel's conic dual at its cone tolerance (3e-5 off
    here)."""
    require("clarabel")
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), bounds=(None, 0.5))
    m.x[1].setub(None)
    m.t = pyo.Var(bounds=(0, 1))
    m.o = pyo.Objective(expr=-m.x[0] - m.x[1])
    m.cone = pyo.Constraint(expr=m.x[0] ** 2 + m.x[1] ** 2 <= m.t ** 2)
    rc = NewSolverFactory("svm_models.clarabel").solve(m).solution_loader.get_reduced_costs()
    assert [rc[m.x[0]], rc[m.x[1]], rc[m.t]] == pytest.approx(
        [-1 + 0.5 / np.sqrt(0.75), 0.0, -1 / np.sqrt(0.75)], abs=1e-4)


@pytest.mark.parametrize("name", GENERAL)
def test_load_solutions_false_on_a_block_keeps_the_parents_values(name):
    """A block solved whose constraints reference variables of the model above it (min y,
    y >= x + 2, y >= -x: x = -1, y = 1): with load_solutions=False every value stays as it
    was (x's 5 included) and the loader has the solution; loaded, they are the solution."""
    require(name)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=5.0)
    m.y = pyo.Var()
    m.b = pyo.Block()
    m.b.obj = pyo.Objective(expr=m.y)
    m.b.c1 = pyo.Constraint(expr=m.y >= m.x + 2)
    m.b.c2 = pyo.Constraint(expr=m.y >= -m.x)
    res = NewSolverFactory(f"svm_models.{name}").solve(m.b, load_solutions=False)
    assert (m.x.value, m.y.value) == (5.0, None)
    assert m.x.stale and m.y.stale
    res.solution_loader.load_vars()
    assert (m.x.value, m.y.value) == pytest.approx((-1.0, 1.0), abs=X_ABS)
    assert not m.x.stale and not m.y.stale

"""The backend table (``svm_models.solvers.table``): a backend is its module and one entry
(``MODULES``); every list of backends -- ``BACKENDS``, ``PROJECT_BACKENDS``, ``AUTO_ORDER``,
the Pyomo factory's names, conftest's lists -- is derived from the backends' declarations
(``Backend.project``, ``.auto``, ``.pyomo_solver``), and a backend declared outside the
package (here: scipy's ``linprog`` as an LP backend) registered by ``register_backend`` is
listed, tried by ``solver="auto"`` in its declared place, solves, and is offered to Pyomo,
as the package's own are."""

from __future__ import annotations

import importlib
import time

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.common.factory import SolverFactory

import conftest
import svm_models as sm
from svm_models.errors import ParameterError
from svm_models.solvers import (AUTO_ORDER, BACKENDS, PROJECT_BACKENDS, Backend, auto_choice,
                                capable, local_choice, pyomo_factory, register_backend, unregister_backend)
from svm_models.solvers.base import ORDER, MatrixResult
from svm_models.solvers.table import MODULES, catalogue_backends, declared
from svm_models.status import Status


# ---------------------------------------------------------------------------------------
# the derivations


def test_every_backend_comes_from_one_module_of_the_table():
    listed = [b.name for m in MODULES
              for b in declared(importlib.import_module(f"svm_models.solvers.{m}"))]
    assert listed == list(BACKENDS)   # (none registered from outside at this point)
    assert PROJECT_BACKENDS == tuple(n for n in listed if BACKENDS[n].project)


def test_auto_order_is_what_the_declarations_say():
    """Per class: exactly the backends with a rank for it, the ranks never falling, equal
    ranks in the table's order; a class nobody ranks is absent."""
    names = list(BACKENDS)
    for cls in ORDER:
        ranked = {n for n, b in BACKENDS.items() if cls in b.auto}
        assert set(AUTO_ORDER.get(cls, ())) == ranked, cls
        order = AUTO_ORDER.get(cls, ())
        for a, b in zip(order, order[1:]):
            ra, rb = BACKENDS[a].auto[cls], BACKENDS[b].auto[cls]
            assert ra < rb or (ra == rb and names.index(a) < names.index(b)), (cls, a, b)
    assert list(AUTO_ORDER) == [c for c in ORDER if c in AUTO_ORDER]
    # a rank is given only for a class the backend takes (a structured one: its structure's)
    for b in BACKENDS.values():
        assert b.structured is not None or set(b.auto) <= set(b.classes), b.name


def test_the_pyomo_factory_offers_what_the_declarations_offer():
    offered = [n for n, b in BACKENDS.items() if b.pyomo_solver]
    assert list(pyomo_factory.REGISTERED) == offered == list(pyomo_factory.SOLVERS)
    for n in offered:
        assert SolverFactory(f"svm_models.{n}").backend_name == n
        assert pyo.SolverFactory(f"svm_models.{n}") is not None


def test_conftest_lists_are_derived():
    """Each list holds the project's backends with its property, in the table's order."""
    def want(prop):
        return tuple(n for n in PROJECT_BACKENDS if prop(BACKENDS[n]))

    assert conftest.QP_BACKENDS == want(lambda b: b.takes("QP"))
    for cls in ("LP", "QCQP", "MILP", "MIQP"):
        assert getattr(conftest, f"{cls}_BACKENDS") == want(lambda b: b.takes(cls)), cls
    assert set(conftest.DUAL_BACKENDS) <= set(conftest.QP_BACKENDS)
    assert all(BACKENDS[n].duals for n in conftest.DUAL_BACKENDS)
    assert all(BACKENDS[n].matrix is not None for n in conftest.FAST_BACKENDS)
    assert "libsvm" not in conftest.QP_BACKENDS   # (structured: takes no class in general)


def test_the_readme_solver_table_names_the_project_backends():
    """The README's "Solvers" table (written by hand: each backend's particulars) has one row
    per project backend, each naming the classes it declares."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    body = text.split("\n## Solvers\n", 1)[1].split("\n## ", 1)[0]
    rows = [ln.strip("|").split("|") for ln in body.splitlines() if ln.startswith("| `")]
    names = [r[0].strip().strip("`") for r in rows]
    assert sorted(names) == sorted(PROJECT_BACKENDS)
    for r, n in zip(rows, names):
        assert all(c in r[2] for c in BACKENDS[n].classes), n


def test_a_declaration_the_table_cannot_hold_is_refused():
    lp = frozenset({"LP"})
    with pytest.raises(ParameterError, match="already registered"):
        register_backend(Backend(name="highs", classes=lp))
    with pytest.raises(ParameterError, match="does not take"):
        register_backend(Backend(name="x_lp", classes=lp, auto={"QP": 1}))
    with pytest.raises(ParameterError, match="not a problem class"):
        register_backend(Backend(name="x_lp", classes=lp, auto={"LQ": 1}))
    with pytest.raises(ParameterError, match="project=True"):
        register_backend(Backend(name="x_lp", classes=lp, project=True))
    with pytest.raises(ParameterError, match="package's backends"):
        unregister_backend("highs")
    assert "x_lp" not in BACKENDS


# ---------------------------------------------------------------------------------------
# the proof: a backend defined here, outside the package


def linprog_solve(sf, opts, state=None) -> MatrixResult:
    """An LP by scipy's ``linprog`` (HiGHS inside scipy): the matrix adapter of a backend
    defined outside the package. Row duals as the table asks: d(objective)/d(bound)."""
    from scipy.optimize import linprog

    assert not sf.quad and not sf.qrows and not sf.cones, "an LP only"
    eq_idx, Aeq, beq, in_idx, Ain, lin, uin = sf.equality_split()
    up, lo = np.isfinite(uin), np.isfinite(lin)
    A_ub = np.vstack([Ain[up].toarray(), -Ain[lo].toarray()]) if len(in_idx) else None
    b_ub = np.concatenate([uin[up], -lin[lo]]) if len(in_idx) else None
    bounds = [(lo_ if np.isfinite(lo_) else None, hi if np.isfinite(hi) else None)
              for lo_, hi in zip(sf.lx, sf.ux)]
    t0 = time.perf_counter()
    r = linprog(sf.c, A_ub=A_ub, b_ub=b_ub, A_eq=Aeq.toarray() if len(eq_idx) else None,
                b_eq=beq if len(eq_idx) else None, bounds=bounds, method="highs",
                options={"primal_feasibility_tolerance": opts.tolerance,
                         "dual_feasibility_tolerance": opts.tolerance})
    status = {0: Status.optimal, 1: Status.iteration_limit, 2: Status.infeasible,
              3: Status.unbounded}.get(r.status, Status.numerical_error)
    res = MatrixResult(status=status, message=r.message, interface="scipy-linprog")
    if status is Status.optimal:
        res.x = np.asarray(r.x)
        duals = np.zeros(sf.m)
        if len(eq_idx):
            duals[eq_idx] = r.eqlin.marginals
        if len(in_idx):
            m = np.asarray(r.ineqlin.marginals)
            k = int(up.sum())
            d = np.zeros(len(in_idx))
            d[up] += m[:k]
            d[lo] -= m[k:]
            duals[in_idx] = d
        res.row_duals = duals
        res.objective = sf.objective(res.x)
        res.iterations = int(r.nit)
    res.extra["time"] = time.perf_counter() - t0
    return res


SCIPY_LP = Backend(name="scipy_lp", classes=frozenset({"LP"}), modules=("scipy",),
                   matrix=linprog_solve, auto={"LP": 5},   # first on an LP (HiGHS: 10)
                   pyomo_solver="scipy's linprog through svm_models (a test's backend)",
                   install="pip install scipy", note="scipy.optimize.linprog (a test's backend)")


@pytest.fixture
def scipy_lp():
    before = {k: tuple(v) for k, v in AUTO_ORDER.items()}
    register_backend(SCIPY_LP)
    try:
        yield SCIPY_LP.name
    finally:
        unregister_backend(SCIPY_LP.name)
        assert "scipy_lp" not in BACKENDS and AUTO_ORDER == before
        assert "scipy_lp" not in pyomo_factory.REGISTERED
        with pytest.raises(ParameterError, match="unknown solver 'svm_models.scipy_lp'"):
            SolverFactory("svm_models.scipy_lp")


def test_a_backend_registered_from_outside_is_one_of_the_table(scipy_lp):
    listing = sm.solvers()[scipy_lp]
    assert listing["available"] and listing["classes"] == ["LP"] and listing["fast_path"]
    assert AUTO_ORDER["LP"][0] == scipy_lp and "QP" not in BACKENDS[scipy_lp].auto
    assert auto_choice("LP")[0][0] == scipy_lp
    assert scipy_lp not in [n for n, _ in auto_choice("QP")]
    assert scipy_lp in capable("LP") and scipy_lp not in capable("QP")
    assert f"`{scipy_lp}` where installed" in catalogue_backends("LP")
    # the library's own small convex solves (warm starts, c_tuning_bound's points) see it too
    assert local_choice("LP")[0] == scipy_lp and scipy_lp not in local_choice("QP")


def test_local_choice_is_auto_order_without_structured_or_global_backends():
    for cls, order in AUTO_ORDER.items():
        expect = [n for n in order if sm.solvers()[n]["available"]
                  and BACKENDS[n].structured is None and not BACKENDS[n].global_opt]
        assert list(local_choice(cls)) == expect, cls
    assert "scip" not in local_choice("QP") and "libsvm" not in local_choice("QP")


def test_a_backend_registered_from_outside_solves(scipy_lp):
    """The 1-norm SVM (an LP) by the new backend, by name and by ``auto``, against HiGHS and
    Clarabel: the same classifier and objective; the QP refused before anything runs."""
    X, y = conftest.blobs(3, l=30, d=3)
    mine = sm.fit(X, y, formulation="l1_norm_primal", solver=scipy_lp, C=1.0)
    auto = sm.fit(X, y, formulation="l1_norm_primal", C=1.0)
    assert auto.extra["solver_choice"]["used"] == scipy_lp
    for ref_name in conftest.usable(("highs", "clarabel")):
        ref = sm.fit(X, y, formulation="l1_norm_primal", solver=ref_name, C=1.0)
        for sol in (mine, auto):
            assert sol.status is Status.optimal
            assert sol.objective == pytest.approx(ref.objective, rel=1e-7)
            assert np.allclose(sol.w, ref.w, atol=1e-6) and sol.b == pytest.approx(ref.b, abs=1e-6)
            assert np.array_equal(sol.predict(X), ref.predict(X))
    with pytest.raises(sm.CapabilityError, match="scipy_lp"):
        sm.fit(X, y, formulation="soft_l1_primal", solver=scipy_lp, C=1.0)


def test_a_backend_registered_from_outside_is_a_pyomo_solver(scipy_lp):
    """min x + y, x + 2y >= 2, 3x + y >= 3, x, y >= 0: x = 4/5, y = 3/5, objective 7/5, by
    hand; the duals 2/5 and 1/5 (their sum of rows times duals is the objective)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, None))
    m.y = pyo.Var(bounds=(0, None))
    m.o = pyo.Objective(expr=m.x + m.y)
    m.a = pyo.Constraint(expr=m.x + 2 * m.y >= 2)
    m.b = pyo.Constraint(expr=3 * m.x + m.y >= 3)
    res = SolverFactory(f"svm_models.{scipy_lp}").solve(m)
    assert res.incumbent_objective == pytest.approx(1.4, rel=1e-9)
    assert (pyo.value(m.x), pyo.value(m.y)) == pytest.approx((0.8, 0.6), rel=1e-9)
    duals = res.solution_loader.get_duals()
    assert (duals[m.a], duals[m.b]) == pytest.approx((0.4, 0.2), rel=1e-9)


# ---------------------------------------------------------------------------------------
# a package's backends: the entry-point group svm_models.backends

PLUGIN = '''
from svm_models.solvers import Backend
from svm_models.solvers.clarabel import solve

# Clarabel's matrix adapter under another name: a package's backend
BACKEND = Backend(name="clarabel_twin", classes=frozenset({"LP", "QP"}), modules=("clarabel",),
                  matrix=solve, auto={"QP": 15}, note="Clarabel, as a plugin")
'''


def _install_plugin(tmp_path, module: str, value: str) -> None:
    (tmp_path / f"{module}.py").write_text(PLUGIN)
    dist = tmp_path / f"{module}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[svm_models.backends]\ntwin = {value}\n")


def test_a_package_registers_a_backend_through_the_entry_point_group(tmp_path, monkeypatch):
    from svm_models.solvers.table import load_entry_points

    conftest.require("clarabel")
    _install_plugin(tmp_path, "svm_backend_demo", "svm_backend_demo")   # (a module)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert load_entry_points() == ["clarabel_twin"]
        assert load_entry_points() == []   # (once)
        assert sm.solvers()["clarabel_twin"]["available"]
        assert AUTO_ORDER["QP"][:3] == ("libsvm", "piqp", "clarabel_twin")   # ranks 0, 10, 15
        X, y = conftest.blobs(4, l=30)
        got = sm.fit(X, y, formulation="soft_l1_primal", solver="clarabel_twin", C=1.0)
        want = sm.fit(X, y, formulation="soft_l1_primal", solver="highs", C=1.0)
        assert got.objective == pytest.approx(want.objective, rel=1e-7)
        assert np.allclose(got.w, want.w, atol=1e-5) and got.b == pytest.approx(want.b, abs=1e-5)
    finally:
        if "clarabel_twin" in BACKENDS:
            unregister_backend("clarabel_twin")


def test_a_broken_backend_plugin_is_a_warning_naming_it(tmp_path, monkeypatch):
    from svm_models.errors import SVMWarning
    from svm_models.solvers.table import load_entry_points

    _install_plugin(tmp_path, "svm_backend_broken", "svm_backend_broken:NoSuchThing")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.warns(SVMWarning, match="backend plugin 'twin'.*could not be loaded"):
        assert load_entry_points() == []
    assert "clarabel_twin" not in BACKENDS

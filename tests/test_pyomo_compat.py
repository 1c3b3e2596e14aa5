"""Pyomo's internals (svm_models/model/pyomo_compat.py, the one module that names them): for
the installed Pyomo, each private name exists and means what the library uses it for. A new
Pyomo version is supported when this file passes with it and it is added to CHECKED."""

from __future__ import annotations

import operator
import re
import tomllib
from pathlib import Path

import pyomo
import pyomo.environ as pyo

from svm_models.model import pyomo_compat as pc

ROOT = Path(__file__).resolve().parents[1]


def test_the_installed_pyomo_is_one_checked_and_the_pin_says_so():
    major, minor = (int(p) for p in pyomo.__version__.split(".")[:2])
    assert (major, minor) in pc.CHECKED, pyomo.__version__
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pin = next(d for d in deps if re.match(r"pyomo\b", d, re.I))
    for ver in pc.CHECKED:   # the pin admits the checked versions and stops before the next
        assert f"{ver[0]}.{ver[1]}" in pin or f"{ver[0]}.{ver[1] + 1}" in pin, pin


def _model():
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 3)
    m.x = pyo.Var(m.I, bounds=(-1.0, 2.0))
    m.e = pyo.Expression(m.I, rule=lambda m, i: 2 * m.x[i])
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] >= -0.5)
    m.o = pyo.Objective(expr=sum(m.x[i] for i in m.I))
    return m


def test_variable_slots():
    m = _model()
    v = m.x[1]
    lb, ub, dom = (operator.attrgetter(a)(v) for a in pc.VAR_BOUND_SLOTS)
    assert (lb, ub, dom) == (-1.0, 2.0, pyo.Reals)
    assert operator.attrgetter(pc.VAR_DOMAIN)(v) is dom
    assert operator.attrgetter(pc.VAR_FIXED)(v) is False
    v.fix(0.5)
    assert operator.attrgetter(pc.VAR_FIXED)(v) is True
    assert pc.values_of([m.x[0], v]) == [None, 0.5]


def test_expression_slots_hold_the_expression():
    m = _model()
    c, e = m.c[2], m.e[2]
    assert pc.held_expression(c) is c.expr
    assert pc.held_expression(e)[0] is e.expr
    assert pc.EXPR_SLOT.__get__(c) is c.expr
    assert pc.ARGS_SLOT.__get__(e)[0] is e.expr
    assert pc.OBJ_ARGS_SLOT.__get__(m.o)[0] is m.o.expr
    c.set_value(m.x[2] <= 1.0)   # a user's change replaces the object held
    assert pc.held_expression(c) is c.expr


def test_members_index_and_activity():
    m = _model()
    d = pc.member_dict(m.x)
    assert list(d) == [0, 1, 2, 3] and all(d[i] is m.x[i] for i in d)
    assert pc.member_index(m.c[3]) == 3
    active = operator.attrgetter(pc.CON_ACTIVE)
    assert active(m.c[0]) is True
    m.c[0].deactivate()
    assert active(m.c[0]) is False


def test_a_batch_load_is_pyomos_own():
    m = _model()
    xs = [m.x[i] for i in m.I]
    pc.load_values(xs, [0.0, 1.0, 2.0, 3.0])
    assert [v.value for v in xs] == [0.0, 1.0, 2.0, 3.0]
    assert not any(v.stale for v in xs)
    pc.load_values(xs[:2], [5.0, 6.0])   # the next load: the others become stale
    assert [v.stale for v in xs] == [False, False, True, True]


def test_scip_knows_the_lazy_expressions_once_a_model_is_built():
    from pyomo.contrib.solver.solvers.scip import base as scip_base
    from pyomo.core.base.expression import ExpressionData

    import svm_models as sm
    from svm_models.model.lazy import LazyExpressionData, LazyScalarExpression

    sm.build("soft_l1_primal", [[0.0, 0.0], [1.0, 1.0]], [-1, 1])   # constructs lazy members
    table = scip_base._operator_map
    assert table[LazyExpressionData] is table[ExpressionData]
    assert table[LazyScalarExpression] is table[ExpressionData]


def test_scip_solves_capture_no_file_descriptor_inside_only():
    """SCIP's guard switches Pyomo's capture of file descriptors off through Pyomo's public
    override (no Pyomo module patched): inside, ``capture_output(capture_fd=True)`` -- as
    ``scip_direct`` calls it -- leaves descriptor 1 where it was; after, it captures it
    again."""
    import os

    from pyomo.common import tee

    from svm_models.solvers.scip import pipe_free_capture

    before = tee.OVERRIDE_CAPTURE_OUTPUT

    def fd1_target():
        return os.fstat(1).st_ino, os.fstat(1).st_dev

    outside = fd1_target()
    with pipe_free_capture():
        with tee.capture_output(tee.TeeStream(), capture_fd=True):
            assert fd1_target() == outside
    assert tee.OVERRIDE_CAPTURE_OUTPUT == before
    with tee.capture_output(tee.TeeStream(), capture_fd=True):
        assert fd1_target() != outside


def test_no_pyomo_patch_at_import():
    """Importing the package patches nothing in Pyomo (it registers its solvers, in
    registries that answer a misspelt ``svm_models.<name>``: pyomo_compat.PrefixRegistry):
    SCIP's dispatch table learns the lazy types when the first lazy component is built (a
    fresh interpreter)."""
    import subprocess
    import sys

    code = ("import svm_models\n"
            "from pyomo.contrib.solver.solvers.scip import base\n"
            "from svm_models.model.lazy import LazyExpressionData\n"
            "print(LazyExpressionData in base._operator_map)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    assert out == ["False"]


def test_the_component_internals_the_lazy_classes_extend():
    """model/lazy.py subclasses Pyomo's components: it reads ``_constructed``, sets an
    objective's ``_sense`` and gives a Param its own ``_data`` mapping -- each checked here
    for the installed Pyomo."""
    m = pyo.ConcreteModel()
    m.p = pyo.Param([0, 1], initialize={0: 1.0, 1: 2.0})
    m.e = pyo.Expression(expr=1.0)
    m.o = pyo.Objective(expr=m.e, sense=pyo.maximize)
    assert m.p._constructed and m.e._constructed
    assert isinstance(m.p._data, dict) and m.p[1] == 2.0
    assert m.o._sense == pyo.maximize and m.o.sense == pyo.maximize
    m.o._sense = pyo.minimize
    assert m.o.sense == pyo.minimize


def test_scip_solves_a_model_loaded_in_a_fresh_process(tmp_path):
    """Review: SCIP learned the lazy types only when a lazy component was constructed, and an
    unpickled model is not: a fresh process refused the expression type."""
    import pickle
    import subprocess
    import sys

    import svm_models as sm

    X = [[0.0, 0.0], [0.0, 1.0], [2.0, 0.0], [2.0, 1.0]]
    m = sm.build("soft_l1_primal", X, [-1, -1, 1, 1], C=1.0)
    path = tmp_path / "m.pkl"
    path.write_bytes(pickle.dumps(m))
    ref = sm.solve(m, solver="highs").objective
    code = ("import pickle, sys\nimport svm_models as sm\n"
            f"m = pickle.loads(open({str(path)!r}, 'rb').read())\n"
            "s = sm.solve(m, solver='scip')\nprint(s.status.value, repr(s.objective))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300).stdout.split()
    assert out[0] == "optimal" and abs(float(out[1]) - ref) <= 1e-6 * max(1.0, abs(ref))


def test_persistent_interfaces_keep_the_native_model_and_maps():
    """switch='indicator' (formulations/mip.md): the native model, the variable map and the
    constraint map of gurobi_persistent and scip_persistent, as persistent_native and
    persistent_swap read them; a swap makes the new native constraint stand for the row."""
    from conftest import require

    from svm_models.solvers.base import preserved_fpu

    for plugin, backend in (("gurobi_persistent", "gurobi"), ("scip_persistent", "scip")):
        require(backend)
        m = _model()
        m.z = pyo.Var(domain=pyo.Binary)
        m.k = pyo.Constraint(expr=m.x[0] + 3 * m.z >= 1)
        opt = pyo.SolverFactory(plugin)
        with preserved_fpu():
            opt.set_instance(m)
        native, vmap = pc.persistent_native(opt)
        assert native is not None and m.x[0] in vmap and m.z in vmap, plugin
        old = opt._pyomo_con_to_solver_con_map[m.k]
        assert pc.persistent_swap(opt, m.k, "stand-in") is old
        assert opt._pyomo_con_to_solver_con_map[m.k] == "stand-in"


def test_the_factories_look_names_up_in_their_registry():
    """Pyomo's solver factories test ``name in _cls`` and call ``_cls[name](**kwds)``: a
    :class:`PrefixRegistry` in a fresh factory of each kind answers an unknown name under
    its prefix, and leaves every other name, the registration and the iteration as they
    were; installing it twice changes nothing; factories that do not share one registry
    are refused."""
    import pytest
    from pyomo.contrib.solver.common.factory import SolverFactoryClass
    from pyomo.opt.base.solvers import SolverFactoryClass as LegacyFactoryClass

    answered = []

    def answer(name):
        return lambda **kw: answered.append((name, kw)) or "answer"

    new, legacy = SolverFactoryClass(), LegacyFactoryClass("solver type")
    for factory in (new, legacy):
        factory._cls["p.real"] = lambda **kw: "real"
        pc.answer_unknown_names([factory], "p.", answer)
        registry = factory._cls
        pc.answer_unknown_names([factory], "p.", answer)
        assert factory._cls is registry and isinstance(registry, pc.PrefixRegistry)
        assert factory("p.real") == "real" and factory("p.typo") == "answer"
        assert "p.typo" in factory and list(factory) == ["p.real"]
        factory._cls["p.later"] = lambda **kw: "later"
        assert factory("p.later") == "later"
    assert new("q.other") is None     # outside the prefix: Pyomo's own answer
    assert [n for n, _ in answered] == ["p.typo", "p.typo"]
    with pytest.raises(ValueError, match="share"):
        pc.answer_unknown_names([SolverFactoryClass(), SolverFactoryClass()], "p.", answer)

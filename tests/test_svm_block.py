"""``svm_models.SVMBlock``: an SVM as a Pyomo block type (issue 28), scalar and indexed.

Every answer is checked against an independent one: the same data built by
``svm_models.build`` into a model of its own and solved by ``svm_models.solve`` (w, b,
objective to 1e-6), scikit-learn's SVC, separate fits per class. Copies (``clone``,
``pickle``) must keep the fast path and stay sound: a member changed before the copy stays
changed in the copy. Real solvers only, small problems (Gurobi's size-limited licence).
"""

from __future__ import annotations

import pickle

import numpy as np
import pyomo.environ as pyo
import pytest

import svm_models as sm
from svm_models.block import SVMBlockData
from svm_models.errors import DataError, ParameterError, SVMError
from svm_models.model.record import verify
from svm_models.solvers.base import preserved_fpu

from conftest import GUROBI_MAX_VARS, blobs, n_vars, require

#: Pyomo warns about values 1e-9 outside a bound: not what is tested here
pytestmark = pytest.mark.usefixtures("quiet_pyomo")

C = 0.7          # (not the default 1.0: a C lost on the way shows)
TOL = 1e-6


def data(seed: int = 0, l: int = 30):
    return blobs(seed, l=l, d=2, sep=1.0)


def reference(name: str, X, y, solver: str = "piqp", **params):
    """The same SVM in a model of its own: ``svm_models.solve(svm_models.build(...))``."""
    return sm.solve(sm.build(name, X, y, **params), require(solver))


def assert_same(sol, ref, what: str = ""):
    assert sol.status == "optimal", what
    assert sol.objective == pytest.approx(ref.objective, rel=TOL, abs=TOL), what
    assert sol.b == pytest.approx(ref.b, rel=TOL, abs=TOL), what
    np.testing.assert_allclose(sol.w, ref.w, rtol=0, atol=TOL, err_msg=what)


def sense_sign(obj) -> float:
    return 1.0 if obj.sense == pyo.minimize else -1.0


#: Pyomo's solvers at a tight tolerance, for models that are not the formulation (an SVM
#: beside other rows or in a summed objective): extract then reads b from the KKT conditions
#: at the values as solved, without the polish a proved model gets (Gurobi's default
#: barrier tolerance left alpha 2e-6 off a bound and b unavailable)
TIGHT = {"gurobi_direct": {"BarConvTol": 1e-12}, "cyipopt": {"tol": 1e-12}}


def pyomo_solve(m, solver: str, tight: bool = False):
    opt = pyo.SolverFactory(solver)
    if not opt.available(exception_flag=False):
        require({"gurobi_direct": "gurobi", "cyipopt": "ipopt"}.get(solver, solver))
    if solver.startswith("gurobi"):
        assert n_vars(m) <= GUROBI_MAX_VARS, "test design: too large for Gurobi's pip licence"
    with preserved_fpu():   # cyipopt would leave the x87 unit at 53 bits for later tests
        opt.solve(m, options=TIGHT.get(solver, {}) if tight else {})


# ---------------------------------------------------------------------------------------
# The block type


def test_the_block_type_builds_what_build_builds_and_solves_to_its_answer():
    X, y = data()
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    assert not m.svm.is_built and m.svm.formulation is None
    assert m.svm.build("soft_l1_dual", X, y, C=C) is m.svm       # (chainable)
    assert isinstance(m.svm, SVMBlockData) and m.svm.is_built
    assert m.svm.formulation == "soft_l1_dual"
    # svm_models.build(..., block=) fills an SVMBlock with the very same components
    other = pyo.ConcreteModel()
    other.svm = sm.SVMBlock()
    assert sm.build("soft_l1_dual", X, y, block=other.svm, C=C) is other.svm
    assert other.svm.formulation == "soft_l1_dual"
    names = lambda b: [c.local_name for c in b.component_objects(descend_into=False)]  # noqa: E731
    assert names(m.svm) == names(other.svm) == names(sm.build("soft_l1_dual", X, y, C=C))

    ref = reference("soft_l1_dual", X, y, C=C)
    sol = sm.solve(m, require("piqp"))
    assert sol.path == "fast" and "general_path_reason" not in sol.extra
    assert_same(sol, ref, "svm_models.solve(model)")
    assert_same(sm.solve(other, "piqp"), ref, "built by svm_models.build(block=)")
    assert_same(m.svm.solution(), ref, "solution()")
    assert_same(m.svm.extract(solver="piqp"), ref, "extract()")
    assert_same(sm.extract(m.svm), ref, "svm_models.extract(block)")
    loose = m.svm.extract(tol=1e-3)                # (tol scales the support threshold)
    assert loose.extra["support_threshold"] == sm.extract(m.svm, tol=1e-3).extra["support_threshold"]
    assert loose.extra["support_threshold"] > 100 * sol.extra["support_threshold"]
    assert_same(m.svm.solve(require("clarabel")), ref, "block.solve on another backend")

    # scikit-learn's SVC: the linear 1-norm soft margin
    from sklearn.svm import SVC

    svc = SVC(C=C, kernel="linear", tol=1e-10, shrinking=False).fit(X, y)
    np.testing.assert_allclose(sol.w, svc.coef_.ravel(), rtol=0, atol=1e-5)
    assert sol.b == pytest.approx(float(svc.intercept_[0]), abs=1e-5)


@pytest.mark.parametrize("solver", ["gurobi_direct", "cyipopt", "highs"])
def test_extract_after_any_pyomo_solver(solver):
    """The block solved by one of Pyomo's own solvers on the whole model, then extracted."""
    X, y = data(1)
    for name in ("soft_l1_dual", "soft_l1_primal"):
        m = pyo.ConcreteModel()
        m.svm = sm.SVMBlock()
        m.svm.build(name, X, y, C=C)
        pyomo_solve(m, solver)                    # (default tolerances: the model is proved)
        assert_same(m.svm.extract(solver=solver), reference(name, X, y, C=C), f"{name}/{solver}")


# ---------------------------------------------------------------------------------------
# Indexed: one SVM per class


def three_classes(seed: int = 4, per: int = 15):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 2.0], [-1.8, -1.0], [1.8, -1.0]])
    X = np.vstack([c + rng.normal(scale=1.0, size=(per, 2)) for c in centres])
    labels = np.repeat(np.array(["a", "b", "c"]), per)
    return X, labels


def one_vs_rest_model(X, labels, name="soft_l1_dual"):
    classes = sorted(set(labels.tolist()))
    m = pyo.ConcreteModel()
    m.svms = sm.SVMBlock(classes)
    for k in classes:
        m.svms[k].build(name, X, np.where(labels == k, 1, -1), C=C)
    return m, classes


def test_one_vs_rest_one_block_per_class_solved_one_at_a_time():
    X, labels = three_classes()
    m, classes = one_vs_rest_model(X, labels)
    copy = m.clone()                               # (an indexed SVMBlock clones as well)
    assert [m.svms[k].formulation for k in classes] == ["soft_l1_dual"] * 3
    assert len(sm.api.svm_blocks(m)) == 3
    refs = {k: reference("soft_l1_dual", X, np.where(labels == k, 1, -1), C=C) for k in classes}
    for k in classes:
        for other in classes:
            (m.svms[other].activate if other == k else m.svms[other].deactivate)()
        sol = m.svms[k].solve(require("piqp"))
        assert sol.path == "fast"                  # the others deactivated: just this SVM
        assert_same(sol, refs[k], f"class {k}")
    sols = {}
    for k in classes:                             # each keeps its own values
        for other in classes:
            (m.svms[other].activate if other == k else m.svms[other].deactivate)()
        sols[k] = m.svms[k].solution()
        assert_same(sols[k], refs[k], f"class {k} afterwards")
    for k in classes:
        m.svms[k].activate()
    for k in classes:   # all active: no block is the whole model; b from KKT at solver accuracy
        sol = m.svms[k].solution()
        assert "not the formulation" in sol.extra["diagnostics"]
        assert sol.b == pytest.approx(refs[k].b, abs=1e-4)
    # the one-vs-rest classifier: the class of the largest decision value
    f = np.column_stack([sols[k].decision_function(X) for k in classes])
    g = np.column_stack([refs[k].decision_function(X) for k in classes])
    np.testing.assert_allclose(f, g, atol=1e-5)
    assert np.mean(np.array(classes)[f.argmax(axis=1)] == labels) > 0.8
    copy.svms["a"].deactivate()
    copy.svms["c"].deactivate()
    sol = sm.solve(copy, "piqp")
    assert sol.path == "fast" and copy.svms["b"]._svm.record.block is copy.svms["b"]
    assert_same(sol, refs["b"], "the clone's class b")


@pytest.mark.parametrize("solver", ["gurobi_direct", "piqp"])
def test_two_and_three_svms_solved_together_in_one_model(solver):
    """The SVMs' objectives summed into one (the blocks are independent), one solve by a
    Pyomo solver or svm_models.optimize, then each block extracted: each is its own fit."""
    X, labels = three_classes()
    m, classes = one_vs_rest_model(X, labels)
    sign = sense_sign(m.svms["a"].objective)
    for k in classes:
        m.svms[k].objective.deactivate()
    m.total = pyo.Objective(expr=sum(sign * m.svms[k].objective.expr for k in classes))
    if solver == "gurobi_direct":
        pyomo_solve(m, solver, tight=True)
    else:
        sm.optimize(m, require(solver))
    for k in classes:
        ref = reference("soft_l1_dual", X, np.where(labels == k, 1, -1), C=C)
        assert_same(m.svms[k].extract(solver=solver), ref, f"class {k}")
    with pytest.raises(ParameterError, match="3 SVM blocks"):
        sm.extract(m)                               # which one? say so


# ---------------------------------------------------------------------------------------
# Copies


def test_clone_is_independent_and_solves_on_the_fast_path():
    X, y = data(2)
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    m.svm.build("soft_l1_dual", X, y, C=C)        # the factor form: rows proved by identity
    first = sm.solve(m, require("piqp"))
    c = m.clone()
    rec = c.svm._svm.record
    # the clone's record names the clone's components, never the original's
    assert c.svm._svm.block is c.svm and rec.block is c.svm and c.svm is not m.svm
    assert rec.objective is c.svm.objective and rec.variables[0] is c.svm.alpha
    assert all(g.component is c.svm.component(g.component.local_name) for g in rec.rows)
    assert m.svm._svm.record.block is m.svm
    assert verify(rec) is None and rec.extension_reason() is None
    for vd in c.component_data_objects(pyo.Var):
        vd.set_value(None)
    again = sm.solve(c, "piqp")
    assert again.path == "fast" and "general_path_reason" not in again.extra
    assert_same(again, first, "clone")
    # independent: the clone at another C; the original keeps its values and its answer
    alpha = [m.svm.alpha[i].value for i in range(len(y))]
    c.svm.C = 10.0
    assert_same(sm.solve(c, "piqp"), reference("soft_l1_dual", X, y, C=10.0), "clone at C=10")
    assert [m.svm.alpha[i].value for i in range(len(y))] == alpha
    assert_same(sm.solve(m, "piqp"), first, "original after the clone's solve")


def test_a_member_changed_before_the_clone_stays_changed_in_it():
    X, y = data(2)
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    m.svm.build("soft_l1_dual", X, y, C=C)
    m.svm.factor[0].set_value(m.svm.z[0] - 1.5 * m.svm.Fv[0] == 0)
    assert verify(m.svm._svm.record) == "constraint 'svm.factor[0]' was changed"
    c = m.clone()
    assert verify(c.svm._svm.record) == "constraint 'svm.factor[0]' was changed"
    sol = sm.solve(c, require("piqp"))
    assert sol.path != "fast" and "svm.factor[0]" in sol.extra["general_path_reason"]
    # changed in the copy before its first use: as changed
    fresh = pyo.ConcreteModel()
    fresh.svm = sm.SVMBlock()
    fresh.svm.build("soft_l1_dual", X, y, C=C)
    c = fresh.clone()
    c.svm.factor[1].set_value(c.svm.z[1] - 1.5 * c.svm.Fv[1] == 0)
    assert verify(c.svm._svm.record) == "constraint 'svm.factor[1]' was changed"
    assert verify(fresh.svm._svm.record) is None


@pytest.mark.parametrize("name, params", [("soft_l1_primal", {}),
                                          ("soft_l1_dual", {"quad_form": "dense"})])
def test_pickle_round_trip_solves_the_same_on_the_fast_path(name, params):
    X, y = data(3)
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    m.svm.build(name, X, y, C=C, **params)
    ref = reference(name, X, y, C=C, **params)
    loaded = pickle.loads(pickle.dumps(m))
    assert loaded.svm.formulation == name and loaded.svm._svm.record.block is loaded.svm
    assert verify(loaded.svm._svm.record) is None
    assert loaded.svm._svm.record.extension_reason() is None     # still the formulation
    sol = sm.solve(loaded, require("piqp"))
    assert sol.path == "fast" and "general_path_reason" not in sol.extra
    assert_same(sol, ref, "unpickled")
    assert_same(loaded.svm.solution(), ref, "unpickled, extracted")
    # a bound changed before pickling is still a changed bound: not the formulation any more
    m.svm.component({"soft_l1_primal": "xi", "soft_l1_dual": "alpha"}[name])[0].setlb(0.5)
    assert m.svm._svm.record.extension_reason() is not None
    changed = pickle.loads(pickle.dumps(m))
    assert changed.svm._svm.record.extension_reason() == m.svm._svm.record.extension_reason()
    # changed in the loaded copy before its first use: as changed
    fresh = pickle.loads(pickle.dumps(loaded))
    var = fresh.svm.component({"soft_l1_primal": "xi", "soft_l1_dual": "alpha"}[name])
    var[1].setub(0.25)
    assert f"{var.name}[1] were changed" in fresh.svm._svm.record.extension_reason()


def test_pickle_of_the_default_linear_dual():
    """The default linear dual is the factor form, whose rows ``factor[k]`` a rule builds (a
    lambda once: pickling failed); every formulation: tests/test_pickle.py."""
    X, y = data(3)
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    m.svm.build("soft_l1_dual", X, y, C=C)
    assert m.svm._svm.facts.quad_form == "factor"
    sol = sm.solve(pickle.loads(pickle.dumps(m)), require("piqp"))
    assert sol.path == "fast" and "general_path_reason" not in sol.extra
    assert_same(sol, reference("soft_l1_dual", X, y, C=C), "unpickled factor form")


# ---------------------------------------------------------------------------------------
# Inside a larger model


@pytest.mark.parametrize("solver", ["piqp", "gurobi_direct", "cyipopt"])
def test_inside_a_larger_model_with_the_users_own_variables_and_constraints(solver):
    """The user's variables x, their constraint and objective term beside the SVM; the SVM's
    objective joins theirs. The problem separates: the SVM part is the SVM alone, the user's
    part min (x0 - 2)^2 + (x1 - 1)^2 s.t. x0 + x1 <= 1, whose answer is x = (1, 0)."""
    X, y = data(5)
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], bounds=(-5, 5))
    m.budget = pyo.Constraint(expr=m.x[0] + m.x[1] <= 1)
    m.svm = sm.SVMBlock()
    m.svm.build("soft_l1_dual", X, y, C=C)
    with pytest.raises(ParameterError, match="budget"):
        m.svm.solve("piqp")                        # the user's row would be left out
    sign = sense_sign(m.svm.objective)
    m.svm.objective.deactivate()
    user = (m.x[0] - 2) ** 2 + (m.x[1] - 1) ** 2
    m.obj = pyo.Objective(expr=sign * m.svm.objective.expr + user)
    if solver == "piqp":
        info = sm.optimize(m, require("piqp"))
        assert info.status == "optimal"
    else:
        pyomo_solve(m, solver, tight=True)
    np.testing.assert_allclose([m.x[0].value, m.x[1].value], [1.0, 0.0], atol=1e-5)
    assert_same(sm.extract(m.svm, solver=solver), reference("soft_l1_dual", X, y, C=C), solver)


# ---------------------------------------------------------------------------------------
# Errors


def test_built_twice_is_a_clear_error_by_either_way_and_the_block_is_kept():
    X, y = data()
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    m.svm.build("soft_l1_dual", X, y, C=C)
    for again in (lambda: m.svm.build("soft_l1_primal", X, y, C=C),
                  lambda: sm.build("soft_l1_primal", X, y, block=m.svm, C=C)):
        with pytest.raises(ParameterError, match="'svm' already holds the soft_l1_dual SVM"):
            again()
    assert m.svm.formulation == "soft_l1_dual"
    assert_same(sm.solve(m, require("piqp")), reference("soft_l1_dual", X, y, C=C), "kept")
    plain = pyo.ConcreteModel()                     # a plain Pyomo block: the same error
    plain.b = pyo.Block()
    sm.build("soft_l1_dual", X, y, block=plain.b, C=C)
    with pytest.raises(ParameterError, match="already holds"):
        sm.build("soft_l1_dual", X, y, block=plain.b, C=C)


def test_used_before_build_or_before_a_solve():
    X, y = data()
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    for use in (m.svm.solution, m.svm.extract, m.svm.solve):
        with pytest.raises(ParameterError, match=r"SVMBlock 'svm' holds no SVM yet: call "
                                                 r"svm\.build\(formulation, X, y"):
            use()
    with pytest.raises(ParameterError, match="no block built by svm_models.build"):
        sm.extract(m.svm)
    m.svm.build("soft_l1_dual", X, y, C=C)
    with pytest.raises(SVMError, match="has no value: solve the model before extracting"):
        m.svm.solution()


def test_unknown_formulation_or_bad_parameters_leave_the_block_empty():
    X, y = data()
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    with pytest.raises(ParameterError, match="unknown formulation 'soft_l1_duel' "
                                             r"\(did you mean 'soft_l1_dual'\?\)"):
        m.svm.build("soft_l1_duel", X, y, C=C)
    with pytest.raises(ParameterError, match="C must be a finite positive number"):
        m.svm.build("soft_l1_dual", X, y, C=-1.0)   # the builder had added the points' set
    with pytest.raises(DataError):
        m.svm.build("soft_l1_dual", X, y[:-1], C=C)
    assert not m.svm.is_built and list(m.svm.component_objects()) == []
    m.svm.build("soft_l1_dual", X, y, C=C)         # and the block is still good to build
    assert_same(sm.solve(m, require("piqp")), reference("soft_l1_dual", X, y, C=C), "after")


def test_the_readme_section_runs():
    import pathlib
    import re

    text = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    part = text[text.index("## An SVM as a Pyomo block"):]
    part = part[:part.index("\n## ", 1)]
    code = re.findall(r"```python\n(.*?)```", part, re.S)
    assert len(code) == 1
    from svm_models.datasets import toy

    scope = {"pyo": pyo, "sm": sm, "toy": toy}   # (imported by the README's first snippets)
    exec(compile(code[0], "README.md", "exec"), scope)
    ref = reference("soft_l1_dual", *scope["toy"](), C=1.0)
    assert_same(scope["m"].svm.solution(), ref, "README")

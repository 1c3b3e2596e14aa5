"""Edited models keep most of the fast path: the record for what it still proves, Pyomo for
the edits (:mod:`svm_models.model.mixed`, path ``"mixed"``).

Each edit kind of issue 28 -- a user's row, a deactivated recorded row, a fixed variable, a
term added to the objective, the SVM inside a larger model with variables of its own, a
rewritten recorded row -- is checked twice, independently: the mixed standard form equals
the general reader's (:func:`~svm_models.model.reader.from_pyomo`) at random points
(objective, every row's activity and bounds, variable bounds), and the mixed solve equals a
general-path solve by another backend. The random-edit property test
(``tests/test_record.py``) covers combinations.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from conftest import blobs, require, separable

import svm_models as sm
from svm_models.model.mixed import Edits, assemble_edited, edits
from svm_models.model.reader import from_pyomo

GAMMA = 0.5


def _dual(X, y, block=None):
    return sm.build("soft_l1_dual", X, y, block=block, C=1.0, kernel="rbf", gamma=GAMMA)


def e_row(m, blk):
    blk.extra = pyo.Constraint(expr=sum(blk.alpha[i] for i in range(5)) <= 0.5)


def e_deactivate(m, blk):
    blk.balance.deactivate()


def e_fix(m, blk):
    blk.alpha[2].fix(0.25)


def e_objective(m, blk):
    blk.objective.expr = blk.objective.expr - 0.2 * sum(blk.alpha[i] ** 2 for i in range(4))


def e_rewrite(m, blk):
    blk.balance.set_value(sum(blk.y[i] * blk.alpha[i] for i in blk.I) == 0.3)


def e_outer(m, blk):
    m.t = pyo.Var(bounds=(-5, 5))
    m.link = pyo.Constraint(expr=m.t >= sum(blk.alpha[i] for i in range(3)) - 0.5)
    blk.objective.deactivate()
    m.obj = pyo.Objective(expr=blk.objective.expr - (m.t - 1.0) ** 2, sense=pyo.maximize)


EDITS = {"row": e_row, "deactivate": e_deactivate, "fix": e_fix, "objective": e_objective,
         "rewrite": e_rewrite, "outer": e_outer}


def _edited(kind, seed=3, l=40):
    X, y = blobs(seed, l=l)
    if kind == "outer":
        m = pyo.ConcreteModel()
        m.svm = pyo.Block()
        _dual(X, y, block=m.svm)
        blk = m.svm
    else:
        m = blk = _dual(X, y)
    EDITS[kind](m, blk)
    return m, blk


def _compare_forms(a, b, rng):
    """Two standard forms of one model describe the same problem: objective, rows (matched
    by their constraint) and bounds at random points."""
    pos_b = {id(v): k for k, v in enumerate(b.var_datas)}
    assert sorted(pos_b) == sorted(id(v) for v in a.var_datas)
    perm = np.array([pos_b[id(v)] for v in a.var_datas])
    np.testing.assert_array_equal(a.lx, b.lx[perm])
    np.testing.assert_array_equal(a.ux, b.ux[perm])
    assert a.sense == b.sense and a.problem_class == b.problem_class
    rows_b = {id(d): k for k, d in enumerate(b.row_datas)}
    assert sorted(rows_b) == sorted(id(d) for d in a.row_datas)
    rperm = np.array([rows_b[id(d)] for d in a.row_datas], dtype=np.int64)
    for _ in range(3):
        xa = rng.normal(size=a.n)
        xb = np.empty(b.n)
        xb[perm] = xa
        assert a.objective(xa) == pytest.approx(b.objective(xb), rel=1e-10, abs=1e-10)
        np.testing.assert_allclose(a.A @ xa, (b.A @ xb)[rperm], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(a.lA, b.lA[rperm])
    np.testing.assert_allclose(a.uA, b.uA[rperm])


@pytest.mark.parametrize("kind", list(EDITS))
def test_mixed_form_is_the_general_readers(kind):
    m, blk = _edited(kind)
    ed = edits(blk._svm.record)
    assert isinstance(ed, Edits), ed
    mixed = assemble_edited(blk._svm.record, ed)
    # the fixed variable: a column whose bounds are its value (the reader drops it)
    if kind == "fix":
        k = next(i for i, v in enumerate(mixed.var_datas) if v.fixed)
        assert mixed.lx[k] == mixed.ux[k] == 0.25
        keep = np.array([i for i in range(mixed.n) if i != k])
        x_fixed = np.zeros(mixed.n)
        x_fixed[k] = 0.25
        mixed = mixed.restrict(keep, x_fixed)
    _compare_forms(mixed, from_pyomo(m), np.random.default_rng(0))


@pytest.mark.parametrize("kind", list(EDITS))
def test_mixed_solve_equals_a_general_solve_by_another_backend(kind):
    m, blk = _edited(kind)
    r, rblk = _edited(kind)
    sol = sm.solve(m, require("piqp"), time_limit=20)
    ref = sm.solve(r, require("clarabel"), path="general", time_limit=20)
    assert sol.path == "mixed" and ref.path == "general"
    assert sol.extra["general_path_reason"]
    obj = [o for o in m.component_data_objects(pyo.Objective, active=True)][0]
    robj = [o for o in r.component_data_objects(pyo.Objective, active=True)][0]
    assert pyo.value(obj) == pytest.approx(pyo.value(robj), rel=1e-6)
    assert sol.objective == pytest.approx(pyo.value(obj), rel=1e-9)
    np.testing.assert_allclose([v.value for v in blk.alpha.values()],
                               [v.value for v in rblk.alpha.values()], atol=1e-5)
    if kind == "fix":
        assert blk.alpha[2].fixed and blk.alpha[2].value == 0.25
    if kind == "outer":
        assert pyo.value(m.t) == pytest.approx(pyo.value(r.t), abs=1e-5)


def test_a_changed_sense_is_not_taken_from_the_record():
    """The objective's sense flipped, nothing else: the record's objective (a maximisation)
    must not be used; minimising the concave dual is refused as not convex."""
    X, y = blobs(4, l=20)
    m = _dual(X, y)
    m.objective.sense = pyo.minimize
    ed = edits(m._svm.record)
    assert isinstance(ed, Edits) and ed.whole
    with pytest.raises(sm.CapabilityError, match="not convex"):
        sm.solve(m, require("piqp"))


def test_an_edited_family_or_named_expression_is_read_whole():
    X, y = blobs(5, l=20)
    m = _dual(X, y)
    m.quad.set_value(2.0 * m.quad.expr)
    assert "quad" in edits(m._svm.record)
    sol = sm.solve(m, require("piqp"))
    ref = sm.solve(_scaled_quad(X, y), require("clarabel"), path="general")
    assert sol.path == "general" and sol.objective == pytest.approx(ref.objective, rel=1e-6)


def _scaled_quad(X, y):
    m = _dual(X, y)
    m.quad.set_value(2.0 * m.quad.expr)
    return m


@pytest.mark.parametrize("how", ["optimize", "pyomo"])
def test_a_composed_model_solved_as_a_whole_takes_the_mixed_path(how):
    """``svm_models.optimize`` and the Pyomo solver names hand the one SVM's record on: the
    SVM inside a larger model is solved on the mixed path, to the general path's optimum."""
    m, blk = _edited("outer")
    r, _ = _edited("outer")
    if how == "optimize":
        info = sm.optimize(m, require("piqp"))
        assert info.path == "mixed"
    else:
        res = pyo.SolverFactory("svm_models.piqp").solve(m)
        assert res.solver.termination_condition == pyo.TerminationCondition.optimal
    ref = sm.optimize(r, require("clarabel"), path="general")
    assert ref.path == "general"
    assert pyo.value(m.obj) == pytest.approx(pyo.value(r.obj), rel=1e-6)
    assert pyo.value(m.t) == pytest.approx(pyo.value(r.t), abs=1e-5)


def test_a_users_binary_variable_is_never_relaxed():
    """A binary variable of the user's beside the SVM: the mixed path cannot carry it (a
    relaxation would be no answer to the model held); a continuous backend refuses the
    mixed-integer model, an integer-capable one solves it as such."""
    X, y = blobs(6, l=16)
    m = pyo.ConcreteModel()
    m.svm = pyo.Block()
    sm.build("soft_l1_primal", X, y, block=m.svm, C=1.0)
    m.on = pyo.Var(domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=m.svm.w[0] <= 0.05 + 10.0 * m.on)
    m.svm.objective.deactivate()
    m.obj = pyo.Objective(expr=m.svm.objective.expr + 0.75 * m.on)
    with pytest.raises(sm.CapabilityError, match="MIQP"):
        sm.optimize(m, require("piqp"))
    info = sm.optimize(m, require("gurobi"))
    assert info.path == "general" and m.on.value in (0.0, 1.0)
    # against both choices of the binary solved as continuous models
    best = []
    for on in (0.0, 1.0):
        r = pyo.ConcreteModel()
        r.svm = pyo.Block()
        sm.build("soft_l1_primal", X, y, block=r.svm, C=1.0)
        r.cap = pyo.Constraint(expr=r.svm.w[0] <= 0.05 + 10.0 * on)
        r.svm.objective.deactivate()
        r.obj = pyo.Objective(expr=r.svm.objective.expr + 0.75 * on)
        best.append(sm.optimize(r, require("clarabel")).objective)
    assert pyo.value(m.obj) == pytest.approx(min(best), rel=1e-6)


# ---------------------------------------------------------------------------------------
# Review findings: each was a wrong answer marked optimal


@pytest.mark.parametrize("how", ["svm_models.piqp", "svm_models.clarabel", "optimize"])
def test_a_block_solved_alone_leaves_out_the_rows_outside_it(how):
    """Pyomo solves a block alone: a row outside it (b >= 2) is not part of that problem.
    The record's proof reads the whole model, so a sub-block takes the general reader."""
    X, y = blobs(8, l=20)
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    m.svm.build("soft_l1_primal", X, y, C=1.0)
    m.outside = pyo.Constraint(expr=m.svm.b >= 2.0)
    if how == "optimize":
        sm.optimize(m.svm, require("piqp"))
    else:
        require(how.split(".")[1])
        res = pyo.SolverFactory(how).solve(m.svm)
        assert res.solver.termination_condition == pyo.TerminationCondition.optimal
    ref = sm.fit(X, y, "soft_l1_primal", require("clarabel"), C=1.0)
    assert pyo.value(m.svm.objective) == pytest.approx(ref.objective, rel=1e-6)
    assert m.svm.b.value == pytest.approx(ref.b, abs=1e-5) and m.svm.b.value < 2.0


def _written(formulation, row, c, sense, X, y):
    m = sm.build(formulation, X, y, C=1.0)
    m.row = pyo.Constraint(expr=row(m))
    E = m.objective.expr
    m.objective.deactivate()
    m.o = pyo.Objective(expr=c * E, sense=sense)
    return m


@pytest.mark.parametrize("solver", ["clarabel", "highs"])
def test_b_and_alpha_do_not_follow_how_the_user_writes_the_objective(solver):
    """max E, min -E and max 2E are one problem: the same classifier. b (a changed dual's
    balance multiplier) and a changed primal's alpha (its margin multipliers) came back with
    the opposite sign under min -E -- training accuracy 0.78 against 0.22 on unbalanced
    classes -- both marked optimal. Duals are read divided by the factor with which the
    objective holds the SVM's."""
    require(solver)
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(size=(14, 2)) + [1.0, 0], rng.normal(size=(4, 2)) - [1.0, 0]])
    y = np.array([1] * 14 + [-1] * 4)
    cap = lambda m: sum(m.alpha[i] for i in range(14)) <= 0.8   # noqa: E731  (binding)
    sols = [sm.solve(_written("soft_l1_dual", cap, c, s, X, y), solver)
            for c, s in ((1.0, pyo.maximize), (-1.0, pyo.minimize), (2.0, pyo.maximize))]
    assert sols[0].extra["b_source"] == "multiplier of balance"
    for s in sols[1:]:
        assert s.status == "optimal"
        np.testing.assert_allclose(s.alpha, sols[0].alpha, atol=1e-6)
        assert s.b == pytest.approx(sols[0].b, abs=1e-5)
    push = lambda m: m.w[0] <= 0.3   # noqa: E731  (binding)
    Xp, yp = blobs(9, l=20)
    sols = [sm.solve(_written("soft_l1_primal", push, c, s, Xp, yp), solver)
            for c, s in ((1.0, pyo.minimize), (-1.0, pyo.maximize))]
    assert sols[0].w[0] == pytest.approx(0.3, abs=1e-6) and len(sols[0].support) > 0
    np.testing.assert_allclose(sols[1].alpha, sols[0].alpha, atol=1e-6)
    np.testing.assert_array_equal(sols[1].support, sols[0].support)


def test_a_backends_own_error_on_the_general_path_is_the_librarys():
    """A misspelt raw option reached the user as the backend's bare AttributeError on the
    general matrix path (the fast and mixed paths said SolverError, naming the option)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 1))
    m.o = pyo.Objective(expr=(m.x - 0.5) ** 2)
    with pytest.raises(sm.SolverError, match="raw backend options"):
        sm.optimize(m, require("piqp"), options={"bogus_opt": 1})


def test_a_changed_model_whose_objective_is_not_lazy_reads_its_duals_at_their_scale():
    """C tuning's objective is a plain Pyomo expression (not lazy): the record keeps the
    expression it was built with, and a changed model's duals are read divided by the factor
    with which the user's objective holds it -- 2E, or -E in the other sense, give the balance
    multiplier of E itself (read wrong, or not at all, without that expression)."""
    require("clarabel")
    X, y = separable(2, l=16, d=2)
    ref = sm.solve(sm.build("c_tuning_general_nonneg", X, y), "clarabel")
    for factor, flip in ((2.0, False), (-1.0, True)):
        m = sm.build("c_tuning_general_nonneg", X, y)
        E, sense = m.objective.expr, m.objective.sense
        m.objective.deactivate()
        other = pyo.maximize if sense == pyo.minimize else pyo.minimize
        m.o = pyo.Objective(expr=factor * E, sense=other if flip else sense)
        sol = sm.solve(m, "clarabel")
        assert sol.path != "fast" and sol.status == "optimal"
        assert sol.extra["b_multiplier"] == pytest.approx(ref.extra["b_multiplier"], rel=1e-4)


def test_a_copy_of_a_block_whose_objective_was_changed_before_it_still_solves():
    """A block whose objective (not lazy: C tuning's) was rewritten before the model was
    cloned: the copy carries no record of that member (it no longer held the builder's
    expression), so the copy's objective is not the formulation's -- solved on the general
    path, its duals not read at a scale that cannot be known (no error, no guess)."""
    require("clarabel")
    X, y = separable(2, l=16, d=2)
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    m.svm.build("c_tuning_general_nonneg", X, y)
    ref = sm.solve(m, "clarabel")
    m.svm.objective.expr = 2 * m.svm.objective.expr
    copy = m.clone()
    sol = sm.solve(copy, "clarabel")
    assert sol.status == "optimal" and sol.path != "fast"
    assert sol.extra.get("b_multiplier") is None   # (the scale of its duals unknown)
    np.testing.assert_allclose(sol.alpha, ref.alpha, atol=1e-5 * max(1.0, ref.alpha.max()))

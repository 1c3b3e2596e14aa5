"""Every registered formulation's model pickles, unpickles and solves the same.

The builders' Pyomo rules and bounds are module-level functions (or ``functools.partial`` of
them), never lambdas or closures: a lambda in a component's rule made ``pickle.dumps`` fail
(the default linear dual's factor rows, a weighted dual's bounds, the 1-norm SVM's
``abs_hi``/``abs_lo``, the radius-margin rows). An SVMBlock keeps the builder's record
through the copy, so the copy is still proved to be the formulation and is solved on the
fast path, to the very optimum of the original.
"""

from __future__ import annotations

import pickle

import numpy as np
import pyomo.environ as pyo
import pytest

import svm_models as sm
from svm_models.formulations import get
from svm_models.model.record import verify

from conftest import require, separable

#: separable data (the hard margins need it), small: every case solves in milliseconds
X, Y = separable(2, l=16, d=2)
WEIGHTS = np.linspace(0.5, 2.0, len(Y))
SOLVER = "clarabel"   # (takes every continuous problem class: LP, QP, SOCP, QCQP)


def _cases():
    """Every registered formulation at its defaults, weighted where it takes sample_weight,
    and the forms beyond the defaults whose components differ."""
    out = []
    for name in sm.formulations():
        out.append((name, {}))
        if "sample_weight" in get(name).params:
            out.append((name, {"sample_weight": WEIGHTS}))
    known = set(sm.formulations())
    extra = [("soft_l1_dual", {"quad_form": "dense"}),
             ("soft_l2_dual", {"kernel": "rbf", "gamma": 0.5, "sample_weight": WEIGHTS}),
             ("soft_l1_primal", {"kernel": "poly", "degree": 2}),
             ("c_tuning_standard", {"form": "quadratic"}),
             ("rsvm_plus_kernel", {"radius": "pairwise"}),
             ("rsvm_plus_kernel", {"radius": "compact", "kernel": "rbf", "gamma": 0.5}),
             ("rsvm_mu_plus", {"kernels": [{"kernel": "linear"},
                                           {"kernel": "rbf", "gamma": 0.3}]})]
    return out + [(n, p) for n, p in extra if n in known]


def _id(case) -> str:
    name, params = case
    return name + "".join(f"-{k}" for k in params)


@pytest.mark.parametrize("name, params", _cases(), ids=[_id(c) for c in _cases()])
def test_every_formulation_pickles_and_solves_the_same_on_the_fast_path(name, params):
    f = get(name)
    # a mixed-integer model: an integer-capable backend (16 points: within Gurobi's licence),
    # on the general path (a MIP has no fast path), its record still proving the copy
    mip = f.problem_class.startswith("MI")
    solver = ("highs" if f.problem_class == "MILP" else "gurobi") if mip else SOLVER
    require(solver)
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    m.svm.build(name, X, Y, **params)
    loaded = pickle.loads(pickle.dumps(m))
    record = loaded.svm._svm.record
    assert loaded.svm.formulation == name and record.block is loaded.svm
    assert verify(record) is None and record.extension_reason() is None   # still proved
    ref = sm.solve(m, solver)
    sol = sm.solve(loaded, solver)
    if mip:
        assert ref.path == sol.path == "general" and sol.status == "optimal"
    else:
        assert ref.path == sol.path == "fast" and "general_path_reason" not in sol.extra
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9, abs=1e-12)
    assert sol.b == pytest.approx(ref.b, rel=1e-9, abs=1e-12)
    if ref.w is not None:
        np.testing.assert_allclose(sol.w, ref.w, rtol=1e-9, atol=1e-12)
    # a model of its own (svm_models.build without a block) pickles too, and solves the same
    plain = pickle.loads(pickle.dumps(sm.build(name, X, Y, **params)))
    assert sm.solve(plain, solver).objective == pytest.approx(ref.objective, rel=1e-6,
                                                              abs=1e-9)


def _continuous_variants():
    from test_standard_form import VARIANTS

    return [(f, p) for f, p in VARIANTS if not get(f).problem_class.startswith("MI")]


@pytest.mark.parametrize("variant", _continuous_variants(),
                         ids=[f"{f}-{i}" for i, (f, _) in enumerate(_continuous_variants())])
def test_every_form_pickles_and_its_copy_is_still_the_recorded_problem(variant):
    """Every variant the record test builds (kernels, dense and factor forms, low-rank
    kernels, weights, C tuning's forms, radius-margin pair sets and radius forms): the
    unpickled copy is proved unchanged, and its record is the copy's own model (Pyomo's
    reading of it), so the copy's fast path solves the model the user holds."""
    from test_standard_form import _data, same_problem

    from svm_models.model.reader import from_pyomo
    from svm_models.model.standard_form import assemble

    name, params = variant
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    m.svm.build(name, *_data(), **params)
    loaded = pickle.loads(pickle.dumps(m))
    record = loaded.svm._svm.record
    assert verify(record) is None and record.extension_reason() is None
    same_problem(assemble(record), from_pyomo(loaded))


@pytest.mark.parametrize("copy_of", ["pickle", "clone"])
def test_a_model_of_its_own_copied_is_still_proved_and_its_members_are_its_own(copy_of):
    """A model built without a block, whose objective is not lazy (C tuning's general form),
    unpickled or cloned: its record keys the copy's own members (their addresses are new), so
    the copy is proved unchanged and solves on the fast path as the original; an entry found
    at a reused address belongs to another object and is not read as this one's (an
    unpickled objective's address was an old member's: its entry was read as the
    objective's, a TypeError)."""
    from svm_models.model.record import NOT_RECORDED, recorded_token

    name, params = next(c for c in _cases() if c[0] == "c_tuning_general_nonneg")
    m = sm.build(name, X, Y, **params)
    assert not hasattr(m._svm.record.objective, "is_pristine")   # (a recorded token)
    copy = pickle.loads(pickle.dumps(m)) if copy_of == "pickle" else m.clone()
    record = copy._svm.record
    assert verify(record) is None and verify(m._svm.record) is None
    ref, sol = sm.solve(m, SOLVER), sm.solve(copy, SOLVER)
    assert ref.path == sol.path == "fast"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
    # the entry at the objective's address, were it another object's, is not its own
    od = record.objective
    other = next(d for d, _ in record.tokens.values() if d is not od)
    record.tokens[id(od)] = record.tokens[id(other)]
    assert recorded_token(record, od) is NOT_RECORDED
    assert verify(record) is not None   # (then not proved: the general path, never a guess)

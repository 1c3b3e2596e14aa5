"""The solve options, declared once (``svm_models.config``): ``solve``, ``fit``,
``SVMClassifier(solver_options=...)`` and the Pyomo solvers ``svm_models.<backend>`` check
them against the same declarations, and refuse an unknown one or a value out of its domain
with a ParameterError naming it (and what it takes), before anything is solved."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import TOY_X, TOY_Y, require
from pyomo.contrib.solver.common.factory import SolverFactory as NewSolverFactory

import svm_models as sm
from svm_models.config import PLUGIN_OPTIONS, SOLVE_OPTIONS, SolveConfig, solve_config

#: (options, what the error says): one bad value per option that has a domain
BAD = [
    ({"tol": -1.0}, r"tol must be a positive number; got -1.0"),
    ({"tol": math.nan}, r"tol must be a positive number; got nan"),
    ({"time_limit": "10"}, r"time_limit must be a positive number; got '10'"),
    ({"iter_limit": 2.5}, r"iter_limit must be a positive integer; got 2.5"),
    ({"threads": 0}, r"threads must be a positive integer; got 0"),
    ({"verbose": "yes"}, r"verbose must be True or False; got 'yes'"),
    ({"options": [("max_iter", 5)]}, r"options must be a dict of raw backend options"),
    ({"path": "quick"}, r"path must be one of 'auto', 'fast', 'general'; got 'quick'"),
    ({"scaling": "yes"}, r"scaling must be one of 'auto', 'on', 'off', 'diagonal'"),
    ({"switch": "bigM"}, r"switch must be one of 'big_m', 'indicator'"),
    ({"path": None}, r"path must be one of 'auto', 'fast', 'general'; got None"),
    ({"deadline": 5.0}, r"deadline must be a svm_models.solvers.base.Deadline"),
]


def test_every_option_is_declared_with_a_domain_and_documented():
    config = SolveConfig()
    assert tuple(config.keys()) == SOLVE_OPTIONS
    for name in SOLVE_OPTIONS:
        value = config.get(name)
        assert value.domain_name() and len(value._description) > 20, name
    # the defaults, as solve() has always had them
    assert solve_config({}) == {"tol": None, "time_limit": None, "iter_limit": None,
                                "threads": None, "verbose": False, "options": None,
                                "path": "auto", "scaling": "auto", "switch": "big_m",
                                "deadline": None, "raise_on_failure": True}
    assert "raise_on_failure" in SolveConfig.generate_documentation(config)


@pytest.fixture(scope="module")
def model():
    return sm.build("soft_l1_dual", TOY_X, TOY_Y, C=1.0)


@pytest.mark.parametrize("bad, says", BAD, ids=[next(iter(b)) + "=" + repr(b[next(iter(b))])
                                                 for b, _ in BAD])
def test_solve_fit_and_the_estimator_refuse_a_bad_value_naming_it(model, bad, says):
    with pytest.raises(sm.ParameterError, match=says):
        sm.solve(model, "highs", **bad)
    with pytest.raises(sm.ParameterError, match=says):
        sm.fit(TOY_X, TOY_Y, "soft_l1_dual", "highs", C=1.0, **bad)
    with pytest.raises(sm.ParameterError, match=says):
        sm.SVMClassifier(solver="highs", solver_options=bad).fit(TOY_X, TOY_Y)


def test_unknown_options_are_named_with_the_known_ones(model):
    with pytest.raises(sm.ParameterError, match=r"unknown solver option\(s\) \['tolerance'\]; "
                                                r"known: \['deadline', 'iter_limit'"):
        sm.solve(model, "highs", tolerance=1e-6)
    with pytest.raises(sm.ParameterError, match=r"soft_l1_dual takes no parameter\(s\) "
                                                r"\['tolerance'\]; it takes C, .* and the "
                                                r"solve options tol, time_limit"):
        sm.fit(TOY_X, TOY_Y, "soft_l1_dual", "highs", tolerance=1e-6)
    with pytest.raises(sm.ParameterError, match=r"solver_options takes tol, .*; got "
                                                r"\['tolerance'\]"):
        sm.SVMClassifier(solver_options={"tolerance": 1e-6}).fit(TOY_X, TOY_Y)
    with pytest.raises(sm.ParameterError, match="raise_on_failure must be True or False"):
        sm.solve(model, "highs", raise_on_failure="no")


def test_the_pyomo_solvers_take_the_same_options(model):
    """``svm_models.<backend>``'s configuration declares the library's options as solve()
    does: the same refusals, and the values carried to the solve (``path="general"`` goes
    through the Pyomo model; same optimum as the fast path and as solve())."""
    require("clarabel")
    opt = NewSolverFactory("svm_models.clarabel")
    assert set(PLUGIN_OPTIONS) <= set(opt.config.keys())
    for bad, says in BAD:
        name = next(iter(bad))
        if name in PLUGIN_OPTIONS:
            with pytest.raises(sm.ParameterError, match=says):
                opt.solve(model, **bad)
    with pytest.raises(sm.ParameterError, match=r"unknown option\(s\) of svm_models.clarabel "
                                                r"\['tolerance'\]; known: .*'scaling'"):
        opt.solve(model, tolerance=1e-6)
    ref = sm.solve(model, "clarabel", tol=1e-9)
    for path in ("fast", "general"):
        res = opt.solve(model, path=path, tol=1e-9)
        assert res.extra_info.path == path
        assert res.incumbent_objective == pytest.approx(ref.objective, rel=1e-7, abs=1e-9)


def test_good_values_are_carried_unchanged():
    from svm_models.solvers import SolverOptions

    opts = SolverOptions.from_kwargs(tol=1e-7, iter_limit=np.int64(40), verbose=1,
                                     options={"max_iter": 3}, path="general")
    assert (opts.tol, opts.iter_limit, opts.verbose, opts.options, opts.path) == \
        (1e-7, 40, True, {"max_iter": 3}, "general")
    assert type(opts.iter_limit) is int

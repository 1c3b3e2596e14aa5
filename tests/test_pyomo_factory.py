"""Pyomo's own contract for a solver, run on the backends svm_models registers with Pyomo
(:mod:`svm_models.solvers.pyomo_factory`): the test file Pyomo ships for its own solvers,
``pyomo/contrib/solver/tests/solvers/test_solvers.py``, read from the installed Pyomo and run
as Pyomo runs it -- parametrized by ``parameterized.expand`` over its module-level solver
lists -- with those lists pointed at ``svm_models.piqp``, ``svm_models.clarabel`` and
``svm_models.ipm`` for the problem classes each takes (LP and QP for all three, convex
quadratic rows and second-order cones for Clarabel: ``qcp_solvers``; every one reports
duals and reduced costs: ``dual_solvers``). Nothing else of the file is changed: the
assignments of the lists are replaced before the module is executed (the lists are read when
its classes are defined), and its test classes are collected here.

A test a backend cannot pass by the nature of its algorithm would be skipped here with the
reason; there is none. Pyomo's tests skip an unavailable solver: on CI (``CI=true``) every
backend must be there (:func:`test_every_backend_is_available`).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import types
import unittest

import pytest
from pyomo.contrib.solver.common.base import Availability, SolverBase
from pyomo.contrib.solver.common.config import SolverConfig

import svm_models  # noqa: F401  (registers the backends with Pyomo)
from conftest import on_ci
from svm_models.solvers import BACKENDS as _TABLE
from svm_models.solvers.pyomo_factory import SOLVERS

#: the file, as Pyomo installs it
PYOMO_SUITE = "pyomo.contrib.solver.tests.solvers.test_solvers"

#: the backends run through the suite (those the library offers to Pyomo, but a structured
#: one: libsvm takes only its own models), and the lists of the file each belongs to
BACKENDS = tuple(n for n in SOLVERS if _TABLE[n].structured is None)
CONIC = tuple(n for n in BACKENDS if _TABLE[n].takes("QCQP"))


def _entries(names) -> list:
    return [(SOLVERS[n].name, SOLVERS[n]) for n in names]


class NoBackend(SolverBase):
    """Stands in a list of the file for a problem class none of the backends takes (the
    file's ``parameterized.expand`` refuses an empty list): never available, so Pyomo's test
    skips it, saying so in its name."""

    CONFIG = SolverConfig()

    def available(self) -> Availability:
        return Availability.NotFound

    def version(self):
        return None

    def solve(self, model, **kwds):
        raise AssertionError(f"{self.name}: nothing to solve with")


def _none(what: str) -> list:
    cls = type("NoBackend", (NoBackend,), {"name": f"(no svm_models backend takes {what})"})
    return [(cls.name, cls)]


def solver_lists() -> dict:
    """The file's solver lists, pointed at ours: every list the file defines is set (a
    problem class none of ours takes: :class:`NoBackend`)."""
    every = _entries(BACKENDS)
    conic = _entries(CONIC)
    return {
        "all_solvers": every,
        "dual_solvers": every,
        "qp_solvers": every,
        "qcp_solvers": conic,
        "mip_solvers": _none("integer variables"),
        "nlp_solvers": _none("nonlinear models"),
        "miqcqp_solvers": _none("integer variables"),
        "nl_solvers": _none("NL files"),
        "sos_solvers": _none("SOS constraints"),
    }


def load_suite(lists: dict, module_name: str = "svm_models_pyomo_solver_suite"):
    """Pyomo's test module, executed with the module-level assignments of ``lists``' names
    replaced by those lists (every other statement as Pyomo wrote it). Raises ``LookupError``
    when the file no longer assigns one of them (a Pyomo that changed the file's shape)."""
    spec = importlib.util.find_spec(PYOMO_SUITE)
    source = open(spec.origin, encoding="utf-8").read()
    tree = ast.parse(source, filename=spec.origin)
    seen = set()
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id in lists):
            name = node.targets[0].id
            node.value = ast.copy_location(ast.parse(f"__solver_lists__[{name!r}]",
                                                     mode="eval").body, node.value)
            seen.add(name)
    missing = set(lists) - seen
    if missing:
        raise LookupError(f"{spec.origin} no longer assigns {sorted(missing)} at module level")
    ast.fix_missing_locations(tree)
    module = types.ModuleType(module_name)
    module.__file__ = spec.origin
    module.__solver_lists__ = {k: list(v) for k, v in lists.items()}
    sys.modules[module_name] = module
    exec(compile(tree, spec.origin, "exec"), module.__dict__)
    return module


def test_every_backend_is_available():
    """Pyomo's tests skip a solver that is not available; on CI none may be missing."""
    missing = [n for n in BACKENDS if not SOLVERS[n]().available()]
    if missing and on_ci():
        pytest.fail(f"backends not available on CI: {missing}")
    if missing:
        pytest.skip(f"not available here: {missing}")


try:
    _suite = load_suite(solver_lists())
except (ImportError, unittest.SkipTest) as exc:   # it needs parameterized (a dev dependency)
    if on_ci():
        raise
    pytest.skip(f"Pyomo's solver tests cannot be loaded: {exc}", allow_module_level=True)

TestDualSignConvention = _suite.TestDualSignConvention
TestSolvers = _suite.TestSolvers
TestLegacySolverInterface = _suite.TestLegacySolverInterface

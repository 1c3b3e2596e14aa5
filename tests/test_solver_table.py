"""The backend table (``svm_models.solvers.table``): every list derives from the backends'
declarations. (Pinned values of before the derivation: removed once it holds.)"""

from __future__ import annotations

import conftest
from svm_models.solvers import AUTO_ORDER, BACKENDS, PROJECT_BACKENDS
from svm_models.solvers import pyomo_factory

TODAY_AUTO = {
    "LP": ("highs", "clarabel", "piqp", "gurobi", "scip", "ipopt"),
    "QP": ("libsvm", "piqp", "clarabel", "highs", "ipopt", "ipm", "gurobi", "scip"),
    "SOCP": ("clarabel", "ipopt", "gurobi", "scip"),
    "QCQP": ("ipopt", "clarabel", "gurobi", "scip"),
    "NLP": ("ipopt", "scip"),
    "MILP": ("highs", "gurobi", "scip"),
    "MIQP": ("scip", "gurobi"),
}


def test_today_values():
    assert {k: tuple(v) for k, v in AUTO_ORDER.items()} == TODAY_AUTO
    assert list(AUTO_ORDER) == list(TODAY_AUTO)
    assert set(PROJECT_BACKENDS) == {"ipopt", "gurobi", "highs", "scip", "piqp", "clarabel",
                                     "ipm", "libsvm"}
    assert tuple(pyomo_factory.REGISTERED) == ("piqp", "clarabel", "ipm", "libsvm")
    assert set(BACKENDS) == set(PROJECT_BACKENDS) | {"cplex", "xpress", "mosek"}
    assert tuple(conftest.QP_BACKENDS) == ("highs", "gurobi", "ipopt", "scip", "piqp",
                                           "clarabel", "ipm")
    assert tuple(conftest.FAST_BACKENDS) == ("highs", "gurobi", "ipopt", "piqp", "clarabel",
                                             "ipm")
    assert tuple(conftest.DUAL_BACKENDS) == ("highs", "gurobi", "ipopt", "piqp", "clarabel",
                                             "ipm")
    assert tuple(conftest.QCQP_BACKENDS) == ("gurobi", "ipopt", "scip", "clarabel")

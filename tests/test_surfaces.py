"""Issue 31, "On the surfaces": the estimator's errors, the status vocabulary, the messages,
the demo's tables, and the plots (support vectors, margins, axis names, the C-tuning curve's
backend). Every check is against something computed another way: scikit-learn/libsvm, Pyomo's
own solver interface, numpy on the solution's w and b, the matplotlib artists read back."""

from __future__ import annotations

import re
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pyomo.environ as pyo  # noqa: E402
import pytest  # noqa: E402
from conftest import require  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

import svm_models as sm  # noqa: E402
from svm_models import cli  # noqa: E402
from svm_models.datasets import teaching_2d  # noqa: E402
from svm_models.errors import DataError, ParameterError  # noqa: E402
from svm_models.estimator import SVMClassifier, SVMClassifierCV  # noqa: E402
from svm_models.formulations import get  # noqa: E402
from svm_models.formulations.c_tuning import M_of_g  # noqa: E402
from svm_models.plots import c_tuning_bound, decision_boundary  # noqa: E402
from svm_models.status import Status  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def by_gid(ax, gid):
    found = [a for a in ax.get_children() if a.get_gid() == gid]
    assert len(found) == 1, (gid, found)
    return found[0]


def legend_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


# ---------------------------------------------------------------------------------------
# 2. Status.solution_status: Pyomo's convention, read from Pyomo's own HiGHS interface


def test_infeasible_maps_to_pyomos_no_solution_as_pyomos_own_interface_reports_it():
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.results import SolutionStatus

    require("highs")
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x >= 2)
    m.o = pyo.Objective(expr=m.x)
    res = SolverFactory("highs").solve(m, raise_exception_on_nonoptimal_result=False,
                                       load_solutions=False)
    assert res.termination_condition == Status.infeasible.termination_condition
    assert res.solution_status == Status.infeasible.solution_status == SolutionStatus.noSolution
    m.c.deactivate()
    res = SolverFactory("highs").solve(m)
    assert res.termination_condition == Status.optimal.termination_condition
    assert res.solution_status == Status.optimal.solution_status == SolutionStatus.optimal
    # only an optimum carries a solution; the library's own infeasible hard margin says so
    assert {s.solution_status for s in Status if s is not Status.optimal} == {
        SolutionStatus.noSolution}
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(sm.NotSeparableError) as info:
        sm.fit(X, [0, 0, 1, 1], formulation="hard_primal", solver="highs")
    assert info.value.status is Status.infeasible
    assert info.value.status.solution_status == SolutionStatus.noSolution

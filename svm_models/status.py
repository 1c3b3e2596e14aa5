"""The one status vocabulary of a solve: :class:`Status`.

Every backend maps its own termination codes onto these members once, in its own module of
:mod:`svm_models.solvers`. The members are strings too (``Status.optimal == "optimal"``), so a
status compares equal to its name; each also names the matching members of Pyomo's own
vocabulary (``pyomo.contrib.solver.common.results``): :attr:`Status.termination_condition`
and :attr:`Status.solution_status`.
"""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """How a solve ended."""

    #: the solver proved optimality to its tolerance (convex problems: a global optimum)
    optimal = "optimal"
    #: the model has no feasible point (proved: a global solver, or a convex model)
    infeasible = "infeasible"
    #: a local solver (Ipopt) stopped at a point of local infeasibility of a model not proved
    #: convex: it found no feasible point near where it started; not a proof -- the model
    #: may have feasible points elsewhere (start elsewhere, or use a global solver)
    locally_infeasible = "locally_infeasible"
    #: the objective is unbounded on the feasible set
    unbounded = "unbounded"
    #: one of the two, the solver cannot tell which
    infeasible_or_unbounded = "infeasible_or_unbounded"
    #: the time limit stopped the solver
    time_limit = "time_limit"
    #: the iteration limit stopped the solver
    iteration_limit = "iteration_limit"
    #: the solver stopped on numerical trouble (or reported an optimum that fails the checks)
    numerical_error = "numerical_error"
    #: the licence refused the model
    licence_limit = "licence_limit"
    #: anything else
    error = "error"

    def __str__(self) -> str:
        return self.value

    @property
    def termination_condition(self):
        """The matching ``pyomo.contrib.solver.common.results.TerminationCondition``."""
        from pyomo.contrib.solver.common.results import TerminationCondition as TC

        return {
            Status.optimal: TC.convergenceCriteriaSatisfied,
            Status.infeasible: TC.provenInfeasible,
            Status.locally_infeasible: TC.locallyInfeasible,
            Status.unbounded: TC.unbounded,
            Status.infeasible_or_unbounded: TC.infeasibleOrUnbounded,
            Status.time_limit: TC.maxTimeLimit,
            Status.iteration_limit: TC.iterationLimit,
            Status.numerical_error: TC.error,
            Status.licence_limit: TC.licensingProblems,
            Status.error: TC.error,
        }[self]

    @property
    def solution_status(self):
        """The matching ``pyomo.contrib.solver.common.results.SolutionStatus``: ``optimal``
        for an optimum, ``noSolution`` for every other status.

        Pyomo's ``SolutionStatus.infeasible`` describes a returned point that violates some
        constraints; a model proved infeasible has no point to return, and Pyomo's own
        interfaces (HiGHS, Gurobi, SCIP, Ipopt) report it as ``noSolution``, as this does.
        """
        from pyomo.contrib.solver.common.results import SolutionStatus as SS

        return SS.optimal if self is Status.optimal else SS.noSolution

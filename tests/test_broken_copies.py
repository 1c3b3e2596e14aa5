"""Tests that a broken copy of the code must fail (issue 31, "Tests that a broken copy of the
code still passes").

Each test below was written against one deliberate change to the code that decides answers
-- a *mutant* -- and was seen to fail on that broken copy and to pass on the real code. The
docstring of each test names the mutation it kills. The solvers are real (no mocks) and every
problem is small: the whole file runs in a few seconds, and ``make mutate`` runs it.

The references are independent of the code under test: an optimum worked out by hand, a cold
solve of the same problem by another backend, or a single fit at each C.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from sklearn.datasets import make_blobs, make_moons
from sklearn.model_selection import StratifiedKFold

import svm_models as sm
from svm_models.estimator import SVMClassifier, SVMClassifierCV
from svm_models.methods.cv import cross_validate
from svm_models.model.reader import from_pyomo
from svm_models.solvers import backend
from svm_models.solvers.base import SolverOptions
from svm_models.solvers.dispatch import solve_model
from svm_models.solvers.working_set import solve_with_working_set

from conftest import require

# ---------------------------------------------------------------------------------------
# (a) ipm: the stopping test needs all three measures


def test_ipm_does_not_stop_before_its_dual_residual_is_small():
    """A QP with a free direction: ``min 4.5 (x - 1)^2 + 0.5`` over a free x (optimum 0.5 at
    x = 1, by hand). ipm starts a free variable at 0, where the primal residual (no rows) and
    the complementarity gap (no bounds) are both 0: only the dual residual
    ``Qv + c - A'y = -9`` says x = 0 is not optimal.

    Kills: ``solvers/ipm.py`` stopping test without its dual residual
    (``if p_res <= tol and gap <= tol``): that copy returns "optimal" at iteration 0 with
    x = 0 and objective 5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.o = pyo.Objective(expr=4.5 * (m.x - 1) ** 2 + 0.5)
    info = solve_model(m, "ipm", problem_class="QP")
    assert info.status == "optimal", info.message
    assert info.objective == pytest.approx(0.5, abs=1e-9)
    assert pyo.value(m.x) == pytest.approx(1.0, abs=1e-6)


def test_ipm_does_not_stop_before_its_primal_residual_is_small():
    """``min x^2 / 2`` subject to ``x = 2`` over a free x (optimum 2 at x = 2, dual 2, by
    hand). At ipm's start (x = 0, y = 0) the dual residual and the gap are 0; only the
    primal residual of the row is not.

    Kills: the stopping test without its primal residual (``if d_res <= tol and gap <=
    tol``): that copy returns x = 0, objective 0, a point that violates the row."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.c = pyo.Constraint(expr=m.x == 2)
    m.o = pyo.Objective(expr=0.5 * m.x ** 2)
    info = solve_model(m, "ipm", problem_class="QP")
    assert info.status == "optimal", info.message
    assert info.objective == pytest.approx(2.0, abs=1e-8)
    assert pyo.value(m.x) == pytest.approx(2.0, abs=1e-8)
    assert info.duals[m.c] == pytest.approx(2.0, abs=1e-6)


def test_ipm_with_a_variable_fixed_by_its_bounds():
    """A variable whose bounds are equal (``a`` in [1.5, 1.5]) is taken out of the problem
    and put back at its value: ``min (b - 1)^2 + (c - a)^2 + 1/2 (a + b)^2`` subject to
    ``a + b + c = 4``, ``0 <= b <= 4``: b = 0.5, c = 2, objective 2.5, the row's dual
    ``2 (c - a) = 1`` (by hand).

    Kills (mutmut, ``solvers/ipm.py``): ``solve`` keeping the fixed variable (``if
    fixed.any()`` mutated away), dropping the wrong columns (``np.flatnonzero(fixed)``),
    putting no value back (``x[fixed] = None``); ``_infeasible_bounds`` calling equal
    bounds infeasible (``lx >= ux``)."""
    m = pyo.ConcreteModel()
    m.a = pyo.Var(bounds=(1.5, 1.5))
    m.b = pyo.Var(bounds=(0, 4))
    m.c = pyo.Var()
    m.r = pyo.Constraint(expr=m.a + m.b + m.c == 4)
    m.o = pyo.Objective(expr=(m.b - 1) ** 2 + (m.c - m.a) ** 2 + 0.5 * (m.a + m.b) ** 2)
    info = solve_model(m, "ipm", problem_class="QP")
    assert info.status == "optimal", info.message
    assert info.objective == pytest.approx(2.5, abs=1e-8)
    assert pyo.value(m.a) == 1.5
    assert (pyo.value(m.b), pyo.value(m.c)) == pytest.approx((0.5, 2.0), abs=1e-7)
    assert info.duals[m.r] == pytest.approx(1.0, abs=1e-6)


def test_ipm_refuses_crossed_bounds_and_rows_it_cannot_take():
    """Bounds that cross (a variable's or a row's lower bound above its upper one) are
    "infeasible" before any iteration; a quadratic row alone (no cone) is a
    CapabilityError when ipm is called directly (the dispatch refuses it earlier).

    Kills (mutmut, ``solvers/ipm.py``): ``_infeasible_bounds`` not checking either kind of
    bound, ``solve`` not calling it or returning another status, and ``if sf.qrows and
    sf.cones`` (a QCQP without cones let through)."""
    from svm_models.errors import CapabilityError
    from svm_models.solvers import ipm

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(3, 2))
    m.o = pyo.Objective(expr=m.x ** 2)
    info = solve_model(m, "ipm", problem_class="QP")
    assert info.status == "infeasible"
    assert "variable" in info.message
    m = pyo.ConcreteModel()
    m.lo = pyo.Param(mutable=True, initialize=3.0)
    m.hi = pyo.Param(mutable=True, initialize=2.0)
    m.x = pyo.Var(bounds=(0, 5))
    m.y = pyo.Var(bounds=(0, 5))
    m.c = pyo.Constraint(expr=pyo.inequality(m.lo, m.x + m.y, m.hi))
    m.o = pyo.Objective(expr=m.x ** 2)
    info = solve_model(m, "ipm", problem_class="QP")
    assert info.status == "infeasible"
    assert "row" in info.message
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.q = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 <= 1)
    m.o = pyo.Objective(expr=m.x + m.y)
    sf = from_pyomo(m)
    assert len(sf.qrows) == 1 and not sf.cones
    with pytest.raises(CapabilityError, match="LPs and QPs only"):
        ipm.solve(sf, SolverOptions())


def test_ipm_adds_every_quadratic_block_of_a_variable():
    """``min x' diag(1) x + x' (1.5 [[2]]) x - 8 x = 4 x^2 - 8 x`` over a free x: two
    blocks on one variable, the second a 1 x 1 dense block with a scale (the shape a
    scaled or restricted form gives). Optimum x = 1, objective -4 (by hand).

    Kills (mutmut, ``solvers/ipm.py`` ``_Problem.__init__``): a 1 x 1 block that replaces the
    diagonal instead of adding to it (``qdiag[idx] = ...``), or divides by its scale."""
    import scipy.sparse as sp

    from svm_models.model.forms import QuadBlock
    from svm_models.model.standard_form import StandardForm
    from svm_models.solvers import ipm

    sf = StandardForm(sense=1, c=np.array([-8.0]), const=0.0,
                      quad=[QuadBlock([0], diag=[1.0]), QuadBlock([0], np.array([[2.0]]), scale=1.5)],
                      A=sp.csr_matrix((0, 1)), lA=np.zeros(0), uA=np.zeros(0),
                      lx=np.array([-np.inf]), ux=np.array([np.inf]), qrows=[], var_datas=[],
                      row_datas=[])
    res = ipm.solve(sf, SolverOptions())
    assert res.status == "optimal", res.message
    assert res.x[0] == pytest.approx(1.0, abs=1e-9)
    assert res.objective == pytest.approx(-4.0, abs=1e-9)


def test_ipm_row_mode_with_one_kept_variable():
    """Row mode with exactly one variable kept in the dense system (f: free, no quadratic
    term; x1, x2 in both rows, so no row has a variable of its own and column mode is out):
    ``min (x1 - 1)^2 + (x2 - 2)^2 + f`` s.t. ``x1 + x2 + f = 3``, ``x1 - x2 + 2 f = 0``, the
    quadratic a diagonal block. By hand: f = 0.2, x1 = 1.2, x2 = 1.6, objective 0.4.

    Kills (mutmut, ``_Problem.factor``): ``if ns == 1`` for ``if ns == 0`` (the kept
    variable's block dropped from the factorisation)."""
    import scipy.sparse as sp

    from svm_models.model.forms import QuadBlock
    from svm_models.model.standard_form import StandardForm
    from svm_models.solvers import ipm

    inf = np.inf
    sf = StandardForm(sense=1, c=np.array([-2.0, -4.0, 1.0]), const=5.0,
                      quad=[QuadBlock([0, 1], diag=[1.0, 1.0])],
                      A=sp.csr_matrix(np.array([[1.0, 1.0, 1.0], [1.0, -1.0, 2.0]])),
                      lA=np.array([3.0, 0.0]), uA=np.array([3.0, 0.0]),
                      lx=np.full(3, -inf), ux=np.full(3, inf), qrows=[], var_datas=[],
                      row_datas=[])
    res = ipm.solve(sf, SolverOptions())
    assert res.status == "optimal", res.message
    assert res.interface == "ipm (row mode, 3 dense unknowns)"
    assert res.objective == pytest.approx(0.4, abs=1e-8)
    assert res.x == pytest.approx([1.2, 1.6, 0.2], abs=1e-7)


#: iterations ipm takes on each problem below (measured; Mehrotra's method on these is
#: deterministic to round-off): (formulation, hyperparameters, points, iterations)
_IPM_ITERATIONS = [
    ("soft_l1_dual", {}, 400, 12),
    ("soft_l1_primal", {}, 400, 11),
    ("soft_l2_primal", {}, 400, 8),
    ("soft_l1_dual", {"kernel": "rbf", "gamma": 0.7}, 120, 9),
    ("soft_l2_dual", {"kernel": "rbf", "gamma": 0.7}, 120, 7),
]


@pytest.mark.parametrize("form,kw,l,iterations", _IPM_ITERATIONS,
                         ids=[f"{f}-{'rbf' if kw else 'linear'}" for f, kw, _, _ in _IPM_ITERATIONS])
def test_ipm_converges_in_the_iterations_it_takes_today(form, kw, l, iterations):
    """ipm's Newton steps are refined against the unreduced system and its stopping test
    reads the residuals at the iterate, so a wrong step (a sign in the reduction, a
    Hessian block scaled wrongly, the refinement stopped early) does not give a wrong
    answer -- it costs iterations. The number of iterations on these problems (both
    reductions, dense kernel blocks, a diagonal quadratic) stays within 2 of today's.

    Kills (mutmut, ``solvers/ipm.py``): the Newton system's reduction and its refinement
    mutated so that the method still converges, only more slowly (``_reduced_solve``'s
    signs, ``_q_dense``'s block scale, ``newton``'s refinement test, ...)."""
    from svm_models.solvers import ipm

    rng = np.random.default_rng(0)
    y = np.where(np.arange(l) % 2 == 0, 1.0, -1.0)
    X = rng.standard_normal((l, 4)) + 0.4 * y[:, None]
    sf = from_pyomo(sm.build(form, X, y, C=1.0, **kw))
    res = ipm.solve(sf, SolverOptions())
    assert res.status == "optimal", res.message
    assert res.iterations <= iterations + 2, res.message


# ---------------------------------------------------------------------------------------
# (b) the working set: no round is accepted without the full problem's optimality check


def _chain(n: int, pad: int = 0):
    """``min 1/2 (z - p)^2 + 1/2 sum_i (x_i - x_{i-1})^2 + 1/2 x_n^2 + 0.01 sum_i x_i``
    (``x_0 = z`` free, ``x_i >= 0``), plus ``pad`` variables ``w_j >= 0`` with cost ``w_j``
    (always 0), and a row ``z <= 10`` that never binds (rows that are not all equalities:
    the working set, not the active set, re-solves it). At ``p = -1`` every x sits at 0;
    at ``p = 1`` every x is positive -- but from the previous solution's working set, x_k's
    reduced cost turns negative only once x_{k-1} has been released: one round per link of
    the chain."""
    m = pyo.ConcreteModel()
    m.p = pyo.Param(mutable=True, initialize=-1.0)
    m.z = pyo.Var()
    m.x = pyo.Var(range(1, n + 1), bounds=(0, None))
    m.w = pyo.Var(range(pad), bounds=(0, None))
    links = [m.z] + [m.x[i] for i in range(1, n + 1)]
    m.o = pyo.Objective(expr=0.5 * (m.z - m.p) ** 2
                        + 0.5 * sum((links[i] - links[i - 1]) ** 2 for i in range(1, n + 1))
                        + 0.5 * m.x[n] ** 2 + 0.01 * sum(m.x.values()) + sum(m.w.values()))
    m.cap = pyo.Constraint(expr=m.z <= 10)
    return m


def _chain_re_solve(solver: str, n: int, pad: int = 0):
    """The chain solved at p = -1, then re-solved at p = 1 from the first solution's working
    set with ``solver``'s matrix adapter; and a cold solve at p = 1 by Clarabel."""
    adapter = backend(solver).matrix
    m = _chain(n, pad)
    state: dict = {}
    first = solve_with_working_set(adapter, from_pyomo(m), SolverOptions(), state)
    assert first.status == "optimal" and "working_set" in state
    assert np.all(first.x[1:n + 1] <= 1e-7)        # every x at its bound
    m.p.set_value(1.0)
    sf = from_pyomo(m)
    res = solve_with_working_set(adapter, sf, SolverOptions(), state)
    cold = _chain(n, pad)
    cold.p.set_value(1.0)
    ref = solve_model(cold, require("clarabel"), problem_class="QP")
    assert ref.status == "optimal"
    return res, ref, sf


@pytest.mark.parametrize("solver", ["highs", "ipm"])
def test_working_set_that_runs_out_of_rounds_falls_back_to_the_full_problem(solver):
    """A chain of 12 links needs 12 rounds; the working set gives up after WS_MAX_ROUNDS (8)
    and the full problem is solved: Clarabel's cold optimum, every x positive.

    Kills: ``solvers/working_set.py`` accepting its last round without the optimality check
    (``if not viol.any() or rounds == WS_MAX_ROUNDS``: 8 links released, x_8.. at 0,
    objective 0.0840 against 0.0807), and accepting any round without it (``if True``:
    the first round, objective 0.25)."""
    require(solver)
    res, ref, sf = _chain_re_solve(solver, 12)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(ref.objective, rel=1e-7)
    assert np.all(res.x[1:13] > 1e-3)           # the last link is 0.0071
    assert sf.kkt_violation(res.x, res.row_duals) <= 1e-6


@pytest.mark.parametrize("solver", ["highs", "ipm"])
def test_working_set_releases_variables_until_none_violates(solver):
    """A chain of 4 links (and 8 variables that stay at 0): the working set releases one link
    per round and stops at the fifth, when no reduced cost has the wrong sign: Clarabel's
    cold optimum.

    Kills: the working set without its optimality check (the first round accepted:
    objective 0.25 against 0.107)."""
    require(solver)
    res, ref, sf = _chain_re_solve(solver, 4, pad=8)
    assert res.status == "optimal"
    assert res.extra.get("rounds") == 5, res.message
    assert "working set: 5 of 13 variables, 5 rounds" in res.message
    assert res.objective == pytest.approx(ref.objective, rel=1e-7)
    assert np.all(res.x[1:5] > 0.05) and np.all(res.x[5:] == 0.0)
    assert sf.kkt_violation(res.x, res.row_duals) <= 1e-6


@pytest.mark.parametrize("solver", ["highs", "ipm"])
def test_active_set_re_solve_returns_an_optimum_with_its_multipliers(solver):
    """A dual re-solved at a new C from the previous active set (no backend call): the
    point and the row multipliers it returns satisfy the full problem's optimality
    conditions, its objective is Clarabel's cold one.

    Kills (mutmut, ``_solve_on_active_set``): the multipliers not returned
    (``row_duals=None``), the bound checks of the free variables mutated so that a point
    outside its box is accepted."""
    require(solver)
    X, y = make_moons(40, noise=0.3, random_state=3)
    m = sm.build("soft_l1_dual", X, y, C=1.0, kernel="rbf", gamma=1.0)
    adapter = backend(solver).matrix
    state: dict = {}
    first = solve_with_working_set(adapter, from_pyomo(m), SolverOptions(), state)
    assert first.status == "optimal"
    for C in (1.5, 0.7):
        m.C.set_value(C)
        sf = from_pyomo(m)
        res = solve_with_working_set(adapter, sf, SolverOptions(), state)
        assert res.status == "optimal" and res.interface == "active set"
        assert np.all(res.x >= sf.lx) and np.all(res.x <= sf.ux)
        assert sf.kkt_violation(res.x, res.row_duals) <= 1e-9
        ref = sm.fit(X, y, "soft_l1_dual", require("clarabel"), C=C, kernel="rbf", gamma=1.0)
        assert sf.sense * res.objective == pytest.approx(ref.objective, rel=1e-7)


# ---------------------------------------------------------------------------------------
# (c) every variable at a bound: the rows are evaluated, not assumed satisfied


def _balanced(seed=3, per_class=40):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-0.3, 1.0, (per_class, 3)), rng.normal(0.3, 1.0, (per_class, 3))])
    y = np.r_[-np.ones(per_class), np.ones(per_class)]
    return X, y


@pytest.mark.parametrize("solver", ["highs", "ipm"])
@pytest.mark.parametrize("point", [0, 79], ids=["negative", "positive"])
def test_bound_edit_with_every_alpha_at_a_bound_is_not_taken_as_feasible(point, solver):
    """Small C on balanced data: every alpha sits at C, and the re-solve of the same model
    has an empty working set (every variable held at a bound). Then the user lowers one
    alpha's upper bound to C/2: holding every alpha at its (new) bound breaks the balance row
    ``y'alpha = 0`` -- above it for a point of the negative class, below it for one of the
    positive class -- so that point is not a solution and the problem must be solved:
    Clarabel's cold solve of a fresh model with the same edit (0.1577417448 for point 0).

    Kills: ``solvers/working_set.py`` ``_all_at_bounds`` taking the rows as satisfied
    without evaluating them (the ``Ax < lA - feas or Ax > uA + feas`` check removed, or
    either half of it): that copy returns "optimal" at objective 0.1587285 with
    ``y'alpha = 1e-3``."""
    require(solver)
    X, y = _balanced()
    assert y[point] == (-1 if point == 0 else 1)
    kw = dict(kernel="rbf", gamma=0.5)
    C = 2e-3
    m = sm.build("soft_l1_dual", X, y, C=C, **kw)
    state: dict = {}
    first = sm.solve(m, solver, _state=state)
    assert np.allclose(first.alpha, C, rtol=1e-6)              # all at C
    again = sm.solve(m, solver, _state=state)                  # proved by the rows alone
    assert again.interface == "working set"
    assert again.objective == pytest.approx(first.objective, rel=1e-10)
    m.alpha[point].setub(C / 2)
    sol = sm.solve(m, solver, _state=state)
    fresh = sm.build("soft_l1_dual", X, y, C=C, **kw)
    fresh.alpha[point].setub(C / 2)
    ref = sm.solve(fresh, require("clarabel"))
    if point == 0:
        assert ref.objective == pytest.approx(0.1577417448, rel=1e-8)
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
    assert abs(float(y @ sol.alpha)) <= 1e-9
    assert sol.alpha[point] <= C / 2 + 1e-12
    # free alphas in a flat direction: the backends agree on them to ~1e-3 C only
    np.testing.assert_allclose(sol.alpha, ref.alpha, atol=1e-3 * C)


@pytest.mark.parametrize("solver", ["highs", "ipm"])
def test_every_alpha_at_C_is_proved_whichever_sign_the_balance_multiplier_takes(solver):
    """Every alpha at C, re-solved: the working set is empty and the balance row's
    multiplier alone proves the point optimal. The row is an equality, so its multiplier is
    free in sign. With ``s_i = y_i sum_j y_j K_ij``, all alpha at C is optimal iff
    ``max_{y=+1} (C s_i - 1) <= mu <= -max_{y=-1} (C s_i - 1)``: here (max s = 6.88 on the
    positive class, 4.18 on the negative one, C = 0.16) mu lies in [0.101, 0.332], and with
    the labels swapped in [-0.332, -0.101] -- 0 proves neither. Both are proved without a
    solve, each by a multiplier of its own sign.

    Kills (mutmut, ``_all_at_bounds``): an equality row's multiplier held to one sign
    (``(a and b) and False``: the swapped labels fall back to a full solve)."""
    from sklearn.metrics.pairwise import rbf_kernel

    require(solver)
    X, y = _balanced()
    C = 0.16
    s = y * (rbf_kernel(X, gamma=0.5) @ y)
    lo, hi = C * s[y > 0].max() - 1, 1 - C * s[y < 0].max()
    assert 0 < lo < hi                      # every alpha at C, proved by mu > 0 only
    bs = []
    for labels in (y, -y):
        m = sm.build("soft_l1_dual", X, labels, C=C, kernel="rbf", gamma=0.5)
        state: dict = {}
        first = sm.solve(m, solver, _state=state)
        assert np.allclose(first.alpha, C, rtol=1e-7)
        again = sm.solve(m, solver, _state=state)
        assert again.interface == "working set", again.interface
        assert again.objective == pytest.approx(first.objective, rel=1e-10)
        bs.append(again.b)
    assert bs[0] * bs[1] < 0


def _box_with_a_row(sense: str):
    """``min 1/2 (x1 - p1)^2 + 1/2 (x2 - p2)^2`` over ``[0, 1]^2`` with one row
    ``x1 + x2 >= 1`` (``sense=">="``) or ``x1 + x2 <= 1`` (``"<="``): small enough to solve
    by hand at each vertex."""
    m = pyo.ConcreteModel()
    m.p1 = pyo.Param(mutable=True, initialize=0.0)
    m.p2 = pyo.Param(mutable=True, initialize=0.0)
    m.x1 = pyo.Var(bounds=(0, 1))
    m.x2 = pyo.Var(bounds=(0, 1))
    body = m.x1 + m.x2
    m.r = pyo.Constraint(expr=body >= 1 if sense == ">=" else body <= 1)
    m.o = pyo.Objective(expr=0.5 * (m.x1 - m.p1) ** 2 + 0.5 * (m.x2 - m.p2) ** 2)
    return m


# (sense, the path of (p1, p2), the vertex every solve starts from, then per re-solve:
# proved at the vertex by the row's multiplier (its sign fixed by the row's active side),
# and the optimum by hand)
_VERTEX_CASES = {
    # x = (0, 1) on x1 + x2 >= 1: g = (0.5, 0.25) is proved by mu in [0.25, 0.5] (> 0);
    # g = (-0.2, -0.5) only by mu < 0, which the >= row does not allow: x1 = 0.2 is better
    ">=": ([(-0.6, 0.7), (-0.5, 0.75), (0.2, 1.5)], (0.0, 1.0),
           [(True, 0.15625), (False, 0.125)]),
    # x = (1, 0) on x1 + x2 <= 1: g = (-0.6, -0.3) is proved by mu in [-0.6, -0.3] (< 0);
    # g = (0.2, 0.5) only by mu > 0, which the <= row does not allow: x1 = 0.8 is better
    "<=": ([(1.5, 0.35), (1.6, 0.3), (0.8, -0.5)], (1.0, 0.0),
           [(True, 0.225), (False, 0.125)]),
}


@pytest.mark.parametrize("solver", ["highs", "ipm"])
@pytest.mark.parametrize("sense", [">=", "<="])
def test_every_variable_at_a_bound_is_proved_only_by_multipliers_of_the_right_sign(sense, solver):
    """Re-solves whose previous solution has every variable at a bound, on a QP with one
    inequality row that is active: the working set is empty, and the vertex is optimal iff
    row multipliers of the sign the row's active side allows prove it (a small LP). When
    they do, it is returned without a solve (``interface == "working set"``); when only a
    multiplier of the wrong sign would, the problem is solved -- the optimum by hand and
    Clarabel's cold solve.

    Kills (mutmut, ``solvers/working_set.py`` ``_all_at_bounds``): the multipliers' bounds
    dropped or their signs changed (``bounds = None``, ``bounds=None`` to linprog, a free
    multiplier for a one-sided row, ``(1.0, None)``, ``(None, 1.0)``, ...), the sign of the
    upper-bound rows of the LP flipped (``+A.T[at_up]``)."""
    require(solver)
    path, vertex, expect = _VERTEX_CASES[sense]
    adapter = backend(solver).matrix
    m = _box_with_a_row(sense)
    state: dict = {}
    for k, (p1, p2) in enumerate(path):
        m.p1.set_value(p1)
        m.p2.set_value(p2)
        sf = from_pyomo(m)
        res = solve_with_working_set(adapter, sf, SolverOptions(), state)
        assert res.status == "optimal"
        if k == 0:
            assert res.x == pytest.approx(vertex, abs=1e-8)
            continue
        proved, optimum = expect[k - 1]
        cold = _box_with_a_row(sense)
        cold.p1.set_value(p1)
        cold.p2.set_value(p2)
        ref = solve_model(cold, require("clarabel"), problem_class="QP")
        assert ref.objective == pytest.approx(optimum, abs=1e-8)
        assert res.objective == pytest.approx(optimum, abs=1e-8), (p1, p2)
        assert (res.interface == "working set") == proved, (p1, p2, res.interface)
        if proved:
            assert list(res.x) == list(vertex)
            mu = float(res.row_duals[0])
            assert (mu > 0) if sense == ">=" else (mu < 0)
        assert sf.kkt_violation(res.x, res.row_duals) <= 1e-6


def _box_with_an_inactive_row(sense: str, rhs: float):
    """``min 1/2 |x - p|^2`` over ``[0, 1]^2`` with one row ``x1 + x2 >= rhs`` or ``<= rhs``
    that is not active at the vertex the first solve ends at."""
    m = _box_with_a_row(sense)
    m.r.set_value(m.x1 + m.x2 >= rhs if sense == ">=" else m.x1 + m.x2 <= rhs)
    return m


# (sense, rhs, the first p and its vertex, then (p, proved at the vertex, optimum by hand))
_INACTIVE_CASES = {
    # x = (1, 1), the row x1 + x2 >= 0.5 slack by 1.5 (its multiplier must be 0):
    # p = (1.2, 1.4) keeps the vertex (g <= 0 at the upper bounds, mu = 0);
    # p = (0.5, 0.5) does not (g = (0.5, 0.5) > 0): only a multiplier mu >= 0.5 on the
    # inactive row would "prove" it
    ">=": (0.5, (1.5, 1.7), (1.0, 1.0), [((1.2, 1.4), True, 0.1), ((0.5, 0.5), False, 0.0)]),
    # x = (0, 0), the row x1 + x2 <= 1.5 slack by 1.5: likewise with mu <= -0.5
    "<=": (1.5, (-0.5, -0.7), (0.0, 0.0), [((-0.2, -0.4), True, 0.1),
                                           ((0.5, 0.5), False, 0.0)]),
}


@pytest.mark.parametrize("sense", [">=", "<="])
def test_a_row_that_is_not_active_proves_nothing(sense):
    """Re-solves from a vertex (every variable at a bound) on a QP whose one row is not
    active there: its multiplier is 0 (complementary slackness). The vertex is returned
    without a solve only when the reduced costs alone prove it; otherwise the problem is
    solved -- the optimum by hand and Clarabel's cold solve.

    Kills (mutmut, ``solvers/working_set.py`` ``_all_at_bounds``): a row taken as active at
    its lower or upper side whenever that side is finite (``isfinite(lA) | ...``,
    ``isfinite(uA) | ...``), an inactive row's multiplier bounded on one side only
    (``(None, 0.0) if b or True``, ``(0.0, 1.0)``) -- each returned the vertex, objective
    0.25, where the optimum is 0 -- and an inactive row's bounds made infeasible (``(1.0,
    0.0)``: the vertex is then never proved, a full solve every time)."""
    require("highs")
    rhs, p0, vertex, steps = _INACTIVE_CASES[sense]
    adapter = backend("highs").matrix
    m = _box_with_an_inactive_row(sense, rhs)
    m.p1.set_value(p0[0])
    m.p2.set_value(p0[1])
    state: dict = {}
    first = solve_with_working_set(adapter, from_pyomo(m), SolverOptions(), state)
    assert first.status == "optimal"
    assert first.x == pytest.approx(vertex, abs=1e-8)
    for (p1, p2), proved, optimum in steps:
        m.p1.set_value(p1)
        m.p2.set_value(p2)
        sf = from_pyomo(m)
        res = solve_with_working_set(adapter, sf, SolverOptions(), state)
        cold = _box_with_an_inactive_row(sense, rhs)
        cold.p1.set_value(p1)
        cold.p2.set_value(p2)
        ref = solve_model(cold, require("clarabel"), problem_class="QP")
        assert ref.objective == pytest.approx(optimum, abs=1e-8)
        assert res.status == "optimal"
        assert res.objective == pytest.approx(optimum, abs=1e-8), (p1, p2)
        assert (res.interface == "working set") == proved, (p1, p2, res.interface)
        if proved:
            assert list(res.x) == list(vertex) and float(res.row_duals[0]) == 0.0
        # (the next step starts from this solution's working set)


# ---------------------------------------------------------------------------------------
# (d) a C path in the order given


@pytest.mark.parametrize("Cs", [[100.0, 10.0, 1.0, 0.1, 0.01], [1.0, 0.01, 100.0, 0.1, 3.0]],
                         ids=["descending", "unsorted"])
def test_fit_path_answers_each_C_in_the_order_given(Cs):
    """``fit_path`` with descending and unsorted Cs: solution k is the one at ``Cs[k]`` --
    its C, and objective and decision values equal to a single cold fit at that C by
    another backend.

    Kills: ``methods/paths.py`` walking the Cs sorted (``Cs = sorted(...)``) and returning
    them in that order, or labelling each solution with the wrong C."""
    require("highs")
    X, y = make_moons(60, noise=0.3, random_state=2)
    kw = dict(kernel="rbf", gamma=1.0)
    path = sm.fit_path(X, y, Cs, formulation="soft_l1_dual", solver="highs", **kw)
    assert [s.C for s in path] == Cs
    objectives = []
    for C, s in zip(Cs, path):
        ref = sm.fit(X, y, "soft_l1_dual", require("clarabel"), C=C, **kw)
        assert s.status == "optimal"
        assert s.objective == pytest.approx(ref.objective, rel=1e-7), C
        np.testing.assert_allclose(s.decision_function(X), ref.decision_function(X),
                                   atol=1e-5 * max(1.0, C))
        objectives.append(ref.objective)
    assert len(set(np.round(objectives, 6))) == len(Cs)   # the test can tell the Cs apart


def test_fit_path_uses_the_backend_options_and_progress_given(capsys):
    """``fit_path`` solves every C with the backend and the solve options it is given, and
    reports each step: a callable gets ``(k, n, C, solution)`` for k = 1..n, ``progress=True``
    draws a bar on stderr labelled "path" with each C and objective, the default (a short
    path, stderr not a terminal) draws nothing.

    Kills (mutmut, ``methods/paths.py``): the solver or the solve options dropped from the
    solve (``solve(model, _state=...)``: the default backend), and the progress reports
    mutated (arguments, count, label, ``if progress is None`` / ``is True`` inverted)."""
    require("highs")
    X, y = make_moons(30, noise=0.3, random_state=2)
    Cs = [0.5, 2.0, 0.1]
    seen = []
    path = sm.fit_path(X, y, Cs, solver="highs", kernel="rbf", gamma=1.0,
                       progress=lambda k, n, C, s: seen.append((k, n, C, s.objective)))
    assert [s.solver for s in path] == ["highs"] * 3
    assert seen == [(k + 1, 3, C, s.objective) for k, (C, s) in enumerate(zip(Cs, path))]
    capsys.readouterr()
    sm.fit_path(X, y, Cs, solver="highs", kernel="rbf", gamma=1.0)
    assert capsys.readouterr().err == ""
    sm.fit_path(X, y, Cs, solver="highs", kernel="rbf", gamma=1.0, progress=True)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and all(line.startswith("path [") for line in err)
    assert [line.split()[2] for line in err] == ["1/3", "2/3", "3/3"]
    assert all(f"C={C:.4g} objective=" in line for C, line in zip(Cs, err))
    # the solve options reach every solve: one ipm iteration is not enough
    from svm_models.errors import SolveFailedError

    with pytest.raises(SolveFailedError):
        sm.fit_path(X, y, Cs, solver="ipm", kernel="rbf", gamma=1.0, iter_limit=1)


def test_the_support_rule_and_the_certificate_tolerance_follow_their_formulas():
    """The support threshold is ``max(SV_REL, min(1000 tol, SV_REL_MAX))`` times the scale of
    alpha (its largest |alpha|, NaN ignored, at least the smallest float), the certificate's
    tolerance ``max(CERT_REL, CERT_PER_TOL tol)``, tol the solver's (default SOLVER_TOL).

    Kills (mutmut, ``tolerances.py``): the solver tolerance ignored, ``1000 / tol``, the
    scale floored at 1, ``alpha_scale`` without its NaN handling or its floor."""
    from svm_models import tolerances as t

    for tol in (None, 1e-9, 1e-7, 1e-5, 1e-2):
        eff = t.SOLVER_TOL if tol is None else tol
        rel = max(t.SV_REL, min(1000.0 * eff, t.SV_REL_MAX))
        for scale in (1e-4, 1.0, 250.0):
            assert t.support_threshold(scale, tol) == pytest.approx(rel * scale, rel=1e-15)
        assert t.certificate_tolerance(tol) == pytest.approx(
            max(t.CERT_REL, t.CERT_PER_TOL * eff), rel=1e-15)
    assert t.support_threshold(1.0, 1e-7) != t.support_threshold(1.0, 1e-5)
    assert t.alpha_scale([0.5, np.nan, -3.0, 2.0]) == 3.0
    assert t.alpha_scale(np.array([1, 2, 4])) == 4.0
    assert t.alpha_scale([]) == np.finfo(float).tiny
    assert t.alpha_scale([0.0, 0.0]) == np.finfo(float).tiny


@pytest.mark.parametrize("Cs", [[100.0, 10.0, 1.0, 0.03], [1.0, 0.03, 100.0, 10.0]],
                         ids=["descending", "unsorted"])
def test_cross_validation_table_rows_follow_the_Cs_given(Cs):
    """``cross_validate`` with descending and unsorted Cs: the table's rows come in the order
    of ``Cs`` (the documented ``ParameterGrid`` order, C outermost), and each row's fold
    scores are those of a single fit at its C on that fold (:class:`SVMClassifier`, another
    backend).

    Kills: ``methods/cv.py`` sorting the Cs (``_check_Cs``), reading a task's values or
    statuses at the wrong position of its path, or building the rows in another order."""
    require("highs")
    X, y = make_moons(60, noise=0.35, random_state=4)
    kw = dict(kernel="rbf", gamma=2.0)
    table = cross_validate(X, y, "soft_l1_dual", "highs", Cs=Cs, cv=3, **kw)
    assert list(table["param_C"]) == Cs
    assert [p["C"] for p in table["params"]] == Cs
    assert list(table["status"]) == ["optimal"] * len(Cs)
    folds = list(StratifiedKFold(3).split(X, y))
    expect = np.array([[SVMClassifier(solver=require("piqp"), C=C, **kw)
                        .fit(X[tr], y[tr]).score(X[te], y[te]) for tr, te in folds]
                       for C in Cs])
    got = np.column_stack([table[f"split{k}_test_score"] for k in range(3)])
    np.testing.assert_array_equal(got, expect)
    np.testing.assert_allclose(table["mean_test_score"], expect.mean(axis=1))
    assert len({tuple(r) for r in expect}) == len(Cs)     # every row tells its C apart


# ---------------------------------------------------------------------------------------
# (e) labels that are not 0..k-1


LABELS = np.array([-7, 3, 12])


@pytest.mark.parametrize("multi_class", ["ovr", "ovo"])
def test_cv_estimator_with_labels_not_0_to_k_minus_1(multi_class):
    """Three classes labelled {-7, 3, 12}: ``SVMClassifierCV.classes_`` and the refit's are
    those labels, its predictions lie in them and equal a direct :class:`SVMClassifier` fit
    at the chosen C; the table's fold scores are those of such fits.

    Kills: ``methods/cv.py`` refitting on the class indices (``refit(job.X, job.y, ...)``:
    the refit predicts 0, 1, 2), scoring the folds against the labels instead of the indices,
    and ``estimator.py`` giving ``classes_`` as ``0..k-1`` (or the refit's labels in another
    order)."""
    require("highs")
    X, yi = make_blobs(60, centers=3, n_features=2, cluster_std=2.5, random_state=2)
    y = LABELS[yi]
    Cs = [10.0, 0.1, 1.0]
    est = SVMClassifierCV(solver="highs", Cs=Cs, cv=3, multi_class=multi_class).fit(X, y)
    np.testing.assert_array_equal(est.classes_, LABELS)
    np.testing.assert_array_equal(est.best_estimator_.classes_, LABELS)
    pred = est.predict(X)
    assert set(np.unique(pred)) <= set(LABELS.tolist())
    assert len(np.unique(pred)) == 3
    direct = SVMClassifier(solver="highs", C=est.best_params_["C"],
                           multi_class=multi_class).fit(X, y)
    np.testing.assert_array_equal(direct.classes_, LABELS)
    np.testing.assert_array_equal(pred, direct.predict(X))
    folds = list(StratifiedKFold(3).split(X, y))
    expect = np.array([[SVMClassifier(solver="highs", C=C, multi_class=multi_class)
                        .fit(X[tr], y[tr]).score(X[te], y[te]) for tr, te in folds]
                       for C in Cs])
    got = np.column_stack([est.cv_results_[f"split{k}_test_score"] for k in range(3)])
    np.testing.assert_array_equal(got, expect)
    assert est.best_score_ == pytest.approx(expect.mean(axis=1).max())


def test_binary_cv_estimator_and_refit_with_labels_not_0_1():
    """Two classes labelled {-7, 12}: ``classes_``, the refit's ``classes_`` and predictions
    in {-7, 12}, equal to a direct fit at the chosen C (``refit`` of
    :func:`cross_validate` called with the labels themselves).

    Kills: the binary refit given the class indices (predictions 0/1), and the positive class
    of the binary problem taken as the first label instead of ``classes_[1]``."""
    require("highs")
    X, yi = make_blobs(50, centers=2, n_features=2, cluster_std=3.0, random_state=6)
    y = np.where(yi == 0, 12, -7)
    est = SVMClassifierCV(solver="highs", Cs=[0.1, 1.0], cv=3).fit(X, y)
    np.testing.assert_array_equal(est.classes_, [-7, 12])
    np.testing.assert_array_equal(est.best_estimator_.classes_, [-7, 12])
    direct = SVMClassifier(solver="highs", C=est.best_params_["C"]).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), direct.predict(X))
    assert set(np.unique(est.predict(X))) == {-7, 12}
    # the decision value is positive for classes_[1] = 12, as SVC's
    f = est.decision_function(X)
    np.testing.assert_array_equal(np.where(f >= 0, 12, -7), est.predict(X))
    assert (est.predict(X) == y).mean() > 0.7

    seen = {}

    def refit(Xa, labels, params):
        seen["labels"] = np.asarray(labels)
        return SVMClassifier(solver="highs", **params).fit(Xa, labels)

    _, out = cross_validate(X, y, "soft_l1_dual", "highs", Cs=[0.1, 1.0], cv=3, refit=refit)
    np.testing.assert_array_equal(seen["labels"], y)
    np.testing.assert_array_equal(out["result"].predict(X), direct.predict(X))

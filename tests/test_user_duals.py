"""The user's own duals (issue 31): ``svm_models.extract(block, duals=model.dual)`` after the
user solved a model of their own with one of Pyomo's solvers.

The SVMs sit inside a larger model -- an SVMBlock and a plain Pyomo block filled by
``svm_models.build(..., block=)``, their objectives summed into the user's one objective,
beside the user's own variables and row -- so the record does not prove the model (path
"user") and the duals are read as the user hands them. Their sign depends on the interface
(cyipopt's are the opposite of gurobi_direct's) and on the sense of the user's objective
(maximised or minimised): extract reads them in the sign that is dual feasible for the
block's own rows (``postprocess.user_dual_sign``). Before, a soft_l1_dual in a minimisation
solved by gurobi_direct at its default tolerance gave a b off by 0.97 (the multiplier of
``balance`` read with the wrong sign), without a word; without duals, b was NaN under status
"optimal".

Every answer is checked against ``svm_models.fit`` on the same data (b, w, alpha).
"""

from __future__ import annotations

import functools

import numpy as np
import pyomo.environ as pyo
import pytest

import svm_models as sm
from svm_models.errors import ParameterError
from svm_models.model.mixed import objective_scale
from svm_models.postprocess import user_dual_sign
from svm_models.solvers.base import preserved_fpu
from svm_models.tolerances import USER_SIGN_CLEAR

from conftest import GUROBI_MAX_VARS, blobs, n_vars, require, separable

#: Pyomo warns about values 1e-9 outside a bound: not what is tested here
pytestmark = pytest.mark.usefixtures("quiet_pyomo")

C = 0.7
#: the Pyomo plugins and the project's backend each needs
PLUGINS = {"gurobi_direct": "gurobi", "cyipopt": "ipopt", "highs": "highs"}
#: tight tolerances: the values as solved then agree with fit's to 1e-6
TIGHT = {"gurobi_direct": {"BarConvTol": 1e-12}, "cyipopt": {"tol": 1e-12}, "highs": {}}
SEEDS = (5, 0)   # (at seed 5 the multiplier of balance is b = 0.485; 0.97 is 2b)


def data(seed: int):
    return blobs(seed, l=30, d=2, sep=1.0)


@functools.lru_cache(maxsize=None)
def reference(name: str, seed: int):
    return sm.fit(*data(seed), name, require("piqp"), C=C)


def larger_model(name: str, sense: str, seeds=SEEDS, user: bool = True):
    """SVMs inside a model of the user's: ``m.svm`` (an SVMBlock) and, for a second seed,
    ``m.other`` (a plain Block filled by svm_models.build), their objectives summed into one
    (each SVM's own deactivated), with the user's variables x, their row and their term
    beside; maximised or minimised. A Suffix ``dual`` imports the duals."""
    m = pyo.ConcreteModel()
    m.svm = sm.SVMBlock()
    m.svm.build(name, *data(seeds[0]), C=C)
    blocks = [m.svm]
    if len(seeds) > 1:
        m.other = pyo.Block()
        sm.build(name, *data(seeds[1]), block=m.other, C=C)
        blocks.append(m.other)
    total = 0.0
    for blk in blocks:   # each SVM's objective, as a term to minimise
        sign = 1.0 if blk.objective.sense == pyo.minimize else -1.0
        blk.objective.deactivate()
        total = total + sign * blk.objective.expr
    if user:
        m.x = pyo.Var([0, 1], bounds=(-5, 5))
        m.budget = pyo.Constraint(expr=m.x[0] + m.x[1] <= 1)
        total = total + (m.x[0] - 2) ** 2 + (m.x[1] - 1) ** 2
    if sense == "max":
        m.obj = pyo.Objective(expr=-total, sense=pyo.maximize)
    else:
        m.obj = pyo.Objective(expr=total, sense=pyo.minimize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m, list(zip(blocks, seeds))


def pyomo_solve(m, solver: str, options: dict) -> None:
    opt = pyo.SolverFactory(solver)
    if not opt.available(exception_flag=False):
        require(PLUGINS[solver])
    if solver.startswith("gurobi"):
        assert n_vars(m) <= GUROBI_MAX_VARS, "test design: too large for Gurobi's pip licence"
    with preserved_fpu():   # cyipopt would leave the x87 unit at 53 bits for later tests
        res = opt.solve(m, options=options)
    assert res.solver.termination_condition == pyo.TerminationCondition.optimal


def assert_agrees(sol, ref, what: str, tol: float = 1e-6, alpha_tol: float = 1e-6):
    assert sol.status == "optimal", f"{what}: {sol.status} {sol.extra.get('message')}"
    assert sol.b == pytest.approx(ref.b, abs=tol), what
    np.testing.assert_allclose(sol.w, ref.w, rtol=0, atol=tol, err_msg=what)
    np.testing.assert_allclose(sol.alpha, ref.alpha, rtol=0, atol=alpha_tol, err_msg=what)


# ---------------------------------------------------------------------------------------
# Either sense, every interface


@pytest.mark.parametrize("name", ["soft_l1_dual", "soft_l1_primal"])
@pytest.mark.parametrize("sense", ["min", "max"])
@pytest.mark.parametrize("solver", ["gurobi_direct", "cyipopt", "highs"])
def test_the_users_duals_in_a_larger_model_in_either_sense(solver, sense, name):
    """Two SVMs and the user's own part, summed, maximised or minimised, solved tightly: each
    block's Solution is fit's. A primal's alpha comes from the margin rows' multipliers --
    the opposite sign of a minimisation's for gurobi_direct and HiGHS maximising, and for
    cyipopt in both senses."""
    m, blocks = larger_model(name, sense)
    pyomo_solve(m, solver, TIGHT[solver])
    np.testing.assert_allclose([m.x[0].value, m.x[1].value], [1.0, 0.0], atol=1e-5)
    for blk, seed in blocks:
        sol = sm.extract(blk, solver=solver, duals=m.dual)
        what = f"{name} {sense} {solver} {blk.name}"
        assert sol.path == "user", what
        if name.endswith("primal"):
            assert sol.extra["alpha_source"] == "multipliers", what
        assert_agrees(sol, reference(name, seed), what)


@pytest.mark.parametrize("sense", ["min", "max"])
@pytest.mark.parametrize("solver, seed", [("gurobi_direct", 5), ("cyipopt", 3)])
def test_a_dual_solved_at_the_default_tolerance_takes_b_from_balance_in_either_sense(
        solver, seed, sense):
    """The colleague's case: at the solver's default tolerance the values satisfy the SVM's
    optimality conditions only to ~1e-3, so b is the multiplier of ``balance`` -- which
    gurobi_direct reports as -b in a minimisation (b was off by 2b = 0.97 at seed 5, no
    warning). Read in the dual-feasible sign, b is fit's. Without duals there is no b: never
    status "optimal"."""
    m, blocks = larger_model("soft_l1_dual", sense, seeds=(seed,))
    pyomo_solve(m, solver, {})
    blk = m.svm
    sol = sm.extract(blk, solver=solver, duals=m.dual)
    assert sol.extra["b_source"] == "multiplier of balance", "test design: the path tested"
    assert_agrees(sol, reference("soft_l1_dual", seed), f"{solver} {sense} seed {seed}",
                  alpha_tol=2e-5)
    # the duals are read divided by the factor with which the objective holds the SVM's
    # (min: -E, max: E), then in the dual-feasible sign (the solver's own convention)
    c = objective_scale(blk._svm.record)
    assert c == (-1.0 if sense == "min" else 1.0)
    if (m.dual[blk.balance] / c > 0) != (sol.b > 0):
        assert "opposite sign" in sol.extra["dual_sign"]
    else:
        assert "dual_sign" not in sol.extra
    bare = sm.extract(blk, solver=solver)
    assert np.isnan(bare.b) and bare.status == "numerical_error"
    assert "no bias b" in bare.extra["message"] and "duals=" in bare.extra["message"]


# ---------------------------------------------------------------------------------------
# The rule on hand-made duals


def test_balance_read_in_either_sign_and_b_never_nan_when_optimal():
    """A dual whose alpha is off the optimum by 1e-4 (as an interior point leaves it) inside
    a model of the user's: the KKT conditions do not give b, the multiplier of balance does
    -- given as +b or as -b, b is the same; not given, b is NaN and the status says so."""
    m, _ = larger_model("soft_l1_dual", "max", seeds=(5,))
    pyomo_solve(m, "highs", {})
    ref = reference("soft_l1_dual", 5)
    for i in m.svm.I:
        if m.svm.alpha[i].value < 1e-6:
            m.svm.alpha[i].set_value(1e-4)
    for given in (ref.b, -ref.b):
        sol = sm.extract(m.svm, duals={m.svm.balance: given})
        assert sol.extra["b_source"] == "multiplier of balance"
        assert sol.status == "optimal" and sol.b == pytest.approx(ref.b, abs=1e-12)
        assert ("dual_sign" in sol.extra) == (given != ref.b)
    none = sm.extract(m.svm, duals={})
    assert none.status == "numerical_error" and np.isnan(none.b)
    with pytest.raises(sm.SVMError, match="no decision function"):
        none.decision_function(data(5)[0])


def test_margin_multipliers_of_no_one_sign_are_refused():
    """Margin multipliers of both signs in equal measure are no primal's duals in either
    convention: a ParameterError naming the problem, not an alpha clipped from half of
    them."""
    m, _ = larger_model("soft_l1_primal", "min", seeds=(5,))
    pyomo_solve(m, "highs", {})
    ref = reference("soft_l1_primal", 5)
    duals = {m.svm.margin[i]: (1.0 if i % 2 else -1.0) * (a + 0.1)
             for i, a in enumerate(ref.alpha)}
    with pytest.raises(ParameterError, match="sign of the duals given cannot be decided"):
        sm.extract(m.svm, duals=duals)
    flipped = sm.extract(m.svm, duals={m.svm.margin[i]: -a for i, a in enumerate(ref.alpha)})
    assert "opposite sign" in flipped.extra["dual_sign"]
    assert_agrees(flipped, ref, "flipped by hand")


def test_least_squares_duals_of_a_changed_model_are_read_in_the_right_sign():
    """ls_svm_primal with a user's row w_0 >= c, solved by gurobi_direct: the sum of the
    margin rows' multipliers is negative there (the user's row moves it), and the sum rule
    flipped them -- alpha the negative of the model's. Their sign now follows stationarity
    in e (alpha_i = C weight_i e_i), the same as svm_models.solve's alpha."""
    require("gurobi")
    X, y = separable(4, l=20, d=2)
    for c in (2.0, 4.0):
        def model():
            m = sm.build("ls_svm_primal", X, y, C=1.0)
            m.push = pyo.Constraint(expr=m.w[0] >= c)
            return m

        m = model()
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        with preserved_fpu():
            pyo.SolverFactory("gurobi_direct").solve(m)
        got = sm.extract(m, duals=m.dual)
        ref = sm.solve(model(), "clarabel")
        np.testing.assert_allclose(got.alpha, ref.alpha, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------
# The sign rule itself, on readings worked by hand (issue 31, make mutate)


def test_the_sign_rule_takes_the_reading_at_most_a_tenth_as_infeasible():
    """``user_dual_sign`` on hand-made violations of the two readings (as given, flipped):
    the reading whose violation is at most 1/USER_SIGN_CLEAR of the other's (the other's
    above 0) is taken -- a factor exactly 10 apart is enough, 9.99 is not; both 0 (two
    dual-feasible readings that differ as answers) cannot be decided; not material (zero
    multipliers): as given, whatever the readings say."""
    def readings(keep, flip):
        return lambda s: {1.0: keep, -1.0: flip}[s]   # (defined for s = +-1 only)

    clear = USER_SIGN_CLEAR
    for keep, flip, sign in [(0.0, 1e-12, 1.0), (1.0, clear, 1.0), (0.0, 0.5, 1.0),
                             (1e-12, 0.0, -1.0), (clear, 1.0, -1.0), (0.5, 0.0, -1.0)]:
        extra: dict = {}
        got = user_dual_sign(readings(keep, flip), material=True, what="w", extra=extra)
        assert got == sign and type(got) is float, (keep, flip)
        assert ("dual_sign" in extra) == (sign < 0), (keep, flip)
    for keep, flip in [(1.0, 0.999 * clear), (0.999 * clear, 1.0), (0.0, 0.0), (1.0, 0.5),
                       (0.5, 1.0)]:
        with pytest.raises(ParameterError, match="cannot be decided"):
            user_dual_sign(readings(keep, flip), material=True, what="w", extra={})
    extra = {}
    assert user_dual_sign(readings(1.0, 0.0), material=False, what="w", extra=extra) == 1.0
    assert extra == {}


def test_a_changed_objective_c_times_the_svms_divides_the_multipliers_by_c():
    """svm_models.solve of a soft_l1_primal whose objective the user replaced by ``c E``
    (c = 2 minimised, c = -3 maximised): the duals of that model are c times the
    formulation's, so alpha (the margin rows' multipliers, read as one run of rows) is fit's
    only when they are divided by c -- not multiplied (4 and 9 times alpha)."""
    X, y = data(5)
    ref = reference("soft_l1_primal", 5)
    for c in (2.0, -3.0):
        m = sm.build("soft_l1_primal", X, y, C=C)
        m.objective.deactivate()
        m.scaled = pyo.Objective(expr=c * m.objective.expr,
                                 sense=pyo.minimize if c > 0 else pyo.maximize)
        sol = sm.solve(m, require("clarabel"))
        assert sol.extra["alpha_source"] == "multipliers", "test design: the path tested"
        np.testing.assert_allclose(sol.alpha, ref.alpha, rtol=0, atol=1e-6, err_msg=str(c))


def test_least_squares_multipliers_of_both_signs_are_read_against_the_reference():
    """ls_svm_primal with a user's row w_1 <= -10 (a changed model): its alpha = C e (the
    multipliers of the margin equalities) has both signs in comparable measure (positive 72,
    negative 99) and a negative sum (-26), so neither "no negative entries" nor "a sum >= 0"
    reads them right; the sign is the one that matches C weight_i e_i at the values solved.
    The multipliers given as solve's alpha or as its negative are read as that alpha."""
    X, y = separable(4, l=20, d=2)
    m = sm.build("ls_svm_primal", X, y, C=1.0)
    m.push = pyo.Constraint(expr=m.w[1] <= -10.0)
    alpha = sm.solve(m, require("clarabel")).alpha
    e = np.array([m.e[i].value for i in m.e])
    np.testing.assert_allclose(alpha, 1.0 * e, rtol=0, atol=1e-8)   # stationarity in e
    pos, neg = alpha[alpha > 0].sum(), -alpha[alpha < 0].sum()
    assert pos < neg < 2 * pos, "test design: both signs in comparable measure, sum < 0"
    for s in (1.0, -1.0):
        got = sm.extract(m, duals={m.margin[i]: s * a for i, a in zip(m.margin, alpha)})
        assert got.extra["alpha_source"] == "multipliers of margin"
        np.testing.assert_allclose(got.alpha, alpha, rtol=0, atol=1e-12, err_msg=str(s))
        assert ("dual_sign" in got.extra) == (s < 0)


def test_margin_multipliers_all_zero_are_read_as_zeros():
    """Zero multipliers given for every margin row (inside a model of the user's): either
    sign is the same answer, so it is not asked ("cannot be decided" would refuse duals that
    are simply 0) -- alpha is 0, nothing flipped."""
    m, _ = larger_model("soft_l1_primal", "min", seeds=(5,))
    pyomo_solve(m, "highs", {})
    sol = sm.extract(m.svm, duals={m.svm.margin[i]: 0.0 for i in m.svm.margin})
    assert sol.extra["alpha_source"] == "multipliers"
    np.testing.assert_array_equal(sol.alpha, np.zeros(len(sol.alpha)))
    assert "dual_sign" not in sol.extra


def test_margin_multipliers_with_round_off_of_the_wrong_sign_are_read_as_given():
    """The multipliers of the optimum with every zero given as -1e-12 (round-off of the wrong
    sign, as an interior point leaves it): the wrong sign's measure is 1e-12 per point against
    sum(alpha) of the other, so they are read as given -- and, negated (+1e-12 on the
    zeros), flipped. Measured by size, not by count or by 1/|multiplier| (which the 1e-12s
    would dominate)."""
    m, _ = larger_model("soft_l1_primal", "min", seeds=(5,))
    pyomo_solve(m, "highs", {})
    ref = reference("soft_l1_primal", 5)
    assert np.sum(ref.alpha == 0) > len(ref.alpha) / 2, "test design: mostly zeros"
    noisy = np.where(ref.alpha > 0, ref.alpha, -1e-12)
    for s in (1.0, -1.0):
        sol = sm.extract(m.svm, duals={m.svm.margin[i]: s * a for i, a in enumerate(noisy)})
        assert ("dual_sign" in sol.extra) == (s < 0)
        assert_agrees(sol, ref, f"round-off of the wrong sign, {s}")


def test_an_active_point_of_weight_0_is_read_without_multipliers():
    """A point of weight 0 on the wrong side (C_i = 0), its slack exactly its shortfall (3):
    without multipliers, extract recovers alpha from the KKT conditions -- that point was an
    unknown with the box [0, 0], which scipy's lsq_linear refuses (ValueError from extract;
    HiGHS and gurobi_direct). Its alpha is 0, the rest those of the six points without it
    (worked by hand on the toy: alpha 1/4 on (-1, -1) and (1, 1), w = (1/2, 1/2), b = 0),
    and PIQP's fit on the six points agrees."""
    X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1], [2, 2]], dtype=float)
    y = np.array([-1, -1, -1, 1, 1, 1, -1])
    weight = np.array([1, 1, 1, 1, 1, 1, 0.0])
    m = sm.build("soft_l1_primal", X, y, C=1.0, sample_weight=weight)
    with preserved_fpu():
        pyo.SolverFactory("highs").solve(m)
    assert m.xi[6].value == pytest.approx(3.0, abs=1e-9)   # (on its own margin row: active)
    sol = sm.extract(m, solver="highs")
    assert sol.status is sm.Status.optimal
    assert sol.extra["alpha_source"] == "kkt_least_squares"
    np.testing.assert_allclose(sol.alpha, [0, 0.25, 0, 0.25, 0, 0, 0], atol=1e-9)
    np.testing.assert_allclose(sol.w, [0.5, 0.5], atol=1e-9)
    assert sol.b == pytest.approx(0.0, abs=1e-9)
    ref = sm.fit(X[:6], y[:6], "soft_l1_primal", "piqp", C=1.0)
    np.testing.assert_allclose(sol.alpha[:6], ref.alpha, atol=1e-7)

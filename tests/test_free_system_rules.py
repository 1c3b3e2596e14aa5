"""The pieces of post-processing that every solve goes through, called directly on values
worked out by hand or by an independent computation (issue 31, ``make mutate``): the polish's
free system ``[[H, y], [y', 0]] [alpha_F; b] = rhs`` (``_solve_free_system``, its Cholesky /
Schur-complement solver ``_bordered_solver``), ``ratio``, the kernel's diagonal and blocks
(``_kernel_diagonal``, ``_kernel_block``), the objective a Solution reports
(``block_objective``), the values read from a block (``values_of``, ``var_array``,
``linear_primal_values``) and the context's dual (``Context.dual``).

Each system's reference is ``numpy.linalg.solve``, ``numpy.linalg.pinv`` or an exact
rational elimination (``fractions``); each kernel's is scikit-learn's pairwise kernels. Which
of the three solvers answered is part of the contract (Cholesky first, half the work of LU;
LU when ``H`` has no Cholesky factor; least squares, the least-norm answer, when the system
is singular): the tests that say so watch ``scipy.linalg.lu_factor`` and
``numpy.linalg.lstsq``."""

from __future__ import annotations

import warnings
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.linalg

from svm_models.postprocess import (
    POLISH_REFINE,
    POLISH_SOLVED,
    Context,
    _bordered_solver,
    _kernel_block,
    _kernel_diagonal,
    _solve_free_system,
    block_objective,
    linear_primal_values,
    ratio,
    values_of,
    var_array,
)


def bordered(H, y):
    """``[[H, y], [y', 0]]``."""
    n = len(y)
    A = np.zeros((n + 1, n + 1))
    A[:-1, :-1], A[:-1, -1], A[-1, :-1] = H, y, y
    return A


@pytest.fixture
def calls(monkeypatch):
    """Counts of the calls of LU's factorisation and of least squares during a test."""
    seen = {"lu": 0, "lstsq": 0}
    lu_factor, lstsq = scipy.linalg.lu_factor, np.linalg.lstsq

    def lu_spy(*args, **kw):
        seen["lu"] += 1
        return lu_factor(*args, **kw)

    def lstsq_spy(*args, **kw):
        seen["lstsq"] += 1
        return lstsq(*args, **kw)

    monkeypatch.setattr(scipy.linalg, "lu_factor", lu_spy)
    monkeypatch.setattr(np.linalg, "lstsq", lstsq_spy)
    return seen


def exact_solve(A, r):
    """The solution of ``A x = r`` by Gauss-Jordan elimination in exact rationals (the
    entries of A and r as the floats they are), rounded to floats at the end."""
    n = len(r)
    M = [[Fraction(float(A[i, j])) for j in range(n)] + [Fraction(float(r[i]))]
         for i in range(n)]
    for c in range(n):
        p = next(i for i in range(c, n) if M[i][c] != 0)
        M[c], M[p] = M[p], M[c]
        for i in range(n):
            if i != c and M[i][c] != 0:
                f = M[i][c] / M[c][c]
                M[i] = [a - f * b for a, b in zip(M[i], M[c])]
    return np.array([float(M[i][n] / M[i][i]) for i in range(n)])


# ---------------------------------------------------------------------------------------
# _bordered_solver


def test_the_bordered_solver_of_a_2_by_2_system_worked_by_hand():
    """h a + y b = r_1, y a = r_2 with h = 4, y = -1, r = (3, 2): a = r_2 / y = -2,
    b = (r_1 - h a) / y = -11."""
    A = np.array([[4.0, -1.0], [-1.0, 0.0]])
    np.testing.assert_allclose(_bordered_solver(A)(np.array([3.0, 2.0])), [-2.0, -11.0],
                               rtol=1e-15, atol=0)


def test_the_bordered_solver_matches_numpys_solve():
    """H positive definite (6 free points, labels of both signs, y'H^{-1}y = 0.46 < 1): the
    Schur complement of the border gives numpy's LU solution; each entry of r is read from
    its place (the border's last, the free rows' first n)."""
    rng = np.random.default_rng(11)
    n = 6
    M = rng.normal(size=(n, n))
    y = np.array([1.0, -1.0, -1.0, 1.0, 1.0, -1.0])
    H = (M @ M.T + 10.0 * np.eye(n)) * np.outer(y, y)
    A = bordered(H, y)
    yv = float(y @ np.linalg.solve(H, y))
    assert 0.0 < yv < 1.0   # (a border that is not singular however small its complement)
    for r in (rng.normal(size=n + 1), np.append(np.ones(n), 0.0), np.append(np.zeros(n), 2.0)):
        np.testing.assert_allclose(_bordered_solver(A)(r), np.linalg.solve(A, r), rtol=1e-12,
                                   atol=1e-14)


def test_the_bordered_solver_with_two_border_rows_matches_numpys_solve():
    """The nu-SVM's free system has two border rows (``y`` and ``e``): the Schur complement
    ``Y'H^-1 Y`` (2 x 2) gives numpy's LU solution; a border of two equal rows (y = e: one
    class) is singular and refused."""
    rng = np.random.default_rng(12)
    n = 6
    M = rng.normal(size=(n, n))
    y = np.array([1.0, -1.0, -1.0, 1.0, 1.0, -1.0])
    H = (M @ M.T + 10.0 * np.eye(n)) * np.outer(y, y)
    A = np.zeros((n + 2, n + 2))
    A[:n, :n], A[:n, n], A[n, :n], A[:n, n + 1], A[n + 1, :n] = H, y, y, 1.0, 1.0
    for r in (rng.normal(size=n + 2), np.append(np.zeros(n), [0.0, 0.4])):
        np.testing.assert_allclose(_bordered_solver(A, 2)(r), np.linalg.solve(A, r),
                                   rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(_solve_free_system(A, r, 2), np.linalg.solve(A, r),
                                   rtol=1e-12, atol=1e-14)
    same = A.copy()
    same[:n, n] = same[n, :n] = 1.0   # y = e
    with pytest.raises(np.linalg.LinAlgError):
        _bordered_solver(same, 2)(np.ones(n + 2))


def test_the_bordered_solver_refuses_a_singular_border_and_an_h_without_cholesky_factor():
    """A zero border (y = 0: y'H^{-1}y = 0, A singular) and an H that is not positive
    definite (a zero pivot; an indefinite one): the solver is made, and raises LinAlgError
    when called -- the caller then factors A by LU."""
    H = np.array([[2.0, 0.0], [0.0, 3.0]])
    solve = _bordered_solver(bordered(H, np.zeros(2)))
    with pytest.raises(np.linalg.LinAlgError):
        solve(np.array([1.0, 1.0, 1.0]))
    for H in (np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([[1.0, 2.0], [2.0, 1.0]])):
        solve = _bordered_solver(bordered(H, np.array([1.0, -1.0])))
        with pytest.raises(np.linalg.LinAlgError):
            solve(np.array([1.0, 1.0, 0.0]))


# ---------------------------------------------------------------------------------------
# _solve_free_system


def test_a_positive_definite_free_system_is_solved_by_cholesky_alone(calls):
    """H positive definite: numpy's solution, through the Cholesky factor only (no LU, no
    least squares) -- also for one free point (a 2 x 2 system) and for values of 1e6 (alpha
    near a large C): the residual test is relative to the sizes of A, rhs and the solution."""
    rng = np.random.default_rng(5)
    n = 7
    M = rng.normal(size=(n, n))
    y = np.array([1.0, 1.0, -1.0, 1.0, -1.0, -1.0, 1.0])
    A = bordered((M @ M.T + np.eye(n)) * np.outer(y, y), y)
    r = np.append(np.ones(n), 0.0)
    np.testing.assert_allclose(_solve_free_system(A, r), np.linalg.solve(A, r), rtol=1e-12)
    x = 1e6 * rng.uniform(0.5, 1.5, size=n + 1)     # alpha and b of order 1e6
    r6 = A @ x
    assert np.abs(r6).max() > 1e6
    np.testing.assert_allclose(_solve_free_system(A, r6), x, rtol=1e-11)
    # one free point: 4 a - b = 3, -a = 2 (see the 2 x 2 case above)
    np.testing.assert_allclose(_solve_free_system(np.array([[4.0, -1.0], [-1.0, 0.0]]),
                                                  np.array([3.0, 2.0])), [-2.0, -11.0],
                               rtol=1e-15)
    assert calls == {"lu": 0, "lstsq": 0}


#: integer features on scales 1 to 1e3 (6 points, 8 features, the first three rounded to 0):
#: the linear kernel's H is positive definite but ill-conditioned (cond(A) = 1e7), and one
#: Cholesky/Schur solve misses the solution by 3e-5 (relative)
ILL_X = np.array([[0, 0, 0, -1, 5, 22, -45, 774],
                  [0, 0, 0, 0, -1, -15, 63, -99],
                  [0, 0, 0, 0, 2, 4, 46, 411],
                  [0, 0, 0, -1, -5, -29, 117, 129],
                  [0, 0, 0, 0, 0, 17, -157, -422],
                  [0, 0, 0, 0, -2, 19, -33, 1324]], dtype=float)


def test_the_refinement_makes_an_ill_conditioned_cholesky_solve_exact(calls):
    """The free system of six points under the linear kernel on ILL_X (labels alternating,
    rhs = (1,...,1, 0)): its solution in exact rationals is the reference. One Schur solve
    is 1e-6 or more off it (relative); the POLISH_REFINE steps of iterative refinement bring
    the answer within 1e-9 -- still through the Cholesky factor (no LU)."""
    y = np.array([-1.0, 1.0, -1.0, 1.0, -1.0, 1.0])
    A = bordered((ILL_X @ ILL_X.T) * np.outer(y, y), y)
    r = np.append(np.ones(6), 0.0)
    ref = exact_solve(A, r)
    rel = lambda x: np.abs(x - ref).max() / np.abs(ref).max()   # noqa: E731
    assert POLISH_REFINE >= 1
    assert rel(_bordered_solver(A)(r)) > 1e-6
    assert rel(_solve_free_system(A, r)) < 1e-9
    assert calls == {"lu": 0, "lstsq": 0}


def test_an_h_without_cholesky_factor_but_a_nonsingular_system_is_solved_by_lu(calls):
    """Three free points of a linear kernel in 2-D, x = (1, 0), (0, 1), (1, 1), y = (1, 1,
    -1): K has rank 2 (x_3 = x_1 + x_2), so H = K * yy' has no Cholesky factor, but A is
    nonsingular (H's null vector (1, 1, 1) is not orthogonal to y). By hand, a_1 - a_3 + b =
    1, a_2 - a_3 + b = 1, -a_1 - a_2 + 2 a_3 - b = 1, a_1 + a_2 - a_3 = 0: a_1 = a_2, a_3 =
    2 a_1, b = 1 + a_1, a_1 = 2 -- (2, 2, 4; b = 3), by LU (least squares not needed)."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([1.0, 1.0, -1.0])
    A = bordered((X @ X.T) * np.outer(y, y), y)
    r = np.array([1.0, 1.0, 1.0, 0.0])
    with pytest.raises(np.linalg.LinAlgError):
        _bordered_solver(A)(r)
    np.testing.assert_allclose(_solve_free_system(A, r), [2.0, 2.0, 4.0, 3.0], rtol=1e-14)
    assert calls == {"lu": 1, "lstsq": 0}


def test_a_singular_consistent_system_gives_b_and_the_least_norm_alpha(calls):
    """Seven free points of a rank-2 kernel (more than rank + 1: A singular), rhs = A x for
    a random x: b is unique (a null vector of A has H a = 0, y'a = 0, so b = 0 in it) and is
    x's; alpha is the least-norm one, numpy's pinv's. And by hand: two copies of one point
    of class +1 (H = [[1, 1], [1, 1]], y = (1, 1)), rhs = (1, 1, 0): a_1 + a_2 + b = 1,
    a_1 + a_2 = 0, so b = 1 and the least-norm alpha is (0, 0). No warning on the way."""
    rng = np.random.default_rng(1)
    n = 7
    L = rng.normal(size=(n, 2))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    A = bordered((L @ L.T) * np.outer(y, y), y)
    x = rng.normal(size=n + 1)
    rhs = A @ x
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = _solve_free_system(A, rhs)
        assert sol is not None
        assert sol[-1] == pytest.approx(x[-1], abs=1e-12)
        np.testing.assert_allclose(sol, np.linalg.pinv(A) @ rhs, rtol=0, atol=1e-10)
        A2 = bordered(np.ones((2, 2)), np.ones(2))
        np.testing.assert_allclose(_solve_free_system(A2, np.array([1.0, 1.0, 0.0])),
                                   [0.0, 0.0, 1.0], rtol=0, atol=1e-15)
    assert calls["lstsq"] >= 2   # (least squares answered both)


@pytest.mark.parametrize("s", [1.0, 1e-3])
def test_an_inconsistent_system_is_refused_past_the_residual_test(s):
    """s [[1, 1, 1], [1, 1, 1], [1, 1, 0]] (two copies of one point): rows 1 and 2 ask for
    s(a_1 + a_2 + b) = s(1 + d) and = s. The least-squares answer (0, 0, 1 + d/2) misses
    each by s d / 2; the test is |A x - rhs| <= POLISH_SOLVED |A| max(|rhs|, 1) max(|x|, 1)
    with |A| = s, |rhs| = s (1 + d), |x| = 1 + d/2: 1e-12 s to within 1e-11 -- relative to
    A's size s, also when s < 1: d = 3e-12 (a miss of 1.5e-12 s) is refused, None; d = 1e-12
    (0.5e-12 s) is taken. No warning."""
    A = s * bordered(np.ones((2, 2)), np.ones(2))
    assert POLISH_SOLVED == 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _solve_free_system(A, s * np.array([1.0 + 3e-12, 1.0, 0.0])) is None
        sol = _solve_free_system(A, s * np.array([1.0 + 1e-12, 1.0, 0.0]))
    assert sol is not None
    np.testing.assert_allclose(sol, [0.0, 0.0, 1.0 + 0.5e-12], rtol=0, atol=1e-15)


def test_a_1_by_1_system_and_non_finite_data():
    """A 1 x 1 system (no border: LU) 2 a = 3 gives 1.5; 0 a = 1 has no solution (None),
    0 a = 0 gives 0. A right-hand side with NaN or inf has no finite solution: None, without
    an exception or a warning."""
    np.testing.assert_allclose(_solve_free_system(np.array([[2.0]]), np.array([3.0])), [1.5])
    assert _solve_free_system(np.array([[0.0]]), np.array([1.0])) is None
    np.testing.assert_array_equal(_solve_free_system(np.array([[0.0]]), np.array([0.0])),
                                  [0.0])
    A = np.array([[2.0, 1.0, 1.0], [1.0, 3.0, -1.0], [1.0, -1.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for bad in (np.nan, np.inf):
            assert _solve_free_system(A, np.array([bad, 1.0, 0.0])) is None
            assert _solve_free_system(A, np.array([1.0, 1.0, bad])) is None


# ---------------------------------------------------------------------------------------
# ratio


def test_ratio_divides_by_one_c_or_by_each_points_and_is_0_where_c_is_0():
    a = np.array([1.0, 3.0, 1.0, 2.0])
    np.testing.assert_array_equal(ratio(a, 4.0), [0.25, 0.75, 0.25, 0.5])
    np.testing.assert_array_equal(ratio(a, np.float64(0.5)), [2.0, 6.0, 2.0, 4.0])
    # C_i = (2, 0, 0.5, 4): 1/2, 0 (a point of weight 0), 1/0.5, 2/4 -- also with a C_i
    # below 1 and the 0 where memory last held something else
    C = np.array([2.0, 0.0, 0.5, 4.0])
    for _ in range(3):
        junk = np.full(4, 7.0)
        del junk
        np.testing.assert_array_equal(ratio(a, C), [0.5, 0.0, 2.0, 0.5])
    np.testing.assert_array_equal(ratio(a, [2.0, 0.0, 0.5, 4.0]), [0.5, 0.0, 2.0, 0.5])


# ---------------------------------------------------------------------------------------
# the kernel's diagonal and blocks, from K, a factor L, or X


_KX = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.5], [2.0, 2.0], [0.5, 1.5]])
_KY = np.array([1, -1, 1, -1, -1, 1])


@pytest.mark.parametrize("kind", ["rbf dense (K)", "poly factor (L)", "linear (X)",
                                  "precomputed (K)"])
def test_the_kernel_diagonal_and_blocks_are_sklearns(kind):
    """Whatever the build kept -- the Gram matrix (rbf, dense form; a precomputed one), a
    factor K = L L' (poly of degree 2, its exact features) or X alone (the linear kernel in
    the factor form) --, K_ii and K[F, F] are scikit-learn's kernel on the points, for an
    unsorted subset F."""
    from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

    import svm_models as sm

    if kind.startswith("rbf"):
        svm = sm.api.the_svm_block(sm.build("soft_l1_dual", _KX, _KY, C=1.0, kernel="rbf",
                                            gamma=0.5))._svm
        K = rbf_kernel(_KX, gamma=0.5)
        assert svm.K is not None and svm.L is None
    elif kind.startswith("poly"):
        svm = sm.api.the_svm_block(sm.build("soft_l1_dual", _KX, _KY, C=1.0, kernel="poly",
                                            degree=2, gamma=0.7, quad_form="factor"))._svm
        K = polynomial_kernel(_KX, degree=2, gamma=0.7, coef0=0.0)
        assert svm.K is None and svm.L is not None
    elif kind.startswith("linear"):
        svm = sm.api.the_svm_block(sm.build("soft_l1_dual", _KX, _KY, C=1.0,
                                            kernel="linear"))._svm
        K = linear_kernel(_KX)
        assert svm.K is None and svm.L is None
    else:
        K = rbf_kernel(_KX, gamma=0.3) + polynomial_kernel(_KX, degree=2, gamma=0.2)
        svm = sm.api.the_svm_block(sm.build("soft_l1_dual", K, _KY, C=1.0,
                                            kernel="precomputed"))._svm
        assert svm.K is not None
    F = np.array([4, 1, 3])
    np.testing.assert_allclose(_kernel_block(svm, F), K[np.ix_(F, F)], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(_kernel_diagonal(svm, F), np.diag(K)[F], rtol=1e-13)
    np.testing.assert_allclose(_kernel_diagonal(svm, np.arange(6)), np.diag(K), rtol=1e-13)


def test_the_kernel_pieces_read_k_before_l_before_x():
    """A stand-in svm holding K, L and X that disagree (K = 2 I, L = 3 I, X = 5 I): K wins;
    without K, L; without either, X."""
    eye = np.eye(3)
    F = np.array([2, 0])
    for K, L, want in ((2 * eye, 3 * eye, 2.0), (None, 3 * eye, 9.0), (None, None, 25.0)):
        svm = SimpleNamespace(K=K, L=L, data=SimpleNamespace(X=5 * eye))
        np.testing.assert_array_equal(_kernel_diagonal(svm, F), [want, want])
        np.testing.assert_array_equal(_kernel_block(svm, F), want * np.eye(2))



def test_the_rbf_diagonal_is_the_matrix_s_own():
    """The rbf kernel's diagonal read without its matrix (1) is the diagonal of the matrix
    the model holds, exactly -- evaluated or held from a caller -- and a low-rank factor's
    (no longer 1) is read from the factor."""
    import svm_models as sm

    X = np.random.default_rng(3).normal(size=(12, 3)) * 40.0
    y = np.where(X[:, 0] > 0, 1, -1)
    idx = np.arange(12)
    for kw in ({}, {"kernel_rank": 4}):
        svm = sm.api.the_svm_block(sm.build("soft_l1_dual", X, y, kernel="rbf", gamma=0.3,
                                            **kw))._svm
        want = (np.diagonal(np.asarray(svm.K)) if svm.K is not None
                else np.einsum("ij,ij->i", svm.L, svm.L))
        np.testing.assert_array_equal(_kernel_diagonal(svm, idx), want)
        assert (np.all(want == 1.0)) == ("kernel_rank" not in kw)


# ---------------------------------------------------------------------------------------
# block_objective, values_of, var_array, linear_primal_values, Context.dual

# the six-point toy (formulations/classic.md): the optimum alpha_1 = alpha_3 = 1/4 (0-based
# indices 1 and 3), w = (1/2, 1/2): the dual objective sum(alpha) - |w|^2 / 2 = 0.5 - 0.25
_TOY_X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype=float)
_TOY_Y = np.array([-1, -1, -1, 1, 1, 1])
_TOY_ALPHA = np.array([0.0, 0.25, 0.0, 0.25, 0.0, 0.0])


def _toy_dual(block=None):
    import svm_models as sm

    model = sm.build("soft_l1_dual", _TOY_X, _TOY_Y, C=1.0, quad_form="dense", block=block)
    blk = block if block is not None else sm.api.the_svm_block(model)
    svm = blk._svm
    for i, a in enumerate(_TOY_ALPHA):
        blk.alpha[list(blk.alpha.keys())[i]].set_value(a)
    return model, blk, svm


def test_block_objective_reads_the_solver_the_record_or_the_blocks_own_objective():
    """0.25 at the toy's optimum (worked above), however it is read: from the record (the
    model is the formulation), or from the block's objective (unverified). The solver's
    value, when it gave one, is taken as it is (1.25, not the record's 0.25)."""
    model, blk, svm = _toy_dual()
    assert block_objective(svm, blk, Context(objective=1.25)) == 1.25
    assert block_objective(svm, blk, Context(objective=1.25, verified=False)) == 1.25
    assert block_objective(svm, blk, Context()) == pytest.approx(0.25, rel=1e-15)
    assert block_objective(svm, blk, Context(verified=False)) == pytest.approx(0.25,
                                                                               rel=1e-15)


def test_block_objective_of_a_replaced_or_deactivated_objective():
    """The user deactivates the formulation's objective: it is still what is reported
    (0.25). The user adds one of their own inside the block -- sum(alpha) = 0.5, or in a
    sub-block 2 sum(alpha) = 1.0 --: that one is reported, the deactivated one not."""
    model, blk, svm = _toy_dual()
    ctx = Context(verified=False)
    blk.objective.deactivate()
    assert block_objective(svm, blk, ctx) == pytest.approx(0.25, rel=1e-15)
    blk.mine = pyo.Objective(expr=sum(blk.alpha.values()), sense=pyo.maximize)
    assert block_objective(svm, blk, ctx) == pytest.approx(0.5, rel=1e-15)
    blk.mine.deactivate()
    blk.sub = pyo.Block()
    blk.sub.obj = pyo.Objective(expr=2 * sum(blk.alpha.values()), sense=pyo.maximize)
    assert block_objective(svm, blk, ctx) == pytest.approx(1.0, rel=1e-15)


def test_block_objective_of_an_svm_inside_a_larger_model_is_its_own():
    """An SVM in a block of the user's model, whose one objective is the SVM's plus a term
    of the user's (x = 3: 0.25 - 9 = -8.75): the block's own objective is reported,
    0.25, never the model's."""
    m = pyo.ConcreteModel()
    m.b = pyo.Block()
    _, blk, svm = _toy_dual(block=m.b)
    m.x = pyo.Var(initialize=3.0)
    blk.objective.deactivate()
    m.obj = pyo.Objective(expr=blk.objective.expr - m.x ** 2, sense=pyo.maximize)
    assert pyo.value(m.obj) == pytest.approx(-8.75, rel=1e-15)
    assert block_objective(svm, blk, Context(verified=False)) == pytest.approx(0.25,
                                                                               rel=1e-15)


def test_values_of_and_var_array_read_nan_where_there_is_no_value():
    m = pyo.ConcreteModel()
    m.v = pyo.Var([3, 1, 2])
    m.v[3].set_value(1.5)
    m.v[2].set_value(-2)
    out = var_array(m.v)
    assert out.dtype == float
    np.testing.assert_array_equal(out, [1.5, np.nan, -2.0])
    out = values_of([m.v[2], m.v[1]])
    assert out.dtype == float
    np.testing.assert_array_equal(out, [-2.0, np.nan])


@pytest.mark.parametrize("weights", [None, [2.0, 0.5, 1.0, 0.0, 3.0, 1.0]])
def test_linear_primal_values_reads_c_per_point_w_and_b(weights):
    """l1_norm_primal on the toy at C = 0.5, w = (0.25, -1.5), b = 0.75 set by hand: X, y as
    built, C = 0.5, C_i = 0.5 weight_i (0.5 each without weights)."""
    import svm_models as sm

    kw = {} if weights is None else {"sample_weight": weights}
    model = sm.build("l1_norm_primal", _TOY_X, _TOY_Y, C=0.5, **kw)
    blk = sm.api.the_svm_block(model)
    svm = blk._svm
    for v, val in zip(blk.w.values(), (0.25, -1.5)):
        v.set_value(val)
    blk.b.set_value(0.75)
    X, y, C, C_i, w, b = linear_primal_values(svm, blk)
    np.testing.assert_array_equal(X, svm.data.X)
    np.testing.assert_array_equal(y, svm.data.y)
    assert C == 0.5 and isinstance(C, float)
    want = 0.5 * (np.ones(6) if weights is None else np.asarray(weights))
    np.testing.assert_array_equal(C_i, want)
    np.testing.assert_array_equal(w, [0.25, -1.5])
    assert b == 0.75 and isinstance(b, float)


def test_the_contexts_dual_is_divided_by_the_scale_and_none_without_one():
    c, other = "row", "other row"
    assert Context(duals={c: 2.0}, scale=0.5).dual(c) == 4.0
    assert Context(duals={c: 3.0}).dual(c) == 3.0
    assert Context(duals={c: 2.0}, scale=None).dual(c) is None
    assert Context(duals=None, scale=2.0).dual(c) is None
    assert Context(duals=None, scale=None).dual(c) is None
    assert Context(duals={c: 2.0}, scale=0.5).dual(other) is None


def test_duplicated_free_points_share_their_alpha_whatever_the_factor_says():
    """Two copies of one free point make the free block singular; a Cholesky factor of it can
    still "succeed" on round-off (a last pivot of 3e-8 against 5.6: the poly-kernel case
    below) and split the pair's alpha anyhow (-3.3 and 32 where the box is [0, 20.07]). The
    factor is refused as singular and least squares gives the least-norm alpha: the copies
    get equal shares. End to end (found by the regularization path's tests): libsvm's answer
    on those data at C = 20.07 is polished and certified -- it was refused, certificate
    3.7e-6 -- with the same objective as PIQP's and the two copies' alphas equal."""
    from sklearn.datasets import make_classification

    import svm_models as sm

    X, y = make_classification(34, 3, n_informative=2, n_redundant=0, random_state=3)
    X, y = np.vstack([X, X[:6]]), np.append(y, y[:6])
    kw = dict(C=20.07, kernel="poly", degree=2, gamma=0.5, coef0=1.0)
    lib = sm.fit(X, y, solver="libsvm", tol=1e-10, **kw)
    ref = sm.fit(X, y, solver="piqp", **kw)
    assert lib.polished and lib.classifier_certificate["worst"] < 1e-10
    assert lib.objective == pytest.approx(ref.objective, rel=1e-10)
    assert 0 < lib.alpha[3] < 20.07 and lib.alpha[3] == pytest.approx(lib.alpha[37], rel=1e-9)
    # the free system itself: the seven free points of that answer
    F = np.flatnonzero((lib.alpha > 1e-9) & (lib.alpha < 20.07 - 1e-9))
    assert {3, 37} <= set(F)
    svm = sm.build("soft_l1_dual", X, y, **kw)._svm
    yF = svm.data.y[F]
    A = bordered(_kernel_block(svm, F) * np.outer(yF, yF), yF)
    with pytest.raises(np.linalg.LinAlgError):
        _bordered_solver(A)(np.ones(F.size + 1))
    rhs = A @ np.append(lib.alpha[F], 0.3)
    sol = _solve_free_system(A, rhs)
    np.testing.assert_allclose(sol, np.linalg.pinv(A) @ rhs, rtol=0, atol=1e-8)
    i, j = np.flatnonzero(F == 3)[0], np.flatnonzero(F == 37)[0]
    assert sol[i] == pytest.approx(sol[j], rel=1e-9)

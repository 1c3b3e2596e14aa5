"""The post-processing rules that decide answers, on values worked out by hand (formulations/
classic.md, Post-processing): which alphas are zero or at C (``cut_alpha``) and ``b`` from the
KKT conditions (``bias_from_kkt``) for each family. Each case below was checked on paper; the
comments give the arithmetic. Written so that a changed comparison, bound or midpoint in
svm_models/postprocess.py fails here (issue 31, ``make mutate``)."""

from __future__ import annotations

import numpy as np
import pytest

from svm_models.model.forms import HARD, MARGINS, SOFT_L1, SOFT_L2
from svm_models.postprocess import bias_from_kkt, cut_alpha, dual_kkt_residual
from svm_models.tolerances import per_point_threshold


def test_cut_alpha_puts_entries_within_thr_of_a_bound_on_it():
    a = np.array([1e-9, 1e-3, 0.5, 0.999, 0.9995, 1.0, 2e-3])
    # thr = 1e-3, box 1: <= 1e-3 -> 0 (1e-3 itself included); >= 1 - 1e-3 -> 1 (0.999 included)
    np.testing.assert_array_equal(cut_alpha(a, 1e-3, 1.0), [0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 2e-3])
    # no box (hard margin, 2-norm): nothing is moved up
    np.testing.assert_array_equal(cut_alpha(a, 1e-3), [0.0, 0.0, 0.5, 0.999, 0.9995, 1.0, 2e-3])
    # the input is not changed
    assert a[0] == 1e-9


def test_b_of_the_2_norm_averages_over_the_support_vectors():
    y = np.array([1.0, -1.0, 1.0])
    alpha = np.array([0.5, 0.25, 1e-9])
    f = np.array([0.2, -0.1, 5.0])
    # mean(y (1 - alpha/C) - f) over alpha > thr: (0.5 - 0.2 + (-0.75 + 0.1)) / 2 = -0.175
    assert bias_from_kkt(SOFT_L2, alpha, y, f, 1.0, 1e-6) == pytest.approx(-0.175, abs=1e-15)
    assert bias_from_kkt(SOFT_L2, np.zeros(3), y, f, 1.0, 1e-6) == 0.0


def test_b_of_the_hard_margin_is_the_midpoint_of_its_interval():
    y = np.array([1.0, 1.0, -1.0, -1.0])
    f = np.array([0.3, 2.0, -0.5, -3.0])
    alpha = np.array([1.0, 0.0, 1.0, 0.0])
    # lo = max(1 - 0.3, 1 - 2) = 0.7, hi = min(-1 + 0.5, -1 + 3) = -0.5: (0.7 - 0.5) / 2 = 0.1
    assert bias_from_kkt(HARD, alpha, y, f, None, 1e-6) == pytest.approx(0.1, abs=1e-15)
    # one class only: the average of y - f over the support vectors (1 - 0.3)
    assert bias_from_kkt(HARD, alpha[:2], y[:2], f[:2], None, 1e-6) == pytest.approx(0.7)
    # ... or the other class only (-1 + 0.5)
    assert bias_from_kkt(HARD, alpha[2:], y[2:], f[2:], None, 1e-6) == pytest.approx(-0.5)
    # where the midpoint and the average over the support vectors differ (an inexact alpha):
    # y = (+1, +1, -1), f = (0.5, 0.2, -0.4), support vectors 0 and 2: lo = max(0.5, 0.8) =
    # 0.8, hi = -1 + 0.4 = -0.6, midpoint 0.1 -- the average (0.5 - 0.6) / 2 = -0.05 is not it
    y3, f3 = np.array([1.0, 1.0, -1.0]), np.array([0.5, 0.2, -0.4])
    assert bias_from_kkt(HARD, np.array([1.0, 0.0, 1.0]), y3, f3, None, 1e-6) == \
        pytest.approx(0.1, abs=1e-15)


def test_b_of_the_1_norm_averages_over_free_vectors():
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0])
    alpha = np.array([0.5, 1.0, 0.0, 0.5, 0.2])
    f = np.array([0.6, 0.0, -2.0, -0.8, -0.5])
    # free: 0, 3 and 4 (thr < alpha < C - thr): (0.4 - 0.2 + 1.5) / 3 (the mean, not the median)
    assert bias_from_kkt(SOFT_L1, alpha, y, f, 1.0, 1e-6) == pytest.approx(1.7 / 3, abs=1e-15)
    # within thr of C counts as at C: point 0 then is not free, b from 3 and 4: 0.65
    assert bias_from_kkt(SOFT_L1, np.array([1.0 - 1e-7, 1.0, 0.0, 0.5, 0.2]), y, f, 1.0,
                         1e-6) == pytest.approx(0.65, abs=1e-15)


def test_b_of_the_1_norm_without_free_vectors_is_the_midpoint_libsvm_takes():
    y = np.array([1.0, 1.0, -1.0, -1.0])
    alpha = np.array([1.0, 0.0, 1.0, 0.0])       # every alpha at 0 or C = 1
    f = np.array([0.5, 1.1, -0.2, -1.3])
    # r = 1 - y f = [0.5, -0.1, 0.8, -0.3]; y_i b >= r_i at 0, y_i b <= r_i at C:
    # b >= -0.1 (point 1), b >= -0.8 (point 2), b <= 0.3 (point 3), b <= 0.5 (point 0):
    # [-0.1, 0.3], midpoint 0.1
    b = bias_from_kkt(SOFT_L1, alpha, y, f, 1.0, 1e-6)
    assert b == pytest.approx(0.1, abs=1e-15)
    margins = y * (f + b)
    assert np.all(margins[alpha == 0] >= 1) and np.all(margins[alpha == 1] <= 1)
    # one side open (every alpha 0, one class on each side bounding b from one side only)
    y2, f2 = np.array([1.0, 1.0]), np.array([0.2, 0.9])
    # b >= 1 - 0.2 = 0.8 and b >= 0.1: no upper end, b = 0.8
    assert bias_from_kkt(SOFT_L1, np.zeros(2), y2, f2, 1.0, 1e-6) == pytest.approx(0.8)
    # at C only (y = -1): y b <= r -> b >= -r; r = 1 + f = [1.2, 1.9] -> b >= -1.2, b = -1.2
    assert bias_from_kkt(SOFT_L1, np.ones(2), -y2, f2, 1.0, 1e-6) == pytest.approx(-1.2)


# ---------------------------------------------------------------------------------------
# C per point (sample_weight, class_weight; issue 26): a point of weight 0 constrains nothing


def test_b_without_free_vectors_ignores_a_point_of_weight_zero():
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0])
    alpha = np.array([1.0, 0.0, 1.0, 0.0, 0.0])
    f = np.array([0.5, 1.1, -0.2, -1.3, -5.0])
    C = np.array([1.0, 1.0, 1.0, 1.0, 0.0])       # point 4: weight 0
    # as above, [-0.1, 0.3] -> 0.1; point 4 (r = 6, alpha 0 = its C) would demand b >= 6
    assert bias_from_kkt(SOFT_L1, alpha, y, f, C, 1e-6) == pytest.approx(0.1, abs=1e-15)


def test_the_kkt_residual_of_a_point_of_weight_zero_is_zero():
    y = np.array([1.0, -1.0, 1.0])
    alpha = np.array([0.5, 0.5, 0.0])
    f = np.array([0.0, -2.0, -3.0])
    C = np.array([1.0, 1.0, 0.0])
    # b = 1: free points on their margins, 1 (0 + 1) and -1 (-2 + 1) (residual 0); point 2
    # has margin -3 + 1 = -2 but weight 0
    assert dual_kkt_residual(SOFT_L1, alpha, y, f, 1.0, C, 1e-9) == 0.0
    # with weight 1 the same point violates its margin by 3 (alpha 0 needs margin >= 1)
    assert dual_kkt_residual(SOFT_L1, alpha, y, f, 1.0, np.ones(3), 1e-9) == pytest.approx(3.0)
    # 2-norm (no upper bound): free points need y(f + b) + alpha/C = 1, so f = [-0.5, -1.5]
    f2 = np.array([-0.5, -1.5, -3.0])
    assert dual_kkt_residual(SOFT_L2, alpha, y, f2, 1.0, C, 1e-9) == pytest.approx(0.0, abs=1e-15)
    assert dual_kkt_residual(SOFT_L2, alpha, y, f2, 1.0, np.ones(3), 1e-9) == pytest.approx(3.0)
    # a margin of level rho (the nu-SVM, box 1/l = 1/3 here, rho = 0.5): free points on
    # y(f + b) = rho, residuals in units of rho; point 2 at 0 with margin 0.2 falls short by
    # (0.5 - 0.2) / 0.5 = 0.6
    from svm_models.formulations.nu import MARGIN as NU

    a3 = np.array([0.2, 0.2, 0.0])
    f3 = np.array([0.5, -0.5, 0.2])
    assert dual_kkt_residual(NU, a3, y, f3, 0.0, 1.0 / 3, 1e-9, 0.5) == pytest.approx(0.6)
    f3[2] = 0.5   # on its margin: no violation
    assert dual_kkt_residual(NU, a3, y, f3, 0.0, 1.0 / 3, 1e-9, 0.5) == pytest.approx(0.0)


def test_a_margin_is_what_its_formulation_declares():
    """The rules ask a :class:`Margin`: the 1-norm's box ``alpha <= C``, the 2-norm's ridge
    ``K + I/C``, the hard margin neither, the nu-SVM a box and a level of its own; each
    registered formulation that the readers read declares its margin (no lookup by name)."""
    from svm_models.formulations import get
    from svm_models.formulations.nu import MARGIN as NU

    assert [(m.box, m.ridge, m.hard, m.level) for m in (HARD, SOFT_L1, SOFT_L2, NU)] == [
        (False, False, True, False), (True, False, False, False), (False, True, False, False),
        (True, False, False, True)]
    assert {name: get(name).margin for name in
            ("hard_dual", "soft_l1_primal", "soft_l2_dual", "nu_dual", "nu_primal")} == {
        "hard_dual": HARD, "soft_l1_primal": SOFT_L1, "soft_l2_dual": SOFT_L2,
        "nu_dual": NU, "nu_primal": NU}
    assert set(MARGINS.values()) == {HARD, SOFT_L1, SOFT_L2}


def test_the_support_threshold_of_a_small_box_is_a_fraction_of_it():
    # thr 1e-9 for alphas of scale 1e-3 (1e-6 relative); a box of 1e-4: 1e-6 * 1e-4 = 1e-10
    thr = per_point_threshold(1e-9, np.array([1000.0, 1e-4, 0.0]), 1e-3)
    np.testing.assert_allclose(thr, [1e-9, 1e-10, 0.0])
    assert per_point_threshold(1e-9, 2.0, 1e-3) == 1e-9   # one C: the threshold itself
    # so an alpha at its small box is at the bound, a smaller one free, not both at once
    cut = cut_alpha(np.array([5e-4, 1e-4, 0.5e-4]), thr, np.array([1000.0, 1e-4, 1e-4]))
    np.testing.assert_array_equal(cut, [5e-4, 1e-4, 0.5e-4])


def test_the_polish_solves_its_bordered_system_through_cholesky_as_lu_does():
    """The free system [[H, y], [y', 0]] of the polish: the Cholesky/Schur solver gives LU's
    solution (H positive definite), and refuses a singular H (then LU and least squares)."""
    from scipy.linalg import lu_factor, lu_solve

    from svm_models.postprocess import _bordered_solver, _solve_free_system

    rng = np.random.default_rng(7)
    n = 40
    M = rng.normal(size=(n, n))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    H = (M @ M.T + 0.1 * np.eye(n)) * np.outer(y, y)
    A = np.zeros((n + 1, n + 1))
    A[:-1, :-1], A[:-1, -1], A[-1, :-1] = H, y, y
    r = rng.normal(size=n + 1)
    ref = lu_solve(lu_factor(A), r)
    got = _bordered_solver(A)(r)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
    assert np.abs(A @ got - r).max() <= 1e-9 * np.abs(r).max()
    np.testing.assert_allclose(_solve_free_system(A, r), ref, rtol=1e-9, atol=1e-12)
    # rank 3 < n: no Cholesky factor; the system (consistent) is still solved, b unique
    L = rng.normal(size=(n, 3))
    A[:-1, :-1] = (L @ L.T) * np.outer(y, y)
    with pytest.raises(np.linalg.LinAlgError):
        _bordered_solver(A)(r)
    x = rng.normal(size=n + 1)
    rhs = A @ x
    sol = _solve_free_system(A, rhs)
    assert sol is not None and np.abs(A @ sol - rhs).max() <= 1e-8 * np.abs(rhs).max()


def test_b_minimising_the_1_norm_primal_on_hand_worked_values():
    """phi(b) = sum_i C_i max(0, 1 - y_i (f_i + b)), y = (+1, +1, -1), f = (0, 0.5, 0): the
    breakpoints y_i - f_i are 1, 0.5, -1. C = 1: phi = 2.5 - b on [-1, 0.5], 2 on [0.5, 1]
    (flat), 1 + ... beyond: every b in [0.5, 1] is optimal, the midpoint 0.75 is returned.
    C = (1, 1, 3): phi = 1.5 - 2b below -1, 4.5 + b on [-1, 0.5]: the kink b = -1. A point of
    weight 0 (C = (0, 1, 1)) counts for nothing: phi = 1.5 on [-1, 0.5], midpoint -0.25."""
    from svm_models.postprocess import bias_minimising_primal

    y = np.array([1.0, 1.0, -1.0])
    f = np.array([0.0, 0.5, 0.0])
    assert bias_minimising_primal(y, f, 1.0) == pytest.approx(0.75, abs=1e-15)
    assert bias_minimising_primal(y, f, np.array([1.0, 1.0, 3.0])) == pytest.approx(-1.0, abs=1e-15)
    assert bias_minimising_primal(y, f, np.array([0.0, 1.0, 1.0])) == pytest.approx(-0.25, abs=1e-15)
    # ... even when its breakpoint lies inside the flat piece (f_0 = 1: breakpoint 0 in
    # [-1, 0.5]; counted, it would split the piece and give -0.5)
    f0 = np.array([1.0, 0.5, 0.0])
    assert bias_minimising_primal(y, f0, np.array([0.0, 1.0, 1.0])) == pytest.approx(-0.25, abs=1e-15)
    # no point of positive weight: nothing depends on b, 0 is returned
    assert bias_minimising_primal(y, f, np.zeros(3)) == 0.0
    # the mirror image, where the negatives weigh more: y = (-1, -1, +1), f = (0, -0.5, 0),
    # breakpoints -1, -0.5, 1; phi = 2 on [-1, -0.5] (flat), 2.5 + b on [-0.5, 1]: -0.75
    ym, fm = np.array([-1.0, -1.0, 1.0]), np.array([0.0, -0.5, 0.0])
    assert bias_minimising_primal(ym, fm, 1.0) == pytest.approx(-0.75, abs=1e-15)


def test_b_minimising_the_1_norm_primal_against_a_scan():
    """On 200 random problems (weights, some zero) the b returned is no worse than the best of
    every breakpoint and a grid of 20,001 values (a convex piecewise-linear function: its
    minimum is at a breakpoint)."""
    from svm_models.postprocess import bias_minimising_primal

    rng = np.random.default_rng(0)
    for _ in range(200):
        l = int(rng.integers(2, 30))
        y = rng.choice([-1.0, 1.0], l)
        f = rng.normal(size=l) * rng.uniform(0.1, 3)
        C = rng.uniform(0, 2, l) * (rng.random(l) < 0.9)

        def phi(b):   # (b: an array of values)
            return np.sum(C * np.maximum(0.0, 1.0 - y * (f + np.asarray(b)[:, None])), axis=1)

        b = bias_minimising_primal(y, f, C)
        best = phi(np.concatenate([y - f, np.linspace(-10, 10, 20001)])).min()
        assert phi([b])[0] <= best + 1e-12 * max(1.0, best)


def test_balanced_scales_down_the_class_with_the_larger_sum():
    """y = (+1, +1, -1), alpha = (0.5, 0.25, 0.5): the positives sum to 0.75 > 0.5, so they
    are scaled by 0.5/0.75 = 2/3 -> (1/3, 1/6, 0.5), y'alpha = 0; the other way round the
    negatives are (y = (+1, -1, -1), alpha = (0.5, 0.5, 0.25) -> (0.5, 1/3, 1/6)); a
    balanced alpha is returned unchanged (a copy)."""
    from svm_models.postprocess import balanced

    y = np.array([1.0, 1.0, -1.0])
    np.testing.assert_allclose(balanced(np.array([0.5, 0.25, 0.5]), y), [1 / 3, 1 / 6, 0.5],
                               rtol=1e-15)
    np.testing.assert_allclose(balanced(np.array([0.25, 0.25, 1.0]), y), [0.25, 0.25, 0.5],
                               rtol=1e-15)
    # two negatives summing to 0.75 > 0.5: both scaled by 2/3
    np.testing.assert_allclose(balanced(np.array([0.5, 0.5, 0.25]), np.array([1.0, -1.0, -1.0])),
                               [0.5, 1 / 3, 1 / 6], rtol=1e-15)
    a = np.array([0.25, 0.25, 0.5])
    out = balanced(a, y)
    np.testing.assert_array_equal(out, a)
    assert out is not a


# ---------------------------------------------------------------------------------------
# The certificate of exactly the classifier returned (postprocess.margin_certificate), on
# the six-point toy (formulations/classic.md): x = (-2,-1), (-1,-1), (-1,-2) labelled -1 and
# (1,1), (1,2), (2,1) labelled +1; the optimum alpha_1 = alpha_3 = 1/4, w = (1/2, 1/2), b = 0.

_TOY_X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype=float)
_TOY_Y = np.array([-1, -1, -1, 1, 1, 1])


def _toy_svm(formulation, **params):
    import svm_models as sm

    model = sm.build(formulation, _TOY_X, _TOY_Y, **params)
    svm = sm.api.the_svm_block(model)._svm
    return svm, svm.facts.margin


def _alpha(a1, a3):
    a = np.zeros(6)
    a[1], a[3] = a1, a3
    return a


def test_the_certificate_of_a_poor_classifier_is_its_gap():
    """alpha_1 = alpha_3 = 0.05, b = 0, C = 0.1: w = (0.1, 0.1), |w|^2 = 0.02; y f = 0.2 at
    points 1 and 3 (slack 0.8 each), 0.3 at the other four (slack 0.7 each): the slacks sum to
    4.4, primal = 0.01 + 0.1 * 4.4 = 0.45, dual = 0.1 - 0.01 = 0.09, gap = 0.36 / 0.45 = 0.8
    (relative to the larger of the two, both below 1), balance 0, worst 0.8. A shortfall
    within round-off is forgiven, never added: no slack above its exact value."""
    from svm_models.postprocess import margin_certificate

    svm, margin = _toy_svm("soft_l1_dual", C=0.1)
    cert = margin_certificate(svm, margin, _alpha(0.05, 0.05), 0.0, 0.1)
    assert cert["primal"] == pytest.approx(0.45, rel=1e-12)
    assert cert["dual"] == pytest.approx(0.09, rel=1e-12)
    assert cert["gap"] == pytest.approx(0.8, rel=1e-12)
    assert cert["balance"] == 0.0
    assert cert["worst"] == pytest.approx(0.8, rel=1e-12)
    exact = np.array([0.7, 0.8, 0.7, 0.8, 0.7, 0.7])
    np.testing.assert_allclose(cert["slacks"], exact, rtol=0, atol=1e-13)
    assert np.all(cert["slacks"] <= exact)


def test_the_certificate_of_an_unbalanced_alpha():
    """alpha_3 = 0.25 alone (y'alpha = 0.25 = sum alpha: balance 1), b = 0.5, C = 0.01:
    w = (0.25, 0.25), |w|^2 = 0.125; y f = 0, 0.25, 0.25 at the negatives (slacks 1, 0.75,
    0.75), >= 1 at the positives: primal = 0.0625 + 0.01 * 2.5 = 0.0875, dual = 0.25 - 0.0625
    = 0.1875 -- above the primal, as only an infeasible alpha can be: gap = -0.1 / 0.1875.
    worst = max(|gap|, balance) = 1."""
    from svm_models.postprocess import margin_certificate

    svm, margin = _toy_svm("soft_l1_dual", C=0.01)
    cert = margin_certificate(svm, margin, _alpha(0.0, 0.25), 0.5, 0.01)
    assert cert["primal"] == pytest.approx(0.0875, rel=1e-12)
    assert cert["dual"] == pytest.approx(0.1875, rel=1e-12)
    assert cert["gap"] == pytest.approx(-0.1 / 0.1875, rel=1e-12)
    assert cert["balance"] == pytest.approx(1.0, rel=1e-15)
    assert cert["worst"] == pytest.approx(1.0, rel=1e-15)


def test_the_certificate_of_a_hard_margin_counts_its_shortfall():
    """The optimal alpha with b = 0.5: the dual's w = (1/2, 1/2), so primal = dual = 0.25
    (gap 0), but point 1 has y f = 0.5: a shortfall of 0.5 of its margin, the worst."""
    from svm_models.postprocess import margin_certificate

    svm, margin = _toy_svm("hard_dual")
    cert = margin_certificate(svm, margin, _alpha(0.25, 0.25), 0.5, None)
    assert cert["gap"] == pytest.approx(0.0, abs=1e-15)
    assert cert["violation"] == pytest.approx(0.5, rel=1e-12)
    assert cert["worst"] == pytest.approx(0.5, rel=1e-12)


def test_the_certificate_of_a_linear_primals_own_w():
    """The optimal alpha with w = (0.55, 0.45) of a primal (not X'(y alpha) = (1/2, 1/2)): every
    margin still >= 1, primal = 0.505 / 2 = 0.2525, dual 0.25, gap 0.0025 / 0.2525; w is off
    stationarity by |(0.05, -0.05)| / |(0.55, 0.45)| = 0.0995, the worst."""
    from svm_models.postprocess import margin_certificate

    svm, margin = _toy_svm("soft_l1_dual", C=1.0)
    w = np.array([0.55, 0.45])
    cert = margin_certificate(svm, margin, _alpha(0.25, 0.25), 0.0, 1.0, w)
    assert cert["primal"] == pytest.approx(0.2525, rel=1e-12)
    assert cert["gap"] == pytest.approx(0.0025 / 0.2525, rel=1e-12)
    station = np.hypot(0.05, 0.05) / np.hypot(0.55, 0.45)
    assert cert["stationarity"] == pytest.approx(station, rel=1e-12)
    assert cert["worst"] == pytest.approx(station, rel=1e-12)


def test_the_certificate_reads_a_linear_kernel_through_x():
    """Ten points 1e6 from the origin (spread 1), a balanced alpha: alpha'K alpha through K
    (entries 1e12) loses everything below 1e-4; through X (the factor, or K v as X(X'v)) it is
    exact to the spread's round-off. The dual objective must be the latter."""
    from svm_models.postprocess import margin_certificate

    import svm_models as sm

    rng = np.random.default_rng(3)
    X = rng.normal(size=(10, 2)) + 1e6
    y = np.array([-1, 1] * 5)
    with pytest.warns(sm.BadScaleWarning):
        model = sm.build("soft_l1_dual", X, y, C=1.0, quad_form="dense")
    svm = sm.api.the_svm_block(model)._svm
    a = np.array([0.5, 0.25, 0.25, 0.5, 0.125, 0.125, 0.375, 0.375, 0.25, 0.25])
    assert float(svm.data.y @ a) == 0.0
    w = (X - X.mean(axis=0)).T @ (svm.data.y * a)     # y'a = 0: the offset cancels exactly
    cert = margin_certificate(svm, svm.facts.margin, a, 0.0, 1.0)
    assert cert["dual"] == pytest.approx(a.sum() - 0.5 * w @ w, rel=1e-9)


def test_the_edges_of_b_from_the_kkt_conditions():
    """The branches no optimum of two classes reaches, each worked by hand. Hard margin, one
    class and no support vector: 0. 1-norm without a free vector, the interval of b open on
    one side: its finite end -- a positive at zero (r = 1 - 0.5) gives b >= 0.5, a negative at
    zero (r = 1 - 0.5) gives b <= -0.5; no point that counts (every weight 0): 0."""
    from svm_models.postprocess import live

    one = np.array([1.0])
    assert bias_from_kkt(HARD, np.zeros(1), one, np.array([0.5]), None, 1e-6) == 0.0
    assert bias_from_kkt(SOFT_L1, np.zeros(1), one, np.array([0.5]), 1.0, 1e-6) == 0.5
    assert bias_from_kkt(SOFT_L1, np.zeros(1), -one, np.array([-0.5]), 1.0, 1e-6) == -0.5
    assert bias_from_kkt(SOFT_L1, np.zeros(2), np.array([1.0, -1.0]), np.array([0.5, -0.5]),
                         np.zeros(2), 1e-6) == 0.0
    # live: every point for one number C or the hard margin (None), else C_i > 0
    np.testing.assert_array_equal(live(None, 3), [True, True, True])
    np.testing.assert_array_equal(live(2.0, 3), [True, True, True])
    np.testing.assert_array_equal(live(np.array([0.0, 1.0, 2.0]), 3), [False, True, True])


@pytest.mark.parametrize("kernel", ["precomputed", "linear"])
def test_the_round_off_allowance_is_the_products_own(kernel):
    """A margin 1e-9 short is a slack, not round-off, when the products that make y_i f(x_i)
    are of order one: the toy scaled so that alpha is 2.5e5 (data x 1e-3, the kernel matrix
    given, read entry by entry) or 2.5e-7 (data x 1e3, the linear kernel through its factor
    X), b = -1e-9 so point 3 falls short by 1e-9, C = 1e9: its slack is 1e-9 and costs 1 in
    the primal. (The allowance computed from K's diagonal floored at 1, or from |x_i| / |w|,
    was 2e-9 and forgave it.)"""
    import warnings

    import svm_models as sm
    from svm_models.postprocess import margin_certificate

    scale = 1e-3 if kernel == "precomputed" else 1e3
    X = _TOY_X * scale
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.BadScaleWarning)
        data = X @ X.T if kernel == "precomputed" else X
        model = sm.build("soft_l1_dual", data, _TOY_Y, C=1e9, kernel=kernel)
    svm = sm.api.the_svm_block(model)._svm
    a = _alpha(0.25, 0.25) / scale**2
    cert = margin_certificate(svm, svm.facts.margin, a, -1e-9, 1e9)
    assert cert["slacks"][3] == pytest.approx(1e-9, rel=1e-4)
    assert np.count_nonzero(cert["slacks"]) == 1
    assert cert["primal"] - cert["dual"] == pytest.approx(1.0, rel=1e-4)


def test_the_certificate_of_nothing_and_of_nan():
    """alpha = 0 and b = 0 on the hard margin: primal = dual = 0 (gap 0, not 0/0) and every
    margin short by 1: worst 1. A NaN b: nothing is certified (worst infinite). ``live``
    returns one mask entry per point for one number C."""
    from svm_models.postprocess import margin_certificate, live

    svm, margin = _toy_svm("hard_dual")
    cert = margin_certificate(svm, margin, np.zeros(6), 0.0, None)
    assert cert["gap"] == 0.0 and cert["violation"] == pytest.approx(1.0, rel=1e-12)
    assert cert["worst"] == pytest.approx(1.0, rel=1e-12)
    svm, margin = _toy_svm("soft_l1_dual", C=1.0)
    assert margin_certificate(svm, margin, _alpha(0.25, 0.25), np.nan, 1.0)["worst"] == np.inf
    assert live(2.0, 3).shape == (3,)


def test_the_round_off_allowance_of_data_far_from_the_origin():
    """The toy moved by (1e4, 1e4): w = (1/2, 1/2) as before, b = -1e4, |x_i| ~ 1.4e4. The
    round-off of x_i.w through the factor X is eps |x_i| |w| ~ 1e-12; through K's diagonal it
    would be eps |x_i| sum_j alpha_j |x_j| ~ 4e-7 (the offset does not cancel there). With
    b 1e-9 below its optimum, point 3 falls short by 1e-9: a slack, counted."""
    import warnings

    import svm_models as sm
    from svm_models.postprocess import margin_certificate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.BadScaleWarning)
        model = sm.build("soft_l1_dual", _TOY_X + 1e4, _TOY_Y, C=1e3)
    svm = sm.api.the_svm_block(model)._svm
    cert = margin_certificate(svm, svm.facts.margin, _alpha(0.25, 0.25), -1e4 - 1e-9, 1e3)
    # (less the allowance for b's own round-off, 8 eps sqrt(6) |b| ~ 9e-11)
    assert 0.8e-9 <= cert["slacks"][3] <= 1e-9
    assert np.count_nonzero(cert["slacks"]) == 1


def _line_svm(C):
    """Six points on a line, two of them on the wrong side: +1 at 1, 2 and -0.5, -1 at -1, -2
    and 0.5 (the linear kernel)."""
    import svm_models as sm

    X = np.array([[1.0], [-1.0], [-0.5], [0.5], [2.0], [-2.0]])
    y = np.array([1, -1, 1, -1, 1, -1])
    model = sm.build("soft_l1_dual", X, y, C=C, kernel="linear")
    return sm.api.the_svm_block(model)._svm


def test_polish_linear_primal_solves_w_and_b_on_the_margin_rows():
    """Worked by hand: with 1 and -1 on their margins, w + b = 1 and w - b = 1 give w = 1,
    b = 0; -0.5 and 0.5 have margin -0.5 (held at C), 2 and -2 margin 2 (alpha 0).
    Stationarity w = a_1 + a_2 - C/2 - C/2 = 1 and balance a_1 - a_2 + C - C = 0 give
    a_1 = a_2 = (1 + C)/2, within [0, C] for C >= 1: the optimum at every such C. At
    C = 1e12 the active set read from a point 3e-7 off gives it back exact, alpha with it."""
    from svm_models.postprocess import margin_certificate, margin_sets, polish_linear_primal

    C = 1e12
    svm = _line_svm(C)
    y = svm.data.y
    sign = y[0]   # (+1 when the builder keeps the labels' order)
    w_off, b_off = np.array([sign * (1.0 + 3e-7)]), sign * -2e-7
    on, held = margin_sets(svm, SOFT_L1, w_off, b_off, C, 1e-5)
    np.testing.assert_array_equal(on, [True, True, False, False, False, False])
    np.testing.assert_array_equal(held, [False, False, True, True, False, False])
    alpha, w, b = polish_linear_primal(svm, SOFT_L1, on, held, C)
    assert w[0] == pytest.approx(sign * 1.0, abs=1e-15)
    assert b == pytest.approx(0.0, abs=1e-15)
    a = (1.0 + C) / 2.0
    np.testing.assert_allclose(alpha, [a, a, C, C, 0.0, 0.0], rtol=1e-15, atol=0)
    cert = margin_certificate(svm, SOFT_L1, alpha, b, C, w)
    assert cert["worst"] <= 1e-13
    # the point handed in is worse: its slacks at -0.5 and 0.5 are 1.5 + 3.5e-7 and
    # 1.5 - 5e-8, i.e. C * 3e-7 = 3e5 more in a primal objective of 3 C: a gap of 1e-7
    off = margin_certificate(svm, SOFT_L1, alpha, b_off, C, w_off)
    assert off["gap"] == pytest.approx(1e-7, rel=1e-4)
    # the margins within a tolerance of 0: no point on them, nothing to solve on
    on0, held0 = margin_sets(svm, SOFT_L1, w_off, b_off, C, 0.0)
    assert not on0.any() and held0.sum() == 2   # (1 + 1e-7 and 1 + 5e-7: beyond, alpha 0)
    assert polish_linear_primal(svm, SOFT_L1, on0, held0, C) is None
    # one margin row only (+1 at 1 on its margin, -1 at -1 beyond it): rank 1 < d + 1 = 2,
    # the margin rows do not determine (w, b); with stationarity and balance they do
    # (linear_kkt_point): held -0.5 and 0.5 at C, 1 free, y'alpha = a_1 + C - C = 0 gives
    # a_1 = 0, w = a_1 - C/2 - C/2 = -C, b = 1 - w -- that set's KKT point, not the optimum
    on1, held1 = margin_sets(svm, SOFT_L1, np.array([sign * 1.5]), sign * -0.5, C, 1e-5)
    assert on1.sum() == 1
    a1, w1, b1 = polish_linear_primal(svm, SOFT_L1, on1, held1, C)
    np.testing.assert_allclose(a1, [0.0, 0.0, C, C, 0.0, 0.0], rtol=1e-15, atol=0)
    assert w1[0] == pytest.approx(sign * -C, rel=1e-15)
    assert b1 == pytest.approx(sign * (1.0 + C), rel=1e-15)
    assert margin_certificate(svm, SOFT_L1, a1, b1, C, w1)["worst"] > 0.1
    # a held point is never free, whatever ``on`` says (alpha's set: held wins)
    alpha2, w2, b2 = polish_linear_primal(svm, SOFT_L1, on | held, held, C)
    np.testing.assert_allclose(alpha2, alpha, rtol=1e-15, atol=0)
    # the hard margin holds nobody at C: the same rows, alpha from stationarity alone
    # (w = a_1 + a_2 + a_3 (-0.5) ... with -0.5 and 0.5 free: not this problem's optimum, but
    # the margin rows still give w = 1, b = 0)
    out = polish_linear_primal(svm, HARD, on, np.zeros(6, bool), None)
    assert out is not None and out[1][0] == pytest.approx(sign * 1.0, abs=1e-15)


def _line_svm_plus(C, x7, y7, weight7=1.0):
    """The six points on a line and a seventh, ``x7`` labelled ``y7`` with sample weight
    ``weight7`` (the others 1)."""
    import svm_models as sm

    X = np.array([[1.0], [-1.0], [-0.5], [0.5], [2.0], [-2.0], [x7]])
    y = np.array([1, -1, 1, -1, 1, -1, y7])
    kw = {} if weight7 == 1.0 else {"sample_weight": [1.0] * 6 + [weight7]}
    model = sm.build("soft_l1_dual", X, y, C=C, kernel="linear", **kw)
    return sm.api.the_svm_block(model)._svm


def test_margin_sets_on_exact_margins_at_a_tie_and_for_the_hard_margin():
    """The six points on a line at the optimum w = 1, b = 0: margins 1, 1, -0.5, -0.5, 2, 2,
    every one exact in floating point (with w = 2, b = 1: 3, 1, 0, -2, 5, 3). At tolerance 0
    the two on their margins are on them; at tolerance 1.5 every |m - 1| (0, 0, 1.5, 1.5, 1,
    1) is within it -- the two at -0.5 are on it and not held (held is m < 1 - 1.5 = -0.5,
    strictly: the sets never overlap). The hard margin holds nobody at C, even below the
    margin: held is False at every point (a boolean per point, for ``~held``), and the polish
    of those sets solves the margin rows, alpha from stationarity a_1 + a_2 = 1 and balance
    a_1 - a_2 = 0 alone: 1/2, 1/2."""
    from svm_models.postprocess import margin_sets, polish_linear_primal

    C = 1e12
    svm = _line_svm(C)
    sign = svm.data.y[0]
    w, b = np.array([sign * 1.0]), 0.0
    on, held = margin_sets(svm, SOFT_L1, w, b, C, 0.0)
    np.testing.assert_array_equal(on, [True, True, False, False, False, False])
    np.testing.assert_array_equal(held, [False, False, True, True, False, False])
    on, held = margin_sets(svm, SOFT_L1, w, b, C, 1.5)
    np.testing.assert_array_equal(on, [True] * 6)
    np.testing.assert_array_equal(held, [False] * 6)
    # with b: w = 2, b = 1 gives the margins y(2x + 1) = 3, 1, 0, -2, 5, 3
    on, held = margin_sets(svm, SOFT_L1, 2.0 * w, sign * 1.0, C, 1e-5)
    np.testing.assert_array_equal(on, [False, True, False, False, False, False])
    np.testing.assert_array_equal(held, [False, False, True, True, False, False])
    on, held = margin_sets(svm, HARD, w, b, None, 1e-5)
    np.testing.assert_array_equal(on, [True, True, False, False, False, False])
    assert held.shape == (6,) and held.dtype == bool and not held.any()
    alpha, w_h, b_h = polish_linear_primal(svm, HARD, on, held, None)
    assert w_h[0] == pytest.approx(sign * 1.0, abs=1e-15) and b_h == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(alpha, [0.5, 0.5, 0.0, 0.0, 0.0, 0.0], rtol=1e-14, atol=1e-15)


def test_polish_linear_primal_solves_on_live_rows_of_full_rank_only():
    """A seventh point +1 at 0.9 of sample weight 0 has margin 0.9 at w = 1, b = 0: within
    the tolerance 0.2 it is read as on its margin, but a point of weight 0 constrains nothing
    and is no margin row -- w = 1, b = 0 exactly from the rows of 1 and -1 (with its row,
    least squares would give w = 1.0236, b = 0.0262), alpha as for the six with 0 for it.
    A seventh point +1 at 1, a copy of the first: the two on the margin give the same row
    (1, 1), of rank 1 < d + 1 = 2: they do not determine (w, b), None."""
    from svm_models.postprocess import margin_sets, polish_linear_primal

    C = 1e12
    svm = _line_svm_plus(C, 0.9, 1, weight7=0.0)
    sign = svm.data.y[0]
    Cp = svm.point_C(C)
    np.testing.assert_array_equal(Cp, [C] * 6 + [0.0])
    on, held = margin_sets(svm, SOFT_L1, np.array([sign * 1.0]), 0.0, Cp, 0.2)
    np.testing.assert_array_equal(on, [True, True, False, False, False, False, True])
    np.testing.assert_array_equal(held, [False, False, True, True, False, False, False])
    alpha, w, b = polish_linear_primal(svm, SOFT_L1, on, held, Cp)
    assert w[0] == pytest.approx(sign * 1.0, abs=1e-15)
    assert b == pytest.approx(0.0, abs=1e-15)
    a = (1.0 + C) / 2.0
    np.testing.assert_allclose(alpha, [a, a, C, C, 0.0, 0.0, 0.0], rtol=1e-15, atol=0)
    svm = _line_svm_plus(C, 1.0, 1)
    on = np.array([True, False, False, False, False, False, True])
    held = np.array([False, False, True, True, False, False, False])
    assert polish_linear_primal(svm, SOFT_L1, on, held, C) is None


def test_stationarity_is_measured_less_the_round_off_of_the_expansion():
    """The six points on a line at C = 1e12 (see above): alpha a little off its exact value
    (by 1 in alphas of 5e11, the round-off of such numbers is 6e-5) leaves X'(y alpha) 1e-4
    from w = 1 -- within the round-off bound eps sqrt(6) sum |x_i alpha_i| = 3e-3 of the sum,
    so stationarity counts 0; 0.1 off w (beyond it) is counted, less that bound."""
    from svm_models.postprocess import margin_certificate, expansion_roundoff

    C = 1e12
    svm = _line_svm(C)
    y, X = svm.data.y, svm.data.X
    sign = y[0]
    a = (1.0 + C) / 2.0
    alpha = np.array([a + 1e-4, a, C, C, 0.0, 0.0])
    bound = expansion_roundoff(X, y * alpha)
    # 8 eps sqrt(6) (a + a + C/2 + C/2) = 8 * 2.22e-16 * 2.449 * 2e12
    assert bound[0] == pytest.approx(8 * 2.220446049250313e-16 * np.sqrt(6) * (2 * a + C + 1e-4),
                                     rel=1e-12)
    w = np.array([sign * 1.0])
    assert margin_certificate(svm, SOFT_L1, alpha, 0.0, C, w)["stationarity"] == 0.0
    far = np.array([sign * 1.1])
    st = margin_certificate(svm, SOFT_L1, alpha, 0.0, C, far)["stationarity"]
    assert st == pytest.approx((0.1 - 1e-4 - bound[0]) / 1.1, rel=1e-3)


# ---------------------------------------------------------------------------------------
# The dual KKT residual (postprocess.dual_kkt_residual), point by point on margins chosen by
# hand: f = y m - b makes y (f + b) = m, so each residual below is read off m.


def _kkt(margin, alpha, y, m, b=0.5, C=1.0, thr=1e-3):
    y, m, alpha = (np.atleast_1d(np.asarray(v, dtype=float)) for v in (y, m, alpha))
    return dual_kkt_residual(margin, alpha, y, y * m - b, b, C, thr)


def test_the_kkt_residual_at_zero_free_and_at_c_on_hand_worked_margins():
    """1-norm, C = 1, thr = 1e-3: at alpha = 0 (or within thr of it, alpha = thr itself) the
    margin must be >= 1 (0.7: residual 0.3; 1.5: 0), free it must be 1 (1.2 and 0.9: 0.2,
    0.1), at C (or C - thr itself) <= 1 (1.4: 0.4; 0.5: 0). Several points: the largest."""
    S = SOFT_L1
    cases = [(0.0, 1, 0.7, 0.3), (0.0, -1, 1.5, 0.0), (1e-3, 1, 1.5, 0.0), (0.5, -1, 1.2, 0.2),
             (0.5, 1, 0.9, 0.1), (1.0, 1, 1.4, 0.4), (1.0, -1, 0.5, 0.0), (1.0 - 1e-3, -1, 0.5, 0.0)]
    for alpha, y, m, res in cases:
        assert _kkt(S, alpha, y, m) == pytest.approx(res, abs=1e-12), (alpha, y, m)
    alpha, y, m, res = (np.array(c) for c in zip(*cases))
    assert _kkt(S, alpha, y, m) == pytest.approx(0.4, abs=1e-12)
    assert _kkt(S, alpha[:5], y[:5], m[:5]) == pytest.approx(0.3, abs=1e-12)


def test_the_kkt_residual_of_the_2_norm_and_the_hard_margin():
    """2-norm, C = 2: the margin of a free point is y (f + b) + alpha / C (0.8 + 1/2 = 1.3:
    residual 0.3) and alpha has no upper bound (alpha = 4 > C with margin 0.5: residual 0.5,
    not "at C"); hard margin (C = inf, as the callers pass it): alpha = 5 is free (margins
    0.5 and 1.5: 0.5 each), alpha = 0 needs a margin >= 1 (0.2: 0.8; 1.5: 0)."""
    assert _kkt(SOFT_L2, 1.0, 1, 0.8, C=2.0) == pytest.approx(0.3, abs=1e-12)
    assert _kkt(SOFT_L2, 1.0, -1, 0.8, C=np.array([2.0])) == pytest.approx(0.3, abs=1e-12)
    assert _kkt(SOFT_L2, 4.0, -1, 0.5 - 2.0, C=2.0) == pytest.approx(0.5, abs=1e-12)
    for alpha, m, res in [(5.0, 0.5, 0.5), (5.0, 1.5, 0.5), (0.0, 0.2, 0.8), (0.0, 1.5, 0.0)]:
        assert _kkt(HARD, alpha, -1, m, C=np.inf) == pytest.approx(res, abs=1e-12), (alpha, m)


# ---------------------------------------------------------------------------------------
# alpha recovered from a primal without multipliers (postprocess.recover_alpha): the KKT
# conditions solved as bounded least squares, on systems small enough to solve by hand.


def test_alpha_recovered_on_the_toy_and_bounded_by_c():
    """The six-point toy's optimum w = (1/2, 1/2): points 1 and 3 on their margins (y_i x_i
    = (1, 1) both), so a_1 + a_3 = 1/2 and a_3 - a_1 = 0 (balance): 1/4 each. With C = 0.2
    (one number or one per point) the same w asks for more than C: the bounded least squares
    puts both at 0.2."""
    from svm_models.postprocess import recover_alpha

    active = np.isin(np.arange(6), [1, 3])
    w, xi = np.array([0.5, 0.5]), np.zeros(6)
    want = np.where(active, 0.25, 0.0)
    got = recover_alpha(_TOY_Y.astype(float), SOFT_L1, _TOY_X.T, w, active, xi, 1.0, 1e-9)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
    got = recover_alpha(_TOY_Y.astype(float), HARD, _TOY_X.T, w, active, xi, None, 1e-9)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
    for C in (0.2, np.full(6, 0.2)):
        got = recover_alpha(_TOY_Y.astype(float), SOFT_L1, _TOY_X.T, w, active, xi, C, 1e-9)
        np.testing.assert_allclose(got, np.where(active, 0.2, 0.0), rtol=0, atol=1e-14)


def test_alpha_recovered_with_points_at_their_own_c():
    """1-D, C per point. x = (-1, 1, 0.5), y = (-1, +1, -1), C_i = (1, 1, 0.4), w = 1, b = 0:
    point 2 has margin -0.5 (slack 1.5), so alpha_2 = C_2 = 0.4; the margin points 0 and 1
    then need a_0 + a_1 - 0.5 * 0.4 = w = 1 and -a_0 + a_1 - 0.4 = 0: a = (0.4, 0.8, 0.4).
    One unknown only: x = (-1, 1), y = (-1, +1), C_i = (0.3, 1), w = 0.6: point 0 at C (slack
    0.8), a_1 = 0.3 by balance. None unknown: both at C."""
    from svm_models.postprocess import recover_alpha

    got = recover_alpha(np.array([-1.0, 1.0, -1.0]), SOFT_L1, np.array([[-1.0, 1.0, 0.5]]),
                        np.array([1.0]), np.ones(3, dtype=bool), np.array([0.0, 0.0, 1.5]),
                        np.array([1.0, 1.0, 0.4]), 1e-9)
    np.testing.assert_allclose(got, [0.4, 0.8, 0.4], rtol=0, atol=1e-14)
    y2, x2 = np.array([-1.0, 1.0]), np.array([[-1.0, 1.0]])
    got = recover_alpha(y2, SOFT_L1, x2, np.array([0.6]), np.ones(2, dtype=bool),
                        np.array([0.8, 0.0]), np.array([0.3, 1.0]), 1e-9)
    np.testing.assert_allclose(got, [0.3, 0.3], rtol=0, atol=1e-14)
    got = recover_alpha(y2, SOFT_L1, x2, np.array([0.6]), np.ones(2, dtype=bool),
                        np.array([0.8, 0.2]), 0.3, 1e-9)
    np.testing.assert_array_equal(got, [0.3, 0.3])


def test_alpha_of_the_2_norm_is_c_times_the_slack():
    """2-norm: alpha_i = C xi_i (stationarity in xi), a slack of round-off below 0 read as 0."""
    from svm_models.postprocess import recover_alpha

    xi = np.array([0.5, -1e-12, 0.25])
    got = recover_alpha(np.array([1.0, -1.0, 1.0]), SOFT_L2, np.zeros((1, 3)), np.zeros(1),
                        np.ones(3, dtype=bool), xi, 2.0, 1e-9)
    np.testing.assert_array_equal(got, [1.0, 0.0, 0.5])


def _three_points_a_feature_of_1e8():
    """Random problem 21 of ``benchmarks/random_problems.py`` cut down to three points and two
    features (0.01 beside 1e8), C = 0.0035, linear kernel -- and its optimum by hand. Point 1
    (+1) is held at C (the balance leaves the two -1 points ``alpha_2 + alpha_3 = C``), so
    ``w = u + t v`` with ``u = C (x_1 - x_3)``, ``v = x_3 - x_2``, ``t = alpha_2``: the least
    ``|w|^2`` over t is ``(u x v)^2 / |v|^2`` (a 2-D cross product, no cancellation), at
    ``t = -u.v / |v|^2`` = 0.715 C, inside [0, C]; the optimum is ``2C - |w|^2 / 2``."""
    X = np.array([[-0.0022, 1.2e7], [0.0123, -4.7e7], [-0.0041, 1.6e8]])
    y = np.array([1, -1, -1])
    C = 0.0035
    u, v = C * (X[0] - X[2]), X[2] - X[1]
    t = -(u @ v) / (v @ v)
    assert 0.0 < t < C
    ww = (u[0] * v[1] - u[1] * v[0]) ** 2 / (v @ v)
    return X, y, C, 2.0 * C - 0.5 * ww, ww


@pytest.mark.parametrize("solver", ["clarabel", "ipm", "ipopt", "gurobi"])
def test_linear_kkt_point_answers_a_feature_of_1e8_beside_one_of_0_01(solver):
    """The three points above, the dual (dense form, as built for three points) on each
    backend. Every backend's alpha missed the stationarity ``w = X'(y alpha)`` of the 1e8
    feature (its terms 1e6, w's component 1e-15) and the answer was refused on all of them;
    the free point's margin row alone does not determine (w, b) (one row, d + 1 = 3
    unknowns). Solved with the stationarity and the balance (``linear_kkt_point``) the
    classifier is certified, at the optimum worked out by hand."""
    import warnings

    import svm_models as sm
    from conftest import require

    require(solver)
    X, y, C, best, ww = _three_points_a_feature_of_1e8()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.BadScaleWarning)
        sol = sm.solve(sm.build("soft_l1_dual", X, y, C=C, kernel="linear"), solver,
                       time_limit=30)   # (not the default 7.5 s: a loaded machine)
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(best, rel=1e-12)
    assert float(sol.w @ sol.w) == pytest.approx(ww, rel=1e-6)
    assert sol.classifier_certificate["worst"] <= 1e-12


def test_the_round_off_allowance_grows_with_the_points_and_the_alphas():
    """A dense rbf kernel (K_ii = 1): the allowance on y_i f(x_i) is ``CERT_ROUNDOFF sqrt(l)
    (sum|alpha| + |b| + 1)``. With sum alpha = 100 on 30 points, a shortfall of
    ``CERT_ROUNDOFF (sum|alpha| + |b| + 1)`` -- inside it by sqrt(30) -- is not a slack, and
    one three times the allowance is (a slack of 5e-13 per unit of C). (Dividing by sqrt(l), or by sum|alpha|, forgave
    neither.)"""
    import svm_models as sm
    from svm_models.postprocess import margin_certificate
    from svm_models.tolerances import CERT_ROUNDOFF

    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    y = np.where(np.arange(30) % 2 == 0, 1.0, -1.0)
    svm = sm.api.the_svm_block(sm.build("soft_l1_dual", X, y, C=50.0, kernel="rbf",
                                        gamma=0.5, quad_form="dense"))._svm
    assert svm.K is not None and svm.gram_factor() is None   # (the dense branch)
    alpha = np.zeros(30)
    alpha[:4] = 25.0                       # y'alpha = 0, sum alpha = 100
    f = svm.K @ (y * alpha)
    k = 5                                  # a point of class -1 off the support
    b0 = y[k] - f[k]                       # y_k (f_k + b0) = 1
    for short, counted in ((1.0, False), (3.0 * np.sqrt(30), True)):
        s = short * CERT_ROUNDOFF * (100.0 + abs(b0) + 1.0)
        b = b0 - y[k] * s                  # y_k (f_k + b) = 1 - s
        cert = margin_certificate(svm, svm.facts.margin, alpha, b, 50.0)
        assert (cert["slacks"][k] > 0) == counted, (short, cert["slacks"][k])


def test_the_levels_of_a_margin_with_a_box_per_point():
    """The generic reader on a level margin with one box per point (``C_i``): a point of box
    0 belongs to no class's interval. Class +1 free at 0.5: r+ = mean(2, 4) = 3; class -1:
    two points at their top (g = 1, 3) and a point of box 0 at g = 7, which would close the
    interval at [3, 7] (r- = 5): it does not, r- = 3 -- rho = 3, b = 0."""
    from svm_models.formulations.nu import MARGIN
    from svm_models.postprocess import levels

    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    g = np.array([2.0, 4.0, 9.0, 1.0, 3.0, 7.0])
    C = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.0])
    alpha = np.array([0.5, 0.5, 0.0, 1.0, 1.0, 0.0])
    assert levels(MARGIN, alpha, y, y * g, C, 0.1) == pytest.approx((0.0, 3.0), abs=1e-15)


def test_the_worst_of_a_level_margin_is_its_total_shortfall():
    """alpha = 0 at the level 0 of a nu-SVM: primal = dual = 0 (gap 0), balanced, no
    slack -- but ``e'alpha >= total`` is short by all of it: worst 1."""
    from svm_models.formulations.nu import MARGIN
    from svm_models.postprocess import margin_certificate

    svm, _ = _toy_svm("soft_l1_dual", C=1.0)
    cert = margin_certificate(svm, MARGIN, np.zeros(6), 0.0, 1.0 / 6, rho=0.0, total=0.5)
    assert cert["gap"] == 0.0 and cert["balance"] == 0.0 and not cert["slacks"].any()
    assert cert["total"] == 1.0 and cert["worst"] == 1.0


def test_alpha_scale_is_the_largest_alpha_never_floored_at_one():
    """The support rule's scale: the largest |alpha| (NaN skipped), never 1 for alphas of
    1e-4 (data scaled by 100-400), the smallest positive float for none or all NaN."""
    from svm_models.tolerances import alpha_scale

    tiny = np.finfo(float).tiny
    assert alpha_scale(np.array([1e-4, -3e-4, np.nan])) == 3e-4
    assert alpha_scale([2, 5, 1]) == 5.0
    assert alpha_scale(np.array([])) == tiny
    assert alpha_scale(np.array([np.nan, np.nan])) == tiny
    assert alpha_scale(np.zeros(3)) == tiny

"""Exact transformations of a standard form before a backend sees it
(svm_models/model/scaling.py), against an independent optimum."""

import importlib.util
import os

import numpy as np
import pytest

import svm_models as sm

from conftest import require


def _random_problem(seed: int) -> dict:
    """Problem ``seed`` of ``benchmarks/random_problems.py`` (issue 51's random valid duals)."""
    path = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "random_problems.py")
    spec = importlib.util.spec_from_file_location("random_problems", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.problem(seed)


def test_centred_kernel_block_answers_highs_where_its_active_set_stalled():
    """Random problem 63: 57 points, rbf (its gamma="scale" set by a feature of 4e3 beside a
    constant one), C = 0.0128. HiGHS's active set reaches its iteration limit on the dual
    scaled every way (auto, off, diagonal); the kernel block centred (``P G P``, ``P = I -
    yy'/l``: ``H K H``, the same objective on ``y'a = 0``) and scaled diagonally it is
    solved, at libsvm's optimum (tol 1e-10) and Clarabel's. The centred block is ``G``
    centred -- its rows, signed, sum to zero -- and agrees with ``G`` on ``y'a = 0``.
    (With an iteration limit of the user's: HiGHS's own limit is followed by a re-solve with
    the objective multiplied, which answers the first attempt -- see the next test.)"""
    import warnings

    require("highs")
    p = _random_problem(63)
    X, y, C = p["X"], p["y"], p["C"]
    assert p["kernel"] == "rbf" and "const" in p["traits"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.BadScaleWarning)
        model = sm.build("soft_l1_dual", X, y, C=C, kernel="rbf")
    sol = sm.solve(model, "highs", iter_limit=10_000)
    assert sol.status == "optimal"
    assert sol.retry_certificate[-1].startswith("highs scaling=centred")
    for ref_solver, kw in (("libsvm", {"tol": 1e-10}), ("clarabel", {})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sm.BadScaleWarning)
            ref = sm.fit(X, y, C=C, kernel="rbf", solver=ref_solver, **kw)
        assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
    from svm_models.model.scaling import centred
    from svm_models.model.standard_form import assemble

    st = sm.api.the_svm_block(model)._svm.record.structure
    sf = assemble(sm.api.the_svm_block(model)._svm.record, materialise=True)
    M, Mc = sf.quad[0].matrix, centred(sf, st).quad[0].matrix
    np.testing.assert_allclose(Mc @ st.y, 0.0, atol=1e-13)
    a = np.random.default_rng(0).uniform(size=len(st.y))
    a[st.y > 0] *= a[st.y < 0].sum() / a[st.y > 0].sum()   # y'a = 0
    assert a @ Mc @ a == pytest.approx(a @ M @ a, rel=1e-12)
    # (a factor-form dual has no dense block to centre)
    model_f = sm.build("soft_l1_dual", X, y, C=C, kernel="linear", quad_form="factor")
    rec = sm.api.the_svm_block(model_f)._svm.record
    assert centred(assemble(rec, materialise=True), rec.structure) is None


def test_highs_cycling_at_the_optimum_is_answered_with_its_objective_multiplied():
    """Random problem 171: 97 points, rbf (its gamma set by a feature of 4e5), C = 0.002.
    HiGHS's active set reaches the optimum's objective within 100 iterations and then pivots
    from vertex to vertex of it until its iteration limit -- scaled, unscaled, diagonally,
    centred, in the factor form alike. Its thresholds are absolute (curvature below 1e-7 is
    taken as none): with the objective multiplied by 2^8 (exact: the same minimiser, the
    duals divided by it) it ends optimal on the first attempt, at libsvm's optimum (tol
    1e-10) and Clarabel's, certified."""
    import warnings

    require("highs")
    p = _random_problem(171)
    X, y, C = p["X"], p["y"], p["C"]
    assert p["kernel"] == "rbf" and p["traits"] == ["bad4e+05"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.BadScaleWarning)
        sol = sm.fit(X, y, C=C, kernel="rbf", solver="highs", time_limit=30)
        refs = [sm.fit(X, y, C=C, kernel="rbf", solver="libsvm", tol=1e-10),
                sm.fit(X, y, C=C, kernel="rbf", solver=require("clarabel"))]
    assert sol.status == "optimal" and sol.solver == "highs" and sol.path == "fast"
    assert sol.retry is None and sol.retry_certificate is None   # (the first attempt)
    assert sol.fallback is None
    assert sol.classifier_certificate["certified"]
    for ref in refs:
        assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
        np.testing.assert_allclose(sol.alpha, ref.alpha, atol=1e-6 * C)

"""Bad input: each kind of wrong input gives its own clear error, naming the problem.

Every error is a subclass of :class:`svm_models.SVMError` (and of the built-in exception a
Python user expects: ValueError for bad input, RuntimeError for a failed solve).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import QP_BACKENDS, TOY_X, TOY_Y, blobs, require, separable

import svm_models as sm


def _fit(X, y, **kw):
    kw.setdefault("solver", "highs")
    require(kw["solver"])
    return sm.fit(X, y, **kw)


def test_every_public_error_is_an_svm_error():
    names = ["DataError", "ParameterError", "SolverError", "SolverUnavailableError",
             "CapabilityError", "LicenseLimitError", "SolveFailedError", "InfeasibleError",
             "LocallyInfeasibleError", "NotSeparableError"]
    for n in names:
        assert issubclass(getattr(sm, n), sm.SVMError), n
    assert issubclass(sm.DataError, ValueError)
    assert issubclass(sm.ParameterError, ValueError)
    assert issubclass(sm.SolverError, RuntimeError)
    assert issubclass(sm.NotSeparableError, sm.InfeasibleError)
    # a local solver's verdict is no proof: not an InfeasibleError, its own status
    assert issubclass(sm.LocallyInfeasibleError, sm.SolveFailedError)
    assert not issubclass(sm.LocallyInfeasibleError, sm.InfeasibleError)
    from pyomo.contrib.solver.common.results import TerminationCondition as TC

    assert sm.Status.locally_infeasible.termination_condition is TC.locallyInfeasible
    assert issubclass(sm.FallbackWarning, sm.SVMWarning)


# ---------------------------------------------------------------------------------------
# The data


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_X(bad):
    X = TOY_X.copy()
    X[2, 1] = bad
    with pytest.raises(sm.DataError, match=r"NaN or infinite.*row 2, column 1"):
        _fit(X, TOY_Y)


@pytest.mark.parametrize("shape", [(6,), (6, 2, 1)], ids=["1-D", "3-D"])
def test_X_must_be_two_dimensional(shape):
    X = np.arange(np.prod(shape), dtype=float).reshape(shape)
    with pytest.raises(sm.DataError, match=r"2-dimensional.*shape \(" + ", ".join(map(str, shape))):
        _fit(X, TOY_Y)


def test_X_not_numeric():
    X = np.array([["a", "b"]] * 6)
    with pytest.raises(sm.DataError, match="numeric"):
        _fit(X, TOY_Y)


def test_length_mismatch():
    with pytest.raises(sm.DataError, match="6 rows but y has 5 labels"):
        _fit(TOY_X, TOY_Y[:5])


def test_single_class():
    with pytest.raises(sm.DataError, match="single class"):
        _fit(TOY_X, np.ones(6))


def test_three_classes():
    with pytest.raises(sm.DataError, match="exactly two classes; found 3"):
        _fit(TOY_X, [0, 1, 2, 0, 1, 2])


def test_nan_labels():
    with pytest.raises(sm.DataError, match="y contains NaN"):
        _fit(TOY_X, [0.0, 1.0, np.nan, 0.0, 1.0, 1.0])


@pytest.mark.parametrize("labels", [("cat", "dog"), (0, 1), (1, 2), (-3.5, 7.0), (True, False)],
                         ids=["strings", "0/1", "1/2", "floats", "bools"])
@pytest.mark.parametrize("formulation", ["soft_l1_dual", "hard_primal"])
def test_any_two_labels_round_trip_through_predict(labels, formulation):
    neg, pos = labels
    y = np.array([neg] * 3 + [pos] * 3, dtype=object if isinstance(neg, str) else None)
    kw = {"C": 1.0} if formulation.startswith("soft") else {}
    sol = _fit(TOY_X, y, formulation=formulation, **kw)
    # classes are sorted; classes_[1] is the +1 class (as scikit-learn)
    assert list(sol.classes_) == sorted(labels)
    np.testing.assert_array_equal(sol.predict(TOY_X), y)
    # encoding is by sorted label: when the "negative" label sorts last, w flips sign
    flip = 1.0 if sorted(labels)[1] == pos else -1.0
    np.testing.assert_allclose(sol.w, flip * np.array([0.5, 0.5]), atol=1e-6)
    new = np.array([[3.0, 3.0], [-3.0, -3.0]])
    np.testing.assert_array_equal(sol.predict(new), [pos, neg])


# ---------------------------------------------------------------------------------------
# Hyperparameters


@pytest.mark.parametrize("C,msg", [(0, "finite positive"), (-1.0, "finite positive"),
                                   (float("nan"), "finite positive"),
                                   ("abc", "positive number"), (None, "positive number")])
def test_bad_C(C, msg):
    with pytest.raises(sm.ParameterError, match=rf"C must be a {msg}"):
        _fit(TOY_X, TOY_Y, C=C)


def test_bad_C_on_a_built_model_path():
    X, y = blobs(0, l=10)
    with pytest.raises(sm.ParameterError, match="C must be"):
        sm.fit_path(X, y, [1.0, -2.0], solver=require("highs"))
    with pytest.raises(sm.ParameterError, match="at least one"):
        sm.fit_path(X, y, [], solver="highs")


def test_unknown_kernel():
    with pytest.raises(sm.ParameterError, match="unknown kernel 'sigmoid'.*rbf"):
        _fit(TOY_X, TOY_Y, kernel="sigmoid")


@pytest.mark.parametrize("gamma", [0, -1.0, float("nan")])
def test_bad_gamma(gamma):
    with pytest.raises(sm.ParameterError, match="gamma must be a positive number"):
        _fit(TOY_X, TOY_Y, kernel="rbf", gamma=gamma)


def test_bad_gamma_string():
    with pytest.raises(sm.ParameterError, match="gamma must be.*'scale' or 'auto'"):
        _fit(TOY_X, TOY_Y, kernel="rbf", gamma="abc")


@pytest.mark.parametrize("degree", [0, 2.5])
def test_bad_degree(degree):
    with pytest.raises(sm.ParameterError, match="degree must be a positive integer"):
        _fit(TOY_X, TOY_Y, kernel="poly", degree=degree)


def test_precomputed_kernel_not_square():
    with pytest.raises(sm.DataError, match=r"square.*shape \(6, 2\)"):
        _fit(TOY_X, TOY_Y, kernel="precomputed")


def test_precomputed_kernel_not_psd():
    K = -(TOY_X @ TOY_X.T)
    with pytest.raises(sm.DataError, match="not positive semidefinite"):
        _fit(K, TOY_Y, kernel="precomputed")


def test_precomputed_kernel_not_symmetric():
    K = TOY_X @ TOY_X.T
    K[0, 1] += 1.0
    with pytest.raises(sm.DataError, match="not symmetric"):
        _fit(K, TOY_Y, kernel="precomputed")


def test_precomputed_kernel_with_round_off_is_accepted():
    """A Gram matrix symmetric and PSD up to round-off is not refused (no false alarm)."""
    rng = np.random.default_rng(0)
    K = TOY_X @ TOY_X.T
    K = K + 1e-13 * rng.normal(size=K.shape)
    sol = _fit(K, TOY_Y, kernel="precomputed", C=1.0)
    np.testing.assert_allclose(sol.alpha, [0, 0.25, 0, 0.25, 0, 0], atol=1e-6)


def test_unknown_formulation():
    with pytest.raises(sm.ParameterError, match="unknown formulation 'soft_l3_dual'.*soft_l1_dual"):
        _fit(TOY_X, TOY_Y, formulation="soft_l3_dual")


def test_unknown_parameter():
    with pytest.raises(sm.ParameterError, match=r"takes no parameter\(s\) \['foo'\]"):
        sm.build("soft_l1_dual", TOY_X, TOY_Y, foo=1)
    with pytest.raises(sm.ParameterError, match=r"\['foo'\]"):
        _fit(TOY_X, TOY_Y, foo=1)


def test_C_for_a_hard_margin_is_an_unknown_parameter():
    with pytest.raises(sm.ParameterError, match=r"hard_dual takes no parameter\(s\) \['C'\]"):
        sm.build("hard_dual", TOY_X, TOY_Y, C=1.0)


def test_bad_quad_form():
    with pytest.raises(sm.ParameterError, match="quad_form must be"):
        sm.build("soft_l1_dual", TOY_X, TOY_Y, quad_form="sparse")


def test_bad_solver_options():
    m = sm.build("soft_l1_dual", TOY_X, TOY_Y, C=1.0)
    with pytest.raises(sm.ParameterError, match="unknown solver option"):
        sm.solve(m, "highs", tolerance=1e-6)
    with pytest.raises(sm.ParameterError, match="path must be"):
        sm.solve(m, "highs", path="quick")
    with pytest.raises(sm.ParameterError, match="tol must be a positive number"):
        sm.solve(m, "highs", tol=-1.0)


def test_fast_path_refused_when_impossible():
    require("highs")
    m = sm.build("soft_l1_dual", TOY_X, TOY_Y, C=1.0, kernel="rbf", kernel_rank=3)
    m.del_component("balance")   # (the record no longer proves the model)
    with pytest.raises(sm.SolverError, match="fast path is not possible"):
        sm.solve(m, "highs", path="fast")


def test_solve_a_model_without_svm_block():
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.o = pyo.Objective(expr=m.x**2)
    with pytest.raises(sm.ParameterError, match="no block built by svm_models.build"):
        sm.solve(m, "highs")


def test_extract_before_solving():
    m = sm.build("soft_l1_primal", TOY_X, TOY_Y, C=1.0)
    for v in m.w.values():
        v.value = None
    with pytest.raises(sm.SVMError, match="no value: solve the model"):
        sm.extract(m)


# ---------------------------------------------------------------------------------------
# Hard margin on inseparable data

# (-1, -1) labelled +1 lies inside the triangle of the negatives (-2,-1), (-1,-2), (1,1)
INSEP_Y = np.array([-1, 1, -1, -1, 1, 1])


@pytest.mark.parametrize("path", ["auto", "general"])
@pytest.mark.parametrize("form", ["primal", "dual"])
@pytest.mark.parametrize("backend", QP_BACKENDS)
def test_hard_margin_on_inseparable_data(backend, form, path):
    require(backend)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(sm.NotSeparableError, match="not separable") as err:
            sm.fit(TOY_X, INSEP_Y, formulation=f"hard_{form}", solver=backend, path=path,
                   time_limit=30)
    assert "soft" in str(err.value)  # says what to do instead
    # the typed error is the whole message: no solver's warning leaks (ipm's singular LU)
    assert not [w for w in seen if "Singular matrix" in str(w.message)], [
        str(w.message) for w in seen]


@pytest.mark.parametrize("backend", ["highs", "clarabel", "gurobi"])
def test_hard_margin_inseparable_in_the_kernel_space(backend):
    """Overlapping blobs with a linear kernel: not separable. The same data with an rbf
    kernel (a PD Gram matrix) is separable, and the hard margin solves."""
    require(backend)
    X, y = blobs(3, l=30)
    for form in ("primal", "dual"):
        with pytest.raises(sm.NotSeparableError):
            sm.fit(X, y, formulation=f"hard_{form}", solver=backend, time_limit=30)
    sol = sm.fit(X, y, formulation="hard_dual", solver=backend, kernel="rbf", gamma=2.0)
    assert np.all(sol.predict(X) == y)


def test_not_separable_is_not_raised_for_a_soft_margin():
    X, y = blobs(3, l=30)
    sol = _fit(X, y, formulation="soft_l1_dual", C=1.0)
    assert sol.status == "optimal"


# ---------------------------------------------------------------------------------------
# What a failure advises, and a fallback made by fit


@pytest.fixture(scope="module")
def cancer():
    """The breast-cancer data, standardised: HiGHS calls the 1-norm primal (C = 1)
    unbounded, which it is not (HiGHS 1.x, measured in issue 51)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def test_failure_advice_names_only_options_of_the_model_at_hand(cancer):
    """The primal has no quadratic form to choose: the advice names its other form and the
    other installed backends, never quad_form, nor the backend that failed."""
    require("highs")
    X, y = cancer
    with pytest.raises(sm.SolveFailedError) as err:
        sm.solve(sm.build("soft_l1_primal", X, y, C=1.0), solver="highs")
    text = str(err.value)
    assert "no direction of unboundedness" in text     # the case this is about
    assert "quad_form" not in text
    assert "its other form soft_l1_dual" in text
    others = text.split("Other installed backends that take this problem class (QP): ")[1]
    named = others.split(";")[0].split(", ")
    assert "highs" not in named and named and all(sm.solvers()[n]["available"] for n in named)


def test_a_fallback_made_by_fit_is_a_warning_and_a_field(cancer, tmp_path):
    """fit(..., solver="highs") on the primal solves the dual instead: a FallbackWarning
    pointing at the caller's line, and Solution.fallback (kept through JSON) -- the same
    optimum as the dual fitted directly (PIQP); a fit as asked has neither."""
    require("highs")
    X, y = cancer
    with pytest.warns(sm.FallbackWarning, match="soft_l1_primal failed.*soft_l1_dual") as seen:
        sol = sm.fit(X, y, formulation="soft_l1_primal", solver="highs", C=1.0)
    assert [w.filename for w in seen if w.category is sm.FallbackWarning] == [__file__]
    assert sol.formulation == "soft_l1_dual" and sol.status == "optimal"
    assert sol.fallback == {"kind": "formulation", "asked": "soft_l1_primal",
                            "solved": "soft_l1_dual", "reason": "numerical_error",
                            "message": "soft_l1_primal failed (numerical_error); solved as "
                                       "its other form soft_l1_dual"}
    assert sol.extra["retry_formulation"] == sol.fallback["message"]   # (the old key)
    assert sm.Solution.from_json(sol.to_json()).fallback == sol.fallback
    with warnings.catch_warnings():
        warnings.simplefilter("error", sm.FallbackWarning)
        ref = sm.fit(X, y, formulation="soft_l1_dual", solver=require("piqp"), C=1.0)
    assert ref.fallback is None and sm.Solution.from_json(ref.to_json()).fallback is None
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    np.testing.assert_allclose(sol.w, ref.w, atol=1e-4 * np.abs(ref.w).max())


# ---------------------------------------------------------------------------------------
# Prediction input


def test_decision_function_wrong_number_of_features():
    X, y = separable(0, l=20, d=3)
    for kernel in ("linear", "rbf"):
        sol = _fit(X, y, C=1.0, kernel=kernel, gamma=0.5)
        with pytest.raises(sm.DataError, match="3 features; the model was trained on 3|has 2 features; the model was trained on 3"):
            sol.decision_function(np.ones((4, 2)))
        with pytest.raises(sm.DataError, match="trained on 3"):
            sol.predict(np.ones((4, 5)))


def test_decision_function_bad_values():
    sol = _fit(TOY_X, TOY_Y, C=1.0)
    with pytest.raises(sm.DataError, match="NaN or infinite"):
        sol.decision_function(np.array([[np.nan, 1.0]]))


def test_precomputed_test_kernel_wrong_width():
    K = TOY_X @ TOY_X.T
    sol = _fit(K, TOY_Y, kernel="precomputed", C=1.0)
    with pytest.raises(sm.DataError, match="needs 6 columns.*got 5"):
        sol.decision_function(np.ones((3, 5)))


@pytest.mark.parametrize("backend", ["ipopt", "piqp", "clarabel", "highs", "gurobi"])
def test_misspelt_raw_backend_option_is_a_solver_error(backend):
    from conftest import require

    require(backend)
    with pytest.raises(sm.SolverError, match="no_such_opt"):
        sm.fit(TOY_X, TOY_Y, solver=backend, C=1.0, options={"no_such_opt": 1})


def test_C_as_a_string_is_refused():
    with pytest.raises(sm.ParameterError, match="C must be a positive number"):
        sm.build("soft_l1_dual", TOY_X, TOY_Y, C="1")


@pytest.mark.parametrize("path", ["auto", "general"])
def test_scips_own_numerical_trouble_is_a_failed_solve_not_a_misuse(path):
    """SCIP's own "error in input data" (a coefficient beyond its infinity, 1e20), through
    its matrices or Pyomo's scip_direct: a SolveFailedError of status numerical_error, which
    auto and the retries follow (it was a SolverError, read as a misuse: found by `make fuzz`
    on a feature x1e6); a misspelt raw option stays the SolverError of a misuse."""
    import pyomo.environ as pyo
    from conftest import require

    require("scip")
    m = pyo.ConcreteModel()
    m.x, m.z = pyo.Var(bounds=(0, None)), pyo.Var(bounds=(0, None))
    m.row = pyo.Constraint(expr=1e25 * m.x + m.z >= 1)
    m.obj = pyo.Objective(expr=m.x + m.z)
    with pytest.raises(sm.SolveFailedError, match="error in input data") as err:
        sm.optimize(m, solver="scip", path=path)
    assert err.value.status is sm.Status.numerical_error
    if path == "auto":   # (a model no record proves is Pyomo's: SCIP's matrices directly)
        from svm_models.model.reader import from_pyomo
        from svm_models.solvers import SolverOptions, scip

        res = scip.solve(from_pyomo(m), SolverOptions.from_kwargs())
        assert res.status is sm.Status.numerical_error and res.x is None
        assert res.interface == "pyscipopt" and "error in input data" in res.message
    for backend in ("scip", "ipopt"):   # (ipopt's plugin: a backend with no mapping of its own)
        with pytest.raises(sm.SolverError, match="no_such_opt") as err:
            sm.solve(sm.build("soft_l1_dual", TOY_X, TOY_Y, C=1.0), backend, path=path,
                     options={"no_such_opt": 1})
        assert not isinstance(err.value, sm.SolveFailedError)

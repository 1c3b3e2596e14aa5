"""The result type: frozen, read-only arrays, lossless JSON, scikit-learn names, prediction."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from conftest import TOY_X, TOY_Y, blobs, eval_points, rbf_gram, require, separable, usable

import svm_models as sm
from svm_models import Solution

GAMMA = 0.5


@pytest.fixture(scope="module")
def solutions():
    """A spread of Solutions: linear/rbf/poly/precomputed kernels, primal and dual forms,
    string labels, a hard margin, and a failed solve (NaNs)."""
    backend = require("highs")
    X, y = blobs(8, l=30)
    Xs, ys = separable(8, l=30)
    K = rbf_gram(X, X, GAMMA)
    out = {
        "linear_dual": sm.fit(X, y, "soft_l1_dual", backend, C=1.0),
        "linear_primal": sm.fit(X, y, "soft_l1_primal", backend, C=1.0),
        "rbf_dual": sm.fit(X, y, "soft_l1_dual", backend, C=1.0, kernel="rbf", gamma=GAMMA),
        "rbf_primal": sm.fit(X, y, "soft_l2_primal", backend, C=1.0, kernel="rbf", gamma=GAMMA),
        "poly_dual": sm.fit(X, y, "soft_l2_dual", backend, C=2.0, kernel="poly", degree=2,
                            gamma=GAMMA, coef0=1.0),
        "precomputed": sm.fit(K, y, "soft_l1_dual", backend, C=1.0, kernel="precomputed"),
        "strings": sm.fit(Xs, np.where(ys > 0, "dog", "cat"), "hard_dual", backend),
        "hard_primal": sm.fit(Xs, ys, "hard_primal", backend),
    }
    if usable(["ipopt"]):
        out["failed"] = sm.fit(X, y, "soft_l1_dual", "ipopt", C=1.0, iter_limit=1,
                               raise_on_failure=False)
    return out, X, y


def _names():
    return ["linear_dual", "linear_primal", "rbf_dual", "rbf_primal", "poly_dual",
            "precomputed", "strings", "hard_primal", "failed"]


def _eval_input(name, sol, X):
    Xe = eval_points(8)
    return rbf_gram(Xe, X, GAMMA) if name == "precomputed" else Xe


def _same(a, b) -> bool:
    """Exact equality, NaN equal to NaN, arrays by dtype, shape and value."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape
                and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, z) for x, z in zip(a, b))
    return type(a) is type(b) and a == b


def _assert_identical(s1: Solution, s2: Solution):
    for f in dataclasses.fields(Solution):
        v1, v2 = getattr(s1, f.name), getattr(s2, f.name)
        assert _same(v1, v2), f"field {f.name}: {v1!r} != {v2!r}"


# ---------------------------------------------------------------------------------------
# Frozen, read-only


@pytest.mark.parametrize("name", _names())
def test_frozen(solutions, name):
    sols, _, _ = solutions
    if name not in sols:
        pytest.skip("no ipopt")
    sol = sols[name]
    with pytest.raises(dataclasses.FrozenInstanceError):
        sol.b = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        sol.alpha = np.zeros(3)
    for field in ("alpha", "dual_coef", "xi", "support", "support_vectors", "classes", "w"):
        arr = getattr(sol, field)
        if arr is None or arr.size == 0:
            continue
        assert not arr.flags.writeable, field
        with pytest.raises(ValueError):
            arr[0] = arr[0]


def test_read_only_arrays_survive_reload(solutions):
    sol = solutions[0]["rbf_dual"]
    back = Solution.from_json(sol.to_json())
    for field in ("alpha", "dual_coef", "xi", "support", "support_vectors", "classes"):
        assert not getattr(back, field).flags.writeable, field


# ---------------------------------------------------------------------------------------
# JSON


@pytest.mark.parametrize("name", _names())
def test_json_round_trip_is_lossless(solutions, name):
    sols, X, _ = solutions
    if name not in sols:
        pytest.skip("no ipopt")
    sol = sols[name]
    text = sol.to_json()
    back = Solution.from_json(text)
    _assert_identical(sol, back)
    assert back.to_json() == text  # a fixed point
    if sol.status == "optimal":
        Xe = _eval_input(name, sol, X)
        np.testing.assert_array_equal(back.decision_function(Xe), sol.decision_function(Xe))
        np.testing.assert_array_equal(back.predict(Xe), sol.predict(Xe))


@pytest.mark.parametrize("name", _names())
def test_json_is_standard(solutions, name):
    """Standard JSON (RFC 8259): no NaN/Infinity tokens, which strict parsers reject."""
    sols, _, _ = solutions
    if name not in sols:
        pytest.skip("no ipopt")

    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    json.loads(sols[name].to_json(), parse_constant=refuse)


def test_json_via_a_file(solutions, tmp_path):
    sols, X, _ = solutions
    for name in ("rbf_primal", "strings", "precomputed"):
        sol = sols[name]
        path = tmp_path / f"{name}.json"
        text = sol.to_json(path)
        assert path.read_text() == text
        for source in (path, str(path)):
            back = Solution.from_json(source)
            _assert_identical(sol, back)
            Xe = _eval_input(name, sol, X)
            np.testing.assert_array_equal(back.predict(Xe), sol.predict(Xe))


def test_reloaded_solution_predicts_original_labels(solutions):
    sols, _, _ = solutions
    sol = sols["strings"]
    back = Solution.from_json(sol.to_json())
    Xs, ys = separable(8, l=30)
    labels = np.where(ys > 0, "dog", "cat")
    np.testing.assert_array_equal(back.predict(Xs), labels)
    assert list(back.classes_) == ["cat", "dog"]


# ---------------------------------------------------------------------------------------
# scikit-learn names against the mathematical names


@pytest.mark.parametrize("name", [n for n in _names() if n != "failed"])
def test_sklearn_names_match_math_names(solutions, name):
    sols, X, y = solutions
    sol = sols[name]
    s = sol.support
    np.testing.assert_array_equal(sol.support_, s)
    assert sol.n_support == s.size
    assert sol.dual_coef_.shape == (1, s.size)
    np.testing.assert_array_equal(sol.dual_coef_[0], sol.dual_coef[s])
    np.testing.assert_array_equal(sol.intercept_, [sol.b])
    assert sol.intercept_.shape == (1,)
    assert list(sol.classes_) == list(sol.classes)
    if name != "precomputed":
        train = separable(8, l=30)[0] if name in ("strings", "hard_primal") else X
        np.testing.assert_array_equal(sol.support_vectors_, train[s])
    assert np.all(sol.alpha[s] > 0)
    if sol.w is not None:
        # coef and coef_ mean the same thing: w (scikit-learn's meaning)
        np.testing.assert_array_equal(sol.coef_, sol.w[None, :])
        np.testing.assert_array_equal(sol.coef, sol.w)
    else:
        assert sol.coef is None
        with pytest.raises(AttributeError):
            sol.coef_


@pytest.mark.parametrize("name", [n for n in _names() if n != "failed"])
def test_dual_coef_means_what_sklearn_means(solutions, name):
    """As in scikit-learn's SVC: ``dual_coef_`` holds y_i alpha_i of the support vectors, and
    ``decision_function(x) = dual_coef_ . K(support_vectors_, x) + intercept_``."""
    sols, X, y = solutions
    sol = sols[name]
    s = sol.support
    yy = separable(8, l=30)[1] if name in ("strings", "hard_primal") else y
    np.testing.assert_allclose(sol.dual_coef_[0], (yy * sol.alpha)[s], atol=1e-6)
    Xe = eval_points(8)
    if name == "precomputed":
        Kt = rbf_gram(Xe, X, GAMMA)
        want = Kt[:, s] @ sol.dual_coef_[0] + sol.intercept_[0]
        got = sol.decision_function(Kt)
    else:
        Ksv = sol.kernel.gram(Xe, sol.support_vectors_)
        want = Ksv @ sol.dual_coef_[0] + sol.intercept_[0]
        got = sol.decision_function(Xe)
    np.testing.assert_allclose(got, want, atol=1e-6 * max(1.0, np.abs(want).max()))


# ---------------------------------------------------------------------------------------
# decision_function, computed independently


def test_decision_function_linear(solutions):
    sols, X, _ = solutions
    sol = sols["linear_dual"]
    Xe = eval_points(8)
    by_w = Xe @ sol.w + sol.b
    by_sv = sol.dual_coef_[0] @ (sol.support_vectors_ @ Xe.T) + sol.intercept_[0]
    np.testing.assert_allclose(sol.decision_function(Xe), by_w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(by_sv, by_w, atol=1e-6)
    assert sol.decision_function(Xe[0]).shape == (1,)  # one sample as a 1-D vector


def test_decision_function_rbf(solutions):
    sols, X, y = solutions
    sol = sols["rbf_dual"]
    Xe = eval_points(8)
    want = rbf_gram(Xe, sol.support_vectors_, GAMMA) @ sol.dual_coef_[0] + sol.intercept_[0]
    np.testing.assert_allclose(sol.decision_function(Xe), want, atol=1e-10)
    np.testing.assert_array_equal(sol.predict(Xe), np.where(want >= 0, 1, -1))
    assert sol.score(X, y) == pytest.approx(np.mean(sol.predict(X) == y))


def test_decision_function_rbf_primal_uses_its_expansion(solutions):
    """A representer-form primal: f(x) = sum_j beta_j k(x_j, x) + b over all points; equal
    to the decision values of the same problem solved in dual form."""
    sols, X, y = solutions
    sol = sols["rbf_primal"]
    dual = sm.fit(X, y, "soft_l2_dual", "highs", C=1.0, kernel="rbf", gamma=GAMMA)
    Xe = eval_points(8)
    np.testing.assert_allclose(sol.decision_function(Xe), dual.decision_function(Xe), atol=1e-5)


def test_decision_function_precomputed(solutions):
    """K_test of shape (m, l) against the training points; equals the rbf solution of the
    same problem on raw features."""
    sols, X, _ = solutions
    sol, ref = sols["precomputed"], sols["rbf_dual"]
    Xe = eval_points(8)
    Kt = rbf_gram(Xe, X, GAMMA)
    assert Kt.shape == (len(Xe), len(X))
    want = Kt @ (np.zeros(len(X)) + np.bincount(sol.support, sol.dual_coef_[0], len(X))) + sol.b
    np.testing.assert_allclose(sol.decision_function(Kt), want, atol=1e-10)
    np.testing.assert_allclose(sol.decision_function(Kt), ref.decision_function(Xe), atol=1e-6)
    assert sol.support_vectors_.shape == (sol.n_support, 0)


def test_predict_on_the_golden_toy():
    backend = require("highs")
    sol = sm.fit(TOY_X, TOY_Y, "soft_l1_dual", backend, C=1.0)
    np.testing.assert_allclose(sol.decision_function(TOY_X), TOY_X @ [0.5, 0.5], atol=1e-6)
    np.testing.assert_array_equal(sol.predict(TOY_X), TOY_Y)
    assert sol.score(TOY_X, TOY_Y) == 1.0
    assert "soft_l1_dual" in repr(sol) and "optimal" in sol.summary()


def test_the_summary_names_the_certificate_each_family_has():
    """The one-line summary showed 'gap=nan' for a mixed-integer SVM (its certificate is the
    MIP gap) and for the cone forms with no dual to measure (the book's pages printed it)."""
    sol = sm.fit(TOY_X, TOY_Y, "soft_l1_dual", require("highs"), C=1.0)
    assert f"gap={sol.duality_gap:.2e}" in sol.summary()
    mip = sm.fit(TOY_X, TOY_Y, "ramp_loss_primal", require("scip"), C=1.0)
    assert f"mip_gap={mip.mip_gap:.2e}" in mip.summary() and "nan" not in mip.summary()
    cone = sm.fit(TOY_X, TOY_Y, "rsvm_mu_plus", require("clarabel"), C=1.0)
    assert cone.duality_gap is None and "gap=none" in cone.summary()


# ---------------------------------------------------------------------------------------
# Declared fields: what extra's string keys carried, typed; extra reads them by the old keys

#: two points at -1 and +1 (and two further out): the hard margin's alpha is exactly
#: (1/2, 1/2, 0, 0), w = 1, b = 0 (by hand: w = sum alpha_i y_i x_i, margins y_i f_i = 1)
HAND_X = np.array([[-1.0], [1.0], [-2.0], [3.0]])
HAND_Y = np.array([-1, 1, -1, 1])


@pytest.mark.parametrize("backend", ["clarabel", "highs"])
def test_polished_and_b_source_on_a_hand_solved_margin(backend):
    """An interior-point backend stops 1e-9 off the optimum; the polish solves the KKT
    conditions on the active set exactly: alpha = (1/2, 1/2, 0, 0) to round-off, b = 0, and
    the Solution says it took that point (declared fields, and the same by the old keys)."""
    sol = sm.fit(HAND_X, HAND_Y, "hard_dual", require(backend))
    np.testing.assert_allclose(sol.alpha, [0.5, 0.5, 0.0, 0.0], rtol=0, atol=1e-14)
    assert abs(sol.b) < 1e-14 and abs(sol.w[0] - 1.0) < 1e-14
    assert sol.polished is True and sol.b_source == "polished alpha (kkt)"
    assert sol.classifier_certificate["classifier"] == sol.b_source and sol.classifier_certificate["certified"]
    assert sol.classifier_certificate["worst"] <= sol.classifier_certificate["accept"]
    assert 0 < sol.support_threshold < 0.5        # the support: the two points on the margin
    np.testing.assert_array_equal(sol.support, [0, 1])
    for key in ("polished", "b_source", "certificate", "alpha_source", "support_threshold"):
        field = "classifier_certificate" if key == "certificate" else key
        assert sol.extra[key] is getattr(sol, field) and key in sol.extra, key
        assert key not in sol.extra.free, key   # declared, not in the free dictionary
    assert dict(sol.extra)["polished"] is True


def test_solver_choice_and_path_reason_are_declared():
    X, y = TOY_X, TOY_Y
    auto = sm.fit(X, y, "soft_l1_dual", C=1.0)
    assert auto.solver_choice["asked"] == "auto" and auto.solver_choice["used"] == auto.solver
    assert auto.extra["solver_choice"] is auto.solver_choice
    fixed = sm.fit(X, y, "soft_l1_dual", require("highs"), C=1.0)
    assert fixed.solver_choice is None and "solver_choice" not in fixed.extra
    assert fixed.path == "fast" and fixed.general_path_reason is None
    import pyomo.environ as pyo

    m = sm.build("soft_l1_primal", X, y, C=1.0)
    m.mine = pyo.Constraint(expr=m.b >= 0.1)      # an edit: solved on the general path
    edited = sm.solve(m, require("highs"), path="general")
    assert edited.b >= 0.1 - 1e-7 and edited.path == "general"
    assert isinstance(edited.general_path_reason, str) and edited.general_path_reason
    assert edited.extra["general_path_reason"] == edited.general_path_reason


def test_a_failed_solve_says_why_in_message():
    """Three collinear points labelled +1, -1, +1 have no separating line: infeasible."""
    X, y = np.array([[0.0], [0.1], [0.2]]), np.array([1, -1, 1])
    sol = sm.fit(X, y, "hard_primal", require("clarabel"), raise_on_failure=False)
    assert sol.status in ("infeasible", "infeasible_or_unbounded")
    assert sol.message and sol.extra["message"] == sol.message
    assert sol.b_source == f"the solve ended {sol.status}"
    with pytest.raises(sm.SVMError, match="the solve ended"):
        sol.decision_function(X)


def test_extra_is_a_free_dictionary_with_the_declared_fields_read_only():
    sol = sm.fit(HAND_X, HAND_Y, "hard_dual", require("highs"))
    sol.extra["mine"] = 1.5                      # a free key: as any dictionary
    assert sol.extra["mine"] == 1.5 and "mine" in sol.extra.free
    del sol.extra["mine"]
    assert "mine" not in sol.extra
    with pytest.raises(TypeError, match=r"Solution.polished.*dataclasses.replace"):
        sol.extra["polished"] = False
    with pytest.raises(KeyError):
        sol.extra["solver_choice"]               # not reported: absent, as before
    assert sol.extra.get("solver_choice") is None
    again = dataclasses.replace(sol, polished=False, extra={**sol.extra, "mine": 2})
    assert again.polished is False and again.extra["mine"] == 2 and again.extra._owner is again
    # a dictionary handed to the constructor: its declared keys go to the fields
    made = dataclasses.replace(sol, alpha_source=None, extra={"alpha_source": "by hand", "x": 1})
    assert made.alpha_source == "by hand" and made.extra.free == {"x": 1}


def test_a_version_1_document_loads_into_the_declared_fields():
    """A Solution saved before the fields were declared (version 1: everything in extra)."""
    from svm_models.solution import DECLARED, _digest, field_of

    sol = sm.fit(HAND_X, HAND_Y, "hard_dual", require("highs"))
    doc = sol.to_dict()
    fields_of = {field_of(k): k for k in DECLARED}
    old = {k: v for k, v in doc.items() if k not in fields_of}
    old["extra"] = {**doc["extra"], **{k: doc[f] for f, k in fields_of.items()
                                       if doc[f] is not None}}
    old["solution_version"] = 1
    del old["sha256"]
    old["sha256"] = {k: _digest(v) for k, v in old.items()
                     if k not in ("solution_format", "solution_version")}
    back = Solution.from_dict(old)
    _assert_identical(sol, back)
    assert back.polished is True and back.classifier_certificate == sol.classifier_certificate
    assert Solution.from_dict(doc).to_dict() == doc and doc["solution_version"] == 2


def test_every_key_the_package_reads_from_a_solutions_extra_is_declared():
    """The package reads a Solution's reports through its declared fields: a string key
    read from ``<name>.extra`` (subscript, ``.get``, ``in``) anywhere in svm_models must be
    a declared field (or an old fallback key), so that no new undeclared key is read across
    modules. The other ``extra`` dictionaries are a solve's (``res``: MatrixResult,
    ``ctx``: postprocess.Context) and the scaling's (``self`` in model/scaling.py)."""
    import ast
    import pathlib

    from svm_models.solution import DECLARED, FALLBACK_KEYS

    other = {"res", "again", "ctx", "self"}
    root = pathlib.Path(sm.__file__).parent
    found = {}

    def solution_extra(node) -> bool:
        if isinstance(node, ast.Attribute) and node.attr == "extra":
            return not (isinstance(node.value, ast.Name) and node.value.id in other)
        return (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and node.slice.value == "extra")          # a document's d["extra"]

    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            key = None
            if isinstance(node, ast.Subscript) and solution_extra(node.value) and \
                    isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant):
                key = node.slice.value
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "get" and solution_extra(node.func.value)
                  and node.args and isinstance(node.args[0], ast.Constant)):
                key = node.args[0].value
            elif (isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn))
                  and solution_extra(node.comparators[0])
                  and isinstance(node.left, ast.Constant)):
                key = node.left.value
            if isinstance(key, str):
                found.setdefault(key, []).append(f"{path.relative_to(root)}:{node.lineno}")
    undeclared = {k: v for k, v in found.items() if k not in DECLARED and k not in FALLBACK_KEYS}
    assert not undeclared, f"undeclared keys of Solution.extra read in the package: {undeclared}"


def test_a_familys_reports_are_fields_of_its_details():
    """C tuning's reports (formulations/c_tuning.md) are declared on CTuningDetails: read as
    ``sol.q_hi``, ``sol.details.q_hi`` and, as before, ``sol.extra["q_hi"]`` -- with the
    values their definitions give: q_hi = alpha'alpha/l at the solution (both range rows
    active on this data: q_hi = q_lo), and the multipliers' stationarity eta_hi + eta_lo = 1/2."""
    sol = sm.fit(TOY_X, TOY_Y, "c_tuning_standard", require("clarabel"))
    d = sol.details
    assert d.variant == "standard" and d.form in ("norm", "quadratic")
    assert d.active == ["hi", "lo"] and abs(d.q_hi - d.q_lo) <= 1e-6 * d.q_hi
    l = len(TOY_Y)
    assert abs(d.q_hi - float(sol.alpha @ sol.alpha) / l) <= 1e-6 * d.q_hi
    assert abs(d.eta_hi + d.eta_lo - 0.5) <= 1e-6
    for key in ("q_hi", "active", "eta_hi", "form", "g_source"):
        assert sol.extra[key] is getattr(d, key) is getattr(sol, key) and key in sol.extra
        assert key not in sol.extra.free
    with pytest.raises(TypeError, match=r"Solution.details.q_hi"):
        sol.extra["q_hi"] = 0.0
    back = Solution.from_json(sol.to_json())
    assert back.details == d and back.extra["eta_sum"] == sol.extra["eta_sum"]

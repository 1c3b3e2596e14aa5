"""The formulation layer (svm_models/formulations/__init__.py, base.py): formulations are
objects registered by a decorator or an entry point, and everything above them -- the
estimator's parameters, the command line's flags, cross-validation's hyperparameters, the
details a Solution carries -- follows the registry; a formulation defined outside the package
(examples/custom_formulation.py) is solved and used as the package's own are."""

from __future__ import annotations

import inspect
import runpy
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import svm_models as sm
from svm_models.errors import ParameterError, SVMWarning
from svm_models.formulations import (
    REGISTRY,
    Formulation,
    get,
    hyperparameters,
    register,
)
from svm_models.formulations.params import PARAMS, Param

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def restore_registry():
    """Whatever a test registers is gone after it (the registry, the declared parameters,
    the estimator's signature)."""
    from svm_models.estimator import _derive_parameters

    names, params = dict(REGISTRY), dict(PARAMS)
    yield
    REGISTRY.clear()
    REGISTRY.update(names)
    PARAMS.clear()
    PARAMS.update(params)
    _derive_parameters()


def _cvxpy_squared_hinge_l1(X, y, C):
    import cvxpy as cp

    s = np.where(y == np.unique(y)[1], 1.0, -1.0)
    w, b, xi = cp.Variable(X.shape[1]), cp.Variable(), cp.Variable(X.shape[0])
    prob = cp.Problem(cp.Minimize(cp.norm1(w) + C / 2 * cp.sum_squares(xi)),
                      [cp.multiply(s, X @ w + b) >= 1 - xi])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value


def test_a_formulation_from_outside_the_package_is_solved_and_used_as_the_packages_own(
        restore_registry):
    mod = runpy.run_path(str(ROOT / "examples" / "custom_formulation.py"))
    assert "custom_formulation" not in sys.modules   # (run as a script, nothing private)
    clarabel, piqp, grid = mod["main"](("clarabel", "piqp"))
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    want = _cvxpy_squared_hinge_l1(X, y, 0.5)   # the same problem, stated in CVXPY
    for sol in (clarabel, piqp):
        assert abs(sol.objective - want) <= 1e-6 * want
        assert sol.status is sm.Status.optimal and abs(sol.duality_gap) < 1e-6
    assert grid.best_estimator_.formulation == "squared_hinge_l1"
    text = (ROOT / "examples" / "custom_formulation.py").read_text()
    assert "import _" not in text and "._" not in text.replace("._svm", "")


PLUGIN = '''
from svm_models.errors import ParameterError
from svm_models.formulations import Formulation
from svm_models.formulations.ls_svm import extract, ls_svm_primal
from svm_models.formulations.params import Param


def _positive(value, given=None):
    if not float(value) > 0:
        raise ParameterError("scale_c must be > 0")
    return float(value)


def scaled_ls(X, y, *, C=1.0, scale_c=2.0, block=None):
    """The least-squares SVM at C * scale_c."""
    return ls_svm_primal(X, y, C=C * scale_c, block=block)


class ScaledLS(Formulation):
    name = "scaled_ls"
    builder = scaled_ls
    declares = (Param("scale_c", "a factor of C", "a positive number", _positive, float),)
    summary = "A plugin's formulation."

    def extract(self, block, ctx):
        return extract(block, ctx)
'''


def _install_plugin(tmp_path, module: str, value: str):
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(PLUGIN))
    dist = tmp_path / f"{module}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[svm_models.formulations]\nscaled_ls = {value}\n")


def test_a_plugin_registers_through_the_entry_point_group_and_every_face_sees_it(
        tmp_path, monkeypatch, restore_registry):
    from svm_models.formulations import _load_entry_points

    _install_plugin(tmp_path, "svm_plugin_demo", "svm_plugin_demo:ScaledLS")
    monkeypatch.syspath_prepend(str(tmp_path))
    _load_entry_points()
    assert "scaled_ls" in sm.formulations() and "scale_c" in hyperparameters()
    # the estimator's signature and the command line's flags follow the registry
    assert "scale_c" in inspect.signature(sm.SVMClassifier).parameters
    from svm_models.cli import parser

    fit = parser()._subparsers._group_actions[0].choices["fit"]
    assert "--scale-c" in {s for a in fit._actions for s in a.option_strings}
    # and it solves: the least-squares SVM at C * scale_c
    X, y = np.random.default_rng(0).normal(size=(30, 3)), np.repeat([0, 1], 15)
    got = sm.fit(X, y, "scaled_ls", solver="clarabel", C=0.5, scale_c=4.0)
    want = sm.fit(X, y, "ls_svm_primal", solver="clarabel", C=2.0)
    assert np.allclose(got.w, want.w, atol=1e-8) and abs(got.b - want.b) < 1e-8
    clf = sm.SVMClassifier(formulation="scaled_ls", solver="clarabel", C=0.5, scale_c=4.0)
    assert np.array_equal(clf.fit(X, y).predict(X), want.predict(X))


def test_a_broken_plugin_is_a_warning_naming_it_not_a_failed_import(tmp_path, monkeypatch,
                                                                    restore_registry):
    from svm_models.formulations import _load_entry_points

    _install_plugin(tmp_path, "svm_plugin_broken", "svm_plugin_broken:NoSuchThing")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.warns(SVMWarning, match="plugin 'scaled_ls'.*could not be loaded"):
        _load_entry_points()
    assert "scaled_ls" not in sm.formulations()


def _builder(X, y, *, C=1.0, block=None):
    return sm.build("soft_l1_primal", X, y, C=C, block=block)


class _Readable(Formulation):
    builder = _builder

    def extract(self, block, ctx):
        return get("soft_l1_primal").extract(block, ctx)


@pytest.mark.parametrize("make, match", [
    (lambda: _Readable(name="soft_l1_dual"), "registered already"),
    (lambda: Formulation(name="no_extract", builder=_builder), "does not define extract"),
    (lambda: _Readable(name="bad form", form="primal"), "must be an identifier"),
    (lambda: _Readable(name="bad_form", form="both"), "form must be one of primal, dual"),
    (lambda: _Readable(name="bad_class", problem_class="SDP"), "problem_class must be one of"),
    (lambda: _Readable(name="bad_key", colour="red"), "'colour' is not something"),
    (lambda: _Readable(name="conflict", declares=(Param("C", "another C", "any"),)),
     "declares the parameter 'C', which is declared already, differently"),
    (lambda: _Readable(name="undeclared", builder=lambda X, y, *, zeta=1, block=None: None),
     "takes zeta, which no Param declares"),
    (lambda: "not a formulation", "register takes a Formulation"),
])
def test_registration_refuses_what_the_layers_above_could_not_use(make, match,
                                                                  restore_registry):
    with pytest.raises(ParameterError, match=match):
        register(make())


def test_hooks_have_defaults_and_the_questions_are_declared():
    assert get("ramp_loss_primal").has("warm_start") and get("ramp_loss_primal").has(
        "indicator_rows")
    assert not get("soft_l1_dual").has("warm_start")
    assert get("l1_norm_primal").explain_failure(None, "infeasible", "") is None
    assert get("l1_norm_primal").licence_hint(None) == ""
    # the classic SVMs answer as before, by declaration, not by their family's name
    assert get("hard_dual").hard_margin and not get("soft_l1_dual").hard_margin
    assert get("soft_l2_primal").hard_at_infinite_C == "hard_primal"
    assert get("soft_l1_dual").other_form == "soft_l1_primal"
    assert get("c_tuning_general").learned == ("g",) and get("c_tuning_general").learns_C
    assert get("nu_dual").learned == ("rho",) and "C" not in get("nu_dual").params
    # a formulation's parameters are its builder's keyword-only ones
    for f in (get(n) for n in sm.formulations()):
        sig = inspect.signature(f.builder).parameters
        assert list(f.params) == [n for n, p in sig.items()
                                  if p.kind is p.KEYWORD_ONLY and n != "block"]


def test_the_estimators_parameters_are_the_registrys():
    params = list(inspect.signature(sm.SVMClassifier).parameters)
    from svm_models.estimator import ESTIMATOR_PARAMS

    assert params == ["formulation", "solver", *hyperparameters(), *ESTIMATOR_PARAMS]
    clf = sm.SVMClassifier(nu=0.3, lam=2.0)
    assert clf.get_params()["nu"] == 0.3 and clf.get_params()["lam"] == 2.0
    with pytest.raises(TypeError, match="unexpected keyword argument 'nuu'"):
        sm.SVMClassifier(nuu=0.3)
    # every hyperparameter has an entry in the docstring (written, or from its declaration)
    for name in hyperparameters():
        assert f"\n    {name} : " in sm.SVMClassifier.__doc__, name

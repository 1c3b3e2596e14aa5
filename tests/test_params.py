"""The builders' parameters, declared once (svm_models/formulations/params.py): the table
is the builders' signatures, a value refused before a fit is the value the builder refuses
(same message), and the command line, the estimator and cross-validation take exactly the
declared hyperparameters."""

import inspect

import numpy as np
import pytest

import svm_models as sm
from svm_models.cli import MODEL_FLAGS, parser
from svm_models.errors import ParameterError
from svm_models.formulations import TABLE, check_params, hyperparameters
from svm_models.formulations.params import PARAMS
from tests.conftest import blobs


def test_each_registered_parameter_is_declared_and_is_the_builders_signature():
    for f in TABLE.values():
        sig = inspect.signature(f.builder).parameters
        taken = [n for n, p in sig.items() if p.kind is p.KEYWORD_ONLY and n != "block"]
        assert list(f.params) == taken, f.name   # derived from what the builder takes
        assert [p.name for p in f.spec] == taken
        assert f.defaults == {n: sig[n].default for n in taken}
    # nothing declared that no builder takes
    assert set(PARAMS) == {p for f in TABLE.values() for p in f.params}
    assert set(hyperparameters()) == {n for n, p in PARAMS.items() if p.hyperparameter}


#: (formulation, the other parameters, the bad value): each refused with the same message
#: before a fit (check_params) and by the builder itself
_BAD = [
    ("soft_l1_dual", {}, {"C": -1.0}),
    ("soft_l1_dual", {}, {"C": "big"}),
    ("soft_l1_dual", {}, {"kernel": "rbff"}),
    ("soft_l1_dual", {"kernel": "rbf"}, {"gamma": -0.5}),
    ("soft_l1_dual", {"kernel": "rbf"}, {"gamma": "wide"}),
    ("soft_l1_dual", {"kernel": "poly"}, {"degree": 0}),
    ("soft_l1_dual", {"kernel": "poly"}, {"degree": 2.5}),
    ("soft_l1_dual", {"kernel": "poly"}, {"coef0": float("nan")}),
    ("soft_l1_dual", {"kernel": "rbf"}, {"kernel_rank": 0}),
    ("soft_l1_primal", {"kernel": "linear"}, {"kernel_rank": 3}),
    ("soft_l2_dual", {}, {"quad_form": "sparse"}),
    ("c_tuning_standard", {}, {"form": "cone"}),
    ("rsvm_plus_kernel", {}, {"radius": "exact"}),
    ("rsvm_plus_primal", {}, {"lam": 0.0}),
]


@pytest.mark.parametrize("name, other, bad", _BAD, ids=lambda v: str(v))
def test_a_value_outside_its_domain_is_refused_before_the_fit_as_the_builder_refuses_it(
        name, other, bad):
    X, y = blobs(5, l=12)
    with pytest.raises(ParameterError) as early:
        check_params(name, {**other, **bad})
    with pytest.raises(ParameterError) as built:
        sm.build(name, X, y, **other, **bad)
    assert str(early.value) == str(built.value)
    # and every declared check accepts the builder's own default
    f = TABLE[name]
    for p in f.spec:
        default = f.defaults[p.name]
        if p.check is not None and default is not None and p.hyperparameter:
            p.check(default, {"kernel": "rbf"})


def test_a_kernel_parameter_with_a_kernel_that_does_not_use_it_is_refused():
    for param, value in [("gamma", 0.5), ("degree", 2), ("coef0", 1.0)]:
        with pytest.raises(ParameterError, match=f"{param}=.* has no effect with kernel='linear'"):
            check_params("soft_l1_dual", {param: value})
    with pytest.raises(ParameterError, match="degree=2 has no effect with kernel='rbf'"):
        check_params("soft_l1_dual", {"kernel": "rbf", "degree": 2})
    # a value in its domain, with a kernel that uses it, passes through unchanged
    assert check_params("soft_l1_dual", {"kernel": "poly", "degree": 2, "C": None}) == {
        "kernel": "poly", "degree": 2}


def test_the_command_line_has_one_flag_per_declared_hyperparameter_it_can_spell():
    flagged = [n for n in hyperparameters() if PARAMS[n].flag is not None]
    assert list(MODEL_FLAGS) == flagged
    # a declared parameter the command line cannot spell has no flag (per-point data, lists
    # of kernels, index arrays); every other hyperparameter has one
    assert set(hyperparameters()) - set(flagged) == {
        n for n in hyperparameters() if PARAMS[n].flag is None}
    assert "C" in flagged and "sample_weight" not in flagged
    sub = parser()._subparsers._group_actions[0].choices["fit"]
    options = {s for a in sub._actions for s in a.option_strings}
    assert {PARAMS[n].option for n in flagged} <= options


@pytest.fixture
def csv12(tmp_path):
    """12 blob points with their labels as a CSV file: ``(path, X, y)``."""
    X, y = blobs(5, l=12)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    return path, X, y


def test_the_command_line_checks_its_flags_as_the_estimators_do(csv12, tmp_path, capsys):
    from svm_models.cli import main

    path, X, y = csv12

    assert main(["fit", str(path), "--solver", "highs", "--quad-form", "sparse"]) == 2
    assert "quad_form must be one of auto, dense, factor; got 'sparse'" in capsys.readouterr().err
    # --kernel-rank reaches the builder: at full rank (12 points) the exact kernel's optimum
    out = tmp_path / "m.json"
    assert main(["fit", str(path), "--solver", "highs", "--kernel", "rbf", "--kernel-rank", "12",
                 "--gamma", "0.5", "--C", "2", "-o", str(out)]) == 0
    got = sm.Solution.from_json(str(out))
    ref = sm.fit(X, y, C=2.0, kernel="rbf", gamma=0.5, solver="highs")
    assert got.extra["kernel_rank"]["rank"] == 12
    assert abs(got.objective - ref.objective) <= 1e-7 * abs(ref.objective)


def test_the_estimator_and_cross_validation_take_every_declared_hyperparameter():
    est = inspect.signature(sm.SVMClassifier).parameters
    assert set(hyperparameters()) <= set(est)


def test_values_the_builders_take_pass_the_check_before_a_fit():
    """Review: a Kernel object with kernel_rank, and C = inf as any real type, were refused."""
    from svm_models.kernels import Kernel

    rbf = Kernel(name="rbf", gamma=0.5)
    assert check_params("soft_l1_dual", {"kernel": rbf, "kernel_rank": 10})["kernel_rank"] == 10
    with pytest.raises(ParameterError, match="kernel_rank applies to the rbf and poly"):
        check_params("soft_l1_dual", {"kernel": Kernel(name="linear"), "kernel_rank": 10})
    for inf in (float("inf"), np.inf, np.float32(np.inf)):
        assert check_params("soft_l1_dual", {"C": inf})["C"] == np.inf
        assert check_params("rsvm_plus_primal", {"C": inf})["C"] is None
    for gamma in (np.float32(0.5), np.array(0.5), 0.5):
        assert check_params("soft_l1_dual", {"kernel": "rbf", "gamma": gamma})
    X, y = blobs(5, l=20)
    clf = sm.SVMClassifier(solver="highs", kernel=rbf, kernel_rank=20).fit(X, y)
    assert clf.solution_.extra["kernel_rank"]["rank"] == 20


def test_the_command_line_says_its_own_way_out_and_shows_where_C_may_be_inf(csv12, capsys):
    from svm_models.cli import main

    path = csv12[0]
    assert main(["fit", str(path), "--solver", "highs", "--gamma", "0.5"]) == 2
    assert "drop the flag, or choose a kernel that uses it" in capsys.readouterr().err
    assert main(["formulations", "show", "soft_l1_dual"]) == 0
    assert "C = 1.0: a positive number (inf: the hard margin)" in capsys.readouterr().out
    assert main(["formulations", "show", "ls_svm_primal"]) == 0
    out = capsys.readouterr().out
    assert "C = 1.0: a positive number" in out and "inf" not in out.split("parameters:")[1]

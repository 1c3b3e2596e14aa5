"""Shared test machinery: the backend matrix, seeded datasets, comparison helpers.

Backends are parametrised by capability (DESIGN.md, "Testing"):

* ``QP_BACKENDS``: every backend the project installs that takes a convex QP;
* ``FAST_BACKENDS``: those with a fast (matrix) path;
* ``DUAL_BACKENDS``: those that report constraint duals;
* ``QCQP_BACKENDS``, ``LP_BACKENDS``, ``MILP_BACKENDS``, ``MIQP_BACKENDS``: every backend the
  project installs that takes that problem class.

Each is derived from the backends' declarations (``Backend.project`` and the rest), never
written here: a new backend joins the matrix by its declaration.

A test asks for a backend through :func:`require` (or the ``qp_backend`` /
``fast_backend`` / ``dual_backend`` fixtures, which call it). Outside CI a missing
backend skips the test; under CI (``CI=true``) it FAILS: every backend the project
installs must be present there. ``test_solvers.py::test_ci_has_every_backend`` states the
same thing once per session.

Size rules, kept by the data helpers below and checked by :func:`solve_checked`:
Gurobi's pip licence refuses quadratic models above 200 variables (slacks and
auxiliaries included), and SCIP (spatial branch and bound) is slow on QPs, so it only
gets ``SCIP_MAX_POINTS`` points.
"""

from __future__ import annotations

import functools
import logging
import os

import numpy as np
import pytest

import svm_models as sm


def _project(takes) -> tuple[str, ...]:
    """The project's backends (``Backend.project``) whose declaration ``takes``, in the
    table's order: the lists are derived from the declarations, never written here."""
    from svm_models.solvers import BACKENDS, PROJECT_BACKENDS

    return tuple(n for n in PROJECT_BACKENDS if takes(BACKENDS[n]))


QP_BACKENDS = _project(lambda b: b.takes("QP"))
#: the fast path taken whenever the record proves the model (SCIP's is conditional:
#: ``matrix_when``)
FAST_BACKENDS = _project(lambda b: b.takes("QP") and b.matrix is not None
                         and b.matrix_when is None)
DUAL_BACKENDS = _project(lambda b: b.takes("QP") and b.duals)
QCQP_BACKENDS = _project(lambda b: b.takes("QCQP"))
LP_BACKENDS = _project(lambda b: b.takes("LP"))
MILP_BACKENDS = _project(lambda b: b.takes("MILP"))
MIQP_BACKENDS = _project(lambda b: b.takes("MIQP"))

#: Gurobi's size-limited (pip) licence: quadratic models up to this many variables.
GUROBI_MAX_VARS = 200
#: SCIP solves QPs by spatial branch and bound: keep its problems tiny.
SCIP_MAX_POINTS = 12

CLASSIC = ("hard_primal", "hard_dual", "soft_l1_primal", "soft_l1_dual",
           "soft_l2_primal", "soft_l2_dual")
FAMILIES = ("hard", "soft_l1", "soft_l2")

# ---------------------------------------------------------------------------------------
# Perturbed runs: SVM_MODELS_PERTURB=1e-12 multiplies every feature value the shared data
# helpers below and svm_models.datasets return by (1 + 1e-12 * N(0, 1)) (seeded by the data,
# so a run is reproducible): the suite must give the same answers to tolerance, so that a
# different CPU or BLAS cannot turn a pass into a failure (`make test-perturbed`).

#: relative size of the perturbation (0: none, the normal run)
PERTURB = float(os.environ.get("SVM_MODELS_PERTURB", "0") or 0.0)


def perturbed(X):
    """``X`` perturbed at the relative level :data:`PERTURB` (``X`` itself when 0); zeros
    stay zeros."""
    if not PERTURB:
        return X
    import zlib

    A = np.asarray(X, dtype=float)
    rng = np.random.default_rng(zlib.crc32(A.tobytes()))
    return A * (1.0 + PERTURB * rng.standard_normal(A.shape))


def _perturb_datasets() -> None:
    """Make svm_models.datasets return perturbed features (test modules import the
    functions after this conftest has run)."""
    from svm_models import datasets

    def wrap(fn, positions):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            out = list(fn(*args, **kwargs))
            for k in positions:
                out[k] = perturbed(out[k])
            return tuple(out)
        return inner

    for name, positions in (("toy", (0,)), ("teaching_2d", (0,)), ("benchmark_data", (0,)),
                            ("breast_cancer", (0, 1))):
        setattr(datasets, name, wrap(getattr(datasets, name), positions))


if PERTURB:
    _perturb_datasets()

#: The six-point golden toy (DESIGN.md, "Testing"): for the hard margin and the 1-norm
#: soft margin with C = 1, alpha = 0.25 on points 1 and 3, w = (0.5, 0.5), b = 0.
TOY_X = perturbed(np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype=float))
TOY_Y = np.array([-1, -1, -1, 1, 1, 1])


def on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@functools.lru_cache(maxsize=None)
def _listing() -> dict:
    return sm.solvers()


@functools.lru_cache(maxsize=None)
def agreement():
    """``benchmarks/agreement.py`` as a module: the random valid problems, libsvm's reference
    and the brute-force certificate at the classifier returned."""
    import importlib.util

    path = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "agreement.py")
    spec = importlib.util.spec_from_file_location("agreement", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def backend_available(name: str) -> bool:
    return bool(_listing().get(name, {}).get("available"))


def missing_backends(names=QP_BACKENDS) -> list[str]:
    return [n for n in names if not backend_available(n)]


def require(name: str) -> str:
    """Return ``name`` if the backend is usable; else skip (outside CI) or fail (on CI)."""
    if not backend_available(name):
        msg = f"backend {name!r} is not installed or not usable here"
        if on_ci():
            pytest.fail(f"{msg}: on CI (CI=true) every project backend must be present")
        pytest.skip(msg)
    return name


def usable(names) -> list[str]:
    """The usable backends among ``names``; on CI a missing one fails the test."""
    out = []
    for n in names:
        if backend_available(n):
            out.append(n)
        elif on_ci():
            pytest.fail(f"backend {n!r} is missing on CI (CI=true)")
    return out


@pytest.fixture(params=QP_BACKENDS)
def qp_backend(request) -> str:
    return require(request.param)


@pytest.fixture(params=FAST_BACKENDS)
def fast_backend(request) -> str:
    return require(request.param)


@pytest.fixture(params=DUAL_BACKENDS)
def dual_backend(request) -> str:
    return require(request.param)


# ---------------------------------------------------------------------------------------
# Seeded data


def blobs(seed: int, l: int = 40, d: int = 2, sep: float = 1.0):
    """Two overlapping Gaussian classes (alternating labels; first feature shifted by
    ``sep * y``): a soft-margin problem with free and bounded support vectors."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(l) % 2 == 0, 1, -1)
    X = rng.normal(size=(l, d))
    X[:, 0] += sep * y
    return perturbed(X), y


def separable(seed: int, l: int = 30, d: int = 2, gap: float = 0.4):
    """Linearly separable data: labels from a random hyperplane, points closer to it than
    ``gap`` dropped (and redrawn), so a hard margin exists (also in the poly and rbf
    feature spaces)."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    c = 0.3 * rng.normal()
    pts = []
    while len(pts) < l:
        x = rng.uniform(-2.0, 2.0, size=d)
        s = x @ u + c
        if abs(s) >= gap:
            pts.append(x)
    X = np.array(pts)
    y = np.where(X @ u + c > 0, 1, -1)
    if abs(y.sum()) == l:  # both classes, whatever the draw
        y[0] = -y[0]
        X[0] = X[0] - 2 * (X[0] @ u + c) * u
    return perturbed(X), y


def eval_points(seed: int, m: int = 15, d: int = 2) -> np.ndarray:
    """Points to compare decision functions on (off the training set)."""
    return np.random.default_rng(10_000 + seed).normal(scale=1.5, size=(m, d))


def rbf_gram(A, B, gamma):
    from sklearn.metrics.pairwise import rbf_kernel

    return rbf_kernel(A, B, gamma=gamma)


def data_for(formulation: str, seed: int = 0, l: int = 40, d: int = 2):
    """Separable data for a hard margin, overlapping blobs otherwise."""
    if formulation.startswith("hard"):
        return separable(seed, l=l, d=d)
    return blobs(seed, l=l, d=d)


def c_kw(formulation: str, C: float = 1.0) -> dict:
    return {} if formulation.startswith("hard") else {"C": C}


def n_vars(model) -> int:
    """Number of variables the solver sees (slacks and auxiliaries included)."""
    import pyomo.environ as pyo

    return sum(1 for v in model.component_data_objects(pyo.Var, active=True) if not v.fixed)


#: Wall-clock limit handed to every solve of the tests: a backend that stalls fails its
#: test (SolveFailedError, status time_limit) instead of hanging the suite.
TEST_TIME_LIMIT = 10.0


def edited_path(solver: str) -> str:
    """The path an edited model takes (the record no longer proves it whole): ``"mixed"``
    -- the record for the proved part, Pyomo for the edits -- through a backend's matrix
    interface, ``"general"`` for a backend without one (SCIP)."""
    return "general" if sm.solvers.backend(solver).matrix is None else "mixed"


def solve_checked(model, solver: str, **kw):
    """``svm_models.solve`` after checking the test respects the Gurobi size rule, with a
    time limit (a stalled backend fails the test instead of hanging the suite)."""
    if solver == "gurobi":
        assert n_vars(model) <= GUROBI_MAX_VARS, "test design: too large for Gurobi's pip licence"
    kw.setdefault("time_limit", TEST_TIME_LIMIT)
    return sm.solve(model, solver, **kw)


def fit_checked(X, y, formulation: str, solver: str, **params):
    """Build and solve (``params`` mix hyperparameters and solver options), size-checked."""
    solve_keys = {"tol", "time_limit", "iter_limit", "threads", "verbose", "options", "path",
                  "raise_on_failure"}
    skw = {k: params.pop(k) for k in list(params) if k in solve_keys}
    if solver == "scip":
        assert len(y) <= SCIP_MAX_POINTS, "test design: too large for SCIP"
    model = sm.build(formulation, X, y, **params)
    return solve_checked(model, solver, **skw)


# ---------------------------------------------------------------------------------------
# Comparisons


def rel_close(a: float, b: float, rtol: float) -> bool:
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def assert_rel(a: float, b: float, rtol: float, what: str = "value"):
    assert rel_close(a, b, rtol), f"{what}: {a!r} vs {b!r} (relative tolerance {rtol})"


def decision_values(sol, X_eval, K_eval=None):
    """Decision values of a Solution on points (``K_eval`` for a precomputed kernel)."""
    return sol.decision_function(K_eval if sol.kernel.name == "precomputed" else X_eval)


def assert_same_table(a, b):
    """Two cross-validation tables (methods.cv) equal: every column but the timings, bit for
    bit."""
    assert a.keys() == b.keys()
    assert a["params"] == b["params"]
    for k in a:
        if "time" not in k and k != "params":
            np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]), err_msg=k)


def assert_same_classifier(s1, s2, X_eval, *, K_eval=None, obj_rtol=1e-6, atol=1e-5,
                           compare_alpha=True):
    """Two Solutions of the same problem: objective (relative), w, b, decision values
    (absolute, scaled by max(1, |value|)) and, when asked, alpha."""
    assert s1.status == s2.status == "optimal"
    assert_rel(s1.objective, s2.objective, obj_rtol, "objective")
    scale_b = max(1.0, abs(s2.b))
    assert abs(s1.b - s2.b) <= atol * scale_b, f"b: {s1.b!r} vs {s2.b!r}"
    if s1.w is not None and s2.w is not None:
        np.testing.assert_allclose(s1.w, s2.w, atol=atol * max(1.0, np.abs(s2.w).max()),
                                   rtol=0, err_msg="w")
    f1 = decision_values(s1, X_eval, K_eval)
    f2 = decision_values(s2, X_eval, K_eval)
    np.testing.assert_allclose(f1, f2, atol=atol * max(1.0, np.abs(f2).max()), rtol=0,
                               err_msg="decision values")
    if compare_alpha:
        scale = max(1.0, float(np.max(s2.alpha)))
        np.testing.assert_allclose(s1.alpha, s2.alpha, atol=atol * scale, rtol=0,
                                   err_msg="alpha")


@pytest.fixture
def quiet_pyomo():
    """Pyomo's logger at ERROR for one test (its solvers warn about values 1e-9 outside a
    bound when loading them); used by modules that solve with Pyomo's own solvers."""
    logger = logging.getLogger("pyomo.core")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)

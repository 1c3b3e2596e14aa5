"""Many fits at once: k-fold cross-validation over a grid of C and of the other
hyperparameters, for two classes or many (one-vs-rest, one-vs-one), run serially, over
processes (joblib) or over a Dask cluster.

The unit of work, a *task*, is one (fold, setting, binary problem): a setting is one point of
the grid of the other hyperparameters (``gamma``, ``lam``, ``kernel``, ...), a binary problem
the whole problem (two classes), class ``k`` against the rest (``"ovr"``) or class ``j``
against class ``i`` (``"ovo"``). A task builds one model on the fold's training points and
walks the path of C on it (:func:`~svm_models.methods.paths.fit_path`: mutable C, warm
re-solves), returning the decision values of every C on the fold's test points; the table is
assembled from them in a fixed order, so it does not depend on where or in which order the
tasks ran. Every task runs with one BLAS thread, in every mode, so that its arithmetic is the
same everywhere: the tables of a serial, a joblib and a Dask run are equal bit for bit.

One-vs-one on a backend that solves all the pairs in one call (libsvm, the rbf or linear
kernel: :func:`pairs_apply`) makes one task of a (fold, setting) instead (:func:`_pairs_task`),
as ``SVC`` trains: the fold's rbf matrix formed once for its pairs and its Cs, one backend call
per C for all the pairs, each pair's answer certified as one fit's; a pair that call does not
answer walks its own path, as above.

What every task reads (the data, the folds, the grid: a :class:`Job`) is shipped to each
worker once: on Dask it is scattered to every worker (``client.scatter(job,
broadcast=True)``) and the tasks receive its future -- sent again if every copy is lost
(:class:`_Shared`), so that a worker that dies costs only its own tasks; over processes (``n_jobs``) it is dumped
to a temporary file once, and each worker loads it (memory-mapped) the first time it runs a
task of the job (:class:`_Pool`).

Over processes the tasks are futures on joblib's reusable loky executor, ``n_jobs`` in flight,
the next one chosen as each finishes, longest first (:func:`_longest_first`). With a ``refit``
(:class:`~svm_models.estimator.SVMClassifierCV` gives one), the best row is refitted on all
data (:func:`_refit`); in a parallel run, a worker that finds no task left while others still
run refits the best row so far (*speculative refit*, :class:`_Speculation`), which is taken if
the final best row is the same -- so the refit mostly runs in the tail of the run instead of
after it. Either way the refit is the same call, and its result the same bit for bit.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from concurrent.futures import BrokenExecutor, Future
from dataclasses import dataclass
from itertools import islice

import numpy as np

from ..api import fit_pairs, pairs_backend, split_solve_options
from ..data import as_matrix, as_weights
from ..errors import DataError, MissingDependencyError, ParameterError, SVMError, plain
from ..formulations import get as lookup
from ..formulations import check_params, hyperparameters
from ..threads import one_thread
from ..formulations import names as formulation_names
from ..kernels import make_kernel
from ..progress import Progress
from ..solvers import backend
from ..status import Status
from .paths import fit_path
from .radius import fit as fit_one

#: Multiclass schemes: one-vs-rest and one-vs-one.
MULTI_CLASS = ("ovr", "ovo")
#: ``Cs=None``: as scikit-learn's ``LogisticRegressionCV(Cs=10)``.
DEFAULT_CS = tuple(np.logspace(-4, 4, 10).tolist())

_LOADS = 0  # how many times this process has unpickled a Job


# ---------------------------------------------------------------------------------------
# Multiclass: the binary problems and how their decision values combine


def binary_problems(n_classes: int, multi_class: str = "ovr") -> list:
    """The binary problems as ``(positive class, negative classes)`` (class indices).

    Two classes: ``[(1, (0,))]``. ``"ovr"``: class ``k`` against all others, for each k.
    ``"ovo"``: class ``j`` against class ``i`` for ``i < j`` in that order (as
    scikit-learn's ``OneVsOneClassifier``).
    """
    if multi_class not in MULTI_CLASS:
        raise ParameterError(f"multi_class must be 'ovr' or 'ovo'; got {multi_class!r}")
    if n_classes == 2:
        return [(1, (0,))]
    if multi_class == "ovr":
        return [(k, tuple(c for c in range(n_classes) if c != k)) for k in range(n_classes)]
    return [(j, (i,)) for i in range(n_classes) for j in range(i + 1, n_classes)]


def problem_points(y_index: np.ndarray, idx: np.ndarray, problem) -> tuple:
    """The points of ``idx`` that take part in ``problem`` and their targets (+1 for the
    positive class, -1 for the negative ones)."""
    pos, neg = problem
    yi = y_index[idx]
    keep = (yi == pos) | (yi == neg[0] if len(neg) == 1 else np.isin(yi, neg))   # (a pair:
    # one comparison, not isin's set machinery -- one-vs-one's 45 pairs on digits)
    return idx[keep], np.where(yi[keep] == pos, 1, -1)


def combine(decisions, n_classes: int, multi_class: str = "ovr",
            trained=None) -> np.ndarray:
    """The decision function from the binary problems' decision values (a list, in the order
    of :func:`binary_problems`).

    Two classes: the values, shape (n,) (positive for class 1). ``"ovr"``: shape
    (n, n_classes), column k the value of class k against the rest. ``"ovo"``: shape
    (n, n_classes), the votes of each class plus the summed confidences squashed into
    (-1/3, 1/3), scikit-learn's ``OneVsOneClassifier`` rule (a pair votes for its positive
    class where its value is >= 0): the argmax is the class with most votes, ties going to
    the larger summed confidence.

    ``trained``: for each problem whether it was trained (None: all). A problem not trained
    (cross-validation's fold without training points of one of its classes,
    :data:`NOT_TRAINED`) counts as no classifier, as ``SVC`` fitted on that fold has none:
    a pair votes for neither class, a class's column against the rest is never the largest
    (-inf). (Any other value, NaN too, is read as it is.)
    """
    if n_classes == 2:
        return np.asarray(decisions[0])
    if trained is None:
        trained = [True] * len(decisions)
    if multi_class == "ovr":
        return np.column_stack([f if t else np.full(len(f), -np.inf)
                                for f, t in zip(decisions, trained)])
    n = len(decisions[0])
    votes = np.zeros((n, n_classes))
    conf = np.zeros((n, n_classes))
    for (j, (i,)), f, t in zip(binary_problems(n_classes, "ovo"), decisions, trained):
        if not t:
            continue
        conf[:, i] -= f
        conf[:, j] += f
        votes[:, j] += f >= 0
        votes[:, i] += f < 0
    return votes + conf / (3 * (np.abs(conf) + 1))


def predicted_index(scores: np.ndarray, multi_class: str = "ovr",
                    break_ties: bool = False) -> np.ndarray:
    """Class indices from :func:`combine`'s output (binary: 1 where the value is >= 0): the
    argmax; one-vs-one as ``SVC`` predicts, the class of most votes, a tie going to the
    first of the tied classes (with ``break_ties``: the argmax, the larger summed
    confidence)."""
    if scores.ndim == 1:
        return (scores >= 0).astype(int)
    if multi_class == "ovo" and not break_ties:   # the votes: the confidences are in (-1/3, 1/3)
        return np.argmax(np.floor(scores + 0.5), axis=1)
    return np.argmax(scores, axis=1)


# ---------------------------------------------------------------------------------------
# The job and its tasks


@dataclass
class Job:
    """What every task reads (on Dask, shipped to each worker once).

    X : (l, d) data, or the (l, l) Gram matrix (``precomputed``);  y : (l,) class indices;
    classes : the labels (``classes[y]`` are the labels of the points);
    folds : list of (train, test) index arrays;  problems : :func:`binary_problems`;
    settings : list of dicts (the grid without C);  Cs : the C path (empty: none);
    path_formulation : the formulation the path is walked on;  tuned_formulation : the C-tuning
    formulation solved once per task (None: none);  fixed : hyperparameters common to every
    setting;  solver, solve_kw : backend and solve options.
    """

    X: np.ndarray
    y: np.ndarray
    classes: np.ndarray
    folds: list
    problems: list
    settings: list
    Cs: tuple
    path_formulation: str
    tuned_formulation: str | None
    fixed: dict
    solver: str
    solve_kw: dict
    precomputed: bool
    #: per-point factors of C (``sample_weight``), or None
    weight: np.ndarray | None = None

    @property
    def solves_per_task(self) -> int:
        """Solves of each task (points along its path): the Cs, then the C-tuning solve (or the one solve of a
        formulation without C)."""
        return max(len(self.Cs) + (self.tuned_formulation is not None), 1)

    def __setstate__(self, state):
        global _LOADS
        _LOADS += 1
        self.__dict__.update(state)


def job_loads() -> int:
    """How many times this process has received (unpickled) a cross-validation's shared data:
    on a Dask worker, once per job that ran tasks there."""
    return _LOADS


def _segments(job: Job) -> list:
    """The solves of a task: ``(formulation, Cs or None)``; None is a single fit."""
    out = []
    if job.Cs:
        out.append((job.path_formulation, job.Cs))
    if job.tuned_formulation is not None or not job.Cs:
        out.append((job.tuned_formulation or job.path_formulation, None))
    return out


def _hyperparameters(job: Job, formulation: str, s: int) -> dict:
    """The hyperparameters of setting ``s`` for ``formulation``, checked. With C tuning the
    path (``soft_l2_dual``) and the QCQP share the settings: each takes its own."""
    given = {**job.fixed, **job.settings[s]}
    if job.tuned_formulation is not None:
        given = {k: v for k, v in given.items() if k in lookup(formulation).params}
    return check_params(formulation, given)


def resolved_gamma(formulation: str, params: dict, X) -> dict:
    """``params`` with a ``gamma`` resolved from the data (``"scale"``, ``"auto"``, or the
    formulation's default of them) replaced by its value on all of ``X``, as ``SVC`` resolves
    it before it splits the classes (:func:`~svm_models.kernels.make_kernel`'s rule): every
    binary problem of a multiclass fit then has the same kernel."""
    f = lookup(formulation)
    if "gamma" not in f.params:
        return params
    kernel = params.get("kernel", f.defaults.get("kernel"))
    gamma = params.get("gamma", f.defaults.get("gamma"))
    if kernel not in ("rbf", "poly") or not isinstance(gamma, str):
        return params
    # (gamma's rule reads only X's variance and width: not the degree, not coef0)
    return {**params, "gamma": make_kernel(kernel, np.asarray(X), gamma=gamma).gamma}


def _fold_hyperparameters(job: Job, formulation: str, s: int, train) -> dict:
    """:func:`_hyperparameters` of setting ``s`` on the training fold ``train``, a gamma
    resolved from the data the fold's (:func:`resolved_gamma`), as the estimator's on all its
    points and ``SVC``'s in ``GridSearchCV`` -- with more than two classes not each binary
    problem's own (two classes: the same points; a precomputed kernel has no gamma)."""
    return resolved_gamma(formulation, _hyperparameters(job, formulation, s), job.X[train])


def _task(job: Job, key: tuple) -> dict:
    """One (fold, setting, problem): decision values of every point on the test fold (a
    (fold, setting) of one-vs-one pairs solved together: :func:`_pairs_task`)."""

    f, s, p = key
    if p is None:
        return _pairs_task(job, key)
    train, test = job.folds[f]
    idx, target = problem_points(job.y, train, job.problems[p])
    if len(job.classes) > 2 and not ((target > 0).any() and (target < 0).any()):
        return _not_trained(job, key, len(test))
    if job.precomputed:
        Xtr, Xte = job.X[np.ix_(idx, idx)], job.X[np.ix_(test, idx)]
    else:
        Xtr, Xte = job.X[idx], job.X[test]
    n = job.solves_per_task
    out = {"key": key, "values": np.full((n, len(test)), np.nan), "status": ["optimal"] * n,
           "fit_time": np.zeros(n), "score_time": np.zeros(n), "C": np.full(n, np.nan)}
    options = {**job.solve_kw, "raise_on_failure": False}
    weights = {} if job.weight is None else {"sample_weight": job.weight[idx]}
    k = 0
    with one_thread():
        for formulation, Cs in _segments(job):
            m = len(Cs) if Cs else 1
            t0 = time.perf_counter()
            try:
                hyper = _fold_hyperparameters(job, formulation, s, train)
                exact = _exact_path(job, formulation, Cs, hyper, Xtr, target, Xte, weights)
                if exact is not None:   # every C from the one exact path of the fold
                    out["fit_time"][k:k + m] = (time.perf_counter() - t0) / m
                    out["values"][k:k + m], out["C"][k:k + m] = exact, Cs
                    k += m
                    continue
                if Cs:
                    sols = fit_path(Xtr, target, Cs, formulation, job.solver, progress=False,
                                    **hyper, **weights, **options)
                else:
                    sols = [fit_one(Xtr, target, formulation, job.solver, **hyper, **weights,
                                    **options)]
            except Exception as exc:  # recorded in the table; the other tasks go on
                out["status"][k:k + m] = [f"{type(exc).__name__}: {exc}"] * m
                out["fit_time"][k:k + m] = (time.perf_counter() - t0) / m
                k += m
                continue
            out["fit_time"][k:k + m] = (time.perf_counter() - t0) / m
            for sol in sols:
                t1 = time.perf_counter()
                out["status"][k] = sol.status.value
                out["C"][k] = np.nan if sol.C is None else sol.C
                if sol.status is Status.optimal:
                    out["values"][k] = sol.decision_function(Xte)
                out["score_time"][k] = time.perf_counter() - t1
                k += 1
    return out


#: the status of a binary problem of a multiclass fit that a fold does not train: its
#: training points lack one of the problem's classes (a class with fewer points than folds).
#: Not a failure: ``SVC`` fitted on that fold knows the classes present and never predicts
#: the others; the problem then counts as no classifier (:func:`combine`'s ``trained``)
NOT_TRAINED = "not trained: the fold's training points lack one of the problem's classes"


def _trained(res: dict) -> bool:
    """Whether a task's result is of a problem its fold trained (not :data:`NOT_TRAINED`:
    then it has no decision values and no C*)."""
    return res["status"][0] != NOT_TRAINED


def _not_trained(job: Job, key: tuple, n_test: int) -> dict:
    """:func:`_task`'s result for a problem the fold does not train (:data:`NOT_TRAINED`):
    its decision values NaN, no time -- a failure where the fold's training points hold one
    class only (no problem of it is trained: ``SVC`` refuses that fit, as the data's
    validation refuses it in every binary fit)."""
    n = job.solves_per_task
    present = np.unique(job.y[job.folds[key[0]][0]])
    status = NOT_TRAINED if present.size > 1 else (
        f"DataError: the fold's training points hold one class "
        f"({job.classes[present[0]].item()!r}); a classifier needs two")
    return {"key": key, "values": np.full((n, n_test), np.nan), "status": [status] * n,
            "fit_time": np.zeros(n), "score_time": np.zeros(n), "C": np.full(n, np.nan)}


def pairs_apply(job: Job) -> bool:
    """Whether each (fold, setting) of ``job`` is one task solving all its one-vs-one pairs
    together (:func:`_pairs_task`): more than two classes in one-vs-one, ``soft_l1_dual``
    over fewer than :data:`PATH_MIN_CS` Cs (from there each pair follows its exact path),
    in every setting the rbf kernel (gamma the only other hyperparameter) or the linear one
    (no other), on a backend that declares ``pairs`` (:func:`~svm_models.api.pairs_backend`:
    libsvm, named or first under ``"auto"``)."""
    ovo = len(job.classes) > 2 and all(len(neg) == 1 for _, neg in job.problems)
    if (not ovo or job.tuned_formulation is not None   # (precomputed: neither kernel)
            or job.path_formulation != "soft_l1_dual" or not job.Cs
            or len(job.Cs) >= PATH_MIN_CS):
        return False
    for setting in job.settings:
        hyper = {**job.fixed, **setting}
        kernel = _kernel_name(job, hyper)
        if not (kernel == "rbf" and set(hyper) <= {"kernel", "gamma"}
                or kernel == "linear" and set(hyper) <= {"kernel"}):
            return False
    return pairs_backend(job.path_formulation, job.solver, job.solve_kw) is not None


def _kernel_name(job: Job, hyper: dict):
    """The kernel of a setting's hyperparameters ``hyper``: given, or the path formulation's
    default."""
    return hyper.get("kernel", lookup(job.path_formulation).defaults["kernel"])


def _pairs_task(job: Job, key: tuple) -> dict:
    """One (fold, setting) of one-vs-one pairs (``key``'s problem None), solved as ``SVC``
    trains them: the rbf kernel's matrices of the training fold and of the test points
    against it formed once, the pairs' problems made once, then at each C one backend call
    for all the pairs (:func:`~svm_models.api.fit_pairs`, each pair's answer certified as
    one fit's), every pair's decision values on the test fold one product -- with the test
    matrix, or for the linear kernel of the test points with the pairs' ``w``, the
    classifiers their certificates describe. A pair the call does not answer at some C (not
    optimal, refused by its certificate, or the call raising) walks its own path of fits, as
    without this task (:func:`_task`); a pair of a class the fold's training points lack is
    not trained (:func:`_task`: :data:`NOT_TRAINED`), the others solved together as
    always. Returns ``{"parts"}``: one result per pair, as
    :func:`_task` returns them; the task's time shared equally by its pairs and Cs (as a
    path's by its Cs)."""
    f, s, _ = key
    fold, test = job.folds[f]
    # the training points by class (each class's in their order): each pair's points are
    # then two runs of the fold's matrix, read as slices (the pairs' answers are the same:
    # libsvm orders a pair's points by class itself)
    train = fold[np.argsort(job.y[fold], kind="stable")]
    n, P = len(job.Cs), len(job.problems)
    y_tr = job.y[train]
    local = [problem_points(y_tr, np.arange(len(train)), prob)[0] for prob in job.problems]
    parts = [{"key": (f, s, p), "values": np.full((n, len(test)), np.nan),
              "status": ["optimal"] * n, "fit_time": np.zeros(n), "score_time": np.zeros(n),
              "C": np.asarray(job.Cs, dtype=float)} for p in range(P)]
    weight = None if job.weight is None else job.weight[train]
    alone: set = set()   # the pairs that walk their own path
    with one_thread():
        t0 = time.perf_counter()
        # (gamma a number, from the fold as each pair's own fit reads it: _task)
        hyper = _fold_hyperparameters(job, job.path_formulation, s, fold)
        Xtr, Xte = job.X[train], job.X[test]
        if _kernel_name(job, hyper) == "rbf":
            kern = make_kernel("rbf", gamma=hyper["gamma"])
            K, K_test = kern.gram(Xtr), kern.gram(Xte, Xtr)
        else:   # (linear: libsvm evaluates it, the certificates read X, each pair is its w)
            K = K_test = None
        has = np.zeros(len(job.classes), dtype=bool)
        has[y_tr] = True   # (a class with fewer points than folds may be absent here)
        trained = [p for p, (j, (i,)) in enumerate(job.problems) if has[i] and has[j]]
        try:   # (the pairs of the classes present, relabelled 0..k-1 in their order)
            got = fit_pairs(Xtr, (np.cumsum(has) - 1)[y_tr], [local[p] for p in trained],
                            job.path_formulation, job.solver, hyper, weight,
                            dict(job.solve_kw), gram=K, Cs=job.Cs) if trained else [[]] * n
            at = [[dict(zip(trained, sols)).get(p) for p in range(P)] for sols in got]
        except Exception:  # (an error of the call: each pair then as always)
            at = [[None] * P] * n
        share = (time.perf_counter() - t0) / (n * P)   # (the task's time, shared equally)
        for k, sols in enumerate(at):
            t1 = time.perf_counter()   # (every pair's decision values: one product, of
            # the classifier each certified: the expansion, or the linear kernel's w)
            coef = np.zeros((Xtr.shape[1] if K_test is None else len(train), P))
            for p, sol in enumerate(sols):
                if sol is None:
                    alone.add(p)
                elif K_test is None:
                    coef[:, p] = sol.w
                else:
                    coef[local[p][sol.support], p] = sol.dual_coef[sol.support]
            values = (Xte if K_test is None else K_test) @ coef
            each = (time.perf_counter() - t1) / P
            for p, sol in enumerate(sols):
                if sol is not None:
                    parts[p]["values"][k] = values[:, p] + sol.b
                    parts[p]["fit_time"][k] = share
                    parts[p]["score_time"][k] = each
    for p in sorted(alone):
        parts[p] = _task(job, (f, s, p))
    return {"parts": parts}


def _parts(res: dict) -> list:
    """A task's results, one per (fold, setting, problem): a pairs task's parts, or itself."""
    return res["parts"] if "parts" in res else [res]


#: the hyperparameters the exact regularization path takes (with sample_weight)
PATH_PARAMS = frozenset({"kernel", "gamma", "degree", "coef0"})
#: the fewest Cs a fold's exact path is followed for: the whole path costs about as much as
#: 20 fits on ``make_classification(1000, 20)`` (rbf, 5 folds: 2 Cs 4.1 s against 0.75 s of
#: fits, 10 Cs 3.7 s against 2.1 s, 20 Cs 4.2 s against 4.0 s) and 10 on one digit against
#: the rest (10 Cs 3.7 s against 3.4 s, 20 Cs 3.8 s against 5.3 s); below, the C path of fits
PATH_MIN_CS = 20


def _exact_path(job: Job, formulation: str, Cs, hyper: dict, Xtr, target, Xte, weights):
    """The decision values on the test fold at every C of ``Cs`` from the exact
    regularization path of the training fold (:func:`~svm_models.methods.regularization_path.
    regularization_path`): for ``soft_l1_dual`` with ``solver="auto"``, at least
    :data:`PATH_MIN_CS` Cs and no option the path does not take (``kernel_rank``,
    ``quad_form``...). None where it does not apply, or where the path cannot be followed
    (the C path of solves then runs)."""
    from .regularization_path import regularization_path

    if (formulation != "soft_l1_dual" or not Cs or len(Cs) < PATH_MIN_CS or job.solver != "auto"
            or not set(hyper) <= PATH_PARAMS or job.precomputed):
        return None
    try:
        path = regularization_path(Xtr, target, C_min=min(Cs), C_max=max(Cs), **hyper,
                                   **weights)
        return path.decision_function(Xte, Cs)
    except SVMError:
        return None


#: ``Cs="path"`` searches C in this interval
PATH_C_RANGE = (1e-4, 1e4)


def whole_path_Cs(X, y, formulation: str, solver: str, folds, settings: list, fixed: dict,
                  weight) -> tuple:
    """``Cs="path"``: one C inside each interval of C on which every fold's test errors are
    constant, for every setting of the grid, within :data:`PATH_C_RANGE`. On a segment of a
    fold's exact path the decision values are linear in 1/C (alpha/C and b/C are), so a
    test point's prediction changes only at a breakpoint or at the root of that line: the
    breakpoints and roots of every fold cut the interval into pieces, and the geometric
    midpoint of each piece stands for it. For ``soft_l1_dual``, two classes, solver auto.

    ``(Cs, done)``: ``done[(fold, setting)]`` is ``(values, seconds)``, the test fold's
    decision values at every C of ``Cs`` read from the same path (each fold's path is
    followed once) and the path's time; ``settings`` as the job's (:func:`_settings`)."""
    from .regularization_path import regularization_path

    lo, hi = PATH_C_RANGE
    if formulation != "soft_l1_dual" or solver != "auto" or np.unique(y).size != 2:
        raise ParameterError('Cs="path" (the exact regularization path) is for soft_l1_dual '
                             "with solver='auto' and two classes; give a list of Cs otherwise")
    cuts, paths = [lo, hi], {}
    for s, setting in enumerate(settings):
        hyper = {**fixed, **setting}
        if not set(hyper) <= PATH_PARAMS:
            raise ParameterError(f'Cs="path" takes only {sorted(PATH_PARAMS)} as other '
                                 f"hyperparameters; got {sorted(hyper)}")
        for f, (train, test) in enumerate(folds):
            w = {} if weight is None else {"sample_weight": weight[train]}
            t0 = time.perf_counter()
            path = regularization_path(X[train], y[train], C_min=lo, C_max=hi, **hyper, **w)
            paths[f, s] = path, time.perf_counter() - t0
            cuts += _prediction_changes(path, X[test], lo, hi)
    cuts = np.unique(np.clip(cuts, lo, hi))
    Cs = tuple(np.sqrt(cuts[:-1] * cuts[1:]).tolist())
    done = {(f, s): (path.decision_function(X[folds[f][1]], Cs), t)
            for (f, s), (path, t) in paths.items()}
    return Cs, done


def _prediction_changes(path, Xte, lo: float, hi: float) -> list:
    """The Cs in ``[lo, hi]`` where a test point's prediction may change along ``path``:
    its breakpoints, where b changes slope without an elbow (:meth:`~svm_models.methods.
    regularization_path.RegularizationPath.bias_knots`) and, between two of these, the root
    of each point's decision value: f/C is linear in 1/C there (on an elbow's segment alpha/C
    and b/C are; without one f = C g + b with b linear in C between its knots)."""
    knots = np.unique(np.concatenate([[lo], path.breakpoints, path.bias_knots(lo, hi), [hi]]))
    H = path.decision_function(Xte, knots)
    lam = 1.0 / knots
    a, b = H[:-1], H[1:]
    k, j = np.nonzero(np.sign(a) != np.sign(b))
    with np.errstate(divide="ignore", invalid="ignore"):
        ha, hb = a[k, j] / knots[k], b[k, j] / knots[k + 1]
        root = lam[k] + (lam[k + 1] - lam[k]) * ha / (ha - hb)
    return [*knots.tolist(), *(1.0 / root[np.isfinite(root) & (root > 0)]).tolist()]


def _from_path(job: Job, key: tuple, values: np.ndarray, seconds: float) -> dict:
    """A task's result read from its fold's path (``Cs="path"``: :func:`whole_path_Cs`)."""
    n = len(job.Cs)
    return {"key": key, "values": np.asarray(values), "status": ["optimal"] * n,
            "fit_time": np.full(n, seconds / n), "score_time": np.zeros(n),
            "C": np.asarray(job.Cs, dtype=float)}


def _failed(job: Job, key: tuple, exc: BaseException) -> dict:
    if key[2] is None:   # (a pairs task: each of its pairs failed)
        return {"parts": [_failed(job, (*key[:2], p), exc) for p in range(len(job.problems))]}
    n = job.solves_per_task
    return {"key": key, "values": np.full((n, len(job.folds[key[0]][1])), np.nan),
            "status": [f"{type(exc).__name__}: {exc}"] * n, "fit_time": np.full(n, np.nan),
            "score_time": np.full(n, np.nan), "C": np.full(n, np.nan)}


def _note(job: Job, key: tuple) -> str:
    f, s, p = key
    setting = " ".join(f"{k}={v}" for k, v in job.settings[s].items())
    problem = (f" problem {p + 1}/{len(job.problems)}" if p is not None and len(job.problems) > 1
               else f" {len(job.problems)} pairs" if p is None else "")
    return f"fold {f + 1}{problem} {setting}".rstrip()


def _run_serial(job, keys, bar):
    for key in keys:
        res = _task(job, key)
        bar.step(_note(job, key))
        yield res


def _run_done(job, keys, done, bar):
    for key in keys:
        res = _from_path(job, key, *done[key[:2]])
        bar.step(_note(job, key))
        yield res


def _run_joblib(job, keys, pool, bar, speculation=None):
    """The tasks over the workers of ``pool`` (a :class:`_Pool`), as futures: as many in flight
    as there are workers, the next one chosen each time one finishes (:func:`_longest_first`,
    by the fit times of the tasks finished so far). A worker that dies breaks the whole pool:
    the tasks then in flight are recorded as failed (which of them killed it is unknown) and
    the rest go on in a new pool. When no task is left to give out and a worker is idle,
    ``speculation`` (a :class:`_Speculation`) gives it the refit of the best row so far."""
    from concurrent.futures import FIRST_COMPLETED, wait

    cost: dict = {}     # (setting, problem) -> the fit time of a finished task of it
    order = _longest_first(keys, cost)
    running: dict = {}  # future -> key
    try:
        while True:
            idle = pool.n_workers - len(running)
            for key in islice(order, idle):
                running[pool.submit(_task, key)] = key
            if (speculation is not None and running
                    and pool.n_workers - len(running) - speculation.running() > 0):
                speculation.submit(pool)
            if not running:
                return
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                key = running.pop(fut)
                try:
                    res = fut.result()
                except BrokenExecutor as exc:  # a worker died: recorded, the others go on
                    res = _failed(job, key, exc)
                else:
                    cost[key[1:]] = float(sum(np.sum(r["fit_time"]) for r in _parts(res)))
                bar.step(_note(job, key))
                yield res
    finally:
        for fut in running:  # an error, or the caller stopped early: none left queued
            fut.cancel()


def _executor(n_workers: int):
    """joblib's reusable loky executor with ``n_workers`` workers (a new one if the last
    broke): joblib's memmapping flavour, the one ``joblib.Parallel`` uses, for a plain loky
    executor would be taken over by a later ``Parallel``, which then fails (it expects this
    flavour). benchmarks/cv.py asks the workers' peak memory through it."""
    from joblib.executor import get_memmapping_executor

    return get_memmapping_executor(n_workers, timeout=300)


class _Pool:
    """Processes on this machine for one job (:func:`_executor`), with the job shipped to each
    worker once.

    On entry the job is dumped to a temporary file (``joblib.dump``); a worker loads it,
    memory-mapped, the first time it runs a call of the job (:func:`_shipped`) and keeps it
    for the next ones; on exit the file is removed. A broken executor (a worker died) is
    replaced by a new one at the next :meth:`submit`.
    """

    def __init__(self, job: Job, n_workers: int):
        self.job = job
        self.n_workers = n_workers

    def __enter__(self):
        import joblib

        self._dir = tempfile.TemporaryDirectory(prefix="svm_models_cv_",
                                                ignore_cleanup_errors=True)
        self.path = os.path.join(self._dir.name, "job.pkl")
        joblib.dump(self.job, self.path)
        return self

    def __exit__(self, *exc):
        self._dir.cleanup()

    def submit(self, fn, *args) -> Future:
        """``fn(job, *args)`` in a worker, as a future."""
        try:
            return _executor(self.n_workers).submit(_shipped, self.path, fn, *args)
        except BrokenExecutor:  # it broke since it was handed out: once more, on a new one
            return _executor(self.n_workers).submit(_shipped, self.path, fn, *args)


_SHIPPED: dict = {}  # in a worker: the file of the job it is running -> that job


def _shipped(path: str, fn, *args):
    """``fn(job, *args)`` in a worker of a :class:`_Pool`, the job loaded from ``path`` the
    first time (memory-mapped) and kept (only the latest job)."""
    job = _SHIPPED.get(path)
    if job is None:
        import joblib

        _SHIPPED.clear()
        job = _SHIPPED[path] = joblib.load(path, mmap_mode="r")
    return fn(job, *args)


def _refit(job: Job, refit, params: dict) -> dict:
    """The refit on all data at ``params`` (a row's): ``refit(X, labels, params)``, with one
    BLAS thread as the tasks. The one call made for it, in a worker (speculatively) or in
    this process. Returns ``params``, ``result`` (what ``refit`` returned) and ``time``
    (seconds)."""
    t0 = time.perf_counter()
    with one_thread():
        result = refit(job.X, job.classes[job.y], dict(params))
    return {"params": params, "result": result, "time": time.perf_counter() - t0}


class _Speculation:
    """Speculative refits of a parallel run: the refit of the best row so far, given to a
    worker that would otherwise idle while the last tasks run.

    ``table_so_far()`` is the table of the tasks finished so far (:func:`_table`); the row to
    refit is chosen by :func:`_best_so_far` (:func:`best_index`, as the final one, among the
    complete rows). :meth:`take` gives the refit of the final best row if one was made for it.
    """

    def __init__(self, refit, table_so_far):
        self.refit = refit
        self.table_so_far = table_so_far
        self.futures: dict = {}  # row -> the future of its refit

    def running(self) -> int:
        """Refits not finished (each holds a worker)."""
        return sum(not fut.done() for fut in self.futures.values())

    def submit(self, pool: _Pool) -> None:
        """Refit the best row so far (:func:`_best_so_far`) in a worker of ``pool``, unless it
        already is."""
        table = self.table_so_far()
        row = _best_so_far(table)
        if row is not None and row not in self.futures:
            self.futures[row] = pool.submit(_refit, self.refit, table["params"][row])

    def take(self, row: int) -> dict | None:
        """The refit of ``row`` (waiting for it), or None: none made, or it failed (it is then
        made again in this process, where its error, if any, is raised). The other refits
        are cancelled (one already running finishes in its worker, unused)."""
        for other, fut in self.futures.items():
            if other != row:
                fut.cancel()
        fut = self.futures.get(row)
        if fut is None:
            return None
        try:
            return fut.result()
        except Exception:  # noqa: BLE001 -- a failed speculation is only a missed shortcut
            return None


def _best_so_far(table: dict) -> int | None:
    """The row of a table so far (:func:`_table`) whose refit is worth making before the rest
    finish: :func:`best_index` among the rows whose tasks have all finished; while none has
    a score, among all rows by the folds finished. (A row with a fold still running is left
    out while others are complete: its mean over fewer folds is noisier, and the best of many
    such means flatters.) None while no row has a score."""
    means = np.asarray(table["mean_test_score"], dtype=float)
    complete = table["status"] != "pending"
    if np.isfinite(means[complete]).any():
        table = {**table, "mean_test_score": np.where(complete, means, np.nan)}
    try:
        return best_index(table)
    except SVMError:
        return None


def _longest_first(keys, cost: dict):
    """The keys in an order that shortens the tail of a parallel run: first one task of each
    (setting, problem), then -- as ``cost`` fills with the fit times of finished tasks,
    which the other folds of the same setting resemble -- the most expensive first (the
    longest-processing-time rule). The table does not depend on the order."""
    groups: dict = {}       # (setting, problem) -> its keys not yet given out
    for key in keys:
        groups.setdefault(key[1:], []).append(key)
    for group in groups.values():
        yield group.pop(0)
    while any(groups.values()):
        name = max((g for g in groups if groups[g]), key=lambda g: cost.get(g, 0.0))
        yield groups[name].pop(0)


#: How many times a Dask run sends its shared data again after every copy of it was lost
#: (each time to every worker then running), and how long it waits for a worker to do so.
RESENDS = 3
RESEND_WAIT = 60.0


class _Shared:
    """The job on a Dask cluster: scattered to every worker running (``broadcast=True``: a
    worker that dies leaves the others' copies) and, when every copy was lost (the workers
    holding it died, or only one was running when it was sent), sent again -- at most
    :data:`RESENDS` times, after waiting up to :data:`RESEND_WAIT` s for a worker. The
    scheduler cancels the tasks that were waiting for a lost copy ("lost dependencies");
    :func:`_run_dask` gives them the new one. ``generation`` counts the sends."""

    def __init__(self, client, job: Job):
        self.client, self.job, self.generation, self.gone = client, job, 0, False
        self.future = client.scatter(job, broadcast=True, hash=False)  # once per worker

    def current(self, generation: int) -> bool:
        """Whether a task of ``generation`` can be given a newer copy without sending one."""
        return not self.gone and generation < self.generation

    def send_again(self) -> bool:
        """Scatter the job anew (False: the resends are used up, or one failed)."""
        if self.gone or self.generation >= RESENDS:
            return False
        self.future.release()
        try:
            self.client.wait_for_workers(1, timeout=RESEND_WAIT)
            self.future = self.client.scatter(self.job, broadcast=True, hash=False)
        except Exception:
            self.gone = True   # no copy left to give: the tasks still to come are recorded
            raise
        self.generation += 1
        return True


def _run_dask(job, keys, client, bar):
    """The tasks on a Dask cluster, each reading the scattered job (:class:`_Shared`). A task
    that its worker's death ended is recorded as failed when the scheduler gives up on it
    (``KilledWorker``: it retries on another worker ``allowed_failures`` times); a task that
    only lost its data with a worker (cancelled) is submitted again with the data sent anew,
    so that a lost worker costs only its own tasks."""
    try:
        from distributed import as_completed
    except ImportError:
        raise MissingDependencyError("client= needs dask.distributed: pip install "
                                     "'svm-models[dask]'") from None
    if not (hasattr(client, "scatter") and hasattr(client, "submit")):
        raise ParameterError(f"client must be a dask.distributed.Client; got "
                             f"{type(client).__name__}")
    shared = _Shared(client, job)
    running: dict = {}  # Dask key -> (future, task key, the generation of the data it reads)

    def submit(key):
        fut = client.submit(_task, shared.future, key, pure=False, retries=0)
        running[fut.key] = (fut, key, shared.generation)
        return fut

    pending = as_completed([submit(key) for key in keys])
    try:
        for fut in pending:
            _, key, generation = running.pop(fut.key)
            res = None
            if fut.status == "cancelled":  # its data was lost: again, with the data sent anew
                try:
                    again = shared.current(generation) or shared.send_again()
                except Exception as exc:  # no worker came back, or the scatter failed
                    res = _failed(job, key, exc)
                else:
                    if again:
                        pending.add(submit(key))
                        fut.release()
                        continue
            if res is None:
                try:
                    res = fut.result()
                except Exception as exc:  # a killed worker (KilledWorker), a lost connection
                    res = _failed(job, key, exc)
            fut.release()
            bar.step(_note(job, key))
            yield res
    finally:
        client.cancel([fut for fut, _, _ in running.values()])
        shared.future.release()


# ---------------------------------------------------------------------------------------
# The grid and the table


def _is_grid(name: str, value) -> bool:
    if name == "kernels":  # a list of kernels is one value; a list of such lists a grid
        return isinstance(value, list) and bool(value) and all(isinstance(v, list) for v in value)
    return isinstance(value, list)


def _check_Cs(Cs, formulation):
    """The values of C each model's path walks: none for a formulation that takes no C (the
    hard margin, the nu-SVM: its grid is over its own hyperparameters) or learns it (C
    tuning, whose C* is reported beside the grid)."""
    f = lookup(formulation)
    if "C" not in f.params and not f.learns_C:
        if Cs is not None:
            raise ParameterError(f"{formulation} has no C: leave Cs None (or choose a "
                                 "formulation that takes C)")
        return ()
    if Cs is None:
        return () if f.learns_C else DEFAULT_CS
    if isinstance(Cs, (int, np.integer)) and not isinstance(Cs, bool):
        if Cs < 1:
            raise ParameterError("Cs must be a positive integer or a list of C values; "
                                 f"got {plain(Cs)}")
        return tuple(np.logspace(-4, 4, int(Cs)).tolist())
    try:
        Cs = tuple(float(c) for c in Cs)
    except (TypeError, ValueError):
        raise ParameterError(f"Cs must be a list of positive numbers (or their number); got "
                             f"{plain(Cs)!r}") from None
    if not Cs or not all(np.isfinite(c) and c > 0 for c in Cs):
        raise ParameterError(f"Cs must be a non-empty list of finite positive numbers; got {Cs}")
    return Cs


def _folds(cv, X, y):
    """The (train, test) index arrays of ``cv`` on these data (as ``GridSearchCV`` reads
    them: a number of folds, a splitter, or (train, test) pairs of indices -- negative ones
    counted from the end -- or of boolean masks of the points); ParameterError for a split
    it cannot make or a fold that is neither."""
    from sklearn.model_selection import check_cv

    try:
        splitter = check_cv(cv, y, classifier=True)
        folds = list(splitter.split(X, y))
    except ValueError as exc:
        raise ParameterError(f"cv={plain(cv)!r} cannot split these data: {exc} (give fewer folds, "
                             "or a splitter / a list of (train, test) index arrays)") from None
    n = len(y)
    return [(_fold_indices(tr, n, k, "train"), _fold_indices(te, n, k, "test"))
            for k, (tr, te) in enumerate(folds)]


def _fold_indices(part, n: int, k: int, which: str) -> np.ndarray:
    """A fold's ``part`` as indices of the ``n`` points: a boolean mask of length n, or
    integers in [-n, n) (a negative one counted from the end)."""
    a = np.asarray(part)
    if a.dtype == bool and a.shape == (n,):
        return np.flatnonzero(a)
    if a.ndim != 1 or (a.size and not np.issubdtype(a.dtype, np.integer)):
        raise ParameterError(f"cv's fold {k}: its {which} points must be integer indices or a "
                             f"boolean mask of the {n} points; got an array of dtype {a.dtype} "
                             f"and shape {a.shape}")
    a = a.astype(np.intp)
    if a.size and (a.min() < -n or a.max() >= n):
        raise ParameterError(f"cv's fold {k}: its {which} indices must lie in [-{n}, {n}) for "
                             f"{n} points; got {int(a.min())} .. {int(a.max())}")
    return np.where(a < 0, a + n, a)


def cross_validate(X, y, formulation: str = "soft_l1_dual", solver: str = "auto", *, Cs=None,
                   cv=5, n_jobs=None, client=None, multi_class: str = "ovr",
                   progress: bool | None = None, refit=None, sample_weight=None, **params):
    """K-fold cross-validation of an SVM over a grid of C and of other hyperparameters.

    One task per (fold, setting, binary problem) builds one model and walks the C path on it
    (warm re-solves); tasks run serially, over ``n_jobs`` processes (joblib) or on a Dask
    cluster (``client``), with the same table bit for bit.

    Parameters
    ----------
    X : array-like of shape (l, d), or (l, l) Gram matrix with ``kernel="precomputed"``
    y : array-like of shape (l,), labels of two or more classes
    formulation : str, default="soft_l1_dual"
        A registered formulation. The hard margin has no C (no C grid). The C-tuning
        formulations learn C on each training fold (their rows have ``C=None``; the C* of
        each fold is in ``split<k>_C_star``); a ``Cs`` given with them is cross-validated on
        the classifier whose C they tune, the 2-norm soft margin ``soft_l2_dual``, so the
        table holds the cross-validated C beside the tuned one. Radius-margin SVMs state all
        their pairs (``pairs="all"``); ``lam`` may be a grid.
    solver : str, default="auto"
        The backend, as in :func:`svm_models.fit` (``"auto"``: the fastest that takes the
        model).
    Cs : list of float, int, "path" or None, default=None
        The C path, walked in this order on each model. An int n: ``np.logspace(-4, 4, n)``;
        None: 10 such values (none for the C-tuning formulations, which learn C). For
        ``soft_l1_dual`` with ``solver="auto"`` and at least ``PATH_MIN_CS`` (20) Cs every C
        of a fold comes from the fold's one exact regularization path
        (:func:`svm_models.regularization_path`; fewer: the fits cost less); ``"path"``:
        the whole interval ``PATH_C_RANGE`` searched, one row per piece on which every
        fold's errors are constant (:func:`whole_path_Cs`).
    cv : int, splitter or iterable of (train, test), default=5
        As scikit-learn's ``cv``: an int is ``StratifiedKFold(cv)`` (no shuffling: the folds
        are deterministic).
    n_jobs : int or None, default=None
        Processes (joblib; -1: all cores); None or 1: serial.
    client : dask.distributed.Client or None, default=None
        Run the tasks on this Dask cluster (instead of ``n_jobs``).
    multi_class : {"ovr", "ovo"}, default="ovr"
        More than two classes: one-vs-rest or one-vs-one (see :func:`combine`).
    progress : bool or None, default=None
        A progress bar of the tasks on stderr (default: when stderr is a terminal).
    sample_weight : array-like of shape (l,) or None, default=None
        Per-point factors of C (scikit-learn's semantics, as in :func:`svm_models.fit`), for
        the formulations with C per point: each training fold is solved with its points'
        weights, and each test fold scored with its points' weights (as scikit-learn 1.9's
        ``GridSearchCV.fit(X, y, sample_weight=...)``).
    refit : callable or None, default=None
        Also refit the best row (:func:`best_index`) on all data: ``refit(X, labels, params)``
        (``params`` the row's, as in ``table["params"]``), with one BLAS thread as the tasks.
        Over processes it must pickle (a module-level function, or a ``functools.partial`` of
        one): a worker that finds no task left while others still run refits the best row so
        far, which is kept if the final best row is the same (else the refit is made here,
        after the tasks). Either way the refit is the same call, with the same result.
    **params
        Hyperparameters of the formulation (``kernel``, ``gamma``, ``lam``, ...) and solve
        options (``tol``, ``time_limit``, ...). A list is a grid of values; tuples and arrays
        are single values (``g_bounds=(0, 1)``); for ``kernels`` a list of lists is a grid.

    Returns
    -------
    table : dict
        scikit-learn's ``GridSearchCV.cv_results_`` layout, one row per grid point in the
        order of ``ParameterGrid({"C": Cs, **grid})`` (C outermost): ``params`` (list of
        dicts), ``param_<name>`` (masked arrays), ``split<k>_test_score`` (accuracy),
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``, ``mean_fit_time``,
        ``std_fit_time``, ``mean_score_time``, ``std_score_time`` (a task's wall time is
        shared equally by the C values of its path; summed over the binary problems), and
        ``status``: ``"optimal"``, or the first failure of the row (the solver's status or
        the error, with the fold), whose scores are then NaN (a multiclass problem whose
        classes a fold's training points lack is not trained there, not a failure: the
        fold's model votes without it, as SVC fitted on that fold; training points of one
        class fail). C tuning adds ``split<k>_C_star`` and ``mean_C_star`` (the mean over
        the binary problems the fold trains; NaN where no C corresponds to g*, and on the
        rows of fixed C).
    refitted : dict
        With ``refit`` only (the return is then ``(table, refitted)``): ``index`` (the best
        row), ``params`` (its parameters), ``result`` (what ``refit`` returned), ``time`` (its
        seconds), ``source``: ``"speculative"`` (made in a worker while the last tasks ran)
        or ``"main"`` (made in this process after them), and ``speculated``: the rows refitted
        speculatively, in order (any but ``index`` wasted).

    Raises
    ------
    ParameterError
        A hyperparameter the formulation does not take, an unknown solver, a bad ``Cs``,
        ``cv``, ``n_jobs`` or ``multi_class``, both ``n_jobs`` and ``client``.
    DataError
        Unusable data. A failed solve is not raised: it is recorded in ``status``.
    SVMError
        With ``refit``: every row failed (and whatever the refit raises).
    """
    n_jobs = _check_workers(n_jobs, client, solver)
    f = lookup(formulation)
    grid, fixed, solve_kw = _grid(params)
    A, yy, classes, y_index = _labelled(X, y)
    folds = _folds(cv, A, yy)
    weight = _fold_weights(f, sample_weight, A.shape[0])
    done: dict = {}   # (fold, setting) -> decision values read from the fold's path
    if isinstance(Cs, str) and Cs == "path":
        Cs, done = whole_path_Cs(A, yy, formulation, solver, folds, _settings(grid), fixed,
                                 weight)
    Cs = _check_Cs(Cs, formulation)
    job = _job(f, A, y_index, classes, folds=folds, multi_class=multi_class,
               grid=grid, fixed=fixed, Cs=Cs, solver=solver, solve_kw=solve_kw, weight=weight)
    problems = [None] if not done and pairs_apply(job) else range(len(job.problems))
    keys = [(fo, s, p) for fo in range(len(job.folds)) for s in range(len(job.settings))
            for p in problems]
    points = [*Cs, None] if job.tuned_formulation else list(Cs) or [None]
    results: dict = {}  # key -> the task's result, as they finish

    def table() -> dict:  # of the tasks finished so far
        return _table(job, classes.size, multi_class, results, points,
                      "C" in f.params or f.learns_C)

    parallel = n_jobs not in (None, 1)
    speculation = _Speculation(refit, table) if parallel and refit is not None else None
    with _Pool(job, n_jobs) if parallel else contextlib.nullcontext() as pool:
        with Progress(len(keys), label="cross-validation", enabled=progress) as bar:
            if done:
                runs = _run_done(job, keys, done, bar)
            elif client is not None:
                runs = _run_dask(job, keys, client, bar)
            elif pool is None:
                runs = _run_serial(job, keys, bar)
            else:
                runs = _run_joblib(job, keys, pool, bar, speculation)
            for res in runs:
                results.update((part["key"], part) for part in _parts(res))
        final = table()
        if refit is None:
            return final
        row = best_index(final)
        refitted = speculation.take(row) if speculation is not None else None
    info = {"index": row, "speculated": list(speculation.futures) if speculation else []}
    if refitted is not None:
        return final, {**info, **refitted, "source": "speculative"}
    return final, {**info, **_refit(job, refit, final["params"][row]), "source": "main"}


def _check_workers(n_jobs, client, solver):
    """``n_jobs`` as processes to start (None or 1: serial; always None with a Dask
    ``client``); ParameterError for a bad ``n_jobs``, both, or a misspelt ``solver`` (refused
    here, not recorded in every row)."""
    if n_jobs is not None and (not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0):
        raise ParameterError(f"n_jobs must be a non-zero integer (-1: all cores) or None; got "
                             f"{plain(n_jobs)!r}")
    if client is not None and n_jobs not in (None, 1):
        raise ParameterError("give n_jobs (processes on this machine) or client (a Dask "
                             "cluster), not both")
    if str(solver).lower() != "auto":
        backend(solver)
    if client is not None or n_jobs in (None, 1):
        return None
    from joblib import effective_n_jobs

    return effective_n_jobs(n_jobs)  # -1: every core; 1 where no process may start


def _grid(params: dict) -> tuple[dict, dict, dict]:
    """``params`` split into ``(grid, fixed, solve options)``: a list is a grid of values;
    ParameterError for C (given as ``Cs``), an unknown name or an empty grid (refused here,
    not recorded as a failure in every row)."""
    if "C" in params:
        raise ParameterError("give the values of C as Cs=[...] (the path walked on each model)")
    solve_kw = split_solve_options(params)
    if "batch" in params:   # constraint generation's batch size (radius-margin fit)
        solve_kw["batch"] = params.pop("batch")
    unknown = sorted(set(params) - set(hyperparameters()))
    if unknown:
        raise ParameterError(f"cross_validate takes no parameter(s) {unknown}; hyperparameters "
                             f"are {', '.join(hyperparameters()[1:])} (C as Cs=[...]), solver "
                             "options tol, time_limit, iter_limit, threads, options")
    grid = {k: v for k, v in params.items() if _is_grid(k, v)}
    if any(len(v) == 0 for v in grid.values()):
        raise ParameterError(f"an empty grid: {[k for k, v in grid.items() if not v]}")
    fixed = {k: v for k, v in params.items() if k not in grid and v is not None}
    return grid, fixed, solve_kw


def _labelled(X, y) -> tuple:
    """``(X, y, classes, class index of each point)``; DataError for mismatched shapes or
    fewer than two classes."""
    A = as_matrix(X, name="X")
    yy = np.asarray(y)
    if yy.ndim != 1 or yy.shape[0] != A.shape[0]:
        raise DataError(f"y must be a 1-d array of {A.shape[0]} labels (one per row of X); got "
                        f"shape {yy.shape}")
    classes, y_index = np.unique(yy, return_inverse=True)
    if classes.size < 2:
        raise DataError(f"y has {classes.size} class; a classifier needs at least two")
    return A, yy, classes, y_index


def _fold_weights(f, sample_weight, l: int) -> np.ndarray | None:
    """The per-point factors of C (None: all 1); ParameterError for a formulation with no
    per-point C."""
    if sample_weight is None:
        return None
    if f.learns_C or "sample_weight" not in lookup(f.classic_at_learned_C or f.name).params:
        takes = [n for n in formulation_names() if "sample_weight" in lookup(n).params]
        raise ParameterError(f"{f.name} has no per-point C, so cross_validate takes no "
                             f"sample_weight for it; {', '.join(takes)} do")
    return as_weights(sample_weight, l)


def _settings(grid: dict) -> list:
    """The grid's settings without C, in the order of the table's rows."""
    from sklearn.model_selection import ParameterGrid

    return list(ParameterGrid(grid)) if grid else [{}]


def _job(f, A, y_index, classes, *, folds, multi_class, grid, fixed, Cs, solver, solve_kw,
         weight) -> Job:
    """What every task reads, with every setting of the grid checked before anything runs."""
    job = Job(X=A, y=y_index, classes=classes, folds=folds,
              problems=binary_problems(classes.size, multi_class),
              settings=_settings(grid), Cs=Cs,
              path_formulation=f.classic_at_learned_C or f.name,
              tuned_formulation=f.name if f.learns_C else None, fixed=fixed, solver=solver,
              solve_kw=solve_kw, precomputed=fixed.get("kernel") == "precomputed", weight=weight)
    for s in range(len(job.settings)):
        for name, _ in _segments(job):
            _hyperparameters(job, name, s)
    return job


def _table(job: Job, n_classes: int, multi_class: str, results: dict, points: list,
           has_C: bool) -> dict:
    """The table of ``results`` (key -> a task's result). A task missing from them (not
    finished: a table so far) leaves its fold out of its rows' mean scores, and their status
    is ``"pending"`` (unless a finished fold failed)."""
    n_folds, n_set = len(job.folds), len(job.settings)
    rows = [(c, s) for c in range(len(points)) for s in range(n_set)]
    scores = np.full((len(rows), n_folds), np.nan)
    fit_t, score_t, c_star = (np.zeros((len(rows), n_folds)) for _ in range(3))
    pending = np.zeros((len(rows), n_folds), dtype=bool)
    first: dict = {}   # row -> the first failure met (in the folds' order)
    for s in range(n_set):
        R = np.arange(len(points)) * n_set + s   # the rows of setting s, in the order of c
        for fo, (_, test) in enumerate(job.folds):
            parts = [results.get((fo, s, p)) for p in range(len(job.problems))]
            if any(res is None for res in parts):
                pending[R, fo] = True
                continue
            fit_t[R, fo] = np.sum([res["fit_time"] for res in parts], axis=0)
            score_t[R, fo] = np.sum([res["score_time"] for res in parts], axis=0)
            c_star[R, fo] = np.mean([res["C"] for res in parts if _trained(res)], axis=0)
            ok = np.ones(len(points), dtype=bool)
            for p, res in enumerate(parts):
                status = np.asarray(res["status"])
                for c in np.flatnonzero((status != "optimal") & (status != NOT_TRAINED)):
                    if ok[c] and R[c] not in first:
                        pair = f", binary problem {p + 1}" if len(parts) > 1 else ""
                        first[R[c]] = f"{res['status'][c]} (fold {fo + 1}{pair})"
                    ok[c] = False
            scores[R[ok], fo] = _fold_scores(job, parts, np.flatnonzero(ok), test, n_classes,
                                             multi_class)
    status = [first.get(r) or ("pending" if pending[r].any() else "optimal")
              for r in range(len(rows))]
    params = [({"C": points[c]} if has_C else {}) | job.settings[s] for c, s in rows]
    table: dict = {"mean_fit_time": np.mean(fit_t, axis=1), "std_fit_time": np.std(fit_t, axis=1),
                   "mean_score_time": np.mean(score_t, axis=1),
                   "std_score_time": np.std(score_t, axis=1)}
    for name in sorted({k for p in params for k in p}):
        col = np.ma.MaskedArray(np.empty(len(rows), dtype=object), mask=True)
        for r, p in enumerate(params):
            if name in p:
                col[r] = p[name]
        table[f"param_{name}"] = col
    table["params"] = params
    for fo in range(n_folds):
        table[f"split{fo}_test_score"] = scores[:, fo]
    table["mean_test_score"] = np.average(scores, axis=1) if not pending.any() else \
        np.ma.average(np.ma.masked_array(scores, pending), axis=1).filled(np.nan)
    table["std_test_score"] = np.sqrt(np.average(
        (scores - table["mean_test_score"][:, None]) ** 2, axis=1))
    means = table["mean_test_score"]
    ranked = np.where(np.isnan(means), np.nanmin(means) - 1 if np.isfinite(means).any() else 0,
                      means)
    from scipy.stats import rankdata

    table["rank_test_score"] = rankdata(-ranked, method="min").astype(np.int32)
    table["status"] = np.array(status, dtype=object)
    if job.tuned_formulation is not None:
        tuned_rows = np.array([points[c] is None for c, _ in rows])
        c_star[~tuned_rows] = np.nan
        for fo in range(n_folds):
            table[f"split{fo}_C_star"] = c_star[:, fo]
        table["mean_C_star"] = np.mean(c_star, axis=1)
    return table


def _fold_scores(job: Job, parts: list, cs: np.ndarray, test, n_classes: int,
                 multi_class: str) -> np.ndarray:
    """The accuracy on the test fold at each point ``cs`` of the path (every binary problem
    solved there): two classes at once, the sign of the values; more, point by point
    (:func:`combine`). With sample weights, each test point counts with its weight, as
    scikit-learn's ``GridSearchCV.fit(X, y, sample_weight=...)`` scores (1.9)."""
    yt = job.y[test]
    if n_classes == 2:   # (every point of every C at once, by predicted_index's rule)
        V = parts[0]["values"][cs]
        hits = predicted_index(V.ravel()).reshape(V.shape) == yt
    else:
        trained = [_trained(res) for res in parts]
        hits = np.array([predicted_index(combine([res["values"][c] for res in parts],
                                                 n_classes, multi_class, trained),
                                         multi_class) == yt
                         for c in cs]).reshape(len(cs), len(yt))
    if job.weight is None:
        return np.mean(hits, axis=1)
    w = job.weight[test]   # (weighted by the test points' sample weights, as GridSearchCV's)
    if not w.sum() > 0:    # (no test point counts: no score)
        return np.full(len(cs), np.nan)
    return np.average(hits, axis=1, weights=w)


def best_index(table: dict) -> int:
    """The row of the best mean test score; among equal scores the smallest C (a C-tuning
    row, ``C=None``, after every fixed C), then the first in the table. SVMError when every
    row failed."""
    means = np.asarray(table["mean_test_score"], dtype=float)
    if not np.isfinite(means).any():
        raise SVMError(f"every grid point failed; the first: {table['status'][0]}")
    top = np.flatnonzero(means == np.nanmax(means))
    Cs = [table["params"][r].get("C") for r in top]
    return int(top[min(range(len(top)), key=lambda i: (Cs[i] is None, Cs[i] or 0.0, i))])

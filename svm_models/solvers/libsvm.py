"""libsvm, as scikit-learn's ``SVC`` trains it (its compiled ``sklearn.svm._libsvm`` called
as ``SVC.fit`` calls it, ``SVC.fit`` itself where that module is not the one expected):
Platt's sequential minimal optimisation with second-order working-set selection (Fan, Chen
and Lin 2005), the solver of scikit-learn's ``SVC``. A *structured* backend: it takes exactly the problem its algorithm
solves -- a classic SVM dual as its builder made it, proved unchanged by the record
(:class:`~svm_models.model.forms.DualSVM`):

* ``soft_l1_dual``: the box ``[0, C_i]`` and one equality ``y'a = 0``;
* ``hard_dual``: the same with ``C = inf``;
* ``soft_l2_dual``: the kernel ``K + I/C`` and ``a >= 0``.

Any other model (a primal, an edited dual, an added constraint, a QCQP) is refused before
anything runs (:mod:`.dispatch`), naming the backends that take it. Where libsvm evaluates the
kernel itself (linear and rbf on the 1-norm and hard duals) it is given the points and the
kernel's parameters, never the l x l matrix; a poly kernel built in the factor form
(``quad_form="auto"`` takes it when the kernel has at most 256 monomials) is handed over
as those monomials under the linear kernel (``K = L L'`` exactly); otherwise (a dense poly
kernel, the 2-norm's ``K + D/C``, a precomputed kernel) the matrix the model holds
(``kernel="precomputed"``).

Linear kernels and matrices are handed over centred in feature space (the same dual on
``y'a = 0``; libsvm keeps kernel values in single precision). The problem is handed over
exactly scaled (:mod:`svm_models.model.scaling`: ``K/s``, ``C s``,
``alpha = alpha~/s`` with ``s`` the mean of the kernel's diagonal, a power of four): libsvm's
safeguards are absolute (a curvature below 1e-12 is taken as 1e-12), so a kernel of scale
1e-8 or 1e8 would be solved as a different problem. libsvm stops when its largest KKT
violation (in units of the margin) is below ``tol``; its answer then goes through the same
certificate as every backend's (duality gap, KKT, polishing on the active set). A fit
without a Pyomo model (:func:`svm_models.fit`, one-vs-one's pairs) on the rbf kernel first
solves at ``FIRST_TOL`` (SVC's default 1e-3) and keeps that answer only where the
certificate takes the polished classifier from it -- the KKT equations solved exactly on the
active set libsvm found, certified: where a solve at 1e-9 finds the same set, the same alpha;
the interface then ends "(stopped at tol=0.001, polished)" -- else it solves again at
``tol`` (then both solves' time: 6% of random problems), where the time left is at least
what the first solve took.

libsvm has no time limit of its own: a solve that ends after the time limit is reported as
``time_limit`` (its answer is not used), and ``iter_limit`` is its ``max_iter`` (unset: at
most ``max(MIN_ITER, ITER_PER_POINT * l)`` iterations, then once ``MORE_ITER`` times as many
if the time left allows, then numerical trouble, naming the backends that take the dual). It cannot
prove a hard margin unbounded: separability is checked by LP before a hard dual is solved.
Its iterations are not warm-started along a C path; there (``state`` given, at most
``PATH_PRECOMPUTED_MAX`` points) the centred kernel matrix is formed once and handed over at
every C.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..data import class_members, pair_members
from ..model.scaling import power_of_four
from ..postprocess import ratio
from ..status import Status
from .base import Backend, MatrixResult

#: the kernels libsvm is given to evaluate itself (no l x l matrix); a poly kernel cannot be
#: centred in its evaluation: in the factor form it gets its monomials (linear kernel), in
#: the dense form the model's matrix, centred
NATIVE = ("linear", "rbf")

#: libsvm's kernel cache (MB): SVC's default, so that libsvm's own time is SVC's. Measured
#: with SVC(tol=1e-8) alone (rbf, 20 features, quiet machine, 2026-11-28): 200 against 400
#: MB -- l = 10,000 1.53 s both, 20,000 3.9 s against 4.9 s, 30,000 5.5 s against 6.2 s,
#: 50,000 18.0 s against 15.7 s (the one size where the larger cache paid); 400 before (and
#: 1000 before that: at l = 20,000 a peak of 851 MB against 633 MB with 400)
CACHE_MB = 200.0

#: the tolerance of a first solve whose answer the polish finishes (SVC's default; the
#: backend's ``first_tol``, for the rbf kernel): libsvm's active set is found long before
#: its KKT violation reaches 1e-9, and the polish on that set gives the same alpha, bit for
#: bit (20 features, l = 1,000: the fit 14.5 -> 12.1 ms, 5,000: 125 -> 115 ms; digits
#: one-vs-one 84 -> 71 ms; 150 random problems of 50 to 1,500 points, C 1e-2 to 1e4: 66 ->
#: 41 s, 9 solved again, every alpha the same -- and one that the solve at 1e-9 alone
#: fails); where the certificate takes no polished classifier from it, the solve is
#: repeated at the tolerance asked
FIRST_TOL = 1e-3


def _first_tol(kernel) -> float | None:
    """:data:`FIRST_TOL` for the rbf kernel, else None (one solve, as asked): the rbf
    kernel's matrix on distinct points is positive definite, any free set's system regular,
    and the polish settles from libsvm's early active set; a kernel of low rank (linear: at
    most rank + 1 free points) leaves that system singular where the early set has one point
    too many -- half of 60 random linear problems were solved twice."""
    return FIRST_TOL if getattr(kernel, "name", None) == "rbf" else None

#: along a path of solves on one model (``state`` given: a C path, cross-validation) of at most
#: this many points, the kernel matrix is formed once and handed over precomputed at every C
#: (libsvm would evaluate the kernel afresh at each); l^2 floats, 128 MB at 4,000
PATH_PRECOMPUTED_MAX = 4000
#: libsvm's iterations when the user sets no ``iter_limit`` (it has no time limit: a hard
#: margin on nearly touching classes could otherwise run for hours): ``max(MIN_ITER,
#: ITER_PER_POINT * l)``; each iteration costs O(l). 100 per point before: the linear
#: kernel on ``make_classification(20000, 20)``, centred as handed over, takes 3.4 million
#: iterations (1.1 million uncentred, the same 10.7 s), so the first fit stopped at 2 million
#: and the second started afresh: 21 s where SVC takes 10.5 s
MIN_ITER = 10**6
ITER_PER_POINT = 300
#: where that many did not converge (no ``iter_limit`` set), one more fit with this many
#: times as many iterations, if the time fits (:func:`_fit_svc`)
MORE_ITER = 10

#: what stands for C = inf (libsvm takes a finite C; no alpha of a solvable problem gets near)
C_INF = 1e300


def solve(record, sf, opts, state=None) -> MatrixResult:
    """Solve the classic dual ``record.structure`` with libsvm; ``x`` in the record's order."""
    from pyomo.core.expr.numvalue import value
    from sklearn.svm import SVC

    st = record.structure
    y = st.y
    box = np.asarray(sf.ux[st.alpha], dtype=float)
    ridge = 0.0
    if st.margin.ridge:
        # K + D/C with D = diag(1/weight_i); its bound C sqrt(l) is implied, never active; a
        # point of weight 0 is held at 0
        Ci = float(value(record.block.component(st.C))) * (1.0 if st.weight is None
                                                           else st.weight)
        ridge = ratio(np.ones(len(y)), Ci)
        box = np.where(box > 0, np.inf, 0.0)
    params, data, s, interface = _svc_problem(st, ridge, state)
    # the points of weight 0 (box 0: alpha_i = 0) are left out (libsvm would drop them and
    # number its support vectors among the others)
    keep = np.flatnonzero(box > 0)
    if len(keep) < len(y):
        data = data[np.ix_(keep, keep)] if params["kernel"] == "precomputed" else data[keep]
    box_k, y_k = box[keep], y[keep]
    cmax = float(np.max(box_k, initial=0.0))
    if not math.isfinite(cmax):   # hard margin, 2-norm
        C, weight = C_INF, None
    else:   # C_i = C * weight_i
        C = cmax * s
        weight = None if np.all(box_k == cmax) else box_k / cmax
    svc, status, message = _fitted(SVC, data, y_k, weight, len(y), opts, C=C, **params)
    res = MatrixResult(status=status, message=message, interface=interface)
    if status is Status.optimal:
        alpha = np.zeros(len(y))
        sv = keep[svc.support_]
        # decision = K dual_coef + intercept, positive for classes_[1] = +1: dual_coef = y a
        alpha[sv] = np.maximum(y[sv] * svc.dual_coef_[0], 0.0) / s
        np.minimum(alpha, box, out=alpha)
        x = np.zeros(sf.n)
        st.complete(x, alpha)
        res.x = x
        res.objective = sf.objective(x)
        res.iterations = int(np.sum(svc.n_iter_))
    return res


def _fitted(SVC, data, y, weight, l: int, opts, **params) -> tuple:
    """``(svc, status, message)``: SVC fitted on ``data`` (:func:`_fit_svc`, at most the
    user's ``iter_limit`` iterations or ``max(MIN_ITER, ITER_PER_POINT * l)``), with the status
    of what is known -- optimal, the iteration limit reached, no convergence (the backends
    that take the dual named), or the time limit (the time left when it started) passed."""
    cap = max(MIN_ITER, ITER_PER_POINT * l) if opts.iter_limit is None else opts.iter_limit
    limit = opts.seconds   # (the time left now: read before the solve)
    t0 = time.perf_counter()
    svc = _fit_svc(SVC, data, y, weight, cap, limit, opts.iter_limit is None,
                   tol=opts.tolerance, cache_size=CACHE_MB, shrinking=True, **params)
    elapsed = time.perf_counter() - t0
    status, message = Status.optimal, "converged"
    if svc.fit_status_ != 0 and opts.iter_limit is not None:
        status, message = Status.iteration_limit, f"max_iter={opts.iter_limit} reached"
    elif svc.fit_status_ != 0:
        status, message = (Status.numerical_error,
                           f"no convergence in {svc.max_iter} iterations{_others()}")
    if limit is not None and elapsed > limit:
        status, message = Status.time_limit, f"{message} after the time limit ({limit:g} s)"
    return svc, status, message


def _fit_svc(SVC, data, y, weight, cap: int, limit, more: bool, **params):
    """SVC fitted with at most ``cap`` iterations; where it stops there and ``more`` (the user
    set no ``iter_limit``), once more with ``MORE_ITER`` times as many if the time that took,
    as many times over, fits in half of what is left of ``limit`` (seconds; None: no limit). One
    round, bounded in time: SMO is not warm-started, so the second fit starts afresh (a
    linear kernel on features of scales 1e-4 to 1e4, C = 21.3: 1e6 iterations not enough,
    1e7 converged, 2 s). Each fit is :func:`_svc_fit`'s."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc = _svc_fit(SVC, data, y, weight, max_iter=cap, **params)
        took = time.perf_counter() - t0
        # (the longer fit may take at most half of what is left: the rest is for the retry
        # ladder and, under solver="auto", the next backend -- on a machine running two
        # test workers the whole default limit went to it and nothing was left)
        if svc.fit_status_ != 0 and more and (limit is None
                                               or took * (2 * MORE_ITER + 1) < limit):
            svc = _svc_fit(SVC, data, y, weight, max_iter=cap * MORE_ITER, **params)
    return svc


@dataclass
class _Fitted:
    """What the backend reads of a fitted ``SVC``, under SVC's names and conventions
    (:func:`_svc_fit`)."""

    support_: np.ndarray
    n_support_: np.ndarray
    dual_coef_: np.ndarray
    intercept_: np.ndarray
    fit_status_: int
    n_iter_: np.ndarray
    max_iter: int


def _svc_fit(SVC, data, y, weight, **params):
    """``SVC(**params).fit(data, y, sample_weight=weight)`` as :class:`_Fitted`: libsvm's
    training called as ``SVC.fit`` calls it (``sklearn.svm._libsvm.fit``, the arguments
    ``SVC.fit`` hands it for these parameters: ``y`` the classes' indices, each class's
    weight 1, no probabilities), without ``SVC.fit``'s validation of what this backend
    made (its data are float arrays it formed; a millisecond of a 10 ms fit at l = 1,000);
    where that module or its signature is not the one expected, ``SVC.fit`` itself. The
    two are tested equal, array for array (``tests/test_libsvm.py``)."""
    lib = _direct_libsvm()
    classes, y_index = np.unique(y, return_inverse=True)
    if lib is not None and classes.size > 1:
        p = {"kernel": "rbf", "degree": 3, "gamma": 0.0, "coef0": 0.0, **params}
        try:
            X = np.ascontiguousarray(data, dtype=np.float64)
            lib.set_verbosity_wrap(0)   # (a process-wide setting: an SVC may have set it)
            (support, _, n_support, coef, intercept, _, _, status,
             n_iter) = lib.fit(X, y_index.astype(np.float64), svm_type=0,
                           sample_weight=np.asarray([] if weight is None else weight,
                                                    dtype=np.float64),
                           class_weight=np.ones(classes.size), kernel=p["kernel"],
                           C=float(p["C"]), nu=0.0, probability=False, degree=int(p["degree"]),
                           shrinking=bool(p["shrinking"]), tol=float(p["tol"]),
                           cache_size=float(p["cache_size"]), coef0=float(p["coef0"]),
                           gamma=float(p["gamma"]), epsilon=0.0, max_iter=int(p["max_iter"]),
                           random_seed=0)
        except TypeError:   # (another signature: SVC.fit from now on)
            _DIRECT["lib"] = None
        except ValueError:   # (arrays it takes otherwise, or what it refuses: SVC.fit says
            pass             # what, in SVC's words, or takes them)
        else:
            if classes.size == 2:   # (SVC's sign: the decision positive for classes_[1])
                coef, intercept = -coef, -intercept
            return _Fitted(support_=support, n_support_=n_support, dual_coef_=coef,
                           intercept_=intercept, fit_status_=int(status), n_iter_=n_iter,
                           max_iter=int(p["max_iter"]))
    svc = SVC(**params)
    svc.fit(data, y, sample_weight=weight)
    return _Fitted(support_=svc.support_, n_support_=svc.n_support_,
                   dual_coef_=svc.dual_coef_, intercept_=svc.intercept_,
                   fit_status_=int(svc.fit_status_), n_iter_=svc.n_iter_,
                   max_iter=int(svc.max_iter))


#: scikit-learn's libsvm module, looked up once (``"lib"``: it, or None: ``SVC.fit``)
_DIRECT: dict = {}


def _direct_libsvm():
    """``sklearn.svm._libsvm`` (its ``fit`` and ``set_verbosity_wrap``), or None where it
    is missing or has neither."""
    if "lib" not in _DIRECT:
        try:
            from sklearn.svm import _libsvm
        except ImportError:
            _libsvm = None
        ok = all(callable(getattr(_libsvm, n, None)) for n in ("fit", "set_verbosity_wrap"))
        _DIRECT["lib"] = _libsvm if ok else None
    return _DIRECT["lib"]


def _others() -> str:
    """Advice on a libsvm that did not converge: the installed backends that take its
    problems, in ``auto``'s order (:func:`~svm_models.solvers.table.local_choice`; on the
    random problems whose conditioning stalls SMO, each of them answers)."""
    from .table import local_choice

    names = local_choice("QP")
    return f"; solver={names[0]!r} takes this dual too ({', '.join(names)})" if names else ""


def _svc_problem(st, ridge, state):
    """What SVC is given for the dual ``st``: ``(params, data, s, interface)`` -- the kernel
    libsvm evaluates itself (the linear kernel on the centred features, a poly kernel's
    monomials, or its own rbf/poly/sigmoid) or the precomputed centred Gram
    matrix (with the 2-norm's ``ridge`` on its diagonal), scaled by ``s``, a power of four."""
    kern, X, y = st.kernel, st.X, st.y
    along_a_path = state is not None and len(y) <= PATH_PRECOMPUTED_MAX
    # a poly kernel in the factor form: its exact features (the monomials, K = L L'; at most
    # kernels.POLY_FEATURES_MAX), handed over as points of the linear kernel
    monomials = getattr(kern, "name", None) == "poly" and st.L is not None
    features = X if getattr(kern, "name", None) == "linear" else st.L if monomials else None
    native = (np.all(ridge == 0.0) and not along_a_path
              and (features is not None or getattr(kern, "name", None) in NATIVE))
    if native:
        if features is not None:
            params, (data, s) = {"kernel": "linear"}, _centred_features(features)
        else:
            s = power_of_four(float(np.mean(kern.diagonal(X))) if len(y) else 1.0)
            params, data = _native(kern), X
        interface = ("libsvm-linear, on the poly kernel's monomials" if kern.name == "poly"
                     else f"libsvm-{kern.name}")
        return params, data, s, interface
    kept = state.get("libsvm_gram") if state is not None else None
    if kept is not None and kept[0] is st:
        K = kept[1]
    else:
        K = _centred(np.asarray(st.gram if st.gram is not None else st.L @ st.L.T,
                                dtype=float))
        if state is not None:   # (the same model's matrix at the next C)
            state["libsvm_gram"] = (st, K)
    if np.any(ridge):
        K = K + np.diag(np.broadcast_to(ridge, (len(y),)))
    s = power_of_four(float(np.mean(np.diag(K))) if len(y) else 1.0)
    return {"kernel": "precomputed"}, K / s, s, "libsvm-precomputed"


def _centred(K: np.ndarray) -> np.ndarray:
    """``H K H`` with ``H = I - ee'/l``: the kernel of the points centred in feature space.
    On ``y'a = 0`` (every classic dual has it) ``v = y a`` has ``Hv = v``, so
    ``v'HKHv = v'Kv``: the same problem, exactly; but libsvm keeps kernel values in single
    precision (its cache is ``float``), and a kernel of points far from the origin (entries
    2e4, a linear kernel of data offset by 100) then loses the differences that decide the
    optimum (its answer was 1e-4 off). Centred, the entries are of the size of those
    differences."""
    r = K.mean(axis=1)
    return K - r[:, None] - r[None, :] + r.mean()


def _centred_features(F: np.ndarray) -> tuple:
    """``(F centred / sqrt(s), s)``: features handed over under the linear kernel, centred by
    their mean (the same dual on ``y'a = 0``, see :func:`_centred`) and scaled by ``s``, a
    power of four near their mean squared norm (1 for no points)."""
    Fc = F - F.mean(axis=0)
    s = power_of_four(float(np.mean(np.einsum("ij,ij->i", Fc, Fc)))) if len(F) else 1.0
    return Fc / math.sqrt(s), s


def _native(kern) -> dict:
    """SVC's rbf kernel parameters (its diagonal is 1, s = 1)."""
    return {"kernel": "rbf", "gamma": kern.gamma}


def takes(record) -> str | None:
    """None when libsvm takes the recorded model as it is, else why not."""
    st = getattr(record, "structure", None)
    if st is None:
        return ("libsvm solves only the classic SVM duals (hard_dual, soft_l1_dual, "
                "soft_l2_dual) as built")
    return None


def solve_pairs(kernel, X: np.ndarray, y_index: np.ndarray, box: np.ndarray, opts,
                gram: np.ndarray | None = None):
    """The one-vs-one 1-norm duals of all the pairs of classes of ``y_index`` (0..k-1) in one
    libsvm call, as ``SVC`` trains them (its fixed cost paid once, not once per pair): the
    pair ``i < j`` is ``max e'a - 1/2 a'G(K)a``, ``0 <= a <= box``, ``y'a = 0`` on the points
    of classes i and j, with ``y = +1`` for class j (the library's sign; libsvm's is the
    opposite, the same problem). Only the ``rbf`` kernel (its values in (0, 1]: nothing to
    centre, libsvm's single-precision cache loses nothing that decides the optimum) and the
    linear kernel (on the points centred by their mean: every pair's dual is the same on
    ``y'a = 0``, whatever the shift, see :func:`_centred`), and a box positive everywhere (no
    point of weight 0): else None. ``gram``: the rbf kernel's matrix on ``X``, where the
    caller has it (cross-validation forms a fold's once for all its pairs and Cs): handed
    over precomputed, libsvm evaluates no kernel; else libsvm evaluates the kernel itself.
    Returns ``(MatrixResult, alphas)``: the status as :func:`solve` reports one, and --
    optimal -- ``alphas(i, j)``, the pair's alpha on its points in their order in ``X``.
    Nothing is certified here: every pair's answer goes through the certificate as one
    solve's does."""
    from sklearn.svm import SVC

    name = getattr(kernel, "name", None)
    if name not in ("rbf", "linear") or not np.all(box > 0):
        return None
    if name == "linear":   # (centred and scaled as solve hands a linear dual over)
        (data, s), params, interface = _centred_features(X), {"kernel": "linear"}, "libsvm-linear"
    elif gram is not None:   # (rbf: its diagonal is 1, s = 1; the matrix as it is)
        s, data, params, interface = 1.0, gram, {"kernel": "precomputed"}, "libsvm-precomputed"
    else:
        s, data, params, interface = 1.0, X, _native(kernel), "libsvm-rbf"
    cmax = float(np.max(box))
    weight = None if np.all(box == cmax) else box / cmax
    l = len(y_index)
    svc, status, message = _fitted(SVC, data, y_index, weight, l, opts, C=cmax * s, **params)
    res = MatrixResult(status=status, message=message, interface=f"{interface}, one-vs-one")
    if status is not Status.optimal:
        return res, None
    res.iterations = int(np.sum(svc.n_iter_))
    start = np.concatenate([[0], np.cumsum(svc.n_support_)])
    sv_class = np.repeat(np.arange(len(svc.n_support_)), svc.n_support_)
    if not np.array_equal(sv_class, y_index[svc.support_]):   # (SVC's layout, by class)
        res.status, res.message = Status.error, "SVC's support vectors are not by class"
        return res, None

    members = class_members(y_index, len(svc.n_support_))

    def alphas(i: int, j: int) -> np.ndarray:
        # SVC's layout: in pair (i, j) the coefficients of class i's support vectors are in
        # row j - 1, those of class j in row i; libsvm's y is +1 for class i
        a = np.zeros(l)
        si, sj = slice(start[i], start[i + 1]), slice(start[j], start[j + 1])
        a[svc.support_[si]] = svc.dual_coef_[j - 1, si]
        a[svc.support_[sj]] = -svc.dual_coef_[i, sj]
        pts = pair_members(members, i, j)
        return np.minimum(np.maximum(a[pts], 0.0) / s, box[pts])

    return res, alphas


BACKEND = Backend(
    name="libsvm", classes=frozenset(), modules=("sklearn",), structured=solve,
    proves_unbounded=False,
    structure_check=takes, pairs=solve_pairs, first_tol=_first_tol,
    install="pip install scikit-learn",
    note="libsvm's SMO (scikit-learn's SVC): the classic SVM duals as built",
    project=True, auto={"QP": 0},   # first, where the record proves its structure
    pyomo_solver="libsvm's SMO (scikit-learn) through svm_models: only a classic SVM dual "
                 "built by svm_models.build, unchanged")

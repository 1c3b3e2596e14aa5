"""The public API: build, solve, fit, extract -- one solve each.

Data flows one way: data -> kernel -> formulation (a Pyomo block) -> solver -> solution.
What loops over solves (parameter paths, checks, two-step methods) lives in
:mod:`svm_models.methods`, above this module.
"""

from __future__ import annotations

import math
import numbers
import time
import warnings
from dataclasses import replace

import numpy as np
from pyomo.common.gc_manager import PauseGC

from .formulations import get as lookup, names as formulation_names
from .data import as_matrix, class_members, pair_members, rows_of
from .progress import Countdown
from .errors import (BadScaleWarning, DataError, FallbackWarning, InfeasibleError,
                     LicenseLimitError, NotSeparableError, ParameterError, SolveFailedError,
                     SolverError, SVMError, user_stacklevel)
from .model.built import svm_blocks
from .model.mixed import objective_scale
from .postprocess import Context
from .threads import library_threads
from .solution import KeptModel, Solution, keep_model
from .model.standard_form import MIXED_INTEGER
from .config import SOLVE_OPTIONS, solve_config
from .solvers import SolverOptions, auto_choice, backend, capable, solve_model
from .solvers.base import drained_output, preserved_fpu
from .status import Status
from .tolerances import (CERTIFICATE_GAP, CERTIFICATE_GAP_PER_TOL, CERTIFICATE_REFUSE,
                         MIP_GAP_ACCEPT, MIP_GAP_PER_TOL)

_SOLVE_KEYS = set(SOLVE_OPTIONS)   # (raise_on_failure among them: config.SolveConfig)


def formulations() -> list[str]:
    """Names of the registered formulations."""
    return formulation_names()


def build(name: str, X, y, *, block=None, **params):
    """Build formulation ``name`` for data (X, y): a Pyomo ConcreteModel, or ``block`` filled.

    ``params`` are the formulation's hyperparameters (``C``, ``kernel``, ``gamma``,
    ``degree``, ``coef0``, ``quad_form``, ...); an unknown one is a ParameterError.
    ``C=math.inf`` is the hard margin: ``soft_l1_dual`` and ``soft_l2_dual`` are built as
    ``hard_dual`` (the primals as ``hard_primal``), a radius-margin SVM with ``C=None``.
    A block holds one SVM: a ``block`` already built is a ParameterError.
    """
    built = getattr(block, "_svm", None) if block is not None else None
    if built is not None and built.block is block:
        # (before: a second build replaced half the components, then Pyomo's RuntimeError)
        raise ParameterError(
            f"block {block.name!r} already holds the {built.formulation} SVM built there; a "
            "block holds one SVM: build into a new block (svm_models.SVMBlock(), or an indexed "
            "SVMBlock for several), or delete this one first")
    f = _hard_margin_at_infinite_C(lookup(name), params)
    unknown = set(params) - set(f.params)
    if unknown:
        raise ParameterError(f"{name} takes no parameter(s) {sorted(unknown)}; "
                             f"it takes {', '.join(f.params) or 'none'}")
    if f.hard_margin or (f.C_none_is_hard and "C" in params and params["C"] is None):
        _refuse_opposite_duplicates(f.name, X, y, params.get("kernel") == "precomputed")
    with PauseGC():  # thousands of new objects and no garbage: skip collection passes
        return f.builder(X, y, block=block, **params)


def _hard_margin_at_infinite_C(f, params: dict):
    """``C=math.inf`` is the hard margin (as scikit-learn's SVC takes it): a 1-norm or 2-norm
    soft margin is built as the hard margin of the same form (``hard_dual``, ``hard_primal``),
    a radius-margin SVM with ``C=None``. Returns the formulation to build."""
    C = params.get("C")
    if not (isinstance(C, numbers.Real) and not isinstance(C, bool) and C == math.inf):
        return f
    if f.hard_at_infinite_C is not None:
        del params["C"]
        w = params.pop("sample_weight", None)
        try:
            positive = w is None or bool(np.all(np.asarray(w, dtype=float) > 0))
        except (TypeError, ValueError):
            raise ParameterError("sample_weight must be numbers, one per point") from None
        if not positive:
            raise ParameterError("C=inf is the hard margin, where every point counts: a "
                                 "sample_weight <= 0 cannot leave a point out; remove those "
                                 "points from X and y")
        return lookup(f.hard_at_infinite_C)
    if f.C_none_is_hard:
        params["C"] = None
        return f
    if "C" in f.params:   # (C a parameter, but no hard margin of this form is built)
        raise ParameterError(f"C=inf (the hard margin) has no {f.name} variant: give a finite "
                             "C (a large one approaches the hard margin), or take a hard-margin "
                             "formulation (hard_primal, hard_dual)")
    return f


def _refuse_opposite_duplicates(name: str, X, y, precomputed: bool) -> None:
    """A hard margin on data with the same point under both labels: NotSeparableError before
    anything is built or solved, naming the two points (the data are validated by the
    builder too; here only to find them)."""
    import warnings

    from .data import opposite_duplicates, validate

    with warnings.catch_warnings():   # the builder's own validation warns, once
        warnings.simplefilter("ignore")
        data = validate(X, y, precomputed=precomputed)
    pair = opposite_duplicates(data.X, data.y)
    if pair is not None:
        i, j = pair
        what = (f"rows {i} and {j} of the kernel matrix are equal (the same point in feature "
                f"space)" if precomputed else f"points {i} and {j} are equal")
        raise NotSeparableError(
            f"{what} but carry opposite labels ({data.classes[0].item()!r} and {data.classes[1].item()!r}): no "
            f"hyperplane separates them, so the hard-margin {name} has no solution. Use a soft "
            "margin (soft_l1_*/soft_l2_*, or C > 0), or remove the contradictory duplicate.",
            Status.infeasible)


def the_svm_block(model):
    if getattr(model, "_svm", None) is not None and model._svm.block is model:
        return model
    blocks = svm_blocks(model)
    if not blocks:
        raise ParameterError("the model contains no block built by svm_models.build")
    if len(blocks) > 1:
        raise ParameterError(
            f"the model contains {len(blocks)} SVM blocks: solve it as a whole with "
            "svm_models.optimize(model, solver) or a Pyomo solver, then read each with "
            "svm_models.extract(block)")
    return blocks[0]


def _error_for(svm, f, status: Status, message: str) -> SolveFailedError:
    """The typed error of a failed solve (the formulation may know the cause)."""
    err = f.explain_failure(svm, status, message)
    if err is not None:
        return err
    if status in (Status.infeasible, Status.infeasible_or_unbounded) and not f.hard_margin:
        from .model.record import verify

        if verify(svm.record) is None and svm.record.extension_reason() is None:
            # the formulation as built (bounds included): feasible by construction
            # (slacks or free errors, alpha = 0: Ipopt's "local infeasibility" on a poly kernel
            # of entries 1e8, Clarabel's PrimalInfeasible on features of scale 1e-4 at C = 1e15)
            return SolveFailedError(
                f"the solver called the {svm.formulation} model {status.value.replace('_', ' ')}, "
                f"but as built it is feasible by construction: numerical trouble ({message}); "
                "standardise the features or try another backend", Status.numerical_error)
    if status in (Status.infeasible, Status.infeasible_or_unbounded):
        return InfeasibleError(f"the {svm.formulation} model is {status.value.replace('_', ' ')} "
                               f"({message})", status)
    return SolveFailedError(f"the solver stopped without an optimal solution: {status.value} "
                            f"({message})", status)


def solve(model, solver: str = "auto", *, raise_on_failure: bool = True, _state=None,
          _tried=None, **options) -> Solution:
    """Solve a model made by :func:`build` (or a larger model containing one SVM block).

    ``options`` (declared once, with their domains: :class:`svm_models.config.SolveConfig`;
    an unknown one or a value out of its domain is a ParameterError naming it): ``tol``,
    ``time_limit`` (seconds for the whole call -- retries, the polish and the fallbacks
    included, each stage given what is left; default: scaled to the problem, 7.5 s up to
    200 points, see :func:`~svm_models.solvers.base.default_time_limit`; ``math.inf`` for
    none), ``iter_limit``, ``threads``, ``verbose``, ``options`` (raw backend options),
    ``path`` (``"auto"``/``"fast"``/``"general"``), ``scaling``, ``switch``. Returns the :class:`~svm_models.solution.Solution`
    of the SVM block; a non-optimal end is a typed error (or, with
    ``raise_on_failure=False``, a Solution with that status and NaN values). Numerical
    trouble is retried once with a looser tolerance, a stop at the backend's own iteration
    limit (no ``iter_limit`` given) with :data:`~svm_models.tolerances.RETRY_ITER_LIMIT`
    iterations and then also with the looser tolerance, all within the time limit
    (``Solution.retry``). A reported optimum whose own certificate is far off (for the
    classic SVMs: the certificate of exactly the classifier returned) is numerical trouble
    too. Either is tried once more with the formulation's exact scaling the other way round
    (``scaling=``, on the fast path), and a dense kernel block once more scaled diagonally
    (``scaling="diagonal"``), then -- a classic dual's -- centred and scaled diagonally
    (``scaling="centred"``: ``H K H``, the same problem on ``y'a = 0``); if that fails as
    well, the error (or, with ``raise_on_failure=False``, the Solution with status
    ``numerical_error``, its values kept) names what was tried and the backends that take
    the problem class.

    A mixed-integer formulation (``formulations/mip.md``) stopped by its time limit with an
    incumbent returns that incumbent, status ``time_limit`` (never ``optimal``), its gap in
    ``details.mip_gap``; its "optimal" is accepted when that gap, of exactly the classifier
    returned against the solver's bound, is within the tolerance. Its solver is given a
    warm start where the plugin takes one (the family's ``warm_start`` hook: the convex
    SVM, solved by a continuous backend and rounded into a feasible point), reported in
    ``Solution.warm_start`` (its objective, or why there was none). ``switch="indicator"``
    (Gurobi, SCIP) solves it with native indicator constraints in place of its big-M rows
    (a model proved unchanged since it was built only; ``Solution.switch``,
    ``Solution.indicator_rows``); the default ``switch="big_m"`` solves the rows as built.
    """
    opts = SolverOptions.from_kwargs(**options)
    raise_on_failure = solve_config({"raise_on_failure": raise_on_failure})["raise_on_failure"]
    if not hasattr(model, "component_data_objects"):
        raise ParameterError(f"solve takes a Pyomo model or block made by build(); got "
                             f"{type(model).__name__}")
    _refuse_part_of_a_larger_model(model)
    blk = the_svm_block(model)
    svm = blk._svm
    opts = opts.with_deadline(svm.data.n_points, svm.record.problem_class in MIXED_INTEGER)
    options = {**options, "deadline": opts.deadline}
    with Countdown(opts.deadline, label=f"solve ({solver})"), \
            library_threads(svm.data.n_points):
        sol = _solve_within(model, solver, svm, opts, options, raise_on_failure, _state,
                            _tried)
    return keep_model(sol, KeptModel(model=model))


def _solve_within(model, solver, svm, opts: SolverOptions, options: dict,
                  raise_on_failure: bool, _state, tried=None) -> Solution:
    """:func:`solve` once its options carry the deadline (``opts`` and ``options``, the
    same as a dict); ``tried``: ``(backend, what happened)`` of a solve of the same problem
    already made (:func:`fit`'s unbuilt attempt), which ``"auto"`` does not repeat."""
    if str(solver).lower() == "auto":
        return _solve_auto(model, svm, raise_on_failure, _state, options, tried)
    svm.data.check_unchanged()
    f = lookup(svm.formulation)
    b = backend(solver)
    f.check_before_solve(svm, proves_unbounded=b.proves_unbounded)
    first = None
    tried = []
    for attempt in _attempts(svm, opts, structured=b.structured is not None):
        if first is not None and opts.expired():
            break
        run = replace(opts, **attempt)
        info, sol, why = _solve_once(model, solver, svm, f, run, opts, _state,
                                     _warm_starter(svm, f, run))
        if first is None:
            first = (info, sol, why)
        tried.append(_describe_attempt(info, attempt, why))
        if sol is not None and why is None:
            if len(tried) > 1:
                sol = replace(sol, retry_certificate=tried)
            return sol
        if not _worth_retrying(svm, info, why):
            break
    info, sol, why = first
    more = "" if len(tried) < 2 else f"; tried: {'; '.join(tried)}. {_other_options(svm, f, b)}"
    if sol is None:   # the solver's own status was not optimal
        if info.status is Status.time_limit:
            more += time_limit_advice(svm.record, b.name, opts.deadline)
        err = _error_for(svm, f, info.status, info.message + more)
        if raise_on_failure:
            raise err
        if err.status is not None and err.status != info.status:
            # the formulation knows better (a separable hard margin called infeasible is
            # numerical trouble): the Solution says what the error would have said
            info.status, info.message = Status(err.status), str(err)
        return failed_solution(svm, info)
    message = (f"the solver reported an optimal solution, but {why}: numerical trouble, e.g. "
               "nearly degenerate or badly scaled data; try another backend, a soft margin, "
               "or standardised features" + more)
    if raise_on_failure:
        raise _error_for(svm, f, Status.numerical_error, message)
    return replace(sol, status=Status.numerical_error, message=message)


def _solve_auto(model, svm, raise_on_failure: bool, state, options: dict,
                before=None) -> Solution:
    """``solver="auto"``: the backends :func:`~svm_models.solvers.auto_choice` names for this
    model, in order, at most :data:`~svm_models.solvers.table.AUTO_TRIES` of them: the first;
    when it ends in numerical trouble or at an iteration limit (not a time limit, a licence
    or a proof), the next, in the time left -- libsvm's SMO stalls where classes nearly touch
    at a huge C, and on a feature x1e6 PIQP stopped at its iteration limit where Clarabel
    solved the same model. The Solution's ``Solution.solver_choice`` says which was used and
    why (and what failed before it); when all fail, the error names each. ``before``:
    ``(backend, what happened)`` of the same problem solved already, counted as tried."""
    from .solvers.table import AUTO_TRIES

    choices = auto_choice(svm.record.problem_class, svm.record)
    if options.get("switch") == "indicator":   # (only the backends that take it)
        choices = [c for c in choices if backend(c[0]).add_indicators is not None] or choices
    choices = choices[:AUTO_TRIES]
    tried: list[str] = []
    if before is not None and len(choices) > 1 and choices[0][0] == before[0]:
        choices = choices[1:]   # (the last one is solved again: its error is the answer)
        tried.append(f"{before[0]} ended {before[1]}")
    pre = len(tried)
    deadline = options["deadline"]
    final = (Status.time_limit, Status.infeasible, Status.infeasible_or_unbounded)
    sol = failed = None
    last = len(choices) - 1
    for k, (name, why) in enumerate(choices):
        if k > 0 and deadline.expired():
            break
        opts = options
        try:   # (the last one raises the backend's own typed error, as solver=name would)
            sol = solve(model, name, raise_on_failure=raise_on_failure and k == last,
                        _state=state, **opts)
            failed = None if sol.status is Status.optimal else sol.status
        except SolveFailedError as exc:
            if isinstance(exc, InfeasibleError) or len(tried) == pre:
                raise
            if k == last:
                raise type(exc)(f"{exc} (solver='auto' tried {'; '.join(tried)}; then {name})",
                                exc.status) from None
            sol, failed = None, Status(exc.status)
            tried.append(f"{name} ended {failed.value} ({exc})")
            if failed in final:
                break
            continue
        if failed is Status.time_limit and _is_incumbent(sol):
            failed = None   # a MIP's incumbent at the time limit: returned as solve() does
        if failed is None:
            before = "; ".join(tried)
            return replace(sol, solver_choice={
                "asked": "auto", "used": name, "why": why if not tried else f"{before}; then {why}"})
        tried.append(f"{name} ended {Status(failed).value}")
        if failed in final:
            break
    if sol is None:
        raise SolveFailedError(f"solver='auto' tried {'; '.join(tried)}", failed)
    sol = replace(sol, solver_choice={"asked": "auto", "used": sol.solver,
                                      "why": "every backend tried failed: " + "; ".join(tried)})
    if raise_on_failure:
        message = sol.message or ""
        if len(tried) > 1:
            message = f"{message} (solver='auto' tried {'; '.join(tried)})"
        if failed in (Status.infeasible, Status.infeasible_or_unbounded):
            cls = NotSeparableError if lookup(svm.formulation).hard_margin else InfeasibleError
            raise cls(message, failed)
        raise SolveFailedError(message, failed)
    return sol


def _attempts(svm, opts: SolverOptions, structured: bool = False):
    """The ways to solve: as asked, then (a failure or a refused certificate) with the
    formulation's exact scaling the other way round (applied when it was not, left out when
    it was), then -- a dense kernel block -- scaled diagonally (each alpha_i by the power of
    two nearest 1/sqrt(K_ii)), then -- a classic dual's dense block -- centred and scaled
    diagonally (:func:`~svm_models.model.scaling.centred`) -- on the fast path, where the
    scaling applies; not for a ``structured`` backend (libsvm scales the structure itself)."""
    yield {}
    if svm.record.scaling is not None and opts.path != "general" and not structured:
        if opts.scaling != "diagonal":
            yield {"scaling": "off" if opts.scaling in ("on", "auto") else "on"}
        if opts.scaling != "diagonal" and _has_dense_block(svm):
            yield {"scaling": "diagonal"}
        if opts.scaling != "centred" and _has_dense_block(svm) and svm.record.structure:
            yield {"scaling": "centred"}


def _has_dense_block(svm) -> bool:
    """Whether the formulation's quadratic form is a dense kernel block (a dual built in the
    dense form), where :func:`~svm_models.model.scaling.diagonal_scaling` applies."""
    return _quad_form(svm) == "dense"


def _quad_form(svm):
    """The quadratic form a classic dual was built in ("dense" or "factor"; None for the other
    families, whose typed facts have no ``quad_form``)."""
    return getattr(svm.facts, "quad_form", None)


def _other_options(svm, f, b) -> str:
    """What else may solve this model, naming only what applies to it: the other installed
    backends that take its problem class, and the forms of this formulation that exist
    (the other quadratic form of a dual built in one, the other form of a classic SVM on a
    kernel with exact features) -- which :func:`fit` tries itself."""
    from .kernels import exact_factor_dim
    from .solvers import available

    pclass = svm.record.problem_class
    others = [n for n in capable(pclass) if n != b.name and available(n)]
    text = (f"Other installed backends that take this problem class ({pclass}): "
            f"{', '.join(others) or 'none'}")
    forms = []
    form = _quad_form(svm)
    if "quad_form" in f.params and form in ("dense", "factor"):
        forms.append(f"quad_form={({'dense': 'factor', 'factor': 'dense'})[form]!r}")
    if f.other_form is not None and exact_factor_dim(svm.kernel, *svm.data.X.shape) is not None:
        forms.append(f"its other form {f.other_form}")
    if forms:
        text += f"; or build it with {' or as '.join(forms)} (svm_models.fit tries it itself)"
    return text


def _worth_retrying(svm, info, why) -> bool:
    """Whether another attempt can change the outcome: numerical trouble, an iteration limit,
    a refused certificate -- not a licence, a time limit, a proof of infeasibility."""
    if why is not None:
        return True
    if info.path != "fast":
        return False
    if info.status in (Status.numerical_error, Status.iteration_limit, Status.error,
                       Status.unbounded):
        return True
    # a soft margin is feasible by construction (and its dual a box QP): "infeasible" is
    # numerical trouble (Clarabel on the scaled 1-norm primal of data of size 1e7)
    return (info.status in (Status.infeasible, Status.infeasible_or_unbounded)
            and not lookup(svm.formulation).hard_margin)


def _describe_attempt(info, attempt: dict, why) -> str:
    how = ", ".join(f"{k}={v}" for k, v in attempt.items()) or "as asked"
    scaled = "" if not info.scaling else (
        ", scaled diagonally" if info.scaling.get("diagonal")
        else f", scaled by 1/{info.scaling['s']:g}")
    end = info.status.value if why is None or info.status is not Status.optimal else (
        f"optimal but {why}")
    return f"{info.solver} {how}{scaled}: {end}"


def _warm_starter(svm, f, opts: SolverOptions):
    """The family's ``warm_start`` hook bound to this solve (None: the family has none), as
    the callable :func:`~svm_models.solvers.solve_model` calls when the plugin takes a start:
    its convex SVM is fitted by the first installed backend of
    :func:`~svm_models.solvers.local_choice` for its problem class (auto's order, never a
    global solver: never the mixed-integer backend itself), within the solve's time limit."""
    from .solvers.table import local_choice

    if not f.has("warm_start"):
        return None

    def fit_convex(name, X, y, **params):
        pclass = lookup(name).problem_class
        names = local_choice(pclass)
        if not names:
            raise SolverError(f"no continuous backend installed takes the {pclass} {name} "
                              "(see svm_models.solvers())")
        return fit(X, y, name, solver=names[0], time_limit=opts.time_limit,
                   deadline=opts.deadline, **params)

    return lambda: f.warm_start(svm, fit_convex)


def _solve_once(model, solver, svm, f, opts, asked: SolverOptions, state, warm_start=None):
    """One solve and its extraction: ``(info, Solution or None, why refused or None)``."""
    try:
        # (switch="indicator": the rows the binaries switch)
        rows = (lambda: f.indicator_rows(svm)) if f.has("indicator_rows") else None
        info = solve_model(model, solver, record=svm.record, problem_class=svm.record.problem_class,
                           options=opts, state=state, warm_start=warm_start, indicator_rows=rows)
    except LicenseLimitError as exc:
        raise LicenseLimitError(str(exc) + f.licence_hint(svm)) from None
    incumbent = (info.status is Status.time_limit and info.mip is not None
                 and info.mip["solution"])
    if info.status is not Status.optimal and not incumbent:
        return info, None, None
    tol = info.retry.get("tol", opts.tol) if info.retry else opts.tol
    ctx = info.context(tol, certify_tol=asked.tolerance)
    sol = f.extract(svm.block, ctx)
    # what the solve reports besides the values (None: nothing to report)
    said = {"general_path_reason": info.path_reason, "retry": info.retry,
            "scaling": info.scaling, "bounds": info.bounds, "warm_start": info.warm_start}
    sol = replace(sol, **{k: v for k, v in said.items() if v is not None})
    solved_to = info.retry.get("tol", opts.tolerance) if info.retry else opts.tolerance
    if incumbent:   # the incumbent, as found: its status says it is not proved optimal
        return info, sol, None
    return info, sol, _uncertified(sol, solved_to)


def _is_incumbent(sol) -> bool:
    """Whether ``sol`` is a mixed-integer SVM's incumbent at a time limit (values, a gap)."""
    from .solution import MIPDetails

    return (sol is not None and sol.status is Status.time_limit
            and isinstance(sol.details, MIPDetails) and bool(np.isfinite(sol.b)))


def _uncertified(sol: Solution, tolerance: float) -> str | None:
    """Why a reported optimum is not accepted (None: it is). A classic SVM's classifier is
    accepted when its own certificate, computed at exactly what is returned, reaches the
    tolerance (``Solution.classifier_certificate``); the other families' when their relative duality gap
    is within max(CERTIFICATE_GAP, CERTIFICATE_GAP_PER_TOL * tol) and no margin is violated
    beyond CERTIFICATE_REFUSE (e.g. a hard margin of width 1e-10 on nearly collinear points:
    HiGHS said optimal, the gap was 100%)."""
    from .solution import MIPDetails

    if isinstance(sol.details, MIPDetails):
        # a MIP's certificate is its gap: the objective of exactly the classifier returned
        # against the solver's bound (no duals, no KKT conditions: formulations/mip.md)
        allowed = max(MIP_GAP_ACCEPT, MIP_GAP_PER_TOL * tolerance)
        gap = sol.details.mip_gap
        violated = sol.kkt.get("primal_infeasibility", 0.0)
        if gap is not None and (math.isnan(gap) or abs(gap) > allowed):
            return (f"the gap between the objective of the classifier it gives and its bound "
                    f"is {gap:.3g} (at most {allowed:g} is accepted)")
        if violated > CERTIFICATE_REFUSE or math.isnan(violated):
            return (f"a margin row it keeps is violated by {violated:.3g} (at most "
                    f"{CERTIFICATE_REFUSE:g} is accepted)")
        return None
    cert = sol.classifier_certificate
    if cert is not None:
        if cert["certified"]:
            return None
        return (f"the certificate of the classifier it gives is off by {cert['worst']:.3g} "
                f"(relative duality gap {sol.duality_gap:.3g}, balance "
                f"{sol.kkt.get('balance', float('nan')):.3g}, margin violation "
                f"{sol.kkt.get('primal_infeasibility', 0.0):.3g}; at most {cert['accept']:g} "
                "is accepted)")
    allowed = max(CERTIFICATE_GAP, CERTIFICATE_GAP_PER_TOL * tolerance)
    gap = sol.duality_gap
    violated = sol.kkt.get("primal_infeasibility", 0.0)
    if gap is not None and (abs(gap) > allowed or math.isnan(gap)):
        return f"its relative duality gap is {gap:.3g} (at most {allowed:g} is accepted)"
    if violated > CERTIFICATE_REFUSE or math.isnan(violated):
        return (f"a margin is violated by {violated:.3g} (at most {CERTIFICATE_REFUSE:g} is "
                "accepted)")
    return None


def _refuse_uncertified(sol: Solution, svm, f, tolerance: float, raise_on_failure: bool) -> Solution:
    """The Solution, or (its certificate refused, see :func:`_uncertified`) a typed error or
    the Solution with status ``numerical_error``."""
    why = _uncertified(sol, tolerance)
    if why is None:
        return sol
    message = (f"the solver reported an optimal solution, but {why}: numerical trouble, e.g. "
               "nearly degenerate or badly scaled data; try another backend, a soft margin, "
               "or standardised features")
    if raise_on_failure:
        raise _error_for(svm, f, Status.numerical_error, message)
    return replace(sol, status=Status.numerical_error, message=message)


def failed_solution(svm, info) -> Solution:
    import numpy as np

    l = svm.data.n_points
    nan = np.full(l, np.nan)
    return Solution(formulation=svm.formulation, solver=info.solver, status=info.status, w=None,
                    b=float("nan"), alpha=nan, dual_coef=nan.copy(), xi=nan.copy(),
                    support=np.zeros(0, dtype=int),
                    support_vectors=np.zeros((0, svm.data.n_features)), objective=float("nan"),
                    kernel=svm.kernel, classes=svm.data.classes, time=info.time,
                    interface=info.interface, path=info.path, message=info.message,
                    b_source=f"the solve ended {info.status}", retry=info.retry or None,
                    general_path_reason=info.path_reason)


def _refuse_part_of_a_larger_model(model) -> None:
    """A block solved on its own would leave out the constraints and objectives of the model
    around it: refused, naming them (solve the whole model instead)."""
    import pyomo.environ as pyo

    root = model.model()
    if root is model:
        return
    inside = {id(c) for ctype in (pyo.Constraint, pyo.Objective)
              for c in model.component_data_objects(ctype, active=True, descend_into=True)}
    outside = [c.name for ctype in (pyo.Constraint, pyo.Objective)
               for c in root.component_data_objects(ctype, active=True, descend_into=True)
               if id(c) not in inside]
    if outside:
        raise ParameterError(
            f"{model.name!r} is part of a larger model whose active "
            f"{', '.join(outside[:3])}{' ...' if len(outside) > 3 else ''} would be left out "
            "of the solve: solve the model that holds it (sm.solve(model)), or deactivate "
            "them")


def split_solve_options(params: dict) -> dict:
    """Remove and return the solver options (and ``raise_on_failure``) from ``params``."""
    return {k: params.pop(k) for k in list(params) if k in _SOLVE_KEYS or k == "raise_on_failure"}


def fit(X, y, formulation: str = "soft_l1_dual", solver: str = "auto", **params) -> Solution:
    """Build and solve in one call; ``params`` mix hyperparameters and solver options.

    Where a formulation can be built in more than one form (``quad_form="auto"``), the form
    is chosen to fit the backend's limits (Gurobi's size-limited licence); where it can be
    built with a cone or a quadratic row (C tuning, ``form="auto"``), in the backend's
    ``qcqp_form``. When the first build ends in numerical trouble (after :func:`solve`'s own
    retries), the same optimum is sought in the time left, each built anew
    (:func:`_fallbacks`): the other quadratic form (dense or factor) of a form ``auto`` chose
    (``Solution.fallback``), then -- a classic SVM on a kernel with exact features
    (linear, or a poly kernel's monomials) -- its other form, primal for dual or dual for
    primal (``Solution.fallback``; the Solution names the formulation solved) -- first, for
    the linear kernel on features of scales spread beyond :data:`FEATURE_SPREAD`. Where
    that other form can follow, the first build gets half of the time left
    (:data:`FIRST_FORM_SHARE`); out of its share, the other form gets the rest.
    A fallback that solves is a :class:`~svm_models.errors.FallbackWarning` and the
    Solution's ``fallback`` field (kind, asked, solved, reason). If all fail, the error
    names each."""
    solve_kw = split_solve_options(params)
    raise_on_failure = solve_config(solve_kw)["raise_on_failure"]   # (all of them checked)
    solve_kw.pop("raise_on_failure", None)
    f = lookup(formulation)
    unknown = set(params) - set(f.params)
    if unknown:   # (build would name the hyperparameters only)
        raise ParameterError(f"{f.name} takes no parameter(s) {sorted(unknown)}; it takes "
                             f"{', '.join(f.params) or 'none'}, and the solve options "
                             f"{', '.join(SOLVE_OPTIONS)}")
    # the deadline starts here: the kernel and the build are part of the call
    solve_kw = with_deadline(solve_kw, X, formulation)
    opts = SolverOptions.from_kwargs(**solve_kw)
    with Countdown(opts.deadline, label=f"fit {formulation} ({solver})"), \
            library_threads(len(y) if hasattr(y, "__len__") else 0):
        return _fit_within(X, y, f, solver, params, solve_kw, opts, raise_on_failure)


def _fit_within(X, y, f, solver: str, params: dict, solve_kw: dict, opts: SolverOptions,
                raise_on_failure: bool) -> Solution:
    """:func:`fit` once its solve options carry the deadline (``solve_kw``; ``opts`` the
    same, read)."""
    formulation = f.name
    params = params_for_backend(formulation, solver, params)
    unbuilt, read, ended = _fit_unbuilt(X, y, f, solver, params, opts)
    if unbuilt is not None:
        return unbuilt
    with warnings.catch_warnings():
        if read:   # (the data's warnings were given by the unbuilt attempt)
            warnings.simplefilter("ignore", BadScaleWarning)
        model = build(formulation, X, y, **params)
    first_error = None
    structured = str(solver).lower() != "auto" and backend(solver).structured is not None
    plan = _Plan(model, f, params, solver)   # (the fallbacks: made once, when wanted)
    first_kw = _first_share(plan, solve_kw, structured or str(solver).lower() == "auto")
    try:
        first = solve(model, solver, raise_on_failure=raise_on_failure, _tried=ended,
                      **first_kw)
        if first.status is Status.optimal:
            return _with_model(first, formulation, params, model)
        status = first.status
    except SolveFailedError as exc:
        first, first_error, status = None, exc, exc.status
    fallbacks = [] if structured or status not in RETRY_AFTER else plan.fallbacks
    if status is Status.time_limit and first_kw is not solve_kw and not opts.expired():
        # its share spent, not the call's time: the other form, in the rest
        fallbacks = [fb for fb in plan.fallbacks if fb[2] == "retry_formulation"]
    failures = []
    for name, again_params, key, said in fallbacks:
        if opts.expired():
            break
        kw = solve_kw
        with warnings.catch_warnings():   # the data's warnings were given by the first build
            warnings.simplefilter("ignore", BadScaleWarning)
            again = build(name, X, y, **again_params)
        try:
            sol = solve(again, solver, raise_on_failure=raise_on_failure, **kw)
        except (SolveFailedError, LicenseLimitError) as exc:
            failures.append(f"then {said}: {exc}")
            continue
        if sol.status is Status.optimal:
            return _with_model(_fell_back(sol, model, f, key, status, said, again_params),
                               name, again_params, again)
        failures.append(f"then {said}: {sol.status}")
    if first_error is not None and failures:
        raise type(first_error)("; ".join([str(first_error)] + failures),
                                status=first_error.status) from None
    if first_error is not None:
        raise first_error
    # (raise_on_failure=False: the first attempt's Solution)
    return _with_model(first, formulation, params, model)


def _fit_unbuilt(X, y, f, solver: str, params: dict, opts: SolverOptions):
    """:func:`fit` without a Pyomo model, where a structured backend takes the problem as
    data (libsvm on the 1-norm dual, :meth:`~svm_models.formulations.Formulation.unbuilt`):
    ``(Solution, True, None)`` -- certified as :func:`solve` certifies one, its model built
    when read (:attr:`~svm_models.solution.Solution.model`) -- or, where this path does not
    apply or does not end in a certified optimum, ``(None, whether the data were read, how
    the backend ended or None)``: the caller builds the model and solves it as always (the
    retries, the next backend, the errors), ``solver="auto"`` without solving it on that
    backend again."""
    name = _structured_backend(f, solver, opts)
    if name is None or _hard_margin_at_infinite_C(f, dict(params)) is not f:
        return None, False, None
    plan = f.unbuilt(X, y, **params)
    b = backend(name)
    if plan is None or opts.expired() or b.structure_check(plan.record) is not None:
        return None, True, None
    t0 = time.perf_counter()
    for o in _passes(b, opts, plan.svm.kernel):
        t1 = time.perf_counter()
        with drained_output(opts.verbose), preserved_fpu():
            res = b.structured(plan.record, plan.form, o, None)
        took = time.perf_counter() - t1
        if res.status is not Status.optimal or res.x is None:
            ended = (b.name, f"{res.status.value} ({res.message})")
        else:
            sol, why = _certified_unbuilt(plan, f, b, solver, params, opts, res, res.x,
                                          time.perf_counter() - t0,
                                          objective=plan.form.sense * res.objective,
                                          first_tol=None if o is opts else o.tolerance)
            if why is None:
                return sol, True, None
            ended = (b.name, f"optimal, but {why}")
        if not _time_for_another(opts, took):
            if o is not opts:   # (the solve at the tolerance asked never ran)
                ended = (b.name, f"{Status.time_limit.value} (its first solve at "
                         f"tol={o.tolerance:g} ended {ended[1]}; no time was left to solve at "
                         f"tol={opts.tolerance:g})")
            break
    return None, True, ended


def _time_for_another(opts: SolverOptions, took: float) -> bool:
    """Whether the solve at the tolerance asked may follow a first one that took ``took``
    seconds: at least as much time is left (it stops later than the first; a libsvm
    solve that ends after the limit is not used, and only overruns the call)."""
    left = opts.seconds
    return not opts.expired() and (left is None or left >= took)


def _passes(b, opts: SolverOptions, kernel) -> list:
    """The options of a structured backend's solves of one problem on ``kernel``: first at
    its ``first_tol`` where that is looser than the tolerance asked (and no iteration limit
    is set: the user's limit counts the iterations of the solve asked), its answer kept only
    where the polish finishes it; then at the tolerance asked."""
    t = None if b.first_tol is None else b.first_tol(kernel)
    if t is None or opts.iter_limit is not None or opts.tolerance >= t:
        return [opts]
    return [replace(opts, tol=t), opts]


def _certified_unbuilt(plan, f, b, solver: str, params: dict, opts: SolverOptions, res, x,
                       seconds: float, objective=None, *, first_tol: float | None) -> tuple:
    """``(Solution, None)`` of an unbuilt ``plan`` at the backend's optimal point ``x`` (its
    result ``res``; ``objective`` the model's objective there, as the backend reported it, or
    None), read and certified as :func:`solve` reads and certifies a model the record
    proves -- the Solution's objective is the certificate's, at what it returns -- its model
    a recipe (:func:`_model_of`); or ``(None, why)`` when the certificate refuses it, or
    (``first_tol``: ``x`` from a first solve at that tolerance, looser than ``opts``', see
    :func:`_passes`; None: the solve asked) takes another classifier than the polished one
    -- whose alpha is then the model's values, not the first solve's, and the interface
    says so. The thresholds and the certificate are those of ``opts``, the tolerance asked."""
    interface = res.interface if first_tol is None else \
        f"{res.interface} (stopped at tol={first_tol:g}, polished)"
    ctx = Context(solver=b.name, interface=interface, path="fast", time=seconds,
                  status=Status.optimal, tol=opts.tol, verified=True, objective=objective,
                  certify_tol=opts.tolerance)
    sol = plan.extract(ctx, x)
    if first_tol is not None and not sol.polished:
        return None, "the polish did not finish it"
    said = {k: res.extra[k] for k in ("scaling", "bounds") if res.extra.get(k) is not None}
    if said:
        sol = replace(sol, **said)
    why = _uncertified(sol, opts.tolerance)
    if why is not None:
        return None, why
    if str(solver).lower() == "auto":   # (set on the Solution just made: no copy of it)
        object.__setattr__(sol, "solver_choice", {
            "asked": "auto", "used": b.name,
            "why": f"the model is a classic SVM dual as built: {b.note}, the fastest"})
    if first_tol is not None:   # (the model read holds the alpha certified, not the first's)
        x = plan.point(sol.alpha)
    recipe = (_model_of, (f.name, plan.svm.data, params, np.asarray(x, dtype=float)))
    return keep_model(sol, KeptModel(recipe=recipe)), None


#: up to this many points :func:`fit_pairs` forms the rbf kernel's matrix once (l^2 floats,
#: 128 MB at 4,000) and hands it to the backend precomputed -- libsvm then evaluates no
#: kernel (digits, 1,797 points: its call 0.13 s -> 0.07 s) -- and each pair's certificate
#: reads its block
PAIRS_GRAM_MAX = 4000


def fit_pairs(X, y_index: np.ndarray, points: list, formulation: str, solver: str,
              params: dict, weight, solve_kw: dict, gram: np.ndarray | None = None,
              Cs=None) -> list:
    """One-vs-one's binary problems of a multiclass fit solved together, as ``SVC`` trains
    them: where :func:`fit` would solve each unbuilt on a structured backend that declares
    ``pairs`` (libsvm: the 1-norm dual, the rbf or linear kernel, no weight 0), one call for
    all the pairs (:func:`~svm_models.solvers.libsvm.solve_pairs`: the fixed cost of a solve
    paid once), then each pair's answer read and certified as :func:`fit` certifies one. ``points``: each
    pair's points (indices into ``X``; the pairs ``i < j`` of
    :func:`~svm_models.methods.cv.binary_problems`' order, class ``j`` the positive one);
    ``weight``: each point's factor of C (None: 1); ``gram``: the kernel's matrix on ``X``
    where the caller holds it (cross-validation: a fold's, on its points ordered by class),
    else formed here up to :data:`PAIRS_GRAM_MAX` points -- on the points ordered by class,
    each pair's points two runs of its rows (read as slices), the backend handed the points
    in that order and each pair's alpha put back in its points' order --, handed to the
    backend and read by each pair's certificate instead of evaluating the kernel again.
    Returns each pair's Solution, or None where this does not apply or the certificate
    refuses it (the caller fits that pair on its own, as always). Each Solution's ``time`` is
    its share of the call. ``Cs``: the same at each of these Cs (``params`` without C), one
    backend call each, the pairs' problems made once: a list per C."""
    f = lookup(formulation)
    solve_kw = with_deadline(solve_kw, X, formulation)
    opts = SolverOptions.from_kwargs(**{k: v for k, v in solve_kw.items()
                                        if k in _SOLVE_KEYS or k == "deadline"})
    at = [params.get("C")] if Cs is None else list(Cs)
    none = [None] * len(points)
    b = _pairs_backend(f, solver, opts)
    k = int(y_index.max()) + 1 if len(y_index) else 0
    first = {**params, "C": at[0]} if at[0] is not None else dict(params)
    if (b is None or len(points) != k * (k - 1) // 2 or not at or "sample_weight" in params
            or params.get("kernel") == "precomputed"   # (its pairs are blocks, not rows)
            or any(_hard_margin_at_infinite_C(f, {**first, "C": C}) is not f for C in at)):
        return none if Cs is None else [none] * len(at)
    plans = []
    A = as_matrix(X)   # (checked once: each pair's points are rows of it, not checked again)
    finite = _finite_kernel(A, {**f.defaults, **first})
    with warnings.catch_warnings():   # (the estimator said the data's scale once)
        warnings.simplefilter("ignore", BadScaleWarning)
        for pts in points:
            kw = {} if weight is None else {"sample_weight": weight[pts]}
            part = rows_of(A, pts, np.where(y_index[pts] == y_index[pts].max(), 1, -1),
                           finite)
            plans.append(f.unbuilt(part, part.y, **first, **kw))
    if any(p is None for p in plans) or opts.expired():
        return none if Cs is None else [none] * len(at)
    order = None
    if gram is None and len(y_index) <= PAIRS_GRAM_MAX and plans[0].svm.kernel.name == "rbf":
        # formed on the points ordered by class: each pair's points are then two runs of
        # its rows, read as slices (the certificates' kernel columns)
        order = np.argsort(y_index, kind="stable")
        X = np.asarray(X, dtype=float)[order]   # (the points in the matrix's order)
        with library_threads(len(y_index)):
            gram = plans[0].svm.kernel.gram(X)
    if gram is not None:
        place = None if order is None else np.argsort(order)   # (a point's row in gram)
        for plan, pts in zip(plans, points):   # (each pair reads its entries where needed)
            plan.hold_gram(gram, pts if place is None else place[pts])
    with PauseGC():   # (each pair's objects live until the fit ends: no garbage to collect)
        out = [_pairs_at(X, y_index, points, f, b, solver, plans if n == 0 else
                         [plan.at(C) for plan in plans],
                         {**first, "C": plans[0].C if n == 0 else C}, weight, opts, gram, order)
               for n, C in enumerate(at)]
    return out[0] if Cs is None else out


def _finite_kernel(A: np.ndarray, params: dict):
    """The kernel of ``params`` (the formulation's defaults filled in) when its values on all
    the points ``A`` are finite (checked once: each pair's rows then need no check of their
    own), else None (each pair checked, and refused, as a fit of its own)."""
    from .kernels import make_kernel
    from .model.pieces import check_kernel_finite

    try:
        kern = make_kernel(params["kernel"], A, gamma=params["gamma"], degree=params["degree"],
                           coef0=params["coef0"])
        if kern.name != "precomputed":
            check_kernel_finite(kern, A)
            return kern
    except (DataError, ParameterError, KeyError):   # (KeyError: a formulation without them)
        pass
    return None


def _pairs_at(X, y_index, points, f, b, solver: str, plans: list, params: dict, weight,
              opts: SolverOptions, gram, order=None) -> list:
    """:func:`fit_pairs` at one C: the pairs' problems ``plans`` (at that C) in one call of
    the backend ``b``, each answer certified (None where it is not). ``order``: the order of
    the points in ``gram`` and in ``X`` (None: the data's), the backend handed them in it;
    ``y_index``, ``weight`` and ``points`` are in the data's order."""
    out = [None] * len(points)
    C = float(plans[0].C)
    box = np.full(len(y_index), C) if weight is None else C * np.asarray(weight, dtype=float)
    X = np.asarray(X, dtype=float)
    if order is not None:
        y_index, box = y_index[order], box[order]
    k = int(y_index.max()) + 1
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    todo = list(range(len(points)))
    for o in _passes(b, opts, plans[0].svm.kernel):   # (first at the backend's first_tol)
        if opts.expired():
            break
        t0 = time.perf_counter()
        with library_threads(len(y_index)), drained_output(opts.verbose), preserved_fpu():
            got = b.pairs(plans[0].svm.kernel, X, y_index, box, o, gram=gram)
        took = time.perf_counter() - t0
        if got is None:   # (a kernel or box it does not take)
            break
        if got[1] is not None:   # (optimal: each pair's answer certified)
            res, alphas = got
            if order is not None:   # (each pair's alpha in its points' order)
                alphas = _in_order(alphas, order, y_index)
            for n in todo:
                (i, j), plan, pts = pairs[n], plans[n], points[n]
                kw = params if weight is None else {**params, "sample_weight": weight[pts]}
                out[n], _ = _certified_unbuilt(plan, f, b, solver, kw, opts, res,
                                               plan.point(alphas(i, j)), took / len(plans),
                                               first_tol=None if o is opts else o.tolerance)
            todo = [n for n in todo if out[n] is None]
        if not todo or not _time_for_another(opts, took):
            break
    return out


def _in_order(alphas, order: np.ndarray, y_sorted: np.ndarray):
    """``alphas(i, j)`` of a backend handed the points in ``order`` (their labels
    ``y_sorted``), each pair's alpha put in the order of its points in the data."""
    members = class_members(y_sorted, int(y_sorted.max()) + 1 if y_sorted.size else 0)

    def reordered(i: int, j: int) -> np.ndarray:
        at = pair_members(members, i, j)   # (the pair's, in order)
        return alphas(i, j)[np.argsort(order[at], kind="stable")]
    return reordered


def pairs_backend(formulation: str, solver: str, solve_kw: dict):
    """The backend :func:`fit_pairs` hands one-vs-one's pairs to, with the solve options
    ``solve_kw`` (a :class:`~svm_models.solvers.base.Backend` that declares ``pairs``:
    libsvm named, or first under ``"auto"``), or None: each pair is then fitted alone."""
    opts = SolverOptions.from_kwargs(**{k: v for k, v in solve_kw.items() if k in _SOLVE_KEYS})
    return _pairs_backend(lookup(formulation), solver, opts)


def _pairs_backend(f, solver: str, opts: SolverOptions):
    name = _structured_backend(f, solver, opts)
    b = None if name is None else backend(name)
    return b if b is not None and b.pairs is not None else None


def _structured_backend(f, solver: str, opts: SolverOptions) -> str | None:
    """The structured backend (libsvm) that ``solver`` names or ``"auto"`` tries first for
    ``f``, installed, when ``f`` can be solved unbuilt and the options leave the solve to
    it (no ``path="general"``, no indicator switch: those go the ordinary way, which
    refuses or applies them); else None."""
    from .solvers import AUTO_ORDER, BACKENDS, available

    if not f.has("unbuilt") or opts.path == "general" or opts.switch == "indicator":
        return None
    if str(solver).lower() == "auto":
        first = next((n for n in AUTO_ORDER.get(f.problem_class, ()) if available(n)), None)
    else:
        first = str(solver).lower()
    if first not in BACKENDS or BACKENDS[first].structured is None or not available(first):
        return None
    return first


def _model_of(name: str, data, params: dict, x):
    """The model of formulation ``name`` built from ``data`` (the validated Dataset of a
    fit) and ``params``, the solver's values ``x`` (None: none) loaded into its variables:
    what :attr:`~svm_models.solution.Solution.model` builds when first read."""
    from .model.pyomo_compat import load_values

    data.check_unchanged()
    labels = data.classes[(data.y > 0).astype(int)]
    with warnings.catch_warnings():   # (said when the fit validated the data)
        warnings.simplefilter("ignore", BadScaleWarning)
        model = build(name, data.X, labels, **params)
    if x is not None:
        load_values(model._svm.record.var_datas(), list(x))
    return model


def _with_model(sol, name: str, params: dict, model):
    """``sol`` keeping, as its model (:attr:`~svm_models.solution.Solution.model`), a
    recipe for ``model``: the same build and the solver's values (the fit's own model is
    not kept alive with its kernel columns; it is built again when read)."""
    from .model.pyomo_compat import values_of

    if sol is None:
        return sol
    svm = the_svm_block(model)._svm
    x = values_of(svm.record.var_datas())
    x = None if any(v is None for v in x) else np.asarray(x, dtype=float)
    return keep_model(sol, KeptModel(recipe=(_model_of, (name, svm.data, params, x))))


#: the share of the time left that the first form gets where ``fit`` has an exact other
#: form to try after it (:func:`_first_share`)
FIRST_FORM_SHARE = 0.5


class _Plan:
    """:func:`fit`'s fallbacks after its first build (:func:`_fallbacks`), made on first
    read and kept: the first share (:func:`_first_share`) and the retries read the same
    list."""

    def __init__(self, model, f, params: dict, solver: str):
        self._args, self._list = (model, f, params, solver), None

    @property
    def fallbacks(self) -> list[tuple]:
        if self._list is None:
            self._list = _fallbacks(*self._args)
        return self._list


def _first_share(plan: _Plan, solve_kw: dict, keep: bool) -> dict:
    """``solve_kw`` for the first solve of :func:`fit`: where the other form of a classic SVM
    is a fallback (a kernel with exact features), a deadline that ends after
    :data:`FIRST_FORM_SHARE` of the time left, so that the other form has the rest -- SCIP
    spent the whole default limit on the 1-norm dual of 5 points with a feature of 3e6
    (random problem 186), whose primal it solves in 0.2 s; else (or ``keep``: libsvm, or
    ``solver="auto"``, which tries its next backend itself) ``solve_kw`` itself."""
    deadline = solve_kw.get("deadline")
    if keep or deadline is None or deadline.limit is None:
        return solve_kw
    if not any(key == "retry_formulation" for *_, key, _ in plan.fallbacks):
        return solve_kw
    return {**solve_kw, "deadline": deadline.share(FIRST_FORM_SHARE)}


def _fell_back(sol, model, f, key: str, status, said: str, params: dict) -> Solution:
    """The Solution of a fallback that solved, saying so three ways: a
    :class:`~svm_models.errors.FallbackWarning`, the declared ``Solution.fallback`` (its
    ``message`` also read, as before, as ``extra[key]``)."""
    was = _quad_form(the_svm_block(model)._svm)
    first_try = f"quad_form={was!r}" if key == "retry_quad_form" else f.name
    text = f"{first_try} failed ({Status(status).value}); solved {said}"
    if key == "retry_quad_form":
        fallback = {"kind": "quad_form", "asked": was, "solved": params["quad_form"]}
    else:
        fallback = {"kind": "formulation", "asked": f.name, "solved": sol.formulation}
    warnings.warn(f"svm_models.fit: {text}, the same optimum (Solution.fallback says so)",
                  FallbackWarning, stacklevel=user_stacklevel())
    return replace(sol, fallback={**fallback, "reason": Status(status).value, "message": text})


def with_deadline(solve_kw: dict, X, formulation: str) -> dict:
    """``solve_kw`` (solve options, perhaps with others: ``batch``) with the
    :class:`~svm_models.solvers.base.Deadline` of a call that starts now -- from its
    ``time_limit``, or the default scaled to the points of ``X`` -- unless it carries one:
    the entry points (``fit``, ``SVMClassifier.fit``) make it once, every solve below
    shares it."""
    if solve_kw.get("deadline") is not None:
        return solve_kw
    opts = SolverOptions.from_kwargs(**{k: v for k, v in solve_kw.items() if k in _SOLVE_KEYS})
    mip = lookup(formulation).problem_class in MIXED_INTEGER
    return {**solve_kw, "deadline": opts.with_deadline(_points(X), mip).deadline}


def _points(X) -> int | None:
    """The number of points of ``X`` as given (None when it has no length: the data check
    says what is wrong with it)."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    try:
        return len(X)
    except TypeError:
        return None


def time_limit_advice(record, solver: str, deadline) -> str:
    """What a solve stopped by its deadline says: the limit and the time spent, and the
    installed backends that take the model, fastest first (``solver="auto"``'s order: for a
    classic dual as built, libsvm), besides ``solver``."""
    from .solvers import AUTO_ORDER, BACKENDS, module_present, structure_refusal

    said = "" if deadline is None else f"; {deadline.describe()}, {deadline.spent():.3g} s spent"
    others = []
    for n in AUTO_ORDER.get(record.problem_class, ()):   # (installed: their modules, cheaply)
        b = BACKENDS[n]
        if n == solver or not all(module_present(m) for m in b.modules):
            continue
        if b.structured is None or structure_refusal(b, record) is None:
            others.append(n)
    if others:
        said += (f". Installed backends that take this model, fastest first: "
                 f"{', '.join(others)}")
    if deadline is not None and deadline.default:
        said += "; or pass time_limit= (seconds; math.inf for none) for more time"
    return said


#: the statuses of a first solve after which :func:`fit` tries its fallbacks: none after a
#: time limit, a licence or a proof (a soft margin called infeasible is numerical_error
#: already, see ``classic.explain_failure``)
RETRY_AFTER = (Status.numerical_error, Status.iteration_limit, Status.error)


def _fallbacks(model, f, params: dict, solver: str) -> list[tuple]:
    """The builds to try after a first solve that ended in one of :data:`RETRY_AFTER`, each
    as (formulation, params, the ``extra`` key that records it, what it is): none when the
    user fixed the form (``quad_form``) or a low-rank kernel (``kernel_rank``).

    * the other quadratic form (dense or factor) of a form ``auto`` chose: on large offsets
      (a linear kernel of data 1e7 away from the origin) one form failed on HiGHS, PIQP and
      Clarabel where the other was solved and certified;
    * a classic SVM's other form (primal for dual, dual for primal), where the kernel has
      exact features (:func:`~svm_models.kernels.exact_factor_dim`): the same optimum by
      strong duality. On a feature x1e6 of a linear kernel (entries 1e19) the dual's
      Hessian has a condition number of 1e12 and every backend failed on it, where the
      primal (identity Hessian, rows that the backends equilibrate) was solved and certified
      through the primal's own w.

    For the linear kernel on features whose scales differ by more than
    :data:`FEATURE_SPREAD` the other form comes first: its dual's other quadratic form is the
    dense ``XX'``, which squares that spread (which no one scale of the kernel undoes; SCIP
    spent the time left building the dense objective of random problem 85, 87 points, a
    feature of 8e7 beside one of 1, whose primal it solves in 0.7 s)."""
    from .kernels import exact_factor_dim

    if params.get("quad_form", "auto") != "auto" or params.get("kernel_rank") is not None:
        return []
    svm = the_svm_block(model)._svm
    out = []
    form = _quad_form(svm)
    if "quad_form" in f.params and form in ("dense", "factor"):
        other = {"dense": "factor", "factor": "dense"}[form]
        out.append((f.name, {**params, "quad_form": other}, "retry_quad_form",
                    f"with quad_form={other!r}"))
    name = f.other_form
    if name is not None and exact_factor_dim(svm.kernel, *svm.data.X.shape) is not None:
        partner = lookup(name)
        again = params_for_backend(name, solver, {k: v for k, v in params.items()
                                                  if k in partner.params})
        out.append((name, again, "retry_formulation", f"as its other form {name}"))
    if svm.kernel.is_linear and _feature_spread(svm.data.X) > FEATURE_SPREAD:
        out.sort(key=lambda fb: fb[2] != "retry_formulation")
    return out


#: the spread of the features' scales (largest over smallest) beyond which ``fit`` tries the
#: linear kernel's other form before the dense form of its dual (:func:`_fallbacks`)
FEATURE_SPREAD = 1e6


def _feature_spread(X) -> float:
    """The largest feature's scale (its largest absolute value) over the smallest nonzero one
    (1 without two nonzero features)."""
    top = np.max(np.abs(np.asarray(X, dtype=float)), axis=0, initial=0.0)
    top = top[top > 0]
    return float(top.max() / top.min()) if top.size > 1 else 1.0


def params_for_backend(formulation: str, solver: str, params: dict) -> dict:
    """``params`` with the forms that suit the backend filled in where left to ``auto``: the
    largest model it takes (``max_vars``: the dense or factor quadratic form that fits
    Gurobi's size-limited licence) and C tuning's cone or quadratic row (``qcqp_form``).
    Used by :func:`fit` and the methods that build once and solve many times (fit_path)."""
    f = lookup(formulation)
    b = backend(general_backend(solver, f.problem_class))
    params = dict(params)
    if "max_vars" in f.params and "max_vars" not in params:
        limit = b.max_quadratic_vars if f.problem_class != "LP" else b.max_vars
        if limit is not None:
            params["max_vars"] = limit
    if "form" in f.params and params.get("form", "auto") == "auto":
        params["form"] = b.qcqp_form
    return params


def general_backend(solver: str, problem_class: str) -> str:
    """``solver``, or for ``"auto"`` the first backend it would try that takes any model of
    ``problem_class`` (not a structured one): whose limits and forms a build is made for."""
    if str(solver).lower() != "auto":
        return solver
    return next(n for n, _ in auto_choice(problem_class) if not backend(n).structured)


def extract(block, *, solver: str = "", duals=None, tol=None) -> Solution:
    """Solution of an SVM block that the user solved inside a model of their own.

    Values are read from the block's variables. ``duals`` (a mapping constraint -> dual, such
    as the Suffix ``dual`` the solver filled) gives a primal's alpha from multipliers, and a
    changed dual's b (the multiplier of ``balance``) where the values alone do not; without
    it alpha is recovered from the KKT conditions. Any sign convention is read: interfaces
    differ in sign (see each backend's ``dual_sign``), and inside a larger model the sign
    follows the sense of the user's objective, so the duals are read in the sign that is dual
    feasible for the block's own rows (:func:`~svm_models.postprocess.user_dual_sign`;
    ``Solution.dual_sign`` says when they were flipped); when that cannot be decided, a
    ParameterError. ``tol`` is the tolerance the block was solved to (it
    scales the support-vector threshold; default 1e-9). On a block that is still the
    formulation, values whose own certificate is far off (a relative duality gap or a margin
    violation beyond what :func:`solve` accepts) come back with status ``numerical_error``
    and the reason in ``Solution.message``, never as ``optimal``; so does, on any block, a
    Solution without a bias b (NaN: the values do not determine it), with the reason.
    """
    from .model.record import verify

    blk = the_svm_block(block)
    svm = blk._svm
    svm.data.check_unchanged()
    f = lookup(svm.formulation)
    for vd in svm.record.var_datas():
        if vd.value is None:
            raise SVMError(f"variable {vd.name} has no value: solve the model before extracting")
    unproved = verify(svm.record) or svm.record.extension_reason()
    # the duals of a model whose objective holds the formulation's as c E + rest are c times
    # the formulation's (their sign then follows dual feasibility: user_dual_sign)
    scale = 1.0 if unproved is None else objective_scale(svm.record)
    ctx = Context(solver=solver, interface="user", path="user", tol=tol, duals=duals,
                  verified=unproved is None, reason=unproved, scale=scale)
    sol = f.extract(blk, ctx)
    if unproved is None:   # the formulation itself: its certificate must hold, as after solve()
        sol = _refuse_uncertified(sol, svm, f, 1e-9 if tol is None else tol, False)
    if sol.status is Status.optimal and not math.isfinite(sol.b):
        # no classifier without b: never "optimal" (a loose solve of a larger model whose
        # values satisfy the SVM's conditions only roughly, no duals given; balance deleted)
        why = sol.b_source or "b is not available"
        sol = replace(sol, status=Status.numerical_error,
                      message=f"the values as solved give no bias b: {why}")
    return sol

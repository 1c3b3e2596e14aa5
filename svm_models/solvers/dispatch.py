"""Solving a Pyomo model with one backend: pick the path, run, check, normalise.

1. the capability table refuses a backend that cannot take the model's problem class
   *before* anything runs, naming the backends that can;
2. the **fast path**: when the model carries a builder's record and
   :func:`~svm_models.model.record.verify` proves the model is what the record says, the
   backend is handed the record's matrices directly;
3. otherwise the **general path**: the installed Pyomo plugin solves the Pyomo model (PIQP and
   Clarabel, which have no plugin, get the model read into matrices by
   :func:`~svm_models.model.reader.from_pyomo`, which proves it convex); a local solver
   (Ipopt) is refused a model proved non-convex; a mixed-integer model (MILP, MIQP) always
   takes this path (a matrix adapter would drop its integrality), with the backend's gap
   options, and its result carries the solver's bound and incumbent (``SolveInfo.mip``):
   at a time limit the incumbent is loaded, with status ``time_limit``; a start for it
   (the caller's ``warm_start``: the mixed-integer SVMs' rounded convex solution) is
   computed only when the plugin takes one, and passed to it (``warmstart=True`` to
   ``gurobi_direct``, ``warmstart_discrete_vars`` to ``scip_direct``; ``highs`` takes none);
   with ``switch="indicator"`` (Gurobi, SCIP; a model the record proves unchanged, whose
   family names its switched rows) the model is set on the backend's persistent plugin and
   each big-M row is replaced there by a native indicator constraint
   (:func:`_indicator_rows`); anything else asked to switch so is refused before a solve;
4. every solve runs with a time limit and with the backend's output drained to a file, so
   that no solve can hang on a full pipe; the limit is the time left before the call's
   :class:`~svm_models.solvers.base.Deadline` (``SolverOptions.deadline``): each stage --
   assembling the matrices, each solve of the retries, of the working set and of the
   far-bound rungs -- gets what is left, and none is started once it has passed (status
   ``time_limit``);
5. the status is checked before any value is read; duals are normalised to one convention --
   d(optimal objective)/d(constraint bound), in the model's own sense -- whatever the
   interface reported.
"""

from __future__ import annotations

import contextlib
import operator
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from pyomo.common.collections import ComponentMap

from ..errors import (CapabilityError, ParameterError, SolverError, SolverUnavailableError,
                      SVMError, plain)
from ..model.pyomo_compat import load_values
from ..model.mixed import Edits, assemble_edited, edits, objective_scale
from ..model.reader import NotConvex, NotQuadratic, from_pyomo
from ..model.record import verify
from ..model.scaling import (centred, diagonal_scaling, proxy_bounds, proxy_inactive, scale,
                             within_bounds, without_bounds,
                             scaling_for)
from ..model.standard_form import MIXED_INTEGER, assemble
from ..postprocess import Context
from ..status import Status
from ..tolerances import (PROXY_BOUND, PROXY_BOUND_MAX, PROXY_GROWTH, RELAXED_TIME_FACTOR,
                          RELAXED_TIME_MIN, RETRY_ITER_LIMIT,
                          RETRY_TOL, RETRY_TOL_FACTOR)
from .base import MIN_SECONDS, SolverOptions, drained_output, out_of_time, preserved_fpu
from .table import (BACKENDS, PROJECT_BACKENDS, backend, capable, check_capability,
                    pyomo_plugin, structure_refusal)
from .working_set import solve_with_working_set


@dataclass(eq=False)
class SolveInfo:
    """What a solve produced besides the variable values (loaded into the model).

    ``verified``: the record proves the model is what the builder made (whatever the path);
    ``unproved``: why not, when it does not; ``path_reason``: why the general path was taken;
    ``retry``: what the retry after numerical trouble did (None: no retry); ``mip``: of a
    mixed-integer model, ``{"bound", "incumbent", "solution"}`` -- the solver's best bound
    and the objective of its incumbent (the model's own sense) and whether that incumbent
    is loaded in the model (also at a time limit) -- else None; ``warm_start``: of a
    mixed-integer model solved with a ``warm_start`` callable, its report (the start's
    objective and how the plugin was given it, or why there was none); ``switch``: of a
    mixed-integer model, what was solved -- ``{"switch": "big_m"}`` (the rows as built) or
    ``{"switch": "indicator", "indicator_rows": n}`` (n native indicator constraints in
    place of the big-M rows)."""

    status: Status
    solver: str
    interface: str
    path: str
    time: float
    objective: float | None = None
    duals: Mapping | None = None
    message: str = ""
    iterations: int | None = None
    path_reason: str | None = None
    verified: bool = False
    unproved: str | None = None
    retry: dict | None = None
    scaling: dict | None = None
    #: far bounds solved in their place: {"proxy": bound, "moved": n} or {"dropped": n}
    bounds: dict | None = None
    mip: dict | None = None
    warm_start: dict | None = None
    switch: dict | None = None
    objective_scale: float | None = 1.0
    #: the standard form a matrix backend solved to optimality (None: a Pyomo plugin, or no
    #: optimum): its variables and the gradients of its objective and rows at the loaded
    #: values give the reduced costs (:mod:`~svm_models.solvers.pyomo_factory`)
    form: object = None

    def context(self, tol: float | None, certify_tol: float | None = None) -> Context:
        """What the extractor reads of this solve (:class:`~svm_models.postprocess.Context`):
        ``tol`` the tolerance the values were solved to, ``certify_tol`` the one asked for."""
        extra = {} if self.mip is None else {"mip": dict(self.mip)}
        if self.switch is not None:
            extra["switch"] = dict(self.switch)
        return Context(solver=self.solver, interface=self.interface, path=self.path,
                       time=self.time, status=self.status, tol=tol, duals=self.duals,
                       verified=self.verified, reason=self.unproved, objective=self.objective,
                       certify_tol=certify_tol, scale=self.objective_scale, extra=extra)


def solve_model(model, solver: str = "ipopt", *, record=None, problem_class=None,
                options: SolverOptions | None = None, state: dict | None = None,
                warm_start=None, indicator_rows=None) -> SolveInfo:
    """Solve a Pyomo model with backend ``solver``; load values into it; return a SolveInfo.

    ``record`` is the builder's record (fast path when it proves the model); ``state`` keeps
    backend objects between calls for warm re-solves (parameter paths); ``warm_start``, for
    a mixed-integer model: a callable that sets the variables to a feasible start and
    returns its report (``{"objective": ...}``, or ``{"objective": None, "why": ...}``),
    called only when the backend's plugin takes a start (:func:`_warm_start_route`);
    ``indicator_rows``, for ``switch="indicator"``: a callable that returns the rows the
    model's binaries switch (the family's ``indicator_rows`` hook; None: it has none). A
    non-optimal status is returned, not raised: the caller maps it to its typed error.
    """

    pclass = problem_class or (record.problem_class if record is not None else None)
    opts = (options or SolverOptions()).with_deadline(mixed_integer=pclass in MIXED_INTEGER)
    if opts.switch == "indicator":
        _refuse_indicator_backend(solver)
    b = check_capability(solver, None if backend(solver).structured else pclass)
    unproved = verify(record) if record is not None else "the model carries no builder record"
    mip = pclass in MIXED_INTEGER
    indicators = (_indicator_rows(record, pclass, unproved, indicator_rows)
                  if opts.switch == "indicator" else None)
    reason = _why_not_fast(b, record, pclass, opts, unproved)
    if reason is not None and opts.path == "fast":
        raise SolverError(f"the fast path is not possible: {reason}")
    # an edited model: the record for what it still proves, Pyomo for the edits
    mixed = None
    if (reason is not None and unproved is not None and record is not None
            and opts.path != "general" and b.matrix is not None and not mip):
        ed = edits(record)
        mixed = ed if isinstance(ed, Edits) else None

    def run(o: SolverOptions) -> SolveInfo:
        if b.structured is not None:
            return _solve_fast(record, b, o, state, structured=True)
        if reason is None:
            return _solve_fast(record, b, o, state)
        out = _solve_mixed(record, mixed, b, o) if mixed is not None else None
        if out is None:
            out = _solve_general(model, b, o, verified=unproved is None, mip=mip,
                                 warm_start=warm_start if mip else None,
                                 indicators=indicators)
        out.path_reason = reason
        return out

    info = _with_retries(run, opts)
    # rows added to the record after the build (a user's pair family) keep the fast path
    # sound, but the formulation's own mathematics (KKT rules for b, duality gaps) no longer
    # describe the model
    extended = record.extension_reason() if record is not None else None
    info.verified = unproved is None and extended is None
    info.unproved = unproved or extended
    if record is not None and unproved is not None:
        # how the model's objective holds the builder's: its duals are that factor times the
        # formulation's (a user minimising -E), or unreadable (None)
        info.objective_scale = objective_scale(record)
    return info


def _why_not_fast(b, record, pclass, opts: SolverOptions, unproved) -> str | None:
    """Why the model does not go the fast path to backend ``b`` (None: it does; a structured
    backend that cannot take it refuses here)."""
    if b.structured is not None:
        _refuse_structure(b, record, pclass, opts, unproved)
        return None
    if pclass in MIXED_INTEGER:
        return (f"a {pclass} has no fast path: the Pyomo plugin solves it with its integer "
                "variables")
    if opts.path == "general":
        return "the general path was requested"
    if record is None or unproved is not None:
        return unproved
    if b.matrix is None:
        return f"{b.name} has no matrix interface"
    # (a backend whose plugin takes this model as fast as its matrices: "auto" asks)
    return b.matrix_when(record) if b.matrix_when is not None and opts.path == "auto" else None


def _with_retries(run, opts: SolverOptions) -> SolveInfo:
    """``run(opts)``, and on numerical trouble once more with a looser tolerance (an
    interior-point method stalls near its round-off floor); at the backend's own iteration
    limit (the user set none) once more with more iterations, then with the looser tolerance
    too (PIQP ran 10,000 iterations on a hard dual of three 1-D points, 91, 91.01 and a
    near-twin, without reaching 1e-9; at 1e-6 it solves in 0.01 s). Within what is left of
    the time limit; reported in the Solution's extra["retry"]."""
    info = run(opts)
    looser = max(RETRY_TOL_FACTOR * opts.tolerance, RETRY_TOL)
    if info.status is Status.numerical_error:
        ladder = [{"tol": looser}]
    elif info.status is Status.iteration_limit and opts.iter_limit is None:
        ladder = [{"iter_limit": RETRY_ITER_LIMIT}, {"iter_limit": RETRY_ITER_LIMIT, "tol": looser}]
    else:
        ladder = []
    first, attempts = info, 0
    for what in ladder:
        if opts.expired():
            break
        info = run(replace(opts, **what))
        attempts += 1
        info.retry = {"first_status": first.status.value, "first_message": first.message,
                      **what, "status": info.status.value, "attempts": attempts}
        if info.status is Status.optimal:
            break
    if attempts and info.status is not Status.optimal:
        said = ", ".join(f"{k}={v:g}" for k, v in info.retry.items()
                         if k in ("tol", "iter_limit"))
        info.message = (f"{info.message}; also after {attempts} retr"
                        f"{'y' if attempts == 1 else 'ies'}, the last with {said} "
                        f"(first attempt: {first.message})")
    return info


def _indicator_backends() -> list[str]:
    """The backends that take ``switch="indicator"`` (those with ``add_indicators``)."""
    return [n for n, bk in BACKENDS.items() if bk.add_indicators is not None]


def _refuse_indicator_backend(solver: str) -> None:
    """``switch="indicator"`` with a backend that has no indicator constraints: a
    CapabilityError before anything runs, naming those that have."""
    b = backend(solver)
    if b.add_indicators is None:
        raise CapabilityError(
            f"solver {b.name!r} does not take switch='indicator' (native indicator constraints "
            f"in place of the big-M rows); the backends that do: "
            f"{', '.join(_indicator_backends())}. Use one of them, or the default "
            "switch='big_m'")


def _indicator_rows(record, pclass, unproved, indicator_rows) -> list:
    """The rows to switch by indicator constraints (``switch="indicator"``), or a
    ParameterError before anything runs: the model must be a mixed-integer SVM whose family
    names its switched rows, proved unchanged since it was built (an edited model -- a row
    of the user's, a bound changed -- is not the model the rows were named for)."""
    if record is None or pclass not in MIXED_INTEGER or indicator_rows is None:
        what = f"a {pclass}" if pclass is not None else "a model without a builder record"
        raise ParameterError(
            f"switch='indicator' applies to the mixed-integer SVMs, whose binaries switch "
            f"rows with a proved big-M (formulations/mip.md); this model ({what}) has no such "
            "rows: solve it with the default switch='big_m'")
    reason = unproved if unproved is not None else record.extension_reason()
    if reason is not None:
        raise ParameterError(
            f"switch='indicator' replaces the big-M rows the builder made by indicator "
            f"constraints, and is taken only on a model proved unchanged since it was built; "
            f"this one was changed ({reason}): solve it with the default switch='big_m'")
    rows = list(indicator_rows())
    if not rows:
        raise ParameterError("switch='indicator': this model has no row switched by a binary; "
                             "solve it with the default switch='big_m'")
    return rows


def _run(fn, opts, *args):
    """Run a backend call with its output drained and the FPU state kept."""
    with drained_output(opts.verbose), preserved_fpu():
        return fn(*args)


def _refuse_structure(b, record, pclass, opts: SolverOptions, unproved) -> None:
    """A structured backend (libsvm) takes a model only when the record proves it is the
    structure it solves, unchanged (bounds included); else a CapabilityError before anything
    runs, naming the backends that take the model's problem class."""

    if opts.path == "general":
        why = "the general path was requested (it solves only the recorded structure)"
    else:
        why = structure_refusal(b, record, unproved)
    if why is None:
        return
    usable = [n for n in capable(pclass or "QP") if n in PROJECT_BACKENDS]
    raise CapabilityError(f"solver {b.name!r} cannot take this model: {why}. Use one of: "
                          f"{', '.join(usable)}")


def _solve_fast(record, b, opts: SolverOptions, state, structured: bool = False) -> SolveInfo:
    """The record's matrices to the backend's matrix adapter (exactly scaled), or -- a
    ``structured`` backend (libsvm), which scales the structure itself -- the record and its
    standard form to the backend's structured adapter."""
    t0 = time.perf_counter()
    sf = assemble(record, materialise=not structured)
    if structured:
        call = (b.structured, record, sf, opts, state)
    elif opts.scaling == "centred":
        call = (_solve_centred, b.matrix, sf, record, opts, state)
    else:
        sc = None
        if opts.scaling == "diagonal":
            sc = diagonal_scaling(sf)
        elif opts.scaling != "off":
            sc = scaling_for(record.scaling, record.block, sf, force=opts.scaling == "on")
        call = (solve_matrix, b.matrix, sf, sc, opts, state)
    return _matrix_info(b, opts, sf, "fast", t0, *call)


def _solve_centred(adapter, sf, record, opts: SolverOptions, state):
    """``sf`` with its classic dual's kernel block centred
    (:func:`~svm_models.model.scaling.centred`: the same problem on ``y'a = 0``), then
    scaled diagonally (:func:`~svm_models.model.scaling.diagonal_scaling`, exact: the
    centred diagonal is no longer one number); the objective that of ``sf`` itself at the
    answer. A model without such a block is solved as it is."""
    st = getattr(record, "structure", None)
    work = centred(sf, st) if st is not None and st.z is None else None
    if work is None:
        work = sf
    res = solve_matrix(adapter, work, diagonal_scaling(work), opts, state)
    if res.x is not None:
        res.objective = sf.objective(res.x)
    res.extra["centred"] = work is not sf
    return res


def solve_matrix(adapter, sf, sc, opts: SolverOptions, state=None):
    """``adapter`` on the standard form ``sf`` scaled by ``sc`` (None: as it is), with bounds
    far beyond the problem's scale moved in (:func:`~svm_models.model.scaling.proxy_bounds`)
    as long as the answer stays well inside them; re-solves along a path through the working
    set (``state``). The result is that of ``sf`` itself (mapped back exactly)."""
    work = scale(sf, sc) if sc is not None else sf
    if state is not None:
        _rescale_state(state, sc, sf.n)
    bound = PROXY_BOUND
    relaxed = False
    # the rungs after the first repair it: together at most half the time left now, the
    # rest kept for the caller's other attempts (the scaling the other way round: Ipopt
    # spent a default limit on the rungs of a scaled box of 2.3e9 and solved the problem
    # unscaled in 0.6 s)
    left = opts.seconds
    repair = opts if left is None else replace(opts, time_limit=left / 2)
    repair_end = None if left is None else time.monotonic() + left / 2
    first = True
    while True:
        t_rung = time.perf_counter()
        proxied, moved = proxy_bounds(work, bound)
        res = solve_with_working_set(adapter, proxied, opts if first else
                                     _until(repair, repair_end), state)
        if moved is None or (opts.expired() and res.status is not Status.optimal) or (
                first and res.status is Status.time_limit):   # (no rung repairs a time limit)
            break
        first = False
        if res.status is Status.optimal and res.x is not None and proxy_inactive(res.x, moved,
                                                                                 bound):
            res.extra["bounds"] = {"proxy": bound, "moved": int(moved[0].sum() + moved[1].sum())}
            break
        if not relaxed:   # a moved bound is reached (or the solve failed): first without them
            relaxed = True
            # (unless the true bounds are near the proxy, NEAR_PROXY: a box of C = 1.14e6
            # after scaling, proxied at 1e6, reached -- without it the QP of a low-rank
            # kernel is unbounded, and Ipopt diverged for 6.8 s before the true box was
            # solved in 0.4 s)
            far = _far_beyond(work, moved, bound * NEAR_PROXY)
            free = None if not far else _solve_without_bounds(
                adapter, work, moved, _until(repair, repair_end), state,
                time.perf_counter() - t_rung)
            if free is not None:
                res = free
                break
        bound *= PROXY_GROWTH   # ... then larger ones
        if bound > PROXY_BOUND_MAX:   # ... up to the true bounds
            res = solve_with_working_set(adapter, work, _until(repair, repair_end), state)
            break
    if not first and res.status is Status.time_limit and not opts.expired():
        # a repair rung ran out of its share, the call has time left: the solve failed,
        # which the caller may try otherwise (not the call's time limit)
        res.status = Status.numerical_error
        res.message = (f"the far-bound rungs (bounds moved in to {PROXY_BOUND:g} and beyond) "
                       f"did not settle within half the time left ({res.message})")
    if sc is not None:
        sc.unscale_result(res)
        if res.x is not None:
            res.objective = sf.objective(res.x)
    return res


def _solve_without_bounds(adapter, work, moved, opts: SolverOptions, state, spent: float):
    """The result of ``work`` with the moved (far) bounds dropped, when it is optimal and
    satisfies them -- then it is ``work``'s own optimum --, else None. Its time is capped
    (:data:`~svm_models.tolerances.RELAXED_TIME_FACTOR` times the proxy's solve, at least
    :data:`~svm_models.tolerances.RELAXED_TIME_MIN` s, within the time limit): without the
    bounds the problem may be unbounded (an inseparable hard margin), which some backends
    are slow to say."""
    cap = max(RELAXED_TIME_MIN, RELAXED_TIME_FACTOR * spent)
    if opts.seconds is not None:   # (and half the time left at most: the rungs that follow)
        cap = min(cap, opts.seconds / 2)
    res = solve_with_working_set(adapter, without_bounds(work, moved),
                                 replace(opts, time_limit=cap), state)
    if res.status is not Status.optimal or res.x is None or not within_bounds(res.x, work, moved):
        return None
    res.extra["bounds"] = {"dropped": int(moved[0].sum() + moved[1].sum())}
    return res


#: the moved bounds within this factor of their proxy are solved as they are, not first
#: dropped (a box of 1.14e6 proxied at 1e6: the true box is as easy as the proxy, and the
#: problem without it may be unbounded); beyond it the box is dropped first (moons at
#: C = 1e8: the hard margin, solved at once, lies inside; the box [0, 1e9] stalled HiGHS)
NEAR_PROXY = 10.0


def _until(opts: SolverOptions, end: float | None) -> SolverOptions:
    """``opts`` with a time limit that ends at ``end`` (``time.monotonic``; None: as they
    are); within the call's deadline either way."""
    if end is None:
        return opts
    return replace(opts, time_limit=max(end - time.monotonic(), MIN_SECONDS))


def _far_beyond(work, moved, bound: float) -> bool:
    """Whether some bound that ``moved`` names lies beyond ``bound`` (or is infinite): else
    the next rung of the proxy ladder solves the true bounds."""
    big_l, big_u = moved
    return bool(np.any(work.ux[big_u] > bound) or np.any(work.lx[big_l] < -bound))


def _rescale_state(state: dict, sc, n: int) -> None:
    """Keep a path's working set in the coordinates of this solve's scaling (C changes the
    scale of a 1-norm dual below C = 1/k)."""
    col = np.ones(n) if sc is None else sc.col
    old = state.get("scale_col")
    state["scale_col"] = col
    ws = state.get("working_set")
    if ws is None or old is None or len(old) != n or np.array_equal(old, col):
        return
    f = old / col     # x~_new = x_old_unscaled / col = x~_old * old / col
    ws["x"] = ws["x"] * f
    with np.errstate(invalid="ignore"):
        ws["lx"] = np.where(np.isfinite(ws["lx"]), ws["lx"] * f, ws["lx"])
        ws["ux"] = np.where(np.isfinite(ws["ux"]), ws["ux"] * f, ws["ux"])


def _backend_failure(name: str, interface: str, exc: Exception, opts: SolverOptions) -> str:
    text = f"{name} ({interface}) failed: {type(exc).__name__}: {exc}"
    if opts.options:
        text += (f". Check the raw backend options passed as "
                 f"options={plain(opts.options)!r}: their "
                 f"names and values are {name}'s own")
    return text


class RowDuals(Mapping):
    """Read-only mapping constraint data -> dual: the standard form's rows as one array (no
    Python object per row: a million margin rows stay an array) plus a ComponentMap of the
    few quadratic rows and cones. :meth:`of` reads a run of consecutive rows as an array."""

    def __init__(self, row_datas: list, values: np.ndarray | None, other: ComponentMap):
        self.row_datas = row_datas if values is not None else []
        self.values = values if values is not None else np.zeros(0)
        self.other = other
        self._pos = None

    def _row_of(self, data):
        if self._pos is None:
            self._pos = dict(zip(map(id, self.row_datas), range(len(self.row_datas))))
        i = self._pos.get(id(data))
        return i if i is not None and self.row_datas[i] is data else None

    def __getitem__(self, data):
        i = self._row_of(data)
        if i is not None:
            return float(self.values[i])
        return self.other[data]

    def __contains__(self, data) -> bool:
        return self._row_of(data) is not None or data in self.other

    def __iter__(self):
        yield from self.row_datas
        yield from self.other

    def __len__(self) -> int:
        return len(self.row_datas) + len(self.other)

    def of(self, datas: list) -> np.ndarray | None:
        """The duals of ``datas`` when they are consecutive rows of the standard form (as a
        recorded row group's members are), else None."""
        if not datas:
            return np.zeros(0)
        start = self._row_of(datas[0]) if self._pos is not None else _find(self.row_datas, datas[0])
        k = len(datas)
        if start is None or start + k > len(self.row_datas):
            return None
        run = self.row_datas[start:start + k]
        if not all(map(operator.is_, run, datas)):
            return None
        return self.values[start:start + k].copy()


def _find(items: list, x):
    for i, it in enumerate(items):
        if it is x:
            return i
    return None


def _load_matrix_result(sf, res, info: SolveInfo) -> None:
    """Load a matrix backend's optimal x into the Pyomo variables and map its duals (already
    d(min-form objective)/d(bound)) to the model's constraints in the model's own sense."""
    if res.status is not Status.optimal:
        return
    # a batch load as Pyomo's own solvers do it (values set, the batch marked not stale),
    # without a set_value call per variable
    load_values(sf.var_datas, res.x.tolist())
    info.objective = sf.sense * res.objective
    info.scaling = res.extra.get("scaling")
    info.bounds = res.extra.get("bounds")
    duals = ComponentMap()
    rows = None if res.row_duals is None else sf.sense * np.asarray(res.row_duals, dtype=float)
    if res.qrow_duals is not None:
        for q, v in zip(sf.qrows, res.qrow_duals.tolist()):
            duals[q.data] = sf.sense * q.sign * v
    if res.cone_duals is not None:
        for c, v in zip(sf.cones, res.cone_duals.tolist()):
            duals[c.data] = sf.sense * v / c.row_scale
    if rows is None and not duals:   # a backend that reports none (SCIP): as on the
        return                        # general path, the extractors use the KKT conditions
    info.duals = RowDuals(sf.row_datas, rows, duals)
    info.form = sf


def _matrix_info(b, opts: SolverOptions, sf, path: str, t0: float, fn, *args,
                 fixed=()) -> SolveInfo:
    """Run ``fn(*args)`` (a backend's adapter on the standard form ``sf``), its own errors
    as the library's SolverError; the values of ``fixed`` variables ``(position, value)``
    kept exactly; the result loaded into the model (the fast, mixed and general matrix
    paths alike); none is started once the deadline has passed."""
    if opts.expired():
        return SolveInfo(status=Status.time_limit, solver=b.name, interface=b.name, path=path,
                         time=time.perf_counter() - t0, message=out_of_time(opts, "solving"))
    try:
        res = _run(fn, opts, *args)
    except SVMError:
        raise
    except Exception as exc:   # the backend's own error (a misspelt raw option, ...)
        raise SolverError(_backend_failure(b.name, b.name, exc, opts)) from None
    if res.x is not None and fixed:   # a fixed variable keeps its value exactly
        pos, val = zip(*fixed)
        res.x = np.array(res.x, dtype=float)
        res.x[list(pos)] = val
    info = SolveInfo(status=res.status, solver=b.name, interface=res.interface, path=path,
                     time=time.perf_counter() - t0, message=res.message,
                     iterations=res.iterations)
    _load_matrix_result(sf, res, info)
    return info


def _solve_mixed(record, ed: Edits, b, opts: SolverOptions) -> SolveInfo | None:
    """An edited model through the backend's matrix interface, its standard form assembled
    by :func:`~svm_models.model.mixed.assemble_edited` (None: a part it cannot carry; the
    caller reads the whole model). Path ``"mixed"``."""
    t0 = time.perf_counter()
    try:
        sf = assemble_edited(record, ed)
    except (NotQuadratic, NotConvex):
        return None
    check_capability(b.name, sf.problem_class)
    return _matrix_info(b, opts, sf, "mixed", t0, b.matrix, sf, opts, None, fixed=ed.fixed)


def _warm_start_route(solver) -> str | None:
    """How a Pyomo plugin takes a start (None: it takes none): ``"warmstart"`` -- the legacy
    direct interfaces that say they can (``gurobi_direct``: ``solve(warmstart=True)`` sets
    every variable's ``Start``) -- or ``"warmstart_discrete_vars"`` -- the configuration of
    Pyomo 6.10's ``scip_direct`` (the integer variables' values as a partial solution, which
    SCIP completes). Pyomo's ``highs`` (appsi) has neither."""
    capable_of = getattr(solver, "warm_start_capable", None)
    if capable_of is not None and capable_of():
        return "warmstart"
    config = getattr(solver, "config", None)
    if config is not None and "warmstart_discrete_vars" in config:
        return "warmstart_discrete_vars"
    return None


def _start(solver, plugin: str, warm_start):
    """The warm start of a mixed-integer solve: ``(route or None, report)`` --
    computed (``warm_start()``) only when the plugin takes one; its time is reported
    (``report["time"]``), not taken from the solver's time limit (a start that ate the
    limit would leave the solver no time to take it)."""
    route = _warm_start_route(solver)
    if route is None:
        return None, {"objective": None, "why": f"the {plugin} plugin takes no warm start"}
    t0 = time.perf_counter()
    report = dict(warm_start())
    spent = time.perf_counter() - t0
    report["time"] = spent
    if report.get("objective") is None:
        route = None
    else:
        report["passed"] = f"{route}=True to {plugin}"
    return route, report


def _solve_general(model, b, opts: SolverOptions, *, verified: bool,
                   mip: bool = False, warm_start=None, indicators=None) -> SolveInfo:
    """The model through the backend's Pyomo plugin (or, without one, read into matrices);
    with ``indicators`` (``switch="indicator"``: the rows a mixed-integer SVM's binaries
    switch), through its persistent plugin, each of those rows replaced there by a native
    indicator constraint (:func:`_run_plugin`)."""
    if not b.plugins:
        return _solve_general_matrix(model, b, opts)
    if opts.expired():
        return SolveInfo(status=Status.time_limit, solver=b.name, interface=pyomo_plugin(b.name),
                         path="general", time=0.0, message=out_of_time(opts, "solving"))
    import pyomo.environ as pyo
    from pyomo.opt import TerminationCondition as TC

    if not verified:
        mip = _refuse_before_solving(model, b) in MIXED_INTEGER or mip
    plugin = pyomo_plugin(b.name) if indicators is None else b.indicator_plugin
    solver = pyo.SolverFactory(plugin)
    if indicators is not None and not _usable(solver):
        raise SolverUnavailableError(f"switch='indicator' needs Pyomo's {plugin} plugin, which "
                                     f"is not usable here ({b.install})")
    route = report = None
    if mip and warm_start is not None:
        route, report = _start(solver, plugin, warm_start)
    want_duals = b.duals and not mip   # (a MIP has no duals: its certificate is the gap)
    own_suffix = False
    if want_duals:
        existing = model.component("dual")
        if existing is None:
            model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
            own_suffix = True
        elif not isinstance(existing, pyo.Suffix):
            want_duals = False
    options = dict(b.plugin_options(plugin, opts) if b.plugin_options else {})
    if mip and b.mip_options is not None:
        options.update(b.mip_options(opts))
    options.update(opts.options)
    t0 = time.perf_counter()
    try:
        try:
            results = _run_plugin(b, solver, plugin, model, options, opts, route, indicators)
        except Exception as exc:
            more = b.retry_options(exc) if b.retry_options else None
            if more is None:
                raise
            results = _run_plugin(b, pyo.SolverFactory(plugin), plugin, model,
                                  {**options, **more}, opts, route, indicators)
    except Exception as exc:  # map licence refusals and interface failures to clear errors
        if own_suffix:
            model.del_component("dual")
        return _plugin_failure(b, plugin, exc, model, opts, t0)
    elapsed = time.perf_counter() - t0
    tc = results.solver.termination_condition
    status = {TC.optimal: Status.optimal, TC.locallyOptimal: Status.optimal,
              TC.globallyOptimal: Status.optimal, TC.infeasible: Status.infeasible,
              TC.unbounded: Status.unbounded, TC.infeasibleOrUnbounded: Status.infeasible_or_unbounded,
              TC.maxTimeLimit: Status.time_limit, TC.maxIterations: Status.iteration_limit,
              TC.licensingProblems: Status.licence_limit}.get(tc, Status.error)
    info = SolveInfo(status=status, solver=b.name, interface=plugin, path="general",
                     time=elapsed, message=str(tc), warm_start=report)
    if mip:
        info.mip = _mip_result(model, results, status)
        info.switch = ({"switch": "big_m"} if indicators is None else
                       {"switch": "indicator", "indicator_rows": len(indicators)})
    if status is Status.optimal or (info.mip is not None and info.mip["solution"]):
        if plugin != "cyipopt" and status is Status.optimal:
            model.solutions.load_from(results)
        obj = next(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
        info.objective = float(pyo.value(obj))
    if status is Status.optimal:
        if want_duals:
            sense = 1 if obj.sense == 1 else -1
            sign = b.dual_sign.get(plugin, {}).get(sense, 1.0)
            duals = ComponentMap()
            for cd, v in model.dual.items():
                if v is not None:
                    duals[cd] = sign * float(v)
            info.duals = duals
    if own_suffix:
        model.del_component("dual")
    return info


def _plugin_failure(b, plugin: str, exc: Exception, model, opts: SolverOptions,
                    t0: float) -> SolveInfo:
    """What an exception a backend's plugin raised is: the backend's own typed error
    (``explain_exception``: a licence refusal, raised), the status of a solve that ended so
    (SCIP's numerical trouble: returned, read as any solve's status), else a SolverError."""
    mapped = b.explain_exception(exc, model) if b.explain_exception else None
    if isinstance(mapped, Status):
        return SolveInfo(status=mapped, solver=b.name, interface=plugin, path="general",
                         time=time.perf_counter() - t0, message=f"{exc}")
    if mapped is not None:
        raise mapped from None
    raise SolverError(_backend_failure(b.name, plugin, exc, opts)) from None


def _mip_result(model, results, status: Status) -> dict:
    """What a mixed-integer solve found: the solver's best bound and the objective of its
    incumbent (Pyomo's ``results.problem`` lower and upper bounds: for a minimisation the
    bound is the lower one), and whether an incumbent is loaded into the model -- after
    an optimum (the caller loads it) or a time limit that ended with one (loaded here; the
    status stays ``time_limit``, never optimal)."""
    import pyomo.environ as pyo
    from pyomo.opt import SolverStatus

    obj = next(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    lo, up = results.problem.lower_bound, results.problem.upper_bound
    bound, incumbent = (lo, up) if obj.sense == pyo.minimize else (up, lo)

    def number(v):
        try:
            v = float(v)
        except (TypeError, ValueError):
            return None
        return v if np.isfinite(v) else None

    found = status is Status.optimal
    if status is Status.time_limit and len(getattr(results, "solution", ())) > 0 \
            and number(incumbent) is not None:
        saved = results.solver.status
        results.solver.status = SolverStatus.ok   # (Pyomo warns on loading an 'aborted' one)
        try:
            model.solutions.load_from(results)
            found = True
        finally:
            results.solver.status = saved
    return {"bound": number(bound), "incumbent": number(incumbent), "solution": found}


def _usable(solver) -> bool:
    """Whether a Pyomo plugin can run here (its ``available``, quietly)."""
    with drained_output(False), preserved_fpu():
        try:
            return bool(solver.available(exception_flag=False))
        except Exception:
            return False


def _run_plugin(b, solver, plugin: str, model, options: dict, opts: SolverOptions,
                warm_start: str | None = None, indicators=None):
    """``solver.solve(model)`` with the options; ``warm_start`` (a route of
    :func:`_warm_start_route`): the variables' current values handed over as a start;
    ``indicators`` (``switch="indicator"``; ``solver`` the backend's persistent plugin): the
    model is set on the plugin (``set_instance``: Pyomo builds the native model, big-M rows
    included), then the backend's ``add_indicators`` replaces exactly those rows there by
    native indicator constraints, and the plugin solves that native model (the Pyomo model
    keeps its big-M rows)."""
    kwargs = {"tee": bool(opts.verbose)}
    if warm_start == "warmstart":
        kwargs["warmstart"] = True
    elif warm_start == "warmstart_discrete_vars":
        solver.config.warmstart_discrete_vars = True
    if plugin == "cyipopt":
        kwargs["options"] = options
    else:
        for k, v in options.items():
            solver.options[k] = v
        kwargs["load_solutions"] = False
    guard = b.plugin_guard() if b.plugin_guard else contextlib.nullcontext()
    with guard, drained_output(opts.verbose), preserved_fpu():
        if indicators is not None:
            solver.set_instance(model)
            added = b.add_indicators(solver, indicators)
            if added != len(indicators):
                raise SolverError(f"{plugin} took {added} of the {len(indicators)} indicator "
                                  "constraints")
        return solver.solve(model, **kwargs)


def _refuse_before_solving(model, b) -> str | None:
    """A changed model is read (:func:`~svm_models.model.reader.from_pyomo`) before a Pyomo
    plugin sees it: a problem class the backend cannot take (a user's quadratic constraint
    for HiGHS) is a CapabilityError naming the backends that can, not an error from inside
    the interface; a local solver is refused a model the reader proves non-convex (its
    "optimal" would only be a local one). Models with non-polynomial terms cannot be
    classified here and go to the backend as they are. Returns the problem class read (None
    where it was not)."""

    try:
        sf = from_pyomo(model)
    except NotConvex as exc:
        if b.global_opt:
            return None
        raise CapabilityError(
            f"{b.name} is a local solver and this model is not convex ({exc}): its answer "
            f"would be a local optimum only. Use a global solver: "
            f"{', '.join(n for n in capable('QCQP') if backend(n).global_opt)}") from None
    except NotQuadratic:
        return None
    check_capability(b.name, sf.problem_class)
    return sf.problem_class


def _solve_general_matrix(model, b, opts: SolverOptions) -> SolveInfo:

    t0 = time.perf_counter()
    try:
        sf = from_pyomo(model)
    except NotQuadratic as exc:
        raise CapabilityError(f"{b.name} cannot take this model: {exc}") from None
    except NotConvex as exc:
        raise CapabilityError(
            f"{b.name} cannot take this model: {exc}. Use a global solver (gurobi, scip).") from None
    check_capability(b.name, sf.problem_class)
    return _matrix_info(b, opts, sf, "general", t0, b.matrix, sf, opts, None)


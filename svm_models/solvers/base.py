"""What every backend module shares: the backend description, the options, the result of a
matrix solve, and the guards every solve runs under (output streams, floating-point state).

A backend module (``highs.py``, ``ipopt.py``, ...) owns everything about its backend: the
problem classes it takes, how to find it, its licence limits, its options on both paths,
the mapping of its statuses onto :class:`~svm_models.status.Status`, the sign of its duals,
and its matrix adapter. This module knows no backend by name.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import importlib.util
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ..config import solve_config
from ..model.standard_form import PROBLEM_CLASSES
from ..status import Status
from ..tolerances import SOLVER_TOL

#: the problem classes, from the easiest (one list: model.standard_form.PROBLEM_CLASSES)
ORDER = PROBLEM_CLASSES

#: every solve gets a time limit: this one unless the user sets another (math.inf: none);
#: a call that knows its problem's size gets :func:`default_time_limit` instead
DEFAULT_TIME_LIMIT = 3600.0

#: the default time limit of a problem of at most :data:`DEFAULT_LIMIT_POINTS` points
#: (seconds): met within 1.2x + 1 s, a call on such a problem ends within 10 s
DEFAULT_LIMIT_SMALL = 7.5
DEFAULT_LIMIT_POINTS = 200


def default_time_limit(points: int | None, mixed_integer: bool = False) -> float:
    """The time limit a call gets when the user sets none, scaled to the problem: 7.5 s up to
    200 points (a convex SVM of that size is solved in well under a second by the fast
    backends: a backend that has not answered by then is stuck, and the error names one
    that answers), growing as the square of the points beyond (the cost of a dense kernel
    block), at most :data:`DEFAULT_TIME_LIMIT`. A mixed-integer model (branch and bound, its
    incumbent kept at the limit) and a call of unknown size keep :data:`DEFAULT_TIME_LIMIT`."""
    if points is None or mixed_integer:
        return DEFAULT_TIME_LIMIT
    scaled = DEFAULT_LIMIT_SMALL * (max(int(points), 1) / DEFAULT_LIMIT_POINTS) ** 2
    return float(min(DEFAULT_TIME_LIMIT, max(DEFAULT_LIMIT_SMALL, scaled)))


class Deadline:
    """The instant by which a whole call must end: made once where the call enters the
    library (``solve``, ``fit``, ``SVMClassifier.fit``) from its time limit, and handed down
    with the solve options (:attr:`SolverOptions.deadline`): every stage -- the kernel and
    the build, handing the model to the backend, the solve, its retries, the polish, the
    fallbacks -- asks it for the time left, and a backend is given that as its own limit.

    ``limit``: the seconds allowed (None: no limit); ``default``: whether they are the
    library's default (:func:`default_time_limit`), not the user's. Pickled (a process pool,
    a Dask worker), it carries the time left, counted again from its arrival."""

    __slots__ = ("limit", "end", "start", "default")

    def __init__(self, limit: float | None, *, default: bool = False):
        self.start = time.monotonic()
        self.limit = None if limit is None or math.isinf(limit) else float(limit)
        self.end = math.inf if self.limit is None else self.start + self.limit
        self.default = bool(default)

    def left(self) -> float | None:
        """Seconds left (never negative); None without a limit."""
        if self.limit is None:
            return None
        return max(0.0, self.end - time.monotonic())

    def expired(self) -> bool:
        return self.limit is not None and time.monotonic() >= self.end

    def spent(self) -> float:
        """Seconds since the call entered."""
        return time.monotonic() - self.start

    def describe(self) -> str:
        """The limit as a user reads it (``"the time limit of 5 s"``)."""
        if self.limit is None:
            return "no time limit"
        what = "the default time limit" if self.default else "the time limit"
        return f"{what} of {self.limit:g} s"

    def share(self, fraction: float) -> "Deadline":
        """A deadline for one stage of this call: the same limit as the user reads it, ending
        after ``fraction`` of the time left (this one itself without a limit)."""
        if self.limit is None:
            return self
        out = Deadline(self.limit, default=self.default)
        out.start = self.start
        out.end = min(self.end, time.monotonic() + fraction * self.left())
        return out

    def __reduce__(self):
        return (_resumed, (self.left(), self.default))

    def __repr__(self) -> str:
        left = self.left()
        return f"Deadline({self.limit}, left={'none' if left is None else f'{left:.3g}'})"


def _resumed(left, default):
    return Deadline(left, default=default)


@dataclass(frozen=True)
class Backend:
    """One backend: what it takes and how it is reached (filled in by its own module).

    name : the user's flag;  classes : the problem classes it takes;  plugins : Pyomo
    plugin names, tried in order (empty: matrix interface only);  modules : Python modules it
    needs;  matrix : the matrix adapter ``(StandardForm, SolverOptions, state) ->
    MatrixResult`` (None: no fast path);  duals : reports constraint duals on the general
    path;  global_opt : finds global optima of non-convex models (else a non-convex model is
    refused);  proves_unbounded : detects an unbounded QP (SCIP does not);  max_vars /
    max_quadratic_vars / max_rows : licence limits;  plugin_options : ``(plugin,
    SolverOptions) -> dict`` of Pyomo plugin options;  dual_sign : per plugin and objective
    sense (+1 min, -1 max), the factor that turns its reported duals into d(objective)/d(bound);
    explain_exception : ``(exception, model) -> SVMError, Status or None``, the typed error
    for an exception its plugin raised (a licence refusal), or the status of a solve that
    ended so (SCIP's own numerical trouble: ``numerical_error``, then read as any solve's
    status -- the retries, the fallbacks, the error's wording);  retry_options : ``exception -> dict
    or None``, options with which a failed plugin solve is tried once more (Gurobi and a
    non-convex model);  plugin_guard : a context manager factory every plugin solve runs in
    (SCIP: its output captured into a file, never a pipe);  qcqp_form : the form a
    formulation with a choice between a second-order cone and a quadratic row (C tuning's
    ``form``) is built in by ``fit`` for this backend ("norm": the cone; "quadratic": the
    t-form, measured faster on Ipopt, 5 s against 21 s at l = 1000, and on SCIP, which
    branches on the cone);
    mip_options : ``SolverOptions -> dict``, the Pyomo plugin options added for a
    mixed-integer model (its relative gap and integrality tolerances: the defaults, a gap of
    1e-4, would end "optimal" short of the optimum); None: none to add;
    indicator_plugin, add_indicators : a backend that takes indicator constraints
    (``switch="indicator"``, see :class:`SolverOptions`): the Pyomo persistent plugin the
    model is set on (``gurobi_persistent``, ``scip_persistent``), and ``(solver, rows) ->
    int``, which replaces in that plugin's native model each big-M row of ``rows`` (the
    family's ``indicator_rows``: ``row``, ``binary``, ``on``, ``terms``, ``rhs``) by a native
    indicator constraint ``binary = on  =>  sum(coef * var) >= rhs`` and leaves every other
    row as Pyomo put it there; it returns the number of indicator constraints added. None:
    the backend takes none (``switch="indicator"`` is refused before anything runs);
    structured : a *structured* backend's adapter ``(Record, StandardForm, SolverOptions,
    state) -> MatrixResult``: it takes one structure a builder records
    (``Record.structure``, e.g. libsvm and the classic duals), only on a model the record
    proves unchanged, and no problem class in general;  structure_check : ``Record -> str or
    None``, why it does not take a recorded model (None: it does);  pairs : a structured
    backend's one-vs-one adapter ``(kernel, X, y_index, box, SolverOptions, gram=None) ->
    (MatrixResult, alphas) or None``: the 1-norm duals of all the pairs of classes in one
    call (``gram``: the kernel's matrix on ``X``, where the caller holds it), ``alphas(i,
    j)`` each pair's answer, to be certified as one solve's (None returned: it does not take
    that kernel or box; None: each pair is solved alone);
    first_tol : ``kernel -> float or None``, a structured backend's tolerance for a first
    solve whose answer the polish finishes, on that kernel (libsvm: SVC's default, for the
    rbf kernel): where looser than the tolerance asked, the unbuilt fit
    (:func:`svm_models.fit`, one-vs-one's pairs) solves at it first and keeps the answer
    only where the certificate takes the polished classifier -- the exact KKT point of the
    active set the solve found, the same the solve at the asked tolerance gives -- and else
    solves again at the tolerance asked (None: one solve, at the tolerance asked);
    matrix_when : ``Record -> str or None``, why ``path="auto"`` takes the Pyomo plugin
    rather than the matrix adapter for a model the record proves unchanged (None: the
    matrices; SCIP: its plugin for a small model with a small dense block, its matrices
    where Pyomo would spend long on the terms); an edited model takes the mixed path all the same;
    install : how to install it;  note : one line for listings;
    project : the project installs it and its tests run it (``PROJECT_BACKENDS``; on CI a
    missing one fails the tests); only a backend of the table's modules
    (:data:`~svm_models.solvers.table.MODULES`) is one;
    auto : its place in ``solver="auto"``'s order, per problem class: ``{class: rank}``,
    the lowest rank tried first (equal ranks: in the table's order); a class it has no
    rank for, ``auto`` never gives it (``AUTO_ORDER`` is derived from these);
    pyomo_solver : offered by the library to Pyomo's solver factories as
    ``svm_models.<name>`` with this one-line description ("": not offered -- Pyomo has its
    own interface to it; :mod:`.pyomo_factory`);
    version : ``() -> str``, its version as Pyomo's solver reports it (None: the
    ``__version__`` of its first module).
    """

    name: str
    classes: frozenset
    plugins: tuple = ()
    modules: tuple = ()
    matrix: Callable | None = None
    duals: bool = True
    global_opt: bool = False
    proves_unbounded: bool = True
    max_vars: int | None = None
    max_quadratic_vars: int | None = None
    max_rows: int | None = None
    plugin_options: Callable | None = None
    explain_exception: Callable | None = None
    retry_options: Callable | None = None
    plugin_guard: Callable | None = None
    dual_sign: dict = field(default_factory=dict)
    qcqp_form: str = "norm"
    mip_options: Callable | None = None
    indicator_plugin: str | None = None
    add_indicators: Callable | None = None
    structured: Callable | None = None
    structure_check: Callable | None = None
    pairs: Callable | None = None
    first_tol: Callable | None = None
    matrix_when: Callable | None = None
    install: str = ""
    note: str = ""
    project: bool = False
    auto: Mapping = field(default_factory=dict)
    pyomo_solver: str = ""
    version: Callable | None = None

    def takes(self, problem_class: str) -> bool:
        return problem_class in self.classes


@dataclass(frozen=True)
class SolverOptions:
    """Options every backend understands, plus raw backend options.

    tol : relative optimality/feasibility tolerance (default 1e-9)
    time_limit : seconds (default :data:`DEFAULT_TIME_LIMIT`; ``math.inf`` for none)
    iter_limit : iterations;  threads : count;  verbose : show the solver's log
    options : raw options passed to the backend as they are
    path : ``"auto"`` (fast when the record proves the model; "mixed" -- the record for the
           part it proves, Pyomo for the edits -- when it proves a part, see
           :mod:`svm_models.model.mixed`), ``"fast"`` (raise if not possible),
           ``"general"`` (always through the whole Pyomo model)
    scaling : the formulation's exact scaling on the fast path
           (:mod:`svm_models.model.scaling`): ``"auto"`` (applied unless the problem is
           already of order one), ``"on"`` (always), ``"off"`` (never), ``"diagonal"``
           (every variable of a dense quadratic block scaled by the power of two nearest
           ``1/sqrt(Q_ii)``: a kernel whose diagonal spans many orders of magnitude, a poly
           kernel on badly scaled features, gets a unit diagonal; exact as well),
           ``"centred"`` (a classic dual's dense kernel block centred, ``H K H``: the same
           problem on ``y'a = 0``; then scaled diagonally)
    deadline : the :class:`Deadline` of the whole call (set where the call enters the
           library, from ``time_limit``; a caller may pass one to bound several calls
           together): :attr:`seconds` is then the time left
    switch : how the binaries of a mixed-integer SVM switch its rows (``formulations/mip.md``):
           ``"big_m"`` (the default: the model as built, its rows ``... + M z >= 1`` with the
           proved M) or ``"indicator"`` (each such row handed to the solver as a native
           indicator constraint ``z = 0 => ... >= 1``, without M; the Pyomo model keeps its
           big-M rows). Only the backends with ``add_indicators`` (Gurobi, SCIP) take
           ``"indicator"``, only for a model whose family names its switched rows, and only
           when the record proves the model unchanged since it was built: anything else is
           refused before a solve, never ignored
    """

    tol: float | None = None
    time_limit: float | None = None
    iter_limit: int | None = None
    threads: int | None = None
    verbose: bool = False
    options: dict = field(default_factory=dict)
    path: str = "auto"
    scaling: str = "auto"
    switch: str = "big_m"
    deadline: Deadline | None = None

    @classmethod
    def from_kwargs(cls, **kw) -> "SolverOptions":
        """The options ``kw``, checked against their one declaration
        (:class:`svm_models.config.SolveConfig`: an unknown name or a value out of its
        domain is a ParameterError naming it)."""
        config = solve_config(kw)
        return cls(**{k: config[k] if k != "options" else dict(config[k] or {})
                      for k in cls.__dataclass_fields__})

    @property
    def tolerance(self) -> float:
        return SOLVER_TOL if self.tol is None else float(self.tol)

    def limits(self, time=None, iterations=None, threads=None) -> dict:
        """``{backend option name: value}`` for the limits that are set, under the names a
        backend gives them (time in seconds as float, iterations and threads as int)."""
        out = {}
        for name, val, cast in ((time, self.seconds, float), (iterations, self.iter_limit, int),
                                (threads, self.threads, int)):
            if name is not None and val is not None:
                out[name] = cast(val)
        return out

    @property
    def seconds(self) -> float | None:
        """The time limit to hand the backend now (None: unlimited, by the user's choice):
        ``time_limit`` (default :data:`DEFAULT_TIME_LIMIT`), at most the time left before
        the :attr:`deadline`."""
        t = DEFAULT_TIME_LIMIT if self.time_limit is None else float(self.time_limit)
        if self.deadline is not None and self.deadline.limit is not None:
            # (the deadline was made from the time limit: a stage's own cap is below it)
            t = min(t, self.deadline.left()) if self.time_limit is not None else \
                self.deadline.left()
        return None if math.isinf(t) else max(t, MIN_SECONDS)

    def expired(self) -> bool:
        """Whether the call's deadline has passed (no backend is started then)."""
        return self.deadline is not None and self.deadline.expired()

    def with_deadline(self, points: int | None = None,
                      mixed_integer: bool = False) -> "SolverOptions":
        """These options with a :class:`Deadline` starting now (the one they carry, if
        any): from ``time_limit``, or the default scaled to ``points``
        (:func:`default_time_limit`)."""
        if self.deadline is not None:
            return self
        if self.time_limit is not None:
            return replace(self, deadline=Deadline(float(self.time_limit)))
        return replace(self, deadline=Deadline(default_time_limit(points, mixed_integer),
                                               default=True))


def out_of_time(opts: SolverOptions, stage: str) -> str:
    """The message of a stage not started because the call's deadline had passed."""
    dl = opts.deadline
    said = dl.describe() if dl is not None else "the time limit"
    spent = f" ({dl.spent():.3g} s spent)" if dl is not None else ""
    return f"{said} was reached before {stage}{spent}"


#: the least time limit handed to a backend (some refuse 0): a stage started with no time
#: left is not started at all (:meth:`SolverOptions.expired`)
MIN_SECONDS = 1e-3


@dataclass
class MatrixResult:
    """What a matrix adapter returns; duals already d(optimal min-form value)/d(bound)."""

    status: Status
    x: np.ndarray | None = None
    row_duals: np.ndarray | None = None
    qrow_duals: np.ndarray | None = None
    cone_duals: np.ndarray | None = None
    objective: float | None = None   # standard-form (minimisation) objective
    iterations: int | None = None
    message: str = ""
    interface: str = ""
    extra: dict = field(default_factory=dict)


def module_present(name: str) -> bool:
    """Whether the module ``name`` can be imported; looked up once per process (the search of
    the import path for a module not yet imported took a millisecond, and ``solver="auto"``
    asks for every backend on every fit)."""
    found = _PRESENT.get(name)
    if found is None:
        found = _PRESENT[name] = importlib.util.find_spec(name) is not None
    return found


_PRESENT: dict[str, bool] = {}


# ---------------------------------------------------------------------------------------
# Guards every solve runs under


_FENV = None


@contextlib.contextmanager
def preserved_fpu():
    """Run a backend in the default floating-point environment, and restore the caller's
    afterwards.

    Ipopt (through cyipopt) leaves the x87 unit at 53-bit precision; Gurobi's barrier then
    ends 'sub-optimal' on later solves in the same process. Saving the environment with
    fegetenv and restoring it with fesetenv (glibc's libm, via ctypes) keeps backends
    independent of the order in which they are used; setting the default one
    (``FE_DFL_ENV``) for the call keeps them independent of what the process did before too
    (a user's own ``SolverFactory("cyipopt").solve`` followed by a Gurobi solve through
    svm_models failed so: the C-tuning QCQP, status 'other')."""
    global _FENV
    if _FENV is None:
        try:
            libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
            _FENV = (libm.fegetenv, libm.fesetenv)
        except OSError:
            _FENV = False
    if not _FENV:
        yield
        return
    buf = ctypes.create_string_buffer(256)  # fenv_t is 28 bytes on x86-64 glibc
    _FENV[0](buf)
    if _FE_DFL_ENV is not None:
        _FENV[1](_FE_DFL_ENV)
    try:
        yield
    finally:
        _FENV[1](buf)


#: ``FE_DFL_ENV``, ``(const fenv_t *) -1`` in glibc and musl (Linux); elsewhere (macOS,
#: BSD: the address of a libm symbol) the environment is only restored, not reset
_FE_DFL_ENV = ctypes.c_void_p(-1) if sys.platform.startswith("linux") else None

_DRAIN_LOCK = threading.Lock()
_DRAIN = {"depth": 0, "saved": [], "sink": None}


@contextlib.contextmanager
def drained_output(verbose: bool):
    """Run a backend with its standard output and error (file descriptors 1 and 2) going to a
    temporary file, unless ``verbose``: a backend's log can never fill a pipe that nobody
    reads (SoPlex inside SCIP wrote ~800 warnings to a captured stderr and blocked forever),
    and a quiet solve prints nothing. Re-entrant and thread-safe (the first solve in
    redirects, the last one out restores); the tail of the log is kept in
    ``drained_output.tail``."""
    if verbose:
        yield
        return
    _enter_drain()
    try:
        yield
    finally:
        _leave_drain()


def _enter_drain() -> None:
    with _DRAIN_LOCK:
        _DRAIN["depth"] += 1
        if _DRAIN["depth"] > 1:
            return
        for s in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                s.flush()
        sink = tempfile.TemporaryFile(mode="w+b")
        saved = []
        try:
            for fd in (1, 2):
                saved.append((fd, os.dup(fd)))
                os.dup2(sink.fileno(), fd)
        except OSError:  # no real descriptors (embedded interpreter): nothing to redirect
            for fd, old in saved:
                os.dup2(old, fd)
                os.close(old)
            saved = []
        _DRAIN["saved"], _DRAIN["sink"] = saved, sink


def _leave_drain() -> None:
    with _DRAIN_LOCK:
        _DRAIN["depth"] -= 1
        if _DRAIN["depth"] > 0:
            return
        for fd, old in _DRAIN["saved"]:
            os.dup2(old, fd)
            os.close(old)
        sink = _DRAIN["sink"]
        _DRAIN["saved"], _DRAIN["sink"] = [], None
        if sink is not None:
            with contextlib.suppress(Exception):
                sink.seek(max(0, sink.seek(0, 2) - 4000))
                drained_output.tail = sink.read().decode(errors="replace")
            sink.close()


drained_output.tail = ""

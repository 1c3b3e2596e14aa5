"""Radius-margin SVMs at scale: constraint generation, the literal all-pairs form, and the
compact kernel form against the solver alone. Not part of the test suite.

    python benchmarks/radius.py            # everything, about 25-40 minutes (see README.md)
    python benchmarks/radius.py --quick    # smoke run at small sizes, about a minute
    python benchmarks/radius.py --help     # parts, solvers, caps, output paths

Three parts (data: ``svm_models.datasets.benchmark_data(l, d=20)``, C = 1, lam = 1):

1. ``svm_models.fit(X, y, formulation, solver, C=1, lam=1, pairs="generate")`` for
   ``rsvm_plus_primal`` and ``rsvm_mu_plus`` at l = 1,000 and l = 10,000: wall time,
   rounds, pairs in the final model, solver time (``sol.extra["pair_generation"]``) and the
   certificate (the largest violation over all l(l-1)/2 pairs), which the benchmark
   recomputes independently of svm_models from the solution's values.
2. The literal form (``pairs="all"``) at l = 1,000 (499,500 pair rows), and the relative
   difference of its optimum from the generation's.
3. ``rsvm_plus_kernel`` (rbf, ``radius="compact"``) at l = 2,000: ``svm_models.fit`` end to
   end against the same backend called directly on the same matrices. The "solver alone"
   is fed with the arguments svm_models' own backend adapter would pass (captured, untimed,
   from the standard form ``assemble(record)`` of the built model: same matrices, same
   settings); only the solver's set-up and solve are timed, as in ``benchmarks/run.py``.

Every measurement runs in a forked child (the libraries imported once by the parent; the
child warms its code path up on a tiny instance first), killed past its time cap or when its
resident set exceeds the memory guard. Inside the child the phases of the run are timed by
thin wrappers around svm_models' internal functions (build, assemble, the proof of the record,
the backend adapter, the solver library's set-up and solve, loading the values into Pyomo,
the extraction, the most-violated-pair search, appending pairs); the wrappers cost
microseconds per call. Results: ``radius_results.json`` and ``radius_results.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import platform
import select
import signal
import sys
import time
import traceback
from collections import defaultdict

import numpy as np

import importlib

import svm_models
from svm_models.datasets import benchmark_data
from svm_models.model.standard_form import assemble

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conditions import describe  # noqa: E402
from conditions import machine as conditions_now  # noqa: E402
from memory import hwm_bytes, reset_hwm, rss_bytes  # noqa: E402

# by module path (``svm_models.formulations`` is also the name of a function of the package)
sm_api = importlib.import_module("svm_models.api")
sm_rm = importlib.import_module("svm_models.formulations.radius_margin")
sm_radius = importlib.import_module("svm_models.methods.radius")
sm_fam = importlib.import_module("svm_models.model.families")
sm_dispatch = importlib.import_module("svm_models.solvers.dispatch")

HERE = os.path.dirname(os.path.abspath(__file__))

D = 20
C = 1.0
LAM = 1.0
GAMMA = 1.0 / 20.0           # the rbf gamma of benchmarks/run.py (issue 9)
GENERATED = ("rsvm_plus_primal", "rsvm_mu_plus")
TARGET_GEN = {1000: 60.0, 10000: 600.0}
TARGET_RATIO = 1.5
TARGET_REL_OBJ = 1e-6


# ---------------------------------------------------------------------------------------
# Phase timers (installed in the child only)


class Phases:
    """Wraps svm_models' internal functions with timers; ``times`` maps phase -> seconds."""

    def __init__(self):
        self.times = defaultdict(float)
        self.calls = defaultdict(int)
        self.captured = {}
        self._undo = []
        self._progress = None
        self._t0 = time.perf_counter()

    def progress_to(self, path: str | None) -> "Phases":
        """Write one line per phase entered and left to ``path`` (so that the parent can
        tell where a run it had to kill spent its time)."""
        if path:
            self._progress = open(path, "w", buffering=1)
            self._t0 = time.perf_counter()
        return self

    def _note(self, kind: str, name: str, s: float | None = None):
        if self._progress is not None:
            rec = {kind: name, "t": round(time.perf_counter() - self._t0, 4)}
            if s is not None:
                rec["s"] = round(s, 4)
            self._progress.write(json.dumps(rec) + "\n")

    def _wrap(self, owner, attr, name, capture=None):
        orig = getattr(owner, attr)
        times, calls, captured = self.times, self.calls, self.captured
        note = self._note

        def wrapper(*a, **k):
            if capture is not None:
                captured[capture] = a[0] if a else None
            note("enter", name)
            t0 = time.perf_counter()
            try:
                return orig(*a, **k)
            finally:
                dt = time.perf_counter() - t0
                times[name] += dt
                calls[name] += 1
                note("exit", name, dt)

        setattr(owner, attr, wrapper)
        self._undo.append((owner, attr, orig))

    def install(self, solver: str) -> "Phases":
        w = self._wrap
        # build (fit calls api.build through two names; neither calls the other)
        w(sm_api, "build", "build")
        w(sm_radius, "build", "build")
        w(sm_rm, "seed_pairs", "build: seed pairs")
        w(sm_rm, "add_pair_family", "build: pair family")
        w(sm_rm, "prepare", "build: kernel matrix")
        w(sm_rm, "kernel_factor", "build: kernel factor")
        # one solve (api.solve): proof, standard form, backend, loading, extraction
        w(sm_api, "solve", "solve() total", capture="model")
        w(sm_radius, "solve", "solve() total", capture="model")
        w(sm_dispatch, "verify", "verify (proof of the record)")
        w(sm_dispatch, "assemble", "assemble (standard form)")
        w(sm_fam.PairFamily, "linear_rows", "assemble: pair rows")
        w(sm_dispatch, "solve_with_working_set", "backend adapter (incl. solver)")
        w(sm_dispatch, "_load_matrix_result", "load values and duals into Pyomo")
        w(sm_rm, "extract", "extract (post-processing)")
        w(sm_rm, "_pair_duals", "extract: pair duals")
        w(sm_rm, "recover_multipliers", "extract: multipliers by least squares")
        # constraint generation
        w(sm_fam.PairFamily, "most_violated", "most_violated (certificate search)")
        w(sm_fam, "farthest_pairs", "most_violated: farthest_pairs")
        w(sm_fam.PairFamily, "append", "append pairs")
        self._wrap_solver_library(solver)
        return self

    def _timed_proxy(self, real_factory, timed=("setup", "solve"), construct=None):
        times, calls, note = self.times, self.calls, self._note

        class Proxy:
            def __init__(self, *a, **k):
                if construct:
                    note("enter", construct)
                t0 = time.perf_counter()
                object.__setattr__(self, "_real", real_factory(*a, **k))
                if construct:
                    dt = time.perf_counter() - t0
                    times[construct] += dt
                    calls[construct] += 1
                    note("exit", construct, dt)

            def __getattr__(self, name):
                attr = getattr(self._real, name)
                if name in timed:
                    key = f"solver library: {name}"

                    def call(*a, **k):
                        note("enter", key)
                        t0 = time.perf_counter()
                        try:
                            return attr(*a, **k)
                        finally:
                            dt = time.perf_counter() - t0
                            times[key] += dt
                            calls[key] += 1
                            note("exit", key, dt)
                    return call
                return attr

            def __setattr__(self, name, value):
                setattr(self._real, name, value)

        return Proxy

    def _wrap_solver_library(self, solver: str):
        if solver == "clarabel":
            import clarabel
            self._undo.append((clarabel, "DefaultSolver", clarabel.DefaultSolver))
            clarabel.DefaultSolver = self._timed_proxy(clarabel.DefaultSolver,
                                                       construct="solver library: setup")
        elif solver == "piqp":
            import piqp
            for cls in ("DenseSolver", "SparseSolver"):
                self._undo.append((piqp, cls, getattr(piqp, cls)))
                setattr(piqp, cls, self._timed_proxy(getattr(piqp, cls)))
        elif solver == "ipopt":
            import cyipopt
            self._undo.append((cyipopt, "Problem", cyipopt.Problem))
            cyipopt.Problem = self._timed_proxy(cyipopt.Problem, timed=("solve",),
                                                construct="solver library: setup")

    def uninstall(self):
        for owner, attr, orig in reversed(self._undo):
            setattr(owner, attr, orig)
        self._undo.clear()
        if self._progress is not None:
            self._progress.close()
            self._progress = None

    def report(self) -> dict:
        return {k: {"s": round(v, 4), "calls": self.calls[k]} for k, v in sorted(self.times.items())}


# ---------------------------------------------------------------------------------------
# Measurements (each runs in a forked child)


class _GcTimer:
    def __init__(self):
        self.s, self.full, self._t = 0.0, 0, 0.0

    def __call__(self, phase, info):
        if phase == "start":
            self._t = time.perf_counter()
        else:
            self.s += time.perf_counter() - self._t
            self.full += info["generation"] == 2


@contextlib.contextmanager
def _timed_region(out: dict):
    gc.collect()
    rss0 = rss_bytes()
    reset_hwm()
    g = _GcTimer()
    gc.callbacks.append(g)
    t0 = time.perf_counter()
    try:
        yield
    finally:
        out["time"] = time.perf_counter() - t0
        gc.callbacks.remove(g)
        out["gc_s"] = round(g.s, 4)
        out["gc_full"] = g.full
        out["peak_mb"] = round(max(0, hwm_bytes() - rss0) / 1e6, 1)
        out["hwm_mb"] = round(hwm_bytes() / 1e6, 1)


def max_violation_over_all_pairs(Z: np.ndarray, r: float, chunk: int = 1000) -> dict:
    """Independent certificate: ``max_{i<j} 1/2 ||Z_i - Z_j||^2 - r`` by blocks of rows
    (Gram trick for the candidates, exact differences for the best ones)."""
    l = Z.shape[0]
    sq = np.einsum("ij,ij->i", Z, Z)
    cand = []
    for a in range(0, l, chunk):
        b = min(a + chunk, l)
        G = sq[a:b, None] + sq[None, :] - 2.0 * (Z[a:b] @ Z.T)
        ii = np.arange(a, b)
        G[np.arange(l)[None, :] <= ii[:, None]] = -np.inf
        k = min(8, G.size)
        flat = G.ravel()
        idx = np.argpartition(flat, flat.size - k)[flat.size - k:]
        r_, c_ = np.divmod(idx, l)
        cand += [(int(ii[p]), int(q)) for p, q in zip(r_, c_) if np.isfinite(flat[p * l + q])]
    I = np.array([p for p, _ in cand]); J = np.array([q for _, q in cand])
    diff = Z[I] - Z[J]
    d2 = np.einsum("ij,ij->i", diff, diff)
    k = int(np.argmax(d2))
    return {"max_violation": 0.5 * float(d2[k]) - r, "pair": [int(I[k]), int(J[k])], "r": r}


def _certificate(model, form: str, X: np.ndarray) -> dict:
    """The largest violation of the model's pair rows over all pairs, from the model's values:
    ``1/2 sum_k c_k (x_ik - x_jk)^2 - r`` with ``c = s`` (R-SVM+) or ``c = mu`` (R-SVM_mu+),
    and for R-SVM+ also with ``c = w^2`` (the radius of the problem before lifting)."""
    blk = sm_api.the_svm_block(model)
    r = float(blk.r.value)
    out = {}
    if form == "rsvm_plus_primal":
        s = np.clip(np.array([blk.s[j].value for j in blk.J]), 0.0, None)
        w = np.array([blk.w[j].value for j in blk.J])
        out["rows"] = max_violation_over_all_pairs(X * np.sqrt(s)[None, :], r)
        out["unlifted"] = max_violation_over_all_pairs(X * np.abs(w)[None, :], r)
    else:
        mu = np.clip(np.array([blk.mu[j].value for j in blk.J]), 0.0, None)
        out["rows"] = max_violation_over_all_pairs(X * np.sqrt(mu)[None, :], r)
    return out


def task_fit_pairs(form: str, l: int, solver: str, pairs: str, progress=None) -> dict:
    """``svm_models.fit`` of a generated formulation with ``pairs`` ("generate" or "all")."""
    Xw, yw = benchmark_data(60, D)
    svm_models.fit(Xw, yw, formulation=form, solver=solver, C=C, lam=LAM, pairs=pairs)
    X, y = benchmark_data(l, D)
    ph = Phases().install(solver)
    out = {}
    with _timed_region(out):
        ph.progress_to(progress)
        sol = svm_models.fit(X, y, formulation=form, solver=solver, C=C, lam=LAM, pairs=pairs)
    ph.uninstall()
    out.update(objective=float(sol.objective), status=str(sol.status.value),
               solve_time_reported=float(sol.time), interface=sol.interface,
               phases=ph.report())
    pg = sol.extra.get("pair_generation")
    if pg is not None:
        out["generation"] = {k: pg[k] for k in ("rounds", "pairs", "all_pairs", "max_violation",
                                                "tol", "time", "solver_time")}
        out["generation"]["history"] = [{k: (float(v) if v is not None else None)
                                         for k, v in h.items()} for h in pg["history"]]
    model = ph.captured.get("model")
    if model is not None:
        t0 = time.perf_counter()
        out["certificate"] = _certificate(model, form, X)
        out["certificate"]["check_s"] = round(time.perf_counter() - t0, 3)
        out["pairs_in_model"] = int(sm_radius._family(model)[1].size)
    return out


def _kernel_params():
    return dict(formulation="rsvm_plus_kernel", kernel="rbf", gamma=GAMMA, radius="compact",
                C=C, lam=LAM)


def task_kernel_fit(l: int, solver: str, progress=None) -> dict:
    Xw, yw = benchmark_data(60, D)
    svm_models.fit(Xw, yw, solver=solver, **_kernel_params())
    X, y = benchmark_data(l, D)
    ph = Phases().install(solver)
    out = {}
    with _timed_region(out):
        ph.progress_to(progress)
        sol = svm_models.fit(X, y, solver=solver, **_kernel_params())
    ph.uninstall()
    model = ph.captured.get("model")
    blk = sm_api.the_svm_block(model) if model is not None else None
    out.update(objective=float(sol.objective), status=str(sol.status.value),
               solve_time_reported=float(sol.time), interface=sol.interface,
               phases=ph.report())
    if blk is not None:
        out["rank"] = int(blk._svm.L.shape[1])
        out["n_vars"] = int(blk._svm.record.n_var_datas)
    return out


class _Captured(Exception):
    pass


def capture_solver_call(sf, solver: str) -> dict:
    """The arguments and settings svm_models' backend adapter passes to the solver library
    for the standard form ``sf`` (its own code runs; the library call is intercepted)."""
    from svm_models.solvers import backend
    from svm_models.solvers.base import SolverOptions

    got = {}
    if solver == "clarabel":
        import clarabel
        real = clarabel.DefaultSolver

        def recorder(*a):
            got["args"] = a
            raise _Captured

        clarabel.DefaultSolver = recorder
        try:
            backend("clarabel").matrix(sf, SolverOptions(), None)
        except _Captured:
            pass
        finally:
            clarabel.DefaultSolver = real
    elif solver == "piqp":
        import types

        import piqp
        reals = {k: getattr(piqp, k) for k in ("DenseSolver", "SparseSolver")}

        def make(kind):
            class Recorder:
                def __init__(self):
                    self.settings = types.SimpleNamespace()

                def setup(self, *a):
                    got.update(kind=kind, args=a, settings=vars(self.settings).copy())
                    raise _Captured
            return Recorder

        for k in reals:
            setattr(piqp, k, make(k))
        try:
            backend("piqp").matrix(sf, SolverOptions(), None)
        except _Captured:
            pass
        finally:
            for k, v in reals.items():
                setattr(piqp, k, v)
    else:
        raise ValueError(f"no direct call for {solver}")
    if "args" not in got:
        raise RuntimeError(f"the {solver} adapter did not reach the solver library")
    return got


def run_solver_alone(solver: str, call: dict):
    """The solver library alone on captured arguments: ``x`` of an optimal solve."""
    if solver == "clarabel":
        import clarabel
        sol = clarabel.DefaultSolver(*call["args"]).solve()
        if str(sol.status).split(".")[-1] != "Solved":
            raise RuntimeError(f"clarabel: {sol.status}")
        return np.array(sol.x)
    import piqp
    s = getattr(piqp, call["kind"])()
    for k, v in call["settings"].items():
        setattr(s.settings, k, v)
    s.setup(*call["args"])
    st = s.solve()
    if "SOLVED" not in str(st):
        raise RuntimeError(f"piqp: {st}")
    return np.array(s.result.x)


def _as_dense_piqp(call: dict) -> dict:
    """The captured PIQP call for its dense solver: the same problem, dense arrays (P full
    and symmetric from the upper triangle svm_models passes to the sparse solver)."""
    import scipy.sparse as sp

    args = list(call["args"])
    P = args[0]
    if sp.issparse(P):
        U = P.toarray()
        P = U + U.T - np.diag(np.diag(U))
    args[0] = np.asfortranarray(P)
    for k in (2, 4):
        if args[k] is not None and sp.issparse(args[k]):
            args[k] = np.asfortranarray(args[k].toarray())
    return {"kind": "DenseSolver", "args": tuple(args), "settings": call["settings"]}


def task_kernel_floor(l: int, solver: str, variant: str | None = None, progress=None) -> dict:
    """The solver library alone on the arguments svm_models' adapter builds (``variant=
    "dense"``: PIQP's dense solver on the same problem, a what-if)."""
    def prepared(n):
        X, y = benchmark_data(n, D)
        p = _kernel_params()
        p.pop("formulation")
        model = svm_models.build("rsvm_plus_kernel", X, y, **p)
        sf = assemble(sm_api.the_svm_block(model)._svm.record)
        call = capture_solver_call(sf, solver)
        if variant == "dense":
            call = _as_dense_piqp(call)
        return sf, call

    sf, call = prepared(60)
    run_solver_alone(solver, call)                      # warm-up
    sf, call = prepared(l)
    out = {"interface": f"{solver}-{call['kind'].replace('Solver', '').lower()}"
           if solver == "piqp" else solver}
    if progress:
        with open(progress, "w") as f:
            f.write(json.dumps({"enter": "solver library (set-up and solve)", "t": 0.0}) + "\n")
    with _timed_region(out):
        x = run_solver_alone(solver, call)
    out["objective"] = float(sf.sense * sf.objective(x))
    out["n_vars"], out["n_rows"] = int(sf.n), int(sf.m)
    return out


TASKS = {"fit_pairs": task_fit_pairs, "kernel_fit": task_kernel_fit,
         "kernel_floor": task_kernel_floor}


def _progress_summary(path: str) -> dict:
    """What a killed child had done: seconds per finished phase, and the phases still open
    (entered, not left) with the time since the timed run began when they were entered."""
    done, stack = defaultdict(float), []
    try:
        with open(path) as f:
            for line in f:
                rec = json.loads(line)
                if "enter" in rec:
                    stack.append((rec["enter"], rec["t"]))
                else:
                    done[rec["exit"]] += rec["s"]
                    for k in range(len(stack) - 1, -1, -1):
                        if stack[k][0] == rec["exit"]:
                            del stack[k]
                            break
    except (OSError, ValueError):
        return {}
    return {"finished_phases_s": {k: round(v, 3) for k, v in done.items()},
            "open_phases_entered_at_s": [[n, t] for n, t in stack]}


def measure(task: str, kwargs: dict, cap: float, mem_gb: float) -> dict:
    """Fork, run ``TASKS[task](**kwargs)`` in the child, return its result or an error;
    the child is killed after ``cap`` seconds or above ``mem_gb`` GB of resident memory
    (then the error carries what the child's progress file says it was doing)."""
    progress = os.path.join("/tmp", f"radius_bench_progress_{os.getpid()}.jsonl")
    with contextlib.suppress(OSError):
        os.remove(progress)
    kwargs = dict(kwargs, progress=progress)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                out = TASKS[task](**kwargs)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            tb = traceback.format_exc().strip().splitlines()
            out = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}",
                   "traceback": tb[-6:]}
        data = json.dumps(out).encode()
        while data:
            n = os.write(w, data)
            data = data[n:]
        os._exit(0)
    os.close(w)
    t0 = time.monotonic()
    chunks, why, peak = [], None, 0
    while True:
        left = t0 + cap - time.monotonic()
        if left <= 0:
            why = f"killed after {cap:.0f} s (time cap)"
            break
        rss = rss_bytes(pid)
        peak = max(peak, rss)
        if rss > mem_gb * 1e9:
            why = f"killed at {rss / 1e9:.1f} GB resident (memory guard {mem_gb:.0f} GB)"
            break
        ready, _, _ = select.select([r], [], [], min(left, 0.5))
        if ready:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    if why is not None:
        os.kill(pid, signal.SIGKILL)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if why is not None:
        return {"error": why, "elapsed": round(time.monotonic() - t0, 1),
                "rss_peak_gb_seen": round(peak / 1e9, 2), "progress": _progress_summary(progress)}
    with contextlib.suppress(OSError):
        os.remove(progress)
    if not chunks:
        return {"error": f"child died (status {status})", "rss_peak_gb_seen": round(peak / 1e9, 2)}
    return json.loads(b"".join(chunks))


# ---------------------------------------------------------------------------------------
# The parts


def part_generation(sizes, solvers, cap, mem_gb, log) -> list:
    rows = []
    for l in sizes:
        for form in GENERATED:
            for solver in solvers:
                reps, best = 0, None
                while reps < 3:
                    res = measure("fit_pairs", dict(form=form, l=l, solver=solver,
                                                    pairs="generate"), cap, mem_gb)
                    reps += 1
                    if "error" in res:
                        best = best or res
                        break
                    log(f"  generate {form} l={l} {solver}: {res['time']:.2f} s, "
                        f"{res['generation']['rounds']} rounds, {res['generation']['pairs']} pairs, "
                        f"solver {res['generation']['solver_time']:.2f} s, "
                        f"certificate {res['generation']['max_violation']:.2e}")
                    if best is None or res["time"] < best["time"]:
                        res["runs"] = (best or {}).get("runs", []) + [res["time"]]
                        best = res
                    else:
                        best["runs"].append(res["time"])
                    if res["time"] > 10.0:
                        break
                if "error" in best:
                    log(f"  generate {form} l={l} {solver}: {best['error']}")
                rows.append({"form": form, "l": l, "solver": solver, **best})
    return rows


def part_literal(l, solver, cap, mem_gb, gen_rows, log) -> list:
    rows = []
    for form in GENERATED:
        res = measure("fit_pairs", dict(form=form, l=l, solver=solver, pairs="all"), cap, mem_gb)
        if "error" in res:
            log(f"  all pairs {form} l={l} {solver}: {res['error']}")
        else:
            log(f"  all pairs {form} l={l} {solver}: {res['time']:.1f} s, objective "
                f"{res['objective']:.10g}, peak {res['peak_mb']:.0f} MB")
            gen = next((g for g in gen_rows if g["form"] == form and g["l"] == l
                        and g["solver"] == solver and "objective" in g), None)
            if gen is not None:
                res["generate_objective"] = gen["objective"]
                res["generate_time"] = gen["time"]
                res["rel_obj_diff"] = abs(res["objective"] - gen["objective"]) / abs(res["objective"])
        rows.append({"form": form, "l": l, "solver": solver, **res})
    return rows


def part_kernel(l, solvers, cap, mem_gb, log, piqp_dense=True, save=None) -> dict:
    out = {}
    for solver in solvers:
        if solver == "piqp" and piqp_dense:
            # what-if: PIQP's dense solver on the same problem (svm_models picks the sparse
            # one: its Hessian is sparse, but the rows hold the dense factor L three times)
            d = measure("kernel_floor", dict(l=l, solver="piqp", variant="dense"), cap, mem_gb)
            log(f"  kernel piqp l={l} dense solver alone (what-if): " + (d["error"] if "error" in d
                else f"{d['time']:.2f} s obj {d['objective']:.10g}"))
            out["piqp_dense_solver_alone"] = d
            if save:
                save(out)
        fits, floors = [], []
        rounds = 3
        k = 0
        while k < rounds:
            a = measure("kernel_fit", dict(l=l, solver=solver), cap, mem_gb)
            log(f"  kernel {solver} l={l} fit: " + (a["error"] if "error" in a else
                f"{a['time']:.2f} s obj {a['objective']:.10g}"))
            b = measure("kernel_floor", dict(l=l, solver=solver), cap, mem_gb)
            log(f"  kernel {solver} l={l} solver alone: " + (b["error"] if "error" in b else
                f"{b['time']:.2f} s obj {b['objective']:.10g}"))
            fits.append(a)
            floors.append(b)
            k += 1
            if "error" in a or "error" in b or max(a["time"], b["time"]) > 60.0:
                break
        ok_a = [a for a in fits if "error" not in a]
        ok_b = [b for b in floors if "error" not in b]
        best_a = min(ok_a, key=lambda r: r["time"]) if ok_a else fits[0]
        best_b = min(ok_b, key=lambda r: r["time"]) if ok_b else floors[0]
        entry = {"fit": best_a, "solver_alone": best_b,
                 "fit_runs": [r.get("time") for r in fits],
                 "solver_alone_runs": [r.get("time") for r in floors]}
        if ok_a and ok_b:
            entry["ratio"] = best_a["time"] / best_b["time"]
            entry["rel_obj_diff"] = abs(best_a["objective"] - best_b["objective"]) / abs(best_b["objective"])
        out[solver] = entry
        if save:
            save(out)
    return out


# ---------------------------------------------------------------------------------------
# Output


def machine() -> dict:
    import importlib.metadata as md

    cpu = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    versions = {}
    for pkg in ("numpy", "scipy", "pyomo", "piqp", "clarabel", "cyipopt-wheels"):
        with contextlib.suppress(md.PackageNotFoundError):
            versions[pkg] = md.version(pkg)
    commit = ""
    with contextlib.suppress(Exception):
        import subprocess
        root = os.path.dirname(HERE)
        commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "svm_models"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        if dirty:
            commit += " (svm_models/ modified)"
    return {"nproc": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "versions": versions, "commit": commit}


def _fmt(x, spec=".3g"):
    return "" if x is None else format(x, spec)


def _runs(ts) -> str:
    return ", ".join("error" if t is None else f"{t:.2f}" for t in ts)


def _phase_line(phases: dict, total: float, top: int = 12) -> str:
    items = sorted(phases.items(), key=lambda kv: -kv[1]["s"])[:top]
    return "; ".join(f"{k} {v['s']:.2f} s ({v['calls']}x, {100 * v['s'] / total:.0f}%)"
                     for k, v in items if v["s"] >= 0.005)


def write_markdown(data: dict, path: str) -> None:
    meta = data["meta"]
    L = ["# Radius-margin SVMs: benchmark results\n",
         f"Generated by `python benchmarks/radius.py{' --quick' if meta['quick'] else ''}` on "
         f"{meta['date']} ({meta['minutes']:.1f} min). Machine: {meta['machine']['nproc']} CPUs "
         f"({meta['machine']['cpu']}), svm_models at commit {meta['machine'].get('commit', '?')}; "
         f"load average at start {meta['load_avg_at_start']}. "
         f"Data `benchmark_data(l, d={D})`, C = {C:g}, lam = {LAM:g}. See README.md "
         "(\"Radius-margin SVMs\").\n"]
    for part, m in data.get("runs", {}).items():
        L.append(f"- {part}: run on {m['date']}, load average at start {m['load_avg_at_start']}"
                 + (f"; {m['conditions']}" if m.get("conditions") else
                    "; threads not recorded (a run before benchmarks/conditions.py)"))
    L.append("")
    G = data.get("generation")
    if G:
        L += ["## 1. Constraint generation (`pairs=\"generate\"`)\n",
              "| formulation | l | solver | wall s | target | rounds | pairs in model | all pairs "
              "| solver s | certificate (svm_models) | certificate (recomputed) | objective |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in G:
            if "error" in r:
                L.append(f"| {r['form']} | {r['l']} | {r['solver']} | {r['error']} |  |  |  |  |  |  |  |  |")
                continue
            g = r["generation"]
            tgt = TARGET_GEN.get(r["l"])
            met = "" if tgt is None else (f"< {tgt:.0f} s: " + ("yes" if r["time"] < tgt else "**no**"))
            cert = r.get("certificate", {}).get("rows", {})
            L.append(f"| {r['form']} | {r['l']} | {r['solver']} | {r['time']:.2f} | {met} | "
                     f"{g['rounds']} | {g['pairs']} | {g['all_pairs']:,} | {g['solver_time']:.2f} | "
                     f"{g['max_violation']:.1e} (tol {g['tol']:.1e}) | "
                     f"{_fmt(cert.get('max_violation'), '.1e')} | {r['objective']:.10g} |")
        L.append("")
    A = data.get("literal")
    if A:
        L += ["## 2. The literal form (`pairs=\"all\"`)\n",
              "| formulation | l | solver | wall s | solver s | peak MB | objective | generation's "
              "objective | rel. diff | generation wall s |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        for r in A:
            if "error" in r:
                L.append(f"| {r['form']} | {r['l']} | {r['solver']} | {r['error']} |  |  |  |  |  |  |")
                continue
            L.append(f"| {r['form']} | {r['l']} | {r['solver']} | {r['time']:.1f} | "
                     f"{r['solve_time_reported']:.1f} | {r['peak_mb']:.0f} | {r['objective']:.10g} | "
                     f"{_fmt(r.get('generate_objective'), '.10g')} | {_fmt(r.get('rel_obj_diff'), '.1e')} | "
                     f"{_fmt(r.get('generate_time'), '.2f')} |")
        L.append("")
    K = data.get("kernel")
    if K:
        L += [f"## 3. `rsvm_plus_kernel` (rbf, gamma = {GAMMA:g}, compact) at l = {data['kernel_l']}\n",
              "| solver | svm_models.fit s | solver alone s | ratio | target | rel. obj diff | "
              "interface | rank of L | runs (fit / alone) |",
              "|---|---|---|---|---|---|---|---|---|"]
        for s, e in K.items():
            if s == "piqp_dense_solver_alone":
                continue
            a, b = e["fit"], e["solver_alone"]
            ta = a["error"] if "error" in a else f"{a['time']:.2f}"
            tb = b["error"] if "error" in b else f"{b['time']:.2f}"
            ratio = e.get("ratio")
            met = "" if ratio is None else (f"<= {TARGET_RATIO}x: " + ("yes" if ratio <= TARGET_RATIO else "**no**"))
            L.append(f"| {s} | {ta} | {tb} | {_fmt(ratio, '.2f')} | {met} | "
                     f"{_fmt(e.get('rel_obj_diff'), '.1e')} | {a.get('interface', '')} / "
                     f"{b.get('interface', '')} | {a.get('rank', '')} | "
                     f"{_runs(e['fit_runs'])} / {_runs(e['solver_alone_runs'])} |")
        d = K.get("piqp_dense_solver_alone")
        if d is not None:
            L.append("\nWhat-if: PIQP's dense solver alone on the same problem (svm_models chooses "
                     "PIQP's sparse solver, by the Hessian's fill): "
                     + (d["error"] if "error" in d else f"{d['time']:.2f} s, objective "
                        f"{d['objective']:.10g}") + ".")
        for s, e in K.items():
            for side in ("fit", "solver_alone"):
                r = e.get(side) if isinstance(e, dict) else None
                if r and "error" in r and r.get("progress"):
                    L.append(f"\n{s} {side}: {r['error']}; finished phases "
                             f"{r['progress'].get('finished_phases_s')}, still running "
                             f"{r['progress'].get('open_phases_entered_at_s')}.")
        L.append("")
    L.append("## Where the time goes (phases of the timed run)\n")
    L.append("Seconds per phase, measured inside the timed run by wrappers around svm_models' "
             "functions; nested phases are included in their parents (`backend adapter` includes "
             "`solver library: *`; `assemble` includes `assemble: pair rows`; `solve() total` "
             "includes verify, assemble, the adapter, loading and extraction; `most_violated` "
             "includes `farthest_pairs`).\n")
    for title, rows in (("generation", G or []), ("literal", A or [])):
        for r in rows:
            if "phases" in r:
                L.append(f"- {title} {r['form']} l={r['l']} {r['solver']} ({r['time']:.2f} s, gc "
                         f"{r['gc_s']:.2f} s): {_phase_line(r['phases'], r['time'])}")
    for s, e in (K or {}).items():
        a = e.get("fit", {})
        if "phases" in a:
            L.append(f"- kernel fit {s} l={data['kernel_l']} ({a['time']:.2f} s, gc {a['gc_s']:.2f} s): "
                     f"{_phase_line(a['phases'], a['time'])}")
    L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--parts", default="1,2,3", help="which parts to run (default 1,2,3)")
    ap.add_argument("--gen-solvers", default="clarabel,ipopt",
                    help="backends for constraint generation (default clarabel,ipopt)")
    ap.add_argument("--kernel-solvers", default="clarabel,piqp",
                    help="backends for the kernel form (default clarabel,piqp)")
    ap.add_argument("--cap", type=float, default=900.0,
                    help="kill a measurement after this many seconds (default 900)")
    ap.add_argument("--mem-gb", type=float, default=20.0,
                    help="kill a measurement above this resident memory (default 20 GB)")
    ap.add_argument("--gen-sizes", default=None,
                    help="sizes l for constraint generation (default 1000,10000; quick 200,1000)")
    ap.add_argument("--literal-l", type=int, default=None,
                    help="l for the all-pairs form (default 1000; quick 200)")
    ap.add_argument("--kernel-l", type=int, default=None,
                    help="l for the kernel form (default 2000; quick 300)")
    ap.add_argument("--no-piqp-dense", action="store_true",
                    help="skip the what-if run of PIQP's dense solver in part 3")
    ap.add_argument("--out", default=HERE, help="output directory (default benchmarks/)")
    ap.add_argument("--render", action="store_true",
                    help="only rewrite radius_results.md from radius_results.json")
    args = ap.parse_args(argv)
    if args.render:
        with open(os.path.join(args.out, "radius_results.json")) as f:
            write_markdown(json.load(f), os.path.join(args.out, "radius_results.md"))
        return 0
    parts = {p.strip() for p in args.parts.split(",")}
    gen_sizes = (tuple(int(v) for v in args.gen_sizes.split(",")) if args.gen_sizes
                 else (200, 1000) if args.quick else (1000, 10000))
    lit_l = args.literal_l or (200 if args.quick else 1000)
    ker_l = args.kernel_l or (300 if args.quick else 2000)
    t_start = time.time()

    def log(msg):
        print(f"[{time.time() - t_start:7.1f} s] {msg}", flush=True)

    os.makedirs(args.out, exist_ok=True)
    jpath = os.path.join(args.out, "radius_results.json")
    mpath = os.path.join(args.out, "radius_results.md")
    data = {}
    if parts != {"1", "2", "3"} and os.path.exists(jpath):
        with open(jpath) as f:        # a subset of the parts: merge into the earlier results
            data = json.load(f)
        if data.get("meta", {}).get("quick") != args.quick:
            data = {}
    meta = {"quick": args.quick, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": machine(), "load_avg_at_start": tuple(round(v, 2) for v in os.getloadavg()),
            "conditions": describe(conditions_now()), "args": vars(args), "minutes": 0.0}
    data["meta"] = meta
    runs = data.setdefault("runs", {})

    def save():
        meta["minutes"] = (time.time() - t_start) / 60.0
        with open(jpath, "w") as f:
            json.dump(data, f, indent=1, default=float)
        write_markdown(data, mpath)

    def stamp(part):
        runs[part] = {"date": meta["date"], "load_avg_at_start": meta["load_avg_at_start"],
                      "conditions": meta["conditions"]}

    if "1" in parts:
        log(f"part 1: constraint generation, l in {gen_sizes}")
        stamp("generation")
        data["generation"] = part_generation(gen_sizes, args.gen_solvers.split(","), args.cap,
                                             args.mem_gb, log)
        save()
    if "2" in parts:
        log(f"part 2: all pairs, l = {lit_l}")
        stamp("literal")
        data["literal"] = part_literal(lit_l, "clarabel", args.cap, args.mem_gb,
                                       data.get("generation", []), log)
        save()
    if "3" in parts:
        log(f"part 3: rsvm_plus_kernel compact, l = {ker_l}")
        stamp("kernel")
        data["kernel_l"] = ker_l

        def save_kernel(k):
            data["kernel"] = k
            save()

        data["kernel"] = part_kernel(ker_l, args.kernel_solvers.split(","), args.cap,
                                     args.mem_gb, log, piqp_dense=not args.no_piqp_dense,
                                     save=save_kernel)
    save()
    log(f"wrote {jpath} and {mpath}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

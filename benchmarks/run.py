"""Performance of svm_models end to end against scikit-learn, CVXPY, a textbook Pyomo model
and the solver alone (the floor). Not part of the test suite.

    python benchmarks/run.py              # targets + the size grid, about 14 minutes
    python benchmarks/run.py --quick      # smoke run, about a minute
    python benchmarks/run.py --help       # budgets, case filters, output paths

Every measurement runs in a child process forked from this one (all modules already
imported; the child warms its approach up on a tiny instance, then times one end-to-end
run on a cold heap), so one measurement cannot disturb the next, a runaway solve is killed,
and the child's peak memory is its own: ``peak MB`` is the growth of its resident set
(``VmHWM`` reset before the timed run), the solver's own memory included; ``py MB`` (targets)
is the peak of Python-side allocations (tracemalloc: numpy arrays and Python objects, not a
solver's C/C++ memory). Times are best of up to 3 runs; ratios compare runs made in the same
invocation, approach after approach at each size, on a machine that other jobs may share.
See benchmarks/README.md for what each column means.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import math
import os
import platform
import select
import signal
import sys
import time
from dataclasses import asdict, dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import approaches as ap  # noqa: E402
from conditions import describe  # noqa: E402
from conditions import machine as conditions_now  # noqa: E402
from memory import hwm_bytes, reset_hwm, rss_bytes  # noqa: E402

SIZES = (200, 500, 1000, 2000, 5000, 10000, 20000)
QUICK_SIZES = (200, 500)


@dataclass(frozen=True)
class Case:
    form: str
    kernel: str
    solver: str

    @property
    def key(self) -> str:
        return f"{self.form}/{self.kernel}/{self.solver}"


#: the size grid: every classic formulation with both kernels (Ipopt takes them all), the dense
#: rbf duals with the two QP backends too, the linear 1-norm problems with PIQP, and C-tuning.
GRID = [Case(f, k, "ipopt") for f in ap.CLASSIC for k in ("linear", "rbf")] + [
    Case("soft_l1_dual", "rbf", "highs"), Case("soft_l1_dual", "rbf", "piqp"),
    Case("hard_dual", "rbf", "piqp"), Case("soft_l2_dual", "rbf", "piqp"),
    Case("soft_l2_dual", "rbf", "highs"),
    Case("soft_l1_dual", "linear", "piqp"), Case("soft_l1_primal", "linear", "piqp"),
    Case("c_tuning_standard", "rbf", "ipopt"),
]
QUICK_GRID = [Case("soft_l1_dual", "rbf", "highs"), Case("soft_l1_primal", "linear", "piqp"),
              Case("c_tuning_standard", "rbf", "ipopt")]

FLOORS = {"highs": ap.FloorHighs, "piqp": ap.FloorPiqp, "ipopt": ap.FloorIpopt}


def approaches_for(case: Case) -> dict:
    out = {"svm_models": ap.SvmModels}
    out["floor"] = ap.FloorIpoptCTuning if case.form.startswith("c_tuning") else FLOORS[case.solver]
    out["cvxpy"] = ap.Cvxpy
    if case.solver in ("highs", "ipopt"):
        out["pyomo"] = ap.PyomoTextbook
    if case.form.startswith("soft_l1"):
        out["sklearn"] = ap.Sklearn
    return out


def c_tuning_available() -> bool:
    try:
        import svm_models

        return "c_tuning_standard" in svm_models.formulations()
    except Exception:
        return False


# ---------------------------------------------------------------------------------------
# One measurement in a forked child


def _child(case: Case, approach: str, l: int, cap: float, trace: bool, extra: dict) -> dict:
    cls = SPECIAL[approach] if approach in SPECIAL else approaches_for(case)[approach]
    a = cls()
    a.case, a.time_limit = case, max(2.0 * cap, 5.0)
    for k, v in extra.items():
        setattr(a, k, v)
    Xs, ys = ap.make_data(60)                       # warm-up: first-call costs out of the timing
    p = a.prepare(case, Xs, ys)
    a.run(p)
    X, y = ap.make_data(l)
    prepared = a.prepare(case, X, y)
    del p
    gc.collect()
    rss0 = rss_bytes()
    reset_hwm()
    if trace:
        import tracemalloc

        tracemalloc.start()
    gc_time = [0.0, 0]
    mark = [0.0]

    def on_gc(phase, info):
        if phase == "start":
            mark[0] = time.perf_counter()
        else:
            gc_time[0] += time.perf_counter() - mark[0]
            gc_time[1] += info["generation"] == 2

    gc.callbacks.append(on_gc)
    t0 = time.perf_counter()
    obj = a.run(prepared)
    elapsed = time.perf_counter() - t0
    gc.callbacks.remove(on_gc)
    out = {"time": elapsed, "peak_mb": max(0, hwm_bytes() - rss0) / 1e6,
           "gc_s": round(gc_time[0], 4), "gc_full": gc_time[1]}
    if trace:
        out["py_peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    if obj is None:
        obj = a.objective()
    out["objective"] = obj
    return out


def measure_once(case: Case, approach: str, l: int, cap: float, *, trace=False, extra=None,
                 timeout=None) -> dict:
    """Fork, run one timed measurement in the child, return its result (or an error)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                out = _child(case, approach, l, cap, trace, extra or {})
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            out = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"}
        data = json.dumps(out).encode()
        while data:
            n = os.write(w, data)
            data = data[n:]
        os._exit(0)
    os.close(w)
    limit = timeout if timeout is not None else 2.0 * cap + 60.0
    deadline = time.monotonic() + limit
    chunks = []
    killed = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            killed = True
            break
        ready, _, _ = select.select([r], [], [], left)
        if ready:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if killed:
        return {"error": f"killed after {limit:.0f} s"}
    if not chunks:
        return {"error": f"child died (status {status})"}
    return json.loads(b"".join(chunks))


def measure(case, approach, l, cap, reps=3, **kw) -> dict:
    """Best of up to ``reps`` runs (fewer when one run takes a large part of the cap)."""
    best = None
    runs = []
    for _ in range(reps):
        res = measure_once(case, approach, l, cap, **kw)
        if "error" in res:
            return res if best is None else best
        runs.append(res["time"])
        if best is None or res["time"] < best["time"]:
            best = res
        if res["time"] > min(cap / 4.0, 15.0):
            break
    best["runs"] = runs
    return best


# ---------------------------------------------------------------------------------------
# The size grid


def run_grid(cases, sizes, cap_for, log) -> dict:
    results = {}
    for ci, case in enumerate(cases):
        cap = cap_for(len(cases) - ci)
        names = list(approaches_for(case))
        series = {a: {} for a in names}
        alive = set(names)
        hist = {a: [] for a in names}
        log(f"[grid] {case.key}: cap {cap:.0f} s per measurement")
        for l in sizes:
            for a in names:
                if a not in alive:
                    continue
                pts = hist[a]
                if pts:
                    if len(pts) >= 2:
                        (l1, t1), (l2, t2) = pts[-2], pts[-1]
                        p = min(3.0, max(1.0, math.log(max(t2, 1e-3) / max(t1, 1e-3)) / math.log(l2 / l1)))
                    else:
                        p = 2.0
                    pred = pts[-1][1] * (l / pts[-1][0]) ** p
                    if pred > 1.5 * cap:
                        series[a][l] = {"skipped": f"predicted {pred:.0f} s > cap"}
                        alive.discard(a)
                        continue
                res = measure(case, a, l, cap)
                series[a][l] = res
                if "error" in res:
                    alive.discard(a)
                    log(f"  l={l:6d} {a:10s} error: {res['error']}")
                    continue
                hist[a].append((l, res["time"]))
                log(f"  l={l:6d} {a:10s} {res['time']:8.3f} s  obj {res['objective']:.10g}  "
                    f"peak {res['peak_mb']:.0f} MB")
                if res["time"] > cap:
                    alive.discard(a)
            if not alive:
                break
        results[case.key] = {"case": asdict(case), "cap": cap, "series": series}
    return results


# ---------------------------------------------------------------------------------------
# The targets of issue 9


def interleaved(case, names, l, rounds, cap, log, extra=None, short=2.0):
    """Best of ``rounds`` for each approach, the approaches alternating (5 rounds when a
    round takes less than ``short`` seconds: short runs are the noisiest)."""
    best = {}
    k = 0
    while k < rounds:
        if k == 1 and rounds == 3 and all("time" in best.get(a, {}) and best[a]["time"] < short
                                          for a in names):
            rounds = 5
        for a in names:
            res = measure_once(case, a, l, cap, extra=(extra or {}).get(a))
            if "error" in res:
                log(f"  {case.key} l={l} {a}: {res['error']}")
                best.setdefault(a, res)
                continue
            log(f"  {case.key} l={l} {a} round {k + 1}: {res['time']:.3f} s  obj {res['objective']:.10g}")
            prev = best.get(a)
            if prev is None or "error" in prev or res["time"] < prev["time"]:
                runs = (prev or {}).get("runs", []) if prev and "error" not in prev else []
                best[a] = dict(res, runs=runs + [res["time"]])
            else:
                prev["runs"].append(res["time"])
        k += 1
    return best


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def run_path_target(l, solver, rounds, log) -> dict:
    """A 10-point C path (svm_models.fit_path) against 10 separate fits, interleaved."""
    Cs = np.logspace(-1, 1, 10).tolist()
    out = {"l": l, "solver": solver, "Cs": Cs, "path": [], "fits": []}
    for k in range(rounds):
        for mode in ("path", "fits"):
            res = measure_once(Case("soft_l1_dual", "rbf", solver), "svm_path", l, 600.0,
                               extra={"mode": mode, "Cs": Cs}, timeout=1200)
            if "error" in res:
                log(f"  path target {solver} {mode}: {res['error']}")
                out[mode].append(None)
                continue
            out[mode].append(res)
            log(f"  path target {solver} {mode} round {k + 1}: {res['time']:.2f} s")
    return out


class _PathOrFits(ap.SvmModels):
    """svm_models.fit_path over ``Cs`` (mode "path") or one svm_models.fit per C ("fits")."""

    mode = "path"
    Cs = (1.0,)

    def run(self, prepared):
        import svm_models

        X, y = prepared
        kw = {"kernel": "rbf", "gamma": ap.GAMMA}
        if self.mode == "path":
            sols = svm_models.fit_path(X, y, list(self.Cs), "soft_l1_dual", self.case.solver,
                                       progress=False, **kw)
        else:
            sols = [svm_models.fit(X, y, "soft_l1_dual", self.case.solver, C=C, **kw)
                    for C in self.Cs]
        self.objectives = [float(s.objective) for s in sols]
        return json.dumps(self.objectives)


SPECIAL = {"svm_path": _PathOrFits}


def run_targets(quick, log) -> dict:
    T = {"machine_load_at_start": os.getloadavg()}
    l2k = 500 if quick else 2000
    rounds = 1 if quick else 3
    # 1. end to end at l = 2000 against the floor: linear/Ipopt, rbf/HiGHS, rbf/PIQP
    e2e = {}
    for case in (Case("soft_l1_dual", "linear", "ipopt"), Case("soft_l1_dual", "rbf", "highs"),
                 Case("soft_l1_dual", "rbf", "piqp")):
        e2e[case.key] = interleaved(case, ["svm_models", "floor"], l2k, rounds, 120.0, log)
    T["e2e"] = {"l": l2k, "results": e2e}
    # 2. big problems: linear soft margin at l = 20,000; rbf dual at l = 5,000
    big = {}
    lbig, lrbf = (2000, 1000) if quick else (20000, 5000)
    for case in (Case("soft_l1_primal", "linear", "piqp"), Case("soft_l1_dual", "linear", "piqp"),
                 Case("soft_l1_primal", "linear", "ipopt"), Case("soft_l1_dual", "linear", "ipopt")):
        big[case.key] = {"l": lbig, **measure_once(case, "svm_models", lbig, 120.0)}
        log(f"  big {case.key} l={lbig}: {big[case.key]}")
    for case in (Case("soft_l1_dual", "rbf", "piqp"), Case("soft_l1_dual", "rbf", "highs")):
        big[case.key] = {"l": lrbf, **measure_once(case, "svm_models", lrbf, 90.0, timeout=240)}
        log(f"  big {case.key} l={lrbf}: {big[case.key]}")
    T["big"] = big
    # 3. C-tuning against Ipopt with numpy matrices (dense Hessian)
    if c_tuning_available():
        ct = {}
        case = Case("c_tuning_standard", "rbf", "ipopt")
        for l in ((300,) if quick else (1000, 2000)):
            ct[str(l)] = interleaved(case, ["svm_models", "floor"], l, rounds if l <= 1000 else 2,
                                     300.0, log)
        T["c_tuning"] = ct
    else:
        T["c_tuning"] = "svm_models has no c_tuning_standard formulation: skipped"
    # 4. a 10-point C path against 10 fits
    T["path"] = {}
    for solver, rds in ((("piqp", 1),) if quick else (("piqp", 3), ("highs", 1))):
        T["path"][solver] = run_path_target(l2k, solver, rds, log)
    # 5. memory at l = 2000: Python-side peak (tracemalloc) and resident-set growth
    mem = {}
    mem_cases = [Case("soft_l1_dual", "rbf", "piqp"), Case("soft_l1_dual", "rbf", "highs"),
                 Case("soft_l1_dual", "rbf", "ipopt")]
    if c_tuning_available():
        mem_cases.append(Case("c_tuning_standard", "rbf", "ipopt"))
    for case in mem_cases:
        for a in ("svm_models", "floor"):
            # tracemalloc slows Ipopt down ~25x: an Ipopt QCQP is measured over its first 3
            # iterations (set-up, first factorisation, first Hessian: where the peak is)
            probe = {"probe_iterations": 3} if case.form.startswith("c_tuning") else None
            res = measure_once(case, a, l2k, 300.0, trace=True, extra=probe)
            mem[f"{case.key}/{a}"] = res
            log(f"  memory {case.key} {a}: {res}")
    T["memory"] = {"l": l2k, "kernel_mb": 8.0 * l2k * l2k / 1e6, "results": mem}
    return T


# ---------------------------------------------------------------------------------------
# Output


def machine() -> dict:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = 0.0
    try:
        with open("/proc/meminfo") as f:
            ram = int(f.readline().split()[1]) / 1024 / 1024
    except OSError:
        pass
    import importlib.metadata as md

    versions = {}
    for pkg in ("numpy", "scipy", "pyomo", "cvxpy", "scikit-learn", "highspy", "piqp",
                "cyipopt-wheels", "clarabel"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"nproc": os.cpu_count(), "cpu": cpu, "ram_gb": round(ram, 1),
            "python": platform.python_version(), "versions": versions, "load_avg_at_start": load}


def fmt_t(res):
    if res is None:
        return ""
    if "skipped" in res:
        return "—"
    if "error" not in res and not math.isfinite(res.get("objective", 0.0)):
        return "infeasible"
    if "error" in res:
        e = res["error"]
        return "killed" if e.startswith("killed") else ("not separable" if "separable" in e.lower() or "infeasible" in e.lower() else "error")
    return f"{res['time']:.3g}"


def ratio(a, b):
    if not a or not b or "time" not in a or "time" not in b:
        return ""
    if not (math.isfinite(a.get("objective", 0.0)) and math.isfinite(b.get("objective", 0.0))):
        return ""
    return f"{a['time'] / b['time']:.2f}"


def write_markdown(data, path):
    L = []
    meta = data.get("meta", {})
    L.append("# svm_models benchmark results\n")
    L.append(f"Generated by `python benchmarks/run.py{' --quick' if meta.get('quick') else ''}` "
             f"on {meta.get('date', '?')} (total {meta.get('minutes', 0):.1f} min). "
             f"Machine: {meta.get('machine', {}).get('nproc')} CPUs ({meta.get('machine', {}).get('cpu')}), "
             f"{meta.get('machine', {}).get('ram_gb')} GB RAM, load average at start "
             f"{meta.get('machine', {}).get('load_avg_at_start')}. Times in seconds, best of up to 3; "
             "see README.md for the columns.\n")
    for sec in ("targets_meta", "grid_meta"):
        m = data.get(sec)
        if m:
            L.append(f"- {sec.split('_')[0]}: run on {m['date']}, {m['minutes']:.1f} min, load average "
                     f"at start {tuple(round(v, 2) for v in m['load_avg_at_start'])}"
                     + (f", cap per measurement <= {m['budget']:.0f} s within {m['max_minutes']:.0f} min"
                        if 'budget' in m else "")
                     + (f"; {m['conditions']}" if m.get("conditions") else
                        "; threads not recorded (a run before benchmarks/conditions.py)"))
    L.append("")
    T = data.get("targets")
    if T:
        L.append("## Targets (issue 9)\n")
        L.append("| target | figure reached | goal | met |")
        L.append("|---|---|---|---|")
        for row in target_rows(T):
            L.append("| " + " | ".join(row) + " |")
        L.append("")
        L.extend(target_details(T))
    G = data.get("grid")
    if G:
        L.append("## Size grid\n")
        L.append("Each approach grows l until one run exceeds the cap (or is predicted to exceed "
                 "1.5 x the cap: `—`). Cap per measurement: shown per case. "
                 "`svm/floor`: svm_models time over the floor's; `cvxpy/svm`, `pyomo/svm`, "
                 "`sklearn/svm`: how many times slower than svm_models (above 1: svm_models is "
                 "faster). `peak MB`: resident-set growth of svm_models / of the floor. "
                 "`obj diff`: |svm_models - floor| / max(1, |floor|).\n")
        for key, entry in G.items():
            L.append(f"### {key} (cap {entry['cap']:.0f} s)\n")
            s = entry["series"]
            names = list(s)
            cols = ["l", "svm_models", "floor", "svm/floor"]
            for a in ("cvxpy", "pyomo", "sklearn"):
                if a in names:
                    cols += [a, f"{a}/svm"]
            cols += ["peak MB", "obj diff"]
            L.append("| " + " | ".join(cols) + " |")
            L.append("|" + "---|" * len(cols))
            sizes = sorted({int(l) for a in names for l in s[a]})
            for l in sizes:
                g = lambda a: s.get(a, {}).get(str(l)) or s.get(a, {}).get(l)  # noqa: E731
                sv, fl = g("svm_models"), g("floor")
                row = [str(l), fmt_t(sv), fmt_t(fl), ratio(sv, fl)]
                for a in ("cvxpy", "pyomo", "sklearn"):
                    if a in names:
                        row += [fmt_t(g(a)), ratio(g(a), sv)]
                pk = ""
                if sv and "peak_mb" in sv:
                    pk = f"{sv['peak_mb']:.0f}"
                    if fl and "peak_mb" in fl:
                        pk += f" / {fl['peak_mb']:.0f}"
                od = ""
                if (sv and fl and "objective" in sv and "objective" in fl
                        and math.isfinite(sv["objective"]) and math.isfinite(fl["objective"])):
                    od = f"{_rel(sv['objective'], fl['objective']):.1e}"
                row += [pk, od]
                L.append("| " + " | ".join(row) + " |")
            L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def _best(d, a):
    r = d.get(a) if d else None
    return r if r and "time" in r else None


def target_rows(T):
    rows = []
    e2e = T.get("e2e", {})
    l = e2e.get("l")
    res = e2e.get("results", {})
    for key, label in (("soft_l1_dual/linear/ipopt", "linear kernel, Ipopt"),
                       ("soft_l1_dual/rbf/highs", "rbf kernel, HiGHS (1-norm dual)")):
        sv, fl = _best(res.get(key), "svm_models"), _best(res.get(key), "floor")
        if sv and fl:
            r = sv["time"] / fl["time"]
            od = _rel(sv["objective"], fl["objective"])
            rows.append([f"end to end at l = {l}, {label}, vs floor",
                         f"{r:.2f}x ({sv['time']:.2f} s vs {fl['time']:.2f} s), obj diff {od:.1e}",
                         "<= 1.3x, obj diff <= 1e-6", "yes" if r <= 1.3 and od <= 1e-6 else "no"])
    # fastest backend vs PIQP alone
    cands = [(_best(res.get(k), "svm_models"), k.split("/")[-1]) for k in res
             if k.startswith("soft_l1_dual/rbf")]
    cands = [(r, s) for r, s in cands if r]
    fl = _best(res.get("soft_l1_dual/rbf/piqp"), "floor")
    if cands and fl:
        r, s = min(cands, key=lambda c: c[0]["time"])
        q = r["time"] / fl["time"]
        rows.append([f"rbf 1-norm dual at l = {l}, fastest backend ({s}) vs PIQP alone",
                     f"{q:.2f}x ({r['time']:.2f} s vs {fl['time']:.2f} s)", "<= 1.3x",
                     "yes" if q <= 1.3 else "no"])
    big = T.get("big", {})
    lin = [(v, k) for k, v in big.items() if "/linear/" in k and "time" in v]
    if lin:
        v, k = min(lin, key=lambda c: c[0]["time"])
        rows.append([f"linear soft margin, l = {v['l']}, d = 20, end to end",
                     f"{v['time']:.2f} s ({k}); " + ", ".join(
                         f"{kk.split('/')[0].replace('soft_l1_', '')}/{kk.split('/')[-1]} "
                         f"{vv['time']:.1f} s" for kk, vv in big.items()
                         if '/linear/' in kk and 'time' in vv),
                     "< 60 s", "yes" if v["time"] < 60 else "no"])
    rb = [(v, k) for k, v in big.items() if "/rbf/" in k]
    if rb:
        ok = [(v, k) for v, k in rb if "time" in v]
        desc = ", ".join(f"{k.split('/')[-1]} " + (f"{v['time']:.1f} s" if "time" in v else v.get("error", "?"))
                         for v, k in rb)
        best = min(ok, key=lambda c: c[0]["time"]) if ok else None
        rows.append([f"rbf dual at l = {rb[0][0]['l']}, end to end", desc, "< 60 s, one backend",
                     "yes" if best and best[0]["time"] < 60 else "no"])
    ct = T.get("c_tuning")
    if isinstance(ct, dict):
        for lk, d in ct.items():
            sv, fl = _best(d, "svm_models"), _best(d, "floor")
            if sv and fl:
                r = sv["time"] / fl["time"]
                rows.append([f"C-tuning QCQP (standard, rbf) at l = {lk} vs Ipopt + numpy",
                             f"{r:.2f}x ({sv['time']:.2f} s vs {fl['time']:.2f} s), optimum "
                             f"{sv['objective']:.4f} (floor {fl['objective']:.4f})",
                             "<= 1.5x", "yes" if r <= 1.5 else "no"])
    elif ct:
        rows.append(["C-tuning QCQP", str(ct), "<= 1.5x", "skipped"])
    for solver, d in T.get("path", {}).items():
        p = [r for r in d["path"] if r]
        f = [r for r in d["fits"] if r]
        if p and f:
            bp, bf = min(r["time"] for r in p), min(r["time"] for r in f)
            po = json.loads(min(p, key=lambda r: r["time"])["objective"])
            fo = json.loads(min(f, key=lambda r: r["time"])["objective"])
            od = max(_rel(a, b) for a, b in zip(po, fo))
            rows.append([f"10-point C path at l = {d['l']} ({solver}) vs 10 fits",
                         f"{bf / bp:.2f}x faster ({bp:.1f} s vs {bf:.1f} s), obj diff {od:.1e}",
                         ">= 3x", "yes" if bf / bp >= 3 else "no"])
    mem = T.get("memory")
    if mem:
        kmb = mem["kernel_mb"]
        parts, good, bad = [], [], []
        for key, r in mem["results"].items():
            if key.endswith("/svm_models") and "py_peak_mb" in r:
                q = r["py_peak_mb"] / kmb
                name = f"{key.split('/')[0].replace('_standard', '')}/{key.split('/')[2]}"
                parts.append(f"{name} {q:.2f}x")
                (good if q < 3 else bad).append(name)
        rows.append([f"peak memory at l = {mem['l']}: Python-side peak (tracemalloc) / kernel matrix "
                     f"({kmb:.0f} MB)", ", ".join(parts), "< 3x + the solver's own",
                     "yes" if not bad else
                     f"{', '.join(good) or 'none'}: yes; {', '.join(bad)}: no (strictly: these include "
                     "cyipopt's two copies of the Hessian values per callback, 1.0x; see README)"])
    return rows


def target_details(T):
    L = ["### Target measurements\n"]
    e2e = T.get("e2e", {})
    L.append(f"End to end at l = {e2e.get('l')} (each run: times of the rounds, best first):\n")
    L.append("| case | svm_models s | floor s | ratio | svm runs | floor runs | objective (svm / floor) |")
    L.append("|---|---|---|---|---|---|---|")
    for key, d in e2e.get("results", {}).items():
        sv, fl = _best(d, "svm_models"), _best(d, "floor")
        if sv and fl:
            L.append(f"| {key} | {sv['time']:.3f} | {fl['time']:.3f} | {sv['time'] / fl['time']:.2f} | "
                     f"{', '.join(f'{t:.2f}' for t in sorted(sv.get('runs', [])))} | "
                     f"{', '.join(f'{t:.2f}' for t in sorted(fl.get('runs', [])))} | "
                     f"{sv['objective']:.10g} / {fl['objective']:.10g} |")
    L.append("")
    ct = T.get("c_tuning")
    if isinstance(ct, dict):
        L.append("C-tuning QCQP (standard, rbf), svm_models vs Ipopt with numpy callbacks:\n")
        L.append("| l | svm_models s | floor s | ratio | svm runs | floor runs | optimum (svm / floor) |")
        L.append("|---|---|---|---|---|---|---|")
        for lk, d in ct.items():
            sv, fl = _best(d, "svm_models"), _best(d, "floor")
            if sv and fl:
                L.append(f"| {lk} | {sv['time']:.2f} | {fl['time']:.2f} | {sv['time'] / fl['time']:.2f} | "
                         f"{', '.join(f'{t:.2f}' for t in sorted(sv.get('runs', [])))} | "
                         f"{', '.join(f'{t:.2f}' for t in sorted(fl.get('runs', [])))} | "
                         f"{sv['objective']:.4f} / {fl['objective']:.4f} |")
        L.append("")
    mem = T.get("memory")
    if mem:
        L.append(f"Memory at l = {mem['l']} (kernel matrix {mem['kernel_mb']:.0f} MB): "
                 "`py MB` = peak of Python-side allocations (tracemalloc), `RSS MB` = growth of "
                 "the resident set during the run (solver's own memory included).\n")
        L.append("| case | approach | py MB | py / K | RSS MB |")
        L.append("|---|---|---|---|---|")
        for key, r in mem["results"].items():
            c, a = key.rsplit("/", 1)
            if "py_peak_mb" in r:
                L.append(f"| {c} | {a} | {r['py_peak_mb']:.0f} | {r['py_peak_mb'] / mem['kernel_mb']:.2f} | "
                         f"{r['peak_mb']:.0f} |")
        L.append("")
    return L


def grid_summary(G) -> list:
    """One line per grid case: the ratios at l = 2000 (or the largest size svm_models reached)."""
    L = ["| case | l | svm_models s | svm/floor | cvxpy/svm | pyomo/svm | sklearn/svm | largest l (svm_models / floor / cvxpy / pyomo) |",
         "|---|---|---|---|---|---|---|---|"]
    for key, entry in G.items():
        s = entry["series"]
        def ok(a):
            return {int(l): r for l, r in s.get(a, {}).items()
                    if r and "time" in r and math.isfinite(r.get("objective", 0.0))}
        sv = ok("svm_models")
        if not sv:
            L.append(f"| {key} | | (no result) | | | | | |")
            continue
        l = 2000 if 2000 in sv else max(sv)
        row = [key, str(l), f"{sv[l]['time']:.3g}"]
        for a, inv in (("floor", False), ("cvxpy", True), ("pyomo", True), ("sklearn", True)):
            o = ok(a).get(l)
            row.append("" if o is None else f"{(o['time'] / sv[l]['time']) if inv else (sv[l]['time'] / o['time']):.2f}")
        row.append(" / ".join(str(max(ok(a))) if ok(a) else "-" for a in ("svm_models", "floor", "cvxpy", "pyomo")))
        L.append("| " + " | ".join(row) + " |")
    return L


def update_readme(data, path):
    """Replace the marked section of README.md with the latest target table and grid summary."""
    if not os.path.exists(path):
        return
    with open(path) as f:
        text = f.read()
    start, end = "<!-- results:start -->", "<!-- results:end -->"
    if start not in text or end not in text:
        return
    L = []
    for sec in ("targets_meta", "grid_meta"):
        m = data.get(sec)
        if m:
            L.append(f"- {sec.split('_')[0]}: {m['date']}, {m['minutes']:.1f} min, load average at "
                     f"start {tuple(round(v, 2) for v in m['load_avg_at_start'])}"
                     + (f"; {m['conditions']}" if m.get("conditions") else ""))
    L.append("")
    if data.get("targets"):
        L += ["Targets of issue 9:", "", "| target | figure reached | goal | met |", "|---|---|---|---|"]
        L += ["| " + " | ".join(r) + " |" for r in target_rows(data["targets"])]
        L.append("")
    if data.get("grid"):
        L += ["Size grid, ratios at l = 2000 (or the largest size svm_models reached within the "
              "cap); full tables in results.md, plot in results.png:", ""]
        L += grid_summary(data["grid"])
    body = "\n".join(L)
    text = text[:text.index(start) + len(start)] + "\n" + body + "\n" + text[text.index(end):]
    with open(path, "w") as f:
        f.write(text)


def plot(data, path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    G = data.get("grid") or {}
    if not G:
        return False
    keys = list(G)
    ncol = 4
    nrow = math.ceil(len(keys) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.3 * nrow), squeeze=False)
    styles = {"svm_models": ("C0", "o", 2.2), "floor": ("k", "s", 1.4), "cvxpy": ("C1", "^", 1.2),
              "pyomo": ("C2", "v", 1.2), "sklearn": ("C3", "d", 1.2)}
    for ax, key in zip(axes.flat, keys):
        for a, pts in G[key]["series"].items():
            good = [(int(l), r["time"]) for l, r in pts.items()
                    if r and "time" in r and math.isfinite(r.get("objective", 0.0))]
            xs = [p[0] for p in good]
            ts = [p[1] for p in good]
            if xs:
                c, m, lw = styles.get(a, ("C4", "x", 1))
                ax.loglog(xs, ts, marker=m, color=c, lw=lw, ms=4, label=a)
        ax.set_title(key, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles), loc="upper center", ncol=len(handles),
               fontsize=9, bbox_to_anchor=(0.5, 1.0))
    fig.subplots_adjust(top=0.95)
    fig.supxlabel("training points l")
    fig.supylabel("seconds (end to end)")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------------------


def main(argv=None):
    ap_ = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap_.add_argument("--quick", action="store_true", help="smoke run: small sizes, few cases (~1 min)")
    ap_.add_argument("--budget", type=float, default=60.0,
                     help="cap per single measurement in seconds (default 60)")
    ap_.add_argument("--max-minutes", type=float, default=14.0,
                     help="whole-run budget; the grid's cap shrinks to fit it (default 14)")
    ap_.add_argument("--targets-only", action="store_true")
    ap_.add_argument("--grid-only", action="store_true")
    ap_.add_argument("--cases", default="", help="comma-separated substrings selecting grid cases")
    ap_.add_argument("--out", default=HERE, help="directory for results.md/.json/.png")
    ap_.add_argument("--render-only", action="store_true",
                     help="rewrite results.md, results.png and README.md from results.json")
    args = ap_.parse_args(argv)
    if args.render_only:
        with open(os.path.join(args.out, "results.json")) as f:
            data = json.load(f)
        write_markdown(data, os.path.join(args.out, "results.md"))
        update_readme(data, os.path.join(args.out, "README.md"))
        plot(data, os.path.join(args.out, "results.png"))
        return

    # forked children inherit everything imported here (no import time in the measurements)
    import cvxpy  # noqa: F401
    import pyomo.environ  # noqa: F401
    import sklearn.svm  # noqa: F401

    import svm_models  # noqa: F401

    for mod in ("highspy", "piqp", "cyipopt"):
        __import__(mod)
    # The objects of everything imported here (cvxpy, scikit-learn, ...) are moved out of the
    # garbage collector's reach: a full collection in a child then walks only what the child
    # itself created, as it would in a process that imported just the approach it runs.
    gc.collect()
    gc.freeze()

    t_start = time.time()
    deadline = t_start + 60.0 * (1.0 if args.quick else args.max_minutes)

    def log(msg):
        print(f"[{time.time() - t_start:7.1f}s] {msg}", flush=True)

    json_path = os.path.join(args.out, "results.json")
    data = {}
    if os.path.exists(json_path) and (args.targets_only or args.grid_only or args.cases):
        with open(json_path) as f:
            data = json.load(f)
    data["meta"] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "quick": args.quick,
                    "machine": machine(), "budget": args.budget, "max_minutes": args.max_minutes}

    if not args.grid_only:
        log("targets")
        t0, before = time.time(), conditions_now()
        data["targets"] = run_targets(args.quick, log)
        data["targets_meta"] = {"date": data["meta"]["date"], "minutes": (time.time() - t0) / 60,
                                "load_avg_at_start": data["meta"]["machine"]["load_avg_at_start"],
                                "conditions": describe(before, conditions_now(busy=False))}

    if not args.targets_only:
        cases = QUICK_GRID if args.quick else GRID
        if args.cases:
            sel = [s for s in args.cases.split(",") if s]
            cases = [c for c in cases if any(s in c.key for s in sel)]
        if not c_tuning_available():
            cases = [c for c in cases if not c.form.startswith("c_tuning")]
        sizes = QUICK_SIZES if args.quick else SIZES

        def cap_for(left):
            remaining = max(0.0, deadline - time.time())
            return max(2.0, min(args.budget if not args.quick else 5.0, remaining / max(left, 1) / 2.0))

        log("grid")
        t0, before = time.time(), conditions_now()
        grid = run_grid(cases, sizes, cap_for, log)
        data["grid_meta"] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                             "minutes": (time.time() - t0) / 60, "budget": args.budget,
                             "max_minutes": args.max_minutes,
                             "load_avg_at_start": data["meta"]["machine"]["load_avg_at_start"],
                             "conditions": describe(before, conditions_now(busy=False))}
        if args.cases and data.get("grid"):
            data["grid"].update(grid)
        else:
            data["grid"] = grid
    data["meta"]["minutes"] = (time.time() - t_start) / 60.0
    os.makedirs(args.out, exist_ok=True)
    with open(json_path, "w") as f:
        json.dump(data, f, indent=1, default=str)
    write_markdown(data, os.path.join(args.out, "results.md"))
    update_readme(data, os.path.join(args.out, "README.md"))
    if plot(data, os.path.join(args.out, "results.png")):
        log("wrote results.png")
    log(f"wrote {os.path.join(args.out, 'results.md')} ({data['meta']['minutes']:.1f} min)")


if __name__ == "__main__":
    main()

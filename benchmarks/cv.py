"""Cross-validation over a grid (issue 16): SVMClassifierCV serially and over 2 processes
against scikit-learn's GridSearchCV over SVMClassifier (same backend, n_jobs=1) and over SVC.
Not part of the test suite.

    python benchmarks/cv.py                 # l = 2000, 5 folds x 20 C x 3 gamma, ~10 minutes
    python benchmarks/cv.py --gs-every 1    # GridSearchCV(SVMClassifier) on the whole grid
    python benchmarks/cv.py --l 400         # a quick smoke run
    python benchmarks/cv.py --only ours_serial ours_n_jobs_2   # re-measure some, merge

Data of issue 9 (``X = N(0, 1)^20 + 0.35 y``, y alternating), rbf kernel, soft_l1_dual,
PIQP, ``Cs = logspace(-2, 2, 20)``, ``gamma in {1/80, 1/20, 1/5}``, ``StratifiedKFold(5)``.
Each approach runs in a fresh child process (imports done before the clock starts), so its
peak memory is its own: ``ru_maxrss`` of the child, and of each worker (asked by tasks
sent to the same reusable worker pool after the run). GridSearchCV over SVMClassifier
fits every grid point from scratch; by default it runs on every 4th C (all gammas, all
folds) and its time is scaled by 20 / 5 to the whole grid (the time of one fit varies little
with C here: 1.4 s to 2.2 s at l = 1600). Results: ``benchmarks/cv_results.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from conditions import describe  # noqa: E402
from conditions import machine as conditions_now  # noqa: E402
CS = np.logspace(-2, 2, 20).tolist()
GAMMAS = [1 / 80, 1 / 20, 1 / 5]
APPROACHES = ("ours_serial", "ours_n_jobs_2", "gridsearch_svmclassifier", "gridsearch_svc")


def data(l: int):
    rng = np.random.default_rng(0)
    y = np.where(np.arange(l) % 2 == 0, 1, -1)
    return rng.standard_normal((l, 20)) + 0.35 * y[:, None], y


def _worker_usage(_=None):
    """(pid, (peak MB, CPU seconds)) of the worker that runs it."""
    import resource

    time.sleep(0.3)  # keep this worker busy so that the next call goes to another
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return os.getpid(), (ru.ru_maxrss / 1024, ru.ru_utime + ru.ru_stime)


def child(name: str, l: int, every: int) -> dict:
    """One approach in this (fresh) process: time, best parameters, scores, peak memory."""
    import resource

    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    from svm_models.estimator import SVMClassifier, SVMClassifierCV

    X, y = data(l)
    folds = StratifiedKFold(5)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"approach": name, "import_rss_mb": base}
    t0, c0 = time.perf_counter(), time.process_time()
    if name.startswith("ours"):
        n_jobs = 2 if name == "ours_n_jobs_2" else None
        est = SVMClassifierCV(solver="piqp", Cs=CS, cv=folds, n_jobs=n_jobs, kernel="rbf",
                              gamma=GAMMAS, solver_options={"time_limit": 600})
        est.fit(X, y)
        out["time"] = time.perf_counter() - t0
        out["cpu"] = time.process_time() - c0
        out["refit_time"] = est.refit_time_
        out["refit_source"] = est.refit_source_
        res = est.cv_results_
        out["status"] = sorted(set(res["status"]))
        if n_jobs:
            from svm_models.methods.cv import _executor  # the pool that ran the tasks

            pool = _executor(2)
            usage = dict(f.result() for f in [pool.submit(_worker_usage) for _ in range(6)])
            out["worker_peak_mb"] = sorted(u[0] for u in usage.values())
            out["worker_cpu"] = sorted(u[1] for u in usage.values())
    else:
        if name == "gridsearch_svc":
            grid, est = {"C": CS, "gamma": GAMMAS}, SVC(kernel="rbf", tol=1e-9)
        else:
            grid = {"C": CS[::every], "gamma": GAMMAS}
            est = SVMClassifier(solver="piqp", kernel="rbf")
        gs = GridSearchCV(est, grid, cv=folds, n_jobs=1).fit(X, y)
        out["time"] = time.perf_counter() - t0
        out["cpu"] = time.process_time() - c0
        out["scaled_to_full_grid"] = len(CS) / len(grid["C"])
        res = gs.cv_results_
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["params"] = [{k: float(v) for k, v in p.items()} for p in res["params"]]
    out["mean_test_score"] = [float(s) for s in res["mean_test_score"]]
    best = int(np.argmin(res["rank_test_score"]))
    out["best"] = out["params"][best] | {"score": out["mean_test_score"][best]}
    return out


def run(name: str, l: int, every: int) -> dict:
    load, before = os.getloadavg(), conditions_now()
    proc = subprocess.run([sys.executable, __file__, "--child", name, "--l", str(l),
                           "--gs-every", str(every)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["load_before"] = [round(x, 2) for x in load]
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    out["conditions"] = describe(before, conditions_now(busy=False))
    return out


def agreement(a: dict, b: dict) -> str:
    """Rows of b whose mean test score differs from a's (a's table covers b's rows)."""
    index = {json.dumps(p, sort_keys=True): s for p, s in zip(a["params"], a["mean_test_score"])}
    diff = [p for p, s in zip(b["params"], b["mean_test_score"])
            if index[json.dumps(p, sort_keys=True)] != s]
    return f"{len(b['params']) - len(diff)}/{len(b['params'])} rows equal"


def write(results: dict, l: int, every: int, path: str) -> None:
    R = results
    full = {k: r["time"] * r.get("scaled_to_full_grid", 1.0) for k, r in R.items()}
    cpu = {k: r["cpu"] * r.get("scaled_to_full_grid", 1.0) for k, r in R.items()}
    s, p, g, v = (full[k] for k in APPROACHES)
    cs, cg = cpu["ours_serial"], cpu["gridsearch_svmclassifier"]
    par = R["ours_n_jobs_2"]
    critical = par["cpu"] + max(par["worker_cpu"])  # the main process + the busier worker
    where = ("in a worker while the last task ran (speculative refit)"
             if par.get("refit_source") == "speculative" else "in the main process after the tasks")
    names = {"ours_serial": "SVMClassifierCV, serial",
             "ours_n_jobs_2": "SVMClassifierCV, n_jobs=2 (processes, joblib's loky executor)",
             "gridsearch_svmclassifier": "GridSearchCV(SVMClassifier(solver='piqp')), n_jobs=1",
             "gridsearch_svc": "GridSearchCV(SVC), n_jobs=1 (reference)"}
    lines = [
        "# Cross-validation over a grid (issue 16)",
        "",
        f"`python benchmarks/cv.py --l {l} --gs-every {every}`, {time.strftime('%Y-%m-%d %H:%M')}, "
        f"on this project's machine ({os.cpu_count()} cores, {platform.machine()}), shared with "
        "other jobs: the load average (1 min) before and after each run is listed. Wall times "
        "suffer from the other jobs; CPU times (user + system of the process, and of each "
        "worker process) much less.",
        "",
        f"5-fold CV (StratifiedKFold, no shuffle) over 20 values of C (logspace(-2, 2)) x 3 "
        f"values of gamma (1/80, 1/20, 1/5), rbf, soft_l1_dual, PIQP, l = {l} (data of issue 9: "
        "N(0,1)^20 + 0.35 y): 300 (fold, C, gamma) fits, plus the refit on all data. Ours "
        "builds 15 models and walks the 20 values of C on each.",
        "",
        "| approach | wall (s) | whole grid, wall (s) | CPU (s) | peak memory (ru_maxrss) | "
        "load before -> after |",
        "|---|---|---|---|---|---|",
    ]
    for k in APPROACHES:
        r = R[k]
        scaled = r.get("scaled_to_full_grid", 1.0)
        note = f" (measured on 1/{scaled:g} of the C values, x{scaled:g})" if scaled != 1 else ""
        mem = f"{r['peak_mb']:.0f} MB (after imports {r['import_rss_mb']:.0f} MB)"
        c = f"{cpu[k]:.0f}"
        if "worker_peak_mb" in r:
            mem += "; workers " + ", ".join(f"{m:.0f} MB" for m in r["worker_peak_mb"])
            c += " + workers " + ", ".join(f"{x:.0f}" for x in r["worker_cpu"])
        lines.append(f"| {names[k]} | {r['time']:.1f} | {full[k]:.1f}{note} | {c} | {mem} | "
                     f"{r['load_before'][0]} -> {r['load_after'][0]} |")
    lines += [
        "",
        "| target | wall-clock figure | CPU figure | goal | met |",
        "|---|---|---|---|---|",
        f"| serial vs GridSearchCV(SVMClassifier), same backend, n_jobs=1 | {g / s:.2f}x "
        f"({s:.0f} s vs {g:.0f} s) | {cg / cs:.2f}x ({cs:.0f} s vs {cg:.0f} s) | >= 3x | "
        f"{'yes' if g / s >= 3 else 'no'} (wall) / {'yes' if cg / cs >= 3 else 'no'} (CPU) |",
        f"| n_jobs=2 vs serial | {s / p:.2f}x ({p:.0f} s vs {s:.0f} s) | {cs / critical:.2f}x "
        f"(critical path: main process + the busier worker, {critical:.0f} s, vs {cs:.0f} s) | "
        f">= 1.7x | {'yes' if s / p >= 1.7 else 'no'} (wall) / "
        f"{'yes' if cs / critical >= 1.7 else 'no'} (CPU) |",
        f"| reference: GridSearchCV(SVC) | {v:.0f} s ({v / s:.2f}x our serial time) | "
        f"{cpu['gridsearch_svc']:.0f} s | - | - |",
        "",
        "Agreement (mean test scores, row by row): serial vs n_jobs=2: "
        f"{agreement(R['ours_serial'], R['ours_n_jobs_2'])}; serial vs "
        f"GridSearchCV(SVMClassifier): {agreement(R['ours_serial'], R['gridsearch_svmclassifier'])}"
        f"; serial vs GridSearchCV(SVC): {agreement(R['ours_serial'], R['gridsearch_svc'])}. "
        f"Best: ours "
        f"{R['ours_serial']['best']}, SVC {R['gridsearch_svc']['best']}. Statuses: "
        f"{R['ours_serial']['status']}.",
        "",
        "Peak memory is `ru_maxrss` (resident set high-water mark) of the process that ran the "
        "approach, and of each worker process (the worker's whole life: imports, its share of "
        "the 15 tasks). Our times include the refit on all data "
        f"({R['ours_serial']['refit_time']:.1f} s serially; with n_jobs=2 "
        f"{par['refit_time']:.1f} s, made {where}).",
        "",
        "Conditions of each run (benchmarks/conditions.py):",
        "",
        *(f"- {names[k]}: {R[k].get('conditions', 'threads not recorded')}" for k in APPROACHES),
    ]
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--l", type=int, default=2000)
    ap.add_argument("--gs-every", type=int, default=4,
                    help="GridSearchCV(SVMClassifier) on every k-th C, scaled (default 4)")
    ap.add_argument("--only", nargs="+", choices=APPROACHES, default=APPROACHES,
                    help="measure these approaches only; the others are read from the .json")
    ap.add_argument("--child", choices=APPROACHES, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=os.path.join(HERE, "cv_results"))
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.l, args.gs_every)))
        return
    results = {}
    if set(args.only) != set(APPROACHES):
        with open(args.out + ".json") as fh:
            old = json.load(fh)
        if (old["l"], old["gs_every"]) != (args.l, args.gs_every):
            raise SystemExit(f"{args.out}.json was made with other --l / --gs-every")
        results = old["results"]
    for name in args.only:
        results[name] = run(name, args.l, args.gs_every)
        r = results[name]
        print(f"{name}: {r['time']:.1f} s, peak {r['peak_mb']:.0f} MB, best {r['best']}, "
              f"load {r['load_before'][0]} -> {r['load_after'][0]}", flush=True)
    with open(args.out + ".json", "w") as fh:
        json.dump({"l": args.l, "gs_every": args.gs_every, "results": results}, fh, indent=1)
    write(results, args.l, args.gs_every, args.out + ".md")


if __name__ == "__main__":
    main()

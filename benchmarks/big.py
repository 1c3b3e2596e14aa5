"""Big problems on one machine (issue 17): timings and peak memory, not tests.

    python benchmarks/big.py                      # linear and rbf parts (about 25 minutes)
    python benchmarks/big.py --parts linear       # one part
    python benchmarks/big.py --quick              # smoke run (small sizes, about 1 minute)
    python benchmarks/big.py --parts linear --linear soft_l1_dual:1000000:ipm   # one case

A run keeps the rows of earlier runs that it does not measure again (each row states when it
was measured and the load then).

Linear kernel (data of ``approaches.make_data``: d = 20, C = 1, tolerance 1e-9): for each
formulation, size and backend (``ipm``, svm_models' own interior-point method, and PIQP),
``svm_models.fit`` end to end against the same solver fed matrices directly
(``approaches.FloorIpm`` / ``FloorPiqp``: the matrices built with numpy, no Pyomo model), and
liblinear (``sklearn.svm.LinearSVC``, hinge loss) tightened until its (w, b) reaches the
svm_models optimum to 1e-6 relative (liblinear penalises the bias: ``intercept_scaling`` 10
makes that penalty negligible).

rbf kernel (gamma = 1/20, C = 1): ``svm_models.fit(..., kernel="rbf", kernel_rank=r)`` (the
factor form on a pivoted incomplete Cholesky factor; K is never formed) against
scikit-learn's ``SVC`` on the full kernel: time and accuracy on 10,000 test points of the
same distribution.

Each measurement runs in a forked child (killed past ``--cap`` seconds); ``peak MB`` is the
highest resident set during the run over the one at its start (the high-water mark reset
first, /proc/self/clear_refs): for svm_models the whole fit (model, solver, post-processing),
for the floor the building of its matrices and its solve -- the solver's own memory. The
data X (``data MB``) is in memory before either starts. The issue's target, peak memory
under 3x the data plus the solver's own, is ``(svm - floor) / data <= 2``. Results: ``big_results.json`` and ``big_results.md``.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from conditions import describe  # noqa: E402
from conditions import machine as conditions_now  # noqa: E402

from approaches import FloorIpm, FloorPiqp, make_data  # noqa: E402
from memory import hwm_bytes, reset_hwm, rss_bytes  # noqa: E402

LINEAR = [(f, l, s) for s in ("ipm", "piqp") for f, l in [
    ("soft_l1_dual", 1_000_000), ("soft_l1_primal", 1_000_000),
    ("soft_l1_primal", 100_000), ("soft_l1_dual", 100_000),
    ("soft_l2_primal", 100_000), ("soft_l2_dual", 100_000)]]
RBF = [(20_000, 1000, "ipm"), (20_000, 300, "ipm"), (50_000, 300, "ipm"),
       (20_000, 300, "clarabel"), (50_000, 300, "clarabel")]
QUICK_LINEAR = [("soft_l1_dual", 20_000, "ipm"), ("soft_l1_primal", 20_000, "ipm")]
QUICK_RBF = [(2_000, 100, "ipm")]
#: the same solver fed matrices directly (numpy arrays, no Pyomo model)
FLOORS = {"piqp": FloorPiqp, "ipm": FloorIpm}
GAMMA, C = 1.0 / 20.0, 1.0


class Peak:
    """Growth of this process's resident set at its highest during a ``with`` block, over
    the resident set at its start (the high-water mark is reset first: temporaries of
    earlier work do not hide this block's)."""

    def __enter__(self):
        gc.collect()
        self.base = rss_bytes()
        reset_hwm()
        return self

    def __exit__(self, *exc):
        self.mb = (max(hwm_bytes(), rss_bytes()) - self.base) / 1e6
        return False


def in_child(fn, args, cap: float) -> dict:
    """``fn(*args)`` in a forked child; its dict result, or why there is none."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)

    def target():
        try:
            out = fn(*args)
        except Exception as exc:  # reported, not raised: the run goes on
            out = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        child.send(out)

    p = ctx.Process(target=target)
    p.start()
    if parent.poll(cap):
        out = parent.recv()
    else:
        out = {"error": f"killed after {cap:.0f} s"}
    p.kill()
    p.join()
    return out


# ---------------------------------------------------------------------------------------
# Linear kernel


def run_svm(form, X, y, solver="piqp", **kw) -> dict:
    import svm_models as sm

    sm.fit(X[:200], y[:200], form, solver, **kw)            # first-call costs out
    with Peak() as peak:
        t = time.perf_counter()
        sol = sm.fit(X, y, form, solver, C=C, **kw)
        wall = time.perf_counter() - t
    out = {"s": wall, "solver_s": sol.time, "objective": sol.objective,
           "peak_mb": peak.mb, "interface": sol.interface}
    if sol.w is not None:
        out["w"], out["b"] = sol.w.tolist(), sol.b
    if "kernel_rank" in sol.extra:
        out["kernel_rank"] = sol.extra["kernel_rank"]
    return out


def run_floor(form, X, y, solver="piqp") -> dict:
    floor = FLOORS[solver]()
    case = SimpleNamespace(form=form, kernel="linear")
    floor.run(floor.prepare(case, X[:200], y[:200]))       # first-call costs out
    with Peak() as peak:                                   # its memory: matrices and solve
        qp = floor.prepare(case, X, y)                     # the matrices: not timed
        t = time.perf_counter()
        obj = floor.run(qp)
        s = time.perf_counter() - t
    return {"s": s, "objective": obj, "peak_mb": peak.mb}


def run_liblinear(X, y, target: float) -> dict:
    """LinearSVC (hinge loss) at tighter and tighter tolerances until its primal objective
    of the unregularised-bias SVM is within 1e-6 of ``target``."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    runs = []
    for tol in (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8):
        clf = LinearSVC(loss="hinge", dual=True, C=C, tol=tol, intercept_scaling=10.0,
                        max_iter=100_000)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)
        s = time.perf_counter() - t
        w, b = clf.coef_[0], float(clf.intercept_[0])
        obj = 0.5 * float(w @ w) + C * float(np.maximum(0.0, 1.0 - y * (X @ w + b)).sum())
        rel = (obj - target) / abs(target)
        runs.append({"tol": tol, "s": s, "objective": obj, "rel": rel})
        if abs(rel) <= 1e-6:
            return {"s": s, "tol": tol, "rel": rel, "runs": runs}
    return {"s": None, "rel": runs[-1]["rel"], "runs": runs,
            "error": "did not reach 1e-6 relative"}


def linear_part(cases, cap, earlier=(), skip_liblinear=False) -> list:
    rows, lib = [], {}
    for form, l, solver in cases:
        X, y = make_data(l)
        print(f"linear {form} l={l} {solver}", flush=True)
        when = {"when": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
                "load": round(os.getloadavg()[0], 2)}
        svm = in_child(run_svm, (form, X, y, solver), cap)
        print("  svm_models", {k: v for k, v in svm.items() if k not in ("w",)}, flush=True)
        floor = in_child(run_floor, (form, X, y, solver), cap)
        print("  floor", floor, flush=True)
        row = {"form": form, "l": l, "solver": solver, "data_mb": X.nbytes / 1e6, "svm": svm,
               "floor": floor, **when}
        if form.startswith("soft_l1") and "objective" in svm and skip_liblinear:
            # keep the earlier run's liblinear figure for this size (same data, same optimum)
            same = sorted((r for r in earlier if r["l"] == l and r.get("liblinear")),
                          key=lambda r: r.get("solver") != solver)   # this backend's row first
            row["liblinear"] = same[0]["liblinear"] if same else {}
        elif form.startswith("soft_l1") and "objective" in svm:
            # one liblinear run per size: the 1-norm primal and dual share the objective
            if l not in lib:
                lib[l] = in_child(run_liblinear, (X, y, svm["objective"]), cap)
            row["liblinear"] = lib[l]
            print("  liblinear", {k: v for k, v in row["liblinear"].items() if k != "runs"},
                  flush=True)
        svm.pop("w", None)
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------
# rbf kernel, low rank


def run_rbf_accuracy(l, r, solver, Xt, yt) -> dict:
    """Fit and predict in one child (the Solution holds the Nystroem kernel)."""
    import svm_models as sm

    X, y = make_data(l)
    sm.fit(X[:200], y[:200], "soft_l1_dual", solver, kernel="rbf", gamma=GAMMA, kernel_rank=50)
    with Peak() as pk:
        t = time.perf_counter()
        sol = sm.fit(X, y, "soft_l1_dual", solver, C=C, kernel="rbf", gamma=GAMMA,
                     kernel_rank=r)
        wall = time.perf_counter() - t
    peak = pk.mb
    # predictions in chunks (the low-rank kernel costs r kernel values per test point)
    f = np.concatenate([sol.decision_function(Xt[s:s + 2000]) for s in range(0, len(yt), 2000)])
    acc = float(np.mean(np.where(f >= 0, 1.0, -1.0) == yt))
    return {"s": wall, "solver_s": sol.time, "objective": sol.objective, "peak_mb": peak,
            "accuracy": acc, "interface": sol.interface, "kernel_rank": sol.extra["kernel_rank"],
            "n_support": int(sol.n_support)}


def run_svc(l, Xt, yt) -> dict:
    from sklearn.svm import SVC

    X, y = make_data(l)
    with Peak() as pk:
        t = time.perf_counter()
        clf = SVC(kernel="rbf", gamma=GAMMA, C=C).fit(X, y)
        s = time.perf_counter() - t
    return {"s": s, "peak_mb": pk.mb, "accuracy": float(clf.score(Xt, yt)),
            "n_support": int(clf.n_support_.sum())}


def test_set(m=10_000, d=20):
    rng = np.random.default_rng(12345)
    yt = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    return rng.standard_normal((m, d)) + 0.35 * yt[:, None], yt


def rbf_part(cases, cap) -> list:
    Xt, yt = test_set()
    rows, svc = [], {}
    for l, r, solver in cases:
        print(f"rbf l={l} rank={r} {solver}", flush=True)
        if l not in svc:
            svc[l] = in_child(run_svc, (l, Xt, yt), cap)
            print("  SVC", svc[l], flush=True)
        when = {"when": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
                "load": round(os.getloadavg()[0], 2)}
        out = in_child(run_rbf_accuracy, (l, r, solver, Xt, yt), cap)
        print("  svm_models", out, flush=True)
        rows.append({"l": l, "rank": r, "solver": solver, "data_mb": l * 20 * 8 / 1e6,
                     "svm": out, "svc": svc[l], **when})
    return rows


# ---------------------------------------------------------------------------------------
# Report


def fmt(v, spec=".3g"):
    return "—" if v is None else format(v, spec)


def secs(run: dict) -> str:
    """A measured run's seconds, or its error."""
    return fmt(run["s"]) if "s" in run else str(run.get("error"))


def render(res: dict) -> str:
    out = ["# Big problems on one machine (issue 17): results of `benchmarks/big.py`", "",
           f"Run {res.get('started', '?')} UTC, load average at start {res.get('load', '?')} "
           f"({res.get('conditions', 'threads not recorded')}); "
           "2 shared cores (see benchmarks/README.md, Machine). `peak MB`: the highest resident "
           "set of the measuring child during the run over the one at its start (high-water "
           "mark reset first; the data X is in memory before); svm_models: the whole fit, "
           "floor: building its matrices and solving. Memory target (peak under 3x the data "
           "plus the solver's own): `(svm - floor) / data` <= 2. Rows measured before "
           "2026-11-24 counted the growth of the unreset high-water mark (the floor's without "
           "its matrices).",
           ""]
    if res.get("linear"):
        out += ["## Linear kernel (d = 20, C = 1, tolerance 1e-9)", "",
                "`floor`: the same backend fed matrices built with numpy (no Pyomo model). "
                "`when (load)`: UTC time of the row's measurement and the 1-minute load "
                "average then.", "",
                "| formulation | l | backend | svm_models s | solver s | floor s | svm/floor | "
                "liblinear s (tol) | peak MB svm / floor | (svm - floor) / data | data MB | obj diff "
                "| when (load) |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in res["linear"]:
            s, f, lib = r["svm"], r["floor"], r.get("liblinear", {})
            ratio = s["s"] / f["s"] if "s" in s and "s" in f else None
            diff = (abs(s["objective"] - f["objective"]) / max(1.0, abs(f["objective"]))
                    if "objective" in s and "objective" in f else None)
            excess = ((s["peak_mb"] - f["peak_mb"]) / r["data_mb"]
                      if "peak_mb" in s and "peak_mb" in f else None)
            libtxt = (f"{fmt(lib.get('s'))} ({lib.get('tol', '—')})" if lib.get("s") else
                      (lib.get("error", "—") if lib else ""))
            out.append(f"| {r['form']} | {r['l']:,} | {r.get('solver', 'piqp')} | {secs(s)} "
                       f"| {fmt(s.get('solver_s'))} | {secs(f)} "
                       f"| {fmt(ratio, '.2f')} | {libtxt} | {fmt(s.get('peak_mb'), '.0f')} / "
                       f"{fmt(f.get('peak_mb'), '.0f')} | {fmt(excess, '.2f')} "
                       f"| {r['data_mb']:.0f} | {fmt(diff, '.1e')} "
                       f"| {r.get('when', res.get('started', '?'))} ({r.get('load', '?')}) |")
        out.append("")
    if res.get("rbf"):
        out += ["## rbf kernel, low rank (gamma = 1/20, C = 1, 1-norm dual)", "",
                "| l | rank | backend | svm_models s | solver s | accuracy | SVC s | SVC accuracy "
                "| relative trace error | peak MB svm / SVC | when (load) |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in res["rbf"]:
            s, v = r["svm"], r["svc"]
            kr = s.get("kernel_rank", {})
            out.append(f"| {r['l']:,} | {r['rank']} | {r['solver']} | "
                       f"{secs(s)} | {fmt(s.get('solver_s'))} "
                       f"| {fmt(s.get('accuracy'), '.4f')} | {fmt(v.get('s'))} | "
                       f"{fmt(v.get('accuracy'), '.4f')} | {fmt(kr.get('relative_trace_error'), '.3f')} "
                       f"| {fmt(s.get('peak_mb'), '.0f')} / {fmt(v.get('peak_mb'), '.0f')} "
                       f"| {r.get('when', res.get('started', '?'))} ({r.get('load', '?')}) |")
        out.append("")
    return "\n".join(out)


def merged(old: list, new: list, key) -> list:
    """The rows of an earlier run, those measured again replaced (a run of some cases keeps
    the others' figures, each row with its own time and load)."""
    fresh = {key(r) for r in new}
    return [r for r in old if key(r) not in fresh] + new


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default="linear,rbf")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cap", type=float, default=900.0, help="seconds per measurement")
    ap.add_argument("--linear", default=None,
                    help="cases form:l:backend,... (default: the issue's, ipm and piqp)")
    ap.add_argument("--rbf", default=None, help="cases l:rank:backend,... (default: the issue's)")
    ap.add_argument("--skip-liblinear", action="store_true",
                    help="keep the earlier run's liblinear time for each size")
    ap.add_argument("--out", default=str(HERE))
    a = ap.parse_args(argv)
    out = Path(a.out)
    path = out / "big_results.json"
    res = json.loads(path.read_text()) if path.exists() else {}
    for row in res.get("linear", []) + res.get("rbf", []):   # rows of an earlier run
        row.setdefault("when", res.get("started", "?"))
        row.setdefault("load", (res.get("load") or ["?"])[0])
    res["started"] = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    res["load"] = [round(x, 2) for x in os.getloadavg()]
    res["conditions"] = describe(conditions_now())
    parts = a.parts.split(",")
    if "linear" in parts:
        cases = ([(f, int(l), s) for f, l, s in (c.split(":") for c in a.linear.split(","))]
                 if a.linear else (QUICK_LINEAR if a.quick else LINEAR))
        res["linear"] = merged(res.get("linear", []),
                               linear_part(cases, a.cap, res.get("linear", []), a.skip_liblinear),
                               lambda r: (r["form"], r["l"], r.get("solver", "piqp")))
    if "rbf" in parts:
        cases = ([(int(l), int(r), s) for l, r, s in (c.split(":") for c in a.rbf.split(","))]
                 if a.rbf else (QUICK_RBF if a.quick else RBF))
        res["rbf"] = merged(res.get("rbf", []), rbf_part(cases, a.cap),
                            lambda r: (r["l"], r["rank"], r["solver"]))
    path.write_text(json.dumps(res, indent=1))
    notes = HERE / "big_notes.md"   # the analysis, written by hand: kept below the tables
    (out / "big_results.md").write_text(
        render(res) + ("\n" + notes.read_text() if notes.exists() else ""))
    print(render(res))


if __name__ == "__main__":
    main()

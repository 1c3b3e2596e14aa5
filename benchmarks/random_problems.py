"""Random valid 1-norm duals on every backend (issue 51, "random valid problems").

Generates ``--n`` random valid ``soft_l1_dual`` problems, seeded (problem ``i`` from seed
``--seed + i``): 4-120 points, features of scales 1e-4 to 1e4, some with duplicated points
(some with conflicting labels), a constant or a badly scaled feature, string labels, C from
1e-3 to 1e3 (log-uniform), each kernel the library takes (linear, rbf, poly). Fits each with
``svm_models.fit(X, y, formulation="soft_l1_dual", solver=b, C=..., kernel=...)`` on every
backend with default options, in this process, timed. The reference objective is libsvm's at
``tol=1e-10``; where libsvm refuses, the best certified objective among the others (said so).

Writes ``random_problems_results.md`` (a table per backend, the failing cases, the machine's
conditions) and ``random_problems_results.json`` (every row).

    nice -n 5 python benchmarks/random_problems.py --n 40
    python benchmarks/random_problems.py --only 17 --backends ipopt   # re-check one alone

A call is interrupted (SIGALRM) after ``--guard`` seconds (60) so that the run ends; a call
over 10 s is a failure of the issue's bound only once re-checked alone (``--only``).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conditions import describe, machine  # noqa: E402

import svm_models  # noqa: E402

BACKENDS = ("libsvm", "highs", "piqp", "clarabel", "ipm", "ipopt", "gurobi", "scip")
KERNELS = ("linear", "rbf", "poly")
#: Gurobi's size-limited licence: only problems this small are given to it
GUROBI_MAX_POINTS = 40
SLOW = 10.0          # the bound, seconds
EQUAL = 1e-6         # relative difference from the reference called equal
HERE = Path(__file__).resolve().parent


def problem(seed: int) -> dict:
    """One random valid problem: ``X, y, C, kernel, params`` and what makes it hard."""
    rng = np.random.default_rng(seed)
    l, d = int(rng.integers(4, 121)), int(rng.integers(1, 9))
    X = rng.normal(size=(l, d))
    w = rng.normal(size=d)
    score = X @ w + 0.3 * rng.normal(size=l)
    traits = []
    X = X * 10.0 ** rng.uniform(-4, 4, size=d)          # features of scales 1e-4 .. 1e4
    if rng.random() < 0.3:                               # duplicated points
        k = int(rng.integers(1, max(2, l // 2)))
        src, dst = rng.choice(l, k), rng.choice(l, k)
        X[dst] = X[src]
        score[dst] = score[src] if rng.random() < 0.5 else -score[src]  # some conflicting
        traits.append(f"dup{k}")
    extra = rng.random()
    if extra < 0.2:                                      # a constant feature
        X = np.column_stack([X, np.full(l, 10.0 ** rng.uniform(-4, 4))])
        traits.append("const")
    elif extra < 0.4:                                    # a badly scaled feature
        s = 10.0 ** (rng.choice([-1, 1]) * rng.uniform(5, 9))
        X = np.column_stack([X, s * rng.normal(size=l)])
        traits.append(f"bad{s:.0e}")
    order = np.argsort(score)
    labels = np.where(score > np.median(score), "spam", "ham").astype(object)
    labels[order[0]], labels[order[-1]] = "ham", "spam"  # both classes present
    C = float(10.0 ** rng.uniform(-3, 3))
    kernel = KERNELS[int(rng.integers(len(KERNELS)))]
    params = {"degree": int(rng.integers(2, 4))} if kernel == "poly" else {}
    return {"seed": seed, "X": X, "y": labels, "C": C, "kernel": kernel, "params": params,
            "l": l, "d": X.shape[1], "traits": traits}


class Interrupted(Exception):
    pass


def _alarm(signum, frame):
    raise Interrupted()


def run_one(p: dict, backend: str, guard: float, **opts) -> dict:
    """Fit ``p`` on ``backend``; a row: status or error, time, objective, certified."""
    row = {"backend": backend}
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, guard)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = svm_models.fit(p["X"], p["y"], formulation="soft_l1_dual", solver=backend,
                                 C=p["C"], kernel=p["kernel"], **p["params"], **opts)
        cert = sol.classifier_certificate or {}
        row.update(status=sol.status.name, objective=float(sol.objective),
                   certified=bool(cert.get("certified")), worst=cert.get("worst"),
                   fallback=(sol.fallback or {}).get("kind"))
    except Interrupted:
        row.update(status="interrupted", error=f"interrupted after {guard:g} s")
    except Exception as exc:  # noqa: BLE001 -- recorded: type and first line
        row.update(status="error", error_type=type(exc).__name__,
                   typed=isinstance(exc, svm_models.errors.SVMError),
                   error=(str(exc).splitlines() or [""])[0][:200])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    row["time"] = time.perf_counter() - t0
    return row


def reference(p: dict, rows: list, guard: float) -> tuple:
    """libsvm at tol=1e-10, or else the best certified objective among the others."""
    ref = run_one(p, "libsvm", guard, tol=1e-10)
    if ref.get("status") == "optimal" and ref.get("certified"):
        return ref["objective"], "libsvm tol=1e-10"
    good = [r["objective"] for r in rows if r.get("status") == "optimal" and r.get("certified")]
    why = ref.get("error") or f"status {ref.get('status')}, certified {ref.get('certified')}"
    if good:
        return min(good), f"libsvm refused ({why}); best certified of the others"
    return None, f"libsvm refused ({why}); no certified answer"


def classify(row: dict, ref) -> str:
    """``equal``, ``wrong`` (certified optimal, off the reference), ``off`` (optimal, not
    certified, off), ``refused`` (typed), ``licence``, ``over`` (interrupted) or ``error``."""
    if row["status"] == "optimal":
        if ref is None:
            return "noref"
        rel = abs(row["objective"] - ref) / max(abs(ref), 1e-300)
        row["rel"] = rel
        if rel <= EQUAL:
            return "equal"
        return "wrong" if row.get("certified") else "off"
    if row["status"] == "interrupted":
        return "over"
    if row.get("error_type") == "LicenseLimitError":
        return "licence"
    if row.get("typed"):
        return "refused"
    return "error"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", type=int, nargs="*", help="these seeds only (re-check)")
    ap.add_argument("--backends", nargs="*", default=list(BACKENDS))
    ap.add_argument("--guard", type=float, default=60.0)
    ap.add_argument("--out", default=str(HERE / "random_problems_results"))
    a = ap.parse_args()
    seeds = a.only if a.only else range(a.seed, a.seed + a.n)
    before = machine()
    cases = []
    for s in seeds:
        p = problem(s)
        rows = []
        for b in a.backends:
            if b == "gurobi" and p["l"] > GUROBI_MAX_POINTS:
                continue
            rows.append(run_one(p, b, a.guard))
        ref, ref_src = reference(p, rows, a.guard)
        for r in rows:
            r["class"] = classify(r, ref)
        case = {k: p[k] for k in ("seed", "l", "d", "C", "kernel", "params", "traits")}
        case.update(reference=ref, reference_source=ref_src, rows=rows)
        cases.append(case)
        bad = [f"{r['backend']}:{r['class']}" for r in rows if r["class"] != "equal"]
        print(f"seed {s} l={p['l']} {p['kernel']} C={p['C']:.3g} {' '.join(p['traits'])} "
              f"-> {' '.join(bad) or 'all equal'}", flush=True)
    after = machine(busy=False)
    Path(a.out + ".json").write_text(json.dumps(cases, indent=1, default=str))
    Path(a.out + ".md").write_text(report(cases, a, describe(before, after)))


def report(cases: list, a, conditions: str) -> str:
    cols = ("answered", "equal", "refused", "licence", "over 10 s", "off (uncertified)",
            "wrong", "error")
    lines = ["# Random valid 1-norm duals on every backend", "",
             f"`python benchmarks/random_problems.py --n {a.n} --seed {a.seed}`"
             + (f" `--only {' '.join(map(str, a.only))}`" if a.only else "")
             + f": {len(cases)} problems (4-120 points, features of scales 1e-4 to 1e4, "
             "duplicated points, a constant or a badly scaled feature, string labels, "
             "C log-uniform in [1e-3, 1e3], linear/rbf/poly), default options. Reference: "
             "libsvm at tol=1e-10 (else the best certified objective of the others). "
             f"Gurobi only on problems of at most {GUROBI_MAX_POINTS} points (size-limited "
             f"licence). A call is interrupted after {a.guard:g} s.", "",
             "*answered*: status optimal; *equal*: within 1e-6 relative of the reference; "
             "*refused*: a typed error; *over 10 s*: calls that took more than 10 s "
             "(any outcome); *off*: optimal but not certified and off the reference; "
             "*wrong*: certified optimal and off the reference by more than 1e-6 (must be 0).",
             "", "| backend | problems | " + " | ".join(cols) + " | max time (s) |",
             "|---" * (len(cols) + 3) + "|"]
    for b in a.backends:
        rows = [r for c in cases for r in c["rows"] if r["backend"] == b]
        if not rows:
            continue
        n = {k: 0 for k in cols}
        for r in rows:
            n["answered"] += r["status"] == "optimal"
            n["over 10 s"] += r["time"] > SLOW
            key = {"equal": "equal", "refused": "refused", "licence": "licence",
                   "wrong": "wrong", "off": "off (uncertified)", "error": "error",
                   "over": None, "noref": None}[r["class"]]
            if key:
                n[key] += 1
        tmax = max(r["time"] for r in rows)
        lines.append(f"| {b} | {len(rows)} | " + " | ".join(str(n[k]) for k in cols)
                     + f" | {tmax:.2f} |")
    lines += ["", "## Failing cases", "",
              "| seed | l | d | kernel | C | traits | backend | what happened | time (s) |",
              "|---|---|---|---|---|---|---|---|---|"]
    for c in cases:
        for r in c["rows"]:
            if r["class"] in ("equal", "licence") and r["time"] <= SLOW:
                continue
            what = {"equal": "equal", "wrong": f"WRONG: certified, rel {r.get('rel', 0):.1e}",
                    "off": f"optimal, uncertified, rel {r.get('rel', 0):.1e}",
                    "noref": "optimal, no reference"}.get(
                r["class"], f"{r.get('error_type', r['status'])}: {r.get('error', '')}")
            what = what.replace("|", "/")
            kern = c["kernel"] + (f" deg {c['params']['degree']}" if c["params"] else "")
            lines.append(f"| {c['seed']} | {c['l']} | {c['d']} | {kern} | {c['C']:.3g} | "
                         f"{' '.join(c['traits'])} | {r['backend']} | {what} | "
                         f"{r['time']:.2f} |")
    noref = [c for c in cases if c["reference_source"] != "libsvm tol=1e-10"]
    if noref:
        lines += ["", "## Problems libsvm refused", ""]
        lines += [f"- seed {c['seed']}: {c['reference_source']}" for c in noref]
    lines += ["", "## Conditions", "", conditions, ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()

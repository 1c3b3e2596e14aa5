"""The mixed-integer SVMs against their convex neighbours (not a timed test).

1. Robustness to flipped labels: two Gaussian clouds and breast cancer (l = 60 on Gurobi, to
   optimality; l = 120 on SCIP, incumbents) with 5-20% of the training labels flipped at random; test accuracy (on clean labels) of the ramp-loss SVM
   (``ramp_loss_primal``), the hinge-loss SVM (``soft_l1_primal``) and scikit-learn's
   ``SVC(kernel="linear")``, over seeds.
2. Time to optimality of ``ramp_loss_primal`` against l: Gurobi within its pip licence (a
   quadratic model of at most 200 variables: ``d + 1 + 2 l``), SCIP beyond.
3. ``feature_selection`` (norm l1, budget k) against scikit-learn's RFE on a linear SVC at the
   same k: test accuracy.

    .venv/bin/python benchmarks/mip.py            # the full run (10 seeds)
    .venv/bin/python benchmarks/mip.py --quick    # 3 seeds, smaller sizes
    .venv/bin/python benchmarks/mip.py --only cancer-gurobi   # that table's rows alone
    .venv/bin/python benchmarks/mip.py --scip-seeds 3 --deadline 12:50
        # fewer seeds for the solves beyond Gurobi's licence (SCIP, up to its time limit
        # each); no solve started that could end after 12:50 UTC. Every row says how many
        # seeds it ran.

Every MIP solve is warm-started (``extra["warm_start"]``, issue 29): the timing table gives
the start's objective over the final one.

Writes benchmarks/mip_results.md (and prints it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from pathlib import Path

import numpy as np

import svm_models as sm
from svm_models import datasets

HERE = Path(__file__).resolve().parent

#: the time (epoch seconds) after which no solve may end (None: no deadline)
DEADLINE = None


def fits(seconds: float) -> bool:
    """Whether a solve of at most ``seconds`` ends before :data:`DEADLINE`."""
    return DEADLINE is None or time.time() + seconds <= DEADLINE


def until(hhmm: str) -> float:
    """Epoch seconds of the next ``HH:MM`` UTC."""
    now = dt.datetime.now(dt.timezone.utc)
    h, m = map(int, hhmm.split(":"))
    t = now.replace(hour=h, minute=m, second=0, microsecond=0)
    return (t if t > now else t + dt.timedelta(days=1)).timestamp()


def clouds(l, seed, d=2, sep=1.2):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(l) < 0.5, 1, -1)
    X = rng.normal(size=(l, d)) + sep * y[:, None] / np.sqrt(d)
    return X, y


def flip(y, rate, seed):
    rng = np.random.default_rng(1000 + seed)
    y = y.copy()
    idx = rng.choice(len(y), size=int(round(rate * len(y))), replace=False)
    y[idx] = -y[idx]
    return y


def accuracy_table(name, make, rates, seeds, C, solver, time_limit):
    from sklearn.svm import SVC

    rows = []
    for rate in rates:
        acc = {"ramp": [], "hinge": [], "svc": []}
        gaps, stops = [], 0
        for s in seeds:
            if not fits(time_limit + 10):
                break
            Xtr, ytr, Xte, yte = make(s)
            yf = flip(ytr, rate, s)
            ramp = sm.fit(Xtr, yf, "ramp_loss_primal", solver=solver, C=C,
                          time_limit=time_limit)
            stops += ramp.status == "time_limit"
            gaps.append(ramp.mip_gap)
            hinge = sm.fit(Xtr, yf, "soft_l1_primal", solver="clarabel", C=C)
            svc = SVC(kernel="linear", C=C).fit(Xtr, yf)
            acc["ramp"].append(ramp.score(Xte, yte))
            acc["hinge"].append(hinge.score(Xte, yte))
            acc["svc"].append(svc.score(Xte, yte))
        n = len(acc["ramp"])
        if n == 0:
            rows.append(f"| {name} | {rate:.0%} | not run (deadline) | | | | | 0 |")
            continue
        rows.append(f"| {name} | {rate:.0%} | " + " | ".join(
            f"{np.mean(acc[k]):.3f} ± {np.std(acc[k]):.3f}" for k in ("ramp", "hinge", "svc"))
            + f" | {stops}/{n} | {max(gaps):.1e} | {n} |")
    return rows


def timing_table(sizes, seeds, scip_seeds, C, limit=120):
    rows = []
    for l in sizes:
        solver = "gurobi" if 2 + 1 + 2 * l <= 200 else "scip"
        times, status, start, gaps = [], [], [], []
        for s in (seeds if solver == "gurobi" else scip_seeds):
            if not fits(limit + 10):
                break
            X, y = clouds(l, s)
            y = flip(y, 0.1, s)
            t0 = time.perf_counter()
            sol = sm.fit(X, y, "ramp_loss_primal", solver=solver, C=C, time_limit=limit)
            times.append(time.perf_counter() - t0)
            status.append(sol.status.value)
            gaps.append(sol.mip_gap)
            ws = sol.extra.get("warm_start", {}).get("objective")
            start.append(np.nan if ws is None else ws / sol.objective)
        if not times:
            rows.append(f"| {l} | {solver} | not run (deadline) | | | | | 0 |")
            continue
        rows.append(f"| {l} | {solver} | {np.median(times):.2f} | {max(times):.2f} | "
                    f"{sum(st == 'optimal' for st in status)}/{len(times)} | "
                    f"{max(gaps):.1e} | {np.nanmedian(start):.3f} | {len(times)} |")
    return rows


def feature_table(ks, seeds, C):
    from sklearn.feature_selection import RFE
    from sklearn.svm import LinearSVC

    rows = []
    for k in ks:
        acc_mip, acc_rfe, times = [], [], []
        for s in seeds:
            if not fits(30):
                break
            rng = np.random.default_rng(s)
            l, d = 120, 10
            X = rng.normal(size=(l + 400, d))
            beta = np.zeros(d)
            beta[:3] = [1.5, -1.0, 0.7]
            y = np.where(X @ beta + 0.5 * rng.normal(size=l + 400) > 0, 1, -1)
            Xtr, ytr, Xte, yte = X[:l], y[:l], X[l:], y[l:]
            t0 = time.perf_counter()
            sol = sm.fit(Xtr, ytr, "feature_selection", solver="highs", k=k, C=C)
            times.append(time.perf_counter() - t0)
            acc_mip.append(sol.score(Xte, yte))
            rfe = RFE(LinearSVC(C=C, dual="auto", max_iter=20000), n_features_to_select=k)
            rfe.fit(Xtr, ytr)
            acc_rfe.append(rfe.score(Xte, yte))
        if not times:
            rows.append(f"| {k} | not run (deadline) | | | 0 |")
            continue
        rows.append(f"| {k} | {np.mean(acc_mip):.3f} ± {np.std(acc_mip):.3f} | "
                    f"{np.mean(acc_rfe):.3f} ± {np.std(acc_rfe):.3f} | {np.median(times):.2f} | "
                    f"{len(times)} |")
    return rows


def cancer(l):
    """The breast-cancer data: l training points drawn by the seed, the whole test split."""
    Xtr, Xte, ytr, yte = datasets.breast_cancer()

    def make(s):
        rng = np.random.default_rng(s)
        idx = rng.choice(len(ytr), size=l, replace=False)
        s_ = np.where(ytr[idx] == np.unique(ytr)[1], 1, -1)
        t_ = np.where(yte == np.unique(ytr)[1], 1, -1)
        return Xtr[idx], s_, Xte, t_
    return make


def cancer_gurobi_rows(rates, seeds):
    """Breast cancer at l = 60: 30 + 1 + 2 l = 151 variables, within Gurobi's licence, so
    every seed is solved to optimality."""
    return accuracy_table("breast cancer, l = 60 (gurobi)", cancer(60), rates, seeds, 1.0,
                          "gurobi", 120)


def only_cancer_gurobi(path: Path) -> int:
    """``--only cancer-gurobi``: that table's rows (10 seeds, 5/10/20%) into ``path``,
    replacing the earlier ones, the rest of the file kept; a line says when they were made."""
    rows = cancer_gurobi_rows((0.05, 0.1, 0.2), range(10))
    lines = [ln for ln in path.read_text().splitlines()
             if not ln.startswith(("| breast cancer, l = 60 (gurobi)", "Rows `breast cancer, l = 60"))]
    at = max(i for i, ln in enumerate(lines) if ln.startswith("| 2 clouds")) + 1
    lines[at:at] = rows
    head = next(i for i, ln in enumerate(lines) if ln.startswith("Produced by")) + 1
    lines[head:head] = ["", f"Rows `breast cancer, l = 60 (gurobi)`: `benchmarks/mip.py --only "
                        f"cancer-gurobi` on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC."]
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(rows))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["cancer-gurobi"], default=None,
                    help="recompute one table's rows into the existing mip_results.md")
    ap.add_argument("--scip-seeds", type=int, default=None,
                    help="seeds for the solves beyond Gurobi's licence (SCIP; default: all)")
    ap.add_argument("--deadline", default=None,
                    help="HH:MM UTC: start no solve that could end after it")
    args = ap.parse_args(argv)
    if args.only == "cancer-gurobi":
        return only_cancer_gurobi(HERE / "mip_results.md")
    global DEADLINE
    DEADLINE = None if args.deadline is None else until(args.deadline)
    quick = args.quick
    seeds = range(3) if quick else range(10)
    timing_seeds = range(2) if quick else range(5)
    cut = args.scip_seeds
    scip_seeds = seeds if cut is None else range(min(cut, len(seeds)))
    scip_timing = timing_seeds if cut is None else range(min(cut, len(timing_seeds)))
    rates = (0.05, 0.2) if quick else (0.05, 0.1, 0.2)
    flags = (" --quick" if quick else "") + (f" --scip-seeds {cut}" if cut is not None else "") \
        + (f" --deadline {args.deadline}" if args.deadline else "")
    out = [f"# Mixed-integer SVMs: results ({'quick' if quick else 'full'} run, "
           f"{len(seeds)} seeds" + (f"; {len(scip_seeds)} for the SCIP solves" if cut is not None
                                    else "") + ")", "",
           f"Produced by `benchmarks/mip.py{flags}` on "
           f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC. C = 1. Every MIP solve is "
           "warm-started by the rounded hinge-loss solution (`extra[\"warm_start\"]`). The "
           "last column of each table: the seeds actually run"
           + (" (fewer where the deadline came first)" if args.deadline else "") + ".", ""]

    out += ["## Flipped labels: test accuracy (clean test labels)", "",
            "Ramp loss (`ramp_loss_primal`, Gurobi within its licence, else SCIP with a time "
            "limit: the incumbent), hinge loss (`soft_l1_primal`, Clarabel), scikit-learn "
            "`SVC(kernel='linear')`; mean ± std over the seeds; the last columns: ramp-loss "
            "solves stopped by the time limit, the largest gap.", "",
            "| data | flipped | ramp loss | hinge loss | SVC | time limit hit | max gap | seeds |",
            "|---|---|---|---|---|---|---|---|"]
    l2 = 40 if quick else 60

    def make_clouds(s):
        X, y = clouds(l2 + 500, s)
        return X[:l2], y[:l2], X[l2:], y[l2:]

    out += accuracy_table(f"2 clouds, l = {l2}", make_clouds, rates, seeds, 1.0, "gurobi", 60)
    out += cancer_gurobi_rows(rates, seeds)
    if not quick:   # beyond Gurobi's licence: SCIP, its incumbents at the time limit
        out += accuracy_table("breast cancer, l = 120 (scip)", cancer(120), rates, scip_seeds,
                              1.0, "scip", 120)
    out += ["", "## Time to optimality of the ramp loss against l", "",
            "Two clouds, d = 2, 10% flipped, C = 1; Gurobi while `d + 1 + 2 l <= 200` (its pip "
            "licence), SCIP beyond; a 120 s limit (the time includes the warm start's convex "
            "solve). `start/final`: the warm start's objective over the one returned (median).",
            "", "| l | solver | median s | max s | optimal | max gap | start/final | seeds |",
            "|---|---|---|---|---|---|---|---|"]
    out += timing_table((20, 40, 80) if quick else (20, 40, 60, 80, 120, 160),
                        timing_seeds, scip_timing, 1.0)
    out += ["", "## Feature selection against RFE at equal k", "",
            "120 training points, 10 features of which 3 matter, 400 test points; "
            "`feature_selection` (norm l1, HiGHS) vs scikit-learn `RFE(LinearSVC)`; "
            "test accuracy, mean ± std.", "",
            "| k | feature_selection | RFE (LinearSVC) | MIP median s | seeds |",
            "|---|---|---|---|---|"]
    out += feature_table((1, 2, 3, 5), seeds, 1.0)
    text = "\n".join(out) + "\n"
    (HERE / "mip_results.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

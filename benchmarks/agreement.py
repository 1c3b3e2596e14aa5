"""Random valid 1-norm soft-margin duals, every backend against libsvm: how many are answered,
and how many of those agree with libsvm's optimum.

Not a timed test: a count. Each problem is drawn from a seed (:func:`valid_problem`): 4-120
points, features of scale 1e-4 to 1e4, sometimes an offset, a feature scaled by 1e6,
duplicated points, a constant feature, string labels; linear, rbf and poly kernels; C from
1e-4 to 1e6 (and now and then ``math.inf``). The reference is scikit-learn's ``SVC`` (libsvm)
at ``tol=1e-10`` on the same kernel matrix. A backend's answer agrees when

* its own certificate, recomputed here by brute force at the classifier it returns (the
  returned ``alpha``, ``dual_coef`` and ``b``: primal objective of that decision function
  against the dual objective of that alpha), is within 1e-6 relative, and
* its dual objective is no lower than libsvm's beyond 1e-6 relative (libsvm stops at its own
  tolerance, so it may be a little lower; never higher than the optimum).

With ``--formulation`` (``soft_l1_primal``, ``soft_l2_dual``, ``hard_primal``, ...) the same
problems go to another classic SVM: libsvm's optimum is then a reference only for the 1-norm
soft margin, and the certificate alone decides (a relative gap of 1e-6 at a feasible alpha
puts both objectives within 1e-6 of the optimum).

``python benchmarks/agreement.py --problems 100 --solvers piqp,clarabel`` prints a table of
counts per backend (answered, agreed, refused by capability or licence or because the problem
has no solution, failed, "libsvm too" -- a typed failure where libsvm's own classifier is not
optimal either: its brute-force gap beyond ``NO_REFERENCE`` --, wrong) and
writes ``benchmarks/agreement_results.json``. The same generator feeds ``make fuzz``
(``tests/test_fuzz.py``).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sys
import time
import warnings

import numpy as np

SOLVERS = ("ipopt", "gurobi", "highs", "scip", "piqp", "clarabel", "ipm", "libsvm", "auto")

#: the agreement tolerance (relative)
REL = 1e-6
#: libsvm's own classifier with a brute-force relative gap beyond this is no reference
NO_REFERENCE = 1e-3


def valid_problem(seed: int, max_points: int = 120) -> dict:
    """A random valid 1-norm soft-margin problem: ``{"X", "y", "params", "what"}``."""
    rng = np.random.default_rng(seed)
    l = int(rng.integers(4, max_points + 1))
    d = int(rng.integers(1, 7))
    what = []
    if rng.random() < 0.5:
        centers = rng.normal(size=(2, d)) * rng.uniform(0.5, 3)
        lab = rng.integers(0, 2, size=l)
        lab[:2] = [0, 1]
        X = centers[lab] + rng.normal(size=(l, d))
    else:
        X = rng.normal(size=(l, d))
        w = rng.normal(size=d)
        lab = (X @ w + 0.5 * rng.normal(size=l) > 0).astype(int)
        lab[:2] = [0, 1]
    scale = 10.0 ** rng.uniform(-4, 4)
    X = X * scale
    what.append(f"scale {scale:.1e}")
    if rng.random() < 0.3:
        off = 10.0 ** rng.uniform(-2, 4) * scale * rng.choice([-1, 1])
        X = X + off
        what.append(f"offset {off:.1e}")
    if d > 1 and rng.random() < 0.2:
        X[:, 0] *= 1e6
        what.append("a feature x1e6")
    if rng.random() < 0.2:
        k = int(rng.integers(1, max(2, l // 4)))
        src = rng.integers(0, l, size=k)
        X = np.vstack([X, X[src]])
        lab = np.concatenate([lab, lab[src]])
        what.append(f"{k} duplicates")
    if rng.random() < 0.15:
        X = np.hstack([X, np.full((X.shape[0], 1), rng.normal() * scale)])
        what.append("a constant feature")
    labels = np.array(["no", "yes"])[lab] if rng.random() < 0.3 else lab * 2 - 1
    kernel = str(rng.choice(["linear", "rbf", "poly"]))
    params: dict = {"kernel": kernel}
    if kernel != "linear":
        params["gamma"] = "scale" if rng.random() < 0.6 else float(rng.choice([0.1, 1.0, 10.0]))
    if kernel == "poly":
        params["degree"] = int(rng.choice([2, 3]))
        params["coef0"] = float(rng.choice([0.0, 1.0]))
    params["C"] = math.inf if rng.random() < 0.05 else float(10.0 ** rng.uniform(-4, 6))
    return {"X": X, "y": labels, "params": params, "what": ", ".join(what)}


def libsvm_reference(X, y, params):
    """(alpha, dual objective, K, signed labels, exact features or None) of libsvm on the same
    kernel matrix."""
    from sklearn.svm import SVC

    from svm_models.kernels import make_kernel

    kern = make_kernel(params.get("kernel", "linear"), gamma=params.get("gamma", "scale"),
                       degree=params.get("degree", 3), coef0=params.get("coef0", 0.0), X=X)
    K = kern.gram(X)
    classes = np.unique(y)
    yy = np.where(y == classes[1], 1.0, -1.0)
    C = params["C"]
    # libsvm's stopping rule is absolute: solved on K / k with C k (k the mean of K's
    # diagonal; the same SVM, alpha scaled by k), else it stops far from the optimum on
    # kernels of scale 1e7
    k = float(np.mean(np.diag(K))) or 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = SVC(C=C * k if math.isfinite(C) else 1e300, kernel="precomputed", tol=1e-10,
                  max_iter=10**7).fit(K / k, yy)
    a = np.zeros(len(yy))
    a[ref.support_] = np.abs(ref.dual_coef_[0]) / k
    Phi = explicit_features(X, kern)
    return a, dual_value(a, yy, K, Phi), K, yy, Phi, _reference_gap(ref, a, yy, K, C, Phi)


def _reference_gap(ref, a, yy, K, C, Phi) -> float:
    """The brute-force relative duality gap of libsvm's own classifier (its alpha and
    intercept): where it is far from 0, libsvm did not reach an optimum either and the
    problem has no reference."""
    from types import SimpleNamespace

    if not np.all(np.isfinite(a)) or not np.all(np.isfinite(ref.intercept_)):
        return math.inf
    own = SimpleNamespace(alpha=a, dual_coef=yy * a, b=float(ref.intercept_[0]), w=None)
    return abs(certificate(own, K, yy, C, Phi)["gap"])


def explicit_features(X, kern):
    """The exact features of the linear kernel (``X``) and of a poly kernel with ``coef0 >= 0``
    (its monomials, written here independently of the library), else None: with them the
    certificate computes ``v'Kv`` as ``|Phi'v|^2`` (a poly Gram matrix of entries 1e7,
    evaluated entry by entry, is indefinite at its round-off)."""
    import itertools

    if kern.name == "linear":
        return np.asarray(X, dtype=float)
    if kern.name != "poly" or kern.coef0 < 0:
        return None
    U = math.sqrt(kern.gamma) * np.asarray(X, dtype=float)
    if kern.coef0 > 0:
        U = np.hstack([U, np.full((len(U), 1), math.sqrt(kern.coef0))])
    cols = []
    for a in itertools.combinations_with_replacement(range(U.shape[1]), kern.degree):
        mult = math.factorial(kern.degree)
        for j in set(a):
            mult //= math.factorial(a.count(j))
        cols.append(math.sqrt(mult) * np.prod(U[:, list(a)], axis=1))
    return np.column_stack(cols)


def dual_value(a, yy, K, X=None) -> float:
    """``e'a - 1/2 v'Kv`` (v = y*a); with the kernel's exact features X (:func:`explicit_features`),
    ``v'Kv = |X'v|^2``: a Gram matrix of data far from the origin (entries 1e13) cannot hold
    v'Kv to 1e-6."""
    v = yy * a
    if X is not None:
        w = X.T @ v
        return float(a.sum() - 0.5 * w @ w)
    return float(a.sum() - 0.5 * v @ K @ v)


def certificate(sol, K, yy, C, X=None, family: str = "soft_l1") -> dict:
    """The certificate of exactly the classifier ``sol`` returns, recomputed by brute force
    (``X`` given: the kernel's exact features, computed through w = X'dual_coef instead of
    K), for the 1-norm soft margin or (``family``) the 2-norm one (slacks squared, the dual
    with ``-|alpha|^2 / 2C``) or the hard margin (no slack: the largest shortfall is
    ``hard_violation``)."""
    if family == "hard":
        C = math.inf
    a = np.asarray(sol.alpha, dtype=float)
    dc = np.asarray(sol.dual_coef, dtype=float)
    own_w = getattr(sol, "w", None) is not None   # the linear kernel's classifier is w, b
    if X is not None:                             # (Solution.decision_function)
        w = np.asarray(sol.w, dtype=float) if own_w else X.T @ dc
        f = X @ w + sol.b
    else:
        f = K @ dc + sol.b
    # a margin shortfall within the round-off of computing y_i f(x_i) is not a slack (the
    # library's rule, svm_models.tolerances.CERT_ROUNDOFF: at C = 1e12 a shortfall of 1e-12
    # costs 1)
    eps = np.finfo(float).eps
    if X is not None:   # f = X w + b: the round-off of a d-term dot product
        size = (np.abs(X) @ np.abs(w) if own_w    # (w as returned: each product's own size)
                else np.linalg.norm(X, axis=1) * np.linalg.norm(w))
        roundoff = 8 * eps * np.sqrt(X.shape[1]) * (size + abs(sol.b) + 1)
    else:
        rd = np.sqrt(np.maximum(np.diag(K), 0.0))
        roundoff = 8 * eps * np.sqrt(len(yy)) * (rd * (rd @ np.abs(dc)) + abs(sol.b) + 1)
    xi = np.maximum(0.0, 1.0 - yy * f - roundoff)
    pen = 0.0 if not math.isfinite(C) else (C * xi.sum() if family != "soft_l2"
                                            else 0.5 * C * (xi @ xi))
    hard_violation = float(xi.max()) if not math.isfinite(C) else 0.0
    primal = 0.5 * (w @ w if X is not None else dc @ K @ dc) + pen
    dual = dual_value(a, yy, K, X) - (0.5 * (a @ a) / C if family == "soft_l2" else 0.0)
    return {"primal": float(primal), "dual": dual,
            "gap": float((primal - dual) / max(abs(primal), abs(dual), 1e-300)),
            "coef_matches_alpha": bool(np.allclose(dc, yy * a, rtol=0, atol=0)),
            "box": float(max(-a.min(), (a.max() - C) if math.isfinite(C) and family == "soft_l1"
                             else 0.0) / max(a.max(), 1e-300)),
            "balance": float(abs(yy @ a) / max(a.sum(), 1e-300)),
            "hard_violation": hard_violation}


@functools.lru_cache(maxsize=4)
def _reference_of(seed: int, max_points: int, hard: bool):
    """:func:`libsvm_reference` of problem ``seed`` (at C = 1 for a ``hard`` margin; computed
    once per process: every backend is compared with the same reference, and libsvm at tol
    1e-10 can take 25 s on one)."""
    p = valid_problem(seed, max_points)
    params = {k: v for k, v in p["params"].items() if not (hard and k == "C")}
    return libsvm_reference(p["X"], p["y"], {"C": 1.0, **params})


def run_one(seed: int, solver: str, time_limit: float, max_points: int = 120,
            formulation: str = "soft_l1_dual") -> dict:
    """One problem on one backend. ``formulation``: any classic SVM; libsvm's optimum is the
    reference of the 1-norm soft margin, the others are decided by the certificate alone
    (a gap of 1e-6 at a feasible alpha proves both objectives within 1e-6 of the optimum)."""
    import svm_models as sm

    p = valid_problem(seed, max_points)
    X, y, params = p["X"], p["y"], dict(p["params"])
    family = formulation.rsplit("_", 1)[0]
    if family == "hard":
        params.pop("C")
    out = {"seed": seed, "solver": solver, "formulation": formulation, "what": p["what"],
           "l": len(y), **{k: (v if not isinstance(v, float) or math.isfinite(v) else "inf")
                           for k, v in params.items()}}
    try:
        ref_a, ref_dual, K, yy, Phi, ref_gap = _reference_of(seed, max_points, family == "hard")
    except Exception as exc:    # noqa: BLE001  (no reference: not counted)
        out["outcome"] = f"no reference: {type(exc).__name__}"
        return out
    out["ref_gap"] = ref_gap
    if family != "soft_l1":
        ref_dual = -math.inf
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = sm.fit(X, y, formulation=formulation, solver=solver, time_limit=time_limit,
                         **params)
    except (sm.CapabilityError, sm.LicenseLimitError, sm.NotSeparableError) as exc:
        # (NotSeparableError: C = inf on data no hyperplane separates -- no solution)
        out["outcome"] = "refused"
        out["error"] = f"{type(exc).__name__}: {str(exc)[:160]}"
        return out
    except Exception as exc:    # noqa: BLE001
        # a typed failure where libsvm's own classifier is far from optimal too (a relative
        # gap beyond NO_REFERENCE): counted apart, as "libsvm too"
        out["outcome"] = "libsvm too" if ref_gap > NO_REFERENCE else "failed"
        out["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        out["time"] = time.perf_counter() - t0
        return out
    out["time"] = time.perf_counter() - t0
    cert = certificate(sol, K, yy, params.get("C", math.inf), Phi, family)
    out.update(cert)
    out["ref_dual"] = ref_dual
    ok = (abs(cert["gap"]) <= REL and cert["coef_matches_alpha"] and cert["box"] <= REL
          and cert["balance"] <= REL and cert["hard_violation"] <= 1e-6
          and (not math.isfinite(ref_dual)
               or cert["dual"] >= ref_dual - REL * max(abs(ref_dual), 1e-300)))
    out["outcome"] = "agreed" if ok else "wrong"
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", type=int, default=100)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--solvers", default=",".join(SOLVERS))
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--formulation", default="soft_l1_dual",
                    help="a classic SVM (hard_, soft_l1_, soft_l2_ primal or dual)")
    ap.add_argument("-o", "--output", default=os.path.join(os.path.dirname(__file__),
                                                           "agreement_results.json"))
    args = ap.parse_args(argv)
    solvers = [s for s in args.solvers.split(",") if s]
    tasks = [(seed, s, args.time_limit, 120, args.formulation) for seed in range(args.first, args.first + args.problems)
             for s in solvers]
    from concurrent.futures import ProcessPoolExecutor

    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as ex:
        rows = list(ex.map(_star, tasks, chunksize=1))
    table = {}
    for r in rows:
        c = table.setdefault(r["solver"], {"problems": 0, "agreed": 0, "refused": 0, "failed": 0,
                                           "libsvm too": 0, "wrong": 0})
        c["problems"] += 1
        if r["outcome"] in c:
            c[r["outcome"]] += 1
    print(f"{'solver':10s} {'problems':>8s} {'agreed':>7s} {'refused':>8s} {'failed':>7s} "
          f"{'libsvm too':>10s} {'wrong':>6s}")
    for s, c in table.items():
        print(f"{s:10s} {c['problems']:8d} {c['agreed']:7d} {c['refused']:8d} {c['failed']:7d} "
              f"{c['libsvm too']:10d} {c['wrong']:6d}")
    print(f"({time.perf_counter() - t0:.0f} s)")
    with open(args.output, "w") as fh:
        json.dump({"table": table, "rows": rows, "args": vars(args)}, fh, indent=1, default=str)
    return 0


def _star(t):
    return run_one(*t)


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    raise SystemExit(main())

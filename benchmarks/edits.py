"""Edits and compositions at full speed (issue 28): each edit kind on the rbf 1-norm dual
against the unedited fast path, and the same optimum as the general path, in one run.
Not part of the test suite.

    python benchmarks/edits.py                    # l = 2000, PIQP, every edit kind
    python benchmarks/edits.py --l 1000 --solver clarabel --no-general

Edit kinds (each on a fresh build of ``soft_l1_dual``, rbf, ``gamma = 1/20``, C = 1, data
``make_classification(l, 20 features, random_state=0)``):

* ``row``: a user's row, ``sum of ten alphas <= 0.5`` (the issue's example);
* ``deactivate``: the balance row ``y'alpha = 0`` deactivated (the MO-book's edit);
* ``fix``: one alpha fixed at 0.2;
* ``objective``: a term added to the objective, ``- 0.1 * sum of five alphas``;
* ``block``: the SVM in a block of a larger model with a variable of its own, linked to the
  SVM (``t >= alpha_0 + alpha_1 - 0.3``) and priced in the objective (``- (t - 1)^2``).

Each time is the best of ``--repeat`` runs of ``svm_models.solve`` (build not timed; the
kernel matrix is computed inside the solve on both paths). The general path (the whole Pyomo
model read term by term) is solved once per edit with the same backend, for its optimum.
Results: ``benchmarks/edits_results.md``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _edit_row(m, blk):
    import pyomo.environ as pyo

    blk.extra = pyo.Constraint(expr=sum(blk.alpha[i] for i in range(10)) <= 0.5)


def _edit_deactivate(m, blk):
    blk.balance.deactivate()


def _edit_fix(m, blk):
    blk.alpha[3].fix(0.2)


def _edit_objective(m, blk):
    blk.objective.expr = blk.objective.expr - 0.1 * sum(blk.alpha[i] for i in range(5))


def _edit_block(m, blk):
    import pyomo.environ as pyo

    m.t = pyo.Var(bounds=(-10, 10))
    m.link = pyo.Constraint(expr=m.t >= blk.alpha[0] + blk.alpha[1] - 0.3)
    blk.objective.deactivate()
    m.obj = pyo.Objective(expr=blk.objective.expr - (m.t - 1.0) ** 2, sense=pyo.maximize)


EDITS = {"row": _edit_row, "deactivate": _edit_deactivate, "fix": _edit_fix,
         "objective": _edit_objective, "block": _edit_block}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--l", type=int, default=2000)
    ap.add_argument("--solver", default="piqp")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-general", action="store_true", help="skip the general-path optima")
    ap.add_argument("--out", default=os.path.join(HERE, "edits_results.md"))
    args = ap.parse_args(argv)
    import pyomo.environ as pyo
    from sklearn.datasets import make_classification

    import svm_models as sm

    warnings.simplefilter("ignore")
    X, y = make_classification(args.l, 20, random_state=0)
    kw = dict(C=1.0, kernel="rbf", gamma=1.0 / 20)

    def build(edit=None):
        if edit == "block":
            m = pyo.ConcreteModel()
            m.svm = sm.SVMBlock()
            m.svm.build("soft_l1_dual", X, y, **kw)
            blk = m.svm
        else:
            m = blk = sm.build("soft_l1_dual", X, y, **kw)
        if edit is not None:
            EDITS[edit](m, blk)
        return m

    def timed(edit, path="auto"):
        best, sol = np.inf, None
        for _ in range(1 if path == "general" else args.repeat):
            m = build(edit)
            t0 = time.perf_counter()
            sol = sm.solve(m, args.solver, path=path, time_limit=600)
            best = min(best, time.perf_counter() - t0)
        return best, sol

    t_fast, fast = timed(None)
    rows = []
    print(f"unedited: {t_fast:.3f} s ({fast.path})")
    for edit in EDITS:
        t, sol = timed(edit)
        gen_t = gen_obj = None
        if not args.no_general:
            gen_t, gen = timed(edit, "general")
            gen_obj = gen.objective
        rel = (abs(sol.objective - gen_obj) / max(1.0, abs(gen_obj))
               if gen_obj is not None else None)
        rows.append((edit, t, t / t_fast, sol.path, sol.objective, gen_t, rel))
        print(f"{edit:11s} {t:7.3f} s  {t / t_fast:5.2f}x  path={sol.path}  "
              f"objective={sol.objective:.10g}"
              + ("" if gen_t is None else f"  general: {gen_t:.1f} s, rel. diff {rel:.1e}"))
    lines = [
        "# Edits and compositions at full speed (issue 28)",
        "",
        f"`python benchmarks/edits.py --l {args.l} --solver {args.solver}`: the rbf 1-norm dual "
        f"(l = {args.l}, 20 features, gamma = 1/20, C = 1), best of {args.repeat} solves "
        f"(build not timed). Unedited (fast path): **{t_fast:.3f} s**. Target: every edit "
        "within 1.3x of it, with the general path's optimum.",
        "",
        "| edit | time (s) | vs unedited | path | objective | general path (s) | rel. diff of optima |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for edit, t, ratio, path, obj, gen_t, rel in rows:
        lines.append(f"| {edit} | {t:.3f} | {ratio:.2f}x | {path} | {obj:.10g} | "
                     f"{'-' if gen_t is None else f'{gen_t:.1f}'} | "
                     f"{'-' if rel is None else f'{rel:.1e}'} |")
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

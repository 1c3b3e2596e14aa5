"""Peak memory and time of one fit (issue 48): ``SVMClassifier(kernel="rbf")`` (its default
solver, "auto": libsvm) against scikit-learn's ``SVC`` on
``make_classification(l, 20, random_state=0)``, C = 1, ``gamma="scale"``. Each fit runs in a
fresh process of its own (``--one``), which reports its time and its peak resident set
(``VmHWM``, the whole process: what a user's process needs for the fit, the interpreter and
its imports included; the RSS after the data are made is given beside it). Not part of the
test suite.

    python benchmarks/svc_memory.py --sizes 50000            # both, one after the other
    python benchmarks/svc_memory.py --sizes 100000 --which svc
    python benchmarks/svc_memory.py --one ours 10000         # one fit, printed as JSON

Results are appended to ``benchmarks/svc_results.md`` (``--out``) as a section with the
date, the commit, the machine's load and thread settings (:mod:`conditions`), the earlier
sections kept.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from conditions import machine  # noqa: E402
from memory import hwm_bytes, reset_hwm, rss_bytes  # noqa: E402


def one(which: str, l: int) -> dict:
    """Fit once in this process: time, peak RSS, RSS before the fit, support vectors."""
    from sklearn.datasets import make_classification

    warnings.simplefilter("ignore")
    if which == "ours":
        import svm_models as sm
        make = lambda: sm.SVMClassifier(kernel="rbf", C=1.0)   # noqa: E731
    else:
        from sklearn.svm import SVC
        make = lambda: SVC(C=1.0, gamma="scale")   # noqa: E731
    X, y = make_classification(l, 20, random_state=0)
    start = rss_bytes()
    reset_hwm()
    t0 = time.perf_counter()
    clf = make().fit(X, y)
    seconds = time.perf_counter() - t0
    out = {"which": which, "l": l, "seconds": seconds, "peak_mb": hwm_bytes() / 1e6,
           "start_mb": start / 1e6, "n_sv": int(len(clf.support_))}
    if which == "ours":
        cert = clf.solution_.extra.get("certificate", {})
        out.update(solver=clf.solution_.solver, classifier=cert.get("classifier"),
                   worst=cert.get("worst"), certified=cert.get("certified"))
    return out


def run(which: str, l: int) -> tuple:
    """``one(which, l)`` in a fresh process, with the machine's state before and after."""
    before = machine()
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", which, str(l)],
                          capture_output=True, text=True, check=True)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    return res, before, machine(busy=False)


def write_section(path: str, rows: list, argv: list) -> None:
    from conditions import commit as commit_of

    import svm_models
    lib = commit_of(os.path.dirname(os.path.abspath(svm_models.__file__)))
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with open(path, "a") as fh:
        fh.write(f"\n## Peak memory, run of {now}\n\ncommit {commit_of(HERE)} (svm_models "
                 f"measured: {lib}), {os.cpu_count()} CPUs, `python benchmarks/svc_memory.py "
                 f"{' '.join(argv)}`: one fit per process, rbf, C = 1, `gamma=\"scale\"`, "
                 "`make_classification(l, 20, random_state=0)`; peak = the process's VmHWM "
                 "(interpreter and imports included)\n\n"
                 "| data | fit | time (s) | peak RSS (MB) | RSS before the fit (MB) | support "
                 "vectors | certificate | load (1 min) before / after | BLAS threads | other "
                 "processes busy |\n|---|---|---|---|---|---|---|---|---|---|\n")
        for res, before, after in rows:
            cert = ("-" if res["which"] != "ours" else
                    f"{res['solver']}: {res['classifier']}, worst {res['worst']:.1e}, "
                    f"certified {res['certified']}")
            name = "SVC()" if res["which"] == "svc" else "SVMClassifier(kernel=\"rbf\")"
            fh.write(f"| l = {res['l']} | {name} | {res['seconds']:.1f} | {res['peak_mb']:.0f} "
                     f"| {res['start_mb']:.0f} | {res['n_sv']} | {cert} | {before['load']:.2f} "
                     f"/ {after['load']:.2f} | {before['threads']} | {before['busy']} |\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[50000])
    ap.add_argument("--which", nargs="*", default=["svc", "ours"], choices=["svc", "ours"])
    ap.add_argument("--one", nargs=2, metavar=("WHICH", "L"), help=argparse.SUPPRESS)
    ap.add_argument("--out", default=os.path.join(HERE, "svc_results.md"))
    argv = sys.argv[1:] if argv is None else list(argv)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]))), flush=True)
        return 0
    import numpy  # noqa: F401  (the thread pools the fits' processes load, seen by machine())
    import sklearn.svm  # noqa: F401

    rows = []
    for l in args.sizes:
        for which in args.which:
            rows.append(run(which, l))
            print(json.dumps(rows[-1][0]), f"load {rows[-1][1]['load']:.2f} -> "
                  f"{rows[-1][2]['load']:.2f}, busy: {rows[-1][1]['busy']}", flush=True)
    write_section(args.out, rows, argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

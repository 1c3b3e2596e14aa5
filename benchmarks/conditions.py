"""The machine's conditions while a benchmark measures, recorded with its figures (every
benchmark whose figures the README states imports this): the load average, the BLAS and
OpenMP thread pools, the thread variables of the environment, and the other processes that
were busy. Users' machines are busy; a figure without these cannot be compared.

    from conditions import machine, describe
    before = machine(); ...measure...; after = machine(busy=False)
    describe(before, after)  # "load 1.02 -> 1.10; threads: openblas 2 (pthreads), ...; busy: none"
"""

from __future__ import annotations

import os
import subprocess
import time

#: the environment variables that set thread counts (recorded as given, "unset" otherwise)
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def blas_threads() -> str:
    """The thread pools as threadpoolctl sees them: "openblas 2 (pthreads), openmp 2"."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (no threadpoolctl)"
    seen = []
    for pool in threadpool_info():
        layer = f" ({pool['threading_layer']})" if pool.get("threading_layer") else ""
        item = f"{pool.get('internal_api', pool['user_api'])} {pool['num_threads']}{layer}"
        if item not in seen:
            seen.append(item)
    return ", ".join(seen) or "none loaded"


def thread_variables() -> str:
    """``OMP_NUM_THREADS=unset; OPENBLAS_NUM_THREADS=1; ...``"""
    return "; ".join(f"{v}={os.environ.get(v, 'unset')}" for v in THREAD_VARS)


def busy_others(interval: float = 0.5, threshold: float = 0.5) -> str:
    """Other processes using more than ``threshold`` of a core over ``interval`` seconds, as
    "name (pid) 98%" ("none"; "unknown" without psutil)."""
    try:
        import psutil
    except ImportError:
        return "unknown"
    own = {os.getpid()} | {c.pid for c in psutil.Process().children(recursive=True)}
    procs = [p for p in psutil.process_iter(["name"]) if p.pid not in own]
    for p in procs:
        try:
            p.cpu_percent(None)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    time.sleep(interval)
    busy = []
    for p in procs:
        try:
            pct = p.cpu_percent(None)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if pct > 100 * threshold:
            name = (p.info["name"] or "?").replace("|", "/")   # (a cell of a table)
            busy.append(f"{name} ({p.pid}) {pct:.0f}%")
    return "; ".join(busy) or "none"


def machine(busy: bool = True) -> dict:
    """The machine's state now: load average (1 min), thread pools, thread variables, busy
    processes (sampled for 0.5 s; ``busy=False`` skips it)."""
    return {"load": round(os.getloadavg()[0], 2), "threads": blas_threads(),
            "thread_vars": thread_variables(), "busy": busy_others() if busy else "not sampled"}


def describe(before: dict, after: dict | None = None) -> str:
    """One line for a results file: load before -> after, threads, variables, busy."""
    load = f"load {before['load']:.2f}" + (f" -> {after['load']:.2f}" if after else "")
    return (f"{load}; threads: {before['threads']} ({before['thread_vars']}); "
            f"other processes busy: {before['busy']}")


def commit(here: str) -> str:
    """The short hash of the checkout holding ``here`` ("unknown" outside git)."""
    try:
        return subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"

"""How many BLAS threads the library's own linear algebra uses: the number that pays at its
size, never more than the machine has free (threadpoolctl, which comes with scikit-learn).

The library's own work around a solve -- the kernel matrix, the polish's free system, the
certificate's kernel products -- is mostly products bound by memory, not arithmetic. On a
machine with other busy processes OpenBLAS's threads then fight for the cores: an rbf fit at
l = 2,000 on 2 cores beside three other busy processes took 0.94-1.02 s with OpenBLAS's
default 2 threads and 0.47-0.69 s with one (``benchmarks/svc.py``; SVC took 0.29-0.50 s).
Below :data:`ONE_THREAD_BELOW` points the library runs one BLAS thread; above, as many as
there are cores free of load (the 1-minute load average, this process's own share counted as
other load: the average lags by a minute, and a fit started beside a busy process would
otherwise take that process's core for its own), at most the number the process already
allows (a user's ``OPENBLAS_NUM_THREADS`` or ``threadpool_limits`` stays in force).
"""

from __future__ import annotations

import contextlib
import os

#: below this many points the library's linear algebra runs on one BLAS thread. Measured
#: (2 cores, rbf, ``SVMClassifier().fit``, 2026-11-28): a second thread gains nothing at
#: l = 5,000 (0.133 s against 0.134 s) and 20,000 (6.12 s against 6.02 s) and 4% at 50,000
#: (20.5 s against 21.3 s) on a quiet machine, and costs 25-40% beside one busy process at
#: 5,000 (0.18-0.19 s against 0.14 s: the two threads fight the other process for a core)
ONE_THREAD_BELOW = 50_000


def blas_threads_for(n_points: int) -> int:
    """The BLAS threads that pay for a problem of ``n_points`` on this machine now."""
    if n_points < ONE_THREAD_BELOW:
        return 1
    cores = os.cpu_count() or 1
    try:   # (this process's own share included: see the module's note)
        others = max(0.0, os.getloadavg()[0])
    except (AttributeError, OSError):
        others = 0.0
    return max(1, min(cores, int(cores - others + 0.5)))


_CONTROLLER = None


def _controller():
    """threadpoolctl's controller of the BLAS libraries loaded now (numpy's and scipy's:
    the library's own linear algebra), made once -- scanning the loaded libraries costs
    milliseconds, limiting them through it 0.2 ms. None without threadpoolctl."""
    global _CONTROLLER
    if _CONTROLLER is None:
        try:
            import scipy.linalg  # noqa: F401  (its BLAS loaded before the scan)
            from threadpoolctl import ThreadpoolController
        except ImportError:   # (scikit-learn brings it; without it, BLAS as it is)
            return None
        _CONTROLLER = ThreadpoolController().select(user_api="blas")
    return _CONTROLLER


def library_threads(n_points: int):
    """A context in which the library's BLAS uses at most :func:`blas_threads_for` threads
    (never more than it allows already)."""
    ctl = _controller()
    now = max((lib.num_threads for lib in ctl.lib_controllers), default=None) if ctl else None
    if now is None:
        return contextlib.nullcontext()
    n = min(blas_threads_for(n_points), now)
    return contextlib.nullcontext() if n == now else ctl.limit(limits=n)


_ALL = (None, -1)   # (the controller of every thread pool, the modules loaded when made)


def one_thread():
    """A context in which every thread pool threadpoolctl knows (BLAS and OpenMP) runs one
    thread: cross-validation's tasks and refit, beside each other in workers. Its controller
    is made once and again only when modules were imported since (a new library may have
    come with them): ``threadpool_limits`` scans the loaded libraries on every call, 5 ms --
    1.5 s of a 14 s cross-validation of 270 small tasks (digits, one-vs-one)."""
    import sys

    global _ALL
    ctl, seen = _ALL
    if ctl is None or seen != len(sys.modules):
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            return contextlib.nullcontext()
        ctl = ThreadpoolController()
        _ALL = (ctl, len(sys.modules))
    return ctl.limit(limits=1)

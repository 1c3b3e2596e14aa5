"""SCIP: spatial branch and bound, global optima of LP/QP/QCQP/NLP (``pip install
pyscipopt``; Pyomo plugin ``scip_direct``; no matrix path).

Facts that shape how it is called:

* declaring a dual Suffix makes Pyomo's ``scip_direct`` raise NotImplementedError, and it
  reports no duals at all: the extractors recover multipliers from the KKT conditions;
* it cannot prove the dual of an inseparable hard margin unbounded (it searches on): the
  formulation checks separability by LP first;
* its feasibility tolerances are floored at 1e-9: SoPlex (its LP solver) refuses smaller
  ones without GMP and writes a warning for every LP it solves;
* Pyomo's ``scip_direct`` captures SCIP's output through a pipe read by a Python thread,
  while pyscipopt holds the GIL for the whole solve: once a log or warning stream exceeds
  the pipe's 64 KiB the solve blocks forever at 0% CPU, time limit or not. Every SCIP solve
  therefore runs with that capture replaced by one into a temporary file
  (:func:`pipe_free_capture`), which never blocks a writer; the text reaches Pyomo's streams
  (and the log, when ``verbose``) after the solve;
* with ``switch="indicator"`` a mixed-integer SVM is set on ``scip_persistent`` and its big-M
  rows are replaced by SCIP's indicator constraints (:func:`add_indicators`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile

from ..model.pyomo_compat import persistent_native, persistent_swap, scip_capture_replaced
from ..tolerances import SCIP_GAP, SCIP_TOL_FLOOR
from .base import ORDER, Backend


def _c_flush() -> None:
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def _file_capture(output=None, capture_fd=True):
    """A stand-in for ``pyomo.common.tee.capture_output`` that sends file descriptors 1 and
    2 to an unnamed temporary file, then forwards the text to ``output``'s streams."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    _c_flush()
    with tempfile.TemporaryFile() as sink:
        saved = {fd: os.dup(fd) for fd in (1, 2)}
        try:
            for fd in (1, 2):
                os.dup2(sink.fileno(), fd)
            yield
        finally:
            _c_flush()
            for fd, old in saved.items():
                os.dup2(old, fd)
                os.close(old)
        sink.seek(0)
        text = sink.read().decode("utf-8", "replace")
    streams = getattr(output, "ostreams", None) or ([output] if output is not None else [])
    for stream in streams:
        with contextlib.suppress(Exception):
            stream.write(text)
            stream.flush()


@contextlib.contextmanager
def pipe_free_capture():
    """Run a Pyomo ``scip_direct`` solve with its output captured into a file, not a pipe."""
    from ..model.lazy import teach_solvers

    teach_solvers()   # (a model built or loaded before: its lazy nodes known to SCIP)
    with scip_capture_replaced(_file_capture):
        yield


def plugin_options(plugin: str, opts) -> dict:
    tol = max(opts.tolerance, SCIP_TOL_FLOOR)
    o = {"display/verblevel": 4 if opts.verbose else 0, "limits/gap": SCIP_GAP,
         "numerics/feastol": tol, "numerics/dualfeastol": tol}
    return {**o, **opts.limits("limits/time", threads="parallel/maxnthreads")}


def mip_options(opts) -> dict:
    """A mixed-integer model: nothing to add -- the gap is already :data:`SCIP_GAP` and
    integrality is held to the feasibility tolerance (above)."""
    return {}


def add_indicators(solver, rows) -> int:
    """``switch="indicator"``: on ``scip_persistent`` set to the instance, each big-M row of
    ``rows`` replaced by SCIP's indicator constraint ``addConsIndicator(sum(coef * var) >= rhs,
    binary, activeone=on)`` on the mapped variables; every other row stays as Pyomo put it.
    Returns the number of indicator constraints added."""
    from pyscipopt import quicksum

    native, var = persistent_native(solver)
    for r in rows:
        cons = quicksum(float(c) * var[v] for v, c in r.terms) >= float(r.rhs)
        ind = native.addConsIndicator(cons, var[r.binary], activeone=bool(r.on))
        native.delCons(persistent_swap(solver, r.row, ind))
    return len(rows)


BACKEND = Backend(
    name="scip", mip_options=mip_options, classes=frozenset(ORDER), plugins=("scip_direct",), modules=("pyscipopt",),
    duals=False, global_opt=True, proves_unbounded=False, plugin_options=plugin_options,
    plugin_guard=pipe_free_capture,
    indicator_plugin="scip_persistent", add_indicators=add_indicators,
    qcqp_form="quadratic",
    install="pip install pyscipopt", note="spatial branch and bound (global); reports no duals")

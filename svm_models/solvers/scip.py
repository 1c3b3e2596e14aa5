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
  therefore runs with Pyomo's capture of the file descriptors switched off, through Pyomo's
  public switch for it (:func:`pipe_free_capture`): SCIP writes to the process's own
  descriptors, which every plugin solve sends to a temporary file
  (:func:`~svm_models.solvers.base.drained_output`) -- or, when ``verbose``, leaves on the
  terminal -- never a pipe;
* with ``switch="indicator"`` a mixed-integer SVM is set on ``scip_persistent`` and its big-M
  rows are replaced by SCIP's indicator constraints (:func:`add_indicators`).
"""

from __future__ import annotations

import contextlib

from ..model.pyomo_compat import persistent_native, persistent_swap
from ..tolerances import SCIP_GAP, SCIP_TOL_FLOOR
from .base import ORDER, Backend


@contextlib.contextmanager
def pipe_free_capture():
    """Run a Pyomo ``scip_direct`` solve with Pyomo's ``capture_output`` capturing
    ``sys.stdout``/``sys.stderr`` only, not file descriptors 1 and 2
    (``pyomo.common.tee.OVERRIDE_CAPTURE_OUTPUT``, Pyomo's documented override, set to
    ``CaptureOutputMode.DISABLE_FD_CAPTURE`` inside and restored after)."""
    from pyomo.common import tee
    from pyomo.common.enums import CaptureOutputMode

    from ..model.lazy import teach_solvers

    teach_solvers()   # (a model built or loaded before: its lazy nodes known to SCIP)
    saved = tee.OVERRIDE_CAPTURE_OUTPUT
    tee.OVERRIDE_CAPTURE_OUTPUT = CaptureOutputMode(saved & ~CaptureOutputMode.ENABLE_FD_CAPTURE)
    try:
        yield
    finally:
        tee.OVERRIDE_CAPTURE_OUTPUT = saved


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

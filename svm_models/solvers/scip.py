"""SCIP: spatial branch and bound, global optima of LP/QP/QCQP/NLP (``pip install
pyscipopt``; Pyomo plugin ``scip_direct``; matrix path through pyscipopt, :func:`solve`).

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
from typing import TYPE_CHECKING

import numpy as np

from ..model.pyomo_compat import persistent_native, persistent_swap
from ..model.standard_form import cones_as_rows
from ..status import Status
from ..tolerances import SCIP_GAP, SCIP_TOL_FLOOR
from .base import ORDER, Backend, MatrixResult

if TYPE_CHECKING:   # (pyscipopt is imported when SCIP is used)
    from pyscipopt.scip import Expr

#: a dense block's eigenvalues below this fraction of the largest in magnitude are dropped
#: (round-off of a semidefinite kernel block); one more negative than this, the block is
#: not semidefinite and goes to SCIP as its products
SCIP_FACTOR_TOL = 1e-12
#: seconds per k^3 an eigendecomposition of a dense k x k block is expected to take (about
#: 9 k^3 flops at 2e9 a second: 4.5 s at k = 1,000); a block that would not be factored
#: within the time left is not started
SCIP_FACTOR_SECONDS = 4.5e-9
#: the largest dense quadratic block ``path="auto"`` leaves to Pyomo's ``scip_direct``
#: (:func:`matrix_when`)
SCIP_MATRIX_MIN = 50
#: the most terms (row-matrix nonzeros, quadratic terms) of a model ``path="auto"`` leaves
#: to Pyomo's ``scip_direct`` (:func:`matrix_when`): its walk takes about 25 us a term on an
#: idle 2-core machine, over 100 us at load 4 (a 1-norm primal of 1,000 points, 32,000
#: terms: 0.8 s, and 4.9 s in all at a 2 s limit loaded), time its time limit does not count
#: (SCIP's limit is set before the walk); 2,500 terms take 0.06 s idle, 0.3 s loaded (a dense
#: block of 50 variables has 1,275)
SCIP_PLUGIN_TERMS = 2_500


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


#: SCIP's statuses (``Model.getStatus``) on the matrix path; the gap limit is the tolerance
#: asked for (``limits/gap``), so it ends a solve as an optimum; anything else is an error
MATRIX_STATUS = {"optimal": Status.optimal, "gaplimit": Status.optimal,
                 "infeasible": Status.infeasible, "unbounded": Status.unbounded,
                 "inforunbd": Status.infeasible_or_unbounded, "timelimit": Status.time_limit,
                 "nodelimit": Status.iteration_limit, "totalnodelimit": Status.iteration_limit,
                 "stallnodelimit": Status.iteration_limit}


def solve(sf, opts, state=None) -> MatrixResult:
    """:func:`_solve`, SCIP's own numerical trouble (:func:`_numerical`: its LP solver, data
    beyond its infinity) reported as the status ``numerical_error`` -- which ``auto`` and the
    retries follow -- not raised."""
    try:
        return _solve(sf, opts)
    except Exception as exc:   # (pyscipopt raises SCIP's own errors as Exception)
        if not _numerical(exc):
            raise
        return MatrixResult(status=Status.numerical_error, interface="pyscipopt",
                            message=f"{exc}")


def _solve(sf, opts) -> MatrixResult:
    """SCIP through pyscipopt on the library's matrices (the fast and mixed paths): LP, QP,
    SOCP and QCQP. Pyomo's ``scip_direct`` walks a dense quadratic objective term by term
    and sums the terms one by one (569 rbf points: about 4 minutes before SCIP starts); here
    the model is made in seconds, and SCIP gets its quadratic parts in the form it solves
    fastest: each dense block ``M = L L'`` (:func:`_factor`) as ``||L'x||^2`` over new
    variables ``z = L'x`` (120 rbf points: 0.9 s against more than 20 s for the same block
    as l^2/2 products), the objective's quadratic part as a row ``q(x) <= t`` with ``t``
    minimised (SCIP's objective is linear); cones as quadratic rows in squared form.
    SCIP reports no duals: the extractors recover multipliers from the KKT conditions."""
    import pyscipopt as ps
    from pyscipopt.scip import Expr, Term

    n0 = sf.n
    lifted = cones_as_rows(sf)
    model = ps.Model()
    model.hideOutput(not opts.verbose)
    x = [model.addVar(lb=float(lo) if np.isfinite(lo) else None,
                      ub=float(up) if np.isfinite(up) else None)
         for lo, up in zip(lifted.lx.tolist(), lifted.ux.tolist())]
    terms = [Term(v) for v in x]
    A = lifted.A.tocsr()
    for i in range(A.shape[0]):
        if i % 256 == 255 and opts.expired():
            model.freeProb()
            return MatrixResult(status=Status.time_limit, interface="pyscipopt", message=(
                "not started: the time limit was reached while SCIP's rows were being made"))
        lo, up = float(lifted.lA[i]), float(lifted.uA[i])
        cols = slice(A.indptr[i], A.indptr[i + 1])
        _add_row(model, Expr(dict(zip([terms[j] for j in A.indices[cols]],
                                      A.data[cols].tolist()))), lo, up)
    objective = _linear(terms, lifted.c)
    try:
        if lifted.quad:
            t = model.addVar(lb=None, ub=None, name="objective_quadratic_part")
            model.addCons(_quadratic(model, x, terms, lifted.quad, opts)
                          + Expr({Term(t): -1.0}) <= 0.0)
            objective = objective + Expr({Term(t): 1.0})
        for q in lifted.qrows:
            model.addCons(_quadratic(model, x, terms, q.quad, opts) + _linear(terms, q.linear)
                          <= float(q.upper))
    except _OutOfTime:
        model.freeProb()
        return MatrixResult(status=Status.time_limit, interface="pyscipopt", message=(
            "not started: SCIP's model (a dense block factored, its terms made) could not "
            f"be made within the time left ({opts.seconds:.3g} s)"))
    if opts.expired():   # (SCIP's presolve of a large model overruns a limit of ~0)
        model.freeProb()
        return MatrixResult(status=Status.time_limit, interface="pyscipopt", message=(
            "not started: the time limit was reached while SCIP's model was being made"))
    model.setObjective(objective, "minimize")
    for key, val in {**plugin_options("scip_direct", opts), **opts.options}.items():
        model.setParam(key, val)    # (the time limit: what is left after the build)
    model.optimize()
    code = model.getStatus()
    status = MATRIX_STATUS.get(code, Status.error)
    res = MatrixResult(status=status, message=f"scip status {code}", interface="pyscipopt")
    if status is Status.optimal and model.getNSols() > 0:
        best = model.getBestSol()
        xv = np.array([model.getSolVal(best, v) for v in x[:n0]])
        res.x = xv
        res.objective = sf.objective(xv)
        res.iterations = int(model.getNNodes())
    elif status is Status.optimal:
        res.status, res.message = Status.error, f"scip status {code} without a solution"
    model.freeProb()
    return res


def _numerical(exc: Exception) -> bool:
    """Whether ``exc`` is SCIP's own error in its LP solver or on its input data (pyscipopt
    raises them as ``Exception("SCIP: error in LP solver!")``): numerical trouble on badly
    scaled data (a feature x1e6: coefficients beyond SCIP's infinity), not a misuse -- the
    status ``numerical_error``, which ``auto`` and the retries follow, not a SolverError."""
    return str(exc).startswith(("SCIP: error in LP solver", "SCIP: error in input data"))


def explain_exception(exc, model):
    """The same numerical trouble raised through Pyomo's ``scip_direct``: the status
    ``numerical_error`` (None: anything else, a SolverError)."""
    return Status.numerical_error if _numerical(exc) else None


def matrix_when(record) -> str | None:
    """Why ``path="auto"`` gives SCIP this model through ``scip_direct`` (None: through its
    matrices, :func:`solve`): a model with a dense quadratic block (in its objective or a
    quadratic row: C tuning's) of at most :data:`SCIP_MATRIX_MIN` variables and at most
    :data:`SCIP_PLUGIN_TERMS` terms in all, which Pyomo hands over in well under a second
    and SCIP solves as products (a hard-margin rbf dual of 20 points: solved so, and not
    within 10 s factored). Beyond the block's size Pyomo's term-by-term walk grows as its
    square (200 points: 10 s; 569: 239 s) and the factored block is solved faster; beyond
    the terms, the walk -- which no time limit bounds -- is a share of the time (a 1-norm
    primal of 1,000 points: 4.9 s at a 2 s limit); without a dense block, the matrices are
    the same model, made faster (an LP of 50 points: 0.1 s against 0.26 s)."""
    _, _, quad = record.objective_parts()
    blocks = list(quad) + [b for row in record.quad_rows for b in row.quad]
    k = max((len(q.index) for q in blocks if q.base is not None), default=0)
    terms = _terms(record, blocks)
    if k == 0 or k > SCIP_MATRIX_MIN or terms > SCIP_PLUGIN_TERMS:
        return None
    return (f"scip_direct takes a model whose dense quadratic blocks have at most "
            f"{SCIP_MATRIX_MIN} variables (this one: {k}) and at most {SCIP_PLUGIN_TERMS} "
            f"terms (this one: {terms}) as fast as its matrices")


def _terms(record, blocks) -> int:
    """The terms Pyomo's ``scip_direct`` walks for a recorded model: the row matrices'
    nonzeros (rows, quadratic rows' linear parts, cones, row families' current rows) and
    the quadratic blocks' distinct products."""
    n = sum(g.A.nnz for g in record.rows) + sum(c.A.nnz for c in record.cones)
    n += sum(int(np.count_nonzero(r.linear)) for r in record.quad_rows)
    n += sum(f.size * (len(f.cols) + int(np.count_nonzero(f.fixed))) for f in record.families)
    for q in blocks:
        k = len(q.index)
        n += k * (k + 1) // 2 if q.base is not None else k
    return n


def _add_row(model, expr, lo: float, up: float) -> None:
    """``lo <= expr <= up`` (either side may be infinite)."""
    if lo == up:
        model.addCons(expr == lo)
    elif np.isfinite(lo):
        cons = model.addCons(expr >= lo)
        if np.isfinite(up):
            model.chgRhs(cons, up)
    elif np.isfinite(up):
        model.addCons(expr <= up)


def _linear(terms, coef) -> "Expr":
    from pyscipopt.scip import Expr

    nz = np.flatnonzero(coef)
    return Expr({terms[j]: float(coef[j]) for j in nz.tolist()})


class _OutOfTime(Exception):
    """The deadline passed while SCIP's model was being made."""


def _quadratic(model, x, terms, blocks, opts) -> "Expr":
    """``sum_blocks x'Mx`` as a pyscipopt expression: a diagonal block as its squares; a
    dense positive semidefinite block through its factor (:func:`_factor`),
    ``sum_k (L_k'x)^2`` with a new variable ``z_k = L_k'x`` per column (rows of k terms
    each); a dense
    block that is not (a rotated cone's 2 x 2 head) as its products."""
    from pyscipopt.scip import Expr, Term

    out = {}

    def add(key, val):
        out[key] = out.get(key, 0.0) + val

    for q in blocks:
        idx = np.asarray(q.index).tolist()
        if q.base is None:
            for i, d in zip(idx, q.diag.tolist()):
                if d:
                    add(Term(x[i], x[i]), d)
            continue
        left = opts.seconds
        if opts.expired() or (left is not None and SCIP_FACTOR_SECONDS * len(idx) ** 3 > left):
            raise _OutOfTime   # (the eigendecomposition cannot be stopped once started)
        W = np.asarray(q.matrix, dtype=float)
        L = _factor(W) if len(idx) > 2 else None
        if L is None:
            for a in range(len(idx)):
                for b in range(a, len(idx)):
                    v = W[a, b] if a == b else W[a, b] + W[b, a]
                    if v:
                        add(Term(x[idx[a]], x[idx[b]]), float(v))
            continue
        own = [terms[i] for i in idx]
        for k in range(L.shape[1]):
            if k % 64 == 0 and opts.expired():
                raise _OutOfTime
            z = model.addVar(lb=None, ub=None)
            row = dict(zip(own, L[:, k].tolist()))
            row[Term(z)] = -1.0
            model.addCons(Expr(row) == 0.0)
            add(Term(z, z), 1.0)
    return Expr(out)


def _factor(W: np.ndarray) -> np.ndarray | None:
    """``L`` (k x r) with ``W = L L'`` to round-off, from the eigenvalues of ``W`` (those
    above :data:`SCIP_FACTOR_TOL` of the largest kept: ``L = V sqrt(w)``, orthogonal
    columns -- SCIP solved 120 rbf points in 0.9 s so, and not within 5 s from a pivoted
    Cholesky factor of the same block), or None when ``W`` is not positive semidefinite (an
    eigenvalue below ``-SCIP_FACTOR_TOL`` times the largest)."""
    if not np.all(np.isfinite(W)):
        return None
    w, V = np.linalg.eigh(W)
    top = float(np.max(np.abs(w), initial=0.0))
    if top == 0.0 or w[0] < -SCIP_FACTOR_TOL * top:
        return None
    keep = w > SCIP_FACTOR_TOL * top
    return V[:, keep] * np.sqrt(w[keep])


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
    matrix=solve, matrix_when=matrix_when,
    duals=False, global_opt=True, proves_unbounded=False, plugin_options=plugin_options,
    explain_exception=explain_exception,
    plugin_guard=pipe_free_capture,
    indicator_plugin="scip_persistent", add_indicators=add_indicators,
    qcqp_form="quadratic",
    install="pip install pyscipopt", note="spatial branch and bound (global); reports no duals",
    project=True,
    # last (a spatial branch and bound), but first on a MIQP: no size limit, where Gurobi's
    # licence refuses a larger model
    auto={**{c: 90 for c in ("LP", "QP", "SOCP", "QCQP", "NLP", "MILP")}, "MIQP": 70})

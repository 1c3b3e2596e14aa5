"""The public API: build, solve, fit, extract, fit_path.

Data flows one way: data -> kernel -> formulation (a Pyomo block) -> solver -> solution.
"""

from __future__ import annotations

import sys
import time

from pyomo.common.gc_manager import PauseGC

from . import registry
from .errors import CapabilityError, ParameterError, SVMError
from .solvers import SolverOptions, backend, raise_for_status, solve_model

_SOLVE_KEYS = set(SolverOptions.__dataclass_fields__)


def formulations() -> list[str]:
    """Names of the registered formulations."""
    return registry.formulations()


def build(name: str, X, y, *, block=None, **params):
    """Build formulation ``name`` for data (X, y): a Pyomo ConcreteModel, or ``block`` filled.

    ``params`` are the formulation's hyperparameters (``C``, ``kernel``, ``gamma``,
    ``degree``, ``coef0``, ``quad_form``, ...); an unknown one is a ParameterError.
    """
    f = registry.get(name)
    unknown = set(params) - set(f.params)
    if unknown:
        raise ParameterError(f"{name} takes no parameter(s) {sorted(unknown)}; "
                             f"it takes {', '.join(f.params) or 'none'}")
    with PauseGC():  # thousands of new objects and no garbage: skip collection passes
        return f.builder(X, y, block=block, **params)


def _svm_blocks(model):
    found = []
    for blk in model.block_data_objects(active=True, descend_into=True):
        if getattr(blk, "_svm", None) is not None and blk._svm.block is blk:
            found.append(blk)
    return found


def _the_svm_block(model):
    blocks = _svm_blocks(model)
    if not blocks:
        raise ParameterError("the model contains no block built by svm_models.build")
    if len(blocks) > 1:
        raise ParameterError(
            f"the model contains {len(blocks)} SVM blocks; extract each with svm_models.extract(block)")
    return blocks[0]


def solve(model, solver: str = "ipopt", *, raise_on_failure: bool = True, _state=None, **options):
    """Solve a model made by :func:`build` (or a larger model containing one SVM block).

    ``options``: ``tol``, ``time_limit``, ``iter_limit``, ``threads``, ``verbose``,
    ``options`` (raw backend options), ``path`` (``"auto"``/``"fast"``/``"general"``).
    Returns the :class:`~svm_models.solution.Solution` of the SVM block.
    """
    opts = SolverOptions.from_kwargs(**options)
    blk = _the_svm_block(model)
    svm = blk._svm
    f = registry.get(svm.formulation)
    if f.family == "hard" and f.form == "dual" and not backend(solver).proves_unbounded \
            and not separable(svm):
        # SCIP does not detect that the dual of an inseparable hard margin is unbounded
        raise_for_status("unbounded", "checked by LP before solving", svm.formulation,
                         not_separable=True)
    if backend(solver).name == "highs" and f.form == "primal" and svm.K is not None \
            and _rank_deficient(svm.K):
        raise CapabilityError(
            f"HiGHS cannot take the representer-form primal {svm.formulation} here: the kernel "
            "matrix is singular, and HiGHS's QP solvers stall on that problem (its optimal beta "
            "is not unique). Use the dual form (same classifier), or piqp, gurobi, ipopt, "
            "clarabel or scip.")
    info = solve_model(model, solver, structure=svm.structure, problem_class=f.problem_class,
                       options=opts, raise_on_failure=False, state=_state)
    if info.status != "optimal":
        if raise_on_failure:
            # a hard margin that fails is checked for separability by an exact LP, so the
            # user learns the real cause whatever status the backend chose to report
            hard = f.family == "hard" and not separable(svm)
            raise_for_status(info.status, info.message, svm.formulation, not_separable=hard)
        return _failed_solution(svm, info)
    sol = f.extractor(blk, info.duals, solver=info.solver, interface=info.interface,
                      path=info.path, time=info.time, status=info.status, solver_tol=opts.tol)
    if f.family == "hard" and sol.kkt.get("primal_infeasibility", 0.0) > 1e-4 \
            and not separable(svm):
        # some interfaces report "optimal" for the unbounded dual of inseparable data
        raise_for_status("optimal", "but the margins are violated", svm.formulation,
                         not_separable=True)
    if info.path_reason is not None:
        sol.extra["general_path_reason"] = info.path_reason
    return sol


def _rank_deficient(K) -> bool:
    """Whether the Gram matrix is numerically singular (pivoted Cholesky stops early)."""
    from .kernels import factor

    return factor(K, tol=1e-13, max_rank=K.shape[0]).shape[1] < K.shape[0]


def separable(svm) -> bool:
    """Whether the training data are separable in the kernel's feature space: the LP
    ``y_i ((K beta)_i + b) >= 1`` (``w.x_i`` for the linear kernel) is feasible (HiGHS via scipy)."""
    import numpy as np
    from scipy.optimize import linprog

    data = svm.data
    M = data.X if svm.K is None else svm.K
    A = -(data.y[:, None] * np.hstack([M, np.ones((M.shape[0], 1))]))
    res = linprog(np.zeros(A.shape[1]), A_ub=A, b_ub=-np.ones(A.shape[0]),
                  bounds=[(None, None)] * A.shape[1], method="highs")
    return res.status == 0


def _failed_solution(svm, info):
    import numpy as np

    from .solution import Solution

    l = svm.data.n_points
    nan = np.full(l, np.nan)
    return Solution(formulation=svm.formulation, solver=info.solver, status=info.status, w=None,
                    b=float("nan"), alpha=nan, coef=nan, xi=nan, support=np.zeros(0, dtype=int),
                    support_vectors=np.zeros((0, svm.data.n_features)), objective=float("nan"),
                    kernel=svm.kernel, classes=svm.data.classes, time=info.time,
                    interface=info.interface, path=info.path, extra={"message": info.message})


def fit(X, y, formulation: str = "soft_l1_dual", solver: str = "ipopt", **params):
    """Build and solve in one call; ``params`` mix hyperparameters and solver options."""
    solve_kw = {k: params.pop(k) for k in list(params) if k in _SOLVE_KEYS or k == "raise_on_failure"}
    model = build(formulation, X, y, **params)
    return solve(model, solver, **solve_kw)


def extract(block, *, solver: str = "", duals=None, tol=None):
    """Solution of an SVM block that the user solved inside a model of their own.

    Values are read from the block's variables. ``duals`` (a mapping constraint -> dual in the
    sensitivity convention d(objective)/d(bound); interfaces differ in sign, see
    ``svm_models.solvers.DUAL_SIGN``) gives a primal's alpha from multipliers; without it
    alpha is recovered from the KKT conditions. ``tol`` is the tolerance the block was solved
    to (it scales the support-vector threshold; default 1e-9).
    """
    blk = block if getattr(block, "_svm", None) is not None else _the_svm_block(block)
    svm = blk._svm
    f = registry.get(svm.formulation)
    for vd in svm.structure.var_datas():
        if vd.value is None:
            raise SVMError(f"variable {vd.name} has no value: solve the model before extracting")
    return f.extractor(blk, duals, solver=solver, interface="user", path="user", solver_tol=tol)


def fit_path(X, y, Cs, formulation: str = "soft_l1_dual", solver: str = "highs", *,
             progress: bool | None = None, **params):
    """Solutions along a path of C values, building the model once.

    The mutable parameter ``C`` is changed in place between solves. On the fast path the
    assembled matrices are kept, and each re-solve starts from a working set: variables that
    sat at a bound are held at their new bound, the smaller problem is solved, and held
    variables whose optimality conditions fail are released until none do (falling back to
    the full solve when that is safer). HiGHS does not warm-start QPs itself.
    ``progress`` (default: when the path has more than 5 points and stderr is a terminal)
    prints one line per point to stderr.
    """
    Cs = [float(c) for c in Cs]
    if not Cs:
        raise ParameterError("Cs must contain at least one value of C")
    solve_kw = {k: params.pop(k) for k in list(params) if k in _SOLVE_KEYS}
    model = build(formulation, X, y, C=Cs[0], **params)
    blk = _the_svm_block(model)
    if progress is None:
        progress = len(Cs) > 5 and sys.stderr.isatty()
    state: dict = {}
    out = []
    t0 = time.perf_counter()
    for k, C in enumerate(Cs):
        from .components import check_C

        blk.C.set_value(check_C(C))
        out.append(solve(model, solver, _state=state, **solve_kw))
        if progress:
            print(f"[fit_path] {k + 1}/{len(Cs)} C={C:.4g} objective={out[-1].objective:.8g} "
                  f"({time.perf_counter() - t0:.1f}s)", file=sys.stderr)
    return out

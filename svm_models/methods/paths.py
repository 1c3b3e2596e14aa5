"""Solutions along a path of a hyperparameter, building the model once."""

from __future__ import annotations

import sys
import time

from ..api import build, solve, split_solve_options, the_svm_block
from ..errors import ParameterError
from ..model.pieces import check_C


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
    try:
        Cs = [check_C(c) for c in Cs]
    except TypeError:
        raise ParameterError(f"Cs must be a sequence of positive numbers; got {Cs!r}") from None
    if not Cs:
        raise ParameterError("Cs must contain at least one value of C")
    solve_kw = split_solve_options(params)
    model = build(formulation, X, y, C=Cs[0], **params)
    blk = the_svm_block(model)
    if progress is None:
        progress = len(Cs) > 5 and sys.stderr.isatty()
    state: dict = {}
    out = []
    t0 = time.perf_counter()
    for k, C in enumerate(Cs):
        blk.C.set_value(C)
        out.append(solve(model, solver, _state=state, **solve_kw))
        if progress:
            print(f"[fit_path] {k + 1}/{len(Cs)} C={C:.4g} objective={out[-1].objective:.8g} "
                  f"({time.perf_counter() - t0:.1f}s)", file=sys.stderr)
    return out

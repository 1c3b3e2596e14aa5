"""Solutions along a path of a hyperparameter, building the model once."""

from __future__ import annotations

import sys

from ..api import build, params_for_backend, solve, split_solve_options, the_svm_block
from ..errors import ParameterError, plain
from ..model.pieces import check_C
from ..progress import Progress


def fit_path(X, y, Cs, formulation: str = "soft_l1_dual", solver: str = "auto", *,
             progress=None, **params):
    """Solutions along a path of C values, building the model once.

    The mutable parameter ``C`` is changed in place between solves. On the fast path the
    assembled matrices are kept, and each re-solve starts from the previous active set: for
    the duals (equality rows only) the KKT system of the free variables is solved directly and
    the active set corrected until every optimality condition holds (no backend call,
    ``Solution.interface == "active set"``); otherwise, or when that does not converge, a
    working set: variables that sat at a bound are held at their new bound, the smaller
    problem is solved by the backend, and held variables whose optimality conditions fail are
    released until none do (falling back to the full solve when that is safer). See
    :mod:`svm_models.solvers.working_set`. HiGHS does not warm-start QPs itself.
    ``progress``: ``True`` draws a progress bar on stderr (:class:`~svm_models.progress.Progress`,
    one step per C), ``False`` nothing, a callable is called as ``progress(k, n, C, solution)``
    after each solve (k from 1); default: a bar when the path has more than 5 points and stderr
    is a terminal.
    """
    try:
        Cs = [check_C(plain(c)) for c in Cs]
    except TypeError:
        raise ParameterError("Cs must be a sequence of positive numbers; "
                             f"got {plain(Cs)!r}") from None
    if not Cs:
        raise ParameterError("Cs must contain at least one value of C")
    solve_kw = split_solve_options(params)
    model = build(formulation, X, y, C=Cs[0], **params_for_backend(formulation, solver, params))
    blk = the_svm_block(model)
    if progress is None:
        progress = len(Cs) > 5 and sys.stderr.isatty()
    bar = None
    if progress is True:
        bar = Progress(len(Cs), label="path", enabled=True)
        progress = lambda k, n, C, s: bar.step(f"C={C:.4g} objective={s.objective:.8g}")  # noqa: E731
    state: dict = {}
    out = []
    try:
        for k, C in enumerate(Cs):
            blk.C.set_value(C)
            out.append(solve(model, solver, _state=state, **solve_kw))
            if progress:
                progress(k + 1, len(Cs), C, out[-1])
    finally:
        if bar is not None:
            bar.close()
    return out

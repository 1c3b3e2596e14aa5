"""The saddle-point check of the C-tuning problem (``formulations/c_tuning.md``).

Solving the plain 2-norm SVM dual with the kernel fixed at ``M(g*)`` must give the same
optimum value and the same alpha as the C-tuning problem: a diagnostic, and a test.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..api import build, solve
from ..data import validate
from ..errors import DataError, ParameterError
from ..formulations.c_tuning import M_of_g
from ..solution import CTuningDetails, Solution


@dataclass(frozen=True)
class SaddlePointCheck:
    """The plain 2-norm SVM dual re-solved with the kernel fixed at ``M(g*)``.

    ``value_qcqp``/``value_svm``: the two optimal values (same scale: ``e'a - 1/2 a'G(M)a``);
    ``value_rel_diff``: their difference relative to ``max(1, |value_qcqp|)``;
    ``alpha_rel_diff``: ``max |a_svm - a_qcqp| / max(1, max a_qcqp)``; ``b_diff``: bias difference;
    ``ok``: both relative differences within ``tol``; ``svm``: the re-solved Solution.
    """

    g: float
    value_qcqp: float
    value_svm: float
    value_rel_diff: float
    alpha_rel_diff: float
    b_diff: float
    tol: float
    ok: bool
    svm: Solution = field(repr=False)


def saddle_point_check(X, y, solution: Solution, *, solver: str = "auto", tol: float = 1e-6,
                       **solve_options) -> SaddlePointCheck:
    """Check that ``(alpha*, g*)`` of a C-tuning solution is a saddle point.

    Solves ``max_a e'a - 1/2 a'G(M(g*))a, a >= 0, y'a = 0`` (the hard-margin dual with the
    precomputed kernel ``M(g*)``, PSD since g* is in the PSD range) with ``solver`` and
    compares its optimal value and ``alpha`` with the QCQP's. ``X, y`` are the training data
    the solution was fitted on (for ``kernel="precomputed"``: the training Gram matrix).
    """
    if not isinstance(solution.details, CTuningDetails):
        raise ParameterError(f"saddle_point_check needs a C-tuning solution; got one of "
                             f"{solution.formulation!r}")
    precomputed = solution.kernel.name == "precomputed"
    data = validate(X, y, precomputed=precomputed)
    if data.n_points != solution.alpha.shape[0]:
        raise DataError(f"the solution was fitted on {solution.alpha.shape[0]} points; "
                        f"X has {data.n_points}")
    K = data.X if precomputed else solution.kernel.gram(data.X)
    M = M_of_g(np.array(K, dtype=float), float(solution.g))
    M = (M + M.T) / 2
    model = build("hard_dual", M, data.y, kernel="precomputed")
    svm = solve(model, solver, **solve_options)
    v_q = float(solution.objective)
    v_s = float(svm.objective)
    dv = abs(v_s - v_q) / max(1.0, abs(v_q))
    da = float(np.max(np.abs(svm.alpha - solution.alpha))) / max(1.0, float(solution.alpha.max()))
    return SaddlePointCheck(g=float(solution.g), value_qcqp=v_q, value_svm=v_s, value_rel_diff=dv,
                            alpha_rel_diff=da, b_diff=abs(svm.b - solution.b), tol=tol,
                            ok=bool(dv <= tol and da <= tol), svm=svm)

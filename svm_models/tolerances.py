"""Tolerances, in one place.

``SV_REL``: a point is a support vector when ``alpha_i > support_threshold(scale, tol)``, and
*free* (on the margin, 0 < alpha_i < C) when it is also below ``C - threshold``. The threshold
is relative to the scale of alpha (C for the 1-norm box, the largest alpha otherwise) and to
the solver's own tolerance, so it means the same for an active-set solver (exact zeros) and
an interior-point one (zeros of the order of its tolerance).
"""

from __future__ import annotations

#: default solver tolerance asked of every backend
SOLVER_TOL = 1e-9
#: relative support-vector threshold (at the default solver tolerance)
SV_REL = 1e-6


def support_threshold(scale: float, solver_tol: float | None = None) -> float:
    """Absolute threshold on alpha for "is a support vector" / "is free"."""
    tol = SOLVER_TOL if solver_tol is None else solver_tol
    return max(SV_REL, 1000.0 * tol) * max(float(scale), 1e-12)

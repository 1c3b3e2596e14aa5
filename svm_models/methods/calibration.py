"""Probabilities from decision values, as libsvm (scikit-learn's ``SVC(probability=True)``):
Platt's sigmoid fitted to cross-validated decision values, and for more than two classes the
pairwise coupling of Wu, Lin and Weng (2004) (one-vs-one) or the normalised one-vs-rest
probabilities.

References: J. Platt, *Probabilistic outputs for support vector machines* (1999); H.-T. Lin,
C.-J. Lin, R. C. Weng, *A note on Platt's probabilistic outputs for support vector machines*,
Machine Learning 68 (2007) (the Newton method with backtracking below); T.-F. Wu, C.-J. Lin,
R. C. Weng, *Probability estimates for multi-class classification by pairwise coupling*,
JMLR 5 (2004).
"""

from __future__ import annotations

import numpy as np

#: libsvm's constants: Newton iterations, smallest step, Hessian shift, gradient tolerance
PLATT_MAX_ITER = 100
PLATT_MIN_STEP = 1e-10
PLATT_SIGMA = 1e-12
PLATT_EPS = 1e-5
#: pairwise probabilities are kept in [MIN_PROB, 1 - MIN_PROB] before coupling (libsvm)
MIN_PROB = 1e-7


def _nll(A: float, B: float, f: np.ndarray, T: np.ndarray) -> float:
    """Platt's negative log-likelihood, computed without overflow."""
    z = f * A + B
    pos = z >= 0
    out = np.empty_like(z)
    out[pos] = T[pos] * z[pos] + np.log1p(np.exp(-z[pos]))
    out[~pos] = (T[~pos] - 1.0) * z[~pos] + np.log1p(np.exp(z[~pos]))
    return float(out.sum())


def platt(f: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """``(A, B)`` of ``P(y = +1 | f) = 1 / (1 + exp(A f + B))`` fitted to decision values ``f``
    with labels ``t`` (+1 / -1): Platt's smoothed targets, Newton's method with backtracking
    (Lin, Lin and Weng's algorithm, as libsvm's ``sigmoid_train``)."""
    f = np.asarray(f, dtype=float)
    pos = np.asarray(t) > 0
    n1 = int(pos.sum())
    n0 = len(f) - n1
    T = np.where(pos, (n1 + 1.0) / (n1 + 2.0), 1.0 / (n0 + 2.0))
    A, B = 0.0, float(np.log((n0 + 1.0) / (n1 + 1.0)))
    fval = _nll(A, B, f, T)
    for _ in range(PLATT_MAX_ITER):
        z = f * A + B
        p = np.where(z >= 0, np.exp(-np.abs(z)) / (1.0 + np.exp(-np.abs(z))),
                     1.0 / (1.0 + np.exp(-np.abs(z))))
        q = 1.0 - p
        d2 = p * q
        h11 = PLATT_SIGMA + float(f * f @ d2)
        h22 = PLATT_SIGMA + float(d2.sum())
        h21 = float(f @ d2)
        d1 = T - p
        g1, g2 = float(f @ d1), float(d1.sum())
        if abs(g1) < PLATT_EPS and abs(g2) < PLATT_EPS:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= PLATT_MIN_STEP:
            nA, nB = A + step * dA, B + step * dB
            nf = _nll(nA, nB, f, T)
            if nf < fval + 1e-4 * step * gd:
                A, B, fval = nA, nB, nf
                break
            step /= 2.0
        if step < PLATT_MIN_STEP:
            break
    return A, B


def sigmoid(f: np.ndarray, A: float, B: float) -> np.ndarray:
    """``1 / (1 + exp(A f + B))``, without overflow."""
    z = np.asarray(f, dtype=float) * A + B
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, e / (1.0 + e), 1.0 / (1.0 + e))


def couple(r: np.ndarray) -> np.ndarray:
    """Class probabilities from pairwise ones, ``r[i, j] = P(class i | class i or j)``, for one
    point (Wu, Lin and Weng's second method, libsvm's ``multiclass_probability``)."""
    k = r.shape[0]
    Q = -r.T * r
    np.fill_diagonal(Q, 0.0)
    np.fill_diagonal(Q, (r.T ** 2).sum(axis=1) - np.diag(r) ** 2)
    p = np.full(k, 1.0 / k)
    eps = 0.005 / k
    for _ in range(max(100, k)):
        Qp = Q @ p
        pQp = float(p @ Qp)
        if np.max(np.abs(Qp - pQp)) < eps:
            break
        for t in range(k):
            diff = (-Qp[t] + pQp) / Q[t, t]
            p[t] += diff
            pQp = (pQp + diff * (diff * Q[t, t] + 2.0 * Qp[t])) / (1.0 + diff) ** 2
            Qp = (Qp + diff * Q[t]) / (1.0 + diff)
            p /= 1.0 + diff
    return p


def ovo_probabilities(pair_probs: list, pairs: list, n_classes: int) -> np.ndarray:
    """Class probabilities, shape (n, n_classes), from the one-vs-one problems' probabilities
    ``P(positive class j | i or j)`` (``pairs``: ``(j, (i,))`` as
    :func:`~svm_models.methods.cv.binary_problems`), coupled point by point."""
    n = len(pair_probs[0])
    out = np.zeros((n, n_classes))
    for m in range(n):
        r = np.zeros((n_classes, n_classes))
        for (j, (i,)), pr in zip(pairs, pair_probs):
            pj = min(max(float(pr[m]), MIN_PROB), 1.0 - MIN_PROB)
            r[j, i], r[i, j] = pj, 1.0 - pj
        out[m] = couple(r)
    return out


def ovr_probabilities(class_probs: list) -> np.ndarray:
    """Class probabilities, shape (n, n_classes), from the one-vs-rest problems'
    ``P(class k | x)``, normalised to sum 1 (uniform where every one is 0)."""
    P = np.column_stack(class_probs)
    s = P.sum(axis=1, keepdims=True)
    return np.where(s > 0, P / np.where(s > 0, s, 1.0), 1.0 / P.shape[1])

"""Small datasets for the demo, examples and tests (nothing is downloaded).

* :func:`breast_cancer` -- the Wisconsin diagnostic breast cancer data (569 x 30), the copy
  that ships inside scikit-learn, standardised on the training split.
* :func:`teaching_2d` -- two seeded Gaussian clouds in the plane, for pictures and teaching.
* :func:`toy` -- the six-point hand-checkable example of DESIGN.md.
* :func:`benchmark_data` -- the seeded data of the performance issue.
"""

from __future__ import annotations

import numpy as np


def toy():
    """The six-point toy: hard and 1-norm (C=1) SVMs give alpha = 0.25 on points 1 and 3,
    w = (0.5, 0.5), b = 0."""
    X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype=float)
    y = np.array([-1, -1, -1, 1, 1, 1])
    return X, y


def teaching_2d(n: int = 40, *, separation: float = 4.0, seed: int = 0):
    """Two Gaussian clouds in 2-D (labels -1/+1), well separated at the default separation."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    X = rng.standard_normal((n, 2)) * 0.6 + separation / 2 * y[:, None] * np.array([1.0, 0.6])
    return X, y


def benchmark_data(l: int, d: int = 20, *, shift: float = 0.35, seed: int = 0):
    """``y_i = +1`` for even i, -1 for odd i; ``X = N(0, I) + shift * y`` (issue 9's data)."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(l) % 2 == 0, 1.0, -1.0)
    X = rng.standard_normal((l, d)) + shift * y[:, None]
    return X, y


def breast_cancer(test_size: float = 0.3, seed: int = 0):
    """(X_train, X_test, y_train, y_test), standardised with the training split's statistics.

    Labels are scikit-learn's: 0 = malignant, 1 = benign.
    """
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    data = load_breast_cancer()
    Xtr, Xte, ytr, yte = train_test_split(data.data, data.target, test_size=test_size,
                                          random_state=seed, stratify=data.target)
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd[sd == 0] = 1.0
    return (Xtr - mu) / sd, (Xte - mu) / sd, ytr, yte


def banknote():
    """The banknote authentication data (UCI, V. Lohweg 2013, CC BY 4.0; shipped with the
    package): X (1,372 x 4: variance, skewness, curtosis and entropy of a wavelet transform of
    the note's image) and y = +1 for a genuine note, -1 for a counterfeit. The data of the
    MO-book's SVM notebooks."""
    from importlib.resources import files

    with files("svm_models").joinpath("sample_data", "banknote.csv").open() as f:
        D = np.loadtxt(f, delimiter=",", skiprows=1)
    return D[:, :4], 1 - 2 * D[:, 4]

"""Growing pair families (issue 12): rows over pairs of points given by index arrays, appended
between solves without leaving the fast path -- constraint generation in miniature, checked
against the model with every pair written out, solved by another backend through Pyomo."""

from __future__ import annotations

import itertools

import numpy as np
import pyomo.environ as pyo
import pytest
from conftest import blobs, require

import svm_models as sm
from svm_models.model.families import add_pair_family
from svm_models.model.record import verify

BOUND = 0.6   # (x_i - x_j) . w <= BOUND for every pair: binding for the unconstrained w


def _with_family(X, y, I, J):
    m = sm.build("soft_l1_primal", X, y, C=1.0)
    rec = m._svm.record
    ids = [id(v) for v in rec.var_datas()]
    wpos = np.array([ids.index(id(m.w[j])) for j in m.J])
    fam = add_pair_family(m, rec, "pair_rows", cols=wpos, terms=[(1.0, X, None), (-1.0, None, X)],
                          upper=BOUND, I=I, J=J, doc="(x_i - x_j).w <= BOUND")
    return m, fam


def _all_pairs_reference(X, y, solver):
    """Every pair written out as an ordinary Pyomo constraint, solved through Pyomo."""
    m = sm.build("soft_l1_primal", X, y, C=1.0)
    P = list(itertools.permutations(range(len(y)), 2))
    m.P = pyo.Set(initialize=range(len(P)))
    m.all_pairs = pyo.Constraint(m.P, rule=lambda m, k: sum(
        (X[P[k][0], j] - X[P[k][1], j]) * m.w[j] for j in m.J) <= BOUND)
    return sm.solve(m, solver)


def _violations(X, w):
    f = X @ w
    D = f[:, None] - f[None, :]
    return D


def test_pair_family_grows_between_fast_solves_to_the_all_pairs_optimum():
    X, y = blobs(3, l=30, d=2, sep=0.8)
    m, fam = _with_family(X, y, [0], [1])
    assert verify(m._svm.record) is None
    free = sm.solve(sm.build("soft_l1_primal", X, y, C=1.0), require("highs"))
    assert _violations(X, free.w).max() > BOUND + 0.1          # the family binds
    rounds = 0
    while True:
        sol = sm.solve(m, "highs")
        assert sol.path == "fast", sol.extra.get("general_path_reason")
        gen = sm.solve(m, "highs", path="general")
        assert gen.objective == pytest.approx(sol.objective, rel=1e-8)
        np.testing.assert_allclose(gen.w, sol.w, atol=1e-7)
        D = _violations(X, sol.w)
        D[fam.I, fam.J] = -np.inf                                 # the pairs already in
        if D.max() <= BOUND + 1e-9:
            break
        worst = np.argsort(D, axis=None)[::-1][:3]
        I, J = np.unravel_index(worst, D.shape)
        keep = D[I, J] > BOUND + 1e-9
        fam.append(I[keep], J[keep])
        rounds += 1
        assert rounds < 50
    assert rounds >= 1 and fam.size < len(y) * (len(y) - 1)   # generation, not enumeration
    ref = _all_pairs_reference(X, y, require("ipopt"))
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    np.testing.assert_allclose(sol.w, ref.w, atol=1e-5)
    # b is not unique here (the pair rows hold w): the (w, b) reported attains the optimum
    ys = np.where(y == y.max(), 1.0, -1.0)
    value = 0.5 * sol.w @ sol.w + np.maximum(0.0, 1.0 - ys * (X @ sol.w + sol.b)).sum()
    assert value == pytest.approx(ref.objective, rel=1e-6)


def test_an_edited_family_member_is_seen():
    X, y = blobs(3, l=20, d=2, sep=0.8)
    m, fam = _with_family(X, y, [0, 2], [1, 3])
    m.pair_rows[0].set_value(m.w[0] <= 0.1)
    assert "pair_rows" in verify(m._svm.record)
    sol = sm.solve(m, require("highs"))
    assert sol.path == "general" and sol.w[0] <= 0.1 + 1e-7
    # members added behind the family's back are seen too
    m2, fam2 = _with_family(X, y, [0], [1])
    m2.pair_rows_pairs.add(1)
    assert verify(m2._svm.record) is not None

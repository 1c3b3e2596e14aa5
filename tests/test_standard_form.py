"""The record is the model (issue 27): for every registered formulation, kernel and variant,
what the fast path hands a backend (the builder's record, :func:`assemble`) and Pyomo's own
reading of the built model (:func:`from_pyomo`, term by term through Pyomo's repn: the
general path) are the same problem -- the same variables and bounds, the same objective (up
to its constant), and constraint by constraint the same set: each linear row, quadratic row
and cone compared as ``body(x) <= upper`` / ``lower <= body(x)`` with the body's quadratic,
linear and constant parts, up to a positive factor per constraint (a cone's squared form
``row_scale * q(x) <= 0`` and the quadratic constraint Pyomo holds differ by that factor).

If the two ever disagreed, the fast path would solve a problem other than the model the user
holds. ``test_a_planted_disagreement_is_caught`` changes one coefficient in the record only
and sees the comparison fail.
"""

from __future__ import annotations

import numpy as np
import pytest

import svm_models as sm
from svm_models.formulations import get, names
from svm_models.model.reader import from_pyomo
from svm_models.model.standard_form import assemble


def _data(l=12, d=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(l) % 2 == 0, 1, -1)
    X = rng.normal(size=(l, d)) + 1.2 * y[:, None] * np.array([1.0, -0.5, 0.25])[:d]
    return X, y


KERNELS = [{"kernel": "linear"}, {"kernel": "rbf", "gamma": 0.4},
           {"kernel": "poly", "degree": 2, "gamma": 0.5, "coef0": 1.0}]
WEIGHTS = np.linspace(0.5, 2.0, 12)


def _variants():
    """(formulation, params) for every registered formulation and the variants its builder
    has: kernels, dense and factor quadratic forms, low-rank kernels, per-point weights,
    hard/soft, C tuning's cone and quadratic forms and C ranges, radius-margin pair sets,
    kernel lists and radius forms."""
    out = []
    for f in names():
        if get(f).module == "classic":
            dual = f.endswith("_dual")
            for k in KERNELS:
                out.append((f, dict(k)))
                if k["kernel"] != "linear":
                    out.append((f, {**k, "kernel_rank": 5}))
                if dual:
                    out.append((f, {**k, "quad_form": "factor"}))
                    out.append((f, {**k, "quad_form": "dense"}))
            if not f.startswith("hard_"):
                out.append((f, {"kernel": "rbf", "gamma": 0.4, "C": 3.0,
                                "sample_weight": WEIGHTS}))
                out.append((f, {"kernel": "linear", "C": 0.5,
                                "sample_weight": np.where(WEIGHTS < 1, 0.0, WEIGHTS)}))
        elif f.startswith("c_tuning"):
            for k in KERNELS:
                for form in ("norm", "quadratic"):
                    out.append((f, {**k, "form": form}))
            out.append((f, {"kernel": "rbf", "gamma": 0.4, "g_bounds": (0.2, 0.7)}))
        elif f == "rsvm_plus_kernel":
            for k in KERNELS:
                for radius in ("compact", "pairwise"):
                    out.append((f, {**k, "radius": radius, "C": 2.0, "lam": 0.5}))
        elif f == "rsvm_mu_plus":
            out.append((f, {"C": 2.0, "lam": 0.5}))
            out.append((f, {"pairs": "seed"}))
            out.append((f, {"kernels": [{"kernel": "linear"}, {"kernel": "rbf", "gamma": 0.3}]}))
        elif f.startswith("rsvm_plus"):
            out.append((f, {"C": 2.0, "lam": 0.5}))
            out.append((f, {"pairs": "seed"} if f.endswith("primal")
                        else {"pairs": ([0, 1, 2, 5], [3, 4, 9, 11])}))
        else:   # the others: their defaults, and weighted where the builder takes
            # sample_weight (read from the registry: no name kept here)
            out.append((f, {}))
            if "sample_weight" in get(f).params:
                out.append((f, {"C": 2.0, "sample_weight": WEIGHTS}))
            if "kernel" in get(f).params:   # (the mixed-integer losses' representer form)
                out.append((f, {"kernel": "rbf", "gamma": 0.4}))
            if "norm" in get(f).params:     # feature selection: the MIQP, costs in the budget
                out.append((f, {"k": 2, "norm": "l2"}))
                out.append((f, {"k": 1.5, "feature_cost": [1.0, 0.5, 2.0]}))
    return out


VARIANTS = _variants()


def _ids(v):
    f, p = v
    bits = [f] + [f"{k}={v if not isinstance(v, np.ndarray) else 'w'}" for k, v in p.items()
                  if k != "kernels"] + (["kernels"] if "kernels" in p else [])
    return "-".join(str(b) for b in bits)


def _dense_quad(blocks, n):
    """``x'Mx`` of a list of :class:`QuadBlock` as one dense n x n matrix."""
    M = np.zeros((n, n))
    for q in blocks:
        idx = np.asarray(q.index)
        M[np.ix_(idx, idx)] += q.dense() if q.base is None else np.asarray(q.matrix, dtype=float)
    return M


def _cone_poly(cone, n):
    """``row_scale * q(x)`` of a cone as (Q, linear, constant) on the n variables."""
    A = cone.A.toarray() if hasattr(cone.A, "toarray") else np.asarray(cone.A)
    b = np.asarray(cone.b, dtype=float)
    D = np.eye(A.shape[0])
    if cone.kind == "soc":
        D[0, 0] = -1.0
    else:
        D[:2, :2] = [[0.0, -1.0], [-1.0, 0.0]]
    s = cone.row_scale
    return s * (A.T @ D @ A), s * 2.0 * (A.T @ D @ b), s * float(b @ D @ b)


def _constraints(sf):
    """``{id(constraint data): (Q, linear, constant, lower, upper)}`` of every constraint of
    a standard form, on its own variable order."""
    n = sf.n
    out = {}
    A = sf.A.toarray()
    for i, d in enumerate(sf.row_datas):
        out.setdefault(id(d), []).append((np.zeros((n, n)), A[i], 0.0, sf.lA[i], sf.uA[i]))
    for r in sf.qrows:
        Q, lin = _dense_quad(r.quad, n), np.asarray(r.linear, dtype=float)
        if r.sign < 0:   # stated as -q(x) >= -upper
            out.setdefault(id(r.data), []).append((-Q, -lin, 0.0, -r.upper, np.inf))
        else:
            out.setdefault(id(r.data), []).append((Q, lin, 0.0, -np.inf, r.upper))
    for c in sf.cones:
        Q, lin, k = _cone_poly(c, n)
        out.setdefault(id(c.data), []).append((Q, lin, k, -np.inf, 0.0))
    return out


def _normalised(Q, lin, k, lo, up):
    """The constraint ``lo <= x'Qx + lin'x + k <= up`` with the constant moved to the sides
    and everything divided by the body's largest coefficient (a positive factor), then with
    the sign fixed so that an upper side comes first."""
    lo, up = lo - k, up - k
    s = max(np.abs(Q).max(initial=0.0), np.abs(lin).max(initial=0.0))
    if s == 0.0:
        return Q, lin, lo, up
    Q, lin, lo, up = Q / s, lin / s, lo / s, up / s
    # -body <= -lo is the same as body >= lo: written with a finite upper side where there is
    # one and the quadratic part PSD-first (a cone's squared form has a fixed orientation)
    if not np.isfinite(up) and np.isfinite(lo):
        Q, lin, lo, up = -Q, -lin, -up, -lo
    return Q, lin, lo, up


def same_problem(rec, py, *, rtol=1e-9):
    """Assert that two standard forms of one model are the same problem."""
    assert rec.n == py.n, f"{rec.n} variables in the record, {py.n} in the model"
    pos = {id(v): k for k, v in enumerate(py.var_datas)}
    assert set(pos) == {id(v) for v in rec.var_datas}, "different variables"
    perm = np.array([pos[id(v)] for v in rec.var_datas])
    np.testing.assert_array_equal(rec.lx, py.lx[perm], err_msg="variable lower bounds")
    np.testing.assert_array_equal(rec.ux, py.ux[perm], err_msg="variable upper bounds")
    assert rec.sense == py.sense
    scale = max(np.abs(py.c).max(initial=0.0), 1.0)
    np.testing.assert_allclose(rec.c, py.c[perm], rtol=rtol, atol=rtol * scale,
                               err_msg="objective, linear part")
    Hr = _dense_quad(rec.quad, rec.n)
    Hp = _dense_quad(py.quad, py.n)[np.ix_(perm, perm)]
    np.testing.assert_allclose(Hr + Hr.T, Hp + Hp.T, rtol=rtol,
                               atol=rtol * max(np.abs(Hp).max(initial=0.0), 1.0),
                               err_msg="objective, quadratic part")
    cr, cp = _constraints(rec), _constraints(py)
    assert set(cr) == set(cp), "different constraints"
    for key, rows in cr.items():
        prow = cp[key]
        assert len(rows) == len(prow), "a constraint split differently"
        for (Q, lin, k, lo, up), (Qp, linp, kp, lop, upp) in zip(rows, prow):
            a = _normalised(Q, lin, k, lo, up)
            b = _normalised(Qp[np.ix_(perm, perm)], linp[perm], kp, lop, upp)
            np.testing.assert_allclose(a[0] + a[0].T, b[0] + b[0].T, rtol=rtol, atol=rtol,
                                       err_msg="a constraint's quadratic part")
            np.testing.assert_allclose(a[1], b[1], rtol=rtol, atol=rtol,
                                       err_msg="a constraint's linear part")
            for x, z, side in ((a[2], b[2], "lower"), (a[3], b[3], "upper")):
                assert (np.isfinite(x) == np.isfinite(z)) and (
                    not np.isfinite(x) or abs(x - z) <= rtol * max(1.0, abs(z))), \
                    f"a constraint's {side} side: {x} in the record, {z} in the model"


@pytest.mark.parametrize("variant", VARIANTS, ids=[_ids(v) for v in VARIANTS])
def test_the_record_and_the_model_are_the_same_problem(variant):
    f, params = variant
    X, y = _data()
    m = sm.build(f, X, y, **params)
    rec = assemble(m._svm.record)
    py = from_pyomo(m)
    assert rec.problem_class == py.problem_class or {rec.problem_class, py.problem_class} <= {
        "SOCP", "QCQP"}
    same_problem(rec, py)
    # the same integer variables (a mixed-integer formulation's binaries)
    pos = {id(v): k for k, v in enumerate(py.var_datas)}
    assert sorted(pos[id(rec.var_datas[k])] for k in rec.integer) == sorted(py.integer)
    # every constraint of the Pyomo model was compared (none read as something else)
    from pyomo.environ import Constraint
    held = {id(c) for c in m.component_data_objects(Constraint, active=True)}
    assert set(_constraints(py)) == held


def test_every_formulation_is_covered():
    assert {f for f, _ in VARIANTS} == set(names())


@pytest.mark.parametrize("f,params", [
    ("soft_l1_dual", {"kernel": "rbf", "gamma": 0.4}),
    ("soft_l1_primal", {"kernel": "linear"}),
    ("c_tuning_standard", {"kernel": "rbf", "gamma": 0.4}),
    ("rsvm_plus_kernel", {"kernel": "rbf", "gamma": 0.4}),
])
def test_a_planted_disagreement_is_caught(f, params):
    """One coefficient changed in the record only (the objective's linear part, or a row's
    matrix): the comparison fails."""
    X, y = _data()
    m = sm.build(f, X, y, **params)
    rec = assemble(m._svm.record)
    py = from_pyomo(m)
    same_problem(rec, py)   # (the same before the plant)
    if rec.A.nnz:
        A = rec.A.tocsr(copy=True)
        A.data[len(A.data) // 2] *= 1.0 + 1e-6
        rec.A = A
    else:
        rec.c = rec.c.copy()
        rec.c[np.flatnonzero(rec.c)[0]] *= 1.0 + 1e-6
    with pytest.raises(AssertionError):
        same_problem(rec, py)

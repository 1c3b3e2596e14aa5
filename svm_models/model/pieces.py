"""Shared pieces of the SVM models, written once and used by every builder.

Each function adds named, documented Pyomo components to a block *and* returns what it
built as data for the builder's :class:`~svm_models.model.record.Record`, so the two
descriptions cannot drift apart.

Pieces: the point/feature sets and labels, mutable hyperparameters, decision values ``f[i]``
(``sum_j M_ij v_j``, built lazily from the recorded margin rows), the margin constraints
``y_i (f_i + b) + xi_i >= 1``, the balance constraint ``y'alpha = 0``, and the quadratic
form ``v'Mv`` (dense and lazy, or through a factor ``M = F'F`` with auxiliary variables
``z = F v``). Nothing is stored per point but the variables and the lazy members: the
row matrices are written in place (:func:`dense_rows`), and lazy expressions read them back
(:class:`FrozenRows`), never the caller's arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from ..data import Dataset, as_weights, check_weighted_classes, validate
from ..errors import DataError, ParameterError, plain
from ..kernels import (
    Kernel,
    check_psd,
    exact_factor_dim,
    incomplete_cholesky,
    kernel_factor,
    low_rank_kernel,
    make_kernel,
)
from .forms import QuadBlock
from .lazy import (
    ArrayParam,
    LazyConstraint,
    LazyExpression,
    LazyScalarConstraint,
    LazyScalarExpression,
    dense_quadratic_form,
    diagonal_quadratic_form,
    linear_form,
)
from .pyomo_compat import member_dict
from .record import RowGroup, members

INF = float("inf")
#: the forms of a dual's quadratic form (``quad_form``): :func:`choose_form`
QUAD_FORMS = ("auto", "dense", "factor")


def prepare(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0, need_gram=True):
    """Validate data and kernel parameters; return ``(Dataset, Kernel, K or None)``."""
    precomputed = kernel == "precomputed"
    data = validate(X, y, precomputed=precomputed)
    kern = make_kernel(kernel, data.X, gamma=gamma, degree=degree, coef0=coef0)
    checked = getattr(data, "finite_for", None)   # (a Dataset pickled before it had one)
    if not precomputed and (checked is None or checked != kern):
        check_kernel_finite(kern, data.X)
    K = None
    if precomputed:
        K = data.X
        check_psd(K, name="precomputed kernel matrix")
    elif need_gram:
        K = kern.gram(data.X)
    return data, kern, K


def check_kernel_finite(kern, X: np.ndarray) -> None:
    """DataError when the kernel's values overflow on these data (finite features near the
    float maximum: squared norms of inf, a NaN kernel matrix). With ``|x_i|^2`` and
    ``k(x_i, x_i)`` finite every kernel entry is (``|k(x, z)| <= sqrt(k(x, x) k(z, z))``, and
    the rbf's distances are sums of finite squared norms)."""
    with np.errstate(over="ignore", invalid="ignore"):
        sq = np.einsum("ij,ij->i", X, X)
        diag = kern.diagonal(X)
        bad = np.flatnonzero(~(np.isfinite(sq) & np.isfinite(diag)))
    if bad.size:
        raise DataError(
            f"the {kern.name} kernel overflows on these data: k(x_i, x_i) or |x_i|^2 is not a "
            f"finite float for {bad.size} point(s) (first: row {int(bad[0])}, largest |feature| "
            f"{float(np.max(np.abs(X))):.3g}). Scale the features (e.g. "
            "sklearn.preprocessing.StandardScaler) before fitting")


def check_positive(name: str, v) -> float:
    """``v`` as a finite positive float, or ParameterError naming ``name``."""
    if isinstance(v, (str, bytes, bool)):
        raise ParameterError(f"{name} must be a positive number; got {v!r}")
    try:
        c = float(v)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a positive number; got {v!r}") from None
    if not np.isfinite(c) or c <= 0:
        raise ParameterError(f"{name} must be a finite positive number; got {plain(v)!r}")
    return c


def check_choice(name: str, value, choices: tuple) -> str:
    """``value`` when it is one of ``choices``, or ParameterError naming them."""
    if isinstance(value, str) and value in choices:
        return value
    listed = (" or ".join(map(repr, choices)) if len(choices) == 2
              else "one of " + ", ".join(choices))
    raise ParameterError(f"{name} must be {listed}; got {plain(value)!r}")


def check_C(C) -> float:
    """C as a float, or ParameterError: it must be a finite positive number."""
    return check_positive("C", C)


def new_block(block, name: str):
    """A fresh ConcreteModel, or the user's block to fill."""
    if block is None:
        return pyo.ConcreteModel(name=name)
    if not hasattr(block, "add_component"):
        raise ParameterError(f"block must be a Pyomo Block; got {type(block).__name__}")
    return block


class Layout:
    """Positions of the model's variables in the solver vector x, in declaration order."""

    def __init__(self):
        self.variables: list = []
        self.n = 0
        self.pos: dict[str, np.ndarray] = {}

    def add(self, var) -> np.ndarray:
        start = self.n
        self.n += len(var)
        self.variables.append(var)
        self.pos[var.local_name] = np.arange(start, self.n)
        return self.pos[var.local_name]


def add_points(b, data: Dataset) -> None:
    """The points ``I = 0..l-1`` (a RangeSet: nothing stored per point) and the label
    parameter ``y`` (immutable, its values the dataset's read-only label array)."""
    b.I = pyo.RangeSet(0, data.n_points - 1, doc="training points i")
    b.y = ArrayParam(b.I, values=data.y, doc="label y_i in {-1, +1}")


def add_features(b, d: int) -> None:
    b.J = pyo.Set(initialize=range(d), ordered=True, doc="features j")


def add_C(b, C) -> None:
    b.C = pyo.Param(initialize=check_C(C), mutable=True, within=pyo.PositiveReals,
                    doc="soft-margin penalty C > 0 (mutable: change it and re-solve)")


def check_sample_weight(sample_weight, data: Dataset) -> np.ndarray | None:
    """Per-point weights of C (``C_i = C * weight_i``, scikit-learn's ``sample_weight``):
    a finite number per point; weights ``<= 0`` are 0 (the point does not count: scikit-learn
    drops it). None (or every weight 1): None. DataError when no point of a class keeps a
    positive weight (no SVM is left to train), with SVC's message and the class named
    (:func:`~svm_models.data.check_weighted_classes`)."""
    if sample_weight is None:
        return None
    w = as_weights(sample_weight, data.n_points)
    w = np.where(w > 0.0, w, 0.0)
    check_weighted_classes(w, (data.y > 0).astype(int), data.classes)
    if np.all(w == 1.0):
        return None
    return w


def add_weights(b, weight: np.ndarray | None) -> None:
    """``weight[i]``: the per-point factors of C (a Param; not declared when every weight is
    1)."""
    if weight is None:
        return
    weight.flags.writeable = False
    b.weight = ArrayParam(b.I, values=weight,
                          doc="weight_i of point i: its penalty is C * weight_i "
                              "(scikit-learn's sample_weight; 0: the point does not count)")


class LinearPrimal(NamedTuple):
    """The start of a linear-kernel primal with C per point (:func:`linear_primal`)."""

    data: Dataset
    kernel: object               # the linear Kernel
    weight: np.ndarray | None    # the per-point factors of C (None: all 1)
    block: object                # the block: I, y, C, weight, J, w, b
    layout: Layout               # w then b
    wpos: np.ndarray             # w's positions


def linear_primal(X, y, name: str, C, sample_weight, block) -> LinearPrimal:
    """What a linear-kernel primal with C per point starts with (``l1_norm_primal``,
    ``ls_svm_primal``): the validated data, the points, ``C``, the weights, the features
    ``J`` and the variables ``w[j]`` and ``b``, in a new layout."""
    data, kern, _ = prepare(X, y, kernel="linear", need_gram=False)
    weight = check_sample_weight(sample_weight, data)
    b = new_block(block, name)
    add_points(b, data)
    add_C(b, C)
    add_weights(b, weight)
    add_features(b, data.n_features)
    layout = Layout()
    b.w = pyo.Var(b.J, initialize=0.0, doc="normal vector w of the separating hyperplane")
    wpos = layout.add(b.w)
    b.b = pyo.Var(initialize=0.0, doc="bias b")
    layout.add(b.b)
    return LinearPrimal(data, kern, weight, b, layout, wpos)


def add_normal(b, data: Dataset, kern: Kernel, K, L: np.ndarray | None = None):
    """The variables of a primal's normal vector: ``w[j]`` over the features ``J`` (linear
    kernel), else the coordinates ``v[k]`` of w over the components ``R`` of a factor
    ``K = L L'`` (``L`` as given -- a low-rank factor --, else the kernel's exact features
    where it has them -- a poly kernel's monomials: ``K = L L'`` exactly, where the Gram
    matrix evaluated entry by entry is indefinite at its round-off --, else pivoted Cholesky
    of K, of full column rank). Returns ``(var, M, L, K)``: the variable, the matrix whose
    rows give ``f_i = M_i . var`` (X or L), the factor (None for the linear kernel) and the
    Gram matrix if one was formed."""
    if kern.is_linear:
        add_features(b, data.n_features)
        b.w = pyo.Var(b.J, initialize=0.0, doc="normal vector w of the separating hyperplane")
        return b.w, data.X, None, K
    if L is None:
        if K is None and exact_factor_dim(kern, *data.X.shape) is None:
            K = kern.gram(data.X)
        L = kernel_factor(kern, data.X, K)
    b.R = pyo.Set(initialize=range(L.shape[1]), ordered=True,
                  doc="factor components k (K = L L')")
    b.v = pyo.Var(b.R, initialize=0.0,
                  doc="coordinates of w in the basis L spans: w = sum_j beta_j phi(x_j), v = L' beta")
    return b.v, L, L, K


def _row_recipe(M, var_list, i):
    return linear_form(M[i], var_list)


class FrozenRows:
    """The rows of a recorded row group read back as coefficient rows over a contiguous
    block of its columns, times ``scale`` (a number, or one per row).

    The lazy decision values and factor images read these -- the record's own values,
    fixed when the model was built -- instead of the arrays they were computed from: a
    model never follows the caller's ``X`` (which is not copied above 32 MB,
    :func:`~svm_models.data.validate`), whenever its expressions are first read. Exact:
    the scales are +-1."""

    def __init__(self, group: RowGroup, cols: np.ndarray, scale=1.0):
        cols = np.asarray(cols)
        self.group, self.scale = group, scale
        self.c0, self.k = (int(cols[0]) if len(cols) else 0), len(cols)
        if not np.array_equal(cols, np.arange(self.c0, self.c0 + self.k)):
            raise ValueError("FrozenRows reads a contiguous block of columns")

    def __getitem__(self, i) -> np.ndarray:
        A = self.group.A          # read now: seal() may have widened it (same columns)
        s, e = A.indptr[i], A.indptr[i + 1]
        idx, val = A.indices[s:e], A.data[s:e]
        sel = (idx >= self.c0) & (idx < self.c0 + self.k)
        row = np.zeros(self.k)
        row[idx[sel] - self.c0] = val[sel]
        sc = self.scale if np.ndim(self.scale) == 0 else self.scale[i]
        return row if sc == 1.0 else row * sc


def _margin_relation(y, fi, bias, xii, i, equality=False, level=None):
    yi = float(y[i])
    body = yi * (fi + bias) if xii is None else yi * (fi + bias) + xii
    if level is not None:
        return body - level >= 0
    return body == 1 if equality else body >= 1


def add_margin(b, layout: Layout, f, f_matrix: np.ndarray, f_var: str, y: np.ndarray,
               xi=None, *, equality: bool = False, level=None) -> RowGroup:
    """``margin[i]:  y_i (f_i + b) + xi_i >= 1``; returns the row group ``[y_i M_i | y_i | e_i]``.
    ``equality``: the rows are ``= 1`` (the least-squares SVM's, ``xi`` its free errors).
    ``level``: a scalar variable ``rho`` in place of the 1, ``y_i (f_i + b) + xi_i - rho >= 0``
    (the nu-SVM's margin of width rho; the row group gets its column ``-1``).

    ``f``: the decision values, a component over the points; or ``(name, doc)``: they are
    made here, as lazy expressions ``name[i] = sum_j M_ij v_j`` (``v`` the variable
    ``f_var``) that read the row group's frozen values (:class:`FrozenRows`).

    Lazy: each member's expression is built only when something reads it (never on the fast
    path); a member costs a small constant to create instead of ~10 us of operators."""
    l = len(y)
    if sp.issparse(f_matrix):
        blocks = [(layout.pos[f_var], sp.csr_matrix(sp.diags(y) @ f_matrix)),
                  (layout.pos["b"], sp.csr_matrix(y[:, None]))]
        if xi is not None:
            blocks.append((layout.pos[xi.local_name], sp.identity(l, format="csr")))
        if level is not None:
            blocks.append((layout.pos[level.local_name], sp.csr_matrix(-np.ones((l, 1)))))
        A = place(blocks, l, layout.n)
    else:
        # one entry per row: b's column (every row), xi_i's and rho's
        single = [(layout.pos["b"], y)]
        if xi is not None:
            single.append((layout.pos[xi.local_name], np.ones(l)))
        if level is not None:
            single.append((layout.pos[level.local_name], -np.ones(l)))
        A = dense_rows(l, layout.n, [(layout.pos[f_var], f_matrix, y[:, None])], single)
    rhs = 0.0 if level is not None else 1.0
    group = RowGroup(None, [], A, np.full(l, rhs),
                     np.ones(l) if equality else np.full(l, INF))
    # the per-point members share one set of key objects (32 B a point per component)
    keys = member_dict(xi).keys() if xi is not None else None
    if isinstance(f, tuple):
        name, doc = f
        rows, var_list = FrozenRows(group, layout.pos[f_var], y), members(b.component(f_var))
        f = LazyExpression(b.I, recipe=lambda i: (_row_recipe, (rows, var_list, i)),
                           keys=keys, doc=doc)
        b.add_component(name, f)
    if keys is None and f.index_set() is b.I:
        keys = member_dict(f).keys()
    bias = b.b
    b.margin = LazyConstraint(
        b.I, recipe=lambda i: (_margin_relation,
                               (y, f[i], bias, None if xi is None else xi[i], i, equality,
                                level)),
        keys=keys,
        doc=f"margin: y_i (f(x_i) + b) {'=' if equality else '>='} "
            f"{'1' if level is None else level.local_name}"
            + (f" - {xi.local_name}_i" if xi is not None else ""))
    group.component, group.datas = b.margin, members(b.margin)
    return group


def _balance_relation(y, alpha):
    return linear_form(y, members(alpha)) == 0


def add_balance(b, layout: Layout, alpha, y: np.ndarray) -> RowGroup:
    """``balance:  sum_i y_i alpha_i = 0`` (lazy: its l terms are built when read)."""
    b.balance = LazyScalarConstraint(recipe=(_balance_relation, (y, alpha)),
                                     doc="balance: sum_i y_i alpha_i = 0")
    A = dense_rows(1, layout.n, [(layout.pos[alpha.local_name], y[None, :], 1.0)])
    return RowGroup(b.balance, [b.balance], A, np.zeros(1), np.zeros(1))


def place(blocks, m: int, n: int) -> sp.csr_matrix:
    """Assemble column blocks ``[(positions, m x k matrix)]`` into an m x n CSR matrix."""
    rows, cols, vals = [], [], []
    for pos, M in blocks:
        M = sp.coo_matrix(M)
        rows.append(M.row); cols.append(np.asarray(pos)[M.col]); vals.append(M.data)
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(m, n))


def dense_rows(m: int, n: int, dense, single=()) -> sp.csr_matrix:
    """An m x n CSR matrix made in place from dense column blocks and diagonals, without
    the COO temporaries of :func:`place` (at l = 10^6 those are several times the matrix).

    ``dense``: ``[(positions, M, scale)]``, ``M`` m x k (or its transpose's view) placed
    at the columns ``positions`` and multiplied by ``scale`` (a number, or an array that
    broadcasts against ``M``); ``single``: ``[(column, values)]``, one entry per row,
    ``values[i]`` at column ``column[i]`` of row i (``column`` of length m: a diagonal;
    of length 1: the same column in every row). Each row stores every entry of its blocks
    (exact zeros are dropped afterwards, in place)."""
    width = sum(len(pos) for pos, _, _ in dense) + len(single)
    itype = np.int32 if max(n, m * width) < np.iinfo(np.int32).max else np.int64
    data = np.empty((m, width))
    indices = np.empty((m, width), dtype=itype)
    col = 0
    for pos, M, scale in dense:
        k = len(pos)
        np.multiply(M, scale, out=data[:, col:col + k])
        indices[:, col:col + k] = pos
        col += k
    for pos, values in single:
        data[:, col] = values
        indices[:, col] = pos
        col += 1
    ordered = all(np.all(indices[a:a + 65536, 1:] > indices[a:a + 65536, :-1])
                  for a in range(0, m, 65536))
    indptr = np.arange(0, m * width + 1, width, dtype=itype)
    A = sp.csr_matrix((data.reshape(-1), indices.reshape(-1), indptr), shape=(m, n))
    del data, indices
    A.has_sorted_indices = ordered
    if not ordered:
        A.sort_indices()
    A.eliminate_zeros()
    return A


@dataclass(eq=False)
class QuadraticForm:
    """A quadratic form ``v'Mv`` as built: the Pyomo expression and its record."""

    expr: object
    blocks: list       # QuadBlocks whose sum is v'Mv
    rows: list         # RowGroups (factor form: z = F v)
    form: str          # "dense", "factor" or "diag"


def choose_form(quad_form: str, kernel: Kernel, l: int, d: int,
                max_vars: int | None = None) -> str:
    """Dense or factor form of a dual's quadratic form.

    ``auto`` takes the factor form (``l + r`` variables) for the linear kernel (``r = d``)
    when it is smaller than the dense form's ``l(l+1)/2`` terms, and for a poly kernel with
    exact features (its monomials, :func:`~svm_models.kernels.exact_factor_dim`) always --
    unless ``max_vars`` (the largest model the chosen backend takes,
    e.g. Gurobi's size-limited licence) admits the dense form's ``l`` variables but not the
    factor form's ``l + r``.
    """
    if check_choice("quad_form", quad_form, QUAD_FORMS) != "auto":
        return quad_form
    r = exact_factor_dim(kernel, l, d)
    if r is None:
        return "dense"
    if max_vars is not None and l <= max_vars < l + r:
        return "dense"
    if not kernel.is_linear:
        # a poly kernel's monomials: exact (PSD by construction, its certificate computed
        # through them) where its Gram matrix evaluated entry by entry is not
        return "factor"
    return "factor" if (r + 1) * l < l * (l + 1) / 2 else "dense"


def gram_if_needed(kernel: Kernel, data: Dataset, K, form: str):
    """The training Gram matrix, unless the kernel's exact factor suffices (the factor form of
    a kernel with an exact feature map: ``X`` itself for the linear kernel)."""
    if K is not None or (form == "factor"
                         and exact_factor_dim(kernel, data.n_points, data.n_features) is not None):
        return K
    return kernel.gram(data.X)


def declare_factor(b, r: int):
    """Aux variables ``z[k]`` of the factor form (declare before the layout is final)."""
    b.R = pyo.Set(initialize=range(r), ordered=True, doc="factor components k")
    b.z = pyo.Var(b.R, doc="z = F v: the factor image, so that v'Mv = ||z||^2")
    return b.z


def add_quadratic_form(b, layout: Layout, name: str, var, *, M: np.ndarray | None = None,
                       L: np.ndarray | None = None, y: np.ndarray | None = None,
                       doc: str = "") -> QuadraticForm:
    """``name = v'Mv`` for the variable ``var``: dense (lazy) when ``M`` is given, or via the
    factor ``M = F'F`` with ``F = L' D_y`` (``L`` l x r, ``z`` declared by
    :func:`declare_factor`) as ``sum_k z_k^2`` with constraints ``factor[k]: z_k = (F v)_k``."""
    vpos = layout.pos[var.local_name]
    if L is None:
        var_list = members(var)
        expr = LazyScalarExpression(recipe=(dense_quadratic_form, (M, var_list)), doc=doc)
        b.add_component(name, expr)
        return QuadraticForm(expr, [QuadBlock(vpos, matrix=M)], [], "dense")
    row = add_factor_rows(b, layout, var, L, y)
    expr = sum_of_squares(b, name, b.z, doc=doc + " (factor form: sum_k z_k^2)")
    return QuadraticForm(expr, [QuadBlock(layout.pos["z"], diag=np.ones(len(b.z)))], [row],
                         "factor")


def add_signed_kernel_form(b, layout: Layout, alpha, data: Dataset, kern: Kernel, K, form: str,
                           L: np.ndarray | None = None):
    """``quad = alpha' G(K) alpha`` (``G_ij = y_i y_j K_ij``) for a dual's variable ``alpha``
    (declared last in ``layout``), in the ``form`` :func:`choose_form` chose; returns
    ``(QuadraticForm, K, L, Lf)`` -- ``K`` what the model keeps of the Gram matrix (a
    :class:`~svm_models.model.built.SignedGram` of the lazily evaluated ``G``, the user's
    precomputed matrix, or None in the factor form), ``L`` the factor post-processing reads
    (``K = L L'``; None for the linear kernel, whose factor is X), ``Lf`` the factor of the
    factor form (None in the dense form).

    Factor form: ``a'G(K)a = ||F a||^2`` with ``F = L' D_y``, ``K = L L'`` (``L = X`` for the
    linear kernel, else ``L`` as given or the kernel's factor), ``z`` declared here. Dense
    form: the kernel matrix is kept once, as ``G = D_y K D_y``: the user's precomputed matrix
    signed (the dataset keeps it anyway), else evaluated where it is read (the support
    vectors' columns; the whole of it only for a backend that takes the dense matrix)."""
    yv = data.y
    doc = "alpha' G(K) alpha with G_ij = y_i y_j K_ij"
    if form == "factor":
        Lf, L = dual_factor(kern, data, K, L)
        declare_factor(b, Lf.shape[1])
        layout.add(b.z)
        return add_quadratic_form(b, layout, "quad", alpha, L=Lf, y=yv, doc=doc), K, L, Lf
    G, K = signed_gram(data, kern, K)
    return add_quadratic_form(b, layout, "quad", alpha, M=G, doc=doc), K, L, None


def dual_factor(kern: Kernel, data: Dataset, K, L: np.ndarray | None = None) -> tuple:
    """A factor-form dual's ``(Lf, L)``: ``Lf`` the factor its rows ``z = Lf'(y alpha)`` are
    made of (``L`` as given, else :func:`~svm_models.kernels.kernel_factor`: ``X`` for the
    linear kernel, a poly kernel's monomials), ``L`` the factor the post-processing reads
    (``Lf`` itself, kept, K never formed; None for the linear kernel, whose factor is X)."""
    Lf = kernel_factor(kern, data.X, K) if L is None else L
    return Lf, (L if kern.is_linear else Lf)


def signed_gram(data: Dataset, kern: Kernel, K) -> tuple:
    """A dense dual's ``(G, K)``: ``G = D_y K D_y`` -- the user's precomputed matrix signed,
    else evaluated where it is read (:class:`~svm_models.model.built.LazySignedGram`) -- and
    what the model keeps as its Gram matrix ``K`` (the precomputed matrix, or ``G`` read as
    ``K``: :class:`~svm_models.model.built.SignedGram`)."""
    from .built import LazySignedGram, SignedGram

    yv = data.y
    if kern.name == "precomputed":
        G = K * yv[:, None]
        G *= yv[None, :]
        return G, K
    G = LazySignedGram(kern, data.X, yv)
    return G, SignedGram(G, yv)


def add_factor_rows(b, layout: Layout, var, L: np.ndarray, y: np.ndarray) -> RowGroup:
    """``factor[k]:  z_k = (F v)_k`` with ``F = L' D_y`` for the variable ``var`` (``z``
    declared by :func:`declare_factor`), with the lazy images ``Fv[k]``; returns the row
    group. ``F`` is never formed: the rows are written from ``L`` (the data themselves for
    the linear kernel) and the labels, and the images ``Fv`` read them back
    (:class:`FrozenRows`)."""
    r = L.shape[1]
    vpos = layout.pos[var.local_name]
    A = factor_rows(layout.n, vpos, layout.pos["z"], L, y)
    group = RowGroup(None, [], A, np.zeros(r), np.zeros(r))
    rows, var_list = FrozenRows(group, vpos, -1.0), members(var)   # F_k = -(row k on v)
    b.Fv = LazyExpression(b.R, recipe=lambda k: (_row_recipe, (rows, var_list, k)),
                          doc="(F v)_k, the factor image of the variables")
    b.factor = pyo.Constraint(b.R, rule=_factor_rule, doc="factor: z_k = (F v)_k")
    group.component, group.datas = b.factor, members(b.factor)
    return group


def factor_rows(n: int, vpos: np.ndarray, zpos: np.ndarray, L: np.ndarray,
                y: np.ndarray) -> sp.csr_matrix:
    """The rows ``z_k - (F v)_k`` (``F = L' D_y``) over ``n`` variables, ``v`` at ``vpos``
    and ``z`` at ``zpos``: the factor form's rows as :func:`add_factor_rows` records them and
    an unbuilt dual's standard form holds them."""
    return dense_rows(L.shape[1], n, [(vpos, L.T, -y[None, :])], [(zpos, np.ones(L.shape[1]))])


def _factor_rule(m, k):
    """``factor[k]``'s relation ``z_k - (F v)_k == 0`` (a module-level rule: the model
    pickles)."""
    return m.z[k] - m.Fv[k] == 0


def sum_of_squares(b, name: str, var, doc: str, diag=None):
    """``name = sum_k var_k^2`` (``sum_k diag_k var_k^2``) as a lazy named expression."""
    expr = LazyScalarExpression(
        recipe=(diagonal_quadratic_form, (np.ones(len(var)) if diag is None else diag,
                                          members(var))), doc=doc)
    b.add_component(name, expr)
    return expr


def kernel_scale(kernel, data: Dataset, L: np.ndarray | None = None) -> float:
    """The scale of the training kernel matrix: the mean of its diagonal (``K = L L'`` when
    a factor is given), 1 for an all-zero diagonal. What the exact scaling of the classic
    SVMs divides the kernel by (:mod:`svm_models.model.scaling`)."""
    if L is not None:
        diag = np.einsum("ij,ij->i", L, L)
    else:
        diag = kernel.diagonal(data.X)
    k = float(np.mean(np.abs(diag))) if len(diag) else 0.0
    return k if k > 0 and np.isfinite(k) else 1.0


def low_rank(kernel, data: Dataset, kernel_rank):
    """``(LowRankKernel, LowRank)``: the kernel matrix of the training points factored as
    ``K ~= L L'`` of rank ``kernel_rank`` by pivoted incomplete Cholesky, without forming K
    (:func:`~svm_models.kernels.incomplete_cholesky`), and the kernel the model then uses."""
    lr = incomplete_cholesky(kernel, data.X, kernel_rank)
    return low_rank_kernel(kernel, data.X, lr), lr


def _abs_rule(sign, m, j):
    """``abs_hi[j]`` (sign 1) or ``abs_lo[j]`` (sign -1): ``t[j] -+ w[j] >= 0`` (a
    module-level rule: the model pickles)."""
    return m.t[j] - sign * m.w[j] >= 0


def add_abs_rows(b, layout, tpos, wpos, d: int) -> list:
    """``abs_hi[j]: t[j] - w[j] >= 0`` and ``abs_lo[j]: t[j] + w[j] >= 0`` over ``b.J`` --
    ``t[j] >= |w[j]|`` -- with their recorded rows (the 1-norm SVM's, feature selection's)."""
    import functools

    b.abs_hi = pyo.Constraint(b.J, rule=functools.partial(_abs_rule, 1.0),
                              doc="t[j] - w[j] >= 0")
    b.abs_lo = pyo.Constraint(b.J, rule=functools.partial(_abs_rule, -1.0),
                              doc="t[j] + w[j] >= 0")
    eye = sp.identity(d, format="csr")
    return [RowGroup(comp, members(comp), place([(tpos, eye), (wpos, -sign * eye)], d, layout.n),
                     np.zeros(d), np.full(d, INF))
            for comp, sign in ((b.abs_hi, 1.0), (b.abs_lo, -1.0))]

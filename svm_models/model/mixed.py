"""An edited model's standard form: the record for what it proves, Pyomo for what changed.

When :func:`~svm_models.model.record.verify` cannot prove a whole model -- a user's
constraint was added, a recorded row deactivated or rewritten, a variable fixed, a term added
to the objective, the SVM put inside a larger model with variables of its own -- the model is
still, for the most part, what the builder made. :func:`edits` proves that part member by
member and lists the rest; :func:`assemble_edited` builds the standard form from the
record's matrices for the proved part (the dense quadratic form never walked term by term)
and reads only the rest through Pyomo's own representation, as the general reader
(:func:`~svm_models.model.reader.from_pyomo`) does.

What is proved, and how:

* every recorded component is still on the block, every recorded set has its size, no
  recorded named expression changed (constraints and the objective refer to them), no
  recorded quadratic row, cone or row family changed, every recorded variable is continuous
  and no variable was added to a recorded one; otherwise there is no mixed form (the whole
  model is read);
* a recorded linear row is taken from the record while it is active and holds what the
  builder gave it; a deactivated one is left out; a rewritten one is read from the model;
* every active constraint that is not the builder's is read from the model;
* the objective: the recorded one, unchanged, from the record; an objective whose expression
  is the recorded expression with terms added after it (``obj.expr + t``, also as a new
  Objective of the same sense) from the record plus the added terms read; any other
  objective is read whole;
* a fixed variable is a variable whose bounds are its value (its value is kept as it is);
  variables outside the record that the read parts use are new columns (continuous ones
  only: a user's binary variable sends the model to the general reader, which classifies it
  as a mixed-integer problem).

Anything else (a non-continuous variable, a logical constraint, a non-polynomial term, a
quadratic part that is not convex on its own) leaves the model to the general reader.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from pyomo.core.base.constraint import Constraint
from pyomo.core.base.expression import Expression
from pyomo.core.base.objective import Objective
from pyomo.core.base.set import Set
from pyomo.core.expr.numeric_expr import SumExpression

from .lazy import first_changed, is_lazy_indexed
from .pyomo_compat import VAR_DOMAIN, VAR_FIXED, VAR_VALUE
from .reader import (NotQuadratic, _linear_matrix, _objective, _quadratic_rows, _read_rows,
                     _Variables)
from .record import (INERT_TYPES, NOT_RECORDED, _check_sizes, _unchanged, attribute,
                     recorded_token)
from .standard_form import StandardForm, assemble, bounds

INF = float("inf")


@dataclass(eq=False)
class Edits:
    """What :func:`edits` proved of an edited model (see the module docstring).

    ``keep``: one boolean mask per recorded row group, the rows taken from the record;
    ``read``: the constraints read from the model (rewritten recorded rows and the user's);
    ``objective``: the model's active objective; ``added``: the terms added after the
    recorded objective expression (None: the recorded objective as it is; ``whole``: the
    objective is read whole); ``fixed``: positions and values of fixed recorded variables."""

    keep: list
    read: list
    objective: object
    added: list | None = None
    whole: bool = False
    fixed: list = field(default_factory=list)


def edits(record) -> Edits | str:
    """The proved part and the edits of a model the record no longer proves whole, or -- a
    string -- why no mixed form is possible."""
    if record.problem_class not in ("LP", "QP", "SOCP", "QCQP"):
        return f"a {record.problem_class} record has no matrices"
    why = _wholes_changed(record)
    if why is not None:
        return why
    blk, comps = record.block, record.components
    whole = {id(q.data) for q in record.quad_rows} | {id(c.data) for c in record.cones}
    family_comps = {id(f.component) for f in record.families}
    grouped = {id(g.component) for g in record.rows}
    model = blk.model()
    recorded = {id(c) for c in comps.values()}
    read, objectives = [], []
    for comp in model.component_objects(active=True, descend_into=True):
        ctype = comp.ctype
        if ctype is Objective:
            objectives.extend(od for od in comp.values() if od.active)
        elif ctype is Constraint:
            if id(comp) not in recorded:
                read.extend(cd for cd in comp.values() if cd.active)
            elif id(comp) not in grouped and id(comp) not in family_comps:
                if any(id(d) not in whole for d in comp.values()):
                    return f"constraint {comp.name!r} is not one the record can take apart"
        elif ctype.__name__ not in INERT_TYPES:
            return f"{ctype.__name__} {comp.name!r} is not part of the recorded model"
    if len(objectives) != 1:
        return f"the model has {len(objectives)} active objectives"
    keep = []
    for g in record.rows:
        comp = g.component
        if comp.active and not (is_lazy_indexed(comp) and first_changed(comp, constraint=True)
                                ) and all(d.active and _unchanged(record, d) for d in
                                          _cheap_members(comp, g.datas)):
            keep.append(np.ones(len(g.datas), dtype=bool))
            continue
        mask = np.array([bool(comp.active and d.active and _unchanged(record, d))
                         for d in g.datas], dtype=bool)
        keep.append(mask)
        read.extend(d for d, k in zip(g.datas, mask) if not k and comp.active and d.active)
    vds = record.var_datas()
    if len(vds) != record.n_var_datas:
        return "variables were added to a recorded variable"
    doms = attribute(vds, VAR_DOMAIN)
    for k in [0] + [i + 1 for i, same in enumerate(map(operator.is_, doms[1:], doms[:-1]))
                    if not same] if vds else []:
        if not vds[k].is_continuous():
            return f"variable {vds[k].name} is not continuous"
    fixed = []
    if any(map(operator.attrgetter(VAR_FIXED), vds)):
        values = attribute(vds, VAR_VALUE)
        fixed = [(i, values[i]) for i, f in enumerate(attribute(vds, VAR_FIXED)) if f]
        if any(v is None for _, v in fixed):
            return "a fixed variable has no value"
    od = objectives[0]
    out = Edits(keep=keep, read=read, objective=od, fixed=fixed)
    sense = 1 if od.sense == 1 else -1
    if od is record.objective and _unchanged(record, od) and sense == record.sense:
        return out
    added = _added_terms(record, od.expr) if sense == record.sense else None
    if added is None:
        out.whole = True
    else:
        out.added = added
    return out


def _wholes_changed(record) -> str | None:
    """Why the parts of a record that a mixed form takes only whole -- its components, sets
    and named expressions, its quadratic rows, cones and row families -- are not as recorded
    (None: they are)."""
    blk = record.block
    for name, comp in record.components.items():
        if blk.component(name) is not comp:
            return f"component {name!r} was deleted or replaced"
        if comp.ctype is Set and len(comp) != record.set_sizes.get(name, len(comp)):
            return f"set {name!r} was changed"
        if comp.ctype is Expression:
            members = first_changed(comp) if is_lazy_indexed(comp) else comp.values()
            if any(not _unchanged(record, d) for d in members):
                return f"expression {comp.name!r} was changed"
    why = _check_sizes(record)
    if why is not None:
        return why
    for d in [q.data for q in record.quad_rows] + [c.data for c in record.cones]:
        if not (d.active and _unchanged(record, d)):
            return f"recorded constraint {d.name!r} was changed or deactivated"
    for f in record.families:   # its rows are the record's: every member as recorded
        comp = f.component
        members = (first_changed(comp, constraint=True) if is_lazy_indexed(comp)
                   else comp.values())
        if not comp.active or any(not (d.active and _unchanged(record, d)) for d in members):
            return f"row family {comp.name!r} was changed or deactivated"
    return None


def _cheap_members(comp, datas):
    """The members to check one by one: none for a lazy indexed component (checked in one
    pass by :func:`~svm_models.model.lazy.first_changed`), else the recorded ones."""
    return () if is_lazy_indexed(comp) else datas


def _recorded_expression(record):
    """The expression object the builder's objective held (None if never built)."""
    od = record.objective
    if hasattr(od, "is_pristine"):
        built = od._built
        return None if built is None else built[0]
    tok = recorded_token(record, od)
    return None if tok is NOT_RECORDED else tok[0]


def objective_scale(record) -> float | None:
    """The factor ``c`` with which the model's active objective holds the builder's objective
    expression E -- a linear combination ``c E + rest`` whose rest holds no E (E's own terms
    first, ``E + t``, count as ``1 E``; sums, negations, constant factors and divisions are
    read through) -- or None when it cannot be read (E not there, or inside another kind of
    expression). The model's duals (d(its objective)/d(bound)) are ``c`` times the
    formulation's, whose convention the extractors read (b, a primal's alpha): a user who
    minimises ``-E`` has them with the opposite sign, one who sums several SVMs' objectives
    has each as it is. 1 for the builder's objective as built, whatever its sense."""
    objectives = [od for od in record.block.model().component_data_objects(
        Objective, active=True, descend_into=True)]
    if len(objectives) != 1:
        return None
    od = objectives[0]
    if od is record.objective and _unchanged(record, od):
        return 1.0
    E = _recorded_expression(record)
    if E is None:
        return None
    try:
        c = _coefficient(od.expr, E)
    except _Unreadable:
        return None
    return c if c != 0.0 else None


class _Unreadable(Exception):
    """E sits in the objective in a way that is not a constant times E."""


def _coefficient(expr, E) -> float:
    """The coefficient of E in ``expr`` read as a linear combination (0: E is not in it);
    :class:`_Unreadable` when E is inside anything else."""
    from pyomo.core.expr.numeric_expr import (DivisionExpression, NegationExpression,
                                              ProductExpression)
    from pyomo.core.expr.numvalue import is_constant

    if expr is E:
        return 1.0
    if isinstance(expr, SumExpression):
        args = list(expr.args)
        c = 0.0
        if isinstance(E, SumExpression):   # E's own terms merged into the sum (E + t, t + E)
            head = E.args
            k = len(head)
            starts = [i for i, a in enumerate(args) if a is head[0]] if k else []
            for i in starts:
                if all(map(operator.is_, args[i:i + k], head)):
                    c, args = 1.0, args[:i] + args[i + k:]
                    break
        return c + sum(_coefficient(a, E) for a in args)
    if isinstance(expr, NegationExpression):
        return -_coefficient(expr.args[0], E)
    if isinstance(expr, ProductExpression):
        a, b = expr.args
        if is_constant(a):
            return float(a) * _coefficient(b, E)
        if is_constant(b):
            return float(b) * _coefficient(a, E)
    if isinstance(expr, DivisionExpression):
        a, b = expr.args
        if is_constant(b) and float(b) != 0.0:
            return _coefficient(a, E) / float(b)
    if _holds(expr, E):
        raise _Unreadable()
    return 0.0


def _holds(expr, E) -> bool:
    """Whether E is a subexpression of ``expr`` (named expressions and variables are leaves:
    E is never inside them, and a recorded quadratic form is never walked)."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if e is E:
            return True
        if getattr(e, "is_named_expression_type", lambda: False)() or not hasattr(e, "args"):
            continue
        if getattr(e, "is_variable_type", lambda: False)():
            continue
        stack.extend(a for a in e.args if hasattr(a, "args") or a is E)
    return False


def _added_terms(record, expr) -> list | None:
    """The terms after the recorded objective expression E in ``expr`` = E + t1 + ... (E's
    own terms first, the very objects), or None when ``expr`` is not of that shape."""
    E = _recorded_expression(record)
    if E is None:
        return None
    if expr is E:
        return []
    if not isinstance(expr, SumExpression):
        return None
    args = expr.args
    if isinstance(E, SumExpression):
        head = E.args
        if len(args) <= len(head) or not all(map(operator.is_, args[:len(head)], head)):
            return None
        return list(args[len(head):])
    if args[0] is E:
        return list(args[1:])
    return None


def assemble_edited(record, ed: Edits) -> StandardForm:
    """The standard form of the edited model (see the module docstring); raises
    :class:`~svm_models.model.reader.NotQuadratic` or
    :class:`~svm_models.model.reader.NotConvex` for a part the record cannot carry (the
    caller reads the whole model instead)."""
    base = assemble(record)
    n = base.n
    variables = _Variables()
    for vd in base.var_datas:
        variables.pos(vd)
    od = ed.objective
    sense = 1 if od.sense == 1 else -1
    if ed.whole:
        terms = [od.expr]
    else:
        terms = ed.added or []
    o_const, o_lin, o_quad = 0.0, [], []
    for t in terms:
        k, lin, quad = variables.read(t, f"the objective {od.name!r}")
        o_const += k
        o_lin.extend(lin)
        o_quad.extend(quad)
    lin_rows, quad_rows = _read_rows(ed.read, variables)
    extra = variables.datas[n:]
    discrete = next((v for v in extra if not v.is_continuous()), None)
    if discrete is not None:   # (a relaxation would be no answer to the model held)
        raise NotQuadratic(f"variable {discrete.name} is not continuous")
    n2 = n + len(extra)
    lx, ux = base.lx, base.ux
    if extra:
        elx, eux = bounds(extra)
        lx, ux = np.concatenate([lx, elx]), np.concatenate([ux, eux])
    else:
        lx, ux = lx.copy(), ux.copy()
    for i, v in ed.fixed:
        lx[i] = ux[i] = float(v)
    c_add, const_add, quad_add = _objective(od, sense, o_const, o_lin, o_quad, n2)
    if ed.whole:
        c, const, quad = c_add, const_add, quad_add
    else:   # the record's objective is in its sense, which is the model's (checked in edits)
        c = np.concatenate([base.c, np.zeros(n2 - n)]) + c_add
        const, quad = base.const + const_add, list(base.quad) + quad_add
    mask = np.concatenate(ed.keep + [np.ones(base.m - sum(len(k) for k in ed.keep), bool)]) \
        if ed.keep else np.ones(base.m, dtype=bool)
    A = base.A if mask.all() else base.A[np.flatnonzero(mask)]
    lA, uA = base.lA[mask], base.uA[mask]
    row_datas = [d for d, k in zip(base.row_datas, mask.tolist()) if k]
    if n2 > n:
        A = sp.hstack([A, sp.csr_matrix((A.shape[0], n2 - n))], format="csr")
    if lin_rows:
        A = sp.vstack([A, _linear_matrix(lin_rows, n2)], format="csr")
        lA = np.concatenate([lA, [r[2] for r in lin_rows]])
        uA = np.concatenate([uA, [r[3] for r in lin_rows]])
        row_datas = row_datas + [r[0] for r in lin_rows]
    qrows, cones = _quadratic_rows(quad_rows, lx, ux, n2)
    qrows = [_widen_qrow(q, n2) for q in base.qrows] + qrows
    cones = [_widen_cone(k, n2) for k in base.cones] + cones
    sf = StandardForm(sense=sense, c=c, const=float(const), quad=quad, A=sp.csr_matrix(A),
                      lA=np.asarray(lA, dtype=float), uA=np.asarray(uA, dtype=float), lx=lx,
                      ux=ux, qrows=qrows, var_datas=variables.datas, row_datas=row_datas,
                      cones=cones)
    sf.problem_class = sf.classify()
    return sf


def _widen_qrow(q, n2: int):
    if len(q.linear) == n2:
        return q
    from .forms import QuadRow

    return QuadRow(q.data, q.quad, np.concatenate([q.linear, np.zeros(n2 - len(q.linear))]),
                   q.upper, q.sign)


def _widen_cone(k, n2: int):
    if k.A.shape[1] == n2:
        return k
    from .forms import Cone

    A = sp.hstack([k.A, sp.csr_matrix((k.A.shape[0], n2 - k.A.shape[1]))], format="csr")
    return Cone(k.kind, A, k.b, k.data, k.row_scale)


__all__ = ["Edits", "edits", "assemble_edited", "objective_scale", "NotQuadratic"]

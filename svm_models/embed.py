r"""Embedding a trained SVM in another Pyomo model.

:func:`add_decision_function` adds the decision function of a solved SVM, as a function of
the user's own Pyomo inputs, to a block of the user's model (the pattern of
gurobi-machinelearning's ``add_*_constr``): a sub-block holding

.. math::

    \text{output} = f(x) = \sum_{i \in SV} c_i \, k(x_i, x) + b
    \qquad (\, w \cdot x + b \text{ when } w \text{ is known} \,)

and, optionally, a constraint requiring one class. It returns an :class:`EmbeddedSVM` that
knows what it created and checks the model's values against
:meth:`Solution.decision_function <svm_models.solution.Solution.decision_function>`.
:func:`optimize` solves such a model (any Pyomo model) with one of the library's backends.

The expression is the one ``decision_function`` evaluates: ``w`` when the solution has one
(linear kernel; R-SVM_mu+ on features, whose weighting mu is already inside ``w``), else the
kernel expansion over the support vectors with ``dual_coef`` (zero coefficients dropped) --
linear, ``poly`` (a power), ``rbf`` (``exp``), or R-SVM_mu+'s learned kernel sum
``sum_k mu_k k_k`` (linear members folded into one linear term).
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, replace

import numpy as np
import pyomo.environ as pyo
from pyomo.common.collections import ComponentMap
from pyomo.core.base.block import BlockData
from pyomo.core.base.var import VarData

from .errors import (DataError, InfeasibleError, LocallyInfeasibleError, ParameterError,
                     SolveFailedError, SVMError, plain)
from .kernels import KernelSum
from .model.built import single_record
from .model.reader import NotConvex, NotQuadratic, from_pyomo
from .solution import Solution
from .solvers import backend, capable
from .solvers.base import SolverOptions
from .solvers.dispatch import SolveInfo, solve_model
from .status import Status


@dataclass(eq=False)
class EmbeddedSVM:
    """What :func:`add_decision_function` created.

    Attributes
    ----------
    block : Block
        The sub-block holding the components below.
    output : Var
        The decision value f(x) (``block.output``, or the user's own variable).
    expression : Expression
        ``block.decision``: f(x) as an expression of the inputs.
    constraint : Constraint
        ``block.output_def``: ``output == decision``.
    require : Constraint or None
        ``block.require``: ``output >= margin`` (``classes[1]``) or ``<= -margin``
        (``classes[0]``); None when no class is required.
    inputs : list
        The input variables or expressions, one per feature, in feature order.
    solution : Solution
        The embedded SVM.
    linear : bool
        True when f is affine in the inputs (the model stays an LP/QP).
    """

    block: BlockData
    output: VarData
    expression: object
    constraint: object
    require: object
    inputs: list
    solution: Solution
    linear: bool

    def input_values(self) -> np.ndarray:
        """The values the inputs currently hold, shape (n_features,)."""
        x = [pyo.value(v, exception=False) for v in self.inputs]
        missing = [i for i, v in enumerate(x) if v is None]
        if missing:
            raise SVMError(f"input {missing[0]} ({self.inputs[missing[0]]}) has no value: "
                           "solve the model (or set the inputs' values) first")
        return np.asarray(x, dtype=float)

    def error(self) -> float:
        """``|output - solution.decision_function(x)|`` at the input values currently held.

        A self-check after a solve: it is of the order of the solver's feasibility tolerance
        (the embedded expression itself is exact to round-off).
        """
        out = self.output.value
        if out is None:
            raise SVMError(f"{self.output.name} has no value: solve the model first")
        f = self.solution.decision_function(self.input_values()[None, :])[0]
        return float(abs(out - f))


def add_decision_function(block, solution: Solution, inputs, *, name: str = "svm",
                          output=None, require=None, margin: float | None = None) -> EmbeddedSVM:
    """Add the decision function of ``solution`` at ``inputs`` to ``block``.

    Parameters
    ----------
    block : Pyomo block (a ``ConcreteModel`` or a block data)
        The model to add to; the components go into a new sub-block ``block.<name>``.
    solution : Solution
        A solved SVM (status optimal), of any formulation and kernel except
        ``precomputed`` (its kernel cannot be evaluated at a new point).
    inputs : indexed Var / Expression, or a sequence of Vars, expressions or numbers
        x, one entry per feature the SVM was trained on, in feature order.
    name : str
        Name of the sub-block (distinct names embed several SVMs in one model).
    output : scalar Var, optional
        A variable of the user's to hold f(x); by default ``block.<name>.output`` is created.
    require : label, optional
        One of ``solution.classes``: constrain f(x) >= margin for ``classes[1]``, or
        f(x) <= -margin for ``classes[0]`` (``predict`` says ``classes[1]`` where f >= 0, so
        ``classes[0]`` is guaranteed only with ``margin > 0``).
    margin : float >= 0, optional
        The margin of ``require`` (default 0.0; only with ``require``).

    Returns
    -------
    EmbeddedSVM
        The components created, and :meth:`EmbeddedSVM.error` for a self-check.

    Raises
    ------
    ParameterError
        ``block``, ``solution``, ``name``, ``output``, ``require`` or ``margin`` unusable,
        or a precomputed kernel.
    DataError
        ``inputs`` of the wrong length or kind.
    SolveFailedError
        The solution's solve did not end optimal.

    Notes
    -----
    Linear kernels (and solutions with ``w``) give linear constraints; ``poly`` and ``rbf``
    give nonlinear ones (a local NLP solver such as Ipopt finds a local optimum).
    """
    if not isinstance(block, BlockData):
        how = (" (an indexed block: pass one of its elements, block[i])"
               if isinstance(block, pyo.Block) else "")
        raise ParameterError(f"block must be a Pyomo block or ConcreteModel; got "
                             f"{type(block).__name__}{how}")
    if not isinstance(solution, Solution):
        raise ParameterError(f"solution must be an svm_models.Solution (from svm_models.fit, "
                             f"solve or extract); got {type(solution).__name__}")
    if solution.status is not Status.optimal or not np.isfinite(solution.b):
        raise SolveFailedError(f"the solution's solve ended {solution.status.value}: it has no "
                               "decision function to embed; fit again until it ends optimal",
                               solution.status)
    if solution.kernel.name == "precomputed":
        raise ParameterError("a precomputed kernel cannot be embedded: f(x) needs k(x_i, x) at "
                             "the model's inputs x, and only your own kernel function knows it; "
                             "fit with a named kernel (linear, poly, rbf) to embed the SVM")
    if not isinstance(name, str) or not name.isidentifier():
        raise ParameterError(f"name must be a Python identifier; got {name!r}")
    if block.component(name) is not None:
        raise ParameterError(f"{block.name!r} already has a component named {name!r}: embed "
                             "with another name=")
    if output is not None and not (isinstance(output, VarData) and not output.is_indexed()):
        raise ParameterError(f"output must be a scalar Pyomo Var (or element of an indexed "
                             f"Var); got {type(output).__name__}")
    sense = _require_sense(solution, require, margin)
    margin = 0.0 if margin is None else float(margin)
    x = _input_list(inputs, _n_features(solution))

    expr, linear = _decision_expr(solution, x)
    sub = pyo.Block(doc=f"the decision function of a {solution.formulation} SVM")
    block.add_component(name, sub)
    sub.decision = pyo.Expression(expr=expr, doc="f(x) = sum_i c_i k(x_i, x) + b (w.x + b)")
    if output is None:
        sub.output = pyo.Var(initialize=pyo.value(expr, exception=False),
                             doc="the decision value f(x)")
        output = sub.output
    sub.output_def = pyo.Constraint(expr=output == sub.decision, doc="output == f(x)")
    if sense is not None:
        sub.require = pyo.Constraint(
            expr=output >= margin if sense > 0 else output <= -margin,
            doc=(f"f(x) {'>=' if sense > 0 else '<='} {sense * margin + 0.0:g}: "
                 f"class {plain(require)!r}"))
    return EmbeddedSVM(block=sub, output=output, expression=sub.decision,
                       constraint=sub.output_def, require=sub.component("require"), inputs=x,
                       solution=solution, linear=linear)


def optimize(model, solver: str = "ipopt", *, starts=None, seed: int = 0,
             **options) -> SolveInfo:
    """Solve a Pyomo model of your own (with SVMs embedded, or any other) with a backend.

    The problem class (LP, QP, QCQP or NLP, from the polynomial degree of the active
    objective and constraints) is checked against the backend before anything runs.
    ``options`` are the solver options of :func:`svm_models.solve` (``tol``, ``time_limit``,
    ``iter_limit``, ``threads``, ``verbose``, ``options``). Values are loaded into the model.

    Parameters
    ----------
    starts : int, sequence of starting points, or None
        Multi-start, for a local solver (Ipopt) on a model not proved convex (an embedded
        ``poly`` or ``rbf`` SVM): each start is solved and the best optimal end (the best
        objective in the model's sense) is loaded. An int ``k``: the values the model holds,
        then ``k - 1`` points drawn with ``numpy.random.default_rng(seed)`` (a variable with
        both bounds uniformly between them; any other about the value it holds, normal with
        standard deviation ``max(1, |value|)``, kept within its bound). A sequence: one
        start per point, each a sequence of ``(variable, value)`` pairs or a Pyomo
        ``ComponentMap`` (Pyomo variables are not hashable: a ``dict`` cannot hold them); an
        indexed variable takes a sequence of values in index order, and the variables a
        point leaves out start from the values the model holds. None (the default) or 1: one solve from the values the model
        holds. A global solver, or a model proved convex (LP, convex QP/QCQP), is solved
        once, whatever ``starts`` says: its optimum is global. ``time_limit`` bounds all the
        starts together.
    seed : int
        The seed of the drawn starts (the same seed draws the same points).

    Returns
    -------
    SolveInfo
        ``status``, ``solver``, ``interface``, ``time``, ``objective``, ``duals``; after
        several starts, of the best one (``message`` says which, of how many).

    Raises
    ------
    ParameterError
        Not a Pyomo model, not exactly one active objective, or bad ``starts``/``seed``.
    CapabilityError
        The backend cannot take the model's problem class; or it is a local solver and the
        model is quadratic and proved non-convex (an embedded ``poly`` SVM of degree 2:
        use gurobi or scip). Models with ``exp`` or higher powers go to a local NLP solver,
        whose local optimum counts as optimal.
    LocallyInfeasibleError
        A local solver found no feasible point from any start, on a model whose feasible
        set is not proved convex (status ``locally_infeasible``): not a proof; more
        ``starts``, starts inside the feasible region, or a global solver may find one.
    InfeasibleError
        The model is proved infeasible (a global solver, or a convex feasible set).
    SolveFailedError
        The solve did not end optimal otherwise.
    """
    if not isinstance(model, BlockData):
        raise ParameterError(f"optimize takes a Pyomo model; got {type(model).__name__}")
    n_obj = sum(1 for _ in model.component_data_objects(pyo.Objective, active=True))
    if n_obj != 1:
        raise ParameterError(f"optimize needs exactly one active objective; the model has "
                             f"{n_obj} (add one with pyo.Objective, or deactivate the others)")
    opts = SolverOptions.from_kwargs(**options)
    b = backend(solver)
    points = _starts(model, starts, seed)
    if len(points) > 1 and (b.global_opt or _proved_convex(model)):
        points = points[:1]   # one optimum, global: the other starts would find it again
    ends = _solve_from(model, solver, points, opts)
    best = _best(model, ends)
    if best is not None:
        return best
    return _raise_failure(model, b, [info for info, _ in ends])


# ---------------------------------------------------------------------------------------
# Starting points, solves, and what their ends say


def _free_vars(model) -> list:
    return [v for v in model.component_data_objects(pyo.Var, active=True, descend_into=True)
            if not v.fixed]


def _starts(model, starts, seed) -> list:
    """The starting points, each a ComponentMap {VarData: value} (empty: the values held)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ParameterError(f"seed must be an integer; got {plain(seed)!r}")
    if starts is None:
        return [ComponentMap()]
    if isinstance(starts, numbers.Integral) and not isinstance(starts, bool):
        if starts < 1:
            raise ParameterError(f"starts must be at least 1; got {plain(starts)!r}")
        rng = np.random.default_rng(seed)
        free = _free_vars(model)
        return [ComponentMap()] + [ComponentMap((v, _draw(v, rng)) for v in free)
                                   for _ in range(int(starts) - 1)]
    if isinstance(starts, (str, bytes, dict)) or not hasattr(starts, "__iter__"):
        raise ParameterError(f"starts must be a number of starts or a sequence of starting "
                             f"points; got {type(starts).__name__}")
    points = [_start_point(p, k) for k, p in enumerate(starts)]
    if not points:
        raise ParameterError("starts is empty: give at least one starting point")
    return points


def _draw(v, rng) -> float:
    lb, ub = v.lb, v.ub
    if lb is not None and ub is not None:
        return float(rng.uniform(lb, ub))
    held = 0.0 if v.value is None else float(v.value)
    x = held + max(1.0, abs(held)) * float(rng.standard_normal())
    if lb is not None and x < lb:   # one finite bound: reflected into the domain
        x = lb + (lb - x)
    if ub is not None and x > ub:
        x = ub - (x - ub)
    return x


def _start_point(point, k: int) -> ComponentMap:
    pairs = point.items() if hasattr(point, "items") else point
    try:
        pairs = [(var, value) for var, value in pairs]
    except (TypeError, ValueError):
        raise ParameterError(f"starts[{k}] must be a ComponentMap {{variable: value}} or a "
                             f"sequence of (variable, value) pairs; got "
                             f"{type(point).__name__}") from None
    out = ComponentMap()
    for var, value in pairs:
        if isinstance(var, pyo.Var) and var.is_indexed():
            datas = list(var.values())
            values = np.asarray(value, dtype=float).ravel()
            if values.size != len(datas):
                raise ParameterError(f"starts[{k}][{var.name}] has {values.size} values; "
                                     f"{var.name} has {len(datas)} entries")
            out.update(zip(datas, values.tolist()))
        elif isinstance(var, VarData):
            out[var] = float(value)
        else:
            raise ParameterError(f"starts[{k}] has a key {var!r} that is not a Pyomo variable")
    return out


def _solve_from(model, solver: str, points: list, opts: SolverOptions) -> list:
    """Each start solved in the time left: [(SolveInfo, its values or None)], the
    values of an optimal end kept (the model holds the last start's)."""
    held = ComponentMap((v, v.value) for v in _free_vars(model))
    seconds, t0, ends = opts.seconds, time.perf_counter(), []
    for k, point in enumerate(points):
        run = opts
        if k and seconds is not None:
            left = seconds - (time.perf_counter() - t0)
            if left <= 0:
                break
            run = replace(opts, time_limit=left)
        if k:
            for v, value in held.items():
                v.set_value(value, skip_validation=True)
        for v, value in point.items():
            v.set_value(value, skip_validation=True)
        # one SVM of the library's inside: its record carries the proved part (fast or mixed)
        info = solve_model(model, solver, record=single_record(model),
                           problem_class=_problem_class(model), options=run)
        values = (ComponentMap((v, v.value) for v in held) if info.status is Status.optimal
                  else None)
        ends.append((info, values))
    return ends


def _best(model, ends: list):
    """The optimal end of the best objective (model's sense), its values loaded; or None."""
    optimal = [(info, values) for info, values in ends if values is not None]
    if not optimal:
        return None
    obj = next(model.component_data_objects(pyo.Objective, active=True))
    sign = 1.0 if obj.sense == pyo.minimize else -1.0

    def value(end):
        for v, x in end[1].items():
            v.set_value(x, skip_validation=True)
        return sign * pyo.value(obj.expr)

    scores = [value(end) for end in optimal]
    info, values = optimal[int(np.argmin(scores))]
    for v, x in values.items():
        v.set_value(x, skip_validation=True)
    if len(ends) > 1:
        k = next(k for k, end in enumerate(ends) if end[0] is info)
        own = "" if info.message in ("", info.status.value) else f"; {info.message}"
        info.message = (f"start {k + 1} of {len(ends)}, the best of {len(optimal)} optimal "
                        f"ends{own}")
    return info


def _raise_failure(model, b, infos: list):
    """The typed error for starts none of which ended optimal."""
    first = infos[0]
    local = [i for i in infos if i.status is Status.infeasible]
    if local and len(local) == len(infos) and not _infeasibility_proved(model, b):
        for i in local:
            i.status = Status.locally_infeasible
        many = (f"from any of the {len(infos)} starts" if len(infos) > 1
                else "from where it started")
        global_ = [n for n in capable(_problem_class(model)) if backend(n).global_opt]
        said = "" if first.message in ("", "infeasible") else f" ({first.message})"
        raise LocallyInfeasibleError(
            f"{b.name} found no feasible point {many}: the model is locally infeasible"
            f"{said}. {b.name} is a local solver and the model is not proved "
            "convex, so this is no proof that it is infeasible: start elsewhere "
            "(optimize(..., starts=k) tries k starting points, or give starts inside the "
            "feasible region)" + (f", or use a global solver ({', '.join(global_)})"
                                  if global_ else ""), Status.locally_infeasible)
    if first.status in (Status.infeasible, Status.infeasible_or_unbounded):
        raise InfeasibleError(f"the model is {first.status.value.replace('_', ' ')} "
                              f"({first.message})", first.status)
    said = "; ".join(f"{i.status.value} ({i.message})" for i in infos)
    raise SolveFailedError(f"the solver stopped without an optimal solution: {said}",
                           first.status)


def _infeasibility_proved(model, b) -> bool:
    """Whether a report of infeasibility is a proof: a global solver, or a convex feasible
    set (every active row linear, or the model proved convex), where a local solver's point
    of least infeasibility is a global one."""
    if b.global_opt:
        return True
    rows = model.component_data_objects(pyo.Constraint, active=True, descend_into=True)
    if all(c.body.polynomial_degree() in (0, 1) for c in rows):
        return True
    return _proved_convex(model)


def _proved_convex(model) -> bool:
    """Whether the reader proves the model an LP, a convex QP/QCQP or an SOCP."""
    try:
        from_pyomo(model)
    except (NotConvex, NotQuadratic):
        return False
    return True


# ---------------------------------------------------------------------------------------


def _problem_class(model) -> str:
    """LP, QP, QCQP or NLP, from the polynomial degrees of the active rows and objective."""
    def degree(e):
        d = e.polynomial_degree() if hasattr(e, "polynomial_degree") else 0
        return 3 if d is None else d

    rows = max((degree(c.body) for c in model.component_data_objects(
        pyo.Constraint, active=True, descend_into=True)), default=0)
    obj = max((degree(o.expr) for o in model.component_data_objects(
        pyo.Objective, active=True, descend_into=True)), default=0)
    if rows > 2 or obj > 2:
        return "NLP"
    return "QCQP" if rows == 2 else "QP" if obj == 2 else "LP"


def _n_features(solution: Solution) -> int:
    return solution.w.shape[0] if solution.w is not None else solution.support_vectors.shape[1]


def _require_sense(solution: Solution, require, margin) -> int | None:
    if margin is not None:
        if require is None:
            raise ParameterError("margin applies to a required class: pass require=<label> too")
        if not isinstance(margin, numbers.Real) or not np.isfinite(margin) or margin < 0:
            raise ParameterError(f"margin must be a finite number >= 0; got {plain(margin)!r}")
    if require is None:
        return None
    classes = solution.classes.tolist()
    if require not in classes:
        raise ParameterError(f"require={plain(require)!r} is not a class of this SVM; its "
                             f"classes are {classes}")
    return 1 if require == classes[1] else -1


def _input_list(inputs, d: int) -> list:
    if getattr(inputs, "is_numeric_type", lambda: False)() and not inputs.is_indexed():
        inputs = [inputs]   # one scalar variable or expression: a one-feature SVM
    if isinstance(inputs, (str, bytes, dict)) or not hasattr(inputs, "__iter__"):
        raise DataError(f"inputs must be an indexed Var or a sequence of {d} Pyomo variables or "
                        f"expressions (one per feature); got {type(inputs).__name__}")
    if getattr(inputs, "is_indexed", lambda: False)():
        if not inputs.index_set().isordered():
            raise DataError(f"{inputs.name} is indexed by an unordered set: pass a list of its "
                            "elements in feature order")
        x = list(inputs.values())
    else:
        x = list(np.asarray(inputs, dtype=object).ravel()) if isinstance(inputs, np.ndarray) \
            else list(inputs)
    if len(x) != d:
        raise DataError(f"inputs has {len(x)} entries; the SVM was trained on {d} features "
                        "(one input per feature, in the training order)")
    for j, v in enumerate(x):
        numeric = isinstance(v, numbers.Real) and not isinstance(v, bool)
        pyomo_scalar = getattr(v, "is_numeric_type", lambda: False)() and not (
            getattr(v, "is_indexed", lambda: False)())
        if not (numeric or pyomo_scalar):
            raise DataError(f"input {j} is {type(v).__name__}: each input must be a scalar "
                            "Pyomo variable, expression or number")
    return x


def _decision_expr(solution: Solution, x: list):
    """f(x) as a Pyomo expression, and whether it is affine in x."""
    if solution.w is not None:
        return _affine(solution.w, x) + solution.b, True
    c = solution.dual_coef[solution.support]
    keep = c != 0.0
    c, sv = c[keep], solution.support_vectors[keep]
    members = (list(zip(solution.kernel.weights, solution.kernel.kernels))
               if isinstance(solution.kernel, KernelSum) else [(1.0, solution.kernel)])
    w = np.zeros(sv.shape[1])
    terms = []
    for weight, kern in members:
        if weight == 0.0:
            continue
        if kern.name == "linear":   # sum_i c_i x_i.x = (sum_i c_i x_i).x
            w += float(weight) * (c @ sv)
        elif kern.name in ("poly", "rbf"):
            terms += [float(weight * ci) * _kernel_at(kern, s, x) for ci, s in zip(c, sv)]
        else:
            raise ParameterError(f"a {kern.name!r} kernel cannot be embedded (linear, poly and "
                                 "rbf kernels, and sums of them, can)")
    expr = pyo.quicksum(terms) + solution.b
    if np.any(w != 0.0):
        expr = expr + _affine(w, x)
    return expr, not terms


def _affine(w: np.ndarray, x: list):
    return pyo.quicksum(float(wj) * xj for wj, xj in zip(w, x) if wj != 0.0)


def _kernel_at(kern, s: np.ndarray, x: list):
    if kern.name == "poly":
        return (kern.gamma * _affine(s, x) + kern.coef0) ** kern.degree
    return pyo.exp(-kern.gamma * pyo.quicksum((xj - float(sj)) ** 2 for sj, xj in zip(s, x)))

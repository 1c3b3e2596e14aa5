"""What a formulation is: one object of the public base class :class:`Formulation`, registered.

A formulation declares what the layers above ask of it -- its name, form, problem class,
summary and builder (whose keyword-only parameters are its parameters, declared in
:mod:`svm_models.formulations.params` or by the formulation itself, :attr:`Formulation.declares`)
-- and answers for its solutions: :meth:`Formulation.extract` reads a solved block into a
:class:`~svm_models.solution.Solution`. Everything else is a hook with a default: the
questions the estimator, cross-validation, the command line and ``fit`` ask (``hard_margin``,
``learns_C``, ``learned``, ``other_form``, ...: class attributes), and the methods
``check_before_solve``, ``explain_failure``, ``licence_hint``, ``warm_start``,
``indicator_rows``, ``unbuilt``.

It is registered by the decorator :func:`register` (on a subclass, which is instantiated, or
on an instance); a package outside ``svm_models`` registers its own through the entry-point
group ``svm_models.formulations`` (its value a module whose import registers, or a
Formulation subclass or instance), Python's plugin convention -- as OMLT's formulation
objects and gurobi-machinelearning's ``register_predictor_constr`` do. The registry
(:mod:`svm_models.formulations`) loads the package's own family modules and the entry points
the first time it is asked.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, NamedTuple

from ..errors import ParameterError
from ..model.standard_form import PROBLEM_CLASSES
from ..solution import DETAILS
from .params import PARAMS, Param

#: the registered formulations by name, in registration order (filled by :func:`register`)
REGISTRY: dict[str, "Formulation"] = {}
#: called with each formulation as it is registered (the estimator's parameters follow)
LISTENERS: list[Callable] = []

FORMS = ("primal", "dual")


class IndicatorRow(NamedTuple):
    """One row a binary switches, as a formulation's :meth:`Formulation.indicator_rows`
    names it for ``switch="indicator"`` (the solver layer reads the fields by name; it never
    imports this class).

    row : the Pyomo ConstraintData that holds the big-M row (left in the Pyomo model; the
        solver interface replaces it in the native model only);
    binary : its binary VarData;
    on : the value of ``binary`` (0 or 1) at which the row is enforced;
    terms : ``((VarData, coefficient), ...)``: the row's linear part without its M term;
    rhs : the enforced row reads ``sum(coefficient * var) >= rhs``.
    """

    row: Any
    binary: Any
    on: int
    terms: tuple
    rhs: float


class Formulation:
    """A formulation: declared attributes, a builder, an extractor and hooks with defaults.

    Declare the attributes as class attributes of a subclass, or as keyword arguments of the
    constructor (a family module registers several formulations of one subclass that way).

    Attributes
    ----------
    name : str
        The registered name (``"soft_l1_dual"``): ``svm_models.build(name, X, y)``.
    builder : callable
        ``builder(X, y, *, <parameters>, block=None) -> Block``: fills ``block`` (or a new
        ConcreteModel) from the shared pieces and seals its record; its keyword-only
        parameters (``block`` aside) are the formulation's parameters (:attr:`params`), their
        defaults the signature's (:attr:`defaults`).
    family : str
        The family (its catalogue's family page; listings); default: the name.
    form : ``"primal"`` or ``"dual"``.
    problem_class : one of ``LP``, ``QP``, ``SOCP``, ``QCQP``, ``NLP``, ``MILP``, ``MIQP``.
    summary : str
        One line for listings.
    declares : tuple of :class:`~svm_models.formulations.params.Param`
        The parameters it brings that no other formulation declared (``nu``): meaning,
        domain, check, kernels, command-line flag. Registered with it; a name declared twice
        must be declared alike.
    details : type or None
        The dataclass of the details it adds to a Solution (:attr:`Solution.details`).
    margin : :class:`~svm_models.model.forms.Margin` or None
        What its margins are (hard, a box ``C_i``, a ridge ``I/C``, a level ``rho`` of its
        own): with it the library's readers -- b and rho from the active rows
        (:func:`~svm_models.postprocess.levels`), the polish of a dual
        (:func:`~svm_models.postprocess.polish_dual`) and the certificate of the classifier
        returned (:func:`~svm_models.postprocess.margin_certificate`) -- read its answers;
        None: it reads them its own way (in ``extract``).

    The questions the layers above ask, with their defaults (a formulation answers those
    that apply to it): ``hard_margin`` (no C: inseparable data have no solution),
    ``learns_C`` (C is learned: ``C_`` after a fit), ``C_none_is_hard`` (``C=None`` builds its
    own hard margin), ``hard_at_infinite_C`` (the formulation ``C=inf`` is built as),
    ``other_form`` (the same optimum in the other form), ``classic_at_learned_C`` (the classic
    SVM refitted at the learned C), ``learned`` (the values it learns besides w and b, as
    ``Solution.details`` names them: the estimator's ``<name>_`` attributes),
    ``all_pairs_default`` (its default pair set is every pair as variables).
    """

    name: str = ""
    builder: Callable | None = None
    family: str = ""
    form: str = "primal"
    problem_class: str = "QP"
    summary: str = ""
    declares: tuple = ()
    details: type | None = None
    margin: object = None
    hard_margin: bool = False
    learns_C: bool = False
    C_none_is_hard: bool = False
    hard_at_infinite_C: str | None = None
    other_form: str | None = None
    classic_at_learned_C: str | None = None
    learned: tuple = ()
    all_pairs_default: bool = False

    #: what a formulation declares (class attributes, or the constructor's keywords)
    DECLARED = ("name", "builder", "family", "form", "problem_class", "summary", "declares",
                "details", "margin", "hard_margin", "learns_C", "C_none_is_hard", "hard_at_infinite_C",
                "other_form", "classic_at_learned_C", "learned", "all_pairs_default")

    def __init__(self, **declared):
        for key, value in declared.items():
            if key not in self.DECLARED:
                raise ParameterError(f"{type(self).__name__}: {key!r} is not something a "
                                     f"formulation declares (one of {', '.join(self.DECLARED)})")
            setattr(self, key, value)
        if "builder" not in declared:   # a function given as a class attribute: not a method
            builder = inspect.getattr_static(type(self), "builder")
            self.builder = builder.__func__ if isinstance(builder, staticmethod) else builder
        self.family = self.family or self.name
        self._check()

    def _check(self) -> None:
        who = f"formulation {self.name!r}"
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ParameterError(f"a formulation's name must be an identifier; got {self.name!r}")
        if not callable(self.builder):
            raise ParameterError(f"{who} has no builder: give builder=function(X, y, *, ...)")
        if self.form not in FORMS:
            raise ParameterError(f"{who}: form must be one of {', '.join(FORMS)}; got "
                                 f"{self.form!r}")
        if self.problem_class not in PROBLEM_CLASSES:
            raise ParameterError(f"{who}: problem_class must be one of "
                                 f"{', '.join(PROBLEM_CLASSES)}; got {self.problem_class!r}")
        if type(self).extract is Formulation.extract:
            raise ParameterError(f"{who} does not define extract(block, ctx): how its "
                                 "solved block is read into a Solution")

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.name!r}: {self.form}, {self.problem_class}, "
                f"params {', '.join(self.params) or 'none'}>")

    # -- parameters, derived ------------------------------------------------------------
    @functools.cached_property
    def params(self) -> tuple[str, ...]:
        """The builder's keyword-only parameters (``block`` aside), in its signature's order."""
        sig = inspect.signature(self.builder).parameters.values()
        return tuple(p.name for p in sig if p.kind is p.KEYWORD_ONLY and p.name != "block")

    @property
    def spec(self) -> tuple[Param, ...]:
        """Its parameters, declared (meaning, domain, the kernels that use each, the
        command-line flag), in the builder's order."""
        return tuple(PARAMS[p] for p in self.params)

    @property
    def defaults(self) -> dict:
        """Each parameter's default, read from the builder's signature (one place)."""
        sig = inspect.signature(self.builder).parameters
        return {p: sig[p].default for p in self.params}

    @property
    def module(self) -> str:
        """The module that holds its builder (its family's catalogue page is ``<module>.md``)."""
        return self.builder.__module__.rsplit(".", 1)[-1]

    @property
    def generates_pairs(self) -> bool:
        """Its pair rows can be grown by constraint generation (a primal that takes
        ``pairs``: :func:`svm_models.methods.radius.generate_pairs`)."""
        return "pairs" in self.params and self.form == "primal"

    # -- what it does -------------------------------------------------------------------
    def build(self, X, y, *, block=None, **params):
        """The model: ``builder(X, y, block=block, **params)``."""
        return self.builder(X, y, block=block, **params)

    def extract(self, block, ctx):
        """The solved block read into a :class:`~svm_models.solution.Solution` (values, b,
        the support set, the certificate of exactly what is returned). ``ctx`` is the
        solve's :class:`~svm_models.postprocess.Context` (solver, status, duals, whether the
        model is still the formulation: ``ctx.verified``)."""
        raise NotImplementedError

    # -- hooks, with their defaults ------------------------------------------------------
    def check_before_solve(self, svm, *, proves_unbounded: bool) -> None:
        """Refuse before any solve (the hard margin: inseparable data, when the backend
        cannot prove the dual unbounded). Default: nothing to refuse."""

    def explain_failure(self, svm, status, message: str):
        """The formulation's reading of a solve that did not end optimal (an
        :class:`~svm_models.errors.SVMError`), or None. Default: None."""
        return None

    def licence_hint(self, svm) -> str:
        """What to add to a size-limited licence's refusal (a smaller form of the same
        model). Default: nothing."""
        return ""

    def warm_start(self, svm, fit_convex) -> dict:
        """A start for the solver (the mixed-integer SVMs: the convex SVM's solution,
        rounded into a feasible point): set the block's variables only when every row holds
        there and return ``{"objective": ..., ...}``, or ``{"objective": None, "why": ...}``.
        ``fit_convex(formulation, X, y, **params)`` fits a convex neighbour. A formulation
        that does not override it has no start (:meth:`has`)."""
        raise NotImplementedError

    def indicator_rows(self, svm) -> list:
        """The rows its binaries switch with a proved big-M (:class:`IndicatorRow`), for
        ``switch="indicator"``; a formulation that does not override it is refused that
        switch (:meth:`has`)."""
        raise NotImplementedError

    def unbuilt(self, X, y, **params):
        """The problem as data, without its Pyomo model, for a structured backend to solve
        when nobody has asked for the model (:func:`svm_models.fit`); the model is built
        from the same data when it is read (``Solution.model``). An object with ``svm`` (the
        :class:`~svm_models.model.built.BuiltSVM`, no block), ``record`` (its
        ``structure``), ``form`` (the standard form) and ``extract(ctx, x)`` (the Solution
        at the point ``x``, certified as :meth:`extract` certifies), or None where this
        build has no such form (then it is built). A formulation that does not override it
        is always built (:meth:`has`)."""
        raise NotImplementedError

    def has(self, hook: str) -> bool:
        """Whether it overrides the optional hook ``hook`` (``warm_start``,
        ``indicator_rows``, ``unbuilt``)."""
        return getattr(type(self), hook) is not getattr(Formulation, hook)


def register(formulation=None, *, replace: bool = False):
    """Register a formulation: a :class:`Formulation` instance, or a subclass (instantiated
    with no arguments); usable as a decorator on the subclass. Returns what it was given.

    ``replace``: allow a name registered before to be replaced (else ParameterError). Its
    :attr:`~Formulation.declares` are added to the declared parameters (a name declared
    before must be declared alike)."""
    if formulation is None:
        return lambda f: register(f, replace=replace)
    f = formulation() if isinstance(formulation, type) else formulation
    if not isinstance(f, Formulation):
        raise ParameterError(f"register takes a Formulation (subclass or instance); got "
                             f"{type(formulation).__name__}")
    if f.name in REGISTRY and not replace:
        raise ParameterError(f"a formulation named {f.name!r} is registered already "
                             "(register(..., replace=True) replaces it)")
    for p in f.declares:
        if p.name in PARAMS and PARAMS[p.name] != p:
            raise ParameterError(f"formulation {f.name!r} declares the parameter {p.name!r}, "
                                 "which is declared already, differently; use the declared "
                                 "one or another name")
    undeclared = [p for p in f.params if p not in PARAMS and p not in {d.name for d in f.declares}]
    if undeclared:
        raise ParameterError(f"formulation {f.name!r} takes {', '.join(undeclared)}, which no "
                             "Param declares: give them in declares=(Param(...), ...)")
    for p in f.declares:
        PARAMS[p.name] = p
    if f.details is not None:   # (a Solution's JSON names its details type)
        DETAILS.setdefault(f.details.__name__, f.details)
    REGISTRY[f.name] = f
    for listener in LISTENERS:
        listener(f)
    return formulation

"""The builders' parameters, declared once: what each means, the values it takes, which
kernels use it, whether it is a hyperparameter, and its command-line flag.

A registered formulation names the parameters its builder takes (``Formulation.params``);
this table says what they are (``Formulation.spec``), and the builder's signature gives the
default (``Formulation.defaults``). Cross-validation's hyperparameters, the checks before a
fit (:func:`svm_models.formulations.check_params`), the command line's model flags and
``svm-models formulations show`` are derived from it. Each ``check`` is the same function
the builder calls (the kernels' checks, ``check_positive``, the choices below), so a value
refused before a fit is the value the builder would refuse.
"""

from __future__ import annotations

import inspect
import math
import numbers
from dataclasses import dataclass
from typing import Callable

from ..kernels import KERNELS, check_coef0, check_degree, check_gamma, check_kernel_name, check_rank
from ..model.pieces import QUAD_FORMS, check_choice, check_positive

#: C tuning's forms of the norm row (``form``) and the kernel radius-margin SVM's radius rows
#: (``radius``); the radius-margin builders' named pair sets (``pairs``).
FORMS = ("auto", "norm", "quadratic")
RADIUS = ("compact", "pairwise")
PAIRS = ("all", "seed")
#: feature selection's norm of w (``norm``)
NORMS = ("l1", "l2")


def _choice(name: str, choices: tuple) -> Callable:
    return lambda value, given: check_choice(name, value, choices)


def _C(value, given):
    # C = inf is the hard margin (the classic soft margins' hard_* form, a radius-margin
    # SVM's own): fit and check_params turn it into that; any other C is a finite positive
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value == math.inf:
        return value
    return check_positive("C", value)


def _kernel(value, given):
    # a Kernel object or (for the estimator) a callable is taken as it is; a name is checked
    return check_kernel_name(value) if isinstance(value, str) else value


def _numbers(text: str) -> list:
    """A command-line list of numbers, ``--feature-cost 1,2,0.5``."""
    return [float(t) for t in text.split(",")]


def _number_or_name(text: str):
    """A command-line value that is a number or a name (``--gamma 0.5`` or ``--gamma scale``)."""
    try:
        return float(text)
    except ValueError:
        return text


@dataclass(frozen=True)
class Param:
    """One builder parameter.

    name : as the builders, the estimator and cross-validation spell it;  doc : one line
    (the command line's help);  domain : the values it takes, in words;  check : ``(value,
    given) -> value``, ParameterError outside the domain (``given``: the other parameters
    set, for the checks that depend on the kernel), or None (checked by the builder, with
    the data);  flag : parses the command-line string (the flag is ``--name`` with ``_`` as
    ``-``), or None for a value a command line cannot give;  kernels : the kernels that use
    it (a kernel parameter given with another kernel would be ignored, so it is refused);
    hyperparameter : False for per-point data (``sample_weight``) and for what ``fit`` sets
    (``max_vars``).
    """

    name: str
    doc: str
    domain: str
    check: Callable | None = None
    flag: Callable | None = None
    kernels: tuple = ()
    hyperparameter: bool = True

    @property
    def option(self) -> str:
        """The command-line flag, e.g. ``--kernel-rank``."""
        return "--" + self.name.replace("_", "-")


PARAMS: dict[str, Param] = {p.name: p for p in [
    Param("C", "soft-margin parameter", "a positive number", _C, float),
    Param("sample_weight", "per-point factors of C", "an array of l numbers (<= 0: the point "
          "does not count)", hyperparameter=False),
    Param("kernel", f"kernel: {', '.join(KERNELS)}", f"one of {', '.join(KERNELS)}, or a Kernel",
          _kernel, str),
    Param("gamma", "kernel width: a number, 'scale' or 'auto'",
          "a positive number, 'scale' or 'auto'", lambda v, g: check_gamma(v), _number_or_name,
          kernels=("poly", "rbf")),
    Param("degree", "polynomial kernel degree", "a positive integer",
          lambda v, g: check_degree(v), int, kernels=("poly",)),
    Param("coef0", "poly kernel constant", "a finite number", lambda v, g: check_coef0(v),
          float, kernels=("poly",)),
    # (its check refuses the linear and precomputed kernels itself, a Kernel object's by name)
    Param("kernel_rank", "rank of the kernel's factor K ~= L L' (rbf, poly)",
          "a positive integer (rbf and poly kernels)",
          lambda v, g: check_rank(v, g.get("kernel", "linear")), int),
    Param("quad_form", "the dual's quadratic form: auto, dense or factor",
          f"one of {', '.join(QUAD_FORMS)}", _choice("quad_form", QUAD_FORMS), str),
    Param("max_vars", "the largest model the backend takes",
          "a positive integer (fit sets it for the backend)",
          hyperparameter=False),
    Param("g_bounds", "C tuning's range of g", "a pair (g_lo, g_hi) with g_lo < g_hi"),
    Param("form", "C tuning's norm row: auto, norm or quadratic", f"one of {', '.join(FORMS)}",
          _choice("form", FORMS), str),
    Param("lam", "radius weight (radius-margin SVMs)", "a positive number",
          lambda v, g: check_positive("lam", v), float),
    Param("kernels", "the kernels rsvm_mu_plus combines", "a list of kernel names or Kernels"),
    Param("pairs", "the radius rows' pairs", "'all', 'seed' (the primals) or (I, J) index arrays"),
    Param("radius", "the kernel radius rows: compact or pairwise", f"one of {', '.join(RADIUS)}",
          _choice("radius", RADIUS), str),
    Param("k", "feature selection's budget: sum_j cost_j v_j <= k (at most k features)",
          "a positive number (None: no budget)", lambda v, g: check_positive("k", v), float),
    Param("norm", "feature selection's norm of w: l1 (a MILP) or l2 (a MIQP)",
          f"one of {', '.join(NORMS)}", _choice("norm", NORMS), str),
    Param("feature_cost", "each feature's cost in the budget (comma-separated)",
          "d numbers >= 0 (default 1 each)", flag=_numbers),
]}


def param(name: str) -> Param:
    """The declared parameter ``name`` (a builder parameter missing here is a bug that
    ``tests/test_params.py`` catches)."""
    return PARAMS[name]


# ---------------------------------------------------------------------------------------
# The builders' Parameters and Returns sections, written once

DOCS = {
    'X': """    X : array-like of shape (l, d)
        Training points.""",
    'y': """    y : array-like of shape (l,)
        Two classes, any labels (mapped to -1/+1).""",
    'C': """    C : float, default 1.0
        The soft-margin penalty, > 0.""",
    'sample_weight': """    sample_weight : array-like of shape (l,), optional
        Per-point factors of C, as scikit-learn's: point i's penalty is ``C * weight_i``
        (a Param ``weight[i]``); weights ``<= 0`` are 0 (the point does not count).""",
    'kernel': """    kernel : {"linear", "poly", "rbf", "precomputed"} or Kernel, default "linear"
        The kernel; ``gamma``, ``degree``, ``coef0`` as in scikit-learn (``gamma="scale"``
        is ``1 / (d X.var())``). With ``"precomputed"``, ``X`` is the l x l Gram matrix.""",
    'quad_form': """    quad_form : {"auto", "dense", "factor"}, default "auto"
        ``auto`` takes the factor form for the linear kernel when it is smaller,
        ``(d + 1) l < l (l + 1)/2``, for a poly kernel with ``coef0 >= 0`` on its ``r``
        monomials when ``r <= min(l, 256)`` (exact, where its Gram matrix is not), and the
        dense form otherwise.""",
    'max_vars': """    max_vars : int, optional
        The largest model the chosen backend takes (:func:`svm_models.fit` passes Gurobi's
        licence limit): ``auto`` then takes the dense form when only its ``l`` variables fit.""",
    'kernel_rank': """    kernel_rank : int, optional
        Solve with the kernel matrix factored as ``K ~= L L'`` of rank ``kernel_rank``
        (pivoted incomplete Cholesky, computed without forming K: O(l r) memory), for the
        rbf and poly kernels; ``kernel_rank >= l`` is exact (to the factor's tolerance).
        The model is built in the factor form on ``L``; the kernel of the solution is the
        Nystroem kernel of the pivots (:class:`~svm_models.kernels.LowRankKernel`), which
        reproduces ``L L'`` on the training points. ``Solution.kernel_rank``
        reports the rank, the neglected trace ``trace(K - L L')`` and a bound on the
        optimum's distance from the exact kernel's.""",
    'block': """    block : pyomo Block, optional
        A block to fill (inside a larger model); by default a new ConcreteModel.""",
    'g_bounds': """    g_bounds : (float, float), optional
        ``(g_lo, g_hi)`` replacing the variant's default range: any range inside the PSD
        range ``[g_min, g_max]`` (else ParameterError).""",
    'form': """    form : {"auto", "norm", "quadratic"}, default "auto"
        ``auto`` is the norm form (:func:`svm_models.fit` replaces it by the backend's form).""",
    'lam': """    lam : float, default 1.0
        The radius weight, > 0.""",
    'kernels': """    kernels : list, optional
        Kernels instead of the features: names, dicts such as ``{"kernel": "rbf", "gamma":
        0.5}`` or Kernel objects (not ``"precomputed"``).""",
    'pairs': """    pairs : "all", "seed" or (I, J), default "all"
        The pair rows stated: every pair i < j, the seed of constraint generation (the
        farthest pair of each feature or kernel and overall; grown by
        :func:`svm_models.generate_pairs`), or index arrays with ``I < J``. A model with only
        some pairs, solved as it is, is a relaxation (:func:`svm_models.fit` never does that).""",
    'radius': """    radius : {"compact", "pairwise"}, default "compact"
        The form of the pair rows (above).""",
}
RETURNS_DOC = """    Returns
    -------
    pyomo.environ.Block
        The filled block (a ConcreteModel unless ``block`` is given); solve it with
        :func:`svm_models.solve`."""


#: the hard margin's C where a builder takes ``C=None`` for it (the radius-margin SVMs)
C_OR_NONE_DOC = """    C : float or None, default 1.0
        The soft-margin penalty, > 0; ``None`` builds the hard margin (no ``xi``)."""


def document_parameters(parts: dict | None = None, **overrides):
    """A decorator: ``@parameters@`` in the builder's docstring becomes its Parameters
    section -- the entry of :data:`DOCS` for each parameter of its signature, in order
    (``gamma``, ``degree``, ``coef0`` are described with ``kernel``; ``overrides`` replaces
    an entry for this builder) -- and the Returns section; each ``@name@`` of ``parts``
    becomes that text (what several builders' docstrings share, written once) and
    ``@name@`` the builder's name."""

    def document(f):
        for name, text in (parts or {}).items():
            f.__doc__ = f.__doc__.replace(f"@{name}@", text)
        f.__doc__ = f.__doc__.replace("@name@", f.__name__)
        names = [n for n in inspect.signature(f).parameters
                 if n not in ("gamma", "degree", "coef0")]
        section = "\n".join(overrides.get(n, DOCS.get(n, "")).rstrip() for n in names)
        f.__doc__ = f.__doc__.replace("    @parameters@\n", "    Parameters\n    ----------\n"
                                      + section + "\n\n" + RETURNS_DOC.rstrip() + "\n")
        return f

    return document

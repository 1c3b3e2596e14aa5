"""The builders' parameters, declared once: what each means, the values it takes, which
kernels use it, whether it is a hyperparameter, and its command-line flag.

A registered formulation names the parameters its builder takes (``Formulation.params``);
this table says what they are (``Formulation.spec``), and the builder's signature gives the
default (``Formulation.defaults``). Cross-validation's hyperparameters, the checks before a
fit (:func:`svm_models.methods.cv.check_params`), the command line's model flags and
``svm-models formulations show`` are derived from it. Each ``check`` is the same function
the builder calls (the kernels' checks, ``check_positive``, the choices below), so a value
refused before a fit is the value the builder would refuse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..kernels import KERNELS, check_coef0, check_degree, check_gamma, check_kernel_name, check_rank
from ..model.pieces import QUAD_FORMS, check_choice, check_positive

#: C tuning's forms of the norm row (``form``) and the kernel radius-margin SVM's radius rows
#: (``radius``); the radius-margin builders' named pair sets (``pairs``).
FORMS = ("auto", "norm", "quadratic")
RADIUS = ("compact", "pairwise")
PAIRS = ("all", "seed")


def _choice(name: str, choices: tuple) -> Callable:
    return lambda value, given: check_choice(name, value, choices)


def _C(value, given):
    # C = inf is the hard margin (the classic soft margins' hard_* form, a radius-margin
    # SVM's own): fit and check_params turn it into that; any other C is a finite positive
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == float("inf"):
        return value
    return check_positive("C", value)


def _kernel(value, given):
    # a Kernel object or (for the estimator) a callable is taken as it is; a name is checked
    return check_kernel_name(value) if isinstance(value, str) else value


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
    Param("C", "soft-margin parameter", "a positive number (inf: the hard margin)", _C, float),
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
    Param("kernel_rank", "rank of the kernel's factor K ~= L L' (rbf, poly)",
          "a positive integer", lambda v, g: check_rank(v, g.get("kernel", "linear")), int,
          kernels=("poly", "rbf")),
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
    Param("pairs", "the radius rows' pairs", "'all', 'seed' or (I, J) index arrays"),
    Param("radius", "the kernel radius rows: compact or pairwise", f"one of {', '.join(RADIUS)}",
          _choice("radius", RADIUS), str),
]}


def param(name: str) -> Param:
    """The declared parameter ``name`` (a builder parameter missing here is a bug that
    ``tests/test_registry_params.py`` catches)."""
    return PARAMS[name]

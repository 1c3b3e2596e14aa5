"""The formulation families, one module each, and the registry: a plain table.

The table names each formulation's module and builder as strings; a module is imported only
when one of its formulations is used (:func:`get`), so importing the package imports no
builder and no builder imports the registry. Each family module provides its builders and
its ``FAMILY``, a :class:`~svm_models.formulations.family.Family`: an
``extract(block, ctx)`` that turns a solved block into a
:class:`~svm_models.solution.Solution`, and optionally ``check_before_solve(svm, ...)``,
``explain_failure(svm, status, message)`` (the hard margin's separability check) and
``licence_hint(svm)`` (:attr:`Formulation.hooks`).

What each builder parameter is -- its meaning, domain, the kernels that use it, its
command-line flag -- is declared once in :mod:`svm_models.formulations.params`
(:attr:`Formulation.spec`); its default is the builder's signature
(:attr:`Formulation.defaults`). :func:`check_params` checks a fit's hyperparameters against
them before anything is built.
"""

from __future__ import annotations

import importlib
import inspect
import numbers
from dataclasses import dataclass
from types import ModuleType

from ..errors import ParameterError, plain
from ..model.standard_form import PROBLEM_CLASSES  # noqa: F401  (a formulation has one)
from .family import Family
from .params import PARAMS, Param


_KERNEL = ("kernel", "gamma", "degree", "coef0")


@dataclass(frozen=True)
class Formulation:
    """A registered formulation.

    name : registered name, e.g. ``"soft_l1_dual"``;  family : ``"hard"``, ``"soft_l1"``,
    ``"soft_l2"``, ``"c_tuning"``, ...;  form : ``"primal"`` or ``"dual"``;
    problem_class : one of :data:`PROBLEM_CLASSES`;  module : the family module (under
    ``svm_models.formulations``);  summary : one line for listings;  params : the
    hyperparameters the builder accepts.
    """

    name: str
    family: str
    form: str
    problem_class: str
    module: str
    summary: str
    params: tuple

    # What the family is, as the layers above ask it (no family name is compared outside
    # this package): each answer is derived from the table's fields.

    @property
    def hard_margin(self) -> bool:
        """A hard margin (no C): data no hyperplane separates have no solution
        (``NotSeparableError``)."""
        return self.family == "hard"

    @property
    def learns_C(self) -> bool:
        """C is learned, not given (C tuning): ``C_`` is read after the fit."""
        return self.family == "c_tuning"

    @property
    def C_none_is_hard(self) -> bool:
        """``C=None`` (or ``C=inf``) builds this formulation's own hard margin (radius-margin
        SVMs); the classic soft margins are built as a hard-margin formulation instead
        (:attr:`hard_at_infinite_C`)."""
        return self.family == "radius_margin"

    @property
    def hard_at_infinite_C(self) -> str | None:
        """The formulation ``C=inf`` is built as (a classic soft margin's hard margin of the
        same form), or None."""
        return f"hard_{self.form}" if self.family in ("soft_l1", "soft_l2") else None

    @property
    def other_form(self) -> str | None:
        """The classic SVM's other form (primal for a dual, dual for a primal): the same
        optimum (strong duality), or None outside the classic families."""
        if self.family not in ("hard", "soft_l1", "soft_l2"):
            return None
        return f"{self.family}_{'primal' if self.form == 'dual' else 'dual'}"

    @property
    def classic_at_learned_C(self) -> str | None:
        """The classic SVM whose C the formulation learns (C tuning: the 2-norm soft
        margin's dual, refitted at ``C*``), or None."""
        return "soft_l2_dual" if self.learns_C else None

    @property
    def learned(self) -> tuple[str, ...]:
        """The values the fit learns besides w and b, as ``Solution.details`` names them (the
        estimator's ``g_``, ``lam_``, ``r_``, ``mu_``)."""
        return {"c_tuning": ("g",), "radius_margin": ("lam", "r", "mu")}.get(self.family, ())

    @property
    def generates_pairs(self) -> bool:
        """Its pair rows can be grown by constraint generation (a primal that takes
        ``pairs``: :func:`svm_models.methods.radius.generate_pairs`)."""
        return "pairs" in self.params and self.form == "primal"

    @property
    def all_pairs_default(self) -> bool:
        """Whether its default pair set is every pair as variables (the radius-margin dual:
        l(l-1)/2 of them)."""
        return self.family == "radius_margin" and self.form == "dual"

    @property
    def spec(self) -> tuple[Param, ...]:
        """Its parameters, declared (:mod:`svm_models.formulations.params`: meaning, domain,
        the kernels that use each, the command-line flag), in the builder's order."""
        return tuple(PARAMS[p] for p in self.params)

    @property
    def defaults(self) -> dict:
        """Each parameter's default, read from the builder's signature (one place)."""
        sig = inspect.signature(self.builder).parameters
        return {p: sig[p].default for p in self.params}

    def load(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.module}")

    @property
    def builder(self):
        return getattr(self.load(), self.name)

    @property
    def hooks(self) -> Family:
        """Its family module's interface (:class:`~svm_models.formulations.family.Family`:
        ``extract`` and the optional ``check_before_solve``, ``explain_failure``,
        ``licence_hint``)."""
        return self.load().FAMILY

    @property
    def extractor(self):
        return self.hooks.extract


def _classic(name, family, form, summary):
    params = (() if family == "hard" else ("C", "sample_weight")) + _KERNEL + ("kernel_rank",) + (
        ("quad_form", "max_vars") if form == "dual" else ())
    return Formulation(name, family, form, "QP", "classic", summary, params)


_C_TUNING = _KERNEL + ("g_bounds", "form")

TABLE: dict[str, Formulation] = {f.name: f for f in [
    _classic("hard_primal", "hard", "primal", "Hard-margin SVM, primal form (convex QP)."),
    _classic("hard_dual", "hard", "dual", "Hard-margin SVM, dual form (convex QP)."),
    _classic("soft_l1_primal", "soft_l1", "primal",
             "1-norm soft-margin SVM, primal form (convex QP)."),
    _classic("soft_l1_dual", "soft_l1", "dual",
             "1-norm soft-margin SVM, dual form (convex QP; the problem libsvm solves)."),
    _classic("soft_l2_primal", "soft_l2", "primal",
             "2-norm soft-margin SVM, primal form (convex QP)."),
    _classic("soft_l2_dual", "soft_l2", "dual",
             "2-norm soft-margin SVM, dual form (convex QP): a hard margin with kernel K + I/C."),
    Formulation("c_tuning_standard", "c_tuning", "dual", "SOCP", "c_tuning",
                "Convex tuning of C, standard variant: g in [0, 1], i.e. C in (0, inf] (SOCP).",
                _C_TUNING),
    Formulation("c_tuning_general", "c_tuning", "dual", "SOCP", "c_tuning",
                "Convex tuning of C, general variant: g in [g_min, g_max], the PSD range (SOCP).",
                _C_TUNING),
    Formulation("c_tuning_general_nonneg", "c_tuning", "dual", "SOCP", "c_tuning",
                "Convex tuning of C, general variant with the weight of K kept >= 0: "
                "g in [g_min, 1] (SOCP).", _C_TUNING),
    Formulation("l1_norm_primal", "l1_norm", "primal", "LP", "l1_norm",
                "1-norm SVM: the soft margin with ||w||_1, a linear program whose w is sparse "
                "(linear kernel).", ("C", "sample_weight")),
    Formulation("rsvm_mu_plus", "radius_margin", "primal", "SOCP", "radius_margin",
                "R-SVM_mu+: radius-margin SVM learning a feature weighting (or kernel "
                "combination) mu, jointly convex (SOCP).", ("C", "lam", "kernels", "pairs")),
    Formulation("rsvm_plus_primal", "radius_margin", "primal", "QCQP", "radius_margin",
                "R-SVM+: radius-margin SVM, primal form (QCQP; linear radius rows per pair).",
                ("C", "lam", "pairs")),
    Formulation("rsvm_plus_dual", "radius_margin", "dual", "SOCP", "radius_margin",
                "R-SVM+: radius-margin SVM, dual form with auxiliary t_k (SOCP).",
                ("C", "lam", "pairs")),
    Formulation("rsvm_plus_kernel", "radius_margin", "primal", "QP", "radius_margin",
                "Kernelized R-SVM+ by the representer theorem: compact radius (QP, default) "
                "or literal pairwise rows (QCQP).", ("C", "lam") + _KERNEL + ("radius",)),
    Formulation("ls_svm_primal", "ls_svm", "primal", "QP", "ls_svm",
                "Least-squares SVM: the squared errors of equality margin rows, a QP whose "
                "optimality conditions are one linear system (linear kernel).",
                ("C", "sample_weight")),
    Formulation("ramp_loss_primal", "ramp_loss", "primal", "MIQP", "mip",
                "Ramp-loss SVM (Brooks 2011): the hinge loss capped at 2, robust to outliers; "
                "a MIQP whose binaries z give points up (linear or kernel).",
                ("C", "sample_weight") + _KERNEL),
    Formulation("hard_loss_primal", "hard_loss", "primal", "MIQP", "mip",
                "Hard-margin-loss SVM (Brooks 2011): each point inside its margin costs C "
                "once; a MIQP whose binaries z give points up (linear or kernel).",
                ("C", "sample_weight") + _KERNEL),
    Formulation("feature_selection", "feature_selection", "primal", "MILP", "mip",
                "Feature selection with a budget k (Maldonado et al. 2014): binaries v keep "
                "features; a MILP with ||w||_1 (MIQP with norm='l2'; linear kernel).",
                ("C", "k", "norm", "feature_cost", "sample_weight")),
]}


#: builder parameters that are not hyperparameters: per-point data (``sample_weight``) and
#: the size limit ``fit`` sets for the backend (``max_vars``)
NOT_HYPERPARAMETERS = tuple(p.name for p in PARAMS.values() if not p.hyperparameter)


def hyperparameters() -> tuple[str, ...]:
    """Every hyperparameter some registered builder takes (``C`` first, then in the order the
    table first names them): what cross-validation and the estimator may pass through."""
    seen = {"C": None}
    for f in TABLE.values():
        seen.update((p, None) for p in f.params if p not in NOT_HYPERPARAMETERS)
    return tuple(seen)


def names() -> list[str]:
    """Names of all registered formulations, in registration order."""
    return list(TABLE)


def get(name: str) -> Formulation:
    """The registered formulation ``name`` (ParameterError listing the names otherwise)."""
    try:
        return TABLE[name]
    except (KeyError, TypeError):
        import difflib

        close = difflib.get_close_matches(str(name), TABLE, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ParameterError(
            f"unknown formulation {name!r}{hint}; registered: {', '.join(TABLE)}") from None


def check_params(formulation: str, given: dict, *,
                 way_out: str = "leave it None, or in a grid search give one grid per kernel"
                 ) -> dict:
    """The hyperparameters in ``given`` that are set (not None), checked against the
    formulation's declared parameters (:attr:`Formulation.spec`): one it does not take, a value
    outside its domain, or a kernel parameter the kernel does not use is a
    :class:`~svm_models.errors.ParameterError` (never ignored). ``C=inf`` for a radius-margin
    SVM becomes its hard margin (``C=None``). ``way_out``: what the error of a kernel
    parameter the kernel does not use tells the caller to do.

    The estimators, cross-validation and the command line call it before anything is built;
    :func:`svm_models.fit` passes its parameters to the builder, which checks each value
    (the same checks) but ignores a kernel parameter of another kernel, as scikit-learn's
    ``SVC`` does."""
    f = get(formulation)
    given = {k: v for k, v in given.items() if v is not None}
    if "kernel" not in f.params and given.get("kernel") == "linear":
        del given["kernel"]  # a linear-only formulation: that is what it solves
    unknown = sorted(set(given) - set(f.params))
    if unknown:
        takes = [p for p in hyperparameters() if p in f.params]
        hint = ""
        if "C" in unknown and f.learns_C:
            hint = " C tuning learns C (read C_ after fit)."
        elif "C" in unknown and f.hard_margin:
            hint = " The hard margin has no C: choose a soft-margin formulation for one."
        elif "kernel" in unknown:
            hint = (f" {formulation} is linear only: for kernel={given['kernel']!r} choose "
                    "formulation='rsvm_plus_kernel', or 'rsvm_mu_plus' with kernels=[...].")
        raise ParameterError(
            f"formulation {formulation!r} takes no {', '.join(unknown)} (it takes "
            f"{', '.join(takes) or 'none'}); leave {'them' if len(unknown) > 1 else 'it'} "
            f"None.{hint}")
    for name, value in given.items():
        if PARAMS[name].check is not None:
            PARAMS[name].check(value, given)
    check_kernel_params(given, way_out)
    C = given.get("C")
    if f.C_none_is_hard and isinstance(C, numbers.Real) and C == float("inf"):
        given["C"] = None  # the radius-margin builders' hard margin
    return given


def check_kernel_params(given: dict, way_out: str) -> None:
    """ParameterError for a kernel parameter in ``given`` that its kernel (``given["kernel"]``,
    default linear) does not use (:attr:`Param.kernels`): ``gamma`` with a linear kernel would
    be silently ignored."""
    kernel = given.get("kernel", "linear")
    for name in given:
        uses = PARAMS[name].kernels if name in PARAMS else ()
        if uses and kernel not in uses:
            raise ParameterError(
                f"{name}={plain(given[name])!r} has no effect with kernel={kernel!r} (it is used "
                f"by kernel {' or '.join(map(repr, uses))}); {way_out}")

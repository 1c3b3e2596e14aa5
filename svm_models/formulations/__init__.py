"""The formulations: one module per family, each formulation an object of the public base
class :class:`~svm_models.formulations.base.Formulation`, registered by
:func:`~svm_models.formulations.base.register`; and the registry.

The registry lists nothing by hand: the first time it is asked (:func:`get`, :func:`names`,
:data:`TABLE`), it imports this package's modules (a family module registers its formulations
as it is imported; :data:`ORDER` in a module places it in listings, default 50) and then
loads the entry points of the group ``svm_models.formulations`` -- a module whose import
registers, or a Formulation subclass or instance --, so that a package outside
``svm_models`` adds formulations that the estimator, cross-validation, the command line and
the catalogue checks see as they see the package's own. A plugin imports what it needs from
``svm_models.formulations`` (``Formulation``, ``register``) and the shared pieces
(``svm_models.model.pieces``), not from the top-level package (it may be loaded while
``svm_models`` itself is imported).

What each builder parameter is -- its meaning, domain, the kernels that use it, its
command-line flag -- is declared once in :mod:`svm_models.formulations.params` (or by the
formulation that brings it, :attr:`Formulation.declares`); its default is the builder's
signature (:attr:`Formulation.defaults`). :func:`check_params` checks a fit's
hyperparameters against them before anything is built.
"""

from __future__ import annotations

import importlib
import numbers
import pkgutil
import sys
import warnings
from collections.abc import Mapping

from ..errors import ParameterError, SVMWarning, plain
from ..model.standard_form import PROBLEM_CLASSES  # noqa: F401  (a formulation has one)
from .base import LISTENERS, REGISTRY, Formulation, IndicatorRow, register  # noqa: F401
from .params import PARAMS, Param  # noqa: F401

#: the entry-point group through which other packages register formulations
ENTRY_POINT_GROUP = "svm_models.formulations"
#: this package's modules that hold no formulation
_NOT_FAMILIES = {"base", "params"}
_loaded = False


def _load() -> None:
    """Import the family modules (each registers its formulations) and the entry points,
    once."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for m in pkgutil.iter_modules(__path__):
        if m.name not in _NOT_FAMILIES:
            importlib.import_module(f"{__name__}.{m.name}")
    # listed by their modules' ORDER (stable: within a module, as registered)
    ordered = sorted(REGISTRY.values(),
                     key=lambda f: getattr(sys.modules.get(f.builder.__module__), "ORDER", 50))
    REGISTRY.clear()
    REGISTRY.update((f.name, f) for f in ordered)
    _load_entry_points()


def _load_entry_points() -> None:
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
            if isinstance(obj, Formulation) or (isinstance(obj, type)
                                                and issubclass(obj, Formulation)):
                name = obj.name
                if name not in REGISTRY or REGISTRY[name] is not obj:
                    register(obj)
        except Exception as exc:   # noqa: BLE001  (another package's: said, not fatal)
            warnings.warn(f"the formulation plugin {ep.name!r} ({ep.value}) could not be "
                          f"loaded: {type(exc).__name__}: {exc}; its formulations are not "
                          "registered", SVMWarning, stacklevel=2)


class _Table(Mapping):
    """The registered formulations by name (the registry, loaded on first use)."""

    def __getitem__(self, name):
        _load()
        return REGISTRY[name]

    def __iter__(self):
        _load()
        return iter(list(REGISTRY))

    def __len__(self):
        _load()
        return len(REGISTRY)


#: the registered formulations by name, in registration order
TABLE: Mapping = _Table()


def hyperparameters() -> tuple[str, ...]:
    """Every hyperparameter some registered formulation takes (``C`` first, then in the order
    the registry first names them): what cross-validation and the estimator pass through.
    Builder parameters that are not hyperparameters: per-point data (``sample_weight``) and
    what ``fit`` sets for the backend (``max_vars``) (:attr:`Param.hyperparameter`)."""
    seen = {"C": None}
    for f in TABLE.values():
        seen.update((p, None) for p in f.params if PARAMS[p].hyperparameter)
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

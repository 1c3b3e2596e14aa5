"""Backends reached only through their Pyomo plugins when installed: CPLEX, Xpress, MOSEK.

Not installed on this project's machines: only their "not installed" path is tested.
"""

from __future__ import annotations

from .base import Backend

_QCQP = frozenset(("LP", "QP", "SOCP", "QCQP"))


def _plugin_options(time_name: str):
    def options(plugin: str, opts) -> dict:
        return opts.limits(time_name)

    return options


BACKENDS = [
    Backend(name="cplex", classes=_QCQP, plugins=("cplex_direct",), modules=("cplex",),
            plugin_options=_plugin_options("timelimit"),
            dual_sign={"cplex_direct": {1: 1.0, -1: 1.0}}, install="install CPLEX and its Python API"),
    Backend(name="xpress", classes=_QCQP, plugins=("xpress_direct",), modules=("xpress",),
            plugin_options=_plugin_options("maxtime"),
            dual_sign={"xpress_direct": {1: 1.0, -1: 1.0}}, install="pip install xpress"),
    Backend(name="mosek", classes=_QCQP, plugins=("mosek_direct",), modules=("mosek",),
            plugin_options=_plugin_options("dparam.optimizer_max_time"),
            dual_sign={"mosek_direct": {1: 1.0, -1: 1.0}}, install="pip install mosek"),
]

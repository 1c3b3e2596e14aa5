"""The layers (CONTRIBUTING.md): every import inside ``svm_models`` -- function-level imports
included -- runs downward, and no module imports itself back through others (no cycle)."""

from __future__ import annotations

import ast
import pathlib

import svm_models

ROOT = pathlib.Path(svm_models.__file__).parent

#: each top-level module or subpackage and its layer: imports go to a lower layer (or inside
#: the same package)
LAYERS = {
    "_version": 0, "errors": 0, "tolerances": 0, "status": 0, "progress": 0, "setup_ipopt": 0, "datasets": 0,
    "threads": 0,
    "data": 1, "kernels": 1, "config": 1,
    "solution": 2, "model": 2,
    "postprocess": 3,
    "solvers": 4, "formulations": 4,
    "api": 5, "embed": 5,
    "methods": 6, "block": 6,
    "estimator": 7, "plots": 7,
    "cli": 8, "__init__": 9,
}


def import_graph() -> dict[str, set[str]]:
    """``{module: the svm_models modules it imports}`` (every import statement in the file)."""
    mods = {}
    for p in ROOT.rglob("*.py"):
        parts = ("svm_models",) + p.relative_to(ROOT).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    graph = {}
    for name, p in mods.items():
        here = name.split(".") if p.name == "__init__.py" else name.split(".")[:-1]
        out = set()
        for n in ast.walk(ast.parse(p.read_text())):
            if isinstance(n, ast.ImportFrom):
                base = here[:len(here) - (n.level - 1)] if n.level else []
                m = ".".join(base + ([n.module] if n.module else [])) if n.level else n.module
                if not m or not m.startswith("svm_models"):
                    continue
                for a in n.names:
                    out.add(f"{m}.{a.name}" if f"{m}.{a.name}" in mods else m)
            elif isinstance(n, ast.Import):
                out.update(a.name for a in n.names if a.name in mods)
        out.discard(name)
        graph[name] = out
    return graph


def cycles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def _layer(module: str) -> tuple[str, int]:
    top = module.split(".")[1] if "." in module else "__init__"
    return top, LAYERS[top]


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_a_cycle_is_found():
    """(the check itself: a planted back edge is a cycle)"""
    g = import_graph()
    g["svm_models.solvers.dispatch"] = g["svm_models.solvers.dispatch"] | {"svm_models.solvers"}
    assert ["svm_models.solvers", "svm_models.solvers.dispatch"] in [
        [m for m in c if m in ("svm_models.solvers", "svm_models.solvers.dispatch")]
        for c in cycles(g)]


def test_imports_run_downward():
    bad = []
    for a, targets in import_graph().items():
        ta, la = _layer(a)
        for b in targets:
            tb, lb = _layer(b)
            if ta != tb and lb >= la:
                bad.append(f"{a} -> {b}")
    assert not bad, "imports that run up or sideways: " + ", ".join(sorted(bad))


def test_every_module_has_a_layer():
    assert {_layer(m)[0] for m in import_graph()} <= set(LAYERS)


def test_the_version_is_the_projects():
    import tomllib

    meta = tomllib.loads((ROOT.parent / "pyproject.toml").read_text())
    assert svm_models.__version__ == meta["project"]["version"]


FAMILIES = {"hard", "soft_l1", "soft_l2", "c_tuning", "radius_margin", "enclosing_ball"}


def test_no_family_name_steers_behaviour_outside_formulations():
    """What a formulation is (hard margin, learns C, ...) is asked of its registry entry
    (``Formulation.hard_margin``, ``learns_C``, ...), and a classic SVM's margin of its
    :class:`~svm_models.model.forms.Margin` (``box``, ``ridge``, ``hard``: the post-processing
    rules, libsvm's DualSVM structure), never by comparing family names (issue 27)."""
    bad = []
    for p in ROOT.rglob("*.py"):
        rel = p.relative_to(ROOT).as_posix()
        if rel.startswith("formulations/"):
            continue
        for n in ast.walk(ast.parse(p.read_text())):
            consts = []
            if isinstance(n, ast.Compare):
                for side in [n.left, *n.comparators]:
                    if isinstance(side, ast.Constant):
                        consts.append(side.value)
                    elif isinstance(side, (ast.Tuple, ast.List, ast.Set)):
                        consts += [e.value for e in side.elts if isinstance(e, ast.Constant)]
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                  and n.func.attr == "startswith" and n.args
                  and isinstance(n.args[0], ast.Constant)):
                consts.append(n.args[0].value)
            if any(isinstance(c, str) and (c in FAMILIES or c.rstrip("_") in FAMILIES)
                   for c in consts):
                bad.append(f"{rel}:{n.lineno}")
    assert not bad, "family names compared outside formulations/: " + ", ".join(bad)


#: Pyomo's private attributes the library touches (svm_models/model/pyomo_compat.py names
#: them; model/lazy.py subclasses Pyomo's components and works on their state)
PYOMO_PRIVATE = {"_data", "_args_", "_expr", "_value", "_stale", "_fixed", "_lb", "_ub",
                 "_domain", "_active", "_index", "_component", "_operator_map", "_sense",
                 "_constructed",
                 # a persistent interface's native model and maps (switch="indicator")
                 "_solver_model", "_pyomo_var_to_solver_var_map",
                 "_pyomo_con_to_solver_con_map", "_solver_con_to_pyomo_con_map"}
PYOMO_INSIDE = {"model/pyomo_compat.py", "model/lazy.py"}


def test_pyomos_internals_in_one_place():
    bad = []
    for p in ROOT.rglob("*.py"):
        rel = p.relative_to(ROOT).as_posix()
        if rel in PYOMO_INSIDE:
            continue
        for n in ast.walk(ast.parse(p.read_text())):
            if isinstance(n, ast.Attribute) and n.attr in PYOMO_PRIVATE:
                bad.append(f"{rel}:{n.lineno} .{n.attr}")
            elif isinstance(n, ast.Constant) and n.value in PYOMO_PRIVATE:
                bad.append(f"{rel}:{n.lineno} {n.value!r}")
    assert not bad, "Pyomo internals outside pyomo_compat: " + ", ".join(bad)


def test_the_public_functions_are_also_their_packages():
    """``svm_models.formulations()`` and ``svm_models.solvers()`` are functions of the public
    API; the same names reach the subpackages, so their modules import as they read."""
    import importlib

    import svm_models as sm

    assert sm.formulations() == list(importlib.import_module("svm_models.formulations").TABLE)
    assert "piqp" in sm.solvers() and sm.solvers()["piqp"]["available"] in (True, False)
    import svm_models.formulations.classic as classic   # (failed: 'formulations' was the function)
    import svm_models.solvers.dispatch as dispatch

    assert classic.extract.__module__ == "svm_models.formulations.classic"
    assert dispatch.solve_model is sm.solvers.solve_model
    assert sm.formulations.get("l1_norm_primal").problem_class == "LP"
    assert sm.formulations.__doc__ == "Names of the registered formulations."
    try:
        sm.formulations.no_such_thing
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("an unknown attribute must be an AttributeError")


def test_no_function_body_is_over_80_lines():
    """CONTRIBUTING's rule, checked: every function's body (its docstring aside) within 80
    lines -- a longer one is split into named steps."""
    import ast

    long = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body
                if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                    body = body[1:]
                if body and body[-1].end_lineno - body[0].lineno + 1 > 80:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not long, long

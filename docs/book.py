"""The book's pages, generated from the one source of each: ``formulations/`` and ``examples/``.

Nothing here is a second copy of a page. ``generate(docs)`` writes, before Sphinx reads a file
(``conf.py`` calls it; the output is git-ignored):

* ``docs/formulations/NAME.md`` for every name in ``svm_models.formulations()``, and the index
  and family pages: the catalogue page ``formulations/NAME.md`` as a MyST notebook -- its
  mathematics, components, parameters, variants, backends as written (and checked against the
  code by ``tests/test_catalogue.py``), its ``Example`` executed at build time -- followed by a
  generated section that builds the formulation on small 2-D data, prints a few of the Pyomo
  components its Components table names, solves it and draws the result;
* ``docs/examples/NAME.ipynb`` for every ``examples/NAME.py``: a page in jupytext's percent
  format as its cells say, a plain script as one cell under its docstring;
* the hand-outs ``docs/handouts/{examples,formulations}/NAME.py`` and ``.ipynb`` of every page, linked
  from its top: they run as they are (``tests/test_book.py`` executes every notebook).

Notebooks are written without outputs: myst-nb executes every one during the build.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = ROOT / "formulations"
EXAMPLES = ROOT / "examples"

#: the teaching path, in order (examples/NAME.py); the other examples follow, by name
TEACHING_PATH = ("hard_margin", "soft_margins", "classic_side_by_side", "kernels", "c_path",
                 "regularization_path", "c_tuning_vs_grid_search", "radius_margin", "counterfactual", "swap_solvers")
#: a plain script run as a page: its command line in quick mode
SCRIPT_ARGV = ["--quick"]

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}

#: the generated section's data: teaching_2d(30, separation=SEPARATION), separable
SEPARATION = 3.0
#: the generated section's build parameters, where the defaults do not suit 2-D data
DRAW_PARAMS = {
    "rsvm_mu_plus": {"C": 1.0},
    "feature_selection": {"k": 1},
}


# ---------------------------------------------------------------------------------------
# Formulation pages


def _catalogue_links(text: str) -> str:
    """Links that leave the catalogue (to the package's source, the README) become their
    text: the site holds the catalogue pages and the examples, not the source tree."""
    return re.sub(r"\[([^\]]+)\]\((\.\./[^)]+)\)", r"\1", text)


def _cells(text: str) -> str:
    """```python blocks become executed code cells."""
    return re.sub(r"^```python\n", "```{code-cell} ipython3\n", text, flags=re.M)


def _components(text: str) -> list[str]:
    """The component names of the page's Components table, in order."""
    m = re.search(r"^## Components\n(.*?)(?=^## )", text, flags=re.M | re.S)
    if not m:
        return []
    names = []
    for line in m.group(1).splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            first = line.strip("|").split("|")[0]
            names += re.findall(r"`([A-Za-z_]\w*)`", first)
    return [n for n in names if n != "component"]


def _front_matter() -> str:
    return ("---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n"
            "---\n\n")


def _built_components(name: str, params: dict, components: list[str]) -> list[str]:
    """Up to four names among ``components`` to show: the model built on the section's data
    has them (the Components table lists every variant's); variables, then constraints and
    the objective, in the table's order."""
    import svm_models as sm
    from svm_models.datasets import teaching_2d

    model = sm.build(name, *teaching_2d(30, separation=SEPARATION), **params)
    order = {"Var": 0, "Constraint": 1, "Objective": 2}
    have = [c for c in components if model.component(c) is not None
            and model.component(c).ctype.__name__ in order]
    return sorted(have, key=lambda c: order[model.component(c).ctype.__name__])[:4]


def _draw_section(name: str, components: list[str]) -> str:
    params = DRAW_PARAMS.get(name, {})
    args = "".join(f", {k}={v!r}" for k, v in params.items())
    shown = _built_components(name, params, components)
    return f'''
## Build it, look inside, solve it, draw it

Generated for every formulation: the model built by `svm_models.build` on 30 points in the
plane, the first lines of a few of its Pyomo components as Pyomo prints them (the names of the
Components table above), the solve by the backend `solver="auto"` chooses, and the classifier
drawn by `svm_models.plots.decision_boundary`.

```{{code-cell}} ipython3
import io

import matplotlib.pyplot as plt
import svm_models as sm
from svm_models.datasets import teaching_2d
from svm_models.plots import decision_boundary

X, y = teaching_2d(30, separation={SEPARATION})
model = sm.build("{name}", X, y{args})
for name in {shown!r}:
    text = io.StringIO()
    model.component(name).pprint(ostream=text)
    print("\\n".join(line[:100] for line in text.getvalue().splitlines()[:5]), "\\n")
```

```{{code-cell}} ipython3
sol = sm.solve(model)
print(sol.summary())
decision_boundary(sol, X, y)
plt.show()
```
'''


@functools.lru_cache(maxsize=None)   # (the page and its hand-outs: built once; generate clears it)
def formulation_page(source: Path, registered: bool) -> str:
    """The catalogue page ``source`` as a MyST notebook (a formulation's page gets the
    generated section before its Reference)."""
    text = _cells(_catalogue_links(source.read_text()))
    if registered:
        draw = _draw_section(source.stem, _components(text))
        text = text.replace("\n## Reference", draw + "\n## Reference", 1)
    title, _, rest = text.partition("\n")
    return (_front_matter() + title + "\n\n" + _handout_links("formulations", source.stem)
            + rest.lstrip("\n"))


# ---------------------------------------------------------------------------------------
# Example pages


def _is_percent(text: str) -> bool:
    return re.search(r"^# %%", text, flags=re.M) is not None


def _script_notebook(path: Path):
    """A plain script as a notebook: its docstring as text, its code as one cell run with
    ``SCRIPT_ARGV`` (the script's quick mode)."""
    import nbformat

    text = path.read_text()
    tree = ast.parse(text)
    doc = ast.get_docstring(tree) or ""
    body = text
    if doc:
        first = tree.body[0]
        lines = text.splitlines(keepends=True)
        body = "".join(lines[first.end_lineno:]).lstrip("\n")
    title, _, rest = doc.partition("\n\n")
    title = " ".join(title.split())
    # the docstring's first paragraph is "Title: what it does"; command-line options as code
    # (the typographer would make "--quick" an en dash)
    head, colon, lead = title.partition(":")
    heading = head.strip() if colon else path.stem.replace("_", " ").capitalize()
    text = re.sub(r"(?<![\w`-])(--[a-z][\w-]*)", r"`\1`",
                  f"{(lead if colon else title).strip()}\n\n{rest.strip()}")
    md = f"# {heading}\n\n{text[:1].upper()}{text[1:]}\n"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(md),
                nbformat.v4.new_code_cell(
                    f"import sys\n\n# run as `python examples/{path.name} {' '.join(SCRIPT_ARGV)}`\n"
                    f"sys.argv = [{f'examples/{path.name}'!r}, "
                    + ", ".join(repr(a) for a in SCRIPT_ARGV) + "]\n"
                    f"__doc__ = {title.strip()!r}"),
                nbformat.v4.new_code_cell(body.rstrip("\n"))]
    return nb


def example_notebook(path: Path):
    """``examples/NAME.py`` as a notebook (no outputs)."""
    import jupytext

    if _is_percent(path.read_text()):
        nb = jupytext.read(path, fmt="py:percent")
    else:
        nb = _script_notebook(path)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata.pop("jupytext", None)
    return nb


def _handout_links(kind: str, name: str) -> str:
    """The line under a page's title: its hand-outs (``kind``: examples, formulations)."""
    return (f"*Hand-outs:* {{download}}`{name}.py <../handouts/{kind}/{name}.py>` · "
            f"{{download}}`{name}.ipynb <../handouts/{kind}/{name}.ipynb>`\n\n")


def _with_handout_links(nb, name: str):
    """The page's notebook: the hand-out links after its title."""
    import copy

    import nbformat

    page = copy.deepcopy(nb)
    first = page.cells[0]
    if first.cell_type == "markdown":
        title, _, rest = first.source.partition("\n")
        first.source = f"{title}\n\n{_handout_links('examples', name)}{rest.lstrip()}"
    else:
        page.cells.insert(0, nbformat.v4.new_markdown_cell(_handout_links("examples", name)))
    return page


def examples() -> list[Path]:
    """The examples, the teaching path first."""
    found = {p.stem: p for p in sorted(EXAMPLES.glob("*.py"))}
    order = [n for n in TEACHING_PATH if n in found] + [n for n in found if n not in TEACHING_PATH]
    return [found[n] for n in order]


# ---------------------------------------------------------------------------------------
# Hand-outs


def handouts(root: Path) -> list[Path]:
    """Write every executed page's hand-outs (``NAME.py``, ``NAME.ipynb``, no outputs) into
    ``root/examples`` and ``root/formulations``; returns the notebooks."""
    import jupytext

    from svm_models import formulations

    notebooks = []
    out = root / "examples"
    out.mkdir(parents=True, exist_ok=True)
    for path in examples():
        nb = example_notebook(path)
        if _is_percent(path.read_text()):
            shutil.copyfile(path, out / path.name)           # the script itself
        else:
            jupytext.write(nb, out / path.name, fmt="py:percent")
        notebooks.append(_write_notebook(nb, out / f"{path.stem}.ipynb"))
    out = root / "formulations"
    out.mkdir(parents=True, exist_ok=True)
    for name in _catalogue_pages():
        md = formulation_page(CATALOGUE / f"{name}.md", name in formulations())
        nb = jupytext.reads(md, fmt="md:myst")
        nb.metadata["kernelspec"] = dict(KERNELSPEC)
        nb.metadata.pop("jupytext", None)
        jupytext.write(nb, out / f"{name}.py", fmt="py:percent")
        notebooks.append(_write_notebook(nb, out / f"{name}.ipynb"))
    return notebooks


def _write_notebook(nb, path: Path) -> Path:
    import nbformat

    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{path.stem[:50]}-{i}"      # stable ids (nbformat 4.5)
    nb.nbformat, nb.nbformat_minor = 4, 5
    path.write_text(json.dumps(nbformat.from_dict(nb), indent=1) + "\n")
    return path


def _catalogue_pages() -> list[str]:
    """The catalogue pages: the registered formulations and the family pages."""
    return [p.stem for p in sorted(CATALOGUE.glob("*.md")) if p.name != "README.md"]


def _title(name: str) -> str:
    """The heading of catalogue page ``name``, as plain text."""
    first = (CATALOGUE / f"{name}.md").read_text().partition("\n")[0]
    return first.lstrip("# ").replace("`", "").strip()


def catalogue_order() -> list[tuple[str, list[str]]]:
    """The catalogue as the sidebar lists it: (caption, pages) per family, in the registry's
    order -- the family page first, then its formulations -- and the formulations that are a
    family of their own after them ("Other formulations"), with any other page."""
    from svm_models.formulations import get, names

    pages = _catalogue_pages()
    families: dict[str, list[str]] = {}
    for n in names():
        if n in pages:   # (a formulation registered before its page is written: no entry)
            families.setdefault(get(n).module, []).append(n)
    out, others = [], []
    for module, members in families.items():
        if len(members) == 1 and module not in pages:
            others += members
            continue
        head = [module] if module in pages else []
        out.append((_title(module) if head else module.replace("_", " ").capitalize(),
                    head + members))
    listed = {p for _, group in out for p in group} | set(others)
    others += [p for p in pages if p not in listed]
    if others:
        out.append(("Other formulations", others))
    return out


# ---------------------------------------------------------------------------------------
# The whole generation


def generate(docs: Path) -> None:
    """Write the generated pages and hand-outs under ``docs`` (replacing earlier ones)."""
    import jupytext  # noqa: F401 (fail here, plainly, when the docs extra is missing)

    from svm_models import formulations

    registered = set(formulations())
    formulation_page.cache_clear()   # (one generation: the catalogue as it is now)
    for sub in ("formulations", "examples", "handouts"):
        shutil.rmtree(docs / sub, ignore_errors=True)
        (docs / sub).mkdir(parents=True)
    index = (CATALOGUE / "README.md").read_text()
    (docs / "formulations" / "index.md").write_text(_catalogue_links(index) + "".join(
        _toctree(pages, hidden=True, caption=caption) for caption, pages in catalogue_order()))
    for name in _catalogue_pages():
        (docs / "formulations" / f"{name}.md").write_text(
            formulation_page(CATALOGUE / f"{name}.md", name in registered))
    for path in examples():
        _write_notebook(_with_handout_links(example_notebook(path), path.stem),
                        docs / "examples" / f"{path.stem}.ipynb")
    handouts(docs / "handouts")


def _toctree(entries, *, hidden=False, caption=None) -> str:
    opts = (":hidden:\n" if hidden else "") + (f":caption: {caption}\n" if caption else "")
    return "\n```{toctree}\n" + opts + "\n" + "\n".join(entries) + "\n```\n"

"""The book (``make docs``, issue 32): its pages come from the one source of each, and every
hand-out runs as it is.

* every registered formulation has its page, named by the formulation, made from its catalogue
  page (the mathematics, the components, the backends as written there) and the generated
  section that builds, shows, solves and draws it;
* every example in ``examples/`` has its page, the teaching path first and in order;
* every page's two hand-outs say the same program: the ``.py``'s cells are the ``.ipynb``'s;
* every hand-out notebook runs as it is in a fresh kernel (nbclient), and every page of the
  teaching path and every formulation's draws at least one figure.

The notebook runs are marked ``book``: ``make docs`` runs them after the build (minutes on
two cores: one fresh kernel per hand-out), ``make test`` leaves them out.
"""

from __future__ import annotations

import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import svm_models as sm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
import book  # noqa: E402

pytest.importorskip("jupytext")   # the docs extra: installed by `make setup`


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    docs = tmp_path_factory.mktemp("docs")
    book.generate(docs)
    return docs


def test_every_formulation_has_its_page_made_from_its_catalogue_page(generated):
    for name in sm.formulations():
        page = (generated / "formulations" / f"{name}.md").read_text()
        source = (ROOT / "formulations" / f"{name}.md").read_text()
        # the catalogue's mathematics and its Components table, as written there
        problem = re.search(r"## Problem\n(.*?)\n## ", source, flags=re.S).group(1)
        assert problem.strip() in page, name
        assert re.search(r"^## Components$", page, flags=re.M), name
        # its example, executed: a code cell, no longer a static block
        assert "```python" not in page and page.count("```{code-cell} ipython3") >= 3, name
        # the generated section builds this formulation, shows components that exist
        section = page.split("## Build it, look inside, solve it, draw it")[1]
        assert f'sm.build("{name}", X, y' in section, name
        shown = eval(re.search(r"for name in (\[.*?\]):", section).group(1))
        assert shown, name
        model = sm.build(name, *__import__("svm_models.datasets", fromlist=["x"]).teaching_2d(
            30, separation=book.SEPARATION), **book.DRAW_PARAMS.get(name, {}))
        assert all(model.component(c) is not None for c in shown), (name, shown)
        assert f"{{download}}`{name}.ipynb <../handouts/formulations/{name}.ipynb>`" in page
    # one page per catalogue page (the formulations and the family pages), and the index
    catalogue = {p.stem for p in (ROOT / "formulations").glob("*.md")} - {"README"}
    assert set(sm.formulations()) <= catalogue
    assert sorted(p.stem for p in (generated / "formulations").glob("*.md")) == sorted(
        catalogue | {"index"})


def test_every_example_has_its_page_teaching_path_first(generated):
    pages = [p.stem for p in book.examples()]
    assert pages[:len(book.TEACHING_PATH)] == list(book.TEACHING_PATH)
    assert sorted(pages) == sorted(p.stem for p in (ROOT / "examples").glob("*.py"))
    assert sorted(p.stem for p in (generated / "examples").glob("*.ipynb")) == sorted(pages)
    teaching = (ROOT / "docs" / "teaching.md").read_text()
    more = (ROOT / "docs" / "more_examples.md").read_text()
    toc = lambda text: re.findall(r"^examples/(\w+)$", text, flags=re.M)   # noqa: E731
    assert toc(teaching) == list(book.TEACHING_PATH)          # the path, in its order
    assert sorted(toc(more)) == sorted(set(pages) - set(book.TEACHING_PATH))


def test_the_two_handouts_of_a_page_are_the_same_program(generated):
    import jupytext

    pages = [("examples", p.stem) for p in book.examples()] + [
        ("formulations", n) for n in book._catalogue_pages()]
    assert sorted((p.parent.name, p.stem) for p in (generated / "handouts").rglob("*.ipynb")) \
        == sorted(pages)
    for kind, name in pages:
        py = jupytext.read(generated / "handouts" / kind / f"{name}.py", fmt="py:percent")
        nb = jupytext.read(generated / "handouts" / kind / f"{name}.ipynb")
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        assert [c.source for c in py.cells if c.cell_type == "code"] == code, name
        assert code or (kind == "formulations" and name not in sm.formulations()), name


def _run(path: Path) -> tuple[str, str | None, int]:
    """Execute one notebook as it is, in a fresh kernel in its own folder: ("kind/name",
    error or None, number of figures)."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    name = f"{path.parent.name}/{path.stem}"
    nb = nbformat.read(path, as_version=4)
    try:
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    except CellExecutionError as e:
        return name, str(e).splitlines()[-1] if str(e) else repr(e), 0
    figures = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
                  for o in c.get("outputs", []))
    return name, None, figures


@pytest.mark.book
def test_every_handout_notebook_runs_as_it_is_and_draws(generated):
    notebooks = sorted((generated / "handouts").rglob("*.ipynb"))
    must_draw = {f"examples/{n}" for n in book.TEACHING_PATH} | {
        f"formulations/{n}" for n in sm.formulations()}
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_run, notebooks))
    failed = [f"{name}: {err}" for name, err, _ in results if err]
    assert not failed, "\n".join(failed)
    blank = [name for name, _, figures in results if figures == 0 and name in must_draw]
    assert not blank, f"pages that draw nothing: {blank}"

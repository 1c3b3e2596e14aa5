"""The catalogue (``formulations/``) against the code it describes.

* every registered formulation has its page, and every page but the index and the family
  overviews is a registered formulation;
* each page has the fixed sections, in order;
* every component named in a page's Components table exists in the model built with the
  page's parameters (per variant), and every top-level component of each built model is on the
  page (the page cannot drift from the builder);
* the problem class stated per variant is the built model's and (default) the registry's, and
  the backends listed are exactly those whose classes in ``svm_models.solvers()`` include it,
  as ``docs/backend_columns.py`` writes them from the backend table (never by hand);
* every ```python snippet runs as is (fresh namespace);
* every relative link between pages resolves, anchors included;
* every builder's docstring has a ``.. math::`` block, its problem class, a reference and
  names each component that its page names;
* the mathematics is MyST math, not code: no inline code holds ASCII mathematics (the
  heuristic ``docs/check_site.py`` applies to the built pages, ``MATH_IN_CODE``; the pages
  still being converted, ``MATH_IN_CODE_PENDING``, excepted), and every ``$...$`` is closed
  and balanced.

The page format the test reads is stated in ``formulations/README.md``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import svm_models as sm
from svm_models.formulations import get, names
from svm_models.solvers import backend
from svm_models.solvers.table import catalogue_backends

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = ROOT / "formulations"
NAMES = names()
#: the index and the family pages: one per family module of more than one formulation
#: (classic, c_tuning, radius_margin, mip), derived from the registry
FAMILY_PAGES = {"README.md"} | {f"{get(n).module}.md" for n in NAMES
                                if sum(get(m).module == get(n).module for m in NAMES) > 1}
SECTIONS = ["Problem", "Components", "Problem class and backends", "Post-processing",
            "Reference", "Example"]


def page(name: str) -> str:
    return (CATALOGUE / f"{name}.md").read_text()


def sections(text: str) -> dict[str, str]:
    """``## title`` -> body, in order of appearance."""
    out, title = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
            out[title] = ""
        elif title is not None:
            out[title] += line + "\n"
    return out


def table(body: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table in ``body``, header dropped."""
    lines = [ln.strip() for ln in body.splitlines()]
    start = next(i for i, ln in enumerate(lines) if ln.startswith("|"))
    rows = []
    for ln in lines[start:]:
        if not ln.startswith("|"):
            break
        rows.append([c.strip() for c in ln.strip("|").split("|")])
    header, sep, *rows = rows
    assert set("".join(sep)) <= set("-: "), f"no separator row under {header}"
    for r in rows:
        assert len(r) == len(header), f"row {r} has {len(r)} cells, the header {len(header)}"
    return rows


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def variants(name: str) -> dict[str, dict]:
    """The page's variants: name -> build parameters (empty when the page has none)."""
    body = sections(page(name)).get("Variants")
    if body is None:
        return {}
    out = {}
    for row in table(body):
        (params,) = ticked(row[1])
        out[row[0]] = eval(f"dict({params})", {})
    return out


def components(name: str) -> list[tuple[str, set[str] | None]]:
    """(component, the variants it exists in, or None for all) from the Components table."""
    out = []
    for row in table(sections(page(name))["Components"]):
        where = None
        if len(row) > 2 and row[2] != "all":
            where = {v.strip() for v in row[2].split(",")}
        comps = ticked(row[0])
        assert comps, f"{name}: a Components row names no component: {row}"
        out += [(c, where) for c in comps]
    return out


def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
    return X, y


def top_level(model) -> set[str]:
    return {c.local_name for c in model.component_objects(descend_into=False)}


def builds(name: str) -> dict[str, object]:
    """The model of each variant (and of the default parameters), on the same data."""
    X, y = data()
    out = {"default": sm.build(name, X, y)}
    for v, params in variants(name).items():
        out[v] = sm.build(name, X, y, **params)
    return out


# ---------------------------------------------------------------------------------------
# (a) one page per registered formulation


def test_every_registered_formulation_has_a_page_and_every_page_is_registered():
    pages = {p.name for p in CATALOGUE.glob("*.md")} - FAMILY_PAGES
    assert pages == {f"{n}.md" for n in NAMES}
    # and the index lists exactly these pages (derived from the registry, no count by hand)
    index = table((CATALOGUE / "README.md").read_text())
    listed = {m for row in index for m in re.findall(r"\]\((\w+)\.md\)", row[1])}
    assert listed - {p[:-3] for p in FAMILY_PAGES} == set(NAMES)


def test_the_index_and_the_family_pages_link_every_formulation_page():
    index = (CATALOGUE / "README.md").read_text()
    rows = {ticked(r[0])[0]: r for r in table(index) if ticked(r[0])}
    for n in NAMES:
        assert f"]({n}.md)" in rows[n][1], n
        assert rows[n][2].split()[0] == get(n).problem_class, "the index's problem class"
        family = get(n).module
        if sum(get(m).module == family for m in NAMES) == 1:
            continue   # a family of one formulation: its page is the family's
        assert f"]({n}.md" in (CATALOGUE / f"{family}.md").read_text(), (family, n)


def test_the_family_page_keeps_the_corrections_of_the_appendix():
    """The corrected R-SVM_mu+ gradient and the counterexample to Lemma 1 stay stated, with
    the ratio checked here: R / R_O = sqrt(2(n-1)/n) for the regular simplex on n points."""
    text = (CATALOGUE / "radius_margin.md").read_text()
    assert "dJ/dmu_k = (lam/2)(x_{i*k} - x_{j*k})^2 - 1/2 (sum_i a_i y_i x_ik)^2" in text
    assert "R / R_O = sqrt(2(n-1)/n)" in text
    ratio = {n: np.sqrt(2 * (n - 1) / n) for n in (14, 15)}
    bound = (1 + np.sqrt(3)) / 2
    assert ratio[14] < bound < ratio[15]
    assert f"n = 14: {ratio[14]:.4f}; n = 15: {ratio[15]:.4f}" in text


@pytest.mark.parametrize("name", NAMES)
def test_page_structure(name):
    text = page(name)
    assert text.startswith(f"# `{name}`"), "the title names the formulation"
    titles = [t for t in sections(text) if t != "Variants"]
    assert titles == SECTIONS
    problem = sections(text)["Problem"]
    blocks = re.findall(r"\$\$(.+?)\$\$", problem, flags=re.S)
    assert blocks, "the problem is stated in a $$ ... $$ block"
    for tex in blocks:   # a cheap well-formedness check of the LaTeX
        assert tex.count("{") == tex.count("}"), tex
        assert re.findall(r"\\begin\{(\w+)\}", tex) == re.findall(r"\\end\{(\w+)\}", tex)
    assert len(re.findall(r"^```python$", sections(text)["Example"], flags=re.M)) == 1


# ---------------------------------------------------------------------------------------
# (b) the components on the page are the built model's, both ways


@pytest.mark.parametrize("name", NAMES)
def test_components_match_the_built_model(name):
    comps = components(name)
    models = builds(name)
    vs = set(variants(name))
    for c, where in comps:
        assert where is None or where <= vs, f"{name}: {c} names unknown variants {where - vs}"
    expected = {v: {c for c, where in comps if where is None or v in where} for v in vs}
    for v in vs:
        got = top_level(models[v])
        assert got == expected[v], (
            f"{name}, variant {v}: on the page but not in the model {expected[v] - got}; "
            f"in the model but not on the page {got - expected[v]}")
    default = top_level(models["default"])
    if vs:
        assert default in expected.values(), "the default build is one of the variants"
    else:
        assert default == {c for c, _ in comps}


# ---------------------------------------------------------------------------------------
# (c) problem class and backends


def capable(problem_class: str) -> set[str]:
    return {n for n, info in sm.solvers().items() if problem_class in info["classes"]}


def test_the_backend_columns_derive_from_the_table():
    """The derivation itself: every backend that takes a class and no other, the project's
    first (the backends' declarations: ``project``, ``plugins``), each group by name."""
    for cls in sm.solvers.ORDER:
        text = catalogue_backends(cls)
        own, _, rest = text.partition("; ")
        assert set(ticked(text)) == capable(cls), cls
        assert ticked(own) == sorted(n for n in capable(cls) if backend(n).project), cls
        assert ticked(own) == sorted(ticked(own)) and ticked(rest) == sorted(ticked(rest))
        assert all(not backend(n).project for n in ticked(rest)), cls
    assert catalogue_backends("MIQP") == "`gurobi`, `scip`"   # (no other takes a MIQP)


@pytest.mark.parametrize("name", NAMES)
def test_problem_class_and_backends(name):
    models = builds(name)
    covered = set()
    for row in table(sections(page(name))["Problem class and backends"]):
        keys = {k.strip() for k in row[0].split(",")}
        keys = set(models) if keys == {"all"} else keys
        cls = row[1].strip("* ")
        for k in keys:
            assert models[k]._svm.record.problem_class == cls, (name, k)
        if "default" in keys:
            assert get(name).problem_class == cls
        assert set(ticked(row[2])) == capable(cls), (name, cls)
        assert row[2] == catalogue_backends(cls), (
            f"{name}: the backends of {cls} are not as derived from the backend table; run "
            "python docs/backend_columns.py")
        covered |= keys
    assert covered == set(models), f"{name}: builds without a stated class {set(models) - covered}"


# ---------------------------------------------------------------------------------------
# (d) every snippet runs


def snippets(path: Path) -> list[str]:
    """The ```python blocks, each padded so that a traceback names the page's line."""
    text = path.read_text()
    return ["\n" * text.count("\n", 0, m.start(1)) + m.group(1)
            for m in re.finditer(r"^```python\n(.*?)^```$", text, flags=re.M | re.S)]


@pytest.mark.parametrize("path", sorted(CATALOGUE.glob("*.md")), ids=lambda p: p.name)
def test_snippets_run(path):
    for code in snippets(path):
        exec(compile(code, str(path), "exec"), {"__name__": "__catalogue__"})


# ---------------------------------------------------------------------------------------
# (e) links resolve


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def slugs(path: Path) -> set[str]:
    """The heading anchors of a Markdown file (a repeated heading gets ``-1``, ``-2``, ...)."""
    out, seen = set(), {}
    text = re.sub(r"^```.*?^```$", "", path.read_text(), flags=re.M | re.S)
    for heading in re.findall(r"^#+ (.+)$", text, flags=re.M):
        s = slug(heading)
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


@pytest.mark.parametrize("path", sorted(CATALOGUE.glob("*.md")), ids=lambda p: p.name)
def test_links_resolve(path):
    text = re.sub(r"^```.*?^```$", "", path.read_text(), flags=re.M | re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        assert dest.exists(), f"{path.name}: broken link {target}"
        if anchor:
            assert anchor in slugs(dest), f"{path.name}: no heading #{anchor} in {dest.name}"


def test_slug_follows_github():
    assert slug("R-SVM+ (`rsvm_plus_primal`, `rsvm_plus_dual`)") == \
        "r-svm-rsvm_plus_primal-rsvm_plus_dual"
    assert slug("Post-processing (`classic.extract`)") == "post-processing-classicextract"


# ---------------------------------------------------------------------------------------
# builder docstrings (what `svm-models formulations show NAME` prints)


@pytest.mark.parametrize("name", NAMES)
def test_builder_docstring(name):
    f = get(name)
    doc = f.builder.__doc__
    assert ".. math::" in doc
    assert re.search(rf"\b{f.problem_class}\b", doc), "states the problem class"
    assert "Reference" in doc
    missing = [c for c, _ in components(name)
               if not re.search(rf"``{re.escape(c)}(\[[^`]*\])?``", doc)]
    assert not missing, f"{name}: the docstring does not name {missing}"


# ---------------------------------------------------------------------------------------
# the mathematics is typeset (MyST math), code font is for code


def _check_site():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import check_site
    finally:
        sys.path.pop(0)
    return check_site


def prose(path: Path) -> str:
    """The page without its fenced and indented code blocks."""
    text = re.sub(r"^```.*?^```$", "", path.read_text(), flags=re.M | re.S)
    return re.sub(r"^    .*$", "", text, flags=re.M)


@pytest.mark.parametrize("path", sorted(CATALOGUE.glob("*.md")), ids=lambda p: p.name)
def test_mathematics_is_typeset_not_code(path):
    site = _check_site()
    text = prose(path)
    code = [" ".join(c.split()) for c in re.findall(r"`([^`]+)`", text)]
    found = site.math_in_code(code)
    if path.stem in site.MATH_IN_CODE_PENDING:
        assert found, f"{path.name} has no ASCII math left: take it out of MATH_IN_CODE_PENDING"
        return
    assert not found, f"{path.name}: ASCII math in code font, write it as $...$: {found}"
    inline = re.sub(r"`[^`]*`", "", re.sub(r"\$\$.*?\$\$", "", text, flags=re.S))
    for n, paragraph in enumerate(inline.split("\n\n")):
        assert paragraph.count("$") % 2 == 0, f"{path.name}: an unclosed $ in {paragraph!r}"
        for tex in re.findall(r"\$([^$]+)\$", paragraph):
            assert tex.count("{") - tex.count("\\{") == tex.count("}") - tex.count("\\}"), tex
            assert tex == tex.strip(), f"{path.name}: $...$ with a space inside its $: {tex!r}"
            assert not re.search(r"_(\w|\{(?:[^{}]|\{[^{}]*\})*\})_", tex), \
                f"{path.name}: a double subscript in {tex!r}"

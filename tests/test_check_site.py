"""The book's browser check (``docs/check_site.py``) finds what it is there to find: a page
with an image that did not draw, mathematics MathJax did not render, a broken link or anchor,
an asset from the network, a console error -- and passes a page with none. In headless
Chromium (Debian's package; ``.ci/run`` installs it): skipped, saying so, where there is none.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
import check_site  # noqa: E402

pytest.importorskip("playwright")

MATHJAX = Path(__import__("importlib.util").util.find_spec(
    "sphinx-mathjax-offline").origin).parent / "static" / "mathjax"
HEAD = '<script defer src="_static/mathjax/tex-chtml.js"></script>'


def _png(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1, 1))
    ax.plot([0, 1], [0, 1])
    fig.savefig(path)
    plt.close(fig)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    html = tmp_path_factory.mktemp("html")
    shutil.copytree(MATHJAX, html / "_static" / "mathjax")
    _png(html / "figure.png")
    (html / "index.html").write_text(
        f'<html><head>{HEAD}</head><body><h1 id="top">Good</h1>'
        r'<p>A formula <span class="math notranslate nohighlight">\(x^2 + \alpha_i\)</span>.</p>'
        r'<div class="math notranslate nohighlight">\[\max_\alpha e^\top \alpha\]</div>'
        '<img src="figure.png"><a href="other.html#part">other</a> <a href="#top">top</a>'
        '<a href="https://doi.org/10.1000/x">a paper</a></body></html>')
    (html / "other.html").write_text(
        '<html><body><h2 id="part">Part</h2><a href="index.html">back</a></body></html>')
    return html


@pytest.fixture(scope="module")
def browser():
    found = check_site.find_browser()
    if found is None:
        pytest.skip("no Chromium here (apt-get install chromium; .ci/run installs it)")
    return found


def test_a_good_site_passes(site, browser):
    failures, totals = check_site.failures_of(site, browser)
    assert failures == []
    assert totals["pages"] == 2 and totals["images"] == 1
    assert totals["math pages"] == 1 and totals["math"] == 2


def test_every_kind_of_fault_is_found(site, browser, tmp_path):
    bad = tmp_path / "html"
    shutil.copytree(site, bad)
    (bad / "index.html").write_text(
        '<html><head><script src="https://cdn.example.org/lib.js"></script></head><body>'
        r'<p>Math and no MathJax: <span class="math notranslate nohighlight">\(x\)</span></p>'
        '<img src="missing.png"><a href="nowhere.html">x</a><a href="other.html#nosuch">y</a>'
        '<script>console.error("boom")</script></body></html>')
    (bad / "other.html").write_text(   # MathJax loaded, a formula it cannot parse
        f'<html><head>{HEAD}</head><body><h2 id="part">Part</h2>'
        r'<span class="math notranslate nohighlight">\(\frac{1}{\)</span></body></html>')
    failures, _ = check_site.failures_of(bad, browser)
    text = "\n".join(failures)
    for expected in ("index.html: asked the network for https://cdn.example.org/lib.js",
                     "index.html: image with no size",
                     "index.html: mathematics on the page but no MathJax loaded",
                     "index.html: broken link nowhere.html: no file nowhere.html",
                     "index.html: broken link other.html#nosuch: no #nosuch in other.html",
                     "index.html: console error: boom",
                     "other.html: MathJax rendered"):
        assert expected in text, (expected, text)

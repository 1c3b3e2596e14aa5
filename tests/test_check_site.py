"""The book's browser check (``docs/check_site.py``) finds what it is there to find: a page
with an image that did not draw, mathematics MathJax did not render, a broken link or anchor,
an asset from the network, a console error, a code block that scrolls sideways, mathematics in
code font on a formulation page -- and passes a page with none. With no browser it fails unless
told to skip; its server prints nothing when a browser drops a connection. In headless
Chromium (Debian's package; ``.ci/run`` installs it): the browser tests are skipped, saying so,
where there is none.
"""

from __future__ import annotations

import shutil
import socket
import sys
import time
import urllib.request
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
        '<a href="https://doi.org/10.1000/x">a paper</a>'
        f'<pre style="white-space: pre-wrap; width: 300px">{LONG}</pre></body></html>')
    (html / "other.html").write_text(
        '<html><body><h2 id="part">Part</h2><a href="index.html">back</a></body></html>')
    (html / "formulations").mkdir()
    (html / "formulations" / "page.html").write_text(   # code font for code: m.alpha, margin[i]
        '<html><body><p><code>m.alpha</code> and <code>margin[i]</code>, '
        "<code>quad_form=\"dense\"</code>, <code>extra['kernel_rank']</code></p>"
        '<pre>alpha_i &lt;= C in a code block is code</pre></body></html>')
    return html


#: a code line far wider than a 300 px block
LONG = "x = " + " + ".join(f"alpha[{i}]" for i in range(40))


@pytest.fixture(scope="module")
def browser():
    found = check_site.find_browser()
    if found is None:
        pytest.skip("no Chromium here (apt-get install chromium; .ci/run installs it)")
    return found


def test_a_good_site_passes(site, browser):
    failures, totals = check_site.failures_of(site, browser)
    assert failures == []
    assert totals["pages"] == 3 and totals["images"] == 1 and totals["code blocks"] == 2
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


def test_a_code_block_that_scrolls_and_math_in_code_font_fail(site, browser, tmp_path):
    bad = tmp_path / "html"
    shutil.copytree(site, bad)
    (bad / "other.html").write_text(   # a code line wider than its block: it scrolls sideways
        f'<html><body><h2 id="part">Part</h2><pre style="width: 300px">{LONG}</pre>'
        '<p>outside the catalogue, code is anything: <code>x &lt;= 1</code></p></body></html>')
    (bad / "formulations" / "page.html").write_text(
        "<html><body><p>The box <code>alpha_i &lt;= C</code>, the norm <code>||z||^2</code>, "
        "<code>G(K) = F'F</code> and <code>m.alpha</code></p></body></html>")
    (bad / "formulations" / "clean.html").write_text(
        "<html><body><p>The box on <code>m.alpha</code></p></body></html>")
    failures, _ = check_site.failures_of(bad, browser)
    assert len(failures) == 2, failures
    assert failures[0].startswith("formulations/page.html: 3 pieces of mathematics in code "
                                  "font"), failures
    assert "'alpha_i <= C'" in failures[0] and "m.alpha" not in failures[0]
    assert failures[1].startswith("other.html: code block scrolls sideways ("), failures
    assert "x = alpha[0] + alpha[1]" in failures[1]
    # a page still being converted is listed, not failed; once clean, it must leave the list
    failures, totals = check_site.failures_of(bad, browser, pending={"page", "clean"})
    assert [f.split(":")[0] for f in failures] == ["formulations/clean.html", "other.html"]
    assert failures[0] == ("formulations/clean.html: no mathematics left in code font: take "
                           "it out of MATH_IN_CODE_PENDING")
    assert totals["pending"] == {"formulations/page.html": 3}


def test_the_math_heuristic_knows_code_from_mathematics():
    maths = ["alpha_i <= C", "y_i f(x_i) >= 1", "||w||", "z_k^2", "sum_i a_i", "G(K) = F'F",
             "X'(y*alpha)", "K ~= L L'", "xi_i", "lam_k"]
    code = ["m.alpha", "alpha[i]", "margin[i]", 'quad_form="dense"', "extra['polished']",
            "sample_weight", "kernel_rank", "C * weight[i]", "np.trace(K)", "g_lo", "x ** 2",
            'extra["alpha_source"]', 'sol.extra["margin_M"]', "xi_sq", "sum_of_squares", "lam_max",
            "addConsIndicator(... >= rhs, z)", "m.addGenConstrIndicator(z, False, e >= rhs)"]
    assert check_site.math_in_code(maths + code) == maths


def test_no_browser_fails_unless_told_to_skip(site, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))             # no chromium on it
    monkeypatch.delenv("SVM_MODELS_CHROMIUM", raising=False)
    monkeypatch.delenv(check_site.ALLOW_SKIP, raising=False)
    assert check_site.find_browser() is None
    assert check_site.main(["--html", str(site)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "cannot check the book: no Chromium" in err and "--allow-skip" in err
    assert check_site.main(["--html", str(site), "--allow-skip"]) == 0
    assert capsys.readouterr().out.startswith("check-docs: SKIPPED, as asked")
    monkeypatch.setenv(check_site.ALLOW_SKIP, "1")
    assert check_site.main(["--html", str(site)]) == 0
    monkeypatch.setenv(check_site.ALLOW_SKIP, "0")
    assert check_site.main(["--html", str(site)]) == 1


def test_a_dropped_connection_prints_nothing(tmp_path, capfd):
    (tmp_path / "big.bin").write_bytes(b"x" * 20_000_000)
    server = check_site.serve(tmp_path)
    port = server.server_address[1]
    try:
        for _ in range(3):   # ask for a large file and hang up at once (RST): a broken pipe
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            s.recv(1024)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.close()
        time.sleep(0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/big.bin") as r:   # still serving
            assert len(r.read()) == 20_000_000
    finally:
        server.shutdown()
    out, err = capfd.readouterr()
    assert out == "" and err == "", err

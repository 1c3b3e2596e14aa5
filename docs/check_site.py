"""The built book in a real browser (``make check-docs``, after ``make docs``).

Serves ``docs/_build/html`` on 127.0.0.1 and opens every page in headless Chromium (Debian's
``chromium`` package, driven by Playwright with the system browser: nothing is downloaded),
1,280 px wide. A page passes when

* it loads with no console error and no uncaught exception, and asks for nothing outside
  127.0.0.1 (an asset from a CDN is a failure: the book must work with no internet);
* every ``<img>`` has a non-zero natural size (a figure that did not render has none);
* where it holds mathematics, MathJax has rendered all of it (``mjx-container`` elements, as
  many as the page's math nodes, and no ``merror``);
* every internal link resolves: the file exists, and so does the ``#anchor`` in it;
* no code block (``<pre>``: code and printed output) scrolls sideways: its content is no
  wider than the block (``scrollWidth <= clientWidth``);
* on a formulation page (``formulations/``), no inline code holds mathematics: ASCII math
  (``<=``, ``>=``, ``^2``, ``sum_``, ``||``, ``alpha_``, ... -- :data:`MATH_IN_CODE`) belongs in
  MyST math (``$\\alpha_i \\le C$``), code font is for code (``m.alpha``, ``margin[i]``).
  The pages in :data:`MATH_IN_CODE_PENDING` are still being converted: each is listed, not
  failed, and leaves the list once it has no such code (the check fails a listed page that
  is already clean, so the list only shrinks).

Exit status 1 on any failure, each listed. With no Chromium it cannot check, and fails (exit
1) saying how to install one -- unless told to skip, by ``--allow-skip`` or the environment
variable ``SVM_MODELS_CHECK_DOCS_ALLOW_SKIP=1``: then it says SKIPPED and exits 0.

    python docs/check_site.py [--html docs/_build/html] [--allow-skip]
                              [--screenshots DIR [--width PX] PAGE...]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import shutil
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

HERE = Path(__file__).resolve().parent
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
#: the environment variable that lets ``make check-docs`` pass, saying SKIPPED, with no browser
ALLOW_SKIP = "SVM_MODELS_CHECK_DOCS_ALLOW_SKIP"
#: the width the book is checked at (px)
WIDTH = 1280
#: ASCII mathematics in inline code (a heuristic): comparisons, powers, sums, norms, indexed
#: Greek letters, transposes (``F'F``, ``X'(y*alpha)``)
MATH_IN_CODE = re.compile(r"<=|>=|~=|\^[\w({]|\bsum_(?:\w\b|\{)|\|\|"
                          r"|\b(?:alpha|xi|mu|lam|gamma|beta)_(?:\w\b|\{)|[A-Za-z)]'[A-Za-z(]")
#: what marks inline code as code even where it holds a comparison: a string in double
#: quotes, an ellipsis, a camelCase name (a solver's API)
CODE_NOT_MATH = re.compile(r'"|\.\.\.|\b[a-z]+[A-Z]\w*\(')
#: the formulation pages whose mathematics is still partly in code font (being converted to
#: MyST math, issue 49): reported, not failed; a listed page with none left fails
MATH_IN_CODE_PENDING = frozenset()


class _Links(HTMLParser):
    """The ids and the internal links of one HTML file."""

    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if tag in ("a", "link", "img", "script") and a.get(key):
                self.links.append(a[key])


@functools.lru_cache(maxsize=None)
def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(errors="replace"))
    return p


def broken_links(html: Path, page: Path) -> list[str]:
    """The internal links of ``page`` that do not resolve (file, or anchor in it)."""
    out = []
    for link in _parse(page).links:
        parts = urlsplit(link)
        if parts.scheme or parts.netloc:
            continue   # a link out of the book (a paper's DOI): assets are checked in the browser
        target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            out.append(f"{link}: no file {target.relative_to(html.resolve())}"
                       if target.is_relative_to(html.resolve()) else f"{link}: outside the book")
            continue
        if parts.fragment and target.suffix == ".html" and \
                unquote(parts.fragment) not in _parse(target).ids:
            out.append(f"{link}: no #{parts.fragment} in {target.name}")
    return out


def find_browser() -> str | None:
    for name in (os.environ.get("SVM_MODELS_CHROMIUM"),) + BROWSERS:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def serve(html: Path):
    handler = functools.partial(_QuietHandler, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the book and logs nothing. A browser that closes a connection before a file
    has been sent (a page closed while a font or a script still loads) is no failure of the
    book: the broken pipe ends that request quietly instead of printing a traceback."""

    def log_message(self, *args):
        pass

    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


_PAGE_CHECK = """
async () => {
  const imgs = [...document.images];
  await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
  const bad = imgs.filter(i => !(i.naturalWidth > 0 && i.naturalHeight > 0)).map(i => i.src);
  const mathNodes = document.querySelectorAll('div.math, span.math').length;
  let rendered = 0, errors = 0, mathjax = null;
  if (mathNodes > 0) {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      await MathJax.startup.promise;
      if (MathJax.typesetPromise) { await MathJax.typesetPromise(); }
      mathjax = MathJax.version;
    }
    rendered = document.querySelectorAll('mjx-container').length;
    errors = document.querySelectorAll('mjx-merror, merror, .MathJax_Error').length;
  }
  const wide = [...document.querySelectorAll('pre')]
    .filter(p => p.clientWidth > 0 && p.scrollWidth > p.clientWidth + 1)
    .map(p => `${p.scrollWidth} px in ${p.clientWidth} px: ` +
              JSON.stringify(p.textContent.split('\\n').reduce((a, b) => b.length > a.length ? b : a, '')
                             .slice(0, 60)));
  const inlineCode = [...document.querySelectorAll('code')]
    .filter(c => !c.closest('pre')).map(c => c.textContent);
  const pres = [...document.querySelectorAll('pre')].filter(p => p.clientWidth > 0).length;
  return {images: imgs.length, bad, mathNodes, rendered, errors, mathjax, pres, wide, inlineCode};
}
"""


def math_in_code(texts) -> list[str]:
    """The inline-code texts that hold ASCII mathematics (:data:`MATH_IN_CODE`); one with a
    string in double quotes, an ellipsis or a camelCase name is code
    (``Solution.alpha_source``, ``addConsIndicator(... >= rhs, z)``)."""
    return [t for t in texts if not CODE_NOT_MATH.search(t) and MATH_IN_CODE.search(t)]


def check(html: Path, browser: str, screenshots: Path | None = None, shots=(),
          width: int = WIDTH) -> int:
    """Check every page of ``html``; print the totals and each failure; 1 on any."""
    failures, totals = failures_of(html, browser, screenshots, shots, width=width)
    print(f"check-docs: {totals['pages']} pages, {totals['images']} images, "
          f"{totals['math']} formulas rendered on {totals['math pages']} pages, "
          f"{totals['links']} links and assets, {totals['code blocks']} code blocks within "
          f"the column at {width} px, in {browser}")
    for page, n in sorted(totals["pending"].items()):
        print(f"  pending (MATH_IN_CODE_PENDING): {page}: {n} pieces of mathematics in code font")
    for f in failures:
        print("  FAIL", f)
    return 1 if failures else 0


def _math_problems(rel: str, inline_code, pending, totals) -> list[str]:
    """The failures of page ``rel`` for mathematics in code font (formulation pages only);
    a page in ``pending`` is counted in ``totals["pending"]`` instead, and fails once clean."""
    if not rel.startswith("formulations/"):
        return []
    found = math_in_code(inline_code)
    name = rel[len("formulations/"):].removesuffix(".html")
    if name in pending:
        if not found:
            return ["no mathematics left in code font: take it out of MATH_IN_CODE_PENDING"]
        totals["pending"][rel] = len(found)
        return []
    shown = ", ".join(repr(t) for t in found[:5]) + (", ..." if len(found) > 5 else "")
    if not found:
        return []
    return [(f"{len(found)} pieces of mathematics in code font (write them as MyST math, "
             f"$...$): {shown}")]


def failures_of(html: Path, browser: str, screenshots: Path | None = None, shots=(),
                width: int = WIDTH, pending=None):
    """(failures, totals): each failure ``"page: what"``. ``pending``: the formulation pages
    whose mathematics in code font is listed, not failed (default
    :data:`MATH_IN_CODE_PENDING`)."""
    pending = MATH_IN_CODE_PENDING if pending is None else frozenset(pending)
    from playwright.sync_api import sync_playwright

    pages = sorted(p for p in html.rglob("*.html")
                   if not p.relative_to(html).parts[0].startswith(("_static", "_downloads",
                                                                   "_sources")))
    server = serve(html)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    failures, totals = [], {"pages": 0, "images": 0, "math pages": 0, "math": 0, "links": 0,
                            "code blocks": 0, "pending": {}}
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=browser, headless=True,
                               args=["--no-sandbox", "--disable-gpu"])
        context = b.new_context(viewport={"width": width, "height": 900})
        outside = []
        context.route("**/*", lambda route: (route.continue_() if route.request.url.startswith(
            base) or route.request.url.startswith("data:") else
            (outside.append(route.request.url), route.abort())))
        for path in pages:
            rel = path.relative_to(html).as_posix()
            page = context.new_page()
            problems = []
            page.on("console", lambda m, problems=problems: problems.append(
                f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e, problems=problems: problems.append(f"exception: {e}"))
            outside.clear()
            response = page.goto(urljoin(base, rel), wait_until="load", timeout=60_000)
            if response is None or not response.ok:
                problems.append(f"HTTP {response.status if response else 'no response'}")
            r = page.evaluate(_PAGE_CHECK)
            problems += [f"image with no size: {src}" for src in r["bad"]]
            if r["mathNodes"]:
                totals["math pages"] += 1
                totals["math"] += r["rendered"]
                if r["mathjax"] is None:
                    problems.append("mathematics on the page but no MathJax loaded")
                elif r["rendered"] < r["mathNodes"] or r["errors"]:
                    problems.append(f"MathJax rendered {r['rendered']} of {r['mathNodes']} "
                                    f"formulas, {r['errors']} errors")
            problems += [f"asked the network for {u}" for u in outside]
            problems += [f"code block scrolls sideways ({w})" for w in r["wide"]]
            totals["code blocks"] += r["pres"] - len(r["wide"])
            problems += _math_problems(rel, r["inlineCode"], pending, totals)
            links = broken_links(html, path)
            totals["links"] += len(_parse(path).links)
            problems += [f"broken link {x}" for x in links]
            totals["pages"] += 1
            totals["images"] += r["images"]
            if screenshots is not None and rel in shots:
                screenshots.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(screenshots / rel.replace("/", "_").replace(
                    ".html", ".png")), full_page=True)
            page.close()
            failures += [f"{rel}: {p}" for p in problems]
        b.close()
    server.shutdown()
    return failures, totals


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--html", type=Path, default=HERE / "_build" / "html")
    ap.add_argument("--allow-skip", action="store_true",
                    help=f"with no Chromium, say SKIPPED and exit 0 (also: {ALLOW_SKIP}=1); "
                         "without it, no browser is a failure")
    ap.add_argument("--screenshots", type=Path, default=None)
    ap.add_argument("--width", type=int, default=WIDTH, help=f"viewport width (default {WIDTH})")
    ap.add_argument("shots", nargs="*",
                    help="pages to screenshot (e.g. formulations/soft_l1_dual.html)")
    args = ap.parse_args(argv)
    if not (args.html / "index.html").exists():
        print(f"check-docs: no {args.html / 'index.html'}: run `make docs` first", file=sys.stderr)
        return 2
    browser = find_browser()
    if browser is None:
        looked = f"looked for {', '.join(BROWSERS)} and $SVM_MODELS_CHROMIUM"
        if args.allow_skip or os.environ.get(ALLOW_SKIP, "") not in ("", "0"):
            print(f"check-docs: SKIPPED, as asked -- no Chromium on this machine ({looked})")
            return 0
        print(f"check-docs: cannot check the book: no Chromium on this machine ({looked}). "
              "Install Debian's (apt-get install chromium), or pass --allow-skip (or set "
              f"{ALLOW_SKIP}=1) to skip the check, saying so", file=sys.stderr)
        return 1
    return check(args.html, browser, args.screenshots, set(args.shots), width=args.width)


if __name__ == "__main__":
    sys.exit(main())

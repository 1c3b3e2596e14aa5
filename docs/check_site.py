"""The built book in a real browser (``make check-docs``, after ``make docs``).

Serves ``docs/_build/html`` on 127.0.0.1 and opens every page in headless Chromium (Debian's
``chromium`` package, driven by Playwright with the system browser: nothing is downloaded).
A page passes when

* it loads with no console error and no uncaught exception, and asks for nothing outside
  127.0.0.1 (an asset from a CDN is a failure: the book must work with no internet);
* every ``<img>`` has a non-zero natural size (a figure that did not render has none);
* where it holds mathematics, MathJax has rendered all of it (``mjx-container`` elements, as
  many as the page's math nodes, and no ``merror``);
* every internal link resolves: the file exists, and so does the ``#anchor`` in it.

Exit status 1 on any failure, each listed. Where no Chromium is installed (and none can be:
``.ci/run`` installs Debian's when it runs as root), it says so and exits 0 -- the only skip.

    python docs/check_site.py [--html docs/_build/html] [--screenshots DIR PAGE...]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

HERE = Path(__file__).resolve().parent
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


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
    def log_message(self, *args):
        pass


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
  return {images: imgs.length, bad, mathNodes, rendered, errors, mathjax};
}
"""


def check(html: Path, browser: str, screenshots: Path | None = None, shots=()) -> int:
    """Check every page of ``html``; print the totals and each failure; 1 on any."""
    failures, totals = failures_of(html, browser, screenshots, shots)
    print(f"check-docs: {totals['pages']} pages, {totals['images']} images, "
          f"{totals['math']} formulas rendered on {totals['math pages']} pages, "
          f"{totals['links']} links and assets, in {browser}")
    for f in failures:
        print("  FAIL", f)
    return 1 if failures else 0


def failures_of(html: Path, browser: str, screenshots: Path | None = None, shots=()):
    """(failures, totals): each failure ``"page: what"``."""
    from playwright.sync_api import sync_playwright

    pages = sorted(p for p in html.rglob("*.html")
                   if not p.relative_to(html).parts[0].startswith(("_static", "_downloads",
                                                                   "_sources")))
    server = serve(html)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    failures, totals = [], {"pages": 0, "images": 0, "math pages": 0, "math": 0, "links": 0}
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=browser, headless=True,
                               args=["--no-sandbox", "--disable-gpu"])
        context = b.new_context(viewport={"width": 1280, "height": 900})
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
    ap.add_argument("--screenshots", type=Path, default=None)
    ap.add_argument("shots", nargs="*", help="pages to screenshot (e.g. formulations/soft_l1_dual.html)")
    args = ap.parse_args(argv)
    if not (args.html / "index.html").exists():
        print(f"check-docs: no {args.html / 'index.html'}: run `make docs` first", file=sys.stderr)
        return 2
    browser = find_browser()
    if browser is None:
        print("check-docs: SKIPPED -- no Chromium on this machine (looked for "
              f"{', '.join(BROWSERS)} and $SVM_MODELS_CHROMIUM); install Debian's: "
              "apt-get install chromium")
        return 0
    return check(args.html, browser, args.screenshots, set(args.shots))


if __name__ == "__main__":
    sys.exit(main())

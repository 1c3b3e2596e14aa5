"""Sphinx configuration of the svm-models book (``make docs``).

Every page is generated from its one source before Sphinx reads it (``book.generate``: the
``formulations/`` catalogue and ``examples/``) and every notebook is executed during the
build; warnings are errors (``make docs`` passes ``-W``). Nothing is fetched from the network:
MathJax is the pip-packaged copy (``sphinx-mathjax-offline``), the theme's assets are its own.
"""

import atexit
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import book  # noqa: E402

import svm_models  # noqa: E402

_STARTED = time.perf_counter()
book.generate(HERE)

project = "svm-models"
author = "the svm-models developers"
copyright = "2026, the svm-models developers"
release = svm_models.__version__

extensions = ["myst_nb", "sphinx.ext.mathjax"]

# MathJax 3 from the pip-packaged copy (sphinx-mathjax-offline's files; its extension itself is
# not declared safe for parallel reading, so its two lines are here): served from _static
_MATHJAX = Path(importlib.util.find_spec("sphinx-mathjax-offline").origin).parent / "static"
html_static_path = [str(_MATHJAX), "_static"]
html_css_files = ["book.css"]
mathjax_path = "mathjax/tex-chtml.js"
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "handouts"]
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# execute every notebook, every build; a cell's error fails the build
nb_execution_mode = "force"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

# The notebooks' kernels (ipykernel, started by myst-nb over local TCP) each log "Kernel is
# running over TCP without encryption ..." (36 lines a build), and, when the SIGINT that
# jupyter_client's shutdown_kernel sends every kernel before asking it to stop lands in a
# message handler (a loaded machine), "KeyboardInterrupt caught in kernel." -- neither is a
# failure (a cell's error fails the build: nb_execution_raise_on_error). They read their
# configuration from an IPython directory of the build's own, whose kernel configuration
# drops those two messages by their text: every other warning or error of a kernel is still
# printed (and the user's ~/.ipython startup files do not change what a page shows).
_KERNEL_CONFIG = """\
import logging

NOT_FAILURES = ("Kernel is running over TCP without encryption",
                "KeyboardInterrupt caught in kernel")


class _NotFailures(logging.Filter):
    def filter(self, record):
        return not record.getMessage().startswith(NOT_FAILURES)


logging.getLogger("IPKernelApp").addFilter(_NotFailures())
"""
_IPYTHONDIR = Path(tempfile.mkdtemp(prefix="svm-models-book-ipython-"))
(_IPYTHONDIR / "profile_default").mkdir()
(_IPYTHONDIR / "profile_default" / "ipython_kernel_config.py").write_text(_KERNEL_CONFIG)
os.environ["IPYTHONDIR"] = str(_IPYTHONDIR)
atexit.register(shutil.rmtree, _IPYTHONDIR, ignore_errors=True)

html_theme = "pydata_sphinx_theme"
html_title = "svm-models"
html_context = {"default_mode": "light"}
# the entry page and the two lists need no section navigation on the left; an example page has
# its contents on the left, under the section's pages, and no right-hand sidebar: its wide
# figures get the width (book.css)
html_sidebars = {"index": [], "teaching": [], "more_examples": [],
                 "examples/*": ["sidebar-nav-bs", "page-toc"]}
html_theme_options = {
    # (no "**": a page matching two wildcard patterns is a warning; an unmatched page, an
    # example's, gets none)
    "secondary_sidebar_items": {"index": ["page-toc"], "teaching": ["page-toc"],
                                "more_examples": ["page-toc"], "formulations/*": ["page-toc"]},
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False


def _report(app, exception):
    """One line at the end of a build: its time, pages and figures (the closing notes quote it)."""
    if exception is None and app.builder.name == "html":
        out = Path(app.outdir)
        pages = [p for p in out.rglob("*.html") if not p.relative_to(out).parts[0].startswith("_")]
        text = "".join(p.read_text(errors="replace") for p in pages)
        figures = [f for f in (out / "_images").glob("*") if f.name in text] \
            if (out / "_images").exists() else []   # (an earlier build's stay in _images)
        print(f"book: {len(pages)} pages, {len(figures)} figures, "
              f"{time.perf_counter() - _STARTED:.0f} s")


def setup(app):
    app.connect("build-finished", _report)

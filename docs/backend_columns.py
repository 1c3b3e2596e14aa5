"""Write the backend column of every catalogue page from the backend table.

Each page of ``formulations/`` has a "Problem class and backends" table: its third column,
the backends that take the row's problem class, is derived from the backends' declarations
(:func:`svm_models.solvers.table.catalogue_backends`), never written by hand: adding a
backend changes it on every page by running this script (``make docs`` runs it first).
``--check``: change nothing, exit 1 naming the pages that are not as derived
(``tests/test_catalogue.py`` checks the same).

    python docs/backend_columns.py [--check]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from svm_models.solvers.table import catalogue_backends  # noqa: E402

SECTION = "## Problem class and backends"
ROW = re.compile(r"^\|(?P<variant>[^|]*)\|(?P<cls>[^|]*)\|(?P<backends>[^|]*)\|\s*$")


def derived(text: str) -> str:
    """The page ``text`` with the third cell of each row of its problem-class table derived
    (the header, the separator and everything else as they are)."""
    lines = text.splitlines(keepends=True)
    inside = False
    for i, line in enumerate(lines):
        if line.startswith("## "):
            inside = line.strip() == SECTION
            continue
        m = ROW.match(line.rstrip("\n"))
        if not inside or m is None:
            continue
        cls = m["cls"].strip().strip("* ")
        if cls in ("problem class", "") or set(cls) <= set("-: "):
            continue   # the header, the separator
        lines[i] = f"|{m['variant']}|{m['cls']}| {catalogue_backends(cls)} |\n"
    return "".join(lines)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for page in sorted((ROOT / "formulations").glob("*.md")):
        text = page.read_text()
        new = derived(text)
        if new != text:
            stale.append(page.name)
            if not check:
                page.write_text(new)
    if check and stale:
        print(f"backend columns not as derived from the backend table: {', '.join(stale)}; "
              "run python docs/backend_columns.py", file=sys.stderr)
        return 1
    if stale:
        print(f"rewrote the backend column of {', '.join(stale)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

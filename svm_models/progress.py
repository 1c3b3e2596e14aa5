"""A small progress bar on stderr, with no dependencies, for anything that runs many solves.

On a terminal the bar is redrawn in place; written to a file or a pipe (a log, a test) each
step is one line, so nothing is garbled by carriage returns::

    with Progress(len(Cs), label="path") as bar:
        for C in Cs:
            ...
            bar.step(f"C={C:g}")
"""

from __future__ import annotations

import sys
import time


def _clock(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}:{s:02d}" if m < 60 else f"{m // 60}:{m % 60:02d}:{s:02d}"


class Progress:
    """A progress bar of ``total`` steps.

    Parameters
    ----------
    total : int
        Number of steps (at least 1).
    label : str
        Shown before the bar.
    stream : file-like, optional
        Where the bar is written (default: ``sys.stderr`` at the time of the call).
    enabled : bool, optional
        Draw the bar at all (default: when ``stream`` is a terminal). A disabled bar counts
        steps and writes nothing.
    width : int
        Characters of the bar itself.

    Notes
    -----
    Each line reads ``label [#####.....] k/total note elapsed eta``; the remaining time is the
    mean time a step has taken so far times the steps left.
    """

    def __init__(self, total: int, label: str = "", *, stream=None, enabled: bool | None = None,
                 width: int = 30):
        self.total = max(int(total), 1)
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = self.tty if enabled is None else bool(enabled)
        self.width = width
        self.done = 0
        self.t0 = time.perf_counter()
        self._shown = 0   # length of the line last drawn in place

    def render(self, note: str = "") -> str:
        """The bar's current line (without a line end)."""
        filled = self.width * self.done // self.total
        elapsed = time.perf_counter() - self.t0
        eta = (f" eta {_clock(elapsed / self.done * (self.total - self.done))}"
               if 0 < self.done < self.total else "")
        head = f"{self.label} " if self.label else ""
        tail = f" {note}" if note else ""
        return (f"{head}[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total}"
                f"{tail} {_clock(elapsed)}{eta}")

    def step(self, note: str = "", n: int = 1) -> None:
        """Advance by ``n`` steps (never past ``total``) and draw, with ``note`` after the count."""
        self.done = min(self.done + n, self.total)
        if not self.enabled:
            return
        line = self.render(note)
        if self.tty:
            self.stream.write("\r" + line.ljust(self._shown))
            self._shown = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the line drawn in place (a terminal)."""
        if self.enabled and self.tty and self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = 0

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


"""A small progress bar on stderr, with no dependencies, for anything that runs many solves.

On a terminal the bar is redrawn in place; written to a file or a pipe (a log, a test) each
step is one line, so nothing is garbled by carriage returns::

    with Progress(len(Cs), label="path") as bar:
        for C in Cs:
            ...
            bar.step(f"C={C:g}")
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
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

    #: bars drawn now, in any thread (a :class:`Countdown` stays quiet while one is)
    active = 0

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
        self._counted = self.enabled
        if self._counted:
            Progress.active += 1

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
        if self._counted:
            self._counted = False
            Progress.active -= 1
        if self.enabled and self.tty and self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = 0

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Countdown:
    """A bar of the time a call has spent of its limit, drawn on a terminal once the call has
    run ``after`` seconds (a call expected to be quick draws nothing), redrawn every
    ``every`` seconds until it ends, then erased::

        fit [#########.....................] 2.3 s of 7.5 s, 5.2 s left

    The time left is shown while some remains (past the limit: the time spent only). The bar
    is written to a duplicate of the standard error taken when it starts, so that a backend
    whose output is drained to a file meanwhile does not swallow it; only on a terminal,
    never nested in another bar (:class:`Progress`, a path's or a cross-validation's), and
    never twice at once. ``deadline`` is a :class:`~svm_models.solvers.base.Deadline` (its
    ``limit``, ``spent()`` and ``left()``).
    """

    _lock = threading.Lock()
    _running = False

    def __init__(self, deadline, label: str = "", *, after: float = 2.0, every: float = 0.5,
                 stream=None, enabled: bool | None = None, width: int = 30):
        self.deadline, self.label, self.after, self.every, self.width = (deadline, label, after,
                                                                         every, width)
        self._given = stream
        self._enabled = enabled
        self._stop = threading.Event()
        self._thread = None
        self._stream = None
        self._shown = 0
        self.drawn = 0   # lines drawn (a test reads it)

    def render(self) -> str:
        spent, limit, left = self.deadline.spent(), self.deadline.limit, self.deadline.left()
        head = f"{self.label} " if self.label else ""
        if limit is None:
            return f"{head}{spent:.1f} s"
        filled = min(self.width, int(self.width * spent / limit)) if limit > 0 else self.width
        bar = f"[{'#' * filled}{'.' * (self.width - filled)}]"
        tail = f", {left:.1f} s left" if left is not None and left > 0 else ""
        return f"{head}{bar} {spent:.1f} s of {limit:g} s{tail}"

    def _open(self):
        if self._given is not None:
            tty = bool(getattr(self._given, "isatty", lambda: False)())
            return self._given if (self._enabled if self._enabled is not None else tty) else None
        if self._enabled is False:
            return None
        try:
            if not (self._enabled or os.isatty(2)):
                return None
            return os.fdopen(os.dup(2), "w", closefd=True)
        except OSError:
            return None

    def _run(self) -> None:
        if self._stop.wait(self.after):
            return
        while True:
            line = self.render()
            with contextlib.suppress(Exception):
                self._stream.write("\r" + line.ljust(self._shown))
                self._stream.flush()
            self._shown = len(line)
            self.drawn += 1
            if self._stop.wait(self.every):
                return

    def __enter__(self) -> "Countdown":
        with Countdown._lock:
            if Countdown._running or Progress.active:
                return self
            self._stream = self._open()
            if self._stream is None:
                return self
            Countdown._running = True
        self._thread = threading.Thread(target=self._run, name="svm-models-countdown",
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        with contextlib.suppress(Exception):
            if self._shown:
                self._stream.write("\r" + " " * self._shown + "\r")
                self._stream.flush()
            if self._stream is not self._given:
                self._stream.close()
        with Countdown._lock:
            Countdown._running = False


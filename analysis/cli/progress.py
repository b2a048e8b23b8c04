"""The one progress bar of the command line: on stderr, on a terminal or when asked for.

Every command that runs long (audit, import, analyze, simulate, stats
--counterfactual, tournament) shows the same line: its label, the bar, done
of total, the rate and the time left. It is drawn when stderr is a terminal,
or always with `--progress` (for a log file or a CI run); the output on
stdout never holds any of it.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

REDRAW_S = 0.2
"""At most five redraws a second: a fast loop's updates cost no terminal output."""


class Progress:
    """`start(total)`, `update(amount)` as work is done, `finish()` at the end (idempotent).

    `forced` shows it even when stderr is not a terminal (`--progress`);
    `unit` names what is counted in the rate ("matches" gives "120 matches/s").
    """

    def __init__(self, forced: bool, label: str, *, unit: str = "", out: TextIO | None = None):
        self.out = out if out is not None else sys.stderr
        self.shown = forced or self.out.isatty()
        self.label = label
        self.unit = unit
        self.total = 0
        self.done = self.start_done = 0
        self._started = self._last = 0.0
        self._active = False

    def start(self, total: int, done: int = 0) -> None:
        """Begin a bar of `total`, `done` of them already (a resumed run)."""
        if not self.shown or total <= 0:
            return
        self.total, self.done, self.start_done = total, done, done
        self._started = time.monotonic()
        self._last = 0.0
        self._active = True
        self._draw(force=True)

    def update(self, amount: int) -> None:
        if not self._active:
            return
        self.done += amount
        self._draw(force=False)

    def finish(self) -> None:
        if not self._active:
            return
        self._draw(force=True)
        self.out.write("\n")
        self.out.flush()
        self._active = False

    def _draw(self, *, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self._last < REDRAW_S:
            return
        self._last = now
        elapsed = max(now - self._started, 1e-9)
        rate = (self.done - self.start_done) / elapsed
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        width = 30
        filled = width * min(self.done, self.total) // self.total
        unit = f" {self.unit}" if self.unit else ""
        self.out.write(
            f"\r{self.label} [{'#' * filled}{'-' * (width - filled)}] "
            f"{self.done:,}/{self.total:,}  {rate:,.0f}{unit}/s  "
            f"ETA {int(left) // 60:d}:{int(left) % 60:02d} "
        )
        self.out.flush()

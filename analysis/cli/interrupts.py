"""Ctrl-C (and SIGTERM) as KeyboardInterrupt, held back while the log is written.

DuckDB checks for signals while it works on the main thread, and a
KeyboardInterrupt raised by the handler there comes back out of DuckDB as a
RuntimeError ("Query interrupted"): the command would then end in an internal
error instead of its own "interrupted" message. Held back, the write finishes
(or commits) first and the interruption follows it, so a command's account of
what reached the log stays true.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any


class Interrupts:
    """Turns the given signals into KeyboardInterrupt, except inside `held()`."""

    def __init__(self, *signals: signal.Signals) -> None:
        self.signals = signals or (signal.SIGINT,)
        self._holding = 0
        self._pending = False
        self._previous: dict[signal.Signals, Any] = {}

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():  # signals reach it alone
            for s in self.signals:
                self._previous[s] = signal.signal(s, self._handler)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        self._previous.clear()

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self._holding:
            self._pending = True
            return
        raise KeyboardInterrupt

    @contextmanager
    def held(self) -> Iterator[None]:
        """An interruption that arrives in here is raised when the block has ended."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
        if not self._holding and self._pending:
            self._pending = False
            raise KeyboardInterrupt

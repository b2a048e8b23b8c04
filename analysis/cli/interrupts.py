"""How the command line handles Ctrl-C and SIGTERM: the one place that sets signal handlers.

`Interrupts` turns them into KeyboardInterrupt, held back while the log is
written; `ignored()` shuts them out for a block that must finish (loading
what a stopped run finished); `ignore_ctrl_c` starts a worker process that
its parent stops, not Ctrl-C. (The service's own SIGTERM, which drains it,
is `service.rpc.server.serve`'s.)

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


@contextmanager
def ignored(*signals: signal.Signals) -> Iterator[None]:
    """Neither of `signals` (Ctrl-C and SIGTERM when none is named) while the block runs."""
    with _handled(signal.SIG_IGN, signals):
        yield


@contextmanager
def stopping(stop: threading.Event, *signals: signal.Signals) -> Iterator[None]:
    """Ctrl-C and SIGTERM (or `signals`) set `stop` while the block runs, raising nothing:
    for a command whose work watches an event and ends itself cleanly (`sniff arena-bot`
    closes its channel), where an exception raised inside grpc's wait could leave its threads
    behind. Installed whatever the inherited disposition: a command a shell starts in the
    background inherits Ctrl-C ignored, and would then never stop on it."""
    with _handled(lambda *_: stop.set(), signals):
        yield


@contextmanager
def _handled(handler: Any, signals: tuple[signal.Signals, ...]) -> Iterator[None]:
    """`handler` for `signals` (Ctrl-C and SIGTERM when none is named) while the block runs,
    the previous handlers back after it."""
    chosen = signals or (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, handler) for s in chosen}
    try:
        yield
    finally:
        for s, before in previous.items():
            signal.signal(s, before)


def ignore_ctrl_c() -> None:
    """A worker process's start: Ctrl-C reaches the whole process group, but the command's
    own process decides what an interruption stops, and lets the chunks being played finish."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

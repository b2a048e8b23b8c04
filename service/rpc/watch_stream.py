"""WatchMatch's streams: a match's durable events as they come, held open at no thread's cost.

A waiting stream is a suspended coroutine on the event loop: the hub wakes it
(without blocking, from the thread that made the events durable) and it reads
the new events without a lock. The open streams are counted per token, per
match and in all, and bounded (`LimitReached` beyond), so no client can hold
the service's memory with idle streams. Nothing here knows gRPC's messages.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Final

from service.errors import LimitReached, ServiceStopping
from service.hub import Hub, LiveMatch, Logged

MAX_WATCH_STREAMS_PER_TOKEN: Final = 16
"""Open WatchMatch streams one token (one seat, or the observer, of one match) may hold."""
MAX_WATCH_STREAMS_PER_MATCH: Final = 64
"""Open WatchMatch streams on one match, all its tokens together."""
MAX_WATCH_STREAMS: Final = 10_000
"""Open WatchMatch streams on the whole service."""


class WatchStreams:
    """The open streams of one service, counted on the event loop (so without a lock)."""

    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        self.total = 0
        self.per_match: Counter[str] = Counter()
        self.per_token: Counter[tuple[str, int]] = Counter()
        self._wakes: set[asyncio.Event] = set()
        self._closing = False

    def close(self) -> None:
        """End every stream that waits for events (ServiceStopping, so UNAVAILABLE).

        Call on the event loop when the server starts shutting down, so idle
        streams do not hold the shutdown for its whole grace period; a stream
        still sending recorded events ends when it would next wait.
        """
        self._closing = True
        for wake in self._wakes:
            wake.set()

    async def events(
        self, live: LiveMatch, role: int, from_sequence: int
    ) -> AsyncIterator[tuple[Logged, int]]:
        """The match's durable events from `from_sequence` on, each with the layout's sum
        after it (`Hub.layout_sum`), waiting for more until the match ends."""
        with self._hold(live.match_id, role):
            async for logged in self._follow(live, from_sequence):
                yield logged, self._hub.layout_sum(live, logged.event.seq)

    @contextlib.contextmanager
    def _hold(self, match_id: str, role: int) -> Iterator[None]:
        token = (match_id, role)
        if self.per_token[token] >= MAX_WATCH_STREAMS_PER_TOKEN:
            raise LimitReached(
                "watch_streams_per_token",
                f"this token already holds {MAX_WATCH_STREAMS_PER_TOKEN} open WatchMatch "
                "streams: close one first",
            )
        if self.per_match[match_id] >= MAX_WATCH_STREAMS_PER_MATCH:
            raise LimitReached(
                "watch_streams_per_match",
                f"this match already has {MAX_WATCH_STREAMS_PER_MATCH} open WatchMatch streams",
            )
        if self.total >= MAX_WATCH_STREAMS:
            raise LimitReached(
                "watch_streams",
                f"the service already has {MAX_WATCH_STREAMS:,} open WatchMatch streams",
            )
        self.total += 1
        self.per_match[match_id] += 1
        self.per_token[token] += 1
        try:
            yield
        finally:
            self.total -= 1
            self.per_match[match_id] -= 1
            if self.per_match[match_id] <= 0:
                del self.per_match[match_id]
            self.per_token[token] -= 1
            if self.per_token[token] <= 0:
                del self.per_token[token]

    async def _follow(self, live: LiveMatch, from_sequence: int) -> AsyncIterator[Logged]:
        """The durable events from `from_sequence` on, waiting (no thread) for more."""
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()

        def notify() -> None:  # called by the thread that appended the events
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                loop.call_soon_threadsafe(wake.set)

        self._hub.listen(live, notify)
        self._wakes.add(wake)
        try:
            next_seq = from_sequence
            while True:
                wake.clear()
                batch, over = self._hub.events_from(live, next_seq)
                for logged in batch:
                    yield logged
                next_seq += len(batch)
                if over:
                    return
                if self._closing:
                    raise _stopping()
                await wake.wait()
                if self._closing:
                    raise _stopping()
        finally:
            self._wakes.discard(wake)
            self._hub.unlisten(live, notify)


def _stopping() -> ServiceStopping:
    return ServiceStopping("the service is stopping: try again once it is back")

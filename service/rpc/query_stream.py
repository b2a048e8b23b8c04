"""Stream a Query's result from a DuckDB thread to the event loop, in bounded memory.

A query's DuckDB work blocks and its cursor belongs to one thread, so it runs
from start to end on a thread of a pool of its own (`MAX_RUNNING_QUERIES`
threads, at the lowest scheduling priority), while the gRPC call that sends
its result lives on the event loop. The thread encodes the result as Arrow
IPC stream bytes in chunks of whole messages (`MAX_QUERY_CHUNK` bytes) and
may run at most `QUERY_CHUNKS_AHEAD` chunks ahead of the call that sends
them: a caller that reads slowly holds the query back, and the server never
holds more than a few chunks of a result, whatever its size
(`scripts/bench_query_memory.py` measures it). The query is interrupted when
its deadline passes or its caller goes away, and its thread returns to the pool.

Nothing here knows gRPC's messages: `stream` yields bytes and raises the
service's own errors (`LimitReached`, `QueryTimedOut`, `ServiceStopping`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Final

import pyarrow as pa

from service.errors import LimitReached, QueryTimedOut, ServiceStopping
from service.storage import QueryInterrupt

if TYPE_CHECKING:
    from service.storage.log import EventLog

MAX_QUERY_SECONDS: Final = 60.0
"""The longest a Query runs, whatever the caller's deadline (or without one)."""
MAX_RUNNING_QUERIES: Final = 2
"""Queries running at once; more are refused (RESOURCE_EXHAUSTED), not queued."""
MAX_QUERY_CHUNK: Final = 1 << 20
"""Bytes of Arrow IPC gathered before a chunk is handed to the call."""
QUERY_CHUNKS_AHEAD: Final = 2
"""Chunks a query may prepare before the caller has taken them (bounds its memory)."""
QUERY_NICE: Final = 19
"""The scheduling niceness of query threads: on a busy machine, play runs first.

The log's DuckDB runs each query on one thread, the calling one (see the
storage package's service settings), so this covers all of a query's work.
"""

QueryValue = str | int | float | bool | None
"""A bound parameter's value."""


class _Last(bytes):
    """The producer's last chunk, handed over once its DuckDB work is over: the query's
    place is given back before the caller has the end of the result, so a caller that
    queries again at once never finds its own finished query still counted as running."""


class QueryStreams:
    """The queries of one service: at most `MAX_RUNNING_QUERIES` at once, on their own threads.

    Call `stream` and `close` on the event loop only: the count of running
    queries is kept there, without a lock.
    """

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._pool = ThreadPoolExecutor(
            max_workers=MAX_RUNNING_QUERIES,
            thread_name_prefix="sniff-query",
            initializer=_yield_cpu,
        )
        self.running = 0
        """Queries whose DuckDB work is under way (or about to start)."""
        self._closing = False

    def close(self) -> None:
        """Refuse new queries and cancel those not started (a stopping service)."""
        self._closing = True
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def stream(
        self, sql: str, params: Sequence[QueryValue], caller_seconds: float | None
    ) -> AsyncIterator[bytes]:
        """The result of `sql` as Arrow IPC stream bytes, chunk by chunk.

        It runs until `caller_seconds` (the caller's deadline; None: none) or
        `MAX_QUERY_SECONDS`, whichever is first. Refused (LimitReached) when
        `MAX_RUNNING_QUERIES` already run; ServiceStopping once closed.
        """
        if self._closing:
            raise _stopping()
        if self.running >= MAX_RUNNING_QUERIES:
            raise LimitReached(
                "running_queries",
                f"{MAX_RUNNING_QUERIES} queries are already running: try again when they end",
            )
        seconds = MAX_QUERY_SECONDS
        if caller_seconds is not None:
            seconds = min(caller_seconds, MAX_QUERY_SECONDS)
        async for chunk in self._relay(sql, list(params), seconds):
            yield chunk

    async def _relay(
        self, sql: str, params: list[QueryValue], seconds: float
    ) -> AsyncIterator[bytes]:
        """Run the query on a pool thread and relay its chunks; stop it if we stop reading.

        The thread takes a credit before it hands over each chunk and the
        relay gives one back for each chunk it takes, so the thread is at
        most `QUERY_CHUNKS_AHEAD` chunks ahead.
        """
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[bytes | BaseException] = asyncio.Queue()
        credits = threading.Semaphore(QUERY_CHUNKS_AHEAD)
        stop = threading.Event()
        interrupt = QueryInterrupt()
        timed_out = False

        def put(item: bytes | BaseException) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                loop.call_soon_threadsafe(chunks.put_nowait, item)

        def produce() -> None:
            try:
                held_back: bytes | None = None  # each chunk waits for the next, or the end
                for chunk in self._ipc_chunks(sql, params, interrupt):
                    if held_back is not None:
                        credits.acquire()
                        if stop.is_set():
                            return
                        put(held_back)
                    held_back = chunk
                put(_Last(held_back or b""))  # the chunks' generator has closed its cursor
            except BaseException as exc:
                put(exc)

        def on_deadline() -> None:
            nonlocal timed_out
            timed_out = True
            interrupt.interrupt()

        held = True

        def release(_: object = None) -> None:
            """Give the query's place back once its DuckDB work is over (on the loop)."""
            nonlocal held
            if held:
                held = False
                self.running -= 1

        self.running += 1
        try:
            work = loop.run_in_executor(self._pool, produce)
        except RuntimeError:  # the pool is shut down: the service is stopping
            release()
            raise _stopping() from None
        work.add_done_callback(release)
        timer = loop.call_later(seconds, on_deadline)
        try:
            while True:
                item = await chunks.get()
                credits.release()
                if isinstance(item, _Last):
                    release()  # the producer has ended its DuckDB work; its thread returns
                    yield bytes(item)
                    return
                if isinstance(item, bytes):
                    yield item
                    continue
                release()
                if timed_out:
                    raise QueryTimedOut(
                        f"the query ran past its time limit ({seconds:.3g} s; the service "
                        f"allows at most {MAX_QUERY_SECONDS:.0f} s) and was stopped"
                    )
                raise item
        finally:
            timer.cancel()
            if not work.done():
                stop.set()
                interrupt.interrupt()
                credits.release()  # a producer waiting for room sees `stop`

    def _ipc_chunks(
        self, sql: str, params: list[QueryValue], interrupt: QueryInterrupt
    ) -> Iterator[bytes]:
        """The result as Arrow IPC stream bytes, in chunks of whole messages (pool thread)."""
        batches = self._log.query_batches(sql, params or None, interrupt=interrupt)
        with contextlib.closing(batches):  # type: ignore[type-var]
            first = next(batches)  # there is always one: an empty result's carries the schema
            sink = _IpcSink()
            writer = pa.ipc.new_stream(pa.PythonFile(sink, mode="w"), first.schema)
            writer.write_batch(first)
            for batch in batches:
                writer.write_batch(batch)
                if sink.size >= MAX_QUERY_CHUNK:
                    yield sink.take()
            writer.close()
            yield sink.take()


def _stopping() -> ServiceStopping:
    return ServiceStopping("the service is stopping: try again once it is back")


def _yield_cpu() -> None:
    """Lower this thread's scheduling priority (Linux: niceness is per thread)."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), QUERY_NICE)


class _IpcSink(io.RawIOBase):
    """A write-only sink that hands out what was written so far, in whole IPC messages."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[bytes] = []
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        chunk = bytes(data)
        self.parts.append(chunk)
        self.size += len(chunk)
        return len(chunk)

    def take(self) -> bytes:
        out = b"".join(self.parts)
        self.parts, self.size = [], 0
        return out

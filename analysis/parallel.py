"""Both cores for the audits: chunks of work in a process pool, results in input order.

An audit replays every match through the pure-Python engine, which holds
the GIL, so threads would not help; processes do. The work is cut into
chunks (a few hundred matches) to pay the pickling and the hand-over per
chunk rather than per match, and at most a few chunks per worker are in
flight, so memory stays bounded however long the input. Results come back
in the order the chunks went in.

Workers are started by a fork server (a clean process, not a fork of this
one): the CLI may hold gRPC channels and DuckDB connections, which must not
be copied into a child.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

IN_FLIGHT_PER_WORKER = 3
"""Chunks queued per worker: enough to keep it busy, few enough to bound memory."""


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def ordered_map(
    fn: Callable[[T], R],
    chunks: Iterable[T],
    workers: int,
    preload: tuple[str, ...] = (),
    initializer: Callable[[], object] | None = None,
    inline: bool = True,
    ray_address: str | None = None,
) -> Generator[R, None, None]:
    """`fn(chunk)` for every chunk, in order; in `workers` processes when more than one.

    `fn` must be a module-level function (it is pickled by name) and chunks
    and results picklable; `initializer` runs first in each worker. With one
    worker everything runs here, in order, without a pool, unless `inline` is false
    (a caller that works on each result while the next is made: `sniff simulate`'s
    writer). An exception in `fn` is raised here, at its chunk. With `ray_address`, the
    chunks are Ray tasks instead (`ray_ordered`): the same results, in the same order.
    """
    if ray_address is not None:
        yield from ray_ordered(fn, chunks, ray_address, workers, initializer)
        return
    if workers <= 1 and inline:
        yield from map(fn, chunks)
        return
    context = multiprocessing.get_context("forkserver")
    if preload:
        context.set_forkserver_preload(list(preload))
    pending: deque[Future[R]] = deque()
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=initializer
    ) as pool:
        try:
            for chunk in chunks:
                pending.append(pool.submit(fn, chunk))
                while len(pending) >= workers * IN_FLIGHT_PER_WORKER:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """The items in lists of `size` (the last may be shorter)."""
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


# -- Ray ---------------------------------------------------------------------------------


def ray_session(address: str, workers: int) -> Any:
    """The `ray` module, connected: `local` starts a Ray instance here with `workers` CPUs,
    `auto` finds one (RAY_ADDRESS, or starts one), anything else is a cluster's address.
    Ray is the optional `cluster` extra: an ImportError says to install it."""
    import ray

    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        elif address == "auto":
            ray.init(include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
    return ray


def _with_initializer(fn: Callable[[T], R], initializer: Callable[[], object] | None) -> Any:
    if initializer is None:
        return fn

    def run(chunk: T) -> R:
        initializer()
        return fn(chunk)

    return run


def ray_ordered(
    fn: Callable[[T], R],
    chunks: Iterable[T],
    address: str,
    workers: int,
    initializer: Callable[[], object] | None = None,
) -> Generator[R, None, None]:
    """`fn(chunk)` for every chunk as Ray tasks, in the chunks' order (at most a few tasks
    per worker ahead of the one awaited, as `ordered_map` bounds its queue); the tasks not
    yet awaited are cancelled if the caller stops."""
    ray = ray_session(address, workers)
    task = ray.remote(_with_initializer(fn, initializer))
    pending: deque[Any] = deque()
    try:
        for chunk in chunks:
            pending.append(task.remote(chunk))
            while len(pending) >= max(1, workers) * IN_FLIGHT_PER_WORKER:
                yield ray.get(pending.popleft())
        while pending:
            yield ray.get(pending.popleft())
    finally:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref)


def ray_unordered(
    fn: Callable[[T], R], chunks: Iterable[T], address: str, workers: int
) -> Generator[tuple[int, R], None, None]:
    """`fn(chunk)` for every chunk as Ray tasks, yielded with the chunk's index as they
    finish."""
    ray = ray_session(address, workers)
    task = ray.remote(fn)
    index = {}
    for i, chunk in enumerate(chunks):
        index[task.remote(chunk)] = i
    pending = list(index)
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield index[ref], ray.get(ref)
    finally:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref)

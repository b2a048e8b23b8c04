"""Shared parts of the storage tests: events to append, and a way to form one group commit.

Everything here goes through the event log's public API, except `group_commit`, which
holds the commit lock to line appends up.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path

from service.storage import EventLog, LogEvent

TIMEOUT = 10.0
REPO = Path(__file__).resolve().parents[1]


def created(match_id: str, seed: int = 7) -> LogEvent:
    return LogEvent.match_created(match_id, seats=2, target=250, seed=seed, rules_version="1")


def action(match_id: str, seq: int) -> LogEvent:
    return LogEvent.action(
        match_id,
        seq,
        round=0,
        action_index=seq - 1,
        seat=seq % 2,
        move="pass" if seq % 3 else "draw",
        drawn=None if seq % 3 else "2-5",
    )


def ended(match_id: str, seq: int) -> LogEvent:
    return LogEvent.match_ended(match_id, seq, winner=0, scores=[251, 188])


@contextmanager
def group_commit(log: EventLog) -> Iterator[Callable[[Sequence[LogEvent]], Future[None]]]:
    """The service's way to a group commit, made deterministic: appends from several
    threads while a commit holds the log's commit lock queue, in order, and the next
    commit takes them all as one group.

    The block holds the commit lock as a commit in progress would, and yields
    `append`: it starts `log.append(events)` in a thread of its own and returns
    once the batch is queued (or was refused before the queue), with a future of
    that append's outcome. When the block ends the lock is released as a commit
    releases it, which hands the queue to the writer thread: one group commit.
    """
    threads: list[threading.Thread] = []

    def queued() -> int:
        with log._cond:
            return len(log._queue)

    def append(events: Sequence[LogEvent]) -> Future[None]:
        outcome: Future[None] = Future()

        def run() -> None:
            try:
                log.append(events)
            except BaseException as exc:
                outcome.set_exception(exc)
            else:
                outcome.set_result(None)

        before = queued()
        thread = threading.Thread(target=run, daemon=True)
        threads.append(thread)
        thread.start()
        deadline = time.monotonic() + TIMEOUT
        while queued() == before and not outcome.done():
            assert time.monotonic() < deadline, "the append was never queued"
            time.sleep(0.001)
        return outcome

    log._commit_lock.acquire()
    try:
        yield append
    finally:
        log._release()
        for thread in threads:
            thread.join(TIMEOUT)


def digest(path: Path) -> str | None:
    """sha256 of a file's bytes; None if it does not exist."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


@contextmanager
def held_by_another_process(db: Path, advertise: str | None = None) -> Iterator[int]:
    """A child process holds the log open (advertising `advertise`, if given); its pid.

    The child closes the log cleanly when the block ends.
    """
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from service.storage import EventLog\n"
            "log = EventLog(sys.argv[1])\n"
            "if sys.argv[2]:\n"
            "    log.advertise(sys.argv[2])\n"
            "print('ready', flush=True)\n"
            "sys.stdin.readline()\n"
            "log.close()\n",
            str(db),
            advertise or "",
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdin is not None
        assert holder.stdout.readline().strip() == "ready"
        yield holder.pid
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.wait(timeout=30) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        for stream in (holder.stdin, holder.stdout):
            if stream is not None:
                stream.close()

"""Shared parts of the storage tests: events to append, and a way to form one group commit.

Everything here goes through the event log's public API.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from service.storage import EventLog, LogEvent, SequenceGap

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
def writer_parked(log: EventLog) -> Iterator[None]:
    """Hold the log's writer thread until the block ends: batches queued meanwhile
    form one group commit.

    A future's done-callbacks run on the writer thread, so a callback that
    waits parks it. The batch it hangs on is refused (a gap in a match no one
    uses), so the log is unchanged. Should the writer answer before the
    callback is attached, the callback runs at once in this thread, does not
    wait, and the next try parks it.
    """
    me = threading.get_ident()
    parked = threading.Event()
    release = threading.Event()
    here: list[bool] = []

    def park(_: object) -> None:
        if threading.get_ident() == me:
            here.append(True)  # the writer answered before the callback was attached
            return
        parked.set()
        release.wait(TIMEOUT)

    futures = []
    try:
        for _ in range(100):
            here.clear()
            future = log.append_async([LogEvent("parking", 1, "action")])
            futures.append(future)
            future.add_done_callback(park)
            if not here:
                assert parked.wait(TIMEOUT), "the writer never answered"
                break
        else:
            raise AssertionError("could not park the writer thread")
        yield
    finally:
        release.set()
    assert all(isinstance(f.exception(TIMEOUT), SequenceGap) for f in futures)


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

"""Review findings on the event log, each a regression test of its fix.

Every blocking call runs in a daemon thread joined with a timeout, so a
regression shows as a failure, never as a hung test run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from service.storage import EventLog, LogEvent, StorageError
from service.storage import log as log_module

TIMEOUT = 10.0


def created(match_id: str) -> LogEvent:
    return LogEvent.match_created(match_id, seats=2, target=250, seed=7, rules_version="1")


def run(call: Callable[[], Any], timeout: float = TIMEOUT) -> tuple[bool, Any]:
    """(finished, result or exception) of `call` run in a daemon thread."""
    out: list[Any] = []

    def target() -> None:
        try:
            out.append(call())
        except BaseException as exc:
            out.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    return not thread.is_alive(), (out[0] if out else None)


def wait_until(predicate: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting for the log's state"
        time.sleep(0.001)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "events.duckdb"


@pytest.fixture
def log(db: Path) -> Iterator[EventLog]:
    opened = EventLog(db)
    try:
        yield opened
    finally:
        # Unblock anything a failing test left waiting, so closing cannot hang.
        with opened._cond:
            for future in opened._flushes:
                if not future.done():
                    future.set_result(None)
            opened._flushes.clear()
        done, _ = run(opened.close)
        assert done


# -- 1. an OSError after the DuckDB insert kills the writer thread -----------------


def test_a_failed_directory_sync_during_a_load_does_not_kill_the_writer(
    log: EventLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = EventLog._sync_new_wal
    failures = [OSError(5, "Input/output error")]

    def sync_once_failing(self: EventLog) -> None:
        if failures:
            raise failures.pop()
        real(self)

    monkeypatch.setattr(EventLog, "_sync_new_wal", sync_once_failing)
    log.append([created("a")])
    done, _ = run(log.count)  # a read: flush, whose load hits the OSError
    assert done, "a read hangs: its flush was never answered"
    assert log._writer.is_alive()
    for name in ("b", "c", "d"):
        done, result = run(lambda name=name: log.append([created(name)]))
        assert done, "an append hangs: no writer is left to lead"
        assert result is None
    done, count = run(log.count)
    assert done
    assert count == 4  # each event once: the rows DuckDB took are not loaded again


# -- 2. a string DuckDB cannot store is acknowledged, then poisons the log ---------


@pytest.mark.parametrize(
    "bad",
    [
        LogEvent("bad", 0, "match_created", move="\ud800"),
        LogEvent("bad", 0, "match_created", detail={"note": "\udc00"}),
    ],
    ids=["column", "detail"],
)
def test_text_the_database_cannot_store_fails_its_caller_not_the_log(
    db: Path, bad: LogEvent
) -> None:
    log = EventLog(db)
    try:
        log.append([created("good")])
        done, result = run(lambda: log.append([bad]))
        assert done
        assert isinstance(result, (StorageError, ValueError)), "acknowledged unstorable text"
        done, ids = run(log.match_ids)
        assert done
        assert ids == ["good"]  # reads still work: the backlog loads
    finally:
        done, _ = run(log.close)
        assert done
    done, reopened = run(lambda: EventLog(db))
    assert done
    assert isinstance(reopened, EventLog), f"the log cannot be reopened: {reopened!r}"
    reopened.close()


# -- 3. an append_async callback run by a leading append caller --------------------


def test_a_future_callback_may_read_the_log_whoever_commits_it(
    log: EventLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_module, "LOAD_SECONDS", 60.0)  # no load falls due meanwhile
    journal = log._journal
    real_write = journal.write
    release = threading.Event()
    first = [True]

    def held_write(rows: list[Any]) -> None:
        if first:
            first.clear()
            release.wait(TIMEOUT)  # the first leader stays in its commit for a while
        real_write(rows)

    monkeypatch.setattr(journal, "write", held_write)
    leader = threading.Thread(target=lambda: log.append([created("a")]), daemon=True)
    leader.start()
    wait_until(lambda: log._leading and not log._queue)  # the leader is inside its write

    seen: list[Any] = []
    future: Future[None] = log.append_async([created("b")])
    future.add_done_callback(lambda _: seen.append(log.count()))
    second = threading.Thread(target=lambda: log.append([created("c")]), daemon=True)
    second.start()
    wait_until(lambda: len(log._queue) == 2)  # both queued: the leader will promote `second`
    release.set()
    leader.join(TIMEOUT)
    second.join(TIMEOUT)
    assert not second.is_alive(), "the append whose group ran the callback deadlocked"
    assert seen == [3]

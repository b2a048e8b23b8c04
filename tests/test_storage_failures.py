"""Review findings on the event log, each a regression test of its fix.

Every blocking call runs in a daemon thread joined with a timeout, so a
regression shows as a failure, never as a hung test run.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from service.storage import EventLog, LogEvent, StorageError
from tests.storage_helpers import TIMEOUT, created


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


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "events.duckdb"


@pytest.fixture
def log(db: Path) -> Iterator[EventLog]:
    opened = EventLog(db)
    try:
        yield opened
    finally:
        done, _ = run(opened.close)
        assert done


# -- 1. an OSError after the DuckDB insert kills the writer thread -----------------


def test_a_failed_directory_sync_during_a_load_does_not_kill_the_writer(
    log: EventLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.fsync
    failures = [OSError(5, "Input/output error")]

    def fsync_once_failing(fd: int) -> None:
        if failures and stat.S_ISDIR(os.fstat(fd).st_mode):  # the new WAL's directory
            raise failures.pop()
        real(fd)

    log.append([created("a")])
    monkeypatch.setattr(os, "fsync", fsync_once_failing)
    done, _ = run(log.count)  # a read: flush, whose load hits the OSError
    assert done, "a read hangs: its flush was never answered"
    assert not failures, "the load did not sync the new WAL's directory"
    for name in ("b", "c", "d"):
        done, result = run(partial(log.append, [created(name)]))
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

"""The log's files are readable by their owner only, whatever the umask, at every step.

`<db>`, its `.wal` and `.journal` hold every live hand, boneyard and seed.
DuckDB deletes the WAL at each checkpoint and makes a new one at the next
commit, so modes are listed after writes, after a checkpoint inside a
running log, and after restarts. Real DuckDB files.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.storage import EventLog, LogEvent, open_readonly
from service.storage.events import to_rows
from service.storage.journal import Journal, journal_path
from tests.storage_helpers import action, created


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    """The common default (022) would make new files 0644: the log must not rely on it."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def modes(db: Path) -> dict[str, int]:
    """Mode bits of every file beside the log that belongs to it."""
    return {
        p.name.removeprefix(db.name) or "<db>": stat.S_IMODE(p.stat().st_mode)
        for p in db.parent.iterdir()
        if p.name.startswith(db.name)
    }


def assert_private(db: Path) -> dict[str, int]:
    found = modes(db)
    loose = {name: oct(mode) for name, mode in found.items() if mode & 0o077}
    assert loose == {}, f"readable by others: {loose}"
    return found


def big_events(match_id: str, start: int, count: int) -> list[LogEvent]:
    """Events with 16 KiB of detail each: a few MiB of WAL quickly."""
    return [
        LogEvent(
            match_id,
            seq,
            "action",
            round=0,
            action_index=seq,
            seat=0,
            move="pass",
            detail={"pad": "x" * 16_384},
        )
        for seq in range(start, start + count)
    ]


@pytest.mark.slow
def test_every_file_of_the_log_is_private_after_writes_checkpoints_and_restarts(
    tmp_path: Path,
) -> None:
    db = tmp_path / "events.duckdb"
    with EventLog(db) as log:
        log.append([created("m")])
        found = assert_private(db)
        assert {"<db>", ".journal"} <= set(found)
        assert found.get(".tmp") == 0o700  # DuckDB's spill directory
        log.count()  # loads the journal into DuckDB: a WAL appears
        found = assert_private(db)
        assert ".wal" in found
        wal = db.parent / f"{db.name}.wal"
        # More than 16 MiB of WAL: DuckDB checkpoints on its own, deletes the
        # WAL and makes a new one at the next commit.
        checkpointed = False
        seq = 1
        for _ in range(14):
            log.append(big_events("m", seq, 200))
            seq += 200
            log.count()
            assert_private(db)
            if not wal.exists():
                checkpointed = True
            elif checkpointed:
                break  # a WAL made after the checkpoint, and it is private
        assert checkpointed, "DuckDB never checkpointed"
        assert wal.exists()
    assert_private(db)  # closed: checkpointed, WAL removed
    with EventLog(db) as log:  # a restart makes a new WAL and journal
        log.append([action("m", seq)])
        log.count()
        assert {".wal", ".journal"} <= set(assert_private(db))
    with open_readonly(db) as reader:
        assert reader.count() == seq + 1
    assert_private(db)


@pytest.mark.slow
def test_files_an_older_release_left_readable_are_narrowed_at_open(tmp_path: Path) -> None:
    db = tmp_path / "events.duckdb"
    with EventLog(db) as log:
        log.append([created("m")])
    journal = Journal(journal_path(db))
    journal.write(to_rows([action("m", 1)]))
    journal.close(remove=False)
    for path in (db, journal_path(db)):
        path.chmod(0o644)
    with EventLog(db) as log:
        assert_private(db)
        assert log.count() == 2

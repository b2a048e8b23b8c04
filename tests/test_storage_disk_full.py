"""A full disk: the append fails with LogFull, nothing is acknowledged or half-written,
and the log works again once space is freed.

Tested for real on a small tmpfs (mounting needs root: skipped with the
reason otherwise), and always with the journal's lowest write calls
failing as a full disk makes them fail.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from service.storage import EventLog, LogFull, open_readonly
from service.storage.journal import journal_path, read_journal
from tests.storage_helpers import action, created

ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def fill(directory: Path) -> Path:
    """Write a file until the file system is full; return it (delete it to free the space)."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        chunk = b"\0" * 65536
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, chunk)
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"\0")
    finally:
        os.close(fd)
    return filler


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8M", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {result.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_fails_the_append_and_the_log_recovers_once_space_is_freed(
    small_disk: Path,
) -> None:
    db = small_disk / "events.duckdb"
    log = EventLog(db)
    try:
        log.append([created("m")])
        assert log.count() == 1  # loaded: nothing waits in the journal
        filler = fill(small_disk)
        before = journal_path(db).read_bytes()
        with pytest.raises(LogFull, match="disk is full"):
            log.append([action("m", seq) for seq in range(1, 200)])
        assert journal_path(db).read_bytes() == before  # nothing half-written
        filler.unlink()
        log.append([action("m", 1)])  # the same seq: the failed batch took nothing
        assert log.count() == 2
    finally:
        log.close()
    with open_readonly(db) as reader:
        assert [e.seq for e in reader.events_for("m")] == [0, 1]


def test_a_full_disk_while_loading_fails_reads_with_log_full_until_space_is_freed(
    small_disk: Path,
) -> None:
    db = small_disk / "events.duckdb"
    log = EventLog(db)
    try:
        log.append([created("m")])
        log.count()
        log.append([action("m", seq) for seq in range(1, 500)])  # acknowledged: in the journal
        filler = fill(small_disk)  # no room for DuckDB's WAL now
        with pytest.raises(LogFull):
            log.count()
        filler.unlink()
        assert log.count() == 500
    finally:
        log.close()


# -- the same, with the journal's write calls failing as a full disk makes them fail ----


@pytest.fixture
def log(tmp_path: Path) -> Iterator[EventLog]:
    with EventLog(tmp_path / "events.duckdb") as opened:
        yield opened


def failing_on_journal(
    monkeypatch: pytest.MonkeyPatch, name: str, journal: Path, fail: Callable[..., Any]
) -> list[int]:
    """Make os.`name` call `fail` for the journal's descriptor only; return the calls made."""
    real = getattr(os, name)
    calls: list[int] = []

    def patched(fd: int, *args: Any) -> Any:
        if os.readlink(f"/proc/self/fd/{fd}") == str(journal):
            calls.append(fd)
            return fail(real, fd, *args)
        return real(fd, *args)

    monkeypatch.setattr(os, name, patched)
    return calls


def half_then_full(real: Callable[..., int], fd: int, data: Any) -> int:
    """A write that gets part of the data out, then meets a full disk."""
    view = memoryview(data)
    if len(view) > 1:
        return int(real(fd, view[: len(view) // 2]))
    raise ENOSPC


def test_a_write_cut_short_by_a_full_disk_leaves_no_partial_line(
    log: EventLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    log.append([created("m")])
    journal = journal_path(log.path)
    before = journal.read_bytes()
    calls = failing_on_journal(monkeypatch, "write", journal, half_then_full)
    with pytest.raises(LogFull):
        log.append([action("m", 1), action("m", 2)])
    assert len(calls) >= 2  # part written, then ENOSPC
    assert journal.read_bytes() == before
    monkeypatch.undo()  # space freed
    log.append([action("m", 1)])
    assert [e.seq for e in log.events_for("m")] == [0, 1]


def test_a_failed_fdatasync_is_a_full_disk_too_and_nothing_is_kept(
    log: EventLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    log.append([created("m")])
    journal = journal_path(log.path)
    before = journal.read_bytes()

    def full(real: Callable[..., Any], fd: int) -> None:
        raise ENOSPC

    failing_on_journal(monkeypatch, "fdatasync", journal, full)
    with pytest.raises(LogFull):
        log.append([action("m", 1)])
    assert journal.read_bytes() == before
    monkeypatch.undo()
    log.append([action("m", 1)])
    assert log.count() == 2


def test_a_partial_line_that_could_not_be_cut_is_cut_before_the_next_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "events.duckdb"
    log = EventLog(db)
    log.append([created("m")])
    journal = journal_path(db)
    failing_on_journal(monkeypatch, "write", journal, half_then_full)

    def cannot_cut(real: Callable[..., Any], fd: int, size: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    cuts = failing_on_journal(monkeypatch, "ftruncate", journal, cannot_cut)
    with pytest.raises(LogFull):
        log.append([action("m", 1)])
    assert cuts, "the partial write was not cut off"
    assert not journal.read_bytes().endswith(b"\n")  # the partial line is still there
    monkeypatch.undo()
    log.append([action("m", 1), action("m", 2)])  # cuts the partial line first
    rows = read_journal(journal)
    assert [(r[0], r[1]) for r in rows][-2:] == [("m", 1), ("m", 2)]
    assert all(line.endswith(b"\n") for line in journal.read_bytes().splitlines(True))
    log.close()
    with open_readonly(db) as reader:
        assert [e.seq for e in reader.events_for("m")] == [0, 1, 2]

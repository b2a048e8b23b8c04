"""The journal: where an event becomes durable before DuckDB has it.

A DuckDB commit costs about a millisecond of CPU however few rows it holds,
which would make every acknowledged move wait a millisecond. Appending a
line to a plain file and fdatasync-ing it costs about a tenth of that. So the
log's writer makes each group of events durable here first, acknowledges
it, and loads the journal's backlog into DuckDB in large batches a few times
a second; the journal is then emptied. After a crash, the events in the
journal that DuckDB lacks are loaded when the log is next opened.

One line a row: a JSON array of the `events_all` columns, `hash` as hex
text and `logged_at` as epoch microseconds (a line of a release before
schema version 3 has no `hash`: it reads as None). A torn last line (a crash mid-write) was never
acknowledged and is ignored. A write that fails (a full disk) is cut off
again before the caller hears of it, so no partial line stays in the middle
of the file: the next write truncates first if that cut failed too.

The file is created mode 0600, like the database (see files.py).
"""

from __future__ import annotations

import contextlib
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from . import _sql
from .events import COLUMNS, HASH, EventRow
from .files import PRIVATE

if TYPE_CHECKING:
    import duckdb

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def journal_path(db_path: str | os.PathLike[str]) -> Path:
    """`<db path>.journal`, next to the database file."""
    return Path(f"{os.fspath(db_path)}.journal")


_ROW_SIZE = len(COLUMNS)


def _encode(row: EventRow) -> bytes:
    logged_at = row[-1]
    micros = None if logged_at is None else (logged_at - _EPOCH) // timedelta(microseconds=1)
    hash_ = row[HASH]
    values = [*row[:HASH], None if hash_ is None else hash_.hex(), micros]
    return (json.dumps(values, separators=(",", ":")) + "\n").encode()


def _decode(line: bytes) -> EventRow:
    values = json.loads(line)
    micros = values[-1]
    logged_at = None if micros is None else _EPOCH + timedelta(microseconds=micros)
    if len(values) == _ROW_SIZE - 1:  # written before schema version 3: no hash
        return (*values[:-1], None, logged_at)
    if len(values) != _ROW_SIZE:
        raise ValueError(f"a journal line holds {len(values)} values, not {_ROW_SIZE}")
    hash_ = values[HASH]
    return (*values[:HASH], None if hash_ is None else bytes.fromhex(hash_), logged_at)


def read_journal(path: Path) -> list[EventRow]:
    """Every complete row of a journal file (none if there is no file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    rows = []
    for line in data.split(b"\n"):
        if not line:
            continue
        try:
            rows.append(_decode(line))
        except (ValueError, TypeError, IndexError):
            break  # a torn last line: never acknowledged
    return rows


class Journal:
    """The open journal file of one event log; used by the log's writer thread only."""

    def __init__(self, path: Path, sync: bool = True) -> None:
        self.path = path
        self.sync = sync
        """fdatasync each write: survives power loss. Without: survives a crash of the process."""
        created = not path.exists()
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE)
        os.fchmod(self._fd, PRIVATE)  # the umask may have narrowed it; an old file may be wider
        self.size = os.fstat(self._fd).st_size
        self._torn = False
        """A failed write left bytes past `size` that could not be cut off yet."""
        if created:
            fsync_dir(path.parent)

    def write(self, rows: list[EventRow]) -> None:
        """Append rows and make them durable; on OSError the file ends where it did.

        Should even the cut after a failed write fail, the file is cut before
        the next write instead (which raises if it still cannot be), so a
        partial line is never followed by acknowledged ones.
        """
        data = b"".join(_encode(row) for row in rows)
        if self._torn:
            os.ftruncate(self._fd, self.size)
            self._torn = False
        try:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            if self.sync:
                os.fdatasync(self._fd)
        except OSError:
            try:
                os.ftruncate(self._fd, self.size)
            except OSError:
                self._torn = True
            raise
        self.size += len(data)

    def clear(self) -> None:
        """Empty the journal once DuckDB holds everything in it.

        No fsync: should the truncation be lost in a crash, the rows are
        loaded again and recognised as already there.
        """
        os.ftruncate(self._fd, 0)
        self.size = 0

    def close(self, remove: bool) -> None:
        if self._torn:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self.size)
        os.close(self._fd)
        if remove:
            self.path.unlink(missing_ok=True)
            fsync_dir(self.path.parent)


def fsync_dir(directory: Path) -> None:
    """Make the names in a directory (a file created or removed) durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def unloaded_rows(con: duckdb.DuckDBPyConnection, rows: list[EventRow]) -> list[EventRow]:
    """The journal rows the file lacks, `logged_at` filled in (now, where none).

    A crash after DuckDB took a backlog but before the journal was emptied
    leaves rows in both; they are known by (match_id, seq), since each
    match's sequence is gap-free.
    """
    if not rows:
        return []
    next_seq = {str(m): int(s) for m, s in con.execute(_sql.query("next_seq_of_all")).fetchall()}
    now = datetime.now(UTC)
    return [
        row if row[-1] is not None else (*row[:-1], now)
        for row in rows
        if row[1] >= next_seq.get(row[0], 0)
    ]

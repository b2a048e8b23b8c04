"""The journal: where an event becomes durable before DuckDB has it.

A DuckDB commit costs about a millisecond of CPU however few rows it holds,
which would make every acknowledged move wait a millisecond. Appending a
record to a plain file and fdatasync-ing it costs about a tenth of that. So
the log's writer makes each group of events durable here first, acknowledges
it, and loads the journal's backlog into DuckDB in large batches a few times
a second; the journal is then emptied. After a crash, the events in the
journal that DuckDB lacks are loaded when the log is next opened.

Why every record carries its length and checksums: after a crash the last
record may be incomplete (a write that was never acknowledged, which may be
dropped), but a damaged byte anywhere else would otherwise look the same and
silently lose acknowledged events. A record is one line of text:

    J<length:8 hex><crc:8 hex><header crc:8 hex> <payload>\n

`payload` is a JSON array of the `events_all` columns (`hash` as hex text,
`logged_at` as epoch microseconds), `length` its size in bytes, `crc` its
CRC-32 and `header crc` the CRC-32 of the 17 bytes before it. Reading a
journal (`scan_journal`) tells three cases apart:

- a whole record whose checksums hold: a row;
- the file ends inside a record whose header holds, or inside a header, or
  in zero bytes a filesystem left after a crash: a torn tail, never
  acknowledged, dropped;
- anything else (a header or payload whose checksum fails, a wrong
  terminator, a record that is complete but wrong): damage, reported with its
  byte offset and the intact records after it (`JournalDamaged`). The log
  refuses to open over it; `sniff recover --salvage` is the explicit way on.

A journal written before this format (releases up to schema version 4) is
JSON lines without checksums, recognised by its first byte `[`: it is read
as before, except that an undecodable line followed by others is damage too.

A write that fails (a full disk) is cut off again before the caller hears of
it, so no partial record stays in the middle of the file: the next write
truncates first if that cut failed too. The file is created mode 0600, like
the database (see files.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from . import _sql
from .errors import JournalDamaged
from .events import COLUMNS, HASH, EventRow
from .files import PRIVATE

if TYPE_CHECKING:
    import duckdb

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MARK = b"J"
_HEADER = 26
"""`J`, length, crc, header crc (8 hex digits each), one space."""
_HEX = frozenset(b"0123456789abcdef")


def journal_path(db_path: str | os.PathLike[str]) -> Path:
    """`<db path>.journal`, next to the database file."""
    return Path(f"{os.fspath(db_path)}.journal")


_ROW_SIZE = len(COLUMNS)


def _payload(row: EventRow) -> bytes:
    logged_at = row[-1]
    micros = None if logged_at is None else (logged_at - _EPOCH) // timedelta(microseconds=1)
    hash_ = row[HASH]
    values = [*row[:HASH], None if hash_ is None else hash_.hex(), micros]
    return json.dumps(values, separators=(",", ":")).encode()


def encode_record(row: EventRow) -> bytes:
    payload = _payload(row)
    head = b"J%08x%08x" % (len(payload), zlib.crc32(payload))
    return b"%s%08x %s\n" % (head, zlib.crc32(head), payload)


def _decode(payload: bytes) -> EventRow:
    values = json.loads(payload)
    micros = values[-1]
    logged_at = None if micros is None else _EPOCH + timedelta(microseconds=micros)
    if len(values) == _ROW_SIZE - 1:  # written before schema version 3: no hash
        return (*values[:-1], None, logged_at)
    if len(values) != _ROW_SIZE:
        raise ValueError(f"a journal record holds {len(values)} values, not {_ROW_SIZE}")
    hash_ = values[HASH]
    return (*values[:HASH], None if hash_ is None else bytes.fromhex(hash_), logged_at)


@dataclass(frozen=True)
class JournalScan:
    """What a journal file holds, read without trusting any of it."""

    rows: list[EventRow]
    """The intact rows before any damage, in order: what may be loaded."""
    torn_at: int | None = None
    """The offset of a torn last record (never acknowledged), if any."""
    damaged_at: int | None = None
    """The offset of the first damaged byte range, if any."""
    after: list[EventRow] | None = None
    """Intact rows found after the damage (only with `damaged_at`)."""


_TORN = -1
_DAMAGED = -2


def _record(data: bytes, pos: int) -> tuple[int, EventRow | None]:
    """(end, row) of the record at `pos`, or (_TORN, None) or (_DAMAGED, None)."""
    size = len(data)
    if size - pos < _HEADER:
        return _TORN, None  # a header cut short can only be the last write
    head = data[pos : pos + _HEADER]
    if not (
        head[0:1] == _MARK
        and head[25:26] == b" "
        and _HEX.issuperset(head[1:25])
        and zlib.crc32(head[:17]) == int(head[17:25], 16)
    ):
        if not data[pos:].strip(b"\0"):
            return _TORN, None  # zeros a filesystem left past the last durable write
        return _DAMAGED, None
    length = int(head[1:9], 16)
    end = pos + _HEADER + length + 1
    if end > size:
        return _TORN, None  # the header is whole and right: its record was being written
    payload = data[pos + _HEADER : end - 1]
    if data[end - 1] != 0x0A or zlib.crc32(payload) != int(head[9:17], 16):
        return _DAMAGED, None
    try:
        return end, _decode(payload)
    except (ValueError, TypeError, IndexError):
        return _DAMAGED, None


def _intact_after(data: bytes, pos: int) -> list[EventRow]:
    """Every whole record whose checksums hold after a damaged offset."""
    found: list[EventRow] = []
    start = data.find(_MARK, pos + 1)
    while start != -1:
        end, row = _record(data, start)
        if row is not None:
            found.append(row)
            start = data.find(_MARK, end)
        else:
            start = data.find(_MARK, start + 1)
    return found


def _scan_lines(data: bytes) -> JournalScan:
    """A journal of JSON lines, as releases before this format wrote it."""
    rows: list[EventRow] = []
    pos = 0
    while pos < len(data):
        newline = data.find(b"\n", pos)
        end = len(data) if newline == -1 else newline + 1
        line = data[pos:end].rstrip(b"\n")
        if line:
            try:
                rows.append(_decode(line))
            except (ValueError, TypeError, IndexError):
                if newline == -1:
                    return JournalScan(rows, torn_at=pos)
                after: list[EventRow] = []
                for later in data[end:].split(b"\n"):
                    with contextlib.suppress(ValueError, TypeError, IndexError):
                        after.append(_decode(later))
                return JournalScan(rows, damaged_at=pos, after=after)
        pos = end
    return JournalScan(rows)


def scan_journal(path: Path) -> JournalScan:
    """Read a journal file, telling a torn tail from damage (nothing if there is no file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return JournalScan([])
    if data.startswith(b"["):
        return _scan_lines(data)
    rows: list[EventRow] = []
    pos = 0
    while pos < len(data):
        end, row = _record(data, pos)
        if row is None:
            if end == _TORN:
                return JournalScan(rows, torn_at=pos)
            return JournalScan(rows, damaged_at=pos, after=_intact_after(data, pos))
        rows.append(row)
        pos = end
    return JournalScan(rows)


def read_journal(path: Path) -> list[EventRow]:
    """Every acknowledged row of a journal file; JournalDamaged if any may be lost.

    A torn last record is dropped (it was never acknowledged). Damage before
    the tail is never skipped: the caller must not go on as if the rows after
    it did not exist.
    """
    scan = scan_journal(path)
    if scan.damaged_at is not None:
        raise JournalDamaged(path, scan.damaged_at, len(scan.after or ()), len(scan.rows))
    return scan.rows


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
        data = b"".join(encode_record(row) for row in rows)
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

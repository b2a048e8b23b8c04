"""Reading a log file that no process holds: the CLI's offline path.

DuckDB allows many read-only processes on a file only while no process has
it open read-write; when the service runs, use `owner.find_owner` and its
Query RPC instead. A `LogReader` answers exactly the reads of `EventLog`
(the same class provides both), under the same read-only query rules.

A reader never writes: not the database, not its WAL, not a journal that a
service left behind when it stopped without closing. Auditors read evidence
copies, whose bytes must stay as they are. The journal's rows that the file
lacks are still seen, through temporary views that shadow the two tables
(see queries.sql, `overlay_journal`), so every view includes them. Loading
them into the file for good is `sniff recover`'s job.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:
    import pyarrow as pa

from . import _sql
from .access import ReadAccess
from .connect import Spill, claim, connect, realpath_key, release
from .errors import StorageError
from .events import (
    explicitly_dealt,
    result_rows,
    results_to_arrow,
    rows_to_arrow,
    settings_rows,
    settings_to_arrow,
)
from .integrity import check_whole
from .journal import journal_path, read_journal, unloaded_rows
from .migrate import check_readable, stored_version

__all__ = ["LogReader", "open_readonly"]


class LogReader(ReadAccess):
    """A read-only open of an event log file, for offline tools.

    Refuses a file of another schema version (SchemaVersionError: an older
    one names `sniff recover`, which upgrades it) and one that a process
    holds read-write (LogLocked, with its pid when DuckDB says). A log last
    closed uncleanly is still readable: DuckDB replays the WAL in memory,
    and the journal's rows are read from the journal.
    """

    def __init__(self, path: str | os.PathLike[str], spill: Spill | None = None) -> None:
        absolute, self._key = realpath_key(path)
        if not absolute.exists():
            raise StorageError(f"no event log at {absolute}")
        claim(self._key, write=False)
        try:
            con = connect(absolute, read_only=True, spill=spill)
        except BaseException:
            release(self._key, write=False)
            raise
        try:
            check_whole(con, absolute)
            check_readable(stored_version(con), absolute)
            pending = unloaded_rows(con, read_journal(journal_path(absolute)))
            self._overlay: tuple[str, dict[str, pa.Table]] | None = None
            if pending:
                import pyarrow as pa

                catalog = str(con.execute(_sql.query("current_database")).fetchall()[0][0])
                tables = {
                    "_journal_events": rows_to_arrow(pending),
                    "_journal_settings": settings_to_arrow(settings_rows(pending)),
                    "_journal_results": results_to_arrow(result_rows(pending)),
                    "_journal_explicit": pa.table(
                        {"match_id": pa.array(explicitly_dealt(pending), pa.string())}
                    ),
                }
                self._overlay = (_sql.with_catalog("overlay_journal", catalog), tables)
        except BaseException:
            con.close()
            release(self._key, write=False)
            raise
        super().__init__(absolute, con)
        self.journal_rows = len(pending)
        """Rows read from a leftover journal that the file itself lacks."""
        self._released = False

    @contextmanager
    def _cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor that sees the journal's rows too (temporary views are per cursor)."""
        with super()._cursor() as cursor:
            if self._overlay is not None:
                sql, tables = self._overlay
                for name, table in tables.items():
                    cursor.register(name, table)
                cursor.execute(sql)
            yield cursor

    def read_cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor of the file for a caller that runs its own SQL on it (the statistics:
        their temporary tables and macros, over the facts tables in place). It sees what
        `_cursor`'s do, the journal's rows included, and is as read-only as the open; the
        caller closes it before closing the reader."""
        with self._con_lock:
            if self._con is None:
                raise StorageError(f"the event log {self.path} is closed")
            cursor = self._con.cursor()
        if self._overlay is not None:
            sql, tables = self._overlay
            for name, table in tables.items():
                cursor.register(name, table)
            cursor.execute(sql)
        return cursor

    def close(self) -> None:
        """Close the connection and let a writer open the file again."""
        self._close_connection()
        if not self._released:
            self._released = True
            release(self._key, write=False)


def open_readonly(path: str | os.PathLike[str], spill: Spill | None = None) -> LogReader:
    """Open `path` read-only; use it as a context manager to release the file.

    Changes no byte of the file, its WAL or its journal, and still sees
    every acknowledged event (a leftover journal's included). With `spill`, the
    open's memory is bounded and what exceeds it goes to the spill's directory (never
    beside the log).
    """
    return LogReader(path, spill)

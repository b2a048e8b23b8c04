"""Reading a log file that no process holds: the CLI's offline path.

DuckDB allows many read-only processes on a file only while no process has
it open read-write; when the service runs, use `owner.find_owner` and its
Query RPC instead. A `LogReader` answers exactly the reads of `EventLog`
(the same class provides both), under the same read-only query rules.
"""

from __future__ import annotations

import os

from ._base import ReadAccess, check_version, claim, connect, realpath_key, release, stored_version
from .errors import StorageError
from .journal import journal_path

__all__ = ["LogReader", "open_readonly"]


class LogReader(ReadAccess):
    """A read-only open of an event log file, for offline tools.

    Refuses a file of another schema version (SchemaVersionError) and one
    that a process holds read-write (LogLocked, with its pid when DuckDB
    says). A log last closed uncleanly is still readable: DuckDB replays the
    WAL in memory.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        absolute, self._key = realpath_key(path)
        if not absolute.exists():
            raise StorageError(f"no event log at {absolute}")
        claim(self._key, write=False)
        try:
            con = connect(absolute, read_only=True)
        except BaseException:
            release(self._key, write=False)
            raise
        try:
            check_version(stored_version(con), absolute)
        except BaseException:
            con.close()
            release(self._key, write=False)
            raise
        super().__init__(absolute, con)
        self._released = False

    def close(self) -> None:
        """Close the connection and let a writer open the file again."""
        self._close_connection()
        if not self._released:
            self._released = True
            release(self._key, write=False)


def open_readonly(path: str | os.PathLike[str]) -> LogReader:
    """Open `path` read-only; use it as a context manager to release the file.

    A service that stopped without closing its log may have left
    acknowledged events in the journal only; they are loaded first (a brief
    read-write open, which fails with LogLocked if a process holds the file),
    so a reader always sees every acknowledged event.
    """
    journal = journal_path(path)
    if journal.exists() and journal.stat().st_size > 0:
        from .log import EventLog

        EventLog(path).close()
    return LogReader(path)

"""The durable DuckDB event log of American Sniff matches.

`EventLog` is the gRPC service's read-write owner of the file (group commit,
gap-free per-match sequences, read-only ad hoc queries); `open_readonly`
reads a file no process holds, without changing it; `find_owner` tells a
tool which service holds it. SQL lives in the .sql files beside this
package; docs/schema.md describes the tables and views for users.

`EventLog` (and `Opening`) are imported on first use: a tool that only reads
a file (`open_readonly`) loads neither the write path nor pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._sql import Params
from .access import QueryInterrupt, ReadAccess
from .errors import (
    DamagedLog,
    DuplicateEvent,
    JournalDamaged,
    LogClosed,
    LogFull,
    LogLocked,
    QueryError,
    ReadOnlyViolation,
    SchemaVersionError,
    SequenceError,
    SequenceGap,
    StorageError,
)
from .events import KINDS, EventKind, LogEvent
from .migrate import SCHEMA_VERSION
from .owner import Owner, find_owner, owner_path, remove_owner, write_owner
from .read_only import read_only_statement
from .reader import LogReader, open_readonly

if TYPE_CHECKING:
    from .log import EventLog, Opening

__all__ = [
    "KINDS",
    "SCHEMA_VERSION",
    "DamagedLog",
    "DuplicateEvent",
    "EventKind",
    "EventLog",
    "JournalDamaged",
    "LogClosed",
    "LogEvent",
    "LogFull",
    "LogLocked",
    "LogReader",
    "Opening",
    "Owner",
    "Params",
    "QueryError",
    "QueryInterrupt",
    "ReadAccess",
    "ReadOnlyViolation",
    "SchemaVersionError",
    "SequenceError",
    "SequenceGap",
    "StorageError",
    "find_owner",
    "open_readonly",
    "owner_path",
    "read_only_statement",
    "remove_owner",
    "write_owner",
]


def __getattr__(name: str) -> Any:
    """`EventLog` and `Opening`, from the write path's module on first use."""
    if name in ("EventLog", "Opening"):
        from . import log

        value = getattr(log, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

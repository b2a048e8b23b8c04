"""One exception type per cause, so callers never parse messages.

The gRPC layer maps each class to one canonical status code (for example
`DuplicateEvent` to ALREADY_EXISTS, `ReadOnlyViolation` to PERMISSION_DENIED,
`QueryError` to INVALID_ARGUMENT, `LogLocked` to UNAVAILABLE) and the CLI turns
each into a one-line message. Every class derives from `StorageError`, so a
caller that only wants "the log failed" catches one type.
"""

from __future__ import annotations


class StorageError(Exception):
    """Base of every error raised by `service.storage`."""


class SchemaVersionError(StorageError):
    """The file's schema version is not one this code can read or write.

    Raised for a file written by a newer release (refused rather than
    misread), an older one that cannot be migrated here, or a DuckDB file
    that is not an event log at all.
    """


class LogLocked(StorageError):
    """Another process (or another log object in this one) holds the file.

    DuckDB lets one process open a file read-write and then no other process
    may open it at all, not even read-only. `pid` is the holder when DuckDB
    names it; `find_owner` tells how to reach that holder instead.
    """

    def __init__(self, message: str, pid: int | None = None) -> None:
        super().__init__(message)
        self.pid = pid


class LogFull(StorageError):
    """The disk (or the owner's quota) is full: nothing of the append was kept.

    Raised to every caller whose events could not be made durable (ENOSPC or
    EDQUOT writing or syncing the journal), and to reads while the journal's
    backlog cannot be loaded into DuckDB for lack of space. Nothing was
    acknowledged and nothing half-written stays in the journal; the log goes
    on working once space is freed. The service maps it to RESOURCE_EXHAUSTED.
    """


class LogClosed(StorageError):
    """The log was closed; nothing more can be appended or read through it."""


class SequenceError(StorageError):
    """An event's `seq` does not continue its match's gap-free sequence.

    Per-match sequences are 0, 1, 2, ... with no hole and no repeat, so a
    match can be rebuilt by replaying its events in order. Only the batch
    that carries the event fails; other callers' batches committed in the
    same group commit are not affected.
    """

    def __init__(self, match_id: str, seq: int, expected: int | None) -> None:
        self.match_id = match_id
        self.seq = seq
        self.expected = expected
        super().__init__(self._describe())

    def _describe(self) -> str:
        return f"match {self.match_id!r}: seq {self.seq} does not continue the log"


class DuplicateEvent(SequenceError):
    """(match_id, seq) is already in the log (or earlier in the same batch)."""

    def _describe(self) -> str:
        return f"match {self.match_id!r}: event seq {self.seq} is already logged"


class SequenceGap(SequenceError):
    """The event would leave a hole: earlier seq numbers of its match are missing."""

    def _describe(self) -> str:
        return (
            f"match {self.match_id!r}: event seq {self.seq} would leave a gap,"
            f" the next seq is {self.expected}"
        )


class ReadOnlyViolation(StorageError):
    """A query that could change the database, the files or the settings.

    `query` accepts one SELECT-like statement (SELECT, WITH, FROM, DESCRIBE,
    SHOW, SUMMARIZE, EXPLAIN of those); everything else is refused before it
    runs, and it runs in a READ ONLY transaction anyway.
    """


class QueryError(StorageError):
    """A read-only query that DuckDB could not parse, bind or run."""


class JournalDamaged(StorageError):
    """A journal record before its last is damaged: acknowledged events may be lost.

    A torn last record (a crash mid-write) was never acknowledged and is
    dropped without a word; this is anything else. The log refuses to open
    over it and leaves the journal as it is for forensics; `sniff recover
    --salvage` loads the intact records, moves the journal aside and records
    the loss in the log (`salvages`).
    """

    def __init__(self, path: object, offset: int, records_after: int, records_before: int) -> None:
        self.path = path
        self.offset = offset
        self.records_after = records_after
        self.records_before = records_before
        super().__init__(
            f"{path}: journal damaged at byte {offset}, with {records_after} intact"
            f" record{'' if records_after == 1 else 's'} after it; nothing was loaded and the"
            " journal is kept as it is: `sniff recover --salvage` loads the intact records"
            " and records the loss"
        )


class DamagedLog(StorageError):
    """The log file itself is damaged (cut short): refused before anything is written.

    DuckDB would open it and answer queries from zeros where the missing
    blocks were; a writer would write into it. Nothing can be saved here
    that a copy of the file would not save better.
    """

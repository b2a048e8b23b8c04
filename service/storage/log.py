"""The service's durable event log: one DuckDB file, its journal, one writer thread.

Why a writer thread: a DuckDB commit costs about a millisecond of CPU
however few rows it holds. Game threads hand their events to `append`,
which queues them and blocks; the writer takes everything queued, checks
it, appends it to the journal (`journal.py`) with one fdatasync, and only
then wakes every waiter (group commit). A returned `append` therefore means
the events survive a crash: they are in the synced journal. The writer
loads the journal's backlog into DuckDB in large batches (every
`LOAD_SECONDS`, or `LOAD_ROWS` rows, or before any read of this log), so
every read through this log sees every acknowledged event.

Each match's events are numbered 0, 1, 2, ... without gaps. The writer keeps
the next seq of every unfinished match in memory, so it can refuse a
duplicate or a gap for the one batch that carries it without failing the
other batches of the same group commit; should the database still reject
the group, each batch is retried alone so only the bad one fails.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import duckdb

from . import _sql
from ._base import (
    ReadAccess,
    check_version,
    claim,
    connect,
    realpath_key,
    release,
    scalar,
    stored_version,
)
from .errors import DuplicateEvent, LogClosed, SequenceError, SequenceGap, StorageError
from .events import COLUMNS, EventRow, LogEvent, rows_to_arrow, to_rows
from .journal import Journal, fsync_dir, journal_path, read_journal
from .owner import remove_owner, write_owner

__all__ = ["EventLog"]

_log = logging.getLogger(__name__)

_PENDING_TABLE: Final = "_pending_events"  # the name queries.sql inserts from
LOAD_SECONDS: Final = 0.25
"""Longest an acknowledged event waits in the journal before DuckDB gets it."""
LOAD_ROWS: Final = 8_192
"""A backlog this large is loaded into DuckDB at once."""
MAX_GROUP_ROWS: Final = 65_536
"""Most rows one group commit takes, so one commit's latency stays bounded."""
GATHER_SECONDS: Final = 0.001
"""Longest the writer waits for last group's callers to queue again."""
ARROW_MIN_ROWS: Final = 1_024
"""From this many rows a group goes in as an Arrow table, below by the appender.

Measured here (DuckDB 2.0): an Arrow insert has about 1 ms more fixed cost
per statement than the appender, which is slower per row (about 400 k
rows/s against 650 k); they break even near 1,000 rows. Both are one
statement, so one transaction and one WAL fsync.
"""


# What inserting a group can raise for a value of one batch: DuckDB's errors,
# and Arrow's (ArrowInvalid is a ValueError, ArrowTypeError a TypeError).
_INSERT_ERRORS: Final = (duckdb.Error, ValueError, TypeError, OverflowError)


class _Waiter:
    """The outcome of one `append` call, and the one lock its caller sleeps on.

    A `Future` plus an `Event` cost two conditions per call; a raw lock,
    held from the start and released once, wakes the caller when its batch
    is done or when it is handed the lead, for a fraction of that.
    """

    __slots__ = ("_error", "_finished", "_lock", "promoted")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()
        self._finished = False
        self._error: BaseException | None = None
        self.promoted = False

    def done(self) -> bool:
        return self._finished

    def set_running_or_notify_cancel(self) -> bool:
        return True  # a blocked caller cannot cancel

    def set_result(self, result: None) -> None:
        self._finished = True
        self._wake()

    def set_exception(self, error: BaseException) -> None:
        self._error = error
        self._finished = True
        self._wake()

    def promote(self) -> None:
        """Hand this caller the lead (its batch is still queued)."""
        self.promoted = True
        self._wake()

    def _wake(self) -> None:
        with suppress(RuntimeError):  # already woken (promoted, then finished)
            self._lock.release()

    def wait(self) -> None:
        self._lock.acquire()

    def result(self) -> None:
        if self._error is not None:
            raise self._error


@dataclass(slots=True)
class _Batch:
    """One caller's events, already as rows (bad JSON fails its own caller)."""

    events: tuple[LogEvent, ...]
    rows: list[EventRow]
    future: Future[None] | _Waiter


class EventLog(ReadAccess):
    """The read-write event log, owned by one service process.

    Opening creates the file and its schema if needed and refuses a file of
    another schema version (SchemaVersionError) or one held by another
    process (LogLocked). The log is the only owner of the file in its process:
    no other process can open the file while it is open, so offline tools
    reach it through the service (see `owner.find_owner`).

    All methods are safe to call from many threads. Reads (`query`,
    `events_for`, ...) see committed events only.
    """

    def __init__(self, path: str | os.PathLike[str], *, sync: bool = True) -> None:
        """Open (or create) the log at `path`.

        With `sync` (the default) an acknowledged append has been fdatasync-ed
        and survives a power loss; without it, an acknowledged append is in
        the operating system's cache and survives a crash or kill of this
        process, but not of the machine.
        """
        absolute, self._key = realpath_key(path)
        claim(self._key, write=True)
        try:
            con = connect(absolute, read_only=False)
        except BaseException:
            release(self._key, write=True)
            raise
        try:
            _open_schema(con, absolute)
            _load_journal(con, journal_path(absolute))
            next_seq = {
                str(match_id): int(seq)
                for match_id, seq in con.execute(_sql.query("next_seq_of_unfinished")).fetchall()
            }
            known = {
                str(m)
                for (m,) in con.execute(
                    _sql.query("match_ids"), {"unfinished_only": False}
                ).fetchall()
            }
            journal = Journal(journal_path(absolute), sync=sync)
            writer_cursor = con.cursor()
            fsync_dir(absolute.parent)  # the new file's name must survive a crash too
        except BaseException:
            con.close()
            release(self._key, write=True)
            raise
        super().__init__(absolute, con)

        self._wal_path = Path(f"{absolute}.wal")
        self._wal_id: tuple[int, int] | None = None
        self._wal_size = 0
        self._advertised = False

        # Writer state: touched by the writer thread only (after this point).
        self._wcur = writer_cursor
        self._next_seq: dict[str, int] = next_seq
        self._known: set[str] = known
        """Every match id in the log: a new match may not reuse one."""
        self._journal = journal
        self._backlog: list[EventRow] = []
        """Acknowledged rows in the journal that DuckDB does not hold yet."""
        self._backlog_since = 0.0
        self._ended: list[str] = []
        """Matches whose end is in the backlog: forgotten once it is loaded."""
        self._flushes: list[Future[None]] = []
        self._leading = False
        """True while one thread commits or loads; the journal and backlog are its alone."""
        self._writer_turn = False
        """The writer thread has work waiting and leads next (callers then wait to be led)."""
        self._retry_load_at = 0.0
        self._lead_ident: int | None = None
        """The thread that leads now (when known): a future's callback may run on it."""

        # The queue between callers and the writer.
        self._cond = threading.Condition()
        self._queue: list[_Batch] = []
        self._closing = False
        self._last_group = 0
        self._writer = threading.Thread(
            target=self._run, name=f"event-log-writer:{absolute.name}", daemon=True
        )
        self._writer.start()
        # An interpreter that exits with the log open would kill DuckDB mid-flight
        # (and leave the backlog to the journal): close it first.
        atexit.register(self.close)

    # -- appending ---------------------------------------------------------

    def append(self, events: Sequence[LogEvent]) -> None:
        """Append events and return once they are committed durably.

        Raises DuplicateEvent or SequenceGap if an event does not continue its
        match's sequence (then none of `events` is written), LogClosed after
        `close()`, TypeError/ValueError for a `detail` that is not JSON.
        Events of one match must be appended in order: the service appends a
        match's events while holding that match's lock.

        The calling thread commits its own group when no other is committing
        (it becomes the leader), so a lone caller pays no thread hand-off;
        callers that arrive meanwhile wait and join the next group.
        """
        batch = tuple(events)
        if not batch:
            return
        future = _Waiter()
        rows = to_rows(batch)
        with self._cond:
            if self._closing:
                raise LogClosed(f"the event log {self.path} is closed")
            self._queue.append(_Batch(batch, rows, future))
            lead = not self._leading and not self._writer_turn
            if lead:
                self._leading = True
                self._lead_ident = threading.get_ident()
        if not lead:
            future.wait()  # our batch is done, or leadership was handed to us
            if future.done():
                return future.result()
            self._lead_ident = threading.get_ident()
        try:
            # Lead until our own batch is committed (with whatever queued beside it).
            while not future.done():
                with self._cond:
                    group = self._take_group() if self._queue else []
                if not group:
                    break
                self._commit_taken(group)
        finally:
            with self._cond:
                self._hand_over()
        return future.result()

    def _hand_over(self) -> None:
        """Pass leadership to the first waiting `append` caller, or release it (under _cond).

        Waking exactly one thread, rather than every waiter, keeps a busy
        service from spending its CPU on threads that wake only to sleep again.
        When the writer thread has work (a load due, a flush asked, closing),
        it gets the lead next, so a steady stream of callers cannot starve it;
        it commits or hands on the waiting callers' batches in turn.
        """
        self._lead_ident = None
        writer_work = bool(self._flushes) or self._closing or self._load_due()
        if not writer_work:
            for batch in self._queue:
                if isinstance(batch.future, _Waiter) and not batch.future.done():
                    batch.future.promote()  # it leads now; `_leading` stays True
                    return
        self._writer_turn = writer_work
        self._leading = False
        self._cond.notify_all()  # the writer thread, for async batches and loads

    def append_async(self, events: Iterable[LogEvent]) -> Future[None]:
        """Queue events for the next group commit; the future completes with it.

        The future's result is None once the events are durable, or the error
        that kept this batch out (all or nothing). Cancelling the future
        before the writer takes it keeps the events out of the log.
        """
        batch = tuple(events)
        future: Future[None] = Future()
        rows = to_rows(batch)
        with self._cond:
            if self._closing:
                raise LogClosed(f"the event log {self.path} is closed")
            if not batch:
                future.set_result(None)
                return future
            self._queue.append(_Batch(batch, rows, future))
            self._cond.notify()
        return future

    # -- the writer thread ---------------------------------------------------

    def _load_due(self) -> bool:
        now = time.monotonic()
        if now < self._retry_load_at:  # the last load failed: no busy retrying
            return False
        return bool(self._backlog) and (
            len(self._backlog) >= LOAD_ROWS or now - self._backlog_since >= LOAD_SECONDS
        )

    def _run(self) -> None:
        """Commit queued async batches, load the backlog when due or asked, and close."""
        while True:
            with self._cond:
                while self._leading or not (
                    self._queue or self._flushes or self._closing or self._load_due()
                ):
                    timeout = None
                    if self._backlog and not self._leading:
                        timeout = max(0.0, self._backlog_since + LOAD_SECONDS - time.monotonic())
                    self._cond.wait(timeout)
                self._leading = True
                self._lead_ident = threading.get_ident()
                self._writer_turn = False
                if self._queue:
                    self._gather()
                    group = self._take_group()
                else:
                    group = []
                flushes, self._flushes = self._flushes, []
                done = self._closing and not self._queue
            try:
                if group:
                    self._last_group = len(group)
                    self._commit_taken(group)
                if flushes or done or self._load_due():
                    self._load()
            except Exception:  # the writer must outlive any failure, or every caller hangs
                _log.exception("event log writer failed")
            finally:
                self._answer(flushes)
                with self._cond:
                    self._hand_over()
            if done:
                return  # closing, and everything queued is written and loaded

    def _commit_taken(self, group: list[_Batch]) -> None:
        group = [batch for batch in group if batch.future.set_running_or_notify_cancel()]
        if not group:
            return
        try:
            self._commit_group(group)
        except Exception as exc:  # a bug here must not leave callers blocked
            _log.exception("event log writer failed a group commit")
            for batch in group:
                if not batch.future.done():
                    batch.future.set_exception(exc)

    def _answer(self, flushes: list[Future[None]]) -> None:
        for future in flushes:
            if self._backlog:
                future.set_exception(StorageError("the event log could not load its journal"))
            else:
                future.set_result(None)

    def flush(self) -> None:
        """Return once DuckDB holds every event acknowledged so far (reads call this)."""
        if threading.get_ident() == self._lead_ident:
            # The leading thread itself (an append_async future's done-callback):
            # no one else may load while it leads, so it loads.
            self._load()
            if self._backlog:
                raise StorageError("the event log could not load its journal")
            return
        future: Future[None] = Future()
        with self._cond:
            if self._closing or not self._writer.is_alive():
                return
            self._flushes.append(future)
            self._cond.notify()
        future.result()

    @contextmanager
    def _cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        self.flush()
        with super()._cursor() as cursor:
            yield cursor

    def _load(self) -> None:
        """Move the backlog from the journal into DuckDB (one transaction), then empty the journal.

        A failure keeps the backlog (still durable in the journal) for the
        next attempt.
        """
        if not self._backlog:
            return
        try:
            self._insert(self._backlog)
        except _INSERT_ERRORS:
            _log.exception("loading %d journal rows into DuckDB failed", len(self._backlog))
            self._retry_load_at = time.monotonic() + LOAD_SECONDS
            return
        self._backlog = []  # DuckDB holds it now: never insert it again
        for match_id in self._ended:
            self._next_seq.pop(match_id, None)
        self._ended = []
        try:
            self._sync_new_wal()
        except OSError:
            _log.exception("could not sync the WAL's directory: the journal keeps its rows")
            return  # a restart skips the rows DuckDB holds; the next load retries
        self._journal.clear()

    def _gather(self) -> None:
        """Wait a moment for the callers of the last group to queue again.

        Every caller woken by a commit queues its next event a little later;
        without this the writer takes the first few, and groups settle at
        about half the callers, alternating. Only waits when the last group
        had several callers, so a lone caller never waits.
        """
        want = self._last_group
        if want > 1 and len(self._queue) < want and not self._closing:
            self._cond.wait_for(
                lambda: len(self._queue) >= want or self._closing, timeout=GATHER_SECONDS
            )

    def _take_group(self) -> list[_Batch]:
        """Everything queued, up to MAX_GROUP_ROWS rows (at least one batch)."""
        rows = 0
        taken = 0
        for batch in self._queue:
            if taken and rows + len(batch.events) > MAX_GROUP_ROWS:
                break
            rows += len(batch.events)
            taken += 1
        group, self._queue = self._queue[:taken], self._queue[taken:]
        return group

    def _commit_group(self, group: list[_Batch]) -> None:
        staged: dict[str, int] = {}
        accepted: list[_Batch] = []
        for batch in group:
            unstorable = _unstorable(batch.rows)
            if unstorable is not None:
                batch.future.set_exception(
                    StorageError(f"the event log could not commit: {unstorable}")
                )
                continue
            try:
                advanced = self._check_sequence(batch.events, staged)
            except SequenceError as exc:
                batch.future.set_exception(exc)
                continue
            except duckdb.Error as exc:  # looking a finished match up failed
                batch.future.set_exception(_commit_failed(exc))
                continue
            staged.update(advanced)
            accepted.append(batch)
        if not accepted:
            return
        now = datetime.now(UTC)
        rows = [
            row if row[-1] is not None else (*row[:-1], now)
            for batch in accepted
            for row in batch.rows
        ]
        try:
            self._journal.write(rows)
        except OSError as exc:
            for batch in accepted:
                batch.future.set_exception(_commit_failed(exc))
            return
        if not self._backlog:
            self._backlog_since = time.monotonic()
        self._backlog.extend(rows)
        self._advance(staged, [e for batch in accepted for e in batch.events])
        for batch in accepted:
            batch.future.set_result(None)

    def _check_sequence(self, events: Sequence[LogEvent], staged: dict[str, int]) -> dict[str, int]:
        """Each match's next seq after `events`, or the SequenceError they cause.

        `staged` holds the next seqs after earlier batches of the same group.
        """
        advanced: dict[str, int] = {}
        for event in events:
            match_id = event.match_id
            expected = advanced.get(match_id)
            if expected is None:
                expected = staged.get(match_id)
            if expected is None:
                expected = self._next_seq.get(match_id)
            if expected is None:
                # Unknown here: a new match, or a finished one (not kept in
                # memory once DuckDB holds its end). A new match starts at 0
                # with an id never used; a finished one goes on in the file.
                expected = self._next_seq_in_file(match_id) if match_id in self._known else 0
            if event.seq < expected:
                raise DuplicateEvent(match_id, event.seq, expected)
            if event.seq > expected:
                raise SequenceGap(match_id, event.seq, expected)
            advanced[match_id] = expected + 1
        return advanced

    def _next_seq_in_file(self, match_id: str) -> int:
        next_seq = scalar(self._wcur, "next_seq_of", {"match_id": match_id})
        return int(next_seq) if next_seq is not None else 0

    def _advance(self, advanced: dict[str, int], events: Iterable[LogEvent]) -> None:
        self._next_seq.update(advanced)
        self._known.update(advanced)
        for event in events:
            if event.kind == "match_ended":
                # A finished match takes no more events in the normal course;
                # forgetting it (once DuckDB holds it) keeps memory to the open matches.
                self._ended.append(event.match_id)

    def _insert(self, rows: list[EventRow]) -> None:
        """One statement for all rows: one transaction, one WAL fsync."""
        cursor = self._wcur
        if len(rows) < ARROW_MIN_ROWS:
            appender = cursor.appender("events", columns=list(COLUMNS))
            try:
                appender.append_rows(rows)
                appender.flush()
            except BaseException:
                appender.clear()  # nothing of a failed group may be flushed later
                raise
        else:
            _insert_arrow(cursor, rows)

    def _sync_new_wal(self) -> None:
        """Make a newly created WAL file's name durable, before anyone is told.

        DuckDB fdatasyncs the WAL at every commit but never the directory, and
        it deletes the WAL at each checkpoint (every 16 MiB of WAL, and at
        close) and creates a new one at the next commit. Without this, a power
        cut after a checkpoint could lose the new WAL's directory entry and
        every commit in it. Only a new WAL (new inode, or one that shrank)
        costs a directory fsync.
        """
        try:
            st = os.stat(self._wal_path)
        except FileNotFoundError:
            self._wal_id = None  # checkpointed: everything is in the main file
            return
        wal_id = (st.st_dev, st.st_ino)
        if wal_id != self._wal_id or st.st_size < self._wal_size:
            fsync_dir(self._wal_path.parent)
        self._wal_id = wal_id
        self._wal_size = st.st_size

    # -- the owner sidecar -------------------------------------------------------

    def advertise(self, address: str, query_token: str | None = None) -> None:
        """Write `<db>.owner.json` so tools route queries to `address` instead.

        Call it once the service's port is bound; `close()` removes the file.
        The file is created mode 0600: whoever may read it may read the log
        file itself, so it may carry the service's query token.
        """
        write_owner(self.path, address, query_token)
        self._advertised = True

    # -- lifetime ------------------------------------------------------------------

    def close(self) -> None:
        """Commit everything queued, checkpoint, and release the file.

        After a clean close the file holds everything (no WAL left), so
        read-only tools open it fast. Safe to call twice. A query still running
        on another thread may fail when the connection goes.
        """
        with self._cond:
            first = not self._closing
            self._closing = True
            self._cond.notify_all()
        self._writer.join()
        if not first:
            return
        atexit.unregister(self.close)
        self._journal.close(remove=not self._backlog)
        try:
            with suppress(duckdb.Error):
                self._wcur.execute("CHECKPOINT")
            with suppress(duckdb.Error):
                self._wcur.close()
            self._close_connection()
            fsync_dir(self.path.parent)  # the WAL's removal, after the checkpoint
        finally:
            if self._advertised:
                remove_owner(self.path)
            release(self._key, write=True)


_INT32_COLUMNS: Final = tuple(
    i
    for i, name in enumerate(COLUMNS)
    if name in ("seq", "round", "action_index", "seat", "points", "ends_sum")
)


_TEXT_COLUMNS: Final = tuple(
    i for i, name in enumerate(COLUMNS) if name in ("match_id", "move", "drawn")
)


def _unstorable(rows: list[EventRow]) -> str | None:
    """Why DuckDB would refuse a row, found before it is acknowledged (then it must load)."""
    for row in rows:
        for i in _INT32_COLUMNS:
            value = row[i]
            if value is not None and not -(2**31) <= value < 2**31:  # type: ignore[operator]
                return f"{COLUMNS[i]} {value} does not fit an INTEGER column"
        for i in _TEXT_COLUMNS:
            text = row[i]
            if text is not None and not text.isascii():  # type: ignore[union-attr]
                try:
                    text.encode()  # type: ignore[union-attr]
                except UnicodeEncodeError:
                    return f"{COLUMNS[i]} is not valid UTF-8 text (a lone surrogate)"
    return None


def _load_journal(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Load the journal rows DuckDB lacks (after a crash) and empty the journal.

    Rows DuckDB already holds (loaded before the crash, journal not yet
    emptied) are recognised by their (match_id, seq) and skipped.
    """
    rows = read_journal(path)
    if not rows:
        return 0
    next_seq = {str(m): int(s) for m, s in con.execute(_sql.query("next_seq_of_all")).fetchall()}
    now = datetime.now(UTC)
    missing = [
        row if row[-1] is not None else (*row[:-1], now)
        for row in rows
        if row[1] >= next_seq.get(row[0], 0)
    ]
    if missing:
        _insert_arrow(con, missing)
    _log.info("loaded %d of %d journal rows into %s", len(missing), len(rows), path)
    with open(path, "r+b") as handle:
        handle.truncate(0)
    return len(missing)


def _insert_arrow(cursor: duckdb.DuckDBPyConnection, rows: list[EventRow]) -> None:
    """Insert rows as one Arrow table: one statement (the fast way for many rows)."""
    cursor.register(_PENDING_TABLE, rows_to_arrow(rows))
    try:
        cursor.execute(_sql.query("insert_pending_events"))
    finally:
        with suppress(duckdb.Error):
            cursor.unregister(_PENDING_TABLE)


def _commit_failed(exc: BaseException) -> StorageError:
    error = StorageError(f"the event log could not commit: {exc}")
    error.__cause__ = exc
    return error


def _open_schema(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Create or refresh the schema, but never over a newer (or foreign) one."""
    version = stored_version(con)
    if version is not None:
        check_version(version, path)
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(_sql.schema_script())
        con.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
    check_version(stored_version(con), path)  # schema.sql and SCHEMA_VERSION agree

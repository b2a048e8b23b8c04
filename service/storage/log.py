"""The service's durable event log: one DuckDB file, its journal, one writer thread.

Why a journal: a DuckDB commit costs about a millisecond of CPU however few
rows it holds, while appending a line to a file and fdatasync-ing it costs a
fraction of that. So an event is made durable in the journal first and
reaches DuckDB later, many at a time.

The write protocol (the one place it is written down):

1. Hand-in. `append(events)` turns the events into rows in the caller's
   thread (a `detail` that is not JSON, text that is not UTF-8 or an int
   that no column holds raises there and then), queues them as one batch
   with a `concurrent.futures.Future`, and waits for it.
2. Group commit. Whoever holds `_commit_lock` owns everything behind the
   queue: the journal, the backlog, each open match's next seq and the
   DuckDB write cursor. A commit takes everything queued (at most
   MAX_GROUP_ROWS rows), fails each batch that does not continue its match's
   gap-free sequence (DuplicateEvent, SequenceGap: that batch only), writes
   the rest to the journal with one write and one fdatasync, and only then,
   with the lock released, resolves the futures. So callers that arrive
   together share one write and one fsync, and a resolved future means the
   events survive a crash (with `sync=False`: a crash of the process, not
   of the machine). If the journal write fails, the journal is cut back to
   where it was and every batch of the group fails: LogFull for a full
   disk, StorageError otherwise.
3. Who commits. `append` commits in its own thread when the lock is free (a
   lone caller pays no thread switch); otherwise it waits for its future.
   The writer thread serves everything else: batches queued while the lock
   was taken (whoever releases the lock with batches queued wakes it), and
   the loads that fall due. After a group of several callers the writer
   waits up to GATHER_SECONDS for as many to queue again.
4. Loading. Acknowledged rows that DuckDB does not hold yet are the
   backlog. It is inserted in one transaction (with the settings of the
   matches it creates) when it reaches LOAD_ROWS rows or its oldest row is
   LOAD_SECONDS old (by the writer), before any read through this log (by
   the reading thread, under the lock: a read sees every event acknowledged
   before it began), and at close; then the journal is emptied. A failed
   load keeps the backlog, still durable in the journal, is retried after
   LOAD_SECONDS, and fails the reads meanwhile (LogFull for a full disk).
5. Recovery. Opening the log first migrates an older schema, then loads the
   journal rows that DuckDB lacks (a crash between steps 2 and 4).
"""

from __future__ import annotations

import atexit
import errno
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
import pyarrow as pa
import pyarrow.compute as pc

from service.evidence.keys import SigningKey
from service.evidence.signed import Checkpoint
from sniff.facts import FactsRows

from . import _sql
from .access import ReadAccess
from .connect import claim, connect, realpath_key, release
from .errors import (
    DuplicateEvent,
    JournalDamaged,
    LogClosed,
    LogFull,
    SequenceError,
    SequenceGap,
    StorageError,
)
from .events import (
    COLUMNS,
    HASH,
    EventRow,
    LogEvent,
    arrow_schema,
    explicitly_dealt,
    result_rows,
    results_to_arrow,
    rows_to_arrow,
    settings_rows,
    settings_to_arrow,
    to_rows,
)
from .facts import (
    Facts,
    facts_of,
    fill_missing_facts,
    insert_facts,
    match_ids_of,
    merged_facts,
)
from .files import make_private, owner_only, private_temp_dir
from .imports import check_matches
from .integrity import check_whole
from .journal import (
    Journal,
    JournalScan,
    fsync_dir,
    journal_path,
    scan_journal,
    unloaded_rows,
)
from .migrate import chain_journal_rows, chained_table, open_schema
from .owner import remove_owner, write_owner
from .simulated import SimulationRun, insert_matches, insert_run, read_run
from .tree import HEAD_KINDS, PreparedHead, TreeSigner, insert_checkpoints, insert_leaves

__all__ = ["EventLog", "Imported", "Opening"]

_log = logging.getLogger(__name__)

LOAD_SECONDS: Final = 0.25
"""Longest an acknowledged event waits in the journal before DuckDB gets it."""
LOAD_ROWS: Final = 8_192
"""A backlog this large is loaded into DuckDB at once."""
MAX_GROUP_ROWS: Final = 65_536
"""Most rows one group commit takes, so one commit's latency stays bounded."""
GATHER_SECONDS: Final = 0.001
"""Longest the writer waits for the last group's callers to queue again.

Every caller woken by a commit queues its next event a moment later; without
the wait the writer takes the first one or two, and groups settle at about
half the callers, alternating. A lone caller never waits, and the wait is
never longer than the last journal write took (it is what the wait saves).
"""
ARROW_MIN_ROWS: Final = 1_024
"""From this many rows a load goes in as an Arrow table, below by the appender.

Measured here (DuckDB 2.0): an Arrow insert has about 1 ms more fixed cost
per statement than the appender, which is slower per row (about 400 k
rows/s against 650 k); they break even near 1,000 rows.
"""

# What inserting a backlog can raise: DuckDB's errors, and Arrow's
# (ArrowInvalid is a ValueError, ArrowTypeError a TypeError).
_INSERT_ERRORS: Final = (duckdb.Error, ValueError, TypeError, OverflowError)
_FULL: Final = (errno.ENOSPC, errno.EDQUOT)
_FULL_TEXT: Final = tuple(os.strerror(code) for code in _FULL)


@dataclass(frozen=True, slots=True)
class Opening:
    """What opening the file found and did (what `sniff recover` reports)."""

    version_found: int | None
    """The file's schema version before the open; None for a new file."""
    journal_rows: int
    """Rows a leftover journal held (a service that stopped without closing)."""
    loaded_rows: int
    """Of those, the rows DuckDB lacked and now holds."""
    salvaged: Salvaged | None = None
    """What salvaging a damaged journal did, when it was asked for and needed."""


@dataclass(frozen=True, slots=True)
class Salvaged:
    """A damaged journal salvaged into the log (one row of `salvages`)."""

    moved_to: Path
    """Where the damaged journal now is, kept whole for forensics."""
    damaged_at: int
    """The byte offset of its first damage."""
    loaded: int
    """Intact records the log lacked and now holds."""
    unloadable: int
    """Intact records after the damage that could not be loaded: their match's
    sequence has a hole where the damaged records were."""
    match_ids: tuple[str, ...]
    """Every match that may have lost events."""


@dataclass(frozen=True, slots=True)
class Imported:
    """What `import_matches` did."""

    imported: tuple[str, ...]
    """The matches added, in the order given."""
    present: tuple[str, ...]
    """The matches left out because the log already held their ids."""
    events: int
    """Events added."""


class ImportLoad:
    """The open transaction of an import (`EventLog.importing`): parts go in as they come."""

    def __init__(
        self,
        cursor: duckdb.DuckDBPyConnection,
        reader: duckdb.DuckDBPyConnection,
        stamp: pa.Scalar,
        known: set[str],
        tree: TreeSigner | None = None,
    ) -> None:
        self._cursor = cursor
        self._tree = tree
        self._reader = reader
        self._stamp = stamp
        self._known = known
        self.imported: list[str] = []
        self.present: list[str] = []
        self.events = 0
        self.simulated = 0
        self.discarded = False

    def add(self, table: pa.Table, facts: Facts | None = None) -> None:
        """Insert a part's events (whole matches) and what they make of the typed tables
        and the facts tables (`facts`' rows, or replayed), leaving out the matches the log
        already holds."""
        table = table.select(list(COLUMNS)).cast(arrow_schema())
        ids = [str(m) for m in pc.unique(table.column("match_id")).to_pylist()]
        if not ids:
            return
        present = {
            str(m)
            for (m,) in self._reader.execute(
                _sql.query("known_matches"), {"match_ids": ids}
            ).fetchall()
        } | (self._known & set(ids))
        fresh = [m for m in ids if m not in present]
        if present:
            table = table.filter(pc.is_in(table.column("match_id"), pa.array(fresh, pa.string())))
        table = table.set_column(
            COLUMNS.index("logged_at"),
            "logged_at",
            pc.coalesce(table.column("logged_at"), self._stamp),
        )
        if table.num_rows:
            try:
                with owner_only():
                    _insert_table(self._cursor, table, facts)
                    if self._tree is not None:  # the heads of the matches imported
                        heads = table.filter(pc.is_in(table.column("kind"), _HEAD_KINDS))
                        insert_checkpoints(self._cursor, self._tree.checkpoints(_table_rows(heads)))
            except _INSERT_ERRORS as exc:
                raise _failure("the event log could not import the matches", exc) from exc
        self.imported += fresh
        self.present += [m for m in ids if m in present]
        self.events += table.num_rows

    def add_simulated(
        self,
        run: SimulationRun,
        rules_version: str,
        matches: pa.Table,
        rounds: pa.Table,
        decisions: pa.Table,
    ) -> None:
        """Insert simulated matches stored as facts (`simulated.insert_matches`): the run's
        row if the log lacks it, then the matches' settings, results and facts; no events,
        so no leaf and nothing to sign."""
        try:
            with owner_only():
                insert_run(self._cursor, run)
                insert_matches(self._cursor, run.run_id, rules_version, matches, rounds, decisions)
        except _INSERT_ERRORS as exc:
            raise _failure("the event log could not store the simulated matches", exc) from exc
        self.simulated += matches.num_rows

    def discard(self) -> None:
        """Roll the whole import back when the block ends."""
        self.discarded = True

    def result(self) -> Imported:
        return Imported(tuple(self.imported), tuple(self.present), self.events)


@dataclass(slots=True)
class _Batch:
    """One caller's events, already as rows, the facts of the matches they end (when the
    caller made them), and the future that answers it."""

    events: tuple[LogEvent, ...]
    rows: list[EventRow]
    future: Future[None]
    facts: FactsRows | None = None
    checkpoints: Sequence[Checkpoint] = ()


class EventLog(ReadAccess):
    """The read-write event log, owned by one service process.

    Opening creates the file and its schema if needed, migrates an older
    schema, refuses a file of a newer one (SchemaVersionError) or one held by
    another process (LogLocked). No other process can open the file while it
    is open, so offline tools reach it through the service (see
    `owner.find_owner`). The file, its WAL and journal are mode 0600.

    All methods are safe to call from many threads. Reads (`query`,
    `events_for`, ...) see every event acknowledged before they began.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        sync: bool = True,
        salvage: bool = False,
        signer: SigningKey | None = None,
        threads: int = 1,
    ) -> None:
        """Open (or create) the log at `path`.

        A journal damaged before its last record raises JournalDamaged before
        any file is touched; with `salvage` its intact records are loaded
        instead, the journal is moved aside and the loss is recorded
        (`_salvage`): an explicit choice, never a default.

        With `sync` (the default) an acknowledged append has been fdatasync-ed
        and survives a power loss; without it, an acknowledged append is in
        the operating system's cache and survives a crash or kill of this
        process, but not of the machine.

        With `signer` (the service's key) the log signs: a checkpoint of every
        round and match end it stores (those the caller hands to `append`, or
        made in the load), and a tree head after each load that ends matches
        (docs/evidence.md). At open it signs what a log without the key left
        unsigned. Without it the tree's leaves are still numbered, and nothing
        is signed.

        `threads`: DuckDB's threads for this open (`connect`).
        """
        absolute, self._key = realpath_key(path)
        claim(self._key, write=True)
        try:
            # Before anything is written: a damaged journal refuses the open and stays as it is.
            scan = scan_journal(journal_path(absolute))
            if scan.damaged_at is not None and not salvage:
                raise JournalDamaged(
                    journal_path(absolute), scan.damaged_at, len(scan.after or ()), len(scan.rows)
                )
            if absolute.exists():  # a damaged file is refused before the first byte is written
                first = connect(absolute, read_only=True)
                try:
                    check_whole(first, absolute)
                finally:
                    first.close()
            con = connect(absolute, read_only=False, threads=threads)
        except BaseException:
            release(self._key, write=True)
            raise
        try:
            self._wal_path = Path(f"{absolute}.wal")
            make_private(absolute, self._wal_path)
            private_temp_dir(absolute)
            with owner_only():
                found = open_schema(con, absolute)
                if scan.damaged_at is None:
                    salvaged = None
                    loaded = _load_journal(con, journal_path(absolute), scan.rows)
                else:
                    salvaged = _salvage(con, journal_path(absolute), scan)
                    loaded = salvaged.loaded
                tree = None if signer is None else _sign_at_open(con, signer)
            journal_rows = len(scan.rows) + len(scan.after or ())
            self.opening = Opening(found, journal_rows, loaded, salvaged)
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
        self._wal_id: tuple[int, int] | None = None
        self._wal_size = 0
        self._advertised = False

        # What the holder of _commit_lock owns (protocol step 2).
        self._wcur = writer_cursor
        self._journal = journal
        self._next_seq: dict[str, int] = next_seq
        self._known: set[str] = known
        """Every match id in the log: a new match may not reuse one."""
        self._backlog: list[EventRow] = []
        self._backlog_facts: list[FactsRows] = []
        """The facts callers handed over with the backlog's match ends (loaded with it)."""
        self._backlog_checkpoints: list[Checkpoint] = []
        """The checkpoints callers handed over with the backlog's heads (loaded with it)."""
        self._tree = tree
        self._backlog_since = 0.0
        self._ended: list[str] = []
        """Matches whose end is in the backlog: forgotten once it is loaded."""
        self._load_error: BaseException | None = None
        self._retry_load_at = 0.0
        self._last_group = 0
        self._last_write_seconds = 0.0

        # The holder of _commit_lock owns the state above; the queue is under _cond.
        self._commit_lock = threading.Lock()
        self._cond = threading.Condition()
        self._queue: list[_Batch] = []
        self._closing = False
        self._writer = threading.Thread(
            target=self._run, name=f"event-log-writer:{absolute.name}", daemon=True
        )
        self._writer.start()
        # An interpreter that exits with the log open would kill DuckDB mid-flight
        # (and leave the backlog to the journal): close it first.
        atexit.register(self.close)

    # -- appending -------------------------------------------------------------

    @property
    def signer(self) -> SigningKey | None:
        """The key this log signs with (None: it signs nothing)."""
        return None if self._tree is None else self._tree.key

    def append(
        self,
        events: Sequence[LogEvent],
        facts: FactsRows | None = None,
        checkpoints: Sequence[Checkpoint] = (),
    ) -> None:
        """Append events in the next group commit; return once they are durable.

        `facts`: the facts rows (`sniff.facts.facts_rows`) of the matches these events end,
        made by the caller, who has the match in memory; they go into DuckDB with the
        events. A match that ends without them is replayed when its events are loaded.
        `checkpoints`: those the caller signed (with `signer`) for the heads among the
        events, to store with them; the load signs any head handed over without one.

        Raises why this batch was kept out, whole: DuplicateEvent or
        SequenceGap (the events do not continue their match's sequence),
        LogFull (the disk is full) or StorageError; before queueing it,
        LogClosed after `close()` and TypeError/ValueError for an event the
        log cannot hold. Events of one match must be appended in order (the
        service appends a match's events while holding that match's lock).
        """
        future = self._enqueue(events, facts, checkpoints)
        if self._commit_lock.acquire(blocking=False):
            self._commit_queued()  # nobody else is committing: this thread does
        future.result()

    def _enqueue(
        self,
        events: Iterable[LogEvent],
        facts: FactsRows | None = None,
        checkpoints: Sequence[Checkpoint] = (),
    ) -> Future[None]:
        batch = tuple(events)
        rows = to_rows(batch)
        future: Future[None] = Future()
        with self._cond:
            if self._closing:
                raise LogClosed(f"the event log {self.path} is closed")
            if batch:
                self._queue.append(_Batch(batch, rows, future, facts, checkpoints))
        if not batch:
            future.set_result(None)
        return future

    def _commit_queued(self) -> None:
        """Commit one group (holding `_commit_lock`), release it, then answer the callers."""
        group: list[_Batch] = []
        try:
            with self._cond:
                group = self._take_group()
            answers = self._commit(group)
        except Exception as exc:  # a bug here must not leave callers waiting
            _log.exception("event log commit failed")
            answers = [(batch.future, exc) for batch in group]
        finally:
            self._release()
        _answer(answers)

    def _release(self) -> None:
        """Release `_commit_lock`; wake the writer if work waits that no one else will do."""
        self._commit_lock.release()
        with self._cond:
            if self._queue or len(self._backlog) >= LOAD_ROWS:
                self._cond.notify()

    # -- the writer thread -------------------------------------------------------

    def _run(self) -> None:
        """Commit what is queued and load the backlog when due, until closed."""
        while True:
            with self._cond:
                while not (self._queue or self._closing or self._load_due()):
                    self._cond.wait(self._seconds_to_load())
                self._gather()
                done = self._closing and not self._queue
            self._commit_lock.acquire()
            if self._queue:
                self._commit_queued()  # releases the lock
                continue
            try:
                if done or self._load_due():
                    self._load()
            except Exception:  # the writer must outlive any bug, or every caller hangs
                _log.exception("event log writer failed")
            finally:
                self._commit_lock.release()
            if done:
                return  # closing, and everything queued is written and loaded

    def _gather(self) -> None:
        """Wait a moment for the last group's callers to queue again (under _cond)."""
        want = self._last_group
        if want > 1 and len(self._queue) < want and not self._closing:
            self._cond.wait_for(
                lambda: len(self._queue) >= want or self._closing,
                timeout=min(GATHER_SECONDS, self._last_write_seconds),
            )

    def _take_group(self) -> list[_Batch]:
        """Everything queued, up to MAX_GROUP_ROWS rows (at least one batch)."""
        rows = taken = 0
        for batch in self._queue:
            if taken and rows + len(batch.rows) > MAX_GROUP_ROWS:
                break
            rows += len(batch.rows)
            taken += 1
        group, self._queue = self._queue[:taken], self._queue[taken:]
        if group:  # a caller whose batch another commit took finds nothing
            self._last_group = len(group)
        return group

    def _commit(self, group: list[_Batch]) -> list[tuple[Future[None], BaseException | None]]:
        """Step 2: check each batch's sequence, journal the good ones; each one's answer."""
        answers: list[tuple[Future[None], BaseException | None]] = []
        staged: dict[str, int] = {}
        accepted: list[_Batch] = []
        for batch in group:
            try:
                advanced = self._check_sequence(batch.events, staged)
            except SequenceError as exc:
                answers.append((batch.future, exc))
                continue
            except duckdb.Error as exc:  # looking a finished match up failed
                answers.append((batch.future, _failure("the event log could not commit", exc)))
                continue
            staged.update(advanced)
            accepted.append(batch)
        if not accepted:
            return answers
        now = datetime.now(UTC)
        rows = [
            row if row[-1] is not None else (*row[:-1], now)
            for batch in accepted
            for row in batch.rows
        ]
        began = time.perf_counter()
        try:
            self._journal.write(rows)
        except OSError as exc:
            error = _failure("the event log could not make the events durable", exc)
            return answers + [(batch.future, error) for batch in accepted]
        self._last_write_seconds = time.perf_counter() - began
        if not self._backlog:
            self._backlog_since = time.monotonic()
        self._backlog.extend(rows)
        self._backlog_facts.extend(batch.facts for batch in accepted if batch.facts is not None)
        for batch in accepted:
            self._backlog_checkpoints.extend(batch.checkpoints)
        self._next_seq.update(staged)
        self._known.update(staged)
        # A finished match takes no more events in the normal course; forgetting
        # it (once DuckDB holds its end) keeps memory to the open matches.
        self._ended.extend(r[0] for r in rows if r[2] == "match_ended")
        return answers + [(batch.future, None) for batch in accepted]

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
        next_seq = _sql.scalar(self._wcur, "next_seq_of", {"match_id": match_id})
        return int(next_seq) if next_seq is not None else 0

    def _load_due(self) -> bool:
        now = time.monotonic()
        if now < self._retry_load_at:  # the last load failed: no busy retrying
            return False
        return bool(self._backlog) and (
            len(self._backlog) >= LOAD_ROWS or now - self._backlog_since >= LOAD_SECONDS
        )

    def _seconds_to_load(self) -> float:
        """How long the writer may sleep before a load falls due.

        Read without `_commit_lock` (a caller may be committing), so never
        longer than LOAD_SECONDS: a backlog begun meanwhile waits one more
        period at most.
        """
        if not self._backlog:
            return LOAD_SECONDS
        due = max(self._backlog_since + LOAD_SECONDS, self._retry_load_at)
        return min(LOAD_SECONDS, max(0.0, due - time.monotonic()))

    def _load(self) -> None:
        """Step 3: the backlog into DuckDB (one transaction), then an empty journal."""
        if not self._backlog:
            return
        try:
            with owner_only():  # the commit may create a new WAL
                prepared = _insert(
                    self._wcur,
                    self._backlog,
                    self._backlog_facts,
                    self._load_checkpoints(),
                    self._tree if self._ended else None,
                )
        except _INSERT_ERRORS as exc:
            _log.exception("loading %d journal rows into DuckDB failed", len(self._backlog))
            self._load_error = exc
            self._retry_load_at = time.monotonic() + LOAD_SECONDS
            return
        self._load_error = None
        self._backlog = []  # DuckDB holds it now: never insert it again
        self._backlog_facts = []
        self._backlog_checkpoints = []
        for match_id in self._ended:
            self._next_seq.pop(match_id, None)
        if self._tree is not None and prepared is not None:
            self._tree.adopt(prepared)  # its tree head committed with the load
        self._ended = []
        try:
            self._sync_new_wal()
        except OSError:
            _log.exception("could not sync the WAL's directory: the journal keeps its rows")
            return  # a restart skips the rows DuckDB holds; the next load retries
        try:
            self._journal.clear()
        except OSError:  # the rows stay: a restart skips those DuckDB holds
            _log.exception("could not empty the journal; the next load retries")

    def _load_checkpoints(self) -> list[Checkpoint]:
        """The checkpoints of the backlog's heads: those handed over, else signed now."""
        if self._tree is None:
            return []
        handed = {(c.match_id, c.seq, c.head): c for c in self._backlog_checkpoints}
        made: list[Checkpoint] = []
        for row in self._backlog:
            if row[2] not in HEAD_KINDS or row[HASH] is None:
                continue
            key = (str(row[0]), int(row[1]), bytes(row[HASH]).hex())
            found = handed.get(key)
            made.extend([found] if found is not None else self._tree.checkpoints([row]))
        return made

    def _sign_tree(self) -> None:
        """A signed tree head over the leaves loaded so far (with a key); one that cannot
        be stored now is signed at the next load that ends a match, or the next open."""
        if self._tree is None:
            return
        try:
            with owner_only():
                self._tree.catch_up(self._wcur)
        except (duckdb.Error, StorageError):
            _log.exception("could not store a signed tree head")

    def _sync_new_wal(self) -> None:
        """Make a newly created WAL file's name durable, before the journal is emptied.

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

    # -- reads see every acknowledged event ----------------------------------------

    def flush(self) -> None:
        """Return once DuckDB holds every event acknowledged so far (every read calls it).

        Loads the backlog in this thread. Raises LogFull or StorageError if
        it cannot be loaded (it stays durable in the journal), LogClosed once
        `close()` has begun.
        """
        self._commit_lock.acquire()
        try:
            if self._closing and not self._writer.is_alive():
                raise LogClosed(f"the event log {self.path} is closed")
            self._load()
            if self._backlog:
                raise _failure("the event log could not load its journal", self._load_error)
        finally:
            self._release()

    # -- importing whole matches -------------------------------------------------

    def import_matches(
        self, table: pa.Table, *, verify: bool = True, facts: Facts | None = None
    ) -> Imported:
        """Add whole finished matches in one transaction: all of them, or nothing.

        For `sniff import` (the file itself, or the service's ImportMatches).
        `table` holds every event of each match in order, in the columns of
        `events.arrow_schema()` (`logged_at` may be null: the log stamps it).
        With `verify` (the service's call: the events come from a client)
        each match must be whole and chained (`imports.check_matches`), or
        nothing is written; without it the caller vouches (`sniff import`
        made them itself). A match whose id the log already holds is left
        out: importing twice changes nothing. The events go in as one Arrow
        insert and DuckDB commits once: an interruption at any point (a full
        disk, Ctrl-C) leaves the log as it was.

        The facts of the finished matches (`service.storage.facts`) go in the same
        transaction: `facts`' rows where the caller made them while replaying (`sniff
        import`, `sniff simulate`), else the log replays the matches itself.
        """
        table = table.select(list(COLUMNS)).cast(arrow_schema())
        if verify:
            check_matches(_table_rows(table))
        with self.importing() as load:
            load.add(table, facts)
        return load.result()

    def store_simulated(
        self,
        run: SimulationRun,
        rules_version: str,
        matches: pa.Table,
        rounds: pa.Table,
        decisions: pa.Table,
    ) -> None:
        """A chunk of a facts-only simulation run in one transaction (`ImportLoad.add_simulated`):
        all of it, or nothing."""
        with self.importing() as load:
            load.add_simulated(run, rules_version, matches, rounds, decisions)

    def simulation_run(self, run_id: str) -> SimulationRun | None:
        """The log's row of run `run_id`, or None."""
        with self._cursor() as cursor:
            return read_run(cursor, run_id)

    @contextmanager
    def importing(self) -> Iterator[ImportLoad]:
        """`import_matches` for a file given in parts, as they are made (`sniff import`).

        The block's `ImportLoad.add` takes each part's events (whole matches,
        made and chained by the caller, as `import_matches(verify=False)`);
        they all go into one transaction, open while the block runs, which
        commits when the block ends and rolls back if it raises or calls
        `ImportLoad.discard` (a bad record found after the first parts): all
        or nothing, however many parts. The log takes no other commit meanwhile.
        """
        stamp = pa.scalar(datetime.now(UTC), arrow_schema().field("logged_at").type)
        with self._commit_lock:
            if self._closing:
                raise LogClosed(f"the event log {self.path} is closed")
            self._load()  # the backlog first, so the log's order of commits holds
            if self._backlog:
                raise _failure("the event log could not load its journal", self._load_error)
            cursor = self._wcur
            # The log's own matches are looked up outside the transaction (in what is
            # committed), so each part's lookup does not scan the parts before it.
            with ReadAccess._cursor(self) as reader:
                cursor.execute("BEGIN TRANSACTION")
                load = ImportLoad(cursor, reader, stamp, self._known, self._tree)
                try:
                    yield load
                    if load.discarded:
                        cursor.execute("ROLLBACK")
                        return
                    try:
                        with owner_only():
                            cursor.execute("COMMIT")
                    except _INSERT_ERRORS as exc:
                        raise _failure("the event log could not import the matches", exc) from exc
                except BaseException:
                    with suppress(duckdb.Error):
                        cursor.execute("ROLLBACK")
                    raise
            self._known.update(load.imported)
            if load.imported:
                self._sign_tree()

    @contextmanager
    def _cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        self.flush()
        with super()._cursor() as cursor:
            yield cursor

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
        """Commit everything queued, load it, checkpoint, and release the file.

        After a clean close the file holds everything (no WAL, no journal
        left), so read-only tools open it fast. Safe to call twice. A query
        still running on another thread may fail when the connection goes.
        """
        with self._cond:
            first = not self._closing
            self._closing = True
            self._cond.notify_all()
        self._writer.join()
        if not first:
            return
        atexit.unregister(self.close)
        try:
            with self._commit_lock:  # a read's flush may still hold it
                self._journal.close(remove=not self._backlog)
                with owner_only(), suppress(duckdb.Error):
                    self._wcur.execute("CHECKPOINT")
                with suppress(duckdb.Error):
                    self._wcur.close()
            self._close_connection()
            with suppress(OSError):  # empty unless DuckDB left spill files
                Path(f"{self.path}.tmp").rmdir()
            fsync_dir(self.path.parent)  # the WAL's removal, after the checkpoint
        finally:
            if self._advertised:
                remove_owner(self.path)
            release(self._key, write=True)


def _answer(answers: list[tuple[Future[None], BaseException | None]]) -> None:
    """Resolve the futures, once the commit lock is released: the callers go on."""
    for future, error in answers:
        if future.done():  # failed by an earlier bug report
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)


def _failure(what: str, exc: BaseException | None) -> StorageError:
    """The error a caller sees: LogFull when the disk is full, else StorageError."""
    full = isinstance(exc, OSError) and exc.errno in _FULL
    full = full or (isinstance(exc, duckdb.Error) and any(t in str(exc) for t in _FULL_TEXT))
    if full:
        error: StorageError = LogFull(f"{what}: the disk is full ({exc})")
    else:
        error = StorageError(f"{what}: {exc}" if exc is not None else what)
    error.__cause__ = exc
    return error


def _insert(
    cursor: duckdb.DuckDBPyConnection,
    rows: list[EventRow],
    facts: Sequence[FactsRows] = (),
    checkpoints: Sequence[Checkpoint] = (),
    tree: TreeSigner | None = None,
) -> PreparedHead | None:
    """One transaction: the rows, the settings of the matches they create, the results and
    facts of those they end, the mark of those they deal to explicitly, the checkpoints
    of their heads, and with `tree` a signed tree head over the leaves they add (returned,
    for the caller to `adopt` now that it is committed)."""
    cursor.execute("BEGIN TRANSACTION")
    try:
        insert_rows(cursor, rows, merged_facts(facts) if facts else None)
        insert_checkpoints(cursor, checkpoints)
        prepared = None if tree is None else _prepared_head(tree, cursor)
        cursor.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):
            cursor.execute("ROLLBACK")
        raise
    return prepared


def _prepared_head(tree: TreeSigner, cursor: duckdb.DuckDBPyConnection) -> PreparedHead | None:
    """The load's tree head; none (logged) when the stored leaves are not a tree this signer
    can extend (an edited file): the events still go in, and `sniff audit` says why."""
    try:
        return tree.prepare(cursor)
    except StorageError:
        _log.exception("could not sign a tree head over the loaded leaves")
        return None


def insert_rows(
    cursor: duckdb.DuckDBPyConnection, rows: list[EventRow], facts: Facts | None = None
) -> None:
    """Insert event rows and what they make of the typed tables, in the caller's transaction.

    The facts of the matches the rows end are `facts`' rows; only those `facts` lacks
    are replayed here (a journal loaded after a crash, a caller that made none)."""
    if len(rows) < ARROW_MIN_ROWS:
        appender = cursor.appender("events_all", columns=list(COLUMNS))
        try:
            appender.append_rows(rows)
            appender.flush()
        except BaseException:
            appender.clear()  # nothing of a failed load may be flushed later
            raise
    else:
        _insert_arrow(cursor, "insert_pending_events", "_pending_events", rows_to_arrow(rows))
    _insert_typed(cursor, rows, explicitly_dealt(rows), facts)


def _table_rows(table: pa.Table) -> list[EventRow]:
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return list(zip(*columns, strict=True))


_TYPED_KINDS: Final = pa.array(["match_created", "match_ended"], pa.string())
_HEAD_KINDS: Final = pa.array(list(HEAD_KINDS), pa.string())


def _explicit_deals(table: pa.Table) -> list[str]:
    """`explicitly_dealt` of a table's rows, reading one candidate deal a match: a match
    has many deals, and one given deal is enough (the others only if that one is not)."""
    deals = table.filter(
        pc.and_(
            pc.equal(table.column("kind"), "round_dealt"),
            pc.match_substring(table.column("detail"), '"request"'),
        )
    )
    if not deals.num_rows:
        return []
    ids = deals.column("match_id").to_pylist()
    first: dict[str, int] = {}
    for i, match_id in enumerate(ids):
        first.setdefault(match_id, i)
    found = set(explicitly_dealt(_table_rows(deals.take(list(first.values())))))
    rest = [i for i, match_id in enumerate(ids) if match_id not in found]
    if rest:
        found.update(explicitly_dealt(_table_rows(deals.take(rest))))
    return sorted(found)


def _insert_table(
    cursor: duckdb.DuckDBPyConnection, table: pa.Table, facts: Facts | None = None
) -> None:
    """In the caller's transaction: the events of `table` (logged_at set) and what they
    make of the typed tables. The typed rows come from the few events that make them; the
    facts of the finished matches are `facts`' rows, replayed for those `facts` lacks."""
    _insert_arrow(cursor, "insert_pending_events", "_pending_events", table)
    typed = _table_rows(table.filter(pc.is_in(table.column("kind"), _TYPED_KINDS)))
    _insert_typed(cursor, typed, _explicit_deals(table), facts)


def _insert_typed(
    cursor: duckdb.DuckDBPyConnection,
    typed: Sequence[EventRow],
    explicit: list[str],
    facts: Facts | None,
) -> None:
    """What events make of the typed tables, from the rows among them that make any (their
    creations and ends), the matches dealt to explicitly, and the facts of those they end:
    one derivation, whether the events came as rows or as an Arrow table. The matches they
    end get their leaves in the tree of finished matches here, in their order
    (service/storage/tree.py), so every path that inserts events numbers them alike."""
    settings, results = settings_rows(typed), result_rows(typed)
    if settings:
        _insert_arrow(
            cursor, "insert_pending_settings", "_pending_settings", settings_to_arrow(settings)
        )
    if results:
        _insert_arrow(
            cursor, "insert_pending_results", "_pending_results", results_to_arrow(results)
        )
    if explicit:
        cursor.execute(_sql.query("mark_explicit_deals"), {"match_ids": explicit})
    if results:
        _insert_facts(cursor, [r[0] for r in results], facts)
        insert_leaves(cursor, typed)


def _insert_facts(
    cursor: duckdb.DuckDBPyConnection, ended: Sequence[str], facts: Facts | None
) -> None:
    """The facts of the matches `ended`: `facts`' rows where given, a replay for the rest."""
    given: set[str] = set()
    if facts is not None:
        facts = facts_of(facts, set(ended))
        insert_facts(cursor, facts)
        given = set(match_ids_of(facts))
    lacking = [m for m in ended if m not in given]
    if lacking:
        fill_missing_facts(cursor, lacking)


def _insert_arrow(
    cursor: duckdb.DuckDBPyConnection, query: str, name: str, table: pa.Table
) -> None:
    """Run named statement `query`, which reads `table` registered as `name`."""
    cursor.register(name, table)
    try:
        cursor.execute(_sql.query(query))
    finally:
        with suppress(duckdb.Error):
            cursor.unregister(name)


def _sign_at_open(con: duckdb.DuckDBPyConnection, key: SigningKey) -> TreeSigner:
    """The tree signer of a log opened with a key, having signed (in one transaction) what
    the file holds unsigned: the heads of events a keyless tool or a crash left without a
    checkpoint, and a tree head when some leaves have none of this key."""
    con.execute("BEGIN TRANSACTION")
    try:
        tree = TreeSigner(key, con)
        signed = tree.sign_missing_checkpoints(con)
        head = tree.catch_up(con)
        con.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
    if signed or head is not None:
        _log.info(
            "signed %d checkpoints and %s at open",
            signed,
            "no tree head" if head is None else f"a tree head of {head.tree_size} leaves",
        )
    return tree


def _load_journal(con: duckdb.DuckDBPyConnection, path: Path, rows: list[EventRow]) -> int:
    """Step 4: load the journal rows DuckDB lacks, then empty the journal; how many."""
    if not rows:
        return 0
    missing = unloaded_rows(con, rows)
    if missing:
        con.execute("BEGIN TRANSACTION")
        try:
            missing, chained = chain_journal_rows(con, missing)
            insert_rows(con, missing)
            if chained:
                _insert_arrow(
                    con, "set_chained_at_migration", "_chained_at_migration", chained_table(chained)
                )
            con.execute("COMMIT")
        except BaseException:
            with suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise
        fsync_dir(path.parent)  # a WAL the insert created, before the journal goes
    _log.info("loaded %d of %d journal rows into %s", len(missing), len(rows), path)
    with open(path, "r+b") as handle:
        handle.truncate(0)
    return len(missing)


def _salvage(con: duckdb.DuckDBPyConnection, path: Path, scan: JournalScan) -> Salvaged:
    """Load a damaged journal's intact records, record the loss, move the journal aside.

    Only records that continue their match's gap-free sequence are loaded (a
    match is rebuilt by replaying its events in order; one with a hole cannot
    be); the rest are counted. The load and its `salvages` row commit in one
    transaction before the journal is renamed: a crash in between leaves the
    damaged journal where it was, and salvaging again loads nothing twice.
    """
    assert scan.damaged_at is not None
    candidates = unloaded_rows(con, [*scan.rows, *(scan.after or ())])
    next_seq = {str(m): int(n) for m, n in con.execute(_sql.query("next_seq_of_all")).fetchall()}
    in_play = {str(m) for m, _ in con.execute(_sql.query("next_seq_of_unfinished")).fetchall()}
    kept: list[EventRow] = []
    for row in sorted(candidates, key=lambda r: (str(r[0]), int(r[1]))):
        if row[1] == next_seq.get(row[0], 0):
            kept.append(row)
            next_seq[row[0]] = row[1] + 1
    touched = sorted(in_play | {str(row[0]) for row in (*scan.rows, *(scan.after or ()))})
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    moved_to = path.with_name(f"{path.name}.damaged-{stamp}")
    con.execute("BEGIN TRANSACTION")
    try:
        if kept:
            kept, chained = chain_journal_rows(con, kept)
            insert_rows(con, kept)
            if chained:
                _insert_arrow(
                    con, "set_chained_at_migration", "_chained_at_migration", chained_table(chained)
                )
        con.execute(_sql.script("salvage.sql"))
        con.execute(
            _sql.query("insert_salvage"),
            {
                "journal": str(moved_to),
                "damaged_at": scan.damaged_at,
                "loaded": len(kept),
                "unloadable": len(candidates) - len(kept),
                "match_ids": touched,
            },
        )
        con.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
    os.replace(path, moved_to)
    fsync_dir(path.parent)
    _log.warning(
        "salvaged %s: loaded %d intact records, %d could not be loaded; the journal is at %s",
        path,
        len(kept),
        len(candidates) - len(kept),
        moved_to,
    )
    return Salvaged(
        moved_to, scan.damaged_at, len(kept), len(candidates) - len(kept), tuple(touched)
    )

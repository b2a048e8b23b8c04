"""What the live log and the offline reader share: connecting, the schema
version check, the read-only query guard and the read methods.

Both `EventLog` (the service's read-write owner) and `LogReader` (a
read-only open when no process holds the file) answer queries through this
one class, so a query is refused or allowed by the same rules whether the CLI
reaches the log through the service's Query RPC or opens the file itself.
"""

from __future__ import annotations

import os
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Self, TypeAlias

import duckdb

if TYPE_CHECKING:
    # Imported where used: `query_rows` and the service's own reads need no Arrow.
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

from . import _sql
from .errors import (
    LogClosed,
    LogLocked,
    QueryError,
    ReadOnlyViolation,
    StorageError,
)
from .events import EventRow, LogEvent, from_row
from .files import owner_only
from .migrate import stored_version

Params: TypeAlias = Sequence[Any] | Mapping[str, Any] | None
"""Values for `?`/`$1` placeholders (a sequence) or `$name` ones (a mapping)."""

# Settings for every connection this package opens. External access off means
# no query can read or write files, ATTACH another database, or load
# extensions: a query is a question about the log and nothing else. Locking
# the configuration keeps a query from turning it back on.
_CONFIG: Final[dict[str, str | bool]] = {
    "enable_external_access": False,
    "lock_configuration": True,
}

# Added for the service's read-write open only: its queries share the machine
# with play, so they get one DuckDB thread and bounded memory (and spill).
# DuckDB has these settings per database instance, not per connection (and
# `lock_configuration` forbids changing them later), so they are set here.
# An offline read-only open keeps DuckDB's defaults.
_SERVICE_CONFIG: Final[dict[str, str | bool | int]] = {
    "threads": 1,
    "memory_limit": "1GB",
    "max_temp_directory_size": "1GB",
}

_ALLOWED: Final = frozenset({duckdb.StatementType.SELECT})
# Table functions that are maintenance, not questions; they would otherwise
# run inside a read-only transaction (checkpoint() does).
_REFUSED_FUNCTIONS: Final = frozenset({"checkpoint", "force_checkpoint"})
_SKIPPED_TOKENS: Final = frozenset({duckdb.token_type.comment})
_NAME_TOKENS: Final = frozenset({duckdb.token_type.identifier, duckdb.token_type.keyword})
_ANALYZE: Final = frozenset({"analyze", "analyse"})
_LOCK_PID = re.compile(r"\(PID (\d+)\)")
_FETCH_ROWS: Final = 8192


# -- one open per file per process -------------------------------------------
#
# DuckDB shares one database instance between connections to the same path in
# a process. A second EventLog on that path would share the file silently with
# its own idea of each match's next seq, and a read-only open beside a
# read-write one fails with an obscure configuration error; refuse both here.

_registry_lock = threading.Lock()
_writers: set[str] = set()
_readers: Counter[str] = Counter()


def claim(key: str, write: bool) -> None:
    with _registry_lock:
        if key in _writers or (write and _readers[key]):
            raise LogLocked(f"{key} is already open in this process")
        if write:
            _writers.add(key)
        else:
            _readers[key] += 1


def release(key: str, write: bool) -> None:
    with _registry_lock:
        if write:
            _writers.discard(key)
        else:
            _readers[key] -= 1
            if _readers[key] <= 0:
                del _readers[key]


def connect(path: Path, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Open the file with this package's settings, naming a lock holder's pid.

    A read-write open creates a missing file mode 0600 (files.py).
    """
    try:
        if read_only:
            return duckdb.connect(str(path), read_only=True, config=dict(_CONFIG))
        config: dict[str, str | bool | int | float | list[str]] = dict(_CONFIG)
        config.update(_SERVICE_CONFIG)
        with owner_only():
            return duckdb.connect(str(path), read_only=False, config=config)
    except duckdb.IOException as exc:
        text = str(exc)
        match = _LOCK_PID.search(text)
        if "lock" in text.lower():
            pid = int(match.group(1)) if match else None
            holder = f"process {pid}" if pid is not None else "another process"
            raise LogLocked(f"{path} is held by {holder}", pid) from exc
        raise StorageError(f"cannot open {path}: {text}") from exc
    except duckdb.ConnectionException as exc:
        raise LogLocked(f"{path} is already open in this process: {exc}") from exc


def scalar(con: duckdb.DuckDBPyConnection, name: str, params: Params = None) -> Any:
    """The first value of named query `name`'s one-row result (None if no row).

    Fetches the whole result: DuckDB 2.0 refuses any further work on a
    connection whose last result was not read to the end (fetchone() leaves
    it open), so this package never calls fetchone().
    """
    rows = con.execute(_sql.query(name), params).fetchall()
    return rows[0][0] if rows else None


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


# -- the read-only guard -------------------------------------------------------


class _Token(NamedTuple):
    start: int  # UTF-8 byte offset into the statement
    text: str
    kind: duckdb.token_type


def _tokens(raw: bytes) -> list[_Token]:
    """DuckDB's own tokens of a statement, with their text, comments dropped."""
    spans = duckdb.tokenize(raw.decode())
    ends = [start for start, _ in spans[1:]] + [len(raw)]
    return [
        _Token(start, raw[start:end].decode(errors="replace").strip(), kind)
        for (start, kind), end in zip(spans, ends, strict=True)
        if kind not in _SKIPPED_TOKENS
    ]


def read_only_statement(
    sql: str, parser: duckdb.DuckDBPyConnection | None = None
) -> duckdb.Statement:
    """The one read-only statement in `sql`, parsed by DuckDB's own parser.

    Accepted: SELECT (also WITH, FROM-first, VALUES, DESCRIBE, SHOW,
    SUMMARIZE, which DuckDB parses as SELECT) and EXPLAIN [ANALYZE] of one.
    Everything else raises ReadOnlyViolation before it runs. This is the
    first line only: a statement's type cannot show a data-modifying CTE
    (`WITH x AS (DELETE ... RETURNING *) SELECT ...` parses as SELECT), so
    the query also runs in a READ ONLY transaction with external access off.

    `parser` is a connection to parse with. Without one, DuckDB's module-level
    parser opens its default in-memory database on first use (some 20-50 ms of
    a command's start), so the read methods below pass their own cursor.
    """
    parse = duckdb.extract_statements if parser is None else parser.extract_statements
    try:
        statements = parse(sql)
    except duckdb.Error as exc:
        raise QueryError(str(exc)) from None
    if len(statements) != 1:
        raise ReadOnlyViolation(f"expected exactly one statement, got {len(statements)}")
    statement = statements[0]
    raw = statement.query.encode()
    tokens = _tokens(raw)
    if any(
        token.kind in _NAME_TOKENS and token.text.strip('"').lower() in _REFUSED_FUNCTIONS
        for token in tokens
    ):
        raise ReadOnlyViolation("checkpoints are maintenance, not queries")
    if statement.type == duckdb.StatementType.EXPLAIN:
        _check_explained(raw, tokens, parse)
    elif statement.type not in _ALLOWED:
        raise ReadOnlyViolation(
            f"{statement.type.name} statements are not allowed: the log answers"
            " SELECT (WITH, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN) queries only"
        )
    return statement


def _check_explained(
    raw: bytes, tokens: list[_Token], parse: Callable[[str], list[duckdb.Statement]]
) -> None:
    """EXPLAIN ANALYZE runs its statement, so what it explains must be a read too."""
    rest = tokens[1:]  # tokens[0] is EXPLAIN
    if rest and rest[0].text.lower() in _ANALYZE:
        rest = rest[1:]
    statements = []
    if rest:
        with suppress(duckdb.Error):
            statements = parse(raw[rest[0].start :].decode())
    if len(statements) != 1 or statements[0].type not in _ALLOWED:
        raise ReadOnlyViolation("only EXPLAIN [ANALYZE] of a SELECT is allowed")


_LIKE_ARROW: Final = frozenset(
    {
        "null",
        "boolean",
        "tinyint",
        "smallint",
        "integer",
        "bigint",
        "utinyint",
        "usmallint",
        "uinteger",
        "ubigint",
        "float",
        "double",
        "decimal",
        "varchar",
        "blob",
        "enum",
    }
)
"""Types whose values DuckDB's `fetchall` and Arrow's `to_pylist` give alike (JSON is a
VARCHAR). Not the temporal types: Arrow refuses an infinite DATE or TIMESTAMP and
nanoseconds, which fetchall turns into other values."""


def converts_like_arrow(column_type: duckdb.sqltypes.DuckDBPyType, *, top: bool = False) -> bool:
    """True when DuckDB's own conversion of a `column_type` value equals Arrow's.

    A HUGEINT only at the top of a column (`query_rows` makes it a Decimal,
    as Arrow does); a list or struct when its members' types convert alike.
    """
    kind = column_type.id
    if kind in _LIKE_ARROW or (top and kind == "hugeint"):
        return True
    if kind in ("list", "struct"):
        return all(
            isinstance(member, duckdb.sqltypes.DuckDBPyType) and converts_like_arrow(member)
            for _, member in column_type.children
        )
    return False


def _decimal_at(row: tuple[Any, ...], indexes: Sequence[int]) -> tuple[Any, ...]:
    """The row with the ints at `indexes` (HUGEINT columns) as Decimals, as Arrow gives them."""
    values = list(row)
    for i in indexes:
        if values[i] is not None:
            values[i] = Decimal(values[i])
    return tuple(values)


def _fetched_rows(
    cursor: duckdb.DuckDBPyConnection, batch_rows: int, huge: Sequence[int]
) -> Iterator[list[tuple[Any, ...]]]:
    """An executed cursor's rows by DuckDB's own conversion, `batch_rows` at a time."""
    try:
        while rows := cursor.fetchmany(batch_rows):
            yield [_decimal_at(row, huge) for row in rows] if huge else rows
    except duckdb.Error as exc:
        raise _query_error(exc) from None


def _arrow_rows(
    relation: duckdb.DuckDBPyRelation, batch_rows: int
) -> Iterator[list[tuple[Any, ...]]]:
    """A relation's rows by Arrow's conversion, one record batch at a time."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    try:
        for batch in relation.to_arrow_reader(batch_rows):
            values = [column.to_pylist() for column in batch.columns]
            yield list(zip(*values, strict=True))
    except duckdb.Error as exc:
        raise _query_error(exc) from None
    except pa.ArrowException as exc:
        raise QueryError(str(exc)) from None


def _query_error(exc: duckdb.Error) -> StorageError:
    """A DuckDB error from a user query, as the exception the caller should see."""
    if isinstance(exc, duckdb.PermissionException):
        return ReadOnlyViolation(f"queries may not reach outside the log: {exc}")
    text = str(exc)
    if "read-only" in text and isinstance(
        exc, duckdb.TransactionException | duckdb.InvalidInputException
    ):
        # A write inside our READ ONLY transaction, or on a read-only file.
        return ReadOnlyViolation(f"queries may not change the log: {text}")
    if isinstance(exc, duckdb.InterruptException):
        return QueryError("the query was cancelled (it ran past its time limit)")
    return QueryError(text)


# -- the shared read methods ---------------------------------------------------


class ReadAccess:
    """Read methods over one DuckDB database instance, safe from many threads.

    A DuckDB connection is not thread-safe, so every call takes a fresh cursor
    (a connection of its own to the same instance). DuckDB's MVCC gives each
    one a consistent snapshot while the log's writer thread goes on
    committing.
    """

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection) -> None:
        self.path = path
        self._con: duckdb.DuckDBPyConnection | None = con
        self._con_lock = threading.Lock()

    # -- cursors --

    @contextmanager
    def _cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._plain_cursor() as cursor:
            yield cursor

    @contextmanager
    def _plain_cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of the instance as it is (a subclass's `_cursor` may add views)."""
        with self._con_lock:
            if self._con is None:
                raise LogClosed(f"the event log {self.path} is closed")
            cursor = self._con.cursor()
        try:
            yield cursor
        finally:
            cursor.close()

    @contextmanager
    def _snapshot(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor inside a READ ONLY transaction, rolled back afterwards."""
        with self._cursor() as cursor:
            cursor.execute("BEGIN TRANSACTION READ ONLY")
            try:
                yield cursor
            finally:
                with suppress(duckdb.Error):
                    cursor.execute("ROLLBACK")

    def _read_only(self, sql: str) -> duckdb.Statement:
        """`read_only_statement`, parsed on a cursor of this log (not DuckDB's default one)."""
        with self._plain_cursor() as parser:
            return read_only_statement(sql, parser)

    def _close_connection(self) -> None:
        with self._con_lock:
            con, self._con = self._con, None
        if con is not None:
            con.close()

    @property
    def closed(self) -> bool:
        """True once `close()` has begun; every method then raises LogClosed."""
        return self._con is None

    # -- ad hoc queries --

    def query(self, sql: str, params: Params = None, *, timeout: float | None = None) -> pa.Table:
        """Run one read-only statement with bound `params`; the whole result.

        Raises ReadOnlyViolation for anything that could change the log or
        reach outside it, QueryError for a statement DuckDB rejects or one
        still running after `timeout` seconds.
        """
        import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

        statement = self._read_only(sql)
        with self._snapshot() as cursor, _deadline(cursor, timeout):
            try:
                table = cursor.sql(statement, params=params).to_arrow_table()
            except duckdb.Error as exc:
                raise _query_error(exc) from None
        return table if table is not None else pa.table({})

    def query_rows(
        self,
        sql: str,
        params: Params = None,
        *,
        timeout: float | None = None,
        like_arrow: bool = False,
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Like `query`, the result as column names and rows of Python values.

        DuckDB converts the values itself (`fetchall`), without pyarrow: for
        a caller that wants Python values and a quick start. The same rules
        refuse the same statements as `query`.

        With `like_arrow`, every value is the one `query(...).to_pylist()`
        gives (and the service's Query RPC, which streams Arrow): DuckDB's
        own conversion for a result whose every column has a type where the
        two agree (`converts_like_arrow`), Arrow's for any other result.
        Without it, DuckDB's conversion always: a HUGEINT is an int (Arrow: a
        Decimal), an INTERVAL a timedelta, a MAP a dict, a UUID a UUID, and an
        infinite DATE or TIMESTAMP the largest one Python has (Arrow refuses it).
        """
        statement = self._read_only(sql)
        with self._snapshot() as cursor, _deadline(cursor, timeout):
            try:
                relation = cursor.sql(statement, params=params)
                if relation is None:
                    return [], []
                types = relation.types  # known once bound: nothing has run yet
                if like_arrow and not all(converts_like_arrow(t, top=True) for t in types):
                    table = relation.to_arrow_table()
                    columns = list(table.column_names)
                    values = [column.to_pylist() for column in table.columns]
                    return columns, list(zip(*values, strict=True))
                columns = list(relation.columns)
                rows = relation.fetchall()
            except duckdb.Error as exc:
                raise _query_error(exc) from None
        if like_arrow:
            huge = [i for i, t in enumerate(types) if t.id == "hugeint"]
            if huge:
                rows = [_decimal_at(row, huge) for row in rows]
        return columns, rows

    @contextmanager
    def query_row_stream(
        self,
        sql: str,
        params: Params = None,
        *,
        like_arrow: bool = False,
        batch_rows: int = _FETCH_ROWS,
    ) -> Iterator[tuple[list[str], Iterator[list[tuple[Any, ...]]]]]:
        """Like `query_rows`, the rows streamed: (columns, an iterator of row lists).

        The rows are fetched `batch_rows` at a time as the caller iterates, so
        a result of any size is written in bounded memory; the snapshot lives
        until the `with` block ends. Values as `query_rows` gives them.
        """
        statement = self._read_only(sql)
        with self._snapshot() as cursor:
            try:
                relation = cursor.sql(statement, params=params)
                if relation is None:
                    yield [], iter(())
                    return
                types = relation.types
                columns = list(relation.columns)
            except duckdb.Error as exc:
                raise _query_error(exc) from None
            if like_arrow and not all(converts_like_arrow(t, top=True) for t in types):
                yield columns, _arrow_rows(relation, batch_rows)
                return
            huge = [i for i, t in enumerate(types) if t.id == "hugeint"] if like_arrow else []
            try:  # a relation cannot be fetched from in parts: the cursor's result can
                cursor.execute(statement, params)
            except duckdb.Error as exc:
                raise _query_error(exc) from None
            yield columns, _fetched_rows(cursor, batch_rows, huge)

    def query_batches(
        self,
        sql: str,
        params: Params = None,
        *,
        batch_rows: int = 8192,
        timeout: float | None = None,
        interrupt: QueryInterrupt | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Like `query`, streamed in record batches (for the Query RPC).

        The statement is checked at once; it runs when iteration starts, and
        its snapshot and cursor live until the iterator is exhausted or closed.
        At least one batch comes: an empty result is one empty batch, which
        carries the schema. `interrupt` lets another thread stop the query.
        """
        statement = self._read_only(sql)
        return self._stream(statement, params, batch_rows, timeout, interrupt)

    def _stream(
        self,
        statement: duckdb.Statement,
        params: Params,
        batch_rows: int,
        timeout: float | None,
        interrupt: QueryInterrupt | None,
    ) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

        with self._snapshot() as cursor, _deadline(cursor, timeout):
            if interrupt is not None:
                interrupt.attach(cursor)
            try:
                reader = cursor.sql(statement, params=params).to_arrow_reader(batch_rows)
                if reader is None:
                    return
                empty = True
                for batch in reader:
                    empty = False
                    yield batch
                if empty:
                    yield pa.RecordBatch.from_pylist([], schema=reader.schema)
            except duckdb.Error as exc:
                raise _query_error(exc) from None
            except pa.ArrowException as exc:
                raise QueryError(str(exc)) from None
            finally:
                if interrupt is not None:
                    interrupt.detach()

    # -- the service's own reads --

    def events_for(self, match_id: str) -> list[LogEvent]:
        """Every committed event of one match in seq order: its replay script."""
        with self._cursor() as cursor:
            rows = cursor.execute(_sql.query("events_for"), {"match_id": match_id}).fetchall()
        return [from_row(row) for row in rows]

    def events_by_match(
        self, unfinished_only: bool = False
    ) -> Iterator[tuple[str, list[LogEvent]]]:
        """(match_id, its events in seq order) for every match, in one ordered scan.

        For rebuilding every match at start-up: `events_for` scans the whole
        table once per match (DuckDB has no index it would use for it), this
        scans it once. Matches come in match_id order; the cursor lives until
        the iterator is exhausted or closed.
        """
        with self._cursor() as cursor:
            cursor.execute(_sql.query("events_by_match"), {"unfinished_only": unfinished_only})
            match_id: str | None = None
            events: list[LogEvent] = []
            while rows := cursor.fetchmany(_FETCH_ROWS):
                for row in rows:
                    event = from_row(row)
                    if event.match_id != match_id:
                        if match_id is not None:
                            yield match_id, events
                        match_id, events = event.match_id, []
                    events.append(event)
            if match_id is not None:
                yield match_id, events

    def match_ids(self, unfinished_only: bool = False) -> list[str]:
        """Matches in the order they began; unfinished ones have no match_ended yet."""
        with self._cursor() as cursor:
            rows = cursor.execute(
                _sql.query("match_ids"), {"unfinished_only": unfinished_only}
            ).fetchall()
        return [str(row[0]) for row in rows]

    def count(self) -> int:
        """How many events are committed."""
        with self._cursor() as cursor:
            return int(scalar(cursor, "count"))

    def schema_version(self) -> int:
        """The file's schema version (always `SCHEMA_VERSION` once open)."""
        with self._cursor() as cursor:
            version = stored_version(cursor)
        return version if version is not None else 0

    # -- lifetime --

    def close(self) -> None:
        """Close the connection; later calls raise LogClosed."""
        self._close_connection()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class QueryInterrupt:
    """Lets another thread stop a running query: a caller that went away, a deadline.

    Interrupting before the query starts makes it refuse to start; after it
    ended, does nothing.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cursor: duckdb.DuckDBPyConnection | None = None
        self.interrupted = False

    def interrupt(self) -> None:
        with self._lock:
            self.interrupted = True
            if self._cursor is not None:
                self._cursor.interrupt()

    def attach(self, cursor: duckdb.DuckDBPyConnection) -> None:
        with self._lock:
            if self.interrupted:
                raise QueryError("the query was cancelled before it started")
            self._cursor = cursor

    def detach(self) -> None:
        with self._lock:
            self._cursor = None


@contextmanager
def _deadline(cursor: duckdb.DuckDBPyConnection, timeout: float | None) -> Iterator[None]:
    """Interrupt the cursor's query if it runs past `timeout` seconds."""
    if timeout is None:
        yield
        return
    timer = threading.Timer(timeout, cursor.interrupt)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def realpath_key(path: str | os.PathLike[str]) -> tuple[Path, str]:
    """The path as given (made absolute) and the key that names its file."""
    absolute = Path(path).absolute()
    return absolute, os.path.realpath(absolute)

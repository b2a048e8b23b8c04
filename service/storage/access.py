"""The read methods that the live log and the offline reader share.

Both `EventLog` (the service's read-write owner) and `LogReader` (a
read-only open when no process holds the file) answer queries through
`ReadAccess`, so a query is refused or allowed by the same rules
(read_only.py) whether the CLI reaches the log through the service's Query
RPC or opens the file itself. `QueryInterrupt` lets another thread stop one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from decimal import Decimal
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self

import duckdb

if TYPE_CHECKING:
    # Imported where used: `query_rows` and the service's own reads need no Arrow.
    import pyarrow as pa

from . import _sql
from ._sql import Params
from .errors import LogClosed, QueryError
from .events import LogEvent, from_row
from .migrate import stored_version
from .read_only import query_error, read_only_statement

_FETCH_ROWS: Final = 8192

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
        raise query_error(exc) from None


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
        raise query_error(exc) from None
    except pa.ArrowException as exc:
        raise QueryError(str(exc)) from None


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

    # -- ad hoc queries --

    def query(self, sql: str, params: Params = None, *, timeout: float | None = None) -> pa.Table:
        """Run one read-only statement with bound `params`; the whole result.

        Raises ReadOnlyViolation for anything that could change the log or
        reach outside it, QueryError for a statement DuckDB rejects or one
        still running after `timeout` seconds.
        """
        import pyarrow as pa

        statement = self._read_only(sql)
        with self._snapshot() as cursor, _deadline(cursor, timeout):
            try:
                table = cursor.sql(statement, params=params).to_arrow_table()
            except duckdb.Error as exc:
                raise query_error(exc) from None
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
                raise query_error(exc) from None
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
                raise query_error(exc) from None
            if like_arrow and not all(converts_like_arrow(t, top=True) for t in types):
                yield columns, _arrow_rows(relation, batch_rows)
                return
            huge = [i for i, t in enumerate(types) if t.id == "hugeint"] if like_arrow else []
            try:  # a relation cannot be fetched from in parts: the cursor's result can
                cursor.execute(statement, params)
            except duckdb.Error as exc:
                raise query_error(exc) from None
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
        import pyarrow as pa

        with self._snapshot() as cursor, _deadline(cursor, timeout):
            if interrupt is not None:
                interrupt.attach(cursor)
            try:
                reader = cursor.sql(statement, params=params).to_arrow_reader(batch_rows)
                if reader is None:
                    return
                empty = True
                for batch in reader:
                    if interrupt is not None and interrupt.interrupted:
                        raise QueryError("the query was interrupted")
                    empty = False
                    yield batch
                if empty:
                    yield pa.RecordBatch.from_pylist([], schema=reader.schema)
            except duckdb.Error as exc:
                raise query_error(exc) from None
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
            return int(_sql.scalar(cursor, "count"))

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

    REPEAT_SECONDS = 0.02

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cursor: duckdb.DuckDBPyConnection | None = None
        self._repeating = False
        self.interrupted = False

    def interrupt(self) -> None:
        with self._lock:
            self.interrupted = True
            if self._cursor is None:
                return
            self._cursor.interrupt()
            if not self._repeating:
                self._repeating = True
                threading.Thread(target=self._repeat, daemon=True).start()

    def _repeat(self) -> None:
        """DuckDB drops an interrupt that comes while its cursor runs nothing (after the
        cursor is attached but before the query starts, or between two fetches), and the
        query then runs on: so the interrupt is repeated until the cursor is detached."""
        while True:
            time.sleep(self.REPEAT_SECONDS)
            with self._lock:
                if self._cursor is None:
                    self._repeating = False
                    return
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

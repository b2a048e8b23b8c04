"""Read the event log whether or not a service holds the file.

DuckDB lets only one process open a file once it is open read-write, so a
tool cannot open the log while the service runs. The service advertises
itself in `<db>.owner.json`; a reader then goes through the service's Query
RPC (a consistent MVCC snapshot inside the writer), and opens the file
read-only itself only when no live service holds it.

This module also holds the one client-side encoder of Query parameters and
the one decoder of the Query stream, so every Python caller (the CLI, the
demo, the benchmarks, the tests) reads a result the same way.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import duckdb

from service.storage import (
    LogLocked,
    LogReader,
    Owner,
    StorageError,
    find_owner,
    open_readonly,
)

if TYPE_CHECKING:
    # Imported where used: a read of a file that no service holds needs
    # neither grpc nor the protobuf code, and `query_log_rows` not even pyarrow.
    import pyarrow as pa

    from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
    from service.storage.facts import Facts
    from service.storage.simulated import SimulationRun

T = TypeVar("T")


class NoLog(Exception):
    """There is no event log this tool can read at that path.

    Missing, a directory, not a DuckDB database, a DuckDB database that is
    not an American Sniff event log, or one of another schema version: the
    path is wrong, so the CLI reports it as misuse.
    """


class UnknownMatch(LookupError):
    """A match named by the user (audit, replay, analyze) that the log does not hold: the
    one such error of every offline reader, reported as misuse like NoLog."""


def table_from_stream(replies: Iterable[pb.QueryResponse]) -> pa.Table:
    """The Query RPC's result: its chunks concatenated form one Arrow IPC stream.

    The first chunk always carries the schema, so an empty result is still a
    table with its columns.
    """
    import pyarrow as pa

    # Decoded as the replies arrive: the stream's bytes are never held whole beside the table.
    return pa.ipc.open_stream(io.BufferedReader(_Chunks(replies))).read_all()


def query_parameter(value: Any) -> pb.QueryParameter:
    """One bound value as the Query RPC carries it (None, bool, int64, float or text).

    An int outside 64 bits raises ValueError: the RPC cannot carry it, and
    `analysis.cli.params` refuses it earlier so offline and remote agree.
    """
    from service.rpc.gen.sniff.v1 import sniff_pb2 as pb

    if value is None:
        return pb.QueryParameter(null_value="NULL_VALUE")
    if isinstance(value, bool):
        return pb.QueryParameter(bool_value=value)
    if isinstance(value, int):
        return pb.QueryParameter(int64_value=value)
    if isinstance(value, float):
        return pb.QueryParameter(double_value=value)
    return pb.QueryParameter(string_value=str(value))


def query_service(
    address: str,
    sql: str,
    params: Sequence[Any] = (),
    *,
    token: str,
    timeout: float | None = None,
    tls_ca: str | Path | None = None,
) -> pa.Table:
    """Run a read-only query through a service's Query RPC; the result as one Arrow table.

    `token` is the service's query token (`<db>.owner.json`); `tls_ca` the CA
    certificate to trust when the service speaks TLS (see `analysis.remote.channel`).
    """
    from analysis.remote import channel
    from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
    from service.rpc.gen.sniff.v1 import sniff_pb2_grpc

    request = pb.QueryRequest(sql=sql, parameters=[query_parameter(v) for v in params], token=token)
    with channel(address, tls_ca) as chan:
        stub = sniff_pb2_grpc.SniffServiceStub(chan)
        return table_from_stream(stub.Query(request, timeout=timeout))


def query_log(
    db_path: str | Path, sql: str, params: Sequence[Any] = (), *, tls_ca: str | None = None
) -> tuple[pa.Table, str]:
    """Run a read-only query; return the table and where it was answered (address or 'file').

    Raises NoLog when the path holds no readable event log, the storage
    package's QueryError/ReadOnlyViolation for a refused query on the file,
    and grpc.RpcError when a service refuses it (see `is_rpc_error`).
    """
    return _answer(
        db_path,
        lambda owner: query_service(
            owner.address, sql, params, token=owner.query_token or "", tls_ca=tls_ca
        ),
        lambda reader: reader.query(sql, list(params) or None),
    )


def query_log_rows(
    db_path: str | Path, sql: str, params: Sequence[Any] = (), *, tls_ca: str | None = None
) -> tuple[list[dict[str, Any]], str]:
    """Like `query_log`, the rows as dicts by column name (Arrow's `to_pylist`).

    From a file, DuckDB makes the Python values itself and pyarrow is never
    imported: what `sniff matches` and `sniff replay` need to start quickly.
    Their queries' columns (text, integers, booleans, timestamps with a time
    zone, lists) come out the same either way; a query of other types (a
    HUGEINT, a MAP, an INTERVAL) should use `query_log`.
    """

    def from_file(reader: LogReader) -> list[dict[str, Any]]:
        columns, rows = reader.query_rows(sql, list(params) or None)
        return [dict(zip(columns, row, strict=True)) for row in rows]

    def from_service(owner: Owner) -> list[dict[str, Any]]:
        table = query_service(
            owner.address, sql, params, token=owner.query_token or "", tls_ca=tls_ca
        )
        rows: list[dict[str, Any]] = table.to_pylist()
        return rows

    return _answer(db_path, from_service, from_file)


def query_log_values(
    db_path: str | Path, sql: str, params: Sequence[Any] = (), *, tls_ca: str | None = None
) -> tuple[list[str], list[tuple[Any, ...]], str]:
    """Like `query_log`, the result as column names and rows of the values Arrow gives.

    A file no service holds is read with DuckDB's own conversion when every
    column's type converts as Arrow's does (integers, floats, decimals, text,
    booleans, lists and structs of them: most aggregates), without importing
    pyarrow; any other result, and a service's, through Arrow. So `sniff query`
    writes the same text either way, and starts quickly for the usual question.
    """

    def from_file(reader: LogReader) -> tuple[list[str], list[tuple[Any, ...]]]:
        return reader.query_rows(sql, list(params) or None, like_arrow=True)

    def from_service(owner: Owner) -> tuple[list[str], list[tuple[Any, ...]]]:
        table = query_service(
            owner.address, sql, params, token=owner.query_token or "", tls_ca=tls_ca
        )
        values = [column.to_pylist() for column in table.columns]
        return list(table.column_names), list(zip(*values, strict=True))

    (columns, rows), where = _answer(db_path, from_service, from_file)
    return columns, rows, where


def _answer(
    db_path: str | Path, remote: Callable[[Owner], T], local: Callable[[LogReader], T]
) -> tuple[T, str]:
    """`remote(owner)` when a live service holds the file, else `local(reader)` on the file;
    with where it was answered (the service's address, or 'file')."""
    path = Path(db_path)
    for _ in range(2):
        owner = find_owner(db_path)
        if owner is not None:
            return remote(owner), owner.address
        if not path.exists():
            raise NoLog(f"no event log at {db_path}")
        if path.is_dir():
            raise NoLog(f"{db_path} is a directory, not an event log file")
        try:
            reader = open_readonly(db_path)
        except LogLocked:
            continue  # a service took the file between our two looks: ask it instead
        except (StorageError, OSError, duckdb.Error) as e:
            raise NoLog(_not_a_log(db_path, e)) from None
        try:
            return local(reader), "file"
        finally:
            reader.close()
    raise LogLocked(f"{db_path} is held by a process that does not advertise a service")


def _not_a_log(db_path: str | Path, exc: Exception) -> str:
    """Why the file at db_path is no log we can read, in one line naming it.

    DuckDB raises its own errors for some files that are no database at all
    (a `.jsonl` it would read as JSON, say), not the storage package's.
    """
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, duckdb.Error):
        return f"{db_path} is not a DuckDB event log ({text})"
    return text if str(db_path) in text else f"{db_path}: {text}"


def is_rpc_error(exc: BaseException) -> bool:
    """True for the grpc.RpcError of a service's refusal; False without importing grpc,
    since an RpcError can only come from a process that has imported it."""
    grpc = sys.modules.get("grpc")
    return grpc is not None and isinstance(exc, grpc.RpcError)


# -- reading a whole log, batch by batch ------------------------------------------


class _Chunks(io.RawIOBase):
    """The Query RPC's replies as one readable byte stream (for incremental IPC decoding)."""

    def __init__(self, replies: Iterable[pb.QueryResponse]) -> None:
        super().__init__()
        self._replies = iter(replies)
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        while not self._buffer:
            reply = next(self._replies, None)
            if reply is None:
                return 0
            self._buffer = reply.arrow_ipc
        size = min(len(target), len(self._buffer))
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        return size


class LogSource:
    """One event log, read through its live service or from the file, for many queries.

    `sniff audit` and `sniff export` read a whole log in several queries and
    stream large results; this keeps the file open (or the service's
    address) between them. Use it as a context manager. `remote` is True
    when a service answers: its queries each run within the service's
    time limit (60 s), so large reads are made in parts.
    """

    def __init__(self, db_path: str | Path, *, tls_ca: str | None = None) -> None:
        self.db_path = Path(db_path)
        self.tls_ca = tls_ca
        self._reader: LogReader | None = None
        self._owner: Owner | None = None
        for _ in range(2):
            owner = find_owner(db_path)
            if owner is not None:
                self._owner = owner
                return
            _check_path(self.db_path)
            try:
                self._reader = open_readonly(db_path)
                return
            except LogLocked:
                continue  # a service took the file between our two looks: ask it instead
            except (StorageError, OSError, duckdb.Error) as e:
                raise NoLog(_not_a_log(db_path, e)) from None
        raise LogLocked(f"{db_path} is held by a process that does not advertise a service")

    @property
    def remote(self) -> bool:
        return self._owner is not None

    @property
    def where(self) -> str:
        return "file" if self._owner is None else self._owner.address

    def query(self, sql: str, params: Sequence[Any] = ()) -> pa.Table:
        """The whole result of one read-only query."""
        if self._owner is not None:
            return query_service(
                self._owner.address,
                sql,
                params,
                token=self._owner.query_token or "",
                tls_ca=self.tls_ca,
            )
        assert self._reader is not None
        return self._reader.query(sql, list(params) or None)

    def batches(self, sql: str, params: Sequence[Any] = ()) -> Iterator[pa.RecordBatch]:
        """The result of one read-only query, batch by batch, as it is read."""
        if self._owner is None:
            assert self._reader is not None
            yield from self._reader.query_batches(sql, list(params) or None)
            return
        import pyarrow as pa

        from analysis.remote import channel
        from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
        from service.rpc.gen.sniff.v1 import sniff_pb2_grpc

        request = pb.QueryRequest(
            sql=sql,
            parameters=[query_parameter(v) for v in params],
            token=self._owner.query_token or "",
        )
        with channel(self._owner.address, self.tls_ca) as chan:
            stub = sniff_pb2_grpc.SniffServiceStub(chan)
            # The IPC stream ends inside the last reply, which the service sends only once
            # it has freed the query's place (query_stream._Last): the next query finds it.
            reader = pa.ipc.open_stream(io.BufferedReader(_Chunks(stub.Query(request))))
            yield from reader

    @contextmanager
    def rows(self, sql: str, params: Sequence[Any] = ()) -> Iterator[ResultStream]:
        """The result of one read-only query as its columns and its rows, read as iterated.

        From the file the rows are fetched a batch at a time (DuckDB's own
        conversion where it agrees with Arrow's, without importing pyarrow);
        from a service, the Arrow IPC stream is decoded batch by batch as its
        messages arrive. Either way the result is never held whole, and the
        values are those `query_log_values` gives. A refusal is raised when
        the `with` block is entered, before any row.
        """
        if self._owner is None:
            assert self._reader is not None
            with self._reader.query_row_stream(sql, list(params) or None, like_arrow=True) as (
                columns,
                chunks,
            ):
                yield ResultStream(columns, chain.from_iterable(chunks), "file")
            return
        from analysis.remote import channel
        from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
        from service.rpc.gen.sniff.v1 import sniff_pb2_grpc

        request = pb.QueryRequest(
            sql=sql,
            parameters=[query_parameter(v) for v in params],
            token=self._owner.query_token or "",
        )
        with channel(self._owner.address, self.tls_ca) as chan:
            replies = sniff_pb2_grpc.SniffServiceStub(chan).Query(request)
            try:
                columns, rows = rows_from_stream(replies)
                yield ResultStream(columns, rows, self.where)
            finally:
                replies.cancel()  # a reader that stopped early (`| head`) ends the call

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> LogSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ResultStream(NamedTuple):
    """A query's result as it is read: its column names, its rows, where it was answered."""

    columns: list[str]
    rows: Iterator[tuple[Any, ...]]
    where: str


def rows_from_stream(
    replies: Iterable[pb.QueryResponse],
) -> tuple[list[str], Iterator[tuple[Any, ...]]]:
    """The Query RPC's result as its columns and its rows, decoded as the replies arrive.

    The schema is read at once (the first reply carries it, and a refusal is
    raised here); each record batch is decoded when the rows before it have
    been taken, so no more than a batch or so of the stream is ever held.
    Values as Arrow's `to_pylist` gives them.
    """
    import pyarrow as pa

    reader = pa.ipc.open_stream(io.BufferedReader(_Chunks(replies)))

    def rows() -> Iterator[tuple[Any, ...]]:
        for batch in reader:
            values = [column.to_pylist() for column in batch.columns]
            yield from zip(*values, strict=True)

    return list(reader.schema.names), rows()


@contextmanager
def stream_log_values(
    db_path: str | Path, sql: str, params: Sequence[Any] = (), *, tls_ca: str | None = None
) -> Iterator[ResultStream]:
    """Like `query_log_values`, streamed: the rows are read as the caller iterates them.

    What `sniff query` writes, in memory bounded whatever the result's size,
    from the file or through a service (`LogSource.rows`).
    """
    with LogSource(db_path, tls_ca=tls_ca) as source, source.rows(sql, params) as result:
        yield result


def _check_path(path: Path) -> None:
    if not path.exists():
        raise NoLog(f"no event log at {path}")
    if path.is_dir():
        raise NoLog(f"{path} is a directory, not an event log file")


IMPORT_CHUNK_BYTES = 1 << 20
"""Bytes of Arrow IPC per ImportMatches message (the service's bound)."""


def _ipc_stream(table: pa.Table) -> bytes:
    """A table as the bytes of one Arrow IPC stream."""
    import pyarrow as pa

    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=8192)
    return sink.getvalue()


def import_through_service(
    owner: Owner,
    table: pa.Table,
    *,
    facts: Facts | None = None,
    tls_ca: str | None = None,
    timeout: float | None = None,
) -> pb.ImportMatchesResponse:
    """Send whole matches' events to the service that holds the log (ImportMatches), with
    the facts the caller made for them (the service replays the matches it gets none for).

    Each message carries at most IMPORT_CHUNK_BYTES of one stream: the events first, then
    each facts table."""
    from analysis.remote import channel
    from service.rpc.bounds import FACTS_FIELDS
    from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
    from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
    from service.storage.facts import FactsTables, facts_tables

    streams = [("arrow_ipc", _ipc_stream(table))]
    if facts is not None:
        given = facts if isinstance(facts, FactsTables) else facts_tables(facts)
        parts = (given.matches, given.rounds, given.decisions)
        streams += [
            (n, _ipc_stream(t)) for n, t in zip(FACTS_FIELDS, parts, strict=True) if t.num_rows
        ]

    def requests() -> Iterator[pb.ImportMatchesRequest]:
        token = owner.query_token or ""
        for name, data in streams:
            for start in range(0, max(len(data), 1), IMPORT_CHUNK_BYTES):
                chunk: dict[str, Any] = {name: data[start : start + IMPORT_CHUNK_BYTES]}
                yield pb.ImportMatchesRequest(token=token, **chunk)
                token = ""

    with channel(owner.address, tls_ca) as chan:
        stub = sniff_pb2_grpc.SniffServiceStub(chan)
        reply: pb.ImportMatchesResponse = stub.ImportMatches(requests(), timeout=timeout)
        return reply


def store_through_service(
    owner: Owner,
    run: SimulationRun,
    matches: pa.Table,
    rounds: pa.Table,
    decisions: pa.Table,
    *,
    tls_ca: str | None = None,
    timeout: float | None = None,
) -> int:
    """Send a chunk of a facts-only simulation run to the service that holds the log
    (StoreSimulated); how many matches it stored. Each message carries at most
    IMPORT_CHUNK_BYTES of one of the three streams."""
    from analysis.remote import channel
    from service.rpc.bounds import STORE_FIELDS
    from service.rpc.convert import simulation_run_pb
    from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
    from service.rpc.gen.sniff.v1 import sniff_pb2_grpc

    streams = [
        (name, _ipc_stream(table))
        for name, table in zip(STORE_FIELDS, (matches, rounds, decisions), strict=True)
    ]

    def requests() -> Iterator[pb.StoreSimulatedRequest]:
        first = True
        for name, data in streams:
            for start in range(0, max(len(data), 1), IMPORT_CHUNK_BYTES):
                msg = pb.StoreSimulatedRequest()
                setattr(msg, name, data[start : start + IMPORT_CHUNK_BYTES])
                if first:  # the token and the run go in the first message only
                    msg.token = owner.query_token or ""
                    msg.run.CopyFrom(simulation_run_pb(run))
                    first = False
                yield msg

    with channel(owner.address, tls_ca) as chan:
        stub = sniff_pb2_grpc.SniffServiceStub(chan)
        reply: pb.StoreSimulatedResponse = stub.StoreSimulated(requests(), timeout=timeout)
        return int(reply.matches)

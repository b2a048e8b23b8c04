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

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import grpc
import pyarrow as pa

from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from service.storage import LogLocked, StorageError, find_owner, open_readonly


class NoLog(Exception):
    """There is no event log this tool can read at that path.

    Missing, a directory, not a DuckDB database, a DuckDB database that is
    not an American Sniff event log, or one of another schema version: the
    path is wrong, so the CLI reports it as misuse.
    """


def table_from_stream(replies: Iterable[pb.QueryResponse]) -> pa.Table:
    """The Query RPC's result: its chunks concatenated form one Arrow IPC stream.

    The first chunk always carries the schema, so an empty result is still a
    table with its columns.
    """
    data = b"".join(reply.arrow_ipc for reply in replies)
    return pa.ipc.open_stream(data).read_all()


def query_parameter(value: Any) -> pb.QueryParameter:
    """One bound value as the Query RPC carries it (None, bool, int64, float or text).

    An int outside 64 bits raises ValueError: the RPC cannot carry it, and
    `analysis.cli.params` refuses it earlier so offline and remote agree.
    """
    if value is None:
        return pb.QueryParameter(null_value=0)
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
) -> pa.Table:
    """Run a read-only query through a service's Query RPC; the result as one Arrow table.

    `token` is the service's query token (`<db>.owner.json`).
    """
    request = pb.QueryRequest(sql=sql, parameters=[query_parameter(v) for v in params], token=token)
    with grpc.insecure_channel(address) as channel:
        stub = sniff_pb2_grpc.SniffServiceStub(channel)
        return table_from_stream(stub.Query(request, timeout=timeout))


def query_log(db_path: str | Path, sql: str, params: Sequence[Any] = ()) -> tuple[pa.Table, str]:
    """Run a read-only query; return the table and where it was answered (address or 'file').

    Raises NoLog when the path holds no readable event log, the storage
    package's QueryError/ReadOnlyViolation for a refused query on the file,
    and grpc.RpcError when a service refuses it.
    """
    path = Path(db_path)
    for _ in range(2):
        owner = find_owner(db_path)
        if owner is not None:
            table = query_service(owner.address, sql, params, token=owner.query_token or "")
            return table, owner.address
        if not path.exists():
            raise NoLog(f"no event log at {db_path}")
        if path.is_dir():
            raise NoLog(f"{db_path} is a directory, not an event log file")
        try:
            reader = open_readonly(db_path)
        except LogLocked:
            continue  # a service took the file between our two looks: ask it instead
        except (StorageError, OSError) as e:
            text = str(e)
            raise NoLog(text if str(db_path) in text else f"{db_path}: {text}") from None
        try:
            return reader.query(sql, list(params) or None), "file"
        finally:
            reader.close()
    raise LogLocked(f"{db_path} is held by a process that does not advertise a service")

"""Read the event log whether or not a service holds the file.

DuckDB lets only one process open a file once it is open read-write, so a
tool cannot open the log while the service runs. The service advertises
itself in `<db>.owner.json`; a reader then goes through the service's Query
RPC (a consistent MVCC snapshot inside the writer), and opens the file
read-only itself only when no live service holds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from service.storage import LogLocked, find_owner, open_readonly


class NoLog(Exception):
    """There is no event log at that path."""


def query_log(db_path: str | Path, sql: str, params: Sequence[Any] = ()) -> tuple[pa.Table, str]:
    """Run a read-only query; return the table and where it was answered (address or 'file')."""
    for _ in range(2):
        owner = find_owner(db_path)
        if owner is not None:
            # Imported here: gRPC costs a tenth of a second to load, which a
            # command reading a file no service holds should not pay.
            from analysis.remote import query_remote

            table = query_remote(owner.address, sql, params, token=owner.query_token or "")
            return table, owner.address
        if not Path(db_path).exists():
            raise NoLog(f"no event log at {db_path}")
        try:
            reader = open_readonly(db_path)
        except LogLocked:
            continue  # a service took the file between our two looks: ask it instead
        try:
            return reader.query(sql, list(params) or None), "file"
        finally:
            reader.close()
    raise LogLocked(f"{db_path} is held by a process that does not advertise a service")

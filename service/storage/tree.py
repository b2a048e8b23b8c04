"""The log's tree of finished matches: its leaves, signed tree heads and checkpoints.

Why here, in the storage layer: a leaf is numbered when its match's end goes
into DuckDB, in the transaction that inserts it, whatever inserted it (the
served matches' loads, journal recovery, a salvage, an import, a simulation,
a migration), so the tree's order is the order the file took the match ends
and no path can leave a match without its leaf or give it two. The formats
are docs/evidence.md's and `service.evidence`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from typing import Final

import duckdb
import pyarrow as pa

from . import _sql
from .events import HASH, EventRow

__all__ = ["insert_leaves"]

_LEAF_SCHEMA: Final = pa.schema(
    [
        ("ord", pa.int64()),
        ("match_id", pa.string()),
        ("seq", pa.int64()),
        ("head", pa.string()),
    ]
)


def insert_leaves(cursor: duckdb.DuckDBPyConnection, rows: Sequence[EventRow]) -> None:
    """The leaves of the matches whose match_ended events are among `rows`, in their order,
    in the caller's transaction (a match with a leaf already gets no second one)."""
    ended = [r for r in rows if r[2] == "match_ended" and r[HASH] is not None]
    if not ended:
        return
    table = pa.table(
        [
            pa.array(range(len(ended)), pa.int64()),
            pa.array([str(r[0]) for r in ended], pa.string()),
            pa.array([int(r[1]) for r in ended], pa.int64()),
            pa.array([bytes(r[HASH]).hex() for r in ended], pa.string()),  # type: ignore[arg-type]
        ],
        schema=_LEAF_SCHEMA,
    )
    cursor.register("_pending_leaves", table)
    try:
        cursor.execute(_sql.query("insert_pending_leaves"))
    finally:
        with suppress(duckdb.Error):
            cursor.unregister("_pending_leaves")

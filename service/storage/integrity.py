"""Whether a DuckDB file is whole before anyone trusts or writes it.

A log file cut short (a copy that stopped half way, a disk that filled while
it was copied) may still open: DuckDB reads its header and its metadata, and
the damage shows only when a query reaches a missing block, or never, if a
read-write open writes there first. So before the file is trusted, the
highest block anything in it points at (its metadata and every table's column
segments) must lie inside the file, and so must as many blocks as the file
says are in use (which also covers its indexes' blocks, which DuckDB does not
list); a file that ends before either is refused,
before any byte is written, with one line that names it and what is wrong.

The header's own block count is no measure: DuckDB counts the free blocks at
the end of a file in it and then truncates them away on close, so a whole file
is routinely shorter than its header's count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import duckdb

from . import _sql
from .errors import DamagedLog

HEADER_BYTES: Final = 3 * 4096
"""DuckDB's file header and its two database headers, before the first block."""


def highest_block(con: duckdb.DuckDBPyConnection) -> int:
    """The highest block of the open file that its metadata or a table points at (-1: none)."""
    highest = _sql.scalar(con, "highest_metadata_block")
    found = [-1 if highest is None else int(highest)]
    for (table,) in con.execute(_sql.query("log_tables")).fetchall():
        block = _sql.scalar(con, "highest_table_block", [table])
        if block is not None:
            found.append(int(block))
    return max(found)


def check_whole(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Refuse (DamagedLog) a file that ends before a block it points at."""
    rows = con.execute(_sql.query("database_blocks_used")).fetchall()
    if not rows:
        return
    block_size, used = (int(v) for v in rows[0])
    blocks = max(highest_block(con) + 1, used)
    expected = HEADER_BYTES + block_size * blocks
    size = path.stat().st_size
    if size < expected:
        raise DamagedLog(
            f"{path} is cut short: {size:,} bytes where the {blocks:,} blocks it uses"
            f" need {expected:,}; it was not opened for writing and nothing was changed:"
            " restore it from a copy"
        )

"""Whether a DuckDB file is whole before anyone trusts or writes it.

A log file cut short (a copy that stopped half way, a disk that filled while
it was copied) still opens: DuckDB reads its header, and reads past the end of
the file come back as zeros, so queries answer wrongly without an error and a
read-write open writes into it. The file's own header says how many blocks it
holds; a file shorter than those blocks is refused here, before any byte is
written, with one line that names it and what is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import duckdb

from . import _sql
from .errors import DamagedLog

HEADER_BYTES: Final = 3 * 4096
"""DuckDB's file header and its two database headers, before the first block."""


def check_whole(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Refuse (DamagedLog) a file shorter than the blocks its header counts."""
    rows = con.execute(_sql.query("database_blocks")).fetchall()
    if not rows:
        return
    block_size, total_blocks = (int(v) for v in rows[0])
    expected = HEADER_BYTES + block_size * total_blocks
    size = path.stat().st_size
    if size < expected:
        raise DamagedLog(
            f"{path} is cut short: {size:,} bytes where its header counts"
            f" {total_blocks:,} blocks ({expected:,} bytes); it was not opened for writing"
            " and nothing was changed: restore it from a copy"
        )

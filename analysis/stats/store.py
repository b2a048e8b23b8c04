"""Where the facts live for the statistics: typed DuckDB tables, or Parquet files of them.

A `FactsStore` is one DuckDB connection in which `match_facts`, `round_facts`
and `sniff_decisions` exist: the event log file's own tables, read in place when no process
holds the file (`from_log`: nothing is copied, so a million-match run is summarised at the
speed DuckDB reads its file); the typed tables of the event log's `facts.sql` in memory
(filled from records by replaying matches, or with the facts a live service streams); or
views over a directory of Parquet facts (`DIR/match_facts/*.parquet`, …), the layout
`sniff stats facts` saves.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

import duckdb
import pyarrow as pa

from service.storage.facts import TABLES, facts_schema, insert_facts
from sniff.facts import FactsRows

STATS_MEMORY: Final = "2GB"
"""DuckDB's memory for statistics read in place: a million matches' fit (about 1 GB), a
larger run spills."""


class StatsError(Exception):
    """Bad input for a statistic: a file that cannot be read, a filter that selects nothing.

    The message is one plain line for the user."""


class FactsStore:
    """A DuckDB connection holding the three facts tables (or views of them)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        on_close: Callable[[], None] | None = None,
        configure: bool = True,
    ) -> None:
        self.con = con
        self._on_close = on_close
        if configure:  # a log's own connection comes with its configuration locked
            con.execute("SET enable_progress_bar = false").fetchall()

    @classmethod
    def from_log(cls, db_path: str | Path) -> FactsStore | None:
        """The log file's facts tables read in place, through a read-only open (the log's
        query rules: no file access, no writes; temporary tables are allowed); None when a
        live service holds the file (its facts are then read through the service). The
        open's memory is bounded (`STATS_MEMORY`; beyond it DuckDB spills to a private
        temporary directory, removed on close), so a ten-million-match run is summarised
        in bounded memory."""
        from service.storage import LogLocked, StorageError, find_owner, open_readonly
        from service.storage.connect import Spill
        from service.storage.reader import LogReader

        if find_owner(db_path) is not None:
            return None
        spill = Spill(STATS_MEMORY, Path(tempfile.mkdtemp(prefix="sniff-stats-")))

        def close(reader: LogReader | None = None) -> None:
            if reader is not None:
                reader.close()
            shutil.rmtree(spill.directory, ignore_errors=True)

        try:
            reader = open_readonly(db_path, spill)
        except LogLocked:
            close()
            return None
        except (StorageError, OSError, duckdb.Error) as e:
            close()
            raise StatsError(str(e)) from None
        try:
            cursor = reader.read_cursor()
        except BaseException:
            close(reader)
            raise
        return cls(cursor, on_close=lambda: close(reader), configure=False)

    @classmethod
    def in_memory(cls) -> FactsStore:
        con = duckdb.connect()
        con.execute(facts_schema())
        return cls(con)

    @classmethod
    def from_parquet(cls, directory: str | Path) -> FactsStore:
        """Views over the Parquet facts under `directory` (one subdirectory per table)."""
        root = Path(directory)
        if not root.is_dir():
            raise StatsError(f"no facts directory at {root}")
        con = duckdb.connect()
        for table in TABLES:
            files = sorted((root / table).glob("*.parquet"))
            if not files:
                raise StatsError(f"{root} holds no {table} Parquet files ({table}/*.parquet)")
            # A view cannot bind parameters: the glob goes in as an escaped string literal.
            glob = _sql_path(root.resolve() / table / "*.parquet")
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{glob}')").fetchall()
        return cls(con)

    def add(self, rows: FactsRows) -> None:
        """Insert a batch of facts rows (from `facts_rows`) into the typed tables."""
        insert_facts(self.con, rows)

    def add_batches(self, table: str, batches: Iterable[pa.RecordBatch]) -> None:
        """Insert Arrow batches of one facts table as read from the event log."""
        if table not in TABLES:
            raise ValueError(table)
        for batch in batches:
            self.con.register("_facts_batch", batch)
            try:
                self.con.execute(
                    f"INSERT INTO {table} BY NAME SELECT * FROM _facts_batch"
                ).fetchall()
            finally:
                self.con.unregister("_facts_batch")

    def write_parquet(self, directory: str | Path, part: str | None = None) -> Path:
        """Write every table as one Parquet file per table under `directory`; a part written
        again under the same name replaces the earlier one instead of duplicating it."""
        root = Path(directory)
        name = part or uuid.uuid4().hex
        for table in TABLES:
            (root / table).mkdir(parents=True, exist_ok=True)
            target = root / table / f"{name}.parquet"
            tmp = target.with_suffix(".parquet.tmp")
            self.con.execute(
                f"COPY (SELECT * FROM {table}) TO '{_sql_path(tmp)}' (FORMAT parquet)"
            ).fetchall()
            tmp.replace(target)
        return root

    def count(self, table: str) -> int:
        if table not in TABLES:
            raise ValueError(table)
        return int(self.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])

    def close(self) -> None:
        self.con.close()
        if self._on_close is not None:
            self._on_close()


def _sql_path(path: Path) -> str:
    """A file path as a SQL string literal's body (COPY … TO and views bind no parameter)."""
    return str(path).replace("'", "''")

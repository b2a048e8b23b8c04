"""A log file's schema: created for a new file, brought up to date for an older one.

`SCHEMA_VERSION` is the version this code writes. Opening a file read-write
runs, in ONE transaction (a file is migrated whole or not at all):

- a new file: schema.sql and facts.sql, which create the tables at `SCHEMA_VERSION`;
- a file of an older version N: the steps `MIGRATIONS[N]`,
  `MIGRATIONS[N + 1]`, ... each a .sql file that moves the file one version
  up and sets schema_version, followed by `FINISHERS[N]` where a step needs
  work SQL cannot do (the hash chain of the events of version 2, the facts
  of the finished matches of version 3, which need the engine);
- then views.sql, which replaces every view with this release's.

A file of a newer version (or another program's DuckDB file) is refused
before anything runs. A read-only open never migrates: it refuses an older
file and says how to upgrade it (`sniff recover`).

To add version N + 1: write migrate_N_to_N+1.sql, add it to `MIGRATIONS`,
change schema.sql (and views.sql) to what a new file gets, bump
`SCHEMA_VERSION`, and test the step from a file of version N.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Final

import duckdb

from . import _sql, chain
from .errors import SchemaVersionError
from .events import HASH, EventRow

if TYPE_CHECKING:
    # Imported where used: reading a file's version (every open) needs neither.
    import pyarrow as pa

SCHEMA_VERSION: Final = 7
"""The schema version this code writes; schema.sql creates exactly this one."""

MIGRATIONS: Final[dict[int, str]] = {
    1: "migrate_1_to_2.sql",
    2: "migrate_2_to_3.sql",
    3: "migrate_3_to_4.sql",
    4: "migrate_4_to_5.sql",
    5: "migrate_5_to_6.sql",
    6: "migrate_6_to_7.sql",
}
"""From version N (the key), the script that makes a file version N + 1."""

LEGACY_BATCH_MATCHES: Final = 5_000
"""Matches whose legacy chain is made and written back at once (bounds the memory used)."""


def chain_legacy_events(con: duckdb.DuckDBPyConnection) -> None:
    """Chain every event that has no hash yet, per match in seq order, without a secret.

    The events of a file older than version 3 were written before the chain
    existed, so their chain can only be made now, at migration, and with no
    secret (none was ever given to their players): `chain.link` with secret
    None (docs/chain.md, the legacy link). Each match records how many of
    its events were chained so (`chained_at_migration`), which the audit
    reports. Runs inside the migration's transaction.
    """
    # One connection (the transaction's), and every result read to its end
    # before the next statement: matches in chunks, looked up by the index.
    matches = [str(m) for (m,) in con.execute(_sql.query("unchained_matches")).fetchall()]
    counts: dict[str, int] = {}
    for start in range(0, len(matches), LEGACY_BATCH_MATCHES):
        chunk = matches[start : start + LEGACY_BATCH_MATCHES]
        rows = con.execute(_sql.query("unchained_events"), {"match_ids": chunk}).fetchall()
        ids: list[str] = []
        seqs: list[int] = []
        hashes: list[bytes] = []
        match_id: str | None = None
        previous = chain.GENESIS
        for row in rows:
            if row[0] != match_id:
                match_id, previous = row[0], chain.GENESIS
            previous = chain.link(previous, None, chain.row_content(row))
            ids.append(row[0])
            seqs.append(row[1])
            hashes.append(previous)
            counts[row[0]] = counts.get(row[0], 0) + 1
        _write_hashes(con, ids, seqs, hashes)
    if counts:
        con.register("_chained_at_migration", chained_table(counts))
        try:
            con.execute(_sql.query("set_chained_at_migration"))
        finally:
            con.unregister("_chained_at_migration")


def chained_table(counts: dict[str, int]) -> pa.Table:
    """(match_id, chained): how many leading events of each match have a legacy chain."""
    import pyarrow as pa

    return pa.table(
        {
            "match_id": pa.array(list(counts), pa.string()),
            "chained": pa.array(list(counts.values()), pa.int32()),
        }
    )


def chain_journal_rows(
    con: duckdb.DuckDBPyConnection, rows: list[EventRow]
) -> tuple[list[EventRow], dict[str, int]]:
    """Rows of a journal that a release before version 3 left, chained (legacy) on from the file.

    Such rows have no hash; they are events written before the chain
    existed, chained now like the file's own at migration. Returns the rows
    and, per match concerned, how many of its leading events have a legacy
    chain. Rows that carry a hash are returned as they are.
    """
    bare = sorted({row[0] for row in rows if row[HASH] is None})
    if not bare:
        return rows, {}
    found = con.execute(_sql.query("last_hashes"), {"match_ids": bare}).fetchall()
    heads = {str(m): bytes(h) if h is not None else chain.GENESIS for m, _, h in found}
    out: list[EventRow] = []
    counts: dict[str, int] = {}
    for row in rows:
        if row[HASH] is not None:
            out.append(row)
            continue
        link = chain.link(heads.get(row[0], chain.GENESIS), None, chain.row_content(row))
        heads[row[0]] = link
        counts[row[0]] = max(counts.get(row[0], 0), row[1] + 1)
        out.append((*row[:HASH], link, *row[HASH + 1 :]))  # type: ignore[arg-type]
    return out, counts


def _write_hashes(
    con: duckdb.DuckDBPyConnection, ids: list[str], seqs: list[int], hashes: list[bytes]
) -> None:
    if not ids:
        return
    import pyarrow as pa

    table = pa.table(
        {
            "match_id": pa.array(ids, pa.string()),
            "seq": pa.array(seqs, pa.int32()),
            "hash": pa.array(hashes, pa.binary()),
        }
    )
    con.register("_legacy_hashes", table)
    try:
        con.execute(_sql.query("set_legacy_hashes"))
    finally:
        con.unregister("_legacy_hashes")


def _fill_facts(con: duckdb.DuckDBPyConnection) -> None:
    """The facts of every finished match of a version-3 file, by replaying it."""
    from .facts import fill_missing_facts  # the engine: only a migration replays matches

    fill_missing_facts(con)


FINISHERS: Final[dict[int, Callable[[duckdb.DuckDBPyConnection], None]]] = {
    2: chain_legacy_events,
    3: _fill_facts,
}
"""From version N, what runs after MIGRATIONS[N]'s script, in the same transaction."""


def stored_version(con: duckdb.DuckDBPyConnection) -> int | None:
    """The file's schema version; None for a file with no tables at all.

    Raises SchemaVersionError for a database that has tables but no version,
    which is some other program's file.
    """
    if _sql.scalar(con, "schema_version_table_exists"):
        version = _sql.scalar(con, "schema_version")
        if version is not None:
            return int(version)
    if _sql.scalar(con, "user_table_count"):
        raise SchemaVersionError("this DuckDB file is not an American Sniff event log")
    return None


def _refuse_newer(version: int, path: Path) -> None:
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{path} has event log schema version {version}; this release reads"
            f" only versions up to {SCHEMA_VERSION}: upgrade american-sniff"
        )
    missing = [v for v in range(version, SCHEMA_VERSION) if v not in MIGRATIONS]
    if missing:
        raise SchemaVersionError(
            f"{path} has event log schema version {version}, older than"
            f" {SCHEMA_VERSION}, and no migration from version {missing[0]} exists"
        )


def check_readable(version: int | None, path: Path) -> None:
    """Refuse, for a read-only open, any version but ours, saying what to do."""
    if version == SCHEMA_VERSION:
        return
    if version is None:
        raise SchemaVersionError(f"{path} has no event log schema")
    _refuse_newer(version, path)
    raise SchemaVersionError(
        f"{path} has event log schema version {version}; a read-only open does not"
        f" upgrade it to {SCHEMA_VERSION}: run `sniff recover --db {path}` (on a copy,"
        " if the file is evidence to keep as it is)"
    )


def open_schema(con: duckdb.DuckDBPyConnection, path: Path) -> int | None:
    """Create, migrate and refresh the schema in one transaction; the version found.

    Returns None for a new file. Raises SchemaVersionError, changing
    nothing, for a newer or foreign file.
    """
    version = stored_version(con)
    if version is not None:
        _refuse_newer(version, path)
    steps = [] if version is None else list(range(version, SCHEMA_VERSION))
    con.execute("BEGIN TRANSACTION")
    try:
        if version is None:
            con.execute(_sql.script("schema.sql"))
            con.execute(_sql.script("facts.sql"))
        for step in steps:
            con.execute(_sql.script(MIGRATIONS[step]))
            finisher = FINISHERS.get(step)
            if finisher is not None:
                finisher(con)
        con.execute(_sql.script("views.sql"))
        con.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
    found = stored_version(con)
    if found != SCHEMA_VERSION:  # schema.sql or a step disagrees with SCHEMA_VERSION
        raise SchemaVersionError(f"{path}: the schema scripts left version {found}")
    return version

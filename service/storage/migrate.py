"""A log file's schema: created for a new file, brought up to date for an older one.

`SCHEMA_VERSION` is the version this code writes. Opening a file read-write
runs, in ONE transaction (a file is migrated whole or not at all):

- a new file: schema.sql, which creates the tables at `SCHEMA_VERSION`;
- a file of an older version N: the steps `MIGRATIONS[N]`,
  `MIGRATIONS[N + 1]`, ... each a .sql file that moves the file one version
  up and sets schema_version;
- then views.sql, which replaces every view with this release's.

A file of a newer version (or another program's DuckDB file) is refused
before anything runs. A read-only open never migrates: it refuses an older
file and says how to upgrade it (`sniff recover`).

To add version N + 1: write migrate_N_to_N+1.sql, add it to `MIGRATIONS`,
change schema.sql (and views.sql) to what a new file gets, bump
`SCHEMA_VERSION`, and test the step from a file of version N.
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import Any, Final

import duckdb

from . import _sql
from .errors import SchemaVersionError

SCHEMA_VERSION: Final = 2
"""The schema version this code writes; schema.sql creates exactly this one."""

MIGRATIONS: Final[dict[int, str]] = {1: "migrate_1_to_2.sql"}
"""From version N (the key), the script that makes a file version N + 1."""


def _scalar(con: duckdb.DuckDBPyConnection, name: str) -> Any:
    rows = con.execute(_sql.query(name)).fetchall()  # fetchall: see _base.scalar
    return rows[0][0] if rows else None


def stored_version(con: duckdb.DuckDBPyConnection) -> int | None:
    """The file's schema version; None for a file with no tables at all.

    Raises SchemaVersionError for a database that has tables but no version,
    which is some other program's file.
    """
    if _scalar(con, "schema_version_table_exists"):
        version = _scalar(con, "schema_version")
        if version is not None:
            return int(version)
    if _scalar(con, "user_table_count"):
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
    steps = (
        ["schema.sql"]
        if version is None
        else [MIGRATIONS[v] for v in range(version, SCHEMA_VERSION)]
    )
    con.execute("BEGIN TRANSACTION")
    try:
        for step in [*steps, "views.sql"]:
            con.execute(_sql.script(step))
        con.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
    found = stored_version(con)
    if found != SCHEMA_VERSION:  # schema.sql or a step disagrees with SCHEMA_VERSION
        raise SchemaVersionError(f"{path}: the schema scripts left version {found}")
    return version

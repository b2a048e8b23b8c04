"""SQL text lives in .sql files beside this module; this only loads it (and runs a named
query for its one value: `scalar`).

Keeping DDL and queries out of Python means they can be read, reviewed and
tried in the DuckDB shell as they are, and Python never builds SQL text: it
binds values only. The one exception is `with_catalog`, which pastes the
name of the open file's catalog (an identifier, which no placeholder can
stand for), quoted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import duckdb

Params: TypeAlias = Sequence[Any] | Mapping[str, Any] | None
"""Values for `?`/`$1` placeholders (a sequence) or `$name` ones (a mapping)."""

_NAME = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)


def _text(filename: str) -> str:
    return resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")


@cache
def script(filename: str) -> str:
    """A whole .sql file of this package (schema, views, a migration), to run as one script."""
    return _text(filename)


@cache
def _queries() -> dict[str, str]:
    text = _text("queries.sql")
    parts = _NAME.split(text)
    # parts = [preamble, name1, body1, name2, body2, ...]
    named = {name: body.strip() for name, body in zip(parts[1::2], parts[2::2], strict=True)}
    if len(named) != len(parts[1::2]):
        raise RuntimeError("queries.sql names a statement twice")
    return named


def query(name: str) -> str:
    """The named statement of queries.sql (KeyError for an unknown name)."""
    return _queries()[name]


def with_catalog(name: str, catalog: str) -> str:
    """Named statement `name` with `{log}` replaced by `catalog`, quoted as an identifier."""
    quoted = '"' + catalog.replace('"', '""') + '"'
    return query(name).replace("{log}", quoted)


def scalar(con: duckdb.DuckDBPyConnection, name: str, params: Params = None) -> Any:
    """The first value of named query `name`'s one-row result (None if no row).

    Fetches the whole result: DuckDB 2.0 refuses any further work on a
    connection whose last result was not read to the end (fetchone() leaves
    it open), so this package never calls fetchone().
    """
    rows = con.execute(query(name), params).fetchall()
    return rows[0][0] if rows else None

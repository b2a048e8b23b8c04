"""The read-only statement guard: which SQL a query of the log may run.

`read_only_statement` lets through one SELECT (or EXPLAIN of one), parsed by
DuckDB's own parser; `query_error` turns what DuckDB raises for a user's
query into the error the caller sees. The same rules hold whether the CLI
reaches the log through the service's Query RPC or opens the file itself.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import Final, NamedTuple

import duckdb

from .errors import QueryError, ReadOnlyViolation, StorageError

_ALLOWED: Final = frozenset({duckdb.StatementType.SELECT})
# Table functions that are maintenance, not questions; they would otherwise
# run inside a read-only transaction (checkpoint() does).
_REFUSED_FUNCTIONS: Final = frozenset({"checkpoint", "force_checkpoint"})
_SKIPPED_TOKENS: Final = frozenset({duckdb.token_type.comment})
_NAME_TOKENS: Final = frozenset({duckdb.token_type.identifier, duckdb.token_type.keyword})
_ANALYZE: Final = frozenset({"analyze", "analyse"})


class _Token(NamedTuple):
    start: int  # UTF-8 byte offset into the statement
    text: str
    kind: duckdb.token_type


def _tokens(raw: bytes) -> list[_Token]:
    """DuckDB's own tokens of a statement, with their text, comments dropped."""
    spans = duckdb.tokenize(raw.decode())
    ends = [start for start, _ in spans[1:]] + [len(raw)]
    return [
        _Token(start, raw[start:end].decode(errors="replace").strip(), kind)
        for (start, kind), end in zip(spans, ends, strict=True)
        if kind not in _SKIPPED_TOKENS
    ]


def read_only_statement(
    sql: str, parser: duckdb.DuckDBPyConnection | None = None
) -> duckdb.Statement:
    """The one read-only statement in `sql`, parsed by DuckDB's own parser.

    Accepted: SELECT (also WITH, FROM-first, VALUES, DESCRIBE, SHOW,
    SUMMARIZE, which DuckDB parses as SELECT) and EXPLAIN [ANALYZE] of one.
    Everything else raises ReadOnlyViolation before it runs. This is the
    first line only: a statement's type cannot show a data-modifying CTE
    (`WITH x AS (DELETE ... RETURNING *) SELECT ...` parses as SELECT), so
    the query also runs in a READ ONLY transaction with external access off.

    `parser` is a connection to parse with. Without one, DuckDB's module-level
    parser opens its default in-memory database on first use (some 20-50 ms of
    a command's start), so `ReadAccess` passes a cursor of its own.
    """
    parse = duckdb.extract_statements if parser is None else parser.extract_statements
    try:
        statements = parse(sql)
    except duckdb.Error as exc:
        raise QueryError(str(exc)) from None
    if len(statements) != 1:
        raise ReadOnlyViolation(f"expected exactly one statement, got {len(statements)}")
    statement = statements[0]
    raw = statement.query.encode()
    tokens = _tokens(raw)
    if any(
        token.kind in _NAME_TOKENS and token.text.strip('"').lower() in _REFUSED_FUNCTIONS
        for token in tokens
    ):
        raise ReadOnlyViolation("checkpoints are maintenance, not queries")
    if statement.type == duckdb.StatementType.EXPLAIN:
        _check_explained(raw, tokens, parse)
    elif statement.type not in _ALLOWED:
        raise ReadOnlyViolation(
            f"{statement.type.name} statements are not allowed: the log answers"
            " SELECT (WITH, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN) queries only"
        )
    return statement


def _check_explained(
    raw: bytes, tokens: list[_Token], parse: Callable[[str], list[duckdb.Statement]]
) -> None:
    """EXPLAIN ANALYZE runs its statement, so what it explains must be a read too."""
    rest = tokens[1:]  # tokens[0] is EXPLAIN
    if rest and rest[0].text.lower() in _ANALYZE:
        rest = rest[1:]
    statements = []
    if rest:
        with suppress(duckdb.Error):
            statements = parse(raw[rest[0].start :].decode())
    if len(statements) != 1 or statements[0].type not in _ALLOWED:
        raise ReadOnlyViolation("only EXPLAIN [ANALYZE] of a SELECT is allowed")


def query_error(exc: duckdb.Error) -> StorageError:
    """A DuckDB error from a user query, as the exception the caller should see."""
    if isinstance(exc, duckdb.PermissionException):
        return ReadOnlyViolation(f"queries may not reach outside the log: {exc}")
    text = str(exc)
    if "read-only" in text and isinstance(
        exc, duckdb.TransactionException | duckdb.InvalidInputException
    ):
        # A write inside our READ ONLY transaction, or on a read-only file.
        return ReadOnlyViolation(f"queries may not change the log: {text}")
    if isinstance(exc, duckdb.InterruptException):
        return QueryError("the query was cancelled (it ran past its time limit)")
    return QueryError(text)

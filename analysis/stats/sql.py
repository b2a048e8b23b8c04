"""SQL text lives in .sql files beside this module; this only loads it (the one loader of
named statements, `analysis.sqlfiles`), and Python binds values."""

from __future__ import annotations

from analysis.sqlfiles import named_queries


def statements(filename: str) -> dict[str, str]:
    """The statements of a file, each starting with a `-- name: NAME` line."""
    return named_queries(__package__ or "analysis.stats", filename)


def statement(filename: str, name: str) -> str:
    return statements(filename)[name]

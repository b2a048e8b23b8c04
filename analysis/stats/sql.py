"""SQL text lives in .sql files beside this module; this only loads it, and Python binds values."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_NAME = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)


def text(filename: str) -> str:
    return resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")


@cache
def statements(filename: str) -> dict[str, str]:
    """The statements of a file, each starting with a `-- name: NAME` line."""
    parts = _NAME.split(text(filename))
    named = {name: body.strip() for name, body in zip(parts[1::2], parts[2::2], strict=True)}
    if len(named) != len(parts[1::2]):
        raise RuntimeError(f"{filename} names a statement twice")
    return named


def statement(filename: str, name: str) -> str:
    return statements(filename)[name]

"""Named SQL statements kept in .sql files beside the analysis modules.

The analysis package keeps its SQL out of Python as the storage package
does (`service/storage/_sql.py`): a file holds statements that each start
with a `-- name: NAME` line, and Python only binds values to them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import cache
from importlib import resources

_NAME = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)


@cache
def named_queries(package: str, filename: str) -> dict[str, str]:
    """Every named statement of `filename` in `package`, by name."""
    text = resources.files(package).joinpath(filename).read_text(encoding="utf-8")
    parts = _NAME.split(text)
    names = parts[1::2]
    named = {name: body.strip() for name, body in zip(names, parts[2::2], strict=True)}
    if len(named) != len(names):
        raise RuntimeError(f"{filename} names a statement twice")
    return named


ID_SEPARATOR = "\x1f"
"""Joins match ids into one bound parameter that the SQL splits again (chr(31)): one
parameter instead of hundreds keeps a statement's text fixed whatever the count."""
IDS_PER_QUERY = 400
"""Match ids per statement: bounds one statement's work and its parameter's size."""


def id_lists(ids: Sequence[str]) -> Iterator[str]:
    """`ids` as joined parameters of at most IDS_PER_QUERY ids each, in order."""
    for start in range(0, len(ids), IDS_PER_QUERY):
        yield ID_SEPARATOR.join(ids[start : start + IDS_PER_QUERY])

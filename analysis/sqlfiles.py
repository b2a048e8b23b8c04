"""Named SQL statements kept in .sql files beside the analysis modules.

The analysis package keeps its SQL out of Python as the storage package
does (`service/storage/_sql.py`): a file holds statements that each start
with a `-- name: NAME` line, and Python only binds values to them.
"""

from __future__ import annotations

import re
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

"""`sniff query -p`: how a typed SQL parameter is written on the command line.

A parameter is text exactly as written, unless it starts with a type:
`int:42`, `float:1.5`, `bool:true`, `null:` (nothing after the colon), or
`str:` (text that would otherwise look typed, like `str:int:7`). Nothing is
guessed: `007` stays the text '007'. An `int:` is a 64-bit signed integer,
the widest the service's Query RPC carries, so a query binds the same value
whether it runs on the file or through a service; a larger number goes as
text with a cast in the SQL (`CAST(? AS HUGEINT)`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import click

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(
    r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?(inf|infinity|nan)", re.IGNORECASE
)

HELP = (
    "A bound parameter for ? or $1, $2 (repeatable, in order). Text as written "
    "unless typed: int:42, float:1.5, bool:true, null:, str:TEXT (for text that "
    "starts with a type name). int: is 64-bit; pass larger numbers as text and "
    "CAST(? AS HUGEINT)."
)


class Param(click.ParamType[object, object]):
    """A `-p` value: text, or a typed value behind `int:`, `float:`, `bool:`, `null:`, `str:`."""

    name = "[TYPE:]VALUE"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> object:
        if not isinstance(value, str):
            return value  # already converted (a default)
        kind, colon, rest = value.partition(":")
        if not colon or kind not in _READERS:
            return value
        try:
            return _READERS[kind](rest)
        except ValueError as e:
            self.fail(f"{value!r}: {e}", param, ctx)


def _int(text: str) -> int:
    if not _INT.fullmatch(text):
        raise ValueError("int: takes a whole number in decimal digits, like int:42")
    number = int(text)
    if not INT64_MIN <= number <= INT64_MAX:
        raise ValueError(
            "int: is a 64-bit integer (-2^63 to 2^63-1); pass a larger number as text "
            "and cast it in the SQL: CAST(? AS HUGEINT)"
        )
    return number


def _float(text: str) -> float:
    if not _FLOAT.fullmatch(text):
        raise ValueError("float: takes a decimal number, like float:1.5 or float:2e-3")
    return float(text)


def _bool(text: str) -> bool:
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise ValueError("bool: takes true or false")
    return lowered == "true"


def _null(text: str) -> None:
    if text:
        raise ValueError("null: takes nothing after the colon")
    return None


_READERS: dict[str, Callable[[str], object]] = {
    "int": _int,
    "float": _float,
    "bool": _bool,
    "null": _null,
    "str": str,
}

PARAM = Param()

"""The one output vocabulary of the command line, and how a result is written in it.

Every command's `--format` takes names from `FORMATS`, each meaning the
same thing in every command (docs/cli.md): `table` or `text` for people,
`csv`, `json` for one document, `jsonl` for one JSON object a line.

How `sniff query` (and every other command's rows) write a result:

Arrow hands over Python values; each format writes them so that another
program reads back what the log holds: numbers stay numbers (a DECIMAL or
HUGEINT is written with all its digits, never through a float), NULL is
JSON null (an empty CSV field), lists and structs are JSON arrays and
objects (also inside a CSV field), dates and times are ISO 8601 text.
"""

from __future__ import annotations

import csv
import datetime
import json
import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from itertools import islice
from typing import Any, TextIO, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


FORMATS = {
    "table": "aligned columns for people",
    "text": "readable text for people",
    "csv": "CSV with a header line (lists and structs as JSON, true/false, empty for null)",
    "json": "one JSON document",
    "jsonl": "JSON Lines: one JSON object a line",
}
"""Every `--format` name and what it means, the same in every command."""


def format_option(*choices: str, **what: str) -> Callable[[F], F]:
    """`--format` with these of `FORMATS`' names, the first the default.

    `what` says, by format name, what the output holds here
    (`jsonl="a match a line"`).
    """
    unknown = set(choices) - set(FORMATS)
    if unknown:
        raise ValueError(f"not in the formats vocabulary: {sorted(unknown)}")
    meanings = "; ".join(f"{name}: {what.get(name) or FORMATS[name]}" for name in choices)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default=choices[0],
        show_default=True,
        help=f"{meanings} (docs/cli.md).",
    )


def write_json(out: TextIO, columns: Sequence[str], rows: Iterable[Row]) -> None:
    """One JSON document: an array of objects, one a row, each value as `json_text` writes it."""
    out.write("[")
    for i, text in enumerate(_objects(columns, rows)):
        out.write(",\n " if i else "\n ")
        out.write(text)
    out.write("\n]\n")


def json_text(value: Any) -> str:
    """One value as JSON text.

    A float that is not finite is written as the text "NaN", "Infinity" or
    "-Infinity" (as in protobuf's JSON mapping), since JSON has no such number.
    A map arrives from Arrow as (key, value) pairs and is written as an array
    of [key, value] arrays, which keeps keys that are not text.
    """
    fast = _JSON_SCALARS.get(type(value))
    if fast is not None:
        return fast(value)
    if value is None or isinstance(value, bool | int | str):
        return json.dumps(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return json.dumps(value)
        return json.dumps("NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity")
    if isinstance(value, Decimal):
        if not value.is_finite():
            return json.dumps(str(value))
        return str(value)  # exact digits; JSON allows an exponent such as 1E+3
    if isinstance(value, Mapping):
        items = (f"{json.dumps(str(k))}: {json_text(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(json_text(v) for v in value) + "]"
    return json.dumps(plain_text(value))


_JSON_SCALARS: dict[type, Callable[[Any], str]] = {
    int: int.__repr__,
    str: json.encoder.encode_basestring_ascii,  # what json.dumps writes for a str
    type(None): lambda _: "null",
    bool: lambda value: "true" if value else "false",
}
"""The common values' JSON text by their exact type: the same text, without json.dumps' cost."""

_CSV_AS_IS = frozenset({int, str, type(None)})
"""Types the csv module writes as `cell_text` would (str(int), the text, "" for None)."""


def json_line(value: Any) -> str:
    """One JSON object (or any value) as one line of JSON Lines, or one compact document.

    Every command's `json` and `jsonl` output goes through here (or `write_json`,
    `write_jsonl`), so a value is written alike everywhere: a non-finite float as
    "NaN", a DECIMAL with all its digits, a time in ISO 8601. The json module
    writes the same text for what it knows, faster; `json_text` the rest.
    """
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return json_text(value)


def plain_text(value: Any) -> str:
    """A scalar that JSON has no type for, as text: ISO 8601 for times, escapes for bytes."""
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return "".join(chr(b) if 0x20 <= b < 0x7F and b != 0x5C else f"\\x{b:02x}" for b in value)
    return str(value)


def cell_text(value: Any, null: str = "") -> str:
    """One value as a CSV field or table cell: lists and structs as JSON, booleans lowercase."""
    if value is None:
        return null
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float | Decimal | Mapping | list | tuple):
        text = json_text(value)
        return json.loads(text) if text.startswith('"') else text
    if isinstance(value, int):
        return str(value)
    return plain_text(value)


Row = Sequence[Any]
"""One result row, its values in column order (names may repeat: `SELECT 1 AS a, 2 AS a`)."""


def _objects(columns: Sequence[str], rows: Iterable[Row]) -> Iterator[str]:
    """Each row as one JSON object's text, keys in column order (repeated names kept)."""
    template = "{" + ", ".join(json.dumps(c).replace("%", "%%") + ": %s" for c in columns) + "}"
    for row in rows:
        yield template % tuple(map(json_text, row))  # a row of another width: TypeError


def write_jsonl(out: TextIO, columns: Sequence[str], rows: Iterable[Row]) -> None:
    for chunk in _batched(_objects(columns, rows), 1024):
        out.write("\n".join(chunk) + "\n")


def write_csv(out: TextIO, columns: Sequence[str], rows: Iterable[Row]) -> None:
    """RFC 4180 quoting, but `\\n` line ends, as every other output of the command line."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    as_is = _CSV_AS_IS
    writer.writerows(
        row if as_is.issuperset(map(type, row)) else [cell_text(v) for v in row] for row in rows
    )


def _batched(items: Iterable[str], size: int) -> Iterator[list[str]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


TABLE_PAGE = 1_000
"""Rows a table shows at most: a table aligns its columns, so it holds the rows it shows."""


def write_result(
    fmt: str, columns: Sequence[str], rows: Iterable[Row], out: TextIO, *, page: int = TABLE_PAGE
) -> None:
    """A result in the format asked for: `table` (for people), `csv`, `json` or `jsonl`.

    The rows are written as they come, so an iterator of any length is
    written in bounded memory; a table shows its first `page` rows and
    says how to get the rest.
    """
    if fmt == "jsonl":
        write_jsonl(out, columns, rows)
    elif fmt == "json":
        write_json(out, columns, rows)
    elif fmt == "csv":
        write_csv(out, columns, rows)
    else:
        it = iter(rows)
        shown = list(islice(it, page))
        more = next(it, None) is not None
        out.write(render_table(columns, shown, more=more) + "\n")


def aligned(
    headers: Sequence[str], cells: Sequence[Sequence[str]], right: Collection[int] = ()
) -> list[str]:
    """Every table's lines: the headers, a rule, the cells; columns in `right` right-aligned."""
    widths = [max([len(h), *(len(row[i]) for row in cells)]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if i in right else v.ljust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ).rstrip()

    return [line(headers), "  ".join("-" * w for w in widths), *map(line, cells)]


def render_table(columns: Sequence[str], rows: Sequence[Row], *, more: bool = False) -> str:
    """Aligned columns for a person; NULL shown as NULL.

    `more`: the rows are the first page of a longer result; the last line says so.
    """
    lines = aligned(columns, [[cell_text(v, null="NULL") for v in row] for row in rows])
    if more:
        lines.append(
            f"(the first {len(rows):,} rows; more follow: --format csv or jsonl writes "
            "every row, or page with LIMIT and OFFSET)"
        )
    else:
        lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)


def facts_only_note(command: str) -> Callable[[int], None]:
    """The note a whole-log audit or export prints on stderr about the simulated matches it
    leaves out: stored as facts only, they have no events until named and regenerated."""

    def note(count: int) -> None:
        if count:
            noun = "match" if count == 1 else "matches"
            click.echo(
                f"Note: {count:,} simulated {noun} stored as facts only left out: they have no "
                f"stored events; name them (sniff {command} --db FILE MATCH ...) to regenerate "
                "them from their seed.",
                err=True,
            )

    return note

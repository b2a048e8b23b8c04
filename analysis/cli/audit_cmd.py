"""`sniff audit`: replay RECORD.md match records and report every problem."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import BinaryIO

import click

from analysis.audit import Audit
from analysis.cli.errors import Misuse


def _open(path: str) -> BinaryIO:
    """The file in binary, so that a bad byte is one line's problem, not the audit's end."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")  # the caller closes it
    except OSError as e:
        raise Misuse(f"cannot read {path}: {e.strerror or e}") from None


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "jsonl"]),
    default="text",
    show_default=True,
    help="Readable text, or one JSON object a match (RECORD.md).",
)
@click.option(
    "--allow-unfinished",
    is_flag=True,
    help="The file holds matches still in play: a match nobody has won yet (even one "
    "stopped mid-round) is ok instead of `match_unfinished`.",
)
def audit(files: tuple[str, ...], fmt: str, allow_unfinished: bool) -> None:
    """Audit match records (JSON Lines, one match a line; '-' reads standard input).

    Every record is replayed through the engine and each claimed figure is
    checked. A line that is not a record (not UTF-8, a byte order mark, not
    JSON) is reported as `malformed` under its `line:N` name and the rest of
    the file is still audited. A match that nobody won is `match_unfinished`
    (unless --allow-unfinished); a record reusing an earlier record's id, in
    any of the files, is `duplicate_id`.

    Exit status: 0 when every match is ok, 1 when any problem was found, 2
    when the command was misused (for example a file that cannot be read).

    Example: sniff audit matches.jsonl --format jsonl
    """
    for path in files:  # every file readable before any output, so misuse prints nothing else
        if path != "-":
            _open(path).close()
    run = Audit(allow_unfinished=allow_unfinished)
    problems = False
    for path in files:
        stream = _open(path)
        try:
            lines = _read_lines(stream, path)
            for result in run.lines(lines, source="standard input" if path == "-" else path):
                problems |= not result.ok
                click.echo(json.dumps(result.to_json()) if fmt == "jsonl" else result.to_text())
        finally:
            if path != "-":
                stream.close()
    sys.exit(1 if problems else 0)


def _read_lines(stream: BinaryIO, path: str) -> Iterator[bytes]:
    """The file's lines; a read that fails midway (an I/O error) is misuse of that file."""
    while True:
        try:
            line = stream.readline()
        except OSError as e:
            raise Misuse(f"cannot read {path}: {e.strerror or e}") from None
        if not line:
            return
        yield line

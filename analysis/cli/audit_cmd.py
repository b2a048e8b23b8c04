"""`sniff audit`: replay RECORD.md match records and report every problem."""

from __future__ import annotations

import json
import sys

import click

from analysis.audit import audit_lines


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.File("r", encoding="utf-8"))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "jsonl"]),
    default="text",
    show_default=True,
    help="Readable text, or one JSON object a match (RECORD.md).",
)
def audit(files: tuple[click.utils.LazyFile, ...], fmt: str) -> None:
    """Audit match records (JSON Lines, one match a line; '-' reads standard input).

    Every record is replayed through the engine and each claimed figure is
    checked. Exit status: 0 when every match is ok, 1 when any problem was
    found, 2 when the command was misused.

    Example: sniff audit matches.jsonl --format jsonl
    """
    problems = False
    for f in files:
        for result in audit_lines(f):
            problems |= not result.ok
            if fmt == "jsonl":
                click.echo(json.dumps(result.to_json()))
            else:
                click.echo(result.to_text())
    sys.exit(1 if problems else 0)

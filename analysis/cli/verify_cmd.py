"""`sniff verify DIR`: check an evidence bundle (docs/evidence.md) with nothing but its files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from analysis.cli.errors import Misuse, ProblemFound
from analysis.cli.formats import format_option, json_line
from analysis.cli.options import progress_option, workers_option
from analysis.cli.progress import Progress
from analysis.parallel import default_workers

if TYPE_CHECKING:
    from analysis.bundle.errors import BundleError


@click.command()
@click.argument("directory", metavar="DIR")
@click.option(
    "--public-key",
    "public_key_file",
    metavar="KEY.pub",
    default=None,
    help="The log's public key as you got it from its operator: the bundle's must be this one "
    "(without it, compare the log id printed with one you trust).",
)
@format_option("text", "jsonl", jsonl="one object: what was proven, or what failed")
@workers_option
@progress_option
def verify(
    directory: str, public_key_file: str | None, fmt: str, workers: int | None, progress: bool
) -> None:
    """Verify the evidence bundle in DIR (written by `sniff export --evidence`) with no
    service and no log: the key and log id, every signature, the Merkle proofs, each
    match's chain, seed commitment, seeded deals and rules replay, the checkpoints and
    the records. It writes nothing.

    Exit status: 0 verified (it says what that proves, and what not), 1 the
    evidence does not verify (one line naming the file, line and what failed),
    2 misuse (DIR missing or not a bundle, an unreadable --public-key).

    \b
    Example: sniff verify bundle/
    Example: sniff verify bundle/ --public-key sniff.key.pub --format jsonl
    """
    from analysis.bundle.errors import BundleError, NotABundle
    from analysis.bundle.verify import verify_bundle
    from service.evidence.errors import KeyFileError
    from service.evidence.keys import load_public_key

    trusted = None
    if public_key_file is not None:
        try:
            trusted = load_public_key(Path(public_key_file))
        except KeyFileError as e:
            raise Misuse(str(e)) from None
    bar = Progress(progress, "verifying")
    try:
        report = verify_bundle(
            directory,
            workers=workers or default_workers(),
            public_key=trusted,
            started=bar.start,
            progress=bar.update,
        )
    except NotABundle as e:
        raise Misuse(str(e)) from None
    except BundleError as e:
        bar.finish()  # before the error line
        if fmt == "jsonl":
            click.echo(json_line(_failure(e)))
            sys.exit(1)
        raise ProblemFound(str(e)) from None
    finally:
        bar.finish()
    from analysis.bundle.summary import report_json, report_lines

    if fmt == "jsonl":
        click.echo(json_line(report_json(report)))
    else:
        for line in report_lines(report):
            click.echo(line)


def _failure(e: BundleError) -> dict[str, Any]:
    return {
        "verified": False,
        "file": e.file,
        "line": e.line,
        "error": type(e).__name__,
        "reason": e.reason,
    }

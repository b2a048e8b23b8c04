"""`sniff audit`: replay match records (docs/records.md), or the event log; report every problem."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import click

from analysis.audit import Audit, AuditResult
from analysis.cli.errors import Misuse, first_line
from analysis.cli.formats import format_option, json_line
from analysis.cli.options import progress_option, tls_ca_option, workers_option
from analysis.cli.progress import Progress
from analysis.parallel import default_workers

if TYPE_CHECKING:
    from service.evidence.keys import PublicKey
    from service.evidence.signed import Checkpoint


def _open(path: str) -> BinaryIO:
    """The file in binary, so that a bad byte is one line's problem, not the audit's end."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")  # the caller closes it
    except OSError as e:
        raise Misuse(f"cannot read {path}: {e.strerror or e}") from None


@click.command()
@click.argument("inputs", nargs=-1, metavar="[FILES | MATCHES]...")
@click.option(
    "--db",
    "db_path",
    type=click.Path(),
    default=None,
    help="Audit this event log (a DuckDB file) instead of record files: every match, or the "
    "MATCHES named.",
)
@click.option(
    "--head",
    "heads",
    multiple=True,
    metavar="MATCH=HASH",
    help="With --db: a chain head a seat kept (the chain_head it was given); the log must "
    "contain it. Repeatable.",
)
@click.option(
    "--commitment",
    "commitments",
    multiple=True,
    metavar="MATCH=HEX",
    help="With --db: the seed_commitment a seat was given at CreateMatch; the log's must be "
    "it. Repeatable.",
)
@click.option(
    "--tournament",
    "tournaments",
    multiple=True,
    metavar="RUN_ID=HEX",
    help="With --db: the commitment to its deal seeds that sniff tournament printed before "
    "play; the tournament's logged seeds and salt must open it. Repeatable.",
)
@click.option(
    "--public-key",
    "public_key",
    type=click.Path(dir_okay=False),
    default=None,
    help="With --db: the log's public key (KEY.pub); check every signed checkpoint and tree "
    "head and the tree of finished matches (reported as `evidence`).",
)
@click.option(
    "--heads",
    "heads_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="With --public-key: a file of checkpoints a seat kept (JSON Lines); each must be "
    "signed by the key and name a hash the log holds.",
)
@format_option("text", "jsonl", jsonl="one object a match (docs/audit.md)")
@click.option(
    "--allow-unfinished",
    is_flag=True,
    help="Records: the file holds matches still in play: a match nobody has won yet (even one "
    "stopped mid-round) is ok instead of `match_unfinished`. (A log's matches in play are "
    "always audited as far as they go.)",
)
@workers_option
@progress_option
@tls_ca_option
def audit(
    inputs: tuple[str, ...],
    db_path: str | None,
    heads: tuple[str, ...],
    commitments: tuple[str, ...],
    tournaments: tuple[str, ...],
    public_key: str | None,
    heads_file: str | None,
    fmt: str,
    allow_unfinished: bool,
    workers: int | None,
    progress: bool,
    tls_ca: str | None,
) -> None:
    """Audit match records (JSON Lines, one match a line; '-' reads standard input), or with
    --db the event log.

    Every match is replayed through the engine and each claimed or logged
    figure is checked. A line that is not a record (not UTF-8, a byte order
    mark, not JSON) is reported as `malformed` under its `line:N` name and
    the rest of the file is still audited. A match that nobody won is
    `match_unfinished` (unless --allow-unfinished); a record reusing an
    earlier record's id, in any of the files, is `duplicate_id`.

    With --db, the log's events are also checked against their hash chain,
    the seed commitment and every seeded deal (docs/audit.md lists the
    kinds), through the service when one holds the log. --head checks the log
    against a head a seat kept, --commitment against the seed commitment a
    seat was given when the match was created. Each tournament of the log (without
    MATCHES, or those --tournament names) gets one more line: whether its logged deal
    seeds and salt open its commitment, and the commitment --tournament gives.

    Exit status: 0 when every match is ok, 1 when any problem was found, 2
    when the command was misused (for example a file that cannot be read).

    \b
    Example: sniff audit matches.jsonl --format jsonl
    Example: sniff audit --db sniff.duckdb 3f2a9c0d1e2b4a5c --head 3f2a9c0d1e2b4a5c=9ca89f...
    Example: sniff audit --db sniff.duckdb --commitment 3f2a9c0d1e2b4a5c=5d2911...
    Example: sniff audit --db sniff.duckdb --tournament tournament-5d0c7e1f2a3b=4b1e...
    """
    count = workers or default_workers()
    bar = Progress(progress, "auditing")
    if db_path is not None:
        results = _log_results(db_path, inputs, heads, commitments, tournaments, count, bar, tls_ca)
        if public_key is not None:  # read before the log, so misuse prints nothing else
            key, kept = _evidence_inputs(public_key, heads_file)
            results = chain(results, _evidence_results(db_path, key, kept, tls_ca))
        elif heads_file is not None:
            raise Misuse("--heads needs --public-key KEY.pub")
    else:
        if public_key is not None or heads_file is not None:
            raise Misuse("--public-key and --heads check an event log: give --db FILE")
        for option, given in (
            ("--head", heads),
            ("--commitment", commitments),
            ("--tournament", tournaments),
        ):
            if given:
                raise Misuse(f"{option} checks an event log: give --db FILE")
        if not inputs:
            raise Misuse("give the record files to audit, or --db FILE for the event log")
        results = _record_results(inputs, allow_unfinished, count, bar)
    problems = False
    try:
        for result in results:
            problems |= not result.ok
            click.echo(json_line(result.to_json()) if fmt == "jsonl" else result.to_text())
    finally:
        bar.finish()
    sys.exit(1 if problems else 0)


def _record_results(
    files: tuple[str, ...], allow_unfinished: bool, workers: int, bar: Progress
) -> Iterator[AuditResult]:
    for path in files:  # every file readable before any output, so misuse prints nothing else
        if path != "-":
            _open(path).close()
    sizes = [0 if path == "-" else os.path.getsize(path) for path in files]
    if "-" not in files:
        bar.start(sum(sizes))
    run = Audit(allow_unfinished=allow_unfinished)
    for path in files:
        stream = _open(path)
        try:
            lines = read_lines(stream, path)
            source = "standard input" if path == "-" else path
            yield from run.lines(lines, source=source, workers=workers, progress=bar.update)
        finally:
            if path != "-":
                stream.close()


def _log_results(
    db_path: str,
    match_ids: tuple[str, ...],
    heads: tuple[str, ...],
    commitments: tuple[str, ...],
    tournaments: tuple[str, ...],
    workers: int,
    bar: Progress,
    tls_ca: str | None,
) -> Iterator[AuditResult]:
    from analysis.cli.formats import facts_only_note
    from analysis.logaudit import audit_log, parse_commitments, parse_heads
    from analysis.tournament_audit import parse_pins

    try:
        kept = parse_heads(heads)
        given = parse_commitments(commitments)
        pins = parse_pins(tournaments)
    except ValueError as e:
        raise Misuse(str(e)) from None
    with log_read_errors():
        results = audit_log(
            db_path,
            match_ids,
            heads=kept,
            commitments=given,
            tournaments=pins,
            workers=workers,
            started=bar.start,
            left_out=facts_only_note("audit"),
            progress=bar.update,
            tls_ca=tls_ca,
        )
        first = next(results, None)  # the log is opened and listed: its errors come now
    if first is None:
        return
    yield first
    with log_read_errors():
        yield from results


def _evidence_inputs(public_key: str, heads_file: str | None) -> tuple[PublicKey, list[Checkpoint]]:
    """The public key and the kept checkpoints; either unreadable is misuse."""
    from analysis.evidence import BadHeadsFile, read_kept_checkpoints
    from service.evidence.errors import KeyFileError
    from service.evidence.keys import load_public_key

    try:
        key = load_public_key(Path(public_key))
        kept = [] if heads_file is None else read_kept_checkpoints(Path(heads_file))
    except (KeyFileError, BadHeadsFile) as e:
        raise Misuse(first_line(str(e))) from None
    return key, kept


def _evidence_results(
    db_path: str, key: PublicKey, kept: list[Checkpoint], tls_ca: str | None
) -> Iterator[AuditResult]:
    """The `evidence` result (analysis/evidence.py), after the matches'."""
    from analysis.evidence import audit_evidence
    from analysis.logquery import LogSource

    with log_read_errors(), LogSource(db_path, tls_ca=tls_ca) as source:
        yield audit_evidence(source, key, kept)


@contextmanager
def log_read_errors() -> Iterator[None]:
    """What reading the log can raise, as one line and exit status 2."""
    from analysis.logquery import NoLog, UnknownMatch
    from analysis.tournament_audit import UnknownTournament
    from service.storage import StorageError

    try:
        yield
    except (NoLog, UnknownMatch, UnknownTournament) as e:
        raise Misuse(str(e)) from None
    except StorageError as e:
        raise Misuse(first_line(str(e))) from None
    except Exception as e:  # a refusal from the service's Query RPC
        details: Callable[[], str] | None = getattr(e, "details", None)
        if callable(details):
            raise Misuse(f"the service refused to read the log: {details()}") from None
        raise


def read_lines(stream: BinaryIO, path: str) -> Iterator[bytes]:
    """The file's lines; a read that fails midway (an I/O error) is misuse of that file."""
    while True:
        try:
            line = stream.readline()
        except OSError as e:
            raise Misuse(f"cannot read {path}: {e.strerror or e}") from None
        if not line:
            return
        yield line

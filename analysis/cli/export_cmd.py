"""`sniff export`: the log's matches as match records (docs/records.md), or its views as Parquet."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import click

from analysis.cli.audit_cmd import log_read_errors
from analysis.cli.errors import Misuse, ProblemFound
from analysis.cli.options import db_option, tls_ca_option, workers_option
from analysis.parallel import default_workers


@click.command("export")
@click.argument("match_ids", nargs=-1, metavar="[MATCH]...")
@db_option
@click.option(
    "-o",
    "--output",
    "output",
    metavar="FILE",
    help="Write the records here (default: standard output).",
)
@click.option(
    "--parquet",
    "parquet_dir",
    metavar="DIR",
    help="Write the views (matches, deals, actions, round_ends, match_ends) as Parquet under "
    "DIR/VIEW/created_date=YYYY-MM-DD/, merged by match: exporting again overwrites.",
)
@click.option(
    "--evidence",
    "evidence_dir",
    metavar="DIR",
    help="Write an evidence bundle into the new directory DIR (docs/evidence.md): the finished "
    "matches in the log's signed tree (or the MATCHes named) with their proofs, for "
    "`sniff verify DIR` or `node clients/node/verify.js DIR`. Needs --public-key.",
)
@click.option(
    "--public-key",
    "public_key_file",
    metavar="KEY.pub",
    help="With --evidence: the log's public key (`sniff keygen KEY` wrote it to KEY.pub); the "
    "bundle is proven against the latest tree head it signed.",
)
@click.option(
    "--include-unfinished",
    is_flag=True,
    help="Export matches still in play too. Their records show every hidden tile (deals, "
    "draws): keep them from the players.",
)
@workers_option
@tls_ca_option
def export(
    match_ids: tuple[str, ...],
    db_path: str,
    output: str | None,
    parquet_dir: str | None,
    evidence_dir: str | None,
    public_key_file: str | None,
    include_unfinished: bool,
    workers: int | None,
    tls_ca: str | None,
) -> None:
    """Export the log's finished matches (or the MATCHes named) as match records
    (docs/records.md), or with --parquet its views as Parquet files.

    A record holds the log's own figures as its claims, so `sniff audit` of
    an export checks the log. An imported match comes back with its own id
    and players. Matches in play are left out unless --include-unfinished
    (naming one without it is refused). Reads the log through a running
    service when one holds it, else the file.

    \b
    Example: sniff export --db sniff.duckdb -o all.jsonl
    Example: sniff export --db sniff.duckdb --parquet warehouse/
    Example: sniff export --db sniff.duckdb --evidence bundle/ --public-key sniff.key.pub
    """
    from analysis.cli.formats import facts_only_note
    from analysis.export import export_parquet, export_records

    if sum(x is not None for x in (output, parquet_dir, evidence_dir)) > 1:
        raise Misuse("give one of -o FILE (records), --parquet DIR and --evidence DIR")
    if evidence_dir is not None:
        _export_evidence(
            db_path, evidence_dir, match_ids, public_key_file, include_unfinished, tls_ca
        )
        return
    if public_key_file is not None:
        raise Misuse("--public-key goes with --evidence DIR")
    if parquet_dir is not None:
        target = Path(parquet_dir)
        if target.exists() and not target.is_dir():
            raise Misuse(f"--parquet {parquet_dir}: not a directory")
        try:
            target.mkdir(parents=True, exist_ok=True)
            probe = tempfile.NamedTemporaryFile(dir=target)  # noqa: SIM115
            probe.close()
        except OSError as e:
            raise Misuse(f"cannot write under {parquet_dir}: {e.strerror or e}") from None
        with _errors():
            written = export_parquet(
                db_path, target, match_ids, include_unfinished=include_unfinished, tls_ca=tls_ca
            )
        for w in written:
            click.echo(f"{w.view}: {w.rows:,} rows in {w.partitions} partition(s)")
        return
    with _errors(), _sink(output) as sink:
        for record in export_records(
            db_path,
            match_ids,
            include_unfinished=include_unfinished,
            workers=workers or default_workers(),
            tls_ca=tls_ca,
            left_out=facts_only_note("export"),
        ):
            sink.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n")


def _export_evidence(
    db_path: str,
    directory: str,
    match_ids: tuple[str, ...],
    public_key_file: str | None,
    include_unfinished: bool,
    tls_ca: str | None,
) -> None:
    """The bundle of the finished matches in the signed tree (or those named)."""
    from analysis.bundle.from_log import NotInTree, NoTreeHead, export_evidence
    from analysis.bundle.writer import BundleExists, InconsistentEvidence
    from service.evidence.errors import KeyFileError
    from service.evidence.keys import load_public_key

    if include_unfinished:
        raise Misuse("--evidence proves finished matches only: drop --include-unfinished")
    if public_key_file is None:
        raise Misuse("--evidence needs --public-key KEY.pub, the key that signs the log's heads")
    try:
        key = load_public_key(Path(public_key_file))
    except KeyFileError as e:
        raise Misuse(str(e)) from None
    with _errors():
        try:
            done = export_evidence(db_path, directory, match_ids, public_key=key, tls_ca=tls_ca)
        except (NoTreeHead, NotInTree, BundleExists) as e:
            raise Misuse(str(e)) from None
        except InconsistentEvidence as e:
            raise ProblemFound(f"the log's evidence does not agree with itself: {e}") from None
    counts, head = done.counts, done.tree_head
    click.echo(
        f"{directory}: {counts.matches:,} matches, {counts.events:,} events,"
        f" {counts.checkpoints:,} checkpoints, proven against the tree head of"
        f" {head.tree_size:,} matches; check it with `sniff verify {directory}`"
    )
    if done.left_out:
        click.echo(
            f"left out: {done.left_out:,} finished matches not yet in a signed tree head",
            err=True,
        )


@contextmanager
def _errors() -> Iterator[None]:
    from analysis.export import InPlay

    with log_read_errors():
        try:
            yield
        except InPlay as e:
            raise Misuse(str(e)) from None
        except OSError as e:
            raise Misuse(f"cannot write: {e.strerror or e}") from None


@contextmanager
def _sink(output: str | None) -> Iterator[_Out | TextIO]:
    """Standard output, or the file: written beside it and renamed when complete."""
    if output is None:
        yield _Out()
        return
    target = Path(output)
    try:
        fd, tmp = tempfile.mkstemp(
            dir=target.parent if str(target.parent) else ".", prefix=f".{target.name}."
        )
    except OSError as e:
        raise Misuse(f"cannot write {output}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class _Out:
    def write(self, text: str) -> None:
        sys.stdout.write(text)

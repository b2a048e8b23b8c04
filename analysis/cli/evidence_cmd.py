"""`sniff keygen` and `sniff proof`: the service's signing key, and proofs from its log
(docs/evidence.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from analysis.cli.audit_cmd import log_read_errors
from analysis.cli.errors import Misuse, ProblemFound, first_line
from analysis.cli.options import tls_ca_option


@click.command()
@click.argument("key", type=click.Path(dir_okay=False))
def keygen(key: str) -> None:
    """Write a new Ed25519 signing key to KEY (mode 0600) and its public key to KEY.pub,
    and print the log id (SHA-256 of the public key).

    Never overwrites either file: a lost or replaced key makes every earlier
    signature another log's. Give KEY to `sniff serve --signing-key-file`,
    and KEY.pub to whoever checks the service's signatures.

    Example: sniff keygen sniff.key
    """
    from service.evidence.errors import KeyFileError
    from service.evidence.keys import generate_key_files

    try:
        made = generate_key_files(Path(key))
    except KeyFileError as e:
        raise Misuse(first_line(str(e))) from None
    click.echo(made.log_id)


@click.command()
@click.argument("match_id", required=False, metavar="[MATCH]")
@click.option(
    "--db",
    "db_path",
    type=click.Path(),
    default=None,
    help="The event log (through the service when one holds it).",
)
@click.option(
    "--from",
    "from_size",
    type=click.IntRange(0),
    default=None,
    help="A consistency proof from the signed tree head of this many leaves.",
)
@click.option(
    "--to",
    "to_size",
    type=click.IntRange(0),
    default=None,
    help="With --from: to the signed tree head of this many leaves (default: the latest).",
)
@click.option(
    "--check",
    "check_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Check a proof document with --public-key instead (no log needed).",
)
@click.option(
    "--public-key",
    "public_key",
    type=click.Path(dir_okay=False),
    default=None,
    help="With --check: the log's public key (KEY.pub).",
)
@tls_ca_option
def proof(
    match_id: str | None,
    db_path: str | None,
    from_size: int | None,
    to_size: int | None,
    check_path: str | None,
    public_key: str | None,
    tls_ca: str | None,
) -> None:
    """Print a proof document (JSON, docs/evidence.md): that MATCH is in the log's tree of
    finished matches (its leaf, audit path and the latest signed tree head), or with --from
    that a later signed tree head extends an earlier one. With --check, check a proof
    document offline with the public key.

    --check exits 0 when the proof holds, 1 when it does not (one line naming the file
    and what failed), 2 on misuse.

    \b
    Example: sniff proof 3f2a9c0d1e2b4a5c --db sniff.duckdb > proof.json
    Example: sniff proof --from 4 --db sniff.duckdb
    Example: sniff proof --check proof.json --public-key sniff.key.pub
    """
    if check_path is not None:
        if match_id or db_path or from_size is not None or to_size is not None:
            raise Misuse("--check takes only the proof file and --public-key")
        if public_key is None:
            raise Misuse("--check needs --public-key KEY.pub")
        _check(Path(check_path), Path(public_key))
        return
    if public_key is not None:
        raise Misuse("--public-key goes with --check")
    if db_path is None:
        raise Misuse("give --db FILE: the log to prove from")
    if (match_id is None) == (from_size is None):
        raise Misuse("give a MATCH (an inclusion proof) or --from SIZE (a consistency proof)")
    if to_size is not None and from_size is None:
        raise Misuse("--to goes with --from")
    from analysis.evidence import tree_of
    from analysis.logquery import LogSource
    from service.storage.tree import NotInTree

    with log_read_errors(), LogSource(db_path, tls_ca=tls_ca) as source:
        stored = tree_of(source)
    try:
        if match_id is not None:
            document = stored.inclusion(match_id).to_json()
        else:
            assert from_size is not None
            document = stored.consistency(from_size, to_size).to_json()
    except NotInTree as e:
        raise Misuse(str(e)) from None
    click.echo(json.dumps(document))


def _check(path: Path, key_path: Path) -> None:
    from service.evidence.errors import EvidenceError, KeyFileError
    from service.evidence.keys import load_public_key
    from service.evidence.proofs import proof_from_json

    try:
        key = load_public_key(key_path)
    except KeyFileError as e:
        raise Misuse(first_line(str(e))) from None
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise Misuse(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ProblemFound(f"{path}: not a proof document (not UTF-8)") from None
    try:
        document = proof_from_json(json.loads(text))
        document.verify(key)
    except ValueError as e:
        raise ProblemFound(f"{path}: not a proof document ({first_line(str(e))})") from None
    except EvidenceError as e:
        raise ProblemFound(f"{path}: the proof fails: {first_line(str(e))}") from None
    kind = "inclusion" if document.to_json()["type"] == "inclusion" else "consistency"
    click.echo(f"{path}: the {kind} proof holds")
    sys.exit(0)

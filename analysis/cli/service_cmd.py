"""`sniff serve` and `sniff demo`: the service and its event log (`sniff query`: query_cmd)."""

from __future__ import annotations

import sys

import click

from analysis.cli.errors import Misuse, first_line
from analysis.cli.options import (
    DEMO_MATCHES_MAX,
    bots_option,
    check_seed_run,
    db_option,
    matches_option,
    round_limit_option,
    seed_option,
    variant_option,
)
from analysis.cli.startup import check_address, check_tls_files, startup_failure
from service.defaults import DEFAULT_MAX_LIVE_MATCHES


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=50051, show_default=True)
@click.option(
    "--fsync/--no-fsync",
    "sync",
    default=True,
    show_default=True,
    help="Sync each acknowledged event to disk (survives power loss); without, "
    "acknowledged events survive a crash of the service but not of the machine.",
)
@click.option(
    "--house-key-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="A file holding the house key: CreateMatch and explicit deals then need it "
    "(call metadata x-sniff-house-key).",
)
@click.option(
    "--arena-key-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="A file holding the arena key: bots may then register with the arena (Play, call "
    "metadata x-sniff-arena-key) and be seated by name (sniff tournament --remote); "
    "without it the arena is off.",
)
@click.option(
    "--max-live-matches",
    type=click.IntRange(1, 1_000_000),
    default=DEFAULT_MAX_LIVE_MATCHES,
    show_default=True,
    help="Matches in play at once; CreateMatch beyond is refused (RESOURCE_EXHAUSTED).",
)
@click.option(
    "--tls-cert",
    type=click.Path(dir_okay=False),
    default=None,
    help="PEM certificate chain: serve TLS only (use it beyond loopback; needs --tls-key).",
)
@click.option("--tls-key", type=click.Path(dir_okay=False), default=None, help="PEM private key.")
@click.option(
    "--signing-key-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="An Ed25519 key from `sniff keygen`: sign every head handed out and the tree of "
    "finished matches (docs/evidence.md).",
)
@db_option
def serve(
    host: str,
    port: int,
    sync: bool,
    house_key_file: str | None,
    arena_key_file: str | None,
    max_live_matches: int,
    tls_cert: str | None,
    tls_key: str | None,
    signing_key_file: str | None,
    db_path: str,
) -> None:
    """Run the gRPC service, logging every event to the DuckDB file.

    SIGTERM (or Ctrl-C) drains in-flight calls, flushes the log and exits 0.
    A start that cannot happen (the log cannot be created or is not a Sniff
    event log, another service holds it, the address cannot be bound, with
    the OS's reason, a certificate or key that is not readable PEM or not a
    pair) is one line on stderr and exit status 2, checked before anything
    is created.

    Example: sniff serve --port 50051 --db sniff.duckdb
    """
    from pathlib import Path

    from service.evidence.errors import KeyFileError
    from service.evidence.keys import load_signing_key
    from service.rpc.server import Tls, read_house_key
    from service.rpc.server import serve as run

    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    house_key = tls = None
    try:
        if house_key_file is not None:
            house_key = read_house_key(house_key_file)
    except (OSError, ValueError) as e:
        raise click.BadParameter(str(e), param_hint="--house-key-file") from None
    arena_key = None
    try:
        if arena_key_file is not None:
            arena_key = read_house_key(arena_key_file, "arena key")
    except (OSError, ValueError) as e:
        raise click.BadParameter(str(e), param_hint="--arena-key-file") from None
    signer = None
    if signing_key_file is not None:
        try:
            signer = load_signing_key(Path(signing_key_file))
        except KeyFileError as e:
            raise Misuse(f"--signing-key-file: {first_line(str(e))}") from None
    if tls_cert is not None and tls_key is not None:
        tls = Tls(*check_tls_files(tls_cert, tls_key))
    check_address(host, port)
    try:
        sys.exit(
            run(
                f"{host}:{port}",
                db_path,
                sync=sync,
                house_key=house_key,
                max_live_matches=max_live_matches,
                tls=tls,
                signer=signer,
                arena_key=arena_key,
            )
        )
    except Exception as e:
        failure = startup_failure(e, f"{host}:{port}", db_path)
        if failure is None:
            raise
        raise failure from None


@click.command()
@matches_option(3, DEMO_MATCHES_MAX, "How many matches; seat counts cycle 2, 3, 4.")
@seed_option(1, "Seed of the first match; match i gets seed + i.")
@bots_option("greedy,random")
@variant_option
@round_limit_option
@db_option
def demo(
    count: int,
    seed: int,
    bots: tuple[str, ...],
    variant: str,
    round_limit: int | None,
    db_path: str,
) -> None:
    """Start the service, play matches between bot clients over gRPC, and report from the log.

    The bots are real gRPC clients that each hold only their own seat's
    token. Seat counts cycle 2, 3, 4. Every event lands in the DuckDB file.

    Example: sniff demo --matches 3 --db sniff.duckdb
    """
    from analysis.logquery import query_service
    from analysis.remote import connect, play_remote_match
    from service.rpc.server import create_server
    from sniff.seeds import match_seed

    check_seed_run(seed, count)
    try:
        running = create_server("127.0.0.1:0", db_path)
    except Exception as e:
        failure = startup_failure(e, "127.0.0.1:0", db_path)
        if failure is None:
            raise
        raise failure from None
    try:
        click.echo(f"service on {running.address}, event log {db_path}")
        stub = connect(running.address)
        for i in range(count):
            seats = (2, 3, 4)[i % 3]
            played = play_remote_match(
                stub, seats, bots, match_seed(seed, i), variant=variant, round_limit=round_limit
            )
            result = "a draw" if played.winner is None else f"seat {played.winner} wins"
            click.echo(
                f"match {played.match_id}: {variant}, {seats} seats, {played.rounds} rounds, "
                f"{played.moves} moves; {result}, scores {played.scores}"
            )
        table = query_service(
            running.address,
            "SELECT count(DISTINCT match_id) AS matches, count(*) AS events, "
            "count(*) FILTER (WHERE kind = 'action') AS actions FROM events",
            token=running.query_token,
        )
        row = table.to_pylist()[0]
        click.echo(
            f"event log now holds {row['matches']} matches, {row['events']} events, "
            f"{row['actions']} actions"
        )
    finally:
        running.stop()

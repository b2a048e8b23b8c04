"""`sniff serve`, `sniff demo` and `sniff query`: the service and its event log."""

from __future__ import annotations

import json
import sys

import click

from analysis.cli.options import db_option
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
@db_option
def serve(
    host: str,
    port: int,
    sync: bool,
    house_key_file: str | None,
    max_live_matches: int,
    tls_cert: str | None,
    tls_key: str | None,
    db_path: str,
) -> None:
    """Run the gRPC service, logging every event to the DuckDB file.

    SIGTERM (or Ctrl-C) drains in-flight calls, flushes the log and exits 0.

    Example: sniff serve --port 50051 --db sniff.duckdb
    """
    from service.server import Tls, read_house_key
    from service.server import serve as run
    from service.storage import LogLocked, SchemaVersionError

    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    house_key = tls = None
    try:
        if house_key_file is not None:
            house_key = read_house_key(house_key_file)
    except (OSError, ValueError) as e:
        raise click.BadParameter(str(e), param_hint="--house-key-file") from None
    try:
        if tls_cert is not None and tls_key is not None:
            tls = Tls.from_files(tls_cert, tls_key)
    except OSError as e:
        raise click.BadParameter(str(e), param_hint="--tls-cert/--tls-key") from None
    try:
        sys.exit(
            run(
                f"{host}:{port}",
                db_path,
                sync=sync,
                house_key=house_key,
                max_live_matches=max_live_matches,
                tls=tls,
            )
        )
    except (LogLocked, SchemaVersionError, OSError) as e:
        raise click.ClickException(str(e)) from None


@click.command()
@click.option("--matches", "count", type=click.IntRange(1, 100), default=3, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option(
    "--bots", default="greedy,random", show_default=True, help="random or greedy, per seat."
)
@db_option
def demo(count: int, seed: int, bots: str, db_path: str) -> None:
    """Start the service, play matches between bot clients over gRPC, and report from the log.

    The bots are real gRPC clients that each hold only their own seat's
    token. Seat counts cycle 2, 3, 4. Every event lands in the DuckDB file.

    Example: sniff demo --matches 3 --db sniff.duckdb
    """
    from analysis.remote import connect, play_remote_match, query_remote
    from service.server import create_server
    from service.storage import LogLocked

    names = [b.strip() for b in bots.split(",") if b.strip()]
    if not names or any(n not in ("random", "greedy") for n in names):
        raise click.BadParameter("bots are 'random' or 'greedy'", param_hint="--bots")
    try:
        running = create_server("127.0.0.1:0", db_path)
    except LogLocked as e:
        raise click.ClickException(f"{e} (stop that service, or pass another --db)") from None
    try:
        click.echo(f"service on {running.address}, event log {db_path}")
        stub = connect(running.address)
        for i in range(count):
            seats = (2, 3, 4)[i % 3]
            played = play_remote_match(stub, seats, names, seed + i)
            click.echo(
                f"match {played.match_id}: {seats} seats, {played.rounds} rounds, "
                f"{played.moves} moves; seat {played.winner} wins, scores {played.scores}"
            )
        table = query_remote(
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


@click.command()
@click.argument("sql")
@click.option("-p", "--param", "params", multiple=True, help="A bound parameter (repeatable).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "jsonl", "csv"]),
    default="table",
    show_default=True,
)
@click.option(
    "--tls-ca",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    envvar="SNIFF_TLS_CA",
    help="PEM CA certificate to trust when the service speaks TLS (env SNIFF_TLS_CA).",
)
@db_option
def query(sql: str, params: tuple[str, ...], fmt: str, tls_ca: str | None, db_path: str) -> None:
    """Run one read-only SQL query over the event log, even while the service runs.

    When a service holds the file the query goes through its Query RPC;
    otherwise the file is opened read-only. Parameters bind to ? or $1, $2.

    Example: sniff query "SELECT kind, count(*) FROM events GROUP BY kind"
    """
    import csv

    from analysis.logquery import NoLog, query_log
    from service.storage import StorageError

    values = [_value(p) for p in params]
    try:
        table, _ = query_log(db_path, sql, values, tls_ca=tls_ca)
    except (NoLog, StorageError) as e:
        raise click.ClickException(str(e)) from None
    except Exception as e:  # a gRPC refusal from the service
        details = getattr(e, "details", None)
        raise click.ClickException(details() if callable(details) else str(e)) from None
    rows = table.to_pylist()
    if fmt == "jsonl":
        for row in rows:
            click.echo(json.dumps(row, default=str))
    elif fmt == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(table.column_names)
        writer.writerows([row[c] for c in table.column_names] for row in rows)
    else:
        click.echo(_render(table.column_names, rows))


def _value(text: str) -> object:
    try:
        return int(text)
    except ValueError:
        return text


def _render(columns: list[str], rows: list[dict[str, object]]) -> str:
    cells = [[str(r[c]) for c in columns] for r in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)

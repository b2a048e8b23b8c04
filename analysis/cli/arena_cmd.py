"""`sniff arena-bot`: a bot registered with a service's arena, playing what it is handed."""

from __future__ import annotations

import threading

import click

from analysis.cli.errors import Misuse
from analysis.cli.interrupts import stopping
from analysis.cli.options import tls_ca_option


@click.command("arena-bot")
@click.option("--server", metavar="HOST:PORT", required=True, help="The service with the arena.")
@click.option(
    "--name",
    required=True,
    help="The name to register under: 1 to 64 letters, digits, '.', '_', '-'.",
)
@click.option(
    "--bot",
    "kind",
    default="greedy",
    show_default=True,
    help="The bot that plays each seat handed (random, greedy, rollout, ismcts), seeded as "
    "the organiser says.",
)
@click.option(
    "--arena-key-file",
    type=click.Path(dir_okay=False),
    required=True,
    help="A file holding the service's arena key.",
)
@tls_ca_option
def arena_bot(server: str, name: str, kind: str, arena_key_file: str, tls_ca: str | None) -> None:
    """Register a bot with the arena of the service at --server and play every seat it is
    handed, until Ctrl-C.

    The bot stays connected; when the connection drops (the service restarts)
    it connects again and registers with the resume secret it was given,
    getting back its seats of matches still in play (docs/service.md, The
    arena). A refusal for good (a wrong key, a name another bot holds) is one
    line and exit status 2.

    Example: sniff arena-bot --server HOST:50051 --name alice --bot greedy
    --arena-key-file arena.key
    """
    import grpc

    from analysis.arena_bot import ArenaBotState, bot_factory, run_arena_bot
    from service.rpc.bounds import BOT_NAME
    from service.rpc.server import read_house_key

    if not BOT_NAME.fullmatch(name):
        raise Misuse(f"--name: {name!r} is not a bot name (letters, digits, '.', '_', '-')")
    try:
        make = bot_factory(kind)
    except ValueError as e:
        raise Misuse(f"--bot: {e}") from None
    try:
        key = read_house_key(arena_key_file, "arena key").decode()
    except (OSError, ValueError) as e:
        raise Misuse(str(e)) from None
    state = ArenaBotState(name)
    stop = threading.Event()
    click.echo(f"{name}: a {kind} bot for the arena at {server}", err=True)
    try:
        with stopping(stop):  # the bot's watcher closes its channel: the stream ends cleanly
            run_arena_bot(server, name, make, key, tls_ca=tls_ca, stop=stop, state=state)
    except grpc.RpcError as e:
        if not stop.is_set():
            raise Misuse(f"the arena refused {name}: {e.code().name}: {e.details()}") from None
    except ValueError:  # the channel closed by a stop as the stream began
        if not stop.is_set():
            raise
    click.echo(f"{name}: stopped after {state.registrations} registrations", err=True)

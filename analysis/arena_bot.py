"""A bot of the arena: registers by name on a Play stream and plays the seats it is handed.

It is the Play sample bot (analysis/remote_play.py) with another first
message: `register` instead of `open` (docs/service.md, "The arena"). It
stays connected until stopped; when the stream drops (the service restarts,
the network fails) it connects again and registers with the resume secret
it was given, so it keeps its name and gets back the seats of matches still
in play.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc

from analysis.remote import channel
from analysis.remote_play import StreamSeat, play_stream
from service.arena import ARENA_KEY_HEADER
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from sniff import Bot, make_bot

RETRY_SECONDS = 0.5
"""The first wait before connecting again after a drop; it doubles up to `RETRY_MAX`."""
RETRY_MAX = 5.0
REFUSALS_KEPT = 100

RETRIED = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED})
"""Drops worth connecting again after: the service is away or stopping, or the connection
broke. Any other status (a wrong key, a name taken) is the bot's to fix: it ends."""


@dataclass
class ArenaBotState:
    """What an arena bot keeps across its streams, for its owner to read."""

    name: str
    resume_secret: str | None = None
    registrations: int = 0
    errors: list[str] = field(default_factory=list)
    registered: threading.Event = field(default_factory=threading.Event)
    refused: list[pb.PlayUpdate] = field(default_factory=list)
    """The last answers the service refused (`error` updates): a late answer after its
    seat ran out of time, say. The bot plays on."""
    held: dict[tuple[str, int], StreamSeat] = field(default_factory=dict)
    """The seats handed to it, by (match id, seat), until their match is over: the same
    bot plays a seat handed again after a drop."""


def bot_factory(kind: str) -> Callable[[int | None], Bot]:
    """A new bot of `kind` for each seat, seeded as the arena says (make_bot checks the kind)."""
    make_bot(kind, 0)
    return lambda seed: make_bot(kind, seed)


def run_arena_bot(
    address: str,
    name: str,
    make: Callable[[int | None], Bot],
    arena_key: str,
    *,
    tls_ca: str | None = None,
    stop: threading.Event | None = None,
    state: ArenaBotState | None = None,
) -> ArenaBotState:
    """Play as arena bot `name` until `stop` is set (then the stream is cancelled) or the
    service refuses the bot for good (its grpc.RpcError is raised)."""
    stop = stop or threading.Event()
    state = state or ArenaBotState(name)
    wait = RETRY_SECONDS
    while not stop.is_set():

        def on_update(update: pb.PlayUpdate) -> None:
            nonlocal wait
            if update.WhichOneof("kind") == "error":
                state.refused.append(update)
                del state.refused[:-REFUSALS_KEPT]
            if update.WhichOneof("kind") == "registered":
                state.resume_secret = update.registered.resume_secret
                state.registrations += 1
                state.registered.set()
                wait = RETRY_SECONDS

        register = pb.ArenaRegister(name=name)
        if state.resume_secret is not None:
            register.resume_secret = state.resume_secret
        with channel(address, tls_ca) as ch:
            stub = sniff_pb2_grpc.SniffServiceStub(ch)
            done = threading.Event()
            watcher = threading.Thread(
                target=_close_on_stop, args=(stop, done, ch), daemon=True, name=f"arena-{name}"
            )
            watcher.start()
            try:
                play_stream(
                    stub,
                    [],
                    on_update=on_update,
                    register=register,
                    make_bot=make,
                    metadata=[(ARENA_KEY_HEADER, arena_key)],
                    held=state.held,
                )
            except grpc.RpcError as exc:
                if stop.is_set():
                    break
                code = exc.code()
                state.errors.append(f"{code.name}: {exc.details()}")
                if code not in RETRIED:
                    raise
            finally:
                state.registered.clear()
                done.set()
        stop.wait(wait)
        wait = min(wait * 2, RETRY_MAX)
    return state


def _close_on_stop(stop: threading.Event, done: threading.Event, ch: grpc.Channel) -> None:
    """Close the channel once `stop` is set (the stream then ends, CANCELLED), unless the
    stream is `done` first."""
    while not stop.wait(0.1):
        if done.is_set():
            return
    ch.close()

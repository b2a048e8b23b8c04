"""Play and query through a running service, as any gRPC client would.

The demo and the CLI use these; they talk to the service only through the
public contract (`proto/sniff/v1/sniff.proto`), the same way a bot written in
another language does.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pyarrow as pa

from service.engine import Layout, Move, points_for
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc


def channel(address: str, tls_ca: str | Path | None = None) -> grpc.Channel:
    """A channel to a service: TLS trusting the PEM CA certificate `tls_ca` when given.

    Without `tls_ca`, the environment variable SNIFF_TLS_CA names one; without
    either, the channel is plaintext (fine on loopback only: tokens are secrets).
    """
    ca = tls_ca if tls_ca is not None else os.environ.get("SNIFF_TLS_CA") or None
    if ca is None:
        return grpc.insecure_channel(address)
    credentials = grpc.ssl_channel_credentials(root_certificates=Path(ca).read_bytes())
    return grpc.secure_channel(address, credentials)


def connect(address: str, tls_ca: str | Path | None = None) -> sniff_pb2_grpc.SniffServiceStub:
    return sniff_pb2_grpc.SniffServiceStub(channel(address, tls_ca))


def _layout_of(state: pb.MatchState) -> Layout:
    layout = Layout()
    for placed in state.layout_tiles:
        text = f"{placed.tile.low}-{placed.tile.high}"
        if placed.side:
            board = f"{placed.board_tile.low}-{placed.board_tile.high}"
            text += f"@{board}:{pb.Side.Name(placed.side)[5:].lower()}"
        layout.place(Move.parse(text))
    return layout


Chooser = Callable[[pb.MatchState, list[pb.Move], random.Random], pb.Move]


def choose_random(state: pb.MatchState, moves: list[pb.Move], rng: random.Random) -> pb.Move:
    return rng.choice(moves)


def choose_greedy(state: pb.MatchState, moves: list[pb.Move], rng: random.Random) -> pb.Move:
    """The move scoring most at once, judged on the layout the seat sees."""
    if len(moves) == 1 or moves[0].WhichOneof("kind") not in ("lead", "place"):
        return moves[0]
    layout = _layout_of(state)
    scored = [(points_for(layout.ends_after(Move.parse(m.notation))), m) for m in moves]
    top = max(p for p, _ in scored)
    return rng.choice([m for p, m in scored if p == top])


CHOOSERS: dict[str, Chooser] = {"random": choose_random, "greedy": choose_greedy}


@dataclass
class PlayedMatch:
    match_id: str
    seats: int
    winner: int
    scores: list[int]
    rounds: int
    moves: int


def play_remote_match(
    stub: sniff_pb2_grpc.SniffServiceStub,
    seats: int,
    bots: Sequence[str],
    seed: int,
    on_action: Callable[[pb.ApplyMoveResponse], Any] | None = None,
) -> PlayedMatch:
    """Create a match and play it to its end, each seat a bot holding only its own token."""
    created = stub.CreateMatch(pb.CreateMatchRequest(seat_count=seats, seed=seed))
    match_id, tokens = created.match_id, list(created.seat_tokens)
    rngs = [random.Random(seed * 10 + s) for s in range(seats)]
    choosers = [CHOOSERS[bots[s % len(bots)]] for s in range(seats)]
    turn: int | None = created.turn
    move_count = 0
    rounds = 1
    while True:
        if turn is None:
            stub.DealRound(pb.DealRoundRequest(match_id=match_id, token=tokens[0]))
            rounds += 1
            state = stub.GetState(pb.GetStateRequest(match_id=match_id, token=tokens[0])).state
            turn = state.turn
            continue
        seat = turn
        state = stub.GetState(pb.GetStateRequest(match_id=match_id, token=tokens[seat])).state
        moves = list(
            stub.ListLegalMoves(
                pb.ListLegalMovesRequest(match_id=match_id, token=tokens[seat], seat=seat)
            ).moves
        )
        move = choosers[seat](state, moves, rngs[seat])
        reply = stub.ApplyMove(
            pb.ApplyMoveRequest(
                match_id=match_id,
                token=tokens[seat],
                seat=seat,
                notation=move.notation,
                expected_move_count=move_count,
            )
        )
        move_count = reply.move_count
        if on_action is not None:
            on_action(reply)
        if reply.HasField("match_end"):
            return PlayedMatch(
                match_id,
                seats,
                reply.match_end.winner,
                list(reply.match_end.scores),
                rounds,
                move_count,
            )
        turn = reply.turn if reply.HasField("turn") else None


def query_remote(
    address: str,
    sql: str,
    params: Sequence[Any] = (),
    *,
    token: str,
    tls_ca: str | Path | None = None,
) -> pa.Table:
    """Run a read-only query through a service's Query RPC; the result as one Arrow table.

    `token` is the service's query token (`<db>.owner.json`); `tls_ca` as for `channel`.
    """
    request = pb.QueryRequest(sql=sql, parameters=[_param(v) for v in params], token=token)
    with channel(address, tls_ca) as chan:
        stub = sniff_pb2_grpc.SniffServiceStub(chan)
        data = b"".join(chunk.arrow_ipc for chunk in stub.Query(request))
    return pa.ipc.open_stream(data).read_all()


def _param(value: Any) -> pb.QueryParameter:
    if value is None:
        return pb.QueryParameter(null_value=0)
    if isinstance(value, bool):
        return pb.QueryParameter(bool_value=value)
    if isinstance(value, int):
        return pb.QueryParameter(int64_value=value)
    if isinstance(value, float):
        return pb.QueryParameter(double_value=value)
    return pb.QueryParameter(string_value=str(value))

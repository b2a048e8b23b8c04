"""Play and query through a running service, as any gRPC client would.

The demo and the CLI use these; they talk to the service only through the
public contract (`proto/sniff/v1/sniff.proto`), the same way a bot written in
another language does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from service.engine import Layout, Move, make_bot, points_for
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc


def connect(address: str) -> sniff_pb2_grpc.SniffServiceStub:
    return sniff_pb2_grpc.SniffServiceStub(grpc.insecure_channel(address))


def _layout_of(state: pb.MatchState) -> Layout:
    layout = Layout()
    for placed in state.layout_tiles:
        text = f"{placed.tile.low}-{placed.tile.high}"
        if placed.side:
            board = f"{placed.board_tile.low}-{placed.board_tile.high}"
            text += f"@{board}:{pb.Side.Name(placed.side)[5:].lower()}"
        layout.place(Move.parse(text))
    return layout


class RemoteView:
    """A seat's position as the service served it, for the engine's bots (`PlayerView`)."""

    def __init__(self, state: pb.MatchState, moves: Sequence[pb.Move]) -> None:
        self._state = state
        self._moves = [Move.parse(m.notation) for m in moves]
        self._layout: Layout | None = None

    def legal_moves(self) -> list[Move]:
        return list(self._moves)

    def points_after(self, move: Move) -> int:
        if self._layout is None:
            self._layout = _layout_of(self._state)
        return points_for(self._layout.ends_after(move))


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
    players = [make_bot(bots[s % len(bots)], seed * 10 + s) for s in range(seats)]
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
        move = players[seat].choose(RemoteView(state, moves))
        reply = stub.ApplyMove(
            pb.ApplyMoveRequest(
                match_id=match_id,
                token=tokens[seat],
                seat=seat,
                notation=move.text,
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

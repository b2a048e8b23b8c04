"""Play and query through a running service, as any gRPC client would.

The demo and the CLI use these; they talk to the service only through the
public contract (`proto/sniff/v1/sniff.proto`), the same way a bot written in
another language does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from analysis.bot_matches import bot_players
from service.rpc.bounds import MAX_ANALYSIS_MILLIS, MAX_ANALYSIS_ROLLOUTS
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from sniff import AMERICAN, BERNDT, BRITISH, STUBBY, Layout, Move, points_for


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


class HealthClient(Protocol):
    """What the health service's generated client stub holds (its stubs declare none of it)."""

    Check: grpc.UnaryUnaryMultiCallable[
        health_pb2.HealthCheckRequest, health_pb2.HealthCheckResponse
    ]


def health_client(channel: grpc.Channel) -> HealthClient:
    """The health service's stub on `channel`, typed."""
    return cast(HealthClient, health_pb2_grpc.HealthStub(channel))


_VARIANTS = {
    pb.VARIANT_UNSPECIFIED: AMERICAN,
    pb.VARIANT_AMERICAN: AMERICAN,
    pb.VARIANT_STUBBY: STUBBY,
    pb.VARIANT_BERNDT: BERNDT,
    pb.VARIANT_BRITISH: BRITISH,
}


def _layout_of(state: pb.MatchState) -> Layout:
    """The layout a state shows, rebuilt under the match's variant (the Sniff's orientation
    is named only where the variant gives the player a choice)."""
    variant = _VARIANTS[state.variant]
    layout = Layout(variant)
    for placed in state.layout_tiles:
        text = f"{placed.tile.low}-{placed.tile.high}"
        if placed.side:
            board = f"{placed.board_tile.low}-{placed.board_tile.high}"
            text += f"@{board}:{pb.Side.Name(placed.side)[5:].lower()}"
        if placed.sniff and variant.has_choice and placed.orientation:
            text += "/" + pb.Orientation.Name(placed.orientation)[12:].lower()
        layout.place(Move.parse(text))
    return layout


Analyzer = Callable[[pb.AnalysisBudget, int], pb.AnalyzeResponse]
"""Asks the service to analyse the seat's position (the Analyze RPC with its token)."""


class RemoteView:
    """A seat's position as the service served it, for the engine's bots (`PlayerView`).

    It holds no history of the round, so the `rollout` bot cannot sample from it
    here: `ranked_moves` asks the service, which analyses the very same view
    (the Analyze RPC with the seat's token)."""

    def __init__(
        self, state: pb.MatchState, moves: Sequence[pb.Move], analyzer: Analyzer | None = None
    ) -> None:
        self._state = state
        self._moves = [Move.parse(m.notation) for m in moves]
        self._layout: Layout | None = None
        self._analyzer = analyzer
        self.target = state.target
        self.own_score = state.scores[state.viewer_seat] if state.HasField("viewer_seat") else None

    def ranked_moves(self, rollouts: int | None, millis: float | None, seed: int) -> list[Move]:
        """The legal moves, best first, by the service's rollouts under this budget."""
        if self._analyzer is None:
            raise TypeError("this view was served without a way to ask for an analysis")
        budget = pb.AnalysisBudget()
        if rollouts is not None:
            budget.rollouts = min(rollouts, MAX_ANALYSIS_ROLLOUTS)
        if millis is not None:
            budget.deadline_millis = max(1, min(round(millis), MAX_ANALYSIS_MILLIS))
        reply = self._analyzer(budget, seed)
        return [Move.parse(m.move.notation) for m in reply.moves]

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
    winner: int | None
    """None for a draw at the round limit."""
    scores: list[int]
    rounds: int
    moves: int


def play_remote_match(
    stub: sniff_pb2_grpc.SniffServiceStub,
    seats: int,
    bots: Sequence[str],
    seed: int,
    on_action: Callable[[pb.ApplyMoveResponse], Any] | None = None,
    *,
    variant: str = "american",
    round_limit: int | None = None,
) -> PlayedMatch:
    """Create a match and play it to its end, each seat a bot holding only its own token."""
    request = pb.CreateMatchRequest(
        seat_count=seats, seed=seed, variant=f"VARIANT_{variant.upper()}"
    )
    if round_limit is not None:
        request.round_limit = round_limit
    created = stub.CreateMatch(request)
    match_id, tokens = created.match_id, list(created.seat_tokens)
    players = bot_players(seats, bots, seed)
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
        token = tokens[seat]

        def analyzer(budget: pb.AnalysisBudget, seed: int, token: str = token) -> Any:
            request = pb.AnalyzeRequest(match_id=match_id, token=token, budget=budget, seed=seed)
            return stub.Analyze(request)

        move = players[seat].choose(RemoteView(state, moves, analyzer))
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
            end = reply.match_end
            return PlayedMatch(
                match_id,
                seats,
                end.winner if end.HasField("winner") else None,
                list(end.scores),
                rounds,
                move_count,
            )
        turn = reply.turn if reply.HasField("turn") else None

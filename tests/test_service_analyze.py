"""The Analyze and AnalyzePosition RPCs through a real server: ranked legal moves by rollout
equity, the same figures for a live match and for the position its seat sees, and every bad
input refused with INVALID_ARGUMENT and the part at fault."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

import service.analyses as analyses
from service.analyses import AnalysisPool
from service.errors import LimitReached
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from tests.service_helpers import (
    RPC_TIMEOUT,
    Service,
    Stub,
    assert_refused,
    error_info,
    rpc_error,
    state,
)


@pytest.fixture(scope="module")
def svc(shared_svc: Service) -> Service:
    """One server for the whole module."""
    return shared_svc


@dataclass
class Table:
    """A match played through the service by a driver holding every token, keeping what each
    seat may know of the round: the public actions and its own draws."""

    stub: Stub
    created: pb.CreateMatchResponse
    seats: int
    actions: list[str] = field(default_factory=list)
    own_draws: dict[int, list[pb.Tile]] = field(default_factory=dict)
    leader: int = 0
    move_count: int = 0

    @classmethod
    def create(cls, stub: Stub, seats: int, seed: int, **kw: Any) -> Table:
        created = stub.CreateMatch(
            pb.CreateMatchRequest(seat_count=seats, seed=seed, **kw), timeout=RPC_TIMEOUT
        )
        return cls(stub, created, seats, leader=created.leader)

    @property
    def match_id(self) -> str:
        return self.created.match_id

    def state(self, seat: int | None = None) -> pb.MatchState:
        token = self.created.observer_token if seat is None else self.created.seat_tokens[seat]
        return state(self.stub, self.match_id, token)

    def legal(self, seat: int) -> list[str]:
        request = pb.ListLegalMovesRequest(
            match_id=self.match_id, token=self.created.seat_tokens[seat], seat=seat
        )
        return [m.notation for m in self.stub.ListLegalMoves(request, timeout=RPC_TIMEOUT).moves]

    def play(self, seat: int, notation: str) -> pb.ApplyMoveResponse:
        reply: pb.ApplyMoveResponse = self.stub.ApplyMove(
            pb.ApplyMoveRequest(
                match_id=self.match_id,
                token=self.created.seat_tokens[seat],
                seat=seat,
                notation=notation,
                expected_move_count=self.move_count,
            ),
            timeout=RPC_TIMEOUT,
        )
        self.move_count = reply.move_count
        self.actions.append(reply.move.notation)
        if reply.HasField("drawn_tile"):
            self.own_draws.setdefault(seat, []).append(reply.drawn_tile)
        return reply

    def deal(self) -> None:
        """The next round: what the seats know of the round starts again."""
        reply = self.stub.DealRound(
            pb.DealRoundRequest(match_id=self.match_id, token=self.created.observer_token),
            timeout=RPC_TIMEOUT,
        )
        self.leader = reply.leader
        self.actions = []
        self.own_draws = {}

    def position(self, seat: int, **kw: Any) -> pb.AnalyzePositionRequest:
        """The round as `seat` sees it, for AnalyzePosition."""
        st = self.state(seat)
        return pb.AnalyzePositionRequest(
            variant=st.variant,
            seat_count=self.seats,
            target=st.target,
            scores=list(st.scores),
            viewer_seat=seat,
            leader=self.leader,
            hand_tiles=list(st.viewer_tiles),
            actions=list(self.actions),
            own_draws=self.own_draws.get(seat, []),
            hand_sizes=list(st.hand_sizes),
            **kw,
        )

    def analyze(self, seat: int, **kw: Any) -> pb.AnalyzeResponse:
        request = pb.AnalyzeRequest(
            match_id=self.match_id, token=self.created.seat_tokens[seat], **kw
        )
        reply: pb.AnalyzeResponse = self.stub.Analyze(request, timeout=RPC_TIMEOUT)
        return reply


def budget(rollouts: int | None = None, millis: int | None = None) -> pb.AnalysisBudget:
    b = pb.AnalysisBudget()
    if rollouts is not None:
        b.rollouts = rollouts
    if millis is not None:
        b.deadline_millis = millis
    return b


def figures(moves: object) -> list[tuple[str, float, float, float, float]]:
    return [
        (m.move.notation, m.equity, m.standard_error, m.loss, m.loss_standard_error)
        for m in moves  # type: ignore[attr-defined]
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("seats", "variant"), [(2, "VARIANT_AMERICAN"), (3, "VARIANT_BRITISH")])
def test_a_live_match_and_the_position_its_seat_sees_get_the_same_ranked_moves(
    svc: Service, seats: int, variant: str
) -> None:
    table = Table.create(svc.stub, seats, 17, variant=pb.Variant.Value(variant))
    rng = random.Random(seats)
    analysed = 0
    while analysed < 5:
        st = table.state()
        assert st.phase != pb.MATCH_PHASE_OVER, "the match ended before five decisions"
        if st.phase == pb.MATCH_PHASE_AWAITING_DEAL:
            table.deal()
            continue
        seat = st.turn
        legal = table.legal(seat)
        if len(legal) > 1 and rng.random() < 0.5:
            seed = rng.getrandbits(64)
            live = table.analyze(seat, budget=budget(48), seed=seed)
            assert sorted(m.move.notation for m in live.moves) == sorted(legal)
            equities = [m.equity for m in live.moves]
            assert equities == sorted(equities, reverse=True)
            assert live.moves[0].loss == 0
            assert live.rollouts == 48
            assert live.seed == seed
            assert live.policy == pb.PLAYOUT_POLICY_GREEDY
            assert live.move_count == table.move_count
            stateless = svc.stub.AnalyzePosition(
                table.position(seat, budget=budget(48), seed=seed), timeout=RPC_TIMEOUT
            )
            assert figures(stateless.moves) == figures(live.moves)
            assert table.analyze(seat, budget=budget(48), seed=seed) == live
            analysed += 1
        table.play(seat, legal[rng.randrange(len(legal))])


@pytest.mark.slow
def test_a_time_budget_and_the_random_policy(svc: Service) -> None:
    table = Table.create(svc.stub, 4, 5)
    seat = table.state().turn
    reply = table.analyze(seat, budget=budget(millis=60), policy=pb.PLAYOUT_POLICY_RANDOM)
    assert reply.rollouts >= 32
    assert reply.rollouts % 32 == 0
    assert reply.policy == pb.PLAYOUT_POLICY_RANDOM
    both = table.analyze(seat, budget=budget(rollouts=40, millis=5000))
    assert both.rollouts == 40


def test_analyze_is_for_the_seat_to_play_with_its_own_token(svc: Service) -> None:
    table = Table.create(svc.stub, 3, 8)
    st = table.state()
    other = (st.turn + 1) % 3
    request = pb.AnalyzeRequest(match_id=table.match_id, token=table.created.seat_tokens[other])
    exc = rpc_error(svc.stub.Analyze, request)
    assert_refused(exc, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_NOT_YOUR_TURN")
    request = pb.AnalyzeRequest(match_id=table.match_id, token=table.created.observer_token)
    exc = rpc_error(svc.stub.Analyze, request)
    assert_refused(exc, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_BAD_TOKEN", "seat")
    request = pb.AnalyzeRequest(match_id=table.match_id, token="not-a-token")
    assert_refused(rpc_error(svc.stub.Analyze, request), grpc.StatusCode.UNAUTHENTICATED)
    request = pb.AnalyzeRequest(match_id="0123456789abcdef", token="x")
    exc = rpc_error(svc.stub.Analyze, request)
    assert_refused(exc, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_MATCH_NOT_FOUND")
    request = pb.AnalyzeRequest(match_id="no-such-match", token="x")
    exc = rpc_error(svc.stub.Analyze, request)
    assert_refused(exc, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT")
    assert error_info(exc).metadata["field"] == "match_id"


@pytest.mark.parametrize(
    ("rollouts", "millis", "field_name"),
    [
        (0, None, "budget.rollouts"),
        (1, None, "budget.rollouts"),
        (10_001, None, "budget.rollouts"),
        (2**32 - 1, None, "budget.rollouts"),
        (None, 0, "budget.deadline_millis"),
        (None, 5_001, "budget.deadline_millis"),
    ],
)
def test_a_budget_of_nothing_or_an_absurd_one_is_invalid(
    svc: Service, rollouts: int | None, millis: int | None, field_name: str
) -> None:
    table = Table.create(svc.stub, 2, 3)
    seat = table.state().turn
    for call, request in (
        (
            svc.stub.Analyze,
            pb.AnalyzeRequest(
                match_id=table.match_id,
                token=table.created.seat_tokens[seat],
                budget=budget(rollouts, millis),
            ),
        ),
        (svc.stub.AnalyzePosition, table.position(seat, budget=budget(rollouts, millis))),
    ):
        exc = rpc_error(call, request)
        assert_refused(exc, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT")
        assert error_info(exc).metadata["field"] == field_name


@pytest.mark.slow
def test_impossible_positions_are_invalid_with_the_part_at_fault(svc: Service) -> None:
    table = Table.create(svc.stub, 2, 11)
    rng = random.Random(2)
    for _ in range(7):
        seat = table.state().turn
        legal = table.legal(seat)
        table.play(seat, legal[rng.randrange(len(legal))])
    seat = table.state().turn
    good = table.position(seat, budget=budget(8))
    assert svc.stub.AnalyzePosition(good, timeout=RPC_TIMEOUT).moves

    def refused(request: pb.AnalyzePositionRequest, field_name: str, *words: str) -> None:
        exc = rpc_error(svc.stub.AnalyzePosition, request)
        assert_refused(exc, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT", *words)
        assert error_info(exc).metadata["field"] in field_name.split("|")
        assert error_info(exc).metadata["kind"] in ("impossible_position", "")

    twice = pb.AnalyzePositionRequest()
    twice.CopyFrom(good)
    twice.hand_tiles[1].CopyFrom(twice.hand_tiles[0])
    refused(twice, "hand_tiles", "twice")
    sizes = pb.AnalyzePositionRequest()
    sizes.CopyFrom(good)
    sizes.hand_sizes[1 - seat] += 1
    refused(sizes, "hand_sizes", "do not add up")
    illegal = pb.AnalyzePositionRequest()
    illegal.CopyFrom(good)
    illegal.actions[2] = illegal.actions[0]
    refused(illegal, "actions[2]", "not legal")
    other = pb.AnalyzePositionRequest()
    other.CopyFrom(good)
    other.viewer_seat = 1 - seat
    refused(other, "hand_tiles|hand_sizes|own_draws")  # the hand belongs to another seat
    over = pb.AnalyzePositionRequest()
    over.CopyFrom(good)
    over.scores[0] = over.target
    refused(over, "scores", "target")
    too_many = pb.AnalyzePositionRequest()
    too_many.CopyFrom(good)
    del too_many.scores[:]
    refused(too_many, "scores", "one per seat")
    seats = pb.AnalyzePositionRequest()
    seats.CopyFrom(good)
    seats.seat_count = 5
    refused(seats, "seat_count")
    # A notation that does not parse is a malformed move, with its place.
    garbled = pb.AnalyzePositionRequest()
    garbled.CopyFrom(good)
    garbled.actions[1] = "9-9@1-2:up"
    exc = rpc_error(svc.stub.AnalyzePosition, garbled)
    assert_refused(exc, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_MALFORMED_MOVE", "actions")


def test_the_viewer_must_be_the_seat_to_play(svc: Service) -> None:
    table = Table.create(svc.stub, 3, 21)
    turn = table.state().turn
    request = table.position((turn + 1) % 3)
    exc = rpc_error(svc.stub.AnalyzePosition, request)
    assert_refused(exc, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT", "turn")
    assert error_info(exc).metadata["field"] == "viewer_seat"


@pytest.mark.slow
def test_at_most_a_few_analyses_are_under_way_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond the limit a call is refused at once, not queued (the pool's own bound)."""
    monkeypatch.setattr(analyses, "MAX_ANALYSES", 2)
    pool = AnalysisPool(workers=1)

    async def three() -> list[object]:
        calls = [pool.run(time.sleep, 0.3) for _ in range(3)]
        return await asyncio.gather(*calls, return_exceptions=True)

    try:
        results = asyncio.run(three())
    finally:
        pool.close()
    assert results[:2] == [None, None]
    assert isinstance(results[2], LimitReached)

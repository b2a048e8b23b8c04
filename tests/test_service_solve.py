"""Solve: a whole position sent to a real server (127.0.0.1, its analysis workers) comes back
with the solver's exact values; bad positions and budgets are refused; a budget too small
gives "not solved" with bounds around the true values, never a value."""

from __future__ import annotations

import grpc
import pytest

from service.rpc.convert import move_from_pb
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from sniff import Match
from sniff.playout import PlayoutState
from sniff.solver import Budget, solve
from sniff.tiles import TILES
from tests.service_helpers import Service, assert_refused
from tests.test_solver import near_the_end


def request_of(match: Match, **budget: int) -> pb.SolveRequest:
    """The position of `match`'s round in play as a SolveRequest."""
    state = PlayoutState.of_match(match)
    hands = [
        pb.Hand(tiles=[pb.Tile(low=t.low, high=t.high) for t in TILES if mask >> int(t) & 1])
        for mask in state.hands
    ]
    msg = pb.SolveRequest(
        variant=f"VARIANT_{match.variant.name.upper()}",
        seat_count=match.seats,
        target=match.target,
        scores=[match.scores[match.teams[s]] for s in range(match.seats)],
        placements=[str(m) for m in state.placements],
        hands=hands,
        boneyard_tiles=[pb.Tile(low=TILES[t].low, high=TILES[t].high) for t in state.boneyard],
        turn=state.turn,
        budget=pb.SolveBudget(**budget),
    )
    if state.drawn >= 0:
        msg.drawn_tile.CopyFrom(pb.Tile(low=TILES[state.drawn].low, high=TILES[state.drawn].high))
    return msg


@pytest.mark.parametrize(("seats", "boneyard"), [(2, 0), (3, 2), (4, 0)])
def test_solve_gives_the_solvers_exact_values_for_every_move(
    svc: Service, seats: int, boneyard: int
) -> None:
    for position in near_the_end(seats, "american", 5, 3, max_tiles=7, max_boneyard=boneyard):
        reply = svc.stub.Solve(request_of(position.match), timeout=60)
        expected = solve(position.state, Budget(nodes=1_000_000), double_dummy=True)
        assert reply.solved
        assert [(move_from_pb(m.move), m.value) for m in reply.moves] == [
            (m.move, m.value) for m in expected.moves
        ]
        assert all(m.exact and m.low == m.value == m.high for m in reply.moves)
        assert move_from_pb(reply.best) == expected.best
        assert reply.value == reply.low == reply.high == expected.value
        assert tuple(move_from_pb(m) for m in reply.line_moves) == expected.line


def test_a_budget_too_small_says_not_solved_with_bounds_around_the_values(svc: Service) -> None:
    position = near_the_end(2, "american", 9, 1, max_tiles=12, max_boneyard=0)[0]
    expected = solve(position.state, Budget(nodes=5_000_000))
    reply = svc.stub.Solve(request_of(position.match, nodes=3), timeout=60)
    assert not reply.solved
    assert not reply.HasField("best")
    assert not reply.line_moves
    for got, true in zip(reply.moves, expected.moves, strict=True):
        assert got.low <= true.value <= got.high
    assert reply.low <= expected.value <= reply.high


def test_bad_positions_and_budgets_are_refused(svc: Service) -> None:
    position = near_the_end(2, "american", 3, 1, max_tiles=8, max_boneyard=0)[0]
    good = request_of(position.match)
    cases: list[tuple[pb.SolveRequest, str, str]] = []
    twice = pb.SolveRequest()
    twice.CopyFrom(good)
    twice.hands[1].tiles.append(twice.hands[0].tiles[0])  # a tile in two hands
    cases.append((twice, "ERROR_REASON_BAD_ARGUMENT", "position"))
    missing = pb.SolveRequest()
    missing.CopyFrom(good)
    del missing.hands[0].tiles[0]  # a tile nowhere
    cases.append((missing, "ERROR_REASON_BAD_ARGUMENT", "position"))
    seats = pb.SolveRequest()
    seats.CopyFrom(good)
    seats.seat_count = 5
    cases.append((seats, "ERROR_REASON_BAD_ARGUMENT", "seat_count"))
    junk = pb.SolveRequest()
    junk.CopyFrom(good)
    junk.placements.append("9-9")
    cases.append((junk, "ERROR_REASON_MALFORMED_MOVE", "placements"))
    budget = pb.SolveRequest()
    budget.CopyFrom(good)
    budget.budget.nodes = 0
    cases.append((budget, "ERROR_REASON_BAD_ARGUMENT", "budget.nodes"))
    turn = pb.SolveRequest()
    turn.CopyFrom(good)
    turn.turn = 3
    cases.append((turn, "ERROR_REASON_BAD_ARGUMENT", "turn"))
    for request, reason, words in cases:
        with pytest.raises(grpc.RpcError) as caught:
            svc.stub.Solve(request, timeout=60)
        assert_refused(caught.value, grpc.StatusCode.INVALID_ARGUMENT, reason, words)
    assert svc.stub.Solve(good, timeout=60).solved  # the service is unharmed

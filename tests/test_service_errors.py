"""Refusals: each wrong call gets its canonical status code, a message naming the rule, and
a google.rpc.ErrorInfo (domain sniff.v1, an ErrorReason); a refused move changes nothing.

Also: ScoreLayout reproduces the docs/rules.md worked examples, and a client that
walks away from a WatchMatch stream does not hurt the server.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message

from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from tests.service_helpers import (
    MAX_ACTIONS,
    RPC_TIMEOUT,
    Service,
    Stub,
    assert_refused,
    create,
    error_info,
    event_count,
    move_msg,
    parse_tile,
    play_step,
    play_to_end,
    rpc_error,
    state,
    total_events,
)

FAILED_PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
INVALID_ARGUMENT = grpc.StatusCode.INVALID_ARGUMENT
PERMISSION_DENIED = grpc.StatusCode.PERMISSION_DENIED

# Seat 0 leads and holds six of the seven sixes; seat 1 holds no six, so after
# 6-6 is led it must draw: first 0-0 (not placeable), then 5-6 (placeable).
HANDS = [
    ["6-6", "0-6", "1-6", "2-6", "3-6", "4-6", "1-1"],
    ["0-1", "0-2", "0-3", "0-4", "0-5", "1-2", "1-3"],
]
BONEYARD = ["0-0", "5-6", "1-4", "1-5", "2-2", "2-3", "2-4"]
BONEYARD += ["2-5", "3-3", "3-4", "3-5", "4-4", "4-5", "5-5"]


def deal_msg(hands: list[list[str]], boneyard: list[str], leader: int = 0) -> pb.Deal:
    return pb.Deal(
        hands=[pb.Hand(tiles=[parse_tile(t) for t in h]) for h in hands],
        boneyard_tiles=[parse_tile(t) for t in boneyard],
        leader=leader,
    )


@pytest.fixture
def dealt(svc: Service) -> pb.CreateMatchResponse:
    """A 2-seat match with the explicit deal above: seat 0 to lead."""
    request = pb.CreateMatchRequest(seat_count=2, seed=1, first_deal=deal_msg(HANDS, BONEYARD))
    created: pb.CreateMatchResponse = svc.stub.CreateMatch(request, timeout=RPC_TIMEOUT)
    assert created.leader == 0
    assert created.leader_choice == pb.LEADER_CHOICE_EXPLICIT
    return created


def apply(
    stub: Stub, created: pb.CreateMatchResponse, seat: int, notation: str, count: int
) -> pb.ApplyMoveResponse:
    request = pb.ApplyMoveRequest(
        match_id=created.match_id,
        token=created.seat_tokens[seat],
        seat=seat,
        notation=notation,
        expected_move_count=count,
    )
    reply: pb.ApplyMoveResponse = stub.ApplyMove(request, timeout=RPC_TIMEOUT)
    return reply


def snapshot(stub: Stub, created: pb.CreateMatchResponse) -> tuple[bytes, int, int]:
    """The observer's state (bytes), its move count, and the match's events in the log."""
    st = state(stub, created.match_id, created.observer_token)
    return (
        st.SerializeToString(deterministic=True),
        st.move_count,
        event_count(stub, created.match_id),
    )


def refused_move(
    stub: Stub,
    created: pb.CreateMatchResponse,
    seat: int,
    notation: str | pb.Move,
    code: grpc.StatusCode,
    reason: str,
    *words: str,
    kind: str | None = None,
) -> grpc.RpcError:
    """The move is refused as described, and the match (memory and log) is unchanged."""
    before = snapshot(stub, created)
    request = pb.ApplyMoveRequest(
        match_id=created.match_id,
        token=created.seat_tokens[seat],
        seat=seat,
        expected_move_count=before[1],
    )
    if isinstance(notation, str):
        request.notation = notation
    else:
        request.move.CopyFrom(notation)
    exc = rpc_error(stub.ApplyMove, request)
    assert_refused(exc, code, reason, *words)
    if kind is not None:
        assert error_info(exc).metadata["kind"] == kind
    assert snapshot(stub, created) == before
    return exc


# -- tokens --------------------------------------------------------------------------------


@pytest.mark.slow
def test_missing_or_unknown_token_is_refused_on_every_call(svc: Service) -> None:
    stub = svc.stub
    created = create(stub, 2, seed=7)
    other = create(stub, 2, seed=8)
    mid = created.match_id
    before = snapshot(stub, created)
    for token in ("", "not-a-token", other.observer_token, other.seat_tokens[0]):
        calls = [
            (stub.GetState, pb.GetStateRequest(match_id=mid, token=token)),
            (stub.GetScores, pb.GetScoresRequest(match_id=mid, token=token)),
            (stub.ListLegalMoves, pb.ListLegalMovesRequest(match_id=mid, token=token, seat=0)),
            (stub.DealRound, pb.DealRoundRequest(match_id=mid, token=token)),
            (stub.WatchMatch, pb.WatchMatchRequest(match_id=mid, token=token)),
            (
                stub.ApplyMove,
                pb.ApplyMoveRequest(match_id=mid, token=token, seat=created.turn, notation="draw"),
            ),
        ]
        for call, request in calls:
            exc = rpc_error(call, request)
            assert exc.code() in (grpc.StatusCode.UNAUTHENTICATED, PERMISSION_DENIED), (
                request,
                exc.code(),
            )
            assert_refused(exc, exc.code(), "ERROR_REASON_BAD_TOKEN", "token")
            assert token not in (exc.details() or "") or not token
    assert snapshot(stub, created) == before


@pytest.mark.slow
def test_another_seats_token_or_the_observer_may_not_move_or_see_its_moves(
    svc: Service, dealt: pb.CreateMatchResponse
) -> None:
    stub = svc.stub
    mid = dealt.match_id
    before = snapshot(stub, dealt)
    for token in (dealt.seat_tokens[1], dealt.observer_token):
        request: Message = pb.ApplyMoveRequest(match_id=mid, token=token, seat=0, notation="6-6")
        assert_refused(
            rpc_error(stub.ApplyMove, request), PERMISSION_DENIED, "ERROR_REASON_BAD_TOKEN"
        )
    request = pb.ListLegalMovesRequest(match_id=mid, token=dealt.seat_tokens[1], seat=0)
    assert_refused(
        rpc_error(stub.ListLegalMoves, request), PERMISSION_DENIED, "ERROR_REASON_BAD_TOKEN"
    )
    for seat in (2, 7):  # not a seat of a 2-seat match: a bad argument, whoever asks
        for token in (dealt.seat_tokens[0], dealt.observer_token):
            request = pb.ListLegalMovesRequest(match_id=mid, token=token, seat=seat)
            exc = rpc_error(stub.ListLegalMoves, request)
            assert_refused(exc, INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT", "seat")
            request = pb.ApplyMoveRequest(match_id=mid, token=token, seat=seat, notation="6-6")
            exc = rpc_error(stub.ApplyMove, request)
            assert_refused(exc, INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT", "seat")
    assert snapshot(stub, dealt) == before
    # The seat's own token works.
    assert apply(stub, dealt, 0, "6-6", 0).move_count == 1


def _match_calls(stub: Stub, match_id: str, token: str) -> list[tuple[Any, Message]]:
    return [
        (stub.GetState, pb.GetStateRequest(match_id=match_id, token=token)),
        (stub.GetScores, pb.GetScoresRequest(match_id=match_id, token=token)),
        (stub.ListLegalMoves, pb.ListLegalMovesRequest(match_id=match_id, token=token)),
        (stub.DealRound, pb.DealRoundRequest(match_id=match_id, token=token)),
        (stub.WatchMatch, pb.WatchMatchRequest(match_id=match_id, token=token)),
        (stub.ApplyMove, pb.ApplyMoveRequest(match_id=match_id, token=token, notation="draw")),
    ]


@pytest.mark.slow
def test_unknown_match_is_not_found(svc: Service) -> None:
    stub = svc.stub
    created = create(stub, 2, seed=9)
    for call, request in _match_calls(stub, "0123456789abcdef", created.observer_token):
        exc = rpc_error(call, request)
        assert_refused(exc, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_MATCH_NOT_FOUND")


@pytest.mark.slow
@pytest.mark.parametrize(
    "match_id", ["", "nope", "0123456789ABCDEF", "0123456789abcdef0", "é" * 16]
)
def test_a_match_id_not_of_the_id_form_is_an_invalid_argument(svc: Service, match_id: str) -> None:
    stub = svc.stub
    created = create(stub, 2, seed=9)
    for call, request in _match_calls(stub, match_id, created.observer_token):
        exc = rpc_error(call, request)
        assert_refused(exc, INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT", "match_id")


# -- illegal moves: FAILED_PRECONDITION, nothing changes -------------------------------------


@pytest.mark.slow
def test_illegal_moves_are_refused_naming_the_rule_and_change_nothing(
    svc: Service, dealt: pb.CreateMatchResponse
) -> None:
    stub = svc.stub
    ILLEGAL = "ERROR_REASON_ILLEGAL_MOVE"
    # Seat 0 to lead.
    refused_move(stub, dealt, 1, "0-1", FAILED_PRECONDITION, "ERROR_REASON_NOT_YOUR_TURN", "turn")
    refused_move(
        stub, dealt, 0, "0-1", FAILED_PRECONDITION, ILLEGAL, "not in .*hand", kind="not_in_hand"
    )
    refused_move(
        stub, dealt, 0, "draw", FAILED_PRECONDITION, ILLEGAL, "can be placed", kind="must_place"
    )
    refused_move(
        stub, dealt, 0, "pass", FAILED_PRECONDITION, ILLEGAL, "can be placed", kind="must_place"
    )
    refused_move(stub, dealt, 0, "1-6@6-6:line_a", FAILED_PRECONDITION, ILLEGAL, "empty.*lead")
    assert apply(stub, dealt, 0, "6-6", 0).points == 0  # the Sniff led: 12 is no multiple of 5
    # Seat 1 holds no six and the boneyard is full.
    refused_move(
        stub, dealt, 0, "1-6@6-6:line_a", FAILED_PRECONDITION, "ERROR_REASON_NOT_YOUR_TURN", "turn"
    )
    refused_move(
        stub, dealt, 1, "pass", FAILED_PRECONDITION, ILLEGAL, "boneyard.*draw", kind="cannot_pass"
    )
    refused_move(
        stub, dealt, 1, "0-1@6-6:line_a", FAILED_PRECONDITION, ILLEGAL, "value",
        kind="value_mismatch",
    )  # fmt: skip
    refused_move(
        stub, dealt, 1, "1-2@1-1:line_a", FAILED_PRECONDITION, ILLEGAL, "not on the layout",
        kind="no_open_side",
    )  # fmt: skip
    refused_move(
        stub, dealt, 1, "0-1@6-6:low", FAILED_PRECONDITION, ILLEGAL, "no low side",
        kind="no_open_side",
    )  # fmt: skip
    refused_move(
        stub, dealt, 1, "1-6@6-6:line_a", FAILED_PRECONDITION, ILLEGAL, "not in .*hand",
        kind="not_in_hand",
    )  # fmt: skip
    refused_move(
        stub, dealt, 1, "0-6@6-6:line_a", FAILED_PRECONDITION, ILLEGAL, "not in .*hand",
        kind="not_in_hand",
    )  # fmt: skip
    first = apply(stub, dealt, 1, "draw", 1)
    assert first.drawn_tile == parse_tile("0-0")
    assert first.turn == 1
    second = apply(stub, dealt, 1, "draw", 2)
    assert second.drawn_tile == parse_tile("5-6")
    # 5-6 is placeable: it must be placed now, nothing else.
    refused_move(
        stub, dealt, 1, "draw", FAILED_PRECONDITION, ILLEGAL, "must be placed",
        kind="must_place_drawn",
    )  # fmt: skip
    refused_move(
        stub, dealt, 1, "0-0@6-6:line_a", FAILED_PRECONDITION, ILLEGAL, "must be placed",
        kind="must_place_drawn",
    )  # fmt: skip
    refused_move(
        stub, dealt, 1, "5-6@6-6:line_b", FAILED_PRECONDITION, ILLEGAL, "line_a",
        kind="not_canonical",
    )  # fmt: skip
    refused_move(
        stub, dealt, 1, "5-6@6-6:branch_a", FAILED_PRECONDITION, ILLEGAL, "branch",
        kind="no_open_side",
    )  # fmt: skip
    # The same refusals for a structured move.
    refused_move(stub, dealt, 1, move_msg("5-6@6-6:line_b"), FAILED_PRECONDITION, ILLEGAL, "line_a")
    refused_move(stub, dealt, 1, move_msg("pass"), FAILED_PRECONDITION, ILLEGAL, "must be placed")
    assert apply(stub, dealt, 1, "5-6@6-6:line_a", 3).move_count == 4


@pytest.mark.slow
@pytest.mark.parametrize(
    "notation",
    ["", "1-9", "7-7", "foo", "1-4@", "1-4@1-1", "1-4@1-1:sideways", "1-4@9-9:low", "draw please"],
)
def test_malformed_notation_is_an_invalid_argument(
    svc: Service, dealt: pb.CreateMatchResponse, notation: str
) -> None:
    refused_move(
        svc.stub,
        dealt,
        0,
        notation,
        INVALID_ARGUMENT,
        "ERROR_REASON_MALFORMED_MOVE",
        kind="malformed",
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "move",
    [
        pb.Move(lead=pb.Move.Lead(tile=pb.Tile(low=9, high=9))),
        pb.Move(lead=pb.Move.Lead(tile=pb.Tile(low=9))),
        pb.Move(lead=pb.Move.Lead(tile=pb.Tile(low=4, high=1))),
        pb.Move(lead=pb.Move.Lead(tile=pb.Tile(low=1, high=7))),
        pb.Move(
            place=pb.Move.Place(
                tile=pb.Tile(low=0, high=6), board_tile=pb.Tile(low=9, high=9), side=pb.SIDE_LOW
            )
        ),
        pb.Move(
            place=pb.Move.Place(
                tile=pb.Tile(low=0, high=6),
                board_tile=pb.Tile(low=6, high=6),
                side=9,  # type: ignore[arg-type]  # no Side has this number: on purpose
            )
        ),
        pb.Move(place=pb.Move.Place(tile=pb.Tile(low=0, high=6), board_tile=pb.Tile(high=6))),
        pb.Move(),
        pb.Move(notation="6-6"),
    ],
    ids=[
        "low-9",
        "low-9-high-0",
        "low-above-high",
        "high-7",
        "board-9-9",
        "side-9",
        "no-side",
        "empty-move",
        "only-notation",
    ],
)
def test_a_bad_structured_move_is_an_invalid_argument(
    svc: Service, dealt: pb.CreateMatchResponse, move: pb.Move
) -> None:
    refused_move(svc.stub, dealt, 0, move, INVALID_ARGUMENT, "ERROR_REASON_MALFORMED_MOVE")


@pytest.mark.slow
def test_a_request_without_a_move_is_an_invalid_argument(
    svc: Service, dealt: pb.CreateMatchResponse
) -> None:
    stub = svc.stub
    before = snapshot(stub, dealt)
    request = pb.ApplyMoveRequest(match_id=dealt.match_id, token=dealt.seat_tokens[0], seat=0)
    exc = rpc_error(stub.ApplyMove, request)
    assert_refused(exc, INVALID_ARGUMENT, "ERROR_REASON_MALFORMED_MOVE", "move")
    assert snapshot(stub, dealt) == before


# -- creating and dealing ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("seats", [0, 1, 5, 100])
def test_a_bad_seat_count_is_an_invalid_argument(svc: Service, seats: int) -> None:
    exc = rpc_error(svc.stub.CreateMatch, pb.CreateMatchRequest(seat_count=seats))
    assert_refused(exc, INVALID_ARGUMENT, None, "seat")
    assert total_events(svc.stub) == 0


@pytest.mark.slow
def test_a_zero_target_is_an_invalid_argument(svc: Service) -> None:
    exc = rpc_error(svc.stub.CreateMatch, pb.CreateMatchRequest(seat_count=2, target=0))
    assert_refused(exc, INVALID_ARGUMENT, None, "target")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("hands", "boneyard", "leader"),
    [
        ([HANDS[0], [*HANDS[1][:-1], "6-6"]], [*BONEYARD[:-1], "1-3"], 0),  # 6-6 twice
        ([HANDS[0], HANDS[1]], [*BONEYARD[:-1], "0-0"], 0),  # 0-0 twice, 5-5 missing
        ([HANDS[0], HANDS[1][:-1]], [*BONEYARD, "1-3"], 0),  # a hand of 6
        ([HANDS[0], HANDS[1]], BONEYARD[:-1], 0),  # 27 tiles
        ([HANDS[0], HANDS[1]], BONEYARD, 2),  # no seat 2
        ([HANDS[0]], [*HANDS[1], *BONEYARD], 0),  # one hand for two seats
    ],
    ids=["duplicate", "duplicate-in-boneyard", "short-hand", "missing-tile", "leader", "hands"],
)
def test_a_bad_explicit_deal_is_an_invalid_argument(
    svc: Service, hands: list[list[str]], boneyard: list[str], leader: int
) -> None:
    request = pb.CreateMatchRequest(
        seat_count=2, seed=1, first_deal=deal_msg(hands, boneyard, leader)
    )
    exc = rpc_error(svc.stub.CreateMatch, request)
    assert_refused(exc, INVALID_ARGUMENT, "ERROR_REASON_BAD_DEAL")
    assert total_events(svc.stub) == 0


def test_a_deal_with_no_tile_of_the_set_is_an_invalid_argument(svc: Service) -> None:
    deal = deal_msg(HANDS, BONEYARD)
    deal.hands[0].tiles[0].low = 9
    exc = rpc_error(svc.stub.CreateMatch, pb.CreateMatchRequest(seat_count=2, first_deal=deal))
    assert exc.code() == INVALID_ARGUMENT
    assert error_info(exc).domain == "sniff.v1"


def _play_until(
    stub: Stub, created: pb.CreateMatchResponse, phase: int, rng: random.Random
) -> pb.MatchState:
    for _ in range(MAX_ACTIONS):
        st = state(stub, created.match_id, created.observer_token)
        if st.phase == phase:
            return st
        assert st.phase == pb.MATCH_PHASE_PLAYING, "the match left the phases this test expects"
        assert play_step(stub, created, rng) is not None
    raise AssertionError("the phase was not reached")


@pytest.mark.slow
def test_dealing_while_a_round_is_in_play_or_after_the_end_is_refused(svc: Service) -> None:
    stub = svc.stub
    created = create(stub, 2, seed=17, target=1000)
    mid, obs = created.match_id, created.observer_token
    before = snapshot(stub, created)
    for token in (obs, created.seat_tokens[0]):
        exc = rpc_error(stub.DealRound, pb.DealRoundRequest(match_id=mid, token=token))
        assert_refused(exc, FAILED_PRECONDITION, "ERROR_REASON_WRONG_PHASE", "round is in play")
    assert snapshot(stub, created) == before

    # Between rounds: moving is the wrong phase; an explicit deal needs the observer.
    st = _play_until(stub, created, pb.MATCH_PHASE_AWAITING_DEAL, random.Random(17))
    before = snapshot(stub, created)
    for seat in range(2):
        refused_move(
            stub, created, seat, "draw", FAILED_PRECONDITION, "ERROR_REASON_WRONG_PHASE", "round"
        )
    explicit = deal_msg(HANDS, BONEYARD, leader=0)
    for token in created.seat_tokens:
        request = pb.DealRoundRequest(match_id=mid, token=token, deal=explicit)
        exc = rpc_error(stub.DealRound, request)
        assert_refused(exc, PERMISSION_DENIED, "ERROR_REASON_BAD_TOKEN", "observer")
    bad = deal_msg([HANDS[0], [*HANDS[1][:-1], "6-6"]], [*BONEYARD[:-1], "1-3"])
    exc = rpc_error(stub.DealRound, pb.DealRoundRequest(match_id=mid, token=obs, deal=bad))
    assert_refused(exc, INVALID_ARGUMENT, "ERROR_REASON_BAD_DEAL")
    assert snapshot(stub, created) == before
    # Any seat token may deal from the generator.
    dealt = stub.DealRound(
        pb.DealRoundRequest(match_id=mid, token=created.seat_tokens[1]), timeout=RPC_TIMEOUT
    )
    assert dealt.round_index == st.round_index + 1


@pytest.mark.slow
def test_after_the_match_is_won_nothing_more_happens(svc: Service) -> None:
    stub = svc.stub
    created = create(stub, 3, seed=5, target=20)
    play_to_end(stub, created, random.Random(5))
    st = state(stub, created.match_id, created.observer_token)
    assert st.phase == pb.MATCH_PHASE_OVER
    before = snapshot(stub, created)
    refused_move(
        stub, created, st.winner, "draw", FAILED_PRECONDITION, "ERROR_REASON_WRONG_PHASE", "over"
    )
    request = pb.DealRoundRequest(match_id=created.match_id, token=created.observer_token)
    exc = rpc_error(stub.DealRound, request)
    assert_refused(exc, FAILED_PRECONDITION, "ERROR_REASON_WRONG_PHASE", "over")
    assert snapshot(stub, created) == before
    scores = stub.GetScores(
        pb.GetScoresRequest(match_id=created.match_id, token=created.seat_tokens[0]),
        timeout=RPC_TIMEOUT,
    )
    assert scores.over
    assert scores.winner == st.winner
    assert list(scores.winning_seats) == [st.winner]
    assert max(scores.scores) >= 20


# -- a client that walks away --------------------------------------------------------------


@pytest.mark.slow
def test_cancelled_watch_streams_do_not_break_the_server(svc: Service) -> None:
    stub = svc.stub
    created = create(stub, 2, seed=23)
    rng = random.Random(23)
    for _ in range(3):
        assert play_step(stub, created, rng) is not None
    # Clients that drop their whole connection mid-stream.
    for _ in range(5):
        channel = grpc.insecure_channel(svc.address)
        request = pb.WatchMatchRequest(match_id=created.match_id, token=created.observer_token)
        stream = Stub(channel).WatchMatch(request, timeout=30)
        assert next(stream).event.sequence == 0
        channel.close()
    # Clients that cancel their stream.
    for batch in range(3):
        streams = [
            stub.WatchMatch(
                pb.WatchMatchRequest(match_id=created.match_id, token=token), timeout=30
            )
            for token in [*created.seat_tokens, created.observer_token] * 7
        ]
        for stream in streams:
            first = next(stream)
            assert first.event.sequence == 0
        for stream in streams:
            stream.cancel()
        for stream in streams:
            assert stream.code() == grpc.StatusCode.CANCELLED
        # The server keeps serving: state, moves, and a new stream that sees them live.
        watcher_events: list[pb.MatchEvent] = []
        start = event_count(stub, created.match_id)
        request = pb.WatchMatchRequest(
            match_id=created.match_id, token=created.observer_token, from_sequence=start
        )
        live = stub.WatchMatch(request, timeout=30)

        def consume(
            live: Iterator[pb.WatchMatchResponse] = live, into: list[pb.MatchEvent] = watcher_events
        ) -> None:
            for reply in live:
                into.append(reply.event)
                if len(into) >= 2:
                    return

        t = threading.Thread(target=consume, daemon=True)
        t.start()
        for _ in range(2):
            assert play_step(stub, created, rng) is not None
        t.join(30)
        assert not t.is_alive(), f"batch {batch}: the live watcher got no events"
        live.cancel()
        assert [e.sequence for e in watcher_events] == [start, start + 1]
    assert state(stub, created.match_id, created.observer_token).move_count >= 9


# -- ScoreLayout -----------------------------------------------------------------------------

POSITION_A = [
    ("1-4", 5, 5),
    ("1-1@1-4:low", 6, 0),
    ("4-4@1-4:high", 10, 10),
    ("3-4@4-4:line_b", 5, 5),
    ("1-2@1-1:line_b", 7, 0),
    ("1-5@1-1:branch_a", 11, 0),
    ("5-5@1-5:high", 16, 0),
    ("0-5@5-5:line_b", 6, 0),
    ("1-3@1-1:branch_b", 8, 0),
]


def score(stub: Stub, placements: list[str], structured: bool) -> pb.ScoreLayoutResponse:
    if structured:
        items = [pb.Placement(move=move_msg(p)) for p in placements]
    else:
        items = [pb.Placement(notation=p) for p in placements]
    reply: pb.ScoreLayoutResponse = stub.ScoreLayout(
        pb.ScoreLayoutRequest(placements=items), timeout=RPC_TIMEOUT
    )
    return reply


def ends(reply: pb.ScoreLayoutResponse | pb.ApplyMoveResponse) -> set[tuple[str, int]]:
    return {(f"{c.tile.low}-{c.tile.high}", c.value) for c in reply.counted_ends}


@pytest.mark.slow
@pytest.mark.parametrize("structured", [False, True], ids=["notation", "structured"])
def test_score_layout_reproduces_position_a(svc: Service, structured: bool) -> None:
    placements = [p for p, _, _ in POSITION_A]
    for n, (_, ends_sum, points) in enumerate(POSITION_A, start=1):
        reply = score(svc.stub, placements[:n], structured)
        assert (reply.ends_sum, reply.points) == (ends_sum, points), placements[n - 1]
        assert sum(c.value for c in reply.counted_ends) == ends_sum
    assert (reply.ends_sum, reply.points) == (8, 0)
    assert ends(reply) == {("0-5", 0), ("1-2", 2), ("1-3", 3), ("3-4", 3)}
    sides = {(f"{o.tile.low}-{o.tile.high}", o.side, o.value) for o in reply.open_sides}
    assert sides == {
        ("0-5", pb.SIDE_LOW, 0),
        ("1-2", pb.SIDE_HIGH, 2),
        ("1-3", pb.SIDE_HIGH, 3),
        ("3-4", pb.SIDE_LOW, 3),
    }


@pytest.mark.slow
@pytest.mark.parametrize("structured", [False, True], ids=["notation", "structured"])
def test_score_layout_reproduces_the_sniff_example(svc: Service, structured: bool) -> None:
    steps = [("4-4", 8, 0), ("4-6@4-4:line_a", 14, 0), ("1-4@4-4:line_b", 15, 15)]
    steps += [("2-4@4-4:branch_a", 13, 0)]
    placements = [p for p, _, _ in steps]
    for n, (_, ends_sum, points) in enumerate(steps, start=1):
        reply = score(svc.stub, placements[:n], structured)
        assert (reply.ends_sum, reply.points) == (ends_sum, points), placements[n - 1]
        if n == 3:
            assert ends(reply) == {("4-6", 6), ("1-4", 1), ("4-4", 4)}
            assert sorted(c.value for c in reply.counted_ends) == [1, 4, 4, 6]


@pytest.mark.parametrize(
    ("placements", "code", "reason"),
    [
        (["1-4", "nonsense"], INVALID_ARGUMENT, "ERROR_REASON_MALFORMED_MOVE"),
        (["1-4", "draw"], INVALID_ARGUMENT, "ERROR_REASON_ILLEGAL_MOVE"),
        (["1-4", "1-4@1-4:low"], INVALID_ARGUMENT, "ERROR_REASON_ILLEGAL_MOVE"),
        (["1-1@1-4:low"], INVALID_ARGUMENT, "ERROR_REASON_ILLEGAL_MOVE"),
        (["1-4", "2-3@1-4:low"], INVALID_ARGUMENT, "ERROR_REASON_ILLEGAL_MOVE"),
        (["1-4", "1-1@6-6:line_a"], INVALID_ARGUMENT, "ERROR_REASON_ILLEGAL_MOVE"),
    ],
    ids=["malformed", "draw", "twice", "no-lead", "value-mismatch", "no-such-side"],
)
def test_score_layout_refuses_what_cannot_be_placed(
    svc: Service, placements: list[str], code: grpc.StatusCode, reason: str
) -> None:
    items = [pb.Placement(notation=p) for p in placements]
    exc = rpc_error(svc.stub.ScoreLayout, pb.ScoreLayoutRequest(placements=items))
    assert_refused(exc, code, reason)

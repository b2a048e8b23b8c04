"""The Play stream: decisions out, answers in, each applied exactly once, refusals in-band.

A real server on 127.0.0.1 (`serving`); the clients are `PlayClient`, which
sends answers one by one, and the sample bot of `analysis/remote_play.py`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from analysis.bot_matches import bot_match, bot_players
from analysis.remote import play_remote_match
from analysis.remote_play import StreamSeat, play_matches, play_stream
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from tests.helpers import HANG
from tests.service_helpers import (
    PlayClient,
    Service,
    assert_refused,
    create,
    play_seat,
    play_to_end,
    query,
    serving,
)

BOTS = ["greedy", "random"]


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with serving(tmp_path_factory.mktemp("play") / "events.duckdb", sync=False) as service:
        yield service


def in_process_moves(seats: int, seed: int, **options: object) -> tuple[list[str], list[int]]:
    """The moves and final scores of the same bot match played in this process."""
    match = bot_match(seats, seed, BOTS, **options)  # type: ignore[arg-type]
    return [str(m) for r in match.history for m in r.actions], list(match.seat_scores())


def logged_moves(svc: Service, match_id: str) -> list[str]:
    sql = "SELECT move FROM events WHERE match_id = ? AND kind = 'action' ORDER BY seq"
    table = query(svc.stub, sql, match_id)
    return [str(m) for m in table.column("move").to_pylist()]


def decision_of(client: PlayClient) -> pb.PlayUpdate:
    update = client.next("decision")
    assert update.decision.WhichOneof("kind") == "move"
    return update


def answer(update: pb.PlayUpdate, notation: str, move_count: int | None = None) -> pb.PlayAnswer:
    count = update.decision.move_count if move_count is None else move_count
    return pb.PlayAnswer(
        match_id=update.match_id, seat=update.seat, move_count=count, notation=notation
    )


def both_seats(created: pb.CreateMatchResponse, resume: int | None = None) -> list[pb.PlaySeat]:
    return [play_seat(created.match_id, t, resume) for t in created.seat_tokens]


# -- playing whole matches -----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_bots_over_play_make_the_in_process_matchs_moves_and_scores(
    svc: Service, seats: int
) -> None:
    seeds = [100 + seats, 200 + seats]
    played = play_matches(svc.stub, seats, BOTS, seeds)
    for seed, match in zip(seeds, played, strict=True):
        moves, scores = in_process_moves(seats, seed)
        assert logged_moves(svc, match.match_id) == moves
        assert match.scores == scores
        assert match.moves == len(moves)


def test_a_match_played_over_play_logs_the_events_applymove_logs(svc: Service) -> None:
    """The log cannot tell a Play match from an ApplyMove one: same rows but ids and hashes."""
    over_play = play_matches(svc.stub, 2, BOTS, [31], round_limit=2)[0]
    unary = play_remote_match(svc.stub, 2, BOTS, 31, round_limit=2)
    sql = (
        "SELECT seq, kind, round, action_index, seat, move, drawn, points, ends_sum "
        "FROM events WHERE match_id = ? ORDER BY seq"
    )
    a = query(svc.stub, sql, over_play.match_id).to_pylist()
    b = query(svc.stub, sql, unary.match_id).to_pylist()
    assert len(a) > 10
    assert a == b


# -- exactly once, and the refusals that leave the stream open -----------------------------


def test_a_duplicate_answer_is_acknowledged_and_not_applied_twice(svc: Service) -> None:
    created = create(svc.stub, 2, seed=41)
    client = PlayClient(svc.stub, both_seats(created))
    first = decision_of(client)
    move = first.decision.move.moves[0].notation
    client.send(answer(first, move))
    reply = client.reply()
    assert reply.answered == pb.PlayAnswered(move_count=first.decision.move_count)
    client.send(answer(first, move))
    again = client.reply()
    assert again.answered.duplicate
    assert again.answered.move_count == first.decision.move_count
    client.close()
    assert client.ended() is None
    assert logged_moves(svc, created.match_id) == [move]


def test_refused_answers_are_answered_on_the_stream_which_stays_open(svc: Service) -> None:
    created = create(svc.stub, 2, seed=42)
    client = PlayClient(svc.stub, both_seats(created))
    d = decision_of(client)
    count, legal = d.decision.move_count, [m.notation for m in d.decision.move.moves]
    other = 1 - d.seat

    def refused(a: pb.PlayAnswer, code: grpc.StatusCode, reason: str) -> pb.PlayError:
        client.send(a)
        reply = client.reply()
        assert reply.WhichOneof("kind") == "error", reply
        assert (reply.match_id, reply.seat) == (a.match_id, a.seat)
        assert reply.error.code == code.value[0], reply.error
        assert pb.ErrorReason.Name(reply.error.reason) == reason, reply.error
        assert reply.error.move_count == a.move_count
        assert reply.error.message
        return reply.error

    mismatch = grpc.StatusCode.ABORTED, "ERROR_REASON_MOVE_COUNT_MISMATCH"
    refused(answer(d, legal[0], count + 1), *mismatch)  # a future count
    bad = refused(answer(d, "9-9"), grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_MALFORMED_MOVE")
    assert bad.attributes["kind"]
    wrong_seat = pb.PlayAnswer(match_id=d.match_id, seat=other, move_count=count, notation=legal[0])
    refused(wrong_seat, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_NOT_YOUR_TURN")
    long = answer(d, "x" * 40)
    too_long = refused(long, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT")
    assert too_long.attributes["field"] == "answer.notation"
    # After every refusal the decision is still pending and the stream still answers.
    client.send(answer(d, legal[0]))
    assert client.reply().answered.move_count == count
    refused(answer(d, legal[-1]), *mismatch)  # a stale count: another move at an applied count
    client.close()
    assert client.ended() is None
    assert logged_moves(svc, created.match_id) == [legal[0]]


def test_an_answer_for_a_seat_the_stream_does_not_play_is_refused_in_band(svc: Service) -> None:
    created = create(svc.stub, 2, seed=43)
    client = PlayClient(svc.stub, [play_seat(created.match_id, created.seat_tokens[0])])
    assert client.next("opened").seat == 0
    client.send(pb.PlayAnswer(match_id=created.match_id, seat=1, move_count=0, notation="draw"))
    reply = client.reply()
    assert reply.error.code == grpc.StatusCode.PERMISSION_DENIED.value[0]
    assert pb.ErrorReason.Name(reply.error.reason) == "ERROR_REASON_BAD_TOKEN"
    client.close()
    assert client.ended() is None


@pytest.mark.slow
def test_an_answer_for_a_finished_match_is_refused_as_out_of_phase(svc: Service) -> None:
    done = create(svc.stub, 2, seed=44)
    play_to_end(svc.stub, done, random.Random(1))
    live = create(svc.stub, 2, seed=45)
    seats = [play_seat(done.match_id, done.seat_tokens[0]), *both_seats(live)]
    client = PlayClient(svc.stub, seats)
    client.next("decision")  # the live match's: the stream is serving
    client.send(pb.PlayAnswer(match_id=done.match_id, seat=0, move_count=0, notation="draw"))
    reply = client.reply()
    assert reply.error.code == grpc.StatusCode.FAILED_PRECONDITION.value[0], reply
    assert pb.ErrorReason.Name(reply.error.reason) == "ERROR_REASON_WRONG_PHASE"
    client.close()
    assert client.ended() is None


def test_seat_zero_is_asked_to_deal_each_next_round_exactly_once(svc: Service) -> None:
    created = create(svc.stub, 2, seed=46)
    client = PlayClient(svc.stub, both_seats(created))
    for _ in range(2000):
        update = client.next("decision")
        if update.decision.WhichOneof("kind") == "deal":
            break
        client.send(answer(update, update.decision.move.moves[0].notation))
    else:
        raise AssertionError("no round ended")
    assert update.seat == 0
    deal = pb.PlayAnswer(match_id=created.match_id, seat=0, move_count=update.decision.move_count)
    deal.deal.round_index = update.decision.deal.round_index
    assert deal.deal.round_index == 1
    client.send(deal)
    client.send(deal)
    replies = [client.reply(), client.reply()]
    assert [r.answered.duplicate for r in replies] == [False, True]
    deal.deal.round_index = 3
    client.send(deal)
    assert pb.ErrorReason.Name(client.reply().error.reason) == "ERROR_REASON_MOVE_COUNT_MISMATCH"
    next_round = client.next("decision")
    assert next_round.decision.WhichOneof("kind") == "move"
    assert next_round.decision.move.state.round_index == 1
    client.close()
    assert client.ended() is None


# -- refusals that end the stream ----------------------------------------------------------


def test_a_bad_open_ends_the_stream_with_its_status(svc: Service) -> None:
    created = create(svc.stub, 2, seed=47)
    match_id = created.match_id

    def ended(seats: list[pb.PlaySeat], first: pb.PlayRequest | None = None) -> grpc.RpcError:
        client = PlayClient(svc.stub, seats, first)
        error = client.ended()
        assert error is not None
        return error

    assert_refused(
        ended([play_seat(match_id, "not-a-token")]),
        grpc.StatusCode.UNAUTHENTICATED,
        "ERROR_REASON_BAD_TOKEN",
    )
    assert_refused(
        ended([play_seat(match_id, created.observer_token)]),
        grpc.StatusCode.PERMISSION_DENIED,
        "ERROR_REASON_BAD_TOKEN",
    )
    assert_refused(
        ended([play_seat("0" * 16, created.seat_tokens[0])]),
        grpc.StatusCode.NOT_FOUND,
        "ERROR_REASON_MATCH_NOT_FOUND",
    )
    twice = [play_seat(match_id, created.seat_tokens[0])] * 2
    assert_refused(ended(twice), grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT")
    assert_refused(ended([]), grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT")
    first_answer = pb.PlayRequest(answer=pb.PlayAnswer(match_id=match_id))
    assert_refused(
        ended([], first_answer), grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT"
    )


def test_a_second_open_ends_the_stream(svc: Service) -> None:
    created = create(svc.stub, 2, seed=48)
    client = PlayClient(svc.stub, both_seats(created))
    client.next("opened")
    client.send_raw(pb.PlayRequest(open=pb.PlayOpen(seats=both_seats(created))))
    error = client.ended()
    assert error is not None
    assert_refused(error, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT")


def test_play_streams_are_counted_and_released(svc: Service) -> None:
    created = create(svc.stub, 2, seed=49)
    plays = svc.running.servicer.plays
    clients = [PlayClient(svc.stub, both_seats(created)) for _ in range(4)]
    for client in clients:
        client.next("opened")
    extra = PlayClient(svc.stub, both_seats(created))
    error = extra.ended()
    assert error is not None
    assert_refused(error, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_LIMIT_REACHED")
    for client in clients:
        client.close()
        assert client.ended() is None
    assert plays.total == 0
    assert not plays.per_seat


def test_a_stream_ends_once_every_match_it_plays_is_over(svc: Service) -> None:
    created = create(svc.stub, 2, seed=50)
    bots = bot_players(2, BOTS, 50)
    pairs = zip(created.seat_tokens, bots, strict=True)
    seen = play_stream(
        svc.stub, [StreamSeat(created.match_id, t, bot, 0) for t, bot in pairs], timeout=HANG
    )
    end = seen[created.match_id].end
    assert end is not None
    assert list(end.scores) == in_process_moves(2, 50)[1]


def test_a_stopping_service_ends_its_play_streams_unavailable(tmp_path: Path) -> None:
    with serving(tmp_path / "events.duckdb", sync=False) as own:
        created = create(own.stub, 2, seed=51)
        client = PlayClient(own.stub, both_seats(created))
        client.next("decision")  # the stream waits for an answer
        own.running.stop(grace=5.0)
        error = client.ended()
    assert error is not None
    assert error.code() == grpc.StatusCode.UNAVAILABLE


def test_answers_sent_together_are_each_answered_in_order(svc: Service) -> None:
    created = create(svc.stub, 2, seed=52)
    client = PlayClient(svc.stub, both_seats(created))
    d = decision_of(client)
    move = d.decision.move.moves[0].notation
    together = [answer(d, move), answer(d, move), answer(d, "9-9")]
    client.send_raw(pb.PlayRequest(answers=pb.PlayAnswers(answers=together)))
    replies = [client.reply() for _ in together]
    assert [r.WhichOneof("kind") for r in replies] == ["answered", "answered", "error"]
    assert [r.answered.duplicate for r in replies[:2]] == [False, True]
    client.send_raw(pb.PlayRequest(answers=pb.PlayAnswers()))
    error = client.ended()
    assert error is not None
    assert_refused(error, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT")
    assert logged_moves(svc, created.match_id) == [move]

"""A Play client that loses its stream resumes where it was: on a new stream, and after the
service restarts on the same log (which rebuilds every match in play from its events)."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from analysis.remote import connect
from analysis.remote_play import MatchSeen, StreamSeat, _answer, play_stream
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from sniff import Match, Move, play_match
from sniff.bots import PlayerView
from tests.helpers import HANG
from tests.service_helpers import (
    PlayClient,
    ServerProcess,
    assert_refused,
    create,
    error_info,
    play_seat,
    serving,
)


class FirstMove:
    """Plays the first legal move: a bot with no state, so that a decision sent again after a
    resume (or one a dropped stream never answered) is answered as it would have been."""

    name = "first"

    def choose(self, view: PlayerView) -> Move:
        return view.legal_moves()[0]


def stream_seats(created: pb.CreateMatchResponse, resume: int | None) -> list[StreamSeat]:
    return [
        StreamSeat(created.match_id, token, FirstMove(), resume) for token in created.seat_tokens
    ]


def assert_played_as_in_process(seen: MatchSeen, seats: int, seed: int) -> None:
    """Every action once, in the in-process match's order, and its final scores."""
    match = play_match(Match(seats, seed=seed), [FirstMove()] * seats)
    moves = [str(m) for r in match.history for m in r.actions]
    applied = [e.action_applied for e in seen.events if e.HasField("action_applied")]
    assert [a.move.notation for a in applied] == moves
    assert [a.move_count for a in applied] == list(range(1, len(moves) + 1))
    assert [e.sequence for e in seen.events] == list(range(len(seen.events)))
    assert seen.end is not None
    assert list(seen.end.scores) == list(match.seat_scores())


def drop_then_resume(stub: sniff_pb2_grpc.SniffServiceStub, seed: int, stop_after: int) -> None:
    created = create(stub, 2, seed=seed)  # type: ignore[arg-type]
    seen = play_stream(stub, stream_seats(created, 0), stop_after=stop_after, timeout=HANG)
    first = seen[created.match_id]
    assert first.end is None
    assert first.move_count <= stop_after  # the last answers may not have been sent
    resumed = stream_seats(created, first.move_count)
    play_stream(stub, resumed, seen=seen, timeout=HANG)
    assert_played_as_in_process(seen[created.match_id], 2, seed)


@pytest.mark.slow
def test_a_dropped_stream_resumes_on_a_new_one_and_the_match_plays_on_unchanged(
    tmp_path: Path,
) -> None:
    with serving(tmp_path / "events.duckdb", sync=False) as svc:
        for stop_after in (1, 7, 40):
            drop_then_resume(svc.stub, 60 + stop_after, stop_after)


def test_a_resumed_seat_gets_the_events_after_its_last_action_then_its_decision(
    tmp_path: Path,
) -> None:
    with serving(tmp_path / "events.duckdb", sync=False) as svc:
        created = create(svc.stub, 2, seed=70)
        first = PlayClient(svc.stub, [play_seat(created.match_id, t) for t in created.seat_tokens])
        for _ in range(3):
            update = first.next("decision")
            move = update.decision.move.moves[0].notation
            first.send(
                pb.PlayAnswer(
                    match_id=created.match_id,
                    seat=update.seat,
                    move_count=update.decision.move_count,
                    notation=move,
                )
            )
            assert first.reply().answered.move_count == update.decision.move_count
        pending = first.next("decision")
        first.close()
        assert first.ended() is None
        # Resuming from move count 2 sends the third action's event again, then the decision.
        token = created.seat_tokens[pending.seat]
        again = PlayClient(svc.stub, [play_seat(created.match_id, token, 2)])
        assert again.next().opened.move_count == 3
        event = again.next().event
        assert event.action_applied.move_count == 3
        decision = again.next().decision
        assert decision.move_count == 3
        assert decision == pending.decision
        again.close()
        assert again.ended() is None


@pytest.mark.slow
def test_a_stream_resumes_after_the_service_is_killed_and_restarted_on_its_log(
    tmp_path: Path,
) -> None:
    server = ServerProcess(tmp_path / "events.duckdb", tmp_path).start()
    try:
        stub = connect(server.address)
        seed = 80
        created = create(stub, 2, seed=seed)  # type: ignore[arg-type]
        seen = play_stream(stub, stream_seats(created, 0), stop_after=30, timeout=HANG)
        assert server.proc is not None
        server.proc.kill()  # SIGKILL: acknowledged actions are in the journal, nothing else
        server.proc.wait(timeout=HANG)
        server.start()
        stub = connect(server.address)
        resume = seen[created.match_id].move_count
        play_stream(stub, stream_seats(created, resume), seen=seen, timeout=HANG)
        assert_played_as_in_process(seen[created.match_id], 2, seed)
    finally:
        server.close()


def test_resuming_from_a_move_count_the_match_has_not_reached_ends_the_stream(
    tmp_path: Path,
) -> None:
    with serving(tmp_path / "events.duckdb", sync=False) as svc:
        created = create(svc.stub, 2, seed=90)
        client = PlayClient(svc.stub, [play_seat(created.match_id, created.seat_tokens[0], 5)])
        error = client.ended()
        assert error is not None
        assert_refused(error, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT")
        assert "resume_move_count" in error_info(error).metadata["field"]


def test_a_decision_sent_again_gets_the_seat_s_same_answer_not_a_new_draw() -> None:
    """After a drop the service sends the pending decision again; a bot with a generator
    (`random`) must not draw again, or the match would differ from the one it played."""
    from service.hub import Proof
    from service.rpc import convert
    from sniff import make_bot, view

    class Counting:
        name = "counting"

        def __init__(self) -> None:
            self.inner = make_bot("random", seed=3)
            self.calls = 0

        def choose(self, seen: PlayerView) -> Move:
            self.calls += 1
            return self.inner.choose(seen)

    served = Match(2, seed=11)
    seat = served.turn
    seen = view(served, seat)
    assert len(seen.legal) > 1  # a choice, so a second draw could differ
    update = pb.PlayUpdate(match_id="m", seat=seat)
    update.decision.move_count = served.move_count
    update.decision.move.moves.extend(convert.move_pb(m) for m in seen.legal)
    choice = served.history[-1].leader_choice
    proof = Proof(None, None, None, None)
    update.decision.move.state.CopyFrom(convert.state_pb("m", seen, choice, proof))
    bot = Counting()
    held = StreamSeat("m", "token", bot)
    answers = [_answer(update, held, None) for _ in range(5)]  # type: ignore[arg-type]
    assert all(a == answers[0] for a in answers)
    assert bot.calls == 1

"""Time controls in the hub, on a clock the test moves: the bank pays exactly the time over
the move limit, a seat out of time gets the policy's move (or forfeits) once, a late answer
is stale, the deal waits at most a move limit, and a restart keeps the banks as logged."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from service.clock import OutOfTime, TimeControl
from service.errors import BadArgument, StaleMoveCount
from service.hub import Created, Hub, LiveMatch
from service.storage import EventLog
from sniff import Match, MatchOver, Phase, view
from sniff.bots import GreedyBot

GREEDY = TimeControl(1000, 500, OutOfTime.DEFAULT_MOVE, "greedy")
FORFEIT = TimeControl(1000, 0, OutOfTime.FORFEIT)


class Clock:
    """A monotonic clock that moves only when the test says."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def advance(self, ms: int) -> None:
        self.t += ms / 1000


@pytest.fixture
def log(tmp_path: Path) -> Iterator[EventLog]:
    with EventLog(tmp_path / "log.duckdb", sync=False) as opened:
        yield opened


def first_move(live: LiveMatch) -> tuple[int, str]:
    match = live.match
    assert match.turn is not None
    return match.turn, str(match.legal_moves()[0])


def phase_of(live: LiveMatch) -> Phase:
    """The match's phase, read afresh (a hub call between two reads changes it)."""
    return live.match.phase


def answer(hub: Hub, made: Created, live: LiveMatch) -> int:
    """The seat to play answers with its first legal move; which seat it was."""
    match = live.match
    seat = match.turn
    assert seat is not None
    hub.apply(made.match_id, made.seat_tokens[seat], seat, match.legal_moves()[0], match.move_count)
    return seat


def test_the_bank_pays_exactly_the_time_over_the_move_limit(log: EventLog) -> None:
    clock = Clock()
    hub = Hub(log, now=clock)
    made = hub.create(2, seed=3, target=200, time_control=GREEDY)
    live = hub.get(made.match_id)
    assert live.clock is not None
    clock.advance(1200)  # 200 ms over the limit
    first = answer(hub, made, live)
    clock.advance(999)  # within the limit: the bank is untouched
    second = answer(hub, made, live)
    clock.advance(1299)  # the whole limit and all but 1 ms of what is left of the bank
    third = answer(hub, made, live)
    assert third == first
    banks = [
        (e.event.seat, (e.event.detail or {})) for e in live.events if e.event.kind == "action"
    ]
    assert banks == [
        (first, {"bank_ms": 300}),
        (second, {"bank_ms": 500}),
        (first, {"bank_ms": 1}),
    ]
    assert live.clock.banks[first] == 1
    assert live.clock.banks[second] == 500
    timing = hub.timing(live)
    assert timing is not None
    running = [t for t in timing.times if t.running]
    assert [(t.seat, t.move_time_left_ms, t.bank_left_ms) for t in running] == [(second, 1000, 500)]
    clock.advance(1250)
    timing = hub.timing(live)
    assert timing is not None
    assert timing.times[second].move_time_left_ms == 0
    assert timing.times[second].bank_left_ms == 250


def test_a_seat_out_of_time_gets_the_policys_move_once_and_its_late_answer_is_stale(
    log: EventLog,
) -> None:
    clock = Clock()
    hub = Hub(log, now=clock)
    made = hub.create(2, seed=4, target=200, time_control=GREEDY)
    live = hub.get(made.match_id)
    seat = live.match.turn
    assert seat is not None
    clock.advance(1499)
    assert hub.timekeeper.run_due() == []
    assert live.match.move_count == 0
    expected = Match(2, seed=4, target=200)
    chosen = GreedyBot(0).choose(view(expected, seat))  # greedy's lead: most points
    clock.advance(1)
    assert hub.timekeeper.run_due() == [made.match_id]
    assert hub.timekeeper.run_due() == []  # once: the next seat's clock has just started
    assert live.match.move_count == 1
    action = live.events[-1].event
    assert (action.seat, action.detail) == (seat, {"bank_ms": 0, "timeout": "greedy"})
    assert live.match.history[0].points[0] == expected.apply(chosen).points
    # The late answer names the very move the server made: still stale, not a retry.
    with pytest.raises(StaleMoveCount, match="ran out of time"):
        hub.apply(made.match_id, made.seat_tokens[seat], seat, live.match.history[0].actions[0], 0)
    assert live.match.move_count == 1


def test_an_answer_received_after_the_deadline_is_stale_even_before_the_timekeeper_runs(
    log: EventLog,
) -> None:
    clock = Clock()
    hub = Hub(log, now=clock)
    made = hub.create(2, seed=5, target=200, time_control=GREEDY)
    live = hub.get(made.match_id)
    seat, move = first_move(live)
    received = clock() + 1.5  # the whole limit and the whole bank: out of time
    clock.advance(1600)
    with pytest.raises(StaleMoveCount, match="ran out of time"):
        hub.apply(
            made.match_id,
            made.seat_tokens[seat],
            seat,
            live.match.legal_moves()[0],
            0,
            received=received,
        )
    assert live.match.move_count == 1
    assert (live.events[-1].event.detail or {}).get("timeout") == "greedy"
    assert hub.timekeeper.run_due() == []  # the timeout is not made again
    assert live.match.move_count == 1
    assert move  # an answer received 1 ms sooner would have been applied:
    made2 = hub.create(2, seed=5, target=200, time_control=GREEDY)
    live2 = hub.get(made2.match_id)
    seat2, _ = first_move(live2)
    early = clock() + 1.499
    clock.advance(1600)
    hub.apply(
        made2.match_id,
        made2.seat_tokens[seat2],
        seat2,
        live2.match.legal_moves()[0],
        0,
        received=early,
    )
    assert live2.events[-1].event.detail == {"bank_ms": 1}


@pytest.mark.parametrize("seats", [2, 4])
def test_a_forfeit_ends_the_match_for_the_other_side_and_a_late_answer_finds_it_over(
    log: EventLog, seats: int
) -> None:
    clock = Clock()
    hub = Hub(log, now=clock)
    made = hub.create(seats, seed=6, target=200, time_control=FORFEIT)
    live = hub.get(made.match_id)
    answer(hub, made, live)
    seat = live.match.turn
    assert seat is not None
    late = live.match.legal_moves()[0]
    clock.advance(1000)
    assert hub.timekeeper.run_due() == [made.match_id]
    assert live.match.phase is Phase.OVER
    assert live.match.winner is not None
    assert live.match.winner % 2 != seat % 2  # the other side (partners share parity)
    end = live.events[-1].event
    assert end.kind == "match_ended"
    detail = end.detail or {}
    assert detail["forfeit"] == {"seat": seat, "round": 0, "action": 1}
    assert detail["winner"] == live.match.winner
    assert hub.in_play() == 0
    with pytest.raises(MatchOver):
        hub.apply(made.match_id, made.seat_tokens[seat], seat, late, 1)


def test_nobody_dealing_gets_the_next_round_dealt_after_a_move_limit(log: EventLog) -> None:
    clock = Clock()
    hub = Hub(log, now=clock)
    made = hub.create(2, seed=7, target=500, time_control=GREEDY)
    live = hub.get(made.match_id)
    while live.match.phase is Phase.PLAYING:
        answer(hub, made, live)
    assert phase_of(live) is Phase.AWAITING_DEAL
    banks = list(live.clock.banks) if live.clock else []
    clock.advance(999)
    assert hub.timekeeper.run_due() == []
    clock.advance(1)
    assert hub.timekeeper.run_due() == [made.match_id]
    assert phase_of(live) is Phase.PLAYING
    assert live.match.round_index == 1
    assert live.events[-1].event.kind == "round_dealt"
    assert live.clock is not None
    assert live.clock.banks == banks  # a deal costs no seat's bank


def test_after_a_restart_the_banks_are_as_logged_and_the_seat_to_play_has_a_whole_limit(
    tmp_path: Path,
) -> None:
    clock = Clock()
    db = tmp_path / "log.duckdb"
    with EventLog(db, sync=False) as log:
        hub = Hub(log, now=clock)
        made = hub.create(2, seed=8, target=200, time_control=GREEDY)
        live = hub.get(made.match_id)
        clock.advance(1300)
        spent = answer(hub, made, live)
        clock.advance(1400)  # the other seat spends 400 ms of its bank, then the log stops
    with EventLog(db, sync=False) as log:
        clock.advance(5000)
        hub = Hub(log, now=clock)
        assert hub.recover() == 1
        live = hub.get(made.match_id)
        assert live.clock is not None
        assert live.clock.banks[spent] == 200
        assert live.clock.banks[1 - spent] == 500  # its unanswered time is not charged
        timing = hub.timing(live)
        assert timing is not None
        assert [(t.move_time_left_ms, t.running) for t in timing.times if t.running] == [
            (1000, True)
        ]
        clock.advance(1499)
        assert hub.timekeeper.run_due() == []
        clock.advance(1)
        assert hub.timekeeper.run_due() == [made.match_id]
        assert (live.events[-1].event.detail or {}).get("timeout") == "greedy"


def test_a_match_without_a_time_control_logs_its_actions_as_before(log: EventLog) -> None:
    clock = Clock()
    hub = Hub(log, now=clock)
    made = hub.create(2, seed=9, target=200)
    live = hub.get(made.match_id)
    answer(hub, made, live)
    clock.advance(10**9)
    assert hub.timekeeper.run_due() == []
    assert live.clock is None
    assert hub.timing(live) is None
    assert "time_control" not in (live.events[0].event.detail or {})
    assert [e.event.detail for e in live.events if e.event.kind == "action"] == [None]


@pytest.mark.parametrize(
    ("control", "seats", "field"),
    [
        (TimeControl(0, 0, OutOfTime.DEFAULT_MOVE, "greedy"), 2, "time_control.move_limit_ms"),
        (TimeControl(-1, 0, OutOfTime.DEFAULT_MOVE, "greedy"), 2, "time_control.move_limit_ms"),
        (TimeControl(3_600_001, 0, OutOfTime.FORFEIT), 2, "time_control.move_limit_ms"),
        (TimeControl(100, -1, OutOfTime.FORFEIT), 2, "time_control.bank_ms"),
        (TimeControl(100, 86_400_001, OutOfTime.FORFEIT), 2, "time_control.bank_ms"),
        (TimeControl(100, 0, OutOfTime.DEFAULT_MOVE, "nobody"), 2, "time_control.policy"),
        (TimeControl(100, 0, OutOfTime.DEFAULT_MOVE, "rollout"), 2, "time_control.policy"),
        (TimeControl(100, 0, OutOfTime.DEFAULT_MOVE, None), 2, "time_control.policy"),
        (TimeControl(100, 0, OutOfTime.FORFEIT, "greedy"), 2, "time_control.policy"),
        (TimeControl(100, 0, OutOfTime.FORFEIT), 3, "time_control.out_of_time"),
    ],
)
def test_a_time_control_out_of_bounds_is_refused_and_creates_nothing(
    log: EventLog, control: TimeControl, seats: int, field: str
) -> None:
    hub = Hub(log, now=Clock())
    with pytest.raises(BadArgument) as refused:
        hub.create(seats, seed=1, time_control=control)
    assert refused.value.field == field
    assert hub.in_play() == 0
    assert hub.match_ids() == []

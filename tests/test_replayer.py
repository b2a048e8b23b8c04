"""The one replayer of logged events (service/storage/replayer.py).

Matches are played by bots, logged in a real event log on a temporary file and
read back; tampering edits the events read back (or, where the hub and the
audit must agree, the file itself, with SQL).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from analysis.bot_matches import recorded_bot_match
from analysis.logaudit import audit_log
from analysis.replay.model import ReplayError
from analysis.replay.source import load_replay
from service.errors import RecoveryError
from service.hub import Hub
from service.storage import EventLog, LogEvent
from service.storage import replayer as rp
from sniff import Bot, GreedyBot, Match, Phase, RandomBot, view

MATCH = "c3c3c3c3c3c3c3c3"


def logged(
    tmp_path: Path,
    seats: int = 2,
    seed: int = 3,
    variant: str = "american",
    round_limit: int | None = None,
) -> tuple[Match, list[LogEvent]]:
    """A bot-played match and its events as the log gives them back."""
    played = recorded_bot_match(
        MATCH, seats, seed, ("greedy", "random"), variant=variant, round_limit=round_limit
    )
    with EventLog(tmp_path / "log.duckdb") as log:
        log.append(played.events)
        return played.match, log.events_for(MATCH)


def assert_same_play(rebuilt: Match, original: Match) -> None:
    assert rebuilt.phase is original.phase
    assert rebuilt.winner == original.winner
    assert rebuilt.seat_scores() == original.seat_scores()
    assert rebuilt.move_count == original.move_count
    assert rebuilt.seed == original.seed
    assert len(rebuilt.history) == len(original.history)
    for mine, theirs in zip(rebuilt.history, original.history, strict=True):
        assert mine.deal == theirs.deal
        assert mine.leader_choice == theirs.leader_choice
        assert mine.actions == theirs.actions
        assert mine.points == theirs.points
        assert mine.end == theirs.end
        assert mine.scores == theirs.scores


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seats", "variant", "round_limit"),
    [(2, "american", None), (3, "stubby", 3), (4, "british", None)],
)
def test_a_strict_replay_of_a_logged_match_rebuilds_the_match_that_was_played(
    tmp_path: Path, seats: int, variant: str, round_limit: int | None
) -> None:
    original, events = logged(tmp_path, seats, 5, variant=variant, round_limit=round_limit)
    assert_same_play(rp.rebuilt(events), original)


def test_every_event_is_one_step_of_its_kind_in_order(tmp_path: Path) -> None:
    original, events = logged(tmp_path)
    steps = list(rp.replay(events))
    kinds = {
        rp.Created: "match_created",
        rp.Dealt: "round_dealt",
        rp.Acted: "action",
        rp.RoundEnded: "round_ended",
        rp.MatchEnded: "match_ended",
    }
    assert [kinds[type(s)] for s in steps] == [e.kind for e in events]
    assert [s.position for s in steps] == list(range(len(events)))
    created = steps[0]
    assert isinstance(created, rp.Created)
    assert created.seeded
    assert created.seed == original.seed
    acted = [s for s in steps if isinstance(s, rp.Acted)]
    assert [(s.result.points, str(s.move)) for s in acted] == [
        (e.points, e.move) for e in events if e.kind == "action"
    ]


def test_a_seeded_deal_keeps_the_leader_choice_it_was_dealt_with(tmp_path: Path) -> None:
    original, events = logged(tmp_path)
    rebuilt = rp.rebuilt(events)
    assert [r.leader_choice.value for r in rebuilt.history][:1] == ["lot"]
    assert [r.leader_choice for r in rebuilt.history] == [r.leader_choice for r in original.history]


# -- tampering ----------------------------------------------------------------------------

Edit = Callable[[list[LogEvent]], int]
"""Tampers with the events in place; returns the index of the event that disagrees."""


def _first(events: list[LogEvent], test: Callable[[LogEvent], bool]) -> int:
    return next(i for i, e in enumerate(events) if test(e))


def _swap_dealt_tiles(events: list[LogEvent]) -> int:
    i = _first(events, lambda e: e.kind == "round_dealt" and e.round == 1)
    detail = dict(events[i].detail or {})
    hands = [list(h) for h in detail["hands"]]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    events[i] = replace(events[i], detail={**detail, "hands": hands})
    return i


def _other_leader(events: list[LogEvent]) -> int:
    i = _first(events, lambda e: e.kind == "round_dealt" and e.round == 0)
    detail = dict(events[i].detail or {})
    events[i] = replace(events[i], detail={**detail, "leader": 1 - detail["leader"]})
    return i


def _more_points(events: list[LogEvent]) -> int:
    i = _first(events, lambda e: e.kind == "action" and (e.points or 0) > 0)
    events[i] = replace(events[i], points=(events[i].points or 0) + 5)
    return i


def _other_ends_sum(events: list[LogEvent]) -> int:
    i = _first(events, lambda e: e.kind == "action" and e.ends_sum is not None)
    events[i] = replace(events[i], ends_sum=(events[i].ends_sum or 0) + 1)
    return i


def _other_drawn(events: list[LogEvent]) -> int:
    i = _first(events, lambda e: e.kind == "action" and e.drawn is not None)
    events[i] = replace(events[i], drawn="0-0" if events[i].drawn != "0-0" else "6-6")
    return i


def _other_deduction(events: list[LogEvent]) -> int:
    i = _first(events, lambda e: e.kind == "round_ended")
    detail = dict(events[i].detail or {})
    deductions = [d + 5 for d in detail["deductions"]]
    events[i] = replace(events[i], detail={**detail, "deductions": deductions})
    return i


def _other_winner(events: list[LogEvent]) -> int:
    i = _first(events, lambda e: e.kind == "match_ended")
    detail = dict(events[i].detail or {})
    events[i] = replace(events[i], detail={**detail, "winner": 1 - detail["winner"]})
    return i


def _no_match_end(events: list[LogEvent]) -> int:
    assert events[-1].kind == "match_ended"
    del events[-1]
    return len(events) - 1


def _no_round_end(events: list[LogEvent]) -> int:
    i = _first(events, lambda e: e.kind == "round_ended")
    del events[i]
    return i - 1  # the action that ended the round


def _illegal_move(events: list[LogEvent]) -> int:
    i = _first(events, lambda e: e.kind == "action" and e.move == "draw")
    events[i] = replace(events[i], move="pass")
    return i


def _unreadable_move(events: list[LogEvent]) -> int:
    i = _first(events, lambda e: e.kind == "action")
    events[i] = replace(events[i], move="nonsense")
    return i


def _deal_mid_round(events: list[LogEvent]) -> int:
    i = _first(events, lambda e: e.kind == "action" and e.action_index == 2)
    deal = next(e for e in events if e.kind == "round_dealt")
    events.insert(i, deal)
    return i


TAMPERING: list[tuple[Edit, type[rp.ReplayMismatch], str]] = [
    (_swap_dealt_tiles, rp.DealMismatch, "deal_mismatch"),
    (_other_leader, rp.DealMismatch, "deal_mismatch"),
    (_more_points, rp.ActionMismatch, "points"),
    (_other_ends_sum, rp.ActionMismatch, "ends_sum"),
    (_other_drawn, rp.ActionMismatch, "drawn"),
    (_other_deduction, rp.RoundEndMismatch, "deduction"),
    (_other_winner, rp.MatchEndMismatch, "winner"),
    (_no_match_end, rp.MatchEndMismatch, "match_end"),
    (_no_round_end, rp.RoundEndMismatch, "round_end"),
    (_illegal_move, rp.Refused, "cannot_pass"),
    (_unreadable_move, rp.Unreadable, "unparsable_action"),
    (_deal_mid_round, rp.OutOfPlace, "round_incomplete"),
]


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> list[LogEvent]:
    _, events = logged(tmp_path_factory.mktemp("replayer"), 2, 21)
    assert any(e.kind == "action" and e.move == "draw" for e in events)
    assert len([e for e in events if e.kind == "round_dealt"]) > 1
    return events


@pytest.mark.parametrize(
    ("edit", "raised", "kind"), TAMPERING, ids=lambda v: getattr(v, "__name__", v)
)
def test_each_kind_of_tampering_raises_its_own_mismatch(
    clean: list[LogEvent], edit: Edit, raised: type[rp.ReplayMismatch], kind: str
) -> None:
    events = list(clean)
    at = edit(events)
    with pytest.raises(raised) as caught:
        rp.rebuilt(events)
    assert caught.value.kind == kind
    assert caught.value.position == at


def test_a_reporting_replay_goes_on_after_a_mismatch_and_stops_at_a_fatal_one(
    clean: list[LogEvent],
) -> None:
    events = list(clean)
    points_at = _more_points(events)
    deduction_at = _other_deduction(events)
    found: list[rp.ReplayMismatch] = []
    steps = list(rp.replay(events, on_mismatch=found.append))
    assert {(m.kind, m.position) for m in found} == {
        ("points", points_at),
        ("deduction", deduction_at),
    }
    assert len(steps) == len(events)  # every event replayed

    found.clear()
    move_at = _unreadable_move(events)
    steps = list(rp.replay(events, on_mismatch=found.append))
    assert found[-1].fatal
    assert found[-1].position == move_at
    assert len(steps) == move_at  # the replay stops at the event it cannot replay


def test_an_untampered_log_replays_without_a_mismatch_and_a_lenient_one_takes_the_log_at_its_word(
    clean: list[LogEvent],
) -> None:
    found: list[rp.ReplayMismatch] = []
    list(rp.replay(clean, on_mismatch=found.append))
    assert found == []
    events = list(clean)
    _more_points(events)
    assert rp.rebuilt(events, strict=False).seat_scores() == rp.rebuilt(clean).seat_scores()


# -- the hub and the audit agree -----------------------------------------------------------


def hub_played(db: Path, seed: int) -> tuple[str, list[LogEvent]]:
    """A 2-seat match played to its end through the hub by bots, and its logged events."""
    with EventLog(db) as log:
        hub = Hub(log)
        created = hub.create(2, seed=seed)
        live = hub.get(created.match_id)
        bots: list[Bot] = [GreedyBot(seed), RandomBot(seed + 1)]
        while (match := live.match).phase is not Phase.OVER:
            if match.phase is Phase.AWAITING_DEAL:
                hub.deal(created.match_id, created.observer_token, None)
                continue
            seat = match.turn
            move = bots[seat].choose(view(match, seat))
            hub.apply(created.match_id, created.seat_tokens[seat], seat, move, match.move_count)
        return created.match_id, log.events_for(created.match_id)


Tamper = Callable[[duckdb.DuckDBPyConnection, str, list[LogEvent]], tuple[int, str]]
"""Edits the file with SQL; returns the seq of the event edited and the mismatch's kind."""


def _edit_points(
    con: duckdb.DuckDBPyConnection, match_id: str, events: list[LogEvent]
) -> tuple[int, str]:
    at = events[_first(events, lambda e: e.kind == "action" and (e.points or 0) > 0)].seq
    con.execute(
        "UPDATE events_all SET points = points + 5 WHERE match_id = ? AND seq = ?", [match_id, at]
    )
    return at, "points"


def _edit_detail(
    con: duckdb.DuckDBPyConnection, match_id: str, event: LogEvent, detail: dict[str, object]
) -> None:
    con.execute(
        "UPDATE events_all SET detail = ? WHERE match_id = ? AND seq = ?",
        [json.dumps(detail), match_id, event.seq],
    )


def _edit_deduction(
    con: duckdb.DuckDBPyConnection, match_id: str, events: list[LogEvent]
) -> tuple[int, str]:
    end = events[_first(events, lambda e: e.kind == "round_ended")]
    detail = dict(end.detail or {})
    detail["deductions"] = [d + 5 for d in detail["deductions"]]
    _edit_detail(con, match_id, end, detail)
    return end.seq, "deduction"


def _edit_deal(
    con: duckdb.DuckDBPyConnection, match_id: str, events: list[LogEvent]
) -> tuple[int, str]:
    deal = events[_first(events, lambda e: e.kind == "round_dealt" and e.round == 1)]
    detail = dict(deal.detail or {})
    hands = [list(h) for h in detail["hands"]]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    detail["hands"] = hands
    _edit_detail(con, match_id, deal, detail)
    return deal.seq, "deal_mismatch"


def _edit_winner(
    con: duckdb.DuckDBPyConnection, match_id: str, events: list[LogEvent]
) -> tuple[int, str]:
    end = events[-1]
    detail = dict(end.detail or {})
    detail["winner"] = 1 - detail["winner"]
    _edit_detail(con, match_id, end, detail)
    return end.seq, "winner"


@pytest.mark.slow
@pytest.mark.parametrize("edit", [_edit_points, _edit_deduction, _edit_deal, _edit_winner])
def test_the_audit_and_the_hub_agree_on_a_tampered_log(tmp_path: Path, edit: Tamper) -> None:
    """The first disagreement the audit reports is the one the hub's recovery refuses."""
    db = tmp_path / "log.duckdb"
    match_id, events = hub_played(db, 21)
    assert len([e for e in events if e.kind == "round_dealt"]) > 1
    with duckdb.connect(str(db)) as con:
        at, kind = edit(con, match_id, events)

    (result,) = audit_log(db)
    replayed = [p for p in result.problems if p.kind not in ("chain_broken", "summary")]
    first = replayed[0]
    assert first.kind == kind
    assert first.seq == (None if kind == "winner" else at)

    with EventLog(db) as log:
        tampered = log.events_for(match_id)
        with pytest.raises(RecoveryError) as refused:
            Hub(log).get(match_id)
    with pytest.raises(rp.ReplayMismatch) as mismatch:
        rp.rebuilt(tampered)
    assert mismatch.value.kind == kind
    assert tampered[mismatch.value.position].seq == at
    assert str(refused.value).startswith(f"match {match_id}: ")
    expected = {
        "points": f"event {at} scores differently",
        "deal_mismatch": f"round {tampered[at].round} re-deals differently",
    }.get(kind, f"event {at} does not replay: {mismatch.value}")
    assert str(refused.value) == f"match {match_id}: {expected}"


@pytest.mark.slow
def test_the_replay_viewer_refuses_the_points_the_replayer_refuses(tmp_path: Path) -> None:
    """The viewer rebuilds the public layout only, but reads and checks each placement with
    the replayer: an edited score stops both at the same action."""
    _, events = logged(tmp_path, 2, 21)
    db = tmp_path / "log.duckdb"
    at = events[_first(events, lambda e: e.kind == "action" and (e.points or 0) > 0)]
    with duckdb.connect(str(db)) as con:
        con.execute(
            "UPDATE events_all SET points = points + 5 WHERE match_id = ? AND seq = ?",
            [MATCH, at.seq],
        )
    with EventLog(db) as log:
        tampered = log.events_for(MATCH)
    with pytest.raises(rp.ActionMismatch) as mismatch:
        rp.rebuilt(tampered)
    assert tampered[mismatch.value.position].seq == at.seq
    with pytest.raises(ReplayError) as refused:
        load_replay(db, MATCH)
    assert str(refused.value) == (
        f"match {MATCH}, round {at.round}, action {at.action_index}: the log says {at.move}"
        f" scored {(at.points or 0) + 5}, the rules give {at.points} (run sniff audit)"
    )

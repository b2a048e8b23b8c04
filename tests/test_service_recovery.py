"""Restarting the hub on an existing log: unfinished matches at once, finished ones on demand."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.errors import MatchNotFound
from service.hub import Hub
from service.storage import EventLog
from sniff import Phase, RandomBot, view


def play(hub: Hub, match_id: str, tokens: tuple[str, ...], observer: str, moves: int) -> None:
    live = hub.get(match_id)
    bot = RandomBot(7)
    for _ in range(moves):
        match = live.match
        if match.phase is Phase.OVER:
            return
        if match.phase is Phase.AWAITING_DEAL:
            hub.deal(match_id, observer, None)
            continue
        seat = match.turn
        hub.apply(match_id, tokens[seat], seat, bot.choose(view(match, seat)), match.move_count)


@pytest.mark.slow
def test_restart_rebuilds_unfinished_matches_and_loads_finished_ones_when_asked(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.duckdb"
    with EventLog(db) as log:
        hub = Hub(log)
        done = hub.create(2, seed=1)
        play(hub, done.match_id, done.seat_tokens, done.observer_token, 10_000)
        open_ = hub.create(3, seed=2)
        play(hub, open_.match_id, open_.seat_tokens, open_.observer_token, 40)
        before_done = hub.state(done.match_id, done.observer_token)[0]
        before_open = hub.state(open_.match_id, open_.observer_token)[0]
    assert before_done.phase is Phase.OVER

    with EventLog(db) as log:
        hub = Hub(log)
        assert hub.recover() == 1
        assert hub.match_ids() == [open_.match_id]
        assert hub.state(open_.match_id, open_.observer_token)[0] == before_open
        # The finished match comes back from the log on first use, tokens and all.
        assert hub.state(done.match_id, done.observer_token)[0] == before_done
        assert set(hub.match_ids()) == {open_.match_id, done.match_id}
        play(hub, open_.match_id, open_.seat_tokens, open_.observer_token, 10_000)
        assert hub.get(open_.match_id).match.phase is Phase.OVER


@pytest.mark.parametrize("match_id", ["0123456789abcdef", "not-an-id", ""])
def test_unknown_match_is_not_found(tmp_path: Path, match_id: str) -> None:
    with EventLog(tmp_path / "log.duckdb") as log, pytest.raises(MatchNotFound):
        Hub(log).get(match_id)


@pytest.mark.slow
def test_finished_matches_leave_memory_and_come_back_from_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("service.hub.FINISHED_KEPT", 1)
    with EventLog(tmp_path / "log.duckdb") as log:
        hub = Hub(log)
        first = hub.create(2, seed=1, target=20)
        play(hub, first.match_id, first.seat_tokens, first.observer_token, 10_000)
        view_first = hub.state(first.match_id, first.observer_token)[0]
        second = hub.create(2, seed=2, target=20)
        play(hub, second.match_id, second.seat_tokens, second.observer_token, 10_000)
        assert view_first.phase is Phase.OVER
        assert hub.match_ids() == [second.match_id]  # the first was retired
        assert hub.state(first.match_id, first.observer_token)[0] == view_first
        # A retry of the winning move still gets its original reply.
        live = hub.get(first.match_id)
        seat, _, outcome = live.outcomes[-1]
        again = hub.apply(
            first.match_id,
            first.seat_tokens[seat],
            seat,
            outcome.result.move,
            outcome.move_count - 1,
        )
        assert again == outcome

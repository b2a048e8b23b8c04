"""A simulation worker's rows (analysis.column_events.ColumnRecorder) are the plain recorder's,
byte for byte, hashes included, and its facts are a replay's."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from analysis import simulate
from analysis.bot_matches import seat_bots
from analysis.column_events import ColumnRecorder
from analysis.match_events import EventRecorder
from service.storage.chain import MatchSecrets
from service.storage.events import EventRow
from sniff.facts import replayed_rounds

FIXED = MatchSecrets(7, bytes(range(32)), bytes(range(32, 64)))


def plain_rows(settings: simulate.RunSettings, i: int) -> list[EventRow]:
    """Match i of the run as the plain recorder logs it (a `LogEvent` an event)."""
    players = seat_bots(settings.seats, settings.bots)
    return simulate._played(settings, i, players, EventRecorder).rows()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seats", "variant", "round_limit", "bots"),
    [
        (2, "american", None, ("greedy",)),
        (3, "stubby", None, ("greedy", "random")),
        (4, "berndt", None, ("random",)),
        (4, "british", 2, ("greedy", "random")),
        (2, "american", 1, ("random",)),
    ],
)
def test_a_simulated_matchs_rows_equal_the_plain_recorders_with_the_same_secrets(
    monkeypatch: pytest.MonkeyPatch,
    seats: int,
    variant: str,
    round_limit: int | None,
    bots: tuple[str, ...],
) -> None:
    monkeypatch.setattr(MatchSecrets, "new", classmethod(lambda cls, seed: FIXED))
    settings = simulate.RunSettings(
        "sim-rows", 6, seats, bots, 40, variant=variant, round_limit=round_limit, chunk_size=3
    )
    players = seat_bots(seats, bots)
    for i in range(settings.matches):
        fast = simulate._played(settings, i, players, ColumnRecorder)
        assert isinstance(fast, ColumnRecorder)
        assert fast.rows() == plain_rows(settings, i)
        # the facts followed during play are a replay's
        assert [asdict(r) for r in fast.rounds()] == [
            asdict(r) for r in replayed_rounds(fast.match)
        ]


def test_a_chunk_table_holds_its_matches_rows_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MatchSecrets, "new", classmethod(lambda cls, seed: FIXED))
    settings = simulate.RunSettings("sim-rows", 5, 3, ("greedy", "random"), 9, chunk_size=2)
    table, facts = simulate.chunk_table(settings, 1)  # matches 2 and 3
    rows = [tuple(r.values()) for r in table.to_pylist()]
    assert rows == plain_rows(settings, 2) + plain_rows(settings, 3)
    assert facts.matches["match_id"] == [settings.match_id(2), settings.match_id(3)]

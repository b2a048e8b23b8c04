"""A simulation worker's rows (service.match_recorder.EventRecorder) are the hub's way of
logging the same match, byte for byte, hashes included, and its facts are a replay's."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from analysis import simulate
from analysis.bot_matches import seat_bots
from service.storage.chain import MatchSecrets
from service.storage.events import EventRow
from sniff.facts import replayed_rounds
from tests.event_helpers import hub_way_rows

FIXED = MatchSecrets(7, bytes(range(32)), bytes(range(32, 64)))


def hub_rows(settings: simulate.RunSettings, i: int) -> list[EventRow]:
    """Match i of the run as the hub logs it (a `LogEvent` an event, sealed)."""
    players = seat_bots(settings.seats, settings.bots)
    return hub_way_rows(simulate._played(settings, i, players), explicit=False)


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
def test_a_simulated_matchs_rows_equal_the_hubs_with_the_same_secrets(
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
        made = simulate._played(settings, i, players)
        assert made.rows() == hub_way_rows(made, explicit=False)
        # the facts followed during play are a replay's
        assert [asdict(r) for r in made.rounds()] == [
            asdict(r) for r in replayed_rounds(made.match)
        ]


def test_a_chunk_table_holds_its_matches_rows_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MatchSecrets, "new", classmethod(lambda cls, seed: FIXED))
    settings = simulate.RunSettings("sim-rows", 5, 3, ("greedy", "random"), 9, chunk_size=2)
    table, facts = simulate.chunk_table(settings, 1)  # matches 2 and 3
    rows = [tuple(r.values()) for r in table.to_pylist()]
    assert rows == hub_rows(settings, 2) + hub_rows(settings, 3)
    assert facts.matches["match_id"] == [settings.match_id(2), settings.match_id(3)]

"""A simulation's workers make each match's facts while they play it, and the log keeps them.

The facts must be exactly those a replay of the logged match gives (what the log
computes for a chunk that comes without them), for every seat count and variant.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from analysis.bot_matches import recorded_bot_match, seat_bots
from analysis.simulate import (
    RunSettings,
    chunk_path,
    chunk_table,
    facts_paths,
    play_chunk,
    read_chunk,
    write_settings,
)
from service.storage import EventLog
from service.storage.facts import new_rows
from sniff.facts import facts_rows

pytestmark = pytest.mark.slow

SETTINGS = [
    (2, "american", None),
    (3, "american", None),
    (4, "american", None),
    (2, "stubby", None),
    (4, "berndt", 3),
    (3, "british", None),
]


@pytest.mark.parametrize(("seats", "variant", "round_limit"), SETTINGS)
def test_the_facts_made_while_playing_equal_those_of_a_replay(
    seats: int, variant: str, round_limit: int | None
) -> None:
    settings = RunSettings(
        run="f", matches=25, seats=seats, bots=("greedy", "random"), seed=7, chunk_size=25,
        variant=variant, round_limit=round_limit,
    )  # fmt: skip
    table, facts = chunk_table(settings, 0)
    replayed = new_rows()
    for i in range(settings.matches):
        played = recorded_bot_match(
            settings.match_id(i), seats, settings.seed + i, settings.bots,
            variant=variant, round_limit=round_limit,
        )  # fmt: skip
        facts_rows(played.match, played.match_id, seat_bots(seats, settings.bots),
                   "simulated", "f", out=replayed)  # fmt: skip
    assert facts == replayed  # rounds=None in facts_rows: a replay in the engine
    assert len(facts.matches["match_id"]) == settings.matches
    assert len(facts.rounds["match_id"]) > settings.matches
    assert table.num_rows > 0


def _facts_tables(db: Path) -> list[list[tuple[object, ...]]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return [
            con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
            for t in ("match_facts", "round_facts", "sniff_decisions")
        ]


def test_a_chunk_loads_with_its_workers_facts_and_an_old_chunk_without_them_gets_the_same(
    tmp_path: Path,
) -> None:
    settings = RunSettings(run="g", matches=12, seats=3, bots=("greedy",), seed=3, chunk_size=12)
    run_dir = tmp_path / "runs" / "g"
    write_settings(run_dir, settings)
    play_chunk((str(run_dir), settings.to_json(), 0))
    assert chunk_path(run_dir, 0).exists()
    assert all(p.exists() for p in facts_paths(run_dir, 0))
    table, facts = read_chunk(run_dir, 0)
    assert facts is not None
    with EventLog(tmp_path / "given.duckdb") as log:
        log.import_matches(table, verify=False, facts=facts)
    for p in facts_paths(run_dir, 0):  # a chunk written before workers made facts
        p.unlink()
    table, none = read_chunk(run_dir, 0)
    assert none is None
    with EventLog(tmp_path / "replayed.duckdb") as log:
        log.import_matches(table, verify=False)  # the log replays the matches
    given = _facts_tables(tmp_path / "given.duckdb")
    assert len(given[0]) == 12
    assert given == _facts_tables(tmp_path / "replayed.duckdb")

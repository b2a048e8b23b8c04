"""The facts of a served match are made once, by the hub that played it, and travel with
its end into the log: the log replays no match the hub has just finished, and what the
hub hands over is what a replay of the logged match makes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from service.hub import Hub
from service.storage import EventLog, open_readonly
from service.storage import log as log_module
from service.storage.facts import TABLES, fill_missing_facts
from sniff.variants import VARIANTS
from tests.test_service_recovery import play

pytestmark = pytest.mark.slow


def facts_tables(db: Path) -> dict[str, list[dict[str, Any]]]:
    with open_readonly(db) as reader:
        return {t: reader.query(f"SELECT * FROM {t} ORDER BY ALL").to_pylist() for t in TABLES}


def test_the_hub_hands_over_the_facts_and_the_log_replays_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replayed: list[list[str]] = []

    def no_replay(con: duckdb.DuckDBPyConnection, match_ids: list[str] | None = None) -> int:
        replayed.append(list(match_ids or []))
        return 0

    monkeypatch.setattr(log_module, "fill_missing_facts", no_replay)
    db = tmp_path / "log.duckdb"
    ids = []
    with EventLog(db) as log:
        hub = Hub(log)
        for seats in (2, 3, 4):
            for n, name in enumerate(VARIANTS):
                made = hub.create(seats, seed=10 * seats + n, target=60, variant=VARIANTS[name])
                play(hub, made.match_id, made.seat_tokens, made.observer_token, 10_000)
                ids.append(made.match_id)
        log.flush()
    assert replayed == []
    facts = facts_tables(db)
    assert sorted(r["match_id"] for r in facts["match_facts"]) == sorted(ids)
    assert {r["source"] for r in facts["match_facts"]} == {"served"}


def test_the_facts_the_hub_hands_over_are_those_a_replay_makes(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    with EventLog(db) as log:
        hub = Hub(log)
        for seats in (2, 3, 4):
            for n, name in enumerate(VARIANTS):
                made = hub.create(
                    seats, seed=100 + 10 * seats + n, target=80, variant=VARIANTS[name]
                )
                play(hub, made.match_id, made.seat_tokens, made.observer_token, 10_000)
    handed = facts_tables(db)
    assert len(handed["match_facts"]) == 12
    con = duckdb.connect(str(db))
    try:
        for table in TABLES:
            con.execute(f"DELETE FROM {table}")
        assert fill_missing_facts(con) == 12
    finally:
        con.close()
    assert facts_tables(db) == handed

"""Schema version 6 files become version 7: the facts tables lose their own keys, keep
every row in its order, and the log goes on taking matches.

The version-6 file is made from a log of this release by putting back round_facts and
sniff_decisions exactly as version 6 created them (tests/fixtures/facts_v6.sql, that
release's facts.sql for the two tables) with the same rows, and the version number.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from analysis.simfacts import engine_rows, facts_tables
from analysis.simulate import RunSettings, chunk_table, match_settings, simulation_run
from service.storage import SCHEMA_VERSION, EventLog
from sniff.rules import RULES_VERSION
from sniff.seeds import match_seed

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TABLES = ("round_facts", "sniff_decisions")


def _rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    with duckdb.connect(str(path), read_only=True) as con:
        return {t: con.execute(f"SELECT * FROM {t}").fetchall() for t in TABLES}


def _keys(path: Path) -> list[tuple[str, str]]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(
            "SELECT table_name, constraint_type FROM duckdb_constraints() "
            "WHERE table_name IN ('round_facts', 'sniff_decisions') "
            "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE') ORDER BY ALL"
        ).fetchall()


def _filled_log(path: Path) -> None:
    """Served-style matches with their events, and a facts-only simulation chunk."""
    events = RunSettings("ev", 3, 2, ("greedy", "random"), 5, chunk_size=3, events=True)
    facts = RunSettings("fa", 4, 3, ("random",), 9, chunk_size=4)
    with EventLog(path) as log:
        table, rows = chunk_table(events, 0)
        log.import_matches(table, facts=rows)
        seeds = [match_seed(facts.seed, i) for i in range(facts.matches)]
        t = facts_tables(engine_rows(match_settings(facts), seeds), "fa", 0, seeds, 3)
        log.store_simulated(simulation_run(facts), RULES_VERSION, t.matches, t.rounds, t.decisions)


def _as_version_6(path: Path) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute("BEGIN TRANSACTION")
        for t in TABLES:
            con.execute(f"ALTER TABLE {t} RENAME TO {t}_now")
        con.execute((FIXTURES / "facts_v6.sql").read_text())
        for t in TABLES:
            con.execute(f"INSERT INTO {t} SELECT * FROM {t}_now")
            con.execute(f"DROP TABLE {t}_now")
        con.execute("UPDATE schema_version SET version = 6")
        con.execute("COMMIT")


@pytest.fixture
def v6(tmp_path: Path) -> Path:
    path = tmp_path / "v6.duckdb"
    _filled_log(path)
    _as_version_6(path)
    assert _keys(path) == [("round_facts", "PRIMARY KEY"), ("sniff_decisions", "PRIMARY KEY")]
    return path


def test_a_version_6_file_keeps_every_facts_row_in_order_and_drops_the_two_keys(
    v6: Path,
) -> None:
    before = _rows(v6)
    assert all(before[t] for t in TABLES)
    with EventLog(v6) as log:
        assert log.opening.version_found == 6
        assert log.schema_version() == SCHEMA_VERSION == 7
    assert _rows(v6) == before
    assert _keys(v6) == []


def test_a_migrated_file_takes_new_matches_and_refuses_one_twice(v6: Path) -> None:
    more = RunSettings("ev2", 2, 2, ("greedy",), 77, chunk_size=2, events=True)
    table, rows = chunk_table(more, 0)
    with EventLog(v6) as log:
        first = log.import_matches(table, facts=rows)
        again = log.import_matches(table, facts=rows)
    assert len(first.imported) == 2
    assert again.imported == ()
    assert len(again.present) == 2
    with duckdb.connect(str(v6), read_only=True) as con:
        dupes = con.execute(
            "SELECT count(*) FROM (SELECT match_id, round FROM round_facts "
            "GROUP BY ALL HAVING count(*) > 1)"
        ).fetchall()
    assert dupes == [(0,)]

"""The facts of finished matches stored in the event log (service/storage/facts.py): written
by a served match's end, by an import, and by the migration from version 3; each equal to
the facts of replaying the same match from its record."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from analysis.bot_matches import bot_match_events
from analysis.cli.main import cli
from analysis.importer import imported_match_id
from analysis.remote import play_remote_match
from analysis.stats.load import load_records
from analysis.stats.store import FactsStore
from service.storage import EventLog, open_readonly
from service.storage.events import to_rows
from service.storage.facts import TABLES
from service.storage.journal import Journal, journal_path
from sniff import to_record
from tests.service_helpers import serving
from tests.test_stats_timing import bot_matches

pytestmark = pytest.mark.slow

IDENTITY = {"match_id", "source", "run", "players"}
"""Columns that say where a match came from, not what happened in it."""


def stored(db: Path) -> dict[str, list[dict[str, Any]]]:
    with open_readonly(db) as reader:
        return {t: reader.query(f"SELECT * FROM {t} ORDER BY ALL").to_pylist() for t in TABLES}


def replayed(lines: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The facts of the records' matches, replayed by the statistics' own loader."""
    store = FactsStore.in_memory()
    load_records(store, lines)
    out = {t: store.con.sql(f"SELECT * FROM {t}").to_arrow_table().to_pylist() for t in TABLES}
    store.close()
    return out


def content(facts: dict[str, list[dict[str, Any]]], ids: dict[str, str]) -> dict[str, list[str]]:
    """Each table's rows, with match ids mapped through `ids`, without the identity columns
    but the id: comparable across a log and a replay of its records."""
    out = {}
    for table, rows in facts.items():
        out[table] = sorted(
            json.dumps(
                {"id": ids.get(r["match_id"], r["match_id"])}
                | {k: v for k, v in r.items() if k not in IDENTITY},
                sort_keys=True,
            )
            for r in rows
        )
    return out


def exported(db: Path) -> list[str]:
    result = CliRunner().invoke(cli, ["export", "--db", str(db)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [line for line in result.stdout.splitlines() if line.strip()]


def test_a_served_match_stores_the_facts_of_its_replay(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    with serving(db) as service:
        for seats, seed in ((2, 3), (3, 5), (4, 8)):
            play_remote_match(service.stub, seats, ["greedy", "random"], seed=seed)
    facts = stored(db)
    assert len(facts["match_facts"]) == 3
    assert {r["source"] for r in facts["match_facts"]} == {"served"}
    assert facts["sniff_decisions"], "bot matches have Sniff decisions"
    records = exported(db)
    assert content(facts, {}) == content(replayed(records), {})


def test_imported_matches_store_their_facts(tmp_path: Path) -> None:
    lines = [
        json.dumps(to_record(m, f"b{i}", players))
        for i, (m, players) in enumerate(bot_matches(6, 11))
    ]
    records = tmp_path / "m.jsonl"
    records.write_text("\n".join(lines) + "\n")
    db = tmp_path / "log.duckdb"
    result = CliRunner().invoke(
        cli, ["import", str(records), "--db", str(db)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    facts = stored(db)
    assert {r["source"] for r in facts["match_facts"]} == {"imported"}
    ids = {imported_match_id(json.loads(line)): json.loads(line)["id"] for line in lines}
    assert content(facts, ids) == content(replayed(lines), {})
    # The players (the records' own) are kept, as the replay of the records reads them.
    by_id = {ids[r["match_id"]]: r["players"] for r in facts["match_facts"]}
    assert by_id == {r["match_id"]: r["players"] for r in replayed(lines)["match_facts"]}
    assert any(by_id.values())


def test_the_migration_from_version_3_fills_the_facts_by_replay(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    with EventLog(db) as log:
        for seats, seed in ((2, 1), (3, 2), (4, 3)):
            log.append(bot_match_events(f"m{seats}", seats, seed))
        log.append(bot_match_events("in-play", 3, 4, max_actions=30))
    expected = stored(db)
    assert len(expected["match_facts"]) == 3  # the match in play has none
    # A version-3 file as the release before this one made it: version 4 only adds the
    # facts tables (migrate_3_to_4.sql), so dropping them gives the same file.
    with duckdb.connect(str(db)) as con:
        for table in (*TABLES, "tree_leaves", "tree_heads", "checkpoints"):  # version 5's too
            con.execute(f"DROP TABLE {table}")
        con.execute("UPDATE schema_version SET version = 3")
    with EventLog(db) as log:
        assert log.opening.version_found == 3
    assert stored(db) == expected
    assert content(expected, {}) == content(replayed(exported(db)), {})


def test_a_match_whose_end_was_only_in_the_journal_gets_its_facts_at_open(
    tmp_path: Path,
) -> None:
    """A crash after the match's end was made durable in the journal, before DuckDB had it:
    the open that loads the journal writes the facts in the same transaction."""
    events = bot_match_events("m", 3, 2)
    reference = tmp_path / "reference.duckdb"
    with EventLog(reference) as log:
        log.append(events)
    db = tmp_path / "log.duckdb"
    with EventLog(db) as log:
        log.append(events[:10])
    stamp = datetime.now(UTC)
    journal = Journal(journal_path(db))
    journal.write([(*row[:-1], stamp) for row in to_rows(events[10:])])
    journal.close(remove=False)
    with EventLog(db) as log:
        assert log.opening.journal_rows == len(events) - 10
    facts = stored(db)
    assert len(facts["match_facts"]) == 1
    assert content(facts, {}) == content(stored(reference), {})

"""Schema version 1 files are migrated to version 2 whole, and keep every query working.

The version-1 file is made as release 1 made it: tests/fixtures/schema_v1.sql
is that release's schema.sql, byte for byte, and the rows go in with its
insert. One of them has a target that version 1 accepted and then could not
read back (3,000,000,000 in an INTEGER cast), which broke its `matches` view
for every analyst.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from service.storage import (
    SCHEMA_VERSION,
    EventLog,
    LogEvent,
    SchemaVersionError,
    open_readonly,
)
from service.storage.events import EventRow, to_rows
from service.storage.journal import Journal, journal_path
from service.storage.migrate import MIGRATIONS
from tests.storage_helpers import digest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
V1_VIEWS = ["actions", "deals", "match_ends", "matches", "round_ends"]


def finished_match(match_id: str) -> list[LogEvent]:
    created = LogEvent.match_created(
        match_id, seats=2, target=250, seed=2**64 - 1, rules_version="1"
    )
    return [
        created,
        LogEvent.round_dealt(
            match_id,
            1,
            round=0,
            hands=[["1-4"], ["0-0"]],
            boneyard=["2-2"],
            leader=1,
            leader_choice="lot",
        ),
        LogEvent.action(match_id, 2, round=0, action_index=0, seat=1, move="1-4", points=5),
        LogEvent.action(match_id, 3, round=0, action_index=1, seat=0, move="draw", drawn="2-2"),
        LogEvent.round_ended(
            match_id,
            4,
            round=0,
            end="blocked",
            finisher=None,
            pips=[4, 0],
            deductions=[5, 0],
            scores=[0, 5],
        ),
        LogEvent.match_ended(match_id, 5, winner=1, scores=[0, 5]),
    ]


def with_target(rows: list[EventRow], target: int) -> list[EventRow]:
    """The rows with another target in the match_created detail: version 1 took any."""
    created = rows[0]
    detail = {**json.loads(str(created[10])), "target": target}
    return [(*created[:10], json.dumps(detail), *created[11:]), *rows[1:]]


def make_v1(path: Path, rows: list[EventRow]) -> None:
    """A log file exactly as version 1 wrote it."""
    with duckdb.connect(str(path)) as con:
        con.execute((FIXTURES / "schema_v1.sql").read_text(encoding="utf-8"))
        for row in rows:
            con.execute(
                "INSERT INTO events (match_id, seq, kind, round, action_index, seat, move, drawn,"
                " points, ends_sum, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                list(row[:11]),
            )


def shapes(con: duckdb.DuckDBPyConnection, names: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Each relation's (column name, type) pairs, in order."""
    return {
        name: [(row[0], row[1]) for row in con.execute(f"DESCRIBE {name}").fetchall()]
        for name in names
    }


@pytest.fixture
def v1(tmp_path: Path) -> Path:
    path = tmp_path / "old.duckdb"
    huge = with_target(to_rows(finished_match("huge")), 3_000_000_000)
    make_v1(path, [*to_rows(finished_match("good")), *huge])
    return path


def test_version_1_broke_its_matches_view_on_one_bad_row(v1: Path) -> None:
    with duckdb.connect(str(v1)) as con, pytest.raises(duckdb.ConversionException):
        con.execute("SELECT * FROM matches").fetchall()


@pytest.mark.slow
def test_a_version_1_file_is_migrated_and_keeps_its_columns(v1: Path) -> None:
    with duckdb.connect(str(v1), read_only=True) as con:
        before = shapes(con, [*V1_VIEWS, "events"])
        old_events = con.execute("SELECT * FROM events ORDER BY match_id, seq").fetchall()
    with EventLog(v1) as log:
        assert log.opening.version_found == 1
        assert log.schema_version() == SCHEMA_VERSION == 7
        matches = log.query("SELECT match_id, target, seed FROM matches ORDER BY match_id")
        assert matches.to_pylist() == [
            {"match_id": "good", "target": 250, "seed": 2**64 - 1},
            {"match_id": "huge", "target": None, "seed": 2**64 - 1},  # NULL, not an error
        ]
        assert log.events_for("good") == finished_match("good")
        assert log.count() == len(old_events)
    with duckdb.connect(str(v1), read_only=True) as con:
        after = shapes(con, [*V1_VIEWS, "events"])
    for name, columns in before.items():  # names and types kept; later versions add columns
        assert after[name][: len(columns)] == columns, name


@pytest.mark.slow
def test_every_query_of_version_1_answers_the_same_after_the_migration(v1: Path) -> None:
    queries = [
        "SELECT * FROM deals ORDER BY match_id",
        "SELECT * FROM actions ORDER BY match_id, seq",
        "SELECT * FROM round_ends ORDER BY match_id",
        "SELECT * FROM match_ends ORDER BY match_id",
        "SELECT * FROM events ORDER BY match_id, seq",
        "SELECT * EXCLUDE (target) FROM matches WHERE match_id = 'good'",
    ]
    with duckdb.connect(str(v1), read_only=True) as con:
        before = [con.execute(sql).fetchall() for sql in queries]
    with EventLog(v1):
        pass
    with open_readonly(v1) as reader:
        after = [[tuple(row.values()) for row in reader.query(sql).to_pylist()] for sql in queries]
    for sql, old, new in zip(queries, before, after, strict=True):
        # Later versions add columns at the end: the old ones answer the same.
        assert [tuple(_plain(v) for v in row) for row in old] == [
            tuple(_plain(v) for v in row[: len(old[0])]) for row in new
        ], sql


def _plain(value: object) -> object:
    """JSON text as its value, so key order and spacing do not count."""
    if isinstance(value, str) and value[:1] in "{[":
        return json.loads(value)
    return value


@pytest.mark.slow
def test_a_journal_left_by_version_1_is_loaded_after_the_migration(v1: Path) -> None:
    journal = Journal(journal_path(v1))
    late = to_rows([LogEvent.match_created("late", seats=2, target=1, seed=1, rules_version="1")])
    journal.write(with_target(late, 2**40))
    journal.close(remove=False)
    with EventLog(v1) as log:
        assert (log.opening.version_found, log.opening.loaded_rows) == (1, 1)
        late = log.query("SELECT target, created_at FROM matches_all WHERE match_id = 'late'")
        assert late.column("target").to_pylist() == [None]  # too big for the column: NULL
        assert late.column("created_at").to_pylist()[0] is not None


@pytest.mark.slow
def test_a_read_only_open_refuses_version_1_and_names_the_upgrade(v1: Path) -> None:
    before = digest(v1)
    with pytest.raises(SchemaVersionError, match="sniff recover"):
        open_readonly(v1)
    assert digest(v1) == before


@pytest.mark.slow
def test_a_migration_that_fails_leaves_the_file_as_it_was(v1: Path) -> None:
    with duckdb.connect(str(v1)) as con:  # a step cannot run: its table already exists
        con.execute("CREATE TABLE match_settings_all (x INTEGER)")
    with pytest.raises(duckdb.CatalogException):
        EventLog(v1)
    with duckdb.connect(str(v1), read_only=True) as con:
        assert con.execute("SELECT max(version) FROM schema_version").fetchall() == [(1,)]
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert "events" in tables
        assert "events_all" not in tables
        views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views()").fetchall()}
        assert set(V1_VIEWS) <= views


def test_every_older_version_has_a_migration_step() -> None:
    assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION))

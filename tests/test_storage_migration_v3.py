"""Schema version 2 files become version 3: chained, typed, indexed, and still playable.

The version-2 file is made as release 2 made it: tests/fixtures/schema_v2.sql
is that release's schema.sql and views.sql, byte for byte, and its rows are
what its service logged (no hash, no commitment, a match_ended detail of
winner and scores only). The chain 1 -> 2 -> 3 starts from the version-1
fixture.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from analysis.bot_matches import bot_match_events
from service.hub import Hub
from service.match_recorder import EventRecorder
from service.storage import SCHEMA_VERSION, EventLog, LogEvent, open_readonly
from service.storage import chain as chain_
from service.storage.journal import Journal, journal_path
from sniff import Deal, Phase, Tile
from tests.storage_helpers import digest
from tests.test_storage_migration import make_v1

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent / "fixtures"
V3_KEYS = ("seed_commitment", "seed_salt", "chain_secret", "rounds", "ended_by")
TOKENS = ("seat-zero-token", "seat-one-token", "seat-two-token", "observer-token")


def as_release_2(events: list[LogEvent], tokens: int = 0) -> list[tuple[Any, ...]]:
    """The rows release 2 logged for these events: the keys of version 3 left out."""
    rows = []
    for e in events:
        detail = {k: v for k, v in (e.detail or {}).items() if k not in V3_KEYS}
        if e.kind == "match_ended":
            detail = {"winner": detail["winner"], "scores": detail["scores"]}
            detail.pop("seed", None)
        if e.kind == "match_created" and tokens:
            detail["token_sha256"] = [
                hashlib.sha256(t.encode()).hexdigest() for t in (*TOKENS[: tokens - 1], TOKENS[-1])
            ]
        rows.append(
            (
                e.match_id,
                e.seq,
                e.kind,
                e.round,
                e.action_index,
                e.seat,
                e.move,
                e.drawn,
                e.points,
                e.ends_sum,
                None if e.detail is None else json.dumps(detail),
            )
        )
    return rows


def make_v2(path: Path, rows: list[tuple[Any, ...]]) -> None:
    """A log file exactly as version 2 wrote it (events, then the settings its load made)."""
    with duckdb.connect(str(path)) as con:
        con.execute((FIXTURES / "schema_v2.sql").read_text(encoding="utf-8"))
        con.executemany(
            "INSERT INTO events_all (match_id, seq, kind, round, action_index, seat, move, drawn,"
            " points, ends_sum, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        con.execute(
            "INSERT INTO match_settings_all SELECT match_id,"
            " CAST(detail ->> '$.seats' AS SMALLINT), CAST(detail ->> '$.target' AS INTEGER),"
            " CAST(detail ->> '$.seed' AS HUGEINT), detail ->> '$.rules_version', logged_at"
            " FROM events_all WHERE kind = 'match_created'"
        )


def explicit_match() -> list[LogEvent]:
    hands = ("1-4 4-4 1-2 5-5 1-3 2-2 6-6", "1-1 3-4 1-5 0-5 0-0 2-3 3-6")
    boneyard = "0-1 0-2 0-3 0-4 0-6 1-6 2-4 2-5 2-6 3-3 3-5 4-5 4-6 5-6"
    deal = Deal(
        tuple(tuple(Tile.parse(t) for t in h.split()) for h in hands),
        tuple(Tile.parse(t) for t in boneyard.split()),
        0,
    )
    recorder = EventRecorder("explicit", 2, seed=5, deal=deal)
    recorder.apply("1-4")
    return recorder.events


@pytest.fixture
def v2(tmp_path: Path) -> Path:
    path = tmp_path / "v2.duckdb"
    rows = [
        *as_release_2(bot_match_events("done", 3, 1)),
        *as_release_2(bot_match_events("limited", 4, 2, round_limit=2, variant="stubby")),
        *as_release_2(bot_match_events("open", 2, 3, max_actions=20), tokens=3),
        *as_release_2(explicit_match(), tokens=3),
    ]
    make_v2(path, rows)
    return path


def test_a_version_2_file_gets_a_legacy_chain_on_every_event(v2: Path) -> None:
    with duckdb.connect(str(v2), read_only=True) as con:
        before = con.execute(
            "SELECT match_id, seq, kind, round, action_index, seat, move, drawn, points,"
            " ends_sum, CAST(detail AS VARCHAR) FROM events_all ORDER BY match_id, seq"
        ).fetchall()
    with EventLog(v2) as log:
        assert log.opening.version_found == 2
        assert log.schema_version() == SCHEMA_VERSION == 7
        stored = log.query(
            "SELECT match_id, seq, hash FROM events_all ORDER BY match_id, seq"
        ).to_pylist()
        chained = log.query(
            "SELECT match_id, chained_at_migration FROM match_settings_all ORDER BY match_id"
        ).to_pylist()
    expected: dict[tuple[str, int], bytes] = {}
    previous: dict[str, bytes] = {}
    for row in before:  # the page's legacy link, recomputed from the old rows
        link = chain_.link(previous.get(row[0], chain_.GENESIS), None, chain_.row_content(row))
        previous[row[0]] = expected[(row[0], row[1])] = link
    assert {(r["match_id"], r["seq"]): r["hash"] for r in stored} == expected
    counts: dict[str, int] = {}
    for row in before:
        counts[row[0]] = counts.get(row[0], 0) + 1
    assert {r["match_id"]: r["chained_at_migration"] for r in chained} == counts


def test_a_version_2_file_gets_its_typed_settings_and_results(v2: Path) -> None:
    with EventLog(v2) as log:
        rows = log.query(
            "SELECT match_id, seats, variant, round_limit, source, explicit_deals, finished,"
            " winner, scores, rounds, ended_by, seed_commitment FROM matches ORDER BY match_id"
        ).to_pylist()
        plan = log.query(
            "EXPLAIN ANALYZE SELECT * FROM events_all WHERE match_id = 'done'"
        ).to_pylist()[0]["explain_value"]
        counted = log.query(
            "SELECT match_id, count(*) AS n FROM deals GROUP BY ALL ORDER BY match_id"
        ).to_pylist()
    by_id = {r["match_id"]: r for r in rows}
    rounds = {r["match_id"]: r["n"] for r in counted}
    done = by_id["done"]
    assert (done["seats"], done["variant"], done["source"], done["finished"]) == (
        3,
        "american",
        "served",
        True,
    )
    assert (done["rounds"], done["ended_by"], done["seed_commitment"]) == (
        rounds["done"],
        "target",
        None,
    )
    limited = by_id["limited"]
    assert (limited["variant"], limited["round_limit"], limited["rounds"]) == ("stubby", 2, 2)
    assert limited["ended_by"] == "round_limit"
    assert by_id["open"]["finished"] is False
    assert by_id["open"]["rounds"] is None
    assert by_id["explicit"]["explicit_deals"] is True
    assert not done["explicit_deals"]
    assert "Index Scan" in plan


def test_a_match_in_play_when_migrated_goes_on_with_a_legacy_chain(v2: Path) -> None:
    with EventLog(v2) as log:
        hub = Hub(log)
        assert hub.recover() == 2  # "open" and "explicit"
        live = hub.get("open")
        assert live.secrets is None  # begun before the chain: no secret to give it
        match = live.match
        outcomes = []
        while match.phase is not Phase.OVER:
            if match.phase is Phase.AWAITING_DEAL:
                hub.deal("open", TOKENS[0], None)
                continue
            seat = match.turn
            outcomes.append(
                hub.apply("open", TOKENS[seat], seat, match.legal_moves()[0], match.move_count)
            )
        events = log.events_for("open")
        proof = hub.state("open", TOKENS[0])[2]
    # No head while anything is hidden (an unkeyed head could be tested against guesses);
    # the match's end gives it.
    ends = [o for o in outcomes if o.result.round_end is not None or o.result.match_over]
    assert len(ends) >= 2
    assert all(o.chain_head is None for o in ends[:-1])
    assert ends[-1].chain_head == events[-1].hash
    assert proof.head == events[-1].hash
    previous = chain_.GENESIS
    for event in events:
        previous = chain_.link(previous, None, chain_.event_content(event))
        assert event.hash == previous, event.seq


def test_a_journal_left_by_release_2_is_chained_on_after_the_migration(v2: Path) -> None:
    late = bot_match_events("late", 2, 9)
    journal = Journal(journal_path(v2))
    rows = [(*row, "2025-01-01") for row in as_release_2(late[:3])]
    # Release 2's journal lines: the 11 columns and logged_at as epoch microseconds.
    with open(journal_path(v2), "ab") as handle:
        for row in rows:
            handle.write((json.dumps([*row[:-1], 1_700_000_000_000_000]) + "\n").encode())
    journal.close(remove=False)
    with EventLog(v2) as log:
        assert log.opening.loaded_rows == 3
        events = log.events_for("late")
        chained = log.query(
            "SELECT chained_at_migration FROM match_settings_all WHERE match_id = 'late'"
        ).to_pylist()
    assert [e.hash for e in events] == chain_.chain([chain_.event_content(e) for e in events], None)
    assert chained == [{"chained_at_migration": 3}]


def test_a_version_1_file_is_migrated_to_version_3_in_one_go(tmp_path: Path) -> None:
    path = tmp_path / "v1.duckdb"
    events = bot_match_events("old", 2, 4)
    make_v1(path, [(*r, None) for r in as_release_2(events)])
    with EventLog(path) as log:
        assert log.opening.version_found == 1
        stored = log.events_for("old")
        result = log.query(
            "SELECT winner, scores, rounds, ended_by, finished FROM matches"
        ).to_pylist()
    assert [e.hash for e in stored] == chain_.chain([chain_.event_content(e) for e in stored], None)
    ended = events[-1].detail or {}
    assert result == [
        {
            "winner": ended["winner"],
            "scores": ended["scores"],
            "rounds": ended["rounds"],
            "ended_by": "target",
            "finished": True,
        }
    ]


def test_a_failed_migration_to_version_3_leaves_the_file_as_it_was(v2: Path) -> None:
    with duckdb.connect(str(v2)) as con:  # the step cannot run: its table already exists
        con.execute("CREATE TABLE match_results_all (x INTEGER)")
    before = digest(v2)
    with pytest.raises(duckdb.CatalogException):
        EventLog(v2)
    with duckdb.connect(str(v2), read_only=True) as con:
        assert con.execute("SELECT max(version) FROM schema_version").fetchall() == [(2,)]
        columns = [r[0] for r in con.execute("DESCRIBE events_all").fetchall()]
        assert "hash" not in columns
    assert digest(v2) == before


def test_a_read_only_open_refuses_version_2_and_changes_nothing(v2: Path) -> None:
    before = digest(v2)
    with pytest.raises(Exception, match="sniff recover"):
        open_readonly(v2)
    assert digest(v2) == before

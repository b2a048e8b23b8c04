"""The event log on real DuckDB files: schema, reopening, group commit, sequences."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from service.storage import (
    SCHEMA_VERSION,
    DuplicateEvent,
    EventLog,
    LogClosed,
    LogEvent,
    LogLocked,
    SchemaVersionError,
    SequenceGap,
    open_readonly,
)
from tests.storage_helpers import action, created, ended, group_commit, held_by_another_process

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "events.duckdb"


@pytest.fixture
def log(db: Path) -> Iterator[EventLog]:
    with EventLog(db) as opened:
        yield opened


# -- schema -------------------------------------------------------------------


def test_a_new_file_gets_the_schema_and_current_version(db: Path) -> None:
    with EventLog(db) as log:
        assert log.schema_version() == SCHEMA_VERSION == 7
        assert log.opening.version_found is None
        views = log.query(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY view_name"
        ).column("view_name")
        assert views.to_pylist() == [
            "actions",
            "actions_all",
            "deals",
            "deals_all",
            "events",
            "match_ends",
            "match_seats",
            "matches",
            "matches_all",
            "round_ends",
            "rounds",
        ]
        tables = log.query(
            "SELECT table_name FROM duckdb_tables() WHERE NOT internal ORDER BY table_name"
        ).column("table_name")
        assert sorted(tables.to_pylist()) == [
            "checkpoints",
            "events_all",
            "match_facts",
            "match_results_all",
            "match_settings_all",
            "round_facts",
            "schema_version",
            "simulation_runs",
            "sniff_decisions",
            "tree_heads",
            "tree_leaves",
        ]
    assert db.exists()


def test_a_file_of_a_newer_schema_version_is_refused(db: Path) -> None:
    newer = SCHEMA_VERSION + 1
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE schema_version (version INTEGER)")
        con.execute("INSERT INTO schema_version VALUES (?)", [newer])
    with pytest.raises(SchemaVersionError, match=f"version {newer}"):
        EventLog(db)
    with pytest.raises(SchemaVersionError, match=f"version {newer}"):
        open_readonly(db)
    with duckdb.connect(str(db)) as con:  # refused before anything was changed
        assert con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchone() == (
            0,
        )


def test_a_duckdb_file_that_is_not_an_event_log_is_refused(db: Path) -> None:
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE scores (x INTEGER)")
    with pytest.raises(SchemaVersionError, match="not an American Sniff event log"):
        EventLog(db)


@pytest.mark.slow
def test_reopening_keeps_the_data_and_each_match_sequence(db: Path) -> None:
    with EventLog(db) as log:
        log.append([created("m"), action("m", 1), action("m", 2)])
        log.append([created("done"), ended("done", 1)])
    assert not Path(f"{db}.wal").exists()  # a clean close checkpoints everything
    with EventLog(db) as log:
        assert log.count() == 5
        assert [e.seq for e in log.events_for("m")] == [0, 1, 2]
        with pytest.raises(DuplicateEvent):
            log.append([action("m", 2)])
        with pytest.raises(SequenceGap):
            log.append([action("m", 4)])
        log.append([action("m", 3)])
        # A finished match is no longer kept in memory; the file still knows it.
        with pytest.raises(DuplicateEvent):
            log.append([action("done", 1)])
        with pytest.raises(SequenceGap):
            log.append([action("done", 3)])
    with open_readonly(db) as reader:
        assert reader.count() == 6


def test_events_read_back_equal_the_events_appended(log: EventLog) -> None:
    events = [
        created("m"),
        LogEvent.round_dealt(
            "m",
            1,
            round=0,
            hands=[["1-4", "0-0"], ["1-1", "2-2"]],
            boneyard=["0-2", "1-3"],
            leader=0,
            leader_choice="lot",
        ),
        LogEvent.action("m", 2, round=0, action_index=0, seat=0, move="1-4", points=5, ends_sum=5),
        LogEvent.action("m", 3, round=0, action_index=1, seat=1, move="1-1@1-4:low"),
        LogEvent.round_ended(
            "m",
            4,
            round=0,
            end="domino",
            finisher=1,
            pips=[0, 12],
            deductions=[0, 10],
            scores=[45, 30],
        ),
        ended("m", 5),
    ]
    log.append(events)
    back = log.events_for("m")
    assert back == events
    assert all(e.logged_at is not None and e.logged_at.tzinfo is not None for e in back)
    assert log.match_ids() == ["m"]
    assert log.match_ids(unfinished_only=True) == []


@pytest.mark.slow
def test_the_views_unpack_the_detail_fields(log: EventLog) -> None:
    log.append(
        [
            created("m"),
            LogEvent.round_dealt(
                "m",
                1,
                round=0,
                hands=[["1-4"], ["0-0"]],
                boneyard=["2-2"],
                leader=1,
                leader_choice="lot",
            ),
            LogEvent.action("m", 2, round=0, action_index=0, seat=1, move="1-4", points=5),
            LogEvent.action("m", 3, round=0, action_index=1, seat=0, move="draw", drawn="2-2"),
            LogEvent.round_ended(
                "m",
                4,
                round=0,
                end="blocked",
                finisher=None,
                pips=[4, 0],
                deductions=[5, 0],
                scores=[0, 5],
            ),
            ended("m", 5),
        ]
    )
    (match,) = log.query("SELECT * FROM matches").to_pylist()
    assert (match["seats"], match["target"], match["seed"], match["finished"]) == (2, 250, 7, True)
    assert (match["winner"], match["scores"]) == (0, [251, 188])
    assert match["rules_version"] == "1"
    assert match["created_at"] == log.events_for("m")[0].logged_at
    (deal,) = log.query("SELECT * FROM deals").to_pylist()
    assert (deal["hands"], deal["boneyard"], deal["leader"]) == ([["1-4"], ["0-0"]], ["2-2"], 1)
    moves = log.query("SELECT move_type, tile, drawn FROM actions ORDER BY seq").to_pylist()
    assert moves == [
        {"move_type": "lead", "tile": "1-4", "drawn": None},
        {"move_type": "draw", "tile": None, "drawn": "2-2"},
    ]
    (end,) = log.query("SELECT ending, finisher, pips, deductions FROM round_ends").to_pylist()
    assert end == {"ending": "blocked", "finisher": None, "pips": [4, 0], "deductions": [5, 0]}
    assert log.query("SELECT winner FROM match_ends").to_pylist() == [{"winner": 0}]


# -- group commit --------------------------------------------------------------


@pytest.mark.slow
def test_eight_threads_appending_at_once_all_land_in_order(log: EventLog) -> None:
    per_thread = 150
    errors: list[BaseException] = []

    def play(match_id: str) -> None:
        try:
            log.append([created(match_id)])
            for seq in range(1, per_thread):
                log.append([action(match_id, seq)])  # one event per call, like the service
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=play, args=(f"m{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert log.count() == 8 * per_thread
    for i in range(8):
        assert [e.seq for e in log.events_for(f"m{i}")] == list(range(per_thread))
    # Waiting callers were committed together: fewer commits (one now() each)
    # than events.
    commits = log.query("SELECT count(DISTINCT logged_at) AS n FROM events").column("n")[0]
    assert commits.as_py() < 8 * per_thread


def test_a_duplicate_fails_only_its_own_batch_in_a_group_commit(log: EventLog) -> None:
    log.append([created("a"), action("a", 1)])
    # Nothing is committed until all three batches are queued: one group commit.
    with group_commit(log) as append:
        good_before = append([action("a", 2)])
        duplicate = append([action("a", 3), action("a", 1)])
        good_after = append([created("b"), action("a", 3)])
    good_before.result(timeout=10)
    good_after.result(timeout=10)
    with pytest.raises(DuplicateEvent) as info:
        duplicate.result(timeout=10)
    assert (info.value.match_id, info.value.seq) == ("a", 1)
    assert [e.seq for e in log.events_for("a")] == [0, 1, 2, 3]
    assert log.events_for("a")[3] == action("a", 3)  # from good_after, not half of duplicate
    assert [e.seq for e in log.events_for("b")] == [0]


def test_a_reused_id_of_a_finished_match_fails_only_its_batch(log: EventLog) -> None:
    # The writer forgets finished matches, so here the database's primary key
    # catches the duplicate and the group is retried batch by batch.
    log.append([created("old"), ended("old", 1)])
    with group_commit(log) as append:
        first = append([created("x")])
        reused = append([created("old")])
        last = append([created("y"), action("y", 1)])
    first.result(timeout=10)
    last.result(timeout=10)
    with pytest.raises(DuplicateEvent, match="old"):
        reused.result(timeout=10)
    assert log.count() == 5
    assert log.match_ids() == ["old", "x", "y"]


def test_a_large_group_goes_in_whole_as_arrow(log: EventLog) -> None:
    big = [created("big")] + [action("big", seq) for seq in range(1, 3000)]
    with group_commit(log) as append:  # one group: the big batch, a bad one, a small one
        whole = append(big)
        reused = append([created("big")])
        small = append([created("s")])
    whole.result(timeout=30)
    small.result(timeout=30)
    with pytest.raises(DuplicateEvent):
        reused.result(timeout=30)
    assert [e.seq for e in log.events_for("big")] == list(range(3000))
    assert log.count() == 3001


def test_a_value_the_database_cannot_store_fails_only_its_batch(log: EventLog) -> None:
    forged = LogEvent("bad", 0, "match_created")
    object.__setattr__(forged, "seat", 2**40)  # past LogEvent's own check
    too_big = [forged, *(action("bad", seq) for seq in range(1, 2000))]
    with group_commit(log) as append:
        good = append([created("good")])
        refused = append(too_big)  # refused in the caller's thread, before the queue
        with pytest.raises(ValueError, match="seat 1099511627776 does not fit"):
            refused.result(timeout=10)
    good.result(timeout=10)
    assert log.match_ids() == ["good"]
    log.append([LogEvent("bad", 0, "match_created")])  # its seq 0 is still free


def test_a_given_logged_at_is_kept(log: EventLog) -> None:
    when = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    log.append([LogEvent("old", 0, "match_created", logged_at=when), created("new")])
    old, new = log.events_for("old")[0], log.events_for("new")[0]
    assert old.logged_at == when
    assert new.logged_at is not None
    assert new.logged_at > when


def test_a_gap_in_a_match_sequence_is_refused(log: EventLog) -> None:
    with pytest.raises(SequenceGap, match="next seq is 0"):
        log.append([action("m", 1)])
    log.append([created("m")])
    with pytest.raises(SequenceGap) as info:
        log.append([action("m", 1), action("m", 3)])
    assert info.value.expected == 2
    assert log.count() == 1  # all or nothing


def test_an_event_the_log_cannot_hold_fails_its_caller_before_the_queue(log: EventLog) -> None:
    with pytest.raises(TypeError):
        log.append([LogEvent("m", 0, "match_created", detail={"note": object()})])
    # Settings go into typed columns: a value they cannot hold is refused here,
    # not discovered by every analyst who reads the matches view.
    with pytest.raises(ValueError, match="target must be an int"):
        LogEvent.match_created("m", seats=2, target=3_000_000_000, seed=1, rules_version="1")
    with pytest.raises(ValueError, match="seats must be an int"):
        LogEvent.match_created("m", seats=True, target=250, seed=1, rules_version="1")
    with pytest.raises(ValueError, match="seed must be an int"):
        LogEvent.match_created("m", seats=2, target=250, seed=2**127, rules_version="1")
    with pytest.raises(ValueError, match="rules_version must be a string"):
        LogEvent.match_created("m", seats=2, target=250, seed=1, rules_version=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind"):
        LogEvent("m", 0, "lunch")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seat must be a 32-bit int"):
        LogEvent("m", 0, "match_created", seat=2**31)
    with pytest.raises(ValueError, match="seq must be >= 0"):
        LogEvent("m", -1, "match_created")
    assert log.count() == 0


def test_close_commits_what_is_queued_then_refuses_more(db: Path) -> None:
    log = EventLog(db)
    closing = threading.Thread(target=log.close)
    with group_commit(log) as append:
        futures = [append([created(f"m{i}")]) for i in range(50)]
        closing.start()  # close begins while the 50 appends wait in the queue
        with log._cond:
            assert log._cond.wait_for(lambda: log._closing, timeout=10)
    closing.join(10)
    assert not closing.is_alive()
    assert all(f.exception(timeout=10) is None for f in futures)
    with pytest.raises(LogClosed):
        log.append([created("late")])
    with pytest.raises(LogClosed):
        log.count()
    log.close()  # twice is fine
    with open_readonly(db) as reader:
        assert reader.count() == 50


# -- one owner per file ----------------------------------------------------------


def test_a_second_open_in_the_same_process_is_refused(log: EventLog, db: Path) -> None:
    with pytest.raises(LogLocked, match="already open in this process"):
        EventLog(db)
    with pytest.raises(LogLocked):
        open_readonly(db)


@pytest.mark.slow
def test_a_file_held_by_another_process_is_refused_naming_its_pid(db: Path) -> None:
    with held_by_another_process(db) as pid:
        with pytest.raises(LogLocked) as info:
            EventLog(db)
        assert info.value.pid == pid
        with pytest.raises(LogLocked):
            open_readonly(db)  # not even read-only while a writer holds it
    with EventLog(db) as log:
        assert log.count() == 0


def test_every_match_is_read_back_in_one_pass(log: EventLog) -> None:
    log.append([created("b"), action("b", 1), created("a"), created("c")])
    log.append([ended("c", 1), action("a", 1), action("a", 2)])
    everything = {match_id: events for match_id, events in log.events_by_match()}
    assert list(everything) == ["a", "b", "c"]
    for match_id, events in everything.items():
        assert events == log.events_for(match_id)
    unfinished = [match_id for match_id, _ in log.events_by_match(unfinished_only=True)]
    assert unfinished == ["a", "b"]

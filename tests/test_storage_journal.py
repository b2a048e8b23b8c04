"""The journal: events are durable there before DuckDB has them, and are loaded after a crash."""

from __future__ import annotations

from pathlib import Path

from service.storage import EventLog, LogEvent, open_readonly
from service.storage.events import to_rows
from service.storage.journal import Journal, journal_path, read_journal


def created(match_id: str) -> LogEvent:
    return LogEvent.match_created(match_id, seats=2, target=250, seed=1, rules_version="v")


def action(match_id: str, seq: int) -> LogEvent:
    return LogEvent.action(match_id, seq, round=0, action_index=seq - 1, seat=0, move="draw")


def test_rows_round_trip_through_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "j"
    journal = Journal(path)
    rows = to_rows([created("m"), action("m", 1)])
    journal.write(rows)
    journal.close(remove=False)
    assert read_journal(path) == rows


def test_a_torn_last_line_was_never_acknowledged_and_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "j"
    journal = Journal(path)
    rows = to_rows([created("m")])
    journal.write(rows)
    journal.close(remove=False)
    with open(path, "ab") as handle:
        handle.write(b'["m",1,"act')
    assert read_journal(path) == rows


def test_journal_rows_missing_from_duckdb_are_loaded_at_open(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    with EventLog(db) as log:
        log.append([created("m")])
    # A crash after acknowledging two more events, before DuckDB got them;
    # the journal also still holds seq 0, which DuckDB already has.
    journal = Journal(journal_path(db))
    journal.write(to_rows([created("m"), action("m", 1), action("m", 2)]))
    journal.close(remove=False)
    with EventLog(db) as log:
        assert [e.seq for e in log.events_for("m")] == [0, 1, 2]
        log.append([action("m", 3)])
    assert not journal_path(db).exists()  # a clean close leaves no journal


def test_an_offline_reader_sees_events_left_in_the_journal(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    with EventLog(db) as log:
        log.append([created("m")])
    journal = Journal(journal_path(db))
    journal.write(to_rows([action("m", 1)]))
    journal.close(remove=False)
    with open_readonly(db) as reader:
        assert reader.count() == 2


def test_reads_through_the_log_see_every_acknowledged_event_at_once(tmp_path: Path) -> None:
    with EventLog(tmp_path / "log.duckdb") as log:
        log.append([created("m")])
        for seq in range(1, 50):
            log.append([action("m", seq)])
            assert log.count() == seq + 1

"""The journal: events are durable there before DuckDB has them, and are loaded after a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.storage import EventLog, LogEvent, open_readonly
from service.storage.events import to_rows
from service.storage.journal import Journal, journal_path, read_journal
from tests.helpers import HANG, wait_until


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


@pytest.mark.slow
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


@pytest.mark.slow
def test_reads_through_the_log_see_every_acknowledged_event_at_once(tmp_path: Path) -> None:
    with EventLog(tmp_path / "log.duckdb") as log:
        log.append([created("m")])
        for seq in range(1, 50):
            log.append([action("m", seq)])
            assert log.count() == seq + 1


@pytest.mark.slow
def test_reads_are_not_starved_by_a_steady_stream_of_appends(tmp_path: Path) -> None:
    """Callers hand the lead to each other; the writer must still get its turn to load."""
    import threading

    with EventLog(tmp_path / "log.duckdb") as log:
        stop = threading.Event()
        acked = [0] * 8

        def writer(k: int) -> None:
            match_id = f"m{k}"
            log.append([created(match_id)])
            acked[k] = 1
            seq = 1
            while not stop.is_set():
                log.append([action(match_id, seq)])
                seq += 1
                acked[k] = seq

        threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        try:
            wait_until(lambda: all(a > 1 for a in acked), "every writer appends")
            for _ in range(10):
                before = sum(acked)
                result: list[int] = []

                def read(out: list[int] = result) -> None:
                    out.append(log.count())

                reader = threading.Thread(target=read, daemon=True)
                reader.start()
                reader.join(timeout=HANG)  # a starved read never returns
                assert result, "a read never got the writer's turn"
                assert result[0] >= before  # every event acknowledged before the read is seen

                def going_on(before: int = before) -> bool:
                    return sum(acked) > before

                wait_until(going_on, "the writers go on")
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=HANG)
        assert log.count() == sum(acked)


def journal_empty(db: Path) -> bool:
    return journal_path(db).stat().st_size == 0


@pytest.mark.slow
def test_the_backlog_goes_to_duckdb_within_its_time_without_any_read(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    with EventLog(db) as log:
        log.append([created("m")])
        assert journal_path(db).stat().st_size > 0  # durable in the journal first
        wait_until(lambda: journal_empty(db), "the timed load runs")


@pytest.mark.slow
def test_a_backlog_of_load_rows_goes_to_duckdb_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service.storage import log as log_module

    monkeypatch.setattr(log_module, "LOAD_SECONDS", 3600.0)  # only the size can trigger it
    db = tmp_path / "log.duckdb"
    with EventLog(db) as log:
        log.append([created("m")])
        log.count()
        log.append([action("m", seq) for seq in range(1, 100)])
        assert not journal_empty(db)  # small: it waits (for a read)
        log.append([action("m", seq) for seq in range(100, 100 + log_module.LOAD_ROWS)])
        wait_until(lambda: journal_empty(db), "a full backlog is loaded")
        assert log.count() == 100 + log_module.LOAD_ROWS

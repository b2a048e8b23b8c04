"""Offline reading changes no byte; `sniff recover` is the one offline command that writes.

An auditor reads an evidence copy of a log that a service left behind when it
stopped without closing: a WAL DuckDB did not checkpoint and a journal with
acknowledged events that the database lacks. Reading it, from Python or with
`sniff query`, must leave `<db>`, its WAL and its journal as they were, and
still see every acknowledged event. Real files, real subprocesses.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from service.storage import EventLog, LogEvent, open_readonly
from service.storage.events import to_rows
from service.storage.journal import Journal, journal_path
from tests.storage_helpers import created, digest, ended, held_by_another_process
from tests.test_cli_service import sniff

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]

# Appends one match's events, prints each once acknowledged, then hangs until killed.
WRITER = """
import sys, time
from service.storage import EventLog, LogEvent
log = EventLog(sys.argv[1])
log.append([LogEvent.match_created("crashed", seats=2, target=250, seed=99, rules_version="1")])
log.count()  # into DuckDB: the WAL holds it
for seq in range(1, 6):
    log.append([LogEvent.action("crashed", seq, round=0, action_index=seq - 1, seat=0,
                                move="pass")])
print("acknowledged", flush=True)
time.sleep(600)
"""


def evidence(directory: Path) -> Path:
    """A log as a killed service leaves it: a WAL and a journal DuckDB lacks."""
    db = directory / "evidence.duckdb"
    with EventLog(db) as log:
        log.append([created("done"), ended("done", 1)])
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "acknowledged"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()
    # A journal row of a match the file has never seen, created in it too.
    journal = Journal(journal_path(db))
    journal.write(
        to_rows([LogEvent.match_created("late", seats=3, target=100, seed=5, rules_version="1")])
    )
    journal.close(remove=False)
    assert Path(f"{db}.wal").exists()
    assert journal_path(db).stat().st_size > 0
    return db


def files(db: Path) -> dict[str, str | None]:
    return {name: digest(Path(f"{db}{name}")) for name in ("", ".wal", ".journal")}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return evidence(tmp_path)


def test_an_offline_reader_sees_every_acknowledged_event_and_changes_no_byte(db: Path) -> None:
    before = files(db)
    with open_readonly(db) as reader:
        assert reader.journal_rows == 6  # five actions and the late match
        assert [e.seq for e in reader.events_for("crashed")] == list(range(6))
        assert reader.count() == 2 + 6 + 1
        matches = reader.query("SELECT match_id, seats, target FROM matches ORDER BY match_id")
        assert matches.to_pylist() == [
            {"match_id": "crashed", "seats": 2, "target": 250},
            {"match_id": "done", "seats": 2, "target": 250},
            {"match_id": "late", "seats": 3, "target": 100},
        ]
        # The views built on the tables see the journal's rows too.
        moves = reader.query("SELECT count(*) AS n FROM actions WHERE match_id = 'crashed'")
        assert moves.column("n").to_pylist() == [5]
        assert reader.query("SELECT seed FROM matches_all WHERE match_id = 'late'").to_pylist() == [
            {"seed": 5}
        ]
    assert files(db) == before


def test_sniff_matches_offline_lists_the_journals_matches_and_changes_no_byte(
    db: Path, tmp_path: Path
) -> None:
    """The listing reads rows without Arrow; the journal's overlay is still seen."""
    before = files(db)
    result = sniff("matches", "--format", "jsonl", "--db", str(db), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    listed = {row["match_id"]: row for row in map(json.loads, result.stdout.splitlines())}
    assert sorted(listed) == ["crashed", "done", "late"]
    assert listed["late"]["seats"] == 3
    assert listed["done"]["finished"] is True
    assert files(db) == before


def test_sniff_query_offline_changes_no_byte_then_sniff_recover_loads_the_journal(
    db: Path, tmp_path: Path
) -> None:
    before = files(db)
    result = sniff(
        "query",
        "SELECT count(*) AS n FROM events",
        "--format",
        "jsonl",
        "--db",
        str(db),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"n": 9}
    assert files(db) == before

    result = sniff("recover", "--db", str(db), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "loaded 6 journal rows" in result.stdout
    assert files(db)[".journal"] is None  # loaded and removed
    assert files(db)[""] != before[""]
    with open_readonly(db) as reader:
        assert reader.journal_rows == 0
        assert reader.count() == 9

    again = sniff("recover", "--db", str(db), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "no journal rows to load" in again.stdout


def test_sniff_recover_refuses_what_is_not_a_log_in_one_line(tmp_path: Path) -> None:
    missing = sniff("recover", "--db", str(tmp_path / "nothing.duckdb"), cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"Error: no event log at {tmp_path / 'nothing.duckdb'}"
    ]
    assert not (tmp_path / "nothing.duckdb").exists()
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    before = digest(text)
    garbage = sniff("recover", "--db", str(text), cwd=tmp_path)
    assert garbage.returncode == 2
    assert len(garbage.stderr.strip().splitlines()) == 1
    assert "Traceback" not in garbage.stderr
    assert digest(text) == before


def test_sniff_recover_leaves_a_file_held_by_a_live_service_alone(tmp_path: Path) -> None:
    db = tmp_path / "held.duckdb"
    with held_by_another_process(db, advertise="127.0.0.1:1") as pid:
        result = sniff("recover", "--db", str(db), cwd=tmp_path)
        assert result.returncode == 2  # a refusal (docs/cli.md)
        assert f"held by the service (pid {pid}" in result.stderr
    result = sniff("recover", "--db", str(db), cwd=tmp_path)  # closed cleanly: nothing to do
    assert result.returncode == 0, result.stderr
    assert "no journal rows to load" in result.stdout

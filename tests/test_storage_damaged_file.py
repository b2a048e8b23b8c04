"""A log file cut short is refused by every command before a byte is written.

DuckDB opens such a file and reads zeros where its missing blocks were, so a
query answers wrongly and a writer writes into it; the blocks its metadata
points at and the count of blocks in use tell it apart from a whole file. A
whole file is often shorter than its header's block count (DuckDB truncates
free blocks at the end on close): such files must still open.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from service.storage import DamagedLog, EventLog, LogEvent, open_readonly
from service.storage.integrity import HEADER_BYTES, check_whole


def created(match_id: str) -> LogEvent:
    return LogEvent.match_created(match_id, seats=2, target=250, seed=1, rules_version="v")


def action(match_id: str, seq: int) -> LogEvent:
    return LogEvent.action(match_id, seq, round=0, action_index=seq - 1, seat=0, move="draw")


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A closed log of a few thousand events: several blocks."""
    db = tmp_path_factory.mktemp("whole") / "log.duckdb"
    with EventLog(db) as log:
        for m in range(20):
            log.append([created(f"m{m}"), *(action(f"m{m}", s) for s in range(1, 200))])
    return db.read_bytes()


def sniff(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "sniff"
    return subprocess.run(
        [str(exe), *args], capture_output=True, text=True, timeout=120, check=False
    )


def files_of(db: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in db.parent.iterdir()
        if p.name.startswith(db.name)
    }


@pytest.mark.parametrize("fraction", [0.5, 0.9])
def test_a_log_cut_short_is_refused_by_the_log_and_by_offline_reads(
    tmp_path: Path, whole: bytes, fraction: float
) -> None:
    db = tmp_path / "log.duckdb"
    db.write_bytes(whole[: int(len(whole) * fraction)])
    before = files_of(db)
    with pytest.raises(DamagedLog, match="is cut short"):
        EventLog(db)
    with pytest.raises(DamagedLog, match="is cut short"):
        open_readonly(db)
    assert files_of(db) == before


def test_a_whole_log_still_opens(tmp_path: Path, whole: bytes) -> None:
    db = tmp_path / "log.duckdb"
    db.write_bytes(whole)
    with open_readonly(db) as reader:
        assert reader.count() == 20 * 200
    with EventLog(db) as log:
        assert log.count() == 20 * 200


def test_a_whole_file_shorter_than_its_header_block_count_still_opens(tmp_path: Path) -> None:
    """DuckDB truncates the free blocks at a file's end on close but keeps counting them."""
    db = tmp_path / "shrunk.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t AS SELECT i, 'x' || i AS s FROM range(2000000) r(i)")
    con.execute("CHECKPOINT")
    con.execute("DELETE FROM t WHERE i > 100")
    con.execute("CHECKPOINT")
    con.execute("INSERT INTO t SELECT i, 'y' FROM range(10) r(i)")  # left in the WAL
    con.close()
    with duckdb.connect(str(db), read_only=True) as ro:
        block_size, counted = ro.execute(
            "SELECT block_size, total_blocks FROM pragma_database_size()"
        ).fetchall()[0]
        assert db.stat().st_size < HEADER_BYTES + block_size * counted
        check_whole(ro, db)  # whole: no DamagedLog
        assert ro.execute("SELECT count(*) FROM t").fetchall() == [(111,)]


@pytest.mark.parametrize(
    "command",
    [
        ["serve", "--port", "0"],
        ["recover"],
        ["import", "RECORDS"],
        ["query", "SELECT count(*) FROM events"],
        ["audit"],
    ],
    ids=lambda c: c[0],
)
def test_every_command_refuses_a_log_cut_short_in_one_line_and_changes_nothing(
    tmp_path: Path, whole: bytes, command: list[str]
) -> None:
    db = tmp_path / "log.duckdb"
    db.write_bytes(whole[: len(whole) // 2])
    records = tmp_path / "m.jsonl"
    made = sniff("record", "--seats", "2", "--matches", "1", "--bots", "greedy", "-o", str(records))
    assert made.returncode == 0, made.stderr
    before = files_of(db)
    args = [str(records) if a == "RECORDS" else a for a in command]
    done = sniff(*args, "--db", str(db))
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert str(db) in lines[0]
    assert "is cut short" in lines[0]
    assert files_of(db) == before

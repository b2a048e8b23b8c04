"""The CLI beside a running service: `sniff serve`, `sniff query` while it holds the log, demo."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.remote import connect, play_remote_match
from tests.service_helpers import Served, free_port

pytestmark = pytest.mark.slow

SNIFF = [sys.executable, "-m", "analysis.cli"]


def sniff(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SNIFF, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_query_goes_through_the_service_while_it_holds_the_log(
    served: Served, tmp_path: Path
) -> None:
    _, address, db = served
    played = play_remote_match(connect(address), 2, ["greedy"], seed=3)
    result = sniff(
        "query",
        "SELECT count(*) AS n FROM events WHERE match_id = ? AND kind = 'action'",
        "-p",
        played.match_id,
        "--format",
        "jsonl",
        "--db",
        str(db),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"n": played.moves}
    # The file is held: a direct read-only open by another process is impossible,
    # which is why the query had to go through the service.
    assert (tmp_path / "log.duckdb.owner.json").exists()


def test_sigterm_drains_flushes_and_exits_0_then_the_file_is_readable(
    served: Served, tmp_path: Path
) -> None:
    proc, address, db = served
    played = play_remote_match(connect(address), 3, ["random"], seed=4)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert not (tmp_path / "log.duckdb.owner.json").exists()
    result = sniff(
        "query",
        "SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY kind",
        "--format",
        "jsonl",
        "--db",
        str(db),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    counts = {row["kind"]: row["n"] for row in map(json.loads, result.stdout.splitlines())}
    assert counts["action"] == played.moves
    assert counts["match_created"] == 1
    assert counts["match_ended"] == 1


def test_query_refuses_writes_with_a_one_line_error(served: Served, tmp_path: Path) -> None:
    _, _, db = served
    result = sniff("query", "DELETE FROM events", "--db", str(db), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("Error: ")
    assert len(result.stderr.strip().splitlines()) == 1


def test_query_without_a_log_is_a_clear_error(tmp_path: Path) -> None:
    result = sniff("query", "SELECT 1", "--db", str(tmp_path / "none.duckdb"), cwd=tmp_path)
    assert result.returncode == 2
    assert "no event log" in result.stderr


def test_demo_plays_matches_over_grpc_into_the_log(tmp_path: Path) -> None:
    db = tmp_path / "demo.duckdb"
    result = sniff("demo", "--matches", "3", "--db", str(db), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert sum(" wins, scores " in line for line in lines) == 3
    assert "event log now holds 3 matches" in lines[-1]
    again = sniff(
        "query",
        "SELECT count(DISTINCT match_id) AS n FROM events",
        "--format",
        "csv",
        "--db",
        str(db),
        cwd=tmp_path,
    )
    assert again.stdout.splitlines() == ["n", "3"]


def test_serve_refuses_a_log_held_by_another_service(served: Served, tmp_path: Path) -> None:
    _, _, db = served
    result = subprocess.run(
        [*SNIFF, "serve", "--port", str(free_port()), "--db", str(db)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ},
    )
    assert result.returncode == 2
    assert result.stderr.startswith("Error: ")

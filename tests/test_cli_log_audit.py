"""`sniff audit --db`: the same report, exit statuses and bad-input lines whether or not a
service holds the log; record audits give the same report on any number of workers."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import duckdb
import grpc
import pytest
from click.testing import CliRunner

from analysis.bot_matches import bot_match_events
from analysis.cli.main import cli
from service.storage import SCHEMA_VERSION
from tests.replay_helpers import sample_log, write_log
from tests.service_helpers import REPO, ServerProcess, Stub, create, play_to_end

pytestmark = pytest.mark.slow

SNIFF = str(Path(sys.executable).parent / "sniff")


def sniff(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SNIFF, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_log(tmp_path_factory.mktemp("audit") / "log.duckdb")


def test_a_sound_log_audits_ok_with_one_object_a_match(log: Path) -> None:
    done = CliRunner().invoke(cli, ["audit", "--db", str(log), "--format", "jsonl"])
    assert done.exit_code == 0, done.output
    results = [json.loads(line) for line in done.output.splitlines()]
    assert [r["id"] for r in results] == sorted(
        ["position-a", "two-seats", "three-seats", "four-seats", "in-play"]
    )
    assert all(r["ok"] and r["problems"] == [] for r in results)


def test_named_matches_are_audited_in_the_order_named(log: Path) -> None:
    done = CliRunner().invoke(cli, ["audit", "--db", str(log), "two-seats", "in-play", "two-seats"])
    assert done.exit_code == 0
    assert done.output == "two-seats: ok\nin-play: ok\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--db", "{tmp}/missing.duckdb"], "no event log at"),
        (["--db", "{tmp}"], "directory"),
        (["--db", "{log}", "no-such-match"], "no match 'no-such-match'"),
        (["--db", "{log}", "--head", "two-seats=zz"], "MATCH=HASH"),
        (["--db", "{log}", "--head", f"nope={'a' * 64}"], "no match 'nope'"),
        (["--head", f"two-seats={'a' * 64}", "x.jsonl"], "--head checks an event log"),
        (["--db", "{log}", "--commitment", "two-seats=abc"], "MATCH=HEX"),
        (["--db", "{log}", "--commitment", "a" * 64], "MATCH=HEX"),
        (["--db", "{log}", "--commitment", f"two-seats={'g' * 64}"], "MATCH=HEX"),
        (["--db", "{log}", "--commitment", f"nope={'a' * 64}"], "no match 'nope'"),
        (["--commitment", f"two-seats={'a' * 64}", "x.jsonl"], "--commitment checks an event"),
        ([], "give the record files"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    log: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    argv = [a.format(tmp=tmp_path, log=log) for a in args]
    done = CliRunner().invoke(cli, ["audit", *argv])
    assert done.exit_code == 2, done.output
    assert message in done.output
    assert "Traceback" not in done.output
    assert len(done.output.strip().splitlines()) == 1


def test_a_database_that_is_not_a_log_or_is_newer_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    newer = tmp_path / "newer.duckdb"
    with duckdb.connect(str(newer)) as con:
        con.execute("CREATE TABLE schema_version (version INTEGER)")
        con.execute("INSERT INTO schema_version VALUES (?)", [SCHEMA_VERSION + 1])
    garbage = tmp_path / "garbage.duckdb"
    garbage.write_bytes(b"not a database at all\n" * 100)
    for path, message in (
        (other, "not an American Sniff event log"),
        (newer, f"version {SCHEMA_VERSION + 1}"),
        (garbage, "garbage.duckdb"),
    ):
        done = sniff("audit", "--db", str(path))
        assert done.returncode == 2, done.stderr
        assert message in done.stderr
        assert "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_the_audit_reads_through_a_live_sniff_serve_and_checks_a_kept_head_and_commitment(
    tmp_path: Path,
) -> None:
    db = tmp_path / "served.duckdb"
    server = ServerProcess(db, tmp_path).start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = Stub(channel)
            created = create(stub, 3, seed=8)
            played = play_to_end(stub, created, random.Random(2))
            open_ = create(stub, 2, seed=9)  # a match in play beside it
        head = played.replies[-1].chain_head
        done = sniff(
            "audit",
            "--db",
            str(db),
            "--format",
            "jsonl",
            "--head",
            f"{created.match_id}={head}",
            "--commitment",
            f"{created.match_id}={created.seed_commitment.upper()}",
            "--commitment",
            f"{open_.match_id}={open_.seed_commitment}",  # public from the start
        )
        assert done.returncode == 0, done.stderr
        results = {json.loads(line)["id"]: json.loads(line) for line in done.stdout.splitlines()}
        assert set(results) == {created.match_id, open_.match_id}
        assert all(r["ok"] for r in results.values())
        wrong = "0" * 64
        done = sniff(
            "audit", "--db", str(db), created.match_id, "--head", f"{created.match_id}={wrong}"
        )
        assert done.returncode == 1
        assert "head_mismatch" in done.stdout
        assert server.proc is not None
        assert server.proc.poll() is None  # still serving
    finally:
        server.close()
    done = sniff("audit", "--db", str(db), "--format", "jsonl")  # the same, from the file
    assert done.returncode == 0
    assert {json.loads(line)["id"] for line in done.stdout.splitlines()} == set(results)


def test_a_progress_bar_goes_to_stderr_only_when_asked_for_off_a_terminal(log: Path) -> None:
    quiet = sniff("audit", "--db", str(log))
    shown = sniff("audit", "--db", str(log), "--progress")
    assert quiet.stderr == ""
    assert "auditing" in shown.stderr
    assert quiet.stdout == shown.stdout


def test_a_record_audit_is_the_same_on_one_worker_and_on_two(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    done = sniff("record", "--seats", "3", "--matches", "150", "-o", str(path))
    assert done.returncode == 0, done.stderr
    lines = path.read_text().splitlines()
    bad = json.loads(lines[5])
    bad["rounds"][0]["claims"]["points"][0] = 99
    lines[5] = json.dumps(bad)
    lines.insert(40, "not json")
    lines.insert(90, lines[10])  # a repeated id
    lines.insert(120, "")
    path.write_text("\n".join(lines) + "\n")
    one = sniff("audit", str(path), "--format", "jsonl", "--workers", "1")
    two = sniff("audit", str(path), "--format", "jsonl", "--workers", "2")
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout
    kinds = [p["kind"] for line in one.stdout.splitlines() for p in json.loads(line)["problems"]]
    assert sorted(set(kinds)) == ["duplicate_id", "malformed", "points"]


def test_a_log_audit_is_the_same_on_one_worker_and_on_two(tmp_path: Path) -> None:
    db = write_log(
        tmp_path / "log.duckdb", [bot_match_events(f"m{i:03d}", 2 + i % 3, i) for i in range(250)]
    )
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE events_all SET points = points + 5 WHERE match_id = 'm123' AND seq = 2")
    one = sniff("audit", "--db", str(db), "--format", "jsonl", "--workers", "1")
    two = sniff("audit", "--db", str(db), "--format", "jsonl", "--workers", "2")
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout
    assert len(one.stdout.splitlines()) == 250
    bad = [json.loads(line) for line in one.stdout.splitlines() if not json.loads(line)["ok"]]
    assert [r["id"] for r in bad] == ["m123"]

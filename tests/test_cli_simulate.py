"""`sniff simulate`: bot matches in workers, stored as simulated matches of a run, resumable."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from analysis import simulate as simrun
from analysis.cli.main import cli
from tests.helpers import need, wait_until
from tests.service_helpers import REPO, ServerProcess

pytestmark = pytest.mark.slow

SNIFF = str(Path(sys.executable).parent / "sniff")


def sniff(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SNIFF, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False
    )


def simulate(db: Path, *args: str) -> Any:
    events = [] if "--resume" in args else ["--events"]  # a resume keeps the run's storage
    return CliRunner().invoke(cli, ["simulate", "--db", str(db), *events, *args])


def stored(db: Path) -> dict[str, Any]:
    """What a run stored, comparable across logs: match ids, results, event contents."""
    with duckdb.connect(str(db), read_only=True) as con:
        matches = con.execute(
            "SELECT match_id, source, run_id, players, winner, scores, rounds FROM matches "
            "ORDER BY match_id"
        ).fetchall()
        events = con.execute(
            "SELECT match_id, seq, kind, round, seat, move, drawn, points, ends_sum FROM events "
            "ORDER BY match_id, seq"
        ).fetchall()
    digest = hashlib.sha256(repr(events).encode()).hexdigest()
    return {"matches": matches, "events": len(events), "digest": digest}


def test_a_run_stores_simulated_matches_marked_with_its_run_settings_and_code_version(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.duckdb"
    done = simulate(db, "--matches", "12", "--seats", "3", "--bots", "greedy,random",
                    "--seed", "5", "--run", "r1", "--workers", "1")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "run r1 complete: 12 simulated matches" in done.output
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT match_id, source, run_id, players, seats, finished, seed, "
            "detail ->> '$.code_version' FROM matches ORDER BY match_id"
        ).fetchall()
    assert [r[0] for r in rows] == [f"r1-{i:08d}" for i in range(12)]
    assert {r[1:3] for r in rows} == {("simulated", "r1")}
    assert {tuple(r[3]) for r in rows} == {("greedy", "random", "greedy")}
    assert all(r[4] == 3 and r[5] for r in rows)
    assert [r[6] for r in rows] == [5 + i for i in range(12)]
    assert all(r[7].startswith("american-sniff ") for r in rows)
    settings = json.loads((tmp_path / "log.duckdb.runs" / "r1" / "run.json").read_text())
    assert settings["seed"] == 5
    assert settings["bots"] == ["greedy", "random"]
    assert sniff("audit", "--db", str(db)).returncode == 0


def test_the_same_seed_gives_the_same_matches_whatever_the_number_of_workers(
    tmp_path: Path,
) -> None:
    one, two = tmp_path / "one.duckdb", tmp_path / "two.duckdb"
    assert simulate(one, "--matches", "16", "--seed", "9", "--workers", "1").exit_code == 0
    assert simulate(two, "--matches", "16", "--seed", "9", "--workers", "2").exit_code == 0
    a, b = stored(one), stored(two)
    assert len(a["matches"]) == 16
    assert a == b  # the default run id comes from the settings, so the ids agree too


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What an uninterrupted run of the kill tests' settings stores."""
    whole = tmp_path_factory.mktemp("whole") / "whole.duckdb"
    assert simulate(whole, *KILLED_RUN).exit_code == 0
    return stored(whole)


KILLED_RUN = ("--events", "--matches", "300", "--seed", "11", "--run", "k", "--workers", "2")


@pytest.mark.parametrize("how", ["SIGTERM to the command", "Ctrl-C to its process group"])
def test_a_run_killed_mid_way_keeps_whole_chunks_and_resumes_to_the_uninterrupted_run(
    tmp_path: Path, whole_run: dict[str, Any], how: str
) -> None:
    db = tmp_path / "cut.duckdb"
    proc = subprocess.Popen(
        [SNIFF, "simulate", "--db", str(db), *KILLED_RUN],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    run_dir = tmp_path / "cut.duckdb.runs" / "k"
    wait_until(
        lambda: any(run_dir.glob("chunk-*.parquet")) or proc.poll() is not None,
        "the run writes its first chunk",
    )
    if how.startswith("SIGTERM"):
        proc.send_signal(signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert "interrupted:" in err
    assert "--resume k" in err
    assert not list(run_dir.glob(".*tmp*"))
    partial = stored(db)
    settings = simrun.read_settings(run_dir)
    kept = len(partial["matches"])
    assert 0 < kept < 300  # every finished chunk, whole
    assert kept == sum(len(settings.chunk_range(c)) for c in simrun.chunks_on_disk(run_dir))
    resumed = sniff("simulate", "--db", str(db), "--resume", "k")
    assert resumed.returncode == 0, resumed.stderr
    assert stored(db) == whole_run


def test_a_full_disk_while_writing_chunks_stops_cleanly_and_the_run_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = tmp_path / "whole.duckdb"
    args = ["--matches", "40", "--seed", "3", "--run", "f", "--workers", "1"]
    assert simulate(whole, *args).exit_code == 0
    real = pq.write_table
    writes = []

    def full_after_two(table: Any, where: Any, **kwargs: Any) -> None:
        if Path(where).name.startswith(".chunk-"):  # a chunk's events, after its facts
            writes.append(where)
        if len(writes) > 2:
            Path(where).write_bytes(b"PAR1 half")  # a partial temp file, as a full disk leaves
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(table, where, **kwargs)

    db = tmp_path / "full.duckdb"
    monkeypatch.setattr(pq, "write_table", full_after_two)
    done = simulate(db, *args)
    assert done.exit_code == 2
    assert done.output.count("\n") == 1
    assert done.output.startswith("Error: cannot write a chunk")
    assert "the disk is full" in done.output
    assert "--resume f" in done.output
    run_dir = tmp_path / "full.duckdb.runs" / "f"
    assert not list(run_dir.glob(".*tmp*"))
    settings = simrun.read_settings(run_dir)
    assert len(stored(db)["matches"]) == 2 * settings.chunk_size
    monkeypatch.setattr(pq, "write_table", real)
    assert simulate(db, "--resume", "f").exit_code == 0
    assert stored(db) == stored(whole)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--bots", "greedy,clever"], "clever"),
        (["--bots", "rollout,greedy"], "'rollout' cannot play here: this command plays random"),
        (["--bots", "ismcts"], "'ismcts' cannot play here"),
        (["--seats", "5"], "--seats"),
        (["--seats", "1"], "--seats"),
        (["--resume", "nowhere"], "no run 'nowhere' to resume"),
        (["--resume", "r", "--seats", "3"], "leave out --seats"),
        (["--run", "../escape"], "--run"),
        (["--seed", str(2**64 - 2), "--matches", "3"], "largest seed"),
    ],
)
def test_bad_input_is_refused_with_exit_status_2_and_nothing_written(
    tmp_path: Path, args: list[str], says: str
) -> None:
    db = tmp_path / "log.duckdb"
    done = simulate(db, *args)
    assert done.exit_code == 2
    assert says in done.output
    assert not db.exists()
    assert not (tmp_path / "log.duckdb.runs").exists()


def test_a_run_id_already_used_is_refused_and_points_to_resume(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    assert simulate(db, "--matches", "2", "--run", "r", "--workers", "1").exit_code == 0
    again = simulate(db, "--matches", "2", "--run", "r", "--workers", "1")
    assert again.exit_code == 2
    assert again.output.strip() == (
        f"Error: run r already exists beside {db}; complete it with --resume r"
    )
    done = simulate(db, "--resume", "r")  # a complete run: nothing to do
    assert done.exit_code == 0
    assert "(0 played now" in done.output


def test_sniff_timing_stats_select_a_runs_simulated_matches(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    assert simulate(db, "--matches", "6", "--run", "a", "--workers", "1").exit_code == 0
    assert simulate(db, "--matches", "4", "--run", "b", "--workers", "1").exit_code == 0
    for run, count in (("a", 6), ("b", 4)):
        done = CliRunner().invoke(
            cli, ["stats", "sniff-timing", "--db", str(db), "--simulated", "--run", run]
        )
        assert done.exit_code == 0, done.output
        assert done.output.startswith(f"{count} matches,"), done.output
    served = CliRunner().invoke(cli, ["stats", "sniff-timing", "--db", str(db), "--served"])
    assert served.output.startswith("0 matches") or served.exit_code != 0


def test_simulate_goes_through_a_live_sniff_serve_that_holds_the_log(tmp_path: Path) -> None:
    """Facts only (StoreSimulated) and with --events (ImportMatches): the same rows as a run
    on the file."""
    db = tmp_path / "served.duckdb"
    runs: tuple[tuple[str, list[str]], ...] = (("live", []), ("live-events", ["--events"]))
    server = ServerProcess(db, tmp_path).start()
    try:
        for run, extra in runs:
            done = sniff("simulate", "--db", str(db), "--matches", "8", "--run", run, *extra)
            assert done.returncode == 0, done.stderr
            assert done.stderr == ""
            listed = sniff("query", "--db", str(db), "--format", "jsonl",
                           f"SELECT count(*) AS n FROM matches WHERE run_id = '{run}'")  # fmt: skip
            assert json.loads(listed.stdout.splitlines()[0])["n"] == 8, listed.stderr
        assert server.proc is not None
        assert server.proc.poll() is None
    finally:
        server.close()
    alone = tmp_path / "alone.duckdb"
    for run, extra in runs:
        done = sniff("simulate", "--db", str(alone), "--matches", "8", "--run", run, *extra)
        assert done.returncode == 0, done.stderr
    assert stored(db) == stored(alone)
    assert stored(db)["events"] > 0


@pytest.mark.ray
def test_a_local_ray_run_stores_the_same_matches_as_local_workers(tmp_path: Path) -> None:
    need("ray", "pip install -e '.[cluster]'")
    local, rayed = tmp_path / "local.duckdb", tmp_path / "ray.duckdb"
    args = ["--events", "--matches", "12", "--seed", "21", "--workers", "2"]
    assert simulate(local, *args).exit_code == 0
    done = sniff("simulate", "--db", str(rayed), *args, "--ray", "local", timeout=300)
    assert done.returncode == 0, done.stderr
    assert stored(rayed) == stored(local)


def test_a_log_that_refuses_a_chunk_stops_the_run_in_one_line_and_the_run_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service.storage import EventLog, LogFull

    real = EventLog.import_matches
    calls: list[int] = []

    def refusing_the_second(self: EventLog, table: Any, **kwargs: Any) -> Any:
        calls.append(table.num_rows)
        if len(calls) > 1:
            raise LogFull(f"the event log {self.path} is full: the disk is full")
        return real(self, table, **kwargs)

    db = tmp_path / "log.duckdb"
    monkeypatch.setattr(EventLog, "import_matches", refusing_the_second)
    done = simulate(db, "--matches", "20", "--run", "l", "--workers", "1")
    assert done.exit_code == 2
    assert done.output.count("\n") == 1
    assert done.output.startswith("Error: ")
    assert "is full" in done.output
    assert "5 of 20 matches of run l stored" in done.output
    assert "--resume l" in done.output
    monkeypatch.setattr(EventLog, "import_matches", real)
    assert simulate(db, "--resume", "l").exit_code == 0
    assert len(stored(db)["matches"]) == 20

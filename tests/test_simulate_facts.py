"""Facts-only simulation runs: the same stored facts as `--events`, from C or Python, and
their events regenerated from the seed equal to those `--events` stores."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from analysis import simcheck
from analysis.cli.main import cli
from analysis.simcheck import KNOWN, known_digests
from analysis.simfacts import engine_rows, facts_tables, kernel_rows
from sniff.playout import BACKEND
from sniff.simulated import MatchSettings
from tests.service_helpers import REPO

SNIFF = str(Path(sys.executable).parent / "sniff")
kernel = pytest.mark.skipif(BACKEND != "c", reason="the kernel is not built")

_TABLES = {
    "match_facts": "match_id",
    "round_facts": "match_id, round",
    "sniff_decisions": "match_id, round, placement_index",
    "match_results_all": "match_id",
}


def simulate(db: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [SNIFF, "simulate", "--db", str(db), "--run", "r", *args],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stderr


def stored(db: Path) -> dict[str, Any]:
    """Every facts row and result, and the settings that do not depend on the time."""
    out: dict[str, Any] = {}
    with duckdb.connect(str(db), read_only=True) as con:
        for table, order in _TABLES.items():
            rows = con.execute(
                f"SELECT * EXCLUDE (finished_at) FROM {table} ORDER BY {order}"
                if table == "match_results_all"
                else f"SELECT * FROM {table} ORDER BY {order}"
            ).fetchall()
            out[table] = rows
        out["settings"] = con.execute(
            "SELECT match_id, seats, target, seed, rules_version, variant, round_limit, players,"
            " source, run_id FROM match_settings_all ORDER BY match_id"
        ).fetchall()
    return out


@pytest.mark.parametrize(("seats", "limit"), [(2, None), (3, "4"), (4, None)])
def test_the_fast_path_makes_the_same_tables_from_the_kernels_rows_as_from_the_engines(
    seats: int, limit: str | None
) -> None:
    settings = MatchSettings(seats, ("greedy", "random"), round_limit=None if limit is None else 4)
    seeds = list(range(40, 70))
    python = facts_tables(engine_rows(settings, seeds), "r", 0, seeds, seats)
    if BACKEND == "c":
        c = facts_tables(kernel_rows(settings, seeds), "r", 0, seeds, seats)
        for a, b in zip((c.matches, c.rounds, c.decisions), (python.matches, python.rounds,
                        python.decisions), strict=True):  # fmt: skip
            assert a.equals(b)
    assert python.matches.num_rows == 30


def test_the_engine_plays_the_known_matches_of_the_kernels_start_up_check() -> None:
    assert known_digests("python") == [expected for _, expected in KNOWN]


@kernel
def test_a_kernel_that_disagrees_with_the_known_matches_is_not_used_and_one_line_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert simcheck.choose_backend() == "c"
    monkeypatch.setattr(simcheck, "KNOWN", ((KNOWN[0][0], "0" * 16), *KNOWN[1:]))
    done = CliRunner().invoke(
        cli, ["simulate", "--db", str(tmp_path / "l.duckdb"), "--matches", "3", "--workers", "1"]
    )
    assert done.exit_code == 0, done.output
    warnings = [line for line in done.output.splitlines() if line.startswith("Warning")]
    assert warnings == [
        "Warning: the compiled kernel does not play the known matches as stored; "
        "simulating with the Python engine instead"
    ]


@pytest.mark.slow
def test_a_facts_only_run_stores_the_same_facts_and_results_as_events_from_c_or_python(
    tmp_path: Path,
) -> None:
    args = ("--matches", "60", "--seats", "4", "--seed", "9", "--round-limit", "6")
    simulate(tmp_path / "c.duckdb", *args, "--workers", "2")
    simulate(tmp_path / "py.duckdb", *args, "--workers", "1", env={"SNIFF_KERNEL": "python"})
    simulate(tmp_path / "ev.duckdb", *args, "--workers", "2", "--events")
    c = stored(tmp_path / "c.duckdb")
    assert len(c["match_facts"]) == 60
    assert c == stored(tmp_path / "py.duckdb") == stored(tmp_path / "ev.duckdb")
    with duckdb.connect(str(tmp_path / "c.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM events_all").fetchall() == [(0,)]
        assert con.execute("SELECT count(*) FROM tree_leaves").fetchall() == [(0,)]
        assert con.execute("SELECT stored FROM simulation_runs").fetchall() == [("facts",)]


@pytest.mark.slow
def test_the_statistics_of_a_run_are_the_same_whether_c_or_python_made_its_facts(
    tmp_path: Path,
) -> None:
    args = ("--matches", "200", "--seats", "2", "--seed", "3", "--workers", "2")
    simulate(tmp_path / "c.duckdb", *args)
    simulate(tmp_path / "py.duckdb", *args, env={"SNIFF_KERNEL": "python"})
    outputs = [
        subprocess.run(
            [SNIFF, "stats", "sniff-timing", "--db", str(tmp_path / f"{name}.duckdb"),
             "--format", "csv"],
            cwd=REPO, capture_output=True, text=True, timeout=300, check=True,
        ).stdout
        for name in ("c", "py")
    ]  # fmt: skip
    assert outputs[0]
    assert outputs[0] == outputs[1]


@pytest.mark.slow
def test_replay_export_and_audit_of_a_regenerated_match_equal_those_of_the_events_stored(
    tmp_path: Path,
) -> None:
    args = ("--matches", "8", "--seats", "3", "--seed", "21", "--workers", "1")
    simulate(tmp_path / "facts.duckdb", *args)
    simulate(tmp_path / "events.duckdb", *args, "--events")

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([SNIFF, *argv], cwd=REPO, capture_output=True, text=True,
                              timeout=300, check=False)  # fmt: skip

    for command in (["replay", "r-00000005", "--format", "json", "--reveal"],
                    ["export", "r-00000005", "r-00000002"]):  # fmt: skip
        facts = run(*command, "--db", str(tmp_path / "facts.duckdb"))
        events = run(*command, "--db", str(tmp_path / "events.duckdb"))
        assert facts.returncode == events.returncode == 0, facts.stderr
        assert facts.stdout == events.stdout
    replayed = run("replay", "r-00000005", "--db", str(tmp_path / "facts.duckdb"))
    assert "regenerated from seed 26 by sniff-sim/1" in replayed.stderr
    audited = run(
        "audit", "--db", str(tmp_path / "facts.duckdb"), "r-00000005", "--format", "jsonl"
    )
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert '"ok": true' in audited.stdout
    assert "regenerated from seed 26" in audited.stdout


@pytest.mark.slow
def test_a_whole_log_audit_or_export_says_how_many_facts_only_matches_it_leaves_out(
    tmp_path: Path,
) -> None:
    db = tmp_path / "mixed.duckdb"
    simulate(db, "--matches", "3", "--seats", "2", "--workers", "1")
    for command in ("audit", "export"):
        done = CliRunner().invoke(cli, [command, "--db", str(db)])
        assert done.exit_code == 0, done.output
        assert done.stdout == ""  # nothing with events to audit or export
        assert done.stderr.startswith("Note: 3 simulated matches stored as facts only left out")
        assert f"sniff {command} --db FILE MATCH" in done.stderr
    named = CliRunner().invoke(cli, ["audit", "--db", str(db), "r-00000001"])
    assert named.exit_code == 0, named.output
    assert "Note:" not in named.stderr  # a named match is regenerated, not left out


@pytest.mark.slow
def test_a_facts_only_run_is_the_same_whatever_the_number_of_workers_and_resumes(
    tmp_path: Path,
) -> None:
    args = ("--matches", "500", "--seats", "2", "--seed", "1")
    simulate(tmp_path / "one.duckdb", *args, "--workers", "1")
    simulate(tmp_path / "two.duckdb", *args, "--workers", "2")
    assert stored(tmp_path / "one.duckdb") == stored(tmp_path / "two.duckdb")
    assert not list((tmp_path / "two.duckdb.runs" / "r").glob("sim-*"))  # loaded, removed


@pytest.mark.slow
@pytest.mark.ray
def test_a_facts_only_ray_run_stores_the_same_facts_as_local_workers(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    args = ("--matches", "300", "--seats", "2", "--seed", "4", "--workers", "2")
    simulate(tmp_path / "local.duckdb", *args)
    simulate(tmp_path / "ray.duckdb", *args, "--ray", "local")
    assert stored(tmp_path / "local.duckdb") == stored(tmp_path / "ray.duckdb")

"""Smoke runs of the benchmark scripts' --quick modes: they run, their output parses, and the
invariants each script checks hold.

Speed is never asserted (nor a target compared): these machines are shared and
noisy, and the figures are for people to read. Each run takes seconds.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sniff.backend import KERNEL_AVAILABLE
from tests.helpers import need_go

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"

pytestmark = pytest.mark.bench


def run_script(name: str, *args: str, timeout: float = 120) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / name), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def positive(values: list[float]) -> bool:
    return bool(values) and all(math.isfinite(v) and v > 0 for v in values)


def test_bench_engine_quick_measures_every_seat_count_on_the_same_matches_each_run() -> None:
    doc: dict[str, Any] = json.loads(run_script("bench_engine.py", "--quick", "--json"))
    assert set(doc["seats"]) == {"2", "3", "4"}
    for seats, figures in doc["seats"].items():
        runs = len(figures["matches_per_s"])
        assert runs >= 2, seats
        for name, values in figures.items():
            assert len(values) == runs, (seats, name)
            assert positive(values), (seats, name, values)
        # every run plays the same seeded matches: the workload does not vary, only the timing
        assert len(set(figures["rounds"])) == 1, figures["rounds"]
        assert len(set(figures["actions"])) == 1, figures["actions"]
        assert figures["actions"][0] > figures["rounds"][0] >= 1


def test_bench_engine_quick_table_has_a_row_per_seat_count() -> None:
    out = run_script("bench_engine.py", "--quick")
    for seats in (2, 3, 4):
        assert len(re.findall(rf"^\s+{seats}\s+\d", out, re.MULTILINE)) == 2, out


def test_bench_engine_against_a_tree_takes_turns_on_the_same_matches() -> None:
    """Against itself: both sides play the very same matches, so the same actions per match."""
    out = run_script("bench_engine.py", "--against", str(ROOT), "--quick")
    rows = re.findall(r"^\s+([234])\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", out, re.M)
    assert [r[0] for r in rows] == ["2", "3", "4"], out
    for _, actions_other, actions_this, cpu_other, cpu_this in rows:
        assert actions_other == actions_this
        assert positive([float(actions_this), float(cpu_other), float(cpu_this)])


def test_bench_engine_profile_quick_ranks_functions_by_own_time() -> None:
    doc: dict[str, Any] = json.loads(
        run_script("bench_engine.py", "--profile", "--quick", "--json", "--top", "10")
    )
    rows = doc["top"]
    assert len(rows) == 10
    assert doc["actions"] > doc["rounds"] >= doc["matches"] == 20
    times = [r["tottime_s"] for r in rows]
    assert times == sorted(times, reverse=True)
    assert 0 < sum(r["share"] for r in rows) <= 1 + 1e-9
    assert all(r["ncalls"] >= 1 for r in rows)
    # Which functions make the top ten varies from run to run: cProfile charges wall time, so
    # a function the OS preempted looks costly on a loaded machine. Any of them may then rank,
    # code compiled from a string too (a namedtuple's `__new__` is `<string>:1`).
    assert all(re.fullmatch(r"\S.*:\d+|built-in", r["where"]) for r in rows), rows


def test_bench_storage_quick_loses_no_acknowledged_append() -> None:
    doc: dict[str, Any] = json.loads(run_script("bench_storage.py", "--quick", "--json"))
    assert doc["ok"] is True
    assert set(doc["threads"]) == {"1", "4"}
    for threads, runs in doc["threads"].items():
        assert runs, threads
        for run in runs:
            assert run["logged"] == run["acknowledged"] > 0
            assert run["events_per_commit"] >= 1
            assert positive([run["events_per_s"], run["cpu_us_per_event"]])


@pytest.fixture(scope="module")
def service_quick() -> str:
    """One `bench_service.py --quick` run, read by the tests below.

    Each of its load phases stops at its own cap (20 s with --quick), and it starts four
    servers: on a loaded machine the run takes minutes, so the timeout only guards a hang.
    """
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc for server CPU")
    return run_script("bench_service.py", "--quick", timeout=900)


def test_bench_service_quick_passes_its_own_checks(service_quick: str) -> None:
    out = service_quick
    verdicts = re.findall(r"^\s*(OK|FAIL)\b", out, re.MULTILINE)
    assert verdicts, out
    assert "FAIL" not in verdicts, out
    ratios = re.findall(r"^\s*p50\(Apply\)/p50\(empty\), 1 client:\s+(\S+)", out, re.MULTILINE)
    assert ratios, out
    assert positive([float(r) for r in ratios])


def test_bench_kernel_quick_measures_both_backends_and_they_agree() -> None:
    doc: dict[str, Any] = json.loads(run_script("bench_kernel.py", "--quick", "--json"))
    assert doc["kernel_built"] is True
    assert set(doc["actions"]) == {f"{s}/{p}" for s in (2, 3, 4) for p in ("random", "greedy")}
    for key, figures in doc["actions"].items():
        assert figures["same_actions"] is True, key
        for name in ("c_actions_per_s", "python_actions_per_s", "engine_actions_per_s"):
            assert len(figures[name]) == doc["runs"] >= 2, (key, name)
            assert positive(figures[name]), (key, name)
    assert set(doc["rollouts"]) == {f"{s}/{b}" for s in (2, 3, 4) for b in ("c", "python")}
    for key, figures in doc["rollouts"].items():
        for name, values in figures.items():
            assert len(values) == doc["runs"], (key, name)
            assert positive(values), (key, name)


def test_bench_kernel_quick_table_has_a_row_per_seat_count_and_policy() -> None:
    out = run_script("bench_kernel.py", "--quick", "--only", "actions")
    for seats in (2, 3, 4):
        for policy in ("random", "greedy"):
            assert re.search(rf"^\s+{seats}\s+{policy}\s+[\d,]+ \(.*OK$", out, re.MULTILINE), out


def test_bench_matches_quick_measures_both_ways_on_the_same_matches() -> None:
    doc: dict[str, Any] = json.loads(run_script("bench_matches.py", "--quick", "--json"))
    assert set(doc["matches_per_s"]) == {"2", "4"}
    for seats, figures in doc["matches_per_s"].items():
        assert figures["same"] is True, seats
        for name in ("c_rows", "c_facts", "engine"):
            assert len(figures[name]) == doc["runs"] >= 2, (seats, name)
            assert positive(figures[name]), (seats, name)


def test_bench_matches_quick_table_has_a_row_per_seat_count() -> None:
    out = run_script("bench_matches.py", "--quick")
    for seats in (2, 4):
        assert re.search(rf"^\s+{seats}\s+[\d,]+ \(.*yes$", out, re.MULTILINE), out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for server CPU")
def test_bench_service_query_load_quick_stops_every_heavy_query() -> None:
    """The script exits 1 if a heavy query ran to its end or a call failed."""
    out = run_script("bench_service.py", "--query-load", "--quick")
    sent = re.findall(r"queries: \{'sent': (\d+), 'finished': 0", out)
    assert sent, out
    assert int(sent[0]) > 0


def test_bench_replay_quick_times_every_command_on_both_logs() -> None:
    out = run_script("bench_replay.py", "--quick", timeout=600)
    rows = re.findall(
        r"^(with match_id index|without the index)\s+(sniff .+?)"
        r"\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)$",
        out,
        re.MULTILINE,
    )
    assert len(rows) == 10, out
    assert {r[0] for r in rows} == {"with match_id index", "without the index"}
    assert positive([float(x) for r in rows for x in r[2:]])
    assert re.search(r"as a subprocess: \d+\.\d+ s \((within|OVER) the 0\.3 s target\)", out), out


def test_bench_audit_quick_measures_records_and_the_log_on_one_worker_and_all() -> None:
    doc: dict[str, Any] = json.loads(run_script("bench_audit.py", "--quick", "--json", timeout=600))
    assert doc["matches"] == 600
    rates = doc["matches_per_s"]
    assert {k.split("/")[0] for k in rates} == {"records", "log"}
    assert "records/1" in rates
    assert "log/1" in rates
    assert positive(list(rates.values()))


def test_bench_import_quick_loads_every_match_and_measures_each_half() -> None:
    doc: dict[str, Any] = json.loads(
        run_script("bench_import.py", "--quick", "--json", timeout=600)
    )
    assert doc["matches"] == 600
    assert doc["events"] > 600 * 50
    rates = [doc[k] for k in ("command_events_per_s", "prepare_events_per_s", "load_events_per_s")]
    assert positive(rates)


def test_bench_service_quick_prints_its_figures(service_quick: str) -> None:
    out = service_quick
    for rpc in ("Health/Check", "ApplyMove"):
        assert re.search(rf"^log on disk\s+{re.escape(rpc)}\s+1\s+\d", out, re.MULTILINE), out
        assert re.search(rf"^log on disk\s+{re.escape(rpc)}\s+8\s+\d", out, re.MULTILINE), out
    assert re.search(r"p50\(Apply\)/p50\(empty\), 1 client:\s+\d", out), out
    assert re.search(r"throughput\(Apply\)/throughput\(empty\), 8 clients:\s+\d", out), out
    assert "where the 1-client Apply p50 goes" in out, out
    assert re.search(r"OK\s+log on disk: action events in DuckDB == acknowledged applies", out)
    assert "OK   log on disk: server exits 0 after SIGTERM" in out, out
    assert "FAIL" not in out, out


def test_bench_stats_quick_prints_its_figures(tmp_path: Path) -> None:
    out = run_script("bench_stats.py", "--quick", "--cache", str(tmp_path), timeout=300)
    assert re.search(r"^\s+300\s+[\d,]+\s+[\d,]+\s+\d+\s+\d+\.\d+ \(", out, re.MULTILINE), out


def test_bench_rollout_quick_measures_every_part() -> None:
    doc: dict[str, Any] = json.loads(run_script("bench_rollout.py", "--quick", "--json"))
    assert doc["kernel"] is True
    assert set(doc["rollouts"]) == {f"{s}/{b}" for s in (2, 3, 4) for b in ("c", "python")}
    for key, figures in doc["rollouts"].items():
        for name in ("one_core_playouts_per_s", "two_cores_playouts_per_s"):
            assert positive(figures[name]), (key, name)
    analyze = doc["analyze"]
    assert analyze["decisions"] > 0
    assert analyze["moves"] > 0
    assert positive([analyze["wall_s"], analyze["median_diff_se"]])
    for seats in ("2", "3", "4"):
        bot = doc["bot"][seats]
        assert bot["decisions"] >= 1
        assert positive([bot["median_ms_per_decision"], bot["mean_ms_per_move"]])
    for figures in doc["strength"].values():
        low, high = figures["ci95"]
        assert low <= figures["mean_net_per_round"] <= high
        assert figures["rounds"] == 2 * figures["deals"]


def test_bench_ismcts_quick_times_the_bot_and_reports_each_tournament_by_deal() -> None:
    doc: dict[str, Any] = json.loads(run_script("bench_ismcts.py", "--quick", "--json"))
    for seats in ("2", "4"):
        figures = doc["time"][seats]
        assert figures["decisions"] >= 1
        assert positive([figures["median_ms"], figures["p99_ms"]])
        assert figures["median_ms"] <= figures["p99_ms"] <= figures["max_ms"]
    assert [run["spec"]["seats"] for run in doc["tournaments"]] == [2, 4]
    for run in doc["tournaments"]:
        assert run["command"].startswith("sniff tournament --bots ismcts-16,greedy ")
        assert {row["bot"] for row in run["results"]} == {"ismcts-16", "greedy"}
        for row in run["results"]:
            assert row["deals"] == 2
            assert row["ci_low"] <= row["mean"] <= row["ci_high"]


def test_bench_simulate_quick_reports_every_measure_and_its_ratios() -> None:
    doc: dict[str, Any] = json.loads(
        run_script("bench_simulate.py", "--quick", "--json", "--no-ray", timeout=300)
    )
    assert doc["cores"] >= 1
    assert doc["bots"] == ["greedy"]
    figures = doc["figures"]
    assert set(figures) == {
        "engine_per_cpu_s",
        "one_worker",
        "one_worker_wall_s",
        "all_cores",
        "all_cores_wall_s",
        "one_worker_per_cpu_s",
        "all_cores_per_cpu_s",
    }
    for name, figure in figures.items():
        assert len(figure["runs"]) == doc["runs"] >= 2, name
        assert positive(figure["runs"]), (name, figure)
        assert figure["min"] <= figure["median"] <= figure["max"], name
    assert set(doc["ratios"]) == {
        "one_worker_vs_engine",
        "scaling",
        "cpu_efficiency",
        "recording_share",
        "one_worker_ceiling_of_this_recorder",
        "chain_hash_share",
        "one_worker_ceiling_of_any_chaining_recorder",
    }
    assert positive(list(doc["ratios"].values()))
    ratios = doc["ratios"]
    # a ceiling is what its share leaves of the engine, and no recorder beats the bare chain
    assert ratios["one_worker_ceiling_of_this_recorder"] == 1 / (1 + ratios["recording_share"])
    assert ratios["chain_hash_share"] < ratios["recording_share"]


def test_bench_verify_quick_times_both_verifiers_on_one_bundle() -> None:
    out = run_script("bench_verify.py", "--quick", "--json", timeout=600)
    doc: dict[str, Any] = json.loads(out)
    assert doc["matches"] == 200
    assert doc["checkpoints"] > doc["matches"]
    assert "sniff verify" in doc["median_s"]
    assert positive(list(doc["median_s"].values()))


def test_bench_signing_compares_signed_and_unsigned_applies_in_one_process() -> None:
    out = run_script("bench_signing.py", "--runs", "1", "--matches", "1")
    figures = {
        m.group(1): float(m.group(2))
        for m in re.finditer(r"^\s*(unsigned|signed): ([0-9.]+) us CPU per ApplyMove", out, re.M)
    }
    assert set(figures) == {"unsigned", "signed"}, out
    assert positive(list(figures.values()))
    assert re.search(r"median of the paired ratios: [0-9]+\.[0-9]{3}$", out, re.M), out


def test_bench_million_quick_reports_the_targets_and_their_ceilings() -> None:
    doc: dict[str, Any] = json.loads(
        run_script(
            "bench_million.py",
            "--quick",
            "--json",
            "--matches",
            "4000",
            "--python-matches",
            "40",
            timeout=600,
        )
    )
    assert doc["matches"] == 4000
    assert set(doc["seats"]) == {"2", "4"}
    for seats, figures in doc["seats"].items():
        expected = {
            "kernel_per_cpu_s",
            "worker_ceiling",
            "writer_vs_play",
            "scaling_estimate",
            "total_s",
            "simulate_s",
            "stats_s",
            "run_rate",
            "simulate_rss_mb",
            "stats_rss_mb",
            "one_worker_rate",
            "one_worker_vs_kernel",
            "scaling",
        }
        if seats == "2":
            expected |= {"python_facts_rate", "python_events_rate", "python_facts_vs_events"}
        assert set(figures) == expected
        for value in figures.values():
            assert value["min"] <= value["median"] <= value["max"]
            assert value["min"] > 0
        total = figures["total_s"]["median"]
        parts = figures["simulate_s"]["median"] + figures["stats_s"]["median"]
        assert abs(total - parts) < 1e-6
        assert 0 < figures["scaling_estimate"]["median"] < 1


def test_bench_solver_quick_solves_real_endgames_and_reports_percentiles() -> None:
    """Each backend on the same endgames and whole deals (the kernel's only when built),
    percentiles in order, and no position whose values the backends disagree on."""
    doc: dict[str, Any] = json.loads(run_script("bench_solver.py", "--quick", "--json"))
    settings = doc["settings"]
    assert settings["positions"] == 40
    assert settings["deals"] == 3
    assert settings["boneyard"] == 0
    assert settings["backends"] == (["c", "python"] if KERNEL_AVAILABLE else ["python"])
    for part, count, budget in (
        ("endgames", 40, settings["budget_nodes"]),
        ("par", 3, settings["par_budget_nodes"]),
    ):
        assert doc[part]["disagreements"] == 0
        for backend in settings["backends"]:
            figures = doc[part][backend]
            assert figures["positions"] == count
            assert 0 <= figures["unsolved"] < count
            for name in ("median", "p90", "p99", "max"):
                assert figures[f"{name}_ms"] >= 0
                assert 0 <= figures[f"{name}_nodes"] <= budget
            assert figures["median_ms"] <= figures["p90_ms"] <= figures["p99_ms"]
            assert figures["p99_ms"] <= figures["max_ms"]
            assert positive([figures["nodes_per_s"]])
    assert doc["par"]["python"]["max_tiles"] == 14
    text = run_script("bench_solver.py", "--quick", "--deals", "0")
    for name in ("median", "p90", "p99", "max"):
        assert re.search(rf"^\s+{name}: (>=)?[\d,.]+ ms \([\d,]+ nodes\)$", text, re.M), text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for server CPU")
def test_bench_play_quick_plays_the_same_matches_both_ways() -> None:
    """The script exits 1 if the unary loop and Play played different actions."""
    out = run_script("bench_play.py", "--quick", "--json")
    doc: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    assert set(doc["matches"]) == {"1", "4"}
    for n, row in doc["matches"].items():
        for name in ("unary_rate", "play_rate", "unary_server_us", "play_server_us", "ratio"):
            assert row[name] > 0, (n, name)
    assert doc["fsync_us"] > 0  # the one-match floor, timed on the log's disk
    assert doc["one_match_ceiling"] > doc["matches"]["1"]["ratio"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for server CPU")
def test_bench_play_many_quick_times_every_decision_of_one_and_two_servers() -> None:
    """The script exits 1 if a match did not end or a decision got no `answered`; each
    setting's round-trip quantiles are in order."""
    out = run_script("bench_play_many.py", "--quick", "--json")
    doc: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    assert set(doc["settings"]) == {
        "fsync 2",
        "fsync 8",
        "no-fsync 2",
        "no-fsync 8",
        "shared 8",
        "paced 8",
        "2 servers 8",
    }
    for name, row in doc["settings"].items():
        assert 0 < row["p50_ms"] <= row["p90_ms"] <= row["p99_ms"] <= row["max_ms"], name
        assert row["rate"] > 0, name
        assert row["server_us"] > 0, name
    assert doc["two_servers_ratio"] > 0
    assert re.search(r"^2 servers / 1 server with 8 bots: [\d.]+x actions/s \(", out, re.M), out


def test_bench_arena_quick_plays_the_same_matches_through_the_arena_and_in_process() -> None:
    doc: dict[str, Any] = json.loads(
        run_script("bench_arena.py", "--quick", "--no-fsync", "--json", timeout=300)
    )
    assert doc["matches"] == 10
    for way in ("arena", "in process"):
        assert positive([doc["median"][way]["matches_per_s"], doc["median"][way]["ms_per_match"]])


@pytest.mark.go
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for server CPU")
def test_bench_play_quick_with_the_go_bot_plays_the_same_matches_both_ways() -> None:
    need_go()
    out = run_script("bench_play.py", "--quick", "--json", "--client", "go", timeout=900)
    doc: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    assert doc["client"] == "go"
    assert set(doc["matches"]) == {"1", "4"}
    for n, row in doc["matches"].items():
        for name in ("unary_rate", "play_rate", "unary_client_us", "play_client_us", "ratio"):
            assert row[name] > 0, (n, name)


@pytest.mark.go
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for server CPU")
def test_bench_play_many_quick_with_the_go_bot_times_every_decision() -> None:
    need_go()
    out = run_script("bench_play_many.py", "--quick", "--json", "--client", "go", timeout=900)
    doc: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    assert doc["client"] == "go"
    assert set(doc["settings"]) == {"fsync 2", "fsync 8", "no-fsync 2", "no-fsync 8", "2 servers 8"}
    for name, row in doc["settings"].items():
        assert 0 < row["p50_ms"] <= row["p90_ms"] <= row["p99_ms"] <= row["max_ms"], name
        assert row["rate"] > 0, name
        assert row["client_us"] > 0, name


def test_bench_play_session_plays_every_match_over_shared_and_per_seat_streams() -> None:
    """The script exits 1 if a stream ends before its matches do."""
    out = run_script("bench_play_session.py", "--quick", "--json")
    doc: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    assert set(doc["us_per_action"]) == {"shared", "per seat"}
    assert positive(list(doc["us_per_action"].values()))

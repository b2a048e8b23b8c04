"""`sniff simulate` benchmark: matches stored per second, on one worker and on every core.

Prints, as the median (min..max) of several runs, for greedy-bot 2-seat matches:

* the engine's own play (`play_match`, what scripts/bench_engine.py times) with the
  same bots, per CPU second of this process: the ceiling of one worker;
* `sniff simulate --workers 1` and `--workers <cores>`: matches played, chained,
  written as Parquet chunks and loaded into a fresh DuckDB log, per second of the
  run (the command's own figure: from the first chunk handed out to the last one
  loaded, process start-up left out), and the wall time of the whole command;
* matches per CPU second of the workers (the command reports the CPU time its
  chunks took; contention from other jobs leaves it nearly alone), on one
  worker and on every core;
* the ratios: one worker's matches per CPU second against the engine's, the
  scaling of all cores' wall rate against cores x one worker's, and the CPU
  efficiency (all cores' matches per worker CPU second against one worker's:
  1.0 means running in parallel costs no extra CPU, so on idle cores the
  scaling would be linear);
* with Ray installed: a `--ray local` run of the same matches against local workers.

Every run plays the same seeded matches into a new log file.

    .venv/bin/python scripts/bench_simulate.py            # full run (a few minutes)
    .venv/bin/python scripts/bench_simulate.py --quick    # smoke run (seconds)
    .venv/bin/python scripts/bench_simulate.py --quick --json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.bot_matches import bot_match  # noqa: E402
from analysis.parallel import default_workers  # noqa: E402
from sniff.seeds import match_seed  # noqa: E402

BOTS = ("greedy",)
RATE = re.compile(r"played now, ([\d,.]+) matches/s, ([\d,.]+) worker CPU s")


def engine_rate(matches: int, seed: int) -> float:
    """The engine's bare play: matches per CPU second of this process."""
    start = time.process_time()
    for i in range(matches):
        bot_match(2, match_seed(seed, i), BOTS)
    return matches / (time.process_time() - start)


def recording_share(matches: int, seed: int) -> tuple[float, float]:
    """What recording costs against the play, measured on the same matches: (the events
    chained and their facts followed, `EventRecorder` as a worker records them; the
    SHA-256 chain alone, the encodings given), each as a share of the engine's play.

    Both replay the matches' actions with no bot (so the bots' time is not counted
    twice) and subtract a bare engine replay of the same actions. One worker can reach
    at most 1 / (1 + share) of the engine: the first is the ceiling of this recorder,
    the second of any recorder that chains every event (docs/chain.md).
    """
    from service.match_recorder import EventRecorder
    from service.storage.chain import linker, row_content
    from sniff import Match, Move, Phase

    played = [bot_match(2, match_seed(seed, i), BOTS) for i in range(matches)]
    scripts = [[log.actions for log in m.history] for m in played]

    def replay(recorded: bool) -> float:
        start = time.process_time()
        for i, rounds in enumerate(scripts):
            deal: Callable[[], object]
            apply: Callable[[Move], object]
            if recorded:
                rec = EventRecorder(f"b-{i}", 2, seed=match_seed(seed, i), first_deal=False)
                deal, apply, match = rec.deal, rec.apply, rec.match
            else:
                match = Match(2, seed=match_seed(seed, i), auto_deal=False)
                deal, apply = match.deal, match.apply
            for actions in rounds:
                deal()
                for move in actions:
                    apply(move)
            assert match.phase is Phase.OVER
        return time.process_time() - start

    bare = min(replay(False) for _ in range(3))
    recorded = min(replay(True) for _ in range(3))
    contents = []
    for i, rounds in enumerate(scripts):
        rec = EventRecorder(f"b-{i}", 2, seed=match_seed(seed, i), first_deal=False)
        for actions in rounds:
            rec.deal()
            for move in actions:
                rec.apply(move)
        contents.append([row_content(row) for row in rec.rows()])
    link = linker(bytes(32))
    hashing = []
    for _ in range(3):
        start = time.process_time()
        for events in contents:
            head = bytes(32)
            for content in events:
                head = link(head, content)
        hashing.append(time.process_time() - start)
    engine = matches / engine_rate(matches, seed)
    return (recorded - bare) / engine, min(hashing) / engine


def sniff_command() -> list[str]:
    exe = Path(sys.executable).parent / "sniff"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "analysis.cli"]


def simulate_rate(
    matches: int, seed: int, workers: int, ray: bool = False
) -> tuple[float, float, float]:
    """(matches/s of the run, wall seconds of the command, matches per CPU second of its
    workers) into a fresh log."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [*sniff_command(), "simulate", "--db", str(Path(tmp) / "bench.duckdb")]
        argv += ["--matches", str(matches), "--seed", str(seed), "--bots", ",".join(BOTS)]
        argv += ["--workers", str(workers)] + (["--ray", "local"] if ray else [])
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=ROOT)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"sniff simulate failed: {done.stderr.strip()}")
        found = RATE.search(done.stdout)
        if found is None:
            raise SystemExit(f"no rate in: {done.stdout!r}")
        cpu = float(found.group(2).replace(",", ""))
        return float(found.group(1).replace(",", "")), wall, matches / max(cpu, 1e-9)


def have_ray() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def summary(values: list[float]) -> dict[str, Any]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few matches, two runs")
    parser.add_argument("--json", action="store_true", help="the figures as one JSON object")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--matches", type=int, default=None)
    parser.add_argument("--no-ray", action="store_true", help="leave the Ray comparison out")
    args = parser.parse_args()
    runs = args.runs or (2 if args.quick else 3)
    matches = args.matches or (40 if args.quick else 2000)
    cores = default_workers()
    figures: dict[str, list[float]] = {
        "engine_per_cpu_s": [],
        "one_worker": [],
        "one_worker_wall_s": [],
        "all_cores": [],
        "all_cores_wall_s": [],
        "one_worker_per_cpu_s": [],
        "all_cores_per_cpu_s": [],
    }
    ray = have_ray() and not args.no_ray
    if ray:
        figures["ray_local"], figures["ray_local_wall_s"] = [], []
    shares: dict[str, list[float]] = {"recording_share": [], "chain_hash_share": []}
    for _ in range(runs):
        recording, hashing = recording_share(max(10, matches // 8), 0)
        shares["recording_share"].append(recording)
        shares["chain_hash_share"].append(hashing)
        figures["engine_per_cpu_s"].append(engine_rate(max(10, matches // 4), 0))
        rate, wall, per_cpu = simulate_rate(matches, 0, 1)
        figures["one_worker"].append(rate)
        figures["one_worker_wall_s"].append(wall)
        figures["one_worker_per_cpu_s"].append(per_cpu)
        rate, wall, per_cpu = simulate_rate(matches, 0, cores)
        figures["all_cores"].append(rate)
        figures["all_cores_wall_s"].append(wall)
        figures["all_cores_per_cpu_s"].append(per_cpu)
        if ray:
            rate, wall, _ = simulate_rate(matches, 0, cores, ray=True)
            figures["ray_local"].append(rate)
            figures["ray_local_wall_s"].append(wall)
    med = {k: statistics.median(v) for k, v in figures.items()}
    ratios = {
        "one_worker_vs_engine": med["one_worker_per_cpu_s"] / med["engine_per_cpu_s"],
        "scaling": med["all_cores"] / (cores * med["one_worker"]),
        "cpu_efficiency": med["all_cores_per_cpu_s"] / med["one_worker_per_cpu_s"],
        # what recording costs against the play, and so the most one worker can reach
        "recording_share": statistics.median(shares["recording_share"]),
        "one_worker_ceiling_of_this_recorder": 1
        / (1 + statistics.median(shares["recording_share"])),
        "chain_hash_share": statistics.median(shares["chain_hash_share"]),
        "one_worker_ceiling_of_any_chaining_recorder": 1
        / (1 + statistics.median(shares["chain_hash_share"])),
    }
    if ray:
        ratios["ray_overhead_wall"] = med["ray_local_wall_s"] / med["all_cores_wall_s"] - 1
        ratios["ray_vs_local_rate"] = med["ray_local"] / med["all_cores"]
    doc = {
        "matches": matches,
        "runs": runs,
        "cores": cores,
        "bots": list(BOTS),
        "figures": {k: {"runs": v, **summary(v)} for k, v in figures.items()},
        "ratios": ratios,
    }
    if args.json:
        print(json.dumps(doc, indent=1))
        return
    print(f"sniff simulate: {matches} greedy 2-seat matches, {runs} runs, {cores} cores")
    print(f"{'measure':<28} {'median':>10} {'min..max':>22}")
    for name, values in figures.items():
        unit = "matches/s"
        if name.endswith("_wall_s"):
            unit = "s"
        elif name.endswith("_cpu_s"):
            unit = "matches/CPU s"
        s = summary(values)
        print(f"{name:<28} {s['median']:>10,.1f} {s['min']:>10,.1f}..{s['max']:<10,.1f} {unit}")
    for name, value in ratios.items():
        print(f"{name:<28} {value:>10.2f}")


if __name__ == "__main__":
    main()

"""A million matches: `sniff simulate` then `sniff stats sniff-timing`, as a user runs them.

Every figure comes from the commands themselves, run as subprocesses into a fresh log
in a temporary directory, greedy against random (seat s plays greedy when s is even),
American rules, no round limit. Printed as the median (min..max) of `--runs` runs:

* `total`: the wall time of `sniff simulate --matches N` plus `sniff stats sniff-timing
  --run RUN` on its log (process start-up included): the target is 60 s for 1,000,000
  2-seat matches and 120 s for 4-seat;
* of it, each command's wall time, the run's own rate (matches/s from the first chunk
  handed out to the last stored) and the peak RSS of the largest process (the command
  or one of its workers);
* `kernel`: the kernel's own whole-match speed in this process (`kernel_matches_raw`:
  bot seeds, deals, play, facts as int32 rows), matches per CPU second: what one worker
  could do if storing cost nothing;
* `one worker`: `sniff simulate --workers 1` (one worker process; the log's writer in
  the command's own process), its wall rate against the kernel's speed: the target is
  0.9, i.e. storage is not the bottleneck;
* `scaling`: `--workers 2` against twice `--workers 1` (wall rates): the target is 0.8;
* what bounds both, measured in this process on one chunk (`storage_floor`): a
  worker's chunk against the kernel's play alone (`worker_ceiling`), and p / (p + w)
  for play p and the writer's w CPU seconds a match (`scaling_estimate`: the writer is
  one process and shares the 2 cores with the workers; an estimate, since the run's
  writer has a DuckDB thread per worker and the workers wait for it in part);
* `python`: the Python engine's facts-only run (`SNIFF_KERNEL=python`) and today's
  `--events` path, matches/s on both cores (the Python path must be no slower);
* with `--ray`: a `--ray local` run of the same matches against local workers;
* with `--ten-million`: one 10,000,000-match run, its wall time and peak RSS (bounded
  memory: a chunk at a time, whatever the run's size).

The machine is shared and noisy: the ratios inside one run are the figures to compare.

    .venv/bin/python scripts/bench_million.py                 # 2 and 4 seats, 3 runs
    .venv/bin/python scripts/bench_million.py --quick         # smoke run (about a minute)
    .venv/bin/python scripts/bench_million.py --ray --ten-million --runs 1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sniff.playout import KERNEL_AVAILABLE  # noqa: E402
from sniff.simulated import MatchSettings, kernel_matches_raw  # noqa: E402

BOTS = "greedy,random"
RATE = re.compile(r"played now, ([\d,.]+) matches/s, ([\d,.]+) worker CPU s")


def sniff_command() -> list[str]:
    exe = Path(sys.executable).parent / "sniff"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "analysis.cli"]


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in MB of the command or its largest worker, stdout).

    The peak is the command's own (`wait4` on it: its largest process, itself or a worker
    it reaped), not the largest of every command this script ran."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=ROOT, env=env or None)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[-12:])} failed: {stderr.strip()}")
    return wall, usage.ru_maxrss // 1024, stdout


def simulate(
    tmp: Path,
    matches: int,
    seats: int,
    workers: int,
    *,
    seed: int = 0,
    extra: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> tuple[dict[str, float], str]:
    """The run's figures, and its log file."""
    db = tmp / f"bench-{time.monotonic_ns()}.duckdb"
    argv = [*sniff_command(), "simulate", "--db", str(db), "--matches", str(matches)]
    argv += ["--seats", str(seats), "--bots", BOTS, "--seed", str(seed), "--run", "bench"]
    argv += ["--workers", str(workers), *extra]
    wall, rss, out = timed(argv, env)
    found = RATE.search(out)
    if found is None:
        raise SystemExit(f"no rate in: {out!r}")
    return {
        "wall_s": wall,
        "rate": float(found.group(1).replace(",", "")),
        "worker_cpu_s": float(found.group(2).replace(",", "")),
        "rss_mb": rss,
    }, str(db)


def stats(db: str) -> dict[str, float]:
    argv = [*sniff_command(), "stats", "sniff-timing", "--db", db, "--run", "bench"]
    wall, rss, out = timed(argv)
    if not re.match(r"\d+ matches, ", out):
        raise SystemExit(f"unexpected stats output: {out[:200]!r}")
    return {"wall_s": wall, "rss_mb": rss}


def kernel_rate(seats: int, matches: int, seed: int) -> float:
    """The kernel's whole matches per CPU second of this process (bot seeds included)."""
    settings = MatchSettings(seats, tuple(BOTS.split(",")))
    seeds = list(range(seed, seed + matches))
    start = time.process_time()
    kernel_matches_raw(settings, seeds)
    return matches / (time.process_time() - start)


def storage_floor(tmp: Path, seats: int, matches: int, seed: int) -> dict[str, float]:
    """What storing costs against playing, measured here on one chunk, one process, CPU
    time: the kernel's play; a worker's whole chunk (play, Arrow columns, files); the log's
    writer storing it (`EventLog.store_simulated`, DuckDB on one thread). From them, the
    bounds: one worker against the kernel (its conversion and files), and the scaling on
    2 cores when the workers and the one writer share them: play p and store w CPU
    seconds a match give about 2 / (p + w) matches a second on both cores against 1 / p
    for one worker with the writer on the other core, so about p / (p + w) of linear."""
    from analysis.simulate import RunSettings, play_facts_chunk, read_facts_chunk, simulation_run
    from service.storage import EventLog
    from sniff.rules import RULES_VERSION

    bots = tuple(BOTS.split(","))
    settings = RunSettings("floor", matches, seats, bots, seed, chunk_size=matches)
    run_dir = tmp / f"floor-{time.monotonic_ns()}"
    run_dir.mkdir()
    seeds = list(range(seed, seed + matches))
    start = time.process_time()
    kernel_matches_raw(MatchSettings(seats, settings.bots), seeds)
    kernel = time.process_time() - start
    start = time.process_time()
    play_facts_chunk(run_dir, settings, 0, "c")
    worker = time.process_time() - start
    tables = read_facts_chunk(run_dir, 0)
    with EventLog(run_dir / "floor.duckdb", sync=False) as log:
        start = time.process_time()
        log.store_simulated(
            simulation_run(settings), RULES_VERSION, tables.matches, tables.rounds, tables.decisions
        )
        writer = time.process_time() - start
    shutil.rmtree(run_dir, ignore_errors=True)
    return {
        "worker_ceiling": kernel / worker,
        "writer_vs_play": writer / worker,
        "scaling_estimate": worker / (worker + writer),
    }


def summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def cleanup(db: str) -> None:
    """The log file and everything beside it (its runs directory, WAL)."""
    path = Path(db)
    for p in path.parent.glob(path.name + "*"):
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 matches, one run")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--matches", type=int, default=None)
    parser.add_argument("--seats", default="2,4", help="seat counts, comma-separated")
    parser.add_argument("--python-matches", type=int, default=None)
    parser.add_argument("--ray", action="store_true", help="add a --ray local run")
    parser.add_argument("--ten-million", action="store_true", help="add a 10M-match run")
    parser.add_argument("--json", action="store_true", help="the figures as one JSON object")
    args = parser.parse_args()
    if not KERNEL_AVAILABLE:
        raise SystemExit("the kernel is not built: pip install -e . (or setup.py build_ext)")
    runs = args.runs or (1 if args.quick else 3)
    matches = args.matches or (20_000 if args.quick else 1_000_000)
    py_matches = args.python_matches or (200 if args.quick else 2_000)
    cores = os.cpu_count() or 1
    doc: dict[str, Any] = {"matches": matches, "runs": runs, "cores": cores, "seats": {}}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for seats in (int(s) for s in args.seats.split(",")):
            figs: dict[str, list[float]] = {}

            def add(key: str, value: float, figs: dict[str, list[float]] = figs) -> None:
                figs.setdefault(key, []).append(value)

            for run in range(runs):
                add("kernel_per_cpu_s", kernel_rate(seats, min(matches, 100_000), run))
                for key, value in storage_floor(tmp, seats, min(matches, 50_000), run).items():
                    add(key, value)
                sim, db = simulate(tmp, matches, seats, cores)
                st = stats(db)
                cleanup(db)
                add("total_s", sim["wall_s"] + st["wall_s"])
                add("simulate_s", sim["wall_s"])
                add("stats_s", st["wall_s"])
                add("run_rate", sim["rate"])
                add("simulate_rss_mb", sim["rss_mb"])
                add("stats_rss_mb", st["rss_mb"])
                one, db = simulate(tmp, matches // 2, seats, 1)
                cleanup(db)
                add("one_worker_rate", one["rate"])
                add("one_worker_vs_kernel", one["rate"] / figs["kernel_per_cpu_s"][-1])
                add("scaling", sim["rate"] / (min(cores, 2) * one["rate"]))
                if args.ray:
                    ray, db = simulate(tmp, matches, seats, cores, extra=("--ray", "local"))
                    cleanup(db)
                    add("ray_wall_s", ray["wall_s"])
                    add("ray_vs_local_wall", ray["wall_s"] / sim["wall_s"])
            if seats == 2:
                env = dict(os.environ, SNIFF_KERNEL="python")
                for _ in range(runs):
                    py, db = simulate(tmp, py_matches, seats, cores, env=env)
                    cleanup(db)
                    ev, db = simulate(tmp, py_matches, seats, cores, extra=("--events",))
                    cleanup(db)
                    add("python_facts_rate", py["rate"])
                    add("python_events_rate", ev["rate"])
                    add("python_facts_vs_events", py["rate"] / ev["rate"])
            doc["seats"][seats] = {k: summary(v) for k, v in figs.items()}
        if args.ten_million:
            big, db = simulate(tmp, 10_000_000, 2, cores)
            st = stats(db)
            doc["ten_million"] = {
                "simulate_s": big["wall_s"],
                "rate": big["rate"],
                "simulate_rss_mb": big["rss_mb"],
                "stats_s": st["wall_s"],
                "stats_rss_mb": st["rss_mb"],
                "db_mb": Path(db).stat().st_size // 1_000_000,
            }
            cleanup(db)
    if args.json:
        print(json.dumps(doc, indent=1))
        return
    print(f"{matches:,} matches a run, {runs} runs, {cores} cores; median (min..max)")
    for seats, table in doc["seats"].items():
        print(f"\n{seats} seats")
        for key, s in table.items():
            print(f"  {key:24s} {s['median']:>12,.2f}  ({s['min']:,.2f}..{s['max']:,.2f})")
    if "ten_million" in doc:
        print("\n10,000,000 matches, 2 seats")
        for key, value in doc["ten_million"].items():
            print(f"  {key:24s} {value:>12,.1f}")


if __name__ == "__main__":
    main()

"""How long `sniff verify` and `node clients/node/verify.js` take on a 10,000-match bundle.

Builds once (cached under the temp dir, keyed by this script's version and the
match count) a bundle of --matches bot matches as `sniff simulate` plays them
(analysis/simulate.py's chunks: 2 seats, greedy against random, target 250,
on every core), signed in this process as a log with a signing key signs them
(analysis/bundle/stand_in.py: a checkpoint at every round and match end, a
tree head after every 100 matches), written by the bundle writer. Then times,
median of --runs, each verifier as a subprocess (start-up included) on every
core, and the CPU time of one run on one worker (all the work in one process).
The target is 30 s each for 10,000 matches.

    .venv/bin/python scripts/bench_verify.py            # 10,000 matches, 3 runs
    .venv/bin/python scripts/bench_verify.py --quick    # 200 matches, one run
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa

from analysis.bundle.layout import Counts
from analysis.bundle.stand_in import SignedLog, rows_of_table
from analysis.bundle.writer import MatchEvidence, write_bundle
from analysis.parallel import default_workers, ordered_map
from analysis.simulate import RunSettings, chunk_table
from service.evidence.keys import SigningKey

BENCH_VERSION = 2
TARGET_S = 30.0
HEAD_EVERY = 100
"""Matches between two signed tree heads."""
CHUNK = 250
ROOT = Path(__file__).resolve().parents[1]
START_MS = 1_796_198_400_000


def _chunk(job: tuple[dict[str, object], int]) -> pa.Table:
    settings, chunk = job
    table, _ = chunk_table(RunSettings.from_json(dict(settings)), chunk)
    return table


def build(directory: Path, matches: int, workers: int) -> Counts:
    """Play the matches on every core, sign them here, write the bundle."""
    began = time.perf_counter()
    settings = RunSettings("bench", matches, 2, ("greedy", "random"), 1, chunk_size=CHUNK)
    jobs = [(settings.to_json(), c) for c in range(settings.chunks)]
    tables = list(ordered_map(_chunk, jobs, workers, preload=("analysis.simulate",)))
    played = time.perf_counter()
    log = SignedLog(SigningKey.generate())

    def matches_of(table: pa.Table) -> list[list[tuple[object, ...]]]:
        return rows_of_table([table.column(i).to_pylist() for i in range(table.num_columns)])

    for table in tables:
        for rows in matches_of(table):
            log.finish(rows)
            if len(log.leaves) % HEAD_EVERY == 0:
                log.sign_head(START_MS + 1000 * len(log.leaves))
    head = log.sign_head(START_MS + 1000 * (len(log.leaves) + 1))
    signed = time.perf_counter()

    def evidence() -> Iterator[MatchEvidence]:
        for table in tables:  # ids `bench-00000000`, ... : play order is match id order
            yield from log.evidence(matches_of(table))

    building = directory.with_name(directory.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    counts = write_bundle(
        building,
        public_key=log.key.public,
        tree_head=head,
        leaves=log.leaves,
        matches=evidence(),
        earlier=log.tree_heads[:-1],
    )
    building.rename(directory)
    print(
        f"built {counts.matches:,} matches ({counts.events:,} events, {counts.checkpoints:,}"
        f" checkpoints): {played - began:.1f} s of play, {signed - played:.1f} s of signing,"
        f" {time.perf_counter() - signed:.1f} s of writing",
        file=sys.stderr,
    )
    return counts


def cached(matches: int, workers: int) -> tuple[Path, Counts]:
    key = hashlib.sha256(f"{BENCH_VERSION}:{matches}".encode()).hexdigest()[:12]
    root = Path(tempfile.gettempdir()) / "sniff-bench-verify"
    root.mkdir(exist_ok=True)
    directory = root / f"m{matches}-{key}"
    if not directory.exists():
        build(directory, matches, workers)
    counts = json.loads((directory / "bundle.json").read_text())["counts"]
    return directory, Counts(**counts)


def timed(argv: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Wall seconds and CPU seconds (user and system, of the process and the children it
    waited for: not of `sniff verify`'s worker processes, a fork server's children) of each run."""
    times, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=ROOT)
        times.append(time.perf_counter() - began)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr}")
    return times, cpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--quick", action="store_true", help="200 matches, one run")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.quick:
        args.matches, args.runs = 200, 1
    directory, counts = cached(args.matches, args.workers)
    sniff = str(Path(sys.executable).parent / "sniff")
    node = shutil.which("node")
    commands = {"sniff verify": [sniff, "verify", str(directory)]}
    if node is not None:
        commands["node verify.js"] = [
            node,
            str(ROOT / "clients" / "node" / "verify.js"),
            str(directory),
        ]
    walls: dict[str, list[float]] = {}
    cpus: dict[str, float] = {}
    for name, argv in commands.items():
        walls[name], _ = timed([*argv, "--workers", str(args.workers)], args.runs)
        # One worker: all the work in the one process, so its CPU time is all of it.
        _, (cpus[name],) = timed([*argv, "--workers", "1"], 1)
    medians = {name: statistics.median(times) for name, times in walls.items()}
    if args.json:
        print(
            json.dumps(
                {
                    **counts.to_json(),
                    "workers": args.workers,
                    "runs": args.runs,
                    "seconds": walls,
                    "median_s": medians,
                    "cpu_s_one_worker": cpus,
                    "load_average": os.getloadavg()[0],
                }
            )
        )
        return
    print(
        f"{counts.matches:,} matches ({counts.events:,} events, {counts.checkpoints:,} checkpoints,"
        f" {counts.tree_heads:,} earlier tree heads), whole command; load average"
        f" {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print(f"{'':<16}{f'wall, {args.workers} workers':>22}{'CPU, 1 worker':>16}")
    for name, seconds in medians.items():
        verdict = ""
        if counts.matches >= 10_000:
            verdict = "OK" if seconds <= TARGET_S * counts.matches / 10_000 else "OVER the target"
        print(f"{name:<16}{seconds:>20.1f} s{cpus[name]:>14.1f} s  {verdict}")
    print(f"wall: median of {args.runs} runs; target: {TARGET_S:.0f} s for 10,000 matches")


if __name__ == "__main__":
    main()

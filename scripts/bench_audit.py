"""How fast `sniff audit` checks a record file and an event log of mixed 2, 3 and 4 seats.

Builds once (cached under the temp dir, keyed by this script's version and
the schema) --matches bot-played matches, seats 2, 3, 4 in turn, as both a
docs/records.md JSON Lines file and an event log (the events the service would
write, chained, loaded through the storage package's own insert). Then
times, median of --runs:

- `sniff audit FILE` as a subprocess (start-up included) on one worker and
  on every core;
- `sniff audit --db LOG` the same way.

The target is 600 matches per second on both cores for each.

    .venv/bin/python scripts/bench_audit.py            # 10,000 matches
    .venv/bin/python scripts/bench_audit.py --quick    # 600 matches, one run
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb

from analysis.bot_matches import recorded_bot_match
from analysis.parallel import default_workers
from service.storage import SCHEMA_VERSION, EventLog
from service.storage.events import to_rows
from service.storage.log import insert_rows
from sniff import to_record

BENCH_VERSION = 1
TARGET = 600.0
BOTS = ("greedy", "random")


def build(records: Path, log: Path, matches: int) -> None:
    """Play the matches; write them as records and as a log."""
    began = time.perf_counter()
    lines: list[str] = []
    rows = []
    for i in range(matches):
        seats = 2 + i % 3
        match_id = f"{i:016x}"
        recorder = recorded_bot_match(match_id, seats, i, BOTS)
        match = recorder.match
        names = [BOTS[s % 2] for s in range(seats)]
        lines.append(json.dumps(to_record(match, match_id, names), separators=(",", ":")))
        rows += to_rows(recorder.events)
    played = time.perf_counter()
    tmp = records.with_suffix(".building")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, records)
    tmp = log.with_suffix(".building")
    for leftover in (tmp, Path(f"{tmp}.wal")):
        leftover.unlink(missing_ok=True)
    EventLog(tmp).close()
    now = datetime.now(UTC)
    rows = [(*r[:-1], now) for r in rows]
    with duckdb.connect(str(tmp)) as con:
        con.execute("BEGIN TRANSACTION")
        insert_rows(con, rows)
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
    os.replace(tmp, log)
    print(
        f"built {matches:,} matches ({len(rows):,} events) in"
        f" {played - began:.1f} s of play and {time.perf_counter() - played:.1f} s of writing",
        file=sys.stderr,
    )


def cached(matches: int) -> tuple[Path, Path]:
    key = hashlib.sha256(f"{SCHEMA_VERSION}:{BENCH_VERSION}:{matches}".encode()).hexdigest()[:12]
    directory = Path(tempfile.gettempdir()) / "sniff-bench-audit"
    directory.mkdir(exist_ok=True)
    records, log = directory / f"m{matches}-{key}.jsonl", directory / f"m{matches}-{key}.duckdb"
    if not (records.exists() and log.exists()):
        build(records, log, matches)
    return records, log


def timed(argv: list[str], runs: int) -> float:
    sniff = str(Path(sys.executable).parent / "sniff")
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        done = subprocess.run([sniff, *argv], capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - began)
        if done.returncode != 0:
            raise SystemExit(f"sniff {' '.join(argv)} exited {done.returncode}: {done.stderr}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="600 matches, one run")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.quick:
        args.matches, args.runs = 600, 1
    records, log = cached(args.matches)
    cores = default_workers()
    figures: dict[str, float] = {}
    for label, argv in (
        ("records", ["audit", str(records)]),
        ("log", ["audit", "--db", str(log)]),
    ):
        for workers in sorted({1, cores}):
            seconds = timed([*argv, "--workers", str(workers)], args.runs)
            figures[f"{label}/{workers}"] = args.matches / seconds
    if args.json:
        print(json.dumps({"matches": args.matches, "cores": cores, "matches_per_s": figures}))
        return
    print(f"{args.matches:,} matches (seats 2, 3, 4), median of {args.runs} runs, whole command")
    print(f"{'what':<10}{'workers':>8}{'matches/s':>12}")
    for key, rate in figures.items():
        what, count = key.split("/")
        verdict = "" if int(count) != cores else ("  OK" if rate >= TARGET else "  BELOW target")
        print(f"{what:<10}{count:>8}{rate:>12,.0f}{verdict}")
    print(f"target: {TARGET:,.0f} matches/s on {cores} cores")


if __name__ == "__main__":
    main()

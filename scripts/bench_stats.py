"""Benchmark: the Sniff-timing tables (docs/statistics.md) over 100,000 and 1,000,000 matches.

The facts are made once and cached as Parquet (the layout `sniff stats facts`
writes and a simulation run will write):

* the first `--base` matches (default 100,000) are real bot matches, played
  by the engine in worker processes (seat counts 2, 3, 4 in turn; bots
  greedy and random in turn per seat, with the first seat's bot alternating;
  American with a round limit of 40), with their facts from
  `sniff.facts.facts_rows`;
* larger sizes are *synthesized* from those: copy k of the base facts with
  match ids suffixed `#k`, so 1,000,000 matches are ten copies of 100,000
  real ones. The aggregates' work (rows, groups, clusters) is that of real
  facts; only the statistical independence is not.

Then, for each size, it times (median of `--runs`) the whole computation of
both tables as `sniff stats sniff-timing` does it: open the Parquet facts,
select the matches, run the timing and holding aggregates, compute the
Student-t intervals, and build the long-form rows.

    .venv/bin/python scripts/bench_stats.py            # 100k and 1M (first run plays 100k: minutes)
    .venv/bin/python scripts/bench_stats.py --quick    # 300 matches, smoke run (seconds)
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.stats.store import FactsStore  # noqa: E402
from analysis.stats.timing import Filters, sniff_timing  # noqa: E402
from service.storage.facts import TABLES  # noqa: E402
from sniff import Match, make_bot, play_match  # noqa: E402
from sniff.facts import (  # noqa: E402
    DECISION_COLUMNS,
    MATCH_COLUMNS,
    ROUND_COLUMNS,
    FactsRows,
    empty_columns,
    facts_rows,
)

BOTS = ("greedy", "random")


def _play_chunk(args: tuple[int, int, str]) -> int:
    """Play matches [start, stop) and write their facts as one Parquet part."""
    start, stop, directory = args
    store = FactsStore.in_memory()
    rows = FactsRows(
        empty_columns(MATCH_COLUMNS), empty_columns(ROUND_COLUMNS), empty_columns(DECISION_COLUMNS)
    )
    for i in range(start, stop):
        seats = (2, 3, 4)[i % 3]
        names = [BOTS[(i // 3 + s) % 2] for s in range(seats)]
        bots = [make_bot(names[s], i * 10 + s) for s in range(seats)]
        match = play_match(Match(seats, seed=i, round_limit=40), bots)
        facts_rows(match, f"m{i}", names, "simulated", "bench", out=rows)
    store.add(rows)
    store.write_parquet(directory, f"part-{start:08d}")
    store.close()
    return stop - start


def make_base(directory: Path, matches: int, workers: int) -> None:
    """Play `matches` bot matches in `workers` processes, unless already cached."""
    done = directory / "DONE"
    if done.exists() and done.read_text() == str(matches):
        return
    chunk = min(1_000, max(1, matches // (2 * workers)))
    jobs = [(s, min(s + chunk, matches), str(directory)) for s in range(0, matches, chunk)]
    t0 = time.perf_counter()
    played = 0
    with multiprocessing.Pool(workers) as pool:
        for n in pool.imap_unordered(_play_chunk, jobs):
            played += n
            rate = played / (time.perf_counter() - t0)
            print(f"\r  played {played:,}/{matches:,} matches ({rate:,.0f}/s)", end="", flush=True)
    print()
    done.write_text(str(matches))


def make_copies(base: Path, directory: Path, copies: int) -> None:
    """`copies` copies of the base facts, match ids suffixed, as Parquet (cached)."""
    done = directory / "DONE"
    if done.exists() and done.read_text() == f"{base}x{copies}":
        return
    src = FactsStore.from_parquet(base)
    for table in TABLES:
        (directory / table).mkdir(parents=True, exist_ok=True)
        for k in range(copies):
            target = str(directory / table / f"copy-{k:03d}.parquet").replace("'", "''")
            src.con.execute(
                f"COPY (SELECT * REPLACE (match_id || '#{k}' AS match_id) FROM {table}) "
                f"TO '{target}' (FORMAT parquet)"
            ).fetchall()
    src.close()
    done.write_text(f"{base}x{copies}")


def time_tables(directory: Path, runs: int) -> tuple[list[float], list[float], int, int, int, int]:
    times = []
    cpu = []
    cells = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        c0 = time.process_time()
        store = FactsStore.from_parquet(directory)
        result = sniff_timing(store, Filters())
        cells = len(result.rows)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        if _ == 0:
            counts = [store.count(t) for t in TABLES]
        store.close()
    return times, cpu, cells, counts[0], counts[1], counts[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="300 matches, one run")
    parser.add_argument("--base", type=int, default=100_000, help="real matches played")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--cache", type=Path, default=ROOT / ".bench" / "stats", help="where facts are cached"
    )
    args = parser.parse_args()
    base_n = 300 if args.quick else args.base
    runs = 1 if args.quick else args.runs
    sizes = [1] if args.quick else [1, 10]
    base = args.cache / f"base-{base_n}"
    print(f"facts of {base_n:,} bot matches (cached in {base})")
    make_base(base, base_n, args.workers)
    header = f"{'matches':>10}  {'rounds':>11}  {'decisions':>11}  {'cells':>6}"
    print(f"{header}  wall s (median, min..max)  CPU s, all threads (median)")
    for copies in sizes:
        directory = base if copies == 1 else args.cache / f"copies-{base_n}x{copies}"
        if copies > 1:
            make_copies(base, directory, copies)
        times, cpu, cells, matches, rounds, decisions = time_tables(directory, runs)
        print(
            f"{matches:>10,}  {rounds:>11,}  {decisions:>11,}  {cells:>6}  "
            f"{statistics.median(times):.3f} ({min(times):.3f}..{max(times):.3f})"
            f"{statistics.median(cpu):>22.3f}"
        )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average now: {load} on {os.cpu_count()} cores (other work slows the wall time)")


if __name__ == "__main__":
    main()

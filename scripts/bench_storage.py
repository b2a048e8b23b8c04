"""Append throughput of the event log, as the service uses it.

Each game thread appends one event per call and waits for it to be durable,
so throughput comes from group commit alone: the more threads wait, the more
events share one commit (one WAL fsync). Prints events/s, the median of
several timed runs per thread count, and the mean events per commit.

    .venv/bin/python scripts/bench_storage.py            # 1 and 8 threads
    .venv/bin/python scripts/bench_storage.py --threads 1 8 32 --runs 3
    .venv/bin/python scripts/bench_storage.py --quick --json   # smoke run, figures for a program

Bounded in time: every run stops after --seconds and the whole benchmark
stops starting runs after --budget seconds (default 55).

Each run also checks the log's promise: every append that returned is in
the file (the action events counted by a query equal the acknowledged
appends). A run that loses one prints FAIL and the script exits 1.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.storage import EventLog, LogEvent


@dataclass
class Run:
    events_per_s: float
    events_per_commit: float
    cpu_us_per_event: float
    acknowledged: int
    logged: int


def one_run(directory: Path, threads: int, seconds: float) -> Run:
    """Events/s, events per commit and CPU µs per event for `threads` appenders.

    CPU time (all threads of the process, DuckDB's included) is the figure to
    compare on a busy machine, where wall-clock rates swing with the load.
    """
    path = directory / f"bench-{threads}-{time.monotonic_ns()}.duckdb"
    counts = [0] * threads
    start = threading.Barrier(threads + 1)
    stop = threading.Event()
    with EventLog(path) as log:

        def play(index: int) -> None:
            match_id = f"bench-{index}"
            log.append(
                [
                    LogEvent.match_created(
                        match_id, seats=2, target=250, seed=index, rules_version="1"
                    )
                ]
            )
            seq = 1
            start.wait()
            while not stop.is_set():
                log.append(
                    [
                        LogEvent.action(
                            match_id,
                            seq,
                            round=seq // 30,
                            action_index=seq % 30,
                            seat=seq % 2,
                            move="1-1@1-4:low",
                            points=5,
                            ends_sum=10,
                        )
                    ]
                )
                seq += 1
            counts[index] = seq - 1

        workers = [threading.Thread(target=play, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        start.wait()
        began = time.perf_counter()
        cpu_began = time.process_time()
        time.sleep(seconds)
        stop.set()
        for worker in workers:
            worker.join()
        elapsed = time.perf_counter() - began
        cpu = time.process_time() - cpu_began
        row = log.query(
            "SELECT count(DISTINCT logged_at) AS commits, count(*) AS logged "
            "FROM events WHERE kind = 'action'"
        ).to_pylist()[0]
    path.unlink(missing_ok=True)
    events = sum(counts)
    return Run(
        events / elapsed,
        events / max(row["commits"], 1),
        cpu / max(events, 1) * 1e6,
        events,
        row["logged"],
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.5, help="length of one run")
    parser.add_argument("--budget", type=float, default=55.0, help="stop starting runs after")
    parser.add_argument("--dir", type=Path, default=None, help="where to put the files")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 and 4 threads, ~2 s")
    parser.add_argument("--json", action="store_true", help="one JSON object, for programs")
    args = parser.parse_args()
    if args.quick:
        args.threads, args.runs, args.seconds, args.budget = [1, 4], 2, 0.3, 10.0

    deadline = time.monotonic() + args.budget
    report: dict[str, list[dict[str, float]]] = {}
    failed = False
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for threads in args.threads:
            runs: list[Run] = []
            for _ in range(args.runs):
                if time.monotonic() + args.seconds > deadline:
                    break
                runs.append(one_run(Path(tmp), threads, args.seconds))
            report[str(threads)] = [asdict(r) for r in runs]
            lost = [r for r in runs if r.logged != r.acknowledged]
            failed |= bool(lost)
            if args.json:
                continue
            if not runs:
                print(f"{threads:>3} threads: no run fitted in the time budget")
                continue
            rates = [r.events_per_s for r in runs]
            print(
                f"{threads:>3} threads, 1 event per append: "
                f"{statistics.median(rates):>8,.0f} events/s median of {len(rates)} runs "
                f"(min {min(rates):,.0f}, max {max(rates):,.0f}); "
                f"{statistics.median(r.events_per_commit for r in runs):.1f} events per commit, "
                f"{statistics.median(r.cpu_us_per_event for r in runs):,.0f} µs CPU per event",
                flush=True,
            )
            verdict = "FAIL" if lost else "OK  "
            print(f"{verdict} {threads} threads: every acknowledged append is in the log")
    if args.json:
        print(json.dumps({"threads": report, "ok": not failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

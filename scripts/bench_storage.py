"""Append throughput of the event log, as the service uses it.

Each game thread appends one event per call and waits for it to be durable,
so throughput comes from group commit alone: the more threads wait, the more
events share one commit (one WAL fsync). Prints events/s, the median of
several timed runs per thread count, and the mean events per commit.

    .venv/bin/python scripts/bench_storage.py            # 1 and 8 threads
    .venv/bin/python scripts/bench_storage.py --threads 1 8 32 --runs 3

Bounded in time: every run stops after --seconds and the whole benchmark
stops starting runs after --budget seconds (default 55).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.storage import EventLog, LogEvent


def one_run(directory: Path, threads: int, seconds: float) -> tuple[float, float, float]:
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
        commits = (
            log.query("SELECT count(DISTINCT logged_at) AS n FROM events WHERE kind = 'action'")
            .column("n")[0]
            .as_py()
        )
    path.unlink(missing_ok=True)
    events = sum(counts)
    return events / elapsed, events / max(commits, 1), cpu / max(events, 1) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.5, help="length of one run")
    parser.add_argument("--budget", type=float, default=55.0, help="stop starting runs after")
    parser.add_argument("--dir", type=Path, default=None, help="where to put the files")
    args = parser.parse_args()

    deadline = time.monotonic() + args.budget
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for threads in args.threads:
            rates: list[float] = []
            per_commit: list[float] = []
            cpu_us: list[float] = []
            for _ in range(args.runs):
                if time.monotonic() + args.seconds > deadline:
                    break
                rate, group, cpu = one_run(Path(tmp), threads, args.seconds)
                rates.append(rate)
                per_commit.append(group)
                cpu_us.append(cpu)
            if not rates:
                print(f"{threads:>3} threads: no run fitted in the time budget")
                continue
            print(
                f"{threads:>3} threads, 1 event per append: "
                f"{statistics.median(rates):>8,.0f} events/s median of {len(rates)} runs "
                f"(min {min(rates):,.0f}, max {max(rates):,.0f}); "
                f"{statistics.median(per_commit):.1f} events per commit, "
                f"{statistics.median(cpu_us):,.0f} µs CPU per event",
                flush=True,
            )


if __name__ == "__main__":
    main()

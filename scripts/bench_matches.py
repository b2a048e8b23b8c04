"""Whole-match benchmark: bot matches to their facts, by the kernel and by the Python engine.

For greedy-vs-random matches of 2 and 4 seats (seat s plays greedy when s is
even, random when odd; American rules, no round limit), this prints whole
matches per second on one core, as the median (min..max) of several runs:

* `c rows`: the kernel alone (`simulated.kernel_matches_raw`: the bots' seeds,
  deals, play, facts, returned as int32 rows);
* `c facts`: the same matches read into `MatchFacts` (`kernel_matches`:
  the kernel, every round and decision a frozen
  dataclass), what a Python caller gets;
* `engine`: the reference (`engine_matches`: `Match`, the bots' choices
  from `SeatView`s, a `RoundRecorder` a round);

and the speed-ups over the engine. Figures are per CPU second of this
process (time descheduled on a busy machine does not count): compare ratios
within one run. Every run also checks that the engine's matches are the
kernel's (`same`; exit 1 if not).

    .venv/bin/python scripts/bench_matches.py           # full run (~1 min)
    .venv/bin/python scripts/bench_matches.py --quick   # smoke run (seconds)
    .venv/bin/python scripts/bench_matches.py --quick --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sniff.playout import KERNEL_AVAILABLE
from sniff.simulated import MatchSettings, engine_matches, kernel_matches, kernel_matches_raw

SEAT_COUNTS = (2, 4)
BOTS = ("greedy", "random")
T = TypeVar("T")


def cpu_rate(count: int, work: Callable[..., T], *args: Any) -> tuple[float, T]:
    """`count` items over the CPU seconds `work(*args)` took, and what it returned."""
    start = time.process_time()
    out = work(*args)
    return count / max(time.process_time() - start, 1e-9), out


def measure(runs: int, c_matches: int, py_matches: int) -> dict[str, Any]:
    doc: dict[str, Any] = {"runs": runs, "c_matches": c_matches, "py_matches": py_matches}
    figures: dict[str, dict[str, Any]] = {}
    for seats in SEAT_COUNTS:
        settings = MatchSettings(seats, BOTS)
        figs: dict[str, Any] = {"c_rows": [], "c_facts": [], "engine": [], "same": True}
        for run in range(runs):
            base = 10_000_000 * (run + 1) + 1_000 * seats
            seeds = list(range(base, base + c_matches))
            if KERNEL_AVAILABLE:
                rate, _ = cpu_rate(c_matches, kernel_matches_raw, settings, seeds)
                figs["c_rows"].append(rate)
                rate, _ = cpu_rate(c_matches, kernel_matches, settings, seeds)
                figs["c_facts"].append(rate)
            few = seeds[:py_matches]
            rate, played = cpu_rate(py_matches, engine_matches, settings, few)
            figs["engine"].append(rate)
            if KERNEL_AVAILABLE and played != kernel_matches(settings, few):
                figs["same"] = False
        figures[str(seats)] = figs
    doc["matches_per_s"] = figures
    return doc


def summary(values: Sequence[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}..{max(values):,.0f})"


def report(doc: dict[str, Any]) -> int:
    status = 0
    header = (
        f"{'seats':>5}  {'c rows':>26}  {'c facts':>26}  {'engine':>20}  "
        f"{'rows/engine':>11}  {'facts/engine':>12}  {'same':>4}"
    )
    print("whole greedy-vs-random matches per CPU second, median (min..max)")
    print(header)
    print("-" * len(header))
    for seats, figs in doc["matches_per_s"].items():
        engine = statistics.median(figs["engine"])
        rows = statistics.median(figs["c_rows"]) if figs["c_rows"] else 0.0
        facts = statistics.median(figs["c_facts"]) if figs["c_facts"] else 0.0
        print(
            f"{seats:>5}  {summary(figs['c_rows']):>26}  {summary(figs['c_facts']):>26}  "
            f"{summary(figs['engine']):>20}  {rows / engine:>10.0f}x  {facts / engine:>11.0f}x  "
            f"{'yes' if figs['same'] else 'NO':>4}"
        )
        if not figs["same"]:
            status = 1
    if not KERNEL_AVAILABLE:
        print("\nthe kernel is not built: only the engine is measured")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=5, help="runs (median reported)")
    p.add_argument("--c-matches", type=int, default=5000, help="kernel matches per run")
    p.add_argument("--py-matches", type=int, default=200, help="engine matches per run")
    p.add_argument("--quick", action="store_true", help="a fast smoke run")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = p.parse_args(argv)
    if args.quick:
        doc = measure(runs=2, c_matches=200, py_matches=10)
    else:
        doc = measure(args.runs, args.c_matches, args.py_matches)
    if args.json:
        print(json.dumps(doc))
        same = all(f["same"] for f in doc["matches_per_s"].values())
        return 0 if same else 1
    return report(doc)


if __name__ == "__main__":
    sys.exit(main())

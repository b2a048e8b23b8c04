"""Playout benchmark: the compiled kernel against the Python reference and the engine itself.

Start states are sampled from seeded greedy-bot matches (a third at the start
of a round, the rest at random points of it), for 2, 3 and 4 seats. For each
seat count this prints, as the median (min..max) of several runs:

* actions per second on one core, random and greedy policies, for
  - `c`: the kernel (`playout.rollouts(..., backend="c")`, one call),
  - `python`: the reference playout (`backend="python"`, the fallback),
  - `engine`: the engine proper playing the same rounds out with its own bots
    (`Match.apply`, each choice from a `SeatView`, as `play_match` does);
  and the speed-ups c/python and c/engine;
* rollouts per second (greedy playouts of a whole round, from a deal to
  the round's end) with the kernel and the reference, in one process and in
  two processes at once (one per core on this machine; each process plays
  the same number).

Actions per second use this process's CPU time (time descheduled on a busy
machine does not count); rollouts per second are shown on CPU time and on
wall time in one process, and with two processes on the wall time of the
slower one. The machine is shared: compare ratios within one run.

    .venv/bin/python scripts/bench_kernel.py           # full run (~1-2 min)
    .venv/bin/python scripts/bench_kernel.py --quick   # smoke run (seconds)
    .venv/bin/python scripts/bench_kernel.py --quick --json  # figures for a program

Every run also checks that the kernel and the reference play the same number
of actions from the same states and seeds (`same actions`; exit 1 if not).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from sniff import GreedyBot, Match, Phase, RandomBot, make_bot, view
from sniff.playout import KERNEL_AVAILABLE, PlayoutState, rollouts

SEAT_COUNTS = (2, 3, 4)
POLICIES = ("random", "greedy")
TARGET_ACTIONS_PER_S = 2_000_000
TARGET_SPEEDUP = 20


def sample_matches(seats: int, count: int, seed: int = 0, mid_round: bool = True) -> list[Match]:
    """Round states from greedy-bot matches: a third at a round's start and the rest
    mid-round, or all at a round's start."""
    rng = random.Random(seed)
    out: list[Match] = []
    for i in range(count):
        match = Match(seats, seed=seed * 100_000 + i, round_limit=4)
        bots = [make_bot("greedy", rng.randrange(1 << 30)) for _ in range(seats)]
        for _ in range(rng.randrange(4)):  # a later round, so that scores are not all zero
            while match.phase is Phase.PLAYING:
                match.apply(bots[match.turn].choose(view(match, match.turn)))
            if match.phase is Phase.OVER:
                match = Match(seats, seed=seed * 100_000 + i + 50_000)
            else:
                match.deal()
        steps = 0 if i % 3 == 0 or not mid_round else rng.randrange(20)
        for _ in range(steps):
            if match.phase is not Phase.PLAYING:
                break
            match.apply(bots[match.turn].choose(view(match, match.turn)))
        if match.phase is Phase.PLAYING:
            out.append(match)
    return out


def cpu_timed(fn: Callable[..., int], *args: object) -> tuple[float, int]:
    """(CPU seconds, actions) of one call."""
    start = time.process_time()
    actions = fn(*args)
    return time.process_time() - start, actions


def playouts_backend(states: Sequence[PlayoutState], policy: str, backend: str, reps: int) -> int:
    """Play every state `reps` times (seeds 0..reps-1), one rollouts call per state, as an
    analysis does; return the actions played."""
    return sum(rollouts(s, policy, n=reps, backend=backend).actions for s in states)


def playouts_engine(matches: Sequence[Match], policy: str, reps: int) -> int:
    """The same rounds played out by the engine proper: `Match.apply`, bots on `SeatView`s."""
    actions = 0
    for match in matches:
        for r in range(reps):
            m = match.copy(keep_history=False)
            bots: list[RandomBot] | list[GreedyBot] = (
                [RandomBot(r * 10 + s) for s in range(m.seats)]
                if policy == "random"
                else [GreedyBot(r * 10 + s) for s in range(m.seats)]
            )
            start = m.move_count
            while m.phase is Phase.PLAYING:
                m.apply(bots[m.turn].choose(view(m, m.turn)))
            actions += m.move_count - start
    return actions


def summary(values: Sequence[float], digits: int = 0) -> str:
    med = statistics.median(values)
    return f"{med:,.{digits}f} ({min(values):,.{digits}f}..{max(values):,.{digits}f})"


def _rollout_worker(args: tuple[int, int, str, int]) -> tuple[float, float]:
    """One process's rollouts: build its states (each at a round's start, so that a playout
    is a whole round), then time its greedy playouts (wall)."""
    seats, count, backend, reps = args
    matches = sample_matches(seats, count, seed=seats, mid_round=False)
    states = [PlayoutState.of_match(m) for m in matches]
    start, cpu = time.perf_counter(), time.process_time()
    playouts_backend(states, "greedy", backend, reps)
    return time.perf_counter() - start, time.process_time() - cpu


def rollouts_per_s(
    seats: int, count: int, backend: str, reps: int, procs: int
) -> tuple[float, float]:
    """Greedy playouts of a whole round per second, `procs` processes at once: (on wall
    time, on CPU time)."""
    per_proc = count * reps
    job = (seats, count, backend, reps)
    if procs == 1:
        wall, cpu = _rollout_worker(job)
        return per_proc / wall, per_proc / cpu
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    with ctx.Pool(procs) as pool:
        times = pool.map(_rollout_worker, [job] * procs)
    total = per_proc * procs
    return total / max(w for w, _ in times), total / max(c for _, c in times)


def measure(
    states_per_seat: int, runs: int, c_reps: int, py_reps: int, roll_reps: int, only: str = ""
) -> dict[str, Any]:
    """Every run's figures, per seat count and policy (actions) or backend (rollouts); each
    run plays the same states with the same seeds. Also checks, per seat count and policy,
    that the kernel and the reference play the same number of actions from the same seeds
    (`same_actions`), the differential test's promise in small."""
    backends = ["c", "python"] if KERNEL_AVAILABLE else ["python"]
    doc: dict[str, Any] = {
        "kernel_built": KERNEL_AVAILABLE,
        "states_per_seat": states_per_seat,
        "runs": runs,
        "targets": {"actions_per_s": TARGET_ACTIONS_PER_S, "speedup": TARGET_SPEEDUP},
        "actions": {},
        "rollouts": {},
    }
    for seats in SEAT_COUNTS if only != "rollouts" else ():
        matches = sample_matches(seats, states_per_seat, seed=seats)
        states = [PlayoutState.of_match(m) for m in matches]
        for policy in POLICIES:
            figs: dict[str, Any] = {f"{b}_actions_per_s": [] for b in (*backends, "engine")}
            for _ in range(runs):
                for backend in backends:
                    reps = c_reps if backend == "c" else py_reps
                    sec, acts = cpu_timed(playouts_backend, states, policy, backend, reps)
                    figs[f"{backend}_actions_per_s"].append(acts / sec)
                sec, acts = cpu_timed(playouts_engine, matches, policy, py_reps)
                figs["engine_actions_per_s"].append(acts / sec)
            played = {b: playouts_backend(states, policy, b, py_reps) for b in backends}
            figs["same_actions"] = len(set(played.values())) == 1
            doc["actions"][f"{seats}/{policy}"] = figs
    for seats in SEAT_COUNTS if only != "actions" else ():
        for backend in backends:
            reps = roll_reps if backend == "c" else max(1, roll_reps // 200)
            one = [rollouts_per_s(seats, states_per_seat, backend, reps, 1) for _ in range(runs)]
            two = [rollouts_per_s(seats, states_per_seat, backend, reps, 2) for _ in range(runs)]
            doc["rollouts"][f"{seats}/{backend}"] = {
                "one_process_cpu": [c for _, c in one],
                "one_process_wall": [w for w, _ in one],
                "two_processes_wall": [w for w, _ in two],
            }
    return doc


def report(doc: dict[str, Any], c_reps: int, py_reps: int) -> int:
    """Print the figures as tables; exit status 1 if the backends disagreed."""
    print(
        f"playout benchmark: {doc['states_per_seat']} start states per seat count, "
        f"{doc['runs']} runs; kernel x{c_reps} and Python x{py_reps} playouts per state per run"
    )
    print(
        f"python {sys.version.split()[0]}; kernel {'built' if doc['kernel_built'] else 'NOT built'}"
        "; figures are median (min..max) over runs, actions/s on CPU time\n"
    )
    status = 0
    least_c: list[float] = []
    speedups: list[float] = []
    if doc["actions"]:
        header = (
            f"{'seats':>5}  {'policy':>6}  {'c actions/s':>26}  {'python actions/s':>22}  "
            f"{'engine actions/s':>22}  {'c/python':>8}  {'c/engine':>8}  same actions"
        )
        print(header)
        print("-" * len(header))
    for key, figs in doc["actions"].items():
        seats, policy = key.split("/")
        py = statistics.median(figs["python_actions_per_s"])
        eng = statistics.median(figs["engine_actions_per_s"])
        c_values = figs.get("c_actions_per_s", [])
        c = statistics.median(c_values) if c_values else math.nan
        if c_values:
            least_c.append(c)
            speedups.append(c / eng)
        same = "OK" if figs["same_actions"] else "FAIL"
        status |= 0 if figs["same_actions"] else 1
        print(
            f"{seats:>5}  {policy:>6}  {summary(c_values) if c_values else 'n/a':>26}  "
            f"{summary(figs['python_actions_per_s']):>22}  "
            f"{summary(figs['engine_actions_per_s']):>22}  {c / py:>8.1f}  {c / eng:>8.1f}  "
            f"{same}"
        )
    if doc["rollouts"]:
        print(
            "\ngreedy rollouts of a whole round, from its deal to its end (2 processes = "
            "both cores):"
        )
        header = (
            f"{'seats':>5}  {'backend':>7}  {'rollouts/s 1 process cpu':>28}  "
            f"{'rollouts/s 1 process wall':>28}  {'rollouts/s 2 processes wall':>28}"
        )
        print(header)
        print("-" * len(header))
    for key, figs in doc["rollouts"].items():
        seats, backend = key.split("/")
        print(
            f"{seats:>5}  {backend:>7}  {summary(figs['one_process_cpu']):>28}  "
            f"{summary(figs['one_process_wall']):>28}  "
            f"{summary(figs['two_processes_wall']):>28}"
        )
    if least_c:
        least, low = min(least_c), min(speedups)
        print(
            f"\nkernel actions/s per core, least median: {least:,.0f} "
            f"(aim >= {TARGET_ACTIONS_PER_S:,})"
        )
        print(
            f"kernel speed-up over the engine per action, least median: {low:.0f}x "
            f"(aim >= {TARGET_SPEEDUP}x)"
        )
    elif doc["actions"]:
        print("\nthe kernel is not built: only the Python figures are measured")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--states", type=int, default=60, help="start states per seat count")
    p.add_argument("--runs", type=int, default=5, help="runs (median reported)")
    p.add_argument("--c-reps", type=int, default=500, help="kernel playouts per state per run")
    p.add_argument("--py-reps", type=int, default=3, help="Python playouts per state per run")
    p.add_argument("--rollout-reps", type=int, default=2000, help="kernel rollouts per state")
    p.add_argument("--only", choices=("actions", "rollouts"), default="", help="one part")
    p.add_argument("--quick", action="store_true", help="a fast smoke run")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = p.parse_args(argv)
    if args.quick:
        sizes = {"states_per_seat": 6, "runs": 2, "c_reps": 20, "py_reps": 1, "roll_reps": 100}
    else:
        sizes = {
            "states_per_seat": args.states,
            "runs": args.runs,
            "c_reps": args.c_reps,
            "py_reps": args.py_reps,
            "roll_reps": args.rollout_reps,
        }
    doc = measure(**sizes, only=args.only)
    if args.json:
        print(json.dumps(doc))
        agree = all(f["same_actions"] for f in doc["actions"].values())
        return 0 if agree else 1
    return report(doc, sizes["c_reps"], sizes["py_reps"])


if __name__ == "__main__":
    sys.exit(main())

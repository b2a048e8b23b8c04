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
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from service.engine import GreedyBot, Match, Phase, RandomBot, make_bot, view
from service.engine.playout import KERNEL_AVAILABLE, PlayoutState, rollouts

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


def bench(
    states_per_seat: int, runs: int, c_reps: int, py_reps: int, roll_reps: int, only: str = ""
) -> int:
    backends = ["c", "python"] if KERNEL_AVAILABLE else ["python"]
    print(
        f"playout benchmark: {states_per_seat} start states per seat count, {runs} runs; "
        f"kernel x{c_reps} and Python x{py_reps} playouts per state per run"
    )
    print(
        f"python {sys.version.split()[0]}; kernel {'built' if KERNEL_AVAILABLE else 'NOT built'}; "
        "figures are median (min..max) over runs, actions/s on CPU time\n"
    )
    header = (
        f"{'seats':>5}  {'policy':>6}  {'c actions/s':>26}  {'python actions/s':>22}  "
        f"{'engine actions/s':>22}  {'c/python':>8}  {'c/engine':>8}"
    )
    print(header)
    print("-" * len(header))
    worst_c: list[float] = []
    speedups: list[float] = []
    for seats in SEAT_COUNTS if only != "rollouts" else ():
        matches = sample_matches(seats, states_per_seat, seed=seats)
        states = [PlayoutState.of_match(m) for m in matches]
        for policy in POLICIES:
            figs: dict[str, list[float]] = {"c": [], "python": [], "engine": []}
            for _ in range(runs):
                for backend in backends:
                    reps = c_reps if backend == "c" else py_reps
                    sec, acts = cpu_timed(playouts_backend, states, policy, backend, reps)
                    figs[backend].append(acts / sec)
                sec, acts = cpu_timed(playouts_engine, matches, policy, py_reps)
                figs["engine"].append(acts / sec)
            c = statistics.median(figs["c"]) if figs["c"] else float("nan")
            py = statistics.median(figs["python"])
            eng = statistics.median(figs["engine"])
            if figs["c"]:
                worst_c.append(c)
                speedups.append(c / eng)
            print(
                f"{seats:>5}  {policy:>6}  {summary(figs['c']) if figs['c'] else 'n/a':>26}  "
                f"{summary(figs['python']):>22}  {summary(figs['engine']):>22}  "
                f"{c / py:>8.1f}  {c / eng:>8.1f}",
                flush=True,
            )
    print()
    header = (
        f"{'seats':>5}  {'backend':>7}  {'rollouts/s 1 process cpu':>28}  "
        f"{'rollouts/s 1 process wall':>28}  {'rollouts/s 2 processes wall':>28}"
    )
    print(
        "greedy rollouts of a whole round, from its deal to its end (wall time; "
        "2 processes = both cores):"
    )
    print(header)
    print("-" * len(header))
    for seats in SEAT_COUNTS if only != "actions" else ():
        for backend in backends:
            reps = roll_reps if backend == "c" else max(1, roll_reps // 200)
            one = [rollouts_per_s(seats, states_per_seat, backend, reps, 1) for _ in range(runs)]
            two = [rollouts_per_s(seats, states_per_seat, backend, reps, 2) for _ in range(runs)]
            print(
                f"{seats:>5}  {backend:>7}  {summary([c for _, c in one]):>28}  "
                f"{summary([w for w, _ in one]):>28}  {summary([w for w, _ in two]):>28}",
                flush=True,
            )
    print()
    if worst_c:
        least = min(worst_c)
        print(
            f"target: >= {TARGET_ACTIONS_PER_S:,} kernel actions/s per core -> least median "
            f"{least:,.0f} ({'met' if least >= TARGET_ACTIONS_PER_S else 'NOT met'})"
        )
        low = min(speedups)
        print(
            f"target: kernel >= {TARGET_SPEEDUP}x the engine per action -> least median "
            f"{low:.0f}x ({'met' if low >= TARGET_SPEEDUP else 'NOT met'})"
        )
    elif only != "rollouts":
        print("target: the kernel is not built: only the Python figures are measured")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--states", type=int, default=60, help="start states per seat count")
    p.add_argument("--runs", type=int, default=5, help="runs (median reported)")
    p.add_argument("--c-reps", type=int, default=500, help="kernel playouts per state per run")
    p.add_argument("--py-reps", type=int, default=3, help="Python playouts per state per run")
    p.add_argument("--rollout-reps", type=int, default=2000, help="kernel rollouts per state")
    p.add_argument("--only", choices=("actions", "rollouts"), default="", help="one part")
    p.add_argument("--quick", action="store_true", help="a fast smoke run")
    args = p.parse_args(argv)
    if args.quick:
        return bench(6, runs=2, c_reps=20, py_reps=1, roll_reps=100, only=args.only)
    return bench(
        args.states, args.runs, args.c_reps, args.py_reps, args.rollout_reps, only=args.only
    )


if __name__ == "__main__":
    sys.exit(main())

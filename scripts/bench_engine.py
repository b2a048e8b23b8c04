"""Engine benchmark: random-bot matches per second and the cost of one action.

For 2, 3 and 4 seats this prints, as the median (min..max) of several runs:

* complete random-bot matches per second (to the default target), on one
  core (this process is single-threaded);
* average rounds and actions per match;
* microseconds per action all in (bot choice, checks, apply, deals);
* the median microseconds of one `legal_moves()` and of one `apply()` call,
  timed on states sampled from real matches: each sampled state's call is
  repeated in a tight loop timed with `perf_counter_ns`, minus the cost of
  the same empty loop, and the median is taken over the sampled states.

`--variant` picks the Sniff variant (docs/rules.md §10; `all` runs each in turn).
Variant matches get a round limit (`--round-limit`, default 40 for the
variants, none for American) because weak play in the stubby variants may
never reach the target.

`--against DIR` compares this tree with another checkout of the project (a
`git worktree` of an older commit, say) on one machine in one run: two
processes, each playing with its own tree's engine and bots through that
tree's own `play()` of this script, take turns on the same seeded matches a
few at a time, so that a change in the machine's load falls on both alike.
It prints the medians of matches per CPU second and their ratio, and the
median of the ratios paired run by run.

`--profile` runs cProfile over 2-seat matches and prints the top functions
by own time. Every run plays the same seeded matches, so the spread between
runs is the machine's noise, not the workload's.

    .venv/bin/python scripts/bench_engine.py            # full run (~1 min)
    .venv/bin/python scripts/bench_engine.py --quick    # smoke run (seconds)
    .venv/bin/python scripts/bench_engine.py --profile  # where the time goes
    .venv/bin/python scripts/bench_engine.py --quick --json  # figures for a program
    git worktree add /tmp/before d00dd35                   # the commit before the views
    .venv/bin/python scripts/bench_engine.py --against /tmp/before
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypedDict

from sniff import VARIANTS, Match, Move, Phase, RandomBot, play_match, view
from sniff.seeds import bot_seed

SEAT_COUNTS = (2, 3, 4)
VARIANT_LIMIT = 40
"""The default round limit of variant matches (American: none, as before variants existed)."""


@dataclass(frozen=True)
class Rules:
    variant: str = "american"
    round_limit: int | None = None

    def match(self, seats: int, seed: int) -> Match:
        return Match(seats, seed=seed, variant=self.variant, round_limit=self.round_limit)


RULES = Rules()
"""The rules every match of this run is played under (set once by `main`)."""
TARGET_MATCHES_PER_S_2 = 300.0
TARGET_US_PER_ACTION = 10.0


@dataclass
class RunFigures:
    matches_per_s: float
    matches_per_cpu_s: float
    rounds: float
    actions: float
    us_per_action: float
    us_per_action_cpu: float
    legal_us: float
    apply_us: float
    legal_mean_us: float
    apply_mean_us: float


def bots_for(seats: int, seed: int) -> list[RandomBot]:
    return [RandomBot(bot_seed(seed, s)) for s in range(seats)]


def play(seats: int, count: int, first_seed: int = 0) -> tuple[float, float, int, int]:
    """Play `count` seeded matches; return (wall seconds, CPU seconds, rounds, actions)."""
    rounds = actions = 0
    cpu = time.process_time()
    start = time.perf_counter()
    for i in range(count):
        seed = first_seed + i
        match = play_match(RULES.match(seats, seed), bots_for(seats, seed))
        rounds += len(match.history)
        actions += match.move_count
    return time.perf_counter() - start, time.process_time() - cpu, rounds, actions


def sample_states(
    seats: int, matches: int, per_match: int, seed: int = 10_000
) -> list[tuple[Match, Move]]:
    """(state before, move chosen there) pairs drawn uniformly from real random-bot matches."""
    rng = random.Random(seed)
    samples: list[tuple[Match, Move]] = []
    for i in range(matches):
        match = RULES.match(seats, seed + i)
        bots = bots_for(seats, seed + i)
        states: list[tuple[Match, Move]] = []
        while match.phase is not Phase.OVER:
            if match.phase is Phase.AWAITING_DEAL:
                match.deal()
                continue
            move = bots[match.turn].choose(view(match, match.turn))
            states.append((match.copy(keep_history=False), move))
            match.apply(move)
        samples.extend(rng.sample(states, min(per_match, len(states))))
    return samples


def _loop_overhead_ns(items: Sequence[object], repeat: int = 7) -> int:
    """The least time of an empty loop over `items` (what a timed loop costs by itself)."""
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        for _m in items:
            pass
        dt = time.perf_counter_ns() - t0
        best = dt if best is None else min(best, dt)
    assert best is not None
    return best


def time_legal_moves(samples: Sequence[tuple[Match, Move]], reps: int) -> list[float]:
    """Microseconds per `legal_moves()` call, one figure per sampled state."""
    out = []
    idle = _loop_overhead_ns(range(reps))
    for match, _ in samples:
        call: Callable[[], object] = match.legal_moves
        best = None
        for _ in range(3):  # least of three: the noise only ever adds time
            t0 = time.perf_counter_ns()
            for _i in range(reps):
                call()
            dt = time.perf_counter_ns() - t0
            best = dt if best is None else min(best, dt)
        assert best is not None
        out.append(max(best - idle, 0) / reps / 1e3)
    return out


def time_apply(samples: Sequence[tuple[Match, Move]], reps: int) -> list[float]:
    """Microseconds per `apply(move)` call, one figure per sampled state.

    `apply` changes its match, so each timed call gets its own fresh copy,
    made before the clock starts.
    """
    out = []
    for match, move in samples:
        best = None
        for _ in range(3):
            copies = [match.copy(keep_history=False) for _ in range(reps)]
            idle = _loop_overhead_ns(copies, repeat=3)
            t0 = time.perf_counter_ns()
            for m in copies:
                m.apply(move)
            dt = time.perf_counter_ns() - t0 - idle
            best = dt if best is None else min(best, dt)
        assert best is not None
        out.append(max(best, 0) / reps / 1e3)
    return out


def one_run(
    seats: int,
    matches: int,
    samples: Sequence[tuple[Match, Move]],
    reps: int,
    apply_reps: int,
) -> RunFigures:
    gc.collect()
    seconds, cpu, rounds, actions = play(seats, matches)
    gc.disable()  # as timeit does: a collection inside a tight loop is not the call's cost
    try:
        legal = time_legal_moves(samples, reps)
        applied = time_apply(samples, apply_reps)
    finally:
        gc.enable()
    return RunFigures(
        matches_per_s=matches / seconds,
        matches_per_cpu_s=matches / cpu,
        rounds=rounds / matches,
        actions=actions / matches,
        us_per_action=seconds / actions * 1e6,
        us_per_action_cpu=cpu / actions * 1e6,
        legal_us=statistics.median(legal),
        apply_us=statistics.median(applied),
        legal_mean_us=statistics.fmean(legal),
        apply_mean_us=statistics.fmean(applied),
    )


def summary(values: Sequence[float], digits: int = 2) -> str:
    med = statistics.median(values)
    return f"{med:.{digits}f} ({min(values):.{digits}f}..{max(values):.{digits}f})"


def measure(
    matches: int,
    runs: int,
    sample_matches: int,
    per_match: int,
    reps: int,
    apply_reps: int,
    seat_counts: Sequence[int] = SEAT_COUNTS,
) -> dict[int, list[RunFigures]]:
    """Every run's figures, per seat count; each run plays the same seeded matches."""
    results: dict[int, list[RunFigures]] = {}
    for seats in seat_counts:
        samples = sample_states(seats, sample_matches, per_match)
        play(seats, max(1, matches // 10), first_seed=1_000_000)  # warm up
        results[seats] = [one_run(seats, matches, samples, reps, apply_reps) for _ in range(runs)]
    return results


def as_json(results: dict[int, list[RunFigures]], matches: int) -> dict[str, object]:
    """The figures for a program: every run's value of every figure, per seat count."""
    return {
        "matches_per_run": matches,
        "targets": {
            "matches_per_s_2_seats": TARGET_MATCHES_PER_S_2,
            "us_per_action": TARGET_US_PER_ACTION,
        },
        "seats": {
            str(seats): {
                name: [getattr(f, name) for f in figs] for name in RunFigures.__annotations__
            }
            for seats, figs in results.items()
        },
    }


def bench(
    matches: int, runs: int, sample_matches: int, per_match: int, reps: int, apply_reps: int
) -> int:
    print(
        f"engine benchmark: {runs} runs x {matches} random-bot matches per seat count, "
        f"one thread; micro-timings on {sample_matches}x{per_match} sampled states, "
        f"{reps} legal_moves() / {apply_reps} apply() calls each"
    )
    limit = "none" if RULES.round_limit is None else RULES.round_limit
    print(f"variant {RULES.variant}, round limit {limit}")
    print(
        f"python {sys.version.split()[0]}; figures are median (min..max) over runs; "
        "'cpu' figures use this process's CPU time, so time spent descheduled on a busy "
        "machine does not count\n"
    )
    header = (
        f"{'seats':>5}  {'matches/s wall':>22}  {'matches/s cpu':>22}  {'rounds':>6}  "
        f"{'actions':>7}  {'us/action all in wall':>21}  {'us/action all in cpu':>20}"
    )
    print(header)
    print("-" * len(header))
    results: dict[int, list[RunFigures]] = {}
    for seats in SEAT_COUNTS:
        figs = measure(matches, runs, sample_matches, per_match, reps, apply_reps, (seats,))[seats]
        results[seats] = figs
        print(
            f"{seats:>5}  {summary([f.matches_per_s for f in figs], 1):>22}  "
            f"{summary([f.matches_per_cpu_s for f in figs], 1):>22}  "
            f"{figs[0].rounds:>6.1f}  {figs[0].actions:>7.1f}  "
            f"{summary([f.us_per_action for f in figs]):>21}  "
            f"{summary([f.us_per_action_cpu for f in figs]):>20}",
            flush=True,
        )
    print()
    header = (
        f"{'seats':>5}  {'legal_moves() us median':>24}  {'legal_moves() us mean':>22}  "
        f"{'apply() us median':>20}  {'apply() us mean':>20}"
    )
    print("one call, on states sampled from real matches (loop overhead subtracted):")
    print(header)
    print("-" * len(header))
    for seats, figs in results.items():
        print(
            f"{seats:>5}  {summary([f.legal_us for f in figs]):>24}  "
            f"{summary([f.legal_mean_us for f in figs]):>22}  "
            f"{summary([f.apply_us for f in figs]):>20}  "
            f"{summary([f.apply_mean_us for f in figs]):>20}"
        )
    two = statistics.median(f.matches_per_s for f in results[2])
    two_cpu = statistics.median(f.matches_per_cpu_s for f in results[2])
    per_action = statistics.median(f.us_per_action for f in results[2])
    per_action_cpu = statistics.median(f.us_per_action_cpu for f in results[2])
    print()
    print(
        f"target: >= {TARGET_MATCHES_PER_S_2:.0f} matches/s with 2 seats -> {two:.1f} wall, "
        f"{two_cpu:.1f} cpu ({'met' if two >= TARGET_MATCHES_PER_S_2 else 'NOT met'} on wall "
        "time)"
    )
    print(
        f"target: ~{TARGET_US_PER_ACTION:.0f} us per action -> {per_action:.2f} us wall, "
        f"{per_action_cpu:.2f} us cpu with 2 seats "
        f"({'met' if per_action <= TARGET_US_PER_ACTION else 'NOT met'} on wall time)"
    )
    return 0


# -- A/B against another tree -------------------------------------------------------------

_AB_CHILD = r"""
import gc, importlib.util, json, sys
tree = sys.argv[1]
sys.path.insert(0, tree)
spec = importlib.util.spec_from_file_location("bench_engine_ab", tree + "/scripts/bench_engine.py")
bench = importlib.util.module_from_spec(spec)
sys.modules["bench_engine_ab"] = bench
spec.loader.exec_module(bench)
for seats in (2, 3, 4):
    bench.play(seats, 20, first_seed=1_000_000)
print("ready", flush=True)
for line in sys.stdin:
    seats, count, first = map(int, line.split())
    gc.collect()
    wall, cpu, rounds, actions = bench.play(seats, count, first_seed=first)
    print(json.dumps([wall, cpu, rounds, actions]), flush=True)
"""
"""A player of one tree: it loads that tree's own copy of this script (so its own engine,
bots and `play`) and plays the chunks of seeded matches it is sent on stdin."""


@dataclass
class SideFigures:
    """One tree's totals over every run of one seat count."""

    runs: list[tuple[float, float]]
    """(wall seconds, CPU seconds) per run."""
    rounds: int
    actions: int


def against(other: str, matches: int, runs: int, chunk: int) -> dict[int, dict[str, SideFigures]]:
    """Play `runs` runs of `matches` seeded matches per seat count in this tree and in `other`,
    alternating every `chunk` matches (who starts alternates too)."""
    here = str(Path(__file__).resolve().parent.parent)
    trees = {"this": here, "other": str(Path(other).resolve())}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-c", _AB_CHILD, tree],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=tree,
            env=env,
        )
        for name, tree in trees.items()
    }
    try:
        for name, proc in procs.items():
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise SystemExit(f"the {name} tree ({trees[name]}) could not play")
        out: dict[int, dict[str, SideFigures]] = {}
        for seats in SEAT_COUNTS:
            sides = {name: SideFigures([], 0, 0) for name in procs}
            for run in range(runs):
                order = ("other", "this") if (run + seats) % 2 else ("this", "other")
                totals = {name: [0.0, 0.0] for name in procs}
                for first in range(0, matches, chunk):
                    for name in order:
                        proc = procs[name]
                        assert proc.stdin is not None
                        assert proc.stdout is not None
                        proc.stdin.write(f"{seats} {min(chunk, matches - first)} {first}\n")
                        proc.stdin.flush()
                        wall, cpu, rounds, actions = json.loads(proc.stdout.readline())
                        totals[name][0] += wall
                        totals[name][1] += cpu
                        if run == 0:
                            sides[name].rounds += rounds
                            sides[name].actions += actions
                for name in procs:
                    sides[name].runs.append((totals[name][0], totals[name][1]))
            out[seats] = sides
        return out
    finally:
        for proc in procs.values():
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait()


def report_against(other: str, matches: int, runs: int, chunk: int) -> int:
    results = against(other, matches, runs, chunk)
    print(
        f"engine A/B: this tree against {other}; {runs} runs x {matches} random-bot matches "
        f"(seeds 0..{matches - 1}) per seat count, the two taking turns every {chunk} matches; "
        "figures are medians over runs of matches per second (cpu: this process's CPU time)\n"
    )
    header = (
        f"{'seats':>5}  {'actions/match other':>19}  {'this':>6}  {'cpu other':>9}  {'this':>7}  "
        f"{'ratio':>5}  {'paired':>6}  {'wall other':>10}  {'this':>7}  {'ratio':>5}"
    )
    print(header)
    print("-" * len(header))
    for seats, sides in results.items():
        this, that = sides["this"], sides["other"]
        cpu_this = [matches / cpu for _, cpu in this.runs]
        cpu_that = [matches / cpu for _, cpu in that.runs]
        wall_this = statistics.median(matches / wall for wall, _ in this.runs)
        wall_that = statistics.median(matches / wall for wall, _ in that.runs)
        paired = statistics.median(a / b for a, b in zip(cpu_this, cpu_that, strict=True))
        med_this, med_that = statistics.median(cpu_this), statistics.median(cpu_that)
        print(
            f"{seats:>5}  {that.actions / matches:>19.1f}  {this.actions / matches:>6.1f}  "
            f"{med_that:>9.1f}  {med_this:>7.1f}  {med_this / med_that:>5.3f}  {paired:>6.3f}  "
            f"{wall_that:>10.1f}  {wall_this:>7.1f}  {wall_this / wall_that:>5.3f}"
        )
    print(
        "\nratio: this tree's median over the other's; paired: the median of the runs' ratios. "
        "The trees deal their own matches from the same seeds (the deal generator may differ), "
        "hence actions per match."
    )
    return 0


@dataclass
class ProfileRow:
    function: str
    where: str
    share: float
    tottime_s: float
    ncalls: int
    cumtime_s: float


def profile_rows(matches: int, top: int) -> tuple[float, int, int, float, list[ProfileRow]]:
    """cProfile over 2-seat matches: (seconds, rounds, actions, total own time, top rows)."""
    play(2, 10, first_seed=1_000_000)  # warm up imports and caches
    profiler = cProfile.Profile()
    profiler.enable()
    seconds, _, rounds, actions = play(2, matches)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    # total_tt and stats are pstats' undocumented attributes, absent from its stubs.
    total = stats.total_tt  # type: ignore[attr-defined]
    ranked = sorted(
        stats.stats.items(),  # type: ignore[attr-defined]
        key=lambda kv: kv[1][2],
        reverse=True,
    )[:top]
    rows = [
        ProfileRow(
            name, f"{Path(path).name}:{line}" if line else "built-in", tt / total, tt, nc, ct
        )
        for (path, line, name), (_cc, nc, tt, ct, _callers) in ranked
    ]
    return seconds, rounds, actions, total, rows


def profile(matches: int, top: int) -> int:
    seconds, rounds, actions, total, rows = profile_rows(matches, top)
    print(
        f"cProfile over {matches} 2-seat random-bot matches: {actions} actions, {rounds} rounds, "
        f"{seconds:.2f} s under the profiler (it inflates every call; compare shares only)\n"
    )
    print(f"top {top} functions by own time (tottime); total own time {total:.3f} s")
    print(
        f"{'share':>6}  {'tottime s':>9}  {'ncalls':>8}  {'us/call':>7}  {'cumtime s':>9}  function"
    )
    for r in rows:
        per_call = r.tottime_s / r.ncalls * 1e6
        print(
            f"{r.share:6.1%}  {r.tottime_s:9.3f}  {r.ncalls:>8}  {per_call:7.2f}  "
            f"{r.cumtime_s:9.3f}  {r.function}  [{r.where}]"
        )
    return 0


class Sizes(TypedDict):
    """A run's sizes: `measure`'s and `bench`'s arguments."""

    matches: int
    runs: int
    sample_matches: int
    per_match: int
    reps: int
    apply_reps: int


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--matches", type=int, default=200, help="matches per run and seat count")
    p.add_argument("--runs", type=int, default=5, help="runs per seat count (median reported)")
    p.add_argument("--sample-matches", type=int, default=20, help="matches to sample states from")
    p.add_argument("--per-match", type=int, default=25, help="states sampled per match")
    p.add_argument("--reps", type=int, default=200, help="legal_moves() calls per state")
    p.add_argument("--apply-reps", type=int, default=50, help="apply() calls per state")
    p.add_argument("--quick", action="store_true", help="a fast smoke run")
    p.add_argument("--profile", action="store_true", help="cProfile 2-seat matches instead")
    p.add_argument("--profile-matches", type=int, default=200)
    p.add_argument("--top", type=int, default=15, help="functions shown by --profile")
    p.add_argument(
        "--json", action="store_true", help="print the figures as one JSON object, for programs"
    )
    p.add_argument(
        "--against",
        metavar="DIR",
        help="compare with another checkout of the project, taking turns on the same matches",
    )
    p.add_argument("--chunk", type=int, default=25, help="matches per turn with --against")
    p.add_argument("--variant", choices=[*VARIANTS, "all"], default="american")
    p.add_argument(
        "--round-limit",
        type=int,
        default=None,
        help=f"round limit of each match (default: none for american, {VARIANT_LIMIT} otherwise)",
    )
    args = p.parse_args(argv)
    if args.variant == "all":
        status = 0
        for name in VARIANTS:
            rest = [a for a in (argv if argv is not None else sys.argv[1:])]
            i = rest.index("--variant")
            rest[i + 1] = name
            status |= main(rest)
            print()
        return status
    global RULES
    limit = args.round_limit
    if limit is None and args.variant != "american":
        limit = VARIANT_LIMIT
    RULES = Rules(args.variant, limit)
    if args.against is not None:
        if args.variant != "american" or args.round_limit is not None:
            p.error("--against plays American matches without a round limit (each tree's default)")
        if args.quick:
            return report_against(args.against, matches=10, runs=2, chunk=5)
        return report_against(args.against, args.matches, args.runs, args.chunk)
    if args.profile:
        matches = 20 if args.quick else args.profile_matches
        if not args.json:
            return profile(matches, args.top)
        seconds, rounds, actions, total, rows = profile_rows(matches, args.top)
        doc = {
            "matches": matches,
            "rounds": rounds,
            "actions": actions,
            "seconds": seconds,
            "total_own_s": total,
            "top": [asdict(r) for r in rows],
        }
        print(json.dumps(doc))
        return 0
    if args.quick:
        sizes: Sizes = {
            "matches": 20,
            "runs": 2,
            "sample_matches": 3,
            "per_match": 10,
            "reps": 20,
            "apply_reps": 10,
        }
    else:
        sizes = {
            "matches": args.matches,
            "runs": args.runs,
            "sample_matches": args.sample_matches,
            "per_match": args.per_match,
            "reps": args.reps,
            "apply_reps": args.apply_reps,
        }
    if args.json:
        print(json.dumps(as_json(measure(**sizes), sizes["matches"])))
        return 0
    return bench(**sizes)


if __name__ == "__main__":
    sys.exit(main())

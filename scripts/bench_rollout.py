"""Rollout analysis benchmark: equity rollouts, `sniff analyze`, the rollout bot's speed and
strength.

Four parts (each figure a median over runs where it says so; the machine is
shared, so compare ratios within one run):

* **rollouts**: equity rollouts per second per core, end to end as
  `sniff.rollout.equities` makes them (one sampled deal of the
  hidden tiles, its determinization, then one greedy playout to the end of the
  round per legal move), on decisions of seeded greedy-bot matches of 2, 3
  and 4 seats, with the kernel and with the Python reference: playouts per
  second on one core (CPU time), and on both cores (two processes at once,
  wall time of the slower);
* **analyze**: `sniff analyze --records FILE --rollouts R` as a subprocess on
  every core, on matches recorded by `sniff record` (2 seats, greedy against
  random): the wall time, per decision, extrapolated to 1,000 matches when
  fewer are run, and the median standard error of the equity differences
  (`loss_se` of every move that is not the best), read from the Parquet it
  stores through `sniff analysis`;
* **bot**: the `rollout` bot's time per move at its default budget (wall
  time of `choose`, one process), over the decisions (more than one legal
  move) and over all its moves, in matches against greedy;
* **strength**: the rollout bot against greedy, each deal played twice with
  the seats swapped (so that the luck of the deal mostly cancels), one round
  per deal: the rollout side's mean round net result per round (its points
  minus deductions, minus the greedy side's), with a 95% Student t interval
  over deals. On both cores.

    .venv/bin/python scripts/bench_rollout.py           # full run (~25 min)
    .venv/bin/python scripts/bench_rollout.py --quick   # smoke run (seconds)
    .venv/bin/python scripts/bench_rollout.py --quick --json
    .venv/bin/python scripts/bench_rollout.py --only analyze --matches 100
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from analysis.bot_matches import bot_records
from sniff import Match, Phase, SeatView, make_bot, view
from sniff.playout import KERNEL_AVAILABLE
from sniff.rollout import BOT_ROLLOUTS, RolloutBot, equities

ROOT = Path(__file__).resolve().parent.parent
SEAT_COUNTS = (2, 3, 4)
PARTS = ("rollouts", "analyze", "bot", "strength")
BOT_TARGET_MS = 50.0
T975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 10: 2.23, 20: 2.09, 30: 2.04, 60: 2.00}


def t975(dof: int) -> float:
    """Student t's 97.5% quantile (a table; 1.96 beyond 120 degrees of freedom)."""
    if dof >= 120:
        return 1.96
    keys = sorted(k for k in T975 if k <= dof)
    return T975[keys[-1]] if keys else T975[1]


def decisions(seats: int, count: int, seed: int) -> list[SeatView]:
    """Views of the seat to play at decisions (more than one legal move) of greedy matches."""
    rng = random.Random(seed)
    out: list[SeatView] = []
    match = Match(seats, seed=seed)
    bots = [make_bot("greedy", s) for s in range(seats)]
    while len(out) < count:
        if match.phase is Phase.OVER:
            match = Match(seats, seed=rng.getrandbits(32))
        if match.phase is Phase.AWAITING_DEAL:
            match.deal()
            continue
        seen = view(match, match.turn)
        if len(seen.legal) > 1 and rng.random() < 0.3:
            out.append(seen)
        match.apply(bots[match.turn].choose(seen))
    return out


# -- rollouts --------------------------------------------------------------------------


def _rollout_job(args: tuple[int, int, int, str]) -> tuple[float, float, int, int]:
    """(wall s, CPU s, samples, playouts) of equities over decisions of one seat count."""
    seats, count, rollouts, backend = args
    views = decisions(seats, count, seed=seats)
    wall, cpu = time.perf_counter(), time.process_time()
    playouts = 0
    for i, seen in enumerate(views):
        equities(seen, rollouts=rollouts, seed=i, backend=backend)
        playouts += rollouts * len(seen.legal)
    return time.perf_counter() - wall, time.process_time() - cpu, rollouts * count, playouts


def measure_rollouts(count: int, rollouts: int, runs: int) -> dict[str, Any]:
    backends = ["c", "python"] if KERNEL_AVAILABLE else ["python"]
    out: dict[str, Any] = {}
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    for seats in SEAT_COUNTS:
        for backend in backends:
            n = rollouts if backend == "c" else max(2, rollouts // 8)
            job = (seats, count, n, backend)
            one, two = [], []
            for _ in range(runs):
                _, cpu, samples, playouts = _rollout_job(job)
                one.append({"playouts_per_s": playouts / cpu, "samples_per_s": samples / cpu})
                with ctx.Pool(2) as pool:
                    both = pool.map(_rollout_job, [job, job])
                slowest = max(w for w, _, _, _ in both)
                two.append({"playouts_per_s": sum(p for *_, p in both) / slowest})
            out[f"{seats}/{backend}"] = {
                "rollouts_per_move": n,
                "one_core_playouts_per_s": [r["playouts_per_s"] for r in one],
                "one_core_samples_per_s": [r["samples_per_s"] for r in one],
                "two_cores_playouts_per_s": [r["playouts_per_s"] for r in two],
            }
    return out


# -- analyze ---------------------------------------------------------------------------


def measure_analyze(matches: int, rollouts: int) -> dict[str, Any]:
    """`sniff analyze` without luck (the figure the earlier benchmark had) and with it (the
    default since), on the same records in the same run."""
    plain = _analyze_once(matches, rollouts, luck=False)
    with_luck = _analyze_once(matches, rollouts, luck=True)
    return {**plain, "with_luck": with_luck}


def _analyze_once(matches: int, rollouts: int, luck: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-rollout-") as tmp:
        records = Path(tmp) / "matches.jsonl"
        with records.open("w") as f:
            for rec in bot_records(2, matches, 1, ("greedy", "random")):
                f.write(json.dumps(rec) + "\n")
        sniff = [sys.executable, "-m", "analysis.cli"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        start = time.perf_counter()
        done = subprocess.run(
            [*sniff, "analyze", "--records", str(records), "--rollouts", str(rollouts),
             "--format", "json" if luck else "csv", *(() if luck else ("--no-luck",))],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"sniff analyze failed: {done.stderr}")
        luck_figures: dict[str, Any] = {}
        if luck:
            doc = json.loads(done.stdout)
            decisions_done = len(doc["decisions"])
            seats = doc["luck"]["seats"]
            luck_figures = {
                "luck_rollouts": doc["luck"]["rollouts"],
                "median_match_luck_se": statistics.median(r["luck_se"] for r in seats),
                "median_match_lost_se": statistics.median(r["lost_se"] for r in seats),
                "median_abs_match_luck": statistics.median(abs(r["luck"]) for r in seats),
                "events": len(doc["luck"]["events"]),
            }
        else:
            decisions_done = len(done.stdout.splitlines()) - 1
        sql = (
            "SELECT median(loss_se) AS median_diff_se, avg(loss_se) AS mean_diff_se, "
            "median(se) AS median_se, count(*) AS moves FROM moves WHERE rank > 1"
        )
        query = subprocess.run(
            [*sniff, "analysis", sql, "--records", str(records), "--format", "jsonl"],
            capture_output=True, text=True, env=env, check=True,
        )  # fmt: skip
        figures = json.loads(query.stdout)
    per_match = wall / matches
    return {
        "matches": matches,
        "rollouts_per_move": rollouts,
        "workers": os.cpu_count(),
        "decisions": decisions_done,
        "wall_s": wall,
        "ms_per_decision": 1000 * wall / max(1, decisions_done),
        "extrapolated_1000_matches_s": per_match * 1000,
        **figures,
        **luck_figures,
    }


# -- the bot -----------------------------------------------------------------------------


def measure_bot(matches_per_seats: int, round_limit: int) -> dict[str, Any]:
    """Wall ms per `choose` of the rollout bot (default budget) against greedy opponents."""
    out: dict[str, Any] = {"rollouts_per_move": BOT_ROLLOUTS, "target_ms": BOT_TARGET_MS}
    for seats in SEAT_COUNTS:
        decided: list[float] = []
        every: list[float] = []
        for i in range(matches_per_seats):
            match = Match(seats, seed=1000 + i, round_limit=round_limit)
            bots = [RolloutBot(i)] + [make_bot("greedy", s) for s in range(1, seats)]
            while match.phase is not Phase.OVER:
                if match.phase is Phase.AWAITING_DEAL:
                    match.deal()
                    continue
                seen = view(match, match.turn)
                start = time.perf_counter()
                move = bots[match.turn].choose(seen)
                ms = 1000 * (time.perf_counter() - start)
                if match.turn == 0:
                    every.append(ms)
                    if len(seen.legal) > 1:
                        decided.append(ms)
                match.apply(move)
        decided.sort()
        out[str(seats)] = {
            "decisions": len(decided),
            "moves": len(every),
            "median_ms_per_decision": statistics.median(decided),
            "mean_ms_per_decision": statistics.fmean(decided),
            "p95_ms_per_decision": decided[int(0.95 * (len(decided) - 1))],
            "mean_ms_per_move": statistics.fmean(every),
        }
    return out


# -- strength ----------------------------------------------------------------------------


def _duplicate_pair(args: tuple[int, int]) -> tuple[float, int]:
    """One deal (one round, from `seed`) played twice, the rollout bot in seat 0 then in seat
    1: the rollout side's round net result averaged over the two, and actions played."""
    seats, seed = args
    values = []
    actions = 0
    for rollout_seat in range(2):
        match = Match(seats, seed=seed, target=10_000, round_limit=1)
        bots = [
            RolloutBot(seed * 2 + s) if s % 2 == rollout_seat else make_bot("greedy", seed + s)
            for s in range(seats)
        ]
        while match.phase is Phase.PLAYING:
            match.apply(bots[match.turn].choose(view(match, match.turn)))
            actions += 1
        side = rollout_seat  # with 4 seats, seats rollout_seat and rollout_seat + 2
        values.append(match.scores[side] - match.scores[1 - side])
    return sum(values) / 2, actions


def measure_strength(deals: int, seats_list: Sequence[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    for seats in seats_list:
        start = time.perf_counter()
        with ctx.Pool(2) as pool:
            results = pool.map(_duplicate_pair, [(seats, 7_000 + i) for i in range(deals)])
        values = [v for v, _ in results]
        n = len(values)
        mean = statistics.fmean(values)
        sd = statistics.stdev(values) if n > 1 else math.nan
        half = t975(n - 1) * sd / math.sqrt(n) if n > 1 else math.nan
        out[str(seats)] = {
            "deals": n,
            "rounds": 2 * n,
            "mean_net_per_round": mean,
            "ci95": [mean - half, mean + half],
            "wall_s": time.perf_counter() - start,
        }
    return out


# -- report ----------------------------------------------------------------------------


def summary(values: Sequence[float], digits: int = 0) -> str:
    med = statistics.median(values)
    return f"{med:,.{digits}f} ({min(values):,.{digits}f}..{max(values):,.{digits}f})"


def report(doc: dict[str, Any]) -> None:
    print(f"python {sys.version.split()[0]}; kernel {'built' if doc['kernel'] else 'NOT built'}")
    if "rollouts" in doc:
        print("\nequity rollouts (sample + determinize + one greedy playout per move), playouts/s")
        print(f"{'seats':>5}  {'backend':<7}  {'one core (CPU)':<28}  {'two cores (wall)':<28}")
        for key, f in doc["rollouts"].items():
            seats, backend = key.split("/")
            print(
                f"{seats:>5}  {backend:<7}  {summary(f['one_core_playouts_per_s']):<28}  "
                f"{summary(f['two_cores_playouts_per_s']):<28}"
            )
        for seats in SEAT_COUNTS:
            c, py = doc["rollouts"].get(f"{seats}/c"), doc["rollouts"][f"{seats}/python"]
            if c is not None:
                ratio = statistics.median(c["one_core_playouts_per_s"]) / statistics.median(
                    py["one_core_playouts_per_s"]
                )
                both = statistics.median(c["two_cores_playouts_per_s"]) / statistics.median(
                    c["one_core_playouts_per_s"]
                )
                print(f"  {seats} seats: kernel/python {ratio:.1f}x; two cores/one {both:.2f}x")
    if "analyze" in doc:
        a = doc["analyze"]
        print(
            f"\nsniff analyze: {a['matches']} matches, {a['decisions']} decisions, "
            f"{a['rollouts_per_move']} rollouts a move, {a['workers']} workers: "
            f"{a['wall_s']:.1f} s ({a['ms_per_decision']:.1f} ms a decision); 1,000 matches: "
            f"{a['extrapolated_1000_matches_s']:.0f} s; SE of an equity difference: median "
            f"{a['median_diff_se']:.2f}, mean {a['mean_diff_se']:.2f} points (one move's SE: "
            f"median {a['median_se']:.2f})"
        )
        w = a["with_luck"]
        print(
            f"  with luck ({w['luck_rollouts']} rollouts an estimate, {w['events']} chance "
            f"events): {w['wall_s']:.1f} s ({w['wall_s'] / a['wall_s']:.2f}x without); 1,000 "
            f"matches: {w['extrapolated_1000_matches_s']:.0f} s; a match's luck: median |luck| "
            f"{w['median_abs_match_luck']:.1f} points, median SE {w['median_match_luck_se']:.1f}"
            f"; its equity lost: median SE {w['median_match_lost_se']:.1f}"
        )
    if "bot" in doc:
        b = doc["bot"]
        print(f"\nrollout bot, {b['rollouts_per_move']} rollouts a move (wall ms per choose)")
        for seats in SEAT_COUNTS:
            f = b[str(seats)]
            print(
                f"  {seats} seats: decisions median {f['median_ms_per_decision']:.1f}, mean "
                f"{f['mean_ms_per_decision']:.1f}, p95 {f['p95_ms_per_decision']:.1f} "
                f"({f['decisions']}); every move mean {f['mean_ms_per_move']:.1f} ({f['moves']})"
            )
    if "strength" in doc:
        print("\nrollout vs greedy, each deal twice with seats swapped, one round a deal")
        for seats, f in doc["strength"].items():
            lo, hi = f["ci95"]
            print(
                f"  {seats} seats: {f['deals']} deals, mean net per round "
                f"{f['mean_net_per_round']:+.2f} points (95% CI {lo:+.2f} .. {hi:+.2f}), "
                f"{f['wall_s']:.0f} s"
            )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--only", choices=PARTS, action="append", help="one part (repeatable)")
    p.add_argument("--decisions", type=int, default=40, help="decisions per seat count (rollouts)")
    p.add_argument("--rollouts", type=int, default=200, help="rollouts per move (rollouts)")
    p.add_argument("--runs", type=int, default=3, help="runs (rollouts; median reported)")
    p.add_argument("--matches", type=int, default=1000, help="matches to analyse (analyze)")
    p.add_argument("--analyze-rollouts", type=int, default=100, help="rollouts a move (analyze)")
    p.add_argument("--bot-matches", type=int, default=4, help="matches per seat count (bot)")
    p.add_argument("--deals", type=int, default=300, help="deals, each played twice (strength)")
    p.add_argument("--strength-seats", default="2,4", help="seat counts (strength)")
    p.add_argument("--quick", action="store_true", help="a fast smoke run")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = p.parse_args(argv)
    parts = args.only or list(PARTS)
    if args.quick:
        args.decisions, args.rollouts, args.runs = 4, 32, 1
        args.matches, args.analyze_rollouts = 2, 8
        args.bot_matches, args.deals = 1, 3
    doc: dict[str, Any] = {"kernel": KERNEL_AVAILABLE}
    if "rollouts" in parts:
        doc["rollouts"] = measure_rollouts(args.decisions, args.rollouts, args.runs)
    if "analyze" in parts:
        doc["analyze"] = measure_analyze(args.matches, args.analyze_rollouts)
    if "bot" in parts:
        doc["bot"] = measure_bot(args.bot_matches, 2 if args.quick else 3)
    if "strength" in parts:
        seats = [int(s) for s in args.strength_seats.split(",")]
        doc["strength"] = measure_strength(args.deals, seats)
    if args.json:
        print(json.dumps(doc))
    else:
        report(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())

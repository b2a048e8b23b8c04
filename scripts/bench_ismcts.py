"""The `ismcts` search bot: its time per move and its strength in duplicate tournaments.

Two parts (the machine is shared: quote medians, compare within one run):

* **time**: wall ms of `IsmctsBot.choose` at the default budget (or the one
  given), over its decisions (more than one legal move) in seeded matches
  against greedy, 2 and 4 seats: median, p99 and max;
* **tournaments**: duplicate tournaments through `analysis.tournament`
  (`play`, then `report`), one round a deal (`round_limit=1,
  target=10000`): ismcts against rollout and rollout against greedy, 2 and 4
  seats (with 4 seats two bots are partnerships), each bot's mean net result
  a deal (points a round) with its 95% interval by deal. `--budgets` adds
  ismcts at other budgets in playouts against rollout (2 seats): a bot
  `ismcts-P` registered in `sniff.bots.BOTS` for the run.

Tournaments run in a fork pool, one tournament a process (`workers=1`
inside, so the bots registered here exist where they play): as many at a
time as `--parallel`. `tournament()` and `TournamentSpec` are the settings,
for reuse (the same deals from the same seed).

    .venv/bin/python scripts/bench_ismcts.py                 # full run (~15 min)
    .venv/bin/python scripts/bench_ismcts.py --quick --json  # smoke run (seconds)
    .venv/bin/python scripts/bench_ismcts.py --only tournaments --deals 300 --budgets 900,2000
    .venv/bin/python scripts/bench_ismcts.py --only tournaments --no-standard --budgets 2000 \
        --budget-seats 4 --deals4 100
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from analysis.tournament import Settings, play, report
from sniff import Match, Phase, make_bot, view
from sniff.bots import BOTS, Bot
from sniff.ismcts import BOT_PLAYOUTS, IsmctsBot
from sniff.playout import KERNEL_AVAILABLE

PARTS = ("time", "tournaments")
TARGET_MS = 100.0
"""The default budget's aim: under this a move on the development machine."""
ROUND_LIMIT = 1
TARGET = 10_000
"""One round a deal, never cut short by the target: results are points a round."""


# -- time per move -----------------------------------------------------------------------


def decision_times(
    seats: int, matches: int, *, playouts: int | None = None, millis: float | None = None
) -> list[float]:
    """Wall ms of each ismcts decision (more than one legal move) in `matches` seeded matches
    of two rounds, ismcts in the even seats and greedy in the odd ones."""
    times: list[float] = []
    for i in range(matches):
        match = Match(seats, seed=3_000 + i, round_limit=2)
        bots: list[Bot] = [
            IsmctsBot(i * 8 + s, playouts=playouts, millis=millis)
            if s % 2 == 0
            else make_bot("greedy", s)
            for s in range(seats)
        ]
        while match.phase is not Phase.OVER:
            if match.phase is Phase.AWAITING_DEAL:
                match.deal()
                continue
            seen = view(match, match.turn)
            start = time.perf_counter()
            move = bots[match.turn].choose(seen)
            ms = 1000 * (time.perf_counter() - start)
            if match.turn % 2 == 0 and len(seen.legal) > 1:
                times.append(ms)
            match.apply(move)
    return times


def measure_time(matches: int, playouts: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"playouts_per_move": playouts or BOT_PLAYOUTS, "target_ms": TARGET_MS}
    for seats in (2, 4):
        times = sorted(decision_times(seats, matches, playouts=playouts))
        out[str(seats)] = {
            "decisions": len(times),
            "median_ms": statistics.median(times),
            "p99_ms": times[min(len(times) - 1, round(0.99 * (len(times) - 1)))],
            "max_ms": times[-1],
        }
    return out


# -- tournaments ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TournamentSpec:
    """One duplicate tournament of the benchmark: `bots` may name `ismcts-P`, the ismcts
    bot at P playouts a move (registered by `register_budgets`)."""

    bots: tuple[str, ...]
    seats: int
    deals: int
    seed: int = 7_000

    def settings(self) -> Settings:
        return Settings(
            self.bots, self.seats, self.deals, self.seed, "american", ROUND_LIMIT, TARGET
        )

    def command(self) -> str:
        """The `sniff tournament` command that plays the same tournament (default budgets)."""
        return (
            f"sniff tournament --bots {','.join(self.bots)} --seats {self.seats} "
            f"--deals {self.deals} --round-limit {ROUND_LIMIT} --target {TARGET} --seed {self.seed}"
        )


def register_budgets(names: Sequence[str]) -> None:
    """Add `ismcts-P` to `BOTS` for each such name: the ismcts bot at P playouts a move."""
    for name in names:
        if name.startswith("ismcts-") and name not in BOTS:
            playouts = int(name.removeprefix("ismcts-"))

            def factory(seed: int | None = None, playouts: int = playouts) -> Bot:
                return IsmctsBot(seed, playouts=playouts)

            BOTS[name] = factory


def tournament(spec: TournamentSpec) -> dict[str, Any]:
    """Play one tournament here (one worker) and report each bot's mean net result a deal
    with its 95% interval, the head-to-head margins, and the wall time."""
    register_budgets(spec.bots)
    settings = spec.settings()
    start = time.perf_counter()
    played, _ = play(settings, workers=1)
    wall = time.perf_counter() - start
    doc = report(settings, played).to_json()
    return {
        "spec": asdict(spec),
        "command": spec.command(),
        "wall_s": wall,
        "results": doc["results"],
        "head_to_head": doc["head_to_head"],
    }


def tournaments(specs: Sequence[TournamentSpec], parallel: int) -> list[dict[str, Any]]:
    """Each tournament in its own forked process, `parallel` at a time, in order."""
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(parallel) as pool:
        return pool.map(tournament, specs, chunksize=1)


def standard_specs(
    deals2: int,
    deals4: int,
    budgets: Sequence[int] = (),
    budget_seats: Sequence[int] = (2,),
    standard: bool = True,
) -> list[TournamentSpec]:
    """ismcts vs rollout and rollout vs greedy at 2 and 4 seats (unless not `standard`),
    then ismcts at each other budget vs rollout at each of `budget_seats` (the same deals
    as the standard ones of that seat count)."""
    specs = []
    if standard:
        specs += [
            TournamentSpec(("ismcts", "rollout"), 2, deals2),
            TournamentSpec(("ismcts", "rollout"), 4, deals4),
            TournamentSpec(("rollout", "greedy"), 2, deals2),
            TournamentSpec(("rollout", "greedy"), 4, deals4),
        ]
    for seats in budget_seats:
        deals = deals2 if seats == 2 else deals4
        specs += [TournamentSpec((f"ismcts-{p}", "rollout"), seats, deals) for p in budgets]
    return specs


# -- report ----------------------------------------------------------------------------


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.2f}"


def print_report(doc: dict[str, Any]) -> None:
    print(f"python {sys.version.split()[0]}; kernel {'built' if doc['kernel'] else 'NOT built'}")
    if "time" in doc:
        t = doc["time"]
        print(f"\nismcts bot, {t['playouts_per_move']} playouts a move (wall ms a decision)")
        for seats in ("2", "4"):
            f = t[seats]
            print(
                f"  {seats} seats: median {f['median_ms']:.1f}, p99 {f['p99_ms']:.1f}, "
                f"max {f['max_ms']:.1f} ({f['decisions']} decisions)"
            )
    for run in doc.get("tournaments", []):
        print(f"\n{run['command']}   ({run['wall_s']:.0f} s)")
        for row in run["results"]:
            print(
                f"  {row['bot']:<14} mean net {_num(row['mean'])} a round "
                f"(95% {_num(row['ci_low'])} .. {_num(row['ci_high'])}), {row['deals']} deals"
            )
        for row in run["head_to_head"]:
            print(
                f"  {row['bot']} over {row['opponent']}: {_num(row['mean'])} "
                f"(95% {_num(row['ci_low'])} .. {_num(row['ci_high'])})"
            )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--only", choices=PARTS, action="append", help="one part (repeatable)")
    p.add_argument("--matches", type=int, default=6, help="matches per seat count (time)")
    p.add_argument("--playouts", type=int, default=None, help="budget to time (default: bot's)")
    p.add_argument("--deals", type=int, default=150, help="deals of the 2-seat tournaments")
    p.add_argument("--deals4", type=int, default=100, help="deals of the 4-seat tournaments")
    p.add_argument("--budgets", default="", help="other ismcts budgets vs rollout, like 900,2000")
    p.add_argument("--budget-seats", default="2", help="seat counts of the --budgets runs")
    p.add_argument("--no-standard", action="store_true", help="only the --budgets runs")
    p.add_argument("--parallel", type=int, default=2, help="tournaments at a time")
    p.add_argument("--quick", action="store_true", help="a fast smoke run")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = p.parse_args(argv)
    parts = args.only or list(PARTS)
    budgets = [int(b) for b in args.budgets.split(",") if b]
    if args.quick:
        args.matches, args.deals, args.deals4 = 1, 2, 1
        args.playouts = args.playouts or 16
        budgets = budgets[:1]
    doc: dict[str, Any] = {"kernel": KERNEL_AVAILABLE}
    if "time" in parts:
        doc["time"] = measure_time(args.matches, args.playouts)
    if "tournaments" in parts:
        seats = [int(n) for n in args.budget_seats.split(",") if n]
        specs = standard_specs(args.deals, args.deals4, budgets, seats, not args.no_standard)
        if args.quick:
            register_budgets(["ismcts-16"])
            specs = [TournamentSpec(("ismcts-16", "greedy"), s, 2) for s in (2, 4)]
        doc["tournaments"] = tournaments(specs, args.parallel)
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print_report(doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

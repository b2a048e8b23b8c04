"""Exact endgame solver benchmark: how long `sniff.solver.solve` takes on real positions.

Positions: two-seat matches of greedy (seat 0) against random (seat 1), match i seeded
`--seed + i` (the bots seeded by `seeds.bot_seed`, as every bot match); in each round, the
position at the moment the boneyard is left with `--boneyard` tiles (0, the default: the
moment it becomes empty, when both players see every tile; more: the double-dummy case, the
boneyard's order known). Rounds that end before that give no position.

Each position is solved once, in this one process (one core), with the budget given
(`--nodes`, default the solver's own). Printed: the solve time's median, 90th and 99th
percentiles and maximum (nearest rank, wall clock), the nodes searched likewise, nodes per
second over all positions, and how many positions the budget did not solve (their time is
the time to give up, so a percentile that falls on one is a lower bound, marked ">=").
The load average is printed too: the machine is shared, and the figures mean little when
it is busy.

    .venv/bin/python scripts/bench_solver.py                 # 1,000 positions
    .venv/bin/python scripts/bench_solver.py --quick         # smoke run (seconds)
    .venv/bin/python scripts/bench_solver.py --boneyard 2 --positions 200
    .venv/bin/python scripts/bench_solver.py --quick --json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from analysis.bot_matches import bot_players
from sniff import Match, Phase, view
from sniff.playout import PlayoutState
from sniff.seeds import match_seed
from sniff.solver import DEFAULT_NODES, Budget, NotSolved, solve

BOTS = ("greedy", "random")


@dataclass(frozen=True)
class Measured:
    seconds: float
    nodes: int
    solved: bool
    tiles: int
    """Tiles in both hands."""


def positions(count: int, seed: int, boneyard: int) -> list[PlayoutState]:
    """`count` positions: per round, the first with `boneyard` tiles left to draw."""
    out: list[PlayoutState] = []
    i = 0
    while len(out) < count:
        seeded = match_seed(seed, i)
        i += 1
        match = Match(2, seed=seeded)
        bots = bot_players(2, BOTS, seeded)
        taken = -1
        while match.phase is not Phase.OVER and len(out) < count:
            if match.phase is Phase.AWAITING_DEAL:
                match.deal()
                continue
            if match.boneyard_left == boneyard and taken != match.round_index:
                taken = match.round_index
                out.append(PlayoutState.of_match(match))
            match.apply(bots[match.turn].choose(view(match, match.turn)))
    return out


def measure(states: Sequence[PlayoutState], budget: Budget) -> list[Measured]:
    out = []
    for state in states:
        start = time.perf_counter()
        try:
            nodes, solved = solve(state, budget, double_dummy=True).nodes, True
        except NotSolved as e:
            nodes, solved = e.nodes, False
        seconds = time.perf_counter() - start
        out.append(Measured(seconds, nodes, solved, sum(h.bit_count() for h in state.hands)))
    return out


def rank(values: Sequence[float], q: float) -> float:
    """The nearest-rank q-quantile (q in (0, 1]) of `values`."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def summary(results: Sequence[Measured]) -> dict[str, Any]:
    times = [r.seconds for r in results]
    nodes = [r.nodes for r in results]
    unsolved_floor = min((r.seconds for r in results if not r.solved), default=math.inf)
    out: dict[str, Any] = {
        "positions": len(results),
        "unsolved": sum(not r.solved for r in results),
        "median_tiles": statistics.median(r.tiles for r in results),
        "max_tiles": max(r.tiles for r in results),
        "nodes_per_s": sum(nodes) / sum(times),
    }
    for name, q in (("median", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0)):
        t = rank(times, q)
        out[f"{name}_ms"] = 1000 * t
        out[f"{name}_ms_lower_bound"] = t >= unsolved_floor
        out[f"{name}_nodes"] = rank(nodes, q)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--boneyard", type=int, default=0, help="tiles left to draw (0..14)")
    parser.add_argument("--nodes", type=int, default=DEFAULT_NODES, help="budget per position")
    parser.add_argument("--quick", action="store_true", help="40 positions, 200,000 nodes")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    if args.quick:
        args.positions, args.nodes = 40, 200_000
    if not 0 <= args.boneyard <= 14 or args.positions < 1:
        parser.error("--boneyard is 0..14 and --positions at least 1")
    load = os.getloadavg()[0]
    states = positions(args.positions, args.seed, args.boneyard)
    results = measure(states, Budget(nodes=args.nodes))
    figures = {
        "settings": {
            "positions": args.positions,
            "seed": args.seed,
            "boneyard": args.boneyard,
            "budget_nodes": args.nodes,
            "bots": list(BOTS),
            "load_average_1min": load,
            "python": sys.version.split()[0],
        },
        **summary(results),
    }
    if args.json:
        print(json.dumps(figures))
        return 0

    def ms(name: str) -> str:
        mark = ">=" if figures[f"{name}_ms_lower_bound"] else ""
        return f"{mark}{figures[f'{name}_ms']:,.1f} ms ({figures[f'{name}_nodes']:,} nodes)"

    print(
        f"{figures['positions']} two-seat positions with {args.boneyard} tiles left to draw "
        f"(greedy vs random, seed {args.seed}), budget {args.nodes:,} nodes, one core, "
        f"load {load:.2f}"
    )
    print(f"  tiles in hand: median {figures['median_tiles']}, max {figures['max_tiles']}")
    for name in ("median", "p90", "p99", "max"):
        print(f"  {name:>6}: {ms(name)}")
    print(f"  nodes per second: {figures['nodes_per_s']:,.0f}")
    print(f"  not solved within the budget: {figures['unsolved']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

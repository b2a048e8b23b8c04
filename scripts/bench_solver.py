"""Exact endgame solver benchmark: how long `sniff.solver.solve` takes on real positions,
with each backend (the kernel's search and the pure Python one) on the same positions.

Endgames: two-seat matches of greedy (seat 0) against random (seat 1), match i seeded
`--seed + i` (the bots seeded by `seeds.bot_seed`, as every bot match); in each round, the
position at the moment the boneyard is left with `--boneyard` tiles (0, the default: the
moment it becomes empty, when both players see every tile; more: the double-dummy case, the
boneyard's order known). Rounds that end before that give no position.

Par: whole deals, double-dummy, as `sniff analyze --par` solves them (analysis/rollout/
par.py): the first `--deals` rounds of the same matches from their first decision, the
whole boneyard in draw order, at the par's budget (`--par-nodes`, default its PAR_NODES).

Each position is solved once per backend, in this one process (one core), with the budget
given (`--nodes`, default the solver's own). Printed per backend: the solve time's median,
90th and 99th percentiles and maximum (nearest rank, wall clock), the nodes searched
likewise, nodes per second over all positions, and how many positions the budget did not
solve (their time is the time to give up, so a percentile that falls on one is a lower
bound, marked ">="); and whether the backends gave the same values on the positions both
solved. The load average is printed too: the machine is shared, and the figures mean
little when it is busy.

    .venv/bin/python scripts/bench_solver.py                 # 1,000 positions, 20 deals
    .venv/bin/python scripts/bench_solver.py --quick         # smoke run (seconds)
    .venv/bin/python scripts/bench_solver.py --boneyard 2 --positions 200 --deals 0
    .venv/bin/python scripts/bench_solver.py --backends c --deals 200
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
from analysis.rollout.par import PAR_NODES
from sniff import Match, Phase, view
from sniff.backend import KERNEL_AVAILABLE
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
    values: tuple[float, ...] | None
    """Each move's value, when solved (to compare the backends)."""


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


def measure(states: Sequence[PlayoutState], budget: Budget, backend: str) -> list[Measured]:
    out = []
    for state in states:
        values: tuple[float, ...] | None = None
        start = time.perf_counter()
        try:
            solution = solve(state, budget, double_dummy=True, backend=backend)
            nodes, solved = solution.nodes, True
            values = tuple(mv.value for mv in solution.moves)
        except NotSolved as e:
            nodes, solved = e.nodes, False
        seconds = time.perf_counter() - start
        tiles = sum(h.bit_count() for h in state.hands)
        out.append(Measured(seconds, nodes, solved, tiles, values))
    return out


def disagreements(by_backend: dict[str, list[Measured]]) -> int:
    """Positions every backend solved on whose move values they differ (must be 0)."""
    runs = list(by_backend.values())
    count = 0
    for results in zip(*runs, strict=True):
        values = {r.values for r in results if r.solved}
        count += len(values) > 1
    return count


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


def run(states: Sequence[PlayoutState], budget: Budget, backends: Sequence[str]) -> dict[str, Any]:
    """Every backend's summary on `states`, and how many solutions they disagreed on."""
    by_backend = {b: measure(states, budget, b) for b in backends}
    out: dict[str, Any] = {b: summary(r) for b, r in by_backend.items()}
    out["disagreements"] = disagreements(by_backend)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--boneyard", type=int, default=0, help="tiles left to draw (0..14)")
    parser.add_argument("--nodes", type=int, default=DEFAULT_NODES, help="budget per position")
    parser.add_argument("--deals", type=int, default=20, help="whole deals solved (par)")
    parser.add_argument("--par-nodes", type=int, default=PAR_NODES, help="budget per deal")
    parser.add_argument(
        "--backends",
        default="c,python" if KERNEL_AVAILABLE else "python",
        help="comma-separated: c, python (default both when the kernel is built)",
    )
    parser.add_argument("--quick", action="store_true", help="40 positions, 3 deals, 200,000 nodes")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    if args.quick:
        args.positions, args.nodes, args.deals, args.par_nodes = 40, 200_000, 3, 200_000
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not 0 <= args.boneyard <= 14 or args.positions < 1 or args.deals < 0:
        parser.error("--boneyard is 0..14, --positions at least 1, --deals at least 0")
    if not backends or any(b not in ("c", "python") for b in backends):
        parser.error("--backends takes c and/or python")
    if "c" in backends and not KERNEL_AVAILABLE:
        parser.error("the kernel is not built: --backends python")
    load = os.getloadavg()[0]
    states = positions(args.positions, args.seed, args.boneyard)
    deals = positions(args.deals, args.seed, 14) if args.deals else []
    figures: dict[str, Any] = {
        "settings": {
            "positions": args.positions,
            "seed": args.seed,
            "boneyard": args.boneyard,
            "budget_nodes": args.nodes,
            "deals": args.deals,
            "par_budget_nodes": args.par_nodes,
            "backends": backends,
            "bots": list(BOTS),
            "load_average_1min": load,
            "python": sys.version.split()[0],
        },
        "endgames": run(states, Budget(nodes=args.nodes), backends),
    }
    if deals:
        figures["par"] = run(deals, Budget(nodes=args.par_nodes), backends)
    if args.json:
        print(json.dumps(figures))
        return 0

    def ms(part: dict[str, Any], name: str) -> str:
        mark = ">=" if part[f"{name}_ms_lower_bound"] else ""
        return f"{mark}{part[f'{name}_ms']:,.1f} ms ({part[f'{name}_nodes']:,} nodes)"

    def report(title: str, run_figures: dict[str, Any], budget: int) -> None:
        print(f"{title}, budget {budget:,} nodes, one core, load {load:.2f}")
        for backend in backends:
            part = run_figures[backend]
            print(f"  {backend}:")
            print(f"    tiles in hand: median {part['median_tiles']}, max {part['max_tiles']}")
            for name in ("median", "p90", "p99", "max"):
                print(f"    {name:>6}: {ms(part, name)}")
            print(f"    nodes per second: {part['nodes_per_s']:,.0f}")
            print(f"    not solved within the budget: {part['unsolved']}")
        if len(backends) > 1:
            print(
                f"  positions whose values the backends disagree on: {run_figures['disagreements']}"
            )

    report(
        f"{len(states)} two-seat positions with {args.boneyard} tiles left to draw "
        f"(greedy vs random, seed {args.seed})",
        figures["endgames"],
        args.nodes,
    )
    if deals:
        report(
            f"{len(deals)} whole two-seat deals, double-dummy (par), from the first decision",
            figures["par"],
            args.par_nodes,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

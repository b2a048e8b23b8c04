"""Per-move equity of a whole match: every decision analysed from the mover's own view.

A **decision** is a turn at which the seat to play has more than one legal
move. Each is analysed by `sniff.rollout.equities` on the mover's
`SeatView` at that point (rebuilt through the engine from the match's deals
and actions; the analysis itself never sees the match), with the same
number of rollouts per move and common random numbers.

The **equity lost** by the move played is the best move's equity minus the
played move's (0 when it is the best). A decision is an **error** when that
loss exceeds twice its standard error (the played move is measurably worse
than the best), and a **large loss** when it is an error and the loss is
more than `LARGE_LOSS` points.

Reproducible from the seed whatever the number of workers: each decision's
rollouts are seeded by a hash of (seed, match id, round, action), never by
the order in which workers take them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any, Final

from analysis.rollout.source import MatchSpec
from sniff import Deal, Move, view
from sniff.rollout import Equities, equities, exact_equities
from sniff.seeds import decision_seed
from sniff.solver import Budget
from sniff.tiles import IS_DOUBLE
from sniff.view import SeatView

LARGE_LOSS: Final = 5.0
"""Points of equity lost beyond which an error is flagged as large."""
ERROR_SE: Final = 2.0
"""An error: the loss exceeds this many standard errors of the difference."""
CHUNK: Final = 8
"""Decisions per unit of work when one match is split over workers."""
EXACT_NODES: Final = 200_000
"""The exact solver's budget per decision: two-seat endgames from the moment the boneyard
is empty take a few thousand nodes at most (scripts/bench_solver.py); a decision it cannot
solve within this is estimated by rollouts."""


@dataclass(frozen=True, slots=True)
class Settings:
    """What an analysis depends on besides the match: part of the key of its stored results."""

    rollouts: int
    policy: str = "greedy"
    seed: int = 0
    exact: bool = True
    """Exact values where the mover sees every tile (two seats, an empty boneyard)."""

    @property
    def tag(self) -> str:
        """The settings as a file name part: `rollouts-200_greedy_seed-0` (with
        `_rollouts-only` when exact values are not used)."""
        tag = f"rollouts-{self.rollouts}_{self.policy}_seed-{self.seed}"
        return tag if self.exact else f"{tag}_rollouts-only"


PHASES: Final = ("lead", "sniff", "open", "empty")
"""The phases of play a decision is counted in (docs/analysis.md, "Performance"): the
round's lead; a Sniff decision (before the Sniff, the mover may place a double and a
non-double, as the statistics count them); otherwise play with the boneyard open, or empty."""


def phase_of(view: SeatView) -> str:
    """The phase of the decision `view` shows (its seat to play)."""
    if not view.placements:
        return "lead"
    if view.sniff_index < 0 and view.drawn is None:
        tiles = {m.tile for m in view.legal if m.is_placement and m.tile is not None}
        doubles = {t for t in tiles if IS_DOUBLE[t]}
        if doubles and doubles != tiles:
            return "sniff"
    return "open" if view.boneyard_size else "empty"


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of a match, located and with the mover's view at that point."""

    round: int
    action: int
    """The action's index within its round (the lead is 0)."""
    move_number: int
    """The action's number over the whole match, from 0."""
    seat: int
    played: Move
    view: SeatView


@dataclass(frozen=True, slots=True)
class MoveRow:
    move: str
    rank: int
    """1 for the best."""
    equity: float
    se: float
    loss: float
    loss_se: float
    played: bool

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in MOVE_COLUMNS}


MOVE_COLUMNS: Final = ("move", "rank", "equity", "se", "loss", "loss_se", "played")


@dataclass(frozen=True, slots=True)
class DecisionResult:
    match_id: str
    round: int
    action: int
    move_number: int
    seat: int
    player: str
    legal: int
    played: str
    best: str
    played_equity: float
    played_se: float
    best_equity: float
    best_se: float
    loss: float
    loss_se: float
    error: bool
    large: bool
    decision_seed: int
    exact: bool = False
    """The values are exact (the solver's), not estimated: every standard error is 0."""
    phase: str = ""
    """`PHASES`: the lead, a Sniff decision, play with the boneyard open or empty."""
    moves: tuple[MoveRow, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in DECISION_COLUMNS}
        out["moves"] = [m.to_json() for m in self.moves]
        return out


DECISION_COLUMNS: Final = (
    "match_id",
    "round",
    "action",
    "move_number",
    "seat",
    "player",
    "legal",
    "played",
    "best",
    "played_equity",
    "played_se",
    "best_equity",
    "best_se",
    "loss",
    "loss_se",
    "error",
    "large",
    "decision_seed",
    "exact",
    "phase",
)


def decisions_of(spec: MatchSpec, seat: int | None = None) -> Iterator[Decision]:
    """Every decision of the match (of one seat if given), in play order."""
    match = spec.rebuild()
    number = 0
    for index, rnd in enumerate(spec.rounds):
        match.deal(Deal.of(rnd.hands, rnd.boneyard, rnd.leader))
        for k, text in enumerate(rnd.actions):
            move = Move.parse(text)
            mover = match.turn
            if (seat is None or mover == seat) and len(match.legal_moves()) > 1:
                yield Decision(index, k, number, mover, move, view(match, mover))
            match.apply(move)
            number += 1


def analyse_decision(spec: MatchSpec, decision: Decision, settings: Settings) -> DecisionResult:
    seed = decision_seed(settings.seed, spec.match_id, decision.round, decision.action)
    if settings.exact:
        exact = exact_equities(decision.view, Budget(nodes=EXACT_NODES))
        if exact is not None:
            return result_of(spec, decision, exact, seed, exact=True)
    result = equities(decision.view, rollouts=settings.rollouts, policy=settings.policy, seed=seed)
    return result_of(spec, decision, result, seed)


def result_of(
    spec: MatchSpec, decision: Decision, result: Equities, seed: int, exact: bool = False
) -> DecisionResult:
    played = result.of(decision.played)
    best = result.best
    error = played.loss > 0 and played.loss > ERROR_SE * played.loss_se
    return DecisionResult(
        match_id=spec.match_id,
        round=decision.round,
        action=decision.action,
        move_number=decision.move_number,
        seat=decision.seat,
        player=spec.player(decision.seat),
        legal=len(result.moves),
        played=str(decision.played),
        best=str(best.move),
        played_equity=played.equity,
        played_se=played.se,
        best_equity=best.equity,
        best_se=best.se,
        loss=played.loss,
        loss_se=played.loss_se,
        error=error,
        large=error and played.loss > LARGE_LOSS,
        decision_seed=seed,
        exact=exact,
        phase=phase_of(decision.view),
        moves=tuple(
            MoveRow(
                str(e.move),
                rank,
                e.equity,
                e.se,
                e.loss,
                e.loss_se,
                e.move == decision.played,
            )
            for rank, e in enumerate(result.moves, start=1)
        ),
    )


# -- many decisions, every core ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unit:
    """Decisions `first` .. `first + count - 1` of one match (of `seat`, if given)."""

    spec: MatchSpec
    seat: int | None
    first: int
    count: int


def run_unit(unit: Unit, settings: Settings) -> list[DecisionResult]:
    out = []
    for i, decision in enumerate(decisions_of(unit.spec, unit.seat)):
        if i >= unit.first + unit.count:
            break
        if i >= unit.first:
            out.append(analyse_decision(unit.spec, decision, settings))
    return out


def _run_job(job: tuple[Unit, Settings]) -> list[DecisionResult]:
    return run_unit(*job)


def plan(specs: Sequence[MatchSpec], seat: int | None, workers: int) -> list[Unit]:
    """Units of work: whole matches when there are many, chunks of decisions when few."""
    units = []
    for spec in specs:
        total = sum(1 for _ in decisions_of(spec, seat))
        if total == 0:
            continue
        size = total if len(specs) >= 2 * workers else CHUNK
        units += [Unit(spec, seat, i, min(size, total - i)) for i in range(0, total, size)]
    return units


def analyse(
    specs: Sequence[MatchSpec],
    settings: Settings,
    *,
    seat: int | None = None,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    ray_address: str | None = None,
) -> list[DecisionResult]:
    """Every decision of `specs` (of `seat` only, if given), on `workers` processes (default:
    every core) or as Ray tasks (`ray_address`), in match order then play order.
    `progress(n)` is told of every n decisions done."""
    workers = max(1, workers or os.cpu_count() or 1)
    units = plan(specs, seat, workers)
    done: dict[int, list[DecisionResult]] = {}
    if ray_address is not None:
        from analysis.parallel import ray_unordered

        jobs = [(unit, settings) for unit in units]
        for i, rows in ray_unordered(_run_job, jobs, ray_address, workers):
            done[i] = rows
            if progress is not None:
                progress(len(rows))
    elif workers == 1 or len(units) <= 1:
        for i, unit in enumerate(units):
            done[i] = run_unit(unit, settings)
            if progress is not None:
                progress(len(done[i]))
    else:
        # Spawned workers: no state of this process (a gRPC channel, DuckDB) is inherited.
        with ProcessPoolExecutor(
            max_workers=min(workers, len(units)), mp_context=get_context("spawn")
        ) as pool:
            futures = {pool.submit(run_unit, unit, settings): i for i, unit in enumerate(units)}
            for future in as_completed(futures):
                done[futures[future]] = future.result()
                if progress is not None:
                    progress(len(done[futures[future]]))
    return [r for i in range(len(units)) for r in done[i]]


def count_decisions(specs: Sequence[MatchSpec], seat: int | None = None) -> int:
    return sum(1 for spec in specs for _ in decisions_of(spec, seat))


# -- per player ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlayerSummary:
    player: str
    decisions: int
    total_loss: float
    mean_loss: float
    errors: int
    error_rate: float
    large: int

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in PLAYER_COLUMNS}


PLAYER_COLUMNS: Final = (
    "player",
    "decisions",
    "total_loss",
    "mean_loss",
    "errors",
    "error_rate",
    "large",
)


def players(results: Sequence[DecisionResult]) -> list[PlayerSummary]:
    """Per player (its name when the match says, else its seat): decisions, equity lost in
    total and per decision, errors and their rate, large losses."""
    groups: dict[str, list[DecisionResult]] = {}
    for r in results:
        groups.setdefault(r.player, []).append(r)
    out = []
    for name in sorted(groups):
        rows = groups[name]
        total = math.fsum(r.loss for r in rows)
        errors = sum(r.error for r in rows)
        out.append(
            PlayerSummary(
                name,
                len(rows),
                total,
                total / len(rows),
                errors,
                errors / len(rows),
                sum(r.large for r in rows),
            )
        )
    return out

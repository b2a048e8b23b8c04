"""Rollout analyses for the Analyze RPCs, run in worker processes off the event loop.

An analysis is seconds of CPU in Python and the playout kernel. Run on the
server's event loop or in its hub threads it would hold the interpreter's
lock and slow every other call, so it runs in a small pool of **spawned**
processes (no state of the server is inherited) at a lower scheduling
priority, and only a bounded number may be under way at once; more are
refused, not queued.

The functions run in the workers take only plain values and a `SeatView`,
never a match: what the analysis may see is decided before it starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Final, ParamSpec, TypeVar

from service.errors import LimitReached, ServiceStopping
from sniff import Move, Tile
from sniff.errors import SniffError
from sniff.playout import PlayoutState
from sniff.position import ImpossiblePosition, seat_position
from sniff.rollout import Equities, equities
from sniff.solver import Budget, MoveBounds, NotSolved, Solution, solve
from sniff.tiles import BIT
from sniff.variants import Variant, variant_named
from sniff.view import SeatView

P = ParamSpec("P")
R = TypeVar("R")

ANALYSIS_WORKERS: Final = 2
"""Worker processes (at most the machine's cores)."""
MAX_ANALYSES: Final = 8
"""Analyses under way at once (running or waiting for a worker); more are refused."""
ANALYSIS_NICE: Final = 10
"""The workers' niceness: on a busy machine, play goes first."""


def analyse_view(
    view: SeatView, rollouts: int | None, millis: float, policy: str, seed: int
) -> Equities:
    """Worker: the equities of the viewer's legal moves (its turn, checked by the caller)."""
    view = view._replace(variant=variant_named(view.variant.name))  # the worker's own variant
    return equities(view, rollouts=rollouts, millis=millis, policy=policy, seed=seed)


@dataclass(frozen=True, slots=True)
class Unsolved:
    """What a Solve proved when its budget ran out (`solver.NotSolved` as plain values,
    which a worker can send back)."""

    moves: tuple[MoveBounds, ...]
    low: float
    high: float
    nodes: int


def solve_position(
    *,
    variant: str,
    seats: int,
    target: int,
    scores: Sequence[int],
    placements: Sequence[str],
    hands: Sequence[Sequence[int]],
    boneyard: Sequence[int],
    turn: int,
    drawn: int,
    nodes: int | None,
    millis: float,
) -> Solution | Unsolved:
    """Worker: the position as a `PlayoutState` (checked: ImpossiblePosition), solved with
    every tile seen by every seat (the double-dummy value; with two seats and an empty
    boneyard, what the players know)."""
    masks = []
    for hand in hands:
        mask = 0
        for t in hand:
            if mask & BIT[t]:
                raise ImpossiblePosition(f"tile {Tile(t)} is twice in one hand", "hands")
            mask |= BIT[t]
        masks.append(mask)
    try:
        state = PlayoutState(
            variant_named(variant),
            seats,
            target,
            tuple(scores),
            tuple(Move.parse(p) for p in placements),
            tuple(masks),
            tuple(boneyard),
            turn,
            drawn,
        )
    except SniffError as e:
        raise ImpossiblePosition(f"no round holds this position: {e}", "position") from None
    try:
        return solve(state, Budget(nodes=nodes, millis=millis), double_dummy=True)
    except NotSolved as e:
        return Unsolved(e.moves, e.low, e.high, e.nodes)


def analyse_position(
    *,
    variant: str,
    seats: int,
    target: int,
    scores: Sequence[int],
    viewer: int,
    leader: int,
    hand: Sequence[int],
    actions: Sequence[str],
    own_draws: Sequence[int],
    hand_sizes: Sequence[int],
    rollouts: int | None,
    millis: float,
    policy: str,
    seed: int,
) -> Equities:
    """Worker: rebuild the seat's view from its picture (checked: ImpossiblePosition), then
    analyse it as `analyse_view`."""
    chosen: Variant = variant_named(variant)
    view = seat_position(
        variant=chosen,
        seats=seats,
        target=target,
        scores=scores,
        viewer=viewer,
        leader=leader,
        hand=[Tile(t) for t in hand],
        actions=[Move.parse(a) for a in actions],
        own_draws=[Tile(t) for t in own_draws],
        hand_sizes=hand_sizes,
    )
    if view.turn != viewer:
        raise ImpossiblePosition(
            f"after these actions it is seat {view.turn}'s turn, not the viewer's (seat "
            f"{viewer}): an analysis is made for the seat to play",
            "viewer_seat",
        )
    return equities(view, rollouts=rollouts, millis=millis, policy=policy, seed=seed)


def _lower_priority() -> None:
    with contextlib.suppress(OSError, AttributeError):
        os.nice(ANALYSIS_NICE)


class AnalysisPool:
    """At most `MAX_ANALYSES` analyses under way, on `workers` spawned processes made on
    first use. Call `run` on the event loop only (its count is kept there, without a lock)."""

    def __init__(self, workers: int = ANALYSIS_WORKERS) -> None:
        self.workers = max(1, min(workers, os.cpu_count() or 1))
        self._executor: ProcessPoolExecutor | None = None
        self._under_way = 0
        self._closed = False

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=get_context("spawn"),
                initializer=_lower_priority,
            )
        return self._executor

    async def run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        if self._closed:
            raise ServiceStopping("the service is stopping: try again once it is back")
        if self._under_way >= MAX_ANALYSES:
            raise LimitReached(
                "running_analyses",
                f"{MAX_ANALYSES} analyses are already under way: try again when they end",
            )
        self._under_way += 1
        try:
            loop = asyncio.get_running_loop()
            call = functools.partial(fn, *args, **kwargs)
            try:
                return await loop.run_in_executor(self._pool(), call)
            except BrokenProcessPool:
                # A worker died (killed, out of memory): start afresh for the next call.
                broken, self._executor = self._executor, None
                if broken is not None:
                    broken.shutdown(wait=False, cancel_futures=True)
                raise ServiceStopping("the analysis worker stopped: try again") from None
        finally:
            self._under_way -= 1

    def close(self) -> None:
        """Refuse new analyses and stop the workers (those running finish their budget)."""
        self._closed = True
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

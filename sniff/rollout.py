"""Rollout equity: what each legal move is worth to the seat to play, seen from its view only.

The **equity** of a move is the expected round net result for the mover's
side from this decision to the end of the round, the move included: the
points the side scores for the rest of the round minus the deductions taken
from its hands at the round's end, minus the same for the other sides —
with three seats, minus the **mean** of the two others (as docs/statistics.md's
"value of a round"), with two or four the one other side. A round that the
match's target ends mid-round has no deductions (docs/rules.md §8).

It is estimated by determinized Monte Carlo: the hidden tiles (the other
hands, the boneyard order) are drawn from `sampler.Sampler`, exactly and
uniformly among the deals consistent with the seat's view, and the rest of
the round is played out by a built-in policy (`greedy` by default, or
`random`) for every seat, the candidate move first. The analysis takes a
`SeatView` and nothing else, so it cannot read a hidden tile.

**Common random numbers.** Every candidate move is played out on the same
sampled deals with the same playout seeds, so the difference between two
moves is measured on identical worlds: its standard error (`loss_se`, from
the per-rollout differences) is far smaller than the two moves' own errors
combined. The best move is the one with the highest estimated equity (ties:
the first in canonical order); choosing it from noisy estimates biases the
losses of the others slightly upwards, which more rollouts shrink.

**Budget.** `rollouts` samples per move, or `millis` of wall time (whole
batches of `BATCH` samples until the time is up), or both (whichever ends
first). A budget in rollouts is reproducible from the seed: the same view,
seed, policy and rollouts give the same figures on either playout backend
(they make the same moves). A budget in time reproduces a prefix: its
first k samples are those of `rollouts=k`.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from sniff import playout
from sniff.errors import SniffError
from sniff.match import Deal, Phase
from sniff.moves import Move, MoveKind
from sniff.playout import POLICIES, PlayoutState, Policy
from sniff.rules import team_count
from sniff.sampler import Sampler
from sniff.solver import Budget, NotSolved, solve
from sniff.tiles import BIT
from sniff.view import SeatView

MIN_ROLLOUTS: Final = 2
"""A standard error needs two samples."""
MAX_ROLLOUTS: Final = 1_000_000
"""Far beyond any useful budget: a million samples per move take minutes."""
MAX_MILLIS: Final = 600_000
"""Ten minutes of wall time per decision."""
DEFAULT_ROLLOUTS: Final = 200
BATCH: Final = 32
"""Samples drawn and played per round trip to the playout kernel."""

BOT_ROLLOUTS: Final = 600
"""The `rollout` bot's default budget per move: under 50 ms a move on the development
machine (`scripts/bench_rollout.py` measures it)."""


class BadBudget(SniffError):
    """A budget of no rollouts or time, or an absurdly large one."""

    kind = "bad_budget"


class NotToPlay(SniffError):
    """The view's seat is not the seat to play (or no round is in play): nothing to decide."""

    kind = "not_to_play"


@dataclass(frozen=True, slots=True)
class MoveEquity:
    """One legal move's estimated equity and how far it falls behind the best."""

    move: Move
    equity: float
    se: float
    """Standard error of `equity`."""
    loss: float
    """The best move's equity minus this one's (0 for the best)."""
    loss_se: float
    """Standard error of `loss`, from the paired per-rollout differences (0 for the best)."""


@dataclass(frozen=True, slots=True)
class Equities:
    """Every legal move of a decision, best first, and how they were estimated."""

    moves: tuple[MoveEquity, ...]
    rollouts: int
    """Samples per move (every move was played out on the same ones)."""
    policy: str
    seed: int

    @property
    def best(self) -> MoveEquity:
        return self.moves[0]

    def of(self, move: Move) -> MoveEquity:
        """The entry of `move` (KeyError if it is not one of the legal moves analysed)."""
        for entry in self.moves:
            if entry.move == move:
                return entry
        raise KeyError(f"{move} is not a legal move of this decision")


def check_budget(
    rollouts: int | None, millis: float | None, unit: str = "rollouts per move"
) -> None:
    """Refuse a budget of nothing, or more than `MAX_ROLLOUTS` / `MAX_MILLIS`; `unit` names
    the count in the message (the search bot counts playouts per move)."""
    if rollouts is not None and (
        isinstance(rollouts, bool)
        or not isinstance(rollouts, int)
        or not MIN_ROLLOUTS <= rollouts <= MAX_ROLLOUTS
    ):
        raise BadBudget(
            f"{unit} must be a whole number from {MIN_ROLLOUTS} to "
            f"{MAX_ROLLOUTS:,}, not {rollouts!r}"
        )
    if millis is not None and (
        isinstance(millis, bool)
        or not isinstance(millis, int | float)
        or not 0 < millis <= MAX_MILLIS
        or math.isnan(millis)
    ):
        raise BadBudget(
            f"a time budget must be more than 0 and at most {MAX_MILLIS:,} ms, not {millis!r}"
        )


def policy_named(policy: str | Policy) -> Policy:
    if isinstance(policy, Policy):
        return policy
    try:
        return POLICIES[policy]
    except KeyError:
        raise ValueError(f"no playout policy {policy!r} (one of {', '.join(POLICIES)})") from None


def equities(
    view: SeatView,
    *,
    rollouts: int | None = None,
    millis: float | None = None,
    policy: str | Policy = Policy.GREEDY,
    seed: int = 0,
    backend: str | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Equities:
    """The equity of each of the viewer's legal moves by rollouts (the module's text).

    Without a budget, `DEFAULT_ROLLOUTS`. Raises `NotToPlay` unless the view's
    seat is to play, `BadBudget` for a budget out of bounds, and the sampler's
    `ImpossibleView` for a view no real match can produce.
    """
    check_budget(rollouts, millis)
    if rollouts is None and millis is None:
        rollouts = DEFAULT_ROLLOUTS
    pol = policy_named(policy)
    if view.viewer is None or view.phase is not Phase.PLAYING or view.turn != view.viewer:
        raise NotToPlay("the analysis is made for the seat to play, from its own view")
    moves = view.legal_moves()
    sampler = Sampler(view)
    determinize = _Determinizer(view)
    rng = random.Random(seed)
    side = view.teams[view.viewer]
    wanted = MAX_ROLLOUTS if rollouts is None else rollouts
    deadline = None if millis is None else clock() + millis / 1000.0
    values: list[list[float]] = [[] for _ in moves]
    done = 0
    while done < wanted:
        size = min(BATCH, wanted - done)
        batch = _paired_batch(sampler, determinize, rng, moves, size, pol, side, backend)
        for i, got in enumerate(batch):
            values[i].extend(got)
        done += size
        if deadline is not None and done >= MIN_ROLLOUTS and clock() >= deadline:
            break
    return _summarize(moves, values, done, str(pol), seed)


def _paired_batch(
    sampler: Sampler,
    determinize: _Determinizer,
    rng: random.Random,
    moves: Sequence[Move],
    size: int,
    policy: Policy,
    side: int,
    backend: str | None,
) -> list[tuple[float, ...]]:
    """`size` sampled deals and playout seeds, and every move played out first on all of
    them (common random numbers): per move, `side`'s net result of each playout. The one
    batch of the rollout analysis and of the search bot's root prior (ismcts.py)."""
    states = [determinize.state(sampler.sample(rng)) for _ in range(size)]
    seeds = [rng.getrandbits(64) for _ in range(size)]
    return [
        tuple(playout.rollouts(states, policy, seeds, first=move, backend=backend).net(side))
        for move in moves
    ]


EXACT: Final = "exact"
"""The `policy` of `Equities` that were computed, not estimated (`exact_equities`)."""


def exact_equities(view: SeatView, budget: Budget) -> Equities | None:
    """The exact value of each of the viewer's legal moves when the view shows every tile:
    two seats and an empty boneyard, where the other hand is every tile neither on the
    layout nor the viewer's (docs/analysis.md, "Exact endgames"). The value is the equity
    under perfect play by both seats, where `equities` estimates it under a policy's play.

    `Equities` like `equities`' (best first, ties in canonical order) with no standard
    error, `EXACT` as the policy and no rollouts; None when some tile is hidden from the
    viewer or `budget` runs out first (then the caller estimates by rollouts)."""
    if view.viewer is None or view.phase is not Phase.PLAYING or view.turn != view.viewer:
        raise NotToPlay("the analysis is made for the seat to play, from its own view")
    if view.seats != 2 or view.boneyard_size:
        return None
    deal = Sampler(view).sample(random.Random(0))  # the one deal the view allows
    state = _Determinizer(view).state(deal)
    try:
        solution = solve(state, budget)
    except NotSolved:
        return None
    ranked = sorted(enumerate(solution.moves), key=lambda e: (-e[1].value, e[0]))
    top = ranked[0][1].value
    return Equities(
        tuple(MoveEquity(m.move, m.value, 0.0, top - m.value, 0.0) for _, m in ranked),
        0,
        EXACT,
        0,
    )


def _mean_se(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return mean, math.inf
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def _summarize(
    moves: Sequence[Move], values: Sequence[Sequence[float]], n: int, policy: str, seed: int
) -> Equities:
    stats = [_mean_se(v) for v in values]
    best = max(range(len(moves)), key=lambda i: (stats[i][0], -i))
    top = values[best]
    entries = []
    for i, move in enumerate(moves):
        mean, se = stats[i]
        if i == best:
            loss, loss_se = 0.0, 0.0
        else:
            loss, loss_se = _mean_se([b - v for b, v in zip(top, values[i], strict=True)])
        entries.append((-mean, i, MoveEquity(move, mean, se, loss, loss_se)))
    entries.sort(key=lambda e: (e[0], e[1]))
    return Equities(tuple(e[2] for e in entries), n, policy, seed)


class _Determinizer:
    """Turns sampled deals of the round into playout states of the view's position: the
    round's public actions replayed on each deal's hands and boneyard. The view's public
    facts (layout, scores, turn, pending draw) are read once and shared by every state."""

    def __init__(self, view: SeatView) -> None:
        self.view = view
        sides = team_count(view.seats)
        scores = [0] * sides
        for seat, score in enumerate(view.scores):
            scores[view.teams[seat]] = score
        self.scores = tuple(scores)
        self.placements = view.placements
        self.drawn = -1 if view.drawn is None else int(view.drawn)
        # Per action: the seat and what it did to its hand (None: a draw).
        steps: list[tuple[int, int | None]] = []
        seat = view.leader if view.leader is not None else 0
        for move in view.round_actions:
            if move.kind is MoveKind.DRAW:
                steps.append((seat, None))
                continue
            if move.kind is not MoveKind.PASS:
                assert move.tile is not None
                steps.append((seat, BIT[move.tile]))
            seat = (seat + 1) % view.seats
        self.steps = tuple(steps)
        self.first: PlayoutState | None = None
        """The first state made, checked in full; the others are made from it."""

    def state(self, deal: Deal) -> PlayoutState:
        view = self.view
        hands = [0] * view.seats
        for s, hand in enumerate(deal.hands):
            for t in hand:
                hands[s] |= BIT[t]
        bone = deal.boneyard
        pos = 0
        for seat, bit in self.steps:
            if bit is None:
                hands[seat] |= BIT[bone[pos]]
                pos += 1
            else:
                hands[seat] ^= bit
        if self.first is not None:
            return self.first.with_hidden(hands, bone[pos:])
        assert view.turn is not None
        self.first = PlayoutState(
            view.variant,
            view.seats,
            view.target,
            self.scores,
            self.placements,
            tuple(hands),
            tuple(bone[pos:]),
            view.turn,
            self.drawn,
        )
        return self.first


# -- the bot --------------------------------------------------------------------


class RankedView(Protocol):
    """A position a bot cannot rebuild as a `SeatView` (a remote client's picture) but can
    have analysed where it was served (the service's Analyze call)."""

    def legal_moves(self) -> list[Move]: ...

    def ranked_moves(self, rollouts: int | None, millis: float | None, seed: int) -> list[Move]:
        """The legal moves, best first, by the same rollouts made where the view lives."""
        ...


class RolloutBot:
    """Chooses by determinized Monte Carlo rollouts: the move of highest equity (module text)
    from its own seat's view, `rollouts` samples per move (default `BOT_ROLLOUTS`) and/or
    at most `millis` per decision; a forced move is made at once. Reproducible from its seed
    with a budget in rollouts."""

    name = "rollout"

    def __init__(
        self,
        seed: int | None = None,
        *,
        rollouts: int | None = None,
        millis: float | None = None,
        policy: str | Policy = Policy.GREEDY,
    ) -> None:
        check_budget(rollouts, millis)
        self.rollouts = BOT_ROLLOUTS if rollouts is None and millis is None else rollouts
        self.millis = millis
        self.policy = policy_named(policy)
        self.rng = random.Random(seed)

    def choose(self, view: object) -> Move:
        legal: list[Move] = view.legal_moves()  # type: ignore[attr-defined]
        if len(legal) == 1:
            return legal[0]
        winning = _winning_move(view, legal)
        if winning is not None:
            return winning
        seed = self.rng.getrandbits(64)
        if isinstance(view, SeatView):
            result = equities(
                view, rollouts=self.rollouts, millis=self.millis, policy=self.policy, seed=seed
            )
            return result.best.move
        ranked = getattr(view, "ranked_moves", None)
        if ranked is None:
            raise TypeError(
                "the rollout bot needs its seat's SeatView, or a view that can be analysed "
                "where it was served (ranked_moves)"
            )
        best: Move = ranked(self.rollouts, self.millis, seed)[0]
        return best


def _winning_move(view: object, legal: Sequence[Move]) -> Move | None:
    """A placement that reaches the target at once, scoring most, if the view shows the
    seat's score and the target: equity counts the round's points, but a win ends the match
    and nothing beats it."""
    if isinstance(view, SeatView):
        if view.viewer is None:
            return None
        score, target = view.scores[view.viewer], view.target
    else:
        own, goal = getattr(view, "own_score", None), getattr(view, "target", None)
        if not isinstance(own, int) or not isinstance(goal, int):
            return None
        score, target = own, goal
    points_after = view.points_after  # type: ignore[attr-defined]
    best: Move | None = None
    top = 0
    for move in legal:
        points = points_after(move) if move.is_placement else 0
        if points and score + points >= target and points > top:
            best, top = move, points
    return best


__all__ = [
    "BATCH",
    "BOT_ROLLOUTS",
    "DEFAULT_ROLLOUTS",
    "MAX_MILLIS",
    "MAX_ROLLOUTS",
    "MIN_ROLLOUTS",
    "BadBudget",
    "Equities",
    "MoveEquity",
    "NotToPlay",
    "RankedView",
    "RolloutBot",
    "check_budget",
    "equities",
    "policy_named",
]

"""The values luck is measured with: a position's equity to one seat, and a round's before its deal.

Luck (docs/analysis.md, "Luck") is the change a chance event makes to the
equity of the side it happens to. Both ends of that change are estimated
here, by the same determinized rollouts as a move's equity (`rollout.py`)
but with no candidate move: every seat, the one to play included, plays the
rest of the round by the playout policy. So the equity of a position is the
expected round net result of the viewer's side under the policy's play, and
the equity after a chance event averages, over the event's outcomes as the
seat's view weighs them (the exact sampler), to the equity before it: a
chance event's luck has mean zero, which is what makes it luck.

* `position_values`: from one seat's view (whether or not it is to play),
  the round's net result for its side in each rollout;
* `deal_values`: before a round is dealt, from nobody's view (the scores,
  the leader and the rules are all that is known), each side's net result in
  rollouts over uniformly shuffled deals.

Each returns the per-rollout values, not only their mean, so that a caller
summing many estimates can give its sum an honest standard error (values of
one rollout set are correlated across sides). Reproducible from the seed on
either playout backend.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sniff import playout
from sniff.match import Phase
from sniff.playout import PlayoutState, Policy
from sniff.rollout import BATCH, _Determinizer, check_budget, policy_named
from sniff.rules import HAND_SIZE, team_count
from sniff.sampler import Sampler
from sniff.tiles import BIT
from sniff.variants import Variant
from sniff.view import SeatView


@dataclass(frozen=True, slots=True)
class Values:
    """Per side, the round's net result in each rollout (one rollout set: index i of every
    side is the same playout)."""

    by_side: tuple[tuple[float, ...], ...]

    @staticmethod
    def known(by_side: Sequence[float]) -> Values:
        """A result already known (the round is over): every rollout would give it."""
        return Values(tuple((float(v), float(v)) for v in by_side))

    @property
    def count(self) -> int:
        return len(self.by_side[0])

    def mean(self, side: int) -> float:
        return math.fsum(self.by_side[side]) / self.count

    def se(self, side: int) -> float:
        return combined_se([(self, side, 1.0)])


def combined_se(terms: Sequence[tuple[Values, int, float]]) -> float:
    """The standard error of the sum of coefficient * mean(values, side) over `terms`: rollout
    sets are independent of each other, but one set's sides are not, so each set's terms are
    combined playout by playout before its variance is taken."""
    by_set: dict[int, tuple[Values, list[tuple[int, float]]]] = {}
    for values, side, coefficient in terms:
        by_set.setdefault(id(values), (values, []))[1].append((side, coefficient))
    variance = 0.0
    for values, parts in by_set.values():
        n = values.count
        if n < 2:
            return math.inf
        series = [math.fsum(c * values.by_side[s][i] for s, c in parts) for i in range(n)]
        mean = math.fsum(series) / n
        variance += math.fsum((x - mean) ** 2 for x in series) / (n - 1) / n
    return math.sqrt(variance)


def position_values(
    view: SeatView,
    *,
    rollouts: int,
    policy: str | Policy = Policy.GREEDY,
    seed: int = 0,
    backend: str | None = None,
) -> Values:
    """The round's net result for each side in `rollouts` playouts of the position `view` shows,
    hidden tiles drawn by the exact sampler from the view, every seat playing `policy`. Only
    the viewer's side's values are its equity (the others' are seen through its eyes)."""
    check_budget(rollouts, None)
    if view.viewer is None or view.phase is not Phase.PLAYING:
        raise ValueError("a position's equity is seen from one seat's view of a round in play")
    sampler = Sampler(view)
    determinize = _Determinizer(view)
    rng = random.Random(seed)
    return _played(
        lambda: determinize.state(sampler.sample(rng)), rng, view.seats, rollouts, policy, backend
    )


def deal_values(
    variant: Variant,
    seats: int,
    target: int,
    scores: Sequence[int],
    leader: int,
    *,
    rollouts: int,
    policy: str | Policy = Policy.GREEDY,
    seed: int = 0,
    backend: str | None = None,
) -> Values:
    """Each side's net result in `rollouts` playouts of a round not yet dealt: `scores` per
    side before it, `leader` to lead, every deal equally likely (each rollout shuffles the
    28 tiles afresh), every seat playing `policy`."""
    check_budget(rollouts, None)
    rng = random.Random(seed)
    size = HAND_SIZE[seats]
    tiles = list(range(28))
    first: PlayoutState | None = None

    def dealt() -> PlayoutState:
        nonlocal first
        rng.shuffle(tiles)
        hands = [sum(BIT[t] for t in tiles[s * size : (s + 1) * size]) for s in range(seats)]
        boneyard = tiles[seats * size :]
        if first is None:
            first = PlayoutState(
                variant, seats, target, tuple(scores), (), tuple(hands), tuple(boneyard), leader
            )
            return first
        return first.with_hidden(hands, boneyard)

    return _played(dealt, rng, seats, rollouts, policy, backend)


def _played(
    state: Callable[[], PlayoutState],
    rng: random.Random,
    seats: int,
    rollouts: int,
    policy: str | Policy,
    backend: str | None,
) -> Values:
    """`rollouts` playouts in batches of `BATCH`: each batch's states from `state()`, then its
    playout seeds from `rng` (the order that makes a seed reproduce the same figures)."""
    pol = policy_named(policy)
    out: list[list[float]] = [[] for _ in range(team_count(seats))]
    done = 0
    while done < rollouts:
        size = min(BATCH, rollouts - done)
        states = [state() for _ in range(size)]
        seeds = [rng.getrandbits(64) for _ in range(size)]
        played = playout.rollouts(states, pol, seeds, backend=backend)
        for side, values in enumerate(out):
            values.extend(played.net(side))
        done += size
    return Values(tuple(tuple(v) for v in out))


__all__ = ["Values", "combined_se", "deal_values", "position_values"]

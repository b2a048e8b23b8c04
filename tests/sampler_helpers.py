"""Exhaustive enumeration of what one seat cannot see, for the sampler's and the rollouts' tests.

Nothing here uses the sampler's model of the history. Every candidate deal
of the round is built from the hidden places of the true deal (the other
hands and the boneyard positions the viewer did not draw), replayed through
the engine from the start of the round, and kept when it gives the viewer
exactly the view it had. To keep the count of candidates small, two facts
the replay would check anyway are used while building them: a tile placed
straight after a draw by the same seat is the drawn tile, and a tile a seat
placed came from its dealt hand or from a tile it drew. Hands are sets and
the undrawn boneyard is taken in one order, so each candidate stands for
one assignment of tiles to hands and drawn positions.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterator

from sniff import HAND_SIZE, Deal, IllegalMove, Match, MoveKind, Phase, make_bot, view
from sniff.tiles import TILES

World = tuple[object, ...]


def positions(
    seats: int, variant: str, seed: int, kinds: tuple[str, ...]
) -> Iterator[tuple[Match, int]]:
    """Every decision point of a bot match: (the match, the seat to play)."""
    match = Match(seats, seed=seed, variant=variant, round_limit=3)
    bots = [make_bot(kinds[s % len(kinds)], seed * 7 + s) for s in range(seats)]
    while match.phase is not Phase.OVER:
        if match.phase is Phase.AWAITING_DEAL:
            match.deal()
            continue
        yield match, match.turn
        match.apply(bots[match.turn].choose(view(match, match.turn)))


def decisions(seats: int, seed: int, count: int, variant: str = "american") -> Iterator[Match]:
    """Positions of a bot match where the seat to play has a choice (copies)."""
    found = 0
    for match, seat in positions(seats, variant, seed, ("greedy", "random")):
        if len(view(match, seat).legal) > 1:
            yield match.copy()
            found += 1
            if found >= count:
                return


def world_of(match: Match, viewer: int) -> World:
    """What the viewer cannot see of the current position: other hands and the boneyard."""
    others = tuple(frozenset(match.hand(s)) for s in range(match.seats) if s != viewer)
    return (*others, frozenset(match.boneyard[match.bone_pos :]))


class Round:
    """The facts of the current round the enumeration needs, read from the true match."""

    def __init__(self, match: Match, viewer: int) -> None:
        self.match = match
        self.viewer = viewer
        self.deal = match.history[-1].deal
        actions = match.history[-1].actions
        seats = match.seats
        self.others = [s for s in range(seats) if s != viewer]
        self.draw_seats = list(match.draw_seats)
        drawn = len(self.draw_seats)
        # Who did each action; which draw each action follows.
        seat = self.deal.leader
        placed: dict[int, list[int]] = {s: [] for s in range(seats)}
        forced: dict[int, int] = {}
        """Boneyard position -> the tile placed straight after it was drawn."""
        position = 0
        for k, move in enumerate(actions):
            if move.kind is MoveKind.DRAW:
                position += 1
                continue
            if move.is_placement:
                assert move.tile is not None
                placed[seat].append(move.tile)
                if k > 0 and actions[k - 1].kind is MoveKind.DRAW:
                    forced[position - 1] = move.tile
            seat = (seat + 1) % seats
        self.placed = placed
        self.forced = forced
        self.hidden_draws = [k for k in range(drawn) if self.draw_seats[k] != viewer]
        self.undrawn = len(self.deal.boneyard) - drawn
        own_draws = {self.deal.boneyard[k] for k in range(drawn) if self.draw_seats[k] == viewer}
        self.pool = sorted(set(range(28)) - set(self.deal.hands[viewer]) - own_draws)

    def count_bound(self) -> int:
        """An upper bound of the number of candidates (to pick small cases)."""
        free = len(self.pool)
        total = 1
        for k in self.hidden_draws:
            if k not in self.forced:
                total *= free
        size = HAND_SIZE[self.match.seats]
        left = free - len(self.hidden_draws)
        for s in self.others:
            need = max(size - len(self.placed[s]), 0)
            total *= math.comb(left, need)
            left -= need
        return total

    def candidates(self) -> Iterator[Deal]:
        deal = self.deal
        size = HAND_SIZE[self.match.seats]
        draws = self.hidden_draws
        for drawn in self._draw_choices(0, frozenset(self.pool)):
            left = frozenset(self.pool) - set(drawn)
            by_seat: dict[int, set[int]] = {s: set() for s in self.others}
            for k, t in zip(draws, drawn, strict=True):
                by_seat[self.draw_seats[k]].add(t)
            required = {s: set(self.placed[s]) - by_seat[s] for s in self.others}
            for hands in self._hands(0, left, required, size):
                rest = left - {t for h in hands for t in h}
                new_hands = list(deal.hands)
                for s, h in zip(self.others, hands, strict=True):
                    new_hands[s] = tuple(TILES[t] for t in sorted(h))
                bone = list(deal.boneyard)
                for k, t in zip(draws, drawn, strict=True):
                    bone[k] = TILES[t]
                start = len(self.draw_seats)
                for k, t in zip(range(start, len(bone)), sorted(rest), strict=True):
                    bone[k] = TILES[t]
                yield Deal(tuple(new_hands), tuple(bone), deal.leader)

    def _draw_choices(self, i: int, left: frozenset[int]) -> Iterator[tuple[int, ...]]:
        if i == len(self.hidden_draws):
            yield ()
            return
        k = self.hidden_draws[i]
        options = [self.forced[k]] if k in self.forced else sorted(left)
        for t in options:
            if t not in left:
                continue
            for rest in self._draw_choices(i + 1, left - {t}):
                yield (t, *rest)

    def _hands(
        self, i: int, left: frozenset[int], required: dict[int, set[int]], size: int
    ) -> Iterator[tuple[frozenset[int], ...]]:
        if i == len(self.others):
            if len(left) == self.undrawn:
                yield ()
            return
        seat = self.others[i]
        need = required[seat]
        if not need <= left or len(need) > size:
            return
        free = sorted(left - need)
        for extra in itertools.combinations(free, size - len(need)):
            hand = frozenset(need | set(extra))
            for rest in self._hands(i + 1, left - hand, required, size):
                yield (hand, *rest)


def enumerate_positions(match: Match, viewer: int) -> tuple[Counter[World], dict[World, Match]]:
    """Every consistent candidate deal, replayed: how many give each world, and one position
    (a match at the same point) per world."""
    from sniff.sampler import position_of

    seen = view(match, viewer)
    worlds: Counter[World] = Counter()
    examples: dict[World, Match] = {}
    for candidate in Round(match, viewer).candidates():
        try:
            imagined = position_of(seen, candidate)
        except IllegalMove:
            continue
        if view(imagined, viewer) == seen:
            world = world_of(imagined, viewer)
            worlds[world] += 1
            examples.setdefault(world, imagined)
    return worlds, examples


def small_cases(
    seats: int, limit: int, *, low: int = 30, seeds: range = range(400)
) -> Iterator[tuple[Match, int]]:
    """Positions where someone other than the viewer drew or passed, with at most `limit`
    candidates to enumerate (one per match)."""
    for seed in seeds:
        for match, seat in positions(seats, "american", seed, ("greedy", "random")):
            others_drew = any(s != seat for s in match.draw_seats) or any(
                m.kind is MoveKind.PASS for m in match.history[-1].actions
            )
            if not others_drew:
                continue
            if low <= Round(match, seat).count_bound() <= limit:
                yield match.copy(), seat
                break

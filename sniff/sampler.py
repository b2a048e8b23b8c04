"""The hidden tiles as one seat may imagine them: exact sampling from its view.

Every estimate made for a seat (rollouts, analysis, the `rollout` bot) must
use only what that seat saw. This module turns a `SeatView` into the set of
deals consistent with it and samples them **uniformly** — the posterior of
a uniform shuffle given the public facts, with no guess about how the other
players choose among their legal moves:

* the seat's own hand and its own draws (it saw them);
* the layout, every hand's size, the boneyard's size;
* the public history of the round: who placed what, and who drew or passed
  when. A player who drew or passed held no tile placeable on an open side
  at that moment; a drawn tile that was not placed at once was not
  placeable when drawn; a drawn tile placed at once is that placed tile.
  A tile drawn by another player is otherwise unknown.

The model. Each other seat j has *entry classes*: its dealt hand (capacity:
the hand size) and, for each turn in which it kept drawn tiles, one class
holding those tiles (they share their constraints). Every tile that is not
the viewer's and not known to have been drawn and placed at once goes to one
class or to the rest of the boneyard: a tile still unseen to any class of
any seat or to the boneyard; a tile seat j placed from its hand to one of j's
classes that it entered before the placement. A tile fits a class of seat j
when it avoids the open values of every draw or pass of j from the class's
entry until the tile left j's hand. Consistent deals correspond one to one
to such assignments (times the orders of the kept draws within a turn and of
the rest of the boneyard, which are uniform and independent), so sampling
an assignment uniformly samples the deals uniformly.

Tiles with the same fits form a group; the number of assignments is a
product of binomials summed over how many tiles of each group go to each
class, counted once by dynamic programming over the groups (exact integers),
and then sampled by walking the same table.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from math import comb

from sniff.layout import SLOT_VALUE, Layout, points_for
from sniff.match import Deal, Match, Phase
from sniff.moves import MoveKind
from sniff.rules import HAND_SIZE, team_of
from sniff.tiles import HIGH, LOW, SET_SIZE, TILES, Tile, tiles_of
from sniff.view import SeatView

Split = tuple[int, ...]
"""A count per entry class."""


class ImpossibleView(ValueError):
    """A view no deal is consistent with (it cannot come from a real match)."""


@dataclass(frozen=True, slots=True)
class _Event:
    """A draw or pass of another seat: its hand held nothing matching `values` then."""

    seat: int
    time: int
    values: frozenset[int]


@dataclass(frozen=True, slots=True)
class _Class:
    seat: int
    capacity: int
    entry: int
    """The action index at which its tiles entered the hand (-1: dealt)."""
    positions: tuple[int, ...]
    """Boneyard positions of its tiles (kept draws); empty for the dealt hand."""


@dataclass(frozen=True, slots=True)
class _History:
    """The round's public history, read once: who did what, and what it tells."""

    seats_of: tuple[int, ...]
    """The seat of each action."""
    events: tuple[_Event, ...]
    classes: tuple[_Class, ...]
    placed_from_hand: dict[Tile, tuple[int, int]]
    """Tiles other seats placed from their hand (not straight after drawing them):
    tile -> (seat, action index)."""
    draw_tiles: dict[int, Tile]
    """Boneyard positions whose tile the viewer knows: its own draws, and other seats'
    draws placed at once."""


def _read_history(view: SeatView) -> _History:
    if view.leader is None:
        raise ImpossibleView("no round has been dealt")
    layout = Layout(view.variant)
    seat = view.leader
    seats = view.seats
    viewer = view.viewer
    actions = view.round_actions
    seats_of: list[int] = []
    events: list[_Event] = []
    placed_from_hand: dict[Tile, tuple[int, int]] = {}
    draw_tiles: dict[int, Tile] = {}
    own_draws = iter(view.own_draws)
    kept: dict[tuple[int, int], list[int]] = {}
    """(seat, action index of the turn's first kept draw) -> positions of its kept draws."""
    position = 0
    turn_start = 0
    previous_draw: tuple[int, int] | None = None
    """(seat, boneyard position) of a draw whose fate the next action tells."""
    for k, move in enumerate(actions):
        seats_of.append(seat)
        values = frozenset(SLOT_VALUE[s] for s in layout.open)
        if previous_draw is not None and previous_draw[0] == seat and move.is_placement:
            # The drawn tile was placeable: it is the one placed now.
            assert move.tile is not None
            draw_tiles[previous_draw[1]] = TILES[move.tile]
        elif previous_draw is not None and previous_draw[0] != viewer:
            kept.setdefault((previous_draw[0], turn_start), []).append(previous_draw[1])
        previous_draw = None
        if move.kind is MoveKind.DRAW:
            if seat == viewer:
                try:
                    draw_tiles[position] = next(own_draws)
                except StopIteration:
                    raise ImpossibleView("the view's own draws do not match its history") from None
            else:
                events.append(_Event(seat, k, values))
                if k == 0 or seats_of[k - 1] != seat or actions[k - 1].kind is not MoveKind.DRAW:
                    turn_start = k
            previous_draw = (seat, position)
            position += 1
            continue
        if move.kind is MoveKind.PASS:
            if seat != viewer:
                events.append(_Event(seat, k, values))
            seat = (seat + 1) % seats
            continue
        assert move.tile is not None
        tile = TILES[move.tile]
        if seat != viewer and not (k > 0 and actions[k - 1].kind is MoveKind.DRAW):
            placed_from_hand[tile] = (seat, k)
        layout.place(move)
        seat = (seat + 1) % seats
    if previous_draw is not None and previous_draw[0] != viewer:
        # The last action drew: placeable (pending) or kept, the history does not say yet,
        # so that tile gets a class of its own that no draw or pass constrains.
        kept[(previous_draw[0], len(actions))] = [previous_draw[1]]
    if position + view.boneyard_size != SET_SIZE - seats * HAND_SIZE[seats]:
        raise ImpossibleView("the draws and the boneyard's size do not add up")
    classes = [_Class(s, HAND_SIZE[seats], -1, ()) for s in range(seats) if s != viewer]
    classes += [
        _Class(s, len(positions), start, tuple(positions))
        for (s, start), positions in sorted(kept.items())
    ]
    return _History(tuple(seats_of), tuple(events), tuple(classes), placed_from_hand, draw_tiles)


class Sampler:
    """Uniform samples of the deals consistent with one seat's view (see the module's text).

    Build it once per position (the counting is done here) and draw as many
    samples as needed; each sample is the round's original deal, so that
    replaying the round's public actions on it rebuilds a full position.
    """

    def __init__(self, view: SeatView) -> None:
        if view.viewer is None:
            raise ValueError("a sampler imagines what one seat cannot see: give it a seat's view")
        if view.phase is not Phase.PLAYING:
            raise ImpossibleView("no round is in play")
        self.view = view
        history = _read_history(view)
        self._history = history
        placed = {TILES[m.tile] for m in view.placements if m.tile is not None}
        own = set(tiles_of(view.hand_mask))
        known_draws = set(history.draw_tiles.values())
        unseen = [t for t in TILES if t not in own and t not in placed]
        pool = unseen + sorted(history.placed_from_hand)
        if len(unseen) != sum(view.hand_sizes) - len(own) + view.boneyard_size:
            raise ImpossibleView("the hand sizes and the boneyard do not add up")
        if known_draws & own - set(view.own_draws) or known_draws - placed - own:
            raise ImpossibleView("a known draw is neither placed nor in the viewer's hand")
        classes = history.classes
        fits: dict[Tile, tuple[bool, ...]] = {}
        for tile in pool:
            fits[tile] = tuple(self._fits(tile, c) for c in classes)
        # Tiles that fit the same classes, and may or may not stay in the boneyard, form a group.
        groups: dict[tuple[tuple[bool, ...], bool], list[Tile]] = {}
        for tile in pool:
            groups.setdefault((fits[tile], tile in history.placed_from_hand), []).append(tile)
        self._groups = [(key[0], key[1], tiles) for key, tiles in sorted(groups.items())]
        self._capacities = tuple(c.capacity for c in classes)
        self._rest = view.boneyard_size
        self._ways = cache(self._ways_uncached)
        self._steps: dict[tuple[int, int, int, Split], tuple[list[int], int]] = {}
        self._own_dealt, self._bone = self._fixed()
        first = len(self._groups[0][2]) if self._groups else 0
        self.count = self._ways(0, 0, first, self._capacities)
        """How many assignments of tiles to hands and kept draws are consistent (not counting
        the orders of kept draws within a turn and of the boneyard, which are free)."""
        if self.count == 0:
            raise ImpossibleView("no deal is consistent with this view")

    def _fits(self, tile: Tile, c: _Class) -> bool:
        history = self._history
        mover = history.placed_from_hand.get(tile)
        if mover is not None:
            seat, left = mover
            if seat != c.seat or c.entry >= left:
                return False
        else:
            left = len(history.seats_of) + 1
        halves = {LOW[tile], HIGH[tile]}
        for event in history.events:
            if event.seat == c.seat and c.entry <= event.time < left and halves & event.values:
                return False
        return True

    # -- counting and sampling -------------------------------------------
    #
    # `_ways(g, i, left, caps)`: the number of ways to place the `left` tiles of group g
    # not yet placed into classes i, i+1, … (capacities `caps`), then every later group.
    # One step decides how many of them class i takes (and, via binomials, which ones
    # in count only); after the last class the rest of the group goes to the boneyard,
    # which a tile placed from a hand may not.

    def _ways_uncached(self, g: int, i: int, left: int, caps: Split) -> int:
        groups = self._groups
        if g == len(groups):
            return 1 if not any(caps) else 0
        fits, must_place, _ = groups[g]
        if i == len(caps):
            if must_place and left:
                return 0
            if g + 1 == len(groups):
                return 1 if not any(caps) else 0
            return self._ways(g + 1, 0, len(groups[g + 1][2]), caps)
        if not fits[i] or not caps[i] or not left:
            return self._ways(g, i + 1, left, caps)
        total = 0
        for k in range(min(left, caps[i]) + 1):
            after = (*caps[:i], caps[i] - k, *caps[i + 1 :])
            total += comb(left, k) * self._ways(g, i + 1, left - k, after)
        return total

    def _step(self, g: int, i: int, left: int, caps: Split) -> tuple[list[int], int]:
        """The cumulative weights of how many of group g's `left` tiles class i takes, and
        their total (computed once per state of the walk, then reused by every sample)."""
        key = (g, i, left, caps)
        step = self._steps.get(key)
        if step is None:
            cumulative = []
            total = 0
            for k in range(min(left, caps[i]) + 1):
                after = (*caps[:i], caps[i] - k, *caps[i + 1 :])
                total += comb(left, k) * self._ways(g, i + 1, left - k, after)
                cumulative.append(total)
            step = self._steps[key] = (cumulative, total)
        return step

    def _fixed(self) -> tuple[tuple[Tile, ...], list[Tile | None]]:
        """What every sample shares: the viewer's dealt hand, and the drawn boneyard
        positions whose tile the viewer knows (None where a class's tile goes)."""
        view = self.view
        history = self._history
        viewer = view.viewer
        own_placed = {
            TILES[m.tile]
            for m, s in zip(view.round_actions, history.seats_of, strict=True)
            if s == viewer and m.tile is not None
        }
        own_dealt = (set(tiles_of(view.hand_mask)) | own_placed) - set(view.own_draws)
        drawn_so_far = len(history.draw_tiles) + sum(len(c.positions) for c in history.classes)
        bone: list[Tile | None] = [None] * drawn_so_far
        for position, tile in history.draw_tiles.items():
            bone[position] = tile
        return tuple(sorted(own_dealt)), bone

    def sample(self, rng: random.Random) -> Deal:
        """One consistent original deal of the round, uniformly among all of them."""
        view = self.view
        classes = self._history.classes
        members: list[list[Tile]] = [[] for _ in classes]
        rest: list[Tile] = []
        caps = self._capacities
        for g, (fits, _, tiles) in enumerate(self._groups):
            shuffled = list(tiles)
            rng.shuffle(shuffled)
            left = len(shuffled)
            for i in range(len(caps)):
                if not fits[i] or not caps[i] or not left:
                    continue
                cumulative, total = self._step(g, i, left, caps)
                k = bisect_right(cumulative, rng.randrange(total))
                if k:
                    members[i].extend(shuffled[:k])
                    shuffled = shuffled[k:]
                    left -= k
                    caps = (*caps[:i], caps[i] - k, *caps[i + 1 :])
            rest.extend(shuffled)
        hands: list[tuple[Tile, ...]] = [()] * view.seats
        bone = list(self._bone)
        for c, tiles in zip(classes, members, strict=True):
            if c.entry < 0:
                hands[c.seat] = tuple(sorted(tiles))
            else:
                for position, tile in zip(c.positions, tiles, strict=True):
                    bone[position] = tile
        assert view.viewer is not None
        hands[view.viewer] = self._own_dealt
        rng.shuffle(rest)
        boneyard = [t for t in bone if t is not None] + rest
        assert len(boneyard) == len(bone) + view.boneyard_size
        return Deal(tuple(hands), tuple(boneyard), view.leader or 0)

    def position(self, deal: Deal) -> Match:
        """The full position a sampled deal gives: a match at the view's round and scores,
        with the round's public actions replayed on the deal (raises if inconsistent)."""
        return position_of(self.view, deal)


def position_of(view: SeatView, deal: Deal) -> Match:
    """A match in the view's situation (variant, target, round limit, scores, round) whose
    current round was dealt `deal`, with the round's actions replayed on it."""
    match = Match(
        view.seats,
        seed=0,
        target=view.target,
        variant=view.variant,
        round_limit=view.round_limit,
        auto_deal=False,
    )
    sides = {team_of(s, view.seats): score for s, score in enumerate(view.scores)}
    gained = _round_points(view)
    match.scores = [sides[t] - gained[t] for t in range(len(match.scores))]
    match.round_index = view.round_index - 1
    match.move_count = view.move_count - len(view.round_actions)
    match.deal(deal)
    for move in view.round_actions:
        match.apply(move)
    return match


def _round_points(view: SeatView) -> list[int]:
    """The points each side has scored in the current round so far (to rewind the scores)."""
    layout = Layout(view.variant)
    gained = [0] * (2 if view.seats == 4 else view.seats)
    seat = view.leader or 0
    for move in view.round_actions:
        if move.kind is MoveKind.DRAW:
            continue
        if move.is_placement:
            gained[team_of(seat, view.seats)] += points_for(layout.place(move))
        seat = (seat + 1) % view.seats
    return gained


def samples(view: SeatView, count: int, rng: random.Random) -> list[Match]:
    """`count` full positions drawn uniformly from what `view`'s seat cannot see."""
    sampler = Sampler(view)
    return [sampler.position(sampler.sample(rng)) for _ in range(count)]

"""Playouts: the rest of one round played from a full state by built-in policies.

Rollout analysis plays millions of rounds, so a playout exists twice: the
pure Python reference here, built on the engine's own `Layout` (its legal
moves, counted ends and placements) and `legal_moves_of`, and the compiled
kernel `_kernel.c`, a C transcription of the same rules for speed. A
differential test (`tests/test_playout_kernel.py`) requires both to make the
same moves from the same states and seeds; another applies the reference's
moves with `Match.apply`.

A playout starts from a `PlayoutState`: everything a round needs to go on
(variant, seats, target, scores, the layout's placements, every hand, the
undrawn boneyard in draw order, whose turn, a pending drawn tile). It is a
determinized position: hidden tiles are whatever the caller put there.

Policies, one per seat:

* ``random``: uniform over the legal moves in the engine's canonical order
  (`Match.legal_moves`; where the variant lets the player choose the Sniff's
  orientation, each orientation is its own move, ``cross`` first).
* ``greedy``: the legal move that scores most at once; ties broken uniformly
  among the tied moves in canonical order. A draw or a pass is the only
  legal action when it is one.

Every choice comes from one generator per playout (`prng.py`, seeded by the
playout's seed), drawn in the order of the actions: ``random`` draws
``below(len(moves))`` when there is more than one legal move, ``greedy``
draws ``below(len(tied))`` when more than one move ties for the most points;
no other action draws (the rules are written once, in `policies.py`, which the
`random` and `greedy` bots use too). The round ends as the engine ends it (§7, §8): a
domino, a block, or a win at the target mid-round (no deductions then).

`BACKEND` says which implementation `playout` and `rollouts` use: ``"c"``
when the extension is built, else ``"python"``; the environment variable
``SNIFF_KERNEL=python`` forces the reference, ``SNIFF_KERNEL=c`` requires
the kernel (importing fails without it). The choice is `backend.py`'s, which
the bots' generator follows too.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from sniff.backend import BACKEND, KERNEL_AVAILABLE
from sniff.backend import kernel as _kernel
from sniff.dealing import check_seed
from sniff.errors import IllegalMove, NoRoundInPlay, SniffError
from sniff.layout import PLAIN_CONTRIB, SNIFF_CONTRIB, Layout, points_for
from sniff.match import Match, Phase, legal_moves_of
from sniff.moves import DRAW, PASS, SIDE_COUNT, Move, MoveKind
from sniff.policies import greedy_choice, random_choice
from sniff.prng import Xoshiro256
from sniff.rules import SEAT_COUNTS, deduction, team_count, team_of, value_for_side
from sniff.tiles import BIT, FULL_SET, SET_SIZE, pips_of
from sniff.variants import VARIANTS, Orientation, Variant, variant_named
from sniff.view import SeatView

SCORE_LIMIT: Final = 1 << 30
"""Targets and scores stay within +-2**30 (the kernel's ints)."""


class BadPlayoutState(SniffError):
    """A playout state that no round can be in: tiles missing or twice, a layout that is not
    legal, a round already over, a pending draw that is not placeable."""

    kind = "bad_state"


class Policy(enum.IntEnum):
    """A built-in policy (module docstring); the int is the kernel's code."""

    RANDOM = 0
    GREEDY = 1

    def __str__(self) -> str:
        return self.name.lower()


POLICIES: Final = {str(p): p for p in Policy}


class EndKind(enum.IntEnum):
    """How a playout's round stopped; the int is the kernel's code."""

    DOMINO = 0
    BLOCKED = 1
    WON = 2
    """A side reached its target mid-round (§8): no deductions."""

    def __str__(self) -> str:
        return self.name.lower()


# -- move codes ---------------------------------------------------------------
#
# The kernel speaks moves as ints: kind | tile << 2 | slot << 7 | orientation << 15, with
# kind a `MoveKind` (0 lead, 1 place, 2 draw, 3 pass), slot = board tile * 8 + side
# (0 for a lead), orientation 0 none, 1 cross, 2 inline. Draw is 2 and pass is 3.

_ORIENT_CODE: Final = {None: 0, Orientation.CROSS: 1, Orientation.INLINE: 2}
_CODE_ORIENT: Final = (None, Orientation.CROSS, Orientation.INLINE)
DRAW_CODE: Final = int(MoveKind.DRAW)
PASS_CODE: Final = int(MoveKind.PASS)


def code_of(move: Move) -> int:
    """The kernel's int for `move`."""
    if not move.is_placement:
        return int(move.kind)
    tile = move.tile
    assert tile is not None
    slot = move.slot if move.kind is MoveKind.PLACE else 0
    return int(move.kind) | tile << 2 | slot << 7 | _ORIENT_CODE[move.orientation] << 15


def move_of(code: int) -> Move:
    """The engine's interned `Move` for a kernel int."""
    kind = code & 3
    if kind == MoveKind.DRAW:
        return DRAW
    if kind == MoveKind.PASS:
        return PASS
    tile = code >> 2 & 31
    orient = code >> 15
    if tile >= SET_SIZE or orient > 2:
        raise ValueError(f"{code} is not a move code")
    if kind == MoveKind.LEAD:
        move = Move.lead(tile)
    else:
        slot = code >> 7 & 255
        move = Move.place(tile, slot // SIDE_COUNT, slot % SIDE_COUNT)
    return move.oriented(_CODE_ORIENT[orient])


# -- the state ------------------------------------------------------------------


class _Board(NamedTuple):
    """A layout built from its placements, with what states made on it need of it."""

    layout: Layout
    """Shared between states: copy it before placing anything."""
    tiles: int
    """Bitmask of the tiles on the layout."""
    codes: tuple[int, ...]
    """The placements' move codes, for the kernel."""


@functools.lru_cache(maxsize=1024)
def _board_of(variant: Variant, placements: tuple[Move, ...]) -> _Board:
    """The layout those placements build, each checked by the engine; cached, so that the
    many states of one position (sampled hidden tiles) build and check it once."""
    layout = Layout(variant)
    for i, move in enumerate(placements):
        if not isinstance(move, Move) or not move.is_placement:
            raise BadPlayoutState(f"placement {i} ({move!r}) is not a placement")
        try:
            layout.check(move)
        except IllegalMove as e:
            raise BadPlayoutState(f"placement {i} ({move}) is not legal: {e}") from None
        layout.place(move)
    tiles = 0
    for move in placements:
        assert move.tile is not None
        tiles |= BIT[move.tile]
    return _Board(layout, tiles, tuple(code_of(m) for m in placements))


@dataclass(frozen=True, slots=True)
class PlayoutState:
    """A round in play, everything included (hidden tiles too); checked when made.

    `scores` are per side (partners share one with four seats), `hands` are
    bitmasks of tiles per seat, `boneyard` the tiles not yet drawn in draw
    order (the first is drawn next), `drawn` the placeable tile the seat to
    play just drew and must place (-1 if none).
    """

    variant: Variant
    seats: int
    target: int
    scores: tuple[int, ...]
    placements: tuple[Move, ...]
    hands: tuple[int, ...]
    boneyard: tuple[int, ...]
    turn: int
    drawn: int = -1
    _packed: tuple[object, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.variant, str):
            object.__setattr__(self, "variant", variant_named(self.variant))
        for name in ("scores", "placements", "hands", "boneyard"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        self._check()
        object.__setattr__(self, "_packed", self._pack())

    @staticmethod
    def of_match(match: Match) -> PlayoutState:
        """The state of `match`'s round in play (its hidden tiles included)."""
        if match.phase is not Phase.PLAYING:
            raise NoRoundInPlay("a playout starts from a round in play")
        return PlayoutState(
            match.variant,
            match.seats,
            match.target,
            tuple(match.scores),
            tuple(match.layout.placements),
            tuple(match.hands),
            tuple(match.boneyard[match.bone_pos :]),
            match.turn,
            match.drawn,
        )

    @staticmethod
    def of_view(
        view: SeatView, hands: Sequence[int], boneyard: Sequence[int], drawn: int = -1
    ) -> PlayoutState:
        """A determinization of what `view` shows: its public facts (variant, seats, target,
        scores, layout, turn) with the hidden tiles a sampler chose (every hand as a bitmask,
        the viewer's own included, and the boneyard in draw order); `drawn` is the pending
        placeable draw of the seat to play, if the sample has one."""
        if view.phase is not Phase.PLAYING or view.turn is None:
            raise NoRoundInPlay("a playout starts from a round in play")
        sides = team_count(view.seats)
        scores = [0] * sides
        for seat, score in enumerate(view.scores):
            scores[view.teams[seat]] = score
        return PlayoutState(
            view.variant,
            view.seats,
            view.target,
            tuple(scores),
            view.placements,
            tuple(hands),
            tuple(boneyard),
            view.turn,
            drawn,
        )

    def with_hidden(self, hands: Sequence[int], boneyard: Sequence[int]) -> PlayoutState:
        """This state with the hidden tiles placed otherwise: the same public facts (layout,
        scores, turn, pending draw), other hands and boneyard order holding the same tiles.

        The many states of one position (each a sampled deal of what one seat cannot see)
        differ only there, so the full check of the first one covers the others but for
        this: the same tiles in the same hand sizes and boneyard size, and a pending draw
        still in the hand of the seat to play. Much cheaper than building them anew."""
        hands = tuple(hands)
        boneyard = tuple(boneyard)
        tiles = 0
        for t in boneyard:
            tiles |= BIT[t]
        for h in hands:
            tiles |= h
        mine = 0
        for t in self.boneyard:
            mine |= BIT[t]
        for h in self.hands:
            mine |= h
        if (
            tiles != mine
            or len(boneyard) != len(self.boneyard)
            or [h.bit_count() for h in hands] != [h.bit_count() for h in self.hands]
            or (self.drawn >= 0 and not hands[self.turn] & BIT[self.drawn])
        ):
            raise BadPlayoutState("other hidden tiles must be the same tiles, in the same sizes")
        state = object.__new__(PlayoutState)
        for name in ("variant", "seats", "target", "scores", "placements", "turn", "drawn"):
            object.__setattr__(state, name, getattr(self, name))
        object.__setattr__(state, "hands", hands)
        object.__setattr__(state, "boneyard", boneyard)
        packed = list(self._packed)
        packed[5], packed[6] = hands, boneyard
        object.__setattr__(state, "_packed", tuple(packed))
        return state

    def stepped(
        self,
        scores: Sequence[int],
        placements: Sequence[Move],
        hands: Sequence[int],
        boneyard: Sequence[int],
        turn: int,
        drawn: int = -1,
    ) -> PlayoutState:
        """This round further on, as the rules stepped it from this state (the solver's
        `step`, down the search tree): `placements` extend this state's, the rest replace
        its own. Not checked again, which is the point: the search makes a state like this
        per iteration, and the constructor's check rebuilds the layout from every placement
        each time. The caller vouches that the rules made it; a state from anywhere else is
        built, and checked, by the constructor."""
        placements = tuple(placements)
        known = len(self.placements)
        codes = self._packed[4]
        assert isinstance(codes, tuple)
        state = object.__new__(PlayoutState)
        for name in ("variant", "seats", "target"):
            object.__setattr__(state, name, getattr(self, name))
        object.__setattr__(state, "scores", tuple(scores))
        object.__setattr__(state, "placements", placements)
        object.__setattr__(state, "hands", tuple(hands))
        object.__setattr__(state, "boneyard", tuple(boneyard))
        object.__setattr__(state, "turn", turn)
        object.__setattr__(state, "drawn", drawn)
        packed = list(self._packed)
        packed[3], packed[5], packed[6] = state.scores, state.hands, state.boneyard
        packed[4] = codes + tuple(code_of(m) for m in placements[known:])
        packed[7], packed[8] = turn, drawn
        object.__setattr__(state, "_packed", tuple(packed))
        return state

    def layout(self) -> Layout:
        """A fresh copy of the layout the placements build."""
        return _board_of(self.variant, self.placements).layout.copy()

    def legal_moves(self) -> list[Move]:
        """The seat to play's lawful actions, in the engine's canonical order."""
        layout = _board_of(self.variant, self.placements).layout
        return legal_moves_of(layout, self.hands[self.turn], self.drawn, len(self.boneyard))

    @property
    def sides(self) -> int:
        return team_count(self.seats)

    def _check(self) -> None:
        seats = self.seats
        if isinstance(seats, bool) or seats not in SEAT_COUNTS:
            raise BadPlayoutState(f"Sniff is played by 2, 3 or 4 seats, not {seats!r}")
        if not isinstance(self.target, int) or not 0 < self.target <= SCORE_LIMIT:
            raise BadPlayoutState(f"a target is an integer from 1 to 2**30, not {self.target!r}")
        sides = team_count(seats)
        if len(self.scores) != sides or not all(isinstance(s, int) for s in self.scores):
            raise BadPlayoutState(f"{seats} seats keep {sides} scores, not {self.scores!r}")
        if any(not -SCORE_LIMIT <= s < self.target for s in self.scores):
            raise BadPlayoutState(
                f"scores {self.scores} leave no round to play: a side has reached the "
                f"target {self.target} (or the score is absurd)"
            )
        if len(self.hands) != seats:
            raise BadPlayoutState(f"{seats} seats hold {seats} hands, not {len(self.hands)}")
        seen = 0
        for seat, hand in enumerate(self.hands):
            if not isinstance(hand, int) or not 0 < hand <= FULL_SET:
                raise BadPlayoutState(
                    f"seat {seat}'s hand {hand!r} is not a non-empty bitmask of tiles "
                    "(an empty hand has dominoed: the round is over)"
                )
            if hand & seen:
                raise BadPlayoutState(f"seat {seat} holds a tile another seat holds")
            seen |= hand
        for t in self.boneyard:
            if not isinstance(t, int) or not 0 <= t < SET_SIZE:
                raise BadPlayoutState(f"the boneyard names {t!r}, not a tile number 0..27")
            if seen & BIT[t]:
                raise BadPlayoutState(f"tile {t} is in the boneyard and in a hand, or twice")
            seen |= BIT[t]
        board = _board_of(self.variant, self.placements)
        layout, on_layout = board.layout, board.tiles
        if on_layout & seen:
            raise BadPlayoutState("a tile on the layout is also in a hand or the boneyard")
        if on_layout | seen != FULL_SET:
            raise BadPlayoutState("the hands, the boneyard and the layout do not hold all 28 tiles")
        if not (isinstance(self.turn, int) and 0 <= self.turn < seats):
            raise BadPlayoutState(f"turn {self.turn!r} is not a seat of {seats}")
        drawn = self.drawn
        if drawn != -1:
            if not (isinstance(drawn, int) and 0 <= drawn < SET_SIZE):
                raise BadPlayoutState(f"drawn {drawn!r} is not a tile number (or -1)")
            if not self.hands[self.turn] & BIT[drawn] or not layout.playable & BIT[drawn]:
                raise BadPlayoutState(
                    f"a pending drawn tile must be in seat {self.turn}'s hand and placeable"
                )
        if not self.boneyard and not any(h & layout.playable for h in self.hands):
            raise BadPlayoutState("the round is blocked already: nobody can place, nothing to draw")

    def _pack(self) -> tuple[object, ...]:
        """The state as the kernel reads it (flat ints and tuples of ints)."""
        return (
            _VARIANT_INDEX[self.variant.name],
            self.seats,
            self.target,
            self.scores,
            _board_of(self.variant, self.placements).codes,
            self.hands,
            self.boneyard,
            self.turn,
            self.drawn,
        )


_VARIANT_INDEX: Final = {name: i for i, name in enumerate(VARIANTS)}


# -- results --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlayoutResult:
    """What the rest of the round came to. Points, scores and gains are per side; pips and
    deductions per seat (zero after a win: §8 takes none)."""

    moves: tuple[int, ...]
    """Every action's move code (`move_of` reads one), when recorded; else empty."""
    points: tuple[int, ...]
    """Points each side scored in the playout."""
    end: EndKind
    finisher: int | None
    """The seat that dominoed (`end` is DOMINO)."""
    winner: int | None
    """The seat whose placement reached the target (`end` is WON)."""
    deductions: tuple[int, ...]
    scores: tuple[int, ...]
    """Scores per side when the playout stopped, deductions taken."""
    actions: int

    @property
    def gains(self) -> tuple[int, ...]:
        """Per side: points scored minus its seats' deductions."""
        seats = len(self.deductions)
        gains = list(self.points)
        for seat, d in enumerate(self.deductions):
            gains[team_of(seat, seats)] -= d
        return tuple(gains)

    def net(self, side: int) -> float:
        """The playout's value for `side` (`side_value`): its gain minus the mean of the
        other sides' gains, as the equity is defined (docs/analysis.md)."""
        return value_for_side(self.gains, side)


@dataclass(frozen=True, slots=True)
class Rollouts:
    """Many playouts' outcomes, in seed order. `gains[side][i]` is playout i's points for
    that side minus its seats' deductions."""

    gains: tuple[tuple[int, ...], ...]
    ends: tuple[int, ...]
    """Per playout its `EndKind` code."""
    winners: tuple[int, ...]
    """Per playout the winning seat when it ended WON, else -1."""
    actions: int
    """Actions played over all playouts."""

    @property
    def count(self) -> int:
        return len(self.ends)

    def net(self, side: int) -> list[float]:
        """Per playout, its value for `side` (`side_value`): what the equity averages."""
        return [value_for_side(gains, side) for gains in zip(*self.gains, strict=True)]

    def mean_net(self, side: int) -> tuple[float, float]:
        """The mean value for `side` over the playouts (its equity) and its standard error."""
        values = self.net(side)
        n = len(values)
        if n == 0:
            raise ValueError("no playouts")
        mean = sum(values) / n
        if n == 1:
            return mean, math.inf
        var = sum((v - mean) ** 2 for v in values) / (n - 1)
        return mean, math.sqrt(var / n)


# -- the Python reference ---------------------------------------------------------


def _policies(policies: str | Policy | Sequence[str | Policy], seats: int) -> tuple[Policy, ...]:
    items = [policies] if isinstance(policies, str | Policy) else list(policies)
    out = []
    for p in items:
        if isinstance(p, Policy):
            out.append(p)
        elif isinstance(p, str) and p in POLICIES:
            out.append(POLICIES[p])
        else:
            raise ValueError(f"no playout policy {p!r} (one of {', '.join(POLICIES)})")
    if len(out) == 1:
        out *= seats
    if len(out) != seats:
        raise ValueError(f"give one policy, or one per seat ({seats}), not {len(out)}")
    return tuple(out)


def python_playout(
    state: PlayoutState,
    policies: Sequence[Policy],
    seed: int,
    first: Move | None = None,
    record: bool = False,
    layout: Layout | None = None,
) -> PlayoutResult:
    """The reference playout (arguments already checked; `layout` a fresh copy if given)."""
    layout = state.layout() if layout is None else layout
    rng = Xoshiro256(seed)
    seats = state.seats
    teams = [team_of(s, seats) for s in range(seats)]
    hands = list(state.hands)
    scores = list(state.scores)
    points = [0] * len(scores)
    bone = state.boneyard
    pos, left = 0, len(bone)
    turn, drawn, target = state.turn, state.drawn, state.target
    recorded: list[int] = []
    actions = 0
    move = first
    while True:
        s = turn
        if move is None:
            moves = legal_moves_of(layout, hands[s], drawn, left - pos)
            if policies[s] is Policy.GREEDY:
                move = greedy_choice(moves, lambda m: points_for(layout.ends_after(m)), rng)
            else:
                move = random_choice(moves, rng)
        actions += 1
        if record:
            recorded.append(code_of(move))
        kind = move.kind
        if kind <= MoveKind.PLACE:
            t = move.tile
            assert t is not None
            hands[s] ^= BIT[t]
            drawn = -1
            got = points_for(layout.place(move))
            if got:
                side = teams[s]
                scores[side] += got
                points[side] += got
                if scores[side] >= target:
                    return PlayoutResult(
                        tuple(recorded),
                        tuple(points),
                        EndKind.WON,
                        None,
                        s,
                        (0,) * seats,
                        tuple(scores),
                        actions,
                    )
            if not hands[s]:
                return _ended(recorded, points, scores, hands, teams, s, actions)
            if pos == left and not any(h & layout.playable for h in hands):
                return _ended(recorded, points, scores, hands, teams, None, actions)
            turn = (s + 1) % seats
        elif kind is MoveKind.DRAW:
            got_tile = bone[pos]
            pos += 1
            hands[s] |= BIT[got_tile]
            if BIT[got_tile] & layout.playable:
                drawn = got_tile
            elif pos == left and not any(h & layout.playable for h in hands):
                return _ended(recorded, points, scores, hands, teams, None, actions)
        else:
            turn = (s + 1) % seats
        move = None


def _ended(
    recorded: list[int],
    points: list[int],
    scores: list[int],
    hands: list[int],
    teams: list[int],
    finisher: int | None,
    actions: int,
) -> PlayoutResult:
    deductions = tuple(deduction(pips_of(h)) for h in hands)
    for seat, d in enumerate(deductions):
        scores[teams[seat]] -= d
    return PlayoutResult(
        tuple(recorded),
        tuple(points),
        EndKind.DOMINO if finisher is not None else EndKind.BLOCKED,
        finisher,
        None,
        deductions,
        tuple(scores),
        actions,
    )


def _python_rollouts(
    states: Sequence[PlayoutState],
    policies: Sequence[Policy],
    seeds: Sequence[int],
    first: Move | None,
) -> Rollouts:
    sides = states[0].sides
    gains: list[list[int]] = [[] for _ in range(sides)]
    ends: list[int] = []
    winners: list[int] = []
    actions = 0
    layouts: dict[int, Layout] = {}
    for i, seed in enumerate(seeds):
        state = states[0] if len(states) == 1 else states[i]
        base = layouts.get(id(state))
        if base is None:
            base = layouts[id(state)] = state.layout()
        result = python_playout(state, policies, seed, first, layout=base.copy())
        for side, g in enumerate(result.gains):
            gains[side].append(g)
        ends.append(int(result.end))
        winners.append(-1 if result.winner is None else result.winner)
        actions += result.actions
    return Rollouts(tuple(tuple(g) for g in gains), tuple(ends), tuple(winners), actions)


# -- the kernel and the public calls ------------------------------------------------

if _kernel is not None:
    _kernel.configure(
        PLAIN_CONTRIB,
        tuple(
            tuple(
                (_ORIENT_CODE[rule.orientation], rule.stubs, SNIFF_CONTRIB[rule])
                for rule in variant.rules
            )
            for variant in VARIANTS.values()
        ),
    )


def _backend(backend: str | None) -> str:
    chosen = BACKEND if backend is None else backend
    if chosen not in ("c", "python"):
        raise ValueError(f"backend {backend!r}: use 'c' or 'python'")
    if chosen == "c" and _kernel is None:
        raise RuntimeError("the playout kernel sniff._kernel is not built")
    return chosen


def _first(state: PlayoutState, first: Move | None) -> Move | None:
    if first is not None and first not in state.legal_moves():
        raise IllegalMove(f"{first} is not a legal move in this state")
    return first


def playout(
    state: PlayoutState,
    policies: str | Policy | Sequence[str | Policy],
    seed: int,
    *,
    first: Move | None = None,
    record: bool = False,
    backend: str | None = None,
) -> PlayoutResult:
    """Play the rest of `state`'s round, seat i by `policies[i]` (or one policy for all),
    making `first` first if given (it must be legal); `record` keeps every move code."""
    pols = _policies(policies, state.seats)
    check_seed(seed)
    first = _first(state, first)
    if _backend(backend) == "python":
        return python_playout(state, pols, seed, first, record)
    raw = _kernel.playout(
        state._packed,
        tuple(int(p) for p in pols),
        seed,
        -1 if first is None else code_of(first),
        record,
    )
    moves, points, end, finisher, winner, deductions, scores, actions = raw
    return PlayoutResult(
        tuple(moves),
        tuple(points),
        EndKind(end),
        None if finisher < 0 else finisher,
        None if winner < 0 else winner,
        tuple(deductions),
        tuple(scores),
        actions,
    )


def rollouts(
    states: PlayoutState | Sequence[PlayoutState],
    policies: str | Policy | Sequence[str | Policy],
    seeds: Sequence[int] | None = None,
    *,
    n: int | None = None,
    base_seed: int = 0,
    first: Move | None = None,
    backend: str | None = None,
) -> Rollouts:
    """Many playouts in one call: playout i from `states` (one state for all, or one per
    seed) with seed `seeds[i]` (or `base_seed + i` for i < `n`), `first` made first in each.

    The same seeds give the same playouts, which is how rollouts of several candidate
    moves share their random numbers."""
    if seeds is None:
        if n is None or n < 0:
            raise ValueError("give the seeds, or n >= 0 and a base seed")
        check_seed(base_seed)
        check_seed(base_seed + max(n - 1, 0))
        seeds = range(base_seed, base_seed + n)
    elif n is not None:
        raise ValueError("give the seeds or n, not both")
    else:
        for s in seeds:
            check_seed(s)
    many = [states] if isinstance(states, PlayoutState) else list(states)
    if not many or not all(isinstance(s, PlayoutState) for s in many):
        raise ValueError("rollouts start from a PlayoutState or a sequence of them")
    if len(many) != 1 and len(many) != len(seeds):
        raise ValueError(f"{len(many)} states for {len(seeds)} seeds: give one, or one per seed")
    if len({(s.seats, s.sides) for s in many}) != 1:
        raise ValueError("the states of one rollouts call must have the same number of seats")
    pols = _policies(policies, many[0].seats)
    if first is not None:
        # States that agree on the layout and on what the seat to play holds have the same
        # legal moves (the sampled states of one decision all do): check `first` once each.
        checked: set[tuple[object, ...]] = set()
        for state in many:
            key = (
                state.variant.name,
                id(state._packed[4]),  # the layout's codes: one object per cached layout
                state.turn,
                state.hands[state.turn],
                state.drawn,
                bool(state.boneyard),
            )
            if key not in checked:
                _first(state, first)
                checked.add(key)
    if _backend(backend) == "python":
        return _python_rollouts(many, pols, seeds, first)
    gains, ends, winners, actions = _kernel.rollouts(
        tuple(s._packed for s in many),
        tuple(int(p) for p in pols),
        seeds,
        -1 if first is None else code_of(first),
    )
    sides = many[0].sides
    return Rollouts(
        tuple(tuple(gains[side::sides]) for side in range(sides)),
        tuple(ends),
        tuple(winners),
        actions,
    )


def kernel_matches(
    variant: Variant,
    seats: int,
    target: int,
    round_limit: int | None,
    policies: Sequence[Policy],
    seeds: Sequence[int],
    bot_seeds: Sequence[int] | None,
    record: bool = False,
) -> tuple[bytes, bytes, bytes, bytes]:
    """Whole matches in the kernel (`simulated.py` reads what it returns): match i seeded
    `seeds[i]`, seat s's bot of policy `policies[s]` seeded `bot_seeds[i * seats + s]`
    (None: `seeds.bot_seed(seeds[i], s)`, derived in C).
    Native int32 rows of the matches, the rounds, the decisions and, if `record`, the moves."""
    if _kernel is None:
        raise RuntimeError("the playout kernel sniff._kernel is not built")
    return _kernel.play_matches(
        _VARIANT_INDEX[variant.name],
        seats,
        target,
        0 if round_limit is None else round_limit,
        tuple(int(p) for p in policies),
        seeds,
        bot_seeds,
        record,
    )


__all__ = [
    "BACKEND",
    "DRAW_CODE",
    "KERNEL_AVAILABLE",
    "PASS_CODE",
    "POLICIES",
    "BadPlayoutState",
    "EndKind",
    "PlayoutResult",
    "PlayoutState",
    "Policy",
    "Rollouts",
    "code_of",
    "kernel_matches",
    "move_of",
    "playout",
    "python_playout",
    "rollouts",
]

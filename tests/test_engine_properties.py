"""Whole-match properties of the engine, over thousands of bot matches (2, 3, 4 seats).

Every test draws match set-ups (seat count, variant, match seed, one bot kind
per seat, bot seed, target, round limit) with hypothesis. Some tests step through a match action by
action and check an invariant after every action; the others play whole
matches and check the result. `RefMatch` below is a deliberately slow and
literal second implementation of docs/rules.md §2-§8 and §10, written from the rule book
rather than from the engine, that the engine is compared with move by move.

`SNIFF_PROPERTY_SCALE=10 pytest tests/test_engine_properties.py` runs ten
times as many examples; the default "dev" hypothesis profile runs a twentieth
of them, HYPOTHESIS_PROFILE=ci all (docs/testing.md).
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sniff import (
    DRAW,
    PASS,
    TILES,
    ActionResult,
    CannotDraw,
    CannotPass,
    IllegalMove,
    LeaderChoice,
    LeadExpected,
    Match,
    MatchOver,
    MissingOrientation,
    Move,
    MoveKind,
    MustPlace,
    MustPlaceDrawn,
    NoRoundInPlay,
    NoSuchOpenSide,
    NotCanonical,
    NotYourTurn,
    Orientation,
    Phase,
    SeatView,
    Side,
    StubEnd,
    Tile,
    TileNotInHand,
    UnexpectedOrientation,
    ValuesDoNotMatch,
    make_bot,
    parse_record,
    play_match,
    replay,
    to_record,
    view,
)
from tests.helpers import example_count

SCALE = max(1, int(os.environ.get("SNIFF_PROPERTY_SCALE", "1")))


def examples(n: int) -> settings:
    return settings(
        max_examples=example_count(n) * SCALE,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


# -- match set-ups ----------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    seats: int
    seed: int
    kinds: tuple[str, ...]
    bot_seed: int
    target: int | None
    variant: str = "american"
    round_limit: int | None = None

    def match(self) -> Match:
        return Match(
            self.seats,
            seed=self.seed,
            target=self.target,
            variant=self.variant,
            round_limit=self.round_limit,
        )

    def bots(self, salt: int = 0) -> list[Any]:
        return [make_bot(k, self.bot_seed * 7 + salt * 101 + i) for i, k in enumerate(self.kinds)]


VARIANT_NAMES = ("american", "stubby", "berndt", "british")


@st.composite
def setups(
    draw: st.DrawFn,
    targets: tuple[int | None, ...] = (None, None, None, 60),
    variants: tuple[str, ...] = VARIANT_NAMES,
    limits: tuple[int | None, ...] = (None, None, 1, 4),
) -> Setup:
    """Match set-ups. Without a round limit, weak play in the variants may never reach the
    target (docs/rules.md §8), so a variant match without one gets a limit of 12 rounds."""
    seats = draw(st.sampled_from((2, 3, 4)))
    kinds = tuple(draw(st.sampled_from(("random", "greedy"))) for _ in range(seats))
    variant = draw(st.sampled_from(variants))
    limit = draw(st.sampled_from(limits))
    if limit is None and variant != "american":
        limit = 12
    return Setup(
        seats=seats,
        seed=draw(st.integers(0, 2**64 - 1)),
        kinds=kinds,
        bot_seed=draw(st.integers(0, 2**32 - 1)),
        target=draw(st.sampled_from(targets)),
        variant=variant,
        round_limit=limit,
    )


def steps(
    match: Match, bots: list[Any]
) -> Iterator[tuple[Match, Move | None, ActionResult | None]]:
    """Play `match` to its end, yielding (match, move, result) at every stop.

    `move` is what the bot chose and is about to be applied (None once a round has ended or
    the match is won); `result` is what the previous action did (None at a round's start).
    """
    result: ActionResult | None = None
    while True:
        while match.phase is Phase.PLAYING:
            move = bots[match.turn].choose(view(match, match.turn))
            yield match, move, result
            result = match.apply(move)
        yield match, None, result
        result = None
        if match.phase is Phase.OVER:
            return
        match.deal()


def snapshot(m: Match) -> tuple[Any, ...]:
    """Everything an action could change, as plain values."""
    lay = m.layout
    return (
        m.phase,
        m.turn,
        m.leader,
        m.move_count,
        m.round_index,
        tuple(m.hands),
        m.bone_pos,
        tuple(m.boneyard),
        m.drawn,
        tuple(lay.placements),
        tuple(lay.covered),
        tuple(lay.open),
        tuple(lay.targets),
        lay.ends,
        lay.playable,
        lay.sniff,
        lay.stubs,
        lay.rule,
        tuple(m.scores),
        m.winner,
        m.next_leader,
        m.seed,
        len(m.history),
        tuple((r.deal, tuple(r.actions), tuple(r.points), r.end, r.scores) for r in m.history),
    )


def placed_tiles(m: Match) -> list[Tile]:
    return [t for t in TILES if m.layout.covered[t] >= 0]


# -- an independent reading of the rules --------------------------------------

LINES = (Side.LINE_A, Side.LINE_B)
BRANCHES = (Side.BRANCH_A, Side.BRANCH_B)


def side_value(tile: Tile, side: Side) -> int:
    return tile.high if side is Side.HIGH else tile.low


def rounded_deduction(pips: int) -> int:
    """Nearest multiple of five, remainders 1-2 down and 3-4 up (docs/rules.md §7)."""
    return 5 * ((pips + 2) // 5)


# docs/rules.md §10, restated as plain tables for the reference model.
REF_ORIENTATIONS = {
    "american": ("cross",),
    "stubby": ("inline",),
    "berndt": ("cross", "inline"),
    "british": ("cross", "inline"),
}
# (variant, orientation) -> what the Sniff counts (§10.2): before both its line sides hold
# tiles ("whole": 2·d once; "ends": d per open line side), and after ("branches": d per
# open branch side; "none": nothing).
REF_COUNTS = {
    ("american", "cross"): ("whole", "branches"),
    ("berndt", "cross"): ("whole", "none"),
    ("british", "cross"): ("whole", "none"),
    ("berndt", "inline"): ("ends", "none"),
    ("stubby", "inline"): ("ends", "none"),
    ("british", "inline"): ("ends", "none"),
}
REF_STUBS = {("stubby", "inline"), ("british", "inline")}


class RefLayout:
    """docs/rules.md §3-§5 and §10 as sets of covered sides; recomputes everything on demand."""

    def __init__(self, variant: str = "american") -> None:
        self.variant = variant
        self.covered: dict[Tile, set[Side]] = {}
        self.sniff: Tile | None = None
        self.orientation: str | None = None
        self.stubs: set[Tile] = set()

    def sides_of(self, t: Tile) -> tuple[Side, ...]:
        if not t.is_double:
            return (Side.LOW, Side.HIGH)
        return LINES + BRANCHES if t == self.sniff else LINES

    def open_sides(self) -> list[tuple[Tile, Side]]:
        out = []
        for t in sorted(self.covered):
            if t in self.stubs:
                continue
            cov = self.covered[t]
            for s in self.sides_of(t):
                if s in cov:
                    continue
                if s in BRANCHES and not set(LINES) <= cov:
                    continue
                out.append((t, s))
        return out

    def targets(self) -> list[tuple[Tile, Side]]:
        open_ = self.open_sides()
        return [
            (t, s)
            for t, s in open_
            if not (s is Side.LINE_B and (t, Side.LINE_A) in open_)
            and not (s is Side.BRANCH_B and (t, Side.BRANCH_A) in open_)
        ]

    def contributions(self) -> list[int]:
        out = []
        for t, cov in self.covered.items():
            if not t.is_double:
                out += [side_value(t, s) for s in (Side.LOW, Side.HIGH) if s not in cov]
                continue
            lines = sum(s in cov for s in LINES)
            if t == self.sniff:
                before, after = REF_COUNTS[(self.variant, self.orientation or "")]
                if lines < 2:
                    if before == "whole":
                        out.append(2 * t.low)
                    else:
                        out += [t.low for s in LINES if s not in cov]
                elif after == "branches":
                    out += [t.low for s in BRANCHES if s not in cov]
            else:
                assert lines >= 1, "a later double is always joined by a line side"
                if lines == 1:
                    out.append(2 * t.low)
        return out

    def can_take(self, tile: Tile) -> bool:
        if not self.covered:
            return True
        return any(side_value(t, s) in (tile.low, tile.high) for t, s in self.open_sides())

    def makes_sniff(self, tile: Tile) -> bool:
        return tile.is_double and self.sniff is None

    def orientation_refusal(self, move: Move) -> type[IllegalMove] | None:
        """§10.4: a suffix exactly where the variant lets the Sniff's maker choose."""
        assert move.tile is not None
        choice = len(REF_ORIENTATIONS[self.variant]) > 1
        if move.orientation is None:
            return MissingOrientation if self.makes_sniff(move.tile) and choice else None
        if not choice or not self.makes_sniff(move.tile):
            return UnexpectedOrientation
        return None

    def place(self, move: Move) -> None:
        tile, board, side = move.tile, move.board_tile, move.side
        assert tile is not None
        if self.makes_sniff(tile):
            self.sniff = tile
            self.orientation = (
                str(move.orientation)
                if move.orientation is not None
                else REF_ORIENTATIONS[self.variant][0]
            )
        if board is None or side is None:
            self.covered[tile] = set()
            return
        value = side_value(board, side)
        self.covered[board].add(side)
        stub_branch = board == self.sniff and side in BRANCHES
        if stub_branch and (self.variant, self.orientation) in REF_STUBS:
            self.stubs.add(tile)
        if tile.is_double:
            self.covered[tile] = {Side.LINE_A}
        elif tile.low == value:
            self.covered[tile] = {Side.LOW}
        else:
            self.covered[tile] = {Side.HIGH}


class RefMatch:
    """docs/rules.md §2, §6-§8 for one match, fed the engine's deals."""

    def __init__(
        self, seats: int, target: int, variant: str = "american", round_limit: int | None = None
    ) -> None:
        self.seats = seats
        self.target = target
        self.variant = variant
        self.round_limit = round_limit
        self.rounds = 0
        self.scores = [0] * (2 if seats == 4 else seats)
        self.phase = "awaiting"
        self.winner: int | None = None
        self.last_end: tuple[Any, ...] | None = None
        self.turn = -1

    def team(self, seat: int) -> int:
        return seat % 2 if self.seats == 4 else seat

    def seat_scores(self) -> tuple[int, ...]:
        return tuple(self.scores[self.team(s)] for s in range(self.seats))

    def start(self, deal: Any) -> None:
        self.hands = [set(h) for h in deal.hands]
        self.bone = list(deal.boneyard)
        self.pos = 0
        self.layout = RefLayout(self.variant)
        self.rounds += 1
        self.turn = deal.leader
        self.drawn: Tile | None = None
        self.phase = "playing"

    def placements_of(self, tiles: set[Tile]) -> list[Move]:
        if not self.layout.covered:
            plain = [Move.lead(t) for t in sorted(tiles)]
        else:
            plain = []
            targets = sorted(self.layout.targets(), key=lambda p: (int(p[0]), int(p[1])))
            for board, side in targets:
                value = side_value(board, side)
                plain += [
                    Move.place(t, board, side) for t in sorted(tiles) if value in (t.low, t.high)
                ]
        orientations = REF_ORIENTATIONS[self.variant]
        out = []
        for move in plain:
            assert move.tile is not None
            if len(orientations) > 1 and self.layout.makes_sniff(move.tile):
                out += [move.oriented(Orientation(o)) for o in orientations]
            else:
                out.append(move)
        return out

    def legal(self) -> list[Move]:
        if self.phase != "playing":
            return []
        if self.drawn is not None:
            return self.placements_of({self.drawn})
        moves = self.placements_of(self.hands[self.turn])
        if moves:
            return moves
        return [DRAW] if self.pos < len(self.bone) else [PASS]

    def refusal(self, move: Move, seat: int | None = None) -> type[IllegalMove] | None:
        """The error class the rules give for `move` here, or None if it is lawful."""
        if self.phase == "over":
            return MatchOver
        if self.phase == "awaiting":
            return NoRoundInPlay
        if seat is not None and seat != self.turn:
            return NotYourTurn
        hand = self.hands[self.turn]
        if move.is_placement:
            assert move.tile is not None
            if move.tile not in hand:
                return TileNotInHand
            if self.drawn is not None and move.tile != self.drawn:
                return MustPlaceDrawn
            empty = not self.layout.covered
            if move.kind is MoveKind.LEAD:
                return self.layout.orientation_refusal(move) if empty else LeadExpected
            if empty:
                return LeadExpected
            assert move.board_tile is not None
            assert move.side is not None
            place = (move.board_tile, move.side)
            if place in self.layout.targets():
                value = side_value(*place)
                if value not in (move.tile.low, move.tile.high):
                    return ValuesDoNotMatch
                return self.layout.orientation_refusal(move)
            if place in self.layout.open_sides():
                return NotCanonical
            board_sides = self.layout.sides_of(move.board_tile)
            if (
                move.board_tile in self.layout.stubs
                and move.side in board_sides
                and move.side not in self.layout.covered[move.board_tile]
            ):
                return StubEnd
            return NoSuchOpenSide
        if self.drawn is not None:
            return MustPlaceDrawn
        if any(self.layout.can_take(t) for t in hand):
            return MustPlace
        if move.kind is MoveKind.DRAW:
            return None if self.pos < len(self.bone) else CannotDraw
        return None if self.pos == len(self.bone) else CannotPass

    def _end(self, finisher: int | None) -> tuple[Any, ...]:
        pips = tuple(sum(t.pips for t in h) for h in self.hands)
        deductions = tuple(rounded_deduction(p) for p in pips)
        for seat, d in enumerate(deductions):
            self.scores[self.team(seat)] -= d
        kind = "domino" if finisher is not None else "blocked"
        self.last_end = (kind, finisher, pips, deductions, self.seat_scores())
        self.phase = "awaiting"
        if self.round_limit is not None and self.rounds >= self.round_limit:
            # §8 Reading: the side ahead wins (its lowest seat); level at the top is a draw.
            self.phase = "over"
            best = max(self.scores)
            top = [team for team, score in enumerate(self.scores) if score == best]
            self.winner = top[0] if len(top) == 1 else None
        return self.last_end

    def apply(self, move: Move) -> tuple[Any, ...]:
        """Make `move`; return what `ActionResult` should say (see `result_tuple`)."""
        assert self.refusal(move) is None
        seat = self.turn
        points, ends, drawn, end, winner = 0, None, None, None, None
        if move.is_placement:
            assert move.tile is not None
            self.hands[seat].remove(move.tile)
            self.drawn = None
            self.layout.place(move)
            ends = sum(self.layout.contributions())
            points = ends if ends > 0 and ends % 5 == 0 else 0
            self.scores[self.team(seat)] += points
            if points and self.scores[self.team(seat)] >= self.target:
                self.phase = "over"
                self.winner = winner = seat
            elif not self.hands[seat]:
                end = self._end(seat)
        elif move.kind is MoveKind.DRAW:
            drawn = self.bone[self.pos]
            self.pos += 1
            self.hands[seat].add(drawn)
            if self.layout.can_take(drawn):
                self.drawn = drawn
        stuck = not any(self.layout.can_take(t) for h in self.hands for t in h)
        if self.phase == "playing" and self.pos == len(self.bone) and stuck:
            end = self._end(None)
        if self.phase == "playing" and move.kind is not MoveKind.DRAW:
            self.turn = (seat + 1) % self.seats
        if end is not None and self.phase == "over":
            winner = self.winner
        return (seat, move, points, ends, drawn, end, winner, self.phase == "over")


def result_tuple(r: ActionResult) -> tuple[Any, ...]:
    end = r.round_end
    end_t = (
        None
        if end is None
        else (end.kind.value, end.finisher, end.pips, end.deductions, end.scores)
    )
    return (r.seat, r.move, r.points, r.ends_sum, r.drawn, end_t, r.winner, r.match_over)


def all_moves() -> list[Move]:
    """Every move without a suffix, plus every placement of a double with each suffix and a
    spread of non-doubles with one (§10.4: only the Sniff's maker may name one)."""
    moves = [Move.lead(t) for t in TILES] + [DRAW, PASS]
    moves += [Move.place(t, b, s) for t in TILES for b in TILES for s in Side]
    oriented = [
        m for m in moves if m.is_placement and (m.tile in DOUBLES or m.tile == m.board_tile)
    ]
    oriented += [m for m in moves if m.is_placement][::41]
    for o in Orientation:
        moves += [m.oriented(o) for m in oriented]
    return moves


DOUBLES = {t for t in TILES if t.is_double}


ALL_MOVES = all_moves()


def random_move(m: Match, rng: random.Random) -> Move:
    """A move biased towards near misses: own tiles, placed board tiles, draw and pass."""
    roll = rng.random()
    if roll < 0.1:
        return DRAW
    if roll < 0.2:
        return PASS
    hand = m.hand(m.turn) if m.phase is Phase.PLAYING else []
    tile = rng.choice(hand) if hand and rng.random() < 0.7 else rng.choice(TILES)
    if roll < 0.3:
        return Move.lead(tile)
    board_pool = placed_tiles(m)
    board = rng.choice(board_pool) if board_pool and rng.random() < 0.8 else rng.choice(TILES)
    return Move.place(tile, board, rng.choice(list(Side)))


# -- action by action: the reference model -------------------------------------


def synced(setup: Setup) -> Iterator[tuple[Match, RefMatch]]:
    """Step a bot match and `RefMatch` side by side, comparing every action's result.

    Yields before every action and once at the end, with both models in the same state.
    """
    m = setup.match()
    ref = RefMatch(setup.seats, m.target, setup.variant, setup.round_limit)
    expected: tuple[Any, ...] | None = None
    for match, move, result in steps(m, setup.bots()):
        if result is not None:
            assert result_tuple(result) == expected
        if match.phase is Phase.PLAYING and ref.phase == "awaiting":
            # A new round: its leader follows §2.
            log = match.history[-1]
            if ref.last_end is not None and ref.last_end[0] == "domino":
                assert log.leader_choice is LeaderChoice.FINISHER
                assert log.deal.leader == ref.last_end[1]
            else:
                assert log.leader_choice is LeaderChoice.LOT
            ref.start(log.deal)
        yield match, ref
        if move is not None:
            expected = ref.apply(move)


PHASES = {"playing": Phase.PLAYING, "awaiting": Phase.AWAITING_DEAL, "over": Phase.OVER}


@examples(250)
@given(setups())
def test_engine_agrees_with_the_reference_rules_after_every_action(setup: Setup) -> None:
    """Legal moves (in documented order), results, counted ends, round ends, leaders, scores."""
    match = None
    for match, ref in synced(setup):
        assert match.phase is PHASES[ref.phase]
        assert match.seat_scores() == ref.seat_scores()
        assert match.winner == ref.winner
        if match.phase is not Phase.PLAYING:
            assert match.legal_moves() == []
            continue
        assert match.turn == ref.turn
        assert [match.hand(s) for s in range(match.seats)] == [sorted(h) for h in ref.hands]
        assert match.boneyard_left == len(ref.bone) - ref.pos
        assert match.layout.ends == sum(ref.layout.contributions())
        assert [(o.tile, o.side) for o in match.layout.open_sides()] == ref.layout.open_sides()
        assert match.legal_moves() == ref.legal()
    assert match is not None
    assert match.phase is Phase.OVER


STOPS: dict[str, Callable[[Match], bool]] = {
    "any state": lambda m: True,
    "a drawn tile to place": lambda m: m.drawn >= 0,
    "an empty boneyard": lambda m: m.boneyard_left == 0,
    "open Sniff branches": lambda m: any(o.side >= Side.BRANCH_A for o in m.layout.open_sides()),
    "a led double": lambda m: len(m.layout.placements) == 1 and m.layout.sniff >= 0,
    "a stub on the layout": lambda m: m.layout.stubs != 0,
}


@examples(100)
@given(setups(), st.integers(0, 200), st.sampled_from(sorted(STOPS)))
def test_check_refuses_exactly_the_moves_the_rules_forbid_with_the_rules_error(
    setup: Setup, cut: int, stop: str
) -> None:
    """At one state of a match, every possible move (with and without a suffix) is tried."""
    for m, ref in synced(setup):  # noqa: B007 (the state where the loop stops is checked)
        if m.phase is Phase.OVER:
            break
        if m.phase is Phase.PLAYING and m.move_count >= cut and STOPS[stop](m):
            break
    before = snapshot(m)
    legal = set(m.legal_moves())
    for move in ALL_MOVES:
        expected = ref.refusal(move)
        assert (expected is None) == (move in legal), move
        refusal: type[IllegalMove] | None = None
        try:
            m.check(move)
        except IllegalMove as e:
            refusal = type(e)
        assert refusal is expected, (str(move), refusal, expected)
    assert snapshot(m) == before


@pytest.mark.slow
@examples(100)
@given(setups(), st.integers(0, 200), st.sampled_from(sorted(STOPS)))
def test_apply_refuses_exactly_what_check_refuses_with_the_same_error(
    setup: Setup, cut: int, stop: str
) -> None:
    """`apply` recognises the common lawful actions without `check`: at one state, every
    possible move (with and without a suffix, by the seat to play and by another) is
    applied to a copy, and refused with check's error or accepted where check accepts it."""
    for m, _ in synced(setup):
        if m.phase is Phase.OVER:
            break
        if m.phase is Phase.PLAYING and m.move_count >= cut and STOPS[stop](m):
            break
    before = snapshot(m)
    seats: list[int | None] = [None, *range(m.seats)]
    for move in ALL_MOVES:
        for seat in seats:
            expected: type[IllegalMove] | None = None
            try:
                m.check(move, seat)
            except IllegalMove as e:
                expected = type(e)
            copy = m.copy()
            refusal: type[IllegalMove] | None = None
            try:
                copy.apply(move, seat)
            except IllegalMove as e:
                refusal = type(e)
                assert snapshot(copy) == before
            assert refusal is expected, (str(move), seat, refusal, expected)
    assert snapshot(m) == before


# -- action by action: invariants -----------------------------------------------


def walk(setup: Setup, check: Callable[[Match, random.Random], None]) -> Match:
    m = setup.match()
    rng = random.Random(setup.seed ^ setup.bot_seed)
    for match, _, _ in steps(m, setup.bots()):
        check(match, rng)
    return m


@examples(150)
@given(setups())
def test_the_28_tiles_are_partitioned_among_hands_boneyard_and_layout(setup: Setup) -> None:
    def check(m: Match, _: random.Random) -> None:
        parts: list[int] = [t for s in range(m.seats) for t in m.hand(s)]
        parts += list(m.boneyard[m.bone_pos :])
        parts += [p.tile for p in m.layout.placements if p.tile is not None]
        assert sorted(parts) == list(range(28))
        assert sorted(placed_tiles(m)) == sorted(
            p.tile for p in m.layout.placements if p.tile is not None
        )

    walk(setup, check)


@examples(150)
@given(setups())
def test_incremental_counted_ends_equal_the_sum_of_counted_ends(setup: Setup) -> None:
    def check(m: Match, _: random.Random) -> None:
        assert m.layout.ends == sum(c.value for c in m.layout.counted_ends())

    walk(setup, check)


@examples(120)
@given(setups())
def test_every_legal_move_passes_check_and_previews_its_counted_ends(setup: Setup) -> None:
    def check(m: Match, rng: random.Random) -> None:
        moves = m.legal_moves()
        assert (m.phase is Phase.PLAYING) == bool(moves)
        for move in moves:
            m.check(move)
            m.check(move, seat=m.turn)
        if moves and moves[0].is_placement and rng.random() < 0.2:
            for move in moves:
                copy = m.copy(keep_history=False)
                result = copy.apply(move)
                assert m.layout.ends_after(move) == result.ends_sum

    walk(setup, check)


@examples(150)
@given(setups())
def test_legal_moves_never_name_the_mirror_of_an_open_side(setup: Setup) -> None:
    """No branch_b while branch_a is open, no line_b while line_a is open (§3)."""

    def check(m: Match, _: random.Random) -> None:
        open_ = {(o.tile, o.side) for o in m.layout.open_sides()}
        for move in m.legal_moves():
            if move.kind is not MoveKind.PLACE:
                continue
            assert (move.board_tile, move.side) in open_
            assert move.side is not None
            twin = {Side.LINE_B: Side.LINE_A, Side.BRANCH_B: Side.BRANCH_A}.get(Side(move.side))
            if twin is not None:
                assert (move.board_tile, twin) not in open_, str(move)

    walk(setup, check)


@examples(150)
@given(setups())
def test_draw_and_pass_are_offered_only_when_no_tile_can_be_placed(setup: Setup) -> None:
    def check(m: Match, _: random.Random) -> None:
        moves = m.legal_moves()
        if not moves:
            return
        values = {o.value for o in m.layout.open_sides()}
        placeable = [t for t in m.hand(m.turn) if values & {t.low, t.high} or not values]
        if m.drawn >= 0:
            assert {mv.tile for mv in moves} == {m.drawn}
            assert m.drawn in placeable
        elif placeable:
            assert all(mv.is_placement for mv in moves)
            assert {mv.tile for mv in moves} == set(placeable)
        elif m.boneyard_left:
            assert moves == [DRAW]
        else:
            assert moves == [PASS]

    walk(setup, check)


@examples(120)
@given(setups())
def test_illegal_moves_are_refused_and_leave_the_state_exactly_unchanged(setup: Setup) -> None:
    def check(m: Match, rng: random.Random) -> None:
        if rng.random() > 0.25:
            return
        legal = set(m.legal_moves())
        before = snapshot(m)
        for _ in range(8):
            move = random_move(m, rng)
            if move in legal:
                continue
            for attempt in (m.check, m.apply):
                try:
                    attempt(move)
                except IllegalMove:
                    pass
                else:
                    raise AssertionError(f"{move} was accepted in {m.phase}")
                assert snapshot(m) == before
        if legal:
            other = (m.turn + rng.randrange(1, m.seats)) % m.seats
            move = rng.choice(sorted(legal, key=str))
            for attempt in (m.check, m.apply):
                try:
                    attempt(move, seat=other)
                except NotYourTurn:
                    pass
                else:
                    raise AssertionError(f"seat {other} played {move} out of turn")
                assert snapshot(m) == before

    m = walk(setup, check)
    before = snapshot(m)
    assert m.legal_moves() == []
    for move in (DRAW, PASS, Move.lead(TILES[0]), *ALL_MOVES[::97]):
        try:
            m.apply(move)
        except MatchOver:
            pass
        else:
            raise AssertionError("a move was accepted after the match was won")
    assert snapshot(m) == before


def tiles_in(obj: object) -> Iterator[Tile]:
    """Every `Tile` reachable from a view's fields, computed ones included."""
    if isinstance(obj, Tile):
        yield obj
    elif isinstance(obj, SeatView):
        for name in (*SeatView._fields, "hand", "open_sides", "counted_ends"):
            yield from tiles_in(getattr(obj, name))
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from tiles_in(getattr(obj, f.name))
    elif isinstance(obj, tuple | list):
        for item in obj:
            yield from tiles_in(item)


@pytest.mark.slow
@examples(100)
@given(setups())
def test_a_seat_view_never_holds_another_hand_or_the_boneyard(setup: Setup) -> None:
    def check(m: Match, rng: random.Random) -> None:
        if rng.random() > 0.3:
            return
        on_table = set(placed_tiles(m))
        for seat in range(m.seats):
            v = view(m, seat)
            assert v.hands is None
            assert v.boneyard is None
            assert list(v.hand) == m.hand(seat)
            assert set(tiles_in(v)) <= set(v.hand) | on_table
            assert v.hand_sizes == tuple(len(m.hand(s)) for s in range(m.seats))
            assert v.boneyard_size == m.boneyard_left
            if v.drawn is not None:
                assert seat == m.turn
        obs = view(m, None)
        assert obs.hand == ()
        assert obs.hands == tuple(tuple(m.hand(s)) for s in range(m.seats))
        assert obs.boneyard == tuple(m.boneyard[m.bone_pos :])

    walk(setup, check)


# -- whole matches -----------------------------------------------------------


@examples(400)
@given(setups(targets=(None,)))
def test_team_scores_equal_placement_points_minus_deductions(setup: Setup) -> None:
    def team(seat: int) -> int:
        return seat % 2 if setup.seats == 4 else seat

    earned = [0] * (2 if setup.seats == 4 else setup.seats)
    m = setup.match()
    for match, _, result in steps(m, setup.bots()):
        if result is None:
            continue
        if result.move.is_placement:
            earned[team(result.seat)] += result.points
        else:
            assert result.points == 0
        if result.round_end is not None:
            for seat, d in enumerate(result.round_end.deductions):
                earned[team(seat)] -= d
            assert result.round_end.scores == match.seat_scores()
        assert match.scores == earned
    assert m.seat_scores() == tuple(earned[team(s)] for s in range(setup.seats))


@examples(800)
@given(setups())
def test_match_is_won_at_the_target_on_a_scoring_placement_without_deductions(
    setup: Setup,
) -> None:
    m = play_match(setup.match(), setup.bots())
    assert m.phase is Phase.OVER
    last = m.history[-1]
    if last.end is not None:
        # Not won at the target: the round limit ended it (docs/rules.md §8, Reading).
        assert setup.round_limit is not None
        assert len(m.history) == setup.round_limit
        assert all(s < m.target for s in m.scores)
        best = max(m.scores)
        if m.scores.count(best) > 1:
            assert m.winner is None
        else:
            assert m.winner is not None
            assert m.scores[m.teams[m.winner]] == best
            assert m.winner == m.teams.index(m.teams[m.winner])  # the side's first seat
        for log in m.history:
            assert log.end is not None
        return
    assert setup.round_limit is None or len(m.history) <= setup.round_limit
    assert m.winner is not None
    team = m.teams[m.winner]
    assert m.scores[team] >= m.target
    assert all(s < m.target for i, s in enumerate(m.scores) if i != team)
    assert last.actions[-1].is_placement
    points = last.points[-1]
    assert points is not None
    assert points > 0
    assert m.scores[team] - points < m.target
    # Every earlier round ended (domino or block) and took its deductions.
    for log in m.history[:-1]:
        assert log.end is not None
        assert log.end.deductions == tuple(rounded_deduction(p) for p in log.end.pips)


@examples(400)
@given(setups())
def test_domino_finisher_leads_the_next_round_and_a_block_sends_it_to_lot(setup: Setup) -> None:
    m = play_match(setup.match(), setup.bots())
    assert m.history[0].leader_choice is LeaderChoice.LOT
    for prev, log in zip(m.history, m.history[1:], strict=False):
        assert prev.end is not None
        if prev.end.kind.value == "domino":
            assert prev.end.finisher is not None
            assert log.leader_choice is LeaderChoice.FINISHER
            assert log.deal.leader == prev.end.finisher
            assert prev.end.pips[prev.end.finisher] == 0
        else:
            assert prev.end.finisher is None
            assert log.leader_choice is LeaderChoice.LOT


@examples(250)
@given(setups())
def test_the_same_seeds_give_the_same_match(setup: Setup) -> None:
    first = play_match(setup.match(), setup.bots())
    second = play_match(setup.match(), setup.bots())
    assert to_record(first, "m") == to_record(second, "m")
    assert first.winner == second.winner
    assert first.seat_scores() == second.seat_scores()


@examples(400)
@given(setups())
def test_a_record_survives_json_and_replays_to_the_same_match(setup: Setup) -> None:
    m = play_match(setup.match(), setup.bots())
    record = to_record(m, "prop")
    text = json.dumps(record)
    again = replay(json.loads(text))
    assert again.winner == m.winner
    assert again.seat_scores() == m.seat_scores()
    assert to_record(again, "prop") == record
    parsed = parse_record(json.loads(text))
    assert replay(parsed).seat_scores() == m.seat_scores()
    # docs/records.md: nulls for draw/pass, and a won last round has no end or deductions.
    for rnd in record["rounds"]:
        for action, points in zip(rnd["actions"], rnd["claims"]["points"], strict=True):
            assert (points is None) == (action in ("draw", "pass"))
    if m.history[-1].end is None:
        assert "end" not in record["rounds"][-1]["claims"]
        assert "deductions" not in record["rounds"][-1]["claims"]
    else:  # ended at the round limit: a complete last round (docs/records.md `round_limit`)
        assert record["round_limit"] == len(record["rounds"])
        assert "deductions" in record["rounds"][-1]["claims"]
    assert record["claims"] == {"winner": m.winner, "scores": list(m.seat_scores())}
    assert record["format"] == ("american-sniff/1" if setup.variant == "american" else "sniff/2")
    assert record.get("variant", "american") == setup.variant


@examples(200)
@given(setups(), st.integers(0, 3000))
def test_a_record_cut_mid_match_replays_to_the_live_state(setup: Setup, cut: int) -> None:
    m = setup.match()
    for match, _, _ in steps(m, setup.bots()):
        if match.move_count >= cut:
            break
    live = snapshot(m)
    again = replay(json.loads(json.dumps(to_record(m))))
    # The replay deals explicitly, so only its generator and leader choices differ.
    assert snapshot(again)[:-3] == live[:-3]
    assert [(r.deal, r.actions, r.points, r.end, r.scores) for r in again.history] == [
        (r.deal, r.actions, r.points, r.end, r.scores) for r in m.history
    ]


@examples(200)
@given(setups(), st.integers(0, 3000), st.booleans())
def test_a_copy_is_independent_of_the_original(setup: Setup, cut: int, keep: bool) -> None:
    m = setup.match()
    for match, _, _ in steps(m, setup.bots()):
        if match.move_count >= cut:
            break
    before = snapshot(m)
    copy = m.copy(keep_history=keep)
    play_match(copy, setup.bots(salt=1))
    assert snapshot(m) == before
    if keep:
        # Played on with the same bots, the copy and the original make the same match.
        twin = m.copy()
        play_match(m, setup.bots(salt=2))
        play_match(twin, setup.bots(salt=2))
        assert to_record(m) == to_record(twin)

"""The layout: a tree of placed tiles, its open sides and its counted ends.

Everything a placement changes is kept incrementally (open sides, the
canonical targets, the counted-ends sum, the mask of placeable tiles), so a
placement and a legal-move query cost a handful of table lookups. A place is
a *slot*, the int `tile * 8 + side` (see `moves.SIDE_COUNT`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sniff.errors import (
    LeadExpected,
    MissingOrientation,
    NoSuchOpenSide,
    NotCanonical,
    StubEnd,
    TileAlreadyPlaced,
    UnexpectedOrientation,
    ValuesDoNotMatch,
)
from sniff.moves import LEADS, PLACES, SIDE_COUNT, Move, MoveKind, Side
from sniff.tiles import (
    BIT,
    FULL_SET,
    HIGH,
    IS_DOUBLE,
    LOW,
    MATCHING,
    NAMES,
    SET_SIZE,
    TILES,
    Tile,
)
from sniff.variants import AMERICAN, VARIANTS, SniffRule, Variant

# Enum members as module constants for the hot paths (reading `Side.HIGH` as a class
# attribute costs about 100 ns in Python 3.11).
_LEAD: Final = MoveKind.LEAD
_LOW: Final = Side.LOW
_HIGH: Final = Side.HIGH
_LINE_A: Final = Side.LINE_A
_LINE_B: Final = Side.LINE_B
_BRANCH_A: Final = Side.BRANCH_A
_BRANCH_B: Final = Side.BRANCH_B
_LOW_BIT: Final = 1 << _LOW
_HIGH_BIT: Final = 1 << _HIGH
_LINE_A_BIT: Final = 1 << _LINE_A
_LINE_B_BIT: Final = 1 << _LINE_B
_LINES: Final = _LINE_A_BIT | _LINE_B_BIT
_BRANCH_A_BIT: Final = 1 << _BRANCH_A
_BRANCH_B_BIT: Final = 1 << _BRANCH_B


def _slot_value(slot: int) -> int:
    t, side = divmod(slot, SIDE_COUNT)
    if t >= SET_SIZE or side >= 6:
        return -1
    if IS_DOUBLE[t]:
        return LOW[t] if side >= _LINE_A else -1
    if side == _LOW:
        return LOW[t]
    return HIGH[t] if side == _HIGH else -1


SLOT_VALUE: Final = tuple(_slot_value(s) for s in range(SET_SIZE * SIDE_COUNT))
"""Value of each place; -1 where the tile has no such side."""


def _contribution(t: int, covered: int, sniff: SniffRule | None) -> int:
    """What one placed tile adds to the counted ends (docs/rules.md §5; §10.2 for the Sniff)."""
    a, b = LOW[t], HIGH[t]
    if a != b:
        return (0 if covered & _LOW_BIT else a) + (0 if covered & _HIGH_BIT else b)
    if sniff is None:
        return 0 if covered & _LINE_B_BIT else 2 * a
    if covered & _LINES == _LINES:
        if not sniff.branch_counts:
            return 0
        return a * ((0 if covered & _BRANCH_A_BIT else 1) + (0 if covered & _BRANCH_B_BIT else 1))
    if sniff.counts_whole:
        return 2 * a
    return a * ((0 if covered & _LINE_A_BIT else 1) + (0 if covered & _LINE_B_BIT else 1))


def _table(sniff: SniffRule | None) -> tuple[int, ...]:
    return tuple(_contribution(t, c, sniff) for t in range(SET_SIZE) for c in range(64))


PLAIN_CONTRIB: Final = _table(None)
"""Contribution of a tile that is not the Sniff, by `tile * 64 + covered sides`."""
SNIFF_CONTRIB: Final[dict[SniffRule, tuple[int, ...]]] = {
    rule: _table(rule) for v in VARIANTS.values() for rule in v.rules
}
"""Contribution of the Sniff under each rule, by `tile * 64 + covered sides`."""
_DOUBLES: Final = sum(BIT[t] for t in range(SET_SIZE) if IS_DOUBLE[t])
SLOT_MATCHING: Final = tuple(MATCHING[v] if v >= 0 else 0 for v in SLOT_VALUE)
"""The tiles each place accepts, as a bitmask (none where the place does not exist)."""
_MIRROR: Final = tuple(s & 7 in (_LINE_B, _BRANCH_B) for s in range(SET_SIZE * SIDE_COUNT))
"""Whether a place is the second of a mirror pair (line_b, branch_b)."""
_BIT_TILE: Final = {BIT[t]: t for t in range(SET_SIZE)}
"""A tile's number by its bit."""
_BIT_ROW: Final = {BIT[t]: t * SET_SIZE * SIDE_COUNT for t in range(SET_SIZE)}
"""Where a tile's placements start in `moves.PLACES`, by the tile's bit."""


class _Placements(dict[int, tuple[Move, ...]]):
    """The placements of the tiles `m` on the place `slot`, in tile order, by `m << 8 | slot`
    (`m` among the tiles the place accepts): each made when first asked for, so the table
    never holds more than the 70 places x 128 sets of their 7 tiles, and costs no import
    time."""

    def __missing__(self, key: int) -> tuple[Move, ...]:
        m, slot = key >> 8, key & 255
        moves = []
        while m:
            low = m & -m
            moves.append(PLACES[_BIT_ROW[low] + slot])
            m ^= low
        out = self[key] = tuple(moves)
        return out


_PLACEMENTS: Final = _Placements()


def points_for(ends_sum: int) -> int:
    """A positive multiple of five scores itself; anything else scores nothing (§5)."""
    return ends_sum if ends_sum > 0 and ends_sum % 5 == 0 else 0


@dataclass(frozen=True, slots=True)
class OpenSide:
    """A place where a tile may be joined."""

    tile: Tile
    side: Side
    value: int

    def __str__(self) -> str:
        return f"{self.tile}:{self.side}"


@dataclass(frozen=True, slots=True)
class CountedEnd:
    """One contribution to the counted ends.

    A double that counts both halves (2·d: a later double with one line side
    covered, or the Sniff before both line sides hold tiles) is one
    contribution, named by its first open line side.
    """

    tile: Tile
    side: Side
    value: int


class Layout:
    """The tiles on the table in one round, with their sides covered or open.

    The variant is asked only when a double is about to become the Sniff: its
    rule for the chosen orientation then fixes the Sniff's contribution table
    and whether its branches are stubs, for the rest of the round.
    """

    __slots__ = (
        "covered",
        "ends",
        "open",
        "placements",
        "playable",
        "rule",
        "sniff",
        "sniff_table",
        "stubs",
        "targets",
        "variant",
    )

    def __init__(self, variant: Variant = AMERICAN) -> None:
        self.variant = variant
        self.covered: list[int] = [-1] * SET_SIZE
        """Per tile: bitmask of covered sides, or -1 while the tile is not on the layout."""
        self.sniff = -1
        self.rule: SniffRule | None = None
        """The rule of the Sniff on the layout (its variant and orientation), once there is one."""
        self.sniff_table: tuple[int, ...] = PLAIN_CONTRIB
        self.stubs = 0
        """Bitmask of the tiles joined to a stub branch: their outer end counts but is not open."""
        self.ends = 0
        self.open: list[int] = []
        """Every open slot, sorted."""
        self.targets: list[int] = []
        """The canonical open slots (first of each mirror pair), sorted."""
        self.placements: list[Move] = []
        self.playable = FULL_SET
        """Bitmask of the tiles that some target accepts."""

    def copy(self) -> Layout:
        other = Layout.__new__(Layout)
        other.variant = self.variant
        other.covered = self.covered[:]
        other.sniff = self.sniff
        other.rule = self.rule
        other.sniff_table = self.sniff_table
        other.stubs = self.stubs
        other.ends = self.ends
        other.open = self.open[:]
        other.targets = self.targets[:]
        other.placements = self.placements[:]
        other.playable = self.playable
        return other

    @property
    def empty(self) -> bool:
        return not self.placements

    def check(self, move: Move) -> None:
        """Raise the specific error for a placement this layout refuses; do nothing if lawful."""
        tile = move.tile
        assert tile is not None
        if self.covered[tile] >= 0:
            raise TileAlreadyPlaced(f"{NAMES[tile]} is on the layout already")
        if move.kind is _LEAD:
            if self.placements:
                raise LeadExpected(
                    f"the layout is not empty: {NAMES[tile]} must be placed on an open side"
                )
            self._check_orientation(move)
            return
        if not self.placements:
            raise LeadExpected(f"the layout is empty: lead a tile (write it alone, like '{tile}')")
        slot = move.slot
        board, side = move.board_tile, move.side
        assert board is not None
        assert side is not None
        if slot in self.targets:
            value = SLOT_VALUE[slot]
            if LOW[tile] != value and HIGH[tile] != value:
                raise ValuesDoNotMatch(
                    f"{NAMES[tile]} has no half of value {value} to join {board}:{side}"
                )
            if move.orientation is not None or (IS_DOUBLE[tile] and self.sniff < 0):
                self._check_orientation(move)
            return
        cov = self.covered[board]
        if cov < 0:
            raise NoSuchOpenSide(f"{board} is not on the layout")
        if SLOT_VALUE[slot] < 0 or (side >= _BRANCH_A and board != self.sniff):
            kind = "a double" if IS_DOUBLE[board] else "a non-double"
            raise NoSuchOpenSide(f"{board} is {kind} and has no {side} side")
        if cov >> side & 1:
            raise NoSuchOpenSide(f"{board}:{side} already holds a tile")
        if self.stubs >> board & 1:
            raise StubEnd(f"{board} is a stub of the Sniff: its outer end counts but takes no tile")
        if side >= _BRANCH_A and cov & _LINES != _LINES:
            raise NoSuchOpenSide(
                f"the branches of the Sniff {board} open only once both its line sides hold tiles"
            )
        mirror = "line_a" if side == _LINE_B else "branch_a"
        raise NotCanonical(f"{board}:{side} mirrors {board}:{mirror}, which is open: use {mirror}")

    def _check_orientation(self, move: Move) -> None:
        """The suffix rules of §10.4, checked after every layout rule (docs/records.md's order)."""
        tile = move.tile
        assert tile is not None
        makes_sniff = IS_DOUBLE[tile] and self.sniff < 0
        variant = self.variant
        if move.orientation is None:
            if makes_sniff and variant.has_choice:
                raise MissingOrientation(
                    f"{move} makes the Sniff: in {variant} name its orientation "
                    f"('{move}/cross' or '{move}/inline')"
                )
            return
        if not variant.has_choice:
            raise UnexpectedOrientation(
                f"{move}: in {variant} the Sniff's orientation is not a choice; drop the suffix"
            )
        if not makes_sniff:
            raise UnexpectedOrientation(
                f"{move}: only the move that makes the Sniff names an orientation"
            )

    def sniff_rule_for(self, move: Move) -> SniffRule | None:
        """The rule the Sniff would follow if `move` made it; None if it makes no Sniff."""
        t = move.tile
        if t is None or not IS_DOUBLE[t] or self.sniff >= 0:
            return None
        return self.variant.rule(move.orientation)

    def contribution(self, t: int) -> int:
        cov = self.covered[t]
        return (self.sniff_table if t == self.sniff else PLAIN_CONTRIB)[t * 64 + cov]

    def ends_after(self, move: Move) -> int:
        """The counted-ends sum a lawful placement would leave, without making it."""
        return ends_after(self.covered, self.sniff, self.sniff_table, self.ends, self.variant, move)

    def place(self, move: Move) -> int:
        """Make a lawful placement (already `check`ed); return the new counted-ends sum."""
        t = move.tile
        assert t is not None
        covered = self.covered
        open_ = self.open
        double = IS_DOUBLE[t]
        table = PLAIN_CONTRIB
        if double and self.sniff < 0:
            self.sniff = t
            rule = self.rule = self.variant.rule(move.orientation)
            table = self.sniff_table = SNIFF_CONTRIB[rule]
        if move.kind is _LEAD:
            covered[t] = 0
            first = t * SIDE_COUNT + (_LINE_A if double else _LOW)
            open_ += (first, first + 1)
            self.ends = table[t * 64]
        else:
            board = move.board_tile
            side = move.side
            assert board is not None
            assert side is not None
            slot = move.slot
            value = SLOT_VALUE[slot]
            cov = covered[board]
            new_cov = cov | 1 << side
            covered[board] = new_cov
            open_.remove(slot)
            ends = self.ends
            # A stub (a tile on a stub branch) keeps its outer end counted but never opens it.
            stub = False
            if board == self.sniff:
                board_table = self.sniff_table
                ends += board_table[board * 64 + new_cov] - board_table[board * 64 + cov]
                if new_cov & _LINES == _LINES and cov & _LINES != _LINES:
                    base = board * SIDE_COUNT
                    open_ += (base + _BRANCH_A, base + _BRANCH_B)
                elif side >= _BRANCH_A and self.rule is not None and self.rule.stubs:
                    stub = True
                    self.stubs |= BIT[t]
            else:
                ends += PLAIN_CONTRIB[board * 64 + new_cov] - PLAIN_CONTRIB[board * 64 + cov]
            if double:
                covered[t] = _LINE_A_BIT
                open_.append(t * SIDE_COUNT + _LINE_B)
                ends += table[t * 64 + _LINE_A_BIT]
            elif LOW[t] == value:
                covered[t] = _LOW_BIT
                if not stub:
                    open_.append(t * SIDE_COUNT + _HIGH)
                ends += HIGH[t]
            else:
                covered[t] = _HIGH_BIT
                if not stub:
                    open_.append(t * SIDE_COUNT + _LOW)
                ends += LOW[t]
            self.ends = ends
        open_.sort()
        self.placements.append(move)
        targets: list[int] = []
        add = targets.append
        playable = 0
        prev = -2
        for slot in open_:
            # A mirror (line_b beside line_a, branch_b beside branch_a) directly follows its twin.
            if slot == prev + 1 and _MIRROR[slot]:
                continue
            add(slot)
            playable |= SLOT_MATCHING[slot]
            prev = slot
        self.targets = targets
        self.playable = playable
        return self.ends

    def moves_for(self, hand: int) -> list[Move]:
        """Canonical placements of the tiles in `hand`: by place (board tile, side), then tile.

        Where the variant lets the player choose the Sniff's orientation, a
        move that makes the Sniff is listed twice, `cross` then `inline` (§10.1).
        """
        choice = self.sniff < 0 and hand & _DOUBLES and self.variant.has_choice
        if not self.placements:
            out = []
            while hand:
                low = hand & -hand
                out.append(LEADS[_BIT_TILE[low]])
                hand ^= low
            return _with_orientations(out, self.variant) if choice else out
        moves: list[Move] = []
        # Each place's moves for the tiles it accepts, by table: a legal-move list is made for
        # every bot decision.
        for slot in self.targets:
            m = hand & SLOT_MATCHING[slot]
            if m:
                moves += _PLACEMENTS[m << 8 | slot]
        return _with_orientations(moves, self.variant) if choice else moves

    def open_sides(self) -> tuple[OpenSide, ...]:
        """Every open side, canonical or not, ordered by (tile, side)."""
        return tuple(OpenSide(TILES[s >> 3], Side(s & 7), SLOT_VALUE[s]) for s in self.open)

    def target_sides(self) -> tuple[OpenSide, ...]:
        """The open sides legal moves may name (first of each mirror pair)."""
        return tuple(OpenSide(TILES[s >> 3], Side(s & 7), SLOT_VALUE[s]) for s in self.targets)

    def counted_ends(self) -> tuple[CountedEnd, ...]:
        """Each contribution to the counted ends, ordered by tile (docs/rules.md §5 table)."""
        out: list[CountedEnd] = []
        for t in range(SET_SIZE):
            cov = self.covered[t]
            if cov < 0:
                continue
            tile = TILES[t]
            if not IS_DOUBLE[t]:
                for side, bit in ((_LOW, _LOW_BIT), (_HIGH, _HIGH_BIT)):
                    if not cov & bit:
                        out.append(CountedEnd(tile, side, LOW[t] if bit == _LOW_BIT else HIGH[t]))
            elif t == self.sniff and self.rule is not None:
                out.extend(_sniff_ends(tile, cov, self.rule))
            elif not cov & _LINE_B_BIT:
                first_open = _LINE_B if cov & _LINE_A_BIT else _LINE_A
                out.append(CountedEnd(tile, first_open, 2 * LOW[t]))
        return tuple(out)


def ends_after(
    covered: Sequence[int],
    sniff: int,
    sniff_table: tuple[int, ...],
    ends: int,
    variant: Variant,
    move: Move,
) -> int:
    """The counted-ends sum a lawful placement would leave on a layout with these covered
    sides, Sniff and sum (a `Layout`'s, or a `SeatView`'s copy of them)."""
    t = move.tile
    assert t is not None
    double = IS_DOUBLE[t]
    if double and sniff < 0:
        new_table = SNIFF_CONTRIB[variant.rule(move.orientation)]
    else:
        new_table = PLAIN_CONTRIB
    if move.kind is _LEAD:
        return new_table[t * 64]
    board = move.board_tile
    assert board is not None
    assert move.side is not None
    table = sniff_table if board == sniff else PLAIN_CONTRIB
    cov = covered[board]
    base = board * 64
    value = SLOT_VALUE[move.slot]
    added = new_table[t * 64 + _LINE_A_BIT] if double else LOW[t] + HIGH[t] - value
    return ends - table[base + cov] + table[base + (cov | 1 << move.side)] + added


def _sniff_ends(tile: Tile, cov: int, rule: SniffRule) -> list[CountedEnd]:
    """The Sniff's counted ends under its rule (§5, §10.2)."""
    d = LOW[tile]
    if cov & _LINES == _LINES:
        if not rule.branch_counts:
            return []
        sides = ((_BRANCH_A, _BRANCH_A_BIT), (_BRANCH_B, _BRANCH_B_BIT))
        return [CountedEnd(tile, side, d) for side, bit in sides if not cov & bit]
    if rule.counts_whole:
        first_open = _LINE_B if cov & _LINE_A_BIT else _LINE_A
        return [CountedEnd(tile, first_open, 2 * d)]
    sides = ((_LINE_A, _LINE_A_BIT), (_LINE_B, _LINE_B_BIT))
    return [CountedEnd(tile, side, d) for side, bit in sides if not cov & bit]


def _with_orientations(moves: list[Move], variant: Variant) -> list[Move]:
    """Each double's move as one move per orientation the variant allows, in its order."""
    out: list[Move] = []
    for move in moves:
        tile = move.tile
        assert tile is not None
        if IS_DOUBLE[tile]:
            out.extend(move.oriented(o) for o in variant.orientations)
        else:
            out.append(move)
    return out

"""The layout: a tree of placed tiles, its open sides and its counted ends.

Everything a placement changes is kept incrementally (open sides, the
canonical targets, the counted-ends sum, the mask of placeable tiles), so a
placement and a legal-move query cost a handful of table lookups. A place is
a *slot*, the int `tile * 8 + side` (see `moves.SIDE_COUNT`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from service.engine.errors import (
    LeadExpected,
    NoSuchOpenSide,
    NotCanonical,
    TileAlreadyPlaced,
    ValuesDoNotMatch,
)
from service.engine.moves import SIDE_COUNT, Move, MoveKind, Side, place_move
from service.engine.tiles import (
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

_LOW_BIT: Final = 1 << Side.LOW
_HIGH_BIT: Final = 1 << Side.HIGH
_LINE_A_BIT: Final = 1 << Side.LINE_A
_LINE_B_BIT: Final = 1 << Side.LINE_B
_LINES: Final = _LINE_A_BIT | _LINE_B_BIT
_BRANCH_A_BIT: Final = 1 << Side.BRANCH_A
_BRANCH_B_BIT: Final = 1 << Side.BRANCH_B


def _slot_value(slot: int) -> int:
    t, side = divmod(slot, SIDE_COUNT)
    if t >= SET_SIZE or side >= 6:
        return -1
    if IS_DOUBLE[t]:
        return LOW[t] if side >= Side.LINE_A else -1
    if side == Side.LOW:
        return LOW[t]
    return HIGH[t] if side == Side.HIGH else -1


SLOT_VALUE: Final = tuple(_slot_value(s) for s in range(SET_SIZE * SIDE_COUNT))
"""Value of each place; -1 where the tile has no such side."""


def _contribution(t: int, covered: int, sniff: bool) -> int:
    """What one placed tile adds to the counted ends (RULES.md §5 table)."""
    a, b = LOW[t], HIGH[t]
    if a != b:
        return (0 if covered & _LOW_BIT else a) + (0 if covered & _HIGH_BIT else b)
    if sniff and covered & _LINES == _LINES:
        return a * ((0 if covered & _BRANCH_A_BIT else 1) + (0 if covered & _BRANCH_B_BIT else 1))
    if sniff:
        return 2 * a
    return 0 if covered & _LINE_B_BIT else 2 * a


PLAIN_CONTRIB: Final = tuple(_contribution(t, c, False) for t in range(SET_SIZE) for c in range(64))
SNIFF_CONTRIB: Final = tuple(_contribution(t, c, True) for t in range(SET_SIZE) for c in range(64))


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
    """The tiles on the table in one round, with their sides covered or open."""

    __slots__ = ("covered", "ends", "open", "placements", "playable", "sniff", "targets")

    def __init__(self) -> None:
        self.covered: list[int] = [-1] * SET_SIZE
        """Per tile: bitmask of covered sides, or -1 while the tile is not on the layout."""
        self.sniff = -1
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
        other.covered = self.covered[:]
        other.sniff = self.sniff
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
        if move.kind is MoveKind.LEAD:
            if self.placements:
                raise LeadExpected(
                    f"the layout is not empty: {NAMES[tile]} must be placed on an open side"
                )
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
            return
        cov = self.covered[board]
        if cov < 0:
            raise NoSuchOpenSide(f"{board} is not on the layout")
        if SLOT_VALUE[slot] < 0 or (side >= Side.BRANCH_A and board != self.sniff):
            kind = "a double" if IS_DOUBLE[board] else "a non-double"
            raise NoSuchOpenSide(f"{board} is {kind} and has no {side} side")
        if cov >> side & 1:
            raise NoSuchOpenSide(f"{board}:{side} already holds a tile")
        if side >= Side.BRANCH_A and cov & _LINES != _LINES:
            raise NoSuchOpenSide(
                f"the branches of the Sniff {board} open only once both its line sides hold tiles"
            )
        mirror = "line_a" if side == Side.LINE_B else "branch_a"
        raise NotCanonical(f"{board}:{side} mirrors {board}:{mirror}, which is open: use {mirror}")

    def contribution(self, t: int) -> int:
        cov = self.covered[t]
        return (SNIFF_CONTRIB if t == self.sniff else PLAIN_CONTRIB)[t * 64 + cov]

    def ends_after(self, move: Move) -> int:
        """The counted-ends sum a lawful placement would leave, without making it."""
        t = move.tile
        assert t is not None
        if move.kind is MoveKind.LEAD:
            return (SNIFF_CONTRIB if IS_DOUBLE[t] else PLAIN_CONTRIB)[t * 64]
        board = move.board_tile
        assert board is not None
        assert move.side is not None
        table = SNIFF_CONTRIB if board == self.sniff else PLAIN_CONTRIB
        cov = self.covered[board]
        base = board * 64
        value = SLOT_VALUE[move.slot]
        added = 2 * value if IS_DOUBLE[t] else LOW[t] + HIGH[t] - value
        return self.ends - table[base + cov] + table[base + (cov | 1 << move.side)] + added

    def place(self, move: Move) -> int:
        """Make a lawful placement (already `check`ed); return the new counted-ends sum."""
        t = move.tile
        assert t is not None
        covered = self.covered
        open_ = self.open
        double = IS_DOUBLE[t]
        if double and self.sniff < 0:
            self.sniff = t
        if move.kind is MoveKind.LEAD:
            covered[t] = 0
            first = t * SIDE_COUNT + (Side.LINE_A if double else Side.LOW)
            open_ += (first, first + 1)
            self.ends = (SNIFF_CONTRIB if double else PLAIN_CONTRIB)[t * 64]
        else:
            board = move.board_tile
            side = move.side
            assert board is not None
            assert side is not None
            slot = board * SIDE_COUNT + side
            value = SLOT_VALUE[slot]
            table = SNIFF_CONTRIB if board == self.sniff else PLAIN_CONTRIB
            cov = covered[board]
            new_cov = cov | 1 << side
            covered[board] = new_cov
            open_.remove(slot)
            ends = self.ends - table[board * 64 + cov] + table[board * 64 + new_cov]
            if board == self.sniff and new_cov & _LINES == _LINES and cov & _LINES != _LINES:
                base = board * SIDE_COUNT
                open_ += (base + Side.BRANCH_A, base + Side.BRANCH_B)
            if double:
                covered[t] = _LINE_A_BIT
                open_.append(t * SIDE_COUNT + Side.LINE_B)
                ends += 2 * value
            elif LOW[t] == value:
                covered[t] = _LOW_BIT
                open_.append(t * SIDE_COUNT + Side.HIGH)
                ends += HIGH[t]
            else:
                covered[t] = _HIGH_BIT
                open_.append(t * SIDE_COUNT + Side.LOW)
                ends += LOW[t]
            self.ends = ends
        open_.sort()
        self.placements.append(move)
        targets = []
        playable = 0
        prev = -2
        for slot in open_:
            # A mirror (line_b beside line_a, branch_b beside branch_a) directly follows its twin.
            if slot == prev + 1 and slot & 1 and slot & 7 != Side.HIGH:
                continue
            targets.append(slot)
            playable |= MATCHING[SLOT_VALUE[slot]]
            prev = slot
        self.targets = targets
        self.playable = playable
        return self.ends

    def moves_for(self, hand: int) -> list[Move]:
        """Canonical placements of the tiles in `hand`: by place (board tile, side), then tile."""
        if not self.placements:
            out = []
            while hand:
                low = hand & -hand
                out.append(Move.lead(low.bit_length() - 1))
                hand ^= low
            return out
        moves = []
        for slot in self.targets:
            m = hand & MATCHING[SLOT_VALUE[slot]]
            while m:
                low = m & -m
                moves.append(place_move(low.bit_length() - 1, slot))
                m ^= low
        return moves

    def open_sides(self) -> tuple[OpenSide, ...]:
        """Every open side, canonical or not, ordered by (tile, side)."""
        return tuple(OpenSide(TILES[s >> 3], Side(s & 7), SLOT_VALUE[s]) for s in self.open)

    def target_sides(self) -> tuple[OpenSide, ...]:
        """The open sides legal moves may name (first of each mirror pair)."""
        return tuple(OpenSide(TILES[s >> 3], Side(s & 7), SLOT_VALUE[s]) for s in self.targets)

    def counted_ends(self) -> tuple[CountedEnd, ...]:
        """Each contribution to the counted ends, ordered by tile (RULES.md §5 table)."""
        out: list[CountedEnd] = []
        for t in range(SET_SIZE):
            cov = self.covered[t]
            if cov < 0:
                continue
            tile = TILES[t]
            if not IS_DOUBLE[t]:
                for side, bit in ((Side.LOW, _LOW_BIT), (Side.HIGH, _HIGH_BIT)):
                    if not cov & bit:
                        out.append(CountedEnd(tile, side, LOW[t] if bit == _LOW_BIT else HIGH[t]))
            elif t == self.sniff and cov & _LINES == _LINES:
                for side, bit in ((Side.BRANCH_A, _BRANCH_A_BIT), (Side.BRANCH_B, _BRANCH_B_BIT)):
                    if not cov & bit:
                        out.append(CountedEnd(tile, side, LOW[t]))
            elif t == self.sniff or not cov & _LINE_B_BIT:
                first_open = Side.LINE_B if cov & _LINE_A_BIT else Side.LINE_A
                out.append(CountedEnd(tile, first_open, 2 * LOW[t]))
        return tuple(out)

"""Sides of placed tiles and moves, with their docs/records.md text round trip.

Every possible move is built once at import and handed out by the factory
methods, so legal-move generation allocates nothing and moves compare by
identity as well as by value.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Final, cast

from sniff.errors import MoveNotationError, TileNotationError
from sniff.tiles import SET_SIZE, TILES, Tile
from sniff.variants import Orientation


class Side(enum.IntEnum):
    """A place on a placed tile (docs/rules.md §3); the int order is the canonical order."""

    LOW = 0
    HIGH = 1
    LINE_A = 2
    LINE_B = 3
    BRANCH_A = 4
    BRANCH_B = 5

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Side:
        try:
            return _SIDES_BY_NAME[text.strip().lower()]
        except KeyError:
            raise MoveNotationError(
                f"{text!r} is not a side (one of low, high, line_a, line_b, branch_a, branch_b)"
            ) from None


_SIDES_BY_NAME: Final = {str(s): s for s in Side}
SIDE_COUNT: Final = 8
"""Stride of a slot number: a place (tile, side) is the int `tile * 8 + side`."""


class MoveKind(enum.IntEnum):
    LEAD = 0
    PLACE = 1
    DRAW = 2
    PASS = 3


@dataclass(frozen=True, slots=True)
class Move:
    """One action: lead a tile, place a tile on (board tile, side), draw, or pass."""

    kind: MoveKind
    tile: Tile | None = None
    board_tile: Tile | None = None
    side: Side | None = None
    orientation: Orientation | None = None
    """The Sniff's orientation, named only where the variant lets the player choose (§10.4)."""
    text: str = field(default="", init=False, compare=False, repr=False)
    """The docs/records.md notation, computed once (moves are interned)."""
    slot: int = field(default=-1, init=False, compare=False, repr=False)
    """The place this move joins, as `board_tile * 8 + side` (-1 for non-placements)."""
    is_placement: bool = field(default=False, init=False, compare=False, repr=False)
    """A lead or a placement (not a draw or a pass)."""

    def __post_init__(self) -> None:
        # Computed once here (moves are interned): the hot paths read plain attributes.
        object.__setattr__(self, "text", self._notation())
        if self.board_tile is not None and self.side is not None:
            object.__setattr__(self, "slot", self.board_tile * SIDE_COUNT + self.side)
        object.__setattr__(self, "is_placement", self.kind <= MoveKind.PLACE)

    @staticmethod
    def lead(tile: int) -> Move:
        if not 0 <= tile < SET_SIZE:
            raise MoveNotationError(f"no tile number {tile} in a double-six set")
        return _LEADS[tile]

    @staticmethod
    def place(tile: int, board_tile: int, side: int) -> Move:
        if not (0 <= tile < SET_SIZE and 0 <= board_tile < SET_SIZE and 0 <= side < 6):
            raise MoveNotationError(f"no such placement ({tile}, {board_tile}, {side})")
        return place_move(tile, board_tile * SIDE_COUNT + side)

    @staticmethod
    def draw() -> Move:
        return DRAW

    @staticmethod
    def pass_() -> Move:
        return PASS

    def __str__(self) -> str:
        return self.text

    def oriented(self, orientation: Orientation | None) -> Move:
        """This placement naming `orientation` (None: naming none); interned like every move."""
        if orientation is self.orientation:
            return self
        if not self.is_placement:
            raise MoveNotationError(f"{self.text!r} is not a placement: it has no orientation")
        tile = self.tile
        assert tile is not None
        base = _LEADS[tile] if self.kind is MoveKind.LEAD else place_move(tile, self.slot)
        if orientation is None:
            return base
        key = (base, orientation)
        move = _ORIENTED.get(key)
        if move is None:
            move = _ORIENTED.setdefault(
                key, Move(base.kind, base.tile, base.board_tile, base.side, orientation)
            )
        return move

    def _notation(self) -> str:
        if self.kind is MoveKind.PLACE:
            text = f"{self.tile}@{self.board_tile}:{self.side}"
        elif self.kind is MoveKind.LEAD:
            text = str(self.tile)
        else:
            return "draw" if self.kind is MoveKind.DRAW else "pass"
        return text if self.orientation is None else f"{text}/{self.orientation}"

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"

    @staticmethod
    def parse(text: str) -> Move:
        """Read docs/records.md notation: `TILE`, `TILE@BOARDTILE:SIDE`, `draw` or `pass`, a
        placement optionally followed by exactly `/cross` or `/inline` (§10.4)."""
        if not isinstance(text, str):
            raise MoveNotationError(f"a move is written as text, not {text!r}")
        known = _BY_TEXT.get(text)
        if known is not None:  # canonical text: the common case, without a regex
            return known
        body, slash, suffix = text.rpartition("/")
        if slash:
            orientation = _ORIENTATIONS.get(suffix)
            if orientation is None:
                raise MoveNotationError(
                    f"{text!r}: an orientation is written exactly '/cross' or '/inline'"
                )
            move = Move._parse_plain(body)
            if not move.is_placement:
                raise MoveNotationError(f"{text!r}: only a placement may name an orientation")
            return move.oriented(orientation)
        return Move._parse_plain(text)

    @staticmethod
    def _parse_plain(text: str) -> Move:
        known = _BY_TEXT.get(text)
        if known is not None:
            return known
        t = text.strip()
        low = t.lower()
        if low == "draw":
            return DRAW
        if low == "pass":
            return PASS
        try:
            if "@" not in t:
                return _LEADS[Tile.parse(t)]
            tile_text, _, place = t.partition("@")
            board_text, colon, side_text = place.rpartition(":")
            if not colon:
                raise MoveNotationError(f"{text!r}: a placement is written TILE@BOARDTILE:SIDE")
            return Move.place(Tile.parse(tile_text), Tile.parse(board_text), Side.parse(side_text))
        except TileNotationError as e:
            raise MoveNotationError(f"{text!r} is not a move: {e}") from None


_LEADS: Final = tuple(Move(MoveKind.LEAD, t) for t in TILES)
_PLACES: Final = tuple(
    Move(MoveKind.PLACE, t, b, Side(s)) if s < 6 else None
    for t in TILES
    for b in TILES
    for s in range(SIDE_COUNT)
)
DRAW: Final = Move(MoveKind.DRAW)
PASS: Final = Move(MoveKind.PASS)
LEADS: Final[tuple[Move, ...]] = _LEADS
"""The lead of each tile, by tile number."""
PLACES: Final = cast(tuple[Move, ...], _PLACES)
"""The placement of tile t on slot s at `t * SET_SIZE * SIDE_COUNT + s` (None where the slot
has no such side: never read by the generators, which index only open slots)."""
_ORIENTED: Final[dict[tuple[Move, Orientation], Move]] = {}
_ORIENTATIONS: Final = {str(o): o for o in Orientation}
_BY_TEXT: Final[dict[str, Move]] = {
    str(m): m for m in (*_LEADS, *(p for p in _PLACES if p is not None), DRAW, PASS)
}

MOVES_BY_TEXT: Final[dict[str, Move]] = _BY_TEXT
"""Every move without an orientation by its canonical text: what `Move.parse` reads without
parsing (a move naming an orientation is parsed)."""


def place_move(tile: int, slot: int) -> Move:
    """The interned placement of `tile` on `slot` (hot path: no checks)."""
    return cast(Move, _PLACES[tile * SET_SIZE * SIDE_COUNT + slot])

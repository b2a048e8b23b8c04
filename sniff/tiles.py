"""Tiles of the double-six set, as small ints with a text round trip.

A tile is its index 0..27 in the order (0,0), (0,1), ..., (0,6), (1,1), ...,
(6,6), so sorting tiles sorts them by (low, high). Tiles are `int` subclasses:
hands are bitmasks over these indices and the hot paths use the plain tables
below rather than attribute access.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from sniff.errors import TileNotationError

Pips = int
"""A half's value, 0..6."""

SET_SIZE: Final = 28


class Tile(int):
    """One domino; prints as docs/records.md notation (`1-4`), low half first."""

    __slots__ = ()

    @property
    def low(self) -> Pips:
        return LOW[self]

    @property
    def high(self) -> Pips:
        return HIGH[self]

    @property
    def pips(self) -> int:
        return LOW[self] + HIGH[self]

    @property
    def is_double(self) -> bool:
        return LOW[self] == HIGH[self]

    def __str__(self) -> str:
        return NAMES[self]

    def __repr__(self) -> str:
        return f"Tile.parse({NAMES[self]!r})"

    @classmethod
    def of(cls, a: int, b: int) -> Tile:
        """The tile with halves a and b, in either order."""
        if not (0 <= a <= 6 and 0 <= b <= 6):
            raise TileNotationError(f"no tile {a}-{b} in a double-six set")
        if a > b:
            a, b = b, a
        return TILES[_INDEX[a][b]]

    @classmethod
    def parse(cls, text: str) -> Tile:
        """Read `a-b`, `b-a`, `[a|b]` or `a|b` (docs/records.md)."""
        known = _BY_NAME.get(text) if type(text) is str else None
        if known is not None:  # `a-b` or `b-a` as written: the common case, without a regex
            return known
        if not isinstance(text, str):
            raise TileNotationError(f"a tile is written as text like '1-4', not {text!r}")
        stripped = text.strip()
        m = _TILE_RE.fullmatch(stripped)
        if m is not None:
            return cls.of(int(m.group(1) or m.group(3)), int(m.group(2) or m.group(4)))
        m = _BARE_BAR_RE.fullmatch(stripped)
        if m is None:
            raise TileNotationError(f"{text!r} is not a tile (write it like '1-4')")
        return cls.of(int(m.group(1)), int(m.group(2)))


_TILE_RE = re.compile(r"([0-9])\s*-\s*([0-9])|\[\s*([0-9])\s*\|\s*([0-9])\s*\]")
_BARE_BAR_RE = re.compile(r"([0-9])\s*\|\s*([0-9])")

_pairs = [(a, b) for a in range(7) for b in range(a, 7)]
_INDEX: Final[list[list[int]]] = [[-1] * 7 for _ in range(7)]
for _i, (_a, _b) in enumerate(_pairs):
    _INDEX[_a][_b] = _INDEX[_b][_a] = _i

TILES: Final[tuple[Tile, ...]] = tuple(Tile(i) for i in range(SET_SIZE))
LOW: Final[tuple[int, ...]] = tuple(a for a, _ in _pairs)
HIGH: Final[tuple[int, ...]] = tuple(b for _, b in _pairs)
PIPS: Final[tuple[int, ...]] = tuple(a + b for a, b in _pairs)
IS_DOUBLE: Final[tuple[bool, ...]] = tuple(a == b for a, b in _pairs)
NAMES: Final[tuple[str, ...]] = tuple(f"{a}-{b}" for a, b in _pairs)
_BY_NAME: Final[dict[str, Tile]] = {
    **{f"{b}-{a}": TILES[i] for i, (a, b) in enumerate(_pairs)},
    **{name: TILES[i] for i, name in enumerate(NAMES)},
}
TILES_BY_NAME: Final[dict[str, Tile]] = _BY_NAME
"""Each tile by the names `Tile.parse` reads without a pattern: `a-b` and `b-a`."""
BIT: Final[tuple[int, ...]] = tuple(1 << i for i in range(SET_SIZE))
FULL_SET: Final = (1 << SET_SIZE) - 1

MATCHING: Final[tuple[int, ...]] = tuple(
    sum(1 << i for i, (a, b) in enumerate(_pairs) if v in (a, b)) for v in range(7)
)
"""MATCHING[v]: bitmask of the tiles with a half of value v."""


def tiles_of(mask: int) -> list[Tile]:
    """The tiles of a bitmask, in ascending order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(TILES[low.bit_length() - 1])
        mask ^= low
    return out


def mask_of(tiles: Iterable[int]) -> int:
    """The bitmask of an iterable of tiles."""
    mask = 0
    for t in tiles:
        mask |= BIT[t]
    return mask


def pips_of(mask: int) -> int:
    """Total pips of a bitmask of tiles."""
    total = 0
    while mask:
        low = mask & -mask
        total += PIPS[low.bit_length() - 1]
        mask ^= low
    return total

"""Where each tile of a layout lies on the table, in units of one half (a tile is 2 x 1).

The rules join tiles as a tree (docs/rules.md §3): a non-double lies lengthwise,
continuing its line; a later double lies crosswise; the Sniff lies crosswise
with four sides (line_a, line_b, and its two branches leaving from its
ends) or, in the variants, in line (lengthwise, its branches leaving from
its long sides). Only the Sniff branches, so every other tile has one free
side: the layout is at most four chains leaving the Sniff.

Tiles are placed one at a time in the order they were played, each from
the side it joined, and none is ever moved afterwards: the picture after
step k is the first k tiles of the picture after any later step, and shows
nothing of what is still to come. A chain runs straight while it stays in
the "room" (a square around the lead), turns a corner when it would leave
it (left first, so that the chains wind round the lead like a pinwheel,
as on a real table), and never lies on another tile: every candidate place
is checked against every tile already down. Should a tile find no free
place next to its side (never seen in practice), it moves further out
along its line until it does, and the drawing joins it to its side with a
short line (a `gap`).

Screen coordinates: x to the right, y downwards; directions are unit vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from analysis.replay.model import Placement
from analysis.replay.rules import Orientation
from sniff.tiles import HIGH, IS_DOUBLE, LOW, Tile

Vec = tuple[float, float]

EAST: Final[Vec] = (1.0, 0.0)
WEST: Final[Vec] = (-1.0, 0.0)
ROOM: Final = 9.0
"""Half the side of the square in which chains run straight, in half-tile units."""
_EPS: Final = 1e-6
_MAX_GAP: Final = 200


def left(d: Vec) -> Vec:
    """90 degrees counterclockwise on the screen (y down): east -> north."""
    return (d[1], -d[0])


def right(d: Vec) -> Vec:
    return (-d[1], d[0])


def _add(p: Vec, q: Vec, k: float = 1.0) -> Vec:
    return (p[0] + k * q[0], p[1] + k * q[1])


@dataclass(frozen=True, slots=True)
class Rect:
    x: float
    y: float
    w: float
    h: float

    def overlaps(self, other: Rect) -> bool:
        """True when the two share some area (touching edges do not count)."""
        return (
            self.x < other.x + other.w - _EPS
            and other.x < self.x + self.w - _EPS
            and self.y < other.y + other.h - _EPS
            and other.y < self.y + self.h - _EPS
        )


def _rect_along(q: Vec, d: Vec, length: float, width: float) -> Rect:
    """The rectangle whose entry edge is centred on q and which extends `length` along d."""
    a = _add(q, right(d), width / 2)
    b = _add(_add(q, left(d), width / 2), d, length)
    return Rect(min(a[0], b[0]), min(a[1], b[1]), abs(a[0] - b[0]), abs(a[1] - b[1]))


def _square(center: Vec) -> Rect:
    return Rect(center[0] - 0.5, center[1] - 0.5, 1.0, 1.0)


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where a side of a placed tile is: the middle of its edge, and the way out of it."""

    point: Vec
    direction: Vec


@dataclass(frozen=True, slots=True)
class Half:
    rect: Rect
    value: int


@dataclass(frozen=True, slots=True)
class TileShape:
    tile: Tile
    rect: Rect
    halves: tuple[Half, Half]
    long_axis_vertical: bool
    side_half: dict[str, int | None] = field(hash=False)
    """For each side: the index of the half that side counts, or None for the whole tile."""
    anchors: dict[str, Anchor] = field(hash=False)
    sniff: bool = False
    orientation: Orientation | None = None
    gap: tuple[Vec, Vec] | None = None
    """The line drawn from the side it joined to its entry, when it had to move away."""


@dataclass(frozen=True, slots=True)
class Geometry:
    shapes: tuple[TileShape, ...]

    def shape_of(self, tile: str) -> TileShape:
        for s in self.shapes:
            if str(s.tile) == tile:
                return s
        raise KeyError(tile)

    def anchor(self, tile: str, side: str) -> Anchor:
        return self.shape_of(tile).anchors[side]

    def bounds(self) -> Rect:
        if not self.shapes:
            return Rect(-1, -1, 2, 2)
        xs = [s.rect.x for s in self.shapes] + [s.rect.x + s.rect.w for s in self.shapes]
        ys = [s.rect.y for s in self.shapes] + [s.rect.y + s.rect.h for s in self.shapes]
        return Rect(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))

    @property
    def gaps(self) -> int:
        return sum(1 for s in self.shapes if s.gap is not None)


def _crosswise(p: Placement) -> bool:
    if not IS_DOUBLE[p.tile]:
        return False
    return not (p.sniff and p.orientation == "inline")


def _shape(
    p: Placement, q: Vec, d: Vec, entry_value: int, gap: tuple[Vec, Vec] | None
) -> TileShape:
    """The tile placed with its entry edge centred on q, travelling along d."""
    t = p.tile
    lo, hi = LOW[t], HIGH[t]
    vertical = abs(d[1]) > 0.5
    if _crosswise(p):
        rect = _rect_along(q, d, 1.0, 2.0)
        mid = _add(q, d, 0.5)
        left_half = Half(_square(_add(mid, left(d), 0.5)), lo)
        right_half = Half(_square(_add(mid, right(d), 0.5)), lo)
        anchors = {"line_b": Anchor(_add(q, d), d)}
        side_half: dict[str, int | None] = {"line_a": None, "line_b": None}
        if p.sniff:
            anchors["branch_a"] = Anchor(_add(mid, left(d)), left(d))
            anchors["branch_b"] = Anchor(_add(mid, right(d)), right(d))
            side_half["branch_a"] = 0
            side_half["branch_b"] = 1
        return TileShape(
            t,
            rect,
            (left_half, right_half),
            not vertical,
            side_half,
            anchors,
            p.sniff,
            p.orientation,
            gap,
        )
    rect = _rect_along(q, d, 2.0, 1.0)
    near = Half(_square(_add(q, d, 0.5)), entry_value)
    far_value = hi if entry_value == lo else lo
    far = Half(_square(_add(q, d, 1.5)), far_value)
    far_anchor = Anchor(_add(q, d, 2.0), d)
    if p.sniff:  # an in-line Sniff
        mid = _add(q, d, 1.0)
        anchors = {
            "line_b": far_anchor,
            "branch_a": Anchor(_add(mid, left(d), 0.5), left(d)),
            "branch_b": Anchor(_add(mid, right(d), 0.5), right(d)),
        }
        side_half = {"line_a": 0, "line_b": 1, "branch_a": None, "branch_b": None}
    else:
        entry_side = "low" if entry_value == lo else "high"
        free_side = "high" if entry_side == "low" else "low"
        anchors = {free_side: far_anchor}
        side_half = {entry_side: 0, free_side: 1}
    return TileShape(
        t, rect, (near, far), vertical, side_half, anchors, p.sniff, p.orientation, gap
    )


def _lead(p: Placement) -> TileShape:
    t = p.tile
    if _crosswise(p):
        # Crosswise on an east-west line: entered from the west.
        shape = _shape(p, (-0.5, 0.0), EAST, LOW[t], None)
        anchors = {"line_a": Anchor((-0.5, 0.0), WEST), **shape.anchors}
    else:
        shape = _shape(p, (-1.0, 0.0), EAST, LOW[t], None)
        if p.sniff:  # an in-line Sniff led
            anchors = {"line_a": Anchor((-1.0, 0.0), WEST), **shape.anchors}
        else:
            anchors = {"low": Anchor((-1.0, 0.0), WEST), **shape.anchors}
    side_half = dict(shape.side_half)
    if not p.sniff and not IS_DOUBLE[t]:
        side_half = {"low": 0, "high": 1}
    return TileShape(
        t,
        shape.rect,
        shape.halves,
        shape.long_axis_vertical,
        side_half,
        anchors,
        p.sniff,
        p.orientation,
    )


def _side_value(shape: TileShape, side: str) -> int:
    t = shape.tile
    if side == "low":
        return LOW[t]
    if side == "high":
        return HIGH[t]
    return LOW[t]


def layout_geometry(placements: Sequence[Placement], room: float = ROOM) -> Geometry:
    """Every placed tile's place on the table, in the order played (see the module's doc)."""
    shapes: list[TileShape] = []
    by_tile: dict[int, TileShape] = {}
    used: set[tuple[int, str]] = set()
    sniff: TileShape | None = None
    for p in placements:
        if p.board is None or p.side is None:
            shape = _lead(p)
        else:
            used.add((p.board, p.side))
            parent = by_tile[p.board]
            anchor = parent.anchors[p.side]
            # The Sniff's branches will need the space in front of them.
            corridors = []
            if sniff is not None:
                for side in ("branch_a", "branch_b"):
                    a = sniff.anchors[side]
                    if (sniff.tile, side) not in used and (p.board, p.side) != (sniff.tile, side):
                        corridors.append(_rect_along(a.point, a.direction, 4.0, 2.0))
            shape = _place(p, anchor, _side_value(parent, p.side), shapes, room, corridors)
        shapes.append(shape)
        by_tile[p.tile] = shape
        if p.sniff:
            sniff = shape
    return Geometry(tuple(shapes))


def _free(rect: Rect, shapes: Sequence[TileShape]) -> bool:
    return not any(rect.overlaps(s.rect) for s in shapes)


def _reach(rect: Rect, d: Vec) -> float:
    """How far the rectangle reaches from the lead in the direction d."""
    if d[0] > 0.5:
        return rect.x + rect.w
    if d[0] < -0.5:
        return -rect.x
    if d[1] > 0.5:
        return rect.y + rect.h
    return -rect.y


def _room_ahead(shape: TileShape, shapes: Sequence[TileShape], reach: int = 2) -> int:
    """How many tiles could follow `shape` straight on from its line's free end (up to reach)."""
    exits = [a for side, a in shape.anchors.items() if side in ("low", "high", "line_b")]
    if not exits:
        return reach
    anchor = exits[0]
    placed = [*shapes, shape]
    for k in range(reach):
        probe = _rect_along(_add(anchor.point, anchor.direction, 2.0 * k), anchor.direction, 2, 1)
        if not _free(probe, placed):
            return k
    return reach


def _place(
    p: Placement,
    anchor: Anchor,
    value: int,
    shapes: Sequence[TileShape],
    room: float,
    corridors: Sequence[Rect] = (),
) -> TileShape:
    d = anchor.direction
    pt = anchor.point
    across = 2.0 if _crosswise(p) else 1.0

    def straight(gap: float = 0.0) -> TileShape:
        q = _add(pt, d, gap)
        return _shape(p, q, d, value, (pt, q) if gap else None)

    def turned(to: Vec, gap: float = 0.0) -> TileShape:
        # The tile turns the corner beyond the end of its side, its entry half beside it.
        base = _add(pt, d, gap)
        q = _add(_add(base, d, across / 2), to, -0.5)
        return _shape(p, q, to, value, (pt, base) if gap else None)

    moves = [(straight(), d), (turned(left(d)), left(d)), (turned(right(d)), right(d))]
    free = [(i, c, to) for i, (c, to) in enumerate(moves) if _free(c.rect, shapes)]
    if free:
        # A double turns no corner while it can help it: a crosswise tile round a
        # corner would lie along its old line, and a Sniff's branches would point
        # back along it. Then room ahead (a chain must not wall itself in), the Sniff's
        # branches' way, never back towards the lead, the room, and straight
        # before left before right.
        def key(item: tuple[int, TileShape, Vec]) -> tuple[bool, int, bool, bool, bool, int]:
            i, c, to = item
            in_way = any(c.rect.overlaps(r) for r in corridors)
            r = c.rect
            inward = (r.x + r.w / 2) * to[0] + (r.y + r.h / 2) * to[1] < -_EPS
            bent_double = (across > 1 or p.sniff) and i > 0
            return (bent_double, -_room_ahead(c, shapes), in_way, inward, _reach(r, to) > room, i)

        return min(free, key=key)[1]
    for gap in range(1, _MAX_GAP):
        for c in (straight(gap), turned(left(d), gap), turned(right(d), gap)):
            if _free(c.rect, shapes):
                return c
    raise AssertionError("no free place for a tile within the gap limit")  # pragma: no cover

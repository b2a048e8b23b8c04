"""A position of a replay as SVG: tiles with real pips, open sides, counted ends, figures.

Everything is drawn in half-tile units (geometry.py) and scaled by the
viewBox. Elements carry data attributes naming what they show
(`data-tile`, `data-open`, `data-counted`, `data-value`, `data-seat`), so
a test, or another program, can read a picture back and check it against
the engine. The HTML viewer (html.py) is built from these same fragments.
"""

from __future__ import annotations

from html import escape
from typing import Final

from analysis.replay.geometry import Geometry, Rect, TileShape, layout_geometry
from analysis.replay.model import Mark, Replay, Step

PX: Final = 36
"""Pixels per half-tile unit in a standalone picture."""
MARGIN: Final = 1.6
HEADER: Final = 2.6
_A, _C, _B = 0.26, 0.5, 0.74
_PIPS: Final[dict[str, tuple[tuple[float, float], ...]]] = {
    "0": (),
    "1": ((_C, _C),),
    "2": ((_A, _A), (_B, _B)),
    "3": ((_A, _A), (_C, _C), (_B, _B)),
    "4": ((_A, _A), (_B, _A), (_A, _B), (_B, _B)),
    "5": ((_A, _A), (_B, _A), (_C, _C), (_A, _B), (_B, _B)),
    "6v": ((_A, _A), (_A, _C), (_A, _B), (_B, _A), (_B, _C), (_B, _B)),
    "6h": ((_A, _A), (_C, _A), (_B, _A), (_A, _B), (_C, _B), (_B, _B)),
}

STYLE: Final = """
.tile rect.body{fill:#fffdf6;stroke:#333;stroke-width:.05}
.tile.sniff rect.body{fill:#fff3c4}
.tile line{stroke:#333;stroke-width:.04}
.pip{fill:#222}
.gap{stroke:#888;stroke-width:.06;stroke-dasharray:.12 .08}
.open circle{fill:#2e9b4f;stroke:#fff;stroke-width:.04}
.open text{fill:#fff;font:bold .36px sans-serif;text-anchor:middle;dominant-baseline:central}
.counted rect{fill:none;stroke:#e07b00;stroke-width:.09;stroke-dasharray:.18 .09}
.counted circle{fill:#e07b00}
.counted text{fill:#fff;font:bold .24px sans-serif;text-anchor:middle;dominant-baseline:central}
.head{font:.42px sans-serif;fill:#222}
.head .big{font-weight:bold}
"""


def _n(x: float) -> str:
    """A coordinate, short."""
    text = f"{x:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def defs() -> str:
    """The pip faces, one symbol per value (6 in two layouts), and the style."""
    faces = []
    for name, pips in _PIPS.items():
        dots = "".join(f'<circle class="pip" cx="{x}" cy="{y}" r=".085"/>' for x, y in pips)
        faces.append(f'<symbol id="f{name}" viewBox="0 0 1 1">{dots}</symbol>')
    return f"<defs><style>{STYLE}</style>{''.join(faces)}</defs>"


def _face(value: int, rect: Rect, vertical: bool) -> str:
    name = str(value) if value != 6 else ("6v" if vertical else "6h")
    return (
        f'<use href="#f{name}" x="{_n(rect.x)}" y="{_n(rect.y)}" width="1" height="1"'
        f' data-pips="{value}"/>'
    )


def tile_svg(shape: TileShape) -> str:
    """One tile: its body, the line between its halves, the pips of each half."""
    r = shape.rect
    a, b = shape.halves
    if abs(a.rect.x - b.rect.x) > 0.5:  # halves side by side: a vertical dividing line
        x = max(a.rect.x, b.rect.x)
        divider = (x, r.y + 0.1, x, r.y + r.h - 0.1)
    else:
        y = max(a.rect.y, b.rect.y)
        divider = (r.x + 0.1, y, r.x + r.w - 0.1, y)
    cls = "tile sniff" if shape.sniff else "tile"
    extra = f' data-orientation="{shape.orientation}"' if shape.sniff else ""
    gap = ""
    if shape.gap is not None:
        (x1, y1), (x2, y2) = shape.gap
        gap = f'<line class="gap" x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}"/>'
    return (
        f'<g class="{cls}" data-tile="{shape.tile}"{extra}>{gap}'
        f'<rect class="body" x="{_n(r.x)}" y="{_n(r.y)}" width="{_n(r.w)}" height="{_n(r.h)}"'
        f' rx=".12"/>'
        f'<line x1="{_n(divider[0])}" y1="{_n(divider[1])}" x2="{_n(divider[2])}"'
        f' y2="{_n(divider[3])}"/>'
        f"{_face(a.value, a.rect, shape.long_axis_vertical)}"
        f"{_face(b.value, b.rect, shape.long_axis_vertical)}</g>"
    )


def open_marker(geometry: Geometry, mark: Mark) -> str:
    """A green disc just outside an open side, holding the side's value."""
    anchor = geometry.anchor(mark.tile, mark.side)
    (px, py), (dx, dy) = anchor.point, anchor.direction
    cx, cy = px + 0.38 * dx, py + 0.38 * dy
    return (
        f'<g class="open" data-open="{mark.tile}:{mark.side}" data-value="{mark.value}">'
        f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r=".3"/>'
        f'<text x="{_n(cx)}" y="{_n(cy)}">{mark.value}</text></g>'
    )


def counted_marker(geometry: Geometry, mark: Mark) -> str:
    """A dashed orange outline round what counts (a half, or a whole double), with its value."""
    shape = geometry.shape_of(mark.tile)
    half = shape.side_half.get(mark.side)
    r = shape.rect if half is None else shape.halves[half].rect
    inset = 0.07
    x, y, w, h = r.x + inset, r.y + inset, r.w - 2 * inset, r.h - 2 * inset
    label_x, label_y = x + w - 0.06, y + 0.06
    return (
        f'<g class="counted" data-counted="{mark.tile}:{mark.side}" data-value="{mark.value}">'
        f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" rx=".1"/>'
        f'<circle cx="{_n(label_x)}" cy="{_n(label_y)}" r=".17"/>'
        f'<text x="{_n(label_x)}" y="{_n(label_y)}">{mark.value}</text></g>'
    )


def frame(geometry: Geometry) -> Rect:
    """The drawing's extent with room for markers; never smaller than a few tiles."""
    b = geometry.bounds()
    x0, y0 = min(b.x, -5.0) - MARGIN, min(b.y, -3.5) - MARGIN
    x1, y1 = max(b.x + b.w, 5.0) + MARGIN, max(b.y + b.h, 3.5) + MARGIN
    return Rect(x0, y0, x1 - x0, y1 - y0)


def board_svg(geometry: Geometry, step: Step) -> str:
    """The tiles and markers of one position, without a header (for embedding)."""
    parts: list[str] = [tile_svg(s) for s in geometry.shapes]
    parts += [counted_marker(geometry, m) for m in step.counted_ends]
    parts += [open_marker(geometry, m) for m in step.open_sides]
    return "".join(parts)


def _header(replay: Replay, step: Step, x: float, y: float) -> str:
    who = f"seat {step.seat}"
    move = step.move
    if step.kind == "draw":
        move = f"draw {step.drawn}" if step.drawn else "draw"
    points = "" if step.points is None else f" · {step.points} points"
    scores = "".join(
        f'<tspan data-seat="{seat}" data-score="{score}">  seat {seat}: {score}</tspan>'
        for seat, score in enumerate(step.scores)
    )
    line1 = (
        f'<text class="head" x="{_n(x)}" y="{_n(y + 0.6)}">'
        f"match {escape(replay.info.match_id)} · round {step.round} · step {step.n}"
        f' · {who}: <tspan class="big" id="move">{escape(move)}</tspan></text>'
    )
    line2 = (
        f'<text class="head" x="{_n(x)}" y="{_n(y + 1.25)}">'
        f'ends sum <tspan class="big" id="ends-sum" data-value="{step.ends_sum}">'
        f"{step.ends_sum}</tspan>"
        f'<tspan id="points" data-value="{step.points if step.points is not None else ""}">'
        f"{points}</tspan></text>"
    )
    line3 = f'<text class="head" id="scores" x="{_n(x)}" y="{_n(y + 1.9)}">scores{scores}</text>'
    return line1 + line2 + line3


def position_svg(replay: Replay, step: Step, px: int = PX) -> str:
    """A standalone SVG document of the position after `step`."""
    geometry = layout_geometry(step.placements)
    box = frame(geometry)
    top = box.y - HEADER
    # Wide enough for the header's first line (about 0.24 units a character).
    first_line = f"match {replay.info.match_id} · round {step.round} · step {step.n} · seat 0: "
    width = max(box.w, 14.0, 0.24 * (len(first_line) + len(step.move)) + 0.6)
    height = box.h + HEADER
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{_n(box.x)} {_n(top)} {_n(width)}'
        f' {_n(height)}" width="{round(width * px)}" height="{round(height * px)}"'
        f' font-family="sans-serif">{defs()}'
        f'<rect x="{_n(box.x)}" y="{_n(top)}" width="{_n(width)}" height="{_n(height)}"'
        f' fill="#f4f7f2"/>'
        f"{_header(replay, step, box.x + 0.3, top)}"
        f'<g id="board">{board_svg(geometry, step)}</g></svg>\n'
    )

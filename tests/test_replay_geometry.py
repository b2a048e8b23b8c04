"""The drawing's geometry: tiles never overlap, each touches the tile it joined, nothing moves."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

import pytest

from analysis.bot_matches import bot_match
from analysis.replay.geometry import Geometry, Rect, layout_geometry
from analysis.replay.model import Placement
from sniff import Move

pytestmark = pytest.mark.slow

EPS = 1e-6


def placements_of(moves: Sequence[Move], orientation: str = "cross") -> list[Placement]:
    """A round's placements as the replay model makes them (the first double is the Sniff)."""
    out: list[Placement] = []
    sniff_seen = False
    for move in moves:
        if not move.is_placement:
            continue
        assert move.tile is not None
        sniff = move.tile.is_double and not sniff_seen
        sniff_seen = sniff_seen or sniff
        out.append(
            Placement(
                move.tile,
                move.board_tile,
                None if move.side is None else str(move.side),
                sniff,
                orientation if sniff else None,  # type: ignore[arg-type]
            )
        )
    return out


def bot_rounds(seats: int, matches: int, orientation: str = "cross") -> Iterator[list[Placement]]:
    """Every round of `matches` random-bot matches (random play makes the longest lines)."""
    for seed in range(matches):
        match = bot_match(seats, 500 + seed, ["random"])
        for log in match.history:
            yield placements_of(log.actions, orientation)


def touches(a: Rect, b: Rect) -> bool:
    """The two share a stretch of edge."""
    y_overlap = min(a.y + a.h, b.y + b.h) - max(a.y, b.y)
    x_overlap = min(a.x + a.w, b.x + b.w) - max(a.x, b.x)
    side_by_side = abs(a.x + a.w - b.x) < EPS or abs(b.x + b.w - a.x) < EPS
    stacked = abs(a.y + a.h - b.y) < EPS or abs(b.y + b.h - a.y) < EPS
    return (side_by_side and y_overlap > EPS) or (stacked and x_overlap > EPS)


def check_round(placements: list[Placement], geometry: Geometry) -> None:
    shapes = {p.tile: s for p, s in zip(placements, geometry.shapes, strict=True)}
    for a, b in itertools.combinations(geometry.shapes, 2):
        assert not a.rect.overlaps(b.rect), (a.tile, b.tile, [str(p.tile) for p in placements])
    for p in placements:
        shape = shapes[p.tile]
        long_side, short_side = sorted((shape.rect.w, shape.rect.h), reverse=True)
        assert (long_side, short_side) == (2.0, 1.0)
        if p.board is not None and shape.gap is None:
            assert touches(shape.rect, shapes[p.board].rect), (str(p.tile), str(p.board))


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("orientation", ["cross", "inline"])
def test_no_two_tiles_overlap_in_thousands_of_bot_played_positions(
    seats: int, orientation: str
) -> None:
    positions = rounds = gaps = 0
    for placements in bot_rounds(seats, 40, orientation):
        geometry = layout_geometry(placements)
        check_round(placements, geometry)
        rounds += 1
        positions += len(placements)
        gaps += geometry.gaps
    assert positions > 1500, positions  # every prefix of a round is a position drawn
    assert gaps <= rounds // 100, (gaps, rounds)  # a tile set apart is a rare fallback


def test_a_position_is_the_first_tiles_of_any_later_one_so_nothing_moves() -> None:
    for placements in itertools.islice(bot_rounds(3, 5), 20):
        full = layout_geometry(placements)
        for k in range(1, len(placements) + 1):
            assert layout_geometry(placements[:k]).shapes == full.shapes[:k]


def test_doubles_lie_crosswise_and_the_sniffs_branches_leave_from_its_ends() -> None:
    moves = [Move.parse(m) for m in ("4-4", "4-6@4-4:line_a", "1-4@4-4:line_b")]
    moves += [Move.parse("2-4@4-4:branch_a"), Move.parse("3-4@4-4:branch_b")]
    geometry = layout_geometry(placements_of(moves))
    sniff, west, east, north, south = geometry.shapes
    assert (sniff.rect.w, sniff.rect.h) == (1.0, 2.0)  # crosswise on an east-west line
    assert west.rect.x + west.rect.w == sniff.rect.x
    assert (west.rect.w, west.rect.h) == (2, 1)
    assert east.rect.x == sniff.rect.x + 1
    assert (east.rect.w, east.rect.h) == (2, 1)
    assert north.rect.y + north.rect.h == sniff.rect.y
    assert (north.rect.w, north.rect.h) == (1, 2)
    assert south.rect.y == sniff.rect.y + 2
    assert (south.rect.w, south.rect.h) == (1, 2)
    for shape in (west, east):
        assert shape.rect.y == -0.5  # centred on the line


def test_an_inline_sniff_lies_lengthwise_with_its_branches_leaving_from_its_long_sides() -> None:
    moves = [Move.parse(m) for m in ("4-4", "4-6@4-4:line_a", "1-4@4-4:line_b")]
    moves += [Move.parse("2-4@4-4:branch_a"), Move.parse("3-4@4-4:branch_b")]
    geometry = layout_geometry(placements_of(moves, "inline"))
    sniff, west, east, north, south = geometry.shapes
    assert (sniff.rect.w, sniff.rect.h) == (2.0, 1.0)
    assert west.rect.x + west.rect.w == sniff.rect.x
    assert east.rect.x == sniff.rect.x + 2
    middle = sniff.rect.x + 1
    for branch in (north, south):
        assert (branch.rect.w, branch.rect.h) == (1.0, 2.0)
        assert branch.rect.x + 0.5 == middle  # leaves from the middle of a long side
    assert north.rect.y + north.rect.h == sniff.rect.y
    assert south.rect.y == sniff.rect.y + 1


def test_a_long_line_turns_a_corner_instead_of_running_off_the_table() -> None:
    moves = [Move.parse("0-1")]
    chain = ["1-2", "2-3", "3-4", "4-5", "5-6", "0-6", "0-2", "2-4", "4-6", "1-6", "1-3"]
    board, value = "0-1", 1
    for tile in chain:
        side = "high" if Move.parse(board).tile.high == value else "low"  # type: ignore[union-attr]
        moves.append(Move.parse(f"{tile}@{board}:{side}"))
        a, b = (int(x) for x in tile.split("-"))
        value = b if a == value else a
        board = tile
    geometry = layout_geometry(placements_of(moves))
    check_round(placements_of(moves), geometry)
    heights = {s.rect.h for s in geometry.shapes}
    assert heights == {1.0, 2.0}  # some tiles run across the table, some along it
    assert geometry.bounds().w < 2 * len(moves)

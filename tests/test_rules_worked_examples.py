"""Every worked example of docs/rules.md §4 and §5, figure for figure."""

from __future__ import annotations

import pytest

from sniff import Layout, Move, NotCanonical, Side, Tile, TileAlreadyPlaced, points_for


def contributions(layout: Layout) -> list[tuple[str, int]]:
    return sorted((str(c.tile), c.value) for c in layout.counted_ends())


def open_sides(layout: Layout) -> list[tuple[str, str, int]]:
    return [(str(o.tile), str(o.side), o.value) for o in layout.open_sides()]


def build(*notations: str) -> Layout:
    layout = Layout()
    for text in notations:
        move = Move.parse(text)
        layout.check(move)
        layout.place(move)
    return layout


# Position A (docs/rules.md §5): move, counted contributions, sum, points.
POSITION_A = [
    ("1-4", [("1-4", 4), ("1-4", 1)], 5, 5),
    ("1-1@1-4:low", [("1-1", 2), ("1-4", 4)], 6, 0),
    ("4-4@1-4:high", [("1-1", 2), ("4-4", 8)], 10, 10),
    ("3-4@4-4:line_b", [("1-1", 2), ("3-4", 3)], 5, 5),
    ("1-2@1-1:line_b", [("1-1", 1), ("1-1", 1), ("1-2", 2), ("3-4", 3)], 7, 0),
    ("1-5@1-1:branch_a", [("1-1", 1), ("1-2", 2), ("1-5", 5), ("3-4", 3)], 11, 0),
    ("5-5@1-5:high", [("1-1", 1), ("1-2", 2), ("5-5", 10), ("3-4", 3)], 16, 0),
    ("0-5@5-5:line_b", [("0-5", 0), ("1-1", 1), ("1-2", 2), ("3-4", 3)], 6, 0),
    ("1-3@1-1:branch_b", [("0-5", 0), ("1-2", 2), ("1-3", 3), ("3-4", 3)], 8, 0),
]

POSITION_A_OPEN_SIDES = {
    3: [("1-1", "line_b", 1), ("4-4", "line_b", 4)],
    4: [("1-1", "line_b", 1), ("3-4", "low", 3)],
    5: [("1-1", "branch_a", 1), ("1-1", "branch_b", 1), ("1-2", "high", 2), ("3-4", "low", 3)],
    6: [("1-1", "branch_b", 1), ("1-2", "high", 2), ("1-5", "high", 5), ("3-4", "low", 3)],
    8: [("0-5", "low", 0), ("1-1", "branch_b", 1), ("1-2", "high", 2), ("3-4", "low", 3)],
    9: [("0-5", "low", 0), ("1-2", "high", 2), ("1-3", "high", 3), ("3-4", "low", 3)],
}


@pytest.mark.parametrize("step", range(1, len(POSITION_A) + 1))
def test_position_a_counted_ends_sum_and_points_after_each_step(step: int) -> None:
    layout = build(*(row[0] for row in POSITION_A[:step]))
    _, expected, total, points = POSITION_A[step - 1]
    assert contributions(layout) == sorted(expected)
    assert layout.ends == total
    assert sum(c.value for c in layout.counted_ends()) == total
    assert points_for(layout.ends) == points


@pytest.mark.parametrize("step", sorted(POSITION_A_OPEN_SIDES))
def test_position_a_open_sides_after_each_listed_step(step: int) -> None:
    layout = build(*(row[0] for row in POSITION_A[:step]))
    assert open_sides(layout) == POSITION_A_OPEN_SIDES[step]


def test_preview_of_each_position_a_placement_matches_the_placement() -> None:
    layout = Layout()
    for text, _, total, _ in POSITION_A:
        move = Move.parse(text)
        assert layout.ends_after(move) == total
        layout.place(move)


def test_first_double_becomes_the_sniff_and_later_doubles_do_not() -> None:
    layout = build(*(row[0] for row in POSITION_A[:3]))
    assert layout.sniff == Tile.parse("1-1")
    layout = build(*(row[0] for row in POSITION_A[:7]))
    assert layout.sniff == Tile.parse("1-1")
    # 5-5 is a later double: it never grows branches.
    assert not [o for o in layout.open_sides() if str(o.tile) == "5-5" and o.side >= Side.BRANCH_A]


def test_only_branch_a_is_offered_while_both_sniff_branches_are_open() -> None:
    layout = build(*(row[0] for row in POSITION_A[:5]))
    hand = 1 << Tile.parse("1-5") | 1 << Tile.parse("1-3")
    texts = [str(m) for m in layout.moves_for(hand)]
    assert "1-5@1-1:branch_a" in texts
    assert "1-3@1-1:branch_a" in texts
    assert not [t for t in texts if "branch_b" in t]
    with pytest.raises(NotCanonical, match="branch_a"):
        layout.check(Move.parse("1-5@1-1:branch_b"))


def test_branch_b_is_offered_once_branch_a_holds_a_tile() -> None:
    layout = build(*(row[0] for row in POSITION_A[:8]))
    texts = [str(m) for m in layout.moves_for(1 << Tile.parse("1-3"))]
    assert texts == ["1-3@1-1:branch_b", "1-3@3-4:low"]


@pytest.mark.parametrize(
    ("moves", "expected", "total", "points"),
    [
        (["3-6", "6-6@3-6:high"], [("3-6", 3), ("6-6", 12)], 15, 15),
        (["0-0"], [("0-0", 0)], 0, 0),
        (["2-2"], [("2-2", 4)], 4, 0),
        (["4-4"], [("4-4", 8)], 8, 0),
        (["4-4", "4-6@4-4:line_a"], [("4-4", 8), ("4-6", 6)], 14, 0),
        (
            ["4-4", "4-6@4-4:line_a", "1-4@4-4:line_b"],
            [("1-4", 1), ("4-4", 4), ("4-4", 4), ("4-6", 6)],
            15,
            15,
        ),
        (
            ["4-4", "4-6@4-4:line_a", "1-4@4-4:line_b", "2-4@4-4:branch_a"],
            [("1-4", 1), ("2-4", 2), ("4-4", 4), ("4-6", 6)],
            13,
            0,
        ),
    ],
)
def test_other_source_positions(
    moves: list[str], expected: list[tuple[str, int]], total: int, points: int
) -> None:
    layout = build(*moves)
    assert contributions(layout) == sorted(expected)
    assert layout.ends == total
    assert points_for(total) == points


@pytest.mark.parametrize("double", ["0-0", "2-2"])
def test_led_sniff_opens_both_line_sides_and_offers_line_a_only(double: str) -> None:
    layout = build(double)
    value = Tile.parse(double).low
    assert open_sides(layout) == [(double, "line_a", value), (double, "line_b", value)]
    tile = next(
        t for t in range(28) if t != Tile.parse(double) and value in (Tile(t).low, Tile(t).high)
    )
    texts = [str(m) for m in layout.moves_for(1 << tile)]
    assert texts == [f"{Tile(tile)}@{double}:line_a"]
    with pytest.raises(NotCanonical):
        layout.check(Move.parse(f"{Tile(tile)}@{double}:line_b"))


def test_lead_non_double_counts_both_halves() -> None:
    assert build("1-4").ends == 5


def test_led_sniff_counts_both_halves_once() -> None:
    assert build("2-2").ends == 4


def test_a_tile_appears_on_the_layout_at_most_once() -> None:
    layout = build("1-4", "4-4@1-4:high")
    with pytest.raises(TileAlreadyPlaced):
        layout.check(Move.parse("4-4@1-4:low"))

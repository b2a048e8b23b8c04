"""Every worked example of docs/rules.md §10.5, figure for figure, and the §10 rules around them."""

from __future__ import annotations

import pytest

from sniff import (
    AMERICAN,
    BERNDT,
    BRITISH,
    STUBBY,
    Layout,
    MissingOrientation,
    Move,
    MoveNotationError,
    NoSuchOpenSide,
    StubEnd,
    Tile,
    UnexpectedOrientation,
    UnknownVariant,
    Variant,
    points_for,
    variant_named,
)
from sniff.moves import MoveKind
from sniff.tiles import mask_of


def counted(layout: Layout) -> list[tuple[str, int]]:
    return sorted((str(c.tile), c.value) for c in layout.counted_ends())


def open_sides(layout: Layout) -> list[tuple[str, str]]:
    return [(str(o.tile), str(o.side)) for o in layout.open_sides()]


def build(variant: Variant, *notations: str) -> Layout:
    layout = Layout(variant)
    for text in notations:
        move = Move.parse(text)
        layout.check(move)
        layout.place(move)
    return layout


# -- Berndt (from the source): lead 1-6, 1-4 on its low side, then the 4-4 ------------

BERNDT_BASE = ("1-6", "1-4@1-6:low")


def test_berndt_base_layout_scores_7_then_10() -> None:
    led = build(BERNDT, "1-6")
    assert (led.ends, points_for(led.ends)) == (7, 0)
    both = build(BERNDT, *BERNDT_BASE)
    assert counted(both) == [("1-4", 4), ("1-6", 6)]
    assert (both.ends, points_for(both.ends)) == (10, 10)


@pytest.mark.parametrize(
    ("move", "expected", "total", "points"),
    [
        ("4-4@1-4:high/cross", [("1-6", 6), ("4-4", 8)], 14, 0),
        ("4-4@1-4:high/inline", [("1-6", 6), ("4-4", 4)], 10, 10),
    ],
)
def test_berndt_sniff_counts_by_its_orientation(
    move: str, expected: list[tuple[str, int]], total: int, points: int
) -> None:
    base = build(BERNDT, *BERNDT_BASE)
    assert base.ends_after(Move.parse(move)) == total
    layout = build(BERNDT, *BERNDT_BASE, move)
    assert counted(layout) == sorted(expected)
    assert (layout.ends, points_for(layout.ends)) == (total, points)
    assert layout.sniff == Tile.parse("4-4")  # the 4-4 is the Sniff either way


@pytest.mark.parametrize("orientation", ["cross", "inline"])
def test_berndt_branches_open_after_line_b_and_add_nothing(orientation: str) -> None:
    layout = build(BERNDT, *BERNDT_BASE, f"4-4@1-4:high/{orientation}", "4-5@4-4:line_b")
    assert ("4-4", "branch_a") in open_sides(layout)
    assert ("4-4", "branch_b") in open_sides(layout)
    # Open ends: 1-6 high (6) and 4-5 high (5); the open branches count nothing.
    assert counted(layout) == [("1-6", 6), ("4-5", 5)]
    assert layout.ends == 11
    # Berndt's branches are ordinary arms: a tile on one opens its outer side.
    arm = build(
        BERNDT, *BERNDT_BASE, f"4-4@1-4:high/{orientation}", "4-5@4-4:line_b", "2-4@4-4:branch_a"
    )
    assert ("2-4", "low") in open_sides(arm)
    assert arm.ends == 6 + 5 + 2


# -- Stubby (constructed from the source's rule, §4's tiles) ---------------------------

STUBBY_STEPS = [
    ("4-4", [("4-4", 4), ("4-4", 4)], 8, 0, [("4-4", "line_a"), ("4-4", "line_b")]),
    ("4-6@4-4:line_a", [("4-4", 4), ("4-6", 6)], 10, 10, [("4-4", "line_b"), ("4-6", "high")]),
    (
        "1-4@4-4:line_b",
        [("1-4", 1), ("4-6", 6)],
        7,
        0,
        [("1-4", "low"), ("4-4", "branch_a"), ("4-4", "branch_b"), ("4-6", "high")],
    ),
    (
        "2-4@4-4:branch_a",
        [("1-4", 1), ("2-4", 2), ("4-6", 6)],
        9,
        0,
        [("1-4", "low"), ("4-4", "branch_b"), ("4-6", "high")],
    ),
    (
        "3-4@4-4:branch_b",
        [("1-4", 1), ("2-4", 2), ("3-4", 3), ("4-6", 6)],
        12,
        0,
        [("1-4", "low"), ("4-6", "high")],
    ),
]


@pytest.mark.parametrize("step", range(1, len(STUBBY_STEPS) + 1))
def test_stubby_counted_ends_sum_points_and_open_sides_after_each_step(step: int) -> None:
    layout = build(STUBBY, *(row[0] for row in STUBBY_STEPS[:step]))
    _, expected, total, points, sides = STUBBY_STEPS[step - 1]
    assert counted(layout) == sorted(expected)
    assert layout.ends == total == sum(c.value for c in layout.counted_ends())
    assert points_for(layout.ends) == points
    assert open_sides(layout) == sides


def test_american_on_the_stubby_moves_sums_8_14_15_13_12() -> None:
    sums = []
    for step in range(1, len(STUBBY_STEPS) + 1):
        sums.append(build(AMERICAN, *(row[0] for row in STUBBY_STEPS[:step])).ends)
    assert sums == [8, 14, 15, 13, 12]
    assert points_for(15) == 15


def test_a_stub_end_counts_but_takes_no_tile() -> None:
    layout = build(STUBBY, *(row[0] for row in STUBBY_STEPS[:4]))
    # 2-4 on branch_a is a stub: its 2 end counts, but nothing may be joined to it.
    with pytest.raises(StubEnd):
        layout.check(Move.parse("2-2@2-4:low"))
    with pytest.raises(StubEnd):
        layout.check(Move.parse("0-2@2-4:low"))
    # Its covered side is covered, as anywhere.
    with pytest.raises(NoSuchOpenSide):
        layout.check(Move.parse("0-4@2-4:high"))


@pytest.mark.parametrize("variant", [BRITISH])
def test_british_in_line_is_stubby_and_crosswise_is_berndt(variant: Variant) -> None:
    for step in range(1, len(STUBBY_STEPS) + 1):
        moves = [row[0] for row in STUBBY_STEPS[:step]]
        moves[0] = "4-4/inline"
        british = build(variant, *moves)
        stubby = build(STUBBY, *(row[0] for row in STUBBY_STEPS[:step]))
        assert counted(british) == counted(stubby)
        assert open_sides(british) == open_sides(stubby)
    crosswise = (*BERNDT_BASE, "4-4@1-4:high/cross", "4-5@4-4:line_b", "2-4@4-4:branch_a")
    for step in range(1, len(crosswise) + 1):
        british = build(variant, *crosswise[:step])
        berndt = build(BERNDT, *crosswise[:step])
        assert counted(british) == counted(berndt)
        assert open_sides(british) == open_sides(berndt)


# -- §10.1 / §10.4: orientation as part of the move -------------------------------------


def test_choice_variants_list_cross_before_inline_for_each_sniff_move() -> None:
    layout = build(BERNDT, *BERNDT_BASE)
    hand = mask_of(Tile.parse(t) for t in ("4-4", "6-6", "0-4"))
    moves = [m.text for m in layout.moves_for(hand)]
    assert moves == [
        "0-4@1-4:high",
        "4-4@1-4:high/cross",
        "4-4@1-4:high/inline",
        "6-6@1-6:high/cross",
        "6-6@1-6:high/inline",
    ]
    empty = Layout(BRITISH)
    assert [m.text for m in empty.moves_for(hand)] == [
        "0-4",
        "4-4/cross",
        "4-4/inline",
        "6-6/cross",
        "6-6/inline",
    ]


@pytest.mark.parametrize("variant", [AMERICAN, STUBBY])
def test_no_choice_variants_list_sniff_moves_without_a_suffix(variant: Variant) -> None:
    layout = build(variant, *BERNDT_BASE)
    hand = mask_of([Tile.parse("4-4")])
    assert [m.text for m in layout.moves_for(hand)] == ["4-4@1-4:high"]


def test_a_missing_suffix_is_refused_where_the_variant_gives_a_choice() -> None:
    layout = build(BERNDT, *BERNDT_BASE)
    with pytest.raises(MissingOrientation):
        layout.check(Move.parse("4-4@1-4:high"))
    with pytest.raises(MissingOrientation):
        Layout(BRITISH).check(Move.parse("4-4"))


@pytest.mark.parametrize("variant", [AMERICAN, STUBBY])
def test_a_suffix_is_refused_where_the_variant_gives_no_choice(variant: Variant) -> None:
    layout = build(variant, *BERNDT_BASE)
    with pytest.raises(UnexpectedOrientation):
        layout.check(Move.parse("4-4@1-4:high/cross"))
    with pytest.raises(UnexpectedOrientation):
        Layout(variant).check(Move.parse("4-4/inline"))


def test_a_suffix_on_a_move_that_makes_no_sniff_is_refused() -> None:
    layout = build(BERNDT, *BERNDT_BASE)
    with pytest.raises(UnexpectedOrientation):
        layout.check(Move.parse("0-4@1-4:high/cross"))
    sniffed = build(BERNDT, *BERNDT_BASE, "4-4@1-4:high/inline", "4-6@4-4:line_b")
    with pytest.raises(UnexpectedOrientation):
        sniffed.check(Move.parse("6-6@4-6:high/cross"))
    # A later double needs no suffix: it is an ordinary crosswise double.
    sniffed.check(Move.parse("6-6@4-6:high"))


def test_layout_rules_are_checked_before_the_suffix() -> None:
    layout = build(BERNDT, *BERNDT_BASE)
    with pytest.raises(NoSuchOpenSide):
        layout.check(Move.parse("4-4@1-4:low/cross"))


def test_orientation_notation_round_trips_and_bad_suffixes_are_unparsable() -> None:
    for text in ("4-4@1-4:high/cross", "4-4@1-4:high/inline", "4-4/cross", "4-4/inline"):
        move = Move.parse(text)
        assert move.text == text
        assert Move.parse(move.text) is move
    assert Move.parse("[4|4]/cross").text == "4-4/cross"
    assert Move.parse("4-4/cross").kind is MoveKind.LEAD
    for bad in (
        "draw/cross",
        "pass/inline",
        "4-4/Cross",
        "4-4/",
        "4-4/sideways",
        "4-4/cross/inline",
    ):
        with pytest.raises(MoveNotationError):
            Move.parse(bad)


def test_variants_are_named_exactly() -> None:
    assert [variant_named(n).name for n in ("american", "stubby", "berndt", "british")] == [
        "american",
        "stubby",
        "berndt",
        "british",
    ]
    for bad in ("American", "stubby ", "", "all-fives"):
        with pytest.raises(UnknownVariant):
            variant_named(bad)

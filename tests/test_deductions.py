"""docs/rules.md §7 deductions: each hand's pips rounded to the nearest five, per hand."""

from __future__ import annotations

import pytest

from sniff import Deal, Match, Move, Phase, RoundEndKind, Tile, deduction

# Worked out by hand from §7: remainder 1 or 2 rounds down, 3 or 4 rounds up.
DEDUCTION_TABLE = {
    0: 0, 1: 0, 2: 0, 3: 5, 4: 5,
    5: 5, 6: 5, 7: 5, 8: 10, 9: 10,
    10: 10, 11: 10, 12: 10, 13: 15, 14: 15,
    15: 15, 16: 15, 17: 15, 18: 20, 19: 20,
    20: 20, 21: 20, 22: 20, 23: 25, 24: 25,
    25: 25, 26: 25, 27: 25, 28: 30, 29: 30,
    30: 30, 31: 30, 32: 30, 33: 35, 34: 35,
    35: 35, 36: 35, 37: 35, 38: 40, 39: 40,
    40: 40,
}  # fmt: skip


def test_the_table_covers_every_total_from_0_to_40() -> None:
    assert sorted(DEDUCTION_TABLE) == list(range(41))


@pytest.mark.parametrize(("pips", "expected"), sorted(DEDUCTION_TABLE.items()))
def test_a_hand_total_is_rounded_to_the_nearest_five(pips: int, expected: int) -> None:
    assert deduction(pips) == expected


@pytest.mark.parametrize(("pips", "expected"), [(2, 0), (3, 5), (7, 5), (8, 10), (13, 15)])
def test_the_rule_book_examples(pips: int, expected: int) -> None:
    assert deduction(pips) == expected


def test_every_possible_hand_total_rounds_to_a_nearest_multiple_of_five() -> None:
    # A hand can hold at most the whole set: 168 pips.
    for pips in range(169):
        d = deduction(pips)
        assert d % 5 == 0
        assert abs(d - pips) <= 2
        assert d >= 0


def tiles(text: str) -> list[Tile]:
    return [Tile.parse(t) for t in text.split()]


# A 4-seat round (found by search, figures checked by hand) that seat 0 dominoes while
# seats 1 and 3, partners, are each left holding 3 pips: `0-3` and `1-2`.
PARTNER_THREES_DEAL = Deal.of(
    [
        tiles("4-6 0-0 2-5 1-3 0-2"),
        tiles("1-6 6-6 0-3 2-6 3-4"),
        tiles("0-6 3-5 2-2 0-4 5-6"),
        tiles("2-3 4-4 0-5 1-2 5-5"),
    ],
    tiles("0-1 4-5 3-6 1-1 2-4 1-4 1-5 3-3"),
    0,
)
# seat, placement, counted-ends sum, points
PARTNER_THREES = [
    (0, "4-6", 10, 10),
    (1, "6-6@4-6:high", 16, 0),  # the Sniff: 12, and 4-6's low 4
    (2, "0-4@4-6:low", 12, 0),
    (3, "0-5@0-4:low", 17, 0),
    (0, "2-5@0-5:high", 14, 0),
    (1, "2-6@6-6:line_b", 16, 0),  # both lines held: the branches count 6 + 6
    (2, "2-2@2-6:low", 18, 0),  # a later double: 4
    (3, "2-3@2-5:low", 19, 0),
    (0, "0-2@2-2:line_b", 15, 15),  # 2-2 now counts nothing
    (1, "1-6@6-6:branch_a", 10, 10),  # one branch left: 6
    (2, "3-5@2-3:high", 12, 0),
    (3, "5-5@3-5:high", 17, 0),
    (0, "1-3@1-6:low", 19, 0),
    (1, "3-4@1-3:high", 20, 20),
    (2, "5-6@5-5:line_b", 16, 0),
    (3, "4-4@3-4:high", 20, 20),
    (0, "0-0@0-2:low", 20, 20),  # seat 0's last tile: a domino
]


def test_two_partner_hands_of_three_cost_ten_not_five() -> None:
    m = Match(4, deal=PARTNER_THREES_DEAL)
    result = None
    for seat, text, ends, points in PARTNER_THREES:
        assert m.turn == seat
        result = m.apply(Move.parse(text))
        assert (result.ends_sum, result.points) == (ends, points), text
    assert result is not None
    end = result.round_end
    assert end is not None
    assert end.kind is RoundEndKind.DOMINO
    assert end.finisher == 0
    # Before the deductions: partnership 0+2 made 10 + 15 + 20, partnership 1+3 10 + 20 + 20.
    assert end.pips == (0, 3, 6, 3)
    # Each hand is rounded alone: 3 -> 5 and 3 -> 5, not the combined 6 -> 5.
    assert end.deductions == (0, 5, 5, 5)
    assert deduction(3 + 3) == 5
    assert m.scores == [45 - 5, 50 - 5 - 5]
    assert end.scores == (40, 40, 40, 40)
    # The finisher's side gains nothing from the other hands.
    assert m.scores[0] == 45 - end.deductions[0] - end.deductions[2]
    assert m.phase is Phase.AWAITING_DEAL

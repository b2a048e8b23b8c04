"""The traditional tally (docs/rules.md §9): each stroke 5, a large X with four small x is 50."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from analysis.replay.tally import tally_lines, tally_text


def strokes(lines: list[str]) -> int:
    """Strokes drawn: a full X or x is two, a half-drawn one (backslash) one."""
    text = "".join(lines)
    return 2 * (text.count("X") + text.count("x")) + text.count("\\")


def test_fifty_is_one_large_x_with_a_small_x_in_each_space() -> None:
    assert tally_lines(50) == [" x x", "  X ", " x x"]
    assert tally_lines(120) == [" x x  x x  x .", "  X    X    X ", " x x  x x  . ."]


def test_strokes_fill_the_large_x_first_then_the_small_ones_in_turn() -> None:
    assert tally_lines(5) == [" . .", "  \\ ", " . ."]
    assert tally_lines(10) == [" . .", "  X ", " . ."]
    assert tally_lines(25) == [" x \\", "  X ", " . ."]
    assert tally_lines(0) == ["    ", "  - ", "    "]
    assert tally_lines(-15) == [" \\ .", "- X ", " . ."]


@given(st.integers(min_value=-600, max_value=600).map(lambda n: n * 5))
def test_a_tally_draws_one_stroke_per_five_points(score: int) -> None:
    lines = tally_lines(score)
    assert len(lines) == 3
    assert strokes(lines) == abs(score) // 5
    figures = -(-abs(score) // 50)
    assert lines[1].count("X") + lines[1].count("\\") == figures
    assert lines[1].startswith("-") == (score < 0)


def test_a_score_that_is_not_a_multiple_of_five_shows_its_rest() -> None:
    assert tally_lines(57)[1].endswith(" +2")


def test_tally_text_names_each_side_with_its_raw_score() -> None:
    text = tally_text([120, -15], ["seat 0", "seat 1"])
    first = text.splitlines()[0]
    assert "seat 0: 120" in first
    assert "seat 1: -15" in first

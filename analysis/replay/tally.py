"""The traditional score tally (docs/rules.md §9), drawn in text. Display only.

On paper each stroke is 5 points, and a complete figure, a large central X
with a small x in each of its four spaces, is 50: ten strokes, two for the
large X and two for each small x. Figures fill in that order: the large X
(its first stroke alone shows as a backslash), then the small x's top
left, top right, bottom left, bottom right (again a backslash while half
drawn). Each figure takes three lines, after a column for the sign:

     x x         x \\         . .
      X   is 50    X   is 25    \\   is 5
     x x         . .         . .

A score that is not a multiple of 5 (not possible under §5 and §7, but a
tally must not hide it) shows the rest as `+N`; a negative score is drawn
for its size after a minus sign.
"""

from __future__ import annotations

from typing import Final

STROKE: Final = 5
FIGURE: Final = 50
_EMPTY: Final = "."


def _figure(strokes: int) -> tuple[str, str, str]:
    """One figure holding 1..10 strokes, as three lines of three characters."""

    def mark(first: int, full: str) -> str:
        if strokes >= first + 1:
            return full
        if strokes == first:
            return "\\"
        return _EMPTY

    centre = mark(1, "X")
    corners = [mark(k, "x") for k in (3, 5, 7, 9)]
    return (
        f"{corners[0]} {corners[1]}",
        f" {centre} ",
        f"{corners[2]} {corners[3]}",
    )


def tally_lines(score: int) -> list[str]:
    """The tally of one score as three lines (figures side by side)."""
    size = abs(score)
    strokes, rest = divmod(size, STROKE)
    figures = []
    while strokes > 0:
        figures.append(_figure(min(strokes, FIGURE // STROKE)))
        strokes -= FIGURE // STROKE
    if not figures:
        figures.append(("   ", " - " if rest == 0 else "   ", "   "))
    lines = ["  ".join(f[i] for f in figures) for i in range(3)]
    sign = "-" if score < 0 else " "
    lines = [(sign if i == 1 else " ") + line for i, line in enumerate(lines)]
    if rest:
        lines[1] += f" +{rest}"
    return lines


def tally_text(scores: list[int] | tuple[int, ...], names: list[str]) -> str:
    """Each side's tally under its name, with the raw score (the record keeps raw points)."""
    blocks = []
    for name, score in zip(names, scores, strict=True):
        lines = tally_lines(score)
        blocks.append([f"{name}: {score}", *lines])
    width = max(len(line) for block in blocks for line in block) + 4
    return "\n".join("".join(block[i].ljust(width) for block in blocks).rstrip() for i in range(4))

"""A replay as text for a terminal: each step's move, layout, open sides, counted ends, scores.

The layout is drawn as the tree the rules build, from the lead: each tile
on its own line under the side it joined, the Sniff marked, and on each
free side either what it holds or its mark. `o4` is an open side of value 4
(where a tile may go), `*4` a counted end adding 4 to the ends sum; a
double that counts both halves shows `*8` on its own line.

    1-4 lead
    |- low: 1-1 Sniff *2 line_b o1
    `- high: 4-4 *8 > 3-4 low o3 *3

A chain with one way on is written on one line (`4-4 > 3-4`).
"""

from __future__ import annotations

from collections.abc import Iterable

from analysis.replay.model import Placement, Replay, Step
from analysis.replay.tally import tally_text
from sniff.tiles import HIGH, IS_DOUBLE, LOW

_SIDES_PLAIN = ("low", "high")
_SIDES_DOUBLE = ("line_a", "line_b")
_SIDES_SNIFF = ("line_a", "line_b", "branch_a", "branch_b")


def _entry_side(p: Placement, parent: Placement | None, value: int | None) -> str | None:
    if parent is None or value is None:
        return None
    if IS_DOUBLE[p.tile]:
        return "line_a"
    return "low" if LOW[p.tile] == value else "high"


def _side_value(p: Placement, side: str) -> int:
    return HIGH[p.tile] if side == "high" else LOW[p.tile]


def layout_tree(step: Step) -> list[str]:
    """The layout after `step` as tree lines (see the module's doc)."""
    if not step.placements:
        return ["(empty layout)"]
    by_tile = {p.tile: p for p in step.placements}
    children = {(p.board, p.side): p for p in step.placements if p.board is not None}
    opened = {(m.tile, m.side): m.value for m in step.open_sides}
    counted = {(m.tile, m.side): m.value for m in step.counted_ends}
    lines: list[str] = []

    def whole_count(p: Placement) -> str:
        if not IS_DOUBLE[p.tile]:
            return ""
        name = str(p.tile)
        for side in _SIDES_DOUBLE:
            value = counted.get((name, side))
            if value is not None and value == 2 * LOW[p.tile]:
                return f" *{value}"
        return ""

    def items_of(p: Placement, entry: str | None) -> list[tuple[str, Placement | None, str]]:
        name = str(p.tile)
        double_sides = _SIDES_SNIFF if p.sniff else _SIDES_DOUBLE
        sides = double_sides if IS_DOUBLE[p.tile] else _SIDES_PLAIN
        items: list[tuple[str, Placement | None, str]] = []
        for side in sides:
            if side == entry:
                continue
            child = children.get((p.tile, side))
            marks = ""
            if (name, side) in opened:
                marks += f" o{opened[(name, side)]}"
            value = counted.get((name, side))
            if value is not None and not (IS_DOUBLE[p.tile] and side in _SIDES_DOUBLE):
                marks += f" *{value}"
            if child is not None or marks:
                items.append((side, child, marks))
        return items

    def walk(p: Placement, prefix: str, entry: str | None, line: str) -> None:
        # A chain of tiles with one way on is written on one line: a > b > c.
        while True:
            tags = " lead" if p.board is None else ""
            if p.sniff:
                tags += " Sniff" + (" (inline)" if p.orientation == "inline" else "")
            line += f"{p.tile}{tags}{whole_count(p)}"
            items = items_of(p, entry)
            if len(items) != 1:
                break
            side, child, marks = items[0]
            if child is None:
                lines.append(f"{line} {side}{marks}")
                return
            line += " > "
            entry = _entry_side(child, p, _side_value(p, side))
            p = child
        lines.append(line)
        for i, (side, child, marks) in enumerate(items):
            last = i == len(items) - 1
            branch = "`- " if last else "|- "
            deeper = prefix + ("   " if last else "|  ")
            if child is None:
                lines.append(f"{prefix}{branch}{side}{marks}")
            else:
                value = _side_value(p, side)
                walk(child, deeper, _entry_side(child, p, value), f"{prefix}{branch}{side}: ")

    lead = next(p for p in step.placements if p.board is None)
    assert lead.tile in by_tile
    walk(lead, "", None, "")
    return lines


def _seat_scores(scores: Iterable[int]) -> str:
    return " · ".join(f"seat {s}: {v}" for s, v in enumerate(scores))


def _sides_text(marks: Iterable[object]) -> str:
    return ", ".join(str(m) for m in marks) or "none"


def step_lines(replay: Replay, step: Step, *, full_layout: bool = False) -> list[str]:
    """The text of one step; the layout is shown after placements (or always with full_layout)."""
    out: list[str] = []
    if step.round_start is not None:
        start = step.round_start
        how = f" ({start.leader_choice})" if start.leader_choice else ""
        out.append(f"== round {start.round}: seat {start.leader} leads{how}")
        if start.hands is not None:
            for seat, hand in enumerate(start.hands):
                out.append(f"   seat {seat} holds {' '.join(hand)}")
    head = f"step {step.n} (round {step.round}, action {step.action}) · seat {step.seat}"
    if step.kind == "draw":
        tile = f" {step.drawn}" if step.drawn else " (tile hidden)"
        out.append(f"{head} draws{tile} · boneyard {step.boneyard} left")
    elif step.kind == "pass":
        out.append(f"{head} passes")
    else:
        out.append(f"{head} plays {step.move}")
    if step.timeout_policy is not None:
        out[-1] += f" · out of time: chosen by {step.timeout_policy}"
    if step.tile is not None or full_layout:
        out += ["   " + line for line in layout_tree(step)]
        out.append(f"   open: {_sides_text(step.open_sides)}")
        terms = " + ".join(f"{m.tile}:{m.side} {m.value}" for m in step.counted_ends) or "0"
        points = "" if step.points is None else f" -> {step.points} points"
        out.append(f"   counted: {terms} = {step.ends_sum}{points}")
        out.append(f"   scores: {_seat_scores(step.scores)}")
    if step.round_end is not None:
        end = step.round_end
        how = f"domino by seat {end.finisher}" if end.ending == "domino" else "blocked"
        out.append(
            f"== round {end.round} ends, {how}: pips {list(end.pips)}, deductions"
            f" {list(end.deductions)}, scores {_seat_scores(end.scores)}"
        )
    if step.winner is not None:
        out.append(f"== seat {step.winner} wins the match: {_seat_scores(step.scores)}")
    elif step.final:
        out.append(f"== the match ends at its round limit, drawn: {_seat_scores(step.scores)}")
    return out


def tally_block(replay: Replay, scores: tuple[int, ...]) -> list[str]:
    """The tally (docs/rules.md §9) of each scoring side."""
    seats = replay.info.seats
    if seats == 4:
        names, sides = ["seats 0+2", "seats 1+3"], [scores[0], scores[1]]
    else:
        names, sides = [f"seat {s}" for s in range(seats)], list(scores)
    return ["   " + line for line in tally_text(sides, names).splitlines()]


def replay_text(
    replay: Replay, steps: Iterable[Step], *, tally: bool = False, at: bool = False
) -> str:
    """The text of the chosen steps: a header, then each step (at: one position in full)."""
    info = replay.info
    created = "" if info.created_at is None else f", created {info.created_at:%Y-%m-%d %H:%M}"
    lines = [
        f"match {info.match_id}: {info.seats} seats, {info.variant}, target {info.target}{created}"
    ]
    if replay.hidden_note:
        lines.append(f"note: {replay.hidden_note}")
    for step in steps:
        lines += step_lines(replay, step, full_layout=at)
        if tally and (step.round_end is not None or step.final or at):
            lines.append("   tally (each stroke 5, a large X with four small x 50):")
            lines += tally_block(replay, step.scores)
    if info.forfeited_seat is not None and not at:
        lines.append(
            f"== seat {info.forfeited_seat} ran out of time and forfeited: "
            f"seat {info.winner}'s side wins"
        )
    return "\n".join(lines)

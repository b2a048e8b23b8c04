"""Replays of the Sniff variants (docs/rules.md §10.5): the engine's figures, and the drawing's
in-line Sniff with its branches off its long sides."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from analysis.bot_matches import bot_match_events
from analysis.replay.geometry import layout_geometry
from analysis.replay.source import MatchFilter, list_matches, load_replay
from service.match_recorder import EventRecorder
from sniff import Deal, Tile
from tests.replay_helpers import write_log


def deal(first: str, second: str) -> Deal:
    """Two 7-tile hands (seat 0 leads); the boneyard is the rest."""
    hands = [[Tile.parse(t) for t in h.split()] for h in (first, second)]
    dealt = {t for h in hands for t in h}
    rest = [Tile(i) for i in range(28) if Tile(i) not in dealt]
    return Deal((tuple(hands[0]), tuple(hands[1])), tuple(rest), 0)


STUBBY_MOVES = ["4-4", "4-6@4-4:line_a", "1-4@4-4:line_b", "2-4@4-4:branch_a", "3-4@4-4:branch_b"]
STUBBY = [  # counted (tile, value), sum, points, open sides (tile, side) — docs/rules.md §10.5
    ([("4-4", 4), ("4-4", 4)], 8, 0, {("4-4", "line_a"), ("4-4", "line_b")}),
    ([("4-4", 4), ("4-6", 6)], 10, 10, {("4-4", "line_b"), ("4-6", "high")}),
    (
        [("1-4", 1), ("4-6", 6)],
        7,
        0,
        {("4-4", "branch_a"), ("4-4", "branch_b"), ("1-4", "low"), ("4-6", "high")},
    ),
    (
        [("1-4", 1), ("2-4", 2), ("4-6", 6)],
        9,
        0,
        {("4-4", "branch_b"), ("1-4", "low"), ("4-6", "high")},
    ),
    ([("1-4", 1), ("2-4", 2), ("3-4", 3), ("4-6", 6)], 12, 0, {("1-4", "low"), ("4-6", "high")}),
]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    stubby = EventRecorder(
        "stubby-example",
        2,
        seed=3,
        variant="stubby",
        deal=deal("4-4 1-4 3-4 0-0 0-1 0-2 0-3", "4-6 2-4 5-5 5-6 6-6 1-1 1-2"),
    )
    for move in STUBBY_MOVES:
        stubby.apply(move)
    matches = [stubby.events]
    for orientation in ("cross", "inline"):
        berndt = EventRecorder(
            f"berndt-{orientation}",
            2,
            seed=4,
            variant="berndt",
            deal=deal("1-6 4-4 0-0 0-1 0-2 0-3 0-4", "1-4 5-5 5-6 6-6 1-1 1-2 2-2"),
        )
        for move in ("1-6", "1-4@1-6:low", f"4-4@1-4:high/{orientation}"):
            berndt.apply(move)
        matches.append(berndt.events)
    matches += [
        bot_match_events(f"{v}-bots", 2 + i, 40 + i, ("random",), variant=v, round_limit=3)
        for i, v in enumerate(("stubby", "berndt", "british"))
    ]
    return write_log(tmp_path_factory.mktemp("variants") / "log.duckdb", matches)


@pytest.mark.slow
def test_stubby_replay_gives_the_rule_books_figures_and_stub_ends_are_never_open(db: Path) -> None:
    rp = load_replay(db, "stubby-example")
    assert rp.info.variant == "stubby"
    for step, (counted, total, points, opened) in zip(rp.steps, STUBBY, strict=True):
        assert Counter((m.tile, m.value) for m in step.counted_ends) == Counter(counted)
        assert (step.ends_sum, step.points) == (total, points)
        assert {(m.tile, m.side) for m in step.open_sides} == opened
    sniff = rp.steps[-1].placements[0]
    assert sniff.sniff
    assert sniff.orientation == "inline"


@pytest.mark.slow
def test_an_inline_sniff_is_drawn_lengthwise_with_its_stubs_off_its_long_sides(db: Path) -> None:
    last = load_replay(db, "stubby-example").steps[-1]
    shapes = {str(s.tile): s for s in layout_geometry(last.placements).shapes}
    sniff = shapes["4-4"].rect
    assert (sniff.w, sniff.h) == (2.0, 1.0)
    for stub in ("2-4", "3-4"):
        rect = shapes[stub].rect
        assert (rect.w, rect.h) == (1.0, 2.0)
        assert rect.x + 0.5 == sniff.x + 1.0


@pytest.mark.parametrize(("orientation", "total", "points"), [("cross", 14, 0), ("inline", 10, 10)])
def test_berndt_sniff_counts_by_its_chosen_orientation(
    db: Path, orientation: str, total: int, points: int
) -> None:
    rp = load_replay(db, f"berndt-{orientation}")
    assert [(s.ends_sum, s.points) for s in rp.steps] == [(7, 0), (10, 10), (total, points)]
    assert rp.steps[-1].move == f"4-4@1-4:high/{orientation}"
    assert rp.steps[-1].placements[-1].orientation == orientation


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["stubby", "berndt", "british"])
def test_bot_matches_of_every_variant_replay_to_the_logged_figures(db: Path, variant: str) -> None:
    rp = load_replay(db, f"{variant}-bots")  # the replay checks every logged sum and points
    assert rp.info.variant == variant
    assert rp.info.finished
    assert rp.steps[-1].final
    for where in (MatchFilter(), MatchFilter(finished=True)):  # both listing queries
        listed = {r.match_id: r for r in list_matches(db, where)}
        assert listed[f"{variant}-bots"].variant == variant

"""Whole matches played by the kernel are the engine's matches, move for move and fact for fact.

The engine plays each match with `Match`, its `random` and `greedy` bots
(seeded by `seeds.bot_seed`) and a `RoundRecorder` a round; the kernel plays
it in C from the same seeds. Over every variant, 2, 3 and 4 seats, both bots
alone and mixed, with and without round limits, the two must make the same
moves and end with the same scores, results, round facts and decision facts.
"""

from __future__ import annotations

import itertools

import pytest

from sniff import dealing
from sniff.playout import KERNEL_AVAILABLE, move_of
from sniff.simulated import (
    LIMIT,
    WON,
    MatchSettings,
    PlayedMatch,
    engine_matches,
    kernel_matches,
    play_matches,
)
from sniff.variants import VARIANTS

BOT_MIXES = (("greedy",), ("random",), ("greedy", "random"), ("random", "greedy"))
LIMITS = (None, 1, 3, 8)


@pytest.fixture(scope="module", autouse=True)
def _kernel_built() -> None:
    if not KERNEL_AVAILABLE:
        pytest.fail("the C playout kernel sniff._kernel is not built: `pip install -e .`")


def settings_grid() -> list[MatchSettings]:
    """Every variant, seat count, bot mix and round limit. A match of `random` bots alone
    need not end (deductions can outrun the points for ever), so those have a limit."""
    return [
        MatchSettings(seats, bots, variant=variant, round_limit=limit)
        for variant, seats, bots, limit in itertools.product(VARIANTS, (2, 3, 4), BOT_MIXES, LIMITS)
        if limit is not None or bots != ("random",)
    ]


def assert_same(settings: MatchSettings, seeds: list[int]) -> list[PlayedMatch]:
    engine = engine_matches(settings, seeds, record=True)
    kernel = kernel_matches(settings, seeds, record=True)
    for a, b in zip(engine, kernel, strict=True):
        assert a.moves == b.moves, (settings, a.seed)
        assert a.facts.rounds == b.facts.rounds, (settings, a.seed)
        assert a == b, (settings, a.seed)
    return engine


def test_kernel_deals_are_the_documented_dealers() -> None:
    from sniff import _kernel

    for seed, round_index in ((0, 0), (1, 0), (0, 1), (2**64 - 1, 7), (12345, 40)):
        for seats in (2, 3, 4):
            tiles, lot = _kernel.deal(seed, round_index, seats)
            assert list(tiles) == dealing.shuffled_tiles(seed, round_index)
            assert lot == dealing.lot(seed, round_index, seats)


def test_the_documented_match_plays_as_written() -> None:
    # docs/simulate.md: match seed 1, 2 seats, seat 0 greedy, seat 1 random.
    settings = MatchSettings(2, ("greedy", "random"))
    for played in (engine_matches(settings, [1], True)[0], kernel_matches(settings, [1], True)[0]):
        assert [str(move_of(c)) for c in played.moves[0][:12]] == [
            "4-5",
            "5-6@4-5:high",
            "6-6@5-6:high",
            "1-4@4-5:low",
            "3-6@6-6:line_b",
            "1-3@1-4:low",
            "0-3@1-3:high",
            "3-5@3-6:low",
            "0-2@0-3:low",
            "5-5@3-5:high",
            "2-5@5-5:line_b",
            "draw",
        ]
        assert (played.ended, played.facts.winner, played.facts.scores) == (WON, 0, (255, 150))
        assert (len(played.facts.rounds), played.actions) == (9, 186)


def test_a_few_hundred_matches_are_the_same_both_ways() -> None:
    grid = settings_grid()
    played = []
    for k, settings in enumerate(grid):
        played += assert_same(settings, [k * 1000 + 1, k * 1000 + 2])
    assert {p.ended for p in played} == {WON, LIMIT}
    assert any(p.facts.winner is None for p in played)  # a draw at a round limit
    assert any(not r.complete for p in played for r in p.facts.rounds)
    assert any(r.orientation for p in played for r in p.facts.rounds)
    assert sum(len(r.decisions) for p in played for r in p.facts.rounds) > 1000


@pytest.mark.slow
def test_tens_of_thousands_of_matches_are_the_same_both_ways() -> None:
    grid = settings_grid()
    matches = 0
    for k, settings in enumerate(grid):
        seeds = [2**40 + k * 10_000 + i for i in range(112)]
        matches += len(assert_same(settings, seeds))
    assert matches >= 20_000


def test_play_matches_chooses_its_backend() -> None:
    settings = MatchSettings(3, ("greedy", "random"), variant="british", round_limit=2)
    assert play_matches(settings, [5, 6], backend="python") == play_matches(
        settings, [5, 6], backend="c"
    )
    with pytest.raises(ValueError, match="backend"):
        play_matches(settings, [5], backend="fortran")


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ({"seats": 5, "bots": ("greedy",)}, "played by"),
        ({"seats": 2, "bots": ("rollout",)}, "bots"),
        ({"seats": 2, "bots": ()}, "bots"),
        ({"seats": 2, "bots": ("greedy",), "variant": "nope"}, "variant"),
        ({"seats": 2, "bots": ("greedy",), "round_limit": 0}, "round limit"),
        ({"seats": 2, "bots": ("greedy",), "target": 0}, "target"),
    ],
)
def test_settings_no_match_can_have_are_refused(bad: dict[str, object], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        MatchSettings(**bad)  # type: ignore[arg-type]


def test_the_kernel_refuses_seeds_outside_the_generators_range() -> None:
    settings = MatchSettings(2, ("greedy",))
    with pytest.raises(ValueError, match="seed"):
        kernel_matches(settings, [2**64])
    from sniff import _kernel

    with pytest.raises(ValueError, match="bot seed"):
        _kernel.play_matches(0, 2, 250, 0, (0, 1), [1], [1], False)

"""The derived seeds (sniff/seeds.py) keep the values records and figures were made with."""

from __future__ import annotations

from analysis.bot_matches import bot_match, bot_players
from sniff import Match, make_bot, play_match, to_record
from sniff.seeds import bot_seed, decision_seed, match_seed, rotation_bot_seed


def test_bot_seeds_are_the_bot_hash_written_in_the_docs() -> None:
    # The first 8 bytes of SHA-256("sniff/bot/v1\0{seed}\0{seat}"): docs/simulate.md's vectors.
    assert bot_seed(0, 0) == 8992256462536350346
    assert [bot_seed(3, seat) for seat in range(3)] == [
        9625767288050269810,
        795439325761882660,
        2423705536509708451,
    ]
    assert bot_seed(2**64 - 1, 3) == 4888046321984940478


def test_bot_seeds_are_generator_seeds_for_every_match_seed() -> None:
    for seed in (0, 1, 2**63, 2**64 - 1):
        for seat in range(4):
            assert 0 <= bot_seed(seed, seat) < 2**64


def test_match_i_of_a_run_is_seeded_the_runs_seed_plus_i() -> None:
    assert [match_seed(40, i) for i in range(3)] == [40, 41, 42]


def test_rotation_bot_seeds_wrap_below_two_to_the_63() -> None:
    assert rotation_bot_seed(5, 2, 3) == 5 * 16 + 2 * 4 + 3
    assert rotation_bot_seed(2**63 - 1, 0, 0) == (2**63 - 1) * 16 % 2**63


def test_decision_seeds_are_the_analyze_hash_written_in_the_docs() -> None:
    # The first 8 bytes of SHA-256("sniff/analyze/v1\0{seed}\0{match}\0{round}\0{index}"),
    # the values `sniff analyze` has always used.
    assert decision_seed(0, "m", 0, 0) == 16778908113285217569
    assert decision_seed(7, "imp-0123456789abcdef", 3, 41) == 2408598415204041865


def test_a_bot_match_plays_the_bots_seeded_as_before() -> None:
    players = [
        make_bot("greedy", 9625767288050269810),
        make_bot("random", 795439325761882660),
        make_bot("greedy", 2423705536509708451),
    ]
    by_hand = play_match(Match(3, seed=3, round_limit=2), players)
    assert [type(p) for p in bot_players(3, ("greedy", "random"), 3)] == [type(p) for p in players]
    played = bot_match(3, 3, ("greedy", "random"), round_limit=2)
    assert to_record(played, "m") == to_record(by_hand, "m")

"""Luck (docs/analysis.md, "Luck"): every chance event's change to its side's equity, the sums
it adds up to, and the property that makes it luck (its mean is zero)."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from analysis.rollout.luck import LuckSettings, match_luck
from analysis.rollout.source import MatchSpec, spec_from_record
from sniff import Match, Move, MoveKind, make_bot, to_record, view
from sniff.bots import play_match
from sniff.luck import Values, combined_se, deal_values, position_values
from sniff.rules import team_count, value_for_side
from sniff.sampler import Sampler, position_of
from sniff.variants import variant_named


def spec_of(match: Match, match_id: str) -> MatchSpec:
    """The match as `sniff analyze --records` reads it: through its docs/records.md record."""
    return spec_from_record(to_record(match, match_id), match_id)


def played(seats: int, seed: int, bots: tuple[str, ...] = ("greedy",), **kw: object) -> Match:
    match = Match(seats, seed=seed, **kw)  # type: ignore[arg-type]
    names = [bots[s % len(bots)] for s in range(seats)]
    return play_match(match, [make_bot(n, seed * 10 + s) for s, n in enumerate(names)])


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_luck_sums_event_by_event_round_by_round_and_over_the_match(seats: int) -> None:
    match = played(seats, 11)
    spec = spec_of(match, f"sums{seats}")
    luck = match_luck(spec, LuckSettings(rollouts=40, seed=3))
    sides = team_count(seats)
    teams = match.teams
    assert {e.kind for e in luck.events} >= {"lot", "deal", "draw"}
    for e in luck.events:
        assert e.after - e.before == pytest.approx(e.luck)
        assert e.se > 0
    for index, rnd in enumerate(spec.rounds):
        draws = [k for k, a in enumerate(rnd.actions) if Move.parse(a).kind is MoveKind.DRAW]
        events = [e for e in luck.events if e.round == index]
        assert sorted(e.action for e in events if e.kind == "draw") == sorted(
            k for k in draws for _ in [0]
        )
        assert sum(e.kind == "deal" for e in events) == seats
        side_luck = [0.0] * sides
        lots = set()
        for e in events:
            side = teams[e.seat]
            if e.kind == "lot":
                if side in lots:
                    continue  # partners both show their side's lot: counted once
                lots.add(side)
            side_luck[side] += e.luck
        rows = [r for r in luck.rounds if r.round == index]
        assert [r.seat for r in rows] == list(range(seats))
        for r in rows:
            assert r.own == pytest.approx(side_luck[teams[r.seat]], abs=1e-9)
            assert r.net == pytest.approx(value_for_side(side_luck, teams[r.seat]), abs=1e-9)
            assert r.adjusted == pytest.approx(r.result - r.net)
            assert r.result == pytest.approx(r.prior + r.net + r.rest)
    final = match.scores
    for total in luck.totals:
        rows = [r for r in luck.rounds if r.seat == total.seat]
        assert total.net == pytest.approx(math.fsum(r.net for r in rows))
        assert total.result == pytest.approx(math.fsum(r.result for r in rows))
        # The rounds' results add up to the match's: final scores, each side against the others.
        assert total.result == pytest.approx(value_for_side(final, teams[total.seat]))


def test_the_lot_is_luck_only_when_the_rules_draw_the_leader() -> None:
    match = played(2, 4)
    luck = match_luck(spec_of(match, "lot"), LuckSettings(rollouts=20))
    by_lot = {i for i, r in enumerate(match.history) if r.leader_choice.value == "lot"}
    assert 0 in by_lot
    assert {e.round for e in luck.events if e.kind == "lot"} == by_lot


def test_the_same_seed_gives_the_same_luck_and_another_seed_other_estimates() -> None:
    spec = spec_of(played(2, 8), "again")
    a = match_luck(spec, LuckSettings(rollouts=30, seed=1))
    b = match_luck(spec, LuckSettings(rollouts=30, seed=1))
    c = match_luck(spec, LuckSettings(rollouts=30, seed=2))
    assert a == b
    assert [e.luck for e in a.events] != [e.luck for e in c.events]
    assert [r.result for r in a.rounds] == [r.result for r in c.rounds]


def test_a_deal_s_luck_averages_zero_over_the_deals_the_shuffle_can_make() -> None:
    """The equity before the deal is the mean of the equity after it: over many deals the
    deal luck of a seat averages zero (within its standard error)."""
    rng = random.Random(5)
    variant = variant_named("american")
    prior = deal_values(variant, 2, 250, (0, 0), 0, rollouts=4000, seed=9)
    after = []
    for _ in range(150):
        match = Match(2, seed=rng.getrandbits(64))
        if match.turn != 0:
            continue
        seat = rng.randrange(2)
        v = position_values(view(match, seat), rollouts=60, seed=rng.getrandbits(64))
        after.append(v.mean(match.teams[seat]) - prior.mean(match.teams[seat]))
    assert len(after) > 40
    mean = statistics.fmean(after)
    se = math.sqrt(statistics.variance(after) / len(after) + prior.se(0) ** 2)
    assert abs(mean) < 4 * se, (mean, se)
    # ... and is not zero deal by deal: hands differ.
    assert statistics.pstdev(after) > 5


def test_a_draw_s_luck_averages_zero_over_the_tiles_the_seat_could_draw() -> None:
    """Before a draw the seat's equity is the mean, over the tiles it may draw (as its view
    weighs them), of its equity after seeing the tile."""
    rng = random.Random(2)
    for seed in range(200):
        match = Match(2, seed=seed)
        while match.legal_moves()[0].kind is not MoveKind.DRAW:
            match.apply(match.legal_moves()[0])
            if match.phase.value != "playing":
                break
        else:
            break
    seat = match.turn
    side = match.teams[seat]
    before_view = view(match, seat)
    before = position_values(before_view, rollouts=3000, seed=1)
    sampler = Sampler(before_view)
    after = []
    for _ in range(120):
        world = position_of(before_view, sampler.sample(rng))
        world.apply(Move.parse("draw"))
        v = position_values(view(world, seat), rollouts=40, seed=rng.getrandbits(64))
        after.append(v.mean(side))
    mean = statistics.fmean(after)
    se = math.sqrt(statistics.variance(after) / len(after) + before.se(side) ** 2)
    assert abs(mean - before.mean(side)) < 4 * se, (mean, before.mean(side), se)


def test_a_combined_standard_error_pairs_the_sides_of_one_rollout_set() -> None:
    """Two sides of one set are perfectly anti-correlated with two seats: a sum of both has
    no error, a difference twice one side's."""
    one = Values(((1.0, 3.0, 2.0, 6.0), (-1.0, -3.0, -2.0, -6.0)))
    assert combined_se([(one, 0, 1.0), (one, 1, 1.0)]) == 0
    assert combined_se([(one, 0, 1.0), (one, 1, -1.0)]) == pytest.approx(2 * one.se(0))
    other = Values(((0.0, 2.0, 4.0, 6.0), (0.0, -2.0, -4.0, -6.0)))
    both = combined_se([(one, 0, 1.0), (other, 0, -1.0)])
    assert both == pytest.approx(math.hypot(one.se(0), other.se(0)))


@pytest.mark.slow
def test_with_every_seat_playing_as_the_rollouts_do_prior_and_luck_account_for_the_result() -> None:
    """The rest (result - prior - net luck) is the decisions' part: it averages zero when every
    seat plays the rollouts' own policy, and is clearly negative for a random player against
    greedy ones."""
    greedy_rest: list[float] = []
    random_rest: list[float] = []
    for seed in range(60):
        match = played(2, 1000 + seed, round_limit=2)
        luck = match_luck(spec_of(match, f"g{seed}"), LuckSettings(rollouts=60, seed=seed))
        greedy_rest += [r.rest for r in luck.rounds if r.seat == 0]
    for seed in range(20):
        match = played(2, 2000 + seed, ("random", "greedy"), round_limit=2)
        luck = match_luck(spec_of(match, f"r{seed}"), LuckSettings(rollouts=60, seed=seed))
        random_rest += [r.rest for r in luck.rounds if r.seat == 0]
    mean = statistics.fmean(greedy_rest)
    se = statistics.stdev(greedy_rest) / math.sqrt(len(greedy_rest))
    assert abs(mean) < 3.5 * se, (mean, se)
    bad = statistics.fmean(random_rest)
    bad_se = statistics.stdev(random_rest) / math.sqrt(len(random_rest))
    assert bad + 3 * bad_se < 0, (bad, bad_se)

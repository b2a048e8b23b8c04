"""The sampler of hidden tiles (sniff/sampler.py): it sees only a seat's view, never
produces a deal inconsistent with it, and on small cases draws every consistent deal as often
as exhaustive enumeration says."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sniff import Match, Phase, view
from sniff.sampler import ImpossibleView, Sampler, position_of
from tests.helpers import example_count
from tests.sampler_helpers import Round, enumerate_positions, positions, small_cases, world_of

pytestmark = pytest.mark.slow


@settings(
    max_examples=example_count(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    st.sampled_from([2, 3, 4]),
    st.sampled_from(["american", "stubby", "berndt", "british"]),
    st.integers(0, 2**32),
    st.sampled_from([("random",), ("greedy",), ("greedy", "random")]),
    st.integers(0, 20),
    st.integers(0, 2**32),
)
def test_every_sampled_deal_replays_to_exactly_what_the_seat_saw(
    seats: int, variant: str, seed: int, kinds: tuple[str, ...], cut: int, rng_seed: int
) -> None:
    rng = random.Random(rng_seed)
    checked = 0
    for match, _ in positions(seats, variant, seed, kinds):
        if match.move_count < cut and rng.random() > 0.05:
            continue
        for viewer in range(seats):  # every seat imagines the others, whoever is to play
            seen = view(match, viewer)
            sampler = Sampler(seen)
            assert sampler.count >= 1
            for _ in range(3):
                deal = sampler.sample(rng)
                imagined = position_of(seen, deal)
                assert view(imagined, viewer) == seen
                # The viewer's own part of the deal is the true one.
                assert set(deal.hands[viewer]) == set(match.history[-1].deal.hands[viewer])
        checked += 1
        if checked >= 4:
            break
    assert checked


def test_the_sampler_refuses_the_observer_and_a_round_not_in_play() -> None:
    match = Match(2, seed=1)
    with pytest.raises(ValueError, match="seat"):
        Sampler(view(match, None))
    while match.phase is Phase.PLAYING:
        match.apply(match.legal_moves()[0])
    if match.phase is Phase.AWAITING_DEAL:
        with pytest.raises(ImpossibleView):
            Sampler(view(match, 0))


# -- exhaustive enumeration on small cases --------------------------------------------


def check_against_enumeration(match: Match, viewer: int, rng: random.Random, n: int = 4000) -> bool:
    """The sampler counts exactly the consistent deals and draws each world as often as the
    enumeration says (a chi-square far beyond chance fails). False if only one world."""
    expected, _ = enumerate_positions(match, viewer)
    total = sum(expected.values())
    sampler = Sampler(view(match, viewer))
    # The enumeration orders the tiles kept in one turn's draws; the sampler counts them
    # as a set (their order is free), so the totals differ by exactly those orders.
    kept = [c for c in sampler._history.classes if c.entry >= 0]
    orders = math.prod(math.factorial(c.capacity) for c in kept)
    assert total == sampler.count * orders
    got: Counter[tuple[object, ...]] = Counter()
    for _ in range(n):
        got[world_of(sampler.position(sampler.sample(rng)), viewer)] += 1
    assert set(got) <= set(expected), "a sampled world the enumeration rules out"
    if len(expected) == 1:
        return False
    chi2 = sum((got[w] - n * c / total) ** 2 / (n * c / total) for w, c in expected.items())
    dof = len(expected) - 1
    # Far beyond chance: mean dof, sd sqrt(2 dof); 6 sd plus a margin.
    assert chi2 < dof + 6 * math.sqrt(2 * dof) + 10, (chi2, dof)
    return True


def test_sampling_frequencies_match_exhaustive_enumeration() -> None:
    rng = random.Random(2026)
    cases = 0
    for match, viewer in small_cases(2, 3000):
        cases += check_against_enumeration(match, viewer, rng)
        if cases >= 4:
            break
    assert cases >= 2


def kept_draw_cases(seats: int, limit: int) -> Iterator[tuple[Match, int]]:
    """Positions where another seat kept tiles it drew (each such turn is one more class of
    the sampler's model), small enough to enumerate: one per match."""
    for seed in range(200):
        for match, seat in positions(seats, "american", seed, ("greedy", "random")):
            facts = Round(match, seat)
            if not any(k not in facts.forced for k in facts.hidden_draws):
                continue
            if 30 <= facts.count_bound() <= limit:
                yield match.copy(), seat
                break


@pytest.mark.parametrize("seats", [3, 4])
def test_with_three_and_four_seats_frequencies_match_exhaustive_enumeration(seats: int) -> None:
    rng = random.Random(seats)
    cases = 0
    for match, viewer in kept_draw_cases(seats, 9000):
        sampler = Sampler(view(match, viewer))
        assert len(sampler._history.classes) > seats - 1, "another seat kept drawn tiles"
        cases += check_against_enumeration(match, viewer, rng)
        if cases >= 2:
            break
    assert cases == 2

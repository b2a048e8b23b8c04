"""The sampler of hidden tiles (service/engine/sampler.py): it sees only a seat's view, never
produces a deal inconsistent with it, and on small cases draws every consistent deal as often
as exhaustive enumeration says."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine import (
    HAND_SIZE,
    Deal,
    IllegalMove,
    Match,
    MoveKind,
    Phase,
    make_bot,
    view,
)
from service.engine.sampler import ImpossibleView, Sampler, position_of


def positions(
    seats: int, variant: str, seed: int, kinds: tuple[str, ...]
) -> Iterator[tuple[Match, int]]:
    """Every decision point of a bot match: (the match, the seat to play)."""
    match = Match(seats, seed=seed, variant=variant, round_limit=3)
    bots = [make_bot(kinds[s % len(kinds)], seed * 7 + s) for s in range(seats)]
    while match.phase is not Phase.OVER:
        if match.phase is Phase.AWAITING_DEAL:
            match.deal()
            continue
        yield match, match.turn
        match.apply(bots[match.turn].choose(view(match, match.turn)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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


def hidden_slots(match: Match, viewer: int) -> tuple[list[tuple[str, int, int]], list[int]]:
    """The places of the round's deal the viewer cannot see, and the tiles there: every other
    hand's slots and every boneyard position the viewer did not draw."""
    deal = match.history[-1].deal
    slots: list[tuple[str, int, int]] = []
    tiles: list[int] = []
    for s, hand in enumerate(deal.hands):
        if s != viewer:
            for i, t in enumerate(hand):
                slots.append(("hand", s, i))
                tiles.append(t)
    for k, t in enumerate(deal.boneyard):
        if k < len(match.draw_seats) and match.draw_seats[k] == viewer:
            continue
        slots.append(("bone", k, 0))
        tiles.append(t)
    return slots, tiles


def world_of(match: Match, viewer: int) -> tuple[object, ...]:
    """What the viewer cannot see of the current position: other hands and the boneyard."""
    others = tuple(frozenset(match.hand(s)) for s in range(match.seats) if s != viewer)
    return (*others, frozenset(match.boneyard[match.bone_pos :]))


def enumerate_worlds(match: Match, viewer: int) -> Counter[tuple[object, ...]]:
    """Every consistent rearrangement of the hidden tiles, checked by replaying the round
    through the engine (no use of the sampler's model); hands are sets and the undrawn
    boneyard is a set, so each is taken once."""
    seen = view(match, viewer)
    deal = match.history[-1].deal
    slots, pool = hidden_slots(match, viewer)
    seats = match.seats
    drawn = len(match.draw_seats)
    bone_drawn = [k for kind, k, _ in slots if kind == "bone" and k < drawn]
    bone_rest = [k for kind, k, _ in slots if kind == "bone" and k >= drawn]
    others = [s for s in range(seats) if s != viewer]
    size = HAND_SIZE[seats]
    worlds: Counter[tuple[object, ...]] = Counter()

    def hands_from(left: frozenset[int], i: int) -> Iterator[tuple[tuple[int, ...], ...]]:
        if i == len(others):
            yield ()
            return
        for hand in itertools.combinations(sorted(left), size):
            for rest in hands_from(left - set(hand), i + 1):
                yield (hand, *rest)

    for hands in hands_from(frozenset(pool), 0):
        left = frozenset(pool) - {t for h in hands for t in h}
        for drawn_tiles in itertools.permutations(sorted(left), len(bone_drawn)):
            rest = sorted(left - set(drawn_tiles))
            new_hands = list(deal.hands)
            for s, h in zip(others, hands, strict=True):
                new_hands[s] = h
            bone = list(deal.boneyard)
            for k, t in zip(bone_drawn, drawn_tiles, strict=True):
                bone[k] = t
            for k, t in zip(bone_rest, rest, strict=True):
                bone[k] = t
            candidate = Deal.of(new_hands, bone, deal.leader)
            try:
                imagined = position_of(seen, candidate)
            except IllegalMove:
                continue
            if view(imagined, viewer) == seen:
                worlds[world_of(imagined, viewer)] += 1
    return worlds


def small_cases(limit: int) -> Iterator[tuple[Match, int]]:
    """Late positions where someone other than the viewer drew or passed, with few hidden
    arrangements to enumerate."""
    for seed in range(400):
        for match, seat in positions(2, "american", seed, ("greedy", "random")):
            others_drew = any(s != seat for s in match.draw_seats) or any(
                m.kind is MoveKind.PASS for m in match.history[-1].actions
            )
            if not others_drew:
                continue
            slots, pool = hidden_slots(match, seat)
            hand = HAND_SIZE[2]
            drawn = sum(1 for kind, k, _ in slots if kind == "bone" and k < len(match.draw_seats))
            count = math.comb(len(pool), hand) * math.perm(len(pool) - hand, drawn)
            if 30 <= count <= limit:
                yield match.copy(), seat
                break


def test_sampling_frequencies_match_exhaustive_enumeration() -> None:
    rng = random.Random(2026)
    cases = 0
    for match, viewer in small_cases(3000):
        expected = enumerate_worlds(match, viewer)
        total = sum(expected.values())
        sampler = Sampler(view(match, viewer))
        # The enumeration orders the tiles kept in one turn's draws; the sampler counts them
        # as a set (their order is free), so the totals differ by exactly those orders.
        orders = math.prod(math.factorial(c.capacity) for c in sampler._history.classes[1:])
        assert total == sampler.count * orders
        n = 4000
        got: Counter[tuple[object, ...]] = Counter()
        for _ in range(n):
            got[world_of(sampler.position(sampler.sample(rng)), viewer)] += 1
        assert set(got) <= set(expected), "a sampled world the enumeration rules out"
        if len(expected) == 1:
            continue
        chi2 = sum((got[w] - n * c / total) ** 2 / (n * c / total) for w, c in expected.items())
        dof = len(expected) - 1
        # Far beyond chance: mean dof, sd sqrt(2 dof); 6 sd plus a margin.
        assert chi2 < dof + 6 * math.sqrt(2 * dof) + 10, (chi2, dof)
        cases += 1
        if cases >= 4:
            break
    assert cases >= 2

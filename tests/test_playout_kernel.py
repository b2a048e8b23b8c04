"""The compiled playout kernel makes exactly the Python reference's moves, and the reference
plays by the engine's rules.

States come from real bot matches (2, 3, 4 seats x the four variants) at random
points, with extra weight on the positions that differ most between
variants and between the two implementations: a pending drawn tile, an
empty boneyard, open Sniff branches, stubs on the layout. Each is played
out by both backends with the same seeds under `random`, `greedy` and mixed
policies (sometimes with a forced first move), and the move sequences,
points, ends and scores must be identical. The reference's moves are then
applied to the match itself with `Match.apply`: each must be legal, score
the same and end the round the same way, and every greedy choice must score
the most the engine's own `SeatView.points_after` offers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from sniff import VARIANTS, Match, Phase, RoundEndKind, make_bot, view
from sniff.moves import Side
from sniff.playout import (
    KERNEL_AVAILABLE,
    EndKind,
    PlayoutResult,
    PlayoutState,
    Policy,
    move_of,
    playout,
    rollouts,
)
from tests.helpers import absent

SEATS = (2, 3, 4)
POLICY_SETS = ("random", "greedy", "mixed")


@pytest.fixture(scope="module", autouse=True)
def _kernel_built() -> None:
    if not KERNEL_AVAILABLE:
        absent(
            "the C playout kernel sniff._kernel",
            "`pip install -e .` builds it (needs a C compiler and the Python headers)",
        )


@dataclass(frozen=True)
class Sample:
    match: Match
    state: PlayoutState


def _features(match: Match) -> set[str]:
    layout = match.layout
    found = set()
    if match.drawn >= 0:
        found.add("drawn")
    if match.bone_pos == len(match.boneyard):
        found.add("empty boneyard")
    if layout.sniff >= 0 and any(
        s >> 3 == layout.sniff and s & 7 >= Side.BRANCH_A for s in layout.open
    ):
        found.add("open branch")
    if layout.stubs:
        found.add("stub")
    return found


def collect(seats: int, variant: str, matches: int, per_match: int, seed: int) -> list[Sample]:
    """States sampled from real bot matches: `per_match` random ones plus every state with a
    rarer feature, at most a few each."""
    rng = random.Random(seed)
    samples: list[Sample] = []
    for i in range(matches):
        match = Match(seats, seed=seed * 1000 + i, variant=variant, round_limit=6)
        kinds = [rng.choice(("random", "greedy")) for _ in range(seats)]
        bots = [make_bot(k, rng.randrange(1 << 30)) for k in kinds]
        states: list[Match] = []
        rare: dict[str, list[Match]] = {}
        while match.phase is not Phase.OVER:
            if match.phase is Phase.AWAITING_DEAL:
                match.deal()
                continue
            snapshot = match.copy(keep_history=False)
            states.append(snapshot)
            for feature in _features(match):
                rare.setdefault(feature, []).append(snapshot)
            match.apply(bots[match.turn].choose(view(match, match.turn)))
        picked = rng.sample(states, min(per_match, len(states)))
        for pool in rare.values():
            picked += rng.sample(pool, min(2, len(pool)))
        samples += [Sample(m, PlayoutState.of_match(m)) for m in picked]
    return samples


def policies_for(kind: str, seats: int, rng: random.Random) -> tuple[Policy, ...]:
    if kind == "mixed":
        return tuple(rng.choice((Policy.RANDOM, Policy.GREEDY)) for _ in range(seats))
    return (Policy.RANDOM if kind == "random" else Policy.GREEDY,) * seats


def check_against_engine(
    sample: Sample, policies: tuple[Policy, ...], result: PlayoutResult
) -> None:
    """Apply the reference's moves with `Match.apply`: legal, same points, same end."""
    match = sample.match.copy(keep_history=False)
    sides = len(match.scores)
    points = [0] * sides
    moves = [move_of(c) for c in result.moves]
    assert len(moves) == result.actions
    for i, move in enumerate(moves):
        assert match.phase is Phase.PLAYING, "the playout went on after the round ended"
        legal = match.legal_moves()
        assert move in legal, f"action {i}: {move} is not legal ({legal})"
        seat = match.turn
        if policies[seat] is Policy.GREEDY and move.is_placement:
            seen = view(match, seat)
            assert seen.points_after(move) == max(seen.points_after(m) for m in legal)
        applied = match.apply(move)
        points[match.teams[seat]] += applied.points
        if i < len(moves) - 1:
            assert applied.round_end is None, f"the round ended at action {i}"
            assert not applied.match_over, f"the match ended at action {i}"
            continue
        assert tuple(points) == result.points
        if result.end is EndKind.WON:
            assert applied.match_over
            assert applied.winner == seat == result.winner
            assert applied.round_end is None
            assert tuple(match.scores) == result.scores
        else:
            end = applied.round_end
            assert end is not None
            assert end.kind is (
                RoundEndKind.DOMINO if result.end is EndKind.DOMINO else RoundEndKind.BLOCKED
            )
            assert end.finisher == result.finisher
            assert end.deductions == result.deductions
            assert tuple(match.scores) == result.scores
            assert result.winner is None


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("seats", SEATS)
def test_kernel_and_reference_play_the_same_rounds(seats: int, variant: str) -> None:
    samples = collect(seats, variant, matches=4, per_match=12, seed=seats * 10 + len(variant))
    rng = random.Random(seats * 7919 + len(variant))
    played = 0
    for sample in samples:
        legal = sample.state.legal_moves()
        for kind in POLICY_SETS:
            policies = policies_for(kind, seats, rng)
            for _ in range(2):
                seed = rng.randrange(1 << 64)
                first = rng.choice(legal) if rng.random() < 0.25 else None
                ref = playout(
                    sample.state, policies, seed, first=first, record=True, backend="python"
                )
                fast = playout(sample.state, policies, seed, first=first, record=True, backend="c")
                assert fast == ref, (sample.state, policies, seed, first)
                if first is None:
                    check_against_engine(sample, policies, ref)
                played += 1
    assert played >= 300


@pytest.mark.slow
def test_samples_cover_the_hard_positions() -> None:
    """The differential test's states include every rarer feature it is meant to cover."""
    found: dict[str, set[str]] = {}
    for variant in VARIANTS:
        for seats in SEATS:
            for sample in collect(
                seats, variant, matches=4, per_match=12, seed=seats * 10 + len(variant)
            ):
                for feature in _features(sample.match):
                    found.setdefault(feature, set()).add(variant)
    assert found["drawn"] == set(VARIANTS)
    assert found["empty boneyard"] == set(VARIANTS)
    assert found["open branch"] == set(VARIANTS)
    assert found["stub"] == {"stubby", "british"}


@pytest.mark.parametrize("backend", ["c", "python"])
def test_rollouts_are_the_playouts_of_their_seeds(backend: str) -> None:
    samples = collect(3, "british", matches=2, per_match=3, seed=77)
    state = samples[0].state
    seeds = [5, 1 << 63, 12, 5]
    batch = rollouts(state, ("greedy", "random", "greedy"), seeds, backend=backend)
    for i, seed in enumerate(seeds):
        one = playout(state, ("greedy", "random", "greedy"), seed, backend=backend)
        assert tuple(g[i] for g in batch.gains) == one.gains
        assert batch.ends[i] == one.end
        assert batch.winners[i] == (-1 if one.winner is None else one.winner)
    assert batch.gains[0][0] == batch.gains[0][3]  # the same seed, the same playout
    assert batch.actions == sum(
        playout(state, ("greedy", "random", "greedy"), s, backend=backend).actions for s in seeds
    )
    ranged = rollouts(state, "greedy", n=20, base_seed=1000, backend=backend)
    listed = rollouts(state, "greedy", list(range(1000, 1020)), backend=backend)
    assert ranged == listed


def test_rollouts_from_one_state_per_seed_match_between_backends() -> None:
    samples = collect(4, "stubby", matches=2, per_match=6, seed=5)
    states = [s.state for s in samples]
    seeds = list(range(len(states)))
    fast = rollouts(states, "random", seeds, backend="c")
    ref = rollouts(states, "random", seeds, backend="python")
    assert fast == ref
    first = samples[0].state.legal_moves()[-1]
    fast = rollouts(states[0], "greedy", n=30, first=first, backend="c")
    ref = rollouts(states[0], "greedy", n=30, first=first, backend="python")
    assert fast == ref


def test_net_result_is_own_gain_minus_the_mean_of_the_others() -> None:
    """With 3 seats a playout's value is the side's gain minus the **mean** of the two other
    sides' gains (docs/analysis.md, Equity), not minus their sum."""
    state = PlayoutState.of_match(Match(3, seed=3))  # a fresh deal: many ways to go on
    batch = rollouts(state, "random", n=50)
    differs = 0
    for side in range(3):
        for i, net in enumerate(batch.net(side)):
            gains = [g[i] for g in batch.gains]
            others = [g for s, g in enumerate(gains) if s != side]
            assert net == gains[side] - sum(others) / 2
            differs += net != gains[side] - sum(others)
    assert differs > 0  # the sum would have failed this test
    mean, err = batch.mean_net(0)
    assert mean == sum(batch.net(0)) / 50
    assert err > 0
    one = playout(state, "greedy", 7)
    a, b, c = one.gains
    assert one.net(1) == b - (a + c) / 2


def test_with_two_sides_the_value_is_the_difference_of_the_gains() -> None:
    for seats in (2, 4):
        state = PlayoutState.of_match(Match(seats, seed=4))
        batch = rollouts(state, "random", n=20)
        for side in range(2):
            assert batch.net(side) == [
                float(a - b) for a, b in zip(batch.gains[side], batch.gains[1 - side], strict=True)
            ]

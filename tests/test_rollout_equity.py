"""Rollout equities (sniff/rollout.py): the expected round net result of each legal move
for the mover's side, from the mover's view only, with common random numbers."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

import pytest

from sniff import Deal, Match, Phase, Tile, make_bot, parse_bots, play_match, playout, view
from sniff.playout import KERNEL_AVAILABLE, Rollouts
from sniff.rollout import (
    BATCH,
    MAX_MILLIS,
    MAX_ROLLOUTS,
    BadBudget,
    NotToPlay,
    RolloutBot,
    equities,
)
from sniff.rules import value_for_side
from sniff.sampler import ImpossibleView
from tests.sampler_helpers import Round, decisions, enumerate_positions, positions

# -- the value of a playout ------------------------------------------------------------


def test_with_three_seats_the_others_count_by_their_mean_and_with_two_by_their_difference() -> None:
    """The equity's value of a playout (`Rollouts.net`, what `equities` averages)."""
    gains = ((10, 0, 5), (4, 2, 5), (-6, 8, 5))
    played = Rollouts(gains, (0, 0, 0), (-1, -1, -1), 0)
    assert played.net(0) == [10 - (4 - 6) / 2, 0 - (2 + 8) / 2, 0.0]
    assert played.net(2) == [-6 - (10 + 4) / 2, 8 - (0 + 2) / 2, 0.0]
    assert played.net(0)[1] != 0 - (2 + 8)  # not the sum of the others
    assert Rollouts(((3, -5), (7, 0)), (0, 0), (-1, -1), 0).net(1) == [4.0, 5.0]
    assert value_for_side((10, 4, -6), 0) == 10 - (4 - 6) / 2
    assert value_for_side((3, 7), 1) == 4.0


# -- what the estimate means -----------------------------------------------------------


def world_value(position: Match, move: object, rng: random.Random) -> float:
    """One playout of the rest of the round through the engine itself (Match.apply, greedy
    bots on views): the mover's side's gain minus the mean of the other sides' gains."""
    match = position.copy()
    undrawn = match.boneyard[match.bone_pos :]
    rng.shuffle(undrawn)
    match.boneyard = match.boneyard[: match.bone_pos] + undrawn
    mover = match.teams[match.turn]
    before = list(match.scores)
    bots = [make_bot("greedy", rng.getrandbits(32)) for _ in range(match.seats)]
    match.apply(move)  # type: ignore[arg-type]
    while match.phase is Phase.PLAYING:
        match.apply(bots[match.turn].choose(view(match, match.turn)))
    gains = [a - b for a, b in zip(match.scores, before, strict=True)]
    others = [g for side, g in enumerate(gains) if side != mover]
    return gains[mover] - sum(others) / len(others)


def small_decisions(seats: int, limit: int) -> Iterator[tuple[Match, int]]:
    """Late decisions with few consistent hidden worlds, where another seat drew or passed."""
    for seed in range(300):
        for match, seat in positions(seats, "american", seed, ("greedy", "random")):
            if len(view(match, seat).legal) < 2 or not match.draw_seats:
                continue
            if 20 <= Round(match, seat).count_bound() <= limit:
                yield match.copy(), seat
                break


@pytest.mark.slow
@pytest.mark.parametrize("seats", [2, 3])
def test_equities_agree_with_an_independent_estimate_over_enumerated_worlds(seats: int) -> None:
    """The rollouts' mean, per move, against playouts through the engine on worlds drawn from
    an exhaustive enumeration (no sampler, no playout kernel): within 4.5 standard errors."""
    rng = random.Random(seats)
    checked = 0
    for match, seat in small_decisions(seats, 3000):
        worlds, examples = enumerate_positions(match, seat)
        keys = list(worlds)
        weights = [worlds[k] for k in keys]
        result = equities(view(match, seat), rollouts=3000, seed=11)
        for entry in result.moves:
            values = [
                world_value(examples[rng.choices(keys, weights)[0]], entry.move, rng)
                for _ in range(600)
            ]
            mean = sum(values) / len(values)
            sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
            se = math.hypot(sd / math.sqrt(len(values)), entry.se)
            assert abs(entry.equity - mean) <= 4.5 * se + 1e-9, (entry, mean, se)
        checked += 1
        if checked >= 2:
            break
    assert checked == 2


def twin_matches(seed: int) -> tuple[Match, Match]:
    """Two matches whose deals differ only in one tile of seat 1's hand swapped with the
    boneyard's last tile: the same to seat 0 until that tile shows."""
    tiles = [Tile(t) for t in range(28)]
    random.Random(seed).shuffle(tiles)
    hands = [tiles[:7], tiles[7:14]]
    boneyard = tiles[14:]
    swapped = [hands[0], [*hands[1][:-1], boneyard[-1]]]
    other_bone = [*boneyard[:-1], hands[1][-1]]
    first = Match(2, seed=1, deal=Deal(tuple(map(tuple, hands)), tuple(boneyard), 0))
    second = Match(2, seed=1, deal=Deal(tuple(map(tuple, swapped)), tuple(other_bone), 0))
    return first, second


def test_equities_depend_only_on_what_the_seat_sees() -> None:
    """Two matches that differ only in tiles seat 0 cannot see give the same figures."""
    compared = 0
    for seed in range(20):
        first, second = twin_matches(seed)
        bots = [make_bot("greedy", 1), make_bot("greedy", 2)]
        while first.phase is Phase.PLAYING and second.phase is Phase.PLAYING:
            seen = view(first, first.turn)
            if view(second, first.turn) != seen:
                break  # the hidden difference came out: from here the seats see different things
            if first.turn == 0 and len(seen.legal) > 1:
                a = equities(seen, rollouts=64, seed=5)
                b = equities(view(second, 0), rollouts=64, seed=5)
                assert a == b
                compared += 1
            move = bots[first.turn].choose(seen)
            first.apply(move)
            second.apply(move)
        if compared >= 4:
            return
    raise AssertionError(f"only {compared} positions compared")


def test_the_same_seed_gives_the_same_figures_and_another_seed_other_samples() -> None:
    match = next(decisions(3, 8, 1))
    seen = view(match, match.turn)
    one = equities(seen, rollouts=96, seed=1)
    assert equities(seen, rollouts=96, seed=1) == one
    assert equities(seen, rollouts=96, seed=2) != one
    assert one.rollouts == 96
    assert one.seed == 1
    assert one.policy == "greedy"
    assert [e.move for e in one.moves] == sorted(
        seen.legal_moves(), key=lambda m: (-one.of(m).equity, seen.legal_moves().index(m))
    )
    assert one.best.loss == 0.0
    assert all(e.loss >= 0 for e in one.moves)


@pytest.mark.slow
@pytest.mark.skipif(not KERNEL_AVAILABLE, reason="the compiled kernel is not built here")
def test_the_kernel_and_the_python_reference_give_the_same_figures() -> None:
    for seats in (2, 3, 4):
        for match in decisions(seats, 20 + seats, 2, variant="british"):
            seen = view(match, match.turn)
            for policy in ("greedy", "random"):
                c = equities(seen, rollouts=40, seed=3, policy=policy, backend="c")
                py = equities(seen, rollouts=40, seed=3, policy=policy, backend="python")
                assert c == py


def test_every_move_is_played_out_on_the_same_sampled_deals_with_the_same_seeds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Common random numbers: the real playouts, watched as they are asked for."""
    calls: list[tuple[object, tuple[object, ...], tuple[int, ...]]] = []
    real = playout.rollouts

    def watched(states: object, policies: object, seeds: object, **kw: object) -> object:
        calls.append((kw["first"], tuple(states), tuple(seeds)))  # type: ignore[arg-type]
        return real(states, policies, seeds, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(playout, "rollouts", watched)
    match = next(decisions(3, 8, 1))
    seen = view(match, match.turn)
    moves = seen.legal_moves()
    equities(seen, rollouts=2 * BATCH + 5, seed=1)
    assert len(calls) == 3 * len(moves)
    for batch in range(3):
        group = calls[batch * len(moves) : (batch + 1) * len(moves)]
        assert [first for first, _, _ in group] == moves
        assert len({(states, seeds) for _, states, seeds in group}) == 1
    assert [len(calls[b * len(moves)][2]) for b in range(3)] == [BATCH, BATCH, 5]


@pytest.mark.slow
def test_differences_are_no_less_precise_than_the_moves_themselves() -> None:
    """The SE of a loss comes from the paired per-sample differences. Greedy playouts break
    their many zero-point ties at random, so playouts after two different first moves soon
    differ whatever the deal, and the pairing gains little (README: rollouts); it never
    costs precision over the decisions of a few matches."""
    paired = unpaired = 0.0
    for seats in (2, 3, 4):
        for match in decisions(seats, 30 + seats, 6):
            result = equities(view(match, match.turn), rollouts=200, seed=9)
            best = result.best
            for entry in result.moves[1:]:
                paired += entry.loss_se**2
                unpaired += best.se**2 + entry.se**2
    assert 0 < paired < unpaired, (paired, unpaired)


def test_a_time_budget_plays_a_prefix_of_the_samples_of_a_rollouts_budget() -> None:
    match = next(decisions(2, 5, 1))
    seen = view(match, match.turn)
    ticks = iter(range(1000))
    timed = equities(seen, millis=2.5, seed=4, clock=lambda: next(ticks) / 1000.0)
    assert timed.rollouts % BATCH == 0
    assert timed.rollouts >= BATCH
    assert equities(seen, rollouts=timed.rollouts, seed=4) == timed


@pytest.mark.parametrize(
    ("rollouts", "millis"),
    [
        (0, None),
        (1, None),
        (-3, None),
        (MAX_ROLLOUTS + 1, None),
        (True, None),
        (2.5, None),
        (None, 0),
        (None, -1),
        (None, math.nan),
        (None, math.inf),
        (None, MAX_MILLIS + 1),
    ],
)
def test_a_budget_of_nothing_or_an_absurd_one_is_refused(rollouts: object, millis: object) -> None:
    match = next(decisions(2, 5, 1))
    with pytest.raises(BadBudget):
        equities(view(match, match.turn), rollouts=rollouts, millis=millis)  # type: ignore[arg-type]
    with pytest.raises(BadBudget):
        RolloutBot(1, rollouts=rollouts, millis=millis)  # type: ignore[arg-type]


def test_only_the_seat_to_play_is_analysed_and_only_from_a_seat_view() -> None:
    match = next(decisions(3, 5, 1))
    other = (match.turn + 1) % 3
    for seen in (view(match, None), view(match, other)):
        with pytest.raises(NotToPlay):
            equities(seen, rollouts=8)


def test_a_view_no_match_can_produce_is_refused() -> None:
    match = next(decisions(2, 5, 1))
    seen = view(match, match.turn)
    with pytest.raises(ImpossibleView):
        equities(seen._replace(boneyard_size=seen.boneyard_size + 1), rollouts=8)


# -- the rollout bot -----------------------------------------------------------------


def test_the_rollout_bot_is_a_bot_like_the_others() -> None:
    assert parse_bots("rollout,greedy") == ("rollout", "greedy")
    bot = make_bot("rollout", 3)
    assert isinstance(bot, RolloutBot)
    assert bot.name == "rollout"


def test_the_rollout_bot_replays_the_same_match_from_the_same_seeds() -> None:
    def played() -> list[object]:
        bots = [RolloutBot(s, rollouts=16) for s in range(3)]
        match = play_match(Match(3, seed=12, round_limit=1), bots)
        return [m for log in match.history for m in log.actions]

    assert played() == played()


def test_the_rollout_bot_takes_a_placement_that_wins_the_match() -> None:
    for match in decisions(2, 40, 200):
        seen = view(match, match.turn)
        winning = [
            m
            for m in seen.legal
            if m.is_placement
            and seen.points_after(m)
            and seen.points_after(m) + seen.scores[match.turn] >= 5
        ]
        if not winning:
            continue
        score = seen.scores[match.turn]
        near = seen._replace(target=score + max(seen.points_after(m) for m in winning))
        chosen = RolloutBot(1, rollouts=8).choose(near)
        assert near.points_after(chosen) + score >= near.target
        return
    raise AssertionError("no decision with a scoring placement")


# -- the states of one position ---------------------------------------------------------


def test_states_made_from_the_first_equal_states_checked_in_full() -> None:
    from sniff.playout import BadPlayoutState, PlayoutState
    from sniff.rollout import _Determinizer
    from sniff.sampler import Sampler

    for seats in (2, 3, 4):
        for match in decisions(seats, 50 + seats, 3, variant="stubby"):
            seen = view(match, match.turn)
            sampler, make = Sampler(seen), _Determinizer(seen)
            rng = random.Random(seats)
            for _ in range(20):
                state = make.state(sampler.sample(rng))
                checked = PlayoutState(
                    state.variant,
                    state.seats,
                    state.target,
                    state.scores,
                    state.placements,
                    state.hands,
                    state.boneyard,
                    state.turn,
                    state.drawn,
                )
                assert state == checked
                assert state._packed == checked._packed
                assert state.hands[match.turn] == seen.hand_mask
            first = make.first
            assert first is not None
            hands = list(first.hands)
            if first.boneyard:
                other = (match.turn + 1) % seats
                low = hands[other] & -hands[other]
                with pytest.raises(BadPlayoutState):  # a tile from nowhere
                    first.with_hidden(hands, (*first.boneyard[:-1], low.bit_length() - 1))
            with pytest.raises(BadPlayoutState):
                first.with_hidden([*hands[:-1], 0], first.boneyard)

"""The `ismcts` bot (sniff/ismcts.py): information-set MCTS from its seat's view only,
reproducible from its seed, always lawful, the exact solver at the leaves where it applies."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sniff import VARIANTS, Match, Move, Phase, make_bot, parse_bots, play_match, view
from sniff import ismcts as ismcts_module
from sniff import playout as playout_module
from sniff.ismcts import BOT_PLAYOUTS, PRIOR_WEIGHT, IsmctsBot, search
from sniff.moves import PASS
from sniff.playout import KERNEL_AVAILABLE, PlayoutState
from sniff.rollout import MAX_MILLIS, MAX_ROLLOUTS, BadBudget, NotToPlay, equities
from sniff.solver import Budget, MoveBounds, NotSolved, solve
from sniff.view import SeatView
from tests.sampler_helpers import decisions, positions


def endgames(count: int) -> Iterator[SeatView]:
    """Views of two-seat decisions with an empty boneyard (every tile known to both)."""
    found = 0
    for seed in range(200):
        for match, seat in positions(2, "american", seed, ("greedy", "random")):
            seen = view(match, seat)
            if len(seen.legal) > 1 and match.boneyard_left == 0:
                yield seen
                found += 1
                if found >= count:
                    return


def test_the_ismcts_bot_is_a_bot_like_the_others() -> None:
    assert parse_bots("ismcts,rollout") == ("ismcts", "rollout")
    bot = make_bot("ismcts", 3)
    assert isinstance(bot, IsmctsBot)
    assert bot.name == "ismcts"
    assert bot.playouts == BOT_PLAYOUTS
    assert bot.millis is None


def test_the_same_seed_and_playout_budget_give_the_same_search_and_another_seed_another() -> None:
    for seats in (2, 3, 4):
        match = next(decisions(seats, 5, 1))
        seen = view(match, match.turn)
        one = search(seen, playouts=48, seed=9)
        assert one == search(seen, playouts=48, seed=9)
        assert one.playouts == 48
        # each root move starts with the root prior's visits (module text), the tree's on top
        assert sum(a.visits for a in one.actions) == 48 + PRIOR_WEIGHT * len(seen.legal)
        assert sum(a.visits for a in search(seen, playouts=48, prior=0).actions) == 48
        assert one != search(seen, playouts=48, seed=10)


def test_the_ismcts_bot_replays_the_same_match_from_the_same_seeds() -> None:
    def played(seats: int) -> list[object]:
        bots = [IsmctsBot(s, playouts=12) for s in range(seats)]
        match = play_match(Match(seats, seed=12, round_limit=1), bots)
        return [m for log in match.history for m in log.actions]

    for seats in (2, 3, 4):
        assert played(seats) == played(seats)


@pytest.mark.skipif(not KERNEL_AVAILABLE, reason="the compiled kernel is not built here")
def test_the_kernel_and_the_python_reference_give_the_same_search() -> None:
    for seats in (2, 3, 4):
        for match in decisions(seats, 21, 2):
            seen = view(match, match.turn)
            kernel = search(seen, playouts=24, seed=4, backend="c")
            assert kernel == search(seen, playouts=24, seed=4, backend="python")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seats=st.sampled_from([2, 3, 4]),
    variant=st.sampled_from(sorted(VARIANTS)),
    seed=st.integers(0, 2**32 - 1),
    steps=st.integers(0, 60),
    playouts=st.integers(2, 20),
    bot_seed=st.integers(0, 2**64 - 1),
)
def test_the_ismcts_bot_always_makes_a_legal_move(
    seats: int, variant: str, seed: int, steps: int, playouts: int, bot_seed: int
) -> None:
    match = Match(seats, seed=seed, variant=variant, round_limit=3)
    others = [make_bot("random", seed + s) for s in range(seats)]
    for _ in range(steps):
        if match.phase is Phase.AWAITING_DEAL:
            match.deal()
        if match.phase is Phase.OVER:
            break
        match.apply(others[match.turn].choose(view(match, match.turn)))
    if match.phase is Phase.AWAITING_DEAL:
        match.deal()
    if match.phase is Phase.OVER:
        return
    seen = view(match, match.turn)
    move = IsmctsBot(bot_seed, playouts=playouts).choose(seen)
    assert move in seen.legal
    match.apply(move)  # and the engine takes it


def test_with_two_seats_and_an_empty_boneyard_it_finds_the_clearly_best_move() -> None:
    """Positions in which every tile is known and the exact solver proves one move better than
    every other by at least 10 points: the search plays it."""
    checked = 0
    for seen in endgames(60):
        match_state = _only_deal(seen)
        try:
            solution = solve(match_state, Budget(nodes=20_000))
        except NotSolved:
            continue
        values = sorted((m.value for m in solution.moves), reverse=True)
        if values[0] - values[1] < 10:
            continue
        assert IsmctsBot(checked, playouts=200).choose(seen) == solution.best
        checked += 1
        if checked >= 4:
            return
    assert checked >= 2, f"only {checked} positions with a clearly best move"


def test_it_takes_a_placement_that_wins_the_match_without_searching(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_search(*args: object, **kwargs: object) -> object:
        raise AssertionError("searched a decision that a placement wins at once")

    monkeypatch.setattr(ismcts_module, "search", no_search)
    for match in decisions(2, 200, 40):
        seen = view(match, match.turn)
        scoring = [m for m in seen.legal if m.is_placement and seen.points_after(m)]
        if not scoring:
            continue
        score = seen.scores[match.turn]
        near = seen._replace(target=score + max(seen.points_after(m) for m in scoring))
        chosen = IsmctsBot(1, playouts=8).choose(near)
        assert near.points_after(chosen) + score >= near.target
        return
    raise AssertionError("no decision with a scoring placement")


def test_the_exact_solver_values_the_leaves_of_two_seat_rounds_with_an_empty_boneyard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[int, int]] = []

    def counting(state: object, budget: Budget) -> object:
        calls.append((state.seats, len(state.boneyard)))  # type: ignore[attr-defined]
        return solve(state, budget)  # type: ignore[arg-type]

    monkeypatch.setattr(ismcts_module, "solve", counting)
    seen = next(endgames(1))
    search(seen, playouts=32, seed=1, prior=0)  # the prior would settle this one at the root
    assert calls
    assert all(c == (2, 0) for c in calls)
    calls.clear()
    for seats in (3, 4):
        for match in decisions(seats, 3, 3):
            search(view(match, match.turn), playouts=32, seed=1)
    assert calls == []


def test_a_leaf_the_solver_cannot_finish_is_played_out_instead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unsolved: list[object] = []
    played: list[int] = []
    rollouts = playout_module.rollouts

    def give_up(state: object, budget: Budget) -> object:
        unsolved.append(state)
        raise NotSolved(0, (MoveBounds(PASS, -1.0, 1.0),), 1, "nodes")

    def counting(states: list[object], *args: object, **kwargs: object) -> object:
        played.append(len(states))
        return rollouts(states, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ismcts_module, "solve", give_up)
    monkeypatch.setattr(playout_module, "rollouts", counting)
    seen = next(endgames(1))
    result = search(seen, playouts=40, seed=2, prior=0)  # the leaves alone
    assert unsolved
    assert sum(played) >= len(unsolved)
    assert result.best in seen.legal
    assert sum(a.visits for a in result.actions) == 40


@pytest.mark.parametrize(
    ("playouts", "millis"),
    [
        (0, None),
        (1, None),
        (MAX_ROLLOUTS + 1, None),
        (True, None),
        (2.5, None),
        (None, 0),
        (None, -1),
        (None, math.nan),
        (None, MAX_MILLIS + 1),
    ],
)
def test_a_budget_of_nothing_or_an_absurd_one_is_refused(playouts: object, millis: object) -> None:
    with pytest.raises(BadBudget, match=r"playouts per move|time budget"):
        IsmctsBot(1, playouts=playouts, millis=millis)  # type: ignore[arg-type]
    match = next(decisions(2, 1, 1))
    with pytest.raises(BadBudget):
        search(view(match, match.turn), playouts=playouts, millis=millis)  # type: ignore[arg-type]


def test_a_time_budget_stops_after_whole_batches_and_a_playout_budget_counts_exactly() -> None:
    match = next(decisions(3, 2, 1))
    seen = view(match, match.turn)
    ticks = iter(range(10**6))
    timed = search(seen, millis=1, seed=3, clock=lambda: next(ticks) * 0.0004)
    assert timed.playouts == 3 * ismcts_module.BATCH  # the clock read once a batch
    assert search(seen, playouts=13, seed=3).playouts == 13


def test_only_the_seat_to_play_is_searched() -> None:
    match = next(decisions(2, 1, 1))
    other = 1 - match.turn
    with pytest.raises(NotToPlay):
        search(view(match, other), playouts=8)
    with pytest.raises(NotToPlay):
        search(view(match, None), playouts=8)


def _only_deal(seen: SeatView) -> PlayoutState:
    """The one determinization of a view that shows every tile."""
    import random

    from sniff.rollout import _Determinizer
    from sniff.sampler import Sampler

    return _Determinizer(seen).state(Sampler(seen).sample(random.Random(0)))


def test_a_view_without_history_is_ranked_where_it_was_served() -> None:
    """A gRPC client's picture (no round history to sample from) is ranked by the service;
    the bot plays the first of that ranking, asking with its own budget and seed."""
    match = next(decisions(2, 8, 1))
    seen = view(match, match.turn)
    asked: list[tuple[int | None, float | None, int]] = []

    class Served:
        target = 10_000
        own_score = 0

        def legal_moves(self) -> list[Move]:
            return list(seen.legal)

        def points_after(self, move: Move) -> int:
            return seen.points_after(move)

        def ranked_moves(self, rollouts: int | None, millis: float | None, seed: int) -> list[Move]:
            asked.append((rollouts, millis, seed))
            return list(reversed(seen.legal))

    assert IsmctsBot(5, playouts=40).choose(Served()) == seen.legal[-1]
    assert [a[:2] for a in asked] == [(40, None)]

    class Unranked:
        legal_moves = Served.legal_moves
        points_after = Served.points_after

    with pytest.raises(TypeError, match="SeatView"):
        IsmctsBot(5, playouts=40).choose(Unranked())


@pytest.mark.parametrize(("prior", "weight"), [(-1, 50), (1, 50), (64, 0), (True, 50)])
def test_a_root_prior_out_of_bounds_is_refused(prior: int, weight: int) -> None:
    match = next(decisions(2, 1, 1))
    seen = view(match, match.turn)
    with pytest.raises(ValueError, match="prior"):
        search(seen, playouts=8, prior=prior, prior_weight=weight)
    with pytest.raises(ValueError, match="prior"):
        IsmctsBot(1, prior=prior, prior_weight=weight)


def test_the_root_prior_starts_each_move_at_its_flat_rollout_equity() -> None:
    """Progressive bias: with `prior` rollouts a move, each root move starts with
    `prior_weight` visits at the rollout analysis's equity of the same seed (the same
    determinizations and playout seeds); the tree's iterations come on top."""
    for seats in (2, 4):
        match = next(decisions(seats, 6, 1))
        seen = view(match, match.turn)
        flat = equities(seen, rollouts=64, seed=11)
        searched = search(seen, playouts=2, prior=64, prior_weight=30, seed=11)
        assert sum(a.visits for a in searched.actions) == 2 + 30 * len(seen.legal)
        untouched = [a for a in searched.actions if a.visits == 30]
        assert len(untouched) >= len(seen.legal) - 2
        for action in untouched:
            assert action.mean == pytest.approx(flat.of(action.move).equity)

"""The exact solver (`sniff/solver.py`) against a plain enumeration of every line of play.

Positions come from real bot matches (2, 3 and 4 seats, the four variants, some with a low
target so that wins mid-round are common) near the end of a round: few tiles in hand, an
empty or short boneyard. Each is solved, and separately enumerated here with the engine's
own `Match.copy` and `Match.apply`: every line of play to the round's end, no pruning and
no table, each seat taking the first move in canonical order of the highest
`value_for_side` for its side (max^n; with two sides that is minimax), the gains read off
the match's scores. Every move's value and the best move must be equal; the solver's best
line, played with `Match.apply`, must gain exactly the position's value; a budget too small
must give `NotSolved` with bounds around the true values.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from analysis.bot_matches import bot_players
from sniff import VARIANTS, Match, Phase, view
from sniff.layout import points_for
from sniff.moves import Move
from sniff.playout import PlayoutState
from sniff.rules import value_for_side
from sniff.solver import (
    MAX_PLACEMENT_POINTS,
    BadBudget,
    Budget,
    NotPerfectInformation,
    NotSolved,
    Solution,
    _Search,
    _solve_in,
    is_perfect_information,
    solve,
)

BOTS = (("greedy", "random"), ("random", "greedy"), ("greedy",), ("random",))
UNLIMITED = Budget(nodes=10**9)


@dataclass(frozen=True)
class Position:
    """A round in play taken from a bot match: the match itself (for the enumeration) and
    its state (for the solver)."""

    match: Match
    state: PlayoutState
    label: str


def near_the_end(
    seats: int,
    variant: str,
    seed: int,
    count: int,
    *,
    max_tiles: int,
    max_boneyard: int,
    target: int | None = None,
    near_target: bool = False,
) -> list[Position]:
    """`count` positions from bot matches seeded from `seed`: in each round, the first
    position with at most `max_tiles` tiles in all hands and at most `max_boneyard` in the
    boneyard (the biggest such), and now and then (a seeded choice) a later one. With
    `near_target`, each side's score is then set 5 to 45 points short of the target, so
    that many lines end with a win."""
    rng = random.Random(f"{seats}/{variant}/{seed}")
    found: list[Position] = []
    match_seed = seed * 1000
    while len(found) < count:
        match_seed += 1
        match = Match(seats, seed=match_seed, variant=variant, target=target, round_limit=8)
        bots = bot_players(seats, BOTS[match_seed % len(BOTS)], match_seed)
        taken = -1
        while match.phase is not Phase.OVER and len(found) < count:
            if match.phase is Phase.AWAITING_DEAL:
                match.deal()
                continue
            if (
                sum(h.bit_count() for h in match.hands) <= max_tiles
                and match.boneyard_left <= max_boneyard
                and (taken != match.round_index or rng.random() < 0.1)
            ):
                taken = match.round_index
                m = match.copy(keep_history=False)
                if near_target:
                    m.scores = [m.target - rng.randrange(5, 50, 5) for _ in m.scores]
                label = f"{seats} seats {variant} match {match_seed} round {m.round_index}"
                found.append(Position(m, PlayoutState.of_match(m), f"{label} action {len(found)}"))
            match.apply(bots[match.turn].choose(view(match, match.turn)))
    return found


# -- the enumeration ------------------------------------------------------------------------


class TooBig(Exception):
    """The enumeration's own cap: the position has too many lines for this tier."""


class Enumeration:
    """Every line of play from a match's position, by the engine alone (module docstring)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.nodes = 0
        self.wins = 0
        """Lines that ended with a side reaching the target."""

    def move_gains(self, match: Match, move: Move) -> tuple[int, ...]:
        """Each side's gain from `match`'s position to the round's end when `move` is made
        and every seat then plays the enumeration's choice."""
        self.nodes += 1
        if self.nodes > self.cap:
            raise TooBig
        child = match.copy(keep_history=False)
        before = list(child.scores)
        child.apply(move)
        gains = [after - b for after, b in zip(child.scores, before, strict=True)]
        self.wins += max(child.scores) >= child.target
        if child.phase is Phase.PLAYING:
            rest = self.gains(child)
            gains = [g + r for g, r in zip(gains, rest, strict=True)]
        return tuple(gains)

    def gains(self, match: Match) -> tuple[int, ...]:
        side = match.teams[match.turn]
        best: tuple[int, ...] | None = None
        for move in match.legal_moves():
            g = self.move_gains(match, move)
            if best is None or value_for_side(g, side) > value_for_side(best, side):
                best = g
        assert best is not None
        return best

    def move_values(self, match: Match) -> list[tuple[Move, float]]:
        side = match.teams[match.turn]
        return [(m, value_for_side(self.move_gains(match, m), side)) for m in match.legal_moves()]


def enumerated(position: Position, cap: int) -> tuple[list[tuple[Move, float]], int] | None:
    """Every legal move's value by enumeration and the number of lines ending in a win, or
    None if it has more than `cap` lines."""
    enumeration = Enumeration(cap)
    try:
        return enumeration.move_values(position.match), enumeration.wins
    except TooBig:
        return None


def line_gains(match: Match, line: tuple[Move, ...]) -> tuple[tuple[int, ...], str]:
    """Play `line` with `Match.apply` (each move must be legal); it must end the round exactly
    at its last move. Each side's gain over it, and how the round ended."""
    match = match.copy(keep_history=False)
    before = list(match.scores)
    for i, move in enumerate(line):
        assert match.phase is Phase.PLAYING, f"the round ended before move {i} ({move})"
        assert move in match.legal_moves(), f"move {i} ({move}) is not legal"
        match.apply(move)
    assert match.phase is not Phase.PLAYING, "the line stops before the round's end"
    gains = tuple(after - b for after, b in zip(match.scores, before, strict=True))
    end = match.history[-1].end
    return gains, "won" if end is None else end.kind.value


def check_position(position: Position, cap: int) -> tuple[str, int] | None:
    """Solve and enumerate one position: how the best line ends and how many lines end in a
    win; None if the enumeration is over its cap."""
    enumeration = enumerated(position, cap)
    if enumeration is None:
        return None
    expected, wins = enumeration
    solution = solve(position.state, UNLIMITED, double_dummy=True)
    where = position.label
    assert [mv.move for mv in solution.moves] == [m for m, _ in expected], where
    assert [mv.value for mv in solution.moves] == [v for _, v in expected], where
    top = max(v for _, v in expected)
    assert solution.value == top, where
    assert solution.best == next(m for m, v in expected if v == top), where
    return check_line(position, solution), wins


def check_line(position: Position, solution: Solution) -> str:
    """The best line is legal, ends the round and gains the value; how the round ends."""
    assert solution.line[0] == solution.best, position.label
    gains, end = line_gains(position.match, solution.line)
    assert value_for_side(gains, solution.side) == solution.value, position.label
    return end


def sweep(
    seats: int, variant: str, seed: int, count: int, cap: int, **where: Any
) -> dict[str, int]:
    """Check `count` positions (most must be small enough for the enumeration): how many of
    their best lines ended each way, and ("lines won") how many of all lines ended in a win."""
    ends: dict[str, int] = {}
    checked = 0
    for position in near_the_end(seats, variant, seed, count, **where):
        found = check_position(position, cap)
        if found is not None:
            checked += 1
            ends[found[0]] = ends.get(found[0], 0) + 1
            ends["lines won"] = ends.get("lines won", 0) + found[1]
    assert checked >= count // 2, f"only {checked} of {count} positions were small enough"
    return ends


# Sizes per seat count: the tiles left in all hands and the boneyard's, small enough for
# the enumeration of the quick tier.
QUICK_SIZES = {2: (14, 3), 3: (13, 2), 4: (16, 3)}
SLOW_SIZES = {2: (16, 4), 3: (15, 3), 4: (18, 4)}
TABLE_SIZES = {2: (18, 5), 3: (16, 3), 4: (20, 4)}


# -- against the enumeration ----------------------------------------------------------------


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_every_move_value_and_the_best_move_equal_the_enumeration(seats: int, variant: str) -> None:
    """Positions near the end of rounds of bot matches, every seat count and variant."""
    tiles, bones = QUICK_SIZES[seats]
    sweep(seats, variant, 1, 8, 20_000, max_tiles=tiles, max_boneyard=bones)


@pytest.mark.parametrize(("seats", "variant"), [(2, "berndt"), (3, "british"), (4, "american")])
def test_scores_near_the_target_make_wins_mid_round_and_the_values_still_agree(
    seats: int, variant: str
) -> None:
    """Scores 5 to 45 short of the target: many lines end at the target with no deductions,
    and the table may share an entry between positions reached with other scores only where
    no line it rests on would end otherwise. (Among these positions are some where sharing
    entries whatever the scores gives wrong values.)"""
    tiles, bones = SLOW_SIZES[seats]
    ends = sweep(
        seats, variant, 3, 8, 100_000, max_tiles=tiles, max_boneyard=bones, near_target=True
    )
    assert ends["lines won"] >= 100, ends


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_many_positions_agree_with_the_enumeration(seats: int, variant: str) -> None:
    tiles, bones = SLOW_SIZES[seats]
    sweep(seats, variant, 3, 40, 300_000, max_tiles=tiles, max_boneyard=bones)
    ends = sweep(
        seats, variant, 4, 20, 300_000, max_tiles=tiles, max_boneyard=bones, near_target=True
    )
    assert ends["lines won"] >= 100, ends


@pytest.mark.slow
def test_bigger_two_seat_endgames_agree_with_the_enumeration() -> None:
    """Two seats, empty boneyard (perfect information, the solver's main use), up to 18
    tiles in the two hands, the default budget."""
    checked = 0
    for position in near_the_end(2, "american", 5, 30, max_tiles=18, max_boneyard=0):
        enumeration = enumerated(position, 300_000)
        if enumeration is None:
            continue
        expected = enumeration[0]
        solution = solve(position.state)
        assert [mv.value for mv in solution.moves] == [v for _, v in expected]
        check_line(position, solution)
        checked += 1
    assert checked >= 15


# -- the table and the scores ----------------------------------------------------------------


@pytest.mark.parametrize(("seats", "variant"), [(2, "american"), (3, "british"), (4, "stubby")])
def test_a_table_filled_at_other_scores_changes_no_value(seats: int, variant: str) -> None:
    """The table keeps each result with the range of scores it holds at, so that a position
    reached again with other scores reuses it only where every line it rests on ends as it
    did. Solving a position with the table that solves of the same position at other scores
    filled must give exactly the values a fresh solve gives, at every score."""
    rng = random.Random(seats)
    tiles, bones = TABLE_SIZES[seats]
    for position in near_the_end(seats, variant, 15, 8, max_tiles=tiles, max_boneyard=bones):
        state = position.state
        table = None
        for _ in range(10):
            needs = [
                rng.choice((5, 10, 15, 20, 25, 30, 40, 50, 70, 100, 300)) for _ in state.scores
            ]
            other = dataclasses.replace(state, scores=tuple(state.target - n for n in needs))
            fresh = solve(other, UNLIMITED, double_dummy=True)
            search = _Search(other, UNLIMITED)
            if table is not None:
                search.table = table
            warm = _solve_in(search, other)
            assert (warm.moves, warm.best, warm.value) == (fresh.moves, fresh.best, fresh.value), (
                position.label,
                needs,
            )
            table = search.table


# -- the best line ---------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_playing_the_best_line_out_gains_exactly_the_value(seats: int) -> None:
    """Bigger positions than the enumeration affords: the line the solver gives, played with
    `Match.apply`, is legal, ends the round, and gains the position's value for the mover."""
    for position in near_the_end(seats, "british", 6, 8, max_tiles=16, max_boneyard=3):
        solution = solve(position.state, Budget(nodes=200_000), double_dummy=True)
        check_line(position, solution)
        assert solution.value == solution.value_of(solution.best)


def test_each_position_along_the_best_line_has_the_value_left() -> None:
    """Solving again after each move of the best line gives the value still to come: the
    value less what the moves so far gained (from the first mover's side, two sides)."""
    for position in near_the_end(2, "american", 7, 4, max_tiles=14, max_boneyard=0):
        solution = solve(position.state)
        match = position.match.copy(keep_history=False)
        side = solution.side
        before = list(match.scores)
        for move in solution.line[:-1]:
            match.apply(move)
            gained = [a - b for a, b in zip(match.scores, before, strict=True)]
            again = solve(PlayoutState.of_match(match))
            mine = again.value if again.side == side else -again.value
            assert mine + value_for_side(gained, side) == solution.value


# -- budgets ---------------------------------------------------------------------------------


def test_a_small_node_budget_gives_not_solved_with_bounds_around_the_true_values() -> None:
    tried = 0
    for position in near_the_end(2, "american", 8, 12, max_tiles=16, max_boneyard=3):
        solution = solve(position.state, double_dummy=True)
        if solution.nodes < 50:
            continue
        tried += 1
        for nodes in (1, 7, solution.nodes // 3):
            with pytest.raises(NotSolved) as caught:
                solve(position.state, Budget(nodes=nodes), double_dummy=True)
            not_solved = caught.value
            assert not_solved.reason == "nodes"
            assert not_solved.nodes <= nodes
            assert [b.move for b in not_solved.moves] == [mv.move for mv in solution.moves]
            for bounds, exact in zip(not_solved.moves, solution.moves, strict=True):
                assert bounds.low <= exact.value <= bounds.high
            assert not_solved.low <= solution.value <= not_solved.high
    assert tried >= 3


def test_three_seat_bounds_contain_the_max_n_values() -> None:
    tried = 0
    for position in near_the_end(3, "stubby", 9, 10, max_tiles=13, max_boneyard=2):
        solution = solve(position.state, double_dummy=True)
        if solution.nodes < 30:
            continue
        tried += 1
        with pytest.raises(NotSolved) as caught:
            solve(position.state, Budget(nodes=solution.nodes // 2), double_dummy=True)
        for bounds, exact in zip(caught.value.moves, solution.moves, strict=True):
            assert bounds.low <= exact.value <= bounds.high
        assert caught.value.low <= solution.value <= caught.value.high
    assert tried >= 2


def test_a_budget_just_big_enough_solves_and_the_same_budget_gives_the_same_answer() -> None:
    position = max(
        near_the_end(2, "berndt", 10, 10, max_tiles=14, max_boneyard=0),
        key=lambda p: solve(p.state).nodes,
    )
    solution = solve(position.state)
    again = solve(position.state, Budget(nodes=solution.nodes + 1))
    assert again == solution
    with pytest.raises(NotSolved):
        solve(position.state, Budget(nodes=max(1, solution.nodes - 1)))


def test_a_time_budget_that_runs_out_says_so() -> None:
    """A time budget is looked at every 1,024 nodes: a position needing more than that,
    given a millionth of a millisecond, is not solved, for want of time."""
    for position in near_the_end(2, "american", 11, 40, max_tiles=16, max_boneyard=0):
        if solve(position.state).nodes > 2_000:
            with pytest.raises(NotSolved) as caught:
                solve(position.state, Budget(nodes=None, millis=1e-6))
            assert caught.value.reason == "millis"
            return
    pytest.fail("no position needed more than 2,000 nodes")


@pytest.mark.parametrize(
    "limits",
    [
        {"nodes": 0},
        {"nodes": -5},
        {"nodes": 2.5},
        {"nodes": True},
        {"millis": 0},
        {"millis": -1.0},
        {"millis": math.nan},
        {"nodes": None, "millis": None},
        {"nodes": None},
    ],
)
def test_a_budget_that_allows_no_search_is_refused(limits: dict[str, object]) -> None:
    with pytest.raises(BadBudget):
        Budget(**limits)  # type: ignore[arg-type]


def test_solve_refuses_a_budget_that_is_not_a_budget() -> None:
    position = near_the_end(2, "american", 12, 1, max_tiles=6, max_boneyard=0)[0]
    for bad in (0, -1, 1000, "1000"):
        with pytest.raises(BadBudget):
            solve(position.state, bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        solve(position.match)  # type: ignore[arg-type]


# -- perfect information ---------------------------------------------------------------------


@pytest.mark.parametrize(("seats", "boneyard"), [(2, 2), (3, 0), (4, 0), (3, 1)])
def test_hidden_tiles_need_double_dummy_said(seats: int, boneyard: int) -> None:
    """Two seats with a boneyard, or three or four seats: each player does not see every
    tile, so the value of the game where every tile is seen must be asked for by name."""
    found = [
        p
        for p in near_the_end(seats, "american", 13, 12, max_tiles=12, max_boneyard=boneyard)
        if len(p.state.boneyard) == boneyard
    ]
    assert found
    state = found[0].state
    assert not is_perfect_information(state)
    with pytest.raises(NotPerfectInformation):
        solve(state)
    assert isinstance(solve(state, double_dummy=True), Solution)


def test_two_seats_with_an_empty_boneyard_are_perfect_information() -> None:
    position = near_the_end(2, "american", 14, 1, max_tiles=8, max_boneyard=0)[0]
    assert is_perfect_information(position.state)
    assert solve(position.state) == solve(position.state, double_dummy=True)


# -- the bound behind the table's use of the scores ------------------------------------------


def placements(matches: int) -> Iterator[int]:
    """The counted ends after every placement of some bot matches of every kind."""
    for seats in (2, 3, 4):
        for variant in VARIANTS:
            for i in range(matches):
                match = Match(seats, seed=500 + i, variant=variant, round_limit=3)
                bots = bot_players(seats, BOTS[i % len(BOTS)], 500 + i)
                while match.phase is not Phase.OVER:
                    if match.phase is Phase.AWAITING_DEAL:
                        match.deal()
                        continue
                    result = match.apply(bots[match.turn].choose(view(match, match.turn)))
                    if result.ends_sum is not None:
                        yield result.ends_sum


def test_no_placement_counts_more_than_the_bound_the_solver_assumes() -> None:
    """At most four counted ends of at most 12: 48, so 45 points (MAX_PLACEMENT_POINTS)."""
    assert max(points_for(e) for e in placements(3)) <= MAX_PLACEMENT_POINTS
    assert max(placements(3)) <= 48

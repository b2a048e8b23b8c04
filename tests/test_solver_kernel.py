"""The exact solver in the kernel (`_kernel.c`, "the exact solver") against the Python search.

Both backends must give the same `Solution` but for `nodes`: each move's value, the best
move, the value, and the best line (two sides: at each position the first move in
canonical order of the position's value; three: the move max^n chose). Positions come from
bot matches of every variant and seat count (`tests/test_solver.py`'s `near_the_end`),
with empty and non-empty boneyards (double-dummy) and with scores near the target; the line
the kernel gives is replayed with `Match.apply` and must gain exactly the value. Budgets
that run out must give `NotSolved` with bounds around the true values, and the same bad
budgets are refused by both. Skipped when the kernel is not built.
"""

from __future__ import annotations

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sniff import VARIANTS
from sniff.backend import KERNEL_AVAILABLE
from sniff.backend import kernel as _kernel
from sniff.playout import PlayoutState
from sniff.solver import (
    BadBudget,
    Budget,
    NotPerfectInformation,
    NotSolved,
    Solution,
    solve,
)
from tests.helpers import example_count
from tests.test_solver import Position, check_line, near_the_end

pytestmark = pytest.mark.skipif(
    not KERNEL_AVAILABLE, reason="the C kernel sniff._kernel is not built (`pip install -e .`)"
)

UNLIMITED = Budget(nodes=10**9)
SIZES = {2: (14, 3), 3: (12, 2), 4: (16, 3)}
"""Tiles in all hands and in the boneyard, per seat count: small enough for the Python
search in the quick tier."""


def both(state: PlayoutState, budget: Budget = UNLIMITED) -> tuple[Solution, Solution]:
    """`state` solved by each backend: (python, c)."""
    return (
        solve(state, budget, double_dummy=True, backend="python"),
        solve(state, budget, double_dummy=True, backend="c"),
    )


def same_solution(position: Position) -> Solution:
    """Both backends' solutions of `position` are equal but for `nodes`, and the kernel's
    line, replayed, gains the value; the kernel's solution."""
    return compared(position)[1]


def compared(position: Position) -> tuple[Solution, Solution]:
    """`same_solution`'s checks; both solutions (python, c)."""
    python, c = both(position.state)
    where = position.label
    assert c.side == python.side, where
    assert c.moves == python.moves, where
    assert (c.best, c.value) == (python.best, python.value), where
    assert c.line == python.line, where
    check_line(position, c)
    return python, c


# -- the same solution ------------------------------------------------------------------------


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_both_backends_give_the_same_solution_with_an_empty_boneyard(
    seats: int, variant: str
) -> None:
    tiles, _ = SIZES[seats]
    for position in near_the_end(seats, variant, 21, 6, max_tiles=tiles + 2, max_boneyard=0):
        same_solution(position)


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_both_backends_give_the_same_solution_double_dummy_with_a_boneyard(
    seats: int, variant: str
) -> None:
    tiles, boneyard = SIZES[seats]
    positions = near_the_end(seats, variant, 22, 6, max_tiles=tiles, max_boneyard=boneyard)
    assert any(p.state.boneyard for p in positions)
    for position in positions:
        same_solution(position)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_both_backends_agree_near_the_target_where_lines_end_in_a_win(seats: int) -> None:
    """Scores 5 to 45 short of the target: many lines end with a side reaching it, and the
    kernel's table keys the scores its own way (each need rounded up to five, capped)."""
    tiles, boneyard = SIZES[seats]
    wins = 0
    for variant in VARIANTS:
        for position in near_the_end(
            seats, variant, 23, 4, max_tiles=tiles, max_boneyard=boneyard, near_target=True
        ):
            solution = same_solution(position)
            wins += solution.line[-1].is_placement and len(solution.line) < 40
    assert wins


@settings(
    max_examples=example_count(200),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seats=st.sampled_from([2, 3, 4]),
    variant=st.sampled_from(list(VARIANTS)),
    seed=st.integers(0, 10**6),
    near_target=st.booleans(),
    boneyard=st.integers(0, 3),
)
def test_any_position_from_a_bot_match_solves_alike_in_both_backends(
    seats: int, variant: str, seed: int, near_target: bool, boneyard: int
) -> None:
    tiles, most = SIZES[seats]
    (position,) = near_the_end(
        seats,
        variant,
        seed,
        1,
        max_tiles=tiles,
        max_boneyard=min(boneyard, most),
        near_target=near_target,
    )
    same_solution(position)


def test_a_solve_between_two_solves_of_one_position_changes_nothing() -> None:
    """The kernel's table outlives a solve (a generation number makes its entries stale):
    what one solve left there must not leak into the next, at other scores either."""
    first, second = near_the_end(2, "american", 24, 2, max_tiles=16, max_boneyard=2)
    alone = solve(first.state, double_dummy=True, backend="c")
    solve(second.state, double_dummy=True, backend="c")
    near = near_the_end(2, "american", 24, 1, max_tiles=16, max_boneyard=2, near_target=True)
    solve(near[0].state, double_dummy=True, backend="c")
    assert solve(first.state, double_dummy=True, backend="c") == alone


def test_solves_in_threads_at_once_give_the_sequential_solutions() -> None:
    """The kernel searches without the interpreter lock; a solve that finds the shared
    table taken searches with a table of its own."""
    positions = near_the_end(4, "british", 25, 8, max_tiles=18, max_boneyard=3)
    expected = [solve(p.state, double_dummy=True, backend="c") for p in positions]
    got: list[Solution | None] = [None] * len(positions)

    def work(i: int) -> None:
        got[i] = solve(positions[i].state, double_dummy=True, backend="c")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(positions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == expected


@pytest.mark.slow
def test_whole_two_seat_deals_double_dummy_solve_alike_when_the_table_overflows() -> None:
    """A round from its first decision, the whole boneyard in draw order (a deal's par).
    Deal 40 stores more results than the kernel's table holds (2**18): the kernel loses
    some and searches them again (more nodes than Python's unbounded table), and must
    still find the same solution."""
    overflowed = 0
    for seed in (31, 40):
        (position,) = near_the_end(2, "american", seed, 1, max_tiles=14, max_boneyard=14)
        assert len(position.state.boneyard) == 14
        python, c = compared(position)
        overflowed += c.nodes > python.nodes
    assert overflowed, "no deal overflowed the kernel's table: pick a bigger one"


# -- budgets ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_a_kernel_budget_that_runs_out_gives_bounds_around_the_true_values(seats: int) -> None:
    tiles, boneyard = SIZES[seats]
    tried = 0
    for position in near_the_end(seats, "stubby", 26, 12, max_tiles=tiles, max_boneyard=boneyard):
        solution = solve(position.state, UNLIMITED, double_dummy=True, backend="c")
        if solution.nodes < 40:
            continue
        tried += 1
        for nodes in (1, 9, solution.nodes // 3, solution.nodes - 1):
            with pytest.raises(NotSolved) as caught:
                solve(position.state, Budget(nodes=nodes), double_dummy=True, backend="c")
            not_solved = caught.value
            assert not_solved.reason == "nodes"
            assert not_solved.nodes <= nodes
            assert [b.move for b in not_solved.moves] == [mv.move for mv in solution.moves]
            for bounds, exact in zip(not_solved.moves, solution.moves, strict=True):
                assert bounds.low <= exact.value <= bounds.high, position.label
            assert not_solved.low <= solution.value <= not_solved.high
        # The budget is spent when the count reaches it: one node more than it took solves.
        enough = Budget(nodes=solution.nodes + 1)
        assert solve(position.state, enough, double_dummy=True, backend="c") == solution
    assert tried >= 2


def test_a_kernel_time_budget_that_runs_out_says_so() -> None:
    for position in near_the_end(2, "american", 11, 40, max_tiles=16, max_boneyard=3):
        if solve(position.state, double_dummy=True, backend="c").nodes > 2_000:
            no_time = Budget(nodes=None, millis=1e-6)
            with pytest.raises(NotSolved) as caught:
                solve(position.state, no_time, double_dummy=True, backend="c")
            assert caught.value.reason == "millis"
            assert caught.value.low <= caught.value.high
            return
    pytest.fail("no position needed more than 2,000 nodes")


@pytest.mark.parametrize("backend", ["python", "c"])
def test_both_backends_refuse_the_same_bad_budgets_and_hidden_tiles(backend: str) -> None:
    (position,) = near_the_end(2, "american", 12, 1, max_tiles=10, max_boneyard=2)
    for bad in (0, -1, 1000, "1000", None.__class__):
        with pytest.raises(BadBudget):
            solve(position.state, bad, double_dummy=True, backend=backend)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        solve(position.match, backend=backend)  # type: ignore[arg-type]
    if position.state.boneyard:
        with pytest.raises(NotPerfectInformation):
            solve(position.state, backend=backend)


def test_an_unknown_backend_is_refused() -> None:
    (position,) = near_the_end(2, "american", 12, 1, max_tiles=10, max_boneyard=0)
    with pytest.raises(ValueError, match="backend"):
        solve(position.state, backend="fortran")


@pytest.mark.parametrize(("nodes", "millis"), [(0, 0.0), (-1, 5.0), (5, -1.0), (5, float("nan"))])
def test_the_kernel_itself_refuses_a_budget_that_allows_no_search(
    nodes: int, millis: float
) -> None:
    (position,) = near_the_end(2, "american", 12, 1, max_tiles=10, max_boneyard=0)
    with pytest.raises(ValueError, match="budget"):
        _kernel.solve(position.state._packed, nodes, millis)

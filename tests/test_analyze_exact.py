"""Exact values in `sniff analyze` (#20): where the mover sees every tile (two seats and an
empty boneyard) the decision is solved, not estimated, and marked; elsewhere rollouts as
before; `--no-exact` estimates everything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from analysis.bot_matches import bot_records
from analysis.cli.main import cli
from sniff import Match, Phase, make_bot, view
from sniff.playout import PlayoutState
from sniff.rollout import EXACT, NotToPlay, exact_equities
from sniff.solver import Budget, solve


def decisions_with_views(seats: int, seed: int) -> list[tuple[Match, Any]]:
    """Every decision of a bot match: the match there (all tiles) and the mover's view."""
    match = Match(seats, seed=seed, round_limit=3)
    bots = [make_bot("greedy" if s % 2 == 0 else "random", seed * 10 + s) for s in range(seats)]
    out = []
    while match.phase is not Phase.OVER:
        if match.phase is Phase.AWAITING_DEAL:
            match.deal()
            continue
        seen = view(match, match.turn)
        if len(match.legal_moves()) > 1:
            out.append((match.copy(keep_history=False), seen))
        match.apply(bots[match.turn].choose(seen))
    return out


def test_exact_equities_are_the_solvers_values_where_the_mover_sees_every_tile() -> None:
    solved = 0
    for seed in range(1, 25):
        for match, seen in decisions_with_views(2, seed):
            result = exact_equities(seen, Budget(nodes=500_000))
            if match.boneyard_left:
                assert result is None
                continue
            assert result is not None
            solution = solve(PlayoutState.of_match(match), Budget(nodes=500_000))
            assert {(e.move, e.equity) for e in result.moves} == {
                (m.move, m.value) for m in solution.moves
            }
            values = [e.equity for e in result.moves]
            assert values == sorted(values, reverse=True)
            assert result.best.move == solution.best
            assert all(e.se == 0 and e.loss_se == 0 for e in result.moves)
            assert all(e.loss == result.best.equity - e.equity for e in result.moves)
            assert (result.policy, result.rollouts) == (EXACT, 0)
            solved += 1
    assert solved > 10


def test_hidden_tiles_or_a_spent_budget_give_no_exact_values() -> None:
    for _match, seen in decisions_with_views(3, 4)[-5:]:
        assert exact_equities(seen, Budget(nodes=500_000)) is None, "three seats hide tiles"
    late = [
        (m, v)
        for seed in range(1, 25)
        for m, v in decisions_with_views(2, seed)
        if not m.boneyard_left
    ]
    big = max(late, key=lambda mv: sum(h.bit_count() for h in mv[0].hands))
    assert exact_equities(big[1], Budget(nodes=1)) is None


def test_exact_equities_are_for_the_seat_to_play() -> None:
    match, _seen = decisions_with_views(2, 2)[-1]
    other = view(match, 1 - match.turn)
    with pytest.raises(NotToPlay):
        exact_equities(other, Budget(nodes=10))


def test_analyze_solves_the_decisions_it_can_and_marks_them(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    lines = [json.dumps(r) for r in bot_records(2, 4, 3, ("greedy", "random"), round_limit=3)]
    path.write_text("\n".join(lines) + "\n")
    runner = CliRunner()
    args = ["analyze", "--records", str(path), "--rollouts", "20", "--format", "json"]
    done = runner.invoke(cli, args)
    assert done.exit_code == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["settings"]["exact"] is True
    exact = [d for d in doc["decisions"] if d["exact"]]
    estimated = [d for d in doc["decisions"] if not d["exact"]]
    assert exact
    assert estimated
    for d in exact:
        assert d["played_se"] == d["best_se"] == d["loss_se"] == 0
        assert d["error"] == (d["loss"] > 0)
        assert all(m["se"] == 0 for m in d["moves"])
    assert any(d["best_se"] > 0 for d in estimated), "the others are estimated"
    stored = list((tmp_path / "m.jsonl.analysis" / "decisions").rglob("*.parquet"))
    assert stored
    assert all("rollouts-only" not in p.name for p in stored)
    table = pq.read_table(stored[0])
    assert "exact" in table.column_names

    off = runner.invoke(cli, [*args, "--no-exact"])
    assert off.exit_code == 0, off.stderr
    assert not any(d["exact"] for d in json.loads(off.stdout)["decisions"])
    assert list((tmp_path / "m.jsonl.analysis" / "decisions").rglob("*rollouts-only*.parquet"))

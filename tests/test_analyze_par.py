"""`sniff analyze --par` (#20): the double-dummy par of each deal (every tile seen by every
seat, perfect play) is the exact solver's value from the round's start, and each seat's
result against it is the round as played minus that par."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from analysis.bot_matches import bot_records
from analysis.cli.main import cli
from analysis.rollout.par import match_pars
from analysis.rollout.source import specs_from_records
from sniff import Deal
from sniff.playout import PlayoutState
from sniff.solver import Budget, solve


@pytest.mark.slow
@pytest.mark.parametrize(("seats", "seed"), [(2, 3), (4, 5)])
def test_the_par_is_the_solvers_value_of_the_deal(tmp_path: Path, seats: int, seed: int) -> None:
    path = tmp_path / "m.jsonl"
    records = bot_records(seats, 1, seed, ("greedy", "random"), round_limit=1)
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    spec = specs_from_records(str(path))[0]
    (par,) = match_pars(spec)
    match = spec.rebuild()
    rnd = spec.rounds[0]
    match.deal(Deal.of(rnd.hands, rnd.boneyard, rnd.leader))
    expected = solve(PlayoutState.of_match(match), Budget(nodes=5_000_000), double_dummy=True)
    assert par.solved
    assert par.par is not None
    assert par.par[par.leader] == expected.value == par.low == par.high
    assert par.against_par == tuple(p - q for p, q in zip(par.played, par.par, strict=True))
    assert sum(par.par) == pytest.approx(0)  # two sides: one's gain is the other's loss

    code = CliRunner().invoke(
        cli, ["analyze", "--records", str(path), "--rollouts", "4", "--par", "--format", "json"]
    )
    assert code.exit_code == 0, code.stderr
    doc = json.loads(code.stdout)
    assert doc["pars"] == [par.to_json()]
    table = CliRunner().invoke(cli, ["analyze", "--records", str(path), "--rollouts", "4", "--par"])
    assert table.exit_code == 0, table.stderr
    assert "double-dummy par of each deal" in table.stdout


def test_an_unsolved_deal_gives_bounds_not_a_par(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    records = bot_records(3, 1, 2, ("greedy", "random"), round_limit=1)
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    (par,) = match_pars(specs_from_records(str(path))[0], nodes=1_000)
    assert not par.solved
    assert par.par is None
    assert par.against_par is None
    assert par.low <= par.high

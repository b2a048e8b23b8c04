"""`sniff analyze`'s luck and `sniff tournament --adjust-luck`: the figures each command shows
agree with each other, with the stored events, and with the luck module itself."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analysis.bot_matches import bot_records
from analysis.cli.main import cli
from analysis.rollout.luck import LuckSettings, match_luck
from analysis.rollout.source import specs_from_records


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def json_of(*args: str) -> dict[str, Any]:
    code, out, err = run(*args, "--format", "json")
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


@pytest.fixture
def records(tmp_path: Path) -> Path:
    path = tmp_path / "m.jsonl"
    lines = [json.dumps(r) for r in bot_records(2, 2, 9, ("greedy", "random"), round_limit=2)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_analyze_reports_each_seat_s_luck_skill_and_adjusted_result(records: Path) -> None:
    doc = json_of(
        "analyze", "--records", str(records), "--rollouts", "8", "--luck-rollouts", "30",
        "--workers", "1", "--seed", "5",
    )  # fmt: skip
    luck = doc["luck"]
    assert luck["rollouts"] == 30
    specs = specs_from_records(records)
    for spec in specs:
        direct = match_luck(spec, LuckSettings(30, "greedy", 5))
        rows = [r for r in luck["seats"] if r["match_id"] == spec.match_id]
        assert [r["seat"] for r in rows] == list(range(spec.seats))
        for row, total in zip(rows, direct.totals, strict=True):
            assert row["luck"] == pytest.approx(total.net)
            assert row["luck_se"] == pytest.approx(total.net_se)
            assert row["result"] == pytest.approx(total.result)
            assert row["adjusted"] == pytest.approx(total.result - total.net)
            mine = [
                d
                for d in doc["decisions"]
                if d["match_id"] == spec.match_id and d["seat"] == row["seat"]
            ]
            assert row["decisions"] == len(mine) > 0
            assert row["lost"] == pytest.approx(sum(d["loss"] for d in mine))
            assert row["lost_se"] == pytest.approx(math.sqrt(sum(d["loss_se"] ** 2 for d in mine)))
        events = [e for e in luck["events"] if e["match_id"] == spec.match_id]
        assert events == [e.to_json() for e in direct.events]
    # The stored events are the ones shown, queried through the view `luck`.
    code, out, err = run(
        "analysis", "--records", str(records), "--format", "json",
        "SELECT count(*) AS n, sum(luck) AS total FROM luck WHERE rollouts = 30",
    )  # fmt: skip
    assert code == 0, err
    (stored,) = json.loads(out)
    assert stored["n"] == len(luck["events"])
    assert stored["total"] == pytest.approx(sum(e["luck"] for e in luck["events"]))


def test_no_luck_leaves_it_out_and_stores_none(records: Path) -> None:
    doc = json_of(
        "analyze", "--records", str(records), "--rollouts", "4", "--no-luck", "--workers", "1"
    )
    assert "luck" not in doc
    assert not (records.parent / "m.jsonl.analysis" / "luck").exists()
    code, out, _ = run("analyze", "--records", str(records), "--rollouts", "4", "--no-store")
    assert code == 0
    assert "luck-adjusted result" in out


def test_tournament_adjusted_results_are_the_matches_results_less_their_logged_luck(
    tmp_path: Path,
) -> None:
    """The tournament's adjusted figures, recomputed from `sniff analyze` of its logged
    matches (another read of the same facts: the log, not the tournament's own table)."""
    db = str(tmp_path / "t.duckdb")
    base = ["--bots", "greedy,random", "--deals", "4", "--round-limit", "1", "--target", "10000"]
    doc = json_of("tournament", *base, "--adjust-luck", "--luck-rollouts", "20", "--db", db)
    adjusted = doc["luck_adjusted"]
    assert adjusted["rollouts"] == 20
    assert [r["bot"] for r in adjusted["results"]] == ["greedy", "random"]
    tid = doc["tournament"]
    ids = [f"{tid}-d{d}-r{r}" for d in range(4) for r in range(2)]
    analysed = json_of(
        "analyze", *ids, "--rollouts", "2", "--luck-rollouts", "20", "--no-store", "--db", db
    )
    seats = {(r["match_id"], r["seat"]): r for r in analysed["luck"]["seats"]}
    per_deal = []
    for d in range(4):
        values = []
        for r in range(2):
            match_id = f"{tid}-d{d}-r{r}"
            seat = 0 if r == 0 else 1  # greedy sits at seat r's rotation: seat (0 - r) mod 2
            row = seats[(match_id, seat)]
            values.append(row["result"] - row["luck"])
        per_deal.append(statistics.fmean(values))
    greedy = adjusted["results"][0]
    assert greedy["mean"] == pytest.approx(statistics.fmean(per_deal), abs=1e-3)
    raw = doc["results"][0]["mean"]
    assert greedy["mean"] != raw


@pytest.mark.slow
def test_luck_adjusted_results_vary_less_than_raw_ones_in_a_tournament_of_fixed_seed(
    tmp_path: Path,
) -> None:
    doc = json_of(
        "tournament", "--bots", "greedy,random", "--deals", "100", "--round-limit", "1",
        "--target", "10000", "--seed", "7", "--adjust-luck", "--luck-rollouts", "200",
        "--db", str(tmp_path / "t.duckdb"),
    )  # fmt: skip
    greedy = doc["luck_adjusted"]["results"][0]
    assert greedy["match_variance_ratio"] > 1.0

"""`sniff stats players` (#20, performance): each player's rating, error rate and accuracy over
the decisions `sniff analyze` stored, per phase of play, with intervals clustered by match;
the figures are those of the stored decisions, recomputed here."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from analysis.bot_matches import bot_records
from analysis.cli.main import cli
from analysis.rollout.analyze import PHASES, phase_of
from analysis.stats.tdist import t975
from sniff import Match, Phase, make_bot, view


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("players") / "m.jsonl"
    records = bot_records(2, 6, 21, ("greedy", "random"), round_limit=2)
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    code, _, err = run("analyze", "--records", str(path), "--rollouts", "8", "--format", "csv")
    assert code == 0, err
    return path


def stored(path: Path) -> list[dict[str, Any]]:
    files = sorted(Path(str(path) + ".analysis").glob("decisions/*/*.parquet"))
    with duckdb.connect() as con:
        rel = con.read_parquet([str(f) for f in files], union_by_name=True)
        names = rel.columns
        return [dict(zip(names, row, strict=True)) for row in rel.fetchall()]


def test_the_figures_are_those_of_the_stored_decisions(analysed: Path) -> None:
    code, out, err = run("stats", "players", "--records", str(analysed), "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    decisions = stored(analysed)
    for row in rows:
        mine = [
            d
            for d in decisions
            if d["player"] == row["player"] and row["phase"] in ("all", d["phase"])
        ]
        assert row["decisions"] == len(mine)
        assert row["matches"] == len({d["match_id"] for d in mine})
        assert row["rating"] == pytest.approx(100 * sum(d["loss"] for d in mine) / len(mine))
        assert row["error_rate"] == pytest.approx(sum(d["error"] for d in mine) / len(mine))
        assert row["accuracy"] == pytest.approx(sum(d["loss"] == 0 for d in mine) / len(mine))
        assert row["exact"] == sum(d["exact"] for d in mine)
        if row["matches"] >= 2:
            assert row["rating_low"] <= row["rating"] <= row["rating_high"]
    players = {r["player"] for r in rows}
    assert players == {"greedy", "random"}
    for player in players:
        phases = {r["phase"] for r in rows if r["player"] == player}
        assert "all" in phases
        assert phases - {"all"} <= set(PHASES)
        total = next(r for r in rows if r["player"] == player and r["phase"] == "all")
        parts = [r for r in rows if r["player"] == player and r["phase"] != "all"]
        assert total["decisions"] == sum(r["decisions"] for r in parts)


def test_the_interval_is_clustered_by_match(analysed: Path) -> None:
    code, out, _ = run("stats", "players", "--records", str(analysed), "--format", "json")
    assert code == 0
    row = next(r for r in json.loads(out) if r["player"] == "random" and r["phase"] == "all")
    by_match: dict[str, list[float]] = {}
    for d in stored(analysed):
        if d["player"] == "random":
            by_match.setdefault(d["match_id"], []).append(100 * d["loss"])
    sums = [sum(v) for v in by_match.values()]
    counts = [len(v) for v in by_match.values()]
    mean = sum(sums) / sum(counts)
    k = len(counts)
    var = sum((s - mean * c) ** 2 for s, c in zip(sums, counts, strict=True))
    half = t975(k - 1) * math.sqrt(k / (k - 1) * var) / sum(counts)
    assert row["rating_low"] == pytest.approx(mean - half)
    assert row["rating_high"] == pytest.approx(mean + half)


def test_every_phase_is_told_from_the_view() -> None:
    seen = set()
    for seed in range(1, 20):
        match = Match(2, seed=seed, round_limit=2)
        bots = [make_bot("random", seed * 10 + s) for s in range(2)]
        while match.phase is not Phase.OVER:
            if match.phase is Phase.AWAITING_DEAL:
                match.deal()
                continue
            v = view(match, match.turn)
            phase = phase_of(v)
            seen.add(phase)
            if phase == "lead":
                assert not match.layout.placements
            elif phase == "sniff":
                assert match.layout.sniff < 0
            else:
                assert (phase == "open") == (match.boneyard_left > 0)
            match.apply(bots[match.turn].choose(v))
    assert seen == set(PHASES)


def test_bad_input_is_one_line(analysed: Path, tmp_path: Path) -> None:
    code, _, err = run("stats", "players", "--records", str(tmp_path / "none.jsonl"))
    assert code == 2
    assert err.startswith("Error: no analysis is stored")
    code, _, err = run("stats", "players", "--records", str(analysed), "--run", "x")
    assert code == 2
    assert "leave out --records" in err
    code, _, err = run("stats", "players", "--records", str(analysed), "--rollouts", "3")
    assert code == 2
    assert "no stored analysis has these settings" in err


def test_run_and_since_select_matches_of_the_log(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    for run_id, seed in (("first", 1), ("second", 50)):
        code, _, err = run(
            "simulate", "--db", str(db), "--events", "--matches", "2", "--seats", "2",
            "--round-limit", "1", "--seed", str(seed), "--run", run_id, "--workers", "1",
        )  # fmt: skip
        assert code == 0, err
    ids = [f"{r}-{i:08d}" for r in ("first", "second") for i in range(2)]
    code, _, err = run("analyze", *ids, "--db", str(db), "--rollouts", "4", "--format", "csv")
    assert code == 0, err
    code, out, err = run("stats", "players", "--db", str(db), "--run", "first", "--format", "json")
    assert code == 0, err
    first = {r["player"]: r for r in json.loads(out) if r["phase"] == "all"}
    code, out, err = run("stats", "players", "--db", str(db), "--format", "json")
    assert code == 0, err
    both = {r["player"]: r for r in json.loads(out) if r["phase"] == "all"}
    decisions = stored(db)
    for player, row in first.items():
        mine = [d for d in decisions if d["player"] == player and d["match_id"].startswith("first")]
        assert row["decisions"] == len(mine)
        assert row["matches"] == 2
        assert both[player]["decisions"] > row["decisions"]
    code, out, err = run("stats", "players", "--db", str(db), "--since", "2000-01-01")
    assert code == 0, err
    code, _, err = run("stats", "players", "--db", str(db), "--since", "2999-01-01")
    assert code == 2
    assert "no match of the log is selected" in err

"""`sniff stats sniff-timing --counterfactual`: rollout gains at the Sniff decisions."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from analysis.bot_matches import bot_match
from analysis.cli.main import cli
from analysis.stats.counterfactual import all_gains, bucket, clustered, match_gains
from analysis.stats.tdist import t975
from sniff import Move, to_record
from sniff.facts import replayed_rounds
from sniff.tiles import IS_DOUBLE
from tests.helpers import need


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cf") / "m.jsonl"
    lines = [
        json.dumps(to_record(bot_match(seats, 50 + seats, ("greedy", "random"), round_limit=3),
                             f"m{seats}", players=["greedy", "random", "greedy", "random"][:seats]))
        for seats in (2, 3, 4)
    ]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_gain_for_every_sniff_decision_and_equities_that_add_up() -> None:
    match = bot_match(2, 9, ("greedy", "random"), round_limit=2)
    gains = match_gains(match, "m", rollouts=20, seed=1)
    expected = [
        (f.round, d.placement_index, d.seat) for f in replayed_rounds(match) for d in f.decisions
    ]
    got = [(g.round, g.placement_index, g.seat) for g in gains]
    assert set(expected) <= set(got)
    assert got
    for g in gains:
        assert g.gain == pytest.approx(g.sniff_equity - g.other_equity, abs=1e-9)
        assert g.gain_se >= 0
        sniff, other = Move.parse(g.best_sniff).tile, Move.parse(g.best_other).tile
        assert sniff is not None
        assert other is not None
        assert IS_DOUBLE[sniff]
        assert not IS_DOUBLE[other]
    assert match_gains(match, "m", rollouts=20, seed=1) == gains
    assert match_gains(match, "m", rollouts=20, seed=2) != gains


@pytest.mark.slow
def test_gains_do_not_depend_on_the_workers() -> None:
    matches = [
        (bot_match(s, 20 + s, ("greedy", "random"), round_limit=2), f"m{s}", None)
        for s in (2, 3, 4)
    ]
    one = all_gains(matches, rollouts=10, seed=3, workers=1)
    two = all_gains(list(reversed(matches)), rollouts=10, seed=3, workers=2)
    assert one == two


def test_clustered_interval_on_a_known_case() -> None:
    mean, low, high = clustered([("a", 1.0), ("a", 3.0), ("b", 5.0), ("c", 7.0)])
    # residual sums per cluster -4, 1, 3: var = 3/2 * 26 / 16
    half = t975(2) * math.sqrt(1.5 * 26 / 16)
    assert mean == 4.0
    assert low == pytest.approx(4.0 - half)
    assert high == pytest.approx(4.0 + half)
    assert clustered([("a", 1.0), ("a", 2.0)]) == (1.5, None, None)


@pytest.mark.slow
def test_counterfactual_lines_up_with_the_observed_rows(records: Path, tmp_path: Path) -> None:
    need("matplotlib", "pip install -e '.[plot]'")
    decisions = tmp_path / "d.csv"
    plot = tmp_path / "t.png"
    code, out, err = run(
        "stats", "sniff-timing", "--records", str(records), "--counterfactual",
        "--rollouts", "8", "--format", "csv", "--workers", "1",
        "--decisions", str(decisions), "--plot", str(plot),
    )  # fmt: skip
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows
    assert list(rows[0])[-5:] == ["cf_n", "cf_gain", "cf_ci_low", "cf_ci_high", "cf_agree"]
    holding = [r for r in rows if r["statistic"] == "holding"]
    assert holding
    for r in holding:  # the same decisions: the same n
        assert r["cf_n"] == r["n"]
        assert 0.0 <= float(r["cf_agree"]) <= 1.0
    listed = list(csv.DictReader(decisions.open()))
    total = sum(int(r["n"]) for r in holding if r["factor"] == "all" and "/" not in r["cell"]
                and r["seats"] == "all")  # fmt: skip
    assert len(listed) == total
    timing_all = [r for r in rows if r["statistic"] == "timing" and r["factor"] == "all"
                  and r["seats"] == "all" and r["cell"] != "none"]  # fmt: skip
    # A timing row takes every decision at its bucket; a bucket at which no round's Sniff
    # was made has no row (only cells with n >= 1 are rows), so its decisions are in none.
    observed = {r["cell"] for r in timing_all}
    at_observed = sum(1 for r in listed if bucket(int(r["placement_index"])) in observed)
    assert sum(int(r["cf_n"] or 0) for r in timing_all) == at_observed
    assert plot.stat().st_size > 0
    code, out2, _ = run(
        "stats", "sniff-timing", "--records", str(records), "--counterfactual",
        "--rollouts", "8", "--format", "csv", "--workers", "2",
    )  # fmt: skip
    assert code == 0
    assert out2 == out


def test_counterfactual_misuse_is_one_line(records: Path, tmp_path: Path) -> None:
    code, _, err = run("stats", "sniff-timing", "--facts", str(tmp_path), "--counterfactual")
    assert code == 2
    assert "--counterfactual replays" in err
    code, _, err = run("stats", "sniff-timing", "--records", str(records), "--decisions", "x.csv")
    assert code == 2
    assert "add --counterfactual" in err

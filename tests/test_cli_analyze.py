"""`sniff analyze` and `sniff analysis`: per-move equity of logged or recorded matches, stored as
Parquet beside the log, through click's CliRunner and as real subprocesses."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analysis.bot_matches import bot_records
from analysis.cli.main import cli
from analysis.remote import connect, play_remote_match
from analysis.rollout.analyze import DECISION_COLUMNS, ERROR_SE, LARGE_LOSS
from analysis.rollout.store import store_root
from sniff import Match, Move, Phase, make_bot, replay, to_record, view
from tests.replay_helpers import sample_log
from tests.service_helpers import Served

SNIFF = [sys.executable, "-m", "analysis.cli"]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_log(tmp_path_factory.mktemp("log") / "log.duckdb")


@pytest.fixture
def records(tmp_path: Path) -> Path:
    path = tmp_path / "m.jsonl"
    lines = [json.dumps(r) for r in bot_records(3, 2, 5, ("greedy", "random"), round_limit=2)]
    path.write_text("\n".join(lines) + "\n")
    return path


def analysed(*args: str) -> dict[str, Any]:
    code, out, err = run("analyze", *args, "--format", "json")
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def positions_of(match: Match) -> list[tuple[int, int, int, list[Move], Move]]:
    """(round, action, seat, legal moves, move played) at every action of a finished match,
    rebuilt from its history through the engine."""
    rebuilt = Match(
        match.seats,
        target=match.target,
        variant=match.variant,
        auto_deal=False,
        round_limit=match.round_limit,
    )
    out = []
    for r, log in enumerate(match.history):
        rebuilt.deal(log.deal)
        for k, move in enumerate(log.actions):
            out.append((r, k, rebuilt.turn, rebuilt.legal_moves(), move))
            rebuilt.apply(move)
    return out


def test_every_decision_of_a_record_is_analysed_with_every_legal_move(records: Path) -> None:
    doc = analysed("--records", str(records), "--rollouts", "12", "--workers", "1", "--no-store")
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    decisions = doc["decisions"]
    expected = []
    for rec in lines:
        for r, k, seat, options, move in positions_of(replay(rec)):
            if len(options) > 1:
                expected.append((rec["id"], r, k, seat, [str(m) for m in options], str(move)))
    assert len(decisions) == len(expected) > 20
    players = {rec["id"]: rec["players"] for rec in lines}
    for d, (match_id, r, k, seat, legal, played) in zip(decisions, expected, strict=True):
        assert (d["match_id"], d["round"], d["action"], d["seat"]) == (match_id, r, k, seat)
        assert d["player"] == players[match_id][seat]
        assert d["played"] == played
        assert sorted(m["move"] for m in d["moves"]) == sorted(legal)
        assert d["legal"] == len(legal)
        moves = d["moves"]
        assert [m["rank"] for m in moves] == list(range(1, len(moves) + 1))
        assert [m["equity"] for m in moves] == sorted((m["equity"] for m in moves), reverse=True)
        assert moves[0]["move"] == d["best"]
        assert moves[0]["loss"] == 0
        mine = next(m for m in moves if m["played"])
        assert mine["move"] == played
        assert math.isclose(d["loss"], mine["loss"])
        assert math.isclose(d["best_equity"] - d["played_equity"], d["loss"], abs_tol=1e-9)
        assert d["error"] == (d["loss"] > 0 and d["loss"] > ERROR_SE * d["loss_se"])
        assert d["large"] == (d["error"] and d["loss"] > LARGE_LOSS)
    # Per player: the decisions' own figures summed.
    for p in doc["players"]:
        mine = [d for d in decisions if d["player"] == p["player"]]
        assert p["decisions"] == len(mine)
        assert math.isclose(p["total_loss"], sum(d["loss"] for d in mine))
        assert math.isclose(p["mean_loss"], p["total_loss"] / len(mine))
        assert p["errors"] == sum(d["error"] for d in mine)
        assert p["large"] == sum(d["large"] for d in mine)
    assert {p["player"] for p in doc["players"]} == {"greedy", "random"}


@pytest.mark.slow
def test_one_seat_and_any_number_of_workers_give_the_same_figures(records: Path) -> None:
    base = ["--records", str(records), "--rollouts", "10", "--seed", "3", "--no-store"]
    whole = analysed(*base, "--workers", "1")
    assert analysed(*base, "--workers", "2") == whole
    seat1 = analysed(*base, "--workers", "2", "--seat", "1")
    assert seat1["decisions"] == [d for d in whole["decisions"] if d["seat"] == 1]
    other_seed = analysed(*base[:-3], "--seed", "4", "--no-store", "--workers", "1")
    assert other_seed["decisions"] != whole["decisions"]


@pytest.mark.slow
def test_the_log_s_finished_matches_are_analysed_and_stored_once_per_key(db: Path) -> None:
    doc = analysed("two-seats", "position-a", "--db", str(db), "--rollouts", "8")
    assert doc["matches"] == ["two-seats", "position-a"]
    assert {d["match_id"] for d in doc["decisions"]} == {"two-seats", "position-a"}
    root = store_root(db)
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.parquet"))
    assert files == sorted(
        [
            f"{table}/{m}/rollouts-8_greedy_seed-0_seat-{s}.parquet"
            for table in ("decisions", "moves")
            for m in ("two-seats", "position-a")
            for s in (0, 1)
        ]
        + [f"luck/{m}/rollouts-400_greedy_seed-0.parquet" for m in ("two-seats", "position-a")]
    )
    count_sql = (
        "SELECT count(*) AS n, count(DISTINCT (match_id, round, action)) AS d FROM decisions"
    )
    code, out, _ = run("analysis", count_sql, "--db", str(db), "--format", "jsonl")
    assert code == 0
    assert json.loads(out) == {"n": len(doc["decisions"]), "d": len(doc["decisions"])}
    # The same key again replaces; another seed sits beside it.
    assert analysed("two-seats", "--db", str(db), "--rollouts", "8") is not None
    code, out, _ = run("analysis", count_sql, "--db", str(db), "--format", "jsonl")
    assert json.loads(out)["n"] == len(doc["decisions"])
    analysed("two-seats", "--db", str(db), "--rollouts", "8", "--seed", "1")
    code, out, _ = run(
        "analysis",
        "SELECT seed, count(*) AS n FROM decisions WHERE match_id = ? GROUP BY seed ORDER BY seed",
        "-p",
        "two-seats",
        "--db",
        str(db),
        "--format",
        "csv",
    )
    rows = list(csv.DictReader(io.StringIO(out)))
    two = [d for d in doc["decisions"] if d["match_id"] == "two-seats"]
    assert rows == [{"seed": "0", "n": str(len(two))}, {"seed": "1", "n": str(len(two))}]
    # Every legal move of every decision is a row of `moves`, the played one marked.
    code, out, _ = run(
        "analysis",
        "SELECT count(*) AS moves, count(*) FILTER (WHERE played) AS played FROM moves "
        "WHERE seed = 0 AND match_id = 'position-a'",
        "--db",
        str(db),
        "--format",
        "jsonl",
    )
    position_a = [d for d in doc["decisions"] if d["match_id"] == "position-a"]
    assert json.loads(out) == {
        "moves": sum(d["legal"] for d in position_a),
        "played": len(position_a),
    }


def test_csv_and_table_show_one_row_a_decision(records: Path) -> None:
    base = ["analyze", "--records", str(records), "--rollouts", "6", "--no-store", "--workers", "1"]
    code, out, _ = run(*base, "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == list(DECISION_COLUMNS)
    code, table, _ = run(*base)
    assert code == 0
    assert f"({len(rows)} rows)" in table
    assert "error rate" in table


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["in-play"], "still in play"),
        (["no-such-match"], "no match"),
        (["two-seats", "--seat", "2"], "seats 0 to 1"),
        ([], "name the matches"),
        (["two-seats", "--records", "x.jsonl"], "not both"),
        (["two-seats", "--rollouts", "0"], "--rollouts"),
        (["two-seats", "--rollouts", "100001"], "--rollouts"),
        (["two-seats", "--bot", "rollout"], "--bot"),
    ],
)
def test_what_cannot_be_analysed_is_one_line_exit_2_and_nothing_stored(
    tmp_path: Path, args: list[str], words: str
) -> None:
    db = sample_log(tmp_path / "log.duckdb")
    code, out, err = run("analyze", *args, "--db", str(db))
    assert code == 2, (out, err)
    assert words in err
    assert "Traceback" not in err
    assert not store_root(db).exists()


def test_a_records_file_that_does_not_replay_is_refused_before_anything_is_analysed(
    tmp_path: Path, records: Path
) -> None:
    lines = records.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["rounds"][0]["actions"][3] = "6-6"
    broken = tmp_path / "broken.jsonl"
    broken.write_text(lines[0] + "\n" + json.dumps(bad) + "\n")
    for path, words in ((broken, "line 2"), (tmp_path / "none.jsonl", "cannot read")):
        code, _, err = run("analyze", "--records", str(path), "--rollouts", "4")
        assert code == 2
        assert words in err
        assert not store_root(path).exists()
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("{not json\n")
    code, _, err = run("analyze", "--records", str(garbage))
    assert code == 2
    assert "line 1: not JSON" in err


def test_analysis_without_stored_results_is_misuse(tmp_path: Path) -> None:
    code, _, err = run("analysis", "SELECT 1", "--db", str(tmp_path / "x.duckdb"))
    assert code == 2
    assert "no analysis is stored" in err


@pytest.mark.slow
def test_analyze_reads_the_log_through_a_live_service(served: Served) -> None:
    proc, address, db = served
    played = play_remote_match(connect(address), 2, ["greedy", "random"], seed=8, round_limit=1)
    done = subprocess.run(
        [
            *SNIFF,
            "analyze",
            played.match_id,
            "--db",
            str(db),
            "--rollouts",
            "6",
            "--format",
            "json",
            "--workers",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["decisions"]
    assert all(d["match_id"] == played.match_id for d in doc["decisions"])
    assert proc.poll() is None  # the service still holds the log, untouched
    assert list(store_root(db).rglob("*.parquet"))


def test_every_decision_is_analysed_from_the_mover_s_view() -> None:
    """The positions analysed are exactly the mover's views (the analysis never sees more)."""
    from analysis.rollout.analyze import decisions_of
    from analysis.rollout.source import spec_from_record

    match = Match(4, seed=3, round_limit=1)
    bots = [make_bot("greedy", s) for s in range(4)]
    while match.phase is Phase.PLAYING:
        match.apply(bots[match.turn].choose(view(match, match.turn)))
    spec = spec_from_record(to_record(match, "m"), "m")
    for decision in decisions_of(spec):
        assert decision.view.viewer == decision.seat == decision.view.turn
        assert decision.view.hands is None
        assert decision.view.boneyard is None

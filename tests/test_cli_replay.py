"""`sniff matches` and `sniff replay`: through click's CliRunner, as real subprocesses, and
beside a live `sniff serve` that holds the log."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from analysis.cli.main import cli
from analysis.remote import connect, play_remote_match
from tests.replay_helpers import POSITION_A_MOVES, sample_log
from tests.service_helpers import Served

SNIFF = [sys.executable, "-m", "analysis.cli"]
SVG = "{http://www.w3.org/2000/svg}"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def sniff(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SNIFF, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_log(tmp_path_factory.mktemp("log") / "log.duckdb")


def jsonl(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


# -- sniff matches ----------------------------------------------------------------------------


@pytest.mark.slow
def test_matches_lists_every_match_newest_first_with_its_result(db: Path) -> None:
    code, out, _ = run("matches", "--db", str(db), "--format", "jsonl")
    assert code == 0
    rows = jsonl(out)
    assert [r["match_id"] for r in rows] == [
        "in-play",
        "four-seats",
        "three-seats",
        "two-seats",
        "position-a",
    ]
    by_id = {r["match_id"]: r for r in rows}
    assert by_id["in-play"]["finished"] is False
    assert by_id["in-play"]["winners"] is None
    assert by_id["four-seats"]["seats"] == 4
    assert by_id["position-a"]["variant"] == "american"
    for r in rows:
        assert r["rounds"] >= 1
        if r["finished"]:
            assert len(r["scores"]) == r["seats"]
            assert max(r["scores"]) == r["scores"][r["winners"][0]]


@pytest.mark.slow
def test_matches_rounds_count_the_logged_deals(db: Path) -> None:
    con = duckdb.connect(str(db), read_only=True)
    expected = dict(con.execute("SELECT match_id, count(*) FROM deals GROUP BY ALL").fetchall())
    con.close()
    _, out, _ = run("matches", "--db", str(db), "--format", "jsonl")
    assert {r["match_id"]: r["rounds"] for r in jsonl(out)} == expected


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--seats", "3"], {"three-seats", "in-play"}),
        (["--finished"], {"four-seats", "three-seats", "two-seats", "position-a"}),
        (["--unfinished"], {"in-play"}),
        (["--seats", "3", "--finished"], {"three-seats"}),
        (["--limit", "2"], {"in-play", "four-seats"}),
        (["--limit", "0"], {"in-play", "four-seats", "three-seats", "two-seats", "position-a"}),
    ],
)
def test_matches_filters(db: Path, args: list[str], expected: set[str]) -> None:
    code, out, _ = run("matches", "--db", str(db), "--format", "jsonl", *args)
    assert code == 0
    assert {r["match_id"] for r in jsonl(out)} == expected


@pytest.mark.slow
def test_matches_winner_filter_takes_either_partner_in_a_four_seat_match(db: Path) -> None:
    _, out, _ = run("matches", "--db", str(db), "--format", "jsonl")
    four = next(r for r in jsonl(out) if r["match_id"] == "four-seats")
    assert four["winners"] in ([0, 2], [1, 3])  # the partnership, as the table shows it
    for seat in four["winners"]:
        _, out, _ = run("matches", "--db", str(db), "--format", "jsonl", "--winner", str(seat))
        assert "four-seats" in {r["match_id"] for r in jsonl(out)}
    _, out, _ = run(
        "matches", "--db", str(db), "--format", "jsonl", "--winner", "3", "--seats", "2"
    )
    assert jsonl(out) == []  # a two-seat match has no seat 3


@pytest.mark.slow
def test_matches_since_and_until_take_dates_and_timestamps(db: Path) -> None:
    today = datetime.now(UTC).date()
    for args, count in [
        (["--since", today.isoformat()], 5),
        (["--until", (today - timedelta(days=1)).isoformat()], 0),
        (["--until", today.isoformat()], 5),  # a bare date keeps that whole day
        (["--since", (datetime.now(UTC) + timedelta(hours=1)).isoformat()], 0),
        (["--since", "2000-01-01T00:00:00Z", "--until", "2999-01-01 00:00"], 5),
    ]:
        code, out, err = run("matches", "--db", str(db), "--format", "jsonl", *args)
        assert code == 0, err
        assert len(jsonl(out)) == count, args


def test_matches_table_and_csv_show_the_same_matches(db: Path) -> None:
    _, table, _ = run("matches", "--db", str(db))
    lines = table.splitlines()
    assert lines[0].split() == [
        "match_id",
        "seats",
        "variant",
        "created",
        "rounds",
        "finished",
        "winners",
        "scores",
    ]
    assert lines[-1] == "(5 matches)"
    assert re.search(r"^four-seats\s+4\s+american\s+\d{4}-\d\d-\d\d", table, re.M)
    _, text, _ = run("matches", "--db", str(db), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["match_id"] for r in rows] == [line.split()[0] for line in lines[1:-1]]
    assert {r["finished"] for r in rows} == {"true", "false"}  # as `sniff query --format csv`
    for r, line in zip(rows, lines[1:-1], strict=True):  # lists as JSON, as query's csv
        if r["scores"]:
            scores = json.loads(r["scores"])
            assert scores == [int(s) for s in line.split()[-len(scores) :]]
            assert "+".join(map(str, json.loads(r["winners"]))) in line.split()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "yesterday"], "--since: 'yesterday' is not a date"),
        (["--until", "2025-13-01"], "--until: '2025-13-01' is not a date"),
    ],
)
def test_matches_refuses_a_bad_date_in_one_line(db: Path, args: list[str], message: str) -> None:
    done = sniff("matches", "--db", str(db), *args)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"Error: {message}")


@pytest.mark.slow
def test_missing_file_and_foreign_files_are_one_line_errors_exit_2(tmp_path: Path) -> None:
    text_file = tmp_path / "notes.duckdb"
    text_file.write_text("not a database\n")
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.close()
    for path, words in [
        (tmp_path / "missing.duckdb", "no event log"),
        (text_file, "cannot open"),
        (other, "not an American Sniff event log"),
    ]:
        for command in (["matches"], ["replay", "0123456789abcdef"]):
            done = sniff(*command, "--db", str(path), cwd=tmp_path)
            assert done.returncode == 2, (command, path, done.stderr)
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1, done.stderr
            assert words in lines[0]
    assert not (tmp_path / "missing.duckdb").exists()


# -- sniff replay -----------------------------------------------------------------------------


@pytest.mark.slow
def test_replay_of_an_unknown_match_is_one_line_exit_2(db: Path) -> None:
    done = sniff("replay", "no-such-match", "--db", str(db))
    assert done.returncode == 2
    assert done.stderr.strip() == f"Error: no match 'no-such-match' in {db}"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--at", "100000"], "has actions 0 to"),
        (["--round", "99"], "has rounds 0 to"),
        (["--at", "3", "--round", "0"], "not both"),
    ],
)
def test_replay_refuses_steps_the_match_does_not_have(
    db: Path, args: list[str], words: str
) -> None:
    code, _, err = run("replay", "position-a", "--db", str(db), *args)
    assert code == 2
    assert words in err
    assert len(err.strip().splitlines()) == 1


def test_replay_text_shows_every_move_with_its_layout_and_figures(db: Path) -> None:
    code, out, _ = run("replay", "position-a", "--db", str(db), "--round", "0")
    assert code == 0
    assert out.startswith("match position-a: 2 seats, american, target 250")
    assert "== round 0: seat 0 leads (explicit)" in out
    for n, move in enumerate(POSITION_A_MOVES):
        assert f"step {n} (round 0, action {n}) · seat {n % 2} plays {move}" in out
    assert re.search(r"== round 0 ends, (domino by seat \d|blocked): pips \[", out)
    assert "seat 0 holds" not in out  # hands only with --reveal


@pytest.mark.slow
def test_replay_hides_drawn_tiles_unless_revealed(db: Path) -> None:
    _, out, _ = run("replay", "two-seats", "--db", str(db), "--format", "jsonl")
    draws = [s for s in jsonl(out) if s["kind"] == "draw"]
    assert draws
    assert all(s["drawn"] is None for s in draws)
    _, text, _ = run("replay", "two-seats", "--db", str(db))
    assert "draws (tile hidden)" in text
    _, out, _ = run("replay", "two-seats", "--db", str(db), "--format", "jsonl", "--reveal")
    revealed = [s for s in jsonl(out) if s["kind"] == "draw"]
    assert all(re.fullmatch(r"\d-\d", str(s["drawn"])) for s in revealed)
    firsts = [s for s in jsonl(out) if "round_start" in s]
    assert all(len(s["round_start"]["hands"]) == 2 for s in firsts)


def test_reveal_of_a_match_in_play_says_the_tiles_stay_hidden(db: Path) -> None:
    code, out, _ = run("replay", "in-play", "--db", str(db), "--reveal")
    assert code == 0
    assert "note: drawn tiles and deals stay hidden while the match is in play" in out
    assert "holds" not in out
    _, out, _ = run("replay", "in-play", "--db", str(db), "--reveal", "--format", "jsonl")
    assert all(s.get("drawn") is None for s in jsonl(out))


@pytest.mark.slow
def test_replay_json_has_one_object_per_action_with_the_steps_figures(db: Path) -> None:
    con = duckdb.connect(str(db), read_only=True)
    actions = con.execute(
        "SELECT move, points, ends_sum FROM actions WHERE match_id = 'three-seats' ORDER BY seq"
    ).fetchall()
    ends = con.execute(
        "SELECT round, pips, deductions, scores FROM round_ends"
        " WHERE match_id = 'three-seats' ORDER BY seq"
    ).fetchall()
    con.close()
    _, out, _ = run("replay", "three-seats", "--db", str(db), "--format", "jsonl")
    steps = jsonl(out)
    assert [s["step"] for s in steps] == list(range(len(actions)))
    for s, (move, points, ends_sum) in zip(steps, actions, strict=True):
        assert s["move"] == move
        if s["kind"] in ("lead", "place"):
            assert (s["points"], s["ends_sum"]) == (points, ends_sum)
            assert s["ends_sum"] == sum(c["value"] for c in s["counted_ends"])
        assert set(s) >= {"round", "action", "seat", "open_sides", "counted_ends", "scores"}
    logged_ends = [s["round_end"] for s in steps if "round_end" in s]
    assert [(e["round"], e["pips"], e["deductions"], e["scores"]) for e in logged_ends] == [
        tuple(row) for row in ends
    ]
    assert steps[-1]["winner"] is not None


@pytest.mark.slow
def test_replay_at_shows_one_position_in_full_and_the_tally(db: Path) -> None:
    code, out, _ = run("replay", "position-a", "--db", str(db), "--at", "8", "--tally")
    assert code == 0
    assert "step 8 (round 0, action 8) · seat 0 plays 1-3@1-1:branch_b" in out
    assert "counted: 0-5:low 0 + 1-2:high 2 + 1-3:high 3 + 3-4:low 3 = 8 -> 0 points" in out
    assert "tally (each stroke 5, a large X with four small x 50):" in out
    assert "seat 0: 15" in out
    _, out, _ = run("replay", "position-a", "--db", str(db), "--at", "8", "--format", "jsonl")
    assert [s["step"] for s in jsonl(out)] == [8]


@pytest.mark.slow
def test_replay_svg_draws_every_tile_with_its_pips_and_the_markers(
    db: Path, tmp_path: Path
) -> None:
    path = tmp_path / "a.svg"
    code, _, err = run("replay", "position-a", "--db", str(db), "--svg", str(path), "--at", "8")
    assert code == 0, err
    root = ET.parse(path).getroot()
    tiles = {g.get("data-tile"): g for g in root.iter(f"{SVG}g") if g.get("data-tile")}
    assert set(tiles) == {m.partition("@")[0] for m in POSITION_A_MOVES}
    for name, g in tiles.items():
        pips = sorted(int(u.get("data-pips", "-1")) for u in g.iter(f"{SVG}use"))
        assert pips == sorted(int(x) for x in name.split("-"))  # type: ignore[union-attr]
    opened = {(g.get("data-open"), g.get("data-value")) for g in root.iter(f"{SVG}g")}
    assert {o for o in opened if o[0]} == {
        ("0-5:low", "0"),
        ("1-2:high", "2"),
        ("1-3:high", "3"),
        ("3-4:low", "3"),
    }
    text = path.read_text()
    assert 'id="ends-sum" data-value="8"' in text
    assert 'data-seat="0" data-score="15"' in text


@pytest.mark.slow
def test_replay_html_is_one_self_contained_page(db: Path, tmp_path: Path) -> None:
    path = tmp_path / "m.html"
    code, _, _ = run("replay", "four-seats", "--db", str(db), "--html", str(path))
    assert code == 0
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page
    assert "<script src" not in page
    assert len(page) < 400_000


@pytest.mark.slow
def test_unwritable_output_is_one_line_exit_2_and_writes_nothing(db: Path, tmp_path: Path) -> None:
    target = tmp_path / "no-such-dir" / "a.svg"
    code, _, err = run("replay", "position-a", "--db", str(db), "--svg", str(target))
    assert code == 2
    assert err.startswith("Error: cannot write")
    assert not target.parent.exists()


# -- beside a live service --------------------------------------------------------------------


@pytest.mark.slow
def test_matches_and_replay_read_through_the_service_that_holds_the_log(
    served: Served,
    tmp_path: Path,
) -> None:
    _, address, db = served
    played = play_remote_match(connect(address), 3, ["greedy", "random"], seed=5)
    done = sniff("matches", "--db", str(db), "--format", "jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [row] = jsonl(done.stdout)
    assert row["match_id"] == played.match_id
    assert row["winners"] == [played.winner]
    assert row["scores"] == played.scores
    assert row["rounds"] == played.rounds
    done = sniff("replay", played.match_id, "--db", str(db), "--format", "jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    steps = jsonl(done.stdout)
    assert len(steps) == played.moves
    assert steps[-1]["scores"] == played.scores
    assert all(s.get("drawn") is None for s in steps)
    done = sniff("replay", "0123456789abcdef", "--db", str(db), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("Error: no match '0123456789abcdef'")


@pytest.mark.slow
@pytest.mark.parametrize(
    "where",
    [{}, {"seats": 3}, {"limit": 2}, {"since": datetime(2000, 1, 1, tzinfo=UTC)}],
)
def test_the_quick_listing_and_the_view_based_one_agree(db: Path, where: dict[str, object]) -> None:
    from analysis.logquery import query_log
    from analysis.replay.source import MatchFilter, _match_row, _sql, list_matches

    chosen = MatchFilter(**where)  # type: ignore[arg-type]
    assert not chosen.on_result
    table, _ = query_log(db, _sql("list_matches"), chosen.params())
    assert list_matches(db, chosen) == [_match_row(r) for r in table.to_pylist()]

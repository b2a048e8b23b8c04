"""`sniff stats`: the commands on records, Parquet facts and a live event log; bad input."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from analysis.cli.main import cli
from analysis.remote import connect, play_remote_match
from analysis.stats.timing import COLUMNS, ROUND_FACT_COLUMNS
from sniff import to_record
from tests.helpers import need
from tests.service_helpers import Served
from tests.test_stats_facts import cut_match, no_sniff_match
from tests.test_stats_timing import bot_matches

SNIFF = [sys.executable, "-m", "analysis.cli"]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Bot matches of 2, 3 and 4 seats with players, and the two hand-built matches."""
    path = tmp_path_factory.mktemp("records") / "m.jsonl"
    lines = [
        json.dumps(to_record(m, f"b{i}", players))
        for i, (m, players) in enumerate(bot_matches(30, 5))
    ]
    lines.append(json.dumps(to_record(cut_match(), "cut", ["greedy", "random"])))
    lines.append(json.dumps(to_record(no_sniff_match(), "nosniff", ["random", "random"])))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_csv_is_stats_md_long_form(records: Path) -> None:
    code, out, _ = run("stats", "sniff-timing", "--records", str(records), "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert tuple(rows[0]) == COLUMNS
    assert {r["statistic"] for r in rows} == {"timing", "holding"}
    assert {r["seats"] for r in rows} == {"2", "3", "4", "all"}
    lone = [r for r in rows if r["n"] == "1"]
    assert lone
    assert all(r["ci_low"] == r["ci_high"] == "" for r in lone)
    # Decimals as Python writes them back exactly: never rounded for display.
    means = [r["mean"] for r in rows if "." in r["mean"]]
    assert any(len(m.split(".")[1]) > 9 for m in means)


@pytest.mark.slow
def test_json_has_the_same_rows_as_csv(records: Path) -> None:
    _, out_csv, _ = run("stats", "sniff-timing", "--records", str(records), "--format", "csv")
    _, out_json, _ = run("stats", "sniff-timing", "--records", str(records), "--format", "json")
    objects = json.loads(out_json)
    assert list(objects[0]) == list(COLUMNS)
    rows = list(csv.DictReader(io.StringIO(out_csv)))
    assert len(objects) == len(rows)
    for obj, row in zip(objects, rows, strict=True):
        assert obj["mean"] == float(row["mean"])
        assert (obj["ci_low"] is None) == (row["ci_low"] == "")


@pytest.mark.slow
def test_table_says_how_many_rounds_were_left_out(records: Path) -> None:
    code, out, _ = run("stats", "sniff-timing", "--records", str(records), "--seats", "2")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("12 matches, ")  # 10 bot matches of 2 seats and the hand-built 2
    assert "rounds left out as incomplete" in first
    assert "Observed timing value" in out
    assert "Holding value" in out


@pytest.mark.slow
def test_rounds_facts_prints_section_1(records: Path) -> None:
    code, out, _ = run(
        "stats", "sniff-timing", "--records", str(records), "--rounds-facts", "--format", "csv"
    )
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert tuple(rows[0]) == ROUND_FACT_COLUMNS
    cut = next(r for r in rows if r["match_id"] == "cut")
    assert (cut["maker"], cut["sniff_index"], cut["net"], cut["orientation"]) == (
        "1",
        "1",
        "[20, -10]",
        "",
    )
    assert [r["round"] for r in rows if r["match_id"] == "cut"] == ["0"]  # round 1 was cut


@pytest.mark.slow
def test_bots_filter_and_facts_directory_round_trip(records: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "facts"
    code, out, _ = run("stats", "facts", "--records", str(records), "-o", str(out_dir))
    assert code == 0
    assert "wrote 32 matches" in out
    args = ["stats", "sniff-timing", "--format", "csv", "--bots", "random"]
    _, from_records, _ = run(*args, "--records", str(records))
    _, from_facts, _ = run(*args, "--facts", str(out_dir))
    assert from_records == from_facts
    # Writing the same part again replaces it: still 32 matches, not 64.
    run("stats", "facts", "--records", str(records), "-o", str(out_dir))
    _, again, _ = run("stats", "sniff-timing", "--facts", str(out_dir))
    assert again.startswith("32 matches, ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seats", "3", "--variant", "british", "--bots", "nobody"], "no matches for the filter"),
        (["--simulated"], "no matches for the filter (simulated)"),
        (["--run", "r9"], "no simulation run 'r9'"),
        (["--bots", "greedy,,random"], "separated by commas"),
        (["--plot", "out.jpg"], ".png or .svg"),
    ],
)
def test_bad_filters_are_one_line_and_exit_2(records: Path, args: list[str], message: str) -> None:
    code, out, err = run("stats", "sniff-timing", "--records", str(records), *args)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert out == ""


@pytest.mark.slow
def test_bad_inputs_are_one_line_and_exit_2(tmp_path: Path, records: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    good = records.read_text().splitlines()[0]
    bad.write_text(good + "\n{not json\n")
    illegal = json.loads(good)
    illegal["rounds"][0]["actions"][0] = "pass"
    ill = tmp_path / "illegal.jsonl"
    ill.write_text(json.dumps(illegal) + "\n")
    cases = [
        (["--records", str(bad)], "line 2: not JSON"),
        (["--records", str(ill)], "line 1: not a lawful match record"),
        (["--records", str(tmp_path / "none.jsonl")], "cannot read"),
        (["--facts", str(tmp_path / "nodir")], "no facts directory"),
        (["--records", str(records), "--facts", str(tmp_path)], "give one input"),
        (["--db", str(tmp_path / "none.duckdb")], "no event log"),
    ]
    for args, message in cases:
        code, _, err = run("stats", "sniff-timing", *args)
        assert code == 2, args
        assert message in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
def test_plots_are_written(records: Path, tmp_path: Path) -> None:
    need("matplotlib", "pip install -e '.[plot]'")
    for name, command in (("timing.png", "sniff-timing"), ("summary.svg", "summary")):
        path = tmp_path / name
        code, _, err = run("stats", command, "--records", str(records), "--plot", str(path))
        assert code == 0, err
        data = path.read_bytes()
        assert len(data) > 10_000
        assert data.startswith(b"\x89PNG") if name.endswith(".png") else b"<svg" in data[:2000]


@pytest.mark.slow
def test_plot_without_matplotlib_is_one_line(
    records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    path = tmp_path / "t.png"
    code, _, err = run("stats", "sniff-timing", "--records", str(records), "--plot", str(path))
    assert code == 2
    assert f"{sys.executable} -m pip install -e " in err
    assert "[plot]" in err
    assert len(err.strip().splitlines()) == 1
    assert not path.exists()


@pytest.mark.slow
def test_summary_plot_of_unfinished_matches_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "open.jsonl"
    path.write_text(json.dumps(to_record(no_sniff_match(), "open", ["random", "random"])) + "\n")
    code, _, err = run(
        "stats", "summary", "--records", str(path), "--plot", str(tmp_path / "s.png")
    )
    assert code == 2
    assert "no finished match" in err


@pytest.mark.slow
def test_summary_on_the_hand_built_matches(tmp_path: Path) -> None:
    path = tmp_path / "hand.jsonl"
    path.write_text(
        json.dumps(to_record(cut_match(), "cut", ["greedy", "random"]))
        + "\n"
        + json.dumps(to_record(no_sniff_match(), "nosniff", ["random", "random"]))
        + "\n"
    )
    code, out, _ = run("stats", "summary", "--records", str(path), "--format", "json")
    assert code == 0
    rows = {(r["statistic"], r["seats"], r["by"], r["level"]): r for r in json.loads(out)}
    # Only `cut` is finished (won by seat 0, the first leader, in its second round).
    assert rows["match_win_rate", "2", "seat", "0"]["value"] == 1
    assert rows["match_win_rate", "2", "seat", "0"]["n"] == 1
    assert rows["first_mover_match_win_rate", "2", "all", "all"]["value"] == 1
    assert rows["rounds_per_match", "2", "all", "all"]["value"] == 2
    # Complete rounds: cut round 0 (nets 20, -10) and nosniff (0, 5), both led and
    # dominoed by seat 0.
    assert rows["leader_round_win_rate", "2", "all", "all"]["value"] == 0.5
    assert rows["round_win_rate", "2", "seat", "1"]["value"] == 0.5
    assert rows["domino_rate", "2", "seat", "0"]["value"] == 1
    assert rows["blocked_rate", "2", "all", "all"]["value"] == 0
    # Seat 0 placed 7 + 1 + 7 tiles scoring 20 + 5 + 0; seat 1 placed 6 + 0 + 6 scoring 5 + 5.
    assert rows["points_per_placement", "2", "seat", "0"]["value"] == pytest.approx(25 / 15)
    assert rows["points_per_placement", "2", "seat", "1"]["value"] == pytest.approx(10 / 12)
    assert rows["scoring_share", "2", "seat", "0"]["value"] == pytest.approx(4 / 15)
    # Per complete round: seat 1 scored 5 and 5 and lost 15 and 0.
    assert rows["points_per_round", "2", "seat", "1"]["value"] == 5
    assert rows["deductions_per_round", "2", "seat", "1"]["value"] == 7.5
    # Wilson 95% of 1 success in 2: (0.0945, 0.9055).
    low, high = (
        rows["leader_round_win_rate", "2", "all", "all"]["ci_low"],
        rows["leader_round_win_rate", "2", "all", "all"]["ci_high"],
    )
    assert (round(low, 4), round(high, 4)) == (0.0945, 0.9055)
    assert rows["match_win_rate", "all", "bot", "greedy"]["value"] == 1


# -- the event log, held by a live service, then closed --------------------------------


@pytest.mark.slow
def test_stats_over_the_event_log_while_served_and_after(
    served: Served,
    tmp_path: Path,
) -> None:
    proc, address, db = served
    stub = connect(address)
    for seats, seed in ((2, 3), (4, 8)):
        play_remote_match(stub, seats, ["greedy", "random"], seed=seed)
    args = ["stats", "sniff-timing", "--db", str(db), "--format", "csv"]
    live = subprocess.run(
        [*SNIFF, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert live.returncode == 0, live.stderr
    rows = list(csv.DictReader(io.StringIO(live.stdout)))
    assert {r["seats"] for r in rows} == {"2", "4", "all"}
    # The log does not record players yet: no bot factor.
    assert not {"maker_bot", "mover_bot", "matchup"} & {r["factor"] for r in rows}
    summary = ["stats", "summary", "--db", str(db), "--format", "csv"]
    live_summary = subprocess.run(
        [*SNIFF, *summary], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert live_summary.returncode == 0, live_summary.stderr
    assert "match_win_rate" in live_summary.stdout
    proc.terminate()
    proc.wait(timeout=30)
    for command, before in ((args, live), (summary, live_summary)):
        offline = subprocess.run(
            [*SNIFF, *command],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert offline.returncode == 0, offline.stderr
        assert offline.stdout == before.stdout
    through_service = subprocess.run(
        [*SNIFF, *args[:-2], "--served"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert through_service.stdout.startswith("2 matches, ")


@pytest.mark.slow
@pytest.mark.parametrize("command", ["sniff-timing", "summary"])
def test_stats_of_the_log_equal_stats_of_its_records(
    records: Path, tmp_path: Path, command: str
) -> None:
    """The facts the log stores when it imports the records give the figures of replaying
    the records themselves."""
    played = tmp_path / "played.jsonl"  # the bot matches: the hand-built ones do not import
    played.write_text("\n".join(records.read_text().splitlines()[:-2]) + "\n")
    db = tmp_path / "log.duckdb"
    code, _, err = run("import", str(played), "--db", str(db))
    assert code == 0, err
    for fmt in ("csv", "json"):
        _, from_records, _ = run("stats", command, "--records", str(played), "--format", fmt)
        code, from_log, err = run("stats", command, "--db", str(db), "--format", fmt)
        assert code == 0, err
        assert from_log == from_records


@pytest.mark.parametrize("command", ["sniff-timing", "summary"])
def test_stats_read_the_log_in_place_as_a_copy_would_and_change_no_byte(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no service holding the file, the statistics run on the log's own tables (no
    copy into memory): the same figures as the copy, and the file untouched."""
    import hashlib
    import tempfile

    from analysis.stats import store as store_module
    from analysis.stats.store import FactsStore

    db = tmp_path / "log.duckdb"
    code, _, err = run("simulate", "--db", str(db), "--matches", "300", "--seats", "3")
    assert code == 0, err
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    store = FactsStore.from_log(db)
    assert store is not None
    assert store.count("match_facts") == 300
    store.close()
    args = ["stats", command, "--db", str(db), "--format", "csv"]
    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))
    code, in_place, err = run(*args)
    assert code == 0, err
    monkeypatch.setattr(store_module, "STATS_MEMORY", "256MB")  # DuckDB spills, or not
    code, bounded, err = run(*args)
    assert code == 0, err
    assert bounded == in_place
    monkeypatch.setattr(store_module, "STATS_MEMORY", "2MB")  # too little: one line, exit 2
    code, _, err = run(*args)
    assert code == 2
    assert err.startswith("Error: DuckDB ran out of the memory it was given")
    assert err.count("\n") == 1
    assert list(spill.iterdir()) == [], "the spill directory is removed on close"
    monkeypatch.setattr(FactsStore, "from_log", classmethod(lambda cls, path: None))
    code, copied, err = run(*args)
    assert code == 0, err
    assert in_place == copied
    assert in_place.count("\n") > 5
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("log.duckdb")) == [
        "log.duckdb",
        "log.duckdb.runs",
    ]

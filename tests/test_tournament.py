"""`sniff tournament`: duplicate rotations over identical deals, determinism, the statistics."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from analysis.cli.main import cli
from analysis.tournament import (
    Played,
    Settings,
    bradley_terry,
    mean_interval,
    pair_results,
    play,
    report,
    rotations,
)
from analysis.tournament_audit import TournamentMatch, check_tournament, parse_pins
from sniff.seeds import tournament_seeds_commitment
from tests.service_helpers import Served


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_rotations_put_every_bot_in_every_seat() -> None:
    for bots in (("a", "b"), ("a", "b", "c"), ("a", "b", "c", "d")):
        for seats in (2, 3, 4):
            rots = rotations(bots, seats)
            assert len(rots) == len(bots)
            for seat in range(seats):
                assert sorted(r[seat] for r in rots) == sorted(bots)


@pytest.mark.slow
def test_logged_matches_rotate_the_bots_over_identical_deals(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    code, out, err = run(
        "tournament", "--bots", "rollout,greedy,random", "--seats", "3", "--deals", "2",
        "--round-limit", "2", "--target", "10000", "--workers", "1", "--db", str(db),
        "--format", "json", "--seed", "40",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    tid = doc["tournament"]
    assert doc["matches"] == 6
    with duckdb.connect(str(db), read_only=True) as con:
        settings = con.execute(
            "SELECT match_id, seed, players, source, run_id FROM match_settings_all "
            "ORDER BY match_id"
        ).fetchall()
        deals = con.execute(
            "SELECT match_id, round, detail FROM events_all WHERE kind = 'round_dealt' "
            "ORDER BY match_id, round"
        ).fetchall()
    assert len(settings) == 6
    assert {(s, r) for _, _, _, s, r in settings} == {("simulated", tid)}
    for deal in range(2):
        mine = [s for s in settings if s[0].startswith(f"{tid}-d{deal}-")]
        assert {int(s[1]) for s in mine} == {40 + deal}
        for seat in range(3):
            assert sorted(s[2][seat] for s in mine) == ["greedy", "random", "rollout"]
        by_round: dict[int, set[str]] = {}
        for match_id, rnd, detail in deals:
            if match_id.startswith(f"{tid}-d{deal}-"):
                d = json.loads(detail)
                by_round.setdefault(rnd, set()).add(json.dumps([d["hands"], d["boneyard"]]))
        assert by_round
        assert all(len(v) == 1 for v in by_round.values())
    assert len({json.dumps(json.loads(d)["hands"]) for m, r, d in deals if r == 0}) == 2
    code, out, err = run(
        "tournament", "--bots", "rollout,greedy,random", "--seats", "3", "--deals", "2",
        "--round-limit", "2", "--target", "10000", "--workers", "1", "--db", str(db),
        "--format", "csv", "--seed", "40",
    )  # fmt: skip
    assert code == 0, err
    assert "logged 0 matches (0 events)" in err  # a repeat adds nothing, and says so
    assert "6 already there" in err
    assert out.splitlines()[0].startswith("kind,bot,opponent,deals,mean")


@pytest.mark.slow
def test_results_do_not_depend_on_the_workers() -> None:
    settings = Settings(("greedy", "random"), 4, 5, seed=7, round_limit=3)
    one, table1 = play(settings, workers=1)
    two, table2 = play(settings, workers=2)
    assert one == two
    cols = ["match_id", "seq", "kind", "move", "points", "drawn"]
    assert table1.select(cols).equals(table2.select(cols))
    assert report(settings, one).to_json() == report(settings, two).to_json()


def test_interval_is_student_t_over_deals() -> None:
    iv = mean_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    se = math.sqrt(2.5) / math.sqrt(5)
    assert iv.mean == 3.0
    assert iv.se == pytest.approx(se)
    assert iv.high - iv.mean == pytest.approx(2.7764451051977987 * se, rel=1e-9)
    assert iv.low == pytest.approx(3.0 - 2.7764451051977987 * se, rel=1e-9)


def _played(deal: int, players: tuple[str, ...], scores: tuple[int, ...]) -> Played:
    return Played(deal, 0, f"m{deal}", players, tuple(range(len(players))), scores, 1, 10)


def test_deals_are_the_clusters() -> None:
    """Two rotations of one deal count once: the deal's mean is one value."""
    matches = [
        _played(0, ("a", "b"), (10, 0)),
        _played(0, ("b", "a"), (0, 30)),
        _played(1, ("a", "b"), (0, 10)),
        _played(1, ("b", "a"), (10, 0)),
    ]
    doc = report(Settings(("a", "b"), 2, 2), matches).to_json()
    a = doc["results"][0]
    assert a["bot"] == "a"
    assert a["deals"] == 2
    assert a["mean"] == pytest.approx(5.0)  # deal 0: +20, deal 1: -10
    assert doc["head_to_head"][0]["mean"] == pytest.approx(5.0)
    four = Played(0, 0, "m", ("a", "b", "a", "b"), (0, 1, 0, 1), (5, 9, 5, 9), 1, 10)
    assert pair_results([four], ("a", "b")) == [(0, 1, 0.0)]  # partners count once
    three = _played(0, ("a", "b", "c"), (30, 0, 6))
    assert three.net(0) == 27.0
    assert three.net(1) == -18.0


def test_a_bot_that_always_wins_is_rated_higher() -> None:
    results = [(0, 1, 1.0)] * 30 + [(1, 2, 1.0)] * 30 + [(0, 2, 1.0)] * 30
    ratings = bradley_terry(results, 3)
    assert ratings[0] > ratings[1] > ratings[2]
    assert sum(ratings) == pytest.approx(0.0, abs=1e-9)
    assert all(math.isfinite(r) for r in ratings)
    even = bradley_terry([(0, 1, 1.0), (0, 1, 0.0)] * 10, 2)
    assert even == pytest.approx([0.0, 0.0], abs=1e-9)
    settings = Settings(("greedy", "random"), 2, 12, seed=3, round_limit=2)
    played, _ = play(settings)
    assert len(pair_results(played, settings.bots)) == 24
    rows = {r["bot"]: r for r in report(settings, played).to_json()["results"]}
    assert rows["greedy"]["rating"] > rows["random"]["rating"]
    assert rows["greedy"]["rating_low"] <= rows["greedy"]["rating"] <= rows["greedy"]["rating_high"]
    assert rows["greedy"]["mean"] == pytest.approx(-rows["random"]["mean"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bots", "greedy,nobody"], "no bot named 'nobody'"),
        (["--bots", "greedy"], "at least 2 bots"),
        (["--bots", "greedy,greedy"], "twice"),
        (["--seats", "5"], "--seats must be 2, 3 or 4"),
        (["--seats", "1"], "--seats must be 2, 3 or 4"),
        (["--deals", "0"], "--deals must be 1 to"),
        (["--deals", "1000000000"], "--deals must be 1 to"),
        (["--seed", str(2**64 - 1), "--deals", "2"], "largest seed"),
        (["--bots", "greedy,random,rollout", "--seats", "4"], "2 or 4 bots"),
        (["--seats", "3"], "at least 3 bots"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    db = tmp_path / "t.duckdb"
    base = ["tournament", "--bots", "greedy,random", "--deals", "2", "--db", str(db)]
    code, out, err = run(*base, *args)
    assert code == 2
    assert out == ""
    assert err.startswith("Error: ")
    assert len(err.strip().splitlines()) == 1
    assert message in err
    assert not db.exists()


@pytest.mark.slow
def test_a_tournament_goes_through_the_service_that_holds_the_log(
    served: Served,
) -> None:
    code, _, err = run(
        "tournament", "--bots", "greedy,random", "--deals", "3", "--round-limit", "1",
        "--workers", "1", "--db", str(served.db), "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    assert "logged 6 matches" in err
    code, out, _ = run(
        "query", "--db", str(served.db), "--format", "csv",
        "SELECT count(*) FROM match_settings_all WHERE source = 'simulated'",
    )  # fmt: skip
    assert code == 0
    assert out.splitlines()[-1] == "6"


# -- the commitment to the deal seeds ----------------------------------------------------


def _committed_matches(salt: bytes, seeds: list[int], rotations: int = 2) -> list[TournamentMatch]:
    digest = tournament_seeds_commitment(salt, seeds).hex()
    return [
        TournamentMatch(f"t-d{d}-r{r}", "t", digest, str(d), str(seed), salt.hex())
        for d, seed in enumerate(seeds)
        for r in range(rotations)
    ]


def test_a_tournaments_logged_seeds_and_salt_open_its_commitment() -> None:
    matches = _committed_matches(b"\x07" * 32, [40, 41, 42])
    assert check_tournament("t", matches).ok
    assert check_tournament("t", matches, matches[0].commitment).ok


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        ({"seed": "99"}, "different seeds"),
        ({"salt": "00" * 32}, "different salts"),
        ({"salt": None}, "reveals no salt"),
        ({"commitment": "11" * 32}, "different commitments"),
        ({"deal": "x"}, "no deal index"),
    ],
)
def test_an_edited_seed_salt_or_commitment_is_a_tournament_commitment_problem(
    edit: dict[str, str | None], words: str
) -> None:
    matches = _committed_matches(b"\x07" * 32, [40, 41, 42])
    matches[3] = replace(matches[3], **edit)  # type: ignore[arg-type]
    result = check_tournament("t", matches)
    assert [p.kind for p in result.problems] == ["tournament_commitment"]
    assert words in result.problems[0].reason


def test_every_rotation_edited_alike_still_fails_to_open_the_commitment() -> None:
    matches = _committed_matches(b"\x07" * 32, [40, 41, 42])
    edited = [replace(m, seed="99") if m.deal == "1" else m for m in matches]
    (problem,) = check_tournament("t", edited).problems
    assert "hash to" in problem.reason
    salted = [replace(m, salt="08" * 32) for m in matches]
    assert "hash to" in check_tournament("t", salted).problems[0].reason


def test_a_missing_deal_or_a_dropped_last_deal_is_caught() -> None:
    matches = _committed_matches(b"\x07" * 32, [40, 41, 42])
    without_middle = [m for m in matches if m.deal != "1"]
    assert "no match of deal 1" in check_tournament("t", without_middle).problems[0].reason
    without_last = [m for m in matches if m.deal != "2"]
    assert "hash to" in check_tournament("t", without_last).problems[0].reason


def test_a_pinned_commitment_must_be_the_logged_one() -> None:
    matches = _committed_matches(b"\x07" * 32, [40, 41])
    (problem,) = check_tournament("t", matches, "ab" * 32).problems
    assert problem.kind == "tournament_commitment"
    assert "published before play" in problem.reason


@pytest.mark.parametrize("value", ["t", "t=", "=" + "ab" * 32, "t=xyz", "t=" + "ab" * 31])
def test_a_malformed_tournament_pin_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="RUN_ID=HEX"):
        parse_pins([value])


@pytest.mark.slow
def test_a_tournament_commits_before_play_reveals_at_the_end_and_audits_ok(
    tmp_path: Path,
) -> None:
    db = tmp_path / "t.duckdb"
    code, out, err = run(
        "tournament", "--bots", "greedy,random", "--deals", "3", "--round-limit", "1",
        "--workers", "1", "--db", str(db), "--format", "json", "--seed", "40",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    reveal = doc["seed_commitment"]
    assert reveal["seeds"] == ["40", "41", "42"]
    salt = bytes.fromhex(reveal["salt"])
    assert tournament_seeds_commitment(salt, [40, 41, 42]).hex() == reveal["commitment"]
    first = err.splitlines()[0]
    assert reveal["commitment"] in first  # published before the first deal
    tid = doc["tournament"]
    pin = f"{tid}={reveal['commitment']}"
    code, out, err = run("audit", "--db", str(db), "--tournament", pin, "--format", "jsonl")
    assert code == 0, out + err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[-1] == {"id": tid, "ok": True, "problems": []}
    assert len(lines) == 7  # 3 deals x 2 rotations, then the tournament

    code, out, _ = run("audit", "--db", str(db), "--tournament", f"{tid}={'ab' * 32}")
    assert code == 1
    assert "tournament_commitment" in out
    code, _, err = run("audit", "--db", str(db), "--tournament", f"{tid}=nothex")
    assert code == 2
    assert "RUN_ID=HEX" in err

    with duckdb.connect(str(db)) as con:
        con.execute(
            "UPDATE events_all SET detail = json_merge_patch(detail, ?) "
            "WHERE match_id = ? AND kind = 'match_ended'",
            [json.dumps({"tournament_salt": "00" * 32}), f"{tid}-d1-r0"],
        )
    code, out, _ = run("audit", "--db", str(db), "--format", "jsonl")
    assert code == 1
    by_id = {d["id"]: d for d in map(json.loads, out.splitlines())}
    assert {p["kind"] for p in by_id[f"{tid}-d1-r0"]["problems"]} == {"chain_broken"}
    assert [p["kind"] for p in by_id[tid]["problems"]] == ["tournament_commitment"]

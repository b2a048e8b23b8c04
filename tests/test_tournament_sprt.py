"""`sniff tournament --sprt` and `--par`: the sequential test's ratio and bounds, a tournament
that stops at the deal deciding it (whatever the workers) and logs only what it played, the
audit of a commitment to more deals than were played, and each bot against the par."""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from analysis.cli.main import cli
from analysis.rollout.par import match_pars
from analysis.rollout.source import specs_from_log
from analysis.stats.sprt import (
    OUTCOMES,
    AlreadyDecided,
    Decision,
    Sequential,
    Sprt,
    elo_score,
    generalized_llr,
    parse_hypotheses,
    pentanomial,
    run_sprt,
)
from analysis.tournament import Settings, deal_score, play, report
from analysis.tournament_audit import TournamentMatch, check_tournament
from sniff.seeds import tournament_seeds_commitment


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# -- the test's arithmetic ----------------------------------------------------------------


def test_the_bounds_are_walds_and_the_hypotheses_logistic_elo() -> None:
    test = Sprt(-10, 10, alpha=0.05, beta=0.1)
    assert test.lower == pytest.approx(math.log(0.1 / 0.95))
    assert test.upper == pytest.approx(math.log(0.9 / 0.05))
    assert elo_score(0) == 0.5
    assert elo_score(400) == pytest.approx(10 / 11)
    assert elo_score(-400) == pytest.approx(1 / 11)


def test_with_two_outcomes_the_ratio_is_the_binomial_one() -> None:
    # 3 wins and a loss, H0 score 0.4, H1 0.6: 3 ln(0.6/0.4) + ln(0.4/0.6) = 2 ln 1.5
    assert generalized_llr((0.0, 1.0), (1, 3), 0.4, 0.6) == pytest.approx(2 * math.log(1.5))
    # the constrained fit of two outcomes is the only distribution with that mean
    assert generalized_llr((0.0, 1.0), (2, 2), 0.4, 0.6) == pytest.approx(0.0, abs=1e-12)


def _profile(values: list[float], counts: list[float], mean: float) -> float:
    """max over theta of sum f_i log(1 + theta (v_i - mean)), by golden-section search: the
    log-likelihood the mean constraint costs (the dual of the constrained fit)."""
    total = sum(counts)
    low = -1 / (max(values) - mean) + 1e-12
    high = 1 / (mean - min(values)) - 1e-12

    def g(theta: float) -> float:
        return sum(
            c / total * math.log(1 + theta * (v - mean))
            for v, c in zip(values, counts, strict=True)
        )

    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(300):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if g(a) < g(b):
            low = a
        else:
            high = b
    return g((low + high) / 2)


@pytest.mark.parametrize(
    "scores",
    [
        [1, 0.75, 0.5, 1, 0.25, 1, 0.75, 0.5],
        [1, 1, 1, 1],
        [0, 0.5, 0.25, 0.5, 0.5, 0.75, 0, 0.25, 0.5, 1],
    ],
)
def test_the_ratio_of_a_score_list_is_the_profile_likelihoods_difference(
    scores: list[float],
) -> None:
    """An outcome not seen counts 1/1000; the ratio is N (max g under H0 - max g under H1)."""
    counts = [c if c else 1e-3 for c in pentanomial(scores)]
    s0, s1 = elo_score(-20), elo_score(60)
    expected = sum(counts) * (
        _profile(list(OUTCOMES), counts, s0) - _profile(list(OUTCOMES), counts, s1)
    )
    assert Sprt(-20, 60).llr(pentanomial(scores)) == pytest.approx(expected, rel=1e-7)
    if min(scores) == 1:
        return
    # with results spread, the ratio is near the normal one: N/2 log(E(x-s0)^2 / E(x-s1)^2)
    n = sum(counts)
    r0, r1 = (
        sum(c * (v - s) ** 2 for v, c in zip(OUTCOMES, counts, strict=True)) / n for s in (s0, s1)
    )
    assert expected == pytest.approx(n / 2 * math.log(r0 / r1), rel=0.1, abs=0.05)


def test_mirrored_results_under_mirrored_hypotheses_mirror_the_ratio() -> None:
    counts = pentanomial([1, 0.75, 0.75, 0.5, 1, 0.25])
    assert Sprt(-50, 10).llr(counts[::-1]) == pytest.approx(-Sprt(-10, 50).llr(counts))
    assert Sprt(-30, 30).llr([1, 1, 1, 1, 1]) == pytest.approx(0.0, abs=1e-9)  # symmetric


def test_the_sequence_stops_at_the_first_deal_that_crosses_a_bound() -> None:
    test = Sprt(0, 200)
    scores = [1, 0.75, 1, 0.5, 1, 1, 0.75, 1, 1, 1, 0.25, 1, 1, 1, 1, 1, 1, 1, 1, 1] * 2
    ratios = [test.llr(pentanomial(scores[: n + 1])) for n in range(len(scores))]
    first = next(n for n, r in enumerate(ratios) if r >= test.upper)
    assert all(test.lower < r < test.upper for r in ratios[:first])
    outcome = run_sprt(test, scores)
    assert outcome.decision is Decision.H1
    assert outcome.deals == first + 1
    assert outcome.llr == ratios[first]
    losing = run_sprt(test, [0.5, 0.25, 0.5, 0.75, 0.5, 0.25, 0.5, 0.5] * 5)
    assert losing.decision is Decision.H0
    seq = Sequential(test)
    for score in scores[: first + 1]:
        seq.add(score)
    with pytest.raises(AlreadyDecided):
        seq.add(1.0)  # nothing is counted after the decision
    undecided = run_sprt(test, [0.75, 0.5])
    assert undecided.decision is None
    assert undecided.deals == 2


@pytest.mark.parametrize(
    ("text", "words"),
    [("10", "ELO0,ELO1"), ("a,b", "two numbers"), ("1,2,3", "ELO0,ELO1"), ("5,5", "ELO0 < ELO1"),
     ("10,-10", "ELO0 < ELO1"), ("0,5000", "within"), ("nan,1", "within")],
)  # fmt: skip
def test_malformed_hypotheses_are_refused(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_hypotheses(text)


# -- the command ----------------------------------------------------------------------------

SPRT_RUN = (
    "tournament", "--bots", "greedy,random", "--deals", "100", "--round-limit", "3",
    "--target", "10000", "--seed", "40", "--sprt", "0,200",
)  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bots", "greedy,random,rollout", "--seats", "3"], "give 2 bots, not 3"),
        (["--sprt", "10,0"], "ELO0 < ELO1"),
        (["--sprt", "0,0"], "ELO0 < ELO1"),
        (["--sprt", "zero,ten"], "ELO0,ELO1"),
        (["--sprt", "0"], "ELO0,ELO1"),
        (["--sprt-alpha", "0"], "--sprt-alpha must be between 0 and 0.5"),
        (["--sprt-alpha", "0.5"], "--sprt-alpha must be between 0 and 0.5"),
        (["--sprt-beta", "-0.1"], "--sprt-beta must be between 0 and 0.5"),
        (["--sprt-beta", "0.7"], "--sprt-beta must be between 0 and 0.5"),
    ],
)
def test_a_bad_test_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    db = tmp_path / "t.duckdb"
    code, out, err = run(*SPRT_RUN, "--db", str(db), *args)
    assert code == 2
    assert out == ""
    assert err.startswith("Error: ")
    assert len(err.strip().splitlines()) == 1
    assert message in err
    assert not db.exists()


def test_alpha_or_beta_without_a_test_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    code, _, err = run(
        "tournament", "--bots", "greedy,random", "--sprt-beta", "0.1", "--db", str(db)
    )
    assert code == 2
    assert "give it" in err
    assert not db.exists()


def _logged(db: Path) -> list[tuple[str, dict[str, Any]]]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT match_id, detail FROM events_all WHERE kind = 'match_created' ORDER BY match_id"
        ).fetchall()
    return [(m, json.loads(d)) for m, d in rows]


def test_a_sequential_tournament_stops_early_logs_only_its_deals_and_audits_clean(
    tmp_path: Path,
) -> None:
    db = tmp_path / "t.duckdb"
    code, out, err = run(*SPRT_RUN, "--workers", "1", "--db", str(db), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    test = doc["sprt"]
    played = doc["deals"]
    assert test["decision"] == "H1 accepted"
    assert test["llr"] >= test["upper"] == pytest.approx(math.log(0.95 / 0.05), abs=1e-4)
    assert 1 < played == test["deals"] < doc["deals_max"] == 100
    assert doc["matches"] == 2 * played
    assert len(doc["seed_commitment"]["seeds"]) == 100  # the commitment covers every deal
    logged = _logged(db)
    assert len(logged) == 2 * played
    assert sorted({d["tournament_deal"] for _, d in logged}) == list(range(played))
    assert {d["tournament_deals"] for _, d in logged} == {100}

    tid = doc["tournament"]
    pin = f"{tid}={doc['seed_commitment']['commitment']}"
    code, out, err = run("audit", "--db", str(db), "--tournament", pin, "--format", "jsonl")
    assert code == 0, out + err
    assert json.loads(out.splitlines()[-1]) == {"id": tid, "ok": True, "problems": []}

    with duckdb.connect(str(db)) as con:  # claim a commitment to fewer deals
        con.execute(
            "UPDATE events_all SET detail = json_merge_patch(detail, ?) "
            "WHERE kind = 'match_created' AND match_id LIKE ?",
            [json.dumps({"tournament_deals": played}), f"{tid}-%"],
        )
    code, out, _ = run("audit", "--db", str(db), "--format", "jsonl")
    assert code == 1
    by_id = {d["id"]: d for d in map(json.loads, out.splitlines())}
    assert [p["kind"] for p in by_id[tid]["problems"]] == ["tournament_commitment"]
    assert "hash to" in by_id[tid]["problems"][0]["reason"]


@pytest.mark.slow
def test_the_stopping_deal_does_not_depend_on_the_workers() -> None:
    settings = Settings(
        ("greedy", "random"), 2, 100, seed=40, round_limit=3, target=10_000, sprt=Sprt(0, 200)
    )
    one, table1 = play(settings, workers=1)
    two, table2 = play(settings, workers=2)
    assert one == two
    assert len({p.deal for p in one}) < 100
    cols = ["match_id", "seq", "kind", "move", "points", "drawn"]
    assert table1.select(cols).equals(table2.select(cols))
    assert report(settings, one).to_json() == report(settings, two).to_json()


def test_the_test_is_in_the_table_and_the_csv(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    code, out, err = run(*SPRT_RUN, "--workers", "1", "--db", str(db), "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    (test,) = [r for r in rows if r["kind"] == "sprt"]
    assert (test["bot"], test["opponent"], test["decision"]) == ("greedy", "random", "H1 accepted")
    assert float(test["llr"]) >= float(test["llr_upper"])
    assert float(test["llr_lower"]) == pytest.approx(-float(test["llr_upper"]))
    assert {r["deals"] for r in rows} == {test["deals"]}
    code, out, err = run(*SPRT_RUN, "--workers", "1", "--db", str(db))
    assert code == 0, err
    assert f"H1 accepted after {test['deals']} of at most 100 deals" in out


def test_a_test_that_reaches_the_cap_decides_nothing_and_plays_every_deal() -> None:
    settings = Settings(
        ("greedy", "random"), 2, 3, seed=40, round_limit=1, target=10_000, sprt=Sprt(-5, 5)
    )
    played, _ = play(settings)
    doc = report(settings, played).to_json()
    assert doc["sprt"]["decision"] == "no decision"
    assert doc["deals"] == doc["sprt"]["deals"] == 3


def test_a_deals_score_is_the_first_bots_mean_over_its_rotations() -> None:
    settings = Settings(("greedy", "random"), 4, 4, seed=9, round_limit=1)
    played, _ = play(settings)
    for deal in range(4):
        matches = [p for p in played if p.deal == deal]
        wins = []
        for m in matches:
            mine = m.scores[m.players.index("greedy")]
            theirs = m.scores[m.players.index("random")]
            wins.append(1.0 if mine > theirs else 0.0 if mine < theirs else 0.5)
        assert deal_score(matches, settings.bots) == statistics.fmean(wins)


# -- the audit of a commitment to more deals than were played -------------------------------


def _committed(seeds: list[int], played: int, count: int | None) -> list[TournamentMatch]:
    salt = b"\x07" * 32
    digest = tournament_seeds_commitment(salt, seeds).hex()
    return [
        TournamentMatch(
            f"t-d{d}-r{r}", "t", digest, str(d), str(seeds[d]), salt.hex(),
            None if count is None else str(count),
        )
        for d in range(played)
        for r in range(2)
    ]  # fmt: skip


def test_a_commitment_to_more_deals_than_played_opens_with_the_logged_count() -> None:
    seeds = [40, 41, 42, 43, 44]
    assert check_tournament("t", _committed(seeds, 2, 5)).ok
    assert check_tournament("t", _committed(seeds, 5, 5)).ok
    # a log from before the count was logged commits to the deals it holds, as it did
    assert check_tournament("t", _committed(seeds[:3], 3, None)).ok
    (problem,) = check_tournament("t", _committed(seeds, 2, None)).problems
    assert "hash to" in problem.reason


def test_a_log_written_before_the_count_was_logged_audits_as_it_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from analysis.cli.import_cmd import load_events
    from service.match_recorder import EventRecorder

    def without_count(*args: Any, tournament_deals: int, **kwargs: Any) -> EventRecorder:
        return EventRecorder(*args, **kwargs)

    monkeypatch.setattr("analysis.tournament.EventRecorder", without_count)
    settings = Settings(("greedy", "random"), 2, 3, seed=40, round_limit=1, target=10_000)
    _, table = play(settings)
    db = tmp_path / "old.duckdb"
    load_events(str(db), table, None)
    assert all("tournament_deals" not in detail for _, detail in _logged(db))
    code, out, err = run("audit", "--db", str(db), "--format", "jsonl")
    assert code == 0, out + err
    assert json.loads(out.splitlines()[-1]) == {"id": settings.id, "ok": True, "problems": []}


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda ms: [replace(m, committed_deals="4") for m in ms], "hash to"),
        (lambda ms: [replace(ms[0], committed_deals="6"), *ms[1:]], "different numbers"),
        (lambda ms: [replace(m, committed_deals="1") for m in ms], "beyond the 1 deals"),
        (
            lambda ms: [replace(m, committed_deals="x") for m in ms],
            "number of committed deal seeds",
        ),
        (
            lambda ms: [replace(m, committed_deals="0") for m in ms],
            "number of committed deal seeds",
        ),
    ],
)
def test_a_tampered_count_of_committed_deals_fails_the_audit(edit: object, words: str) -> None:
    matches = edit(_committed([40, 41, 42, 43, 44], 2, 5))  # type: ignore[operator]
    (problem,) = check_tournament("t", matches).problems
    assert problem.kind == "tournament_commitment"
    assert words in problem.reason


# -- par ------------------------------------------------------------------------------------


def test_an_unsolved_round_is_counted_and_given_no_value() -> None:
    settings = Settings(("greedy", "random", "rollout"), 3, 1, seed=2, round_limit=1)
    played, _ = play(settings, par_nodes=1_000)
    par = report(settings, played).to_json()["par"]
    assert (par["rounds"], par["unsolved_rounds"], par["unsolved_deals"]) == (1, 1, 1)
    assert all(r["deals"] == 0 and r["mean"] is None for r in par["results"])
    (deal,) = par["deals"]
    (rnd,) = deal["rounds"]
    assert rnd["par"] is None
    assert rnd["low"] <= rnd["high"]
    assert deal["against_par"] == {"greedy": None, "random": None, "rollout": None}


def test_only_rounds_that_are_one_position_in_every_rotation_get_a_par() -> None:
    settings = Settings(("greedy", "random"), 2, 3, seed=5, round_limit=3, target=10_000)
    played, _ = play(settings, par_nodes=1_000)
    for deal in range(3):
        matches = [p for p in played if p.deal == deal]
        rounds = [[rp.round for rp in m.pars] for m in matches]
        assert rounds[0][0] == 0  # the first deal of a match is always shared
        assert all(r == rounds[0] for r in rounds)
        for index in range(len(rounds[0])):
            pars = {(m.pars[index].par, m.pars[index].low, m.pars[index].high) for m in matches}
            assert len(pars) == 1  # solved once, the same for every rotation


@pytest.mark.slow
def test_par_per_deal_is_the_solvers_par_of_each_logged_match(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    code, out, err = run(
        "tournament", "--bots", "greedy,random", "--deals", "2", "--round-limit", "1",
        "--target", "10000", "--seed", "3", "--workers", "1", "--db", str(db), "--par",
        "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    par = doc["par"]
    assert (par["rounds"], par["unsolved_rounds"], par["unsolved_deals"]) == (2, 0, 0)
    tid = doc["tournament"]
    per_bot: dict[str, list[float]] = {"greedy": [], "random": []}
    for deal in par["deals"]:
        ids = [f"{tid}-d{deal['deal']}-r{r}" for r in range(2)]
        against: dict[str, list[float]] = {"greedy": [], "random": []}
        for spec, (_, detail) in zip(
            specs_from_log(db, ids), [x for x in _logged(db) if x[0] in ids], strict=True
        ):
            (expected,) = match_pars(spec)
            assert deal["rounds"][0]["par"] == list(expected.par or ())
            assert expected.against_par is not None
            for seat, bot in enumerate(detail["players"]):
                against[bot].append(expected.against_par[seat])
        for bot, values in against.items():
            assert deal["against_par"][bot] == pytest.approx(statistics.fmean(values), abs=1e-4)
            per_bot[bot].append(statistics.fmean(values))
    for row in par["results"]:
        assert row["mean"] == pytest.approx(statistics.fmean(per_bot[row["bot"]]), abs=1e-4)
    code, out, err = run(
        "tournament", "--bots", "greedy,random", "--deals", "2", "--round-limit", "1",
        "--target", "10000", "--seed", "3", "--workers", "1", "--db", str(db), "--par",
    )  # fmt: skip
    assert code == 0, err
    assert "result against the double-dummy par" in out
    assert "0 unsolved within the budget" in out

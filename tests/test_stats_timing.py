"""The Sniff-timing tables (docs/statistics.md §2-§5) computed in DuckDB, checked three ways.

* on a small log of hand-built matches whose cells are worked out by hand;
* against a plain, row-by-row reading of docs/statistics.md over random bot matches
  (every cell, every figure);
* the intervals against a known distribution: coverage of the true mean.
"""

from __future__ import annotations

import json
import math
import random
import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import pytest

from analysis.stats.load import load_records
from analysis.stats.store import FactsStore, StatsError
from analysis.stats.tdist import t975
from analysis.stats.timing import Cell, Filters, rounds_facts, sniff_timing
from sniff import GreedyBot, Match, RandomBot, play_match, to_record
from sniff.facts import (
    DECISION_COLUMNS,
    MATCH_COLUMNS,
    ROUND_COLUMNS,
    FactsRows,
    empty_columns,
    facts_rows,
    match_facts,
)
from tests.test_stats_facts import cut_match, no_sniff_match

# -- a hand-computed log ------------------------------------------------------------------


def hand_store() -> FactsStore:
    """Two 2-seat matches of test_stats_facts: `cut` (round 0 complete: seat 1 makes the
    Sniff at placement 1, net (20, -10); round 1 cut by the win) and `nosniff` (no Sniff,
    net (0, 5))."""
    store = FactsStore.in_memory()
    store.add(facts_rows(cut_match(), "cut", ["greedy", "random"], "imported"))
    store.add(facts_rows(no_sniff_match(), "nosniff", ["random", "random"], "served"))
    return store


def cells(rows: Iterable[Cell]) -> dict[tuple[str, str, str, str, str], Cell]:
    return {(c.statistic, c.seats, c.factor, c.level, c.cell): c for c in rows}


def test_hand_log_timing_and_holding_cells() -> None:
    result = sniff_timing(hand_store(), Filters())
    assert (result.selection.matches, result.selection.complete_rounds) == (2, 2)
    assert result.selection.incomplete_rounds == 1  # the round cut by the win
    got = cells(result.rows)
    # Timing: the cut match's round 0, Sniff at placement 1 by seat 1 (not the leader, 1-1):
    # the value for the maker's side is -10 - 20 = -30. The no-Sniff round: bucket none, the
    # leader's (seat 0's) value 0 - 5 = -5. Single rounds: no interval.
    expected_timing = {
        ("all", "all", "1"): -30,
        ("all", "all", "none"): -5,
        ("double", "1", "1"): -30,
        ("maker_is_leader", "false", "1"): -30,
        ("maker_bot", "random", "1"): -30,
        ("matchup", "random|greedy", "1"): -30,
        ("variant", "american", "1"): -30,
        ("variant", "american", "none"): -5,
    }
    for seats in ("2", "all"):
        timing = {k[2:]: c for k, c in got.items() if k[0] == "timing" and k[1] == seats}
        assert set(timing) == set(expected_timing)
        for key, mean in expected_timing.items():
            assert (timing[key].n, timing[key].rounds, timing[key].mean) == (1, 1, mean)
            assert (timing[key].ci_low, timing[key].ci_high) == (None, None)
    # Holding: cut round 0 has seat 0's lead (held_other, double 3, greedy, leader: value
    # 20 - -10 = 30) and seat 1's Sniff (played, bucket 1, double 1: -30); the no-Sniff round
    # seat 1's held_never at placement 1 (double 1, value 5 - 0 = 5).
    holding = {k[2:]: c for k, c in got.items() if k[0] == "holding" and k[1] == "2"}
    assert holding["all", "all", "held_other"].mean == 30
    assert holding["all", "all", "held_other/lead"].mean == 30
    assert holding["all", "all", "played/1"].mean == -30
    assert holding["all", "all", "held_never/1"].mean == 5
    assert holding["double", "3", "held_other"].n == 1
    assert holding["double", "1", "played"].mean == -30
    assert holding["double", "1", "held_never"].mean == 5
    assert holding["mover_is_leader", "true", "held_other"].mean == 30
    assert holding["mover_bot", "greedy", "held_other"].mean == 30
    assert holding["mover_bot", "random", "played"].mean == -30
    assert holding["matchup", "greedy|random", "held_other/lead"].mean == 30
    assert holding["matchup", "random|random", "held_never"].mean == 5
    assert len(holding) == 6 * 6  # 3 cells, 2 kinds, under 6 factors, one level each here


def test_hand_log_rounds_facts_are_stats_section_1_rows() -> None:
    _, rows = rounds_facts(hand_store(), Filters())
    assert [(r["match_id"], r["round"]) for r in rows] == [("cut", 0), ("nosniff", 0)]
    assert rows[0] == {
        "match_id": "cut",
        "round": 0,
        "seats": 2,
        "variant": "american",
        "leader": 0,
        "sniff": True,
        "maker": 1,
        "sniff_index": 1,
        "double": 1,
        "orientation": None,
        "covered_after": 2,
        "net": [20, -10],
        "sniff_points": 6,
        "sniff_points_maker_side": 2,
        "sniff_points_others": 4,
    }
    assert rows[1]["sniff"] is False
    assert rows[1]["net"] == [0, 5]


@pytest.mark.slow
def test_filters_select_matches_and_refuse_to_select_nothing() -> None:
    store = hand_store()
    assert sniff_timing(store, Filters(sources=("served",))).selection.matches == 1
    assert sniff_timing(store, Filters(bots=("random",))).selection.matches == 1
    assert sniff_timing(store, Filters(bots=("greedy", "random"))).selection.matches == 1
    assert sniff_timing(store, Filters(variant="american", seats=2)).selection.matches == 2
    with pytest.raises(StatsError, match="no matches for the filter"):
        sniff_timing(store, Filters(seats=3))
    with pytest.raises(StatsError, match="no matches for the filter"):
        sniff_timing(store, Filters(sources=("simulated",)))
    with pytest.raises(StatsError, match="no simulation run 'r1'"):
        sniff_timing(store, Filters(run="r1"))


# -- a plain reading of docs/statistics.md ------------------------------------------------


def bucket(t: int | None) -> str:
    if t is None:
        return "none"
    return {0: "lead", 1: "1", 2: "2"}.get(t) or ("3-4" if t <= 4 else "5-7" if t <= 7 else "8+")


def side_value(net: tuple[int, ...], seats: int, seat: int) -> float:
    sides = [net[0], net[1]] if seats == 4 else list(net)
    mine = net[seat]
    others = list(sides)
    others.remove(mine) if seats != 4 else others.pop(seat % 2)
    return mine - sum(others) / len(others)


def reference(
    matches: list[tuple[Match, list[str] | None]],
) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """Every cell straight from docs/statistics.md's words, one observation at a time."""
    timing: dict[tuple[Any, ...], list[float]] = defaultdict(list)
    holding: dict[tuple[Any, ...], list[tuple[Any, float]]] = defaultdict(list)
    for number, (match, players) in enumerate(matches):
        facts = match_facts(match)
        seats = facts.seats
        for r in facts.rounds:
            if not r.complete:
                continue
            assert r.net is not None
            who = r.maker if r.sniff else r.leader
            assert who is not None
            value = side_value(r.net, seats, who)
            levels = [("all", "all"), ("variant", facts.variant)]
            if r.sniff:
                levels += [("double", str(r.double)), ("maker_is_leader", str(who == r.leader))]
                if players is not None:
                    turn = [players[(who + i) % seats] for i in range(seats)]
                    levels += [("maker_bot", players[who]), ("matchup", "|".join(turn))]
            for factor, level in levels:
                for s in (str(seats), "all"):
                    timing[s, factor, level.lower(), bucket(r.sniff_index)].append(value)
            for d in r.decisions:
                value = side_value(r.net, seats, d.seat)
                levels = [
                    ("all", "all"),
                    ("variant", facts.variant),
                    ("double", str(d.double)),
                    ("mover_is_leader", str(d.mover_is_leader).lower()),
                ]
                if players is not None:
                    turn = [players[(d.seat + i) % seats] for i in range(seats)]
                    levels += [("mover_bot", players[d.seat]), ("matchup", "|".join(turn))]
                cluster = (number, r.round)
                for factor, level in levels:
                    for s in (str(seats), "all"):
                        for cell in (d.outcome, f"{d.outcome}/{bucket(d.placement_index)}"):
                            holding[s, factor, level, cell].append((cluster, value))
    out: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for key, values in timing.items():
        n = len(values)
        mean = statistics.fmean(values)
        if n >= 2:
            half = t975(n - 1) * statistics.stdev(values) / math.sqrt(n)
            out["timing", *key] = (n, n, mean, mean - half, mean + half)
        else:
            out["timing", *key] = (n, n, mean, None, None)
    for key, obs in holding.items():
        n = len(obs)
        mean = statistics.fmean(v for _, v in obs)
        residuals: dict[Any, float] = defaultdict(float)
        for cluster, v in obs:
            residuals[cluster] += v - mean
        g = len(residuals)
        if g >= 2:
            var = g / (g - 1) * sum(e * e for e in residuals.values()) / n**2
            half = t975(g - 1) * math.sqrt(var)
            out["holding", *key] = (n, g, mean, mean - half, mean + half)
        else:
            out["holding", *key] = (n, g, mean, None, None)
    return out


def bot_matches(count: int, seed: int) -> list[tuple[Match, list[str] | None]]:
    rng = random.Random(seed)
    out: list[tuple[Match, list[str] | None]] = []
    for i in range(count):
        seats = (2, 3, 4)[i % 3]
        variant = rng.choice(["american", "american", "stubby", "berndt", "british"])
        names = [rng.choice(["greedy", "random"]) for _ in range(seats)]
        bots = [
            GreedyBot(seed + i * 7 + s) if n == "greedy" else RandomBot(seed + i * 7 + s)
            for s, n in enumerate(names)
        ]
        match = play_match(Match(seats, seed=seed + i, variant=variant, round_limit=8), bots)
        out.append((match, None if i % 5 == 4 else names))  # some matches' players unknown
    return out


@pytest.mark.slow
def test_sql_tables_equal_a_plain_reading_of_stats_md_cell_for_cell() -> None:
    matches = bot_matches(90, 11)
    store = FactsStore.in_memory()
    for i, (match, players) in enumerate(matches):
        store.add(facts_rows(match, f"m{i}", players, "simulated", "run1"))
    got = {
        (c.statistic, c.seats, c.factor, c.level, c.cell): (
            c.n,
            c.rounds,
            c.mean,
            c.ci_low,
            c.ci_high,
        )
        for c in sniff_timing(store, Filters()).rows
    }
    expected = reference(matches)
    assert set(got) == set(expected)
    for key, (n, rounds, mean, low, high) in expected.items():
        g = got[key]
        assert g[:2] == (n, rounds), key
        assert g[2] == pytest.approx(mean, abs=1e-9), key
        if low is None:
            assert g[3:] == (None, None), key
        else:
            assert g[3] == pytest.approx(low, abs=1e-9), key
            assert g[4] == pytest.approx(high, abs=1e-9), key


@pytest.mark.slow
def test_records_file_gives_the_same_tables_as_the_matches() -> None:
    matches = bot_matches(12, 3)
    lines = [
        json.dumps(to_record(m, f"m{i}", players))
        for i, (m, players) in enumerate(matches)
        if players is not None
    ]
    from_records = FactsStore.in_memory()
    load_records(from_records, lines)
    direct = FactsStore.in_memory()
    for i, (match, players) in enumerate(matches):
        if players is not None:
            direct.add(facts_rows(match, f"m{i}", players, "imported"))
    assert sniff_timing(from_records, Filters()).rows == sniff_timing(direct, Filters()).rows


# -- intervals against a known distribution -----------------------------------------------


def synthetic_store(experiments: int, rounds: int, seed: int) -> FactsStore:
    """2-seat rounds whose values are normal with a known mean, one experiment per variant
    name: each round's Sniff is seat 0's at the lead, net (x, 0), x ~ N(7, 300) rounded; each
    round has 1-3 decisions of seat 0 (all `played`/`held_self`: values shared within the
    round, so only a clustered interval is right)."""
    rng = random.Random(seed)
    rows = FactsRows(
        empty_columns(MATCH_COLUMNS), empty_columns(ROUND_COLUMNS), empty_columns(DECISION_COLUMNS)
    )
    for e in range(experiments):
        match_id = f"e{e}"
        match_row: dict[str, Any] = {c: None for c in MATCH_COLUMNS}
        match_row.update(
            match_id=match_id,
            source="simulated",
            seats=2,
            variant=f"v{e:04d}",
            target=250,
            finished=True,
            scores=[0, 0],
            rounds=rounds,
            incomplete_rounds=0,
        )
        for c in MATCH_COLUMNS:
            rows.matches[c].append(match_row[c])
        for r in range(rounds):
            x = round(rng.gauss(7, 300))
            held = rng.randint(0, 2)
            row: dict[str, Any] = {c: None for c in ROUND_COLUMNS}
            row.update(
                match_id=match_id,
                round=r,
                seats=2,
                variant=f"v{e:04d}",
                complete=True,
                leader=0,
                sniff=True,
                maker=0,
                sniff_index=held * 2,
                double=6,
                net=[x, 0],
                value=x,
                sniff_points=0,
                sniff_points_maker_side=0,
                sniff_points_others=0,
                points=[0, 0],
                placements=[0, 0],
                scoring_placements=[0, 0],
            )
            for c in ROUND_COLUMNS:
                rows.rounds[c].append(row[c])
            for k in range(held + 1):
                for c, v in zip(
                    DECISION_COLUMNS,
                    (
                        match_id,
                        r,
                        2,
                        0,
                        k * 2,
                        6,
                        "played" if k == held else "held_self",
                        True,
                        x,
                        k if k < held else 0,
                        held - 1 - k if k < held else 0,
                    ),
                    strict=True,
                ):
                    rows.decisions[c].append(v)
    store = FactsStore.in_memory()
    store.add(rows)
    return store


@pytest.mark.slow
def test_intervals_cover_the_true_mean_about_95_percent_of_the_time() -> None:
    experiments = 600
    result = sniff_timing(synthetic_store(experiments, 12, 2024), Filters())
    timing = [
        c
        for c in result.rows
        if c.statistic == "timing" and c.factor == "variant" and c.seats == "2"
    ]
    # The timing value of every round is x (maker 0 vs seat 1's 0): mean 7 in every bucket.
    covered = [
        c.ci_low <= 7 <= c.ci_high for c in timing if c.ci_low is not None and c.ci_high is not None
    ]
    assert len(covered) > 1000
    assert 0.93 <= sum(covered) / len(covered) <= 0.97
    # Holding, all decisions of seat 0 per round (cell `played` and `held_self` pooled would
    # double count; take `held_self`: 0-2 per round, correlated within the round).
    holding = [
        c
        for c in result.rows
        if c.statistic == "holding"
        and c.factor == "variant"
        and c.seats == "2"
        and c.cell == "held_self"
        and c.ci_low is not None
    ]
    assert len(holding) == experiments
    assert sum(c.n > c.rounds for c in holding) > experiments / 2  # shared clusters occur
    hits = sum(
        1
        for c in holding
        if c.ci_low is not None and c.ci_high is not None and c.ci_low <= 7 <= c.ci_high
    )
    assert 0.91 <= hits / experiments <= 0.98


def test_interval_of_a_tiny_hand_set() -> None:
    """Values 1, 2, 6 in one bucket: mean 3, s² = 7, interval 3 ± t(0.975, 2)·√(7/3)."""
    store = synthetic_store(1, 3, 0)
    store.con.execute("UPDATE round_facts SET sniff_index = 0").fetchall()
    for r, x in enumerate((1, 2, 6)):
        for table in ("round_facts", "sniff_decisions"):
            store.con.execute(
                f"UPDATE {table} SET value = $x WHERE round = $r", {"x": x, "r": r}
            ).fetchall()
    lead = cells(sniff_timing(store, Filters()).rows)["timing", "2", "all", "all", "lead"]
    half = 4.302652729749464 * math.sqrt(7 / 3)
    assert (lead.n, lead.mean) == (3, 3)
    assert lead.ci_low == pytest.approx(3 - half, abs=1e-12)
    assert lead.ci_high == pytest.approx(3 + half, abs=1e-12)

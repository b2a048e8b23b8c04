"""Counterfactual Sniff timing: at each Sniff decision, the Sniff now against the best other move.

The observed statistics (docs/statistics.md §2-§3) compare rounds in which a Sniff
happened to be made at one moment with rounds in which it was made at
another: the hands that lead to an early Sniff differ from those that lead
to a late one, so the comparison mixes the timing with the deal. Here the
deal is held fixed: at every Sniff decision (docs/statistics.md §3) of the selected
matches, the mover's position is rebuilt by replaying the match, and the
rollout equities of its legal moves are estimated from the mover's own
`SeatView` (sniff/rollout.py: hidden tiles sampled from what the
seat saw, every move played out on the same samples and playout seeds).

A decision's **gain** is the equity of the best move that makes the Sniff
(a placement of a double) minus the equity of the best move that does not
(a placement of a non-double; a decision has both and nothing else), in the
same units as the observed values (points of round net result for the
mover's side, minus the other sides'); its standard error comes from the
paired per-rollout differences. Positive: the rollouts say Sniff now.

The gains are aggregated into the same cells as the observed statistics,
so the two line up row by row: a holding row (outcome, outcome/bucket)
takes its own decisions; a timing row (a bucket, under a factor level)
takes every decision at that bucket (its placement index), with the
decision's double, mover and mover's leadership standing for the maker's.
Each cell has n decisions, the mean gain with a 95% interval clustered by
round (as docs/statistics.md §3), and `agree`: the share of decisions where the
logged choice (the Sniff made now, outcome `played`, or not) is the one the
rollouts rank best.

Each decision's rollouts are seeded from the run's seed and the decision's
match, round and placement index, so the figures do not depend on the
number of workers or the order of the matches.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from analysis.parallel import chunked, ordered_map
from analysis.stats.load import Replayed
from analysis.stats.store import FactsStore
from analysis.stats.tdist import t975
from analysis.stats.timing import BUCKETS, Cell
from sniff import Match, view
from sniff.facts import Decision, replayed_rounds
from sniff.rollout import equities
from sniff.seeds import decision_seed
from sniff.tiles import IS_DOUBLE

CF_COLUMNS = ("cf_n", "cf_gain", "cf_ci_low", "cf_ci_high", "cf_agree")
"""The counterfactual columns added to each row of docs/statistics.md §5's long form."""
DECISION_COLUMNS = (
    "match_id",
    "round",
    "placement_index",
    "seat",
    "outcome",
    "best_sniff",
    "sniff_equity",
    "best_other",
    "other_equity",
    "gain",
    "gain_se",
    "rollouts_best",
    "agree",
)
_TIMING_FACTOR = {"mover_is_leader": "maker_is_leader", "mover_bot": "maker_bot"}


@dataclass(frozen=True, slots=True)
class Gain:
    """One Sniff decision's rollout comparison."""

    match_id: str
    round: int
    placement_index: int
    seat: int
    best_sniff: str
    sniff_equity: float
    best_other: str
    other_equity: float
    gain: float
    gain_se: float


def match_gains(
    match: Match,
    match_id: str,
    rollouts: int,
    seed: int,
    wanted: frozenset[tuple[int, int]] | None = None,
) -> list[Gain]:
    """The gain of every Sniff decision of `match` (replayed on a fresh match), or of those
    `wanted` (round, placement index)."""
    out = []

    def decided(replay: Match, decision: Decision) -> None:
        # the one definition of a Sniff decision and the one replay (sniff/facts.py)
        index = decision.placement_index
        if wanted is None or (replay.round_index, index) in wanted:
            out.append(_gain(replay, match_id, decision.seat, index, rollouts, seed))

    replayed_rounds(match, on_decision=decided)
    return out


def _gain(match: Match, match_id: str, seat: int, index: int, rollouts: int, seed: int) -> Gain:
    ranked = equities(
        view(match, seat),
        rollouts=rollouts,
        seed=decision_seed(seed, match_id, match.round_index, index),
    )
    sniff = next(m for m in ranked.moves if m.move.tile is not None and IS_DOUBLE[m.move.tile])
    other = next(m for m in ranked.moves if m.move.tile is not None and not IS_DOUBLE[m.move.tile])
    # one of the two is the best move: the other's loss is the difference, with its paired SE
    if sniff is ranked.best:
        gain, se = other.loss, other.loss_se
    else:
        gain, se = -sniff.loss, sniff.loss_se
    return Gain(
        match_id,
        match.round_index,
        index,
        seat,
        str(sniff.move),
        sniff.equity,
        str(other.move),
        other.equity,
        gain,
        se,
    )


Wanted = tuple[Match, str, frozenset[tuple[int, int]] | None]
"""A match, its id, and the (round, placement index) of the decisions to analyse."""


def _chunk_gains(job: tuple[list[Wanted], int, int]) -> list[Gain]:
    matches, rollouts, seed = job
    out = []
    for match, match_id, wanted in matches:
        out += match_gains(match, match_id, rollouts, seed, wanted)
    return out


def all_gains(
    matches: Iterable[Wanted],
    rollouts: int,
    seed: int,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    ray_address: str | None = None,
) -> dict[tuple[str, int, int], Gain]:
    """Every decision's gain, by (match id, round, placement index); as Ray tasks with
    `ray_address`."""
    jobs = ((chunk, rollouts, seed) for chunk in chunked(matches, 4))
    out: dict[tuple[str, int, int], Gain] = {}
    for gains in ordered_map(
        _chunk_gains, jobs, workers, preload=(__name__,), ray_address=ray_address
    ):
        for g in gains:
            out[(g.match_id, g.round, g.placement_index)] = g
        if progress is not None:
            progress(1)
    return out


_DECISIONS_SQL = """
SELECT d.match_id, d.round, d.placement_index, d.seats, d.seat, d."double", d.outcome,
       d.mover_is_leader, m.players, m.variant
FROM sniff_decisions AS d
JOIN sel USING (match_id)
JOIN match_facts AS m USING (match_id)
ORDER BY d.match_id, d.round, d.placement_index
"""


def bucket(index: int) -> str:
    """docs/statistics.md's timing bucket of a placement index."""
    if index <= 2:
        return BUCKETS[index]
    return "3-4" if index <= 4 else "5-7" if index <= 7 else "8+"


@dataclass(frozen=True, slots=True)
class CfCell:
    n: int
    gain: float
    ci_low: float | None
    ci_high: float | None
    agree: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "cf_n": self.n,
            "cf_gain": self.gain,
            "cf_ci_low": self.ci_low,
            "cf_ci_high": self.ci_high,
            "cf_agree": self.agree,
        }


def clustered(values: Sequence[tuple[Any, float]]) -> tuple[float, float | None, float | None]:
    """Mean and 95% interval of (cluster, value) pairs, clustered as docs/statistics.md §3:
    var = G/(G-1) Σ e_r² / n², mean ± t(0.975, G-1)·√var; no interval for G < 2."""
    n = len(values)
    mean = math.fsum(v for _, v in values) / n
    sums: dict[Any, float] = {}
    for key, v in values:
        sums[key] = sums.get(key, 0.0) + (v - mean)
    g = len(sums)
    if g < 2:
        return mean, None, None
    var = g / (g - 1) * math.fsum(e * e for e in sums.values()) / (n * n)
    half = t975(g - 1) * math.sqrt(var)
    return mean, mean - half, mean + half


def cf_cells(
    store: FactsStore, gains: dict[tuple[str, int, int], Gain]
) -> tuple[dict[tuple[str, str, str, str, str], CfCell], list[dict[str, Any]]]:
    """The cells, keyed as the observed rows (statistic, seats, factor, level, cell), and the
    per-decision rows; over the decisions of the selected matches (temp table `sel`)."""
    groups: dict[tuple[str, str, str, str, str], list[tuple[Any, float, bool]]] = {}
    decisions = []
    for (
        match_id,
        rnd,
        index,
        seats,
        seat,
        double,
        outcome,
        leads,
        players,
        variant,
    ) in store.con.execute(_DECISIONS_SQL).fetchall():
        g = gains.get((match_id, rnd, index))
        if g is None:
            continue
        agree = (outcome == "played") == (g.gain > 0)
        decisions.append(
            {
                "match_id": match_id,
                "round": rnd,
                "placement_index": index,
                "seat": seat,
                "outcome": outcome,
                "best_sniff": g.best_sniff,
                "sniff_equity": g.sniff_equity,
                "best_other": g.best_other,
                "other_equity": g.other_equity,
                "gain": g.gain,
                "gain_se": g.gain_se,
                "rollouts_best": "sniff" if g.gain > 0 else "other",
                "agree": agree,
            }
        )
        levels = [
            ("all", "all"),
            ("double", str(double)),
            ("mover_is_leader", "true" if leads else "false"),
            ("variant", variant),
        ]
        if players is not None:
            levels.append(("mover_bot", players[seat]))
            levels.append(("matchup", "|".join([*players[seat:], *players[:seat]])))
        b = bucket(index)
        item = ((match_id, rnd), g.gain, agree)
        for seat_group in (str(seats), "all"):
            for factor, level in levels:
                for statistic, f, cell in (
                    ("holding", factor, outcome),
                    ("holding", factor, f"{outcome}/{b}"),
                    ("timing", _TIMING_FACTOR.get(factor, factor), b),
                ):
                    groups.setdefault((statistic, seat_group, f, level, cell), []).append(item)
    cells = {}
    for key, items in groups.items():
        mean, low, high = clustered([(c, v) for c, v, _ in items])
        cells[key] = CfCell(len(items), mean, low, high, sum(a for _, _, a in items) / len(items))
    return cells, decisions


def with_cf(
    rows: Sequence[Cell], cells: dict[tuple[str, str, str, str, str], CfCell]
) -> list[dict[str, Any]]:
    """The observed rows as dicts, each with its counterfactual columns (null without one)."""
    out = []
    for row in rows:
        d = row.as_dict()
        cf = cells.get((row.statistic, row.seats, row.factor, row.level, row.cell))
        d.update(cf.as_dict() if cf is not None else dict.fromkeys(CF_COLUMNS))
        out.append(d)
    return out


def gains_of(
    store: FactsStore,
    kept: Sequence[Replayed],
    rollouts: int,
    seed: int,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    ray_address: str | None = None,
) -> dict[tuple[str, int, int], Gain]:
    """The gains of the selected matches' decisions (the matches in temp table `sel`)."""
    wanted: dict[str, set[tuple[int, int]]] = {}
    for match_id, rnd, index, *_ in store.con.execute(_DECISIONS_SQL).fetchall():
        wanted.setdefault(match_id, set()).add((rnd, index))
    matches = [
        (match, match_id, frozenset(wanted[match_id]))
        for match, match_id, *_ in kept
        if match_id in wanted
    ]
    return all_gains(matches, rollouts, seed, workers, progress, ray_address)

"""The Sniff-timing statistics (docs/statistics.md §2-§5): the SQL of timing.sql, plus t intervals.

DuckDB computes, per cell, n, the number of rounds, the mean and the
variance of the mean (independent rounds for §2, clustered by round for
§3); Python adds t(0.975, df) per cell (`tdist`) and orders the rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from analysis.stats.sql import statement
from analysis.stats.store import FactsStore, StatsError
from analysis.stats.tdist import t975
from sniff.facts import OUTCOMES

BUCKETS = ("lead", "1", "2", "3-4", "5-7", "8+", "none")
"""docs/statistics.md's timing buckets, in report order."""
FACTORS = ("all", "double", "maker_is_leader", "maker_bot", "matchup", "variant")
HOLDING_FACTORS = ("all", "double", "mover_is_leader", "mover_bot", "matchup", "variant")
SEATS_ORDER = ("2", "3", "4", "all")
COLUMNS = (
    "statistic",
    "seats",
    "factor",
    "level",
    "cell",
    "n",
    "rounds",
    "mean",
    "ci_low",
    "ci_high",
)
"""docs/statistics.md §5's long-form columns, in order."""

ROUND_FACT_COLUMNS = (
    "match_id",
    "round",
    "seats",
    "variant",
    "leader",
    "sniff",
    "maker",
    "sniff_index",
    "double",
    "orientation",
    "covered_after",
    "net",
    "sniff_points",
    "sniff_points_maker_side",
    "sniff_points_others",
)
"""docs/statistics.md §1's round-fact columns, in order."""


@dataclass(frozen=True, slots=True)
class Filters:
    """Which matches a statistic covers; None means any."""

    seats: int | None = None
    variant: str | None = None
    bots: tuple[str, ...] | None = None
    """Players per seat, the list repeated over the seats (`greedy,random`)."""
    sources: tuple[str, ...] | None = None
    run: str | None = None

    def describe(self) -> str:
        parts = []
        if self.seats is not None:
            parts.append(f"{self.seats} seats")
        if self.variant is not None:
            parts.append(f"variant {self.variant}")
        if self.bots is not None:
            parts.append(f"bots {','.join(self.bots)}")
        if self.sources is not None:
            parts.append("/".join(self.sources))
        if self.run is not None:
            parts.append(f"run {self.run}")
        return ", ".join(parts) or "no filter"

    def params(self) -> dict[str, Any]:
        return {
            "seats": self.seats,
            "variant": self.variant,
            "bots": None if self.bots is None else list(self.bots),
            "sources": None if self.sources is None else list(self.sources),
            "run": self.run,
        }


@dataclass(frozen=True, slots=True)
class Selection:
    matches: int
    complete_rounds: int
    incomplete_rounds: int


@dataclass(frozen=True, slots=True)
class Cell:
    """One row of docs/statistics.md §5's long form."""

    statistic: str
    seats: str
    factor: str
    level: str
    cell: str
    n: int
    rounds: int
    mean: float
    ci_low: float | None
    ci_high: float | None

    def as_dict(self) -> dict[str, Any]:
        return {c: getattr(self, c) for c in COLUMNS}


@dataclass(frozen=True, slots=True)
class TimingResult:
    selection: Selection
    rows: list[Cell]


def _fetch(store: FactsStore, name: str, params: dict[str, Any] | None = None) -> list[Any]:
    return store.con.execute(statement("timing.sql", name), params).fetchall()


def select(store: FactsStore, filters: Filters) -> Selection:
    """Keep the matches the filters name (temp table `sel`); refuse a filter that keeps none."""
    store.con.execute(statement("timing.sql", "macros")).fetchall()
    if filters.run is not None:
        found = store.con.execute(
            "SELECT count(*) FROM match_facts WHERE run = $run", {"run": filters.run}
        ).fetchall()
        if not found[0][0]:
            raise StatsError(f"no simulation run {filters.run!r} in these facts")
    _fetch(store, "select_matches", filters.params())
    for name in (
        "select_lineups",
        "select_seat_players",
        "select_seat_pairs",
        "select_variant_codes",
        "select_with_lineups",
    ):
        _fetch(store, name)
    matches, complete, incomplete = _fetch(store, "selection_counts")[0]
    if not matches:
        raise StatsError(f"no matches for the filter ({filters.describe()})")
    if not complete:
        raise StatsError(
            f"no complete round in the {matches} matches for the filter ({filters.describe()})"
        )
    return Selection(matches, complete, incomplete)


def interval(mean: float, var_mean: float | None, df: int) -> tuple[float | None, float | None]:
    """mean ± t(0.975, df)·√var; no interval without a variance (n or G below 2)."""
    if var_mean is None or df < 1:
        return None, None
    half = t975(df) * math.sqrt(var_mean)
    return mean - half, mean + half


def _cells(statistic: str, rows: Sequence[tuple[Any, ...]]) -> list[Cell]:
    out = []
    for seats, factor, level, cell, n, rounds, mean, var_mean in rows:
        low, high = interval(mean, var_mean, int(rounds) - 1)
        out.append(
            Cell(statistic, seats, factor, level, cell, int(n), int(rounds), mean, low, high)
        )
    return out


def _level_key(factor: str, level: str) -> tuple[int, str]:
    if factor == "double":
        return int(level), ""
    return 0, level


def _cell_key(statistic: str, cell: str) -> tuple[int, int]:
    if statistic == "timing":
        return 0, BUCKETS.index(cell)
    outcome, _, bucket = cell.partition("/")
    return OUTCOMES.index(outcome), -1 if not bucket else BUCKETS.index(bucket)


def row_order(row: Cell) -> tuple[Any, ...]:
    factors = FACTORS if row.statistic == "timing" else HOLDING_FACTORS
    return (
        row.statistic != "timing",
        SEATS_ORDER.index(row.seats),
        factors.index(row.factor),
        _level_key(row.factor, row.level),
        _cell_key(row.statistic, row.cell),
    )


def sniff_timing(store: FactsStore, filters: Filters) -> TimingResult:
    """Both tables of docs/statistics.md (timing and holding) over the matches the filters keep."""
    selection = select(store, filters)
    rows = _cells("timing", _fetch(store, "timing_cells"))
    rows += _cells("holding", _fetch(store, "holding_cells"))
    rows.sort(key=row_order)
    return TimingResult(selection, rows)


def rounds_facts(store: FactsStore, filters: Filters) -> tuple[Selection, list[dict[str, Any]]]:
    """docs/statistics.md §1's rows for the complete rounds the filters keep."""
    selection = select(store, filters)
    rows = _fetch(store, "rounds_facts")
    return selection, [dict(zip(ROUND_FACT_COLUMNS, r, strict=True)) for r in rows]

"""`sniff stats summary`: who wins, how points are made and lost, per seat and per bot.

DuckDB sums (summary.sql); Python turns each sum into its figure and interval:
proportions get a 95% Wilson score interval, means a 95% Student t interval,
ratios (points per placement, share of placements that score) none, because
placements of one round are not independent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from analysis.stats.sql import statement
from analysis.stats.store import FactsStore
from analysis.stats.tdist import t975
from analysis.stats.timing import SEATS_ORDER, Filters, Selection, select

Z975 = 1.959963984540054
"""The standard normal 0.975 quantile."""

STATISTICS = (
    "match_win_rate",
    "round_win_rate",
    "points_per_placement",
    "scoring_share",
    "points_per_round",
    "deductions_per_round",
    "domino_rate",
    "blocked_rate",
    "rounds_per_match",
    "leader_round_win_rate",
    "first_mover_match_win_rate",
)
"""In report order."""
BY_ORDER = ("seat", "bot", "all")
COLUMNS = ("statistic", "seats", "by", "level", "n", "value", "ci_low", "ci_high", "interval")


def wilson(successes: float, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (good also near 0 and 1, small n)."""
    p = successes / n
    z2 = Z975 * Z975
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z975 / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True, slots=True)
class SummaryResult:
    selection: Selection
    rows: list[dict[str, Any]]


def _finish(
    seats: str,
    statistic: str,
    kind: str,
    by: str,
    level: str,
    n: int,
    total: float,
    total_sq: float | None,
) -> dict[str, Any]:
    low: float | None = None
    high: float | None = None
    interval = ""
    value = total / n
    if kind == "proportion":
        low, high = wilson(total, n)
        interval = "wilson"
    elif kind == "mean" and total_sq is not None and n >= 2 and by != "bot":
        var = max(total_sq - total * total / n, 0.0) / (n - 1)
        half = t975(n - 1) * math.sqrt(var / n)
        low, high, interval = value - half, value + half, "t"
    return {
        "statistic": statistic,
        "seats": seats,
        "by": by,
        "level": level,
        "n": n,
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "interval": interval,
    }


def _order(row: dict[str, Any]) -> tuple[Any, ...]:
    level = row["level"]
    return (
        STATISTICS.index(row["statistic"]),
        SEATS_ORDER.index(row["seats"]),
        BY_ORDER.index(row["by"]),
        (0, int(level), "") if level.isdigit() else (1, 0, level),
    )


def summary(store: FactsStore, filters: Filters) -> SummaryResult:
    selection = select(store, filters)
    raw = store.con.execute(statement("summary.sql", "summary_cells")).fetchall()
    rows = [
        _finish(seats, statistic, kind, by, level, int(n), float(total), total_sq)
        for seats, statistic, kind, by, level, n, total, total_sq in raw
        if n
    ]
    rows.sort(key=_order)
    return SummaryResult(selection, rows)

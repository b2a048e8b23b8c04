"""How well each player decided: its performance over the decisions `sniff analyze` stored.

docs/analysis.md, "Performance", defines the figures. Per player, over every decision and
per phase of play (`analysis.rollout.analyze.PHASES`):

* the **performance rating**: 100 times the mean equity lost per decision (in hundredths of
  a point of the round's net result, as chess engines count centipawns; lower is better,
  0 is perfect);
* the **error rate**: the share of decisions that are errors (the loss beyond two standard
  errors, or any loss where the value is exact);
* the **accuracy**: the share of decisions at which the move played was the best.

Each comes with a 95% interval clustered by match (a match's decisions share its deals
and its opponent, so they are not independent): the ratio estimator's standard error over
matches, Student t on matches - 1 degrees of freedom.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from analysis.rollout.analyze import PHASES
from analysis.rollout.store import query_analyses
from analysis.sqlfiles import ID_SEPARATOR
from analysis.stats.sql import statement
from analysis.stats.tdist import t975

RATING_SCALE: Final = 100.0
"""Performance rating = this times the mean equity lost per decision (points)."""
ALL: Final = "all"

COLUMNS: Final = (
    "player",
    "phase",
    "matches",
    "decisions",
    "rating",
    "rating_low",
    "rating_high",
    "error_rate",
    "error_rate_low",
    "error_rate_high",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "exact",
)


@dataclass(frozen=True, slots=True)
class Settings:
    """The analysis settings whose stored results are summed (one set: the same decision
    analysed twice would count twice)."""

    rollouts: int
    policy: str
    seed: int
    rollouts_only: bool
    decisions: int


@dataclass(frozen=True, slots=True)
class Performance:
    settings: Settings
    settings_found: int
    """How many sets of settings the store holds (the one with most decisions is used)."""
    rows: list[dict[str, Any]]


def _interval(
    sums: Sequence[float], counts: Sequence[int]
) -> tuple[float, float | None, float | None]:
    """The ratio sum(sums) / sum(counts) with its 95% interval clustered by match (none from
    a single match)."""
    total, n = math.fsum(sums), sum(counts)
    mean = total / n
    k = len(counts)
    if k < 2:
        return mean, None, None
    var = math.fsum((s - mean * c) ** 2 for s, c in zip(sums, counts, strict=True))
    se = math.sqrt(k / (k - 1) * var) / n
    half = t975(k - 1) * se
    return mean, mean - half, mean + half


def performance(
    root: Path,
    *,
    match_ids: Sequence[str] | None = None,
    rollouts: int | None = None,
    seed: int | None = None,
) -> Performance:
    """Every player's figures (module text) over the analyses stored under `root`, of the
    matches `match_ids` only when given; NoAnalyses when none is stored, ValueError when
    none is left by the filters."""
    filters = {"rollouts": rollouts, "seed": seed}
    _, found = query_analyses(root, statement("players.sql", "settings"), [rollouts, seed])
    if not found:
        raise ValueError(f"no stored analysis has these settings ({filters})")
    chosen = Settings(*found[0])
    params = [chosen.rollouts, chosen.policy, chosen.seed, chosen.rollouts_only]
    params.append(None if match_ids is None else ID_SEPARATOR.join(match_ids))
    _, per_match = query_analyses(root, statement("players.sql", "per_match"), params)
    if not per_match:
        raise ValueError("no stored decision of the matches asked for")
    sums: dict[tuple[str, str, str], list[float]] = {}
    for player, phase, match, n, lost, errors, best, exact in per_match:
        for key in ((player, ALL, match), (player, phase, match)):
            into = sums.setdefault(key, [0, 0.0, 0, 0, 0])
            for i, value in enumerate((n, lost, errors, best, exact)):
                into[i] += value
    groups: dict[tuple[str, str], list[list[float]]] = {}
    for (player, phase, _), part in sums.items():
        groups.setdefault((player, phase), []).append(part)
    order = {p: i for i, p in enumerate((ALL, *PHASES))}
    rows = []
    for (player, phase), parts in sorted(
        groups.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], len(order)), kv[0][1])
    ):
        counts = [int(p[0]) for p in parts]
        rating = _interval([RATING_SCALE * p[1] for p in parts], counts)
        errors = _interval([float(p[2]) for p in parts], counts)
        accuracy = _interval([float(p[3]) for p in parts], counts)
        rows.append(
            {
                "player": player,
                "phase": phase,
                "matches": len(parts),
                "decisions": sum(counts),
                "rating": rating[0],
                "rating_low": rating[1],
                "rating_high": rating[2],
                "error_rate": errors[0],
                "error_rate_low": errors[1],
                "error_rate_high": errors[2],
                "accuracy": accuracy[0],
                "accuracy_low": accuracy[1],
                "accuracy_high": accuracy[2],
                "exact": int(sum(p[4] for p in parts)),
            }
        )
    return Performance(chosen, len(found), rows)

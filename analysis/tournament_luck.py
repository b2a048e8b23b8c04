"""Luck-adjusted results of a duplicate tournament (`sniff tournament --adjust-luck`).

Every match of the tournament is analysed for luck (analysis/rollout/luck.py:
the lot, each deal and each draw, each seat's side's equity change from its
own view). A bot's **luck-adjusted** net result in a match is its net result
minus its side's net luck; a head-to-head margin is adjusted by the two sides'
own luck. Both are then summed up exactly as the raw results are (a mean a
deal, Student t intervals over deals), so the two can be compared figure for
figure: the ratio of their per-deal variances is how many times fewer deals
the adjusted result needs for an interval of the same width. The ratio of the
per-match variances says the same for a tournament without duplicate deals
(each match on its own deal), where luck adjustment has the deal's luck to
remove; with duplicate deals, the rotations have already cancelled most of it.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analysis.rollout.luck import LuckSettings, analyse_luck
from analysis.rollout.source import MatchSpec, spec_from_events
from analysis.tournament import (
    Played,
    Settings,
    _by_deal,
    _interval_json,
    bot_values,
    margin_values,
    mean_interval,
)


@dataclass(frozen=True, slots=True)
class SeatLuck:
    """A seat's luck over one match: its side's own luck and its net luck (against the other
    sides'), with the net luck's standard error."""

    own: float
    net: float
    se: float


def specs_of(table: Any, played: Sequence[Played]) -> list[MatchSpec]:
    """The tournament's matches as specs, from the events it is about to log."""
    from dataclasses import replace

    from analysis.replay.source import table_match_events

    rows = table_match_events(table, [p.match_id for p in played])
    return [
        replace(spec_from_events(p.match_id, rows[p.match_id]), players=p.players) for p in played
    ]


def tournament_luck(
    table: Any,
    played: Sequence[Played],
    settings: LuckSettings,
    *,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    ray_address: str | None = None,
) -> dict[str, tuple[SeatLuck, ...]]:
    """Per match id, each seat's luck over the match."""
    specs = specs_of(table, played)
    out = {}
    for m in analyse_luck(
        specs, settings, workers=workers, progress=progress, ray_address=ray_address
    ):
        out[m.match_id] = tuple(SeatLuck(t.own, t.net, t.net_se) for t in m.totals)
    return out


def _adjusted_bot_value(
    matches: Sequence[Played], bot: str, luck: Mapping[str, Sequence[SeatLuck]]
) -> float | None:
    """`tournament.bot_values` of each match's net result less the seat's net luck."""
    return bot_values(matches, bot, lambda m, s: m.net(s) - luck[m.match_id][s].net)


def _adjusted_margin(
    matches: Sequence[Played], a: str, b: str, luck: Mapping[str, Sequence[SeatLuck]]
) -> float | None:
    """`tournament.margin_values` of each side's score less its own luck."""
    return margin_values(matches, a, b, lambda m, s: m.scores[s] - luck[m.match_id][s].own)


def adjusted_report(
    settings: Settings, played: Sequence[Played], luck: Mapping[str, Sequence[SeatLuck]]
) -> dict[str, Any]:
    """Per bot and per pair: the luck-adjusted mean a deal with its interval, beside the raw
    one's variance, and how many times fewer deals the adjusted figure needs for the same
    interval width (the ratio of the per-deal variances)."""
    deals = _by_deal(played)
    keys = sorted(deals)
    bots_out = []
    for bot in settings.bots:
        raw = [v for d in keys if (v := bot_values(deals[d], bot)) is not None]
        adj = [v for d in keys if (v := _adjusted_bot_value(deals[d], bot, luck)) is not None]
        row = {"bot": bot, **_interval_json(mean_interval(adj)), **_ratio(raw, adj)}
        raw_m, adj_m = _per_match(played, bot, luck)
        row["match_variance_ratio"] = _ratio(raw_m, adj_m)["variance_ratio"]
        bots_out.append(row)
    pairs_out = []
    for x, a in enumerate(settings.bots):
        for b in settings.bots[x + 1 :]:
            raw = [v for d in keys if (v := margin_values(deals[d], a, b)) is not None]
            adj = [v for d in keys if (v := _adjusted_margin(deals[d], a, b, luck)) is not None]
            if adj:
                pairs_out.append(
                    {
                        "bot": a,
                        "opponent": b,
                        **_interval_json(mean_interval(adj)),
                        **_ratio(raw, adj),
                    }
                )
    ses = [s.se for seats in luck.values() for s in seats]
    return {
        "results": bots_out,
        "head_to_head": pairs_out,
        "luck_se_median": round(statistics.median(ses), 4) if ses else None,
    }


def _per_match(
    played: Sequence[Played], bot: str, luck: Mapping[str, Sequence[SeatLuck]]
) -> tuple[list[float], list[float]]:
    """The bot's net result in each match it plays, raw and luck-adjusted: what a tournament
    without duplicate deals would average."""
    raw, adjusted = [], []
    for m in played:
        seats = [s for s, name in enumerate(m.players) if name == bot]
        if seats:
            raw.append(statistics.fmean(m.net(s) for s in seats))
            adjusted.append(statistics.fmean(m.net(s) - luck[m.match_id][s].net for s in seats))
    return raw, adjusted


def _ratio(raw: Sequence[float], adjusted: Sequence[float]) -> dict[str, Any]:
    if len(raw) < 2 or len(adjusted) < 2:
        return {"variance_ratio": None}
    va, vb = statistics.variance(raw), statistics.variance(adjusted)
    return {"variance_ratio": round(va / vb, 3) if vb > 0 else None}

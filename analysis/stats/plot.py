"""Figures for reports: matplotlib with the headless Agg backend (the `plot` extra).

matplotlib is imported inside each function, so the rest of the statistics
works without it and a missing install is reported where a plot is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analysis.stats.timing import BUCKETS, Cell

SEAT_PANELS = ("2", "3", "4")


class NothingToPlot(ValueError):
    """The selection has none of what a figure shows."""


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_timing(
    rows: Sequence[Cell], path: str, subtitle: str, cf: Mapping[Any, Any] | None = None
) -> None:
    """The observed timing value by bucket with its 95% intervals, one panel per seat count;
    with `cf` (analysis.stats.counterfactual's cells), the rollout gain of the Sniff now
    beside each bucket."""
    plt = _pyplot()
    panels = [
        s
        for s in SEAT_PANELS
        if any(c.statistic == "timing" and c.seats == s and c.factor == "all" for c in rows)
    ]
    fig, axes = plt.subplots(
        1, len(panels), figsize=(4.2 * len(panels) + 1, 4.4), sharey=True, squeeze=False
    )
    for ax, seats in zip(axes[0], panels, strict=True):
        cells = {
            c.cell: c
            for c in rows
            if c.statistic == "timing" and c.seats == seats and c.factor == "all"
        }
        buckets = [b for b in BUCKETS if b in cells]
        xs = range(len(buckets))
        means = [cells[b].mean for b in buckets]
        low = [cells[b].mean - (cells[b].ci_low or cells[b].mean) for b in buckets]
        high = [(cells[b].ci_high or cells[b].mean) - cells[b].mean for b in buckets]
        colours = ["#7f7f7f" if b == "none" else "#1f5fa8" for b in buckets]
        for x, m, lo, hi, colour in zip(xs, means, low, high, colours, strict=True):
            ax.errorbar([x], [m], yerr=[[lo], [hi]], fmt="o", color=colour, capsize=4, lw=1.5)
        for x, b in zip(xs, buckets, strict=True):
            g = (cf or {}).get(("timing", seats, "all", "all", b))
            if g is None:
                continue
            lo = g.gain - (g.ci_low if g.ci_low is not None else g.gain)
            hi = (g.ci_high if g.ci_high is not None else g.gain) - g.gain
            ax.errorbar(
                [x + 0.25], [g.gain], yerr=[[lo], [hi]], fmt="s", color="#d9822b", capsize=4,
                lw=1.5, label="rollouts: Sniff now - best other move" if x == 0 else None,
            )  # fmt: skip
        if cf:
            ax.legend(fontsize=7, loc="best")
        ax.axhline(0, color="black", lw=0.8)
        ax.set_xticks(list(xs), [f"{b}\nn={cells[b].n:,}" for b in buckets], fontsize=8)
        ax.set_title(f"{seats} seats")
        ax.set_xlabel("placement index of the Sniff (bucket), rounds")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("value of the round for the maker's side (points)")
    what = "\nsquares: rollouts, Sniff now minus best other move" if cf else ""
    fig.suptitle(
        f"Observed Sniff-timing value by bucket, mean and 95% t interval\n({subtitle}; "
        f"'none': rounds without a Sniff, leader's side){what}",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def plot_summary(rows: Sequence[dict[str, Any]], path: str, subtitle: str) -> None:
    """Match win rate per seat (with Wilson intervals) and points per round by source."""
    panels = [
        s
        for s in SEAT_PANELS
        if any(r["statistic"] == "match_win_rate" and r["seats"] == s for r in rows)
    ]
    if not panels:
        raise NothingToPlot("no finished match among the selected ones: nothing to plot")
    plt = _pyplot()
    fig, axes = plt.subplots(2, len(panels), figsize=(3.8 * len(panels) + 1, 7.2), squeeze=False)
    for col, seats in enumerate(panels):
        wins = [
            r
            for r in rows
            if r["statistic"] == "match_win_rate" and r["seats"] == seats and r["by"] == "seat"
        ]
        ax = axes[0][col]
        xs = range(len(wins))
        for x, r in zip(xs, wins, strict=True):
            lo = r["value"] - (r["ci_low"] if r["ci_low"] is not None else r["value"])
            hi = (r["ci_high"] if r["ci_high"] is not None else r["value"]) - r["value"]
            ax.errorbar([x], [r["value"]], yerr=[[lo], [hi]], fmt="o", color="#1f5fa8", capsize=4)
        sides = 2 if seats == "4" else int(seats)
        ax.axhline(1 / sides, color="black", lw=0.8, ls="--", label="fair share")
        ax.set_xticks(list(xs), [f"seat {r['level']}" for r in wins])
        ax.set_ylim(0, 1)
        ax.set_title(f"{seats} seats: matches won (95% Wilson)")
        ax.legend(fontsize=7)
        ax = axes[1][col]
        points = {
            r["level"]: r
            for r in rows
            if r["statistic"] == "points_per_round" and r["seats"] == seats and r["by"] == "seat"
        }
        lost = {
            r["level"]: r
            for r in rows
            if r["statistic"] == "deductions_per_round"
            and r["seats"] == seats
            and r["by"] == "seat"
        }
        levels = sorted(points)
        xs = range(len(levels))
        ax.bar([x - 0.2 for x in xs], [points[s]["value"] for s in levels], 0.4, label="scored")
        ax.bar(
            [x + 0.2 for x in xs],
            [-lost[s]["value"] for s in levels if s in lost],
            0.4,
            label="deducted",
            color="#c0504d",
        )
        ax.axhline(0, color="black", lw=0.8)
        ax.set_xticks(list(xs), [f"seat {s}" for s in levels])
        ax.set_title(f"{seats} seats: points per complete round")
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("share of matches won")
    axes[1][0].set_ylabel("points per round (seat's own)")
    fig.suptitle(f"Summary by seat ({subtitle})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)

"""What a verified bundle proves, said in a few lines (or one JSON object) for `sniff verify`.

The wording is the README's (readme.py), so the bundle and its verifier say the same.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .readme import NOT_PROVEN, PROVEN, utc_text
from .verify import BundleReport


def report_json(report: BundleReport) -> dict[str, Any]:
    head = report.tree_head
    return {
        "verified": True,
        "log_id": report.log_id,
        "tree_size": head.tree_size,
        "root_hash": head.root_hash,
        "timestamp_ms": head.timestamp_ms,
        "time": utc_text(head.timestamp_ms),
        **report.counts.to_json(),
        "rules_replayed": True,
        "notes": [{"match_id": m, "note": n} for m, n in report.notes],
        "proven": PROVEN,
        "not_proven": NOT_PROVEN,
    }


def report_lines(report: BundleReport) -> list[str]:
    head, counts = report.tree_head, report.counts
    lines = [
        f"verified: {counts.matches:,} matches ({counts.events:,} events) of log {report.log_id}",
        f"  against its signed tree head of {head.tree_size:,} matches at"
        f" {utc_text(head.timestamp_ms)} (root {head.root_hash[:16]}…),"
        f" {counts.checkpoints:,} checkpoints and {counts.tree_heads:,} earlier tree heads",
        f"proven: {PROVEN}; every chain, seed commitment and seeded deal; the rules replay of"
        " every match; the records are the events'",
        f"not proven: {NOT_PROVEN}",
    ]
    # The audit's notes, each once with how many matches it concerns: not defects.
    for note, count in Counter(note for _, note in report.notes).items():
        lines.append(f"note ({count:,} match{'es' if count != 1 else ''}): {note}")
    return lines

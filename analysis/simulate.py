"""Bot-played matches, as engine matches or RECORD.md records."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from service.engine import Match, make_bot, play_match, to_record


def bot_match(seats: int, seed: int, bots: Sequence[str], target: int | None = None) -> Match:
    """One complete match; seat i plays `bots[i % len(bots)]`, each bot seeded from `seed`."""
    players = [make_bot(bots[i % len(bots)], seed * 10 + i) for i in range(seats)]
    return play_match(Match(seats, seed=seed, target=target), players)


def bot_records(
    seats: int, count: int, seed: int, bots: Sequence[str], target: int | None = None
) -> Iterator[dict[str, Any]]:
    """`count` records with full claims, match i seeded with `seed + i`."""
    for i in range(count):
        match = bot_match(seats, seed + i, bots, target)
        yield to_record(match, f"s{seats}-seed{seed + i}")

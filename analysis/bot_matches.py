"""Bot-played matches, as engine matches or RECORD.md records."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sniff import Match, make_bot, play_match, to_record


def seat_bots(seats: int, bots: Sequence[str]) -> list[str]:
    """The bot of each seat: seat i plays `bots[i % len(bots)]`."""
    return [bots[i % len(bots)] for i in range(seats)]


def bot_match(
    seats: int,
    seed: int,
    bots: Sequence[str],
    target: int | None = None,
    *,
    variant: str = "american",
    round_limit: int | None = None,
) -> Match:
    """One complete match; seat i plays `bots[i % len(bots)]`, each bot seeded from `seed`."""
    players = [make_bot(name, seed * 10 + i) for i, name in enumerate(seat_bots(seats, bots))]
    match = Match(seats, seed=seed, target=target, variant=variant, round_limit=round_limit)
    return play_match(match, players)


def bot_records(
    seats: int,
    count: int,
    seed: int,
    bots: Sequence[str],
    target: int | None = None,
    *,
    variant: str = "american",
    round_limit: int | None = None,
) -> Iterator[dict[str, Any]]:
    """`count` records with full claims and their players, match i seeded with `seed + i`."""
    players = seat_bots(seats, bots)
    for i in range(count):
        match = bot_match(seats, seed + i, bots, target, variant=variant, round_limit=round_limit)
        yield to_record(match, f"s{seats}-seed{seed + i}", players=players)

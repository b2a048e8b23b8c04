"""Bot-played matches, as engine matches or RECORD.md records."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sniff import Bot, Match, make_bot, play_match, to_record
from sniff.seeds import bot_seed, match_seed


def seat_bots(seats: int, bots: Sequence[str]) -> list[str]:
    """The bot of each seat: seat i plays `bots[i % len(bots)]`."""
    return [bots[i % len(bots)] for i in range(seats)]


def bot_players(seats: int, bots: Sequence[str], seed: int) -> list[Bot]:
    """The players of a bot match seeded `seed`: seat i plays `bots[i % len(bots)]`, seeded
    `bot_seed(seed, i)` (sniff/seeds.py), whether it plays in process or through the service."""
    return [make_bot(name, bot_seed(seed, i)) for i, name in enumerate(seat_bots(seats, bots))]


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
    match = Match(seats, seed=seed, target=target, variant=variant, round_limit=round_limit)
    return play_match(match, bot_players(seats, bots, seed))


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
    """`count` records with full claims and their players, match i seeded `match_seed(seed, i)`."""
    players = seat_bots(seats, bots)
    for i in range(count):
        seeded = match_seed(seed, i)
        match = bot_match(seats, seeded, bots, target, variant=variant, round_limit=round_limit)
        yield to_record(match, f"s{seats}-seed{seeded}", players=players)

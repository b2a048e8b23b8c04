"""Bot-played matches: as engine matches, as docs/records.md records, or with their log events.

Seat i plays `bots[i % len(bots)]` seeded `bot_seed(seed, i)` (sniff/seeds.py) in every
one of them, so the same seed plays the same match whichever form it is wanted in.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from service.match_recorder import EventRecorder
from service.storage.chain import MatchSecrets
from service.storage.events import LogEvent
from sniff import Bot, Match, Phase, make_bot, play_match, to_record, view
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


def recorded_bot_match(
    match_id: str,
    seats: int,
    seed: int,
    bots: Sequence[str] = ("greedy", "random"),
    *,
    max_actions: int | None = None,
    variant: str = "american",
    round_limit: int | None = None,
    target: int | None = None,
    secrets: MatchSecrets | None = None,
    **settings: Any,
) -> EventRecorder:
    """`bot_match`'s match, its events kept as the service logs them (stopped after
    `max_actions` actions if given): for its `match` and its `events` both. `settings` go
    into its match_created detail (source, run_id, players, ...)."""
    recorder = EventRecorder(
        match_id,
        seats,
        seed=seed,
        target=target,
        variant=variant,
        round_limit=round_limit,
        secrets=secrets,
        first_deal=False,
        **settings,
    )
    play_bots(recorder, bot_players(seats, bots, seed), max_actions=max_actions)
    return recorder


def bot_match_events(
    match_id: str,
    seats: int,
    seed: int,
    bots: Sequence[str] = ("greedy", "random"),
    **options: Any,
) -> list[LogEvent]:
    """The log of one bot-played match: `recorded_bot_match`'s events (`options` are its
    keywords)."""
    return recorded_bot_match(match_id, seats, seed, bots, **options).events


def play_bots(
    recorder: EventRecorder, players: Sequence[Bot], *, max_actions: int | None = None
) -> None:
    """Play the recorder's match to its end (or `max_actions` actions), seat i choosing with
    `players[i]` from its own view, each round dealt from the match's seed."""
    match = recorder.match
    actions = 0
    while match.phase is not Phase.OVER:
        if max_actions is not None and actions >= max_actions:
            break
        if match.phase is Phase.AWAITING_DEAL:
            recorder.deal()
            continue
        recorder.apply(players[match.turn].choose(view(match, match.turn)))
        actions += 1

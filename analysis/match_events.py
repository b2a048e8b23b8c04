"""The event-log rows of a match played in-process, shaped as the service logs them.

Benchmarks and tests need logs of many matches without running a server
for each; `EventRecorder` applies actions through the engine and writes the
same events `service/hub.py` writes for the same actions (match_created,
round_dealt, action, round_ended with the hands left, match_ended), so the
readers see no difference. A test checks it against a real service's log.
Like the service's, its events are chained (docs/chain.md) under a chain
secret, and its match commits to its seed and reveals it at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analysis.bot_matches import bot_players
from service.hub import DEALING_VERSION
from service.match_events import action_events, deal_event
from service.storage import LogEvent
from service.storage.chain import GENESIS, MatchSecrets, seal, sealed_rows
from service.storage.events import EventRow
from sniff import ActionResult, Deal, Match, Move, Phase, view
from sniff.rules import RULES_VERSION


class EventRecorder:
    """A `Match` whose every deal and action is also kept as log events."""

    def __init__(
        self,
        match_id: str,
        seats: int,
        *,
        seed: int | None = None,
        target: int | None = None,
        deal: Deal | None = None,
        variant: str = "american",
        round_limit: int | None = None,
        secrets: MatchSecrets | None = None,
        sealed: bool = True,
        first_deal: bool = True,
        **settings: Any,
    ) -> None:
        """`sealed=False` leaves the events' hashes to `rows()` (faster for bulk work);
        `first_deal=False` leaves the first deal to the caller (who deals the match itself
        and calls `dealt`)."""
        self.match_id = match_id
        self.sealed = sealed
        self.match = Match(
            seats,
            seed=seed,
            target=target,
            auto_deal=False,
            variant=variant,
            round_limit=round_limit,
        )
        settings.setdefault("variant", variant)
        settings.setdefault("round_limit", round_limit)
        settings.setdefault("dealing", DEALING_VERSION)
        self.secrets = MatchSecrets.new(self.match.seed) if secrets is None else secrets
        self.events: list[LogEvent] = []
        self._log(
            LogEvent.match_created(
                match_id,
                seats=seats,
                target=self.match.target,
                seed=self.secrets.seed,
                rules_version=RULES_VERSION,
                **settings,
                **self.secrets.created_detail(),
            )
        )
        if first_deal:
            self.deal(deal)

    def _log(self, *events: LogEvent) -> None:
        if not self.sealed:
            self.events.extend(events)
            return
        head = self.events[-1].hash if self.events else GENESIS
        assert head is not None
        self.events.extend(seal(events, head, self.secrets.chain_secret))

    def rows(self) -> list[EventRow]:
        """The events as `events_all` rows, chained (logged_at left to the log)."""
        return sealed_rows(self.events, self.secrets.chain_secret)

    def deal(self, deal: Deal | None = None) -> None:
        """Deal the next round (from the seed, or the explicit `deal`) and log it."""
        self.match.deal(deal)
        self.dealt(explicit=deal is not None)

    def dealt(self, *, explicit: bool) -> None:
        """Log the deal the match has just made (for a caller that deals the match itself)."""
        self._log(deal_event(self.match_id, len(self.events), self.match, explicit))

    def apply(self, move: Move | str) -> None:
        """Apply one action for the seat to play and log it (and any round or match end)."""
        match = self.match
        if isinstance(move, str):
            move = Move.parse(move)
        round_index = match.round_index
        action_index = len(match.history[-1].actions)
        self.before()
        self.applied(match.apply(move), round_index, action_index)

    def before(self) -> None:
        """Told ahead of each action (`apply`'s, or one a caller applies itself); a plain
        recorder needs nothing."""

    def applied(self, result: ActionResult, round_index: int, action_index: int) -> None:
        """Log an action the match has just applied (for a caller that applies it itself,
        such as an audit that goes on to import the record)."""
        self._log(
            *action_events(
                self.match_id,
                len(self.events),
                self.match,
                result,
                round_index,
                action_index,
                self.secrets.revealed_detail(),
            )
        )


def bot_match_events(
    match_id: str,
    seats: int,
    seed: int,
    bots: Sequence[str] = ("greedy", "random"),
    *,
    max_actions: int | None = None,
    variant: str = "american",
    round_limit: int | None = None,
    secrets: MatchSecrets | None = None,
) -> list[LogEvent]:
    """The log of one bot-played match; stopped after `max_actions` actions if given."""
    return bot_match(
        match_id,
        seats,
        seed,
        bots,
        max_actions=max_actions,
        variant=variant,
        round_limit=round_limit,
        secrets=secrets,
    ).events


def bot_match(
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
    sealed: bool = True,
    **settings: Any,
) -> EventRecorder:
    """One bot-played match (seat i plays bot i, the bots in turn, seeded seed*10+i), its
    events kept; for its `match` and its `events` both. `settings` go into its
    match_created detail (source, run_id, players, ...)."""
    recorder = EventRecorder(
        match_id,
        seats,
        seed=seed,
        target=target,
        variant=variant,
        round_limit=round_limit,
        secrets=secrets,
        sealed=sealed,
        **settings,
    )
    play_bots(recorder, bots, seed, max_actions=max_actions)
    return recorder


def play_bots(
    recorder: EventRecorder, bots: Sequence[str], seed: int, *, max_actions: int | None = None
) -> None:
    """Play the recorder's match to its end (or `max_actions` actions): seat i plays bot
    `bots[i % len(bots)]` seeded `seed * 10 + i`, dealing each round from the seed."""
    match = recorder.match
    players = bot_players(match.seats, bots, seed)
    actions = 0
    while match.phase is not Phase.OVER:
        if max_actions is not None and actions >= max_actions:
            break
        if match.phase is Phase.AWAITING_DEAL:
            recorder.deal()
            continue
        recorder.apply(players[match.turn].choose(view(match, match.turn)))
        actions += 1

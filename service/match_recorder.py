"""A match played in process, its events kept as the service logs them: the bulk path.

Imports (each record the audit replays), simulations, tournaments, benchmarks
and tests need the logs of many matches without a server; `EventRecorder`
applies deals and actions through the engine and keeps the events the hub
logs for the same play (match_created, round_dealt, action, round_ended with
the hands left, match_ended), built by the same builder
(`service/match_events.py`), encoded by the one canonical encoder and linked
into the hash chain under the match's chain secret as they come
(`service/storage/chain.py`), so the readers and the audit see no
difference. A test holds its rows to the hub's way, byte for byte.

The events are kept as one tuple of row values each, not a `LogEvent` with its
checks, which cost more than the play: an import or a simulation makes
hundreds of events a match. The recorder also follows each round's facts as
it is played (`sniff.facts.RoundRecorder`), so a bulk writer needs no replay
to store them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from service.match_events import (
    action_content,
    created_event,
    deal_content,
    forfeit_event,
    match_ended_event,
    round_ended_content,
)
from service.storage.chain import EventChain, MatchSecrets
from service.storage.events import (
    COLUMNS,
    EventContent,
    EventRow,
    LogEvent,
    content_of,
    from_row,
)
from sniff import ActionResult, Deal, Match, Move
from sniff.dealing import DEALING_VERSION
from sniff.facts import RoundFacts, RoundRecorder


class EventRecorder:
    """A `Match` whose every deal and action is also kept as log events, chained."""

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
        first_deal: bool = True,
        ended: Mapping[str, Any] | None = None,
        **settings: Any,
    ) -> None:
        """`settings` go into the match_created detail (source, run_id, players, ...), and
        `ended` into the match_ended one, beside the reveal (a tournament's salt);
        `first_deal=False` leaves the first deal to the caller (who deals the match itself
        and calls `dealt`, or calls `deal`)."""
        self.match_id = match_id
        self._ended = dict(ended or {})
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
        self._chain = EventChain(match_id, self.secrets.chain_secret)
        # The rows' values that vary (match_id and logged_at do not, seq counts: see
        # `columns`), kind to hash in `COLUMNS` order: one tuple an event, one append.
        self._rows: list[tuple[Any, ...]] = []
        self._rounds: list[RoundRecorder] = []
        self._round: RoundRecorder | None = None  # the round in play's, `_rounds[-1]`
        self._add_event(created_event(match_id, self.match, self.secrets, **settings))
        if first_deal:
            self.deal(deal)

    def _add(self, content: EventContent) -> None:
        """Link the next event, `content` (engine values, which need no checks), and keep
        its row."""
        rows = self._rows
        rows.append(self._chain.row(len(rows), content))

    def _add_event(self, event: LogEvent) -> None:
        """Link an event built as a `LogEvent` (its `seq` is the next one), checked."""
        assert event.seq == len(self._rows)
        self._rows.append(self._chain.checked_row(self.match_id, event.seq, content_of(event)))

    def __len__(self) -> int:
        """How many events the match has so far."""
        return len(self._rows)

    def columns(self) -> list[Sequence[Any]]:
        """The events as the columns of `events_all` rows, in `COLUMNS` order (chained,
        logged_at left to the log)."""
        n = len(self._rows)
        if not n:
            return [[] for _ in COLUMNS]
        return [[self.match_id] * n, range(n), *zip(*self._rows, strict=True), [None] * n]

    def rows(self) -> list[EventRow]:
        """The events as `events_all` rows, chained (logged_at left to the log)."""
        return list(zip(*self.columns(), strict=True))

    @property
    def events(self) -> list[LogEvent]:
        """The events as `LogEvent`s, with their hashes (for a test, or a log's `append`)."""
        return [from_row(row) for row in self.rows()]

    def rounds(self) -> list[RoundFacts]:
        """The facts of the rounds played, as followed during play (no replay)."""
        history = self.match.history
        return [rec.facts(history[i]) for i, rec in enumerate(self._rounds)]

    def deal(self, deal: Deal | None = None) -> None:
        """Deal the next round (from the seed, or the explicit `deal`) and log it."""
        self.match.deal(deal)
        self.dealt(explicit=deal is not None)

    def dealt(self, *, explicit: bool) -> None:
        """Log the deal the match has just made (for a caller that deals the match itself)."""
        self._add(deal_content(self.match, explicit))
        self._round = RoundRecorder(self.match)
        self._rounds.append(self._round)

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
        """Told ahead of each action (`apply`'s, or one a caller applies itself)."""
        assert self._round is not None
        self._round.before(self.match)

    def applied(self, result: ActionResult, round_index: int, action_index: int) -> None:
        """Log an action the match has just applied (for a caller that applies it itself,
        such as an audit that goes on to import the record)."""
        match = self.match
        assert self._round is not None
        self._round.after(match, result.seat, result.move, result.points)
        rows, chain = self._rows, self._chain
        rows.append(chain.row(len(rows), action_content(result, round_index, action_index)))
        end = result.round_end
        if end is not None:
            rows.append(chain.row(len(rows), round_ended_content(match, end, round_index)))
        if result.match_over:
            reveal = {**self.secrets.revealed_detail(), **self._ended}
            self._add_event(match_ended_event(self.match_id, len(self), match, result, reveal))

    def forfeited(self, seat: int, round_index: int, action_index: int) -> None:
        """Log the end of a match `seat` has just forfeited (`Match.forfeit`) before action
        `action_index` of round `round_index`, as the service logs it (docs/service.md)."""
        reveal = {**self.secrets.revealed_detail(), **self._ended}
        self._add_event(
            forfeit_event(
                self.match_id, len(self), self.match, seat, round_index, action_index, reveal
            )
        )

"""The hub's way of logging a match, to hold the bulk recorder's rows to, byte for byte."""

from __future__ import annotations

from service.match_events import action_events, deal_event
from service.match_recorder import EventRecorder
from service.storage.chain import GENESIS, seal
from service.storage.events import EventRow, LogEvent, from_row, to_rows
from sniff import Match


def hub_way_rows(recorder: EventRecorder, *, explicit: bool) -> list[EventRow]:
    """The recorder's match logged as the hub logs one: replayed on a fresh match, each
    event a `LogEvent` made by the builder (`deal_event`, `action_events`), sealed by
    `chain.seal` (the generic canonical encoding, every check), stored by `to_rows`.
    `explicit`: its deals were given (an import), not made from its seed. The match_created
    event is the recorder's own, re-sealed (the hub's settings differ: its tokens)."""
    played = recorder.match
    secrets = recorder.secrets
    created = from_row(recorder.rows()[0])
    match = Match(
        played.seats,
        seed=played.seed,
        target=played.target,
        variant=played.variant.name,
        round_limit=played.round_limit,
        auto_deal=False,
    )
    events: list[LogEvent] = [LogEvent(created.match_id, 0, "match_created", detail=created.detail)]
    match_id = recorder.match_id
    reveal = secrets.revealed_detail()
    for log in played.history:
        match.deal(log.deal if explicit else None)
        events.append(deal_event(match_id, len(events), match, explicit))
        for action_index, move in enumerate(log.actions):
            round_index = match.round_index
            result = match.apply(move)
            events += action_events(
                match_id, len(events), match, result, round_index, action_index, reveal
            )
    return to_rows(seal(events, GENESIS, secrets.chain_secret))

"""The event-log rows of what happens to a match: one builder for every writer.

The service's hub, and the recorder of imports, simulations, tournaments,
analyses and benchmarks (`service/match_recorder.py`), log the same events for
the same play, so each kind is built here once, from the engine's own values:
its content (the row's values after match_id and seq, detail included) by a
`*_content` function, as a `LogEvent` by the `*_event` ones. Encoding and
sealing them into the hash chain is `service/storage/chain.py`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from service.storage.chain import MatchSecrets
from service.storage.events import EventContent, LogEvent
from sniff import ActionResult, Match, RoundEnd
from sniff.rules import RULES_VERSION
from sniff.tiles import NAMES, tiles_of


def as_event(match_id: str, seq: int, content: EventContent) -> LogEvent:
    """The `LogEvent` of `content`, at `seq` of the match."""
    return LogEvent(match_id, seq, *content)


def created_event(match_id: str, match: Match, secrets: MatchSecrets, **settings: Any) -> LogEvent:
    """The `match_created` event (seq 0): the match's settings, then `settings` (the writer's
    own: tokens, source, players, ...), then the secrets' commitment (their seed is the one
    logged: None for a match with no seeded deal)."""
    return LogEvent.match_created(
        match_id,
        seats=match.seats,
        target=match.target,
        seed=secrets.seed,
        rules_version=RULES_VERSION,
        **settings,
        **secrets.created_detail(),
    )


def deal_content(
    match: Match, explicit: bool, seat_entropy: Sequence[bytes] | None = None
) -> EventContent:
    """The `round_dealt` content of the match's current round (just dealt): LogEvent.round_dealt's
    detail and how the deal was made, one event, not two; for the first deal of a match with
    seat entropy, the entropy each seat gave (in seat order), so that its seed can be derived
    again (docs/dealing.md)."""
    log = match.history[-1]
    deal = log.deal
    leader = int(deal.leader)  # a plain int even from a record built in code
    detail = {
        "hands": [[NAMES[t] for t in hand] for hand in deal.hands],
        "boneyard": [NAMES[t] for t in deal.boneyard],
        "leader": leader,
        "leader_choice": log.leader_choice.value,
        "dealt_by": "request" if explicit else "seed",
    }
    if seat_entropy is not None:
        detail["seat_entropy"] = [bytes(e).hex() for e in seat_entropy]
    return ("round_dealt", match.round_index, None, leader, None, None, None, None, detail)


def action_content(result: ActionResult, round_index: int, action_index: int) -> EventContent:
    """The `action` content of one action the match has applied."""
    drawn = result.drawn
    return (
        "action",
        round_index,
        action_index,
        result.seat,
        result.move.text,
        None if drawn is None else NAMES[drawn],
        result.points,
        result.ends_sum,
        None,
    )


def round_ended_content(match: Match, end: RoundEnd, round_index: int) -> EventContent:
    """The `round_ended` content of the round the match has just ended: LogEvent.round_ended's
    detail and every hand left, one event, not two."""
    detail = {
        "end": end.kind.value,
        "finisher": end.finisher,
        "pips": list(end.pips),
        "deductions": list(end.deductions),
        "scores": list(end.scores),
        "hands": [[NAMES[t] for t in tiles_of(hand)] for hand in match.hands],
    }
    return ("round_ended", round_index, None, end.finisher, None, None, None, None, detail)


def match_ended_event(
    match_id: str, seq: int, match: Match, result: ActionResult, reveal: Mapping[str, Any]
) -> LogEvent:
    """The `match_ended` event of the action `match` has just applied to end the match, with
    `reveal` (the secrets a finished match shows)."""
    return LogEvent.match_ended(
        match_id,
        seq,
        winner=result.winner,
        scores=match.seat_scores(),
        round_limit_reached=result.round_end is not None,
        rounds=len(match.history),
        **reveal,
    )


def forfeit_event(
    match_id: str,
    seq: int,
    match: Match,
    seat: int,
    round_index: int,
    action_index: int,
    reveal: Mapping[str, Any],
) -> LogEvent:
    """The `match_ended` event of a match `seat` has just forfeited out of time
    (`Match.forfeit`), before action `action_index` of round `round_index`: its detail names
    where (`forfeit`), beside `reveal` (docs/service.md, "Time controls")."""
    return LogEvent.match_ended(
        match_id,
        seq,
        winner=match.winner,
        scores=match.seat_scores(),
        rounds=len(match.history),
        **reveal,
        forfeit={"seat": seat, "round": round_index, "action": action_index},
    )


def deal_event(
    match_id: str,
    seq: int,
    match: Match,
    explicit: bool,
    seat_entropy: Sequence[bytes] | None = None,
) -> LogEvent:
    """The `round_dealt` event of the match's current round (just dealt)."""
    return as_event(match_id, seq, deal_content(match, explicit, seat_entropy))


def action_events(
    match_id: str,
    seq: int,
    match: Match,
    result: ActionResult,
    round_index: int,
    action_index: int,
    reveal: Mapping[str, Any],
) -> list[LogEvent]:
    """The events of one action `match` has just applied: the action, the round's end with
    every hand left, and the match's end with `reveal`."""
    events = [as_event(match_id, seq, action_content(result, round_index, action_index))]
    end = result.round_end
    if end is not None:
        events.append(as_event(match_id, seq + 1, round_ended_content(match, end, round_index)))
    if result.match_over:
        events.append(match_ended_event(match_id, seq + len(events), match, result, reveal))
    return events

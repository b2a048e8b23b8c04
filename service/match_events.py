"""The event-log rows of what happens to a match: one builder for every writer.

The service's hub, the in-process recorder of analyses and benchmarks
(`analysis/match_events.py`), imports and simulations all log the same
events for the same play, so each kind is built here once, from the engine's
own values. Sealing them into the hash chain is the caller's business
(`service/storage/chain.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.storage.events import LogEvent
from sniff import ActionResult, Match
from sniff.tiles import NAMES


def deal_event(match_id: str, seq: int, match: Match, explicit: bool) -> LogEvent:
    """The `round_dealt` event of the match's current round (just dealt)."""
    log = match.history[-1]
    deal = log.deal
    # LogEvent.round_dealt's detail, and how the deal was made: one event, not two
    return LogEvent(
        match_id,
        seq,
        "round_dealt",
        round=match.round_index,
        seat=deal.leader,
        detail={
            "hands": [[NAMES[t] for t in h] for h in deal.hands],
            "boneyard": [NAMES[t] for t in deal.boneyard],
            "leader": deal.leader,
            "leader_choice": log.leader_choice.value,
            "dealt_by": "request" if explicit else "seed",
        },
    )


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
    every hand left, and the match's end with `reveal` (the secrets a finished match shows)."""
    events = [
        LogEvent.action(
            match_id,
            seq,
            round=round_index,
            action_index=action_index,
            seat=result.seat,
            move=str(result.move),
            drawn=None if result.drawn is None else str(result.drawn),
            points=result.points,
            ends_sum=result.ends_sum,
        )
    ]
    end = result.round_end
    if end is not None:
        # LogEvent.round_ended's detail, and every hand left: one event, not two
        events.append(
            LogEvent(
                match_id,
                seq + 1,
                "round_ended",
                round=round_index,
                seat=end.finisher,
                detail={
                    "end": end.kind.value,
                    "finisher": end.finisher,
                    "pips": list(end.pips),
                    "deductions": list(end.deductions),
                    "scores": list(end.scores),
                    "hands": [[NAMES[t] for t in match.hand(s)] for s in range(match.seats)],
                },
            )
        )
    if result.match_over:
        events.append(match_ended_event(match_id, seq + len(events), match, result, reveal))
    return events


def match_ended_event(
    match_id: str, seq: int, match: Match, result: ActionResult, reveal: Mapping[str, Any]
) -> LogEvent:
    """The `match_ended` event of the action `match` has just applied to end the match."""
    return LogEvent.match_ended(
        match_id,
        seq,
        winner=result.winner,
        scores=match.seat_scores(),
        round_limit_reached=result.round_end is not None,
        rounds=len(match.history),
        **reveal,
    )

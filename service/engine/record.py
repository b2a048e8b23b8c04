"""RECORD.md match records: build one from a match, read one, replay one.

Records are plain JSON-ready dicts; reading and writing files is the
caller's business (the engine does no I/O).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service.engine.errors import NotationError, SniffError
from service.engine.match import Deal, Match, Phase, RoundLog
from service.engine.moves import Move
from service.engine.rules import RULES_VERSION, SEAT_COUNTS, TARGET
from service.engine.tiles import NAMES, Tile

FORMAT = RULES_VERSION


class MalformedRecord(SniffError):
    """A record that is not a RECORD.md match: wrong shape, unknown tile or move text."""

    kind = "malformed"

    def __init__(self, reason: str, round: int | None = None, action: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.round = round
        self.action = action


@dataclass(frozen=True, slots=True)
class RoundClaims:
    """What a scorekeeper wrote down for one round; None where nothing was claimed."""

    points: tuple[int | None, ...] | None = None
    end: str | None = None
    deductions: tuple[int, ...] | None = None
    scores: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class RecordRound:
    deal: Deal
    actions: tuple[Move, ...]
    claims: RoundClaims


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A parsed record. Deals are read but not yet checked (see `Deal.check`)."""

    id: str | None
    seats: int
    target: int
    rounds: tuple[RecordRound, ...]
    winner: int | None = None
    """The claimed winner, if any."""
    scores: tuple[int, ...] | None = None
    """The claimed final scores, if any."""


# -- writing --------------------------------------------------------------


def _round_to_json(log: RoundLog, last_won: bool) -> dict[str, Any]:
    claims: dict[str, Any] = {"points": list(log.points)}
    if log.end is not None:
        claims["end"] = log.end.kind.value
        claims["deductions"] = list(log.end.deductions)
    if log.end is not None or last_won:
        claims["scores"] = list(log.scores)
    return {
        "leader": log.deal.leader,
        "hands": [[NAMES[t] for t in h] for h in log.deal.hands],
        "boneyard": [NAMES[t] for t in log.deal.boneyard],
        "actions": [str(m) for m in log.actions],
        "claims": claims,
    }


def to_record(match: Match, match_id: str | None = None) -> dict[str, Any]:
    """The RECORD.md record of everything played so far, with full claims."""
    over = match.phase is Phase.OVER
    rounds = [
        _round_to_json(log, over and i == len(match.history) - 1)
        for i, log in enumerate(match.history)
    ]
    record: dict[str, Any] = {"format": FORMAT}
    if match_id is not None:
        record["id"] = match_id
    record["seats"] = match.seats
    record["target"] = match.target
    record["rounds"] = rounds
    claims: dict[str, Any] = {}
    if over:
        claims["winner"] = match.winner
    claims["scores"] = list(match.seat_scores())
    record["claims"] = claims
    return record


# -- reading --------------------------------------------------------------


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _tiles(value: object, what: str, round_index: int) -> tuple[Tile, ...]:
    if not isinstance(value, list):
        raise MalformedRecord(f"{what} must be a list of tiles", round_index)
    try:
        return tuple(Tile.parse(v) for v in value)
    except NotationError as e:
        raise MalformedRecord(f"{what}: {e}", round_index) from None


def _int_list(
    value: object, what: str, round_index: int | None, nulls: bool = False
) -> tuple[Any, ...]:
    if not isinstance(value, list) or not all(_is_int(v) or (nulls and v is None) for v in value):
        kind = "integers or nulls" if nulls else "integers"
        raise MalformedRecord(f"{what} must be a list of {kind}", round_index)
    return tuple(value)


def _round(obj: object, index: int, seats: int) -> RecordRound:
    if not isinstance(obj, Mapping):
        raise MalformedRecord("a round must be a JSON object", index)
    for key in ("leader", "hands", "boneyard", "actions"):
        if key not in obj:
            raise MalformedRecord(f"the round has no {key!r}", index)
    leader = obj["leader"]
    if not _is_int(leader):
        raise MalformedRecord("'leader' must be a seat number", index)
    hands = obj["hands"]
    if not isinstance(hands, list):
        raise MalformedRecord("'hands' must be a list of hands", index)
    deal = Deal(
        tuple(_tiles(h, f"hands[{i}]", index) for i, h in enumerate(hands)),
        _tiles(obj["boneyard"], "boneyard", index),
        leader,
    )
    actions = obj["actions"]
    if not isinstance(actions, list):
        raise MalformedRecord("'actions' must be a list of moves", index)
    moves = []
    for k, text in enumerate(actions):
        try:
            moves.append(Move.parse(text))
        except NotationError as e:
            raise MalformedRecord(str(e), index, k) from None
    claims_obj = obj.get("claims", {})
    if not isinstance(claims_obj, Mapping):
        raise MalformedRecord("'claims' must be a JSON object", index)
    end = claims_obj.get("end")
    if end is not None and end not in ("domino", "blocked"):
        raise MalformedRecord("claims 'end' must be 'domino' or 'blocked'", index)
    claims = RoundClaims(
        points=_int_list(claims_obj["points"], "claims 'points'", index, nulls=True)
        if claims_obj.get("points") is not None
        else None,
        end=end,
        deductions=_int_list(claims_obj["deductions"], "claims 'deductions'", index)
        if claims_obj.get("deductions") is not None
        else None,
        scores=_int_list(claims_obj["scores"], "claims 'scores'", index)
        if claims_obj.get("scores") is not None
        else None,
    )
    return RecordRound(deal, tuple(moves), claims)


def parse_record(obj: object) -> MatchRecord:
    """Read a decoded JSON record; raise `MalformedRecord`, with its place, if it is not one."""
    if not isinstance(obj, Mapping):
        raise MalformedRecord("a match record must be a JSON object")
    fmt = obj.get("format", FORMAT)
    if fmt != FORMAT:
        raise MalformedRecord(f"unknown format {fmt!r} (this reader knows {FORMAT!r})")
    match_id = obj.get("id")
    if match_id is not None and not isinstance(match_id, str | int):
        raise MalformedRecord("'id' must be a string")
    seats = obj.get("seats")
    if not _is_int(seats) or seats not in SEAT_COUNTS:
        raise MalformedRecord(f"'seats' must be 2, 3 or 4, not {seats!r}")
    assert isinstance(seats, int)
    target = obj.get("target", TARGET[seats])
    if not _is_int(target) or target <= 0:
        raise MalformedRecord(f"'target' must be a positive integer, not {target!r}")
    rounds = obj.get("rounds")
    if not isinstance(rounds, list):
        raise MalformedRecord("'rounds' must be a list of rounds")
    claims = obj.get("claims", {})
    if not isinstance(claims, Mapping):
        raise MalformedRecord("'claims' must be a JSON object")
    winner = claims.get("winner")
    if winner is not None and not _is_int(winner):
        raise MalformedRecord("claims 'winner' must be a seat number")
    scores = claims.get("scores")
    return MatchRecord(
        id=None if match_id is None else str(match_id),
        seats=seats,
        target=target,
        rounds=tuple(_round(r, i, seats) for i, r in enumerate(rounds)),
        winner=winner,
        scores=_int_list(scores, "claims 'scores'", None) if scores is not None else None,
    )


def replay(record: MatchRecord | Mapping[str, Any]) -> Match:
    """Replay a record's deals and actions through the engine; raise at the first illegal one.

    Claims are not checked here (that is an audit's job); the returned match
    holds the engine's own figures.
    """
    rec = record if isinstance(record, MatchRecord) else parse_record(record)
    match = Match(rec.seats, target=rec.target, auto_deal=False)
    for rnd in rec.rounds:
        match.deal(rnd.deal)
        for move in rnd.actions:
            match.apply(move)
    return match

"""docs/records.md match records: build one from a match, read one, replay one.

Records are plain JSON-ready dicts; reading and writing files is the
caller's business (the engine does no I/O). American matches are written in
format `american-sniff/1`, so every tool that reads version 1 keeps working;
the other variants in `sniff/2`, which names the variant. Both are read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sniff.errors import NotationError, SniffError, UnknownVariant
from sniff.match import Deal, Match, Phase, RoundLog
from sniff.moves import MOVES_BY_TEXT, Move
from sniff.rules import RULES_VERSION, SEAT_COUNTS, TARGET
from sniff.tiles import NAMES, TILES_BY_NAME, Tile
from sniff.variants import AMERICAN, Variant, variant_named

FORMAT = RULES_VERSION
"""The format American matches are written in (`american-sniff/1`)."""
FORMAT_V2: Final = "sniff/2"
"""The format of every variant, naming it in the `variant` field."""
FORMATS: Final = (FORMAT, FORMAT_V2)


class MalformedRecord(SniffError):
    """A record that is not a docs/records.md match: wrong shape, unknown tile or move text.

    `kind` is the audit word: `malformed` for the record's shape, `unparsable_action`
    for an action that is not notation, `unknown_variant` for a variant no reader knows.
    """

    kind = "malformed"

    def __init__(
        self,
        reason: str,
        round: int | None = None,
        action: int | None = None,
        kind: str = "malformed",
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.round = round
        self.action = action
        self.kind = kind


@dataclass(frozen=True, slots=True)
class RoundClaims:
    """What a scorekeeper wrote down for one round; None where nothing was claimed."""

    points: tuple[int | None, ...] | None = None
    end: str | None = None
    deductions: tuple[int, ...] | None = None
    scores: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class OutOfTimeAt:
    """A seat out of time at action `action` of round `round`: where it forfeited (the
    record's `forfeit`), or an action the service chose for it (an entry of `timeouts`)."""

    seat: int
    round: int
    action: int


def _place(value: object, what: str) -> OutOfTimeAt:
    """A `forfeit` or `timeouts` entry: an object with a seat, a round and an action."""
    if not isinstance(value, Mapping) or not all(
        _is_int(value.get(k)) and value[k] >= 0 for k in ("seat", "round", "action")
    ):
        raise MalformedRecord(f"{what} must be an object with a 'seat', a 'round' and an 'action'")
    return OutOfTimeAt(value["seat"], value["round"], value["action"])


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
    """The claimed winner, if any (None also for a claimed draw: see `winner_claimed`)."""
    scores: tuple[int, ...] | None = None
    """The claimed final scores, if any."""
    variant: Variant = AMERICAN
    players: tuple[str, ...] | None = None
    """Who played each seat (a bot's name or a person's), when the record says."""
    round_limit: int | None = None
    winner_claimed: bool = False
    """True when the record claims a winner, or claims `null`: a draw at the round limit."""
    forfeit: OutOfTimeAt | None = None
    """The seat that forfeited the match out of time, and where (a served match with a
    forfeit time control: docs/service.md), when the record says."""
    timeouts: tuple[OutOfTimeAt, ...] = ()
    """The actions the service chose for a seat out of time (the `timeouts` field)."""


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


def to_record(
    match: Match, match_id: str | None = None, players: Sequence[str] | None = None
) -> dict[str, Any]:
    """The docs/records.md record of everything played so far, with full claims."""
    over = match.phase is Phase.OVER
    rounds = [
        _round_to_json(log, over and log.end is None and i == len(match.history) - 1)
        for i, log in enumerate(match.history)
    ]
    american = match.variant is AMERICAN
    record: dict[str, Any] = {"format": FORMAT if american else FORMAT_V2}
    if not american:
        record["variant"] = match.variant.name
    if match_id is not None:
        record["id"] = match_id
    record["seats"] = match.seats
    record["target"] = match.target
    if players is not None:
        record["players"] = list(players)
    if match.round_limit is not None:
        record["round_limit"] = match.round_limit
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
    if set(map(type, value)) <= _STR:  # names as written (`a-b`, `b-a`): the common case
        try:
            return tuple([TILES_BY_NAME[v] for v in value])
        except KeyError:
            pass  # another spelling, or not a tile: parsed one by one
    try:
        return tuple(Tile.parse(v) for v in value)
    except NotationError as e:
        raise MalformedRecord(f"{what}: {e}", round_index) from None


_STR: Final = frozenset({str})
_INTS: Final = frozenset({int})
_INTS_OR_NULLS: Final = frozenset({int, type(None)})


def _int_list(
    value: object, what: str, round_index: int | None, nulls: bool = False
) -> tuple[Any, ...]:
    if isinstance(value, list) and set(map(type, value)) <= (_INTS_OR_NULLS if nulls else _INTS):
        return tuple(value)  # plain ints (and nulls): the common case, checked in one pass
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
        # canonical text, the common case, by the table `Move.parse` reads it from
        move = MOVES_BY_TEXT.get(text) if type(text) is str else None
        if move is None:
            try:
                move = Move.parse(text)
            except NotationError as e:
                raise MalformedRecord(str(e), index, k, kind="unparsable_action") from None
        moves.append(move)
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
    if fmt not in FORMATS:
        raise MalformedRecord(
            f"unknown format {fmt!r} (this reader knows {FORMAT!r} and {FORMAT_V2!r})"
        )
    if fmt == FORMAT:
        if "variant" in obj:
            raise MalformedRecord(f"a {FORMAT!r} record is American and has no 'variant'")
        variant = AMERICAN
    else:
        if "variant" not in obj:
            raise MalformedRecord(f"a {FORMAT_V2!r} record must name its 'variant'")
        try:
            variant = variant_named(obj["variant"])
        except UnknownVariant as e:
            raise MalformedRecord(str(e), kind="unknown_variant") from None
    players = obj.get("players")
    if players is not None and not (
        isinstance(players, list) and all(isinstance(p, str) and p for p in players)
    ):
        raise MalformedRecord("'players' must be a list of names, one per seat")
    round_limit = obj.get("round_limit")
    if round_limit is not None and (not _is_int(round_limit) or round_limit <= 0):
        raise MalformedRecord(f"'round_limit' must be a positive integer, not {round_limit!r}")
    match_id = obj.get("id")
    if match_id is not None and not isinstance(match_id, str | int):
        raise MalformedRecord("'id' must be a string")
    seats = obj.get("seats")
    if not _is_int(seats) or seats not in SEAT_COUNTS:
        raise MalformedRecord(f"'seats' must be 2, 3 or 4, not {seats!r}")
    assert isinstance(seats, int)
    if players is not None and len(players) != seats:
        raise MalformedRecord(f"'players' names {len(players)} players for {seats} seats")
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
    forfeit = obj.get("forfeit")
    timeouts = obj.get("timeouts", [])
    if not isinstance(timeouts, list):
        raise MalformedRecord("'timeouts' must be a list")
    return MatchRecord(
        id=None if match_id is None else str(match_id),
        seats=seats,
        target=target,
        rounds=tuple(_round(r, i, seats) for i, r in enumerate(rounds)),
        winner=winner,
        scores=_int_list(scores, "claims 'scores'", None) if scores is not None else None,
        variant=variant,
        players=None if players is None else tuple(players),
        round_limit=round_limit,
        winner_claimed="winner" in claims,
        forfeit=None if forfeit is None else _place(forfeit, "'forfeit'"),
        timeouts=tuple(_place(t, "each of 'timeouts'") for t in timeouts),
    )


def replay(record: MatchRecord | Mapping[str, Any]) -> Match:
    """Replay a record's deals and actions through the engine; raise at the first illegal one.

    Claims are not checked here (that is an audit's job); the returned match
    holds the engine's own figures.
    """
    rec = record if isinstance(record, MatchRecord) else parse_record(record)
    match = Match(
        rec.seats,
        target=rec.target,
        variant=rec.variant,
        round_limit=rec.round_limit,
        auto_deal=False,
    )
    for rnd in rec.rounds:
        match.deal(rnd.deal)
        for move in rnd.actions:
            match.apply(move)
    return match

"""A match's logged events turned back into engine play: the one replay of the event log.

Recovery (service/hub.py), the log audit (analysis/logaudit.py) and the facts
tables (service/storage/facts.py, and the statistics' replay of a log) all
rebuild a match from its events; the replay viewer (analysis/replay/model.py)
rebuilds the public layout of one. They used to do it in loops of their own,
which began to disagree about when a deal is made again from the seed and
what counts as a disagreement; this module is now the only place that knows
how a `match_created` detail becomes a `Match`, when a deal is re-made from
the seed and when it is taken as logged, how a logged move is applied, and
which logged figures must equal the engine's.

It lives in service/storage, beside `events.py`, because it needs nothing but
the log's records and the engine: the storage layer's facts replay with it,
and service/storage imports nothing from the rest of the service.

`replay` yields one typed step per event, each with the engine's result.
Every disagreement is a `ReplayMismatch` subclass, carrying the audit's
problem kind and text (docs/audit.md) and the position of the event it
concerns. A strict caller gives no `on_mismatch` and gets the first one
raised; a reporting caller gives a callback that receives each one, and
the replay goes on after it unless the mismatch is `fatal` (the rest of the
match then cannot be replayed meaningfully, and the replay stops there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, NamedTuple, Protocol

from sniff import (
    TILES,
    ActionResult,
    BadDeal,
    Deal,
    IllegalMove,
    Layout,
    Match,
    Move,
    NotationError,
    Phase,
    Tile,
    UnknownVariant,
    points_for,
)
from sniff.dealing import DEALING_VERSION
from sniff.match import RoundEnd
from sniff.moves import MOVES_BY_TEXT
from sniff.seeds import ENTROPY_SIZE, seat_entropy_seed

_PLAYING: Final = Phase.PLAYING  # constants: reading `Phase.PLAYING` costs ~100 ns in 3.11
_OVER: Final = Phase.OVER


class ReplayEvent(Protocol):
    """What the replay reads of an event: a `LogEvent`, or a `RowEvent` made from a row."""

    @property
    def seq(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def round(self) -> int | None: ...
    @property
    def action_index(self) -> int | None: ...
    @property
    def seat(self) -> int | None: ...
    @property
    def move(self) -> str | None: ...
    @property
    def drawn(self) -> str | None: ...
    @property
    def points(self) -> int | None: ...
    @property
    def ends_sum(self) -> int | None: ...
    @property
    def detail(self) -> Mapping[str, Any] | None: ...


class RowEvent(NamedTuple):
    """An event read as a row (its detail already parsed), for callers that never make a
    `LogEvent`: one checks its fields on construction, which a log being audited may fail."""

    seq: int
    kind: str
    round: int | None
    action_index: int | None
    seat: int | None
    move: str | None
    drawn: str | None
    points: int | None
    ends_sum: int | None
    detail: Mapping[str, Any] | None

    @classmethod
    def of(cls, row: Sequence[Any], detail: Mapping[str, Any] | None) -> RowEvent:
        """The event of a row in the log's column order (match_id, seq, kind, round,
        action_index, seat, move, drawn, points, ends_sum, ...), with its parsed detail."""
        return cls._make((*row[1:10], detail))


# -- disagreements -----------------------------------------------------------------------


class ReplayMismatch(ValueError):
    """The log and the engine disagree about one event.

    A ValueError, as the engine's own errors are: a reader that refuses bad logged values
    refuses these with them.

    `kind` and the message are the audit's problem kind and text (docs/audit.md);
    `position` is the event's index in the events replayed. `whole_round`: it concerns
    the round, not the action the event is (an audit reports no action index);
    `match_level`: it concerns the match as a whole (an audit reports no event);
    `error`: the engine's own error, when the engine refused or could not read a value.
    """

    fatal: bool = False
    """After it the rest of the match cannot be replayed: the replay stops."""

    def __init__(
        self,
        position: int,
        event: ReplayEvent | None,
        kind: str,
        reason: str,
        *,
        whole_round: bool = False,
        match_level: bool = False,
        fatal: bool | None = None,
        error: Exception | None = None,
    ) -> None:
        super().__init__(reason)
        self.position = position
        self.event = event
        self.kind = kind
        self.reason = reason
        self.whole_round = whole_round
        self.match_level = match_level
        self.error = error
        if fatal is not None:
            self.fatal = fatal


class Unreadable(ReplayMismatch):
    """The settings, a deal or a move cannot be read."""

    fatal = True


class OutOfPlace(ReplayMismatch):
    """An event the match's state has no place for, or numbered or seated otherwise."""


class Refused(ReplayMismatch):
    """The engine refuses a logged deal or move."""

    fatal = True


class DealMismatch(ReplayMismatch):
    """A seeded deal the seed makes otherwise, or a leader chosen otherwise."""


class ActionMismatch(ReplayMismatch):
    """An action whose logged points, ends sum or drawn tile are not the engine's."""

    def __init__(
        self,
        position: int,
        event: ReplayEvent,
        field: str,
        logged: object,
        actual: object,
        reason: str,
    ) -> None:
        super().__init__(position, event, field, reason)
        self.field = field
        self.logged = logged
        self.actual = actual


class RoundEndMismatch(ReplayMismatch):
    """A round end logged where the round did not end, missing, or with other figures."""


class MatchEndMismatch(ReplayMismatch):
    """A match end logged where the match is not over, missing, or with another result."""


# -- steps -------------------------------------------------------------------------------
# Named tuples, not frozen dataclasses, like the engine's ActionResult: one is made per
# event, and an audit replays millions of them.


class Created(NamedTuple):
    """The match as its creation sets it up. `seed` is the one its deals are checked
    against (None without one); `seeded`: its deals are re-made from it."""

    position: int
    event: ReplayEvent
    match: Match
    seed: int | None
    seeded: bool


class Dealt(NamedTuple):
    position: int
    event: ReplayEvent
    deal: Deal


class Acted(NamedTuple):
    """An applied action: `round_index` and `action_index` are where it was applied."""

    position: int
    event: ReplayEvent
    move: Move
    result: ActionResult
    round_index: int
    action_index: int


class RoundEnded(NamedTuple):
    """A logged round end; `end` is the engine's (None when the round did not end there)."""

    position: int
    event: ReplayEvent
    end: RoundEnd | None


class MatchEnded(NamedTuple):
    position: int
    event: ReplayEvent


class Passed(NamedTuple):
    """An event the replay passes over (a second creation, a kind it does not know): the
    log's sequence checks report it."""

    position: int
    event: ReplayEvent


Step = Created | Dealt | Acted | RoundEnded | MatchEnded | Passed


# -- reading logged values ---------------------------------------------------------------

_TILES_BY_NAME: Final = {str(t): t for t in TILES}


def logged_tile(text: object) -> Tile:
    """A tile from the log's notation (canonical there; any other form the slow way)."""
    found = _TILES_BY_NAME.get(text) if isinstance(text, str) else None
    # Tile.parse refuses a value that is not text with its own error, as the audit wants.
    return found if found is not None else Tile.parse(text)  # type: ignore[arg-type]


def logged_move(text: str | None) -> Move:
    """A logged move (docs/records.md notation); NotationError for text that is not one."""
    return MOVES_BY_TEXT.get(text) or Move.parse(text)  # type: ignore[arg-type]


def logged_deal(detail: Mapping[str, Any]) -> Deal:
    """The deal a round_dealt detail holds (KeyError, TypeError, NotationError if none)."""
    return Deal(
        tuple(tuple(logged_tile(t) for t in hand) for hand in detail["hands"]),
        tuple(logged_tile(t) for t in detail["boneyard"]),
        detail["leader"],
    )


def new_match(settings: Mapping[str, Any]) -> Match:
    """The match a match_created detail sets up, undealt (KeyError, TypeError, ValueError or
    UnknownVariant for settings it cannot take)."""
    seed = settings.get("seed")
    return Match(
        settings["seats"],
        seed=seed if isinstance(seed, int) else None,
        target=settings["target"],
        variant=settings.get("variant", "american"),
        round_limit=settings.get("round_limit"),
        auto_deal=False,
    )


# -- the replay --------------------------------------------------------------------------

OnMismatch = Callable[[ReplayMismatch], None]


def replay(
    events: Sequence[ReplayEvent],
    *,
    seed: int | None = None,
    on_mismatch: OnMismatch | None = None,
) -> Iterator[Step]:
    """Replay `events` (a match's, in seq order, its creation first) through the engine.

    `seed` overrides the creation's (the seed revealed at the match's end). The first
    event is read as the creation whatever its kind (a caller checks the sequence). Each
    disagreement is raised, or given to `on_mismatch`; a fatal one ends the replay.
    """
    created = events[0]
    settings = created.detail or {}
    try:
        match = new_match(settings)
    except (KeyError, TypeError, ValueError, UnknownVariant) as e:
        mismatch = Unreadable(
            0, created, "malformed", f"the match's settings cannot be read: {e}", error=e
        )
        if on_mismatch is None:
            raise mismatch from None
        on_mismatch(mismatch)
        return
    if seed is None and isinstance(settings.get("seed"), int):
        seed = settings["seed"]
    if seed is not None:
        match.seed = seed
    # Only deals of this release's generator can be made again: a log that does not
    # name it (written before it was named) has its deals replayed as logged.
    seeded = seed is not None and settings.get("dealing") == DEALING_VERSION
    yield Created(0, created, match, seed, seeded)
    try:
        replay = _Replay(events, match, seeded, on_mismatch)
        replay.seat_entropy = settings.get("seat_entropy") is True
        yield from replay.run()
    except _Stop:
        return


def rebuilt(events: Sequence[ReplayEvent], *, strict: bool = True) -> Match:
    """The match `events` make. Strict: the first disagreement is raised. Not strict: the
    log is taken at its word, and only an event the engine cannot replay at all raises (the
    engine's own error when it has one), for a reader that wants the match, not a check."""
    match: Match | None = None
    for step in replay(events, on_mismatch=None if strict else _raise_fatal):
        if isinstance(step, Created):
            match = step.match
    assert match is not None
    return match


def logged_entropy(detail: Mapping[str, Any], seats: int) -> list[bytes]:
    """The seats' entropy a first round_dealt detail holds (`seat_entropy`: one string of
    64 hex digits a seat, in seat order); ValueError if it holds no such list."""
    found = detail.get("seat_entropy")
    if not isinstance(found, list) or len(found) != seats:
        raise ValueError(f"it logs no seat entropy for its {seats} seats")
    entropies = []
    for seat, text in enumerate(found):
        entropy = _hex_bytes(text)
        if entropy is None or len(entropy) != ENTROPY_SIZE or entropy.hex() != text:
            raise ValueError(
                f"seat {seat}'s entropy is not {2 * ENTROPY_SIZE} lowercase hex digits"
            )
        entropies.append(entropy)
    return entropies


def _hex_bytes(text: object) -> bytes | None:
    try:
        return bytes.fromhex(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _raise_fatal(mismatch: ReplayMismatch) -> None:
    if mismatch.fatal:
        raise mismatch.error or mismatch


class _Stop(Exception):
    """A fatal mismatch was reported: the replay ends."""


class _Replay:
    """The events after the creation, replayed on `match`."""

    __slots__ = ("events", "last_result", "match", "on_mismatch", "seat_entropy", "seeded")

    def __init__(
        self,
        events: Sequence[ReplayEvent],
        match: Match,
        seeded: bool,
        on_mismatch: OnMismatch | None,
    ) -> None:
        self.events = events
        self.match = match
        self.seeded = seeded
        self.on_mismatch = on_mismatch
        self.last_result: ActionResult | None = None
        """The last action's result, until a round end follows it."""
        self.seat_entropy = False
        """The match was created with seat entropy: its first deal carries the seats' entropy,
        and from it on every seeded deal and lot is the derived seed's (docs/dealing.md)."""

    def report(self, mismatch: ReplayMismatch) -> None:
        if self.on_mismatch is None:
            raise mismatch
        self.on_mismatch(mismatch)
        if mismatch.fatal:
            raise _Stop

    def run(self) -> Iterator[Step]:
        events = self.events
        for i in range(1, len(events)):
            event = events[i]
            kind = event.kind
            last = self.last_result
            if kind != "round_ended" and last is not None and last.round_end is not None:
                self.report(
                    RoundEndMismatch(
                        i - 1,
                        events[i - 1],
                        "round_end",
                        "the round ended here, but no round end is logged",
                    )
                )
                self.last_result = None
            if kind == "action":
                step = self.act(i, event)
                self.last_result = step.result
                yield step
            elif kind == "round_dealt":
                yield self.deal(i, event)
            elif kind == "round_ended":
                yield self.end_round(i, event)
                self.last_result = None
            elif kind == "match_ended":
                self.end_match(i, event)
                yield MatchEnded(i, event)
            else:
                yield Passed(i, event)
        self.unlogged_ends()

    def deal(self, i: int, event: ReplayEvent) -> Dealt:
        match = self.match
        if match.phase is _OVER:
            self.report(
                OutOfPlace(
                    i, event, "sequence", "a round dealt after the match was over", fatal=True
                )
            )
        if match.phase is _PLAYING:
            self.report(
                OutOfPlace(
                    i,
                    event,
                    "round_incomplete",
                    "a new round dealt while the last is in play",
                    fatal=True,
                )
            )
        expected_round = match.round_index + 1
        if event.round != expected_round:
            self.report(
                OutOfPlace(
                    i,
                    event,
                    "sequence",
                    f"logged as round {event.round}, it is round {expected_round}",
                )
            )
        detail = event.detail or {}
        try:
            logged = logged_deal(detail)
        except (KeyError, TypeError, NotationError) as e:
            reason = f"the deal cannot be read: {e}"
            self.report(Unreadable(i, event, "malformed", reason, error=e))
            raise _Stop from None
        explicit = detail.get("dealt_by") == "request"
        if expected_round == 0 and self.seat_entropy and self.seeded:
            self.derive_seed(i, event, detail)
        remade = False
        if not explicit and self.seeded:
            made, choice = match.seeded_deal(expected_round)
            if made.hands != logged.hands or made.boneyard != logged.boneyard:
                self.report(
                    DealMismatch(
                        i,
                        event,
                        "deal_mismatch",
                        f"the logged deal of round {expected_round} is not the one the match's"
                        " seed makes (docs/dealing.md)",
                    )
                )
            elif made.leader != logged.leader:
                self.report(
                    DealMismatch(
                        i,
                        event,
                        "deal_mismatch",
                        f"seat {logged.leader} leads, but the {choice.value} gives seat"
                        f" {made.leader}",
                    )
                )
            else:
                remade = True
        if detail.get("leader_choice") is not None:
            expected_choice = (
                "finisher" if match.next_leader is not None else ("explicit" if explicit else "lot")
            )
            if detail.get("leader_choice") != expected_choice:
                self.report(
                    DealMismatch(
                        i,
                        event,
                        "deal_mismatch",
                        f"the leader is logged as chosen by {detail.get('leader_choice')},"
                        f" but it is by {expected_choice}",
                    )
                )
        try:
            match.deal(logged)
        except BadDeal as e:
            self.report(Refused(i, event, "bad_deal", str(e), error=e))
        if remade:  # the round keeps the leader choice it was dealt with (lot or finisher)
            match.history[-1].leader_choice = choice
        return Dealt(i, event, logged)

    def derive_seed(self, i: int, event: ReplayEvent, detail: Mapping[str, Any]) -> None:
        """The match's seed from here on: the house's seed mixed with the seats' entropy the
        first deal logs (sniff/seeds.py). Without readable entropy no deal can be re-made."""
        match = self.match
        try:
            entropies = logged_entropy(detail, match.seats)
        except ValueError as e:
            self.report(
                DealMismatch(
                    i,
                    event,
                    "deal_mismatch",
                    f"the match was created with seat entropy, but its first deal: {e}",
                )
            )
            self.seeded = False
            return
        match.seed = seat_entropy_seed(match.seed, entropies)

    def act(self, i: int, event: ReplayEvent) -> Acted:
        match = self.match
        if match.phase is not _PLAYING:
            what = "the match is over" if match.phase is _OVER else "no round is in play"
            self.report(
                OutOfPlace(
                    i,
                    event,
                    "after_win" if match.phase is _OVER else "sequence",
                    f"an action, but {what}",
                    fatal=True,
                )
            )
        round_index = match.round_index
        action_index = len(match.history[-1].actions)
        if (event.round, event.action_index) != (round_index, action_index):
            self.report(
                OutOfPlace(
                    i,
                    event,
                    "sequence",
                    f"logged as round {event.round}, action {event.action_index}; it is round"
                    f" {round_index}, action {action_index}",
                )
            )
        if event.seat != match.turn:
            self.report(
                OutOfPlace(
                    i,
                    event,
                    "out_of_turn",
                    f"logged for seat {event.seat}, but seat {match.turn} is to play",
                )
            )
        try:
            move = logged_move(event.move)
        except NotationError as e:
            self.report(Unreadable(i, event, "unparsable_action", str(e), error=e))
            raise _Stop from None
        try:
            result = match.apply(move)
        except IllegalMove as e:
            self.report(Refused(i, event, e.kind, f"{move}: {e}", error=e))
            raise _Stop from None
        if event.points != result.points:
            self.report(
                ActionMismatch(
                    i,
                    event,
                    "points",
                    event.points,
                    result.points,
                    f"logged {event.points} points, the action scores {result.points}",
                )
            )
        if event.ends_sum != result.ends_sum:
            self.report(
                ActionMismatch(
                    i,
                    event,
                    "ends_sum",
                    event.ends_sum,
                    result.ends_sum,
                    f"logged an ends sum of {event.ends_sum}, the layout's is {result.ends_sum}",
                )
            )
        drawn = None if result.drawn is None else str(result.drawn)
        if event.drawn != drawn:
            self.report(
                ActionMismatch(
                    i,
                    event,
                    "drawn",
                    event.drawn,
                    drawn,
                    f"logged {event.drawn} as drawn, the boneyard gives {drawn}",
                )
            )
        return Acted(i, event, move, result, round_index, action_index)

    def end_round(self, i: int, event: ReplayEvent) -> RoundEnded:
        match = self.match
        end = None if self.last_result is None else self.last_result.round_end
        if end is None:
            self.report(
                RoundEndMismatch(
                    i,
                    event,
                    "round_end",
                    "a round end is logged, but the round did not end there",
                    whole_round=True,
                )
            )
            return RoundEnded(i, event, None)
        detail = event.detail or {}

        def differ(kind: str, reason: str) -> None:
            self.report(RoundEndMismatch(i, event, kind, reason, whole_round=True))

        if event.round != match.round_index:
            self.report(
                OutOfPlace(
                    i,
                    event,
                    "sequence",
                    f"logged for round {event.round}, it ends round {match.round_index}",
                    whole_round=True,
                )
            )
        if detail.get("end") != end.kind.value:
            differ("end", f"logged {detail.get('end')}, the round ended {end.kind.value}")
        if detail.get("finisher") != end.finisher:
            differ("end", f"logged seat {detail.get('finisher')} as finisher, it is {end.finisher}")
        if detail.get("pips") != list(end.pips):
            differ(
                "deduction",
                f"logged hands of {detail.get('pips')} pips, they hold {list(end.pips)}",
            )
        _per_seat(differ, "deduction", detail.get("deductions"), end.deductions, "deducted")
        _per_seat(differ, "round_score", detail.get("scores"), end.scores, "a score of")
        hands = detail.get("hands")
        if hands is not None and hands != [
            [str(t) for t in match.hand(s)] for s in range(match.seats)
        ]:
            differ("end", "the hands logged at the round's end are not those left")
        return RoundEnded(i, event, end)

    def end_match(self, i: int, event: ReplayEvent) -> None:
        match = self.match

        def differ(kind: str, reason: str) -> None:
            self.report(MatchEndMismatch(i, event, kind, reason, match_level=True))

        forfeit = (event.detail or {}).get("forfeit")
        if match.phase is not _OVER and isinstance(forfeit, Mapping):
            where = (match.round_index, len(match.history[-1].actions) if match.history else 0)
            if (forfeit.get("round"), forfeit.get("action")) != where:
                differ(
                    "winner",
                    f"logged as forfeited at round {forfeit.get('round')}, action "
                    f"{forfeit.get('action')}; the match is at round {where[0]}, action {where[1]}",
                )
                return
            try:
                match.forfeit(forfeit.get("seat"))  # type: ignore[arg-type]  # checked by it
            except (ValueError, TypeError) as e:
                differ("winner", f"logged as forfeited: {e}")
                return
        if match.phase is not _OVER:
            differ(
                "winner",
                "a match end is logged, but "
                + (
                    f"no side reached {match.target}"
                    if match.phase is _PLAYING or match.round_limit is None
                    else "the round limit is not reached"
                ),
            )
            return
        detail = event.detail or {}
        if detail.get("winner") != match.winner:
            differ("winner", f"logged winner {detail.get('winner')}, but {match.result_text()}")
        if detail.get("scores") != list(match.seat_scores()):
            differ(
                "final_score",
                f"logged final scores {detail.get('scores')},"
                f" the engine has {list(match.seat_scores())}",
            )
        rounds = detail.get("rounds")
        if rounds is not None and rounds != len(match.history):
            differ("final_score", f"logged {rounds} rounds, the match had {len(match.history)}")
        at_limit = match.history[-1].end is not None
        if bool(detail.get("round_limit_reached")) != at_limit:
            differ(
                "winner",
                "logged as ended at the round limit, it ended at the target"
                if not at_limit
                else "logged as ended at the target, it ended at the round limit",
            )

    def unlogged_ends(self) -> None:
        """A round end or a match end the engine made that the log lacks."""
        match = self.match
        events = self.events
        last = len(events) - 1
        if self.last_result is not None and self.last_result.round_end is not None:
            self.report(
                RoundEndMismatch(
                    last,
                    events[last],
                    "round_end",
                    "the round ended here, but no round end is logged",
                    whole_round=True,
                )
            )
        if match.phase is _OVER and not any(e.kind == "match_ended" for e in events):
            self.report(
                MatchEndMismatch(
                    last,
                    None,
                    "match_end",
                    f"{match.result_text()}, but no match end is logged",
                    match_level=True,
                )
            )


def place_logged(layout: Layout, position: int, event: ReplayEvent) -> tuple[Move, int | None]:
    """The public part of a logged action applied to `layout`: a placement placed, a draw
    or a pass left as it is; the move and the points the placement scored (None for none).

    For a replay of what every seat saw (no hand, so no `Match`): the move is read and
    checked as `replay` does, and a logged figure (points, ends sum) must be the rules'.
    Raises Unreadable, Refused (with the engine's `error`) or ActionMismatch.
    """
    try:
        move = logged_move(event.move)
    except ValueError as e:
        raise Unreadable(position, event, "unparsable_action", str(e), error=e) from None
    if not move.is_placement:
        return move, None
    try:
        layout.check(move)
    except IllegalMove as e:
        raise Refused(position, event, e.kind, f"{move}: {e}", error=e) from None
    ends = layout.place(move)
    points = points_for(ends)
    if event.points is not None and event.points != points:
        reason = f"logged {event.points} points, the action scores {points}"
        raise ActionMismatch(position, event, "points", event.points, points, reason)
    if event.ends_sum is not None and event.ends_sum != ends:
        reason = f"logged an ends sum of {event.ends_sum}, the layout's is {ends}"
        raise ActionMismatch(position, event, "ends_sum", event.ends_sum, ends, reason)
    return move, points


def _per_seat(
    differ: Callable[[str, str], None],
    kind: str,
    logged: object,
    actual: Sequence[int],
    what: str,
) -> None:
    if not isinstance(logged, list) or len(logged) != len(actual):
        differ(kind, f"logged {logged!r} for {len(actual)} seats")
        return
    for seat, (c, a) in enumerate(zip(logged, actual, strict=True)):
        if c != a:
            differ(kind, f"seat {seat}: logged {what} {c}, the engine has {a}")

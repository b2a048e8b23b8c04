"""A match as a replay: one step per action, each with everything a viewer shows.

A replay rebuilds every position by applying the logged placements to the
engine's `Layout` (placements are public, so no hand is needed) through the
log's one replayer (`service.storage.replayer.place_logged`), reads
open sides, counted ends and the ends sum from it, and takes each round's
end (pips, deductions, scores) from the log's round_ended event. The
logged points and ends sums are checked against the engine's on the way:
a replay never shows figures the rules do not give.

Steps are numbered across the whole match from 0 (the first round's lead is
step 0), like docs/records.md's action indexes within a round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from analysis.replay.rules import Orientation, new_layout, sniff_orientation
from service.storage.replayer import (
    ActionMismatch,
    Refused,
    RowEvent,
    Unreadable,
    place_logged,
)
from sniff import HAND_SIZE, Layout, MoveKind, Tile, team_of
from sniff.tiles import SET_SIZE


class ReplayError(ValueError):
    """The log cannot be replayed as it stands (run `sniff audit` for the details)."""


@dataclass(frozen=True, slots=True)
class Mark:
    """A side of a placed tile with its value: an open side or a counted end."""

    tile: str
    side: str
    value: int

    def to_json(self) -> dict[str, Any]:
        return {"tile": self.tile, "side": self.side, "value": self.value}

    def __str__(self) -> str:
        return f"{self.tile}:{self.side} ({self.value})"


@dataclass(frozen=True, slots=True)
class Placement:
    """A tile on the layout: what it joined (None for the lead) and, for the Sniff, how it lies."""

    tile: Tile
    board: Tile | None
    side: str | None
    sniff: bool = False
    orientation: Orientation | None = None


@dataclass(frozen=True, slots=True)
class MatchInfo:
    match_id: str
    seats: int
    target: int
    variant: str
    rules_version: str | None
    created_at: datetime | None
    finished: bool
    winner: int | None
    scores: tuple[int, ...] | None
    round_limit: int | None = None
    forfeited_seat: int | None = None
    """The seat that ran out of time and forfeited the match (docs/service.md)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "match_id": self.match_id,
            "seats": self.seats,
            "target": self.target,
            "variant": self.variant,
            "rules_version": self.rules_version,
            "created_at": None if self.created_at is None else self.created_at.isoformat(),
            "finished": self.finished,
            "winner": self.winner,
            "scores": None if self.scores is None else list(self.scores),
            "round_limit": self.round_limit,
            "forfeited_seat": self.forfeited_seat,
        }


@dataclass(frozen=True, slots=True)
class RoundStart:
    round: int
    leader: int
    leader_choice: str | None
    hands: tuple[tuple[str, ...], ...] | None
    """The dealt hands: only in a revealed replay of a finished match."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "round": self.round,
            "leader": self.leader,
            "leader_choice": self.leader_choice,
        }
        if self.hands is not None:
            out["hands"] = [list(h) for h in self.hands]
        return out


@dataclass(frozen=True, slots=True)
class RoundEndInfo:
    round: int
    ending: str
    finisher: int | None
    pips: tuple[int, ...]
    deductions: tuple[int, ...]
    scores: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "ending": self.ending,
            "finisher": self.finisher,
            "pips": list(self.pips),
            "deductions": list(self.deductions),
            "scores": list(self.scores),
        }


@dataclass(frozen=True, slots=True)
class Step:
    """The match right after one action."""

    n: int
    """The action's index in the match, from 0."""
    round: int
    action: int
    """The action's index in its round, from 0 (docs/records.md)."""
    seat: int
    move: str
    kind: str
    """lead, place, draw or pass."""
    tile: str | None
    """The tile placed; None for a draw or a pass."""
    drawn: str | None
    """The tile a draw took: only in a revealed replay of a finished match."""
    points: int | None
    """Points the action scored; None for a draw or a pass."""
    ends_sum: int
    open_sides: tuple[Mark, ...]
    counted_ends: tuple[Mark, ...]
    scores: tuple[int, ...]
    """Per seat, after the action (and after the round's deductions if it ended the round)."""
    placements: tuple[Placement, ...]
    turn: int | None
    """Whose turn it is next; None once the round or the match is over."""
    boneyard: int
    hand_sizes: tuple[int, ...]
    sniff: str | None
    round_start: RoundStart | None = None
    """Set on the round's first step."""
    round_end: RoundEndInfo | None = None
    winner: int | None = None
    """Set on the match's winning step."""
    final: bool = False
    """The match's last step (won, or ended at its round limit)."""
    timeout_policy: str | None = None
    """Set when the seat ran out of time and the service chose this action by that policy."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "step": self.n,
            "round": self.round,
            "action": self.action,
            "seat": self.seat,
            "move": self.move,
            "kind": self.kind,
            "tile": self.tile,
            "points": self.points,
            "ends_sum": self.ends_sum,
            "open_sides": [m.to_json() for m in self.open_sides],
            "counted_ends": [m.to_json() for m in self.counted_ends],
            "scores": list(self.scores),
            "turn": self.turn,
            "boneyard": self.boneyard,
            "hand_sizes": list(self.hand_sizes),
            "sniff": self.sniff,
            "layout": [str(p.tile) for p in self.placements],
        }
        if self.kind == "draw":
            out["drawn"] = self.drawn
        if self.round_start is not None:
            out["round_start"] = self.round_start.to_json()
        if self.round_end is not None:
            out["round_end"] = self.round_end.to_json()
        if self.winner is not None:
            out["winner"] = self.winner
        if self.timeout_policy is not None:
            out["timeout_policy"] = self.timeout_policy
        return out


@dataclass(frozen=True, slots=True)
class Replay:
    info: MatchInfo
    steps: tuple[Step, ...]
    revealed: bool
    """Hidden tiles (draws, deals) are shown: asked for, and the match is finished."""
    hidden_note: str | None = None
    """Why hidden tiles stay hidden although they were asked for."""
    rounds: tuple[RoundStart, ...] = field(default=())

    def steps_of_round(self, round_index: int) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if s.round == round_index)


# -- building -------------------------------------------------------------------------------


def _ints(value: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in value) if value is not None else ()


def match_info(match_id: str, rows: Sequence[Mapping[str, Any]]) -> MatchInfo:
    """The match's settings and result, from its events (match_events rows)."""
    created = next((r for r in rows if r["kind"] == "match_created"), None)
    if created is None:
        raise ReplayError(f"match {match_id}: the log holds no match_created event")
    ended = next((r for r in rows if r["kind"] == "match_ended"), None)
    return MatchInfo(
        match_id=match_id,
        seats=int(created["seats"]),
        target=int(created["target"]),
        variant=created.get("variant") or "american",
        rules_version=created.get("rules_version"),
        created_at=created.get("created_at"),
        finished=ended is not None,
        winner=None if ended is None else ended["winner"],
        scores=None if ended is None else _ints(ended["scores"]),
        round_limit=created.get("round_limit"),
        forfeited_seat=None if ended is None else ended.get("forfeited_seat"),
    )


def build_replay(
    match_id: str, rows: Sequence[Mapping[str, Any]], *, reveal: bool = False
) -> Replay:
    """The replay of one match from its events in seq order (the match_events query's rows)."""
    info = match_info(match_id, rows)
    seats = info.seats
    teams = [team_of(s, seats) for s in range(seats)]
    team_scores = [0] * (2 if seats == 4 else seats)
    revealed = bool(rows) and bool(rows[0].get("revealed"))
    steps: list[Step] = []
    rounds: list[RoundStart] = []
    layout = new_layout(info.variant)
    placements: list[Placement] = []
    hand_sizes = [HAND_SIZE[seats]] * seats
    boneyard = SET_SIZE - seats * HAND_SIZE[seats]
    pending_start: RoundStart | None = None
    round_index = -1
    action_index = 0

    def seat_scores() -> tuple[int, ...]:
        return tuple(team_scores[t] for t in teams)

    for row in rows:
        kind = row["kind"]
        if kind == "round_dealt":
            round_index = int(row["round"])
            hands = row.get("hands")
            pending_start = RoundStart(
                round_index,
                int(row["leader"]),
                row.get("leader_choice"),
                tuple(tuple(h) for h in hands) if hands is not None else None,
            )
            rounds.append(pending_start)
            layout = new_layout(info.variant)
            placements = []
            hand_sizes = [HAND_SIZE[seats]] * seats
            boneyard = SET_SIZE - seats * HAND_SIZE[seats]
            action_index = 0
        elif kind == "action":
            step = _action_step(
                info, row, len(steps), layout, placements, hand_sizes, pending_start
            )
            if row["round"] != round_index or row["action_index"] != action_index:
                raise ReplayError(
                    f"match {match_id}: event {row['seq']} is action {row['action_index']} of"
                    f" round {row['round']}, expected action {action_index} of round {round_index}"
                )
            action_index += 1
            if step.kind == "draw":
                boneyard -= 1
            if step.points:
                team_scores[teams[step.seat]] += step.points
            turn = (step.seat + 1) % seats if step.kind in ("place", "lead", "pass") else step.seat
            steps.append(
                _replace(
                    step,
                    scores=seat_scores(),
                    boneyard=boneyard,
                    hand_sizes=tuple(hand_sizes),
                    turn=turn,
                    timeout_policy=row.get("timeout_policy"),
                )
            )
            pending_start = None
        elif kind == "round_ended":
            if not steps:
                raise ReplayError(f"match {match_id}: a round ends before any action")
            end = RoundEndInfo(
                int(row["round"]),
                str(row["ending"]),
                row.get("finisher"),
                _ints(row["pips"]),
                _ints(row["deductions"]),
                _ints(row["scores"]),
            )
            for seat, score in enumerate(end.scores):
                team_scores[teams[seat]] = score
            steps[-1] = _replace(steps[-1], round_end=end, scores=end.scores, turn=None)
        elif kind == "match_ended":
            if not steps and info.forfeited_seat is not None:
                continue  # forfeited before any action: the match has no step to mark
            if not steps:
                raise ReplayError(f"match {match_id}: the match ends before any action")
            steps[-1] = _replace(steps[-1], winner=row["winner"], final=True, turn=None)
    note = None
    if reveal and not revealed:
        note = (
            "drawn tiles and deals stay hidden while the match is in play"
            if not info.finished
            else "the log does not show drawn tiles and deals"
        )
    return Replay(info, tuple(steps), revealed, note, tuple(rounds))


def _replace(step: Step, **changes: Any) -> Step:
    return replace(step, **changes)


def _action_step(
    info: MatchInfo,
    row: Mapping[str, Any],
    n: int,
    layout: Layout,
    placements: list[Placement],
    hand_sizes: list[int],
    round_start: RoundStart | None,
) -> Step:
    """Apply one logged action to `layout` (in place) and describe the position after it."""
    text = str(row["move"])
    where = f"match {info.match_id}, round {row['round']}, action {row['action_index']}"
    seat = int(row["seat"])
    event = RowEvent(
        row["seq"],
        "action",
        row["round"],
        row["action_index"],
        seat,
        text,
        None,
        row.get("points"),
        row.get("ends_sum"),
        None,
    )
    was_sniff = layout.sniff
    try:
        move, points = place_logged(layout, n, event)
    except Unreadable as exc:
        raise ReplayError(f"{where}: {exc.error}") from None
    except Refused as exc:
        raise ReplayError(f"{where}: {text} cannot be placed: {exc.error}") from None
    except ActionMismatch as exc:
        told = f"{text} scored" if exc.field == "points" else "the ends sum"
        raise ReplayError(
            f"{where}: the log says {told} {exc.logged}, the rules give {exc.actual}"
            " (run sniff audit)"
        ) from None
    tile: str | None = None
    if move.is_placement:
        assert move.tile is not None
        tile = str(move.tile)
        sniff = layout.sniff >= 0 and was_sniff < 0
        placements.append(
            Placement(
                move.tile,
                move.board_tile,
                None if move.side is None else str(move.side),
                sniff,
                sniff_orientation(layout) if sniff else None,
            )
        )
        hand_sizes[seat] -= 1
    elif move.kind is MoveKind.DRAW:
        hand_sizes[seat] += 1
    kind = {MoveKind.LEAD: "lead", MoveKind.PLACE: "place", MoveKind.DRAW: "draw"}.get(
        move.kind, "pass"
    )
    return Step(
        n=n,
        round=int(row["round"]),
        action=int(row["action_index"]),
        seat=seat,
        move=text,
        kind=kind,
        tile=tile,
        drawn=row.get("drawn") if move.kind is MoveKind.DRAW else None,
        points=points,
        ends_sum=layout.ends,
        open_sides=tuple(Mark(str(o.tile), str(o.side), o.value) for o in layout.open_sides()),
        counted_ends=tuple(Mark(str(c.tile), str(c.side), c.value) for c in layout.counted_ends()),
        scores=(),
        placements=tuple(placements),
        turn=None,
        boneyard=0,
        hand_sizes=(),
        sniff=None if layout.sniff < 0 else str(Tile(layout.sniff)),
        round_start=round_start,
    )

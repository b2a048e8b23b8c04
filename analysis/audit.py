"""Audit docs/records.md match records by replaying them through the engine.

An audit never trusts a claim: it replays every deal and action, and
compares each figure the scorekeeper wrote down with the engine's own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NoReturn, Protocol, TypeVar

from analysis.parallel import chunked, ordered_map
from sniff import (
    ActionResult,
    BadDeal,
    IllegalMove,
    MalformedRecord,
    Match,
    Move,
    Phase,
    parse_record,
)
from sniff.match import RoundLog
from sniff.record import MatchRecord, RecordRound

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Problem:
    """One defect, at its place: `round`/`action` count from 0; None means the whole round/match."""

    round: int | None
    action: int | None
    kind: str
    reason: str
    seq: int | None = None
    """For a log audit, the event's sequence number in its match (None for a record)."""

    def place(self) -> str:
        where = "match" if self.round is None else f"round {self.round}"
        if self.round is not None and self.action is not None:
            where += f", action {self.action}"
        if self.seq is not None:
            where += f" (event {self.seq})"
        return where

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "round": self.round,
            "action": self.action,
            "kind": self.kind,
            "reason": self.reason,
        }
        if self.seq is not None:
            out["seq"] = self.seq
        return out


@dataclass(slots=True)
class AuditResult:
    id: str
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the audit could not vouch for without it being a defect (a log audit's legacy
    chain, a match without a commitment); shown, never counted as a problem."""

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        """The docs/records.md machine-readable form (`notes` only when there are some)."""
        out: dict[str, Any] = {
            "id": self.id,
            "ok": self.ok,
            "problems": [p.to_json() for p in self.problems],
        }
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    def to_text(self) -> str:
        if self.ok:
            lines = [f"{self.id}: ok"]
        else:
            count = len(self.problems)
            lines = [f"{self.id}: {count} problem{'s' if count > 1 else ''}"]
            lines += [f"  {p.place()}: {p.kind}: {p.reason}" for p in self.problems]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


class _Stop(Exception):
    """A defect after which the rest of the match cannot be replayed meaningfully."""


class Witness(Protocol):
    """Told of each deal and action an audit makes (`sniff import` logs them as it goes)."""

    match: Match

    def dealt(self, *, explicit: bool) -> None: ...

    def before(self) -> None: ...

    def applied(self, result: ActionResult, round_index: int, action_index: int) -> None: ...

    def forfeited(self, seat: int, round_index: int, action_index: int) -> None: ...


class _Auditor:
    def __init__(
        self,
        record: MatchRecord,
        result: AuditResult,
        allow_unfinished: bool,
        witness: Witness | None = None,
    ) -> None:
        self.record = record
        self.result = result
        self.allow_unfinished = allow_unfinished
        self.witness = witness
        self.match = (
            Match(
                record.seats,
                target=record.target,
                variant=record.variant,
                round_limit=record.round_limit,
                auto_deal=False,
            )
            if witness is None
            else witness.match
        )
        self.forfeited = False
        """The match ended by the record's `forfeit`."""
        self.actors: dict[tuple[int, int], int] = {}
        """Who made each action (round, index), kept only for a record with `timeouts`."""

    def problem(self, round: int | None, action: int | None, kind: str, reason: str) -> None:
        self.result.problems.append(Problem(round, action, kind, reason))

    def run(self) -> None:
        try:
            for r, rnd in enumerate(self.record.rounds):
                self.audit_round(r, rnd)
        except _Stop:
            return
        self.audit_out_of_time()
        if self.match.phase is not Phase.OVER and not self.allow_unfinished:
            self.problem(None, None, "match_unfinished", self.unfinished_reason())
        self.audit_match_claims()

    def unfinished_reason(self) -> str:
        """Why a record that replays cleanly is still not a finished match."""
        match, played = self.match, len(self.record.rounds)
        if not played:
            return (
                f"the record has no rounds: the match was never played, "
                f"so no side reached the target of {match.target}"
            )
        return (
            f"the match stops after {played} complete round{'s' if played > 1 else ''} "
            f"with the top score {max(match.seat_scores())}, short of the target of "
            f"{match.target}: it is unfinished"
        )

    def stop_after_end(self, r: int, k: int) -> NoReturn:
        """Stop at action k of round r, given after the round or the match had ended."""
        match = self.match
        if match.phase is Phase.OVER:
            self.problem(r, k, "after_win", f"the match was already over: {match.result_text()}")
            raise _Stop
        end = match.history[-1].end
        assert end is not None
        self.problem(r, k, "after_round_end", f"the round had already ended ({end.kind.value})")
        raise _Stop

    def audit_round(self, r: int, rnd: RecordRound) -> None:
        match = self.match
        if match.phase is Phase.OVER:
            self.problem(r, None, "after_win", f"the match was already over: {match.result_text()}")
            raise _Stop
        try:
            match.deal(rnd.deal)
        except BadDeal as e:
            self.problem(r, None, "bad_deal", str(e))
            raise _Stop from None
        witness = self.witness
        if witness is not None:
            witness.dealt(explicit=True)
        claimed_points = rnd.claims.points
        claimed_count = 0 if claimed_points is None else len(claimed_points)
        before = None if witness is None else witness.before
        applied = None if witness is None else witness.applied
        playing = Phase.PLAYING
        actors = self.actors if self.record.timeouts else None
        for k, move in enumerate(rnd.actions):
            if match.phase is not playing:
                self.stop_after_end(r, k)
            if before is not None:
                before()
            try:
                result = match.apply(move)
            except IllegalMove as e:
                said = str(e)  # the orientation faults name the move themselves
                self.problem(
                    r, k, e.kind, said if said.startswith(str(move)) else f"{move}: {said}"
                )
                raise _Stop from None
            if applied is not None:
                applied(result, r, k)
            if actors is not None:
                actors[r, k] = result.seat
            if k < claimed_count:
                assert claimed_points is not None
                claimed = claimed_points[k]
                # the figure as claimed (a placement's points; none for a draw or a pass)
                if claimed != (result.points if move.is_placement else None):
                    self.check_points(r, k, claimed, result.points, move)
        if claimed_points is not None and len(claimed_points) != len(rnd.actions):
            self.problem(
                r,
                None,
                "points",
                f"claims {len(claimed_points)} point figures for {len(rnd.actions)} actions",
            )
        if match.phase is Phase.PLAYING:
            if self.forfeits_here(r, len(rnd.actions)):
                self.audit_round_in_play(r, rnd)
                return
            if self.allow_unfinished and r == len(self.record.rounds) - 1:
                self.audit_round_in_play(r, rnd)
                return
            self.problem(
                r,
                None,
                "round_incomplete",
                f"the round stops after {len(rnd.actions)} actions, but it is not over: "
                f"seat {match.turn} is to play",
            )
            raise _Stop
        self.audit_round_claims(r, rnd, match.history[-1])

    def forfeits_here(self, r: int, actions: int) -> bool:
        """End the match by the record's forfeit when its last round stops where the forfeit
        says (round `r`, after `actions` actions); False, with nothing done, anywhere else.
        A forfeit is no rule of play: the moves must stop where it is claimed, and a claim
        they do not bear out is reported by `audit_out_of_time`."""
        forfeit = self.record.forfeit
        if forfeit is None or r != len(self.record.rounds) - 1:
            return False
        if (forfeit.round, forfeit.action) != (r, actions) or forfeit.seat != self.match.turn:
            return False
        try:
            self.match.forfeit(forfeit.seat)
        except ValueError as e:
            self.problem(r, actions, "forfeit", str(e))
            return False
        self.forfeited = True
        if self.witness is not None:
            self.witness.forfeited(forfeit.seat, r, actions)
        return True

    def audit_out_of_time(self) -> None:
        """The record's `forfeit` and `timeouts` name places its moves have, for the seat
        that acted (was to act) there."""
        record, match = self.record, self.match
        forfeit = record.forfeit
        if forfeit is not None and not self.forfeited:
            self.problem(
                forfeit.round,
                forfeit.action,
                "forfeit",
                f"claimed seat {forfeit.seat} forfeited here, but the moves go on: "
                f"{match.result_text()}",
            )
        for t in record.timeouts:
            if self.actors.get((t.round, t.action)) != t.seat:
                self.problem(
                    t.round,
                    t.action,
                    "timeout",
                    f"claimed a move chosen for seat {t.seat} out of time, "
                    "but that seat made no action here",
                )

    def audit_round_in_play(self, r: int, rnd: RecordRound) -> None:
        """The claims of a last round still in play: it has no end yet, scores so far."""
        claims = self.record.rounds[r].claims
        if claims.end is not None:
            self.problem(
                r, None, "end", f"claimed the round ended {claims.end}, but it is still in play"
            )
        if claims.deductions is not None:
            self.problem(r, None, "deduction", "claimed deductions, but the round is still in play")
        if claims.scores is not None:
            self.check_per_seat(r, "round_score", claims.scores, self.match.seat_scores(), None)

    def check_points(self, r: int, k: int, claimed: int | None, actual: int, move: Move) -> None:
        if not move.is_placement:
            if claimed is not None:
                self.problem(
                    r,
                    k,
                    "points",
                    f"claimed {claimed} points for {move}, which scores none",
                )
            return
        if claimed != actual:
            said = "no figure" if claimed is None else f"{claimed} points"
            self.problem(r, k, "points", f"claimed {said}, the placement scores {actual}")

    def audit_round_claims(self, r: int, rnd: RecordRound, log: RoundLog) -> None:
        claims = rnd.claims
        end = log.end
        if end is None:  # the match was won in this round
            if claims.end is not None:
                self.problem(
                    r, None, "end", f"claimed the round ended {claims.end}, but it was won first"
                )
            if claims.deductions is not None:
                self.problem(
                    r, None, "deduction", "claimed deductions, but the match was won mid-round"
                )
        else:
            if claims.end is not None and claims.end != end.kind.value:
                self.problem(
                    r, None, "end", f"claimed {claims.end}, the round ended {end.kind.value}"
                )
            if claims.deductions is not None:
                self.check_per_seat(r, "deduction", claims.deductions, end.deductions, end.pips)
        if claims.scores is not None:
            self.check_per_seat(r, "round_score", claims.scores, log.scores, None)

    def check_per_seat(
        self,
        r: int | None,
        kind: str,
        claimed: tuple[int, ...],
        actual: tuple[int, ...],
        pips: tuple[int, ...] | None,
    ) -> None:
        if len(claimed) != len(actual):
            self.problem(r, None, kind, f"claims {len(claimed)} figures for {len(actual)} seats")
            return
        for seat, (c, a) in enumerate(zip(claimed, actual, strict=True)):
            if c == a:
                continue
            if pips is not None:
                reason = (
                    f"seat {seat}: claimed {c} deducted, the hand of {pips[seat]} pips costs {a}"
                )
            else:
                reason = f"seat {seat}: claimed a score of {c}, the engine has {a}"
            self.problem(r, None, kind, reason)

    def audit_match_claims(self) -> None:
        match, record = self.match, self.record
        if record.winner_claimed and record.winner is None:
            if match.phase is not Phase.OVER or match.winner is not None:
                self.problem(
                    None,
                    None,
                    "winner",
                    f"claimed a draw, but {match.result_text()}"
                    if match.phase is Phase.OVER
                    else "claimed a draw, but the match is not over",
                )
        elif record.winner is not None:
            if match.winner is None:
                self.problem(
                    None,
                    None,
                    "winner",
                    f"claimed seat {record.winner} won, but "
                    + (
                        match.result_text()
                        if match.phase is Phase.OVER
                        else f"no side reached {match.target}"
                    ),
                )
            elif not (0 <= record.winner < match.seats) or (
                match.teams[record.winner] != match.teams[match.winner]
            ):
                self.problem(
                    None,
                    None,
                    "winner",
                    f"claimed seat {record.winner} won, the winner is seat {match.winner}",
                )
        if record.scores is not None:
            self.check_per_seat(None, "final_score", record.scores, match.seat_scores(), None)


def _record_id(obj: object) -> str | None:
    """The record's own `id`, when it has a usable one."""
    record_id = obj.get("id") if isinstance(obj, Mapping) else None
    return str(record_id) if isinstance(record_id, str | int) else None


def audit_record(obj: object, name: str, *, allow_unfinished: bool = False) -> AuditResult:
    """Audit one decoded record; `name` identifies it when it has no `id`.

    A record that replays cleanly but whose match nobody has won yet is
    reported (`match_unfinished`) unless `allow_unfinished`: then a match
    still in play, even one stopped mid-round, audits ok.
    """
    return audit_parsed(obj, name, allow_unfinished=allow_unfinished)[0]


def audit_parsed(
    obj: object,
    name: str,
    *,
    allow_unfinished: bool = False,
    witness: Callable[[object, MatchRecord], Witness] | None = None,
) -> tuple[AuditResult, MatchRecord | None]:
    """`audit_record`, with the parsed record (None when it is malformed), for a caller
    that goes on with it (`sniff import`). `witness(obj, record)` makes an object told of
    every deal and action as the replay makes them, whose `match` the replay uses."""
    result = AuditResult(_record_id(obj) or name)
    try:
        record = parse_record(obj)
    except MalformedRecord as e:
        result.problems.append(Problem(e.round, e.action, e.kind, e.reason))
        return result, None
    made = None if witness is None else witness(obj, record)
    _Auditor(record, result, allow_unfinished, made).run()
    return result, record


_JSON_WHITESPACE = " \t\r\n"
_BOM = "\ufeff"


def _decode(raw: str | bytes) -> tuple[str, None] | tuple[None, str]:
    """The line as text, or why it cannot be: JSON Lines is UTF-8 with no byte order mark."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            return None, f"not UTF-8: byte 0x{raw[e.start]:02x} at byte {e.start + 1} of the line"
    else:
        text = raw
    if text.startswith(_BOM):
        return None, "the line starts with a UTF-8 byte order mark, which JSON Lines does not allow"
    return text, None


def _malformed(name: str, reason: str) -> AuditResult:
    return AuditResult(name, [Problem(None, None, "malformed", reason)])


class Audit:
    """One audit over one or more files, so that ids are checked for repeats across all of them.

    A record whose `id` an earlier record already used is reported
    (`duplicate_id`, on every later use): ids are how claims, results and
    statistics refer to a match, so two matches under one id cannot both
    be trusted.
    """

    def __init__(self, *, allow_unfinished: bool = False) -> None:
        self.allow_unfinished = allow_unfinished
        self._first_use: dict[str, tuple[str | None, int]] = {}

    def lines(
        self,
        lines: Iterable[str | bytes],
        source: str | None = None,
        *,
        workers: int = 1,
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[AuditResult]:
        """Audit JSON Lines, one match a line; blank lines are skipped, bad lines reported.

        Lines may be bytes (a file opened in binary): a line that is not
        UTF-8 is then reported on its own instead of ending the audit.
        `source` names the file in the reason of a repeated id. With
        `workers` above 1 the records are replayed in that many processes,
        in chunks; results still come in input order. `progress` is called
        with the bytes (or characters) of each chunk of lines once audited.
        """
        chunks = chunked(enumerate(lines, start=1), LINES_PER_CHUNK)
        work = partial(_audit_chunk, allow_unfinished=self.allow_unfinished)
        for done in ordered_map(work, chunks, workers, preload=("analysis.audit",)):
            for number, result, record_id in done.results:
                if record_id is not None:
                    self._check_unique(record_id, result, source, number)
                yield result
            if progress is not None:
                progress(done.size)

    def _check_unique(
        self, record_id: str, result: AuditResult, source: str | None, number: int
    ) -> None:
        first = self._first_use.setdefault(record_id, (source, number))
        if first == (source, number):
            return
        first_source, first_line = first
        where = f"line {first_line}"
        if first_source != source and first_source is not None:
            where += f" of {first_source}"
        result.problems.insert(
            0,
            Problem(
                None, None, "duplicate_id", f"the id {record_id!r} was already used on {where}"
            ),
        )


LINES_PER_CHUNK = 64
"""Records handed to a worker at once: the hand-over costs less than 1% of their replay."""


@dataclass(frozen=True, slots=True)
class _Done:
    results: list[tuple[int, AuditResult, str | None]]
    size: int
    """Bytes (or characters) of the chunk's lines, for a progress bar."""


def _audit_chunk(chunk: list[tuple[int, str | bytes]], allow_unfinished: bool) -> _Done:
    """Audit numbered lines (in a worker); blank ones give no result."""
    results = []
    for number, raw in chunk:
        audited = audit_line(number, raw, allow_unfinished=allow_unfinished)
        if audited is not None:
            results.append((number, *audited))
    return _Done(results, sum(len(raw) for _, raw in chunk))


def audit_line(
    number: int, raw: str | bytes, *, allow_unfinished: bool = False
) -> tuple[AuditResult, str | None] | None:
    """One line's result and its record's `id` (None: none usable); None for a blank line."""
    audited = audit_line_parsed(number, raw, allow_unfinished=allow_unfinished)
    return None if audited is None else audited[:2]


def audit_line_parsed(
    number: int,
    raw: str | bytes,
    *,
    allow_unfinished: bool = False,
    witness: Callable[[object, MatchRecord], Witness] | None = None,
) -> tuple[AuditResult, str | None, object, MatchRecord | None] | None:
    """`audit_line`, with the decoded JSON and the parsed record (for `sniff import`)."""
    name = f"line:{number}"
    text, fault = _decode(raw)
    if text is None:
        assert fault is not None
        return _malformed(name, fault), None, None, None
    if not text.strip(_JSON_WHITESPACE):
        return None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        return _malformed(name, f"not JSON: {e.msg} at column {e.colno}"), None, None, None
    except (ValueError, RecursionError) as e:  # an over-long number, too deep nesting
        return _malformed(name, f"not JSON this audit can read: {e}"), None, None, None
    result, record = audit_parsed(obj, name, allow_unfinished=allow_unfinished, witness=witness)
    return result, _record_id(obj), obj, record


def audit_lines(
    lines: Iterable[str | bytes], *, allow_unfinished: bool = False
) -> Iterator[AuditResult]:
    """Audit one file's JSON Lines (see `Audit.lines`)."""
    return Audit(allow_unfinished=allow_unfinished).lines(lines)


def parse_hex_pairs(
    values: Iterable[str], option: str, shape: str, what: str
) -> dict[str, list[str]]:
    """`NAME=` and 64 hex digits (lowercased), by name, as the log audit's options give
    what a seat or a tournament kept (--head, --commitment, --tournament); ValueError
    naming `option` and the `shape` wanted for a bad one."""
    from service.storage.chain import from_hex

    kept: dict[str, list[str]] = {}
    for value in values:
        name, sep, digest = value.partition("=")
        digest = digest.strip().lower()
        if not sep or not name or from_hex(digest) is None:
            raise ValueError(f"{option} {value!r}: give {shape}, as 64 hex digits ({what})")
        kept.setdefault(name, []).append(digest)
    return kept

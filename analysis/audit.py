"""Audit RECORD.md match records by replaying them through the engine.

An audit never trusts a claim: it replays every deal and action, and
compares each figure the scorekeeper wrote down with the engine's own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from service.engine import (
    BadDeal,
    IllegalMove,
    MalformedRecord,
    Match,
    Move,
    Phase,
    parse_record,
)
from service.engine.match import RoundLog
from service.engine.record import MatchRecord, RecordRound


@dataclass(frozen=True, slots=True)
class Problem:
    """One defect, at its place: `round`/`action` count from 0; None means the whole round/match."""

    round: int | None
    action: int | None
    kind: str
    reason: str

    def place(self) -> str:
        if self.round is None:
            return "match"
        if self.action is None:
            return f"round {self.round}"
        return f"round {self.round}, action {self.action}"


@dataclass(slots=True)
class AuditResult:
    id: str
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        """The RECORD.md machine-readable form."""
        return {"id": self.id, "ok": self.ok, "problems": [asdict(p) for p in self.problems]}

    def to_text(self) -> str:
        if self.ok:
            return f"{self.id}: ok"
        count = len(self.problems)
        lines = [f"{self.id}: {count} problem{'s' if count > 1 else ''}"]
        lines += [f"  {p.place()}: {p.kind}: {p.reason}" for p in self.problems]
        return "\n".join(lines)


class _Stop(Exception):
    """A defect after which the rest of the match cannot be replayed meaningfully."""


class _Auditor:
    def __init__(self, record: MatchRecord, result: AuditResult) -> None:
        self.record = record
        self.result = result
        self.match = Match(
            record.seats,
            target=record.target,
            variant=record.variant,
            round_limit=record.round_limit,
            auto_deal=False,
        )

    def problem(self, round: int | None, action: int | None, kind: str, reason: str) -> None:
        self.result.problems.append(Problem(round, action, kind, reason))

    def run(self) -> None:
        try:
            for r, rnd in enumerate(self.record.rounds):
                self.audit_round(r, rnd)
        except _Stop:
            return
        self.audit_match_claims()

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
        claimed_points = rnd.claims.points
        for k, move in enumerate(rnd.actions):
            if match.phase is Phase.OVER:
                self.problem(
                    r, k, "after_win", f"the match was already over: {match.result_text()}"
                )
                raise _Stop
            if match.phase is Phase.AWAITING_DEAL:
                end = match.history[-1].end
                assert end is not None
                self.problem(
                    r, k, "after_round_end", f"the round had already ended ({end.kind.value})"
                )
                raise _Stop
            try:
                result = match.apply(move)
            except IllegalMove as e:
                self.problem(r, k, e.kind, f"{move}: {e}")
                raise _Stop from None
            if claimed_points is not None and k < len(claimed_points):
                self.check_points(r, k, claimed_points[k], result.points, move)
        if claimed_points is not None and len(claimed_points) != len(rnd.actions):
            self.problem(
                r,
                None,
                "points",
                f"claims {len(claimed_points)} point figures for {len(rnd.actions)} actions",
            )
        if match.phase is Phase.PLAYING:
            self.problem(
                r,
                None,
                "round_incomplete",
                f"the round stops after {len(rnd.actions)} actions, but it is not over: "
                f"seat {match.turn} is to play",
            )
            raise _Stop
        self.audit_round_claims(r, rnd, match.history[-1])

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


def audit_record(obj: object, name: str) -> AuditResult:
    """Audit one decoded record; `name` identifies it when it has no `id`."""
    record_id = obj.get("id") if isinstance(obj, Mapping) else None
    result = AuditResult(str(record_id) if isinstance(record_id, str | int) else name)
    try:
        record = parse_record(obj)
    except MalformedRecord as e:
        result.problems.append(Problem(e.round, e.action, e.kind, e.reason))
        return result
    _Auditor(record, result).run()
    return result


def audit_lines(lines: Iterable[str]) -> Iterator[AuditResult]:
    """Audit JSON Lines, one match a line; blank lines are skipped, bad lines reported."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        name = f"line:{number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            yield AuditResult(name, [Problem(None, None, "malformed", f"not JSON: {e.msg}")])
            continue
        yield audit_record(obj, name)

"""Matches to analyse, from the event log or from docs/records.md records, as plain picklable data.

A `MatchSpec` is everything needed to rebuild a match through the engine:
its settings, and per round the deal and the actions in notation. Worker
processes receive specs and rebuild the positions themselves, so what
crosses a process boundary is small and independent of engine objects.

The log is read through `analysis.replay.source.read_match_events` (the
one read path: a live service's Query RPC, or the file read-only). Deals
leave the log only for finished matches, so a match still in play cannot be
analysed: its hands stay hidden as the log's public views keep them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sniff import (
    Deal,
    MalformedRecord,
    Match,
    Move,
    SniffError,
    Tile,
    parse_record,
    variant_named,
)


class SourceError(ValueError):
    """A match that cannot be analysed as asked: unknown, still in play, or not a valid record.
    The CLI reports it as misuse (one line, exit 2) before anything is analysed or stored."""


@dataclass(frozen=True, slots=True)
class RoundSpec:
    hands: tuple[tuple[int, ...], ...]
    boneyard: tuple[int, ...]
    leader: int
    actions: tuple[str, ...]
    """Every action of the round in docs/records.md notation."""


@dataclass(frozen=True, slots=True)
class MatchSpec:
    match_id: str
    seats: int
    variant: str
    target: int
    round_limit: int | None
    rounds: tuple[RoundSpec, ...]
    players: tuple[str, ...] | None = None
    """Who played each seat, when known (records name their players)."""

    def player(self, seat: int) -> str:
        """The label a seat is summed up under: its player's name, else `seat N`."""
        return self.players[seat] if self.players is not None else f"seat {seat}"

    def rebuild(self) -> Match:
        """A fresh match with these settings and no round dealt (`replay` deals them)."""
        return Match(
            self.seats,
            target=self.target,
            variant=variant_named(self.variant),
            round_limit=self.round_limit,
            auto_deal=False,
        )

    def check(self) -> None:
        """Replay every deal and action through the engine; SourceError at the first fault."""
        match = self.rebuild()
        for index, rnd in enumerate(self.rounds):
            try:
                match.deal(Deal.of(rnd.hands, rnd.boneyard, rnd.leader))
                for k, text in enumerate(rnd.actions):
                    try:
                        match.apply(Move.parse(text))
                    except SniffError as e:
                        raise SourceError(
                            f"match {self.match_id}: round {index}, action {k} ({text}): {e}"
                        ) from None
            except SniffError as e:
                raise SourceError(f"match {self.match_id}: round {index}: {e}") from None


def _tiles(texts: Sequence[str]) -> tuple[int, ...]:
    return tuple(int(Tile.parse(t)) for t in texts)


def spec_from_events(match_id: str, rows: Sequence[dict[str, Any]]) -> MatchSpec:
    """A match from its log events in order (`match_events` rows, revealed)."""
    created = next((r for r in rows if r["kind"] == "match_created"), None)
    if created is None:
        raise SourceError(f"match {match_id}: the log holds no creation event")
    if not any(r["kind"] == "match_ended" for r in rows):
        raise SourceError(
            f"match {match_id} is still in play: its deals stay hidden until it ends, "
            "so it cannot be analysed yet"
        )
    rounds: list[dict[str, Any]] = []
    for row in rows:
        if row["kind"] == "round_dealt":
            if row.get("hands") is None or row.get("boneyard") is None:
                raise SourceError(f"match {match_id}: the log does not show its deals")
            rounds.append(
                {
                    "hands": tuple(_tiles(h) for h in row["hands"]),
                    "boneyard": _tiles(row["boneyard"]),
                    "leader": int(row["leader"]),
                    "actions": [],
                }
            )
        elif row["kind"] == "action":
            if not rounds:
                raise SourceError(f"match {match_id}: an action before any deal in the log")
            rounds[-1]["actions"].append(row["move"])
    limit = created.get("round_limit")
    return MatchSpec(
        match_id=match_id,
        seats=int(created["seats"]),
        variant=created.get("variant") or "american",
        target=int(created["target"]),
        round_limit=None if limit is None else int(limit),
        rounds=tuple(
            RoundSpec(r["hands"], r["boneyard"], r["leader"], tuple(r["actions"])) for r in rounds
        ),
    )


def specs_from_log(db_path: str | Path, match_ids: Sequence[str]) -> list[MatchSpec]:
    """The finished matches of the log named by `match_ids`, each checked by replay."""
    from analysis.logquery import UnknownMatch
    from analysis.replay.source import read_match_events

    specs = []
    for match_id in match_ids:
        try:
            rows = read_match_events(db_path, match_id, reveal=True)
        except UnknownMatch as e:
            raise SourceError(str(e)) from None
        spec = spec_from_events(match_id, rows)
        spec.check()
        specs.append(spec)
    return specs


def spec_from_record(obj: object, fallback_id: str) -> MatchSpec:
    """A match from a decoded docs/records.md record (its id, or `fallback_id`)."""
    record = parse_record(obj)
    return MatchSpec(
        match_id=record.id if record.id is not None else fallback_id,
        seats=record.seats,
        variant=record.variant.name,
        target=record.target,
        round_limit=record.round_limit,
        rounds=tuple(
            RoundSpec(
                tuple(tuple(int(t) for t in h) for h in r.deal.hands),
                tuple(int(t) for t in r.deal.boneyard),
                r.deal.leader,
                tuple(str(m) for m in r.actions),
            )
            for r in record.rounds
        ),
        players=record.players,
    )


def specs_from_records(path: str | Path) -> list[MatchSpec]:
    """Every record of a JSON Lines file (blank lines skipped), each checked by replay."""
    specs = []
    seen: set[str] = set()
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise SourceError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    for number, line in _numbered(lines):
        where = f"{path}, line {number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise SourceError(f"{where}: not JSON ({e.msg})") from None
        try:
            spec = spec_from_record(obj, f"line{number}")
        except MalformedRecord as e:
            raise SourceError(f"{where}: not a match record: {e}") from None
        if spec.match_id in seen:
            raise SourceError(f"{where}: a second record with id {spec.match_id!r}")
        seen.add(spec.match_id)
        try:
            spec.check()
        except SourceError as e:
            raise SourceError(f"{where}: {e} (sniff audit shows every problem)") from None
        specs.append(spec)
    if not specs:
        raise SourceError(f"{path} holds no match record")
    return specs


def _numbered(lines: Sequence[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield number, line

"""Matches read from the event log, whether or not `sniff serve` holds the file.

Every read goes through `analysis.logquery.query_log_rows` (the Query RPC
of a live service, or a read-only open of the file), with the SQL of
queries.sql and bound values only. A listing never loads the engine (the
replay model is imported by `load_replay`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from analysis.logquery import UnknownMatch, query_log_rows
from analysis.sqlfiles import named_queries

if TYPE_CHECKING:
    from analysis.replay.model import Replay


class BadTime(ValueError):
    """Text that is neither a date nor an ISO timestamp."""


def _sql(name: str) -> str:
    return named_queries("analysis.replay", "queries.sql")[name]


def read_match_events(
    db_path: str | Path,
    match_id: str,
    *,
    reveal: bool = False,
    regenerated: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """One match's events in order (queries.sql `match_events`); UnknownMatch if none.

    A simulated match stored as facts has its events regenerated from its seed
    (`analysis.regenerate`) and read by the same query; `regenerated` is told the line
    that says so."""
    rows, _ = query_log_rows(db_path, _sql("match_events"), [match_id, reveal])
    if rows:
        return rows
    from analysis.regenerate import events_database, facts_only_in_file, regenerated_table

    found = facts_only_in_file(db_path, match_id)
    if found is None:
        raise UnknownMatch(f"no match {match_id!r} in {db_path}")
    con = events_database([regenerated_table(found)])
    try:
        result = con.execute(_sql("match_events"), [match_id, reveal])
        names = [d[0] for d in result.description]
        rows = [dict(zip(names, row, strict=True)) for row in result.fetchall()]
    finally:
        con.close()
    if regenerated is not None:
        regenerated(found.note())
    return rows


def table_match_events(
    table: Any, match_ids: Sequence[str], *, reveal: bool = True
) -> dict[str, list[dict[str, Any]]]:
    """Each match's events from an Arrow table of log events not yet in any log (a
    tournament's before it is stored), read by the same query as `read_match_events`."""
    from analysis.regenerate import events_database

    con = events_database([table])
    try:
        out = {}
        for match_id in match_ids:
            result = con.execute(_sql("match_events"), [match_id, reveal])
            names = [d[0] for d in result.description]
            out[match_id] = [dict(zip(names, row, strict=True)) for row in result.fetchall()]
        return out
    finally:
        con.close()


def load_replay(
    db_path: str | Path,
    match_id: str,
    *,
    reveal: bool = False,
    regenerated: Callable[[str], None] | None = None,
) -> Replay:
    """The replay of one match of the log (`read_match_events`)."""
    from analysis.replay.model import build_replay

    rows = read_match_events(db_path, match_id, reveal=reveal, regenerated=regenerated)
    return build_replay(match_id, rows, reveal=reveal)


# -- listing matches --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatchFilter:
    """What `sniff matches` keeps; None means no condition."""

    seats: int | None = None
    since: datetime | None = None
    until: datetime | None = None
    """Exclusive upper bound."""
    finished: bool | None = None
    winner: int | None = None
    limit: int | None = None

    @property
    def on_result(self) -> bool:
        """True when the listing depends on how matches ended (finished, winner)."""
        return self.finished is not None or self.winner is not None

    def params(self) -> list[Any]:
        """The values of queries.sql's list_matches."""
        since = None if self.since is None else self.since.isoformat()
        until = None if self.until is None else self.until.isoformat()
        return [self.seats, since, until, self.finished, self.winner, self.limit]


@dataclass(frozen=True, slots=True)
class MatchRow:
    match_id: str
    seats: int
    variant: str
    """The variant when the log records one, else its rules version."""
    created_at: datetime | None
    rounds: int
    finished: bool
    winner: int | None
    scores: tuple[int, ...] | None

    @property
    def winning_seats(self) -> list[int] | None:
        """The winning seat, both partners' seats with four ([0, 2]), or None (none yet, a draw)."""
        if self.winner is None:
            return None
        if self.seats == 4:
            first = self.winner % 2
            return [first, first + 2]
        return [self.winner]

    @property
    def winners(self) -> str:
        """`winning_seats` for people: '1', '0+2', or '' (none yet, a draw)."""
        seats = self.winning_seats
        return "" if seats is None else "+".join(map(str, seats))

    COLUMNS: ClassVar[tuple[str, ...]] = (
        "match_id",
        "seats",
        "variant",
        "created_at",
        "rounds",
        "finished",
        "winners",
        "scores",
    )
    """A listing's columns, the same in every format (`values` and `to_json`)."""

    def values(self) -> tuple[Any, ...]:
        """The row's values in `COLUMNS` order, as a query of the log would give them."""
        return (
            self.match_id,
            self.seats,
            self.variant,
            self.created_at,
            self.rounds,
            self.finished,
            self.winning_seats,
            None if self.scores is None else list(self.scores),
        )

    def to_json(self) -> dict[str, Any]:
        row = dict(zip(self.COLUMNS, self.values(), strict=True))
        row["created_at"] = None if self.created_at is None else self.created_at.isoformat()
        return row


def list_matches(db_path: str | Path, where: MatchFilter) -> list[MatchRow]:
    """The log's matches that pass `where`, newest first (queries.sql `list_matches`)."""
    rows, _ = query_log_rows(db_path, _sql("list_matches"), where.params())
    return [_match_row(r) for r in rows]


def _match_row(r: dict[str, Any]) -> MatchRow:
    scores = r.get("scores")
    return MatchRow(
        match_id=r["match_id"],
        seats=r["seats"],
        variant=r.get("variant") or r.get("rules_version") or "",
        created_at=r.get("created_at"),
        rounds=int(r.get("rounds") or 0),
        finished=bool(r["finished"]),
        winner=r.get("winner"),
        scores=None if scores is None else tuple(scores),
    )


def parse_time(text: str, *, end_of_day: bool = False) -> datetime:
    """A date (YYYY-MM-DD) or an ISO timestamp; without a zone, UTC.

    With `end_of_day`, a bare date means the start of the next day, so that
    `--until 2025-05-01` keeps the whole of that day.
    """
    text = text.strip()
    try:
        day = date.fromisoformat(text)
    except ValueError:
        day = None
    if day is not None and len(text) <= 10:
        moment = datetime.combine(day, time(0), tzinfo=UTC)
        return moment + timedelta(days=1) if end_of_day else moment
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadTime(
            f"{text!r} is not a date (2025-05-01) or an ISO timestamp (2025-05-01T14:30:00)"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

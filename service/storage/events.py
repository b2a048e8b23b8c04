"""The one record type of the event log, and its Arrow and row conversions.

A match is stored as the ordered list of everything that happened to it, so
the service can rebuild any match after a restart by replaying its events
and analysis can ask questions of every match in SQL. The typed columns hold
what analysis filters on (round, seat, move, points); the rest of an event
lives in `detail`, whose keys the views in `schema.sql` unpack.

`detail` is a plain mapping of JSON values (not JSON text): the service
builds it from engine values, replay reads it back as a dict, and the log
alone decides how it is stored. Use lists, not tuples, for the round trip to
compare equal.

pyarrow is imported by the Arrow conversions only (`arrow_schema()` and the
`*_to_arrow` functions), so that a tool reading the log as rows never loads it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, get_args

if TYPE_CHECKING:
    import pyarrow as pa

EventKind = Literal["match_created", "round_dealt", "action", "round_ended", "match_ended"]
"""What an event records; the `kind` column holds one of these words."""

KINDS: Final[frozenset[str]] = frozenset(get_args(EventKind))

LeaderChoice = Literal["lot", "finisher", "explicit"]
"""How a round's leader was chosen (docs/rules.md §2): lot, last round's finisher, or given."""

RoundEnd = Literal["domino", "blocked"]
"""How a round ended (docs/records.md `claims.end`)."""


# The INTEGER columns: checked here so a value the column cannot hold fails
# its caller, not a group commit.
_INT_FIELDS: Final = ("seq", "round", "action_index", "seat", "points", "ends_sum")
_INT32: Final = -(2**31)
_TEXT_FIELDS: Final = ("match_id", "move", "drawn")

# The typed columns of match_settings_all that a match_created `detail` fills:
# key -> (lowest, highest) value the column holds (SMALLINT, INTEGER, HUGEINT).
SETTINGS_RANGES: Final[dict[str, tuple[int, int]]] = {
    "seats": (-(2**15), 2**15 - 1),
    "target": (-(2**31), 2**31 - 1),
    "seed": (-(2**127), 2**127 - 1),
    "round_limit": (-(2**31), 2**31 - 1),
}

SOURCES: Final = frozenset({"served", "imported", "simulated"})
"""Where a match comes from (match_settings_all.source): played through the
service, loaded from a record file by `sniff import`, or played by a simulation."""


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One row of the `events` table.

    `seq` numbers a match's events 0, 1, 2, ... without gaps (the log refuses
    anything else), so `events_for` is a complete, ordered replay script.
    `round` and `action_index` count from 0 like docs/records.md; they are None for
    match-level events. `logged_at` is filled in by the log (the commit's
    time) and is left out of equality, so an event read back equals the one
    appended; give it only to import events with their original times.
    `hash` is the event's link in the match's hash chain (chain.py), given by
    whoever writes the event (the hub, an import, a migration); it is left
    out of equality too, so two events compare by what happened.
    """

    match_id: str
    seq: int
    kind: EventKind
    round: int | None = None
    action_index: int | None = None
    seat: int | None = None
    move: str | None = None
    drawn: str | None = None
    points: int | None = None
    ends_sum: int | None = None
    detail: Mapping[str, Any] | None = field(default=None, hash=False)
    hash: bytes | None = field(default=None, compare=False)
    """The event's link in its match's hash chain (chain.py); None if it has none."""
    logged_at: datetime | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # Cheap checks here keep one bad event from reaching the group commit,
        # where a constraint failure would cost every batch a retry.
        if not isinstance(self.match_id, str) or not self.match_id:
            raise ValueError("match_id must be a non-empty string")
        if self.seq is None or (isinstance(self.seq, int) and self.seq < 0):
            raise ValueError(f"seq must be >= 0, not {self.seq!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, not {self.kind!r}")
        for name in _INT_FIELDS:
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int)
                or not _INT32 <= value < -_INT32
            ):
                raise ValueError(f"{name} must be a 32-bit int or None, not {value!r}")
        if self.hash is not None and (not isinstance(self.hash, bytes) or len(self.hash) != 32):
            raise ValueError(f"hash must be 32 bytes or None, not {self.hash!r}")
        if self.kind == "match_created" and self.detail is not None:
            _check_settings(self.detail)

    # -- constructors that fix the `detail` keys the views rely on ----------

    @classmethod
    def match_created(
        cls,
        match_id: str,
        *,
        seats: int,
        target: int,
        seed: int | None,
        rules_version: str,
        **extra: Any,
    ) -> LogEvent:
        """The first event of every match (seq 0); `extra` keeps further settings."""
        detail = {
            "seats": seats,
            "target": target,
            "seed": seed,
            "rules_version": rules_version,
            **extra,
        }
        return cls(match_id, 0, "match_created", detail=detail)

    @classmethod
    def round_dealt(
        cls,
        match_id: str,
        seq: int,
        *,
        round: int,
        hands: Sequence[Sequence[str]],
        boneyard: Sequence[str],
        leader: int,
        leader_choice: LeaderChoice,
    ) -> LogEvent:
        """A deal: every hand, the boneyard in draw order, and who leads and why."""
        detail = {
            "hands": [list(hand) for hand in hands],
            "boneyard": list(boneyard),
            "leader": leader,
            "leader_choice": leader_choice,
        }
        return cls(match_id, seq, "round_dealt", round=round, seat=leader, detail=detail)

    @classmethod
    def action(
        cls,
        match_id: str,
        seq: int,
        *,
        round: int,
        action_index: int,
        seat: int,
        move: str,
        drawn: str | None = None,
        points: int | None = None,
        ends_sum: int | None = None,
    ) -> LogEvent:
        """One action in docs/records.md notation, with what it drew or scored."""
        return cls(
            match_id,
            seq,
            "action",
            round=round,
            action_index=action_index,
            seat=seat,
            move=move,
            drawn=drawn,
            points=points,
            ends_sum=ends_sum,
        )

    @classmethod
    def round_ended(
        cls,
        match_id: str,
        seq: int,
        *,
        round: int,
        end: RoundEnd,
        finisher: int | None,
        pips: Sequence[int],
        deductions: Sequence[int],
        scores: Sequence[int],
    ) -> LogEvent:
        """A round's end: how, who went out, hand pips, deductions, scores after."""
        detail = {
            "end": end,
            "finisher": finisher,
            "pips": list(pips),
            "deductions": list(deductions),
            "scores": list(scores),
        }
        return cls(match_id, seq, "round_ended", round=round, seat=finisher, detail=detail)

    @classmethod
    def match_ended(
        cls,
        match_id: str,
        seq: int,
        *,
        winner: int | None,
        scores: Sequence[int],
        round_limit_reached: bool = False,
        **extra: Any,
    ) -> LogEvent:
        """The last event of a finished match; `winner` is None for a draw at the round limit.

        `extra` holds the rest: `rounds` (which the typed results table takes)
        and the reveal of the seed, its salt and the chain secret
        (chain.MatchSecrets).
        """
        detail: dict[str, Any] = {"winner": winner, "scores": list(scores)}
        if round_limit_reached:
            detail["round_limit_reached"] = True
        detail.update(extra)
        return cls(match_id, seq, "match_ended", seat=winner, detail=detail)


EventContent: TypeAlias = tuple[
    EventKind,
    int | None,  # round
    int | None,  # action_index
    int | None,  # seat
    str | None,  # move
    str | None,  # drawn
    int | None,  # points
    int | None,  # ends_sum
    Mapping[str, Any] | None,  # detail
]
"""An event's values after its match_id and seq, in `COLUMNS` order up to its detail: what
the event says, without where it sits in the log (so a bulk writer encodes it without a
`LogEvent`, service/match_recorder.py)."""


def content_of(event: LogEvent) -> EventContent:
    """What `event` says (its values after match_id and seq, detail included)."""
    return (
        event.kind,
        event.round,
        event.action_index,
        event.seat,
        event.move,
        event.drawn,
        event.points,
        event.ends_sum,
        event.detail,
    )


def _check_settings(detail: Mapping[str, Any]) -> None:
    """Refuse settings that match_settings_all's typed columns cannot hold."""
    for key, (low, high) in SETTINGS_RANGES.items():
        value = detail.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high
        ):
            raise ValueError(f"{key} must be an int from {low} to {high} or None, not {value!r}")
    for key in ("rules_version", "variant", "run_id", "seed_commitment"):
        value = detail.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{key} must be a string or None, not {value!r}")
    players = detail.get("players")
    if players is not None and not (
        isinstance(players, list | tuple) and all(isinstance(p, str) for p in players)
    ):
        raise ValueError(f"players must be a list of names or None, not {players!r}")
    source = detail.get("source")
    if source is not None and source not in SOURCES:
        raise ValueError(f"source must be one of {sorted(SOURCES)} or None, not {source!r}")


COLUMNS: Final[tuple[str, ...]] = (
    "match_id",
    "seq",
    "kind",
    "round",
    "action_index",
    "seat",
    "move",
    "drawn",
    "points",
    "ends_sum",
    "detail",
    "hash",
    "logged_at",
)
"""Column order of `events_all` as the rows and Arrow batches carry it (logged_at last)."""


@cache
def arrow_schema() -> pa.Schema:
    """The Arrow schema of event rows, in `COLUMNS` order."""
    import pyarrow as pa

    schema = pa.schema(
        [
            pa.field("match_id", pa.string(), nullable=False),
            pa.field("seq", pa.int32(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("round", pa.int32()),
            pa.field("action_index", pa.int32()),
            pa.field("seat", pa.int32()),
            pa.field("move", pa.string()),
            pa.field("drawn", pa.string()),
            pa.field("points", pa.int32()),
            pa.field("ends_sum", pa.int32()),
            pa.field("detail", pa.string()),
            pa.field("hash", pa.binary()),
            pa.field("logged_at", pa.timestamp("us", tz="UTC")),
        ]
    )
    assert tuple(schema.names) == COLUMNS
    return schema


_encode_detail: Final = json.JSONEncoder(
    separators=(",", ":"), allow_nan=False, ensure_ascii=False
).encode
"""`json.dumps` with these settings, without making an encoder for each detail."""


def dump_detail(detail: Mapping[str, Any] | None) -> str | None:
    """A detail as the `detail` column's JSON text (keys in the detail's own order)."""
    if detail is None:
        return None
    # allow_nan=False: NaN is not JSON and DuckDB's JSON type would refuse it
    # inside the group commit, failing the batch late instead of here.
    text = _encode_detail(detail)
    text.encode()  # UnicodeEncodeError (a ValueError) for a lone surrogate DuckDB would refuse
    return text


EventRow: TypeAlias = tuple[
    str,  # match_id
    int,  # seq
    str,  # kind
    int | None,  # round
    int | None,  # action_index
    int | None,  # seat
    str | None,  # move
    str | None,  # drawn
    int | None,  # points
    int | None,  # ends_sum
    str | None,  # detail, as JSON text
    bytes | None,  # hash
    datetime | None,  # logged_at
]
"""One event as the values of an `events` row, in `COLUMNS` order."""

DETAIL: Final = 10
"""The index of `detail` in an EventRow."""
HASH: Final = 11
"""The index of `hash` in an EventRow."""
assert COLUMNS[DETAIL] == "detail"
assert COLUMNS[HASH] == "hash"


def to_rows(events: Iterable[LogEvent]) -> list[EventRow]:
    """Events as `events_all` rows, `detail` serialized.

    Raises TypeError or ValueError for a `detail` that is not JSON or a value
    DuckDB would refuse (text that is not UTF-8, an int its column cannot
    hold, even one forced past `LogEvent`'s own checks), so a bad event fails
    its own caller before it reaches the shared group commit.
    """
    rows: list[EventRow] = [
        (
            e.match_id,
            e.seq,
            e.kind,
            e.round,
            e.action_index,
            e.seat,
            e.move,
            e.drawn,
            e.points,
            e.ends_sum,
            dump_detail(e.detail),
            e.hash,
            e.logged_at,
        )
        for e in events
    ]
    for row in rows:
        _check_storable(row)
    return rows


_INT_INDEXES: Final = tuple(i for i, name in enumerate(COLUMNS) if name in _INT_FIELDS)
_TEXT_INDEXES: Final = tuple(i for i, name in enumerate(COLUMNS) if name in _TEXT_FIELDS)


def _check_storable(row: EventRow) -> None:
    for i in _INT_INDEXES:
        value = row[i]
        if value is not None and not _INT32 <= value < -_INT32:  # type: ignore[operator]
            raise ValueError(f"{COLUMNS[i]} {value!r} does not fit an INTEGER column")
    for i in _TEXT_INDEXES:
        text = row[i]
        if isinstance(text, str) and not text.isascii():
            text.encode()  # UnicodeEncodeError (a ValueError) for a lone surrogate


# -- the typed per-match tables --------------------------------------------------


SettingsRow: TypeAlias = tuple[
    str,  # match_id
    int | None,  # seats
    int | None,  # target
    int | None,  # seed
    str | None,  # rules_version
    datetime,  # created_at
    str,  # variant
    int | None,  # round_limit
    list[str] | None,  # players
    str,  # source
    str | None,  # run_id
    bool,  # explicit_deals (of the first deal; later ones mark it at load)
    str | None,  # seed_commitment (hex)
    str | None,  # detail (the match_created detail, JSON text)
]
"""One `match_settings_all` row, in `settings_schema()` order."""


@cache
def settings_schema() -> pa.Schema:
    """The Arrow schema of `match_settings_all` rows."""
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("match_id", pa.string(), nullable=False),
            pa.field("seats", pa.int16()),
            pa.field("target", pa.int32()),
            pa.field("seed", pa.string()),  # HUGEINT: Arrow has no 128-bit int; DuckDB casts
            pa.field("rules_version", pa.string()),
            pa.field("created_at", pa.timestamp("us", tz="UTC"), nullable=False),
            pa.field("variant", pa.string(), nullable=False),
            pa.field("round_limit", pa.int32()),
            pa.field("players", pa.list_(pa.string())),
            pa.field("source", pa.string(), nullable=False),
            pa.field("run_id", pa.string()),
            pa.field("explicit_deals", pa.bool_(), nullable=False),
            pa.field("seed_commitment", pa.string()),
            pa.field("detail", pa.string()),
        ]
    )


def _detail_of(row: EventRow) -> dict[str, Any]:
    """A row's detail as a dict; {} when it has none or it is not a JSON object."""
    text = row[DETAIL]
    try:
        detail = json.loads(text) if text is not None else {}
    except ValueError:
        detail = {}
    return detail if isinstance(detail, dict) else {}


def _text(value: object, default: str | None = None) -> str | None:
    return value if isinstance(value, str) else default


def settings_rows(rows: Iterable[EventRow]) -> list[SettingsRow]:
    """The match_settings_all rows that these events rows create (logged_at set).

    One per match_created event at seq 0. A value its column cannot hold
    (only possible in a journal written by an older release) is None, so a
    load never fails on it.
    """
    out: list[SettingsRow] = []
    for row in rows:
        if row[2] != "match_created" or row[1] != 0:
            continue
        detail = _detail_of(row)
        typed = {key: _fitting(detail.get(key), *SETTINGS_RANGES[key]) for key in SETTINGS_RANGES}
        created_at = row[-1]
        assert created_at is not None, "rows are stamped before they are journaled"
        players = detail.get("players")
        source = detail.get("source")
        out.append(
            (
                row[0],
                typed["seats"],
                typed["target"],
                typed["seed"],
                _text(detail.get("rules_version")),
                created_at,
                _text(detail.get("variant"), "american") or "american",
                typed["round_limit"],
                list(players)
                if isinstance(players, list) and all(isinstance(p, str) for p in players)
                else None,
                source if isinstance(source, str) and source in SOURCES else "served",
                _text(detail.get("run_id")),
                False,  # a load marks the matches it deals to explicitly (explicitly_dealt)
                _text(detail.get("seed_commitment")),
                row[DETAIL],
            )
        )
    return out


def explicitly_dealt(rows: Iterable[EventRow]) -> list[str]:
    """The matches that these rows deal a round to explicitly (not from the seed)."""
    found: set[str] = set()
    for row in rows:
        if (
            row[2] == "round_dealt"
            and row[0] not in found  # one such deal is enough: an import's are all given
            and '"request"' in (row[DETAIL] or "")  # cheap test first: most deals are seeded
            and _detail_of(row).get("dealt_by") == "request"
        ):
            found.add(row[0])
    return sorted(found)


def _fitting(value: object, low: int, high: int) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    return None


def _table(schema: pa.Schema, rows: Sequence[tuple[Any, ...]]) -> pa.Table:
    import pyarrow as pa

    columns: list[Sequence[object]] = (
        list(zip(*rows, strict=True)) if rows else [() for _ in schema]
    )
    return pa.Table.from_arrays(
        [pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)],
        schema=schema,
    )


def settings_to_arrow(rows: Sequence[SettingsRow]) -> pa.Table:
    """Settings rows as one Arrow table in `settings_schema()` (seed as decimal text)."""
    text_seeds = [(*r[:3], None if r[3] is None else str(r[3]), *r[4:]) for r in rows]
    return _table(settings_schema(), text_seeds)


ResultRow: TypeAlias = tuple[
    str,  # match_id
    datetime,  # finished_at
    int | None,  # winner
    list[int] | None,  # scores
    int | None,  # rounds
    str | None,  # ended_by
]
"""One `match_results_all` row, in `results_schema()` order."""


@cache
def results_schema() -> pa.Schema:
    """The Arrow schema of `match_results_all` rows."""
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("match_id", pa.string(), nullable=False),
            pa.field("finished_at", pa.timestamp("us", tz="UTC"), nullable=False),
            pa.field("winner", pa.int32()),
            pa.field("scores", pa.list_(pa.int32())),
            pa.field("rounds", pa.int32()),
            pa.field("ended_by", pa.string()),
        ]
    )


ENDINGS: Final = frozenset({"target", "round_limit", "forfeit"})
"""How a match ended (match_results_all.ended_by): a side reached the target,
or the round limit's last round ended (docs/rules.md §8), or a seat out of time
forfeited (docs/service.md, "Time controls")."""


def ending_of(detail: Mapping[str, Any]) -> str:
    """How the match whose `match_ended` detail this is ended (one of ENDINGS)."""
    if detail.get("forfeit") is not None:
        return "forfeit"
    return "round_limit" if detail.get("round_limit_reached") is True else "target"


def result_rows(rows: Iterable[EventRow]) -> list[ResultRow]:
    """The match_results_all rows that these rows' match_ended events make (logged_at set)."""
    out: list[ResultRow] = []
    for row in rows:
        if row[2] != "match_ended":
            continue
        detail = _detail_of(row)
        finished_at = row[-1]
        assert finished_at is not None, "rows are stamped before they are journaled"
        scores = detail.get("scores")
        ended_by = ending_of(detail)
        out.append(
            (
                row[0],
                finished_at,
                _fitting(detail.get("winner"), _INT32, -_INT32 - 1),
                list(scores)
                if isinstance(scores, list)
                and all(_fitting(s, _INT32, -_INT32 - 1) is not None for s in scores)
                else None,
                _fitting(detail.get("rounds"), _INT32, -_INT32 - 1),
                ended_by if ended_by in ENDINGS else None,
            )
        )
    return out


def results_to_arrow(rows: Sequence[ResultRow]) -> pa.Table:
    return _table(results_schema(), rows)


def rows_to_arrow(rows: Sequence[EventRow]) -> pa.Table:
    """Rows as one Arrow table, the fast way into DuckDB for large groups."""
    return _table(arrow_schema(), rows)


def columns_to_arrow(columns: Sequence[Sequence[Any]]) -> pa.Table:
    """Columns of rows, in `COLUMNS` order, as one Arrow table: `rows_to_arrow`'s table, for a
    writer that keeps columns (no rows to transpose)."""
    import pyarrow as pa

    schema = arrow_schema()
    return pa.Table.from_arrays(
        [pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)],
        schema=schema,
    )


def to_arrow(events: Iterable[LogEvent]) -> pa.Table:
    """Events as one Arrow table in `arrow_schema()`."""
    return rows_to_arrow(to_rows(events))


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def from_row(row: Sequence[Any]) -> LogEvent:
    """A row selected in `COLUMNS` order, back as a `LogEvent`.

    `logged_at` comes as epoch microseconds (queries.sql selects it so).
    """
    (
        match_id,
        seq,
        kind,
        round_,
        action_index,
        seat,
        move,
        drawn,
        points,
        ends_sum,
        detail,
        hash_,
        logged_at,
    ) = row
    return LogEvent(
        match_id=match_id,
        seq=seq,
        kind=kind,
        round=round_,
        action_index=action_index,
        seat=seat,
        move=move,
        drawn=drawn,
        points=points,
        ends_sum=ends_sum,
        detail=None if detail is None else json.loads(detail),
        hash=None if hash_ is None else bytes(hash_),
        logged_at=None if logged_at is None else _EPOCH + timedelta(microseconds=logged_at),
    )

"""The facts of finished matches, stored in the log with their events (docs/schema.md, Facts).

The facts the Sniff-timing statistics need (`sniff.facts`) are computed once, where the
match is played, and written to `match_facts`, `round_facts` and `sniff_decisions` in the
same DuckDB transaction as the match's `match_ended` event:

- the service: the hub makes them from the match in memory as it ends
  (`ended_match_facts`) and hands them to `EventLog.append` with the events, so the log's
  writer replays nothing under its commit lock;
- `sniff import` and other bulk writers (`sniff simulate`): `EventLog.import_matches` with
  the facts rows they already made while playing or replaying;
- only what arrives without them is replayed here: a journal loaded after a crash (the
  journal holds events, not facts), a file migrated from version 3, a caller that made
  none; so a finished match in DuckDB always has its facts.

`insert_facts` writes rows a caller made; `fill_missing_facts` replays what lacks them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sniff import Match, SniffError
from sniff.facts import (
    DECISION_COLUMNS,
    MATCH_COLUMNS,
    ROUND_COLUMNS,
    SOURCES,
    FactsRows,
    empty_columns,
    facts_rows,
)

from . import _sql
from .replayer import RowEvent, rebuilt

TABLES: Final = ("match_facts", "round_facts", "sniff_decisions")
"""The facts tables, in load order."""

REPLAY_BATCH: Final = 2_000
"""Matches replayed and written at once (bounds the memory a migration uses)."""

_log = logging.getLogger(__name__)


def facts_schema() -> str:
    """The script that creates the facts tables (facts.sql), for a store outside the log."""
    return _sql.script("facts.sql")


def new_rows() -> FactsRows:
    """Empty facts rows, to fill with `facts_rows(..., out=rows)`."""
    return FactsRows(
        empty_columns(MATCH_COLUMNS), empty_columns(ROUND_COLUMNS), empty_columns(DECISION_COLUMNS)
    )


_INT: Final = pa.int64()
_INTS: Final = pa.list_(pa.int64())
_TEXT: Final = pa.string()
_TYPES: Final[dict[str, pa.DataType]] = {
    **dict.fromkeys(
        ("match_id", "source", "run", "variant", "orientation", "ending", "outcome"), _TEXT
    ),
    "players": pa.list_(pa.string()),
    **dict.fromkeys(("finished", "complete", "sniff", "mover_is_leader"), pa.bool_()),
    "value": pa.float64(),
    **dict.fromkeys(
        ("scores", "net", "points", "deductions", "placements", "scoring_placements"), _INTS
    ),
}
FACTS_SCHEMAS: Final = tuple(
    pa.schema([pa.field(name, _TYPES.get(name, _INT)) for name in columns])
    for columns in (MATCH_COLUMNS, ROUND_COLUMNS, DECISION_COLUMNS)
)
"""The Arrow schemas of `FactsTables`, table by table (`TABLES`' order): ints as int64 and
values as doubles, which the facts tables' columns take as they are (INSERT casts them)."""


@dataclass(frozen=True, slots=True)
class FactsTables:
    """Facts rows as three Arrow tables (`FACTS_SCHEMAS`): a worker's, which cost far less to
    hand to another process than column lists do (`sniff import`)."""

    matches: pa.Table
    rounds: pa.Table
    decisions: pa.Table


Facts: TypeAlias = FactsRows | FactsTables
"""Facts rows as column lists (`facts_rows`) or as Arrow tables: every function here takes
either."""


def facts_tables(rows: FactsRows) -> FactsTables:
    """Facts rows as Arrow tables in `FACTS_SCHEMAS`."""
    return FactsTables(
        *(
            pa.Table.from_pydict(columns, schema=schema)
            for columns, schema in zip(_parts(rows), FACTS_SCHEMAS, strict=True)
        )
    )


def _parts(rows: Facts) -> tuple[Any, Any, Any]:
    return (rows.matches, rows.rounds, rows.decisions)


def insert_facts(con: duckdb.DuckDBPyConnection, rows: Facts) -> None:
    """Insert facts rows (from `facts_rows`, or as `FactsTables`) into the three tables, in
    the caller's transaction: a bulk writer calls it (or `EventLog.import_matches(...,
    facts=rows)`) in the transaction of the matches' events."""
    for table, part in zip(TABLES, _parts(rows), strict=True):
        if isinstance(part, pa.Table):
            if not part.num_rows:
                continue
            arrow = part
        else:
            if not next(iter(part.values())):
                continue
            arrow = pa.table(part)
        name = f"_pending_{table}"
        con.register(name, arrow)
        try:
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {name}").fetchall()
        finally:
            with suppress(duckdb.Error):
                con.unregister(name)


def merged_facts(parts: Iterable[Facts]) -> Facts:
    """One batch of the facts rows of many matches: column lists if every part is, else
    Arrow tables."""
    parts = list(parts)
    if any(isinstance(part, FactsTables) for part in parts):
        tables = [part if isinstance(part, FactsTables) else facts_tables(part) for part in parts]
        return FactsTables(
            *(pa.concat_tables([_parts(t)[i] for t in tables]) for i in range(len(FACTS_SCHEMAS)))
        )
    out = new_rows()
    for part in parts:
        assert isinstance(part, FactsRows)
        for into, columns in zip(_parts(out), _parts(part), strict=True):
            for name, values in columns.items():
                into[name].extend(values)
    return out


def match_ids_of(rows: Facts) -> list[str]:
    """The matches of facts rows, in order (their match_facts rows)."""
    if isinstance(rows, FactsTables):
        return [str(m) for m in rows.matches.column("match_id").to_pylist()]
    return list(rows.matches["match_id"])


def _match_ids(part: Any) -> Iterable[str]:
    """The match ids of one table's rows (column lists, or an Arrow table: each id once)."""
    if isinstance(part, pa.Table):
        return [str(m) for m in pc.unique(part.column("match_id")).to_pylist()]
    return part["match_id"]  # type: ignore[no-any-return]


def facts_of(rows: Facts, match_ids: set[str]) -> Facts:
    """The rows of `rows` that belong to the matches `match_ids` (`rows` itself when every
    row does)."""
    if all(match_ids.issuperset(_match_ids(part)) for part in _parts(rows)):
        return rows
    if isinstance(rows, FactsTables):
        wanted = pa.array(sorted(match_ids), pa.string())
        return FactsTables(
            *(t.filter(pc.is_in(t.column("match_id"), value_set=wanted)) for t in _parts(rows))
        )
    tables = []
    for columns in _parts(rows):
        keep = [i for i, m in enumerate(columns["match_id"]) if m in match_ids]
        tables.append({name: [values[i] for i in keep] for name, values in columns.items()})
    return FactsRows(*tables)


def fill_missing_facts(
    con: duckdb.DuckDBPyConnection, match_ids: Sequence[str] | None = None
) -> int:
    """Replay finished matches and store their facts, in the caller's transaction; how many.

    `match_ids`: the matches whose end the caller is writing (they have no facts yet); None:
    every finished match without facts (a migration). A match that does not replay (which
    the engine refused when it was played, so never in the normal course) is logged and left
    without facts rather than stopping the log from loading its events.
    """
    if match_ids is None:
        found = con.execute(_sql.query("finished_without_facts")).fetchall()
        match_ids = [str(m) for (m,) in found]
    done = 0
    for start in range(0, len(match_ids), REPLAY_BATCH):
        chunk = list(match_ids[start : start + REPLAY_BATCH])
        events = con.execute(_sql.query("replay_events"), {"match_ids": chunk}).fetchall()
        rows = new_rows()
        for match_id, match_events in _by_match(events):
            try:
                match, players, source, run = replay_events(match_events)
            except (SniffError, KeyError, TypeError, ValueError):
                _log.exception("match %s does not replay: it gets no facts", match_id)
                continue
            facts_rows(match, match_id, players, source, run, out=rows)
            done += 1
        insert_facts(con, rows)
    return done


def _by_match(rows: Sequence[tuple[Any, ...]]) -> Iterator[tuple[str, list[tuple[Any, ...]]]]:
    current: str | None = None
    events: list[tuple[Any, ...]] = []
    for row in rows:
        if row[0] != current:
            if current is not None:
                yield current, events
            current, events = str(row[0]), []
        events.append(row)
    if current is not None:
        yield current, events


def replay_events(
    events: Sequence[tuple[Any, ...]],
) -> tuple[Match, list[str] | None, str, str | None]:
    """A logged match rebuilt from its rows of creation, deals and actions (queries.sql
    `replay_events`: match_id, the event's fields, its detail as JSON text); with its
    players, source and run. The log is taken at its word (`replayer.rebuilt`, not strict):
    the facts are those of the match as logged, and the audit is what checks it."""
    first = events[0]
    if first[2] != "match_created":
        raise ValueError("the log does not start with its creation")
    logged = [RowEvent.of(row, None if row[10] is None else json.loads(row[10])) for row in events]
    settings = logged[0].detail or {}
    match = rebuilt(logged, strict=False)
    return (match, *facts_identity(settings))


def facts_identity(settings: Mapping[str, Any]) -> tuple[list[str] | None, str, str | None]:
    """The players, source and run a match's facts carry, from its `match_created` detail:
    the one reading of them, whether the hub makes the facts as the match ends or a replay
    makes them later."""
    players = settings.get("players")
    source = settings.get("source", "served")
    return (
        players if isinstance(players, list) and len(players) == settings.get("seats") else None,
        source if source in SOURCES else "served",
        settings.get("run_id", settings.get("run")),
    )


def ended_match_facts(match: Match, match_id: str, settings: Mapping[str, Any]) -> FactsRows:
    """The facts rows of a match that has just ended in memory (`EventLog.append(...,
    facts=)`), so the log need not replay it."""
    return facts_rows(match, match_id, *facts_identity(settings), out=new_rows())

"""Facts by replaying matches through the engine: from RECORD.md files or the event log.

Until the event log stores each match's facts when it is logged (planned:
the log will call `facts_rows` itself), the statistics get them here by
replaying every finished match of the log, or every record of a file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from analysis.stats.sql import statement
from analysis.stats.store import FactsStore, StatsError
from service.engine import Deal, Match, Move, SniffError, Tile, replay
from service.engine.facts import (
    DECISION_COLUMNS,
    MATCH_COLUMNS,
    ROUND_COLUMNS,
    SOURCES,
    FactsRows,
    empty_columns,
    facts_rows,
)
from service.engine.record import parse_record

BATCH = 2_000
"""Matches per insert: large enough that DuckDB's per-insert cost does not show."""


def _new_rows() -> FactsRows:
    return FactsRows(
        empty_columns(MATCH_COLUMNS), empty_columns(ROUND_COLUMNS), empty_columns(DECISION_COLUMNS)
    )


Replayed = tuple[Match, str, Sequence[str] | None, str, str | None]
"""A replayed match with its id, players, source and run: `facts_rows`'s arguments."""


def _add_all(store: FactsStore, matches: Iterable[Replayed]) -> int:
    """Add the facts of every match, in batches; the number of matches."""
    rows = _new_rows()
    count = 0
    for match, match_id, players, source, run in matches:
        facts_rows(match, match_id, players, source, run, out=rows)
        count += 1
        if count % BATCH == 0:
            store.add(rows)
            rows = _new_rows()
    store.add(rows)
    return count


def load_records(store: FactsStore, lines: Iterable[str], name: str = "records") -> int:
    """Replay each RECORD.md record (JSON Lines) and add its facts; players from the record.

    Records are read as imported matches. Any line that is not a lawful record stops the
    load with a `StatsError` naming the line: statistics over a file with a bad record
    would silently leave a match out.
    """
    return _add_all(store, _replayed_records(lines, name))


def _replayed_records(lines: Iterable[str], name: str) -> Iterator[Replayed]:
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            record = parse_record(obj)
            match = replay(record)
        except json.JSONDecodeError as e:
            raise StatsError(f"{name} line {number}: not JSON ({e.msg})") from None
        except SniffError as e:
            raise StatsError(f"{name} line {number}: not a lawful match record: {e}") from None
        match_id = record.id if record.id is not None else f"line:{number}"
        if match_id in seen:
            raise StatsError(f"{name} line {number}: match id {match_id!r} appears twice")
        seen.add(match_id)
        yield match, match_id, record.players, "imported", None


def load_records_file(store: FactsStore, path: str | Path) -> int:
    try:
        with open(path, encoding="utf-8-sig") as f:
            return load_records(store, f, str(path))
    except OSError as e:
        raise StatsError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise StatsError(f"{path} is not UTF-8 text (RECORD.md JSON Lines)") from None


def load_log(store: FactsStore, db_path: str | Path) -> int:
    """Replay every finished match of the event log (through `analysis.logquery`, so also
    while a service holds the file) and add its facts.

    The log does not record players yet: they are unknown (left out of the bot factors).
    """
    from analysis.logquery import NoLog, query_log
    from service.storage import StorageError

    try:
        table, _ = query_log(db_path, statement("load.sql", "finished_match_events"))
    except (NoLog, StorageError) as e:
        raise StatsError(str(e)) from None
    except Exception as e:  # a gRPC refusal from a service holding the file
        details = getattr(e, "details", None)
        raise StatsError(details() if callable(details) else str(e)) from None
    return _add_all(store, _replayed_log(table.to_pylist(), str(db_path)))


def _replayed_log(rows: list[dict[str, Any]], db_path: str) -> Iterator[Replayed]:
    for match_id, events in _by_match(rows):
        try:
            match, players, source, run = _replay_events(events)
        except (SniffError, KeyError, TypeError, ValueError) as e:
            raise StatsError(f"match {match_id} in {db_path} does not replay: {e}") from None
        yield match, match_id, players, source, run


def _by_match(rows: list[dict[str, Any]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    current: str | None = None
    events: list[dict[str, Any]] = []
    for row in rows:
        if row["match_id"] != current:
            if current is not None:
                yield current, events
            current, events = row["match_id"], []
        events.append(row)
    if current is not None:
        yield current, events


def _replay_events(
    events: list[dict[str, Any]],
) -> tuple[Match, list[str] | None, str, str | None]:
    """A logged match rebuilt from its creation, deals and actions; with its settings."""
    first = events[0]
    if first["kind"] != "match_created":
        raise ValueError("the log does not start with its creation")
    settings = json.loads(first["detail"] or "{}")
    match = Match(
        settings["seats"],
        target=settings.get("target"),
        variant=settings.get("variant", "american"),
        round_limit=settings.get("round_limit"),
        auto_deal=False,
    )
    for event in events[1:]:
        if event["kind"] == "round_dealt":
            detail = json.loads(event["detail"])
            match.deal(
                Deal.of(
                    [[Tile.parse(t) for t in hand] for hand in detail["hands"]],
                    [Tile.parse(t) for t in detail["boneyard"]],
                    detail["leader"],
                )
            )
        elif event["kind"] == "action":
            match.apply(Move.parse(event["move"]))
    players = settings.get("players")
    source = settings.get("source", "served")
    return (
        match,
        players if isinstance(players, list) and len(players) == match.seats else None,
        source if source in SOURCES else "served",
        settings.get("run_id", settings.get("run")),
    )

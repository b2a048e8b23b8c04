"""Facts for the statistics: replayed through the engine from docs/records.md files, or read
from the event log, which stores each finished match's facts with its events
(`service.storage.facts`; docs/schema.md, Facts).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

from analysis.stats.sql import statement
from analysis.stats.store import FactsStore, StatsError
from service.storage.facts import TABLES, replay_events
from sniff import Match, SniffError, replay
from sniff.facts import (
    DECISION_COLUMNS,
    MATCH_COLUMNS,
    ROUND_COLUMNS,
    FactsRows,
    empty_columns,
    facts_rows,
)
from sniff.record import parse_record

BATCH = 2_000
"""Matches per insert: large enough that DuckDB's per-insert cost does not show."""


def _new_rows() -> FactsRows:
    return FactsRows(
        empty_columns(MATCH_COLUMNS), empty_columns(ROUND_COLUMNS), empty_columns(DECISION_COLUMNS)
    )


Replayed = tuple[Match, str, Sequence[str] | None, str, str | None]
"""A replayed match with its id, players, source and run: `facts_rows`'s arguments."""


def _add_all(
    store: FactsStore, matches: Iterable[Replayed], keep: list[Replayed] | None = None
) -> int:
    """Add the facts of every match, in batches; the number of matches. With `keep`, the
    replayed matches are also kept there (for analyses that replay them again)."""
    rows = _new_rows()
    count = 0
    for replayed in matches:
        match, match_id, players, source, run = replayed
        if keep is not None:
            keep.append(replayed)
        facts_rows(match, match_id, players, source, run, out=rows)
        count += 1
        if count % BATCH == 0:
            store.add(rows)
            rows = _new_rows()
    store.add(rows)
    return count


def load_records(
    store: FactsStore,
    lines: Iterable[str],
    name: str = "records",
    keep: list[Replayed] | None = None,
) -> int:
    """Replay each docs/records.md record (JSON Lines) and add its facts; players from the record.

    Records are read as imported matches. Any line that is not a lawful record stops the
    load with a `StatsError` naming the line: statistics over a file with a bad record
    would silently leave a match out.
    """
    return _add_all(store, _replayed_records(lines, name), keep)


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


def load_records_file(
    store: FactsStore, path: str | Path, keep: list[Replayed] | None = None
) -> int:
    try:
        with open(path, encoding="utf-8-sig") as f:
            return load_records(store, f, str(path), keep)
    except OSError as e:
        raise StatsError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise StatsError(f"{path} is not UTF-8 text (docs/records.md JSON Lines)") from None


def load_log(store: FactsStore, db_path: str | Path, keep: list[Replayed] | None = None) -> int:
    """Add the facts of the event log's finished matches, read through `analysis.logquery`
    (so also while a service holds the file); the number of matches.

    The facts are the ones the log stores with each finished match (`service.storage.facts`),
    read with no replay. With `keep` (an analysis that needs the matches themselves, such as
    the counterfactual Sniff timing), the matches are replayed from their events instead and
    kept there.
    """
    if keep is not None:
        return _replay_log(store, db_path, keep)
    from analysis.logquery import LogSource, NoLog
    from service.storage import StorageError

    try:
        with LogSource(db_path) as source:
            for table in TABLES:
                store.add_batches(table, source.batches(statement("load.sql", table)))
    except (NoLog, StorageError) as e:
        raise StatsError(str(e)) from None
    except Exception as e:  # a gRPC refusal from a service holding the file
        details = getattr(e, "details", None)
        raise StatsError(details() if callable(details) else str(e)) from None
    return store.count("match_facts")


def _replay_log(store: FactsStore, db_path: str | Path, keep: list[Replayed]) -> int:
    """Replay every finished match of the event log and add its facts."""
    from analysis.logquery import NoLog, query_log
    from service.storage import StorageError

    try:
        table, _ = query_log(db_path, statement("load.sql", "finished_match_events"))
    except (NoLog, StorageError) as e:
        raise StatsError(str(e)) from None
    except Exception as e:  # a gRPC refusal from a service holding the file
        details = getattr(e, "details", None)
        raise StatsError(details() if callable(details) else str(e)) from None
    return _add_all(store, _replayed_log(table.to_pylist(), str(db_path)), keep)


def _replayed_log(rows: list[dict[str, Any]], db_path: str) -> Iterator[Replayed]:
    events = [tuple(r.values()) for r in rows]  # load.sql's columns, in replay_events' order
    for match_id, match_events in groupby(events, key=itemgetter(0)):
        try:
            match, players, source, run = replay_events(list(match_events))
        except (SniffError, KeyError, TypeError, ValueError) as e:
            raise StatsError(f"match {match_id} in {db_path} does not replay: {e}") from None
        yield match, match_id, players, source, run

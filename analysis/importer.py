"""`sniff import`: docs/records.md records into the event log, as whole matches with their chain.

Each record is audited first (analysis.audit, the same report as `sniff
audit`); a record that audits ok is replayed into the events the service
would have logged for the same deals and actions (service.match_recorder),
marked `source: imported`, with its `players` and its own `id` kept
(`record_id`), and chained under a fresh secret that its end reveals at once
(it is over). Its deals were given, not made from a seed: an imported match
has no commitment, and the audit says so.

An imported match's id is derived from the record's content (`imp-` and 16
hex digits of a hash of its canonical JSON), so importing the same record
again finds it in the log and changes nothing.

The file goes in all or nothing: one bad record and nothing is written
(unless `skip_bad`), and the good ones are written in one transaction.
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from analysis.audit import Audit, AuditResult, audit_line_parsed, audit_parsed
from analysis.parallel import chunked, ordered_map
from service.match_recorder import EventRecorder
from service.storage.chain import MatchSecrets
from service.storage.events import (
    COLUMNS,
    EventRow,
    columns_to_arrow,
    rows_to_arrow,
)
from service.storage.facts import (
    Facts,
    FactsTables,
    facts_of,
    facts_tables,
    merged_facts,
    new_rows,
)
from sniff import MatchRecord
from sniff.facts import FactsRows, facts_rows

ID_DOMAIN = b"sniff/import/v1\x00"
LINES_PER_CHUNK = 64
LOAD_EVENTS = 100_000
"""Events handed to `prepare`'s `load` at once: fewer, larger inserts cost less."""


def imported_match_id(record: object) -> str:
    """The log's id of an imported record: the same record always gets the same id.

    `imp-` and the first 16 hex digits of SHA-256 over a domain tag and the
    record's canonical JSON (keys sorted, no whitespace, UTF-8).
    """
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "imp-" + hashlib.sha256(ID_DOMAIN + text.encode("utf-8")).hexdigest()[:16]


def recorder_for(record_obj: object, match_id: str, record: MatchRecord) -> EventRecorder:
    """The recorder of an imported record's events, before any deal: the audit's replay
    deals and plays its match and tells it each step (analysis.audit.Witness)."""
    settings: dict[str, Any] = {"source": "imported", "dealing": None}  # no seeded deal
    if record.players is not None:
        settings["players"] = list(record.players)
    if record.id is not None:
        raw = record_obj.get("id") if isinstance(record_obj, dict) else None
        settings["record_id"] = raw if isinstance(raw, str | int) else record.id
    return EventRecorder(
        match_id,
        record.seats,
        target=record.target,
        variant=record.variant.name,
        round_limit=record.round_limit,
        secrets=MatchSecrets.new(None),
        first_deal=False,
        **settings,
    )


class _Recorders:
    """Makes the recorder an audit's replay tells of each step (`audit_parsed`'s witness)."""

    def __init__(self) -> None:
        self.made: EventRecorder | None = None
        self.players: Sequence[str] | None = None

    def __call__(self, obj: object, record: MatchRecord) -> EventRecorder:
        self.made = recorder_for(obj, imported_match_id(obj), record)
        self.players = record.players
        return self.made

    def facts(self, out: FactsRows | None = None) -> FactsRows:
        """The facts rows of the match the audit played (stored with its events), appended
        to `out` when given."""
        assert self.made is not None
        made = self.made
        return facts_rows(
            made.match, made.match_id, self.players, "imported", out=out, rounds=made.rounds()
        )


def record_rows(record_obj: object) -> list[EventRow]:
    """The event rows of a record that audits ok, as the service logs a match (chained),
    under its import id; ValueError for a record that does not audit ok."""
    recorders = _Recorders()
    result, _ = audit_parsed(record_obj, "record", witness=recorders)
    if not result.ok or recorders.made is None:
        raise ValueError(f"the record does not audit ok: {result.to_text()}")
    return recorders.made.rows()


@dataclass(slots=True)
class Prepared:
    """One line of the file: its audit, and for a good record its log id and event rows."""

    number: int
    result: AuditResult
    record_id: str | None
    match_id: str | None = None
    events: int = 0
    """How many events the record makes (0 for a bad one)."""
    status: str = "bad"
    """`bad`, `new` (to import), `imported`, `present` (the log holds it), `repeat` (earlier
    in the file)."""

    @property
    def ok(self) -> bool:
        return self.result.ok

    def to_json(self) -> dict[str, Any]:
        out = self.result.to_json()
        out["match_id"] = self.match_id
        out["status"] = self.status
        return out

    def to_text(self) -> str:
        if not self.ok:
            return self.result.to_text() + "\n  not imported"
        said = {
            "imported": f"imported as {self.match_id}",
            "present": f"already in the log as {self.match_id}: left as it is",
            "repeat": f"the same record as an earlier line ({self.match_id})",
            "new": f"to import as {self.match_id}",
            "skipped": "not imported: the file has bad records",
        }[self.status]
        return f"{self.result.id}: ok, {said}"


@dataclass(frozen=True, slots=True)
class _Done:
    prepared: list[Prepared]
    table: pa.Table
    """The events of the chunk's good records, in order (a record's are `events` rows)."""
    facts: FactsTables
    """The facts rows of the chunk's good records' matches, once per match, in order (Arrow
    tables: column lists cost the loading process more to unpickle than the load)."""
    size: int


def _prepare_chunk(chunk: list[tuple[int, bytes]]) -> _Done:
    """Audit the lines and make the events of the good records (in a worker)."""
    # Without the cyclic collector: what a chunk makes is freed by reference counting (no
    # cycles) or returned, and the collector's passes over the young rows and moves, every
    # few hundred of them, cost a tenth of the chunk's time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _prepare(chunk)
    finally:
        if collecting:
            gc.enable()


def _prepare(chunk: list[tuple[int, bytes]]) -> _Done:
    out = []
    columns: list[list[Any]] = [[] for _ in COLUMNS]
    facts = new_rows()
    with_facts: set[str] = set()
    for number, raw in chunk:
        recorders = _Recorders()
        audited = audit_line_parsed(number, raw, witness=recorders)
        if audited is None:
            continue
        result, record_id, _, _ = audited
        prepared = Prepared(number, result, record_id)
        made = recorders.made
        if result.ok and made is not None:
            # the audit's own replay made them
            prepared.events = len(made)
            for column, values in zip(columns, made.columns(), strict=True):
                column += values
            prepared.match_id = made.match_id
            if made.match_id not in with_facts:  # a repeat in the chunk: its facts once
                with_facts.add(made.match_id)
                recorders.facts(out=facts)
            prepared.status = "new"
        out.append(prepared)
    table = columns_to_arrow(columns)
    return _Done(out, table, facts_tables(facts), sum(len(raw) for _, raw in chunk))


@dataclass(slots=True)
class Batch:
    """A file's records, audited, and the events of the good ones."""

    prepared: list[Prepared]
    tables: list[pa.Table]
    facts_parts: list[Facts] = field(default_factory=list)

    def facts(self) -> Facts:
        """The facts rows of every match to import, once per match, to write in the
        transaction of its events (`EventLog.import_matches(..., facts=...)`)."""
        return merged_facts(self.facts_parts)

    @property
    def bad(self) -> list[Prepared]:
        return [p for p in self.prepared if not p.ok]

    def table(self) -> pa.Table:
        """Every event to import, once per match."""
        if not self.tables:
            return rows_to_arrow([])
        return pa.concat_tables(self.tables)


def prepare(
    lines: Iterable[bytes],
    *,
    source: str,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    load: Callable[[pa.Table, Facts], None] | None = None,
    skip_bad: bool = False,
) -> Batch:
    """Every record of the file audited, and the good ones turned into events, in order.

    A record reusing an earlier record's `id` is `duplicate_id` (as in
    `sniff audit`); the same record twice (the same content) is imported
    once, the second marked `repeat`.

    With `load`, the events are not kept in the batch: each chunk's go to
    `load`, with the facts rows of their matches, as soon as the chunk is
    audited (while the workers audit the next ones), until a record is bad
    (unless `skip_bad`): the caller loads them into one transaction, and
    drops it all if the file has a bad record.
    """
    checker = Audit()
    chunks = chunked(enumerate(lines, start=1), LINES_PER_CHUNK)
    seen: set[str] = set()
    out = Batch([], [])
    clean = True
    waiting: list[pa.Table] = []
    waiting_facts: list[Facts] = []
    for done in ordered_map(_prepare_chunk, chunks, workers, preload=(__name__,)):
        start = 0
        spans: list[tuple[int, int]] = []
        kept: list[str] = []
        for item in done.prepared:
            span = (start, item.events)
            start += item.events
            if item.record_id is not None:
                checker._check_unique(item.record_id, item.result, source, item.number)
            if not item.result.ok:
                item.status, item.match_id = "bad", None
                clean = False
            elif item.match_id in seen:
                item.status = "repeat"
            elif item.match_id is not None:
                seen.add(item.match_id)
                spans.append(span)
                kept.append(item.match_id)
            out.prepared.append(item)
        if sum(length for _, length in spans) == done.table.num_rows:
            tables = [done.table]  # every event of the chunk is to import: no slicing
        else:
            tables = [done.table.slice(*span) for span in spans]
        facts: Facts = done.facts
        if len(kept) != done.facts.matches.num_rows:  # the chunk has repeats or bad records
            facts = facts_of(done.facts, set(kept))
        if load is None:
            out.tables += tables
            out.facts_parts.append(facts)
        elif clean or skip_bad:
            waiting += tables
            waiting_facts.append(facts)
            if sum(t.num_rows for t in waiting) >= LOAD_EVENTS:
                load(pa.concat_tables(waiting), merged_facts(waiting_facts))
                waiting, waiting_facts = [], []
        else:
            waiting, waiting_facts = [], []  # the file will not go in
        if progress is not None:
            progress(done.size)
    if load is not None and waiting and (clean or skip_bad):
        table = pa.concat_tables(waiting)
        if table.num_rows:
            load(table, merged_facts(waiting_facts))
    return out


def mark(prepared: Sequence[Prepared], imported: Iterable[str], present: Iterable[str]) -> None:
    """Record what the log did with each new record."""
    done, kept = set(imported), set(present)
    for item in prepared:
        if item.status == "new":
            item.status = "imported" if item.match_id in done else "present"
            if item.match_id not in done and item.match_id not in kept:
                raise AssertionError(f"the log did not answer for {item.match_id}")

"""The checks of each match of a bundle, run in a worker process (docs/evidence.md, "Bundles").

`verify.py` reads the small files and cuts events.jsonl and records.jsonl
into chunks of matches; `check_chunk` checks a chunk's matches here: each
event line's form, the log audit (sequence, chain, commitment, seeded deals,
the rules replay), the last head's leaf and its inclusion proof, the
checkpoints and the record. The first failure is raised as a `BundleError`,
which the pool hands back to the reading process.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from analysis.audit import Problem
from analysis.export import record_of
from analysis.logaudit import MatchWork, audit_match
from service.evidence.errors import BadProof, BadSignature, WrongLog
from service.evidence.keys import PublicKey
from service.evidence.merkle import leaf_data, leaf_hash, verify_inclusion
from service.evidence.signed import Checkpoint, TreeHead
from service.storage.tree import HEAD_KINDS

from . import layout
from .errors import (
    CheckpointRejected,
    EventsRejected,
    MalformedBundle,
    ProofRejected,
    RecordMismatch,
    SignatureRejected,
)
from .layout import MatchEntry, Row

__all__ = ["Chunk", "Context", "MatchLines", "check_chunk", "check_signed"]


def check_signed(
    name: str, line: int | None, statement: TreeHead | Checkpoint, key: PublicKey
) -> None:
    try:
        statement.verify(key)
    except (WrongLog, BadSignature) as e:
        raise SignatureRejected(name, line, str(e)) from None


@dataclass(frozen=True, slots=True)
class Context:
    key: bytes
    tree_size: int
    root: bytes


@dataclass(frozen=True, slots=True)
class MatchLines:
    entry: MatchEntry
    entry_line: int
    first_line: int
    """events.jsonl's line of its event 0."""
    events: bytes
    """Its lines of events.jsonl, joined by newlines: one object to hand to a worker."""
    record_line: int
    record: bytes
    checkpoints: list[tuple[int, Checkpoint]]


@dataclass(frozen=True, slots=True)
class Chunk:
    context: Context
    matches: list[MatchLines]


_KEYS: dict[bytes, PublicKey] = {}


def check_chunk(chunk: Chunk) -> tuple[int, list[tuple[str, str]]]:
    """Every check of a chunk's matches (runs in a worker): how many, and their audit notes."""
    context = chunk.context
    key = _KEYS.get(context.key)
    if key is None:
        key = _KEYS[context.key] = PublicKey.from_raw(context.key)
    notes: list[tuple[str, str]] = []
    for match in chunk.matches:
        notes.extend((match.entry.match_id, note) for note in _verify_match(match, context, key))
    return len(chunk.matches), notes


def _verify_match(match: MatchLines, context: Context, key: PublicKey) -> list[str]:
    entry = match.entry
    rows = _rows(match)
    last = rows[-1]
    end_line = match.first_line + len(rows) - 1
    if last[2] != "match_ended":
        raise EventsRejected(
            layout.EVENTS,
            end_line,
            f"match {entry.match_id} ends with {last[2]}, not match_ended",
            "sequence",
        )
    if last[11].hex() != entry.head:
        raise ProofRejected(
            layout.MATCHES,
            match.entry_line,
            f"`head` is not the hash of match {entry.match_id}'s last event",
        )
    leaf = leaf_hash(leaf_data(entry.match_id, entry.seq, entry.head))
    try:
        verify_inclusion(
            leaf,
            entry.leaf_index,
            context.tree_size,
            [bytes.fromhex(h) for h in entry.inclusion],
            context.root,
        )
    except BadProof as e:
        raise ProofRejected(layout.MATCHES, match.entry_line, str(e)) from None
    result = audit_match(MatchWork(entry.match_id, rows, None, tables=False))
    if result.problems:
        problem = result.problems[0]
        line = end_line if problem.seq is None else match.first_line + problem.seq
        raise EventsRejected(
            layout.EVENTS, line, _problem_text(entry.match_id, problem), problem.kind
        )
    _check_checkpoints(match, rows, key)
    _check_record(match, rows)
    return result.notes


def _texts(match: MatchLines) -> list[str]:
    """The match's event lines as text; the line that is not UTF-8 named if one is not."""
    try:
        return match.events.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        for seq, raw in enumerate(match.events.split(b"\n")):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                reason = f"not UTF-8 at byte {e.start}"
                raise MalformedBundle(layout.EVENTS, match.first_line + seq, reason) from None
        raise


def _rows(match: MatchLines) -> list[Row]:
    rows: list[Row] = []
    match_id = match.entry.match_id
    for seq, text in enumerate(_texts(match)):
        number = match.first_line + seq
        try:
            row = layout.parse_event_line(text)
        except ValueError as e:
            raise MalformedBundle(layout.EVENTS, number, str(e)) from None
        if row[0] != match_id:
            raise EventsRejected(
                layout.EVENTS,
                number,
                f"an event of match {row[0]} where match {match_id}'s event {seq} belongs",
                "sequence",
            )
        if row[1] != seq:
            raise EventsRejected(
                layout.EVENTS,
                number,
                f"match {match_id}: event {row[1]} where event {seq} belongs",
                "sequence",
            )
        rows.append(row)
    return rows


def _problem_text(match_id: str, problem: Problem) -> str:
    return f"match {match_id}, {problem.place()}: {problem.kind}: {problem.reason}"


def _check_checkpoints(match: MatchLines, rows: Sequence[Row], key: PublicKey) -> None:
    name = layout.CHECKPOINTS
    for number, checkpoint in match.checkpoints:
        check_signed(name, number, checkpoint, key)
        if checkpoint.seq >= len(rows):
            raise CheckpointRejected(
                name, number, f"match {checkpoint.match_id} has no event {checkpoint.seq}"
            )
        row = rows[checkpoint.seq]
        if row[2] not in HEAD_KINDS:
            raise CheckpointRejected(
                name, number, f"event {checkpoint.seq} is {row[2]}, not a round or match end"
            )
        if row[11].hex() != checkpoint.head:
            raise CheckpointRejected(
                name,
                number,
                f"its head is not the hash of match {checkpoint.match_id}'s event {checkpoint.seq}",
            )


def _check_record(match: MatchLines, rows: Sequence[Row]) -> None:
    made = layout.dumps(record_of(MatchWork(match.entry.match_id, list(rows), None)))
    try:
        text = match.record.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RecordMismatch(
            layout.RECORDS, match.record_line, f"not UTF-8 at byte {e.start}"
        ) from None
    if text != made:
        raise RecordMismatch(
            layout.RECORDS,
            match.record_line,
            f"not the record match {match.entry.match_id}'s events make (docs/records.md)",
        )

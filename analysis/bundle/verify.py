"""Verify an evidence bundle with nothing but its files: `verify_bundle(DIR) -> BundleReport`.

No service, no log: the public key in the bundle (or one the caller trusts)
checks every signature, the Merkle proofs tie each match's last head to the
signed tree head, and the log audit (analysis/logaudit.py: sequence, chain,
commitment, seeded deals, the rules replay) checks each match's events, in
worker processes as `sniff audit` does. The first failure is raised as a
`BundleError` naming the file and line; docs/evidence.md lists every check.

The small files (bundle.json, the key, the tree heads, the matches, the
checkpoints) are read and checked here; events.jsonl and records.jsonl are
streamed and cut into chunks of matches by the event counts of matches.jsonl,
and each chunk is checked in a worker (match_checks.py), results taken in file order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Final

from analysis.parallel import ordered_map
from service.evidence.errors import (
    BadProof,
    KeyFileError,
    MalformedEvidence,
)
from service.evidence.keys import PublicKey, load_public_key
from service.evidence.merkle import verify_consistency
from service.evidence.signed import Checkpoint, TreeHead

from . import layout
from .errors import (
    CheckpointRejected,
    MalformedBundle,
    NotABundle,
    ProofRejected,
    SignatureRejected,
)
from .layout import Counts, MatchEntry
from .match_checks import Chunk, Context, MatchLines, check_chunk, check_signed

__all__ = ["BundleReport", "verify_bundle"]

MATCHES_PER_CHUNK: Final = 50
"""Matches handed to a worker at once (about 10,000 events of 2-seat matches)."""


@dataclass(frozen=True, slots=True)
class BundleReport:
    """What a verified bundle proved: the key, the tree head, how much, and the audit's notes."""

    log_id: str
    tree_head: TreeHead
    counts: Counts
    earlier: tuple[TreeHead, ...]
    notes: list[tuple[str, str]] = field(default_factory=list)
    """(match id, note): what the audit could not vouch for without a defect (docs/audit.md)."""


def verify_bundle(
    directory: str | Path,
    *,
    workers: int = 1,
    public_key: PublicKey | None = None,
    started: Callable[[int], None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> BundleReport:
    """Check every file of the bundle in `directory`; raise the first `BundleError`.

    `public_key`: the key the caller trusts; the bundle's must be the same.
    `started(n)` is told how many matches there are once the small files are checked,
    `progress(k)` after each chunk of k matches.
    Raises NotABundle when `directory` is missing, not a directory, or has no bundle.json.
    """
    root = Path(directory)
    if not root.is_dir():
        raise NotABundle(f"{root}: no such directory")
    if not (root / layout.BUNDLE).is_file():
        raise NotABundle(f"{root}: not an evidence bundle (it has no {layout.BUNDLE})")
    for name in layout.EVIDENCE_FILES:
        if not (root / name).is_file():
            raise MalformedBundle(name, None, "the file is missing")
    log_id, tree_head, counts = _read_bundle_json(root)
    key = _read_key(root, log_id, public_key)
    check_signed(layout.BUNDLE, None, tree_head, key)
    earlier = _read_tree_heads(root, tree_head, key)
    entries = _read_matches(root, tree_head)
    checkpoints = _read_checkpoints(root, entries)
    found = Counts(
        len(entries), sum(e.entry.events for e in entries), len(checkpoints), len(earlier)
    )
    if found != counts:
        raise MalformedBundle(
            layout.BUNDLE,
            None,
            f"its counts {counts.to_json()} are not the files' {found.to_json()}",
        )
    context = Context(key.raw, tree_head.tree_size, tree_head.root)
    if started is not None:
        started(len(entries))
    notes: list[tuple[str, str]] = []
    with open(root / layout.EVENTS, "rb") as events, open(root / layout.RECORDS, "rb") as records:
        event_lines, record_lines = _Lines(events, layout.EVENTS), _Lines(records, layout.RECORDS)
        chunks = _chunks(context, entries, checkpoints, event_lines, record_lines)
        preload = ("analysis.bundle.match_checks",)
        for done, chunk_notes in ordered_map(check_chunk, chunks, workers, preload=preload):
            notes.extend(chunk_notes)
            if progress is not None:
                progress(done)
        event_lines.at_end()
        record_lines.at_end()
    return BundleReport(log_id, tree_head, counts, tuple(earlier), notes)


# -- the small files ---------------------------------------------------------------------


def _text(root: Path, name: str) -> str:
    try:
        return (root / name).read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise MalformedBundle(name, None, f"not UTF-8 at byte {e.start}") from None


def _json(name: str, line: int | None, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise MalformedBundle(name, line, f"not JSON: {e}") from None


def _lines(root: Path, name: str) -> Iterator[tuple[int, str]]:
    """Each line of a small JSON Lines file with its number; every line ends in a newline."""
    text = _text(root, name)
    if text and not text.endswith("\n"):
        raise MalformedBundle(name, text.count("\n") + 1, "the last line has no newline")
    yield from enumerate(text.split("\n")[:-1], start=1)


def _read_bundle_json(root: Path) -> tuple[str, TreeHead, Counts]:
    name = layout.BUNDLE
    text = _text(root, name)
    obj = _json(name, None, text)
    if not isinstance(obj, dict) or tuple(obj) != layout.BUNDLE_KEYS:
        raise MalformedBundle(name, None, f"not an object of the keys {layout.BUNDLE_KEYS}")
    if obj["format"] != layout.FORMAT:
        raise MalformedBundle(name, None, f"format {obj['format']!r}, not {layout.FORMAT}")
    log_id = obj["log_id"]
    if not layout.is_hex64(log_id):
        raise MalformedBundle(name, None, "`log_id` must be 64 lowercase hex digits")
    try:
        tree_head = TreeHead.from_json(obj["tree_head"])
    except MalformedEvidence as e:
        raise MalformedBundle(name, None, str(e)) from None
    raw = obj["counts"]
    if (
        not isinstance(raw, dict)
        or tuple(raw) != layout.COUNT_KEYS
        or not all(layout.is_uint(v) for v in raw.values())
    ):
        raise MalformedBundle(name, None, f"`counts` must hold the integers {layout.COUNT_KEYS}")
    counts = Counts(**raw)
    if layout.bundle_text(log_id, tree_head.to_json(), counts) != text:
        raise MalformedBundle(name, None, "not written as the format writes it")
    return log_id, tree_head, counts


def _read_key(root: Path, log_id: str, trusted: PublicKey | None) -> PublicKey:
    name = layout.PUBLIC_KEY
    try:
        key = load_public_key(root / name)
    except KeyFileError as e:
        raise MalformedBundle(name, None, f"not an Ed25519 public key: {e}") from None
    if (root / name).read_bytes() != key.pem():
        raise MalformedBundle(name, None, "not written as the format writes it (SPKI PEM)")
    if trusted is not None and key.raw != trusted.raw:
        raise SignatureRejected(
            name,
            None,
            f"the bundle's key is log {key.log_id}'s, not the trusted log {trusted.log_id}'s",
        )
    if key.log_id != log_id:
        raise SignatureRejected(
            name, None, f"the key's log id is {key.log_id}, bundle.json names {log_id}"
        )
    return key


def _read_tree_heads(root: Path, bundle_head: TreeHead, key: PublicKey) -> list[TreeHead]:
    name = layout.TREE_HEADS
    heads: list[TreeHead] = []
    for number, text in _lines(root, name):
        obj = _json(name, number, text)
        if not isinstance(obj, dict) or tuple(obj) != ("tree_head", "consistency"):
            raise MalformedBundle(name, number, "not an object of `tree_head` and `consistency`")
        try:
            head = TreeHead.from_json(obj["tree_head"])
        except MalformedEvidence as e:
            raise MalformedBundle(name, number, str(e)) from None
        proof = obj["consistency"]
        if not isinstance(proof, list) or not all(layout.is_hex64(h) for h in proof):
            raise MalformedBundle(name, number, "`consistency` must be a list of hashes")
        if layout.tree_head_line(head.to_json(), proof) != text:
            raise MalformedBundle(name, number, "not written as the format writes it")
        check_signed(name, number, head, key)
        if heads and (
            head.tree_size < heads[-1].tree_size or head.timestamp_ms < heads[-1].timestamp_ms
        ):
            raise ProofRejected(
                name, number, "out of order: tree heads go by size, and time never goes back"
            )
        if head.tree_size > bundle_head.tree_size or head.timestamp_ms > bundle_head.timestamp_ms:
            raise ProofRejected(
                name, number, "not earlier than bundle.json's tree head (larger, or later)"
            )
        try:
            verify_consistency(
                head.tree_size,
                bundle_head.tree_size,
                head.root,
                bundle_head.root,
                [bytes.fromhex(h) for h in proof],
            )
        except BadProof as e:
            raise ProofRejected(name, number, str(e)) from None
        heads.append(head)
    return heads


@dataclass(frozen=True, slots=True)
class _Entry:
    entry: MatchEntry
    line: int


def _read_matches(root: Path, tree_head: TreeHead) -> list[_Entry]:
    name = layout.MATCHES
    entries: list[_Entry] = []
    leaves: set[int] = set()
    for number, text in _lines(root, name):
        try:
            entry = layout.parse_match_line(text)
        except ValueError as e:
            raise MalformedBundle(name, number, str(e)) from None
        if entries and entry.match_id <= entries[-1].entry.match_id:
            raise MalformedBundle(name, number, "out of order: matches go by match id, once each")
        if entry.leaf_index >= tree_head.tree_size:
            raise ProofRejected(
                name, number, f"leaf {entry.leaf_index} is not in a tree of {tree_head.tree_size}"
            )
        if entry.leaf_index in leaves:
            raise ProofRejected(name, number, f"leaf {entry.leaf_index} is claimed twice")
        leaves.add(entry.leaf_index)
        entries.append(_Entry(entry, number))
    return entries


def _read_checkpoints(root: Path, entries: Sequence[_Entry]) -> list[tuple[int, int, Checkpoint]]:
    """(line, the match's position, checkpoint) for each: in the matches' order, seq rising."""
    name = layout.CHECKPOINTS
    position = {e.entry.match_id: i for i, e in enumerate(entries)}
    found: list[tuple[int, int, Checkpoint]] = []
    for number, text in _lines(root, name):
        try:
            checkpoint = Checkpoint.from_json(_json(name, number, text))
        except MalformedEvidence as e:
            raise MalformedBundle(name, number, str(e)) from None
        if layout.dumps(checkpoint.to_json()) != text:
            raise MalformedBundle(name, number, "not written as the format writes it")
        at = position.get(checkpoint.match_id)
        if at is None:
            raise CheckpointRejected(
                name, number, f"match {checkpoint.match_id} is not in the bundle"
            )
        if found:
            _, last_at, last = found[-1]
            if at < last_at or (at == last_at and checkpoint.seq <= last.seq):
                raise CheckpointRejected(
                    name, number, "out of order: by the matches' order, then by seq, once each"
                )
        found.append((number, at, checkpoint))
    return found


# -- the matches, in workers ---------------------------------------------------------------


class _Lines:
    """A JSON Lines file's lines (without their newlines), read a block at a time: a
    bundle's events.jsonl holds millions."""

    BLOCK = 1 << 23

    def __init__(self, source: BinaryIO, name: str) -> None:
        self.source = source
        self.name = name
        self.lines: list[bytes] = []
        self.at = 0
        self.rest = b""
        self.number = 0
        """Lines handed out so far: the number of the last one."""

    def take(self, count: int, match_id: str) -> list[bytes]:
        while len(self.lines) - self.at < count:
            block = self.source.read(self.BLOCK)
            if not block:
                if self.rest:
                    raise MalformedBundle(
                        self.name,
                        self.number + len(self.lines) - self.at + 1,
                        "the last line has no newline",
                    )
                raise MalformedBundle(
                    self.name,
                    self.number + len(self.lines) - self.at + 1,
                    f"the file ends before match {match_id}'s lines",
                )
            parts = (self.rest + block).split(b"\n")
            self.rest = parts.pop()
            self.lines = self.lines[self.at :] + parts
            self.at = 0
        taken = self.lines[self.at : self.at + count]
        self.at += count
        self.number += count
        return taken

    def at_end(self) -> None:
        if self.at < len(self.lines) or self.rest or self.source.read(1):
            raise MalformedBundle(
                self.name, self.number + 1, "more lines than matches.jsonl accounts for"
            )


def _chunks(
    context: Context,
    entries: Sequence[_Entry],
    checkpoints: Sequence[tuple[int, int, Checkpoint]],
    events: _Lines,
    records: _Lines,
) -> Iterator[Chunk]:
    at_checkpoint = 0
    batch: list[MatchLines] = []
    for position, item in enumerate(entries):
        entry = item.entry
        first = events.number + 1
        lines = events.take(entry.events, entry.match_id)
        (record,) = records.take(1, entry.match_id)
        own = []
        while at_checkpoint < len(checkpoints) and checkpoints[at_checkpoint][1] == position:
            number, _, checkpoint = checkpoints[at_checkpoint]
            own.append((number, checkpoint))
            at_checkpoint += 1
        batch.append(
            MatchLines(entry, item.line, first, b"\n".join(lines), position + 1, record, own)
        )
        if len(batch) >= MATCHES_PER_CHUNK:
            yield Chunk(context, batch)
            batch = []
    if batch:
        yield Chunk(context, batch)

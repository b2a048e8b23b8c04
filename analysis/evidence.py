"""Check the log's signed evidence with its public key (`sniff audit --public-key`), and make
proof documents from the log (`sniff proof`).

The audit trusts no signature the log stores: every checkpoint and tree head
is verified with the key given, every tree head's root is recomputed from the
leaves, every finished match must have its leaf with its final head, and each
checkpoint a player kept (`--heads`) must be the key's and name a hash the
log holds. Problems are reported under one result, `evidence`, with the kinds
of docs/audit.md. Reads go through `analysis.logquery.LogSource`, so through
a live service's Query RPC when one holds the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from analysis.audit import AuditResult, Problem
from analysis.logquery import LogSource
from analysis.sqlfiles import named_queries
from service.evidence.errors import EvidenceError
from service.evidence.keys import PublicKey
from service.evidence.signed import Checkpoint
from service.storage.tree import StoredTree, read_tree

__all__ = ["EVIDENCE_ID", "BadHeadsFile", "audit_evidence", "read_kept_checkpoints", "tree_of"]

EVIDENCE_ID = "evidence"
"""The id of the one result that holds the evidence's problems."""


def _sql(name: str) -> str:
    return named_queries("analysis", "evidence.sql")[name]


class BadHeadsFile(ValueError):
    """A `--heads` file that cannot be read, or a line of it that is not a checkpoint."""


def read_kept_checkpoints(path: Path) -> list[Checkpoint]:
    """The checkpoints of a `--heads` file: JSON Lines, one checkpoint a line (blank lines
    skipped). A line that is not one raises BadHeadsFile naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadHeadsFile(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    kept = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            kept.append(Checkpoint.from_json(json.loads(line)))
        except (ValueError, EvidenceError) as exc:
            raise BadHeadsFile(f"{path}, line {number}: not a checkpoint ({exc})") from None
    return kept


def audit_evidence(
    source: LogSource, key: PublicKey, kept: Sequence[Checkpoint] = ()
) -> AuditResult:
    """Every check of the log's signed evidence against `key` (docs/audit.md)."""
    result = AuditResult(EVIDENCE_ID)
    stored = read_tree(source.query)
    _check_checkpoints(result, source, key)
    _check_tree_heads(result, stored, key)
    _check_leaves(result, source, stored)
    _check_kept(result, source, key, kept)
    unsigned = source.query(_sql("unsigned_heads"), [key.log_id]).column(0)[0].as_py()
    if unsigned:
        result.notes.append(
            f"{unsigned} heads have no checkpoint of this key: a service holding the key signs"
            " them when it opens the log"
        )
    return result


def _problem(result: AuditResult, kind: str, reason: str, seq: int | None = None) -> None:
    result.problems.append(Problem(None, None, kind, reason, seq))


def _check_checkpoints(result: AuditResult, source: LogSource, key: PublicKey) -> None:
    for row in source.query(_sql("checkpoints")).to_pylist():
        where = f"the checkpoint of match {row['match_id']}, event {row['seq']}"
        try:
            checkpoint = Checkpoint(
                row["log_id"],
                row["match_id"],
                int(row["seq"]),
                row["head"],
                bytes.fromhex(row["signature"]),
            )
            checkpoint.verify(key)
        except (ValueError, EvidenceError) as exc:
            _problem(result, "bad_signature", f"{where}: {exc}", int(row["seq"]))
            continue
        if row["logged"] != row["head"]:
            logged = "no such event" if row["logged"] is None else f"hash {row['logged']}"
            _problem(
                result,
                "head_mismatch",
                f"{where} names head {row['head']}; the log holds {logged}",
                int(row["seq"]),
            )


def _check_tree_heads(result: AuditResult, stored: StoredTree, key: PublicKey) -> None:
    if stored.gaps:
        _problem(
            result,
            "tree_mismatch",
            f"the leaves are not numbered 0, 1, 2, ...: {len(stored.gaps)} out of place,"
            f" the first at position {stored.gaps[0]}",
        )
    tree = stored.tree()
    for head in stored.heads:
        where = f"the tree head of {head.tree_size} leaves signed at {head.timestamp_ms}"
        try:
            head.verify(key)
        except EvidenceError as exc:
            _problem(result, "bad_signature", f"{where}: {exc}")
        if head.tree_size > tree.size:
            _problem(result, "tree_mismatch", f"{where}: the log holds only {tree.size} leaves")
        elif tree.root(head.tree_size).hex() != head.root_hash:
            _problem(
                result,
                "tree_mismatch",
                f"{where}: its root is not that of the log's first {head.tree_size} leaves",
            )


def _check_leaves(result: AuditResult, source: LogSource, stored: StoredTree) -> None:
    leaves = {match_id: (seq, head) for match_id, seq, head in stored.leaves}
    ended = set()
    for row in source.query(_sql("match_ends")).to_pylist():
        match_id = row["match_id"]
        ended.add(match_id)
        found = leaves.get(match_id)
        if found is None:
            _problem(result, "leaf_mismatch", f"finished match {match_id} has no leaf")
        elif found != (int(row["seq"]), row["head"]):
            _problem(
                result,
                "leaf_mismatch",
                f"the leaf of match {match_id} names event {found[0]} with hash {found[1]};"
                f" its match_ended event is {row['seq']} with hash {row['head']}",
                int(row["seq"]),
            )
    for match_id in sorted(set(leaves) - ended):
        _problem(result, "leaf_mismatch", f"the leaf of match {match_id}: no such match ended")


def _check_kept(
    result: AuditResult, source: LogSource, key: PublicKey, kept: Iterable[Checkpoint]
) -> None:
    hashes: dict[str, dict[int, str]] = {}
    for checkpoint in kept:
        where = f"the kept checkpoint of match {checkpoint.match_id}, event {checkpoint.seq}"
        try:
            checkpoint.verify(key)
        except EvidenceError as exc:
            _problem(result, "bad_signature", f"{where}: {exc}", checkpoint.seq)
            continue
        match = hashes.get(checkpoint.match_id)
        if match is None:
            rows = source.query(_sql("event_hashes"), [checkpoint.match_id]).to_pylist()
            match = hashes[checkpoint.match_id] = {int(r["seq"]): r["head"] for r in rows}
        logged = match.get(checkpoint.seq)
        if logged != checkpoint.head:
            what = "no such event" if logged is None else f"hash {logged}"
            _problem(
                result,
                "head_mismatch",
                f"{where} names head {checkpoint.head}; the log holds {what}",
                checkpoint.seq,
            )


def tree_of(source: LogSource) -> StoredTree:
    """The tree the log holds (`sniff proof`)."""
    return read_tree(source.query)

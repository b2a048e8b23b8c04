"""Write an evidence bundle from the log's rows: events, leaves, tree heads, checkpoints.

Pure: it is handed everything (the CLI reads it from the log through
analysis/logquery.py; a test or a benchmark makes it in memory) and only
writes the directory. It writes into a temporary directory beside the target
and renames it into place when every file is complete, so a bundle is whole or
absent; a target that exists and is not an empty directory is refused.

It refuses evidence that does not agree with itself (a leaf that is not the
match's last head, a tree head whose root the leaves do not make): a bundle
that would not verify is a bug or a damaged log, never something to hand out.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from analysis.export import record_of
from analysis.logaudit import MatchWork
from service.evidence.keys import PublicKey
from service.evidence.merkle import (
    Tree,
    consistency_proof,
    inclusion_proof,
    leaf_data,
    leaf_hash,
)
from service.evidence.signed import Checkpoint, TreeHead

from . import layout
from .layout import Counts, MatchEntry, Row
from .readme import readme_text

__all__ = ["BundleExists", "InconsistentEvidence", "MatchEvidence", "write_bundle"]


class BundleExists(FileExistsError):
    """The target exists and is not an empty directory: a bundle never overwrites anything."""


class InconsistentEvidence(ValueError):
    """The rows handed to the writer do not agree with each other: the bundle would not verify."""


@dataclass(frozen=True, slots=True)
class MatchEvidence:
    """One finished match: its events (logaudit rows, seq order), its leaf, its checkpoints."""

    match_id: str
    leaf_index: int
    rows: Sequence[Row]
    checkpoints: Sequence[Checkpoint] = ()


def write_bundle(
    directory: str | Path,
    *,
    public_key: PublicKey,
    tree_head: TreeHead,
    leaves: Sequence[bytes],
    matches: Iterable[MatchEvidence],
    earlier: Sequence[TreeHead] = (),
) -> Counts:
    """Write the bundle of `matches` (in match id order) proven against `tree_head`.

    `leaves` are the leaf hashes of the log's tree, leaf 0 first, at least
    `tree_head.tree_size` of them (the proofs need every one); `earlier` are
    signed tree heads of smaller or equal size, each written with its
    consistency proof to `tree_head`.
    """
    target = Path(directory)
    _check_target(target)
    if tree_head.log_id != public_key.log_id:
        raise InconsistentEvidence("the tree head is signed by another log than the key's")
    size = tree_head.tree_size
    if len(leaves) < size:
        raise InconsistentEvidence(f"the tree head has {size} leaves, the log {len(leaves)}")
    tree = Tree(leaves[:size])
    if tree.root() != tree_head.root:
        raise InconsistentEvidence("the leaves do not make the tree head's root")
    parent = target.parent
    # Made as any new directory is (the umask's mode, not mkdtemp's 0700): it becomes the bundle.
    temporary = parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
    temporary.mkdir()
    try:
        counts = _write_files(temporary, public_key, tree_head, tree, matches, earlier)
        try:
            os.replace(temporary, target)  # onto nothing, or onto an empty directory
        except OSError as e:
            if e.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
                raise BundleExists(f"{target} was made while the bundle was written") from None
            raise
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return counts


def _check_target(target: Path) -> None:
    if target.is_dir():
        if any(target.iterdir()):
            raise BundleExists(f"{target} exists and is not empty: a bundle goes into a new one")
    elif target.exists() or target.is_symlink():
        raise BundleExists(f"{target} exists and is not a directory")
    if not target.parent.is_dir():
        raise FileNotFoundError(f"{target.parent} is not a directory")


def _open(directory: Path, name: str) -> TextIO:
    return open(directory / name, "w", encoding="utf-8", newline="\n")


def _write_files(
    directory: Path,
    public_key: PublicKey,
    tree_head: TreeHead,
    tree: Tree,
    matches: Iterable[MatchEvidence],
    earlier: Sequence[TreeHead],
) -> Counts:
    (directory / layout.PUBLIC_KEY).write_bytes(public_key.pem())
    heads = _earlier(tree_head, tree, earlier)
    with _open(directory, layout.TREE_HEADS) as out:
        for head, proof in heads:
            out.write(layout.tree_head_line(head.to_json(), proof) + "\n")
    n_matches = n_events = n_checkpoints = 0
    last_id: str | None = None
    with (
        _open(directory, layout.MATCHES) as matches_out,
        _open(directory, layout.EVENTS) as events_out,
        _open(directory, layout.CHECKPOINTS) as checkpoints_out,
        _open(directory, layout.RECORDS) as records_out,
    ):
        for match in matches:
            if last_id is not None and match.match_id <= last_id:
                raise InconsistentEvidence(
                    f"matches come in match id order: {match.match_id} after {last_id}"
                )
            last_id = match.match_id
            entry = _entry(match, tree, public_key)
            matches_out.write(layout.match_line(entry) + "\n")
            events_out.write("".join(layout.event_line(row) + "\n" for row in match.rows))
            for checkpoint in match.checkpoints:
                checkpoints_out.write(layout.dumps(checkpoint.to_json()) + "\n")
            record = record_of(MatchWork(match.match_id, list(match.rows), None))
            records_out.write(layout.dumps(record) + "\n")
            n_matches += 1
            n_events += len(match.rows)
            n_checkpoints += len(match.checkpoints)
    counts = Counts(n_matches, n_events, n_checkpoints, len(heads))
    (directory / layout.BUNDLE).write_text(
        layout.bundle_text(public_key.log_id, tree_head.to_json(), counts), encoding="utf-8"
    )
    (directory / layout.README).write_text(readme_text(tree_head, counts), encoding="utf-8")
    return counts


def _earlier(
    tree_head: TreeHead, tree: Tree, earlier: Sequence[TreeHead]
) -> list[tuple[TreeHead, list[str]]]:
    """The earlier tree heads, smallest first, each with its consistency proof."""
    out = []
    for head in sorted(earlier, key=lambda h: (h.tree_size, h.timestamp_ms)):
        if head.log_id != tree_head.log_id:
            raise InconsistentEvidence("an earlier tree head is another log's")
        if head.tree_size > tree_head.tree_size or head.timestamp_ms > tree_head.timestamp_ms:
            raise InconsistentEvidence(
                f"the tree head of {head.tree_size} leaves is not earlier than the bundle's"
            )
        if tree.root(head.tree_size) != head.root:
            raise InconsistentEvidence(
                f"the tree head of {head.tree_size} leaves is not a prefix of the log's tree"
            )
        proof = consistency_proof(tree, head.tree_size)
        out.append((head, [h.hex() for h in proof]))
    return out


def _entry(match: MatchEvidence, tree: Tree, key: PublicKey) -> MatchEntry:
    rows = match.rows
    if not rows or rows[-1][2] != "match_ended":
        raise InconsistentEvidence(f"match {match.match_id} has not ended")
    for seq, row in enumerate(rows):
        if row[0] != match.match_id or row[1] != seq:
            raise InconsistentEvidence(f"match {match.match_id}: event {seq} is out of place")
    last = rows[-1]
    head = bytes(last[11]).hex()
    if not 0 <= match.leaf_index < tree.size:
        raise InconsistentEvidence(f"match {match.match_id} is not in the signed tree")
    leaf = leaf_hash(leaf_data(match.match_id, last[1], head))
    if tree.leaves[match.leaf_index] != leaf:
        raise InconsistentEvidence(
            f"leaf {match.leaf_index} is not match {match.match_id}'s last head"
        )
    for checkpoint in match.checkpoints:
        if checkpoint.log_id != key.log_id or checkpoint.match_id != match.match_id:
            raise InconsistentEvidence(f"a checkpoint of match {match.match_id} is not its own")
    path = inclusion_proof(tree, match.leaf_index)
    return MatchEntry(match.match_id, match.leaf_index, last[1], head, tuple(h.hex() for h in path))

"""The log's tree of finished matches: its leaves, signed tree heads and checkpoints.

Why here, in the storage layer: a leaf is numbered when its match's end goes
into DuckDB, in the transaction that inserts it, whatever inserted it (the
served matches' loads, journal recovery, a salvage, an import, a simulation,
a migration), so the tree's order is the order the file took the match ends
and no path can leave a match without its leaf or give it two. The formats
are docs/evidence.md's and `service.evidence`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Final

import duckdb
import pyarrow as pa

from service.evidence.keys import SigningKey
from service.evidence.merkle import (
    CompactRange,
    Tree,
    consistency_proof,
    inclusion_proof,
    leaf_data,
    leaf_hash,
)
from service.evidence.proofs import ConsistencyProof, InclusionProof
from service.evidence.signed import Checkpoint, TreeHead

from . import _sql
from .errors import StorageError
from .events import HASH, EventRow

__all__ = [
    "HEAD_KINDS",
    "NotInTree",
    "StoredTree",
    "TreeSigner",
    "insert_checkpoints",
    "insert_leaves",
    "read_tree",
]

_LEAF_SCHEMA: Final = pa.schema(
    [
        ("ord", pa.int64()),
        ("match_id", pa.string()),
        ("seq", pa.int64()),
        ("head", pa.string()),
    ]
)


def insert_leaves(cursor: duckdb.DuckDBPyConnection, rows: Sequence[EventRow]) -> None:
    """The leaves of the matches whose match_ended events are among `rows`, in their order,
    in the caller's transaction (a match with a leaf already gets no second one)."""
    ended = [r for r in rows if r[2] == "match_ended" and r[HASH] is not None]
    if not ended:
        return
    table = pa.table(
        [
            pa.array(range(len(ended)), pa.int64()),
            pa.array([str(r[0]) for r in ended], pa.string()),
            pa.array([int(r[1]) for r in ended], pa.int64()),
            pa.array([bytes(r[HASH]).hex() for r in ended], pa.string()),  # type: ignore[arg-type]
        ],
        schema=_LEAF_SCHEMA,
    )
    cursor.register("_pending_leaves", table)
    try:
        cursor.execute(_sql.query("insert_pending_leaves"))
    finally:
        with suppress(duckdb.Error):
            cursor.unregister("_pending_leaves")


_CHECKPOINT_SCHEMA: Final = pa.schema(
    [
        ("match_id", pa.string()),
        ("seq", pa.int64()),
        ("head", pa.string()),
        ("log_id", pa.string()),
        ("signature", pa.string()),
    ]
)
HEAD_KINDS: Final = ("round_ended", "match_ended")
"""The events whose hash is a head handed out, so gets a checkpoint (docs/chain.md)."""


def insert_checkpoints(cursor: duckdb.DuckDBPyConnection, made: Sequence[Checkpoint]) -> None:
    """Store checkpoints in the caller's transaction (one already stored is left as it is:
    signing the same head again gives the same checkpoint)."""
    if not made:
        return
    table = pa.table(
        [
            pa.array([c.match_id for c in made], pa.string()),
            pa.array([c.seq for c in made], pa.int64()),
            pa.array([c.head for c in made], pa.string()),
            pa.array([c.log_id for c in made], pa.string()),
            pa.array([c.signature.hex() for c in made], pa.string()),
        ],
        schema=_CHECKPOINT_SCHEMA,
    )
    cursor.register("_pending_checkpoints", table)
    try:
        cursor.execute(_sql.query("insert_pending_checkpoints"))
    finally:
        with suppress(duckdb.Error):
            cursor.unregister("_pending_checkpoints")


class TreeSigner:
    """The signing side of the tree, held by a log opened with a signing key.

    Keeps the tree's compact range (the roots of its complete subtrees) in
    memory, so a new tree head costs O(log n) hashes and one read of the
    leaves added since the last; made from the stored leaves at open. All
    methods run where the log's writer cursor is owned (at open, or under the
    commit lock).
    """

    def __init__(self, key: SigningKey, cursor: duckdb.DuckDBPyConnection) -> None:
        self.key = key
        self._range = CompactRange()
        self._signed = 0
        self._last_ms = 0
        self._extend(cursor)
        covered = _sql.scalar(cursor, "tree_size_signed", {"log_id": key.log_id})
        self._signed = int(covered) if covered is not None else 0
        last = _sql.scalar(cursor, "last_tree_head_ms", {"log_id": key.log_id})
        self._last_ms = int(last) if last is not None else 0

    def checkpoints(self, rows: Sequence[EventRow]) -> list[Checkpoint]:
        """A checkpoint of each head among `rows` (round and match ends)."""
        return [
            Checkpoint.sign(self.key, str(r[0]), int(r[1]), bytes(r[HASH]).hex())
            for r in rows
            if r[2] in HEAD_KINDS and r[HASH] is not None
        ]

    def sign_missing_checkpoints(self, cursor: duckdb.DuckDBPyConnection) -> int:
        """Sign every head the file holds without this key's checkpoint (events loaded from a
        journal, imported or simulated by a tool without the key); how many."""
        missing = cursor.execute(
            _sql.query("heads_without_checkpoint"), {"log_id": self.key.log_id}
        ).fetchall()
        made = [Checkpoint.sign(self.key, str(m), int(s), str(h)) for m, s, h in missing]
        insert_checkpoints(cursor, made)
        return len(made)

    def catch_up(self, cursor: duckdb.DuckDBPyConnection) -> TreeHead | None:
        """Add the leaves stored since the last call and sign a tree head when some leaves
        have none yet (stored in `tree_heads`); the head, or None when none was due.

        For a cursor in autocommit mode (at open); a load signs inside its own transaction
        with `prepare` and `adopt`."""
        prepared = self.prepare(cursor)
        if prepared is None:
            return None
        self.adopt(prepared)
        return prepared.head

    def prepare(self, cursor: duckdb.DuckDBPyConnection) -> PreparedHead | None:
        """`catch_up` in the caller's transaction, leaving this signer as it was: the tree
        head is stored with the leaves it covers, in one commit (a load holds the commit lock
        for one transaction, not two), and `adopt` takes it once that commit succeeded. A
        head whose transaction fails is signed again at the next load or open."""
        compact = CompactRange(self._range.size, list(self._range.peaks))
        self._extend(cursor, compact)
        if compact.size <= self._signed:
            return None
        now = max(time.time_ns() // 1_000_000, self._last_ms)  # never back in time
        head = TreeHead.sign(self.key, compact.size, compact.root(), now)
        cursor.execute(
            _sql.query("insert_tree_head"),
            {
                "tree_size": head.tree_size,
                "root_hash": head.root_hash,
                "timestamp_ms": head.timestamp_ms,
                "log_id": head.log_id,
                "signature": head.signature.hex(),
            },
        )
        return PreparedHead(head, compact)

    def adopt(self, prepared: PreparedHead) -> None:
        """Take a prepared head's tree as signed: its transaction committed."""
        self._range = prepared.compact
        self._signed, self._last_ms = prepared.head.tree_size, prepared.head.timestamp_ms

    def _extend(
        self, cursor: duckdb.DuckDBPyConnection, compact: CompactRange | None = None
    ) -> None:
        compact = self._range if compact is None else compact
        rows = cursor.execute(_sql.query("leaves_from"), {"start": compact.size}).fetchall()
        for index, match_id, seq, head in rows:
            if index != compact.size:
                raise StorageError(
                    f"the tree's leaves skip from {compact.size} to {index}: the file was edited"
                )
            compact.append(leaf_hash(leaf_data(str(match_id), int(seq), str(head))))


@dataclass(frozen=True, slots=True)
class PreparedHead:
    """A tree head signed and inserted in a transaction not yet committed, with its tree."""

    head: TreeHead
    compact: CompactRange


class NotInTree(LookupError):
    """What a proof was asked of is not there: a match with no leaf (unknown, in play, or
    not loaded yet), or no signed tree head of the size asked for."""


@dataclass(frozen=True, slots=True)
class StoredTree:
    """The tree as a log holds it: its leaves in order and its signed heads by size."""

    leaves: tuple[tuple[str, int, str], ...]
    """(match_id, seq, head) of each leaf, leaf 0 first."""
    heads: tuple[TreeHead, ...]
    """Every signed tree head, smallest tree first (then oldest)."""
    gaps: tuple[int, ...] = ()
    """Leaf indexes the stored numbering skips or repeats (an edited file)."""

    def tree(self) -> Tree:
        return Tree([leaf_hash(leaf_data(*leaf)) for leaf in self.leaves])

    def index_of(self, match_id: str) -> int:
        for index, leaf in enumerate(self.leaves):
            if leaf[0] == match_id:
                return index
        raise NotInTree(f"match {match_id} has no leaf in the tree: it is unknown or not over")

    def latest(self, log_id: str | None = None) -> TreeHead | None:
        """The head of the largest tree (of log `log_id`, when given)."""
        heads = [h for h in self.heads if log_id is None or h.log_id == log_id]
        return heads[-1] if heads else None

    def head_of_size(self, size: int, log_id: str | None = None) -> TreeHead:
        for head in reversed(self.heads):
            if head.tree_size == size and (log_id is None or head.log_id == log_id):
                return head
        raise NotInTree(f"no signed tree head has {size} leaves")

    def inclusion(self, match_id: str, log_id: str | None = None) -> InclusionProof:
        """The inclusion proof of `match_id`'s leaf in the latest signed tree head."""
        index = self.index_of(match_id)
        head = self.latest(log_id)
        if head is None or head.tree_size <= index:
            raise NotInTree(f"no signed tree head covers match {match_id} yet")
        if head.tree_size > len(self.leaves):
            raise NotInTree(f"the log holds fewer leaves than its tree head of {head.tree_size}")
        _, seq, final = self.leaves[index]
        path = inclusion_proof(self.tree(), index, head.tree_size)
        return InclusionProof(match_id, seq, final, index, head, tuple(path))

    def consistency(
        self, old_size: int, new_size: int | None = None, log_id: str | None = None
    ) -> ConsistencyProof:
        """The consistency proof between the signed tree heads of these sizes (the latest
        when `new_size` is None)."""
        old = self.head_of_size(old_size, log_id)
        new = self.latest(log_id) if new_size is None else self.head_of_size(new_size, log_id)
        assert new is not None  # `old` exists, so some head does
        if old.tree_size > new.tree_size:
            raise NotInTree(f"the tree of {new.tree_size} leaves is older than {old.tree_size}")
        if new.tree_size > len(self.leaves):
            raise NotInTree(f"the log holds fewer leaves than its tree head of {new.tree_size}")
        path = consistency_proof(self.tree(), old.tree_size, new.tree_size)
        return ConsistencyProof(old, new, tuple(path))


Query = Callable[[str, Sequence[Any]], pa.Table]
"""Runs SQL with positional parameters: `EventLog.query`, or `LogSource.query` offline."""


def read_tree(query: Query) -> StoredTree:
    """The leaves and signed heads a log holds, read with `query` (its own read path)."""
    rows = query(_sql.query("tree_leaves_all"), []).to_pylist()
    gaps = tuple(r["leaf_index"] for i, r in enumerate(rows) if r["leaf_index"] != i)
    leaves = tuple((str(r["match_id"]), int(r["seq"]), str(r["head"])) for r in rows)
    heads = tuple(
        TreeHead(
            str(r["log_id"]),
            int(r["tree_size"]),
            str(r["root_hash"]),
            int(r["timestamp_ms"]),
            bytes.fromhex(str(r["signature"])),
        )
        for r in query(_sql.query("tree_heads_all"), []).to_pylist()
    )
    return StoredTree(leaves, heads, gaps)

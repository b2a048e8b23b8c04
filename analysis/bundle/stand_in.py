"""What a log with a signing key holds for its finished matches, made in this process.

The service keeps its leaves, signed tree heads and checkpoints in the log
(`tree_leaves`, `tree_heads`, `checkpoints`). Tests and `scripts/bench_verify.py`
need the same rows for matches played in process (analysis/simulate.py's
chunks) without a service: `SignedLog` makes them with `service.evidence`,
exactly as docs/evidence.md defines them, so a bundle written from them is one
the verifiers must accept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from service.evidence.keys import SigningKey
from service.evidence.merkle import CompactRange, leaf_data, leaf_hash
from service.evidence.signed import Checkpoint, TreeHead
from service.storage.tree import HEAD_KINDS

from .layout import Row
from .writer import MatchEvidence

__all__ = ["SignedLog", "rows_of_table"]


@dataclass
class SignedLog:
    """Leaves appended as matches finish; tree heads signed when asked; a checkpoint for
    every round end and match end."""

    key: SigningKey
    leaves: list[bytes] = field(default_factory=list)
    tree_heads: list[TreeHead] = field(default_factory=list)
    leaf_index: dict[str, int] = field(default_factory=dict)
    checkpoints: dict[str, list[Checkpoint]] = field(default_factory=dict)
    _compact: CompactRange = field(default_factory=CompactRange)

    def finish(self, rows: Sequence[Row]) -> None:
        """A finished match's events (seq order, its match_ended last): its leaf and checkpoints."""
        match_id = rows[-1][0]
        last = rows[-1]
        leaf = leaf_hash(leaf_data(match_id, last[1], bytes(last[11]).hex()))
        self.leaf_index[match_id] = len(self.leaves)
        self.leaves.append(leaf)
        self._compact.append(leaf)
        self.checkpoints[match_id] = [
            Checkpoint.sign(self.key, match_id, row[1], bytes(row[11]).hex())
            for row in rows
            if row[2] in HEAD_KINDS
        ]

    def sign_head(self, timestamp_ms: int) -> TreeHead:
        head = TreeHead.sign(self.key, self._compact.size, self._compact.root(), timestamp_ms)
        self.tree_heads.append(head)
        return head

    def evidence(self, matches: Iterable[Sequence[Row]]) -> Iterator[MatchEvidence]:
        """Each match's evidence, for matches this log finished (in the order given)."""
        for rows in matches:
            match_id = rows[0][0]
            yield MatchEvidence(
                match_id, self.leaf_index[match_id], rows, self.checkpoints[match_id]
            )


def rows_of_table(columns: Sequence[Sequence[Any]]) -> list[list[Row]]:
    """Events as columns of `events_all` (service/storage/events.py COLUMNS order, as
    analysis/simulate.py's chunks hold them), grouped into each match's logaudit rows."""
    matches: list[list[Row]] = []
    for row in zip(*columns[:12], strict=True):
        if row[1] == 0:
            matches.append([])
        matches[-1].append(row)
    return matches

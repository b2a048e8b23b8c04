"""`sniff export --evidence`: a bundle of the log's finished matches, read as every command reads.

Reads the events, the tree's leaves, the signed tree heads and the checkpoints
through analysis/logquery.py (a live service's Query RPC, or the file
read-only) and hands them to the pure writer. The bundle is proven against
the log's latest tree head signed by the given key; every earlier one of
that key goes in with its consistency proof.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.logaudit import list_matches, read_chunks
from analysis.logquery import LogSource, UnknownMatch
from analysis.sqlfiles import named_queries
from service.evidence.keys import PublicKey
from service.evidence.merkle import leaf_data, leaf_hash
from service.evidence.signed import Checkpoint, TreeHead

from .layout import Counts
from .writer import MatchEvidence, write_bundle

__all__ = ["Exported", "NoTreeHead", "NotInTree", "export_evidence"]


class NoTreeHead(LookupError):
    """The log has no tree head signed by the key: nothing to prove a bundle against."""


class NotInTree(LookupError):
    """A named match is not finished, or finished after the last signed tree head."""


@dataclass(frozen=True, slots=True)
class Exported:
    counts: Counts
    tree_head: TreeHead
    left_out: int
    """Finished matches not in the signed tree yet (exported without names: not in the bundle)."""


def _sql(name: str) -> str:
    return named_queries("analysis.bundle", "bundle.sql")[name]


def _hex(value: Any) -> str:
    """A hash, id or signature as the log holds it (BLOB or hex text) as lowercase hex."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return str(value).lower()


def export_evidence(
    db_path: str | Path,
    directory: str | Path,
    match_ids: Sequence[str] = (),
    *,
    public_key: PublicKey,
    tls_ca: str | None = None,
) -> Exported:
    """Write the bundle of the named matches (or every match in the signed tree) to `directory`."""
    named = list(dict.fromkeys(match_ids))
    with LogSource(db_path, tls_ca=tls_ca) as source:
        if source.query(_sql("has_tables")).column(0)[0].as_py() < 3:
            raise NoTreeHead(
                f"{source.db_path} has no tree of finished matches: a service started with"
                " --signing-key-file (sniff keygen makes one) keeps one and signs its heads"
            )
        heads = _tree_heads(source, public_key)
        head = heads[-1]
        leaves, leaf_of = _leaves(source, head.tree_size)
        finished = set(source.query(_sql("finished")).column(0).to_pylist())
        if named:
            list_matches(source, named)  # UnknownMatch for a match the log does not hold
            for match_id in named:
                if match_id not in finished:
                    raise NotInTree(
                        f"match {match_id} is not finished: only a finished match is proven"
                    )
                if match_id not in leaf_of:
                    raise NotInTree(
                        f"match {match_id} ended after the last signed tree head"
                        f" ({head.tree_size:,} matches): export it once a newer one is signed"
                    )
            chosen = sorted(named)
        else:
            chosen = sorted(leaf_of)
        left_out = len(finished - set(leaf_of))
        counts = list_matches(source, chosen) if chosen else {}
        checkpoints = _checkpoints(source, public_key, set(chosen))

        def matches() -> Iterator[MatchEvidence]:
            for chunk in read_chunks(source, counts, {}, bool(named)):
                for work in chunk.works():
                    yield MatchEvidence(
                        work.match_id,
                        leaf_of[work.match_id],
                        work.rows,
                        checkpoints.get(work.match_id, ()),
                    )

        written = write_bundle(
            directory,
            public_key=public_key,
            tree_head=head,
            leaves=leaves,
            matches=matches(),
            earlier=heads[:-1],
        )
    return Exported(written, head, 0 if named else left_out)


def _tree_heads(source: LogSource, key: PublicKey) -> list[TreeHead]:
    """The key's signed tree heads, the one to prove against (largest, then latest) last."""
    heads = [
        TreeHead(
            _hex(row["log_id"]),
            row["tree_size"],
            _hex(row["root_hash"]),
            row["timestamp_ms"],
            bytes.fromhex(_hex(row["signature"])),
        )
        for row in source.query(_sql("tree_heads")).to_pylist()
    ]
    heads = [h for h in heads if h.log_id == key.log_id]
    if not heads:
        raise NoTreeHead(
            f"{source.db_path} has no tree head signed by log {key.log_id[:16]}… (the key given):"
            " a service started with --signing-key-file signs one as matches end"
        )
    return sorted(heads, key=lambda h: (h.tree_size, h.timestamp_ms))


def _leaves(source: LogSource, size: int) -> tuple[list[bytes], dict[str, int]]:
    leaves: list[bytes] = []
    leaf_of: dict[str, int] = {}
    for row in source.query(_sql("leaves"), [size]).to_pylist():
        if row["leaf_index"] != len(leaves):
            raise UnknownMatch(f"the log's tree lacks leaf {len(leaves)}")
        leaves.append(leaf_hash(leaf_data(row["match_id"], row["seq"], _hex(row["head"]))))
        leaf_of[row["match_id"]] = row["leaf_index"]
    return leaves, leaf_of


def _checkpoints(
    source: LogSource, key: PublicKey, chosen: set[str]
) -> Mapping[str, list[Checkpoint]]:
    found: dict[str, list[Checkpoint]] = {}
    for row in source.query(_sql("checkpoints")).to_pylist():
        if row["match_id"] not in chosen or _hex(row["log_id"]) != key.log_id:
            continue
        found.setdefault(row["match_id"], []).append(
            Checkpoint(
                key.log_id,
                row["match_id"],
                row["seq"],
                _hex(row["head"]),
                bytes.fromhex(_hex(row["signature"])),
            )
        )
    return found

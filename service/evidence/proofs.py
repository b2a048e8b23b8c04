"""Proof documents (docs/evidence.md, "Proof documents"): a match's inclusion in a signed
tree head, and one signed tree head's consistency with an earlier one, as JSON.

Why documents and not bare paths: each carries the signed tree head(s) it is checked
against, so a third party needs nothing but the document and the log's public key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import BadProof, MalformedEvidence
from .keys import PublicKey
from .merkle import leaf_data, leaf_hash, verify_consistency, verify_inclusion
from .signed import _MATCH_ID, TreeHead, _check_keys, _hex64, _uint

__all__ = ["ConsistencyProof", "InclusionProof", "proof_from_json"]


def _path(obj: dict[str, Any], what: str) -> tuple[bytes, ...]:
    path = obj.get("path")
    if not isinstance(path, list):
        raise MalformedEvidence(f"{what}: `path` must be a list of hashes")
    holder = {"hash": None}
    out = []
    for item in path:
        holder["hash"] = item
        out.append(bytes.fromhex(_hex64(holder, "hash", f"{what} path")))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class InclusionProof:
    """That match `match_id`'s leaf (its end: event `seq`, hash `head`) is leaf
    `leaf_index` of the tree `tree_head` signs."""

    match_id: str
    seq: int
    head: str
    leaf_index: int
    tree_head: TreeHead
    path: tuple[bytes, ...]

    def verify(self, key: PublicKey) -> None:
        """Raise WrongLog, BadSignature or BadProof unless this holds under `key`."""
        self.tree_head.verify(key)
        leaf = leaf_hash(leaf_data(self.match_id, self.seq, self.head))
        verify_inclusion(
            leaf, self.leaf_index, self.tree_head.tree_size, self.path, self.tree_head.root
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "inclusion",
            "match_id": self.match_id,
            "seq": self.seq,
            "head": self.head,
            "leaf_index": self.leaf_index,
            "tree_head": self.tree_head.to_json(),
            "path": [p.hex() for p in self.path],
        }

    @classmethod
    def from_json(cls, obj: Any) -> InclusionProof:
        what = "inclusion proof"
        keys = {"type", "match_id", "seq", "head", "leaf_index", "tree_head", "path"}
        obj = _check_keys(obj, "inclusion", keys)
        match_id = obj["match_id"]
        if not isinstance(match_id, str) or not _MATCH_ID.fullmatch(match_id):
            raise MalformedEvidence(f"{what}: `match_id` is not a match id")
        return cls(
            match_id,
            _uint(obj, "seq", what),
            _hex64(obj, "head", what),
            _uint(obj, "leaf_index", what),
            TreeHead.from_json(obj["tree_head"]),
            _path(obj, what),
        )


@dataclass(frozen=True, slots=True)
class ConsistencyProof:
    """That the tree `new` signs extends, unchanged, the tree `old` signs."""

    old: TreeHead
    new: TreeHead
    path: tuple[bytes, ...]

    def verify(self, key: PublicKey) -> None:
        """Raise WrongLog, BadSignature or BadProof unless this holds under `key`."""
        self.old.verify(key)
        self.new.verify(key)
        if self.old.tree_size > self.new.tree_size:
            raise BadProof(
                f"the `from` tree ({self.old.tree_size} leaves) is larger than the `to` tree"
                f" ({self.new.tree_size})"
            )
        verify_consistency(
            self.old.tree_size, self.new.tree_size, self.old.root, self.new.root, self.path
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "consistency",
            "from": self.old.to_json(),
            "to": self.new.to_json(),
            "path": [p.hex() for p in self.path],
        }

    @classmethod
    def from_json(cls, obj: Any) -> ConsistencyProof:
        obj = _check_keys(obj, "consistency", {"type", "from", "to", "path"})
        return cls(
            TreeHead.from_json(obj["from"]),
            TreeHead.from_json(obj["to"]),
            _path(obj, "consistency proof"),
        )


def proof_from_json(obj: Any) -> InclusionProof | ConsistencyProof:
    """The proof document `obj` is, by its `type`."""
    kind = obj.get("type") if isinstance(obj, dict) else None
    if kind == "inclusion":
        return InclusionProof.from_json(obj)
    if kind == "consistency":
        return ConsistencyProof.from_json(obj)
    raise MalformedEvidence(f"not a proof document: its `type` is {kind!r}")

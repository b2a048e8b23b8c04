"""The Merkle tree over finished matches: RFC 9162's (Certificate Transparency 2.0).

Why this tree: it is the one third parties already have verifiers for, and it
gives both proofs an auditor needs with logarithmic size: that a match is in
the tree a signed head names (inclusion), and that a later tree only grew from
an earlier one (consistency). Section numbers below are RFC 9162's.

Hashes are 32-byte SHA-256 digests; a leaf's hash is SHA-256(0x00 || data)
and an interior node's SHA-256(0x01 || left || right) (§2.1.1), so a leaf can
never pass for a node. The leaf data of a match is `leaf_data` (docs/evidence.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from .errors import BadProof

__all__ = [
    "EMPTY_ROOT",
    "CompactRange",
    "Tree",
    "consistency_proof",
    "inclusion_proof",
    "leaf_data",
    "leaf_hash",
    "node_hash",
    "root_from_consistency",
    "root_of",
    "verify_consistency",
    "verify_inclusion",
]

LEAF_DOMAIN = "sniff/tree-leaf/v1"
EMPTY_ROOT = hashlib.sha256(b"").digest()
"""The root of the empty tree (§2.1.1: the hash of an empty string)."""


def leaf_data(match_id: str, seq: int, head: str) -> bytes:
    """The leaf of a finished match: its id, the seq of its last event and that event's hash."""
    return f"{LEAF_DOMAIN}\n{match_id}\n{seq}\n{head}\n".encode()


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than n (n > 1): where §2.1.1 splits a tree of n."""
    return 1 << ((n - 1).bit_length() - 1)


@dataclass(slots=True)
class Tree:
    """Every level of the tree over `leaves` (leaf hashes), for making proofs.

    Level h holds the hashes of the complete subtrees of 2^h leaves, left to
    right; building it level by level, pairing neighbours, is §2.1.1's
    recursion when an odd last node is carried up unpaired.
    """

    leaves: Sequence[bytes]
    levels: list[list[bytes]] = field(init=False)

    def __post_init__(self) -> None:
        levels = [list(self.leaves)]
        while len(levels[-1]) > 1:
            below = levels[-1]
            levels.append([node_hash(below[i], below[i + 1]) for i in range(0, len(below) - 1, 2)])
        self.levels = levels

    @property
    def size(self) -> int:
        return len(self.leaves)

    def root(self, size: int | None = None) -> bytes:
        """The root of the first `size` leaves (all of them by default)."""
        size = self.size if size is None else size
        if not 0 <= size <= self.size:
            raise ValueError(f"a tree of {self.size} leaves has no first {size}")
        return self.subtree(0, size) if size else EMPTY_ROOT

    def subtree(self, start: int, end: int) -> bytes:
        """MTH of leaves [start, end): one stored node when it is a complete, aligned subtree."""
        n = end - start
        if n & (n - 1) == 0 and start % n == 0:
            return self.levels[n.bit_length() - 1][start // n]
        k = _split(n)
        return node_hash(self.subtree(start, start + k), self.subtree(start + k, end))


def root_of(leaves: Sequence[bytes]) -> bytes:
    """The root of a tree with these leaf hashes."""
    return CompactRange.of(leaves).root()


@dataclass(slots=True)
class CompactRange:
    """The roots of the complete subtrees a tree of `size` leaves is made of, largest first.

    Why: the log appends a leaf as each match ends and signs a new head; with
    these O(log n) roots kept, a new root costs O(log n) hashes, not the
    whole tree again.
    """

    size: int = 0
    peaks: list[bytes] = field(default_factory=list)

    @classmethod
    def of(cls, leaves: Sequence[bytes]) -> CompactRange:
        compact = cls()
        for leaf in leaves:
            compact.append(leaf)
        return compact

    def append(self, leaf: bytes) -> None:
        self.peaks.append(leaf)
        self.size += 1
        size = self.size
        while size & 1 == 0:  # two equal subtrees side by side make one
            right = self.peaks.pop()
            self.peaks[-1] = node_hash(self.peaks[-1], right)
            size >>= 1

    def root(self) -> bytes:
        if not self.peaks:
            return EMPTY_ROOT
        root = self.peaks[-1]
        for peak in reversed(self.peaks[:-1]):
            root = node_hash(peak, root)
        return root


def inclusion_proof(tree: Tree, index: int, size: int | None = None) -> list[bytes]:
    """PATH(index, D[size]) (§2.1.3.1): the audit path of leaf `index` in the first `size`."""
    size = tree.size if size is None else size
    if not 0 <= index < size <= tree.size:
        raise ValueError(f"no leaf {index} in a tree of {size}")
    path: list[bytes] = []
    start, end = 0, size
    while end - start > 1:  # walk down, collecting the sibling of each subtree left
        k = _split(end - start)
        if index < start + k:
            path.append(tree.subtree(start + k, end))
            end = start + k
        else:
            path.append(tree.subtree(start, start + k))
            start += k
    path.reverse()
    return path


def consistency_proof(tree: Tree, old_size: int, new_size: int | None = None) -> list[bytes]:
    """PROOF(old_size, D[new_size]) (§2.1.4.1): that the first `new_size` leaves extend the
    first `old_size`. Empty when the sizes are equal or the old tree is empty."""
    new_size = tree.size if new_size is None else new_size
    if not 0 <= old_size <= new_size <= tree.size:
        raise ValueError(f"no consistency proof from {old_size} to {new_size} leaves")
    if old_size in (0, new_size):
        return []
    proof: list[bytes] = []
    start, end, m, whole = 0, new_size, old_size, True
    while m != end - start:
        k = _split(end - start)
        if m <= k:
            proof.append(tree.subtree(start + k, end))
            end = start + k
        else:
            proof.append(tree.subtree(start, start + k))
            start, m, whole = start + k, m - k, False
    if not whole:
        proof.append(tree.subtree(start, end))
    proof.reverse()
    return proof


def verify_inclusion(
    leaf: bytes, index: int, size: int, path: Sequence[bytes], root: bytes
) -> None:
    """Raise BadProof unless `path` proves leaf hash `leaf` is leaf `index` of the tree of
    `size` leaves with `root` (§2.1.3.2)."""
    if not 0 <= index < size:
        raise BadProof(f"leaf {index} is not in a tree of {size} leaves")
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            raise BadProof("the inclusion proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise BadProof("the inclusion proof is shorter than the tree is deep")
    if r != root:
        raise BadProof("the inclusion proof does not lead to the tree head's root")


def root_from_consistency(
    old_size: int, new_size: int, old_root: bytes, proof: Sequence[bytes]
) -> tuple[bytes, bytes]:
    """The (old, new) roots `proof` leads to from a tree of `old_size` to one of `new_size`
    (§2.1.4.2's walk); raise BadProof when the proof is malformed for the sizes."""
    if not 0 <= old_size <= new_size:
        raise BadProof(f"a tree of {new_size} leaves cannot extend one of {old_size}")
    if old_size == 0 or old_size == new_size:
        if proof:
            raise BadProof("a consistency proof between these sizes is empty")
        return old_root, old_root
    if not proof:
        raise BadProof("the consistency proof is empty")
    path = list(proof)
    if old_size & (old_size - 1) == 0:
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise BadProof("the consistency proof is longer than the trees are deep")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise BadProof("the consistency proof is shorter than the trees are deep")
    return fr, sr


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """Raise BadProof unless `proof` shows the tree (`new_size`, `new_root`) extends the tree
    (`old_size`, `old_root`) (§2.1.4.2)."""
    if old_size == 0:
        if proof:
            raise BadProof("a consistency proof from the empty tree is empty")
        if old_root != EMPTY_ROOT:
            raise BadProof("the empty tree's root is SHA-256 of nothing")
        return
    if old_size == new_size and old_root != new_root:
        raise BadProof("two tree heads of the same size have different roots")
    fr, sr = root_from_consistency(old_size, new_size, old_root, proof)
    if fr != old_root:
        raise BadProof("the consistency proof does not lead to the old tree head's root")
    if sr != new_root:
        raise BadProof("the consistency proof does not lead to the new tree head's root")

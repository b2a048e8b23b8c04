"""The Merkle tree of finished matches is RFC 9162's, and its proofs verify only what is true."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.evidence.errors import BadProof
from service.evidence.merkle import (
    EMPTY_ROOT,
    CompactRange,
    Tree,
    consistency_proof,
    inclusion_proof,
    leaf_data,
    leaf_hash,
    root_of,
    verify_consistency,
    verify_inclusion,
)


# An independent reading of RFC 9162 §2.1, written from its recursive definitions.
def _h(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _k(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def _mth(d: list[bytes]) -> bytes:
    if not d:
        return _h(b"")
    if len(d) == 1:
        return _h(b"\x00" + d[0])
    k = _k(len(d))
    return _h(b"\x01" + _mth(d[:k]) + _mth(d[k:]))


def _path(m: int, d: list[bytes]) -> list[bytes]:
    if len(d) == 1:
        return []
    k = _k(len(d))
    if m < k:
        return [*_path(m, d[:k]), _mth(d[k:])]
    return [*_path(m - k, d[k:]), _mth(d[:k])]


def _subproof(m: int, d: list[bytes], b: bool) -> list[bytes]:
    if m == len(d):
        return [] if b else [_mth(d)]
    k = _k(len(d))
    if m <= k:
        return [*_subproof(m, d[:k], b), _mth(d[k:])]
    return [*_subproof(m - k, d[k:], False), _mth(d[:k])]


def _data(n: int) -> list[bytes]:
    return [leaf_data(f"{i:016x}", 40 + i, f"{i:064x}") for i in range(n)]


def test_the_root_is_rfc_9162s_merkle_tree_hash_for_every_size_up_to_70() -> None:
    for n in range(71):
        data = _data(n)
        leaves = [leaf_hash(x) for x in data]
        assert root_of(leaves) == _mth(data)
        assert Tree(leaves).root() == _mth(data)


def test_the_empty_tree_has_the_hash_of_nothing_as_root() -> None:
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert Tree([]).root() == EMPTY_ROOT


def test_inclusion_proofs_are_rfc_9162s_path_and_verify() -> None:
    for n in range(1, 40):
        data = _data(n)
        tree = Tree([leaf_hash(x) for x in data])
        root = tree.root()
        for m in range(n):
            proof = inclusion_proof(tree, m)
            assert proof == _path(m, data)
            verify_inclusion(leaf_hash(data[m]), m, n, proof, root)


def test_consistency_proofs_are_rfc_9162s_proof_and_verify() -> None:
    for n in range(1, 40):
        data = _data(n)
        tree = Tree([leaf_hash(x) for x in data])
        for m in range(1, n + 1):
            proof = consistency_proof(tree, m, n)
            assert proof == _subproof(m, data, True)
            verify_consistency(m, n, tree.root(m), tree.root(n), proof)


def test_a_proof_for_an_older_tree_is_made_from_its_first_leaves() -> None:
    data = _data(37)
    tree = Tree([leaf_hash(x) for x in data])
    assert inclusion_proof(tree, 5, 20) == _path(5, data[:20])
    assert consistency_proof(tree, 7, 20) == _subproof(7, data[:20], True)


def test_the_compact_range_gives_each_prefix_root_as_leaves_arrive() -> None:
    data = _data(50)
    compact = CompactRange()
    for i, x in enumerate(data):
        compact.append(leaf_hash(x))
        assert compact.root() == _mth(data[: i + 1])
    assert len(compact.peaks) == bin(50).count("1")


def _flip(b: bytes) -> bytes:
    return bytes([b[0] ^ 1]) + b[1:]


@given(st.integers(1, 300), st.data())
def test_no_changed_proof_verifies(n: int, draw: st.DataObject) -> None:
    data = _data(n)
    tree = Tree([leaf_hash(x) for x in data])
    m = draw.draw(st.integers(0, n - 1))
    proof = inclusion_proof(tree, m)
    root = tree.root()
    verify_inclusion(leaf_hash(data[m]), m, n, proof, root)
    with pytest.raises(BadProof):
        verify_inclusion(leaf_hash(data[m] + b"x"), m, n, proof, root)
    if proof:
        i = draw.draw(st.integers(0, len(proof) - 1))
        with pytest.raises(BadProof):
            verify_inclusion(
                leaf_hash(data[m]), m, n, [*proof[:i], _flip(proof[i]), *proof[i + 1 :]], root
            )
        with pytest.raises(BadProof):
            verify_inclusion(leaf_hash(data[m]), m, n, proof[:-1], root)
    with pytest.raises(BadProof):
        verify_inclusion(leaf_hash(data[m]), m, n, [*proof, root], root)
    if n > 1:
        other = (m + 1) % n
        with pytest.raises(BadProof):
            verify_inclusion(leaf_hash(data[m]), other, n, proof, root)
    old = draw.draw(st.integers(1, n))
    cproof = consistency_proof(tree, old)
    verify_consistency(old, n, tree.root(old), root, cproof)
    if old < n:
        with pytest.raises(BadProof):
            verify_consistency(old, n, _flip(tree.root(old)), root, cproof)
        with pytest.raises(BadProof):
            verify_consistency(old, n, tree.root(old), _flip(root), cproof)
        j = draw.draw(st.integers(0, len(cproof) - 1))
        with pytest.raises(BadProof):
            verify_consistency(
                old, n, tree.root(old), root, [*cproof[:j], _flip(cproof[j]), *cproof[j + 1 :]]
            )
        with pytest.raises(BadProof):
            verify_consistency(old, n, tree.root(old), root, cproof[:-1])


def test_a_tree_that_was_not_only_appended_to_has_no_consistency_proof() -> None:
    data = _data(12)
    old = Tree([leaf_hash(x) for x in data[:8]])
    changed = [*data[:3], b"rewritten", *data[4:]]
    new = Tree([leaf_hash(x) for x in changed])
    with pytest.raises(BadProof):
        verify_consistency(8, 12, old.root(), new.root(), consistency_proof(new, 8))


def test_same_size_heads_with_different_roots_are_inconsistent() -> None:
    with pytest.raises(BadProof):
        verify_consistency(3, 3, b"\x00" * 32, b"\x01" * 32, [])

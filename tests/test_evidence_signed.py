"""Checkpoints and tree heads verify with the log's public key alone, and nothing else does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from service.evidence.errors import BadSignature, KeyFileError, MalformedEvidence, WrongLog
from service.evidence.keys import (
    SigningKey,
    generate_key_files,
    load_public_key,
    load_signing_key,
    public_key_path,
)
from service.evidence.merkle import (
    Tree,
    consistency_proof,
    inclusion_proof,
    leaf_data,
    leaf_hash,
    verify_consistency,
    verify_inclusion,
)
from service.evidence.signed import Checkpoint, TreeHead

VECTORS = json.loads(
    (Path(__file__).parent / "fixtures" / "evidence_vectors.json").read_text(encoding="utf-8")
)


def _vector_key() -> SigningKey:
    seed = bytes.fromhex(VECTORS["private_key_seed"])
    return SigningKey._of(Ed25519PrivateKey.from_private_bytes(seed))


def test_the_vectors_are_what_the_code_makes() -> None:
    key = _vector_key()
    assert key.public.raw.hex() == VECTORS["public_key_raw"]
    assert key.log_id == VECTORS["log_id"]
    assert key.public.pem().decode() == VECTORS["public_key_pem"]
    cp = VECTORS["checkpoint"]
    made = Checkpoint.sign(key, cp["match_id"], cp["seq"], cp["head"])
    assert made.to_json() == cp  # Ed25519 is deterministic: the same head, the same checkpoint
    leaves = [leaf_data(x["match_id"], x["seq"], x["head"]) for x in VECTORS["leaves"]]
    assert [leaf_hash(x).hex() for x in leaves] == [x["leaf_hash"] for x in VECTORS["leaves"]]
    tree = Tree([leaf_hash(x) for x in leaves])
    assert {str(n): tree.root(n).hex() for n in range(len(leaves) + 1)} == VECTORS["roots"]
    for p in VECTORS["inclusion"]:
        assert [h.hex() for h in inclusion_proof(tree, p["leaf_index"], p["tree_size"])] == p[
            "path"
        ]
        verify_inclusion(
            tree.leaves[p["leaf_index"]],
            p["leaf_index"],
            p["tree_size"],
            [bytes.fromhex(h) for h in p["path"]],
            tree.root(p["tree_size"]),
        )
    for p in VECTORS["consistency"]:
        assert [h.hex() for h in consistency_proof(tree, p["from_size"], p["to_size"])] == p["path"]
        verify_consistency(
            p["from_size"],
            p["to_size"],
            tree.root(p["from_size"]),
            tree.root(p["to_size"]),
            [bytes.fromhex(h) for h in p["path"]],
        )
    th = VECTORS["tree_head"]
    assert TreeHead.sign(key, th["tree_size"], tree.root(), th["timestamp_ms"]).to_json() == th


def test_the_signed_texts_are_the_documented_lines() -> None:
    assert Checkpoint.message("ab" * 32, "m1", 7, "cd" * 32) == (
        f"sniff/checkpoint/v1\n{'ab' * 32}\nm1\n7\n{'cd' * 32}\n".encode()
    )
    assert TreeHead.message("ab" * 32, 3, "ef" * 32, 1000) == (
        f"sniff/tree-head/v1\n{'ab' * 32}\n3\n{'ef' * 32}\n1000\n".encode()
    )


def test_a_checkpoint_verifies_with_its_key_only(tmp_path: Path) -> None:
    key = generate_key_files(tmp_path / "log.key")
    other = SigningKey.generate()
    cp = Checkpoint.sign(key, "0f1e2d3c4b5a6978", 12, "ab" * 32)
    public = load_public_key(public_key_path(tmp_path / "log.key"))
    Checkpoint.from_json(json.loads(json.dumps(cp.to_json()))).verify(public)
    with pytest.raises(WrongLog):
        cp.verify(other.public)
    forged = Checkpoint(other.log_id, cp.match_id, cp.seq, cp.head, cp.signature)
    with pytest.raises(BadSignature):
        forged.verify(other.public)
    for changed in (
        Checkpoint(cp.log_id, cp.match_id, 13, cp.head, cp.signature),
        Checkpoint(cp.log_id, "0f1e2d3c4b5a6979", cp.seq, cp.head, cp.signature),
        Checkpoint(cp.log_id, cp.match_id, cp.seq, "ac" + "ab" * 31, cp.signature),
        Checkpoint(
            cp.log_id, cp.match_id, cp.seq, cp.head, bytes([cp.signature[0] ^ 1]) + cp.signature[1:]
        ),
    ):
        with pytest.raises(BadSignature):
            changed.verify(public)


def test_a_tree_head_with_any_field_changed_does_not_verify() -> None:
    key = SigningKey.generate()
    th = TreeHead.sign(key, 5, b"\x07" * 32, 1_700_000_000_000)
    th.verify(key.public)
    obj = th.to_json()
    for field, value in (("tree_size", 6), ("timestamp_ms", 1), ("root_hash", "08" * 32)):
        with pytest.raises(BadSignature):
            TreeHead.from_json({**obj, field: value}).verify(key.public)


@pytest.mark.parametrize(
    "change",
    [
        {"type": "tree_head"},
        {"seq": -1},
        {"seq": True},
        {"seq": 2**64},
        {"head": "AB" * 32},
        {"head": "ab" * 31},
        {"signature": "00"},
        {"match_id": "a b"},
        {"extra": 1},
    ],
)
def test_a_malformed_checkpoint_is_refused_by_name(change: dict[str, Any]) -> None:
    cp = Checkpoint.sign(SigningKey.generate(), "m", 1, "ab" * 32).to_json()
    with pytest.raises(MalformedEvidence):
        Checkpoint.from_json({**cp, **change})


def test_a_key_file_is_never_overwritten_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "k"
    key = generate_key_files(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_signing_key(path).log_id == key.log_id
    with pytest.raises(KeyFileError, match="never overwritten"):
        generate_key_files(path)


def test_a_key_file_of_the_wrong_kind_is_refused(tmp_path: Path) -> None:
    generate_key_files(tmp_path / "k")
    with pytest.raises(KeyFileError, match="private key"):
        load_public_key(tmp_path / "k")
    with pytest.raises(KeyFileError):
        load_signing_key(tmp_path / "k.pub")
    (tmp_path / "junk").write_text("not a key")
    with pytest.raises(KeyFileError):
        load_public_key(tmp_path / "junk")
    with pytest.raises(KeyFileError, match="cannot read"):
        load_signing_key(tmp_path / "missing")

"""Signed statements of the log: checkpoints (a match's head) and tree heads (the tree's root).

Each is a short UTF-8 text, one field per line, each line ending in a newline,
beginning with a line that names the kind and version; its Ed25519 signature
covers exactly those bytes. Why text and not JSON: nothing to canonicalise,
so any language signs and verifies the same bytes with a string format.
The JSON forms (`to_json`/`from_json`) carry the same fields plus the
signature, for files and RPCs; docs/evidence.md states both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from .errors import MalformedEvidence, WrongLog
from .keys import PublicKey, SigningKey

__all__ = ["Checkpoint", "TreeHead"]

CHECKPOINT_DOMAIN: Final = "sniff/checkpoint/v1"
TREE_HEAD_DOMAIN: Final = "sniff/tree-head/v1"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX128 = re.compile(r"[0-9a-f]{128}")
_MATCH_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
_MAX_U64 = 2**64 - 1


def _hex64(obj: dict[str, Any], key: str, what: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not _HEX64.fullmatch(value):
        raise MalformedEvidence(f"{what}: `{key}` must be 64 lowercase hex digits")
    return value


def _uint(obj: dict[str, Any], key: str, what: str) -> int:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_U64:
        raise MalformedEvidence(f"{what}: `{key}` must be an integer from 0 to 2^64-1")
    return value


def _signature(obj: dict[str, Any], what: str) -> bytes:
    value = obj.get("signature")
    if not isinstance(value, str) or not _HEX128.fullmatch(value):
        raise MalformedEvidence(f"{what}: `signature` must be 128 lowercase hex digits")
    return bytes.fromhex(value)


def _check_keys(obj: Any, kind: str, keys: set[str]) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise MalformedEvidence(f"a {kind} is a JSON object")
    if obj.get("type") != kind:
        raise MalformedEvidence(f"not a {kind}: its `type` is {obj.get('type')!r}")
    missing, extra = keys - obj.keys(), obj.keys() - keys
    if missing or extra:
        raise MalformedEvidence(
            f"a {kind} has exactly the keys {sorted(keys)}"
            + (f"; missing {sorted(missing)}" if missing else "")
            + (f"; unknown {sorted(extra)}" if extra else "")
        )
    return obj


def _check_log(log_id: str, key: PublicKey, what: str) -> None:
    if log_id != key.log_id:
        raise WrongLog(f"{what} names log {log_id[:16]}…, not this key's log {key.log_id[:16]}…")


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The log's signed word that event `seq` of match `match_id` has hash `head`.

    Handed to every seat with each round end's and match end's head. No
    timestamp: the signature is deterministic, so the same head always gets
    the same checkpoint, and an export can make it again from the log (time
    comes from the tree heads).
    """

    log_id: str
    match_id: str
    seq: int
    head: str
    signature: bytes

    @staticmethod
    def message(log_id: str, match_id: str, seq: int, head: str) -> bytes:
        return f"{CHECKPOINT_DOMAIN}\n{log_id}\n{match_id}\n{seq}\n{head}\n".encode()

    @classmethod
    def sign(cls, key: SigningKey, match_id: str, seq: int, head: str) -> Checkpoint:
        message = cls.message(key.log_id, match_id, seq, head)
        return cls(key.log_id, match_id, seq, head, key.sign(message))

    def verify(self, key: PublicKey) -> None:
        """Raise WrongLog or BadSignature unless `key` signed this checkpoint."""
        _check_log(self.log_id, key, "the checkpoint")
        key.verify(self.signature, self.message(self.log_id, self.match_id, self.seq, self.head))

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "checkpoint",
            "log_id": self.log_id,
            "match_id": self.match_id,
            "seq": self.seq,
            "head": self.head,
            "signature": self.signature.hex(),
        }

    @classmethod
    def from_json(cls, obj: Any) -> Checkpoint:
        what = "checkpoint"
        obj = _check_keys(obj, what, {"type", "log_id", "match_id", "seq", "head", "signature"})
        match_id = obj["match_id"]
        if not isinstance(match_id, str) or not _MATCH_ID.fullmatch(match_id):
            raise MalformedEvidence(f"{what}: `match_id` is not a match id")
        return cls(
            _hex64(obj, "log_id", what),
            match_id,
            _uint(obj, "seq", what),
            _hex64(obj, "head", what),
            _signature(obj, what),
        )


@dataclass(frozen=True, slots=True)
class TreeHead:
    """The log's signed word that, at `timestamp_ms`, its tree of finished matches had
    `tree_size` leaves with root `root_hash` (a signed tree head, RFC 9162 §4.10)."""

    log_id: str
    tree_size: int
    root_hash: str
    timestamp_ms: int
    signature: bytes

    @staticmethod
    def message(log_id: str, tree_size: int, root_hash: str, timestamp_ms: int) -> bytes:
        return f"{TREE_HEAD_DOMAIN}\n{log_id}\n{tree_size}\n{root_hash}\n{timestamp_ms}\n".encode()

    @classmethod
    def sign(cls, key: SigningKey, tree_size: int, root: bytes, timestamp_ms: int) -> TreeHead:
        message = cls.message(key.log_id, tree_size, root.hex(), timestamp_ms)
        return cls(key.log_id, tree_size, root.hex(), timestamp_ms, key.sign(message))

    @property
    def root(self) -> bytes:
        return bytes.fromhex(self.root_hash)

    def verify(self, key: PublicKey) -> None:
        """Raise WrongLog or BadSignature unless `key` signed this tree head."""
        _check_log(self.log_id, key, "the tree head")
        key.verify(
            self.signature,
            self.message(self.log_id, self.tree_size, self.root_hash, self.timestamp_ms),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "tree_head",
            "log_id": self.log_id,
            "tree_size": self.tree_size,
            "root_hash": self.root_hash,
            "timestamp_ms": self.timestamp_ms,
            "signature": self.signature.hex(),
        }

    @classmethod
    def from_json(cls, obj: Any) -> TreeHead:
        what = "tree head"
        obj = _check_keys(
            obj,
            "tree_head",
            {"type", "log_id", "tree_size", "root_hash", "timestamp_ms", "signature"},
        )
        return cls(
            _hex64(obj, "log_id", what),
            _uint(obj, "tree_size", what),
            _hex64(obj, "root_hash", what),
            _uint(obj, "timestamp_ms", what),
            _signature(obj, what),
        )

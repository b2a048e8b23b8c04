"""One exception type per way evidence can fail, so a verifier can say which."""

from __future__ import annotations


class EvidenceError(Exception):
    """Base of every error raised by `service.evidence`: the evidence does not verify."""


class KeyFileError(EvidenceError):
    """A key file is missing, unreadable, or not an Ed25519 key of the expected kind."""


class BadSignature(EvidenceError):
    """A signature is not the key's over the signed text (or is malformed)."""


class WrongLog(EvidenceError):
    """Signed by another log: its log id is not the key's."""


class BadProof(EvidenceError):
    """A Merkle inclusion or consistency proof does not lead to the tree head's root."""


class MalformedEvidence(EvidenceError):
    """A checkpoint, tree head or proof is not in the documented form."""

"""Ed25519 signing keys for the log, and the log id they name.

Why Ed25519: small keys and signatures, deterministic signatures (the same
text signed twice gives the same bytes, so a checkpoint made again at export
time equals the one a player kept), and a verifier in every language's
standard library (Node's `crypto` included). The log id is the SHA-256 of the
raw 32-byte public key, as a Certificate Transparency log's id is the hash of
its key: a tree head or checkpoint names the key that must verify it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from .errors import BadSignature, KeyFileError

__all__ = [
    "PublicKey",
    "SigningKey",
    "generate_key_files",
    "load_public_key",
    "load_signing_key",
    "log_id_of",
    "public_key_path",
]

SIGNATURE_BYTES = 64


def log_id_of(raw_public_key: bytes) -> str:
    """The log id: SHA-256 of the raw 32-byte Ed25519 public key, 64 lowercase hex digits."""
    return hashlib.sha256(raw_public_key).hexdigest()


@dataclass(frozen=True, slots=True)
class PublicKey:
    """A log's public key: all a verifier needs."""

    key: Ed25519PublicKey
    raw: bytes
    log_id: str

    @classmethod
    def from_raw(cls, raw: bytes) -> PublicKey:
        if len(raw) != 32:
            raise KeyFileError(f"an Ed25519 public key is 32 bytes, not {len(raw)}")
        return cls(Ed25519PublicKey.from_public_bytes(raw), raw, log_id_of(raw))

    def verify(self, signature: bytes, message: bytes) -> None:
        """Raise BadSignature unless `signature` is this key's over `message`."""
        if len(signature) != SIGNATURE_BYTES:
            raise BadSignature(f"a signature is {SIGNATURE_BYTES} bytes, not {len(signature)}")
        try:
            self.key.verify(signature, message)
        except InvalidSignature:
            raise BadSignature("the signature is not this key's over the signed text") from None

    def pem(self) -> bytes:
        return self.key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


@dataclass(frozen=True, slots=True)
class SigningKey:
    """The service's private key: it signs checkpoints and tree heads."""

    key: Ed25519PrivateKey
    public: PublicKey

    @classmethod
    def generate(cls) -> SigningKey:
        return cls._of(Ed25519PrivateKey.generate())

    @classmethod
    def _of(cls, key: Ed25519PrivateKey) -> SigningKey:
        raw = key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        return cls(key, PublicKey.from_raw(raw))

    @property
    def log_id(self) -> str:
        return self.public.log_id

    def sign(self, message: bytes) -> bytes:
        return self.key.sign(message)

    def pem(self) -> bytes:
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def public_key_path(private_path: Path) -> Path:
    """Where `sniff keygen` puts the public key beside the private one: `KEY.pub`."""
    return private_path.with_name(private_path.name + ".pub")


def generate_key_files(path: Path) -> SigningKey:
    """Write a new key: `path` (PKCS#8 PEM, mode 0600) and `path.pub` (SPKI PEM).

    Refuses to overwrite either file: a lost signing key cannot be replaced,
    and a replaced one would make every earlier signature another log's.
    """
    pub = public_key_path(path)
    for existing in (path, pub):
        if existing.exists():
            raise KeyFileError(f"{existing} exists: a key file is never overwritten")
    key = SigningKey.generate()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise KeyFileError(f"cannot create {path}: {exc.strerror}") from exc
    with os.fdopen(fd, "wb") as handle:
        handle.write(key.pem())
        handle.flush()
        os.fsync(handle.fileno())
    try:
        with open(pub, "xb") as handle:
            handle.write(key.public.pem())
    except OSError as exc:
        raise KeyFileError(f"cannot create {pub}: {exc.strerror}") from exc
    return key


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise KeyFileError(f"cannot read the key file {path}: {exc.strerror}") from exc


def load_signing_key(path: Path) -> SigningKey:
    """The Ed25519 private key in `path` (PKCS#8 PEM, unencrypted)."""
    data = _read(path)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"{path} is not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path} holds a {type(key).__name__}, not an Ed25519 private key")
    return SigningKey._of(key)


def load_public_key(path: Path) -> PublicKey:
    """The Ed25519 public key in `path` (SPKI PEM); a private key file is refused."""
    data = _read(path)
    if b"PRIVATE KEY" in data:
        raise KeyFileError(f"{path} holds a private key: give the public key (KEY.pub)")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"{path} is not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{path} holds a {type(key).__name__}, not an Ed25519 public key")
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return PublicKey(key, raw, log_id_of(raw))

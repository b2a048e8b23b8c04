"""What `sniff serve` checks before it creates anything, and how a failed start is told.

Every check here runs before the event log is opened (and so before its
file can be created) and before gRPC is asked to bind: a start that cannot
happen changes nothing, prints one line naming the real cause, and lets no
line of gRPC's own logging through.
"""

from __future__ import annotations

import binascii
import errno
import os
import re
from pathlib import Path

from analysis.cli.errors import Misuse

_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n(.*?)-----END \1-----", re.DOTALL)


def pem_blocks(data: bytes) -> list[tuple[str, bytes]]:
    """The PEM blocks of a file: (label, decoded DER bytes) each, in order.

    ValueError names what is wrong: no block at all, or a block whose body
    is not base64. Headers inside a block (RFC 1421's `Proc-Type: ...`, the
    mark of an encrypted key) are kept out of the body.
    """
    blocks = []
    for match in _PEM_BLOCK.finditer(data):
        label = match.group(1).decode("ascii")
        lines = [line.strip() for line in match.group(2).splitlines()]
        if any(b":" in line for line in lines):
            if any(line.startswith(b"Proc-Type:") and b"ENCRYPTED" in line for line in lines):
                label = f"ENCRYPTED {label}"
            lines = lines[lines.index(b"") + 1 :] if b"" in lines else []
        body = b"".join(lines)
        try:
            der = binascii.a2b_base64(body, strict_mode=True)
        except binascii.Error:
            raise ValueError(f"its {label} block is not base64") from None
        if not der:
            raise ValueError(f"its {label} block is empty")
        blocks.append((label, der))
    if not blocks:
        raise ValueError("it holds no PEM block (-----BEGIN ...-----)")
    return blocks


def _read(path: str, what: str, option: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise Misuse(f"{option} {path}: cannot read the {what}: {e.strerror or e}") from None


def check_tls_files(cert_file: str, key_file: str) -> tuple[bytes, bytes]:
    """The certificate chain and private key, each read once and checked; Misuse if unusable.

    Both must be readable PEM (parsed here, without any package), the
    chain's blocks certificates, the key one unencrypted private key; then
    the standard library's OpenSSL loads the pair, which also finds a key
    that does not belong to the certificate.
    """
    cert = _read(cert_file, "certificate chain", "--tls-cert")
    key = _read(key_file, "private key", "--tls-key")
    try:
        labels = [label for label, _ in pem_blocks(cert)]
    except ValueError as e:
        raise Misuse(f"--tls-cert {cert_file} is not a PEM certificate chain: {e}") from None
    if any(label != "CERTIFICATE" for label in labels) or not labels:
        other = next(label for label in labels if label != "CERTIFICATE")
        raise Misuse(
            f"--tls-cert {cert_file} is not a PEM certificate chain: it holds a {other} block"
        )
    try:
        keys = [label for label, _ in pem_blocks(key) if label.endswith("PRIVATE KEY")]
    except ValueError as e:
        raise Misuse(f"--tls-key {key_file} is not a PEM private key: {e}") from None
    if not keys:
        raise Misuse(f"--tls-key {key_file} is not a PEM private key: it holds no key block")
    if any(label.startswith("ENCRYPTED") for label in keys):
        raise Misuse(f"--tls-key {key_file} is encrypted: the service needs an unencrypted key")
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert_file, key_file, password=lambda: b"")
    except ssl.SSLError as e:
        reason = (e.reason or str(e)).replace("_", " ").lower()
        raise Misuse(f"--tls-cert {cert_file} with --tls-key {key_file}: {reason}") from None
    except OSError as e:
        raise Misuse(f"--tls-cert/--tls-key: {e.strerror or e}") from None
    return cert, key


def check_address(host: str, port: int) -> None:
    """Refuse, before anything is created, an address the service could not listen on.

    Binds a plain socket to each address the host names, as the server
    would: when none can be bound, the OS's own reason is the refusal (the
    port in use, a privileged port, an address not of this machine). The
    server binds whichever it can, so one address that binds is enough.
    """
    import socket  # only `sniff serve` asks: no other command loads it

    try:
        infos = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as e:
        raise Misuse(f"cannot listen on {host}:{port}: {e.strerror}") from None
    failures: list[OSError] = []
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
                return
            except OSError as e:
                failures.append(e)
    if not failures:
        return
    raise Misuse(f"cannot listen on {host}:{port}: {_bind_reason(failures[0], port)}")


def _bind_reason(e: OSError, port: int) -> str:
    if e.errno == errno.EADDRINUSE:
        return "the port is in use by another process"
    text = e.strerror or os.strerror(e.errno or 0)
    if e.errno in (errno.EACCES, errno.EPERM) and 0 < port < 1024:
        return f"{text} (ports below 1024 need privileges; pick a port from 1024 up)"
    return text


def startup_failure(exc: Exception, address: str, db_path: str) -> Misuse | None:
    """The one-line refusal of a service that could not start, or None for an unexpected error.

    The log cannot be opened (a path that cannot be created, a file that is
    not a DuckDB database or not a Sniff event log, a log another process
    holds), or the server cannot bind its address after all (taken between
    the check and the bind).
    """
    from service.storage import StorageError

    if isinstance(exc, OSError) and "could not bind" in str(exc):  # grpc's refusal to bind
        return Misuse(f"cannot listen on {address}: the address is in use or not available here")
    if isinstance(exc, StorageError | OSError):
        text = str(exc)
        return Misuse(text if db_path in text else f"{db_path}: {text}")
    if isinstance(exc, RuntimeError) and "bind" in str(exc).lower():
        return Misuse(f"cannot listen on {address}: the address is in use or not available here")
    return None

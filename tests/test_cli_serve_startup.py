"""`sniff serve` checks what it can before it creates anything, and names the real cause.

A certificate or key that is not usable PEM, a key that is not the
certificate's, an address the OS will not bind: each is one `Error:` line
with exit status 2, no line of gRPC's own logging, and no log file created.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.cli.errors import Misuse
from analysis.cli.startup import check_tls_files, pem_blocks
from tests.service_helpers import self_signed_certificate

SNIFF = [sys.executable, "-m", "analysis.cli"]


def serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SNIFF, "serve", "--db", str(tmp_path / "log.duckdb"), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def refused(result: subprocess.CompletedProcess[str], tmp_path: Path, *words: str) -> str:
    """Exit 2, one `Error:` line naming `words`, and nothing created beside the inputs."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: "), lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert not any(p.name.startswith("log.duckdb") for p in tmp_path.iterdir())
    return lines[0]


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    return self_signed_certificate(tmp_path)


def test_a_certificate_that_is_not_pem_is_refused_before_the_log_is_created(
    tmp_path: Path, pair: tuple[Path, Path]
) -> None:
    _, key = pair
    junk = tmp_path / "cert.txt"
    junk.write_text("this is not a certificate\n")
    line = refused(
        serve(tmp_path, "--port", "0", "--tls-cert", str(junk), "--tls-key", str(key)),
        tmp_path,
        "--tls-cert",
        "not a PEM certificate chain",
    )
    assert "bind" not in line


def test_a_key_given_as_the_certificate_or_a_certificate_as_the_key_is_refused(
    tmp_path: Path, pair: tuple[Path, Path]
) -> None:
    cert, key = pair
    refused(
        serve(tmp_path, "--port", "0", "--tls-cert", str(key), "--tls-key", str(key)),
        tmp_path,
        "PRIVATE KEY block",
    )
    refused(
        serve(tmp_path, "--port", "0", "--tls-cert", str(cert), "--tls-key", str(cert)),
        tmp_path,
        "--tls-key",
        "not a PEM private key",
    )


def test_a_key_of_another_certificate_is_refused(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    cert, _ = pair
    _, other_key = self_signed_certificate(tmp_path, "other")
    refused(
        serve(tmp_path, "--port", "0", "--tls-cert", str(cert), "--tls-key", str(other_key)),
        tmp_path,
        "mismatch",
    )


def test_a_certificate_that_cannot_be_read_is_refused(
    tmp_path: Path, pair: tuple[Path, Path]
) -> None:
    _, key = pair
    missing = tmp_path / "none.pem"
    refused(
        serve(tmp_path, "--port", "0", "--tls-cert", str(missing), "--tls-key", str(key)),
        tmp_path,
        "cannot read",
        "No such file",
    )


def test_a_good_pair_passes_the_checks(pair: tuple[Path, Path]) -> None:
    cert, key = pair
    assert check_tls_files(str(cert), str(key)) == (cert.read_bytes(), key.read_bytes())


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (b"", "no PEM block"),
        (b"-----BEGIN CERTIFICATE-----\n@@@@\n-----END CERTIFICATE-----\n", "not base64"),
        (b"-----BEGIN CERTIFICATE-----\n\n-----END CERTIFICATE-----\n", "empty"),
    ],
)
def test_pem_blocks_say_what_is_wrong(text: bytes, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        pem_blocks(text)


def test_an_encrypted_key_is_refused_by_name(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    cert, _ = pair
    key = tmp_path / "locked.key"
    key.write_text(
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"
    )
    with pytest.raises(Misuse, match="encrypted"):
        check_tls_files(str(cert), str(key))


def test_a_port_in_use_is_one_line_naming_it(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        refused(serve(tmp_path, "--port", str(port)), tmp_path, f"127.0.0.1:{port}", "in use")


def test_an_address_not_of_this_machine_is_refused_with_the_os_reason(tmp_path: Path) -> None:
    line = refused(serve(tmp_path, "--host", "192.0.2.1", "--port", "0"), tmp_path, "192.0.2.1")
    assert os.strerror(99) in line or "assign" in line.lower() or "not available" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root may bind a privileged port")
def test_a_privileged_port_says_why(tmp_path: Path) -> None:
    refused(serve(tmp_path, "--port", "80"), tmp_path, ":80", "Permission denied", "1024")


def test_a_bind_the_os_refuses_gives_its_reason_and_the_privileged_port_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As an unprivileged user sees it (the suite may run as root, who may bind port 80)."""
    import errno

    from analysis.cli.startup import check_address

    def refuse(self: socket.socket, address: object) -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(socket.socket, "bind", refuse)
    with pytest.raises(Misuse) as refused_bind:
        check_address("127.0.0.1", 80)
    message = refused_bind.value.message
    assert message.startswith("cannot listen on 127.0.0.1:80: Permission denied")
    assert "below 1024" in message

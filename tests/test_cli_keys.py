"""`sniff keygen` makes a key and never overwrites one; `sniff serve` refuses a bad signing
key file in one line, exit 2, before it opens anything."""

from __future__ import annotations

import stat
from pathlib import Path

from click.testing import CliRunner

from analysis.cli.main import cli
from service.evidence.keys import load_public_key, load_signing_key


def test_keygen_writes_the_key_and_its_public_key_and_prints_the_log_id(tmp_path: Path) -> None:
    key = tmp_path / "sniff.key"
    result = CliRunner().invoke(cli, ["keygen", str(key)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == load_public_key(Path(f"{key}.pub")).log_id
    assert load_signing_key(key).log_id == result.stdout.strip()
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_keygen_never_overwrites_a_key(tmp_path: Path) -> None:
    key = tmp_path / "sniff.key"
    CliRunner().invoke(cli, ["keygen", str(key)])
    before = key.read_bytes()
    result = CliRunner().invoke(cli, ["keygen", str(key)])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert key.read_bytes() == before


def test_serve_refuses_a_bad_signing_key_file_before_opening_anything(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    public = tmp_path / "sniff.key"
    CliRunner().invoke(cli, ["keygen", str(public)])
    for bad in (tmp_path / "missing.key", Path(f"{public}.pub"), tmp_path / "text.key"):
        if bad.name == "text.key":
            bad.write_text("not a key\n")
        result = CliRunner().invoke(
            cli, ["serve", "--port", "0", "--signing-key-file", str(bad), "--db", str(db)]
        )
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, lines
        assert str(bad) in lines[0]
        assert not db.exists()

"""`sniff export --evidence` writes a bundle of a log's signed tree and `sniff verify` checks it.

The log is one `sniff simulate` wrote; its evidence tables (`tree_leaves`,
`tree_heads`, `checkpoints`, which a service with a signing key keeps) are made
in the fixture (tests/evidence_helpers.py) until the service writes them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner, Result

from analysis.bundle import layout
from analysis.cli.main import cli
from tests.evidence_helpers import add_evidence_tables, key_of, make_bundle, served_log

pytestmark = pytest.mark.slow


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("cli-evidence")
    db = tmp / "log.duckdb"
    done = run(
        "simulate", "--events", "--db", str(db), "--matches", "4", "--seats", "2", "--workers", "1"
    )
    assert done.exit_code == 0, done.output
    key = key_of(7)
    pub = tmp / "sniff.key.pub"
    pub.write_bytes(key.public.pem())
    add_evidence_tables(db, key, leave_out=1)  # the last match ended after the last tree head
    with duckdb.connect(str(db), read_only=True) as con:
        ids = [r[0] for r in con.execute("SELECT match_id FROM matches ORDER BY 1").fetchall()]
    bare = tmp / "bare.duckdb"
    done = run(
        "simulate",
        "--events",
        "--db",
        str(bare),
        "--matches",
        "1",
        "--seats",
        "2",
        "--workers",
        "1",
    )
    assert done.exit_code == 0, done.output
    bundle = tmp / "small"
    make_bundle(bundle, 2)
    return {"tmp": tmp, "db": db, "pub": pub, "bare": bare, "bundle": bundle, "ids": ids}


def test_export_evidence_writes_every_match_of_the_signed_tree_and_verify_accepts_it(
    world: dict[str, Any],
) -> None:
    target = world["tmp"] / "all"
    done = run(
        "export",
        "--db",
        str(world["db"]),
        "--evidence",
        str(target),
        "--public-key",
        str(world["pub"]),
    )
    assert done.exit_code == 0, done.output
    assert "3 matches" in done.stdout
    assert "left out: 1 finished matches" in done.stderr
    checked = run("verify", str(target), "--public-key", str(world["pub"]), "--workers", "1")
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.startswith("verified: 3 matches")
    assert "not proven:" in checked.stdout


def test_export_evidence_of_named_matches(world: dict[str, Any]) -> None:
    ids = world["ids"]
    target = world["tmp"] / "named"
    done = run(
        "export", ids[1], ids[0], "--db", str(world["db"]), "--evidence", str(target),
        "--public-key", str(world["pub"]),
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    matches = (target / layout.MATCHES).read_text().splitlines()
    assert [json.loads(m)["match_id"] for m in matches] == sorted(ids[:2])
    assert run("verify", str(target), "--workers", "1").exit_code == 0


def test_export_refuses_a_match_not_in_the_signed_tree(world: dict[str, Any]) -> None:
    target = world["tmp"] / "late"
    done = run(
        "export", world["ids"][-1], "--db", str(world["db"]), "--evidence", str(target),
        "--public-key", str(world["pub"]),
    )  # fmt: skip
    assert done.exit_code == 2
    assert "ended after the last signed tree head" in done.stderr
    assert not target.exists()


def test_export_refuses_a_log_without_a_signed_tree_head_and_says_how_to_get_one(
    world: dict[str, Any],
) -> None:
    done = run(
        "export", "--db", str(world["bare"]), "--evidence", str(world["tmp"] / "x"),
        "--public-key", str(world["pub"]),
    )  # fmt: skip
    assert done.exit_code == 2
    assert "--signing-key-file" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_export_refuses_a_key_that_signed_no_tree_head(world: dict[str, Any]) -> None:
    other = world["tmp"] / "other.pub"
    other.write_bytes(key_of(9).public.pem())
    done = run(
        "export", "--db", str(world["db"]), "--evidence", str(world["tmp"] / "y"),
        "--public-key", str(other),
    )  # fmt: skip
    assert done.exit_code == 2
    assert "no tree head signed by log" in done.stderr


def test_export_refuses_an_existing_directory_that_is_not_empty(world: dict[str, Any]) -> None:
    done = run(
        "export", "--db", str(world["db"]), "--evidence", str(world["bundle"]),
        "--public-key", str(world["pub"]),
    )  # fmt: skip
    assert done.exit_code == 2
    assert "not empty" in done.stderr


def test_export_evidence_needs_the_public_key(world: dict[str, Any]) -> None:
    done = run("export", "--db", str(world["db"]), "--evidence", str(world["tmp"] / "z"))
    assert done.exit_code == 2
    assert "--public-key" in done.stderr


def test_verify_exit_status_is_0_verified_1_evidence_fails_2_misuse(
    world: dict[str, Any], tmp_path: Path
) -> None:
    assert run("verify", str(world["bundle"]), "--workers", "1").exit_code == 0
    broken = tmp_path / "broken"
    shutil.copytree(world["bundle"], broken)
    data = bytearray((broken / layout.EVENTS).read_bytes())
    data[500] ^= 1
    (broken / layout.EVENTS).write_bytes(bytes(data))
    failed = run("verify", str(broken), "--workers", "1")
    assert failed.exit_code == 1
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("Error: events.jsonl:")
    as_json = run("verify", str(broken), "--workers", "1", "--format", "jsonl")
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["file"] == "events.jsonl"
    assert run("verify", str(tmp_path / "none")).exit_code == 2
    assert run("verify", str(tmp_path)).exit_code == 2
    key = tmp_path / "k.pub"
    key.write_text("not a key")
    assert run("verify", str(world["bundle"]), "--public-key", str(key)).exit_code == 2


def test_verify_jsonl_says_what_was_proven(world: dict[str, Any]) -> None:
    done = run("verify", str(world["bundle"]), "--workers", "1", "--format", "jsonl")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["verified"] is True
    assert report["matches"] == 2
    assert "no match was left out" in report["not_proven"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("served")
    key = key_of(11)
    ids, in_play = served_log(tmp / "log.duckdb", key)
    pub = tmp / "key.pub"
    pub.write_bytes(key.public.pem())
    return {"tmp": tmp, "db": tmp / "log.duckdb", "pub": pub, "ids": ids, "in_play": in_play}


def test_a_signing_services_log_exports_a_bundle_that_verifies_seat_entropy_included(
    served: dict[str, Any],
) -> None:
    target = served["tmp"] / "bundle"
    done = run(
        "export", "--db", str(served["db"]), "--evidence", str(target),
        "--public-key", str(served["pub"]),
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    matches = [
        json.loads(m)["match_id"] for m in (target / layout.MATCHES).read_text().splitlines()
    ]
    assert matches == sorted(served["ids"])
    assert (target / layout.CHECKPOINTS).read_text().count("\n") > 3
    checked = run("verify", str(target), "--workers", "1", "--public-key", str(served["pub"]))
    assert checked.exit_code == 0, checked.output


def test_export_refuses_a_match_still_in_play(served: dict[str, Any]) -> None:
    target = served["tmp"] / "in-play"
    done = run(
        "export", served["in_play"], "--db", str(served["db"]), "--evidence", str(target),
        "--public-key", str(served["pub"]),
    )  # fmt: skip
    assert done.exit_code == 2
    assert f"match {served['in_play']} is not finished" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not target.exists()

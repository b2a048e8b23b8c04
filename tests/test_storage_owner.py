"""The owner sidecar tells tools which live process holds a log file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.storage import EventLog, Owner, find_owner, owner_path, remove_owner, write_owner


@pytest.mark.slow
def test_advertising_writes_the_sidecar_and_close_removes_it(tmp_path: Path) -> None:
    db = tmp_path / "events.duckdb"
    with EventLog(db) as log:
        assert find_owner(db) is None
        log.advertise("127.0.0.1:50051")
        sidecar = json.loads(owner_path(db).read_text())
        assert (sidecar["pid"], sidecar["address"]) == (os.getpid(), "127.0.0.1:50051")
        owner = find_owner(db)
        assert owner is not None
        assert (owner.pid, owner.address) == (os.getpid(), "127.0.0.1:50051")
    assert not owner_path(db).exists()
    assert find_owner(db) is None


def test_a_sidecar_of_a_dead_process_is_ignored(tmp_path: Path) -> None:
    db = tmp_path / "events.duckdb"
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    owner_path(db).write_text(json.dumps({"pid": int(gone.stdout), "address": "127.0.0.1:1"}))
    assert find_owner(db) is None


def test_a_sidecar_whose_pid_now_names_another_process_is_ignored(tmp_path: Path) -> None:
    db = tmp_path / "events.duckdb"
    owner = write_owner(db, "127.0.0.1:2")
    assert find_owner(db) == owner
    if owner.started is None:
        return  # no /proc here: the start time cannot be checked
    stale = {"pid": os.getpid(), "address": "127.0.0.1:2", "started": owner.started - 1}
    owner_path(db).write_text(json.dumps(stale))
    assert find_owner(db) is None


def test_a_garbled_sidecar_is_no_owner(tmp_path: Path) -> None:
    db = tmp_path / "events.duckdb"
    for text in ["", "{", "[]", '{"pid": "1", "address": "x"}', '{"pid": 0, "address": "x"}']:
        owner_path(db).write_text(text)
        assert find_owner(db) is None


def test_another_process_sidecar_is_not_removed(tmp_path: Path) -> None:
    db = tmp_path / "events.duckdb"
    owner_path(db).write_text(json.dumps({"pid": 1, "address": "127.0.0.1:3"}))
    remove_owner(db)
    assert owner_path(db).exists()
    assert find_owner(db) == Owner(1, "127.0.0.1:3")  # pid 1 is alive

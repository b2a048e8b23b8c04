"""Shared fixtures, the test tiers and what an absent optional dependency does.

Tiers (the markers are registered in pyproject.toml; docs/testing.md):

- `bench`, `browser`, `go`, `node`, `ray` name a kind of test; every one of them is
  also `slow` (added below), so `pytest -m "not slow"` leaves them all out;
- `slow` marks any other test that takes more than about half a second on a loaded
  2-core machine (measured with `--durations=0`).

`pytest -m "not slow"` is the developer's quick run; plain `pytest` runs every
tier (scripts/check.sh, hence CI).

Hypothesis has two profiles: "ci" (HYPOTHESIS_PROFILE=ci, set by scripts/check.sh) runs
every property test's full example count; "dev", the default, a twentieth of it
(`tests.helpers.example_count`).

An optional dependency that is absent skips its tests with the reason and what
installs it (`tests.helpers.need`); with SNIFF_REQUIRE_ALL=1 (scripts/check.sh)
or CI=true it fails them instead, so CI cannot pass by skipping.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers import CI_EXAMPLES, DEV_EXAMPLES
from tests.service_helpers import Served, Service, free_port, serving, wait_serving

KINDS = ("bench", "browser", "go", "node", "ray")
"""Markers of a kind of test; each implies `slow`."""

settings.register_profile("ci", max_examples=CI_EXAMPLES)
settings.register_profile("dev", max_examples=DEV_EXAMPLES)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(kind) for kind in KINDS):
            item.add_marker(pytest.mark.slow)


# -- the service ---------------------------------------------------------------------------


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Service]:
    """A server of this process with its own new event log, for one test."""
    with serving(tmp_path / "log.duckdb") as service:
        yield service


@pytest.fixture(scope="module")
def shared_svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One server and event log for every test of a module that asks for it."""
    with serving(tmp_path_factory.mktemp("svc") / "log.duckdb") as service:
        yield service


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """`sniff serve` in a child process, its log at tmp_path/log.duckdb; killed after."""
    port = free_port()
    db = tmp_path / "log.duckdb"
    proc = subprocess.Popen(
        [sys.executable, "-m", "analysis.cli", "serve", "--port", str(port), "--db", str(db)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    address = f"127.0.0.1:{port}"
    try:
        wait_serving(address, proc=proc)
        yield Served(proc, address, db)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)

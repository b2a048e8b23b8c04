"""`--ray` on `sniff analyze`, `sniff stats sniff-timing --counterfactual` and `sniff tournament`
(#20, beyond one machine): a local Ray instance gives the same results as local workers for
the same seed. Each command runs as a subprocess (Ray's workers start from a clean process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from analysis.bot_matches import bot_records
from tests.helpers import need

pytestmark = [pytest.mark.ray, pytest.mark.slow]
SNIFF = [sys.executable, "-m", "analysis.cli"]
REPO = Path(__file__).resolve().parent.parent


def sniff(*args: str) -> str:
    done = subprocess.run(
        [*SNIFF, *args], cwd=REPO, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need("ray", "pip install -e '.[cluster]'")
    path = tmp_path_factory.mktemp("ray") / "m.jsonl"
    lines = [json.dumps(r) for r in bot_records(2, 3, 8, ("greedy", "random"), round_limit=2)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_analyze_on_ray_equals_local_workers(records: Path) -> None:
    args = ["analyze", "--records", str(records), "--rollouts", "6", "--format", "json"]
    local = json.loads(sniff(*args, "--no-store", "--workers", "2"))
    rayed = json.loads(sniff(*args, "--no-store", "--ray", "local"))
    assert rayed["decisions"] == local["decisions"]
    assert rayed["players"] == local["players"]
    assert local["decisions"]


def test_counterfactual_on_ray_equals_local_workers(records: Path) -> None:
    args = ["stats", "sniff-timing", "--records", str(records), "--counterfactual"]
    args += ["--rollouts", "6", "--format", "csv"]
    assert sniff(*args, "--ray", "local") == sniff(*args, "--workers", "2")


def test_tournament_on_ray_equals_local_workers(tmp_path: Path) -> None:
    need("ray", "pip install -e '.[cluster]'")
    args = ["tournament", "--bots", "greedy,random", "--deals", "6", "--round-limit", "1"]
    args += ["--target", "10000", "--format", "json"]

    def result(db: Path, *extra: str) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(sniff(*args, "--db", str(db), *extra))
        return {k: doc[k] for k in ("results", "head_to_head")}

    assert result(tmp_path / "ray.duckdb", "--ray", "local") == result(
        tmp_path / "local.duckdb", "--workers", "2"
    )

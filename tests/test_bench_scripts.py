"""Smoke tests of the benchmark scripts: each runs with --quick, exits 0 and prints its figures.

Speed is not asserted: these machines are shared and noisy, and the figures
are for people to read.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"


def run_script(name: str, *args: str, timeout: float) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / name), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_bench_engine_quick_prints_its_figures() -> None:
    out = run_script("bench_engine.py", "--quick", timeout=300)
    for seats in (2, 3, 4):
        assert re.search(rf"^\s+{seats}\s+\d+\.\d \(", out, re.MULTILINE), out
    for heading in ("matches/s wall", "us/action all in", "legal_moves() us", "apply() us"):
        assert heading in out, out
    assert "target: >= 300 matches/s with 2 seats" in out, out
    assert "target: ~10 us per action" in out, out


def test_bench_engine_profile_quick_lists_functions() -> None:
    out = run_script("bench_engine.py", "--profile", "--quick", timeout=300)
    assert "top 15 functions by own time" in out, out
    assert "apply" in out, out
    assert len(re.findall(r"^\s*\d+\.\d%", out, re.MULTILINE)) == 15, out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for server CPU")
def test_bench_service_quick_prints_its_figures() -> None:
    out = run_script("bench_service.py", "--quick", timeout=600)
    for rpc in ("Health/Check", "ApplyMove"):
        assert re.search(rf"^log on disk\s+{re.escape(rpc)}\s+1\s+\d", out, re.MULTILINE), out
        assert re.search(rf"^log on disk\s+{re.escape(rpc)}\s+8\s+\d", out, re.MULTILINE), out
    assert re.search(r"p50\(Apply\)/p50\(empty\), 1 client:\s+\d", out), out
    assert re.search(r"throughput\(Apply\)/throughput\(empty\), 8 clients:\s+\d", out), out
    assert "where the 1-client Apply p50 goes" in out, out
    assert re.search(r"OK\s+log on disk: action events in DuckDB == acknowledged applies", out)
    assert "OK   log on disk: server exits 0 after SIGTERM" in out, out
    assert "FAIL" not in out, out


def test_bench_stats_quick_prints_its_figures(tmp_path: Path) -> None:
    out = run_script("bench_stats.py", "--quick", "--cache", str(tmp_path), timeout=300)
    assert re.search(r"^\s+300\s+[\d,]+\s+[\d,]+\s+\d+\s+\d+\.\d+ \(", out, re.MULTILINE), out

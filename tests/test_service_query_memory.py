"""The Query RPC streams: a result far larger than the server's memory budget passes through
it in a few chunks' worth of memory.

Runs scripts/bench_query_server.py (a real server in a child process, a real
DuckDB file, 10 million rows, some 270 MB of Arrow IPC) and checks the
server's peak resident memory (VmHWM, Linux) against the issue's bound.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT_MB = 300
"""The server's peak resident memory allowed while the result streams."""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_ten_million_rows_stream_through_the_server_in_bounded_memory() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_query_server.py"), "--json"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    figures = json.loads(done.stdout.splitlines()[-1])
    assert figures["rows"] == 10_000_000
    assert figures["streamed_mb"] > LIMIT_MB * 0.8, "the result must dwarf the bound"
    assert figures["chunks"] > 100, "the result comes in many chunks, not one"
    assert figures["peak_rss_mb"] < LIMIT_MB, figures
    assert done.returncode == 0, done.stdout

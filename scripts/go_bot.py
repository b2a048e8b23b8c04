"""The Go sample bot (clients/go, `playbot`) as a benchmark client: a client whose own CPU cost
per decision is small, so that what a benchmark measures is the service and the protocol.

Built once per benchmark run by clients/go/build.sh (Go, protoc and the Go gRPC libraries
from the distribution: scripts/install_go.sh).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "clients" / "go" / "build.sh"
BUILD_TIMEOUT = 900.0


class GoBotFailed(RuntimeError):
    """The Go bot could not be built, or a run of it failed."""


def build(out: Path) -> Path:
    """Build the bot into `out` (a first build compiles the gRPC library: minutes)."""
    done = subprocess.run(
        ["bash", str(BUILD)],
        env={**os.environ, "PLAYBOT_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise GoBotFailed(f"clients/go/build.sh failed:\n{done.stdout}{done.stderr}")
    return Path(done.stdout.strip().splitlines()[-1])


def results(stdout: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A run's match lines and its summary (its last line); a ready line is left out."""
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    if not lines or "summary" not in lines[-1]:
        raise GoBotFailed(f"the Go bot printed no summary:\n{stdout}")
    return [r for r in lines[:-1] if "match_id" in r], lines[-1]["summary"]


def run(
    binary: Path, address: str, *args: str, timeout: float = 900.0
) -> subprocess.CompletedProcess[str]:
    """Run the bot to its end; a failed run raises GoBotFailed with its error."""
    done = subprocess.run(
        [str(binary), "-addr", address, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise GoBotFailed(f"the Go bot failed ({done.returncode}): {done.stderr}")
    return done


def children_cpu() -> float:
    """CPU seconds of this process's ended children (a Go bot's, once it has exited)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime

"""Peak memory of `sniff query` writing a large result, in every format.

Runs `sniff query "SELECT i, i*2, 'x'||i FROM range(N) t(i)" --format F` for
each of table, csv, json and jsonl, its output thrown away, and prints the
command's peak resident memory (the child's ru_maxrss): first from an event
log file no service holds, then through a `sniff serve` on 127.0.0.1 that
holds the same file (the query goes through its Query RPC), where the
service's own peak (VmHWM, since it started) is printed beside the client's.

    .venv/bin/python scripts/bench_query_memory.py               # 10,000,000 rows
    .venv/bin/python scripts/bench_query_memory.py --rows 100000 # a smoke run
    .venv/bin/python scripts/bench_query_memory.py --no-service  # the file only
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FORMATS = ("table", "csv", "json", "jsonl")
CEILING_MB = 300
"""The acceptance ceiling (issue 17) for 10 million rows from a file, in every format."""


def sniff_command() -> list[str]:
    """`sniff` as this interpreter runs it (the checkout's, whatever is on PATH)."""
    return [sys.executable, "-m", "analysis.cli"]


def peak_of_child(argv: list[str], env: dict[str, str]) -> tuple[int, float, int]:
    """Run argv with its output discarded: (exit status, seconds, peak RSS in MB).

    A fresh interpreter runs it, so RUSAGE_CHILDREN holds that one command's
    peak (the largest of the children it waited for, and it waits for one).
    """
    probe = (
        "import resource, subprocess, sys\n"
        "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
        "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv], env=env, capture_output=True, text=True, check=True
    )
    seconds = time.perf_counter() - started
    code, kib = done.stdout.split()
    return int(code), seconds, int(kib) // 1024


def service_peak_mb(pid: int) -> int:
    """A process's peak resident memory so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return -1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--no-service", action="store_true", help="Measure from the file only.")
    args = parser.parse_args()
    sql = f"SELECT i, i*2, 'x'||i FROM range({args.rows}) t(i)"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    worst = 0
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.duckdb")
        from service.storage import EventLog

        EventLog(db).close()
        print(f"sniff query {sql!r}: peak resident memory ({os.cpu_count()} cores)")
        print(f"{'where':<8} {'format':<6} {'exit':>4} {'seconds':>8} {'client MB':>9} service MB")
        for fmt in FORMATS:
            code, seconds, mb = peak_of_child(
                [*sniff_command(), "query", sql, "--format", fmt, "--db", db], env
            )
            worst = max(worst, mb)
            print(f"{'file':<8} {fmt:<6} {code:>4} {seconds:>8.1f} {mb:>9}")
        if not args.no_service:
            port = free_port()
            server = subprocess.Popen(
                [*sniff_command(), "serve", "--port", str(port), "--db", db, "--no-fsync"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                owner = Path(db + ".owner.json")
                deadline = time.monotonic() + 60
                while not owner.exists():
                    if server.poll() is not None or time.monotonic() > deadline:
                        err = server.stderr.read() if server.stderr is not None else ""
                        raise SystemExit(f"sniff serve did not start: {err}")
                    time.sleep(0.05)
                for fmt in FORMATS:
                    code, seconds, mb = peak_of_child(
                        [*sniff_command(), "query", sql, "--format", fmt, "--db", db], env
                    )
                    served = service_peak_mb(server.pid)
                    print(f"{'service':<8} {fmt:<6} {code:>4} {seconds:>8.1f} {mb:>9} {served:>10}")
            finally:
                server.send_signal(signal.SIGTERM)
                server.wait(timeout=60)
    print(f"worst client peak from the file: {worst} MB (ceiling {CEILING_MB} MB at 10M rows)")
    return 0 if worst <= CEILING_MB or args.rows != 10_000_000 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Peak memory of the server while a large Query result streams through it.

Starts the real service (`service.rpc.server.serve`) in a child process on a
fresh DuckDB file and an ephemeral 127.0.0.1 port (bench_service's
`start_server`), runs one Query whose result is
far larger than the memory it may take (by default
`SELECT i, i*2, 'x'||i FROM range(10000000)`, some 300 MB of Arrow IPC),
reads the stream chunk by chunk without keeping it, and reports the server's
peak resident memory (VmHWM from /proc) before and after. The Query RPC must
stream: what the server holds is a few chunks, whatever the result's size.

    .venv/bin/python scripts/bench_query_server.py                  # 10 M rows
    .venv/bin/python scripts/bench_query_server.py --rows 1000000   # quicker
    .venv/bin/python scripts/bench_query_server.py --json           # one JSON line

Exits 1 when the peak exceeds --limit-mb (default 300). Linux only (/proc).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.bench_service import start_server  # noqa: E402
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb  # noqa: E402
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc  # noqa: E402
from service.storage import find_owner  # noqa: E402


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set size so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def measure(rows: int) -> dict[str, float | int]:
    """Stream the query once through a fresh server; its figures."""
    sql = f"SELECT i, i*2 AS j, 'x' || i AS s FROM range({rows}) t(i)"
    with tempfile.TemporaryDirectory(prefix="sniff-query-memory-") as tmp:
        db = Path(tmp) / "events.duckdb"
        server = start_server("query memory", Path(tmp), str(db))
        try:
            owner = find_owner(db)
            if owner is None or not owner.query_token:
                raise SystemExit("the service wrote no owner file with its query token")
            idle = peak_rss_mb(server.proc.pid)
            request = pb.QueryRequest(sql=sql, token=owner.query_token)
            chunks = streamed = 0
            started = time.perf_counter()
            with grpc.insecure_channel(server.address) as channel:
                stub = sniff_pb2_grpc.SniffServiceStub(channel)
                for reply in stub.Query(request, timeout=600):
                    chunks += 1
                    streamed += len(reply.arrow_ipc)
            seconds = time.perf_counter() - started
            peak = peak_rss_mb(server.proc.pid)
        finally:
            server.stop()
    return {
        "rows": rows,
        "chunks": chunks,
        "streamed_mb": round(streamed / 2**20, 1),
        "seconds": round(seconds, 2),
        "idle_peak_rss_mb": round(idle, 1),
        "peak_rss_mb": round(peak, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--limit-mb", type=float, default=300.0)
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args(argv)
    figures = measure(args.rows)
    if args.json:
        print(json.dumps(figures))
    else:
        print(
            f"Query of {figures['rows']:,} rows: {figures['streamed_mb']} MB of Arrow IPC in "
            f"{figures['chunks']} chunks, {figures['seconds']} s\n"
            f"server peak RSS: {figures['idle_peak_rss_mb']} MB idle, "
            f"{figures['peak_rss_mb']} MB after the query (limit {args.limit_mb:.0f} MB)"
        )
    return 0 if figures["peak_rss_mb"] <= args.limit_mb else 1


if __name__ == "__main__":
    sys.exit(main())

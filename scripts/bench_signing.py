"""What signing costs an ApplyMove in the hub and the event log alone, signed against unsigned.

Why this and not only `bench_service.py --sign`: a served ApplyMove costs the server about a
millisecond, most of it gRPC, and two servers run one after the other differ by more than
signing costs; here one process applies the same moves with and without a signing key,
alternating, and compares the CPU per call (fsync on, a fresh log file each run).

    .venv/bin/python scripts/bench_signing.py --runs 7 --matches 12
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def one(signed: bool, matches: int) -> float:
    """CPU seconds per ApplyMove of `matches` 2-seat matches (first legal move each time)."""
    from service.evidence.keys import SigningKey
    from service.hub import Hub
    from service.storage.log import EventLog

    with tempfile.TemporaryDirectory() as tmp:
        log = EventLog(Path(tmp) / "bench.duckdb", signer=SigningKey.generate() if signed else None)
        hub = Hub(log)
        calls = 0
        began = time.process_time()
        for i in range(matches):
            created = hub.create(2, seed=i)
            match_id, tokens = created.match_id, created.seat_tokens
            while True:
                match = hub.get(match_id).match
                if match.winner is not None:
                    break
                if match.phase.name != "PLAYING":
                    hub.deal(match_id, created.observer_token, None)
                    continue
                seat = match.turn
                move = hub.legal_moves(match_id, tokens[seat], seat)[0]
                hub.apply(match_id, tokens[seat], seat, move, match.move_count)
                calls += 1
        log.close()
        return (time.process_time() - began) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--matches", type=int, default=12)
    parser.add_argument("--one", choices=["signed", "unsigned"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(one(args.one == "signed", args.matches))
        return
    figures: dict[str, list[float]] = {"unsigned": [], "signed": []}
    for _ in range(args.runs):
        for kind in ("unsigned", "signed"):  # each in a fresh process
            out = subprocess.run(
                [sys.executable, __file__, "--one", kind, "--matches", str(args.matches)],
                capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            figures[kind].append(float(out))
    ratios = [s / u for s, u in zip(figures["signed"], figures["unsigned"], strict=True)]
    for kind, values in figures.items():
        us = [round(v * 1e6) for v in values]
        print(f"{kind:>8}: {statistics.median(us)} us CPU per ApplyMove (runs: {us})")
    print(f"signed / unsigned, median of the paired ratios: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()

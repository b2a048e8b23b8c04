"""A tournament through the arena against the same tournament in process.

One run starts `sniff serve --arena-key-file` in a child process on a fresh
DuckDB file (fsync on, as `sniff serve` runs; `--no-fsync` for its
`--no-fsync`) and two `sniff arena-bot` processes (alice plays greedy, bob
random), then times `sniff tournament --remote alice,bob`'s play
(`analysis.tournament_remote.play_remote`: `--deals-at-once` deals, 8 by
default, each with its two rotations, at once; every match created, seated
and logged by the service) and the same tournament in process (`analysis.tournament.play`,
one worker, its events kept in memory and not written). 2 seats, one round
a match. Both play the same moves (the bots are seeded alike), which each
run checks on every match's actions and scores.

It reports matches and actions per second, wall time over the tournament,
for each way, and the arena's time per match; the medians over `--runs`
runs (default 3).

    .venv/bin/python scripts/bench_arena.py                 # ~1 minute
    .venv/bin/python scripts/bench_arena.py --quick         # smoke run
    .venv/bin/python scripts/bench_arena.py --deals 100 --json

Exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.tournament import SeedsCommitment, Settings, play  # noqa: E402
from analysis.tournament_remote import ArenaServer, play_remote  # noqa: E402
from service.arena import ARENA_KEY_HEADER  # noqa: E402
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb  # noqa: E402
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc  # noqa: E402

KEY = "bench-arena-key"
REMOTE = {"alice": "greedy", "bob": "random"}
"""The arena bots and the bots they play: what is measured is the arena, not thinking."""
SEED = 1
START_SECONDS = 60.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(condition: Any, what: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"bench_arena: {what} did not happen in {START_SECONDS:g} s")
        time.sleep(0.1)


def _bots_listed(address: str) -> bool:
    with grpc.insecure_channel(address) as channel:
        stub = sniff_pb2_grpc.SniffServiceStub(channel)
        try:
            reply = stub.ListArenaBots(
                pb.ListArenaBotsRequest(), metadata=[(ARENA_KEY_HEADER, KEY)], timeout=2.0
            )
        except grpc.RpcError:
            return False
    return {b.name for b in reply.bots} >= set(REMOTE)


def arena_run(deals: int, sync: bool, workdir: Path, at_once: int) -> tuple[float, list[Any]]:
    """Seconds of the tournament's play through the arena, and its matches."""
    sniff = str(Path(sys.executable).parent / "sniff")
    key_file = workdir / "arena.key"
    key_file.write_text(KEY)
    port = _free_port()
    address = f"127.0.0.1:{port}"
    serve = [sniff, "serve", "--host", "127.0.0.1", "--port", str(port)]
    serve += ["--db", str(workdir / "arena.duckdb"), "--arena-key-file", str(key_file)]
    if not sync:
        serve.append("--no-fsync")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen(serve, env=env, stdout=subprocess.DEVNULL)]
    try:
        for name, kind in REMOTE.items():
            bot = [sniff, "arena-bot", "--server", address, "--name", name, "--bot", kind]
            procs.append(
                subprocess.Popen(
                    [*bot, "--arena-key-file", str(key_file)],
                    env=env,
                    stderr=subprocess.DEVNULL,
                )
            )
        _wait(lambda: _bots_listed(address), "the arena bots' registration")
        settings = Settings(
            tuple(REMOTE), 2, deals, SEED, round_limit=1, target=10_000, remote=tuple(REMOTE)
        )
        committed = SeedsCommitment.new(settings)
        started = time.perf_counter()
        played = play_remote(
            settings, tuple(REMOTE), ArenaServer(address, KEY), committed, deals_at_once=at_once
        )
        return time.perf_counter() - started, played
    finally:
        for proc in reversed(procs):
            proc.send_signal(signal.SIGINT if proc is not procs[0] else signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def in_process_run(deals: int) -> tuple[float, list[Any]]:
    settings = Settings(tuple(REMOTE.values()), 2, deals, SEED, round_limit=1, target=10_000)
    started = time.perf_counter()
    played, _ = play(settings, workers=1)
    return time.perf_counter() - started, played


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-fsync", action="store_true", help="sniff serve --no-fsync")
    parser.add_argument(
        "--deals-at-once", type=int, default=8, help="sniff tournament --deals-at-once"
    )
    parser.add_argument("--quick", action="store_true", help="5 deals, 1 run: a smoke run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    deals, runs = (5, 1) if args.quick else (args.deals, args.runs)
    rows: dict[str, list[dict[str, float]]] = {"arena": [], "in process": []}
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="bench_arena.") as tmp:
            arena_s, arena = arena_run(deals, not args.no_fsync, Path(tmp), args.deals_at_once)
        local_s, local = in_process_run(deals)
        got = [(p.players, p.scores, p.actions) for p in arena]
        want = [
            (tuple({v: k for k, v in REMOTE.items()}[n] for n in p.players), p.scores, p.actions)
            for p in local
        ]
        if got != want:
            print(
                "bench_arena: the arena's matches are not those played in process", file=sys.stderr
            )
            return 1
        actions = sum(p.actions for p in local)
        for label, seconds in (("arena", arena_s), ("in process", local_s)):
            rows[label].append(
                {
                    "seconds": seconds,
                    "matches_per_s": len(local) / seconds,
                    "actions_per_s": actions / seconds,
                    "ms_per_match": 1000 * seconds / len(local),
                }
            )
    summary = {
        label: {key: statistics.median(r[key] for r in runs_of) for key in runs_of[0]}
        for label, runs_of in rows.items()
    }
    doc = {
        "deals": deals,
        "matches": 2 * deals,
        "runs": runs,
        "fsync": not args.no_fsync,
        "deals_at_once": args.deals_at_once,
        "bots": REMOTE,
        "median": summary,
    }
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    print(
        f"{deals} deals x 2 rotations = {2 * deals} matches, 2 seats, 1 round each; "
        f"median of {runs} runs; fsync {'on' if doc['fsync'] else 'off'}; "
        f"{args.deals_at_once} deals at once through the arena"
    )
    print(f"{'way':<12}{'matches/s':>12}{'actions/s':>12}{'ms/match':>12}")
    for label, s in summary.items():
        print(
            f"{label:<12}{s['matches_per_s']:>12.1f}{s['actions_per_s']:>12.0f}"
            f"{s['ms_per_match']:>12.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

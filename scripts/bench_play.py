"""Bot matches over the Play stream against today's unary loop, on the same server.

One run starts the real service (`service.rpc.server.serve`, bench_service's
`start_server`) in a child process on a fresh DuckDB file (fsync on, as
`sniff serve` runs; `--no-fsync` for `sniff serve --no-fsync`) and plays the
same 2-seat bot matches (the same seeds, so the same actions) two ways:

- **unary**: `analysis/remote.py`'s `play_remote_match`, GetState,
  ListLegalMoves and ApplyMove per action (DealRound per round), one thread
  and channel per match;
- **play**: `analysis/remote_play.py`'s `play_matches`, every seat of every
  match on one Play stream: one message each way per decision.

each with 1 match at a time (4 of them, one after another) and with
`--matches` (default 16) at once. With `--client go` both ways are driven by
the Go sample bot instead (clients/go, `playbot -mode unary` with one
goroutine per match on one connection, and `playbot -mode play`), built
first by clients/go/build.sh: a client whose own CPU per action is small,
so the figures are the service's and the protocol's. It reports
actions per second (wall time from the first CreateMatch to the last match's
end), the server's CPU per action (from /proc) and the client's, and the
ratio play/unary; the medians over `--runs` runs (default 3), the two ways
alternating within a run so that a busy machine disturbs both alike. Every
match is checked: both ways must play the same number of actions.

    .venv/bin/python scripts/bench_play.py                 # ~1-2 minutes
    .venv/bin/python scripts/bench_play.py --quick         # smoke run
    .venv/bin/python scripts/bench_play.py --runs 5 --json
    .venv/bin/python scripts/bench_play.py --client go     # the Go bot as the client

Exits 1 when a check fails, or when play is not at least --aim (default 3)
times as fast as unary in each setting (not with --quick).
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.remote import PlayedMatch, play_remote_match  # noqa: E402
from analysis.remote_play import play_matches  # noqa: E402
from scripts import go_bot  # noqa: E402
from scripts.bench_service import Server, bare_syncs, median_us, start_server  # noqa: E402
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc  # noqa: E402

BOTS = ("greedy", "random")
"""Cheap bots: what is measured is the service and the protocol, not the bots' thinking."""
CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]  # one connection per channel
ALONE = 4
"""The "1 match" setting plays this many matches, one at a time: a single match is over
in a fraction of a second, too short to measure on a shared machine."""
SYNC_PROBES = 200
"""Bare appends + fdatasync timed each run (fsync on), on the disk of the run's log."""
RECORD_BYTES = 300
"""About one action's journal record."""


@dataclass(frozen=True)
class Measured:
    way: str
    matches: int
    actions: int
    seconds: float
    server_cpu: float
    client_cpu: float

    @property
    def rate(self) -> float:
        return self.actions / self.seconds

    @property
    def server_us(self) -> float:
        return self.server_cpu / self.actions * 1e6

    @property
    def client_us(self) -> float:
        return self.client_cpu / self.actions * 1e6


def stub_for(address: str) -> tuple[grpc.Channel, sniff_pb2_grpc.SniffServiceStub]:
    channel = grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
    return channel, sniff_pb2_grpc.SniffServiceStub(channel)


def unary(address: str, batches: list[list[int]], round_limit: int | None) -> list[PlayedMatch]:
    """Each batch at once, one after another."""
    return [p for seeds in batches for p in unary_batch(address, seeds, round_limit)]


def unary_batch(address: str, seeds: list[int], round_limit: int | None) -> list[PlayedMatch]:
    """One thread and channel per match, each the unary loop of analysis/remote.py."""
    played: list[PlayedMatch | None] = [None] * len(seeds)
    errors: list[BaseException] = []

    def one(i: int) -> None:
        channel, stub = stub_for(address)
        try:
            played[i] = play_remote_match(stub, 2, BOTS, seeds[i], round_limit=round_limit)
        except BaseException as exc:
            errors.append(exc)
        finally:
            channel.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(seeds))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return [p for p in played if p is not None]


def over_play(address: str, batches: list[list[int]], round_limit: int | None) -> list[PlayedMatch]:
    """Each batch at once, one after another."""
    return [p for seeds in batches for p in over_play_batch(address, seeds, round_limit)]


def over_play_batch(address: str, seeds: list[int], round_limit: int | None) -> list[PlayedMatch]:
    """Every seat of every match on one Play stream (analysis/remote_play.py)."""
    channel, stub = stub_for(address)
    try:
        return play_matches(stub, 2, BOTS, seeds, round_limit=round_limit)
    finally:
        channel.close()


def with_go(
    binary: Path, mode: str, address: str, batches: list[list[int]], round_limit: int | None
) -> list[PlayedMatch]:
    """The same matches played by the Go bot in one process: `-batch` matches at a time, each
    batch one Play stream (`play`) or one goroutine per match (`unary`). The batches are of
    consecutive seeds, as the bot seeds its matches."""
    seeds = [s for b in batches for s in b]
    assert seeds == list(range(seeds[0], seeds[0] + len(seeds))), seeds
    args = ["-mode", mode, "-seats", "2", "-seed", str(seeds[0]), "-matches", str(len(seeds))]
    args += ["-batch", str(len(batches[0])), "-policy", ",".join(BOTS)]
    if round_limit is not None:
        args += ["-round-limit", str(round_limit)]
    lines, _ = go_bot.results(go_bot.run(binary, address, *args).stdout)
    return [
        PlayedMatch(r["match_id"], r["seats"], r["winner"], r["scores"], r["rounds"], r["moves"])
        for r in lines
    ]


Way = Callable[[str, list[list[int]], int | None], list[PlayedMatch]]


def measure(
    server: Server, way: str, play: Way, seeds: list[int], round_limit: int | None
) -> tuple[Measured, list[int]]:
    """Play `seeds` at once; with one match a setting, `ALONE` matches one after another."""
    batches = [seeds] if len(seeds) > 1 else [[seeds[0] + i] for i in range(ALONE)]
    # The client's CPU: this process's, and a Go bot's (a child that has exited).
    client0 = time.process_time() + go_bot.children_cpu()
    cpu0, t0 = server.cpu_seconds(), time.perf_counter()
    played = play(server.address, batches, round_limit)
    seconds = time.perf_counter() - t0
    cpu1, client1 = server.cpu_seconds(), time.process_time() + go_bot.children_cpu()
    moves = [p.moves for p in played]
    return Measured(way, len(seeds), sum(moves), seconds, cpu1 - cpu0, client1 - client0), moves


def one_run(
    workdir: Path,
    run: int,
    sizes: list[int],
    round_limit: int | None,
    sync: bool,
    ways: list[tuple[str, Way]],
) -> tuple[list[Measured], float | None]:
    """Every way at every size on one server; and with fsync, the median µs of a bare append
    + fdatasync on the same disk, timed before the server starts (the one-match floor)."""
    fsync_us = median_us(bare_syncs(workdir, SYNC_PROBES, RECORD_BYTES)) if sync else None
    server = start_server(f"play run {run}", workdir, str(workdir / f"run{run}.duckdb"), sync=sync)
    results: list[Measured] = []
    try:
        for n in sizes:
            seeds = [1000 * run + 100 * n + i for i in range(n)]
            moves: dict[str, list[int]] = {}
            for way, play in reversed(ways) if run % 2 else ways:
                m, moves[way] = measure(server, way, play, seeds, round_limit)
                results.append(m)
                print(
                    f"  run {run} {n:>2} match(es) {way:>5}: {m.actions:>5} actions "
                    f"{m.rate:>7.0f}/s, server cpu {m.server_us:>5.0f} us/action, "
                    f"client cpu {m.client_us:>5.0f} us/action",
                    flush=True,
                )
            if moves["unary"] != moves["play"]:
                raise SystemExit(f"the two ways played different matches: {moves}")
    finally:
        status = server.stop()
        if status != 0:
            raise SystemExit(f"the server exited with {status}")
    if fsync_us is not None:
        print(f"  run {run} a bare {RECORD_BYTES}-byte append + fdatasync: {fsync_us:.0f} us")
    return results, fsync_us


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--matches", type=int, default=16, help="concurrent matches")
    parser.add_argument("--aim", type=float, default=3.0, help="play/unary at least this")
    parser.add_argument("--no-fsync", action="store_true", help="sniff serve --no-fsync")
    parser.add_argument(
        "--client", choices=("python", "go"), default="python", help="who drives both ways"
    )
    parser.add_argument("--quick", action="store_true", help="1 run, 4 matches of 2 rounds")
    parser.add_argument("--json", action="store_true", help="also print one JSON line")
    opts = parser.parse_args(argv)
    runs, sizes, round_limit = opts.runs, [1, opts.matches], None
    if opts.quick:
        runs, sizes, round_limit = 1, [1, 4], 2
    results: list[Measured] = []
    syncs: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench_play_") as tmp:
        ways: list[tuple[str, Way]] = [("unary", unary), ("play", over_play)]
        if opts.client == "go":
            binary = go_bot.build(Path(tmp) / "playbot")
            ways = [(w, functools.partial(with_go, binary, w)) for w in ("unary", "play")]
        for run in range(runs):
            measured, fsync_us = one_run(
                Path(tmp), run, sizes, round_limit, not opts.no_fsync, ways
            )
            results += measured
            syncs += [] if fsync_us is None else [fsync_us]
    print(
        f"\nmedians of {runs} run(s), 2-seat matches, bots {'/'.join(BOTS)}, {opts.client} client:"
    )
    head = ("matches", "way", "actions/s", "server us/action", "client us/action")
    print(" ".join(f"{h:>{w}}" for h, w in zip(head, (8, 6, 10, 17, 17), strict=True)))
    summary: dict[str, dict[str, float]] = {}
    ok = True
    for n in sizes:
        row: dict[str, float] = {}
        for way in ("unary", "play"):
            ms = [m for m in results if m.matches == n and m.way == way]
            rate = statistics.median(m.rate for m in ms)
            server_us = statistics.median(m.server_us for m in ms)
            client_us = statistics.median(m.client_us for m in ms)
            row |= {
                f"{way}_rate": rate,
                f"{way}_server_us": server_us,
                f"{way}_client_us": client_us,
            }
            print(f"{n:>8} {way:>6} {rate:>10.0f} {server_us:>17.0f} {client_us:>17.0f}")
        ratios = [
            p.rate / u.rate
            for u, p in zip(
                [m for m in results if m.matches == n and m.way == "unary"],
                [m for m in results if m.matches == n and m.way == "play"],
                strict=True,
            )
        ]
        row["ratio"] = statistics.median(ratios)
        spread = f"{min(ratios):.1f}-{max(ratios):.1f}"
        print(f"{n:>8}  play/unary: {row['ratio']:.1f}x ({spread}; aim: at least {opts.aim:g}x)")
        if not opts.quick and row["ratio"] < opts.aim:
            ok = False
        summary[str(n)] = row
    doc: dict[str, object] = {"runs": runs, "fsync": not opts.no_fsync, "matches": summary}
    if syncs:
        # One match waits for one fdatasync per action whichever way it plays, so Play at
        # its best (no other cost) plays 1/fsync actions a second.
        fsync_us = statistics.median(syncs)
        unary_us = 1e6 / summary["1"]["unary_rate"]
        play_us = 1e6 / summary["1"]["play_rate"]
        doc |= {"fsync_us": fsync_us, "one_match_ceiling": unary_us / fsync_us}
        print(
            f"       1  per action: unary {unary_us:.0f} us, play {play_us:.0f} us, of which a "
            f"bare fdatasync {fsync_us:.0f} us: play/unary at most {unary_us / fsync_us:.1f}x"
        )
    if opts.json:
        print(json.dumps(doc | {"client": opts.client}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

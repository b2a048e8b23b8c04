"""Many remote bots at once over Play: the round trip each bot sees, and the server's limit.

Every bot is one seat of a 2-seat match with its own Play stream (one
`analysis/remote_play.py` `play_stream` of one seat, in its own thread),
against the real service (`service.rpc.server.serve`, bench_service's
`start_server`) in a child process on a fresh DuckDB file. The bots run in
`--clients` client processes (default 4; fewer when there are fewer
matches), each with one channel: a client process's streams share its GIL
and its gRPC poller, so with all 64 bots in one process the client's own
hand-offs would be part of what is measured; four processes on 2 cores
keep each one's share small (the clients' CPU is printed: together it is a
fraction of the server's).

**Round trip**, per decision, as the bot sees it: from the moment the bot's
stream hands it the decision (`on_update`) to the moment the same stream
hands it the `answered` reply to its answer. It holds the bot's choice (the
bots are greedy/random: about 10 µs, printed as "bot"), the send,
the server's read, apply (durable in the log: fdatasync with fsync on) and
write, and the client's read. Deal decisions count as decisions too.

Settings, each run (a server of its own on a fresh log for each):

- `fsync` and `no-fsync`: each of `--bots` (default 2 16 64), fsync on (as
  `sniff serve` runs) and off (`sniff serve --no-fsync`);
- `shared`: the largest number, each client process's seats all on one
  stream (as bench_play.py plays): what the per-stream cost is;
- `paced`: the largest number, every bot thinking 0.5 to 1.5 times
  `--think-ms` (default 100; a sleep, seeded per seat) before each move:
  a load below the server's limit. Its round trip leaves the sleep out;
- `2 servers`: the largest number split between two server processes, each
  on its own log (fsync on), against `fsync` of the same run.

With `--client go` the bots are the Go sample bot's instead (clients/go,
`playbot -bots N`, built first by clients/go/build.sh): one process per
server whose goroutines play one seat each on its own Play stream, over
`--clients` connections, the same bots (the Go bot's policies choose as
sniff.bots does), each round trip timed the same way; its own CPU per
decision is small, so the figures are the service's. Only `fsync`,
`no-fsync` and `2 servers` run with it.

Every client process creates its matches first; the clock (and the
server's CPU, from /proc) starts once all are created and stops when the
last match is over. Reported: median, p90, p99 and max round trip,
actions/s (moves, as in bench_play.py; deals are not counted), server CPU
per action; medians over `--runs` runs (default 3).

    .venv/bin/python scripts/bench_play_many.py                 # ~5 minutes
    .venv/bin/python scripts/bench_play_many.py --quick         # smoke run
    .venv/bin/python scripts/bench_play_many.py --runs 5 --json
    .venv/bin/python scripts/bench_play_many.py --client go --bots 64 --runs 3

Exits 1 when a match did not end or a bot's answer was refused (the client
process fails); the 20 ms p99 aim is printed, not enforced.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.bot_matches import bot_players  # noqa: E402
from analysis.remote_play import MatchSeen, StreamSeat, play_stream  # noqa: E402
from scripts import go_bot  # noqa: E402
from scripts.bench_service import CLK_TCK, Server, start_server  # noqa: E402
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb  # noqa: E402
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc  # noqa: E402
from sniff import Bot, Move  # noqa: E402
from sniff.bots import PlayerView  # noqa: E402

BOTS = ("greedy", "random")
"""Cheap bots: what is measured is the service and the protocol, not the bots' thinking."""
SEATS = 2
AIM_P99_MS = 20.0


class TimedBot:
    """A bot whose choices are timed, so that the bot's share of a round trip is known; with
    `think` it first sleeps between half and one and a half times that long, drawn from its
    own seeded generator (a bot that thinks, without taking a core; drawn, so that bots that
    began together do not go on answering in step)."""

    def __init__(self, bot: Bot, spent: list[float], think: float, seed: int) -> None:
        self.name = bot.name
        self._bot = bot
        self._spent = spent
        self._think = think
        self._rng = random.Random(seed)
        self.thought = 0.0
        """The last choice's thinking (its sleep) not yet taken out of a round trip."""

    def choose(self, view: PlayerView) -> Move:
        if self._think:
            asleep = time.perf_counter()
            time.sleep(self._think * self._rng.uniform(0.5, 1.5))
            self.thought = time.perf_counter() - asleep  # as slept, oversleeping included
        t0 = time.perf_counter()
        move = self._bot.choose(view)
        self._spent.append(time.perf_counter() - t0)
        return move


@dataclass(frozen=True)
class ClientResult:
    """What one client process measured: its round trips, bot times, moves and clock."""

    round_trips: list[float]
    bot_seconds: list[float]
    moves: int
    started: float
    ended: float
    cpu: float


def play_timed(
    stub: sniff_pb2_grpc.SniffServiceStub,
    seats: list[StreamSeat],
    round_trips: list[float],
) -> list[MatchSeen]:
    """`seats` on one Play stream; the round trip of each of their decisions appended, less
    the think time of a paced bot."""
    decided: dict[tuple[str, int], float] = {}  # when each seat's pending decision came
    bots: dict[tuple[str, int], TimedBot] = {}

    def on_update(update: pb.PlayUpdate) -> None:
        now = time.perf_counter()
        key = (update.match_id, update.seat)
        kind = update.WhichOneof("kind")
        if kind == "opened":
            bot = seats[update.opened.open_index].bot
            assert isinstance(bot, TimedBot)
            bots[key] = bot
        elif kind == "decision":
            decided[key] = now
        elif kind == "answered" and key in decided:
            bot = bots[key]
            round_trips.append(now - decided.pop(key) - bot.thought)
            bot.thought = 0.0

    seen = play_stream(stub, seats, on_update=on_update)
    if decided:
        raise RuntimeError(f"decisions got no `answered` before the stream ended: {decided}")
    return [seen[m] for m in dict.fromkeys(s.match_id for s in seats)]


def client_process(
    address: str,
    seeds: list[int],
    round_limit: int | None,
    shared: bool,
    think: float,
    go: Any,
    conn: Connection,
) -> None:
    """Create this client's matches, say so, wait for `go`, then play every seat at once:
    each on its own stream, or (`shared`) all on one."""
    try:
        channel = grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        stub = sniff_pb2_grpc.SniffServiceStub(channel)
        round_trips: list[float] = []
        bot_seconds: list[float] = []
        seats: list[StreamSeat] = []
        for seed in seeds:
            request = pb.CreateMatchRequest(seat_count=SEATS, seed=seed, variant="VARIANT_AMERICAN")
            if round_limit is not None:
                request.round_limit = round_limit
            created = stub.CreateMatch(request)
            players = bot_players(SEATS, BOTS, seed)
            for i, (token, bot) in enumerate(zip(created.seat_tokens, players, strict=True)):
                timed = TimedBot(bot, bot_seconds, think, seed * 8 + i)
                seats.append(StreamSeat(created.match_id, token, timed, resume_move_count=0))
        conn.send("ready")
        go.wait()
        seen: list[MatchSeen] = []
        errors: list[BaseException] = []

        def one(on_stream: list[StreamSeat]) -> None:
            try:
                seen.extend(play_timed(stub, on_stream, round_trips))
            except BaseException as exc:
                errors.append(exc)

        streams = [seats] if shared else [[s] for s in seats]
        cpu0, t0 = time.process_time(), time.perf_counter()
        threads = [threading.Thread(target=one, args=(s,)) for s in streams]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        t1, cpu1 = time.perf_counter(), time.process_time()
        channel.close()
        if errors:
            raise errors[0]
        if any(m.end is None for m in seen):
            raise RuntimeError("a stream ended before its match did")
        moves = sum(m.move_count for m in seen) // (1 if shared else SEATS)  # seen per stream
        conn.send(ClientResult(round_trips, bot_seconds, moves, t0, t1, cpu1 - cpu0))
    except BaseException as exc:
        conn.send(f"client failed: {exc!r}")
        raise


ThreadTimes = dict[tuple[int, int], tuple[float, float]]
"""(pid, tid) -> (CPU seconds, seconds runnable but waiting for a core: schedstat's run delay)."""


def threads_of(servers: list[Server]) -> ThreadTimes:
    """The server processes' threads so far, from /proc."""
    times: ThreadTimes = {}
    for server in servers:
        pid = server.proc.pid
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    wait = int(f.read().split()[1]) / 1e9
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue  # a thread that ended meanwhile
            times[pid, int(tid)] = ((int(fields[11]) + int(fields[12])) / CLK_TCK, wait)
    return times


@dataclass(frozen=True)
class Threads:
    """Where a server's time went between two ThreadTimes: the busiest thread's CPU and wait
    for a core (the event loop's thread, where gRPC's asyncio and the Play sessions run; with
    two servers, the busier of the two), and all threads' wait (the hub's pool, the log's
    writer, DuckDB's and gRPC's own threads too)."""

    busiest_cpu: float
    busiest_wait: float
    all_wait: float

    @classmethod
    def between(cls, before: ThreadTimes, after: ThreadTimes) -> Threads:
        delta = {
            key: (cpu - before.get(key, (0.0, 0.0))[0], wait - before.get(key, (0.0, 0.0))[1])
            for key, (cpu, wait) in after.items()
        }
        busiest = max(delta.values(), default=(0.0, 0.0))
        return cls(busiest[0], busiest[1], sum(wait for _, wait in delta.values()))


@dataclass(frozen=True)
class Measured:
    setting: str
    bots: int
    clients: int
    actions: int
    seconds: float
    server_cpu: float
    client_cpu: float
    threads: Threads
    round_trips: list[float]
    bot_seconds: list[float]

    @property
    def rate(self) -> float:
        return self.actions / self.seconds

    @property
    def server_us(self) -> float:
        return self.server_cpu / self.actions * 1e6

    @property
    def client_us(self) -> float:
        return self.client_cpu / self.actions * 1e6

    def quantile_ms(self, q: float) -> float:
        ordered = sorted(self.round_trips)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3

    def figures(self) -> dict[str, float]:
        return {
            "p50_ms": self.quantile_ms(0.5),
            "p90_ms": self.quantile_ms(0.9),
            "p99_ms": self.quantile_ms(0.99),
            "max_ms": max(self.round_trips) * 1e3,
            "rate": self.rate,
            "server_us": self.server_us,
            "client_us": self.client_us,
            "bot_us": statistics.median(self.bot_seconds) * 1e6,
            "loop_us": self.threads.busiest_cpu / self.actions * 1e6,
            "loop_wait_us": self.threads.busiest_wait / self.actions * 1e6,
            "wait_us": self.threads.all_wait / self.actions * 1e6,
        }


GO_TIMEOUT = 900.0
"""A Go bot run's bound: only a hang takes this long."""


def measure_go(
    binary: Path,
    setting: str,
    servers: list[Server],
    bots: int,
    clients: int,
    seed0: int,
    rl: int | None,
) -> Measured:
    """`bots` Go bots, split evenly over `servers`, one Go process for each (`playbot -bots`,
    its streams over `clients` connections): each creates its matches and says so, the clock
    starts, each is told to go, and each reports its round trips and its own clock and CPU."""
    share = bots // len(servers)
    procs: list[subprocess.Popen[str]] = []
    for i, server in enumerate(servers):
        args = ["-addr", server.address, "-bots", str(share), "-conns", str(clients)]
        args += ["-seed", str(seed0 + i * share // SEATS), "-policy", ",".join(BOTS), "-wait"]
        if rl is not None:
            args += ["-round-limit", str(rl)]
        procs.append(
            subprocess.Popen(
                [str(binary), *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for p in procs:
        assert p.stdout is not None
        if json.loads(p.stdout.readline() or "{}") != {"ready": True}:
            raise SystemExit(f"the Go bot did not get ready: {p.communicate()[1]}")
    cpu0, threads0 = sum(s.cpu_seconds() for s in servers), threads_of(servers)
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    outputs = [p.communicate(timeout=GO_TIMEOUT) for p in procs]
    cpu1, threads1 = sum(s.cpu_seconds() for s in servers), threads_of(servers)
    summaries = []
    for p, (out, err) in zip(procs, outputs, strict=True):
        if p.returncode != 0:
            raise SystemExit(f"the Go bot failed ({p.returncode}): {err}")
        summaries.append(go_bot.results(out)[1])
    return Measured(
        setting,
        bots,
        clients,
        sum(s["moves"] for s in summaries),
        max(s["seconds"] for s in summaries),
        cpu1 - cpu0,
        sum(s["cpu_seconds"] for s in summaries),
        Threads.between(threads0, threads1),
        [x for s in summaries for x in s["round_trips"]],
        [s["bot_seconds_median"] for s in summaries],
    )


def measure(
    setting: str,
    servers: list[Server],
    bots: int,
    clients: int,
    seed0: int,
    rl: int | None,
    *,
    shared: bool = False,
    think: float = 0.0,
    go_bot_binary: Path | None = None,
) -> Measured:
    """`bots` bots (bots / 2 matches) in `clients` processes, spread over `servers` in turn;
    with `go_bot_binary`, that Go bot's (measure_go)."""
    if go_bot_binary is not None:
        return measure_go(go_bot_binary, setting, servers, bots, clients, seed0, rl)
    matches = bots // SEATS
    clients = max(len(servers), min(clients, matches))
    ctx = mp.get_context("spawn")  # no fork of a process that may hold gRPC state
    go = ctx.Event()
    procs: list[tuple[Any, Connection]] = []
    for c in range(clients):
        seeds = [seed0 + i for i in range(c, matches, clients)]
        mine, theirs = ctx.Pipe()
        address = servers[c % len(servers)].address
        p = ctx.Process(target=client_process, args=(address, seeds, rl, shared, think, go, theirs))
        p.start()
        procs.append((p, mine))
    for _, conn in procs:
        if (said := conn.recv()) != "ready":
            raise SystemExit(str(said))
    cpu0, threads0 = sum(s.cpu_seconds() for s in servers), threads_of(servers)
    go.set()
    results: list[ClientResult] = []
    for p, conn in procs:
        got = conn.recv()
        if not isinstance(got, ClientResult):
            raise SystemExit(str(got))
        results.append(got)
        p.join()
    cpu1, threads1 = sum(s.cpu_seconds() for s in servers), threads_of(servers)
    seconds = max(r.ended for r in results) - min(r.started for r in results)
    return Measured(
        setting,
        bots,
        clients,
        sum(r.moves for r in results),
        seconds,
        cpu1 - cpu0,
        sum(r.cpu for r in results),
        Threads.between(threads0, threads1),
        [x for r in results for x in r.round_trips],
        [x for r in results for x in r.bot_seconds],
    )


def report(m: Measured, run: int) -> None:
    f = m.figures()
    print(
        f"  run {run} {m.setting:>12} {m.bots:>3} bots ({m.clients} clients): "
        f"{m.actions:>5} actions {f['rate']:>6.0f}/s, round trip p50 {f['p50_ms']:5.1f} "
        f"p90 {f['p90_ms']:5.1f} p99 {f['p99_ms']:5.1f} max {f['max_ms']:6.1f} ms, "
        f"server cpu {f['server_us']:>5.0f} us/action (event loop {f['loop_us']:>4.0f}), "
        f"waiting for a core {f['wait_us']:>5.0f} (event loop {f['loop_wait_us']:>4.0f}), "
        f"clients cpu {f['client_us']:>4.0f}, bot {f['bot_us']:.0f} us",
        flush=True,
    )


def on_one_server(
    workdir: Path, run: int, setting: str, n: int, clients: int, rl: int | None, **kw: Any
) -> Measured:
    """One measurement against a server of its own on a fresh log (fsync on unless the
    setting is no-fsync)."""
    label = f"run {run} {setting} {n}"
    sync = setting != "no-fsync"
    server = start_server(label, workdir, str(workdir / f"{label}.duckdb"), sync=sync)
    try:
        m = measure(setting, [server], n, clients, 10_000 * run + 100 * n, rl, **kw)
    finally:
        if server.stop() != 0:
            raise SystemExit(f"the {label} server did not exit cleanly")
    report(m, run)
    return m


def one_run(
    workdir: Path,
    run: int,
    sizes: list[int],
    clients: int,
    rl: int | None,
    think: float,
    go: Path | None = None,
) -> list[Measured]:
    """Every setting once: fsync on and off at each size, then at the largest size one
    stream per client, paced bots (not with the Go bot), and two servers on two logs."""
    results = [
        on_one_server(workdir, run, setting, n, clients, rl, go_bot_binary=go)
        for setting in ("fsync", "no-fsync")
        for n in sizes
    ]
    n = max(sizes)
    if go is None:
        results.append(on_one_server(workdir, run, "shared", n, clients, rl, shared=True))
        results.append(on_one_server(workdir, run, "paced", n, clients, rl, think=think))
    servers = [
        start_server(f"run {run} shard {i}", workdir, str(workdir / f"r{run}s{i}.duckdb"))
        for i in range(2)
    ]
    try:
        m = measure("2 servers", servers, n, clients, 10_000 * run + 100 * n, rl, go_bot_binary=go)
    finally:
        if [s.stop() for s in servers] != [0, 0]:
            raise SystemExit("a shard server did not exit cleanly")
    report(m, run)
    results.append(m)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bots", type=int, nargs="+", default=[2, 16, 64], help="even counts")
    parser.add_argument("--clients", type=int, default=4, help="client processes at most")
    parser.add_argument("--think-ms", type=float, default=100.0, help="a paced bot's thinking")
    parser.add_argument(
        "--client", choices=("python", "go"), default="python", help="whose bots play"
    )
    parser.add_argument("--quick", action="store_true", help="1 run, 2 and 8 bots, 2 rounds")
    parser.add_argument("--json", action="store_true", help="also print one JSON line")
    opts = parser.parse_args(argv)
    runs, sizes, clients, rl = opts.runs, sorted(opts.bots), opts.clients, None
    if opts.quick:
        runs, sizes, clients, rl = 1, [2, 8], 2, 2
    if any(n < SEATS or n % SEATS for n in sizes):
        parser.error("--bots: each count must be a positive even number (2-seat matches)")
    results: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="bench_play_many_") as tmp:
        go = go_bot.build(Path(tmp) / "playbot") if opts.client == "go" else None
        for run in range(runs):
            results += one_run(Path(tmp), run, sizes, clients, rl, opts.think_ms / 1e3, go)
    bots = "/".join(BOTS) + (" (the Go bot)" if go is not None else "")
    print(f"\nmedians of {runs} run(s), 2-seat matches, bots {bots}, one stream a bot:")
    head: tuple[str, ...] = ("setting", "bots", "p50 ms", "p90 ms", "p99 ms", "max ms")
    head += ("actions/s", "srv us/act", "loop wait us/act")
    widths = (12, 5, 7, 7, 7, 7, 10, 11, 17)
    print(" ".join(f"{h:>{w}}" for h, w in zip(head, widths, strict=True)))
    summary: dict[str, dict[str, float]] = {}
    keys: tuple[str, ...] = ("p50_ms", "p90_ms", "p99_ms", "max_ms", "rate", "server_us")
    keys += ("loop_wait_us",)
    keys += ("loop_us", "wait_us", "client_us", "bot_us")
    for setting, n in dict.fromkeys((m.setting, m.bots) for m in results):
        figs = [m.figures() for m in results if (m.setting, m.bots) == (setting, n)]
        row = {k: statistics.median(f[k] for f in figs) for k in keys}
        summary[f"{setting} {n}"] = row
        cells = [row[k] for k in keys[:6]]
        print(
            f"{setting:>12} {n:>5} "
            + " ".join(f"{c:>7.1f}" for c in cells[:4])
            + f" {cells[4]:>10.0f} {cells[5]:>11.0f} {row['loop_wait_us']:>17.0f}"
        )
    top = max(sizes)
    p99 = summary[f"fsync {top}"]["p99_ms"]
    verdict = "met" if p99 < AIM_P99_MS else "NOT met"
    print(f"aim: p99 under {AIM_P99_MS:g} ms with {top} bots, fsync on: {verdict} ({p99:.1f} ms)")
    ratios = [
        two.rate / one.rate
        for one, two in zip(
            [m for m in results if (m.setting, m.bots) == ("fsync", top)],
            [m for m in results if (m.setting, m.bots) == ("2 servers", top)],
            strict=True,
        )
    ]
    spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
    ratio = statistics.median(ratios)
    print(f"2 servers / 1 server with {top} bots: {ratio:.2f}x actions/s ({spread} by run)")
    if opts.json:
        doc = {"runs": runs, "clients": clients, "client": opts.client, "settings": summary}
        doc["two_servers_ratio"] = ratio
        print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())

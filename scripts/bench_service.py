"""Service load test: ApplyMove through the real gRPC server, against an empty RPC.

One run starts the real server (`service.rpc.server.serve`) in a subprocess, so
client and server do not share a GIL, on a fresh temporary DuckDB file, and:

(a) ceiling: the standard empty unary RPC (grpc.health.v1.Health/Check) on
    the same server, with 1 client and with 8 concurrent clients (threads,
    each with its own channel and connection): calls/s, p50, p99;
(b) apply load: N concurrent clients (default 1 and 8), each playing M
    complete 2-seat matches through the real RPCs: CreateMatch, then one
    ApplyMove per turn and DealRound when a round ends. Each client mirrors
    its match with the engine from the seed it chose, so it needs neither
    GetState nor ListLegalMoves (and checks every reply against the mirror).
    Only the ApplyMove calls are timed: applies/s, p50, p99, and the ratios
    p50(Apply)/p50(empty) with 1 client and throughput(Apply, 8 clients) /
    throughput(empty, 8 clients);
(c) the number of `action` events in DuckDB (Query RPC, Arrow IPC) equals
    the number of acknowledged applies, and the server exits 0 on SIGTERM.

Then, to say where Apply latency goes, the same Apply load runs against two
more servers, both the real `serve`: one with a stand-in that keeps no event
log at all, and one with the real event log on tmpfs (/dev/shm, where fsync
costs nothing); and in this process, with no server running, the parts of
one apply are timed on their own (hub + engine, reply conversion, one
durable log append, and a bare write+fdatasync on the same disk). Server CPU
per call comes from /proc, which a busy machine disturbs less than wall time.

`--query-load` measures instead what an analyst's query costs play: ApplyMove
p50 and p99 (1 client, fsync on) idle, then while one heavy query after
another runs (each with a short gRPC deadline), and the server's CPU in the
second after the queries stop (near 0 when the server stopped their work).

    .venv/bin/python scripts/bench_service.py              # ~1-3 minutes
    .venv/bin/python scripts/bench_service.py --quick      # smoke run
    .venv/bin/python scripts/bench_service.py --runs 3     # medians of 3 runs
    .venv/bin/python scripts/bench_service.py --query-load --matches 3 --runs 3

Every loop is bounded by a count and by --seconds per phase; servers bind
127.0.0.1 only and are stopped by this script.
"""

from __future__ import annotations

import argparse
import math
import os
import queue
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pyarrow as pa
from grpc_health.v1 import health_pb2

from analysis.logquery import table_from_stream
from analysis.remote import health_client
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from service.storage import find_owner
from sniff import Match, Move, Phase, RandomBot, view

AIM_P50_RATIO = 1.5
SIGNED = "signed on disk"
"""The server that signs checkpoints and tree heads (--sign), beside the one that does not."""
AIM_SIGNED_RATIO = 0.05
"""Signing may cost ApplyMove at most 5% of p50 and of 8-client throughput."""
AIM_THROUGHPUT_RATIO = 0.70
CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]  # one connection per client
CLK_TCK = os.sysconf("SC_CLK_TCK")


# -- the server under test ---------------------------------------------------------


class NullLog:
    """Stands in for the event log: accepts every append at once and keeps nothing."""

    signer = None  # signs nothing

    def append(
        self, events: Sequence[object], facts: object = None, checkpoints: object = ()
    ) -> None:
        pass

    def events_by_match(self, unfinished_only: bool = False) -> Iterator[Any]:
        return iter(())

    def advertise(self, address: str, query_token: str | None = None) -> None:
        pass

    def close(self) -> None:
        pass


def serve_null_log(address: str) -> int:
    """The real server (`service.rpc.server.serve`) with no event log (`--serve-null-log`)."""
    from service.rpc.server import serve

    # NullLog has only the methods of EventLog that the server calls, not its type.
    return serve(address, "none", event_log=NullLog())  # type: ignore[arg-type]


@dataclass
class Server:
    label: str
    proc: subprocess.Popen[str]
    address: str
    db_path: str | None
    stderr_path: Path
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process so far."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM, then wait; None if it did not exit in time (it is then killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            return None


def start_server(
    label: str,
    workdir: Path,
    db_path: str | None,
    timeout: float = 60.0,
    sync: bool = True,
    key_file: Path | None = None,
) -> Server:
    """Start a server subprocess on an ephemeral 127.0.0.1 port; return once health is SERVING.

    With `db_path` it is the real `serve()` (`sync=False`: `sniff serve --no-fsync`;
    `key_file`: `sniff serve --signing-key-file`); without, the no-log variant.
    """
    if db_path is not None:
        signer = "None"
        if key_file is not None:
            signer = f"load_signing_key(Path({str(key_file)!r}))"
        code = (
            "import sys; from pathlib import Path; from service.rpc.server import serve; "
            "from service.evidence.keys import load_signing_key; "
            f"sys.exit(serve('127.0.0.1:0', {db_path!r}, sync={sync!r}, signer={signer}))"
        )
        cmd = [sys.executable, "-c", code]
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--serve-null-log", "127.0.0.1:0"]
    stderr_path = workdir / f"{label.replace(' ', '_')}.stderr"
    with open(stderr_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout
    address = None
    while address is None:
        try:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            line = None
        if line is None:
            proc.kill()
            raise RuntimeError(f"{label} server did not start: {stderr_path.read_text()[-2000:]}")
        if line.startswith("sniff: serving on "):
            address = line.removeprefix("sniff: serving on ").split(",")[0].strip()
    with grpc.insecure_channel(address) as channel:
        reply = health_client(channel).Check(
            health_pb2.HealthCheckRequest(service=""),
            wait_for_ready=True,
            timeout=max(1.0, deadline - time.monotonic()),
        )
        if reply.status != health_pb2.HealthCheckResponse.SERVING:
            raise RuntimeError(f"{label} server is not SERVING: {reply.status}")
    return Server(label, proc, address, db_path, stderr_path, lines)


# -- load ----------------------------------------------------------------------------


def percentile(sorted_ns: Sequence[int], q: float) -> float:
    """Nearest-rank percentile, in microseconds."""
    if not sorted_ns:
        return math.nan
    rank = min(len(sorted_ns) - 1, max(0, math.ceil(q * len(sorted_ns)) - 1))
    return sorted_ns[rank] / 1e3


@dataclass
class Measured:
    """What one load phase measured."""

    name: str
    clients: int
    calls: int  # timed calls (Check, or ApplyMove)
    other_calls: int  # untimed calls (CreateMatch, DealRound)
    matches: int
    wall: float
    server_cpu: float
    client_cpu: float
    latencies: list[int]
    errors: list[str]
    events_per_commit: float = math.nan

    @property
    def rate(self) -> float:
        return self.calls / self.wall if self.wall > 0 else math.nan

    @property
    def p50(self) -> float:
        return percentile(self.latencies, 0.50)

    @property
    def p99(self) -> float:
        return percentile(self.latencies, 0.99)

    @property
    def server_us_per_call(self) -> float:
        return self.server_cpu / max(1, self.calls + self.other_calls) * 1e6

    @property
    def client_us_per_call(self) -> float:
        return self.client_cpu / max(1, self.calls + self.other_calls) * 1e6


def run_phase(
    name: str,
    server: Server,
    clients: int,
    worker: Callable[[int, grpc.Channel, float, dict[str, Any]], None],
    seconds: float,
) -> Measured:
    """Run `worker(client, channel, deadline, out)` on `clients` threads, all started together."""
    outs: list[dict[str, Any]] = [
        {"lat": [], "other": 0, "matches": 0, "errors": []} for _ in range(clients)
    ]
    start: dict[str, float] = {}

    def go() -> None:  # run by the last thread to reach the barrier, before any is released
        start["deadline"] = time.monotonic() + seconds
        start["cpu"], start["client_cpu"] = server.cpu_seconds(), time.process_time()
        start["t0"] = time.perf_counter()

    barrier = threading.Barrier(clients, action=go)

    def body(i: int) -> None:
        out = outs[i]
        try:
            with grpc.insecure_channel(server.address, options=CHANNEL_OPTIONS) as channel:
                health = health_client(channel)
                for _ in range(20):  # connect and warm up before the clock starts
                    health.Check(health_pb2.HealthCheckRequest(service=""), timeout=30)
                barrier.wait(timeout=120)
                worker(i, channel, start["deadline"], out)
        except threading.BrokenBarrierError:
            out["errors"].append(f"client {i}: another client failed before the start")
        except Exception as exc:
            out["errors"].append(f"client {i}: {type(exc).__name__}: {exc}")
            barrier.abort()

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    limit = time.monotonic() + seconds + 240
    for t in threads:
        t.join(max(0.0, limit - time.monotonic()))
    end = time.perf_counter()
    cpu1, ccpu1 = server.cpu_seconds(), time.process_time()
    wall = end - start["t0"] if start else math.nan
    cpu0, ccpu0 = start.get("cpu", cpu1), start.get("client_cpu", ccpu1)
    lat = sorted(x for o in outs for x in o["lat"])
    errors = [e for o in outs for e in o["errors"]]
    if any(t.is_alive() for t in threads):
        errors.append("a client did not finish in time")
    return Measured(
        name,
        clients,
        len(lat),
        sum(o["other"] for o in outs),
        sum(o["matches"] for o in outs),
        wall,
        cpu1 - cpu0,
        ccpu1 - ccpu0,
        lat,
        errors,
    )


def empty_worker(calls: int) -> Callable[[int, grpc.Channel, float, dict[str, Any]], None]:
    def work(i: int, channel: grpc.Channel, deadline: float, out: dict[str, Any]) -> None:
        stub = health_client(channel)
        request = health_pb2.HealthCheckRequest(service="")
        lat = out["lat"]
        clock = time.perf_counter_ns
        for _ in range(calls):
            if time.monotonic() >= deadline:
                break
            t0 = clock()
            stub.Check(request, timeout=30)
            lat.append(clock() - t0)

    return work


class MirrorMismatch(AssertionError):
    pass


def apply_worker(
    matches: int, seats: int, target: int | None, seed_base: int
) -> Callable[[int, grpc.Channel, float, dict[str, Any]], None]:
    """Each client plays `matches` matches, one ApplyMove per turn, mirrored by the engine."""

    def work(i: int, channel: grpc.Channel, deadline: float, out: dict[str, Any]) -> None:
        stub = sniff_pb2_grpc.SniffServiceStub(channel)
        lat = out["lat"]
        clock = time.perf_counter_ns
        for m in range(matches):
            if time.monotonic() >= deadline:
                return
            seed = seed_base + i * 1000 + m
            request = pb.CreateMatchRequest(seat_count=seats, seed=seed)
            if target is not None:
                request.target = target
            created = stub.CreateMatch(request, timeout=30)
            out["other"] += 1
            local = Match(seats, seed=seed, target=target)
            if created.leader != local.leader or created.target != local.target:
                raise MirrorMismatch(f"seed {seed}: the server dealt a different first round")
            bot = RandomBot(seed)
            tokens = list(created.seat_tokens)
            while local.phase is not Phase.OVER:
                if time.monotonic() >= deadline:
                    return
                if local.phase is Phase.AWAITING_DEAL:
                    dealt = stub.DealRound(
                        pb.DealRoundRequest(
                            match_id=created.match_id, token=created.observer_token
                        ),
                        timeout=30,
                    )
                    out["other"] += 1
                    local.deal()
                    if dealt.leader != local.leader or dealt.round_index != local.round_index:
                        raise MirrorMismatch(f"seed {seed}: round {local.round_index} differs")
                    continue
                seat = local.turn
                move: Move = bot.choose(view(local, seat))
                apply_request = pb.ApplyMoveRequest(
                    match_id=created.match_id,
                    token=tokens[seat],
                    seat=seat,
                    notation=str(move),
                    expected_move_count=local.move_count,
                )
                t0 = clock()
                reply = stub.ApplyMove(apply_request, timeout=30)
                lat.append(clock() - t0)
                result = local.apply(move)
                if reply.move_count != local.move_count or reply.points != result.points:
                    raise MirrorMismatch(
                        f"seed {seed}, action {local.move_count}: the server replied "
                        f"move_count={reply.move_count} points={reply.points}, the engine "
                        f"{local.move_count} {result.points}"
                    )
            out["matches"] += 1

    return work


def query(server: Server, sql: str) -> pa.Table:
    """One Query RPC, its Arrow IPC chunks decoded as one table.

    The query token comes from the owner file beside the log, as for `sniff query`.
    """
    assert server.db_path is not None
    owner = find_owner(server.db_path)
    assert owner is not None, f"no owner file beside {server.db_path}"
    with grpc.insecure_channel(server.address) as channel:
        stub = sniff_pb2_grpc.SniffServiceStub(channel)
        request = pb.QueryRequest(sql=sql, token=owner.query_token or "")
        return table_from_stream(stub.Query(request, timeout=60))


def count_action_events(server: Server) -> int:
    table = query(server, "SELECT count(*) AS n FROM events WHERE kind = 'action'")
    return int(table.column(0)[0].as_py())


def log_commits(server: Server) -> tuple[int, int]:
    """(events, group commits) so far: a group commit stamps all its rows with one time."""
    table = query(server, "SELECT count(*), count(DISTINCT logged_at) FROM events")
    return int(table.column(0)[0].as_py()), int(table.column(1)[0].as_py())


# -- in-process parts of one apply ----------------------------------------------------


def median_us(samples: Sequence[int]) -> float:
    return statistics.median(samples) / 1e3 if samples else math.nan


def time_parts(workdir: Path, actions: int, seats: int) -> dict[str, float]:
    """Median microseconds of the parts of one apply, each on its own, no server running."""
    from service.hub import Hub
    from service.rpc import convert
    from service.storage import EventLog, LogEvent

    parts: dict[str, list[int]] = {
        "hub.apply, no log (auth, engine, outcome, events)": [],
        "convert.apply_response (reply message)": [],
        "Move.parse (request notation)": [],
    }
    hub = Hub(NullLog())  # type: ignore[arg-type]  # EventLog's methods that Hub calls
    clock = time.perf_counter_ns
    seed = 7_000_000
    done = 0
    while done < actions:
        seed += 1
        created = hub.create(seats, seed=seed)
        local = Match(seats, seed=seed)
        bot = RandomBot(seed)
        while local.phase is not Phase.OVER and done < actions:
            if local.phase is Phase.AWAITING_DEAL:
                hub.deal(created.match_id, created.observer_token, None)
                local.deal()
                continue
            seat = local.turn
            move = bot.choose(view(local, seat))
            text = str(move)
            t0 = clock()
            Move.parse(text)
            t1 = clock()
            outcome = hub.apply(
                created.match_id, created.seat_tokens[seat], seat, move, local.move_count
            )
            t2 = clock()
            convert.apply_response(outcome)
            t3 = clock()
            local.apply(move)
            parts["Move.parse (request notation)"].append(t1 - t0)
            parts["hub.apply, no log (auth, engine, outcome, events)"].append(t2 - t1)
            parts["convert.apply_response (reply message)"].append(t3 - t2)
            done += 1

    def log_appends(directory: Path, count: int) -> list[int]:
        path = directory / "parts.duckdb"
        log = EventLog(path)
        times = []
        try:
            log.append(
                [
                    LogEvent.match_created(
                        "bench", seats=2, target=250, seed=1, rules_version="x", token_sha256=[]
                    )
                ]
            )
            for seq in range(1, count + 1):
                event = LogEvent.action(
                    "bench",
                    seq,
                    round=0,
                    action_index=seq - 1,
                    seat=seq % 2,
                    move="draw",
                    drawn=None,
                    points=0,
                    ends_sum=None,
                )
                t0 = clock()
                log.append([event])
                times.append(clock() - t0)
        finally:
            log.close()
        return times

    disk = workdir / "parts-disk"
    disk.mkdir()
    n_log = max(20, min(300, actions))
    parts["EventLog.append(1 event), disk (durable commit)"] = log_appends(disk, n_log)
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        with tempfile.TemporaryDirectory(dir=shm, prefix="bench-sniff-") as d:
            parts["EventLog.append(1 event), tmpfs (no real fsync)"] = log_appends(Path(d), n_log)
    parts["bare 256-byte append + fdatasync, same disk"] = bare_syncs(disk, n_log, 256)
    return {k: median_us(v) for k, v in parts.items()}


def bare_syncs(directory: Path, n: int, size: int) -> list[int]:
    """Nanoseconds each of `n` appends of `size` bytes and their fdatasync took, in a file of
    `directory` (removed after): what one durable journal write costs at least on that disk."""
    sync_times = []
    probe = directory / "fsync-probe"
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for _ in range(n):
            t0 = time.perf_counter_ns()
            os.write(fd, b"x" * size)
            os.fdatasync(fd)
            sync_times.append(time.perf_counter_ns() - t0)
    finally:
        os.close(fd)
        probe.unlink()
    return sync_times


# -- one run ---------------------------------------------------------------------------


@dataclass
class Options:
    clients: list[int]
    matches: int
    seats: int
    target: int | None
    seconds: float
    empty_calls: int
    breakdown: bool
    key_file: Path | None = None
    """With one: a server that signs (`sniff serve --signing-key-file`) runs too."""


@dataclass
class RunResult:
    phases: dict[tuple[str, str, int], Measured]  # (server, kind, clients)
    checks: list[tuple[str, bool, str]]
    parts: dict[str, float]


def load_server(
    server: Server, opts: Options, empty: bool, seed_base: int, results: RunResult
) -> int:
    """Empty-RPC and Apply phases on one server; return the acknowledged applies."""
    acked = 0
    if empty:
        for n in sorted({1, *opts.clients}):
            calls = opts.empty_calls if n == 1 else max(1, opts.empty_calls // 2)
            ph = run_phase("empty", server, n, empty_worker(calls), opts.seconds)
            results.phases[(server.label, "empty", n)] = ph
            report_phase(server.label, ph)
    for n in opts.clients:
        worker = apply_worker(opts.matches, opts.seats, opts.target, seed_base + n * 100_000)
        before = log_commits(server) if server.db_path else None
        ph = run_phase("apply", server, n, worker, opts.seconds)
        if before is not None:
            events, commits = (b - a for a, b in zip(before, log_commits(server), strict=True))
            ph.events_per_commit = events / commits if commits else math.nan
        results.phases[(server.label, "apply", n)] = ph
        acked += ph.calls
        report_phase(server.label, ph)
    return acked


def report_phase(label: str, ph: Measured) -> None:
    what = "Health/Check" if ph.name == "empty" else "ApplyMove"
    extra = f", {ph.matches} matches done" if ph.name == "apply" else ""
    if not math.isnan(ph.events_per_commit):
        extra += f", {ph.events_per_commit:.1f} events per group commit"
    print(
        f"  {label:<14} {what:<12} {ph.clients:>2} clients: {ph.calls:>6} calls in "
        f"{ph.wall:5.2f} s = {ph.rate:8.0f}/s   p50 {ph.p50:7.0f} us   p99 {ph.p99:7.0f} us   "
        f"server cpu {ph.server_us_per_call:5.0f} us/call{extra}",
        flush=True,
    )
    for e in ph.errors[:5]:
        print(f"    ERROR {e}", flush=True)


def one_run(opts: Options, workdir: Path, run: int) -> RunResult:
    results = RunResult({}, [], {})
    variants: list[tuple[str, str | None]] = [
        ("log on disk", str(workdir / "bench.duckdb")),
        ("disk no fsync", str(workdir / "bench-nofsync.duckdb")),
    ]
    if opts.key_file is not None:
        # Which server runs first matters by more than what signing costs (measured here:
        # the second of two identical servers is up to 20% slower at 1 client), so the
        # signed server goes first on every other run and the ratios are medians over both.
        variants.insert(run % 2, (SIGNED, str(workdir / "bench-signed.duckdb")))
    if opts.breakdown:
        variants.append(("no log", None))
        shm = Path("/dev/shm")
        if shm.is_dir() and os.access(shm, os.W_OK):
            variants.append(("log on tmpfs", "shm"))
    shm_dir: tempfile.TemporaryDirectory[str] | None = None
    try:
        for label, db in variants:
            if db == "shm":
                shm_dir = tempfile.TemporaryDirectory(dir="/dev/shm", prefix="bench-sniff-")
                db = str(Path(shm_dir.name) / "bench.duckdb")
            server = start_server(
                label,
                workdir,
                db,
                sync=label != "disk no fsync",
                key_file=opts.key_file if label == SIGNED else None,
            )
            acked = 0
            try:
                acked = load_server(
                    server, opts, empty=True, seed_base=run * 10_000_000, results=results
                )
                if db is not None:
                    logged = count_action_events(server)
                    results.checks.append(
                        (
                            f"{label}: action events in DuckDB == acknowledged applies",
                            logged == acked,
                            f"{logged} == {acked}",
                        )
                    )
            finally:
                status = server.stop()
            results.checks.append(
                (f"{label}: server exits 0 after SIGTERM", status == 0, f"exit status {status}")
            )
            if shm_dir is not None:
                shm_dir.cleanup()
                shm_dir = None
    finally:
        if shm_dir is not None:
            shm_dir.cleanup()
    if opts.breakdown:
        parts_dir = workdir / f"parts-{run}"
        parts_dir.mkdir()
        results.parts = time_parts(parts_dir, actions=min(2000, 300 * opts.matches), seats=2)
    return results


# -- ApplyMove while an analyst's heavy query runs -------------------------------------

HEAVY_QUERY = "SELECT sum(hash(range)) AS h FROM range(4000000000)"
"""About 20 s of DuckDB work on one core if nothing stopped it (a bare count over the
same range takes DuckDB well under a second)."""
AIM_QUERY_P99_RATIO = 2.0


def heavy_queries(
    server: Server, stop: threading.Event, deadline: float, out: dict[str, Any]
) -> None:
    """Send HEAVY_QUERY again and again, each with a short gRPC deadline, until `stop`."""
    assert server.db_path is not None
    owner = find_owner(server.db_path)
    assert owner is not None
    request = pb.QueryRequest(sql=HEAVY_QUERY, token=owner.query_token or "")
    with grpc.insecure_channel(server.address) as channel:
        stub = sniff_pb2_grpc.SniffServiceStub(channel)
        while not stop.is_set():
            out["sent"] += 1
            try:
                for _ in stub.Query(request, timeout=deadline):
                    pass
                out["finished"] += 1
            except grpc.RpcError as exc:
                code = exc.code().name
                out[code] = out.get(code, 0) + 1


@dataclass
class QueryLoadResult:
    idle: Measured
    loaded: Measured
    queries: dict[str, Any]
    cpu_after: float  # server CPU share in the second after the last query's deadline


def query_load_run(opts: Options, workdir: Path, run: int, deadline: float) -> QueryLoadResult:
    """ApplyMove (1 client, fsync on) idle, then while heavy queries run one after another."""
    server = start_server("query load", workdir, str(workdir / "query-load.duckdb"))
    try:
        seeds = run * 10_000_000 + 5_000_000
        worker = apply_worker(opts.matches, opts.seats, opts.target, seeds)
        idle = run_phase("apply", server, 1, worker, opts.seconds)
        report_phase("idle", idle)
        stop = threading.Event()
        queries: dict[str, Any] = {"sent": 0, "finished": 0}
        sender = threading.Thread(
            target=heavy_queries, args=(server, stop, deadline, queries), daemon=True
        )
        sender.start()
        time.sleep(min(0.3, deadline / 2))  # the first query is under way
        worker = apply_worker(opts.matches, opts.seats, opts.target, seeds + 1_000_000)
        loaded = run_phase("apply", server, 1, worker, opts.seconds)
        report_phase("heavy query", loaded)
        stop.set()
        sender.join(deadline + 30)
        time.sleep(0.2)
        cpu0, t0 = server.cpu_seconds(), time.monotonic()
        time.sleep(1.0)
        cpu_after = (server.cpu_seconds() - cpu0) / (time.monotonic() - t0)
        print(
            f"  queries: {queries}; server CPU in the second after them: {cpu_after:.0%} of a core",
            flush=True,
        )
    finally:
        status = server.stop()
    if status != 0:
        loaded.errors.append(f"the server exited with status {status}")
    return QueryLoadResult(idle, loaded, queries, cpu_after)


def summarize_query_load(results: list[QueryLoadResult]) -> bool:
    print()
    print("=" * 100)
    print(f"ApplyMove, 1 client, fsync on, idle vs under heavy queries: {len(results)} run(s)")
    print(f"  {'':<22} {'p50 us':>22} {'p99 us':>22}")
    for label, phases in (
        ("idle", [r.idle for r in results]),
        ("while a query runs", [r.loaded for r in results]),
    ):
        p50 = med([m.p50 for m in phases])
        p99 = med([m.p99 for m in phases])
        print(f"  {label:<22} {p50:>22} {p99:>22}")
    ratio = med([r.loaded.p99 / r.idle.p99 for r in results])
    p50_ratio = med([r.loaded.p50 / r.idle.p50 for r in results])
    print(f"  p99 ratio (loaded/idle): {ratio}   (aim <= {AIM_QUERY_P99_RATIO})")
    print(f"  p50 ratio (loaded/idle): {p50_ratio}")
    print(f"  server CPU after the queries stopped: {med([r.cpu_after for r in results])} cores")
    ok = True
    for r in results:
        for e in r.idle.errors + r.loaded.errors:
            ok = False
            print(f"  FAIL {e}")
        if r.queries.get("finished"):
            ok = False
            print(f"  FAIL a heavy query finished instead of being stopped: {r.queries}")
    return ok


# -- reporting ------------------------------------------------------------------------


def med(values: Sequence[float]) -> str:
    vals = [v for v in values if not math.isnan(v)]
    if not vals:
        return "n/a"
    m = statistics.median(vals)
    digits = 2 if abs(m) < 10 else 0
    if len(vals) == 1:
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} ({min(vals):.{digits}f}..{max(vals):.{digits}f})"


def summarize(opts: Options, runs: list[RunResult]) -> bool:
    many = len(runs) > 1
    print()
    print("=" * 100)
    print(f"summary over {len(runs)} run(s)" + (": median (min..max)" if many else ""))

    def ph(r: RunResult, label: str, kind: str, n: int) -> Measured | None:
        return r.phases.get((label, kind, n))

    def p50(r: RunResult, label: str, kind: str) -> float:
        """A 1-client phase's p50, which every run measures."""
        measured = ph(r, label, kind, 1)
        assert measured is not None, (label, kind)
        return measured.p50

    def vals(label: str, kind: str, n: int, f: Callable[[Measured], float]) -> list[float]:
        out = []
        for r in runs:
            p = ph(r, label, kind, n)
            if p is not None and p.calls:
                out.append(f(p))
        return out

    labels = []
    for r in runs:
        for label, _, _ in r.phases:
            if label not in labels:
                labels.append(label)
    print(
        f"\n{'server':<14} {'rpc':<12} {'clients':>7}  {'calls/s':>22}  {'p50 us':>22}  "
        f"{'p99 us':>22}  {'server cpu us/call':>20}  {'client cpu us/call':>20}  "
        f"{'events/commit':>16}"
    )
    for label in labels:
        for kind in ("empty", "apply"):
            for n in sorted({1, *opts.clients}):
                v = vals(label, kind, n, lambda p: p.rate)
                if not v:
                    continue
                print(
                    f"{label:<14} {'Health/Check' if kind == 'empty' else 'ApplyMove':<12} "
                    f"{n:>7}  {med(v):>22}  {med(vals(label, kind, n, lambda p: p.p50)):>22}  "
                    f"{med(vals(label, kind, n, lambda p: p.p99)):>22}  "
                    f"{med(vals(label, kind, n, lambda p: p.server_us_per_call)):>20}  "
                    f"{med(vals(label, kind, n, lambda p: p.client_us_per_call)):>20}  "
                    f"{med(vals(label, kind, n, lambda p: p.events_per_commit)):>16}"
                )

    def ratios(label: str, kind_a: str, n_a: int, kind_b: str, n_b: int, f: Any) -> list[float]:
        out = []
        for r in runs:
            a, b = ph(r, label, kind_a, n_a), ph(r, label, kind_b, n_b)
            if a is not None and b is not None and a.calls and b.calls:
                out.append(f(a) / f(b))
        return out

    main = "log on disk"
    hi = max(opts.clients)
    print("\nratios, each measured within one run on one server:")
    p50_ratio = ratios(main, "apply", 1, "empty", 1, lambda p: p.p50)
    tp_ratio = ratios(main, "apply", hi, "empty", hi, lambda p: p.rate)
    if 1 in opts.clients:
        print(
            f"  p50(Apply)/p50(empty), 1 client:            {med(p50_ratio):>22}   "
            f"(aim <= {AIM_P50_RATIO})"
        )
    print(
        f"  throughput(Apply)/throughput(empty), {hi} clients: {med(tp_ratio):>18}   "
        f"(aim >= {AIM_THROUGHPUT_RATIO})"
    )
    if SIGNED in labels:
        signed_p50 = []
        for r in runs:
            a, b = ph(r, SIGNED, "apply", 1), ph(r, main, "apply", 1)
            if a is not None and b is not None and a.calls and b.calls:
                signed_p50.append(a.p50 / b.p50)
        signed_tp = []
        for r in runs:
            a, b = ph(r, SIGNED, "apply", hi), ph(r, main, "apply", hi)
            if a is not None and b is not None and a.calls and b.calls:
                signed_tp.append(a.rate / b.rate)
        print(
            f"  signing: p50(Apply, signed)/p50(Apply, unsigned), 1 client: {med(signed_p50):>14}"
            f"   (aim <= {1 + AIM_SIGNED_RATIO})"
        )
        print(
            f"  signing: throughput(Apply) signed/unsigned, {hi} clients:    {med(signed_tp):>14}"
            f"   (aim >= {1 - AIM_SIGNED_RATIO})"
        )
    for label in labels[1:]:
        if 1 in opts.clients:
            r1 = ratios(label, "apply", 1, "empty", 1, lambda p: p.p50)
            print(f"  [{label}] p50(Apply)/p50(empty), 1 client:  {med(r1):>18}")
        r8 = ratios(label, "apply", hi, "empty", hi, lambda p: p.rate)
        print(f"  [{label}] throughput ratio, {hi} clients:       {med(r8):>18}")

    if len(labels) > 1 and 1 in opts.clients:
        # Per run and server: excess = p50(Apply) - p50(empty), both 1 client, same server.
        def excess(r: RunResult, label: str) -> float:
            a, e = ph(r, label, "apply", 1), ph(r, label, "empty", 1)
            return a.p50 - e.p50 if a and e and a.calls and e.calls else math.nan

        def column(f: Callable[[RunResult], float]) -> str:
            return med([f(r) for r in runs])

        print("\nwhere the 1-client Apply p50 goes (us; per-run differences, then the median):")
        print(f"  {'empty RPC p50':<58} {column(lambda r: p50(r, main, 'empty')):>16}")
        print(
            f"  {'Apply over empty, no log (servicer, hub, engine, messages)':<58} "
            f"{column(lambda r: excess(r, 'no log')):>16}"
        )
        if "log on tmpfs" in labels:
            print(
                f"  {'+ event log on tmpfs (writer thread, DuckDB transaction)':<58} "
                f"{column(lambda r: excess(r, 'log on tmpfs') - excess(r, 'no log')):>16}"
            )
            print(
                f"  {'+ event log on disk instead (WAL fsync, dir fsync)':<58} "
                f"{column(lambda r: excess(r, main) - excess(r, 'log on tmpfs')):>16}"
            )
        print(f"  {'= Apply p50, log on disk':<58} {column(lambda r: p50(r, main, 'apply')):>16}")

        def log_share(r: RunResult) -> float:
            return 100 * (excess(r, main) - excess(r, "no log")) / p50(r, main, "apply")

        print(f"  {'the event log, share of Apply p50 on disk (%)':<58} {column(log_share):>16}")

    parts = [r.parts for r in runs if r.parts]
    if parts:
        print("\nparts of one apply timed alone in this process (median us, no server running):")
        for key in parts[0]:
            print(f"  {key:<56} {med([p[key] for p in parts if key in p]):>16}")

    print("\nchecks:")
    ok = True
    for r_i, r in enumerate(runs):
        for name, passed, detail in r.checks:
            ok = ok and passed
            prefix = f"run {r_i + 1}: " if many else ""
            print(f"  {'OK  ' if passed else 'FAIL'} {prefix}{name} ({detail})")
        for p in r.phases.values():
            for e in p.errors:
                ok = False
                print(f"  FAIL {p.name} {p.clients} clients: {e}")
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--clients",
        default="1,8",
        help="comma-separated concurrent client counts for the Apply load (default 1,8)",
    )
    p.add_argument("--matches", type=int, default=2, help="complete matches per client")
    p.add_argument("--seats", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("--target", type=int, default=None, help="match target (default: the rules')")
    p.add_argument("--seconds", type=float, default=60.0, help="time cap of each load phase")
    p.add_argument("--empty-calls", type=int, default=2000, help="Health/Check calls per client")
    p.add_argument("--runs", type=int, default=1, help="whole runs (fresh servers); medians")
    p.add_argument(
        "--no-breakdown",
        action="store_true",
        help="skip the no-log / tmpfs-log servers and the in-process parts",
    )
    p.add_argument("--quick", action="store_true", help="a fast smoke run (short matches)")
    p.add_argument(
        "--query-load",
        action="store_true",
        help="instead: ApplyMove p50/p99 idle vs while heavy queries run (each with a short "
        "deadline), 1 client, fsync on",
    )
    p.add_argument(
        "--query-deadline",
        type=float,
        default=0.5,
        help="gRPC deadline of each heavy query in --query-load (seconds)",
    )
    p.add_argument(
        "--signing-key-file",
        type=Path,
        default=None,
        help="also run a server that signs with this key (sniff keygen), in the same run",
    )
    p.add_argument(
        "--sign",
        action="store_true",
        help="as --signing-key-file, with a key made for the run",
    )
    p.add_argument("--serve-null-log", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve_null_log:
        return serve_null_log(args.serve_null_log)
    opts = Options(
        clients=[int(c) for c in args.clients.split(",") if c.strip()],
        matches=args.matches,
        seats=args.seats,
        target=args.target,
        seconds=args.seconds,
        empty_calls=args.empty_calls,
        breakdown=not args.no_breakdown,
    )
    if args.quick:
        opts.matches, opts.target, opts.empty_calls = 1, args.target or 30, 200
        opts.seconds = min(opts.seconds, 20.0)
    opts.key_file = args.signing_key_file
    if not opts.clients or min(opts.clients) < 1:
        p.error("--clients needs positive counts")
    print(
        f"service benchmark: {args.runs} run(s); Apply load with {opts.clients} clients x "
        f"{opts.matches} match(es) of {opts.seats} seats"
        + (f" to {opts.target}" if opts.target else "")
        + f"; empty RPC {opts.empty_calls} calls/client; cap {opts.seconds:.0f} s per phase; "
        f"{os.cpu_count()} cpus"
    )
    if args.query_load:
        loads = []
        with tempfile.TemporaryDirectory(prefix="bench-sniff-") as tmp:
            for run in range(args.runs):
                print(f"\nrun {run + 1}:", flush=True)
                workdir = Path(tmp) / f"run-{run}"
                workdir.mkdir()
                loads.append(query_load_run(opts, workdir, run, args.query_deadline))
        return 0 if summarize_query_load(loads) else 1
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-sniff-") as tmp:
        if args.sign and opts.key_file is None:
            from service.evidence.keys import generate_key_files

            opts.key_file = Path(tmp) / "bench.key"
            generate_key_files(opts.key_file)
        for run in range(args.runs):
            print(f"\nrun {run + 1}:", flush=True)
            workdir = Path(tmp) / f"run-{run}"
            workdir.mkdir()
            runs.append(one_run(opts, workdir, run))
    ok = summarize(opts, runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Build and run the gRPC server: the app service, health and reflection, one event log.

The server is grpcio's asyncio server (`grpc.aio`) on an event loop of its
own thread: an open stream is a suspended coroutine, not a thread, so idle
WatchMatch streams cannot starve other calls. The hub's blocking work (a
match's lock, the engine, the log's durable append) runs in a bounded
thread pool of `HUB_THREADS`.

`create_server` returns a started server (tests start one on an ephemeral
port in-process and stop it with `Running.stop`); `serve` adds signal
handling for production.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import grpc
import grpc.aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from service.defaults import DEFAULT_ADDRESS, DEFAULT_DB, DEFAULT_MAX_LIVE_MATCHES
from service.evidence.keys import SigningKey
from service.hub import Hub
from service.rpc import decoding, reflection
from service.rpc.bounds import MAX_TOKEN_LENGTH
from service.rpc.gen.sniff.v1 import sniff_pb2
from service.rpc.servicer import SniffServicer
from service.storage.log import EventLog

log = logging.getLogger(__name__)

SERVICE_NAME = sniff_pb2.DESCRIPTOR.services_by_name["SniffService"].full_name
HUB_THREADS: Final = 16
"""Threads that run hub calls: calls beyond this many wait in a queue, holding no thread."""


@dataclass(frozen=True)
class Tls:
    """The server's TLS certificate chain and private key, PEM-encoded."""

    certificate_chain: bytes
    private_key: bytes

    @classmethod
    def from_files(cls, cert_file: str | Path, key_file: str | Path) -> Tls:
        return cls(Path(cert_file).read_bytes(), Path(key_file).read_bytes())


def read_house_key(path: str | Path, what: str = "house key") -> bytes:
    """The house key (or arena key) in a file (surrounding whitespace dropped); ValueError if
    unusable."""
    key = Path(path).read_bytes().strip()
    if not key:
        raise ValueError(f"the {what} file {path} is empty")
    if len(key) > MAX_TOKEN_LENGTH:
        raise ValueError(f"the {what} in {path} is longer than {MAX_TOKEN_LENGTH} bytes")
    return key


@dataclass
class Running:
    """A started server, the port it bound, and what must be closed with it."""

    server: grpc.aio.Server
    port: int
    address: str
    hub: Hub
    servicer: SniffServicer
    health: Any  # grpc_health's asyncio HealthServicer
    query_token: str
    """What the Query RPC asks for; also in `<db>.owner.json` (mode 0600)."""
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread
    pool: ThreadPoolExecutor
    _stopped: bool = field(default=False, repr=False)

    def stop(self, grace: float = 5.0) -> None:
        """Say NOT_SERVING, end idle streams, let in-flight calls finish, then flush and close.

        Calls still running after `grace` seconds are cancelled. Safe to call twice.
        """
        if self._stopped:
            return
        self._stopped = True
        try:
            asyncio.run_coroutine_threadsafe(self._drain(grace), self.loop).result()
        finally:
            self.hub.timekeeper.stop()  # no timeout after the drain: the clocks resume on restart
            self.pool.shutdown(wait=True)  # hub calls under way finish (and reach the log)
            self.hub.log.close()
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join()
            self.loop.close()

    async def _drain(self, grace: float) -> None:
        await self.health.enter_graceful_shutdown()
        self.servicer.close()
        await self.server.stop(grace)


def create_server(
    address: str = DEFAULT_ADDRESS,
    db_path: str | Path = DEFAULT_DB,
    *,
    sync: bool = True,
    house_key: bytes | None = None,
    max_live_matches: int = DEFAULT_MAX_LIVE_MATCHES,
    tls: Tls | None = None,
    event_log: EventLog | None = None,
    arena_key: bytes | None = None,
    hub_threads: int = HUB_THREADS,
    signer: SigningKey | None = None,
) -> Running:
    """Open the log, rebuild its matches, bind `address` (port 0 picks one) and start serving.

    `sync=False` acknowledges events once the OS has them (safe from a crash
    of the process, not of the machine): see `EventLog`. With `house_key`,
    CreateMatch and explicit deals need it; with `tls`, the port speaks TLS
    only. `event_log` replaces the log at `db_path` (the benchmark's no-log
    server passes a stand-in). With `signer` the log signs the heads it hands
    out and its tree of finished matches (docs/evidence.md).
    """
    if event_log is None:
        event_log = EventLog(db_path, sync=sync, signer=signer)
    try:
        hub = Hub(event_log, max_live_matches)
        recovered = hub.recover()
        if recovered:
            log.info("rebuilt %d matches from %s", recovered, db_path)
        hub.timekeeper.start()
        pool = ThreadPoolExecutor(max_workers=hub_threads, thread_name_prefix="sniff-hub")
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="sniff-grpc", daemon=True)
        thread.start()
        query_token = secrets.token_urlsafe(24)
        try:
            server, servicer, checker, port = asyncio.run_coroutine_threadsafe(
                _start(address, hub, pool, query_token, house_key, tls, arena_key), loop
            ).result()
        except BaseException:
            hub.timekeeper.stop()
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()
            pool.shutdown()
            raise
        host = address.rsplit(":", 1)[0]
        bound = f"{host}:{port}"
        running = Running(
            server, port, bound, hub, servicer, checker, query_token, loop, thread, pool
        )
        try:
            event_log.advertise(bound, query_token)
        except BaseException:
            running.stop(grace=0)
            raise
    except BaseException:
        event_log.close()
        raise
    return running


async def _start(
    address: str,
    hub: Hub,
    pool: ThreadPoolExecutor,
    query_token: str,
    house_key: bytes | None,
    tls: Tls | None,
    arena_key: bytes | None = None,
) -> tuple[grpc.aio.Server, SniffServicer, Any, int]:
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    servicer = SniffServicer(hub, query_token, pool=pool, house_key=house_key, arena_key=arena_key)
    decoding.add_to_server(servicer, server)
    checker = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)
    reflection.add_to_server(
        (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name), server
    )
    try:
        if tls is None:
            port = server.add_insecure_port(address)
        else:
            credentials = grpc.ssl_server_credentials([(tls.private_key, tls.certificate_chain)])
            port = server.add_secure_port(address, credentials)
    except RuntimeError as exc:  # grpc.aio raises where the sync server returned 0
        raise OSError(f"could not bind {address}: {exc}") from None
    if port == 0:
        raise OSError(f"could not bind {address}")
    await server.start()
    for name in (SERVICE_NAME, ""):
        await checker.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, servicer, checker, port


def serve(
    address: str,
    db_path: str | Path,
    ready: threading.Event | None = None,
    *,
    sync: bool = True,
    house_key: bytes | None = None,
    max_live_matches: int = DEFAULT_MAX_LIVE_MATCHES,
    tls: Tls | None = None,
    event_log: EventLog | None = None,
    signer: SigningKey | None = None,
    arena_key: bytes | None = None,
) -> int:
    """Serve until SIGTERM or SIGINT; then drain in-flight calls, flush the log and return 0."""
    running = create_server(
        address,
        db_path,
        sync=sync,
        house_key=house_key,
        max_live_matches=max_live_matches,
        tls=tls,
        event_log=event_log,
        signer=signer,
        arena_key=arena_key,
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    where = "none" if event_log is not None else str(db_path)
    secure = ", TLS" if tls is not None else ""
    if signer is not None:
        secure += f", signing as log {signer.log_id}"
    if arena_key is not None:
        secure += ", arena on"
    print(f"sniff: serving on {running.address}, event log {where}{secure}", flush=True)
    if ready is not None:
        ready.set()
    stop.wait()
    print("sniff: draining and flushing the log", flush=True)
    running.stop()
    print("sniff: stopped", flush=True)
    return 0

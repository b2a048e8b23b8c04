"""Build and run the gRPC server: the app service, health and reflection, one event log.

`create_server` is separate from `serve` so tests can start a real server on
an ephemeral port in-process; `serve` adds signal handling for production.
"""

from __future__ import annotations

import logging
import secrets
import signal
import threading
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from service.defaults import DEFAULT_ADDRESS, DEFAULT_DB
from service.hub import Hub
from service.rpc.gen.sniff.v1 import sniff_pb2, sniff_pb2_grpc
from service.servicer import SniffServicer
from service.storage.log import EventLog

log = logging.getLogger(__name__)

SERVICE_NAME = sniff_pb2.DESCRIPTOR.services_by_name["SniffService"].full_name


@dataclass
class Running:
    """A started server, the port it bound, and what must be closed with it."""

    server: grpc.Server
    port: int
    address: str
    hub: Hub
    health: health.HealthServicer
    query_token: str
    """What the Query RPC asks for; also in `<db>.owner.json` (mode 0600)."""

    def stop(self, grace: float = 5.0) -> None:
        """Refuse new work, let in-flight calls finish, then flush and close the log."""
        self.health.enter_graceful_shutdown()
        self.server.stop(grace).wait()
        self.hub.log.close()


def create_server(
    address: str = DEFAULT_ADDRESS,
    db_path: str | Path = DEFAULT_DB,
    max_workers: int = 32,
    *,
    sync: bool = True,
) -> Running:
    """Open the log, rebuild its matches, bind `address` (port 0 picks one) and start serving.

    `sync=False` acknowledges events once the OS has them (safe from a crash
    of the process, not of the machine): see `EventLog`.
    """
    event_log = EventLog(db_path, sync=sync)
    try:
        hub = Hub(event_log)
        recovered = hub.recover()
        if recovered:
            log.info("rebuilt %d matches from %s", recovered, db_path)
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="sniff-rpc"),
            options=[("grpc.so_reuseport", 0)],
        )
        query_token = secrets.token_urlsafe(24)
        sniff_pb2_grpc.add_SniffServiceServicer_to_server(SniffServicer(hub, query_token), server)
        health_servicer = health.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        reflection.enable_server_reflection(
            (
                SERVICE_NAME,
                health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                reflection.SERVICE_NAME,
            ),
            server,
        )
        port = server.add_insecure_port(address)
        if port == 0:
            raise OSError(f"could not bind {address}")
        host = address.rsplit(":", 1)[0]
        bound = f"{host}:{port}"
        server.start()
        for name in (SERVICE_NAME, ""):
            health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        event_log.advertise(bound, query_token)
    except BaseException:
        event_log.close()
        raise
    return Running(server, port, bound, hub, health_servicer, query_token)


def serve(
    address: str,
    db_path: str | Path,
    ready: threading.Event | None = None,
    *,
    sync: bool = True,
) -> int:
    """Serve until SIGTERM or SIGINT; then drain in-flight calls, flush the log and return 0."""
    running = create_server(address, db_path, sync=sync)
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    print(f"sniff: serving on {running.address}, event log {db_path}", flush=True)
    if ready is not None:
        ready.set()
    stop.wait()
    print("sniff: draining and flushing the log", flush=True)
    running.stop()
    print("sniff: stopped", flush=True)
    return 0

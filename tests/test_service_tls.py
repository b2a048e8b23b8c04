"""Transport security: a service started with a certificate speaks TLS only.

Self-signed certificates made in the test; real servers (in-process and
`sniff serve` in a child process), real channels, the real `sniff query`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2

from analysis.logquery import query_service
from analysis.remote import health_client
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from service.rpc.server import Tls, create_server
from service.storage import find_owner
from tests.helpers import wait_until
from tests.service_helpers import REPO, free_port, self_signed_certificate


@pytest.mark.slow
def test_a_tls_service_answers_clients_that_trust_its_certificate_only(tmp_path: Path) -> None:
    cert, key = self_signed_certificate(tmp_path)
    other, _ = self_signed_certificate(tmp_path, "other")
    running = create_server(
        "127.0.0.1:0", tmp_path / "events.duckdb", tls=Tls.from_files(cert, key)
    )
    try:
        trusted = grpc.ssl_channel_credentials(cert.read_bytes())
        with grpc.secure_channel(running.address, trusted) as channel:
            stub = sniff_pb2_grpc.SniffServiceStub(channel)
            created = stub.CreateMatch(pb.CreateMatchRequest(seat_count=2, seed=1), timeout=10)
            assert len(created.seat_tokens) == 2
        table = query_service(
            running.address,
            "SELECT count(*) AS n FROM events",
            token=running.query_token,
            tls_ca=cert,
        )
        assert table.to_pylist() == [{"n": 2}]
        for channel in (
            grpc.insecure_channel(running.address),
            grpc.secure_channel(running.address, grpc.ssl_channel_credentials(other.read_bytes())),
        ):
            with channel:
                health = health_client(channel)
                with pytest.raises(grpc.RpcError) as info:
                    health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
                assert info.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        running.stop()


@pytest.mark.slow
def test_sniff_serve_with_a_certificate_and_sniff_query_with_its_ca(tmp_path: Path) -> None:
    cert, key = self_signed_certificate(tmp_path)
    db = tmp_path / "events.duckdb"
    port = free_port()
    bin_dir = Path(sys.executable).parent
    serve = [
        str(bin_dir / "sniff"),
        "serve",
        "--port",
        str(port),
        "--db",
        str(db),
        "--tls-cert",
        str(cert),
        "--tls-key",
        str(key),
    ]
    with open(tmp_path / "serve.err", "wb") as err:
        proc = subprocess.Popen(serve, cwd=REPO, stdout=subprocess.PIPE, stderr=err)
    try:

        def started() -> bool:
            assert proc.poll() is None, (tmp_path / "serve.err").read_text()
            return find_owner(db) is not None

        wait_until(started, "the service starts")
        env = {k: v for k, v in os.environ.items() if k != "SNIFF_TLS_CA"}
        sql = "SELECT count(*) AS n FROM events"
        command = [str(bin_dir / "sniff"), "query", sql, "--db", str(db), "--format", "jsonl"]
        done = subprocess.run(
            [*command, "--tls-ca", str(cert)],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == '{"n": 0}'
        done = subprocess.run(  # without the CA: a clear one-line failure
            command, capture_output=True, text=True, timeout=60, env=env, check=False
        )
        assert done.returncode != 0
        assert "Traceback" not in done.stderr
    finally:
        proc.terminate()
        assert proc.wait(30) == 0

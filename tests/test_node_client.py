"""The Node.js client (clients/node/play.js) plays whole matches against a real server.

The client knows nothing but the public contract (proto/sniff/v1/sniff.proto,
loaded at run time) and checks every reply itself; this test runs it for 2, 3
and 4 seats and cross-checks its summary against the server's event log.

Needs Node.js and the client's packages: run `npm ci` in clients/node first
(scripts/check.sh does).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from analysis.logquery import table_from_stream
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from service.server import Running, create_server
from tests.service_helpers import Stub, query_token_of

ROOT = Path(__file__).resolve().parent.parent
CLIENT_DIR = ROOT / "clients" / "node"
PLAY = CLIENT_DIR / "play.js"
RUN_TIMEOUT = 120.0
RPC_TIMEOUT = 10.0


def node_command() -> list[str]:
    """The command that runs play.js, or a failure that says what to install."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("Node.js is not installed: the Node client test needs `node` (version 18+)")
    if not (CLIENT_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.fail(
            "clients/node/node_modules is missing: run "
            "`cd clients/node && npm ci --no-audit --no-fund` (scripts/check.sh does this)"
        )
    return [node, str(PLAY)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    running = create_server("127.0.0.1:0", tmp_path_factory.mktemp("node") / "events.duckdb")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def stub(server: Running) -> Iterator[sniff_pb2_grpc.SniffServiceStub]:
    with grpc.insecure_channel(server.address) as channel:
        yield Stub(channel, server.query_token)


def query(stub: sniff_pb2_grpc.SniffServiceStub, sql: str, *values: str) -> list[dict[str, Any]]:
    parameters = [pb.QueryParameter(string_value=v) for v in values]
    request = pb.QueryRequest(sql=sql, parameters=parameters, token=query_token_of(stub))
    chunks = stub.Query(request, timeout=RPC_TIMEOUT)
    table = table_from_stream(chunks)
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def run_client(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*node_command(), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_node_client_plays_a_whole_match(
    server: Running, stub: sniff_pb2_grpc.SniffServiceStub, seats: int
) -> None:
    done = run_client(server.address, str(seats))
    assert done.returncode == 0, f"play.js failed ({done.returncode}): {done.stderr.strip()}"
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout
    summary = json.loads(lines[0])
    assert summary["ok"] is True
    assert summary["seats"] == seats
    match_id = summary["match_id"]
    moves, rounds, winner, scores = (
        summary["moves"],
        summary["rounds"],
        summary["winner"],
        summary["scores"],
    )
    assert 0 < moves < 5000
    assert rounds >= 1
    assert len(scores) == seats
    target = 250 if seats == 2 else 200
    assert scores[winner] >= target
    tally = summary["tally"]
    assert tally["lead"] == rounds
    assert tally["lead"] + tally["place"] + tally["draw"] + tally["pass"] == moves
    # Every round but the last ends by a domino or a block; the last is cut short by the win.
    assert tally["domino"] + tally["blocked"] == rounds - 1
    assert tally["refusals"] > 0

    # The event log holds exactly what the client played.
    counts = query(
        stub,
        "SELECT count(*) FILTER (WHERE kind = 'action') AS actions,"
        " count(*) FILTER (WHERE kind = 'round_dealt') AS deals,"
        " count(*) FILTER (WHERE kind = 'round_ended') AS round_ends,"
        " count(*) FILTER (WHERE kind = 'match_ended') AS ends"
        " FROM events WHERE match_id = ?",
        match_id,
    )
    assert counts == [{"actions": moves, "deals": rounds, "round_ends": rounds - 1, "ends": 1}]
    kinds = query(
        stub,
        "SELECT move_type, count(*) AS n FROM actions WHERE match_id = ? GROUP BY ALL",
        match_id,
    )
    assert {r["move_type"]: r["n"] for r in kinds} == {
        k: tally[k] for k in ("lead", "place", "draw", "pass") if tally[k]
    }
    match = query(
        stub,
        "SELECT seats, target, finished, winner, scores FROM matches WHERE match_id = ?",
        match_id,
    )
    assert match == [
        {"seats": seats, "target": target, "finished": True, "winner": winner, "scores": scores}
    ]


def test_node_client_fails_loudly_without_a_server() -> None:
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
    done = run_client(address, "2")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "UNAVAILABLE" in done.stderr

"""The Go sample bot (clients/go, `playbot`) plays whole matches against a real server.

`clients/go/build.sh` generates the Go code of proto/sniff/v1/sniff.proto into a
temporary GOPATH and builds the bot offline against the distribution's Go gRPC
libraries (scripts/install_go.sh installs them; scripts/check.sh runs it). The
bot's `greedy` and `random` policies draw their ties from the documented
generator seeded as the engine seeds its bots, so a match it plays over the
service makes, move for move, the match the same bots play in this process.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from analysis.bot_matches import bot_match
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.server import Tls, create_server
from tests.helpers import HANG, need_go, wait_until
from tests.service_helpers import (
    REPO,
    ServerProcess,
    Service,
    Stub,
    create,
    query,
    self_signed_certificate,
    serving,
    state,
)

BUILD = REPO / "clients" / "go" / "build.sh"
SOURCES = REPO / "clients" / "go" / "playbot"
BUILD_TIMEOUT = 600.0
"""A first build compiles the gRPC library: minutes on a loaded 2-core machine."""
RUN_TIMEOUT = 120.0

pytestmark = pytest.mark.go


@pytest.fixture(scope="module")
def playbot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bot, built by clients/go/build.sh into a temporary directory."""
    need_go()
    out = tmp_path_factory.mktemp("go") / "playbot"
    done = subprocess.run(
        ["bash", str(BUILD)],
        env={**os.environ, "PLAYBOT_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"build.sh failed:\n{done.stdout}{done.stderr}"
    assert done.stdout.strip().splitlines()[-1] == str(out)
    return out


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with serving(tmp_path_factory.mktemp("go") / "events.duckdb", sync=False) as service:
        yield service


def run_bot(playbot: Path, svc: Service, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(playbot), "-addr", svc.address, *args],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )


def played(playbot: Path, svc: Service, *args: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The bot's match lines and its summary line, after a run that must succeed."""
    done = run_bot(playbot, svc, *args)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert "summary" in lines[-1], done.stdout
    return lines[:-1], lines[-1]["summary"]


def in_process(
    seats: int, seed: int, bots: list[str], **options: Any
) -> tuple[list[str], list[int]]:
    """The moves and final scores of the same bot match played in this process."""
    match = bot_match(seats, seed, bots, **options)
    return [str(m) for r in match.history for m in r.actions], list(match.seat_scores())


def logged_moves(svc: Service | Stub, match_id: str) -> list[str]:
    stub = svc.stub if isinstance(svc, Service) else svc
    sql = "SELECT move FROM events WHERE match_id = ? AND kind = 'action' ORDER BY seq"
    return [str(m) for m in query(stub, sql, match_id).column("move").to_pylist()]


def assert_same_as_in_process(
    svc: Service | Stub, result: dict[str, Any], seed: int, bots: list[str], **options: Any
) -> None:
    moves, scores = in_process(result["seats"], seed, bots, **options)
    assert logged_moves(svc, result["match_id"]) == moves
    assert result["actions"] == moves
    assert result["moves"] == len(moves)
    assert result["scores"] == scores


@pytest.mark.parametrize("seats", [2, 4])
def test_go_bot_over_play_makes_the_in_process_greedy_matchs_moves_and_scores(
    playbot: Path, svc: Service, seats: int
) -> None:
    seed = 300 + seats
    matches, summary = played(
        playbot, svc, "-seats", str(seats), "-seed", str(seed), "-matches", "2"
    )
    assert len(matches) == 2
    for i, result in enumerate(matches):
        assert result["seats"] == seats
        assert result["streams"] == 1
        assert_same_as_in_process(svc, result, seed + i, ["greedy"])
    assert summary["moves"] == sum(m["moves"] for m in matches)


@pytest.mark.parametrize("variant", ["stubby", "berndt", "british"])
def test_go_greedy_scores_the_sniff_of_every_variant_as_the_engine_does(
    playbot: Path, svc: Service, variant: str
) -> None:
    """Greedy's choices hang on the points each move would score, the Sniff's above all."""
    args = ("-seats", "3", "-seed", "41", "-variant", variant, "-round-limit", "3")
    (result,), _ = played(playbot, svc, *args, "-policy", "greedy,random")
    opts = {"variant": variant, "round_limit": 3}
    assert_same_as_in_process(svc, result, 41, ["greedy", "random"], **opts)


def test_go_bot_in_the_unary_loop_makes_the_same_moves(playbot: Path, svc: Service) -> None:
    args = ("-mode", "unary", "-seed", "51", "-matches", "2", "-policy", "greedy,random")
    matches, summary = played(playbot, svc, *args)
    assert summary["mode"] == "unary"
    for i, result in enumerate(matches):
        assert_same_as_in_process(svc, result, 51 + i, ["greedy", "random"])


def test_go_bot_resumes_a_dropped_stream_where_it_left_off(playbot: Path, svc: Service) -> None:
    (result,), _ = played(
        playbot, svc, "-seed", "61", "-drop-after", "25", "-policy", "greedy,random"
    )
    assert result["streams"] == 2
    assert_same_as_in_process(svc, result, 61, ["greedy", "random"])


def test_go_bot_plays_the_seats_it_is_given_by_token(playbot: Path, svc: Service) -> None:
    created = create(svc.stub, 2, seed=71)
    seats = [a for t in created.seat_tokens for a in ("-seat", f"{created.match_id}:{t}")]
    (result,), _ = played(playbot, svc, *seats, "-seed", "71", "-policy", "random")
    assert result["match_id"] == created.match_id
    assert_same_as_in_process(svc, result, 71, ["random"])


def test_go_bot_carries_on_after_the_service_is_killed_and_restarted(
    playbot: Path, tmp_path: Path
) -> None:
    """The bot's stream fails with UNAVAILABLE; it reconnects to the service restarted on the
    same log and address, and resumes the match from the last action it saw."""
    server = ServerProcess(tmp_path / "events.duckdb", tmp_path).start()
    bot: subprocess.Popen[str] | None = None
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = Stub(channel, server.query_token)
            created = create(stub, 2, seed=95)
            seats = [a for t in created.seat_tokens for a in ("-seat", f"{created.match_id}:{t}")]
            args = ["-seed", "95", "-policy", "greedy,random", "-think", "5ms", "-retries", "12"]
            bot = subprocess.Popen(
                [str(playbot), "-addr", server.address, *seats, *args, "-backoff", "100ms"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            token = created.seat_tokens[0]
            wait_until(lambda: state(stub, created.match_id, token).move_count >= 20, "20 moves")
        assert server.proc is not None
        server.proc.kill()  # SIGKILL: acknowledged actions are in the journal, nothing else
        server.proc.wait(timeout=HANG)
        server.start(same_port=True)
        out, err = bot.communicate(timeout=RUN_TIMEOUT)
        assert bot.returncode == 0, err
        (result,) = [json.loads(line) for line in out.splitlines()][:-1]
        assert result["streams"] >= 2
        with grpc.insecure_channel(server.address) as channel:
            stub = Stub(channel, server.query_token)
            assert_same_as_in_process(stub, result, 95, ["greedy", "random"])
    finally:
        if bot is not None and bot.poll() is None:
            bot.kill()
            bot.communicate()
        server.close()


@pytest.mark.parametrize(
    ("token", "status"),
    [("not-a-token", "UNAUTHENTICATED"), (None, "PERMISSION_DENIED")],
)
def test_go_bot_with_a_bad_token_exits_with_the_documented_status(
    playbot: Path, svc: Service, token: str | None, status: str
) -> None:
    created: pb.CreateMatchResponse = create(svc.stub, 2, seed=81)
    done = run_bot(playbot, svc, "-seat", f"{created.match_id}:{token or created.observer_token}")
    assert done.returncode == 1
    assert done.stderr.startswith(f"playbot: {status}: "), done.stderr
    assert done.stdout == ""


def test_go_bot_plays_over_tls_trusting_the_services_certificate(
    playbot: Path, tmp_path: Path
) -> None:
    cert, key = self_signed_certificate(tmp_path)
    other, _ = self_signed_certificate(tmp_path, "other")
    running = create_server(
        "127.0.0.1:0", tmp_path / "events.duckdb", tls=Tls.from_files(cert, key)
    )
    try:
        credentials = grpc.ssl_channel_credentials(cert.read_bytes())
        with grpc.secure_channel(running.address, credentials) as channel:
            stub = Stub(channel, running.query_token)
            args = ["-addr", running.address, "-seed", "97", "-round-limit", "2"]
            done = subprocess.run(
                [str(playbot), *args, "-tls-ca", str(cert)],
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT,
                check=False,
            )
            assert done.returncode == 0, done.stderr
            result = json.loads(done.stdout.splitlines()[0])
            assert_same_as_in_process(stub, result, 97, ["greedy"], round_limit=2)
        for refused in ([], ["-tls-ca", str(other)]):  # plaintext, or the wrong CA
            done = subprocess.run(
                [str(playbot), *args, *refused],
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT,
                check=False,
            )
            assert done.returncode == 1
            assert done.stderr.startswith("playbot: UNAVAILABLE: "), done.stderr
    finally:
        running.stop()


def test_go_bots_time_the_round_trip_of_every_decision(playbot: Path, svc: Service) -> None:
    matches, summary = played(playbot, svc, "-bots", "4", "-seed", "91", "-round-limit", "2")
    assert summary["mode"] == "many"
    assert len(matches) == 2
    decisions = sum(m["decisions"] for m in matches)
    assert len(summary["round_trips"]) == decisions
    assert all(0 < rt < RUN_TIMEOUT for rt in summary["round_trips"])
    for i, result in enumerate(matches):
        assert_same_as_in_process(svc, result, 91 + i, ["greedy"], round_limit=2)


def test_go_sources_are_gofmt_clean(playbot: Path) -> None:
    done = subprocess.run(["gofmt", "-l", str(SOURCES)], capture_output=True, text=True, check=True)
    assert done.stdout == ""

"""The Node.js clients (clients/node) play whole matches against a real server.

`conformance.js` knows nothing but the public contract (proto/sniff/v1/sniff.proto,
loaded at run time) and checks every reply itself; this test runs it for 2, 3
and 4 seats and cross-checks its summary against the server's event log.
`play.js` is the sample a user would copy; it plays a match in plaintext and
over TLS. `play_stream.js` is the sample bot over the Play stream.

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
from service.rpc.server import Running, Tls, create_server
from tests.helpers import absent
from tests.service_helpers import Stub, query_token_of, self_signed_certificate

ROOT = Path(__file__).resolve().parent.parent
CLIENT_DIR = ROOT / "clients" / "node"
PLAY = CLIENT_DIR / "play.js"
CONFORMANCE = CLIENT_DIR / "conformance.js"
RUN_TIMEOUT = 120.0
RPC_TIMEOUT = 10.0

pytestmark = pytest.mark.node


def node_command(script: Path = CONFORMANCE) -> list[str]:
    """The command that runs a client script, or a failure that says what to install."""
    node = shutil.which("node")
    if node is None:
        absent("Node.js", "install `node` (version 18+)")
    if not (CLIENT_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        absent(
            "clients/node/node_modules",
            "run `cd clients/node && npm ci --no-audit --no-fund` (scripts/check.sh does this)",
        )
    assert node is not None
    return [node, str(script)]


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


def run_client(*args: str, script: Path = CONFORMANCE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*node_command(script), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )


PROVABLE = CLIENT_DIR / "provable.js"


def check_chain_in_node(
    stub: sniff_pb2_grpc.SniffServiceStub, match_id: str, head: str, tmp_path: Path
) -> None:
    """Node recomputes the match's chain from its logged events to the head it was given;
    the same events with one figure changed do not give it."""
    rows = query(
        stub,
        "SELECT match_id, seq, kind, round, action_index, seat, move, drawn, points, ends_sum,"
        " CAST(detail AS VARCHAR) AS detail, lower(hex(hash)) AS hash"
        " FROM events_all WHERE match_id = ? ORDER BY seq",
        match_id,
    )
    assert rows[-1]["hash"] == head
    good = tmp_path / f"{match_id}.json"
    good.write_text(json.dumps(rows))
    done = run_client("chain", str(good), script=PROVABLE)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["head"] == head
    edited = [dict(r) for r in rows]
    at = next(i for i, r in enumerate(edited) if r["points"])
    edited[at]["points"] += 5
    bad = tmp_path / f"{match_id}-edited.json"
    bad.write_text(json.dumps(edited))
    done = run_client("chain", str(bad), script=PROVABLE)
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["head"] != head
    assert result["failures"][0].startswith(f"event {at}:")


def test_node_recomputes_the_deal_chain_seat_entropy_and_tournament_vectors_of_the_docs() -> None:
    done = run_client("vectors", script=PROVABLE)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result == {
        "ok": True,
        "deals": 4,
        "events": 4,
        "seat_entropy": 3,
        "tournaments": 3,
        "failures": [],
    }


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_node_client_plays_a_whole_match(
    server: Running, stub: sniff_pb2_grpc.SniffServiceStub, seats: int, tmp_path: Path
) -> None:
    done = run_client(server.address, str(seats))
    assert done.returncode == 0, f"conformance.js failed ({done.returncode}): {done.stderr}"
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
    # Node recomputed every deal from the revealed seed, and the chain it was handed
    assert summary["deals_checked"] == rounds
    assert len(summary["heads"]) == rounds  # each round end, and the match end
    last = query(stub, "SELECT max(seq) AS seq FROM events WHERE match_id = ?", match_id)
    assert summary["chain_head_sequence"] == last[0]["seq"]  # the match end's event
    check_chain_in_node(stub, match_id, summary["chain_head"], tmp_path)
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
    for script in (CONFORMANCE, PLAY):
        done = run_client(address, "2", script=script)
        assert done.returncode == 1
        assert done.stdout == ""
        assert "UNAVAILABLE" in done.stderr


def check_sample(stub: sniff_pb2_grpc.SniffServiceStub, done: Any, seats: int) -> None:
    assert done.returncode == 0, f"play.js failed ({done.returncode}): {done.stderr}"
    result = json.loads(done.stdout)
    assert result["seats"] == seats
    rows = query(
        stub,
        "SELECT winner, scores, finished FROM matches WHERE match_id = ?",
        result["match_id"],
    )
    assert rows == [{"winner": result["winner"], "scores": result["scores"], "finished": True}]
    actions = query(
        stub, "SELECT count(*) AS n FROM actions WHERE match_id = ?", result["match_id"]
    )
    assert actions == [{"n": result["moves"]}]


def test_the_sample_client_plays_a_match(
    server: Running, stub: sniff_pb2_grpc.SniffServiceStub
) -> None:
    check_sample(stub, run_client(server.address, "3", "5", script=PLAY), 3)


def test_the_sample_client_plays_over_tls_with_the_services_certificate(
    tmp_path: Path,
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
            done = run_client(running.address, "2", "9", "--tls-ca", str(cert), script=PLAY)
            check_sample(stub, done, 2)
            done = run_client(running.address, "4", "--tls-ca", str(cert))
            assert done.returncode == 0, done.stderr  # the conformance checks pass over TLS too
        for refused in ([], ["--tls-ca", str(other)]):  # plaintext, or the wrong CA
            done = run_client(running.address, "2", *refused, script=PLAY)
            assert done.returncode == 1
            assert "UNAVAILABLE" in done.stderr
    finally:
        running.stop()


@pytest.mark.parametrize("variant", ["american", "stubby", "berndt", "british"])
def test_the_sample_client_plays_each_variant(
    server: Running, stub: sniff_pb2_grpc.SniffServiceStub, variant: str
) -> None:
    done = run_client(
        server.address, "4", "11", "--variant", variant, "--round-limit", "2", script=PLAY
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["variant"] == f"VARIANT_{variant.upper()}"
    logged = query(
        stub,
        "SELECT detail ->> '$.variant' AS variant, detail ->> '$.round_limit' AS round_limit "
        "FROM events_all WHERE match_id = ? AND kind = 'match_created'",
        result["match_id"],
    )
    assert logged == [{"variant": variant, "round_limit": "2"}]
    end = query(
        stub,
        "SELECT detail ->> '$.winner' AS winner, detail -> '$.scores' AS scores FROM events_all "
        "WHERE match_id = ? AND kind = 'match_ended'",
        result["match_id"],
    )
    winner = None if end[0]["winner"] is None else int(end[0]["winner"])
    assert winner == result["winner"]
    assert json.loads(end[0]["scores"]) == result["scores"]


# -- the engine as a service: AnalyzePosition from Node.js ------------------------------------

ANALYZE = CLIENT_DIR / "analyze.js"


def example_position() -> dict[str, Any]:
    """The sample's built-in position, as the sample itself exports it."""
    done = subprocess.run(
        [
            *node_command(ANALYZE)[:1],
            "-e",
            f"process.stdout.write(JSON.stringify(require({str(ANALYZE)!r}).EXAMPLE))",
        ],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=True,
    )
    position: dict[str, Any] = json.loads(done.stdout)
    return position


def test_the_analyze_sample_ranks_a_position_with_no_match_on_the_server(
    server: Running, stub: sniff_pb2_grpc.SniffServiceStub
) -> None:
    from sniff import Move, Tile, variant_named
    from sniff.position import seat_position
    from sniff.rollout import equities

    matches = query(stub, "SELECT count(*) AS n FROM events WHERE kind = 'match_created'")
    done = run_client(server.address, "--rollouts", "300", "--seed", "5", script=ANALYZE)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["rollouts"] == 300
    assert reply["seed"] == "5"
    assert reply["policy"] == "PLAYOUT_POLICY_GREEDY"
    # The same figures as the engine in this process, from the same picture of the round.
    p = example_position()
    seen = seat_position(
        variant=variant_named(p["variant"]),
        seats=p["seat_count"],
        target=250,
        scores=p["scores"],
        viewer=p["viewer_seat"],
        leader=p["leader"],
        hand=[Tile.parse(t) for t in p["hand"]],
        actions=[Move.parse(a) for a in p["actions"]],
        own_draws=[Tile.parse(t) for t in p["own_draws"]],
        hand_sizes=p["hand_sizes"],
    )
    expected = equities(seen, rollouts=300, seed=5)
    assert [(m["move"], m["equity"], m["standard_error"]) for m in reply["moves"]] == [
        (str(e.move), e.equity, e.se) for e in expected.moves
    ]
    # Stateless: the service holds no new match.
    assert query(stub, "SELECT count(*) AS n FROM events WHERE kind = 'match_created'") == matches


def test_the_analyze_sample_shows_why_a_position_is_refused(
    server: Running, tmp_path: Path
) -> None:
    position = example_position()
    position["hand_sizes"] = [5, 2]
    path = tmp_path / "position.json"
    path.write_text(json.dumps(position))
    done = run_client(server.address, str(path), "--rollouts", "50", script=ANALYZE)
    assert done.returncode == 1
    assert done.stdout == ""
    assert "INVALID_ARGUMENT ERROR_REASON_BAD_ARGUMENT (field hand_sizes)" in done.stderr
    assert "do not add up" in done.stderr
    done = run_client(server.address, "--rollouts", "0", script=ANALYZE)
    assert done.returncode == 1
    assert "(field budget.rollouts)" in done.stderr


PLAY_STREAM = CLIENT_DIR / "play_stream.js"


@pytest.mark.parametrize("seats", [2, 3])
def test_the_play_stream_sample_plays_matches_over_one_stream(
    server: Running, stub: sniff_pb2_grpc.SniffServiceStub, seats: int
) -> None:
    """Built from the proto alone, it plays three matches on one Play stream; each result it
    read on the stream is the log's: every action, and the final scores."""
    done = run_client(server.address, str(seats), "11", "3", script=PLAY_STREAM)
    assert done.returncode == 0, done.stdout + done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == 3
    for result in results:
        match_id = result["match_id"]
        sql = "SELECT count(*) AS n FROM events WHERE match_id = ? AND kind = 'action'"
        assert query(stub, sql, match_id)[0]["n"] == result["moves"] > 0
        sql = "SELECT CAST(detail AS VARCHAR) AS d FROM events WHERE match_id = ? AND kind = ?"
        (ended,) = query(stub, sql, match_id, "match_ended")
        assert json.loads(ended["d"])["scores"] == result["scores"]
        assert result["decisions"] == result["moves"] + result["rounds"] - 1  # and each deal
    assert results[0]["messages"] < sum(r["decisions"] for r in results)  # shared messages


ENDED_DETAIL = "SELECT CAST(detail AS VARCHAR) AS d FROM events WHERE match_id = ? AND kind = ?"


def seat_nodebot_against_alice(stub: sniff_pb2_grpc.SniffServiceStub, seed: int) -> None:
    """A one-round match, seat 0 handed to the Node bot and seat 1 to alice."""
    from tests.arena_helpers import ARENA

    request = pb.CreateMatchRequest(
        seat_count=2, seed=seed, round_limit=1, players=["nodebot", "alice"]
    )
    created = stub.CreateMatch(request, timeout=RPC_TIMEOUT)
    seats = [
        pb.ArenaSeat(match_id=created.match_id, token=token, bot=name, bot_seed=seed)
        for name, token in zip(request.players, created.seat_tokens, strict=True)
    ]
    stub.SeatArenaBots(pb.SeatArenaBotsRequest(seats=seats), metadata=ARENA, timeout=RPC_TIMEOUT)


def test_the_play_stream_sample_plays_as_an_arena_bot(tmp_path: Path) -> None:
    """With --arena it registers instead of opening seats and plays the seats it is handed:
    two matches against the Python arena bot, each result it read the log's."""
    from tests.arena_helpers import ARENA, KEY, arena_bots
    from tests.helpers import wait_until

    key_file = tmp_path / "arena.key"
    key_file.write_text(KEY)
    running = create_server(
        "127.0.0.1:0", tmp_path / "events.duckdb", sync=False, arena_key=KEY.encode()
    )
    try:
        with grpc.insecure_channel(running.address) as channel:
            stub = Stub(channel, running.query_token)
            argv = [running.address, "--arena", "nodebot", "--arena-key-file", str(key_file)]
            node = subprocess.Popen(
                [*node_command(PLAY_STREAM), *argv, "--arena-matches", "2"],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )

            def bots() -> set[str]:
                reply = stub.ListArenaBots(pb.ListArenaBotsRequest(), metadata=ARENA, timeout=5)
                return {b.name for b in reply.bots}

            wait_until(lambda: "nodebot" in bots(), "the Node bot registered")
            with arena_bots(running.address, {"alice": "greedy"}):
                for seed in (3, 4):
                    seat_nodebot_against_alice(stub, seed)
                out, err = node.communicate(timeout=RUN_TIMEOUT)
            assert node.returncode == 0, out + err
            results = [json.loads(line) for line in out.splitlines()]
            assert len(results) == 2
            for result in results:
                match_id = result["match_id"]
                sql = "SELECT count(*) AS n FROM events WHERE match_id = ? AND kind = 'action'"
                assert query(stub, sql, match_id)[0]["n"] == result["moves"] > 0
                sql = ENDED_DETAIL
                (ended,) = query(stub, sql, match_id, "match_ended")
                assert json.loads(ended["d"])["scores"] == result["scores"]
    finally:
        running.stop()

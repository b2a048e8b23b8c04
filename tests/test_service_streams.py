"""Open streams cost the service no thread, are bounded, and end when it stops.

Real server (in-process, 127.0.0.1, port 0), real channels, real DuckDB file.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, cast

import grpc
import pytest
from grpc_health.v1 import health_pb2

from analysis.remote import health_client
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.watch_stream import MAX_WATCH_STREAMS_PER_MATCH, MAX_WATCH_STREAMS_PER_TOKEN
from tests.helpers import wait_until
from tests.service_helpers import (
    RPC_TIMEOUT,
    Service,
    Stub,
    assert_refused,
    create,
    error_info,
    query,
    rpc_error,
    serving,
    state,
)

IDLE_STREAMS = 1_000


def open_watch(stub: Stub, match_id: str, token: str) -> Any:
    """A WatchMatch stream that has delivered its first event (so the server holds it)."""
    call = stub.WatchMatch(pb.WatchMatchRequest(match_id=match_id, token=token), timeout=120)
    first = next(call)
    assert first.event.sequence == 0
    return call


@pytest.mark.slow
def test_a_thousand_idle_watch_streams_leave_every_other_call_prompt(svc: Service) -> None:
    stub = svc.stub
    threads_before = threading.active_count()
    per_token = 10
    matches = [create(stub, 4, seed=100 + i) for i in range(IDLE_STREAMS // (5 * per_token))]
    channels = [grpc.insecure_channel(svc.address) for _ in range(10)]
    calls = []
    try:
        for i, created in enumerate(matches):
            watcher = Stub(channels[i % len(channels)])
            for token in (*created.seat_tokens, created.observer_token):
                calls += [open_watch(watcher, created.match_id, token) for _ in range(per_token)]
        assert len(calls) == IDLE_STREAMS
        assert svc.running.servicer.streams.total == IDLE_STREAMS
        # No thread per stream: the process has about as many threads as before.
        assert threading.active_count() < threads_before + 50

        # Every other call is answered while they wait (a thread per stream would starve them).
        target = matches[0]
        seat = target.turn
        moves = stub.ListLegalMoves(
            pb.ListLegalMovesRequest(
                match_id=target.match_id, token=target.seat_tokens[seat], seat=seat
            ),
            timeout=RPC_TIMEOUT,
        ).moves
        reply = stub.ApplyMove(
            pb.ApplyMoveRequest(
                match_id=target.match_id,
                token=target.seat_tokens[seat],
                seat=seat,
                notation=moves[0].notation,
                expected_move_count=0,
            ),
            timeout=RPC_TIMEOUT,
        )
        assert reply.move_count == 1
        # ... and the waiting streams of that match hear of the move at once.
        for call in calls[:5]:
            received = [next(call).event for _ in range(2)]  # the deal, then the action
            assert received[-1].WhichOneof("kind") == "action_applied"
        fresh = stub.CreateMatch(pb.CreateMatchRequest(seat_count=2, seed=1), timeout=RPC_TIMEOUT)
        token = fresh.observer_token
        stub.GetState(pb.GetStateRequest(match_id=fresh.match_id, token=token), timeout=RPC_TIMEOUT)
        stub.GetScores(
            pb.GetScoresRequest(match_id=fresh.match_id, token=token), timeout=RPC_TIMEOUT
        )
        stub.ScoreLayout(
            pb.ScoreLayoutRequest(placements=[pb.Placement(notation="1-4")]), timeout=RPC_TIMEOUT
        )
        exc = rpc_error(
            stub.DealRound,
            pb.DealRoundRequest(match_id=fresh.match_id, token=token),
            timeout=RPC_TIMEOUT,
        )
        assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION  # a round is in play
        one = stub.WatchMatch(
            pb.WatchMatchRequest(match_id=fresh.match_id, token=token), timeout=RPC_TIMEOUT
        )
        assert next(one).event.sequence == 0
        one.cancel()
        request = pb.QueryRequest(sql="SELECT count(*) AS n FROM events", token=stub.query_token)
        assert list(stub.Query(request, timeout=RPC_TIMEOUT))
        health = health_client(svc.channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=RPC_TIMEOUT
        )
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        for call in calls:
            call.cancel()
        for channel in channels:
            channel.close()
    wait_until(lambda: svc.running.servicer.streams.total == 0, "every stream has ended")


@pytest.mark.slow
def test_watch_streams_are_bounded_per_token_and_per_match(svc: Service) -> None:
    stub = svc.stub
    created = create(stub, 4, seed=3)
    mid = created.match_id
    tokens = [*created.seat_tokens, created.observer_token]
    calls = [open_watch(stub, mid, tokens[0]) for _ in range(MAX_WATCH_STREAMS_PER_TOKEN)]
    try:
        exc = rpc_error(stub.WatchMatch, pb.WatchMatchRequest(match_id=mid, token=tokens[0]))
        assert_refused(
            exc, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_LIMIT_REACHED", "token"
        )
        assert error_info(exc).metadata["limit"] == "watch_streams_per_token"
        # Other tokens of the match may still watch, up to the match's bound.
        others = iter(t for t in tokens[1:] for _ in range(MAX_WATCH_STREAMS_PER_TOKEN))
        while len(calls) < MAX_WATCH_STREAMS_PER_MATCH:
            calls.append(open_watch(stub, mid, next(others)))
        exc = rpc_error(stub.WatchMatch, pb.WatchMatchRequest(match_id=mid, token=tokens[-1]))
        assert_refused(
            exc, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_LIMIT_REACHED", "match"
        )
        assert error_info(exc).metadata["limit"] == "watch_streams_per_match"
        # Another match is not affected.
        other = create(stub, 2, seed=4)
        calls.append(open_watch(stub, other.match_id, other.observer_token))
        # A closed stream frees its place.
        calls.pop(0).cancel()
        wait_until(
            lambda: svc.running.servicer.streams.per_token[(mid, 0)] < 16, "the place is free"
        )
        calls.append(open_watch(stub, mid, tokens[0]))
    finally:
        for call in calls:
            call.cancel()
    wait_until(lambda: svc.running.servicer.streams.total == 0, "every stream has ended")


def test_stopping_ends_idle_watch_streams_at_once(tmp_path: Path) -> None:
    with serving(tmp_path / "events.duckdb") as service:
        created = create(service.stub, 2, seed=5)
        calls = [open_watch(service.stub, created.match_id, created.observer_token)]
        calls.append(open_watch(service.stub, created.match_id, created.seat_tokens[0]))
        # A grace period of an hour: the streams end, and the stop returns, only if stopping
        # ends idle streams itself.
        stopping = threading.Thread(target=service.running.stop, kwargs={"grace": 3600.0})
        stopping.start()
        for call in calls:
            with pytest.raises(grpc.RpcError) as info:
                for _ in call:
                    pass
            assert info.value.code() == grpc.StatusCode.UNAVAILABLE
        wait_until(lambda: not stopping.is_alive(), "the server stops")


def test_cancelled_watchers_leave_the_match_playable(svc: Service) -> None:
    stub = svc.stub
    created = create(stub, 2, seed=6)
    for _ in range(3):
        call = open_watch(stub, created.match_id, created.observer_token)
        call.cancel()
    wait_until(lambda: svc.running.servicer.streams.total == 0, "every stream has ended")
    st = state(stub, created.match_id, created.observer_token)
    assert st.phase == pb.MATCH_PHASE_PLAYING
    assert query(stub, "SELECT count(*) AS n FROM events").column("n")[0].as_py() == 2


def test_health_and_reflection_answer_on_the_asyncio_server(svc: Service) -> None:
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    stub = reflection_pb2_grpc.ServerReflectionStub(svc.channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    info = cast(  # its stub types the method as binascii.Incomplete
        "grpc.StreamStreamMultiCallable[reflection_pb2.ServerReflectionRequest, "
        "reflection_pb2.ServerReflectionResponse]",
        stub.ServerReflectionInfo,
    )
    (reply,) = list(info(iter([request]), timeout=10))
    names = {s.name for s in reply.list_services_response.service}
    assert {"sniff.v1.SniffService", "grpc.health.v1.Health"} <= names
    for service in ("", "sniff.v1.SniffService"):
        health = health_client(svc.channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=10
        )
        assert health.status == health_pb2.HealthCheckResponse.SERVING

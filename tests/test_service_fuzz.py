"""Extreme values in every field of every RPC: clean refusals, no broken view, a healthy server.

Hypothesis builds requests from extreme numbers (0, 1, the bounds and one
past them, 2^31, 2^32-1, 2^63-1, 2^64-1), extreme strings (empty, huge,
unicode, NUL, almost-ids) and real ids and tokens, and sends them to a real
server. Every call must succeed or fail with a deliberate status (never
INTERNAL or UNKNOWN); afterwards every view of the log reads whole through
the Query RPC, and the server still answers its health check.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, cast

import grpc
import pytest
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.remote import health_client
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from tests.helpers import example_count
from tests.service_helpers import Service, create, play_to_end, query

pytestmark = pytest.mark.slow

U32 = [0, 1, 2, 3, 4, 5, 6, 7, 9_999, 10_000, 10_001, 2**31 - 1, 2**31, 2**32 - 1]
U64 = [*U32, 2**53, 2**63 - 1, 2**63, 2**64 - 1]
I64 = [0, -1, 1, -(2**63), 2**63 - 1, 2**31, -(2**31) - 1]
TEXTS = [
    "",
    "x",
    "0123456789abcdef",
    "0123456789ABCDEF",
    "é☃😀" * 4,
    "\x00" * 16,
    "draw",
    "pass",
    "1-4",
    "6-6@1-6:high",
    "7-9@0-0:sideways",
    "' OR 1=1 --",
    "x" * 300,
    "y" * 100_001,
]
VIEWS = ["matches", "deals", "actions", "round_ends", "match_ends", "events"]
ALLOWED = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.DEADLINE_EXCEEDED,  # a WatchMatch that is (rightly) still waiting
}

u32 = st.sampled_from(U32)
u64 = st.sampled_from(U64)


@pytest.fixture(scope="module")
def svc(shared_svc: Service) -> Service:
    """One server for the whole module."""
    return shared_svc


@pytest.fixture(scope="module")
def known(svc: Service) -> pb.CreateMatchResponse:
    """A match in play whose id and tokens the fuzzer mixes in; and a finished one beside it,
    so every view has rows."""
    finished = create(svc.stub, 2, seed=12, target=40)
    play_to_end(svc.stub, finished, random.Random(12))
    return create(svc.stub, 4, seed=11)


def texts(known: pb.CreateMatchResponse) -> st.SearchStrategy[str]:
    """Extreme strings, and the real id and tokens so calls get past the first checks."""
    real = [known.match_id, known.observer_token, *known.seat_tokens]
    return st.sampled_from(TEXTS + real) | st.text(max_size=40)


tiles = st.builds(pb.Tile, low=u32, high=u32)
sides = st.sampled_from([0, 1, 6, 7, 2**31 - 1])


def moves() -> st.SearchStrategy[pb.Move]:
    return st.one_of(
        st.builds(lambda t: pb.Move(lead=pb.Move.Lead(tile=t)), tiles),
        st.builds(
            lambda t, b, s: pb.Move(place=pb.Move.Place(tile=t, board_tile=b, side=s)),
            tiles,
            tiles,
            sides,
        ),
        st.just(pb.Move(draw=pb.Move.Draw())),
        st.just(pb.Move(**cast(dict[str, Any], {"pass": pb.Move.Pass()}))),
        st.just(pb.Move()),
    )


deals = st.builds(
    lambda hands, boneyard, leader: pb.Deal(
        hands=[pb.Hand(tiles=h) for h in hands], boneyard_tiles=boneyard, leader=leader
    ),
    st.lists(st.lists(tiles, max_size=9), max_size=6),
    st.lists(tiles, max_size=30),
    u32,
)


def requests(known: pb.CreateMatchResponse) -> st.SearchStrategy[tuple[str, Message]]:
    text = texts(known)

    def create_match(seats: int, target: int | None, seed: int | None, deal: Any) -> Message:
        msg = pb.CreateMatchRequest(seat_count=seats)
        if target is not None:
            msg.target = target
        if seed is not None:
            msg.seed = seed
        if deal is not None:
            msg.first_deal.CopyFrom(deal)
        return msg

    def apply(mid: str, token: str, seat: int, action: Any, count: int) -> Message:
        msg = pb.ApplyMoveRequest(match_id=mid, token=token, seat=seat, expected_move_count=count)
        if isinstance(action, str):
            msg.notation = action
        elif action is not None:
            msg.move.CopyFrom(action)
        return msg

    def deal_round(mid: str, token: str, deal: Any) -> Message:
        msg = pb.DealRoundRequest(match_id=mid, token=token)
        if deal is not None:
            msg.deal.CopyFrom(deal)
        return msg

    def param(value: Any) -> pb.QueryParameter:
        if isinstance(value, bool):
            return pb.QueryParameter(bool_value=value)
        if isinstance(value, int):
            return pb.QueryParameter(int64_value=value)
        if isinstance(value, float):
            return pb.QueryParameter(double_value=value)
        if value is None:
            return pb.QueryParameter(null_value="NULL_VALUE")
        return pb.QueryParameter(string_value=value)

    def query_request(sql: str, params: list[Any], token: str) -> Message:
        return pb.QueryRequest(sql=sql, parameters=[param(p) for p in params], token=token)

    params = st.lists(
        st.sampled_from(I64) | st.sampled_from(TEXTS) | st.floats() | st.booleans() | st.none(),
        max_size=3,
    ) | st.just(["a"] * 101)
    sql = st.sampled_from(
        ["SELECT ?", "SELECT ? AS a, ? AS b", "SELECT * FROM matches", "", "x" * 100_001]
    )
    return st.one_of(
        st.tuples(
            st.just("CreateMatch"),
            st.builds(
                create_match,
                u32,
                st.none() | u32,
                st.none() | u64,
                st.none() | deals,
            ),
        ),
        st.tuples(st.just("DealRound"), st.builds(deal_round, text, text, st.none() | deals)),
        st.tuples(
            st.just("ListLegalMoves"),
            st.builds(pb.ListLegalMovesRequest, match_id=text, token=text, seat=u32),
        ),
        st.tuples(
            st.just("ApplyMove"),
            st.builds(apply, text, text, u32, st.none() | text | moves(), u32),
        ),
        st.tuples(
            st.just("ScoreLayout"),
            st.builds(
                lambda ps: pb.ScoreLayoutRequest(placements=ps),
                st.lists(
                    st.builds(lambda n: pb.Placement(notation=n), text)
                    | st.builds(lambda m: pb.Placement(move=m), moves()),
                    max_size=30,
                ),
            ),
        ),
        st.tuples(st.just("GetScores"), st.builds(pb.GetScoresRequest, match_id=text, token=text)),
        st.tuples(st.just("GetState"), st.builds(pb.GetStateRequest, match_id=text, token=text)),
        st.tuples(
            st.just("WatchMatch"),
            st.builds(pb.WatchMatchRequest, match_id=text, token=text, from_sequence=u64),
        ),
        st.tuples(
            st.just("Query"),
            st.builds(query_request, sql, params, st.sampled_from(["", "nope", "QUERY"])),
        ),
    )


def call(svc: Service, method: str, request: Message) -> None:
    """Make the call (a stream is read to its end, or for a moment); fail on an unplanned status."""
    if isinstance(request, pb.QueryRequest) and request.token == "QUERY":
        request.token = svc.stub.query_token
    rpc: Callable[..., Any] = getattr(svc.stub, method)
    failure: grpc.RpcError | None = None
    try:
        if method in ("WatchMatch", "Query"):
            for _ in rpc(request, timeout=0.5 if method == "WatchMatch" else 10):
                pass
        else:
            rpc(request, timeout=10)
    except grpc.RpcError as exc:
        failure = exc
    if failure is not None:
        code = failure.code()
        assert code in ALLOWED, (method, code, failure.details())


def test_extreme_values_in_every_field_are_refused_cleanly_and_break_no_view(
    svc: Service, known: pb.CreateMatchResponse
) -> None:
    @settings(
        max_examples=example_count(400),
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(requests(known))
    def one(item: tuple[str, Message]) -> None:
        call(svc, *item)

    one()
    for view in VIEWS:
        table = query(svc.stub, f"SELECT * FROM {view}")
        assert table.num_rows >= 1, view
    # The seed of a match in play is hidden by `matches`; `matches_all` shows every one.
    matches = query(svc.stub, "SELECT target, seed FROM matches_all").to_pylist()
    assert all(5 <= m["target"] <= 10_000 for m in matches)
    assert all(0 <= m["seed"] <= 2**64 - 1 for m in matches)
    health = health_client(svc.channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    assert health.status == health_pb2.HealthCheckResponse.SERVING

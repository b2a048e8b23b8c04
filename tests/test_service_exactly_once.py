"""ApplyMove is exactly-once: `expected_move_count` makes a retry safe and a race fair.

A retry of an applied action gets the very same reply and applies nothing; a
stale count is ABORTED; of many real clients racing for the same count, one
applies and the log holds its action once.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass

import grpc
import pytest

from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from tests.service_helpers import (
    RPC_TIMEOUT,
    Service,
    Stub,
    assert_refused,
    create,
    event_count,
    play_step,
    query,
    rpc_error,
    state,
)

RACERS = 8
RACE_TIMEOUT = 30.0


def counts(stub: Stub, created: pb.CreateMatchResponse) -> tuple[int, int, int]:
    """(move_count, action events, all events) of the match."""
    st = state(stub, created.match_id, created.observer_token)
    return (
        st.move_count,
        event_count(stub, created.match_id, "action"),
        event_count(stub, created.match_id),
    )


def next_request(stub: Stub, created: pb.CreateMatchResponse, pick: int = 0) -> pb.ApplyMoveRequest:
    """A request for the legal move number `pick` of the seat to move, at the current count."""
    st = state(stub, created.match_id, created.observer_token)
    if st.phase == pb.MATCH_PHASE_AWAITING_DEAL:
        stub.DealRound(
            pb.DealRoundRequest(match_id=created.match_id, token=created.observer_token),
            timeout=RPC_TIMEOUT,
        )
        st = state(stub, created.match_id, created.observer_token)
    assert st.phase == pb.MATCH_PHASE_PLAYING
    token = created.seat_tokens[st.turn]
    moves = stub.ListLegalMoves(
        pb.ListLegalMovesRequest(match_id=created.match_id, token=token, seat=st.turn),
        timeout=RPC_TIMEOUT,
    ).moves
    return pb.ApplyMoveRequest(
        match_id=created.match_id,
        token=token,
        seat=st.turn,
        notation=moves[pick % len(moves)].notation,
        expected_move_count=st.move_count,
    )


@pytest.mark.slow
def test_a_retry_gets_the_same_reply_and_applies_nothing(svc: Service) -> None:
    stub = svc.stub
    created = create(stub, 3, seed=31)
    rng = random.Random(31)
    earlier: list[tuple[pb.ApplyMoveRequest, bytes]] = []
    for _ in range(12):
        request = next_request(stub, created, rng.randrange(100))
        first = stub.ApplyMove(request, timeout=RPC_TIMEOUT)
        after = counts(stub, created)
        assert after[0] == request.expected_move_count + 1 == first.move_count
        for _ in range(3):
            again = stub.ApplyMove(request, timeout=RPC_TIMEOUT)
            assert again.SerializeToString() == first.SerializeToString()
        # The same action given as a structured move is the same action.
        structured = pb.ApplyMoveRequest()
        structured.CopyFrom(request)
        structured.move.CopyFrom(first.move)
        assert structured.WhichOneof("action") == "move"
        again = stub.ApplyMove(structured, timeout=RPC_TIMEOUT)
        assert again.SerializeToString() == first.SerializeToString()
        assert counts(stub, created) == after
        earlier.append((request, first.SerializeToString()))
    # An old retry, many actions later, still gets its own original reply.
    before = counts(stub, created)
    for request, reply in earlier:
        assert stub.ApplyMove(request, timeout=RPC_TIMEOUT).SerializeToString() == reply
    assert counts(stub, created) == before


@pytest.mark.slow
def test_a_stale_or_future_count_is_aborted(svc: Service) -> None:
    stub = svc.stub
    created = create(stub, 2, seed=32)
    rng = random.Random(32)
    for _ in range(5):
        assert play_step(stub, created, rng) is not None
    before = counts(stub, created)
    request = next_request(stub, created)
    for expected in (before[0] + 1, before[0] + 100):
        stale = pb.ApplyMoveRequest()
        stale.CopyFrom(request)
        stale.expected_move_count = expected
        exc = rpc_error(stub.ApplyMove, stale)
        assert_refused(exc, grpc.StatusCode.ABORTED, "ERROR_REASON_MOVE_COUNT_MISMATCH")
    for expected in range(before[0]):  # earlier counts: other actions were applied there
        stale = pb.ApplyMoveRequest()
        stale.CopyFrom(request)
        stale.expected_move_count = expected
        exc = rpc_error(stub.ApplyMove, stale)
        assert_refused(exc, grpc.StatusCode.ABORTED, "ERROR_REASON_MOVE_COUNT_MISMATCH")
    assert counts(stub, created) == before
    assert stub.ApplyMove(request, timeout=RPC_TIMEOUT).move_count == before[0] + 1


@dataclass
class Outcome:
    reply: pb.ApplyMoveResponse | None = None
    error: grpc.RpcError | None = None


def race(address: str, requests: list[pb.ApplyMoveRequest]) -> list[Outcome]:
    """Send each request from its own thread and channel, all released at once."""
    channels = [grpc.insecure_channel(address) for _ in requests]
    try:
        stubs = [Stub(ch) for ch in channels]
        for ch in channels:  # connect first, so the race is between calls
            grpc.channel_ready_future(ch).result(timeout=RACE_TIMEOUT)
        outcomes = [Outcome() for _ in requests]
        barrier = threading.Barrier(len(requests), timeout=RACE_TIMEOUT)

        def go(i: int) -> None:
            barrier.wait()
            try:
                outcomes[i].reply = stubs[i].ApplyMove(requests[i], timeout=RACE_TIMEOUT)
            except grpc.RpcError as exc:
                outcomes[i].error = exc

        threads = [threading.Thread(target=go, args=(i,)) for i in range(len(requests))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(RACE_TIMEOUT + 5)
            assert not t.is_alive(), "a racing call did not return"
        return outcomes
    finally:
        for ch in channels:
            ch.close()


def actions_at(stub: Stub, match_id: str, move_count: int) -> list[str]:
    """The logged actions of the match after its first `move_count` ones."""
    table = query(
        stub,
        "SELECT move FROM events WHERE match_id = ? AND kind = 'action' ORDER BY seq OFFSET ?",
        match_id,
        move_count,
    )
    return [str(m) for m in table.column("move").to_pylist()]


@pytest.mark.slow
@pytest.mark.parametrize("seats", [2, 4])
def test_racing_clients_sending_the_same_move_apply_it_once(svc: Service, seats: int) -> None:
    stub = svc.stub
    created = create(stub, seats, seed=33 + seats)
    rng = random.Random(33)
    for _ in range(6):
        request = next_request(stub, created, rng.randrange(100))
        before = counts(stub, created)
        outcomes = race(svc.address, [request] * RACERS)
        replies = [o.reply for o in outcomes if o.reply is not None]
        for o in outcomes:
            if o.error is not None:
                assert_refused(o.error, grpc.StatusCode.ABORTED, "ERROR_REASON_MOVE_COUNT_MISMATCH")
        assert replies, "one racer applies the move"
        assert len({r.SerializeToString() for r in replies}) == 1
        assert replies[0].move_count == before[0] + 1
        assert replies[0].move.notation == request.notation
        after = counts(stub, created)
        assert after[0] == before[0] + 1
        assert after[1] == before[1] + 1
        assert actions_at(stub, created.match_id, before[0]) == [request.notation]


@pytest.mark.slow
def test_racing_clients_sending_different_moves_one_wins(svc: Service) -> None:
    stub = svc.stub
    created = create(stub, 2, seed=34)
    rng = random.Random(34)
    contested = 0
    for _ in range(40):
        if contested >= 5:
            break
        st = state(stub, created.match_id, created.observer_token)
        if st.phase != pb.MATCH_PHASE_PLAYING:
            break
        token = created.seat_tokens[st.turn]
        moves = stub.ListLegalMoves(
            pb.ListLegalMovesRequest(match_id=created.match_id, token=token, seat=st.turn),
            timeout=RPC_TIMEOUT,
        ).moves
        if len(moves) < 2:
            assert play_step(stub, created, rng) is not None
            continue
        contested += 1
        requests = [
            pb.ApplyMoveRequest(
                match_id=created.match_id,
                token=token,
                seat=st.turn,
                notation=moves[i % len(moves)].notation,
                expected_move_count=st.move_count,
            )
            for i in range(RACERS)
        ]
        before = counts(stub, created)
        outcomes = race(svc.address, requests)
        winners = {o.reply.move.notation for o in outcomes if o.reply is not None}
        assert len(winners) == 1, winners
        (winner,) = winners
        for request, o in zip(requests, outcomes, strict=True):
            if request.notation == winner:
                assert o.reply is not None, "the same move as the winner's is a retry"
                assert o.reply.move_count == before[0] + 1
            else:
                assert o.error is not None
                assert_refused(o.error, grpc.StatusCode.ABORTED, "ERROR_REASON_MOVE_COUNT_MISMATCH")
        after = counts(stub, created)
        assert after[:2] == (before[0] + 1, before[1] + 1)
        assert actions_at(stub, created.match_id, before[0]) == [winner]
        last = state(stub, created.match_id, created.observer_token)
        if last.phase == pb.MATCH_PHASE_AWAITING_DEAL:
            stub.DealRound(
                pb.DealRoundRequest(match_id=created.match_id, token=created.observer_token),
                timeout=RPC_TIMEOUT,
            )
    assert contested >= 5, "the match offered too few positions with a choice"


@pytest.mark.slow
def test_moves_of_different_matches_proceed_in_parallel_without_mixing(svc: Service) -> None:
    """Concurrent clients on several matches: each match's log is its own, gap-free."""
    matches = [create(svc.stub, seats, seed=40 + seats) for seats in (2, 3, 4, 2)]
    errors: list[BaseException] = []

    def play(created: pb.CreateMatchResponse, seed: int) -> None:
        try:
            with grpc.insecure_channel(svc.address) as ch:
                stub = Stub(ch)
                rng = random.Random(seed)
                for _ in range(30):
                    assert play_step(stub, created, rng) is not None
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=play, args=(m, i)) for i, m in enumerate(matches)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive()
    assert not errors, errors
    for created in matches:
        table = query(
            svc.stub, "SELECT seq FROM events WHERE match_id = ? ORDER BY seq", created.match_id
        )
        seqs = table.column("seq").to_pylist()
        assert seqs == list(range(len(seqs)))
        assert counts(svc.stub, created)[:2] == (30, 30)

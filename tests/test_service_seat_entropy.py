"""Seat entropy over gRPC: CreateMatch(seat_entropy) deals only once every seat has given its
own 32 bytes (ContributeEntropy), from the seed docs/dealing.md derives; every refusal changes
nothing; a restart forgets contributions before the deal and rebuilds the match after it; the
log audits ok, and an edited contribution is caught."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import duckdb
import grpc
import pytest

from analysis.logaudit import audit_log
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.storage.chain import commitment
from sniff import Match
from sniff.seeds import seat_entropy_seed
from tests.service_helpers import (
    RPC_TIMEOUT,
    Service,
    Stub,
    assert_refused,
    error_info,
    event_count,
    play_step,
    play_to_end,
    rpc_error,
    serving,
    state,
)

ENTROPY = [bytes([seat + 1]) * 32 for seat in range(4)]


def create(stub: Stub, seats: int = 3, **fields: object) -> pb.CreateMatchResponse:
    request = pb.CreateMatchRequest(seat_count=seats, seat_entropy=True, **fields)  # type: ignore[arg-type]
    created: pb.CreateMatchResponse = stub.CreateMatch(request, timeout=RPC_TIMEOUT)
    return created


def contribute(
    stub: Stub, created: pb.CreateMatchResponse, seat: int, entropy: bytes | None = None
) -> pb.ContributeEntropyResponse:
    request = pb.ContributeEntropyRequest(
        match_id=created.match_id,
        token=created.seat_tokens[seat],
        entropy=ENTROPY[seat] if entropy is None else entropy,
    )
    reply: pb.ContributeEntropyResponse = stub.ContributeEntropy(request, timeout=RPC_TIMEOUT)
    return reply


def contribute_all(stub: Stub, created: pb.CreateMatchResponse) -> pb.ContributeEntropyResponse:
    reply = None
    for seat in range(len(created.seat_tokens)):
        reply = contribute(stub, created, seat)
    assert reply is not None
    return reply


def house_seed(db: Path, match_id: str) -> int:
    """The seed the log keeps at creation (read from the file, the service stopped)."""
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute(
            "SELECT detail FROM events_all WHERE match_id = ? AND seq = 0", [match_id]
        ).fetchone()
    assert row is not None
    return int(json.loads(row[0])["seed"])


def tiles(msg: object) -> list[str]:
    return [f"{t.low}-{t.high}" for t in msg]  # type: ignore[attr-defined]


def test_the_first_deal_waits_for_every_seat_and_comes_from_the_derived_seed(
    svc: Service,
) -> None:
    stub = svc.stub
    created = create(stub, 3)
    assert created.seed_commitment
    assert created.leader_choice == pb.LEADER_CHOICE_UNSPECIFIED
    first = state(stub, created.match_id, created.seat_tokens[1])
    assert first.phase == pb.MATCH_PHASE_AWAITING_DEAL
    assert first.seat_entropy
    assert list(first.entropy_seats) == []
    assert event_count(stub, created.match_id) == 1  # match_created only

    reply = contribute(stub, created, 2)
    assert (reply.seat, list(reply.entropy_seats), reply.dealt) == (2, [2], False)
    assert list(state(stub, created.match_id, created.observer_token).entropy_seats) == [2]
    contribute(stub, created, 0)
    last = contribute(stub, created, 1)
    assert last.dealt
    assert list(last.entropy_seats) == [0, 1, 2]
    assert last.leader_choice == pb.LEADER_CHOICE_LOT

    dealt = state(stub, created.match_id, created.observer_token)
    assert dealt.phase == pb.MATCH_PHASE_PLAYING
    assert list(dealt.entropy_seats) == [0, 1, 2]
    svc.running.stop(grace=2.0)  # read the house seed from the file itself
    house = house_seed(svc.db_path, created.match_id)
    seed = seat_entropy_seed(house, ENTROPY[:3])
    made, _ = Match(3, seed=seed, auto_deal=False).seeded_deal(0)
    assert [sorted(tiles(h.tiles)) for h in dealt.hands] == [
        sorted(str(t) for t in h) for h in made.hands
    ]
    assert tiles(dealt.boneyard_tiles) == [str(t) for t in made.boneyard]
    assert dealt.leader == last.leader == made.leader
    # The house seed alone deals something else.
    assert Match(3, seed=house, auto_deal=False).seeded_deal(0)[0].hands != made.hands


@pytest.mark.slow
def test_a_seat_entropy_match_played_to_the_end_reveals_the_house_seed_and_audits_ok(
    svc: Service,
) -> None:
    stub = svc.stub
    # A fixed house seed (and the fixed entropies) makes the match the same every run: with a
    # random one, now and then a side reached 60 within round 0.
    created = create(stub, 2, target=60, seed=7)
    contribute_all(stub, created)
    play_to_end(stub, created, random.Random(3))
    over = state(stub, created.match_id, created.seat_tokens[0])
    reveal = over.reveal
    assert commitment(reveal.seed, bytes.fromhex(reveal.seed_salt)).hex() == over.seed_commitment
    rounds = event_count(stub, created.match_id, "round_dealt")
    assert rounds > 1  # later rounds are dealt from the derived seed too
    results = list(audit_log(svc.db_path))
    assert [(r.id, r.ok, r.problems) for r in results] == [(created.match_id, True, [])]


@pytest.mark.slow
def test_an_edited_contribution_breaks_the_chain_and_the_deal(svc: Service) -> None:
    stub = svc.stub
    created = create(stub, 2, target=30)
    contribute_all(stub, created)
    play_to_end(stub, created, random.Random(5))
    svc.running.stop(grace=2.0)
    with duckdb.connect(str(svc.db_path)) as con:
        row = con.execute(
            "SELECT seq, CAST(detail AS VARCHAR) FROM events_all"
            " WHERE match_id = ? AND kind = 'round_dealt' AND round = 0",
            [created.match_id],
        ).fetchone()
        assert row is not None
        detail = json.loads(row[1])
        detail["seat_entropy"][1] = "ab" * 32
        con.execute(
            "UPDATE events_all SET detail = ? WHERE match_id = ? AND seq = ?",
            [json.dumps(detail), created.match_id, row[0]],
        )
    (result,) = audit_log(svc.db_path)
    kinds = {(p.kind, p.seq) for p in result.problems}
    assert ("chain_broken", row[0]) in kinds
    assert ("deal_mismatch", row[0]) in kinds


def test_a_match_without_seat_entropy_is_dealt_at_once_as_before(svc: Service) -> None:
    stub = svc.stub
    created = stub.CreateMatch(pb.CreateMatchRequest(seat_count=2, seed=9), timeout=RPC_TIMEOUT)
    assert created.leader_choice == pb.LEADER_CHOICE_LOT
    st = state(stub, created.match_id, created.observer_token)
    assert st.phase == pb.MATCH_PHASE_PLAYING
    assert not st.seat_entropy
    assert list(st.entropy_seats) == []
    made, _ = Match(2, seed=9, auto_deal=False).seeded_deal(0)
    assert [sorted(tiles(h.tiles)) for h in st.hands] == [
        sorted(str(t) for t in h) for h in made.hands
    ]
    sql = "SELECT count(*) FROM events_all WHERE detail->>'seat_entropy' IS NOT NULL"
    svc.running.stop(grace=2.0)
    with duckdb.connect(str(svc.db_path), read_only=True) as con:
        assert con.execute(sql).fetchone() == (0,)


# -- refusals: each a clear status, and nothing changed -----------------------------------


def refused(
    stub: Stub, created: pb.CreateMatchResponse, request: pb.ContributeEntropyRequest
) -> grpc.RpcError:
    before = event_count(stub, created.match_id)
    seats = list(state(stub, created.match_id, created.observer_token).entropy_seats)
    exc = rpc_error(stub.ContributeEntropy, request)
    assert event_count(stub, created.match_id) == before
    assert list(state(stub, created.match_id, created.observer_token).entropy_seats) == seats
    return exc


def test_entropy_that_is_not_32_bytes_is_an_invalid_argument(svc: Service) -> None:
    created = create(svc.stub, 2)
    for size in (0, 31, 33):
        request = pb.ContributeEntropyRequest(
            match_id=created.match_id, token=created.seat_tokens[0], entropy=bytes(size)
        )
        exc = refused(svc.stub, created, request)
        assert_refused(exc, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT", "32")
        assert error_info(exc).metadata["field"] == "entropy"


def test_only_a_seats_own_token_gives_its_entropy(svc: Service) -> None:
    created = create(svc.stub, 2)
    other = create(svc.stub, 2)
    cases = [
        ("", grpc.StatusCode.UNAUTHENTICATED),
        ("not-a-token", grpc.StatusCode.UNAUTHENTICATED),
        (other.seat_tokens[0], grpc.StatusCode.UNAUTHENTICATED),
        (created.observer_token, grpc.StatusCode.PERMISSION_DENIED),
    ]
    for token, code in cases:
        request = pb.ContributeEntropyRequest(
            match_id=created.match_id, token=token, entropy=ENTROPY[0]
        )
        assert_refused(refused(svc.stub, created, request), code, "ERROR_REASON_BAD_TOKEN")


def test_a_second_contribution_is_a_retry_if_identical_and_refused_otherwise(
    svc: Service,
) -> None:
    stub = svc.stub
    created = create(stub, 3)
    first = contribute(stub, created, 1)
    assert contribute(stub, created, 1) == first
    request = pb.ContributeEntropyRequest(
        match_id=created.match_id, token=created.seat_tokens[1], entropy=ENTROPY[3]
    )
    exc = refused(stub, created, request)
    assert_refused(
        exc, grpc.StatusCode.ALREADY_EXISTS, "ERROR_REASON_ENTROPY_ALREADY_GIVEN", "seat 1"
    )


def test_entropy_after_the_deal_is_a_retry_if_identical_and_refused_otherwise(
    svc: Service,
) -> None:
    stub = svc.stub
    created = create(stub, 2)
    contribute(stub, created, 0)
    last = contribute(stub, created, 1)
    assert contribute(stub, created, 1) == last  # the last seat's retry after the deal
    assert contribute(stub, created, 0).dealt
    request = pb.ContributeEntropyRequest(
        match_id=created.match_id, token=created.seat_tokens[0], entropy=ENTROPY[2]
    )
    exc = refused(stub, created, request)
    assert_refused(exc, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_WRONG_PHASE", "dealt")


def test_entropy_for_a_match_created_without_it_is_refused(svc: Service) -> None:
    stub = svc.stub
    created = stub.CreateMatch(pb.CreateMatchRequest(seat_count=2), timeout=RPC_TIMEOUT)
    request = pb.ContributeEntropyRequest(
        match_id=created.match_id, token=created.seat_tokens[0], entropy=ENTROPY[0]
    )
    exc = refused(stub, created, request)
    assert_refused(
        exc, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_WRONG_PHASE", "without seat entropy"
    )


def test_a_first_deal_with_seat_entropy_is_an_invalid_argument(svc: Service) -> None:
    deal = pb.Deal(
        hands=[pb.Hand(tiles=[pb.Tile(low=0, high=i) for i in range(7)]), pb.Hand()],
        leader=0,
    )
    request = pb.CreateMatchRequest(seat_count=2, seat_entropy=True, first_deal=deal)
    exc = rpc_error(svc.stub.CreateMatch, request)
    assert_refused(exc, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT")
    assert error_info(exc).metadata["field"] == "seat_entropy"


def test_no_deal_move_or_list_of_moves_before_every_seat_has_given_its_entropy(
    svc: Service,
) -> None:
    stub = svc.stub
    created = create(stub, 3)
    contribute(stub, created, 1)
    match_id, token = created.match_id, created.seat_tokens[0]
    calls = [
        (stub.DealRound, pb.DealRoundRequest(match_id=match_id, token=created.observer_token)),
        (stub.ListLegalMoves, pb.ListLegalMovesRequest(match_id=match_id, token=token, seat=0)),
        (
            stub.ApplyMove,
            pb.ApplyMoveRequest(
                match_id=match_id, token=token, seat=0, notation="0-0", expected_move_count=0
            ),
        ),
        (stub.Analyze, pb.AnalyzeRequest(match_id=match_id, token=token)),
    ]
    for call, request in calls:
        exc = rpc_error(call, request)
        assert_refused(
            exc,
            grpc.StatusCode.FAILED_PRECONDITION,
            "ERROR_REASON_AWAITING_ENTROPY",
            "seats 0, 2",
        )
        assert error_info(exc).metadata["missing_seats"] == "0,2"
    assert event_count(stub, match_id) == 1


# -- restarts ------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_restart_forgets_contributions_before_the_deal_and_rebuilds_the_match_after_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.duckdb"
    rng = random.Random(11)
    with serving(db) as svc:
        created = create(svc.stub, 2, target=40)
        contribute(svc.stub, created, 0)
    with serving(db) as svc:
        before = state(svc.stub, created.match_id, created.observer_token)
        assert before.phase == pb.MATCH_PHASE_AWAITING_DEAL
        assert list(before.entropy_seats) == []  # held in memory only: given again
        exc = rpc_error(
            svc.stub.ListLegalMoves,
            pb.ListLegalMovesRequest(
                match_id=created.match_id, token=created.seat_tokens[1], seat=1
            ),
        )
        assert_refused(exc, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_AWAITING_ENTROPY")
        contribute_all(svc.stub, created)
        for _ in range(6):
            play_step(svc.stub, created, rng)
        in_play = state(svc.stub, created.match_id, created.observer_token)
    with serving(db) as svc:
        after = state(svc.stub, created.match_id, created.observer_token)
        assert after == in_play  # the same deal, from the same derived seed
        assert contribute(svc.stub, created, 1).dealt  # a retry, answered from the log
        play_to_end(svc.stub, created, rng)
    results = list(audit_log(db))
    assert [(r.id, r.ok, r.problems) for r in results] == [(created.match_id, True, [])]


def test_the_derivation_is_the_documented_hash() -> None:
    # The service's seed, read independently of sniff/seeds.py.
    data = b"sniff/seat-entropy/v1\x00" + (5).to_bytes(8, "big") + bytes([2])
    data += ENTROPY[0] + ENTROPY[1]
    expected = int.from_bytes(hashlib.sha256(data).digest()[:8], "big")
    assert seat_entropy_seed(5, ENTROPY[:2]) == expected

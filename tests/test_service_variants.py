"""The Sniff variants through the gRPC service (issue 8): created, played with orientations
structured and in notation, scored by ScoreLayout, refused clearly when a suffix is missing
or unexpected, ended at a round limit; and clients built before variants keep working."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import grpc
import pytest

from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from tests.service_helpers import (
    RPC_TIMEOUT,
    Service,
    assert_refused,
    error_info,
    play_to_end,
    query,
    rpc_error,
    state,
)

pytestmark = pytest.mark.slow

VARIANTS = {
    "american": pb.VARIANT_AMERICAN,
    "stubby": pb.VARIANT_STUBBY,
    "berndt": pb.VARIANT_BERNDT,
    "british": pb.VARIANT_BRITISH,
}


@pytest.fixture(scope="module")
def svc(shared_svc: Service) -> Service:
    """One server for the whole module."""
    return shared_svc


def create(
    svc: Service, seats: int, variant: pb.Variant, seed: int, round_limit: int | None = 6
) -> pb.CreateMatchResponse:
    request = pb.CreateMatchRequest(seat_count=seats, seed=seed, variant=variant)
    if round_limit is not None:
        request.round_limit = round_limit
    created: pb.CreateMatchResponse = svc.stub.CreateMatch(request, timeout=RPC_TIMEOUT)
    return created


@pytest.mark.parametrize("name", sorted(VARIANTS))
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_each_variant_plays_to_its_end_over_grpc(svc: Service, name: str, seats: int) -> None:
    created = create(svc, seats, VARIANTS[name], seed=seats * 10 + len(name))
    assert created.variant == VARIANTS[name]
    assert created.round_limit == 6
    played = play_to_end(svc.stub, created, random.Random(seats))
    last = played.replies[-1]
    assert last.HasField("match_end")
    st = state(svc.stub, created.match_id, created.observer_token)
    assert st.variant == VARIANTS[name]
    assert st.phase == pb.MATCH_PHASE_OVER
    notations = [r.move.notation for r in played.replies]
    suffixed = [n for n in notations if n.endswith(("/cross", "/inline"))]
    if name in ("berndt", "british"):
        # Every round's Sniff-making move named its orientation, and nothing else did.
        assert suffixed
        for reply in played.replies:
            which = reply.move.WhichOneof("kind")
            if which in ("lead", "place"):
                orientation = getattr(reply.move, which).orientation
                assert (orientation != pb.ORIENTATION_UNSPECIFIED) == (
                    reply.move.notation in suffixed
                )
    else:
        assert not suffixed
    row = query(
        svc.stub,
        "SELECT detail ->> '$.variant' AS variant FROM events_all "
        "WHERE match_id = ? AND kind = 'match_created'",
        created.match_id,
    ).to_pylist()
    assert row == [{"variant": name}]


def sniff_decision(
    svc: Service, created: pb.CreateMatchResponse
) -> tuple[pb.MatchState, list[pb.Move]]:
    """Play greedily-free random moves until the seat to move may make the Sniff."""
    rng = random.Random(5)
    for _ in range(400):
        st = state(svc.stub, created.match_id, created.observer_token)
        assert st.phase == pb.MATCH_PHASE_PLAYING
        token = created.seat_tokens[st.turn]
        moves = list(
            svc.stub.ListLegalMoves(
                pb.ListLegalMovesRequest(match_id=created.match_id, token=token, seat=st.turn),
                timeout=RPC_TIMEOUT,
            ).moves
        )
        if any(m.notation.endswith("/cross") for m in moves):
            return st, moves
        move = rng.choice(moves)
        svc.stub.ApplyMove(
            pb.ApplyMoveRequest(
                match_id=created.match_id,
                token=token,
                seat=st.turn,
                notation=move.notation,
                expected_move_count=st.move_count,
            ),
            timeout=RPC_TIMEOUT,
        )
    raise AssertionError("no Sniff decision came up")


def test_both_orientations_are_listed_cross_first_and_a_missing_one_is_invalid(
    svc: Service,
) -> None:
    created = create(svc, 2, pb.VARIANT_BERNDT, seed=11, round_limit=None)
    st, moves = sniff_decision(svc, created)
    texts = [m.notation for m in moves]
    for i, text in enumerate(texts):
        if text.endswith("/cross"):
            assert texts[i + 1] == text.replace("/cross", "/inline")
    choice = next(m for m in moves if m.notation.endswith("/cross"))
    bare = choice.notation.removesuffix("/cross")
    token = created.seat_tokens[st.turn]
    base: dict[str, Any] = {"match_id": created.match_id, "token": token, "seat": st.turn}
    exc = rpc_error(
        svc.stub.ApplyMove,
        pb.ApplyMoveRequest(**base, notation=bare, expected_move_count=st.move_count),
    )
    assert_refused(exc, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ORIENTATION")
    assert error_info(exc).metadata["kind"] == "missing_orientation"
    structured = pb.Move()
    structured.CopyFrom(choice)
    getattr(structured, structured.WhichOneof("kind")).orientation = pb.ORIENTATION_UNSPECIFIED
    exc = rpc_error(
        svc.stub.ApplyMove,
        pb.ApplyMoveRequest(**base, move=structured, expected_move_count=st.move_count),
    )
    assert error_info(exc).metadata["kind"] == "missing_orientation"
    # Nothing was applied by the refusals; the structured inline move is.
    getattr(structured, structured.WhichOneof("kind")).orientation = pb.ORIENTATION_INLINE
    reply = svc.stub.ApplyMove(
        pb.ApplyMoveRequest(**base, move=structured, expected_move_count=st.move_count),
        timeout=RPC_TIMEOUT,
    )
    assert reply.move.notation == bare + "/inline"
    assert reply.move_count == st.move_count + 1


def test_a_suffix_where_the_variant_gives_no_choice_is_invalid(svc: Service) -> None:
    created = create(svc, 2, pb.VARIANT_UNSPECIFIED, seed=3, round_limit=None)
    st = state(svc.stub, created.match_id, created.observer_token)
    token = created.seat_tokens[st.turn]
    moves = svc.stub.ListLegalMoves(
        pb.ListLegalMovesRequest(match_id=created.match_id, token=token, seat=st.turn),
        timeout=RPC_TIMEOUT,
    ).moves
    exc = rpc_error(
        svc.stub.ApplyMove,
        pb.ApplyMoveRequest(
            match_id=created.match_id,
            token=token,
            seat=st.turn,
            notation=moves[0].notation + "/cross",
            expected_move_count=0,
        ),
    )
    assert_refused(exc, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ORIENTATION")
    assert error_info(exc).metadata["kind"] == "unexpected_orientation"
    exc = rpc_error(
        svc.stub.ApplyMove,
        pb.ApplyMoveRequest(
            match_id=created.match_id,
            token=token,
            seat=st.turn,
            notation="draw/cross",
            expected_move_count=0,
        ),
    )
    assert_refused(exc, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_MALFORMED_MOVE")


@pytest.mark.parametrize(
    ("field", "value"), [("variant", 9), ("round_limit", 0), ("round_limit", 1_001)]
)
def test_an_unknown_variant_or_a_round_limit_out_of_range_is_invalid(
    svc: Service, field: str, value: int
) -> None:
    request = pb.CreateMatchRequest(seat_count=2)
    setattr(request, field, value)
    exc = rpc_error(svc.stub.CreateMatch, request)
    assert_refused(exc, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT")
    assert error_info(exc).metadata["field"] == field


def test_score_layout_scores_under_the_variant_asked_for(svc: Service) -> None:
    moves = ["4-4", "4-6@4-4:line_a", "1-4@4-4:line_b", "2-4@4-4:branch_a"]
    placements = [pb.Placement(notation=m) for m in moves]
    stubby = svc.stub.ScoreLayout(
        pb.ScoreLayoutRequest(placements=placements, variant=pb.VARIANT_STUBBY),
        timeout=RPC_TIMEOUT,
    )
    american = svc.stub.ScoreLayout(
        pb.ScoreLayoutRequest(placements=placements), timeout=RPC_TIMEOUT
    )
    assert (stubby.ends_sum, american.ends_sum) == (9, 13)  # docs/rules.md §10.5
    open_stubby = {(o.tile.low, o.tile.high, o.side) for o in stubby.open_sides}
    assert (2, 4, pb.SIDE_LOW) not in open_stubby  # a stub's end is never open
    cross = [pb.Placement(notation=m) for m in ("1-6", "1-4@1-6:low", "4-4@1-4:high/inline")]
    berndt = svc.stub.ScoreLayout(
        pb.ScoreLayoutRequest(placements=cross, variant=pb.VARIANT_BERNDT), timeout=RPC_TIMEOUT
    )
    assert (berndt.ends_sum, berndt.points) == (10, 10)


def test_a_match_ends_at_its_round_limit_with_the_side_ahead_or_a_draw(svc: Service) -> None:
    created = create(svc, 4, pb.VARIANT_STUBBY, seed=21, round_limit=1)
    played = play_to_end(svc.stub, created, random.Random(1))
    end = played.replies[-1].match_end
    assert end.round_limit_reached
    assert played.replies[-1].HasField("round_end")
    scores = list(end.scores)
    if scores[0] == scores[1]:
        assert not end.HasField("winner")
        assert list(end.winning_seats) == []
    else:
        assert end.winner == (0 if scores[0] > scores[1] else 1)
        assert list(end.winning_seats) == [end.winner, end.winner + 2]
    got = svc.stub.GetScores(
        pb.GetScoresRequest(match_id=created.match_id, token=created.observer_token),
        timeout=RPC_TIMEOUT,
    )
    assert got.over


OLD_CLIENT = textwrap.dedent(
    """
    import random, sys
    import grpc
    sys.path.insert(0, sys.argv[2])
    from sniff.v1 import sniff_pb2 as pb, sniff_pb2_grpc
    stub = sniff_pb2_grpc.SniffServiceStub(grpc.insecure_channel(sys.argv[1]))
    rng = random.Random(4)
    created = stub.CreateMatch(pb.CreateMatchRequest(seat_count=2, seed=17))
    while True:
        st = stub.GetState(pb.GetStateRequest(
            match_id=created.match_id, token=created.observer_token)).state
        if st.phase == pb.MATCH_PHASE_OVER:
            break
        if st.phase == pb.MATCH_PHASE_AWAITING_DEAL:
            stub.DealRound(pb.DealRoundRequest(
                match_id=created.match_id, token=created.observer_token))
            continue
        token = created.seat_tokens[st.turn]
        moves = stub.ListLegalMoves(pb.ListLegalMovesRequest(
            match_id=created.match_id, token=token, seat=st.turn)).moves
        move = rng.choice(list(moves))
        request = pb.ApplyMoveRequest(match_id=created.match_id, token=token, seat=st.turn,
                                      expected_move_count=st.move_count)
        request.move.CopyFrom(move) if rng.random() < 0.5 else None
        if not request.HasField("move"):
            request.notation = move.notation
        reply = stub.ApplyMove(request)
        assert "/" not in reply.move.notation
        if reply.HasField("match_end"):
            print("winner", reply.match_end.winner, "scores", list(reply.match_end.scores))
    """
)


def test_a_client_built_before_variants_plays_an_american_match_unchanged(
    svc: Service, tmp_path: Path
) -> None:
    """The client's code is generated from the contract as it was before variants existed
    (tests/fixtures/sniff_v1_before_variants.proto) and runs in its own process."""
    proto_dir = tmp_path / "proto" / "sniff" / "v1"
    proto_dir.mkdir(parents=True)
    fixture = Path(__file__).parent / "fixtures" / "sniff_v1_before_variants.proto"
    (proto_dir / "sniff.proto").write_text(fixture.read_text())
    out = tmp_path / "gen"
    out.mkdir()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{tmp_path / 'proto'}",
            f"--python_out={out}",
            f"--grpc_python_out={out}",
            "sniff/v1/sniff.proto",
        ],
        check=True,
    )
    script = tmp_path / "old_client.py"
    script.write_text(OLD_CLIENT)
    done = subprocess.run(
        [sys.executable, str(script), svc.address, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("winner "), done.stdout

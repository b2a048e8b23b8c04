"""The `rollout` bot wherever a bot plays: `sniff play`, `sniff record` (its records audit
clean), and over gRPC as the demo plays, where it asks the service's Analyze for its seat."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from analysis.audit import audit_record
from analysis.cli.main import cli
from analysis.remote import RemoteView, play_remote_match
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from sniff import Move
from tests.service_helpers import RPC_TIMEOUT, Service


@pytest.fixture(scope="module")
def svc(shared_svc: Service) -> Service:
    """One server for the whole module."""
    return shared_svc


@pytest.mark.slow
def test_play_and_record_take_the_rollout_bot(tmp_path: Path) -> None:
    runner = CliRunner()
    played = runner.invoke(
        cli, ["play", "--seats", "3", "--bots", "rollout,greedy", "--round-limit", "1"]
    )
    assert played.exit_code == 0, played.output
    assert "seat 0:" in played.output
    out = tmp_path / "m.jsonl"
    args = ["record", "--matches", "2", "--bots", "rollout,random", "--round-limit", "1"]
    recorded = runner.invoke(cli, [*args, "-o", str(out)])
    assert recorded.exit_code == 0, recorded.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["players"] for r in records] == [["rollout", "random"]] * 2
    for record in records:
        assert audit_record(record, record["id"]).ok


@pytest.mark.slow
def test_the_demo_s_remote_rollout_bot_plays_through_the_service(svc: Service) -> None:
    played = play_remote_match(svc.stub, 2, ["rollout", "greedy"], seed=4, round_limit=1)
    assert played.moves > 10


@pytest.mark.slow
def test_a_remote_view_ranks_moves_by_the_service_s_analysis(svc: Service) -> None:
    created = svc.stub.CreateMatch(pb.CreateMatchRequest(seat_count=2, seed=9))
    seat = created.turn
    token = created.seat_tokens[seat]
    state = svc.stub.GetState(
        pb.GetStateRequest(match_id=created.match_id, token=token), timeout=RPC_TIMEOUT
    ).state
    moves = svc.stub.ListLegalMoves(
        pb.ListLegalMovesRequest(match_id=created.match_id, token=token, seat=seat)
    ).moves

    def analyzer(budget: pb.AnalysisBudget, seed: int) -> pb.AnalyzeResponse:
        request = pb.AnalyzeRequest(
            match_id=created.match_id, token=token, budget=budget, seed=seed
        )
        reply: pb.AnalyzeResponse = svc.stub.Analyze(request, timeout=RPC_TIMEOUT)
        return reply

    remote = RemoteView(state, moves, analyzer)
    ranked = remote.ranked_moves(64, None, 3)
    reply = analyzer(pb.AnalysisBudget(rollouts=64), 3)
    assert ranked == [Move.parse(m.move.notation) for m in reply.moves]
    assert sorted(map(str, ranked)) == sorted(m.notation for m in moves)

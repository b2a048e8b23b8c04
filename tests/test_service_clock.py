"""Time controls over gRPC, in real time: a client killed mid-match runs out of time and the
server acts for its seat (a default move, or a forfeit), and every view of that fact says
the same (the event log, WatchMatch, Play, GetState, the exported record, the replay);
a time control out of bounds is refused and creates nothing; a restart keeps the banks.

Limits are short (a few hundred ms) and nothing here asserts how fast anything is: only
that a timeout happens, and what is said of it. The exact accounting is
tests/test_clock_accounting.py's, on a clock the test moves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import grpc
import pytest
from click.testing import CliRunner

from analysis.audit import audit_record
from analysis.cli.main import cli
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from tests.helpers import HANG
from tests.service_helpers import (
    RPC_TIMEOUT,
    PlayClient,
    ServerProcess,
    Stub,
    assert_refused,
    error_info,
    play_seat,
    query,
    serving,
    state,
)

REPO = Path(__file__).resolve().parents[1]


def clocked(
    stub: Any, seats: int, seed: int, control: pb.TimeControl, **settings: Any
) -> pb.CreateMatchResponse:
    request = pb.CreateMatchRequest(seat_count=seats, seed=seed, time_control=control, **settings)
    created: pb.CreateMatchResponse = stub.CreateMatch(request, timeout=RPC_TIMEOUT)
    return created


def greedy(move_limit_ms: int, bank_ms: int) -> pb.TimeControl:
    return pb.TimeControl(
        move_limit_ms=move_limit_ms,
        bank_ms=bank_ms,
        out_of_time=pb.OUT_OF_TIME_DEFAULT_MOVE,
        policy="greedy",
    )


def forfeit(move_limit_ms: int, bank_ms: int) -> pb.TimeControl:
    return pb.TimeControl(
        move_limit_ms=move_limit_ms, bank_ms=bank_ms, out_of_time=pb.OUT_OF_TIME_FORFEIT
    )


def watch_to_end(stub: Stub, match_id: str, token: str) -> list[pb.MatchEvent]:
    """Every event of the match, from its creation to its end (bounded by HANG)."""
    request = pb.WatchMatchRequest(match_id=match_id, token=token, from_sequence=0)
    events = []
    for response in stub.WatchMatch(request, timeout=HANG):
        events.append(response.event)
        if response.event.HasField("match_ended"):
            break
    return events


def play_events(stub: Stub, match_id: str, token: str) -> list[pb.MatchEvent]:
    """Every event of a finished match as a Play stream resumed from 0 sends it to a seat."""
    client = PlayClient(stub, [play_seat(match_id, token, 0)])
    client.next("opened")
    events = []
    while True:
        update = client.updates.get(timeout=HANG)
        if update is None:
            break
        if update.HasField("event"):
            events.append(update.event)
    assert client.ended() is None
    return events


def logged(stub: Stub, match_id: str) -> list[dict[str, Any]]:
    rows = query(
        stub,
        "SELECT seq, kind, seat, detail FROM events_all WHERE match_id = $1 ORDER BY seq",
        match_id,
    ).to_pylist()
    return [{**r, "detail": json.loads(r["detail"]) if r["detail"] else None} for r in rows]


def exported(db: Path, match_id: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["export", "--db", str(db), match_id])
    assert result.exit_code == 0, result.output
    record: dict[str, Any] = json.loads(result.output)
    return record


def replayed(db: Path, match_id: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["replay", "--db", str(db), "--format", "json", match_id])
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.output)
    return out


def assert_log_audits_clean(db: Path) -> None:
    """`sniff audit --db` (through the running service) finds nothing wrong."""
    result = CliRunner().invoke(cli, ["audit", "--db", str(db)])
    assert result.exit_code == 0, result.output


def timeouts_in(events: list[pb.MatchEvent]) -> list[tuple[int, int, str]]:
    """(sequence, seat, policy) of every action chosen for a seat out of time."""
    return [
        (e.sequence, e.action_applied.seat, e.action_applied.timeout_policy)
        for e in events
        if e.HasField("action_applied") and e.action_applied.timeout_policy
    ]


CLIENT = """
import sys
from analysis.remote import connect
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
import queue
stub = connect(sys.argv[1])
out = queue.Queue()
out.put(pb.PlayRequest(open=pb.PlayOpen(seats=[
    pb.PlaySeat(match_id=sys.argv[2], token=t) for t in sys.argv[3:]])))
def requests():
    while True:
        yield out.get()
for response in stub.Play(requests()):
    for u in response.updates:
        if u.HasField("decision") and u.decision.HasField("move"):
            out.put(pb.PlayRequest(answer=pb.PlayAnswer(
                match_id=u.match_id, seat=u.seat, move_count=u.decision.move_count,
                notation=u.decision.move.moves[0].notation)))
        if u.HasField("answered"):
            print(u.answered.move_count, flush=True)
"""


@pytest.mark.slow
def test_a_client_killed_mid_match_gets_default_moves_and_every_view_says_so(
    tmp_path: Path,
) -> None:
    db = tmp_path / "events.duckdb"
    with serving(db, sync=False) as svc:
        created = clocked(svc.stub, 2, 11, greedy(300, 1000), round_limit=1)
        match_id = created.match_id
        client = subprocess.Popen(
            [sys.executable, "-c", CLIENT, svc.address, match_id, *created.seat_tokens],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert client.stdout is not None
            answered = [int(client.stdout.readline()) for _ in range(2)]
            client.kill()  # SIGKILL mid-match: the service hears nothing more from it
            client.wait(timeout=HANG)
        finally:
            if client.poll() is None:
                client.kill()
        watched = watch_to_end(svc.stub, match_id, created.observer_token)
        timed = timeouts_in(watched)
        assert timed, "the dead client's seats ran out of time"
        assert {policy for _, _, policy in timed} == {"greedy"}
        actions = [e for e in watched if e.HasField("action_applied")]
        assert len(actions) > max(answered) + 1
        # once the client was dead, the server played the round out for both seats
        assert actions[-1].action_applied.timeout_policy == "greedy"
        assert all(
            e.action_applied.bank_left_ms == 0 for e in actions if e.action_applied.timeout_policy
        )
        # the event log
        rows = logged(svc.stub, match_id)
        from_log = [
            (r["seq"], r["seat"], r["detail"]["timeout"])
            for r in rows
            if r["kind"] == "action" and r["detail"] and "timeout" in r["detail"]
        ]
        assert from_log == timed
        assert rows[0]["detail"]["time_control"] == {
            "move_limit_ms": 300,
            "bank_ms": 1000,
            "out_of_time": "default_move",
            "policy": "greedy",
        }
        # Play, for each seat
        for token in created.seat_tokens:
            assert timeouts_in(play_events(svc.stub, match_id, token)) == timed
        # GetState: the time control, and each seat's bank as last logged
        st = state(svc.stub, match_id, created.observer_token)
        assert st.time_control == greedy(300, 1000)
        last_bank = {r["seat"]: r["detail"]["bank_ms"] for r in rows if r["kind"] == "action"}
        assert {c.seat: c.bank_left_ms for c in st.clocks} == last_bank
        assert not any(c.running for c in st.clocks)  # the match is over
        # the exported record and the replay
        record = exported(db, match_id)
        by_seq = {r["seq"]: r for r in rows}
        assert [(t["round"], t["action"], t["seat"], t["policy"]) for t in record["timeouts"]] == [
            (0, actions_index(rows, s), seat, p) for s, seat, p in timed
        ]
        assert all(by_seq[s]["kind"] == "action" for s, _, _ in timed)
        assert record["time_control"] == rows[0]["detail"]["time_control"]
        assert audit_record(record, "exported").ok
        assert_log_audits_clean(db)
        steps = replayed(db, match_id)["steps"]
        assert [
            (s["round"], s["action"], s["seat"], s["timeout_policy"])
            for s in steps
            if "timeout_policy" in s
        ] == [(t["round"], t["action"], t["seat"], t["policy"]) for t in record["timeouts"]]


def actions_index(rows: list[dict[str, Any]], seq: int) -> int:
    """The action's index within its round (docs/records.md), of the action at `seq`."""
    index = -1
    for r in rows:
        if r["kind"] == "round_dealt":
            index = -1
        elif r["kind"] == "action":
            index += 1
        if r["seq"] == seq:
            return index
    raise AssertionError(f"no event {seq}")


@pytest.mark.slow
def test_a_seat_whose_client_is_gone_forfeits_and_every_view_says_so(tmp_path: Path) -> None:
    db = tmp_path / "events.duckdb"
    with serving(db, sync=False) as svc:
        created = clocked(svc.stub, 2, 12, forfeit(2000, 1000))  # ample for a loaded machine
        match_id = created.match_id
        client = PlayClient(svc.stub, [play_seat(match_id, t) for t in created.seat_tokens])
        for _ in range(2):
            update = client.next("decision")
            assert update.decision.clock.running
            assert update.decision.clock.seat == update.seat
            assert update.decision.clock.move_time_left_ms <= 2000
            client.send(
                pb.PlayAnswer(
                    match_id=match_id,
                    seat=update.seat,
                    move_count=update.decision.move_count,
                    notation=update.decision.move.moves[0].notation,
                )
            )
            client.reply()
        client.call.cancel()  # the client is gone
        client.ended()
        watched = watch_to_end(svc.stub, match_id, created.observer_token)
        end = watched[-1].match_ended.match_end
        assert end.HasField("forfeited_seat")
        loser = end.forfeited_seat
        assert list(end.winning_seats) == [1 - loser]
        rows = logged(svc.stub, match_id)
        assert rows[-1]["kind"] == "match_ended"
        place = rows[-1]["detail"]["forfeit"]
        assert place["seat"] == loser
        assert rows[-1]["detail"]["winner"] == 1 - loser
        for token in created.seat_tokens:
            ended = [e for e in play_events(svc.stub, match_id, token) if e.HasField("match_ended")]
            assert [e.match_ended.match_end.forfeited_seat for e in ended] == [loser]
        st = state(svc.stub, match_id, created.seat_tokens[loser])
        assert st.phase == pb.MATCH_PHASE_OVER
        assert st.forfeited_seat == loser
        assert st.winner == 1 - loser
        ended_by = query(
            svc.stub, "SELECT ended_by FROM match_results_all WHERE match_id = $1", match_id
        ).to_pylist()
        assert ended_by == [{"ended_by": "forfeit"}]
        record = exported(db, match_id)
        assert record["forfeit"] == place
        assert record["claims"]["winner"] == 1 - loser
        assert audit_record(record, "exported").ok
        assert_log_audits_clean(db)
        assert replayed(db, match_id)["forfeited_seat"] == loser
        # a late answer for the forfeited decision finds the match over
        late = pb.ApplyMoveRequest(
            match_id=match_id,
            token=created.seat_tokens[loser],
            seat=loser,
            expected_move_count=st.move_count,
            notation="draw",
        )
        with pytest.raises(grpc.RpcError) as refused:
            svc.stub.ApplyMove(late, timeout=RPC_TIMEOUT)
        assert_refused(
            refused.value, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_WRONG_PHASE"
        )


def test_a_seat_whose_client_never_connects_still_runs_out_of_time(tmp_path: Path) -> None:
    with serving(tmp_path / "events.duckdb", sync=False) as svc:
        created = clocked(svc.stub, 2, 14, greedy(150, 0))
        request = pb.WatchMatchRequest(
            match_id=created.match_id, token=created.observer_token, from_sequence=0
        )
        for response in svc.stub.WatchMatch(request, timeout=HANG):
            if response.event.HasField("action_applied"):
                applied = response.event.action_applied
                break
        assert applied.move_count == 1
        assert applied.timeout_policy == "greedy"
        assert applied.HasField("bank_left_ms")
        assert applied.bank_left_ms == 0


@pytest.mark.parametrize(
    ("seats", "control", "field"),
    [
        (2, greedy(0, 0), "time_control.move_limit_ms"),
        (2, greedy(3_600_001, 0), "time_control.move_limit_ms"),
        (2, greedy(100, 86_400_001), "time_control.bank_ms"),
        (
            2,
            pb.TimeControl(
                move_limit_ms=100, out_of_time=pb.OUT_OF_TIME_DEFAULT_MOVE, policy="nobody"
            ),
            "time_control.policy",
        ),
        (
            2,
            pb.TimeControl(
                move_limit_ms=100, out_of_time=pb.OUT_OF_TIME_DEFAULT_MOVE, policy="ismcts"
            ),
            "time_control.policy",
        ),
        (
            2,
            pb.TimeControl(move_limit_ms=100, out_of_time=pb.OUT_OF_TIME_DEFAULT_MOVE),
            "time_control.policy",
        ),
        (
            2,
            pb.TimeControl(move_limit_ms=100, out_of_time=pb.OUT_OF_TIME_FORFEIT, policy="greedy"),
            "time_control.policy",
        ),
        (2, pb.TimeControl(move_limit_ms=100, policy="greedy"), "time_control.out_of_time"),
        (
            2,
            pb.TimeControl(move_limit_ms=100, out_of_time=cast(pb.OutOfTime, 7), policy="greedy"),
            "time_control.out_of_time",
        ),
        (3, forfeit(100, 0), "time_control.out_of_time"),
    ],
)
def test_a_time_control_out_of_bounds_is_refused_and_creates_nothing(
    tmp_path: Path, seats: int, control: pb.TimeControl, field: str
) -> None:
    with serving(tmp_path / "events.duckdb", sync=False) as svc:
        request = pb.CreateMatchRequest(seat_count=seats, seed=1, time_control=control)
        with pytest.raises(grpc.RpcError) as refused:
            svc.stub.CreateMatch(request, timeout=RPC_TIMEOUT)
        assert_refused(refused.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT")
        assert error_info(refused.value).metadata["field"] == field
        assert query(svc.stub, "SELECT count(*) AS n FROM events_all").to_pylist() == [{"n": 0}]


def test_a_match_created_without_a_time_control_reports_no_clock(tmp_path: Path) -> None:
    with serving(tmp_path / "events.duckdb", sync=False) as svc:
        created = svc.stub.CreateMatch(
            pb.CreateMatchRequest(seat_count=2, seed=2), timeout=RPC_TIMEOUT
        )
        assert not created.HasField("time_control")
        st = state(svc.stub, created.match_id, created.observer_token)
        assert not st.HasField("time_control")
        assert list(st.clocks) == []
        client = PlayClient(svc.stub, [play_seat(created.match_id, t) for t in created.seat_tokens])
        decision = client.next("decision").decision
        assert not decision.HasField("clock")
        client.close()
        client.ended()


def test_getstate_reports_the_time_control_and_the_running_clock(tmp_path: Path) -> None:
    with serving(tmp_path / "events.duckdb", sync=False) as svc:
        created = clocked(svc.stub, 2, 3, greedy(600_000, 1_000))
        assert created.time_control == greedy(600_000, 1_000)
        st = state(svc.stub, created.match_id, created.seat_tokens[0])
        assert st.time_control == greedy(600_000, 1_000)
        assert [c.seat for c in st.clocks] == [0, 1]
        assert [c.running for c in st.clocks] == [s == st.turn for s in (0, 1)]
        assert all(c.bank_left_ms == 1_000 for c in st.clocks)
        assert all(0 < c.move_time_left_ms <= 600_000 for c in st.clocks)


@pytest.mark.slow
def test_after_sigkill_and_restart_the_banks_are_as_logged_and_the_clock_runs_again(
    tmp_path: Path,
) -> None:
    server = ServerProcess(tmp_path / "events.duckdb", tmp_path).start()
    try:
        stub = Stub(grpc.insecure_channel(server.address), server.query_token)
        created = clocked(stub, 2, 13, greedy(60_000, 60_000))
        match_id = created.match_id
        for _ in range(3):
            st = state(stub, match_id, created.observer_token)
            seat = st.turn
            moves = stub.ListLegalMoves(
                pb.ListLegalMovesRequest(
                    match_id=match_id, token=created.seat_tokens[seat], seat=seat
                ),
                timeout=RPC_TIMEOUT,
            ).moves
            stub.ApplyMove(
                pb.ApplyMoveRequest(
                    match_id=match_id,
                    token=created.seat_tokens[seat],
                    seat=seat,
                    expected_move_count=st.move_count,
                    notation=moves[0].notation,
                ),
                timeout=RPC_TIMEOUT,
            )
        before = state(stub, match_id, created.observer_token)
        assert server.proc is not None
        server.proc.kill()
        server.proc.wait(timeout=HANG)
        server.start()
        stub = Stub(grpc.insecure_channel(server.address), server.query_token)
        after = state(stub, match_id, created.observer_token)
        assert after.move_count == before.move_count
        assert [c.bank_left_ms for c in after.clocks if not c.running] == [
            c.bank_left_ms for c in before.clocks if not c.running
        ]
        running = [c for c in after.clocks if c.running]
        assert [c.seat for c in running] == [after.turn]
        # the waiting seat's bank is the last logged one, and its move limit starts again (the
        # exact figures: tests/test_clock_accounting.py, on a clock the test moves)
        logged_banks = [
            json.loads(r["detail"])["bank_ms"]
            for r in query(
                stub,
                "SELECT detail FROM events_all WHERE match_id = $1 AND kind = 'action' "
                "AND seat = $2 ORDER BY seq",
                match_id,
                after.turn,
            ).to_pylist()
        ]
        assert running[0].bank_left_ms == (logged_banks[-1] if logged_banks else 60_000)
        assert 0 < running[0].move_time_left_ms <= 60_000
    finally:
        server.close()

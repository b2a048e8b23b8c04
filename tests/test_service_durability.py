"""An acknowledged action is durable: it survives SIGKILL of the server, SIGTERM drains and
flushes, and a restarted server carries on every match from where its log stops.

The server runs in a child process on a real port with a real DuckDB file;
clients are real gRPC channels in their own threads.
"""

from __future__ import annotations

import random
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.storage import open_readonly, owner_path
from tests.helpers import wait_until
from tests.service_helpers import (
    RPC_TIMEOUT,
    ServerProcess,
    Stub,
    create,
    play_step,
    play_to_end,
    query,
    serving,
    state,
)

pytestmark = pytest.mark.slow

ACTION_EVENTS = "SELECT move FROM events WHERE match_id = ? AND kind = 'action' ORDER BY seq"
ALL_SEQS = "SELECT seq FROM events WHERE match_id = ? ORDER BY seq"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    proc = ServerProcess(tmp_path / "log.duckdb", tmp_path)
    try:
        yield proc
    finally:
        proc.close()


@dataclass
class Client:
    """One match played by its own thread and channel; remembers every acknowledged reply."""

    address: str
    created: pb.CreateMatchResponse
    seed: int
    acked: list[tuple[pb.ApplyMoveRequest, pb.ApplyMoveResponse]] = field(default_factory=list)
    error: grpc.RpcError | None = None
    failure: BaseException | None = None
    over: bool = False
    thread: threading.Thread | None = None

    def start(self) -> Client:
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self) -> None:
        rng = random.Random(self.seed)
        created = self.created
        try:
            with grpc.insecure_channel(self.address) as channel:
                stub = Stub(channel)
                for _ in range(3000):  # bounded by count, each call by its deadline
                    st = state(stub, created.match_id, created.observer_token)
                    if st.phase == pb.MATCH_PHASE_OVER:
                        self.over = True
                        return
                    if st.phase == pb.MATCH_PHASE_AWAITING_DEAL:
                        deal = pb.DealRoundRequest(
                            match_id=created.match_id, token=created.observer_token
                        )
                        stub.DealRound(deal, timeout=RPC_TIMEOUT)
                        continue
                    token = created.seat_tokens[st.turn]
                    moves = stub.ListLegalMoves(
                        pb.ListLegalMovesRequest(
                            match_id=created.match_id, token=token, seat=st.turn
                        ),
                        timeout=RPC_TIMEOUT,
                    ).moves
                    request = pb.ApplyMoveRequest(
                        match_id=created.match_id,
                        token=token,
                        seat=st.turn,
                        notation=rng.choice(list(moves)).notation,
                        expected_move_count=st.move_count,
                    )
                    reply = stub.ApplyMove(request, timeout=RPC_TIMEOUT)
                    self.acked.append((request, reply))
        except grpc.RpcError as exc:
            self.error = exc
        except BaseException as exc:
            self.failure = exc

    def join(self) -> None:
        assert self.thread is not None
        self.thread.join(RPC_TIMEOUT + 10)
        assert not self.thread.is_alive(), "a client did not stop"
        assert self.failure is None, self.failure


def start_clients(address: str, specs: list[tuple[int, int, int]]) -> list[Client]:
    with grpc.insecure_channel(address) as channel:
        stub = Stub(channel)
        created = [create(stub, seats, seed, target) for seats, seed, target in specs]
    return [
        Client(address, c, seed).start() for c, (_, seed, _) in zip(created, specs, strict=True)
    ]


def wait_for_acks(clients: list[Client], each: int) -> None:
    def reached() -> bool:
        assert all(c.error is None and c.failure is None for c in clients), [
            (c.error, c.failure) for c in clients
        ]
        return all(len(c.acked) >= each or c.over for c in clients)

    wait_until(reached, f"every client has {each} acknowledged actions")


def check_log(stub: Stub, clients: list[Client]) -> dict[str, int]:
    """Every acknowledged action is in the log, in order; the sequence has no gap.

    Returns each match's number of logged actions."""
    logged = {}
    for client in clients:
        match_id = client.created.match_id
        seqs = query(stub, ALL_SEQS, match_id).column("seq").to_pylist()
        assert seqs == list(range(len(seqs))), f"{match_id}: a gap in the event sequence"
        moves = query(stub, ACTION_EVENTS, match_id).column("move").to_pylist()
        assert len(moves) >= len(client.acked)
        for request, reply in client.acked:
            assert moves[reply.move_count - 1] == reply.move.notation == request.notation
        logged[match_id] = len(moves)
    return logged


def test_acknowledged_actions_survive_sigkill_and_matches_resume(
    server: ServerProcess,
) -> None:
    server.start()
    specs = [(2, 51, 120), (3, 52, 100), (4, 53, 100), (2, 54, 120)]
    clients = start_clients(server.address, specs)
    wait_for_acks(clients, each=15)
    assert server.proc is not None
    server.proc.send_signal(signal.SIGKILL)
    assert server.proc.wait(timeout=30) == -signal.SIGKILL
    for client in clients:
        client.join()
    cut = [c for c in clients if not c.over]
    assert cut, "every match ended before the kill: use higher targets"
    for client in cut:
        assert client.error is not None
        assert client.error.code() in (
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.CANCELLED,
            grpc.StatusCode.UNKNOWN,
            grpc.StatusCode.INTERNAL,
        ), client.error

    server.start()  # a new process on the same file
    with grpc.insecure_channel(server.address) as channel:
        stub = Stub(channel, server.query_token)
        logged = check_log(stub, clients)
        for client in clients:
            created = client.created
            count = logged[created.match_id]
            for token in [*created.seat_tokens, created.observer_token]:
                st = state(stub, created.match_id, token)
                assert st.move_count == count
            # The last acknowledged action, retried, still gets its original reply.
            request, reply = client.acked[-1]
            if reply.move_count == count:
                again = stub.ApplyMove(request, timeout=RPC_TIMEOUT)
                assert again.SerializeToString() == reply.SerializeToString()
        # Every match, cut short or not, plays on from where it stopped, to the end.
        for i, client in enumerate(clients):
            created = client.created
            played = play_to_end(stub, created, random.Random(100 + i))
            assert not client.over or not played.replies
            final = state(stub, created.match_id, created.observer_token)
            assert final.phase == pb.MATCH_PHASE_OVER
            assert final.move_count == logged[created.match_id] + len(played.replies)
            table = query(stub, ALL_SEQS, created.match_id)
            seqs = table.column("seq").to_pylist()
            assert seqs == list(range(len(seqs)))
    assert server.proc.poll() is None, server.stderr()


def test_sigterm_drains_exits_0_and_leaves_every_acknowledged_event(
    server: ServerProcess,
) -> None:
    server.start()
    specs = [(2, 61, 250), (3, 62, 200), (4, 63, 200)]
    clients = start_clients(server.address, specs)
    wait_for_acks(clients, each=10)
    assert server.proc is not None
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=30) == 0, server.stderr()
    for client in clients:
        client.join()
        assert client.over or client.error is not None
    assert not owner_path(server.db_path).exists(), "a clean stop removes the owner file"
    assert not Path(f"{server.db_path}.wal").exists(), "a clean stop checkpoints the WAL"
    with open_readonly(server.db_path) as log:
        for client in clients:
            match_id = client.created.match_id
            moves = log.query(ACTION_EVENTS, [match_id]).column("move").to_pylist()
            assert len(moves) >= len(client.acked) >= 10
            for _, reply in client.acked:
                assert moves[reply.move_count - 1] == reply.move.notation
            seqs = log.query(ALL_SEQS, [match_id]).column("seq").to_pylist()
            assert seqs == list(range(len(seqs)))


def _views(stub: Stub, created: pb.CreateMatchResponse) -> list[bytes]:
    return [
        state(stub, created.match_id, token).SerializeToString(deterministic=True)
        for token in [*created.seat_tokens, created.observer_token]
    ]


def _events(stub: Stub, created: pb.CreateMatchResponse) -> list[pb.MatchEvent]:
    request = pb.WatchMatchRequest(match_id=created.match_id, token=created.observer_token)
    return [r.event for r in stub.WatchMatch(request, timeout=RPC_TIMEOUT)]


def test_a_restart_after_a_clean_stop_recovers_every_match(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    with serving(db) as svc:
        stub = svc.stub
        finished = [create(stub, 2, 71, 60), create(stub, 4, 72, 60)]
        for i, created in enumerate(finished):
            play_to_end(stub, created, random.Random(i))
        before_finished = [(_views(stub, c), _events(stub, c)) for c in finished]
        unfinished = create(stub, 3, 73)
        rng = random.Random(7)
        for _ in range(19):
            assert play_step(stub, unfinished, rng) is not None
        st = state(stub, unfinished.match_id, unfinished.observer_token)
        assert st.phase == pb.MATCH_PHASE_PLAYING
        token = unfinished.seat_tokens[st.turn]
        moves = stub.ListLegalMoves(
            pb.ListLegalMovesRequest(match_id=unfinished.match_id, token=token, seat=st.turn),
            timeout=RPC_TIMEOUT,
        ).moves
        last_request = pb.ApplyMoveRequest(
            match_id=unfinished.match_id,
            token=token,
            seat=st.turn,
            notation=moves[-1].notation,
            expected_move_count=st.move_count,
        )
        last_reply = stub.ApplyMove(last_request, timeout=RPC_TIMEOUT)
        before_unfinished = _views(stub, unfinished)
    assert not owner_path(db).exists()

    with serving(db) as svc:
        stub = svc.stub
        for created, (views, events) in zip(finished, before_finished, strict=True):
            assert _views(stub, created) == views
            assert _events(stub, created) == events
            st = state(stub, created.match_id, created.seat_tokens[0])
            assert st.phase == pb.MATCH_PHASE_OVER
            scores = stub.GetScores(
                pb.GetScoresRequest(match_id=created.match_id, token=created.seat_tokens[1]),
                timeout=RPC_TIMEOUT,
            )
            assert scores.over
            assert scores.winner == st.winner
        assert _views(stub, unfinished) == before_unfinished
        # A retry across the restart still gets the original reply, and applies nothing.
        again = stub.ApplyMove(last_request, timeout=RPC_TIMEOUT)
        assert again.SerializeToString() == last_reply.SerializeToString()
        st = state(stub, unfinished.match_id, unfinished.observer_token)
        assert st.move_count == last_reply.move_count == 20
        played = play_to_end(stub, unfinished, rng)
        assert played.replies
        assert state(stub, unfinished.match_id, unfinished.observer_token).phase == (
            pb.MATCH_PHASE_OVER
        )

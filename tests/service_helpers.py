"""Shared parts of the service tests: real servers, real channels, real DuckDB files.

Nothing here is a mock. `serving()` starts the gRPC server in this process on
an ephemeral 127.0.0.1 port with its event log in a temporary directory;
`ServerProcess` runs it in a child process (for SIGKILL and SIGTERM) and waits
for the health service. Every loop is bounded in count and in time.
"""

from __future__ import annotations

import contextlib
import functools
import queue
import random
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, cast

import grpc
import pyarrow as pa
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2
from grpc_status import rpc_status

from analysis.logquery import query_parameter, table_from_stream
from analysis.remote import health_client
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from service.rpc.server import Running, create_server
from service.storage import find_owner
from tests.helpers import HANG, need, wait_until

REPO = Path(__file__).resolve().parents[1]
RPC_TIMEOUT = 15.0
"""Deadline of every unary call a test makes."""
MAX_ACTIONS = 4000
"""No match of the tests needs more actions than this (a 2-seat match to 250 takes ~350)."""


class Stub(sniff_pb2_grpc.SniffServiceStub):
    """A client stub that also holds the service's query token, for reading the log."""

    def __init__(self, channel: grpc.Channel, query_token: str = "") -> None:
        super().__init__(channel)  # type: ignore[no-untyped-call]  # generated, unannotated
        self.query_token = query_token


TileKey = tuple[int, int]


# -- servers -------------------------------------------------------------------------------


@dataclass
class Service:
    """A server started in this process, with one client channel and stub."""

    running: Running
    db_path: Path
    channel: grpc.Channel
    stub: Stub

    @property
    def address(self) -> str:
        return self.running.address


@contextlib.contextmanager
def serving(db_path: Path, **options: Any) -> Iterator[Service]:
    """`create_server("127.0.0.1:0", db_path, **options)`, a channel to it; stopped after."""
    running = create_server("127.0.0.1:0", db_path, **options)
    try:
        with grpc.insecure_channel(running.address) as channel:
            yield Service(running, db_path, channel, Stub(channel, running.query_token))
    finally:
        running.stop(grace=2.0)


def self_signed_certificate(directory: Path, name: str = "server") -> tuple[Path, Path]:
    """A new self-signed certificate for 127.0.0.1 and localhost: (cert.pem, key.pem)."""
    import datetime
    import ipaddress

    need("cryptography", "pip install -e '.[dev]'")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"sniff test {name}")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    return cert_path, key_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@functools.cache
def _sniff_serve() -> list[str] | None:
    """The `sniff serve` command when it exists (with --host/--port/--db), else None."""
    sniff = Path(sys.executable).parent / "sniff"
    if not sniff.exists():
        return None
    try:
        done = subprocess.run(
            [str(sniff), "serve", "--help"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0 or not all(o in done.stdout for o in ("--host", "--port", "--db")):
        return None
    return [str(sniff), "serve"]


def wait_serving(
    address: str, deadline: float = HANG, proc: subprocess.Popen[Any] | None = None
) -> None:
    """Wait until the health service says SERVING; fail after `deadline` seconds (a hang)."""
    with grpc.insecure_channel(address) as channel:
        health = health_client(channel)

        def serving() -> bool:
            if proc is not None and proc.poll() is not None:
                raise AssertionError(f"the server exited early with status {proc.returncode}")
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
            except grpc.RpcError:
                return False
            return reply.status == health_pb2.HealthCheckResponse.SERVING

        wait_until(serving, f"a healthy service on {address}", deadline)


class Served(NamedTuple):
    """`sniff serve` in a child process (the `served` fixture)."""

    proc: subprocess.Popen[str]
    address: str
    db: Path


@dataclass
class ServerProcess:
    """The service in a child process on a free 127.0.0.1 port."""

    db_path: Path
    log_dir: Path
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    _files: list[Any] = field(default_factory=list)
    args: tuple[str, ...] = ()
    """More `sniff serve` options (needs the `sniff` command)."""

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def query_token(self) -> str:
        """The running service's query token, from the owner file beside its log."""
        owner = find_owner(self.db_path)
        assert owner is not None, "no service holds the log"
        return owner.query_token or ""

    def start(self, deadline: float = HANG, *, same_port: bool = False) -> ServerProcess:
        """Start the service on a free port, or (`same_port`, a restart) on the last one, where
        a client that reconnects by itself finds it again."""
        if not (same_port and self.port):
            self.port = free_port()
        command = _sniff_serve()
        if command is not None:
            argv = [*command, "--host", "127.0.0.1", "--port", str(self.port)]
            argv += ["--db", str(self.db_path), *self.args]
        else:
            assert not self.args, "serve options need the sniff command"
            code = (
                "from service.rpc.server import serve; import sys; "
                f"sys.exit(serve('127.0.0.1:{self.port}', {str(self.db_path)!r}))"
            )
            argv = [sys.executable, "-c", code]
        n = len(self._files) // 2
        out = open(self.log_dir / f"server{n}.out", "wb")  # noqa: SIM115 - closed in close()
        err = open(self.log_dir / f"server{n}.err", "wb")  # noqa: SIM115
        self._files += [out, err]
        self.proc = subprocess.Popen(argv, cwd=REPO, stdout=out, stderr=err)
        wait_serving(self.address, deadline, self.proc)
        return self

    def stderr(self) -> str:
        n = len(self._files) // 2 - 1
        return (self.log_dir / f"server{n}.err").read_text(errors="replace")

    def close(self) -> None:
        """Kill the process if it still runs (a failed test must not leave it behind)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        for f in self._files:
            f.close()
        self._files.clear()


# -- calls and errors ----------------------------------------------------------------------


def rpc_error(call: Callable[..., Any], request: Message, **kwargs: Any) -> grpc.RpcError:
    """Make a call that must fail; return its error (for streams, consume them)."""
    kwargs.setdefault("timeout", RPC_TIMEOUT)
    try:
        result = call(request, **kwargs)
        if hasattr(result, "__iter__") and not isinstance(result, Message):
            for _ in result:
                pass
    except grpc.RpcError as exc:
        return exc
    raise AssertionError(f"{request.DESCRIPTOR.name} should have failed")


def error_info(exc: grpc.RpcError) -> error_details_pb2.ErrorInfo:
    """The google.rpc.ErrorInfo detail of a failed call (asserting there is exactly one)."""
    status = rpc_status.from_call(cast(grpc.Call, exc))  # a client's RpcError is its Call too
    assert status is not None, "the error carries no google.rpc.Status"
    infos = []
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            infos.append(info)
    assert len(infos) == 1, f"expected one ErrorInfo, got {status.details}"
    return infos[0]


def assert_refused(
    exc: grpc.RpcError, code: grpc.StatusCode, reason: str | None = None, *words: str
) -> None:
    """The error has `code`, an ErrorInfo of domain sniff.v1 (with `reason`), and `words`."""
    assert exc.code() == code, (exc.code(), exc.details())
    info = error_info(exc)
    assert info.domain == "sniff.v1"
    if reason is not None:
        assert info.reason == reason, (info.reason, exc.details())
    message = exc.details() or ""
    for word in words:
        assert re.search(word, message, re.IGNORECASE), (word, message)


def query(stub: Stub, sql: str, *params: str | int) -> pa.Table:
    """Run a Query RPC and decode the concatenated Arrow IPC chunks."""
    parameters = [query_parameter(p) for p in params]
    request = pb.QueryRequest(sql=sql, parameters=parameters, token=query_token_of(stub))
    chunks = list(stub.Query(request, timeout=RPC_TIMEOUT))
    assert chunks, "a query streams at least one chunk (the schema)"
    return table_from_stream(chunks)


def query_token_of(stub: Any) -> str:
    return str(getattr(stub, "query_token", ""))


def event_count(stub: Stub, match_id: str, kind: str | None = None) -> int:
    if kind is None:
        table = query(stub, "SELECT count(*) AS n FROM events WHERE match_id = ?", match_id)
    else:
        sql = "SELECT count(*) AS n FROM events WHERE match_id = ? AND kind = ?"
        table = query(stub, sql, match_id, kind)
    return int(table.column("n")[0].as_py())


def total_events(stub: Stub) -> int:
    table = query(stub, "SELECT count(*) AS n FROM events")
    return int(table.column("n")[0].as_py())


def state(stub: Stub, match_id: str, token: str) -> pb.MatchState:
    reply: pb.GetStateResponse = stub.GetState(
        pb.GetStateRequest(match_id=match_id, token=token), timeout=RPC_TIMEOUT
    )
    return reply.state


# -- tiles and moves -----------------------------------------------------------------------


def tile_key(t: pb.Tile) -> TileKey:
    return (t.low, t.high)


def keys(tiles: Any) -> set[TileKey]:
    return {tile_key(t) for t in tiles}


def tiles_in(msg: Message) -> Iterator[TileKey]:
    """Every Tile message anywhere inside `msg`, found by walking its set fields."""
    if isinstance(msg, pb.Tile):
        yield tile_key(msg)
        return
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            continue
        if fd.message_type.GetOptions().map_entry:
            items = value.values()
            if fd.message_type.fields_by_name["value"].message_type is None:
                continue
        elif fd.is_repeated:
            items = value
        else:
            items = [value]
        for item in items:
            yield from tiles_in(item)


def parse_tile(text: str) -> pb.Tile:
    a, b = (int(x) for x in text.split("-"))
    return pb.Tile(low=min(a, b), high=max(a, b))


SIDES = {
    "low": pb.SIDE_LOW,
    "high": pb.SIDE_HIGH,
    "line_a": pb.SIDE_LINE_A,
    "line_b": pb.SIDE_LINE_B,
    "branch_a": pb.SIDE_BRANCH_A,
    "branch_b": pb.SIDE_BRANCH_B,
}


def move_msg(notation: str) -> pb.Move:
    """A structured move from docs/records.md notation (a test-side parser, not the engine's)."""
    if notation == "draw":
        return pb.Move(draw=pb.Move.Draw())
    if notation == "pass":
        return pb.Move(**cast(dict[str, Any], {"pass": pb.Move.Pass()}))  # a keyword: no stub param
    if "@" not in notation:
        return pb.Move(lead=pb.Move.Lead(tile=parse_tile(notation)))
    tile, place = notation.split("@")
    board, side = place.split(":")
    return pb.Move(
        place=pb.Move.Place(tile=parse_tile(tile), board_tile=parse_tile(board), side=SIDES[side])
    )


# -- matches -------------------------------------------------------------------------------


@dataclass
class Played:
    """What a client saw while playing a match: every acknowledged reply, in order."""

    created: pb.CreateMatchResponse
    replies: list[pb.ApplyMoveResponse] = field(default_factory=list)

    @property
    def match_id(self) -> str:
        return self.created.match_id


def create(stub: Stub, seats: int, seed: int, target: int | None = None) -> pb.CreateMatchResponse:
    request = pb.CreateMatchRequest(seat_count=seats, seed=seed)
    if target is not None:
        request.target = target
    created: pb.CreateMatchResponse = stub.CreateMatch(request, timeout=RPC_TIMEOUT)
    return created


def play_step(
    stub: Stub, created: pb.CreateMatchResponse, rng: random.Random
) -> pb.ApplyMoveResponse | None:
    """Deal if needed and make one random legal action; None once the match is over."""
    match_id = created.match_id
    for _ in range(2):
        st = state(stub, match_id, created.observer_token)
        if st.phase == pb.MATCH_PHASE_OVER:
            return None
        if st.phase == pb.MATCH_PHASE_AWAITING_DEAL:
            stub.DealRound(
                pb.DealRoundRequest(match_id=match_id, token=created.observer_token),
                timeout=RPC_TIMEOUT,
            )
            continue
        seat = st.turn
        token = created.seat_tokens[seat]
        moves = stub.ListLegalMoves(
            pb.ListLegalMovesRequest(match_id=match_id, token=token, seat=seat),
            timeout=RPC_TIMEOUT,
        ).moves
        assert moves, "the seat to move always has a legal action"
        move = rng.choice(list(moves))
        request = pb.ApplyMoveRequest(
            match_id=match_id, token=token, seat=seat, expected_move_count=st.move_count
        )
        if rng.random() < 0.5:
            request.notation = move.notation
        else:
            request.move.CopyFrom(move)
        reply: pb.ApplyMoveResponse = stub.ApplyMove(request, timeout=RPC_TIMEOUT)
        assert reply.move_count == st.move_count + 1
        assert reply.move.notation == move.notation
        return reply
    raise AssertionError("a deal did not start a round")


def play_to_end(
    stub: Stub,
    created: pb.CreateMatchResponse,
    rng: random.Random,
    *,
    played: Played | None = None,
    max_actions: int = MAX_ACTIONS,
) -> Played:
    """Play random legal actions through the RPCs until the match is over (bounded in count,
    each call by its deadline)."""
    played = played or Played(created)
    for _ in range(max_actions):
        reply = play_step(stub, created, rng)
        if reply is None:
            return played
        played.replies.append(reply)
    raise AssertionError(f"the match did not end within {max_actions} actions")


# -- Play streams --------------------------------------------------------------------------


class PlayClient:
    """One Play stream driven message by message: answers go out when a test sends them, and
    a thread puts every update received on a queue (None once the stream has ended)."""

    def __init__(
        self,
        stub: Stub,
        seats: list[pb.PlaySeat],
        first: pb.PlayRequest | None = None,
        metadata: list[tuple[str, str]] | None = None,
    ) -> None:
        self._outbox: queue.Queue[pb.PlayRequest | None] = queue.Queue()
        self._outbox.put(first or pb.PlayRequest(open=pb.PlayOpen(seats=seats)))
        self.updates: queue.Queue[pb.PlayUpdate | None] = queue.Queue()
        self._held: list[pb.PlayUpdate] = []
        """Updates `reply` passed over, for `next`."""
        self.error: grpc.RpcError | None = None
        self.call = stub.Play(self._requests(), timeout=HANG, metadata=metadata)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _requests(self) -> Iterator[pb.PlayRequest]:
        while (request := self._outbox.get()) is not None:
            yield request

    def _read(self) -> None:
        try:
            for response in self.call:
                for update in response.updates:
                    self.updates.put(update)
        except grpc.RpcError as exc:
            self.error = exc
        finally:
            self.updates.put(None)

    def send(self, answer: pb.PlayAnswer) -> None:
        self._outbox.put(pb.PlayRequest(answer=answer))

    def send_raw(self, request: pb.PlayRequest) -> None:
        self._outbox.put(request)

    def next(self, kind: str | None = None) -> pb.PlayUpdate:
        """The next update (of `kind`, passing over others); fail if the stream ends first."""
        return self._take(lambda k: kind is None or k == kind, str(kind), keep=False)

    def reply(self) -> pb.PlayUpdate:
        """The next reply to an answer (answered or error); other updates stay for `next`."""
        return self._take(lambda k: k in ("answered", "error"), "reply", keep=True)

    def _take(self, wanted: Callable[[str], bool], what: str, *, keep: bool) -> pb.PlayUpdate:
        for i, update in enumerate(self._held):
            if wanted(str(update.WhichOneof("kind"))):
                del self._held[i]
                return update
        if not keep:
            self._held.clear()
        while True:
            got = self.updates.get(timeout=HANG)
            assert got is not None, f"the stream ended ({self.error}) before a {what}"
            if wanted(str(got.WhichOneof("kind"))):
                return got
            if keep:
                self._held.append(got)

    def close(self) -> None:
        """Close the client's side of the stream."""
        self._outbox.put(None)

    def ended(self) -> grpc.RpcError | None:
        """Wait for the stream's end; its error (None when it ended OK)."""
        self._thread.join(HANG)
        assert not self._thread.is_alive(), "the Play stream did not end"
        return self.error


def play_seat(match_id: str, token: str, resume: int | None = None) -> pb.PlaySeat:
    seat = pb.PlaySeat(match_id=match_id, token=token)
    if resume is not None:
        seat.resume_move_count = resume
    return seat

"""Bytes that are not a request's message are refused plainly on every method.

grpcio decodes a request before the servicer sees it; random bytes used to
get UNKNOWN with a Python exception's class in the message. Each method of
the service descriptor gets raw bytes here (identity serializers on a real
channel to a real server): the answer is INVALID_ARGUMENT, a plain message
naming the message type expected, and the server goes on serving.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import DecodeError

from service.rpc.decoding import SERVICE
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from tests.service_helpers import RPC_TIMEOUT, Service, assert_refused, serving

METHODS = list(SERVICE.methods)


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with serving(tmp_path_factory.mktemp("undecodable") / "events.duckdb") as service:
        yield service


def undecodable(method: MethodDescriptor, count: int = 3) -> list[bytes]:
    """Byte strings that the method's request message refuses to decode: a field number 0,
    a truncated varint, and seeded random bytes that happen not to decode."""
    message = message_factory.GetMessageClass(method.input_type)
    found = [b"\x07", b"\x08" + b"\xff" * 11]
    rng = random.Random(method.full_name)
    while len(found) < count + 2:
        data = rng.randbytes(rng.randrange(1, 64))
        try:
            message.FromString(data)
        except DecodeError:
            found.append(data)
    for data in found:
        with pytest.raises(DecodeError):
            message.FromString(data)
    return found


def send_raw(channel: grpc.Channel, method: MethodDescriptor, data: bytes) -> grpc.RpcError:
    """Send `data` as the whole request (for a client stream, its only message)."""
    path = f"/{SERVICE.full_name}/{method.name}"
    try:
        if method.client_streaming:
            call: grpc.StreamUnaryMultiCallable[bytes, bytes] = channel.stream_unary(
                path, request_serializer=None, response_deserializer=None
            )
            call(iter([data]), timeout=RPC_TIMEOUT)
        elif method.server_streaming:
            stream: grpc.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(
                path, request_serializer=None, response_deserializer=None
            )
            for _ in stream(data, timeout=RPC_TIMEOUT):
                pass
        else:
            unary: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
                path, request_serializer=None, response_deserializer=None
            )
            unary(data, timeout=RPC_TIMEOUT)
    except grpc.RpcError as exc:
        return exc
    raise AssertionError(f"{method.name} accepted bytes that are not its request")


@pytest.mark.parametrize("method", METHODS, ids=[m.name for m in METHODS])
def test_bytes_that_are_not_the_request_are_an_invalid_argument(
    svc: Service, method: MethodDescriptor
) -> None:
    for data in undecodable(method):
        exc = send_raw(svc.channel, method, data)
        assert_refused(
            exc,
            grpc.StatusCode.INVALID_ARGUMENT,
            "ERROR_REASON_BAD_ARGUMENT",
            method.input_type.full_name,
        )
        details = exc.details() or ""
        assert "class" not in details, details
        assert "DecodeError" not in details, details
    # The server goes on serving.
    reply = svc.stub.ScoreLayout(
        pb.ScoreLayoutRequest(placements=[pb.Placement(notation="5-5")]), timeout=RPC_TIMEOUT
    )
    assert reply.points == 10


def test_an_import_whose_later_message_does_not_decode_is_refused(svc: Service) -> None:
    good = pb.ImportMatchesRequest(token=svc.stub.query_token, arrow_ipc=b"").SerializeToString()
    path = f"/{SERVICE.full_name}/ImportMatches"
    call: grpc.StreamUnaryMultiCallable[bytes, bytes] = svc.channel.stream_unary(
        path, request_serializer=None, response_deserializer=None
    )
    with pytest.raises(grpc.RpcError) as raised:
        call(iter([good, b"\x07"]), timeout=RPC_TIMEOUT)
    assert_refused(
        raised.value,
        grpc.StatusCode.INVALID_ARGUMENT,
        "ERROR_REASON_BAD_ARGUMENT",
        "ImportMatchesRequest",
    )

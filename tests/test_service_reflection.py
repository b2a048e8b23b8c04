"""Server reflection answers in both versions, v1 and v1alpha, on a real server.

Clients are real reflection calls on a real channel: v1alpha through
grpcio-reflection's own stub and descriptor database, v1 through the method
`/grpc.reflection.v1.ServerReflection/ServerReflectionInfo` (whose messages
are v1alpha's, field for field). Each reply is read back into a fresh
descriptor pool, as a client in another language would build its types.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from tests.service_helpers import RPC_TIMEOUT, Service, serving

V1_METHOD = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
SERVICES = {
    "sniff.v1.SniffService",
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
}

Request = reflection_pb2.ServerReflectionRequest
Response = reflection_pb2.ServerReflectionResponse


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with serving(tmp_path_factory.mktemp("reflection") / "events.duckdb") as service:
        yield service


def ask_v1(channel: grpc.Channel, *requests: Request) -> list[Response]:
    """One v1 reflection call: its requests, its replies, as bytes on the wire."""
    call = channel.stream_stream(
        V1_METHOD,
        request_serializer=Request.SerializeToString,
        response_deserializer=Response.FromString,
    )
    return list(call(iter(requests), timeout=RPC_TIMEOUT))


def files_of(reply: Response) -> list[descriptor_pb2.FileDescriptorProto]:
    assert reply.WhichOneof("message_response") == "file_descriptor_response", reply
    return [
        descriptor_pb2.FileDescriptorProto.FromString(data)
        for data in reply.file_descriptor_response.file_descriptor_proto
    ]


def test_v1_lists_every_service(svc: Service) -> None:
    (reply,) = ask_v1(svc.channel, Request(list_services=""))
    assert {s.name for s in reply.list_services_response.service} == SERVICES


def test_v1_describes_the_sniff_service_with_its_language_options(svc: Service) -> None:
    (reply,) = ask_v1(svc.channel, Request(file_containing_symbol="sniff.v1.SniffService"))
    by_name = {f.name: f for f in files_of(reply)}
    sniff = by_name["sniff/v1/sniff.proto"]
    assert sniff.package == "sniff.v1"
    assert sniff.options.java_multiple_files
    assert sniff.options.go_package.endswith(";sniffv1")
    # A client builds its types from the reply alone (dependencies first).
    pool = descriptor_pool.DescriptorPool()
    for proto in sorted(by_name.values(), key=lambda f: f.name != "google/protobuf/struct.proto"):
        pool.Add(proto)
    service = pool.FindServiceByName("sniff.v1.SniffService")
    assert service.methods_by_name["ApplyMove"].input_type.name == "ApplyMoveRequest"


def test_v1_describes_itself(svc: Service) -> None:
    (reply,) = ask_v1(
        svc.channel, Request(file_containing_symbol="grpc.reflection.v1.ServerReflection")
    )
    (proto,) = files_of(reply)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    method = pool.FindServiceByName("grpc.reflection.v1.ServerReflection").methods[0]
    assert method.input_type.full_name == "grpc.reflection.v1.ServerReflectionRequest"
    assert method.client_streaming
    assert method.server_streaming


def test_v1_refuses_an_unknown_symbol_as_the_protocol_says(svc: Service) -> None:
    (reply,) = ask_v1(svc.channel, Request(file_containing_symbol="no.such.Service"))
    assert reply.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
    assert reply.original_request.file_containing_symbol == "no.such.Service"


def test_v1alpha_still_answers_through_its_own_client(svc: Service) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(svc.channel)
    # Its stub types the method as binascii.Incomplete: typed here as what it is.
    info = cast("grpc.StreamStreamMultiCallable[Request, Response]", stub.ServerReflectionInfo)
    (reply,) = list(info(iter([Request(list_services="")]), timeout=10))
    assert {s.name for s in reply.list_services_response.service} == SERVICES
    database = ProtoReflectionDescriptorDatabase(svc.channel)
    pool = descriptor_pool.DescriptorPool(database)
    service = pool.FindServiceByName("sniff.v1.SniffService")
    assert "WatchMatch" in service.methods_by_name

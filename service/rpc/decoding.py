"""The SniffService's method handlers, with request decoders that never raise.

grpcio decodes a request before the handler runs, and when the decoder raises
(protobuf's `DecodeError` on bytes that are not the message) it answers
UNKNOWN with the Python exception's class in the message: internals, and the
wrong code. Here each method's decoder returns an `Undecodable` instead, and
the servicer's handler wrappers refuse it as a bad argument, INVALID_ARGUMENT
with a plain message (`status.py`), like any other request they refuse.

The handlers are built from the service's descriptor, so a method added to
the proto is registered (and guarded) without a change here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import DecodeError, Message

from service.rpc.gen.sniff.v1 import sniff_pb2

SERVICE: ServiceDescriptor = sniff_pb2.DESCRIPTOR.services_by_name["SniffService"]


@dataclass(frozen=True, slots=True)
class Undecodable:
    """What a request decoder returns for bytes that are not its message."""

    message_name: str
    """The full name of the message the method takes, for the refusal's text."""


def _decoder(message_class: type[Message]) -> Callable[[bytes], Message | Undecodable]:
    name = message_class.DESCRIPTOR.full_name
    parse = message_class.FromString

    def decode(data: bytes) -> Message | Undecodable:
        try:
            return parse(data)
        except DecodeError:
            return Undecodable(name)

    return decode


def method_handlers(servicer: object) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
    """Each SniffService method of `servicer`, by name, with its tolerant decoder."""
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in SERVICE.methods:
        request = message_factory.GetMessageClass(method.input_type)
        response = message_factory.GetMessageClass(method.output_type)
        if method.client_streaming:
            make: Any = (
                grpc.stream_stream_rpc_method_handler
                if method.server_streaming
                else grpc.stream_unary_rpc_method_handler
            )
        else:
            make = (
                grpc.unary_stream_rpc_method_handler
                if method.server_streaming
                else grpc.unary_unary_rpc_method_handler
            )
        handlers[method.name] = make(
            getattr(servicer, method.name),
            request_deserializer=_decoder(request),
            response_serializer=response.SerializeToString,
        )
    return handlers


def add_to_server(servicer: object, server: grpc.aio.Server) -> None:
    """Register `servicer` as the SniffService (what the generated `add_..._to_server` does,
    with the tolerant decoders)."""
    handlers = method_handlers(servicer)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE.full_name, handlers),)
    )
    server.add_registered_method_handlers(SERVICE.full_name, handlers)

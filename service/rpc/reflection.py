"""Server reflection in both its versions: grpc.reflection.v1 beside v1alpha.

grpcio-reflection (1.85) serves only `grpc.reflection.v1alpha`, while newer
tools (grpcurl, Postman, grpc-js's and Go's reflection clients) ask for
`grpc.reflection.v1` first. The two protocols are the same messages, field
for field, under another package, so v1 is served here by the same servicer:
its requests decode as v1alpha's (same bytes), its replies encode the same.
Both versions are registered here, with the same handler (what
`enable_server_reflection` does for v1alpha). So that a client can describe
the v1 service too, its descriptor (v1alpha's,
renamed) is added to the default descriptor pool once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import grpc
import grpc.aio
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from google.protobuf.message import Message
from grpc_reflection.v1alpha import reflection, reflection_pb2
from grpc_reflection.v1alpha._async import ReflectionServicer

V1ALPHA: Final = reflection.SERVICE_NAME
V1: Final = "grpc.reflection.v1.ServerReflection"
V1_FILE: Final = "grpc/reflection/v1/reflection.proto"
_ALPHA_PACKAGE: Final = ".grpc.reflection.v1alpha."
_V1_PACKAGE: Final = ".grpc.reflection.v1."


def v1_file() -> FileDescriptor:
    """The descriptor of grpc/reflection/v1/reflection.proto, in the default pool."""
    pool = descriptor_pool.Default()
    try:
        return pool.FindFileByName(V1_FILE)
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name = V1_FILE
    proto.package = "grpc.reflection.v1"
    proto.ClearField("options")  # v1alpha's Java and C# names
    for message in proto.message_type:
        for field in message.field:
            if field.type_name.startswith(_ALPHA_PACKAGE):  # message fields only
                field.type_name = field.type_name.replace(_ALPHA_PACKAGE, _V1_PACKAGE)
    for service in proto.service:
        for method in service.method:
            method.input_type = method.input_type.replace(_ALPHA_PACKAGE, _V1_PACKAGE)
            method.output_type = method.output_type.replace(_ALPHA_PACKAGE, _V1_PACKAGE)
    pool.AddSerializedFile(proto.SerializeToString())
    return pool.FindFileByName(V1_FILE)


def _encode(message: Message) -> bytes:
    return message.SerializeToString()


def add_to_server(service_names: Sequence[str], server: grpc.aio.Server) -> None:
    """Serve reflection, v1 and v1alpha, listing `service_names` and both reflection services."""
    v1_file()
    servicer = ReflectionServicer((*service_names, V1, V1ALPHA))
    handlers = {
        "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
            servicer.ServerReflectionInfo,
            request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
            response_serializer=_encode,
        )
    }
    for name in (V1ALPHA, V1):
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
        server.add_registered_method_handlers(name, handlers)

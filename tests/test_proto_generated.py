"""The gRPC contract: generated code is fresh, complete, and the proto follows its style."""

from __future__ import annotations

import importlib.resources
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

ROOT = Path(__file__).resolve().parent.parent
PROTO = "sniff/v1/sniff.proto"

EXPECTED_RPCS = {
    # name: server streaming
    "CreateMatch": False,
    "ContributeEntropy": False,
    "DealRound": False,
    "ListLegalMoves": False,
    "ApplyMove": False,
    "ScoreLayout": False,
    "GetScores": False,
    "GetState": False,
    "WatchMatch": True,
    "Play": True,
    "ListArenaBots": False,
    "SeatArenaBots": False,
    "Query": True,
    "ImportMatches": False,
    "StoreSimulated": False,
    "Analyze": False,
    "AnalyzePosition": False,
    "Solve": False,
    "GetLogKey": False,
    "GetInclusionProof": False,
    "GetConsistencyProof": False,
}
CLIENT_STREAMING = {"ImportMatches", "StoreSimulated", "Play"}
"""The RPCs a client streams to: an import's or a simulation chunk's Arrow IPC, in chunks, and
a Play stream's answers."""

# Paths inside FileDescriptorProto / DescriptorProto / ... (descriptor.proto field numbers).
FILE_MESSAGE, FILE_ENUM, FILE_SERVICE = 4, 5, 6
MESSAGE_FIELD, MESSAGE_NESTED, MESSAGE_ENUM, MESSAGE_ONEOF = 2, 3, 4, 8
ENUM_VALUE, SERVICE_METHOD = 2, 2


def screaming(name: str) -> str:
    """`RoundEndKind` -> `ROUND_END_KIND`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


@pytest.fixture(scope="module")
def file_proto(tmp_path_factory: pytest.TempPathFactory) -> descriptor_pb2.FileDescriptorProto:
    """The proto compiled from source, with its comments (source code info)."""
    out = tmp_path_factory.mktemp("descriptor") / "sniff.pb"
    well_known = importlib.resources.files("grpc_tools") / "_proto"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            "--proto_path=proto",
            f"--proto_path={well_known}",
            "--include_source_info",
            f"--descriptor_set_out={out}",
            PROTO,
        ],
        cwd=ROOT,
        check=True,
    )
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    (proto,) = (f for f in files if f.name == PROTO)
    return proto


@pytest.mark.slow
def test_generated_code_is_fresh() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_proto.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, (
        "generated code is stale; run `python scripts/gen_proto.py`\n"
        + result.stdout
        + result.stderr
    )


def test_generated_module_has_every_rpc() -> None:
    from service.rpc.gen.sniff.v1 import sniff_pb2, sniff_pb2_grpc

    service = sniff_pb2.DESCRIPTOR.services_by_name["SniffService"]
    assert service.full_name == "sniff.v1.SniffService"
    streaming = {m.name: m.server_streaming for m in service.methods}
    assert streaming == EXPECTED_RPCS
    assert {m.name for m in service.methods if m.client_streaming} == CLIENT_STREAMING
    for name in EXPECTED_RPCS:
        assert hasattr(sniff_pb2_grpc.SniffServiceServicer, name)
    # The grpc module uses the very same message module (no second copy via sys.path).
    assert vars(sniff_pb2_grpc)["sniff_dot_v1_dot_sniff__pb2"] is sniff_pb2


def test_generated_grpc_module_imports_package_correctly() -> None:
    text = (ROOT / "service/rpc/gen/sniff/v1/sniff_pb2_grpc.py").read_text(encoding="utf-8")
    assert "from service.rpc.gen.sniff.v1 import sniff_pb2" in text
    assert not re.search(r"^from sniff\b", text, flags=re.MULTILINE)


def test_every_rpc_has_its_own_request_and_response() -> None:
    from service.rpc.gen.sniff.v1 import sniff_pb2

    service = sniff_pb2.DESCRIPTOR.services_by_name["SniffService"]
    for method in service.methods:
        assert method.input_type.full_name == f"sniff.v1.{method.name}Request"
        assert method.output_type.full_name == f"sniff.v1.{method.name}Response"


def _enums(
    file_proto: descriptor_pb2.FileDescriptorProto,
) -> Iterator[descriptor_pb2.EnumDescriptorProto]:
    def walk(
        message: descriptor_pb2.DescriptorProto,
    ) -> Iterator[descriptor_pb2.EnumDescriptorProto]:
        yield from message.enum_type
        for nested in message.nested_type:
            yield from walk(nested)

    yield from file_proto.enum_type
    for message in file_proto.message_type:
        yield from walk(message)


def test_enum_values_are_prefixed_and_zero_is_unspecified(
    file_proto: descriptor_pb2.FileDescriptorProto,
) -> None:
    enums = list(_enums(file_proto))
    assert enums
    for enum in enums:
        prefix = screaming(enum.name) + "_"
        zero = [v.name for v in enum.value if v.number == 0]
        assert zero == [f"{prefix}UNSPECIFIED"], enum.name
        assert enum.value[0].number == 0, enum.name
        for value in enum.value:
            assert value.name.startswith(prefix), value.name
            assert re.fullmatch(r"[A-Z][A-Z0-9_]*", value.name), value.name


def _messages(
    messages: list[descriptor_pb2.DescriptorProto],
) -> Iterator[descriptor_pb2.DescriptorProto]:
    for message in messages:
        yield message
        yield from _messages(list(message.nested_type))


def test_field_names_are_snake_case_and_repeated_fields_plural(
    file_proto: descriptor_pb2.FileDescriptorProto,
) -> None:
    repeated = descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
    for message in _messages(list(file_proto.message_type)):
        assert re.fullmatch(r"[A-Z][A-Za-z0-9]*", message.name), message.name
        for field in message.field:
            assert re.fullmatch(r"[a-z][a-z0-9_]*", field.name), f"{message.name}.{field.name}"
            if field.label == repeated:
                assert field.name.endswith("s"), f"{message.name}.{field.name} is not plural"


def test_package_matches_directory_and_service_is_suffixed(
    file_proto: descriptor_pb2.FileDescriptorProto,
) -> None:
    assert file_proto.package == "sniff.v1"
    assert file_proto.name.rsplit("/", 1)[0] == file_proto.package.replace(".", "/")
    assert [s.name for s in file_proto.service] == ["SniffService"]


def test_every_element_is_documented(file_proto: descriptor_pb2.FileDescriptorProto) -> None:
    documented = {
        tuple(location.path)
        for location in file_proto.source_code_info.location
        if location.leading_comments.strip() or location.trailing_comments.strip()
    }

    def enum_paths(
        enum: descriptor_pb2.EnumDescriptorProto, path: tuple[int, ...]
    ) -> Iterator[tuple[tuple[int, ...], str]]:
        yield path, enum.name
        for i, value in enumerate(enum.value):
            yield (*path, ENUM_VALUE, i), f"{enum.name}.{value.name}"

    def message_paths(
        message: descriptor_pb2.DescriptorProto, path: tuple[int, ...]
    ) -> Iterator[tuple[tuple[int, ...], str]]:
        yield path, message.name
        for i, field in enumerate(message.field):
            yield (*path, MESSAGE_FIELD, i), f"{message.name}.{field.name}"
        for i, oneof in enumerate(message.oneof_decl):
            if not oneof.name.startswith("_"):  # synthetic oneof of a proto3 `optional`
                yield (*path, MESSAGE_ONEOF, i), f"{message.name}.{oneof.name}"
        for i, nested in enumerate(message.nested_type):
            if not nested.options.map_entry:  # synthetic: a map field's entry, documented there
                yield from message_paths(nested, (*path, MESSAGE_NESTED, i))
        for i, enum in enumerate(message.enum_type):
            yield from enum_paths(enum, (*path, MESSAGE_ENUM, i))

    def all_paths() -> Iterator[tuple[tuple[int, ...], str]]:
        for i, message in enumerate(file_proto.message_type):
            yield from message_paths(message, (FILE_MESSAGE, i))
        for i, enum in enumerate(file_proto.enum_type):
            yield from enum_paths(enum, (FILE_ENUM, i))
        for i, service in enumerate(file_proto.service):
            yield (FILE_SERVICE, i), service.name
            for j, method in enumerate(service.method):
                yield (FILE_SERVICE, i, SERVICE_METHOD, j), f"{service.name}.{method.name}"

    undocumented = [name for path, name in all_paths() if path not in documented]
    assert undocumented == []


def test_file_options_name_each_languages_package_and_no_host(
    file_proto: descriptor_pb2.FileDescriptorProto,
) -> None:
    """buf-style options for Go, Java and C#: exactly these, and none names a host."""
    options = file_proto.options
    set_options = {field.name: value for field, value in options.ListFields()}
    assert set_options == {
        "csharp_namespace": "Sniff.V1",
        "go_package": "americansniff/sniff/v1;sniffv1",
        "java_multiple_files": True,
        "java_outer_classname": "SniffProto",
        "java_package": "sniff.v1",
    }
    assert not options.py_generic_services
    for name, value in set_options.items():
        # A dotted domain or a URL would name a host the project does not own.
        assert not re.search(r"\.(com|org|net|io|dev)\b|://", str(value)), name
        assert "." not in str(value).split("/", 1)[0] or name != "go_package", name

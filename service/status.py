"""Map engine and service errors to canonical gRPC status codes, at the edge only.

Each refusal carries a short message (the error's own sentence, which names
the rule broken) and a `google.rpc.ErrorInfo` whose `reason` is an
`ErrorReason` value name, so clients can branch without parsing text.
"""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from service.engine import (
    BadDeal,
    IllegalMove,
    MatchOver,
    NoRoundInPlay,
    NotationError,
    NotYourTurn,
    RoundInPlay,
)
from service.errors import Forbidden, MatchNotFound, MissingToken, StaleMoveCount
from service.storage.errors import QueryError, ReadOnlyViolation

DOMAIN = "sniff.v1"


def _classify(exc: Exception) -> tuple[grpc.StatusCode, str]:
    # Order matters: the subclasses before their bases.
    if isinstance(exc, MatchNotFound):
        return grpc.StatusCode.NOT_FOUND, "ERROR_REASON_MATCH_NOT_FOUND"
    if isinstance(exc, MissingToken):
        return grpc.StatusCode.UNAUTHENTICATED, "ERROR_REASON_BAD_TOKEN"
    if isinstance(exc, Forbidden):
        return grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_BAD_TOKEN"
    if isinstance(exc, StaleMoveCount):
        return grpc.StatusCode.ABORTED, "ERROR_REASON_MOVE_COUNT_MISMATCH"
    if isinstance(exc, NotationError):
        return grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_MALFORMED_MOVE"
    if isinstance(exc, BadDeal):
        return grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_DEAL"
    if isinstance(exc, NotYourTurn):
        return grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_NOT_YOUR_TURN"
    if isinstance(exc, MatchOver | NoRoundInPlay | RoundInPlay):
        return grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_WRONG_PHASE"
    if isinstance(exc, IllegalMove):
        return grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_ILLEGAL_MOVE"
    if isinstance(exc, ReadOnlyViolation | QueryError):
        return grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_QUERY"
    raise exc


def to_status(exc: Exception) -> grpc.Status:
    """The status for a known refusal; re-raises anything else (a bug, reported as INTERNAL)."""
    code, reason = _classify(exc)
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN)
    if isinstance(exc, IllegalMove | NotationError | BadDeal):
        info.metadata["kind"] = exc.kind
    detail = any_pb2.Any()
    detail.Pack(info)
    message = str(exc) or type(exc).__name__
    status = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    return rpc_status.to_status(status)


def invalid_argument(message: str, reason: str = "ERROR_REASON_UNSPECIFIED") -> grpc.Status:
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN)
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message=message, details=[detail])
    return rpc_status.to_status(status)


KNOWN_ERRORS: tuple[type[Exception], ...] = (
    MatchNotFound,
    MissingToken,
    Forbidden,
    StaleMoveCount,
    NotationError,
    BadDeal,
    IllegalMove,
    ReadOnlyViolation,
    QueryError,
)

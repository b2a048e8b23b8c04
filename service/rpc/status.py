"""Map engine and service errors to canonical gRPC status codes, at the edge only.

Each refusal carries a short message (the error's own sentence, which names
the rule broken) and a `google.rpc.ErrorInfo` whose `reason` is an
`ErrorReason` value name, so clients can branch without parsing text.
`unary` and `streaming` wrap the servicer's handlers: a known refusal ends
the call with its status; anything else is a bug, logged and answered
INTERNAL without internals in the message. A request whose bytes could not
be decoded (`decoding.Undecodable`) is refused before the handler runs.
"""

from __future__ import annotations

import errno
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc
import grpc.aio
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from service.errors import (
    ArenaOff,
    AwaitingEntropy,
    BadArgument,
    BadPlacement,
    BotNameTaken,
    BotNotConnected,
    EntropyAlreadyGiven,
    EntropyNotWanted,
    Forbidden,
    LimitReached,
    MatchNotFound,
    MissingArenaKey,
    MissingHouseKey,
    MissingToken,
    NotSigning,
    QueryTimedOut,
    ServiceStopping,
    StaleMoveCount,
    UndecodableRequest,
    WrongArenaKey,
    WrongHouseKey,
)
from service.rpc.decoding import Undecodable
from service.storage.errors import QueryError, ReadOnlyViolation, StorageError
from service.storage.imports import BadImport
from service.storage.tree import NotInTree
from sniff import (
    BadDeal,
    IllegalMove,
    MatchOver,
    MissingOrientation,
    NoRoundInPlay,
    NotationError,
    NotYourTurn,
    RoundInPlay,
    UnexpectedOrientation,
)
from sniff.position import ImpossiblePosition
from sniff.rollout import BadBudget
from sniff.sampler import ImpossibleView

DOMAIN = "sniff.v1"

log = logging.getLogger(__name__)


def _classify(exc: Exception) -> tuple[grpc.StatusCode, str]:
    # Order matters: the subclasses before their bases.
    if isinstance(exc, MatchNotFound | NotInTree):
        return grpc.StatusCode.NOT_FOUND, "ERROR_REASON_MATCH_NOT_FOUND"
    if isinstance(exc, NotSigning):
        return grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_WRONG_PHASE"
    if isinstance(exc, MissingToken):
        return grpc.StatusCode.UNAUTHENTICATED, "ERROR_REASON_BAD_TOKEN"
    if isinstance(exc, Forbidden):
        return grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_BAD_TOKEN"
    if isinstance(exc, StaleMoveCount):
        return grpc.StatusCode.ABORTED, "ERROR_REASON_MOVE_COUNT_MISMATCH"
    if isinstance(exc, AwaitingEntropy):
        return grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_AWAITING_ENTROPY"
    if isinstance(exc, EntropyAlreadyGiven):
        return grpc.StatusCode.ALREADY_EXISTS, "ERROR_REASON_ENTROPY_ALREADY_GIVEN"
    if isinstance(exc, EntropyNotWanted):
        return grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_WRONG_PHASE"
    if isinstance(exc, NotationError):
        return grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_MALFORMED_MOVE"
    if isinstance(exc, BadPlacement):
        return grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_ILLEGAL_MOVE"
    if isinstance(exc, UndecodableRequest):
        return grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT"
    if isinstance(exc, ImpossiblePosition | ImpossibleView | BadBudget):
        return grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT"
    if isinstance(exc, BadDeal):
        return grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_DEAL"
    if isinstance(exc, MissingOrientation | UnexpectedOrientation):
        return grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ORIENTATION"
    if isinstance(exc, NotYourTurn):
        return grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_NOT_YOUR_TURN"
    if isinstance(exc, MatchOver | NoRoundInPlay | RoundInPlay):
        return grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_WRONG_PHASE"
    if isinstance(exc, IllegalMove):
        return grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_ILLEGAL_MOVE"
    if isinstance(exc, BadImport):
        return grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT"
    if isinstance(exc, ReadOnlyViolation | QueryError):
        return grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_QUERY"
    if isinstance(exc, BadArgument):
        return grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_ARGUMENT"
    if isinstance(exc, LimitReached):
        return grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_LIMIT_REACHED"
    if isinstance(exc, QueryTimedOut):
        return grpc.StatusCode.DEADLINE_EXCEEDED, "ERROR_REASON_LIMIT_REACHED"
    if isinstance(exc, MissingHouseKey):
        return grpc.StatusCode.UNAUTHENTICATED, "ERROR_REASON_BAD_HOUSE_KEY"
    if isinstance(exc, WrongHouseKey):
        return grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_BAD_HOUSE_KEY"
    if isinstance(exc, ServiceStopping):
        return grpc.StatusCode.UNAVAILABLE, "ERROR_REASON_UNSPECIFIED"
    if isinstance(exc, ArenaOff):
        return grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_ARENA_OFF"
    if isinstance(exc, MissingArenaKey):
        return grpc.StatusCode.UNAUTHENTICATED, "ERROR_REASON_BAD_ARENA_KEY"
    if isinstance(exc, WrongArenaKey):
        return grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_BAD_ARENA_KEY"
    if isinstance(exc, BotNameTaken):
        return grpc.StatusCode.ALREADY_EXISTS, "ERROR_REASON_BOT_NAME_TAKEN"
    if isinstance(exc, BotNotConnected):
        return grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_BOT_NOT_CONNECTED"
    if isinstance(exc, StorageError):
        if disk_full(exc):
            return grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_STORAGE_FULL"
        return grpc.StatusCode.UNAVAILABLE, "ERROR_REASON_STORAGE_UNAVAILABLE"
    raise exc


def disk_full(exc: BaseException) -> bool:
    """True when the log failed for want of disk space (ENOSPC or EDQUOT anywhere in the chain).

    The storage package wraps the OS error of a failed journal write in a
    StorageError; following the causes finds it whatever the wrapper's type.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        current = current.__cause__ or current.__context__
    return False


def _message(exc: Exception) -> str:
    """The refusal's text; a storage failure says that nothing was applied."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, StorageError) and not isinstance(exc, ReadOnlyViolation | QueryError):
        if disk_full(exc):
            return "the event log's disk is full: nothing was applied; retry once space is freed"
        return f"the event log could not record this, so nothing was applied: {text}"
    return text


_POSITION_FIELDS = {"hand": "hand_tiles"}
"""The AnalyzePositionRequest field of each part of a position the engine names otherwise."""


def refusal(exc: Exception) -> tuple[grpc.StatusCode, error_details_pb2.ErrorInfo, str]:
    """A known refusal's status code, ErrorInfo and message (re-raises anything else): what
    a call's status carries, and what a Play stream sends for one refused answer."""
    code, reason = _classify(exc)
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN)
    if isinstance(exc, IllegalMove | NotationError | BadDeal | BadPlacement):
        info.metadata["kind"] = exc.kind
    if isinstance(exc, BadArgument):
        info.metadata["field"] = exc.field
    if isinstance(exc, ImpossiblePosition):
        info.metadata["field"] = _POSITION_FIELDS.get(exc.field, exc.field)
    if isinstance(exc, ImpossiblePosition | ImpossibleView):
        info.metadata["kind"] = "impossible_position"
    if isinstance(exc, BadBudget):
        info.metadata["field"] = "budget"
    if isinstance(exc, LimitReached):
        info.metadata["limit"] = exc.limit
    if isinstance(exc, QueryTimedOut):
        info.metadata["limit"] = "query_seconds"
    if isinstance(exc, AwaitingEntropy):
        info.metadata["missing_seats"] = ",".join(str(s) for s in exc.missing)
    if isinstance(exc, BotNotConnected):
        info.metadata["bot"] = exc.bot
    return code, info, _message(exc)


def to_status(exc: Exception) -> grpc.Status:
    """The status for a known refusal; re-raises anything else (a bug, reported as INTERNAL)."""
    code, info, message = refusal(exc)
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    return rpc_status.to_status(status)


KNOWN_ERRORS: tuple[type[Exception], ...] = (
    BadArgument,
    BadPlacement,
    UndecodableRequest,
    ImpossiblePosition,
    ImpossibleView,
    BadBudget,
    LimitReached,
    QueryTimedOut,
    MissingHouseKey,
    WrongHouseKey,
    ServiceStopping,
    StorageError,
    MatchNotFound,
    NotInTree,
    NotSigning,
    MissingToken,
    Forbidden,
    StaleMoveCount,
    AwaitingEntropy,
    EntropyAlreadyGiven,
    EntropyNotWanted,
    NotationError,
    BadDeal,
    IllegalMove,
    ArenaOff,
    MissingArenaKey,
    WrongArenaKey,
    BotNameTaken,
    BotNotConnected,
)


async def abort(exc: Exception, context: grpc.aio.ServicerContext[Any, Any], name: str) -> NoReturn:
    """End the call with the status of a refusal; log and hide anything unexpected."""
    if not isinstance(exc, KNOWN_ERRORS):
        log.error("internal error in %s", name, exc_info=exc)
        await context.abort(grpc.StatusCode.INTERNAL, "internal error")
    status = to_status(exc)
    await context.abort(status.code, status.details, status.trailing_metadata)


def _undecodable(request: Undecodable) -> UndecodableRequest:
    return UndecodableRequest(
        f"the request is not a {request.message_name} message: its bytes do not decode"
    )


async def _decoded(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """A client stream's requests, refusing the first whose bytes did not decode."""
    async for request in requests:
        if isinstance(request, Undecodable):
            raise _undecodable(request)
        yield request


S = TypeVar("S")
Q = TypeVar("Q")
A = TypeVar("A")
Context = grpc.aio.ServicerContext[Any, Any]


def unary(
    handler: Callable[[S, Q, Context], Awaitable[A]],
) -> Callable[[S, Q, Context], Awaitable[A]]:
    """Wrap a handler with a unary reply (its request unary or a stream): refusals become
    statuses (see `abort`)."""

    @functools.wraps(handler)
    async def wrapper(self: S, request: Q, context: Context) -> A:
        try:
            if isinstance(request, Undecodable):
                raise _undecodable(request)
            if isinstance(request, AsyncIterator):
                request = _decoded(request)  # type: ignore[assignment]
            return await handler(self, request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as exc:
            await abort(exc, context, handler.__name__)

    return wrapper


def streaming(
    handler: Callable[[S, Q, Context], AsyncIterator[A]],
) -> Callable[[S, Q, Context], AsyncIterator[A]]:
    """Wrap a handler that streams its replies: refusals become statuses (see `abort`)."""

    @functools.wraps(handler)
    async def wrapper(self: S, request: Q, context: Context) -> AsyncIterator[A]:
        try:
            if isinstance(request, Undecodable):
                raise _undecodable(request)
            async for item in handler(self, request, context):
                yield item
        except grpc.aio.AbortError:
            raise
        except Exception as exc:
            await abort(exc, context, handler.__name__)

    return wrapper

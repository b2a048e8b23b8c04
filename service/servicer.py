"""The SniffService servicer: thin glue between requests, the hub and conversions.

Every handler does three things: convert the request, ask the hub, convert
the answer. Known refusals become status codes through `status.py`; anything
else is a bug and surfaces as INTERNAL without internals in the message.
"""

from __future__ import annotations

import functools
import hmac
import io
import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import grpc
import pyarrow as pa

from service import convert
from service.engine import IllegalMove, Layout, Move, MoveKind, NotationError, points_for
from service.errors import Forbidden, MissingToken
from service.hub import Hub
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from service.status import KNOWN_ERRORS, invalid_argument, to_status

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])

MAX_QUERY_CHUNK = 1 << 20
_ILLEGAL = "ERROR_REASON_ILLEGAL_MOVE"


class _Refused(Exception):
    """A refusal decided in a handler itself; the wrappers turn it into its status.

    (Calling `context.abort_with_status` inside a wrapped handler would not
    work: grpc signals the abort by raising a bare `Exception`, which the
    wrappers would then report as INTERNAL.)
    """

    def __init__(self, status: grpc.Status) -> None:
        super().__init__(status.details)
        self.status = status


def _abort(exc: Exception, context: grpc.ServicerContext, name: str) -> None:
    """End the call with the status of a refusal; log and hide anything unexpected."""
    if isinstance(exc, _Refused):
        context.abort_with_status(exc.status)
    if isinstance(exc, KNOWN_ERRORS):
        context.abort_with_status(to_status(exc))
    if isinstance(exc, grpc.RpcError):
        raise exc
    log.exception("internal error in %s", name, exc_info=exc)
    context.abort(grpc.StatusCode.INTERNAL, "internal error")


def _refusals(handler: F) -> F:
    """Turn a unary handler's errors into statuses (see `_abort`)."""

    @functools.wraps(handler)
    def wrapper(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return handler(self, request, context)
        except Exception as exc:
            _abort(exc, context, handler.__name__)

    return wrapper  # type: ignore[return-value]


def _streaming_refusals(handler: F) -> F:
    """Turn a streaming handler's errors into statuses (see `_abort`)."""

    @functools.wraps(handler)
    def wrapper(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
        try:
            yield from handler(self, request, context)
        except Exception as exc:
            _abort(exc, context, handler.__name__)

    return wrapper  # type: ignore[return-value]


def _move_of(request: pb.ApplyMoveRequest) -> Move:
    which = request.WhichOneof("action")
    if which == "notation":
        return Move.parse(request.notation)
    if which == "move":
        return convert.move_from_pb(request.move)
    raise NotationError("the request carries no move: set `move` or `notation`")


class SniffServicer(sniff_pb2_grpc.SniffServiceServicer):
    def __init__(self, hub: Hub, query_token: str) -> None:
        self.hub = hub
        self._query_token = query_token

    @_refusals
    def CreateMatch(
        self, request: pb.CreateMatchRequest, context: grpc.ServicerContext
    ) -> pb.CreateMatchResponse:
        if request.seat_count not in (2, 3, 4):
            raise _Refused(
                invalid_argument(f"seat_count must be 2, 3 or 4, not {request.seat_count}")
            )
        if request.HasField("target") and request.target == 0:
            raise _Refused(invalid_argument("target must be positive"))
        deal = convert.deal_from_pb(request.first_deal) if request.HasField("first_deal") else None
        created = self.hub.create(
            request.seat_count,
            target=request.target if request.HasField("target") else None,
            seed=request.seed if request.HasField("seed") else None,
            deal=deal,
        )
        match = created.match
        return pb.CreateMatchResponse(
            name=convert.name_of(created.match_id),
            match_id=created.match_id,
            seat_tokens=list(created.seat_tokens),
            observer_token=created.observer_token,
            target=match.target,
            leader=match.leader,
            leader_choice=convert._CHOICES[match.history[-1].leader_choice],
            turn=match.turn,
        )

    @_refusals
    def DealRound(
        self, request: pb.DealRoundRequest, context: grpc.ServicerContext
    ) -> pb.DealRoundResponse:
        deal = convert.deal_from_pb(request.deal) if request.HasField("deal") else None
        round_index, leader, choice = self.hub.deal(request.match_id, request.token, deal)
        return pb.DealRoundResponse(
            round_index=round_index, leader=leader, leader_choice=convert._CHOICES[choice]
        )

    @_refusals
    def ListLegalMoves(
        self, request: pb.ListLegalMovesRequest, context: grpc.ServicerContext
    ) -> pb.ListLegalMovesResponse:
        moves = self.hub.legal_moves(request.match_id, request.token, request.seat)
        return pb.ListLegalMovesResponse(moves=[convert.move_pb(m) for m in moves])

    @_refusals
    def ApplyMove(
        self, request: pb.ApplyMoveRequest, context: grpc.ServicerContext
    ) -> pb.ApplyMoveResponse:
        move = _move_of(request)
        outcome = self.hub.apply(
            request.match_id, request.token, request.seat, move, request.expected_move_count
        )
        return convert.apply_response(outcome)

    @_refusals
    def ScoreLayout(
        self, request: pb.ScoreLayoutRequest, context: grpc.ServicerContext
    ) -> pb.ScoreLayoutResponse:
        layout = Layout()
        for i, placement in enumerate(request.placements):
            which = placement.WhichOneof("kind")
            if which == "notation":
                move = Move.parse(placement.notation)
            elif which == "move":
                move = convert.move_from_pb(placement.move)
            else:
                raise NotationError(f"placement {i} sets neither `move` nor `notation`")
            # A placement that cannot be made is a bad argument here (no match
            # state is involved), so INVALID_ARGUMENT, not FAILED_PRECONDITION.
            if move.kind not in (MoveKind.LEAD, MoveKind.PLACE):
                raise _Refused(
                    invalid_argument(f"placement {i}: {move} is not a placement", _ILLEGAL)
                )
            try:
                layout.check(move)
            except IllegalMove as exc:
                raise _Refused(invalid_argument(f"placement {i}: {exc}", _ILLEGAL)) from None
            layout.place(move)
        return pb.ScoreLayoutResponse(
            counted_ends=convert.counted_ends_pb(layout.counted_ends()),
            ends_sum=layout.ends,
            points=points_for(layout.ends),
            open_sides=convert.open_sides_pb(layout.open_sides()),
        )

    @_refusals
    def GetScores(
        self, request: pb.GetScoresRequest, context: grpc.ServicerContext
    ) -> pb.GetScoresResponse:
        v, _ = self.hub.state(request.match_id, request.token)
        msg = pb.GetScoresResponse(
            scores=list(v.scores), target=v.target, over=v.winner is not None
        )
        if v.winner is not None:
            msg.winner = v.winner
            msg.winning_seats.extend(
                s
                for s in range(v.seats)
                if (s % 2 == v.winner % 2 if v.seats == 4 else s == v.winner)
            )
        return msg

    @_refusals
    def GetState(
        self, request: pb.GetStateRequest, context: grpc.ServicerContext
    ) -> pb.GetStateResponse:
        v, choice = self.hub.state(request.match_id, request.token)
        return pb.GetStateResponse(state=convert.state_pb(request.match_id, v, choice))

    @_streaming_refusals
    def WatchMatch(
        self, request: pb.WatchMatchRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.WatchMatchResponse]:
        for role, logged in self.hub.watch(
            request.match_id, request.token, request.from_sequence, context.is_active
        ):
            yield pb.WatchMatchResponse(event=convert.event_pb(request.match_id, role, logged))

    @_streaming_refusals
    def Query(
        self, request: pb.QueryRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.QueryResponse]:
        if not request.token:
            raise MissingToken("a query needs the service's query token (see <db>.owner.json)")
        if not hmac.compare_digest(request.token.encode(), self._query_token.encode()):
            raise Forbidden("the query token is not this service's")
        params = [_param(p) for p in request.parameters]
        batches = self.hub.log.query_batches(request.sql, params or None)
        first = next(batches, None)
        if first is None:  # no rows: the schema still travels
            schema = self.hub.log.query(request.sql, params or None).schema
        else:
            schema = first.schema
        sink = _Chunks()
        writer = pa.ipc.new_stream(pa.PythonFile(sink, mode="w"), schema)
        if first is not None:
            writer.write_batch(first)
        for batch in batches:
            writer.write_batch(batch)
            if sink.size >= MAX_QUERY_CHUNK:
                yield pb.QueryResponse(arrow_ipc=sink.take())
        writer.close()
        yield pb.QueryResponse(arrow_ipc=sink.take())


class _Chunks(io.RawIOBase):
    """A write-only sink that hands out what was written so far, in whole IPC messages."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[bytes] = []
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.parts.append(chunk)
        self.size += len(chunk)
        return len(chunk)

    def take(self) -> bytes:
        out = b"".join(self.parts)
        self.parts, self.size = [], 0
        return out


def _param(p: pb.QueryParameter) -> Any:
    which = p.WhichOneof("value")
    if which is None or which == "null_value":
        return None
    return getattr(p, which)

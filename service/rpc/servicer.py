"""The SniffService servicer: thin glue between requests, the hub and conversions.

Every handler does three things: check the request's bounds, ask the hub,
convert the answer. It runs on the server's asyncio event loop, which must
never wait: whatever blocks (a match's lock, the log's fsync, a DuckDB read)
runs in a bounded thread pool, a waiting WatchMatch stream is a suspended
coroutine (no thread), and a Query's DuckDB work runs in a pool of its own
with a deadline. Known refusals become status codes through `status.py`;
anything else is a bug and surfaces as INTERNAL without internals in the
message.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import io
import logging
import os
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, NoReturn, ParamSpec, TypeVar

import grpc
import grpc.aio
import pyarrow as pa

from service.analyses import AnalysisPool, analyse_position, analyse_view
from service.errors import (
    BadArgument,
    Forbidden,
    LimitReached,
    MissingHouseKey,
    MissingToken,
    QueryTimedOut,
    ServiceStopping,
    WrongHouseKey,
)
from service.hub import Hub, LiveMatch
from service.rpc import bounds, convert
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from service.rpc.status import KNOWN_ERRORS, invalid_argument, to_status
from service.storage.access import QueryInterrupt
from service.storage.events import COLUMNS, arrow_schema
from service.storage.imports import BadImport
from service.storage.log import Imported
from sniff import (
    IllegalMove,
    Layout,
    MatchOver,
    Move,
    MoveKind,
    NoRoundInPlay,
    NotationError,
    NotYourTurn,
    Phase,
    points_for,
)
from sniff.rollout import DEFAULT_ROLLOUTS

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

HOUSE_KEY_HEADER: Final = "x-sniff-house-key"
"""The call metadata that carries the house key (see the proto's introduction)."""

MAX_WATCH_STREAMS_PER_TOKEN: Final = 16
"""Open WatchMatch streams one token (one seat, or the observer, of one match) may hold."""
MAX_WATCH_STREAMS_PER_MATCH: Final = 64
"""Open WatchMatch streams on one match, all its tokens together."""
MAX_WATCH_STREAMS: Final = 10_000
"""Open WatchMatch streams on the whole service."""

MAX_QUERY_SECONDS: Final = 60.0
"""The longest a Query runs, whatever the caller's deadline (or without one)."""
MAX_RUNNING_QUERIES: Final = 2
"""Queries running at once; more are refused (RESOURCE_EXHAUSTED), not queued."""
MAX_QUERY_CHUNK: Final = 1 << 20
"""Bytes of Arrow IPC gathered before a QueryResponse is sent."""
QUERY_CHUNKS_AHEAD: Final = 2
"""Chunks a query may prepare before the caller has taken them (bounds its memory)."""
QUERY_NICE: Final = 19
"""The scheduling niceness of query threads: on a busy machine, play runs first.

The log's DuckDB runs each query on one thread, the calling one (see the
storage package's service settings), so this covers all of a query's work.
"""

MAX_IMPORT_CHUNK: Final = 1 << 20
"""Bytes of one ImportMatches message's `arrow_ipc`."""
MAX_IMPORT_BYTES: Final = 1 << 30
"""Bytes of one ImportMatches call: some two million events."""
IMPORT_COLUMNS: Final = COLUMNS[:-1]
"""The columns of an import's events: those of events_all but logged_at (the log stamps it)."""

_ILLEGAL = "ERROR_REASON_ILLEGAL_MOVE"
_END = object()


class _Refused(Exception):
    """A refusal decided in a handler itself; the wrappers turn it into its status."""

    def __init__(self, status: grpc.Status) -> None:
        super().__init__(status.details)
        self.status = status


async def _abort(exc: Exception, context: grpc.aio.ServicerContext, name: str) -> NoReturn:
    """End the call with the status of a refusal; log and hide anything unexpected."""
    if isinstance(exc, _Refused):
        status = exc.status
    elif isinstance(exc, KNOWN_ERRORS):
        status = to_status(exc)
    else:
        log.error("internal error in %s", name, exc_info=exc)
        await context.abort(grpc.StatusCode.INTERNAL, "internal error")
    await context.abort(status.code, status.details, status.trailing_metadata)


def _unary(handler: F) -> F:
    """Turn a unary handler's errors into statuses (see `_abort`)."""

    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await handler(self, request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as exc:
            await _abort(exc, context, handler.__name__)

    return wrapper  # type: ignore[return-value]


def _streaming(handler: F) -> F:
    """Turn a streaming handler's errors into statuses (see `_abort`)."""

    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            async for item in handler(self, request, context):
                yield item
        except grpc.aio.AbortError:
            raise
        except Exception as exc:
            await _abort(exc, context, handler.__name__)

    return wrapper  # type: ignore[return-value]


def _move_of(request: pb.ApplyMoveRequest) -> Move:
    which = request.WhichOneof("action")
    if which == "notation":
        return Move.parse(request.notation)
    if which == "move":
        return convert.move_from_pb(request.move)
    raise NotationError("the request carries no move: set `move` or `notation`")


class _Streams:
    """Counts of open WatchMatch streams, kept on the event loop (so no lock)."""

    def __init__(self) -> None:
        self.total = 0
        self.per_match: Counter[str] = Counter()
        self.per_token: Counter[tuple[str, int]] = Counter()
        self.wakes: set[asyncio.Event] = set()

    @contextlib.contextmanager
    def hold(self, match_id: str, role: int) -> Iterator[None]:
        token = (match_id, role)
        if self.per_token[token] >= MAX_WATCH_STREAMS_PER_TOKEN:
            raise LimitReached(
                "watch_streams_per_token",
                f"this token already holds {MAX_WATCH_STREAMS_PER_TOKEN} open WatchMatch "
                "streams: close one first",
            )
        if self.per_match[match_id] >= MAX_WATCH_STREAMS_PER_MATCH:
            raise LimitReached(
                "watch_streams_per_match",
                f"this match already has {MAX_WATCH_STREAMS_PER_MATCH} open WatchMatch streams",
            )
        if self.total >= MAX_WATCH_STREAMS:
            raise LimitReached(
                "watch_streams",
                f"the service already has {MAX_WATCH_STREAMS:,} open WatchMatch streams",
            )
        self.total += 1
        self.per_match[match_id] += 1
        self.per_token[token] += 1
        try:
            yield
        finally:
            self.total -= 1
            for counter, key in ((self.per_match, match_id), (self.per_token, token)):
                counter[key] -= 1
                if counter[key] <= 0:
                    del counter[key]


class SniffServicer(sniff_pb2_grpc.SniffServiceServicer):
    """The service's RPCs over one hub; `close()` ends the open streams at shutdown."""

    def __init__(
        self,
        hub: Hub,
        query_token: str,
        *,
        pool: ThreadPoolExecutor,
        house_key: bytes | None = None,
    ) -> None:
        self.hub = hub
        self._query_token = query_token
        self._house_key = house_key
        self._pool = pool
        self._query_pool = ThreadPoolExecutor(
            max_workers=MAX_RUNNING_QUERIES,
            thread_name_prefix="sniff-query",
            initializer=_yield_cpu,
        )
        self._queries_running = 0
        self._analyses = AnalysisPool()
        self.streams = _Streams()
        self._closing = False

    # -- plumbing --

    async def _blocking(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run `fn` in the hub's thread pool; the event loop goes on meanwhile."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    def _check_house_key(self, context: grpc.aio.ServicerContext, what: str) -> None:
        if self._house_key is None:
            return
        sent = [v for k, v in context.invocation_metadata() or () if k == HOUSE_KEY_HEADER]
        if not sent:
            raise MissingHouseKey(
                f"{what} needs the service's house key (call metadata {HOUSE_KEY_HEADER})"
            )
        value = sent[-1]
        key = value.encode() if isinstance(value, str) else bytes(value)
        if not hmac.compare_digest(key, self._house_key):
            raise WrongHouseKey("the house key is not this service's")

    def close(self) -> None:
        """End every waiting WatchMatch stream (UNAVAILABLE) and stop taking queries.

        Call on the event loop when the server starts shutting down, so
        idle streams do not hold the shutdown for its whole grace period.
        """
        self._closing = True
        for wake in self.streams.wakes:
            wake.set()
        self._query_pool.shutdown(wait=False, cancel_futures=True)
        self._analyses.close()

    # -- matches --

    @_unary
    async def CreateMatch(
        self, request: pb.CreateMatchRequest, context: grpc.aio.ServicerContext
    ) -> pb.CreateMatchResponse:
        bounds.create_match(request)
        self._check_house_key(context, "CreateMatch")
        deal = convert.deal_from_pb(request.first_deal) if request.HasField("first_deal") else None
        return await self._blocking(self._create, request, deal)

    def _create(self, request: pb.CreateMatchRequest, deal: Any) -> pb.CreateMatchResponse:
        created = self.hub.create(
            request.seat_count,
            target=request.target if request.HasField("target") else None,
            seed=request.seed if request.HasField("seed") else None,
            deal=deal,
            variant=convert.variant_from_pb(request.variant),
            round_limit=request.round_limit if request.HasField("round_limit") else None,
        )
        match = created.match
        response = pb.CreateMatchResponse(
            name=convert.name_of(created.match_id),
            match_id=created.match_id,
            seat_tokens=list(created.seat_tokens),
            observer_token=created.observer_token,
            target=match.target,
            leader=match.leader,
            leader_choice=convert._CHOICES[match.history[-1].leader_choice],
            turn=match.turn,
            variant=convert.variant_pb(match.variant),
            seed_commitment=convert.hex_of(created.seed_commitment),
        )
        if match.round_limit is not None:
            response.round_limit = match.round_limit
        return response

    @_unary
    async def DealRound(
        self, request: pb.DealRoundRequest, context: grpc.aio.ServicerContext
    ) -> pb.DealRoundResponse:
        bounds.deal_round(request)
        deal = None
        if request.HasField("deal"):
            self._check_house_key(context, "an explicit deal")
            deal = convert.deal_from_pb(request.deal)
        round_index, leader, choice = await self._blocking(
            self.hub.deal, request.match_id, request.token, deal
        )
        return pb.DealRoundResponse(
            round_index=round_index, leader=leader, leader_choice=convert._CHOICES[choice]
        )

    @_unary
    async def ListLegalMoves(
        self, request: pb.ListLegalMovesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListLegalMovesResponse:
        bounds.list_legal_moves(request)
        moves = await self._blocking(
            self.hub.legal_moves, request.match_id, request.token, request.seat
        )
        return pb.ListLegalMovesResponse(moves=[convert.move_pb(m) for m in moves])

    @_unary
    async def ApplyMove(
        self, request: pb.ApplyMoveRequest, context: grpc.aio.ServicerContext
    ) -> pb.ApplyMoveResponse:
        bounds.apply_move(request)
        move = _move_of(request)
        return await self._blocking(self._apply, request, move)

    def _apply(self, request: pb.ApplyMoveRequest, move: Move) -> pb.ApplyMoveResponse:
        outcome = self.hub.apply(
            request.match_id, request.token, request.seat, move, request.expected_move_count
        )
        return convert.apply_response(outcome)

    @_unary
    async def ScoreLayout(
        self, request: pb.ScoreLayoutRequest, context: grpc.aio.ServicerContext
    ) -> pb.ScoreLayoutResponse:
        # At most 28 placements and no shared state: cheap enough for the event loop.
        bounds.score_layout(request)
        layout = Layout(convert.variant_from_pb(request.variant))
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

    @_unary
    async def GetScores(
        self, request: pb.GetScoresRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetScoresResponse:
        bounds.match_token(request)
        v, _, proof = await self._blocking(self.hub.state, request.match_id, request.token)
        return convert.scores_pb(v, proof)

    @_unary
    async def GetState(
        self, request: pb.GetStateRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStateResponse:
        bounds.match_token(request)
        v, choice, proof = await self._blocking(self.hub.state, request.match_id, request.token)
        return pb.GetStateResponse(state=convert.state_pb(request.match_id, v, choice, proof))

    # -- analyses --

    @_unary
    async def Analyze(
        self, request: pb.AnalyzeRequest, context: grpc.aio.ServicerContext
    ) -> pb.AnalyzeResponse:
        bounds.analyze(request)
        v, _, _ = await self._blocking(self.hub.state, request.match_id, request.token)
        if v.viewer is None:
            raise Forbidden(
                "an analysis is made from one seat's view: use the token of the seat to play"
            )
        if v.phase is Phase.OVER:
            raise MatchOver("the match is over: there is nothing to analyse")
        if v.phase is not Phase.PLAYING:
            raise NoRoundInPlay("no round is in play: the next round must be dealt first")
        if v.turn != v.viewer:
            raise NotYourTurn(f"it is seat {v.turn}'s turn, not seat {v.viewer}'s")
        rollouts, millis = _budget(request.budget, context)
        policy = convert.policy_from_pb(request.policy)
        seed = request.seed if request.HasField("seed") else 0
        result = await self._analyses.run(analyse_view, v, rollouts, millis, policy, seed)
        return pb.AnalyzeResponse(
            moves=convert.move_equities_pb(result),
            rollouts=result.rollouts,
            seed=seed,
            policy=convert.policy_pb(policy),
            move_count=v.move_count,
        )

    @_unary
    async def AnalyzePosition(
        self, request: pb.AnalyzePositionRequest, context: grpc.aio.ServicerContext
    ) -> pb.AnalyzePositionResponse:
        bounds.analyze_position(request)
        position = convert.position_from_pb(request)
        rollouts, millis = _budget(request.budget, context)
        policy = convert.policy_from_pb(request.policy)
        seed = request.seed if request.HasField("seed") else 0
        result = await self._analyses.run(
            analyse_position,
            **position,
            rollouts=rollouts,
            millis=millis,
            policy=policy,
            seed=seed,
        )
        return pb.AnalyzePositionResponse(
            moves=convert.move_equities_pb(result),
            rollouts=result.rollouts,
            seed=seed,
            policy=convert.policy_pb(policy),
        )

    # -- streams --

    @_streaming
    async def WatchMatch(
        self, request: pb.WatchMatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.WatchMatchResponse]:
        bounds.watch_match(request)
        live, role = await self._blocking(self.hub.authorize, request.match_id, request.token)
        with self.streams.hold(request.match_id, role):
            async for logged in self._watch(live, request.from_sequence):
                event = convert.event_pb(
                    request.match_id, role, logged, keyed=live.secrets is not None
                )
                yield pb.WatchMatchResponse(event=event)

    async def _watch(self, live: LiveMatch, from_sequence: int) -> AsyncIterator[Any]:
        """The match's durable events from `from_sequence` on, waiting (no thread) for more."""
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()

        def notify() -> None:  # called by the thread that appended the events
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                loop.call_soon_threadsafe(wake.set)

        self.hub.listen(live, notify)
        self.streams.wakes.add(wake)
        try:
            next_seq = from_sequence
            while True:
                wake.clear()
                batch, over = self.hub.events_from(live, next_seq)
                for logged in batch:
                    yield logged
                next_seq += len(batch)
                if over:
                    return
                if self._closing:
                    await _stopping()
                await wake.wait()
                if self._closing:
                    await _stopping()
        finally:
            self.streams.wakes.discard(wake)
            self.hub.unlisten(live, notify)

    @_unary
    async def ImportMatches(
        self,
        requests: AsyncIterator[pb.ImportMatchesRequest],
        context: grpc.aio.ServicerContext,
    ) -> pb.ImportMatchesResponse:
        data = bytearray()
        first = True
        async for request in requests:
            if first:
                first = False
                self._check_query_token(request.token, "an import")
            if len(request.arrow_ipc) > MAX_IMPORT_CHUNK:
                raise BadArgument("arrow_ipc", f"arrow_ipc: more than {MAX_IMPORT_CHUNK:,} bytes")
            data += request.arrow_ipc
            if len(data) > MAX_IMPORT_BYTES:
                raise LimitReached(
                    "import_bytes", f"an import holds at most {MAX_IMPORT_BYTES:,} bytes"
                )
        if first:
            raise BadArgument("arrow_ipc", "arrow_ipc: the call sent no message")
        if self._closing:
            await _stopping()
        done = await self._blocking(self._import, bytes(data))
        return pb.ImportMatchesResponse(
            imported_match_ids=list(done.imported),
            present_match_ids=list(done.present),
            events=done.events,
        )

    def _import(self, data: bytes) -> Imported:
        try:
            table = pa.ipc.open_stream(data).read_all()
        except (pa.ArrowException, ValueError) as exc:
            raise BadArgument("arrow_ipc", f"arrow_ipc: not an Arrow IPC stream ({exc})") from None
        missing = [name for name in IMPORT_COLUMNS if name not in table.column_names]
        if missing:
            raise BadArgument("arrow_ipc", f"arrow_ipc: the events lack the column {missing[0]}")
        table = table.select(list(IMPORT_COLUMNS)).append_column(
            arrow_schema().field("logged_at"),
            pa.nulls(table.num_rows, pa.timestamp("us", tz="UTC")),
        )
        try:
            return self.hub.log.import_matches(table, verify=True)
        except (TypeError, ValueError, pa.ArrowException) as exc:
            raise BadImport(f"the events cannot be stored: {exc}") from None

    def _check_query_token(self, token: str, what: str) -> None:
        if not token:
            raise MissingToken(f"{what} needs the service's query token (see <db>.owner.json)")
        if not hmac.compare_digest(token.encode(), self._query_token.encode()):
            raise Forbidden("the query token is not this service's")

    @_streaming
    async def Query(
        self, request: pb.QueryRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.QueryResponse]:
        bounds.query(request)
        self._check_query_token(request.token, "a query")
        if self._closing:
            await _stopping()
        if self._queries_running >= MAX_RUNNING_QUERIES:
            raise LimitReached(
                "running_queries",
                f"{MAX_RUNNING_QUERIES} queries are already running: try again when they end",
            )
        params = [_param(p) for p in request.parameters]
        remaining = context.time_remaining()
        seconds = MAX_QUERY_SECONDS if remaining is None else min(remaining, MAX_QUERY_SECONDS)
        async for chunk in self._run_query(request.sql, params, seconds):
            yield pb.QueryResponse(arrow_ipc=chunk)

    async def _run_query(self, sql: str, params: list[Any], seconds: float) -> AsyncIterator[bytes]:
        """Run the query in the query pool; stream its IPC chunks; stop it if we stop reading.

        The DuckDB work (and the generator that owns its cursor) stays on one
        pool thread from start to end; this coroutine only relays chunks. When
        the deadline passes or the caller goes away, the query is interrupted
        and its thread released.
        """
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[Any] = asyncio.Queue()
        credits = threading.Semaphore(QUERY_CHUNKS_AHEAD)
        stop = threading.Event()
        interrupt = QueryInterrupt()
        timed_out = False

        def put(item: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                loop.call_soon_threadsafe(chunks.put_nowait, item)

        def produce() -> None:
            try:
                for chunk in self._ipc_chunks(sql, params, interrupt):
                    credits.acquire()
                    if stop.is_set():
                        return
                    put(chunk)
                put(_END)
            except BaseException as exc:
                put(exc)

        def on_deadline() -> None:
            nonlocal timed_out
            timed_out = True
            interrupt.interrupt()

        held = True

        def release(_: object = None) -> None:
            """Give the query's place back once its DuckDB work is over (on the loop)."""
            nonlocal held
            if held:
                held = False
                self._queries_running -= 1

        self._queries_running += 1
        try:
            work = loop.run_in_executor(self._query_pool, produce)
        except RuntimeError:  # the pool is shut down: the service is stopping
            release()
            await _stopping()
        work.add_done_callback(release)
        timer = loop.call_later(seconds, on_deadline)
        try:
            while True:
                item = await chunks.get()
                credits.release()
                if item is _END or isinstance(item, BaseException):
                    release()  # the producer has ended its DuckDB work; its thread returns
                if item is _END:
                    return
                if isinstance(item, BaseException):
                    if timed_out:
                        raise QueryTimedOut(
                            f"the query ran past its time limit ({seconds:.3g} s; the service "
                            f"allows at most {MAX_QUERY_SECONDS:.0f} s) and was stopped"
                        )
                    raise item
                yield item
        finally:
            timer.cancel()
            if not work.done():
                stop.set()
                interrupt.interrupt()
                credits.release()  # a producer waiting for room sees `stop`

    def _ipc_chunks(
        self, sql: str, params: list[Any], interrupt: QueryInterrupt
    ) -> Iterator[bytes]:
        """The result as Arrow IPC stream bytes, in chunks of whole messages (pool thread)."""
        batches = self.hub.log.query_batches(sql, params or None, interrupt=interrupt)
        with contextlib.closing(batches):  # type: ignore[type-var]
            first = next(batches)  # there is always one: an empty result's carries the schema
            sink = _Chunks()
            writer = pa.ipc.new_stream(pa.PythonFile(sink, mode="w"), first.schema)
            writer.write_batch(first)
            for batch in batches:
                writer.write_batch(batch)
                if sink.size >= MAX_QUERY_CHUNK:
                    yield sink.take()
            writer.close()
            yield sink.take()


def _budget(
    budget: pb.AnalysisBudget, context: grpc.aio.ServicerContext
) -> tuple[int | None, float]:
    """Rollouts per move (None: as many as the time allows) and the time cap in ms: the
    budget's deadline, the service's maximum and the caller's own deadline, whichever is
    first. Neither rollouts nor a deadline: the default rollouts."""
    rollouts: int | None = budget.rollouts if budget.HasField("rollouts") else None
    millis = float(bounds.MAX_ANALYSIS_MILLIS)
    if budget.HasField("deadline_millis"):
        millis = min(millis, budget.deadline_millis)
    elif rollouts is None:
        rollouts = DEFAULT_ROLLOUTS
    remaining = context.time_remaining()
    if remaining is not None:
        # Leave the reply time to travel; a caller with no time left still gets one batch.
        millis = max(1.0, min(millis, remaining * 1000.0 - ANALYSIS_REPLY_MARGIN_MS))
    return rollouts, millis


ANALYSIS_REPLY_MARGIN_MS: Final = 100.0
"""Of the caller's deadline, what an analysis leaves for its reply to reach the caller."""


def _yield_cpu() -> None:
    """Lower this thread's scheduling priority (Linux: niceness is per thread)."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), QUERY_NICE)


async def _stopping() -> NoReturn:
    raise ServiceStopping("the service is stopping: try again once it is back")


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

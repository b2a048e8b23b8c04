"""The SniffService servicer: thin glue between requests, the hub and conversions.

Every handler does three things: check the request's bounds, ask the hub (or
the analyses, the query streams, the watch streams), convert the answer
(`convert.py`). It runs on the server's asyncio event loop, which must never
wait: whatever blocks (a match's lock, the log's fsync, a DuckDB read) runs
in a bounded thread pool, a waiting WatchMatch or Play stream is a suspended
coroutine (`watch_stream.py`, `play_stream.py`), a Query's DuckDB work runs
in a pool of its own (`query_stream.py`) and an analysis in worker processes
(`service/analyses.py`). Refusals become status codes in `status.py`.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, ParamSpec, TypeVar

import grpc.aio

from service.analyses import AnalysisPool, analyse_position, analyse_view, solve_position
from service.arena import ARENA_KEY_HEADER, Arena, HandedSeat
from service.errors import (
    BadArgument,
    Forbidden,
    MissingHouseKey,
    MissingToken,
    ServiceStopping,
    WrongHouseKey,
)
from service.hub import OBSERVER, Hub
from service.rpc import bounds, convert
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from service.rpc.play_stream import PlayStreams
from service.rpc.query_stream import QueryStreams
from service.rpc.status import streaming, unary
from service.rpc.watch_stream import WatchStreams
from service.scoring import build_layout
from service.storage.log import Imported
from service.storage.simulated import SimulationRun

P = ParamSpec("P")
R = TypeVar("R")
Context = grpc.aio.ServicerContext[Any, Any]

HOUSE_KEY_HEADER: Final = "x-sniff-house-key"
"""The call metadata that carries the house key (see the proto's introduction)."""


class SniffServicer(sniff_pb2_grpc.SniffServiceServicer):
    """The service's RPCs over one hub; `close()` ends the open streams at shutdown."""

    def __init__(
        self,
        hub: Hub,
        query_token: str,
        *,
        pool: ThreadPoolExecutor,
        house_key: bytes | None = None,
        arena_key: bytes | None = None,
    ) -> None:
        self.hub = hub
        self._query_token = query_token
        self._house_key = house_key
        self._pool = pool
        self.queries = QueryStreams(hub.log)
        self.streams = WatchStreams(hub)
        self.arena = Arena(arena_key)
        self.plays = PlayStreams(hub, self._blocking, arena=self.arena)
        self._analyses = AnalysisPool()
        self._closing = False

    # -- plumbing --

    async def _blocking(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run `fn` in the hub's thread pool; the event loop goes on meanwhile."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    def _check_house_key(self, context: Context, what: str) -> None:
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

    @staticmethod
    def _sent_arena_key(context: Context) -> bytes | None:
        sent = [v for k, v in context.invocation_metadata() or () if k == ARENA_KEY_HEADER]
        if not sent:
            return None
        value = sent[-1]
        return value.encode() if isinstance(value, str) else bytes(value)

    def _check_query_token(self, token: str, what: str) -> None:
        if not token:
            raise MissingToken(f"{what} needs the service's query token (see <db>.owner.json)")
        if not hmac.compare_digest(token.encode(), self._query_token.encode()):
            raise Forbidden("the query token is not this service's")

    def close(self) -> None:
        """End every waiting WatchMatch stream (UNAVAILABLE) and stop taking queries.

        Call on the event loop when the server starts shutting down, so
        idle streams do not hold the shutdown for its whole grace period.
        """
        self._closing = True
        self.streams.close()
        self.plays.close()
        self.queries.close()
        self._analyses.close()

    # -- matches --

    @unary
    async def CreateMatch(
        self, request: pb.CreateMatchRequest, context: Context
    ) -> pb.CreateMatchResponse:
        bounds.create_match(request)
        self._check_house_key(context, "CreateMatch")
        deal = convert.deal_from_pb(request.first_deal) if request.HasField("first_deal") else None
        created = await self._blocking(
            self.hub.create,
            request.seat_count,
            target=request.target if request.HasField("target") else None,
            seed=request.seed if request.HasField("seed") else None,
            deal=deal,
            variant=convert.variant_from_pb(request.variant),
            round_limit=request.round_limit if request.HasField("round_limit") else None,
            seat_entropy=request.seat_entropy,
            time_control=convert.time_control_from_pb(request.time_control)
            if request.HasField("time_control")
            else None,
            players=tuple(request.players),
            run_id=request.run_id,
        )
        return convert.create_response(created)

    @unary
    async def ContributeEntropy(
        self, request: pb.ContributeEntropyRequest, context: Context
    ) -> pb.ContributeEntropyResponse:
        bounds.contribute_entropy(request)
        contributed = await self._blocking(
            self.hub.contribute, request.match_id, request.token, request.entropy
        )
        return convert.contribute_response(contributed)

    @unary
    async def DealRound(
        self, request: pb.DealRoundRequest, context: Context
    ) -> pb.DealRoundResponse:
        bounds.deal_round(request)
        deal = None
        if request.HasField("deal"):
            self._check_house_key(context, "an explicit deal")
            deal = convert.deal_from_pb(request.deal)
        dealt = await self._blocking(self.hub.deal, request.match_id, request.token, deal)
        return convert.deal_response(*dealt)

    @unary
    async def ListLegalMoves(
        self, request: pb.ListLegalMovesRequest, context: Context
    ) -> pb.ListLegalMovesResponse:
        bounds.list_legal_moves(request)
        moves = await self._blocking(
            self.hub.legal_moves, request.match_id, request.token, request.seat
        )
        return pb.ListLegalMovesResponse(moves=[convert.move_pb(m) for m in moves])

    @unary
    async def ApplyMove(
        self, request: pb.ApplyMoveRequest, context: Context
    ) -> pb.ApplyMoveResponse:
        bounds.apply_move(request)
        move = convert.move_of_request(request)
        outcome = await self._blocking(
            self.hub.apply,
            request.match_id,
            request.token,
            request.seat,
            move,
            request.expected_move_count,
            received=self.hub.now(),
        )
        return convert.apply_response(outcome)

    @unary
    async def ScoreLayout(
        self, request: pb.ScoreLayoutRequest, context: Context
    ) -> pb.ScoreLayoutResponse:
        # At most 28 placements and no shared state: cheap enough for the event loop.
        bounds.score_layout(request)
        placements = convert.placements_from_pb(request.placements)
        layout = build_layout(convert.variant_from_pb(request.variant), placements)
        return convert.score_layout_response(layout)

    @unary
    async def GetScores(
        self, request: pb.GetScoresRequest, context: Context
    ) -> pb.GetScoresResponse:
        bounds.match_token(request)
        v, _, proof = await self._blocking(self.hub.state, request.match_id, request.token)
        return convert.scores_pb(v, proof)

    @unary
    async def GetState(self, request: pb.GetStateRequest, context: Context) -> pb.GetStateResponse:
        bounds.match_token(request)
        v, choice, proof, timing = await self._blocking(
            self.hub.timed_state, request.match_id, request.token
        )
        state = convert.state_pb(request.match_id, v, choice, proof)
        return pb.GetStateResponse(state=convert.with_timing(state, timing))

    # -- analyses --

    @unary
    async def Analyze(self, request: pb.AnalyzeRequest, context: Context) -> pb.AnalyzeResponse:
        bounds.analyze(request)
        v = await self._blocking(self.hub.analysis_view, request.match_id, request.token)
        rollouts, millis = convert.budget_from_pb(request.budget, context.time_remaining())
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

    @unary
    async def AnalyzePosition(
        self, request: pb.AnalyzePositionRequest, context: Context
    ) -> pb.AnalyzePositionResponse:
        bounds.analyze_position(request)
        position = convert.position_from_pb(request)
        rollouts, millis = convert.budget_from_pb(request.budget, context.time_remaining())
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

    @unary
    async def Solve(self, request: pb.SolveRequest, context: Context) -> pb.SolveResponse:
        bounds.solve(request)
        position = convert.solve_position_from_pb(request)
        nodes, millis = convert.solve_budget_from_pb(request.budget, context.time_remaining())
        result = await self._analyses.run(solve_position, **position, nodes=nodes, millis=millis)
        return convert.solve_response_pb(result)

    # -- streams --

    @streaming
    async def WatchMatch(
        self, request: pb.WatchMatchRequest, context: Context
    ) -> AsyncIterator[pb.WatchMatchResponse]:
        bounds.watch_match(request)
        live, role = await self._blocking(self.hub.authorize, request.match_id, request.token)
        keyed = live.secrets is not None
        async for logged, ends_sum in self.streams.events(live, role, request.from_sequence):
            event = convert.event_pb(request.match_id, role, logged, keyed=keyed, ends_sum=ends_sum)
            yield pb.WatchMatchResponse(event=event)

    @unary
    async def Play(self, requests: AsyncIterator[pb.PlayRequest], context: Context) -> None:
        # It writes itself (no generator), so that a stream that fails while a write waits
        # for a client that does not read can give the write up (play_stream.py).
        await self.plays.play(requests, context.write, self._sent_arena_key(context))

    # -- the arena --

    @unary
    async def ListArenaBots(
        self, request: pb.ListArenaBotsRequest, context: Context
    ) -> pb.ListArenaBotsResponse:
        self.arena.check_key(self._sent_arena_key(context))
        return pb.ListArenaBotsResponse(
            bots=[
                pb.ArenaBot(name=b.name, seats_in_play=b.seats_in_play, seats_handed=b.seats_handed)
                for b in self.arena.bots()
            ]
        )

    @unary
    async def SeatArenaBots(
        self, request: pb.SeatArenaBotsRequest, context: Context
    ) -> pb.SeatArenaBotsResponse:
        self.arena.check_key(self._sent_arena_key(context))
        bounds.seat_arena_bots(request)
        named = Counter((s.match_id, s.token) for s in request.seats)
        if any(n > 1 for n in named.values()):
            raise BadArgument("seats", "seats: a seat is named twice")
        handed = []
        for i, s in enumerate(request.seats):
            live, role = await self._blocking(self.hub.authorize, s.match_id, s.token)
            if role == OBSERVER:
                raise Forbidden(f"seats[{i}]: the observer token cannot play: hand a seat token")
            seed = s.bot_seed if s.HasField("bot_seed") else None
            handed.append((s.bot, HandedSeat(live, role, s.token, seed)))
        return pb.SeatArenaBotsResponse(handed_seats=self.arena.seat(handed))

    @unary
    async def ImportMatches(
        self, requests: AsyncIterator[pb.ImportMatchesRequest], context: Context
    ) -> pb.ImportMatchesResponse:
        data = {name: bytearray() for name in bounds.IMPORT_FIELDS}
        received = 0
        first = True
        async for request in requests:
            if first:
                first = False
                self._check_query_token(request.token, "an import")
            received += bounds.import_chunk(request, received)
            for name, into in data.items():
                into += getattr(request, name)
        if first:
            raise BadArgument("arrow_ipc", "arrow_ipc: the call sent no message")
        if self._closing:
            raise ServiceStopping("the service is stopping: try again once it is back")
        done = await self._blocking(self._import, {k: bytes(v) for k, v in data.items()})
        return pb.ImportMatchesResponse(
            imported_match_ids=list(done.imported),
            present_match_ids=list(done.present),
            events=done.events,
        )

    def _import(self, data: dict[str, bytes]) -> Imported:
        """Decode and import in one hub thread: both are seconds of work for a big import."""
        return self.hub.import_matches(
            convert.events_table(data["arrow_ipc"]),
            convert.facts_tables(*(data[name] for name in bounds.FACTS_FIELDS)),
        )

    @unary
    async def StoreSimulated(
        self, requests: AsyncIterator[pb.StoreSimulatedRequest], context: Context
    ) -> pb.StoreSimulatedResponse:
        data = {name: bytearray() for name in bounds.STORE_FIELDS}
        received = 0
        run: pb.SimulationRun | None = None
        async for request in requests:
            if run is None:
                self._check_query_token(request.token, "storing simulated matches")
                run = request.run
            received += bounds.import_chunk(request, received, bounds.STORE_FIELDS)
            for name, into in data.items():
                into += getattr(request, name)
        if run is None:
            raise BadArgument("run", "run: the call sent no message")
        if self._closing:
            raise ServiceStopping("the service is stopping: try again once it is back")
        given = convert.simulation_run_from_pb(run)
        stored = await self._blocking(
            self._store_simulated, given, {k: bytes(v) for k, v in data.items()}
        )
        return pb.StoreSimulatedResponse(matches=stored)

    def _store_simulated(self, run: SimulationRun, data: dict[str, bytes]) -> int:
        """Decode, check and store in one hub thread."""
        return self.hub.store_simulated(run, *convert.simulated_tables(data))

    # -- signed evidence --

    @unary
    async def GetLogKey(
        self, request: pb.GetLogKeyRequest, context: Context
    ) -> pb.GetLogKeyResponse:
        key, head = await self._blocking(self.hub.log_key)
        msg = pb.GetLogKeyResponse(public_key_pem=key.public.pem().decode(), log_id=key.log_id)
        if head is not None:
            msg.tree_head.CopyFrom(convert.tree_head_pb(head))
        return msg

    @unary
    async def GetInclusionProof(
        self, request: pb.GetInclusionProofRequest, context: Context
    ) -> pb.GetInclusionProofResponse:
        bounds.match_id(request.match_id)
        return convert.inclusion_pb(await self._blocking(self.hub.inclusion, request.match_id))

    @unary
    async def GetConsistencyProof(
        self, request: pb.GetConsistencyProofRequest, context: Context
    ) -> pb.GetConsistencyProofResponse:
        new_size = request.to_size if request.HasField("to_size") else None
        proof = await self._blocking(self.hub.consistency, request.from_size, new_size)
        return convert.consistency_pb(proof)

    @streaming
    async def Query(
        self, request: pb.QueryRequest, context: Context
    ) -> AsyncIterator[pb.QueryResponse]:
        bounds.query(request)
        self._check_query_token(request.token, "a query")
        params = convert.query_params(request.parameters)
        async for chunk in self.queries.stream(request.sql, params, context.time_remaining()):
            yield pb.QueryResponse(arrow_ipc=chunk)

"""Tournaments with remote bots: the arena seats them, the tournament plays the local ones.

`sniff tournament --remote NAME,...` plays the very tournament
analysis/tournament.py plays in process (the same deals, rotations, seeds
and commitment, the same report), but through a service's arena
(docs/service.md, "The arena"): for each match it asks the service to
create it (CreateMatch, with the players' names and the tournament's id as
run id, so the service logs it under them), hands each remote bot's seat to
that bot by name (SeatArenaBots, with the bot seed the in-process
tournament would give it), and plays the local bots' seats itself over one
Play stream (analysis/remote_play.py). The rotations of a deal are played
at once; the deals one after another, so a sequential test stops at the
same deal as in process, and each deal's results come back as it ends.

The service may be killed meanwhile: the tournament then waits for it to
come back (the same address, the same log), for the remote bots to register
again, hands them their seats of the unfinished matches again and resumes
the local seats from the last action it saw (Play resume); the matches
already over are not played again, and no deal is played twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

import grpc
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2
from grpc_status import rpc_status

from analysis.parallel import chunked
from analysis.remote import channel, health_client
from analysis.remote_play import MatchSeen, StreamSeat, note_event, play_stream
from analysis.stats.sprt import Sequential
from analysis.tournament import Played, SeedsCommitment, Settings, deal_score, rotations
from service.arena import ARENA_KEY_HEADER
from service.rpc.convert import time_control_pb
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from sniff import Bot, make_bot
from sniff.rules import team_of
from sniff.seeds import rotation_bot_seed

HOUSE_KEY_HEADER = "x-sniff-house-key"
RECONNECT_SECONDS = 120.0
"""How long the tournament waits for the service (and its remote bots) to come back."""
DEALS_AT_ONCE = 8
"""Deals played at once by default (without a sequential test)."""
CALL_SECONDS = 30.0
"""Deadline of each unary call."""
RETRIED = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, grpc.StatusCode.DEADLINE_EXCEEDED}
)
"""What a service that went away (or is coming back) ends a call with: wait, then go on."""


class ArenaUnavailable(Exception):
    """The service, or a remote bot, did not come back in time: the tournament stops."""


@dataclass(frozen=True, slots=True)
class ArenaServer:
    """Where the arena is and the keys it takes."""

    address: str
    arena_key: str
    house_key: str | None = None
    tls_ca: str | None = None
    wait_seconds: float = RECONNECT_SECONDS
    """How long to wait for the service and the remote bots (at the start and after a drop)."""


@dataclass(slots=True)
class _Match:
    """One match of a deal: where it stands for the tournament."""

    deal: int
    seed: int
    """The deal's seed: the match's."""
    rotation: int
    seated: tuple[str, ...]
    match_id: str = ""
    tokens: tuple[str, ...] = ()
    observer: str = ""
    seen: MatchSeen = field(default_factory=MatchSeen)
    """What the local seats' stream saw, to resume from."""
    end: MatchSeen | None = None
    """The match to its end, as the observer saw it."""
    bots: dict[int, Bot] = field(default_factory=dict)
    """The local bots, by seat: the same bot plays on after a resume."""

    def bot_seed(self, seat: int) -> int:
        """The seed the bot of `seat` has in process."""
        return rotation_bot_seed(self.seed, self.rotation, seat)

    def bot(self, seat: int) -> Bot:
        """The local bot of `seat`, made on first use, seeded as in process."""
        if seat not in self.bots:
            self.bots[seat] = make_bot(self.seated[seat], self.bot_seed(seat))
        return self.bots[seat]


def play_remote(
    settings: Settings,
    remote: Sequence[str],
    server: ArenaServer,
    committed: SeedsCommitment,
    *,
    progress: Callable[[int], None] | None = None,
    on_deal: Callable[[Sequence[Played]], None] | None = None,
    deals_at_once: int = DEALS_AT_ONCE,
) -> list[Played]:
    """Every match of the tournament, in deal then rotation order (with a sequential test,
    the deals up to the one that decides it); `on_deal` gets the matches so far after each
    deal. `deals_at_once` deals are played at once (a match waits for its bots' answers,
    so more at once keep them busy); with a sequential test one, so that the service logs
    no deal after the one that decides it."""
    settings.check()
    if len(committed.seeds) != settings.deals:
        raise ValueError(f"the commitment holds {len(committed.seeds)} seeds, not {settings.deals}")
    if deals_at_once < 1:
        raise ValueError(f"deals at once must be at least 1, not {deals_at_once}")
    arena = _Arena(server, frozenset(remote))
    test = None if settings.sprt is None else Sequential(settings.sprt)
    size = 1 if test is not None else deals_at_once
    played: list[Played] = []
    try:
        arena.wait_ready()
        for chunk in chunked(range(settings.deals), size):
            for matches in arena.play_deals(settings, committed, chunk):
                played += matches
                if progress is not None:
                    progress(len(matches))
                if on_deal is not None:
                    on_deal(played)
                if test is not None and test.add(deal_score(matches, settings.bots)) is not None:
                    return played
    finally:
        arena.close()
    return played


class _Arena:
    """The tournament's connection to the service, made again after a drop."""

    def __init__(self, server: ArenaServer, remote: frozenset[str]) -> None:
        self.server = server
        self.remote = remote
        self.expected = remote
        """The remote bots waited for after the service went away: all of them, or with a
        time control those connected when last asked (one that left loses its time)."""
        self._channel = channel(server.address, server.tls_ca)
        self.stub = sniff_pb2_grpc.SniffServiceStub(self._channel)

    def close(self) -> None:
        self._channel.close()

    @property
    def _arena_md(self) -> list[tuple[str, str]]:
        return [(ARENA_KEY_HEADER, self.server.arena_key)]

    @property
    def _house_md(self) -> list[tuple[str, str]]:
        key = self.server.house_key
        return [] if key is None else [(HOUSE_KEY_HEADER, key)]

    def wait_ready(self) -> None:
        """Wait until the service answers and every remote bot is registered."""
        deadline = time.monotonic() + self.server.wait_seconds
        missing: set[str] = set(self.expected)
        while True:
            try:
                reply = self.stub.ListArenaBots(
                    pb.ListArenaBotsRequest(), metadata=self._arena_md, timeout=CALL_SECONDS
                )
                missing = set(self.expected) - {b.name for b in reply.bots}
                if not missing:
                    return
            except grpc.RpcError as exc:
                if exc.code() not in RETRIED:
                    raise
                missing = {f"the service at {self.server.address}"}
            if time.monotonic() > deadline:
                raise ArenaUnavailable(
                    f"waited {self.server.wait_seconds:g} s for {', '.join(sorted(missing))}"
                    " to connect to the arena"
                )
            time.sleep(0.2)

    def play_deals(
        self, settings: Settings, committed: SeedsCommitment, deals: Sequence[int]
    ) -> list[list[Played]]:
        """Every rotation of each deal, all played at once to their ends; again after a drop
        (the matches already created go on where they stand). Each deal's matches."""
        seatings = rotations(settings.bots, settings.seats)
        matches = [
            _Match(deal, committed.seeds[deal], r, seated)
            for deal in deals
            for r, seated in enumerate(seatings)
        ]
        while True:
            try:
                self._run(settings, matches)
                break
            except grpc.RpcError as exc:
                if _reason(exc) == "ERROR_REASON_BOT_NOT_CONNECTED":
                    if settings.time_control is None:
                        self.wait_ready()  # a remote bot dropped: wait for it to come back
                    continue
                if exc.code() not in RETRIED:
                    raise
                self.wait_health()
                self.wait_ready()
        k = len(seatings)
        return [
            [self._played(m, settings.seats) for m in matches[i : i + k]]
            for i in range(0, len(matches), k)
        ]

    def _connected(self) -> frozenset[str]:
        """The remote bots connected to the arena now."""
        reply = self.stub.ListArenaBots(
            pb.ListArenaBotsRequest(), metadata=self._arena_md, timeout=CALL_SECONDS
        )
        self.expected = self.remote & {b.name for b in reply.bots}
        return self.expected

    def wait_health(self) -> None:
        """Wait until the service's health check says it serves again."""
        deadline = time.monotonic() + self.server.wait_seconds
        health = health_client(self._channel)
        while time.monotonic() < deadline:
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=2.0)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.2)
        raise ArenaUnavailable(
            f"the service at {self.server.address} did not come back in "
            f"{self.server.wait_seconds:g} s"
        )

    def _run(self, settings: Settings, matches: list[_Match]) -> None:
        """Create the matches not created yet, hand the remote seats of those not over to
        their bots, play the local seats, and watch every match to its end."""
        for m in matches:
            if not m.match_id:
                self._create(settings, m)
        left = [m for m in matches if m.end is None]
        here = self.remote if settings.time_control is None else self._connected()
        handed = [
            pb.ArenaSeat(
                match_id=m.match_id,
                token=m.tokens[s],
                bot=name,
                bot_seed=m.bot_seed(s),
            )
            for m in left
            for s, name in enumerate(m.seated)
            if name in here  # with a time control, a bot not here loses its time
        ]
        for start in range(0, len(handed), 256):
            self.stub.SeatArenaBots(
                pb.SeatArenaBotsRequest(seats=handed[start : start + 256]),
                metadata=self._arena_md,
                timeout=CALL_SECONDS,
            )
        local = [
            StreamSeat(
                m.match_id,
                m.tokens[s],
                m.bot(s),
                resume_move_count=m.seen.move_count if m.seen.next_sequence else None,
            )
            for m in left
            for s, name in enumerate(m.seated)
            if name not in self.remote
        ]
        if local:
            seen = {m.match_id: m.seen for m in left}
            play_stream(self.stub, local, seen=seen)
        for m in left:
            m.end = self._watch(m)

    def _create(self, settings: Settings, m: _Match) -> None:
        request = pb.CreateMatchRequest(
            seat_count=settings.seats,
            seed=m.seed,
            variant=f"VARIANT_{settings.variant.upper()}",
            players=list(m.seated),
            run_id=settings.id,
        )
        if settings.round_limit is not None:
            request.round_limit = settings.round_limit
        if settings.target is not None:
            request.target = settings.target
        if settings.time_control is not None:
            request.time_control.CopyFrom(time_control_pb(settings.time_control))
        created = self.stub.CreateMatch(request, metadata=self._house_md, timeout=CALL_SECONDS)
        m.match_id = created.match_id
        m.tokens = tuple(created.seat_tokens)
        m.observer = created.observer_token

    def _watch(self, m: _Match) -> MatchSeen:
        """The match from its creation to its end, as its observer sees it (the log's events)."""
        seen = {m.match_id: MatchSeen()}
        request = pb.WatchMatchRequest(match_id=m.match_id, token=m.observer)
        for response in self.stub.WatchMatch(request):
            note_event(seen, pb.PlayUpdate(match_id=m.match_id, event=response.event))
        return seen[m.match_id]

    @staticmethod
    def _played(m: _Match, seats: int) -> Played:
        end = m.end
        assert end is not None, "every match is watched to its end"
        assert end.end is not None, "a match watched to its end has one"
        return Played(
            m.deal,
            m.rotation,
            m.match_id,
            m.seated,
            tuple(team_of(s, seats) for s in range(seats)),
            tuple(end.end.scores),
            end.rounds,
            end.move_count,
        )


def _reason(exc: grpc.RpcError) -> str | None:
    """The ErrorInfo reason of a refused call, if it has one."""
    status = rpc_status.from_call(cast(grpc.Call, exc))  # a client's RpcError is its Call too
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return str(info.reason)
    return None

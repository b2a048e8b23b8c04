"""Play streams: seats of matches played over one bidirectional stream.

A unary bot pays three calls per action (GetState, ListLegalMoves,
ApplyMove). Here the server sends each seat its decision when it is due and
the seat answers it: one message each way (docs/service.md, "Play: one
stream for a bot"). Each stream is one `_Session` on the event loop:

- a *follower* per seat reads its match's durable events without a lock,
  as WatchMatch does (`Hub.events_from`, woken by `Hub.listen`), sends them
  filtered for that seat, then sends the seat's decision once (`Hub.pending`,
  read under the match's lock);
- the *reader* takes the client's answers and applies each in the hub's
  thread pool through the very calls ApplyMove and DealRound use, answers of
  different matches at once (so they share the log's group commit), those of
  one match in the order sent. The same call then reads the next decision
  of each seat of that match the stream plays, so the followers need no
  call of their own; `Hub.may_decide` spares them one for a seat that
  surely has nothing to decide;
- `_Session.run` is the only *writer*: it sends every update waiting, in
  order, as one message.

What waits for the client is bounded: at most `PLAY_QUEUE` updates. A
client that does not read makes gRPC's writes wait (HTTP/2 flow control),
the queue fills, and the stream is ended with RESOURCE_EXHAUSTED at once
(the waiting write is given up) instead of growing; its matches wait for
their seat's answer, which a new stream can give after resuming. At most
`MAX_ANSWERS_IN_FLIGHT` answers of a stream are under way; beyond, the
reader stops reading, which holds the client back by flow control too.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections import Counter, defaultdict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from service.arena import Arena, HandedSeat
from service.errors import BadArgument, Forbidden, LimitReached, ServiceStopping, StaleMoveCount
from service.hub import OBSERVER, Hub, LiveMatch, Pending
from service.rpc import bounds, convert
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.status import KNOWN_ERRORS, refusal
from sniff import MatchOver

Blocking = Callable[..., Awaitable[Any]]
"""Runs a hub call in the hub's thread pool (the servicer's `_blocking`)."""
Writer = Callable[[pb.PlayResponse], Awaitable[None]]
"""Sends one message on the stream (the call context's `write`)."""

PLAY_QUEUE: Final = 1024
"""Updates one Play stream may hold for a client that has not read them; beyond, it ends."""
MAX_ANSWERS: Final = 256
"""Answers one PlayRequest may carry (PlayAnswers)."""
MAX_ANSWERS_IN_FLIGHT: Final = 64
"""Answers of one stream under way at once; beyond, the stream reads no more until one ends."""
MAX_PLAY_STREAMS_PER_SEAT: Final = 4
"""Open Play streams holding one seat (a reconnect may overlap the stream it replaces)."""
MAX_PLAY_STREAMS: Final = 10_000
"""Open Play streams on the whole service."""
HANDED_OVER_KEPT: Final = 1024
"""Seats of finished matches an arena bot's stream remembers, to answer a late answer."""


SeatKey = tuple[str, int]
"""(match id, seat): how a stream multiplexes its seats."""


@dataclass(frozen=True, slots=True)
class _Seat:
    """One seat a stream plays: its match, its token, and the first event to send it."""

    live: LiveMatch
    seat: int
    token: str
    start: int
    index: int
    """The seat's position in PlayOpen.seats."""
    handed: bool = False
    """Handed by the arena: its opened update carries its token and bot seed."""
    bot_seed: int | None = None


class PlayStreams:
    """The open Play streams of one service, counted on the event loop (so without a lock)."""

    def __init__(
        self,
        hub: Hub,
        blocking: Blocking,
        queue_limit: int = PLAY_QUEUE,
        arena: Arena | None = None,
    ) -> None:
        self._hub = hub
        self.arena = arena or Arena(None)
        self._blocking = blocking
        self.queue_limit = queue_limit
        self.total = 0
        self.per_seat: Counter[tuple[str, int]] = Counter()
        self._sessions: set[_Session] = set()
        self._closing = False

    def close(self) -> None:
        """End every open Play stream with ServiceStopping (UNAVAILABLE), at shutdown."""
        self._closing = True
        for session in tuple(self._sessions):
            session.fail(_stopping())

    async def play(
        self,
        requests: AsyncIterator[pb.PlayRequest],
        write: Writer,
        arena_key: bytes | None = None,
    ) -> None:
        """One stream: its first message opens it (or registers a bot with the arena, which
        sent `arena_key`), then updates go out (`write`) and answers come in."""
        if self._closing:
            raise _stopping()
        first = await anext(requests, None)
        if first is not None and first.WhichOneof("kind") == "register":
            await self._registered(first.register, requests, write, arena_key)
            return
        if first is None or first.WhichOneof("kind") != "open":
            raise BadArgument("open", "open: the first message of a Play stream opens it")
        bounds.play_open(first.open)
        seats = [await self._blocking(self._take, i, s) for i, s in enumerate(first.open.seats)]
        named = Counter((s.live.match_id, s.seat) for s in seats)
        twice = [key for key, n in named.items() if n > 1]
        if twice:
            match_id, seat = twice[0]
            raise BadArgument("open.seats", f"open.seats: seat {seat} of {match_id} is named twice")
        with self._hold(seats):
            session = _Session(self._hub, self._blocking, seats, self.queue_limit)
            self._sessions.add(session)
            if self._closing:  # closed while the seats' tokens were checked
                session.fail(_stopping())
            try:
                await session.run(requests, write)
            finally:
                self._sessions.discard(session)

    async def _registered(
        self,
        register: pb.ArenaRegister,
        requests: AsyncIterator[pb.PlayRequest],
        write: Writer,
        arena_key: bytes | None,
    ) -> None:
        """A bot's stream: it plays the seats the arena hands it until it ends."""
        self.arena.check_key(arena_key)
        bounds.arena_register(register)
        secret = register.resume_secret if register.HasField("resume_secret") else None
        with self._hold([]):
            session = _Session(self._hub, self._blocking, [], self.queue_limit, open_ended=True)
            kept, held = self.arena.register(register.name, secret, session)
            try:
                registered = pb.ArenaRegistered(name=register.name, resume_secret=kept)
                session.put(pb.PlayUpdate(registered=registered))
                for s in held:
                    session.hand(s)
                self._sessions.add(session)
                if self._closing:
                    session.fail(_stopping())
                await session.run(requests, write)
            finally:
                self._sessions.discard(session)
                self.arena.release(register.name, session)

    def _take(self, index: int, s: pb.PlaySeat) -> _Seat:
        """Check one seat's token (in the hub's pool: a finished match may load from the log)."""
        live, role = self._hub.authorize(s.match_id, s.token)
        if role == OBSERVER:
            raise Forbidden("the observer token cannot play: open a Play stream with seat tokens")
        start = len(live.events)
        if s.HasField("resume_move_count"):
            start = _resume_index(live, s.resume_move_count, index)
        return _Seat(live, role, s.token, start, index)

    @contextlib.contextmanager
    def _hold(self, seats: list[_Seat]) -> Iterator[None]:
        keys = [(s.live.match_id, s.seat) for s in seats]
        for key in keys:
            if self.per_seat[key] >= MAX_PLAY_STREAMS_PER_SEAT:
                raise LimitReached(
                    "play_streams_per_seat",
                    f"seat {key[1]} of {key[0]} is already played by {MAX_PLAY_STREAMS_PER_SEAT} "
                    "open Play streams: close one first",
                )
        if self.total >= MAX_PLAY_STREAMS:
            raise LimitReached(
                "play_streams", f"the service already has {MAX_PLAY_STREAMS:,} open Play streams"
            )
        self.total += 1
        self.per_seat.update(keys)
        try:
            yield
        finally:
            self.total -= 1
            self.per_seat.subtract(keys)
            for key in keys:
                if self.per_seat[key] <= 0:
                    del self.per_seat[key]


def _resume_index(live: LiveMatch, move_count: int, index: int) -> int:
    """The first event after the action that brought the match to `move_count` (0: the first
    event); a count the match has not reached is refused."""
    if move_count == 0:
        return 0
    events = live.events
    for i, item in enumerate(events):
        if item.event.kind == "action" and item.move_count == move_count:
            return i + 1
    field = f"open.seats[{index}].resume_move_count"
    reached = events[-1].move_count if events else 0
    raise BadArgument(field, f"{field}: the match has applied {reached} actions, not {move_count}")


class _Session:
    """One Play stream: its followers, its reader, and the updates waiting for the writer."""

    def __init__(
        self,
        hub: Hub,
        blocking: Blocking,
        seats: list[_Seat],
        queue_limit: int,
        open_ended: bool = False,
    ) -> None:
        self._hub = hub
        self._open_ended = open_ended
        """An arena bot's stream: it goes on with no seat, until the client closes it."""
        self._done = False
        self._blocking = blocking
        self._seats = {(s.live.match_id, s.seat): s for s in seats}
        self._opened = seats
        """The seats `open` named: `run` starts their followers (`hand` starts its own)."""
        self._over: deque[SeatKey] = deque(maxlen=HANDED_OVER_KEPT)
        """Handed seats whose match is over and that the stream forgot: a late answer of one
        is told the match is over, as any stream's would be."""
        self._queue: deque[pb.PlayUpdate] = deque()
        self._queue_limit = queue_limit
        self._ready = asyncio.Event()
        self._writing: asyncio.Future[None] | None = None
        """The write under way, which `fail` cancels."""
        self._failure: BaseException | None = None
        self._followers = len(seats)
        self._reading = True
        self._answering = 0
        self._slots = asyncio.Semaphore(MAX_ANSWERS_IN_FLIGHT)
        self._match_locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._applying: Counter[str] = Counter()
        """Answers of each match being applied: its followers leave reading the decisions to
        the answer's own call to the hub."""
        self._prepared: dict[SeatKey, tuple[int, Pending | None]] = {}
        """Each seat's decision as an answer's call read it right after applying, with the
        number of durable events it was read at."""
        self._wakes: dict[SeatKey, asyncio.Event] = {}
        self._public: dict[str, tuple[int, pb.MatchEvent]] = {}
        """Per match, the last event converted that every seat sees alike (no hand, no drawn
        tile), so that the stream's other seats of that match reuse it."""
        self._tasks: set[asyncio.Task[None]] = set()

    # -- the writer ----------------------------------------------------------

    async def run(self, requests: AsyncIterator[pb.PlayRequest], write: Writer) -> None:
        """Write every update, batched as it waits, until the stream is done or fails.

        A write waits while the client does not read (flow control); a failure
        meanwhile (the queue full, the service stopping) cancels it, so the
        stream ends at once with its status instead of after the client reads.
        """
        for s in self._opened:
            self._spawn(functools.partial(self._follow, s))
        self._spawn(functools.partial(self._read, requests))
        try:
            while True:
                if self._failure is not None:
                    raise self._failure
                if self._queue:
                    await asyncio.sleep(0)  # updates made ready by the same wake-up join them
                    if self._failure is not None:
                        raise self._failure
                    updates = list(self._queue)
                    self._queue.clear()
                    await self._write(write, pb.PlayResponse(updates=updates))
                    continue
                idle = self._followers == 0 and not self._open_ended
                if self._answering == 0 and (idle or not self._reading):
                    return
                self._ready.clear()
                await self._ready.wait()
        finally:
            self._done = True
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _write(self, write: Writer, response: pb.PlayResponse) -> None:
        """One write, given up when the stream fails meanwhile (`fail` cancels it)."""
        writing = asyncio.ensure_future(write(response))
        self._writing = writing
        try:
            await writing
        except asyncio.CancelledError:
            if self._failure is not None and writing.cancelled():
                raise self._failure from None
            raise
        finally:
            self._writing = None

    def fail(self, exc: BaseException) -> None:
        """End the stream with `exc` (its status), also while a write waits for the client."""
        if self._failure is None:
            self._failure = exc
        if self._writing is not None:
            self._writing.cancel()
        self._ready.set()

    def hand(self, seat: HandedSeat) -> None:
        """Play a seat the arena hands this stream (an arena bot's), from its next event."""
        key = seat.key
        if self._done or key in self._seats:
            return
        live = seat.live
        s = _Seat(live, seat.seat, seat.token, len(live.events), 0, True, seat.bot_seed)
        self._seats[key] = s
        self._followers += 1
        self._spawn(functools.partial(self._follow, s))

    def replaced(self, exc: Exception) -> None:
        """The arena gave this stream's bot to a newer stream: end this one with `exc`."""
        self.fail(exc)

    def put(self, update: pb.PlayUpdate) -> None:
        """Queue an update for the client (the arena's `registered`)."""
        self._put(update)

    def _put(self, update: pb.PlayUpdate) -> None:
        if len(self._queue) >= self._queue_limit:
            raise LimitReached(
                "play_queue",
                f"{self._queue_limit:,} updates are waiting for this client to read them: "
                "the stream is ended; open a new one with resume_move_count",
            )
        self._queue.append(update)
        self._ready.set()

    def _spawn(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run `work()` as a task of this stream. The coroutine is made when the task starts,
        so a task cancelled before it ran (the stream ended) leaves none never awaited."""

        async def guarded() -> None:
            try:
                await work()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a refusal ends the stream with its status, a bug INTERNAL
                self.fail(exc)

        task = asyncio.create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- followers -------------------------------------------------------------

    async def _follow(self, s: _Seat) -> None:
        """Send the seat its match's events from `s.start` on and each decision once, until the
        match is over."""
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()

        live, match_id, key = s.live, s.live.match_id, (s.live.match_id, s.seat)
        applying = self._applying

        def notify() -> None:  # called by the thread that appended the events
            if applying[match_id]:
                return  # this stream's own answer: its call wakes the followers once done
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                loop.call_soon_threadsafe(wake.set)

        self._wakes[key] = wake
        self._hub.listen(live, notify)
        try:
            known = live.events
            opened = pb.PlayOpened(
                move_count=known[-1].move_count if known else 0, open_index=s.index
            )
            if s.handed:
                opened.token = s.token
                if s.bot_seed is not None:
                    opened.bot_seed = s.bot_seed
            self._put(pb.PlayUpdate(match_id=match_id, seat=s.seat, opened=opened))
            next_seq = s.start
            sent: tuple[int, int | None] | None = None
            while True:
                wake.clear()
                next_seq, over = self._send_events(s, next_seq, None)
                if over:
                    return
                if not self._applying[match_id]:  # else the answer's call reads it, then wakes
                    pending = await self._pending(s)
                    if pending is not None and (pending.move_count, pending.deal_round) != sent:
                        next_seq, _ = self._send_events(s, next_seq, pending.events)
                        sent = (pending.move_count, pending.deal_round)
                        self._put(_decision(match_id, s.seat, pending))
                await wake.wait()
        finally:
            self._hub.unlisten(live, notify)
            del self._wakes[key]
            self._followers -= 1
            if s.handed:  # an arena bot's stream plays on: forget the match
                self._seats.pop(key, None)
                self._over.append(key)
                self._prepared.pop(key, None)
                if not any(k[0] == match_id for k in self._seats):
                    self._public.pop(match_id, None)
                    lock = self._match_locks.get(match_id)
                    if lock is not None and not lock.locked():
                        del self._match_locks[match_id]
            self._ready.set()

    async def _pending(self, s: _Seat) -> Pending | None:
        """The seat's decision now: as an answer's call read it if nothing changed since, or
        as the hub last read it (`Hub.decided`), else none if the last event says so
        (`Hub.may_decide`), else read under the lock in the hub's pool."""
        prepared = self._prepared.pop((s.live.match_id, s.seat), None)
        if prepared is not None and prepared[0] == len(s.live.events):
            return prepared[1]
        known, decided = self._hub.decided(s.live, s.seat)
        if known:
            return decided
        if not self._hub.may_decide(s.live, s.seat):
            return None
        pending: Pending | None = await self._blocking(self._hub.pending, s.live, s.seat)
        return pending

    def _send_events(self, s: _Seat, next_seq: int, until: int | None) -> tuple[int, bool]:
        """Queue the seat's events from `next_seq` (up to `until`); the next one, and whether
        the match is over with them."""
        live = s.live
        batch, over = self._hub.events_from(live, next_seq)
        if until is not None:
            batch = batch[: max(0, until - next_seq)]
        keyed = live.secrets is not None
        for logged in batch:
            e = logged.event
            shared = self._public.get(live.match_id)
            if shared is not None and shared[0] == e.seq:
                event = shared[1]  # another seat of this stream was sent the very same event
            else:
                event = convert.event_pb(
                    live.match_id,
                    s.seat,
                    logged,
                    keyed=keyed,
                    ends_sum=self._hub.layout_sum(live, e.seq),
                )
                if e.kind != "round_dealt" and e.drawn is None:  # the same for every seat
                    self._public[live.match_id] = (e.seq, event)
            self._put(pb.PlayUpdate(match_id=live.match_id, seat=s.seat, event=event))
        return next_seq + len(batch), over and until is None

    # -- the reader --------------------------------------------------------------

    async def _read(self, requests: AsyncIterator[pb.PlayRequest]) -> None:
        try:
            async for request in requests:
                kind = request.WhichOneof("kind")
                if kind == "open":
                    raise BadArgument("open", "open: a Play stream is opened once, by its first")
                if kind == "answer":
                    answers = [request.answer]
                elif kind == "answers" and 1 <= len(request.answers.answers) <= MAX_ANSWERS:
                    answers = list(request.answers.answers)
                else:
                    raise BadArgument(
                        "answers", f"answers: a message carries 1 to {MAX_ANSWERS} answers"
                    )
                for answer in answers:
                    await self._slots.acquire()
                    self._answering += 1
                    self._spawn(functools.partial(self._answer, answer))
        finally:
            self._reading = False
            self._ready.set()

    async def _answer(self, answer: pb.PlayAnswer) -> None:
        """Apply one answer and queue its one reply: answered, or the refusal."""
        update = pb.PlayUpdate(match_id=answer.match_id, seat=answer.seat)
        try:
            try:
                duplicate = not await self._apply(answer)
                update.answered.CopyFrom(
                    pb.PlayAnswered(move_count=answer.move_count, duplicate=duplicate)
                )
            except KNOWN_ERRORS as exc:
                code, info, message = refusal(exc)
                update.error.CopyFrom(
                    pb.PlayError(
                        move_count=answer.move_count,
                        code=code.value[0],
                        reason=info.reason,
                        message=message,
                        attributes=dict(info.metadata),
                    )
                )
            self._put(update)
        finally:
            self._answering -= 1
            self._slots.release()
            self._ready.set()

    async def _apply(self, answer: pb.PlayAnswer) -> bool:
        """Apply through the hub's ApplyMove (or DealRound) path; True when applied now."""
        bounds.play_answer(answer)
        s = self._seats.get((answer.match_id, answer.seat))
        if s is None and (answer.match_id, answer.seat) in self._over:
            raise MatchOver("the match is over: it takes no more answers")
        if s is None:
            raise Forbidden(
                f"this stream does not play seat {answer.seat} of {answer.match_id}: "
                "open a stream with that seat's token"
            )
        match_id = answer.match_id
        async with self._match_locks[match_id]:  # one match's answers in their order
            self._applying[match_id] += 1
            try:
                keys = [key for key in self._seats if key[0] == match_id]  # read on the loop
                received = self._hub.now()  # a clocked seat's time stops here (service/clock.py)
                applied, reads = await self._blocking(
                    self._apply_then_read, answer, s, keys, received
                )
                self._prepared.update(reads)
                return bool(applied)
            finally:
                self._applying[match_id] -= 1
                for (held, _), wake in self._wakes.items():
                    if held == match_id:
                        wake.set()

    def _apply_then_read(
        self, answer: pb.PlayAnswer, s: _Seat, keys: list[SeatKey], received: float
    ) -> tuple[bool, list[tuple[SeatKey, tuple[int, Pending | None]]]]:
        """In the hub's pool: apply the answer (True when applied now), then read the decision
        of each seat of its match this stream plays, so no follower needs a call of its own."""
        hub, live = self._hub, s.live
        if answer.WhichOneof("action") == "deal":
            applied = hub.deal_round(live.match_id, s.token, answer.deal.round_index)
        else:
            move = convert.move_of_request(answer)
            try:
                applied = hub.apply_once(
                    live.match_id, s.token, s.seat, move, answer.move_count, received=received
                )[1]
            except StaleMoveCount:
                if hub.events_from(live, len(live.events))[1]:
                    raise MatchOver("the match is over: it takes no more answers") from None
                raise
        reads: list[tuple[SeatKey, tuple[int, Pending | None]]] = []
        for key in keys:  # read on the loop: the arena changes `_seats` meanwhile
            known = len(live.events)
            pending = hub.pending(live, key[1])
            reads.append((key, (known, None) if pending is None else (pending.events, pending)))
        return applied, reads


def _decision(match_id: str, seat: int, pending: Pending) -> pb.PlayUpdate:
    """The seat's decision as its update, built in place (a decision is the largest message a
    stream sends: copied into an update, it would cost a copy more)."""
    update = pb.PlayUpdate(match_id=match_id, seat=seat)
    msg = update.decision
    msg.SetInParent()
    msg.move_count = pending.move_count
    if pending.deal_round is not None:
        msg.deal.round_index = pending.deal_round
        return update
    assert pending.view is not None
    assert pending.proof is not None
    msg.move.state.CopyFrom(
        convert.state_pb(match_id, pending.view, pending.choice, pending.proof, pending.sides)
    )
    msg.move.moves.extend(convert.move_pb(m) for m in pending.moves)
    if pending.clock is not None:
        msg.clock.CopyFrom(convert.seat_clock_pb(pending.clock))
    return update


def _stopping() -> ServiceStopping:
    return ServiceStopping("the service is stopping: try again once it is back")

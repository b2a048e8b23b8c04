"""Bots that play through the service's Play stream: one message each way per decision.

`analysis/remote.py` plays with three unary calls per action (GetState,
ListLegalMoves, ApplyMove); here one Play stream carries every seat of
every match the client plays, and the bots answer the decisions the server
sends. Like remote.py, it uses only the public contract, so it is also the
model for a bot in another language.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from analysis.bot_matches import bot_players
from analysis.remote import PlayedMatch, RemoteView
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from sniff import Bot

SeatKey = tuple[str, int]
"""(match id, seat): how a Play stream multiplexes its seats."""


class PlayRefused(Exception):
    """The service refused an answer of a bot (a PlayError): a bot only answers its decisions,
    so this is a bug of the bot or of the service, never a normal outcome."""


@dataclass
class StreamSeat:
    """One seat a Play client plays: its token, its bot, and where to resume from."""

    match_id: str
    token: str
    bot: Bot
    resume_move_count: int | None = None
    last: pb.PlayAnswer | None = None
    """The seat's last answer: a decision sent again (after a resume, its answer lost with
    the old stream) gets this same answer, not a new draw of the bot's generator, so the
    match is the one the bot would have played without the drop."""


@dataclass
class MatchSeen:
    """What a client has seen of one match through any of its seats, over one or more
    streams: each event once (one sent again after a resume, or to a second seat, is not)."""

    seats: int = 0
    rounds: int = 0
    move_count: int = 0
    """The move count after the last action seen: what a new stream resumes from."""
    next_sequence: int = 0
    end: pb.MatchEnd | None = None
    events: list[pb.MatchEvent] = field(default_factory=list)


def _requests(outbox: queue.Queue[pb.PlayRequest | None]) -> Iterator[pb.PlayRequest]:
    """The stream's requests as the bots make them; None closes the client's side."""
    while True:
        request = outbox.get()
        if request is None:
            return
        yield request


def play_stream(
    stub: sniff_pb2_grpc.SniffServiceStub,
    seats: Sequence[StreamSeat],
    *,
    on_update: Callable[[pb.PlayUpdate], Any] | None = None,
    stop_after: int | None = None,
    timeout: float | None = None,
    seen: dict[str, MatchSeen] | None = None,
    register: pb.ArenaRegister | None = None,
    make_bot: Callable[[int | None], Bot] | None = None,
    metadata: Sequence[tuple[str, str]] | None = None,
    held: dict[SeatKey, StreamSeat] | None = None,
) -> dict[str, MatchSeen]:
    """Play `seats` over one Play stream until each of their matches is over (the server then
    ends the stream), or until `stop_after` answers were sent (the client then cancels it:
    a test's way to drop a stream mid-match). What was seen, by match id, added to `seen`
    when given (a stream that resumes an earlier one's matches).

    Each decision is answered by its seat's bot from the view the decision
    carries; a refused answer raises PlayRefused.

    With `register` (and no seats) the stream is an arena bot's: it plays the
    seats the arena hands it, each by a bot `make_bot(bot_seed)`, until the
    server ends it (`metadata` carries the arena key); a refused answer does not end it
    (a late one, say, when its seat ran out of time): `on_update` sees the error. `held`
    keeps the seats it was handed across its streams, so that a seat handed again after a
    drop is played on by the same bot, its random choices going on where they were.
    """
    outbox: queue.Queue[pb.PlayRequest | None] = queue.Queue()
    if register is not None:
        outbox.put(pb.PlayRequest(register=register))
    else:
        opened = pb.PlayOpen()
        for s in seats:
            entry = opened.seats.add(match_id=s.match_id, token=s.token)
            if s.resume_move_count is not None:
                entry.resume_move_count = s.resume_move_count
        outbox.put(pb.PlayRequest(open=opened))
    held = {} if held is None else held
    seen = {} if seen is None else seen
    answers = 0
    responses = stub.Play(_requests(outbox), timeout=timeout, metadata=metadata)
    try:
        for response in responses:
            batch: list[pb.PlayAnswer] = []  # the answers to this message's decisions: one reply
            for update in response.updates:
                if on_update is not None:
                    on_update(update)
                key = (update.match_id, update.seat)
                kind = update.WhichOneof("kind")
                if kind == "opened":  # which seat each token is
                    known = held.get(key)
                    if known is None or known.token != update.opened.token:
                        held[key] = _held(update, seats, make_bot)
                    seen.setdefault(update.match_id, MatchSeen())
                if kind == "event":
                    note_event(seen, update)
                    over = update.match_id in seen and seen[update.match_id].end is not None
                    if register is not None and over:
                        _forget(seen, held, update.match_id)  # an arena bot plays on and on
                elif kind == "decision":
                    batch.append(_answer(update, held[key], stub))
                    answers += 1
                    if stop_after is not None and answers >= stop_after:
                        _send(outbox, batch)
                        responses.cancel()
                        return seen
                elif kind == "error" and register is None:
                    raise PlayRefused(f"{update.match_id} seat {update.seat}: {update.error}")
            _send(outbox, batch)
    except grpc.RpcError as exc:
        if stop_after is None or exc.code() != grpc.StatusCode.CANCELLED:
            raise
    finally:
        outbox.put(None)
    return seen


def _held(
    update: pb.PlayUpdate,
    seats: Sequence[StreamSeat],
    make_bot: Callable[[int | None], Bot] | None,
) -> StreamSeat:
    """The seat an `opened` update names: one of `seats`, or one the arena handed (its token
    given), played by a new bot seeded as the arena says."""
    opened = update.opened
    if not opened.token:
        return seats[opened.open_index]
    if make_bot is None:
        raise PlayRefused(f"the arena handed seat {update.seat} of {update.match_id} to no bot")
    seed = opened.bot_seed if opened.HasField("bot_seed") else None
    return StreamSeat(update.match_id, opened.token, make_bot(seed))


def _forget(seen: dict[str, MatchSeen], held: dict[SeatKey, StreamSeat], match_id: str) -> None:
    del seen[match_id]
    for key in [k for k in held if k[0] == match_id]:
        del held[key]


def _send(outbox: queue.Queue[pb.PlayRequest | None], batch: list[pb.PlayAnswer]) -> None:
    """Send a message's answers as one request (`answers`), or one `answer` alone."""
    if len(batch) == 1:
        outbox.put(pb.PlayRequest(answer=batch[0]))
    elif batch:
        outbox.put(pb.PlayRequest(answers=pb.PlayAnswers(answers=batch)))


def note_event(seen: dict[str, MatchSeen], update: pb.PlayUpdate) -> None:
    """Keep what a match's events say, once each."""
    match = seen.get(update.match_id)
    event = update.event
    if match is None:
        return  # an arena bot's match, over and forgotten (its other seat's copy)
    if event.sequence < match.next_sequence:
        return  # sent again after a resume, or sent to another of the client's seats too
    match.next_sequence = event.sequence + 1
    match.events.append(event)
    which = event.WhichOneof("kind")
    if which == "match_created":
        match.seats = event.match_created.seat_count
    elif which == "round_dealt":
        match.rounds += 1
        match.seats = len(event.round_dealt.hand_sizes)
    elif which == "action_applied":
        match.move_count = event.action_applied.move_count
    elif which == "match_ended":
        match.end = event.match_ended.match_end


def _answer(
    update: pb.PlayUpdate, seat: StreamSeat, stub: sniff_pb2_grpc.SniffServiceStub
) -> pb.PlayAnswer:
    """The seat's bot's answer to one decision."""
    decision = update.decision
    if seat.last is not None and seat.last.move_count == decision.move_count:
        return seat.last
    answer = pb.PlayAnswer(
        match_id=update.match_id, seat=update.seat, move_count=decision.move_count
    )
    if decision.WhichOneof("kind") == "deal":
        answer.deal.round_index = decision.deal.round_index
        return answer
    match_id, token = update.match_id, seat.token

    def analyzer(budget: pb.AnalysisBudget, seed: int) -> Any:
        request = pb.AnalyzeRequest(match_id=match_id, token=token, budget=budget, seed=seed)
        return stub.Analyze(request)

    move = seat.bot.choose(RemoteView(decision.move.state, decision.move.moves, analyzer))
    answer.notation = move.text
    seat.last = answer
    return answer


def play_matches(
    stub: sniff_pb2_grpc.SniffServiceStub,
    seats: int,
    bots: Sequence[str],
    seeds: Sequence[int],
    *,
    variant: str = "american",
    round_limit: int | None = None,
) -> list[PlayedMatch]:
    """Create one match per seed and play them all over one Play stream, every seat a bot
    (seat i plays `bots[i % len(bots)]` seeded as in process: `bot_players`)."""
    created: list[tuple[pb.CreateMatchResponse, list[Bot]]] = []
    for seed in seeds:
        request = pb.CreateMatchRequest(
            seat_count=seats, seed=seed, variant=f"VARIANT_{variant.upper()}"
        )
        if round_limit is not None:
            request.round_limit = round_limit
        created.append((stub.CreateMatch(request), bot_players(seats, bots, seed)))
    stream_seats = [
        StreamSeat(c.match_id, token, players[i], resume_move_count=0)
        for c, players in created
        for i, token in enumerate(c.seat_tokens)
    ]
    seen = play_stream(stub, stream_seats)
    return [_played(c.match_id, seen[c.match_id]) for c, _ in created]


def _played(match_id: str, seen: MatchSeen) -> PlayedMatch:
    end = seen.end
    if end is None:
        raise PlayRefused(f"the stream ended before match {match_id} did")
    winner = end.winner if end.HasField("winner") else None
    return PlayedMatch(match_id, seen.seats, winner, list(end.scores), seen.rounds, seen.move_count)

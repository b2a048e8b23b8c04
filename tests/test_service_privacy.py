"""Private hands stay private: no response ever shows a seat a tile hidden from it.

Matches of 2, 3 and 4 seats are played to the end through the real server.
At every step, every seat token asks for everything it may ask for (GetState,
ListLegalMoves, GetScores) and watches the match (from sequence 0 from the
start, and from 0 and from the current sequence in mid-match); every Tile
message anywhere in every response must be one the seat may know at that
moment: its own hand, the layout, the tiles it drew itself, and, after a
round has ended, the hands revealed in RoundEnded. The boneyard stays hidden
from seats even then. The observer token sees every hand and the boneyard.
The same holds for every update of a Play stream, each seat on its own.
"""

from __future__ import annotations

import random
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pyarrow as pa
import pytest

from analysis.bot_matches import bot_players
from analysis.logquery import table_from_stream
from analysis.remote_play import StreamSeat, play_stream
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from tests.service_helpers import (
    MAX_ACTIONS,
    RPC_TIMEOUT,
    Service,
    Stub,
    TileKey,
    assert_refused,
    create,
    error_info,
    event_count,
    keys,
    play_step,
    query,
    rpc_error,
    state,
    tile_key,
    tiles_in,
)

ALL_TILES = {(a, b) for b in range(7) for a in range(b + 1)}
WATCH_TIMEOUT = 60.0


@dataclass
class Watcher:
    """A WatchMatch stream consumed in its own thread until the server ends it."""

    stub: Stub
    match_id: str
    token: str
    from_sequence: int
    events: list[pb.MatchEvent] = field(default_factory=list)
    error: grpc.RpcError | None = None
    thread: threading.Thread | None = None

    def start(self) -> Watcher:
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self) -> None:
        request = pb.WatchMatchRequest(
            match_id=self.match_id, token=self.token, from_sequence=self.from_sequence
        )
        try:
            for reply in self.stub.WatchMatch(request, timeout=WATCH_TIMEOUT):
                self.events.append(reply.event)
        except grpc.RpcError as exc:
            self.error = exc

    def join(self) -> list[pb.MatchEvent]:
        assert self.thread is not None
        self.thread.join(WATCH_TIMEOUT + 5)
        assert not self.thread.is_alive(), "the watch stream did not end after MatchEnded"
        assert self.error is None, self.error
        return self.events


def _check_seat_at_rest(
    stub: Stub,
    created: pb.CreateMatchResponse,
    seat: int,
    allowed: set[TileKey],
    truth: pb.MatchState,
    observer_moves: list[list[str]],
) -> None:
    """Everything a seat token may ask, between two actions, shows only `allowed` tiles."""
    match_id, token = created.match_id, created.seat_tokens[seat]
    own = keys(truth.hands[seat].tiles)

    st = state(stub, match_id, token)
    assert set(tiles_in(st)) <= allowed, (seat, set(tiles_in(st)) - allowed)
    assert keys(st.viewer_tiles) == own
    assert len(st.viewer_tiles) == len(own)
    assert not st.hands
    assert not st.boneyard_tiles
    assert st.HasField("viewer_seat")
    assert st.viewer_seat == seat
    assert st.move_count == truth.move_count
    assert list(st.hand_sizes) == [len(h.tiles) for h in truth.hands]
    assert st.boneyard_size == len(truth.boneyard_tiles)
    if st.HasField("pending_drawn_tile"):
        assert truth.turn == seat
        assert st.pending_drawn_tile == truth.pending_drawn_tile

    for other in range(truth.seat_count):
        request = pb.ListLegalMovesRequest(match_id=match_id, token=token, seat=other)
        if other == seat:
            reply = stub.ListLegalMoves(request, timeout=RPC_TIMEOUT)
            assert set(tiles_in(reply)) <= allowed
            assert [m.notation for m in reply.moves] == observer_moves[seat]
        else:
            exc = rpc_error(stub.ListLegalMoves, request)
            assert_refused(exc, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_BAD_TOKEN")

    scores = stub.GetScores(
        pb.GetScoresRequest(match_id=match_id, token=token), timeout=RPC_TIMEOUT
    )
    assert set(tiles_in(scores)) <= allowed
    assert list(scores.scores) == list(truth.scores)

    # An analysis answers the seat to play only, and with nothing it may not see.
    analyze = pb.AnalyzeRequest(
        match_id=match_id, token=token, budget=pb.AnalysisBudget(rollouts=2)
    )
    if truth.phase == pb.MATCH_PHASE_PLAYING and truth.turn == seat:
        analysis = stub.Analyze(analyze, timeout=RPC_TIMEOUT)
        assert set(tiles_in(analysis)) <= allowed
        assert sorted(m.move.notation for m in analysis.moves) == sorted(observer_moves[seat])
    else:
        exc = rpc_error(stub.Analyze, analyze)
        assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION


def _check_observer(
    stub: Stub, created: pb.CreateMatchResponse, truth: pb.MatchState
) -> list[list[str]]:
    """The observer sees every hand and the boneyard; returns each seat's legal moves."""
    assert len(truth.hands) == truth.seat_count
    assert not truth.HasField("viewer_seat")
    assert not truth.viewer_tiles
    assert len(truth.boneyard_tiles) == truth.boneyard_size
    layout = keys(p.tile for p in truth.layout_tiles)
    parts = [*(keys(h.tiles) for h in truth.hands), keys(truth.boneyard_tiles), layout]
    assert sum(len(p) for p in parts) == 28
    assert set().union(*parts) == ALL_TILES
    moves = []
    for seat in range(truth.seat_count):
        request = pb.ListLegalMovesRequest(
            match_id=created.match_id, token=created.observer_token, seat=seat
        )
        reply = stub.ListLegalMoves(request, timeout=RPC_TIMEOUT)
        if truth.phase != pb.MATCH_PHASE_PLAYING or truth.turn != seat:
            assert not reply.moves
        moves.append([m.notation for m in reply.moves])
    scores_request = pb.GetScoresRequest(match_id=created.match_id, token=created.observer_token)
    scores = stub.GetScores(scores_request, timeout=RPC_TIMEOUT)
    assert list(scores.scores) == list(truth.scores)
    assert scores.over == (truth.phase == pb.MATCH_PHASE_OVER)
    return moves


def _allowed_per_event(events: list[pb.MatchEvent], seats: int) -> list[list[set[TileKey]]]:
    """From the observer's full stream: what each seat may know right after each event."""
    known: list[set[TileKey]] = [set() for _ in range(seats)]
    public: set[TileKey] = set()
    out = []
    for event in events:
        kind = event.WhichOneof("kind")
        if kind == "round_dealt":
            known = [keys(h.tiles) for h in event.round_dealt.hands]
            public = set()
        elif kind == "action_applied":
            applied = event.action_applied
            move = applied.move
            which = move.WhichOneof("kind")
            if which == "lead":
                public.add((move.lead.tile.low, move.lead.tile.high))
            elif which == "place":
                public.add((move.place.tile.low, move.place.tile.high))
            elif which == "draw":
                assert applied.HasField("drawn_tile")
                known[applied.seat].add((applied.drawn_tile.low, applied.drawn_tile.high))
        elif kind == "round_ended":
            for hand in event.round_ended.round_end.remaining_hands:
                public |= keys(hand.tiles)
        out.append([known[s] | public for s in range(seats)])
    return out


def _check_seat_stream(
    events: list[pb.MatchEvent],
    observer: list[pb.MatchEvent],
    allowed: list[list[set[TileKey]]],
    seat: int,
) -> None:
    for event in events:
        seq = event.sequence
        full = observer[seq]
        assert full.WhichOneof("kind") == event.WhichOneof("kind")
        seen = set(tiles_in(event))
        assert seen <= allowed[seq][seat], (seat, seq, seen - allowed[seq][seat], event)
        kind = event.WhichOneof("kind")
        if kind == "round_dealt":
            for s, hand in enumerate(event.round_dealt.hands):
                if s == seat:
                    assert hand == full.round_dealt.hands[s]
                else:
                    assert not hand.tiles
            assert not event.round_dealt.boneyard_tiles
            assert event.round_dealt.boneyard_size == full.round_dealt.boneyard_size
        elif kind == "action_applied":
            mine = event.action_applied.seat == seat
            assert event.action_applied.HasField("drawn_tile") == (
                mine and full.action_applied.HasField("drawn_tile")
            )
            assert event.action_applied.move == full.action_applied.move
        else:
            assert event == full


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seats", "seed", "target"),
    [(2, 21, 150), (3, 32, 110), (4, 43, 110)],
    ids=["2-seats", "3-seats", "4-seats"],
)
def test_no_response_shows_a_seat_a_tile_hidden_from_it(
    svc: Service, seats: int, seed: int, target: int
) -> None:
    stub = svc.stub
    rng = random.Random(seed)
    created = create(stub, seats, seed, target)
    match_id, observer_token = created.match_id, created.observer_token
    tokens = [*created.seat_tokens, observer_token]
    assert len(set(tokens)) == seats + 1

    live = [Watcher(stub, match_id, t, 0).start() for t in tokens]
    later: list[tuple[Watcher, Watcher]] = []
    dealt: dict[int, pb.MatchState] = {}
    replies: list[pb.ApplyMoveResponse] = []
    rounds_ended = draws = 0
    for step in range(MAX_ACTIONS):  # bounded by count, each call by its deadline
        truth = state(stub, match_id, observer_token)
        observer_moves = _check_observer(stub, created, truth)
        layout = keys(p.tile for p in truth.layout_tiles)
        hands = [keys(h.tiles) for h in truth.hands]
        boneyard = keys(truth.boneyard_tiles)
        revealed = set().union(*hands) if truth.phase == pb.MATCH_PHASE_AWAITING_DEAL else set()
        for seat in range(seats):
            allowed = hands[seat] | layout | revealed
            assert boneyard.isdisjoint(allowed)
            _check_seat_at_rest(stub, created, seat, allowed, truth, observer_moves)
        if truth.phase == pb.MATCH_PHASE_OVER:
            break
        if truth.phase == pb.MATCH_PHASE_AWAITING_DEAL:
            stub.DealRound(
                pb.DealRoundRequest(match_id=match_id, token=observer_token), timeout=RPC_TIMEOUT
            )
            continue
        if truth.round_index not in dealt:
            dealt[truth.round_index] = truth
        if not later and step >= 25:  # mid-match: one watcher replays from 0, one starts from now
            now = event_count(stub, match_id)
            later = [
                (
                    Watcher(stub, match_id, t, 0).start(),
                    Watcher(stub, match_id, t, now).start(),
                )
                for t in tokens
            ]
        reply = play_step(stub, created, rng)
        assert reply is not None
        assert reply.move_count == truth.move_count + 1
        replies.append(reply)
        seat = reply.seat
        allowed = hands[seat] | layout
        if reply.move.WhichOneof("kind") == "draw":
            draws += 1
            assert reply.HasField("drawn_tile")
            assert reply.drawn_tile == truth.boneyard_tiles[0]
            allowed.add((reply.drawn_tile.low, reply.drawn_tile.high))
        else:
            assert not reply.HasField("drawn_tile")
        if reply.HasField("round_end"):
            rounds_ended += 1
            allowed |= set().union(*hands)
            after = state(stub, match_id, observer_token)
            assert [keys(h.tiles) for h in reply.round_end.remaining_hands] == [
                keys(h.tiles) for h in after.hands
            ]
        assert set(tiles_in(reply)) <= allowed, (set(tiles_in(reply)) - allowed, reply)
    else:
        raise AssertionError("the match did not end")

    assert rounds_ended >= 1, "pick a seed whose match ends at least one round"
    assert draws >= 1, "pick a seed whose match has draws"
    assert later, "the match ended before mid-match watchers started"

    observer_events = live[-1].join()
    assert [e.sequence for e in observer_events] == list(range(len(observer_events)))
    assert observer_events[0].WhichOneof("kind") == "match_created"
    assert observer_events[-1].WhichOneof("kind") == "match_ended"
    assert len(observer_events) == event_count(stub, match_id)
    # The observer's stream is the truth the test saw: deals and actions.
    actions = [e.action_applied for e in observer_events if e.HasField("action_applied")]
    deals = [e.round_dealt for e in observer_events if e.HasField("round_dealt")]
    assert len(actions) >= len(replies)
    by_count = {a.move_count: a for a in actions}
    for reply in replies:
        applied = by_count[reply.move_count]
        assert applied.move == reply.move
        assert applied.seat == reply.seat
        assert applied.HasField("drawn_tile") == reply.HasField("drawn_tile")
        if reply.HasField("drawn_tile"):
            assert applied.drawn_tile == reply.drawn_tile
    for round_index, truth in dealt.items():
        # As sets: the deal event keeps the dealt order, GetState lists a hand sorted.
        assert [keys(h.tiles) for h in deals[round_index].hands] == [
            keys(h.tiles) for h in truth.hands
        ]
        assert list(deals[round_index].boneyard_tiles) == list(truth.boneyard_tiles)

    allowed_at = _allowed_per_event(observer_events, seats)
    for seat in range(seats):
        _check_seat_stream(live[seat].join(), observer_events, allowed_at, seat)
    for i, (from_zero, from_now) in enumerate(later):
        whole = live[i].join()
        assert from_zero.join() == whole
        now_events = from_now.join()
        assert now_events == whole[from_now.from_sequence :]
        assert now_events, "the mid-match watcher saw the rest of the match"
    # A replay of the finished match is the same stream, and ends by itself.
    for i, token in enumerate(tokens):
        request = pb.WatchMatchRequest(match_id=match_id, token=token)
        replay = [r.event for r in stub.WatchMatch(request, timeout=RPC_TIMEOUT)]
        assert replay == live[i].join()


@pytest.mark.slow
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_no_play_update_shows_a_seat_a_tile_hidden_from_it(svc: Service, seats: int) -> None:
    """Each seat plays on its own Play stream (random bots, so draws abound); every tile in
    every update a seat received, in the order received, must be one it may know then: its
    own dealt hand and draws, the tiles placed, and the hands revealed at a round's end."""
    created = create(svc.stub, seats, seed=60 + seats, target=110)
    match_id = created.match_id
    received: list[list[pb.PlayUpdate]] = [[] for _ in range(seats)]
    bots = bot_players(seats, ["random"], 60 + seats)
    errors: list[BaseException] = []

    def play(seat: int) -> None:
        try:
            one = [StreamSeat(match_id, created.seat_tokens[seat], bots[seat], 0)]
            play_stream(svc.stub, one, on_update=received[seat].append, timeout=WATCH_TIMEOUT)
        except BaseException as exc:  # reported by the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=play, args=(s,), daemon=True) for s in range(seats)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WATCH_TIMEOUT + 5)
        assert not thread.is_alive(), "a Play stream did not end with its match"
    assert errors == []
    truth = {
        e.sequence: e for e in Watcher(svc.stub, match_id, created.observer_token, 0).start().join()
    }
    for seat in range(seats):
        allowed: set[TileKey] = set()
        decisions = 0
        for update in received[seat]:
            assert update.seat == seat
            if update.HasField("event"):
                known = truth[update.event.sequence]
                which = known.WhichOneof("kind")
                if which == "round_dealt":
                    allowed = keys(known.round_dealt.hands[seat].tiles)
                elif which == "action_applied":
                    applied = known.action_applied
                    allowed |= set(tiles_in(applied.move))
                    if applied.seat == seat and applied.HasField("drawn_tile"):
                        allowed.add(tile_key(applied.drawn_tile))
                elif which == "round_ended":
                    allowed |= set(tiles_in(known.round_ended))
            decisions += update.HasField("decision")
            shown = set(tiles_in(update))
            assert shown <= allowed, (seat, update.WhichOneof("kind"), shown - allowed)
        assert decisions > 10


def test_a_refusal_does_not_tell_a_seat_where_a_hidden_tile_is(svc: Service) -> None:
    """Trying to play a tile one does not hold gets the same answer wherever the tile is."""
    stub = svc.stub
    tiles = sorted(ALL_TILES)
    rng = random.Random(5)
    rng.shuffle(tiles)
    hands = [tiles[0:7], tiles[7:14]]
    boneyard = tiles[14:]
    deal = pb.Deal(
        hands=[pb.Hand(tiles=[pb.Tile(low=a, high=b) for a, b in h]) for h in hands],
        boneyard_tiles=[pb.Tile(low=a, high=b) for a, b in boneyard],
        leader=0,
    )
    created = stub.CreateMatch(
        pb.CreateMatchRequest(seat_count=2, seed=1, first_deal=deal), timeout=RPC_TIMEOUT
    )
    answers = []
    for a, b in (hands[1][0], boneyard[0]):
        request = pb.ApplyMoveRequest(
            match_id=created.match_id,
            token=created.seat_tokens[0],
            seat=0,
            notation=f"{a}-{b}",
            expected_move_count=0,
        )
        exc = rpc_error(stub.ApplyMove, request)
        assert_refused(exc, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_ILLEGAL_MOVE")
        message = re.sub(rf"\b{a}-{b}\b", "TILE", exc.details() or "")
        answers.append((message, error_info(exc).SerializeToString(deterministic=True)))
    assert answers[0] == answers[1], answers


def _twin_deals(seed: int) -> tuple[pb.Deal, pb.Deal]:
    """Two deals that differ only in one tile of seat 1's hand swapped with the boneyard's
    last tile: seat 0 cannot tell them apart until that tile shows."""
    tiles = sorted(ALL_TILES)
    random.Random(seed).shuffle(tiles)
    hands, boneyard = [tiles[0:7], tiles[7:14]], tiles[14:]
    other = [hands[0], [*hands[1][:-1], boneyard[-1]]]
    other_bone = [*boneyard[:-1], hands[1][-1]]

    def deal(hs: list[list[TileKey]], bone: list[TileKey]) -> pb.Deal:
        return pb.Deal(
            hands=[pb.Hand(tiles=[pb.Tile(low=a, high=b) for a, b in h]) for h in hs],
            boneyard_tiles=[pb.Tile(low=a, high=b) for a, b in bone],
            leader=0,
        )

    return deal(hands, boneyard), deal(other, other_bone)


@pytest.mark.slow
def test_analyze_answers_the_same_whatever_the_tiles_the_seat_cannot_see(svc: Service) -> None:
    """Two matches identical from seat 0's view but not in its opponent's hand and the
    boneyard: Analyze gives seat 0 the very same answer for the same seed."""
    stub = svc.stub
    compared = 0
    for seed in range(20):
        one_deal, two_deal = _twin_deals(seed)
        matches = [
            stub.CreateMatch(
                pb.CreateMatchRequest(seat_count=2, seed=1, first_deal=d), timeout=RPC_TIMEOUT
            )
            for d in (one_deal, two_deal)
        ]
        rng = random.Random(seed)
        for moves_made in range(60):
            views = [state(stub, m.match_id, m.seat_tokens[0]) for m in matches]
            if views[0].phase != pb.MATCH_PHASE_PLAYING or views[1].phase != pb.MATCH_PHASE_PLAYING:
                break
            for v in views:
                # What differs between any two matches: their names and their proofs (the
                # seed's commitment and the chain's head, made from different secrets).
                for name in ("name", "match_id", "seed_commitment", "chain_head"):
                    v.ClearField(name)
            if views[0] != views[1]:
                break  # the hidden difference came out
            seat = views[0].turn
            legal = [
                [
                    mv.notation
                    for mv in stub.ListLegalMoves(
                        pb.ListLegalMovesRequest(
                            match_id=m.match_id, token=m.seat_tokens[seat], seat=seat
                        ),
                        timeout=RPC_TIMEOUT,
                    ).moves
                ]
                for m in matches
            ]
            if seat == 0 and len(legal[0]) > 1:
                replies = [
                    stub.Analyze(
                        pb.AnalyzeRequest(
                            match_id=m.match_id,
                            token=m.seat_tokens[0],
                            budget=pb.AnalysisBudget(rollouts=40),
                            seed=seed,
                        ),
                        timeout=RPC_TIMEOUT,
                    )
                    for m in matches
                ]
                assert replies[0] == replies[1]
                compared += 1
            move = legal[0][rng.randrange(len(legal[0]))]
            if move not in legal[1]:
                break
            for m in matches:
                stub.ApplyMove(
                    pb.ApplyMoveRequest(
                        match_id=m.match_id,
                        token=m.seat_tokens[seat],
                        seat=seat,
                        notation=move,
                        expected_move_count=moves_made,
                    ),
                    timeout=RPC_TIMEOUT,
                )
        if compared >= 4:
            return
    raise AssertionError(f"only {compared} analyses compared")


# -- the Query RPC: no token, the whole log by design -----------------------------------------


@pytest.mark.slow
def test_query_streams_a_decodable_arrow_ipc_result(svc: Service) -> None:
    stub = svc.stub
    created = create(stub, 2, seed=3)
    rng = random.Random(3)
    for _ in range(6):
        assert play_step(stub, created, rng) is not None
    table = query(
        stub,
        "SELECT kind, count(*) AS n FROM events WHERE match_id = ? GROUP BY kind ORDER BY kind",
        created.match_id,
    )
    assert table.column_names == ["kind", "n"]
    assert dict(zip(*(c.to_pylist() for c in table.columns), strict=True)) == {
        "action": 6,
        "match_created": 1,
        "round_dealt": 1,
    }
    # A result larger than one chunk arrives in several, each of whole IPC messages.
    sql = "SELECT range AS i, repeat('x', 200) AS s FROM range(30000)"
    chunks = list(stub.Query(pb.QueryRequest(sql=sql, token=stub.query_token), timeout=RPC_TIMEOUT))
    assert len(chunks) > 1
    assert pa.ipc.open_stream(chunks[0].arrow_ipc).schema.names == ["i", "s"]
    big = table_from_stream(chunks)
    assert big.num_rows == 30000
    assert big.column("i").to_pylist() == list(range(30000))
    # Parameters are bound, never pasted: a quote in a value is just a character.
    odd = query(stub, "SELECT ? AS s, ? + 1 AS n", "it's; DROP TABLE events", 41)
    assert odd.to_pylist() == [{"s": "it's; DROP TABLE events", "n": 42}]


def test_query_with_no_rows_still_carries_the_schema(svc: Service) -> None:
    table = query(
        svc.stub, "SELECT match_id, seq, kind FROM events WHERE match_id = ?", "no-such-match"
    )
    assert table.num_rows == 0
    assert table.column_names == ["match_id", "seq", "kind"]
    assert table.schema.field("seq").type == pa.int32()


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM events",
        "INSERT INTO events (match_id, seq, kind) VALUES ('x', 0, 'match_created')",
        "UPDATE events SET points = 99",
        "DROP TABLE events",
        "CREATE TABLE sneaky (i INTEGER)",
        "SELECT 1; DELETE FROM events",
        "COPY events TO 'out.csv'",
        "ATTACH 'other.duckdb' AS other",
        "SELEC nonsense",
    ],
)
def test_query_refuses_writes_and_bad_sql(svc: Service, sql: str) -> None:
    stub = svc.stub
    created = create(stub, 2, seed=4)
    before = event_count(stub, created.match_id)
    exc = rpc_error(stub.Query, pb.QueryRequest(sql=sql, token=stub.query_token))
    assert_refused(exc, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_BAD_QUERY")
    assert event_count(stub, created.match_id) == before == 2
    names = query(stub, "SELECT table_name FROM information_schema.tables").column("table_name")
    assert "sneaky" not in names.to_pylist()


@pytest.mark.slow
def test_the_log_reveals_hidden_tiles_so_query_needs_the_service_query_token(
    svc: Service,
) -> None:
    """The log holds live hands and boneyards: no seat or observer token opens it."""
    stub = svc.stub
    created = create(stub, 2, seed=8)
    sql = "SELECT detail FROM events WHERE kind = 'round_dealt'"
    missing = rpc_error(stub.Query, pb.QueryRequest(sql=sql))
    assert_refused(missing, grpc.StatusCode.UNAUTHENTICATED, "ERROR_REASON_BAD_TOKEN")
    for token in (*created.seat_tokens, created.observer_token, "forged"):
        wrong = rpc_error(stub.Query, pb.QueryRequest(sql=sql, token=token))
        assert_refused(wrong, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_BAD_TOKEN")
    owner_file = Path(f"{svc.db_path}.owner.json")
    assert owner_file.stat().st_mode & 0o777 == 0o600  # readable by the log's owner only
    assert query(stub, sql).num_rows == 1

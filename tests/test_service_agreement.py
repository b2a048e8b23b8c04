"""WatchMatch, ApplyMove, GetState and the replay of the log tell one story of every action.

A real server plays whole matches of every variant with 2, 3 and 4 seats
(random legal actions, seeded). For each action the test keeps what the
mover read (ApplyMove), what the observer read right after (GetState), what
the observer's WatchMatch stream said, and what the replay of the logged
match shows (`analysis.replay`, what `sniff replay` prints); then it compares
them on every field they share: draws and passes included, whose ends sum
the log keeps as null but every reader must give as the layout's.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from analysis.replay.model import Step
from analysis.replay.source import load_replay
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from sniff import VARIANTS
from tests.service_helpers import MAX_ACTIONS, RPC_TIMEOUT, Service, parse_tile, serving, state

TARGET = 100
"""Low enough for whole matches in seconds, high enough for several rounds each."""
ROUND_LIMIT = 5
"""Random play may lose points round after round: the limit ends every match."""
HAND_SIZE = {2: 7, 3: 6, 4: 5}
VARIANT_PB = {name: f"VARIANT_{name.upper()}" for name in VARIANTS}

Mark = tuple[str, str, int]


@dataclass
class Action:
    """One action as each reader saw it."""

    applied: pb.ApplyMoveResponse
    after: pb.MatchState
    watched: pb.ActionApplied | None = None
    round_ended: pb.RoundEnd | None = None
    match_ended: pb.MatchEnd | None = None


@dataclass
class Match:
    created: pb.CreateMatchResponse
    actions: list[Action] = field(default_factory=list)


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with serving(tmp_path_factory.mktemp("agreement") / "events.duckdb", sync=False) as service:
        yield service


def tile_text(t: pb.Tile) -> str:
    return f"{t.low}-{t.high}"


def side_text(side: int) -> str:
    return pb.Side.Name(side).removeprefix("SIDE_").lower()


def marks(items: Any) -> list[Mark]:
    return [(tile_text(m.tile), side_text(m.side), m.value) for m in items]


def step_marks(items: Any) -> list[Mark]:
    return [(m.tile, m.side, m.value) for m in items]


def sixes_deal(seats: int, rng: random.Random) -> pb.Deal:
    """A first deal that makes seat 1 draw the whole boneyard and pass: seat 0 leads 6-6
    and holds the sixes, seat 1 and the boneyard hold none (seat 2 takes any left over)."""
    size = HAND_SIZE[seats]
    sixes = ["6-6"] + [f"{i}-6" for i in range(6)]
    others = [f"{a}-{b}" for a in range(6) for b in range(a, 6)]
    rng.shuffle(others)
    hands = [sixes[:size]]
    rest = sixes[size:]
    for seat in range(1, seats):
        take = rest if seat == 2 else []
        hands.append(take + [others.pop() for _ in range(size - len(take))])
    assert not rest or seats > 2
    return pb.Deal(
        hands=[pb.Hand(tiles=[parse_tile(t) for t in h]) for h in hands],
        boneyard_tiles=[parse_tile(t) for t in others],
        leader=0,
    )


def play(svc: Service, variant: str, seats: int, seed: int) -> Match:
    """A whole match of random legal actions, with the state right after each action.

    The first round is `sixes_deal`'s, led by 6-6, so that every match has
    draws and passes; later rounds are dealt from the seed."""
    stub = svc.stub
    rng = random.Random(seed)
    created = stub.CreateMatch(
        pb.CreateMatchRequest(
            seat_count=seats,
            seed=seed,
            target=TARGET,
            variant=VARIANT_PB[variant],
            round_limit=ROUND_LIMIT,
            first_deal=sixes_deal(seats, rng),
        ),
        timeout=RPC_TIMEOUT,
    )
    match = Match(created)
    match_id, observer = created.match_id, created.observer_token
    st = state(stub, match_id, observer)
    for _ in range(MAX_ACTIONS):
        if st.phase == pb.MATCH_PHASE_OVER:
            return match
        if st.phase == pb.MATCH_PHASE_AWAITING_DEAL:
            stub.DealRound(
                pb.DealRoundRequest(match_id=match_id, token=observer), timeout=RPC_TIMEOUT
            )
            st = state(stub, match_id, observer)
            continue
        seat, token = st.turn, created.seat_tokens[st.turn]
        moves = stub.ListLegalMoves(
            pb.ListLegalMovesRequest(match_id=match_id, token=token, seat=seat),
            timeout=RPC_TIMEOUT,
        ).moves
        applied = stub.ApplyMove(
            pb.ApplyMoveRequest(
                match_id=match_id,
                token=token,
                seat=seat,
                move=lead_6_6(moves) if not match.actions else rng.choice(list(moves)),
                expected_move_count=st.move_count,
            ),
            timeout=RPC_TIMEOUT,
        )
        st = state(stub, match_id, observer)
        match.actions.append(Action(applied, st))
    raise AssertionError(f"the match did not end within {MAX_ACTIONS} actions")


def lead_6_6(moves: Iterable[pb.Move]) -> pb.Move:
    """The lead of 6-6 (in a variant where the leader chooses, either way it may lie)."""
    return next(m for m in moves if m.notation.split("/")[0] == "6-6")


def watch(svc: Service, match: Match) -> None:
    """Fill each action's WatchMatch view (the observer's stream, from the start)."""
    request = pb.WatchMatchRequest(
        match_id=match.created.match_id, token=match.created.observer_token
    )
    actions = iter(match.actions)
    current: Action | None = None
    for reply in svc.stub.WatchMatch(request, timeout=RPC_TIMEOUT):
        event = reply.event
        kind = event.WhichOneof("kind")
        if kind == "action_applied":
            current = next(actions)
            current.watched = event.action_applied
        elif kind == "round_ended":
            assert current is not None
            current.round_ended = event.round_ended.round_end
        elif kind == "match_ended":
            assert current is not None
            current.match_ended = event.match_ended.match_end
    assert next(actions, None) is None, "the stream ended before the match's last action"


def agree(action: Action, step: Step) -> None:
    """Every field the four readers share, for one action."""
    applied, after, watched = action.applied, action.after, action.watched
    assert watched is not None
    where = f"action {step.n} ({step.move})"
    # Who did what.
    assert applied.seat == watched.seat == step.seat, where
    assert applied.move == watched.move, where
    assert applied.move.notation == step.move, where
    assert (step.round, step.action) == (watched.round_index, watched.action_index), where
    assert applied.move_count == watched.move_count == after.move_count, where
    # What it scored and left on the layout.
    assert applied.points == watched.points == (step.points or 0), where
    assert applied.ends_sum == watched.ends_sum == after.ends_sum == step.ends_sum, where
    assert marks(applied.counted_ends) == marks(after.counted_ends), where
    assert marks(after.counted_ends) == step_marks(step.counted_ends), where
    assert marks(after.open_sides) == step_marks(step.open_sides), where
    assert [tile_text(p.tile) for p in after.layout_tiles] == [
        str(p.tile) for p in step.placements
    ], where
    # The tile drawn (the mover and the observer see it; the replay is revealed).
    drawn = tile_text(applied.drawn_tile) if applied.HasField("drawn_tile") else None
    assert drawn == (tile_text(watched.drawn_tile) if watched.HasField("drawn_tile") else None)
    assert drawn == step.drawn, where
    # Scores, turn, hands and boneyard after it.
    assert list(applied.scores) == list(after.scores) == list(step.scores), where
    turn = applied.turn if applied.HasField("turn") else None
    assert turn == (after.turn if after.HasField("turn") else None) == step.turn, where
    assert list(after.hand_sizes) == list(step.hand_sizes), where
    assert after.boneyard_size == step.boneyard, where
    # The round's end and the match's.
    assert applied.HasField("round_end") == (action.round_ended is not None), where
    if action.round_ended is not None:
        assert applied.round_end == action.round_ended, where
        end = step.round_end
        assert end is not None, where
        assert (
            pb.RoundEndKind.Name(applied.round_end.kind) == f"ROUND_END_KIND_{end.ending}".upper()
        )
        finisher = applied.round_end.finisher if applied.round_end.HasField("finisher") else None
        assert finisher == end.finisher, where
        assert list(applied.round_end.pips) == list(end.pips), where
        assert list(applied.round_end.deductions) == list(end.deductions), where
        assert list(applied.round_end.scores) == list(end.scores), where
    else:
        assert step.round_end is None, where
    assert applied.HasField("match_end") == (action.match_ended is not None) == step.final, where
    if action.match_ended is not None:
        assert applied.match_end == action.match_ended, where
        winner = applied.match_end.winner if applied.match_end.HasField("winner") else None
        assert winner == step.winner == (after.winner if after.HasField("winner") else None)


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_reader_tells_the_same_story_of_every_action(
    svc: Service, variant: str, seats: int
) -> None:
    seed = 1000 * seats + list(VARIANTS).index(variant)
    match = play(svc, variant, seats, seed)
    watch(svc, match)
    replay = load_replay(svc.db_path, match.created.match_id, reveal=True)
    assert replay.revealed
    assert len(replay.steps) == len(match.actions)
    for action, step in zip(match.actions, replay.steps, strict=True):
        agree(action, step)
    kinds = {step.kind for step in replay.steps}
    assert {"lead", "place", "draw", "pass"} <= kinds, kinds

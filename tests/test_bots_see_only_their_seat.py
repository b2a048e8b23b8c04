"""A bot is handed its seat's view, and nothing reachable from it holds a hidden tile."""

from __future__ import annotations

import gc
import random
import types
from typing import Any

import pytest

from sniff import VARIANTS, Match, Move, Phase, SeatView, Tile, ismcts, make_bot, play_match, view
from sniff.ismcts import IsmctsBot
from sniff.match import Deal, RoundLog
from sniff.rollout import RolloutBot
from sniff.sampler import Sampler, position_of

_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def reachable(root: object) -> list[object]:
    """Every object reachable from `root` through references, not entering classes, modules
    or functions (which lead to the whole program, not to this view's data)."""
    seen: dict[int, object] = {}
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, _OPAQUE):
            continue
        seen[id(obj)] = obj
        todo.extend(gc.get_referents(obj))
    return list(seen.values())


class Spy:
    """A bot that records everything reachable from each argument it is given."""

    name = "spy"

    def __init__(self, seed: int, inner: Any = None) -> None:
        self.inner = make_bot("random", seed) if inner is None else inner
        self.seen: list[tuple[SeatView, list[object]]] = []

    def choose(self, view: Any) -> Move:
        self.seen.append((view, reachable(view)))
        return self.inner.choose(view)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_a_bot_cannot_reach_another_hand_or_the_boneyard_through_its_argument(
    seats: int, variant: str
) -> None:
    check_bots_see_their_seat(seats, variant, [Spy(s) for s in range(seats)])


@pytest.mark.slow
@pytest.mark.parametrize(("seats", "variant"), [(2, "american"), (3, "british"), (4, "stubby")])
def test_the_rollout_bot_too_is_handed_only_its_seat_view(seats: int, variant: str) -> None:
    spies = [Spy(s, RolloutBot(s, rollouts=8)) for s in range(seats)]
    check_bots_see_their_seat(seats, variant, spies)


@pytest.mark.parametrize(("seats", "variant"), [(2, "american"), (3, "british"), (4, "stubby")])
def test_the_ismcts_bot_too_is_handed_only_its_seat_view(seats: int, variant: str) -> None:
    spies = [Spy(s, IsmctsBot(s, playouts=8)) for s in range(seats)]
    check_bots_see_their_seat(seats, variant, spies)


@pytest.mark.parametrize(("seats", "variant"), [(2, "berndt"), (3, "american"), (4, "british")])
def test_the_ismcts_bot_searches_only_deals_its_view_allows_and_never_holds_the_match(
    seats: int, variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every determinization the search draws replays to exactly the view the bot was handed
    (so it was drawn from that view), and nothing reachable from its search tree is the
    match, a round's log or any of the match's hidden containers."""
    drawn: list[tuple[SeatView, Deal]] = []
    trees: list[list[object]] = []

    class RecordingSampler(Sampler):
        def sample(self, rng: random.Random) -> Deal:
            deal = super().sample(rng)
            drawn.append((self.view, deal))
            return deal

    batch = ismcts._Tree.batch

    def walking_batch(tree: ismcts._Tree, size: int, backend: str | None) -> None:
        batch(tree, size, backend)
        trees.append(reachable(tree))

    monkeypatch.setattr(ismcts, "Sampler", RecordingSampler)
    monkeypatch.setattr(ismcts._Tree, "batch", walking_batch)
    match = Match(seats, seed=seats * 17 + len(variant), variant=variant, round_limit=2)
    bots = [IsmctsBot(s, playouts=16) for s in range(seats)]
    searched = 0
    while match.phase is not Phase.OVER:
        if match.phase is Phase.AWAITING_DEAL:
            match.deal()
            continue
        hidden_ids = {id(match), id(match.hands), id(match.boneyard), id(match.history)}
        hidden_ids |= {id(r) for r in match.history} | {id(r.deal) for r in match.history}
        seen = view(match, match.turn)
        drawn.clear()
        trees.clear()
        move = bots[match.turn].choose(seen)
        for sampled_view, deal in drawn:
            assert sampled_view == seen
            assert view(position_of(seen, deal), match.turn) == seen
        for objects in trees:
            for obj in objects:
                assert id(obj) not in hidden_ids, f"the search reached {type(obj).__name__}"
                assert not isinstance(obj, Match | RoundLog)
        searched += bool(drawn)
        match.apply(move)
    assert searched > 10


def test_the_rollout_bot_chooses_the_same_whatever_the_tiles_it_cannot_see() -> None:
    """Deals that differ only in a tile of seat 1's hand swapped with the boneyard's last tile:
    seat 0's rollout bot makes the same choices while its views are the same."""
    compared = 0
    for seed in range(30):
        tiles = [Tile(t) for t in range(28)]
        random.Random(seed).shuffle(tiles)
        hands = [tiles[:7], tiles[7:14]]
        bone = tiles[14:]
        one = Match(2, seed=1, deal=Deal(tuple(map(tuple, hands)), tuple(bone), 0))
        two_hands = (tuple(hands[0]), (*hands[1][:-1], bone[-1]))
        two = Match(2, seed=1, deal=Deal(two_hands, (*bone[:-1], hands[1][-1]), 0))
        bots = [RolloutBot(7, rollouts=24), RolloutBot(7, rollouts=24)]
        other = make_bot("greedy", 3)
        while one.phase is Phase.PLAYING and two.phase is Phase.PLAYING:
            seat = one.turn
            seen = view(one, seat)
            if seat == 0:
                if view(two, 0) != seen:
                    break
                move = bots[0].choose(seen)
                assert bots[1].choose(view(two, 0)) == move
                compared += len(seen.legal) > 1
            else:
                move = other.choose(seen)
                if move not in two.legal_moves():
                    break  # seat 1 plays the tile it holds in one deal only
            one.apply(move)
            two.apply(move)
        if compared >= 6:
            return
    raise AssertionError(f"only {compared} choices compared")


def check_bots_see_their_seat(seats: int, variant: str, spies: list[Spy]) -> None:
    match = Match(seats, seed=seats * 31 + len(variant), variant=variant, round_limit=2)
    hidden_ids: set[int] = set()
    checked = 0
    while match.phase is not Phase.OVER:
        if match.phase is Phase.AWAITING_DEAL:
            match.deal()
            continue
        seat = match.turn
        hidden_ids = {id(match), id(match.hands), id(match.boneyard), id(match.history)}
        hidden_ids |= {id(r) for r in match.history} | {id(r.deal) for r in match.history}
        before = len(spies[seat].seen)
        match.apply(spies[seat].choose(view(match, seat)))
        seen, objects = spies[seat].seen[before]
        on_table = {p.tile for p in seen.placements}
        own = set(seen.hand)
        for obj in objects:
            assert id(obj) not in hidden_ids, f"seat {seat} reached {type(obj).__name__}"
            assert not isinstance(obj, Match | RoundLog | Deal)
            if isinstance(obj, Tile):
                assert obj in own or obj in on_table, f"seat {seat} reached tile {obj}"
        checked += 1
    assert checked > 20


def test_play_match_gives_each_bot_its_own_seat_view() -> None:
    seats = 4
    spies = [Spy(s) for s in range(seats)]
    play_match(Match(seats, seed=3, round_limit=1), spies)
    for seat, spy in enumerate(spies):
        assert spy.seen
        for seen, _ in spy.seen:
            assert isinstance(seen, SeatView)
            assert seen.viewer == seat == seen.turn
            assert seen.hands is None
            assert seen.boneyard is None


def test_a_view_cannot_be_changed_and_its_layout_is_a_copy() -> None:
    match = Match(2, seed=1)
    seen = view(match, match.turn)
    with pytest.raises(AttributeError):
        seen.hand_mask = 0  # type: ignore[misc]
    layout = seen.layout
    layout.place(seen.legal_moves()[0])
    assert match.layout.placements == []
    assert seen.placements == ()

"""A bot is handed its seat's view, and nothing reachable from it holds a hidden tile."""

from __future__ import annotations

import gc
import types
from typing import Any

import pytest

from service.engine import VARIANTS, Match, Move, Phase, SeatView, Tile, make_bot, play_match, view
from service.engine.match import Deal, RoundLog

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

    def __init__(self, seed: int) -> None:
        self.inner = make_bot("random", seed)
        self.seen: list[tuple[SeatView, list[object]]] = []

    def choose(self, view: Any) -> Move:
        self.seen.append((view, reachable(view)))
        return self.inner.choose(view)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_a_bot_cannot_reach_another_hand_or_the_boneyard_through_its_argument(
    seats: int, variant: str
) -> None:
    match = Match(seats, seed=seats * 31 + len(variant), variant=variant, round_limit=2)
    spies = [Spy(s) for s in range(seats)]
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

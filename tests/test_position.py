"""A seat's view rebuilt from its own picture of a round (sniff/position.py): the same
view the engine shows the seat, and every impossible picture refused with the part at fault."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sniff import Match, Move, Phase, SeatView, Tile, variant_named, view
from sniff.position import ImpossiblePosition, seat_position
from tests.helpers import example_count
from tests.sampler_helpers import positions


def picture(seen: SeatView) -> dict[str, Any]:
    """What a client holding `seen` knows, as `seat_position`'s arguments."""
    assert seen.viewer is not None
    assert seen.leader is not None
    return {
        "variant": seen.variant,
        "seats": seen.seats,
        "target": seen.target,
        "scores": list(seen.scores),
        "viewer": seen.viewer,
        "leader": seen.leader,
        "hand": list(seen.hand),
        "actions": list(seen.round_actions),
        "own_draws": list(seen.own_draws),
        "hand_sizes": list(seen.hand_sizes),
    }


def as_rebuilt(seen: SeatView) -> SeatView:
    """The view without what only a whole match knows (its round number, its move count over
    earlier rounds, its round limit)."""
    return seen._replace(round_index=0, move_count=len(seen.round_actions), round_limit=None)


@settings(
    max_examples=example_count(40), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    st.sampled_from([2, 3, 4]),
    st.sampled_from(["american", "stubby", "berndt", "british"]),
    st.integers(0, 2**32),
    st.integers(0, 2**32),
)
def test_a_seat_s_picture_rebuilds_exactly_the_view_the_engine_shows_it(
    seats: int, variant: str, seed: int, pick: int
) -> None:
    rng = random.Random(pick)
    checked = 0
    for match, _ in positions(seats, variant, seed, ("greedy", "random")):
        if rng.random() > 0.15:
            continue
        for viewer in range(seats):
            seen = view(match, viewer)
            assert seat_position(**picture(seen)) == as_rebuilt(seen)
        checked += 1
        if checked >= 3:
            break


def at_position(seats: int, seed: int, actions: int) -> Match:
    match = Match(seats, seed=seed)
    rng = random.Random(seed)
    for _ in range(actions):
        moves = match.legal_moves()
        match.apply(moves[rng.randrange(len(moves))])
        assert match.phase is Phase.PLAYING
    return match


def changed(seen: SeatView, **kw: Any) -> dict[str, Any]:
    args = picture(seen)
    args.update(kw)
    return args


def refused(args: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(ImpossiblePosition) as info:
        seat_position(**args)
    assert info.value.field == field, info.value
    assert words in str(info.value)


def test_tiles_twice_are_refused() -> None:
    match = at_position(2, 3, 6)
    seen = view(match, match.turn)
    hand = list(seen.hand)
    refused(changed(seen, hand=[*hand[:-1], hand[0]]), "hand", "twice")
    placed = seen.placements[0].tile
    assert placed is not None
    refused(changed(seen, hand=[*hand[:-1], Tile(placed)]), "hand", "on the layout")


def test_an_action_the_layout_refuses_is_refused_with_its_place() -> None:
    match = at_position(2, 3, 6)
    seen = view(match, match.turn)
    actions: list[Move] = list(seen.round_actions)
    k = next(i for i, a in enumerate(actions) if i > 0 and a.is_placement)
    actions[k] = actions[0]  # the lead again, on a layout that is not empty
    refused(changed(seen, actions=actions), f"actions[{k}]", "not legal")


def test_hand_sizes_that_do_not_add_up_are_refused() -> None:
    match = at_position(3, 5, 7)
    seen = view(match, match.turn)
    sizes = list(seen.hand_sizes)
    sizes[(match.turn + 1) % 3] += 1
    refused(changed(seen, hand_sizes=sizes), "hand_sizes", "do not add up")
    refused(changed(seen, hand=list(seen.hand)[:-1]), "hand", "holds")


def test_scores_at_the_target_or_partners_apart_are_refused() -> None:
    match = at_position(4, 2, 5)
    seen = view(match, match.turn)
    refused(changed(seen, scores=[seen.target, 0, seen.target, 0]), "scores", "target")
    refused(changed(seen, scores=[5, 0, 0, 0]), "scores", "partners")


def test_a_pass_while_the_boneyard_holds_tiles_is_refused() -> None:
    match = at_position(2, 3, 4)
    seen = view(match, match.turn)
    refused(changed(seen, actions=[*seen.round_actions, Move.pass_()]), "actions[4]", "pass")


def test_draws_the_viewer_does_not_name_are_refused() -> None:
    for seed in range(200):
        match = at_position(2, seed, 0)
        while match.phase is Phase.PLAYING and not match.draw_seats:
            moves = match.legal_moves()
            match.apply(moves[0])
        if match.phase is not Phase.PLAYING:
            continue
        drawer = match.draw_seats[0]
        seen = view(match, drawer)
        refused(changed(seen, own_draws=[]), "own_draws", "drew")
        return
    raise AssertionError("no match with a draw")


def picture_of_moves(hand: Sequence[str], actions: Sequence[str], sizes: Sequence[int]) -> Any:
    return {
        "variant": variant_named("american"),
        "seats": 2,
        "target": 250,
        "scores": [0, 0],
        "viewer": 0,
        "leader": 0,
        "hand": [Tile.parse(t) for t in hand],
        "actions": [Move.parse(a) for a in actions],
        "own_draws": [],
        "hand_sizes": list(sizes),
    }


def test_a_history_no_deal_can_explain_is_refused() -> None:
    """Seat 1 draws all fourteen tiles of the boneyard without ever holding a six, then passes:
    every six but the led 6-6 must be in the viewer's hand, and one is missing."""
    hand = ["0-0", "0-1", "0-6", "1-6", "2-6", "3-6"]  # 4-6 and 5-6 are not here
    actions = ["6-6", *["draw"] * 14, "pass"]
    refused(picture_of_moves(hand, actions, [6, 21]), "position", "no deal")
    # With every six in the viewer's hand the same history is possible.
    hand = ["0-6", "1-6", "2-6", "3-6", "4-6", "5-6"]
    seen = seat_position(**picture_of_moves(hand, actions, [6, 21]))
    assert seen.turn == 0
    assert len(seen.legal) == 6


def test_the_viewer_drawing_while_it_could_place_is_refused() -> None:
    hand = ["1-2", "0-3", "0-4", "0-5", "2-3", "2-4", "2-5", "0-0"]
    args = picture_of_moves(hand, ["1-1", "draw"], [8, 6])
    args["leader"] = 1
    args["own_draws"] = [Tile.parse("0-0")]
    refused(args, "position", "not legal with its tiles")
    # Without the 1-2 (a 3-4 instead) the same draw is lawful.
    args["hand"] = [Tile.parse(t) for t in ["3-4", *hand[1:]]]
    assert seat_position(**args).turn == 0

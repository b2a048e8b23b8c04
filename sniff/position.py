"""A seat's view rebuilt from what that seat knows, with no match behind it.

A bot written in another language holds its own picture of a round: its
hand, the tiles it drew, the public actions (a draw says nothing of what it
took), every hand's size, the scores. `seat_position` turns that picture
into the `SeatView` the engine would have shown the seat, so that the
rollouts of `rollout.py` can analyse it exactly as a live match.

Nothing in the picture is trusted. It is refused (`ImpossiblePosition`,
naming the part at fault) when the actions are not legal on the layout they
build, when a tile appears twice, when the sizes do not add up, when the
scores have already ended the match, and finally when no deal of the round
is consistent with it: a consistent deal is sampled and the round replayed
on it through the engine (`sampler.position_of`), which must show the seat
exactly the view built here.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from sniff.errors import IllegalMove, SniffError
from sniff.layout import Layout
from sniff.match import Phase, legal_moves_of
from sniff.moves import Move, MoveKind
from sniff.rules import HAND_SIZE, SEAT_COUNTS, team_of
from sniff.sampler import ImpossibleView, Sampler, position_of
from sniff.tiles import BIT, NAMES, SET_SIZE, TILES, Tile
from sniff.variants import Variant
from sniff.view import SeatView, view

MAX_ACTIONS = 120
"""A round has at most 28 placements, 14 draws (2 seats) and a few passes per seat."""


class ImpossiblePosition(SniffError):
    """A picture of a round that no real match can show a seat; `field` names the part."""

    kind = "impossible_position"

    def __init__(self, message: str, field: str = "position") -> None:
        super().__init__(message)
        self.field = field


def seat_position(
    *,
    variant: Variant,
    seats: int,
    target: int,
    scores: Sequence[int],
    viewer: int,
    leader: int,
    hand: Sequence[Tile],
    actions: Sequence[Move],
    own_draws: Sequence[Tile],
    hand_sizes: Sequence[int],
) -> SeatView:
    """The view `viewer` has of a round in play: `hand` now, the round's `actions` so far
    (led by `leader`), the tiles it drew this round in order, every hand's size, the scores
    per seat (partners equal) before any deduction of this round. Raises ImpossiblePosition."""
    if seats not in SEAT_COUNTS:
        raise ImpossiblePosition(f"Sniff is played by 2, 3 or 4 seats, not {seats}", "seat_count")
    for name, seat in (("viewer_seat", viewer), ("leader", leader)):
        if not 0 <= seat < seats:
            raise ImpossiblePosition(f"{seat} is not a seat of a {seats}-seat match", name)
    if len(scores) != seats:
        raise ImpossiblePosition(f"{len(scores)} scores for {seats} seats", "scores")
    if seats == 4 and (scores[0] != scores[2] or scores[1] != scores[3]):
        raise ImpossiblePosition("partners (seats 0+2, 1+3) share one score", "scores")
    if any(s >= target for s in scores):
        raise ImpossiblePosition(
            f"a score has reached the target {target}: the match is over", "scores"
        )
    if len(hand_sizes) != seats:
        raise ImpossiblePosition(f"{len(hand_sizes)} hand sizes for {seats} seats", "hand_sizes")
    if len(actions) > MAX_ACTIONS:
        raise ImpossiblePosition(f"{len(actions)} actions: no round is that long", "actions")
    own = _tileset(hand, "hand")
    drawn_own = _tileset(own_draws, "own_draws")

    layout = Layout(variant)
    size = HAND_SIZE[seats]
    bone_left = SET_SIZE - seats * size
    placed_by = [0] * seats
    draws_by = [0] * seats
    seat = leader
    last_draw: int | None = None
    for k, move in enumerate(actions):
        field = f"actions[{k}]"
        last_draw = None
        if move.kind is MoveKind.DRAW:
            if bone_left == 0:
                raise ImpossiblePosition("a draw from an empty boneyard", field)
            bone_left -= 1
            draws_by[seat] += 1
            if seat == viewer:
                if draws_by[seat] > len(own_draws):
                    raise ImpossiblePosition(
                        "the viewer drew more tiles than own_draws names", "own_draws"
                    )
                last_draw = int(own_draws[draws_by[seat] - 1])
            continue
        if move.kind is MoveKind.PASS:
            if bone_left:
                raise ImpossiblePosition("a pass while the boneyard holds tiles", field)
        else:
            try:
                layout.check(move)
            except IllegalMove as e:
                raise ImpossiblePosition(f"{move} is not legal here: {e}", field) from None
            layout.place(move)
            placed_by[seat] += 1
        seat = (seat + 1) % seats
    if draws_by[viewer] != len(own_draws):
        raise ImpossiblePosition(
            f"own_draws names {len(own_draws)} tiles but the viewer drew {draws_by[viewer]}",
            "own_draws",
        )
    on_layout = sum(BIT[m.tile] for m in layout.placements if m.tile is not None)
    if own & on_layout:
        both = NAMES[(own & on_layout).bit_length() - 1]
        raise ImpossiblePosition(f"{both} is in the hand and on the layout", "hand")
    sizes = [size - placed_by[s] + draws_by[s] for s in range(seats)]
    if list(hand_sizes) != sizes:
        raise ImpossiblePosition(
            f"the hand sizes {list(hand_sizes)} do not add up: the actions leave {sizes}",
            "hand_sizes",
        )
    if len(hand) != sizes[viewer]:
        raise ImpossiblePosition(
            f"the hand holds {len(hand)} tiles; the actions leave the viewer {sizes[viewer]}",
            "hand",
        )
    if 0 in sizes:
        raise ImpossiblePosition("a seat has dominoed: the round is over", "actions")
    drawn = -1
    if last_draw is not None and seat == viewer and BIT[last_draw] & layout.playable:
        drawn = last_draw
    if drawn_own & ~own & ~on_layout:
        raise ImpossiblePosition(
            "a tile the viewer drew is neither in its hand nor placed", "own_draws"
        )
    turn = seat
    teams = tuple(team_of(s, seats) for s in range(seats))
    built = SeatView(
        seats=seats,
        variant=variant,
        target=target,
        round_limit=None,
        round_index=0,
        phase=Phase.PLAYING,
        turn=turn,
        leader=leader,
        viewer=viewer,
        hand_mask=own,
        hand_sizes=tuple(sizes),
        boneyard_size=bone_left,
        scores=tuple(scores),
        teams=teams,
        move_count=len(actions),
        drawn=TILES[drawn] if drawn >= 0 else None,
        winner=None,
        round_actions=tuple(actions),
        own_draws=tuple(TILES[int(t)] for t in own_draws),
        ends_sum=layout.ends,
        legal=tuple(legal_moves_of(layout, own, drawn, bone_left)) if turn == viewer else (),
        covered=tuple(layout.covered),
        sniff_index=layout.sniff,
        sniff_rule=layout.rule,
        sniff_table=layout.sniff_table,
        hands=None,
        boneyard=None,
    )
    _check_consistent(built)
    return built


def _tileset(tiles: Sequence[Tile], field: str) -> int:
    mask = 0
    for t in tiles:
        if not 0 <= int(t) < SET_SIZE:
            raise ImpossiblePosition(f"{t!r} is not a tile", field)
        if mask & BIT[t]:
            raise ImpossiblePosition(f"{NAMES[t]} appears twice", field)
        mask |= BIT[t]
    return mask


def _check_consistent(built: SeatView) -> None:
    """Some deal of the round gives exactly this view: sample one and replay the round."""
    try:
        sampler = Sampler(built)
        imagined = position_of(built, sampler.sample(random.Random(0)))
    except ImpossibleView as e:
        raise ImpossiblePosition(f"no deal is consistent with this position: {e}") from None
    except IllegalMove as e:
        raise ImpossiblePosition(
            f"the viewer's own actions are not legal with its tiles: {e}"
        ) from None
    if view(imagined, built.viewer) != built:
        raise ImpossiblePosition("no deal is consistent with this position")

"""What one seat, or the observer, may see of a match.

A `SeatView` is built from a `Match` by copying out only public facts and the
viewer's own hand, so code holding a view cannot reach a hidden tile: the
view is an immutable tuple of plain values with no reference back to the
match. Bots receive a seat's view, never the match, so a bot cannot peek
however it is written.

A view is built for every bot decision, so it copies only cheap values (the
legal moves, the covered sides of the 28 tiles, the counted-ends sum); the
costlier pictures (a `Layout`, the open sides and counted ends as value
objects, the hand as tiles) are derived from those when read.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from sniff.layout import CountedEnd, Layout, OpenSide, ends_after
from sniff.match import Match, Phase
from sniff.moves import DRAW, PASS, Move
from sniff.rules import Seat
from sniff.tiles import BIT, TILES, Tile, tiles_of
from sniff.variants import SniffRule, Variant


class SeatView(NamedTuple):
    """The public state plus one seat's private hand (or, for the observer, everything)."""

    seats: int
    variant: Variant
    target: int
    round_limit: int | None
    round_index: int
    phase: Phase
    turn: Seat | None
    leader: Seat | None
    viewer: Seat | None
    """The seat this view belongs to; None for the observer."""
    hand_mask: int
    """The viewer's own hand as a bitmask of tiles (0 for the observer)."""
    hand_sizes: tuple[int, ...]
    boneyard_size: int
    scores: tuple[int, ...]
    """Scores per seat (partners carry the same number)."""
    teams: tuple[int, ...]
    move_count: int
    drawn: Tile | None
    """The placeable tile the viewer just drew and must place, if any."""
    winner: Seat | None
    round_actions: tuple[Move, ...]
    """Every action of the current round in order (a draw does not say what it took)."""
    own_draws: tuple[Tile, ...]
    """The tiles the viewer drew this round, in draw order (all draws, for the observer)."""
    ends_sum: int
    legal: tuple[Move, ...]
    """The viewer's lawful actions when it is the viewer's turn, in canonical order."""
    covered: tuple[int, ...]
    """Per tile: the bitmask of its covered sides, -1 while it is not on the layout."""
    sniff_index: int
    """The Sniff's tile number, -1 before there is one."""
    sniff_rule: SniffRule | None
    sniff_table: tuple[int, ...]
    """The Sniff's contribution table under its rule (`layout.SNIFF_CONTRIB`)."""
    hands: tuple[tuple[Tile, ...], ...] | None
    """Every hand: only in the observer's view."""
    boneyard: tuple[Tile, ...] | None
    """The undrawn boneyard in draw order: only in the observer's view."""

    # -- derived, computed when read --------------------------------------

    @property
    def hand(self) -> tuple[Tile, ...]:
        """The viewer's own hand in tile order; empty for the observer (see `hands`)."""
        return tuple(tiles_of(self.hand_mask))

    @property
    def sniff(self) -> Tile | None:
        """The round's Sniff (first double placed), once there is one."""
        return TILES[self.sniff_index] if self.sniff_index >= 0 else None

    @property
    def placements(self) -> tuple[Move, ...]:
        """The round's placements in order: the layout."""
        return tuple(a for a in self.round_actions if a.is_placement)

    @property
    def layout(self) -> Layout:
        """The layout rebuilt from the placements: a new object, free to try moves on."""
        layout = Layout(self.variant)
        for move in self.placements:
            layout.place(move)
        return layout

    @property
    def open_sides(self) -> tuple[OpenSide, ...]:
        return self.layout.open_sides()

    @property
    def counted_ends(self) -> tuple[CountedEnd, ...]:
        return self.layout.counted_ends()

    def legal_moves(self) -> list[Move]:
        """The viewer's lawful actions when it is the viewer's turn (else none)."""
        return list(self.legal)

    def ends_after(self, move: Move) -> int:
        """The counted-ends sum a lawful placement would leave."""
        return ends_after(
            self.covered, self.sniff_index, self.sniff_table, self.ends_sum, self.variant, move
        )

    def points_after(self, move: Move) -> int:
        """The points a lawful placement would score at once (§5)."""
        ends = ends_after(
            self.covered, self.sniff_index, self.sniff_table, self.ends_sum, self.variant, move
        )
        return ends if ends > 0 and ends % 5 == 0 else 0


def view(match: Match, seat: Seat | None) -> SeatView:
    """The match as `seat` sees it; `seat=None` is the observer, who sees everything.

    Built for every bot decision, so it reads each match field once and copies only what
    could change under a kept view (the round's actions, the covered sides): the hand is
    an int, the viewer's draws a tuple the match keeps as they are made, the legal moves
    come straight from the layout, and the shared tables are shared, not copied.
    """
    if seat is None:
        return _observer_view(match)
    seats = match.seats
    if not 0 <= seat < seats:
        raise ValueError(f"seat {seat} is not a seat of a {seats}-seat match")
    hands = match.hands
    layout = match.layout
    history = match.history
    leader = match.leader
    drawn = match.drawn
    boneyard_left = len(match.boneyard) - match.bone_pos
    hand = hands[seat]
    legal: tuple[Move, ...] = ()
    shown = None
    turn = None
    if match.phase is _PLAYING:
        turn = match.turn
        if seat == turn:
            # `legal_moves_of` inlined: this is the one call every bot decision makes.
            if drawn >= 0:
                shown = TILES[drawn]
                legal = tuple(layout.moves_for(BIT[drawn]))
            elif hand & layout.playable:
                legal = tuple(layout.moves_for(hand))
            else:
                legal = _DRAW_ONLY if boneyard_left else _PASS_ONLY
    scores = match.scores
    return _new(
        SeatView,
        (
            seats,
            match.variant,
            match.target,
            match.round_limit,
            match.round_index,
            match.phase,
            turn,
            leader if leader >= 0 else None,
            seat,
            hand,
            tuple(match.hand_sizes),
            boneyard_left,
            tuple(scores) if seats != 4 else (scores[0], scores[1], scores[0], scores[1]),
            match.teams,
            match.move_count,
            shown,
            match.winner,
            tuple(history[-1].actions) if history else (),
            match.drawn_by[seat],
            layout.ends,
            legal,
            tuple(layout.covered),
            layout.sniff,
            layout.rule,
            layout.sniff_table,
            None,
            None,
        ),
    )


def _observer_view(match: Match) -> SeatView:
    """Everything: every hand, the undrawn boneyard in order, every draw of the round."""
    layout = match.layout
    hands = match.hands
    history = match.history
    drawn = match.drawn
    playing = match.phase is _PLAYING
    return _new(
        SeatView,
        (
            match.seats,
            match.variant,
            match.target,
            match.round_limit,
            match.round_index,
            match.phase,
            match.turn if playing else None,
            match.leader if match.leader >= 0 else None,
            None,
            0,
            tuple(match.hand_sizes),
            len(match.boneyard) - match.bone_pos,
            match.seat_scores(),
            match.teams,
            match.move_count,
            TILES[drawn] if drawn >= 0 else None,
            match.winner,
            tuple(history[-1].actions) if history else (),
            tuple(match.boneyard[: len(match.draw_seats)]),
            layout.ends,
            (),
            tuple(layout.covered),
            layout.sniff,
            layout.rule,
            layout.sniff_table,
            tuple(tuple(tiles_of(h)) for h in hands),
            tuple(match.boneyard[match.bone_pos :]),
        ),
    )


_new: Final = tuple.__new__
"""`_new(SeatView, fields)`: a view from all its fields in order, without `_make`'s call."""
_PLAYING: Final = Phase.PLAYING
_DRAW_ONLY: Final = (DRAW,)
_PASS_ONLY: Final = (PASS,)

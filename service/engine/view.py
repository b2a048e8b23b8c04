"""What one seat, or the observer, may see of a match.

A `SeatView` is built from a `Match` by copying out only public facts and the
viewer's own hand, so code holding a view cannot reach a hidden tile: the
view has no reference back to the match.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.engine.layout import CountedEnd, OpenSide
from service.engine.match import Match, Phase
from service.engine.moves import Move
from service.engine.rules import Seat
from service.engine.tiles import TILES, Tile, tiles_of


@dataclass(frozen=True, slots=True)
class SeatView:
    """The public state plus one seat's private hand (or, for the observer, everything)."""

    seats: int
    target: int
    round_index: int
    phase: Phase
    turn: Seat | None
    leader: Seat | None
    viewer: Seat | None
    """The seat this view belongs to; None for the observer."""
    hand: tuple[Tile, ...]
    """The viewer's own hand; empty for the observer (see `hands`)."""
    hand_sizes: tuple[int, ...]
    boneyard_size: int
    placements: tuple[Move, ...]
    open_sides: tuple[OpenSide, ...]
    counted_ends: tuple[CountedEnd, ...]
    ends_sum: int
    scores: tuple[int, ...]
    move_count: int
    drawn: Tile | None
    """The placeable tile the viewer just drew and must place, if any."""
    winner: Seat | None
    sniff: Tile | None
    """The round's Sniff (first double placed), once there is one."""
    hands: tuple[tuple[Tile, ...], ...] | None = None
    """Every hand: only in the observer's view."""
    boneyard: tuple[Tile, ...] | None = None
    """The undrawn boneyard in draw order: only in the observer's view."""


def view(match: Match, seat: Seat | None) -> SeatView:
    """The match as `seat` sees it; `seat=None` is the observer, who sees everything."""
    if seat is not None and not 0 <= seat < match.seats:
        raise ValueError(f"seat {seat} is not a seat of a {match.seats}-seat match")
    playing = match.phase is Phase.PLAYING
    layout = match.layout
    own_draw = match.drawn >= 0 and (seat is None or seat == match.turn)
    observer = seat is None
    return SeatView(
        seats=match.seats,
        target=match.target,
        round_index=match.round_index,
        phase=match.phase,
        turn=match.turn if playing else None,
        leader=match.leader if match.leader >= 0 else None,
        viewer=seat,
        hand=() if seat is None else tuple(tiles_of(match.hands[seat])),
        hand_sizes=tuple(h.bit_count() for h in match.hands),
        boneyard_size=match.boneyard_left,
        placements=tuple(layout.placements),
        open_sides=layout.open_sides(),
        counted_ends=layout.counted_ends(),
        ends_sum=layout.ends,
        scores=match.seat_scores(),
        move_count=match.move_count,
        drawn=TILES[match.drawn] if own_draw else None,
        winner=match.winner,
        sniff=TILES[layout.sniff] if layout.sniff >= 0 else None,
        hands=tuple(tuple(tiles_of(h)) for h in match.hands) if observer else None,
        boneyard=tuple(match.boneyard[match.bone_pos :]) if observer else None,
    )

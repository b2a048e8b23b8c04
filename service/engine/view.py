"""What one seat, or the observer, may see of a match.

A `SeatView` is built from a `Match` by copying out only public facts and the
viewer's own hand, so code holding a view cannot reach a hidden tile: the
view has no reference back to the match, and its layout is a copy (the
layout is public). Bots receive a seat's view, never the match, so a bot
cannot peek however it is written.

A view is built for every bot decision, so the costly parts (the open sides
and counted ends as value objects, the hand as a tuple) are computed only
when read.
"""

from __future__ import annotations

from typing import Any

from service.engine.layout import CountedEnd, Layout, OpenSide, points_for
from service.engine.match import Match, Phase, legal_moves_of
from service.engine.moves import Move
from service.engine.rules import Seat
from service.engine.tiles import TILES, Tile, tiles_of
from service.engine.variants import Variant


class SeatView:
    """The public state plus one seat's private hand (or, for the observer, everything).

    Read-only: attributes cannot be set, and the layout inside is the view's
    own copy.
    """

    __slots__ = (
        "_counted_ends",
        "_layout",
        "_open_sides",
        "boneyard",
        "boneyard_size",
        "drawn",
        "hand_mask",
        "hand_sizes",
        "hands",
        "leader",
        "move_count",
        "phase",
        "round_actions",
        "round_index",
        "round_limit",
        "scores",
        "seats",
        "target",
        "teams",
        "turn",
        "variant",
        "viewer",
        "winner",
    )

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
    hands: tuple[tuple[Tile, ...], ...] | None
    """Every hand: only in the observer's view."""
    boneyard: tuple[Tile, ...] | None
    """The undrawn boneyard in draw order: only in the observer's view."""
    _layout: Layout
    _open_sides: tuple[OpenSide, ...] | None
    _counted_ends: tuple[CountedEnd, ...] | None

    def __init__(self, match: Match, seat: Seat | None) -> None:
        if seat is not None and not 0 <= seat < match.seats:
            raise ValueError(f"seat {seat} is not a seat of a {match.seats}-seat match")
        playing = match.phase is Phase.PLAYING
        own_draw = match.drawn >= 0 and (seat is None or seat == match.turn)
        observer = seat is None
        history = match.history
        put = object.__setattr__
        put(self, "seats", match.seats)
        put(self, "variant", match.variant)
        put(self, "target", match.target)
        put(self, "round_limit", match.round_limit)
        put(self, "round_index", match.round_index)
        put(self, "phase", match.phase)
        put(self, "turn", match.turn if playing else None)
        put(self, "leader", match.leader if match.leader >= 0 else None)
        put(self, "viewer", seat)
        put(self, "hand_mask", 0 if seat is None else match.hands[seat])
        put(self, "hand_sizes", tuple(h.bit_count() for h in match.hands))
        put(self, "boneyard_size", match.boneyard_left)
        put(self, "scores", match.seat_scores())
        put(self, "teams", match.teams)
        put(self, "move_count", match.move_count)
        put(self, "drawn", TILES[match.drawn] if own_draw else None)
        put(self, "winner", match.winner)
        put(self, "round_actions", tuple(history[-1].actions) if history else ())
        put(self, "hands", tuple(tuple(tiles_of(h)) for h in match.hands) if observer else None)
        put(self, "boneyard", tuple(match.boneyard[match.bone_pos :]) if observer else None)
        put(self, "_layout", match.layout.copy())
        put(self, "_open_sides", None)
        put(self, "_counted_ends", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a SeatView is read-only: cannot set {name!r}")

    def _key(self) -> tuple[object, ...]:
        lay = self._layout
        public = tuple(getattr(self, n) for n in self.__slots__ if not n.startswith("_"))
        return (*public, tuple(lay.placements), tuple(lay.covered), tuple(lay.open), lay.ends)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SeatView):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"SeatView(seats={self.seats}, variant={self.variant}, viewer={self.viewer}, "
            f"round={self.round_index}, move_count={self.move_count})"
        )

    # -- derived, computed when read --------------------------------------

    @property
    def hand(self) -> tuple[Tile, ...]:
        """The viewer's own hand in tile order; empty for the observer (see `hands`)."""
        return tuple(tiles_of(self.hand_mask))

    @property
    def layout(self) -> Layout:
        """A copy of the layout (public), for code that wants to try placements on it."""
        return self._layout.copy()

    @property
    def placements(self) -> tuple[Move, ...]:
        return tuple(self._layout.placements)

    @property
    def ends_sum(self) -> int:
        return self._layout.ends

    @property
    def sniff(self) -> Tile | None:
        """The round's Sniff (first double placed), once there is one."""
        return TILES[self._layout.sniff] if self._layout.sniff >= 0 else None

    @property
    def open_sides(self) -> tuple[OpenSide, ...]:
        cached = self._open_sides
        if cached is None:
            cached = self._layout.open_sides()
            object.__setattr__(self, "_open_sides", cached)
        return cached

    @property
    def counted_ends(self) -> tuple[CountedEnd, ...]:
        cached = self._counted_ends
        if cached is None:
            cached = self._layout.counted_ends()
            object.__setattr__(self, "_counted_ends", cached)
        return cached

    def legal_moves(self) -> list[Move]:
        """The viewer's lawful actions when it is the viewer's turn (else none), canonical order."""
        if self.phase is not Phase.PLAYING or self.viewer is None or self.viewer != self.turn:
            return []
        drawn = -1 if self.drawn is None else int(self.drawn)
        return legal_moves_of(self._layout, self.hand_mask, drawn, self.boneyard_size)

    def ends_after(self, move: Move) -> int:
        """The counted-ends sum a lawful placement would leave."""
        return self._layout.ends_after(move)

    def points_after(self, move: Move) -> int:
        """The points a lawful placement would score at once (§5)."""
        return points_for(self._layout.ends_after(move))


def view(match: Match, seat: Seat | None) -> SeatView:
    """The match as `seat` sees it; `seat=None` is the observer, who sees everything."""
    return SeatView(match, seat)

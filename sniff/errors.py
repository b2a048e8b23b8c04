"""One exception type per cause, all `ValueError`s (but the playout's choice of kernel).

A move that cannot be read is a different error from a move that is read
but illegal here; the service maps each class to a status code and an audit
maps each `kind` to its docs/records.md problem word, so neither has to parse
messages.
"""

from __future__ import annotations


class SniffError(ValueError):
    """Base of every error the engine raises on bad input."""

    kind = "error"


class NotationError(SniffError):
    """Text that is not docs/records.md notation."""

    kind = "malformed"


class TileNotationError(NotationError):
    """Text that names no tile of a double-six set."""


class MoveNotationError(NotationError):
    """Text that is not a move (`TILE`, `TILE@BOARDTILE:SIDE`, `draw`, `pass`)."""


class UnknownVariant(SniffError):
    """A variant name that is not exactly one of docs/rules.md §10's (never read as American)."""

    kind = "unknown_variant"


class BadDeal(SniffError):
    """A deal that is not exactly the 28 tiles, in the right hand sizes, with a lawful leader."""

    kind = "bad_deal"


class IllegalMove(SniffError):
    """A well-formed action that the rules forbid in this state (docs/rules.md §3-§8)."""

    kind = "illegal_move"


class NotYourTurn(IllegalMove):
    """Acting for a seat whose turn it is not (§2)."""

    kind = "out_of_turn"


class TileNotInHand(IllegalMove):
    """Placing a tile the seat to play does not hold."""

    kind = "not_in_hand"


class NoSuchOpenSide(IllegalMove):
    """Placing on a side that is not open: not on the layout, covered, or a closed branch (§3)."""

    kind = "no_open_side"


class NotCanonical(NoSuchOpenSide):
    """Naming the second side of a mirror pair while the first is open (§3)."""

    kind = "not_canonical"


class StubEnd(NoSuchOpenSide):
    """Joining a tile to a stub's outer end: it counts but is never open (§10.3)."""

    kind = "stub_end"


class TileAlreadyPlaced(IllegalMove):
    """Placing a tile that is on the layout already: each tile appears once (§3)."""

    kind = "already_placed"


class ValuesDoNotMatch(IllegalMove):
    """Joining a tile to a side of another value (§3)."""

    kind = "value_mismatch"


class MissingOrientation(IllegalMove):
    """A move that makes the Sniff, where the variant lets the player choose, names no
    orientation (§10.4)."""

    kind = "missing_orientation"


class UnexpectedOrientation(IllegalMove):
    """An orientation on a move that does not make the Sniff, or in a variant without the
    choice (§10.4)."""

    kind = "unexpected_orientation"


class LeadExpected(IllegalMove):
    """The layout is empty: the only placement is a lead; or a lead on a non-empty layout."""

    kind = "illegal_move"


class MustPlace(IllegalMove):
    """Drawing or passing while holding a placeable tile (§6)."""

    kind = "must_place"


class MustPlaceDrawn(IllegalMove):
    """Anything but placing the placeable tile just drawn (§6)."""

    kind = "must_place_drawn"


class CannotDraw(IllegalMove):
    """Drawing from an empty boneyard (§6)."""

    kind = "cannot_draw"


class CannotPass(IllegalMove):
    """Passing while a draw is possible (§6)."""

    kind = "cannot_pass"


class NoRoundInPlay(IllegalMove):
    """Acting between rounds, before the next deal."""

    kind = "no_round"


class RoundInPlay(IllegalMove):
    """Dealing the next round while the current one is still being played."""

    kind = "round_in_play"


class MatchOver(IllegalMove):
    """Acting after the match was won (§8)."""

    kind = "after_win"


class KernelChoiceError(ImportError):
    """SNIFF_KERNEL names a playout kernel this install cannot give (`sniff.playout`).

    An ImportError, raised while `sniff.playout` is imported: a misconfigured
    environment, not bad input, so not a `SniffError`.
    """

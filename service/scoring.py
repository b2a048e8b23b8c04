"""ScoreLayout's work: build a layout from an empty table by placements, and score it.

The engine's `Layout` checks and places each tile; what is added here is the
meaning of a refusal for a stateless call: a placement that cannot be made is
the caller's bad argument (`BadPlacement`, naming which), since no match
state is involved.
"""

from __future__ import annotations

from collections.abc import Iterable

from service.errors import BadPlacement
from sniff import IllegalMove, Layout, Move, MoveKind
from sniff.variants import Variant


def build_layout(variant: Variant, placements: Iterable[Move]) -> Layout:
    """The layout `placements` build in `variant` (a lead, then places), each checked first."""
    layout = Layout(variant)
    for i, move in enumerate(placements):
        if move.kind not in (MoveKind.LEAD, MoveKind.PLACE):
            raise BadPlacement(i, f"placement {i}: {move} is not a placement", "not_a_placement")
        try:
            layout.check(move)
        except IllegalMove as exc:
            raise BadPlacement(i, f"placement {i}: {exc}", exc.kind) from None
        layout.place(move)
    return layout

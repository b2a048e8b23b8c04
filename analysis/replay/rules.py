"""What a replay needs from the rules engine, in one place: the variant's layout.

The engine knows the four ways of handling the Sniff (docs/rules.md §10): a
`Layout` made for a variant scores its Sniff by the variant's rule for the
orientation the move names (or the only one it allows), and a stub's
outer end is counted but never open. A replay only names the variant; logged
moves are read and applied by the log's replayer (service/storage/replayer.py).
"""

from __future__ import annotations

from typing import Literal

from sniff import Layout, variant_named

Orientation = Literal["cross", "inline"]


def new_layout(variant: str) -> Layout:
    """An empty layout playing by `variant`'s rules (`sniff.UnknownVariant` for a name that is
    not one of them)."""
    return Layout(variant_named(variant))


def sniff_orientation(layout: Layout) -> Orientation | None:
    """How the layout's Sniff lies, once there is one."""
    if layout.rule is None:
        return None
    return "inline" if layout.rule.orientation.value == "inline" else "cross"

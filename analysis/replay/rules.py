"""What a replay needs from the rules engine, in one place.

The engine implements American Sniff (RULES.md §1-9); the variants of §10
(a match's `variant`, a Sniff placed `cross` or `inline`, stubs) are coming
to it. Until its `Layout` knows them, a replay reads the orientation suffix
of a move here and refuses to compute the figures of another variant,
rather than showing American figures for it. The drawing (geometry.py)
already takes the Sniff's orientation.
"""

from __future__ import annotations

from typing import Final, Literal

from service.engine import Layout, Move

Orientation = Literal["cross", "inline"]

VARIANTS: Final = ("american", "stubby", "berndt", "british")
SUPPORTED: Final = frozenset({"american"})
"""Variants whose counted ends and open sides the engine computes today."""

_FIXED_ORIENTATION: Final[dict[str, Orientation]] = {"american": "cross", "stubby": "inline"}


class UnsupportedVariant(ValueError):
    """A match of a variant the engine cannot replay yet."""


class UnknownVariant(ValueError):
    """A match whose variant is not one of RULES.md §10's names."""


def check_variant(variant: str) -> None:
    """Raise unless a replay can compute this variant's figures."""
    if variant not in VARIANTS:
        raise UnknownVariant(f"unknown variant {variant!r} (one of {', '.join(VARIANTS)})")
    if variant not in SUPPORTED:
        raise UnsupportedVariant(
            f"this release's engine replays American Sniff only, not the {variant} variant"
        )


def new_layout(variant: str) -> Layout:
    """An empty layout playing by `variant`'s rules."""
    check_variant(variant)
    return Layout()


def parse_move(text: str, variant: str = "american") -> tuple[Move, Orientation | None]:
    """A logged move and the orientation its suffix names (RULES.md §10.4), if any.

    Where the variant fixes the orientation there is no suffix; the Sniff's
    orientation is then `sniff_orientation(variant, None)`.
    """
    body, slash, suffix = text.partition("/")
    orientation: Orientation | None = None
    if slash:
        if suffix not in ("cross", "inline"):
            raise ValueError(f"{text!r}: an orientation is /cross or /inline")
        orientation = "cross" if suffix == "cross" else "inline"
    return Move.parse(body), orientation


def sniff_orientation(variant: str, suffix: Orientation | None) -> Orientation:
    """How the Sniff lies: fixed by the variant, else chosen by the move's suffix."""
    fixed = _FIXED_ORIENTATION.get(variant)
    if fixed is not None:
        return fixed
    return suffix or "cross"

"""The four ways of handling the Sniff (docs/rules.md §10), each read in one place.

The variants share everything but the Sniff: deal, turn, draw and pass,
blocks, deductions, targets and winning are §1-9 in all of them. What
differs is how the Sniff may be placed (its orientation), what it counts,
and whether its branches are ordinary arms or one-tile stubs. A variant is
therefore a name plus one `SniffRule` per orientation it allows; the layout
asks the rule of the Sniff it holds, and nothing else in the engine names a
variant.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from sniff.errors import UnknownVariant


class Orientation(enum.Enum):
    """How the Sniff lies (§10.1): crosswise like every double, or in line like a non-double."""

    CROSS = "cross"
    INLINE = "inline"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class SniffRule:
    """What a Sniff placed in one orientation counts and how its branches grow (§10.2, §10.3)."""

    orientation: Orientation
    counts_whole: bool
    """Before both line sides hold tiles: True counts 2·d once (crosswise); False counts d for
    each open line side (an in-line Sniff shows its ends like a non-double)."""
    branch_counts: bool
    """Once both line sides hold tiles: True counts d for each open branch side (American);
    False counts nothing (All Fives)."""
    stubs: bool
    """True: each branch takes one tile, whose outer end counts but is not open (stubs)."""


_AMERICAN_CROSS: Final = SniffRule(
    Orientation.CROSS, counts_whole=True, branch_counts=True, stubs=False
)
_ALL_FIVES_CROSS: Final = SniffRule(
    Orientation.CROSS, counts_whole=True, branch_counts=False, stubs=False
)
_INLINE_ARMS: Final = SniffRule(
    Orientation.INLINE, counts_whole=False, branch_counts=False, stubs=False
)
_INLINE_STUBS: Final = SniffRule(
    Orientation.INLINE, counts_whole=False, branch_counts=False, stubs=True
)


@dataclass(frozen=True, slots=True)
class Variant:
    """A way of handling the Sniff: its name (records, API) and the rule of each orientation.

    `rules` lists the orientations the Sniff may take, `cross` first (§10.1):
    one rule means no choice (a Sniff move carries no suffix), two mean the
    player chooses and the move names the orientation.
    """

    name: str
    rules: tuple[SniffRule, ...]
    summary: str
    """One line for `--help`: what this variant changes."""

    @property
    def has_choice(self) -> bool:
        return len(self.rules) > 1

    @property
    def orientations(self) -> tuple[Orientation, ...]:
        return tuple(r.orientation for r in self.rules)

    def rule(self, orientation: Orientation | None) -> SniffRule:
        """The rule of a Sniff placed in `orientation` (None: the variant's only one)."""
        if orientation is None:
            return self.rules[0]
        for r in self.rules:
            if r.orientation is orientation:
                return r
        raise ValueError(f"{self.name} has no {orientation} Sniff")

    def __str__(self) -> str:
        return self.name


AMERICAN: Final = Variant(
    "american",
    (_AMERICAN_CROSS,),
    "the Sniff lies crosswise; once both line sides are covered each open branch counts d",
)
STUBBY: Final = Variant(
    "stubby",
    (_INLINE_STUBS,),
    "the Sniff lies in line; its branches take one tile each (stubs whose ends count)",
)
BERNDT: Final = Variant(
    "berndt",
    (_ALL_FIVES_CROSS, _INLINE_ARMS),
    "the player lays the Sniff crosswise (2·d) or in line (d per end); open branches count 0",
)
BRITISH: Final = Variant(
    "british",
    (_ALL_FIVES_CROSS, _INLINE_STUBS),
    "the player chooses: crosswise as Berndt, or in line as Stubby (stub branches)",
)

VARIANTS: Final[dict[str, Variant]] = {v.name: v for v in (AMERICAN, STUBBY, BERNDT, BRITISH)}
"""Every variant by its exact name, the default first."""


def variant_named(name: str) -> Variant:
    """The variant spelled exactly `name`; anything else is refused, never read as American."""
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        raise UnknownVariant(f"no variant {name!r} (one of {', '.join(VARIANTS)})") from None

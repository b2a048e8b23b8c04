"""ScoreLayout's work without a server: a layout built by placements, refusals that say which.

(The RPC, its statuses and the docs/rules.md worked examples are in test_service_errors.)
"""

from __future__ import annotations

import pytest

from service.errors import BadPlacement
from service.scoring import build_layout
from sniff import Move, points_for
from sniff.variants import VARIANTS


def moves(*notations: str) -> list[Move]:
    return [Move.parse(n) for n in notations]


def test_the_layout_is_the_engines_after_every_placement() -> None:
    layout = build_layout(VARIANTS["american"], moves("1-4", "1-1@1-4:low", "4-4@1-4:high"))
    assert (layout.ends, points_for(layout.ends)) == (10, 10)


def test_no_placement_is_the_empty_table() -> None:
    assert build_layout(VARIANTS["american"], []).ends == 0


@pytest.mark.parametrize(
    ("notations", "index", "kind"),
    [
        (("1-4", "draw"), 1, "not_a_placement"),
        (("1-4", "pass"), 1, "not_a_placement"),
        (("1-1@1-4:low",), 0, "illegal_move"),
        (("1-4", "2-3@1-4:low"), 1, "value_mismatch"),
        (("1-4", "1-1@6-6:line_a"), 1, "no_open_side"),
    ],
    ids=["draw", "pass", "no-lead", "value-mismatch", "no-such-side"],
)
def test_a_placement_that_cannot_be_made_names_its_index_and_kind(
    notations: tuple[str, ...], index: int, kind: str
) -> None:
    with pytest.raises(BadPlacement) as raised:
        build_layout(VARIANTS["american"], moves(*notations))
    assert (raised.value.index, raised.value.kind) == (index, kind)
    assert str(raised.value).startswith(f"placement {index}: ")

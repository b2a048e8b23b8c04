"""docs/records.md move notation: tiles and moves read and written back, and garbage refused."""

from __future__ import annotations

import pytest

from sniff import (
    DRAW,
    PASS,
    TILES,
    Move,
    MoveKind,
    MoveNotationError,
    NotationError,
    Side,
    Tile,
    TileNotationError,
)

PAIRS = [(a, b) for a in range(7) for b in range(a, 7)]
SIDE_NAMES = ["low", "high", "line_a", "line_b", "branch_a", "branch_b"]


# -- tiles -------------------------------------------------------------------


def test_the_set_has_28_tiles_low_half_first_in_order() -> None:
    assert len(TILES) == 28
    assert [str(t) for t in TILES] == [f"{a}-{b}" for a, b in PAIRS]
    assert [(t.low, t.high) for t in TILES] == PAIRS
    assert [t.pips for t in TILES] == [a + b for a, b in PAIRS]
    assert [t for t in TILES if t.is_double] == [Tile.of(d, d) for d in range(7)]
    assert sum(t.pips for t in TILES) == 168


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_every_tile_reads_in_each_accepted_form_and_writes_back_low_half_first(
    a: int, b: int
) -> None:
    tile = Tile.of(a, b)
    assert str(tile) == f"{a}-{b}"
    assert Tile.of(b, a) == tile
    for text in (f"{a}-{b}", f"{b}-{a}", f"[{a}|{b}]", f"[{b}|{a}]", f"{a}|{b}", f"{b}|{a}"):
        parsed = Tile.parse(text)
        assert parsed == tile, text
        assert str(parsed) == f"{a}-{b}"
    assert Tile.parse(str(tile)) is TILES[tile]


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "1",
        "14",
        "1-",
        "-4",
        "1-4-5",
        "1--4",
        "1-7",
        "7-1",
        "9-9",
        "10-1",
        "a-b",
        "one-four",
        "1,4",
        "1/4",
        "1:4",
        "[1-4]",
        "[1|4|]",
        "[[1|4]]",
        "1||4",
        "1-4@",
        "draw",
    ],
)
def test_garbage_is_not_a_tile(text: str) -> None:
    with pytest.raises(TileNotationError):
        Tile.parse(text)


@pytest.mark.parametrize("value", [None, 14, 1.4, b"1-4", ["1-4"], ("1", "4")])
def test_a_non_text_is_not_a_tile_or_a_move(value: object) -> None:
    with pytest.raises(TileNotationError):
        Tile.parse(value)  # type: ignore[arg-type]
    with pytest.raises(MoveNotationError):
        Move.parse(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(("a", "b"), [(-1, 3), (0, 7), (7, 7), (3, -2)])
def test_halves_outside_zero_to_six_make_no_tile(a: int, b: int) -> None:
    with pytest.raises(TileNotationError, match="double-six"):
        Tile.of(a, b)


@pytest.mark.parametrize(
    "text",
    [
        "[1|4",
        "1|4]",
        "\u0661-\u0664",
        "\uff11-\uff14",
    ],
)
def test_near_miss_tile_texts_outside_the_four_accepted_forms_are_refused(text: str) -> None:
    """docs/records.md accepts exactly `a-b`, `b-a`, `[a|b]`, `a|b` (ASCII digits)."""
    with pytest.raises(TileNotationError):
        Tile.parse(text)


# -- moves -------------------------------------------------------------------


def test_draw_and_pass_round_trip() -> None:
    assert Move.parse("draw") is DRAW
    assert Move.parse("pass") is PASS
    assert str(DRAW) == "draw"
    assert str(PASS) == "pass"
    assert DRAW.kind is MoveKind.DRAW
    assert PASS.kind is MoveKind.PASS
    assert not DRAW.is_placement
    assert not PASS.is_placement
    assert DRAW.tile is None
    assert DRAW.slot == -1


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_every_lead_round_trips_in_each_tile_form(a: int, b: int) -> None:
    lead = Move.lead(Tile.of(a, b))
    assert str(lead) == f"{a}-{b}"
    assert lead.kind is MoveKind.LEAD
    assert lead.is_placement
    assert lead.board_tile is None
    assert lead.side is None
    for text in (f"{a}-{b}", f"{b}-{a}", f"[{a}|{b}]", f"{b}|{a}"):
        assert Move.parse(text) is lead, text


def test_every_placement_of_every_tile_on_every_side_round_trips() -> None:
    count = 0
    for tile in TILES:
        for board in TILES:
            for side, name in zip(Side, SIDE_NAMES, strict=True):
                text = f"{tile}@{board}:{name}"
                move = Move.place(tile, board, side)
                assert str(move) == text
                assert Move.parse(text) is move
                assert (move.kind, move.tile, move.board_tile, move.side) == (
                    MoveKind.PLACE,
                    tile,
                    board,
                    side,
                )
                assert move.slot == board * 8 + side
                count += 1
    assert count == 28 * 28 * 6


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1-4@1-1:low", "1-4@1-1:low"),
        ("4-1@1-1:low", "1-4@1-1:low"),
        ("[4|1]@[1|1]:low", "1-4@1-1:low"),
        ("4|1@1|1:low", "1-4@1-1:low"),
        ("3-4@4-4:line_b", "3-4@4-4:line_b"),
        ("[5|1]@1-1:branch_a", "1-5@1-1:branch_a"),
        ("3-1@[1|1]:branch_b", "1-3@1-1:branch_b"),
        ("6-6@6-3:high", "6-6@3-6:high"),
        ("[4|1]", "1-4"),
        ("1|4", "1-4"),
    ],
)
def test_placements_read_in_accepted_variants_write_back_canonical(
    text: str, canonical: str
) -> None:
    move = Move.parse(text)
    assert str(move) == canonical
    assert Move.parse(canonical) is move


@pytest.mark.parametrize(
    "text",
    [
        "",
        "drew",
        "draws",
        "draw 1-4",
        "draw pass",
        "passes",
        "lead 1-4",
        "1-4@",
        "1-4@1-1",
        "1-4@1-1:",
        "1-4@1-1:up",
        "1-4@1-1:lowx",
        "1-4@1-1:line",
        "1-4@1-1:branch",
        "1-4@1-1:line_c",
        "1-4@1-1:2",
        "1-4@1-1:low:high",
        "1-4@@1-1:low",
        "1-4@1-1@2-2:low",
        "@1-1:low",
        "1-4@:low",
        ":low",
        "1-7@1-1:low",
        "1-4@1-9:low",
        "1-4:low",
        "1-4 1-1 low",
        "[1-4]",
        "garbage",
    ],
)
def test_garbage_is_not_a_move(text: str) -> None:
    with pytest.raises(MoveNotationError):
        Move.parse(text)


def test_notation_errors_are_value_errors_reported_as_malformed() -> None:
    for error in (TileNotationError, MoveNotationError):
        assert issubclass(error, NotationError)
        assert issubclass(error, ValueError)
        assert error.kind == "malformed"
    with pytest.raises(ValueError, match="not a tile"):
        Tile.parse("x")
    with pytest.raises(ValueError, match="TILE@BOARDTILE:SIDE"):
        Move.parse("1-4@1-1")
    with pytest.raises(ValueError, match="not a side"):
        Move.parse("1-4@1-1:up")


def test_a_placement_off_the_set_is_refused() -> None:
    with pytest.raises(MoveNotationError):
        Move.place(0, 0, 6)
    with pytest.raises(MoveNotationError):
        Move.place(28, 0, 0)
    with pytest.raises(MoveNotationError):
        Move.place(0, -1, 0)


@pytest.mark.parametrize("tile", [28, -1])
def test_a_lead_off_the_set_is_refused(tile: int) -> None:
    with pytest.raises(MoveNotationError):
        Move.lead(tile)

"""docs/rules.md §2, §6-§8 on hand-built deals, replayed to exact figures.

Each scenario is an explicit deal and a script of actions. A script line is
`SEAT ACTION` followed by the counted-ends sum and the points of a placement
(worked out by hand from the docs/rules.md §5 table), or by the tile a draw takes.
"""

from __future__ import annotations

from collections import Counter

import pytest

from sniff import (
    DRAW,
    PASS,
    TILES,
    ActionResult,
    BadDeal,
    CannotDraw,
    CannotPass,
    Deal,
    IllegalMove,
    LeaderChoice,
    LeadExpected,
    Match,
    MatchOver,
    Move,
    MustPlace,
    MustPlaceDrawn,
    NoRoundInPlay,
    NoSuchOpenSide,
    NotCanonical,
    NotYourTurn,
    Phase,
    RoundEndKind,
    Tile,
    TileNotInHand,
    ValuesDoNotMatch,
    view,
)


def tiles(text: str) -> list[Tile]:
    return [Tile.parse(t) for t in text.split()]


def make_deal(hands: list[str], boneyard: str, leader: int) -> Deal:
    """A deal of the given hands; the boneyard starts as given, the other tiles follow in order."""
    held = [tiles(h) for h in hands]
    first = tiles(boneyard)
    used = {t for h in held for t in h} | set(first)
    return Deal.of(held, first + [t for t in TILES if t not in used], leader)


def run(match: Match, script: str) -> list[ActionResult]:
    """Apply a script, checking the seat, and each figure, of every line."""
    results = []
    for line in filter(str.strip, script.splitlines()):
        seat_text, action, *figures = line.split()
        seat = int(seat_text)
        assert match.turn == seat, line
        result = match.apply(Move.parse(action), seat=seat)
        assert result.seat == seat
        if action == "draw":
            assert [str(result.drawn)] == figures, line
        elif action == "pass":
            assert (result.points, result.ends_sum, figures) == (0, None, []), line
        else:
            assert [result.ends_sum, result.points] == [int(f) for f in figures], line
        results.append(result)
    return results


def texts(moves: list[Move]) -> list[str]:
    return [str(m) for m in moves]


def state(m: Match) -> tuple[object, ...]:
    lay = m.layout
    return (
        m.phase,
        m.turn,
        m.move_count,
        tuple(m.hands),
        m.bone_pos,
        tuple(lay.placements),
        tuple(lay.covered),
        tuple(lay.open),
        lay.ends,
        tuple(m.scores),
        m.winner,
        m.drawn,
        len(m.history),
        len(m.history[-1].actions),
        len(m.history[-1].points),
    )


def refused(m: Match, move: Move | str, error: type[IllegalMove], words: str = "") -> None:
    """`check` and `apply` refuse `move` with `error`, its message naming `words`; no change."""
    if isinstance(move, str):
        move = Move.parse(move)
    before = state(m)
    with pytest.raises(error, match=words) as caught:
        m.check(move)
    assert type(caught.value) is error
    with pytest.raises(error, match=words):
        m.apply(move)
    assert state(m) == before


# -- Scenario "draw" (2 seats): a Sniff opens its branches, then seat 1 draws three tiles.

DRAW_DEAL = make_deal(
    ["2-2 2-6 0-5 0-6 1-5 1-6 3-5", "2-5 0-0 0-1 0-3 0-4 1-1 1-3"], "1-4 3-3 5-6", leader=0
)
DRAW_OPENING = """
0 2-2               4  0
1 2-5@2-2:line_a    9  0
0 2-6@2-2:line_b   15 15
"""
DRAW_DRAWS = """
1 draw 1-4
1 draw 3-3
1 draw 5-6
"""

# -- Scenario "pass" (4 seats): draws, a pass on an empty boneyard, a domino that leaves
# every other hand stuck.

PASS_DEAL = Deal.of(
    [
        tiles("0-2 2-3 0-1 3-4 4-4"),
        tiles("4-5 1-3 0-0 0-6 3-3"),
        tiles("2-5 2-2 4-6 0-3 1-1"),
        tiles("2-6 0-4 2-4 5-6 1-2"),
    ],
    tiles("6-6 3-5 1-4 3-6 1-6 0-5 5-5 1-5"),
    3,
)
PASS_TO_DRAWS = """
3 2-6               8  0
0 2-3@2-6:low       9  0
1 1-3@2-3:high      7  0
2 4-6@2-6:high      5  5
3 0-4@4-6:low       1  0
0 0-1@1-3:low       0  0
1 0-6@0-1:low       6  0
2 0-3@0-4:low       9  0
3 5-6@0-6:high      8  0
0 3-4@0-3:high      9  0
1 4-5@5-6:low       8  0
2 draw 6-6
2 draw 3-5
2 draw 1-4
"""
PASS_TO_PASS = """
2 1-4@4-5:low       5  5
3 1-2@1-4:low       6  0
0 4-4@3-4:high     10 10
1 draw 3-6
1 draw 1-6
1 draw 0-5
1 draw 5-5
1 draw 1-5
"""
PASS_TO_END = """
1 pass
2 2-2@1-2:high     12  0
3 2-4@2-2:line_b   12  0
"""

# -- Scenario "block on a draw" (4 seats): the last boneyard tile is drawn and nobody can place.

BLOCK_ON_DRAW_DEAL = Deal.of(
    [
        tiles("5-5 1-4 1-2 2-5 0-6"),
        tiles("1-3 6-6 3-3 0-4 2-4"),
        tiles("4-5 2-3 0-5 1-1 5-6"),
        tiles("1-5 0-0 4-6 3-4 0-2"),
    ],
    tiles("2-2 1-6 0-3 2-6 0-1 4-4 3-5 3-6"),
    3,
)
BLOCK_ON_DRAW_TO_LAST = """
3 4-6              10 10
0 0-6@4-6:high      4  0
1 0-4@0-6:low       8  0
2 4-5@0-4:high      9  0
3 1-5@4-5:high      5  5
0 1-4@1-5:low       8  0
1 2-4@4-6:low       6  0
2 2-3@2-4:low       7  0
3 3-4@2-3:high      8  0
0 draw 2-2
0 draw 1-6
0 draw 0-3
0 draw 2-6
0 draw 0-1
0 draw 4-4
0 4-4@3-4:high     12  0
1 draw 3-5
"""
BLOCK_ON_DRAW_LAST = "1 draw 3-6"

# -- Scenario "block on a placement" (4 seats): all seven 3s are out and both ends show 3.

BLOCK_ON_PLACEMENT_DEAL = Deal.of(
    [
        tiles("4-4 2-3 0-1 5-6 3-3"),
        tiles("2-4 0-5 5-5 3-5 6-6"),
        tiles("0-3 4-5 1-1 1-6 4-6"),
        tiles("3-4 0-2 1-2 3-6 2-5"),
    ],
    tiles("0-6 1-4 2-2 0-0 2-6 1-5 0-4 1-3"),
    2,
)
BLOCK_ON_PLACEMENT = """
2 0-3               3  0
3 0-2@0-3:low       5  5
0 2-3@0-2:high      6  0
1 3-5@2-3:high      8  0
2 4-5@3-5:high      7  0
3 3-4@4-5:low       6  0
0 3-3@0-3:high      9  0
1 draw 0-6
1 draw 1-4
1 draw 2-2
1 draw 0-0
1 draw 2-6
1 draw 1-5
1 draw 0-4
1 draw 1-3
1 1-3@3-4:low       7  0
2 1-6@1-3:low      12  0
3 3-6@1-6:high      9  0
"""

# -- Scenario "domino" (2 seats): seat 0 plays out its hand with a scoring tile.

DOMINO_DEAL = Deal.of(
    [tiles("2-4 5-6 0-0 2-2 5-5 1-5 2-6"), tiles("0-5 6-6 0-4 0-1 1-6 0-6 1-4")],
    tiles("3-6 3-3 2-3 0-2 1-3 4-5 1-2 1-1 2-5 3-5 4-6 4-4 3-4 0-3"),
    0,
)
DOMINO = """
0 5-6              11  0
1 0-5@5-6:low       6  0
0 0-0@0-5:low       6  0
1 1-6@5-6:high      1  0
0 1-5@1-6:low       5  5
1 0-4@0-0:line_b    9  0
0 5-5@1-5:high     14  0
1 0-1@0-0:branch_a 15 15
0 2-4@0-4:high     13  0
1 1-4@0-1:high     16  0
0 2-2@2-4:low      18  0
1 0-6@0-0:branch_b 24  0
0 2-6@0-6:high     20 20
"""


# -- the lead ---------------------------------------------------------------


def test_the_leader_may_lead_any_tile_in_hand() -> None:
    m = Match(2, deal=DRAW_DEAL)
    assert m.turn == 0
    assert m.history[0].leader_choice is LeaderChoice.EXPLICIT
    assert texts(m.legal_moves()) == ["0-5", "0-6", "1-5", "1-6", "2-2", "2-6", "3-5"]
    refused(m, "2-5", TileNotInHand, "not in seat 0's hand")
    refused(m, "2-2@2-2:line_a", LeadExpected, "lead a tile")


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_the_first_leader_is_drawn_by_lot_among_all_seats(seats: int) -> None:
    n = 3000
    counts: Counter[int] = Counter()
    for seed in range(n):
        m = Match(seats, seed=seed)
        assert m.history[0].leader_choice is LeaderChoice.LOT
        assert m.turn == m.leader == m.history[0].deal.leader
        counts[m.leader] += 1
    assert sorted(counts) == list(range(seats))
    for seat in range(seats):
        assert abs(counts[seat] - n / seats) < 0.12 * n / seats, counts


# -- §6: play, draw or pass ---------------------------------------------------


def test_a_placeable_tile_must_be_placed_rather_than_drawn() -> None:
    m = Match(2, deal=DRAW_DEAL)
    run(m, "0 2-2 4 0")
    # Seat 1 holds 2-5 and must place it; the led Sniff offers line_a only.
    assert texts(m.legal_moves()) == ["2-5@2-2:line_a"]
    refused(m, DRAW, MustPlace, "may not draw")
    refused(m, PASS, MustPlace, "may not pass")
    refused(m, "2-5@2-2:line_b", NotCanonical, "line_a")
    run(m, "1 2-5@2-2:line_a 9 0")
    assert texts(m.legal_moves()) == [
        "2-6@2-2:line_b",
        "0-5@2-5:high",
        "1-5@2-5:high",
        "3-5@2-5:high",
    ]


def test_a_seat_draws_until_it_can_place_and_then_must_place_the_drawn_tile() -> None:
    m = Match(2, deal=DRAW_DEAL)
    run(m, DRAW_OPENING)
    assert m.scores == [15, 0]
    # The Sniff's branches are open (2, 2), and the ends 5 and 6: seat 1 holds none of these.
    assert texts(m.legal_moves()) == ["draw"]
    refused(m, PASS, CannotPass, "may not pass while the boneyard holds tiles")
    refused(m, "0-0@2-5:high", ValuesDoNotMatch, "no half of value 5")
    refused(m, "0-1@2-2:branch_b", NotCanonical, "branch_a")
    first, second, _ = run(m, DRAW_DRAWS)
    # The first two draws cannot be placed: they stay in hand and the turn stays.
    assert first.round_end is None
    assert second.round_end is None
    assert m.turn == 1
    assert {"1-4", "3-3", "5-6"} <= {str(t) for t in m.hand(1)}
    assert len(m.hand(1)) == 9
    assert m.boneyard_left == 11
    # The third draw can be placed: only its placements are legal, in either place.
    assert texts(m.legal_moves()) == ["5-6@2-5:high", "5-6@2-6:high"]
    refused(m, DRAW, MustPlaceDrawn, "drew 5-6, which can be placed: it must be placed now")
    refused(m, PASS, MustPlaceDrawn, "must be placed")
    refused(m, "1-4@2-2:branch_a", MustPlaceDrawn, "must be placed")
    assert view(m, 1).drawn == Tile.parse("5-6")
    assert view(m, 0).drawn is None
    run(m, "1 5-6@2-6:high 14 0")
    assert m.turn == 0
    assert view(m, 1).drawn is None
    assert m.scores == [15, 0]
    assert m.move_count == 7
    assert m.history[0].points == [0, 0, 15, None, None, None, 0]


def test_pass_only_when_the_boneyard_is_empty_and_no_tile_can_be_placed() -> None:
    m = Match(4, deal=PASS_DEAL)
    run(m, PASS_TO_DRAWS)
    assert texts(m.legal_moves()) == ["1-4@3-4:high", "1-4@4-5:low"]
    run(m, PASS_TO_PASS[: PASS_TO_PASS.index("1 draw 1-6")])
    # Seat 1 cannot place, four tiles are left: drawing, not passing.
    assert m.boneyard_left == 4
    refused(m, PASS, CannotPass, "may not pass")
    run(m, PASS_TO_PASS[PASS_TO_PASS.index("1 draw 1-6") :])
    assert m.boneyard_left == 0
    assert m.phase is Phase.PLAYING  # seat 2 can still place 2-2 or 2-5 on the 2
    assert texts(m.legal_moves()) == ["pass"]
    refused(m, DRAW, CannotDraw, "the boneyard is empty")
    run(m, "1 pass")
    assert m.turn == 2
    assert m.history[0].points[-1] is None
    assert texts(m.legal_moves()) == ["2-2@1-2:high", "2-5@1-2:high"]


def test_partners_share_one_score() -> None:
    m = Match(4, deal=PASS_DEAL)
    team_points = {0: 0, 1: 0}
    script = PASS_TO_DRAWS + PASS_TO_PASS + PASS_TO_END
    for line in filter(str.strip, script.splitlines()):
        (result,) = run(m, line)
        team_points[result.seat % 2] += result.points
        if result.round_end is None:
            assert m.scores == [team_points[0], team_points[1]]
            a, b = team_points[0], team_points[1]
            assert m.seat_scores() == (a, b, a, b)
    # Seats 2 (5 + 5) and 0 (10) scored for partnership 0+2.
    assert team_points == {0: 20, 1: 0}


# -- §7: end of round ------------------------------------------------------


def test_a_domino_ends_the_round_even_if_nobody_could_place_after_it() -> None:
    m = Match(4, deal=PASS_DEAL)
    *_, last = run(m, PASS_TO_DRAWS + PASS_TO_PASS + PASS_TO_END)
    # Both ends now show 4 and no hand holds a 4, but seat 3 played its last tile.
    assert last.round_end is not None
    end = last.round_end
    assert end.kind is RoundEndKind.DOMINO
    assert end.finisher == 3
    # Left: seat 0 `0-2` (2), seat 1 `0-0 3-3 3-6 1-6 0-5 5-5 1-5` (43),
    # seat 2 `2-5 1-1 6-6 3-5` (29), seat 3 nothing.
    assert end.pips == (2, 43, 29, 0)
    assert end.deductions == (0, 45, 30, 0)
    assert end.scores == (-10, -45, -10, -45)
    assert m.scores == [-10, -45]
    assert m.phase is Phase.AWAITING_DEAL
    assert m.history[0].end == end


def test_the_finisher_leads_the_next_round() -> None:
    m = Match(2, deal=DOMINO_DEAL)
    *_, last = run(m, DOMINO)
    assert last.round_end is not None
    assert last.round_end.kind is RoundEndKind.DOMINO
    assert last.round_end.finisher == 0
    assert last.round_end.pips == (0, 12)
    assert last.round_end.deductions == (0, 10)
    assert m.scores == [25, 5]
    nxt = m.copy()
    nxt.deal()
    assert nxt.leader == nxt.turn == 0
    assert nxt.history[-1].leader_choice is LeaderChoice.FINISHER
    with pytest.raises(BadDeal, match="seat 0 dominoed the last round and must lead"):
        m.deal(Deal(DOMINO_DEAL.hands, DOMINO_DEAL.boneyard, 1))
    assert m.phase is Phase.AWAITING_DEAL
    m.deal(DOMINO_DEAL)
    assert m.history[-1].leader_choice is LeaderChoice.FINISHER
    assert m.turn == 0


def test_a_block_is_declared_as_soon_as_the_last_draw_leaves_nobody_able_to_place() -> None:
    m = Match(4, deal=BLOCK_ON_DRAW_DEAL)
    run(m, BLOCK_ON_DRAW_TO_LAST)
    assert m.phase is Phase.PLAYING
    assert texts(m.legal_moves()) == ["draw"]
    (last,) = run(m, BLOCK_ON_DRAW_LAST)
    # Both ends show 4 and all seven 4s are on the layout: no seat passes, the round is over.
    end = last.round_end
    assert end is not None
    assert end.kind is RoundEndKind.BLOCKED
    assert end.finisher is None
    # mypy keeps m.phase narrowed to PLAYING across run(), which changes it.
    assert m.phase is Phase.AWAITING_DEAL  # type: ignore[comparison-overlap]
    # Left: seat 0 `5-5 1-2 2-5 2-2 1-6 0-3 2-6 0-1` (43), seat 1 `1-3 6-6 3-3 3-5 3-6` (39),
    # seat 2 `0-5 1-1 5-6` (18), seat 3 `0-0 0-2` (2).
    assert end.pips == (43, 39, 18, 2)
    assert end.deductions == (45, 40, 20, 0)
    # Partnership 1+3 scored 10 + 5 on seat 3's placements.
    assert end.scores == (-65, -25, -65, -25)


def test_a_block_is_declared_on_the_placement_that_leaves_nobody_able_to_place() -> None:
    m = Match(4, deal=BLOCK_ON_PLACEMENT_DEAL)
    results = run(m, BLOCK_ON_PLACEMENT)
    assert all(r.round_end is None for r in results[:-1])
    end = results[-1].round_end
    assert end is not None
    assert end.kind is RoundEndKind.BLOCKED
    assert end.finisher is None
    # Left: seat 0 `4-4 0-1 5-6` (20), seat 1 four dealt and seven drawn tiles (66),
    # seat 2 `1-1 4-6` (12), seat 3 `1-2 2-5` (10).
    assert end.pips == (20, 66, 12, 10)
    assert end.deductions == (20, 65, 10, 10)
    assert end.scores == (-30, -70, -30, -70)


def test_after_a_block_the_next_leader_is_drawn_by_lot() -> None:
    leaders: Counter[int] = Counter()
    for seed in range(200):
        m = Match(4, seed=seed, deal=BLOCK_ON_PLACEMENT_DEAL)
        run(m, BLOCK_ON_PLACEMENT)
        m.deal()
        assert m.history[-1].leader_choice is LeaderChoice.LOT
        assert m.turn == m.history[-1].deal.leader
        leaders[m.turn] += 1
    assert sorted(leaders) == [0, 1, 2, 3]
    assert min(leaders.values()) >= 30
    # An explicit deal after a block may name any leader.
    m = Match(4, deal=BLOCK_ON_PLACEMENT_DEAL)
    run(m, BLOCK_ON_PLACEMENT)
    m.deal(Deal(BLOCK_ON_PLACEMENT_DEAL.hands, BLOCK_ON_PLACEMENT_DEAL.boneyard, 1))
    assert m.turn == 1


# -- §8: winning --------------------------------------------------------------


def test_a_match_is_won_at_once_mid_round_on_the_placement_reaching_the_target() -> None:
    m = Match(2, target=15, deal=DRAW_DEAL)
    *_, win = run(m, DRAW_OPENING)
    assert win.winner == 0
    assert win.round_end is None
    assert m.phase is Phase.OVER
    assert m.winner == 0
    # The round stops there: hands are not counted, nothing is deducted.
    assert m.scores == [15, 0]
    assert len(m.hand(0)) == 5
    assert len(m.hand(1)) == 6
    assert m.history[-1].end is None
    assert m.history[-1].scores == (15, 0)
    assert m.legal_moves() == []


def test_a_partner_wins_on_the_partnership_score() -> None:
    m = Match(4, target=20, deal=PASS_DEAL)
    lines = PASS_TO_PASS.strip().splitlines()
    # Seat 2 scored 5 and 5; seat 0's 10 brings partnership 0+2 to the target.
    *_, win = run(m, PASS_TO_DRAWS + "\n".join(lines[:3]))
    assert win.seat == 0
    assert win.winner == 0
    assert m.winner == 0
    assert m.scores == [20, 0]
    assert m.seat_scores() == (20, 0, 20, 0)
    assert m.phase is Phase.OVER


def test_a_winning_last_tile_wins_without_deductions() -> None:
    m = Match(2, target=25, deal=DOMINO_DEAL)
    *_, win = run(m, DOMINO)
    # Without a target, this placement is a domino costing seat 1 ten (see above).
    assert win.winner == 0
    assert win.round_end is None
    assert m.phase is Phase.OVER
    assert m.scores == [25, 15]
    assert m.history[-1].end is None


def test_nothing_may_be_played_after_the_match_is_won() -> None:
    m = Match(2, target=15, deal=DRAW_DEAL)
    run(m, DRAW_OPENING)
    for move in (DRAW, PASS, Move.parse("0-5@2-5:high"), Move.parse("0-0@2-5:high")):
        refused(m, move, MatchOver, "the match is over: seat 0 won")
        with pytest.raises(MatchOver):
            m.apply(move, seat=1)
    with pytest.raises(MatchOver):
        m.deal()
    with pytest.raises(MatchOver):
        m.deal(DRAW_DEAL)
    assert m.phase is Phase.OVER


def test_nothing_may_be_played_between_rounds_and_no_deal_while_a_round_is_in_play() -> None:
    m = Match(2, deal=DOMINO_DEAL)
    with pytest.raises(IllegalMove, match="a round is in play"):
        m.deal(DOMINO_DEAL)
    run(m, DOMINO)
    assert m.legal_moves() == []
    for move in (DRAW, PASS, Move.parse("3-6"), Move.parse("3-6@2-6:low")):
        refused(m, move, NoRoundInPlay, "the next round must be dealt")


# -- turns and errors ----------------------------------------------------------


def test_acting_for_a_seat_whose_turn_it_is_not_is_refused() -> None:
    m = Match(2, deal=DRAW_DEAL)
    run(m, "0 2-2 4 0")
    before = state(m)
    with pytest.raises(NotYourTurn, match="it is seat 1's turn, not seat 0's"):
        m.apply(Move.parse("2-5@2-2:line_a"), seat=0)
    with pytest.raises(NotYourTurn):
        m.check(Move.parse("2-5@2-2:line_a"), seat=0)
    assert state(m) == before
    m.apply(Move.parse("2-5@2-2:line_a"), seat=1)
    assert m.turn == 0


@pytest.mark.parametrize(
    ("move", "error", "words"),
    [
        ("1-4@2-5:high", TileNotInHand, r"tile 1-4 is not in seat 1's hand \(it is still in the"),
        ("0-5@2-5:high", TileNotInHand, r"not in seat 1's hand \(seat 0 holds it: out of turn"),
        ("2-5@2-5:high", TileNotInHand, r"not in seat 1's hand \(it is already on the layout"),
        ("0-0", LeadExpected, "the layout is not empty"),
        ("0-0@2-5:high", ValuesDoNotMatch, "0-0 has no half of value 5 to join 2-5:high"),
        ("0-0@3-3:high", NoSuchOpenSide, "3-3 is not on the layout"),
        ("0-0@2-2:line_a", NoSuchOpenSide, "2-2:line_a already holds a tile"),
        ("0-0@2-5:line_a", NoSuchOpenSide, "2-5 is a non-double and has no line_a side"),
        ("0-0@2-5:low", NoSuchOpenSide, "2-5:low already holds a tile"),
        ("0-0@2-2:branch_b", NotCanonical, "mirrors 2-2:branch_a, which is open: use branch_a"),
    ],
)
def test_each_refusal_names_the_rule(move: str, error: type[IllegalMove], words: str) -> None:
    m = Match(2, deal=DRAW_DEAL)
    run(m, DRAW_OPENING)
    refused(m, move, error, words)
    assert issubclass(error, ValueError)


def test_each_refusal_has_its_own_kind() -> None:
    kinds = {
        TileNotInHand: "not_in_hand",
        MustPlace: "must_place",
        MustPlaceDrawn: "must_place_drawn",
        CannotPass: "cannot_pass",
        CannotDraw: "cannot_draw",
        NotYourTurn: "out_of_turn",
        NotCanonical: "not_canonical",
        ValuesDoNotMatch: "value_mismatch",
        NoSuchOpenSide: "no_open_side",
        MatchOver: "after_win",
        NoRoundInPlay: "no_round",
        BadDeal: "bad_deal",
    }
    for error, kind in kinds.items():
        assert error.kind == kind
        assert issubclass(error, ValueError)


def test_the_branches_of_the_sniff_open_only_once_both_lines_hold_tiles() -> None:
    m = Match(2, deal=DRAW_DEAL)
    run(m, "0 2-2 4 0\n1 2-5@2-2:line_a 9 0")
    refused(m, "2-6@2-2:branch_a", NoSuchOpenSide, "open only once both its line sides")
    refused(m, "2-6@2-5:branch_a", NoSuchOpenSide, "2-5 is a non-double and has no branch_a")


def test_a_later_double_never_has_branches() -> None:
    m = Match(2, deal=DOMINO_DEAL)
    lines = DOMINO.strip().splitlines()
    run(m, "\n".join(lines[:7]))
    # 5-5 was joined to 1-5 and its line_b is open; it has no branch sides, ever.
    refused(m, "0-1@5-5:branch_a", NoSuchOpenSide, "5-5 is a double and has no branch_a side")
    assert "0-1@0-0:branch_a" in texts(m.legal_moves())


# -- §2: deals ----------------------------------------------------------------


def swapped(
    deal: Deal,
    hands: list[list[Tile]] | None = None,
    boneyard: list[Tile] | None = None,
    leader: int | None = None,
) -> Deal:
    return Deal(
        tuple(tuple(h) for h in hands) if hands is not None else deal.hands,
        tuple(boneyard) if boneyard is not None else deal.boneyard,
        deal.leader if leader is None else leader,
    )


def bad_deals() -> list[tuple[str, Deal, str]]:
    d = DRAW_DEAL
    h0, h1 = list(d.hands[0]), list(d.hands[1])
    bone = list(d.boneyard)
    return [
        ("three hands for two seats", swapped(d, hands=[h0, h1, []]), "3 hands for 2 seats"),
        (
            "a short hand",
            swapped(d, hands=[h0[:-1], h1], boneyard=[h0[-1], *bone]),
            "seat 0 holds 6 tiles; 2 seats get 7 each",
        ),
        (
            "a long hand",
            swapped(d, hands=[h0, [*h1, bone[0]]], boneyard=bone[1:]),
            "seat 1 holds 8 tiles",
        ),
        (
            "a tile dealt twice",
            swapped(d, hands=[h0, [*h1[:-1], h0[0]]], boneyard=[h1[-1], *bone]),
            "tile 2-2 is dealt twice",
        ),
        (
            "a tile in hand and boneyard",
            swapped(d, boneyard=[*bone[:-1], h0[0]]),
            "2-2 is both dealt and in the boneyard",
        ),
        (
            "a tile twice in the boneyard",
            swapped(d, boneyard=[*bone[:-1], bone[0]]),
            "1-4 is both dealt and in the boneyard, or twice there",
        ),
        ("a missing tile", swapped(d, boneyard=bone[:-1]), "missing 6-6"),
        ("a leader past the last seat", swapped(d, leader=2), "leader 2 is not a seat"),
        ("a negative leader", swapped(d, leader=-1), "leader -1 is not a seat"),
    ]


@pytest.mark.parametrize(("what", "deal", "words"), bad_deals(), ids=[b[0] for b in bad_deals()])
def test_a_bad_deal_is_refused(what: str, deal: Deal, words: str) -> None:
    with pytest.raises(BadDeal, match=words):
        Match(2, deal=deal)
    m = Match(2, auto_deal=False)
    with pytest.raises(BadDeal, match=words) as caught:
        m.deal(deal)
    assert caught.value.kind == "bad_deal"
    assert isinstance(caught.value, ValueError)
    assert m.phase is Phase.AWAITING_DEAL
    assert m.history == []

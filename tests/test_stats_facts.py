"""docs/statistics.md §1 round facts and §3 Sniff decisions, by the engine, on hand-built rounds.

Every round below is an explicit deal and a script of moves; each script line
is checked against the engine (counted-ends sum and points, as in
test_rules_play.py), and the expected facts are worked out by hand in the
comments from the docs/rules.md tables.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sniff import GreedyBot, Match, RandomBot, play_match, view
from sniff.facts import (
    DECISION_COLUMNS,
    MATCH_COLUMNS,
    ROUND_COLUMNS,
    RoundRecorder,
    SniffDecision,
    facts_rows,
    match_facts,
)
from sniff.tiles import IS_DOUBLE, LOW
from tests.helpers import example_count
from tests.test_rules_play import make_deal, run


def decision(
    round_: int,
    seat: int,
    index: int,
    double: int,
    outcome: str,
    leader: bool,
    value: float,
    same: tuple[int, int] = (0, 0),
) -> SniffDecision:
    """A decision; `same` counts the round's decisions with its outcome before and after it."""
    return SniffDecision(round_, seat, index, double, outcome, leader, value, *same)


# -- a 2-seat American match: round 0 complete, round 1 cut by the match win --------------


def cut_match() -> Match:
    match = Match(2, target=25, auto_deal=False)
    match.deal(make_deal(["1-4 3-3 4-5 5-6 0-6 0-3 2-3", "1-1 1-2 2-5 2-2 0-5 0-0 6-6"], "1-6", 0))
    run(
        match,
        """
        0 1-4 5 5
        1 1-1@1-4:low 6 0
        0 4-5@1-4:high 7 0
        1 1-2@1-1:line_b 9 0
        0 5-6@4-5:high 10 10
        1 2-5@1-2:high 13 0
        0 0-6@5-6:high 7 0
        1 0-5@2-5:high 2 0
        0 0-3@0-6:low 5 5
        1 0-0@0-5:low 5 5
        0 3-3@0-3:high 8 0
        1 draw 1-6
        1 1-6@1-1:branch_a 13 0
        0 2-3@3-3:line_b 9 0
        """,
    )
    match.deal(make_deal(["0-5 4-4 1-3 2-6 3-4 1-5 0-1", "0-0 1-1 2-2 3-3 5-5 6-6 0-2"], "", 0))
    run(match, "0 0-5 5 5")  # 20 + 5 = 25: the target, won at the lead
    return match


def test_round_cut_by_the_match_win_is_incomplete_has_no_decisions_and_is_counted() -> None:
    facts = match_facts(cut_match())
    assert facts.finished
    assert facts.winner == 0
    assert facts.incomplete_rounds == 1
    cut = facts.rounds[1]
    # The lead 0-5 was a decision (4-4 beside non-doubles), but the round has no result.
    assert (cut.complete, cut.net, cut.ending, cut.deductions, cut.decisions) == (
        False,
        None,
        None,
        None,
        (),
    )
    assert cut.points == (5, 0)


def test_sniff_made_by_the_other_seat_after_a_held_lead() -> None:
    r = match_facts(cut_match()).rounds[0]
    assert r.complete
    # Seat 0 leads 1-4 holding 3-3: a decision (lead bucket), double 3; seat 1 makes the
    # Sniff 1-1 at placement 1, choosing it over 1-2: a decision, played.
    assert r.decisions == (
        decision(0, 0, 0, 3, "held_other", True, 20 - -10),
        decision(0, 1, 1, 1, "played", False, -10 - 20),
    )
    assert (r.leader, r.maker, r.sniff_index, r.double, r.orientation) == (0, 1, 1, 1, None)
    # 1-2 covers the Sniff's line_b at placement 3: two placements after the Sniff's own.
    assert r.covered_after == 2
    # Seat 0: 5 + 10 + 5 = 20, domino, nothing left. Seat 1: 5 points, 2-2 and 6-6 left
    # (16 pips: 15 deducted).
    assert r.points == (20, 5)
    assert r.deductions == (0, 15)
    assert r.net == (20, -10)
    assert r.value == -30  # for the maker's side
    assert (r.ending, r.finisher) == ("domino", 0)
    # Scoring placements while the Sniff counted: 5-6 (seat 0), 0-3 (seat 0), 0-0 (seat 1,
    # the maker); each time both branches of 1-1 are open: 1 + 1 = 2.
    assert (r.sniff_points, r.sniff_points_maker_side, r.sniff_points_others) == (6, 2, 4)
    assert (r.placements, r.scoring_placements) == ((7, 6), (3, 1))


# -- a forced Sniff after a draw ----------------------------------------------------------


def test_a_just_drawn_double_is_forced_not_a_decision() -> None:
    match = Match(2, auto_deal=False)
    match.deal(make_deal(["0-3 3-3 5-6 0-6 1-3 4-4 1-1", "0-1 4-5 1-6 0-4 0-2 6-6 1-2"], "0-0", 1))
    run(
        match,
        """
        1 0-2 2 0
        0 0-6@0-2:low 8 0
        1 1-6@0-6:high 3 0
        0 1-3@1-6:low 5 5
        1 1-2@0-2:high 4 0
        0 0-3@1-3:high 1 0
        1 0-1@1-2:low 0 0
        0 draw 0-0
        0 0-0@0-1:low 0 0
        1 0-4@0-0:line_b 4 0
        0 4-4@0-4:high 8 0
        1 4-5@4-4:line_b 5 5
        0 5-6@4-5:high 6 0
        1 6-6@5-6:high 12 0
        """,
    )
    r = match_facts(match).rounds[0]
    # Decisions: seat 1's lead (6-6 in hand), seat 1 at 2 (6-6 or 1-6 on the 6), seat 0 at 3
    # (1-1 or 1-3 on the 1), seat 0 at 5 (3-3, 1-1 or 0-3). Seat 0 at 1 and seat 1 at 4 and
    # 6 could place no double. Seat 0 then cannot place, draws 0-0 and must place it: the
    # Sniff at placement 7, forced, so no decision there.
    assert r.decisions == (
        decision(0, 1, 0, 6, "held_other", True, 10, (0, 1)),
        decision(0, 1, 2, 6, "held_other", True, 10, (1, 0)),
        decision(0, 0, 3, 1, "held_self", False, -10, (0, 1)),
        decision(0, 0, 5, 3, "held_self", False, -10, (1, 0)),
    )
    assert (r.maker, r.sniff_index, r.double, r.covered_after) == (0, 7, 0, 1)
    # 4-5 scores 5 while the 0-0's open branches count 0 + 0.
    assert (r.sniff_points, r.sniff_points_maker_side, r.sniff_points_others) == (0, 0, 0)
    # Seat 0 keeps 3-3 and 1-1 (8 pips: 10 deducted).
    assert r.net == (5 - 10, 5)


# -- a round with no Sniff, which is also the round limit's last round ---------------------


def no_sniff_match(round_limit: int | None = None) -> Match:
    match = Match(2, auto_deal=False, round_limit=round_limit)
    match.deal(make_deal(["3-6 0-1 0-3 2-3 5-6 1-2 0-2", "1-3 2-5 2-6 1-5 1-6 0-5 1-1"], "", 0))
    run(
        match,
        """
        0 0-1 1 0
        1 1-3@0-1:high 3 0
        0 3-6@1-3:high 6 0
        1 0-5@0-1:low 11 0
        0 5-6@0-5:high 12 0
        1 1-6@3-6:high 7 0
        0 1-2@1-6:low 8 0
        1 2-6@5-6:high 4 0
        0 0-2@1-2:high 2 0
        1 2-5@2-6:low 5 5
        0 0-3@0-2:low 8 0
        1 1-5@2-5:high 4 0
        0 2-3@0-3:high 3 0
        """,
    )
    return match


def test_round_without_a_sniff_has_only_held_never_decisions() -> None:
    r = match_facts(no_sniff_match()).rounds[0]
    # Only once could a double be placed: seat 1 at placement 1, 1-1 on the lead's 1 beside
    # 1-3, 1-5, 1-6 and 0-5. Seat 0 held no double at all.
    assert r.decisions == (decision(0, 1, 1, 1, "held_never", False, 5),)
    assert not r.sniff
    assert (r.maker, r.sniff_index, r.double, r.orientation, r.covered_after) == (None,) * 5
    assert (r.sniff_points, r.sniff_points_maker_side, r.sniff_points_others) == (0, 0, 0)
    # Seat 1 keeps 1-1 (2 pips round to 0).
    assert (r.points, r.deductions, r.net) == ((0, 5), (0, 0), (0, 5))
    assert r.value == -5  # without a Sniff: for the leader's side


def test_a_round_ended_at_the_round_limit_is_complete() -> None:
    facts = match_facts(no_sniff_match(round_limit=1))
    assert facts.finished
    assert facts.winner == 1  # 5 against 0 at the limit
    assert facts.incomplete_rounds == 0
    assert facts.rounds[0].complete
    assert facts.rounds[0].net == (0, 5)
    assert len(facts.rounds[0].decisions) == 1


# -- a led Sniff --------------------------------------------------------------------------


def test_led_sniff_counts_its_two_halves_then_its_open_branches() -> None:
    match = Match(2, auto_deal=False)
    match.deal(make_deal(["0-6 2-2 0-4 0-5 3-6 0-2 1-5", "1-3 3-5 1-2 3-3 1-4 0-0 6-6"], "", 0))
    run(
        match,
        """
        0 2-2 4 0
        1 1-2@2-2:line_a 5 5
        0 0-2@2-2:line_b 5 5
        1 1-3@1-2:low 7 0
        0 0-6@0-2:low 13 0
        1 3-5@1-3:high 15 15
        0 3-6@0-6:high 12 0
        1 3-3@3-6:low 15 15
        0 1-5@3-5:high 11 0
        1 1-4@1-5:low 14 0
        0 0-4@1-4:high 10 10
        1 0-0@0-4:low 10 10
        0 0-5@0-0:line_b 15 15
        """,
    )
    r = match_facts(match).rounds[0]
    assert r.decisions == (decision(0, 0, 0, 2, "played", True, 30 - 35),)
    assert (r.maker, r.sniff_index, r.double, r.covered_after) == (0, 0, 2, 2)
    # Seven scoring placements; the 2-2 counts 4 in each: 2·2 at placement 1 (one line side
    # covered), then 2 + 2 for its open branches. Seat 0 scored at 2, 10, 12.
    assert (r.sniff_points, r.sniff_points_maker_side, r.sniff_points_others) == (28, 12, 16)
    # Seat 1 keeps 6-6 (12 pips: 10 deducted).
    assert (r.points, r.deductions, r.net) == ((30, 45), (0, 10), (30, 35))


# -- a partnership round ------------------------------------------------------------------


def test_partnership_round_nets_by_side_and_a_partner_made_sniff() -> None:
    match = Match(4, auto_deal=False)
    match.deal(
        make_deal(
            [
                "5-5 2-2 0-4 1-5 0-1",
                "3-5 2-3 0-0 4-6 6-6",
                "0-5 3-3 1-2 1-3 3-6",
                "3-4 2-5 1-4 1-6 0-6",
            ],
            "",
            2,
        )
    )
    run(
        match,
        """
        2 3-6 9 0
        3 3-4@3-6:low 10 10
        0 0-4@3-4:high 6 0
        1 4-6@3-6:high 4 0
        2 0-5@0-4:low 9 0
        3 2-5@0-5:high 6 0
        0 2-2@2-5:low 8 0
        1 2-3@2-2:line_b 11 0
        2 3-3@2-3:high 14 0
        3 1-4@4-6:low 11 0
        0 0-1@1-4:low 10 10
        1 3-5@3-3:line_b 9 0
        2 1-2@2-2:branch_a 8 0
        3 1-6@1-2:low 13 0
        0 1-5@3-5:high 9 0
        1 6-6@1-6:high 15 15
        2 1-3@1-5:low 17 0
        """,
    )
    r = match_facts(match).rounds[0]
    # Seat 2 leads holding 3-3 (a decision; its partner, seat 0, makes the Sniff); seat 1 at
    # 3 could place 0-0 or 6-6 (highest 6) beside 4-6. Seat 0's 2-2 at 6 was its only
    # placeable tile: forced, no decision.
    assert r.decisions == (
        decision(0, 2, 0, 3, "held_partner", True, 0 - 20),
        decision(0, 1, 3, 6, "held_other", False, 20 - 0),
    )
    assert (r.leader, r.maker, r.sniff_index, r.double, r.covered_after) == (2, 0, 6, 2, 1)
    # Seat 0 scores 10 with both branches open (2 + 2); seat 1 scores 15 with one (2).
    assert (r.sniff_points, r.sniff_points_maker_side, r.sniff_points_others) == (6, 4, 2)
    # Side 0+2: 10 + 0 - 10 (5-5 kept) - 0. Side 1+3: 15 + 10 - 0 (0-0) - 5 (0-6).
    assert r.points == (10, 15, 0, 10)
    assert r.deductions == (10, 0, 0, 5)
    assert r.net == (0, 20, 0, 20)
    assert r.value == -20


# -- variants with a choice of orientation -------------------------------------------------


def test_berndt_inline_sniff_records_its_orientation_and_counts_d_per_open_line_side() -> None:
    match = Match(2, auto_deal=False, variant="berndt")
    match.deal(make_deal(["2-6 0-5 3-5 0-3 3-4 1-5 0-4", "1-2 0-6 3-3 5-5 0-0 4-5 1-3"], "", 0))
    run(
        match,
        """
        0 3-4 7 0
        1 1-3@3-4:low 5 5
        0 0-4@3-4:high 1 0
        1 1-2@1-3:low 2 0
        0 0-5@0-4:low 7 0
        1 5-5@0-5:high/inline 7 0
        0 2-6@1-2:high 11 0
        1 0-6@2-6:high 5 5
        0 1-5@5-5:line_b 1 0
        1 4-5@5-5:branch_a 5 5
        0 0-3@0-6:low 8 0
        1 3-3@0-3:high 11 0
        0 3-5@5-5:branch_b 14 0
        """,
    )
    r = match_facts(match).rounds[0]
    assert r.decisions == (
        decision(0, 1, 1, 3, "held_self", False, 15, (0, 1)),
        decision(0, 1, 3, 0, "held_self", False, 15, (1, 0)),
        decision(0, 1, 5, 5, "played", False, 15),
    )
    assert (r.maker, r.sniff_index, r.double, r.orientation, r.covered_after) == (
        1,
        5,
        5,
        "inline",
        3,
    )
    # 0-6 scores 5 with the in-line 5-5 showing one end (5); 4-5 scores 5 once both line
    # sides are covered, when a Berndt Sniff counts nothing.
    assert (r.sniff_points, r.sniff_points_maker_side, r.sniff_points_others) == (5, 5, 0)
    assert r.net == (0, 15)


def test_british_cross_sniff_records_cross() -> None:
    match = Match(2, auto_deal=False, variant="british")
    match.deal(make_deal(["3-3 2-3 1-1 4-6 5-6 2-4 0-5", "0-3 3-6 1-6 2-6 2-2 5-5 1-3"], "", 0))
    run(
        match,
        """
        0 4-6 10 10
        1 1-6@4-6:high 5 5
        0 2-4@4-6:low 3 0
        1 2-6@2-4:low 7 0
        0 1-1@1-6:low/cross 8 0
        1 3-6@2-6:high 5 5
        0 2-3@3-6:low 4 0
        1 1-3@1-1:line_b 5 5
        0 3-3@1-3:high 8 0
        1 0-3@3-3:line_b 2 0
        0 0-5@0-3:low 7 0
        1 5-5@0-5:high 12 0
        0 5-6@5-5:line_b 8 0
        """,
    )
    r = match_facts(match).rounds[0]
    assert r.decisions == (
        decision(0, 0, 0, 3, "held_self", True, 0, (0, 1)),
        decision(0, 0, 2, 1, "held_self", True, 0, (1, 0)),
        decision(0, 1, 3, 2, "held_other", False, 0),
        decision(0, 0, 4, 1, "played", True, 0),
    )
    assert (r.maker, r.sniff_index, r.double, r.orientation, r.covered_after) == (
        0,
        4,
        1,
        "cross",
        3,
    )
    # 3-6 scores 5 with the crosswise 1-1 counting 2; 1-3 scores 5 once both line sides are
    # covered (All Fives: the branches count nothing).
    assert (r.sniff_points, r.sniff_points_maker_side, r.sniff_points_others) == (2, 0, 2)
    assert (r.points, r.deductions, r.net) == ((10, 15), (0, 5), (10, 10))


# -- properties over bot matches -----------------------------------------------------------


def bot_match(seats: int, seed: int, variant: str) -> Match:
    bots = [GreedyBot(seed + i) if i % 2 else RandomBot(seed + i) for i in range(seats)]
    return play_match(Match(seats, seed=seed, variant=variant, round_limit=12), bots)


@settings(max_examples=example_count(40), deadline=None)
@given(
    st.sampled_from([2, 3, 4]),
    st.integers(0, 2**32),
    st.sampled_from(["american", "stubby", "berndt", "british"]),
)
def test_facts_agree_with_the_match(seats: int, seed: int, variant: str) -> None:
    match = bot_match(seats, seed, variant)
    facts = match_facts(match)
    assert len(facts.rounds) == len(match.history)
    before: tuple[int, ...] = (0,) * seats
    for r, log in zip(facts.rounds, match.history, strict=True):
        assert r.complete == (log.end is not None)
        assert sum(r.points) == sum(p or 0 for p in log.points)
        assert sum(r.placements) == sum(1 for m in log.actions if m.is_placement)
        if r.net is not None:
            assert log.end is not None
            # The nets are the round's score changes, side by side.
            assert tuple(a - b for a, b in zip(log.end.scores, before, strict=True)) == r.net
        before = log.scores
        played = [d for d in r.decisions if d.outcome == "played"]
        assert len(played) <= 1
        if played:
            assert (played[0].seat, played[0].placement_index) == (r.maker, r.sniff_index)
        outcomes = [d.outcome for d in r.decisions]
        for k, d in enumerate(r.decisions):
            assert d.same_outcome_before == outcomes[:k].count(d.outcome)
            assert d.same_outcome_after == outcomes[k + 1 :].count(d.outcome)
            assert r.sniff_index is None or d.placement_index <= r.sniff_index
            assert d.mover_is_leader == (d.seat == r.leader)
            assert (d.outcome == "held_never") == (r.maker is None)
            assert (d.outcome == "held_partner") <= (seats == 4)
        assert r.sniff_points == r.sniff_points_maker_side + r.sniff_points_others
        assert (r.orientation is not None) == (r.sniff and variant in ("berndt", "british"))


def test_a_recorder_following_the_play_gives_the_replayed_facts() -> None:
    for seats in (2, 3, 4):
        match = Match(seats, seed=seats, variant="british", round_limit=6)
        bots = [GreedyBot(s) for s in range(seats)]
        rounds = []
        while True:
            recorder = RoundRecorder(match)
            while match.phase.value == "playing":
                recorder.before(match)
                seat = match.turn
                move = bots[seat].choose(view(match, seat))
                recorder.after(match, seat, move, match.apply(move).points)
            rounds.append(recorder.facts(match.history[-1]))
            if match.phase.value == "over":
                break
            match.deal()
        assert match_facts(match, rounds) == match_facts(match)
        assert facts_rows(match, "m", None, "simulated", rounds=rounds) == facts_rows(
            match, "m", None, "simulated"
        )


def decision_by_the_legal_moves(match: Match) -> int | None:
    """docs/statistics.md §3 read off the legal moves: the highest double the seat to play may
    place, when it may place a double and a non-double; None when the turn is no decision."""
    doubles = [LOW[m.tile] for m in match.legal_moves() if m.tile is not None and IS_DOUBLE[m.tile]]
    others = [m for m in match.legal_moves() if m.tile is not None and not IS_DOUBLE[m.tile]]
    return max(doubles) if doubles and others else None


@pytest.mark.parametrize("variant", ["american", "stubby", "berndt", "british"])
def test_a_decision_is_a_turn_with_a_legal_double_and_a_legal_non_double(variant: str) -> None:
    """`RoundRecorder.before` tells a decision from the hand and the placeable tiles, without
    listing the legal moves: at every turn before the Sniff, it notes exactly the turns the
    legal moves make a decision, with their highest double."""
    noted = checked = 0
    for seed in range(60):
        seats = 2 + seed % 3
        match = Match(seats, seed=seed, variant=variant, round_limit=4)
        bots = [GreedyBot(seed + s) if s % 2 else RandomBot(seed + s) for s in range(seats)]
        while match.phase.value != "over":
            recorder = RoundRecorder(match)
            while match.phase.value == "playing":
                sniff_before = recorder.maker is not None
                got = recorder.before(match)
                expected = None if sniff_before else decision_by_the_legal_moves(match)
                assert got == (None if expected is None else (match.turn, recorder.index, expected))
                noted += got is not None
                checked += 1
                seat = match.turn
                move = bots[seat].choose(view(match, seat))
                recorder.after(match, seat, move, match.apply(move).points)
            if match.phase.value == "awaiting_deal":
                match.deal()
    assert noted > 50
    assert checked > 1000


def test_sniff_share_is_the_sniff_s_counted_ends() -> None:
    """`Layout.contribution` of the Sniff equals its entries in `Layout.counted_ends()`."""
    rng = random.Random(5)
    for variant in ("american", "stubby", "berndt", "british"):
        for seed in range(30):
            match = Match(rng.choice([2, 3, 4]), seed=seed, variant=variant)
            bot = RandomBot(seed)
            while match.phase.value == "playing":
                match.apply(bot.choose(view(match, match.turn)))
                lay = match.layout
                if lay.sniff >= 0:
                    ends = [e.value for e in lay.counted_ends() if e.tile == lay.sniff]
                    assert lay.contribution(lay.sniff) == sum(ends)


def test_facts_rows_columns_follow_the_tables() -> None:
    rows = facts_rows(cut_match(), "m1", ["greedy", "random"], "imported")
    assert tuple(rows.matches) == MATCH_COLUMNS
    assert tuple(rows.rounds) == ROUND_COLUMNS
    assert tuple(rows.decisions) == DECISION_COLUMNS
    assert rows.matches["players"] == [["greedy", "random"]]
    assert rows.matches["incomplete_rounds"] == [1]
    assert rows.rounds["complete"] == [True, False]
    assert rows.decisions["outcome"] == ["held_other", "played"]
    assert all(len(v) == 2 for v in rows.rounds.values())


@pytest.mark.parametrize(
    ("players", "source"), [(["greedy"], "served"), (None, "downloaded"), (None, "")]
)
def test_facts_rows_refuses_bad_settings(players: list[str] | None, source: str) -> None:
    with pytest.raises(ValueError, match=r"players|source"):
        facts_rows(cut_match(), "m1", players, source)

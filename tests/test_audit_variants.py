"""`sniff audit` of variant records (`sniff/2` in docs/records.md, docs/rules.md §10), round limits:
each defect kind found at its round and action, and nothing else."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from analysis.audit import audit_record
from analysis.bot_matches import bot_match
from sniff import Match, Move, Orientation, to_record
from sniff.tiles import HIGH, IS_DOUBLE, LOW


def played(variant: str, seats: int = 2, seed: int = 1, limit: int | None = 6) -> Match:
    return bot_match(seats, seed, ["greedy", "random"], variant=variant, round_limit=limit)


def find_action(
    variant: str, want: Callable[[Match, Move], bool], seats: int = 2
) -> tuple[dict[str, Any], int, int, Match]:
    """A record of `variant`, the (round, action) of its first action for which
    `want(state before, move)`, and that state."""
    for seed in range(300):
        match_played = played(variant, seats, seed)
        match = Match(
            seats,
            target=match_played.target,
            variant=variant,
            round_limit=match_played.round_limit,
            auto_deal=False,
        )
        for r, log in enumerate(match_played.history):
            match.deal(log.deal)
            for k, move in enumerate(log.actions):
                if want(match, move):
                    return to_record(match_played, f"m{seed}"), r, k, match
                match.apply(move)
    raise AssertionError("no such situation in 300 matches")


def only_problem(record: object) -> dict[str, Any]:
    result = audit_record(record, "line:1").to_json()
    assert result["ok"] is False
    assert len(result["problems"]) == 1, result["problems"]
    problem: dict[str, Any] = result["problems"][0]
    assert problem["reason"]
    return problem


def makes_sniff(match: Match, move: Move) -> bool:
    return move.tile is not None and IS_DOUBLE[move.tile] and match.layout.sniff < 0


@pytest.mark.parametrize("variant", ["american", "stubby", "berndt", "british"])
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_variant_records_written_by_the_engine_audit_ok(variant: str, seats: int) -> None:
    for seed in range(3):
        record = to_record(played(variant, seats, seed), f"v{seed}")
        assert record["format"] == ("american-sniff/1" if variant == "american" else "sniff/2")
        assert audit_record(record, "x").ok, audit_record(record, "x").problems


@pytest.mark.parametrize("variant", ["berndt", "british"])
def test_missing_orientation_on_a_choice_variants_sniff(variant: str) -> None:
    record, r, k, _ = find_action(variant, makes_sniff)
    action = record["rounds"][r]["actions"][k]
    assert action.endswith(("/cross", "/inline"))
    record["rounds"][r]["actions"][k] = action.rpartition("/")[0]
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (
        r,
        k,
        "missing_orientation",
    )
    moved = record["rounds"][r]["actions"][k]
    assert problem["reason"].startswith(f"{moved} makes the Sniff"), "the move named once"


@pytest.mark.parametrize("variant", ["american", "stubby"])
def test_unexpected_orientation_where_the_variant_gives_no_choice(variant: str) -> None:
    record, r, k, _ = find_action(variant, makes_sniff)
    record["rounds"][r]["actions"][k] += "/cross"
    if variant == "american":  # an American record with a suffix must say sniff/2
        record["format"] = "sniff/2"
        record["variant"] = "american"
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (
        r,
        k,
        "unexpected_orientation",
    )


def test_unexpected_orientation_on_a_move_that_makes_no_sniff() -> None:
    record, r, k, _ = find_action(
        "berndt", lambda m, mv: mv.is_placement and not makes_sniff(m, mv)
    )
    record["rounds"][r]["actions"][k] += "/inline"
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (
        r,
        k,
        "unexpected_orientation",
    )


def test_a_tile_joined_to_a_stub_end_is_stub_end() -> None:
    """Find a placement made while a stub is on the layout, and aim it at the stub's end."""

    def chance(m: Match, mv: Move) -> bool:
        if not (mv.is_placement and m.layout.stubs):
            return False
        stub = (m.layout.stubs & -m.layout.stubs).bit_length() - 1
        return mv.tile is not None and bool(set(_end_values(m, stub)) & {mv.tile.low, mv.tile.high})

    record, r, k, match = find_action("stubby", chance, seats=3)
    stub = (match.layout.stubs & -match.layout.stubs).bit_length() - 1
    move = Move.parse(record["rounds"][r]["actions"][k])
    side = "high" if match.layout.covered[stub] & 1 else "low"
    bad = Move.place(move.tile, stub, 0 if side == "low" else 1)  # type: ignore[arg-type]
    record["rounds"][r]["actions"][k] = bad.text
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (r, k, "stub_end")


def _end_values(m: Match, stub: int) -> list[int]:
    return [HIGH[stub] if m.layout.covered[stub] & 1 else LOW[stub]]


def test_points_claimed_under_the_wrong_rules_are_reported() -> None:
    """An inline Sniff scored as if crosswise (American) is a points problem at its action."""
    record, r, k, match = find_action(
        "berndt",
        lambda m, mv: (
            makes_sniff(m, mv)
            and mv.orientation is not None
            and m.layout.ends_after(mv)
            != m.layout.ends_after(mv.oriented(None).oriented(_other(mv)))
        ),
    )
    move = Move.parse(record["rounds"][r]["actions"][k])
    other = move.oriented(_other(move))
    wrong = match.layout.ends_after(other)
    claimed = wrong if wrong % 5 == 0 and wrong > 0 else wrong + 5 - wrong % 5
    right = record["rounds"][r]["claims"]["points"][k]
    assert claimed != right
    record["rounds"][r]["claims"]["points"][k] = claimed
    problems = audit_record(record, "x").to_json()["problems"]
    assert problems[0]["kind"] == "points"
    assert (problems[0]["round"], problems[0]["action"]) == (r, k)


def _other(move: Move) -> Orientation:
    return Orientation.CROSS if move.orientation is Orientation.INLINE else Orientation.INLINE


@pytest.mark.parametrize(
    "damage",
    [
        lambda rec: rec.update(variant="American"),
        lambda rec: rec.update(variant="all-fives"),
        lambda rec: rec.update(variant=7),
    ],
)
def test_an_unknown_variant_is_refused_never_read_as_american(
    damage: Callable[[dict[str, Any]], None],
) -> None:
    record = to_record(played("stubby"), "u")
    damage(record)
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (None, None, "unknown_variant")


def test_a_sniff2_record_without_a_variant_and_a_v1_record_with_one_are_malformed() -> None:
    record = to_record(played("berndt"), "a")
    del record["variant"]
    assert only_problem(record)["kind"] == "malformed"
    american = to_record(played("american"), "b")
    american["variant"] = "american"
    assert only_problem(american)["kind"] == "malformed"


def test_a_v1_record_replayed_as_sniff2_american_is_the_same_match() -> None:
    record = to_record(played("american", limit=None), "c")
    assert "variant" not in record
    again = copy.deepcopy(record)
    again["format"] = "sniff/2"
    again["variant"] = "american"
    assert audit_record(record, "x").ok
    assert audit_record(again, "x").ok


def test_a_match_ended_at_its_round_limit_audits_ok_and_a_wrong_winner_is_caught() -> None:
    for seed in range(50):
        m = played("stubby", 4, seed, limit=2)
        if m.history[-1].end is not None:
            break
    record = to_record(m, "lim")
    assert record["round_limit"] == 2
    assert audit_record(record, "x").ok
    wrong = copy.deepcopy(record)
    wrong["claims"]["winner"] = None if m.winner is not None else 0
    assert only_problem(wrong)["kind"] == "winner"
    unlimited = copy.deepcopy(record)
    del unlimited["round_limit"]
    assert not audit_record(unlimited, "x").ok

"""`sniff audit`: one record per defect kind (docs/records.md), each found at its place alone."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analysis.audit import audit_lines, audit_record
from analysis.bot_matches import bot_match
from analysis.cli.main import cli
from sniff import Match, Move, Phase, to_record


def make_record(seats: int = 2, seed: int = 1) -> dict[str, Any]:
    return to_record(bot_match(seats, seed, ["greedy", "random"]), f"m{seed}")


def find_action(
    seats: int, want: Callable[[Match, Move], bool]
) -> tuple[dict[str, Any], int, int, Match]:
    """A record, the (round, action) of its first action for which `want(state before, move)`,
    and that state before the action."""
    for seed in range(200):
        played = bot_match(seats, seed, ["greedy", "random"])
        match = Match(seats, target=played.target, auto_deal=False)
        for r, log in enumerate(played.history):
            match.deal(log.deal)
            for k, move in enumerate(log.actions):
                if want(match, move):
                    return to_record(played, f"m{seed}"), r, k, match
                match.apply(move)
    raise AssertionError("no such situation in 200 matches")


def only_problem(record: object) -> dict[str, Any]:
    result = audit_record(record, "line:1").to_json()
    assert result["ok"] is False
    assert len(result["problems"]) == 1, result["problems"]
    problem: dict[str, Any] = result["problems"][0]
    assert problem["reason"]
    return problem


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_records_written_by_the_engine_audit_ok(seats: int) -> None:
    for seed in range(5):
        assert audit_record(make_record(seats, seed), "x").ok


def test_not_json_line_is_malformed_and_the_rest_still_audited() -> None:
    good, other = json.dumps(make_record(2, 1)), json.dumps(make_record(2, 2))
    results = [r.to_json() for r in audit_lines(["{not json", good, "", other])]
    assert [r["id"] for r in results] == ["line:1", "m1", "m2"]
    assert results[0]["problems"] == [
        {
            "round": None,
            "action": None,
            "kind": "malformed",
            "reason": results[0]["problems"][0]["reason"],
        }
    ]
    assert results[1]["ok"]
    assert results[2]["ok"]


def test_record_without_id_is_named_by_its_line() -> None:
    record = make_record()
    del record["id"]
    results = list(audit_lines(["", json.dumps(record)]))
    assert results[0].id == "line:2"
    assert results[0].ok


def test_unknown_tile_is_malformed_at_its_round() -> None:
    record = make_record()
    record["rounds"][1]["hands"][0][0] = "7-7"
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (1, None, "malformed")


def test_unreadable_action_is_unparsable_at_its_action() -> None:
    record = make_record()
    record["rounds"][0]["actions"][3] = "1-4@banana"
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (0, 3, "unparsable_action")


@pytest.mark.parametrize(
    "damage",
    [
        lambda r: r["hands"][0].append(r["boneyard"].pop()),  # wrong hand size
        lambda r: r["boneyard"].__setitem__(0, r["hands"][1][0]),  # repeated, one missing
        lambda r: r["boneyard"].pop(),  # missing
        lambda r: r.__setitem__("leader", 5),  # no such seat
    ],
    ids=["hand_size", "repeated", "missing", "leader"],
)
def test_bad_deal_is_reported_at_its_round(damage: Callable[[dict[str, Any]], None]) -> None:
    record = make_record()
    damage(record["rounds"][2])
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (2, None, "bad_deal")


def test_tile_not_in_hand() -> None:
    record, r, k, _ = find_action(2, lambda m, mv: mv.kind.name == "PLACE")
    boneyard_tile = record["rounds"][r]["boneyard"][-1]
    action = record["rounds"][r]["actions"][k]
    record["rounds"][r]["actions"][k] = boneyard_tile + action[action.index("@") :]
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (r, k, "not_in_hand")


def test_placement_on_a_side_that_is_not_open() -> None:
    record = make_record()
    actions = record["rounds"][0]["actions"]
    k = next(i for i, a in enumerate(actions) if "@" in a)
    tile, _, _ = actions[k].partition("@")
    actions[k] = f"{tile}@6-6:branch_b" if tile != "6-6" else f"{tile}@5-5:branch_b"
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (0, k, "no_open_side")


def test_placement_whose_values_do_not_match() -> None:
    def wrong_side(match: Match, move: Move) -> bool:
        if move.kind.name != "PLACE":
            return False
        t = move.tile
        assert t is not None
        return any(o.value not in (t.low, t.high) for o in match.layout.target_sides())

    record, r, k, match = find_action(2, wrong_side)
    move = Move.parse(record["rounds"][r]["actions"][k])
    t = move.tile
    assert t is not None
    side = next(o for o in match.layout.target_sides() if o.value not in (t.low, t.high))
    record["rounds"][r]["actions"][k] = f"{t}@{side.tile}:{side.side}"
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (r, k, "value_mismatch")


def test_draw_while_holding_a_placeable_tile() -> None:
    record, r, k, _ = find_action(
        2, lambda m, mv: mv.kind.name == "PLACE" and m.drawn < 0 and m.boneyard_left > 0
    )
    record["rounds"][r]["actions"][k] = "draw"
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (r, k, "must_place")


def test_playing_another_tile_than_the_placeable_one_just_drawn() -> None:
    record, r, k, _ = find_action(2, lambda m, mv: m.drawn >= 0)
    record["rounds"][r]["actions"][k] = "draw"
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (r, k, "must_place_drawn")


def test_pass_while_a_draw_was_possible() -> None:
    record, r, k, _ = find_action(2, lambda m, mv: mv.kind.name == "DRAW")
    record["rounds"][r]["actions"][k] = "pass"
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (r, k, "cannot_pass")


def test_claimed_points_differ() -> None:
    record = make_record()
    points = record["rounds"][1]["claims"]["points"]
    k = next(i for i, p in enumerate(points) if p is not None)
    points[k] += 5
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (1, k, "points")
    assert f"claimed {points[k]} points" in problem["reason"]


def test_claimed_deduction_differs() -> None:
    record = make_record()
    record["rounds"][0]["claims"]["deductions"][1] += 5
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (0, None, "deduction")


def test_claimed_round_end_differs() -> None:
    record = make_record()
    claims = record["rounds"][0]["claims"]
    claims["end"] = "blocked" if claims["end"] == "domino" else "domino"
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (0, None, "end")


def test_claimed_round_scores_differ() -> None:
    record = make_record()
    record["rounds"][1]["claims"]["scores"][0] += 1
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (1, None, "round_score")


def test_claimed_winner_differs() -> None:
    record = make_record()
    record["claims"]["winner"] = 1 - record["claims"]["winner"]
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (None, None, "winner")


def test_either_partner_may_be_named_winner() -> None:
    record = make_record(4, 3)
    record["claims"]["winner"] = (record["claims"]["winner"] + 2) % 4
    assert audit_record(record, "x").ok


def test_claimed_final_scores_differ() -> None:
    record = make_record()
    record["claims"]["scores"][1] -= 5
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (None, None, "final_score")


def test_round_that_stops_before_its_end() -> None:
    record = make_record()
    rnd = record["rounds"][1]
    del rnd["actions"][-1]
    del rnd["claims"]["points"][-1]
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (1, None, "round_incomplete")


def test_play_after_the_match_was_won() -> None:
    record = make_record()
    last = record["rounds"][-1]
    last["actions"].append("draw")
    problem = only_problem(record)
    assert problem["round"] == len(record["rounds"]) - 1
    assert (problem["action"], problem["kind"]) == (len(last["actions"]) - 1, "after_win")


def test_round_after_the_match_was_won() -> None:
    record = make_record()
    extra = copy.deepcopy(record["rounds"][0])
    record["rounds"].append(extra)
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (
        len(record["rounds"]) - 1,
        None,
        "after_win",
    )


def test_round_end_claimed_for_the_winning_round() -> None:
    record = make_record()
    record["rounds"][-1]["claims"]["end"] = "domino"
    problem = only_problem(record)
    assert (problem["round"], problem["kind"]) == (len(record["rounds"]) - 1, "end")


def test_leader_other_than_the_finisher_is_a_bad_deal() -> None:
    record = make_record()
    r = next(i for i, rnd in enumerate(record["rounds"][:-1]) if rnd["claims"]["end"] == "domino")
    nxt = record["rounds"][r + 1]
    nxt["leader"] = 1 - nxt["leader"]
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (r + 1, None, "bad_deal")


# -- the command --------------------------------------------------------------


def write(tmp_path: Path, *records: object) -> Path:
    path = tmp_path / "m.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


@pytest.mark.slow
def test_cli_exit_0_when_every_match_is_ok(tmp_path: Path) -> None:
    path = write(tmp_path, make_record(2, 1), make_record(3, 2))
    result = CliRunner().invoke(cli, ["audit", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["m1: ok", "m2: ok"]


@pytest.mark.slow
def test_cli_jsonl_output_and_exit_1_on_problems(tmp_path: Path) -> None:
    bad = make_record(2, 1)
    bad["rounds"][0]["claims"]["deductions"][0] += 5
    path = write(tmp_path, "oops", bad, make_record(2, 2))
    result = CliRunner().invoke(cli, ["audit", "--format", "jsonl", str(path)])
    assert result.exit_code == 1
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [(x["id"], x["ok"]) for x in lines] == [("line:1", False), ("m1", False), ("m2", True)]
    assert set(lines[1]) == {"id", "ok", "problems"}
    assert set(lines[1]["problems"][0]) == {"round", "action", "kind", "reason"}
    assert lines[1]["problems"][0]["kind"] == "deduction"


def test_cli_exit_2_when_misused(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["audit"]).exit_code == 2
    assert runner.invoke(cli, ["audit", str(tmp_path / "missing.jsonl")]).exit_code == 2
    assert runner.invoke(cli, ["audit", "--format", "xml", "x"]).exit_code == 2


def test_record_command_writes_records_that_audit_ok(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    runner = CliRunner()
    result = runner.invoke(
        cli, ["record", "--seats", "4", "--matches", "3", "--bots", "greedy,random", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert len(lines) == 3
    for line in lines:
        assert json.loads(line)["format"] == "american-sniff/1"
    assert runner.invoke(cli, ["audit", str(out)]).exit_code == 0


def test_audit_reads_standard_input() -> None:
    data = json.dumps(make_record(2, 4)) + "\n"
    result = CliRunner().invoke(cli, ["audit", "-"], input=data)
    assert result.exit_code == 0
    assert result.output == "m4: ok\n"


def test_won_match_record_has_no_end_claim_in_its_last_round() -> None:
    record = make_record()
    last = record["rounds"][-1]["claims"]
    assert "end" not in last
    assert "deductions" not in last
    match = bot_match(2, 1, ["greedy", "random"])
    assert match.phase is Phase.OVER


def test_playing_a_tile_from_another_seats_hand_is_play_out_of_turn() -> None:
    record, r, k, match = find_action(2, lambda m, mv: mv.kind.name == "PLACE")
    actions = record["rounds"][r]["actions"]
    # A tile the other seat still holds, placed on the same side as the recorded move.
    other = 1 - match.turn
    tile = match.hand(other)[0]
    actions[k] = f"{tile}{actions[k][actions[k].index('@') :]}"
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (r, k, "not_in_hand")
    assert "out of turn" in problem["reason"]


def test_naming_the_mirror_branch_while_branch_a_is_open_is_not_canonical() -> None:
    def branch_a_play(match: Match, move: Move) -> bool:
        return move.side is not None and move.side.name == "BRANCH_A"

    record, r, k, _ = find_action(2, branch_a_play)
    actions = record["rounds"][r]["actions"]
    actions[k] = actions[k].replace("branch_a", "branch_b")
    problem = only_problem(record)
    assert (problem["round"], problem["action"], problem["kind"]) == (r, k, "not_canonical")

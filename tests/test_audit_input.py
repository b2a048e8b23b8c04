"""`sniff audit` on files as they come: bad bytes, unfinished matches, repeated ids, bad paths.

Each bad line is reported under its `line:N` name and the rest of the file
is still audited (docs/records.md); a record that replays cleanly but is not a
finished match, or reuses an id, is never plain `ok`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.audit import audit_lines, audit_record
from analysis.bot_matches import bot_match
from analysis.cli.main import cli
from sniff import Match, Phase, to_record
from tests.helpers import example_count


def record(seed: int, seats: int = 2, record_id: str | int | None = None) -> dict[str, Any]:
    rec = to_record(bot_match(seats, seed, ["greedy", "random"]), f"m{seed}")
    if record_id is not None:
        rec["id"] = record_id
    return rec


def line(rec: object) -> bytes:
    return json.dumps(rec).encode() + b"\n"


def audit_file(tmp_path: Path, data: bytes, *args: str) -> tuple[int, list[dict[str, Any]]]:
    path = tmp_path / "m.jsonl"
    path.write_bytes(data)
    result = CliRunner().invoke(cli, ["audit", "--format", "jsonl", *args, str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, [json.loads(x) for x in result.stdout.splitlines()]


def kinds(result: dict[str, Any]) -> list[str]:
    return [p["kind"] for p in result["problems"]]


def only(result: dict[str, Any], kind: str) -> dict[str, Any]:
    assert kinds(result) == [kind], result
    problem: dict[str, Any] = result["problems"][0]
    return problem


def played_prefix(seats: int, seed: int, actions: int) -> Match:
    """A match of random legal moves stopped after `actions` actions (or at its end)."""
    match = Match(seats, seed=seed)
    rng = random.Random(seed)
    for _ in range(actions):
        if match.phase is Phase.OVER:
            break
        if match.phase is Phase.AWAITING_DEAL:
            match.deal()
        match.apply(rng.choice(match.legal_moves()))
    return match


# -- bytes that are not JSON Lines ---------------------------------------------------------


def test_a_binary_file_is_reported_line_by_line_and_the_records_in_it_still_audited(
    tmp_path: Path,
) -> None:
    junk = random.Random(6).randbytes(4000).replace(b"\n", b"\n\x00")
    data = junk + b"\n" + line(record(1)) + junk + b"\n" + line(record(2))
    status, results = audit_file(tmp_path, data)
    assert status == 1
    good = [r for r in results if r["ok"]]
    assert [r["id"] for r in good] == ["m1", "m2"]
    for r in results:
        if not r["ok"]:
            assert r["id"].startswith("line:")
            problem = only(r, "malformed")
            assert (problem["round"], problem["action"]) == (None, None)
    numbers = [int(r["id"][5:]) for r in results if not r["ok"]]
    assert numbers == sorted(numbers)
    assert len(numbers) >= 2


@pytest.mark.slow
def test_a_byte_that_is_not_utf8_mid_file_spoils_only_its_line(tmp_path: Path) -> None:
    bad = line(record(2)).replace(b'"m2"', b'"m\xff2"')
    status, results = audit_file(tmp_path, line(record(1)) + bad + line(record(3)))
    assert status == 1
    assert [r["id"] for r in results] == ["m1", "line:2", "m3"]
    assert results[0]["ok"]
    assert results[2]["ok"]
    problem = only(results[1], "malformed")
    assert "not UTF-8" in problem["reason"]
    assert "0xff" in problem["reason"]


@pytest.mark.slow
def test_a_byte_order_mark_at_the_start_is_reported_and_the_rest_audited(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + line(record(1)) + line(record(2))
    status, results = audit_file(tmp_path, data)
    assert status == 1
    assert [r["id"] for r in results] == ["line:1", "m2"]
    assert "byte order mark" in only(results[0], "malformed")["reason"]
    assert results[1]["ok"]


def test_a_byte_order_mark_given_as_text_is_reported_too() -> None:
    results = list(audit_lines(["\ufeff" + json.dumps(record(1))]))
    assert results[0].id == "line:1"
    assert [p.kind for p in results[0].problems] == ["malformed"]


def test_json_nested_too_deep_or_a_number_too_long_is_malformed_not_a_crash() -> None:
    texts = ["[" * 100_000, '{"seats": ' + "9" * 5000 + "}", "\x00\x01", "{\x1c}"]
    results = list(audit_lines([*texts, json.dumps(record(1))]))
    assert [r.id for r in results] == ["line:1", "line:2", "line:3", "line:4", "m1"]
    for r in results[:4]:
        assert [p.kind for p in r.problems] == ["malformed"], r
    assert results[4].ok


def test_crlf_line_ends_and_blank_lines_are_fine(tmp_path: Path) -> None:
    data = line(record(1)).replace(b"\n", b"\r\n") + b"\r\n  \n" + line(record(2))
    status, results = audit_file(tmp_path, data)
    assert status == 0
    assert [r["id"] for r in results] == ["m1", "m2"]


# -- records that replay cleanly but are not finished matches ------------------------------


def test_a_record_with_no_rounds_is_an_unfinished_match() -> None:
    rec = {"format": "american-sniff/1", "id": "empty", "seats": 2, "rounds": []}
    result = audit_record(rec, "line:1").to_json()
    problem = only(result, "match_unfinished")
    assert (problem["round"], problem["action"]) == (None, None)
    assert "no rounds" in problem["reason"]
    assert audit_record(rec, "line:1", allow_unfinished=True).ok


def test_a_match_stopped_after_a_complete_round_with_no_winner_is_unfinished() -> None:
    full = played_prefix(2, 4, 10_000)
    assert len(full.history) > 2
    partial = played_prefix(2, 4, sum(len(log.actions) for log in full.history[:2]))
    assert partial.phase is Phase.AWAITING_DEAL
    rec = to_record(partial, "half")
    assert "winner" not in rec["claims"]
    result = audit_record(rec, "line:1").to_json()
    problem = only(result, "match_unfinished")
    assert (problem["round"], problem["action"]) == (None, None)
    assert "2 complete rounds" in problem["reason"]
    assert audit_record(rec, "line:1", allow_unfinished=True).ok
    del rec["claims"]
    assert kinds(audit_record(rec, "line:1").to_json()) == ["match_unfinished"]


def test_a_claimed_winner_of_an_unfinished_match_is_wrong_even_when_unfinished_is_allowed() -> None:
    full = played_prefix(2, 4, 10_000)
    rec = to_record(played_prefix(2, 4, len(full.history[0].actions)), "one-round")
    rec["claims"]["winner"] = 0
    assert kinds(audit_record(rec, "x", allow_unfinished=True).to_json()) == ["winner"]
    assert kinds(audit_record(rec, "x").to_json()) == ["match_unfinished", "winner"]


@settings(
    max_examples=example_count(40), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    seats=st.sampled_from([2, 3, 4]),
    seed=st.integers(0, 10_000),
    actions=st.integers(0, 400),
)
def test_every_prefix_of_a_match_audits_ok_only_when_unfinished_matches_are_allowed(
    seats: int, seed: int, actions: int
) -> None:
    match = played_prefix(seats, seed, actions)
    rec = to_record(match, "live")
    assert audit_record(rec, "x", allow_unfinished=True).ok
    strict = audit_record(rec, "x")
    if match.phase is Phase.OVER:
        assert strict.ok
    elif match.phase is Phase.PLAYING:
        assert [p.kind for p in strict.problems] == ["round_incomplete"]
    else:
        assert [p.kind for p in strict.problems] == ["match_unfinished"]


def test_claims_of_a_round_still_in_play_are_checked_when_unfinished_is_allowed() -> None:
    rec = to_record(played_prefix(2, 9, 20), "live")
    last = rec["rounds"][-1]
    last["claims"]["end"] = "domino"
    last["claims"]["deductions"] = [0, 0]
    result = audit_record(rec, "x", allow_unfinished=True).to_json()
    assert kinds(result) == ["end", "deduction"]
    assert all(p["round"] == len(rec["rounds"]) - 1 for p in result["problems"])


# -- ids -----------------------------------------------------------------------------------


def test_a_repeated_id_is_reported_on_every_later_record() -> None:
    texts = [json.dumps(record(1)), json.dumps(record(2, record_id="m1")), json.dumps(record(3))]
    texts.append(json.dumps(record(4, record_id="m1")))
    results = [r.to_json() for r in audit_lines(texts)]
    assert [r["id"] for r in results] == ["m1", "m1", "m3", "m1"]
    assert results[0]["ok"]
    assert results[2]["ok"]
    for r in (results[1], results[3]):
        problem = only(r, "duplicate_id")
        assert (problem["round"], problem["action"]) == (None, None)
        assert problem["reason"] == "the id 'm1' was already used on line 1"


def test_a_repeated_id_is_reported_beside_the_records_own_problems_first() -> None:
    second = record(2, record_id="m1")
    second["claims"]["winner"] = 1 - second["claims"]["winner"]
    results = [r.to_json() for r in audit_lines([json.dumps(record(1)), json.dumps(second)])]
    assert kinds(results[1]) == ["duplicate_id", "winner"]


def test_a_number_id_and_the_same_id_as_text_are_one_id() -> None:
    texts = [json.dumps(record(1, record_id=7)), json.dumps(record(2, record_id="7"))]
    results = list(audit_lines(texts))
    assert [p.kind for p in results[1].problems] == ["duplicate_id"]


def test_records_without_ids_never_clash() -> None:
    a, b = record(1), record(2)
    del a["id"], b["id"]
    assert all(r.ok for r in audit_lines([json.dumps(a), json.dumps(b)]))


def test_ids_are_unique_across_every_file_of_one_audit(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(line(record(1)))
    second.write_bytes(line(record(2)) + line(record(3, record_id="m1")))
    result = CliRunner().invoke(cli, ["audit", "--format", "jsonl", str(first), str(second)])
    assert result.exit_code == 1
    results = [json.loads(x) for x in result.stdout.splitlines()]
    assert [r["ok"] for r in results] == [True, True, False]
    reason = only(results[2], "duplicate_id")["reason"]
    assert reason == f"the id 'm1' was already used on line 1 of {first}"


# -- the command's exit statuses and bad paths ---------------------------------------------


def test_exit_status_0_ok_1_problems_and_allow_unfinished(tmp_path: Path) -> None:
    live = to_record(played_prefix(3, 5, 50), "live")
    assert audit_file(tmp_path, line(record(1)))[0] == 0
    status, results = audit_file(tmp_path, line(record(1)) + line(live))
    assert status == 1
    assert kinds(results[1]) == ["round_incomplete"]
    status, results = audit_file(tmp_path, line(record(1)) + line(live), "--allow-unfinished")
    assert status == 0
    assert [r["ok"] for r in results] == [True, True]


def test_a_missing_file_or_a_directory_is_one_line_and_exit_2(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_bytes(line(record(1)))
    for bad in (tmp_path / "missing.jsonl", tmp_path):
        result = CliRunner().invoke(cli, ["audit", str(good), str(bad)])
        assert result.exit_code == 2
        assert result.stdout == "", "misuse is found before any file is audited"
        assert result.stderr.startswith(f"Error: cannot read {bad}: ")
        assert len(result.stderr.splitlines()) == 1


# -- whatever the JSON, the audit reports and never raises ---------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children),
    max_leaves=10,
)


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    places = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            places += _places(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            places += _places(v, (*path, i))
    return places


BASE = record(3)
PLACES = _places(BASE)


@settings(max_examples=example_count(300), deadline=None)
@given(place=st.sampled_from(PLACES[1:]), value=json_values)
def test_any_value_anywhere_in_a_record_is_reported_never_raised(
    place: tuple[Any, ...], value: Any
) -> None:
    rec = json.loads(json.dumps(BASE))
    holder = rec
    for key in place[:-1]:
        holder = holder[key]
    holder[place[-1]] = value
    result = audit_record(rec, "line:1")
    for problem in result.problems:
        assert problem.kind
        assert problem.reason

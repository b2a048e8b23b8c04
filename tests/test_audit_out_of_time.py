"""A record of a served match with a time control (docs/records.md): a forfeit ends the match
where the moves stop, a forfeit the moves do not bear out is reported and the moves are
audited as ever, and each `timeouts` entry must name the seat that acted there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analysis.audit import audit_record
from analysis.cli.main import cli
from service.storage import open_readonly

DOCS = Path(__file__).resolve().parents[1] / "docs" / "records.md"


def example() -> dict[str, Any]:
    """The example record of docs/records.md: seat 0 wins in round 1, on its lead."""
    record: dict[str, Any] = json.loads(DOCS.read_text().split("```json\n")[1].split("```")[0])
    return record


def forfeited_at_round_1(winner: int) -> dict[str, Any]:
    """The example cut where round 1 begins (seat 0 to lead), as forfeited there by seat 0."""
    record = example()
    record["rounds"][1]["actions"] = []
    record["rounds"][1]["claims"] = {"points": [], "scores": [20, 5]}
    record["forfeit"] = {"seat": 0, "round": 1, "action": 0}
    record["claims"] = {"winner": winner, "scores": [20, 5]}
    return record


def problems(record: dict[str, Any]) -> list[tuple[int | None, int | None, str]]:
    return [(p.round, p.action, p.kind) for p in audit_record(record, "r").problems]


def test_a_forfeit_where_the_moves_stop_ends_the_match_for_the_other_side() -> None:
    assert problems(forfeited_at_round_1(winner=1)) == []


def test_a_forfeited_match_claiming_the_forfeiting_side_won_is_reported() -> None:
    assert problems(forfeited_at_round_1(winner=0)) == [(None, None, "winner")]


def test_without_its_forfeit_the_cut_record_is_an_incomplete_round() -> None:
    record = forfeited_at_round_1(winner=1)
    del record["forfeit"]
    assert problems(record) == [(1, None, "round_incomplete")]


def test_a_forfeit_the_moves_go_past_is_reported_and_the_moves_are_audited_as_ever() -> None:
    record = example()
    record["forfeit"] = {"seat": 1, "round": 0, "action": 3}
    assert problems(record) == [(0, 3, "forfeit")]
    record["rounds"][0]["claims"]["points"][2] = 10  # a wrong claim on the way is still found
    assert problems(record) == [(0, 2, "points"), (0, 3, "forfeit")]


def test_a_forfeit_by_a_seat_not_to_play_does_not_end_the_match() -> None:
    record = forfeited_at_round_1(winner=0)
    record["forfeit"]["seat"] = 1  # seat 0 leads round 1
    assert problems(record) == [(1, None, "round_incomplete")]


@pytest.mark.parametrize(("seat", "found"), [(0, []), (1, [(0, 0, "timeout")])])
def test_a_timeout_must_name_the_seat_that_acted_there(
    seat: int, found: list[tuple[int, int, str]]
) -> None:
    record = example()
    record["timeouts"] = [{"round": 0, "action": 0, "seat": seat, "policy": "greedy"}]
    assert problems(record) == found


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("forfeit", {"seat": 0, "round": 1}),
        ("forfeit", [0, 1, 0]),
        ("timeouts", {"round": 0}),
        ("timeouts", [{"round": 0, "action": -1, "seat": 0}]),
    ],
)
def test_a_forfeit_or_timeouts_of_the_wrong_shape_is_malformed(field: str, value: object) -> None:
    record = example()
    record[field] = value
    assert problems(record) == [(None, None, "malformed")]


@pytest.mark.slow
def test_an_imported_forfeit_is_logged_as_the_service_logs_it_and_audits_clean(
    tmp_path: Path,
) -> None:
    records = tmp_path / "forfeit.jsonl"
    records.write_text(json.dumps(forfeited_at_round_1(winner=1)) + "\n")
    db = tmp_path / "log.duckdb"
    imported = CliRunner().invoke(cli, ["import", "--db", str(db), str(records)])
    assert imported.exit_code == 0, imported.output
    with open_readonly(db) as reader:
        ends = reader.query(
            "SELECT detail ->> '$.forfeit' AS forfeit, seat FROM events_all "
            "WHERE kind = 'match_ended'"
        ).to_pylist()
        ended_by = reader.query("SELECT ended_by FROM match_results_all").to_pylist()
    assert [(json.loads(e["forfeit"]), e["seat"]) for e in ends] == [
        ({"seat": 0, "round": 1, "action": 0}, 1)
    ]
    assert ended_by == [{"ended_by": "forfeit"}]
    audited = CliRunner().invoke(cli, ["audit", "--db", str(db)])
    assert audited.exit_code == 0, audited.output
    exported = CliRunner().invoke(cli, ["export", "--db", str(db)])
    assert json.loads(exported.output)["forfeit"] == {"seat": 0, "round": 1, "action": 0}

"""The plain views hide a match's seed, deals and drawn tiles while it is in play.

The `*_all` views show everything to whoever names them, and the service's
own reads (replay after a restart) see everything too. Real DuckDB files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.storage import EventLog, LogEvent, ReadAccess, open_readonly
from tests.storage_helpers import ended

SEED = 987_654_321_987
HANDS = [["6-6", "5-5"], ["4-4", "3-3"]]
BONEYARD = ["2-2", "1-1", "0-0"]
SECRET_TEXTS = [str(SEED), "6-6", "4-4", "2-2", "1-1", "0-0"]
"""Text that would appear in a public row only if a secret leaked."""


def play(match_id: str, finish: bool) -> list[LogEvent]:
    events = [
        LogEvent.match_created(
            match_id, seats=2, target=250, seed=SEED, rules_version="1", note="kept"
        ),
        LogEvent.round_dealt(
            match_id, 1, round=0, hands=HANDS, boneyard=BONEYARD, leader=0, leader_choice="lot"
        ),
        LogEvent.action(match_id, 2, round=0, action_index=0, seat=0, move="draw", drawn="2-2"),
        LogEvent.action(match_id, 3, round=0, action_index=1, seat=1, move="pass"),
    ]
    if finish:
        events.append(ended(match_id, 4))
    return events


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("secrets") / "events.duckdb"
    with EventLog(path) as log:
        log.append(play("live", finish=False))
        log.append(play("over", finish=True))
    return path


@pytest.fixture(params=["live", "offline"])
def reads(request: pytest.FixtureRequest, db: Path) -> Iterator[ReadAccess]:
    opened: ReadAccess = EventLog(db) if request.param == "live" else open_readonly(db)
    with opened:
        yield opened


def rows(reads: ReadAccess, sql: str, match_id: str) -> list[dict[str, object]]:
    found: list[dict[str, object]] = reads.query(sql, [match_id]).to_pylist()
    return found


PUBLIC = ["events", "matches", "deals", "actions", "round_ends", "match_ends"]


@pytest.mark.parametrize("view", PUBLIC)
def test_no_public_view_shows_a_secret_of_a_match_in_play(reads: ReadAccess, view: str) -> None:
    shown = json.dumps(rows(reads, f"SELECT * FROM {view} WHERE match_id = ?", "live"), default=str)
    leaked = [text for text in SECRET_TEXTS if text in shown]
    assert leaked == []


def test_the_public_views_keep_the_rows_and_what_is_not_secret(reads: ReadAccess) -> None:
    (match,) = rows(reads, "SELECT * FROM matches WHERE match_id = ?", "live")
    assert (match["seats"], match["target"], match["seed"], match["finished"]) == (
        2,
        250,
        None,
        False,
    )
    detail = json.loads(str(match["detail"]))
    assert "seed" not in detail
    assert (detail["target"], detail["note"]) == (250, "kept")
    (deal,) = rows(reads, "SELECT * FROM deals WHERE match_id = ?", "live")
    assert (deal["hands"], deal["boneyard"], deal["leader"]) == (None, None, 0)
    moves = rows(reads, "SELECT move, drawn FROM actions WHERE match_id = ? ORDER BY seq", "live")
    assert moves == [{"move": "draw", "drawn": None}, {"move": "pass", "drawn": None}]
    events = rows(reads, "SELECT kind, drawn, detail FROM events WHERE match_id = ?", "live")
    assert [e["kind"] for e in events] == ["match_created", "round_dealt", "action", "action"]
    dealt = json.loads(str(events[1]["detail"]))
    assert dealt == {"leader": 0, "leader_choice": "lot"}


def test_once_a_match_is_over_the_public_views_show_everything(reads: ReadAccess) -> None:
    (match,) = rows(reads, "SELECT seed, finished, detail FROM matches WHERE match_id = ?", "over")
    assert (match["seed"], match["finished"]) == (SEED, True)
    assert json.loads(str(match["detail"]))["seed"] == SEED
    (deal,) = rows(reads, "SELECT hands, boneyard FROM deals WHERE match_id = ?", "over")
    assert (deal["hands"], deal["boneyard"]) == (HANDS, BONEYARD)
    drawn = rows(reads, "SELECT drawn FROM actions WHERE match_id = ? AND seq = 2", "over")
    assert drawn == [{"drawn": "2-2"}]
    for view in ("events", "matches", "deals", "actions"):
        public = rows(reads, f"SELECT * FROM {view} WHERE match_id = ? ORDER BY ALL", "over")
        everything = rows(
            reads, f"SELECT * FROM {view}_all WHERE match_id = ? ORDER BY ALL", "over"
        )
        assert public == everything


def test_the_all_views_show_the_secrets_to_whoever_names_them(reads: ReadAccess) -> None:
    (match,) = rows(reads, "SELECT seed FROM matches_all WHERE match_id = ?", "live")
    assert match["seed"] == SEED
    (deal,) = rows(reads, "SELECT hands, boneyard FROM deals_all WHERE match_id = ?", "live")
    assert (deal["hands"], deal["boneyard"]) == (HANDS, BONEYARD)
    drawn = rows(reads, "SELECT drawn FROM actions_all WHERE match_id = ? AND seq = 2", "live")
    assert drawn == [{"drawn": "2-2"}]
    (settings,) = rows(reads, "SELECT seed FROM match_settings_all WHERE match_id = ?", "live")
    assert settings["seed"] == SEED


def test_the_service_replay_reads_every_secret(reads: ReadAccess) -> None:
    assert reads.events_for("live") == play("live", finish=False)
    replay = dict(reads.events_by_match(unfinished_only=True))
    assert replay == {"live": play("live", finish=False)}

"""In-process match logs (service.match_recorder) are the events the service logs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from analysis.bot_matches import bot_match_events
from service.match_recorder import EventRecorder
from service.storage import open_readonly
from service.storage.chain import MatchSecrets
from sniff import Phase
from tests.service_helpers import create, play_to_end, serving


@pytest.mark.slow
def test_recorder_writes_what_the_service_logs_for_the_same_seed_and_moves(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.duckdb"
    with serving(db) as service:
        created = create(service.stub, 3, seed=77)
        play_to_end(service.stub, created, random.Random(5))
    with open_readonly(db) as reader:
        logged = reader.events_for(created.match_id)
    first = logged[0]
    assert first.detail is not None
    recorder = EventRecorder(
        created.match_id,
        3,
        seed=77,
        secrets=MatchSecrets.from_detail(first.detail),
        token_sha256=first.detail["token_sha256"],
    )
    for event in logged:
        if event.kind == "round_dealt" and event.round:
            recorder.deal()
        elif event.kind == "action":
            assert event.move is not None
            recorder.apply(event.move)
    assert recorder.match.phase is Phase.OVER
    assert logged == recorder.events
    assert [e.hash for e in logged] == [e.hash for e in recorder.events]  # the same chain
    assert all(e.hash is not None for e in logged)


def test_bot_match_events_stop_where_asked_and_number_every_event() -> None:
    events = bot_match_events("m", 4, 3, max_actions=25)
    assert [e.seq for e in events] == list(range(len(events)))
    assert sum(1 for e in events if e.kind == "action") == 25
    assert all(e.kind != "match_ended" for e in events)
    finished = bot_match_events("m", 2, 3)
    assert finished[-1].kind == "match_ended"

"""Every example query of docs/schema.md runs, and answers something, on a real log; the
page describes every column of every view."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analysis.bot_matches import bot_match_events
from service.storage import EventLog, open_readonly
from sniff import to_record
from tests.replay_helpers import sample_log

DOC = Path(__file__).resolve().parents[1] / "docs" / "schema.md"
VIEWS = (
    "events",
    "matches",
    "deals",
    "actions",
    "round_ends",
    "rounds",
    "match_seats",
    "match_facts",
    "round_facts",
    "sniff_decisions",
)


def sql_blocks() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Served matches of each size, a stubby one at its round limit, one in play, an import."""
    path = sample_log(tmp_path_factory.mktemp("doc") / "log.duckdb")
    from analysis.bot_matches import recorded_bot_match
    from analysis.importer import record_rows
    from service.storage.events import rows_to_arrow

    match = recorded_bot_match("x", 3, 5, ("greedy",)).match
    record = to_record(match, "club-1", ["ann", "bo", "cy"])
    rows = record_rows(record)
    with EventLog(path) as writer:
        writer.append(bot_match_events("stubby", 4, 6, variant="stubby", round_limit=2))
        writer.import_matches(rows_to_arrow(rows), verify=True)
    return path


def test_the_page_has_example_queries() -> None:
    assert len(sql_blocks()) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(sql_blocks())))
def test_every_example_query_runs_and_answers(log: Path, index: int) -> None:
    sql = sql_blocks()[index]
    params: list[object] = []
    if "$1" in sql:
        params.append("two-seats")
    if "$2" in sql:
        params.append(1)
    with open_readonly(log) as reader:
        table = reader.query(sql, params or None)
    assert table.num_columns > 0
    assert table.num_rows > 0, sql


@pytest.mark.slow
@pytest.mark.parametrize("name", VIEWS)
def test_the_page_names_every_column_of_each_view(log: Path, name: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    with open_readonly(log) as reader:
        columns = reader.query(f"DESCRIBE {name}").column("column_name").to_pylist()
    missing = [c for c in columns if f"`{c}`" not in text]
    assert not missing, f"{name}: {missing}"

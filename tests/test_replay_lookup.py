"""Finding one match must not need a scan of the whole log.

The replay's query reads the events table with the single filter
match_id = ?, which DuckDB answers from the log's index on events_all
(match_id) (schema version 3 has it). A second filter on the scan (the
views' kind = '...') would turn the index off: this test keeps the query's
shape honest.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from analysis.bot_matches import bot_match_events
from analysis.replay.source import load_replay
from analysis.sqlfiles import named_queries
from tests.replay_helpers import write_log

pytestmark = pytest.mark.slow


def test_the_match_lookup_is_an_index_scan_on_the_logs_match_id_index(
    tmp_path: Path,
) -> None:
    db = write_log(
        tmp_path / "log.duckdb",
        [bot_match_events(f"m{i:02d}", 2 + i % 3, i) for i in range(12)],
    )
    con = duckdb.connect(str(db), read_only=True)
    sql = named_queries("analysis.replay", "queries.sql")["match_events"]
    plan = con.execute(f"EXPLAIN ANALYZE {sql}", ["m07", True]).fetchall()[0][1]
    rows = con.execute(sql, ["m07", True]).fetchall()
    con.close()
    assert "Type: Index Scan" in plan, plan
    assert "Sequential Scan" not in plan, plan
    assert len(rows) == len(bot_match_events("m07", 3, 7))
    assert len(load_replay(db, "m07").steps) > 0  # the storage package reads such a file too

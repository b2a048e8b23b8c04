"""Match ids bound as joined parameters: every id once, in order, whatever the count."""

from __future__ import annotations

import duckdb

from analysis.sqlfiles import ID_SEPARATOR, IDS_PER_QUERY, id_lists


def test_id_lists_split_back_to_every_id_in_order() -> None:
    ids = [f"m{i:04d}" for i in range(2 * IDS_PER_QUERY + 1)]
    parts = list(id_lists(ids))
    assert len(parts) == 3
    assert [i for part in parts for i in part.split(ID_SEPARATOR)] == ids


def test_id_lists_of_no_ids_is_no_statement() -> None:
    assert list(id_lists([])) == []


def test_sql_splits_a_joined_parameter_as_the_queries_do() -> None:
    ids = ["a", "b,c", "d e"]
    (part,) = id_lists(ids)
    row = duckdb.connect().execute("SELECT string_split($1, chr(31))", [part]).fetchone()
    assert row is not None
    assert row[0] == ids

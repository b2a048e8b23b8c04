"""Read-only queries: what is refused, what is allowed, and what a reader sees."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from service.storage import (
    EventLog,
    LogEvent,
    QueryError,
    ReadAccess,
    ReadOnlyViolation,
    open_readonly,
)
from service.storage.access import converts_like_arrow


def created(match_id: str) -> LogEvent:
    return LogEvent.match_created(match_id, seats=2, target=250, seed=1, rules_version="1")


def passed(match_id: str, seq: int) -> LogEvent:
    return LogEvent.action(match_id, seq, round=0, action_index=seq - 1, seat=0, move="pass")


def seed(path: Path) -> Path:
    with EventLog(path) as log:
        log.append([created("a"), passed("a", 1), passed("a", 2)])
        log.append([created("b")])
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return seed(tmp_path / "events.duckdb")


@pytest.fixture(scope="module", params=["live", "offline"])
def reads(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReadAccess]:
    """The same rules hold through the service's log and an offline reader.

    One log per module: every test here only reads, and checks it changed nothing.
    """
    path = seed(tmp_path_factory.mktemp(request.param) / "events.duckdb")
    opened: ReadAccess = EventLog(path) if request.param == "live" else open_readonly(path)
    with opened:
        yield opened


REFUSED = [
    "INSERT INTO events (match_id, seq, kind) VALUES ('x', 0, 'match_created')",
    "DELETE FROM events",
    "UPDATE events SET seat = 1",
    "CREATE TABLE t (x INTEGER)",
    "CREATE VIEW v AS SELECT 1",
    "DROP VIEW matches",
    "ALTER TABLE events ADD COLUMN x INTEGER",
    "ATTACH 'other.duckdb' AS other",
    "DETACH other",
    "COPY events TO 'out.csv'",
    "COPY (SELECT 1) TO 'out.csv'",
    "EXPORT DATABASE 'dump'",
    "INSTALL httpfs",
    "LOAD json",
    "SET threads = 1",
    "PRAGMA database_list",
    "CALL pragma_version()",
    "CHECKPOINT",
    "SELECT * FROM checkpoint()",
    "VACUUM",
    "BEGIN TRANSACTION",
    "SELECT 1; SELECT 2",
    "SELECT 1; DELETE FROM events",
    "EXPLAIN ANALYZE DELETE FROM events",
    "EXPLAIN (FORMAT json) DELETE FROM events",
    # Parses as a SELECT; the READ ONLY transaction stops it.
    "WITH gone AS (DELETE FROM events_all RETURNING *) SELECT count(*) FROM gone",
    # External access is off: no file is read, whatever the statement type.
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_text('/etc/hostname')",
]


@pytest.mark.parametrize("sql", REFUSED)
def test_anything_but_a_read_is_refused(reads: ReadAccess, sql: str) -> None:
    with pytest.raises(ReadOnlyViolation):
        reads.query(sql)
    assert reads.count() == 4


def test_the_refusal_happens_before_the_query_runs(reads: ReadAccess) -> None:
    with pytest.raises(ReadOnlyViolation):
        reads.query_batches("DELETE FROM events")  # refused at the call, not at iteration


def test_a_select_with_bound_parameters_runs(reads: ReadAccess) -> None:
    by_position = reads.query("SELECT seq FROM events WHERE match_id = ? ORDER BY seq", ["a"])
    assert by_position.column("seq").to_pylist() == [0, 1, 2]
    by_name = reads.query(
        "SELECT count(*) AS n FROM events WHERE match_id = $m AND seq >= $s", {"m": "a", "s": 1}
    )
    assert by_name.column("n").to_pylist() == [2]
    # A value is bound, never pasted into the SQL: quotes are just characters.
    tricky = reads.query("SELECT count(*) AS n FROM events WHERE match_id = ?", ["a' OR 1=1 --"])
    assert tricky.column("n").to_pylist() == [0]


@pytest.mark.parametrize(
    "sql",
    [
        "WITH m AS (SELECT * FROM matches) SELECT count(*) FROM m",
        "FROM actions SELECT move",
        "DESCRIBE events",
        "SHOW TABLES",
        "SUMMARIZE events",
        "EXPLAIN SELECT * FROM events",
        "EXPLAIN ANALYZE SELECT count(*) FROM events",
        "/* a comment first */ SELECT 1;",
        "SELECT 'checkpoint' AS word",
    ],
)
def test_read_statements_are_allowed(reads: ReadAccess, sql: str) -> None:
    assert reads.query(sql).num_rows >= 1


@pytest.mark.parametrize("sql", REFUSED)
def test_rows_without_arrow_are_refused_by_the_same_rules(reads: ReadAccess, sql: str) -> None:
    with pytest.raises(ReadOnlyViolation):
        reads.query_rows(sql)
    assert reads.count() == 4


def test_rows_without_arrow_hold_what_the_arrow_result_holds(reads: ReadAccess) -> None:
    sql = (
        "SELECT match_id, seats, created_at, finished, scores, [seq, seq + 1] AS pair"
        " FROM matches JOIN events USING (match_id) WHERE seq >= ? ORDER BY match_id, seq"
    )
    columns, rows = reads.query_rows(sql, [0])
    assert [dict(zip(columns, row, strict=True)) for row in rows] == reads.query(
        sql, [0]
    ).to_pylist()
    assert len(rows) == 4
    assert reads.query_rows("SELECT 1 AS one WHERE false") == (["one"], [])


# One column of each kind of type: DuckDB's and Arrow's conversions agree on the first
# ones, and `like_arrow` reads the others through Arrow.
ALIKE = {
    "b": "true",
    "i8": "-1::TINYINT",
    "i16": "2::SMALLINT",
    "i32": "3",
    "i64": "9223372036854775807",
    "u8": "255::UTINYINT",
    "u64": "18446744073709551615::UBIGINT",
    "f32": "1.5::FLOAT",
    "f64": "'-inf'::DOUBLE",
    "dec": "1.50::DECIMAL(10, 2)",
    "dec38": "-1.5::DECIMAL(38, 10)",
    "text": "'a'",
    "json": "'{\"a\": 1}'::JSON",
    "blob": "'\\xAA'::BLOB",
    "enum": "'x'::ENUM('x', 'y')",
    "none": "NULL",
    "list": "[1, NULL]",
    "nested": "[[1.5::DECIMAL(3, 1)], []]",
    "struct": "{'x': 1, 'y': ['a']}",
    "huge": "170141183460469231731687303715884105727::HUGEINT",
    "sum": "sum(seq)",
}
THROUGH_ARROW = {
    "date": "DATE '2025-05-01'",
    "ts": "TIMESTAMP '2025-05-01 14:30:00.5'",
    "tstz": "TIMESTAMPTZ '2025-05-01 14:30:00+02'",
    "time": "TIME '14:30:00'",
    "interval": "INTERVAL 1 DAY",
    "uuid": "'7d3f0b8e-2f4c-4a1e-9c1d-1f2e3d4c5b6a'::UUID",
    "map": "MAP {'a': 1}",
    "array": "[1, 2]::INTEGER[2]",
    "uhuge": "340282366920938463463374607431768211455::UHUGEINT",
    "huge_in_a_list": "[1::HUGEINT]",
    "bits": "'101'::BIT",
}


def select(columns: dict[str, str]) -> str:
    body = ", ".join(f"{e} AS {name}" for name, e in columns.items())
    return f"SELECT {body} FROM events WHERE match_id = 'a' AND seq = 1"


@pytest.mark.parametrize("name", ALIKE)
def test_a_type_that_converts_alike_is_read_without_arrow_to_the_same_value(
    reads: ReadAccess, name: str
) -> None:
    sql = select({name: ALIKE[name]})
    with reads._cursor() as cursor:
        [column_type] = cursor.sql(sql).types
    assert converts_like_arrow(column_type, top=True)
    [arrow] = reads.query(sql).to_pylist()
    _, [plain] = reads.query_rows(sql, like_arrow=True)
    assert plain == (arrow[name],)
    assert type(plain[0]) is type(arrow[name])


@pytest.mark.parametrize("name", THROUGH_ARROW)
def test_a_type_that_converts_otherwise_is_read_through_arrow(reads: ReadAccess, name: str) -> None:
    sql = select({"i": "1", name: THROUGH_ARROW[name]})
    with reads._cursor() as cursor:
        assert not converts_like_arrow(cursor.sql(sql).types[1], top=True)
    columns, rows = reads.query_rows(sql, like_arrow=True)
    assert columns == ["i", name]
    assert [dict(zip(columns, row, strict=True)) for row in rows] == reads.query(sql).to_pylist()


def test_like_arrow_rows_of_every_kind_at_once_equal_arrow_rows(reads: ReadAccess) -> None:
    for columns in (ALIKE, {**ALIKE, **THROUGH_ARROW}):
        sql = select(columns) + " GROUP BY ALL"
        names, rows = reads.query_rows(sql, like_arrow=True)
        assert names == list(columns)
        assert [dict(zip(names, r, strict=True)) for r in rows] == reads.query(sql).to_pylist()


def test_rows_without_arrow_are_cancelled_past_their_time_limit(reads: ReadAccess) -> None:
    with pytest.raises(QueryError, match="cancelled"):
        reads.query_rows("SELECT count(*) FROM range(1000000000000) a", timeout=0.2)
    with pytest.raises(QueryError):
        reads.query_rows("SELECT nope FROM events")


def test_reads_parse_on_their_own_cursor_not_on_duckdbs_default_connection(
    reads: ReadAccess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB's module-level parser opens an in-memory database on first use: some 20-50 ms
    of a quick command's start, for nothing."""

    def refused(sql: str) -> None:
        raise AssertionError("parsed on DuckDB's default connection")

    monkeypatch.setattr(duckdb, "extract_statements", refused)
    assert reads.query("EXPLAIN SELECT 1").num_rows >= 1
    assert reads.query_rows("SELECT 1 AS one") == (["one"], [(1,)])
    assert sum(b.num_rows for b in reads.query_batches("SELECT 1 AS one")) == 1
    with pytest.raises(ReadOnlyViolation):
        reads.query_rows("EXPLAIN ANALYZE DELETE FROM events")


def test_a_statement_duckdb_cannot_parse_or_bind_is_a_query_error(reads: ReadAccess) -> None:
    with pytest.raises(QueryError):
        reads.query("SELEC 1")
    with pytest.raises(QueryError):
        reads.query("SELECT nope FROM events")


def test_a_query_past_its_time_limit_is_cancelled(reads: ReadAccess) -> None:
    with pytest.raises(QueryError, match="cancelled"):
        reads.query("SELECT count(*) FROM range(1000000000000) a", timeout=0.2)
    assert reads.count() == 4  # the log is still usable


@pytest.mark.slow
def test_a_reader_sees_one_snapshot_while_the_writer_appends(db: Path) -> None:
    with EventLog(db) as log:
        before = log.count()
        batches = log.query_batches("SELECT seq FROM events ORDER BY match_id, seq", batch_rows=1)
        first = next(batches)  # the snapshot is taken now
        for seq in range(1, 101):
            log.append([passed("b", seq)])  # committed while the read goes on
        rows = first.num_rows + sum(batch.num_rows for batch in batches)
        assert rows == before
        assert log.count() == before + 100


@pytest.mark.slow
def test_readers_on_many_threads_see_whole_commits_only(db: Path) -> None:
    with EventLog(db) as log:
        stop = threading.Event()
        seen: list[int] = []
        errors: list[BaseException] = []

        def read() -> None:
            try:
                while not stop.is_set():
                    table = log.query("SELECT count(*) AS n, max(seq) AS top FROM events")
                    n = table.column("n")[0].as_py()
                    seen.append(n)
            except BaseException as exc:
                errors.append(exc)

        readers = [threading.Thread(target=read) for _ in range(3)]
        for thread in readers:
            thread.start()
        seq = 1
        for _ in range(100):
            log.append([passed("b", seq), passed("b", seq + 1)])  # two at a time
            seq += 2
        stop.set()
        for thread in readers:
            thread.join()
        assert errors == []
        assert all(n % 2 == 0 for n in seen)  # never half of a batch
        assert seen

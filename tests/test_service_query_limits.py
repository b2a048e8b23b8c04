"""Query has a deadline, is stopped when its caller goes, runs on bounded resources.

Real server (in-process, 127.0.0.1, port 0), real channels, real DuckDB file.
"""

from __future__ import annotations

import threading
from typing import Any

import grpc
import pyarrow as pa
import pytest

from analysis.logquery import LogSource
from service.rpc import query_stream
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from tests.helpers import wait_until
from tests.service_helpers import (
    Service,
    assert_refused,
    create,
    error_info,
    query,
    rpc_error,
)

HEAVY = "SELECT sum(hash(range)) AS h FROM range(9000000000000000000)"
"""Years of DuckDB work: a query of it that ends was stopped (no test waits on a clock)."""


def running_queries(svc: Service) -> int:
    return svc.running.servicer.queries.running


def wait_until_idle(svc: Service) -> None:
    """Wait until no query runs on the server: HEAVY never ends unless it is stopped."""
    wait_until(lambda: running_queries(svc) == 0, "the query's DuckDB work is stopped")


def heavy(svc: Service) -> pb.QueryRequest:
    return pb.QueryRequest(sql=HEAVY, token=svc.stub.query_token)


@pytest.mark.slow
def test_a_query_past_the_callers_deadline_is_stopped(
    svc: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(query_stream, "MAX_QUERY_SECONDS", 3600.0)  # only the caller's deadline
    exc = rpc_error(svc.stub.Query, heavy(svc), timeout=0.5)
    assert exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    wait_until_idle(svc)
    # The service answers queries afterwards.
    assert query(svc.stub, "SELECT 1 AS one").to_pylist() == [{"one": 1}]


@pytest.mark.slow
def test_a_query_past_the_services_maximum_is_stopped_with_a_clear_status(
    svc: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(query_stream, "MAX_QUERY_SECONDS", 0.3)
    exc = rpc_error(svc.stub.Query, heavy(svc), timeout=30)
    assert_refused(exc, grpc.StatusCode.DEADLINE_EXCEEDED, "ERROR_REASON_LIMIT_REACHED", "limit")
    assert error_info(exc).metadata["limit"] == "query_seconds"
    wait_until_idle(svc)


def test_a_query_whose_caller_cancels_is_stopped(svc: Service) -> None:
    call = svc.stub.Query(heavy(svc), timeout=3600)
    wait_until(lambda: running_queries(svc), "the query starts")
    call.cancel()
    wait_until_idle(svc)


def test_more_queries_than_the_limit_are_refused_not_queued(svc: Service) -> None:
    calls: list[Any] = []
    outcomes: list[grpc.StatusCode] = []

    def run(call: Any) -> None:
        try:
            for _ in call:
                pass
        except grpc.RpcError as exc:
            outcomes.append(exc.code())

    threads = []
    for _ in range(query_stream.MAX_RUNNING_QUERIES):
        call = svc.stub.Query(heavy(svc), timeout=3600)
        calls.append(call)
        threads.append(threading.Thread(target=run, args=(call,)))
        threads[-1].start()
    wait_until(
        lambda: running_queries(svc) == query_stream.MAX_RUNNING_QUERIES, "the queries start"
    )
    try:
        exc = rpc_error(svc.stub.Query, pb.QueryRequest(sql="SELECT 1", token=svc.stub.query_token))
        assert_refused(exc, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_LIMIT_REACHED")
        assert error_info(exc).metadata["limit"] == "running_queries"
        # Play goes on meanwhile.
        assert create(svc.stub, 2, seed=1).match_id
    finally:
        for call in calls:
            call.cancel()
        for t in threads:
            t.join(10)
    assert outcomes == [grpc.StatusCode.CANCELLED] * len(calls)
    wait_until_idle(svc)


def test_an_empty_result_runs_the_query_once_and_keeps_its_schema(
    svc: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = svc.running.hub.log
    runs: list[str] = []
    original = log.query_batches

    def counted(sql: str, *args: Any, **kwargs: Any) -> Any:
        runs.append(sql)
        return original(sql, *args, **kwargs)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the Query RPC ran the query a second time")

    monkeypatch.setattr(log, "query_batches", counted)
    monkeypatch.setattr(log, "query", refused)
    table = query(svc.stub, "SELECT match_id, seq FROM events WHERE seq < 0")
    assert table.num_rows == 0
    assert table.schema.names == ["match_id", "seq"]
    assert table.schema.field("seq").type == pa.int32()
    assert len(runs) == 1


def test_queries_run_on_one_duckdb_thread_within_a_memory_limit(svc: Service) -> None:
    row = query(
        svc.stub,
        "SELECT current_setting('threads') AS threads, current_setting('memory_limit') AS memory",
    ).to_pylist()[0]
    assert int(row["threads"]) == 1
    assert row["memory"].replace(" ", "").upper() in ("1GB", "953.6MIB", "1.0GIB", "1000.0MB")


def test_a_result_read_to_its_end_has_freed_its_place(svc: Service) -> None:
    """`LogSource.batches` (sniff stats, audit, export) reads the call to its end, so queries
    made one after the other are never refused for want of a place."""
    for _ in range(20):
        with LogSource(svc.db_path) as source:
            assert source.remote
            batches = source.batches("SELECT range AS i FROM range(1000)")
            assert sum(batch.num_rows for batch in batches) == 1000
        assert running_queries(svc) == 0


@pytest.mark.parametrize("rows", [1, 300_000])
def test_a_query_gives_its_place_back_before_its_caller_has_the_last_chunk(
    svc: Service, rows: int
) -> None:
    """A caller that queries again at once must never find its own finished query still
    counted as running (RESOURCE_EXHAUSTED with MAX_RUNNING_QUERIES sequential callers)."""
    request = pb.QueryRequest(
        sql=f"SELECT range AS i, 'x' || range AS s FROM range({rows})",
        token=svc.stub.query_token,
    )
    end_of_stream = b"\xff\xff\xff\xff\x00\x00\x00\x00"  # Arrow IPC's end marker
    for _ in range(query_stream.MAX_RUNNING_QUERIES + 2):
        chunks = []
        for reply in svc.stub.Query(request):
            chunks.append(reply.arrow_ipc)
            if reply.arrow_ipc.endswith(end_of_stream):
                # The last chunk, before the call's status: the place is already free.
                assert running_queries(svc) == 0
        assert chunks[-1].endswith(end_of_stream)
        assert pa.ipc.open_stream(b"".join(chunks)).read_all().num_rows == rows


def test_an_interrupt_that_comes_before_the_query_starts_still_stops_it() -> None:
    """DuckDB drops an interrupt while its cursor runs nothing: the query that starts after
    it must be stopped all the same (the race a loaded machine widens)."""
    import duckdb

    from service.storage.access import QueryInterrupt

    con = duckdb.connect()
    cursor = con.cursor()
    interrupt = QueryInterrupt()
    interrupt.attach(cursor)
    interrupt.interrupt()  # nothing runs yet: DuckDB alone would forget this
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            cursor.execute(HEAVY).fetchall()
        except BaseException as exc:  # the interrupt, as DuckDB raises it
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    wait_until(lambda: not worker.is_alive(), "the query is stopped")
    interrupt.detach()
    assert outcome
    assert isinstance(outcome[0], duckdb.Error)
    con.close()

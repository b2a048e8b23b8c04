"""StoreSimulated: a facts-only simulation chunk through the live service that holds the log
stores exactly what the file would, and bad input is refused with nothing stored."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pyarrow as pa
import pytest

from analysis.logquery import store_through_service
from analysis.simfacts import SimTables, facts_tables, kernel_rows
from analysis.simulate import RunSettings, match_settings, simulation_run
from service.rpc.convert import simulation_run_pb
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.storage import EventLog
from service.storage.owner import Owner
from service.storage.simulated import SimulationRun
from sniff.rules import RULES_VERSION
from sniff.seeds import match_seed
from tests.helpers import need
from tests.service_helpers import Service

SETTINGS = RunSettings("live-run", 40, 3, ("greedy", "random"), 11, chunk_size=20)


def chunk(settings: RunSettings, number: int) -> SimTables:
    need("sniff._kernel", "pip install -e .")
    matches = settings.chunk_range(number)
    seeds = [match_seed(settings.seed, i) for i in matches]
    rows = kernel_rows(match_settings(settings), seeds)
    return facts_tables(rows, settings.run, matches.start, seeds, settings.seats)


def owner_of(svc: Service) -> Owner:
    return Owner(address=svc.address, pid=0, query_token=svc.stub.query_token)


def facts(db: Path | None, svc: Service | None = None) -> dict[str, Any]:
    sql = {
        "settings": "SELECT match_id, seats, target, seed, variant, players, source, run_id "
        "FROM match_settings_all ORDER BY match_id",
        "results": "SELECT match_id, winner, scores, rounds, ended_by FROM match_results_all "
        "ORDER BY match_id",
        "match_facts": "SELECT * FROM match_facts ORDER BY match_id",
        "round_facts": "SELECT * FROM round_facts ORDER BY match_id, round",
        "sniff_decisions": "SELECT * FROM sniff_decisions ORDER BY ALL",
        "runs": "SELECT * EXCLUDE (created_at) FROM simulation_runs",
    }
    if svc is not None:
        return {k: svc.running.hub.log.query(q).to_pylist() for k, q in sql.items()}
    assert db is not None
    with EventLog(db) as log:
        return {k: log.query(q).to_pylist() for k, q in sql.items()}


def test_chunks_through_the_service_store_what_the_file_would(svc: Service, tmp_path: Path) -> None:
    run = simulation_run(SETTINGS)
    for number in range(SETTINGS.chunks):
        tables = chunk(SETTINGS, number)
        stored = store_through_service(
            owner_of(svc), run, tables.matches, tables.rounds, tables.decisions
        )
        assert stored == 20
    alone = tmp_path / "alone.duckdb"
    with EventLog(alone) as log:
        for number in range(SETTINGS.chunks):
            t = chunk(SETTINGS, number)
            log.store_simulated(run, RULES_VERSION, t.matches, t.rounds, t.decisions)
    served = facts(None, svc)
    assert len(served["match_facts"]) == 40
    assert served == facts(alone)


def requests(
    run: SimulationRun, tables: SimTables, token: str, **replace: bytes
) -> Iterator[pb.StoreSimulatedRequest]:
    streams = {
        "matches_arrow_ipc": tables.matches,
        "rounds_arrow_ipc": tables.rounds,
        "decisions_arrow_ipc": tables.decisions,
    }
    first = True
    for name, table in streams.items():
        data = replace.get(name)
        if data is None:
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            data = sink.getvalue().to_pybytes()
        msg = pb.StoreSimulatedRequest()
        setattr(msg, name, data)
        if first:
            msg.token = token
            msg.run.CopyFrom(simulation_run_pb(run))
            first = False
        yield msg


def refused(svc: Service, msgs: Iterator[pb.StoreSimulatedRequest]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        svc.stub.StoreSimulated(msgs, timeout=60)
    return caught.value


def _columns(table: pa.Table, name: str, values: list[Any]) -> pa.Table:
    field = table.schema.field(name)
    return table.set_column(table.column_names.index(name), field, pa.array(values, field.type))


def test_bad_chunks_are_refused_and_nothing_is_stored(svc: Service) -> None:
    run = simulation_run(SETTINGS)
    good = chunk(SETTINGS, 0)
    token = svc.stub.query_token
    bad_cases: list[tuple[Iterator[pb.StoreSimulatedRequest], grpc.StatusCode, str]] = [
        (requests(run, good, "wrong"), grpc.StatusCode.PERMISSION_DENIED, ""),
        (requests(run, good, ""), grpc.StatusCode.UNAUTHENTICATED, ""),
        (
            requests(run, good, token, rounds_arrow_ipc=b"not arrow"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "rounds_arrow_ipc",
        ),
        (
            requests(dataclasses.replace(run, seats=5), good, token),
            grpc.StatusCode.INVALID_ARGUMENT,
            "2, 3 or 4",
        ),
        (
            requests(dataclasses.replace(run, bots=("greedy", "minimax")), good, token),
            grpc.StatusCode.INVALID_ARGUMENT,
            "bots",
        ),
        (
            requests(dataclasses.replace(run, run_id="other-run"), good, token),
            grpc.StatusCode.INVALID_ARGUMENT,
            "named other-run-",
        ),
        (
            requests(dataclasses.replace(run, matches=10), good, token),
            grpc.StatusCode.INVALID_ARGUMENT,
            "has 10 matches",
        ),
        (
            requests(
                run,
                dataclasses.replace(
                    good,
                    matches=_columns(good.matches, "scores", [[1, 2]] * good.matches.num_rows),
                ),
                token,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "one value per seat",
        ),
        (
            requests(run, dataclasses.replace(good, rounds=good.rounds.drop_columns("net")), token),
            grpc.StatusCode.INVALID_ARGUMENT,
            "net",
        ),
        (
            requests(
                run,
                dataclasses.replace(good, matches=good.matches.slice(0, 10)),
                token,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "does not hold",
        ),
    ]
    for msgs, code, words in bad_cases:
        error = refused(svc, msgs)
        assert error.code() == code, error.details()
        assert words in (error.details() or "")
    assert facts(None, svc)["match_facts"] == []
    assert facts(None, svc)["runs"] == []


def test_a_chunk_stored_twice_or_a_run_with_other_settings_is_refused_whole(svc: Service) -> None:
    run = simulation_run(SETTINGS)
    first = chunk(SETTINGS, 0)
    token = svc.stub.query_token
    svc.stub.StoreSimulated(requests(run, first, token), timeout=60)
    before = facts(None, svc)
    error = refused(svc, requests(run, first, token))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "holds match live-run-00000000 already" in (error.details() or "")
    other = dataclasses.replace(run, seed=run.seed + 1)
    error = refused(svc, requests(other, chunk(SETTINGS, 1), token))
    assert "other settings" in (error.details() or "")
    assert facts(None, svc) == before

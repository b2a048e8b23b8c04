"""`sniff import` and `sniff export`: round trips, all or nothing, no duplicates, bad input,
Ctrl-C, Parquet that a repeated export overwrites, beside a live `sniff serve` too."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import grpc
import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from click.testing import CliRunner

from analysis.cli.main import cli
from analysis.importer import imported_match_id
from analysis.logquery import import_through_service
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.gen.sniff.v1 import sniff_pb2_grpc
from service.storage import EventLog, Owner, find_owner
from service.storage import log as log_module
from tests.replay_helpers import sample_log
from tests.service_helpers import REPO, ServerProcess

pytestmark = pytest.mark.slow

SNIFF = str(Path(sys.executable).parent / "sniff")


def sniff(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SNIFF, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False
    )


def records_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def match_count(db: Path) -> int:
    if not db.exists():
        return 0
    with duckdb.connect(str(db), read_only=True) as con:
        return int(con.execute("SELECT count(*) FROM match_settings_all").fetchall()[0][0])


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Records of every seat count and variant, some with a round limit, with players."""
    directory = tmp_path_factory.mktemp("records")
    parts = []
    for i, (seats, variant, limit) in enumerate(
        [(2, "american", None), (3, "stubby", "3"), (4, "berndt", None), (2, "british", "2")]
    ):
        path = directory / f"part{i}.jsonl"
        argv = ["record", "--seats", str(seats), "--matches", "6", "--seed", str(10 * i)]
        argv += ["--variant", variant, "-o", str(path)]
        if limit:
            argv += ["--round-limit", limit]
        done = sniff(*argv)
        assert done.returncode == 0, done.stderr
        parts += path.read_text().splitlines()
    out = directory / "all.jsonl"
    out.write_text("\n".join(parts) + "\n")
    return out


def test_import_then_export_gives_the_same_records_and_they_audit_ok(
    recorded: Path, tmp_path: Path
) -> None:
    db = tmp_path / "log.duckdb"
    done = sniff("import", str(recorded), "--db", str(db), "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    statuses = [json.loads(line)["status"] for line in done.stdout.splitlines()]
    assert statuses == ["imported"] * 24
    out = tmp_path / "export.jsonl"
    assert sniff("export", "--db", str(db), "-o", str(out)).returncode == 0
    original = {r["id"]: r for r in records_of(recorded)}
    exported = {r["id"]: r for r in records_of(out)}
    assert exported == original  # players, variants, round limits, claims: all of it
    assert any(r.get("round_limit") for r in exported.values())
    assert sniff("audit", str(out)).returncode == 0
    audit = sniff("audit", "--db", str(db), "--format", "jsonl")
    assert audit.returncode == 0, audit.stdout
    notes = [json.loads(line).get("notes") for line in audit.stdout.splitlines()]
    assert all(n and "imported" in n[0] for n in notes)  # no commitment: said so
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT DISTINCT source, seed_commitment IS NULL, explicit_deals FROM matches"
        ).fetchall()
    assert rows == [("imported", True, True)]


def test_importing_the_same_records_twice_adds_nothing(recorded: Path, tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    assert sniff("import", str(recorded), "--db", str(db)).returncode == 0
    with duckdb.connect(str(db), read_only=True) as con:
        before = con.execute("SELECT count(*) FROM events_all").fetchall()
    again = sniff("import", str(recorded), "--db", str(db), "--format", "jsonl")
    assert again.returncode == 0
    assert {json.loads(line)["status"] for line in again.stdout.splitlines()} == {"present"}
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM events_all").fetchall() == before
    assert match_count(db) == 24


def test_a_record_twice_in_one_file_is_imported_once(recorded: Path, tmp_path: Path) -> None:
    line = recorded.read_text().splitlines()[0]
    obj = json.loads(line)
    path = tmp_path / "twice.jsonl"
    # the same content with its keys in another order is the same record
    path.write_text(line + "\n" + json.dumps(dict(reversed(list(obj.items())))) + "\n")
    db = tmp_path / "log.duckdb"
    done = sniff("import", str(path), "--db", str(db), "--format", "jsonl")
    statuses = [json.loads(x)["status"] for x in done.stdout.splitlines()]
    # the second has the same id: it is also a duplicate_id, so the file is refused ...
    assert done.returncode == 1
    assert statuses == ["skipped", "bad"]
    assert match_count(db) == 0
    assert imported_match_id(obj) == imported_match_id(dict(reversed(list(obj.items()))))


def test_one_bad_record_and_nothing_is_written_unless_skip_bad(
    recorded: Path, tmp_path: Path
) -> None:
    lines = recorded.read_text().splitlines()
    bad = json.loads(lines[3])
    bad["rounds"][0]["claims"]["points"][0] = 95
    lines[3] = json.dumps(bad)
    lines.insert(7, "{not json")
    path = tmp_path / "some-bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    db = tmp_path / "log.duckdb"
    done = sniff("import", str(path), "--db", str(db))
    assert done.returncode == 1
    assert "points" in done.stdout
    assert "line:8" in done.stdout
    assert "nothing was imported" in done.stderr
    assert match_count(db) == 0
    done = sniff("import", str(path), "--db", str(db), "--skip-bad", "--format", "jsonl")
    assert done.returncode == 1
    results = [json.loads(x) for x in done.stdout.splitlines()]
    assert [r["status"] for r in results].count("bad") == 2
    assert [r["status"] for r in results].count("imported") == 23
    assert match_count(db) == 23


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.jsonl", "cannot read"),
        (lambda d: d, "cannot read"),
    ],
)
def test_an_unreadable_input_is_one_line_and_exit_2(
    tmp_path: Path, make: Any, message: str
) -> None:
    done = CliRunner().invoke(cli, ["import", str(make(tmp_path)), "--db", str(tmp_path / "x")])
    assert done.exit_code == 2
    assert message in done.output
    assert len(done.output.strip().splitlines()) == 1


def test_a_database_that_is_not_a_log_is_one_line_and_exit_2(
    recorded: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    done = sniff("import", str(recorded), "--db", str(other))
    assert done.returncode == 2
    assert "not an American Sniff event log" in done.stderr


def test_a_log_in_a_read_only_directory_is_refused_in_one_line(
    recorded: Path, tmp_path: Path
) -> None:
    """Root may write anywhere; the read-only place here is a file standing for a directory."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = sniff("import", str(recorded), "--db", str(blocker / "log.duckdb"))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_ctrl_c_during_an_import_leaves_nothing_written(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    assert sniff("record", "--seats", "2", "--matches", "400", "-o", str(path)).returncode == 0
    db = tmp_path / "log.duckdb"
    EventLog(db).close()
    proc = subprocess.Popen(
        [SNIFF, "import", str(path), "--db", str(db), "--workers", "1", "--progress"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Interrupt once the import is under way (its progress bar has started), not while the
    # interpreter is still starting, however slow the machine is.
    assert proc.stderr is not None
    first = proc.stderr.read(1)
    assert first, "the import ended before it showed any progress"
    proc.send_signal(signal.SIGINT)
    out, rest = proc.communicate(timeout=60)
    err = first + rest
    assert proc.returncode == 2, (out, err)
    assert "interrupted: nothing was imported" in err
    assert "Traceback" not in err
    assert match_count(db) == 0


def test_an_interruption_inside_the_transaction_rolls_everything_back(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from analysis.importer import prepare

    batch = prepare(recorded.read_bytes().splitlines(keepends=True), source="x")
    db = tmp_path / "log.duckdb"
    real = log_module._insert_arrow
    calls: list[str] = []

    def interrupted(cursor: Any, query: str, name: str, table: pa.Table) -> None:
        real(cursor, query, name, table)
        calls.append(query)
        if query == "insert_pending_settings":  # the events are in: now Ctrl-C
            raise KeyboardInterrupt

    monkeypatch.setattr(log_module, "_insert_arrow", interrupted)
    with EventLog(db) as log, pytest.raises(KeyboardInterrupt):
        log.import_matches(batch.table(), verify=False)
    assert calls == ["insert_pending_events", "insert_pending_settings"]
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM events_all").fetchall() == [(0,)]
        assert con.execute("SELECT count(*) FROM match_settings_all").fetchall() == [(0,)]


def test_import_and_export_go_through_a_live_sniff_serve(recorded: Path, tmp_path: Path) -> None:
    db = tmp_path / "served.duckdb"
    server = ServerProcess(db, tmp_path).start()
    try:
        done = sniff("import", str(recorded), "--db", str(db), "--format", "jsonl")
        assert done.returncode == 0, done.stderr
        assert {json.loads(x)["status"] for x in done.stdout.splitlines()} == {"imported"}
        again = sniff("import", str(recorded), "--db", str(db), "--format", "jsonl")
        assert {json.loads(x)["status"] for x in again.stdout.splitlines()} == {"present"}
        listed = sniff("matches", "--db", str(db), "--format", "jsonl", "--limit", "0")
        assert len(listed.stdout.splitlines()) == 24
        out = tmp_path / "export.jsonl"
        assert sniff("export", "--db", str(db), "-o", str(out)).returncode == 0
        assert {r["id"]: r for r in records_of(out)} == {r["id"]: r for r in records_of(recorded)}
        assert sniff("audit", "--db", str(db)).returncode == 0
        assert server.proc is not None
        assert server.proc.poll() is None
    finally:
        server.close()


def test_the_import_rpc_needs_the_query_token_and_whole_chained_matches(
    recorded: Path, tmp_path: Path
) -> None:
    from analysis.importer import prepare

    table = prepare(recorded.read_bytes().splitlines(keepends=True), source="x").table()
    table = table.drop_columns(["logged_at"])
    db = tmp_path / "served.duckdb"
    server = ServerProcess(db, tmp_path).start()
    try:
        owner = find_owner(db)
        assert owner is not None
        for token, code in (("", "UNAUTHENTICATED"), ("wrong", "PERMISSION_DENIED")):
            with pytest.raises(grpc.RpcError) as refused:
                import_through_service(Owner(owner.pid, owner.address, None, token), table)
            assert refused.value.code().name == code
        broken = table.set_column(
            table.column_names.index("points"),
            "points",
            pa.array([(p or 0) + 1 for p in table.column("points").to_pylist()], pa.int32()),
        )
        with pytest.raises(grpc.RpcError) as refused:
            import_through_service(owner, broken)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "chain" in (refused.value.details() or "")
        with grpc.insecure_channel(owner.address) as channel:
            stub = sniff_pb2_grpc.SniffServiceStub(channel)
            with pytest.raises(grpc.RpcError) as refused:
                stub.ImportMatches(
                    iter([pb.ImportMatchesRequest(token=owner.query_token, arrow_ipc=b"junk")])
                )
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        reply = import_through_service(owner, table)
        assert len(reply.imported_match_ids) == 24
        assert reply.events == table.num_rows
    finally:
        server.close()


def test_export_leaves_matches_in_play_out_unless_asked(tmp_path: Path) -> None:
    db = sample_log(tmp_path / "log.duckdb")
    out = tmp_path / "out.jsonl"
    assert sniff("export", "--db", str(db), "-o", str(out)).returncode == 0
    assert "in-play" not in {r["id"] for r in records_of(out)}
    assert sniff("audit", str(out)).returncode == 0  # the log's own figures audit ok
    refused = sniff("export", "--db", str(db), "in-play")
    assert refused.returncode == 2
    assert "in play" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    done = sniff("export", "--db", str(db), "in-play", "two-seats", "--include-unfinished")
    assert done.returncode == 0
    records = [json.loads(x) for x in done.stdout.splitlines()]
    assert [r["id"] for r in records] == ["in-play", "two-seats"]
    path = tmp_path / "in-play.jsonl"
    path.write_text(done.stdout)
    assert sniff("audit", str(path), "--allow-unfinished").returncode == 0
    missing = sniff("export", "--db", str(db), "nope")
    assert missing.returncode == 2
    assert "no match 'nope'" in missing.stderr


def test_a_repeated_parquet_export_overwrites_and_another_merges(tmp_path: Path) -> None:
    db = sample_log(tmp_path / "log.duckdb")
    target = tmp_path / "pq"
    first = sniff("export", "--db", str(db), "--parquet", str(target), "two-seats")
    assert first.returncode == 0, first.stderr
    for _ in range(2):
        assert sniff("export", "--db", str(db), "--parquet", str(target)).returncode == 0
    for view in ("matches", "deals", "actions", "round_ends", "match_ends"):
        dataset = ds.dataset(target / view, format="parquet", partitioning="hive")
        table = dataset.to_table()
        assert "created_date" in table.column_names
        with duckdb.connect(str(db), read_only=True) as con:
            expected = con.execute(
                f"SELECT count(*) FROM {view}"
                " WHERE match_id IN (SELECT match_id FROM match_results_all)"
            ).fetchall()[0][0]
        assert table.num_rows == expected, view
    with duckdb.connect() as con:
        found = con.execute(
            "SELECT count(DISTINCT match_id), bool_and(finished) FROM"
            f" read_parquet('{target}/matches/**/*.parquet', hive_partitioning = true)"
        ).fetchall()
    assert found == [(4, True)]
    done = sniff("export", "--db", str(db), "--parquet", str(target), "--include-unfinished")
    assert done.returncode == 0
    matches = ds.dataset(target / "matches", format="parquet", partitioning="hive").to_table()
    assert sorted(matches.column("match_id").to_pylist()) == sorted(
        ["position-a", "two-seats", "three-seats", "four-seats", "in-play"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "{tmp}/no/such/dir/x.jsonl"], "cannot write"),
        (["--parquet", "{file}"], "not a directory"),
        (["-o", "{tmp}/x.jsonl", "--parquet", "{tmp}/pq"], "give one of"),
        (["--db", "{tmp}/missing.duckdb"], "no event log at"),
    ],
)
def test_export_meets_bad_input_with_one_line_and_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    db = sample_log(tmp_path / "log.duckdb")
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    argv = [x.format(tmp=tmp_path, file=a_file) for x in args]
    if "--db" not in argv:
        argv += ["--db", str(db)]
    done = CliRunner().invoke(cli, ["export", *argv])
    assert done.exit_code == 2, done.output
    assert message in done.output
    assert len(done.output.strip().splitlines()) == 1
    assert not (tmp_path / "x.jsonl").exists()


def test_the_import_rpc_stores_the_facts_the_client_made_and_replays_only_the_rest(
    recorded: Path, tmp_path: Path
) -> None:
    from analysis.importer import prepare
    from service.storage import open_readonly
    from service.storage.facts import TABLES, FactsTables, facts_tables, match_ids_of

    prepared = prepare(recorded.read_bytes().splitlines(keepends=True), source="x")
    table = prepared.table().drop_columns(["logged_at"])
    made = prepared.facts()
    given = made if isinstance(made, FactsTables) else facts_tables(made)
    ids = match_ids_of(given)
    # One match's facts are marked (a value a replay never makes), one match gets none:
    # the service must store the first as sent and replay only the second.
    marked, left_out = ids[0], ids[1]
    rounds = given.rounds.to_pylist()
    for row in rounds:
        if row["match_id"] == marked:
            row["leader"] = 99
    sent = FactsTables(
        *(
            pa.Table.from_pylist(
                [r for r in part.to_pylist() if r["match_id"] != left_out], schema=part.schema
            )
            for part in (
                given.matches,
                pa.Table.from_pylist(rounds, schema=given.rounds.schema),
                given.decisions,
            )
        )
    )
    db = tmp_path / "served.duckdb"
    server = ServerProcess(db, tmp_path).start()
    try:
        owner = find_owner(db)
        assert owner is not None
        with grpc.insecure_channel(owner.address) as channel:
            stub = sniff_pb2_grpc.SniffServiceStub(channel)
            data = _ipc(table)
            junk = pb.ImportMatchesRequest(token=owner.query_token, round_facts_arrow_ipc=b"x")
            chunks = [
                pb.ImportMatchesRequest(arrow_ipc=data[at : at + (1 << 20)])
                for at in range(0, len(data), 1 << 20)
            ]
            with pytest.raises(grpc.RpcError) as refused:
                stub.ImportMatches(iter([junk, *chunks]))
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "round_facts_arrow_ipc" in (refused.value.details() or "")
        reply = import_through_service(owner, table, facts=sent)
        assert len(reply.imported_match_ids) == 24
    finally:
        server.close()
    with open_readonly(db) as reader:
        stored = {t: reader.query(f"SELECT * FROM {t}").to_pylist() for t in TABLES}
    assert len(stored["match_facts"]) == 24
    leaders = {r["leader"] for r in stored["round_facts"] if r["match_id"] == marked}
    assert leaders == {99}, "the facts sent are stored as sent, not replayed"
    replayed = [r for r in stored["round_facts"] if r["match_id"] == left_out]
    expected = [r for r in given.rounds.to_pylist() if r["match_id"] == left_out]
    key = ("round",)

    def by_round(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(rows, key=lambda r: tuple(r[k] for k in key))

    assert by_round(replayed) == by_round(expected), "a match sent without facts is replayed"


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())

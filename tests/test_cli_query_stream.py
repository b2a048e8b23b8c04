"""`sniff query` streams its rows: a result far larger than memory is written as it is read.

No timing: a query of a trillion rows could never be written whole (it would
take days and terabytes), so its first lines arriving at all prove that rows
go to the output as they are fetched; a pipe that stops reading ends the
command (exit 141, as a Unix tool killed by SIGPIPE). The Query RPC's stream
is decoded a record batch at a time, proved by counting the replies taken.
"""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from analysis.logquery import rows_from_stream
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.storage import EventLog

SNIFF = [sys.executable, "-m", "analysis.cli"]
ENDLESS = "SELECT i, i * 2 AS twice, 'x' || i AS text FROM range(1000000000000) t(i)"
"""A trillion rows: only a command that streams ever writes its first line."""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stream") / "log.duckdb"
    EventLog(path).close()
    return path


def first_lines(db: Path, fmt: str, count: int) -> list[str]:
    """The command's first `count` lines, then its output closed (the command must end)."""
    with subprocess.Popen(
        [*SNIFF, "query", ENDLESS, "--format", fmt, "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(count)]
        proc.stdout.close()
        assert proc.wait(timeout=120) == 128 + 13, proc.stderr.read() if proc.stderr else ""
    return lines


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("csv", ["i,twice,text\n", "0,0,x0\n", "1,2,x1\n"]),
        (
            "jsonl",
            [
                '{"i": 0, "twice": 0, "text": "x0"}\n',
                '{"i": 1, "twice": 2, "text": "x1"}\n',
                '{"i": 2, "twice": 4, "text": "x2"}\n',
            ],
        ),
    ],
)
def test_the_first_rows_of_an_endless_result_are_written_as_they_are_read(
    db: Path, fmt: str, expected: list[str]
) -> None:
    assert first_lines(db, fmt, len(expected)) == expected


def test_a_table_of_an_endless_result_shows_one_page_and_says_how_to_get_the_rest(
    db: Path,
) -> None:
    done = subprocess.run(
        [*SNIFF, "query", ENDLESS, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["i", "twice", "text"]
    assert lines[2].split() == ["0", "0", "x0"]
    assert len(lines) == 2 + 1000 + 1
    assert "the first 1,000 rows; more follow" in lines[-1]
    assert "--format csv or jsonl" in lines[-1]


def test_a_result_that_fits_one_page_ends_with_its_row_count(db: Path) -> None:
    done = subprocess.run(
        [*SNIFF, "query", "SELECT i FROM range(1000) t(i)", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.splitlines()[-1] == "(1000 rows)"


def replies_of(batches: Iterator[pa.RecordBatch], schema: pa.Schema) -> Iterator[pb.QueryResponse]:
    """The Query RPC's replies for a stream of batches: the schema, then one reply a batch."""
    sink = io.BytesIO()
    writer = pa.ipc.new_stream(sink, schema)
    yield pb.QueryResponse(arrow_ipc=sink.getvalue())
    for batch in batches:
        sink.seek(0)
        sink.truncate()
        writer.write_batch(batch)
        yield pb.QueryResponse(arrow_ipc=sink.getvalue())


def test_the_query_rpc_stream_is_decoded_a_batch_at_a_time() -> None:
    schema = pa.schema([("i", pa.int64()), ("text", pa.string())])
    made = 0

    def endless() -> Iterator[pa.RecordBatch]:
        nonlocal made
        while True:
            start = made * 100
            made += 1
            yield pa.RecordBatch.from_pydict(
                {"i": list(range(start, start + 100)), "text": [f"x{n}" for n in range(100)]},
                schema=schema,
            )

    columns, rows = rows_from_stream(replies_of(endless(), schema))
    assert columns == ["i", "text"]
    taken = [next(rows) for _ in range(250)]
    assert taken[249] == (249, "x49")
    assert made <= 4  # three batches hold the rows taken; an endless stream was never read whole

"""`sniff query`: typed parameters, and outputs that programs read back exactly.

The same query with the same `-p` values gives the same output whether the
file is opened offline or a live `sniff serve` answers it through its Query
RPC: nothing is guessed from a parameter's text, and an integer either fits
the 64 bits both paths carry or is refused by both.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.cli.formats import cell_text, json_text
from analysis.cli.main import cli
from analysis.cli.params import PARAM
from service.storage import EventLog
from tests.helpers import example_count

SNIFF = [sys.executable, "-m", "analysis.cli"]

TYPED = (
    "SELECT $1 AS a, typeof($1) AS ta, $2 AS b, typeof($2) AS tb, $3 AS c, typeof($3) AS tc, "
    "$4 AS d, typeof($4) AS td, $5 AS e, $6 AS f, $7 AS g, typeof($7) AS tg"
)
TYPED_PARAMS = [
    "007",
    "int:42",
    "float:1.5",
    "bool:true",
    "null:",
    "str:int:7",
    "99999999999999999999",
]
HUGE = "170141183460469231731687303715884105727"  # the largest HUGEINT
NUMBERS = (
    "SELECT 1 AS i, 9223372036854775807 AS big, 2.5::DOUBLE AS d, 1.50::DECIMAL(10, 2) AS dec, "
    f"{HUGE}::HUGEINT AS h, CAST($1 AS HUGEINT) AS hp, NULL AS n, 'nan'::DOUBLE AS nan, "
    "[1, NULL] AS l, {'x': 1, 'y': [true]} AS s"
)

# Types whose values DuckDB converts as Arrow does (read from a file without pyarrow), and
# types only Arrow converts as the service's answer does (read from a file through Arrow).
ALIKE_TYPES = (
    "SELECT true AS b, -1::TINYINT AS i8, 255::UTINYINT AS u8, "
    "18446744073709551615::UBIGINT AS u64, 1.5::FLOAT AS f32, '-inf'::DOUBLE AS f64, "
    "-1.5::DECIMAL(38, 10) AS dec38, '{\"a\": 1}'::JSON AS j, '\\xAA'::BLOB AS bl, "
    "'x'::ENUM('x', 'y') AS en, [[1.5::DECIMAL(3, 1)], []] AS nested, "
    "{'x': 1, 'y': ['a']} AS st, sum(7::INTEGER) AS s, count(*) AS n, avg(2) AS a"
)
ARROW_TYPES = (
    "SELECT DATE '2025-05-01' AS d, TIMESTAMP '2025-05-01 14:30:00.5' AS ts, "
    "TIMESTAMPTZ '2025-05-01 14:30:00+02' AS tz, TIME '14:30:00' AS t, INTERVAL 1 DAY AS iv, "
    "MAP {'a': 1} AS m, '7d3f0b8e-2f4c-4a1e-9c1d-1f2e3d4c5b6a'::UUID AS u, "
    "[1, 2]::INTEGER[2] AS arr, [1::HUGEINT] AS hl"
)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SNIFF, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


def query_args(db: Path, sql: str, *params: str, fmt: str = "jsonl") -> list[str]:
    return ["query", sql, *(x for p in params for x in ("-p", p)), "--format", fmt, "--db", str(db)]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """An empty event log at the path the `served` fixture serves."""
    db = tmp_path / "log.duckdb"
    EventLog(db).close()
    return db


def offline(db: Path, sql: str, *params: str, fmt: str = "jsonl") -> str:
    result = CliRunner().invoke(cli, query_args(db, sql, *params, fmt=fmt))
    assert result.exit_code == 0, result.output
    return result.stdout


# -- typed parameters ----------------------------------------------------------------------


def test_parameters_are_text_unless_typed(log: Path) -> None:
    row = json.loads(offline(log, TYPED, *TYPED_PARAMS))
    assert row == {
        "a": "007",
        "ta": "VARCHAR",
        "b": 42,
        "tb": row["tb"],
        "c": 1.5,
        "tc": "DOUBLE",
        "d": True,
        "td": "BOOLEAN",
        "e": None,
        "f": "int:7",
        "g": "99999999999999999999",
        "tg": "VARCHAR",
    }
    assert row["tb"] in ("INTEGER", "BIGINT")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("007", "007"),
        ("int:007", 7),
        ("int:-9223372036854775808", -(2**63)),
        ("int:9223372036854775807", 2**63 - 1),
        ("float:2e-3", 0.002),
        ("bool:FALSE", False),
        ("null:", None),
        ("str:", ""),
        ("str:null:", "null:"),
        ("text:7", "text:7"),
        ("a:b:c", "a:b:c"),
        ("", ""),
    ],
)
def test_a_parameter_reads_as(text: str, value: object) -> None:
    assert PARAM.convert(text, None, None) == value
    assert type(PARAM.convert(text, None, None)) is type(value)


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "int:9223372036854775808",
        "int:-9223372036854775809",
        "int:1_000",
        "int: 1",
        "int:0x10",
        "int:",
        "float:1_0",
        "float:",
        "bool:yes",
        "null:0",
    ],
)
def test_a_badly_typed_parameter_is_misuse(log: Path, text: str) -> None:
    result = CliRunner().invoke(cli, query_args(log, "SELECT ?", text))
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert repr(text) in result.stderr


def test_an_integer_beyond_64_bits_names_the_way_to_pass_it(log: Path) -> None:
    result = CliRunner().invoke(cli, query_args(log, "SELECT ?", "int:" + HUGE))
    assert result.exit_code == 2
    assert "CAST(? AS HUGEINT)" in result.stderr


@pytest.mark.slow
def test_typed_parameters_and_huge_integers_behave_the_same_offline_and_through_the_service(
    log: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    cases = [
        (TYPED, TYPED_PARAMS, "jsonl"),
        (NUMBERS, [HUGE], "jsonl"),
        (NUMBERS, [HUGE], "csv"),
        ("SELECT ? AS x", ["int:9223372036854775807"], "jsonl"),
        *(
            (sql, [], fmt)
            for sql in (ALIKE_TYPES, ARROW_TYPES)
            for fmt in ("jsonl", "csv", "table")
        ),
    ]
    refused = query_args(log, "SELECT ?", "int:9223372036854775808")
    expected = [offline(log, sql, *params, fmt=fmt) for sql, params, fmt in cases]
    offline_refusal = CliRunner().invoke(cli, refused)

    request.getfixturevalue("served")  # now a `sniff serve` process holds the same file
    for (sql, params, fmt), want in zip(cases, expected, strict=True):
        got = run(*query_args(log, sql, *params, fmt=fmt), cwd=tmp_path)
        assert got.returncode == 0, got.stderr
        assert got.stdout == want
    remote_refusal = run(*refused, cwd=tmp_path)
    assert (remote_refusal.returncode, remote_refusal.stderr.splitlines()[-1]) == (
        offline_refusal.exit_code,
        offline_refusal.stderr.splitlines()[-1],
    )
    assert (tmp_path / "log.duckdb.owner.json").exists(), "the answers came through the service"


# -- outputs -------------------------------------------------------------------------------


@pytest.mark.slow
def test_jsonl_keeps_numbers_as_numbers_and_null_as_null(log: Path) -> None:
    text = offline(log, NUMBERS, HUGE)
    row = json.loads(text, parse_float=Decimal)
    assert row["i"] == 1
    assert row["big"] == 2**63 - 1
    assert row["d"] == Decimal("2.5")
    assert row["dec"] == Decimal("1.50")
    assert row["h"] == int(HUGE)
    assert row["hp"] == int(HUGE)
    assert row["n"] is None
    assert row["nan"] == "NaN"
    assert row["l"] == [1, None]
    assert row["s"] == {"x": 1, "y": [True]}
    assert text.endswith("}\n")
    assert text.count("\n") == 1


@pytest.mark.slow
def test_csv_ends_lines_with_newline_and_writes_lists_and_structs_as_json(log: Path) -> None:
    sql = "SELECT [1, 2] AS l, {'x': 1, 'y': 'a'} AS s, NULL AS n, 'a,b\nc' AS t, true AS b"
    text = offline(log, sql, fmt="csv")
    assert "\r" not in text.replace("a,b\nc", "")
    assert text.startswith("l,s,n,t,b\n")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["l", "s", "n", "t", "b"]
    assert json.loads(rows[1][0]) == [1, 2]
    assert json.loads(rows[1][1]) == {"x": 1, "y": "a"}
    assert rows[1][2:] == ["", "a,b\nc", "true"]


@pytest.mark.slow
def test_repeated_column_names_keep_every_column(log: Path) -> None:
    assert offline(log, "SELECT 1 AS a, 2 AS a", fmt="csv") == "a,a\n1,2\n"


@pytest.mark.slow
def test_an_empty_result_still_prints_its_columns(log: Path) -> None:
    assert offline(log, "SELECT 1 AS a WHERE false", fmt="csv") == "a\n"
    assert offline(log, "SELECT 1 AS a WHERE false", fmt="jsonl") == ""
    assert offline(log, "SELECT 1 AS a WHERE false", fmt="table").endswith("(0 rows)\n")


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**130), 2**130)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.decimals(allow_nan=False, allow_infinity=False, places=3)
    | st.text()
)


@settings(max_examples=example_count(200), deadline=None)
@given(st.recursive(json_scalars, lambda c: st.lists(c, max_size=4), max_leaves=12))
def test_every_value_is_written_as_json_that_reads_back_equal(value: object) -> None:
    back = json.loads(json_text(value), parse_float=Decimal)

    def same(a: object, b: object) -> bool:
        if isinstance(a, list):
            return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
        if isinstance(a, float | Decimal) and not isinstance(a, bool):
            return Decimal(repr(a) if isinstance(a, float) else a) == b
        return type(a) is type(b) and a == b

    assert same(value, back), (value, back)
    if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        assert cell_text(value) == json_text(value), "a CSV number is the JSON number"


# -- where users look ----------------------------------------------------------------------


def test_help_names_the_views_and_points_to_the_schema_page() -> None:
    text = CliRunner().invoke(cli, ["query", "--help"]).output
    for name in ("matches", "deals", "actions", "round_ends", "match_ends", "events"):
        assert re.search(rf"^ +{name} +\S", text, re.MULTILINE), name
    assert "docs/schema.md" in text
    assert "-p int:42" in text
    assert "Example: sniff query" in text

"""Quick commands start quickly: each loads only what it uses.

`sniff` loads a command's module only when that command runs, and the
modules on the way to a listing or a replay import pyarrow, grpc and the
service only where they are needed. So `sniff matches` and `sniff replay` on a
file that no service holds import none of pyarrow, numpy, grpc, matplotlib
or ray (together some 0.3 s of a 2-core machine's start-up), and `sniff
matches` not even the engine; an aggregate `sniff query` imports no pyarrow
either. Each case runs a fresh interpreter, as a user's `sniff` does, and
reports the modules it ended with.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from analysis.cli.main import COMMANDS, cli
from tests.replay_helpers import sample_log

ROOT = Path(__file__).resolve().parents[1]
HEAVY = frozenset({"pyarrow", "numpy", "grpc", "matplotlib", "ray"})
"""Top-level packages that a listing or a replay of a file has no use for."""

# Runs one command in this interpreter, then writes every module it loaded to argv[2].
PROBE = """
import json, sys
from analysis.cli.main import cli
try:
    cli(json.loads(sys.argv[1]), prog_name="sniff")
except SystemExit as e:
    if e.code:
        raise
with open(sys.argv[2], "w") as f:
    json.dump(sorted(sys.modules), f)
"""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_log(tmp_path_factory.mktemp("log") / "log.duckdb")


def loaded_by(args: list[str], tmp_path: Path, **env: str) -> set[str]:
    """The modules a fresh `sniff ARGS` process has loaded once the command is done."""
    report = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args), str(report)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "the command printed nothing"
    return set(json.loads(report.read_text()))


def heavy(modules: set[str]) -> list[str]:
    """The heavy top-level packages among `modules`."""
    return sorted({m.split(".")[0] for m in modules} & HEAVY)


QUICK = {
    "matches": ["matches"],
    "matches --seats 3 --finished": ["matches", "--seats", "3", "--finished"],
    "matches --format jsonl": ["matches", "--format", "jsonl"],
    "replay": ["replay", "position-a"],
    "replay --format jsonl": ["replay", "position-a", "--format", "jsonl"],
    "replay --reveal --tally": ["replay", "two-seats", "--reveal", "--tally"],
}


@pytest.mark.slow
@pytest.mark.parametrize("args", QUICK.values(), ids=QUICK.keys())
def test_matches_and_replay_of_a_file_import_no_pyarrow_numpy_grpc_or_plotting(
    db: Path, tmp_path: Path, args: list[str]
) -> None:
    modules = loaded_by([*args, "--db", str(db)], tmp_path)
    assert heavy(modules) == []
    assert "service.hub" not in modules
    assert "service.storage.log" not in modules  # the write path
    assert "analysis.remote" not in modules
    other_commands = {m.split(":")[0] for m in COMMANDS.values()} - {"analysis.cli.replay_cmd"}
    assert sorted(modules & other_commands) == []


@pytest.mark.slow
def test_matches_does_not_load_the_engine(db: Path, tmp_path: Path) -> None:
    modules = loaded_by(["matches", "--db", str(db)], tmp_path)
    assert sorted(m for m in modules if m.startswith("sniff")) == []
    assert "analysis.replay.model" not in modules


@pytest.mark.slow
def test_an_aggregate_query_of_a_file_loads_no_pyarrow_grpc_service_or_engine(
    db: Path, tmp_path: Path
) -> None:
    modules = loaded_by(
        [
            "query",
            "SELECT seats, count(*) AS n, avg(rounds) AS rounds, sum(rounds) AS total"
            " FROM matches GROUP BY seats",
            "--db",
            str(db),
        ],
        tmp_path,
    )
    assert heavy(modules) == []
    assert "service.hub" not in modules
    assert sorted(m for m in modules if m.startswith("sniff")) == []


@pytest.mark.slow
def test_a_query_of_a_type_only_arrow_converts_alike_loads_pyarrow_and_still_no_grpc(
    db: Path, tmp_path: Path
) -> None:
    """A timestamp is read through Arrow, as the service answers it; the probe sees
    pyarrow, which shows it sees a heavy import at all."""
    modules = loaded_by(["query", "SELECT max(created_at) FROM matches", "--db", str(db)], tmp_path)
    assert "pyarrow" in heavy(modules)
    assert set(heavy(modules)) <= {"pyarrow", "numpy"}  # numpy: pyarrow's own import
    assert "service.hub" not in modules


@pytest.mark.slow
def test_a_command_that_fails_reports_its_error_without_loading_the_rest(
    db: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "analysis.cli", "replay", "no-such-match", "--db", str(db)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == f"Error: no match 'no-such-match' in {db}"


def test_help_lists_every_command_with_its_short_help() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0, result.output
    listed = result.output.split("Commands:")[1]
    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted(COMMANDS)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None, name
        line = next(line for line in listed.splitlines() if line.split()[:1] == [name])
        short = command.get_short_help_str(limit=45).rstrip(".")[:20]
        assert short in line, (name, short, line)


def test_every_lazily_named_command_is_the_command_of_that_name() -> None:
    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert isinstance(command, click.Command)
        assert command.name == name


@pytest.mark.slow
def test_a_playout_backend_this_install_lacks_is_one_line_exit_2_when_a_command_needs_it(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "analysis.cli", "tournament", "--deals", "2"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "SNIFF_KERNEL": "fast"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("Error: SNIFF_KERNEL='fast'"), done.stderr
    assert "Traceback" not in done.stderr


def test_the_program_skips_the_last_garbage_collection_but_cli_in_process_does_not() -> None:
    """`run` (the console script, `python -m analysis.cli`) freezes the collector once the
    command is done; `cli` within another process (a CliRunner) leaves it alone."""
    code = (
        "import atexit, gc\n"
        "from analysis.cli.main import run\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
        "run()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "--version"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("-c, version ")
    assert done.stdout.splitlines()[-1] == "frozen True"
    assert CliRunner().invoke(cli, ["--help"]).exit_code == 0
    assert gc.get_freeze_count() == 0

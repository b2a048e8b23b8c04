"""The command line never shows a traceback: every bad input is one clear line and an exit status.

Each case runs a real `sniff` process (`python -m analysis.cli`), since what
matters is what a user's terminal shows: stderr, the exit status, and that
nothing was written. Misuse (a bad option, a file that is not what the
command needs, a port in use) exits 2.
"""

from __future__ import annotations

import hashlib
import random
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click
import duckdb
import pytest
from click.testing import CliRunner

from analysis.cli.main import _SniffGroup, cli
from analysis.cli.options import SEED_MAX
from service.defaults import TARGET_MAX
from service.storage import EventLog

SNIFF = [sys.executable, "-m", "analysis.cli"]


def sniff(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SNIFF, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def assert_one_line_misuse(result: subprocess.CompletedProcess[str], *words: str) -> str:
    """Exit 2, no traceback, and the error is one `Error:` line naming `words`."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: "), lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- files that are not an event log -------------------------------------------------------


def junk_file(tmp_path: Path) -> Path:
    path = tmp_path / "junk.duckdb"
    path.write_bytes(random.Random(2).randbytes(20_000))
    return path


def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("not a database\n")
    return path


def other_duckdb(tmp_path: Path) -> Path:
    path = tmp_path / "other.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t (i INTEGER)")
    return path


NOT_A_LOG: list[Callable[[Path], Path]] = [junk_file, text_file, other_duckdb]


@pytest.mark.parametrize("make", NOT_A_LOG, ids=lambda f: f.__name__)
@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["query", "SELECT 1"]], ids=" ".join)
def test_a_file_that_is_not_an_event_log_is_one_line_exit_2_and_left_alone(
    tmp_path: Path, make: Callable[[Path], Path], command: list[str]
) -> None:
    path = make(tmp_path)
    before = digest(path)
    result = sniff(*command, "--db", str(path), cwd=tmp_path)
    assert_one_line_misuse(result, str(path))
    assert digest(path) == before


@pytest.mark.slow
def test_query_on_a_missing_file_or_a_directory_is_one_line_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "none.duckdb"
    assert_one_line_misuse(
        sniff("query", "SELECT 1", "--db", str(missing), cwd=tmp_path), "no event log"
    )
    assert not missing.exists()
    assert_one_line_misuse(
        sniff("query", "SELECT 1", "--db", str(tmp_path), cwd=tmp_path), "directory"
    )


@pytest.mark.slow
def test_serve_on_a_path_it_cannot_create_is_one_line_exit_2(tmp_path: Path) -> None:
    a_file = text_file(tmp_path)
    for path in (a_file / "log.duckdb", tmp_path / "no" / "such" / "dir" / "log.duckdb"):
        assert_one_line_misuse(sniff("serve", "--port", "0", "--db", str(path), cwd=tmp_path))
        assert not path.exists()
    assert_one_line_misuse(
        sniff("serve", "--port", "0", "--db", str(tmp_path), cwd=tmp_path), "directory"
    )


@pytest.mark.slow
def test_serve_on_a_port_in_use_is_one_line_exit_2_and_creates_no_log(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = sniff("serve", "--port", str(port), "--db", str(db), cwd=tmp_path)
    assert_one_line_misuse(result, f"127.0.0.1:{port}", "in use")
    assert not db.exists()


@pytest.mark.slow
def test_a_query_the_log_refuses_is_one_line_exit_2(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    EventLog(db).close()
    for sql in ("DELETE FROM events", "SELEC 1", "SELECT no_such_column FROM events"):
        assert_one_line_misuse(sniff("query", sql, "--db", str(db), cwd=tmp_path))


@pytest.mark.slow
def test_audit_of_a_binary_file_reports_its_lines_without_a_traceback(tmp_path: Path) -> None:
    path = junk_file(tmp_path)
    result = sniff("audit", str(path), cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stderr
    assert "malformed" in result.stdout
    assert_one_line_misuse(sniff("audit", str(tmp_path), cwd=tmp_path), "cannot read")
    assert_one_line_misuse(sniff("audit", str(tmp_path / "none"), cwd=tmp_path), "cannot read")


@pytest.mark.slow
def test_record_to_a_path_it_cannot_write_is_one_line_exit_2(tmp_path: Path) -> None:
    a_file = text_file(tmp_path)
    for path in (tmp_path, a_file / "out.jsonl"):
        assert_one_line_misuse(
            sniff("record", "-o", str(path), cwd=tmp_path), f"cannot write {path}"
        )


# -- numbers out of their documented range ------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["play", "--target", "999999999999999999"], "--target"),
        (["play", "--target", "4"], "--target"),
        (["play", "--target", str(TARGET_MAX + 1)], "--target"),
        (["play", "--seats", "5"], "--seats"),
        (["play", "--seed", "-1"], "--seed"),
        (["play", "--seed", str(SEED_MAX + 1)], "--seed"),
        (["record", "--matches", "0"], "--matches"),
        (["record", "--matches", "10000001"], "--matches"),
        (["record", "--target", "999999999999999999"], "--target"),
        (["record", "--seed", str(SEED_MAX), "--matches", "2"], "--seed"),
        (["demo", "--matches", "101"], "--matches"),
        (["demo", "--seed", str(SEED_MAX + 1)], "--seed"),
        (["serve", "--port", "65536"], "--port"),
        (["play", "--target", "many"], "--target"),
    ],
)
def test_a_number_out_of_range_is_refused_at_once(
    tmp_path: Path, args: list[str], option: str
) -> None:
    result = sniff(*args, cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert option in result.stderr.splitlines()[-1]
    assert not list(tmp_path.iterdir()), "a refused command writes nothing"


@pytest.mark.slow
def test_the_extremes_of_each_range_are_accepted() -> None:
    runner = CliRunner()
    for args in (
        ["play", "--target", "5", "--seed", str(SEED_MAX)],
        ["play", "--target", str(TARGET_MAX), "--seats", "4"],
        ["record", "--seed", str(SEED_MAX), "--matches", "1", "--target", "5"],
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, (args, result.output)


def test_every_range_is_in_the_help() -> None:
    runner = CliRunner()
    for command, options in {
        "play": ("--target", "--seats", "--seed"),
        "record": ("--target", "--seats", "--seed", "--matches"),
        "demo": ("--seed", "--matches"),
    }.items():
        text = runner.invoke(cli, [command, "--help"]).output.split("Options:")[1]
        for option in options:
            help_of = text[text.index(option) :].split("\n  -")[0]
            assert "<=" in help_of or " to " in help_of, (command, option, help_of)


# -- help ---------------------------------------------------------------------------------


def commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path, through the group's own lookup (the top level loads lazily)."""
    ctx = click.Context(group)
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found += commands(command, (*prefix, name))
    return found


@pytest.mark.parametrize("path", commands(cli), ids=" ".join)
def test_every_command_has_help_with_an_example(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0
    assert "Example: sniff " + " ".join(path) in result.output, result.output


def test_an_unexpected_exception_is_one_line_with_exit_70_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    group = _SniffGroup()

    @group.command()
    def boom() -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.delenv("SNIFF_TRACEBACK", raising=False)
    result = CliRunner().invoke(group, ["boom"])
    assert result.exit_code == 70
    assert (
        result.stderr
        == "Error: internal error: ZeroDivisionError: a bug (SNIFF_TRACEBACK=1 shows where)\n"
    )
    monkeypatch.setenv("SNIFF_TRACEBACK", "1")
    assert isinstance(CliRunner().invoke(group, ["boom"]).exception, ZeroDivisionError)

"""One command-line dialect (docs/cli.md), held over every command of the `sniff` group.

Every `--format` a command accepts is a name of the one vocabulary, and
what the command writes in it parses as that format; every command refuses
misuse with one `Error:` line and exit status 2; every command's refusal
of what it was given is exit status 2; every command's help has an example.
The command list is click's own, so a new command is held to the same rules
(and fails here until it is given a case below).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from analysis.cli.formats import FORMATS
from analysis.cli.main import cli
from tests.evidence_helpers import make_bundle


def command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> dict[str, click.Command]:
    """Every runnable command by its path ("stats summary"), through the group's lazy lookup."""
    ctx = click.Context(group)
    found: dict[str, click.Command] = {}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        path = (*prefix, name)
        if isinstance(command, click.Group):
            found |= command_paths(command, path)
        else:
            found[" ".join(path)] = command
    return found


COMMANDS = command_paths(cli)


def formats_of(command: click.Command) -> list[str]:
    for param in command.params:
        if param.name == "fmt":
            assert isinstance(param.type, click.Choice)
            return [str(c) for c in param.type.choices]
    return []


FORMATTED = [(path, fmt) for path, command in COMMANDS.items() for fmt in formats_of(command)]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A records file, a log holding those matches, and their stored analyses."""
    tmp = tmp_path_factory.mktemp("dialect")
    records, db = tmp / "m.jsonl", tmp / "log.duckdb"
    lines = []
    for seats, count in ((2, 3), (4, 2)):
        out = invoke("record", "--seats", str(seats), "--matches", str(count), "--bots", "greedy")
        assert out.exit_code == 0, out.output
        lines += out.stdout.splitlines()
    records.write_text("\n".join(lines) + "\n")
    done = invoke("import", str(records), "--db", str(db), "--workers", "1")
    assert done.exit_code == 0, done.output
    listed = invoke(
        "query", "SELECT match_id FROM matches ORDER BY 1", "--db", str(db), "--format", "csv"
    )
    match = listed.stdout.splitlines()[1]
    done = invoke("analyze", match, "--db", str(db), "--rollouts", "2", "--workers", "1")
    assert done.exit_code == 0, done.output
    make_bundle(tmp / "bundle", 1)
    return {
        "records": str(records),
        "db": str(db),
        "match": match,
        "tmp": str(tmp),
        "bundle": str(tmp / "bundle"),
    }


RUNS: dict[str, Callable[[dict[str, str]], list[str]]] = {
    "query": lambda w: ["query", "SELECT match_id, seats, finished FROM matches", "--db", w["db"]],
    "analysis": lambda w: ["analysis", "SELECT * FROM decisions", "--db", w["db"]],
    "matches": lambda w: ["matches", "--db", w["db"]],
    "replay": lambda w: ["replay", w["match"], "--db", w["db"], "--round", "0"],
    "audit": lambda w: ["audit", w["records"], "--workers", "1"],
    "import": lambda w: ["import", w["records"], "--db", w["db"], "--workers", "1"],
    "analyze": lambda w: [
        "analyze", w["match"], "--db", w["db"], "--rollouts", "2", "--workers", "1", "--no-store",
    ],
    "stats sniff-timing": lambda w: ["stats", "sniff-timing", "--records", w["records"]],
    "stats summary": lambda w: ["stats", "summary", "--records", w["records"]],
    "stats players": lambda w: ["stats", "players", "--db", w["db"]],
    "tournament": lambda w: [
        "tournament", "--bots", "greedy,random", "--deals", "1", "--round-limit", "1",
        "--target", "10000", "--workers", "1", "--db", w["db"],
    ],
    "verify": lambda w: ["verify", w["bundle"], "--workers", "1"],
}  # fmt: skip
"""How to run each command that has --format on the `world`."""


def parses_as(fmt: str, text: str) -> None:
    """`text` is what `fmt` promises (docs/cli.md)."""
    assert text.strip(), "no output"
    if fmt == "json":
        json.loads(text)  # one document, whole
    elif fmt == "jsonl":
        for line in text.splitlines():
            assert isinstance(json.loads(line), dict), line
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(text)))
        assert len(rows) >= 2, text
        assert len({len(row) for row in rows}) == 1, "rows of different widths"
    else:  # table or text: for people, and not accidentally a program's format
        with pytest.raises(json.JSONDecodeError):
            json.loads(text)


def test_every_format_name_is_of_the_one_vocabulary() -> None:
    assert FORMATTED
    for path, fmt in FORMATTED:
        assert fmt in FORMATS, (path, fmt)


def test_every_command_with_a_format_has_a_case_here() -> None:
    assert {path for path, _ in FORMATTED} == set(RUNS)


@pytest.mark.parametrize(("path", "fmt"), FORMATTED, ids=[f"{p} {f}" for p, f in FORMATTED])
def test_each_format_each_command_accepts_parses_as_that_format(
    world: dict[str, str], path: str, fmt: str
) -> None:
    result = CliRunner().invoke(cli, [*RUNS[path](world), "--format", fmt])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    parses_as(fmt, result.stdout)


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_misuse_is_one_error_line_and_exit_2(path: str) -> None:
    result = CliRunner().invoke(cli, [*path.split(), "--no-such-option"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: No such option"), lines[0]
    assert f"'sniff {path} -h' shows the options" in lines[0]


REFUSALS: dict[str, Callable[[dict[str, str]], list[str]]] = {
    "analysis": lambda w: ["analysis", "SELECT 1", "--db", str(Path(w["tmp"]) / "none.duckdb")],
    "analyze": lambda w: ["analyze", "no-such-match", "--db", w["db"]],
    "arena-bot": lambda w: [
        "arena-bot",
        "--server",
        "127.0.0.1:1",
        "--name",
        "no spaces",
        "--arena-key-file",
        w["records"],
    ],
    "audit": lambda w: ["audit", "--db", w["db"], "no-such-match"],
    "demo": lambda w: ["demo", "--db", w["tmp"]],
    "export": lambda w: ["export", "no-such-match", "--db", w["db"]],
    "import": lambda w: ["import", str(Path(w["tmp"]) / "none.jsonl"), "--db", w["db"]],
    "keygen": lambda w: ["keygen", w["records"]],  # an existing file is never overwritten
    "matches": lambda w: ["matches", "--db", w["records"]],
    "play": lambda w: ["play", "--seats", "2", "--bots", "greedy,random,greedy"],
    "proof": lambda w: ["proof", "no-such-match", "--db", w["db"]],
    "query": lambda w: ["query", "DELETE FROM events", "--db", w["db"]],
    "record": lambda w: ["record", "--seats", "2", "--bots", "greedy,random,greedy"],
    "recover": lambda w: ["recover", "--db", str(Path(w["tmp"]) / "none.duckdb")],
    "replay": lambda w: ["replay", "no-such-match", "--db", w["db"]],
    "serve": lambda w: [
        "serve",
        "--port",
        "0",
        "--tls-cert",
        w["records"],
        "--tls-key",
        w["records"],
        "--db",
        str(Path(w["tmp"]) / "s.duckdb"),
    ],
    "simulate": lambda w: ["simulate", "--db", w["db"], "--resume", "no-such-run"],
    "stats facts": lambda w: [
        "stats",
        "facts",
        "--records",
        str(Path(w["tmp"]) / "none.jsonl"),
        "-o",
        w["tmp"],
    ],
    "stats sniff-timing": lambda w: [
        "stats",
        "sniff-timing",
        "--records",
        w["records"],
        "--seats",
        "3",
    ],
    "stats summary": lambda w: ["stats", "summary", "--records", w["records"], "--seats", "3"],
    "stats players": lambda w: ["stats", "players", "--db", w["db"], "--rollouts", "999"],
    "tournament": lambda w: ["tournament", "--bots", "greedy", "--db", w["db"]],
    "verify": lambda w: ["verify", w["tmp"]],
}
"""For each command, something it refuses (not a mistake click finds in the command line)."""


def test_every_command_has_a_refusal_case_here() -> None:
    assert set(REFUSALS) == set(COMMANDS)


@pytest.mark.parametrize("path", sorted(REFUSALS))
def test_a_refusal_is_one_error_line_and_exit_2(world: dict[str, str], path: str) -> None:
    result = CliRunner().invoke(cli, REFUSALS[path](world))
    assert result.exit_code == 2, (result.exception, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: "), lines[0]
    assert "shows the options" not in lines[0]  # the command's own refusal, not click's


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_command_has_help_with_an_example(path: str) -> None:
    result = CliRunner().invoke(cli, [*path.split(), "--help"])
    assert result.exit_code == 0
    assert f"Example: sniff {path}" in result.output, result.output


@pytest.mark.parametrize("path", [[], ["stats"]], ids=["sniff", "sniff stats"])
def test_a_group_given_no_command_shows_its_help_not_an_error_line(path: list[str]) -> None:
    result = CliRunner().invoke(cli, path)
    assert result.output.startswith("Usage: "), result.output
    assert "Commands:" in result.output

"""The example record of docs/records.md is what a reader gets by running its command.

The page's `sniff record` line is run as written, and the record it writes is compared,
field for field, with the record the page shows spread over several lines. The page's
`sniff audit --format jsonl` line (the record with its third points claim made 15) is
compared with what the audit prints for that edit.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.service_helpers import REPO

pytestmark = pytest.mark.slow

RECORDS = REPO / "docs" / "records.md"


def page() -> str:
    return RECORDS.read_text(encoding="utf-8")


def documented_command() -> list[str]:
    """The `sniff record` line of the example."""
    text = page()
    start = text.index("## An example")
    block = re.search(r"```sh\n(sniff record[^\n]*)\n```", text[start:])
    assert block is not None, "the example shows the command that writes its record"
    return shlex.split(block.group(1))


def documented_record() -> dict[str, Any]:
    """The record the example shows (spread over several lines)."""
    text = page()
    start = text.index("## An example")
    block = re.search(r"```json\n(\{.*?\n\})\n```", text[start:], re.S)
    assert block is not None, "the example shows its record"
    record: dict[str, Any] = json.loads(block.group(1))
    return record


def documented_audit_line() -> dict[str, Any]:
    """The `--format jsonl` line the page shows for the record with a wrong points claim."""
    text = page()
    start = text.index("With `--format jsonl` the audit prints")
    block = re.search(r"```json\n(\{[^\n]*\})\n```", text[start:])
    assert block is not None, "the page shows a line of the audit's JSON output"
    line: dict[str, Any] = json.loads(block.group(1))
    return line


def sniff(args: list[str], cwd: Path, *, ok: bool = True) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "sniff"
    done = subprocess.run(
        [str(exe), *args[1:]], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    assert (done.returncode == 0) is ok, done.stderr
    return done


def test_the_example_record_is_what_its_command_writes(tmp_path: Path) -> None:
    command = documented_command()
    assert command[:2] == ["sniff", "record"]
    output = command[command.index("-o") + 1]
    sniff(command, tmp_path)
    lines = (tmp_path / output).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1, "the command writes one record, on one line"
    written = json.loads(lines[0])
    shown = documented_record()
    assert written == shown
    assert list(written) == list(shown), "the page shows the fields in the order written"
    assert sniff(["sniff", "audit", output], tmp_path).stdout == f"{written['id']}: ok\n"


def test_the_audit_line_shown_is_what_the_audit_prints_for_a_wrong_points_claim(
    tmp_path: Path,
) -> None:
    record = documented_record()
    record["rounds"][0]["claims"]["points"][2] = 15  # "round 0's third points claim becomes 15"
    (tmp_path / "m.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    done = sniff(["sniff", "audit", "m.jsonl", "--format", "jsonl"], tmp_path, ok=False)
    assert json.loads(done.stdout) == documented_audit_line()

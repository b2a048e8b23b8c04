"""The worked example of docs/rules.md is what a reader gets by running its commands.

The page's commands are run as written (`sniff simulate ... --seed 1067`, then `sniff
replay`), and every row of its table of round 1 (seat, move, sum of the counted ends,
points) and the scores it states are compared with the replay's steps.
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

RULES = REPO / "docs" / "rules.md"


def documented_commands() -> list[list[str]]:
    """The `sniff simulate` and `sniff replay` lines of the worked examples' code block."""
    text = RULES.read_text(encoding="utf-8")
    start = text.index("## Worked examples")
    block = re.search(r"```sh\n(sniff simulate.*?)```", text[start:], re.S)
    assert block is not None, "the worked examples show how to store and replay the match"
    return [shlex.split(line) for line in block.group(1).splitlines() if line.strip()]


def documented_round_1() -> list[tuple[int, str, int | None, int | None]]:
    """(seat, move, sum, points) of each row of the table of round 1."""
    text = RULES.read_text(encoding="utf-8")
    start = text.index("### A round with the Sniff led (round 1)")
    end = text.index("###", start + 4)
    rows = []
    for line in text[start:end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not cells[0].isdigit():
            continue
        move = re.match(r"`([^`]+)`", cells[2])
        assert move is not None, line
        rows.append((int(cells[1]), move.group(1), _number(cells[4]), _number(cells[5])))
    assert len(rows) >= 10, "the table of round 1 has its rows"
    return rows


def _number(cell: str) -> int | None:
    """A table cell's figure (bold or not), None for an empty cell."""
    bare = cell.strip("*")
    return int(bare) if bare.isdigit() else None


def sniff(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "sniff"
    done = subprocess.run(
        [str(exe), *args[1:]], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return done


def test_the_worked_example_of_round_1_is_what_its_commands_replay(tmp_path: Path) -> None:
    simulate, replay_round_1, _ = documented_commands()
    assert simulate[:2] == ["sniff", "simulate"]
    assert replay_round_1[:2] == ["sniff", "replay"]
    sniff(simulate, tmp_path)
    steps: list[dict[str, Any]] = [
        json.loads(line)
        for line in sniff([*replay_round_1, "--format", "jsonl"], tmp_path).stdout.splitlines()
    ]
    actions = [s for s in steps if s.get("round") == 1 and s.get("action") is not None]
    documented = documented_round_1()
    replayed = [
        (
            s["seat"],
            s["move"],
            None if s["move"] == "draw" else s["ends_sum"],
            None if s["move"] == "draw" else s["points"],
        )
        for s in actions[: len(documented)]
    ]
    assert replayed == documented
    lead = actions[0]
    before = list(lead["scores"])
    before[lead["seat"]] -= lead["points"]
    assert before == [40, 45], "the page says the scores stand at 40 to 45 before the lead"
    last = actions[len(documented) - 1]
    assert last["scores"] == [115, 25], "the page says the scores become 115 to 25"

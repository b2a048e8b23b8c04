"""docs/rules.md §5's Position A, replayed from a real log: counted ends, sums, points, sides."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from analysis.replay.source import load_replay
from tests.replay_helpers import (
    POSITION_A_COUNTED,
    POSITION_A_MOVES,
    POSITION_A_OPEN,
    POSITION_A_POINTS,
    POSITION_A_SUMS,
    position_a_events,
    write_log,
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_log(tmp_path_factory.mktemp("a") / "log.duckdb", [position_a_events()])


def _check(steps: list[dict[str, object]]) -> None:
    assert [s["move"] for s in steps[:9]] == list(POSITION_A_MOVES)
    for i, step in enumerate(steps[:9]):
        counted = Counter((c["tile"], c["value"]) for c in step["counted_ends"])  # type: ignore[attr-defined]
        assert counted == Counter(POSITION_A_COUNTED[i]), f"step {i + 1}"
        assert step["ends_sum"] == POSITION_A_SUMS[i], f"step {i + 1}"
        assert step["points"] == POSITION_A_POINTS[i], f"step {i + 1}"
        if i + 1 in POSITION_A_OPEN:
            opened = sorted((o["tile"], o["side"], o["value"]) for o in step["open_sides"])  # type: ignore[attr-defined]
            assert opened == sorted(POSITION_A_OPEN[i + 1]), f"step {i + 1}"
    assert steps[8]["scores"] == [15, 5]


@pytest.mark.slow
def test_replay_of_position_a_gives_the_rule_books_figures_step_by_step(db: Path) -> None:
    rp = load_replay(db, "position-a")
    _check([s.to_json() for s in rp.steps])
    assert rp.steps[1].sniff == "1-1"
    assert rp.info.finished


@pytest.mark.slow
def test_sniff_replay_json_of_position_a_gives_the_same_figures(db: Path) -> None:
    sniff = Path(sys.executable).parent / "sniff"
    done = subprocess.run(
        [str(sniff), "replay", "position-a", "--db", str(db), "--round", "0", "--format", "jsonl"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    steps = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(s["match_id"] == "position-a" and s["round"] == 0 for s in steps)
    _check(steps)


@pytest.mark.slow
def test_text_replay_of_position_a_shows_each_sum_and_its_points(db: Path) -> None:
    from analysis.replay.text import replay_text

    rp = load_replay(db, "position-a")
    text = replay_text(rp, rp.steps[:9])
    for total, points in zip(POSITION_A_SUMS, POSITION_A_POINTS, strict=True):
        assert f"= {total} -> {points} points" in text
    assert "1-1 Sniff" in text
    # After step 9 every side of the Sniff holds a tile: it shows no mark of its own.
    last = text.split("step 8 ")[1]
    assert "branch_a: 1-5 > 5-5 > 0-5 low o0 *0" in last
    assert "branch_b: 1-3 high o3 *3" in last

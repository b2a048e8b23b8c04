"""Logs for the replay tests: real DuckDB files written through the storage API.

Position A (docs/rules.md §5) is played from an explicit deal: seat 0 leads and
the two seats make the nine placements of the rule book's table in turn,
then greedy bots finish the match, so the log also holds round ends and a
match end.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from analysis.bot_matches import bot_match_events
from service.match_recorder import EventRecorder
from service.storage import EventLog, LogEvent
from sniff import Deal, GreedyBot, Phase, Tile, view
from tests.test_rules_worked_examples import POSITION_A, POSITION_A_OPEN_SIDES

# The rule book's table, kept once in the worked-example tests.
POSITION_A_MOVES = tuple(row[0] for row in POSITION_A)
"""The nine placements of Position A, as seats 0 and 1 make them in turn."""
POSITION_A_COUNTED = tuple(row[1] for row in POSITION_A)
"""docs/rules.md §5's counted contributions (tile, value) after each step."""
POSITION_A_SUMS = tuple(row[2] for row in POSITION_A)
POSITION_A_POINTS = tuple(row[3] for row in POSITION_A)
POSITION_A_OPEN = POSITION_A_OPEN_SIDES
"""docs/rules.md §5's open sides (tile, side, value) after the listed steps (counted from 1)."""


def _tiles(text: str) -> list[Tile]:
    return [Tile.parse(t) for t in text.split()]


POSITION_A_DEAL = Deal(
    (
        tuple(_tiles("1-4 4-4 1-2 5-5 1-3 2-2 6-6")),
        tuple(_tiles("1-1 3-4 1-5 0-5 0-0 2-3 3-6")),
    ),
    tuple(_tiles("0-1 0-2 0-3 0-4 0-6 1-6 2-4 2-5 2-6 3-3 3-5 4-5 4-6 5-6")),
    0,
)


def position_a_events(match_id: str = "position-a", *, finish: bool = True) -> list[LogEvent]:
    """A 2-seat match whose first round opens with Position A; bots play it out."""
    recorder = EventRecorder(match_id, 2, seed=11, deal=POSITION_A_DEAL)
    for move in POSITION_A_MOVES:
        recorder.apply(move)
    bots = [GreedyBot(1), GreedyBot(2)]
    match = recorder.match
    while finish and match.phase is not Phase.OVER:
        if match.phase is Phase.AWAITING_DEAL:
            recorder.deal()
        else:
            recorder.apply(bots[match.turn].choose(view(match, match.turn)))
    return recorder.events


def write_log(path: Path, matches: Iterable[Sequence[LogEvent]]) -> Path:
    """A real event log file holding the matches' events."""
    with EventLog(path) as log:
        for events in matches:
            log.append(list(events))
    return path


def sample_log(path: Path) -> Path:
    """Position A, one finished bot match of each size, and an unfinished one."""
    return write_log(
        path,
        [
            position_a_events(),
            bot_match_events("two-seats", 2, 1),
            bot_match_events("three-seats", 3, 2),
            bot_match_events("four-seats", 4, 3),
            bot_match_events("in-play", 3, 4, max_actions=30),
        ],
    )

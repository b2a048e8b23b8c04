"""The HTML replay in a real headless Chromium: step through whole matches with the arrow
keys and the slider, and check what is drawn against the engine at every step."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from analysis.bot_matches import bot_match_events
from analysis.replay.html import match_page
from analysis.replay.source import load_replay
from service.storage import LogEvent
from sniff import Deal, Match, Move, Tile
from tests.browser import Browser, find_chromium
from tests.helpers import absent, need
from tests.replay_helpers import position_a_events, write_log

pytestmark = pytest.mark.browser

READ_PAGE = """(() => {
  const layer = document.getElementById('board-layer');
  const tiles = [...layer.querySelectorAll('[data-tile]')].map(g => [
    g.dataset.tile,
    [...g.querySelectorAll('use[data-pips]')].map(u => +u.dataset.pips).sort((a, b) => a - b),
  ]);
  const marks = sel => [...layer.querySelectorAll(sel)].map(e =>
    [e.dataset.open || e.dataset.counted, +e.dataset.value]).sort();
  const pts = document.getElementById('points').dataset.value;
  return {
    step: +document.body.dataset.step,
    slider: +document.getElementById('slider').value,
    tiles: tiles,
    open: marks('[data-open]'),
    counted: marks('[data-counted]'),
    ends_sum: +document.getElementById('ends-sum').dataset.value,
    points: pts === '' ? null : +pts,
    scores: [...document.querySelectorAll('#scores tr')].map(tr => +tr.dataset.score),
    move: document.getElementById('move').textContent,
  };
})()"""


def engine_steps(events: Sequence[LogEvent]) -> list[dict[str, Any]]:
    """What every step must show, computed by the engine from the logged deals and moves."""
    expected: list[dict[str, Any]] = []
    match: Match | None = None
    for e in events:
        d = e.detail or {}
        if e.kind == "match_created":
            match = Match(d["seats"], seed=d["seed"], target=d["target"], auto_deal=False)
        elif e.kind == "round_dealt":
            assert match is not None
            hands = [[Tile.parse(t) for t in h] for h in d["hands"]]
            match.deal(Deal.of(hands, [Tile.parse(t) for t in d["boneyard"]], d["leader"]))
        elif e.kind == "action":
            assert match is not None
            assert e.move is not None
            result = match.apply(Move.parse(e.move))
            layout = match.layout
            tiles = [str(m.tile) for m in layout.placements]
            expected.append(
                {
                    "tiles": [[t, sorted((Tile.parse(t).low, Tile.parse(t).high))] for t in tiles],
                    "open": sorted([f"{o.tile}:{o.side}", o.value] for o in layout.open_sides()),
                    "counted": sorted(
                        [f"{c.tile}:{c.side}", c.value] for c in layout.counted_ends()
                    ),
                    "ends_sum": layout.ends,
                    "points": result.points if result.move.is_placement else None,
                    "scores": list(match.seat_scores()),
                    "move": e.move,
                }
            )
    return expected


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    need("websocket", "pip install -e '.[dev]' (websocket-client)")
    if find_chromium() is None:
        absent("Chromium", "run scripts/install_browser.sh")
    b = Browser()
    try:
        yield b
    finally:
        b.close()


MATCHES: dict[str, Callable[[], list[LogEvent]]] = {
    "position-a": position_a_events,
    "four-seats": lambda: bot_match_events("four-seats", 4, 21, ("random", "greedy")),
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[dict[str, Any]]]]:
    directory = tmp_path_factory.mktemp("pages")
    events = {name: make() for name, make in MATCHES.items()}
    db = write_log(directory / "log.duckdb", events.values())
    out = {}
    for name, evs in events.items():
        page = directory / f"{name}.html"
        page.write_text(match_page(load_replay(db, name)), encoding="utf-8")
        out[name] = (page, engine_steps(evs))
    return out


def assert_shows(shown: dict[str, Any], expected: dict[str, Any], step: int) -> None:
    assert shown["step"] == step
    assert shown["slider"] == step
    for key in ("tiles", "open", "counted", "ends_sum", "points", "scores"):
        assert shown[key] == expected[key], (step, key, shown[key], expected[key])
    assert expected["move"] in shown["move"] or expected["move"] == "draw"


@pytest.mark.parametrize("name", list(MATCHES))
def test_arrow_keys_step_through_the_whole_match_drawing_what_the_engine_says(
    browser: Browser, pages: dict[str, tuple[Path, list[dict[str, Any]]]], name: str
) -> None:
    page, expected = pages[name]
    browser.open(page.as_uri())
    assert browser.evaluate("performance.getEntriesByType('resource').length") == 0
    assert_shows(browser.evaluate(READ_PAGE), expected[0], 0)
    for step in range(1, len(expected)):
        browser.press("ArrowRight")
        assert_shows(browser.evaluate(READ_PAGE), expected[step], step)
    browser.press("ArrowRight")  # past the end: stays on the last step
    assert_shows(browser.evaluate(READ_PAGE), expected[-1], len(expected) - 1)
    browser.press("Home")
    assert_shows(browser.evaluate(READ_PAGE), expected[0], 0)
    browser.press("End")
    assert_shows(browser.evaluate(READ_PAGE), expected[-1], len(expected) - 1)
    for step in range(len(expected) - 2, len(expected) - 40, -1):
        browser.press("ArrowLeft")
        assert_shows(browser.evaluate(READ_PAGE), expected[step], step)


def test_the_slider_moves_to_where_it_is_clicked_and_with_its_own_keys(
    browser: Browser, pages: dict[str, tuple[Path, list[dict[str, Any]]]]
) -> None:
    page, expected = pages["four-seats"]
    browser.open(page.as_uri())
    seen = []
    for fraction in (0.1, 0.5, 0.9, 0.3):
        left, top, width, height = browser.evaluate(
            "(() => { const s = document.getElementById('slider');"
            " s.scrollIntoView({block: 'center'}); const r = s.getBoundingClientRect();"
            " return [r.left, r.top, r.width, r.height]; })()"
        )
        browser.click(left + fraction * width, top + height / 2)
        shown = browser.evaluate(READ_PAGE)
        step = shown["step"]
        seen.append(step)
        assert abs(step - fraction * (len(expected) - 1)) <= 0.05 * len(expected)
        assert_shows(shown, expected[step], step)
    assert len(set(seen)) == 4
    # Focused, the slider takes the arrow keys itself and the page follows it.
    start = seen[-1]
    for k in range(1, 6):
        browser.press("ArrowRight")
        assert_shows(browser.evaluate(READ_PAGE), expected[start + k], start + k)

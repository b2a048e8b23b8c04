"""`sniff replay --html` with a stored analysis (#20): each decision's equity lost and best move
beside its step, errors marked in the move list, exactly as `sniff analyze` stored them; and
the page in a real headless Chromium showing them as it steps."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analysis.cli.main import cli
from analysis.rollout.store import match_analysis, match_luck_events, store_root
from tests.replay_helpers import sample_log

MATCH = "two-seats"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def page_data(page: Path) -> dict[str, Any]:
    found = re.search(
        r'<script type="application/json" id="replay-data">(.*?)</script>',
        page.read_text(encoding="utf-8"),
        re.S,
    )
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1).replace("<\\/", "</"))
    return data


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = sample_log(tmp_path_factory.mktemp("log") / "log.duckdb")
    code, _, err = run("analyze", MATCH, "--db", str(db), "--rollouts", "8", "--format", "csv")
    assert code == 0, err
    return db


def test_the_page_shows_each_decision_as_stored(analysed: Path, tmp_path: Path) -> None:
    page = tmp_path / "m.html"
    code, _, err = run("replay", MATCH, "--db", str(analysed), "--html", str(page))
    assert code == 0, err
    assert err.startswith("Note: the page shows the stored analysis of ")
    data = page_data(page)
    assert data["analysed"] is True
    judged, _ = match_analysis(store_root(analysed), MATCH)
    shown = {(s["round"], s["action"]): s["a"] for s in data["steps"] if "a" in s}
    assert shown.keys() == judged.keys()
    for key, a in shown.items():
        stored = judged[key]
        assert a["best"] == stored["best"]
        assert a["loss"] == pytest.approx(stored["loss"])
        assert a["exact"] == stored["exact"]
        assert a["phase"] in ("lead", "sniff", "open", "empty")
    # The luck of every stored chance event is shown once: draws at their step, the lot and
    # the deals at the round's first action.
    luck = match_luck_events(store_root(analysed), MATCH)
    assert luck
    shown_luck = [
        (s["round"], s["action"], e["kind"], e["seat"])
        for s in data["steps"]
        for e in s.get("l", ())
    ]
    stored_luck = [
        (r, a if a >= 0 else 0, e["kind"], e["seat"])
        for (r, a), events in luck.items()
        for e in events
    ]
    assert sorted(shown_luck) == sorted(stored_luck)
    errors = [k for k, a in judged.items() if a["flag"]]
    html = page.read_text(encoding="utf-8")
    assert html.count('class="err"') + html.count('class="large"') + len(
        re.findall(r'class="pts (?:err|large)"', html)
    ) == len(errors)


def test_without_a_stored_analysis_or_with_no_analysis_the_page_is_as_before(
    analysed: Path, tmp_path: Path
) -> None:
    plain = tmp_path / "plain.html"
    code, _, err = run(
        "replay", MATCH, "--db", str(analysed), "--html", str(plain), "--no-analysis"
    )
    assert code == 0, err
    assert err == ""
    data = page_data(plain)
    assert data["analysed"] is False
    assert not any("a" in s for s in data["steps"])
    other = tmp_path / "other.html"
    code, _, err = run("replay", "three-seats", "--db", str(analysed), "--html", str(other))
    assert code == 0, err
    assert not page_data(other)["analysed"]


@pytest.mark.browser
def test_the_browser_shows_the_decision_of_each_step(analysed: Path, tmp_path: Path) -> None:
    from tests.browser import Browser, find_chromium
    from tests.helpers import absent, need

    need("websocket", "pip install -e '.[dev]' (websocket-client)")
    if find_chromium() is None:
        absent("Chromium", "run scripts/install_browser.sh")
    page = tmp_path / "m.html"
    assert run("replay", MATCH, "--db", str(analysed), "--html", str(page))[0] == 0
    data = page_data(page)
    browser = Browser()
    try:
        browser.open(page.as_uri())
        for i, step in enumerate(data["steps"][:60]):
            if i:
                browser.press("ArrowRight")
            text = browser.evaluate("document.getElementById('decision').textContent")
            if "a" in step:
                assert f"best {step['a']['best']}" in text, (i, text)
            else:
                assert text.startswith("no decision (one legal move)"), (i, text)
            for event in step.get("l", ()):
                assert f"{event['luck']:+.2f}".lstrip("+") in text, (i, text)
    finally:
        browser.close()

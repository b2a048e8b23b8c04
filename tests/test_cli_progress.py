"""The one progress bar: drawn on stderr when it is a terminal or when asked, never otherwise."""

from __future__ import annotations

import io

from analysis.cli.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_asked_for_draws_label_count_rate_and_ends_its_line() -> None:
    out = io.StringIO()
    bar = Progress(True, "auditing", unit="matches", out=out)
    bar.start(10)
    for _ in range(10):
        bar.update(1)
    bar.finish()
    bar.finish()  # a second finish draws nothing more
    text = out.getvalue()
    assert text.endswith("\n")
    assert text.count("\n") == 1
    last = text.rstrip("\n").split("\r")[-1]
    assert last.startswith("auditing [" + "#" * 30 + "] 10/10")
    assert "matches/s" in last
    assert "ETA" in last


def test_no_bar_when_the_output_is_not_a_terminal_and_none_was_asked_for() -> None:
    out = io.StringIO()
    bar = Progress(False, "importing", out=out)
    bar.start(5)
    bar.update(5)
    bar.finish()
    assert out.getvalue() == ""


def test_a_terminal_gets_the_bar_unasked_and_a_resumed_run_starts_part_done() -> None:
    out = Terminal()
    bar = Progress(False, "simulating", out=out)
    bar.start(100, done=40)
    bar.finish()
    assert "40/100" in out.getvalue()
    assert "#" * 12 + "-" * 18 in out.getvalue()


def test_an_empty_total_draws_nothing() -> None:
    out = io.StringIO()
    bar = Progress(True, "rollouts", out=out)
    bar.start(0)
    bar.update(3)
    bar.finish()
    assert out.getvalue() == ""

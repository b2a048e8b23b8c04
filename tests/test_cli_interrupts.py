"""Ctrl-C during a DuckDB write: the write finishes, then the command is interrupted."""

from __future__ import annotations

import os
import signal
import threading

import duckdb
import pytest

from analysis.cli.interrupts import Interrupts

ROWS = 600_000_000
SLOW = f"SELECT count(*) FROM range({ROWS}) t(i) WHERE i % 7 = 3"
"""A second or two of DuckDB work on the main thread, long enough to be interrupted."""


def _ctrl_c_after(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


@pytest.mark.slow
def test_ctrl_c_inside_duckdb_work_comes_out_as_a_runtime_error_without_the_hold() -> None:
    """Why the hold exists: DuckDB turns the handler's KeyboardInterrupt into its own error."""
    con = duckdb.connect()
    with Interrupts():
        timer = _ctrl_c_after(0.3)
        try:
            with pytest.raises(RuntimeError, match="interrupted"):
                con.execute(SLOW).fetchall()
        finally:
            timer.cancel()


def _signal_and_spin(signum: int) -> None:
    os.kill(os.getpid(), signum)
    for _ in range(1000):  # the handler runs between bytecodes
        pass


@pytest.mark.slow
def test_ctrl_c_inside_a_held_write_lets_it_finish_then_interrupts() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (n BIGINT)")
    finished = []

    def held_insert(interrupts: Interrupts) -> None:
        timer = _ctrl_c_after(0.3)
        try:
            with interrupts.held():
                con.execute(f"INSERT INTO t {SLOW}")
                finished.append(True)
        finally:
            timer.cancel()

    with Interrupts() as interrupts, pytest.raises(KeyboardInterrupt):
        held_insert(interrupts)
    assert finished
    assert con.execute("SELECT n FROM t").fetchall() == [((ROWS - 1 - 3) // 7 + 1,)]


def test_ctrl_c_outside_the_hold_interrupts_at_once() -> None:
    with Interrupts(), pytest.raises(KeyboardInterrupt):
        _signal_and_spin(signal.SIGINT)


def test_sigterm_is_an_interruption_when_asked_for_and_the_old_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    before_int = signal.getsignal(signal.SIGINT)  # SIG_IGN when pytest runs as a background job

    def held_sigterm(interrupts: Interrupts) -> None:
        with interrupts.held():
            _signal_and_spin(signal.SIGTERM)

    with Interrupts(signal.SIGINT, signal.SIGTERM) as interrupts, pytest.raises(KeyboardInterrupt):
        held_sigterm(interrupts)
    assert signal.getsignal(signal.SIGTERM) is before
    assert signal.getsignal(signal.SIGINT) is before_int


def test_no_interruption_no_exception() -> None:
    with Interrupts() as interrupts, interrupts.held():
        pass

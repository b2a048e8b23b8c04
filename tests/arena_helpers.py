"""Arena bots for the tests: the sample arena bot (analysis/arena_bot.py) in threads."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping

from analysis.arena_bot import ArenaBotState, bot_factory, run_arena_bot
from service.arena import ARENA_KEY_HEADER
from sniff import Bot
from tests.helpers import HANG

KEY = "arena-key-for-tests"
ARENA = [(ARENA_KEY_HEADER, KEY)]
"""The call metadata of an arena call with the tests' key."""


@contextlib.contextmanager
def arena_bots(
    address: str,
    bots: Mapping[str, str | Callable[[int | None], Bot]],
    resume: Mapping[str, str] | None = None,
) -> Iterator[dict[str, ArenaBotState]]:
    """Bots named as the keys, of the kinds the values name (or made by them from their
    seeds), registered (with the `resume` secret given for their name) and playing until the
    block ends."""
    stop = threading.Event()
    resume = resume or {}
    states = {name: ArenaBotState(name, resume.get(name)) for name in bots}
    failures: list[Exception] = []

    def play(name: str, kind: str | Callable[[int | None], Bot]) -> None:
        make = bot_factory(kind) if isinstance(kind, str) else kind
        try:
            run_arena_bot(address, name, make, KEY, stop=stop, state=states[name])
        except Exception as exc:  # the test fails with it, not with a thread's warning
            failures.append(exc)

    threads = [
        threading.Thread(target=play, args=(name, kind), daemon=True) for name, kind in bots.items()
    ]
    for t in threads:
        t.start()
    try:
        for state in states.values():
            assert state.registered.wait(HANG), f"{state.name} did not register: {state.errors}"
        yield states
    finally:
        stop.set()
        for t in threads:
            t.join(HANG)
    assert not failures, failures

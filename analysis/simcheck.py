"""Which player a simulation uses: the kernel, checked against known matches, or the engine.

`sniff simulate` plays with the compiled kernel when it is built and the Python engine
otherwise (`SNIFF_KERNEL=python` forces the engine); both give the same matches
(tests/test_simulated_matches.py). A kernel built from other sources, or miscompiled,
must never be used silently: before a run, `choose_backend` plays a handful of known
matches in the kernel and compares their rows with the stored digests below (made by the
engine; `tests/test_simfacts.py` holds the engine to them). If one differs, the run plays
with the engine and one warning line says so.
"""

from __future__ import annotations

import hashlib
from typing import Final

import numpy as np

from analysis.simfacts import RawRows, engine_rows, kernel_rows
from sniff.simulated import MatchSettings

KNOWN: Final = (
    # (seats, bots, variant, round limit, seed): (winner, ended, rounds, first leader,
    # actions, scores...), digest of the match's rows
    ((2, ("greedy", "random"), "american", None, 1), "65cc12b1f40196c9"),
    ((3, ("random", "greedy"), "stubby", None, 7), "ea9670be426d443a"),
    ((4, ("greedy", "random"), "berndt", None, 11), "be2a99c97a81b990"),
    ((4, ("random",), "british", 5, 3), "ec9ded33be9ecb5f"),
    ((2, ("greedy",), "american", 8, 2**64 - 1), "e4d2fde3c7fb31cb"),
)
"""Known matches and the first 16 hex digits of SHA-256 over their rows (`digest`)."""


def digest(raw: RawRows) -> str:
    """SHA-256 over a match's rows: its match row, its rounds, and the decisions of its
    complete rounds (the kernel also returns those of a round cut by the win)."""
    rounds = raw.rounds
    keys = rounds[:, 0].astype(np.int64) * 65536 + rounds[:, 1]
    d = raw.decisions
    at = np.searchsorted(keys, d[:, 0].astype(np.int64) * 65536 + d[:, 1])
    d = d[rounds[at, 3].astype(bool)] if len(d) else d
    data = raw.matches.tobytes() + rounds.tobytes() + np.ascontiguousarray(d).tobytes()
    return hashlib.sha256(data).hexdigest()[:16]


def known_digests(backend: str) -> list[str]:
    """The digests of the known matches as `backend` plays them."""
    play = kernel_rows if backend == "c" else engine_rows
    out = []
    for (seats, bots, variant, limit, seed), _ in KNOWN:
        out.append(digest(play(MatchSettings(seats, bots, variant, None, limit), [seed])))
    return out


def kernel_agrees() -> bool:
    """Whether the built kernel plays the known matches as stored."""
    try:
        found = known_digests("c")
    except Exception:  # a broken build: anything it raises means "do not use it"
        return False
    return found == [expected for _, expected in KNOWN]


def choose_backend(warn: bool = True) -> str:
    """ "c" when the kernel is built, not refused by SNIFF_KERNEL and plays the known matches
    as stored; else "python" (with one warning line on stderr when the kernel disagrees)."""
    from sniff.playout import BACKEND

    if BACKEND != "c":
        return "python"
    if kernel_agrees():
        return "c"
    if warn:
        import click

        click.echo(
            "Warning: the compiled kernel does not play the known matches as stored; "
            "simulating with the Python engine instead",
            err=True,
        )
    return "python"

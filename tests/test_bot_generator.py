"""The `random` and `greedy` bots' generator: the kernel's `Xoshiro256` when the kernel is the
backend, `prng.Xoshiro256` with SNIFF_KERNEL=python, and the very same matches either way."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from analysis.bot_matches import bot_match
from sniff import bots, to_record
from sniff.backend import KERNEL_AVAILABLE
from sniff.prng import Xoshiro256
from tests.service_helpers import REPO


def _records(seats: int, names: list[str], variant: str) -> list[object]:
    return [
        to_record(bot_match(seats, seed, names, variant=variant, round_limit=3), f"m{seed}")
        for seed in range(4)
    ]


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("variant", ["american", "berndt"])
def test_bots_play_the_same_matches_with_either_generator(
    seats: int, variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not KERNEL_AVAILABLE:
        pytest.fail("the C playout kernel is not built (pip install -e .)")
    from sniff import _kernel

    names = ["greedy", "random"]
    monkeypatch.setattr(bots, "_GENERATOR", _kernel.Xoshiro256)
    by_kernel = _records(seats, names, variant)
    monkeypatch.setattr(bots, "_GENERATOR", Xoshiro256)
    by_python = _records(seats, names, variant)
    assert by_kernel == by_python


def test_the_bots_draw_from_the_kernel_when_it_is_the_backend() -> None:
    if not KERNEL_AVAILABLE:
        pytest.fail("the C playout kernel is not built (pip install -e .)")
    from sniff import _kernel

    assert type(bots.make_bot("random", 1).rng) is _kernel.Xoshiro256  # type: ignore[attr-defined]


@pytest.mark.slow
def test_sniff_kernel_python_gives_the_bots_the_python_generator() -> None:
    code = "from sniff import make_bot; print(type(make_bot('greedy', 1).rng).__module__)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**os.environ, "SNIFF_KERNEL": "python"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "sniff.prng"

"""Waiting for a condition, and optional dependencies: shared by every kind of test."""

from __future__ import annotations

import importlib
import os
import shutil
import time
from collections.abc import Callable
from types import ModuleType
from typing import TypeVar

import pytest
from hypothesis import settings

T = TypeVar("T")

REQUIRE_ALL = os.environ.get("SNIFF_REQUIRE_ALL") == "1" or os.environ.get("CI") == "true"
"""Fail instead of skip when an optional dependency is absent (scripts/check.sh sets it)."""

CI_EXAMPLES = 100
"""max_examples of the "ci" hypothesis profile (Hypothesis's own default)."""
DEV_EXAMPLES = 5
"""max_examples of the "dev" hypothesis profile, the default: a twentieth of "ci"."""

HANG = 60.0
"""How long `wait_until` waits by default: only a hang takes this long, never a pass."""


def wait_until(condition: Callable[[], T], what: str, timeout: float = HANG) -> T:
    """Return the first true value of `condition()`, called again and again; fail with `what`
    if none comes within `timeout` seconds (a bound against hangs, not a measure of speed)."""
    end = time.monotonic() + timeout
    pause = 0.001
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= end:
            pytest.fail(f"{what}: not so after {timeout:.0f} s")
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def absent(what: str, install: str) -> None:
    """Skip this test because `what` is absent (fail instead under REQUIRE_ALL)."""
    message = f"{what} is not available here: {install}"
    if REQUIRE_ALL:
        pytest.fail(f"{message} (SNIFF_REQUIRE_ALL or CI: every tier must run)")
    pytest.skip(message)


def need(module: str, install: str) -> ModuleType:
    """The optional module `module`, imported; if absent, skip (or fail under REQUIRE_ALL)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        absent(f"the Python module {module}", install)
        raise  # not reached: absent() raises


GO_TOOLS = ("go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc")
"""What clients/go/build.sh runs (scripts/install_go.sh installs them)."""


def need_go() -> None:
    """Skip (or fail under REQUIRE_ALL) unless the Go bot can be built here."""
    missing = [tool for tool in GO_TOOLS if shutil.which(tool) is None]
    if missing:
        absent(f"the Go toolchain ({', '.join(missing)})", "run `bash scripts/install_go.sh`")


def example_count(n: int) -> int:
    """A property test's example count: `n` under the "ci" hypothesis profile
    (HYPOTHESIS_PROFILE=ci, as scripts/check.sh sets), a twentieth of it (at least 2)
    under "dev", the default, so the quick tier runs every property test briefly."""
    profile = settings.default
    assert profile is not None  # hypothesis always has a loaded profile
    return max(2, n * profile.max_examples // CI_EXAMPLES)

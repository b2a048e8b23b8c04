"""Which implementation runs what has two: the compiled kernel (`_kernel.c`) or pure Python.

The playouts (`playout.py`) and the `random` and `greedy` bots' generator (`bots.py`) each
exist twice, a Python reference and its C transcription, which make the same choices from
the same seeds. The choice between them is made once, here, at import, so that one
setting moves both: the kernel when it is built; ``SNIFF_KERNEL=python`` forces the
reference (to check the kernel against it, or to time it); ``SNIFF_KERNEL=c`` requires
the kernel, and importing fails without it (`KernelChoiceError`, which the command line
reports in one line), as it does for any other value.
"""

from __future__ import annotations

import os
from typing import Final

from sniff.errors import KernelChoiceError

try:
    from sniff import _kernel as kernel
except ImportError:  # not built: the references play
    kernel = None  # type: ignore[assignment]

_FORCED: Final = os.environ.get("SNIFF_KERNEL", "").strip().lower()
if _FORCED not in ("", "c", "python"):
    raise KernelChoiceError(f"SNIFF_KERNEL={_FORCED!r}: use 'c' or 'python' (or leave it unset)")
if _FORCED == "c" and kernel is None:
    raise KernelChoiceError("SNIFF_KERNEL=c but the playout kernel sniff._kernel is not built")

KERNEL_AVAILABLE: Final = kernel is not None
"""True when the compiled kernel is importable (whatever `BACKEND` says)."""
BACKEND: Final = "c" if kernel is not None and _FORCED != "python" else "python"
"""The implementation used by default: "c" or "python"."""

__all__ = ["BACKEND", "KERNEL_AVAILABLE", "kernel"]

"""The log's files are readable by their owner only, from the moment they exist.

`<db>`, its `.wal` and `.journal` hold every live hand, boneyard and seed.
DuckDB creates the database file and the WAL itself, with mode 0666 less the
process umask (so 0644 by default), and deletes the WAL at every checkpoint
and creates a new one at the next commit. A chmod after the fact would leave
a moment in which another local user could open the file and keep reading
it through that descriptor; so every DuckDB call that may create a file runs
inside `owner_only()`, which sets the umask to 077 meanwhile.

The umask belongs to the process: while `owner_only()` holds it, files that
other threads create are private too (never less private). One lock orders
the changes, so two logs never restore each other's umask wrongly.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Final

PRIVATE: Final = 0o600
"""The mode of every file of the log."""

_umask_lock = threading.Lock()


@contextlib.contextmanager
def owner_only() -> Iterator[None]:
    """Files created inside are mode 0600 and directories 0700 (umask 077)."""
    with _umask_lock:
        old = os.umask(0o077)
        try:
            yield
        finally:
            os.umask(old)


def make_private(*paths: Path) -> None:
    """Narrow existing files (made by an older release) to 0600; absent ones are skipped."""
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_mode & 0o077:
                path.chmod(PRIVATE)


def private_temp_dir(db_path: Path) -> Path:
    """`<db>.tmp`, where DuckDB spills large queries, made (or narrowed to) mode 0700.

    DuckDB writes its spill files 0644 inside; the directory's mode keeps
    them to the owner. Left in place if DuckDB leaves files in it.
    """
    directory = Path(f"{db_path}.tmp")
    with owner_only():
        directory.mkdir(exist_ok=True)
    directory.chmod(0o700)
    return directory

"""Opening a log file: DuckDB's settings for it, and one open per file per process.

`connect` opens the file with this package's settings (external access off,
the configuration locked; the service's open also bounds threads and memory)
and names the process that holds a locked file. `claim` and `release` keep a
process from opening one file twice (`realpath_key` names the file).
"""

from __future__ import annotations

import os
import re
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import duckdb

from .errors import LogLocked, StorageError
from .files import owner_only

# Settings for every connection this package opens. External access off means
# no query can read or write files, ATTACH another database, or load
# extensions: a query is a question about the log and nothing else. Locking
# the configuration keeps a query from turning it back on.
_CONFIG: Final[dict[str, str | bool]] = {
    "enable_external_access": False,
    "lock_configuration": True,
}

# Added for the service's read-write open only: its queries share the machine
# with play, so they get one DuckDB thread and bounded memory (and spill).
# DuckDB has these settings per database instance, not per connection (and
# `lock_configuration` forbids changing them later), so they are set here.
# An offline read-only open keeps DuckDB's defaults.
_SERVICE_CONFIG: Final[dict[str, str | bool | int]] = {
    "threads": 1,
    "memory_limit": "1GB",
    "max_temp_directory_size": "1GB",
}

_LOCK_PID = re.compile(r"\(PID (\d+)\)")


# -- one open per file per process -------------------------------------------
#
# DuckDB shares one database instance between connections to the same path in
# a process. A second EventLog on that path would share the file silently with
# its own idea of each match's next seq, and a read-only open beside a
# read-write one fails with an obscure configuration error; refuse both here.

_registry_lock = threading.Lock()
_writers: set[str] = set()
_readers: Counter[str] = Counter()


def claim(key: str, write: bool) -> None:
    with _registry_lock:
        if key in _writers or (write and _readers[key]):
            raise LogLocked(f"{key} is already open in this process")
        if write:
            _writers.add(key)
        else:
            _readers[key] += 1


def release(key: str, write: bool) -> None:
    with _registry_lock:
        if write:
            _writers.discard(key)
        else:
            _readers[key] -= 1
            if _readers[key] <= 0:
                del _readers[key]


@dataclass(frozen=True, slots=True)
class Spill:
    """A read-only open's memory bound: DuckDB's `memory_limit`, and the directory its
    temporary data goes to beyond it (a read-only open's default is beside the log file,
    which a reader must never write)."""

    memory_limit: str
    directory: Path


def connect(
    path: Path, *, read_only: bool, threads: int = 1, spill: Spill | None = None
) -> duckdb.DuckDBPyConnection:
    """Open the file with this package's settings, naming a lock holder's pid.

    A read-write open creates a missing file mode 0600 (files.py); `threads` is its
    DuckDB threads (1 for the service, whose queries share the machine with play; a bulk
    writer with nothing else to do, `sniff simulate`, gives more).
    """
    try:
        if read_only and spill is None:
            return duckdb.connect(str(path), read_only=True, config=dict(_CONFIG))
        if read_only:
            assert spill is not None
            # DuckDB refuses a temp directory once external access is off: set it first,
            # then close access and lock the configuration, as _CONFIG does at once.
            con = duckdb.connect(
                str(path),
                read_only=True,
                config={"memory_limit": spill.memory_limit, "temp_directory": str(spill.directory)},
            )
            try:
                for name, value in _CONFIG.items():
                    con.execute(f"SET {name} = {str(value).lower()}")
            except BaseException:
                con.close()
                raise
            return con
        config: dict[str, str | bool | int | float | list[str]] = dict(_CONFIG)
        config.update(_SERVICE_CONFIG)
        config["threads"] = max(1, threads)
        with owner_only():
            return duckdb.connect(str(path), read_only=False, config=config)
    except duckdb.IOException as exc:
        text = str(exc)
        match = _LOCK_PID.search(text)
        if "lock" in text.lower():
            pid = int(match.group(1)) if match else None
            holder = f"process {pid}" if pid is not None else "another process"
            raise LogLocked(f"{path} is held by {holder}", pid) from exc
        raise StorageError(f"cannot open {path}: {text}") from exc
    except duckdb.ConnectionException as exc:
        raise LogLocked(f"{path} is already open in this process: {exc}") from exc


def realpath_key(path: str | os.PathLike[str]) -> tuple[Path, str]:
    """The path as given (made absolute) and the key that names its file."""
    absolute = Path(path).absolute()
    return absolute, os.path.realpath(absolute)

"""The owner sidecar: how a tool finds the service that holds a log file.

DuckDB lets one process open a file read-write and then no other process may
open it at all, not even read-only. So while the service runs, the CLI must
ask the service (its Query RPC) instead of opening the file. The service
writes `<db path>.owner.json` = {"pid": ..., "address": "127.0.0.1:PORT"} once
it listens, and removes it on a clean close; after a crash the file stays, so
`find_owner` believes it only while that pid is alive (and, on Linux, is still
the same process, not a later one given the same pid).

This module never opens the database file itself: closing any descriptor of
a file drops every POSIX lock the process holds on it, DuckDB's included.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Owner", "find_owner", "owner_path", "remove_owner", "write_owner"]


@dataclass(frozen=True, slots=True)
class Owner:
    """The process that holds a log file, and where its gRPC service listens."""

    pid: int
    address: str
    started: int | None = None  # /proc start time in clock ticks, where known
    query_token: str | None = None
    """The secret that the service's Query RPC asks for (the file is mode 0600)."""


def owner_path(db_path: str | os.PathLike[str]) -> Path:
    """`<db path>.owner.json`, next to the database file."""
    return Path(f"{os.fspath(db_path)}.owner.json")


def write_owner(
    db_path: str | os.PathLike[str], address: str, query_token: str | None = None
) -> Owner:
    """Announce this process as the owner of `db_path`, reachable at `address`.

    Written to a temporary file and renamed, so a reader never sees half a
    file.
    """
    owner = Owner(os.getpid(), address, _start_time(os.getpid()), query_token)
    target = owner_path(db_path)
    payload = {"pid": owner.pid, "address": owner.address}
    if owner.started is not None:
        payload["started"] = owner.started
    if query_token is not None:
        payload["query_token"] = query_token
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return owner


def remove_owner(db_path: str | os.PathLike[str]) -> None:
    """Remove the sidecar if this process wrote it (never another's)."""
    target = owner_path(db_path)
    owner = _read(target)
    if owner is not None and owner.pid == os.getpid():
        target.unlink(missing_ok=True)


def find_owner(db_path: str | os.PathLike[str]) -> Owner | None:
    """The live process that holds `db_path`, or None (no sidecar, or a stale one)."""
    owner = _read(owner_path(db_path))
    if owner is None or not _alive(owner.pid):
        return None
    if owner.started is not None:
        started = _start_time(owner.pid)
        if started is not None and started != owner.started:
            return None  # the pid now belongs to another process
    return owner


def _read(path: Path) -> Owner | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        pid, address = data["pid"], data["address"]
        started = data.get("started")
        token = data.get("query_token")
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing, half-written by hand, or not ours: no owner
    if not isinstance(pid, int) or not isinstance(address, str) or pid <= 0:
        return None
    return Owner(
        pid,
        address,
        started if isinstance(started, int) else None,
        token if isinstance(token, str) else None,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    return True


def _start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (start time), to tell a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after it.
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None

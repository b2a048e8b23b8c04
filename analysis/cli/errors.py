"""How the command line reports what went wrong: one line on stderr, never a traceback.

Exit statuses, for every command: 0 done (for `sniff audit`: every match
ok), 1 the command ran and found or met a problem (an audit's problems, a
query the log refused), 2 misuse (a bad option or argument, a file that is
not what the command needs, a port it cannot listen on), 70 an internal
error, a bug (`SNIFF_TRACEBACK=1` shows where).
"""

from __future__ import annotations

import errno
import os

import click

INTERNAL_ERROR = 70
"""sysexits.h's EX_SOFTWARE: distinct from an audit's 1, so a crash never reads as 'problems'."""


class Misuse(click.ClickException):
    """The command cannot run with what it was given: one `Error:` line, exit status 2.

    click's own usage errors (a bad option value) also exit 2 but print the
    usage lines too; this is for what only the command can find out (a file
    that is not an event log, a port in use).
    """

    exit_code = 2


class InternalError(click.ClickException):
    """An exception no command expected: reported in one line, exit status 70."""

    exit_code = INTERNAL_ERROR


def first_line(text: str) -> str:
    """A library's message in one line: DuckDB follows its first line with the query and a caret."""
    return next((line.strip() for line in text.splitlines() if line.strip()), text)


def show_tracebacks() -> bool:
    """SNIFF_TRACEBACK=1 lets unexpected exceptions through, for a developer to see where."""
    return os.environ.get("SNIFF_TRACEBACK", "") not in ("", "0")


def check_port_free(host: str, port: int) -> None:
    """Refuse, before the event log is touched, to serve on a port another process listens on.

    The server would fail to bind anyway, but only after opening (and
    perhaps creating) the log file; this probe keeps a refused start from
    changing anything. It refuses only when every address the host names is
    in use, as the server binds whichever it can; any other doubt is left to
    the server's own bind.
    """
    if port == 0:
        return
    import socket  # only `sniff serve` asks: no other command loads it

    try:
        infos = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as e:
        raise Misuse(f"cannot listen on {host}:{port}: {e.strerror}") from None
    in_use = 0
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as e:
                in_use += e.errno == errno.EADDRINUSE
    if infos and in_use == len(infos):
        raise Misuse(f"cannot listen on {host}:{port}: the port is in use by another process")


def startup_failure(exc: Exception, address: str, db_path: str) -> Misuse | None:
    """The one-line refusal of a service that could not start, or None for an unexpected error.

    The log cannot be opened (a path that cannot be created, a file that is
    not a DuckDB database or not a Sniff event log, a log another process
    holds), or the server cannot bind its address.
    """
    from service.storage import StorageError

    if isinstance(exc, StorageError | OSError):
        text = str(exc)
        return Misuse(text if db_path in text else f"{db_path}: {text}")
    if isinstance(exc, RuntimeError) and "bind" in str(exc).lower():  # grpc's refusal to bind
        return Misuse(f"cannot listen on {address}: the address is in use or not available here")
    return None

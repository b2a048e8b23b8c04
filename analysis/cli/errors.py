"""How the command line reports what went wrong: one line on stderr, never a traceback.

Exit statuses, for every command: 0 done (for `sniff audit`: every match
ok), 1 the command ran and found or met a problem (an audit's problems, a
query the log refused), 2 misuse (a bad option or argument, a file that is
not what the command needs, a port it cannot listen on), 70 an internal
error, a bug (`SNIFF_TRACEBACK=1` shows where).
"""

from __future__ import annotations

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

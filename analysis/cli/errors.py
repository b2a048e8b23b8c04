"""How the command line reports what went wrong: one line on stderr, never a traceback.

The one rule for every command (docs/cli.md): 0 done (for `sniff audit`:
every match ok), 1 problems found (an audit's or an import's, a log that
does not replay: `ProblemFound`), 2 misuse or refusal (a bad option or
argument, a file that is not what the command needs, a query the log
refuses, a start that cannot happen: `Misuse`), 70 an internal error, a
bug (`InternalError`; `SNIFF_TRACEBACK=1` shows where). Every command
raises these three and no error class of its own.
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


class ProblemFound(click.ClickException):
    """The command ran and found a problem in what it read: one `Error:` line, exit status 1.

    For a log whose events do not replay (`sniff replay`), as `sniff audit`
    exits 1 for the problems it lists.
    """

    exit_code = 1


class InternalError(click.ClickException):
    """An exception no command expected: reported in one line, exit status 70."""

    exit_code = INTERNAL_ERROR


def first_line(text: str) -> str:
    """A library's message in one line: DuckDB follows its first line with the query and a caret."""
    return next((line.strip() for line in text.splitlines() if line.strip()), text)


def show_tracebacks() -> bool:
    """SNIFF_TRACEBACK=1 lets unexpected exceptions through, for a developer to see where."""
    return os.environ.get("SNIFF_TRACEBACK", "") not in ("", "0")

"""The `sniff` command group; each theme's commands live in their own module.

A command's module is imported only when that command runs (or when help
lists it): `sniff matches` loads the listing's few modules, not the
simulator's, the service's or the statistics' (pyarrow, numpy, grpc, ...),
so that a quick command starts quickly.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Mapping
from importlib import import_module
from typing import Any

import click

from analysis.cli.errors import InternalError, Misuse, first_line, show_tracebacks

COMMANDS: Mapping[str, str] = {
    "analysis": "analysis.cli.analyze_cmd:analysis",
    "analyze": "analysis.cli.analyze_cmd:analyze",
    "arena-bot": "analysis.cli.arena_cmd:arena_bot",
    "audit": "analysis.cli.audit_cmd:audit",
    "demo": "analysis.cli.service_cmd:demo",
    "export": "analysis.cli.export_cmd:export",
    "import": "analysis.cli.import_cmd:import_",
    "keygen": "analysis.cli.evidence_cmd:keygen",
    "matches": "analysis.cli.replay_cmd:matches",
    "play": "analysis.cli.record_cmd:play",
    "proof": "analysis.cli.evidence_cmd:proof",
    "query": "analysis.cli.query_cmd:query",
    "record": "analysis.cli.record_cmd:record",
    "recover": "analysis.cli.recover_cmd:recover",
    "replay": "analysis.cli.replay_cmd:replay",
    "serve": "analysis.cli.service_cmd:serve",
    "simulate": "analysis.cli.simulate_cmd:simulate",
    "stats": "analysis.cli.stats_cmd:stats",
    "tournament": "analysis.cli.tournament_cmd:tournament",
    "verify": "analysis.cli.verify_cmd:verify",
}
"""Every top-level command: its name and where it is defined ("module:attribute")."""


def _exit_if_kernel_choice(e: ImportError) -> None:
    """SNIFF_KERNEL asks for a playout backend this install lacks (`KernelChoiceError`, which
    sniff.playout raises as it is imported): one line, exit 2.

    The engine's errors are imported here, once an import failed: `sniff matches` and the
    other commands that need no engine never load it.
    """
    from sniff.errors import KernelChoiceError

    if isinstance(e, KernelChoiceError):
        sys.stderr.write(f"Error: {e}\n")
        sys.exit(2)


class _SniffGroup(click.Group):
    """A group whose commands never end in a traceback, loaded on first use.

    Every failure a command expects is already one line (click's errors,
    `Misuse`); anything else is a bug, reported in one line with exit status
    70 so a script never mistakes it for an audit's 'problems found' (1).

    `lazy_commands` names commands by "module:attribute" (click's lazy-loading
    group pattern): listing them costs nothing, and a command's module is
    imported when the command is first looked up.
    """

    def __init__(
        self, *args: Any, lazy_commands: Mapping[str, str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands: dict[str, str] = dict(lazy_commands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            self.add_command(self._load(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def _load(self, name: str) -> click.Command:
        module_name, _, attribute = self.lazy_commands[name].partition(":")
        try:
            command = getattr(import_module(module_name), attribute)
        except ImportError as e:
            _exit_if_kernel_choice(e)
            raise
        if not isinstance(command, click.Command):
            raise TypeError(f"{module_name}:{attribute} is not a click command")
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except _NO_ARGS_IS_HELP:
            raise  # `sniff` alone: click shows the help
        except click.UsageError as e:
            raise _one_line_usage(e, ctx) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _NO_ARGS_IS_HELP:
            raise  # `sniff stats` alone: click shows the group's help
        except click.UsageError as e:
            raise _one_line_usage(e, ctx) from None
        except (click.ClickException, click.exceptions.Exit):
            raise
        except (KeyboardInterrupt, click.Abort):
            # Ctrl-C where the command has nothing of its own to say: the same one line
            # and status as a command that stops cleanly ("interrupted: ..."), not click's
            # "Aborted!" with 1, which would read as "problems found".
            raise Misuse("interrupted") from None
        except BrokenPipeError:
            # `sniff audit ... | head`: the reader stopped early. Exit as a Unix tool
            # killed by SIGPIPE does (128 + 13), never 0: the audit did not finish.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
            ctx.exit(128 + signal.SIGPIPE)
        except Exception as e:
            if isinstance(e, ImportError):
                _exit_if_kernel_choice(e)  # a command that imports the playout only when it runs
            if isinstance(e, RuntimeError) and str(e) == "Query interrupted":
                # Ctrl-C while DuckDB worked on this thread: its form of KeyboardInterrupt.
                raise Misuse("interrupted") from None
            if type(e).__name__ == "OutOfMemoryException":  # duckdb's, not imported here
                raise Misuse(
                    "DuckDB ran out of the memory it was given (and the disk it may spill "
                    f"to): {first_line(str(e))}"
                ) from None
            if show_tracebacks():
                raise
            raise InternalError(
                f"internal error: {type(e).__name__}: {e} (SNIFF_TRACEBACK=1 shows where)"
            ) from None


_NO_ARGS_IS_HELP: type[Exception] | tuple[()] = getattr(click.exceptions, "NoArgsIsHelpError", ())
"""click's 'help instead of an error' for a group given no command (click 8.2 on)."""


def _one_line_usage(e: click.UsageError, ctx: click.Context) -> Misuse:
    """A mistake in the command line as every other refusal: one `Error:` line, exit 2.

    click would print the command's usage line and a hint first; the hint
    stays, in the same line, and `-h` shows the usage.
    """
    names = []
    at: click.Context | None = e.ctx or ctx
    while at is not None and at.parent is not None:  # the root's name varies: `python -m ...`
        names.append(at.info_name or "")
        at = at.parent
    where = " ".join(["sniff", *reversed(names)])
    return Misuse(f"{e.format_message()} ('{where} -h' shows the options)")


def _show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """`--version`: the package's version and the playout kernel in use (SNIFF_KERNEL).

    The engine's playout is imported here, not when `sniff` starts: only this
    message and the commands that play out need it.
    """
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import version

    try:
        from sniff.playout import BACKEND
    except ImportError as e:
        _exit_if_kernel_choice(e)
        raise
    prog = ctx.find_root().info_name
    click.echo(f"{prog}, version {version('american-sniff')} (playout kernel: {BACKEND})")
    ctx.exit()


@click.group(
    cls=_SniffGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and exit.",
)
def cli() -> None:
    """American Sniff: rules engine, match records, audits and simulations.

    Exit status of every command (docs/cli.md): 0 done (an audit: every
    match ok), 1 problems found (an audit's or an import's, a log that does
    not replay), 2 misuse or refusal (a bad option, a file that is not what
    the command needs, a query or a start refused, a port in use), 70 an
    internal error (a bug; SNIFF_TRACEBACK=1 shows where). An error is one
    line on stderr starting "Error: ", a mistake in the command line too.
    """


def run() -> None:
    """The `sniff` program: its console script and `python -m analysis.cli`.

    Runs the command, then freezes the garbage collector's objects before the
    interpreter exits: its last collections would otherwise walk every object
    that the imports made (DuckDB's Python modules alone hold tens of
    thousands), some 40 ms of a quick command's 0.3 s, only to free memory
    that the process returns anyway. Exit handlers and the flushing of
    output still run. Only the program does this, never `cli` called within
    another process (a test's CliRunner), whose garbage must still be collected.
    """
    try:
        cli.main()
    finally:
        gc.freeze()

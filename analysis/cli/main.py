"""The `sniff` command group; each theme's commands live in their own module."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import click

from analysis.cli.analyze_cmd import analysis, analyze
from analysis.cli.audit_cmd import audit
from analysis.cli.errors import InternalError, show_tracebacks
from analysis.cli.export_cmd import export
from analysis.cli.import_cmd import import_
from analysis.cli.record_cmd import play, record
from analysis.cli.recover_cmd import recover
from analysis.cli.replay_cmd import matches, replay
from analysis.cli.service_cmd import demo, query, serve
from analysis.cli.simulate_cmd import simulate
from analysis.cli.stats_cmd import stats
from analysis.cli.tournament_cmd import tournament

try:
    from service.engine.playout import BACKEND as PLAYOUT_BACKEND
except ImportError as e:  # SNIFF_KERNEL asks for a playout backend this install lacks
    sys.stderr.write(f"sniff: {e}\n")
    sys.exit(2)


class _SniffGroup(click.Group):
    """A group whose commands never end in a traceback.

    Every failure a command expects is already one line (click's errors,
    `Misuse`); anything else is a bug, reported in one line with exit status
    70 so a script never mistakes it for an audit's 'problems found' (1).
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            # `sniff audit ... | head`: the reader stopped early. Exit as a Unix tool
            # killed by SIGPIPE does (128 + 13), never 0: the audit did not finish.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
            ctx.exit(128 + signal.SIGPIPE)
        except Exception as e:
            if isinstance(e, RuntimeError) and str(e) == "Query interrupted":
                # Ctrl-C while DuckDB worked on this thread: its form of KeyboardInterrupt.
                raise click.Abort from None
            if show_tracebacks():
                raise
            raise InternalError(
                f"internal error: {type(e).__name__}: {e} (SNIFF_TRACEBACK=1 shows where)"
            ) from None


@click.group(cls=_SniffGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    package_name="american-sniff",
    message=f"%(prog)s, version %(version)s (playout kernel: {PLAYOUT_BACKEND})",
)
def cli() -> None:
    """American Sniff: rules engine, match records, audits and simulations.

    Exit status of every command: 0 done (an audit: every match ok), 1 a
    problem found or met (an audit's problems, a refused query), 2 misuse (a
    bad option, a file that is not what the command needs, a port in use),
    70 an internal error (a bug; SNIFF_TRACEBACK=1 shows where).
    """


cli.add_command(audit)
cli.add_command(record)
cli.add_command(play)
cli.add_command(serve)
cli.add_command(demo)
cli.add_command(query)
cli.add_command(recover)
cli.add_command(matches)
cli.add_command(replay)
cli.add_command(import_)
cli.add_command(export)
cli.add_command(stats)
cli.add_command(simulate)
cli.add_command(analyze)
cli.add_command(analysis)
cli.add_command(tournament)

"""The `sniff` command group; each theme's commands live in their own module."""

from __future__ import annotations

import click

from analysis.cli.audit_cmd import audit
from analysis.cli.record_cmd import play, record
from analysis.cli.service_cmd import demo, query, serve
from analysis.cli.stats_cmd import stats


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="american-sniff")
def cli() -> None:
    """American Sniff: rules engine, match records, audits and simulations."""


cli.add_command(audit)
cli.add_command(record)
cli.add_command(play)
cli.add_command(serve)
cli.add_command(demo)
cli.add_command(query)
cli.add_command(stats)

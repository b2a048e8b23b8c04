"""Options shared by several commands."""

from __future__ import annotations

import click

from service.defaults import DEFAULT_DB

db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False),
    default=DEFAULT_DB,
    show_default=True,
    envvar="SNIFF_DB",
    help="The DuckDB event log file (env SNIFF_DB).",
)

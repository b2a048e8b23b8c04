"""`python -m analysis.cli` is `sniff`."""

from analysis.cli.main import cli

cli()

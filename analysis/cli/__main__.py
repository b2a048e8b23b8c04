"""`python -m analysis.cli` is `sniff`."""

from analysis.cli.main import run

run()

"""Defaults shared by the server and the command line (kept light: no imports)."""

from __future__ import annotations

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_DB = "sniff.duckdb"
"""The embedded event log, in the working directory."""

"""Defaults shared by the server and the command line (kept light: no imports)."""

from __future__ import annotations

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_DB = "sniff.duckdb"
"""The embedded event log, in the working directory."""

DEFAULT_MAX_LIVE_MATCHES = 10_000
"""Matches in play (created, not yet won) one service holds at most, unless told otherwise."""

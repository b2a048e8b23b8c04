"""Defaults shared by the server and the command line (kept light: no imports)."""

from __future__ import annotations

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_DB = "sniff.duckdb"
"""The embedded event log, in the working directory."""

DEFAULT_MAX_LIVE_MATCHES = 10_000
"""Matches in play (created, not yet won) one service holds at most, unless told otherwise."""

TARGET_MIN = 5
"""The smallest target: one scoring placement's worth (a lower one is won before play)."""
TARGET_MAX = 10_000
"""The largest target: forty times the usual one (a 2-seat match to 250 takes ~350 actions),
so a match's length stays bounded; a bot match to it still ends in a second or so."""
ROUND_LIMIT_MAX = 1_000
"""The largest round limit: far beyond any real match (1,000 rounds is hours of play)."""

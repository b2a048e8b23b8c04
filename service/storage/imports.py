"""What the log checks of whole matches before it imports them.

An import adds finished matches whole (`EventLog.import_matches`): they must
be complete event streams that the log could have written itself, so that
every reader and the audit treat them like any other match. The rules
checked here are the log's own, not the game's (the importer replays the
games through the engine first): each match's events are numbered 0, 1, 2,
... from its creation to its end, carry a hash each, and form an intact
chain under the secret its end reveals (docs/chain.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from . import chain
from .errors import StorageError
from .events import DETAIL, HASH, EventRow


class BadImport(StorageError):
    """Rows that are not whole, chained, finished matches: nothing of them is imported."""


def check_matches(rows: Sequence[EventRow]) -> dict[str, list[EventRow]]:
    """The rows by match (in the order the matches first appear); BadImport for any fault."""
    by_match: dict[str, list[EventRow]] = {}
    for row in rows:
        by_match.setdefault(row[0], []).append(row)
    for match_id, events in by_match.items():
        _check_match(match_id, events)
    return by_match


def _check_match(match_id: str, events: list[EventRow]) -> None:
    if [row[1] for row in events] != list(range(len(events))):
        raise BadImport(f"match {match_id!r}: its events are not numbered 0, 1, 2, ... in order")
    if events[0][2] != "match_created" or events[-1][2] != "match_ended":
        raise BadImport(f"match {match_id!r}: an import holds whole matches, created to ended")
    if any(row[2] in ("match_created", "match_ended") for row in events[1:-1]):
        raise BadImport(f"match {match_id!r}: a creation or an end in the middle")
    try:
        end = json.loads(events[-1][DETAIL] or "{}")
        secrets = chain.MatchSecrets.from_detail(end) if isinstance(end, dict) else None
        secret = None if secrets is None else secrets.chain_secret
        previous = chain.GENESIS
        for row in events:
            previous = chain.link(previous, secret, chain.row_content(row))
            if row[HASH] != previous:
                raise BadImport(
                    f"match {match_id!r}: event {row[1]}'s hash does not continue its chain"
                )
    except (ValueError, TypeError) as exc:
        raise BadImport(f"match {match_id!r}: {exc}") from None

"""The README.md a bundle carries: what it proves and what it does not, for whoever opens it.

It is the one file of a bundle that is not evidence (the verifiers never read
it): changing it changes nothing that is proven, so it says so itself.
"""

from __future__ import annotations

from datetime import UTC, datetime

from service.evidence.signed import TreeHead

from .layout import Counts


def utc_text(timestamp_ms: int) -> str:
    """A tree head's time as ISO 8601 UTC, to the millisecond."""
    moment = datetime.fromtimestamp(timestamp_ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


PROVEN = (
    "these events, in this order, were committed to by the key in public_key.pem no later "
    "than the tree head's time: each match's hash chain ends in the head of its leaf, the "
    "leaf is in the tree the signed tree head names, and the signature is the key's"
)
NOT_PROVEN = (
    "that the key is the log you mean (compare the log id with one you got from its operator); "
    "that the players were who the events say; that no match was left out of the bundle (only "
    "that these are in the tree); anything about hidden information beyond the seed "
    "commitment (the seed fixes every seeded deal, not what a seat could see or was told)"
)


def readme_text(tree_head: TreeHead, counts: Counts) -> str:
    return f"""# An evidence bundle of an American Sniff event log

Format `sniff/evidence-bundle/v1` (the repository's docs/evidence.md, "Bundles").

- log id `{tree_head.log_id}`
- signed tree head: {tree_head.tree_size:,} finished matches, root `{tree_head.root_hash}`,
  at {utc_text(tree_head.timestamp_ms)}
- {counts.matches:,} matches, {counts.events:,} events, {counts.checkpoints:,} checkpoints,
  {counts.tree_heads:,} earlier tree heads

## Check it

    sniff verify DIR                      # everything, the rules replay included
    node clients/node/verify.js DIR       # everything but the rules replay (in a clone)
    sniff verify DIR --public-key KEY.pub # and that the key is the one you were given

Both need nothing but this directory: no service, no log. They write nothing.

## What it proves

- {PROVEN};
- every event's hash follows from its content and the previous hash (docs/chain.md);
- each match's seed commitment opens with the seed and salt its end reveals, and every
  deal made from the seed is the one the seed makes (docs/dealing.md);
- every match replays under the rules to the logged figures (`sniff verify` only);
- every checkpoint in checkpoints.jsonl is the key's, over the head of a round or match end;
- every earlier tree head in tree_heads.jsonl is the key's, and the bundle's tree extends it;
- records.jsonl holds the match records (docs/records.md) these events make.

## What it does not prove

{NOT_PROVEN}.

This README is not evidence: no verifier reads it, and editing it proves nothing.
"""

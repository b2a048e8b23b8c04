"""Every seed made from another seed, in one place, so that a figure is reproducible.

A bot match, a simulation, a tournament or an analysis is reproducible from
the one seed its user gives; the seeds of its parts (each match, each bot,
each decision's rollouts) are derived from it. Written once here, every
caller derives them the same way, and docs/analysis.md (Seeds) states them:

* `match_seed(seed, i)` = `seed + i`: match i of a run (`sniff record`,
  `sniff simulate`, `sniff demo`), and deal i of a tournament.
* `bot_seed(seed, seat)`: the first 8 bytes, big-endian, of SHA-256 over the
  UTF-8 text `sniff/bot/v1\\0{seed}\\0{seat}`: the bot of seat `seat` in a
  match seeded `seed` (every bot match, in process, through the service or
  in the kernel). A hash, so that it is a generator seed (below 2^64) for
  every match seed, and the seats' generators are unrelated.
* `rotation_bot_seed(seed, rotation, seat)` = `(seed * 16 + rotation * 4 +
  seat) mod 2^63`: the bot of seat `seat` in rotation `rotation` of a
  tournament deal seeded `seed`.
* `decision_seed(seed, match_id, round_index, index)`: the first 8 bytes,
  big-endian, of SHA-256 over the UTF-8 text
  `sniff/analyze/v1\\0{seed}\\0{match_id}\\0{round_index}\\0{index}`: the
  seed of one decision's rollouts (`sniff analyze`, index the action's;
  `sniff stats sniff-timing --counterfactual`, index the placement's). A
  hash, never a counter, so the figures do not depend on the order or the
  number of workers.

The values are part of records and published figures: changing one changes
them, so these are not to be changed lightly.
"""

from __future__ import annotations

import hashlib
from typing import Final

ROTATION_SEED_SPACE: Final = 2**63
"""A tournament's bot seeds wrap here (they grow with the match seed)."""
DECISION_DOMAIN: Final = "sniff/analyze/v1"
BOT_DOMAIN: Final = "sniff/bot/v1"


def match_seed(seed: int, index: int) -> int:
    """The seed of match `index` of a run seeded `seed`."""
    return seed + index


def bot_seed(seed: int, seat: int) -> int:
    """The seed of the bot of `seat` in a match seeded `seed` (0 <= result < 2**64, the
    generator's seeds, whatever the match seed)."""
    return _hash64(f"{BOT_DOMAIN}\0{seed}\0{seat}")


def rotation_bot_seed(seed: int, rotation: int, seat: int) -> int:
    """The seed of the bot of `seat` in `rotation` of a tournament deal seeded `seed`: each
    rotation's bots differ, so a rotation is not the same match with the seats renamed."""
    return (seed * 16 + rotation * 4 + seat) % ROTATION_SEED_SPACE


def decision_seed(seed: int, match_id: str, round_index: int, index: int) -> int:
    """The seed of one decision's rollouts: the same decision always gets the same, whichever
    worker analyses it and in whatever order."""
    return _hash64(f"{DECISION_DOMAIN}\0{seed}\0{match_id}\0{round_index}\0{index}")


def _hash64(text: str) -> int:
    """The first 8 bytes, big-endian, of SHA-256 over `text` in UTF-8."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")

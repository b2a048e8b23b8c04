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
* `seat_entropy_seed(house_seed, entropies)`: the first 8 bytes, big-endian, of
  SHA-256(`sniff/seat-entropy/v1` || 0x00 || house seed as 8 bytes big-endian
  || seat count as 1 byte || the 32 bytes of entropy of seat 0 || … of seat
  n - 1): the seed of every seeded deal and lot of a match created with seat
  entropy (docs/dealing.md). The house commits to its seed before any seat
  gives its entropy, so neither the house alone nor a seat alone chooses it.
* `tournament_seeds_commitment(salt, seeds)`: SHA-256(`sniff/tournament-seeds/v1`
  || 0x00 || salt (32 bytes) || number of deals as 4 bytes big-endian || each
  deal seed as 8 bytes big-endian): what `sniff tournament` publishes before
  it plays, binding it to its deal seeds (docs/dealing.md).

The values are part of records and published figures: changing one changes
them, so these are not to be changed lightly.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from typing import Final

from sniff.dealing import check_seed

ROTATION_SEED_SPACE: Final = 2**63
"""A tournament's bot seeds wrap here (they grow with the match seed)."""
DECISION_DOMAIN: Final = "sniff/analyze/v1"
LUCK_DOMAIN: Final = "sniff/luck/v1"
BOT_DOMAIN: Final = "sniff/bot/v1"
SEAT_ENTROPY_DOMAIN: Final = b"sniff/seat-entropy/v1"
ENTROPY_SIZE: Final = 32
"""Bytes of entropy each seat gives: as many as the hash's, so one honest seat is enough."""
TOURNAMENT_SEEDS_DOMAIN: Final = b"sniff/tournament-seeds/v1"
TOURNAMENT_SALT_SIZE: Final = 32
TOURNAMENT_DEALS_LIMIT: Final = 1 << 32
"""The number of deals is written in 4 bytes."""


def match_seed(seed: int, index: int) -> int:
    """The seed of match `index` of a run seeded `seed`."""
    return seed + index


def bot_seed(seed: int, seat: int) -> int:
    """The seed of the bot of `seat` in a match seeded `seed` (0 <= result < 2**64, the
    generator's seeds, whatever the match seed)."""
    return _hash64(f"{BOT_DOMAIN}\0{seed}\0{seat}")


SIMULATED_SECRET_DOMAIN: Final = "sniff/simulated-secret/v1"


def simulated_secret(match_id: str, seed: int, purpose: str) -> bytes:
    """A simulated match's seed salt (`purpose` "salt") or chain secret ("chain"): SHA-256
    over the UTF-8 text `sniff/simulated-secret/v1\0{purpose}\0{match_id}\0{seed}`.
    Derived, not drawn: a bot match hides nothing from its players, and its events must be
    the same bytes whether stored by `sniff simulate --events` or regenerated from its seed
    (docs/simulate.md)."""
    text = f"{SIMULATED_SECRET_DOMAIN}\0{purpose}\0{match_id}\0{seed}"
    return hashlib.sha256(text.encode()).digest()


def rotation_bot_seed(seed: int, rotation: int, seat: int) -> int:
    """The seed of the bot of `seat` in `rotation` of a tournament deal seeded `seed`: each
    rotation's bots differ, so a rotation is not the same match with the seats renamed."""
    return (seed * 16 + rotation * 4 + seat) % ROTATION_SEED_SPACE


def decision_seed(seed: int, match_id: str, round_index: int, index: int) -> int:
    """The seed of one decision's rollouts: the same decision always gets the same, whichever
    worker analyses it and in whatever order."""
    return _hash64(f"{DECISION_DOMAIN}\0{seed}\0{match_id}\0{round_index}\0{index}")


def luck_seed(seed: int, match_id: str, round_index: int, point: int, seat: int) -> int:
    """The seed of one luck estimate (analysis/rollout/luck.py): the equity from `seat`'s view
    after `point` actions of the round (-1: before the deal, `seat` then its leader). Its own
    domain, so no luck estimate shares its rollouts with a decision's."""
    return _hash64(f"{LUCK_DOMAIN}\0{seed}\0{match_id}\0{round_index}\0{point}\0{seat}")


def _hash64(text: str) -> int:
    """The first 8 bytes, big-endian, of SHA-256 over `text` in UTF-8."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def seat_entropy_seed(house_seed: int, entropies: Sequence[bytes]) -> int:
    """The seed of a match whose seats gave entropy: the house's committed seed mixed with
    every seat's 32 bytes, in seat order. No party can aim it at a deal on its own: the house
    committed first, and each seat gives its bytes without knowing the house's seed.

    ValueError for a seed out of range, no seat or more than 255, or entropy not 32 bytes.
    """
    check_seed(house_seed)
    if not 1 <= len(entropies) <= 255:
        raise ValueError(f"seat entropy comes from 1 to 255 seats, not {len(entropies)}")
    for seat, entropy in enumerate(entropies):
        if not isinstance(entropy, bytes | bytearray) or len(entropy) != ENTROPY_SIZE:
            raise ValueError(f"seat {seat}'s entropy is not {ENTROPY_SIZE} bytes")
    data = [SEAT_ENTROPY_DOMAIN, b"\x00", _HOUSE_SEATS.pack(house_seed, len(entropies))]
    data += [bytes(e) for e in entropies]
    return int.from_bytes(hashlib.sha256(b"".join(data)).digest()[:8], "big")


def tournament_seeds_commitment(salt: bytes, seeds: Sequence[int]) -> bytes:
    """The commitment a tournament publishes before its first deal to the seeds of all its
    deals, in deal order; the salt (revealed at the end) keeps the seeds unguessable from it.

    ValueError for a salt not of 32 bytes, too many deals or a seed out of range.
    """
    if not isinstance(salt, bytes | bytearray) or len(salt) != TOURNAMENT_SALT_SIZE:
        raise ValueError(f"a tournament's salt is {TOURNAMENT_SALT_SIZE} bytes")
    if len(seeds) >= TOURNAMENT_DEALS_LIMIT:
        raise ValueError(f"{len(seeds)} deals do not fit in 4 bytes")
    data = [TOURNAMENT_SEEDS_DOMAIN, b"\x00", bytes(salt), _COUNT.pack(len(seeds))]
    data += [_SEED.pack(check_seed(seed)) for seed in seeds]
    return hashlib.sha256(b"".join(data)).digest()


_HOUSE_SEATS: Final = struct.Struct(">QB")
_COUNT: Final = struct.Struct(">I")
_SEED: Final = struct.Struct(">Q")

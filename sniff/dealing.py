"""Seeded deals and lots from a documented, language-neutral generator.

Every random choice of a match — the shuffle of each round and the lot that
picks a leader (docs/rules.md §2) — comes from its seed through SHA-256 in counter
mode feeding a Fisher-Yates shuffle, written down here exactly so that any
language can recompute a deal from a revealed seed (the audit and the
Node.js client do). Nothing else about a match is random.

The generator, byte for byte:

* A **stream** is named by (seed, round, purpose): seed an integer
  0 <= seed < 2**64, round the 0-based round index, purpose the ASCII word
  `deal` or `lot`. Its bytes are the concatenation, for counter = 0, 1, 2, …,
  of the 32-byte blocks

      SHA-256( "sniff/rng/v1" || 0x00 || purpose || 0x00
               || seed as 8 bytes big-endian || round as 4 bytes big-endian
               || counter as 4 bytes big-endian )

  read as consecutive unsigned 32-bit big-endian words (8 per block).
* **uniform(n)** for 1 <= n <= 2**32: limit = 2**32 - (2**32 mod n); take the
  next word x until x < limit; the result is x mod n (rejection sampling: no
  modulo bias).
* **The shuffle** of a round (stream purpose `deal`): start from the 28 tile
  numbers in set order 0..27 (`0-0`, `0-1`, …, `0-6`, `1-1`, …, `6-6`); for
  i = 27 down to 1: j = uniform(i + 1), swap positions i and j. Seat s holds
  positions s·h … s·h + h - 1 (h = the hand size, §2), in that order; the
  boneyard is the rest, in order (the first is drawn first).
* **The lot** of a round (stream purpose `lot`): the leader is
  uniform(seats). A lot is drawn only when the round's leader is not the
  last round's finisher.

Test vectors are in `tests/test_dealing.py` and `docs/dealing.md`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from hashlib import sha256
from itertools import chain
from typing import Final, TypeVar

from sniff.tiles import SET_SIZE

T = TypeVar("T")

DOMAIN: Final = b"sniff/rng/v1"
DEALING_VERSION: Final = DOMAIN.decode()
"""Names this generator in a match's log (its `dealing` setting): only deals of this
generator are re-made from the seed when a logged match is replayed (`docs/dealing.md`)."""
SEED_LIMIT: Final = 1 << 64
"""Seeds are 0 <= seed < 2**64."""


def check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"a seed is an integer from 0 to 2**64 - 1, not {seed!r}")
    return seed


def _prefix(seed: int, round_index: int, purpose: bytes) -> bytes:
    return DOMAIN + b"\x00" + purpose + b"\x00" + _SEED_ROUND.pack(check_seed(seed), round_index)


def words(seed: int, round_index: int, purpose: str) -> Iterator[int]:
    """The stream's unsigned 32-bit words, in order."""
    return words_from(_prefix(seed, round_index, purpose.encode("ascii")), 0)


def words_from(prefix: bytes, counter: int) -> Iterator[int]:
    while True:
        yield from _WORDS.unpack(sha256(prefix + _COUNTER.pack(counter)).digest())
        counter += 1


def uniform(stream: Iterator[int], n: int) -> int:
    """A uniform integer in [0, n) from the stream, by rejection sampling."""
    limit = (1 << 32) - (1 << 32) % n
    while True:
        x = next(stream)
        if x < limit:
            return x % n


def shuffled_tiles(seed: int, round_index: int) -> list[int]:
    """The 28 tile numbers in the order the round deals them (Fisher-Yates, from 27 down)."""
    return shuffled(seed, round_index, list(range(SET_SIZE)))


def shuffled(seed: int, round_index: int, items: list[T]) -> list[T]:
    """`items` (the 28 tiles in set order, as numbers or as `Tile`s) shuffled in place as the
    round deals them, and returned: the match deals `Tile`s without a second pass.

    The 27 draws almost always take the first four blocks (a rejection is
    rarer than one in 150 million), so those are hashed at once and the
    stream is read on only if a draw is rejected. No word below the least
    rejection limit can be rejected, so one `max` over the pool stands for the
    27 limit tests; a deal is made for every round of every match.
    """
    if len(items) != SET_SIZE:
        raise ValueError(f"a deal shuffles the {SET_SIZE} tiles, not {len(items)} items")
    prefix = _prefix(seed, round_index, b"deal")
    pool = _POOL.unpack(b"".join([sha256(prefix + c).digest() for c in _FIRST_COUNTERS]))
    if max(pool) < _LEAST_LIMIT or all(map(_BELOW, pool, _DRAW_LIMITS)):
        for i, j in zip(_POSITIONS, map(_MOD, pool, _SIZES), strict=False):
            items[i], items[j] = items[j], items[i]
        return items
    stream = chain(pool, words_from(prefix, 4))
    for i in _POSITIONS:
        j = uniform(stream, i + 1)
        items[i], items[j] = items[j], items[i]
    return items


def lot(seed: int, round_index: int, seats: int) -> int:
    """The seat the round's lot picks to lead."""
    return uniform(words(seed, round_index, "lot"), seats)


_SEED_ROUND: Final = struct.Struct(">QI")
_COUNTER: Final = struct.Struct(">I")
_WORDS: Final = struct.Struct(">8I")
_POSITIONS: Final = tuple(range(SET_SIZE - 1, 0, -1))
"""Fisher-Yates positions i = 27 … 1; draw k is uniform(i + 1)."""
_DRAW_LIMITS: Final = tuple((1 << 32) - (1 << 32) % (i + 1) for i in _POSITIONS)
_BELOW: Final = int.__lt__
_MOD: Final = int.__mod__
_SIZES: Final = tuple(i + 1 for i in _POSITIONS)
_LEAST_LIMIT: Final = min(_DRAW_LIMITS)
_FIRST_COUNTERS: Final = tuple(_COUNTER.pack(c) for c in range(4))
_POOL: Final = struct.Struct(">32I")
"""The first four blocks' 32 words (the shuffle reads the first 27)."""

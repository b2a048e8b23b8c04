"""Seeded deals and lots from a documented, language-neutral generator.

Every random choice of a match — the shuffle of each round and the lot that
picks a leader (RULES.md §2) — comes from its seed through SHA-256 in counter
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

import hashlib
import struct
from collections.abc import Iterator
from typing import Final

from service.engine.tiles import SET_SIZE

DOMAIN: Final = b"sniff/rng/v1"
SEED_LIMIT: Final = 1 << 64
"""Seeds are 0 <= seed < 2**64."""


def check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"a seed is an integer from 0 to 2**64 - 1, not {seed!r}")
    return seed


def words(seed: int, round_index: int, purpose: str) -> Iterator[int]:
    """The stream's unsigned 32-bit words, in order."""
    prefix = (
        DOMAIN
        + b"\x00"
        + purpose.encode("ascii")
        + b"\x00"
        + struct.pack(">QI", check_seed(seed), round_index)
    )
    counter = 0
    while True:
        yield from struct.unpack(
            ">8I", hashlib.sha256(prefix + struct.pack(">I", counter)).digest()
        )
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
    stream = words(seed, round_index, "deal")
    tiles = list(range(SET_SIZE))
    for i in range(SET_SIZE - 1, 0, -1):
        j = uniform(stream, i + 1)
        tiles[i], tiles[j] = tiles[j], tiles[i]
    return tiles


def lot(seed: int, round_index: int, seats: int) -> int:
    """The seat the round's lot picks to lead."""
    return uniform(words(seed, round_index, "lot"), seats)

"""The playouts' random generator: xoshiro256** seeded by SplitMix64, and an unbiased index.

Playouts (`playout.py`) are played twice over, by the pure Python reference
and by the compiled kernel (`_kernel.c`), and must make the very same
choices from the same seed. So the generator is written down here exactly,
in a form any language computes with 64-bit unsigned arithmetic (all
operations modulo 2**64):

* **Seeding** (SplitMix64): from a seed 0 <= seed < 2**64, ``x = seed``; four
  times: ``x += 0x9E3779B97F4A7C15; z = x; z = (z ^ (z >> 30)) *
  0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
  z ^= z >> 31``, giving s0, s1, s2, s3 in that order (never all zero:
  SplitMix64's output is a bijection of distinct counters).
* **next()** (xoshiro256**, Blackman and Vigna): ``result = rotl(s1 * 5, 7)
  * 9; t = s1 << 17; s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t;
  s3 = rotl(s3, 45)``; return result.
* **below(n)** for 1 <= n < 2**32, a uniform index in [0, n) without bias
  (Lemire's multiply-and-reject): ``m = next() * n`` as a 128-bit product,
  ``low = m mod 2**64``; if ``low < n``: ``t = (2**64 - n) mod n``, and while
  ``low < t`` draw again (``m = next() * n``, ``low = m mod 2**64``);
  the index is ``m >> 64``. It costs exactly one ``next()`` except, with
  probability below n / 2**64, a few more.

Test vectors: `tests/test_playout_prng.py`.
"""

from __future__ import annotations

from typing import Final

from sniff.dealing import SEED_LIMIT, check_seed

MASK64: Final = (1 << 64) - 1
BELOW_LIMIT: Final = 1 << 32
_GAMMA: Final = 0x9E3779B97F4A7C15


def splitmix64(x: int) -> tuple[int, int]:
    """One SplitMix64 step from state `x`: (new state, output)."""
    x = (x + _GAMMA) & MASK64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return x, z ^ (z >> 31)


class Xoshiro256:
    """xoshiro256** with the seeding and `below` documented above (module docstring)."""

    __slots__ = ("s0", "s1", "s2", "s3")

    def __init__(self, seed: int) -> None:
        x = check_seed(seed)
        x, self.s0 = splitmix64(x)
        x, self.s1 = splitmix64(x)
        x, self.s2 = splitmix64(x)
        x, self.s3 = splitmix64(x)

    def next(self) -> int:
        s0, s1, s2, s3 = self.s0, self.s1, self.s2, self.s3
        r = (s1 * 5) & MASK64
        result = (((r << 7) | (r >> 57)) * 9) & MASK64
        t = (s1 << 17) & MASK64
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        self.s0, self.s1, self.s2 = s0, s1, s2
        self.s3 = ((s3 << 45) | (s3 >> 19)) & MASK64
        return result

    def below(self, n: int) -> int:
        """A uniform index in [0, n), 1 <= n < 2**32 (Lemire's method, no modulo bias)."""
        if not 1 <= n < BELOW_LIMIT:
            raise ValueError(f"below(n) needs 1 <= n < 2**32, not {n}")
        m = self.next() * n
        low = m & MASK64
        if low < n:
            threshold = (SEED_LIMIT - n) % n
            while low < threshold:
                m = self.next() * n
                low = m & MASK64
        return m >> 64

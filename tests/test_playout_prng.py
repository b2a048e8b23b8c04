"""The playouts' generator (`prng.py`): published SplitMix64 values, the same draws in C and
Python (the kernel's playouts and its `Xoshiro256` object, the bots'), and `below(n)` uniform
and in range, its rejection step included."""

from __future__ import annotations

import collections

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sniff.playout import KERNEL_AVAILABLE
from sniff.prng import MASK64, Xoshiro256, splitmix64
from tests.helpers import example_count

# Xoshiro256(0)'s first outputs: SplitMix64 seeding as documented, then xoshiro256**.
SEED0_NEXT = (0x99EC5F36CB75F2B4, 0xBF6E1F784956452A, 0x1A5F849D4933E6E0)


def test_splitmix64_gives_its_published_values_from_seed_zero() -> None:
    x, outputs = 0, []
    for _ in range(3):
        x, out = splitmix64(x)
        outputs.append(out)
    assert outputs == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_xoshiro_state_is_seeded_by_splitmix64_and_steps_as_documented() -> None:
    rng = Xoshiro256(0)
    assert (rng.s0, rng.s1, rng.s2) == (0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F)
    assert tuple(rng.next() for _ in range(3)) == SEED0_NEXT


def _kernel_draws(seed: int, bounds: list[int]) -> list[int]:
    if not KERNEL_AVAILABLE:
        pytest.fail("the C playout kernel is not built (pip install -e .)")
    from sniff import _kernel

    return _kernel.rng_draws(seed, bounds)


def test_kernel_generator_gives_the_same_vectors() -> None:
    assert tuple(_kernel_draws(0, [0, 0, 0])) == SEED0_NEXT


@settings(max_examples=example_count(200), deadline=None)
@given(
    seed=st.integers(0, MASK64),
    bounds=st.lists(
        st.one_of(st.just(0), st.integers(1, 40), st.integers(1, (1 << 32) - 1)), max_size=40
    ),
)
def test_kernel_and_python_draw_the_same_numbers(seed: int, bounds: list[int]) -> None:
    rng = Xoshiro256(seed)
    expected = [rng.next() if b == 0 else rng.below(b) for b in bounds]
    assert _kernel_draws(seed, bounds) == expected


def test_below_stays_in_range_and_is_uniform() -> None:
    rng = Xoshiro256(12345)
    counts = collections.Counter(rng.below(6) for _ in range(60_000))
    assert set(counts) == set(range(6))
    for value in range(6):  # 10,000 expected; 5 standard deviations is about +-456
        assert abs(counts[value] - 10_000) < 460, counts
    assert all(rng.below(1) == 0 for _ in range(100))


class Scripted(Xoshiro256):
    """A generator whose next() outputs are given: to reach `below`'s rare rejection step."""

    __slots__ = ("outputs",)

    def __init__(self, outputs: list[int]) -> None:
        super().__init__(0)
        self.outputs = outputs

    def next(self) -> int:
        return self.outputs.pop(0)


def test_below_rejects_the_biased_low_products() -> None:
    # n = 3: 2**64 mod 3 = 1, so a product whose low word is 0 (next() = 0) is rejected.
    assert Scripted([0, 5 << 62]).below(3) == (15 << 62) >> 64
    # A low word below n but not below the threshold is kept: 3 * x = 2**64 + 2.
    x = ((1 << 64) + 2) // 3
    assert Scripted([x, 0]).below(3) == 1


@pytest.mark.parametrize("bad", [-1, 1 << 64, 1.5, True])
def test_seeds_outside_64_bits_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="seed"):
        Xoshiro256(bad)  # type: ignore[arg-type]


def _kernel_generator(seed: int) -> Xoshiro256:
    """The kernel's `Xoshiro256` object (the bots' generator when the kernel is built)."""
    if not KERNEL_AVAILABLE:
        pytest.fail("the C playout kernel is not built (pip install -e .)")
    from sniff import _kernel

    return _kernel.Xoshiro256(seed)  # type: ignore[return-value]


def test_the_kernels_generator_object_is_seeded_and_steps_as_documented() -> None:
    rng = _kernel_generator(0)
    python = Xoshiro256(0)
    assert rng.state == (python.s0, python.s1, python.s2, python.s3)  # type: ignore[attr-defined]
    assert tuple(rng.next() for _ in range(3)) == SEED0_NEXT


@settings(max_examples=example_count(200), deadline=None)
@given(
    seed=st.integers(0, MASK64),
    bounds=st.lists(
        st.one_of(st.just(0), st.integers(1, 40), st.integers(1, (1 << 32) - 1)), max_size=60
    ),
)
def test_the_kernels_generator_object_draws_what_the_python_one_draws(
    seed: int, bounds: list[int]
) -> None:
    python, kernel = Xoshiro256(seed), _kernel_generator(seed)
    expected = [python.next() if b == 0 else python.below(b) for b in bounds]
    assert [kernel.next() if b == 0 else kernel.below(b) for b in bounds] == expected
    assert kernel.state == (python.s0, python.s1, python.s2, python.s3)  # type: ignore[attr-defined]


@pytest.mark.parametrize("bad", [0, -1, 1 << 32, 1 << 70])
def test_both_generators_refuse_the_same_bounds(bad: int) -> None:
    for rng in (Xoshiro256(1), _kernel_generator(1)):
        with pytest.raises(ValueError, match=r"1 <= n < 2\*\*32"):
            rng.below(bad)


@pytest.mark.parametrize("bad", [-1, 1 << 64, 1.5, True])
def test_the_kernels_generator_refuses_the_same_seeds(bad: object) -> None:
    with pytest.raises(ValueError, match="seed"):
        _kernel_generator(bad)  # type: ignore[arg-type]

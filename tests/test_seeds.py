"""The derived seeds (sniff/seeds.py) keep the values records and figures were made with."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.bot_matches import bot_match, bot_players
from sniff import Match, make_bot, play_match, to_record
from sniff.seeds import (
    bot_seed,
    decision_seed,
    match_seed,
    rotation_bot_seed,
    seat_entropy_seed,
    tournament_seeds_commitment,
)
from tests.helpers import example_count


def test_bot_seeds_are_the_bot_hash_written_in_the_docs() -> None:
    # The first 8 bytes of SHA-256("sniff/bot/v1\0{seed}\0{seat}"): docs/simulate.md's vectors.
    assert bot_seed(0, 0) == 8992256462536350346
    assert [bot_seed(3, seat) for seat in range(3)] == [
        9625767288050269810,
        795439325761882660,
        2423705536509708451,
    ]
    assert bot_seed(2**64 - 1, 3) == 4888046321984940478


def test_bot_seeds_are_generator_seeds_for_every_match_seed() -> None:
    for seed in (0, 1, 2**63, 2**64 - 1):
        for seat in range(4):
            assert 0 <= bot_seed(seed, seat) < 2**64


@given(st.integers(0, 2**64 - 1), st.integers(0, 11))
@settings(max_examples=example_count(2000), deadline=None)
def test_the_kernel_derives_bot_seeds_as_the_docs_define_them(seed: int, seat: int) -> None:
    kernel = pytest.importorskip("sniff._kernel")
    assert kernel.bot_seed(seed, seat) == bot_seed(seed, seat)


def test_the_kernel_derives_the_documented_bot_seed_vectors() -> None:
    kernel = pytest.importorskip("sniff._kernel")
    assert kernel.bot_seed(0, 0) == 8992256462536350346
    assert [kernel.bot_seed(3, seat) for seat in range(3)] == [
        9625767288050269810,
        795439325761882660,
        2423705536509708451,
    ]
    assert kernel.bot_seed(2**64 - 1, 3) == 4888046321984940478


def test_the_kernels_columns_are_its_rows_transposed() -> None:
    kernel = pytest.importorskip("sniff._kernel")
    import numpy as np

    rows = np.arange(5 * 7, dtype=np.int32).reshape(5, 7)
    columns = np.frombuffer(kernel.columns(rows.tobytes(), 7), dtype=np.int32)
    assert columns.tolist() == rows.T.reshape(-1).tolist()
    assert kernel.columns(b"", 3) == b""
    with pytest.raises(ValueError, match="rows of 7 int32"):
        kernel.columns(rows.tobytes()[:-4], 7)


def test_match_i_of_a_run_is_seeded_the_runs_seed_plus_i() -> None:
    assert [match_seed(40, i) for i in range(3)] == [40, 41, 42]


def test_rotation_bot_seeds_wrap_below_two_to_the_63() -> None:
    assert rotation_bot_seed(5, 2, 3) == 5 * 16 + 2 * 4 + 3
    assert rotation_bot_seed(2**63 - 1, 0, 0) == (2**63 - 1) * 16 % 2**63


def test_decision_seeds_are_the_analyze_hash_written_in_the_docs() -> None:
    # The first 8 bytes of SHA-256("sniff/analyze/v1\0{seed}\0{match}\0{round}\0{index}"),
    # the values `sniff analyze` has always used.
    assert decision_seed(0, "m", 0, 0) == 16778908113285217569
    assert decision_seed(7, "imp-0123456789abcdef", 3, 41) == 2408598415204041865


def test_a_bot_match_plays_the_bots_seeded_as_before() -> None:
    players = [
        make_bot("greedy", 9625767288050269810),
        make_bot("random", 795439325761882660),
        make_bot("greedy", 2423705536509708451),
    ]
    by_hand = play_match(Match(3, seed=3, round_limit=2), players)
    assert [type(p) for p in bot_players(3, ("greedy", "random"), 3)] == [type(p) for p in players]
    played = bot_match(3, 3, ("greedy", "random"), round_limit=2)
    assert to_record(played, "m") == to_record(by_hand, "m")


# -- seat entropy and the tournament commitment (docs/dealing.md publishes these vectors) --

_A = bytes(range(32))
_B = bytes(range(32, 64))
_FF = b"\xff" * 32

SEAT_ENTROPY_VECTORS = [
    (0, [bytes(32), bytes(32)], 8385519684239764291),
    (7, [_A, _B, _FF], 6293556485986322451),
    (2**64 - 1, [bytes([i]) * 32 for i in range(4)], 6740978501960242522),
]
TOURNAMENT_VECTORS = [
    (bytes(32), [0], "5ebabb3c62d59a5be0ff25006260b265c6fcb487fbc9c81400aac22fccda870a"),
    (_A, [40, 41, 42], "4b7487b5e750fdb7ffcc7a36c050be0438adcf2655a6c8992315c83f6113cd27"),
    (_FF, [2**64 - 1], "fc09d368ea503d86b983398ad76f6a4a3ef3e43307435bbb3dcecb37abfae839"),
]


def _seat_entropy_as_written(house_seed: int, entropies: list[bytes]) -> int:
    """docs/dealing.md read literally, with int.to_bytes instead of struct."""
    data = b"sniff/seat-entropy/v1" + b"\x00" + house_seed.to_bytes(8, "big")
    data += len(entropies).to_bytes(1, "big") + b"".join(entropies)
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


def _tournament_as_written(salt: bytes, seeds: list[int]) -> str:
    data = b"sniff/tournament-seeds/v1" + b"\x00" + salt + len(seeds).to_bytes(4, "big")
    data += b"".join(s.to_bytes(8, "big") for s in seeds)
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(("house", "entropies", "seed"), SEAT_ENTROPY_VECTORS)
def test_seat_entropy_seeds_are_the_published_vectors(
    house: int, entropies: list[bytes], seed: int
) -> None:
    assert seat_entropy_seed(house, entropies) == seed
    assert _seat_entropy_as_written(house, entropies) == seed


@pytest.mark.parametrize(("salt", "seeds", "digest"), TOURNAMENT_VECTORS)
def test_tournament_commitments_are_the_published_vectors(
    salt: bytes, seeds: list[int], digest: str
) -> None:
    assert tournament_seeds_commitment(salt, seeds).hex() == digest
    assert _tournament_as_written(salt, seeds) == digest


def test_the_docs_publish_the_seat_entropy_and_tournament_vectors() -> None:
    text = (Path(__file__).parent.parent / "docs" / "dealing.md").read_text()
    for _, _, seed in SEAT_ENTROPY_VECTORS:
        assert str(seed) in text
    for _, _, digest in TOURNAMENT_VECTORS:
        assert digest in text


@given(
    st.integers(0, 2**64 - 1),
    st.lists(st.binary(min_size=32, max_size=32), min_size=1, max_size=4),
)
@settings(max_examples=example_count(200))
def test_seat_entropy_seed_is_the_written_description(house: int, entropies: list[bytes]) -> None:
    assert seat_entropy_seed(house, entropies) == _seat_entropy_as_written(house, entropies)


def test_every_seats_entropy_changes_the_seed() -> None:
    base = [bytes(32)] * 3
    seeds = {seat_entropy_seed(1, base)}
    for seat in range(3):
        changed = list(base)
        changed[seat] = b"\x01" + bytes(31)
        seeds.add(seat_entropy_seed(1, changed))
    assert len(seeds) == 4


@pytest.mark.parametrize(
    ("house", "entropies"),
    [(-1, [bytes(32)]), (2**64, [bytes(32)]), (0, []), (0, [bytes(31)]), (0, [bytes(33)])],
)
def test_seat_entropy_refuses_bad_seeds_and_entropy(house: int, entropies: list[bytes]) -> None:
    with pytest.raises(ValueError, match=r"seed|seats|bytes"):
        seat_entropy_seed(house, entropies)


@pytest.mark.parametrize(
    ("salt", "seeds"), [(bytes(31), [0]), (bytes(32), [-1]), (bytes(32), [2**64])]
)
def test_tournament_commitment_refuses_bad_salts_and_seeds(salt: bytes, seeds: list[int]) -> None:
    with pytest.raises(ValueError, match=r"seed|salt"):
        tournament_seeds_commitment(salt, seeds)

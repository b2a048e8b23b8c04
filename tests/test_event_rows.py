"""The bulk recorder (service.match_recorder) writes the hub's rows, byte for byte.

Every event is built once (service/match_events.py) and encoded once (chain.canonical);
the recorder keeps rows without a `LogEvent` an event, the hub seals `LogEvent`s. Over
real matches of 2, 3 and 4 seats in every variant, seeded or dealt explicitly (as an
import is), the two agree to the byte, hashes included, and both still write what was
written before the builder was one (the digests below were taken then; taken again when
the `random` and `greedy` bots moved to the documented generator, which changed the
matches' moves and not how they are written: with the old bots the recorder still
writes the old digest, ed36ee72…, 5,219 events).
"""

from __future__ import annotations

import hashlib

import pytest

from analysis import importer
from analysis.audit import audit_parsed
from analysis.bot_matches import bot_players, bot_records, play_bots
from service.match_recorder import EventRecorder
from service.storage.chain import MatchSecrets
from service.storage.events import EventRow
from sniff.variants import VARIANTS
from tests.event_helpers import hub_way_rows

FIXED = MatchSecrets(None, bytes(range(32)), bytes(range(32, 64)))


def recorded(seats: int, variant: str, seed: int) -> EventRecorder:
    """A bot match of `seed` (a round limit of 3 but for seed 1, no seed logged for seed 3),
    recorded under fixed secrets."""
    secrets = MatchSecrets(None if seed == 3 else seed, FIXED.salt, FIXED.chain_secret)
    recorder = EventRecorder(
        f"m-{seats}-{variant}-{seed}",
        seats,
        seed=seed,
        variant=variant,
        round_limit=None if seed == 1 else 3,
        secrets=secrets,
        first_deal=False,
        source="simulated",
        run_id="golden",
        players=["greedy"] * seats,
    )
    play_bots(recorder, bot_players(seats, ("greedy", "random"), seed))
    return recorder


def digest(rows: list[EventRow], into: hashlib._Hash) -> int:
    into.update(repr(rows).encode())
    return len(rows)


def test_recorded_rows_are_the_hubs_rows_and_what_was_written_before() -> None:
    before = hashlib.sha256()
    events = 0
    for seats in (2, 3, 4):
        for variant in VARIANTS:
            for seed in (1, 2, 3):
                recorder = recorded(seats, variant, seed)
                rows = recorder.rows()
                assert rows == hub_way_rows(recorder, explicit=False)
                events += digest(rows, before)
    assert events == 5052
    assert before.hexdigest() == "34cad428ffd0b1b4c6df008f98aa3f8ca06e93aeb609e6198832ced40d54e5c8"


def test_imported_rows_are_the_hubs_rows_and_what_was_written_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(MatchSecrets, "new", classmethod(lambda cls, seed: FIXED))
    before = hashlib.sha256()
    events = 0
    for seats in (2, 3, 4):
        for variant in VARIANTS:
            bots = ("greedy", "random")
            for record in bot_records(seats, 2, 10 * seats, bots, variant=variant, round_limit=4):
                recorders = importer._Recorders()  # as `importer.record_rows` audits
                assert audit_parsed(record, "record", witness=recorders)[0].ok
                assert recorders.made is not None
                rows = recorders.made.rows()
                assert rows == importer.record_rows(record)
                assert rows == hub_way_rows(recorders.made, explicit=True)
                events += digest(rows, before)
    assert events == 2371
    assert before.hexdigest() == "04e11edf5848e50a2d1de84824f380e1801b1d668903c14dec3e6a07b380c9ca"

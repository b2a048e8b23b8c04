"""A bundle verifies with nothing but its files, and no change to its evidence survives.

The bundles are made from played matches signed in process (tests/evidence_helpers.py);
docs/evidence.md "Bundles" is the format held to here.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from analysis.bundle import layout
from analysis.bundle.errors import (
    BundleError,
    CheckpointRejected,
    EventsRejected,
    MalformedBundle,
    NotABundle,
    ProofRejected,
    RecordMismatch,
    SignatureRejected,
)
from analysis.bundle.verify import verify_bundle
from analysis.bundle.writer import (
    BundleExists,
    InconsistentEvidence,
    MatchEvidence,
    write_bundle,
)
from service.evidence.signed import TreeHead
from tests.evidence_helpers import START_MS, key_of, make_bundle, played, signed


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("bundle") / "b"
    make_bundle(directory, 3)
    return directory


@pytest.fixture
def copy(bundle: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(bundle, target)
    return target


def rejected(directory: Path) -> BundleError:
    with pytest.raises(BundleError) as caught:
        verify_bundle(directory)
    return caught.value


def edit_line(path: Path, number: int, change: Callable[[dict], object]) -> None:  # type: ignore[type-arg]
    lines = path.read_text(encoding="utf-8").split("\n")
    obj = json.loads(lines[number - 1])
    change(obj)
    lines[number - 1] = layout.dumps(obj)
    path.write_text("\n".join(lines), encoding="utf-8")


# -- what verifies -----------------------------------------------------------------------


def test_a_bundle_of_played_matches_verifies_and_counts_what_it_holds(bundle: Path) -> None:
    report = verify_bundle(bundle)
    events = played(3)
    assert report.counts.matches == 3
    assert report.counts.events == sum(len(m) for m in events)
    ends = sum(1 for m in events for row in m if row[2] in ("round_ended", "match_ended"))
    assert report.counts.checkpoints == ends
    assert report.counts.tree_heads == 1  # one signed after the second match
    assert report.tree_head.tree_size == 3
    assert report.notes == []


def test_every_file_of_the_format_is_written_and_readme_says_what_is_not_proven(
    bundle: Path,
) -> None:
    assert sorted(p.name for p in bundle.iterdir()) == sorted(
        [*layout.EVIDENCE_FILES, layout.README]
    )
    readme = (bundle / layout.README).read_text(encoding="utf-8")
    assert "What it does not prove" in readme
    assert "no match was left out" in readme


def test_events_are_written_match_by_match_in_match_id_order_each_in_seq_order(
    bundle: Path,
) -> None:
    rows = [
        layout.parse_event_line(line)
        for line in (bundle / layout.EVENTS).read_text(encoding="utf-8").splitlines()
    ]
    assert [(r[0], r[1]) for r in rows] == sorted((r[0], r[1]) for r in rows)


def test_the_records_are_those_sniff_export_makes(bundle: Path) -> None:
    records = (bundle / layout.RECORDS).read_text(encoding="utf-8").splitlines()
    assert [json.loads(r)["id"] for r in records] == sorted(m[0][0] for m in played(3))


def test_a_bundle_verifies_in_worker_processes_too(bundle: Path) -> None:
    assert verify_bundle(bundle, workers=2).counts.matches == 3


def test_verifying_writes_nothing(bundle: Path) -> None:
    before = {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in bundle.iterdir()}
    verify_bundle(bundle)
    after = {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in bundle.iterdir()}
    assert before == after


# -- the writer --------------------------------------------------------------------------


def test_the_writer_refuses_a_directory_that_is_not_empty_and_changes_nothing(
    bundle: Path,
) -> None:
    before = sorted(p.name for p in bundle.iterdir())
    with pytest.raises(BundleExists):
        make_bundle(bundle, 1)
    assert sorted(p.name for p in bundle.iterdir()) == before
    assert not [p for p in bundle.parent.iterdir() if p.name.startswith(".")]


def test_the_writer_fills_an_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    make_bundle(tmp_path / "empty", 1)
    assert verify_bundle(tmp_path / "empty").counts.matches == 1


def test_a_write_that_fails_midway_leaves_nothing_behind(tmp_path: Path) -> None:
    events = played(3)
    log = signed(events, key_of(7))
    head = log.sign_head(START_MS)

    def failing() -> Iterator[MatchEvidence]:
        yield from log.evidence(sorted(events, key=lambda m: m[0][0])[:1])
        raise OSError("the disk is full")

    with pytest.raises(OSError, match="disk is full"):
        write_bundle(
            tmp_path / "b",
            public_key=log.key.public,
            tree_head=head,
            leaves=log.leaves,
            matches=failing(),
        )
    assert list(tmp_path.iterdir()) == []


def test_the_writer_refuses_evidence_that_would_not_verify(tmp_path: Path) -> None:
    events = played(3)
    log = signed(events, key_of(7))
    head = log.sign_head(START_MS)
    wrong = [MatchEvidence(m[0][0], (log.leaf_index[m[0][0]] + 1) % 3, m) for m in events]
    with pytest.raises(InconsistentEvidence, match="leaf"):
        write_bundle(
            tmp_path / "b",
            public_key=log.key.public,
            tree_head=head,
            leaves=log.leaves,
            matches=sorted(wrong, key=lambda m: m.match_id),
        )
    other = TreeHead.sign(key_of(8), head.tree_size, head.root, head.timestamp_ms)
    with pytest.raises(InconsistentEvidence, match="another log"):
        write_bundle(
            tmp_path / "b",
            public_key=log.key.public,
            tree_head=other,
            leaves=log.leaves,
            matches=[],
        )
    assert list(tmp_path.iterdir()) == []


# -- what does not verify ----------------------------------------------------------------


def test_a_directory_that_is_not_a_bundle_is_misuse_not_evidence(tmp_path: Path) -> None:
    with pytest.raises(NotABundle):
        verify_bundle(tmp_path / "missing")
    with pytest.raises(NotABundle):
        verify_bundle(tmp_path)


def test_a_missing_file_is_named(copy: Path) -> None:
    (copy / layout.CHECKPOINTS).unlink()
    error = rejected(copy)
    assert isinstance(error, MalformedBundle)
    assert error.file == layout.CHECKPOINTS


def test_a_replaced_public_key_is_rejected(copy: Path) -> None:
    (copy / layout.PUBLIC_KEY).write_bytes(key_of(9).public.pem())
    error = rejected(copy)
    assert isinstance(error, SignatureRejected)
    assert error.file == layout.PUBLIC_KEY


def test_a_bundle_of_another_key_than_the_trusted_one_is_rejected(bundle: Path) -> None:
    with pytest.raises(SignatureRejected, match="trusted"):
        verify_bundle(bundle, public_key=key_of(9).public)
    verify_bundle(bundle, public_key=key_of(7).public)


def test_a_whole_bundle_resigned_by_another_key_verifies_only_as_that_log(tmp_path: Path) -> None:
    make_bundle(tmp_path / "b", 1, key=key_of(9))
    report = verify_bundle(tmp_path / "b")
    assert report.log_id == key_of(9).log_id != key_of(7).log_id


def test_a_truncated_inclusion_proof_is_rejected(copy: Path) -> None:
    edit_line(copy / layout.MATCHES, 2, lambda m: m["inclusion"].pop())
    error = rejected(copy)
    assert isinstance(error, ProofRejected)
    assert (error.file, error.line) == (layout.MATCHES, 2)


def test_a_truncated_consistency_proof_is_rejected(copy: Path) -> None:
    edit_line(copy / layout.TREE_HEADS, 1, lambda t: t["consistency"].pop())
    error = rejected(copy)
    assert isinstance(error, ProofRejected)
    assert (error.file, error.line) == (layout.TREE_HEADS, 1)


def test_a_tree_head_of_another_log_is_rejected(copy: Path) -> None:
    def other(obj: dict) -> None:  # type: ignore[type-arg]
        head = TreeHead.from_json(obj["tree_head"])
        obj["tree_head"] = TreeHead.sign(
            key_of(9), head.tree_size, head.root, head.timestamp_ms
        ).to_json()

    edit_line(copy / layout.TREE_HEADS, 1, other)
    error = rejected(copy)
    assert isinstance(error, SignatureRejected)
    assert (error.file, error.line) == (layout.TREE_HEADS, 1)
    assert "another log" in error.reason or "not this key's log" in error.reason


def test_checkpoints_out_of_order_are_rejected(copy: Path) -> None:
    path = copy / layout.CHECKPOINTS
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[0], lines[1] = lines[1], lines[0]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    error = rejected(copy)
    assert isinstance(error, CheckpointRejected)
    assert (error.file, error.line) == (layout.CHECKPOINTS, 2)
    assert "out of order" in error.reason


def test_a_checkpoint_of_an_action_is_rejected(tmp_path: Path) -> None:
    events = played(1)
    log = signed(events, key_of(7))
    head = log.sign_head(START_MS)
    rows = events[0]
    from service.evidence.signed import Checkpoint

    action = Checkpoint.sign(log.key, rows[0][0], 3, bytes(rows[3][11]).hex())
    write_bundle(
        tmp_path / "b",
        public_key=log.key.public,
        tree_head=head,
        leaves=log.leaves,
        matches=[MatchEvidence(rows[0][0], 0, rows, [action])],
    )
    error = rejected(tmp_path / "b")
    assert isinstance(error, CheckpointRejected)
    assert "not a round or match end" in error.reason


def test_an_edited_event_with_its_hash_recomputed_breaks_the_chain_at_the_next(copy: Path) -> None:
    # Points changed: the audit names the event whose hash no longer follows.
    path = copy / layout.EVENTS
    lines = path.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if '"points":5,' in line)
    lines[at] = lines[at].replace('"points":5,', '"points":10,')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    error = rejected(copy)
    assert isinstance(error, EventsRejected)
    assert (error.file, error.line) == (layout.EVENTS, at + 1)
    assert error.kind == "chain_broken"


def test_a_record_that_says_otherwise_than_its_events_is_rejected(copy: Path) -> None:
    edit_line(
        copy / layout.RECORDS, 3, lambda r: r["claims"].update(winner=1 - r["claims"]["winner"])
    )
    error = rejected(copy)
    assert isinstance(error, RecordMismatch)
    assert (error.file, error.line) == (layout.RECORDS, 3)


def test_the_counts_must_be_the_files(copy: Path) -> None:
    path = copy / layout.CHECKPOINTS
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    error = rejected(copy)
    assert isinstance(error, MalformedBundle)
    assert error.file == layout.BUNDLE


def test_an_event_line_is_read_only_as_the_format_writes_it(bundle: Path) -> None:
    line = (bundle / layout.EVENTS).read_text(encoding="utf-8").splitlines()[0]
    row = layout.parse_event_line(line)
    assert layout.event_line(row) == line
    h = row[11].hex()
    variants = [
        line.replace(h, h.upper()),
        line.replace('"seq":0', '"seq":-0'),
        line.replace('"seq":0', '"seq":0.0'),
        line.replace('"seq":0', '"seq": 0'),
        line.replace('"action_index":null,', "").replace('"seq":0', '"seq":0,"action_index":null'),
        line.replace('"kind":"match_created"', '"kind":"match_cre\\u0061ted"'),
        line + " ",
    ]
    for variant in variants:
        with pytest.raises(ValueError):  # noqa: PT011 (the message is the pattern's)
            layout.parse_event_line(variant)


# -- one byte changed anywhere -----------------------------------------------------------


def flips(size: int, count: int, seed: int) -> list[int]:
    """Positions to change: every one of a small file, else `count` spread at random."""
    if size <= count:
        return list(range(size))
    return sorted(random.Random(seed).sample(range(size), count))


FLIPS_PER_FILE = {
    layout.BUNDLE: 120,
    layout.PUBLIC_KEY: 113,
    layout.MATCHES: 80,
    layout.EVENTS: 250,
    layout.CHECKPOINTS: 80,
    layout.TREE_HEADS: 80,
    layout.RECORDS: 80,
}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("small") / "b"
    make_bundle(directory, 2)
    return directory


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FLIPS_PER_FILE))
def test_one_byte_changed_anywhere_in_an_evidence_file_is_detected(
    small: Path, tmp_path: Path, name: str
) -> None:
    target = tmp_path / "b"
    shutil.copytree(small, target)
    original = (small / name).read_bytes()
    for at in flips(len(original), FLIPS_PER_FILE[name], seed=len(name)):
        for change in (0x01, 0x20):
            data = bytearray(original)
            data[at] ^= change
            (target / name).write_bytes(bytes(data))
            with pytest.raises(BundleError) as caught:
                verify_bundle(target)
            assert caught.value.file in layout.EVIDENCE_FILES, (at, change)
    (target / name).write_bytes(original)
    verify_bundle(target)


def test_a_change_to_the_readme_is_harmless_it_is_not_evidence(copy: Path) -> None:
    (copy / layout.README).write_text("anything at all\n", encoding="utf-8")
    verify_bundle(copy)

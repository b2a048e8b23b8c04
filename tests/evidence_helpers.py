"""Bundles to verify: matches played in process, signed as a log with a key would sign them.

Until the service keeps its own tree (`tree_leaves`, `tree_heads`,
`checkpoints`), a log's evidence is made here with `service.evidence`, from
matches played by analysis/simulate.py's chunks or from a log `sniff simulate`
wrote, so that the writer, both verifiers and the export are tested on real
matches.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import duckdb
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from analysis.bundle.layout import Row
from analysis.bundle.stand_in import SignedLog, rows_of_table
from analysis.bundle.writer import write_bundle
from analysis.simulate import RunSettings, chunk_table
from service.evidence.keys import SigningKey
from service.evidence.merkle import CompactRange, leaf_data, leaf_hash
from service.evidence.signed import Checkpoint, TreeHead

START_MS = 1_796_198_400_000
"""The first tree head's time in these tests (2026-12-01T00:00:00Z)."""


def key_of(seed: int) -> SigningKey:
    """A fixed key: the same bundle bytes every run."""
    return SigningKey._of(Ed25519PrivateKey.from_private_bytes(bytes([seed]) * 32))


@cache
def played(matches: int, seats: int = 2, seed: int = 1) -> tuple[tuple[Row, ...], ...]:
    """`matches` simulated matches' events (greedy against random), each a logaudit row list."""
    settings = RunSettings("ev", matches, seats, ("greedy", "random"), seed, chunk_size=matches)
    table, _ = chunk_table(settings, 0)
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return tuple(tuple(m) for m in rows_of_table(columns))


def signed(matches: tuple[tuple[Row, ...], ...], key: SigningKey, every: int = 2) -> SignedLog:
    """The matches finished in the order given, a tree head signed after every `every`."""
    log = SignedLog(key)
    for i, rows in enumerate(matches):
        log.finish(rows)
        if i % every == every - 1:
            log.sign_head(START_MS + 1000 * i)
    return log


def make_bundle(
    directory: Path, matches: int = 3, *, key: SigningKey | None = None, seats: int = 2
) -> SignedLog:
    """A bundle of `matches` played matches, proven against a tree head of them all."""
    events = played(matches, seats)
    log = signed(events, key or key_of(7))
    head = log.sign_head(START_MS + 1000 * matches)
    write_bundle(
        directory,
        public_key=log.key.public,
        tree_head=head,
        leaves=log.leaves,
        matches=log.evidence(sorted(events, key=lambda m: m[0][0])),
        earlier=log.tree_heads[:-1],
    )
    return log


def add_evidence_tables(db_path: Path, key: SigningKey, *, leave_out: int = 0) -> None:
    """The tables a service with `key` keeps (docs/schema.md: hashes, ids and signatures as
    hex text), made for the finished matches of a log that `sniff simulate` wrote: its
    leaves (those the log numbered, or one a match in match id order), a tree head after
    each leaf but the last `leave_out` (those ended after the last head), and checkpoints of
    every round and match end."""
    with duckdb.connect(str(db_path)) as con:
        con.execute(
            "CREATE TABLE IF NOT EXISTS tree_leaves (leaf_index BIGINT PRIMARY KEY,"
            " match_id VARCHAR NOT NULL UNIQUE, seq BIGINT NOT NULL, head VARCHAR NOT NULL)"
        )
        con.execute(
            "CREATE TABLE IF NOT EXISTS tree_heads (tree_size BIGINT, root_hash VARCHAR,"
            " timestamp_ms BIGINT, log_id VARCHAR, signature VARCHAR)"
        )
        con.execute(
            "CREATE TABLE IF NOT EXISTS checkpoints (match_id VARCHAR, seq BIGINT,"
            " head VARCHAR, log_id VARCHAR, signature VARCHAR)"
        )
        if not con.execute("SELECT count(*) FROM tree_leaves").fetchone()[0]:  # type: ignore[index]
            ends = con.execute(
                "SELECT match_id, seq, lower(hex(hash)) FROM events_all"
                " WHERE kind = 'match_ended' ORDER BY match_id"
            ).fetchall()
            for index, (match_id, seq, head) in enumerate(ends):
                con.execute(
                    "INSERT INTO tree_leaves VALUES (?, ?, ?, ?)", [index, match_id, seq, head]
                )
        leaves = con.execute(
            "SELECT match_id, seq, head FROM tree_leaves ORDER BY leaf_index"
        ).fetchall()
        tree = CompactRange()
        for index, (match_id, seq, head) in enumerate(leaves[: len(leaves) - leave_out]):
            tree.append(leaf_hash(leaf_data(match_id, seq, head)))
            th = TreeHead.sign(key, tree.size, tree.root(), START_MS + 1000 * index)
            con.execute(
                "INSERT INTO tree_heads VALUES (?, ?, ?, ?, ?)",
                [th.tree_size, th.root_hash, th.timestamp_ms, th.log_id, th.signature.hex()],
            )
        rows = con.execute(
            "SELECT match_id, seq, lower(hex(hash)) FROM events_all"
            " WHERE kind IN ('round_ended', 'match_ended') ORDER BY match_id, seq"
        ).fetchall()
        for match_id, seq, head in rows:
            checkpoint = Checkpoint.sign(key, match_id, seq, head)
            con.execute(
                "INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?)",
                [match_id, seq, head, key.log_id, checkpoint.signature.hex()],
            )


def served_log(db_path: Path, key: SigningKey) -> tuple[list[str], str]:
    """A log a signing service wrote: two matches played to the end through the RPCs and one
    created with seat entropy; the service signs their checkpoints and tree heads itself.
    The ids of those matches, in the order they were created, and of one left in play."""
    import random

    from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
    from tests.service_helpers import RPC_TIMEOUT, create, play_step, play_to_end, serving

    rng = random.Random(5)
    ids = []
    with serving(db_path, signer=key) as svc:
        for seed in (3, 4):
            created = create(svc.stub, 2, seed, target=60)
            play_to_end(svc.stub, created, rng)
            ids.append(created.match_id)
        request = pb.CreateMatchRequest(seat_count=3, seat_entropy=True, target=60)
        created = svc.stub.CreateMatch(request, timeout=RPC_TIMEOUT)
        for seat, token in enumerate(created.seat_tokens):
            svc.stub.ContributeEntropy(
                pb.ContributeEntropyRequest(
                    match_id=created.match_id, token=token, entropy=bytes([seat + 1]) * 32
                ),
                timeout=RPC_TIMEOUT,
            )
        play_to_end(svc.stub, created, rng)
        ids.append(created.match_id)
        in_play = create(svc.stub, 2, 5)
        play_step(svc.stub, in_play, rng)
    return ids, in_play.match_id

"""A service with a signing key signs every head it hands out and the tree of finished
matches; the checkpoints, tree heads and proofs verify with its public key alone and
agree with the log, through a kill -9 too; one without a key signs nothing
(docs/evidence.md)."""

from __future__ import annotations

import json
import random
import signal
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from analysis.cli.main import cli
from service.evidence.keys import SigningKey, generate_key_files, load_public_key
from service.evidence.proofs import InclusionProof
from service.evidence.signed import Checkpoint, TreeHead
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.storage import open_readonly
from service.storage.tree import read_tree
from tests.service_helpers import (
    RPC_TIMEOUT,
    ServerProcess,
    Stub,
    create,
    play_step,
    play_to_end,
    query,
    rpc_error,
    serving,
    state,
)

pytestmark = pytest.mark.slow

TARGET = 60
"""A short match: a few rounds."""


def checkpoint_of(msg: pb.SignedCheckpoint) -> Checkpoint:
    return Checkpoint(msg.log_id, msg.match_id, msg.seq, msg.head, bytes.fromhex(msg.signature))


def tree_head_of(msg: pb.SignedTreeHead) -> TreeHead:
    return TreeHead(
        msg.log_id, msg.tree_size, msg.root_hash, msg.timestamp_ms, bytes.fromhex(msg.signature)
    )


def stored_checkpoints(db: Path) -> dict[tuple[str, int], Checkpoint]:
    with open_readonly(db) as reader:
        rows = reader.query("SELECT * FROM checkpoints").to_pylist()
    return {
        (r["match_id"], r["seq"]): Checkpoint(
            r["log_id"], r["match_id"], r["seq"], r["head"], bytes.fromhex(r["signature"])
        )
        for r in rows
    }


def heads_in_log(db: Path) -> dict[tuple[str, int], str]:
    with open_readonly(db) as reader:
        rows = reader.query(
            "SELECT match_id, seq, lower(hex(hash)) AS head FROM events_all"
            " WHERE kind IN ('round_ended', 'match_ended')"
        ).to_pylist()
    return {(r["match_id"], r["seq"]): r["head"] for r in rows}


def check_tree(db: Path, key: SigningKey) -> None:
    """Every finished match has one leaf with its final head; every tree head verifies, has
    the leaves' root, and each is consistent with the one before."""
    with open_readonly(db) as reader:
        stored = read_tree(reader.query)
        ends = reader.query(
            "SELECT match_id, seq, lower(hex(hash)) AS head FROM events_all"
            " WHERE kind = 'match_ended'"
        ).to_pylist()
    assert not stored.gaps
    assert sorted(stored.leaves) == sorted((r["match_id"], r["seq"], r["head"]) for r in ends)
    assert stored.heads, "a tree head after the matches ended"
    tree = stored.tree()
    for head in stored.heads:
        head.verify(key.public)
        assert tree.root(head.tree_size).hex() == head.root_hash
    assert stored.heads[-1].tree_size == len(stored.leaves)
    for old, new in zip(stored.heads, stored.heads[1:], strict=False):
        proof = stored.consistency(old.tree_size, new.tree_size)
        proof.verify(key.public)
    for match_id, *_ in stored.leaves:
        stored.inclusion(match_id).verify(key.public)


def test_the_checkpoints_handed_out_verify_and_are_those_stored(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    key = SigningKey.generate()
    with serving(db, signer=key) as service:
        stub = service.stub
        created = create(stub, 3, seed=11, target=TARGET)
        played = play_to_end(stub, created, random.Random(5))
        handed = []
        for reply in played.replies:
            if not reply.chain_head:
                assert not reply.HasField("checkpoint")  # no signature mid-round
                continue
            c = checkpoint_of(reply.checkpoint)
            c.verify(key.public)
            assert (c.head, c.match_id) == (reply.chain_head, created.match_id)
            handed.append(c)
        assert handed

        events = list(
            stub.WatchMatch(
                pb.WatchMatchRequest(match_id=created.match_id, token=created.seat_tokens[0]),
                timeout=RPC_TIMEOUT,
            )
        )
        watched = [checkpoint_of(e.event.checkpoint) for e in events if e.event.chain_head]
        assert watched == handed
        scores = stub.GetScores(
            pb.GetScoresRequest(match_id=created.match_id, token=created.seat_tokens[1]),
            timeout=RPC_TIMEOUT,
        )
        assert checkpoint_of(scores.checkpoint) == handed[-1]
        st = state(stub, created.match_id, created.observer_token)
        assert checkpoint_of(st.checkpoint) == handed[-1]

        second = play_to_end(stub, create(stub, 2, seed=12, target=TARGET), random.Random(6))
        info = stub.GetLogKey(pb.GetLogKeyRequest(), timeout=RPC_TIMEOUT)
        assert info.log_id == key.log_id
        assert info.public_key_pem.encode() == key.public.pem()
        for match_id in (created.match_id, second.match_id):
            reply = stub.GetInclusionProof(
                pb.GetInclusionProofRequest(match_id=match_id), timeout=RPC_TIMEOUT
            )
            proof = InclusionProof(
                reply.match_id,
                reply.seq,
                reply.head,
                reply.leaf_index,
                tree_head_of(reply.tree_head),
                tuple(bytes.fromhex(p) for p in reply.path_hashes),
            )
            proof.verify(key.public)
        refused = rpc_error(stub.GetInclusionProof, pb.GetInclusionProofRequest(match_id="0" * 16))
        assert refused.code() == grpc.StatusCode.NOT_FOUND
    stored = stored_checkpoints(db)
    for c in handed:
        assert stored[(c.match_id, c.seq)] == c
    assert set(stored) == set(heads_in_log(db))  # every round and match end, none else
    check_tree(db, key)


def test_a_service_without_a_key_hands_out_no_checkpoint_and_signs_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.duckdb"
    with serving(db) as service:
        stub = service.stub
        played = play_to_end(stub, create(stub, 2, seed=3, target=TARGET), random.Random(1))
        assert not any(r.HasField("checkpoint") for r in played.replies)
        assert any(r.chain_head for r in played.replies)
        refused = rpc_error(stub.GetLogKey, pb.GetLogKeyRequest())
        assert refused.code() == grpc.StatusCode.FAILED_PRECONDITION
        counts = query(
            stub,
            "SELECT (SELECT count(*) FROM checkpoints) AS c, (SELECT count(*) FROM tree_heads)"
            " AS h, (SELECT count(*) FROM tree_leaves) AS l",
        ).to_pylist()[0]
    assert counts == {"c": 0, "h": 0, "l": 1}
    # The same file opened by a service with a key: what is missing is signed at open.
    key = SigningKey.generate()
    with serving(db, signer=key):
        pass
    assert set(stored_checkpoints(db)) == set(heads_in_log(db))
    check_tree(db, key)


def test_after_a_kill_mid_play_the_leaves_and_heads_are_right_and_recovery_signs(
    tmp_path: Path,
) -> None:
    key_path = tmp_path / "sniff.key"
    key = generate_key_files(key_path)
    db = tmp_path / "log.duckdb"
    server = ServerProcess(db, tmp_path, args=("--signing-key-file", str(key_path)))
    try:
        server.start()
        with grpc.insecure_channel(server.address) as channel:
            stub = Stub(channel)
            rng = random.Random(9)
            finished = [
                play_to_end(stub, create(stub, 2 + i % 3, seed=20 + i, target=TARGET), rng)
                for i in range(3)
            ]
            in_play = create(stub, 3, seed=30, target=TARGET)
            for _ in range(5):
                play_step(stub, in_play, rng)
            # The last match ends right before the kill: its end is still in the journal.
            last = play_to_end(stub, create(stub, 2, seed=31, target=TARGET), rng)
        assert server.proc is not None
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(timeout=30)
        server.start()
        with grpc.insecure_channel(server.address) as channel:
            stub = Stub(channel)
            play_to_end(stub, in_play, rng)
            reply = stub.GetInclusionProof(
                pb.GetInclusionProofRequest(match_id=last.match_id), timeout=RPC_TIMEOUT
            )
            assert reply.tree_head.tree_size == 5
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=30)
    finally:
        server.close()
    assert set(stored_checkpoints(db)) == set(heads_in_log(db))
    for c in stored_checkpoints(db).values():
        c.verify(key.public)
    check_tree(db, key)
    with open_readonly(db) as reader:
        ids = [m for m, _, _ in read_tree(reader.query).leaves]
    assert len(ids) == len(set(ids)) == 5
    assert set(ids) == {p.match_id for p in [*finished, last]} | {in_play.match_id}


@pytest.fixture(scope="module")
def signed_log(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A log of three finished matches served with a key, and the checkpoints handed out."""
    tmp = tmp_path_factory.mktemp("signed")
    key_path = tmp / "sniff.key"
    generate_key_files(key_path)
    key = load_public_key(Path(f"{key_path}.pub"))
    db = tmp / "log.duckdb"
    handed: list[dict[str, Any]] = []
    ids = []
    from service.evidence.keys import load_signing_key

    with serving(db, signer=load_signing_key(key_path)) as service:
        for i in range(3):
            played = play_to_end(
                service.stub,
                create(service.stub, 2, seed=40 + i, target=TARGET),
                random.Random(i),
            )
            ids.append(played.match_id)
            service.running.hub.log.flush()  # one load, so one tree head, a match
            handed += [
                checkpoint_of(r.checkpoint).to_json() for r in played.replies if r.chain_head
            ]
    heads = tmp / "heads.jsonl"
    heads.write_text("".join(json.dumps(c) + "\n" for c in handed))
    return {"db": db, "key": key, "pub": f"{key_path}.pub", "heads": heads, "ids": ids, "tmp": tmp}


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def test_sniff_proof_output_verifies_and_a_changed_byte_does_not(
    signed_log: dict[str, Any],
) -> None:
    tmp: Path = signed_log["tmp"]
    db, pub = str(signed_log["db"]), signed_log["pub"]
    for name, args in (
        ("inclusion.json", [signed_log["ids"][0]]),
        ("consistency.json", ["--from", "1"]),
    ):
        result = run("proof", *args, "--db", db)
        assert result.exit_code == 0, result.output
        document = json.loads(result.stdout)
        path = tmp / name
        path.write_text(result.stdout)
        checked = run("proof", "--check", str(path), "--public-key", pub)
        assert checked.exit_code == 0, checked.output
        # A byte of the path changed: the proof fails, exit 1, one line naming the file.
        first = document["path"][0]
        document["path"][0] = ("0" if first[0] != "0" else "1") + first[1:]
        forged = tmp / f"forged-{name}"
        forged.write_text(json.dumps(document))
        failed = run("proof", "--check", str(forged), "--public-key", pub)
        assert failed.exit_code == 1, failed.output
        assert str(forged) in failed.stderr
        assert len(failed.stderr.strip().splitlines()) == 1
    wrong = tmp / "other.key"
    generate_key_files(wrong)
    failed = run("proof", "--check", str(tmp / "inclusion.json"), "--public-key", f"{wrong}.pub")
    assert failed.exit_code == 1
    misuse = run("proof", "--check", str(tmp / "inclusion.json"), "--public-key", str(wrong))
    assert misuse.exit_code == 2  # a private key where the public one goes


def test_audit_with_the_key_and_the_kept_heads_passes(signed_log: dict[str, Any]) -> None:
    result = run(
        "audit", "--db", str(signed_log["db"]), "--public-key", signed_log["pub"],
        "--heads", str(signed_log["heads"]), "--format", "jsonl",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[-1]["id"] == "evidence"
    assert lines[-1]["ok"]


def kinds(result: Any) -> set[str]:
    last = json.loads(result.stdout.splitlines()[-1])
    assert last["id"] == "evidence"
    return {p["kind"] for p in last["problems"]}


def test_audit_with_the_wrong_public_key_fails(signed_log: dict[str, Any]) -> None:
    other = signed_log["tmp"] / "wrong.key"
    generate_key_files(other)
    result = run(
        "audit", "--db", str(signed_log["db"]), "--public-key", f"{other}.pub",
        "--format", "jsonl",
    )  # fmt: skip
    assert result.exit_code == 1
    assert kinds(result) == {"bad_signature"}


def test_audit_with_a_forged_heads_file_fails(signed_log: dict[str, Any]) -> None:
    tmp: Path = signed_log["tmp"]
    lines = signed_log["heads"].read_text().splitlines()
    forged_head = json.loads(lines[0])
    forged_head["head"] = "ab" * 32  # a head the log never had, with the old signature
    signed_anew = json.loads(lines[1])
    other = SigningKey.generate()
    signed_anew = Checkpoint.sign(
        other, signed_anew["match_id"], signed_anew["seq"], signed_anew["head"]
    ).to_json()
    forged = tmp / "forged.jsonl"
    forged.write_text(json.dumps(forged_head) + "\n" + json.dumps(signed_anew) + "\n")
    result = run(
        "audit", "--db", str(signed_log["db"]), "--public-key", signed_log["pub"],
        "--heads", str(forged), "--format", "jsonl",
    )  # fmt: skip
    assert result.exit_code == 1
    assert kinds(result) == {"bad_signature"}
    # Signed by the key itself, but a head the log does not hold: head_mismatch.
    from service.evidence.keys import load_signing_key

    real = load_signing_key(Path(signed_log["pub"][: -len(".pub")]))
    unlogged = Checkpoint.sign(real, forged_head["match_id"], forged_head["seq"], "ef" * 32)
    forged.write_text(json.dumps(unlogged.to_json()) + "\n")
    result = run(
        "audit", "--db", str(signed_log["db"]), "--public-key", signed_log["pub"],
        "--heads", str(forged), "--format", "jsonl",
    )  # fmt: skip
    assert result.exit_code == 1
    assert kinds(result) == {"head_mismatch"}
    malformed = tmp / "malformed.jsonl"
    malformed.write_text("not json\n")
    misuse = run(
        "audit", "--db", str(signed_log["db"]), "--public-key", signed_log["pub"],
        "--heads", str(malformed),
    )  # fmt: skip
    assert misuse.exit_code == 2
    assert len(misuse.stderr.strip().splitlines()) == 1


def test_a_log_whose_leaf_was_edited_fails_the_audit(signed_log: dict[str, Any]) -> None:
    import shutil

    import duckdb

    edited = signed_log["tmp"] / "edited.duckdb"
    shutil.copy(signed_log["db"], edited)
    with duckdb.connect(str(edited)) as con:
        con.execute("UPDATE tree_leaves SET head = ? WHERE leaf_index = 1", ["cd" * 32])
    result = run(
        "audit", "--db", str(edited), "--public-key", signed_log["pub"], "--format", "jsonl"
    )
    assert result.exit_code == 1
    assert kinds(result) == {"leaf_mismatch", "tree_mismatch"}

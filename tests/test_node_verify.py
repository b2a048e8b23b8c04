"""`clients/node/verify.js` checks what `sniff verify` checks (all but the rules replay), alone.

Written from docs/evidence.md, not from the Python code: these tests hold it
to the evidence vectors, to bundles the Python writer makes, to the same
one-byte changes the Python verifier is held to, and to proof documents.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from analysis.bundle import layout
from service.evidence.merkle import Tree, consistency_proof, inclusion_proof
from tests.evidence_helpers import key_of, make_bundle
from tests.test_node_client import CLIENT_DIR, ROOT, node_command

pytestmark = pytest.mark.node

VERIFY = CLIENT_DIR / "verify.js"
VECTORS = ROOT / "tests" / "fixtures" / "evidence_vectors.json"


def node(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*node_command(VERIFY), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("node-bundle") / "b"
    make_bundle(directory, 3)
    return directory


def test_every_evidence_vector_checks_in_node() -> None:
    done = node("--vectors", str(VECTORS))
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["ok"] is True
    assert result["inclusion"] == len(json.loads(VECTORS.read_text())["inclusion"])


def test_a_bundle_the_python_writer_made_verifies_in_node_and_says_it_did_not_replay(
    bundle: Path,
) -> None:
    before = {p.name: p.stat().st_mtime_ns for p in bundle.iterdir()}
    for workers in ("1", "2"):
        done = node(str(bundle), "--workers", workers)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith("verified: 3 matches")
        assert "rules replay" in done.stdout
    assert {p.name: p.stat().st_mtime_ns for p in bundle.iterdir()} == before


def test_node_takes_the_trusted_key_and_refuses_another(bundle: Path, tmp_path: Path) -> None:
    mine, other = tmp_path / "mine.pub", tmp_path / "other.pub"
    mine.write_bytes(key_of(7).public.pem())
    other.write_bytes(key_of(9).public.pem())
    assert node(str(bundle), "--public-key", str(mine)).returncode == 0
    done = node(str(bundle), "--public-key", str(other))
    assert done.returncode == 1
    assert done.stderr.startswith("Error: public_key.pem: ")


def test_node_misuse_is_exit_2(tmp_path: Path) -> None:
    for args in ([str(tmp_path / "none")], [str(tmp_path)], []):
        done = node(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("Error: ")


def test_a_replaced_key_fails_in_node_with_one_line_naming_the_file(
    bundle: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "b"
    shutil.copytree(bundle, copy)
    (copy / layout.PUBLIC_KEY).write_bytes(key_of(9).public.pem())
    done = node(str(copy))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("Error: public_key.pem: ")


def test_a_truncated_proof_fails_in_node(bundle: Path, tmp_path: Path) -> None:
    copy = tmp_path / "b"
    shutil.copytree(bundle, copy)
    lines = (copy / layout.MATCHES).read_text().splitlines()
    entry = json.loads(lines[1])
    entry["inclusion"].pop()
    lines[1] = layout.dumps(entry)
    (copy / layout.MATCHES).write_text("\n".join(lines) + "\n")
    done = node(str(copy))
    assert done.returncode == 1
    assert done.stderr.startswith("Error: matches.jsonl:2: the inclusion proof is shorter")


# -- one byte changed anywhere, in one Node process ----------------------------------------

FLIPS = """
const fs = require('fs'), path = require('path');
const { verifyBundle } = require(process.argv[1]);
const [dir, flips] = [process.argv[2], JSON.parse(process.argv[3])];
(async () => {
  const out = [];
  for (const [name, at, xor] of flips) {
    const file = path.join(dir, name);
    const original = fs.readFileSync(file);
    const changed = Buffer.from(original);
    changed[at] ^= xor;
    fs.writeFileSync(file, changed);
    try {
      await verifyBundle(dir, null, 1);
      out.push([name, at, xor, 'verified']);
    } catch (e) {
      out.push([name, at, xor, e.file === undefined ? `crash: ${e.message}` : e.file]);
    }
    fs.writeFileSync(file, original);
  }
  process.stdout.write(JSON.stringify(out));
})();
"""

NODE_FLIPS_PER_FILE = {
    layout.BUNDLE: 60,
    layout.PUBLIC_KEY: 113,
    layout.MATCHES: 40,
    layout.EVENTS: 200,
    layout.CHECKPOINTS: 40,
    layout.TREE_HEADS: 40,
    layout.RECORDS: 40,
}


def test_one_byte_changed_anywhere_in_an_evidence_file_fails_in_node(
    bundle: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "b"
    shutil.copytree(bundle, copy)
    flips = []
    for name, count in NODE_FLIPS_PER_FILE.items():
        size = (copy / name).stat().st_size
        spots = range(size) if size <= count else random.Random(name).sample(range(size), count)
        flips += [(name, at, xor) for at in spots for xor in (0x01, 0x20)]
    command = node_command(VERIFY)
    done = subprocess.run(
        [command[0], "-e", FLIPS, str(VERIFY), str(copy), json.dumps(flips)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    outcomes = json.loads(done.stdout)
    assert len(outcomes) == len(flips)
    missed = [o for o in outcomes if o[3] not in layout.EVIDENCE_FILES]
    assert not missed, missed[:10]


# -- proof documents (docs/evidence.md, "Proof documents") ---------------------------------


def test_node_checks_inclusion_and_consistency_proof_documents(
    bundle: Path, tmp_path: Path
) -> None:
    from analysis.bundle.stand_in import SignedLog
    from tests.evidence_helpers import played, signed

    log: SignedLog = signed(played(3), key_of(7), every=1)
    tree = Tree(log.leaves)
    old, new = log.tree_heads[1], log.tree_heads[2]
    rows = played(3)[1]
    inclusion: dict[str, Any] = {
        "type": "inclusion",
        "match_id": rows[0][0],
        "seq": rows[-1][1],
        "head": bytes(rows[-1][11]).hex(),
        "leaf_index": 1,
        "tree_head": new.to_json(),
        "path": [h.hex() for h in inclusion_proof(tree, 1)],
    }
    consistency: dict[str, Any] = {
        "type": "consistency",
        "from": old.to_json(),
        "to": new.to_json(),
        "path": [h.hex() for h in consistency_proof(tree, old.tree_size)],
    }
    key = tmp_path / "k.pub"
    key.write_bytes(log.key.public.pem())
    docs: tuple[tuple[str, dict[str, Any]], ...] = (
        ("inc.json", inclusion),
        ("con.json", consistency),
    )
    for name, doc in docs:
        (tmp_path / name).write_text(json.dumps(doc) + "\n")
        done = node("--proof", str(tmp_path / name), "--public-key", str(key))
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("verified: ")
        cut = dict(doc, path=doc["path"][:-1])
        (tmp_path / name).write_text(json.dumps(cut))
        done = node("--proof", str(tmp_path / name), "--public-key", str(key))
        assert done.returncode == 1
        assert done.stderr.startswith(f"Error: {name}: ")
    other = tmp_path / "o.pub"
    other.write_bytes(key_of(9).public.pem())
    (tmp_path / "inc.json").write_text(json.dumps(inclusion))
    assert node("--proof", str(tmp_path / "inc.json"), "--public-key", str(other)).returncode == 1
    assert node("--proof", str(tmp_path / "inc.json")).returncode == 2


def test_node_verifies_a_bundle_of_a_signing_services_log_seat_entropy_included(
    tmp_path: Path,
) -> None:
    from analysis.bundle.from_log import export_evidence
    from tests.evidence_helpers import served_log

    key = key_of(11)
    served_log(tmp_path / "log.duckdb", key)  # its match in play is not in the tree
    export_evidence(tmp_path / "log.duckdb", tmp_path / "b", public_key=key.public)
    assert '\\"seat_entropy\\":true' in (tmp_path / "b" / layout.EVENTS).read_text()
    done = node(str(tmp_path / "b"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("verified: 3 matches")


def test_a_deal_the_seed_does_not_make_fails_both_verifiers_even_re_signed_by_the_key(
    tmp_path: Path,
) -> None:
    """The log's owner swaps two tiles of the first deal, chains the match again with its
    secret and signs it all: every signature and proof holds, the seed commitment does not."""
    from analysis.bundle.errors import EventsRejected
    from analysis.bundle.verify import verify_bundle
    from analysis.bundle.writer import write_bundle
    from service.storage import chain
    from tests.evidence_helpers import played, signed

    rows = [list(r) for r in played(1)[0]]
    dealt = json.loads(rows[1][10])
    dealt["hands"][0][0], dealt["hands"][1][0] = dealt["hands"][1][0], dealt["hands"][0][0]
    rows[1][10] = json.dumps(dealt, separators=(",", ":"))
    secret = bytes.fromhex(json.loads(rows[-1][10])["chain_secret"])
    previous = chain.GENESIS
    for row in rows:
        detail = None if row[10] is None else chain.load_detail(row[10])
        m, seq, kind, rnd, action, seat, move, drawn, points, ends = row[:10]
        content = chain.canonical(
            m, seq, kind, rnd, action, seat, move, drawn, points, ends, detail
        )
        row[11] = previous = chain.link(previous, secret, content)
    forged = (tuple(tuple(r) for r in rows),)
    log = signed(forged, key_of(7))
    head = log.sign_head(1_796_198_400_000)
    write_bundle(
        tmp_path / "b",
        public_key=log.key.public,
        tree_head=head,
        leaves=log.leaves,
        matches=log.evidence(forged),
    )
    with pytest.raises(EventsRejected) as caught:
        verify_bundle(tmp_path / "b")
    assert (caught.value.kind, caught.value.line) == ("deal_mismatch", 2)
    done = node(str(tmp_path / "b"))
    assert done.returncode == 1
    assert done.stderr.startswith("Error: events.jsonl:2: ")
    assert "deal_mismatch" in done.stderr

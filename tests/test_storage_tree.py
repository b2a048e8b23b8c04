"""Every finished match gets one leaf in the tree of finished matches, numbered in the order
the log took its end, whatever inserted it; a file of schema version 4 gets its leaves when
migrated."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analysis.bot_matches import bot_match_events, recorded_bot_match
from analysis.importer import record_rows
from service.storage import EventLog, open_readonly
from service.storage.events import rows_to_arrow
from sniff import to_record


def leaves(db: Path) -> list[tuple[int, str, int, str]]:
    with open_readonly(db) as reader:
        table = reader.query("SELECT * FROM tree_leaves ORDER BY leaf_index")
    return [tuple(r.values()) for r in table.to_pylist()]


def ends(db: Path) -> dict[str, tuple[int, str]]:
    with open_readonly(db) as reader:
        table = reader.query(
            "SELECT match_id, seq, lower(hex(hash)) AS head FROM events_all"
            " WHERE kind = 'match_ended'"
        )
    return {r["match_id"]: (r["seq"], r["head"]) for r in table.to_pylist()}


def test_each_finished_match_gets_one_leaf_with_its_final_head_in_the_order_logged(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.duckdb"
    record = to_record(recorded_bot_match("x", 3, 5, ("greedy",)).match, "club", ["a", "b", "c"])
    with EventLog(db) as log:
        log.append(bot_match_events("first", 2, 1))
        log.append(bot_match_events("in-play", 3, 4, max_actions=30))
        log.flush()
        log.import_matches(rows_to_arrow(record_rows(record)), verify=True)
        log.append(bot_match_events("last", 4, 3))
    found = leaves(db)
    assert [index for index, *_ in found] == [0, 1, 2]
    assert found[0][1] == "first"
    assert found[2][1] == "last"
    assert {m: (seq, head) for _, m, seq, head in found} == ends(db)


def test_a_file_of_version_4_gets_the_leaves_of_its_finished_matches(tmp_path: Path) -> None:
    db = tmp_path / "log.duckdb"
    with EventLog(db) as log:
        for seats, seed in ((2, 1), (3, 2), (4, 3)):
            log.append(bot_match_events(f"m{seats}", seats, seed))
        log.append(bot_match_events("in-play", 3, 4, max_actions=30))
    expected = leaves(db)
    assert len(expected) == 3
    # A version-4 file as the release before this one made it: version 5 only adds the
    # tree's tables (migrate_4_to_5.sql), so dropping them gives the same file.
    with duckdb.connect(str(db)) as con:
        for table in ("tree_leaves", "tree_heads", "checkpoints"):
            con.execute(f"DROP TABLE {table}")
        con.execute("UPDATE schema_version SET version = 4")
    with EventLog(db) as log:
        assert log.opening.version_found == 4
        log.append(bot_match_events("after", 2, 7))
    migrated = leaves(db)
    assert migrated[:3] == expected
    assert migrated[3][:2] == (3, "after")


def test_a_log_written_without_a_key_is_signed_when_opened_with_one(tmp_path: Path) -> None:
    """An offline tool (no key) numbers leaves and signs nothing; the first open with the key
    signs every head and one tree head; opening again signs nothing more."""
    from service.evidence.keys import SigningKey
    from service.storage.tree import read_tree

    db = tmp_path / "log.duckdb"
    with EventLog(db) as log:
        log.append(bot_match_events("a", 2, 1))
        log.append(bot_match_events("b", 3, 2))
    with open_readonly(db) as reader:
        assert reader.query("SELECT count(*) AS n FROM checkpoints").to_pylist() == [{"n": 0}]
        assert not read_tree(reader.query).heads
    key = SigningKey.generate()
    for _ in range(2):
        with EventLog(db, signer=key):
            pass
        with open_readonly(db) as reader:
            stored = read_tree(reader.query)
            signed = reader.query(
                "SELECT count(*) AS n FROM checkpoints c JOIN events_all e"
                " USING (match_id, seq) WHERE lower(hex(e.hash)) = c.head"
            ).to_pylist()[0]["n"]
            ends = reader.query(
                "SELECT count(*) AS n FROM events_all WHERE kind IN ('round_ended', 'match_ended')"
            ).to_pylist()[0]["n"]
        assert signed == ends
        assert [h.tree_size for h in stored.heads] == [2]
        stored.heads[0].verify(key.public)
        assert stored.heads[0].root == stored.tree().root()

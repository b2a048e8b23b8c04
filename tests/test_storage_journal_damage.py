"""A damaged journal never loses an acknowledged event without a word.

Each journal record carries its length and checksums, so a reader tells a torn
tail (a write cut short by a crash: never acknowledged, dropped) from damage
anywhere else, which refuses the open until `sniff recover --salvage` is chosen.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from analysis.cli.main import cli
from service.storage import EventLog, JournalDamaged, LogEvent, open_readonly
from service.storage.events import EventRow, to_rows
from service.storage.journal import (
    Journal,
    encode_record,
    journal_path,
    read_journal,
    scan_journal,
)


def created(match_id: str) -> LogEvent:
    return LogEvent.match_created(match_id, seats=2, target=250, seed=1, rules_version="v")


def action(match_id: str, seq: int) -> LogEvent:
    return LogEvent.action(match_id, seq, round=0, action_index=seq - 1, seat=0, move="draw")


def ten_rows() -> list[EventRow]:
    """Ten acknowledged events of two matches in play, as a killed service leaves them."""
    events = [created("a"), created("b")]
    events += [action("a", s) for s in range(1, 5)] + [action("b", s) for s in range(1, 5)]
    return to_rows(events)


def written(path: Path, rows: list[EventRow], groups: int = 3) -> bytes:
    """A journal written as the log's writer does: a few group commits."""
    journal = Journal(path, sync=False)
    step = -(-len(rows) // groups)
    for start in range(0, len(rows), step):
        journal.write(rows[start : start + step])
    journal.close(remove=False)
    return path.read_bytes()


def record_ends(rows: list[EventRow]) -> list[int]:
    ends, total = [], 0
    for row in rows:
        total += len(encode_record(row))
        ends.append(total)
    return ends


def digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def test_every_single_bit_flip_in_a_journal_is_detected_or_harmless(tmp_path: Path) -> None:
    rows = ten_rows()
    path = tmp_path / "j"
    data = written(path, rows)
    undetected = []
    for offset in range(len(data)):
        for bit in range(8):
            damaged = bytearray(data)
            damaged[offset] ^= 1 << bit
            path.write_bytes(bytes(damaged))
            scan = scan_journal(path)
            if scan.damaged_at is None and (scan.rows != rows or scan.torn_at is not None):
                undetected.append((offset, bit))
    assert undetected == []


def test_a_flip_in_a_middle_record_names_its_offset_and_the_intact_records_after(
    tmp_path: Path,
) -> None:
    rows = ten_rows()
    path = tmp_path / "j"
    data = bytearray(written(path, rows))
    sixth = record_ends(rows)[4]
    data[sixth] ^= 0x01  # the first byte of the sixth record
    path.write_bytes(bytes(data))
    scan = scan_journal(path)
    assert scan.damaged_at == sixth
    assert scan.rows == rows[:5]
    assert scan.after == rows[6:]


def test_the_last_records_terminator_damaged_is_not_a_torn_tail(tmp_path: Path) -> None:
    rows = ten_rows()
    path = tmp_path / "j"
    data = bytearray(written(path, rows))
    data[-1] = ord("x")  # the newline that ends the last, acknowledged record
    path.write_bytes(bytes(data))
    with pytest.raises(JournalDamaged) as raised:
        read_journal(path)
    assert raised.value.offset == record_ends(rows)[8]
    assert raised.value.records_after == 0


def test_truncation_at_every_byte_drops_only_the_record_it_cuts(tmp_path: Path) -> None:
    rows = ten_rows()
    path = tmp_path / "j"
    data = written(path, rows)
    ends = [0, *record_ends(rows)]
    for cut in range(len(data) + 1):
        path.write_bytes(data[:cut])
        scan = scan_journal(path)
        whole = max(i for i, end in enumerate(ends) if end <= cut)
        assert scan.damaged_at is None, cut
        assert scan.rows == rows[:whole], cut
        assert (scan.torn_at is not None) == (cut not in ends), cut


def test_zeros_a_filesystem_leaves_after_the_last_write_are_a_torn_tail(tmp_path: Path) -> None:
    rows = ten_rows()
    path = tmp_path / "j"
    data = written(path, rows)
    path.write_bytes(data + bytes(4096))
    scan = scan_journal(path)
    assert scan.rows == rows
    assert scan.damaged_at is None
    assert scan.torn_at == len(data)


def test_a_journal_of_json_lines_from_an_older_release_still_loads(tmp_path: Path) -> None:
    """Releases up to schema version 4 wrote one JSON array a line, without checksums."""
    rows = ten_rows()
    path = tmp_path / "j"
    lines = [encode_record(row).split(b" ", 1)[1] for row in rows]
    path.write_bytes(b"".join(lines) + b'["a",5,"act')
    scan = scan_journal(path)
    assert scan.rows == rows
    assert scan.torn_at is not None
    path.write_bytes(b"".join(lines[:3]) + b"[garbage\n" + b"".join(lines[4:]))
    scan = scan_journal(path)
    assert scan.rows == rows[:3]
    assert scan.damaged_at is not None
    assert scan.after == rows[4:]


@pytest.fixture
def damaged_log(tmp_path: Path) -> tuple[Path, list[EventRow], int]:
    """A log whose service was killed with ten events in the journal, the third damaged."""
    db = tmp_path / "log.duckdb"
    with EventLog(db) as log:
        log.append([created("old")])
    rows = ten_rows()
    data = bytearray(written(journal_path(db), rows))
    third = record_ends(rows)[1]
    data[third + 40] ^= 0x04  # inside the payload of the third record, a's seq 1
    journal_path(db).write_bytes(bytes(data))
    return db, rows, third


def test_a_damaged_journal_refuses_the_log_and_leaves_every_file_as_it_was(
    damaged_log: tuple[Path, list[EventRow], int],
) -> None:
    db, _rows, third = damaged_log
    before = {name: digest(Path(f"{db}{name}")) for name in ("", ".wal", ".journal")}
    with pytest.raises(JournalDamaged) as raised:
        EventLog(db)
    assert (raised.value.offset, raised.value.records_after) == (third, 7)
    assert f"byte {third}" in str(raised.value)
    with pytest.raises(JournalDamaged):
        open_readonly(db)  # an offline read would show a shortened log
    after = {name: digest(Path(f"{db}{name}")) for name in ("", ".wal", ".journal")}
    assert after == before


def test_sniff_recover_refuses_and_salvage_loads_records_the_loss_and_audit_reports_it(
    damaged_log: tuple[Path, list[EventRow], int],
) -> None:
    db, _rows, third = damaged_log
    journal = journal_path(db)
    kept = journal.read_bytes()
    refused = CliRunner().invoke(cli, ["recover", "--db", str(db)])
    assert refused.exit_code == 2
    assert f"journal damaged at byte {third}, with 7 intact records after it" in refused.output
    assert journal.read_bytes() == kept

    done = CliRunner().invoke(cli, ["recover", "--db", str(db), "--salvage"])
    assert done.exit_code == 0, done.output
    # a's seq 1 is lost, so a's seq 2 to 4 cannot follow; b is whole.
    assert "loaded 6 intact records, 3 could not be loaded" in done.output
    assert not journal.exists()
    (moved,) = db.parent.glob("log.duckdb.journal.damaged-*")
    assert moved.read_bytes() == kept  # whole, for forensics
    with open_readonly(db) as reader:
        assert [e.seq for e in reader.events_for("a")] == [0]
        assert [e.seq for e in reader.events_for("b")] == [0, 1, 2, 3, 4]

    audit = CliRunner().invoke(cli, ["audit", "--db", str(db), "--format", "jsonl"])
    assert audit.exit_code == 1, audit.output
    flagged = {
        result["id"]
        for result in map(json.loads, audit.output.splitlines())
        if any(problem["kind"] == "salvaged" for problem in result["problems"])
    }
    # a and b had records in the journal; old was in play, so the damaged bytes may be its.
    assert flagged == {"a", "b", "old"}

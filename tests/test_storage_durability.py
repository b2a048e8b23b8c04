"""An acknowledged append survives the process being killed (SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from service.storage import EventLog, open_readonly

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]

# Four game threads, one match each, append one event per call forever and
# print each (match_id, seq) only after `append` returned.
WRITER = """
import sys, threading
from service.storage import EventLog, LogEvent

log = EventLog(sys.argv[1])
out = threading.Lock()

def play(match_id):
    log.append([LogEvent.match_created(match_id, seats=2, target=250, seed=1, rules_version="1")])
    seq = 0
    while True:
        with out:
            sys.stdout.write(f"{match_id} {seq}\\n")
            sys.stdout.flush()
        seq += 1
        log.append([LogEvent.action(match_id, seq, round=0, action_index=seq - 1, seat=seq % 2,
                                    move="pass")])

for i in range(4):
    threading.Thread(target=play, args=(f"m{i}",)).start()
"""


def test_every_acknowledged_event_survives_a_kill(tmp_path: Path) -> None:
    db = tmp_path / "events.duckdb"
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    acknowledged: list[tuple[str, int]] = []
    try:
        assert child.stdout is not None
        while len(acknowledged) < 2000:  # the child writes on until killed
            line = child.stdout.readline()
            if not line:
                break
            match_id, seq = line.split()
            acknowledged.append((match_id, int(seq)))
        assert len(acknowledged) >= 200, child.stderr.read() if child.stderr else ""
        os.kill(child.pid, signal.SIGKILL)  # mid-stream: appends are in flight
        child.wait(timeout=30)
        # Lines already in the pipe were acknowledged before the kill too.
        for line in child.stdout:
            match_id, seq = line.split()
            acknowledged.append((match_id, int(seq)))
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    assert child.returncode == -signal.SIGKILL
    assert Path(f"{db}.wal").exists()  # died without a checkpoint: the WAL must be replayed

    with open_readonly(db) as reader:  # an offline tool reads it as it is, WAL included
        read_offline = reader.count()
    with EventLog(db) as log:
        assert log.count() == read_offline
        for i in range(4):
            seqs = [e.seq for e in log.events_for(f"m{i}")]
            assert seqs == list(range(len(seqs)))  # gap-free, whatever got in
        stored = {
            (row["match_id"], row["seq"])
            for row in log.query("SELECT match_id, seq FROM events").to_pylist()
        }
    missing = [event for event in acknowledged if event not in stored]
    assert missing == []
    assert len(stored) >= len(acknowledged)

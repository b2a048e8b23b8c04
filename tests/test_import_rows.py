"""The import's fast rows (analysis.importer.ImportRecorder) are the recorder's, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from analysis import importer
from analysis.audit import audit_parsed
from analysis.cli.main import cli
from analysis.column_events import ColumnRecorder
from analysis.match_events import EventRecorder
from service.storage.chain import MatchSecrets
from service.storage.events import EventRow
from sniff import MatchRecord
from sniff.facts import facts_rows

FIXED = MatchSecrets(None, bytes(range(32)), bytes(range(32, 64)))


def rows_of(obj: object) -> tuple[type, list[EventRow]]:
    """The recorder class the import used for the record, and its rows."""
    made: list[EventRecorder] = []

    def witness(o: object, record: MatchRecord) -> EventRecorder:
        made.append(importer.recorder_for(o, importer.imported_match_id(o), record))
        return made[-1]

    assert audit_parsed(obj, "x", witness=witness)[0].ok
    return type(made[0]), made[0].rows()


@pytest.mark.slow
@pytest.mark.parametrize(("seats", "variant"), [(2, "american"), (3, "stubby"), (4, "berndt")])
def test_import_rows_equal_the_recorders_with_the_same_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seats: int, variant: str
) -> None:
    path = tmp_path / "records.jsonl"
    argv = ["record", "--seats", str(seats), "--matches", "3", "--variant", variant]
    done = CliRunner().invoke(cli, [*argv, "-o", str(path)])
    assert done.exit_code == 0, done.output
    monkeypatch.setattr(MatchSecrets, "new", classmethod(lambda cls, seed: FIXED))
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        fast_type, fast = rows_of(obj)
        with monkeypatch.context() as plain:
            plain.setattr(importer, "ImportRecorder", EventRecorder)
            plain_type, slow = rows_of(obj)
        assert (fast_type, plain_type) == (ColumnRecorder, EventRecorder)
        assert fast == slow


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seats", "variant"), [(2, "american"), (3, "british"), (4, "stubby"), (4, "american")]
)
def test_import_facts_from_the_audits_replay_equal_the_facts_of_a_second_replay(
    tmp_path: Path, seats: int, variant: str
) -> None:
    path = tmp_path / "records.jsonl"
    argv = ["record", "--seats", str(seats), "--matches", "5", "--variant", variant]
    done = CliRunner().invoke(cli, [*argv, "--round-limit", "6", "-o", str(path)])
    assert done.exit_code == 0, done.output
    for line in path.read_text().splitlines():
        recorders = importer._Recorders()
        assert audit_parsed(json.loads(line), "x", witness=recorders)[0].ok
        made = recorders.made
        assert isinstance(made, ColumnRecorder)
        followed = recorders.facts()
        replayed = facts_rows(made.match, made.match_id, recorders.players, "imported")
        assert followed == replayed

"""The import's rows (its recorder, service.match_recorder) are the hub's way, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from analysis import importer
from analysis.audit import audit_parsed
from analysis.cli.main import cli
from service.match_recorder import EventRecorder
from service.storage.chain import MatchSecrets
from sniff import MatchRecord
from sniff.facts import facts_rows
from tests.event_helpers import hub_way_rows

FIXED = MatchSecrets(None, bytes(range(32)), bytes(range(32, 64)))


def recorded(obj: object) -> EventRecorder:
    """The recorder the import's audit of the record told of each step."""
    made: list[EventRecorder] = []

    def witness(o: object, record: MatchRecord) -> EventRecorder:
        made.append(importer.recorder_for(o, importer.imported_match_id(o), record))
        return made[-1]

    assert audit_parsed(obj, "x", witness=witness)[0].ok
    return made[0]


@pytest.mark.slow
@pytest.mark.parametrize(("seats", "variant"), [(2, "american"), (3, "stubby"), (4, "berndt")])
def test_import_rows_equal_the_hubs_with_the_same_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seats: int, variant: str
) -> None:
    path = tmp_path / "records.jsonl"
    argv = ["record", "--seats", str(seats), "--matches", "3", "--variant", variant]
    done = CliRunner().invoke(cli, [*argv, "-o", str(path)])
    assert done.exit_code == 0, done.output
    monkeypatch.setattr(MatchSecrets, "new", classmethod(lambda cls, seed: FIXED))
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        made = recorded(obj)
        assert made.rows() == hub_way_rows(made, explicit=True)


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
        assert made is not None
        followed = recorders.facts()
        replayed = facts_rows(made.match, made.match_id, recorders.players, "imported")
        assert followed == replayed

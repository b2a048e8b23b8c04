"""The import's fast path equals the plain one over a few hundred bot-played records.

A worker (`analysis.importer._prepare_chunk`) audits each line with the import's witness
(`EventRecorder`: rows kept as columns, chained as they come, the facts followed as the
audit plays) and builds the chunk's Arrow table from columns. Here every
record of 2, 3 and 4 seats in every variant, with and without a round limit, some edited
into bad records, goes through both ways, with the same secrets:

- the fast way: `_prepare_chunk`, as a worker runs it;
- the plain way: `sniff audit`'s audit of the line (no witness), the hub's way of logging
  the match (a `LogEvent` per event from the builder, `chain.seal`, `to_rows`:
  tests/event_helpers.py), `rows_to_arrow`, and the facts of a second replay
  (`facts_rows` without `rounds`).

The event tables, hashes included, the facts rows, the audit verdicts and their problems
must be identical.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from analysis import importer
from analysis.audit import audit_line, audit_parsed
from analysis.importer import prepare
from service.match_recorder import EventRecorder
from service.storage import EventLog
from service.storage.chain import GENESIS, MatchSecrets, link, row_content
from service.storage.events import COLUMNS, HASH, rows_to_arrow
from service.storage.facts import TABLES, FactsTables, merged_facts
from sniff import GreedyBot, Match, MatchRecord, RandomBot, play_match, to_record
from sniff.facts import FactsRows, facts_rows
from tests.event_helpers import hub_way_rows

pytestmark = pytest.mark.slow

FIXED = MatchSecrets(None, bytes(range(32)), bytes(range(32, 64)))
VARIANTS = ("american", "stubby", "berndt", "british")


def played(seats: int, variant: str, seed: int, round_limit: int | None) -> dict[str, Any]:
    bots = [GreedyBot(seed + s) if (seed + s) % 2 else RandomBot(seed + s) for s in range(seats)]
    target = 60 + 10 * (seed % 5)  # short matches: more of them, every ending
    match = Match(seats, seed=seed, variant=variant, round_limit=round_limit, target=target)
    names = [type(bot).__name__.lower() for bot in bots]
    record = to_record(play_match(match, bots), f"m-{seats}-{variant}-{seed}", names)
    if seed % 7 == 3:  # some with no id nor players: the import's settings without them
        del record["id"], record["players"]
    return record


def edited(record: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A bad copy of a record: a wrong claim, an illegal or unparsable action, a bad deal, a
    round too many or cut short."""
    bad = copy.deepcopy(record)
    rounds = bad["rounds"]
    r = rng.randrange(len(rounds))
    actions = rounds[r]["actions"]
    how = rng.randrange(7)
    if how == 0:
        points = rounds[r]["claims"]["points"]
        k = next((i for i, p in enumerate(points) if p), 0)
        points[k] = (points[k] or 0) + 5
    elif how == 1:
        actions[rng.randrange(len(actions))] = "draw"
    elif how == 2:
        k = rng.randrange(len(actions))
        actions[k], actions[-1] = actions[-1], actions[k]
    elif how == 3:
        actions[rng.randrange(len(actions))] = "6-6@9-9:low"
    elif how == 4:
        hands = rounds[r]["hands"]
        hands[0][0] = hands[1][0]  # dealt twice
    elif how == 5:
        rounds.append(copy.deepcopy(rounds[-1]))
    else:
        del actions[len(actions) // 2 :]
    if "id" in bad:
        bad["id"] += "-bad"
    return bad


@pytest.fixture(scope="module")
def lines() -> list[bytes]:
    """About 300 records: every seat count and variant, a quarter with a round limit, one in
    eight edited into a bad record (and blank lines, which give no result)."""
    rng = random.Random(7)
    out: list[bytes] = []
    seed = 0
    for seats in (2, 3, 4):
        for variant in VARIANTS:
            for i in range(25):
                seed += 1
                record = played(seats, variant, seed, (1, 2, 4)[i % 3] if i % 4 == 0 else None)
                if i % 8 == 5:
                    record = edited(record, rng)
                out.append(json.dumps(record).encode())
                if i == 12:
                    out.append(b"  ")
    return out


def plain_rows(obj: object) -> tuple[list[tuple[Any, ...]], MatchRecord | None, EventRecorder]:
    """The record's rows as the hub logs a match (`hub_way_rows`), and its recorder."""
    made: list[EventRecorder] = []

    def witness(o: object, record: MatchRecord) -> EventRecorder:
        made.append(importer.recorder_for(o, importer.imported_match_id(o), record))
        return made[-1]

    result, record = audit_parsed(obj, "x", witness=witness)
    assert result.ok
    return hub_way_rows(made[0], explicit=True), record, made[0]


def test_a_worker_s_events_facts_and_verdicts_equal_the_plain_ways(
    lines: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(MatchSecrets, "new", classmethod(lambda cls, seed: FIXED))
    numbered = list(enumerate(lines, start=1))
    done = [importer._prepare_chunk(numbered[i : i + 64]) for i in range(0, len(numbered), 64)]
    prepared = [p for d in done for p in d.prepared]
    fast_table = pa.concat_tables([d.table for d in done])

    # the verdicts: `sniff audit`'s, line by line (a blank line has none)
    plain_verdicts = [
        (n, audit_line(n, raw)) for n, raw in numbered if audit_line(n, raw) is not None
    ]
    assert [p.number for p in prepared] == [n for n, _ in plain_verdicts]
    for p, (_, verdict) in zip(prepared, plain_verdicts, strict=True):
        assert verdict is not None
        result, record_id = verdict
        assert p.result.to_json() == result.to_json()
        assert p.record_id == record_id
    good = [p for p in prepared if p.ok]
    bad = [p for p in prepared if not p.ok]
    assert len(good) > 250
    assert len(bad) > 25
    assert {problem.kind for p in bad for problem in p.result.problems} >= {
        "points",
        "bad_deal",
        "round_incomplete",
    }

    # the events and the facts: the plain recorder's, a second replay's
    rows: list[tuple[Any, ...]] = []
    plain_facts = []
    for p in good:
        obj = json.loads(lines[p.number - 1])
        match_rows, record, recorder = plain_rows(obj)
        assert record is not None
        assert p.match_id == recorder.match_id == importer.imported_match_id(obj)
        assert p.events == len(match_rows)
        rows += match_rows
        plain_facts.append(
            facts_rows(recorder.match, recorder.match_id, record.players, "imported")
        )
    slow_table = rows_to_arrow(rows)
    assert fast_table.schema.names == list(COLUMNS)
    assert fast_table.num_rows == len(rows) > 15_000
    assert fast_table.equals(slow_table)
    assert fast_table.to_pylist() == slow_table.to_pylist()
    fast_facts = merged_facts(d.facts for d in done)
    assert isinstance(fast_facts, FactsTables)
    slow_facts = merged_facts(plain_facts)
    assert isinstance(slow_facts, FactsRows)
    for fast_part, slow_part in zip(
        (fast_facts.matches, fast_facts.rounds, fast_facts.decisions),
        (slow_facts.matches, slow_facts.rounds, slow_facts.decisions),
        strict=True,
    ):
        assert fast_part.to_pydict() == slow_part
    assert fast_facts.matches.num_rows == len(good)

    # and the chain holds: each hash is the link of its row's canonical content
    previous = GENESIS
    for row in fast_table.to_pylist():
        values = tuple(row[name] for name in COLUMNS)
        if values[1] == 0:
            previous = GENESIS
        previous = link(previous, FIXED.chain_secret, row_content(values))
        assert values[HASH] == previous


def test_every_kind_of_event_and_ending_is_among_them(lines: list[bytes]) -> None:
    """The records above reach what the fast path writes out: every event kind, draws,
    passes, oriented Sniffs, stubs, domino and blocked ends, wins and round-limit draws."""
    records = [json.loads(line) for line in lines if line.strip()]
    actions = [a for r in records for rnd in r["rounds"] for a in rnd["actions"]]
    ends = {rnd["claims"].get("end") for r in records for rnd in r["rounds"]}
    assert {"draw", "pass"} <= set(actions)
    assert any(a.endswith(("/cross", "/inline")) for a in actions)
    assert any("branch_a" in a for a in actions)
    assert {"domino", "blocked"} <= ends
    assert any(r.get("round_limit") for r in records)
    assert any(r["claims"].get("winner", 0) is None for r in records)  # a draw


def stored_facts(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {
            table: con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall() for table in TABLES
        }


def test_the_facts_the_workers_hand_over_are_the_facts_the_log_replays(
    lines: list[bytes], tmp_path: Path
) -> None:
    """Imported with the workers' facts (Arrow tables, from two processes) or without them
    (the log replays every match, `fill_missing_facts`), the facts tables hold the same rows;
    a record given twice, a repeat or a bad copy, changes nothing of them."""
    without_id = [line for line in lines if b'"id"' not in line][:2]
    # the same records again: without an id a repeat, with one a reused id (bad)
    repeated = [*lines, *without_id, lines[0], b'{"format": "sniff/9"}']
    batch = prepare(repeated, source="x", workers=2, skip_bad=True)
    assert [p.status for p in batch.prepared[-4:]] == ["repeat", "repeat", "bad", "bad"]
    table = batch.table()
    given = batch.facts()
    assert isinstance(given, FactsTables)
    with EventLog(tmp_path / "given.duckdb") as log:
        log.import_matches(table, verify=False, facts=given)
    with EventLog(tmp_path / "replayed.duckdb") as log:
        log.import_matches(table, verify=False)
    facts = stored_facts(tmp_path / "given.duckdb")
    assert len(facts["match_facts"]) == sum(1 for p in batch.prepared if p.status == "new")
    assert facts["sniff_decisions"]
    assert facts == stored_facts(tmp_path / "replayed.duckdb")

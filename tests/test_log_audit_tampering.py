"""`sniff audit --db` catches every kind of tampering with a logged database.

Each test edits a real DuckDB event log directly with SQL, with no service
running (what someone with the file could do), and audits it. An untouched
log audits ok, so each problem found is the edit's.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from analysis.audit import AuditResult
from analysis.bot_matches import bot_match_events
from analysis.cli.main import cli
from analysis.logaudit import audit_log
from service.storage import EventLog, LogEvent
from service.storage.chain import GENESIS, MatchSecrets, commitment, seal

pytestmark = pytest.mark.slow

MATCH = "a1a1a1a1a1a1a1a1"


def played(
    match_id: str, seats: int, seed: int, bots: tuple[str, ...], secrets: MatchSecrets | None
) -> list[LogEvent]:
    return bot_match_events(match_id, seats, seed, bots, secrets=secrets)


@pytest.fixture
def events() -> list[LogEvent]:
    return played(MATCH, 2, 21, ("greedy", "random"), None)


@pytest.fixture
def db(tmp_path: Path, events: list[LogEvent]) -> Path:
    path = tmp_path / "log.duckdb"
    with EventLog(path) as log:
        log.append(events)
        log.append(played("b2b2b2b2b2b2b2b2", 3, 5, ("random",), None))
    return path


def audited(
    db: Path, *heads: str, commitments: dict[str, list[str]] | None = None
) -> dict[str, AuditResult]:
    kept: dict[str, list[str]] = {}
    for head in heads:
        match_id, _, digest = head.partition("=")
        kept.setdefault(match_id, []).append(digest)
    return {r.id: r for r in audit_log(db, heads=kept, commitments=commitments)}


def kinds_at(result: AuditResult) -> set[tuple[str, int | None]]:
    return {(p.kind, p.seq) for p in result.problems}


class Sql:
    """Edits the file directly, each statement in its own connection (closed at once)."""

    def __init__(self, db: Path) -> None:
        self.db = db

    def execute(self, statement: str, params: list[object] | None = None) -> None:
        with duckdb.connect(str(self.db)) as con:
            con.execute(statement, params)


@pytest.fixture
def sql(db: Path) -> Sql:
    return Sql(db)


def seq_of(events: list[LogEvent], test: object) -> int:
    return next(e.seq for e in events if test(e))  # type: ignore[operator]


def test_an_untouched_log_audits_ok(db: Path) -> None:
    results = audited(db)
    assert all(r.ok for r in results.values()), [r.to_text() for r in results.values()]
    assert set(results) == {MATCH, "b2b2b2b2b2b2b2b2"}


def test_an_edited_move_is_caught(db: Path, sql: Sql, events: list[LogEvent]) -> None:
    at = seq_of(events, lambda e: e.kind == "action" and e.move == "draw")
    sql.execute("UPDATE events_all SET move = 'pass' WHERE match_id = ? AND seq = ?", [MATCH, at])
    result = audited(db)[MATCH]
    assert ("chain_broken", at) in kinds_at(result)
    assert ("cannot_pass", at) in kinds_at(result)
    assert audited(db)["b2b2b2b2b2b2b2b2"].ok  # other matches are not affected


def test_edited_points_are_caught(db: Path, sql: Sql, events: list[LogEvent]) -> None:
    at = seq_of(events, lambda e: e.kind == "action" and (e.points or 0) > 0)
    sql.execute(
        "UPDATE events_all SET points = points + 5 WHERE match_id = ? AND seq = ?", [MATCH, at]
    )
    assert {("chain_broken", at), ("points", at)} <= kinds_at(audited(db)[MATCH])


def test_an_edited_deduction_is_caught(db: Path, sql: Sql, events: list[LogEvent]) -> None:
    end = next(e for e in events if e.kind == "round_ended")
    detail = dict(end.detail or {})
    detail["deductions"] = [d + 5 for d in detail["deductions"]]
    sql.execute(
        "UPDATE events_all SET detail = ? WHERE match_id = ? AND seq = ?",
        [json.dumps(detail), MATCH, end.seq],
    )
    assert {("chain_broken", end.seq), ("deduction", end.seq)} <= kinds_at(audited(db)[MATCH])


def test_a_deleted_event_is_caught(db: Path, sql: Sql, events: list[LogEvent]) -> None:
    at = seq_of(events, lambda e: e.kind == "action" and e.action_index == 3)
    sql.execute("DELETE FROM events_all WHERE match_id = ? AND seq = ?", [MATCH, at])
    found = kinds_at(audited(db)[MATCH])
    assert ("sequence", at + 1) in found
    assert ("chain_broken", at + 1) in found


def test_reordered_events_are_caught(db: Path, sql: Sql, events: list[LogEvent]) -> None:
    at = seq_of(events, lambda e: e.kind == "action" and e.action_index == 2)
    sql.execute(
        "UPDATE events_all SET seq = CASE WHEN seq = ? THEN ? ELSE ? END"
        " WHERE match_id = ? AND seq IN (?, ?)",
        [at, at + 1, at, MATCH, at, at + 1],
    )
    result = audited(db)[MATCH]
    assert ("chain_broken", at) in kinds_at(result)
    assert not result.ok


def test_a_changed_deal_is_caught(db: Path, sql: Sql, events: list[LogEvent]) -> None:
    deal = next(e for e in events if e.kind == "round_dealt" and e.round == 1)
    detail = dict(deal.detail or {})
    hands = [list(h) for h in detail["hands"]]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]  # a tile each way: still a valid deal
    sql.execute(
        "UPDATE events_all SET detail = ? WHERE match_id = ? AND seq = ?",
        [json.dumps({**detail, "hands": hands}), MATCH, deal.seq],
    )
    found = kinds_at(audited(db)[MATCH])
    assert {("deal_mismatch", deal.seq), ("chain_broken", deal.seq)} <= found


def _replace_match(sql: Sql, old: list[LogEvent], new: list[LogEvent], keep_hashes: bool) -> None:
    """Put another match's events in place of the logged ones, the typed result too."""
    old_hashes = {e.seq: e.hash for e in old}
    sql.execute("DELETE FROM events_all WHERE match_id = ?", [MATCH])
    for e in new:
        digest = old_hashes.get(e.seq, e.hash) if keep_hashes else e.hash
        sql.execute(
            "INSERT INTO events_all (match_id, seq, kind, round, action_index, seat, move, drawn,"
            " points, ends_sum, detail, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                e.match_id,
                e.seq,
                e.kind,
                e.round,
                e.action_index,
                e.seat,
                e.move,
                e.drawn,
                e.points,
                e.ends_sum,
                None if e.detail is None else json.dumps(e.detail),
                digest,
            ],
        )
    end = new[-1].detail or {}
    sql.execute(
        "UPDATE match_results_all SET winner = ?, scores = ?, rounds = ? WHERE match_id = ?",
        [end["winner"], end["scores"], end["rounds"], MATCH],
    )


def _another_game(events: list[LogEvent]) -> list[LogEvent]:
    """A different legal game of the same match: same seed, same secrets, other players."""
    secrets = MatchSecrets.from_detail(events[0].detail or {})
    other = played(MATCH, 2, 21, ("random", "greedy"), secrets)
    assert [e.move for e in other] != [e.move for e in events]
    return other


def test_an_edit_that_is_itself_a_legal_game_is_caught_by_the_chain(
    db: Path, sql: Sql, events: list[LogEvent]
) -> None:
    other = _another_game(events)
    _replace_match(sql, events, other, keep_hashes=True)
    result = audited(db)[MATCH]
    found = kinds_at(result)
    assert {kind for kind, _ in found} == {"chain_broken"}  # the replay finds nothing wrong
    first_change = next(
        a.seq
        for a, b in zip(events, other, strict=False)
        if (a.move, a.detail) != (b.move, b.detail)
    )
    assert found == {("chain_broken", first_change)}


def test_a_rewritten_chain_is_caught_by_a_head_a_player_kept(
    db: Path, sql: Sql, events: list[LogEvent]
) -> None:
    kept = next(e for e in events if e.kind == "round_ended").hash
    assert kept is not None
    other = _another_game(events)
    _replace_match(sql, events, other, keep_hashes=False)  # a chain made with the secret
    assert audited(db)[MATCH].ok  # chain and all rewritten: nothing else shows it
    result = audited(db, f"{MATCH}={kept.hex()}")[MATCH]
    assert [p.kind for p in result.problems] == ["head_mismatch"]
    runner = CliRunner()
    done = runner.invoke(cli, ["audit", "--db", str(db), MATCH, "--head", f"{MATCH}={kept.hex()}"])
    assert done.exit_code == 1
    assert "head_mismatch" in done.output


def test_a_kept_head_of_an_untouched_log_is_found(db: Path, events: list[LogEvent]) -> None:
    heads = [e.hash.hex() for e in events if e.kind in ("round_ended", "match_ended") and e.hash]
    assert audited(db, *(f"{MATCH}={h}" for h in heads))[MATCH].ok


def test_a_seed_reveal_that_does_not_open_the_commitment_is_caught(
    db: Path, sql: Sql, events: list[LogEvent]
) -> None:
    end = events[-1]
    detail = {**(end.detail or {}), "seed": 22}
    sql.execute(
        "UPDATE events_all SET detail = ? WHERE match_id = ? AND seq = ?",
        [json.dumps(detail), MATCH, end.seq],
    )
    found = kinds_at(audited(db)[MATCH])
    assert ("commitment_mismatch", end.seq) in found
    assert ("chain_broken", end.seq) in found
    # the deals are recomputed from the revealed seed, which makes other deals
    assert any(kind == "deal_mismatch" for kind, _ in found)


def test_a_seed_and_commitment_both_rewritten_at_creation_break_the_chain(
    db: Path, sql: Sql, events: list[LogEvent]
) -> None:
    created = dict(events[0].detail or {})
    created["seed_commitment"] = "00" * 32
    sql.execute(
        "UPDATE events_all SET detail = ? WHERE match_id = ? AND seq = 0",
        [json.dumps(created), MATCH],
    )
    found = kinds_at(audited(db)[MATCH])
    assert ("chain_broken", 0) in found
    assert ("commitment_mismatch", events[-1].seq) in found


def test_a_summary_row_edited_alone_is_caught(db: Path, sql: Sql) -> None:
    sql.execute("UPDATE match_results_all SET winner = 1 - winner WHERE match_id = ?", [MATCH])
    assert [p.kind for p in audited(db)[MATCH].problems] == ["summary"]


def _rechained(sql: Sql, events: list[LogEvent], details: dict[int, dict[str, Any]]) -> None:
    """Give some events new details and rechain the match with the secret the log holds, as
    someone holding the file can: the chain then shows nothing."""
    secret = MatchSecrets.from_detail(events[0].detail or {})
    assert secret is not None
    edited = [replace(e, detail=details.get(e.seq, e.detail)) for e in events]
    sealed = seal(edited, GENESIS, secret.chain_secret)
    for event in sealed[min(details) :]:
        sql.execute(
            "UPDATE events_all SET detail = ?, hash = ? WHERE match_id = ? AND seq = ?",
            [
                None if event.detail is None else json.dumps(event.detail),
                event.hash,
                MATCH,
                event.seq,
            ],
        )
    if 0 in details:  # the typed table repeats the creation
        sql.execute(
            "UPDATE match_settings_all SET detail = ?, seed_commitment = ? WHERE match_id = ?",
            [json.dumps(details[0]), details[0]["seed_commitment"], MATCH],
        )


def test_a_revealed_salt_that_is_not_the_created_one_is_a_reveal_mismatch(
    db: Path, sql: Sql, events: list[LogEvent]
) -> None:
    end = events[-1]
    _rechained(sql, events, {end.seq: {**(end.detail or {}), "seed_salt": "ab" * 32}})
    found = kinds_at(audited(db)[MATCH])
    assert ("reveal_mismatch", end.seq) in found
    assert not any(kind == "chain_broken" for kind, _ in found)  # rechained with the secret


def test_a_revealed_chain_secret_that_is_not_the_created_one_is_a_reveal_mismatch(
    db: Path, sql: Sql, events: list[LogEvent]
) -> None:
    end = events[-1]
    detail = {**(end.detail or {}), "chain_secret": "cd" * 32}
    sql.execute(
        "UPDATE events_all SET detail = ? WHERE match_id = ? AND seq = ?",
        [json.dumps(detail), MATCH, end.seq],
    )
    assert ("reveal_mismatch", end.seq) in kinds_at(audited(db)[MATCH])


def _new_salt_and_commitment(sql: Sql, events: list[LogEvent]) -> None:
    """Rewrite the salt and the commitment at creation and in the reveal, and rechain."""
    created, end = dict(events[0].detail or {}), dict(events[-1].detail or {})
    salt = "ef" * 32
    created["seed_salt"] = end["seed_salt"] = salt
    created["seed_commitment"] = commitment(created["seed"], bytes.fromhex(salt)).hex()
    _rechained(sql, events, {0: created, events[-1].seq: end})


def test_a_rewritten_salt_and_commitment_are_caught_by_the_commitment_a_seat_was_given(
    db: Path, sql: Sql, events: list[LogEvent]
) -> None:
    given = (events[0].detail or {})["seed_commitment"]
    _new_salt_and_commitment(sql, events)
    assert audited(db)[MATCH].ok  # salt, commitment and chain rewritten: nothing else shows it
    result = audited(db, commitments={MATCH: [given]})[MATCH]
    assert [(p.kind, p.seq) for p in result.problems] == [("commitment_mismatch", 0)]
    assert "given at creation" in result.problems[0].reason
    done = CliRunner().invoke(
        cli, ["audit", "--db", str(db), "--workers", "1", MATCH, "--commitment", f"{MATCH}={given}"]
    )
    assert done.exit_code == 1
    assert "commitment_mismatch" in done.output


def test_the_commitment_a_seat_was_given_passes_an_untouched_log(
    db: Path, events: list[LogEvent]
) -> None:
    given = (events[0].detail or {})["seed_commitment"]
    assert audited(db, commitments={MATCH: [given]})[MATCH].ok

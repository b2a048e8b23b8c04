"""Audit the event log: replay every match's events and check every figure, the chain and
the deals.

A log audit trusts nothing the log says: it replays each match's events
through the engine and compares each logged figure with the engine's
(moves, draws, points, ends sums, round ends, deductions, scores, winner,
sequence numbers), checks each event's link in the hash chain (docs/chain.md)
and a head a player kept, checks the logged seed commitment against one a
player was given at creation, opens it with the revealed seed and salt,
checks the revealed secrets against those logged at creation, recomputes
every seeded deal and lot (docs/dealing.md), and checks the typed summary
tables against the events. Problems are reported as for record files
(docs/records.md), with the kinds of docs/audit.md.

It reads the log as every other command does (analysis.logquery): through
the Query RPC of a live service, or a read-only open of the file.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pyarrow as pa

from analysis.audit import AuditResult, Problem, parse_hex_pairs
from analysis.logquery import LogSource, UnknownMatch
from analysis.parallel import ordered_map
from analysis.regenerate import FactsOnly, facts_only, facts_only_count
from analysis.sqlfiles import id_lists, named_queries
from analysis.tournament_audit import TournamentMatch, check_tournaments
from service.storage import chain, replayer
from service.storage.events import ending_of
from service.storage.replayer import RowEvent

"""Named matches looked up per query: the Query RPC takes a text of at most 10,000 characters."""
EVENTS_PER_REMOTE_QUERY = 500_000
"""Events read per query through a service, which stops any query after 60 s."""
MATCHES_PER_CHUNK = 100
"""Matches handed to a worker process at once."""

Row = tuple[Any, ...]
"""An event as logaudit.sql selects it: the events_all columns up to `detail` (as JSON text),
then `hash`."""
# A row's first ten columns: the event's fields that `chain.canonical` takes before its detail.
Fields = tuple[
    str,
    int,
    str,
    int | None,
    int | None,
    int | None,
    str | None,
    str | None,
    int | None,
    int | None,
]
_HASH = 11


def _sql(name: str) -> str:
    return named_queries("analysis", "logaudit.sql")[name]


@dataclass(frozen=True, slots=True)
class MatchWork:
    """Everything a worker needs to audit one match."""

    match_id: str
    rows: list[Row]
    summary: dict[str, Any] | None
    heads: tuple[str, ...] = ()
    commitments: tuple[str, ...] = ()
    """Seed commitments seats were given at CreateMatch; the logged one must be each."""
    tables: bool = True
    """Check the typed tables (`summary`): a log's match has them, a bundle's has none."""


@dataclass(frozen=True, slots=True)
class Span:
    """One match of a chunk: its rows are `start` to `end` of the chunk's table."""

    match_id: str
    start: int
    end: int
    summary: dict[str, Any] | None
    heads: tuple[str, ...]
    commitments: tuple[str, ...] = ()
    regenerate: FactsOnly | None = None
    """A simulated match stored as facts: its events are regenerated (in the worker)."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """Consecutive matches' events as one Arrow table, which a worker turns into rows.

    Arrow tables travel between processes as their buffers, so the reading
    process only slices; the conversion to Python values, as costly as a
    good part of the audit, happens in the workers.
    """

    table: pa.Table | None
    spans: list[Span]

    def works(self) -> list[MatchWork]:
        rows: list[Row] = []
        if self.table is not None:
            columns = [self.table.column(i).to_pylist() for i in range(self.table.num_columns)]
            rows = list(zip(*columns, strict=True))
        return [
            MatchWork(
                span.match_id,
                rows[span.start : span.end] if span.regenerate is None else _regenerated(span),
                span.summary,
                span.heads,
                span.commitments,
            )
            for span in self.spans
        ]


def _regenerated(span: Span) -> list[Row]:
    """The rows of a facts-only match's regenerated events, as logaudit.sql reads events."""
    from analysis.regenerate import regenerated_table

    assert span.regenerate is not None
    table = regenerated_table(span.regenerate).select(list(_ROW_COLUMNS))
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return list(zip(*columns, strict=True))


_ROW_COLUMNS = (
    "match_id", "seq", "kind", "round", "action_index", "seat", "move", "drawn", "points",
    "ends_sum", "detail", "hash",
)  # fmt: skip


# -- reading ----------------------------------------------------------------------


def parse_heads(values: Sequence[str]) -> dict[str, list[str]]:
    """`MATCH=HASH` pairs (a hash of 64 hex digits) by match; ValueError for a bad one."""
    return parse_hex_pairs(values, "--head", "MATCH=HASH", "the chain_head a seat was given")


def parse_commitments(values: Sequence[str]) -> dict[str, list[str]]:
    """`MATCH=HEX` pairs (a seed commitment of 64 hex digits) by match; ValueError for a
    bad one."""
    return parse_hex_pairs(
        values, "--commitment", "MATCH=HEX", "the seed_commitment a seat was given at CreateMatch"
    )


def list_matches(source: LogSource, match_ids: Sequence[str] = ()) -> dict[str, int]:
    """Each match to audit (the named ones, or all) with its number of events, in
    match_id order. Raises UnknownMatch for a named match the log does not hold."""
    named = list(dict.fromkeys(match_ids))
    if not named:
        table = source.query(_sql("matches"))
    else:
        tables = [source.query(_sql("matches_of"), [part]) for part in id_lists(named)]
        table = pa.concat_tables(tables)
    ids = table.column("match_id").to_pylist()
    counts = dict(sorted(zip(ids, table.column("events").to_pylist(), strict=True)))
    missing = [m for m in named if m not in counts]
    if missing:
        raise UnknownMatch(f"no match {missing[0]!r} in {source.db_path}")
    return counts


def read_chunks(
    source: LogSource,
    counts: Mapping[str, int],
    heads: Mapping[str, Sequence[str]],
    named: bool,
    commitments: Mapping[str, Sequence[str]] | None = None,
) -> Iterator[Chunk]:
    """The matches of `counts` (in its order, match_id order) in chunks of about
    MATCHES_PER_CHUNK, each with its summary and the heads and commitments kept for it."""
    given = commitments or {}
    summaries = {r["match_id"]: r for r in source.query(_sql("summaries")).to_pylist()}
    regenerate = facts_only(source, [m for m, n in counts.items() if n == 0]) if named else {}
    order = list(counts)
    wanted = set(order)
    pending: list[pa.RecordBatch] = []
    pending_rows = 0
    spans: list[Span] = []
    position = 0  # the next match of `order` to place

    def span(match_id: str, start: int, end: int) -> Span:
        summary = summaries.get(match_id)
        if match_id in regenerate and summary is not None:
            summary = {**summary, "regenerated": regenerate[match_id].note()}
        return Span(
            match_id,
            start,
            end,
            summary,
            tuple(heads.get(match_id, ())),
            tuple(given.get(match_id, ())),
            regenerate.get(match_id),
        )

    def flush() -> Chunk:
        nonlocal pending, pending_rows, spans
        table = pa.Table.from_batches(pending) if pending else None
        chunk = Chunk(table, spans)
        pending, pending_rows, spans = [], 0, []
        return chunk

    for batch in _event_batches(source, order, counts, named):
        ids = batch.column(0).to_pylist()
        begin = 0
        while begin < len(ids):
            match_id = ids[begin]
            end = begin + 1
            while end < len(ids) and ids[end] == match_id:
                end += 1
            if match_id not in wanted:  # read with a range, not asked for: left out
                begin = end
                continue
            here = pending_rows + begin  # where this run starts in the chunk's table
            last = spans[-1] if spans else None
            if begin == 0 and last is not None and last.match_id == match_id:
                # the match's events run on from the previous batch
                spans[-1] = span(match_id, last.start, here + end - begin)
                begin = end
                continue
            while position < len(order) and order[position] != match_id:
                spans.append(span(order[position], here, here))  # a match with no event
                position += 1
            if len(spans) >= MATCHES_PER_CHUNK:
                if begin:
                    pending.append(batch.slice(0, begin))
                    batch, ids, end, begin = batch.slice(begin), ids[begin:], end - begin, 0
                yield flush()
            start = pending_rows + begin
            spans.append(span(match_id, start, start + end - begin))
            position += 1
            begin = end
        pending.append(batch)
        pending_rows += batch.num_rows
    while position < len(order):
        spans.append(span(order[position], pending_rows, pending_rows))
        position += 1
    if spans:
        yield flush()


def _event_batches(
    source: LogSource, order: Sequence[str], counts: Mapping[str, int], named: bool
) -> Iterator[pa.RecordBatch]:
    """The events of the matches of `order` (sorted), each match in seq order."""
    if named:
        queries = [(_sql("events_of"), [part]) for part in id_lists(order)]
    else:
        queries = []
        limit = EVENTS_PER_REMOTE_QUERY if source.remote else None
        start = 0
        while start < len(order):
            end, total = start, 0
            while end < len(order) and (limit is None or total < limit or end == start):
                total += counts.get(order[end], 0)
                end += 1
            queries.append((_sql("events_between"), [order[start], order[end - 1]]))
            start = end
    for sql, params in queries:
        for batch in source.batches(sql, params):
            if batch.num_rows:
                yield batch


# -- auditing ---------------------------------------------------------------------


def audit_log(
    db_path: str | Path,
    match_ids: Sequence[str] = (),
    *,
    heads: Mapping[str, Sequence[str]] | None = None,
    commitments: Mapping[str, Sequence[str]] | None = None,
    tournaments: Mapping[str, str] | None = None,
    workers: int = 1,
    started: Callable[[int], None] | None = None,
    left_out: Callable[[int], None] | None = None,
    progress: Callable[[int], None] | None = None,
    tls_ca: str | None = None,
) -> Iterator[AuditResult]:
    """Audit the log's matches (or the named ones, in the order named), one result each.

    `started(n)` is told how many matches there are before the first result
    (`left_out(n)` before it, without named matches, how many simulated matches stored as
    facts only the audit leaves out: they have no events until named and regenerated);
    `progress(k)` after each chunk of k matches. `heads` and `commitments` are
    what seats kept (lowercase hex, as `parse_heads` and `parse_commitments`
    give them); one for a match the log does not hold raises UnknownMatch like
    a named one.

    After the matches, one result a tournament says whether its deal seeds open
    its commitment (analysis/tournament_audit.py): every tournament of the log
    when no match is named, else those of `tournaments` (run id: the commitment
    published before play, which the log's must be). A pinned tournament the
    log does not hold raises UnknownTournament before the first result.
    """
    heads = dict(heads or {})
    commitments = dict(commitments or {})
    pins = dict(tournaments or {})
    named = list(dict.fromkeys(match_ids))
    with LogSource(db_path, tls_ca=tls_ca) as source:
        counts = list_matches(source, named)
        kept = list(dict.fromkeys([*heads, *commitments]))
        if kept:
            list_matches(source, kept)  # every head and commitment names a match of the log
        tournament_results = []
        if pins or not named:
            logged = tournament_matches(source)
            tournament_results = check_tournaments(logged, pins, every=not named)
        if left_out is not None and not named:
            left_out(facts_only_count(source))
        if started is not None:
            started(len(counts))
        salvaged = salvaged_matches(source)
        chunks = read_chunks(source, counts, heads, bool(named), commitments)
        audited = (
            [_with_salvages(r, salvaged) for r in results]
            for results in ordered_map(_audit_chunk, chunks, workers, preload=(__name__,))
        )
        if not named:
            for results in audited:
                yield from results
                if progress is not None:
                    progress(len(results))
            yield from tournament_results
            return
        by_id: dict[str, AuditResult] = {}
        for results in audited:  # read in match_id order, reported in the order named
            by_id.update((r.id, r) for r in results)
            if progress is not None:
                progress(len(results))
        for match_id in named:
            yield by_id[match_id]
        yield from tournament_results


def tournament_matches(source: LogSource) -> list[TournamentMatch]:
    """Every match of the log that a tournament logged under a commitment to its seeds."""
    table = source.query(_sql("tournament_matches"))
    return [TournamentMatch(**row) for row in table.to_pylist()]


def salvaged_matches(source: LogSource) -> dict[str, list[str]]:
    """For each match a salvage named, why its events may be incomplete (none if never).

    A log salvaged from a damaged journal (`sniff recover --salvage`) may lack
    acknowledged events that no check of the rest can see: a match still in
    play then ends where its chain ends and looks whole.
    """
    if not source.query(_sql("has_salvages")).column(0)[0].as_py():
        return {}
    found: dict[str, list[str]] = {}
    for row in source.query(_sql("salvaged")).to_pylist():
        found.setdefault(row["match_id"], []).append(
            f"the log was salvaged at {row['salvaged_at']} from a journal damaged at byte"
            f" {row['damaged_at']} (kept at {row['journal']}): events of this match may be lost"
        )
    return found


def _with_salvages(result: AuditResult, salvaged: Mapping[str, list[str]]) -> AuditResult:
    for reason in salvaged.get(result.id, ()):
        result.problems.append(Problem(None, None, "salvaged", reason))
    return result


def _audit_chunk(chunk: Chunk) -> list[AuditResult]:
    return [audit_match(work) for work in chunk.works()]


def audit_match(work: MatchWork) -> AuditResult:
    """Every check of one match's events (docs/audit.md); runs in a worker."""
    result = AuditResult(work.match_id)
    _MatchAudit(work, result).run()
    return result


@dataclass
class _MatchAudit:
    work: MatchWork
    result: AuditResult
    details: list[dict[str, Any]] = field(default_factory=list)

    def problem(self, row: Row | None, kind: str, reason: str, whole_round: bool = False) -> None:
        if row is None:
            self.result.problems.append(Problem(None, None, kind, reason))
            return
        action = None if whole_round or row[2] != "action" else row[4]
        self.result.problems.append(Problem(row[3], action, kind, reason, seq=row[1]))

    def note(self, text: str) -> None:
        self.result.notes.append(text)

    # -- the run --

    def run(self) -> None:
        rows = self.work.rows
        if not rows:
            self.problem(None, "sequence", "the typed tables name this match, but it has no event")
            return
        self.details = [self._detail(row) for row in rows]
        self.check_sequence()
        secrets = self.check_secrets()
        self.check_chain(secrets)
        self.replay(secrets)
        if self.work.tables:
            self.check_summary()

    def _detail(self, row: Row) -> dict[str, Any]:
        text = row[10]
        if text is None:
            return {}
        try:
            detail = chain.load_detail(text)
        except chain.NoCanonicalForm as e:
            self.problem(row, "malformed", f"its detail holds what no event holds: {e}")
            return {}
        except ValueError:
            self.problem(row, "malformed", "its detail is not JSON")
            return {}
        if not isinstance(detail, dict):
            self.problem(row, "malformed", "its detail is not a JSON object")
            return {}
        return detail

    # -- sequence numbers --

    def check_sequence(self) -> None:
        rows = self.work.rows
        for expected, row in enumerate(rows):
            if row[1] != expected:
                if row[1] > expected:
                    reason = f"event {expected} is missing: the next logged event is {row[1]}"
                else:
                    reason = f"event {row[1]} is logged twice"
                self.problem(row, "sequence", reason)
                return
        if rows[0][2] != "match_created":
            self.problem(rows[0], "sequence", f"the first event is {rows[0][2]}, not match_created")
        for row in rows[1:]:
            if row[2] == "match_created":
                self.problem(row, "sequence", "a second match_created event")
        ends = [row for row in rows if row[2] == "match_ended"]
        if ends and ends[0] is not rows[-1]:
            self.problem(ends[0], "sequence", "events follow the match's end")

    # -- secrets, commitment, chain --

    def check_secrets(self) -> chain.MatchSecrets | None:
        """The secrets to check with: those revealed at the end, else those logged at creation."""
        created = self.details[0] if self.work.rows[0][2] == "match_created" else {}
        at_creation = chain.MatchSecrets.from_detail(created)
        ended_at = next(
            (i for i, row in enumerate(self.work.rows) if row[2] == "match_ended"), None
        )
        revealed = None
        if ended_at is not None:
            end = self.details[ended_at]
            revealed = chain.MatchSecrets.from_detail(end)
            end_row = self.work.rows[ended_at]
            if at_creation is not None and revealed is None:
                self.problem(end_row, "reveal_mismatch", "the match's end reveals no chain secret")
            elif at_creation is not None and revealed is not None:
                if revealed.chain_secret != at_creation.chain_secret:
                    self.problem(
                        end_row,
                        "reveal_mismatch",
                        "the chain secret revealed at the end is not the one the match was"
                        " created with",
                    )
                if end.get("seed_salt") != created.get("seed_salt"):
                    self.problem(
                        end_row,
                        "reveal_mismatch",
                        "the seed salt revealed at the end is not the one the match was"
                        " created with",
                    )
                if end.get("seed") != created.get("seed"):
                    self.problem(
                        end_row,
                        "reveal_mismatch",
                        f"the seed revealed at the end ({end.get('seed')}) is not the one"
                        f" logged at creation ({created.get('seed')})",
                    )
        secrets = revealed or at_creation
        committed = created.get("seed_commitment")
        self.check_given_commitments(committed)
        if committed is None:
            source = created.get("source")
            if source == "imported":
                self.note("imported match: its deals were given, not made from a committed seed")
            elif at_creation is None:
                self.note(
                    "begun before the log kept seed commitments (schema 3): its deals are"
                    " checked against the logged seed, which no commitment binds"
                )
            return secrets
        where = self.work.rows[ended_at] if ended_at is not None else self.work.rows[0]
        seed = None if secrets is None else secrets.seed
        salt = None if secrets is None else secrets.salt
        if seed is None or salt is None or not isinstance(seed, int):
            self.problem(where, "commitment_mismatch", "no seed and salt to open the commitment")
            return secrets
        try:
            opened = chain.commitment(seed, salt).hex()
        except ValueError as e:
            self.problem(where, "commitment_mismatch", f"the revealed seed cannot be opened: {e}")
            return secrets
        if opened != committed:
            self.problem(
                where,
                "commitment_mismatch",
                f"seed {seed} and its salt hash to {opened[:16]}…, not to the commitment"
                f" {str(committed)[:16]}… given when the match was created",
            )
        return secrets

    def check_given_commitments(self, committed: object) -> None:
        """The logged commitment must be the one each seat was given at CreateMatch: whoever
        rewrites the salt and the commitment together (and rechains) is caught by it, without
        a kept head."""
        for given in self.work.commitments:
            if committed == given:
                continue
            logged = "none" if committed is None else f"{str(committed)[:16]}…"
            self.problem(
                self.work.rows[0],
                "commitment_mismatch",
                f"the commitment {given[:16]}… a seat was given at creation is not the"
                f" logged one ({logged}): the log was rewritten",
            )

    def check_chain(self, secrets: chain.MatchSecrets | None) -> None:
        rows = self.work.rows
        secret = None if secrets is None else secrets.chain_secret
        if any(row[_HASH] is None for row in rows):
            first = next(row for row in rows if row[_HASH] is None)
            self.problem(first, "chain_missing", "the event has no hash: it is not chained")
            return
        if secret is None:
            migrated = (self.work.summary or {}).get("chained_at_migration")
            span = f"events 0 to {migrated - 1}" if migrated else "its events"
            self.note(
                f"{span} carry only a chain made when the log was migrated to schema 3"
                " (no secret): it shows nothing changed since, not before"
            )
        recomputed = chain.GENESIS
        broken = False
        recomputed_heads: set[str] = set()
        linked = chain.linker(secret)
        for row, detail in zip(rows, self.details, strict=True):
            fields = cast(Fields, row[:10])
            content = chain.canonical(*fields, None if row[10] is None else detail, checked=False)
            stored = bytes(row[_HASH])
            # Up to the first break the recomputed chain is the stored one, so one
            # link checks this event against the previous one's stored hash.
            link = recomputed = linked(recomputed, content)
            if self.work.heads:
                recomputed_heads.add(recomputed.hex())
            if not broken and link != stored:
                broken = True
                self.problem(
                    row,
                    "chain_broken",
                    f"its hash does not follow from its content and the previous event's hash:"
                    f" the event ({row[2]}) was edited, or one before it was deleted,"
                    f" inserted or reordered",
                )
        for head in self.work.heads:
            if head not in recomputed_heads:
                self.problem(
                    None,
                    "head_mismatch",
                    f"the head {head[:16]}… a player kept is the hash of no event of this"
                    " match as logged: the log was rewritten",
                )

    # -- the replay --

    def replay(self, secrets: chain.MatchSecrets | None) -> None:
        """Replay the events through the engine (service/storage/replayer.py): each
        disagreement it finds is a problem of the event it concerns."""
        rows, details = self.work.rows, self.details
        events = [RowEvent.of(row, detail) for row, detail in zip(rows, details, strict=True)]
        seed = secrets.seed if secrets is not None else None
        steps = replayer.replay(events, seed=seed, on_mismatch=self.mismatch)
        created = next(steps, None)
        if (
            isinstance(created, replayer.Created)
            and created.seed is not None
            and not created.seeded
        ):
            self.note(
                "its deals were made before the log named their generator: they are"
                " checked as deals, not recomputed from the seed"
            )
        deque(steps, maxlen=0)  # the rest is replayed for its mismatches alone

    def mismatch(self, mismatch: replayer.ReplayMismatch) -> None:
        row = None if mismatch.match_level else self.work.rows[mismatch.position]
        self.problem(row, mismatch.kind, mismatch.reason, mismatch.whole_round)

    # -- the typed tables --

    def check_summary(self) -> None:
        summary = self.work.summary
        rows, details = self.work.rows, self.details
        created = details[0] if rows and rows[0][2] == "match_created" else {}
        if summary is None or not summary.get("has_settings"):
            self.problem(None, "summary", "the match has no row in match_settings_all")
        else:
            checks = {
                "seats": created.get("seats"),
                "target": created.get("target"),
                "seed": None if created.get("seed") is None else str(created.get("seed")),
                "variant": created.get("variant", "american"),
                "round_limit": created.get("round_limit"),
                "players": created.get("players"),
                "seed_commitment": created.get("seed_commitment"),
            }
            if summary.get("regenerated"):  # stored as facts: no commitment was published
                del checks["seed_commitment"]
                self.note(str(summary["regenerated"]))
            for key, value in checks.items():
                if summary.get(key) != value:
                    self.problem(
                        None,
                        "summary",
                        f"match_settings_all has {key} {summary.get(key)!r},"
                        f" its creation {value!r}",
                    )
        ended = [(row, details[i]) for i, row in enumerate(rows) if row[2] == "match_ended"]
        has_result = summary is not None and summary.get("has_result")
        if not ended:
            if has_result:
                self.problem(
                    None, "summary", "match_results_all has a result, but no match end is logged"
                )
            return
        if not has_result:
            self.problem(None, "summary", "the match ended, but has no row in match_results_all")
            return
        assert summary is not None
        _, end = ended[0]
        end = {
            **end,
            "ended_by": ending_of(end),
        }
        for key in ("winner", "scores", "rounds", "ended_by"):
            if key in end and summary.get(key) != end.get(key):
                self.problem(
                    None,
                    "summary",
                    f"match_results_all has {key} {summary.get(key)!r},"
                    f" the match end {end.get(key)!r}",
                )

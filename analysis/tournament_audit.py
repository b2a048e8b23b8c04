"""Check that each tournament of the log opens the commitment to its deal seeds.

`sniff tournament` publishes, before its first deal, a commitment to the
seeds of all its deals (sniff/seeds.py, `tournament_seeds_commitment`), logs
it with how many seeds it covers and each match's deal index in the
match_created detail and the salt in the match_ended detail
(docs/dealing.md). A log audit gathers, for each run id, every deal's seed
as its matches log it, and recomputes the commitment from them and the
revealed salt. A tournament stopped by its sequential test played only the
first deals of those it committed to: the seeds of the rest follow from the
rule that deal d's seed is deal 0's plus d, and the count logged says how
many there are (a log written before the count was logged is read as
committing to its deals 0 to the last one logged). A commitment published
before play can be pinned (`--tournament RUN_ID=HEX`), so that a log rewritten end to end,
commitment and all, is caught too. The per-match audit checks each match's
chain, so these values are the ones the matches were logged with.

Each problem is of the kind `tournament_commitment` (docs/audit.md), in one
result a tournament, named by its run id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analysis.audit import AuditResult, Problem, parse_hex_pairs
from service.storage import chain
from sniff.seeds import TOURNAMENT_SALT_SIZE, tournament_seeds_commitment

KIND = "tournament_commitment"


class UnknownTournament(LookupError):
    """A pinned tournament that the log holds no match of."""


@dataclass(frozen=True, slots=True)
class TournamentMatch:
    """What one logged match of a tournament says of the commitment (text, as logged)."""

    match_id: str
    run_id: str | None
    commitment: str | None
    deal: str | None
    seed: str | None
    salt: str | None
    committed_deals: str | None = None
    """How many deal seeds the commitment covers (None in logs written before it was
    logged)."""


class _UnreadableCount(ValueError):
    """The matches of a tournament disagree on how many deal seeds it committed to, or one
    logs a count that cannot be read."""


def parse_pins(values: Sequence[str]) -> dict[str, str]:
    """`RUN_ID=HEX` pairs (a commitment of 64 hex digits) by run id; ValueError for a bad one
    or a run id pinned to two commitments."""
    given = parse_hex_pairs(
        values,
        "--tournament",
        "RUN_ID=HEX",
        "the commitment to the deal seeds, printed by sniff tournament before its first deal",
    )
    pins: dict[str, str] = {}
    for run_id, digests in given.items():
        if len(set(digests)) > 1:
            raise ValueError(f"--tournament names {run_id} with two commitments")
        pins[run_id] = digests[0]
    return pins


def check_tournaments(
    matches: Iterable[TournamentMatch], pins: Mapping[str, str], *, every: bool
) -> list[AuditResult]:
    """One result a tournament: every tournament of `matches` when `every`, else only the
    pinned ones. Raises UnknownTournament for a pinned run id with no match."""
    by_run: dict[str, list[TournamentMatch]] = {}
    for m in matches:
        by_run.setdefault(m.run_id or "", []).append(m)
    missing = [run for run in pins if run not in by_run]
    if missing:
        raise UnknownTournament(f"no match of tournament {missing[0]!r} in the log")
    runs = sorted(by_run) if every else sorted(pins)
    return [check_tournament(run, by_run[run], pins.get(run)) for run in runs]


def check_tournament(
    run_id: str, matches: Sequence[TournamentMatch], pinned: str | None = None
) -> AuditResult:
    """Whether the tournament's logged seeds and salt open its commitment (and the pinned
    one): every problem found, with the match it concerns."""
    result = AuditResult(run_id or "(tournament without a run id)")

    def problem(reason: str) -> None:
        result.problems.append(Problem(None, None, KIND, reason))

    commitments = sorted({m.commitment or "" for m in matches})
    if len(commitments) > 1:
        problem(f"its matches log {len(commitments)} different commitments")
    logged = commitments[0]
    if pinned is not None and logged != pinned:
        problem(
            f"its matches log the commitment {logged[:16]}…, not the {pinned[:16]}… published"
            " before play"
        )
    salts = sorted({m.salt for m in matches if m.salt is not None})
    unsalted = [m.match_id for m in matches if m.salt is None]
    if unsalted:
        problem(f"match {unsalted[0]} reveals no salt at its end")
    if len(salts) > 1:
        problem(f"its matches reveal {len(salts)} different salts")
    try:
        seeds = _deal_seeds(matches, _committed_count(matches), problem)
    except _UnreadableCount as e:
        problem(str(e))
        seeds = None
    salt = chain.from_hex(salts[0], TOURNAMENT_SALT_SIZE) if salts else None
    if salt is None and salts:
        problem("the revealed salt is not 64 hex digits")
    if seeds is None or salt is None or result.problems:
        return result
    try:
        opened = tournament_seeds_commitment(salt, seeds).hex()
    except ValueError as e:
        problem(f"its seeds cannot be opened: {e}")
        return result
    for expected, what in ((logged, "the commitment its matches log"), (pinned, "the pinned")):
        if expected is not None and opened != expected:
            problem(
                f"its {len(seeds)} deal seeds and the revealed salt hash to {opened[:16]}…, not"
                f" to {what} ({expected[:16]}…)"
            )
    return result


def _committed_count(matches: Sequence[TournamentMatch]) -> int | None:
    """How many seeds the matches say the commitment covers; None when none logs it (an
    older log). _UnreadableCount when they disagree or one cannot be read."""
    logged = {m.committed_deals for m in matches}
    if logged == {None}:
        return None
    counts = {_number(d) for d in logged}
    if None in counts or 0 in counts:
        raise _UnreadableCount("a match logs no number of committed deal seeds that can be read")
    if len(counts) > 1:
        raise _UnreadableCount(
            f"its matches log {len(counts)} different numbers of committed deal seeds"
        )
    (count,) = counts
    assert count is not None
    return count


def _deal_seeds(
    matches: Sequence[TournamentMatch], committed: int | None, problem: Any
) -> list[int] | None:
    """Each committed deal's seed, deal 0 first: as the matches log them, and for the deals
    after the last one played (a test that stopped early), deal 0's seed plus the deal's
    index. `committed` is how many (None: the deals logged). None (with the problems said)
    when a deal's matches disagree, a deal is missing or a value cannot be read."""
    by_deal: dict[int, set[int]] = {}
    for m in matches:
        deal, seed = _number(m.deal), _number(m.seed)
        if deal is None or seed is None:
            problem(f"match {m.match_id} logs no deal index or no seed that can be read")
            return None
        by_deal.setdefault(deal, set()).add(seed)
    split = [d for d, seeds in sorted(by_deal.items()) if len(seeds) > 1]
    if split:
        problem(f"the matches of deal {split[0]} log different seeds")
        return None
    count = max(by_deal) + 1
    absent = [d for d in range(count) if d not in by_deal]
    if absent:
        problem(f"the log holds no match of deal {absent[0]} (of deals 0 to {count - 1})")
        return None
    if committed is not None and count > committed:
        problem(f"the log holds deal {count - 1}, beyond the {committed} deals committed to")
        return None
    played = [next(iter(by_deal[d])) for d in range(count)]
    return played + [played[0] + d for d in range(count, committed or count)]


def _number(text: str | None) -> int | None:
    """A non-negative integer logged as a JSON number (read back as text), else None."""
    return int(text) if text is not None and text.isdigit() and text.isascii() else None

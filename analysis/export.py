"""`sniff export`: matches from the log as docs/records.md records, or the views as Parquet.

A record is written from what the log says, not from a replay: the claims
are the logged figures (points, round ends, scores, winner), so `sniff
audit` of an export checks the log itself. A record that was imported comes
back as it went in (its `id`, its players), in the normal form `sniff
record` writes (full claims, `american-sniff/1` for American matches).

Only finished matches are exported unless asked: a match in play has hidden
tiles (its deals, what each draw took) that its record would show.

The Parquet export writes each view to `DIR/VIEW/created_date=YYYY-MM-DD/
data.parquet` (hive partitioning by the day the match was created, UTC). A
partition is merged, not appended to: the rows of every exported match
replace that match's rows already there, so exporting the same matches again
changes nothing, and exports of other matches of the same day add to it.
Each partition file is written beside the old one and renamed over it.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from analysis.logaudit import Chunk, MatchWork, list_matches, read_chunks
from analysis.logquery import LogSource
from analysis.parallel import ordered_map
from analysis.regenerate import facts_only_count
from analysis.sqlfiles import ID_SEPARATOR, named_queries
from sniff.record import FORMAT, FORMAT_V2
from sniff.rules import team_of

VIEWS = ("matches", "deals", "actions", "round_ends", "match_ends")
"""The views the Parquet export writes, one directory each."""
PARTITION = "created_date"


class InPlay(ValueError):
    """A named match still in play, which only --include-unfinished exports."""


def _sql(name: str) -> str:
    return named_queries("analysis", "export.sql")[name]


def selected(
    source: LogSource, match_ids: Sequence[str], include_unfinished: bool
) -> dict[str, int]:
    """The matches to export (match_id order) with their number of events."""
    counts = list_matches(source, match_ids)
    finished = {
        r["match_id"] for r in source.query(_sql("finished")).to_pylist() if r["match_id"] in counts
    }
    if include_unfinished:
        return counts
    named_in_play = [m for m in match_ids if m not in finished]
    if named_in_play:
        raise InPlay(
            f"match {named_in_play[0]} is in play: its record would show tiles still hidden;"
            " add --include-unfinished to export it all the same"
        )
    return {m: n for m, n in counts.items() if m in finished}


# -- records -----------------------------------------------------------------------


def export_records(
    db_path: str | Path,
    match_ids: Sequence[str] = (),
    *,
    include_unfinished: bool = False,
    workers: int = 1,
    tls_ca: str | None = None,
    left_out: Callable[[int], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """The matches as docs/records.md records, in match id order (or the order named).

    Without named matches, `left_out(n)` is told first how many simulated matches stored as
    facts only are left out (named, each is regenerated from its seed)."""
    named = list(dict.fromkeys(match_ids))
    with LogSource(db_path, tls_ca=tls_ca) as source:
        if left_out is not None and not named:
            left_out(facts_only_count(source))
        counts = selected(source, named, include_unfinished)
        chunks = read_chunks(source, counts, {}, bool(named))
        made = ordered_map(_records_of, chunks, workers, preload=(__name__,))
        if not named:
            for records in made:
                for _, record in records:
                    yield record
            return
        by_id: dict[str, dict[str, Any]] = {}
        for records in made:  # read in match id order, written in the order named
            by_id.update(records)
        for match_id in named:
            yield by_id[match_id]


def _records_of(chunk: Chunk) -> list[tuple[str, dict[str, Any]]]:
    return [(work.match_id, record_of(work)) for work in chunk.works()]


def record_of(work: MatchWork) -> dict[str, Any]:
    """One match's docs/records.md record, from its logged events (see the module's docstring)."""
    rows = work.rows
    details = [json.loads(r[10]) if r[10] is not None else {} for r in rows]
    created = details[0]
    variant = created.get("variant", "american")
    seats = created["seats"]
    record: dict[str, Any] = {"format": FORMAT if variant == "american" else FORMAT_V2}
    if variant != "american":
        record["variant"] = variant
    if created.get("source") == "imported":
        if "record_id" in created:
            record["id"] = created["record_id"]
    else:
        record["id"] = work.match_id
    record["seats"] = seats
    record["target"] = created["target"]
    if created.get("players") is not None:
        record["players"] = created["players"]
    if created.get("round_limit") is not None:
        record["round_limit"] = created["round_limit"]
    if created.get("time_control") is not None:
        record["time_control"] = created["time_control"]
    timeouts: list[dict[str, Any]] = []
    teams = [team_of(s, seats) for s in range(seats)]
    scores = [0] * seats
    rounds: list[dict[str, Any]] = []
    ended: dict[str, Any] | None = None
    for row, detail in zip(rows, details, strict=True):
        kind = row[2]
        if kind == "round_dealt":
            rounds.append(
                {
                    "leader": detail["leader"],
                    "hands": detail["hands"],
                    "boneyard": detail["boneyard"],
                    "actions": [],
                    "claims": {"points": []},
                }
            )
        elif kind == "action" and rounds:
            move = row[6]
            if detail.get("timeout") is not None:
                where = {"round": row[3], "action": row[4], "seat": row[5]}
                timeouts.append({**where, "policy": detail["timeout"]})
            rounds[-1]["actions"].append(move)
            placement = move not in ("draw", "pass")
            rounds[-1]["claims"]["points"].append(row[8] if placement else None)
            if placement and row[8]:
                scores = [
                    score + row[8] if teams[s] == teams[row[5]] else score
                    for s, score in enumerate(scores)
                ]
        elif kind == "round_ended" and rounds:
            round_claims = rounds[-1]["claims"]
            round_claims["end"] = detail["end"]
            round_claims["deductions"] = detail["deductions"]
            round_claims["scores"] = detail["scores"]
            scores = list(detail["scores"])
        elif kind == "match_ended":
            ended = detail
    if ended is not None and rounds and "end" not in rounds[-1]["claims"]:
        rounds[-1]["claims"]["scores"] = ended["scores"]  # won on a placement, mid-round
    record["rounds"] = rounds
    if timeouts:
        record["timeouts"] = timeouts
    if ended is not None and ended.get("forfeit") is not None:
        record["forfeit"] = ended["forfeit"]
    claims: dict[str, Any] = {}
    if ended is not None:
        claims["winner"] = ended["winner"]
        claims["scores"] = ended["scores"]
    else:
        claims["scores"] = scores
    record["claims"] = claims
    return record


# -- Parquet -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Written:
    view: str
    partitions: int
    rows: int


def export_parquet(
    db_path: str | Path,
    directory: str | Path,
    match_ids: Sequence[str] = (),
    *,
    include_unfinished: bool = False,
    tls_ca: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[Written]:
    """Each view's rows of the exported matches into DIR/VIEW/created_date=.../data.parquet.

    Read day by day (one query per view and day, so a live service's time
    limit bounds each), merged into the partition by match id.
    """
    root = Path(directory)
    named = list(dict.fromkeys(match_ids))
    with LogSource(db_path, tls_ca=tls_ca) as source:
        counts = selected(source, named, include_unfinished)
        days = _days(source, list(counts))
        chosen = ID_SEPARATOR.join(named) if named else None
        written = []
        for view in VIEWS:
            partitions = rows = 0
            for day, ids in days.items():
                params = [day.isoformat(), include_unfinished, chosen]
                table = source.query(_sql(f"export_{view}"), params)
                _merge(root / view / f"{PARTITION}={day.isoformat()}", table, ids)
                partitions += 1
                rows += table.num_rows
                if progress is not None:
                    progress(len(ids))
            written.append(Written(view, partitions, rows))
    return written


def _days(source: LogSource, ids: list[str]) -> dict[date, list[str]]:
    """The exported matches by the day (UTC) they were created."""
    wanted = set(ids)
    days: dict[date, list[str]] = {}
    for row in source.query(_sql("creation_days")).to_pylist():
        if row["match_id"] in wanted:
            days.setdefault(row["created_date"], []).append(row["match_id"])
    return dict(sorted(days.items()))


def _merge(partition: Path, table: pa.Table, ids: Sequence[str]) -> None:
    """The partition with `ids`' rows replaced by `table`'s; written whole, then renamed."""
    target = partition / "data.parquet"
    if target.exists():
        old = pq.read_table(target)
        keep = pc.invert(pc.is_in(old.column("match_id"), pa.array(list(ids), pa.string())))
        table = pa.concat_tables([old.filter(keep), table], promote_options="default")
    partition.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".data.", suffix=".parquet", dir=partition)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

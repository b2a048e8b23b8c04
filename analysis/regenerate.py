"""The events of a simulated match stored as facts, regenerated from its seed on demand.

A facts-only run of `sniff simulate` (docs/simulate.md) stores no events: a simulated
match is decided by its seed, its run's settings and the code's `SIM_VERSION`. `sniff
replay`, `sniff export` and `sniff audit --db` ask here for such a match's events: the
engine plays it again with its bots and `EventRecorder` records it with its derived
secrets (`seeds.simulated_secret`), which gives the very events, chain included, that
`sniff simulate --events` stores for the same match. A match whose run was played by
another `SIM_VERSION` is refused (`CannotRegenerate`): this code would play another match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa

from analysis.sqlfiles import id_lists, named_queries
from service.storage.simulated import SimulationRun
from sniff.simulated import SIM_VERSION, MatchSettings


class CannotRegenerate(LookupError):
    """A facts-only match this code cannot play again (another version played it)."""


@dataclass(frozen=True, slots=True)
class FactsOnly:
    """A match stored as facts: its seed and its run."""

    match_id: str
    seed: int
    run: SimulationRun

    def note(self) -> str:
        """The line that says where its events came from."""
        return (
            f"{self.match_id}: stored as facts; events regenerated from seed {self.seed} by "
            f"{SIM_VERSION} (played by {self.run.code_version})"
        )


def _sql(name: str) -> str:
    return named_queries("analysis", "regenerate.sql")[name]


def facts_only_sql() -> str:
    return _sql("facts_only_of")


def facts_only_count_sql() -> str:
    return _sql("facts_only_count")


def facts_only_count(source: Any) -> int:
    """How many matches the log (an `analysis.logquery.LogSource`) stores as facts only: a
    whole-log audit or export leaves them out, and says so."""
    return int(source.query(facts_only_count_sql()).column("matches")[0].as_py())


def facts_only_from(rows: Sequence[dict[str, Any]]) -> dict[str, FactsOnly]:
    """`facts_only_of`'s rows, by match id."""
    out = {}
    for row in rows:
        run = SimulationRun.of({**row, "seed": row["run_seed"]})
        out[str(row["match_id"])] = FactsOnly(str(row["match_id"]), int(row["seed"]), run)
    return out


def facts_only(source: Any, match_ids: Sequence[str]) -> dict[str, FactsOnly]:
    """Which of `match_ids` the log (an `analysis.logquery.LogSource`) stores as facts."""
    out: dict[str, FactsOnly] = {}
    ids = list(dict.fromkeys(match_ids))
    for part in id_lists(ids):
        out.update(facts_only_from(source.query(facts_only_sql(), [part]).to_pylist()))
    return out


def facts_only_in_file(db_path: str | Path, match_id: str) -> FactsOnly | None:
    """`facts_only` for one match, read as `sniff replay` reads (file or service)."""
    from analysis.logquery import query_log_rows

    rows, _ = query_log_rows(db_path, facts_only_sql(), [match_id])
    return facts_only_from(rows).get(match_id)


def regenerated_table(match: FactsOnly) -> pa.Table:
    """The match's events, as `events_all` rows (`events.arrow_schema`, logged_at null)."""
    from analysis.simulate import simulated_match
    from service.storage.events import columns_to_arrow

    run = match.run
    if run.sim_version != SIM_VERSION:
        raise CannotRegenerate(
            f"match {match.match_id} was played by {run.sim_version}; this code plays "
            f"{SIM_VERSION} and cannot regenerate its events"
        )
    settings = MatchSettings(run.seats, run.bots, run.variant, run.target, run.round_limit)
    recorder = simulated_match(match.match_id, match.seed, settings, run.run_id, run.code_version)
    return columns_to_arrow(recorder.columns())


@cache
def _schema_sql() -> str:
    from service.storage import _sql as storage_sql

    return storage_sql.script("schema.sql")


def events_database(tables: Sequence[pa.Table]) -> Any:
    """An in-memory DuckDB with the log's tables, its `events_all` holding `tables`' events
    (stamped now): the same queries read them as read a log."""
    import duckdb

    con = duckdb.connect(":memory:")
    con.execute(_schema_sql())
    for table in tables:
        con.register("_regenerated", table)
        con.execute(_sql("insert_regenerated"))
        con.unregister("_regenerated")
    return con

"""Simulated matches stored as facts: a run's row, and its matches' rows without events.

`sniff simulate` (docs/simulate.md) stores each match of a facts-only run as its rows of
`match_settings_all`, `match_results_all` and the facts tables, made by the workers as
Arrow tables (`analysis.simfacts.SimTables`), and the run once in `simulation_runs`: what
decides its matches and the version of the code that can play them again. Such a match
has no events, hence no chain, no leaf in the tree of finished matches and nothing to
sign; its events are regenerated from its seed on demand (`analysis.regenerate`).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from dataclasses import asdict, dataclass
from typing import Any

import duckdb
import pyarrow as pa

from . import _sql

STORED = ("facts", "events")


@dataclass(frozen=True, slots=True)
class SimulationRun:
    """A `simulation_runs` row."""

    run_id: str
    matches: int
    seats: int
    bots: tuple[str, ...]
    players: tuple[str, ...]
    seed: int
    variant: str
    target: int
    round_limit: int | None
    stored: str
    sim_version: str
    code_version: str

    def params(self) -> dict[str, Any]:
        out = asdict(self)
        out["bots"], out["players"], out["seed"] = list(self.bots), list(self.players), self.seed
        return out

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> SimulationRun:
        return cls(
            str(row["run_id"]),
            int(row["matches"]),
            int(row["seats"]),
            tuple(row["bots"]),
            tuple(row["players"]),
            int(row["seed"]),
            str(row["variant"]),
            int(row["target"]),
            None if row["round_limit"] is None else int(row["round_limit"]),
            str(row["stored"]),
            str(row["sim_version"]),
            str(row["code_version"]),
        )


def insert_run(con: duckdb.DuckDBPyConnection, run: SimulationRun) -> None:
    """The run's row, in the caller's transaction (none if the log holds it already)."""
    con.execute(_sql.query("insert_simulation_run"), run.params())


def insert_matches(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    rules_version: str,
    matches: pa.Table,
    rounds: pa.Table,
    decisions: pa.Table,
) -> None:
    """A chunk's matches of run `run_id` (whose row the log holds): their settings,
    results and facts, in the caller's transaction, one statement a table."""
    names = {"_sim_matches": matches, "_sim_rounds": rounds, "_sim_decisions": decisions}
    for name, table in names.items():
        con.register(name, table)
    try:
        con.execute(
            _sql.query("insert_simulated_settings"),
            {"run_id": run_id, "rules_version": rules_version},
        )
        con.execute(_sql.query("insert_simulated_results"))
        for query in ("match_facts", "round_facts", "decisions"):
            con.execute(_sql.query(f"insert_simulated_{query}"), {"run_id": run_id})
    finally:
        for name in names:
            with suppress(duckdb.Error):
                con.unregister(name)


def read_run(con: duckdb.DuckDBPyConnection, run_id: str) -> SimulationRun | None:
    """The run's row, or None."""
    result = con.execute(_sql.query("simulation_run"), [run_id])
    names = [d[0] for d in result.description]
    rows = [dict(zip(names, row, strict=True)) for row in result.fetchall()]
    return SimulationRun.of(rows[0]) if rows else None

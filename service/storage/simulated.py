"""Simulated matches stored as facts: a run's row, and its matches' rows without events.

`sniff simulate` (docs/simulate.md) stores each match of a facts-only run as its rows of
`match_settings_all`, `match_results_all` and the facts tables, made by the workers as
Arrow tables (`analysis.simfacts.SimTables`), and the run once in `simulation_runs`: what
decides its matches and the version of the code that can play them again. Such a match
has no events, hence no chain, no leaf in the tree of finished matches and nothing to
sign; its events are regenerated from its seed on demand (`analysis.regenerate`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import asdict, dataclass
from typing import Any, Final

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from sniff.playout import POLICIES
from sniff.variants import variant_named

from . import _sql
from .imports import BadImport

STORED = ("facts", "events")
RUN_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A run's id: 1 to 64 letters, digits, '_', '.' or '-', not first."""
MATCHES_MAX: Final = 100_000_000
TEXT_MAX: Final = 1_000

_DICT32: Final = pa.dictionary(pa.int32(), pa.string())
_DICT8: Final = pa.dictionary(pa.int8(), pa.string())
SIM_SCHEMAS: Final = (
    pa.schema(
        [
            ("match_id", pa.string()),
            ("seed", pa.uint64()),
            ("winner", pa.int8()),
            ("ended", pa.int8()),
            ("rounds", pa.int16()),
            ("first_leader", pa.int8()),
            ("actions", pa.int32()),
            ("scores", pa.list_(pa.int32())),
            ("incomplete_rounds", pa.int16()),
        ]
    ),
    pa.schema(
        [
            ("match_id", _DICT32),
            ("round", pa.int16()),
            ("complete", pa.bool_()),
            ("leader", pa.int8()),
            ("sniff", pa.bool_()),
            ("maker", pa.int8()),
            ("sniff_index", pa.int16()),
            ("double", pa.int8()),
            ("orientation", _DICT8),
            ("covered_after", pa.int16()),
            ("net", pa.list_(pa.int32())),
            ("value", pa.float64()),
            ("sniff_points", pa.int32()),
            ("sniff_points_maker_side", pa.int32()),
            ("sniff_points_others", pa.int32()),
            ("ending", _DICT8),
            ("finisher", pa.int8()),
            ("points", pa.list_(pa.int32())),
            ("deductions", pa.list_(pa.int32())),
            ("placements", pa.list_(pa.int16())),
            ("scoring_placements", pa.list_(pa.int16())),
        ]
    ),
    pa.schema(
        [
            ("match_id", _DICT32),
            ("round", pa.int16()),
            ("seat", pa.int8()),
            ("placement_index", pa.int16()),
            ("double", pa.int8()),
            ("outcome", _DICT8),
            ("mover_is_leader", pa.bool_()),
            ("value", pa.float64()),
            ("same_outcome_before", pa.int16()),
            ("same_outcome_after", pa.int16()),
        ]
    ),
)
"""The columns of a facts-only chunk's matches, rounds and decisions, as
`analysis.simfacts.facts_tables` makes them and `simulated.sql` reads them."""


class BadSimulated(BadImport):
    """A run or a chunk that no simulation makes: nothing of it is stored."""


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


def check_run(run: SimulationRun) -> None:
    """BadSimulated unless `run` is a run `sniff simulate` could make."""
    if not RUN_ID.fullmatch(run.run_id):
        raise BadSimulated(f"run id {run.run_id!r}: 1 to 64 letters, digits, '_', '.' or '-'")
    if not 0 < run.matches <= MATCHES_MAX:
        raise BadSimulated(f"a run has 1 to {MATCHES_MAX:,} matches, not {run.matches}")
    if run.seats not in (2, 3, 4):
        raise BadSimulated(f"Sniff is played by 2, 3 or 4, not {run.seats}")
    if not run.bots or any(b not in POLICIES for b in run.bots):
        raise BadSimulated(f"bots {list(run.bots)}: each is one of {', '.join(POLICIES)}")
    seat_bots = tuple(run.bots[s % len(run.bots)] for s in range(run.seats))
    if run.players != seat_bots:
        raise BadSimulated(
            f"players {list(run.players)}: the run's bots seat by seat are {list(seat_bots)}"
        )
    try:
        variant_named(run.variant)
    except ValueError as e:
        raise BadSimulated(str(e)) from None
    if not 0 <= run.seed < 1 << 64:
        raise BadSimulated(f"a seed is from 0 to 2**64 - 1, not {run.seed}")
    if not 0 < run.target <= 1 << 30:
        raise BadSimulated(f"a target is from 1 to 2**30, not {run.target}")
    if run.round_limit is not None and run.round_limit <= 0:
        raise BadSimulated(f"a round limit is positive, not {run.round_limit}")
    if run.stored != "facts":
        raise BadSimulated("only a run stored as facts has chunks without events")
    if not run.sim_version or len(run.sim_version) > TEXT_MAX:
        raise BadSimulated(f"sim_version: 1 to {TEXT_MAX} characters")
    if len(run.code_version) > TEXT_MAX:  # informational: may be empty
        raise BadSimulated(f"code_version: at most {TEXT_MAX} characters")


def checked_chunk(
    run: SimulationRun, matches: pa.Table, rounds: pa.Table, decisions: pa.Table
) -> tuple[pa.Table, pa.Table, pa.Table]:
    """The chunk in `SIM_SCHEMAS`' columns, or BadSimulated: every match one of the run's
    (`<run>-<i>`, i below its size, once), every round and decision one of the chunk's
    matches', per-seat lists of the run's seat count. What the rows say of play is taken
    as sent, as ImportMatches takes a client's facts."""
    out = []
    for name, table, schema in zip(
        ("matches", "rounds", "decisions"), (matches, rounds, decisions), SIM_SCHEMAS, strict=True
    ):
        missing = [c for c in schema.names if c not in table.column_names]
        if missing:
            raise BadSimulated(f"the {name} lack the column {missing[0]}")
        try:
            table = table.select(schema.names).cast(schema)
            table.validate(full=True)
        except (pa.ArrowException, ValueError) as exc:
            raise BadSimulated(f"the {name}: {exc}") from None
        out.append(table)
    matches, rounds, decisions = out
    if matches.num_rows == 0:
        raise BadSimulated("the chunk has no match")
    ids = matches.column("match_id").combine_chunks()
    if ids.null_count or pc.count_distinct(ids).as_py() != len(ids):
        raise BadSimulated("the matches' ids are not distinct")
    prefix = run.run_id + "-"
    pattern = "^" + re.escape(prefix) + "[0-9]{8}$"
    if not pc.all(pc.match_substring_regex(ids, pattern)).as_py():
        raise BadSimulated(f"a match of run {run.run_id} is named {prefix}NNNNNNNN")
    index = pc.cast(pc.utf8_slice_codeunits(ids, len(prefix)), pa.int64())
    if pc.max(index).as_py() >= run.matches:
        raise BadSimulated(f"run {run.run_id} has {run.matches:,} matches")
    for name, table in (("rounds", rounds), ("decisions", decisions)):
        column = table.column("match_id")
        if column.null_count:
            raise BadSimulated(f"the {name} name no match")
        for chunk in column.chunks:
            used = pc.unique(chunk.indices)
            if not pc.all(pc.is_in(pc.take(chunk.dictionary, used), value_set=ids)).as_py():
                raise BadSimulated(f"the {name} name a match the chunk does not hold")
    for name, table, columns in (
        ("matches", matches, ("scores",)),
        ("rounds", rounds, ("net", "points", "deductions", "placements", "scoring_placements")),
    ):
        for column in columns:
            lengths = pc.list_value_length(table.column(column))
            if pc.any(pc.not_equal(lengths, run.seats)).as_py():
                raise BadSimulated(f"the {name}' {column} hold one value per seat ({run.seats})")
    return matches, rounds, decisions

"""Analyses stored beside the log as Parquet, so that SQL can answer questions afterwards.

Layout, under `<db>.analysis/` (or `<records file>.analysis/`):

    decisions/<match>/<settings>_seat-<S>.parquet   one row per decision
    moves/<match>/<settings>_seat-<S>.parquet       one row per legal move of each decision

`<match>` is the match id (hashed when it is not a plain file name),
`<settings>` names the rollouts, the policy and the seed
(`rollouts-200_greedy_seed-0`). The key of a file is therefore (match,
settings, seed, seat): analysing the same again overwrites it (each file is
written beside its place and renamed over it, whole or not at all), never
duplicates it; other settings or seeds sit beside it. The columns are listed
in `DECISION_SCHEMA` and `MOVE_SCHEMA` and described in docs/analysis.md.

`query_analyses` runs SQL over them in an in-memory DuckDB with two views,
`decisions` and `moves`.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from analysis.rollout.analyze import DECISION_COLUMNS, DecisionResult, Settings
from analysis.rollout.luck import LuckSettings, MatchLuck
from analysis.rollout.source import MatchSpec

_SETTINGS = [
    pa.field("rollouts", pa.int32(), nullable=False),
    pa.field("policy", pa.string(), nullable=False),
    pa.field("seed", pa.uint64(), nullable=False),
    pa.field("rollouts_only", pa.bool_(), nullable=False),
]
_TYPES: dict[str, pa.DataType] = {
    "match_id": pa.string(),
    "round": pa.int32(),
    "action": pa.int32(),
    "move_number": pa.int32(),
    "seat": pa.int8(),
    "player": pa.string(),
    "legal": pa.int16(),
    "played": pa.string(),
    "best": pa.string(),
    "played_equity": pa.float64(),
    "played_se": pa.float64(),
    "best_equity": pa.float64(),
    "best_se": pa.float64(),
    "loss": pa.float64(),
    "loss_se": pa.float64(),
    "error": pa.bool_(),
    "large": pa.bool_(),
    "decision_seed": pa.uint64(),
    "exact": pa.bool_(),
    "phase": pa.string(),
}
DECISION_SCHEMA = pa.schema(
    [
        pa.field("match_id", pa.string(), nullable=False),
        pa.field("seats", pa.int8(), nullable=False),
        pa.field("variant", pa.string(), nullable=False),
        *(pa.field(n, _TYPES[n], nullable=False) for n in DECISION_COLUMNS if n != "match_id"),
        *_SETTINGS,
    ]
)
MOVE_SCHEMA = pa.schema(
    [
        pa.field("match_id", pa.string(), nullable=False),
        pa.field("round", pa.int32(), nullable=False),
        pa.field("action", pa.int32(), nullable=False),
        pa.field("seat", pa.int8(), nullable=False),
        pa.field("move", pa.string(), nullable=False),
        pa.field("rank", pa.int16(), nullable=False),
        pa.field("equity", pa.float64(), nullable=False),
        pa.field("se", pa.float64(), nullable=False),
        pa.field("loss", pa.float64(), nullable=False),
        pa.field("loss_se", pa.float64(), nullable=False),
        pa.field("played", pa.bool_(), nullable=False),
        *_SETTINGS,
    ]
)

_PLAIN = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}")


def store_root(path: str | Path) -> Path:
    """Where the analyses of a log (or of a records file) are kept: `<path>.analysis/`."""
    p = Path(path)
    return p.with_name(p.name + ".analysis")


def match_dir_name(match_id: str) -> str:
    """A match id as a directory name: itself when plain, else a hash of it."""
    if _PLAIN.fullmatch(match_id):
        return match_id
    return "id-" + hashlib.sha256(match_id.encode()).hexdigest()[:24]


def write_results(
    root: Path,
    specs: Sequence[MatchSpec],
    results: Sequence[DecisionResult],
    settings: Settings,
    seat: int | None,
) -> list[Path]:
    """Store the analyses of `specs` (every seat, or `seat`): one file per (match, settings,
    seat) and table, replacing what the same key held. Returns the files written."""
    by_key: dict[tuple[str, int], list[DecisionResult]] = {}
    for r in results:
        by_key.setdefault((r.match_id, r.seat), []).append(r)
    written = []
    for spec in specs:
        seats = range(spec.seats) if seat is None else (seat,)
        for s in seats:
            rows = by_key.get((spec.match_id, s), [])
            name = f"{settings.tag}_seat-{s}.parquet"
            where = match_dir_name(spec.match_id)
            written.append(
                _write(root / "decisions" / where / name, _decision_table(spec, rows, settings))
            )
            written.append(_write(root / "moves" / where / name, _move_table(rows, settings)))
    return written


def _settings_values(settings: Settings) -> dict[str, Any]:
    return {
        "rollouts": settings.rollouts,
        "policy": settings.policy,
        "seed": settings.seed,
        "rollouts_only": not settings.exact,
    }


def _decision_table(
    spec: MatchSpec, rows: Iterable[DecisionResult], settings: Settings
) -> pa.Table:
    common = {"seats": spec.seats, "variant": spec.variant, **_settings_values(settings)}
    records = [{**{k: getattr(r, k) for k in DECISION_COLUMNS}, **common} for r in rows]
    return pa.Table.from_pylist(records, schema=DECISION_SCHEMA)


def _move_table(rows: Iterable[DecisionResult], settings: Settings) -> pa.Table:
    common = _settings_values(settings)
    records = [
        {
            "match_id": r.match_id,
            "round": r.round,
            "action": r.action,
            "seat": r.seat,
            **m.to_json(),
            **common,
        }
        for r in rows
        for m in r.moves
    ]
    return pa.Table.from_pylist(records, schema=MOVE_SCHEMA)


def _write(path: Path, table: pa.Table) -> Path:
    """Write `table` to `path` whole or not at all: a temporary file beside it, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


LUCK_SCHEMA = pa.schema(
    [
        pa.field("match_id", pa.string(), nullable=False),
        pa.field("round", pa.int32(), nullable=False),
        pa.field("action", pa.int32(), nullable=False),
        pa.field("seat", pa.int8(), nullable=False),
        pa.field("player", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("tile", pa.string(), nullable=False),
        pa.field("before", pa.float64(), nullable=False),
        pa.field("after", pa.float64(), nullable=False),
        pa.field("luck", pa.float64(), nullable=False),
        pa.field("se", pa.float64(), nullable=False),
        pa.field("rollouts", pa.int32(), nullable=False),
        pa.field("policy", pa.string(), nullable=False),
        pa.field("seed", pa.uint64(), nullable=False),
    ]
)


def write_luck(root: Path, lucks: Sequence[MatchLuck], settings: LuckSettings) -> list[Path]:
    """Store the luck of each match's chance events: `luck/<match>/<settings>.parquet`, one
    row an event, replacing what the same match and settings held."""
    common = {"rollouts": settings.rollouts, "policy": settings.policy, "seed": settings.seed}
    written = []
    for m in lucks:
        records = [{**e.to_json(), **common} for e in m.events]
        table = pa.Table.from_pylist(records, schema=LUCK_SCHEMA)
        written.append(
            _write(root / "luck" / match_dir_name(m.match_id) / f"{settings.tag}.parquet", table)
        )
    return written


class NoAnalyses(LookupError):
    """Nothing has been stored under that root yet."""


def query_analyses(root: Path, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], list[Any]]:
    """Run `sql` over the stored analyses (views `decisions`, `moves` and, once a luck
    analysis is stored, `luck`): columns and rows."""
    import duckdb

    files = {t: sorted((root / t).glob("*/*.parquet")) for t in ("decisions", "moves", "luck")}
    if not files["decisions"]:
        raise NoAnalyses(f"no analysis is stored under {root} (run sniff analyze first)")
    con = duckdb.connect(":memory:")
    try:
        for table, paths in files.items():
            if not paths:
                continue
            con.read_parquet([str(p) for p in paths], union_by_name=True).create_view(table)
        cursor = con.execute(sql, list(params) or None)
        columns = [d[0] for d in cursor.description or ()]
        return columns, cursor.fetchall()
    finally:
        con.close()


def match_analysis(root: Path, match_id: str) -> tuple[dict[tuple[int, int], dict[str, Any]], str]:
    """The stored analysis of one match's decisions by (round, action), under the settings
    that hold most of them, and those settings in words; NoAnalyses when none is stored."""
    from analysis.sqlfiles import named_queries

    sql = named_queries("analysis.rollout", "stored.sql")["match_decisions"]
    columns, rows = query_analyses(root, sql, [match_id])
    if not rows:
        raise NoAnalyses(f"no analysis of match {match_id} is stored under {root}")
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for row in rows:
        d = dict(zip(columns, row, strict=True))
        d["flag"] = "large loss" if d["large"] else "error" if d["error"] else ""
        out[(int(d["round"]), int(d["action"]))] = {
            k: d[k]
            for k in (
                "best",
                "best_equity",
                "played_equity",
                "loss",
                "loss_se",
                "exact",
                "phase",
                "flag",
                "rollouts",
            )
        }
    first = dict(zip(columns, rows[0], strict=True))
    said = f"{first['rollouts']} rollouts, {first['policy']}, seed {first['seed']}"
    return out, said


def match_luck_events(root: Path, match_id: str) -> dict[tuple[int, int], list[dict[str, Any]]]:
    """The stored luck of one match's chance events by (round, action): a draw's own, and
    under (round, -1) the lot's and every seat's deal; empty when none is stored."""
    from analysis.sqlfiles import named_queries

    if not any((root / "luck").glob("*/*.parquet")):
        return {}
    sql = named_queries("analysis.rollout", "stored.sql")["match_luck"]
    columns, rows = query_analyses(root, sql, [match_id])
    out: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for row in rows:
        d = dict(zip(columns, row, strict=True))
        out.setdefault((int(d["round"]), int(d["action"])), []).append(
            {k: d[k] for k in ("seat", "kind", "tile", "luck", "se", "rollouts")}
        )
    return out
